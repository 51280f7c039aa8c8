//! `nvidia.addons.k8s.io`: NVIDIA's device plugin on the GPU nodes (`kops.k8s.io/gpu`)
//! and the `nvidia` runtime class.

use serde_json::{Value, json};

use super::cloud_aws::{selinux, selinux_context};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

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
    if gpu.dcgm_exporter.as_ref().and_then(|d| d.enabled) == Some(true) {
        return Err(invalid(
            "spec.containerd.nvidiaGPU.dcgmExporter.enabled",
            "the DCGM exporter is not supported yet",
        ));
    }
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
    Ok(vec![
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
    ])
}
