//! `kops_cluster`: a Cluster in the state store, its spec in kOps' internal layout.
//!
//! Creating one stores the spec (and the admin SSH key) as `kops create -f` does;
//! nothing is made in the cloud until `kops_cluster_updater` applies. Destroying one
//! deletes what the cluster owns in the cloud, then its state, as `kops delete cluster
//! --yes` does.
//!
//! The state holds what the configuration says. A read that finds the stored spec
//! equal in meaning to the state (kOps' spelling of the same thing, fields the library
//! fills) keeps the state as it is, so a plan after apply is empty; a stored spec that
//! differs (an edit with the `kops` CLI) is read back, and `revision` moves.

use std::collections::BTreeMap;
use std::sync::Arc;

use kops_model::api::defaults::{PopulateOptions, populate_cluster};
use kops_model::api::schema as api_schema;
use kops_model::api::v1alpha2;
use kops_model::api::{internal, validation};
use kops_model::statestore::Error as StoreError;

use crate::cloud::Deletion;
use crate::diag::{Diag, Diags, store_failed};
use crate::resource::{Planned, Resource};
use crate::schema::{self, Attr, Block, Mode, Nested, Step, Ty};
use crate::session::Session;
use crate::value::Value;

/// The resource.
pub struct ClusterResource;

/// The top-level attributes besides the spec's.
pub fn meta_attrs(identity: &[(&str, &str)]) -> Vec<Attr> {
    let mut attrs = vec![Attr::new(
        "id",
        Ty::String,
        Mode::Computed,
        "The object's id.",
    )];
    for (name, description) in identity {
        attrs.push(Attr::new(name, Ty::String, Mode::Required, description));
    }
    attrs.extend([
        Attr::new(
            "revision",
            Ty::Number,
            Mode::Computed,
            "Moves each time the stored spec changes: a keeper for kops_cluster_updater.",
        ),
        Attr::new(
            "labels",
            Ty::Map(Box::new(Ty::String)),
            Mode::Optional,
            "The object's labels.",
        ),
        Attr::new(
            "annotations",
            Ty::Map(Box::new(Ty::String)),
            Mode::Optional,
            "The object's annotations.",
        ),
    ]);
    attrs
}

/// The labels or annotations of a value.
pub fn string_map(v: &Value) -> Option<BTreeMap<String, String>> {
    match v {
        Value::Map(m) => Some(
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect(),
        ),
        _ => None,
    }
}

/// A string map as a value (null for none).
pub fn map_value(m: &Option<BTreeMap<String, String>>) -> Value {
    match m {
        Some(m) => Value::Map(
            m.iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect(),
        ),
        None => Value::Null,
    }
}

/// A spec field that does not fit, as a diagnostic on its attribute.
pub fn invalid(e: schema::Invalid) -> Diags {
    vec![Diag::at(e.path, "Invalid value", e.message)]
}

/// A library validation problem on the attribute its v1alpha2 path names, when the
/// schema knows it.
pub fn validation_diags(
    object: &'static api_schema::Object,
    errors: &validation::ValidationErrors,
    to_internal: fn(&str) -> String,
) -> Diags {
    errors
        .errors()
        .iter()
        .map(|e| {
            let internal = to_internal(&e.path);
            let path = internal
                .strip_prefix("spec.")
                .and_then(|p| schema::tf_path(object, p));
            let detail = format!("{}: {}", e.path, e.message);
            match path {
                Some(path) => Diag::at(path, "Invalid spec", detail),
                None => Diag::error("Invalid spec", detail),
            }
        })
        .collect()
}

/// The metadata a value gives: name, labels and annotations.
pub fn metadata(v: &Value) -> serde_json::Value {
    let mut meta = serde_json::json!({ "name": v.get("name").as_str().unwrap_or_default() });
    for key in ["labels", "annotations"] {
        if let Some(m) = string_map(v.get(key)) {
            meta[key] = serde_json::json!(m);
        }
    }
    meta
}

fn name_of(v: &Value) -> Option<&str> {
    v.get("name").as_str()
}

/// The Cluster a value describes, in the internal layout.
fn to_internal(v: &Value) -> Result<internal::Cluster, Diags> {
    let object = api_schema::internal_cluster_spec();
    let spec = schema::to_json(object, v, &mut Vec::new()).map_err(invalid)?;
    let doc = serde_json::json!({ "metadata": metadata(v), "spec": spec });
    serde_json::from_value(doc)
        .map_err(|e| vec![Diag::error("Invalid cluster spec", e.to_string())])
}

/// The stored Cluster a value describes.
pub fn to_cluster(v: &Value) -> Result<v1alpha2::Cluster, Diags> {
    Ok(v1alpha2::Cluster::from(&to_internal(v)?))
}

/// The value of a stored Cluster (computed attributes not set).
pub fn from_cluster(c: &v1alpha2::Cluster) -> Result<BTreeMap<String, Value>, Diags> {
    let cluster = internal::Cluster::try_from(c)
        .map_err(|e| vec![Diag::error("Unreadable cluster", e.to_string())])?;
    let spec = serde_json::to_value(&cluster.spec)
        .map_err(|e| vec![Diag::error("Unreadable cluster", e.to_string())])?;
    let empty = serde_json::Map::new();
    let mut values = schema::from_json(
        api_schema::internal_cluster_spec(),
        spec.as_object().unwrap_or(&empty),
    );
    values.insert("name".into(), Value::String(c.name().to_string()));
    values.insert("id".into(), Value::String(c.name().to_string()));
    values.insert("labels".into(), map_value(&c.metadata.labels));
    values.insert("annotations".into(), map_value(&c.metadata.annotations));
    Ok(values)
}

/// What two stored clusters are compared by: their spec, labels and annotations.
fn meaning(c: &v1alpha2::Cluster) -> serde_json::Value {
    serde_json::json!({
        "spec": c.spec,
        "labels": c.metadata.labels,
        "annotations": c.metadata.annotations,
    })
}

/// Whether the values' specs differ in meaning (`None`: not known yet).
fn spec_changed(prior: &Value, proposed: &Value) -> Option<bool> {
    if proposed.has_unknown() {
        return None;
    }
    match (to_cluster(prior), to_cluster(proposed)) {
        (Ok(a), Ok(b)) => Some(meaning(&a) != meaning(&b)),
        _ => Some(true),
    }
}

/// The next revision: the prior one, moved when the spec changes (unknown while the
/// configuration is).
pub fn next_revision(prior: &Value, changed: Option<bool>) -> Value {
    let now = prior.get("revision").as_i64().unwrap_or(0);
    match changed {
        None => Value::Unknown,
        Some(true) => Value::Int(now + 1),
        Some(false) => Value::Int(now),
    }
}

/// The plan of an update: the prior state when the spec means the same (kOps' spelling
/// of the same thing is no change), else the proposed one with the next revision.
pub fn keep_if_same(prior: &Value, proposed: &Value, changed: Option<bool>) -> Value {
    if changed == Some(false) {
        return prior.clone();
    }
    let mut planned = proposed.clone();
    planned.set("id", prior.get("id").clone());
    planned.set("revision", next_revision(prior, changed));
    planned
}

/// Whether two values hold the same admin SSH key (stored keys are trimmed).
fn same_key(a: &Value, b: &Value) -> bool {
    let key = |v: &Value| {
        v.get("admin_ssh_key")
            .as_str()
            .map(str::trim)
            .map(str::to_string)
    };
    key(a) == key(b)
}

/// Validates the cluster a value describes as `kops update cluster` will: completed
/// with the library's defaults first, since the rules are written for a full spec.
fn validate(v: &Value) -> Result<(), Diags> {
    let cluster = to_internal(v)?;
    let full = populate_cluster(&cluster, &PopulateOptions::default()).map_err(|e| {
        let diags = match &e {
            kops_model::api::Error::Invalid(errors) => validation_diags(
                api_schema::internal_cluster_spec(),
                errors,
                internal::cluster_path,
            ),
            _ => Vec::new(),
        };
        match diags.is_empty() {
            true => vec![Diag::error("Invalid cluster spec", e.to_string())],
            false => diags,
        }
    })?;
    validation::validate_cluster(&full).map_err(|e| {
        validation_diags(
            api_schema::internal_cluster_spec(),
            &e,
            internal::cluster_path,
        )
    })
}

/// The `delete` block (terraform-provider-kops' `delete_options`).
fn delete_block() -> Nested {
    Nested {
        name: "delete".into(),
        max_items: 1,
        block: Block {
            attrs: vec![
                Attr::new(
                    "interval",
                    Ty::String,
                    Mode::Optional,
                    "The pause between passes over what is left to delete (default 10s).",
                ),
                Attr::new(
                    "wait",
                    Ty::String,
                    Mode::Optional,
                    "How long the passes may take in all, counted in pauses: wait / interval \
                     passes at most.",
                ),
                Attr::new(
                    "count",
                    Ty::Number,
                    Mode::Optional,
                    "Retries after the first pass, at most (0: as wait says; neither: 30 \
                     passes).",
                ),
            ],
            blocks: Vec::new(),
            description: "How destroying the cluster deletes its cloud objects (AWS: some go \
                          asynchronously and are retried; GCE deletes in one pass)."
                .into(),
        },
    }
}

fn delete_path(name: &str) -> Vec<Step> {
    vec![
        Step::Attr("delete".into()),
        Step::Index(0),
        Step::Attr(name.into()),
    ]
}

/// The `delete` block's settings; a bad one is a diagnostic on its attribute.
pub fn deletion_of(v: &Value) -> Result<Deletion, Diags> {
    let b = v
        .get("delete")
        .items()
        .first()
        .cloned()
        .unwrap_or(Value::Null);
    let duration = |name: &str| match b.get(name).as_str() {
        None => Ok(None),
        Some(text) => crate::updater::parse_duration(text)
            .map(Some)
            .ok_or_else(|| {
                vec![Diag::at(
                    delete_path(name),
                    "Invalid duration",
                    format!("{text:?}: expected e.g. 10s, 5m, 1h30m"),
                )]
            }),
    };
    let interval = duration("interval")?;
    let wait = duration("wait")?;
    let count = match b.get("count").as_i64() {
        None => None,
        Some(n) => Some(u32::try_from(n).map_err(|_| {
            vec![Diag::at(
                delete_path("count"),
                "Invalid count",
                format!("{n}: expected 0 or more"),
            )]
        })?),
    };
    Ok(Deletion {
        interval,
        wait,
        count,
    })
}

#[async_trait::async_trait]
impl Resource for ClusterResource {
    fn schema(&self) -> Block {
        let mut block = schema::spec_block(api_schema::internal_cluster_spec());
        let mut attrs = meta_attrs(&[("name", "The cluster's name (a DNS name).")]);
        attrs.push(
            Attr::new(
                "admin_ssh_key",
                Ty::String,
                Mode::Optional,
                "The admin SSH public key.",
            )
            .sensitive(),
        );
        attrs.append(&mut block.attrs);
        block.attrs = attrs;
        block.blocks.push(crate::secrets::block());
        block.blocks.push(delete_block());
        block.description = "A kOps cluster's spec in the state store.".into();
        block
    }

    async fn plan(
        &self,
        _session: Option<&Session>,
        prior: &Value,
        proposed: &Value,
    ) -> Result<Planned, Diags> {
        if proposed.is_null() {
            return Ok(Planned::of(Value::Null));
        }
        if !proposed.has_unknown() {
            validate(proposed)?;
        }
        crate::secrets::check(proposed)?;
        deletion_of(proposed)?;
        let replaced = !prior.is_null() && prior.get("name") != proposed.get("name");
        if prior.is_null() || replaced {
            let mut planned = proposed.clone();
            planned.set("id", proposed.get("name").clone());
            planned.set("revision", Value::Int(1));
            let requires_replace = match replaced {
                true => vec![vec![Step::Attr("name".into())]],
                false => Vec::new(),
            };
            return Ok(Planned {
                state: planned,
                requires_replace,
            });
        }
        // New secrets move the revision too: the nodes get them when they are replaced.
        let changed = match (
            spec_changed(prior, proposed),
            crate::secrets::changed(prior, proposed),
        ) {
            (Some(spec), Some(secrets)) => Some(spec || secrets),
            _ => None,
        };
        let mut planned = keep_if_same(prior, proposed, changed);
        if same_key(prior, proposed) {
            planned.set("admin_ssh_key", prior.get("admin_ssh_key").clone());
        } else {
            planned.set("admin_ssh_key", proposed.get("admin_ssh_key").clone());
        }
        // How a destroy deletes is no change of the cluster, but the state keeps it.
        planned.set("delete", proposed.get("delete").clone());
        Ok(Planned::of(planned))
    }

    async fn apply(
        &self,
        session: &Arc<Session>,
        prior: &Value,
        planned: &Value,
    ) -> Result<Value, Diags> {
        let registry = &session.registry;
        if planned.is_null() {
            let name = name_of(prior).unwrap_or_default();
            crate::cloud::delete_cluster(session, name, deletion_of(prior)?).await?;
            registry
                .delete_cluster(name)
                .await
                .map_err(|e| store_failed("Deleting the cluster's state", &e))?;
            return Ok(Value::Null);
        }
        validate(planned)?;
        let cluster = to_cluster(planned)?;
        let name = cluster.name().to_string();
        if prior.is_null() {
            registry.create_cluster(&cluster).await.map_err(|e| match e {
                StoreError::AlreadyExists { .. } => vec![Diag::attr(
                    "name",
                    "The cluster exists",
                    format!(
                        "{name} is already in {}: import it (terraform import) to manage it here.",
                        session.state
                    ),
                )],
                e => store_failed("Storing the cluster", &e),
            })?;
        } else {
            let current = registry
                .get_cluster(&name)
                .await
                .map_err(|e| store_failed("Reading the cluster", &e))?;
            let mut next = current.value.clone();
            next.spec = cluster.spec;
            next.metadata.labels = cluster.metadata.labels;
            next.metadata.annotations = cluster.metadata.annotations;
            registry
                .update_cluster(&next, &current.version)
                .await
                .map_err(|e| store_failed("Storing the cluster", &e))?;
        }
        if !same_key(prior, planned) {
            registry
                .delete_ssh_public_keys(&name)
                .await
                .map_err(|e| store_failed("Replacing the admin SSH key", &e))?;
            if let Some(key) = planned.get("admin_ssh_key").as_str() {
                registry.add_ssh_public_key(&name, key).await.map_err(|e| {
                    vec![Diag::attr(
                        "admin_ssh_key",
                        "Invalid SSH key",
                        e.to_string(),
                    )]
                })?;
            }
        }
        crate::secrets::write(session, &name, prior, planned).await?;
        Ok(planned.clone())
    }

    async fn read(&self, session: &Arc<Session>, state: &Value) -> Result<Value, Diags> {
        let name = name_of(state).unwrap_or_default();
        let stored = match session.registry.get_cluster(name).await {
            Ok(v) => v.value,
            Err(StoreError::NotFound { .. }) => return Ok(Value::Null),
            Err(e) => return Err(store_failed("Reading the cluster", &e)),
        };
        if let Ok(known) = to_cluster(state)
            && meaning(&known) == meaning(&stored)
        {
            return Ok(state.clone());
        }
        let mut values = from_cluster(&stored)?;
        values.insert("admin_ssh_key".into(), state.get("admin_ssh_key").clone());
        values.insert("secrets".into(), state.get("secrets").clone());
        values.insert("delete".into(), state.get("delete").clone());
        values.insert("revision".into(), next_revision(state, Some(true)));
        Ok(self.schema().complete(values))
    }

    async fn import(&self, session: &Arc<Session>, id: &str) -> Result<Value, Diags> {
        let stored = session
            .registry
            .get_cluster(id)
            .await
            .map_err(|e| store_failed(&format!("Reading cluster {id}"), &e))?;
        let mut values = from_cluster(&stored.value)?;
        let keys = session
            .registry
            .list_ssh_public_keys(id)
            .await
            .map_err(|e| store_failed("Reading the admin SSH key", &e))?;
        let key = keys.into_iter().next().map(|(_, k)| Value::String(k));
        values.insert("admin_ssh_key".into(), key.unwrap_or(Value::Null));
        values.insert("revision".into(), Value::Int(1));
        Ok(self.schema().complete(values))
    }
}
