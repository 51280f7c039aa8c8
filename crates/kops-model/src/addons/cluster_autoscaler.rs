//! `cluster-autoscaler.addons.k8s.io`: the Kubernetes cluster autoscaler for the
//! cluster's node instance groups, with the priority expander's config when asked.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use sha2::Digest as _;

use super::helpers::{automount, controller_replicas, cp_affinity, cp_tolerations, labeled};
use super::k8s::{binding, env, named_rule, role, rule, sa_subject, service_account};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};
use kops_api::internal::InstanceGroupRole;

const NAME: &str = "cluster-autoscaler";

/// kOps' `ClusterAutoscalerPriorities`: the custom config, or each autoscaled node group
/// under its priority; priorities and groups sorted as strings.
fn priorities(ctx: &ClusterContext, custom: Option<&BTreeMap<String, Vec<String>>>) -> String {
    let mut by: BTreeMap<String, Vec<String>> = BTreeMap::new();
    if let Some(c) = custom {
        by = c.clone();
    } else {
        let mut groups: Vec<_> = ctx
            .groups
            .iter()
            .filter(|g| g.spec.role == Some(InstanceGroupRole::Node) && g.spec.autoscale.is_some())
            .collect();
        groups.sort_by(|a, b| a.name().cmp(b.name()));
        for g in groups {
            by.entry(g.spec.autoscale_priority.unwrap_or(0).to_string())
                .or_default()
                .push(format!("{}.{}", g.name(), ctx.name()));
        }
    }
    let mut lines = Vec::new();
    for (prio, names) in by {
        lines.push(format!("{prio}:"));
        lines.extend(names.iter().map(|n| format!("- {n}")));
    }
    lines.join("\n")
}

/// The addon's objects.
/// The autoscaled node groups as kOps' `GetClusterAutoscalerNodeGroups` lists them, in
/// its key order: (key, min, max, the group cluster-autoscaler is given). On GCE each
/// zone's managed instance group is a group of its own (key `<ig>-<zone>` when the
/// group spans several zones), its sizes split across the zones as the groups' target
/// sizes are, and a zone whose share of the maximum is zero is left out; elsewhere the
/// group is `<ig>.<cluster>`.
fn node_groups(ctx: &ClusterContext) -> Result<Vec<(String, i64, i64, String)>> {
    let hetzner = ctx.cluster.spec.cloud_provider.hetzner.is_some();
    let gce_project = ctx
        .cluster
        .spec
        .cloud_provider
        .gce
        .as_ref()
        .map(|g| g.project.clone().unwrap_or_default());
    let mut out = Vec::new();
    for g in ctx
        .groups
        .iter()
        .filter(|g| g.spec.role == Some(InstanceGroupRole::Node) && g.spec.autoscale != Some(false))
    {
        let min = i64::from(g.spec.min_size.unwrap_or(0));
        let max = i64::from(g.spec.max_size.unwrap_or(0));
        if hetzner {
            // --nodes=min:max:<server type>:<location>:<group>; kOps names the location by
            // the group's first subnet.
            let location = g
                .spec
                .subnets
                .iter()
                .flatten()
                .next()
                .cloned()
                .unwrap_or_default();
            let server_type = g.spec.machine_type.clone().unwrap_or_default();
            out.push((
                g.name().to_owned(),
                min,
                max,
                format!("{server_type}:{location}:{}", g.name()),
            ));
            continue;
        }
        let Some(project) = &gce_project else {
            out.push((
                g.name().to_owned(),
                min,
                max,
                format!("{}.{}", g.name(), ctx.name()),
            ));
            continue;
        };
        let zones = g.spec.zones.clone().unwrap_or_default();
        if zones.is_empty() {
            return Err(invalid(
                format!("instancegroup {}: spec.zones", g.name()),
                "no zones found for the instance group (cluster-autoscaler needs one per managed instance group)",
            ));
        }
        let mins = crate::gce::compute::split_across(min, zones.len());
        let maxes = crate::gce::compute::split_across(max, zones.len());
        for ((zone, zmin), zmax) in zones.iter().zip(mins).zip(maxes) {
            if zones.len() > 1 && zmax == 0 {
                continue;
            }
            let key = if zones.len() > 1 {
                format!("{}-{zone}", g.name())
            } else {
                g.name().to_owned()
            };
            let mig = crate::gce::naming::instance_group_manager_name(ctx.name(), g.name(), zone);
            out.push((
                key,
                zmin,
                zmax,
                format!(
                    "{}projects/{project}/zones/{zone}/instanceGroups/{mig}",
                    kops_cloud_gce::cloud::COMPUTE_URL
                ),
            ));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

pub(super) fn objects(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let ca = ctx
        .cluster
        .spec
        .cluster_autoscaler
        .clone()
        .ok_or_else(|| invalid("spec.clusterAutoscaler", "not set"))?;
    let image = ca
        .image
        .clone()
        .ok_or_else(|| invalid("spec.clusterAutoscaler.image", "not set"))?;
    let irsa = super::irsa(ctx);
    let b = |v: Option<bool>| v.unwrap_or(false).to_string();
    let s = |v: &Option<String>| v.clone().unwrap_or_default();
    let expander = s(&ca.expander);
    let cloud = if ctx.cluster.spec.cloud_provider.aws.is_some() {
        "aws"
    } else if ctx.cluster.spec.cloud_provider.gce.is_some() {
        "gce"
    } else if ctx.cluster.spec.cloud_provider.hetzner.is_some() {
        "hetzner"
    } else {
        ""
    };
    let mut command = vec![
        "./cluster-autoscaler".to_owned(),
        format!(
            "--balance-similar-node-groups={}",
            b(ca.balance_similar_node_groups)
        ),
        format!(
            "--emit-per-nodegroup-metrics={}",
            b(ca.emit_per_nodegroup_metrics)
        ),
        format!("--cloud-provider={cloud}"),
    ];
    if cloud == "aws" {
        command.push(format!(
            "--aws-use-static-instance-list={}",
            b(ca.aws_use_static_instance_list)
        ));
    }
    command.push(format!("--expander={expander}"));
    for (_, min, max, group) in node_groups(ctx)? {
        command.push(format!("--nodes={min}:{max}:{group}"));
    }
    command.extend([
        format!(
            "--ignore-daemonsets-utilization={}",
            b(ca.ignore_daemon_sets_utilization)
        ),
        format!(
            "--scale-down-utilization-threshold={}",
            s(&ca.scale_down_utilization_threshold)
        ),
        format!(
            "--skip-nodes-with-custom-controller-pods={}",
            b(ca.skip_nodes_with_custom_controller_pods)
        ),
        format!(
            "--skip-nodes-with-local-storage={}",
            b(ca.skip_nodes_with_local_storage)
        ),
        format!(
            "--skip-nodes-with-system-pods={}",
            b(ca.skip_nodes_with_system_pods)
        ),
        format!(
            "--scale-down-delay-after-add={}",
            s(&ca.scale_down_delay_after_add)
        ),
        format!(
            "--scale-down-unneeded-time={}",
            s(&ca.scale_down_unneeded_time)
        ),
        format!(
            "--scale-down-unready-time={}",
            s(&ca.scale_down_unready_time)
        ),
        format!("--new-pod-scale-up-delay={}", s(&ca.new_pod_scale_up_delay)),
        format!(
            "--max-node-provision-time={}",
            s(&ca.max_node_provision_time)
        ),
        format!(
            "--cordon-node-before-terminating={}",
            ca.cordon_node_before_terminating.unwrap_or(true)
        ),
        "--logtostderr=true".to_owned(),
        "--stderrthreshold=info".to_owned(),
        "--v=4".to_owned(),
    ]);
    let q = |v: &Option<kops_api::v1alpha2::Quantity>, d: &str| {
        v.as_ref()
            .map_or_else(|| d.to_owned(), |q| q.as_str().to_owned())
    };
    let mut container = json!({
        "command": command,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "livenessProbe": {
            "failureThreshold": 3,
            "httpGet": {"path": "/health-check", "port": "http", "scheme": "HTTP"},
            "periodSeconds": 10,
            "successThreshold": 1,
            "timeoutSeconds": 1,
        },
        "name": NAME,
        "ports": [{"containerPort": 8085, "name": "http", "protocol": "TCP"}],
        "resources": {"requests": {"cpu": q(&ca.cpu_request, "100m"), "memory": q(&ca.memory_request, "300Mi")}},
    });
    if cloud == "aws" {
        container["env"] = json!([env("AWS_REGION", &ctx.region)]);
    }
    let mut annotations = json!({"prometheus.io/port": "8085", "prometheus.io/scrape": "true"});
    let hcloud_config = if cloud == "hetzner" {
        let config = super::cloud_hetzner::cluster_autoscaler_config(ctx)?;
        annotations["checksum/hcloud-cluster-config"] =
            json!(super::hex(&sha2::Sha256::digest(config.as_bytes())));
        let secret = |name: &str, key: &str| json!({ "name": name, "valueFrom": { "secretKeyRef": { "key": key, "name": "hcloud" } } });
        // The autoscaler takes the key by ID or name; kOps gives the ID, which is unknown
        // until the key exists (empty with the Terraform target), so its servers came up
        // without it. The name is known from the start; kOps' empty value only when the
        // files must be kOps' own.
        let ssh_key = if ctx.hcloud_kops_identical {
            String::new()
        } else {
            crate::hetzner::servers::ssh_key_name(ctx)?.unwrap_or_default()
        };
        container["env"] = json!([
            secret("HCLOUD_TOKEN", "token"),
            secret("HCLOUD_NETWORK", "network"),
            env("HCLOUD_SSH_KEY", &ssh_key),
            env("HCLOUD_PUBLIC_IPV4", "true"),
            env("HCLOUD_PUBLIC_IPV6", "false"),
            env(
                "HCLOUD_CLUSTER_CONFIG_FILE",
                "/etc/cluster-autoscaler/cluster-config.json"
            ),
        ]);
        container["volumeMounts"] = json!([
            { "mountPath": "/etc/cluster-autoscaler", "name": "hcloud-cluster-config", "readOnly": true }
        ]);
        Some(config)
    } else {
        None
    };
    for (k, v) in ca.pod_annotations.iter().flatten() {
        annotations[k] = v.clone().into();
    }
    let spread = |key: &str, when: &str| {
        json!({ "labelSelector": {"matchLabels": {"app": NAME}}, "maxSkew": 1,
            "topologyKey": key, "whenUnsatisfiable": when })
    };
    let mut pod = json!({
        "affinity": cp_affinity(),
        "containers": [container],
        "dnsPolicy": "ClusterFirst",
        "nodeSelector": null,
        "priorityClassName": "system-cluster-critical",
        "serviceAccountName": NAME,
        "topologySpreadConstraints": [
            spread("topology.kubernetes.io/zone", "ScheduleAnyway"),
            spread("kubernetes.io/hostname", "DoNotSchedule"),
        ],
    });
    if irsa {
        pod["affinity"] = json!({ "nodeAffinity": { "preferredDuringSchedulingIgnoredDuringExecution": [ {
            "preference": { "matchExpressions": [
                { "key": "node-role.kubernetes.io/spot-worker", "operator": "DoesNotExist" } ] },
            "weight": 1 } ] } });
    } else {
        pod["hostNetwork"] = true.into();
        pod["tolerations"] = cp_tolerations();
    }
    let mut deployment = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"labels": {"app.kubernetes.io/name": NAME, "k8s-app": NAME}, "name": NAME, "namespace": "kube-system"},
        "spec": {
            "replicas": controller_replicas(ctx),
            "selector": {"matchLabels": {"app": NAME}},
            "template": {
                "metadata": {
                    "annotations": annotations,
                    "labels": {"app": NAME, "app.kubernetes.io/name": NAME, "k8s-addon": "cluster-autoscaler.addons.k8s.io", "k8s-app": NAME},
                },
                "spec": pod,
            },
        },
    });
    if hcloud_config.is_some() {
        deployment["spec"]["template"]["spec"]["volumes"] = json!([
            { "configMap": { "name": "cluster-autoscaler-hcloud-config" }, "name": "hcloud-cluster-config" }
        ]);
    }
    if !irsa {
        deployment["spec"]["strategy"] =
            json!({"rollingUpdate": {"maxSurge": 0}, "type": "RollingUpdate"});
    }

    let l0 = json!({"app.kubernetes.io/name": NAME, "k8s-app": NAME});
    let mut out = vec![
        // PodDisruptionBudget cluster-autoscaler
        json!({
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"labels": l0, "name": "cluster-autoscaler", "namespace": "kube-system"},
            "spec": {
                "maxUnavailable": 1,
                "selector": {"matchLabels": {"k8s-app": "cluster-autoscaler"}},
            },
        }),
        labeled(
            automount(service_account("cluster-autoscaler", "kube-system"), true),
            &l0,
        ),
        labeled(
            role(
                "cluster-autoscaler",
                "",
                vec![
                    rule(&[""], &["events", "endpoints"], &["create", "patch"]),
                    rule(&[""], &["pods/eviction"], &["create"]),
                    rule(&[""], &["pods/status"], &["update"]),
                    named_rule(
                        &[""],
                        &["endpoints"],
                        &["cluster-autoscaler"],
                        &["get", "update"],
                    ),
                    rule(&[""], &["nodes"], &["watch", "list", "get", "update"]),
                    rule(
                        &["resource.k8s.io"],
                        &["resourceslices", "deviceclasses", "resourceclaims"],
                        &["watch", "list", "get"],
                    ),
                    rule(
                        &[""],
                        &[
                            "namespaces",
                            "pods",
                            "services",
                            "replicationcontrollers",
                            "persistentvolumeclaims",
                            "persistentvolumes",
                        ],
                        &["watch", "list", "get"],
                    ),
                    rule(&["batch"], &["jobs", "cronjobs"], &["watch", "list", "get"]),
                    rule(
                        &["batch", "extensions"],
                        &["jobs"],
                        &["get", "list", "patch", "watch"],
                    ),
                    rule(
                        &["extensions"],
                        &["replicasets", "daemonsets"],
                        &["watch", "list", "get"],
                    ),
                    rule(&["policy"], &["poddisruptionbudgets"], &["watch", "list"]),
                    rule(
                        &["apps"],
                        &["daemonsets", "replicasets", "statefulsets"],
                        &["watch", "list", "get"],
                    ),
                    rule(
                        &["storage.k8s.io"],
                        &[
                            "storageclasses",
                            "csinodes",
                            "csidrivers",
                            "csistoragecapacities",
                            "volumeattachments",
                        ],
                        &["watch", "list", "get"],
                    ),
                    rule(&[""], &["configmaps"], &["list", "watch", "get"]),
                    rule(&["coordination.k8s.io"], &["leases"], &["create"]),
                    named_rule(
                        &["coordination.k8s.io"],
                        &["leases"],
                        &["cluster-autoscaler"],
                        &["get", "update"],
                    ),
                ],
            ),
            &l0,
        ),
        labeled(
            binding(
                "cluster-autoscaler",
                "",
                "ClusterRole",
                "cluster-autoscaler",
                vec![sa_subject("cluster-autoscaler", "kube-system")],
            ),
            &l0,
        ),
        labeled(
            role(
                "cluster-autoscaler",
                "kube-system",
                vec![
                    rule(&[""], &["configmaps"], &["create"]),
                    named_rule(
                        &[""],
                        &["configmaps"],
                        &["cluster-autoscaler-status"],
                        &["delete", "get", "update"],
                    ),
                ],
            ),
            &l0,
        ),
        labeled(
            binding(
                "cluster-autoscaler",
                "kube-system",
                "Role",
                "cluster-autoscaler",
                vec![sa_subject("cluster-autoscaler", "kube-system")],
            ),
            &l0,
        ),
        // Service cluster-autoscaler
        json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"labels": l0, "name": "cluster-autoscaler", "namespace": "kube-system"},
            "spec": {
                "ports": [{"name": "http", "port": 8085, "protocol": "TCP", "targetPort": 8085}],
                "selector": {"app.kubernetes.io/name": "cluster-autoscaler"},
                "type": "ClusterIP",
            },
        }),
    ];
    if expander == "priority" && ca.create_priority_expander_config == Some(true) {
        out.push(json!({
            "apiVersion": "v1",
            "data": { "priorities": priorities(ctx, ca.custom_priority_expander_config.as_ref()) },
            "kind": "ConfigMap",
            "metadata": { "labels": l0, "name": "cluster-autoscaler-priority-expander", "namespace": "kube-system" },
        }));
    }
    if let Some(config) = hcloud_config {
        out.push(json!({
            "apiVersion": "v1",
            "data": { "cluster-config.json": config },
            "kind": "ConfigMap",
            "metadata": { "labels": l0, "name": "cluster-autoscaler-hcloud-config", "namespace": "kube-system" },
        }));
    }
    out.push(deployment);
    Ok(out)
}
