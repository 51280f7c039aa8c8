//! The CNI addons: kindnet, kopeio networking, flannel and kube-router.

use serde_json::{Value, json};

use super::k8s::{
    binding, env_field, host_path_volume, mount, role, rule, sa_subject, service_account,
};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

/// `networking.kindnet`.
pub(super) fn kindnet(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let k = ctx
        .cluster
        .spec
        .networking
        .kindnet
        .clone()
        .ok_or_else(|| invalid("spec.networking.kindnet", "not set"))?;
    let version = k
        .version
        .clone()
        .ok_or_else(|| invalid("spec.networking.kindnet.version", "not set"))?;
    let ns = "kube-system";
    let mut rules = vec![
        rule(&[""], &["nodes"], &["list", "watch", "patch"]),
        rule(&[""], &["nodes/proxy", "nodes/configz"], &["get"]),
        rule(&[""], &["configmaps"], &["get"]),
        rule(&[""], &["pods", "namespaces"], &["list", "watch"]),
        rule(
            &["networking.k8s.io"],
            &["networkpolicies"],
            &["list", "watch"],
        ),
    ];
    let anp = k.admin_network_policies == Some(true);
    let banp = k.baseline_admin_network_policies == Some(true);
    if anp || banp {
        let mut res = Vec::new();
        if anp {
            res.push("adminnetworkpolicies");
        }
        if banp {
            res.push("baselineadminnetworkpolicies");
        }
        rules.push(rule(
            &["policy.networking.k8s.io"],
            &res,
            &["list", "watch"],
        ));
    }
    let image = format!("registry.k8s.io/networking/kindnet:{version}");
    let mut args = vec![
        "/bin/kindnetd".to_owned(),
        "--hostname-override=$(NODE_NAME)".to_owned(),
        format!("--v={}", k.log_level.unwrap_or(0)),
    ];
    // kOps tests these as pointers: set at all (even to false) writes the flag.
    if let Some(v) = k.network_policies {
        args.push(format!("--network-policy={v}"));
    }
    if let Some(v) = k.admin_network_policies {
        args.push(format!("--admin-network-policy={v}"));
    }
    if let Some(v) = k.baseline_admin_network_policies {
        args.push(format!("--admin-network-policy={v}"));
    }
    args.push(format!("--dns-caching={}", k.dns_caching.unwrap_or(false)));
    args.push(format!("--nat64={}", k.nat64.unwrap_or(false)));
    args.push(format!(
        "--fastpath-threshold={}",
        k.fast_path_threshold.unwrap_or(0)
    ));
    if let Some(m) = k.masquerade.as_ref() {
        args.push(format!("--masquerading={}", m.enabled.unwrap_or(true)));
        if let Some(cidrs) = m.non_masquerade_cidrs.as_ref().filter(|c| !c.is_empty()) {
            args.push(format!("--no-masquerade-cidr={}", cidrs.join(",")));
        }
    }
    let labels = json!({ "tier": "node", "app": "kindnet", "k8s-app": "kindnet" });
    let mut out = vec![
        role("kindnet", "", rules),
        binding(
            "kindnet",
            "",
            "ClusterRole",
            "kindnet",
            vec![sa_subject("kindnet", ns)],
        ),
        service_account("kindnet", ns),
        json!({
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": { "name": "kindnet", "namespace": ns, "labels": labels },
            "spec": {
                "selector": { "matchLabels": { "app": "kindnet" } },
                "template": {
                    "metadata": { "labels": labels },
                    "spec": {
                        "hostNetwork": true,
                        "tolerations": [ { "operator": "Exists", "effect": "NoSchedule" } ],
                        "serviceAccountName": "kindnet",
                        "initContainers": [ {
                            "name": "install-cni-bin",
                            "image": image,
                            "command": ["sh", "-c", "cat /opt/cni/bin/cni-kindnet > /cni/cni-kindnet ; chmod +x /cni/cni-kindnet"],
                            "volumeMounts": [mount("cni-bin", "/cni")],
                        } ],
                        "containers": [ {
                            "name": "kindnet-cni",
                            "image": image,
                            "command": args,
                            "env": [
                                env_field("HOST_IP", "status.hostIP"),
                                env_field("POD_IP", "status.podIP"),
                                env_field("NODE_NAME", "spec.nodeName"),
                            ],
                            "volumeMounts": [
                                mount("cni-cfg", "/etc/cni/net.d"),
                                mount("var-lib-kindnet", "/var/lib/cni-kindnet"),
                                mount("nri-plugin", "/var/run/nri"),
                            ],
                            "resources": { "requests": { "cpu": "100m", "memory": "50Mi" } },
                            "securityContext": { "privileged": true },
                        } ],
                        "volumes": [
                            host_path_volume("cni-bin", "/opt/cni/bin", "DirectoryOrCreate"),
                            host_path_volume("cni-cfg", "/etc/cni/net.d", "DirectoryOrCreate"),
                            host_path_volume("var-lib-kindnet", "/var/lib/cni-kindnet", "DirectoryOrCreate"),
                            host_path_volume("nri-plugin", "/var/run/nri", ""),
                        ],
                    },
                },
            },
        }),
    ];
    // The network-policy-api CRDs kindnet enforces, each with its own setting (the
    // AdminNetworkPolicy's first, as kOps lists them).
    let crds = super::helpers::crds("network-policy-api.json", NETWORK_POLICY_API_CRDS)?;
    for (on, crd) in [
        (anp, "adminnetworkpolicies"),
        (banp, "baselineadminnetworkpolicies"),
    ] {
        let name = format!("{crd}.policy.networking.k8s.io");
        if on
            && let Some(c) = crds
                .iter()
                .find(|c| c["metadata"]["name"].as_str() == Some(name.as_str()))
        {
            out.push(c.clone());
        }
    }
    Ok(out)
}

/// The AdminNetworkPolicy and BaselineAdminNetworkPolicy CRDs (network-policy-api
/// v0.1.1, experimental), as data (see `crds/README.md`).
const NETWORK_POLICY_API_CRDS: &str = include_str!("crds/network-policy-api.json");

/// `networking.kope.io`: kopeio's networking agent on every node.
pub(super) fn kopeio() -> Vec<Value> {
    let ns = "kube-system";
    let name = "kopeio-networking-agent";
    let addon = json!({ "k8s-addon": "networking.kope.io" });
    let with_labels = |mut o: Value| {
        o["metadata"]["labels"] = addon.clone();
        o
    };
    vec![
        json!({
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": { "name": name, "namespace": ns, "labels": addon },
            "spec": {
                "selector": { "matchLabels": { "name": name } },
                "template": {
                    "metadata": { "labels": { "name": name } },
                    "spec": {
                        "hostPID": true,
                        "hostIPC": true,
                        "hostNetwork": true,
                        "containers": [ {
                            "resources": { "requests": { "cpu": "50m", "memory": "100Mi" }, "limits": { "memory": "100Mi" } },
                            "securityContext": { "privileged": true },
                            "image": "kopeio/networking-agent:1.0.20181028",
                            "name": "networking-agent",
                            "volumeMounts": [ { "name": "lib-modules", "mountPath": "/lib/modules", "readOnly": true } ],
                            "env": [env_field("NODE_NAME", "spec.nodeName")],
                        } ],
                        "serviceAccountName": name,
                        "priorityClassName": "system-node-critical",
                        "tolerations": [
                            { "effect": "NoSchedule", "operator": "Exists" },
                            { "effect": "NoExecute", "operator": "Exists" },
                        ],
                        "volumes": [host_path_volume("lib-modules", "/lib/modules", "")],
                    },
                },
            },
        }),
        with_labels(service_account(name, ns)),
        with_labels(role(
            "kopeio:networking-agent",
            "",
            vec![
                rule(&[""], &["nodes"], &["get", "list", "watch", "patch"]),
                rule(&[""], &["nodes/status"], &["patch"]),
            ],
        )),
        with_labels(binding(
            "kopeio:networking-agent",
            "",
            "ClusterRole",
            "kopeio:networking-agent",
            vec![
                json!({ "apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                "name": "system:serviceaccount:kube-system:kopeio-networking-agent" }),
            ],
        )),
    ]
}

/// `networking.flannel`: flannel in its own `kube-flannel` namespace.
pub(super) fn flannel(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let spec = &ctx.cluster.spec;
    let f = spec
        .networking
        .flannel
        .clone()
        .ok_or_else(|| invalid("spec.networking.flannel", "not set"))?;
    let ns = "kube-flannel";
    let backend = f
        .backend
        .clone()
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| "udp".into());
    let network = spec
        .networking
        .non_masquerade_cidr
        .clone()
        .unwrap_or_default();
    let resync = f
        .iptables_resync_seconds
        .filter(|s| *s != 0)
        .map_or("5".to_owned(), |s| s.to_string());
    let cni_conf = concat!(
        "{\n  \"name\": \"cbr0\",\n  \"cniVersion\": \"0.3.1\",\n  \"plugins\": [\n    {\n",
        "      \"type\": \"flannel\",\n      \"delegate\": {\n        \"hairpinMode\": true,\n",
        "        \"isDefaultGateway\": true\n      }\n    },\n    {\n      \"type\": \"portmap\",\n",
        "      \"capabilities\": {\n        \"portMappings\": true\n      }\n    }\n  ]\n}\n",
    );
    let net_conf = format!(
        "{{\n  \"Network\": \"{network}\",\n  \"EnableNFTables\": false,\n  \"Backend\": {{\n    \"Type\": \"{backend}\"\n  }}\n}}"
    );
    let k8s_app = json!({ "k8s-app": "flannel" });
    let with_labels = |mut o: Value| {
        o["metadata"]["labels"] = k8s_app.clone();
        o
    };
    let mut security =
        json!({ "privileged": false, "capabilities": { "add": ["NET_ADMIN", "NET_RAW"] } });
    if super::cloud_aws::selinux(ctx) {
        security["seLinuxOptions"] = json!({ "type": "spc_t", "level": "s0" });
    }
    let image = "ghcr.io/flannel-io/flannel:v0.28.9";
    Ok(vec![
        json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": { "name": ns, "labels": { "k8s-app": "flannel", "pod-security.kubernetes.io/enforce": "privileged" } },
        }),
        with_labels(role(
            "flannel",
            "",
            vec![
                rule(&[""], &["pods"], &["get"]),
                rule(&[""], &["nodes"], &["get", "list", "watch"]),
                rule(&[""], &["nodes/status"], &["patch"]),
            ],
        )),
        with_labels(binding(
            "flannel",
            "",
            "ClusterRole",
            "flannel",
            vec![sa_subject("flannel", ns)],
        )),
        with_labels(service_account("flannel", ns)),
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": { "name": "kube-flannel-cfg", "namespace": ns,
                "labels": { "tier": "node", "k8s-app": "flannel", "app": "flannel" } },
            "data": { "cni-conf.json": cni_conf, "net-conf.json": net_conf },
        }),
        json!({
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": { "name": "kube-flannel-ds", "namespace": ns,
                "labels": { "tier": "node", "app": "flannel", "k8s-app": "flannel" } },
            "spec": {
                "selector": { "matchLabels": { "tier": "node", "app": "flannel" } },
                "template": {
                    "metadata": { "labels": { "tier": "node", "app": "flannel" } },
                    "spec": {
                        "affinity": { "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [ { "matchExpressions": [
                                { "key": "kubernetes.io/os", "operator": "In", "values": ["linux"] } ] } ] } } },
                        "hostNetwork": true,
                        "priorityClassName": "system-node-critical",
                        "tolerations": [ { "operator": "Exists", "effect": "NoSchedule" } ],
                        "serviceAccountName": "flannel",
                        "initContainers": [
                            {
                                "name": "install-cni-plugin",
                                "image": "ghcr.io/flannel-io/flannel-cni-plugin:v1.9.1-flannel3",
                                "command": ["cp"],
                                "args": ["-f", "/flannel", "/opt/cni/bin/flannel"],
                                "volumeMounts": [mount("cni-plugin", "/opt/cni/bin")],
                            },
                            {
                                "name": "install-cni",
                                "image": image,
                                "command": ["/opt/bin/install-conf"],
                                "args": ["/etc/kube-flannel/cni-conf.json", "/etc/cni/net.d/10-flannel.conflist"],
                                "volumeMounts": [mount("cni", "/etc/cni/net.d"), mount("flannel-cfg", "/etc/kube-flannel/")],
                            },
                        ],
                        "containers": [ {
                            "name": "kube-flannel",
                            "image": image,
                            "command": ["/opt/bin/flanneld"],
                            "args": ["--ip-masq", "--kube-subnet-mgr", format!("--iptables-resync={resync}"), "--healthz-port=8081"],
                            "ports": [ { "name": "healthz", "containerPort": 8081, "protocol": "TCP" } ],
                            "livenessProbe": { "httpGet": { "path": "/healthz", "port": "healthz" },
                                "initialDelaySeconds": 10, "periodSeconds": 30 },
                            "readinessProbe": { "httpGet": { "path": "/readyz", "port": "healthz" },
                                "initialDelaySeconds": 5, "periodSeconds": 10 },
                            "resources": { "requests": { "cpu": "100m", "memory": "50Mi" } },
                            "securityContext": security,
                            "env": [
                                env_field("POD_NAME", "metadata.name"),
                                env_field("POD_NAMESPACE", "metadata.namespace"),
                                { "name": "EVENT_QUEUE_DEPTH", "value": "5000" },
                                { "name": "CONT_WHEN_CACHE_NOT_READY", "value": "false" },
                            ],
                            "volumeMounts": [
                                mount("run", "/run/flannel"),
                                mount("flannel-cfg", "/etc/kube-flannel/"),
                                mount("xtables-lock", "/run/xtables.lock"),
                            ],
                        } ],
                        "volumes": [
                            host_path_volume("run", "/run/flannel", ""),
                            host_path_volume("cni-plugin", "/opt/cni/bin", ""),
                            host_path_volume("cni", "/etc/cni/net.d", ""),
                            { "name": "flannel-cfg", "configMap": { "name": "kube-flannel-cfg" } },
                            host_path_volume("xtables-lock", "/run/xtables.lock", "FileOrCreate"),
                        ],
                    },
                },
            },
        }),
    ])
}

/// `networking.kuberouter`: kube-router as router, firewall and service proxy on every
/// node.
pub(super) fn kuberouter(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let net = &ctx.cluster.spec.networking;
    let kr = net
        .kuberouter
        .as_ref()
        .ok_or_else(|| invalid("spec.networking.kubeRouter", "not set"))?;
    let ns = "kube-system";
    let image = "docker.io/cloudnativelabs/kube-router:v2.11.1";
    let range = net.service_cluster_ip_range.clone().unwrap_or_default();
    let mut args: Vec<String> = [
        "--strict-external-ip-validation=false",
        "--run-router=true",
        "--run-firewall=true",
        "--run-service-proxy=true",
        "--bgp-graceful-restart=true",
        "--kubeconfig=/var/lib/kube-router/kubeconfig",
        "--metrics-port=12013",
        "--runtime-endpoint=unix:///run/containerd/containerd.sock",
        "--hairpin-mode=true",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    // kOps quotes the range inside the flag's value.
    args.push(format!("--service-cluster-ip-range=\"{range}\""));
    if kr.use_nf_tables_for_netpol == Some(true) {
        args.push("--use-nftables-for-netpol=true".into());
    }
    let cni_conf = concat!(
        "{\n   \"cniVersion\":\"0.3.0\",\n   \"name\":\"mynet\",\n   \"plugins\":[\n",
        "      {\n         \"name\":\"kubernetes\",\n         \"type\":\"bridge\",\n",
        "         \"bridge\":\"kube-bridge\",\n         \"isDefaultGateway\":true,\n",
        "         \"hairpinMode\":true,\n         \"ipam\":{\n            \"type\":\"host-local\"\n",
        "         }\n      },\n      {\n         \"type\": \"portmap\",\n",
        "         \"capabilities\": {\n            \"snat\": true,\n",
        "            \"portMappings\": true\n         }\n      }\n   ]\n}\n",
    );
    let install = concat!(
        "set -e -x; if [ ! -f /etc/cni/net.d/10-kuberouter.conflist ]; then ",
        "if [ -f /etc/cni/net.d/*.conf ]; then rm -f /etc/cni/net.d/*.conf; fi; ",
        "TMP=/etc/cni/net.d/.tmp-kuberouter-cfg; cp /etc/kube-router/cni-conf.json ${TMP}; ",
        "mv ${TMP} /etc/cni/net.d/10-kuberouter.conflist; fi",
    );
    let labels = json!({ "k8s-app": "kube-router", "tier": "node" });
    let ro =
        |name: &str, path: &str, r: bool| json!({ "name": name, "mountPath": path, "readOnly": r });
    let mut pod = json!({
        "priorityClassName": "system-node-critical",
        "serviceAccountName": "kube-router",
        "serviceAccount": "kube-router",
        "containers": [ {
            "name": "kube-router",
            "image": image,
            "args": args,
            "env": [
                env_field("NODE_NAME", "spec.nodeName"),
                env_field("POD_NAME", "metadata.name"),
                { "name": "KUBE_ROUTER_CNI_CONF_FILE", "value": "/etc/cni/net.d/10-kuberouter.conflist" },
            ],
            "livenessProbe": { "httpGet": { "path": "/healthz", "port": 20244 },
                "initialDelaySeconds": 10, "periodSeconds": 3 },
            "resources": { "requests": { "cpu": "250m", "memory": "250Mi" } },
            "securityContext": { "privileged": true },
            "volumeMounts": [
                ro("lib-modules", "/lib/modules", true),
                mount("cni-conf-dir", "/etc/cni/net.d"),
                ro("kubeconfig", "/var/lib/kube-router/kubeconfig", true),
                ro("xtables-lock", "/run/xtables.lock", false),
                ro("rt-tables", "/usr/share/iproute2/rt_tables", false),
                ro("containerd-sock", "/run/containerd/containerd.sock", true),
            ],
        } ],
        "initContainers": [ {
            "name": "install-cni",
            "image": image,
            "command": ["/bin/sh", "-c", install],
            "volumeMounts": [mount("cni-conf-dir", "/etc/cni/net.d"), mount("kube-router-cfg", "/etc/kube-router")],
        } ],
        "hostNetwork": true,
        "hostPID": true,
        "tolerations": [ { "operator": "Exists" } ],
        "volumes": [
            host_path_volume("lib-modules", "/lib/modules", ""),
            host_path_volume("cni-conf-dir", "/etc/cni/net.d", ""),
            { "name": "kube-router-cfg", "configMap": { "name": "kube-router-cfg" } },
            host_path_volume("kubeconfig", "/var/lib/kube-router/kubeconfig", ""),
            host_path_volume("xtables-lock", "/run/xtables.lock", "FileOrCreate"),
            host_path_volume("rt-tables", "/usr/share/iproute2/rt_tables", "FileOrCreate"),
            host_path_volume("containerd-sock", "/run/containerd/containerd.sock", ""),
        ],
    });
    if super::cloud_aws::selinux(ctx) {
        pod["securityContext"] = super::cloud_aws::selinux_context();
    }
    let read = ["list", "get", "watch"];
    Ok(vec![
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": { "name": "kube-router-cfg", "namespace": ns, "labels": { "tier": "node", "k8s-app": "kube-router" } },
            "data": { "cni-conf.json": cni_conf },
        }),
        json!({
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": { "name": "kube-router", "namespace": ns, "labels": labels },
            "spec": {
                "selector": { "matchLabels": labels },
                "template": { "metadata": { "labels": labels }, "spec": pod },
            },
        }),
        service_account("kube-router", ns),
        role(
            "kube-router",
            "",
            vec![
                rule(
                    &[""],
                    &["namespaces", "pods", "services", "nodes", "endpoints"],
                    &read,
                ),
                rule(&["networking.k8s.io"], &["networkpolicies"], &read),
                rule(
                    &["extensions"],
                    &["networkpolicies"],
                    &["get", "list", "watch"],
                ),
                rule(
                    &["coordination.k8s.io"],
                    &["leases"],
                    &["get", "create", "update"],
                ),
                rule(&[""], &["services/status"], &["update"]),
                rule(
                    &["discovery.k8s.io"],
                    &["endpointslices"],
                    &["get", "list", "watch"],
                ),
            ],
        ),
        binding(
            "kube-router",
            "",
            "ClusterRole",
            "kube-router",
            vec![
                sa_subject("kube-router", ns),
                json!({ "kind": "User", "name": "system:kube-router" }),
            ],
        ),
    ])
}
