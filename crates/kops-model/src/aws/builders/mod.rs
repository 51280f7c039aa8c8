//! kOps' AWS model builders: the cluster spec in, [`AwsTask`]s out.
//!
//! One private module per builder, as in kOps' `pkg/model/awsmodel`: network, firewall
//! (with external access), IAM, compute (SSH key, launch templates, autoscaling groups,
//! warm pools, etcd volumes), load balancers (API and bastion NLBs, DNS),
//! node-termination-handler (queue and rules) and files (how the AWS Terraform target
//! renders the cluster's managed files).

pub(crate) mod compute;
pub(crate) mod files;
pub(crate) mod firewall;
pub(crate) mod iam;
pub(crate) mod loadbalancer;
pub(crate) mod network;
pub(crate) mod nth;

use std::collections::BTreeMap;

use std::sync::Arc;

use kops_api::internal::{Cluster, InstanceGroup, InstanceGroupRole};
use kops_statestore::Store;
use kops_tasks::terraform::Expr;
use kops_tasks::{Task, TaskKey};

use crate::cluster::ClusterContext;

use super::cloud::{AccountInfo, AwsCloud, HostedZone, Image, ResourceType};
use super::task::AwsTask;
use crate::error::{Error, Result};

/// Everything the AWS builders need: the cloud-neutral [`ClusterContext`] plus what was
/// looked up in AWS (kOps' `AWSModelContext`, which embeds its `KopsModelContext`).
///
/// It dereferences to its [`ClusterContext`], so `ctx.cluster`, `ctx.groups` and the
/// cluster helpers read the same through either.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ModelContext {
    /// The cloud-neutral part.
    pub cluster_context: ClusterContext,
    /// Images resolved in the cloud, by the instance groups' `image` value.
    pub images: BTreeMap<String, Image>,
    /// The hosted zone of the cluster's DNS, when DNS is not `none`.
    pub dns_zone: Option<HostedZone>,
    /// Account, partition and region (for ARNs in policies).
    pub account: AccountInfo,
    /// The internet gateway attached to a shared VPC, when one was found.
    pub internet_gateway_id: Option<String>,
    /// The egress-only internet gateway attached to a shared VPC, when one was found.
    pub egress_only_internet_gateway_id: Option<String>,
}

impl std::ops::Deref for ModelContext {
    type Target = ClusterContext;

    fn deref(&self) -> &ClusterContext {
        &self.cluster_context
    }
}

impl std::ops::DerefMut for ModelContext {
    fn deref_mut(&mut self) -> &mut ClusterContext {
        &mut self.cluster_context
    }
}

impl ModelContext {
    /// A context for a populated cluster and its groups in `region`, nothing looked up yet.
    pub fn new(cluster: Cluster, groups: Vec<InstanceGroup>, region: impl Into<String>) -> Self {
        ModelContext::from_cluster_context(ClusterContext::new(cluster, groups, region))
    }

    /// A context over a cloud-neutral one, nothing looked up yet.
    pub fn from_cluster_context(cluster_context: ClusterContext) -> Self {
        ModelContext {
            cluster_context,
            images: BTreeMap::new(),
            dns_zone: None,
            account: AccountInfo::default(),
            internet_gateway_id: None,
            egress_only_internet_gateway_id: None,
        }
    }

    /// Sets the admin SSH public key.
    pub fn with_ssh_public_key(mut self, key: impl Into<String>) -> Self {
        self.cluster_context.ssh_public_key = Some(key.into());
        self
    }

    /// Records a resolved image for an instance group `image` value.
    pub fn with_image(mut self, spec: impl Into<String>, image: Image) -> Self {
        let spec = spec.into();
        self.cluster_context
            .aws_root_devices
            .insert(spec.clone(), image.root_device_name.clone());
        self.images.insert(spec, image);
        self
    }

    /// Sets the hosted zone.
    pub fn with_dns_zone(mut self, zone: HostedZone) -> Self {
        self.dns_zone = Some(zone);
        self
    }

    /// Sets the account information.
    pub fn with_account(mut self, account: AccountInfo) -> Self {
        self.cluster_context.aws_account =
            Some((account.partition.clone(), account.account_id.clone()));
        self.account = account;
        self
    }

    /// Sets the internet gateway of a shared VPC.
    pub fn with_internet_gateway(mut self, id: impl Into<String>) -> Self {
        self.internet_gateway_id = Some(id.into());
        self
    }

    /// Sets the egress-only internet gateway of a shared VPC.
    pub fn with_egress_only_internet_gateway(mut self, id: impl Into<String>) -> Self {
        self.egress_only_internet_gateway_id = Some(id.into());
        self
    }

    /// Sets the kOps release (see [`crate::DEFAULT_KOPS_RELEASE`]).
    pub fn with_kops_release(mut self, release: impl Into<String>) -> Self {
        self.cluster_context.kops_release = release.into();
        self
    }

    /// Sets the store rooted at the cluster's config base (where managed files go).
    pub fn with_config_store(mut self, store: Arc<dyn Store>) -> Self {
        self.cluster_context.config_store = Some(store);
        self
    }

    /// A new task for this cluster.
    pub(crate) fn task(&self, kind: &str, name: impl Into<String>, rt: ResourceType) -> AwsTask {
        AwsTask::new(kind, name, rt, self.name())
    }

    /// The security-group task key for a role.
    pub(crate) fn sg_key(&self, role: &InstanceGroupRole) -> TaskKey {
        TaskKey::new("SecurityGroup", self.sg_name(role))
    }

    /// The security-group name for a role.
    pub(crate) fn sg_name(&self, role: &InstanceGroupRole) -> String {
        match role {
            InstanceGroupRole::ControlPlane | InstanceGroupRole::ApiServer => {
                self.scoped("masters")
            }
            InstanceGroupRole::Bastion => self.scoped("bastion"),
            _ => self.scoped("nodes"),
        }
    }

    /// The VPC task key.
    pub(crate) fn vpc_key(&self) -> TaskKey {
        TaskKey::new("VPC", self.name())
    }

    /// The subnet task key.
    pub(crate) fn subnet_key(&self, subnet: &str) -> TaskKey {
        TaskKey::new("Subnet", self.scoped(subnet))
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
    /// Every AWS resource task.
    pub tasks: Vec<AwsTask>,
    /// Outputs by name.
    pub outputs: Vec<(String, OutputValue)>,
    /// The managed files of the config base.
    pub(crate) files: Vec<files::AwsManagedFile>,
}

impl AwsModel {
    /// Adds a task.
    pub(crate) fn add(&mut self, t: AwsTask) {
        self.tasks.push(t);
    }

    /// Every task, AWS resources and managed files, as boxed tasks for a
    /// [`kops_tasks::TaskGraph`].
    pub fn into_tasks(self) -> Vec<Box<dyn Task<dyn AwsCloud>>> {
        let mut out: Vec<Box<dyn Task<dyn AwsCloud>>> = self
            .tasks
            .into_iter()
            .map(|t| Box::new(t) as Box<dyn Task<dyn AwsCloud>>)
            .collect();
        out.extend(
            self.files
                .into_iter()
                .map(|t| Box::new(t) as Box<dyn Task<dyn AwsCloud>>),
        );
        out
    }

    /// Adds a single-valued output.
    pub(crate) fn output(&mut self, name: impl Into<String>, e: impl Into<Expr>) {
        self.outputs
            .push((name.into(), OutputValue::Single(e.into())));
    }

    /// Adds an item to a list output.
    pub(crate) fn output_item(&mut self, name: impl Into<String>, e: impl Into<Expr>) {
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
    let _memo = ctx.nodeup_memo.scope();
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
    m.files.retain(|t| seen.insert(t.task_key().clone()));
    Ok(m)
}
