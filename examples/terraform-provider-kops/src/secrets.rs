//! `kops_cluster`'s `secrets` block, as terraform-provider-kops has it: the cluster's CA
//! (`cluster_ca_cert`, `cluster_ca_key`), stored as `kops create keypair kubernetes-ca
//! --cert --key --primary` stores one, and the docker config the nodes pull images with
//! (`docker_config`), stored as `kops create secret dockerconfig` stores it.
//!
//! Every value is sensitive: Terraform shows none of them in plans, and the checks here,
//! made at plan time before anything is written, name the attribute at fault and never
//! quote its value.
//!
//! The state holds what the configuration says. Removing `docker_config` deletes the
//! secret; removing the CA leaves the cluster's CA as it is (a cluster cannot go without
//! one), as terraform-provider-kops does.

use std::time::SystemTime;

use kops_model::api::keyset::{Keyset, KeysetType};
use kops_model::pki::{Certificate, PrivateKeyPem, add_item};
use kops_model::secrets::validate_secret;
use kops_model::statestore::keyset::Secret;
use kops_model::statestore::{Error as StoreError, PutOptions};
use rcgen::PublicKeyData as _;

use crate::diag::{Diag, Diags};
use crate::schema::{Attr, Block, Mode, Nested, Step, Ty};
use crate::session::Session;
use crate::value::{NULL, Value};

/// The keyset of the cluster's CA.
const CA_KEYSET: &str = "kubernetes-ca";
/// The secret holding the docker config.
const DOCKER_CONFIG: &str = "dockerconfig";

/// The `secrets` block.
pub fn block() -> Nested {
    let secret = |name: &str, description: &str| {
        Attr::new(name, Ty::String, Mode::Optional, description).sensitive()
    };
    Nested {
        name: "secrets".into(),
        max_items: 1,
        block: Block {
            attrs: vec![
                secret(
                    "docker_config",
                    "A docker config.json: nodes made after it is stored pull images with \
                     it (kops create secret dockerconfig).",
                ),
                secret(
                    "cluster_ca_cert",
                    "The cluster's CA certificate (PEM), with cluster_ca_key: the primary \
                     keypair of kubernetes-ca (kops create keypair ca --cert --key).",
                ),
                secret(
                    "cluster_ca_key",
                    "The CA's private key (PEM, RSA), with cluster_ca_cert.",
                ),
            ],
            blocks: Vec::new(),
            description: "The cluster's secrets, written to the state store.".into(),
        },
    }
}

/// The secrets of a `kops_cluster` value.
#[derive(PartialEq, Eq, Default)]
struct Secrets {
    docker_config: Option<String>,
    ca: Option<(String, String)>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secrets")
            .field(
                "docker_config",
                &self.docker_config.as_ref().map(|_| "<redacted>"),
            )
            .field("ca", &self.ca.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

fn path(name: &str) -> Vec<Step> {
    vec![
        Step::Attr("secrets".into()),
        Step::Index(0),
        Step::Attr(name.into()),
    ]
}

/// The `secrets` object of a value (null when the block is absent).
fn object(v: &Value) -> &Value {
    v.get("secrets").items().first().unwrap_or(&NULL)
}

fn text(v: &Value, name: &str) -> Option<String> {
    object(v)
        .get(name)
        .as_str()
        .filter(|s| !s.trim().is_empty())
        .map(str::to_string)
}

/// Reads and checks the secrets of `v`: a docker config must be JSON, the CA a
/// certificate with the RSA key it was made for, both given or neither.
fn read(v: &Value) -> Result<Secrets, Diags> {
    let mut diags = Vec::new();
    let docker_config = text(v, "docker_config");
    if let Some(config) = &docker_config
        && validate_secret(DOCKER_CONFIG, config.as_bytes()).is_err()
    {
        diags.push(Diag::at(
            path("docker_config"),
            "Invalid docker config",
            "not valid JSON (expected a docker config.json)",
        ));
    }
    let ca = match (text(v, "cluster_ca_cert"), text(v, "cluster_ca_key")) {
        (None, None) => None,
        (Some(_), None) => {
            diags.push(Diag::at(
                path("cluster_ca_key"),
                "Missing CA key",
                "cluster_ca_cert is set: the CA needs its private key too",
            ));
            None
        }
        (None, Some(_)) => {
            diags.push(Diag::at(
                path("cluster_ca_cert"),
                "Missing CA certificate",
                "cluster_ca_key is set: the CA needs its certificate too",
            ));
            None
        }
        (Some(cert), Some(key)) => match check_ca(&cert, &key) {
            Ok(()) => Some((cert, key)),
            Err(d) => {
                diags.push(d);
                None
            }
        },
    };
    match diags.is_empty() {
        true => Ok(Secrets { docker_config, ca }),
        false => Err(diags),
    }
}

/// Checks a CA certificate and its key (messages never quote either).
fn check_ca(cert: &str, key: &str) -> Result<(), Diag> {
    let certificate = Certificate::from_pem(cert.as_bytes()).map_err(|_| {
        Diag::at(
            path("cluster_ca_cert"),
            "Invalid CA certificate",
            "not a PEM X.509 certificate",
        )
    })?;
    if !certificate.is_ca {
        return Err(Diag::at(
            path("cluster_ca_cert"),
            "Invalid CA certificate",
            "the certificate is not a CA (basicConstraints CA:TRUE)",
        ));
    }
    let bad_key = |message: &str| Diag::at(path("cluster_ca_key"), "Invalid CA key", message);
    PrivateKeyPem::new(key).map_err(|_| bad_key("not a PEM private key"))?;
    // The library signs with RSA (as kOps' CA keys are).
    let pair = rcgen::KeyPair::from_pem_and_sign_algo(key, &rcgen::PKCS_RSA_SHA256)
        .map_err(|_| bad_key("not an RSA private key the CA can sign with"))?;
    if pair.subject_public_key_info() != certificate.public_key_der {
        return Err(bad_key("the key is not the key of cluster_ca_cert"));
    }
    Ok(())
}

/// Checks the secrets of a planned value (nothing is checked while any is unknown).
pub fn check(v: &Value) -> Result<(), Diags> {
    if v.get("secrets").has_unknown() {
        return Ok(());
    }
    read(v).map(|_| ())
}

/// Whether the secrets differ between two values (`None`: not known yet).
pub fn changed(prior: &Value, proposed: &Value) -> Option<bool> {
    if proposed.get("secrets").has_unknown() {
        return None;
    }
    Some(object(prior) != object(proposed))
}

fn store_failed(at: &str, what: &str, e: &StoreError) -> Diags {
    vec![Diag::at(path(at), what, e.to_string())]
}

/// Writes what changed from `prior` to `planned` to cluster `name`'s state.
pub async fn write(
    session: &Session,
    name: &str,
    prior: &Value,
    planned: &Value,
) -> Result<(), Diags> {
    let before = match prior.is_null() {
        true => Secrets::default(),
        false => read(prior).unwrap_or_default(),
    };
    let after = read(planned)?;
    if before.docker_config != after.docker_config {
        write_docker_config(session, name, after.docker_config.as_deref()).await?;
    }
    if before.ca != after.ca
        && let Some((cert, key)) = &after.ca
    {
        write_ca(session, name, cert, key).await?;
    }
    Ok(())
}

/// Stores (or, with `None`, deletes) the docker config secret.
async fn write_docker_config(
    session: &Session,
    name: &str,
    config: Option<&str>,
) -> Result<(), Diags> {
    let registry = &session.registry;
    match registry.delete_secret(name, DOCKER_CONFIG).await {
        Ok(()) | Err(StoreError::NotFound { .. }) => {}
        Err(e) => {
            return Err(store_failed(
                "docker_config",
                "Replacing the docker config",
                &e,
            ));
        }
    }
    if let Some(config) = config {
        let secret = Secret {
            data: config.as_bytes().to_vec(),
        };
        registry
            .create_secret(name, DOCKER_CONFIG, &secret)
            .await
            .map_err(|e| store_failed("docker_config", "Storing the docker config", &e))?;
    }
    Ok(())
}

/// Makes the certificate and key the primary keypair of the cluster's CA keyset (made
/// when there is none yet); the keyset's other keypairs stay, as `kops create keypair`
/// leaves them. Nothing changes when it is the primary already.
async fn write_ca(session: &Session, name: &str, cert: &str, key: &str) -> Result<(), Diags> {
    let registry = &session.registry;
    let failed = |e: &StoreError| store_failed("cluster_ca_cert", "Storing the cluster's CA", e);
    let (mut keyset, options) = match registry.get_keyset(name, CA_KEYSET).await {
        Ok(k) => (k.value, PutOptions::update(k.version)),
        Err(StoreError::NotFound { .. }) => (
            Keyset::new(CA_KEYSET, KeysetType::Keypair),
            PutOptions::create(),
        ),
        Err(e) => return Err(failed(&e)),
    };
    let wanted = Certificate::from_pem(cert.as_bytes()).ok().map(|c| c.der);
    let current = keyset
        .primary()
        .and_then(|p| p.public_material.as_deref())
        .and_then(|pem| Certificate::from_pem(pem).ok())
        .map(|c| c.der);
    if wanted.is_some() && wanted == current {
        return Ok(());
    }
    let bad_key = |_| {
        vec![Diag::at(
            path("cluster_ca_key"),
            "Invalid CA key",
            "not a PEM private key",
        )]
    };
    let key = PrivateKeyPem::new(key).map_err(bad_key)?;
    add_item(&mut keyset, cert, Some(&key), true, SystemTime::now()).map_err(|e| {
        vec![Diag::at(
            path("cluster_ca_cert"),
            "Adding the CA to kubernetes-ca",
            e.to_string(),
        )]
    })?;
    registry
        .put_keyset(name, &keyset, options)
        .await
        .map_err(|e| failed(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn with(secrets: &[(&str, &str)]) -> Value {
        let object: BTreeMap<String, Value> = secrets
            .iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            .collect();
        let mut top = BTreeMap::new();
        top.insert("secrets".to_string(), Value::List(vec![Value::Map(object)]));
        Value::Map(top)
    }

    fn ca() -> (String, String) {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_RSA_SHA256).unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let cert = params.self_signed(&key).unwrap();
        (cert.pem(), key.serialize_pem())
    }

    #[test]
    fn bad_secrets_name_their_attribute_and_never_their_value() {
        let (cert, key) = ca();
        let (_, other_key) = ca();
        let attr = |d: &Diag| match d.path.as_deref() {
            Some([_, _, Step::Attr(name)]) => name.clone(),
            _ => String::new(),
        };
        // Not JSON.
        let diags = read(&with(&[("docker_config", "hunter2-not-json")])).unwrap_err();
        assert_eq!(attr(&diags[0]), "docker_config");
        assert!(!format!("{diags:?}").contains("hunter2"));
        // A key that is not the certificate's.
        let mismatched = with(&[("cluster_ca_cert", &cert), ("cluster_ca_key", &other_key)]);
        let diags = read(&mismatched).unwrap_err();
        assert_eq!(attr(&diags[0]), "cluster_ca_key");
        assert!(!format!("{diags:?}").contains("PRIVATE KEY"));
        // One without the other.
        let diags = read(&with(&[("cluster_ca_cert", &cert)])).unwrap_err();
        assert_eq!(attr(&diags[0]), "cluster_ca_key");
        // A matching pair and a JSON docker config pass.
        let good = with(&[
            ("cluster_ca_cert", &cert),
            ("cluster_ca_key", &key),
            ("docker_config", "{\"auths\":{}}"),
        ]);
        let secrets = read(&good).unwrap();
        assert_eq!(secrets.ca, Some((cert, key)));
        assert!(changed(&Value::Null, &good) == Some(true));
        assert!(changed(&good, &good) == Some(false));
    }
}
