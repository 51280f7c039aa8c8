//! What every cloud's `update cluster` shares: its options, the plan it returns, and the
//! steps around the cloud's own apply (the config-base check, the cluster's state-store
//! lock and its lease, the state written once the cloud is done). Each cloud's
//! `UpdateCluster` ([`crate::aws::UpdateCluster`], [`crate::gce::UpdateCluster`]) runs
//! its own graph between them.

use kops_api::internal::InstanceGroupRole;
use kops_statestore::{Lock, LockRequest, Registry, StoreUrl};
use kops_tasks::{ExecutorOptions, Lifecycle, LifecycleOverrides, OwnedObject, Plan, Report};

use crate::cluster::ClusterContext;
use crate::error::{Error, Result, TaskFailure, invalid, store};

/// A part of the model an update can be limited to (kOps' `update cluster --phase`), for
/// clusters whose network or security objects are changed in a step of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Phase {
    /// The network: VPC or network, subnets, gateways, routes, NAT.
    Network,
    /// Who may reach what: security groups and firewall rules, IAM, the SSH key (and on
    /// GCE the API load balancer, as kOps builds it in this phase).
    Security,
    /// Everything else: machines, load balancers, DNS, the cluster's files.
    Cluster,
}

/// The task kinds of [`Phase::Network`].
const NETWORK_KINDS: &[&str] = &[
    "VPC",
    "VPCCIDRBlock",
    "DHCPOptions",
    "VPCDHCPOptionsAssociation",
    "InternetGateway",
    "EgressOnlyInternetGateway",
    "Subnet",
    "RouteTable",
    "RouteTableAssociation",
    "Route",
    "NatGateway",
    "ElasticIP",
    "Network",
    "Router",
    "RouterNAT",
];

/// The task kinds of [`Phase::Security`].
const SECURITY_KINDS: &[&str] = &[
    "SecurityGroup",
    "SecurityGroupRule",
    "IAMRole",
    "IAMRolePolicy",
    "IAMInstanceProfile",
    "IAMOIDCProvider",
    "SSHKey",
    "FirewallRule",
    "StorageBucketIAM",
    "ProjectIAMBinding",
    "Address",
    "ForwardingRule",
    "TargetPool",
    "HealthCheck",
    "HTTPHealthcheck",
    "BackendService",
];

impl Phase {
    /// Parses a phase as `--phase` takes it: `network`, `security` (also `iam`, kOps' old
    /// name) or `cluster`, in any case; an error names the phases.
    pub fn parse(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "network" => Ok(Phase::Network),
            "security" | "iam" => Ok(Phase::Security),
            "cluster" => Ok(Phase::Cluster),
            other => Err(invalid(
                "phase",
                format!("unknown phase {other:?}; one of network, security, cluster"),
            )),
        }
    }

    /// The phase of a task kind (a kind of no other phase is the cluster's).
    pub fn of_kind(kind: &str) -> Phase {
        if NETWORK_KINDS.contains(&kind) {
            Phase::Network
        } else if SECURITY_KINDS.contains(&kind) {
            Phase::Security
        } else {
            Phase::Cluster
        }
    }

    /// How an update limited to this phase treats a task of another phase, as kOps does:
    /// the phases before it must exist (the network is only warned about while the
    /// security phase runs), the phases after it are left alone.
    fn lifecycle_of(self, kind: &str) -> Option<Lifecycle> {
        match (self, Phase::of_kind(kind)) {
            (a, b) if a == b => None,
            (Phase::Network, _) | (Phase::Security, Phase::Cluster) => Some(Lifecycle::Ignore),
            (Phase::Security, _) => Some(Lifecycle::ExistsAndWarnIfChanges),
            (Phase::Cluster, _) => Some(Lifecycle::ExistsAndValidates),
        }
    }
}

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
    /// A dry run reads every autoscaling group's lifecycle hooks from the cloud (the CLI's
    /// `update cluster --refresh`), instead of trusting kops-rs' record of the last apply
    /// for the groups that have not been recreated since (AWS reads the hooks of one group
    /// per call; see [`crate::aws::UpdateCluster::dry_run`]). An apply always reads.
    pub refresh: bool,
    /// How old a record of the last apply's lifecycle hooks a dry run trusts; `None`:
    /// [`DEFAULT_HOOKS_RECORD_MAX_AGE`](crate::aws::DEFAULT_HOOKS_RECORD_MAX_AGE) (one
    /// hour).
    pub hooks_record_max_age: Option<std::time::Duration>,
    /// Allow direct apply with a config base the cluster's nodes cannot read (`file://`,
    /// `memfs://`): only for clouds without real nodes, such as the mock.
    pub allow_unreadable_config_base: bool,
    /// Build the machines of these instance groups only (kOps' `--instance-group`); the
    /// others' launch templates, autoscaling groups, instance templates and nodeup configs
    /// are left as they are (and never deleted as orphans), while everything the cluster
    /// shares is updated. Wins over [`Self::instance_group_roles`]. Direct apply and plans
    /// only: Terraform would delete what it leaves out.
    pub instance_groups: Vec<String>,
    /// Build the machines of the groups with these roles only (kOps'
    /// `--instance-group-roles`), as [`Self::instance_groups`] does.
    pub instance_group_roles: Vec<InstanceGroupRole>,
    /// Limit the update to one [`Phase`]: the tasks of the later phases are left alone,
    /// those of the earlier ones must exist as described (the network is only warned
    /// about in the security phase). [`Self::lifecycle_overrides`] win over it. Direct
    /// apply and plans only.
    pub phase: Option<Phase>,
    /// Apply even when the state store was last updated by a newer kOps release than
    /// this one (its `kops-version.txt`), which is otherwise refused (kOps'
    /// `--allow-kops-downgrade`).
    pub allow_kops_downgrade: bool,
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
            .field("instance_groups", &self.instance_groups)
            .field("instance_group_roles", &self.instance_group_roles)
            .field("phase", &self.phase)
            .field("allow_kops_downgrade", &self.allow_kops_downgrade)
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

    /// Makes a dry run read every lifecycle hook from the cloud (see [`Self::refresh`]).
    pub fn with_refresh(mut self, refresh: bool) -> Self {
        self.refresh = refresh;
        self
    }

    /// Sets how old a record of the last apply's lifecycle hooks a dry run trusts (see
    /// [`Self::hooks_record_max_age`]).
    pub fn with_hooks_record_max_age(mut self, max_age: std::time::Duration) -> Self {
        self.hooks_record_max_age = Some(max_age);
        self
    }

    /// Allows a config base nodes cannot read (for the mock cloud).
    pub fn with_unreadable_config_base(mut self, allow: bool) -> Self {
        self.allow_unreadable_config_base = allow;
        self
    }

    /// Builds the machines of these instance groups only (see [`Self::instance_groups`]).
    pub fn with_instance_groups(mut self, names: Vec<String>) -> Self {
        self.instance_groups = names;
        self
    }

    /// Builds the machines of the groups with these roles only (see
    /// [`Self::instance_group_roles`]).
    pub fn with_instance_group_roles(mut self, roles: Vec<InstanceGroupRole>) -> Self {
        self.instance_group_roles = roles;
        self
    }

    /// Limits the update to one phase (see [`Self::phase`]).
    pub fn with_phase(mut self, phase: Option<Phase>) -> Self {
        self.phase = phase;
        self
    }

    /// Applies even over a newer kOps release's state (see [`Self::allow_kops_downgrade`]).
    pub fn with_allow_kops_downgrade(mut self, allow: bool) -> Self {
        self.allow_kops_downgrade = allow;
        self
    }

    /// The lifecycle overrides of a model whose tasks are of `kinds`: the phase's (see
    /// [`Self::phase`]), then the given ones over them.
    pub(crate) fn overrides_for<'a>(
        &self,
        kinds: impl IntoIterator<Item = &'a str>,
    ) -> LifecycleOverrides {
        let mut out = self.lifecycle_overrides.clone();
        let Some(phase) = self.phase else {
            return out;
        };
        for kind in kinds {
            if self.lifecycle_overrides.get(kind).is_none()
                && let Some(l) = phase.lifecycle_of(kind)
            {
                out = out.with(kind, l);
            }
        }
        out
    }

    /// Records in `ctx` the groups whose machines the update builds; a named group the
    /// cluster does not have is an error naming it.
    pub(crate) fn select_groups(&self, ctx: &mut ClusterContext) -> Result<()> {
        if !self.instance_groups.is_empty() {
            let missing: Vec<&str> = self
                .instance_groups
                .iter()
                .filter(|n| !ctx.groups.iter().any(|g| g.name() == n.as_str()))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                return Err(invalid(
                    "instance groups",
                    format!(
                        "cluster {} has no instance group {}",
                        ctx.name(),
                        missing.join(", ")
                    ),
                ));
            }
            ctx.updated_groups = Some(self.instance_groups.iter().cloned().collect());
        } else if !self.instance_group_roles.is_empty() {
            let roles = &self.instance_group_roles;
            ctx.updated_groups = Some(
                ctx.groups
                    .iter()
                    .filter(|g| g.spec.role.as_ref().is_some_and(|r| roles.contains(r)))
                    .map(|g| g.name().to_owned())
                    .collect(),
            );
        }
        Ok(())
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
    /// What a dry run took from the record of the last apply.
    pub(crate) recorded_hooks: Option<crate::aws::RecordedHooks>,
}

impl UpdatePlan {
    pub(crate) fn new(plan: Plan, owned: Vec<OwnedObject>) -> Self {
        UpdatePlan {
            plan,
            owned,
            recorded_hooks: None,
        }
    }

    /// The lifecycle hooks a dry run ([`crate::aws::UpdateCluster::dry_run`]) took from
    /// kops-rs' record of the last apply instead of reading them; `None` when it read every
    /// group's (or the plan is not a dry run's).
    pub fn recorded_hooks(&self) -> Option<&crate::aws::RecordedHooks> {
        self.recorded_hooks.as_ref()
    }
}

/// Refuses to render Terraform for some instance groups or one phase only: applied, it
/// would delete the rest.
pub(crate) fn check_all_groups(ctx: &ClusterContext, options: &UpdateOptions) -> Result<()> {
    if ctx.updated_groups.is_some() {
        return Err(invalid(
            "instance groups",
            "the Terraform target renders every instance group: a configuration of some groups only would delete the others when applied",
        ));
    }
    if let Some(phase) = options.phase {
        return Err(invalid(
            "phase",
            format!(
                "the Terraform target renders every phase: a configuration of the {phase:?} phase only would delete the rest when applied"
            ),
        ));
    }
    Ok(())
}

/// The groups of `ctx` whose machines an update leaves as they are.
pub(crate) fn left_groups(ctx: &ClusterContext) -> impl Iterator<Item = &str> {
    ctx.groups
        .iter()
        .filter(|g| !ctx.builds_group(g))
        .map(|g| g.name())
}

/// Extends the lease of `lock` (see [`Lock::renew`]).
pub(crate) async fn renew(lock: &mut Lock, registry: &Registry, name: &str) -> Result<()> {
    lock.renew(registry.clock().as_ref())
        .await
        .map_err(store(format!("renewing the lock of cluster {name}")))
}

/// Runs `work` holding `lock`, renewing its lease every third of it (as measured by
/// `clock`), so that a phase longer than the lease (a large apply, a slow cloud) never
/// lets it run out for someone else to take over. A renewal that fails (the lock was
/// taken over or removed) stops the work there, with that error.
pub(crate) async fn renewing<T>(
    lock: &mut Lock,
    registry: &Registry,
    name: &str,
    clock: &dyn kops_tasks::Clock,
    work: impl std::future::Future<Output = T>,
) -> Result<T> {
    let period = (lock.lease() / 3).max(std::time::Duration::from_millis(1));
    let mut work = std::pin::pin!(work);
    loop {
        tokio::select! {
            done = &mut work => return Ok(done),
            () = clock.sleep(period) => renew(lock, registry, name).await?,
        }
    }
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

/// Refuses to apply `ctx` when its cluster's state was last updated by a newer kOps
/// release than `ctx`'s (the release in `kops-version.txt`), unless `options` allow the
/// downgrade: an older release may not know what the newer one set up. A state without
/// the file (never applied) passes.
pub(crate) async fn check_kops_version(
    ctx: &ClusterContext,
    registry: &Registry,
    options: &UpdateOptions,
) -> Result<()> {
    if options.allow_kops_downgrade {
        return Ok(());
    }
    let name = ctx.name();
    let Some(last) = registry
        .get_kops_version(name)
        .await
        .map_err(store(format!("reading the kOps version of cluster {name}")))?
    else {
        return Ok(());
    };
    let last = last.trim();
    let parse = |v: &str| semver::Version::parse(v.trim().trim_start_matches('v'));
    let field = format!("{name}/kops-version.txt");
    let last_version = parse(last).map_err(|e| {
        invalid(
            field.clone(),
            format!("{last:?} is not a kOps version: {e}"),
        )
    })?;
    let ours = parse(&ctx.kops_release).map_err(|e| {
        invalid(
            "kops release",
            format!("{:?} is not a kOps version: {e}", ctx.kops_release),
        )
    })?;
    if last_version > ours {
        return Err(invalid(
            field,
            format!(
                "cluster {name} was last updated by kOps {last}, newer than this release ({}); allow the downgrade to update it with this one (kOps' --allow-kops-downgrade)",
                ctx.kops_release
            ),
        ));
    }
    Ok(())
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
    // The next command reads the groups from their snapshot, not one by one. Best effort:
    // without it, a command only reads more.
    if let Err(e) = registry.refresh_instance_group_snapshot(name).await {
        tracing::warn!(cluster = name, error = %e, "could not refresh the instance groups' snapshot");
    }
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
        skipped: report.skipped.len(),
        failed: report
            .failed
            .into_iter()
            .map(|(k, e)| TaskFailure::new(k, e))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, SystemTime};

    use kops_statestore::{Clock, LockRequest, MemoryStore, Store};
    use kops_tasks::TokioClock;

    use super::*;

    /// Wall time that follows tokio's (paused) clock, so leases expire as the test's
    /// sleeps pass.
    #[derive(Debug)]
    struct TokioWall(SystemTime, tokio::time::Instant);

    impl Clock for TokioWall {
        fn now(&self) -> SystemTime {
            self.0 + self.1.elapsed()
        }
    }

    const NAME: &str = "lease.example.com";

    async fn held(lease: Duration) -> (Arc<MemoryStore>, Registry, Lock) {
        let store = Arc::new(MemoryStore::new());
        let wall = TokioWall(SystemTime::UNIX_EPOCH, tokio::time::Instant::now());
        let registry = Registry::new(store.clone() as Arc<dyn Store>, Arc::new(wall));
        let lock = registry
            .lock(
                NAME,
                &LockRequest::new("apply", "update cluster").with_lease(lease),
            )
            .await
            .unwrap();
        (store, registry, lock)
    }

    #[tokio::test(start_paused = true)]
    async fn a_phase_longer_than_the_lease_keeps_the_lock() {
        let (_store, registry, mut lock) = held(Duration::from_secs(60)).await;
        let clock = TokioClock::new();
        let work = tokio::time::sleep(Duration::from_secs(600));
        renewing(&mut lock, &registry, NAME, &clock, work)
            .await
            .unwrap();
        // Ten leases later, nobody else can take it: it was renewed all along.
        let other = registry
            .lock(NAME, &LockRequest::new("other", "update cluster"))
            .await;
        assert!(other.is_err(), "the lease ran out during the phase");
        lock.release().await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_lost_lock_stops_the_phase() {
        let (store, registry, mut lock) = held(Duration::from_secs(60)).await;
        let clock = TokioClock::new();
        let finished = AtomicBool::new(false);
        let work = async {
            // Someone removes the lock (force-unlock) while the phase runs.
            store.delete(&Registry::lock_path(NAME)).await.unwrap();
            tokio::time::sleep(Duration::from_secs(600)).await;
            finished.store(true, Ordering::SeqCst);
        };
        let err = renewing(&mut lock, &registry, NAME, &clock, work)
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("renewing the lock of cluster {NAME}")),
            "{err}"
        );
        assert!(!finished.load(Ordering::SeqCst), "the phase ran on");
    }
}

/// The update workflow a cloud without orphan deletion shares (GCE, Hetzner): the task
/// graph of a context `X` over cloud `C`, built once, planned, applied holding the
/// cluster's lock (the tasks, then the completed spec and the kOps release). Each cloud's
/// public `UpdateCluster` wraps one.
#[derive(Debug)]
pub(crate) struct Workflow<X, C: ?Sized + Sync> {
    pub(crate) ctx: X,
    pub(crate) graph: kops_tasks::TaskGraph<C>,
    pub(crate) options: UpdateOptions,
    /// The store this cloud's nodes read their configuration from, as advice
    /// (`gs://my-kops-state`).
    remote_store: &'static str,
}

impl<X, C> Workflow<X, C>
where
    X: std::ops::Deref<Target = ClusterContext>,
    C: ?Sized + Sync,
{
    /// Builds the graph of the tasks `build` makes of `ctx` (already limited to the
    /// options' groups: [`UpdateOptions::select_groups`]) with the options' lifecycle
    /// overrides.
    pub(crate) fn new(
        ctx: X,
        options: UpdateOptions,
        remote_store: &'static str,
        build: impl FnOnce(&X) -> Result<Vec<Box<dyn kops_tasks::Task<C>>>>,
    ) -> Result<Self> {
        let tasks = build(&ctx)?;
        let kinds: std::collections::BTreeSet<String> =
            tasks.iter().map(|t| t.key().kind().to_owned()).collect();
        let overrides = options.overrides_for(kinds.iter().map(String::as_str));
        let graph = kops_tasks::TaskGraph::build_with(tasks, &overrides)?;
        Ok(Workflow {
            ctx,
            graph,
            options,
            remote_store,
        })
    }

    /// Plans the update against `api`.
    pub(crate) async fn plan(&self, api: &C) -> Result<UpdatePlan> {
        let plan = kops_tasks::Executor::new(self.options.executor.clone())
            .plan(&self.graph, api)
            .await
            .map_err(crate::error::cloud(format!(
                "planning cluster {}",
                self.ctx.name()
            )))?;
        Ok(UpdatePlan::new(plan, Vec::new()))
    }

    /// Applies the update, taking and releasing the cluster's lock in `registry`.
    pub(crate) async fn apply(
        &self,
        api: &C,
        registry: &Registry,
        plan: &UpdatePlan,
        options: ApplyOptions,
    ) -> Result<Plan> {
        check_config_base(&self.ctx, &self.options, self.remote_store)?;
        holding_lock(registry, self.ctx.name(), &self.options, async |lock| {
            self.apply_holding(api, registry, plan, lock, options).await
        })
        .await
    }

    /// Applies the update holding `lock`, renewing its lease while the tasks run.
    pub(crate) async fn apply_holding(
        &self,
        api: &C,
        registry: &Registry,
        plan: &UpdatePlan,
        lock: &mut Lock,
        options: ApplyOptions,
    ) -> Result<Plan> {
        check_config_base(&self.ctx, &self.options, self.remote_store)?;
        let name = self.ctx.name();
        check_lock(lock, name)?;
        check_kops_version(&self.ctx, registry, &self.options).await?;
        // Nothing is deleted because the spec stopped describing it.
        debug_assert!(plan.owned.is_empty());
        let executor = kops_tasks::Executor::new(
            options
                .executor
                .unwrap_or_else(|| self.options.executor.clone()),
        );
        renew(lock, registry, name).await?;
        let clock = executor.options().clock.clone();
        let report = renewing(
            lock,
            registry,
            name,
            clock.as_ref(),
            executor.apply(&self.graph, api),
        )
        .await?;
        let applied = applied(name, report)?;
        write_state(&self.ctx, registry, lock).await?;
        Ok(applied)
    }
}

/// Plans `tasks` against `api` with the default executor: what [`crate::gce::plan`] and
/// [`crate::hetzner::plan`] do, without a state store.
pub(crate) async fn plan_tasks<C: ?Sized + Sync>(
    name: &str,
    tasks: Vec<Box<dyn kops_tasks::Task<C>>>,
    overrides: &LifecycleOverrides,
    api: &C,
) -> Result<Plan> {
    let graph = kops_tasks::TaskGraph::build_with(tasks, overrides)?;
    kops_tasks::Executor::new(ExecutorOptions::default())
        .plan(&graph, api)
        .await
        .map_err(crate::error::cloud(format!("planning cluster {name}")))
}

/// Applies `tasks` to `api` with the default executor; an error lists every failed task.
pub(crate) async fn apply_tasks<C: ?Sized + Sync>(
    name: &str,
    tasks: Vec<Box<dyn kops_tasks::Task<C>>>,
    overrides: &LifecycleOverrides,
    api: &C,
) -> Result<Plan> {
    let graph = kops_tasks::TaskGraph::build_with(tasks, overrides)?;
    let report = kops_tasks::Executor::new(ExecutorOptions::default())
        .apply(&graph, api)
        .await;
    applied(name, report)
}
