//! Small builders for the Kubernetes objects the addons are made of (JSON values in the
//! shape the API server reads).

use serde_json::{Value, json};

/// `metadata` with a name and, unless empty, a namespace.
pub(super) fn meta(name: &str, namespace: &str) -> Value {
    if namespace.is_empty() {
        json!({ "name": name })
    } else {
        json!({ "name": name, "namespace": namespace })
    }
}

/// An RBAC policy rule.
pub(super) fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Value {
    json!({ "apiGroups": groups, "resources": resources, "verbs": verbs })
}

/// An RBAC policy rule limited to named objects.
pub(super) fn named_rule(
    groups: &[&str],
    resources: &[&str],
    names: &[&str],
    verbs: &[&str],
) -> Value {
    json!({ "apiGroups": groups, "resources": resources, "resourceNames": names, "verbs": verbs })
}

/// A ServiceAccount.
pub(super) fn service_account(name: &str, namespace: &str) -> Value {
    json!({ "apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(name, namespace) })
}

/// A ClusterRole (or, with a namespace, a Role).
pub(super) fn role(name: &str, namespace: &str, rules: Vec<Value>) -> Value {
    let kind = if namespace.is_empty() {
        "ClusterRole"
    } else {
        "Role"
    };
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": meta(name, namespace),
        "rules": rules,
    })
}

/// A ClusterRoleBinding (or, with a namespace, a RoleBinding) of `role_kind`/`role` to
/// `subjects`.
pub(super) fn binding(
    name: &str,
    namespace: &str,
    role_kind: &str,
    role: &str,
    subjects: Vec<Value>,
) -> Value {
    let kind = if namespace.is_empty() {
        "ClusterRoleBinding"
    } else {
        "RoleBinding"
    };
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": meta(name, namespace),
        "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role },
        "subjects": subjects,
    })
}

/// A ServiceAccount subject.
pub(super) fn sa_subject(name: &str, namespace: &str) -> Value {
    json!({ "kind": "ServiceAccount", "name": name, "namespace": namespace })
}

/// `{name: value}` environment variable.
pub(super) fn env(name: &str, value: &str) -> Value {
    json!({ "name": name, "value": value })
}

/// An environment variable from a field of the pod.
pub(super) fn env_field(name: &str, path: &str) -> Value {
    json!({ "name": name, "valueFrom": { "fieldRef": { "fieldPath": path } } })
}

/// A hostPath volume.
pub(super) fn host_path_volume(name: &str, path: &str, type_: &str) -> Value {
    if type_.is_empty() {
        json!({ "name": name, "hostPath": { "path": path } })
    } else {
        json!({ "name": name, "hostPath": { "path": path, "type": type_ } })
    }
}

/// A volume mount.
pub(super) fn mount(name: &str, path: &str) -> Value {
    json!({ "name": name, "mountPath": path })
}
