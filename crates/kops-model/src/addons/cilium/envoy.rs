//! Cilium's ingress controller and its Gateway API support: both run in the agent's
//! embedded Envoy, configured through `cilium-config`, with the operator turning
//! `Ingress` and `Gateway` objects into Envoy configurations.
//!
//! The objects are kOps': the operator's extra permissions, the secrets roles of the
//! agent and the operator in `kube-system`, the `cilium` IngressClass (and, in the shared
//! load-balancer mode, the one `LoadBalancer` service every ingress shares, with the
//! placeholder endpoints Cilium replaces), and the `cilium` GatewayClass.
//!
//! kOps does not install the Gateway API's CRDs (`gateway.networking.k8s.io`): the
//! cluster must have them before the addon applies, as Cilium's own chart requires.

use kops_api::v1alpha2::{CiliumGatewayAPISpec, CiliumIngressSpec};
use serde_json::{Value, json};

use super::super::k8s::{binding, role, rule, sa_subject};
use super::{NS, part_of};

/// What of the two features a spec turns on (both default to off, as kOps has them).
#[derive(Clone, Debug, Default)]
pub(super) struct Envoy {
    ingress: Option<CiliumIngressSpec>,
    gateway: Option<CiliumGatewayAPISpec>,
}

/// The shared load-balancer service's name when the spec names none (Cilium's default;
/// kOps leaves the name empty, which the API server refuses).
const DEFAULT_SHARED_SERVICE: &str = "cilium-ingress";

impl Envoy {
    /// The features of `ingress` and `gateway` that are enabled.
    pub(super) fn new(
        ingress: Option<&CiliumIngressSpec>,
        gateway: Option<&CiliumGatewayAPISpec>,
    ) -> Self {
        Envoy {
            ingress: ingress.filter(|i| i.enabled == Some(true)).cloned(),
            gateway: gateway.filter(|g| g.enabled == Some(true)).cloned(),
        }
    }

    fn any(&self) -> bool {
        self.ingress.is_some() || self.gateway.is_some()
    }

    /// The shared service's name, when the ingress controller shares one load balancer
    /// (the mode kOps takes when none is given).
    fn shared_service(&self) -> Option<String> {
        let i = self.ingress.as_ref()?;
        let mode = i.default_load_balancer_mode.as_deref().unwrap_or("");
        (mode.is_empty() || mode == "shared").then(|| {
            i.shared_load_balancer_service_name
                .clone()
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| DEFAULT_SHARED_SERVICE.to_owned())
        })
    }

    /// Their settings in `cilium-config`, in kOps' order.
    pub(super) fn config(&self) -> Vec<(&'static str, String)> {
        let mut out: Vec<(&'static str, String)> = Vec::new();
        let mut set = |k: &'static str, v: &str| out.push((k, v.to_owned()));
        if self.any() {
            set("enable-envoy-config", "true");
            set("envoy-config-retry-interval", "15s");
            set("envoy-secrets-namespace", NS);
        }
        if let Some(i) = &self.ingress {
            set("enable-ingress-controller", "true");
            if let Some(b) = i.enforce_https {
                set("enforce-ingress-https", &b.to_string());
            }
            set("enable-ingress-proxy-protocol", "false");
            if let Some(b) = i.enable_secrets_sync {
                set("enable-ingress-secrets-sync", &b.to_string());
            }
            set("ingress-secrets-namespace", NS);
            let optional = [
                (
                    "ingress-lb-annotation-prefixes",
                    &i.load_balancer_annotation_prefixes,
                ),
                ("ingress-default-lb-mode", &i.default_load_balancer_mode),
                (
                    "ingress-shared-lb-service-name",
                    &i.shared_load_balancer_service_name,
                ),
            ];
            for (k, v) in optional {
                if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
                    set(k, v);
                }
            }
            set("ingress-hostnetwork-enabled", "false");
            set("ingress-hostnetwork-shared-listener-port", "8080");
            set("ingress-hostnetwork-nodelabelselector", "");
        }
        if let Some(g) = &self.gateway {
            set("enable-gateway-api", "true");
            if let Some(b) = g.enable_secrets_sync {
                set("enable-gateway-api-secrets-sync", &b.to_string());
            }
            for (k, v) in [
                ("enable-gateway-api-proxy-protocol", "false"),
                ("enable-gateway-api-app-protocol", "false"),
                ("enable-gateway-api-alpn", "false"),
                ("gateway-api-xff-num-trusted-hops", "0"),
                ("gateway-api-service-externaltrafficpolicy", "Cluster"),
                ("gateway-api-secrets-namespace", NS),
                ("gateway-api-hostnetwork-enabled", "false"),
                ("gateway-api-hostnetwork-nodelabelselector", ""),
            ] {
                set(k, v);
            }
        }
        out
    }

    /// The operator's extra cluster-wide permissions.
    pub(super) fn operator_rules(&self) -> Vec<Value> {
        let mut out = Vec::new();
        let read = ["get", "list", "watch"];
        if self.ingress.is_some() {
            out.push(rule(
                &["networking.k8s.io"],
                &["ingresses", "ingressclasses"],
                &read,
            ));
            out.push(rule(
                &["networking.k8s.io"],
                &["ingresses/status", "ingresses/finalizers"],
                &["update"],
            ));
        }
        if self.gateway.is_some() {
            let gw = ["gateway.networking.k8s.io"];
            out.push(rule(
                &gw,
                &[
                    "gatewayclasses",
                    "gateways",
                    "tlsroutes",
                    "httproutes",
                    "grpcroutes",
                    "referencegrants",
                    "referencepolicies",
                ],
                &read,
            ));
            out.push(rule(&gw, &["gatewayclasses"], &["patch"]));
            out.push(rule(
                &gw,
                &[
                    "gatewayclasses/status",
                    "gateways/status",
                    "httproutes/status",
                    "grpcroutes/status",
                    "tlsroutes/status",
                ],
                &["update", "patch"],
            ));
            out.push(rule(&["cilium.io"], &["ciliumgatewayclassconfigs"], &read));
            out.push(rule(
                &["cilium.io"],
                &["ciliumgatewayclassconfigs/status"],
                &["update", "patch"],
            ));
            out.push(rule(&["multicluster.x-k8s.io"], &["serviceimports"], &read));
        }
        out
    }

    /// The secrets roles in `kube-system`: the agent reads the certificates the operator
    /// copies there, the operator writes them.
    pub(super) fn roles(&self) -> Vec<Value> {
        let read = ["get", "list", "watch"];
        let write = ["create", "delete", "update", "patch"];
        let mut out = Vec::new();
        let mut add = |name: &str, verbs: &[&str]| {
            out.push(part_of(role(
                name,
                NS,
                vec![rule(&[""], &["secrets"], verbs)],
            )));
        };
        if self.ingress.is_some() {
            add("cilium-ingress-secrets", &read);
        }
        if self.gateway.is_some() {
            add("cilium-gateway-secrets", &read);
        }
        if self.any() {
            add("cilium-envoy-config-secrets", &read);
        }
        if self.ingress.is_some() {
            add("cilium-operator-ingress-secrets", &write);
        }
        if self.gateway.is_some() {
            add("cilium-operator-gateway-secrets", &write);
        }
        out
    }

    /// The bindings of [`Envoy::roles`] (kOps names the agent's ingress binding
    /// `cilium-secrets`).
    pub(super) fn bindings(&self) -> Vec<Value> {
        let mut out = Vec::new();
        let mut add = |name: &str, role_name: &str, account: &str| {
            out.push(part_of(binding(
                name,
                NS,
                "Role",
                role_name,
                vec![sa_subject(account, NS)],
            )));
        };
        if self.ingress.is_some() {
            add("cilium-secrets", "cilium-ingress-secrets", "cilium");
        }
        if self.gateway.is_some() {
            add("cilium-gateway-secrets", "cilium-gateway-secrets", "cilium");
        }
        if self.any() {
            add(
                "cilium-envoy-config-secrets",
                "cilium-envoy-config-secrets",
                "cilium",
            );
        }
        if self.ingress.is_some() {
            add(
                "cilium-operator-ingress-secrets",
                "cilium-operator-ingress-secrets",
                "cilium-operator",
            );
        }
        if self.gateway.is_some() {
            add(
                "cilium-operator-gateway-secrets",
                "cilium-operator-gateway-secrets",
                "cilium-operator",
            );
        }
        out
    }

    /// The services that come before the agent: with the Gateway API and the agent's
    /// metrics, the agent's Envoy metrics service (kOps renders it only then); in the
    /// shared ingress mode, the shared load balancer.
    pub(super) fn services(&self, prometheus: bool) -> Vec<Value> {
        let mut out = Vec::new();
        if self.gateway.is_some() && prometheus {
            out.push(json!({
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {
                    "name": "cilium-agent",
                    "namespace": NS,
                    "annotations": { "prometheus.io/scrape": "true", "prometheus.io/port": "9964" },
                    "labels": {
                        "k8s-app": "cilium",
                        "app.kubernetes.io/name": "cilium-agent",
                        "app.kubernetes.io/part-of": "cilium",
                    },
                },
                "spec": {
                    "clusterIP": "None",
                    "type": "ClusterIP",
                    "selector": { "k8s-app": "cilium" },
                    "ports": [ { "name": "envoy-metrics", "port": 9964, "protocol": "TCP",
                        "targetPort": "envoy-metrics" } ],
                },
            }));
        }
        if let Some(name) = self.shared_service() {
            out.push(json!({
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {
                    "name": name,
                    "namespace": NS,
                    "labels": { "cilium.io/ingress": "true", "app.kubernetes.io/part-of": "cilium" },
                },
                "spec": {
                    "ports": [
                        { "name": "http", "port": 80, "protocol": "TCP" },
                        { "name": "https", "port": 443, "protocol": "TCP" },
                    ],
                    "type": "LoadBalancer",
                    "externalTrafficPolicy": "Cluster",
                },
            }));
        }
        out
    }

    /// The classes, and the shared service's placeholder endpoints (the service has no
    /// selector: Cilium's agents answer on its address).
    pub(super) fn classes(&self) -> Vec<Value> {
        let mut out = Vec::new();
        if self.ingress.is_some() {
            out.push(json!({
                "apiVersion": "networking.k8s.io/v1",
                "kind": "IngressClass",
                "metadata": { "name": "cilium" },
                "spec": { "controller": "cilium.io/ingress-controller" },
            }));
        }
        if let Some(name) = self.shared_service() {
            out.push(json!({
                "apiVersion": "v1",
                "kind": "Endpoints",
                "metadata": { "name": name, "namespace": NS },
                "subsets": [ {
                    "addresses": [ { "ip": "192.192.192.192" } ],
                    "ports": [ { "port": 9999 } ],
                } ],
            }));
        }
        if self.gateway.is_some() {
            out.push(json!({
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "GatewayClass",
                "metadata": { "name": "cilium" },
                "spec": {
                    "controllerName": "io.cilium/gateway-controller",
                    "description": "The default Cilium GatewayClass",
                },
            }));
        }
        out
    }
}
