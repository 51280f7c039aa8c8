//! kOps' `Keyset` (`kops.k8s.io/v1alpha2`), as stored at
//! `<cluster>/pki/private/<name>/keyset.yaml`, and the secret format of
//! `<cluster>/secrets/<name>`.
//!
//! Key material is kept as bytes (usually PEM) and written base64-encoded,
//! as kOps does. Private material never appears in `Debug` output.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use kops_api::v1alpha2::ObjectMeta;

/// `kind: Keyset`.
pub const KEYSET_KIND: &str = "Keyset";

/// A set of keypairs (or secret tokens) of one purpose, supporting rotation.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
            api_version: kops_api::v1alpha2::API_VERSION.to_string(),
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
        self.spec.keys.iter().find(|k| k.id.as_deref() == Some(id))
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

    pub fn serialize<S: Serializer>(v: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(b) => s.serialize_str(&B64.encode(b)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
        let s: Option<String> = Option::deserialize(d)?;
        s.map(|s| B64.decode(s.trim()).map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// A secret as kOps stores it: JSON `{"Data":"<base64>"}`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Secret {
    /// The secret bytes.
    #[serde(rename = "Data", with = "b64")]
    pub data: Vec<u8>,
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

mod b64 {
    use super::*;

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&B64.encode(v))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        // Go writes a nil byte slice as `null`.
        let s: Option<String> = Option::deserialize(d)?;
        B64.decode(s.unwrap_or_default().trim())
            .map_err(serde::de::Error::custom)
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
        let text = serde_saphyr::to_string(&ks).unwrap();
        // kOps (sigs.k8s.io/yaml): sorted keys, numeric-looking ids quoted,
        // material base64; only list indentation may differ.
        let want = "apiVersion: kops.k8s.io/v1alpha2\nkind: Keyset\nmetadata:\n  name: kubernetes-ca\nspec:\n  keys:\n  - id: \"1234567890123\"\n    privateMaterial: S0VZCg==\n    publicMaterial: Q0VSVAo=\n  primaryId: \"1234567890123\"\n  type: Keypair\n";
        let normalise = |s: &str| {
            s.replace("\n    - ", "\n  - ")
                .replace("\n      ", "\n    ")
        };
        assert_eq!(normalise(&text), want, "got:\n{text}");
        let back: Keyset = serde_saphyr::from_str(&text).unwrap();
        assert_eq!(back, ks);
        assert!(
            !format!("{ks:?}").contains("KEY"),
            "Debug shows private material"
        );
    }

    #[test]
    fn secret_json_matches_kops() {
        let s = Secret {
            data: b"hello".to_vec(),
        };
        assert_eq!(serde_json::to_string(&s).unwrap(), r#"{"Data":"aGVsbG8="}"#);
        let null: Secret = serde_json::from_str(r#"{"Data":null}"#).unwrap();
        assert!(null.data.is_empty());
        assert_eq!(format!("{s:?}"), "Secret(<redacted>)");
    }
}
