//! `nvidia.addons.k8s.io`: NVIDIA's device plugin on the GPU nodes (`kops.k8s.io/gpu`),
//! the `nvidia` runtime class, and with `dcgmExporter.enabled` the DCGM exporter.

use serde_json::{Value, json};

use super::cloud_aws::{selinux, selinux_context};
use crate::cluster::ClusterContext;
use crate::error::Result;

/// The device plugin image kOps uses when the spec names none.
const DEFAULT_IMAGE: &str = "nvcr.io/nvidia/k8s-device-plugin:v0.17.3";

/// The addon's objects.
pub(super) fn objects(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let gpu = ctx
        .cluster
        .spec
        .containerd
        .as_ref()
        .and_then(|c| c.nvidia_gpu.clone())
        .unwrap_or_default();
    let dcgm = gpu.dcgm_exporter.as_ref().and_then(|d| d.enabled) == Some(true);
    let image = gpu
        .image
        .clone()
        .filter(|i| !i.is_empty())
        .unwrap_or_else(|| DEFAULT_IMAGE.to_owned());
    let mut security =
        json!({ "allowPrivilegeEscalation": false, "capabilities": { "drop": ["ALL"] } });
    if selinux(ctx)
        && let (Some(s), Value::Object(extra)) = (security.as_object_mut(), selinux_context())
    {
        s.extend(extra);
    }
    let gpu_nodes = json!({ "kops.k8s.io/gpu": "1" });
    let tolerations =
        json!([{ "effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists" }]);
    let mut out = vec![
        json!({
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": { "name": "nvidia-device-plugin-daemonset", "namespace": "kube-system" },
            "spec": {
                "selector": { "matchLabels": { "name": "nvidia-device-plugin-ds" } },
                "template": {
                    "metadata": { "labels": { "name": "nvidia-device-plugin-ds" } },
                    "spec": {
                        "containers": [{
                            "args": ["--fail-on-init-error=false"],
                            "image": image,
                            "name": "nvidia-device-plugin-ctr",
                            "securityContext": security,
                            "volumeMounts": [{ "mountPath": "/var/lib/kubelet/device-plugins", "name": "device-plugin" }],
                        }],
                        "nodeSelector": gpu_nodes,
                        "priorityClassName": "system-node-critical",
                        "runtimeClassName": "nvidia",
                        "tolerations": tolerations,
                        "volumes": [{ "hostPath": { "path": "/var/lib/kubelet/device-plugins" }, "name": "device-plugin" }],
                    },
                },
                "updateStrategy": { "type": "RollingUpdate" },
            },
        }),
        json!({
            "apiVersion": "node.k8s.io/v1",
            "handler": "nvidia",
            "kind": "RuntimeClass",
            "metadata": { "name": "nvidia" },
            "scheduling": { "nodeSelector": gpu_nodes, "tolerations": tolerations },
        }),
    ];
    if dcgm {
        out.extend(dcgm_exporter(ctx, &gpu_nodes, &tolerations));
    }
    Ok(out)
}

/// The DCGM exporter's version (its image's and its objects' label).
const DCGM_VERSION: &str = "2.6.10";
/// The image kOps pins for it.
const DCGM_IMAGE: &str = "nvcr.io/nvidia/k8s/dcgm-exporter:2.4.6-2.6.10-ubuntu20.04";
/// Its metrics port.
const DCGM_PORT: u16 = 9400;

/// The metrics the exporter's ConfigMap lists (DCGM field, Prometheus type, help), the
/// set kOps enables: clocks, temperatures, power and energy, PCIe replays, utilisation,
/// XID errors, frame-buffer memory and NVLink bandwidth.
const DCGM_METRICS: &[(&str, &str, &str)] = &[
    ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock (MHz)."),
    ("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock (MHz)."),
    (
        "DCGM_FI_DEV_MEMORY_TEMP",
        "gauge",
        "Memory temperature (C).",
    ),
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (C)."),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (W)."),
    (
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "counter",
        "Energy since boot (mJ).",
    ),
    (
        "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
        "counter",
        "PCIe retries.",
    ),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilisation (%)."),
    (
        "DCGM_FI_DEV_MEM_COPY_UTIL",
        "gauge",
        "Memory utilisation (%).",
    ),
    ("DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilisation (%)."),
    ("DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilisation (%)."),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Last XID error."),
    ("DCGM_FI_DEV_FB_FREE", "gauge", "Free frame buffer (MiB)."),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Used frame buffer (MiB)."),
    (
        "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
        "counter",
        "NVLink bandwidth, all lanes.",
    ),
];

/// NVIDIA's DCGM exporter on the GPU nodes (`spec.containerd.nvidiaGPU.dcgmExporter`), as
/// kOps deploys it: its service account, the metrics ConfigMap and the Role and
/// RoleBinding that let it read that map, a ClusterIP Service on the metrics port, and the
/// DaemonSet (the `nvidia` runtime class, the pod-resources socket read-only, health
/// probes), all in `kube-system`.
fn dcgm_exporter(ctx: &ClusterContext, gpu_nodes: &Value, tolerations: &Value) -> Vec<Value> {
    let name = "dcgm-exporter";
    let labels = json!({
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/version": DCGM_VERSION,
        "app.kubernetes.io/component": name,
    });
    let selector = json!({ "app.kubernetes.io/name": name, "app.kubernetes.io/component": name });
    let meta = |n: &str| json!({ "name": n, "namespace": "kube-system", "labels": labels });
    let metrics: String = DCGM_METRICS
        .iter()
        .map(|(field, kind, help)| format!("{field}, {kind}, {help}\n"))
        .collect();
    let mut security = json!({
        "capabilities": { "add": ["SYS_ADMIN"] },
        "runAsNonRoot": false,
        "runAsUser": 0,
    });
    if selinux(ctx) {
        security["seLinuxOptions"] = json!({ "type": "spc_t", "level": "s0" });
    }
    let health =
        json!({ "httpGet": { "path": "/health", "port": DCGM_PORT }, "initialDelaySeconds": 45 });
    let mut liveness = health.clone();
    liveness["periodSeconds"] = json!(5);
    vec![
        json!({ "apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(name) }),
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": { "name": "exporter-metrics-config-map", "namespace": "kube-system" },
            "data": { "metrics": metrics },
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": meta("dcgm-exporter-read-cm"),
            "rules": [{
                "apiGroups": [""],
                "resources": ["configmaps"],
                "resourceNames": ["exporter-metrics-config-map"],
                "verbs": ["get"],
            }],
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": meta(name),
            "subjects": [{ "kind": "ServiceAccount", "name": name, "namespace": "kube-system" }],
            "roleRef": { "kind": "Role", "name": "dcgm-exporter-read-cm", "apiGroup": "rbac.authorization.k8s.io" },
        }),
        json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": meta(name),
            "spec": {
                "type": "ClusterIP",
                "ports": [{ "name": "metrics", "port": DCGM_PORT, "targetPort": DCGM_PORT, "protocol": "TCP" }],
                "selector": { "app.kubernetes.io/name": name },
            },
        }),
        json!({
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": meta(name),
            "spec": {
                "updateStrategy": { "type": "RollingUpdate" },
                "selector": { "matchLabels": selector },
                "template": {
                    "metadata": { "labels": selector },
                    "spec": {
                        "serviceAccountName": name,
                        "volumes": [{ "name": "pod-gpu-resources", "hostPath": { "path": "/var/lib/kubelet/pod-resources" } }],
                        "nodeSelector": gpu_nodes,
                        "runtimeClassName": "nvidia",
                        "tolerations": tolerations,
                        "containers": [{
                            "name": "exporter",
                            "securityContext": security,
                            "image": DCGM_IMAGE,
                            "imagePullPolicy": "IfNotPresent",
                            "args": ["-f", "/etc/dcgm-exporter/dcp-metrics-included.csv"],
                            "env": [
                                { "name": "DCGM_EXPORTER_KUBERNETES", "value": "true" },
                                { "name": "DCGM_EXPORTER_LISTEN", "value": format!(":{DCGM_PORT}") },
                            ],
                            "ports": [{ "name": "metrics", "containerPort": DCGM_PORT }],
                            "volumeMounts": [{ "name": "pod-gpu-resources", "readOnly": true, "mountPath": "/var/lib/kubelet/pod-resources" }],
                            "livenessProbe": liveness,
                            "readinessProbe": health,
                        }],
                    },
                },
            },
        }),
    ]
}
