//! `networking.cilium.io`: the Cilium agent on every node and its operator on the
//! control plane, configured through the `cilium-config` ConfigMap.
//!
//! Built: the agent, the operator, their RBAC, kvstore (etcd) mode, ENI IPAM, node-port
//! (kube-proxy replacement), the Prometheus endpoints, the debug monitor, and Hubble (the
//! agent's server, its peer and metrics services, the relay, and their certificates,
//! which cert-manager issues from the cluster CA through the addon's PKI issuer, as kOps
//! has it), the ingress controller and Gateway API support (see [`envoy`]), and
//! encryption: WireGuard, or IPsec with the keys of the `ciliumpassword` secret (`kops
//! create secret ciliumpassword`), which kOps puts in a Secret the agents mount whenever
//! the secret exists. The manifest then holds a secret: it is written to the state store
//! as the keysets are, never shown in plans nor rendered into Terraform.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::k8s::{binding, host_path_volume, named_rule, role, rule, sa_subject};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

mod envoy;
mod hubble;

const NS: &str = "kube-system";

fn flag(b: Option<bool>) -> String {
    b.unwrap_or(false).to_string()
}

fn part_of(mut o: Value) -> Value {
    o["metadata"]["labels"] = json!({ "app.kubernetes.io/part-of": "cilium" });
    o
}

/// An env var from the pod's own fields, as Cilium spells it (with `apiVersion`).
fn env_pod(name: &str, path: &str) -> Value {
    json!({ "name": name, "valueFrom": { "fieldRef": { "apiVersion": "v1", "fieldPath": path } } })
}

fn env_cm(name: &str, key: &str) -> Value {
    json!({ "name": name, "valueFrom": { "configMapKeyRef": {
        "name": "cilium-config", "key": key, "optional": true } } })
}

fn mount_ro(name: &str, path: &str) -> Value {
    json!({ "name": name, "mountPath": path, "readOnly": true })
}

fn mount_prop(name: &str, path: &str, prop: &str) -> Value {
    json!({ "name": name, "mountPath": path, "mountPropagation": prop })
}

fn caps(add: &[&str]) -> Value {
    let mut c = json!({ "drop": ["ALL"] });
    if !add.is_empty() {
        c["add"] = json!(add);
    }
    json!({ "seLinuxOptions": { "level": "s0", "type": "spc_t" }, "capabilities": c })
}

fn probe(host: &str, port: u16, headers: &[(&str, &str)]) -> Value {
    let mut get = json!({ "host": host, "path": "/healthz", "port": port, "scheme": "HTTP" });
    if !headers.is_empty() {
        get["httpHeaders"] = headers
            .iter()
            .map(|(n, v)| json!({ "name": n, "value": v }))
            .collect();
    }
    json!({ "httpGet": get })
}

fn merge(mut a: Value, b: Value) -> Value {
    if let (Some(a), Value::Object(b)) = (a.as_object_mut(), b) {
        a.extend(b);
    }
    a
}

/// The objects of the Cilium addon.
pub(super) fn objects(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let spec = &ctx.cluster.spec;
    let c = spec
        .networking
        .cilium
        .clone()
        .ok_or_else(|| invalid("spec.networking.cilium", "not set"))?;
    let on = |b: Option<bool>| b == Some(true);
    let hubble = on(c.hubble.as_ref().and_then(|h| h.enabled));
    // As kOps validates: the Hubble certificates are cert-manager's to issue.
    if hubble && !on(spec.cert_manager.as_ref().and_then(|m| m.enabled)) {
        return Err(invalid(
            "spec.networking.cilium.hubble.enabled",
            "Hubble requires that cert manager is enabled (spec.certManager.enabled)",
        ));
    }
    let hubble_metrics: Vec<String> = c
        .hubble
        .as_ref()
        .and_then(|h| h.metrics.clone())
        .unwrap_or_default();
    let envoy = envoy::Envoy::new(c.ingress.as_ref(), c.gateway_api.as_ref());
    let encryption = on(c.enable_encryption).then(|| c.encryption_type.clone().unwrap_or_default());
    let ipsec_keys = ipsec_keys(ctx)?;
    let version = c
        .version
        .clone()
        .ok_or_else(|| invalid("spec.networking.cilium.version", "not set"))?;
    let registry = c
        .registry
        .clone()
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| "quay.io".into());
    let agent_image = format!("{registry}/cilium/cilium:{version}");
    let operator_image = format!("{registry}/cilium/operator:{version}");
    let ipv6 = ctx.is_ipv6_only();
    let host = if ipv6 { "::1" } else { "127.0.0.1" };
    let api_host = format!("api.internal.{}", ctx.name());
    let ipam = c.ipam.clone().unwrap_or_default();
    let eni = ipam == "eni";
    let etcd = on(c.etcd_managed);
    let prometheus = on(c.enable_prometheus_metrics);
    let debug = on(c.debug);
    let chaining = c.chaining_mode.clone().filter(|m| !m.is_empty());
    let tunnel = c.tunnel.clone().unwrap_or_default();
    let prom_port = c.agent_prometheus_port.unwrap_or(9090);
    let cpu = c.cpu_request.clone().unwrap_or_else(|| "25m".into());
    let memory = c.memory_request.clone().unwrap_or_else(|| "128Mi".into());
    let cloud_labels = super::ebs_csi::cloud_labels(ctx);

    // The agent's configuration.
    let mut cfg: BTreeMap<String, String> = BTreeMap::new();
    let mut set = |k: &str, v: &str| {
        cfg.insert(k.to_owned(), v.to_owned());
    };
    if etcd {
        set("kvstore", "etcd");
        set(
            "kvstore-opt",
            r#"{"etcd.config": "/var/lib/etcd-config/etcd.config"}"#,
        );
        set(
            "etcd-config",
            &format!(
                "---\nendpoints:\n  - https://{api_host}:4003\ntrusted-ca-file: '/var/lib/etcd-secrets/etcd-ca.crt'\nkey-file: '/var/lib/etcd-secrets/etcd-client-cilium.key'\ncert-file: '/var/lib/etcd-secrets/etcd-client-cilium.crt'"
            ),
        );
    }
    set(
        "identity-allocation-mode",
        c.identity_allocation_mode.as_deref().unwrap_or(""),
    );
    for (k, v) in [
        ("identity-heartbeat-timeout", "30m0s"),
        ("identity-gc-interval", "15m0s"),
        ("cilium-endpoint-gc-interval", "5m0s"),
        ("nodes-gc-interval", "5m0s"),
        ("debug-verbose", ""),
        ("metrics-sampling-interval", "5m"),
        ("enable-policy", "default"),
        ("policy-cidr-match-mode", ""),
    ] {
        set(k, v);
    }
    set("disable-endpoint-crd", &flag(c.disable_endpoint_crd));
    set(
        "identity-change-grace-period",
        c.identity_change_grace_period.as_deref().unwrap_or(""),
    );
    set("debug", &debug.to_string());
    if prometheus {
        set("prometheus-serve-addr", &format!(":{prom_port}"));
        if let Some(m) = c.metrics.as_ref().filter(|m| !m.is_empty()) {
            set("metrics", &m.join(" "));
        }
        set(
            "controller-group-metrics",
            "write-cni-file sync-host-ips sync-lb-maps-with-k8s-services",
        );
        set("proxy-prometheus-port", "9964");
        set("operator-prometheus-serve-addr", ":9963");
        set("enable-metrics", "true");
    }
    set("enable-ipv4", &(!ipv6).to_string());
    set("enable-ipv6", &ipv6.to_string());
    set(
        "monitor-aggregation",
        c.monitor_aggregation.as_deref().unwrap_or(""),
    );
    if chaining.is_some() {
        set("enable-host-legacy-routing", "true");
    }
    for (k, v) in [
        ("custom-cni-conf", "false"),
        ("enable-bpf-clock-probe", "false"),
        ("monitor-aggregation-interval", "5s"),
        ("monitor-aggregation-flags", "all"),
        ("bpf-map-dynamic-size-ratio", "0.0025"),
        ("bpf-policy-map-max", "16384"),
        ("bpf-policy-stats-map-max", "65536"),
        ("bpf-lb-map-max", "65536"),
        ("bpf-lb-external-clusterip", "false"),
        ("bpf-lb-source-range-all-types", "false"),
        ("bpf-lb-algorithm-annotation", "false"),
        ("bpf-lb-mode-annotation", "false"),
        ("bpf-distributed-lru", "false"),
        ("bpf-events-drop-enabled", "true"),
        ("bpf-events-policy-verdict-enabled", "true"),
        ("bpf-events-trace-enabled", "true"),
    ] {
        set(k, v);
    }
    set("preallocate-bpf-maps", &flag(c.preallocate_bpf_maps));
    set("cluster-name", c.cluster_name.as_deref().unwrap_or(""));
    if let Some(id) = c.cluster_id.filter(|i| *i != 0) {
        set("cluster-id", &id.to_string());
    }
    if tunnel == "disabled" {
        set("routing-mode", "native");
    } else {
        set("routing-mode", "tunnel");
        set("tunnel-protocol", &tunnel);
        set("tunnel-source-port-range", "0-0");
        set("service-no-backend-response", "reject");
    }
    set("enable-l7-proxy", &flag(c.enable_l7_proxy));
    if let Some(m) = chaining.as_deref() {
        set("cni-chaining-mode", m);
        if m != "portmap" {
            set("enable-local-node-route", "false");
        }
    }
    set(
        "enable-ipv4-masquerade",
        &(c.disable_masquerade != Some(true)).to_string(),
    );
    set(
        "enable-bpf-masquerade",
        &(on(c.enable_bpf_masquerade) && !ipv6).to_string(),
    );
    if let Some(kind) = encryption.as_deref() {
        for (k, v) in encryption_config(kind, on(c.node_encryption)) {
            set(k, v);
        }
    }
    for (k, v) in [
        ("enable-ipv4-big-tcp", "false"),
        ("enable-ipv6-big-tcp", "false"),
        ("enable-ipv6-masquerade", "false"),
        ("enable-tcx", "true"),
        ("datapath-mode", "veth"),
        ("enable-masquerade-to-route-source", "false"),
        ("enable-xt-socket-fallback", "true"),
        ("install-no-conntrack-iptables-rules", "false"),
        ("iptables-random-fully", "false"),
        ("direct-routing-skip-unreachable", "false"),
    ] {
        set(k, v);
    }
    set("auto-direct-node-routes", &flag(c.auto_direct_node_routes));
    set(
        "enable-local-redirect-policy",
        &flag(c.enable_local_redirect_policy),
    );
    set("kube-proxy-replacement", &flag(c.enable_node_port));
    set("bpf-lb-sock", &flag(c.bpf_lb_sock));
    set("bpf-lb-sock-hostns-only", &flag(c.bpf_lb_sock_host_ns_only));
    set("enable-node-port", &flag(c.enable_node_port));
    set("enable-service-topology", &flag(c.enable_service_topology));
    set("cni-exclusive", &flag(c.cni_exclusive));
    set(
        "enable-endpoint-health-checking",
        &flag(c.enable_endpoint_health_checking),
    );
    set("enable-host-firewall", &flag(c.enable_host_firewall));
    set(
        "operator-api-serve-addr",
        &format!("{}:9234", if ipv6 { "[::1]" } else { "127.0.0.1" }),
    );
    for (k, v) in [
        ("nodeport-addresses", ""),
        ("enable-health-check-nodeport", "true"),
        ("enable-health-check-loadbalancer-ip", "false"),
        ("node-port-bind-protection", "true"),
        ("enable-auto-protect-node-port-range", "true"),
        ("bpf-lb-acceleration", "disabled"),
        ("enable-svc-source-range-check", "true"),
        ("enable-l2-neigh-discovery", "false"),
        ("k8s-require-ipv4-pod-cidr", "false"),
        ("k8s-require-ipv6-pod-cidr", "false"),
        ("enable-k8s-networkpolicy", "true"),
        ("enable-endpoint-lockdown-on-policy-overflow", "false"),
        (
            "write-cni-conf-when-ready",
            "/host/etc/cni/net.d/05-cilium.conflist",
        ),
        ("cni-log-file", "/var/run/cilium/cilium-cni.log"),
        ("enable-health-checking", "true"),
        ("health-check-icmp-failure-threshold", "3"),
        ("enable-well-known-identities", "false"),
        ("enable-node-selector-labels", "false"),
        ("synchronize-k8s-nodes", "true"),
    ] {
        set(k, v);
    }
    if !ipam.is_empty() {
        set("ipam", &ipam);
        set("ipam-cilium-node-update-rate", "15s");
        set("cluster-pool-ipv4-mask-size", "24");
        if eni {
            set("enable-endpoint-routes", "true");
            set("auto-create-cilium-node-resource", "true");
            set("eni-tags", &cloud_labels);
        }
    }
    if chaining.is_none() {
        set("dnsproxy-enable-transparent-mode", "true");
    }
    set(
        "tofqdns-dns-reject-response-code",
        c.to_fqdns_dns_reject_response_code.as_deref().unwrap_or(""),
    );
    for (k, v) in [
        ("default-lb-service-ipam", "lbipam"),
        ("egress-gateway-reconciliation-trigger-interval", "1s"),
        ("enable-vtep", "false"),
        ("vtep-endpoint", ""),
        ("vtep-cidr", ""),
        ("vtep-mask", ""),
        ("vtep-mac", ""),
        ("procfs", "/host/proc"),
        ("bpf-root", "/sys/fs/bpf"),
        ("cgroup-root", "/run/cilium/cgroupv2"),
        ("identity-management-mode", "agent"),
        ("enable-sctp", "false"),
        ("remove-cilium-node-taints", "true"),
        ("set-cilium-node-taints", "true"),
        ("set-cilium-is-up-condition", "true"),
        ("unmanaged-pod-watcher-interval", "15"),
        ("dnsproxy-socket-linger-timeout", "10"),
        ("tofqdns-enable-dns-compression", "true"),
        ("tofqdns-endpoint-max-ip-per-hostname", "1000"),
        ("tofqdns-idle-connection-grace-period", "0s"),
        ("tofqdns-max-deferred-connection-deletes", "10000"),
        ("tofqdns-proxy-response-max-delay", "100ms"),
        ("tofqdns-preallocate-identities", "true"),
        (
            "agent-not-ready-taint-key",
            "node.cilium.io/agent-not-ready",
        ),
        ("mesh-auth-enabled", "true"),
        ("mesh-auth-queue-size", "1024"),
        ("mesh-auth-rotated-identities-queue-size", "1024"),
        ("mesh-auth-gc-interval", "5m0s"),
        ("proxy-xff-num-trusted-hops-ingress", "0"),
        ("proxy-xff-num-trusted-hops-egress", "0"),
        ("proxy-connect-timeout", "2"),
        ("proxy-initial-fetch-timeout", "30"),
        ("proxy-max-requests-per-connection", "0"),
        ("proxy-max-connection-duration-seconds", "0"),
        ("proxy-idle-timeout-seconds", "60"),
        ("proxy-max-concurrent-retries", "128"),
        ("http-retry-count", "3"),
        ("http-stream-idle-timeout", "300"),
        ("external-envoy-proxy", "false"),
        ("envoy-base-id", "0"),
        ("envoy-access-log-buffer-size", "4096"),
        ("envoy-keep-cap-netbindservice", "false"),
        ("max-connected-clusters", "255"),
        ("clustermesh-enable-endpoint-sync", "false"),
        ("clustermesh-enable-mcs-api", "false"),
        ("policy-default-local-cluster", "false"),
        ("nat-map-stats-entries", "32"),
        ("nat-map-stats-interval", "30s"),
        ("enable-internal-traffic-policy", "true"),
        ("enable-lb-ipam", "true"),
        ("enable-non-default-deny-policies", "true"),
        ("enable-source-ip-verification", "true"),
    ] {
        set(k, v);
    }
    for (k, v) in envoy.config() {
        set(k, &v);
    }
    if hubble {
        set("enable-hubble", "true");
        set("hubble-socket-path", "/var/run/cilium/hubble.sock");
        if !hubble_metrics.is_empty() {
            set("hubble-metrics-server", ":9965");
            set("hubble-metrics-server-enable-tls", "false");
            set("enable-hubble-open-metrics", "false");
            set("hubble-metrics", &hubble_metrics.join(" "));
        }
        set("hubble-network-policy-correlation-enabled", "true");
        set("hubble-listen-address", ":4244");
        set("hubble-disable-tls", "false");
        set(
            "hubble-tls-cert-file",
            "/var/lib/cilium/tls/hubble/server.crt",
        );
        set(
            "hubble-tls-key-file",
            "/var/lib/cilium/tls/hubble/server.key",
        );
        set(
            "hubble-tls-client-ca-files",
            "/var/lib/cilium/tls/hubble/client-ca.crt",
        );
    }
    for (k, v) in c.extra_config.iter().flatten() {
        set(k, v);
    }

    let mut out = vec![
        json!({
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": { "name": "cilium-operator", "namespace": NS, "labels": operator_labels() },
            "spec": { "maxUnavailable": 1, "selector": { "matchLabels": operator_selector() } },
        }),
        super::k8s::service_account("cilium", NS),
        super::k8s::service_account("cilium-operator", NS),
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": { "name": "cilium-config", "namespace": NS },
            "data": cfg,
        }),
        part_of(role("cilium", "", agent_rules())),
        part_of(role("cilium-operator", "", {
            let mut rules = operator_rules();
            rules.extend(envoy.operator_rules());
            rules
        })),
        part_of(binding(
            "cilium",
            "",
            "ClusterRole",
            "cilium",
            vec![sa_subject("cilium", NS)],
        )),
        part_of(binding(
            "cilium-operator",
            "",
            "ClusterRole",
            "cilium-operator",
            vec![sa_subject("cilium-operator", NS)],
        )),
        part_of(role(
            "cilium-config-agent",
            NS,
            vec![rule(&[""], &["configmaps"], &["get", "list", "watch"])],
        )),
        part_of(binding(
            "cilium-config-agent",
            NS,
            "Role",
            "cilium-config-agent",
            vec![sa_subject("cilium", NS)],
        )),
    ];
    // The secrets roles after the agent's config role, their bindings after its binding.
    let config_binding = out.len() - 1;
    out.splice(config_binding..config_binding, envoy.roles());
    out.extend(envoy.bindings());
    if let Some(keys) = &ipsec_keys {
        out.insert(0, ipsec_secret(keys));
    }
    let first = usize::from(ipsec_keys.is_some());
    if hubble {
        // kOps' order: the relay's account after the other accounts, its configuration
        // after the agent's, the services before the agent.
        out.insert(first + 3, hubble::service_account());
        out.insert(first + 5, hubble::relay_config(ctx.name()));
    }
    out.extend(envoy.services(prometheus));
    if hubble {
        out.extend(hubble::services(!hubble_metrics.is_empty()));
    }

    // The agent.
    let api_env = [
        json!({ "name": "KUBERNETES_SERVICE_HOST", "value": api_host }),
        json!({ "name": "KUBERNETES_SERVICE_PORT", "value": "443" }),
    ];
    let mut lifecycle = json!({ "preStop": { "exec": { "command": ["/cni-uninstall.sh"] } } });
    if eni {
        lifecycle["postStart"] = json!({ "exec": { "command": ["bash", "-c", concat!(
            "set -o errexit\nset -o pipefail\nset -o nounset\n\n",
            "if [[ \"$(iptables-save | grep -E -c 'AWS-SNAT-CHAIN|AWS-CONNMARK-CHAIN')\" != \"0\" ]];\nthen\n",
            "    echo 'Deleting iptables rules created by the AWS CNI VPC plugin'\n",
            "    iptables-save | grep -E -v 'AWS-SNAT-CHAIN|AWS-CONNMARK-CHAIN' | iptables-restore\n",
            "fi\necho 'Done!'\n",
        )] } });
    }
    let mut ports = Vec::new();
    if hubble {
        ports.push(json!({ "name": "peer-service", "containerPort": 4244, "hostPort": 4244, "protocol": "TCP" }));
        if !hubble_metrics.is_empty() {
            ports.push(json!({ "name": "hubble-metrics", "containerPort": 9965, "hostPort": 9965, "protocol": "TCP" }));
        }
    }
    if prometheus {
        ports.push(json!({ "containerPort": prom_port, "name": "prometheus", "protocol": "TCP" }));
    }
    let ports = if ports.is_empty() {
        Value::Null
    } else {
        Value::Array(ports)
    };
    let mut agent_mounts = vec![
        json!({ "mountPath": "/host/proc/sys/net", "name": "host-proc-sys-net" }),
        json!({ "mountPath": "/host/proc/sys/kernel", "name": "host-proc-sys-kernel" }),
        mount_prop("bpf-maps", "/sys/fs/bpf", "HostToContainer"),
        json!({ "name": "cilium-cgroup", "mountPath": "/run/cilium/cgroupv2" }),
        json!({ "name": "cilium-run", "mountPath": "/var/run/cilium" }),
        mount_prop("cilium-netns", "/var/run/cilium/netns", "HostToContainer"),
        json!({ "name": "etc-cni-netd", "mountPath": "/host/etc/cni/net.d" }),
    ];
    if etcd {
        agent_mounts.push(mount_ro("etcd-config-path", "/var/lib/etcd-config"));
        agent_mounts.push(mount_ro("etcd-secrets", "/var/lib/etcd-secrets"));
    }
    agent_mounts.extend([
        mount_ro("clustermesh-secrets", "/var/lib/cilium/clustermesh"),
        mount_ro("lib-modules", "/lib/modules"),
        json!({ "name": "xtables-lock", "mountPath": "/run/xtables.lock" }),
    ]);
    if ipsec_keys.is_some() {
        agent_mounts.push(json!({ "name": "cilium-ipsec-secrets", "mountPath": "/etc/ipsec" }));
    }
    if hubble {
        agent_mounts.push(mount_ro("hubble-tls", "/var/lib/cilium/tls/hubble"));
    }
    agent_mounts.push(json!({ "name": "tmp", "mountPath": "/tmp" }));
    let mut agent_env = vec![
        env_pod("K8S_NODE_NAME", "spec.nodeName"),
        env_pod("CILIUM_K8S_NAMESPACE", "metadata.namespace"),
        json!({ "name": "CILIUM_CLUSTERMESH_CONFIG", "value": "/var/lib/cilium/clustermesh/" }),
        json!({ "name": "GOMEMLIMIT", "valueFrom": { "resourceFieldRef": {
            "resource": "limits.memory", "divisor": "1" } } }),
        json!({ "name": "KUBE_CLIENT_BACKOFF_BASE", "value": "1" }),
        json!({ "name": "KUBE_CLIENT_BACKOFF_DURATION", "value": "120" }),
    ];
    agent_env.extend(api_env.iter().cloned());
    let mut containers = vec![json!({
        "name": "cilium-agent",
        "image": agent_image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["cilium-agent"],
        "args": ["--config-dir=/tmp/cilium/config-map"],
        "startupProbe": merge(probe(host, 9879, &[("brief", "true")]), json!({
            "failureThreshold": 300, "periodSeconds": 2, "successThreshold": 1, "initialDelaySeconds": 5 })),
        "livenessProbe": merge(probe(host, 9879, &[("brief", "true"), ("require-k8s-connectivity", "true")]), json!({
            "periodSeconds": 30, "successThreshold": 1, "failureThreshold": 10, "timeoutSeconds": 5 })),
        "readinessProbe": merge(probe(host, 9879, &[("brief", "true")]), json!({
            "periodSeconds": 30, "successThreshold": 1, "failureThreshold": 3, "timeoutSeconds": 5 })),
        "resources": { "requests": { "cpu": cpu, "memory": memory } },
        "env": agent_env,
        "lifecycle": lifecycle,
        "ports": ports,
        "securityContext": caps(&[
            "CHOWN", "KILL", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "SYS_MODULE", "SYS_ADMIN",
            "SYS_RESOURCE", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID",
        ]),
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "volumeMounts": agent_mounts,
    })];
    if debug {
        containers.push(json!({
            "name": "cilium-monitor",
            "image": agent_image,
            "imagePullPolicy": "IfNotPresent",
            "command": ["/bin/bash", "-c", "--"],
            "args": ["for i in {1..5}; do \\\n  [ -S /var/run/cilium/monitor1_2.sock ] && break || sleep 10;\\\n  done; \\\ncilium-dbg monitor"],
            "terminationMessagePolicy": "FallbackToLogsOnError",
            "volumeMounts": [ { "name": "cilium-run", "mountPath": "/var/run/cilium" } ],
        }));
    }
    let hostproc_mounts = json!([
        { "name": "hostproc", "mountPath": "/hostproc" },
        { "name": "cni-path", "mountPath": "/hostbin" },
    ]);
    let init = |name: &str, extra: Value| {
        merge(
            json!({
                "name": name,
                "image": agent_image,
                "imagePullPolicy": "IfNotPresent",
                "terminationMessagePolicy": "FallbackToLogsOnError",
            }),
            extra,
        )
    };
    let mut config_env = vec![
        env_pod("K8S_NODE_NAME", "spec.nodeName"),
        env_pod("CILIUM_K8S_NAMESPACE", "metadata.namespace"),
    ];
    config_env.extend(api_env.iter().cloned());
    let mut clean_env = vec![
        env_cm("CILIUM_ALL_STATE", "clean-cilium-state"),
        env_cm("CILIUM_BPF_STATE", "clean-cilium-bpf-state"),
        env_cm("WRITE_CNI_CONF_WHEN_READY", "write-cni-conf-when-ready"),
    ];
    clean_env.extend(api_env.iter().cloned());
    let init_containers = vec![
        init(
            "config",
            json!({
                "command": ["cilium-dbg", "build-config"],
                "env": config_env,
                "volumeMounts": [ { "name": "tmp", "mountPath": "/tmp" } ],
            }),
        ),
        init(
            "mount-cgroup",
            json!({
                "env": [
                    { "name": "CGROUP_ROOT", "value": "/run/cilium/cgroupv2" },
                    { "name": "BIN_PATH", "value": "/opt/cni/bin" },
                ],
                "command": ["sh", "-ec", concat!(
                    "cp /usr/bin/cilium-mount /hostbin/cilium-mount;\n",
                    "nsenter --cgroup=/hostproc/1/ns/cgroup --mount=/hostproc/1/ns/mnt \"${BIN_PATH}/cilium-mount\" $CGROUP_ROOT;\n",
                    "rm /hostbin/cilium-mount\n",
                )],
                "volumeMounts": hostproc_mounts,
                "securityContext": caps(&["SYS_ADMIN", "SYS_CHROOT", "SYS_PTRACE"]),
            }),
        ),
        init(
            "apply-sysctl-overwrites",
            json!({
                "env": [ { "name": "BIN_PATH", "value": "/opt/cni/bin" } ],
                "command": ["sh", "-ec", concat!(
                    "cp /usr/bin/cilium-sysctlfix /hostbin/cilium-sysctlfix;\n",
                    "nsenter --mount=/hostproc/1/ns/mnt \"${BIN_PATH}/cilium-sysctlfix\";\n",
                    "rm /hostbin/cilium-sysctlfix\n",
                )],
                "volumeMounts": hostproc_mounts,
                "securityContext": caps(&["SYS_ADMIN", "SYS_CHROOT", "SYS_PTRACE"]),
            }),
        ),
        init(
            "mount-bpf-fs",
            json!({
                "args": ["mount | grep \"/sys/fs/bpf type bpf\" || mount -t bpf bpf /sys/fs/bpf"],
                "command": ["/bin/bash", "-c", "--"],
                "securityContext": { "privileged": true },
                "volumeMounts": [mount_prop("bpf-maps", "/sys/fs/bpf", "Bidirectional")],
            }),
        ),
        init(
            "clean-cilium-state",
            json!({
                "command": ["/init-container.sh"],
                "env": clean_env,
                "securityContext": caps(&["NET_ADMIN", "SYS_MODULE", "SYS_ADMIN", "SYS_RESOURCE"]),
                "volumeMounts": [
                    { "name": "bpf-maps", "mountPath": "/sys/fs/bpf" },
                    mount_prop("cilium-cgroup", "/run/cilium/cgroupv2", "HostToContainer"),
                    { "name": "cilium-run", "mountPath": "/var/run/cilium" },
                ],
            }),
        ),
        init(
            "install-cni-binaries",
            json!({
                "command": ["/install-plugin.sh"],
                "resources": { "requests": { "cpu": "100m", "memory": "10Mi" } },
                "securityContext": caps(&[]),
                "volumeMounts": [ { "name": "cni-path", "mountPath": "/host/opt/cni/bin" } ],
            }),
        ),
    ];
    let etcd_volumes = [
        json!({ "name": "etcd-config-path", "configMap": { "name": "cilium-config", "defaultMode": 0o400,
            "items": [ { "key": "etcd-config", "path": "etcd.config" } ] } }),
        host_path_volume("etcd-secrets", "/etc/kubernetes/pki/cilium", "Directory"),
    ];
    let mut volumes = vec![
        json!({ "name": "tmp", "emptyDir": {} }),
        host_path_volume("cilium-run", "/var/run/cilium", "DirectoryOrCreate"),
        host_path_volume("cilium-netns", "/var/run/netns", "DirectoryOrCreate"),
        host_path_volume("bpf-maps", "/sys/fs/bpf", "DirectoryOrCreate"),
        host_path_volume("hostproc", "/proc", "Directory"),
        host_path_volume("cilium-cgroup", "/run/cilium/cgroupv2", "DirectoryOrCreate"),
        host_path_volume("cni-path", "/opt/cni/bin", "DirectoryOrCreate"),
        host_path_volume("etc-cni-netd", "/etc/cni/net.d", "DirectoryOrCreate"),
        host_path_volume("lib-modules", "/lib/modules", ""),
        host_path_volume("xtables-lock", "/run/xtables.lock", "FileOrCreate"),
    ];
    if etcd {
        volumes.extend(etcd_volumes.iter().cloned());
    }
    let secret = |name: &str, prefix: &str| {
        json!({ "secret": { "name": name, "optional": true, "items": [
            { "key": "tls.key", "path": format!("{prefix}-etcd-client.key") },
            { "key": "tls.crt", "path": format!("{prefix}-etcd-client.crt") },
            { "key": "ca.crt", "path": format!("{prefix}-etcd-client-ca.crt") },
        ] } })
    };
    volumes.push(
        json!({ "name": "clustermesh-secrets", "projected": { "defaultMode": 0o400, "sources": [
        { "secret": { "name": "cilium-clustermesh", "optional": true } },
        secret("clustermesh-apiserver-remote-cert", "common"),
        secret("clustermesh-apiserver-local-cert", "local"),
    ] } }),
    );
    volumes.push(host_path_volume(
        "host-proc-sys-net",
        "/proc/sys/net",
        "Directory",
    ));
    volumes.push(host_path_volume(
        "host-proc-sys-kernel",
        "/proc/sys/kernel",
        "Directory",
    ));
    if ipsec_keys.is_some() {
        volumes.push(json!({ "name": "cilium-ipsec-secrets",
            "secret": { "secretName": IPSEC_SECRET } }));
    }
    if hubble {
        volumes.push(hubble::agent_tls_volume());
    }

    let mut agent_annotations: BTreeMap<String, String> = BTreeMap::new();
    if prometheus {
        agent_annotations.insert("prometheus.io/port".into(), prom_port.to_string());
        agent_annotations.insert("prometheus.io/scrape".into(), "true".into());
    }
    for c in [
        "cilium-agent",
        "clean-cilium-state",
        "mount-cgroup",
        "apply-sysctl-overwrites",
    ] {
        agent_annotations.insert(
            format!("container.apparmor.security.beta.kubernetes.io/{c}"),
            "unconfined".into(),
        );
    }
    agent_annotations.insert(
        "kubectl.kubernetes.io/default-container".into(),
        "cilium-agent".into(),
    );
    for (k, v) in c.agent_pod_annotations.iter().flatten() {
        agent_annotations.insert(k.clone(), v.clone());
    }
    let agent_labels = json!({
        "k8s-app": "cilium",
        "app.kubernetes.io/part-of": "cilium",
        "app.kubernetes.io/name": "cilium-agent",
        "kubernetes.io/cluster-service": "true",
    });
    out.push(json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": { "name": "cilium", "namespace": NS, "labels": agent_labels },
        "spec": {
            "selector": { "matchLabels": { "k8s-app": "cilium", "kubernetes.io/cluster-service": "true" } },
            "updateStrategy": { "type": "OnDelete" },
            "template": {
                "metadata": { "annotations": agent_annotations, "labels": agent_labels },
                "spec": {
                    "securityContext": { "seccompProfile": { "type": "Unconfined" } },
                    "containers": containers,
                    "initContainers": init_containers,
                    "restartPolicy": "Always",
                    "priorityClassName": "system-node-critical",
                    "serviceAccountName": "cilium",
                    "automountServiceAccountToken": true,
                    "terminationGracePeriodSeconds": 1,
                    "hostNetwork": true,
                    "affinity": { "podAntiAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": [ {
                        "labelSelector": { "matchLabels": { "k8s-app": "cilium" } },
                        "topologyKey": "kubernetes.io/hostname" } ] } },
                    "nodeSelector": { "kubernetes.io/os": "linux" },
                    "tolerations": [ { "operator": "Exists" } ],
                    "volumes": volumes,
                },
            },
        },
    }));

    // The operator.
    let mut op_env = vec![
        env_pod("K8S_NODE_NAME", "spec.nodeName"),
        env_pod("CILIUM_K8S_NAMESPACE", "metadata.namespace"),
        json!({ "name": "CILIUM_DEBUG", "valueFrom": { "configMapKeyRef": {
            "key": "debug", "name": "cilium-config", "optional": true } } }),
    ];
    op_env.extend(api_env.iter().cloned());
    let mut op_mounts = vec![mount_ro("cilium-config-path", "/tmp/cilium/config-map")];
    let mut op_volumes =
        vec![json!({ "name": "cilium-config-path", "configMap": { "name": "cilium-config" } })];
    if etcd {
        op_mounts.push(mount_ro("etcd-config-path", "/var/lib/etcd-config"));
        op_mounts.push(mount_ro("etcd-secrets", "/var/lib/etcd-secrets"));
        op_volumes.extend(etcd_volumes.iter().cloned());
    }
    let mut operator = json!({
        "name": "cilium-operator",
        "image": operator_image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["cilium-operator"],
        "args": [
            "--config-dir=/tmp/cilium/config-map",
            "--debug=$(CILIUM_DEBUG)",
            format!("--eni-tags={cloud_labels}"),
        ],
        "env": op_env,
        "resources": { "requests": { "cpu": cpu, "memory": memory } },
        "livenessProbe": merge(probe(host, 9234, &[]), json!({
            "initialDelaySeconds": 60, "periodSeconds": 10, "timeoutSeconds": 3 })),
        "readinessProbe": merge(probe(host, 9234, &[]), json!({
            "initialDelaySeconds": 0, "periodSeconds": 5, "timeoutSeconds": 3, "failureThreshold": 5 })),
        "volumeMounts": op_mounts,
        "securityContext": { "allowPrivilegeEscalation": false, "capabilities": { "drop": ["ALL"] } },
        "terminationMessagePolicy": "FallbackToLogsOnError",
    });
    if prometheus {
        operator["ports"] = json!([{ "name": "prometheus", "containerPort": 9963, "hostPort": 9963, "protocol": "TCP" }]);
    }
    let op_tolerations: Vec<Value> = [
        "node-role.kubernetes.io/control-plane",
        "node-role.kubernetes.io/master",
        "node.kubernetes.io/not-ready",
        "node.cloudprovider.kubernetes.io/uninitialized",
        "node.cilium.io/agent-not-ready",
    ]
    .iter()
    .map(|k| json!({ "key": k, "operator": "Exists" }))
    .collect();
    let op_annotations: BTreeMap<String, String> =
        c.operator_pod_annotations.clone().unwrap_or_default();
    let control_plane =
        |key: &str| json!({ "matchExpressions": [ { "key": key, "operator": "Exists" } ] });
    let mut op_template_meta = json!({ "labels": operator_labels() });
    if !op_annotations.is_empty() {
        op_template_meta["annotations"] = json!(op_annotations);
    }
    out.push(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "name": "cilium-operator", "namespace": NS, "labels": operator_labels() },
        "spec": {
            "replicas": super::control_plane_replicas(ctx),
            "selector": { "matchLabels": operator_selector() },
            "strategy": { "rollingUpdate": { "maxSurge": "25%", "maxUnavailable": "50%" }, "type": "RollingUpdate" },
            "template": {
                "metadata": op_template_meta,
                "spec": {
                    "securityContext": { "seccompProfile": { "type": "RuntimeDefault" } },
                    "containers": [operator],
                    "hostNetwork": true,
                    "restartPolicy": "Always",
                    "priorityClassName": "system-cluster-critical",
                    "serviceAccountName": "cilium-operator",
                    "automountServiceAccountToken": true,
                    "affinity": {
                        "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": { "nodeSelectorTerms": [
                            control_plane("node-role.kubernetes.io/control-plane"),
                            control_plane("node-role.kubernetes.io/master"),
                        ] } },
                        "podAntiAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": [ {
                            "labelSelector": { "matchLabels": { "io.cilium/app": "operator" } },
                            "topologyKey": "kubernetes.io/hostname" } ] },
                    },
                    "nodeSelector": { "kubernetes.io/os": "linux" },
                    "tolerations": op_tolerations,
                    "volumes": op_volumes,
                },
            },
        },
    }));
    if hubble {
        out.extend(hubble::relay(ctx.name(), &registry, &version, debug));
    }
    out.extend(envoy.classes());
    Ok(out)
}

/// The Secret that holds the IPsec keys.
const IPSEC_SECRET: &str = "cilium-ipsec-keys";

/// The stored `ciliumpassword` secret's entries (`keys: <spi> <algorithm> <key> <bits>`),
/// when the store holds one: kOps puts them in the agents' IPsec key file whenever the
/// secret exists. The entries are secret: errors name the file, never its text.
fn ipsec_keys(ctx: &ClusterContext) -> Result<Option<serde_json::Map<String, Value>>> {
    const FILE: &str = "secrets/ciliumpassword";
    let Some(text) = ctx.cilium_password.as_deref() else {
        return Ok(None);
    };
    let parsed = kops_api::yaml::from_str(text).map_err(|_| {
        invalid(FILE, "not YAML: the secret holds `keys: <spi> <algorithm> <key> <bits>` (Cilium's IPsec key file entries)")
    })?;
    let Value::Object(entries) = parsed else {
        return Err(invalid(
            FILE,
            "not a mapping: the secret holds `keys: <spi> <algorithm> <key> <bits>` (Cilium's IPsec key file entries)",
        ));
    };
    let entries = entries
        .into_iter()
        .map(|(k, v)| {
            let text = match v {
                Value::String(s) => s,
                other => other.to_string(),
            };
            (k, Value::String(text))
        })
        .collect();
    Ok(Some(entries))
}

/// The IPsec keys' Secret, mounted by the agents at `/etc/ipsec`.
fn ipsec_secret(keys: &serde_json::Map<String, Value>) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": { "name": IPSEC_SECRET, "namespace": NS },
        "stringData": keys,
    })
}

/// The settings of the encryption `kind` (`ipsec` or `wireguard`), and whether traffic
/// between nodes' own addresses is encrypted too.
fn encryption_config(kind: &str, node_encryption: bool) -> Vec<(&'static str, &'static str)> {
    let mut out = match kind {
        "wireguard" => vec![("enable-wireguard", "true")],
        "ipsec" => vec![
            ("enable-ipsec", "true"),
            ("ipsec-key-file", "/etc/ipsec/keys"),
            ("enable-ipsec-key-watcher", "true"),
            ("ipsec-key-rotation-duration", "5m"),
            ("enable-ipsec-encrypted-overlay", "false"),
        ],
        _ => Vec::new(),
    };
    out.push((
        "encrypt-node",
        if node_encryption { "true" } else { "false" },
    ));
    out
}

fn operator_selector() -> Value {
    json!({ "io.cilium/app": "operator", "name": "cilium-operator" })
}

fn operator_labels() -> Value {
    json!({
        "io.cilium/app": "operator",
        "name": "cilium-operator",
        "app.kubernetes.io/name": "cilium-operator",
        "app.kubernetes.io/part-of": "cilium",
    })
}

/// The agent's cluster-wide permissions.
fn agent_rules() -> Vec<Value> {
    vec![
        rule(
            &["networking.k8s.io"],
            &["networkpolicies"],
            &["get", "list", "watch"],
        ),
        rule(
            &["discovery.k8s.io"],
            &["endpointslices"],
            &["get", "list", "watch"],
        ),
        rule(
            &[""],
            &[
                "namespaces",
                "services",
                "pods",
                "endpoints",
                "nodes",
                "secrets",
            ],
            &["get", "list", "watch"],
        ),
        rule(
            &["apiextensions.k8s.io"],
            &["customresourcedefinitions"],
            &["list", "watch", "get"],
        ),
        rule(
            &["cilium.io"],
            &[
                "ciliumloadbalancerippools",
                "ciliumbgppeeringpolicies",
                "ciliumbgpnodeconfigs",
                "ciliumbgpadvertisements",
                "ciliumbgppeerconfigs",
                "ciliumclusterwideenvoyconfigs",
                "ciliumclusterwidenetworkpolicies",
                "ciliumegressgatewaypolicies",
                "ciliumendpoints",
                "ciliumendpointslices",
                "ciliumenvoyconfigs",
                "ciliumidentities",
                "ciliumlocalredirectpolicies",
                "ciliumnetworkpolicies",
                "ciliumnodes",
                "ciliumnodeconfigs",
                "ciliumcidrgroups",
                "ciliuml2announcementpolicies",
                "ciliumpodippools",
            ],
            &["list", "watch"],
        ),
        rule(
            &["cilium.io"],
            &["ciliumidentities", "ciliumendpoints", "ciliumnodes"],
            &["create"],
        ),
        rule(&["cilium.io"], &["ciliumidentities"], &["update"]),
        rule(&["cilium.io"], &["ciliumendpoints"], &["delete", "get"]),
        rule(
            &["cilium.io"],
            &["ciliumnodes", "ciliumnodes/status"],
            &["get", "update"],
        ),
        rule(
            &["cilium.io"],
            &[
                "ciliumendpoints/status",
                "ciliumendpoints",
                "ciliuml2announcementpolicies/status",
                "ciliumbgpnodeconfigs/status",
            ],
            &["patch"],
        ),
    ]
}

/// The operator's cluster-wide permissions.
fn operator_rules() -> Vec<Value> {
    let crds: Vec<String> = [
        "ciliumloadbalancerippools",
        "ciliumbgppeeringpolicies",
        "ciliumbgpclusterconfigs",
        "ciliumbgppeerconfigs",
        "ciliumbgpadvertisements",
        "ciliumbgpnodeconfigs",
        "ciliumbgpnodeconfigoverrides",
        "ciliumclusterwideenvoyconfigs",
        "ciliumclusterwidenetworkpolicies",
        "ciliumegressgatewaypolicies",
        "ciliumendpoints",
        "ciliumendpointslices",
        "ciliumenvoyconfigs",
        "ciliumidentities",
        "ciliumlocalredirectpolicies",
        "ciliumnetworkpolicies",
        "ciliumnodes",
        "ciliumnodeconfigs",
        "ciliumcidrgroups",
        "ciliuml2announcementpolicies",
        "ciliumpodippools",
        "ciliumgatewayclassconfigs",
    ]
    .iter()
    .map(|r| format!("{r}.cilium.io"))
    .collect();
    let crds: Vec<&str> = crds.iter().map(String::as_str).collect();
    vec![
        rule(&[""], &["pods"], &["get", "list", "watch", "delete"]),
        named_rule(&[""], &["configmaps"], &["cilium-config"], &["patch"]),
        rule(&[""], &["nodes"], &["list", "watch"]),
        rule(&[""], &["nodes", "nodes/status"], &["patch"]),
        rule(
            &["discovery.k8s.io"],
            &["endpointslices"],
            &["get", "list", "watch"],
        ),
        rule(&[""], &["services/status"], &["update", "patch"]),
        rule(&[""], &["namespaces", "secrets"], &["get", "list", "watch"]),
        rule(
            &[""],
            &["services", "endpoints"],
            &[
                "get", "list", "watch", "create", "update", "delete", "patch",
            ],
        ),
        rule(
            &["cilium.io"],
            &["ciliumnetworkpolicies", "ciliumclusterwidenetworkpolicies"],
            &[
                "create",
                "update",
                "deletecollection",
                "patch",
                "get",
                "list",
                "watch",
            ],
        ),
        rule(
            &["cilium.io"],
            &[
                "ciliumnetworkpolicies/status",
                "ciliumclusterwidenetworkpolicies/status",
            ],
            &["patch", "update"],
        ),
        rule(
            &["cilium.io"],
            &["ciliumendpoints", "ciliumidentities"],
            &["delete", "list", "watch"],
        ),
        rule(&["cilium.io"], &["ciliumidentities"], &["update"]),
        rule(
            &["cilium.io"],
            &["ciliumnodes"],
            &["create", "update", "get", "list", "watch", "delete"],
        ),
        rule(&["cilium.io"], &["ciliumnodes/status"], &["update"]),
        rule(
            &["cilium.io"],
            &[
                "ciliumendpointslices",
                "ciliumenvoyconfigs",
                "ciliumbgppeerconfigs",
                "ciliumbgpadvertisements",
                "ciliumbgpnodeconfigs",
            ],
            &[
                "create", "update", "get", "list", "watch", "delete", "patch",
            ],
        ),
        rule(
            &["cilium.io"],
            &[
                "ciliumbgpclusterconfigs/status",
                "ciliumbgppeerconfigs/status",
            ],
            &["update"],
        ),
        rule(
            &["apiextensions.k8s.io"],
            &["customresourcedefinitions"],
            &["create", "get", "list", "watch"],
        ),
        named_rule(
            &["apiextensions.k8s.io"],
            &["customresourcedefinitions"],
            &crds,
            &["update"],
        ),
        rule(
            &["cilium.io"],
            &[
                "ciliumloadbalancerippools",
                "ciliumpodippools",
                "ciliumbgppeeringpolicies",
                "ciliumbgpclusterconfigs",
                "ciliumbgpnodeconfigoverrides",
                "ciliumbgppeerconfigs",
            ],
            &["get", "list", "watch"],
        ),
        rule(&["cilium.io"], &["ciliumpodippools"], &["create"]),
        rule(
            &["cilium.io"],
            &["ciliumloadbalancerippools/status"],
            &["patch"],
        ),
        rule(
            &["coordination.k8s.io"],
            &["leases"],
            &["create", "get", "update"],
        ),
    ]
}
