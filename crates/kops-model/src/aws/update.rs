//! `update cluster` as a library: kOps' `ApplyClusterCmd.Run` for AWS.
//!
//! [`UpdateCluster`] builds the task graph of a [`ModelContext`] once, then
//! [`plans`](UpdateCluster::plan) it (with the deletion of every object the cluster owns
//! that the spec no longer describes, see [`orphans`]), [`applies`](UpdateCluster::apply)
//! a plan holding the cluster's state-store lock (tasks, then orphans one wave of
//! [`orphans::DELETION_WAVES`] at a time, then the completed spec and kOps version), or
//! [`renders`](UpdateCluster::render_terraform) it as Terraform.

use kops_statestore::{Lock, Registry};
use kops_tasks::terraform::TerraformOutput;
use kops_tasks::{Executor, Mode, OwnedObject, Plan, Results, TaskGraph};

use super::builders::OutputValue;
use super::builders::{self, ModelContext};
use super::cloud::AwsCloud;
use super::hooks::{self, RecordedHooks};
use super::orphans::{self, Claims, OrphanDeleter};
use super::terraform::render_built;
use crate::error::{Error, Result, TaskFailure, cloud, invalid};
pub use crate::update::{ApplyOptions, UpdateOptions, UpdatePlan};
use crate::update::{
    applied, check_all_groups, check_config_base, check_kops_version, check_lock, holding_lock,
    left_groups, renew, renewing, write_state,
};

/// One cluster's update workflow (see the module docs).
#[derive(Debug)]
pub struct UpdateCluster {
    ctx: ModelContext,
    graph: TaskGraph<dyn AwsCloud>,
    options: UpdateOptions,
    /// The model's Terraform outputs, for [`render_terraform`](Self::render_terraform).
    outputs: Vec<(String, OutputValue)>,
    /// The managed files Terraform cannot write (a local config base).
    unrendered: Vec<crate::files::ManagedFileTask>,
}

impl UpdateCluster {
    /// Builds the model and task graph of `ctx`.
    pub fn new(mut ctx: ModelContext, options: UpdateOptions) -> Result<Self> {
        options.select_groups(&mut ctx)?;
        let mut model = builders::build(&ctx)?;
        let outputs = std::mem::take(&mut model.outputs);
        let unrendered = model
            .files
            .iter()
            .filter_map(|f| f.unrendered().cloned())
            .collect();
        let tasks = model.into_tasks();
        let kinds: std::collections::BTreeSet<String> =
            tasks.iter().map(|t| t.key().kind().to_owned()).collect();
        let overrides = options.overrides_for(kinds.iter().map(String::as_str));
        let graph = TaskGraph::build_with(tasks, &overrides)?;
        Ok(UpdateCluster {
            ctx,
            graph,
            options,
            outputs,
            unrendered,
        })
    }

    /// The context the update works from.
    pub fn context(&self) -> &ModelContext {
        &self.ctx
    }

    /// Every container image and file the cluster's machines download, with where
    /// from (kOps' `get assets`), as the model built in [`new`](Self::new) names them.
    pub fn assets(&self) -> crate::assets::Assets {
        self.ctx.assets.snapshot()
    }

    /// The task graph.
    pub fn graph(&self) -> &TaskGraph<dyn AwsCloud> {
        &self.graph
    }

    /// Plans the update against `api`: every task, and the deletion of the objects the
    /// cluster owns (by its tags) that no task found, and of duplicates a lost create
    /// answer left, each with its reason.
    pub async fn plan(&self, api: &dyn AwsCloud) -> Result<UpdatePlan> {
        let name = self.ctx.name().to_owned();
        let executor = Executor::new(self.options.executor.clone());
        let results = Results::new();
        let mut plan = executor
            .run(&self.graph, api, Mode::Plan, &results)
            .await
            .into_result()
            .map_err(cloud(format!("planning cluster {name}")))?;
        let mut claims = Claims::from_graph(&self.graph, &results);
        for group in left_groups(&self.ctx) {
            claims.keep_group(group);
        }
        let owned = orphans::find_orphans(
            api,
            &name,
            &claims,
            &self.options.executor.retry_policy(),
        )
        .await
        .map_err(cloud(format!(
            "listing the objects cluster {name} owns, to find those the spec no longer needs"
        )))?;
        plan.add_orphans(&self.graph, &owned);
        Ok(UpdatePlan::new(plan, owned))
    }

    /// Plans a dry run against `api`: as [`plan`](Self::plan), except that the lifecycle
    /// hooks of autoscaling groups are taken from kops-rs' record of the last apply in
    /// `registry` (`<cluster>/lifecycle-hooks.kops-rs.json`) when it is younger than
    /// [`UpdateOptions::hooks_record_max_age`] and the group's ARN is still the recorded
    /// one (a recreated group, or one the record lacks, is read). AWS reads the hooks of
    /// one group per call; with the record a no-op dry run's calls no longer grow with
    /// the instance groups. [`UpdatePlan::recorded_hooks`] says how many groups' hooks
    /// came from the record. With [`UpdateOptions::refresh`], or without a record to
    /// trust (missing, stale, unreadable: logged at debug level), this is `plan`.
    ///
    /// A hook changed out of band since the last apply (by hand, by kOps) is not seen
    /// until the record expires or a refresh; an apply never trusts the record.
    pub async fn dry_run(
        &self,
        api: std::sync::Arc<dyn AwsCloud>,
        registry: &Registry,
    ) -> Result<UpdatePlan> {
        let name = self.ctx.name();
        if self.options.refresh {
            return self.plan(api.as_ref()).await;
        }
        let max_age = self
            .options
            .hooks_record_max_age
            .unwrap_or(hooks::DEFAULT_HOOKS_RECORD_MAX_AGE);
        let Some((recorded_at, groups)) = hooks::load(registry, name, max_age).await else {
            return self.plan(api.as_ref()).await;
        };
        let trusting = hooks::TrustingCloud::new(api, name, groups);
        let mut plan = self.plan(&trusting).await?;
        let used = trusting.used();
        if used > 0 {
            plan.recorded_hooks = Some(RecordedHooks {
                groups: used,
                recorded_at,
            });
        }
        Ok(plan)
    }

    /// Records the lifecycle hooks every autoscaling group of the cluster has now, as
    /// [`apply`](Self::apply) does once it is done (see [`dry_run`](Self::dry_run)), for a
    /// caller whose apply found nothing to change and so did not call it. Reads the
    /// hooks through `api`, whose cache a plan made just before usually answers.
    pub async fn record_lifecycle_hooks(
        &self,
        api: &dyn AwsCloud,
        registry: &Registry,
    ) -> Result<()> {
        hooks::record(
            api,
            registry,
            self.ctx.name(),
            &self.options.executor.retry_policy(),
        )
        .await
        .map(|_| ())
    }

    /// Applies `plan` to `api` holding the cluster's lock in `registry` (taken here and
    /// released at the end): the tasks, then the orphans one wave at a time, then the
    /// completed spec and the kOps release. Returns what was done. The cloud may have
    /// changed even when this fails.
    pub async fn apply(
        &self,
        api: &dyn AwsCloud,
        registry: &Registry,
        plan: &UpdatePlan,
        options: ApplyOptions,
    ) -> Result<Plan> {
        check_config_base(&self.ctx, &self.options, "s3://my-kops-state")?;
        let name = self.ctx.name().to_owned();
        holding_lock(registry, &name, &self.options, async |lock| {
            self.apply_holding(api, registry, plan, lock, options).await
        })
        .await
    }

    /// [`apply`](Self::apply) for a caller that already holds the cluster's lock (taken
    /// with [`Registry::lock`] before planning, so the plan and the apply see the same
    /// cloud). The lease is renewed before each phase and every third of it while one
    /// runs; if it was lost meanwhile (someone took the lock over) the apply stops there
    /// with an error.
    pub async fn apply_holding(
        &self,
        api: &dyn AwsCloud,
        registry: &Registry,
        plan: &UpdatePlan,
        lock: &mut Lock,
        options: ApplyOptions,
    ) -> Result<Plan> {
        check_config_base(&self.ctx, &self.options, "s3://my-kops-state")?;
        let name = self.ctx.name().to_owned();
        check_lock(lock, &name)?;
        check_kops_version(&self.ctx, registry, &self.options).await?;
        let executor = Executor::new(
            options
                .executor
                .clone()
                .unwrap_or_else(|| self.options.executor.clone()),
        );
        let clock = executor.options().clock.clone();
        renew(lock, registry, &name).await?;
        // A failed apply leaves no record of the hooks for a dry run to trust.
        hooks::forget(registry, &name).await?;
        let report = renewing(
            lock,
            registry,
            &name,
            clock.as_ref(),
            executor.apply(&self.graph, api),
        )
        .await?;
        let mut applied = applied(&name, report)?;
        let mut failed = Vec::new();
        for wave in orphans::waves(&plan.owned) {
            if wave.is_empty() {
                continue;
            }
            renew(lock, registry, &name).await?;
            let deleter = OrphanDeleter::new();
            let deleting = executor.delete_orphans(&plan.plan, &wave, &deleter, api, options.prune);
            failed.extend(renewing(lock, registry, &name, clock.as_ref(), deleting).await?);
            // A wave that failed leaves its dependencies in use: stop before them.
            if !failed.is_empty() {
                break;
            }
        }
        if !failed.is_empty() {
            return Err(Error::Apply {
                cluster: name,
                failed: failed
                    .into_iter()
                    .map(|(k, e)| TaskFailure::new(k, e))
                    .collect(),
                skipped: 0,
            });
        }
        let deleted: Vec<OwnedObject> = plan
            .owned
            .iter()
            .filter(|o| options.prune || !o.deferred)
            .cloned()
            .collect();
        applied.add_orphans(&self.graph, &deleted);
        write_state(&self.ctx, registry, lock).await?;
        // Best effort: without the record, dry runs read every group's hooks.
        if let Err(e) = self.record_lifecycle_hooks(api, registry).await {
            tracing::warn!(cluster = %name, error = %e, "could not record the lifecycle hooks of the apply");
        }
        Ok(applied)
    }

    /// Renders the cluster as Terraform. Managed files of a config base Terraform cannot
    /// write (a local directory) are written straight into the config-base store, as kOps
    /// does; without a store that is an error naming the field.
    pub async fn render_terraform(&self) -> Result<TerraformOutput> {
        // Every group and no phase (or an error): the graph `new` built is the one to
        // render, its lifecycle overrides the options' own.
        check_all_groups(&self.ctx, &self.options)?;
        let local = &self.unrendered;
        if !local.is_empty() {
            let Some(store) = &self.ctx.config_store else {
                return Err(invalid(
                    "spec.configBase",
                    "a local config base needs its store to write the cluster's files to",
                ));
            };
            crate::files::write_all(store.as_ref(), local).await?;
        }
        render_built(&self.ctx, &self.graph, self.outputs.clone())
    }
}
