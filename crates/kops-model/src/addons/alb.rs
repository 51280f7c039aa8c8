//! `aws-load-balancer-controller.addons.k8s.io`: the AWS Load Balancer Controller with
//! its CustomResourceDefinitions and webhooks (serving certificate from cert-manager).
//! Without IRSA it runs on the control plane with the node's role; with IRSA anywhere,
//! spread across hosts.

use serde_json::{Value, json};

use super::helpers::{automount, cp_affinity, cp_tolerations, crds, labeled};
use super::k8s::{binding, named_rule, role, rule, sa_subject, service_account};
use crate::cluster::ClusterContext;
use crate::error::Result;

/// The controller release kOps ships when the spec names none.
const DEFAULT_VERSION: &str = "v3.3.0";

const CRDS: &str = include_str!("crds/aws-load-balancer-controller.json");

const NAME: &str = "aws-load-balancer-controller";

/// kOps' `CloudLabels`: `KubernetesCluster=<name>` and the cluster's cloud labels, sorted.
fn default_tags(ctx: &ClusterContext) -> String {
    let mut tags = vec![format!("KubernetesCluster={}", ctx.name())];
    tags.extend(ctx.cloud_labels().iter().map(|(k, v)| format!("{k}={v}")));
    tags.sort();
    tags.join(",")
}

/// The addon's objects, in kOps' manifest order.
pub(super) fn objects(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let (common, webhook) = labels();
    let mut out = crds("aws-load-balancer-controller.json", CRDS)?;
    out.extend(rbac(&common));
    out.extend([
        webhook_service(&webhook),
        deployment(ctx, &common),
        serving_cert(&common),
        selfsigned_issuer(&common),
        ingress_class_params(&common),
        ingress_class(&common),
        mutating_webhook(&common),
        validating_webhook(&common),
    ]);
    Ok(out)
}

/// The chart's labels: on every object, and on the webhook's Service.
fn labels() -> (Value, Value) {
    let common = json!({
        "app.kubernetes.io/instance": NAME,
        "app.kubernetes.io/name": NAME,
        "app.kubernetes.io/version": "v3.3.0",
        "helm.sh/chart": "aws-load-balancer-controller-3.3.0",
    });
    let mut webhook = common.clone();
    webhook["app.kubernetes.io/component"] = "webhook".into();
    webhook["prometheus.io/service-monitor"] = "false".into();
    (common, webhook)
}

/// The controller's Deployment: on the control plane with the node's role, or with IRSA
/// anywhere, spread across hosts.
fn deployment(ctx: &ClusterContext, common: &Value) -> Value {
    let lbc = ctx
        .cluster
        .spec
        .cloud_provider
        .aws
        .as_ref()
        .and_then(|a| a.load_balancer_controller.clone())
        .unwrap_or_default();
    let version = lbc
        .version
        .clone()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| DEFAULT_VERSION.to_owned());
    let q = |v: &Option<kops_api::v1alpha2::Quantity>, d: &str| {
        v.as_ref()
            .map_or_else(|| d.to_owned(), |q| q.as_str().to_owned())
    };
    let on = |b: Option<bool>| b.unwrap_or(false);
    let args = vec![
        format!("--cluster-name={}", ctx.name()),
        "--ingress-class=alb".to_owned(),
        format!("--aws-region={}", ctx.region),
        "--metrics-bind-addr=:9442".to_owned(),
        format!("--enable-waf={}", on(lbc.enable_waf)),
        format!("--enable-wafv2={}", on(lbc.enable_wa_fv2)),
        format!("--enable-shield={}", on(lbc.enable_shield)),
        format!("--default-tags={}", default_tags(ctx)),
    ];
    let mut deployment = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "labels": common,
            "name": "aws-load-balancer-controller",
            "namespace": "kube-system",
        },
        "spec": {
            "replicas": 1,
            "revisionHistoryLimit": 10,
            "selector": {
                "matchLabels": {
                    "app.kubernetes.io/component": "controller",
                    "app.kubernetes.io/name": "aws-load-balancer-controller",
                },
            },
            "strategy": {"rollingUpdate": {"maxSurge": 0}, "type": "RollingUpdate"},
            "template": {
                "metadata": {
                    "annotations": {"prometheus.io/port": "9442", "prometheus.io/scrape": "true"},
                    "labels": {
                        "app.kubernetes.io/component": "controller",
                        "app.kubernetes.io/instance": "aws-load-balancer-controller",
                        "app.kubernetes.io/name": "aws-load-balancer-controller",
                    },
                },
                "spec": {
                    "affinity": cp_affinity(),
                    "containers": [
                        {
                            "args": args,
                            "env": [
                                {
                                    "name": "NODENAME",
                                    "valueFrom": {
                                        "fieldRef": {
                                            "apiVersion": "v1",
                                            "fieldPath": "spec.nodeName",
                                        },
                                    },
                                },
                            ],
                            "image": format!("public.ecr.aws/eks/aws-load-balancer-controller:{version}"),
                            "imagePullPolicy": "IfNotPresent",
                            "livenessProbe": {
                                "failureThreshold": 2,
                                "httpGet": {"path": "/healthz", "port": 61779, "scheme": "HTTP"},
                                "initialDelaySeconds": 30,
                                "timeoutSeconds": 10,
                            },
                            "name": "aws-load-balancer-controller",
                            "ports": [
                                {
                                    "containerPort": 9443,
                                    "name": "webhook-server",
                                    "protocol": "TCP",
                                },
                                {
                                    "containerPort": 9442,
                                    "name": "metrics-server",
                                    "protocol": "TCP",
                                },
                            ],
                            "readinessProbe": {
                                "failureThreshold": 2,
                                "httpGet": {"path": "/readyz", "port": 61779, "scheme": "HTTP"},
                                "initialDelaySeconds": 10,
                                "successThreshold": 1,
                                "timeoutSeconds": 10,
                            },
                            "resources": {
                                "limits": {"cpu": q(&lbc.cpu_limit, "200m"), "memory": q(&lbc.memory_limit, "500Mi")},
                                "requests": {"cpu": q(&lbc.cpu_request, "100m"), "memory": q(&lbc.memory_request, "200Mi")},
                            },
                            "securityContext": {
                                "allowPrivilegeEscalation": false,
                                "readOnlyRootFilesystem": true,
                                "runAsNonRoot": true,
                            },
                            "volumeMounts": [
                                {
                                    "mountPath": "/tmp/k8s-webhook-server/serving-certs",
                                    "name": "cert",
                                    "readOnly": true,
                                },
                            ],
                        },
                    ],
                    "hostNetwork": true,
                    "priorityClassName": "system-cluster-critical",
                    "securityContext": {"fsGroup": 65534},
                    "serviceAccountName": "aws-load-balancer-controller",
                    "terminationGracePeriodSeconds": 10,
                    "tolerations": cp_tolerations(),
                    "volumes": [
                        {
                            "name": "cert",
                            "secret": {
                                "defaultMode": 420,
                                "secretName": "aws-load-balancer-webhook-tls",
                            },
                        },
                    ],
                },
            },
        },
    });
    if super::irsa(ctx) {
        spread_for_irsa(&mut deployment);
    }
    deployment
}

/// With IRSA the controller needs neither the control plane nor the host network: no
/// strategy, tolerations nor host network, and replicas spread across hosts.
fn spread_for_irsa(deployment: &mut Value) {
    if let Some(spec) = deployment.get_mut("spec").and_then(Value::as_object_mut) {
        spec.remove("strategy");
        if let Some(pod) = spec
            .get_mut("template")
            .and_then(|t| t.get_mut("spec"))
            .and_then(Value::as_object_mut)
        {
            pod.remove("hostNetwork");
            pod.remove("tolerations");
            pod.insert(
                "affinity".into(),
                json!({ "podAntiAffinity": { "preferredDuringSchedulingIgnoredDuringExecution": [ {
                    "podAffinityTerm": {
                        "labelSelector": { "matchExpressions": [
                            { "key": "app.kubernetes.io/name", "operator": "In", "values": [NAME] } ] },
                        "topologyKey": "kubernetes.io/hostname",
                    },
                    "weight": 100,
                } ] } }),
            );
        }
    }
}

/// The controller's ServiceAccount, its leader-election Role, its ClusterRole and their bindings.
fn rbac(common: &Value) -> Vec<Value> {
    vec![
        labeled(
            automount(
                service_account("aws-load-balancer-controller", "kube-system"),
                true,
            ),
            common,
        ),
        labeled(
            role(
                "aws-load-balancer-controller-leader-election-role",
                "kube-system",
                vec![
                    rule(&[""], &["configmaps"], &["create"]),
                    named_rule(
                        &[""],
                        &["configmaps"],
                        &["aws-load-balancer-controller-leader"],
                        &["get", "patch", "update"],
                    ),
                    rule(&["coordination.k8s.io"], &["leases"], &["create"]),
                    named_rule(
                        &["coordination.k8s.io"],
                        &["leases"],
                        &["aws-load-balancer-controller-leader"],
                        &["get", "update", "patch"],
                    ),
                ],
            ),
            common,
        ),
        labeled(
            role("aws-load-balancer-controller-role", "", controller_rules()),
            common,
        ),
        labeled(
            binding(
                "aws-load-balancer-controller-leader-election-rolebinding",
                "kube-system",
                "Role",
                "aws-load-balancer-controller-leader-election-role",
                vec![sa_subject("aws-load-balancer-controller", "kube-system")],
            ),
            common,
        ),
        labeled(
            binding(
                "aws-load-balancer-controller-rolebinding",
                "",
                "ClusterRole",
                "aws-load-balancer-controller-role",
                vec![sa_subject("aws-load-balancer-controller", "kube-system")],
            ),
            common,
        ),
    ]
}

/// The webhook's Service.
fn webhook_service(webhook: &Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "labels": webhook,
            "name": "aws-load-balancer-webhook-service",
            "namespace": "kube-system",
        },
        "spec": {
            "ports": [{"name": "webhook-server", "port": 443, "targetPort": "webhook-server"}],
            "selector": {
                "app.kubernetes.io/component": "controller",
                "app.kubernetes.io/name": "aws-load-balancer-controller",
            },
        },
    })
}

/// The webhook's serving certificate, issued by cert-manager.
fn serving_cert(common: &Value) -> Value {
    json!({
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {
            "labels": common,
            "name": "aws-load-balancer-serving-cert",
            "namespace": "kube-system",
        },
        "spec": {
            "dnsNames": [
                "aws-load-balancer-webhook-service.kube-system.svc",
                "aws-load-balancer-webhook-service.kube-system.svc.cluster.local",
            ],
            "duration": "8760h0m0s",
            "issuerRef": {"kind": "Issuer", "name": "aws-load-balancer-selfsigned-issuer"},
            "renewBefore": "720h0m0s",
            "secretName": "aws-load-balancer-webhook-tls",
        },
    })
}

/// The self-signed Issuer of the serving certificate.
fn selfsigned_issuer(common: &Value) -> Value {
    json!({
        "apiVersion": "cert-manager.io/v1",
        "kind": "Issuer",
        "metadata": {
            "labels": common,
            "name": "aws-load-balancer-selfsigned-issuer",
            "namespace": "kube-system",
        },
        "spec": {"selfSigned": {}},
    })
}

/// The `alb` IngressClassParams.
fn ingress_class_params(common: &Value) -> Value {
    json!({
        "apiVersion": "elbv2.k8s.aws/v1beta1",
        "kind": "IngressClassParams",
        "metadata": {"labels": common, "name": "alb"},
    })
}

/// The `alb` IngressClass.
fn ingress_class(common: &Value) -> Value {
    json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IngressClass",
        "metadata": {"labels": common, "name": "alb"},
        "spec": {"controller": "ingress.k8s.aws/alb"},
    })
}

/// The MutatingWebhookConfiguration (pods, services, ingresses, target group bindings).
fn mutating_webhook(common: &Value) -> Value {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {
            "annotations": {
                "cert-manager.io/inject-ca-from": "kube-system/aws-load-balancer-serving-cert",
            },
            "labels": common,
            "name": "aws-load-balancer-webhook",
        },
        "webhooks": [
            pod_webhook(),
            quic_server_id_webhook(),
            service_webhook(),
            target_control_namespace_webhook(),
            target_control_object_webhook(),
            target_group_binding_webhook(),
        ],
    })
}

/// The ValidatingWebhookConfiguration.
fn validating_webhook(common: &Value) -> Value {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {
            "annotations": {
                "cert-manager.io/inject-ca-from": "kube-system/aws-load-balancer-serving-cert",
            },
            "labels": common,
            "name": "aws-load-balancer-webhook",
        },
        "webhooks": [
            {
                "admissionReviewVersions": ["v1beta1"],
                "clientConfig": {
                    "service": {
                        "name": "aws-load-balancer-webhook-service",
                        "namespace": "kube-system",
                        "path": "/validate-elbv2-k8s-aws-v1beta1-ingressclassparams",
                    },
                },
                "failurePolicy": "Fail",
                "name": "vingressclassparams.elbv2.k8s.aws",
                "objectSelector": {
                    "matchExpressions": [
                        {
                            "key": "app.kubernetes.io/name",
                            "operator": "NotIn",
                            "values": ["aws-load-balancer-controller"],
                        },
                    ],
                },
                "rules": [
                    {
                        "apiGroups": ["elbv2.k8s.aws"],
                        "apiVersions": ["v1beta1"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": ["ingressclassparams"],
                    },
                ],
                "sideEffects": "None",
            },
            {
                "admissionReviewVersions": ["v1beta1"],
                "clientConfig": {
                    "service": {
                        "name": "aws-load-balancer-webhook-service",
                        "namespace": "kube-system",
                        "path": "/validate-elbv2-k8s-aws-v1beta1-targetgroupbinding",
                    },
                },
                "failurePolicy": "Fail",
                "name": "vtargetgroupbinding.elbv2.k8s.aws",
                "rules": [
                    {
                        "apiGroups": ["elbv2.k8s.aws"],
                        "apiVersions": ["v1beta1"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": ["targetgroupbindings"],
                    },
                ],
                "sideEffects": "None",
            },
            {
                "admissionReviewVersions": ["v1beta1"],
                "clientConfig": {
                    "service": {
                        "name": "aws-load-balancer-webhook-service",
                        "namespace": "kube-system",
                        "path": "/validate-networking-v1-ingress",
                    },
                },
                "failurePolicy": "Fail",
                "matchPolicy": "Equivalent",
                "name": "vingress.elbv2.k8s.aws",
                "namespaceSelector": null,
                "objectSelector": null,
                "rules": [
                    {
                        "apiGroups": ["networking.k8s.io"],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": ["ingresses"],
                    },
                ],
                "sideEffects": "None",
            },
        ],
    })
}

/// The rules of the controller's ClusterRole.
fn controller_rules() -> Vec<Value> {
    vec![
        rule(
            &[""],
            &["configmaps"],
            &["create", "delete", "get", "update"],
        ),
        rule(
            &[""],
            &["endpoints", "namespaces", "nodes", "pods"],
            &["get", "list", "watch"],
        ),
        rule(&[""], &["events"], &["create", "patch"]),
        rule(
            &[""],
            &["pods/status", "services/status"],
            &["patch", "update"],
        ),
        rule(
            &[""],
            &["services"],
            &["get", "list", "patch", "update", "watch"],
        ),
        rule(
            &["aga.k8s.aws"],
            &["globalaccelerators"],
            &["get", "list", "patch", "watch"],
        ),
        rule(
            &["aga.k8s.aws"],
            &["globalaccelerators/finalizers", "globalaccelerators/status"],
            &["patch", "update"],
        ),
        rule(
            &["discovery.k8s.io"],
            &["endpointslices"],
            &["get", "list", "watch"],
        ),
        rule(&["elbv2.k8s.aws"], &["albtargetcontrolconfigs"], &["get"]),
        rule(
            &["elbv2.k8s.aws"],
            &["ingressclassparams"],
            &["get", "list", "watch"],
        ),
        rule(
            &["elbv2.k8s.aws"],
            &["targetgroupbindings"],
            &[
                "create", "delete", "get", "list", "patch", "update", "watch",
            ],
        ),
        rule(
            &["elbv2.k8s.aws"],
            &["targetgroupbindings/status"],
            &["patch", "update"],
        ),
        rule(
            &["extensions", "networking.k8s.io"],
            &["ingresses"],
            &["get", "list", "patch", "update", "watch"],
        ),
        rule(
            &["extensions", "networking.k8s.io"],
            &["ingresses/status"],
            &["patch", "update"],
        ),
        rule(
            &["gateway.k8s.aws"],
            &[
                "listenerruleconfigurations",
                "loadbalancerconfigurations",
                "targetgroupconfigurations",
            ],
            &["get", "list", "patch", "watch"],
        ),
        rule(
            &["gateway.k8s.aws"],
            &[
                "listenerruleconfigurations/finalizers",
                "loadbalancerconfigurations/finalizers",
                "targetgroupconfigurations/finalizers",
            ],
            &["patch", "update"],
        ),
        rule(
            &["gateway.k8s.aws"],
            &[
                "listenerruleconfigurations/status",
                "loadbalancerconfigurations/status",
                "targetgroupconfigurations/status",
            ],
            &["get", "patch", "update"],
        ),
        rule(
            &["gateway.networking.k8s.io"],
            &["gatewayclasses", "gateways", "referencegrants"],
            &["get", "list", "patch", "watch"],
        ),
        rule(
            &["gateway.networking.k8s.io"],
            &["gatewayclasses/finalizers", "gateways/finalizers"],
            &["patch", "update"],
        ),
        rule(
            &["gateway.networking.k8s.io"],
            &[
                "gatewayclasses/status",
                "gateways/status",
                "grpcroutes/status",
                "httproutes/status",
                "listenersets/status",
                "tcproutes/status",
                "tlsroutes/status",
                "udproutes/status",
            ],
            &["get", "patch", "update"],
        ),
        rule(
            &["gateway.networking.k8s.io"],
            &[
                "grpcroutes",
                "httproutes",
                "listenersets",
                "tcproutes",
                "tlsroutes",
                "udproutes",
            ],
            &["get", "list", "watch"],
        ),
        rule(
            &["gateway.networking.k8s.io"],
            &[
                "grpcroutes/finalizers",
                "httproutes/finalizers",
                "listenersets/finalizers",
                "tcproutes/finalizers",
                "tlsroutes/finalizers",
                "udproutes/finalizers",
            ],
            &["update"],
        ),
        rule(
            &["networking.k8s.io"],
            &["ingressclasses"],
            &["get", "list", "watch"],
        ),
    ]
}

/// The mutating webhook that mutates pods (readiness gates).
fn pod_webhook() -> Value {
    json!({
        "admissionReviewVersions": ["v1beta1"],
        "clientConfig": {
            "service": {
                "name": "aws-load-balancer-webhook-service",
                "namespace": "kube-system",
                "path": "/mutate-v1-pod",
            },
        },
        "failurePolicy": "Ignore",
        "name": "mpod.elbv2.k8s.aws",
        "namespaceSelector": {
            "matchExpressions": [
                {
                    "key": "elbv2.k8s.aws/pod-readiness-gate-inject",
                    "operator": "In",
                    "values": ["enabled"],
                },
            ],
        },
        "objectSelector": {
            "matchExpressions": [
                {
                    "key": "app.kubernetes.io/name",
                    "operator": "NotIn",
                    "values": ["aws-load-balancer-controller"],
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
    })
}

/// The mutating webhook that sets the QUIC server ID of pods.
fn quic_server_id_webhook() -> Value {
    json!({
        "admissionReviewVersions": ["v1beta1"],
        "clientConfig": {
            "service": {
                "name": "aws-load-balancer-webhook-service",
                "namespace": "kube-system",
                "path": "/mutate-v1-pod-server-id",
            },
        },
        "failurePolicy": "Fail",
        "name": "quicid.elbv2.k8s.aws",
        "namespaceSelector": {
            "matchExpressions": [
                {
                    "key": "elbv2.k8s.aws/quic-server-id-inject",
                    "operator": "In",
                    "values": ["enabled"],
                },
            ],
        },
        "objectSelector": {
            "matchExpressions": [
                {
                    "key": "app.kubernetes.io/name",
                    "operator": "NotIn",
                    "values": ["aws-load-balancer-controller"],
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
    })
}

/// The mutating webhook that mutates Services.
fn service_webhook() -> Value {
    json!({
        "admissionReviewVersions": ["v1beta1"],
        "clientConfig": {
            "service": {
                "name": "aws-load-balancer-webhook-service",
                "namespace": "kube-system",
                "path": "/mutate-v1-service",
            },
        },
        "failurePolicy": "Fail",
        "name": "mservice.elbv2.k8s.aws",
        "namespaceSelector": {
            "matchExpressions": [
                {
                    "key": "kubernetes.io/metadata.name",
                    "operator": "NotIn",
                    "values": ["kube-system"],
                },
            ],
        },
        "objectSelector": {
            "matchExpressions": [
                {
                    "key": "app.kubernetes.io/name",
                    "operator": "NotIn",
                    "values": ["aws-load-balancer-controller"],
                },
            ],
        },
        "rules": [
            {
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "operations": ["CREATE"],
                "resources": ["services"],
            },
        ],
        "sideEffects": "None",
    })
}

/// The mutating webhook that the ALB target-control agent, by namespace.
fn target_control_namespace_webhook() -> Value {
    json!({
        "admissionReviewVersions": ["v1beta1"],
        "clientConfig": {
            "service": {
                "name": "aws-load-balancer-webhook-service",
                "namespace": "kube-system",
                "path": "/mutate-alb-target-control-namespace-v1-pod",
            },
        },
        "failurePolicy": "Fail",
        "name": "alb-target-control.namespace.elbv2.k8s.aws",
        "namespaceSelector": {
            "matchExpressions": [
                {
                    "key": "elbv2.k8s.aws/alb-target-control-agent-injection",
                    "operator": "In",
                    "values": ["enabled"],
                },
            ],
        },
        "objectSelector": {
            "matchExpressions": [
                {
                    "key": "app.kubernetes.io/name",
                    "operator": "NotIn",
                    "values": ["aws-load-balancer-controller"],
                },
                {
                    "key": "elbv2.k8s.aws/alb-target-control-agent-inject",
                    "operator": "NotIn",
                    "values": ["false"],
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
    })
}

/// The mutating webhook that the ALB target-control agent, by object.
fn target_control_object_webhook() -> Value {
    json!({
        "admissionReviewVersions": ["v1beta1"],
        "clientConfig": {
            "service": {
                "name": "aws-load-balancer-webhook-service",
                "namespace": "kube-system",
                "path": "/mutate-alb-target-control-object-v1-pod",
            },
        },
        "failurePolicy": "Fail",
        "name": "alb-target-control.object.elbv2.k8s.aws",
        "namespaceSelector": {
            "matchExpressions": [
                {
                    "key": "elbv2.k8s.aws/alb-target-control-agent-injection",
                    "operator": "DoesNotExist",
                },
            ],
        },
        "objectSelector": {
            "matchExpressions": [
                {
                    "key": "app.kubernetes.io/name",
                    "operator": "NotIn",
                    "values": ["aws-load-balancer-controller"],
                },
                {
                    "key": "elbv2.k8s.aws/alb-target-control-agent-inject",
                    "operator": "In",
                    "values": ["true"],
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
    })
}

/// The mutating webhook that mutates TargetGroupBindings.
fn target_group_binding_webhook() -> Value {
    json!({
        "admissionReviewVersions": ["v1beta1"],
        "clientConfig": {
            "service": {
                "name": "aws-load-balancer-webhook-service",
                "namespace": "kube-system",
                "path": "/mutate-elbv2-k8s-aws-v1beta1-targetgroupbinding",
            },
        },
        "failurePolicy": "Fail",
        "name": "mtargetgroupbinding.elbv2.k8s.aws",
        "rules": [
            {
                "apiGroups": ["elbv2.k8s.aws"],
                "apiVersions": ["v1beta1"],
                "operations": ["CREATE", "UPDATE"],
                "resources": ["targetgroupbindings"],
            },
        ],
        "sideEffects": "None",
    })
}
