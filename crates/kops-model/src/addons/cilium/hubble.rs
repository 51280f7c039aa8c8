//! Hubble, Cilium's flow observer: the agent's server (configured in `cilium-config`),
//! the services that reach it, and the relay that gathers every node's flows.
//!
//! The agent's server and the relay talk TLS. As kOps has it, both key pairs are
//! cert-manager `Certificate`s signed by the addon's PKI issuer (`networking.cilium.io`,
//! which the channels tool makes from the cluster CA because the addon needs PKI), so the
//! certificates come from the cluster's own CA and rotate with it.

use serde_json::{Value, json};

use super::NS;

/// The relay's and Hubble's labels: `k8s-app` and `app.kubernetes.io/name` both `name`.
fn labels(name: &str) -> Value {
    json!({
        "k8s-app": name,
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/part-of": "cilium",
    })
}

/// The relay's service, the agents' metrics service (when metrics are asked for) and the
/// peer service the relay finds the agents through.
pub(super) fn services(metrics: bool) -> Vec<Value> {
    let mut out = vec![json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": { "name": "hubble-relay", "namespace": NS, "labels": labels("hubble-relay") },
        "spec": {
            "type": "ClusterIP",
            "selector": { "k8s-app": "hubble-relay" },
            "ports": [ { "protocol": "TCP", "port": 80, "targetPort": "grpc" } ],
        },
    })];
    if metrics {
        out.push(json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": "hubble-metrics",
                "namespace": NS,
                "labels": labels("hubble"),
                "annotations": { "prometheus.io/scrape": "true", "prometheus.io/port": "9965" },
            },
            "spec": {
                "clusterIP": "None",
                "type": "ClusterIP",
                "ports": [ { "name": "hubble-metrics", "port": 9965, "protocol": "TCP",
                    "targetPort": "hubble-metrics" } ],
                "selector": { "k8s-app": "cilium" },
            },
        }));
    }
    out.push(json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "hubble-peer",
            "namespace": NS,
            "labels": {
                "k8s-app": "cilium",
                "app.kubernetes.io/part-of": "cilium",
                "app.kubernetes.io/name": "hubble-peer",
            },
        },
        "spec": {
            "selector": { "k8s-app": "cilium" },
            "ports": [ { "name": "peer-service", "port": 443, "protocol": "TCP", "targetPort": 4244 } ],
            "internalTrafficPolicy": "Local",
        },
    }));
    out
}

/// A projected volume of one TLS secret's `tls.crt`, `tls.key` and `ca.crt` under the
/// given file names, readable by the owner only.
fn tls_volume(volume: &str, secret: &str, files: [&str; 3], optional: bool) -> Value {
    let mut source = json!({ "name": secret, "items": [
        { "key": "tls.crt", "path": files[0] },
        { "key": "tls.key", "path": files[1] },
        { "key": "ca.crt", "path": files[2] },
    ] });
    if optional {
        source["optional"] = json!(true);
    }
    json!({ "name": volume, "projected": { "defaultMode": 0o400, "sources": [ { "secret": source } ] } })
}

/// The agent's `hubble-tls` volume: the server's key pair and the CA it trusts clients of.
pub(super) fn agent_tls_volume() -> Value {
    tls_volume(
        "hubble-tls",
        "hubble-server-certs",
        ["server.crt", "server.key", "client-ca.crt"],
        true,
    )
}

/// The relay's service account, as (its position is next to the other accounts).
pub(super) fn service_account() -> Value {
    let mut sa = crate::addons::k8s::service_account("hubble-relay", NS);
    sa["automountServiceAccountToken"] = json!(false);
    sa
}

/// The relay's configuration: where the peers are and its client key pair.
pub(super) fn relay_config(cluster: &str) -> Value {
    let config = format!(
        "cluster-name: \"{cluster}\"\n\
         peer-service: \"hubble-peer.{NS}.svc.cluster.local.:443\"\n\
         listen-address: :4245\n\
         gops: true\n\
         gops-port: \"9893\"\n\
         retry-timeout:\n\
         sort-buffer-len-max:\n\
         sort-buffer-drain-timeout:\n\
         tls-hubble-client-cert-file: /var/lib/hubble-relay/tls/client.crt\n\
         tls-hubble-client-key-file: /var/lib/hubble-relay/tls/client.key\n\
         tls-hubble-server-ca-files: /var/lib/hubble-relay/tls/hubble-server-ca.crt\n\
         \n\
         disable-server-tls: true\n"
    );
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": { "name": "hubble-relay-config", "namespace": NS },
        "data": { "config.yaml": config },
    })
}

/// A certificate cert-manager issues from the addon's PKI issuer (the cluster CA).
fn certificate(name: &str, common_name: &str, usages: &[&str]) -> Value {
    json!({
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": { "name": name, "namespace": NS },
        "spec": {
            "issuerRef": { "kind": "Issuer", "name": "networking.cilium.io" },
            "secretName": name,
            "commonName": common_name,
            "dnsNames": [common_name],
            "duration": "8760h0m0s",
            "privateKey": { "rotationPolicy": "Always" },
            "isCA": false,
            "usages": usages,
        },
    })
}

/// The relay's deployment (two replicas, each beside an agent) and the two certificates:
/// the relay's client pair and the agents' server pair, named for the cluster as Cilium
/// expects (`*.<cluster with dashes>.hubble-grpc.cilium.io`).
pub(super) fn relay(cluster: &str, registry: &str, version: &str, debug: bool) -> Vec<Value> {
    let mut args = vec!["serve"];
    if debug {
        args.push("--debug");
    }
    let grpc = |extra: Value| {
        let mut p = json!({ "grpc": { "port": 4222 } });
        if let (Some(p), Value::Object(e)) = (p.as_object_mut(), extra) {
            p.extend(e);
        }
        p
    };
    let non_root = json!({ "type": "RuntimeDefault" });
    let deployment = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "name": "hubble-relay", "namespace": NS, "labels": labels("hubble-relay") },
        "spec": {
            "replicas": 2,
            "selector": { "matchLabels": { "k8s-app": "hubble-relay" } },
            "strategy": { "rollingUpdate": { "maxUnavailable": 1 }, "type": "RollingUpdate" },
            "template": {
                "metadata": { "labels": labels("hubble-relay") },
                "spec": {
                    "securityContext": { "fsGroup": 65532, "seccompProfile": non_root },
                    "containers": [ {
                        "name": "hubble-relay",
                        "securityContext": {
                            "allowPrivilegeEscalation": false,
                            "capabilities": { "drop": ["ALL"] },
                            "runAsGroup": 65532,
                            "runAsNonRoot": true,
                            "runAsUser": 65532,
                            "seccompProfile": non_root,
                        },
                        "image": format!("{registry}/cilium/hubble-relay:{version}"),
                        "imagePullPolicy": "IfNotPresent",
                        "command": ["hubble-relay"],
                        "args": args,
                        "ports": [ { "name": "grpc", "containerPort": 4245 } ],
                        "readinessProbe": grpc(json!({ "timeoutSeconds": 3 })),
                        "livenessProbe": grpc(json!({ "timeoutSeconds": 10, "initialDelaySeconds": 10,
                            "periodSeconds": 10, "failureThreshold": 12 })),
                        "startupProbe": grpc(json!({ "initialDelaySeconds": 10, "failureThreshold": 20,
                            "periodSeconds": 3 })),
                        "volumeMounts": [
                            { "name": "config", "mountPath": "/etc/hubble-relay", "readOnly": true },
                            { "name": "tls", "mountPath": "/var/lib/hubble-relay/tls", "readOnly": true },
                        ],
                        "terminationMessagePolicy": "FallbackToLogsOnError",
                    } ],
                    "restartPolicy": "Always",
                    "serviceAccountName": "hubble-relay",
                    "automountServiceAccountToken": false,
                    "terminationGracePeriodSeconds": 1,
                    "affinity": { "podAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": [ {
                        "labelSelector": { "matchLabels": { "k8s-app": "cilium" } },
                        "topologyKey": "kubernetes.io/hostname",
                    } ] } },
                    "nodeSelector": { "kubernetes.io/os": "linux" },
                    "volumes": [
                        { "name": "config", "configMap": { "name": "hubble-relay-config",
                            "items": [ { "key": "config.yaml", "path": "config.yaml" } ] } },
                        tls_volume("tls", "hubble-relay-client-certs",
                            ["client.crt", "client.key", "hubble-server-ca.crt"], false),
                    ],
                },
            },
        },
    });
    let server_name = format!("*.{}.hubble-grpc.cilium.io", cluster.replace('.', "-"));
    vec![
        deployment,
        certificate(
            "hubble-relay-client-certs",
            "hubble-relay-client",
            &["signing", "key encipherment", "client auth"],
        ),
        certificate(
            "hubble-server-certs",
            &server_name,
            &["signing", "key encipherment", "server auth", "client auth"],
        ),
    ]
}
