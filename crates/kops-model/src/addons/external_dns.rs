//! `external-dns.addons.k8s.io`: ExternalDNS publishing the cluster's records in its DNS
//! zone, in dns-controller's compatibility mode, on the control plane.

use serde_json::{Value, json};

use super::helpers::cp_affinity;
use super::k8s::{binding, role, rule, sa_subject, service_account};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

/// kOps' `ExternalDnsArgv`.
fn args(ctx: &ClusterContext) -> Result<Vec<String>> {
    let spec = &ctx.cluster.spec;
    let ed = spec.external_dns.clone().unwrap_or_default();
    let mut argv = Vec::new();
    if spec.cloud_provider.aws.is_some() {
        argv.push("--provider=aws".to_owned());
    } else if let Some(gce) = spec.cloud_provider.gce.as_ref() {
        argv.push("--provider=google".to_owned());
        argv.push(format!(
            "--google-project={}",
            gce.project.clone().unwrap_or_default()
        ));
    } else {
        return Err(invalid(
            "spec.externalDNS.provider",
            "external-dns is supported on AWS and GCE only",
        ));
    }
    argv.push("--events".to_owned());
    if ed.watch_ingress != Some(false) {
        argv.push("--source=ingress".to_owned());
    }
    argv.push("--source=pod".to_owned());
    argv.push("--source=service".to_owned());
    argv.push("--compatibility=kops-dns-controller".to_owned());
    argv.push("--registry=txt".to_owned());
    argv.push(format!("--txt-owner-id=kops-{}", ctx.name()));
    argv.push(format!(
        "--zone-id-filter={}",
        spec.dns_zone.clone().unwrap_or_default()
    ));
    if let Some(ns) = ed.watch_namespace.as_deref().filter(|n| !n.is_empty()) {
        argv.push(format!("--namespace={ns}"));
    }
    Ok(argv)
}

/// The addon's objects.
pub(super) fn objects(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let args = args(ctx)?;
    Ok(vec![
        // Deployment external-dns
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"labels": {"k8s-app": "external-dns", "version": "v0.13.1"}, "name": "external-dns", "namespace": "kube-system"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"k8s-app": "external-dns"}},
                "strategy": {"type": "Recreate"},
                "template": {
                    "metadata": {
                        "labels": {
                            "k8s-addon": "external-dns.addons.k8s.io",
                            "k8s-app": "external-dns",
                            "version": "v0.13.1",
                        },
                    },
                    "spec": {
                        "affinity": cp_affinity(),
                        "containers": [
                            {
                                "args": args,
                                "env": [
                                    {
                                        "name": "KUBERNETES_SERVICE_HOST",
                                        "value": "127.0.0.1",
                                    },
                                    {"name": "KUBERNETES_SERVICE_PORT", "value": "443"},
                                ],
                                "image": "registry.k8s.io/external-dns/external-dns:v0.14.1",
                                "livenessProbe": {
                                    "failureThreshold": 2,
                                    "httpGet": {"path": "/healthz", "port": "http"},
                                    "initialDelaySeconds": 10,
                                    "periodSeconds": 10,
                                    "successThreshold": 1,
                                    "timeoutSeconds": 5,
                                },
                                "name": "external-dns",
                                "ports": [
                                    {
                                        "containerPort": 7979,
                                        "name": "http",
                                        "protocol": "TCP",
                                    },
                                ],
                                "readinessProbe": {
                                    "failureThreshold": 6,
                                    "httpGet": {"path": "/healthz", "port": "http"},
                                    "initialDelaySeconds": 5,
                                    "periodSeconds": 10,
                                    "successThreshold": 1,
                                    "timeoutSeconds": 5,
                                },
                                "resources": {"requests": {"cpu": "50m", "memory": "50Mi"}},
                                "securityContext": {
                                    "capabilities": {"drop": ["ALL"]},
                                    "readOnlyRootFilesystem": true,
                                    "runAsNonRoot": true,
                                    "runAsUser": 65534,
                                },
                            },
                        ],
                        "dnsPolicy": "Default",
                        "hostNetwork": true,
                        "nodeSelector": null,
                        "priorityClassName": "system-cluster-critical",
                        "securityContext": {"fsGroup": 65534},
                        "serviceAccountName": "external-dns",
                        "tolerations": [
                            {
                                "effect": "NoSchedule",
                                "key": "node-role.kubernetes.io/control-plane",
                            },
                            {
                                "effect": "NoSchedule",
                                "key": "node-role.kubernetes.io/master",
                            },
                            {"effect": "NoSchedule", "key": "node.kubernetes.io/not-ready"},
                        ],
                    },
                },
            },
        }),
        // Service external-dns
        json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "external-dns", "namespace": "kube-system"},
            "spec": {
                "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http"}],
                "selector": {"k8s-app": "external-dns"},
                "type": "ClusterIP",
            },
        }),
        service_account("external-dns", "kube-system"),
        role(
            "kops:external-dns",
            "",
            vec![
                rule(
                    &[""],
                    &["services", "endpoints", "pods"],
                    &["get", "watch", "list"],
                ),
                rule(
                    &["extensions", "networking.k8s.io"],
                    &["ingresses"],
                    &["get", "watch", "list"],
                ),
                rule(&[""], &["nodes"], &["list", "watch"]),
            ],
        ),
        binding(
            "kops:external-dns",
            "",
            "ClusterRole",
            "kops:external-dns",
            vec![sa_subject("external-dns", "kube-system")],
        ),
    ])
}
