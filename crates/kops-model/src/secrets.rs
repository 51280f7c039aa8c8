//! kOps' secrets (`<configStore.secrets>/<name>`, JSON `{"Data":"<base64>"}`): the kinds
//! `kops create secret` still makes (`encryptionconfig`, `dockerconfig`,
//! `ciliumpassword`), and the hash of the encryption config that reaches the nodeup
//! configs.

use base64::Engine as _;
use sha2::{Digest, Sha256};

use crate::error::{Result, invalid};

/// The secret kinds `kops create secret` makes, and the name each is stored under.
pub const SECRET_KINDS: [(&str, &str); 3] = [
    ("encryptionconfig", "encryptionconfig"),
    ("dockerconfig", "dockerconfig"),
    ("ciliumpassword", "ciliumpassword"),
];

/// Where a secret lives under the cluster's config base.
pub fn secret_path(name: &str) -> String {
    format!("secrets/{name}")
}

/// A secret's stored bytes: kOps' JSON `{"Data":"<base64 of the value>"}`.
pub fn encode_secret(value: &[u8]) -> String {
    format!(
        "{{\"Data\":\"{}\"}}",
        base64::engine::general_purpose::STANDARD.encode(value)
    )
}

/// The value of a stored secret (`{"Data":"<base64>"}`); an error names `path`.
pub fn decode_secret(stored: &[u8], path: &str) -> Result<Vec<u8>> {
    #[derive(serde::Deserialize)]
    struct Stored {
        #[serde(rename = "Data")]
        data: Option<String>,
    }
    let s: Stored = serde_json::from_slice(stored)
        .map_err(|e| invalid(path, format!("not a kOps secret ({{\"Data\":...}}): {e}")))?;
    base64::engine::general_purpose::STANDARD
        .decode(s.data.unwrap_or_default().trim())
        .map_err(|e| invalid(path, format!("Data is not base64: {e}")))
}

/// `APIServerConfig.EncryptionConfigSecretHash` from the stored `encryptionconfig`
/// secret: `base64url(sha256(value))`, padded, as kOps computes it.
pub fn encryption_config_hash(stored: &[u8]) -> Result<String> {
    let value = decode_secret(stored, "secrets/encryptionconfig")?;
    Ok(base64::engine::general_purpose::URL_SAFE.encode(Sha256::digest(&value)))
}

/// Checks a secret's value for its kind as `kops create secret` does, and returns what
/// to store: an encryption config must be an `EncryptionConfiguration` YAML, a docker
/// config JSON, a Cilium password non-empty. Errors name the kind, never the value.
pub fn validate_secret(kind: &str, value: &[u8]) -> Result<()> {
    let text =
        std::str::from_utf8(value).map_err(|_| invalid(kind, "the secret must be UTF-8 text"))?;
    match kind {
        "encryptionconfig" => {
            let v = kops_api::yaml::from_str(text).map_err(|_| {
                invalid(kind, "not valid YAML (expected an EncryptionConfiguration)")
            })?;
            if v.get("kind").and_then(|k| k.as_str()) != Some("EncryptionConfiguration") {
                return Err(invalid(kind, "kind must be EncryptionConfiguration"));
            }
        }
        "dockerconfig" => {
            serde_json::from_str::<serde_json::Value>(text)
                .map_err(|_| invalid(kind, "not valid JSON (expected a docker config.json)"))?;
        }
        "ciliumpassword" => {
            if text.trim().is_empty() {
                return Err(invalid(kind, "the password is empty"));
            }
        }
        other => {
            return Err(invalid(
                other,
                "unknown secret kind (encryptionconfig, dockerconfig, ciliumpassword)",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_round_trip_and_hash() {
        let stored = encode_secret(b"hello");
        assert_eq!(stored, r#"{"Data":"aGVsbG8="}"#);
        assert_eq!(decode_secret(stored.as_bytes(), "x").unwrap(), b"hello");
        // sha256("hello") in URL-safe base64.
        assert_eq!(
            encryption_config_hash(stored.as_bytes()).unwrap(),
            "LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ="
        );
        assert!(validate_secret("ciliumpassword", b" ").is_err());
        let err = validate_secret("encryptionconfig", b"kind: Other\n").unwrap_err();
        assert!(!err.to_string().contains("Other"));
    }
}
