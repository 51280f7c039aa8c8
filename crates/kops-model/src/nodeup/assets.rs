//! The files nodeup downloads, and nodeup itself: canonical URLs, mirrors and SHA-256
//! hashes, as kOps' asset builder resolves them (`pkg/assets`,
//! `pkg/nodemodel/fileassets.go`, `pkg/nodemodel/wellknownassets`).
//!
//! Hashes come from a table of facts keyed by URL (kOps' well-known asset hashes, and
//! the nodeup hash of each kOps release we know); a hash the table lacks is taken from
//! the hashes the caller fetched beforehand ([`crate::ClusterContext::asset_hashes`],
//! filled by [`fetch_missing_hashes`] through a [`HashFetcher`]), as kOps downloads
//! `<url>.sha256`.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use kops_api::internal::{CloudProvider, InstanceGroup};

use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

/// The architectures nodeup runs on, in kOps' order.
pub(crate) const ARCHITECTURES: [&str; 2] = ["amd64", "arm64"];

const HASHES: &str = include_str!("hashes.txt");
const NODEUP_HASHES: &str = include_str!("nodeup-hashes.txt");

/// The base URL kOps' releases are published under (`KOPS_BASE_URL` overrides it).
const KOPS_BASE: &str = "https://artifacts.k8s.io/binaries/kops";
/// The GitHub mirror of kOps' release artifacts.
const KOPS_GITHUB: &str = "https://github.com/kubernetes/kops/releases/download";

fn table() -> &'static BTreeMap<&'static str, &'static str> {
    static T: OnceLock<BTreeMap<&'static str, &'static str>> = OnceLock::new();
    T.get_or_init(|| {
        HASHES
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split_once(' '))
            .map(|(h, u)| (u, h))
            .collect()
    })
}

/// The well-known SHA-256 of a file, by its canonical URL.
pub(crate) fn known_hash(url: &str) -> Option<&'static str> {
    table().get(url).copied()
}

/// The SHA-256 of the nodeup binary of kOps `release` for `arch`, when the table has it.
pub(crate) fn known_nodeup_hash(release: &str, arch: &str) -> Option<&'static str> {
    NODEUP_HASHES
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| {
            let mut f = l.split_whitespace();
            match (f.next(), f.next(), f.next()) {
                (Some(r), Some(a), Some(h)) if r == release && a == arch => Some(h),
                _ => None,
            }
        })
}

/// A file at one or more locations with its hash (kOps' `MirroredAsset`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MirroredAsset {
    /// Where to download it from, canonical (or remapped) location first.
    pub(crate) locations: Vec<String>,
    /// Lowercase hex SHA-256.
    pub(crate) hash: String,
}

impl MirroredAsset {
    /// `<hash>@<location>[,<location>...]`, as nodeup configs list assets.
    pub(crate) fn compact(&self) -> String {
        format!("{}@{}", self.hash, self.locations.join(","))
    }
}

/// Where to fetch the SHA-256 of a file the table does not know (kOps reads
/// `<url>.sha256`, then `<url>.sha256sum`, from each mirror).
#[async_trait::async_trait]
pub trait HashFetcher: Send + Sync {
    /// The body of `url`, or `None` when there is none.
    async fn fetch(&self, url: &str) -> std::result::Result<Option<String>, String>;
}

/// The kOps base URL of `release` (with a trailing slash).
fn kops_base(release: &str) -> String {
    format!("{KOPS_BASE}/{release}/")
}

/// kOps' well-known mirrors of a URL: for kOps' release artifacts, the GitHub release
/// (with the path flattened); otherwise the URL alone.
fn mirrors(url: &str, release: &str) -> Vec<String> {
    let base = kops_base(release);
    let Some(suffix) = url.strip_prefix(&base) else {
        return vec![url.to_owned()];
    };
    let flat = suffix
        .replace('/', "-")
        .replace("linux-amd64-nodeup", "nodeup-linux-amd64")
        .replace("linux-arm64-nodeup", "nodeup-linux-arm64");
    vec![url.to_owned(), format!("{KOPS_GITHUB}/v{release}/{flat}")]
}

/// The URL nodes download a file from: the canonical one, or its path under
/// `spec.assets.fileRepository` when set (commas escaped, as kOps does).
fn remap(ctx: &ClusterContext, canonical: &str) -> String {
    let Some(repo) = ctx
        .cluster
        .spec
        .assets
        .as_ref()
        .and_then(|a| a.file_repository.as_deref())
        .filter(|r| !r.is_empty())
    else {
        return canonical.to_owned();
    };
    let path = canonical
        .split_once("://")
        .and_then(|(_, rest)| rest.find('/').map(|i| &rest[i..]))
        .unwrap_or("");
    let repo_host = repo.split_once("://").map_or("", |(_, r)| r);
    let canon_host = canonical.split_once("://").map_or("", |(_, r)| r);
    let host_of = |s: &str| s.split('/').next().unwrap_or("").to_owned();
    if host_of(repo_host) == host_of(canon_host) {
        return canonical.to_owned();
    }
    let joined = format!(
        "{}/{}",
        repo.trim_end_matches('/'),
        path.trim_start_matches('/')
    );
    joined.replace(',', "%2C")
}

/// Resolves one file: its download URL, its hash (given, from the table, or fetched),
/// and its mirrors (only when the hash is known, as kOps does). Every file is recorded as
/// one of the cluster's assets ([`crate::assets`]).
fn file_asset(ctx: &ClusterContext, canonical: &str, known: Option<&str>) -> Result<MirroredAsset> {
    let download = remap(ctx, canonical);
    let hash = known
        .map(str::to_owned)
        .or_else(|| known_hash(canonical).map(str::to_owned))
        .or_else(|| ctx.asset_hashes.get(canonical).cloned())
        .or_else(|| ctx.asset_hashes.get(&download).cloned())
        .ok_or_else(|| {
            invalid(
                canonical,
                "no SHA-256 known for this file: fetch <url>.sha256 first (assets::fetch_missing_hashes) or pin the version's hash",
            )
        })?;
    let hash = hash.to_ascii_lowercase();
    ctx.assets.file(canonical, &download, &hash);
    Ok(MirroredAsset {
        locations: mirrors(&download, &ctx.kops_release),
        hash,
    })
}

/// The canonical nodeup URL of `release` for `arch`.
pub(crate) fn nodeup_url(release: &str, arch: &str) -> String {
    format!("{}linux/{arch}/nodeup", kops_base(release))
}

/// The nodeup binary for `arch` (kOps' `NodeUpAsset`).
pub(crate) fn nodeup_asset(ctx: &ClusterContext, arch: &str) -> Result<MirroredAsset> {
    let url = nodeup_url(&ctx.kops_release, arch);
    file_asset(ctx, &url, known_nodeup_hash(&ctx.kops_release, arch))
}

/// The Kubernetes version of a cluster without its `v` (`1.34.0`), or its base URL.
pub(crate) fn kubernetes_version(ctx: &ClusterContext) -> String {
    let v = ctx
        .cluster
        .spec
        .kubernetes_version
        .clone()
        .unwrap_or_default();
    if v.contains("://") {
        return v;
    }
    v.trim_start_matches('v').to_owned()
}

/// `(major, minor)` of a Kubernetes version without its `v`.
fn minor_of(version: &str) -> (u64, u64) {
    let mut it = version
        .split(['.', '-'])
        .map(|p| p.parse::<u64>().unwrap_or(0));
    (it.next().unwrap_or(0), it.next().unwrap_or(0))
}

/// Whether nodes install the standard CNI plug-ins (kOps' `InstallCNIAssets`).
pub(crate) fn install_cni_assets(ctx: &ClusterContext) -> bool {
    let n = &ctx.cluster.spec.networking;
    if let Some(c) = &n.cilium {
        return c.chaining_mode.as_deref() == Some("portmap");
    }
    n.amazonvpc.is_none() && n.calico.is_none()
}

fn cni_url(kubernetes_version: &str, arch: &str) -> Result<String> {
    let minor = minor_of(kubernetes_version);
    let version = if minor >= (1, 36) {
        "1.9.1"
    } else if minor >= (1, 35) {
        "1.8.0"
    } else if minor >= (1, 34) {
        "1.7.1"
    } else if minor >= (1, 32) {
        "1.6.2"
    } else {
        return Err(invalid(
            "spec.kubernetesVersion",
            "no CNI plug-ins release is known for Kubernetes before 1.32",
        ));
    };
    Ok(format!(
        "https://github.com/containernetworking/plugins/releases/download/v{version}/cni-plugins-linux-{arch}-v{version}.tgz"
    ))
}

/// `(url, hash)` from a package override for `arch`, when both are set.
fn package_override(
    p: Option<&kops_api::v1alpha2::PackagesConfig>,
    arch: &str,
) -> Option<(String, String)> {
    let p = p?;
    let (u, h) = match arch {
        "amd64" => (p.url_amd64.clone(), p.hash_amd64.clone()),
        _ => (p.url_arm64.clone(), p.hash_arm64.clone()),
    };
    Some((u?, h?))
}

/// The files nodeup installs on a group's machines, per architecture, in kOps' order:
/// kubelet, kubectl, the cloud's credential helper, the CNI plug-ins (when installed),
/// containerd, runc, then nerdctl and crictl when asked for. Kubernetes' own files are of
/// the group's version ([`ClusterContext::kubernetes_version_of`]).
pub(crate) fn kubernetes_file_assets(
    ctx: &ClusterContext,
    ig: &InstanceGroup,
) -> Result<BTreeMap<String, Vec<MirroredAsset>>> {
    let version = ctx.kubernetes_version_of(ig);
    let base = if version.contains("://") {
        version.trim_end_matches('/').to_owned()
    } else {
        format!("https://dl.k8s.io/release/v{version}")
    };
    let mut out = BTreeMap::new();
    for arch in ARCHITECTURES {
        let mut list = Vec::new();
        for bin in ["kubelet", "kubectl"] {
            list.push(file_asset(
                ctx,
                &format!("{base}/bin/linux/{arch}/{bin}"),
                None,
            )?);
        }
        match ctx.cluster.cloud_provider() {
            Some(CloudProvider::Aws) => list.push(file_asset(
                ctx,
                &format!(
                    "https://artifacts.k8s.io/binaries/cloud-provider-aws/v1.31.7/linux/{arch}/ecr-credential-provider-linux-{arch}"
                ),
                None,
            )?),
            Some(CloudProvider::Gce) => list.push(file_asset(
                ctx,
                &format!(
                    "https://artifacts.k8s.io/binaries/cloud-provider-gcp/v35.0.0/auth-provider-gcp/linux/{arch}/auth-provider-gcp"
                ),
                None,
            )?),
            _ => {}
        }
        if install_cni_assets(ctx) {
            list.push(file_asset(ctx, &cni_url(&version, arch)?, None)?);
        }
        let containerd = ctx.cluster.spec.containerd.as_ref();
        if !containerd.and_then(|c| c.skip_install).unwrap_or(false) {
            let c = containerd.ok_or_else(|| invalid("spec.containerd", "not set"))?;
            match package_override(c.packages.as_ref(), arch) {
                Some((u, h)) => list.push(file_asset(ctx, &u, Some(&h))?),
                None => {
                    let v = c
                        .version
                        .as_deref()
                        .ok_or_else(|| invalid("spec.containerd.version", "not set"))?;
                    list.push(file_asset(
                        ctx,
                        &format!(
                            "https://github.com/containerd/containerd/releases/download/v{v}/containerd-{v}-linux-{arch}.tar.gz"
                        ),
                        None,
                    )?);
                }
            }
            let runc = c
                .runc
                .as_ref()
                .ok_or_else(|| invalid("spec.containerd.runc", "not set"))?;
            match package_override(runc.packages.as_ref(), arch) {
                Some((u, h)) => list.push(file_asset(ctx, &u, Some(&h))?),
                None => {
                    let v = runc
                        .version
                        .as_deref()
                        .ok_or_else(|| invalid("spec.containerd.runc.version", "not set"))?;
                    list.push(file_asset(
                        ctx,
                        &format!(
                            "https://github.com/opencontainers/runc/releases/download/v{v}/runc.{arch}"
                        ),
                        None,
                    )?);
                }
            }
            if c.install_nerd_ctl == Some(true) {
                list.push(file_asset(
                    ctx,
                    &format!(
                        "https://github.com/containerd/nerdctl/releases/download/v1.7.4/nerdctl-1.7.4-linux-{arch}.tar.gz"
                    ),
                    None,
                )?);
            }
            if c.install_cri_ctl == Some(true) {
                list.push(file_asset(
                    ctx,
                    &format!(
                        "https://github.com/kubernetes-sigs/cri-tools/releases/download/v1.29.0/crictl-v1.29.0-linux-{arch}.tar.gz"
                    ),
                    None,
                )?);
            }
        }
        out.insert(arch.to_owned(), list);
    }
    Ok(out)
}

/// Every canonical URL whose hash a cluster's nodeup configs and user-data need and the
/// table lacks, for [`fetch_missing_hashes`].
fn missing(ctx: &ClusterContext) -> Vec<String> {
    let mut probe = ctx.clone();
    let mut urls = Vec::new();
    // Resolve repeatedly: each failure names one URL.
    for _ in 0..64 {
        let err = ARCHITECTURES
            .iter()
            .find_map(|a| nodeup_asset(&probe, a).err())
            .or_else(|| {
                probe
                    .groups
                    .first()
                    .and_then(|ig| kubernetes_file_assets(&probe, ig).err())
            });
        let Some(crate::Error::Invalid { field, .. }) = err else {
            break;
        };
        if urls.contains(&field) {
            break;
        }
        probe.asset_hashes.insert(field.clone(), String::new());
        urls.push(field);
    }
    urls
}

/// Fetches the SHA-256 of every file the table lacks from `<url>.sha256` (then
/// `<url>.sha256sum`) at each of its mirrors through `fetcher`, and records them in
/// [`ClusterContext::asset_hashes`]. An error names the URL no mirror answered for.
pub async fn fetch_missing_hashes(
    ctx: &mut ClusterContext,
    fetcher: &dyn HashFetcher,
) -> Result<()> {
    for url in missing(ctx) {
        let mut found = None;
        'search: for ext in [".sha256", ".sha256sum"] {
            for m in mirrors(&remap(ctx, &url), &ctx.kops_release) {
                let hash_url = format!("{m}{ext}");
                if let Ok(Some(body)) = fetcher.fetch(&hash_url).await
                    && let Some(first) = body.split_whitespace().next()
                    && first.len() == 64
                    && first.chars().all(|c| c.is_ascii_hexdigit())
                {
                    found = Some(first.to_ascii_lowercase());
                    break 'search;
                }
            }
        }
        let hash = found.ok_or_else(|| {
            invalid(
                url.clone(),
                "cannot determine the file's SHA-256: no mirror serves <url>.sha256",
            )
        })?;
        ctx.asset_hashes.insert(url, hash);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_knows_kubelet_and_nodeup() {
        assert_eq!(
            known_hash("https://dl.k8s.io/release/v1.34.0/bin/linux/amd64/kubelet"),
            Some("5c0d28cea2a3a5c91861dda088a29d56c1b027e184dae1d792686f0710750076")
        );
        assert!(known_nodeup_hash("1.34.0-beta.1", "arm64").is_some());
        assert!(known_nodeup_hash("0.0.1", "arm64").is_none());
    }

    #[test]
    fn nodeup_mirrors_flatten_the_path() {
        let m = mirrors(&nodeup_url("1.2.3", "amd64"), "1.2.3");
        assert_eq!(
            m,
            [
                "https://artifacts.k8s.io/binaries/kops/1.2.3/linux/amd64/nodeup",
                "https://github.com/kubernetes/kops/releases/download/v1.2.3/nodeup-linux-amd64"
            ]
        );
        assert_eq!(
            mirrors("https://example.com/x", "1.2.3"),
            ["https://example.com/x"]
        );
    }
}
