//! `networking.amazon-vpc-routed-eni`: the AWS VPC CNI (`aws-node`) with its network
//! policy agent on every node, and the `ENIConfig` CRD (schema in `crds/amazon-vpc.json`,
//! descriptions left out).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::k8s::{binding, host_path_volume, role, rule, sa_subject};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

const NS: &str = "kube-system";
const VERSION: &str = "v1.23.0";
const CRDS: &str = include_str!("crds/amazon-vpc.json");

/// kOps' `AmazonVpcEnvVars`: the Helm chart's defaults, the spec's `env` over them, then
/// the address family and the ENI tags kOps sets itself.
fn env_vars(ctx: &ClusterContext) -> BTreeMap<String, String> {
    let mut vars: BTreeMap<String, String> = [
        ("ADDITIONAL_ENI_TAGS", "{}"),
        ("AWS_VPC_CNI_NODE_PORT_SUPPORT", "true"),
        ("AWS_VPC_ENI_MTU", "9001"),
        ("AWS_VPC_K8S_CNI_CONFIGURE_RPFILTER", "false"),
        ("AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG", "false"),
        ("AWS_VPC_K8S_CNI_EXTERNALSNAT", "false"),
        (
            "AWS_VPC_K8S_CNI_LOG_FILE",
            "/host/var/log/aws-routed-eni/ipamd.log",
        ),
        ("AWS_VPC_K8S_CNI_LOGLEVEL", "DEBUG"),
        ("AWS_VPC_K8S_CNI_RANDOMIZESNAT", "prng"),
        ("AWS_VPC_K8S_CNI_VETHPREFIX", "eni"),
        (
            "AWS_VPC_K8S_PLUGIN_LOG_FILE",
            "/var/log/aws-routed-eni/plugin.log",
        ),
        ("AWS_VPC_K8S_PLUGIN_LOG_LEVEL", "DEBUG"),
        ("DISABLE_INTROSPECTION", "false"),
        ("DISABLE_METRICS", "false"),
        ("ENABLE_POD_ENI", "false"),
        ("ENABLE_PREFIX_DELEGATION", "false"),
        ("ENABLE_SUBNET_DISCOVERY", "true"),
        ("NETWORK_POLICY_ENFORCING_MODE", "standard"),
        ("WARM_ENI_TARGET", "1"),
        ("WARM_PREFIX_TARGET", "1"),
        ("DISABLE_NETWORK_RESOURCE_PROVISIONING", "false"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    if let Some(env) = ctx
        .cluster
        .spec
        .networking
        .amazonvpc
        .as_ref()
        .and_then(|a| a.env.as_ref())
    {
        for e in env {
            if let Some(n) = e.name.clone() {
                vars.insert(n, e.value.clone().unwrap_or_default());
            }
        }
    }
    let ipv6 = ctx.is_ipv6_only();
    vars.insert("ENABLE_IPv4".into(), (!ipv6).to_string());
    vars.insert("ENABLE_IPv6".into(), ipv6.to_string());
    if ipv6 {
        vars.insert("ENABLE_PREFIX_DELEGATION".into(), "true".into());
        vars.insert("WARM_PREFIX_TARGET".into(), "1".into());
    }
    let name = ctx.name();
    vars.insert(
        "ADDITIONAL_ENI_TAGS".into(),
        format!(r#"{{"KubernetesCluster":"{name}","kubernetes.io/cluster/{name}":"owned"}}"#),
    );
    vars
}

/// Go's `strconv.ParseBool` truth, as kOps' template tests a non-empty string.
fn truthy(v: Option<&String>) -> bool {
    v.is_some_and(|s| !s.is_empty())
}

fn env_pod(name: &str, path: &str) -> Value {
    json!({ "name": name, "valueFrom": { "fieldRef": { "apiVersion": "v1", "fieldPath": path } } })
}

fn mount(path: &str, name: &str) -> Value {
    json!({ "mountPath": path, "name": name })
}

/// The objects of the addon.
pub(super) fn objects(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let vpc = ctx
        .cluster
        .spec
        .networking
        .amazonvpc
        .clone()
        .ok_or_else(|| invalid("spec.networking.amazonVPC", "not set"))?;
    let labels = json!({
        "app.kubernetes.io/name": "aws-node",
        "app.kubernetes.io/instance": "aws-vpc-cni",
        "k8s-app": "aws-node",
        "app.kubernetes.io/version": VERSION,
    });
    let with = |mut o: Value| {
        o["metadata"]["labels"] = labels.clone();
        o
    };
    let vars = env_vars(ctx);
    let image = |v: &Option<String>, d: &str| {
        v.clone()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| d.to_owned())
    };
    let ecr = "602401143452.dkr.ecr.us-west-2.amazonaws.com";
    let mut out: Vec<Value> = serde_json::from_str(CRDS)
        .map_err(|e| invalid("addons/crds/amazon-vpc.json", e.to_string()))?;
    out.push(with(super::k8s::service_account("aws-node", NS)));
    out.push(with(json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": { "name": "amazon-vpc-cni", "namespace": NS },
        "data": {
            "enable-windows-ipam": "false",
            "enable-network-policy-controller": "false",
            "enable-windows-prefix-delegation": "false",
            "warm-prefix-target": "0",
            "warm-ip-target": "1",
            "minimum-ip-target": "3",
            "branch-eni-cooldown": "60",
        },
    })));
    let read = ["list", "watch", "get"];
    let pods_verbs: &[&str] = if truthy(vars.get("ANNOTATE_POD_IP")) {
        &["list", "watch", "get", "patch"]
    } else {
        &read
    };
    let mut rules = vec![
        rule(&["crd.k8s.amazonaws.com"], &["eniconfigs"], &read),
        rule(&[""], &["namespaces"], &read),
        rule(&[""], &["pods"], pods_verbs),
        rule(&[""], &["nodes"], &read),
        rule(
            &["", "events.k8s.io"],
            &["events"],
            &["create", "patch", "list"],
        ),
        rule(
            &["networking.k8s.aws"],
            &["policyendpoints", "clusterpolicyendpoints"],
            &["get", "list", "watch"],
        ),
        rule(
            &["networking.k8s.aws"],
            &["policyendpoints/status", "clusterpolicyendpoints/status"],
            &["get"],
        ),
        rule(
            &["vpcresources.k8s.aws"],
            &["cninodes"],
            &["get", "list", "watch", "patch"],
        ),
    ];
    rules.push(json!({
        "nonResourceURLs": ["/apis/networking.k8s.aws", "/apis/networking.k8s.aws/*"],
        "verbs": ["get"],
    }));
    out.push(with(role("aws-node", "", rules)));
    out.push(with(binding(
        "aws-node",
        "",
        "ClusterRole",
        "aws-node",
        vec![sa_subject("aws-node", NS)],
    )));

    let mut env: Vec<Value> = vars
        .iter()
        .map(|(k, v)| json!({ "name": k, "value": v }))
        .collect();
    env.push(json!({ "name": "VPC_CNI_VERSION", "value": VERSION }));
    env.push(env_pod("MY_NODE_NAME", "spec.nodeName"));
    env.push(env_pod("MY_POD_NAME", "metadata.name"));
    env.push(json!({ "name": "CLUSTER_NAME", "value": ctx.name() }));
    let grpc_probe = |delay: u32| {
        json!({
            "exec": { "command": [
                "/app/grpc-health-probe", "-addr=unix:///var/run/aws-node/ipamd.sock",
                "-connect-timeout=5s", "-rpc-timeout=5s",
            ] },
            "initialDelaySeconds": delay,
            "timeoutSeconds": 10,
        })
    };
    let cpu = json!({ "requests": { "cpu": "25m" } });
    let mut pod = json!({
        "priorityClassName": "system-node-critical",
        "serviceAccountName": "aws-node",
        "hostNetwork": true,
        "initContainers": [ {
            "name": "aws-vpc-cni-init",
            "image": image(&vpc.init_image_name, &format!("{ecr}/amazon-k8s-cni-init:{VERSION}")),
            "imagePullPolicy": "IfNotPresent",
            "env": [
                { "name": "DISABLE_TCP_EARLY_DEMUX", "value": "false" },
                { "name": "ENABLE_IPv6", "value": ctx.is_ipv6_only().to_string() },
            ],
            "securityContext": { "privileged": true },
            "resources": cpu,
            "volumeMounts": [mount("/host/opt/cni/bin", "cni-bin-dir")],
        } ],
        "terminationGracePeriodSeconds": 10,
        "tolerations": [ { "operator": "Exists" } ],
        "containers": [
            {
                "name": "aws-node",
                "image": image(&vpc.image_name, &format!("{ecr}/amazon-k8s-cni:{VERSION}")),
                "imagePullPolicy": "IfNotPresent",
                "ports": [ { "containerPort": 61678, "name": "metrics" } ],
                "livenessProbe": grpc_probe(60),
                "readinessProbe": grpc_probe(1),
                "env": env,
                "resources": cpu,
                "securityContext": { "capabilities": { "add": ["NET_ADMIN", "NET_RAW"] } },
                "volumeMounts": [
                    mount("/host/opt/cni/bin", "cni-bin-dir"),
                    mount("/host/etc/cni/net.d", "cni-net-dir"),
                    mount("/host/var/log/aws-routed-eni", "log-dir"),
                    mount("/var/run/aws-node", "run-dir"),
                    mount("/run/xtables.lock", "xtables-lock"),
                ],
            },
            {
                "name": "aws-eks-nodeagent",
                "image": image(&vpc.network_policy_agent_image,
                    &format!("{ecr}/amazon/aws-network-policy-agent:v1.4.1")),
                "imagePullPolicy": "IfNotPresent",
                "ports": [ { "containerPort": 8162, "name": "agentmetrics" } ],
                "env": [env_pod("MY_NODE_NAME", "spec.nodeName")],
                "args": [
                    "--enable-ipv6=false",
                    "--enable-network-policy=false",
                    "--enable-cloudwatch-logs=false",
                    "--enable-policy-event-logs=false",
                    "--log-file=/var/log/aws-routed-eni/network-policy-agent.log",
                    "--metrics-bind-addr=:8162",
                    "--health-probe-bind-addr=:8163",
                    "--conntrack-cache-cleanup-period=300",
                    "--conntrack-cache-table-size=524288",
                    "--log-level=debug",
                ],
                "resources": cpu,
                "securityContext": { "capabilities": { "add": ["NET_ADMIN"] }, "privileged": true },
                "volumeMounts": [
                    mount("/host/opt/cni/bin", "cni-bin-dir"),
                    mount("/sys/fs/bpf", "bpf-pin-path"),
                    mount("/var/log/aws-routed-eni", "log-dir"),
                    mount("/var/run/aws-node", "run-dir"),
                ],
            },
        ],
        "volumes": [
            host_path_volume("bpf-pin-path", "/sys/fs/bpf", ""),
            host_path_volume("cni-bin-dir", "/opt/cni/bin", ""),
            host_path_volume("cni-net-dir", "/etc/cni/net.d", ""),
            host_path_volume("log-dir", "/var/log/aws-routed-eni", "DirectoryOrCreate"),
            host_path_volume("run-dir", "/var/run/aws-node", "DirectoryOrCreate"),
            host_path_volume("xtables-lock", "/run/xtables.lock", "FileOrCreate"),
        ],
        "affinity": { "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [ { "matchExpressions": [
                { "key": "kubernetes.io/os", "operator": "In", "values": ["linux"] },
                { "key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"] },
                { "key": "eks.amazonaws.com/compute-type", "operator": "NotIn",
                    "values": ["fargate", "hybrid", "auto"] },
            ] } ] } } },
    });
    if super::cloud_aws::selinux(ctx) {
        pod["securityContext"] = super::cloud_aws::selinux_context();
    }
    out.push(with(json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": { "name": "aws-node", "namespace": NS },
        "spec": {
            "updateStrategy": { "rollingUpdate": { "maxUnavailable": "10%" }, "type": "RollingUpdate" },
            "selector": { "matchLabels": { "k8s-app": "aws-node" } },
            "template": {
                "metadata": { "labels": {
                    "app.kubernetes.io/name": "aws-node",
                    "app.kubernetes.io/instance": "aws-vpc-cni",
                    "k8s-app": "aws-node",
                } },
                "spec": pod,
            },
        },
    })));
    Ok(out)
}
