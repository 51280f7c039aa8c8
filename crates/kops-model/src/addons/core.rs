//! The addons that are the same for every cluster: the kubelet-api RBAC binding and the
//! default limit range.

use serde_json::{Value, json};

use super::k8s::{binding, meta};

/// `kubelet-api.rbac.addons.k8s.io`: the API server's `kubelet-api` client user may use
/// the kubelet API.
pub(super) fn kubelet_api_rbac() -> Vec<Value> {
    vec![binding(
        "kops:system:kubelet-api-admin",
        "",
        "ClusterRole",
        "system:kubelet-api-admin",
        vec![
            json!({ "apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "kubelet-api" }),
        ],
    )]
}

/// `limit-range.addons.k8s.io`: containers in `default` request 100m CPU unless they say.
pub(super) fn limit_range() -> Vec<Value> {
    vec![json!({
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": meta("limits", "default"),
        "spec": { "limits": [ { "type": "Container", "defaultRequest": { "cpu": "100m" } } ] },
    })]
}
