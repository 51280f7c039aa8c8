//! `networking.projectcalico.org`: calico-node on every node, calico-kube-controllers on
//! the control plane, Typha when replicas are asked for, and Calico's CRDs (their schemas
//! in `crds/calico.json`, descriptions left out).

use serde_json::{Value, json};

use super::k8s::{binding, host_path_volume, named_rule, role, rule, sa_subject, service_account};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

const NS: &str = "kube-system";

/// Calico's CustomResourceDefinitions, schemas without their prose.
const CRDS: &str = include_str!("crds/calico.json");

fn labelled(mut o: Value, app: &str) -> Value {
    o["metadata"]["labels"] = json!({ "k8s-app": app });
    o
}

fn env_cm(name: &str, key: &str) -> Value {
    json!({ "name": name, "valueFrom": { "configMapKeyRef": { "name": "calico-config", "key": key } } })
}

fn env_node_name(name: &str) -> Value {
    json!({ "name": name, "valueFrom": { "fieldRef": { "fieldPath": "spec.nodeName" } } })
}

fn services_endpoint() -> Value {
    json!([{ "configMapRef": { "name": "kubernetes-services-endpoint", "optional": true } }])
}

fn mount(path: &str, name: &str, read_only: Option<bool>) -> Value {
    let mut m = json!({ "mountPath": path, "name": name });
    if let Some(r) = read_only {
        m["readOnly"] = r.into();
    }
    m
}

/// The objects of the Calico addon.
pub(super) fn objects(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let spec = &ctx.cluster.spec;
    let c = spec
        .networking
        .calico
        .clone()
        .ok_or_else(|| invalid("spec.networking.calico", "not set"))?;
    let ipv6 = ctx.is_ipv6_only();
    let typha = c.typha_replicas.unwrap_or(0);
    let mode = c.encapsulation_mode.clone().unwrap_or_default();
    let registry = c
        .registry
        .clone()
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| "docker.io".into());
    let version = c
        .version
        .clone()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "v3.31.6".into());
    let image = |name: &str| format!("{registry}/calico/{name}:{version}");
    let or = |v: &Option<String>, d: &str| {
        v.clone()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| d.to_owned())
    };
    let bool_of = |b: Option<bool>| b.unwrap_or(false).to_string();

    let mut out = Vec::new();
    if c.bpf_enabled == Some(true) {
        out.push(json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": { "name": "kubernetes-services-endpoint", "namespace": NS },
            "data": {
                "KUBERNETES_SERVICE_HOST": format!("api.internal.{}", ctx.name()),
                "KUBERNETES_SERVICE_PORT": "443",
            },
        }));
    }
    let pdb = |app: &str| {
        json!({
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": { "name": app, "namespace": NS, "labels": { "k8s-app": app } },
            "spec": { "maxUnavailable": 1, "selector": { "matchLabels": { "k8s-app": app } } },
        })
    };
    out.push(pdb("calico-kube-controllers"));
    if typha != 0 {
        out.push(pdb("calico-typha"));
    }
    for sa in [
        "calico-kube-controllers",
        "calico-node",
        "calico-cni-plugin",
    ] {
        out.push(service_account(sa, NS));
    }

    // The CNI configuration the install-cni init container writes.
    let ipam = if ipv6 {
        "          \"type\": \"host-local\",\n          \"ranges\": [[{ \"subnet\": \"usePodCidrIPv6\" }]]"
    } else {
        "          \"type\": \"calico-ipam\""
    };
    let forwarding = if c.allow_ip_forwarding == Some(true) {
        "\n      \"container_settings\": {\n          \"allow_ip_forwarding\": true\n      },"
    } else {
        ""
    };
    let cni = format!(
        concat!(
            "{{\n  \"name\": \"k8s-pod-network\",\n  \"cniVersion\": \"0.3.1\",\n  \"plugins\": [\n",
            "    {{\n      \"type\": \"calico\",\n      \"log_level\": \"info\",\n",
            "      \"log_file_path\": \"/var/log/calico/cni/cni.log\",\n",
            "      \"datastore_type\": \"kubernetes\",\n",
            "      \"nodename\": \"__KUBERNETES_NODE_NAME__\",\n      \"mtu\": __CNI_MTU__,\n",
            "      \"ipam\": {{\n          \"assign_ipv4\": \"{v4}\",\n          \"assign_ipv6\": \"{v6}\",\n",
            "{ipam}\n      }},{fwd}\n      \"policy\": {{\n          \"type\": \"k8s\"\n      }},\n",
            "      \"kubernetes\": {{\n          \"kubeconfig\": \"__KUBECONFIG_FILEPATH__\"\n      }}\n",
            "    }},\n    {{\n      \"type\": \"portmap\",\n      \"snat\": true,\n",
            "      \"capabilities\": {{\"portMappings\": true}}\n    }}\n  ]\n}}"
        ),
        v4 = !ipv6,
        v6 = ipv6,
        ipam = ipam,
        fwd = forwarding,
    );
    out.push(json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": { "name": "calico-config", "namespace": NS },
        "data": {
            "typha_service_name": if typha != 0 { "calico-typha" } else { "none" },
            "calico_backend": if mode == "ipip" { "bird" } else { mode.as_str() },
            "veth_mtu": c.mtu.unwrap_or(0).to_string(),
            "cni_network_config": cni,
        },
    }));

    let crds: Vec<Value> = serde_json::from_str(CRDS)
        .map_err(|e| invalid("addons/crds/calico.json", e.to_string()))?;
    out.extend(crds);

    let crd = "crd.projectcalico.org";
    out.push(role(
        "calico-kube-controllers",
        "",
        vec![
            rule(&[""], &["nodes"], &["watch", "list", "get"]),
            rule(&[""], &["pods"], &["get", "list", "watch"]),
            rule(&[""], &["namespaces"], &["get", "list", "watch"]),
            rule(
                &[""],
                &["services", "services/status"],
                &["get", "list", "update", "watch"],
            ),
            rule(&[crd], &["ipreservations"], &["list"]),
            rule(
                &[crd],
                &[
                    "blockaffinities",
                    "ipamblocks",
                    "ipamhandles",
                    "ipamconfigs",
                    "tiers",
                ],
                &["get", "list", "create", "update", "delete", "watch"],
            ),
            rule(&[crd], &["ippools"], &["list", "watch"]),
            rule(
                &[crd],
                &["hostendpoints"],
                &["get", "list", "create", "update", "delete", "watch"],
            ),
            rule(
                &[crd],
                &["clusterinformations"],
                &["get", "list", "create", "update", "watch"],
            ),
            rule(
                &[crd],
                &["kubecontrollersconfigurations"],
                &["get", "list", "create", "update", "watch"],
            ),
        ],
    ));
    out.push(role(
        "calico-node",
        "",
        vec![
            named_rule(
                &[""],
                &["serviceaccounts/token"],
                &["calico-cni-plugin"],
                &["create"],
            ),
            rule(&[""], &["pods", "nodes", "namespaces"], &["get"]),
            rule(
                &["discovery.k8s.io"],
                &["endpointslices"],
                &["watch", "list"],
            ),
            rule(&[""], &["endpoints", "services"], &["watch", "list", "get"]),
            rule(&[""], &["configmaps"], &["get"]),
            rule(&[""], &["nodes/status"], &["patch", "update"]),
            rule(
                &["networking.k8s.io"],
                &["networkpolicies"],
                &["watch", "list"],
            ),
            rule(
                &["policy.networking.k8s.io"],
                &["adminnetworkpolicies", "baselineadminnetworkpolicies"],
                &["watch", "list"],
            ),
            rule(
                &[""],
                &["pods", "namespaces", "serviceaccounts"],
                &["list", "watch"],
            ),
            rule(&[""], &["pods/status"], &["patch"]),
            rule(
                &[crd],
                &[
                    "globalfelixconfigs",
                    "felixconfigurations",
                    "bgppeers",
                    "bgpfilters",
                    "globalbgpconfigs",
                    "bgpconfigurations",
                    "ippools",
                    "ipreservations",
                    "ipamblocks",
                    "globalnetworkpolicies",
                    "stagedglobalnetworkpolicies",
                    "networkpolicies",
                    "stagednetworkpolicies",
                    "stagedkubernetesnetworkpolicies",
                    "globalnetworksets",
                    "networksets",
                    "clusterinformations",
                    "hostendpoints",
                    "blockaffinities",
                    "caliconodestatuses",
                    "tiers",
                ],
                &["get", "list", "watch"],
            ),
            rule(&[crd], &["tiers"], &["create"]),
            rule(
                &[crd],
                &["ippools", "felixconfigurations", "clusterinformations"],
                &["create", "update"],
            ),
            rule(&[crd], &["caliconodestatuses"], &["update"]),
            rule(&[""], &["nodes"], &["get", "list", "watch"]),
            rule(
                &[crd],
                &["bgpconfigurations", "bgppeers"],
                &["create", "update"],
            ),
            rule(
                &[crd],
                &["blockaffinities", "ipamblocks", "ipamhandles"],
                &["get", "list", "create", "update", "delete"],
            ),
            rule(&[crd], &["ipamconfigs"], &["get", "create"]),
            rule(&[crd], &["blockaffinities"], &["watch"]),
            rule(&["apps"], &["daemonsets"], &["get"]),
        ],
    ));
    out.push(role(
        "calico-cni-plugin",
        "",
        vec![
            rule(&[""], &["pods", "nodes", "namespaces"], &["get"]),
            rule(&[""], &["pods/status"], &["patch"]),
            rule(
                &[crd],
                &[
                    "blockaffinities",
                    "ipamblocks",
                    "ipamhandles",
                    "clusterinformations",
                    "ippools",
                    "ipreservations",
                    "ipamconfigs",
                ],
                &["get", "list", "create", "update", "delete"],
            ),
        ],
    ));
    out.push(role(
        "calico-tier-getter",
        "",
        vec![rule(&["projectcalico.org"], &["tiers"], &["get"])],
    ));
    for name in [
        "calico-kube-controllers",
        "calico-node",
        "calico-cni-plugin",
    ] {
        out.push(binding(
            name,
            "",
            "ClusterRole",
            name,
            vec![sa_subject(name, NS)],
        ));
    }
    out.push(binding(
        "calico-tier-getter",
        "",
        "ClusterRole",
        "calico-tier-getter",
        vec![
            json!({ "apiGroup": "rbac.authorization.k8s.io", "kind": "User",
            "name": "system:kube-controller-manager" }),
        ],
    ));
    if typha != 0 {
        out.push(labelled(
            json!({
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": { "name": "calico-typha", "namespace": NS },
                "spec": {
                    "ports": [ { "port": 5473, "protocol": "TCP", "targetPort": "calico-typha", "name": "calico-typha" } ],
                    "selector": { "k8s-app": "calico-typha" },
                },
            }),
            "calico-typha",
        ));
    }

    // calico-node.
    let mut init = Vec::new();
    if !ipv6 {
        init.push(json!({
            "name": "upgrade-ipam",
            "image": image("cni"),
            "imagePullPolicy": "IfNotPresent",
            "command": ["/opt/cni/bin/calico-ipam", "-upgrade"],
            "envFrom": services_endpoint(),
            "env": [env_node_name("KUBERNETES_NODE_NAME"), env_cm("CALICO_NETWORKING_BACKEND", "calico_backend")],
            "volumeMounts": [
                mount("/var/lib/cni/networks", "host-local-net-dir", None),
                mount("/host/opt/cni/bin", "cni-bin-dir", None),
            ],
            "securityContext": { "privileged": true },
        }));
    }
    init.push(json!({
        "name": "install-cni",
        "image": image("cni"),
        "imagePullPolicy": "IfNotPresent",
        "command": ["/opt/cni/bin/install"],
        "envFrom": services_endpoint(),
        "env": [
            { "name": "CNI_CONF_NAME", "value": "10-calico.conflist" },
            env_cm("CNI_NETWORK_CONFIG", "cni_network_config"),
            env_node_name("KUBERNETES_NODE_NAME"),
            env_cm("CNI_MTU", "veth_mtu"),
            { "name": "SLEEP", "value": "false" },
        ],
        "volumeMounts": [
            mount("/host/opt/cni/bin", "cni-bin-dir", None),
            mount("/host/etc/cni/net.d", "cni-net-dir", None),
        ],
        "securityContext": { "privileged": true },
    }));
    init.push(json!({
        "name": "ebpf-bootstrap",
        "image": image("node"),
        "imagePullPolicy": "IfNotPresent",
        "command": ["calico-node", "-init", "-best-effort"],
        "volumeMounts": [
            { "mountPath": "/sys/fs", "name": "sys-fs", "mountPropagation": "Bidirectional" },
            { "mountPath": "/var/run/calico", "name": "var-run-calico", "mountPropagation": "Bidirectional" },
            mount("/nodeproc", "nodeproc", Some(true)),
        ],
        "securityContext": { "privileged": true },
    }));

    let v = |name: &str, value: String| json!({ "name": name, "value": value });
    let mut env = vec![v("DATASTORE_TYPE", "kubernetes".into())];
    if ipv6 {
        env.push(v("USE_POD_CIDR", "true".into()));
    }
    if typha != 0 {
        env.push(env_cm("FELIX_TYPHAK8SSERVICENAME", "typha_service_name"));
    }
    env.push(v("WAIT_FOR_DATASTORE", "true".into()));
    env.push(env_node_name("NODENAME"));
    env.push(env_cm("CALICO_NETWORKING_BACKEND", "calico_backend"));
    env.push(v("CLUSTER_TYPE", "kops,bgp".into()));
    env.push(v("IP", if ipv6 { "none" } else { "autodetect" }.into()));
    env.push(v("IP6", if ipv6 { "autodetect" } else { "none" }.into()));
    let (v4_detect, v6_detect) = if ipv6 {
        ("none", "first-found")
    } else {
        ("first-found", "none")
    };
    env.push(v(
        "IP_AUTODETECTION_METHOD",
        or(&c.ipv4_auto_detection_method, v4_detect),
    ));
    env.push(v(
        "IP6_AUTODETECTION_METHOD",
        or(&c.ipv6_auto_detection_method, v6_detect),
    ));
    let ipip = if mode != "ipip" {
        "Never".to_owned()
    } else {
        or(&c.ipip_mode, "CrossSubnet")
    };
    let vxlan = |dflt: &str| {
        if mode != "vxlan" {
            "Never".to_owned()
        } else {
            or(&c.vxlan_mode, dflt)
        }
    };
    env.push(v("CALICO_IPV4POOL_IPIP", ipip));
    env.push(v("CALICO_IPV4POOL_VXLAN", vxlan("CrossSubnet")));
    env.push(v("CALICO_IPV6POOL_VXLAN", vxlan("Never")));
    env.push(env_cm("FELIX_IPINIPMTU", "veth_mtu"));
    env.push(env_cm("FELIX_VXLANMTU", "veth_mtu"));
    env.push(env_cm("FELIX_WIREGUARDMTU", "veth_mtu"));
    if ipv6 {
        env.push(v("CALICO_ROUTER_ID", "hash".into()));
        env.push(v("NO_DEFAULT_POOLS", "true".into()));
    } else {
        let cidr = spec
            .kube_controller_manager
            .as_ref()
            .and_then(|k| k.cluster_cidr.clone())
            .unwrap_or_default();
        env.push(v("CALICO_IPV4POOL_CIDR", cidr));
    }
    env.push(v("CALICO_DISABLE_FILE_LOGGING", "true".into()));
    env.push(v("FELIX_DEFAULTENDPOINTTOHOSTACTION", "ACCEPT".into()));
    env.push(v("FELIX_IPV6SUPPORT", ipv6.to_string()));
    env.push(v("FELIX_HEALTHENABLED", "true".into()));
    let src_dst = if spec.cloud_provider.aws.is_some() && !ipv6 {
        or(&c.aws_src_dst_check, "Disable")
    } else {
        "DoNothing".to_owned()
    };
    env.push(v("FELIX_AWSSRCDSTCHECK", src_dst));
    env.push(v("FELIX_BPFENABLED", bool_of(c.bpf_enabled)));
    env.push(v(
        "FELIX_BPFEXTERNALSERVICEMODE",
        or(&c.bpf_external_service_mode, "Tunnel"),
    ));
    env.push(v(
        "FELIX_BPFKUBEPROXYIPTABLESCLEANUPENABLED",
        bool_of(c.bpf_kube_proxy_iptables_cleanup_enabled),
    ));
    env.push(v("FELIX_BPFLOGLEVEL", or(&c.bpf_log_level, "Off")));
    env.push(v(
        "FELIX_CHAININSERTMODE",
        or(&c.chain_insert_mode, "insert"),
    ));
    env.push(v("FELIX_IPTABLESBACKEND", or(&c.iptables_backend, "Auto")));
    if let Some(m) = c.nftables_mode.as_deref().filter(|m| !m.is_empty()) {
        env.push(v("FELIX_NFTABLESMODE", m.to_owned()));
    }
    env.push(v(
        "FELIX_LOGSEVERITYSCREEN",
        or(&c.log_severity_screen, "info"),
    ));
    let metrics_port = c
        .prometheus_metrics_port
        .filter(|p| *p != 0)
        .unwrap_or(9091);
    env.push(v(
        "FELIX_PROMETHEUSMETRICSENABLED",
        bool_of(c.prometheus_metrics_enabled),
    ));
    env.push(v("FELIX_PROMETHEUSMETRICSPORT", metrics_port.to_string()));
    env.push(v(
        "FELIX_PROMETHEUSGOMETRICSENABLED",
        bool_of(c.prometheus_go_metrics_enabled),
    ));
    env.push(v(
        "FELIX_PROMETHEUSPROCESSMETRICSENABLED",
        bool_of(c.prometheus_process_metrics_enabled),
    ));
    env.push(v("FELIX_WIREGUARDENABLED", bool_of(c.wireguard_enabled)));
    env.extend(super::proxy_env(ctx));

    let bird = |live: bool| -> Vec<&'static str> {
        let mut cmd = vec![
            "/bin/calico-node",
            if live { "-felix-live" } else { "-felix-ready" },
        ];
        if mode == "ipip" {
            cmd.push(match (ipv6, live) {
                (true, true) => "-bird6-live",
                (false, true) => "-bird-live",
                (true, false) => "-bird6-ready",
                (false, false) => "-bird-ready",
            });
        }
        cmd
    };
    let cpu = c.cpu_request.clone().unwrap_or_else(|| "250m".into());
    let mut node = json!({
        "name": "calico-node",
        "image": image("node"),
        "imagePullPolicy": "IfNotPresent",
        "envFrom": services_endpoint(),
        "env": env,
        "securityContext": { "privileged": true },
        "resources": { "requests": { "cpu": cpu } },
        "lifecycle": { "preStop": { "exec": { "command": ["/bin/calico-node", "-shutdown"] } } },
        "livenessProbe": { "exec": { "command": bird(true) },
            "periodSeconds": 10, "initialDelaySeconds": 10, "failureThreshold": 6, "timeoutSeconds": 10 },
        "readinessProbe": { "exec": { "command": bird(false) }, "periodSeconds": 10, "timeoutSeconds": 10 },
        "volumeMounts": [
            mount("/host/etc/cni/net.d", "cni-net-dir", Some(false)),
            mount("/lib/modules", "lib-modules", Some(true)),
            mount("/run/xtables.lock", "xtables-lock", Some(false)),
            mount("/var/run/calico", "var-run-calico", Some(false)),
            mount("/var/lib/calico", "var-lib-calico", Some(false)),
            mount("/var/run/nodeagent", "policysync", None),
            mount("/sys/fs/bpf", "bpffs", None),
            mount("/var/log/calico/cni", "cni-log-dir", Some(true)),
        ],
    });
    if c.prometheus_metrics_enabled == Some(true) {
        node["ports"] =
            json!([{ "containerPort": metrics_port, "name": "metrics", "protocol": "TCP" }]);
    }
    let mut volumes = vec![
        host_path_volume("lib-modules", "/lib/modules", ""),
        host_path_volume("var-run-calico", "/var/run/calico", "DirectoryOrCreate"),
        host_path_volume("var-lib-calico", "/var/lib/calico", "DirectoryOrCreate"),
        host_path_volume("xtables-lock", "/run/xtables.lock", "FileOrCreate"),
        host_path_volume("sys-fs", "/sys/fs/", "DirectoryOrCreate"),
        host_path_volume("bpffs", "/sys/fs/bpf", "Directory"),
        host_path_volume("nodeproc", "/proc", ""),
        host_path_volume("cni-bin-dir", "/opt/cni/bin", "DirectoryOrCreate"),
        host_path_volume("cni-net-dir", "/etc/cni/net.d", ""),
        host_path_volume("cni-log-dir", "/var/log/calico/cni", ""),
    ];
    if !ipv6 {
        volumes.push(host_path_volume(
            "host-local-net-dir",
            "/var/lib/cni/networks",
            "",
        ));
    }
    volumes.push(host_path_volume(
        "policysync",
        "/var/run/nodeagent",
        "DirectoryOrCreate",
    ));
    out.push(labelled(
        json!({
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": { "name": "calico-node", "namespace": NS },
            "spec": {
                "selector": { "matchLabels": { "k8s-app": "calico-node" } },
                "updateStrategy": { "type": "RollingUpdate", "rollingUpdate": { "maxUnavailable": 1 } },
                "template": {
                    "metadata": { "labels": { "k8s-app": "calico-node" } },
                    "spec": {
                        "nodeSelector": { "kubernetes.io/os": "linux" },
                        "hostNetwork": true,
                        "tolerations": [
                            { "effect": "NoSchedule", "operator": "Exists" },
                            { "key": "CriticalAddonsOnly", "operator": "Exists" },
                            { "effect": "NoExecute", "operator": "Exists" },
                        ],
                        "serviceAccountName": "calico-node",
                        "securityContext": { "seccompProfile": { "type": "RuntimeDefault" } },
                        "terminationGracePeriodSeconds": 0,
                        "priorityClassName": "system-node-critical",
                        "initContainers": init,
                        "containers": [node],
                        "volumes": volumes,
                    },
                },
            },
        }),
        "calico-node",
    ));

    // calico-kube-controllers.
    let term = |key: &str| {
        json!({ "matchExpressions": [
            { "key": key, "operator": "Exists" },
            { "key": "kubernetes.io/os", "operator": "In", "values": ["linux"] },
        ] })
    };
    out.push(labelled(
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": { "name": "calico-kube-controllers", "namespace": NS },
            "spec": {
                "replicas": 1,
                "selector": { "matchLabels": { "k8s-app": "calico-kube-controllers" } },
                "strategy": { "type": "Recreate" },
                "template": {
                    "metadata": { "name": "calico-kube-controllers", "namespace": NS,
                        "labels": { "k8s-app": "calico-kube-controllers" } },
                    "spec": {
                        "affinity": { "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                term("node-role.kubernetes.io/control-plane"),
                                term("node-role.kubernetes.io/master"),
                            ] } } },
                        "tolerations": [
                            { "key": "CriticalAddonsOnly", "operator": "Exists" },
                            { "key": "node-role.kubernetes.io/master", "effect": "NoSchedule" },
                            { "key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule" },
                        ],
                        "serviceAccountName": "calico-kube-controllers",
                        "securityContext": { "seccompProfile": { "type": "RuntimeDefault" } },
                        "priorityClassName": "system-cluster-critical",
                        "containers": [ {
                            "name": "calico-kube-controllers",
                            "image": image("kube-controllers"),
                            "imagePullPolicy": "IfNotPresent",
                            "env": [
                                { "name": "ENABLED_CONTROLLERS", "value": "node,loadbalancer" },
                                { "name": "DATASTORE_TYPE", "value": "kubernetes" },
                            ],
                            "livenessProbe": { "exec": { "command": ["/usr/bin/check-status", "-l"] },
                                "periodSeconds": 10, "initialDelaySeconds": 10, "failureThreshold": 6, "timeoutSeconds": 10 },
                            "readinessProbe": { "exec": { "command": ["/usr/bin/check-status", "-r"] }, "periodSeconds": 10 },
                            "securityContext": { "runAsNonRoot": true },
                        } ],
                    },
                },
            },
        }),
        "calico-kube-controllers",
    ));

    if typha != 0 {
        let typha_metrics = c.typha_prometheus_metrics_enabled == Some(true);
        let typha_port = c
            .typha_prometheus_metrics_port
            .filter(|p| *p != 0)
            .unwrap_or(9093);
        let mut ports =
            vec![json!({ "containerPort": 5473, "name": "calico-typha", "protocol": "TCP" })];
        if typha_metrics {
            ports
                .push(json!({ "containerPort": typha_port, "name": "metrics", "protocol": "TCP" }));
        }
        let tenv: Vec<Value> = [
            ("TYPHA_LOGSEVERITYSCREEN", "info".to_owned()),
            ("TYPHA_LOGFILEPATH", "none".to_owned()),
            ("TYPHA_LOGSEVERITYSYS", "none".to_owned()),
            ("TYPHA_CONNECTIONREBALANCINGMODE", "kubernetes".to_owned()),
            ("TYPHA_DATASTORETYPE", "kubernetes".to_owned()),
            ("TYPHA_HEALTHENABLED", "true".to_owned()),
            ("TYPHA_SHUTDOWNTIMEOUTSECS", "300".to_owned()),
            ("TYPHA_PROMETHEUSMETRICSENABLED", typha_metrics.to_string()),
            ("TYPHA_PROMETHEUSMETRICSPORT", typha_port.to_string()),
        ]
        .into_iter()
        .map(|(k, val)| v(k, val))
        .collect();
        out.push(labelled(
            json!({
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": { "name": "calico-typha", "namespace": NS },
                "spec": {
                    "replicas": typha,
                    "revisionHistoryLimit": 2,
                    "selector": { "matchLabels": { "k8s-app": "calico-typha" } },
                    "strategy": { "rollingUpdate": { "maxSurge": "100%", "maxUnavailable": 1 }, "type": "RollingUpdate" },
                    "template": {
                        "metadata": { "labels": { "k8s-app": "calico-typha" },
                            "annotations": { "cluster-autoscaler.kubernetes.io/safe-to-evict": "true" } },
                        "spec": {
                            "nodeSelector": { "kubernetes.io/os": "linux" },
                            "hostNetwork": true,
                            "terminationGracePeriodSeconds": 300,
                            "tolerations": [
                                { "key": "CriticalAddonsOnly", "operator": "Exists" },
                                { "effect": "NoSchedule", "operator": "Exists" },
                                { "effect": "NoExecute", "operator": "Exists" },
                            ],
                            "serviceAccountName": "calico-node",
                            "priorityClassName": "system-cluster-critical",
                            "securityContext": { "fsGroup": 65534, "seccompProfile": { "type": "RuntimeDefault" } },
                            "containers": [ {
                                "image": image("typha"),
                                "imagePullPolicy": "IfNotPresent",
                                "name": "calico-typha",
                                "ports": ports,
                                "envFrom": services_endpoint(),
                                "env": tenv,
                                "livenessProbe": { "httpGet": { "path": "/liveness", "port": 9098, "host": "localhost" },
                                    "periodSeconds": 30, "initialDelaySeconds": 30, "timeoutSeconds": 10 },
                                "securityContext": { "runAsNonRoot": true, "allowPrivilegeEscalation": false },
                                "readinessProbe": { "httpGet": { "path": "/readiness", "port": 9098, "host": "localhost" },
                                    "periodSeconds": 10, "timeoutSeconds": 10 },
                            } ],
                        },
                    },
                },
            }),
            "calico-typha",
        ));
    }
    Ok(out)
}
