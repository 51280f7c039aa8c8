//! The bootstrap script a machine runs at first boot: it downloads nodeup (checking its
//! SHA-256), writes the boot config to `conf/kube_env.yaml` and runs nodeup with it.
//! The bytes are kOps' (`pkg/model/resources/nodeup.go`), so a kOps nodeup boots from
//! it. Cloud-neutral: the cloud only changes the exported environment and, for
//! DigitalOcean, one journald restart; AWS wraps it in multipart MIME when a group has
//! additional user-data ([`multipart_mime`]).

use std::collections::BTreeMap;

use base64::Engine as _;

use super::assets::MirroredAsset;

/// What the script needs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Script {
    /// The nodeup binary per architecture (`amd64`, `arm64`).
    pub(crate) nodeup: BTreeMap<String, MirroredAsset>,
    /// The boot config, as written (ends with a newline).
    pub(crate) boot_config: String,
    /// `spec.compressUserData`: ship the boot config gzipped and base64-encoded.
    pub(crate) compress: bool,
    /// The cloud (`aws`, `gce`, `digitalocean`, ...).
    pub(crate) cloud: String,
    /// Exported variables (sorted by name when written).
    pub(crate) env: BTreeMap<String, String>,
    /// The egress-proxy block ([`proxy_env`]), or empty.
    pub(crate) proxy: String,
}

const SYSCTLS: &str = "sysctl -w net.core.rmem_max=16777216 || true
sysctl -w net.core.wmem_max=16777216 || true
sysctl -w net.ipv4.tcp_rmem='4096 87380 16777216' || true
sysctl -w net.ipv4.tcp_wmem='4096 87380 16777216' || true
";

const INSTALL_DIR: &str = r#"function ensure-install-dir() {
  INSTALL_DIR="/opt/kops"
  # On ContainerOS, we install under /var/lib/toolbox; /opt is ro and noexec
  if [[ -d /var/lib/toolbox ]]; then
    INSTALL_DIR="/var/lib/toolbox/kops"
  fi
  mkdir -p ${INSTALL_DIR}/bin
  mkdir -p ${INSTALL_DIR}/conf
  cd ${INSTALL_DIR}
}"#;

const DOWNLOAD_HEAD: &str = r#"
# Retry a download until we get it. sha covers the uncompressed binary. args: name, sha, urls
download-or-bust() {
  echo "== Downloading $1 with hash $2 from $3 =="
  local -r file="$1"
  local -r hash="$2"
  local -a urls
  IFS=, read -r -a urls <<< "$3"

  if [[ -f "${file}" ]]; then
    if ! validate-hash "${file}" "${hash}"; then
      rm -f "${file}"
    else
      return 0
    fi
  fi

  while true; do
    for url in "${urls[@]}"; do
      echo "== Downloading ${url}.xz =="
      if ! curl -f -Lo "${file}.xz" --connect-timeout 20 --retry 6 --retry-delay 10 "${url}.xz"; then
        echo "== Failed to download ${url}.xz =="
        rm -f "${file}.xz"
      elif ! xz -d "${file}.xz"; then
        echo "== Failed to decompress ${url}.xz =="
        rm -f "${file}" "${file}.xz"
      elif ! validate-hash "${file}" "${hash}"; then
        echo "== Failed to validate decompressed hash for ${url}.xz =="
        rm -f "${file}"
      else
        echo "== Downloaded ${url}.xz and validated decompressed hash ${hash} =="
        return 0
      fi
    done

    echo "== All downloads failed; sleeping before retrying =="
    sleep 60
  done
}

validate-hash() {
  local -r file="$1"
  local -r expected="$2"
  local actual

  actual=$(sha256sum "${file}" | awk '{ print $1 }') || true
  if [[ "${actual}" != "${expected}" ]]; then
    echo "== File ${file} is corrupted; hash ${actual} doesn't match expected ${expected} =="
    return 1
  fi
}

function download-release() {
  case "$(uname -m)" in
  x86_64*|i?86_64*|amd64*)
    NODEUP_URL="${NODEUP_URL_AMD64}"
    NODEUP_HASH="${NODEUP_HASH_AMD64}"
    ;;
  aarch64*|arm64*)
    NODEUP_URL="${NODEUP_URL_ARM64}"
    NODEUP_HASH="${NODEUP_HASH_ARM64}"
    ;;
  *)
    echo "Unsupported host arch: $(uname -m)" >&2
    exit 1
    ;;
  esac

  cd ${INSTALL_DIR}/bin
  download-or-bust nodeup "${NODEUP_HASH}" "${NODEUP_URL}"

  chmod +x nodeup

  echo "== Running nodeup =="
  # We can't run in the foreground because of https://github.com/docker/docker/issues/23793
  ( cd ${INSTALL_DIR}/bin; ./nodeup --install-systemd-unit --conf=${INSTALL_DIR}/conf/kube_env.yaml --v=8  )
}

####################################################################################

/bin/systemd-machine-id-setup || echo "== Failed to initialize the machine ID; ensure machine-id configured =="
"#;

const DIGITALOCEAN: &str =
    "  # DO has machine-id baked into the image and journald should be flushed
  # to use the new machine-id
  systemctl restart systemd-journald
";

impl Script {
    /// The script's bytes.
    pub(crate) fn render(&self) -> String {
        let mut s =
            String::from("#!/bin/bash\nset -o errexit\nset -o nounset\nset -o pipefail\n\n");
        for (arch, var) in [("amd64", "AMD64"), ("arm64", "ARM64")] {
            let (urls, hash) = self
                .nodeup
                .get(arch)
                .map(|a| (a.locations.join(","), a.hash.clone()))
                .unwrap_or_default();
            s.push_str(&format!(
                "NODEUP_URL_{var}={urls}\nNODEUP_HASH_{var}={hash}\n"
            ));
        }
        s.push('\n');
        for (k, v) in &self.env {
            s.push_str(&format!("export {k}={v}\n"));
        }
        s.push_str("\n\n");
        s.push_str(&self.proxy);
        s.push_str("\n\n");
        s.push_str(SYSCTLS);
        s.push_str("\n\n");
        s.push_str(INSTALL_DIR);
        s.push('\n');
        s.push_str(DOWNLOAD_HEAD);
        if self.cloud == "digitalocean" {
            s.push_str(DIGITALOCEAN);
        }
        s.push_str("\necho \"== nodeup node config starting ==\"\nensure-install-dir\n\n");
        if self.compress {
            s.push_str(&format!(
                "echo \"{}\" | base64 -d | gzip -d > conf/kube_env.yaml",
                base64::engine::general_purpose::STANDARD.encode(gzip(self.boot_config.as_bytes()))
            ));
        } else {
            s.push_str("cat > conf/kube_env.yaml << '__EOF_KUBE_ENV'\n");
            s.push_str(&self.boot_config);
            s.push_str("\n__EOF_KUBE_ENV");
        }
        s.push_str("\n\ndownload-release\necho \"== nodeup node config done ==\"\n");
        s
    }
}

/// The egress-proxy part of the script (kOps' `createProxyEnv`): `/etc/environment`,
/// the package manager and systemd's default environment get the proxy, then systemd
/// reloads. Empty without a proxy host.
pub(crate) fn proxy_env(host: &str, port: Option<i64>, excludes: &str) -> String {
    if host.is_empty() {
        return String::new();
    }
    let mut url = String::new();
    if !host.starts_with("http://") {
        url.push_str("http://");
    }
    url.push_str(host);
    if let Some(p) = port.filter(|p| *p != 0) {
        url.push_str(&format!(":{p}"));
    }
    let mut b = String::new();
    b.push_str("{\n");
    b.push_str(&format!("  echo \"http_proxy={url}\"\n"));
    b.push_str(&format!("  echo \"https_proxy={url}\"\n"));
    b.push_str(&format!("  echo \"no_proxy={excludes}\"\n"));
    b.push_str(&format!("  echo \"NO_PROXY={excludes}\"\n"));
    b.push_str("} >> /etc/environment\n");
    b.push_str("while read -r in; do export \"${in?}\"; done < /etc/environment\n");
    b.push_str("case $(cat /proc/version) in\n*[Dd]ebian* | *[Uu]buntu*)\n");
    b.push_str(&format!(
        "  echo \"Acquire::http::Proxy \\\"{url}\\\";\" > /etc/apt/apt.conf.d/30proxy ;;\n"
    ));
    b.push_str("*[Rr]ed[Hh]at*)\n");
    b.push_str(&format!("  echo \"proxy={url}\" >> /etc/yum.conf ;;\n"));
    b.push_str("esac\n");
    b.push_str(&format!(
        "echo \"DefaultEnvironment=\\\"http_proxy={url}\\\" \\\"https_proxy={url}\\\" \\\"NO_PROXY={excludes}\\\" \\\"no_proxy={excludes}\\\"\" >> /etc/systemd/system.conf\n"
    ));
    b.push_str("systemctl daemon-reload\nsystemctl daemon-reexec\n");
    b
}

/// One part of [`multipart_mime`]: file name, content type, content.
pub(crate) type Part<'a> = (&'a str, &'a str, &'a str);

/// kOps' `AWSMultipartMIME`: the script (unless `None`, for bastions) and every
/// additional user-data part in one `multipart/mixed` document with the fixed boundary
/// `MIMEBOUNDARY` and CRLF line ends. With no additional part, the script alone.
pub(crate) fn multipart_mime(script: Option<&str>, additional: &[Part<'_>]) -> String {
    if additional.is_empty() {
        return script.unwrap_or_default().to_owned();
    }
    let boundary = "MIMEBOUNDARY";
    let mut s = format!(
        "Content-Type: multipart/mixed; boundary=\"{boundary}\"\r\nMIME-Version: 1.0\r\n\r\n"
    );
    let mut first = true;
    let mut part = |s: &mut String, name: &str, ty: &str, content: &str| {
        // Go's multipart writer: the first boundary has no leading CRLF.
        if first {
            s.push_str(&format!("--{boundary}\r\n"));
            first = false;
        } else {
            s.push_str(&format!("\r\n--{boundary}\r\n"));
        }
        // Headers in canonical form, sorted by name.
        s.push_str(&format!(
            "Content-Disposition: attachment; filename=\"{name}\"\r\n"
        ));
        s.push_str("Content-Transfer-Encoding: 7bit\r\n");
        s.push_str(&format!("Content-Type: {ty}\r\n"));
        s.push_str("Mime-Version: 1.0\r\n\r\n");
        s.push_str(content);
    };
    if let Some(script) = script {
        part(&mut s, "nodeup.sh", "text/x-shellscript", script);
    }
    for (name, ty, content) in additional {
        part(&mut s, name, ty, content);
    }
    s.push_str(&format!("\r\n--{boundary}--\r\n"));
    s
}

/// A gzip stream of `data` at the default compression level, with Go's header (no name,
/// time 0, OS unknown). Any gzip reader decodes it; its bytes are not those of Go's
/// compressor, whose DEFLATE output differs from every other implementation's.
fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let mut z = flate2::GzBuilder::new()
        .operating_system(0xff)
        .write(Vec::new(), flate2::Compression::default());
    // Writing into a vector cannot fail.
    z.write_all(data)
        .and_then(|()| z.finish())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compressed_boot_config_is_smaller_and_decodes_to_itself() {
        use std::io::Read as _;
        let config: String = (0..200)
            .map(|i| format!("Key{i}: value-{}\n", i % 7))
            .collect();
        let z = gzip(config.as_bytes());
        assert!(
            z.len() * 3 < config.len(),
            "{} of {}",
            z.len(),
            config.len()
        );
        assert_eq!(&z[..10], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
        let mut back = String::new();
        flate2::read::GzDecoder::new(z.as_slice())
            .read_to_string(&mut back)
            .unwrap();
        assert_eq!(back, config);
    }

    #[test]
    fn mime_of_a_bastion_without_parts_is_empty() {
        assert_eq!(multipart_mime(None, &[]), "");
        let m = multipart_mime(Some("S"), &[("a.sh", "text/x-shellscript", "A")]);
        assert!(m.starts_with("Content-Type: multipart/mixed; boundary=\"MIMEBOUNDARY\"\r\nMIME-Version: 1.0\r\n\r\n--MIMEBOUNDARY\r\n"));
        assert!(m.ends_with("A\r\n--MIMEBOUNDARY--\r\n"));
    }
}
