//! `kops export kubeconfig`: the cluster, user and context entries kOps writes, the
//! short-lived admin client certificate it mints, and merging into an existing file.

use std::time::{Duration, SystemTime};

use kops_api::keyset::Keyset;
use serde_json::{Value, json};

use crate::pki::{CertificateRequest, PrivateKeyPem, issue_certificate};
use crate::{Error, Result};

/// kOps' default lifetime of an admin credential (`--admin` without a value).
pub const DEFAULT_ADMIN_LIFETIME: Duration = Duration::from_secs(18 * 3600);

/// A client certificate for the cluster's API, signed by `kubernetes-ca`. Never stored in
/// the state store; `Debug` does not show the key.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AdminCredential {
    /// The certificate, PEM.
    pub certificate_pem: String,
    /// Its private key, PKCS#8 PEM.
    pub private_key: PrivateKeyPem,
    /// End of validity.
    pub not_after: SystemTime,
}

/// Mints an admin client certificate as kOps does for `--admin`: CN `kubecfg-<user>`, O
/// `system:masters`, client-auth usage, valid from `now` for `lifetime`, signed by the
/// primary key of `ca` (the `kubernetes-ca` keyset, which must hold its private key).
pub fn issue_admin_credential(
    ca: &Keyset,
    user: &str,
    lifetime: Duration,
    now: SystemTime,
) -> Result<AdminCredential> {
    if user.is_empty() {
        return Err(Error::Invalid {
            field: "user".into(),
            message: "must not be empty".into(),
        });
    }
    let request = CertificateRequest::client(format!("kubecfg-{user}"))
        .with_organization("system:masters")
        .with_lifetime(lifetime);
    let issued = issue_certificate(ca, "kubernetes-ca", &request, now)?;
    Ok(AdminCredential {
        certificate_pem: issued.certificate_pem,
        private_key: issued.private_key,
        not_after: issued.not_after,
    })
}

/// The names and addresses kOps' nodeup puts in the API server's serving certificate
/// (the `master` keypair, signed by `kubernetes-ca`): `kubernetes`, `kubernetes.default`,
/// `kubernetes.default.svc`, `kubernetes.default.svc.<clusterDNSDomain>`, the public name
/// when set, `api.internal.<cluster>`, `api.additionalSANs`, the first address of the
/// service range and `127.0.0.1`. The load balancer addresses nodeup adds at boot are not
/// known here. A client that checks the server against the cluster's CA can expect these.
pub fn api_server_certificate_names(cluster: &kops_api::internal::Cluster) -> Result<Vec<String>> {
    let spec = &cluster.spec;
    let domain = spec
        .cluster_dns_domain
        .as_deref()
        .unwrap_or("cluster.local");
    let mut names: Vec<String> = ["kubernetes", "kubernetes.default", "kubernetes.default.svc"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    names.push(format!("kubernetes.default.svc.{domain}"));
    names.extend(spec.api.public_name.clone());
    names.push(cluster.api_internal_name());
    names.extend(spec.api.additional_sans.iter().flatten().cloned());
    if let Some(range) = spec.networking.service_cluster_ip_range.as_deref() {
        let ip =
            kops_api::defaults::well_known_service_ip(range, 1).map_err(|e| Error::Invalid {
                field: "spec.networking.serviceClusterIPRange".into(),
                message: e.to_string(),
            })?;
        names.push(ip.to_string());
    }
    names.push("127.0.0.1".into());
    Ok(names)
}

/// The `ExecCredential` a kubectl credential plugin prints (`client.authentication.k8s.io`
/// `v1beta1` or `v1alpha1`), as kOps' `helpers kubectl-auth` does: `credential`'s
/// certificate and key as PEM, expiring five minutes before the certificate does, so
/// kubectl asks again in time. The text holds the private key: it is for kubectl only.
pub fn exec_credential(credential: &AdminCredential, api_version: &str) -> Result<String> {
    if !matches!(api_version, "v1beta1" | "v1alpha1") {
        return Err(Error::Invalid {
            field: "--api-version".into(),
            message: format!("{api_version:?} is not supported (v1beta1 or v1alpha1)"),
        });
    }
    let expires = credential
        .not_after
        .checked_sub(Duration::from_secs(300))
        .unwrap_or(credential.not_after);
    let doc = json!({
        "apiVersion": format!("client.authentication.k8s.io/{api_version}"),
        "kind": "ExecCredential",
        "status": {
            "clientCertificateData": credential.certificate_pem,
            "clientKeyData": credential.private_key.expose_pem(),
            "expirationTimestamp": crate::pki::rotation::rfc3339(expires),
        },
    });
    serde_json::to_string_pretty(&doc).map_err(|e| Error::Invalid {
        field: "ExecCredential".into(),
        message: e.to_string(),
    })
}

/// What one `export kubeconfig` writes for a cluster.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct KubeconfigEntry {
    /// The cluster name; the cluster, context and (admin) user entries are named after it.
    pub cluster: String,
    /// API server URL (`https://api.<cluster>`, or the internal name).
    pub server: String,
    /// The CA bundle (trusted `kubernetes-ca` certificates), PEM; `None` to leave it out.
    pub ca_pem: Option<String>,
    /// `tls-server-name` (kOps always sets the internal API name).
    pub tls_server_name: Option<String>,
    /// Credentials for the user entry named after the cluster.
    pub admin: Option<AdminCredential>,
    /// Point the context at this existing user instead.
    pub user: Option<String>,
    /// A user entry that runs this credential plugin (kOps' `--auth-plugin`): the command
    /// and its arguments.
    pub exec: Option<(String, Vec<String>)>,
}

impl KubeconfigEntry {
    /// The entry for `cluster` at `server`, with no CA and no credentials.
    pub fn new(cluster: impl Into<String>, server: impl Into<String>) -> Self {
        KubeconfigEntry {
            cluster: cluster.into(),
            server: server.into(),
            ca_pem: None,
            tls_server_name: None,
            admin: None,
            user: None,
            exec: None,
        }
    }

    /// A user entry running the credential plugin `command` with `args` (an
    /// `ExecCredential` of `client.authentication.k8s.io/v1beta1` on its output).
    pub fn with_exec(mut self, command: impl Into<String>, args: Vec<String>) -> Self {
        self.exec = Some((command.into(), args));
        self
    }

    /// Sets the CA bundle.
    pub fn with_ca_pem(mut self, pem: impl Into<String>) -> Self {
        self.ca_pem = Some(pem.into());
        self
    }

    /// Sets `tls-server-name`.
    pub fn with_tls_server_name(mut self, name: impl Into<String>) -> Self {
        self.tls_server_name = Some(name.into());
        self
    }

    /// Writes these admin credentials.
    pub fn with_admin(mut self, admin: AdminCredential) -> Self {
        self.admin = Some(admin);
        self
    }

    /// Uses an existing user.
    pub fn with_user(mut self, user: impl Into<String>) -> Self {
        self.user = Some(user.into());
        self
    }
}

/// Whether a kubeconfig must name the API load balancer's address rather than the API's
/// DNS name, as kOps' `BuildKubecfg` decides: the name cannot resolve outside the
/// cluster (a gossip name, or `topology.dns.type: None`), or it is in a private zone
/// while the load balancer is public (reached from outside the network).
pub fn server_from_load_balancer(cluster: &kops_api::internal::Cluster) -> bool {
    let private_dns = cluster.dns_type().eq_ignore_ascii_case("private");
    let internal_lb = cluster
        .spec
        .api
        .load_balancer
        .as_ref()
        .and_then(|lb| lb.type_.as_deref())
        == Some("Internal");
    cluster.is_gossip() || cluster.uses_none_dns() || private_dns && !internal_lb
}

/// kOps' API server names: `https://api.<cluster>` (or `spec.api.publicName`), and
/// `https://api.internal.<cluster>` for `--internal`.
pub fn api_server_url(cluster: &str, public_name: Option<&str>, internal: bool) -> String {
    if internal {
        format!("https://api.internal.{cluster}")
    } else {
        format!(
            "https://{}",
            public_name.unwrap_or(&format!("api.{cluster}"))
        )
    }
}

fn b64(s: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(s.as_bytes())
}

fn upsert(
    doc: &mut serde_json::Map<String, Value>,
    list: &str,
    name: &str,
    key: &str,
    body: Value,
) {
    let items = doc
        .entry(list.to_owned())
        .or_insert_with(|| Value::Array(Vec::new()));
    if !items.is_array() {
        *items = Value::Array(Vec::new());
    }
    if let Value::Array(items) = items {
        let entry = json!({"name": name, key: body});
        match items
            .iter_mut()
            .find(|i| i.get("name").and_then(Value::as_str) == Some(name))
        {
            Some(existing) => *existing = entry,
            None => items.push(entry),
        }
    }
}

fn has_named(doc: &serde_json::Map<String, Value>, list: &str, name: &str) -> bool {
    doc.get(list).and_then(Value::as_array).is_some_and(|a| {
        a.iter()
            .any(|i| i.get("name").and_then(Value::as_str) == Some(name))
    })
}

/// Merges `entry` into the kubeconfig text `existing` (`None` or empty for a new file) and
/// returns the new text: the cluster and context entries named after the cluster are
/// replaced or added, so is the user entry when there are admin credentials, other entries
/// and fields are kept, and `current-context` becomes the cluster. With `entry.user`, that
/// user must already exist in the file; with neither, the user entry is left as it is.
pub fn merge_kubeconfig(existing: Option<&str>, entry: &KubeconfigEntry) -> Result<String> {
    let invalid = |message: String| Error::Invalid {
        field: "kubeconfig".into(),
        message,
    };
    let mut doc = match existing.map(str::trim) {
        None | Some("") => serde_json::Map::new(),
        Some(text) => match serde_saphyr::from_str::<Value>(text) {
            Ok(Value::Object(m)) => m,
            Ok(Value::Null) => serde_json::Map::new(),
            Ok(_) => return Err(invalid("not a mapping".into())),
            Err(e) => return Err(invalid(format!("not YAML: {e}"))),
        },
    };
    doc.entry("apiVersion").or_insert_with(|| json!("v1"));
    doc.entry("kind").or_insert_with(|| json!("Config"));
    doc.entry("preferences").or_insert_with(|| json!({}));

    let mut cluster = serde_json::Map::new();
    cluster.insert("server".into(), json!(entry.server));
    if let Some(ca) = &entry.ca_pem {
        cluster.insert("certificate-authority-data".into(), json!(b64(ca)));
    }
    if let Some(name) = &entry.tls_server_name {
        cluster.insert("tls-server-name".into(), json!(name));
    }
    upsert(
        &mut doc,
        "clusters",
        &entry.cluster,
        "cluster",
        Value::Object(cluster),
    );

    let user = match (&entry.admin, &entry.user, &entry.exec) {
        (Some(_), Some(_), _) => {
            return Err(Error::Invalid {
                field: "--user".into(),
                message: "cannot be combined with --admin".into(),
            });
        }
        (Some(_), None, Some(_)) | (None, Some(_), Some(_)) => {
            return Err(Error::Invalid {
                field: "--auth-plugin".into(),
                message: "cannot be combined with --admin or --user".into(),
            });
        }
        (None, None, Some((command, args))) => {
            upsert(
                &mut doc,
                "users",
                &entry.cluster,
                "user",
                json!({"exec": {
                    "apiVersion": "client.authentication.k8s.io/v1beta1",
                    "command": command,
                    "args": args,
                    "interactiveMode": "Never",
                }}),
            );
            entry.cluster.clone()
        }
        (Some(admin), None, None) => {
            upsert(
                &mut doc,
                "users",
                &entry.cluster,
                "user",
                json!({
                    "client-certificate-data": b64(&admin.certificate_pem),
                    "client-key-data": b64(admin.private_key.expose_pem()),
                }),
            );
            entry.cluster.clone()
        }
        (None, Some(u), None) => {
            if !has_named(&doc, "users", u) {
                return Err(Error::Invalid {
                    field: "--user".into(),
                    message: format!("user {u:?} is not in the kubeconfig"),
                });
            }
            u.clone()
        }
        (None, None, None) => entry.cluster.clone(),
    };
    upsert(
        &mut doc,
        "contexts",
        &entry.cluster,
        "context",
        json!({"cluster": entry.cluster, "user": user}),
    );
    doc.insert("current-context".into(), json!(entry.cluster));
    serde_saphyr::to_string(&Value::Object(doc)).map_err(|e| invalid(format!("writing YAML: {e}")))
}

/// A kube-rs client for the context named `context` of kubeconfig text `text` (the
/// current context when `None`).
pub async fn client_from_kubeconfig(text: &str, context: Option<&str>) -> Result<kube::Client> {
    let fail = |operation: String, e: Box<dyn std::error::Error + Send + Sync>| Error::Kubernetes {
        operation,
        source: e,
    };
    let kc = kube::config::Kubeconfig::from_yaml(text)
        .map_err(|e| fail("reading the kubeconfig".into(), Box::new(e)))?;
    check_client_certificate(&kc, context, SystemTime::now())?;
    let options = kube::config::KubeConfigOptions {
        context: context.map(str::to_owned),
        ..Default::default()
    };
    let mut config = kube::Config::from_custom_kubeconfig(kc, &options)
        .await
        .map_err(|e| fail("loading the kubeconfig context".into(), Box::new(e)))?;
    // The day-two code retries on kOps' terms (an eviction refused with 429 every
    // `evict_retry` until `drain_timeout`, validation every tick until its timeout).
    // kube's own retry of 429/503/504 (15 attempts, backing off up to minutes) would hide
    // a refused eviction from the drain for minutes, past its timeout.
    config.default_retry = false;
    kube::Client::try_from(config)
        .map_err(|e| fail("building the Kubernetes client".into(), Box::new(e)))
}

/// Refuses a context whose user's client certificate (`client-certificate-data`) is
/// expired at `now`, naming the user and how to get a new one: the server would only
/// answer `401 Unauthorized`.
fn check_client_certificate(
    kc: &kube::config::Kubeconfig,
    context: Option<&str>,
    now: SystemTime,
) -> Result<()> {
    use base64::Engine as _;
    let Some(name) = context.or(kc.current_context.as_deref()) else {
        return Ok(());
    };
    let user = kc
        .contexts
        .iter()
        .find(|c| c.name == name)
        .and_then(|c| c.context.as_ref())
        .and_then(|c| c.user.clone());
    let Some(user) = user else {
        return Ok(());
    };
    let data = kc
        .auth_infos
        .iter()
        .find(|a| a.name == user)
        .and_then(|a| a.auth_info.as_ref())
        .and_then(|a| a.client_certificate_data.as_deref());
    let Some(data) = data else {
        return Ok(());
    };
    let Ok(pem) = base64::engine::general_purpose::STANDARD.decode(data.trim()) else {
        return Ok(());
    };
    let Ok(cert) = crate::pki::Certificate::from_pem(&pem) else {
        return Ok(());
    };
    let now_secs = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    if cert.not_after < now_secs {
        let expired = SystemTime::UNIX_EPOCH + Duration::from_secs(cert.not_after.max(0) as u64);
        return Err(Error::Invalid {
            field: format!("kubeconfig user {user}: client certificate"),
            message: format!(
                "expired at {}; `kops export kubeconfig --admin` writes a fresh one",
                crate::pki::rotation::rfc3339(expired)
            ),
        });
    }
    Ok(())
}

/// A client for `entry` alone, as kOps' rolling-update and validate build one in memory
/// (nothing is written to disk).
pub async fn client_for(entry: &KubeconfigEntry) -> Result<kube::Client> {
    let text = merge_kubeconfig(None, entry)?;
    client_from_kubeconfig(&text, Some(&entry.cluster)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_load_balancer_is_named_where_the_api_name_cannot_resolve() {
        let cluster = |name: &str, dns: &str, lb: &str| {
            let text = format!(
                "apiVersion: kops.k8s.io/v1alpha2\nkind: Cluster\nmetadata:\n  name: {name}\nspec:\n  api:\n    loadBalancer:\n      type: {lb}\n  topology:\n    dns:\n      type: {dns}\n"
            );
            let v: kops_api::v1alpha2::Cluster = serde_saphyr::from_str(&text).unwrap();
            kops_api::internal::Cluster::try_from(&v).unwrap()
        };
        let uses = |name, dns, lb| server_from_load_balancer(&cluster(name, dns, lb));
        assert!(!uses("a.example.com", "Public", "Public"));
        assert!(uses("a.example.com", "None", "Public"));
        assert!(uses("a.k8s.local", "Public", "Public"));
        // A private zone answers only inside the network, which a public load balancer
        // is not: its address; with an internal one the name is used, as kOps does.
        assert!(uses("a.example.com", "Private", "Public"));
        assert!(!uses("a.example.com", "Private", "Internal"));
    }

    /// The names of kOps' nodeup golden `audit/tasks-kube-apiserver.yaml` (the `master`
    /// certificate of minimal.example.com), in its order; additional SANs after the
    /// internal name.
    #[test]
    fn api_server_certificate_names_follow_nodeup() {
        let text = "apiVersion: kops.k8s.io/v1alpha2\nkind: Cluster\nmetadata:\n  name: minimal.example.com\nspec:\n  masterPublicName: api.minimal.example.com\n  additionalSans:\n  - proxy.example.com\n  clusterDNSDomain: cluster.local\n  serviceClusterIPRange: 100.64.0.0/13\n";
        let v: kops_api::v1alpha2::Cluster = serde_saphyr::from_str(text).unwrap();
        let c = kops_api::internal::Cluster::try_from(&v).unwrap();
        assert_eq!(
            api_server_certificate_names(&c).unwrap(),
            [
                "kubernetes",
                "kubernetes.default",
                "kubernetes.default.svc",
                "kubernetes.default.svc.cluster.local",
                "api.minimal.example.com",
                "api.internal.minimal.example.com",
                "proxy.example.com",
                "100.64.0.1",
                "127.0.0.1",
            ]
        );
        let bad = text.replace("100.64.0.0/13", "nonsense");
        let v: kops_api::v1alpha2::Cluster = serde_saphyr::from_str(&bad).unwrap();
        let c = kops_api::internal::Cluster::try_from(&v).unwrap();
        let e = api_server_certificate_names(&c).unwrap_err().to_string();
        assert!(e.contains("serviceClusterIPRange"), "{e}");
    }

    #[test]
    fn merging_keeps_other_entries_and_replaces_ours() {
        let existing = "apiVersion: v1\nkind: Config\nclusters:\n- name: other\n  cluster:\n    server: https://other\ncontexts:\n- name: other\n  context:\n    cluster: other\n    user: bob\nusers:\n- name: bob\n  user:\n    token: t\ncurrent-context: other\n";
        let entry = KubeconfigEntry::new("a.example.com", "https://api.a.example.com")
            .with_ca_pem("CA")
            .with_user("bob");
        let out = merge_kubeconfig(Some(existing), &entry).unwrap();
        let v: Value = serde_saphyr::from_str(&out).unwrap();
        assert_eq!(v["current-context"], "a.example.com");
        assert_eq!(v["clusters"].as_array().unwrap().len(), 2);
        assert_eq!(v["contexts"][1]["context"]["user"], "bob");
        assert_eq!(
            v["clusters"][1]["cluster"]["certificate-authority-data"],
            b64("CA")
        );
        // Merging again replaces rather than duplicates.
        let again = merge_kubeconfig(Some(&out), &entry).unwrap();
        let v: Value = serde_saphyr::from_str(&again).unwrap();
        assert_eq!(v["clusters"].as_array().unwrap().len(), 2);
        assert_eq!(v["contexts"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn an_auth_plugin_user_runs_the_helper_and_excludes_other_credentials() {
        let entry = KubeconfigEntry::new("a.example.com", "https://api.a.example.com")
            .with_exec("kops", vec!["helpers".into(), "kubectl-auth".into()]);
        let out = merge_kubeconfig(None, &entry).unwrap();
        let v: Value = serde_saphyr::from_str(&out).unwrap();
        let exec = &v["users"][0]["user"]["exec"];
        assert_eq!(exec["command"], "kops");
        assert_eq!(exec["args"], json!(["helpers", "kubectl-auth"]));
        assert_eq!(exec["apiVersion"], "client.authentication.k8s.io/v1beta1");
        assert_eq!(v["contexts"][0]["context"]["user"], "a.example.com");
        let both = entry.with_user("bob");
        let err = merge_kubeconfig(None, &both).unwrap_err().to_string();
        assert!(err.contains("--auth-plugin"), "{err}");
    }

    #[test]
    fn an_exec_credential_expires_before_its_certificate() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let credential = AdminCredential {
            certificate_pem: "CERT".into(),
            private_key: PrivateKeyPem::new(
                "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
            )
            .unwrap(),
            not_after: now + Duration::from_secs(3600),
        };
        let text = exec_credential(&credential, "v1beta1").unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["kind"], "ExecCredential");
        assert_eq!(v["apiVersion"], "client.authentication.k8s.io/v1beta1");
        assert_eq!(v["status"]["clientCertificateData"], "CERT");
        // 2023-11-14T22:13:20Z plus an hour, less five minutes.
        assert_eq!(v["status"]["expirationTimestamp"], "2023-11-14T23:08:20Z");
        let err = exec_credential(&credential, "v1").unwrap_err().to_string();
        assert!(err.contains("\"v1\""), "{err}");
    }

    #[test]
    fn an_unknown_user_is_an_error_naming_it() {
        let entry = KubeconfigEntry::new("a", "https://api.a").with_user("nobody");
        let err = merge_kubeconfig(None, &entry).unwrap_err().to_string();
        assert!(err.contains("nobody"), "{err}");
    }

    #[test]
    fn api_server_names_follow_kops() {
        assert_eq!(api_server_url("a.k8s", None, false), "https://api.a.k8s");
        assert_eq!(
            api_server_url("a.k8s", None, true),
            "https://api.internal.a.k8s"
        );
        assert_eq!(
            api_server_url("a.k8s", Some("k.example"), false),
            "https://k.example"
        );
    }
}
