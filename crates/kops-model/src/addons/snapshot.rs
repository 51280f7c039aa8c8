//! `snapshot-controller.addons.k8s.io`: the CSI volume snapshot controller and its
//! validation webhook (serving certificate from cert-manager), with the snapshot
//! CustomResourceDefinitions and, when asked, a default snapshot class for EBS.

use serde_json::{Value, json};

use super::helpers::crds;
use super::k8s::{binding, role, rule, sa_subject, service_account};
use crate::cluster::ClusterContext;
use crate::error::Result;

const CRDS: &str = include_str!("crds/snapshot-controller.json");

/// The addon's objects.
pub(super) fn objects(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let mut out = crds("snapshot-controller.json", CRDS)?;
    out.extend([
    service_account("snapshot-controller", "kube-system"),
    role("snapshot-controller-leaderelection", "kube-system", vec![
        rule(&["coordination.k8s.io"], &["leases"], &["get", "watch", "list", "delete", "update", "create"]),
    ]),
    role("snapshot-controller-runner", "", vec![
        rule(&[""], &["persistentvolumes"], &["get", "list", "watch"]),
        rule(&[""], &["persistentvolumeclaims"], &["get", "list", "watch", "update"]),
        rule(&[""], &["events"], &["list", "watch", "create", "update", "patch"]),
        rule(&["snapshot.storage.k8s.io"], &["volumesnapshotclasses"], &["get", "list", "watch"]),
        rule(&["snapshot.storage.k8s.io"], &["volumesnapshotcontents"], &["create", "get", "list", "watch", "delete", "patch"]),
        rule(&["snapshot.storage.k8s.io"], &["volumesnapshotcontents/status"], &["patch"]),
        rule(&["snapshot.storage.k8s.io"], &["volumesnapshots"], &["get", "list", "watch", "update", "patch"]),
        rule(&["snapshot.storage.k8s.io"], &["volumesnapshots/status"], &["update", "patch"]),
    ]),
    // RoleBinding snapshot-controller-leaderelection
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "snapshot-controller-leaderelection", "namespace": "kube-system"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": "snapshot-controller-leaderelection",
        },
        "subjects": [{"kind": "ServiceAccount", "name": "snapshot-controller"}],
    }),
    binding("snapshot-controller-role", "", "ClusterRole", "snapshot-controller-runner", vec![sa_subject("snapshot-controller", "kube-system")]),
    // Deployment snapshot-controller
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "snapshot-controller", "namespace": "kube-system"},
        "spec": {
            "minReadySeconds": 15,
            "replicas": 2,
            "selector": {"matchLabels": {"app": "snapshot-controller"}},
            "strategy": {
                "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1},
                "type": "RollingUpdate",
            },
            "template": {
                "metadata": {"labels": {"app": "snapshot-controller"}},
                "spec": {
                    "containers": [
                        {
                            "args": ["--v=5", "--leader-election=true"],
                            "image": "registry.k8s.io/sig-storage/snapshot-controller:v6.0.1",
                            "imagePullPolicy": "IfNotPresent",
                            "name": "snapshot-controller",
                        },
                    ],
                    "serviceAccountName": "snapshot-controller",
                    "topologySpreadConstraints": [
                        {
                            "labelSelector": {"matchLabels": {"app": "snapshot-controller"}},
                            "maxSkew": 1,
                            "topologyKey": "topology.kubernetes.io/zone",
                            "whenUnsatisfiable": "ScheduleAnyway",
                        },
                        {
                            "labelSelector": {"matchLabels": {"app": "snapshot-controller"}},
                            "maxSkew": 1,
                            "topologyKey": "kubernetes.io/hostname",
                            "whenUnsatisfiable": "DoNotSchedule",
                        },
                    ],
                },
            },
        },
    }),
    // Deployment snapshot-validation-deployment
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "labels": {"app": "snapshot-validation"},
            "name": "snapshot-validation-deployment",
            "namespace": "kube-system",
        },
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "snapshot-validation"}},
            "template": {
                "metadata": {"labels": {"app": "snapshot-validation"}},
                "spec": {
                    "containers": [
                        {
                            "args": [
                                "--tls-cert-file=/etc/snapshot-validation-webhook/certs/tls.crt",
                                "--tls-private-key-file=/etc/snapshot-validation-webhook/certs/tls.key",
                            ],
                            "image": "registry.k8s.io/sig-storage/snapshot-validation-webhook:v6.0.1",
                            "imagePullPolicy": "IfNotPresent",
                            "name": "snapshot-validation",
                            "ports": [{"containerPort": 443}],
                            "volumeMounts": [
                                {
                                    "mountPath": "/etc/snapshot-validation-webhook/certs",
                                    "name": "snapshot-validation-webhook-certs",
                                    "readOnly": true,
                                },
                            ],
                        },
                    ],
                    "serviceAccountName": "snapshot-controller",
                    "topologySpreadConstraints": [
                        {
                            "labelSelector": {"matchLabels": {"app": "snapshot-validation"}},
                            "maxSkew": 1,
                            "topologyKey": "topology.kubernetes.io/zone",
                            "whenUnsatisfiable": "ScheduleAnyway",
                        },
                        {
                            "labelSelector": {"matchLabels": {"app": "snapshot-validation"}},
                            "maxSkew": 1,
                            "topologyKey": "kubernetes.io/hostname",
                            "whenUnsatisfiable": "DoNotSchedule",
                        },
                    ],
                    "volumes": [
                        {
                            "name": "snapshot-validation-webhook-certs",
                            "secret": {"secretName": "snapshot-validation-secret"},
                        },
                    ],
                },
            },
        },
    }),
    // Service snapshot-validation-service
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "snapshot-validation-service", "namespace": "kube-system"},
        "spec": {
            "ports": [{"port": 443, "protocol": "TCP", "targetPort": 443}],
            "selector": {"app": "snapshot-validation"},
        },
    }),
    // ValidatingWebhookConfiguration validation-webhook.snapshot.storage.k8s.io
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {
            "annotations": {
                "cert-manager.io/inject-ca-from": "kube-system/snapshot-validation-service",
            },
            "name": "validation-webhook.snapshot.storage.k8s.io",
        },
        "webhooks": [
            {
                "admissionReviewVersions": ["v1", "v1beta1"],
                "clientConfig": {
                    "service": {
                        "name": "snapshot-validation-service",
                        "namespace": "kube-system",
                        "path": "/volumesnapshot",
                    },
                },
                "failurePolicy": "Ignore",
                "name": "validation-webhook.snapshot.storage.k8s.io",
                "rules": [
                    {
                        "apiGroups": ["snapshot.storage.k8s.io"],
                        "apiVersions": ["v1", "v1beta1"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": ["volumesnapshots", "volumesnapshotcontents"],
                        "scope": "*",
                    },
                ],
                "sideEffects": "None",
                "timeoutSeconds": 2,
            },
        ],
    }),
    // Certificate snapshot-validation-service
    json!({
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {"name": "snapshot-validation-service", "namespace": "kube-system"},
        "spec": {
            "dnsNames": [
                "snapshot-validation-service.kube-system.svc",
                format!("snapshot-validation-service.kube-system.svc.{}", ctx.name()),
            ],
            "issuerRef": {"kind": "Issuer", "name": "snapshot-controller.addons.k8s.io"},
            "secretName": "snapshot-validation-secret",
        },
    }),
    ]);
    let default_class = ctx
        .cluster
        .spec
        .snapshot_controller
        .as_ref()
        .and_then(|s| s.install_default_class)
        == Some(true);
    if default_class {
        out.push(json!({
            "apiVersion": "snapshot.storage.k8s.io/v1",
            "kind": "VolumeSnapshotClass",
            "metadata": {
                "annotations": {"snapshot.storage.kubernetes.io/is-default-class": "true"},
                "name": "csi-hostpath-snapclass",
            },
            "deletionPolicy": "Delete",
            "driver": "ebs.csi.aws.com",
        }));
    }
    Ok(out)
}
