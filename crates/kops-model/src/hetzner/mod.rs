//! The Hetzner Cloud model: kOps' Hetzner builders (`pkg/model/hetznermodel`) over the
//! cloud-neutral [`ClusterContext`], producing [`HetznerTask`]s (the cloud-neutral
//! `kops_tasks::resource::ResourceTask` over [`HetznerResourceType`]), one server group
//! per instance group, and the cluster's managed files.
//!
//! - [`HetznerModelContext`]: the cluster context plus the network zone (kOps' region).
//! - [`build`]: every builder, in kOps' order: network, firewalls, the API load balancer,
//!   SSH keys and server groups, etcd volumes, files.
//! - [`discover`](fn@discover): complete a stored spec for Hetzner.
//! - [`render_terraform`]: the Terraform directory kOps writes for a Hetzner cluster.
//! - [`plan`] / [`apply`]: the direct target over any [`HetznerCloud`], one call each.
//! - [`UpdateCluster`]: `update cluster`: plan, apply holding the state-store lock (then
//!   the completed spec and kOps release), or Terraform.
//! - [`api_ingress`]: the API load balancer's address, for a kubeconfig.
//! - [`delete_cluster`]: everything carrying the cluster's label, in dependency order.
//! - [`cloud`]: the Hetzner vocabulary of `kops-cloud-hetzner`, re-exported.
//!
//! # Servers
//!
//! Hetzner has no autoscaling group. Each instance group is a [`ServerGroup`] task: it
//! finds the group's servers by kOps' labels, creates the missing ones (the group's
//! `minSize` is a floor: extra servers are left alone, as kOps leaves them), and marks
//! the ones whose user data, location, type, image or public addresses differ with
//! `kops.k8s.io/needs-update` for rolling update to replace.

pub mod cloud;
mod delete;
mod discover;
mod files;
mod firewall;
mod loadbalancer;
mod network;
pub(crate) mod servers;
mod terraform;
mod update;

use std::collections::BTreeMap;

use kops_api::internal::InstanceGroup;
use kops_tasks::resource::ResourceTask;
use kops_tasks::{Task, TaskKey};

pub use delete::{delete_cluster, find_cluster_resources};
pub use discover::{HetznerDiscoverOptions, discover};
pub use servers::ServerGroup;
pub use terraform::render_terraform;
pub use update::{ApplyOptions, UpdateCluster, UpdateOptions, UpdatePlan};

use self::cloud::{CLUSTER_LABEL, HetznerCloud, HetznerResourceType};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

/// The address of a cluster's API load balancer, as kOps' `GetApiIngressStatus` finds it
/// on Hetzner: the public IPv4 address of the load balancer `api.<cluster>` that carries
/// the cluster's label. Empty when there is none.
pub async fn api_ingress(api: &dyn HetznerCloud, cluster: &str) -> Result<Vec<crate::ApiIngress>> {
    use self::cloud::HetznerCloudExt as _;
    let found = api
        .list_labelled(HetznerResourceType::LoadBalancer, cluster)
        .await
        .map_err(crate::error::cloud(format!(
            "finding the API load balancer of cluster {cluster}"
        )))?;
    let name = format!("api.{cluster}");
    Ok(found
        .iter()
        .filter(|lb| lb.name.as_deref() == Some(name.as_str()))
        .filter_map(|lb| lb.attr_str("ipv4").filter(|a| !a.is_empty()))
        .map(|a| crate::ApiIngress::new(a, false))
        .collect())
}

/// One Hetzner object the model manages: a [`ResourceTask`] over [`HetznerResourceType`].
pub type HetznerTask = ResourceTask<HetznerResourceType>;

/// Everything the Hetzner builders need: the cloud-neutral [`ClusterContext`] plus the
/// network zone of the cluster's locations (kOps' region, `eu-central`). Dereferences to
/// its [`ClusterContext`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HetznerModelContext {
    /// The cloud-neutral part.
    pub cluster_context: ClusterContext,
}

impl std::ops::Deref for HetznerModelContext {
    type Target = ClusterContext;

    fn deref(&self) -> &ClusterContext {
        &self.cluster_context
    }
}

impl HetznerModelContext {
    /// A context over a completed Hetzner cluster; its region must be a network zone
    /// ([`discover`](fn@discover) sets it from the subnets' locations).
    pub fn new(cluster_context: ClusterContext) -> Self {
        HetznerModelContext { cluster_context }
    }

    /// The same context with the Hetzner API token the cluster's own components use
    /// (kOps takes the one in `HCLOUD_TOKEN`; so does the `kops` CLI): the `hcloud`
    /// Secret of `kube-system`, and the `HCLOUD_TOKEN` of etcd-manager, kops-channels and
    /// kops-controller, as kOps passes it. The files holding it are sensitive: plans show
    /// their digest, and Terraform takes the token from the sensitive variable
    /// `hcloud_token` instead of writing it into a data file.
    pub fn with_token(mut self, token: impl Into<String>) -> Self {
        self.cluster_context.hcloud_token = Some(kops_tasks::Sensitive::new(token));
        self
    }

    /// The same context, writing the cluster's files byte for byte as kOps writes them,
    /// for a team moving between kOps and kops-rs that wants no stored object to change.
    /// Two things differ from the default, both on purpose:
    /// - With the Terraform target, the files that hold the API token (the `hcloud`
    ///   Secret, the manifests of etcd-manager, kops-channels and kops-controller) are data
    ///   files with the token in them, read with `file(...)`: `terraform plan` prints it,
    ///   and whatever keeps the Terraform directory keeps it. By default they are
    ///   templates filled from the sensitive variable `hcloud_token`.
    /// - The cluster autoscaler's `HCLOUD_SSH_KEY` is empty, as kOps renders it (kOps
    ///   passes the key's ID, unknown before the key exists), so the servers it creates
    ///   come up without the SSH key. By default it is the key's name.
    pub fn with_kops_identical_files(mut self) -> Self {
        self.cluster_context.hcloud_kops_identical = true;
        self
    }

    /// A new task of this cluster.
    pub(crate) fn task(
        &self,
        kind: &str,
        name: impl Into<String>,
        rt: HetznerResourceType,
    ) -> HetznerTask {
        HetznerTask::new(kind, name, rt, self.name())
    }

    /// The cluster label alone (kOps' `CloudTags` on Hetzner).
    pub(crate) fn cluster_labels(&self) -> BTreeMap<String, String> {
        [(CLUSTER_LABEL.to_owned(), self.name().to_owned())]
            .into_iter()
            .collect()
    }

    /// The network task's key.
    pub(crate) fn network_key(&self) -> TaskKey {
        TaskKey::new("Network", self.name())
    }

    /// The location of a group: its first subnet's zone (kOps puts every server of a
    /// group in its first subnet), an error naming the group when it has none.
    pub(crate) fn location_of(&self, ig: &InstanceGroup) -> Result<String> {
        let first = ig.spec.subnets.iter().flatten().next().ok_or_else(|| {
            invalid(
                format!("instancegroup {}: spec.subnets", ig.name()),
                "a Hetzner instance group needs a subnet (its location)",
            )
        })?;
        Ok(self
            .subnet(first)
            .and_then(|s| s.zone.clone())
            .unwrap_or_else(|| first.clone()))
    }
}

/// The Hetzner model: resource tasks, server groups and managed files.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct HetznerModel {
    /// Every Hetzner resource task.
    pub tasks: Vec<HetznerTask>,
    /// One server group per instance group.
    pub server_groups: Vec<ServerGroup>,
    files: Vec<crate::files::ManagedFileTask>,
}

impl HetznerModel {
    pub(crate) fn add(&mut self, t: HetznerTask) {
        self.tasks.push(t);
    }

    /// Every task, resources, server groups and managed files, as boxed tasks for a
    /// [`kops_tasks::TaskGraph`].
    pub fn into_tasks(self) -> Vec<Box<dyn Task<dyn HetznerCloud>>> {
        let mut out: Vec<Box<dyn Task<dyn HetznerCloud>>> = self
            .tasks
            .into_iter()
            .map(|t| Box::new(t) as Box<dyn Task<dyn HetznerCloud>>)
            .collect();
        out.extend(
            self.server_groups
                .into_iter()
                .map(|t| Box::new(t) as Box<dyn Task<dyn HetznerCloud>>),
        );
        out.extend(
            self.files
                .into_iter()
                .map(|t| Box::new(t) as Box<dyn Task<dyn HetznerCloud>>),
        );
        out
    }
}

/// Runs every Hetzner builder over the context, in kOps' order.
pub fn build(ctx: &HetznerModelContext) -> Result<HetznerModel> {
    if ctx.name().is_empty() {
        return Err(invalid("metadata.name", "the cluster has no name"));
    }
    if ctx
        .hcloud_token
        .as_ref()
        .is_none_or(|t| t.expose().is_empty())
    {
        return Err(invalid(
            "HCLOUD_TOKEN",
            "a Hetzner cluster's components need the API token: give it with HetznerModelContext::with_token",
        ));
    }
    let _memo = ctx.nodeup_memo.scope();
    let mut m = HetznerModel::default();
    network::build(ctx, &mut m)?;
    firewall::build(ctx, &mut m)?;
    loadbalancer::build(ctx, &mut m)?;
    servers::build(ctx, &mut m)?;
    servers::build_etcd_volumes(ctx, &mut m)?;
    files::build(ctx, &mut m)?;
    Ok(m)
}

/// Plans the cluster against `api`: every task's change, nothing applied.
pub async fn plan(
    api: &dyn HetznerCloud,
    ctx: &HetznerModelContext,
    overrides: &kops_tasks::LifecycleOverrides,
) -> Result<kops_tasks::Plan> {
    crate::update::plan_tasks(ctx.name(), build(ctx)?.into_tasks(), overrides, api).await
}

/// Applies the cluster to `api` (direct target) and returns what was done; an error
/// lists every failed task. The cloud may have changed even when this fails. It takes no
/// lock and checks no config base.
pub async fn apply(
    api: &dyn HetznerCloud,
    ctx: &HetznerModelContext,
    overrides: &kops_tasks::LifecycleOverrides,
) -> Result<kops_tasks::Plan> {
    crate::update::apply_tasks(ctx.name(), build(ctx)?.into_tasks(), overrides, api).await
}
