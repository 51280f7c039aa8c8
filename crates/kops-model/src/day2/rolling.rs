//! `kops rolling-update cluster` with kOps' semantics (`pkg/instancegroups`): which
//! instances need an update and why, the order across groups (bastions, control plane one
//! group at a time and never surged, API servers, nodes), `maxSurge`/`maxUnavailable` with
//! kOps' defaults and rounding, the canary, taint, cordon, exclusion from load balancers,
//! drain with PDB-aware eviction, deleting the Node object, terminate (on GCE: recreate in
//! place, never surged), validate. [`RollingUpdate::delete_instance`] replaces one instance,
//! named by its ID or its node, the same way (kOps' `delete instance`).
//!
//! Beyond kOps: a [`Journal`] in the state store records what a run set out to replace and
//! what it replaced, so a run that was interrupted resumes and replaces nothing twice (even
//! with `force`); a stop signal lets the current step finish and removes the taints and
//! cordons the run set on nodes it did not drain; a blocked eviction names its budget.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use k8s_openapi::api::core::v1::{Node, Pod, Taint};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kops_api::internal::{Cluster, InstanceGroup, InstanceGroupRole};
use kops_api::v1alpha2::IntOrString;
use kops_statestore::{PutOptions, Store, StoreExt};
use kube::api::{Api, DeleteParams, EvictParams, ListParams, Patch, PatchParams};
use serde_json::json;

use super::groups::{CloudGroup, InstanceGroupCloud, MemberStatus};
use super::validate::{ClusterValidator, ValidationCluster};
use crate::{Error, Result};

/// The taint kOps puts on every node it is about to replace.
pub const UPDATE_TAINT: &str = "kops.k8s.io/scheduled-for-update";
/// The Node annotation that marks a node for replacement (set by the channels tool).
pub const NEEDS_UPDATE_ANNOTATION: &str = "kops.k8s.io/needs-update";
/// The label that takes a node out of external load balancers while it drains.
pub const EXCLUDE_LB_LABEL: &str = "node.kubernetes.io/exclude-from-external-load-balancers";

/// Options of a rolling update, with kOps' defaults.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RollingOptions {
    /// `--force`: replace up-to-date instances too.
    pub force: bool,
    /// `--cloudonly`: no Kubernetes API (no taint, drain or validation).
    pub cloud_only: bool,
    /// `--instance-group`: only these groups (an unknown name is an error).
    pub instance_groups: Vec<String>,
    /// `--instance-group-roles`: only groups of these roles.
    pub roles: Vec<InstanceGroupRole>,
    /// `--validation-timeout` (15m): per validation episode.
    pub validation_timeout: Duration,
    /// `--validate-count` (2): consecutive successes after each replacement; 0 skips them.
    pub validate_count: u32,
    /// `--drain-timeout` (15m) per node.
    pub drain_timeout: Duration,
    /// `--post-drain-delay` (5s).
    pub post_drain_delay: Duration,
    /// `--bastion-interval` (15s), slept after each bastion termination.
    pub bastion_interval: Duration,
    /// `--control-plane-interval` (15s).
    pub control_plane_interval: Duration,
    /// `--node-interval` (15s), also for API-server groups.
    pub node_interval: Duration,
    /// `--fail-on-validate-error` (true).
    pub fail_on_validate_error: bool,
    /// `--fail-on-drain-error` (true).
    pub fail_on_drain_error: bool,
    /// Pause after a failed validation (kOps: 30s, not a flag).
    pub validate_tick: Duration,
    /// Pause after a successful validation before the next (kOps: 10s).
    pub validate_success_interval: Duration,
    /// Pause between refused evictions (kOps: 5s).
    pub evict_retry: Duration,
    /// `maxSurge` when neither the group nor the cluster sets one, on a cloud that can surge
    /// (1, kOps' AWS default); on one that cannot (GCE, see
    /// [`InstanceGroupCloud::can_surge`]) it is always 0.
    pub default_max_surge: i64,
}

impl Default for RollingOptions {
    fn default() -> Self {
        let m15 = Duration::from_secs(15 * 60);
        let s15 = Duration::from_secs(15);
        RollingOptions {
            force: false,
            cloud_only: false,
            instance_groups: Vec::new(),
            roles: Vec::new(),
            validation_timeout: m15,
            validate_count: 2,
            drain_timeout: m15,
            post_drain_delay: Duration::from_secs(5),
            bastion_interval: s15,
            control_plane_interval: s15,
            node_interval: s15,
            fail_on_validate_error: true,
            fail_on_drain_error: true,
            validate_tick: Duration::from_secs(30),
            validate_success_interval: Duration::from_secs(10),
            evict_retry: Duration::from_secs(5),
            default_max_surge: 1,
        }
    }
}

macro_rules! setters {
    ($($(#[$m:meta])* $name:ident : $field:ident : $t:ty;)*) => {
        impl RollingOptions {
            $($(#[$m])* pub fn $name(mut self, v: $t) -> Self { self.$field = v; self })*
        }
    };
}

setters! {
    /// Sets `force`.
    with_force: force: bool;
    /// Sets `cloud_only`.
    with_cloud_only: cloud_only: bool;
    /// Sets `instance_groups`.
    with_instance_groups: instance_groups: Vec<String>;
    /// Sets `roles`.
    with_roles: roles: Vec<InstanceGroupRole>;
    /// Sets `validation_timeout`.
    with_validation_timeout: validation_timeout: Duration;
    /// Sets `validate_count`.
    with_validate_count: validate_count: u32;
    /// Sets `drain_timeout`.
    with_drain_timeout: drain_timeout: Duration;
    /// Sets `post_drain_delay`.
    with_post_drain_delay: post_drain_delay: Duration;
    /// Sets `bastion_interval`.
    with_bastion_interval: bastion_interval: Duration;
    /// Sets `control_plane_interval`.
    with_control_plane_interval: control_plane_interval: Duration;
    /// Sets `node_interval`.
    with_node_interval: node_interval: Duration;
    /// Sets `fail_on_validate_error`.
    with_fail_on_validate_error: fail_on_validate_error: bool;
    /// Sets `fail_on_drain_error`.
    with_fail_on_drain_error: fail_on_drain_error: bool;
    /// Sets `default_max_surge`.
    with_default_max_surge: default_max_surge: i64;
    /// Sets `validate_tick`.
    with_validate_tick: validate_tick: Duration;
    /// Sets `validate_success_interval`.
    with_validate_success_interval: validate_success_interval: Duration;
    /// Sets `evict_retry`.
    with_evict_retry: evict_retry: Duration;
}

/// An instance to replace.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InstancePlan {
    /// Instance id.
    pub id: String,
    /// Its node, when registered.
    pub node: Option<String>,
    /// Why it is replaced.
    pub reason: String,
    /// Detached by an earlier surge.
    pub detached: bool,
    /// Waits in the warm pool: terminated at once, without drain or validation.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub warm_pool: bool,
}

/// One instance of a cluster, as [`RollingUpdate::find_instance`] finds it for
/// `kops delete instance`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FoundInstance {
    /// The instance's ID (AWS) or name (GCE).
    pub id: String,
    /// The name of the node running on it, when the Kubernetes API lists one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Its instance group.
    pub instance_group: String,
}

/// One group's part of the plan (kOps' table row plus the instances).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GroupPlan {
    /// Instance group.
    pub name: String,
    /// Its cloud group.
    pub cloud_group: String,
    /// `ControlPlane`, `Node`, `Bastion`, `APIServer`.
    pub role: String,
    /// `Ready` or `NeedsUpdate`.
    pub status: String,
    /// Members to replace.
    pub need_update: usize,
    /// Members that are up to date.
    pub ready: usize,
    /// Minimum size.
    pub min: i32,
    /// Target (desired) size.
    pub target: i32,
    /// Maximum size.
    pub max: i32,
    /// Members registered as nodes (`None` with `cloud_only`).
    pub nodes: Option<usize>,
    /// The resolved `maxSurge` for this group (after the control-plane rule and capping).
    pub max_surge: i64,
    /// The resolved `maxUnavailable`.
    pub max_unavailable: i64,
    /// Whether no member is up to date (the first replacement is a canary).
    pub canary: bool,
    /// Instances to replace, in the order they will be.
    pub update: Vec<InstancePlan>,
}

/// What a rolling update would do.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
#[non_exhaustive]
pub struct Plan {
    /// Groups in the order they roll.
    pub groups: Vec<GroupPlan>,
    /// Whether this plan continues an interrupted run from the journal.
    pub resumed: bool,
}

impl Plan {
    /// Whether any instance is to be replaced.
    pub fn needs_update(&self) -> bool {
        self.groups.iter().any(|g| g.need_update > 0)
    }
}

/// Something a rolling update did, for progress output and tests.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Event {
    /// Instance group.
    pub group: String,
    /// `validate`, `taint`, `detach`, `drain`, `evict-blocked`, `terminate`,
    /// `terminated`, `untaint`, `skip`.
    pub action: String,
    /// Instance, when there is one.
    pub instance: Option<String>,
    /// Detail (node, pod, budget, failure).
    pub detail: Option<String>,
}

/// Receives [`Event`]s.
pub type EventSink = Arc<dyn Fn(&Event) + Send + Sync>;

/// The state-store record of a run (`<cluster>/rolling-update/journal.json`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct JournalRecord {
    /// Per instance group, the instances the run set out to replace.
    pub planned: BTreeMap<String, Vec<String>>,
    /// Instances replaced (terminated) so far.
    pub done: BTreeSet<String>,
    /// Nodes this run tainted or cordoned and has not drained.
    pub marked: BTreeSet<String>,
}

/// Where a rolling update records its progress.
#[derive(Clone)]
pub struct Journal {
    store: Arc<dyn Store>,
    path: String,
    record: Arc<tokio::sync::Mutex<Option<JournalRecord>>>,
}

impl fmt::Debug for Journal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Journal")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

fn store_err(operation: String) -> impl FnOnce(kops_statestore::Error) -> Error {
    move |source| Error::StateStore { operation, source }
}

impl Journal {
    /// The journal of `cluster` in `store` (`<cluster>/rolling-update/journal.json`).
    pub fn new(store: Arc<dyn Store>, cluster: &str) -> Journal {
        Journal {
            store,
            path: format!("{cluster}/rolling-update/journal.json"),
            record: Arc::new(tokio::sync::Mutex::new(None)),
        }
    }

    /// The record of an unfinished run, if any.
    pub async fn load(&self) -> Result<Option<JournalRecord>> {
        let got = self
            .store
            .get_opt(&self.path)
            .await
            .map_err(store_err(format!("reading {}", self.path)))?;
        let Some(got) = got else {
            return Ok(None);
        };
        let rec: JournalRecord = serde_json::from_slice(&got.data).map_err(|e| Error::Invalid {
            field: self.path.clone(),
            message: e.to_string(),
        })?;
        *self.record.lock().await = Some(rec.clone());
        Ok(Some(rec))
    }

    async fn update(&self, f: impl FnOnce(&mut JournalRecord)) -> Result<()> {
        let mut guard = self.record.lock().await;
        let rec = guard.get_or_insert_with(JournalRecord::default);
        f(rec);
        let data = serde_json::to_vec_pretty(rec).map_err(|e| Error::Invalid {
            field: self.path.clone(),
            message: e.to_string(),
        })?;
        self.store
            .put(&self.path, Bytes::from(data), PutOptions::overwrite())
            .await
            .map_err(store_err(format!("writing {}", self.path)))?;
        Ok(())
    }

    async fn finish(&self) -> Result<()> {
        *self.record.lock().await = None;
        self.store
            .delete(&self.path)
            .await
            .map_err(store_err(format!("removing {}", self.path)))
    }
}

/// What a finished (or stopped) run did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct RollingReport {
    /// Instances terminated, in order.
    pub replaced: Vec<String>,
    /// Errors of groups whose failure did not stop the roll.
    pub errors: Vec<String>,
    /// Whether the run stopped on the stop signal.
    pub stopped: bool,
}

fn role_label(role: Option<&InstanceGroupRole>) -> String {
    match role {
        Some(InstanceGroupRole::ControlPlane) => "ControlPlane".into(),
        Some(InstanceGroupRole::Node) => "Node".into(),
        Some(InstanceGroupRole::Bastion) => "Bastion".into(),
        Some(InstanceGroupRole::ApiServer) => "APIServer".into(),
        Some(InstanceGroupRole::Unknown(s)) => s.clone(),
        None => "Node".into(),
    }
}

/// `value` scaled against `total`: percentages rounded up or down.
fn scaled(value: &IntOrString, total: i64, round_up: bool) -> i64 {
    match value {
        IntOrString::Int(n) => *n,
        IntOrString::String(s) => {
            let pct: i64 = s.trim().trim_end_matches('%').parse().unwrap_or(0);
            if round_up {
                (pct * total + 99) / 100
            } else {
                pct * total / 100
            }
        }
    }
}

/// kOps' `resolveSettings`: (drainAndTerminate, maxSurge, maxUnavailable) for a group of
/// `num_instances`, the group's fields winning over the cluster's, field by field.
pub fn resolve_settings(
    cluster: &Cluster,
    group: &InstanceGroup,
    num_instances: i64,
    default_max_surge: i64,
) -> (bool, i64, i64) {
    let ig = group.spec.rolling_update.clone().unwrap_or_default();
    let def = cluster.spec.rolling_update.clone().unwrap_or_default();
    let drain = ig
        .drain_and_terminate
        .or(def.drain_and_terminate)
        .unwrap_or(true);
    let surge = match ig.max_surge.or(def.max_surge) {
        Some(v) => scaled(&v, num_instances, true),
        None => default_max_surge,
    };
    let unavailable = match ig.max_unavailable.or(def.max_unavailable) {
        Some(v @ IntOrString::String(_)) => scaled(&v, num_instances, false).max(1),
        Some(v) => scaled(&v, num_instances, false),
        None if surge == 0 => 1,
        None => 0,
    };
    (drain, surge, unavailable)
}

/// The resolved (surge, concurrency) kOps uses for `update` instances of `group`: surge
/// capped at the update count; control-plane groups never surge and run at least one.
pub fn surge_and_concurrency(
    group: &InstanceGroup,
    surge: i64,
    unavailable: i64,
    update: usize,
) -> (i64, i64) {
    let surge = surge.min(update as i64).max(0);
    if group.is_control_plane() {
        return (0, unavailable.max(1));
    }
    (surge, surge + unavailable)
}

/// A rolling update of one cluster.
pub struct RollingUpdate {
    cloud: Arc<dyn InstanceGroupCloud>,
    client: Option<kube::Client>,
    validator: Option<Arc<dyn ClusterValidator>>,
    journal: Option<Journal>,
    options: RollingOptions,
    events: Option<EventSink>,
    stop: Option<tokio::sync::watch::Receiver<bool>>,
    replaced: Mutex<Vec<String>>,
    /// Whether control-plane and API-server instances leave the load balancers before
    /// their drain (off when the cluster has a single one, as kOps does).
    deregister_control_plane: std::sync::atomic::AtomicBool,
}

/// A group's failure, and whether it stops the roll (kOps' exitable errors: a validation
/// timeout, a failed deregistration) or only this group.
struct GroupFailure {
    error: Error,
    exitable: bool,
}

impl From<Error> for GroupFailure {
    fn from(error: Error) -> Self {
        GroupFailure {
            error,
            exitable: false,
        }
    }
}

fn exitable(error: Error) -> GroupFailure {
    GroupFailure {
        error,
        exitable: true,
    }
}

type Drains<'a> = FuturesUnordered<
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), GroupFailure>> + Send + 'a>>,
>;

/// Waits for the drains still running, then fails with `e` (kOps'
/// `waitForPendingBeforeReturningError`).
async fn fail(mut running: Drains<'_>, e: GroupFailure) -> Result<(), GroupFailure> {
    while running.next().await.is_some() {}
    Err(e)
}

/// Awaits `fut` while the drains already started keep running (as kOps' goroutines do);
/// their results are queued in `done`.
async fn driving<'a, T>(
    running: &mut Drains<'a>,
    done: &mut Vec<Result<(), GroupFailure>>,
    fut: impl std::future::Future<Output = T>,
) -> T {
    let mut fut = std::pin::pin!(fut);
    loop {
        tokio::select! {
            biased;
            out = &mut fut => return out,
            Some(r) = running.next(), if !running.is_empty() => done.push(r),
        }
    }
}

impl fmt::Debug for RollingUpdate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RollingUpdate")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

fn kube_err(operation: String) -> impl FnOnce(kube::Error) -> Error {
    move |e| Error::Kubernetes {
        operation,
        source: Box::new(e),
    }
}

fn is_not_found(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 404)
}

fn is_too_many_requests(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 429)
}

struct Target {
    update: Vec<InstancePlan>,
    ready: usize,
    nodes: usize,
}

impl RollingUpdate {
    /// A rolling update over `cloud`. Without [`with_kube`](Self::with_kube) it behaves as
    /// `--cloudonly`.
    pub fn new(cloud: Arc<dyn InstanceGroupCloud>, options: RollingOptions) -> Self {
        RollingUpdate {
            cloud,
            client: None,
            validator: None,
            journal: None,
            options,
            events: None,
            stop: None,
            replaced: Mutex::new(Vec::new()),
            deregister_control_plane: std::sync::atomic::AtomicBool::new(true),
        }
    }

    /// The Kubernetes API (for the node list, taint, drain) and the validator.
    pub fn with_kube(mut self, client: kube::Client, validator: Arc<dyn ClusterValidator>) -> Self {
        self.client = Some(client);
        self.validator = Some(validator);
        self
    }

    /// Records progress in `journal` and resumes an unfinished run found there.
    pub fn with_journal(mut self, journal: Journal) -> Self {
        self.journal = Some(journal);
        self
    }

    /// Sends each [`Event`] to `sink`.
    pub fn with_events(mut self, sink: EventSink) -> Self {
        self.events = Some(sink);
        self
    }

    /// Stops after the current steps when `stop` turns true (SIGINT), removing the taints
    /// and cordons set on nodes not yet drained; the journal keeps the rest for a re-run.
    pub fn with_stop(mut self, stop: tokio::sync::watch::Receiver<bool>) -> Self {
        self.stop = Some(stop);
        self
    }

    fn cloud_only(&self) -> bool {
        self.options.cloud_only || self.client.is_none()
    }

    fn stopped(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| *s.borrow())
    }

    fn emit(&self, group: &str, action: &str, instance: Option<&str>, detail: Option<String>) {
        tracing::info!(
            group,
            action,
            instance,
            detail = detail.as_deref(),
            "rolling update"
        );
        if let Some(sink) = &self.events {
            sink(&Event {
                group: group.to_owned(),
                action: action.to_owned(),
                instance: instance.map(str::to_owned),
                detail,
            });
        }
    }

    async fn list_nodes(&self) -> Result<Vec<Node>> {
        let Some(client) = &self.client else {
            return Ok(Vec::new());
        };
        if self.options.cloud_only {
            return Ok(Vec::new());
        }
        Api::<Node>::all(client.clone())
            .list(&ListParams::default())
            .await
            .map(|l| l.items)
            .map_err(|e| Error::Kubernetes {
                operation: "unable to reach the Kubernetes API (use --cloudonly to roll without it): listing nodes".into(),
                source: Box::new(e),
            })
    }

    fn select<'a>(&self, groups: &'a [InstanceGroup]) -> Result<Vec<&'a InstanceGroup>> {
        for name in &self.options.instance_groups {
            if !groups.iter().any(|g| g.name() == name) {
                return Err(Error::Invalid {
                    field: "--instance-group".into(),
                    message: format!("instance group {name:?} not found"),
                });
            }
        }
        Ok(groups
            .iter()
            .filter(|g| {
                self.options.instance_groups.is_empty()
                    || self.options.instance_groups.iter().any(|n| n == g.name())
            })
            .filter(|g| {
                self.options.roles.is_empty()
                    || self
                        .options
                        .roles
                        .contains(g.spec.role.as_ref().unwrap_or(&InstanceGroupRole::Node))
            })
            .collect())
    }

    /// (drainAndTerminate, surge, concurrency) for replacing `update` of the `num`
    /// instances of `group`. On a cloud that cannot surge the default is 0 and a
    /// `maxSurge` the spec sets counts as 0, at least one instance at a time.
    fn settings(
        &self,
        cluster: &Cluster,
        group: &InstanceGroup,
        num: i64,
        update: usize,
    ) -> (bool, i64, i64) {
        let surges = self.cloud.can_surge();
        let default = if surges {
            self.options.default_max_surge
        } else {
            0
        };
        let (drain, mut surge, mut unavailable) = resolve_settings(cluster, group, num, default);
        if !surges && surge > 0 {
            surge = 0;
            unavailable = unavailable.max(1);
        }
        let (surge, concurrency) = surge_and_concurrency(group, surge, unavailable, update);
        (drain, surge, concurrency)
    }

    /// The plan: for each selected group (in rolling order) the instances to replace and
    /// why. Reads the journal when there is one: an unfinished run's remaining instances are
    /// planned, its replaced ones never again.
    pub async fn plan(&self, cluster: &Cluster, groups: &[InstanceGroup]) -> Result<Plan> {
        let (plan, _, _) = self.snapshot(cluster, groups).await?;
        Ok(plan)
    }

    async fn snapshot(
        &self,
        cluster: &Cluster,
        groups: &[InstanceGroup],
    ) -> Result<(Plan, Vec<CloudGroup>, Vec<Node>)> {
        let selected = self.select(groups)?;
        let nodes = self.list_nodes().await?;
        let owned: Vec<InstanceGroup> = selected.iter().map(|g| (*g).clone()).collect();
        let cloud_groups = self.cloud.cloud_groups(cluster.name(), &owned).await?;
        let journal = match &self.journal {
            Some(j) => j.load().await?,
            None => None,
        };
        let node_of: BTreeMap<String, &Node> = nodes
            .iter()
            .filter_map(|n| super::validate::instance_of(n).map(|i| (i, n)))
            .collect();
        let mut plans = Vec::new();
        for order in [
            InstanceGroupRole::Bastion,
            InstanceGroupRole::ControlPlane,
            InstanceGroupRole::ApiServer,
            InstanceGroupRole::Node,
        ] {
            let mut in_role: Vec<&&InstanceGroup> = selected
                .iter()
                .filter(|g| g.spec.role.as_ref().unwrap_or(&InstanceGroupRole::Node) == &order)
                .collect();
            in_role.sort_by(|a, b| a.name().cmp(b.name()));
            for g in in_role {
                let Some(cg) = cloud_groups.iter().find(|c| c.instance_group == g.name()) else {
                    continue;
                };
                let t = self.target(g, cg, &node_of, journal.as_ref());
                let num = (t.update.len() + t.ready) as i64;
                let (_, surge, concurrency) = self.settings(cluster, g, num, t.update.len());
                plans.push(GroupPlan {
                    name: g.name().to_owned(),
                    cloud_group: cg.group.clone(),
                    role: role_label(g.spec.role.as_ref()),
                    status: if t.update.is_empty() {
                        "Ready"
                    } else {
                        "NeedsUpdate"
                    }
                    .into(),
                    need_update: t.update.len(),
                    ready: t.ready,
                    min: cg.min_size,
                    target: cg.target_size,
                    max: cg.max_size,
                    nodes: (!self.cloud_only()).then_some(t.nodes),
                    max_surge: surge,
                    max_unavailable: concurrency - surge,
                    canary: t.ready == 0,
                    update: t.update,
                });
            }
        }
        let resumed = journal.is_some();
        // Unknown roles are kOps' "unknown group type".
        if let Some(g) = selected
            .iter()
            .find(|g| matches!(g.spec.role, Some(InstanceGroupRole::Unknown(_))))
        {
            return Err(Error::Invalid {
                field: format!("instancegroup {}: spec.role", g.name()),
                message: "unknown group type".into(),
            });
        }
        Ok((
            Plan {
                groups: plans,
                resumed,
            },
            cloud_groups,
            nodes,
        ))
    }

    fn target(
        &self,
        group: &InstanceGroup,
        cg: &CloudGroup,
        node_of: &BTreeMap<String, &Node>,
        journal: Option<&JournalRecord>,
    ) -> Target {
        let planned: BTreeSet<&String> = journal
            .and_then(|j| j.planned.get(group.name()))
            .map(|v| v.iter().collect())
            .unwrap_or_default();
        let done = journal.map(|j| &j.done);
        let mut update = Vec::new();
        let mut detached = Vec::new();
        let mut ready = 0;
        let mut nodes = 0;
        for m in &cg.members {
            let node = node_of.get(&m.id);
            if node.is_some() {
                nodes += 1;
            }
            if done.is_some_and(|d| d.contains(&m.id)) {
                ready += 1;
                continue;
            }
            let annotated = node
                .and_then(|n| n.metadata.annotations.as_ref())
                .is_some_and(|a| a.contains_key(NEEDS_UPDATE_ANNOTATION));
            let reason = match &m.status {
                MemberStatus::NeedsUpdate { reason } => Some(reason.clone()),
                MemberStatus::Detached => {
                    Some("detached from its group by an earlier surge".into())
                }
                MemberStatus::UpToDate if annotated => {
                    Some(format!("node annotated {NEEDS_UPDATE_ANNOTATION}"))
                }
                MemberStatus::UpToDate if planned.contains(&m.id) => {
                    Some("planned by the interrupted run in the journal".into())
                }
                // With a journal, --force means the instances that run planned, not the
                // replacements it created.
                MemberStatus::UpToDate if self.options.force && journal.is_none() => {
                    Some("--force".into())
                }
                MemberStatus::UpToDate => None,
            };
            match reason {
                Some(reason) => {
                    let p = InstancePlan {
                        id: m.id.clone(),
                        node: node.and_then(|n| n.metadata.name.clone()),
                        reason,
                        detached: m.status == MemberStatus::Detached,
                        warm_pool: m.warm_pool,
                    };
                    if p.detached {
                        detached.push(p)
                    } else {
                        update.push(p)
                    }
                }
                None => ready += 1,
            }
        }
        // Attached first, detached last.
        update.extend(detached);
        Target {
            update,
            ready,
            nodes,
        }
    }

    /// Runs the rolling update: the plan, then each group in kOps' order.
    pub async fn run(&self, cluster: &Cluster, groups: &[InstanceGroup]) -> Result<RollingReport> {
        let (plan, cloud_groups, nodes) = self.snapshot(cluster, groups).await?;
        let mut report = RollingReport::default();
        if !plan.needs_update() {
            if let Some(j) = &self.journal
                && plan.resumed
            {
                j.finish().await?;
            }
            return Ok(report);
        }
        if let Some(j) = &self.journal {
            let planned: Vec<(String, Vec<String>)> = plan
                .groups
                .iter()
                .map(|g| {
                    (
                        g.name.clone(),
                        g.update.iter().map(|u| u.id.clone()).collect(),
                    )
                })
                .collect();
            j.update(|r| {
                for (g, ids) in planned {
                    let e = r.planned.entry(g).or_default();
                    for id in ids {
                        if !e.contains(&id) {
                            e.push(id);
                        }
                    }
                }
            })
            .await?;
        }
        let control_plane = self.prepare_control_plane(groups);
        let by_name = |n: &str| groups.iter().find(|g| g.name() == n);
        let node_map: BTreeMap<String, Node> = nodes
            .iter()
            .filter_map(|n| n.metadata.name.clone().map(|k| (k, n.clone())))
            .collect();

        // Bastions in parallel.
        let bastions: Vec<&GroupPlan> = plan
            .groups
            .iter()
            .filter(|g| g.role == "Bastion" && g.need_update > 0)
            .collect();
        let mut futs = FuturesUnordered::new();
        for gp in &bastions {
            if let (Some(g), Some(cg)) = (
                by_name(&gp.name),
                cloud_groups.iter().find(|c| c.instance_group == gp.name),
            ) {
                futs.push(self.roll_group(cluster, g, cg, gp, &control_plane, &node_map));
            }
        }
        let mut bastion_err = None;
        while let Some(r) = futs.next().await {
            if let Err(f) = r {
                bastion_err.get_or_insert(f.error);
            }
        }
        drop(futs);
        if let Some(e) = bastion_err {
            self.cleanup_marks().await;
            return Err(Error::Invalid {
                field: "rolling-update".into(),
                message: format!(
                    "bastion not healthy after update, stopping rolling-update: {}",
                    chain(&e)
                ),
            });
        }
        for gp in plan
            .groups
            .iter()
            .filter(|g| g.role != "Bastion" && g.need_update > 0)
        {
            if self.stopped() {
                report.stopped = true;
                break;
            }
            let (Some(g), Some(cg)) = (
                by_name(&gp.name),
                cloud_groups.iter().find(|c| c.instance_group == gp.name),
            ) else {
                continue;
            };
            let r = self
                .roll_group(cluster, g, cg, gp, &control_plane, &node_map)
                .await;
            if let Err(GroupFailure { error: e, exitable }) = r {
                if g.is_control_plane() {
                    self.cleanup_marks().await;
                    return Err(Error::Invalid {
                        field: format!("instancegroup {}", g.name()),
                        message: format!(
                            "control-plane node not healthy after update, stopping rolling-update: {}",
                            chain(&e)
                        ),
                    });
                }
                if exitable || self.stopped() {
                    self.cleanup_marks().await;
                    return Err(e);
                }
                report
                    .errors
                    .push(format!("instance group {}: {}", g.name(), chain(&e)));
            }
        }
        if self.stopped() {
            report.stopped = true;
            self.cleanup_marks().await;
        }
        report.replaced = self.replaced.lock().map(|r| r.clone()).unwrap_or_default();
        if !report.stopped
            && report.errors.is_empty()
            && let Some(j) = &self.journal
        {
            j.finish().await?;
        }
        if !report.errors.is_empty() {
            return Err(Error::Invalid {
                field: "rolling-update".into(),
                message: report.errors.join("; "),
            });
        }
        Ok(report)
    }

    /// Decides whether control-plane and API-server instances leave the load balancers
    /// before a drain, and returns the names of the control-plane groups. kOps: with a
    /// single control-plane/API-server instance in all, taking it out of the load balancer
    /// would cut the roll off from its own API.
    fn prepare_control_plane(&self, groups: &[InstanceGroup]) -> Vec<String> {
        let api_instances: i32 = groups
            .iter()
            .filter(|g| {
                matches!(
                    g.spec.role,
                    Some(InstanceGroupRole::ControlPlane | InstanceGroupRole::ApiServer)
                )
            })
            .map(|g| g.spec.min_size.unwrap_or(1))
            .sum();
        self.deregister_control_plane
            .store(api_instances > 1, std::sync::atomic::Ordering::Relaxed);
        groups
            .iter()
            .filter(|g| g.is_control_plane())
            .map(|g| g.name().to_owned())
            .collect()
    }

    /// The instance of one of `groups` whose ID is `id_or_node` or, unless cloud-only,
    /// whose node is named `id_or_node` (kOps' `delete instance` argument). Unless
    /// cloud-only, an instance no node runs on is refused: it cannot be drained, and the
    /// Kubernetes API cannot tell when its replacement is ready.
    pub async fn find_instance(
        &self,
        cluster: &Cluster,
        groups: &[InstanceGroup],
        id_or_node: &str,
    ) -> Result<FoundInstance> {
        Ok(self.locate(cluster, groups, id_or_node).await?.0)
    }

    async fn locate(
        &self,
        cluster: &Cluster,
        groups: &[InstanceGroup],
        id_or_node: &str,
    ) -> Result<(FoundInstance, CloudGroup, InstancePlan, Option<Node>)> {
        let nodes = self.list_nodes().await?;
        let cloud_groups = self.cloud.cloud_groups(cluster.name(), groups).await?;
        let node_of: BTreeMap<String, &Node> = nodes
            .iter()
            .filter_map(|n| super::validate::instance_of(n).map(|i| (i, n)))
            .collect();
        for cg in &cloud_groups {
            for m in &cg.members {
                let node = node_of.get(&m.id).copied();
                let node_name = node.and_then(|n| n.metadata.name.clone());
                let by_node = !self.cloud_only() && node_name.as_deref() == Some(id_or_node);
                if m.id != id_or_node && !by_node {
                    continue;
                }
                if !self.cloud_only() && node.is_none() {
                    return Err(Error::Invalid {
                        field: "instance".into(),
                        message: format!(
                            "instance {} of instance group {} is not a member of the cluster: no node of the Kubernetes API runs on it (use --cloudonly to delete it without the Kubernetes API)",
                            m.id, cg.instance_group
                        ),
                    });
                }
                let found = FoundInstance {
                    id: m.id.clone(),
                    node: node_name.clone(),
                    instance_group: cg.instance_group.clone(),
                };
                let plan = InstancePlan {
                    id: m.id.clone(),
                    node: node_name,
                    reason: "deleted by name".into(),
                    detached: m.status == MemberStatus::Detached,
                    warm_pool: m.warm_pool,
                };
                return Ok((found, cg.clone(), plan, node.cloned()));
            }
        }
        let what = match self.cloud_only() {
            true => "instance",
            false => "instance or node",
        };
        Err(Error::NotFound {
            what: format!(
                "{what} {id_or_node:?} in the instance groups of cluster {}",
                cluster.name()
            ),
        })
    }

    /// Deletes one instance as kOps' `delete instance` does. With `surge`, the instance is
    /// first detached from its group, which launches a replacement, and the cluster is
    /// validated; then (unless cloud-only) its node is cordoned, drained and deleted, and
    /// the instance terminated. Without `surge`, its group replaces it after it goes.
    ///
    /// A control-plane instance, a warm-pool instance and an instance of a cloud that
    /// cannot surge (GCE) are never detached: they are replaced without surge, and an
    /// event says so (kOps fails on GCE instead). The cluster is not validated after the
    /// instance goes, as in kOps.
    pub async fn delete_instance(
        &self,
        cluster: &Cluster,
        groups: &[InstanceGroup],
        id_or_node: &str,
        surge: bool,
    ) -> Result<FoundInstance> {
        let (found, cg, mut plan, node) = self.locate(cluster, groups, id_or_node).await?;
        let Some(group) = groups.iter().find(|g| g.name() == found.instance_group) else {
            return Err(Error::NotFound {
                what: format!("instance group {}", found.instance_group),
            });
        };
        let name = group.name();
        let control_plane = self.prepare_control_plane(groups);
        if surge && !plan.detached {
            let no_surge = if group.is_control_plane() {
                Some("control-plane instances are not detached")
            } else if plan.warm_pool {
                Some("warm-pool instances are not detached")
            } else if group.spec.manager.as_deref() == Some("Karpenter") {
                Some("Karpenter replaces its own instances")
            } else if !self.cloud.can_surge() {
                Some("this cloud cannot detach an instance from its group")
            } else {
                None
            };
            match no_surge {
                Some(why) => self.emit(
                    name,
                    "no-surge",
                    Some(&plan.id),
                    Some(format!("{why}: replacing it without surge")),
                ),
                None => {
                    self.cloud.detach(&cg, &plan.id).await?;
                    plan.detached = true;
                    self.emit(name, "detach", Some(&plan.id), None);
                    self.validate_count(
                        name,
                        self.options.validate_count,
                        &control_plane,
                        "after detaching the instance",
                    )
                    .await?;
                }
            }
        }
        let bastion = group.spec.role == Some(InstanceGroupRole::Bastion);
        self.drain_terminate_and_wait(group, &cg, &plan, node, bastion, Duration::ZERO)
            .await
            .map_err(|f| f.error)?;
        Ok(found)
    }

    async fn validate_count(
        &self,
        group: &str,
        count: u32,
        control_plane: &[String],
        why: &str,
    ) -> Result<()> {
        if self.cloud_only() {
            return Ok(());
        }
        let Some(validator) = &self.validator else {
            return Ok(());
        };
        if count == 0 {
            return Ok(());
        }
        let deadline = tokio::time::Instant::now() + self.options.validation_timeout;
        let mut successes = 0;
        loop {
            let r = validator.validate().await;
            let relevant = |v: &ValidationCluster| v.has_failure_relevant_to(group, control_plane);
            let last = match &r {
                Ok(v) if !relevant(v) => {
                    successes += 1;
                    if successes >= count {
                        self.emit(
                            group,
                            "validate",
                            None,
                            Some(format!("cluster validated {why}")),
                        );
                        return Ok(());
                    }
                    tokio::time::sleep(self.options.validate_success_interval).await;
                    continue;
                }
                Ok(v) => v
                    .failures
                    .iter()
                    .map(|f| f.message.clone())
                    .collect::<Vec<_>>()
                    .join("; "),
                Err(e) => chain(e),
            };
            successes = 0;
            if tokio::time::Instant::now() + self.options.validate_tick > deadline {
                let message = format!(
                    "instance group {group}: cluster did not validate within {:?} {why}: {}",
                    self.options.validation_timeout, last
                );
                if !self.options.fail_on_validate_error {
                    self.emit(group, "validate", None, Some(format!("ignored: {message}")));
                    return Ok(());
                }
                return Err(Error::Timeout { operation: message });
            }
            tokio::time::sleep(self.options.validate_tick).await;
        }
    }

    async fn roll_group(
        &self,
        cluster: &Cluster,
        group: &InstanceGroup,
        cg: &CloudGroup,
        gp: &GroupPlan,
        control_plane: &[String],
        nodes: &BTreeMap<String, Node>,
    ) -> Result<(), GroupFailure> {
        let name = group.name();
        let bastion = group.spec.role == Some(InstanceGroupRole::Bastion);
        let interval = match group.spec.role {
            Some(InstanceGroupRole::Bastion) => self.options.bastion_interval,
            Some(InstanceGroupRole::ControlPlane) => self.options.control_plane_interval,
            _ => self.options.node_interval,
        };
        let validate = |count: u32, why: String| async move {
            self.validate_count(name, count, control_plane, &why)
                .await
                .map_err(exitable)
        };
        // Pre-flight: one success (not for bastions, which are not part of the cluster).
        if !bastion {
            validate(1, "before rolling".into()).await?;
        }
        let mut update = gp.update.clone();
        if !self.cloud_only() {
            for u in &update {
                if let Some(n) = u.node.as_ref().and_then(|n| nodes.get(n))
                    && let Err(e) = self.taint(name, n).await
                {
                    if self.options.fail_on_drain_error {
                        return Err(e.into());
                    }
                    self.emit(name, "taint-failed", Some(&u.id), Some(chain(&e)));
                }
            }
        }
        // Warm-pool instances never joined: terminate them now, without drain or validation.
        let (warm, rest): (Vec<InstancePlan>, Vec<InstancePlan>) =
            update.into_iter().partition(|u| u.warm_pool);
        update = rest;
        for u in &warm {
            self.cloud.terminate(&u.id).await?;
            self.record_replaced(u).await?;
            self.emit(name, "terminate", Some(&u.id), Some("warm pool".into()));
        }
        let num = (gp.need_update + gp.ready) as i64;
        let (drain, mut surge, concurrency) = self.settings(cluster, group, num, update.len());
        let mut none_ready = gp.ready == 0;

        if surge > 0 && !self.cloud_only() {
            let mut skipped = 0usize;
            let mut n = 1i64;
            while n <= surge {
                let idx = update.len() as i64 - n - skipped as i64;
                if idx < 0 {
                    break;
                }
                let u = update[idx as usize].clone();
                if !u.detached {
                    match self.cloud.detach(cg, &u.id).await {
                        Err(e) => {
                            self.emit(name, "detach-failed", Some(&u.id), Some(chain(&e)));
                            skipped += 1;
                            surge = surge.min((update.len() - skipped) as i64);
                            n -= 1;
                        }
                        Ok(()) => {
                            self.emit(name, "detach", Some(&u.id), None);
                            update[idx as usize].detached = true;
                        }
                    }
                    if n == surge || none_ready {
                        tokio::time::sleep(interval).await;
                        let why = if none_ready {
                            format!("after detaching the canary {}", u.id)
                        } else {
                            "after detaching instances".into()
                        };
                        validate(self.options.validate_count, why).await?;
                        none_ready = false;
                    }
                }
                n += 1;
            }
        }
        if !drain {
            self.emit(
                name,
                "skip",
                None,
                Some("drainAndTerminate is false".into()),
            );
            return Ok(());
        }

        // kOps' main loop: up to `concurrency` drains at once, each started as the previous
        // ones finish; a validation after each finished one, while the others keep running.
        let mut running: Drains<'_> = FuturesUnordered::new();
        let mut done: Vec<Result<(), GroupFailure>> = Vec::new();
        for (i, u) in update.iter().enumerate() {
            if self.stopped() {
                break;
            }
            let node = u.node.as_ref().and_then(|n| nodes.get(n)).cloned();
            running.push(Box::pin(
                self.drain_terminate_and_wait(group, cg, u, node, bastion, interval),
            ));
            if (running.len() as i64) < concurrency.max(1) && (!none_ready || i > 0) {
                continue;
            }
            let first = match done.pop() {
                Some(r) => Some(r),
                None => running.next().await,
            };
            if let Some(Err(e)) = first {
                return fail(running, e).await;
            }
            let why = if none_ready && i == 0 {
                format!("after replacing the canary {}", u.id)
            } else {
                "after terminating an instance".into()
            };
            let v = driving(
                &mut running,
                &mut done,
                validate(self.options.validate_count, why),
            )
            .await;
            if let Err(e) = v {
                return fail(running, e).await;
            }
            none_ready = false;
            // Collect the drains that finished meanwhile, without waiting for the others.
            while let Some(Some(r)) = running.next().now_or_never() {
                done.push(r);
            }
            if let Some(pos) = done.iter().position(|r| r.is_err())
                && let Err(e) = done.swap_remove(pos)
            {
                return fail(running, e).await;
            }
            done.clear();
        }
        if running.is_empty() {
            return Ok(());
        }
        let mut first_err = None;
        while let Some(r) = running.next().await {
            if let Err(e) = r {
                first_err.get_or_insert(e);
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        if self.stopped() {
            return Ok(());
        }
        validate(
            self.options.validate_count,
            "after terminating instances".into(),
        )
        .await
    }

    async fn record_replaced(&self, u: &InstancePlan) -> Result<()> {
        if let Ok(mut r) = self.replaced.lock() {
            r.push(u.id.clone());
        }
        if let Some(j) = &self.journal {
            let node = u.node.clone();
            let id = u.id.clone();
            j.update(|r| {
                r.done.insert(id);
                if let Some(n) = node {
                    r.marked.remove(&n);
                }
            })
            .await?;
        }
        Ok(())
    }

    async fn taint(&self, group: &str, node: &Node) -> Result<()> {
        let Some(client) = &self.client else {
            return Ok(());
        };
        let name = node.metadata.name.clone().unwrap_or_default();
        let spec = node.spec.clone().unwrap_or_default();
        let mut taints = spec.taints.clone().unwrap_or_default();
        if spec.unschedulable == Some(true) || taints.iter().any(|t| t.key == UPDATE_TAINT) {
            return Ok(());
        }
        taints.push(Taint {
            key: UPDATE_TAINT.into(),
            effect: "PreferNoSchedule".into(),
            ..Default::default()
        });
        Api::<Node>::all(client.clone())
            .patch(
                &name,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"taints": taints}})),
            )
            .await
            .map_err(kube_err(format!("tainting node {name}")))?;
        if let Some(j) = &self.journal {
            j.update(|r| {
                r.marked.insert(name.clone());
            })
            .await?;
        }
        self.emit(group, "taint", None, Some(name));
        Ok(())
    }

    /// Deletes the Node object `name` (gone already is fine).
    async fn delete_node(&self, name: &str) -> Result<()> {
        let Some(client) = &self.client else {
            return Ok(());
        };
        match Api::<Node>::all(client.clone())
            .delete(name, &DeleteParams::default())
            .await
        {
            Err(e) if !is_not_found(&e) => Err(kube_err(format!("deleting node {name}"))(e)),
            _ => Ok(()),
        }
    }

    /// Removes the update taint and the cordon from nodes this run marked but did not drain.
    async fn cleanup_marks(&self) {
        let (Some(client), Some(j)) = (&self.client, &self.journal) else {
            return;
        };
        let marked = j
            .record
            .lock()
            .await
            .as_ref()
            .map(|r| r.marked.clone())
            .unwrap_or_default();
        let api = Api::<Node>::all(client.clone());
        for name in marked {
            let Ok(node) = api.get(&name).await else {
                continue;
            };
            let taints: Vec<Taint> = node
                .spec
                .as_ref()
                .and_then(|s| s.taints.clone())
                .unwrap_or_default()
                .into_iter()
                .filter(|t| t.key != UPDATE_TAINT)
                .collect();
            let patch = json!({"spec": {"taints": taints, "unschedulable": null}});
            if api
                .patch(&name, &PatchParams::default(), &Patch::Merge(patch))
                .await
                .is_ok()
            {
                self.emit("", "untaint", None, Some(name.clone()));
                let _ = j
                    .update(|r| {
                        r.marked.remove(&name);
                    })
                    .await;
            }
        }
    }

    async fn drain_terminate_and_wait(
        &self,
        group: &InstanceGroup,
        cg: &CloudGroup,
        u: &InstancePlan,
        node: Option<Node>,
        bastion: bool,
        interval: Duration,
    ) -> Result<(), GroupFailure> {
        let gname = group.name();
        let mut drained = None;
        if let (false, false, Some(node)) = (bastion, self.cloud_only(), node) {
            let name = node.metadata.name.clone().unwrap_or_default();
            drained = Some(name.clone());
            self.emit(gname, "drain", Some(&u.id), Some(name.clone()));
            let deregister = !matches!(
                group.spec.role,
                Some(InstanceGroupRole::ControlPlane | InstanceGroupRole::ApiServer)
            ) || self
                .deregister_control_plane
                .load(std::sync::atomic::Ordering::Relaxed);
            match self.drain(gname, cg, &u.id, &name, deregister).await {
                Ok(()) => {}
                // A failed deregistration stops the roll whatever --fail-on-drain-error says
                // (traffic would go to a node about to go away).
                Err(f) if f.exitable => return Err(f),
                Err(f) if self.options.fail_on_drain_error => return Err(f),
                Err(f) => {
                    self.emit(gname, "drain-failed", Some(&u.id), Some(chain(&f.error)));
                }
            }
        } else {
            self.emit(gname, "drain", Some(&u.id), None);
        }
        // As kOps: the Node object goes before its machine, so that a replacement that
        // comes back under the same name (GCE recreates an instance in place) registers
        // afresh instead of finding itself cordoned and tainted.
        if let Some(name) = drained {
            self.delete_node(&name).await?;
            self.emit(gname, "delete-node", Some(&u.id), Some(name));
        }
        self.cloud.terminate(&u.id).await?;
        self.record_replaced(u).await?;
        self.emit(gname, "terminate", Some(&u.id), None);
        tokio::time::sleep(interval).await;
        self.emit(gname, "terminated", Some(&u.id), None);
        Ok(())
    }

    async fn drain(
        &self,
        group: &str,
        cg: &CloudGroup,
        instance: &str,
        node: &str,
        deregister: bool,
    ) -> Result<(), GroupFailure> {
        let Some(client) = &self.client else {
            return Ok(());
        };
        let nodes = Api::<Node>::all(client.clone());
        let ignore_nf = |r: std::result::Result<Node, kube::Error>, what: String| match r {
            Ok(_) => Ok(()),
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => Err(kube_err(what)(e)),
        };
        ignore_nf(
            nodes
                .patch(
                    node,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": {"unschedulable": true}})),
                )
                .await,
            format!("cordoning node {node}"),
        )?;
        ignore_nf(
            nodes
                .patch(
                    node,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"metadata": {"labels": {EXCLUDE_LB_LABEL: ""}}})),
                )
                .await,
            format!("excluding node {node} from load balancers"),
        )?;
        if deregister {
            self.cloud
                .deregister(cg, instance)
                .await
                .map_err(exitable)?;
            self.emit(group, "deregister", Some(instance), None);
        }
        let deadline = tokio::time::Instant::now() + self.options.drain_timeout;
        let pods = Api::<Pod>::all(client.clone())
            .list(&ListParams::default().fields(&format!("spec.nodeName={node}")))
            .await
            .map_err(kube_err(format!("listing the pods of node {node}")))?
            .items;
        for pod in pods {
            let owner = pod
                .metadata
                .owner_references
                .as_ref()
                .and_then(|o| o.iter().find(|o| o.controller == Some(true)))
                .map(|o| o.kind.clone());
            let mirror = pod
                .metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key("kubernetes.io/config.mirror"));
            if matches!(owner.as_deref(), Some("DaemonSet") | Some("Node")) || mirror {
                continue;
            }
            let ns = pod
                .metadata
                .namespace
                .clone()
                .unwrap_or_else(|| "default".into());
            let pname = pod.metadata.name.clone().unwrap_or_default();
            let api = Api::<Pod>::namespaced(client.clone(), &ns);
            loop {
                match api.evict(&pname, &EvictParams::default()).await {
                    Ok(_) => break,
                    Err(e) if is_not_found(&e) => break,
                    Err(e) if is_too_many_requests(&e) => {
                        let pdbs = self.blocking_pdbs(&ns, &pod).await;
                        let detail =
                            format!("pod {ns}/{pname} blocked by PodDisruptionBudget {pdbs}");
                        self.emit(group, "evict-blocked", Some(instance), Some(detail.clone()));
                        if tokio::time::Instant::now() + self.options.evict_retry > deadline {
                            return Err(GroupFailure::from(Error::Timeout {
                                operation: format!(
                                    "draining node {node}: evicting {detail}: drain timeout {:?} reached",
                                    self.options.drain_timeout
                                ),
                            }));
                        }
                        tokio::time::sleep(self.options.evict_retry).await;
                    }
                    Err(e) => {
                        return Err(kube_err(format!(
                            "evicting pod {ns}/{pname} from node {node}"
                        ))(e)
                        .into());
                    }
                }
            }
            // Wait for the pod to go (or be replaced under the same name).
            loop {
                match api.get(&pname).await {
                    Err(e) if is_not_found(&e) => break,
                    Ok(p) if p.metadata.uid != pod.metadata.uid => break,
                    Ok(_) | Err(_) => {}
                }
                if tokio::time::Instant::now() >= deadline {
                    return Err(Error::Timeout {
                        operation: format!(
                            "draining node {node}: pod {ns}/{pname} was not deleted before the drain timeout"
                        ),
                    }
                    .into());
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
        tokio::time::sleep(self.options.post_drain_delay).await;
        Ok(())
    }

    /// The budgets of `ns` whose selector matches `pod`, as `ns/name` joined by commas.
    async fn blocking_pdbs(&self, ns: &str, pod: &Pod) -> String {
        let Some(client) = &self.client else {
            return "(unknown)".into();
        };
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        let list = Api::<PodDisruptionBudget>::namespaced(client.clone(), ns)
            .list(&ListParams::default())
            .await
            .map(|l| l.items)
            .unwrap_or_default();
        let names: Vec<String> = list
            .iter()
            .filter(|p| {
                p.spec
                    .as_ref()
                    .and_then(|s| s.selector.as_ref())
                    .and_then(|s| s.match_labels.as_ref())
                    .is_some_and(|m| m.iter().all(|(k, v)| labels.get(k) == Some(v)))
            })
            .filter_map(|p| p.metadata.name.as_ref().map(|n| format!("{ns}/{n}")))
            .collect();
        if names.is_empty() {
            "(unknown)".into()
        } else {
            names.join(",")
        }
    }
}

fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use kops_api::v1alpha2::RollingUpdate as Ru;

    fn ig(role: InstanceGroupRole, ru: Option<Ru>) -> InstanceGroup {
        let mut g = InstanceGroup::default();
        g.metadata.name = Some("g".into());
        g.spec.role = Some(role);
        g.spec.rolling_update = ru;
        g
    }

    fn ru(surge: Option<IntOrString>, unavailable: Option<IntOrString>) -> Ru {
        let mut r = Ru::default();
        r.max_surge = surge;
        r.max_unavailable = unavailable;
        r
    }

    #[test]
    fn settings_follow_kops_defaults_and_rounding() {
        let c = Cluster::default();
        let node = |r| ig(InstanceGroupRole::Node, r);
        // AWS default: surge 1, unavailable 0.
        assert_eq!(resolve_settings(&c, &node(None), 10, 1), (true, 1, 0));
        // Elsewhere: surge 0, unavailable 1.
        assert_eq!(resolve_settings(&c, &node(None), 10, 0), (true, 0, 1));
        // Percentages: surge rounds up, unavailable down but at least 1.
        let pct = |s: &str| Some(IntOrString::String(s.into()));
        assert_eq!(
            resolve_settings(&c, &node(Some(ru(pct("25%"), pct("25%")))), 10, 1),
            (true, 3, 2)
        );
        assert_eq!(
            resolve_settings(&c, &node(Some(ru(pct("1%"), pct("1%")))), 10, 1),
            (true, 1, 1)
        );
        // A set surge of 0 makes unavailable default to 1.
        assert_eq!(
            resolve_settings(&c, &node(Some(ru(Some(IntOrString::Int(0)), None))), 3, 1),
            (true, 0, 1)
        );
        // The group's fields win over the cluster's, field by field.
        let mut c2 = Cluster::default();
        c2.spec.rolling_update = Some(ru(Some(IntOrString::Int(2)), Some(IntOrString::Int(3))));
        assert_eq!(
            resolve_settings(&c2, &node(Some(ru(Some(IntOrString::Int(5)), None))), 10, 1),
            (true, 5, 3)
        );
    }

    #[test]
    fn the_control_plane_never_surges_and_surge_is_capped() {
        let cp = ig(InstanceGroupRole::ControlPlane, None);
        assert_eq!(surge_and_concurrency(&cp, 1, 0, 3), (0, 1));
        assert_eq!(surge_and_concurrency(&cp, 2, 2, 3), (0, 2));
        let node = ig(InstanceGroupRole::Node, None);
        assert_eq!(surge_and_concurrency(&node, 5, 1, 2), (2, 3));
        assert_eq!(surge_and_concurrency(&node, 0, 1, 2), (0, 1));
    }
}
