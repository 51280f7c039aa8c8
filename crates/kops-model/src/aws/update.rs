//! `update cluster` as a library: kOps' `ApplyClusterCmd.Run` for AWS.
//!
//! [`UpdateCluster`] builds the task graph of a [`ModelContext`] once, then
//! [`plans`](UpdateCluster::plan) it (with the deletion of every object the cluster owns
//! that the spec no longer describes, see [`orphans`]), [`applies`](UpdateCluster::apply)
//! a plan holding the cluster's state-store lock (tasks, then orphans one wave of
//! [`orphans::DELETION_WAVES`] at a time, then the completed spec and kOps version), or
//! [`renders`](UpdateCluster::render_terraform) it as Terraform.

use kops_statestore::{Lock, LockRequest, Registry, StoreUrl};
use kops_tasks::terraform::TerraformOutput;
use kops_tasks::{
    Executor, ExecutorOptions, LifecycleOverrides, Mode, OwnedObject, Plan, Results, TaskGraph,
};

use super::builders::{self, ModelContext};
use super::cloud::AwsCloud;
use super::orphans::{self, Claims, OrphanDeleter};
use super::terraform::{RenderOptions, render};
use crate::error::{Error, Result, chain, cloud, invalid, store};

/// Options for [`UpdateCluster`].
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct UpdateOptions {
    /// Per-kind lifecycle overrides (`IAMRole=ExistsAndWarnIfChanges`).
    pub lifecycle_overrides: LifecycleOverrides,
    /// How the executor runs (concurrency, retries, progress callback).
    pub executor: ExecutorOptions,
    /// Who holds the lock while applying (`user@host`), recorded in the lock object.
    pub lock_holder: String,
    /// The whole lock request (holder, host, process, command, lease); when set it wins
    /// over `lock_holder`.
    pub lock_request: Option<LockRequest>,
    /// Allow direct apply with a config base the cluster's nodes cannot read (`file://`,
    /// `memfs://`): only for clouds without real nodes, such as the mock.
    pub allow_unreadable_config_base: bool,
}

impl std::fmt::Debug for UpdateOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpdateOptions")
            .field("lifecycle_overrides", &self.lifecycle_overrides)
            .field("lock_holder", &self.lock_holder)
            .field(
                "allow_unreadable_config_base",
                &self.allow_unreadable_config_base,
            )
            .finish_non_exhaustive()
    }
}

impl UpdateOptions {
    /// Sets the lifecycle overrides.
    pub fn with_lifecycle_overrides(mut self, o: LifecycleOverrides) -> Self {
        self.lifecycle_overrides = o;
        self
    }

    /// Sets the executor options.
    pub fn with_executor(mut self, o: ExecutorOptions) -> Self {
        self.executor = o;
        self
    }

    /// Sets who holds the lock while applying.
    pub fn with_lock_holder(mut self, holder: impl Into<String>) -> Self {
        self.lock_holder = holder.into();
        self
    }

    /// Sets the lock request (holder, host, process, command, lease) used while applying.
    pub fn with_lock_request(mut self, request: LockRequest) -> Self {
        self.lock_request = Some(request);
        self
    }

    /// Allows a config base nodes cannot read (for the mock cloud).
    pub fn with_unreadable_config_base(mut self, allow: bool) -> Self {
        self.allow_unreadable_config_base = allow;
        self
    }

    fn request(&self) -> LockRequest {
        self.lock_request
            .clone()
            .unwrap_or_else(|| LockRequest::new(self.lock_holder.clone(), "update cluster"))
    }
}

/// Options of one [`UpdateCluster::apply`].
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct ApplyOptions {
    /// How the executor runs this apply (progress callback, concurrency, retries);
    /// `None` keeps [`UpdateOptions::executor`].
    pub executor: Option<ExecutorOptions>,
    /// Also perform deferred deletions (kOps' `--prune`): security-group rules, load
    /// balancers, target groups and volumes the spec no longer needs.
    pub prune: bool,
}

impl std::fmt::Debug for ApplyOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApplyOptions")
            .field("executor", &self.executor.is_some())
            .field("prune", &self.prune)
            .finish()
    }
}

impl ApplyOptions {
    /// Runs this apply with these executor options.
    pub fn with_executor(mut self, o: ExecutorOptions) -> Self {
        self.executor = Some(o);
        self
    }

    /// Performs deferred deletions too.
    pub fn with_prune(mut self, prune: bool) -> Self {
        self.prune = prune;
        self
    }
}

/// A plan of a cluster update: the tasks' plan plus the orphans it deletes.
#[derive(Debug)]
#[non_exhaustive]
pub struct UpdatePlan {
    /// What would change, orphans included.
    pub plan: Plan,
    owned: Vec<OwnedObject>,
}

/// Extends the lease of `lock` (see [`Lock::renew`]).
async fn renew(lock: &mut Lock, registry: &Registry, name: &str) -> Result<()> {
    lock.renew(registry.clock().as_ref())
        .await
        .map_err(store(format!("renewing the lock of cluster {name}")))
}

/// One cluster's update workflow (see the module docs).
#[derive(Debug)]
pub struct UpdateCluster {
    ctx: ModelContext,
    graph: TaskGraph<dyn AwsCloud>,
    options: UpdateOptions,
}

impl UpdateCluster {
    /// Builds the model and task graph of `ctx`.
    pub fn new(ctx: ModelContext, options: UpdateOptions) -> Result<Self> {
        let model = builders::build(&ctx)?;
        let graph = TaskGraph::build_with(model.into_tasks(), &options.lifecycle_overrides)?;
        Ok(UpdateCluster {
            ctx,
            graph,
            options,
        })
    }

    /// The context the update works from.
    pub fn context(&self) -> &ModelContext {
        &self.ctx
    }

    /// The task graph.
    pub fn graph(&self) -> &TaskGraph<dyn AwsCloud> {
        &self.graph
    }

    /// Plans the update against `api`: every task, and the deletion of the objects the
    /// cluster owns that no task found (see [`orphans`]).
    pub async fn plan(&self, api: &dyn AwsCloud) -> Result<UpdatePlan> {
        let name = self.ctx.name().to_owned();
        let executor = Executor::new(self.options.executor.clone());
        let results = Results::new();
        let mut plan = executor
            .run(&self.graph, api, Mode::Plan, &results)
            .await
            .into_result()
            .map_err(cloud(format!("planning cluster {name}")))?;
        let claims = Claims::from_graph(&self.graph, &results);
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
        Ok(UpdatePlan { plan, owned })
    }

    /// Refuses a config base the cluster's nodes cannot read, unless allowed.
    fn check_config_base(&self) -> Result<()> {
        if self.options.allow_unreadable_config_base {
            return Ok(());
        }
        let (base, url) = self.ctx.config_base()?;
        let what = match url {
            StoreUrl::File { .. } => "a local directory",
            StoreUrl::Memory { .. } => "an in-memory store",
            _ => return Ok(()),
        };
        Err(invalid(
            "spec.configBase",
            format!(
                "{base} is {what}: the cluster's nodes read their configuration (nodeup configs, addons, manifests) from the config base and cannot reach it; keep the cluster in an s3:// state store (e.g. --state s3://my-kops-state) or render it with the Terraform target"
            ),
        ))
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
        self.check_config_base()?;
        let name = self.ctx.name().to_owned();
        let mut lock = registry
            .lock(&name, &self.options.request())
            .await
            .map_err(store(format!("taking the lock of cluster {name}")))?;
        let result = self
            .apply_holding(api, registry, plan, &mut lock, options)
            .await;
        let released = lock
            .release()
            .await
            .map_err(store(format!("releasing the lock of cluster {name}")));
        let applied = result?;
        released?;
        Ok(applied)
    }

    /// [`apply`](Self::apply) for a caller that already holds the cluster's lock (taken
    /// with [`Registry::lock`] before planning, so the plan and the apply see the same
    /// cloud). The lease is renewed between phases; if it was lost meanwhile (it ran out
    /// and someone took the lock over) the apply stops there with an error.
    pub async fn apply_holding(
        &self,
        api: &dyn AwsCloud,
        registry: &Registry,
        plan: &UpdatePlan,
        lock: &mut Lock,
        options: ApplyOptions,
    ) -> Result<Plan> {
        self.check_config_base()?;
        let name = self.ctx.name().to_owned();
        if lock.path() != Registry::lock_path(&name) {
            return Err(invalid(
                "lock",
                format!(
                    "the lock held is {}, not the lock of cluster {name}",
                    lock.path()
                ),
            ));
        }
        let executor = Executor::new(
            options
                .executor
                .clone()
                .unwrap_or_else(|| self.options.executor.clone()),
        );
        renew(lock, registry, &name).await?;
        let report = executor.apply(&self.graph, api).await;
        if !report.failed.is_empty() {
            return Err(Error::Apply {
                cluster: name,
                failed: report
                    .failed
                    .iter()
                    .map(|(k, e)| (k.clone(), chain(e)))
                    .collect(),
                skipped: report.skipped.len(),
            });
        }
        let mut applied = report.plan;
        let mut failed = Vec::new();
        for wave in orphans::waves(&plan.owned) {
            if wave.is_empty() {
                continue;
            }
            renew(lock, registry, &name).await?;
            failed.extend(
                executor
                    .delete_orphans(&plan.plan, &wave, &OrphanDeleter::new(), api, options.prune)
                    .await,
            );
            // A wave that failed leaves its dependencies in use: stop before them.
            if !failed.is_empty() {
                break;
            }
        }
        if !failed.is_empty() {
            return Err(Error::Apply {
                cluster: name,
                failed: failed.iter().map(|(k, e)| (k.clone(), chain(e))).collect(),
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
        renew(lock, registry, &name).await?;
        let full = kops_api::v1alpha2::Cluster::from(&self.ctx.cluster);
        registry
            .put_completed_spec(&full)
            .await
            .map_err(store(format!(
                "writing the completed spec of cluster {name}"
            )))?;
        registry
            .put_kops_version(&name, &self.ctx.kops_release)
            .await
            .map_err(store(format!("writing the kOps version of cluster {name}")))?;
        Ok(applied)
    }

    /// Renders the cluster as Terraform. Managed files of a config base Terraform cannot
    /// write (a local directory) are written straight into the config-base store, as kOps
    /// does; without a store that is an error naming the field.
    pub async fn render_terraform(&self) -> Result<TerraformOutput> {
        let model = builders::build(&self.ctx)?;
        let local: Vec<_> = model
            .files
            .iter()
            .filter_map(|f| f.unrendered().cloned())
            .collect();
        if !local.is_empty() {
            let Some(store) = &self.ctx.config_store else {
                return Err(invalid(
                    "spec.configBase",
                    "a local config base needs its store to write the cluster's files to",
                ));
            };
            crate::files::write_all(store.as_ref(), &local).await?;
        }
        render(
            &self.ctx,
            model,
            &RenderOptions::default()
                .with_lifecycle_overrides(self.options.lifecycle_overrides.clone()),
        )
    }
}
