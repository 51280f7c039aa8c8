//! What every cloud's `update cluster` shares: its options, the plan it returns, and the
//! steps around the cloud's own apply (the config-base check, the cluster's state-store
//! lock and its lease, the state written once the cloud is done). Each cloud's
//! `UpdateCluster` ([`crate::aws::UpdateCluster`], [`crate::gce::UpdateCluster`]) runs
//! its own graph between them.

use kops_statestore::{Lock, LockRequest, Registry, StoreUrl};
use kops_tasks::{ExecutorOptions, LifecycleOverrides, OwnedObject, Plan, Report};

use crate::cluster::ClusterContext;
use crate::error::{Error, Result, chain, invalid, store};

/// Options of a cloud's `UpdateCluster` ([`crate::aws::UpdateCluster`],
/// [`crate::gce::UpdateCluster`]).
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

/// Options of one apply of an `UpdateCluster`.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct ApplyOptions {
    /// How the executor runs this apply (progress callback, concurrency, retries);
    /// `None` keeps [`UpdateOptions::executor`].
    pub executor: Option<ExecutorOptions>,
    /// Also perform deferred deletions (kOps' `--prune`): security-group rules, load
    /// balancers, target groups and volumes the spec no longer needs. Only AWS' update
    /// deletes what the spec no longer describes; on GCE this has no effect.
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

/// A plan of a cluster update: the tasks' plan plus the objects it deletes because the
/// spec no longer describes them (AWS; none on GCE).
#[derive(Debug)]
#[non_exhaustive]
pub struct UpdatePlan {
    /// What would change, deletions included.
    pub plan: Plan,
    pub(crate) owned: Vec<OwnedObject>,
}

impl UpdatePlan {
    pub(crate) fn new(plan: Plan, owned: Vec<OwnedObject>) -> Self {
        UpdatePlan { plan, owned }
    }
}

/// Extends the lease of `lock` (see [`Lock::renew`]).
pub(crate) async fn renew(lock: &mut Lock, registry: &Registry, name: &str) -> Result<()> {
    lock.renew(registry.clock().as_ref())
        .await
        .map_err(store(format!("renewing the lock of cluster {name}")))
}

/// Refuses a config base the cluster's nodes cannot read (a local directory, an
/// in-memory store), unless `options` allow it; `remote` is the store nodes of this
/// cloud read, as advice (`s3://my-kops-state`).
pub(crate) fn check_config_base(
    ctx: &ClusterContext,
    options: &UpdateOptions,
    remote: &str,
) -> Result<()> {
    if options.allow_unreadable_config_base {
        return Ok(());
    }
    let (base, url) = ctx.config_base()?;
    let what = match url {
        StoreUrl::File { .. } => "a local directory",
        StoreUrl::Memory { .. } => "an in-memory store",
        _ => return Ok(()),
    };
    let scheme = remote.split("//").next().unwrap_or(remote);
    Err(invalid(
        "spec.configBase",
        format!(
            "{base} is {what}: the cluster's nodes read their configuration (nodeup configs, addons, manifests) from the config base and cannot reach it; keep the cluster in a {scheme}// state store (e.g. --state {remote}) or render it with the Terraform target"
        ),
    ))
}

/// Runs `apply` holding the lock of cluster `name` in `registry`, taken here and
/// released afterwards whatever the outcome; the apply's error wins over the release's.
pub(crate) async fn holding_lock<T>(
    registry: &Registry,
    name: &str,
    options: &UpdateOptions,
    apply: impl AsyncFnOnce(&mut Lock) -> Result<T>,
) -> Result<T> {
    let mut lock = registry
        .lock(name, &options.request())
        .await
        .map_err(store(format!("taking the lock of cluster {name}")))?;
    let result = apply(&mut lock).await;
    let released = lock
        .release()
        .await
        .map_err(store(format!("releasing the lock of cluster {name}")));
    let applied = result?;
    released?;
    Ok(applied)
}

/// Refuses a lock that is not the lock of cluster `name`.
pub(crate) fn check_lock(lock: &Lock, name: &str) -> Result<()> {
    if lock.path() == Registry::lock_path(name) {
        return Ok(());
    }
    Err(invalid(
        "lock",
        format!(
            "the lock held is {}, not the lock of cluster {name}",
            lock.path()
        ),
    ))
}

/// Writes what an apply leaves in the state store once the cloud is done: the completed
/// spec and the kOps release, renewing the lease first.
pub(crate) async fn write_state(
    ctx: &ClusterContext,
    registry: &Registry,
    lock: &mut Lock,
) -> Result<()> {
    let name = ctx.name();
    renew(lock, registry, name).await?;
    let full = kops_api::v1alpha2::Cluster::from(&ctx.cluster);
    registry
        .put_completed_spec(&full)
        .await
        .map_err(store(format!(
            "writing the completed spec of cluster {name}"
        )))?;
    registry
        .put_kops_version(name, &ctx.kops_release)
        .await
        .map_err(store(format!("writing the kOps version of cluster {name}")))?;
    Ok(())
}

/// The plan of what an apply of cluster `name` did, or an error listing every task that
/// failed (with its causes) and how many were not run because of them.
pub(crate) fn applied(name: &str, report: Report) -> Result<Plan> {
    if report.failed.is_empty() {
        return Ok(report.plan);
    }
    Err(Error::Apply {
        cluster: name.to_owned(),
        failed: report
            .failed
            .iter()
            .map(|(k, e)| (k.clone(), chain(e)))
            .collect(),
        skipped: report.skipped.len(),
    })
}
