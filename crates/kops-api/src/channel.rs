//! Channels: kOps' published lists of images and Kubernetes versions.
//!
//! A channel file is YAML (`spec.images`, `spec.kubernetesVersions`,
//! `spec.kopsVersions`, `spec.cluster`, ...). The caller reads the file and passes its
//! text to [`Channel::parse`]; this crate does no I/O. Fields this crate does not use
//! are ignored, so newer channel files still load.
//!
//! Lookups by version take the first entry whose range holds the version, as kOps'
//! `FindKubernetesVersionSpec` and `FindKopsVersionSpec` do: an entry without a range
//! holds every version, and one whose range does not parse is skipped.
//!
//! ```
//! use kops_api::channel::{Architecture, Channel};
//! let channel = Channel::parse(r#"
//! spec:
//!   images:
//!   - name: example/old-image
//!     providerID: aws
//!     architectureID: amd64
//!     kubernetesVersion: "<1.32.0"
//!   - name: example/new-image
//!     providerID: aws
//!     architectureID: amd64
//!     kubernetesVersion: ">=1.32.0"
//! "#).unwrap();
//! let v = semver::Version::parse("1.34.0").unwrap();
//! let image = channel.find_image("aws", &v, Architecture::Amd64).unwrap();
//! assert_eq!(image.name, "example/new-image");
//! ```

use serde::Deserialize;

use crate::{Error, Result};

/// A parsed channel.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[non_exhaustive]
pub struct Channel {
    /// The channel's contents.
    #[serde(default)]
    pub spec: ChannelSpec,
}

/// The parts of a channel this crate uses.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[non_exhaustive]
pub struct ChannelSpec {
    /// Machine images, in order of preference.
    #[serde(default)]
    pub images: Vec<ChannelImage>,
    /// Recommended and required Kubernetes versions per range.
    #[serde(default, rename = "kubernetesVersions")]
    pub kubernetes_versions: Vec<KubernetesVersionSpec>,
    /// Recommended and required kOps versions, and the Kubernetes version each kOps
    /// release creates clusters with, per range of kOps versions.
    #[serde(default, rename = "kopsVersions")]
    pub kops_versions: Vec<KopsVersionSpec>,
}

/// One image entry of a channel.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[non_exhaustive]
pub struct ChannelImage {
    /// Image name (`owner/name` on AWS, `project/image` on GCE).
    #[serde(default)]
    pub name: String,
    /// Cloud provider (`aws`, `gce`, ...).
    #[serde(default, rename = "providerID")]
    pub provider_id: String,
    /// CPU architecture (`amd64`, `arm64`); empty matches any.
    #[serde(default, rename = "architectureID")]
    pub architecture_id: String,
    /// Kubernetes versions the image is for, as a range (`">=1.32.0 <1.35.0"`); empty matches any.
    #[serde(default, rename = "kubernetesVersion")]
    pub kubernetes_version: String,
}

/// Kubernetes version recommendations for a range of versions.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[non_exhaustive]
pub struct KubernetesVersionSpec {
    /// The range the entry applies to.
    #[serde(default)]
    pub range: String,
    /// Version recommended for this range.
    #[serde(default, rename = "recommendedVersion")]
    pub recommended_version: Option<String>,
    /// Minimum version required for this range.
    #[serde(default, rename = "requiredVersion")]
    pub required_version: Option<String>,
}

/// kOps version recommendations for a range of kOps versions (an entry of
/// `spec.kopsVersions`).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[non_exhaustive]
pub struct KopsVersionSpec {
    /// The range of kOps versions the entry applies to (`">=1.34.0-alpha.1"`); empty
    /// matches any.
    #[serde(default)]
    pub range: String,
    /// The kOps version recommended to users of this range.
    #[serde(default, rename = "recommendedVersion")]
    pub recommended_version: Option<String>,
    /// The kOps version users of this range must upgrade to.
    #[serde(default, rename = "requiredVersion")]
    pub required_version: Option<String>,
    /// The Kubernetes version these kOps releases give new clusters.
    #[serde(default, rename = "kubernetesVersion")]
    pub kubernetes_version: Option<String>,
}

/// A CPU architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Architecture {
    /// x86-64.
    Amd64,
    /// 64-bit ARM.
    Arm64,
}

impl Architecture {
    /// The channel spelling (`amd64`, `arm64`).
    pub fn as_str(self) -> &'static str {
        match self {
            Architecture::Amd64 => "amd64",
            Architecture::Arm64 => "arm64",
        }
    }
}

impl Channel {
    /// Parses channel YAML text.
    pub fn parse(text: &str) -> Result<Channel> {
        let mut path = String::new();
        let result = serde_saphyr::with_deserializer_from_str_with_options(
            text,
            crate::manifest::yaml_options(),
            |de| {
                serde_path_to_error::deserialize(de).map_err(|e| {
                    path = e.path().to_string();
                    e.into_inner()
                })
            },
        );
        let channel: Channel = result.map_err(|e| Error::Channel {
            path: if path == "." {
                String::new()
            } else {
                path.clone()
            },
            message: crate::manifest::redact_quoted(e.to_string().trim()),
        })?;
        for (i, image) in channel.spec.images.iter().enumerate() {
            if !image.kubernetes_version.is_empty() {
                VersionRange::parse(&image.kubernetes_version).map_err(|message| {
                    Error::Channel {
                        path: format!("spec.images[{i}].kubernetesVersion"),
                        message,
                    }
                })?;
            }
        }
        Ok(channel)
    }

    /// The first image for this provider, architecture and Kubernetes
    /// version, as kOps chooses it (entries are tried in order).
    pub fn find_image(
        &self,
        provider: &str,
        kubernetes_version: &semver::Version,
        architecture: Architecture,
    ) -> Option<&ChannelImage> {
        self.spec.images.iter().find(|image| {
            image.provider_id == provider
                && (image.architecture_id.is_empty()
                    || image.architecture_id == architecture.as_str())
                && (image.kubernetes_version.is_empty()
                    || VersionRange::parse(&image.kubernetes_version)
                        .is_ok_and(|r| r.matches(kubernetes_version)))
        })
    }

    /// The first entry of `spec.kubernetesVersions` whose range holds `version` (kOps'
    /// `FindKubernetesVersionSpec`).
    pub fn kubernetes_version_spec(
        &self,
        version: &semver::Version,
    ) -> Option<&KubernetesVersionSpec> {
        self.spec
            .kubernetes_versions
            .iter()
            .find(|k| range_holds(&k.range, version))
    }

    /// The first entry of `spec.kopsVersions` whose range holds the kOps version
    /// `kops_version` (kOps' `FindKopsVersionSpec`).
    pub fn kops_version_spec(&self, kops_version: &semver::Version) -> Option<&KopsVersionSpec> {
        self.spec
            .kops_versions
            .iter()
            .find(|k| range_holds(&k.range, kops_version))
    }

    /// The Kubernetes version kOps `kops_version` gives new clusters: the
    /// `kubernetesVersion` of its [`kops_version_spec`](Self::kops_version_spec), as kOps'
    /// `RecommendedKubernetesVersion` answers. `None` when no entry holds the release,
    /// the entry names no Kubernetes version, or it does not parse.
    ///
    /// ```
    /// use kops_api::channel::Channel;
    /// let channel = Channel::parse(r#"
    /// spec:
    ///   kopsVersions:
    ///   - range: ">=1.35.0-alpha.1"
    ///     kubernetesVersion: 1.35.7
    ///   - range: ">=1.34.0-alpha.1"
    ///     kubernetesVersion: v1.34.10
    /// "#).unwrap();
    /// let kops = semver::Version::parse("1.34.0-beta.1").unwrap();
    /// let k8s = channel.recommended_kubernetes_version(&kops).unwrap();
    /// assert_eq!(k8s.to_string(), "1.34.10");
    /// ```
    pub fn recommended_kubernetes_version(
        &self,
        kops_version: &semver::Version,
    ) -> Option<semver::Version> {
        self.kops_version_spec(kops_version)
            .and_then(|k| k.kubernetes_version.as_deref())
            .and_then(crate::version::parse_kubernetes_version)
    }
}

/// Whether a channel entry's `range` holds `version`: an empty range holds every
/// version, one that does not parse none.
fn range_holds(range: &str, version: &semver::Version) -> bool {
    range.is_empty() || VersionRange::parse(range).is_ok_and(|r| r.matches(version))
}

/// A version range as kOps writes it: comparators separated by spaces must
/// all hold (`>=1.32.0 <1.35.0`); alternatives are separated by `||`.
///
/// Unlike Cargo's requirements, pre-releases compare by plain semver order:
/// `1.35.0-alpha.1` matches `>=1.32.0`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRange {
    alternatives: Vec<Vec<(Op, semver::Version)>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

impl VersionRange {
    /// Parses a range; the error says what is wrong.
    pub fn parse(s: &str) -> std::result::Result<VersionRange, String> {
        let mut alternatives = Vec::new();
        for alt in s.split("||") {
            let mut all = Vec::new();
            for part in alt.split_whitespace() {
                let (op, rest) = if let Some(r) = part.strip_prefix(">=") {
                    (Op::Ge, r)
                } else if let Some(r) = part.strip_prefix("<=") {
                    (Op::Le, r)
                } else if let Some(r) = part.strip_prefix("!=") {
                    (Op::Ne, r)
                } else if let Some(r) = part.strip_prefix("==") {
                    (Op::Eq, r)
                } else if let Some(r) = part.strip_prefix('>') {
                    (Op::Gt, r)
                } else if let Some(r) = part.strip_prefix('<') {
                    (Op::Lt, r)
                } else if let Some(r) = part.strip_prefix('=') {
                    (Op::Eq, r)
                } else {
                    (Op::Eq, part)
                };
                let v = semver::Version::parse(rest.trim_start_matches('v'))
                    .map_err(|e| format!("invalid version {rest:?} in range {s:?}: {e}"))?;
                all.push((op, v));
            }
            if all.is_empty() {
                return Err(format!("empty range in {s:?}"));
            }
            alternatives.push(all);
        }
        Ok(VersionRange { alternatives })
    }

    /// Whether `v` is in the range.
    pub fn matches(&self, v: &semver::Version) -> bool {
        self.alternatives.iter().any(|all| {
            all.iter().all(|(op, bound)| match op {
                Op::Eq => v == bound,
                Op::Ne => v != bound,
                Op::Gt => v > bound,
                Op::Ge => v >= bound,
                Op::Lt => v < bound,
                Op::Le => v <= bound,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> semver::Version {
        semver::Version::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn ranges() {
        let r = VersionRange::parse(">=1.32.0 <1.35.0").unwrap();
        assert!(r.matches(&v("1.32.0")));
        assert!(r.matches(&v("1.34.9")));
        assert!(!r.matches(&v("1.35.0")));
        assert!(!r.matches(&v("1.31.9")));
        assert!(
            VersionRange::parse(">=1.32.0")
                .unwrap()
                .matches(&v("1.35.0-alpha.1"))
        );
        assert!(
            !VersionRange::parse("<1.16.0-alpha.1")
                .unwrap()
                .matches(&v("1.16.0"))
        );
        let or = VersionRange::parse("<1.2.0 || >=2.0.0").unwrap();
        assert!(or.matches(&v("1.1.0")) && or.matches(&v("2.1.0")) && !or.matches(&v("1.5.0")));
        assert!(VersionRange::parse(">=1.x").is_err());
    }

    const CHANNEL: &str = r#"
spec:
  images:
  - name: a/old
    providerID: aws
    architectureID: amd64
    kubernetesVersion: ">=1.27.0 <1.32.0"
  - name: a/new-amd64
    providerID: aws
    architectureID: amd64
    kubernetesVersion: ">=1.32.0"
  - name: a/new-arm64
    providerID: aws
    architectureID: arm64
    kubernetesVersion: ">=1.32.0"
  - name: g/any
    providerID: gce
  futureField: ignored
"#;

    #[test]
    fn selects_images_by_provider_architecture_and_version() {
        let c = Channel::parse(CHANNEL).unwrap();
        let find = |p, ver, a| c.find_image(p, &v(ver), a).map(|i| i.name.as_str());
        assert_eq!(find("aws", "1.30.2", Architecture::Amd64), Some("a/old"));
        assert_eq!(
            find("aws", "1.34.0", Architecture::Amd64),
            Some("a/new-amd64")
        );
        assert_eq!(
            find("aws", "1.34.0", Architecture::Arm64),
            Some("a/new-arm64")
        );
        assert_eq!(find("aws", "1.26.0", Architecture::Amd64), None);
        assert_eq!(find("gce", "1.34.0", Architecture::Arm64), Some("g/any"));
        assert_eq!(find("azure", "1.34.0", Architecture::Amd64), None);
    }

    /// An excerpt of kOps' channels/stable, with entries this crate must not trip on.
    const KOPS_VERSIONS: &str = r#"
apiVersion: kops.k8s.io/v1alpha2
kind: Channel
metadata:
  name: stable
spec:
  kubernetesVersions:
  - range: ">=1.35.0"
    recommendedVersion: 1.35.7
    requiredVersion: 1.35.0
  - range: ">=1.34.0"
    recommendedVersion: 1.34.10
    requiredVersion: 1.34.0
  kopsVersions:
  - range: ">=1.36.0-alpha.1"
    recommendedVersion: "1.36.0-beta.1"
    #requiredVersion: 1.36.0
    kubernetesVersion: 1.36.3
  - range: ">=1.35.0-alpha.1"
    recommendedVersion: "1.35.1"
    kubernetesVersion: 1.35.7
  - range: "not a range"
    kubernetesVersion: 9.9.9
  - range: ">=1.34.0-alpha.1"
    recommendedVersion: "1.35.1"
    requiredVersion: 1.34.0
    kubernetesVersion: v1.34.10
    futureField: ignored
  - range: ">=1.33.0-alpha.1"
    recommendedVersion: "1.35.1"
  - range: ">=1.32.0-alpha.1"
    kubernetesVersion: not-a-version
  - range: ""
    kubernetesVersion: 1.31.14
"#;

    #[test]
    fn parses_kops_versions() {
        let c = Channel::parse(KOPS_VERSIONS).unwrap();
        assert_eq!(c.spec.kops_versions.len(), 7);
        assert_eq!(
            c.spec.kops_versions[3],
            KopsVersionSpec {
                range: ">=1.34.0-alpha.1".into(),
                recommended_version: Some("1.35.1".into()),
                required_version: Some("1.34.0".into()),
                kubernetes_version: Some("v1.34.10".into()),
            }
        );
        assert_eq!(c.spec.kops_versions[4].kubernetes_version, None);
        // What parsed before still does.
        assert_eq!(c.spec.kubernetes_versions.len(), 2);
        assert_eq!(
            c.spec.kubernetes_versions[1].recommended_version.as_deref(),
            Some("1.34.10")
        );
        assert_eq!(
            Channel::parse(CHANNEL).unwrap().spec.kops_versions,
            Vec::new()
        );
    }

    #[test]
    fn finds_the_first_kops_versions_entry_holding_the_release() {
        let c = Channel::parse(KOPS_VERSIONS).unwrap();
        let k8s = |kops: &str| {
            c.recommended_kubernetes_version(&v(kops))
                .map(|k| k.to_string())
        };
        let range = |kops: &str| c.kops_version_spec(&v(kops)).map(|k| k.range.as_str());
        assert_eq!(k8s("1.36.1"), Some("1.36.3".into()));
        assert_eq!(k8s("1.36.0-alpha.1"), Some("1.36.3".into()));
        assert_eq!(k8s("1.35.2"), Some("1.35.7".into()));
        // 1.35.0-alpha.0 sorts before 1.35.0-alpha.1: the 1.34 entry holds it, the
        // entry with a bad range between them is skipped.
        assert_eq!(range("1.35.0-alpha.0"), Some(">=1.34.0-alpha.1"));
        assert_eq!(k8s("1.34.0-beta.1"), Some("1.34.10".into()));
        // The entry holding 1.33 names no Kubernetes version, 1.32's none that parses:
        // no answer, not the next entry's.
        assert_eq!(range("1.33.4"), Some(">=1.33.0-alpha.1"));
        assert_eq!(k8s("1.33.4"), None);
        assert_eq!(k8s("1.32.0"), None);
        // An empty range holds every version.
        assert_eq!(range("1.20.0"), Some(""));
        assert_eq!(k8s("1.20.0"), Some("1.31.14".into()));
        assert_eq!(
            Channel::parse(CHANNEL)
                .unwrap()
                .recommended_kubernetes_version(&v("1.34.0")),
            None
        );
    }

    #[test]
    fn kubernetes_versions_entries_without_a_range_hold_every_version() {
        let c = Channel::parse(
            "spec:\n  kubernetesVersions:\n  - range: \">=1.34.0\"\n    recommendedVersion: 1.34.10\n  - range: \"bad\"\n    recommendedVersion: 9.9.9\n  - recommendedVersion: 1.33.13\n",
        )
        .unwrap();
        let rec = |k: &str| {
            c.kubernetes_version_spec(&v(k))
                .and_then(|s| s.recommended_version.as_deref())
        };
        assert_eq!(rec("1.34.2"), Some("1.34.10"));
        assert_eq!(rec("1.30.0"), Some("1.33.13"));
    }

    #[test]
    fn rejects_bad_ranges_with_their_path() {
        let err = Channel::parse("spec:\n  images:\n  - name: x\n    providerID: aws\n    kubernetesVersion: \">=one\"\n").unwrap_err();
        assert!(
            err.to_string().contains("spec.images[0].kubernetesVersion"),
            "{err}"
        );
    }
}
