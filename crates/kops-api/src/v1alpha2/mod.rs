//! The `kops.k8s.io/v1alpha2` wire types: what users write and what the state
//! store holds.
//!
//! The layout is kOps' v1alpha2 schema, field for field: camelCase names on the
//! wire, every field optional (what the user omitted stays omitted when the
//! object is written back), and every struct rejects fields it does not know.
//! The component structs (kubelet, kube-apiserver, networking plug-ins, ...)
//! are generated from the schema by `tools/gen_v1alpha2.py`; the top-level
//! objects are written here.
//!
//! Meaning of the fields: see kOps' cluster and instance-group reference. The
//! internal (hub) layout is in [`crate::internal`].

mod generated;
mod scalars;

use serde::{Deserialize, Serialize};

pub use generated::*;
pub use scalars::{
    Affinity, CoreEnvVar, Duration, IntOrString, ObjectMeta, Quantity, Secret, Time, Toleration,
};

/// The API group and version of these types.
pub const API_VERSION: &str = "kops.k8s.io/v1alpha2";

/// The legacy spelling of [`API_VERSION`], still accepted on input.
pub const LEGACY_API_VERSION: &str = "kops/v1alpha2";

fn default_api_version() -> String {
    API_VERSION.to_string()
}

/// A top-level object decoded straight into a box.
///
/// Decoding goes through a private twin whose `spec` is boxed, so serde's
/// generic layers (and the YAML deserializer's) carry a pointer rather than a
/// kilobytes-large value: the manifest reader uses this to parse a cluster in
/// a few hundred KiB of stack in debug builds.
pub(crate) struct Boxed<T>(pub(crate) Box<T>);

macro_rules! top_level {
    ($(#[$doc:meta])* $name:ident, $wire:ident = $wire_name:literal, $kind:literal, $spec:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(from = $wire_name)]
        pub struct $name {
            /// `kops.k8s.io/v1alpha2`.
            #[serde(rename = "apiVersion", default = "default_api_version")]
            pub api_version: String,
            #[doc = concat!("`", $kind, "`.")]
            pub kind: String,
            /// Name, labels, annotations, creation time.
            #[serde(default)]
            pub metadata: ObjectMeta,
            /// The specification.
            #[serde(default)]
            pub spec: $spec,
        }

        impl $name {
            /// The `kind` of this object on the wire.
            pub const KIND: &'static str = $kind;

            /// An object with this name and an empty spec.
            pub fn new(name: impl Into<String>) -> Self {
                Self {
                    metadata: ObjectMeta::named(name),
                    ..Self::default()
                }
            }

            /// The object's name, or `""` when it has none.
            pub fn name(&self) -> &str {
                self.metadata.name.as_deref().unwrap_or("")
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self {
                    api_version: API_VERSION.to_string(),
                    kind: $kind.to_string(),
                    metadata: ObjectMeta::default(),
                    spec: <$spec>::default(),
                }
            }
        }

        /// Decoding form of the object: `spec` boxed (see [`Boxed`]).
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct $wire {
            #[serde(rename = "apiVersion", default = "default_api_version")]
            api_version: String,
            kind: String,
            #[serde(default)]
            metadata: ObjectMeta,
            #[serde(default)]
            spec: Box<$spec>,
        }

        impl From<$wire> for $name {
            fn from(w: $wire) -> Self {
                Self {
                    api_version: w.api_version,
                    kind: w.kind,
                    metadata: w.metadata,
                    spec: *w.spec,
                }
            }
        }

        impl<'de> Deserialize<'de> for Boxed<$name> {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $wire::deserialize(d).map(|w| Boxed(Box::new($name::from(w))))
            }
        }
    };
}

top_level!(
    /// A kOps cluster (`kind: Cluster`).
    Cluster,
    ClusterWire = "ClusterWire",
    "Cluster",
    ClusterSpec
);
top_level!(
    /// A group of identically configured machines (`kind: InstanceGroup`).
    InstanceGroup,
    InstanceGroupWire = "InstanceGroupWire",
    "InstanceGroup",
    InstanceGroupSpec
);
top_level!(
    /// An SSH public key for the cluster's admin user (`kind: SSHCredential`).
    SshCredential,
    SshCredentialWire = "SshCredentialWire",
    "SSHCredential",
    SSHCredentialSpec
);

/// A `rootVolume` block inside a v1alpha2 instance group.
///
/// kOps' v1alpha2 schema has no such field (it has `rootVolumeSize`,
/// `rootVolumeType`, ...) and kOps silently drops it when loading. It is
/// accepted here so such manifests load, kept when written back, and ignored
/// by conversion exactly as kOps ignores it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[non_exhaustive]
pub struct IgnoredRootVolume {
    /// Size in GB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i32>,
    /// Volume type.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Provisioned IOPS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops: Option<i32>,
    /// Provisioned IOPS (alternative spelling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_iops: Option<i32>,
    /// Throughput in MB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<i32>,
    /// Throughput in MB/s (alternative spelling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_throughput: Option<i32>,
    /// Encrypt the volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption: Option<bool>,
    /// Key used to encrypt the volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption_key: Option<String>,
    /// EBS optimisation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimization: Option<bool>,
}

/// A `serviceOIDCProvider` block inside a v1alpha2 cluster spec.
///
/// Not part of kOps' v1alpha2 schema; kOps drops it when loading. Accepted,
/// kept when written back, ignored by conversion.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct IgnoredServiceOidcProvider {
    /// Issuer URL.
    #[serde(rename = "issuerURL", default, skip_serializing_if = "Option::is_none")]
    pub issuer_url: Option<String>,
    /// CA thumbprints of the issuer.
    #[serde(
        rename = "issuerCAThumbprints",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub issuer_ca_thumbprints: Option<Vec<String>>,
}
