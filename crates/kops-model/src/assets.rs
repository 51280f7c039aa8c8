//! What a cluster's machines download (kOps' `get assets`): every container image and
//! file the model names, as it names them, with where each is downloaded from once the
//! cluster's `spec.assets` (`containerRegistry`, `containerProxy`, `fileRepository`)
//! remaps it, and each file's SHA-256. A team mirroring them for an air-gapped cluster
//! copies each canonical location to its download location.
//!
//! They are recorded where the model names them (where an image is remapped, where a
//! nodeup file asset is resolved) while a cloud's `UpdateCluster` builds its model, and
//! read with `UpdateCluster::assets` ([`crate::aws::UpdateCluster::assets`],
//! [`crate::gce::UpdateCluster::assets`]).
//!
//! With the feature `copy`, `AssetCopier` copies them (kOps' `get assets --copy`): files
//! to `fileRepository`, images to `containerRegistry`.

use std::sync::{Arc, Mutex};

use serde::Serialize;

#[cfg(feature = "copy")]
mod copy;
#[cfg(feature = "copy")]
mod oci;

#[cfg(feature = "copy")]
pub use copy::{AssetCopier, Copied, CopyError, CopyOutcome, CopyReport, writable_location};

/// A container image the cluster runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ImageAsset {
    /// The image as the model names it (`registry.k8s.io/kube-apiserver:v1.34.1`).
    pub canonical: String,
    /// The image machines pull: the canonical one remapped through `spec.assets`.
    pub download: String,
}

impl ImageAsset {
    /// An image named `canonical`, pulled as `download`.
    pub fn new(canonical: impl Into<String>, download: impl Into<String>) -> Self {
        ImageAsset {
            canonical: canonical.into(),
            download: download.into(),
        }
    }
}

/// A file the cluster's machines download.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct FileAsset {
    /// The file's canonical URL.
    pub canonical: String,
    /// The URL machines download it from: under `spec.assets.fileRepository` when set.
    pub download: String,
    /// Its SHA-256, lowercase hex.
    pub sha: String,
}

impl FileAsset {
    /// A file at `canonical`, downloaded from `download`, with SHA-256 `sha`.
    pub fn new(
        canonical: impl Into<String>,
        download: impl Into<String>,
        sha: impl Into<String>,
    ) -> Self {
        FileAsset {
            canonical: canonical.into(),
            download: download.into(),
            sha: sha.into(),
        }
    }
}

/// Every image and file of a cluster, each once, in the order the model first names it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Assets {
    /// The container images.
    pub images: Vec<ImageAsset>,
    /// The files.
    pub files: Vec<FileAsset>,
}

/// Where the model records the assets it names while it is built. Clones share the
/// record; an asset named again is kept once.
#[derive(Clone, Debug, Default)]
pub(crate) struct AssetRecorder(Arc<Mutex<Assets>>);

impl AssetRecorder {
    fn with<T>(&self, f: impl FnOnce(&mut Assets) -> T) -> T {
        let mut assets = self.0.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut assets)
    }

    /// Records an image the model names as `canonical` and machines pull as `download`.
    /// An image that is already a recorded download location (remapped twice) is not
    /// recorded again.
    pub(crate) fn image(&self, canonical: &str, download: &str) {
        self.with(|a| {
            let known = a
                .images
                .iter()
                .any(|i| i.canonical == canonical || i.download == canonical);
            if !known {
                a.images.push(ImageAsset {
                    canonical: canonical.to_owned(),
                    download: download.to_owned(),
                });
            }
        });
    }

    /// Records a file.
    pub(crate) fn file(&self, canonical: &str, download: &str, sha: &str) {
        self.with(|a| {
            if !a.files.iter().any(|f| f.canonical == canonical) {
                a.files.push(FileAsset {
                    canonical: canonical.to_owned(),
                    download: download.to_owned(),
                    sha: sha.to_owned(),
                });
            }
        });
    }

    /// What was recorded so far.
    pub(crate) fn snapshot(&self) -> Assets {
        self.with(|a| a.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_asset_is_kept_once_in_the_order_first_named() {
        let r = AssetRecorder::default();
        r.image("registry.k8s.io/a:1", "mirror.example.com/a:1");
        r.image("registry.k8s.io/b:1", "registry.k8s.io/b:1");
        r.image("registry.k8s.io/a:1", "mirror.example.com/a:1");
        // Remapped again: the download location is not a new canonical image.
        r.image("mirror.example.com/a:1", "mirror.example.com/a:1");
        r.file("https://dl/x", "https://mirror/x", "ab");
        r.file("https://dl/x", "https://mirror/x", "ab");
        let shared = r.clone();
        shared.file("https://dl/y", "https://dl/y", "cd");
        let a = r.snapshot();
        let images: Vec<&str> = a.images.iter().map(|i| i.canonical.as_str()).collect();
        assert_eq!(images, ["registry.k8s.io/a:1", "registry.k8s.io/b:1"]);
        let files: Vec<&str> = a.files.iter().map(|f| f.canonical.as_str()).collect();
        assert_eq!(files, ["https://dl/x", "https://dl/y"]);
    }
}
