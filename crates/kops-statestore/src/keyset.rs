//! kOps' `Keyset` (re-exported from [`kops_api::keyset`]), as stored at
//! `<cluster>/pki/private/<name>/keyset.yaml`, and the secret format of
//! `<cluster>/secrets/<name>`.
//!
//! Key material is kept as bytes (usually PEM) and written base64-encoded,
//! as kOps does. Private material never appears in `Debug` output.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use kops_api::keyset::{KEYSET_KIND, Keyset, KeysetItem, KeysetSpec, KeysetType, id_older};

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

    pub(super) fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&B64.encode(v))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
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
