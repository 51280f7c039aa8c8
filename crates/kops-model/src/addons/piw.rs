//! `eks-pod-identity-webhook.addons.k8s.io`: Amazon's pod identity webhook, which gives
//! the pods of the service accounts in `spec.iam.serviceAccountExternalPermissions`
//! their IAM role (serving certificate from cert-manager).

use serde_json::{Value, json};

use super::k8s::{binding, role, rule, sa_subject, service_account};
use crate::cluster::ClusterContext;
use crate::error::Result;

/// kOps' `PodIdentityWebhookConfigMapData`: `namespace/name` of each service account with
/// AWS permissions to its role, as Go's JSON encoder writes the map (keys sorted).
fn config(ctx: &ClusterContext) -> String {
    let (partition, account) = ctx.aws_account.clone().unwrap_or_default();
    let mut entries: Vec<(String, String)> = ctx
        .cluster
        .spec
        .iam
        .as_ref()
        .and_then(|i| i.service_account_external_permissions.clone())
        .unwrap_or_default()
        .into_iter()
        .filter(|p| p.aws.is_some())
        .map(|p| {
            let name = p.name.unwrap_or_default();
            let ns = p.namespace.unwrap_or_default();
            let role = crate::aws::naming::truncate(
                &format!("{name}.{}.sa.{}", ns.replace('*', "wildcard"), ctx.name()),
                64,
                false,
            );
            (
                format!("{ns}/{name}"),
                format!("arn:{partition}:iam::{account}:role/{role}"),
            )
        })
        .collect();
    entries.sort();
    entries.dedup_by(|a, b| a.0 == b.0);
    let body: Vec<String> = entries
        .iter()
        .map(|(k, arn)| {
            format!(
                "{}:{{\"RoleARN\":{},\"Audience\":\"amazonaws.com\",\"UseRegionalSTS\":true,\"TokenExpiration\":0}}",
                Value::from(k.as_str()),
                Value::from(arn.as_str())
            )
        })
        .collect();
    format!("{{{}}}", body.join(","))
}

/// The addon's objects.
pub(super) fn objects(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let replicas = ctx
        .cluster
        .spec
        .cloud_provider
        .aws
        .as_ref()
        .and_then(|a| a.pod_identity_webhook.as_ref())
        .and_then(|p| p.replicas)
        .filter(|r| *r != 0)
        .unwrap_or(2);
    let config = config(ctx);
    Ok(vec![
        service_account("pod-identity-webhook", "kube-system"),
        role(
            "pod-identity-webhook",
            "kube-system",
            vec![rule(&[""], &["configmaps"], &["list", "get", "watch"])],
        ),
        binding(
            "pod-identity-webhook",
            "kube-system",
            "Role",
            "pod-identity-webhook",
            vec![sa_subject("pod-identity-webhook", "kube-system")],
        ),
        role(
            "pod-identity-webhook",
            "",
            vec![rule(&[""], &["serviceaccounts"], &["get", "watch", "list"])],
        ),
        binding(
            "pod-identity-webhook",
            "",
            "ClusterRole",
            "pod-identity-webhook",
            vec![sa_subject("pod-identity-webhook", "kube-system")],
        ),
        // Deployment pod-identity-webhook
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "pod-identity-webhook", "namespace": "kube-system"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "pod-identity-webhook"}},
                "template": {
                    "metadata": {"labels": {"app": "pod-identity-webhook"}},
                    "spec": {
                        "containers": [
                            {
                                "command": [
                                    "/webhook",
                                    "--in-cluster=false",
                                    "--namespace=kube-system",
                                    "--service-name=pod-identity-webhook",
                                    "--annotation-prefix=eks.amazonaws.com",
                                    "--token-audience=amazonaws.com",
                                    "--logtostderr",
                                    "--watch-config-map",
                                    "--sts-regional-endpoint",
                                    format!("--aws-default-region={}", ctx.region),
                                    "--v=5",
                                ],
                                "image": "amazon/amazon-eks-pod-identity-webhook:v0.5.7",
                                "name": "pod-identity-webhook",
                                "readinessProbe": {
                                    "failureThreshold": 3,
                                    "httpGet": {"path": "/healthz", "port": 443, "scheme": "HTTPS"},
                                    "initialDelaySeconds": 5,
                                    "periodSeconds": 5,
                                    "successThreshold": 1,
                                    "timeoutSeconds": 1,
                                },
                                "volumeMounts": [
                                    {
                                        "mountPath": "/etc/webhook/certs",
                                        "name": "cert",
                                        "readOnly": true,
                                    },
                                ],
                            },
                        ],
                        "priorityClassName": "system-cluster-critical",
                        "serviceAccountName": "pod-identity-webhook",
                        "topologySpreadConstraints": [
                            {
                                "labelSelector": {"matchLabels": {"app": "pod-identity-webhook"}},
                                "maxSkew": 1,
                                "topologyKey": "topology.kubernetes.io/zone",
                                "whenUnsatisfiable": "ScheduleAnyway",
                            },
                            {
                                "labelSelector": {"matchLabels": {"app": "pod-identity-webhook"}},
                                "maxSkew": 1,
                                "topologyKey": "kubernetes.io/hostname",
                                "whenUnsatisfiable": "DoNotSchedule",
                            },
                        ],
                        "volumes": [
                            {
                                "name": "cert",
                                "secret": {"secretName": "pod-identity-webhook-cert"},
                            },
                        ],
                    },
                },
            },
        }),
        // Certificate pod-identity-webhook
        json!({
            "apiVersion": "cert-manager.io/v1",
            "kind": "Certificate",
            "metadata": {"name": "pod-identity-webhook", "namespace": "kube-system"},
            "spec": {
                "commonName": "pod-identity-webhook.kube-system.svc",
                "dnsNames": [
                    "pod-identity-webhook",
                    "pod-identity-webhook.kube-system",
                    "pod-identity-webhook.kube-system.svc",
                    "pod-identity-webhook.kube-system.svc.local",
                ],
                "duration": "2160h",
                "issuerRef": {"kind": "Issuer", "name": "eks-pod-identity-webhook.addons.k8s.io"},
                "renewBefore": "360h",
                "secretName": "pod-identity-webhook-cert",
            },
        }),
        // MutatingWebhookConfiguration pod-identity-webhook
        json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {
                "annotations": {"cert-manager.io/inject-ca-from": "kube-system/pod-identity-webhook"},
                "name": "pod-identity-webhook",
            },
            "webhooks": [
                {
                    "admissionReviewVersions": ["v1beta1"],
                    "clientConfig": {
                        "service": {
                            "name": "pod-identity-webhook",
                            "namespace": "kube-system",
                            "path": "/mutate",
                        },
                    },
                    "failurePolicy": "Fail",
                    "name": "pod-identity-webhook.amazonaws.com",
                    "objectSelector": {
                        "matchExpressions": [
                            {
                                "key": "kops.k8s.io/managed-by",
                                "operator": "NotIn",
                                "values": ["kops"],
                            },
                            {
                                "key": "k8s-app",
                                "operator": "NotIn",
                                "values": ["kube-apiserver"],
                            },
                        ],
                    },
                    "rules": [
                        {
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "operations": ["CREATE"],
                            "resources": ["pods"],
                        },
                    ],
                    "sideEffects": "None",
                },
            ],
        }),
        // Service pod-identity-webhook
        json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "annotations": {
                    "prometheus.io/port": "9999",
                    "prometheus.io/scheme": "http",
                    "prometheus.io/scrape": "true",
                },
                "name": "pod-identity-webhook",
                "namespace": "kube-system",
            },
            "spec": {
                "ports": [
                    {"name": "webhook", "port": 443, "protocol": "TCP", "targetPort": 443},
                    {
                        "name": "metrics",
                        "port": 9999,
                        "protocol": "TCP",
                        "targetPort": 9999,
                    },
                ],
                "selector": {"app": "pod-identity-webhook"},
            },
        }),
        // ConfigMap pod-identity-webhook
        json!({
            "apiVersion": "v1",
            "data": {
                "config": config,
            },
            "kind": "ConfigMap",
            "metadata": {
                "annotations": {
                    "prometheus.io/port": "9999",
                    "prometheus.io/scheme": "http",
                    "prometheus.io/scrape": "true",
                },
                "name": "pod-identity-webhook",
                "namespace": "kube-system",
            },
        }),
        // PodDisruptionBudget pod-identity-webhook
        json!({
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "pod-identity-webhook", "namespace": "kube-system"},
            "spec": {
                "maxUnavailable": "50%",
                "selector": {"matchLabels": {"app": "pod-identity-webhook"}},
            },
        }),
    ])
}
