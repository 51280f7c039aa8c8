//! The IRSA service-account issuer documents kOps publishes in the discovery
//! store: `.well-known/openid-configuration` and `openid/v1/jwks`
//! (`pkg/model/issuerdiscovery.go`), both written as Go's
//! `json.MarshalIndent(v, "", "")` writes them.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64URL;
use kops_api::keyset::Keyset;
use sha2::{Digest, Sha256};

use super::{Certificate, pki_error};
use crate::Result;

/// A JSON value in Go struct field order.
enum J {
    Str(String),
    List(Vec<J>),
    Null,
    Obj(Vec<(&'static str, J)>),
}

/// Go's string escaping (HTML-safe: `<`, `>`, `&`, U+2028, U+2029 escaped).
fn go_json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `json.MarshalIndent(v, "", "")`: one element per line, no indentation.
fn write(v: &J, out: &mut String) {
    match v {
        J::Str(s) => go_json_string(s, out),
        J::Null => out.push_str("null"),
        J::List(items) if items.is_empty() => out.push_str("[]"),
        J::List(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                write(item, out);
            }
            out.push_str("\n]");
        }
        J::Obj(fields) if fields.is_empty() => out.push_str("{}"),
        J::Obj(fields) => {
            out.push_str("{\n");
            for (i, (k, v)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                go_json_string(k, out);
                out.push_str(": ");
                write(v, out);
            }
            out.push_str("\n}");
        }
    }
}

fn strings(items: &[&str]) -> J {
    J::List(items.iter().map(|s| J::Str(s.to_string())).collect())
}

/// The OpenID discovery document for `issuer_url`
/// (`spec.kubeAPIServer.serviceAccountIssuer`), published at
/// `<discoveryStore>/.well-known/openid-configuration`.
pub fn oidc_discovery_json(issuer_url: &str) -> String {
    let doc = J::Obj(vec![
        ("issuer", J::Str(issuer_url.to_string())),
        ("jwks_uri", J::Str(format!("{issuer_url}/openid/v1/jwks"))),
        (
            "authorization_endpoint",
            J::Str("urn:kubernetes:programmatic_authorization".into()),
        ),
        ("response_types_supported", strings(&["id_token"])),
        ("subject_types_supported", strings(&["public"])),
        ("id_token_signing_alg_values_supported", strings(&["RS256"])),
        ("claims_supported", strings(&["sub", "iss"])),
    ]);
    let mut out = String::new();
    write(&doc, &mut out);
    out
}

/// `keys.json` (`<discoveryStore>/openid/v1/jwks`): one RS256 signing JWK per
/// trusted `service-account` certificate whose CN is `service-account`, its
/// key id the unpadded base64url SHA-256 of the PKIX public key, sorted by
/// key id, so that IRSA (AWS STS) can verify service-account tokens.
pub fn jwks_json(service_account: &Keyset) -> Result<String> {
    let mut keys: Vec<(String, J)> = Vec::new();
    for item in &service_account.spec.keys {
        if item.distrust_timestamp.is_some() {
            continue;
        }
        let Some(pem) = &item.public_material else {
            continue;
        };
        let cert = Certificate::from_pem(pem).map_err(|e| {
            pki_error(
                service_account.name(),
                format!("item {}: {e}", item.id.as_deref().unwrap_or("")),
            )
        })?;
        if cert.common_name.as_deref() != Some("service-account") {
            continue;
        }
        let (n, e) = cert.rsa_public_key().ok_or_else(|| {
            pki_error(
                service_account.name(),
                "service-account key is not an RSA key",
            )
        })?;
        let kid = B64URL.encode(Sha256::digest(&cert.public_key_der));
        let jwk = J::Obj(vec![
            ("use", J::Str("sig".into())),
            ("kty", J::Str("RSA".into())),
            ("kid", J::Str(kid.clone())),
            ("alg", J::Str("RS256".into())),
            ("n", J::Str(B64URL.encode(n))),
            ("e", J::Str(B64URL.encode(e))),
        ]);
        keys.push((kid, jwk));
    }
    keys.sort_by(|a, b| a.0.cmp(&b.0));
    let list = if keys.is_empty() {
        J::Null
    } else {
        J::List(keys.into_iter().map(|(_, j)| j).collect())
    };
    let mut out = String::new();
    write(&J::Obj(vec![("keys", list)]), &mut out);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_document_is_go_marshal_indent() {
        let d = oidc_discovery_json("https://x.example.com/a&b");
        assert!(d.starts_with("{\n\"issuer\": \"https://x.example.com/a\\u0026b\",\n\"jwks_uri\""));
        assert!(d.ends_with("\"claims_supported\": [\n\"sub\",\n\"iss\"\n]\n}"));
    }
}
