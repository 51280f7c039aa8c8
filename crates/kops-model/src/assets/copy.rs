//! kOps' `get assets --copy`: each asset copied from its canonical location to the one
//! the cluster's machines download it from, so that a cluster whose `spec.assets` names
//! a private registry and file repository runs without reaching the internet.
//!
//! - A file is downloaded over HTTP(S), checked against its SHA-256, and written with
//!   `<file>.sha256` beside it, as kOps writes them, through the state-store backends: the
//!   file repository is an `s3://`, `gs://` or `file://` URL, or an S3 or GCS HTTPS URL. A
//!   file whose `.sha256` already holds the expected hash is left alone.
//! - An image is copied between registries with the OCI distribution API, every platform
//!   of an index, manifests byte for byte (the digests stay the same). A target already
//!   holding the source's manifest is left alone, and a blob the target holds is not
//!   uploaded again.

use std::fmt;
use std::path::Path;

use futures::StreamExt;
use kops_statestore::{PutOptions, StoreExt, StoreOptions};
use sha2::{Digest, Sha256};

use super::oci::{ImageRef, Login, Oci, Registries, causes};
use super::{Assets, FileAsset, ImageAsset};

/// Why an asset was not copied. Its text names the asset and what failed, never a
/// password.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{asset}: {message}")]
#[non_exhaustive]
pub struct CopyError {
    /// The asset's canonical location.
    pub asset: String,
    /// What failed.
    pub message: String,
}

impl CopyError {
    fn new(asset: &str, message: impl Into<String>) -> Self {
        CopyError {
            asset: asset.to_owned(),
            message: message.into(),
        }
    }
}

/// What copying one asset did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Copied {
    /// Copied: `bytes` were uploaded (for an image, its blobs the target lacked).
    Copied {
        /// Bytes uploaded.
        bytes: u64,
    },
    /// The download location already held it: nothing was written.
    AlreadyThere,
    /// The asset is downloaded from its canonical location: there is nothing to copy.
    SameLocation,
}

/// One asset's outcome in a [`CopyReport`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CopyOutcome {
    /// `image` or `file`.
    pub kind: &'static str,
    /// The canonical location.
    pub canonical: String,
    /// The download location.
    pub download: String,
    /// What was done, or why not.
    pub result: Result<Copied, CopyError>,
}

/// Every asset's outcome, images first, each list in the order of [`Assets`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CopyReport {
    /// The outcomes.
    pub outcomes: Vec<CopyOutcome>,
}

impl CopyReport {
    /// The assets that could not be copied.
    pub fn failures(&self) -> impl Iterator<Item = &CopyError> {
        self.outcomes.iter().filter_map(|o| o.result.as_ref().err())
    }

    /// Whether every asset is where its machines download it.
    pub fn is_success(&self) -> bool {
        self.failures().next().is_none()
    }
}

/// Copies a cluster's assets ([`Assets`], from `UpdateCluster::assets`) to where its
/// machines download them. Several at once (four unless
/// [`AssetCopier::with_concurrency`] says otherwise); an asset that fails does not stop
/// the others.
///
/// Writing to an `s3://` or `gs://` file repository needs kops-statestore's `s3` / `gcs`
/// feature, with the credentials of the [`StoreOptions`] given.
#[derive(Clone)]
pub struct AssetCopier {
    http: reqwest::Client,
    stores: StoreOptions,
    /// Canonical URL prefixes read from elsewhere (an internal mirror of `dl.k8s.io`).
    file_sources: Vec<(String, String)>,
    registries: Registries,
    concurrency: usize,
}

impl fmt::Debug for AssetCopier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut logins: Vec<&String> = self.registries.logins.keys().collect();
        logins.sort();
        f.debug_struct("AssetCopier")
            .field("file_sources", &self.file_sources)
            .field("registry_endpoints", &self.registries.endpoints)
            .field("registry_logins", &logins)
            .field("concurrency", &self.concurrency)
            .finish_non_exhaustive()
    }
}

impl AssetCopier {
    /// A copier writing files through stores opened with `stores`.
    pub fn new(stores: StoreOptions) -> Result<Self, CopyError> {
        let http = reqwest::Client::builder()
            .user_agent(concat!("kops-rs/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(std::time::Duration::from_secs(30))
            .build()
            .map_err(|e| CopyError::new("HTTP client", e.to_string()))?;
        Ok(AssetCopier {
            http,
            stores,
            file_sources: Vec::new(),
            registries: Registries::default(),
            concurrency: 4,
        })
    }

    /// Reads the files whose canonical URL starts with `prefix` from `replacement`
    /// instead (the rest of the URL kept): an internal mirror of `https://dl.k8s.io/`.
    pub fn with_file_source(mut self, prefix: &str, replacement: &str) -> Self {
        self.file_sources
            .push((prefix.to_owned(), replacement.to_owned()));
        self
    }

    /// Reaches `registry` (`registry.k8s.io`, `127.0.0.1:5000`) at `endpoint`
    /// (`https://mirror.example.com`, `http://127.0.0.1:5000`) instead of its own address.
    /// Without one, a registry on the loopback interface is reached over plain HTTP and
    /// any other over HTTPS.
    pub fn with_registry_endpoint(mut self, registry: &str, endpoint: &str) -> Self {
        self.registries
            .endpoints
            .insert(registry.to_owned(), endpoint.to_owned());
        self
    }

    /// Logs in to `registry` as `user` when it asks (for a token or basic
    /// authentication).
    pub fn with_registry_login(mut self, registry: &str, user: &str, password: &str) -> Self {
        self.registries.logins.insert(
            registry.to_owned(),
            Login {
                user: user.to_owned(),
                password: password.to_owned(),
            },
        );
        self
    }

    /// Adds the logins of a Docker client configuration (`~/.docker/config.json`, as
    /// `docker login` writes it): each `auths` entry with an `auth` (base64 of
    /// `user:password`) or a `username` and `password`, and the credential helpers
    /// (`credHelpers` per registry, `credsStore` for the others), which are run
    /// (`docker-credential-<helper> get`, from `PATH`) when a registry asks for a login:
    /// `ecr-login` for Amazon ECR, `gcloud` for Google's registries. A registry's helper
    /// wins over its login, and a login over the default helper, as in Docker. Logins given
    /// already are kept.
    pub fn with_docker_config(mut self, path: &Path) -> Result<Self, CopyError> {
        let name = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|e| CopyError::new(&name, e.to_string()))?;
        let config: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| CopyError::new(&name, format!("not JSON: {e}")))?;
        if let Some(helpers) = config.get("credHelpers").and_then(|h| h.as_object()) {
            for (server, helper) in helpers {
                if let Some(h) = helper.as_str().filter(|h| !h.is_empty()) {
                    self.registries
                        .helpers
                        .insert(registry_of_server(server), h.to_owned());
                }
            }
        }
        if let Some(store) = config.get("credsStore").and_then(|s| s.as_str())
            && !store.is_empty()
        {
            self.registries.default_helper = Some(store.to_owned());
        }
        let Some(auths) = config.get("auths").and_then(|a| a.as_object()) else {
            return Ok(self);
        };
        for (server, entry) in auths {
            let registry = registry_of_server(server);
            if self.registries.logins.contains_key(&registry) {
                continue;
            }
            let login = match entry.get("auth").and_then(|a| a.as_str()) {
                Some(encoded) => {
                    use base64::Engine as _;
                    let decoded = base64::engine::general_purpose::STANDARD
                        .decode(encoded.trim())
                        .ok()
                        .and_then(|d| String::from_utf8(d).ok())
                        .ok_or_else(|| {
                            CopyError::new(
                                &name,
                                format!("auths.{server}.auth: not base64 of user:password"),
                            )
                        })?;
                    decoded.split_once(':').map(|(u, p)| Login {
                        user: u.to_owned(),
                        password: p.to_owned(),
                    })
                }
                None => match (
                    entry.get("username").and_then(|u| u.as_str()),
                    entry.get("password").and_then(|p| p.as_str()),
                ) {
                    (Some(u), Some(p)) => Some(Login {
                        user: u.to_owned(),
                        password: p.to_owned(),
                    }),
                    _ => None,
                },
            };
            if let Some(l) = login {
                self.registries.logins.insert(registry, l);
            }
        }
        Ok(self)
    }

    /// Copies up to `n` assets at once (at least one).
    pub fn with_concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// Copies every asset: images, then files.
    pub async fn copy(&self, assets: &Assets) -> CopyReport {
        let oci = Oci::new(&self.http, &self.registries);
        let oci = &oci;
        let images = futures::stream::iter(assets.images.iter().map(|i| async move {
            CopyOutcome {
                kind: "image",
                canonical: i.canonical.clone(),
                download: i.download.clone(),
                result: self.copy_image_with(oci, i).await,
            }
        }))
        .buffered(self.concurrency)
        .collect::<Vec<_>>()
        .await;
        let files = futures::stream::iter(assets.files.iter().map(|f| async move {
            CopyOutcome {
                kind: "file",
                canonical: f.canonical.clone(),
                download: f.download.clone(),
                result: self.copy_file(f).await,
            }
        }))
        .buffered(self.concurrency)
        .collect::<Vec<_>>()
        .await;
        CopyReport {
            outcomes: images.into_iter().chain(files).collect(),
        }
    }

    /// Copies one image from its canonical registry to its download location.
    pub async fn copy_image(&self, image: &ImageAsset) -> Result<Copied, CopyError> {
        let oci = Oci::new(&self.http, &self.registries);
        self.copy_image_with(&oci, image).await
    }

    async fn copy_image_with(
        &self,
        oci: &Oci<'_>,
        image: &ImageAsset,
    ) -> Result<Copied, CopyError> {
        if image.canonical == image.download {
            return Ok(Copied::SameLocation);
        }
        let fail = |m: String| CopyError::new(&image.canonical, m);
        let source = ImageRef::parse(&image.canonical).map_err(fail)?;
        let target = ImageRef::parse(&image.download)
            .map_err(|m| fail(format!("download location {}: {m}", image.download)))?;
        let copy = oci.copy(&source, &target).await.map_err(fail)?;
        Ok(if copy.unchanged {
            Copied::AlreadyThere
        } else {
            Copied::Copied { bytes: copy.bytes }
        })
    }

    /// Copies one file from its canonical URL (or the source given for it) to its
    /// download location, with its `.sha256`.
    pub async fn copy_file(&self, file: &FileAsset) -> Result<Copied, CopyError> {
        if file.canonical == file.download {
            return Ok(Copied::SameLocation);
        }
        let fail = |m: String| CopyError::new(&file.canonical, m);
        let want = file.sha.trim().to_ascii_lowercase();
        if want.len() != 64 || !want.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(fail(format!("SHA-256 {:?} is not 64 hex digits", file.sha)));
        }
        let (store_url, key) = writable_location(&file.download).map_err(fail)?;
        let store = kops_statestore::open(&store_url, &self.stores)
            .map_err(|e| fail(format!("opening {store_url}: {e}")))?;
        let sha_key = format!("{key}.sha256");
        let present = store
            .get_opt(&sha_key)
            .await
            .map_err(|e| fail(format!("reading {}.sha256: {e}", file.download)))?;
        if present.is_some_and(|p| String::from_utf8_lossy(&p.data).trim() == want) {
            return Ok(Copied::AlreadyThere);
        }
        let source = self.file_source(&file.canonical);
        let data = self.download(&source).await.map_err(fail)?;
        let got = hex(&Sha256::digest(&data));
        if got != want {
            return Err(fail(format!(
                "{source} has SHA-256 {got}, not the expected {want}: not copied"
            )));
        }
        let size = data.len() as u64;
        store
            .put(&key, data, PutOptions::overwrite())
            .await
            .map_err(|e| fail(format!("writing {}: {e}", file.download)))?;
        // Written last, so that an interrupted copy is done again.
        store
            .put(&sha_key, want.into_bytes().into(), PutOptions::overwrite())
            .await
            .map_err(|e| fail(format!("writing {}.sha256: {e}", file.download)))?;
        Ok(Copied::Copied { bytes: size })
    }

    /// The body of `url`, retrying what a retry may fix (a lost connection, 429, 5xx).
    async fn download(&self, url: &str) -> Result<bytes::Bytes, String> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let last = attempt >= 3;
            let response = match self.http.get(url).send().await {
                Ok(r) => r,
                Err(e) if !last && (e.is_connect() || e.is_timeout()) => {
                    super::oci::backoff(attempt).await;
                    continue;
                }
                Err(e) => return Err(format!("downloading {url}: {}", causes(&e))),
            };
            let status = response.status();
            if !last && (status.as_u16() == 429 || status.is_server_error()) {
                super::oci::backoff(attempt).await;
                continue;
            }
            if !status.is_success() {
                return Err(format!("downloading {url}: HTTP {}", status.as_u16()));
            }
            return response
                .bytes()
                .await
                .map_err(|e| format!("downloading {url}: {}", causes(&e)));
        }
    }

    fn file_source(&self, canonical: &str) -> String {
        self.file_sources
            .iter()
            .find_map(|(prefix, replacement)| {
                canonical
                    .strip_prefix(prefix.as_str())
                    .map(|rest| format!("{replacement}{rest}"))
            })
            .unwrap_or_else(|| canonical.to_owned())
    }
}

/// The registry a Docker configuration's `auths` key names: its host, without scheme and
/// path (Docker Hub's `https://index.docker.io/v1/` is `docker.io`).
fn registry_of_server(server: &str) -> String {
    let host = server
        .split_once("://")
        .map_or(server, |(_, rest)| rest)
        .split('/')
        .next()
        .unwrap_or("");
    match host {
        "index.docker.io" | "registry-1.docker.io" => "docker.io".to_owned(),
        h => h.to_owned(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The store URL and key a file's download location is written through (kOps' rule): the store is the
/// location's directory (`s3://bucket/dir`, `file:///srv/dir`) and the key its file
/// name. S3 (`https://<bucket>.s3.<region>.amazonaws.com/...`,
/// `https://s3.<region>.amazonaws.com/<bucket>/...`) and GCS
/// (`https://storage.googleapis.com/<bucket>/...`) HTTPS URLs are written through their
/// bucket, as kOps writes them; a local path is a `file://` location.
pub fn writable_location(download: &str) -> Result<(String, String), String> {
    let native = native_url(download)?;
    let (dir, name) = native
        .rsplit_once('/')
        .filter(|(dir, name)| !name.is_empty() && !dir.ends_with(':') && !dir.ends_with("://"))
        .ok_or_else(|| format!("{download} names no file"))?;
    Ok((dir.to_owned(), name.to_owned()))
}

fn native_url(download: &str) -> Result<String, String> {
    for scheme in ["s3://", "gs://", "file://", "memfs://"] {
        if download.starts_with(scheme) {
            return Ok(download.to_owned());
        }
    }
    if download.starts_with('/') {
        return Ok(format!("file://{download}"));
    }
    let Some(rest) = download.strip_prefix("https://") else {
        return Err(format!(
            "cannot write {download}: a file repository must be s3://, gs://, file:// or an S3 or GCS https:// URL"
        ));
    };
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    if host == "storage.googleapis.com" {
        return Ok(format!("gs://{path}"));
    }
    if let Some(service) = host.strip_suffix(".amazonaws.com") {
        // Path style: s3.amazonaws.com, s3.<region>.amazonaws.com, s3-<region>.amazonaws.com.
        if service == "s3" || service.starts_with("s3.") || service.starts_with("s3-") {
            return Ok(format!("s3://{path}"));
        }
        // Virtual-hosted style: <bucket>.s3[.-]<region>.amazonaws.com.
        for marker in [".s3.", ".s3-"] {
            if let Some(i) = service.find(marker) {
                return Ok(format!("s3://{}/{path}", &service[..i]));
            }
        }
        if let Some(bucket) = service.strip_suffix(".s3") {
            return Ok(format!("s3://{bucket}/{path}"));
        }
    }
    Err(format!(
        "cannot write {download}: only S3 and GCS https:// URLs can be written; use s3://, gs:// or file:// for spec.assets.fileRepository"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn download_locations_are_written_through_their_bucket_or_directory() {
        let t = |u: &str| writable_location(u).unwrap();
        assert_eq!(
            t("s3://b/k8s/kubelet"),
            ("s3://b/k8s".into(), "kubelet".into())
        );
        assert_eq!(
            t("https://b.s3.eu-west-1.amazonaws.com/k/kubelet"),
            ("s3://b/k".into(), "kubelet".into())
        );
        assert_eq!(
            t("https://s3.amazonaws.com/b/k/kubelet"),
            ("s3://b/k".into(), "kubelet".into())
        );
        assert_eq!(
            t("https://b.s3.amazonaws.com/kubelet"),
            ("s3://b".into(), "kubelet".into())
        );
        assert_eq!(
            t("https://storage.googleapis.com/b/k/kubelet"),
            ("gs://b/k".into(), "kubelet".into())
        );
        assert_eq!(
            t("/srv/files/kubelet"),
            ("file:///srv/files".into(), "kubelet".into())
        );
        let e = writable_location("https://files.example.com/kubelet").unwrap_err();
        assert!(e.contains("s3://, gs:// or file://"), "{e}");
        assert!(writable_location("s3://b/").is_err());
    }

    #[test]
    fn docker_logins_are_read_by_registry_and_never_shown() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        std::fs::write(
            &path,
            r#"{"auths":{"https://index.docker.io/v1/":{"auth":"dXNlcjpzM2NyZXQ="},
               "127.0.0.1:5000":{"username":"u2","password":"p2"}},"credsStore":"desktop"}"#,
        )
        .unwrap();
        let c = AssetCopier::new(StoreOptions::default())
            .unwrap()
            .with_docker_config(&path)
            .unwrap();
        assert_eq!(c.registries.logins["docker.io"].user, "user");
        assert_eq!(c.registries.logins["docker.io"].password, "s3cret");
        assert_eq!(c.registries.logins["127.0.0.1:5000"].user, "u2");
        assert_eq!(c.registries.default_helper.as_deref(), Some("desktop"));
        let shown = format!("{c:?}");
        assert!(
            !shown.contains("s3cret") && !shown.contains("p2"),
            "{shown}"
        );
    }
}
