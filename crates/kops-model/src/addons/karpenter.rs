//! `karpenter.sh`: the Karpenter controller (its CustomResourceDefinitions, RBAC,
//! metrics service, deployment and disruption budget) and, for every instance group
//! with `manager: Karpenter`, the `EC2NodeClass` and `NodePool` that make Karpenter
//! launch that group's machines with the group's image, volume, tags and nodeup user
//! data.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::helpers::{automount, crds, labeled};
use super::k8s::{binding, env, named_rule, role, rule, sa_subject, service_account};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};
use kops_api::internal::{InstanceGroup, InstanceGroupRole};

const CRDS: &str = include_str!("crds/karpenter.json");

const NAME: &str = "karpenter";

/// The chart release the controller objects are labelled with.
const CHART_VERSION: &str = "1.13.0";

/// The feature gates the controller runs with when the spec names none.
const DEFAULT_FEATURE_GATES: &str = "ReservedCapacity=true,SpotToSpotConsolidation=false,NodeRepair=false,NodeOverlay=false,StaticCapacity=true";

/// Node class API group.
const AWS_GROUP: &str = "karpenter.k8s.aws";

/// The addon's objects.
pub(super) fn objects(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let k = ctx
        .cluster
        .spec
        .karpenter
        .clone()
        .ok_or_else(|| invalid("spec.karpenter", "not set"))?;
    let image = k
        .image
        .clone()
        .filter(|i| !i.is_empty())
        .ok_or_else(|| invalid("spec.karpenter.image", "not set"))?;
    let q = |v: &Option<kops_api::v1alpha2::Quantity>, d: &str| {
        v.as_ref()
            .map(|q| q.as_str().to_owned())
            .filter(|q| !q.is_empty())
            .unwrap_or_else(|| d.to_owned())
    };
    let labels = json!({
        "app.kubernetes.io/instance": NAME,
        "app.kubernetes.io/managed-by": "Helm",
        "app.kubernetes.io/name": NAME,
        "app.kubernetes.io/version": CHART_VERSION,
        "helm.sh/chart": format!("karpenter-{CHART_VERSION}"),
    });
    let selector = json!({ "app.kubernetes.io/instance": NAME, "app.kubernetes.io/name": NAME });
    let ns = "kube-system";
    let sa = || vec![sa_subject(NAME, ns)];
    let read = ["get", "list", "watch"];

    let mut admin_labels = labels.clone();
    admin_labels["rbac.authorization.k8s.io/aggregate-to-admin"] = "true".into();
    let manage = ["get", "list", "watch", "create", "delete", "patch"];

    let mut out = crds("karpenter.json", CRDS)?;
    out.extend([
        labeled(automount(service_account(NAME, ns), false), &labels),
        labeled(
            role(
                NAME,
                ns,
                vec![
                    rule(&["coordination.k8s.io"], &["leases"], &["get", "watch"]),
                    named_rule(
                        &["coordination.k8s.io"],
                        &["leases"],
                        &["karpenter-leader-election"],
                        &["patch", "update"],
                    ),
                    rule(&["coordination.k8s.io"], &["leases"], &["create"]),
                ],
            ),
            &labels,
        ),
        labeled(
            role(
                "karpenter-dns",
                ns,
                vec![named_rule(&[""], &["services"], &["kube-dns"], &["get"])],
            ),
            &labels,
        ),
        labeled(
            role(
                NAME,
                "",
                vec![
                    rule(&[AWS_GROUP], &["ec2nodeclasses"], &read),
                    rule(
                        &[AWS_GROUP],
                        &["ec2nodeclasses", "ec2nodeclasses/status"],
                        &["patch", "update"],
                    ),
                ],
            ),
            &labels,
        ),
        labeled(
            role(
                "karpenter-admin",
                "",
                vec![
                    rule(
                        &["karpenter.sh"],
                        &[
                            "nodepools",
                            "nodepools/status",
                            "nodeclaims",
                            "nodeclaims/status",
                        ],
                        &manage,
                    ),
                    rule(&[AWS_GROUP], &["ec2nodeclasses"], &manage),
                ],
            ),
            &admin_labels,
        ),
        labeled(role("karpenter-core", "", core_rules()), &labels),
        labeled(binding(NAME, ns, "Role", NAME, sa()), &labels),
        labeled(
            binding("karpenter-dns", ns, "Role", "karpenter-dns", sa()),
            &labels,
        ),
        labeled(binding(NAME, "", "ClusterRole", NAME, sa()), &labels),
        labeled(
            binding("karpenter-core", "", "ClusterRole", "karpenter-core", sa()),
            &labels,
        ),
        json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": { "labels": labels, "name": NAME, "namespace": ns },
            "spec": {
                "ports": [ { "name": "http-metrics", "port": 8080, "protocol": "TCP",
                    "targetPort": "http-metrics" } ],
                "selector": selector,
                "type": "ClusterIP",
            },
        }),
    ]);

    let resource_env = |name: &str, divisor: &str, resource: &str| {
        json!({ "name": name, "valueFrom": { "resourceFieldRef": {
            "containerName": "controller", "divisor": divisor, "resource": resource } } })
    };
    let container_env = vec![
        env(
            "FEATURE_GATES",
            k.feature_gates
                .as_deref()
                .filter(|g| !g.is_empty())
                .unwrap_or(DEFAULT_FEATURE_GATES),
        ),
        env("KUBERNETES_MIN_VERSION", "1.19.0-0"),
        env("KARPENTER_SERVICE", NAME),
        env("LOG_LEVEL", k.log_level.as_deref().unwrap_or_default()),
        env("LOG_OUTPUT_PATHS", "stdout"),
        env("LOG_ERROR_OUTPUT_PATHS", "stderr"),
        env("METRICS_PORT", "8080"),
        env("HEALTH_PROBE_PORT", "8081"),
        super::k8s::env_field("SYSTEM_NAMESPACE", "metadata.namespace"),
        resource_env("CPU_REQUESTS", "1m", "requests.cpu"),
        resource_env("MEMORY_LIMIT", "0", "limits.memory"),
        env("BATCH_MAX_DURATION", "10s"),
        env("BATCH_IDLE_DURATION", "1s"),
        env("PREFERENCE_POLICY", "Respect"),
        env("MIN_VALUES_POLICY", "Strict"),
        env("CLUSTER_NAME", ctx.name()),
        env(
            "CLUSTER_ENDPOINT",
            &format!("https://api.internal.{}", ctx.name()),
        ),
        env("VM_MEMORY_OVERHEAD_PERCENT", "0.075"),
        env("RESERVED_ENIS", "0"),
        env("IGNORE_DRA_REQUESTS", "true"),
        env("AMI_REFRESH_INTERVAL", "1m"),
        env("SUBNET_REFRESH_INTERVAL", "1m"),
        env("AWS_REGION", &ctx.region),
    ];
    let probe = |path: &str, delay: u32| {
        json!({ "httpGet": { "path": path, "port": "http" }, "initialDelaySeconds": delay,
            "timeoutSeconds": 30 })
    };
    let container = json!({
        "env": container_env,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "livenessProbe": probe("/healthz", 30),
        "name": "controller",
        "ports": [
            { "containerPort": 8080, "name": "http-metrics", "protocol": "TCP" },
            { "containerPort": 8081, "name": "http", "protocol": "TCP" },
        ],
        "readinessProbe": probe("/readyz", 5),
        "resources": {
            "limits": { "memory": q(&k.memory_limit, "1Gi") },
            "requests": { "cpu": q(&k.cpu_request, "500m"), "memory": q(&k.memory_request, "1Gi") },
        },
        "securityContext": {
            "allowPrivilegeEscalation": false,
            "capabilities": { "drop": ["ALL"] },
            "privileged": false,
            "readOnlyRootFilesystem": true,
            "runAsGroup": 65532,
            "runAsNonRoot": true,
            "runAsUser": 65532,
        },
    });
    let node_term = json!({ "matchExpressions": [
        { "key": "kubernetes.io/os", "operator": "In", "values": ["linux"] },
        { "key": "karpenter.sh/nodepool", "operator": "DoesNotExist" },
        { "key": "node-role.kubernetes.io/control-plane", "operator": "Exists" },
    ] });
    let toleration = |key: &str| json!({ "key": key, "operator": "Exists" });
    out.push(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "labels": labels, "name": NAME, "namespace": ns },
        "spec": {
            "replicas": 1,
            "revisionHistoryLimit": 10,
            "selector": { "matchLabels": selector },
            "strategy": { "rollingUpdate": { "maxUnavailable": 1 } },
            "template": {
                "metadata": { "labels": selector },
                "spec": {
                    "affinity": {
                        "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [node_term] } },
                        "podAntiAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": [ {
                            "labelSelector": { "matchLabels": selector },
                            "topologyKey": "kubernetes.io/hostname",
                        } ] },
                    },
                    "automountServiceAccountToken": true,
                    "containers": [container],
                    "dnsPolicy": if ctx.is_ipv6_only() { "ClusterFirst" } else { "Default" },
                    "nodeSelector": { "kubernetes.io/os": "linux" },
                    "priorityClassName": "system-cluster-critical",
                    "schedulerName": "default-scheduler",
                    "securityContext": { "fsGroup": 65532, "seccompProfile": { "type": "RuntimeDefault" } },
                    "serviceAccountName": NAME,
                    "tolerations": [
                        toleration("node-role.kubernetes.io/master"),
                        toleration("node-role.kubernetes.io/control-plane"),
                        toleration("CriticalAddonsOnly"),
                    ],
                    "topologySpreadConstraints": [ {
                        "labelSelector": { "matchLabels": selector },
                        "maxSkew": 1,
                        "topologyKey": "topology.kubernetes.io/zone",
                        "whenUnsatisfiable": "ScheduleAnyway",
                    } ],
                },
            },
        },
    }));
    out.push(json!({
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": { "labels": labels, "name": NAME, "namespace": ns },
        "spec": { "maxUnavailable": 1, "selector": { "matchLabels": selector } },
    }));

    for ig in karpenter_groups(ctx) {
        out.push(node_class(ctx, ig)?);
        out.push(node_pool(ctx, ig)?);
    }
    Ok(out)
}

/// What the controller may read and change: node pools and claims, the pods and
/// objects it plans around, events, nodes, evictions.
fn core_rules() -> Vec<Value> {
    let read = ["get", "list", "watch"];
    vec![
        rule(
            &["karpenter.sh"],
            &[
                "nodepools",
                "nodepools/status",
                "nodeclaims",
                "nodeclaims/status",
                "nodeoverlays",
                "nodeoverlays/status",
            ],
            &read,
        ),
        rule(
            &[""],
            &[
                "pods",
                "nodes",
                "persistentvolumes",
                "persistentvolumeclaims",
                "replicationcontrollers",
                "namespaces",
            ],
            &read,
        ),
        rule(
            &["storage.k8s.io"],
            &["storageclasses", "csinodes", "volumeattachments"],
            &["get", "watch", "list"],
        ),
        rule(
            &["apps"],
            &["daemonsets", "deployments", "replicasets", "statefulsets"],
            &["list", "watch"],
        ),
        rule(&["policy"], &["poddisruptionbudgets"], &read),
        rule(&[""], &["events"], &read),
        rule(
            &["karpenter.sh"],
            &["nodeclaims", "nodeclaims/status"],
            &["create", "delete", "update", "patch"],
        ),
        rule(
            &["karpenter.sh"],
            &["nodepools", "nodepools/status", "nodeoverlays/status"],
            &["update", "patch"],
        ),
        rule(&[""], &["events"], &["create", "patch"]),
        rule(&[""], &["nodes"], &["patch", "delete", "update"]),
        rule(&[""], &["pods/eviction"], &["create"]),
        rule(&[""], &["pods"], &["delete"]),
    ]
}

/// The instance groups Karpenter manages, by name (on AWS only).
fn karpenter_groups(ctx: &ClusterContext) -> Vec<&InstanceGroup> {
    if ctx.cluster.spec.cloud_provider.aws.is_none() {
        return Vec::new();
    }
    let mut groups: Vec<&InstanceGroup> = ctx
        .groups
        .iter()
        .filter(|g| ClusterContext::is_karpenter(g))
        .collect();
    groups.sort_by(|a, b| a.name().cmp(b.name()));
    groups
}

fn group_field(ig: &InstanceGroup, field: &str) -> String {
    format!("instancegroup {}: spec.{field}", ig.name())
}

/// kOps' owner aliases of image names (`ubuntu/...` is Canonical's account).
fn owner_alias(owner: &str) -> &str {
    match owner {
        "amazon" | "amazon.com" => "137112412989",
        "debian" | "debian11" => "136693071363",
        "flatcar" => "075585003325",
        "redhat" | "redhat.com" => "309956199498",
        "ubuntu" => "099720109477",
        "rocky" | "rockylinux" => "792107900819",
        other => other,
    }
}

/// The node class's AMI selector for the group's `image`: an id, an SSM parameter, a
/// name of the account's own images, or `<owner>/<name>`.
fn ami_terms(ig: &InstanceGroup) -> Result<Value> {
    let field = group_field(ig, "image");
    let image = ig.spec.image.as_deref().unwrap_or_default().trim();
    let bad = || {
        invalid(
            field.clone(),
            format!("{image:?} must be ami-*, ssm:<parameter>, <name> or <owner>/<name>"),
        )
    };
    if image.is_empty() {
        return Err(invalid(field, "is required for a Karpenter group"));
    }
    if image.contains("://") {
        return Err(bad());
    }
    if image.starts_with("ami-") {
        return Ok(json!([{ "id": image }]));
    }
    if let Some(param) = image.strip_prefix("ssm:") {
        if param.is_empty() {
            return Err(invalid(field, "names no SSM parameter after ssm:"));
        }
        return Ok(json!([{ "ssmParameter": param }]));
    }
    match image.split_once('/') {
        None => Ok(json!([{ "name": image, "owner": "self" }])),
        Some((owner, name)) if !owner.is_empty() && !name.is_empty() => {
            Ok(json!([{ "name": name, "owner": owner_alias(owner) }]))
        }
        Some(_) => Err(bad()),
    }
}

/// Whether the group's machines get a public address, by its first subnet's type.
fn associate_public_ip(ctx: &ClusterContext, ig: &InstanceGroup) -> Result<bool> {
    let first = ctx
        .first_subnet_type(ig)
        .ok_or_else(|| invalid(group_field(ig, "subnets"), "names no subnet of the cluster"))?;
    match first {
        "Public" | "Utility" => Ok(ig.spec.associate_public_ip.unwrap_or(true)),
        "DualStack" | "Private" => Ok(false),
        other => Err(invalid(
            group_field(ig, "subnets"),
            format!("subnet type {other:?} is not one Karpenter groups can use"),
        )),
    }
}

/// The root volume mapping, with the launch template's defaults and EC2's minimums.
fn block_device_mappings(ctx: &ClusterContext, ig: &InstanceGroup) -> Value {
    let rv = ig.spec.root_volume.clone().unwrap_or_default();
    let size = rv.size.filter(|s| *s > 0).unwrap_or(128);
    let volume_type = rv
        .type_
        .clone()
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "gp3".to_owned());
    let key = rv
        .encryption_key
        .clone()
        .filter(|k| rv.encryption == Some(true) && !k.is_empty());
    let (iops, throughput) = match volume_type.as_str() {
        "io1" | "io2" => (Some(rv.iops.unwrap_or(0).max(100)), None),
        "gp3" => (
            Some(rv.iops.unwrap_or(0).max(3000)),
            Some(rv.throughput.unwrap_or(0).max(125)),
        ),
        _ => (None, None),
    };
    let mut ebs = Map::new();
    ebs.insert("deleteOnTermination".into(), true.into());
    ebs.insert("encrypted".into(), rv.encryption.unwrap_or(true).into());
    if let Some(i) = iops {
        ebs.insert("iops".into(), i.into());
    }
    if let Some(k) = key {
        ebs.insert("kmsKeyID".into(), k.into());
    }
    if let Some(t) = throughput {
        ebs.insert("throughput".into(), t.into());
    }
    ebs.insert("volumeSize".into(), format!("{size}Gi").into());
    ebs.insert("volumeType".into(), volume_type.into());
    let image = ig.spec.image.as_deref().unwrap_or_default();
    // The image's own root device, so the mapping replaces its root volume; images the
    // cloud did not resolve fall back to the launch templates' default.
    let device = ctx
        .aws_root_devices
        .get(image)
        .filter(|d| !d.is_empty())
        .cloned()
        .unwrap_or_else(|| "/dev/xvda".to_owned());
    json!([{ "deviceName": device, "ebs": ebs, "rootVolume": true }])
}

/// The kubelet settings Karpenter needs to compute a node's allocatable capacity.
fn kubelet(ig: &InstanceGroup) -> Option<Value> {
    let k = ig.spec.kubelet.as_ref()?;
    let mut m = Map::new();
    if let Some(p) = k.max_pods {
        m.insert("maxPods".into(), p.into());
    }
    for (key, v) in [
        ("systemReserved", &k.system_reserved),
        ("kubeReserved", &k.kube_reserved),
    ] {
        if let Some(r) = v.as_ref().filter(|r| !r.is_empty()) {
            m.insert(key.into(), json!(r));
        }
    }
    (!m.is_empty()).then_some(Value::Object(m))
}

/// Tags Karpenter sets itself (or that name the cluster's ownership) and refuses on a
/// node class.
fn reserved_tag(key: &str) -> bool {
    key.is_empty()
        || key.starts_with("kubernetes.io/cluster")
        || matches!(
            key,
            "eks:eks-cluster-name"
                | "karpenter.sh/nodepool"
                | "karpenter.sh/nodeclaim"
                | "karpenter.k8s.aws/ec2nodeclass"
        )
}

fn node_class(ctx: &ClusterContext, ig: &InstanceGroup) -> Result<Value> {
    let cluster = ctx.name();
    let profile = match ig.spec.iam.as_ref().and_then(|i| i.profile.as_deref()) {
        Some(arn) => arn
            .rsplit('/')
            .next()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| {
                invalid(
                    group_field(ig, "iam.profile"),
                    format!("cannot read a profile name from {arn:?}"),
                )
            })?
            .to_owned(),
        None => crate::aws::naming::truncate(&ctx.scoped("nodes"), 64, false),
    };
    let tags: BTreeMap<String, String> = crate::aws::builders::compute::group_tags(ctx, ig)
        .into_iter()
        .filter(|(k, _)| !reserved_tag(k))
        .collect();
    let mut security_groups = vec![match ig.spec.security_group_override.as_deref() {
        Some(id) => json!({ "id": id }),
        None => json!({ "tags": { "KubernetesCluster": cluster, "Name": ctx.scoped("nodes") } }),
    }];
    security_groups.extend(
        ig.spec
            .additional_security_groups
            .iter()
            .flatten()
            .map(|id| json!({ "id": id })),
    );
    let user_data = crate::nodeup::bootstrap_script(ctx, ig)?;
    let mut spec = json!({
        "amiFamily": "Custom",
        "amiSelectorTerms": ami_terms(ig)?,
        "associatePublicIPAddress": associate_public_ip(ctx, ig)?,
        "blockDeviceMappings": block_device_mappings(ctx, ig),
        "instanceProfile": profile,
        "securityGroupSelectorTerms": security_groups,
        "subnetSelectorTerms": [ { "tags": {
            "KubernetesCluster": cluster,
            format!("kops.k8s.io/instance-group/{}", ig.name()): "true",
        } } ],
        // kOps writes the object with its text trimmed, and the user data is its last
        // field: the script loses its final newline.
        "userData": user_data.trim_end(),
    });
    if !tags.is_empty() {
        spec["tags"] = json!(tags);
    }
    if let Some(k) = kubelet(ig) {
        spec["kubelet"] = k;
    }
    Ok(json!({
        "apiVersion": format!("{AWS_GROUP}/v1"),
        "kind": "EC2NodeClass",
        "metadata": { "name": ig.name() },
        "spec": spec,
    }))
}

/// kOps' node labels of a worker group: the kubelet's (cluster, then group), the node
/// role, then the group's own.
fn node_labels(ctx: &ClusterContext, ig: &InstanceGroup) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    for k in [ctx.cluster.spec.kubelet.as_ref(), ig.spec.kubelet.as_ref()]
        .into_iter()
        .flatten()
    {
        labels.extend(k.node_labels.clone().unwrap_or_default());
    }
    if ig.spec.role == Some(InstanceGroupRole::Node) {
        labels.insert("node-role.kubernetes.io/node".into(), String::new());
    }
    labels.extend(ig.spec.node_labels.clone().unwrap_or_default());
    labels
}

/// Labels Karpenter owns on the nodes of a pool (its capacity type excepted).
fn reserved_label(key: &str) -> bool {
    if key == "karpenter.sh/capacity-type" {
        return false;
    }
    if key == "kubernetes.io/hostname" {
        return true;
    }
    let Some((domain, _)) = key.split_once('/') else {
        return false;
    };
    ["karpenter.sh", "karpenter.k8s.aws"]
        .iter()
        .any(|d| domain == *d || domain.ends_with(&format!(".{d}")))
}

/// The machine types a pool may launch: the mixed-instances list and the machine
/// type(s), each once, sorted.
fn instance_types(ig: &InstanceGroup) -> Vec<String> {
    let mut v: Vec<String> = ig
        .spec
        .mixed_instances_policy
        .iter()
        .flat_map(|m| m.instances.iter().flatten())
        .map(String::as_str)
        .chain(
            ig.spec
                .machine_type
                .as_deref()
                .unwrap_or_default()
                .split(','),
        )
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Spot when the group bids, both when its mixed-instances policy runs spot above the
/// base, else on-demand.
fn capacity_types(ig: &InstanceGroup) -> Vec<&'static str> {
    if ig.spec.max_price.is_some() || ig.spec.spot_duration_in_minutes.is_some() {
        return vec!["spot"];
    }
    let above = ig
        .spec
        .mixed_instances_policy
        .as_ref()
        .and_then(|m| m.on_demand_above_base);
    if above.is_some_and(|a| a < 100) {
        return vec!["on-demand", "spot"];
    }
    vec!["on-demand"]
}

/// A taint `key[=value][:effect]` as Karpenter's node claim template has it.
pub(super) fn taint(ig: &InstanceGroup, spec: &str) -> Result<Value> {
    let bad = || invalid(group_field(ig, "taints"), format!("invalid taint {spec:?}"));
    let parts: Vec<&str> = spec.split(':').collect();
    let (kv, effect) = match parts.as_slice() {
        [kv] => (*kv, ""),
        [kv, effect] => (*kv, *effect),
        _ => return Err(bad()),
    };
    let (key, value) = if parts.len() == 1 {
        (kv, "")
    } else {
        let kvs: Vec<&str> = kv.split('=').collect();
        match kvs.as_slice() {
            [k] => (*k, ""),
            [k, v] => (*k, *v),
            _ => return Err(bad()),
        }
    };
    let mut t = Map::new();
    t.insert("key".into(), key.into());
    if !value.is_empty() {
        t.insert("value".into(), value.into());
    }
    t.insert("effect".into(), effect.into());
    Ok(Value::Object(t))
}

fn node_pool(ctx: &ClusterContext, ig: &InstanceGroup) -> Result<Value> {
    let mut requirements =
        vec![json!({ "key": "kubernetes.io/os", "operator": "In", "values": ["linux"] })];
    let types = instance_types(ig);
    if !types.is_empty() {
        requirements.push(
            json!({ "key": "node.kubernetes.io/instance-type", "operator": "In", "values": types }),
        );
    }
    requirements.push(
        json!({ "key": "karpenter.sh/capacity-type", "operator": "In",
        "values": capacity_types(ig) }),
    );
    let mut claim = json!({
        "nodeClassRef": { "group": AWS_GROUP, "kind": "EC2NodeClass", "name": ig.name() },
        "requirements": requirements,
    });
    let taints = ig
        .spec
        .taints
        .iter()
        .flatten()
        .map(|t| taint(ig, t))
        .collect::<Result<Vec<_>>>()?;
    if !taints.is_empty() {
        claim["taints"] = taints.into();
    }
    let labels: BTreeMap<String, String> = node_labels(ctx, ig)
        .into_iter()
        .filter(|(k, _)| !reserved_label(k))
        .collect();
    let mut template = json!({ "spec": claim });
    if !labels.is_empty() {
        template["metadata"] = json!({ "labels": labels });
    }
    let mut spec = json!({ "template": template });
    if let Some(min) = ig.spec.min_size.filter(|m| *m > 0) {
        spec["replicas"] = min.into();
    }
    if let Some(max) = ig.spec.max_size {
        spec["limits"] = json!({ "nodes": max.to_string() });
    }
    Ok(json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": { "name": ig.name() },
        "spec": spec,
    }))
}
