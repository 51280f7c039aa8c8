//! `aws-ebs-csi-driver.addons.k8s.io`: the Amazon EBS CSI driver (controller Deployment,
//! node DaemonSet, the sidecars' RBAC, metrics Services and the CSIDriver object).

use serde_json::{Value, json};

use super::k8s::{binding, env, env_field, mount, rule, sa_subject};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

const DRIVER: &str = "aws-ebs-csi-driver";
const SOCKET_DIR: &str = "/var/lib/csi/sockets/pluginproxy/";

fn labels(version: &str) -> Value {
    json!({
        "app.kubernetes.io/name": DRIVER,
        "app.kubernetes.io/instance": DRIVER,
        "app.kubernetes.io/version": version,
        "app.kubernetes.io/component": "csi-driver",
    })
}

fn selector(app: &str) -> Value {
    json!({ "app": app, "app.kubernetes.io/name": DRIVER, "app.kubernetes.io/instance": DRIVER })
}

fn labelled(mut o: Value, version: &str) -> Value {
    o["metadata"]["labels"] = labels(version);
    o
}

fn cluster_role(name: &str, rules: Vec<Value>, version: &str) -> Value {
    labelled(super::k8s::role(name, "", rules), version)
}

/// The resources every container of the driver asks for.
fn resources() -> Value {
    json!({ "limits": { "memory": "256Mi" }, "requests": { "cpu": "10m", "memory": "40Mi" } })
}

fn restricted(seccomp: bool) -> Value {
    let mut s = json!({ "allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true });
    if seccomp {
        s["seccompProfile"] = json!({ "type": "RuntimeDefault" });
    }
    s
}

/// A controller sidecar talking to the driver over the shared socket.
fn sidecar(name: &str, image: &str, args: &[String], vac: bool, port: (&str, i64)) -> Value {
    let mut envs = vec![env("ADDRESS", &format!("{SOCKET_DIR}csi.sock"))];
    if vac {
        envs.push(env("ENABLE_VAC_FALLBACK", "true"));
    }
    json!({
        "name": name,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "args": args,
        "env": envs,
        "volumeMounts": [mount("socket-dir", SOCKET_DIR)],
        "ports": [ { "name": port.0, "containerPort": port.1, "protocol": "TCP" } ],
        "resources": resources(),
        "securityContext": restricted(true),
        "terminationMessagePolicy": "FallbackToLogsOnError",
    })
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| (*s).to_owned()).collect()
}

fn metrics_service(name: &str, port: i64) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": name, "namespace": "kube-system",
            "labels": { "app": name },
            "annotations": { "prometheus.io/scrape": "true", "prometheus.io/port": port.to_string() },
        },
        "spec": {
            "selector": { "app": "ebs-csi-controller" },
            "ports": [ { "name": "metrics", "port": port, "targetPort": port } ],
            "type": "ClusterIP",
        },
    })
}

/// kOps' `CloudLabels`: `KubernetesCluster=<name>` and the cluster's cloud labels, sorted
/// and comma-joined.
pub(super) fn cloud_labels(ctx: &ClusterContext) -> String {
    let mut l = vec![format!("KubernetesCluster={}", ctx.name())];
    l.extend(ctx.cloud_labels().iter().map(|(k, v)| format!("{k}={v}")));
    l.sort();
    l.join(",")
}

fn kubernetes_at_least(ctx: &ClusterContext, major: u64, minor: u64) -> bool {
    ctx.cluster
        .spec
        .kubernetes_version
        .as_deref()
        .and_then(kops_api::version::parse_kubernetes_version)
        .is_some_and(|v| (v.major, v.minor) >= (major, minor))
}

/// The addon's objects.
pub(super) fn objects(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let spec = &ctx.cluster.spec;
    let ebs = spec
        .cloud_provider
        .aws
        .as_ref()
        .and_then(|a| a.ebs_csi_driver.clone())
        .unwrap_or_default();
    let v = ebs
        .version
        .clone()
        .ok_or_else(|| invalid("spec.cloudConfig.awsEBSCSIDriver.version", "not set"))?;
    let v = v.as_str();
    let ns = "kube-system";
    let irsa = super::irsa(ctx);
    let host_network = ebs.host_network == Some(true);
    let driver_image = format!("registry.k8s.io/provider-aws/aws-ebs-csi-driver:{v}");
    let controller_sa = "ebs-csi-controller-sa";
    let crb = |name: &str, role: &str, sa: &str| {
        labelled(
            binding(name, "", "ClusterRole", role, vec![sa_subject(sa, ns)]),
            v,
        )
    };
    let sa = |name: &str| {
        let mut o = labelled(super::k8s::service_account(name, ns), v);
        o["automountServiceAccountToken"] = true.into();
        o
    };
    let mut out = vec![
        labelled(
            json!({
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": { "name": "ebs-csi-controller", "namespace": ns },
                "spec": { "selector": { "matchLabels": selector("ebs-csi-controller") }, "maxUnavailable": 1 },
            }),
            v,
        ),
        sa(controller_sa),
        sa("ebs-csi-node-sa"),
        cluster_role(
            "ebs-external-attacher-role",
            vec![
                rule(
                    &[""],
                    &["persistentvolumes"],
                    &["get", "list", "watch", "patch"],
                ),
                rule(
                    &["storage.k8s.io"],
                    &["csinodes"],
                    &["get", "list", "watch"],
                ),
                rule(
                    &["storage.k8s.io"],
                    &["volumeattachments"],
                    &["get", "list", "watch", "patch"],
                ),
                rule(
                    &["storage.k8s.io"],
                    &["volumeattachments/status"],
                    &["patch"],
                ),
            ],
            v,
        ),
        cluster_role(
            "ebs-csi-node-role",
            vec![
                rule(
                    &["storage.k8s.io"],
                    &["volumeattachments"],
                    &["get", "list", "watch"],
                ),
                rule(&[""], &["nodes"], &["get"]),
                rule(&[""], &["nodes"], &["patch", "list", "watch"]),
                rule(&["storage.k8s.io"], &["csinodes"], &["get"]),
            ],
            v,
        ),
        cluster_role(
            "ebs-external-provisioner-role",
            vec![
                rule(
                    &[""],
                    &["persistentvolumes"],
                    &["get", "list", "watch", "create", "patch", "delete"],
                ),
                rule(
                    &[""],
                    &["persistentvolumeclaims"],
                    &["get", "list", "watch", "update"],
                ),
                rule(
                    &["storage.k8s.io"],
                    &["storageclasses"],
                    &["get", "list", "watch"],
                ),
                rule(
                    &[""],
                    &["events"],
                    &["list", "watch", "create", "update", "patch"],
                ),
                rule(
                    &["snapshot.storage.k8s.io"],
                    &["volumesnapshots"],
                    &["get", "list", "watch", "update"],
                ),
                rule(
                    &["snapshot.storage.k8s.io"],
                    &["volumesnapshotcontents"],
                    &["get", "list"],
                ),
                rule(
                    &["storage.k8s.io"],
                    &["csinodes"],
                    &["get", "list", "watch"],
                ),
                rule(&[""], &["nodes"], &["get", "list", "watch"]),
                rule(
                    &["storage.k8s.io"],
                    &["volumeattachments"],
                    &["get", "list", "watch"],
                ),
                rule(&["storage.k8s.io"], &["volumeattributesclasses"], &["get"]),
            ],
            v,
        ),
        cluster_role(
            "ebs-external-resizer-role",
            vec![
                rule(
                    &[""],
                    &["persistentvolumes"],
                    &["get", "list", "watch", "patch"],
                ),
                rule(
                    &[""],
                    &["persistentvolumeclaims"],
                    &["get", "list", "watch"],
                ),
                rule(&[""], &["pods"], &["get", "list", "watch"]),
                rule(&[""], &["persistentvolumeclaims/status"], &["patch"]),
                rule(
                    &[""],
                    &["events"],
                    &["list", "watch", "create", "update", "patch"],
                ),
                rule(
                    &["storage.k8s.io"],
                    &["volumeattributesclasses"],
                    &["get", "list", "watch"],
                ),
            ],
            v,
        ),
        cluster_role(
            "ebs-external-snapshotter-role",
            vec![
                rule(
                    &[""],
                    &["events"],
                    &["list", "watch", "create", "update", "patch"],
                ),
                rule(
                    &["snapshot.storage.k8s.io"],
                    &["volumesnapshotclasses"],
                    &["get", "list", "watch"],
                ),
                rule(
                    &["snapshot.storage.k8s.io"],
                    &["volumesnapshotcontents"],
                    &["get", "list", "watch", "update", "patch"],
                ),
                rule(
                    &["snapshot.storage.k8s.io"],
                    &["volumesnapshotcontents/status"],
                    &["update", "patch"],
                ),
                rule(
                    &["groupsnapshot.storage.k8s.io"],
                    &["volumegroupsnapshotclasses"],
                    &["get", "list", "watch"],
                ),
                rule(
                    &["groupsnapshot.storage.k8s.io"],
                    &["volumegroupsnapshotcontents"],
                    &["get", "list", "watch", "update", "patch"],
                ),
                rule(
                    &["groupsnapshot.storage.k8s.io"],
                    &["volumegroupsnapshotcontents/status"],
                    &["update", "patch"],
                ),
            ],
            v,
        ),
        crb(
            "ebs-csi-attacher-binding",
            "ebs-external-attacher-role",
            controller_sa,
        ),
        crb(
            "ebs-csi-node-getter-binding",
            "ebs-csi-node-role",
            "ebs-csi-node-sa",
        ),
        crb(
            "ebs-csi-provisioner-binding",
            "ebs-external-provisioner-role",
            controller_sa,
        ),
        crb(
            "ebs-csi-resizer-binding",
            "ebs-external-resizer-role",
            controller_sa,
        ),
        crb(
            "ebs-csi-snapshotter-binding",
            "ebs-external-snapshotter-role",
            controller_sa,
        ),
        labelled(
            super::k8s::role(
                "ebs-csi-leases-role",
                ns,
                vec![rule(
                    &["coordination.k8s.io"],
                    &["leases"],
                    &["get", "watch", "list", "delete", "update", "create"],
                )],
            ),
            v,
        ),
        labelled(
            binding(
                "ebs-csi-leases-rolebinding",
                ns,
                "Role",
                "ebs-csi-leases-role",
                vec![sa_subject(controller_sa, ns)],
            ),
            v,
        ),
        metrics_service("ebs-csi-controller", 3301),
        metrics_service("ebs-csi-controller-provisioner", 3302),
        metrics_service("ebs-csi-controller-attacher", 3303),
        metrics_service("ebs-csi-controller-resizer", 3304),
        metrics_service("ebs-csi-controller-liveness-probe", 3305),
        metrics_service("ebs-csi-controller-snapshotter", 3306),
        metrics_service("ebs-csi-controller-volumemodifier", 3307),
    ];

    let annotations = ebs.pod_annotations.clone().unwrap_or_default();
    let pod_meta = |app: &str| {
        let mut m = json!({ "labels": {
            "app": app, "app.kubernetes.io/name": DRIVER, "app.kubernetes.io/instance": DRIVER,
            "app.kubernetes.io/version": v, "app.kubernetes.io/component": "csi-driver" } });
        if !annotations.is_empty() {
            m["annotations"] = json!(annotations);
        }
        m
    };
    let ipv6 = ctx.is_ipv6_only();
    let region_env = |socket: &str| {
        let mut e = Vec::new();
        if ipv6 {
            e.push(env("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE", "IPv6"));
        }
        e.push(env("AWS_REGION", &ctx.region));
        e.push(env("CSI_ENDPOINT", socket));
        e.push(env_field("CSI_NODE_NAME", "spec.nodeName"));
        e
    };

    // The node DaemonSet.
    let mut node_terms = Vec::new();
    if !host_network {
        node_terms.push(json!({ "key": "topology.kubernetes.io/zone", "operator": "Exists" }));
    }
    node_terms.push(
        json!({ "key": "eks.amazonaws.com/compute-type", "operator": "NotIn",
        "values": ["fargate", "auto", "hybrid"] }),
    );
    node_terms.push(
        json!({ "key": "node.kubernetes.io/instance-type", "operator": "NotIn",
        "values": ["a1.medium", "a1.large", "a1.xlarge", "a1.2xlarge", "a1.4xlarge"] }),
    );
    let mut node_args = strings(&[
        "node",
        "--endpoint=$(CSI_ENDPOINT)",
        "--csi-mount-point-prefix=/var/lib/kubelet/plugins/kubernetes.io/csi/ebs.csi.aws.com/",
    ]);
    if let Some(limit) = ebs.volume_attach_limit.filter(|l| *l != 0) {
        node_args.push(format!("--volume-attach-limit={limit}"));
    }
    node_args.extend(strings(&["--logging-format=text", "--v=5"]));
    let health_probe = |initial: Option<i64>, timeout: i64, period: i64, failure: i64| {
        let mut p = json!({ "httpGet": { "path": "/healthz", "port": "healthz" },
            "timeoutSeconds": timeout, "periodSeconds": period, "failureThreshold": failure });
        if let Some(i) = initial {
            p["initialDelaySeconds"] = i.into();
        }
        p
    };
    let node_pod = json!({
        "affinity": { "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [ { "matchExpressions": node_terms } ] } } },
        "nodeSelector": { "kubernetes.io/os": "linux" },
        "serviceAccountName": "ebs-csi-node-sa",
        "terminationGracePeriodSeconds": 30,
        "priorityClassName": "system-node-critical",
        "tolerations": [ { "operator": "Exists" } ],
        "hostNetwork": host_network,
        "securityContext": { "fsGroup": 0, "runAsGroup": 0, "runAsNonRoot": false, "runAsUser": 0 },
        "containers": [
            {
                "name": "ebs-plugin",
                "image": driver_image,
                "imagePullPolicy": "IfNotPresent",
                "args": node_args,
                "env": region_env("unix:/csi/csi.sock"),
                "volumeMounts": [
                    { "name": "kubelet-dir", "mountPath": "/var/lib/kubelet", "mountPropagation": "Bidirectional" },
                    mount("plugin-dir", "/csi"),
                    mount("device-dir", "/dev"),
                ],
                "ports": [ { "name": "healthz", "containerPort": 9808, "protocol": "TCP" } ],
                "livenessProbe": health_probe(Some(10), 3, 10, 5),
                "readinessProbe": health_probe(None, 3, 5, 3),
                "resources": resources(),
                "securityContext": { "privileged": true, "readOnlyRootFilesystem": true },
                "lifecycle": { "preStop": { "exec": { "command": ["/bin/aws-ebs-csi-driver", "pre-stop-hook"] } } },
                "terminationMessagePolicy": "FallbackToLogsOnError",
            },
            {
                "name": "node-driver-registrar",
                "image": "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.16.0",
                "imagePullPolicy": "IfNotPresent",
                "args": ["--csi-address=$(ADDRESS)", "--kubelet-registration-path=$(DRIVER_REG_SOCK_PATH)",
                    "--http-endpoint=0.0.0.0:9809", "--v=5"],
                "env": [
                    env("ADDRESS", "/csi/csi.sock"),
                    env("DRIVER_REG_SOCK_PATH", "/var/lib/kubelet/plugins/ebs.csi.aws.com/csi.sock"),
                ],
                "ports": [ { "name": "healthz-ndr", "containerPort": 9809 } ],
                "livenessProbe": { "httpGet": { "path": "/healthz", "port": "healthz-ndr" },
                    "initialDelaySeconds": 30, "periodSeconds": 90, "timeoutSeconds": 15 },
                "volumeMounts": [
                    mount("plugin-dir", "/csi"),
                    mount("registration-dir", "/registration"),
                    mount("probe-dir", "/var/lib/kubelet/plugins/ebs.csi.aws.com/"),
                ],
                "resources": resources(),
                "securityContext": restricted(false),
                "terminationMessagePolicy": "FallbackToLogsOnError",
            },
            {
                "name": "liveness-probe",
                "image": "registry.k8s.io/sig-storage/livenessprobe:v2.18.0",
                "imagePullPolicy": "IfNotPresent",
                "args": ["--csi-address=/csi/csi.sock"],
                "volumeMounts": [mount("plugin-dir", "/csi")],
                "resources": resources(),
                "securityContext": restricted(false),
                "terminationMessagePolicy": "FallbackToLogsOnError",
            },
        ],
        "volumes": [
            { "name": "kubelet-dir", "hostPath": { "path": "/var/lib/kubelet", "type": "Directory" } },
            { "name": "plugin-dir", "hostPath": { "path": "/var/lib/kubelet/plugins/ebs.csi.aws.com/", "type": "DirectoryOrCreate" } },
            { "name": "registration-dir", "hostPath": { "path": "/var/lib/kubelet/plugins_registry/", "type": "Directory" } },
            { "name": "device-dir", "hostPath": { "path": "/dev", "type": "Directory" } },
            { "name": "probe-dir", "emptyDir": {} },
        ],
    });
    out.push(labelled(
        json!({
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": { "name": "ebs-csi-node", "namespace": ns },
            "spec": {
                "revisionHistoryLimit": 10,
                "selector": { "matchLabels": selector("ebs-csi-node") },
                "updateStrategy": { "rollingUpdate": { "maxUnavailable": "10%" }, "type": "RollingUpdate" },
                "template": { "metadata": pod_meta("ebs-csi-node"), "spec": node_pod },
            },
        }),
        v,
    ));

    // The controller Deployment.
    let linux = json!({ "key": "kubernetes.io/os", "operator": "In", "values": ["linux"] });
    let term = |role_key: &str| {
        let mut e = Vec::new();
        if !irsa {
            e.push(json!({ "key": role_key, "operator": "Exists" }));
        }
        e.push(linux.clone());
        json!({ "matchExpressions": e })
    };
    let spread_sel = json!({ "matchLabels": selector("ebs-csi-controller") });
    let qps = ebs
        .kube_apiqps
        .as_ref()
        .map_or("20".to_owned(), |q| q.as_str().to_owned());
    let burst = ebs
        .kube_api_burst
        .filter(|b| *b != 0)
        .map_or("100".to_owned(), |b| b.to_string());
    let mut controller_env = region_env(&format!("unix://{SOCKET_DIR}csi.sock"));
    for (name, key, kind, src) in [
        ("AWS_ACCESS_KEY_ID", "key_id", "secretKeyRef", "aws-secret"),
        (
            "AWS_SECRET_ACCESS_KEY",
            "access_key",
            "secretKeyRef",
            "aws-secret",
        ),
        (
            "AWS_EC2_ENDPOINT",
            "endpoint",
            "configMapKeyRef",
            "aws-meta",
        ),
        (
            "AWS_SAGEMAKER_ENDPOINT",
            "sagemaker_endpoint",
            "configMapKeyRef",
            "aws-meta",
        ),
    ] {
        controller_env.push(json!({ "name": name,
            "valueFrom": { kind: { "name": src, "key": key, "optional": true } } }));
    }
    let mut containers = vec![
        json!({
            "name": "ebs-plugin",
            "image": driver_image,
            "imagePullPolicy": "IfNotPresent",
            "args": [
                "controller",
                "--endpoint=$(CSI_ENDPOINT)",
                format!("--k8s-tag-cluster-id={}", ctx.name()),
                format!("--extra-tags={}", cloud_labels(ctx)),
                "--http-endpoint=0.0.0.0:3301",
                "--batching=true",
                "--logging-format=text",
                "--v=5",
            ],
            "env": controller_env,
            "volumeMounts": [mount("socket-dir", SOCKET_DIR)],
            "ports": [
                { "name": "healthz", "containerPort": 9808, "protocol": "TCP" },
                { "name": "metrics", "containerPort": 3301, "protocol": "TCP" },
            ],
            "livenessProbe": health_probe(Some(10), 60, 10, 10),
            "readinessProbe": health_probe(Some(10), 60, 10, 5),
            "resources": resources(),
            "securityContext": restricted(true),
            "terminationMessagePolicy": "FallbackToLogsOnError",
        }),
        sidecar(
            "csi-provisioner",
            "registry.k8s.io/sig-storage/csi-provisioner:v6.2.0",
            &[
                "--timeout=60s".into(),
                "--csi-address=$(ADDRESS)".into(),
                "--v=5".into(),
                "--feature-gates=Topology=true".into(),
                "--extra-create-metadata".into(),
                "--leader-election=true".into(),
                "--default-fstype=ext4".into(),
                format!("--kube-api-qps={qps}"),
                format!("--kube-api-burst={burst}"),
                "--worker-threads=100".into(),
                "--retry-interval-max=30m".into(),
                "--feature-gates=VolumeAttributesClass=false".into(),
                "--http-endpoint=0.0.0.0:3302".into(),
            ],
            true,
            ("metrics-prov", 3302),
        ),
        sidecar(
            "csi-attacher",
            "registry.k8s.io/sig-storage/csi-attacher:v4.11.0",
            &strings(&[
                "--timeout=6m",
                "--csi-address=$(ADDRESS)",
                "--v=5",
                "--leader-election=true",
                "--kube-api-qps=20",
                "--kube-api-burst=100",
                "--worker-threads=100",
                "--retry-interval-max=5m",
                "--feature-gates=MutableCSINodeAllocatableCount=true",
                "--http-endpoint=0.0.0.0:3303",
            ]),
            false,
            ("metrics-attach", 3303),
        ),
    ];
    if spec.snapshot_controller.as_ref().and_then(|s| s.enabled) == Some(true) {
        containers.push(sidecar(
            "csi-snapshotter",
            "registry.k8s.io/sig-storage/csi-snapshotter:v8.5.0",
            &strings(&[
                "--csi-address=$(ADDRESS)",
                "--leader-election=true",
                "--v=5",
                "--extra-create-metadata",
                "--kube-api-qps=20",
                "--kube-api-burst=100",
                "--worker-threads=100",
                "--retry-interval-max=30m",
                "--http-endpoint=0.0.0.0:3306",
            ]),
            false,
            ("metrics-snap", 3306),
        ));
    }
    containers.push(sidecar(
        "csi-resizer",
        "registry.k8s.io/sig-storage/csi-resizer:v2.1.0",
        &strings(&[
            "--timeout=60s",
            "--extra-modify-metadata",
            "--csi-address=$(ADDRESS)",
            "--v=5",
            "--handle-volume-inuse-error=false",
            "--leader-election=true",
            "--kube-api-qps=20",
            "--kube-api-burst=100",
            "--workers=100",
            "--retry-interval-max=30m",
            "--feature-gates=VolumeAttributesClass=false",
            "--http-endpoint=0.0.0.0:3304",
        ]),
        true,
        ("metrics-resizer", 3304),
    ));
    containers.push(json!({
        "name": "liveness-probe",
        "image": "registry.k8s.io/sig-storage/livenessprobe:v2.18.0",
        "imagePullPolicy": "IfNotPresent",
        "args": ["--csi-address=/csi/csi.sock", "--probe-timeout=60s", "--metrics-address=0.0.0.0:3305"],
        "volumeMounts": [mount("socket-dir", "/csi")],
        "ports": [ { "name": "metrics-lp", "containerPort": 3305, "protocol": "TCP" } ],
        "resources": resources(),
        "securityContext": restricted(false),
        "terminationMessagePolicy": "FallbackToLogsOnError",
    }));
    let mut controller_pod = json!({
        "nodeSelector": { "kubernetes.io/os": "linux" },
        "serviceAccountName": controller_sa,
        "priorityClassName": "system-cluster-critical",
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": { "nodeSelectorTerms": [
                    term("node-role.kubernetes.io/control-plane"),
                    term("node-role.kubernetes.io/master"),
                ] },
                "preferredDuringSchedulingIgnoredDuringExecution": [ {
                    "preference": { "matchExpressions": [ { "key": "eks.amazonaws.com/compute-type",
                        "operator": "NotIn", "values": ["fargate", "auto", "hybrid"] } ] },
                    "weight": 1,
                } ],
            },
            "podAntiAffinity": { "preferredDuringSchedulingIgnoredDuringExecution": [ {
                "podAffinityTerm": {
                    "labelSelector": { "matchExpressions": [ { "key": "app", "operator": "In", "values": ["ebs-csi-controller"] } ] },
                    "topologyKey": "kubernetes.io/hostname",
                },
                "weight": 100,
            } ] },
        },
        "topologySpreadConstraints": [
            { "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
              "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": spread_sel },
            { "maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
              "whenUnsatisfiable": "DoNotSchedule", "labelSelector": spread_sel },
        ],
        "securityContext": { "fsGroup": 1000, "runAsGroup": 1000, "runAsNonRoot": true, "runAsUser": 1000 },
        "containers": containers,
        "volumes": [ { "name": "socket-dir", "emptyDir": {} } ],
    });
    if irsa {
        let mut t = vec![
            json!({ "key": "CriticalAddonsOnly", "operator": "Exists" }),
            json!({ "effect": "NoExecute", "operator": "Exists", "tolerationSeconds": 300 }),
        ];
        if spec.karpenter.as_ref().and_then(|k| k.enabled) == Some(true) {
            t.push(json!({ "key": "node-role.kubernetes.io/master", "operator": "Exists" }));
            t.push(json!({ "key": "node-role.kubernetes.io/control-plane", "operator": "Exists" }));
        }
        controller_pod["tolerations"] = json!(t);
    } else {
        controller_pod["hostNetwork"] = true.into();
        controller_pod["tolerations"] = json!([{ "operator": "Exists" }]);
    }
    let replicas = if ctx.groups.iter().filter(|g| g.is_control_plane()).count() > 1 {
        2
    } else {
        1
    };
    out.push(labelled(
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": { "name": "ebs-csi-controller", "namespace": ns },
            "spec": {
                "replicas": replicas,
                "revisionHistoryLimit": 10,
                "strategy": { "rollingUpdate": { "maxUnavailable": 1 }, "type": "RollingUpdate" },
                "selector": { "matchLabels": selector("ebs-csi-controller") },
                "template": { "metadata": pod_meta("ebs-csi-controller"), "spec": controller_pod },
            },
        }),
        v,
    ));
    let mut driver_spec = json!({ "attachRequired": true, "podInfoOnMount": false });
    if kubernetes_at_least(ctx, 1, 35) {
        driver_spec["nodeAllocatableUpdatePeriodSeconds"] = 10.into();
    }
    out.push(labelled(
        json!({
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": { "name": "ebs.csi.aws.com" },
            "spec": driver_spec,
        }),
        v,
    ));
    Ok(out)
}
