//! Instance groups: machine type, sizes, image, subnets, GPU labels and the
//! kubelet (kOps' `PopulateInstanceGroupSpec` in
//! `upup/pkg/fi/cloudup/populate_instancegroup_spec.go`, `defaultMachineType`,
//! and the kubelet merge of `pkg/model/components/kubelet.go` /
//! nodeup's `BuildKubeletConfigSpec`), and the effective root volume.

use super::{PopulateOptions, populate_error};
use crate::Result;
use crate::channel::Architecture;
use crate::internal::{
    CloudProvider, Cluster, InstanceGroup, InstanceGroupRole, InstanceRootVolumeSpec,
};
use crate::v1alpha2 as v;
use crate::version::parse_kubernetes_version;

/// The CPU architecture of a machine type (ARM: AWS Graviton families such
/// as `m7g`, `t4g`, `c7gn`, `a1`; GCE `t2a`, `c4a`, `n4a`; everything else amd64).
pub fn machine_architecture(provider: Option<CloudProvider>, machine_type: &str) -> Architecture {
    let first = machine_type.split(',').next().unwrap_or("");
    match provider {
        Some(CloudProvider::Gce) => {
            let family = first.split('-').next().unwrap_or("");
            if matches!(family, "t2a" | "c4a" | "n4a") {
                Architecture::Arm64
            } else {
                Architecture::Amd64
            }
        }
        _ => {
            let family = first.split('.').next().unwrap_or("");
            if family == "a1" {
                return Architecture::Arm64;
            }
            // Family = letters, generation digits, then attribute letters ("m7gd").
            let attrs: String = family
                .trim_start_matches(|c: char| c.is_ascii_alphabetic())
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .to_string();
            if attrs.contains('g') && !family.starts_with('g') && !family.starts_with("p") {
                Architecture::Arm64
            } else {
                Architecture::Amd64
            }
        }
    }
}

fn default_machine_type(
    provider: Option<CloudProvider>,
    role: Option<&InstanceGroupRole>,
) -> Option<&'static str> {
    let bastion = role == Some(&InstanceGroupRole::Bastion);
    match provider {
        Some(CloudProvider::Aws) => Some(if bastion { "t3.micro" } else { "t3.medium" }),
        Some(CloudProvider::Gce) => Some(if bastion { "e2-micro" } else { "e2-medium" }),
        Some(CloudProvider::Hetzner) => Some("cx23"),
        _ => None,
    }
}

/// Completes an instance group as kOps' `PopulateInstanceGroupSpec` does,
/// for a cluster that has been populated.
pub fn populate_instance_group(
    cluster: &Cluster,
    input: &InstanceGroup,
    opts: &PopulateOptions,
) -> Result<InstanceGroup> {
    let mut ig = input.clone();
    let name = ig.name().to_string();
    let provider = cluster.spec.cloud_provider.provider();
    let role = ig.spec.role.clone();
    let Some(role_v) = role.clone() else {
        return Err(populate_error(
            "spec.role",
            format!("instance group {name:?} has no role"),
        ));
    };

    let karpenter = ig.spec.manager.as_deref() == Some("Karpenter");
    // Karpenter picks the machine types of its AWS groups itself: none by default.
    let karpenter_on_aws = karpenter && provider == Some(CloudProvider::Aws);
    if ig.spec.machine_type.is_none() && !karpenter_on_aws {
        ig.spec.machine_type = default_machine_type(provider, Some(&role_v)).map(str::to_string);
    }
    let (min, max) = match role_v {
        InstanceGroupRole::ControlPlane | InstanceGroupRole::Bastion => (Some(1), Some(1)),
        _ if karpenter => (None, None),
        _ => (Some(2), Some(2)),
    };
    if ig.spec.min_size.is_none() {
        ig.spec.min_size = min;
    }
    if ig.spec.max_size.is_none() {
        ig.spec.max_size = max;
    }

    if ig.spec.image.is_none() {
        ig.spec.image = Some(default_image(cluster, &ig, opts)?);
    }
    if ig.spec.subnets.as_ref().is_none_or(|s| s.is_empty()) {
        ig.spec.subnets = Some(default_subnets(cluster, &name, &role_v)?);
    }
    if ig.spec.manager.is_none() {
        ig.spec.manager = Some("CloudGroup".to_string());
    }
    if provider == Some(CloudProvider::Aws) {
        add_gpu_label_and_taint(cluster, &mut ig);
    }
    // APIServer groups need kOps' APIServerNodes feature, which also labels
    // the control plane as an API server.
    let api_server_nodes = opts
        .instance_groups
        .iter()
        .any(|g| g.spec.role == Some(InstanceGroupRole::ApiServer));
    ig.spec.kubelet = Some(instance_group_kubelet(cluster, &ig, api_server_nodes)?);
    Ok(ig)
}

/// The image for a group that names none: the channel's image for the cloud,
/// the Kubernetes version and the machine's architecture (Ubuntu 24.04 on
/// Hetzner, which channels do not list).
fn default_image(cluster: &Cluster, ig: &InstanceGroup, opts: &PopulateOptions) -> Result<String> {
    let name = ig.name();
    let provider = cluster.spec.cloud_provider.provider();
    let channel = opts.channel.as_ref().ok_or_else(|| {
        populate_error(
            "spec.image",
            format!("instance group {name:?} has no image and no channel was given to choose one"),
        )
    })?;
    let version = cluster
        .spec
        .kubernetes_version
        .as_deref()
        .and_then(parse_kubernetes_version)
        .ok_or_else(|| {
            populate_error(
                "spec.kubernetesVersion",
                "the cluster has no valid Kubernetes version",
            )
        })?;
    let arch = machine_architecture(provider, ig.spec.machine_type.as_deref().unwrap_or(""));
    let p = provider.map(|p| p.as_str()).unwrap_or("");
    // Channels list no Hetzner images: kOps takes Ubuntu 24.04 there.
    let fallback = (provider == Some(CloudProvider::Hetzner)).then_some("ubuntu-24.04");
    let image = channel
        .find_image(p, &version, arch)
        .map(|i| i.name.clone())
        .or_else(|| fallback.map(str::to_owned))
        .ok_or_else(|| {
            populate_error(
                "spec.image",
                format!("the channel has no {} image for {p} and Kubernetes {version}; set spec.image for instance group {name:?}", arch.as_str()),
            )
        })?;
    Ok(image)
}

/// The subnets for a group that names none (a control-plane group must):
/// every subnet but Utility ones (and DualStack ones, or Private ones for
/// API servers on IPv6), else every subnet but Utility ones.
fn default_subnets(
    cluster: &Cluster,
    name: &str,
    role_v: &InstanceGroupRole,
) -> Result<Vec<String>> {
    let subnets = cluster.spec.networking.subnets.as_deref().unwrap_or(&[]);
    if *role_v == InstanceGroupRole::ControlPlane {
        return Err(populate_error(
            "spec.subnets",
            format!("control-plane instance group {name:?} must name its subnets"),
        ));
    }
    let pick = |skip: &[&str]| -> Vec<String> {
        subnets
            .iter()
            .filter(|s| !skip.contains(&s.type_.as_deref().unwrap_or("")))
            .filter_map(|s| s.name.clone())
            .collect()
    };
    let mut chosen =
        if *role_v == InstanceGroupRole::ApiServer && cluster.spec.networking.is_ipv6_only() {
            pick(&["Private", "Utility"])
        } else {
            pick(&["DualStack", "Utility"])
        };
    if chosen.is_empty() {
        chosen = pick(&["Utility"]);
    }
    if chosen.is_empty() {
        return Err(populate_error(
            "spec.subnets",
            format!(
                "cannot choose subnets for instance group {name:?}: the cluster has no Public or Private subnet"
            ),
        ));
    }
    Ok(chosen)
}

/// AWS GPU machines, with the NVIDIA runtime on, get a label and a taint
/// (kOps asks EC2 whether the type has GPUs; here the instance family tells).
fn add_gpu_label_and_taint(cluster: &Cluster, ig: &mut InstanceGroup) {
    let nvidia = |c: &Option<v::ContainerdConfig>| {
        c.as_ref()
            .and_then(|c| c.nvidia_gpu.as_ref())
            .and_then(|n| n.enabled)
            == Some(true)
    };
    if (nvidia(&cluster.spec.containerd) || nvidia(&ig.spec.containerd))
        && is_aws_gpu_machine_type(ig.spec.machine_type.as_deref().unwrap_or(""))
    {
        ig.spec
            .node_labels
            .get_or_insert_with(Default::default)
            .insert("kops.k8s.io/gpu".to_string(), "1".to_string());
        let taints = ig.spec.taints.get_or_insert_with(Vec::new);
        if !taints.iter().any(|t| t.starts_with("nvidia.com/gpu")) {
            taints.push("nvidia.com/gpu:NoSchedule".to_string());
        }
    }
}

/// Recursively overlays `overlay` on `base` as a JSON merge of Go structs
/// does: objects merge key by key, everything else (including lists) is
/// replaced.
fn json_merge(base: &mut serde_json::Value, overlay: &serde_json::Value) {
    match (base, overlay) {
        (serde_json::Value::Object(b), serde_json::Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(k) {
                    Some(existing) => json_merge(existing, v),
                    None => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (b, o) => *b = o.clone(),
    }
}

fn merge_kubelet(
    base: &v::KubeletConfigSpec,
    overlay: &v::KubeletConfigSpec,
) -> Result<v::KubeletConfigSpec> {
    let fail = |e: serde_json::Error| {
        populate_error("spec.kubelet", format!("merging kubelet settings: {e}"))
    };
    let mut b = serde_json::to_value(base).map_err(fail)?;
    let o = serde_json::to_value(overlay).map_err(fail)?;
    json_merge(&mut b, &o);
    serde_json::from_value(b).map_err(fail)
}

/// Whether an AWS instance type has GPUs, by its family (`p3`, `g4dn`,
/// `g5g`, `gr6`, ...); for a mixed list, the first type decides.
pub fn is_aws_gpu_machine_type(machine_type: &str) -> bool {
    let first = machine_type.split(',').next().unwrap_or("").trim();
    let family = first.split('.').next().unwrap_or("");
    let letters: String = family
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    let rest = &family[letters.len()..];
    matches!(letters.as_str(), "p" | "g" | "gr") && rest.starts_with(|c: char| c.is_ascii_digit())
}

/// The kubelet settings of an instance group: the cluster's kubelet (or
/// control-plane kubelet) with the group's own settings on top, the role's
/// node labels and taints added.
fn instance_group_kubelet(
    cluster: &Cluster,
    ig: &InstanceGroup,
    api_server_nodes: bool,
) -> Result<v::KubeletConfigSpec> {
    let cp = ig.is_control_plane();
    let role = ig.spec.role.clone();
    let spec = &cluster.spec;
    let mut base = if cp {
        spec.master_kubelet.clone().unwrap_or_default()
    } else {
        spec.kubelet.clone().unwrap_or_default()
    };
    if cp && spec.kubelet.as_ref().and_then(|k| k.anonymous_auth) == Some(false) {
        base.anonymous_auth = Some(false);
    }
    let own = ig.spec.kubelet.clone().unwrap_or_default();

    // Node labels: kubelet labels, role labels, then the group's nodeLabels.
    let mut labels = merge_kubelet(&base, &own)?.node_labels.unwrap_or_default();
    match role {
        Some(InstanceGroupRole::ControlPlane) => {
            for l in [
                "node-role.kubernetes.io/control-plane",
                "kops.k8s.io/kops-controller-pki",
                "node.kubernetes.io/exclude-from-external-load-balancers",
            ] {
                labels.insert(l.to_string(), String::new());
            }
            if api_server_nodes {
                labels.insert(
                    "node-role.kubernetes.io/api-server".to_string(),
                    String::new(),
                );
            }
        }
        Some(InstanceGroupRole::ApiServer) => {
            labels.insert(
                "node-role.kubernetes.io/api-server".to_string(),
                String::new(),
            );
        }
        Some(InstanceGroupRole::Node) => {
            labels.insert("node-role.kubernetes.io/node".to_string(), String::new());
        }
        _ => {}
    }
    for (k, val) in ig.spec.node_labels.iter().flatten() {
        labels.insert(k.clone(), val.clone());
    }

    let secure = base.anonymous_auth == Some(true);
    let mut taints: std::collections::BTreeSet<String> =
        base.taints.iter().flatten().cloned().collect();
    taints.extend(ig.spec.taints.iter().flatten().cloned());
    taints.extend(own.taints.iter().flatten().cloned());
    taints.extend(
        spec.kubelet
            .as_ref()
            .and_then(|k| k.taints.clone())
            .unwrap_or_default(),
    );
    let mut k = merge_kubelet(&base, &own)?;
    match role {
        Some(InstanceGroupRole::ControlPlane) => {
            taints.insert("node-role.kubernetes.io/control-plane=:NoSchedule".to_string());
        }
        Some(InstanceGroupRole::ApiServer) => {
            taints.insert("node-role.kubernetes.io/api-server=:NoSchedule".to_string());
        }
        _ => {}
    }
    if ig.spec.manager.as_deref() == Some("Karpenter") {
        taints.insert("karpenter.sh/unregistered=:NoExecute".to_string());
    }
    k.node_labels = (!labels.is_empty()).then_some(labels);
    k.taints = (!taints.is_empty()).then(|| taints.into_iter().collect());
    if secure {
        k.anonymous_auth = Some(false);
    }
    Ok(k)
}

/// The effective root volume of an instance group: what it sets, else kOps'
/// defaults (64 GB for the control plane, 32 GB for bastions, 128 GB for
/// nodes; `gp3` with 3000 IOPS and 125 MB/s on AWS, `pd-standard` on GCE).
pub fn root_volume(cluster: &Cluster, ig: &InstanceGroup) -> InstanceRootVolumeSpec {
    let mut rv = ig.spec.root_volume.clone().unwrap_or_default();
    let provider = cluster.spec.cloud_provider.provider();
    if rv.size.is_none() {
        rv.size = Some(match ig.spec.role {
            Some(InstanceGroupRole::ControlPlane) => 64,
            Some(InstanceGroupRole::Bastion) => 32,
            _ => 128,
        });
    }
    match provider {
        Some(CloudProvider::Aws) => {
            let t = rv.type_.get_or_insert_with(|| "gp3".to_string()).clone();
            if t == "gp3" {
                rv.iops.get_or_insert(3000);
                rv.throughput.get_or_insert(125);
            }
        }
        Some(CloudProvider::Gce) => {
            rv.type_.get_or_insert_with(|| "pd-standard".to_string());
        }
        _ => {}
    }
    rv
}
