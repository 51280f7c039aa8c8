//! `node-problem-detector.addons.k8s.io`: node-problem-detector on every Linux node,
//! reporting kernel and systemd problems as node conditions and events.

use serde_json::{Value, json};

use super::helpers::labeled;
use super::k8s::{binding, env_field, sa_subject, service_account};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

const NAME: &str = "node-problem-detector";
const NS: &str = "kube-system";

/// The addon's objects.
pub(super) fn objects(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let npd = ctx
        .cluster
        .spec
        .node_problem_detector
        .clone()
        .ok_or_else(|| invalid("spec.nodeProblemDetector", "not set"))?;
    let image = npd
        .image
        .clone()
        .ok_or_else(|| invalid("spec.nodeProblemDetector.image", "not set"))?;
    let q = |v: &Option<kops_api::v1alpha2::Quantity>| v.as_ref().map(|q| q.as_str().to_owned());
    let mut limits = json!({ "memory": q(&npd.memory_limit) });
    if let Some(cpu) = q(&npd.cpu_limit) {
        limits["cpu"] = cpu.into();
    }
    let l0 = json!({ "app": NAME });
    let ro = |name: &str, path: &str| json!({ "mountPath": path, "name": name, "readOnly": true });
    let host = |name: &str, path: &str, t: Option<&str>| match t {
        Some(t) => json!({ "hostPath": { "path": path, "type": t }, "name": name }),
        None => json!({ "hostPath": { "path": path }, "name": name }),
    };
    let container = json!({
        "command": [
            "/node-problem-detector",
            "--logtostderr",
            "--config.system-log-monitor=/config/kernel-monitor.json,/config/systemd-monitor.json",
            "--config.custom-plugin-monitor=/config/kernel-monitor-counter.json,/config/systemd-monitor-counter.json",
            "--config.system-stats-monitor=/config/system-stats-monitor.json",
        ],
        "env": [env_field("NODE_NAME", "spec.nodeName")],
        "image": image,
        "name": NAME,
        "resources": {
            "limits": limits,
            "requests": { "cpu": q(&npd.cpu_request), "memory": q(&npd.memory_request) },
        },
        "securityContext": { "privileged": true },
        "volumeMounts": [
            ro("log", "/var/log"),
            ro("kmsg", "/dev/kmsg"),
            ro("localtime", "/etc/localtime"),
            ro("machine-id", "/etc/machine-id"),
            { "mountPath": "/run/systemd/system", "name": "systemd" },
            { "mountPath": "/var/run/dbus/", "mountPropagation": "Bidirectional", "name": "dbus" },
        ],
    });
    Ok(vec![
        labeled(service_account(NAME, NS), &l0),
        labeled(
            binding(
                NAME,
                "",
                "ClusterRole",
                "system:node-problem-detector",
                vec![sa_subject(NAME, NS)],
            ),
            &l0,
        ),
        json!({
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": { "labels": l0, "name": NAME, "namespace": NS },
            "spec": {
                "selector": { "matchLabels": { "app": NAME } },
                "template": {
                    "metadata": { "labels": { "app": NAME } },
                    "spec": {
                        "affinity": { "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [ { "matchExpressions": [
                                { "key": "kubernetes.io/os", "operator": "In", "values": ["linux"] } ] } ] } } },
                        "containers": [container],
                        "priorityClassName": "system-node-critical",
                        "serviceAccountName": NAME,
                        "tolerations": [
                            { "effect": "NoExecute", "operator": "Exists" },
                            { "effect": "NoSchedule", "operator": "Exists" },
                            { "key": "CriticalAddonsOnly", "operator": "Exists" },
                        ],
                        "volumes": [
                            host("log", "/var/log/", None),
                            host("kmsg", "/dev/kmsg", None),
                            host("localtime", "/etc/localtime", Some("FileOrCreate")),
                            host("machine-id", "/etc/machine-id", Some("File")),
                            host("systemd", "/run/systemd/system/", Some("")),
                            host("dbus", "/var/run/dbus/", Some("")),
                        ],
                    },
                },
            },
        }),
    ])
}
