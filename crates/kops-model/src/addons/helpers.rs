//! Small tools the optional addons share: labels on a built object, a ServiceAccount's
//! token automount, and the CustomResourceDefinitions kept as data.

use serde_json::{Value, json};

use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

/// `obj` with `labels` as its `metadata.labels`.
pub(super) fn labeled(mut obj: Value, labels: &Value) -> Value {
    obj["metadata"]["labels"] = labels.clone();
    obj
}

/// A ServiceAccount with `automountServiceAccountToken` set.
pub(super) fn automount(mut sa: Value, on: bool) -> Value {
    sa["automountServiceAccountToken"] = on.into();
    sa
}

/// The CustomResourceDefinitions an addon ships, read from this crate's JSON copy of
/// their schemas (`crds/<file>`; upstream descriptions left out).
pub(super) fn crds(file: &str, text: &str) -> Result<Vec<Value>> {
    serde_json::from_str(text).map_err(|e| {
        invalid(
            format!("addons/crds/{file}"),
            format!("not a JSON list: {e}"),
        )
    })
}

/// The node affinity that keeps a pod on control-plane nodes (either role label).
pub(super) fn cp_affinity() -> Value {
    let term = |key: &str| json!({ "matchExpressions": [ { "key": key, "operator": "Exists" } ] });
    json!({ "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [
            term("node-role.kubernetes.io/control-plane"),
            term("node-role.kubernetes.io/master"),
        ] } } })
}

/// Tolerations of the control-plane taints (either role label).
pub(super) fn cp_tolerations() -> Value {
    json!([
        { "key": "node-role.kubernetes.io/control-plane", "operator": "Exists" },
        { "key": "node-role.kubernetes.io/master", "operator": "Exists" },
    ])
}

/// kOps' `ControlPlaneControllerReplicas`: two when more than one instance group runs the
/// control plane, else one.
pub(super) fn controller_replicas(ctx: &ClusterContext) -> i64 {
    if ctx.groups.iter().filter(|g| g.is_control_plane()).count() > 1 {
        2
    } else {
        1
    }
}
