//! `certmanager.io`: cert-manager (controller, CA injector and webhook) with its
//! CustomResourceDefinitions, run on the control plane.

use serde_json::{Value, json};

use super::helpers::{automount, cp_affinity, cp_tolerations, crds, labeled};
use super::k8s::{binding, env, env_field, named_rule, role, rule, sa_subject, service_account};
use crate::cluster::ClusterContext;
use crate::error::Result;

/// The cert-manager release kOps ships.
const VERSION: &str = "v1.19.5";

const CRDS: &str = include_str!("crds/cert-manager.json");

/// The labels of one cert-manager component.
fn component(app: &str, component: &str) -> Value {
    json!({
        "app": app,
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/instance": "cert-manager",
        "app.kubernetes.io/name": app,
        "app.kubernetes.io/version": VERSION,
    })
}

/// `labels` with `key: "true"` for each aggregation key.
fn aggregated(labels: &Value, keys: &[&str]) -> Value {
    let mut l = labels.clone();
    for k in keys {
        l[format!("rbac.authorization.k8s.io/aggregate-to-{k}")] = "true".into();
    }
    l
}

/// The labels of the components and of the aggregated ClusterRoles.
struct Labels {
    cainjector: Value,
    controller: Value,
    webhook: Value,
    cm_component: Value,
    l3: Value,
    l4: Value,
    l5: Value,
}

impl Labels {
    fn new() -> Self {
        let controller = component("cert-manager", "controller");
        Self {
            cainjector: component("cainjector", "cainjector"),
            webhook: component("webhook", "webhook"),
            cm_component: component("cert-manager", "cert-manager"),
            l3: aggregated(&controller, &["cluster-reader"]),
            l4: aggregated(&controller, &["admin", "cluster-reader", "edit", "view"]),
            l5: aggregated(&controller, &["admin", "edit"]),
            controller,
        }
    }
}

/// The addon's objects, in kOps' manifest order.
pub(super) fn objects(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let l = Labels::new();
    let mut out = service_accounts(&l);
    out.extend(crds("cert-manager.json", CRDS)?);
    out.extend(cluster_roles(&l));
    out.extend(cluster_role_bindings(&l));
    out.extend(leader_election_rbac(&l));
    out.extend([
        cainjector_service(&l.cainjector),
        controller_service(&l.controller),
        webhook_service(&l.webhook),
        cainjector_deployment(&l.cainjector),
        controller_deployment(ctx, &l.controller),
        webhook_deployment(&l.webhook),
        mutating_webhook(&l.webhook),
        validating_webhook(&l.webhook),
    ]);
    Ok(out)
}

/// The ServiceAccounts of the CA injector, the controller and the webhook.
fn service_accounts(l: &Labels) -> Vec<Value> {
    vec![
        labeled(
            automount(
                service_account("cert-manager-cainjector", "kube-system"),
                true,
            ),
            &l.cainjector,
        ),
        labeled(
            automount(service_account("cert-manager", "kube-system"), true),
            &l.controller,
        ),
        labeled(
            automount(service_account("cert-manager-webhook", "kube-system"), true),
            &l.webhook,
        ),
    ]
}

/// The ClusterRoles, by component, then the aggregated ones.
#[rustfmt::skip]
fn cluster_roles(l: &Labels) -> Vec<Value> {
    vec![
    labeled(role("cert-manager-cainjector", "", vec![
        rule(&["cert-manager.io"], &["certificates"], &["get", "list", "watch"]),
        rule(&[""], &["secrets"], &["get", "list", "watch"]),
        rule(&[""], &["events"], &["get", "create", "update", "patch"]),
        rule(&["admissionregistration.k8s.io"], &["validatingwebhookconfigurations", "mutatingwebhookconfigurations"], &["get", "list", "watch", "update", "patch"]),
        rule(&["apiregistration.k8s.io"], &["apiservices"], &["get", "list", "watch", "update", "patch"]),
        rule(&["apiextensions.k8s.io"], &["customresourcedefinitions"], &["get", "list", "watch", "update", "patch"]),
    ]), &l.cainjector),
    labeled(role("cert-manager-controller-issuers", "", vec![
        rule(&["cert-manager.io"], &["issuers", "issuers/status"], &["update", "patch"]),
        rule(&["cert-manager.io"], &["issuers"], &["get", "list", "watch"]),
        rule(&[""], &["secrets"], &["get", "list", "watch", "create", "update", "delete"]),
        rule(&[""], &["events"], &["create", "patch"]),
    ]), &l.controller),
    labeled(role("cert-manager-controller-clusterissuers", "", vec![
        rule(&["cert-manager.io"], &["clusterissuers", "clusterissuers/status"], &["update", "patch"]),
        rule(&["cert-manager.io"], &["clusterissuers"], &["get", "list", "watch"]),
        rule(&[""], &["secrets"], &["get", "list", "watch", "create", "update", "delete"]),
        rule(&[""], &["events"], &["create", "patch"]),
    ]), &l.controller),
    labeled(role("cert-manager-controller-certificates", "", vec![
        rule(&["cert-manager.io"], &["certificates", "certificates/status", "certificaterequests", "certificaterequests/status"], &["update", "patch"]),
        rule(&["cert-manager.io"], &["certificates", "certificaterequests", "clusterissuers", "issuers"], &["get", "list", "watch"]),
        rule(&["cert-manager.io"], &["certificates/finalizers", "certificaterequests/finalizers"], &["update"]),
        rule(&["acme.cert-manager.io"], &["orders"], &["create", "delete", "get", "list", "watch"]),
        rule(&[""], &["secrets"], &["get", "list", "watch", "create", "update", "delete", "patch"]),
        rule(&[""], &["events"], &["create", "patch"]),
    ]), &l.controller),
    labeled(role("cert-manager-controller-orders", "", vec![
        rule(&["acme.cert-manager.io"], &["orders", "orders/status"], &["update", "patch"]),
        rule(&["acme.cert-manager.io"], &["orders", "challenges"], &["get", "list", "watch"]),
        rule(&["cert-manager.io"], &["clusterissuers", "issuers"], &["get", "list", "watch"]),
        rule(&["acme.cert-manager.io"], &["challenges"], &["create", "delete"]),
        rule(&["acme.cert-manager.io"], &["orders/finalizers"], &["update"]),
        rule(&[""], &["secrets"], &["get", "list", "watch"]),
        rule(&[""], &["events"], &["create", "patch"]),
    ]), &l.controller),
    labeled(role("cert-manager-controller-challenges", "", vec![
        rule(&["acme.cert-manager.io"], &["challenges", "challenges/status"], &["update", "patch"]),
        rule(&["acme.cert-manager.io"], &["challenges"], &["get", "list", "watch"]),
        rule(&["cert-manager.io"], &["issuers", "clusterissuers"], &["get", "list", "watch"]),
        rule(&[""], &["secrets"], &["get", "list", "watch"]),
        rule(&[""], &["events"], &["create", "patch"]),
        rule(&[""], &["pods", "services"], &["get", "list", "watch", "create", "delete"]),
        rule(&["networking.k8s.io"], &["ingresses"], &["get", "list", "watch", "create", "delete", "update"]),
        rule(&["gateway.networking.k8s.io"], &["httproutes"], &["get", "list", "watch", "create", "delete", "update"]),
        rule(&["route.openshift.io"], &["routes/custom-host"], &["create"]),
        rule(&["acme.cert-manager.io"], &["challenges/finalizers"], &["update"]),
        rule(&[""], &["secrets"], &["get", "list", "watch"]),
    ]), &l.controller),
    labeled(role("cert-manager-controller-ingress-shim", "", vec![
        rule(&["cert-manager.io"], &["certificates", "certificaterequests"], &["create", "update", "delete"]),
        rule(&["cert-manager.io"], &["certificates", "certificaterequests", "issuers", "clusterissuers"], &["get", "list", "watch"]),
        rule(&["networking.k8s.io"], &["ingresses"], &["get", "list", "watch"]),
        rule(&["networking.k8s.io"], &["ingresses/finalizers"], &["update"]),
        rule(&["gateway.networking.k8s.io"], &["gateways", "httproutes"], &["get", "list", "watch"]),
        rule(&["gateway.networking.k8s.io"], &["gateways/finalizers", "httproutes/finalizers"], &["update"]),
        rule(&[""], &["events"], &["create", "patch"]),
    ]), &l.controller),
    labeled(role("cert-manager-cluster-view", "", vec![
        rule(&["cert-manager.io"], &["clusterissuers"], &["get", "list", "watch"]),
    ]), &l.l3),
    labeled(role("cert-manager-view", "", vec![
        rule(&["cert-manager.io"], &["certificates", "certificaterequests", "issuers"], &["get", "list", "watch"]),
        rule(&["acme.cert-manager.io"], &["challenges", "orders"], &["get", "list", "watch"]),
    ]), &l.l4),
    labeled(role("cert-manager-edit", "", vec![
        rule(&["cert-manager.io"], &["certificates", "certificaterequests", "issuers"], &["create", "delete", "deletecollection", "patch", "update"]),
        rule(&["cert-manager.io"], &["certificates/status"], &["update"]),
        rule(&["acme.cert-manager.io"], &["challenges", "orders"], &["create", "delete", "deletecollection", "patch", "update"]),
    ]), &l.l5),
    labeled(role("cert-manager-controller-approve:cert-manager-io", "", vec![
        named_rule(&["cert-manager.io"], &["signers"], &["issuers.cert-manager.io/*", "clusterissuers.cert-manager.io/*"], &["approve"]),
    ]), &l.cm_component),
    labeled(role("cert-manager-controller-certificatesigningrequests", "", vec![
        rule(&["certificates.k8s.io"], &["certificatesigningrequests"], &["get", "list", "watch", "update"]),
        rule(&["certificates.k8s.io"], &["certificatesigningrequests/status"], &["update", "patch"]),
        named_rule(&["certificates.k8s.io"], &["signers"], &["issuers.cert-manager.io/*", "clusterissuers.cert-manager.io/*"], &["sign"]),
        rule(&["authorization.k8s.io"], &["subjectaccessreviews"], &["create"]),
    ]), &l.cm_component),
    labeled(role("cert-manager-webhook:subjectaccessreviews", "", vec![
        rule(&["authorization.k8s.io"], &["subjectaccessreviews"], &["create"]),
    ]), &l.webhook),
    ]
}

/// The ClusterRoleBindings.
#[rustfmt::skip]
fn cluster_role_bindings(l: &Labels) -> Vec<Value> {
    vec![
    labeled(binding("cert-manager-cainjector", "", "ClusterRole", "cert-manager-cainjector", vec![sa_subject("cert-manager-cainjector", "kube-system")]), &l.cainjector),
    labeled(binding("cert-manager-controller-issuers", "", "ClusterRole", "cert-manager-controller-issuers", vec![sa_subject("cert-manager", "kube-system")]), &l.controller),
    labeled(binding("cert-manager-controller-clusterissuers", "", "ClusterRole", "cert-manager-controller-clusterissuers", vec![sa_subject("cert-manager", "kube-system")]), &l.controller),
    labeled(binding("cert-manager-controller-certificates", "", "ClusterRole", "cert-manager-controller-certificates", vec![sa_subject("cert-manager", "kube-system")]), &l.controller),
    labeled(binding("cert-manager-controller-orders", "", "ClusterRole", "cert-manager-controller-orders", vec![sa_subject("cert-manager", "kube-system")]), &l.controller),
    labeled(binding("cert-manager-controller-challenges", "", "ClusterRole", "cert-manager-controller-challenges", vec![sa_subject("cert-manager", "kube-system")]), &l.controller),
    labeled(binding("cert-manager-controller-ingress-shim", "", "ClusterRole", "cert-manager-controller-ingress-shim", vec![sa_subject("cert-manager", "kube-system")]), &l.controller),
    labeled(binding("cert-manager-controller-approve:cert-manager-io", "", "ClusterRole", "cert-manager-controller-approve:cert-manager-io", vec![sa_subject("cert-manager", "kube-system")]), &l.cm_component),
    labeled(binding("cert-manager-controller-certificatesigningrequests", "", "ClusterRole", "cert-manager-controller-certificatesigningrequests", vec![sa_subject("cert-manager", "kube-system")]), &l.cm_component),
    labeled(binding("cert-manager-webhook:subjectaccessreviews", "", "ClusterRole", "cert-manager-webhook:subjectaccessreviews", vec![sa_subject("cert-manager-webhook", "kube-system")]), &l.webhook),
    ]
}

/// The leader-election, token-request and dynamic-serving Roles in kube-system and their bindings.
#[rustfmt::skip]
fn leader_election_rbac(l: &Labels) -> Vec<Value> {
    vec![
    labeled(role("cert-manager-cainjector:leaderelection", "kube-system", vec![
        named_rule(&["coordination.k8s.io"], &["leases"], &["cert-manager-cainjector-leader-election", "cert-manager-cainjector-leader-election-core"], &["get", "update", "patch"]),
        rule(&["coordination.k8s.io"], &["leases"], &["create"]),
    ]), &l.cainjector),
    labeled(role("cert-manager:leaderelection", "kube-system", vec![
        named_rule(&["coordination.k8s.io"], &["leases"], &["cert-manager-controller"], &["get", "update", "patch"]),
        rule(&["coordination.k8s.io"], &["leases"], &["create"]),
    ]), &l.controller),
    labeled(role("cert-manager-tokenrequest", "kube-system", vec![
        named_rule(&[""], &["serviceaccounts/token"], &["cert-manager"], &["create"]),
    ]), &l.controller),
    labeled(role("cert-manager-webhook:dynamic-serving", "kube-system", vec![
        named_rule(&[""], &["secrets"], &["cert-manager-webhook-ca"], &["get", "list", "watch", "update"]),
        rule(&[""], &["secrets"], &["create"]),
    ]), &l.webhook),
    labeled(binding("cert-manager-cainjector:leaderelection", "kube-system", "Role", "cert-manager-cainjector:leaderelection", vec![sa_subject("cert-manager-cainjector", "kube-system")]), &l.cainjector),
    labeled(binding("cert-manager:leaderelection", "kube-system", "Role", "cert-manager:leaderelection", vec![sa_subject("cert-manager", "kube-system")]), &l.controller),
    labeled(binding("cert-manager-tokenrequest", "kube-system", "Role", "cert-manager-tokenrequest", vec![sa_subject("cert-manager", "kube-system")]), &l.controller),
    labeled(binding("cert-manager-webhook:dynamic-serving", "kube-system", "Role", "cert-manager-webhook:dynamic-serving", vec![sa_subject("cert-manager-webhook", "kube-system")]), &l.webhook),
    ]
}

/// The CA injector's metrics Service.
fn cainjector_service(cainjector: &Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "labels": cainjector,
            "name": "cert-manager-cainjector",
            "namespace": "kube-system",
        },
        "spec": {
            "ports": [{"name": "http-metrics", "port": 9402, "protocol": "TCP"}],
            "selector": {
                "app.kubernetes.io/component": "cainjector",
                "app.kubernetes.io/instance": "cert-manager",
                "app.kubernetes.io/name": "cainjector",
            },
            "type": "ClusterIP",
        },
    })
}

/// The controller's metrics Service.
fn controller_service(controller: &Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"labels": controller, "name": "cert-manager", "namespace": "kube-system"},
        "spec": {
            "ports": [
                {
                    "name": "tcp-prometheus-servicemonitor",
                    "port": 9402,
                    "protocol": "TCP",
                    "targetPort": "http-metrics",
                },
            ],
            "selector": {
                "app.kubernetes.io/component": "controller",
                "app.kubernetes.io/instance": "cert-manager",
                "app.kubernetes.io/name": "cert-manager",
            },
            "type": "ClusterIP",
        },
    })
}

/// The webhook's Service.
fn webhook_service(webhook: &Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"labels": webhook, "name": "cert-manager-webhook", "namespace": "kube-system"},
        "spec": {
            "ports": [
                {
                    "name": "https",
                    "port": 443,
                    "protocol": "TCP",
                    "targetPort": "https",
                },
                {
                    "name": "metrics",
                    "port": 9402,
                    "protocol": "TCP",
                    "targetPort": "http-metrics",
                },
            ],
            "selector": {
                "app.kubernetes.io/component": "webhook",
                "app.kubernetes.io/instance": "cert-manager",
                "app.kubernetes.io/name": "webhook",
            },
            "type": "ClusterIP",
        },
    })
}

/// The CA injector's Deployment.
fn cainjector_deployment(cainjector: &Value) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "labels": cainjector,
            "name": "cert-manager-cainjector",
            "namespace": "kube-system",
        },
        "spec": {
            "replicas": 1,
            "selector": {
                "matchLabels": {
                    "app.kubernetes.io/component": "cainjector",
                    "app.kubernetes.io/instance": "cert-manager",
                    "app.kubernetes.io/name": "cainjector",
                },
            },
            "template": {
                "metadata": {
                    "annotations": {
                        "prometheus.io/path": "/metrics",
                        "prometheus.io/port": "9402",
                        "prometheus.io/scrape": "true",
                    },
                    "labels": cainjector,
                },
                "spec": {
                    "affinity": cp_affinity(),
                    "containers": [
                        {
                            "args": ["--v=2", "--leader-election-namespace=kube-system"],
                            "env": [
                                {
                                    "name": "POD_NAMESPACE",
                                    "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
                                },
                            ],
                            "image": format!("quay.io/jetstack/cert-manager-cainjector:{VERSION}"),
                            "imagePullPolicy": "IfNotPresent",
                            "name": "cert-manager-cainjector",
                            "ports": [
                                {
                                    "containerPort": 9402,
                                    "name": "http-metrics",
                                    "protocol": "TCP",
                                },
                            ],
                            "securityContext": {
                                "allowPrivilegeEscalation": false,
                                "capabilities": {"drop": ["ALL"]},
                                "readOnlyRootFilesystem": true,
                            },
                        },
                    ],
                    "enableServiceLinks": false,
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "priorityClassName": "system-cluster-critical",
                    "securityContext": {
                        "runAsNonRoot": true,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "serviceAccountName": "cert-manager-cainjector",
                    "tolerations": cp_tolerations(),
                },
            },
        },
    })
}

/// The controller's Deployment, with the spec's default issuer, feature gates and nameservers.
fn controller_deployment(ctx: &ClusterContext, controller: &Value) -> Value {
    let cm = ctx.cluster.spec.cert_manager.clone().unwrap_or_default();
    let mut controller_args: Vec<String> = [
        "--v=2",
        "--cluster-resource-namespace=$(POD_NAMESPACE)",
        "--leader-election-namespace=kube-system",
    ]
    .map(String::from)
    .to_vec();
    controller_args.push(format!(
        "--acme-http01-solver-image=quay.io/jetstack/cert-manager-acmesolver:{VERSION}"
    ));
    controller_args.push("--max-concurrent-challenges=60".into());
    controller_args.push("--enable-certificate-owner-ref=true".into());
    if let Some(issuer) = cm.default_issuer.as_deref().filter(|i| !i.is_empty()) {
        controller_args.push(format!("--default-issuer-name={issuer}"));
        controller_args.push("--default-issuer-kind=ClusterIssuer".into());
        controller_args.push("--default-issuer-group=cert-manager.io".into());
    }
    for (gate, on) in cm.feature_gates.iter().flatten() {
        controller_args.push(format!("--feature-gates={gate}={on}"));
    }
    let mut controller_env = vec![env_field("POD_NAMESPACE", "metadata.namespace")];
    if ctx.cluster.spec.cloud_provider.aws.is_some() {
        controller_env.push(env("AWS_REGION", &ctx.region));
    }
    let mut deployment = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"labels": controller, "name": "cert-manager", "namespace": "kube-system"},
        "spec": {
            "replicas": 1,
            "selector": {
                "matchLabels": {
                    "app.kubernetes.io/component": "controller",
                    "app.kubernetes.io/instance": "cert-manager",
                    "app.kubernetes.io/name": "cert-manager",
                },
            },
            "template": {
                "metadata": {
                    "annotations": {
                        "prometheus.io/path": "/metrics",
                        "prometheus.io/port": "9402",
                        "prometheus.io/scrape": "true",
                    },
                    "labels": controller,
                },
                "spec": {
                    "affinity": cp_affinity(),
                    "containers": [
                        {
                            "args": controller_args,
                            "env": controller_env,
                            "image": format!("quay.io/jetstack/cert-manager-controller:{VERSION}"),
                            "imagePullPolicy": "IfNotPresent",
                            "livenessProbe": {
                                "failureThreshold": 8,
                                "httpGet": {
                                    "path": "/livez",
                                    "port": "http-healthz",
                                    "scheme": "HTTP",
                                },
                                "initialDelaySeconds": 10,
                                "periodSeconds": 10,
                                "successThreshold": 1,
                                "timeoutSeconds": 15,
                            },
                            "name": "cert-manager-controller",
                            "ports": [
                                {
                                    "containerPort": 9402,
                                    "name": "http-metrics",
                                    "protocol": "TCP",
                                },
                                {
                                    "containerPort": 9403,
                                    "name": "http-healthz",
                                    "protocol": "TCP",
                                },
                            ],
                            "securityContext": {
                                "allowPrivilegeEscalation": false,
                                "capabilities": {"drop": ["ALL"]},
                                "readOnlyRootFilesystem": true,
                            },
                        },
                    ],
                    "enableServiceLinks": false,
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "priorityClassName": "system-cluster-critical",
                    "securityContext": {
                        "runAsNonRoot": true,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "serviceAccountName": "cert-manager",
                    "tolerations": cp_tolerations(),
                },
            },
        },
    });
    if let Some(ns) = cm.nameservers.as_ref().filter(|n| !n.is_empty())
        && let Some(pod) = deployment.pointer_mut("/spec/template/spec")
    {
        pod["dnsConfig"] = json!({ "nameservers": ns });
        pod["dnsPolicy"] = "None".into();
    }
    deployment
}

/// The webhook's Deployment.
fn webhook_deployment(webhook: &Value) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"labels": webhook, "name": "cert-manager-webhook", "namespace": "kube-system"},
        "spec": {
            "replicas": 1,
            "selector": {
                "matchLabels": {
                    "app.kubernetes.io/component": "webhook",
                    "app.kubernetes.io/instance": "cert-manager",
                    "app.kubernetes.io/name": "webhook",
                },
            },
            "template": {
                "metadata": {
                    "annotations": {
                        "prometheus.io/path": "/metrics",
                        "prometheus.io/port": "9402",
                        "prometheus.io/scrape": "true",
                    },
                    "labels": webhook,
                },
                "spec": {
                    "affinity": cp_affinity(),
                    "containers": [
                        {
                            "args": [
                                "--v=2",
                                "--secure-port=10250",
                                "--dynamic-serving-ca-secret-namespace=$(POD_NAMESPACE)",
                                "--dynamic-serving-ca-secret-name=cert-manager-webhook-ca",
                                "--dynamic-serving-dns-names=cert-manager-webhook",
                                "--dynamic-serving-dns-names=cert-manager-webhook.$(POD_NAMESPACE)",
                                "--dynamic-serving-dns-names=cert-manager-webhook.$(POD_NAMESPACE).svc",
                            ],
                            "env": [
                                {
                                    "name": "POD_NAMESPACE",
                                    "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
                                },
                            ],
                            "image": format!("quay.io/jetstack/cert-manager-webhook:{VERSION}"),
                            "imagePullPolicy": "IfNotPresent",
                            "livenessProbe": {
                                "failureThreshold": 3,
                                "httpGet": {
                                    "path": "/livez",
                                    "port": "healthcheck",
                                    "scheme": "HTTP",
                                },
                                "initialDelaySeconds": 60,
                                "periodSeconds": 10,
                                "successThreshold": 1,
                                "timeoutSeconds": 1,
                            },
                            "name": "cert-manager-webhook",
                            "ports": [
                                {
                                    "containerPort": 10250,
                                    "name": "https",
                                    "protocol": "TCP",
                                },
                                {
                                    "containerPort": 6080,
                                    "name": "healthcheck",
                                    "protocol": "TCP",
                                },
                                {
                                    "containerPort": 9402,
                                    "name": "http-metrics",
                                    "protocol": "TCP",
                                },
                            ],
                            "readinessProbe": {
                                "failureThreshold": 3,
                                "httpGet": {
                                    "path": "/healthz",
                                    "port": "healthcheck",
                                    "scheme": "HTTP",
                                },
                                "initialDelaySeconds": 5,
                                "periodSeconds": 5,
                                "successThreshold": 1,
                                "timeoutSeconds": 1,
                            },
                            "securityContext": {
                                "allowPrivilegeEscalation": false,
                                "capabilities": {"drop": ["ALL"]},
                                "readOnlyRootFilesystem": true,
                            },
                        },
                    ],
                    "enableServiceLinks": false,
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "priorityClassName": "system-cluster-critical",
                    "securityContext": {
                        "runAsNonRoot": true,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "serviceAccountName": "cert-manager-webhook",
                    "tolerations": cp_tolerations(),
                },
            },
        },
    })
}

/// The MutatingWebhookConfiguration.
fn mutating_webhook(webhook: &Value) -> Value {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {
            "annotations": {
                "cert-manager.io/inject-ca-from-secret": "kube-system/cert-manager-webhook-ca",
            },
            "labels": webhook,
            "name": "cert-manager-webhook",
        },
        "webhooks": [
            {
                "admissionReviewVersions": ["v1"],
                "clientConfig": {
                    "service": {
                        "name": "cert-manager-webhook",
                        "namespace": "kube-system",
                        "path": "/mutate",
                    },
                },
                "failurePolicy": "Fail",
                "matchPolicy": "Equivalent",
                "name": "webhook.cert-manager.io",
                "rules": [
                    {
                        "apiGroups": ["cert-manager.io"],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["certificaterequests"],
                    },
                ],
                "sideEffects": "None",
                "timeoutSeconds": 30,
            },
        ],
    })
}

/// The ValidatingWebhookConfiguration.
fn validating_webhook(webhook: &Value) -> Value {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {
            "annotations": {
                "cert-manager.io/inject-ca-from-secret": "kube-system/cert-manager-webhook-ca",
            },
            "labels": webhook,
            "name": "cert-manager-webhook",
        },
        "webhooks": [
            {
                "admissionReviewVersions": ["v1"],
                "clientConfig": {
                    "service": {
                        "name": "cert-manager-webhook",
                        "namespace": "kube-system",
                        "path": "/validate",
                    },
                },
                "failurePolicy": "Fail",
                "matchPolicy": "Equivalent",
                "name": "webhook.cert-manager.io",
                "namespaceSelector": {
                    "matchExpressions": [
                        {
                            "key": "cert-manager.io/disable-validation",
                            "operator": "NotIn",
                            "values": ["true"],
                        },
                    ],
                },
                "rules": [
                    {
                        "apiGroups": ["cert-manager.io", "acme.cert-manager.io"],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": ["*/*"],
                    },
                ],
                "sideEffects": "None",
                "timeoutSeconds": 30,
            },
        ],
    })
}
