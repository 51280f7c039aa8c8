//! The Hetzner addons: the `hcloud` Secret the others read their token and network from,
//! hcloud's cloud controller manager, and hcloud's CSI driver (the `hcloud-volumes`
//! default storage class), as kOps installs them.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::k8s::{
    binding, env, host_path_volume, meta, mount, role, rule, sa_subject, service_account,
};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

const NS: &str = "kube-system";
/// The Secret holding the token and the network, in `kube-system`.
const SECRET: &str = "hcloud";

/// An environment variable read from a key of the `hcloud` Secret.
fn from_secret(name: &str, key: &str) -> Value {
    json!({ "name": name, "valueFrom": { "secretKeyRef": { "key": key, "name": SECRET } } })
}

/// The network the cloud controller routes in: `spec.networking.networkID`, else the
/// cluster's own network (named as the cluster).
fn network(ctx: &ClusterContext) -> String {
    ctx.cluster
        .spec
        .networking
        .network_id
        .clone()
        .unwrap_or_else(|| ctx.name().to_owned())
}

/// `hcloud-config.addons.k8s.io`: the `hcloud` Secret (`network`, `token`).
pub(super) fn config(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let token = ctx
        .hcloud_token
        .as_ref()
        .ok_or_else(|| invalid("HCLOUD_TOKEN", "the hcloud Secret needs the API token"))?;
    Ok(vec![json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": meta(SECRET, NS),
        "stringData": { "network": network(ctx), "token": token.expose() },
    })])
}

/// `hcloud-cloud-controller.addons.k8s.io`: hcloud's cloud controller manager, one
/// replica on the control plane, allocating node CIDRs from the pod range.
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
        .filter(|i| !i.is_empty())
        .ok_or_else(|| invalid("spec.cloudControllerManager.image", "not set"))?;
    let pod_cidr = ctx
        .cluster
        .spec
        .networking
        .pod_cidr
        .clone()
        .ok_or_else(|| invalid("spec.networking.podCIDR", "not set"))?;
    let level = ccm.log_level.filter(|l| *l != 0).unwrap_or(2);
    let name = "hcloud-cloud-controller-manager";
    let cluster_role = "system:hcloud-cloud-controller-manager";
    let core = |resources: &[&str], verbs: &[&str]| rule(&[""], resources, verbs);
    let labels = json!({
        "app.kubernetes.io/instance": name,
        "app.kubernetes.io/name": name,
    });
    let toleration =
        |effect: &str, key: &str| json!({ "effect": effect, "key": key, "operator": "Exists" });
    Ok(vec![
        service_account(name, NS),
        role(
            cluster_role,
            "",
            vec![
                core(&["configmaps"], &["get", "list", "watch"]),
                core(&["events"], &["create", "patch", "update"]),
                core(&["nodes"], &["*"]),
                core(&["nodes/status"], &["patch"]),
                core(&["services"], &["list", "watch"]),
                core(&["services/status"], &["patch", "update"]),
                core(&["serviceaccounts"], &["create"]),
                rule(
                    &["coordination.k8s.io"],
                    &["leases"],
                    &["create", "get", "list", "watch", "update"],
                ),
            ],
        ),
        binding(
            &format!("{cluster_role}:restricted"),
            "",
            "ClusterRole",
            cluster_role,
            vec![sa_subject(name, NS)],
        ),
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": meta(name, NS),
            "spec": {
                "replicas": 1,
                "revisionHistoryLimit": 2,
                "selector": { "matchLabels": labels },
                "template": {
                    "metadata": { "labels": labels },
                    "spec": {
                        "containers": [ {
                            "args": [
                                "--allocate-node-cidrs=true",
                                "--allow-untagged-cloud",
                                "--cloud-provider=hcloud",
                                format!("--cluster-cidr={pod_cidr}"),
                                "--configure-cloud-routes=false",
                                "--feature-gates=CloudControllerManagerWatchBasedRoutesReconciliation=true",
                                "--route-reconciliation-period=30s",
                                format!("--v={level}"),
                                "--webhook-secure-port=0",
                                "--leader-elect=false",
                            ],
                            "env": [ from_secret("HCLOUD_NETWORK", "network"), from_secret("HCLOUD_TOKEN", "token") ],
                            "image": image,
                            "name": name,
                            "ports": [ { "containerPort": 8233, "name": "metrics" } ],
                            "resources": { "requests": { "cpu": "100m", "memory": "50Mi" } },
                        } ],
                        "dnsPolicy": "Default",
                        "priorityClassName": "system-cluster-critical",
                        "serviceAccountName": name,
                        "tolerations": [
                            { "effect": "NoSchedule", "key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true" },
                            { "key": "CriticalAddonsOnly", "operator": "Exists" },
                            toleration("NoSchedule", "node-role.kubernetes.io/master"),
                            toleration("NoSchedule", "node-role.kubernetes.io/control-plane"),
                            { "effect": "NoExecute", "key": "node.kubernetes.io/not-ready" },
                        ],
                    },
                },
            },
        }),
    ])
}

/// The CSI driver's name, its socket's directory under kubelet and its chart version.
const DRIVER: &str = "csi.hetzner.cloud";
const CHART: &str = "hcloud-csi-2.20.2";
const DRIVER_IMAGE: &str = "docker.io/hetznercloud/hcloud-csi-driver:v2.20.2";
const LIVENESS_IMAGE: &str = "registry.k8s.io/sig-storage/livenessprobe:v2.18.0";

/// The chart's labels of one component (`controller`, `node`).
fn csi_labels(component: &str) -> Value {
    json!({
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/instance": "hcloud-csi",
        "app.kubernetes.io/name": "hcloud-csi",
    })
}

/// `csi_labels` plus the chart's.
fn chart_labels(component: &str) -> Value {
    let mut l = csi_labels(component);
    l["helm.sh/chart"] = json!(CHART);
    l
}

/// A sidecar from `image` with the socket mounted from `volume`.
fn sidecar(name: &str, image: &str, args: &[&str], volume: &str) -> Value {
    let mut c = json!({
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "name": name,
        "resources": { "limits": {}, "requests": {} },
        "volumeMounts": [ mount(volume, "/run/csi") ],
    });
    if !args.is_empty() {
        c["args"] = json!(args);
    }
    c
}

/// The driver container in `mode` (`-controller`, `-node`).
fn driver(mode: &str, extra_env: Vec<Value>, mounts: Vec<Value>) -> Value {
    let mut envs = vec![
        env("CSI_ENDPOINT", "unix:///run/csi/socket"),
        env("METRICS_ENDPOINT", "0.0.0.0:9189"),
        env("ENABLE_METRICS", "true"),
    ];
    envs.extend(extra_env);
    json!({
        "args": [mode],
        "env": envs,
        "image": DRIVER_IMAGE,
        "imagePullPolicy": "IfNotPresent",
        "livenessProbe": {
            "failureThreshold": 5,
            "httpGet": { "path": "/healthz", "port": "healthz" },
            "initialDelaySeconds": 10, "periodSeconds": 2, "successThreshold": 1, "timeoutSeconds": 3,
        },
        "name": "hcloud-csi-driver",
        "ports": [
            { "containerPort": 9189, "name": "metrics" },
            { "containerPort": 9808, "name": "healthz", "protocol": "TCP" },
        ],
        "resources": { "limits": {}, "requests": {} },
        "volumeMounts": mounts,
    })
}

/// A metrics Service of one component.
fn metrics_service(component: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": { "labels": chart_labels(component), "name": format!("hcloud-csi-{component}-metrics"), "namespace": NS },
        "spec": { "ports": [ { "name": "metrics", "port": 9189 } ], "selector": csi_labels(component) },
    })
}

/// The pod template's labels of one component.
fn pod_labels(component: &str) -> Value {
    let mut l = chart_labels(component);
    l["app.kubernetes.io/managed-by"] = json!("Helm");
    l
}

/// `hcloud-csi-driver.addons.k8s.io`: hcloud's CSI driver (chart 2.20.2): the default
/// `hcloud-volumes` storage class, the controller Deployment with its sidecars and RBAC,
/// and the node DaemonSet.
pub(super) fn csi_driver() -> Vec<Value> {
    let controller = "hcloud-csi-controller";
    let rw = ["get", "list", "watch", "update", "patch"];
    let ro = ["get", "list", "watch"];
    let core = |resources: &[&str], verbs: &[&str]| rule(&[""], resources, verbs);
    let storage = |resources: &[&str], verbs: &[&str]| rule(&["storage.k8s.io"], resources, verbs);
    let snapshots =
        |resource: &str| rule(&["snapshot.storage.k8s.io"], &[resource], &["get", "list"]);
    let mut sa = service_account(controller, NS);
    sa["automountServiceAccountToken"] = json!(true);
    sa["metadata"]["labels"] = chart_labels("controller");
    let mut cluster_role = role(
        controller,
        "",
        vec![
            core(&["persistentvolumes"], &rw),
            core(&["nodes"], &ro),
            rule(&["csi.storage.k8s.io"], &["csinodeinfos"], &ro),
            storage(&["csinodes"], &ro),
            storage(&["volumeattachments"], &rw),
            storage(&["volumeattachments/status"], &["patch"]),
            core(&["secrets"], &["get", "list"]),
            core(
                &["persistentvolumes"],
                &["get", "list", "watch", "create", "delete", "patch"],
            ),
            core(
                &["persistentvolumeclaims", "persistentvolumeclaims/status"],
                &rw,
            ),
            storage(&["storageclasses"], &ro),
            core(&["events"], &["list", "watch", "create", "update", "patch"]),
            snapshots("volumesnapshots"),
            snapshots("volumesnapshotcontents"),
            core(&["pods"], &ro),
            storage(&["volumeattributesclasses"], &ro),
            core(
                &["events"],
                &["get", "list", "watch", "create", "update", "patch"],
            ),
        ],
    );
    cluster_role["metadata"]["labels"] = chart_labels("controller");
    let mut cluster_binding = binding(
        controller,
        "",
        "ClusterRole",
        controller,
        vec![sa_subject(controller, NS)],
    );
    cluster_binding["metadata"]["labels"] = chart_labels("controller");
    let with_app = |component: &str, app: &str| {
        let mut l = chart_labels(component);
        l["app"] = json!(app);
        l
    };
    let socket = "socket-dir";
    let deployment = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "labels": with_app("controller", controller), "name": controller, "namespace": NS },
        "spec": {
            "replicas": 1,
            "selector": { "matchLabels": csi_labels("controller") },
            "strategy": { "type": "RollingUpdate" },
            "template": {
                "metadata": { "labels": pod_labels("controller") },
                "spec": {
                    "affinity": { "nodeAffinity": { "preferredDuringSchedulingIgnoredDuringExecution": [ {
                        "preference": { "matchExpressions": [ {
                            "key": "instance.hetzner.cloud/provided-by", "operator": "In", "values": ["cloud"],
                        } ] },
                        "weight": 1,
                    } ] } },
                    "containers": [
                        driver(
                            "-controller",
                            vec![
                                json!({ "name": "KUBE_NODE_NAME", "valueFrom": { "fieldRef": { "apiVersion": "v1", "fieldPath": "spec.nodeName" } } }),
                                from_secret("HCLOUD_TOKEN", "token"),
                            ],
                            vec![mount(socket, "/run/csi")],
                        ),
                        sidecar("csi-attacher", "registry.k8s.io/sig-storage/csi-attacher:v4.11.0", &["--default-fstype=ext4"], socket),
                        sidecar("csi-resizer", "registry.k8s.io/sig-storage/csi-resizer:v2.1.0", &[], socket),
                        sidecar(
                            "csi-provisioner",
                            "registry.k8s.io/sig-storage/csi-provisioner:v6.2.0",
                            &["--feature-gates=Topology=true", "--default-fstype=ext4", "--extra-create-metadata"],
                            socket,
                        ),
                        sidecar("liveness-probe", LIVENESS_IMAGE, &[], socket),
                    ],
                    "initContainers": null,
                    "securityContext": { "fsGroup": 1001 },
                    "serviceAccountName": controller,
                    "volumes": [ { "emptyDir": {}, "name": socket } ],
                },
            },
        },
    });
    let plugin = "plugin-dir";
    let mut node_driver = driver(
        "-node",
        Vec::new(),
        vec![
            json!({ "mountPath": "/var/lib/kubelet", "mountPropagation": "Bidirectional", "name": "kubelet-dir" }),
            mount(plugin, "/run/csi"),
            mount("device-dir", "/dev"),
        ],
    );
    node_driver["securityContext"] = json!({ "privileged": true });
    let mut registrar = sidecar(
        "csi-node-driver-registrar",
        "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.16.0",
        &["--kubelet-registration-path=/var/lib/kubelet/plugins/csi.hetzner.cloud/socket"],
        plugin,
    );
    if let Some(mounts) = registrar["volumeMounts"].as_array_mut() {
        mounts.push(mount("registration-dir", "/registration"));
    }
    let not_in =
        |key: &str, value: &str| json!({ "key": key, "operator": "NotIn", "values": [value] });
    let daemonset = json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": { "labels": with_app("node", "hcloud-csi"), "name": "hcloud-csi-node", "namespace": NS },
        "spec": {
            "selector": { "matchLabels": csi_labels("node") },
            "template": {
                "metadata": { "labels": pod_labels("node") },
                "spec": {
                    "affinity": { "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [ { "matchExpressions": [
                            not_in("instance.hetzner.cloud/is-root-server", "true"),
                            not_in("instance.hetzner.cloud/provided-by", "robot"),
                        ] } ],
                    } } },
                    "containers": [ registrar, sidecar("liveness-probe", LIVENESS_IMAGE, &[], plugin), node_driver ],
                    "initContainers": null,
                    "securityContext": { "fsGroup": 1001 },
                    "tolerations": [
                        { "effect": "NoExecute", "operator": "Exists" },
                        { "effect": "NoSchedule", "operator": "Exists" },
                        { "key": "CriticalAddonsOnly", "operator": "Exists" },
                    ],
                    "volumes": [
                        host_path_volume("kubelet-dir", "/var/lib/kubelet", "Directory"),
                        host_path_volume(plugin, "/var/lib/kubelet/plugins/csi.hetzner.cloud/", "DirectoryOrCreate"),
                        host_path_volume("registration-dir", "/var/lib/kubelet/plugins_registry/", "Directory"),
                        host_path_volume("device-dir", "/dev", "Directory"),
                    ],
                },
            },
            "updateStrategy": { "type": "RollingUpdate" },
        },
    });
    vec![
        json!({
            "allowVolumeExpansion": true,
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {
                "annotations": { "storageclass.kubernetes.io/is-default-class": "true" },
                "name": "hcloud-volumes",
            },
            "provisioner": DRIVER,
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "WaitForFirstConsumer",
        }),
        sa,
        cluster_role,
        cluster_binding,
        metrics_service("controller"),
        metrics_service("node"),
        deployment,
        daemonset,
        json!({
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": { "name": DRIVER },
            "spec": {
                "attachRequired": true,
                "fsGroupPolicy": "File",
                "podInfoOnMount": true,
                "seLinuxMount": true,
                "volumeLifecycleModes": ["Persistent"],
            },
        }),
    ]
}

/// One node group of the Hetzner cluster autoscaler's cluster config, in the field order
/// the autoscaler's JSON has.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct NodeConfig {
    cloud_init: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    labels: BTreeMap<String, String>,
    server_labels: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    taints: Vec<Taint>,
    images_for_arch: BTreeMap<&'static str, String>,
}

/// A node taint as the autoscaler reads it.
#[derive(serde::Serialize)]
struct Taint {
    key: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    value: String,
    effect: String,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ClusterConfig {
    node_configs: BTreeMap<String, NodeConfig>,
}

/// The Hetzner cluster autoscaler's cluster config (`cluster-config.json`): for each
/// autoscaled node group, the user data, node labels, server labels (with the user data's
/// hash, as the model labels the servers it makes) and taints of its servers, and its
/// image for both architectures; two-space indented JSON.
pub(super) fn cluster_autoscaler_config(ctx: &ClusterContext) -> Result<String> {
    let mut node_configs = BTreeMap::new();
    for ig in ctx.groups.iter().filter(|g| {
        g.spec.role == Some(kops_api::internal::InstanceGroupRole::Node)
            && g.spec.autoscale != Some(false)
    }) {
        let cloud_init = crate::nodeup::user_data(ctx, ig)?.unwrap_or_default();
        let mut server_labels = crate::hetzner::servers::group_labels(ctx, ig);
        server_labels.insert(
            kops_cloud_hetzner::cloud::USER_DATA_LABEL.to_owned(),
            kops_cloud_hetzner::cloud::user_data_hash(cloud_init.as_bytes()),
        );
        let mut taints = Vec::new();
        for spec in ig.spec.taints.iter().flatten() {
            let t = super::karpenter::taint(ig, spec)?;
            let field = |k: &str| t[k].as_str().unwrap_or_default().to_owned();
            taints.push(Taint {
                key: field("key"),
                value: field("value"),
                effect: field("effect"),
            });
        }
        let image = ig.spec.image.clone().unwrap_or_default();
        node_configs.insert(
            ig.name().to_owned(),
            NodeConfig {
                cloud_init,
                labels: crate::cluster::node_labels(ig),
                server_labels,
                taints,
                images_for_arch: BTreeMap::from([("amd64", image.clone()), ("arm64", image)]),
            },
        );
    }
    serde_json::to_string_pretty(&ClusterConfig { node_configs }).map_err(|e| {
        invalid(
            "clusterAutoscaler",
            format!("encoding the hcloud cluster config: {e}"),
        )
    })
}
