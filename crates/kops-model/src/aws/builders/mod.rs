//! kOps' AWS model builders: the cluster spec in, [`AwsTask`]s out.
//!
//! One module per builder, as in kOps' `pkg/model/awsmodel`: [`network`], [`firewall`]
//! (with external access), [`iam`], [`compute`] (SSH key, launch templates, autoscaling
//! groups, warm pools, etcd volumes), [`loadbalancer`] (API and bastion NLBs, DNS),
//! [`nth`] (node-termination-handler queue and rules) and [`files`] (state-store files).

pub mod compute;
pub mod files;
pub mod firewall;
pub mod iam;
pub mod loadbalancer;
pub mod network;
pub mod nth;

use std::collections::BTreeMap;

use kops_api::internal::{Cluster, InstanceGroup, InstanceGroupRole};
use kops_api::v1alpha2::ClusterSubnetSpec;
use kops_tasks::TaskKey;
use kops_tasks::terraform::Expr;

use super::cloud::{AccountInfo, HostedZone, Image, ResourceType};
use super::task::AwsTask;
use crate::error::{Error, Result};

/// Everything the builders need: the completed spec plus what was looked up in the cloud.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ModelContext {
    /// The populated (completed) cluster.
    pub cluster: Cluster,
    /// The populated instance groups.
    pub groups: Vec<InstanceGroup>,
    /// The region.
    pub region: String,
    /// The admin SSH public key (authorized_keys line), if any.
    pub ssh_public_key: Option<String>,
    /// Images resolved in the cloud, by the instance groups' `image` value.
    pub images: BTreeMap<String, Image>,
    /// The hosted zone of the cluster's DNS, when DNS is not `none`.
    pub dns_zone: Option<HostedZone>,
    /// The kOps version written to `kops-version.txt`.
    pub kops_version: String,
    /// Extra files to store with the cluster, by path relative to the config base.
    pub extra_files: BTreeMap<String, String>,
    /// Account, partition and region (for ARNs in policies).
    pub account: AccountInfo,
    /// The internet gateway attached to a shared VPC, when one was found.
    pub internet_gateway_id: Option<String>,
}

impl ModelContext {
    /// A context for a populated cluster and its groups in `region`.
    pub fn new(cluster: Cluster, groups: Vec<InstanceGroup>, region: impl Into<String>) -> Self {
        ModelContext {
            cluster,
            groups,
            region: region.into(),
            ssh_public_key: None,
            images: BTreeMap::new(),
            dns_zone: None,
            kops_version: "1.34.0-beta.1".to_owned(),
            extra_files: BTreeMap::new(),
            account: AccountInfo::default(),
            internet_gateway_id: None,
        }
    }

    /// Sets the admin SSH public key.
    pub fn with_ssh_public_key(mut self, key: impl Into<String>) -> Self {
        self.ssh_public_key = Some(key.into());
        self
    }

    /// Records a resolved image for an instance group `image` value.
    pub fn with_image(mut self, spec: impl Into<String>, image: Image) -> Self {
        self.images.insert(spec.into(), image);
        self
    }

    /// Sets the hosted zone.
    pub fn with_dns_zone(mut self, zone: HostedZone) -> Self {
        self.dns_zone = Some(zone);
        self
    }

    /// Sets the account information.
    pub fn with_account(mut self, account: AccountInfo) -> Self {
        self.account = account;
        self
    }

    /// Sets the internet gateway of a shared VPC.
    pub fn with_internet_gateway(mut self, id: impl Into<String>) -> Self {
        self.internet_gateway_id = Some(id.into());
        self
    }

    /// Sets the kOps version string.
    pub fn with_kops_version(mut self, v: impl Into<String>) -> Self {
        self.kops_version = v.into();
        self
    }

    /// The cluster name.
    pub fn name(&self) -> &str {
        self.cluster.name()
    }

    /// The spec's subnets.
    pub fn subnets(&self) -> &[ClusterSubnetSpec] {
        self.cluster
            .spec
            .networking
            .subnets
            .as_deref()
            .unwrap_or_default()
    }

    /// The subnet with this name.
    pub fn subnet(&self, name: &str) -> Option<&ClusterSubnetSpec> {
        self.subnets()
            .iter()
            .find(|s| s.name.as_deref() == Some(name))
    }

    /// Whether the VPC is shared (`networkID` set).
    pub fn shared_vpc(&self) -> bool {
        self.cluster.spec.networking.network_id.is_some()
    }

    /// Whether the cluster is IPv6-only (pods and services on IPv6).
    pub fn is_ipv6_only(&self) -> bool {
        self.cluster.spec.networking.is_ipv6_only()
    }

    /// The DNS topology (`Public`, `Private`, `None`).
    pub fn dns_type(&self) -> &str {
        self.cluster
            .spec
            .networking
            .topology
            .as_ref()
            .and_then(|t| t.dns.as_deref())
            .unwrap_or("Public")
    }

    /// Whether DNS is `None` (gossip-free, no Route53).
    pub fn dns_none(&self) -> bool {
        self.dns_type().eq_ignore_ascii_case("none") || self.name().ends_with(".k8s.local")
    }

    /// Whether the API has a load balancer.
    pub fn has_api_lb(&self) -> bool {
        self.cluster.spec.api.load_balancer.is_some()
    }

    /// The instance groups with a role.
    pub fn groups_with(&self, role: &InstanceGroupRole) -> impl Iterator<Item = &InstanceGroup> {
        self.groups
            .iter()
            .filter(move |g| g.spec.role.as_ref() == Some(role))
    }

    /// Whether some group has this role.
    pub fn has_role(&self, role: &InstanceGroupRole) -> bool {
        self.groups_with(role).next().is_some()
    }

    /// Whether a group is managed by Karpenter (no ASG).
    pub fn is_karpenter(ig: &InstanceGroup) -> bool {
        ig.spec.manager.as_deref() == Some("Karpenter")
    }

    /// `spec.cloudLabels`.
    pub fn cloud_labels(&self) -> BTreeMap<String, String> {
        self.cluster.spec.cloud_labels.clone().unwrap_or_default()
    }

    /// kOps' `CloudTags(name, shared=false)`: `Name`, `KubernetesCluster`, the owned
    /// cluster tag and the cluster's cloud labels.
    pub fn tags(&self, name: &str) -> BTreeMap<String, String> {
        let mut t = self.cloud_labels();
        t.insert("KubernetesCluster".into(), self.name().into());
        t.insert("Name".into(), name.into());
        t.insert(
            format!("kubernetes.io/cluster/{}", self.name()),
            "owned".into(),
        );
        t
    }

    /// Tags for a shared object: only the shared cluster tag.
    pub fn shared_tags(&self) -> BTreeMap<String, String> {
        let mut t = BTreeMap::new();
        t.insert(
            format!("kubernetes.io/cluster/{}", self.name()),
            "shared".into(),
        );
        t
    }

    /// `<name>.<cluster>`.
    pub fn scoped(&self, name: &str) -> String {
        format!("{name}.{}", self.name())
    }

    /// A new task for this cluster.
    pub fn task(&self, kind: &str, name: impl Into<String>, rt: ResourceType) -> AwsTask {
        AwsTask::new(kind, name, rt, self.name())
    }

    /// The security-group task key for a role.
    pub fn sg_key(&self, role: &InstanceGroupRole) -> TaskKey {
        TaskKey::new("SecurityGroup", self.sg_name(role))
    }

    /// The security-group name for a role.
    pub fn sg_name(&self, role: &InstanceGroupRole) -> String {
        match role {
            InstanceGroupRole::ControlPlane | InstanceGroupRole::ApiServer => {
                self.scoped("masters")
            }
            InstanceGroupRole::Bastion => self.scoped("bastion"),
            _ => self.scoped("nodes"),
        }
    }

    /// The VPC task key.
    pub fn vpc_key(&self) -> TaskKey {
        TaskKey::new("VPC", self.name())
    }

    /// The subnet task key.
    pub fn subnet_key(&self, subnet: &str) -> TaskKey {
        TaskKey::new("Subnet", self.scoped(subnet))
    }

    /// The IAM role short name for a group role (`masters`, `nodes`, `bastions`, ...).
    pub fn iam_role_prefix(role: &InstanceGroupRole) -> &'static str {
        match role {
            InstanceGroupRole::ControlPlane => "masters",
            InstanceGroupRole::ApiServer => "apiservers",
            InstanceGroupRole::Bastion => "bastions",
            _ => "nodes",
        }
    }

    /// The autoscaling-group / launch-template name of a group.
    pub fn group_resource_name(&self, ig: &InstanceGroup) -> String {
        match ig.spec.role {
            Some(InstanceGroupRole::ControlPlane) => {
                format!("{}.masters.{}", ig.name(), self.name())
            }
            Some(InstanceGroupRole::ApiServer) => {
                format!("{}.apiservers.{}", ig.name(), self.name())
            }
            _ => format!("{}.{}", ig.name(), self.name()),
        }
    }

    /// Whether node-termination-handler runs in queue mode (SQS + EventBridge).
    pub fn nth_queue_mode(&self) -> bool {
        let nth = self
            .cluster
            .spec
            .cloud_provider
            .aws
            .as_ref()
            .and_then(|a| a.node_termination_handler.as_ref());
        let enabled = nth.and_then(|n| n.enabled).unwrap_or(true);
        let sqs = nth
            .and_then(|n| n.enable_sqs_termination_draining)
            .unwrap_or(true);
        enabled && sqs && self.cluster.spec.karpenter.as_ref().and_then(|k| k.enabled) != Some(true)
    }

    /// The zones of a group (from its subnets).
    pub fn group_zones(&self, ig: &InstanceGroup) -> Vec<String> {
        let mut zones: Vec<String> = ig
            .spec
            .subnets
            .iter()
            .flatten()
            .filter_map(|s| self.subnet(s).and_then(|s| s.zone.clone()))
            .collect();
        if zones.is_empty() {
            zones = ig.spec.zones.clone().unwrap_or_default();
        }
        zones.dedup();
        zones
    }
}

/// A Terraform output (and `locals` entry) the model asks for.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum OutputValue {
    /// A single value.
    Single(Expr),
    /// One item of a list output (deduplicated and sorted).
    ListItem(Expr),
}

/// The model: tasks plus the Terraform outputs kOps writes.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct AwsModel {
    /// Every task.
    pub tasks: Vec<AwsTask>,
    /// Outputs by name.
    pub outputs: Vec<(String, OutputValue)>,
}

impl AwsModel {
    /// Adds a task.
    pub fn add(&mut self, t: AwsTask) {
        self.tasks.push(t);
    }

    /// Whether a task with this key exists.
    pub fn contains(&self, key: &TaskKey) -> bool {
        self.tasks.iter().any(|t| t.task_key() == key)
    }

    /// Adds a single-valued output.
    pub fn output(&mut self, name: impl Into<String>, e: impl Into<Expr>) {
        self.outputs
            .push((name.into(), OutputValue::Single(e.into())));
    }

    /// Adds an item to a list output.
    pub fn output_item(&mut self, name: impl Into<String>, e: impl Into<Expr>) {
        self.outputs
            .push((name.into(), OutputValue::ListItem(e.into())));
    }
}

/// Runs every AWS builder over the context.
pub fn build(ctx: &ModelContext) -> Result<AwsModel> {
    if ctx.name().is_empty() {
        return Err(Error::Invalid {
            field: "metadata.name".into(),
            message: "the cluster has no name".into(),
        });
    }
    let mut m = AwsModel::default();
    m.output("cluster_name", ctx.name());
    m.output("region", ctx.region.as_str());
    network::build(ctx, &mut m)?;
    firewall::build(ctx, &mut m)?;
    iam::build(ctx, &mut m)?;
    compute::build(ctx, &mut m)?;
    loadbalancer::build(ctx, &mut m)?;
    nth::build(ctx, &mut m)?;
    files::build(ctx, &mut m)?;
    // Several builders may ask for the same shared object; keep the first.
    let mut seen = std::collections::HashSet::new();
    m.tasks.retain(|t| seen.insert(t.task_key().clone()));
    Ok(m)
}
