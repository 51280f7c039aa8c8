//! Channels: kOps' published lists of images and Kubernetes versions.
//!
//! A channel file is YAML (`spec.images`, `spec.kubernetesVersions`,
//! `spec.cluster`, ...). The caller reads the file and passes its text to
//! [`Channel::parse`]; this crate does no I/O. Fields this crate does not use
//! are ignored, so newer channel files still load.
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
pub struct Channel {
    /// The channel's contents.
    #[serde(default)]
    pub spec: ChannelSpec,
}

/// The parts of a channel this crate uses.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct ChannelSpec {
    /// Machine images, in order of preference.
    #[serde(default)]
    pub images: Vec<ChannelImage>,
    /// Recommended and required Kubernetes versions per range.
    #[serde(default, rename = "kubernetesVersions")]
    pub kubernetes_versions: Vec<KubernetesVersionSpec>,
}

/// One image entry of a channel.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
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

    /// The entry of `spec.kubernetesVersions` whose range matches `version`.
    pub fn kubernetes_version_spec(
        &self,
        version: &semver::Version,
    ) -> Option<&KubernetesVersionSpec> {
        self.spec
            .kubernetes_versions
            .iter()
            .find(|k| VersionRange::parse(&k.range).is_ok_and(|r| r.matches(version)))
    }
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

    #[test]
    fn rejects_bad_ranges_with_their_path() {
        let err = Channel::parse("spec:\n  images:\n  - name: x\n    providerID: aws\n    kubernetesVersion: \">=one\"\n").unwrap_err();
        assert!(
            err.to_string().contains("spec.images[0].kubernetesVersion"),
            "{err}"
        );
    }
}
