//! `kops validate cluster`: kOps' checks of the nodes, instance groups and critical pods
//! (kOps' `pkg/validation/validate_cluster.go`), one call at a time or until valid.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use k8s_openapi::api::core::v1::{Node, Pod};
use kops_api::internal::{InstanceGroup, InstanceGroupRole};
use kube::api::{Api, ListParams};

use super::groups::{InstanceGroupCloud, MemberStatus};
use crate::{Error, Result};

/// One reason the cluster is not valid.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ValidationFailure {
    /// `InstanceGroup`, `Machine`, `Node` or `Pod` (kOps' kinds).
    #[serde(rename = "type")]
    pub kind: String,
    /// The group, instance, node or `namespace/pod`.
    pub name: String,
    /// What is wrong.
    pub message: String,
    /// The instance group it belongs to; `None` for cluster-wide failures (which block every
    /// group's roll).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_group: Option<String>,
}

impl ValidationFailure {
    /// A failure of `kind` about `name`, in instance group `ig` (`None`: cluster-wide).
    pub fn new(
        kind: &str,
        name: impl Into<String>,
        message: impl Into<String>,
        ig: Option<&str>,
    ) -> Self {
        ValidationFailure {
            kind: kind.into(),
            name: name.into(),
            message: message.into(),
            instance_group: ig.map(str::to_owned),
        }
    }
}

/// A node as validation reports it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ValidationNode {
    /// Node name.
    pub name: String,
    /// Its instance group's role (`control-plane`, `node`, ...).
    pub role: String,
    /// Its instance group.
    pub instance_group: Option<String>,
    /// `True` when Ready.
    pub status: String,
}

/// The result of one validation: valid when `failures` is empty.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ValidationCluster {
    /// Every failure found.
    pub failures: Vec<ValidationFailure>,
    /// The nodes that belong to an instance group.
    pub nodes: Vec<ValidationNode>,
}

impl ValidationCluster {
    /// No failures.
    pub fn is_valid(&self) -> bool {
        self.failures.is_empty()
    }

    /// Whether a failure blocks rolling `group` (kOps' `hasFailureRelevantToGroup`): a
    /// cluster-wide failure, one of a control-plane group, or one of `group` itself.
    pub fn has_failure_relevant_to(&self, group: &str, control_plane_groups: &[String]) -> bool {
        self.failures.iter().any(|f| match &f.instance_group {
            None => true,
            Some(ig) => ig == group || control_plane_groups.contains(ig),
        })
    }
}

/// Something that validates a cluster: [`Validator`], or a test's stand-in.
#[async_trait]
pub trait ClusterValidator: Send + Sync + fmt::Debug {
    /// One validation. `Err` means the cluster could not be validated (API unreachable,
    /// cloud error), not that it is invalid.
    async fn validate(&self) -> Result<ValidationCluster>;
}

/// Options of [`Validator`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ValidateOptions {
    /// `--max-unready-nodes`: up to this many not-ready worker members are tolerated.
    pub max_unready_nodes: usize,
    /// Leave out the checks of system-critical pods (pending, not ready): `reconcile
    /// cluster` waits this way for the API to be served after updating the control plane,
    /// before the cluster's pods have settled. The control plane's static pods are still
    /// checked.
    pub skip_pod_checks: bool,
}

impl ValidateOptions {
    /// Sets `max_unready_nodes`.
    pub fn with_max_unready_nodes(mut self, n: usize) -> Self {
        self.max_unready_nodes = n;
        self
    }

    /// Checks system-critical pods (the default) or not (see
    /// [`ValidateOptions::skip_pod_checks`]).
    pub fn with_pod_checks(mut self, check: bool) -> Self {
        self.skip_pod_checks = !check;
        self
    }
}

/// kOps' cluster validator over the Kubernetes API and the cloud.
pub struct Validator {
    client: kube::Client,
    cloud: Arc<dyn InstanceGroupCloud>,
    cluster: String,
    groups: Vec<InstanceGroup>,
    options: ValidateOptions,
}

impl fmt::Debug for Validator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Validator")
            .field("cluster", &self.cluster)
            .field("groups", &self.groups.len())
            .finish_non_exhaustive()
    }
}

fn role_name(role: Option<&InstanceGroupRole>) -> &'static str {
    match role {
        Some(InstanceGroupRole::ControlPlane) => "control-plane",
        Some(InstanceGroupRole::ApiServer) => "apiserver",
        Some(InstanceGroupRole::Bastion) => "bastion",
        // kOps reports a group without a role as `node`.
        Some(InstanceGroupRole::Node) | None => "node",
        Some(InstanceGroupRole::Unknown(_)) => "unknown",
    }
}

fn kube_err(operation: &str) -> impl FnOnce(kube::Error) -> Error + '_ {
    move |e| Error::Kubernetes {
        operation: operation.to_owned(),
        source: Box::new(e),
    }
}

/// The instance id in a node's `spec.providerID` (its last `/` segment).
pub(crate) fn instance_of(node: &Node) -> Option<String> {
    let p = node.spec.as_ref()?.provider_id.as_deref()?;
    p.rsplit('/')
        .next()
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// One registered node, as `get instances` shows it beside its machine.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct NodeOfInstance {
    /// The node's name.
    pub name: String,
    /// Whether it is ready (kOps' readiness).
    pub ready: bool,
}

/// The cluster's nodes by the machine each runs on (the last segment of its
/// `spec.providerID`, an AWS instance ID or a GCE instance name).
pub async fn nodes_by_instance(client: &kube::Client) -> Result<BTreeMap<String, NodeOfInstance>> {
    let nodes = Api::<Node>::all(client.clone())
        .list(&ListParams::default())
        .await
        .map_err(kube_err("listing nodes"))?;
    Ok(nodes
        .items
        .iter()
        .filter_map(|n| {
            let node = NodeOfInstance {
                name: n.metadata.name.clone()?,
                ready: is_ready(n),
            };
            Some((instance_of(n)?, node))
        })
        .collect())
}

/// The Kubernetes version the control plane runs: the oldest kubelet version of the
/// nodes labelled `node-role.kubernetes.io/control-plane` (kOps'
/// `checkControlPlaneRunningVersion`), for
/// [`crate::aws::DiscoverOptions::with_control_plane_version`]; `None` when there are
/// none.
pub async fn control_plane_version(client: &kube::Client) -> Result<Option<String>> {
    let nodes = Api::<Node>::all(client.clone())
        .list(&ListParams::default().labels("node-role.kubernetes.io/control-plane"))
        .await
        .map_err(kube_err("listing the control plane's nodes"))?;
    Ok(nodes
        .items
        .iter()
        // Checked here too: the selector is only a request.
        .filter(|n| {
            n.metadata
                .labels
                .as_ref()
                .is_some_and(|l| l.contains_key("node-role.kubernetes.io/control-plane"))
        })
        .filter_map(|n| n.status.as_ref()?.node_info.as_ref())
        .filter_map(|i| kops_api::version::parse_kubernetes_version(&i.kubelet_version))
        .min()
        .map(|v| v.to_string()))
}

fn condition(node: &Node, kind: &str) -> Option<String> {
    node.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind)
        .map(|c| c.status.clone())
}

/// kOps' readiness: `Ready=True` and not `NetworkUnavailable=True`.
pub(crate) fn is_ready(node: &Node) -> bool {
    condition(node, "Ready").as_deref() == Some("True")
        && condition(node, "NetworkUnavailable").as_deref() != Some("True")
}

impl Validator {
    /// A validator for `cluster` with its instance groups.
    pub fn new(
        client: kube::Client,
        cloud: Arc<dyn InstanceGroupCloud>,
        cluster: impl Into<String>,
        groups: Vec<InstanceGroup>,
        options: ValidateOptions,
    ) -> Self {
        Validator {
            client,
            cloud,
            cluster: cluster.into(),
            groups,
            options,
        }
    }
}

#[async_trait]
impl ClusterValidator for Validator {
    async fn validate(&self) -> Result<ValidationCluster> {
        let nodes = Api::<Node>::all(self.client.clone())
            .list(&ListParams::default())
            .await
            .map_err(kube_err("listing nodes"))?
            .items;
        let cloud_groups = self.cloud.cloud_groups(&self.cluster, &self.groups).await?;
        let pods = Api::<Pod>::all(self.client.clone())
            .list(&ListParams::default())
            .await
            .map_err(kube_err("listing pods"))?
            .items;
        Ok(evaluate(
            &self.groups,
            &cloud_groups,
            &nodes,
            &pods,
            &self.options,
        ))
    }
}

/// The checks themselves, over one snapshot of groups, nodes and pods.
pub fn evaluate(
    groups: &[InstanceGroup],
    cloud_groups: &[super::groups::CloudGroup],
    nodes: &[Node],
    pods: &[Pod],
    options: &ValidateOptions,
) -> ValidationCluster {
    let mut out = ValidationCluster::default();
    let by_instance: BTreeMap<String, &Node> = nodes
        .iter()
        .filter_map(|n| instance_of(n).map(|i| (i, n)))
        .collect();
    let role_of = |ig: &str| {
        groups
            .iter()
            .find(|g| g.name() == ig)
            .and_then(|g| g.spec.role.as_ref())
    };

    // Tolerance: not-ready members of worker groups.
    let mut unready: Vec<(String, Option<String>)> = Vec::new();
    for cg in cloud_groups {
        if role_of(&cg.instance_group) != Some(&InstanceGroupRole::Node) {
            continue;
        }
        for m in cg
            .members
            .iter()
            .filter(|m| m.status != MemberStatus::Detached && !m.warm_pool)
        {
            match by_instance.get(&m.id) {
                Some(n) if is_ready(n) => {}
                Some(n) => unready.push((m.id.clone(), n.metadata.name.clone())),
                None => unready.push((m.id.clone(), None)),
            }
        }
    }
    let tolerated: BTreeSet<String> =
        if !unready.is_empty() && unready.len() <= options.max_unready_nodes {
            unready
                .iter()
                .flat_map(|(i, n)| std::iter::once(i.clone()).chain(n.clone()))
                .collect()
        } else {
            BTreeSet::new()
        };

    for cg in cloud_groups {
        let ig = cg.instance_group.as_str();
        let role = role_of(ig);
        let attached = cg
            .members
            .iter()
            .filter(|m| m.status != MemberStatus::Detached)
            .count();
        if (attached as i64) < i64::from(cg.target_size) {
            out.failures.push(ValidationFailure::new(
                "InstanceGroup",
                ig,
                format!(
                    "InstanceGroup \"{ig}\" did not have enough nodes {attached} vs {}",
                    cg.target_size
                ),
                Some(ig),
            ));
        }
        for m in &cg.members {
            let Some(node) = by_instance.get(&m.id) else {
                if role != Some(&InstanceGroupRole::Bastion)
                    && m.status != MemberStatus::Detached
                    && !m.warm_pool
                    && !tolerated.contains(&m.id)
                {
                    out.failures.push(ValidationFailure::new(
                        "Machine",
                        &m.id,
                        format!("machine \"{}\" has not yet joined cluster", m.id),
                        Some(ig),
                    ));
                }
                continue;
            };
            let name = node.metadata.name.clone().unwrap_or_default();
            let ready = is_ready(node);
            out.nodes.push(ValidationNode {
                name: name.clone(),
                role: role_name(role).into(),
                instance_group: Some(ig.to_owned()),
                status: if ready { "True" } else { "False" }.into(),
            });
            let checked = matches!(
                role,
                None | Some(
                    InstanceGroupRole::ControlPlane
                        | InstanceGroupRole::ApiServer
                        | InstanceGroupRole::Node
                )
            );
            if !ready && checked && !tolerated.contains(&name) {
                out.failures.push(ValidationFailure::new(
                    "Node",
                    &name,
                    format!(
                        "node \"{name}\" of role \"{}\" is not ready",
                        role_name(role)
                    ),
                    Some(ig),
                ));
            }
        }
    }
    for g in groups {
        if !cloud_groups.iter().any(|c| c.instance_group == g.name()) {
            out.failures.push(ValidationFailure::new(
                "InstanceGroup",
                g.name(),
                format!(
                    "InstanceGroup \"{}\" is missing from the cloud provider",
                    g.name()
                ),
                Some(g.name()),
            ));
        }
    }

    let out_nodes_ig: BTreeMap<String, String> = out
        .nodes
        .iter()
        .filter_map(|n| Some((n.name.clone(), n.instance_group.clone()?)))
        .collect();
    // Static control-plane pods on every ready control-plane node.
    let pod_node = |p: &Pod| p.spec.as_ref().and_then(|s| s.node_name.clone());
    for n in nodes {
        let labels = n.metadata.labels.clone().unwrap_or_default();
        let cp = labels.contains_key("node-role.kubernetes.io/control-plane")
            || labels.contains_key("node-role.kubernetes.io/master");
        if !cp || !is_ready(n) {
            continue;
        }
        let name = n.metadata.name.clone().unwrap_or_default();
        let ig = out_nodes_ig
            .get(&name)
            .cloned()
            .or_else(|| labels.get("kops.k8s.io/instancegroup").cloned());
        for app in [
            "kube-apiserver",
            "kube-controller-manager",
            "kube-scheduler",
        ] {
            let found = pods.iter().any(|p| {
                p.metadata.namespace.as_deref() == Some("kube-system")
                    && pod_node(p).as_deref() == Some(name.as_str())
                    && p.metadata
                        .labels
                        .as_ref()
                        .and_then(|l| l.get("k8s-app"))
                        .map(String::as_str)
                        == Some(app)
            });
            if !found {
                out.failures.push(ValidationFailure::new(
                    "Node",
                    &name,
                    format!("control-plane node \"{name}\" is missing {app} pod"),
                    ig.as_deref(),
                ));
            }
        }
    }

    // Critical pods.
    // A node's group is the cloud group it is a member of (as kOps maps it), else its
    // `kops.k8s.io/instancegroup` label.
    let ig_of_node = |node: &str| {
        out_nodes_ig.get(node).cloned().or_else(|| {
            nodes
                .iter()
                .find(|n| n.metadata.name.as_deref() == Some(node))
                .and_then(|n| {
                    n.metadata
                        .labels
                        .as_ref()?
                        .get("kops.k8s.io/instancegroup")
                        .cloned()
                })
        })
    };
    for p in pods.iter().filter(|_| !options.skip_pod_checks) {
        let priority = p
            .spec
            .as_ref()
            .and_then(|s| s.priority_class_name.as_deref());
        let node_critical = priority == Some("system-node-critical");
        if priority != Some("system-cluster-critical") && !node_critical {
            continue;
        }
        let node = pod_node(p);
        if node.as_ref().is_some_and(|n| tolerated.contains(n)) {
            continue;
        }
        let status = p.status.clone().unwrap_or_default();
        let phase = status.phase.as_deref().unwrap_or("Unknown");
        if phase == "Succeeded" {
            continue;
        }
        let name = format!(
            "{}/{}",
            p.metadata.namespace.as_deref().unwrap_or("default"),
            p.metadata.name.as_deref().unwrap_or("")
        );
        let prio = priority.unwrap_or_default();
        // kOps names the pod `namespace/name` but its message quotes the name alone.
        let short = p.metadata.name.as_deref().unwrap_or("");
        let message = match phase {
            "Pending" => Some(format!("{prio} pod \"{short}\" is pending")),
            "Unknown" => Some(format!("{prio} pod \"{short}\" is unknown phase")),
            _ => {
                let not_ready: Vec<String> = status
                    .container_statuses
                    .iter()
                    .flatten()
                    .filter(|c| !c.ready)
                    .map(|c| c.name.clone())
                    .collect();
                let cond_not_ready = status.container_statuses.is_none()
                    && status
                        .conditions
                        .iter()
                        .flatten()
                        .any(|c| c.type_ == "Ready" && c.status != "True");
                if !not_ready.is_empty() {
                    Some(format!(
                        "{prio} pod \"{short}\" is not ready ({})",
                        not_ready.join(",")
                    ))
                } else if cond_not_ready {
                    Some(format!("{prio} pod \"{short}\" is not ready"))
                } else {
                    None
                }
            }
        };
        if let Some(message) = message {
            let ig = if node_critical {
                node.as_deref().and_then(ig_of_node)
            } else {
                None
            };
            out.failures
                .push(ValidationFailure::new("Pod", name, message, ig.as_deref()));
        }
    }
    out
}

/// How [`validate_until`] repeats.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RepeatOptions {
    /// Give up after this long (`--wait`; zero: one attempt).
    pub timeout: Duration,
    /// Consecutive successes needed (`--count`; 0 acts as 1).
    pub count: u32,
    /// Pause after a failed attempt.
    pub interval: Duration,
    /// Pause after a successful one, before the next.
    pub success_interval: Duration,
}

impl Default for RepeatOptions {
    fn default() -> Self {
        RepeatOptions {
            timeout: Duration::ZERO,
            count: 1,
            interval: Duration::from_secs(10),
            success_interval: Duration::from_secs(10),
        }
    }
}

impl RepeatOptions {
    /// One attempt, or until `timeout`, needing `count` consecutive successes.
    pub fn new(timeout: Duration, count: u32) -> Self {
        RepeatOptions {
            timeout,
            count,
            ..Default::default()
        }
    }

    /// Sets both pauses.
    pub fn with_intervals(mut self, failed: Duration, succeeded: Duration) -> Self {
        self.interval = failed;
        self.success_interval = succeeded;
        self
    }
}

/// Validates until `count` consecutive attempts succeed (a failure resets the count) or
/// `timeout` passes; calls `on_attempt` with each attempt. Errors are retried only while
/// there is time left. Returns the last attempt: `Ok` with failures when time ran out on an
/// invalid cluster, `Err` when the last attempt could not validate.
pub async fn validate_until(
    validator: &dyn ClusterValidator,
    options: &RepeatOptions,
    mut on_attempt: impl FnMut(&Result<ValidationCluster>) + Send,
) -> Result<ValidationCluster> {
    let deadline = tokio::time::Instant::now() + options.timeout;
    let needed = options.count.max(1);
    let mut successes = 0;
    loop {
        let attempt = validator.validate().await;
        on_attempt(&attempt);
        let ok = matches!(&attempt, Ok(v) if v.is_valid());
        successes = if ok { successes + 1 } else { 0 };
        if successes >= needed {
            return attempt;
        }
        let pause = if ok {
            options.success_interval
        } else {
            options.interval
        };
        if tokio::time::Instant::now() + pause > deadline {
            return attempt;
        }
        tokio::time::sleep(pause).await;
    }
}
