//! The CNI addons: kindnet and kopeio networking.

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
    if anp {
        return Err(invalid(
            "spec.networking.kindnet.adminNetworkPolicies",
            "the AdminNetworkPolicy CRDs are not generated yet",
        ));
    }
    Ok(vec![
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
    ])
}

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
