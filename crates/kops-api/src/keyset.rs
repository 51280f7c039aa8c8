//! kOps' `Keyset` (`kops.k8s.io/v1alpha2`), as stored at
//! `<cluster>/pki/private/<name>/keyset.yaml`.
//!
//! Key material is kept as bytes (usually PEM) and written base64-encoded,
//! as kOps does. Private material never appears in `Debug` output.
//! [`Keyset::to_yaml`] writes kOps' bytes; [`Keyset::from_yaml`] reads what
//! kOps wrote.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::v1alpha2::ObjectMeta;
use crate::{Error, Result};

/// `kind: Keyset`.
pub const KEYSET_KIND: &str = "Keyset";

/// A set of keypairs (or secret tokens) of one purpose, supporting rotation.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Keyset {
    /// `kops.k8s.io/v1alpha2`.
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// `Keyset`.
    pub kind: String,
    /// Name (the keyset's id, e.g. `kubernetes-ca`) and creation time.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The keys.
    #[serde(default)]
    pub spec: KeysetSpec,
}

impl Keyset {
    /// An empty keyset called `name` of type `type_`.
    pub fn new(name: impl Into<String>, type_: KeysetType) -> Self {
        Keyset {
            api_version: crate::v1alpha2::API_VERSION.to_string(),
            kind: KEYSET_KIND.to_string(),
            metadata: ObjectMeta::named(name),
            spec: KeysetSpec {
                type_: Some(type_),
                ..Default::default()
            },
        }
    }

    /// The keyset's name, or `""`.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or("")
    }

    /// The primary key, if `primaryId` names one of the keys.
    pub fn primary(&self) -> Option<&KeysetItem> {
        let id = self.spec.primary_id.as_deref()?;
        self.item(id)
    }

    /// The key with id `id`.
    pub fn item(&self, id: &str) -> Option<&KeysetItem> {
        self.spec.keys.iter().find(|k| k.id.as_deref() == Some(id))
    }

    /// The key with id `id`, to change it.
    pub fn item_mut(&mut self, id: &str) -> Option<&mut KeysetItem> {
        self.spec
            .keys
            .iter_mut()
            .find(|k| k.id.as_deref() == Some(id))
    }

    /// Sorts the keys as kOps stores them: oldest id first ([`id_older`]).
    pub fn sort_keys(&mut self) {
        self.spec.keys.sort_by(|a, b| {
            let (a, b) = (a.id.as_deref().unwrap_or(""), b.id.as_deref().unwrap_or(""));
            if id_older(a, b) {
                std::cmp::Ordering::Less
            } else if id_older(b, a) {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        });
    }

    /// The keyset as kOps writes `keyset.yaml` (keys sorted oldest first).
    pub fn to_yaml(&self) -> Result<String> {
        let mut sorted = self.clone();
        sorted.sort_keys();
        crate::yaml::to_string(&sorted)
    }

    /// Reads a `keyset.yaml` as kOps wrote it; `file` names the input in errors.
    pub fn from_yaml(text: &str, file: &str) -> Result<Keyset> {
        let value = crate::yaml::from_str(text).map_err(|e| match e {
            Error::Parse { message, .. } => Error::Parse {
                file: file.to_string(),
                document: 1,
                path: String::new(),
                message,
            },
            other => other,
        })?;
        serde_path_to_error::deserialize(value).map_err(|e| Error::Parse {
            file: file.to_string(),
            document: 1,
            path: e.path().to_string(),
            message: e.inner().to_string(),
        })
    }
}

/// kOps' `KeysetItemIdOlder`: whether id `a` is older than id `b`. Decimal
/// ids (as `big.Int` reads them) compare as numbers; non-numeric ids compare
/// as text and count as older than any decimal id.
pub fn id_older(a: &str, b: &str) -> bool {
    match (decimal(a), decimal(b)) {
        (Some(x), Some(y)) => decimal_cmp(&x, &y).is_lt(),
        (Some(_), None) => false,
        (None, Some(_)) => true,
        (None, None) => a < b,
    }
}

/// A decimal id: (negative, digits without leading zeros).
fn decimal(s: &str) -> Option<(bool, &str)> {
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = digits.trim_start_matches('0');
    Some((neg && !digits.is_empty(), digits))
}

fn decimal_cmp(a: &(bool, &str), b: &(bool, &str)) -> std::cmp::Ordering {
    let magnitude = a.1.len().cmp(&b.1.len()).then_with(|| a.1.cmp(b.1));
    match (a.0, b.0) {
        (false, false) => magnitude,
        (true, true) => magnitude.reverse(),
        (true, false) => std::cmp::Ordering::Less,
        (false, true) => std::cmp::Ordering::Greater,
    }
}

impl fmt::Debug for Keyset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keyset")
            .field("name", &self.metadata.name)
            .field("spec", &self.spec)
            .finish()
    }
}

/// What a keyset holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum KeysetType {
    /// PKI keypairs (certificate + private key).
    Keypair,
    /// Secret material.
    Secret,
}

/// The keys of a keyset.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
// Fields in alphabetical order of their wire names, the order kOps writes.
#[non_exhaustive]
pub struct KeysetSpec {
    /// The keys.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<KeysetItem>,
    /// Id of the key used for new signatures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_id: Option<String>,
    /// The key type.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<KeysetType>,
}

/// One key of a keyset.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[non_exhaustive]
pub struct KeysetItem {
    /// When this key was distrusted (RFC 3339); absent while trusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distrust_timestamp: Option<String>,
    /// Unique id within the keyset (kOps uses the certificate serial).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Private material, e.g. a PEM private key.
    #[serde(default, with = "b64_opt", skip_serializing_if = "Option::is_none")]
    pub private_material: Option<Vec<u8>>,
    /// Public material, e.g. a PEM certificate.
    #[serde(default, with = "b64_opt", skip_serializing_if = "Option::is_none")]
    pub public_material: Option<Vec<u8>>,
}

impl fmt::Debug for KeysetItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeysetItem")
            .field("id", &self.id)
            .field("distrust_timestamp", &self.distrust_timestamp)
            .field(
                "public_material",
                &self
                    .public_material
                    .as_ref()
                    .map(|p| String::from_utf8_lossy(p)),
            )
            .field(
                "private_material",
                &self.private_material.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

mod b64_opt {
    use super::*;

    pub(super) fn serialize<S: Serializer>(v: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(b) => s.serialize_str(&B64.encode(b)),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Vec<u8>>, D::Error> {
        let s: Option<String> = Option::deserialize(d)?;
        s.map(|s| B64.decode(s.trim()).map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyset_yaml_is_written_as_kops_writes_it() {
        let mut ks = Keyset::new("kubernetes-ca", KeysetType::Keypair);
        ks.spec.primary_id = Some("1234567890123".into());
        ks.spec.keys.push(KeysetItem {
            id: Some("1234567890123".into()),
            public_material: Some(b"CERT\n".to_vec()),
            private_material: Some(b"KEY\n".to_vec()),
            ..Default::default()
        });
        let text = ks.to_yaml().unwrap();
        // kOps (sigs.k8s.io/yaml): sorted keys, numeric-looking ids quoted,
        // material base64, lists not indented.
        let want = "apiVersion: kops.k8s.io/v1alpha2\nkind: Keyset\nmetadata:\n  name: kubernetes-ca\nspec:\n  keys:\n  - id: \"1234567890123\"\n    privateMaterial: S0VZCg==\n    publicMaterial: Q0VSVAo=\n  primaryId: \"1234567890123\"\n  type: Keypair\n";
        assert_eq!(text, want);
        let back = Keyset::from_yaml(&text, "keyset.yaml").unwrap();
        assert_eq!(back, ks);
        assert!(
            !format!("{ks:?}").contains("KEY"),
            "Debug shows private material"
        );
    }

    #[test]
    fn ids_sort_as_kops_sorts_them() {
        assert!(id_older("2", "10"));
        assert!(id_older(
            "6982820025135291416230495506",
            "6982820025135291416230495507"
        ));
        assert!(!id_older("10", "2"));
        assert!(!id_older("10", "abc"));
        assert!(id_older("abc", "abd"));
        assert!(id_older("abc", "10"));
        assert!(id_older("-1", "0"));
        assert!(!id_older("007", "7"));
        let mut ks = Keyset::new("x", KeysetType::Keypair);
        for id in ["10", "b", "2", "a", "1"] {
            ks.spec.keys.push(KeysetItem {
                id: Some(id.into()),
                ..Default::default()
            });
        }
        ks.sort_keys();
        let ids: Vec<_> = ks.spec.keys.iter().map(|k| k.id.clone().unwrap()).collect();
        assert_eq!(ids, ["a", "b", "1", "2", "10"]);
    }

    #[test]
    fn reading_names_the_file_and_field() {
        let err = Keyset::from_yaml("apiVersion: kops.k8s.io/v1alpha2\nkind: Keyset\nspec:\n  keys:\n  - id: \"1\"\n    publicMaterial: \"%%%\"\n", "pki/private/x/keyset.yaml").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with("pki/private/x/keyset.yaml: document 1: spec.keys[0].publicMaterial"),
            "{msg}"
        );
    }
}
