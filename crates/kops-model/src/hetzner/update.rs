//! `update cluster` as a library for Hetzner, as [`crate::gce::UpdateCluster`] is for
//! GCE: the task graph of a [`HetznerModelContext`] built once, then
//! [`planned`](UpdateCluster::plan), [`applied`](UpdateCluster::apply) holding the
//! cluster's state-store lock (the tasks, then the completed spec and the kOps release),
//! or [`rendered`](UpdateCluster::render_terraform) as Terraform. It deletes nothing the
//! spec no longer describes (kOps' Hetzner update does not either): `delete instancegroup`
//! and `delete cluster` do.

use kops_statestore::{Lock, Registry};
use kops_tasks::terraform::TerraformOutput;
use kops_tasks::{Plan, TaskGraph};

use super::cloud::HetznerCloud;
use super::{HetznerModelContext, build};
use crate::error::Result;
pub use crate::update::{ApplyOptions, UpdateOptions, UpdatePlan};
use crate::update::{Workflow, check_all_groups};

/// The store Hetzner nodes read their configuration from, as advice: Hetzner's object
/// storage, S3-compatible.
const REMOTE_STORE: &str = "s3://my-kops-state";

/// One Hetzner cluster's update workflow (see the module docs).
#[derive(Debug)]
pub struct UpdateCluster {
    flow: Workflow<HetznerModelContext, dyn HetznerCloud>,
}

impl UpdateCluster {
    /// Builds the model and task graph of `ctx`.
    pub fn new(mut ctx: HetznerModelContext, options: UpdateOptions) -> Result<Self> {
        options.select_groups(&mut ctx.cluster_context)?;
        let tasks = |ctx: &HetznerModelContext| Ok(build(ctx)?.into_tasks());
        Workflow::new(ctx, options, REMOTE_STORE, tasks).map(|flow| UpdateCluster { flow })
    }

    /// The context the update works from.
    pub fn context(&self) -> &HetznerModelContext {
        &self.flow.ctx
    }

    /// Every container image and file the cluster's machines download, with where
    /// from (kOps' `get assets`), as the model built in [`new`](Self::new) names them.
    pub fn assets(&self) -> crate::assets::Assets {
        self.flow.ctx.assets.snapshot()
    }

    /// The task graph.
    pub fn graph(&self) -> &TaskGraph<dyn HetznerCloud> {
        &self.flow.graph
    }

    /// Plans the update against `api`: every task's change (a server group's count and
    /// its servers newly out of date, with why), nothing applied.
    pub async fn plan(&self, api: &dyn HetznerCloud) -> Result<UpdatePlan> {
        self.flow.plan(api).await
    }

    /// Applies the update to `api` holding the cluster's lock in `registry` (taken here
    /// and released at the end). The cloud may have changed even when this fails.
    pub async fn apply(
        &self,
        api: &dyn HetznerCloud,
        registry: &Registry,
        plan: &UpdatePlan,
        options: ApplyOptions,
    ) -> Result<Plan> {
        self.flow.apply(api, registry, plan, options).await
    }

    /// [`apply`](Self::apply) for a caller that already holds the cluster's lock, renewing
    /// its lease while the tasks run.
    pub async fn apply_holding(
        &self,
        api: &dyn HetznerCloud,
        registry: &Registry,
        plan: &UpdatePlan,
        lock: &mut Lock,
        options: ApplyOptions,
    ) -> Result<Plan> {
        self.flow
            .apply_holding(api, registry, plan, lock, options)
            .await
    }

    /// Renders the cluster as Terraform, from the graph built once in [`new`](Self::new).
    pub fn render_terraform(&self) -> Result<TerraformOutput> {
        check_all_groups(&self.flow.ctx, &self.flow.options)?;
        super::terraform::render(&self.flow.ctx, &self.flow.graph)
    }
}
