//! Data sources.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::diag::{Diag, Diags};
use crate::resource::DataSource;
use crate::schema::{Attr, Block, Mode, Ty};
use crate::session::Session;
use crate::value::Value;

/// `kops_cluster_status`: whether the cluster exists, its groups, and whether its cloud
/// differs from its stored spec (a dry run of `kops update cluster`).
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
                    "instance_groups",
                    Ty::List(Box::new(Ty::String)),
                    Mode::Computed,
                    "Its instance groups.",
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
        let status = crate::cloud::status(session, name).await?;
        values.insert("exists".to_string(), Value::Bool(status.is_some()));
        if let Some((groups, changes)) = status {
            let groups = groups.into_iter().map(Value::String).collect();
            values.insert("instance_groups".to_string(), Value::List(groups));
            values.insert("needs_update".to_string(), Value::Bool(changes > 0));
        }
        Ok(self.schema().complete(values))
    }
}
