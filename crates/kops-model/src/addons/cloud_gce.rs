//! The GCE addons: the in-tree `standard` storage class, the GCP cloud controller
//! manager and the Compute Engine persistent disk CSI driver.

use serde_json::{Value, json};

use super::k8s::{binding, host_path_volume, meta, named_rule, role, rule, sa_subject};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

const NS: &str = "kube-system";

fn pd_csi(ctx: &ClusterContext) -> Option<&kops_api::v1alpha2::PDCSIDriver> {
    ctx.cluster
        .spec
        .cloud_provider
        .gce
        .as_ref()
        .and_then(|g| g.pd_csi_driver.as_ref())
}

fn pd_csi_enabled(ctx: &ClusterContext) -> bool {
    pd_csi(ctx).and_then(|p| p.enabled) == Some(true)
}

/// `storage-gce.addons.k8s.io`: the in-tree `standard` class, the default unless the
/// PD CSI driver is on.
pub(super) fn storage_gce(ctx: &ClusterContext) -> Vec<Value> {
    let mut m = meta("standard", "");
    if !pd_csi_enabled(ctx) {
        m["annotations"] = json!({ "storageclass.kubernetes.io/is-default-class": "true" });
    }
    m["labels"] = json!({
        "kubernetes.io/cluster-service": "true",
        "k8s-addon": "storage-gce.addons.k8s.io",
        "addonmanager.kubernetes.io/mode": "EnsureExists",
    });
    vec![json!({
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": m,
        "provisioner": "kubernetes.io/gce-pd",
        "parameters": { "type": "pd-standard" },
    })]
}

fn reconciled(mut o: Value) -> Value {
    o["metadata"]["labels"] = json!({ "addonmanager.kubernetes.io/mode": "Reconcile" });
    o
}

/// `gcp-cloud-controller.addons.k8s.io`: the cloud controller manager on the control
/// plane, and the RBAC of the GCE cloud provider.
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
    let cpu = ccm
        .cpu_request
        .as_ref()
        .map_or("200m", |q| q.as_str())
        .to_owned();
    let sa = "cloud-controller-manager";
    let term = |key: &str| json!({ "matchExpressions": [ { "key": key, "operator": "Exists" } ] });
    let mut pod = json!({
        "nodeSelector": null,
        "affinity": { "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                term("node-role.kubernetes.io/control-plane"),
                term("node-role.kubernetes.io/master"),
            ] } } },
        "tolerations": [ { "operator": "Exists" } ],
        "serviceAccountName": sa,
        "containers": [ {
            "name": sa,
            "image": image,
            "imagePullPolicy": "IfNotPresent",
            "args": super::cloud_aws::ccm_args(ctx)?,
            "env": [ { "name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1" } ],
            "livenessProbe": {
                "failureThreshold": 3,
                "httpGet": { "host": "127.0.0.1", "path": "/healthz", "port": 10258, "scheme": "HTTPS" },
                "initialDelaySeconds": 15, "periodSeconds": 10, "successThreshold": 1, "timeoutSeconds": 15,
            },
            "resources": { "requests": { "cpu": cpu } },
            "volumeMounts": [ { "mountPath": "/etc/kubernetes/cloud.config", "name": "cloudconfig", "readOnly": true } ],
        } ],
        "hostNetwork": true,
        "priorityClassName": "system-cluster-critical",
        "volumes": [ { "hostPath": { "path": "/etc/kubernetes/cloud.config", "type": "" }, "name": "cloudconfig" } ],
    });
    if super::cloud_aws::selinux(ctx) {
        pod["securityContext"] = super::cloud_aws::selinux_context();
    }
    let configmaps = || {
        vec![rule(
            &[""],
            &["configmaps"],
            &["create", "get", "patch", "update", "list", "watch"],
        )]
    };
    let events = || rule(&[""], &["events"], &["create", "patch", "update"]);
    let services_status = || rule(&[""], &["services/status"], &["patch", "update"]);
    // kOps marks these two as deprecated; the wording of the note is ours.
    let deprecated = |mut o: Value| {
        o["metadata"]["annotations"] = json!({ "kubernetes.io/deprecation":
            "deprecated: kept for compatibility with older clusters, not to be used" });
        o
    };
    Ok(vec![
        json!({
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": { "name": sa, "namespace": NS, "labels": { "component": sa } },
            "spec": {
                "selector": { "matchLabels": { "component": sa } },
                "updateStrategy": { "type": "RollingUpdate" },
                "template": {
                    "metadata": { "labels": { "tier": "control-plane", "component": sa } },
                    "spec": pod,
                },
            },
        }),
        super::k8s::service_account(sa, NS),
        binding(
            "cloud-controller-manager:apiserver-authentication-reader",
            NS,
            "Role",
            "extension-apiserver-authentication-reader",
            vec![json!({ "apiGroup": "", "kind": "ServiceAccount", "name": sa, "namespace": NS })],
        ),
        reconciled(role(
            "system:cloud-controller-manager",
            "",
            vec![
                rule(
                    &["", "events.k8s.io"],
                    &["events"],
                    &["create", "patch", "update"],
                ),
                services_status(),
                rule(
                    &["coordination.k8s.io"],
                    &["leases"],
                    &["create", "get", "list", "watch", "update"],
                ),
                named_rule(
                    &["coordination.k8s.io"],
                    &["leases"],
                    &[sa],
                    &["get", "update"],
                ),
                rule(
                    &[""],
                    &["endpoints", "serviceaccounts"],
                    &["create", "get", "update"],
                ),
                rule(&[""], &["nodes"], &["get", "update", "patch"]),
                rule(&[""], &["namespaces"], &["get"]),
                rule(&[""], &["nodes/status"], &["patch", "update"]),
                rule(&[""], &["secrets"], &["create", "delete", "get", "update"]),
                rule(&["authentication.k8s.io"], &["tokenreviews"], &["create"]),
                rule(&["*"], &["*"], &["list", "watch"]),
                rule(&[""], &["serviceaccounts/token"], &["create"]),
            ],
        )),
        reconciled(role(
            "system::leader-locking-cloud-controller-manager",
            NS,
            vec![
                rule(&[""], &["configmaps"], &["watch"]),
                named_rule(
                    &[""],
                    &["configmaps"],
                    &[sa],
                    &["create", "patch", "get", "update"],
                ),
            ],
        )),
        reconciled(role(
            "system:controller:cloud-node-controller",
            "",
            vec![
                events(),
                rule(
                    &[""],
                    &["nodes"],
                    &["get", "list", "update", "delete", "patch"],
                ),
                rule(
                    &[""],
                    &["nodes/status"],
                    &["get", "list", "update", "delete", "patch"],
                ),
                rule(&[""], &["pods"], &["list", "delete"]),
                rule(&[""], &["pods/status"], &["list", "delete"]),
            ],
        )),
        reconciled(binding(
            "system::leader-locking-cloud-controller-manager",
            NS,
            "Role",
            "system::leader-locking-cloud-controller-manager",
            vec![sa_subject(sa, NS)],
        )),
        reconciled(binding(
            "system:cloud-controller-manager",
            "",
            "ClusterRole",
            "system:cloud-controller-manager",
            vec![sa_subject(sa, NS)],
        )),
        reconciled(binding(
            "system:controller:cloud-node-controller",
            "",
            "ClusterRole",
            "system:controller:cloud-node-controller",
            vec![sa_subject("cloud-node-controller", NS)],
        )),
        reconciled(role(
            "system:controller:pvl-controller",
            "",
            vec![
                events(),
                rule(
                    &[""],
                    &["persistentvolumeclaims", "persistentvolumes"],
                    &["list", "watch"],
                ),
            ],
        )),
        reconciled(role("gce:cloud-provider", NS, configmaps())),
        reconciled(role(
            "gce:cloud-provider",
            "",
            vec![events(), services_status()],
        )),
        deprecated(reconciled(role("cloud-provider", NS, configmaps()))),
        deprecated(reconciled(role("cloud-provider", "", vec![events()]))),
        reconciled(binding(
            "gce:cloud-provider",
            NS,
            "Role",
            "gce:cloud-provider",
            vec![sa_subject("cloud-provider", NS)],
        )),
        reconciled(binding(
            "gce:cloud-provider",
            "",
            "ClusterRole",
            "gce:cloud-provider",
            vec![sa_subject("cloud-provider", NS)],
        )),
    ])
}

fn pd_class(name: &str, default: Option<bool>, params: Value, reclaim: bool) -> Value {
    let mut m = meta(name, "");
    if let Some(d) = default {
        m["annotations"] = json!({ "storageclass.kubernetes.io/is-default-class": d.to_string() });
    }
    m["labels"] = json!({
        "kubernetes.io/cluster-service": "true",
        "k8s-addon": "gcp-pd-csi-driver.addons.k8s.io",
    });
    let mut sc = json!({
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": m,
        "provisioner": "pd.csi.storage.gke.io",
        "parameters": params,
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowVolumeExpansion": true,
    });
    if reclaim {
        sc["reclaimPolicy"] = "Delete".into();
    }
    sc
}

fn env_namespace() -> Value {
    json!({ "name": "PDCSI_NAMESPACE", "valueFrom": { "fieldRef": { "fieldPath": "metadata.namespace" } } })
}

/// A CSI sidecar of the controller with its leader-election health endpoint.
fn sidecar(name: &str, image: &str, args: &[&str], port: Option<u16>) -> Value {
    let mut c = json!({
        "name": name,
        "image": image,
        "args": args,
        "env": [env_namespace()],
        "volumeMounts": [ { "mountPath": "/csi", "name": "socket-dir" } ],
    });
    if let Some(p) = port {
        c["livenessProbe"] = json!({
            "failureThreshold": 1,
            "httpGet": { "path": "/healthz/leader-election", "port": "http-endpoint" },
            "initialDelaySeconds": 10, "periodSeconds": 20, "timeoutSeconds": 10,
        });
        c["ports"] = json!([{ "containerPort": p, "name": "http-endpoint", "protocol": "TCP" }]);
    }
    c
}

/// `gcp-pd-csi-driver.addons.k8s.io`: the PD CSI controller on the control plane, the
/// node plugin on every node, their RBAC and (when kOps manages storage classes) the
/// CSI storage classes.
pub(super) fn pd_csi_driver(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let pd = pd_csi(ctx).ok_or_else(|| invalid("spec.cloudProvider.gce.pdCSIDriver", "not set"))?;
    let version = pd
        .version
        .clone()
        .filter(|v| !v.is_empty())
        .ok_or_else(|| invalid("spec.cloudProvider.gce.pdCSIDriver.version", "not set"))?;
    let driver = format!(
        "registry.k8s.io/cloud-provider-gcp/gcp-compute-persistent-disk-csi-driver:{version}"
    );
    let ns = "gce-pd-csi-driver";
    let default_class = pd.default_storage_class_name.clone().unwrap_or_default();
    let mut out = Vec::new();
    let manage = ctx
        .cluster
        .spec
        .cloud_config
        .as_ref()
        .and_then(|c| c.manage_storage_classes)
        != Some(false);
    if manage {
        let is_default = |n: &str| (default_class == n).then_some(true);
        out.push(pd_class(
            "standard-csi",
            Some(false),
            json!({ "type": "pd-standard" }),
            false,
        ));
        out.push(pd_class(
            "balanced-csi",
            is_default("balanced-csi"),
            json!({ "type": "pd-balanced" }),
            true,
        ));
        out.push(pd_class(
            "balanced-storage",
            is_default("balanced-storage"),
            json!({ "type": "hyperdisk-balanced",
                "provisioned-throughput-on-create": "250Mi", "provisioned-iops-on-create": "5000" }),
            true,
        ));
        out.push(pd_class("ssd-csi", None, json!({ "type": "pd-ssd" }), true));
    }
    let controller_sa = "csi-gce-pd-controller-sa";
    let node_sa = "csi-gce-pd-node-sa";
    let app = json!({ "k8s-app": "gcp-compute-persistent-disk-csi-driver" });
    let with_app = |mut o: Value| {
        o["metadata"]["labels"] = app.clone();
        o
    };
    out.push(json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": ns } }));
    out.push(super::k8s::service_account(controller_sa, ns));
    out.push(super::k8s::service_account(node_sa, ns));
    out.push(with_app(role(
        "csi-gce-pd-leaderelection-role",
        ns,
        vec![rule(
            &["coordination.k8s.io"],
            &["leases"],
            &["get", "watch", "list", "delete", "update", "create"],
        )],
    )));
    let read = ["get", "list", "watch"];
    let events = || {
        rule(
            &[""],
            &["events"],
            &["list", "watch", "create", "update", "patch"],
        )
    };
    out.push(role(
        "csi-gce-pd-attacher-role",
        "",
        vec![
            rule(
                &[""],
                &["persistentvolumes"],
                &["get", "list", "watch", "update", "patch"],
            ),
            rule(&[""], &["nodes"], &read),
            rule(&["storage.k8s.io"], &["csinodes"], &read),
            rule(
                &["storage.k8s.io"],
                &["volumeattachments"],
                &["get", "list", "watch", "update", "patch"],
            ),
            rule(
                &["storage.k8s.io"],
                &["volumeattachments/status"],
                &["patch"],
            ),
        ],
    ));
    out.push(role(
        "csi-gce-pd-provisioner-role",
        "",
        vec![
            rule(
                &[""],
                &["persistentvolumes"],
                &["get", "list", "watch", "create", "delete"],
            ),
            rule(
                &[""],
                &["persistentvolumeclaims"],
                &["get", "list", "watch", "update"],
            ),
            rule(&["storage.k8s.io"], &["storageclasses"], &read),
            events(),
            rule(&["storage.k8s.io"], &["csinodes"], &read),
            rule(&[""], &["nodes"], &read),
            rule(
                &["snapshot.storage.k8s.io"],
                &["volumesnapshots"],
                &["get", "list"],
            ),
            rule(
                &["snapshot.storage.k8s.io"],
                &["volumesnapshotcontents"],
                &["get", "list"],
            ),
            rule(&["storage.k8s.io"], &["volumeattachments"], &read),
        ],
    ));
    out.push(role(
        "csi-gce-pd-resizer-role",
        "",
        vec![
            rule(
                &[""],
                &["persistentvolumes"],
                &["get", "list", "watch", "update", "patch"],
            ),
            rule(&[""], &["persistentvolumeclaims"], &read),
            rule(
                &[""],
                &["persistentvolumeclaims/status"],
                &["update", "patch"],
            ),
            events(),
            rule(&[""], &["pods"], &read),
        ],
    ));
    out.push(role(
        "csi-gce-pd-snapshotter-role",
        "",
        vec![
            events(),
            rule(
                &["snapshot.storage.k8s.io"],
                &["volumesnapshotclasses"],
                &read,
            ),
            rule(
                &["snapshot.storage.k8s.io"],
                &["volumesnapshotcontents"],
                &[
                    "create", "get", "list", "watch", "update", "delete", "patch",
                ],
            ),
            rule(
                &["snapshot.storage.k8s.io"],
                &["volumesnapshotcontents/status"],
                &["update", "patch"],
            ),
        ],
    ));
    out.push(with_app(binding(
        "csi-gce-pd-controller-leaderelection-binding",
        ns,
        "Role",
        "csi-gce-pd-leaderelection-role",
        vec![sa_subject(controller_sa, ns)],
    )));
    // kOps binds two roles it does not ship (`csi-gce-pd-node-deploy`,
    // `csi-gce-pd-controller-deploy`, left from pod security policies); kept so the
    // objects match kOps'.
    for (name, role_name, sa) in [
        (
            "csi-gce-pd-controller",
            "csi-gce-pd-node-deploy",
            controller_sa,
        ),
        (
            "csi-gce-pd-controller-attacher-binding",
            "csi-gce-pd-attacher-role",
            controller_sa,
        ),
        (
            "csi-gce-pd-controller-deploy",
            "csi-gce-pd-controller-deploy",
            controller_sa,
        ),
        (
            "csi-gce-pd-controller-provisioner-binding",
            "csi-gce-pd-provisioner-role",
            controller_sa,
        ),
        (
            "csi-gce-pd-controller-snapshotter-binding",
            "csi-gce-pd-snapshotter-role",
            controller_sa,
        ),
        ("csi-gce-pd-node", "csi-gce-pd-node-deploy", node_sa),
        (
            "csi-gce-pd-resizer-binding",
            "csi-gce-pd-resizer-role",
            controller_sa,
        ),
    ] {
        out.push(binding(
            name,
            "",
            "ClusterRole",
            role_name,
            vec![sa_subject(sa, ns)],
        ));
    }
    // The wording of the descriptions is ours.
    for (name, value, what) in [
        ("csi-gce-pd-controller", 900_000_000, "controller"),
        ("csi-gce-pd-node", 900_001_000, "node plugin"),
    ] {
        out.push(json!({
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": { "name": name },
            "description": format!("For the pods of the GCE PD CSI driver's {what}."),
            "globalDefault": false,
            "value": value,
        }));
    }

    let cluster_label = ctx.name().replace('.', "-");
    let selector = json!({ "app": "gcp-compute-persistent-disk-csi-driver" });
    let linux = || json!({ "key": "kubernetes.io/os", "operator": "In", "values": ["linux"] });
    let cp_term = |key: &str| json!({ "matchExpressions": [ { "key": key, "operator": "Exists" }, linux() ] });
    let driver_container = json!({
        "name": "gce-pd-driver",
        "image": driver,
        "args": [
            "--v=5",
            "--endpoint=unix:/csi/csi.sock",
            format!("--extra-labels=k8s-io-cluster-name={cluster_label}"),
            "--supports-dynamic-iops-provisioning=hyperdisk-balanced,hyperdisk-extreme",
            "--supports-dynamic-throughput-provisioning=hyperdisk-balanced,hyperdisk-throughput,hyperdisk-ml",
            "--enable-data-cache",
            "--run-node-service=false",
        ],
        "env": [],
        "volumeMounts": [ { "mountPath": "/csi", "name": "socket-dir" } ],
    });
    out.push(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "name": "csi-gce-pd-controller", "namespace": ns },
        "spec": {
            "replicas": 1,
            "selector": { "matchLabels": selector },
            "template": {
                "metadata": { "labels": selector },
                "spec": {
                    "affinity": { "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            cp_term("node-role.kubernetes.io/control-plane"),
                            cp_term("node-role.kubernetes.io/master"),
                        ] } } },
                    "containers": [
                        sidecar("csi-provisioner", "registry.k8s.io/sig-storage/csi-provisioner:v6.0.0", &[
                            "--v=5", "--csi-address=/csi/csi.sock", "--feature-gates=Topology=true",
                            "--http-endpoint=:22011", "--leader-election-namespace=$(PDCSI_NAMESPACE)",
                            "--timeout=250s", "--extra-create-metadata", "--leader-election",
                            "--default-fstype=ext4", "--controller-publish-readonly=true",
                        ], Some(22011)),
                        sidecar("csi-attacher", "registry.k8s.io/sig-storage/csi-attacher:v4.8.1", &[
                            "--v=5", "--csi-address=/csi/csi.sock", "--http-endpoint=:22012",
                            "--leader-election", "--leader-election-namespace=$(PDCSI_NAMESPACE)",
                            "--timeout=250s",
                        ], Some(22012)),
                        sidecar("csi-resizer", "registry.k8s.io/sig-storage/csi-resizer:v2.0.0", &[
                            "--v=5", "--csi-address=/csi/csi.sock", "--http-endpoint=:22013",
                            "--leader-election", "--leader-election-namespace=$(PDCSI_NAMESPACE)",
                            "--handle-volume-inuse-error=false",
                        ], Some(22013)),
                        sidecar("csi-snapshotter", "registry.k8s.io/sig-storage/csi-snapshotter:v8.2.1", &[
                            "--v=5", "--csi-address=/csi/csi.sock", "--metrics-address=:22014",
                            "--leader-election", "--leader-election-namespace=$(PDCSI_NAMESPACE)",
                            "--timeout=300s", "--retry-interval-max=60s",
                        ], None),
                        driver_container,
                    ],
                    "hostNetwork": true,
                    "nodeSelector": { "kubernetes.io/os": "linux" },
                    "priorityClassName": "csi-gce-pd-controller",
                    "serviceAccountName": controller_sa,
                    "tolerations": [
                        { "effect": "NoSchedule", "operator": "Exists" },
                        { "key": "CriticalAddonsOnly", "operator": "Exists" },
                    ],
                    "volumes": [ { "emptyDir": {}, "name": "socket-dir" } ],
                },
            },
        },
    }));
    let m = |path: &str, name: &str| json!({ "mountPath": path, "name": name });
    out.push(json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": { "name": "csi-gce-pd-node", "namespace": ns },
        "spec": {
            "selector": { "matchLabels": selector },
            "template": {
                "metadata": { "labels": selector },
                "spec": {
                    "affinity": { "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [ { "matchExpressions": [linux()] } ] } } },
                    "containers": [
                        {
                            "name": "csi-driver-registrar",
                            "image": "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.13.0",
                            "args": [
                                "--v=5", "--csi-address=/csi/csi.sock",
                                "--kubelet-registration-path=/var/lib/kubelet/plugins/pd.csi.storage.gke.io/csi.sock",
                            ],
                            "env": [ { "name": "KUBE_NODE_NAME", "valueFrom": { "fieldRef": { "fieldPath": "spec.nodeName" } } } ],
                            "volumeMounts": [m("/csi", "plugin-dir"), m("/registration", "registration-dir")],
                        },
                        {
                            "name": "gce-pd-driver",
                            "image": driver,
                            "args": ["--v=5", "--endpoint=unix:/csi/csi.sock", "--run-controller-service=false", "--enable-data-cache"],
                            "securityContext": { "privileged": true },
                            "volumeMounts": [
                                { "mountPath": "/var/lib/kubelet", "mountPropagation": "Bidirectional", "name": "kubelet-dir" },
                                m("/csi", "plugin-dir"),
                                m("/dev", "device-dir"),
                                m("/etc/udev", "udev-rules-etc"),
                                m("/lib/udev", "udev-rules-lib"),
                                m("/run/udev", "udev-socket"),
                                m("/sys", "sys"),
                            ],
                        },
                    ],
                    "hostNetwork": true,
                    "nodeSelector": { "kubernetes.io/os": "linux" },
                    "priorityClassName": "csi-gce-pd-node",
                    "serviceAccountName": node_sa,
                    "tolerations": [ { "operator": "Exists" } ],
                    "volumes": [
                        host_path_volume("registration-dir", "/var/lib/kubelet/plugins_registry/", "Directory"),
                        host_path_volume("kubelet-dir", "/var/lib/kubelet", "Directory"),
                        host_path_volume("plugin-dir", "/var/lib/kubelet/plugins/pd.csi.storage.gke.io/", "DirectoryOrCreate"),
                        host_path_volume("device-dir", "/dev", "Directory"),
                        host_path_volume("udev-rules-etc", "/etc/udev", "Directory"),
                        host_path_volume("udev-rules-lib", "/lib/udev", "Directory"),
                        host_path_volume("udev-socket", "/run/udev", "Directory"),
                        host_path_volume("sys", "/sys", "Directory"),
                    ],
                },
            },
        },
    }));
    out.push(json!({
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": { "name": "pd.csi.storage.gke.io" },
        "spec": { "attachRequired": true, "podInfoOnMount": false },
    }));
    Ok(out)
}
