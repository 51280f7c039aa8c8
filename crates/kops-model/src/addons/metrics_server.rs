//! `metrics-server.addons.k8s.io`: the resource metrics API server. Insecure by default
//! (it skips the kubelets' TLS check and serves a self-signed certificate); secure, it
//! serves a certificate cert-manager issues.

use serde_json::{Value, json};

use super::helpers::labeled;
use super::k8s::{binding, role, rule, sa_subject, service_account};
use crate::cluster::ClusterContext;
use crate::error::Result;

const NAME: &str = "metrics-server";
const NS: &str = "kube-system";

/// The addon's objects.
pub(super) fn objects(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let ms = ctx.cluster.spec.metrics_server.clone().unwrap_or_default();
    let insecure = ms.insecure.unwrap_or(true);
    let image = ms
        .image
        .clone()
        .filter(|i| !i.is_empty())
        .unwrap_or_else(|| "registry.k8s.io/metrics-server/metrics-server:v0.8.0".into());
    let address_type = if ctx.is_ipv6_only() || ctx.cluster.spec.cloud_provider.aws.is_none() {
        "InternalIP"
    } else {
        "Hostname"
    };
    let mut args = vec![
        "--secure-port=10250".to_owned(),
        "--kubelet-use-node-status-port".to_owned(),
        "--metric-resolution=15s".to_owned(),
        format!("--kubelet-preferred-address-types={address_type}"),
    ];
    let mut mounts = Vec::new();
    let mut volumes = Vec::new();
    if insecure {
        args.push("--cert-dir=/tmp".into());
        args.push("--kubelet-insecure-tls".into());
    } else {
        args.push("--tls-cert-file=/srv/tls.crt".into());
        args.push("--tls-private-key-file=/srv/tls.key".into());
        mounts.push(json!({"mountPath": "/srv", "name": "certs"}));
        volumes.push(json!({"name": "certs", "secret": {"secretName": "metrics-server-tls"}}));
    }
    mounts.push(json!({"mountPath": "/tmp", "name": "tmp-dir"}));
    volumes.push(json!({"emptyDir": {}, "name": "tmp-dir"}));
    let l0 = json!({"k8s-app": NAME});
    let mut reader = l0.clone();
    for k in ["admin", "edit", "view"] {
        reader[format!("rbac.authorization.k8s.io/aggregate-to-{k}")] = "true".into();
    }
    let sel = json!({"matchLabels": {"k8s-app": NAME}});
    let spread = |key: &str, when: &str| json!({ "labelSelector": sel, "maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": when });
    let probe = |path: &str| json!({ "failureThreshold": 3, "httpGet": {"path": path, "port": "https", "scheme": "HTTPS"}, "periodSeconds": 10 });
    let mut readiness = probe("/readyz");
    readiness["initialDelaySeconds"] = 20.into();
    let sa = || vec![sa_subject(NAME, NS)];
    let mut api_service = json!({
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"labels": l0, "name": "v1beta1.metrics.k8s.io"},
        "spec": {
            "group": "metrics.k8s.io",
            "groupPriorityMinimum": 100,
            "service": {"name": NAME, "namespace": NS},
            "version": "v1beta1",
            "versionPriority": 100,
        },
    });
    if insecure {
        api_service["spec"]["insecureSkipTLSVerify"] = true.into();
    } else {
        api_service["metadata"]["annotations"] =
            json!({"cert-manager.io/inject-ca-from": "kube-system/metrics-server"});
    }
    let mut out = vec![
        labeled(service_account(NAME, NS), &l0),
        labeled(
            role(
                "system:aggregated-metrics-reader",
                "",
                vec![rule(
                    &["metrics.k8s.io"],
                    &["pods", "nodes"],
                    &["get", "list", "watch"],
                )],
            ),
            &reader,
        ),
        labeled(
            role(
                "system:metrics-server",
                "",
                vec![
                    rule(&[""], &["nodes/metrics"], &["get"]),
                    rule(&[""], &["pods", "nodes"], &["get", "list", "watch"]),
                ],
            ),
            &l0,
        ),
        labeled(
            binding(
                "metrics-server-auth-reader",
                NS,
                "Role",
                "extension-apiserver-authentication-reader",
                sa(),
            ),
            &l0,
        ),
        labeled(
            binding(
                "metrics-server:system:auth-delegator",
                "",
                "ClusterRole",
                "system:auth-delegator",
                sa(),
            ),
            &l0,
        ),
        labeled(
            binding(
                "system:metrics-server",
                "",
                "ClusterRole",
                "system:metrics-server",
                sa(),
            ),
            &l0,
        ),
        json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"labels": l0, "name": NAME, "namespace": NS},
            "spec": {
                "ports": [{"appProtocol": "https", "name": "https", "port": 443, "protocol": "TCP", "targetPort": "https"}],
                "selector": {"k8s-app": NAME},
            },
        }),
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"labels": l0, "name": NAME, "namespace": NS},
            "spec": {
                "replicas": 2,
                "selector": sel,
                "template": {
                    "metadata": {"labels": {"k8s-app": NAME}},
                    "spec": {
                        "containers": [{
                            "args": args,
                            "image": image,
                            "imagePullPolicy": "IfNotPresent",
                            "livenessProbe": probe("/livez"),
                            "name": NAME,
                            "ports": [{"containerPort": 10250, "name": "https", "protocol": "TCP"}],
                            "readinessProbe": readiness,
                            "resources": {"requests": {"cpu": "100m", "memory": "200Mi"}},
                            "securityContext": {
                                "allowPrivilegeEscalation": false,
                                "capabilities": {"drop": ["ALL"]},
                                "readOnlyRootFilesystem": true,
                                "runAsNonRoot": true,
                                "runAsUser": 1000,
                                "seccompProfile": {"type": "RuntimeDefault"},
                            },
                            "volumeMounts": mounts,
                        }],
                        "nodeSelector": {"kubernetes.io/os": "linux"},
                        "priorityClassName": "system-cluster-critical",
                        "serviceAccountName": NAME,
                        "topologySpreadConstraints": [
                            spread("topology.kubernetes.io/zone", "ScheduleAnyway"),
                            spread("kubernetes.io/hostname", "DoNotSchedule"),
                        ],
                        "volumes": volumes,
                    },
                },
            },
        }),
        api_service,
        json!({
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"labels": l0, "name": NAME, "namespace": NS},
            "spec": {"minAvailable": 1, "selector": sel},
        }),
    ];
    if !insecure {
        out.push(json!({
            "apiVersion": "cert-manager.io/v1",
            "kind": "Certificate",
            "metadata": {"name": NAME, "namespace": NS},
            "spec": {
                "dnsNames": ["metrics-server.kube-system.svc"],
                "duration": "2160h",
                "issuerRef": {"kind": "Issuer", "name": "metrics-server.addons.k8s.io"},
                "renewBefore": "360h",
                "secretName": "metrics-server-tls",
                "usages": ["server auth"],
            },
        }));
    }
    Ok(out)
}
