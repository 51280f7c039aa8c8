//! The GCE model: kOps' GCE builders (`pkg/model/gcemodel`) over the cloud-neutral
//! [`ClusterContext`], producing [`GceTask`]s (the cloud-neutral
//! `kops_tasks::resource::ResourceTask` over [`GceResourceType`]) and the cluster's
//! managed files.
//!
//! - [`GceModelContext`]: the cluster context plus the project (kOps' `GCEModelContext`).
//! - [`build`]: every builder, in kOps' order: API load balancer, external access and
//!   firewall rules, network (subnets, Cloud NAT), instance templates and managed
//!   instance groups, etcd disks, service accounts and IAM, storage ACLs, files.
//! - [`discover`](fn@discover): complete a stored spec and look up what the model needs
//!   (used subnet ranges, the project).
//! - [`render_terraform`]: the Terraform directory kOps writes for a GCE cluster.
//! - [`UpdateCluster`]: `update cluster` (kOps' `ApplyClusterCmd`): plan, apply holding
//!   the state-store lock (then the completed spec and kOps release), or Terraform.
//! - [`plan`] / [`apply`]: the direct target over any [`GceCloud`], one call each, with
//!   no state store: no lock, nothing written but the cluster's managed files.
//! - [`delete_cluster`]: everything the cluster owns by kOps' labels and names, in
//!   dependency order; [`delete_group`], one instance group's objects.
//! - [`cloud`]: the GCE vocabulary of `kops-cloud-gce`, re-exported.

pub mod cloud;
pub(crate) mod compute;
pub(crate) mod delete;
mod discover;
mod files;
mod firewall;
mod iam;
mod loadbalancer;
pub(crate) mod naming;
mod network;
mod terraform;
pub(crate) mod update;

use std::collections::BTreeMap;

use kops_api::internal::{InstanceGroup, InstanceGroupRole};
use kops_tasks::resource::ResourceTask;
use kops_tasks::{Task, TaskKey};

pub use delete::{delete_cluster, delete_group, find_cluster_resources, find_group_resources};
pub use discover::{GceDiscoverOptions, discover};
pub use terraform::render_terraform;
pub use update::{ApplyOptions, UpdateCluster, UpdateOptions, UpdatePlan};

use self::cloud::{GceCloud, GceResourceType};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

/// The addresses of a cluster's API load balancer, as kOps' `GetApiIngressStatus` finds
/// them on GCE: the IP addresses of the forwarding rules named `api-*` that carry the
/// cluster's label (a public load balancer's, and an internal one's per subnet, marked
/// internal by their `INTERNAL` scheme). Sorted, without repeats.
pub async fn api_ingress(api: &dyn GceCloud, cluster: &str) -> Result<Vec<crate::ApiIngress>> {
    use kops_cloud_gce::GceCloudExt as _;
    let rules = api
        .list_labelled(GceResourceType::ForwardingRule, cluster)
        .await
        .map_err(crate::error::cloud(format!(
            "finding the API forwarding rules of cluster {cluster}"
        )))?;
    let mut out: Vec<crate::ApiIngress> = rules
        .iter()
        .filter(|r| r.name.as_deref().is_some_and(|n| n.starts_with("api-")))
        .filter_map(|r| {
            let address = r.attr_str("ip_address").filter(|a| !a.is_empty())?;
            let internal = r.attr_str("load_balancing_scheme") == Some("INTERNAL");
            Some(crate::ApiIngress::new(address, internal))
        })
        .collect();
    out.sort();
    out.dedup();
    Ok(out)
}

/// One GCE object the model manages: a [`ResourceTask`] over [`GceResourceType`].
pub type GceTask = ResourceTask<GceResourceType>;

/// Everything the GCE builders need: the cloud-neutral [`ClusterContext`] plus the
/// project (kOps' `GCEModelContext`). Dereferences to its [`ClusterContext`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct GceModelContext {
    /// The cloud-neutral part.
    pub cluster_context: ClusterContext,
    /// The project (`spec.project`).
    pub project: String,
}

impl std::ops::Deref for GceModelContext {
    type Target = ClusterContext;

    fn deref(&self) -> &ClusterContext {
        &self.cluster_context
    }
}

impl GceModelContext {
    /// A context over a completed cluster; the project comes from `spec.project`, an
    /// error naming the field when it is missing.
    pub fn new(cluster_context: ClusterContext) -> Result<Self> {
        let project = cluster_context
            .cluster
            .spec
            .cloud_provider
            .gce
            .as_ref()
            .and_then(|g| g.project.clone())
            .filter(|p| !p.is_empty())
            .ok_or_else(|| invalid("spec.project", "required on GCE"))?;
        Ok(GceModelContext {
            cluster_context,
            project,
        })
    }

    /// A new task of this cluster.
    pub(crate) fn task(&self, kind: &str, name: impl Into<String>, rt: GceResourceType) -> GceTask {
        GceTask::new(kind, name, rt, self.name())
    }

    /// The cluster's safe name (dots as dashes): the cluster label's value.
    pub(crate) fn safe_name(&self) -> String {
        naming::safe_cluster_name(self.name())
    }

    /// `<object>-<cluster>`, cut to 63.
    pub(crate) fn suffixed(&self, object: &str) -> String {
        naming::suffixed(object, self.name())
    }

    /// The network tag of a role name.
    pub(crate) fn tag(&self, role: &str) -> String {
        naming::tag_for_role(self.name(), role)
    }

    /// The network task key.
    pub(crate) fn network_key(&self) -> TaskKey {
        TaskKey::new("Network", self.network_name())
    }

    /// The network's name: `spec.networkID` (its last path part) or the cluster's.
    pub(crate) fn network_name(&self) -> String {
        match &self.cluster.spec.networking.network_id {
            Some(id) => id.rsplit('/').next().unwrap_or(id).to_owned(),
            None => naming::network_name(self.name()),
        }
    }

    /// The subnet task key of spec subnet `name`.
    pub(crate) fn subnet_key(&self, name: &str) -> TaskKey {
        TaskKey::new("Subnet", self.suffixed(name))
    }

    /// Whether the cluster has APIServer-only groups.
    pub(crate) fn has_apiserver_groups(&self) -> bool {
        self.has_role(&InstanceGroupRole::ApiServer)
    }

    /// The control-plane network tags: the control-plane tag, plus the apiserver tag when
    /// APIServer groups exist.
    pub(crate) fn control_plane_tags(&self) -> Vec<String> {
        let mut t = vec![self.tag("control-plane")];
        if self.has_apiserver_groups() {
            t.push(self.tag("apiserver"));
        }
        t
    }

    /// The control-plane tags and the legacy master tag (the targets of most rules).
    pub(crate) fn control_plane_and_master_tags(&self) -> Vec<String> {
        let mut t = self.control_plane_tags();
        t.push(self.tag("master"));
        t
    }

    /// The role name kOps uses in tags, labels and service accounts.
    pub(crate) fn role_name(ig: &InstanceGroup) -> &'static str {
        match ig.spec.role {
            Some(InstanceGroupRole::ControlPlane) => "control-plane",
            Some(InstanceGroupRole::ApiServer) => "apiserver",
            Some(InstanceGroupRole::Bastion) => "bastion",
            _ => "node",
        }
    }

    /// The shared service account email (`cloudConfig.gceServiceAccount`), when set.
    pub(crate) fn shared_service_account(&self) -> Option<&str> {
        self.cluster
            .spec
            .cloud_provider
            .gce
            .as_ref()
            .and_then(|g| g.service_account.as_deref())
            .filter(|s| !s.is_empty())
    }

    /// The cluster label.
    pub(crate) fn cluster_label(&self) -> BTreeMap<String, String> {
        [(cloud::CLUSTER_LABEL.to_owned(), self.safe_name())]
            .into_iter()
            .collect()
    }

    /// The group's zones, for an error naming the group when it has none.
    pub(crate) fn zones_of(&self, ig: &InstanceGroup) -> Result<Vec<String>> {
        let zones = ig.spec.zones.clone().unwrap_or_default();
        if zones.is_empty() {
            return Err(invalid(
                format!("instancegroup {}: spec.zones", ig.name()),
                "a GCE instance group needs at least one zone",
            ));
        }
        Ok(zones)
    }
}

/// The GCE model: resource tasks and managed files.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct GceModel {
    /// Every GCE resource task.
    pub tasks: Vec<GceTask>,
    files: Vec<crate::files::ManagedFileTask>,
}

impl GceModel {
    pub(crate) fn add(&mut self, t: GceTask) {
        self.tasks.push(t);
    }

    /// Every task, resources and managed files, as boxed tasks for a
    /// [`kops_tasks::TaskGraph`].
    pub fn into_tasks(self) -> Vec<Box<dyn Task<dyn GceCloud>>> {
        let mut out: Vec<Box<dyn Task<dyn GceCloud>>> = self
            .tasks
            .into_iter()
            .map(|t| Box::new(t) as Box<dyn Task<dyn GceCloud>>)
            .collect();
        out.extend(
            self.files
                .into_iter()
                .map(|t| Box::new(t) as Box<dyn Task<dyn GceCloud>>),
        );
        out
    }
}

/// Runs every GCE builder over the context, in kOps' order.
pub fn build(ctx: &GceModelContext) -> Result<GceModel> {
    if ctx.name().is_empty() {
        return Err(invalid("metadata.name", "the cluster has no name"));
    }
    let _memo = ctx.nodeup_memo.scope();
    let mut m = GceModel::default();
    loadbalancer::build(ctx, &mut m)?;
    firewall::build(ctx, &mut m)?;
    network::build(ctx, &mut m)?;
    iam::build_storage_acls(ctx, &mut m)?;
    compute::build(ctx, &mut m)?;
    iam::build_service_accounts(ctx, &mut m)?;
    compute::build_etcd_disks(ctx, &mut m)?;
    files::build(ctx, &mut m)?;
    let mut seen = std::collections::HashSet::new();
    m.tasks.retain(|t| seen.insert(t.task_key().clone()));
    Ok(m)
}

/// Builds every GCE task for a cluster (resources and managed files), boxed for a
/// [`kops_tasks::TaskGraph`].
pub fn build_tasks(ctx: &GceModelContext) -> Result<Vec<Box<dyn Task<dyn GceCloud>>>> {
    Ok(build(ctx)?.into_tasks())
}

/// Plans the cluster against `api`: every task's change, nothing applied. Put a
/// [`kops_cloud_gce::cache::ListCache`] in front of a backend so each collection is
/// listed once.
pub async fn plan(
    api: &dyn GceCloud,
    ctx: &GceModelContext,
    overrides: &kops_tasks::LifecycleOverrides,
) -> Result<kops_tasks::Plan> {
    crate::update::plan_tasks(ctx.name(), build_tasks(ctx)?, overrides, api).await
}

/// Applies the cluster to `api` (direct target) and returns what was done; an error
/// lists every failed task. The cloud may have changed even when this fails. It takes no
/// lock and checks no config base: [`UpdateCluster::apply`] is `update cluster`.
pub async fn apply(
    api: &dyn GceCloud,
    ctx: &GceModelContext,
    overrides: &kops_tasks::LifecycleOverrides,
) -> Result<kops_tasks::Plan> {
    crate::update::apply_tasks(ctx.name(), build_tasks(ctx)?, overrides, api).await
}
