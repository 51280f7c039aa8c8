//! Data sources.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use kops_model::api::internal;
use kops_model::day2::kubeconfig::{
    DEFAULT_ADMIN_LIFETIME, api_server_url, issue_admin_credential,
};
use kops_model::pki::trusted_certificates;
use kops_model::statestore::Error as StoreError;

use crate::cluster::{ClusterResource, from_cluster};
use crate::instance_group::{InstanceGroupResource, from_group};
use crate::resource::Resource;
use std::sync::Arc;

use crate::diag::{Diag, Diags};
use crate::resource::DataSource;
use crate::schema::{Attr, Block, Mode, Ty};
use crate::session::Session;
use crate::value::Value;

/// `kops_cluster_status`: whether the cluster exists, its groups, whether its cloud
/// differs from its stored spec (a dry run of `kops update cluster`), and whether it
/// validates through its API right now (`kops validate cluster`, once).
pub struct ClusterStatusData;

#[async_trait::async_trait]
impl DataSource for ClusterStatusData {
    fn schema(&self) -> Block {
        Block {
            attrs: vec![
                Attr::new("id", Ty::String, Mode::Computed, "The cluster's name."),
                Attr::new("cluster_name", Ty::String, Mode::Required, "The cluster."),
                Attr::new(
                    "exists",
                    Ty::Bool,
                    Mode::Computed,
                    "Whether it is in the state store.",
                ),
                Attr::new(
                    "needs_update",
                    Ty::Bool,
                    Mode::Computed,
                    "Whether applying the stored spec would change the cloud.",
                ),
                Attr::new(
                    "is_valid",
                    Ty::Bool,
                    Mode::Computed,
                    "Whether it validates through its API now (false when the API does \
                     not answer, or the cluster was never applied).",
                ),
                Attr::new(
                    "instance_groups",
                    Ty::List(Box::new(Ty::String)),
                    Mode::Computed,
                    "Its instance groups.",
                ),
                Attr::new(
                    "api_server",
                    Ty::String,
                    Mode::Optional,
                    "The API's URL, when the cluster's name for it does not resolve from \
                     here (kops' --api-server).",
                ),
            ],
            blocks: Vec::new(),
            description: "A kOps cluster's status.".into(),
        }
    }

    async fn read(&self, session: &Arc<Session>, config: &Value) -> Result<Value, Diags> {
        let Some(name) = config.get("cluster_name").as_str() else {
            return Err(vec![Diag::attr("cluster_name", "Missing cluster name", "")]);
        };
        let mut values = BTreeMap::new();
        values.insert("id".to_string(), Value::String(name.to_string()));
        values.insert("cluster_name".to_string(), Value::String(name.to_string()));
        let server = config.get("api_server").as_str().map(str::to_string);
        values.insert("api_server".to_string(), config.get("api_server").clone());
        let access = crate::cloud::ApiAccess {
            server,
            // One validation: a credential of minutes is enough.
            lifetime: Duration::from_secs(600),
        };
        let status = crate::cloud::status(session, name, access).await?;
        values.insert("exists".to_string(), Value::Bool(status.is_some()));
        values.insert("is_valid".to_string(), Value::Bool(false));
        if let Some(status) = status {
            let groups = status.groups.into_iter().map(Value::String).collect();
            values.insert("instance_groups".to_string(), Value::List(groups));
            values.insert("needs_update".to_string(), Value::Bool(status.changes > 0));
            values.insert("is_valid".to_string(), Value::Bool(status.valid));
        }
        Ok(self.schema().complete(values))
    }
}

/// A name attribute the configuration gives.
fn required(name: &str, description: &str) -> Attr {
    Attr::new(name, Ty::String, Mode::Required, description)
}

fn config_name<'a>(config: &'a Value, name: &str) -> Result<&'a str, Diags> {
    config.get(name).as_str().ok_or_else(|| {
        vec![Diag::attr(
            name,
            "Missing value",
            format!("{name} is required"),
        )]
    })
}

fn not_found(name: &str, what: &str, e: &StoreError) -> Diags {
    vec![Diag::attr(name, format!("No such {what}"), e.to_string())]
}

/// `kops_cluster`: a stored cluster, every field as the resource shows it.
pub struct ClusterData;

#[async_trait::async_trait]
impl DataSource for ClusterData {
    fn schema(&self) -> Block {
        let mut block = ClusterResource.schema();
        block.blocks.retain(|b| b.name != "secrets");
        let mut block = block.computed();
        block
            .attrs
            .retain(|a| a.name != "name" && a.name != "admin_ssh_key");
        block
            .attrs
            .insert(0, required("name", "The cluster's name."));
        block.description = "A kOps cluster's stored spec.".into();
        block
    }

    async fn read(&self, session: &Arc<Session>, config: &Value) -> Result<Value, Diags> {
        let name = config_name(config, "name")?;
        let stored = session
            .registry
            .get_cluster(name)
            .await
            .map_err(|e| not_found("name", "cluster", &e))?;
        let mut values = from_cluster(&stored.value)?;
        values.insert("revision".into(), Value::Null);
        Ok(self.schema().complete(values))
    }
}

/// `kops_instance_group`: a stored instance group.
pub struct InstanceGroupData;

#[async_trait::async_trait]
impl DataSource for InstanceGroupData {
    fn schema(&self) -> Block {
        let mut block = InstanceGroupResource.schema().computed();
        block
            .attrs
            .retain(|a| a.name != "name" && a.name != "cluster_name");
        block.attrs.insert(0, required("name", "The group's name."));
        block
            .attrs
            .insert(0, required("cluster_name", "The cluster's name."));
        block.description = "A kOps instance group's stored spec.".into();
        block
    }

    async fn read(&self, session: &Arc<Session>, config: &Value) -> Result<Value, Diags> {
        let cluster = config_name(config, "cluster_name")?;
        let name = config_name(config, "name")?;
        let stored = session
            .registry
            .get_instance_group(cluster, name)
            .await
            .map_err(|e| not_found("name", "instance group", &e))?;
        let mut values = from_group(cluster, &stored.value)?;
        values.insert("revision".into(), Value::Null);
        Ok(self.schema().complete(values))
    }
}

/// `kops_kube_config`: what a client needs to reach the cluster's API as an admin: the
/// server, the CA bundle, and a client certificate minted now (CN `kubecfg-terraform`,
/// `system:masters`), short-lived, as `kops export kubeconfig --admin` mints one. The
/// key is sensitive and never stored in the state store.
pub struct KubeConfigData;

#[async_trait::async_trait]
impl DataSource for KubeConfigData {
    fn schema(&self) -> Block {
        let computed = |name: &str, description: &str| {
            Attr::new(name, Ty::String, Mode::Computed, description)
        };
        Block {
            attrs: vec![
                computed("id", "The cluster's name."),
                required("cluster_name", "The cluster."),
                Attr::new(
                    "admin_lifetime",
                    Ty::String,
                    Mode::Optional,
                    "How long the credential lasts (default 18h), e.g. 2h.",
                ),
                Attr::new(
                    "internal",
                    Ty::Bool,
                    Mode::Optional,
                    "The API's internal name instead of its public one.",
                ),
                computed("server", "The API's URL."),
                computed("context", "The kubeconfig context's name."),
                computed("kube_user", "The credential's user."),
                computed(
                    "ca_certs",
                    "The CA bundle the API's certificate is checked against.",
                ),
                computed("client_cert", "The admin client certificate (PEM)."),
                computed("client_key", "Its private key (PEM).").sensitive(),
                Attr::new(
                    "not_after",
                    Ty::Number,
                    Mode::Computed,
                    "When the credential expires (Unix seconds).",
                ),
            ],
            blocks: Vec::new(),
            description: "An admin credential for a kOps cluster's API.".into(),
        }
    }

    async fn read(&self, session: &Arc<Session>, config: &Value) -> Result<Value, Diags> {
        let name = config_name(config, "cluster_name")?;
        let lifetime = match config.get("admin_lifetime").as_str() {
            Some(text) => crate::updater::parse_duration(text).ok_or_else(|| {
                vec![Diag::attr(
                    "admin_lifetime",
                    "Invalid duration",
                    format!("{text:?}: expected e.g. 90m, 2h"),
                )]
            })?,
            None => DEFAULT_ADMIN_LIFETIME,
        };
        let stored = session
            .registry
            .get_cluster(name)
            .await
            .map_err(|e| not_found("cluster_name", "cluster", &e))?;
        let cluster = internal::Cluster::try_from(&stored.value)
            .map_err(|e| vec![Diag::error("Unreadable cluster", e.to_string())])?;
        let ca = session
            .registry
            .get_keyset(name, "kubernetes-ca")
            .await
            .map_err(|e| {
                vec![Diag::attr(
                    "cluster_name",
                    "No cluster CA yet",
                    format!("{e}: the CA is made when the cluster is first applied (kops_cluster_updater)"),
                )]
            })?
            .value;
        let failed =
            |e: kops_model::Error| vec![Diag::error("Minting the admin credential", e.to_string())];
        let bundle = trusted_certificates(&ca).map_err(failed)?;
        let credential = issue_admin_credential(&ca, "terraform", lifetime, SystemTime::now())
            .map_err(failed)?;
        let internal_name = config.get("internal").as_bool().unwrap_or(false);
        let public = cluster.spec.api.public_name.as_deref();
        let server = api_server_url(name, public, internal_name);
        let not_after = credential
            .not_after
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or(Duration::ZERO)
            .as_secs();
        let text = |s: &str| Value::String(s.to_string());
        let mut values = BTreeMap::new();
        values.insert("id".into(), text(name));
        values.insert("cluster_name".into(), text(name));
        values.insert(
            "admin_lifetime".into(),
            config.get("admin_lifetime").clone(),
        );
        values.insert("internal".into(), config.get("internal").clone());
        values.insert("server".into(), text(&server));
        values.insert("context".into(), text(name));
        values.insert("kube_user".into(), text("kubecfg-terraform"));
        values.insert("ca_certs".into(), text(&bundle));
        values.insert("client_cert".into(), text(&credential.certificate_pem));
        values.insert(
            "client_key".into(),
            text(credential.private_key.expose_pem()),
        );
        values.insert("not_after".into(), Value::Int(not_after as i64));
        Ok(self.schema().complete(values))
    }
}
