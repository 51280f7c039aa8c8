//! `kops_instance_group`: one InstanceGroup of a cluster in the state store, as `kops
//! create ig` stores it. Its machines change when `kops_cluster_updater` applies.
//! Reads keep the state when the stored group means the same, as for the cluster.

use std::collections::BTreeMap;
use std::sync::Arc;

use kops_model::api::defaults::{PopulateOptions, populate_cluster, populate_instance_group};
use kops_model::api::schema as api_schema;
use kops_model::api::{internal, v1alpha2, validation};
use kops_model::statestore::Error as StoreError;

use crate::cluster::{
    keep_if_same, map_value, meta_attrs, metadata, next_revision, validation_diags,
};
use crate::diag::{Diag, Diags, store_failed};
use crate::resource::{Planned, Resource};
use crate::schema::{self, Block, Step};
use crate::session::Session;
use crate::value::Value;

/// The resource.
pub struct InstanceGroupResource;

/// The label the state store puts on every group, naming its cluster.
const CLUSTER_LABEL: &str = "kops.k8s.io/cluster";

fn names(v: &Value) -> (&str, &str) {
    (
        v.get("cluster_name").as_str().unwrap_or_default(),
        v.get("name").as_str().unwrap_or_default(),
    )
}

/// The InstanceGroup a value describes, in the internal layout.
fn to_internal(v: &Value) -> Result<internal::InstanceGroup, Diags> {
    let object = api_schema::internal_instance_group_spec();
    let spec = schema::to_json(object, v, &mut Vec::new()).map_err(crate::cluster::invalid)?;
    let doc = serde_json::json!({ "metadata": metadata(v), "spec": spec });
    serde_json::from_value(doc)
        .map_err(|e| vec![Diag::error("Invalid instance group spec", e.to_string())])
}

/// The stored InstanceGroup a value describes.
pub fn to_group(v: &Value) -> Result<v1alpha2::InstanceGroup, Diags> {
    Ok(v1alpha2::InstanceGroup::from(&to_internal(v)?))
}

/// The value of a stored InstanceGroup of `cluster` (computed attributes not set).
pub fn from_group(
    cluster: &str,
    g: &v1alpha2::InstanceGroup,
) -> Result<BTreeMap<String, Value>, Diags> {
    let group = internal::InstanceGroup::from(g);
    let spec = serde_json::to_value(&group.spec)
        .map_err(|e| vec![Diag::error("Unreadable instance group", e.to_string())])?;
    let empty = serde_json::Map::new();
    let mut values = schema::from_json(
        api_schema::internal_instance_group_spec(),
        spec.as_object().unwrap_or(&empty),
    );
    let mut labels = g.metadata.labels.clone();
    if let Some(l) = labels.as_mut() {
        l.remove(CLUSTER_LABEL);
    }
    let labels = labels.filter(|l| !l.is_empty());
    values.insert("cluster_name".into(), Value::String(cluster.to_string()));
    values.insert("name".into(), Value::String(g.name().to_string()));
    values.insert(
        "id".into(),
        Value::String(format!("{cluster}/{}", g.name())),
    );
    values.insert("labels".into(), map_value(&labels));
    values.insert("annotations".into(), map_value(&g.metadata.annotations));
    Ok(values)
}

/// What two stored groups are compared by: spec, labels (but the store's own) and
/// annotations.
fn meaning(g: &v1alpha2::InstanceGroup) -> serde_json::Value {
    let mut labels = g.metadata.labels.clone().unwrap_or_default();
    labels.remove(CLUSTER_LABEL);
    serde_json::json!({
        "spec": g.spec,
        "labels": labels,
        "annotations": g.metadata.annotations,
    })
}

fn spec_changed(prior: &Value, proposed: &Value) -> Option<bool> {
    if proposed.has_unknown() {
        return None;
    }
    match (to_group(prior), to_group(proposed)) {
        (Ok(a), Ok(b)) => Some(meaning(&a) != meaning(&b)),
        _ => Some(true),
    }
}

/// Validates the group a value describes as `kops update cluster` will: completed with
/// the library's defaults for its cluster first (a stored group may leave its machine
/// type and image to them). A group whose cluster is not stored yet (both are created
/// in one apply) is checked when the group is written.
async fn validate(session: Option<&Session>, v: &Value) -> Result<(), Diags> {
    let group = to_internal(v)?;
    let (Some(session), Some(cluster)) = (session, v.get("cluster_name").as_str()) else {
        return Ok(());
    };
    let Ok(stored) = session.registry.get_cluster(cluster).await else {
        return Ok(());
    };
    let invalid =
        |e: &dyn std::fmt::Display| vec![Diag::error("Invalid instance group", e.to_string())];
    let cluster = internal::Cluster::try_from(&stored.value).map_err(|e| invalid(&e))?;
    let options = PopulateOptions::default();
    let cluster = populate_cluster(&cluster, &options).map_err(|e| invalid(&e))?;
    let full = populate_instance_group(&cluster, &group, &options).map_err(|e| invalid(&e))?;
    validation::validate_instance_group(&full).map_err(|e| {
        validation_diags(
            api_schema::internal_instance_group_spec(),
            &e,
            internal::instance_group_path,
        )
    })
}

#[async_trait::async_trait]
impl Resource for InstanceGroupResource {
    fn schema(&self) -> Block {
        let mut block = schema::spec_block(api_schema::internal_instance_group_spec());
        let mut attrs = meta_attrs(&[
            ("cluster_name", "The cluster's name."),
            ("name", "The group's name."),
        ]);
        attrs.append(&mut block.attrs);
        block.attrs = attrs;
        block.description = "A kOps instance group's spec in the state store.".into();
        block
    }

    async fn plan(
        &self,
        session: Option<&Session>,
        prior: &Value,
        proposed: &Value,
    ) -> Result<Planned, Diags> {
        if proposed.is_null() {
            return Ok(Planned::of(Value::Null));
        }
        if !proposed.has_unknown() {
            validate(session, proposed).await?;
        }
        let replace: Vec<Vec<Step>> = ["cluster_name", "name"]
            .into_iter()
            .filter(|k| !prior.is_null() && prior.get(k) != proposed.get(k))
            .map(|k| vec![Step::Attr(k.into())])
            .collect();
        if prior.is_null() || !replace.is_empty() {
            let mut planned = proposed.clone();
            let (cluster, name) = (proposed.get("cluster_name"), proposed.get("name"));
            planned.set(
                "id",
                match (cluster.as_str(), name.as_str()) {
                    (Some(c), Some(n)) => Value::String(format!("{c}/{n}")),
                    _ => Value::Unknown,
                },
            );
            planned.set("revision", Value::Int(1));
            return Ok(Planned {
                state: planned,
                requires_replace: replace,
            });
        }
        Ok(Planned::of(keep_if_same(
            prior,
            proposed,
            spec_changed(prior, proposed),
        )))
    }

    async fn apply(
        &self,
        session: &Arc<Session>,
        prior: &Value,
        planned: &Value,
    ) -> Result<Value, Diags> {
        let registry = &session.registry;
        if planned.is_null() {
            let (cluster, name) = names(prior);
            // Its cloud objects first, as terraform-provider-kops deletes them, then its
            // spec: a failure leaves the spec, and the next apply tries again.
            crate::cloud::delete_instance_group(session, cluster, name).await?;
            registry
                .delete_instance_group(cluster, name)
                .await
                .map_err(|e| store_failed("Deleting the instance group", &e))?;
            return Ok(Value::Null);
        }
        validate(Some(session), planned).await?;
        let group = to_group(planned)?;
        let (cluster, name) = names(planned);
        if let Err(e) = registry.get_cluster(cluster).await {
            return Err(vec![Diag::attr(
                "cluster_name",
                "No such cluster",
                format!("{cluster}: {e}"),
            )]);
        }
        if prior.is_null() {
            registry
                .create_instance_group(cluster, &group)
                .await
                .map_err(|e| match e {
                    StoreError::AlreadyExists { .. } => vec![Diag::attr(
                        "name",
                        "The instance group exists",
                        format!(
                            "{cluster}/{name}: import it (terraform import) to manage it here."
                        ),
                    )],
                    e => store_failed("Storing the instance group", &e),
                })?;
        } else {
            let current = registry
                .get_instance_group(cluster, name)
                .await
                .map_err(|e| store_failed("Reading the instance group", &e))?;
            let mut next = current.value.clone();
            next.spec = group.spec;
            next.metadata.labels = group.metadata.labels;
            next.metadata.annotations = group.metadata.annotations;
            registry
                .update_instance_group(cluster, &next, &current.version)
                .await
                .map_err(|e| store_failed("Storing the instance group", &e))?;
        }
        Ok(planned.clone())
    }

    async fn read(&self, session: &Arc<Session>, state: &Value) -> Result<Value, Diags> {
        let (cluster, name) = names(state);
        let stored = match session.registry.get_instance_group(cluster, name).await {
            Ok(v) => v.value,
            Err(StoreError::NotFound { .. }) => return Ok(Value::Null),
            Err(e) => return Err(store_failed("Reading the instance group", &e)),
        };
        if let Ok(known) = to_group(state)
            && meaning(&known) == meaning(&stored)
        {
            return Ok(state.clone());
        }
        let mut values = from_group(cluster, &stored)?;
        values.insert("revision".into(), next_revision(state, Some(true)));
        Ok(self.schema().complete(values))
    }

    async fn import(&self, session: &Arc<Session>, id: &str) -> Result<Value, Diags> {
        let Some((cluster, name)) = id.split_once('/') else {
            return Err(vec![Diag::error(
                "Invalid import id",
                format!("{id:?}: expected CLUSTER/GROUP"),
            )]);
        };
        let stored = session
            .registry
            .get_instance_group(cluster, name)
            .await
            .map_err(|e| store_failed(&format!("Reading instance group {id}"), &e))?;
        let mut values = from_group(cluster, &stored.value)?;
        values.insert("revision".into(), Value::Int(1));
        Ok(self.schema().complete(values))
    }
}
