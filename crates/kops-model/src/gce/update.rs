//! `update cluster` as a library for GCE, as [`crate::aws::UpdateCluster`] is for AWS.
//!
//! [`UpdateCluster`] builds the task graph of a [`GceModelContext`] once, then
//! [`plans`](UpdateCluster::plan) it, [`applies`](UpdateCluster::apply) it holding the
//! cluster's state-store lock (the tasks, then the completed spec and the kOps release),
//! or [`renders`](UpdateCluster::render_terraform) it as Terraform. Unlike AWS' update it
//! deletes nothing the spec no longer describes: kOps' GCE update does not either.

use kops_statestore::{Lock, Registry};
use kops_tasks::terraform::TerraformOutput;
use kops_tasks::{Plan, TaskGraph};

use super::cloud::GceCloud;
use super::{GceModelContext, build_tasks};
use crate::error::Result;
pub use crate::update::{ApplyOptions, UpdateOptions, UpdatePlan};
use crate::update::{Workflow, check_all_groups};

/// The store GCE nodes read their configuration from, as advice.
const REMOTE_STORE: &str = "gs://my-kops-state";

/// One GCE cluster's update workflow (see the module docs).
#[derive(Debug)]
pub struct UpdateCluster {
    flow: Workflow<GceModelContext, dyn GceCloud>,
}

impl UpdateCluster {
    /// Builds the model and task graph of `ctx`.
    pub fn new(mut ctx: GceModelContext, options: UpdateOptions) -> Result<Self> {
        options.select_groups(&mut ctx.cluster_context)?;
        Workflow::new(ctx, options, REMOTE_STORE, build_tasks).map(|flow| UpdateCluster { flow })
    }

    /// The context the update works from.
    pub fn context(&self) -> &GceModelContext {
        &self.flow.ctx
    }

    /// Every container image and file the cluster's machines download, with where
    /// from (kOps' `get assets`), as the model built in [`new`](Self::new) names them.
    pub fn assets(&self) -> crate::assets::Assets {
        self.flow.ctx.assets.snapshot()
    }

    /// The task graph.
    pub fn graph(&self) -> &TaskGraph<dyn GceCloud> {
        &self.flow.graph
    }

    /// Plans the update against `api`: every task's change, nothing applied. Put a
    /// [`kops_cloud_gce::cache::ListCache`] in front of a backend so each collection is
    /// listed once.
    pub async fn plan(&self, api: &dyn GceCloud) -> Result<UpdatePlan> {
        self.flow.plan(api).await
    }

    /// Applies the update to `api` holding the cluster's lock in `registry` (taken here
    /// and released at the end): the tasks, then the completed spec and the kOps release.
    /// Returns what was done. The cloud may have changed even when this fails.
    pub async fn apply(
        &self,
        api: &dyn GceCloud,
        registry: &Registry,
        plan: &UpdatePlan,
        options: ApplyOptions,
    ) -> Result<Plan> {
        self.flow.apply(api, registry, plan, options).await
    }

    /// [`apply`](Self::apply) for a caller that already holds the cluster's lock (taken
    /// with [`Registry::lock`] before planning, so the plan and the apply see the same
    /// cloud). The lease is renewed before the tasks, every third of it while they run,
    /// and before the state is written; if it was lost meanwhile (someone took the lock
    /// over) the apply stops there with an error.
    pub async fn apply_holding(
        &self,
        api: &dyn GceCloud,
        registry: &Registry,
        plan: &UpdatePlan,
        lock: &mut Lock,
        options: ApplyOptions,
    ) -> Result<Plan> {
        self.flow
            .apply_holding(api, registry, plan, lock, options)
            .await
    }

    /// Renders the cluster as Terraform, from the graph built once in [`new`](Self::new)
    /// (as [`super::render_terraform`] does from a context).
    pub fn render_terraform(&self) -> Result<TerraformOutput> {
        check_all_groups(&self.flow.ctx, &self.flow.options)?;
        super::terraform::render(&self.flow.ctx, &self.flow.graph)
    }
}
