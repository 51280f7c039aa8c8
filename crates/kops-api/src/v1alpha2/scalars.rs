//! Scalar and Kubernetes core types that kOps' v1alpha2 schema borrows.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A Go duration as written on the wire (`"5m0s"`, `"90s"`), kept as text.
pub type Duration = String;

/// An RFC 3339 timestamp as written on the wire, kept as text.
pub type Time = String;

/// Pod affinity rules (Kubernetes `core/v1.Affinity`), kept as an untyped tree.
///
/// The Kubernetes affinity schema is large and kOps only passes it through to
/// add-on manifests; it is stored losslessly rather than typed.
pub type Affinity = serde_json::Value;

/// A Kubernetes resource quantity (`100m`, `128Mi`, `2`), kept as text.
///
/// Accepts a string or a number on input and always writes a string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Quantity(pub String);

impl Quantity {
    /// The quantity as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Quantity {
    fn from(s: &str) -> Self {
        Quantity(s.to_string())
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for Quantity {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

struct QuantityVisitor;

impl Visitor<'_> for QuantityVisitor {
    type Value = Quantity;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a resource quantity such as 100m or 128Mi")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Quantity, E> {
        Ok(Quantity(v.to_string()))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Quantity, E> {
        Ok(Quantity(v.to_string()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Quantity, E> {
        Ok(Quantity(v.to_string()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Quantity, E> {
        Ok(Quantity(v.to_string()))
    }
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(QuantityVisitor)
    }
}

/// An integer or a string (Kubernetes `intstr.IntOrString`), e.g. `1` or `"25%"`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IntOrString {
    /// An integer value.
    Int(i64),
    /// A string value, typically a percentage.
    String(String),
}

impl Serialize for IntOrString {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            IntOrString::Int(i) => s.serialize_i64(*i),
            IntOrString::String(v) => s.serialize_str(v),
        }
    }
}

struct IntOrStringVisitor;

impl Visitor<'_> for IntOrStringVisitor {
    type Value = IntOrString;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer or a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<IntOrString, E> {
        Ok(IntOrString::String(v.to_string()))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<IntOrString, E> {
        Ok(IntOrString::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<IntOrString, E> {
        i64::try_from(v)
            .map(IntOrString::Int)
            .map_err(|_| E::custom("integer out of range"))
    }
}

impl<'de> Deserialize<'de> for IntOrString {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(IntOrStringVisitor)
    }
}

/// A pod toleration (Kubernetes `core/v1.Toleration`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Toleration {
    /// Taint key the toleration applies to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// `Exists` or `Equal`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    /// Taint value to match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Taint effect to match (`NoSchedule`, `PreferNoSchedule`, `NoExecute`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<String>,
    /// How long a `NoExecute` taint is tolerated, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<i64>,
}

/// An environment variable (Kubernetes `core/v1.EnvVar`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CoreEnvVar {
    /// Variable name.
    #[serde(default)]
    pub name: String,
    /// Literal value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// A reference to a secret, config map or field, kept untyped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_from: Option<serde_json::Value>,
}

/// Kubernetes object metadata (`metav1.ObjectMeta`), the fields kOps objects use.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ObjectMeta {
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// Creation time (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<Time>,
    /// Grace period before deletion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_grace_period_seconds: Option<i64>,
    /// Deletion time (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<Time>,
    /// Finalizers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finalizers: Option<Vec<String>>,
    /// Prefix for a generated name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_name: Option<String>,
    /// Spec generation, bumped when the spec changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    /// Labels, e.g. `kops.k8s.io/cluster` on instance groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// Server-side apply bookkeeping, kept untyped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed_fields: Option<Vec<serde_json::Value>>,
    /// Object name; for a Cluster the cluster's DNS name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Namespace (unused by kOps objects, accepted for compatibility).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Owner references, kept untyped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_references: Option<Vec<serde_json::Value>>,
    /// Storage version marker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// Legacy self link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_link: Option<String>,
    /// Unique id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
}

impl ObjectMeta {
    /// Metadata with only a name.
    pub fn named(name: impl Into<String>) -> Self {
        ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        }
    }
}

/// A secret string (a gossip secret, a password). `Debug` prints
/// `<redacted>`; serialisation writes the value, as the manifest must hold it.
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}
