//! The AWS addons every AWS cluster gets: the storage classes, the cloud controller
//! manager and the EBS CSI driver.

use serde_json::{Value, json};

use super::k8s::{binding, meta, named_rule, role, rule, sa_subject, service_account};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

fn storage_class(name: &str, default: Option<bool>, provisioner: &str, params: Value) -> Value {
    let mut m = meta(name, "");
    if let Some(d) = default {
        m["annotations"] = json!({ "storageclass.kubernetes.io/is-default-class": d.to_string() });
    }
    json!({
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": m,
        "provisioner": provisioner,
        "parameters": params,
    })
}

/// `storage-aws.addons.k8s.io`: the in-tree `default`/`gp2` classes, the encrypted
/// `kops-ssd-1-17` and the default `kops-csi-1-21` (gp3 through the CSI driver), and the
/// RBAC of the in-tree AWS cloud provider.
pub(super) fn storage_aws(_ctx: &ClusterContext) -> Vec<Value> {
    let mut ssd = storage_class(
        "kops-ssd-1-17",
        Some(false),
        "kubernetes.io/aws-ebs",
        json!({ "type": "gp2", "encrypted": "true" }),
    );
    ssd["allowVolumeExpansion"] = true.into();
    ssd["volumeBindingMode"] = "WaitForFirstConsumer".into();
    let mut csi = storage_class(
        "kops-csi-1-21",
        Some(true),
        "ebs.csi.aws.com",
        json!({ "type": "gp3", "encrypted": "true" }),
    );
    csi["allowVolumeExpansion"] = true.into();
    csi["volumeBindingMode"] = "WaitForFirstConsumer".into();
    let provider = "system:aws-cloud-provider";
    vec![
        storage_class(
            "default",
            None,
            "kubernetes.io/aws-ebs",
            json!({ "type": "gp2" }),
        ),
        storage_class(
            "gp2",
            Some(false),
            "kubernetes.io/aws-ebs",
            json!({ "type": "gp2" }),
        ),
        ssd,
        csi,
        role(
            provider,
            "",
            vec![
                rule(&[""], &["nodes"], &["get", "list", "patch"]),
                rule(&[""], &["events"], &["create", "patch", "update"]),
            ],
        ),
        binding(
            provider,
            "",
            "ClusterRole",
            provider,
            vec![sa_subject("aws-cloud-provider", "kube-system")],
        ),
    ]
}

/// kOps' `CloudControllerConfigArgv`: the flags of `externalCloudControllerManager`
/// (sorted, as kOps' flag builder writes them), then the defaults kOps adds.
pub(super) fn ccm_args(ctx: &ClusterContext) -> Result<Vec<String>> {
    let spec = &ctx.cluster.spec;
    let ccm = spec
        .cloud_controller_manager
        .as_ref()
        .ok_or_else(|| invalid("spec.cloudControllerManager", "not set"))?;
    let mut flags: Vec<String> = Vec::new();
    let mut push = |name: &str, v: Option<String>| {
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            flags.push(format!("--{name}={v}"));
        }
    };
    push("master", ccm.master.clone());
    if let Some(l) = ccm.log_level.filter(|l| *l != 0) {
        push("v", Some(l.to_string()));
    }
    push("cloud-provider", ccm.cloud_provider.clone());
    push("cluster-name", ccm.cluster_name.clone());
    push(
        "allow-untagged-cloud",
        ccm.allow_untagged_cloud.map(|b| b.to_string()),
    );
    push("cluster-cidr", ccm.cluster_cidr.clone());
    push(
        "allocate-node-cidrs",
        ccm.allocate_node_cidrs.map(|b| b.to_string()),
    );
    push(
        "configure-cloud-routes",
        ccm.configure_cloud_routes.map(|b| b.to_string()),
    );
    push("controllers", ccm.controllers.as_ref().map(|c| c.join(",")));
    push("cidr-allocator-type", ccm.cidr_allocator_type.clone());
    if let Some(le) = ccm.leader_election.as_ref() {
        push("leader-elect", le.leader_elect.map(|b| b.to_string()));
        push(
            "leader-elect-lease-duration",
            le.leader_elect_lease_duration.clone(),
        );
        push(
            "leader-elect-renew-deadline",
            le.leader_elect_renew_deadline_duration.clone(),
        );
        push(
            "leader-elect-resource-lock",
            le.leader_elect_resource_lock.clone(),
        );
        push(
            "leader-elect-resource-name",
            le.leader_elect_resource_name.clone(),
        );
    }
    push(
        "use-service-account-credentials",
        ccm.use_service_account_credentials.map(|b| b.to_string()),
    );
    push(
        "enable-leader-migration",
        ccm.enable_leader_migration.map(|b| b.to_string()),
    );
    push(
        "node-status-update-frequency",
        ccm.node_status_update_frequency.clone(),
    );
    push(
        "concurrent-node-syncs",
        ccm.concurrent_node_syncs.map(|n| n.to_string()),
    );
    flags.sort();
    if ccm.log_level.unwrap_or(0) == 0 {
        flags.push("--v=2".into());
    }
    if ccm.cloud_provider.as_deref().unwrap_or("").is_empty() {
        let cloud = ctx
            .cluster
            .cloud_provider()
            .ok_or_else(|| invalid("spec.cloudProvider", "not set"))?;
        flags.push(format!("--cloud-provider={}", cloud.as_str()));
    }
    if ccm.use_service_account_credentials.is_none() {
        flags.push("--use-service-account-credentials=true".into());
    }
    flags.push("--cloud-config=/etc/kubernetes/cloud.config".into());
    Ok(flags)
}

/// Whether containerd runs with SELinux (pods then get the `spc_t` type).
pub(super) fn selinux(ctx: &ClusterContext) -> bool {
    ctx.cluster
        .spec
        .containerd
        .as_ref()
        .and_then(|c| c.selinux_enabled)
        == Some(true)
}

/// The `seLinuxOptions` kOps gives privileged pods when containerd runs with SELinux.
pub(super) fn selinux_context() -> Value {
    json!({ "seLinuxOptions": { "type": "spc_t", "level": "s0" } })
}

/// `aws-cloud-controller.addons.k8s.io`: the AWS cloud controller manager on the
/// control plane, and its RBAC.
pub(super) fn cloud_controller(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let ccm = ctx
        .cluster
        .spec
        .cloud_controller_manager
        .as_ref()
        .ok_or_else(|| invalid("spec.cloudControllerManager", "not set"))?;
    let image = ccm
        .image
        .clone()
        .ok_or_else(|| invalid("spec.cloudControllerManager.image", "not set"))?;
    let cpu = ccm
        .cpu_request
        .as_ref()
        .map_or("200m", |q| q.as_str())
        .to_owned();
    let name = "aws-cloud-controller-manager";
    let mut pod = json!({
        "affinity": { "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [ { "matchExpressions": [
                { "key": "node-role.kubernetes.io/control-plane", "operator": "Exists" } ] } ] } } },
        "nodeSelector": null,
        "tolerations": [ { "operator": "Exists" } ],
        "serviceAccountName": name,
        "containers": [ {
            "name": name,
            "image": image,
            "imagePullPolicy": "IfNotPresent",
            "args": ccm_args(ctx)?,
            "env": [ { "name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1" } ],
            "resources": { "requests": { "cpu": cpu } },
            "volumeMounts": [ { "mountPath": "/etc/kubernetes/cloud.config", "name": "cloudconfig", "readOnly": true } ],
        } ],
        "hostNetwork": true,
        "priorityClassName": "system-cluster-critical",
        "volumes": [ { "name": "cloudconfig", "hostPath": { "path": "/etc/kubernetes/cloud.config", "type": "" } } ],
    });
    if selinux(ctx) {
        pod["securityContext"] = selinux_context();
    }
    let subject = json!({ "apiGroup": "", "kind": "ServiceAccount", "name": name, "namespace": "kube-system" });
    Ok(vec![
        json!({
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": { "name": name, "namespace": "kube-system", "labels": { "k8s-app": name } },
            "spec": {
                "selector": { "matchLabels": { "k8s-app": name } },
                "updateStrategy": { "type": "RollingUpdate" },
                "template": { "metadata": { "labels": { "k8s-app": name } }, "spec": pod },
            },
        }),
        service_account(name, "kube-system"),
        binding(
            "cloud-controller-manager:apiserver-authentication-reader",
            "kube-system",
            "Role",
            "extension-apiserver-authentication-reader",
            vec![subject.clone()],
        ),
        role(
            "system:cloud-controller-manager",
            "",
            vec![
                rule(&[""], &["events"], &["create", "patch", "update"]),
                rule(&[""], &["nodes"], &["*"]),
                rule(&[""], &["nodes/status"], &["patch"]),
                rule(&[""], &["services"], &["list", "patch", "update", "watch"]),
                rule(
                    &[""],
                    &["services/status"],
                    &["list", "patch", "update", "watch"],
                ),
                rule(&[""], &["serviceaccounts"], &["create", "get"]),
                rule(
                    &[""],
                    &["persistentvolumes"],
                    &["get", "list", "update", "watch"],
                ),
                rule(
                    &[""],
                    &["endpoints"],
                    &["create", "get", "list", "watch", "update"],
                ),
                rule(
                    &["coordination.k8s.io"],
                    &["leases"],
                    &["create", "get", "list", "watch", "update"],
                ),
                rule(&[""], &["secrets"], &["list", "watch"]),
                named_rule(
                    &[""],
                    &["serviceaccounts/token"],
                    &["node-controller", "service-controller", "route-controller"],
                    &["create"],
                ),
            ],
        ),
        binding(
            "system:cloud-controller-manager",
            "",
            "ClusterRole",
            "system:cloud-controller-manager",
            vec![subject],
        ),
    ])
}
