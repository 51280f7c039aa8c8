//! The cluster in its cloud, through kops-model: apply the stored spec, roll the
//! machines, delete everything. AWS (or its mock) and GCE (through Google's REST APIs);
//! another cloud is a diagnostic.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use kops_model::UpdateOptions;
use kops_model::api::keyset::Keyset;
use kops_model::api::{internal, v1alpha2};
use kops_model::aws::{self, ApplyOptions, DeleteOptions, DiscoverOptions, UpdateCluster};
use kops_model::cloud_aws::AwsCloud;
use kops_model::cloud_gce::cache::ListCache;
use kops_model::day2::groups::{AwsInstanceGroups, GceInstanceGroups, InstanceGroupCloud};
use kops_model::day2::kubeconfig::{
    KubeconfigEntry, api_server_url, client_for, issue_admin_credential,
};
use kops_model::day2::rolling::{Journal, RollingOptions, RollingUpdate};
use kops_model::day2::validate::{
    ClusterValidator, RepeatOptions, ValidateOptions, Validator, validate_until,
};
use kops_model::gce::{self, cloud::GceCloud};
use kops_model::pki::trusted_certificates;
use kops_model::statestore::Error as StoreError;

use crate::diag::{Diag, Diags};
use crate::mock::{MockCloud, Turn};
use crate::session::Session;

/// The cloud a stored cluster runs in.
pub enum Cloud {
    /// AWS (or in mock mode its mock).
    Aws,
    /// GCE, in this project.
    Gce {
        /// The project.
        project: String,
    },
}

/// A stored cluster, its groups, the cloud and the region it runs in.
pub struct Stored {
    /// The cluster as stored.
    pub cluster: v1alpha2::Cluster,
    /// Its groups as stored.
    pub groups: Vec<v1alpha2::InstanceGroup>,
    /// Its region.
    pub region: String,
    /// Its cloud.
    pub cloud: Cloud,
}

impl Stored {
    /// The cluster and its groups in the internal layout the day-two code reads.
    fn internal(&self) -> Result<(internal::Cluster, Vec<internal::InstanceGroup>), Diags> {
        let cluster = internal::Cluster::try_from(&self.cluster)
            .map_err(|e| vec![Diag::error("Converting the cluster", e.to_string())])?;
        let groups = self
            .groups
            .iter()
            .map(internal::InstanceGroup::from)
            .collect();
        Ok((cluster, groups))
    }
}

fn failed(what: String) -> impl Fn(kops_model::Error) -> Diags {
    move |e| vec![Diag::failed(&what, &anyhow::Error::new(e))]
}

/// Reads cluster `name` and its groups (`None`: no such cluster).
async fn load(session: &Session, name: &str) -> Result<Option<Stored>, Diags> {
    let mut cluster = match session.registry.get_cluster(name).await {
        Ok(c) => c.value,
        Err(StoreError::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(vec![Diag::error("Reading the cluster", e.to_string())]),
    };
    let provider = cluster.spec.cloud_provider.clone().unwrap_or_default();
    let cloud = match provider.as_str() {
        "aws" => Cloud::Aws,
        "gce" => {
            let project = cluster
                .spec
                .project
                .clone()
                .filter(|p| !p.is_empty())
                .or_else(|| session.gce_project())
                .ok_or_else(|| {
                    vec![Diag::error(
                        "No GCE project",
                        format!(
                            "cluster {name}: spec.project: set kops_cluster's cloud_provider \
                             {{ gce {{ project }} }}, or the provider's gce {{ project }} \
                             (or GOOGLE_CLOUD_PROJECT)"
                        ),
                    )]
                })?;
            // The model reads the project from the spec.
            cluster.spec.project = Some(project.clone());
            Cloud::Gce { project }
        }
        _ => {
            return Err(vec![Diag::error(
                "Cloud not supported by this provider yet",
                format!("cluster {name}: spec.cloudProvider {provider:?}: aws and gce are"),
            )]);
        }
    };
    let groups = session
        .registry
        .list_instance_groups(name)
        .await
        .map_err(|e| vec![Diag::error("Reading the instance groups", e.to_string())])?
        .into_iter()
        .map(|g| g.value)
        .collect();
    let region = internal::Cluster::try_from(&cluster)
        .ok()
        .and_then(|c| c.region())
        .ok_or_else(|| {
            vec![Diag::error(
                "No region",
                format!("cluster {name}: no subnet zone to take the region from"),
            )]
        })?;
    Ok(Some(Stored {
        cluster,
        groups,
        region,
        cloud,
    }))
}

/// A cluster's cloud API.
enum Api {
    Aws(Arc<dyn AwsCloud>),
    Gce(Arc<dyn GceCloud>),
}

/// The cloud a call runs against: AWS, or in mock mode the mock (see [`crate::mock`]),
/// or GCE, open for this call only.
struct Opened {
    api: Api,
    /// The mock, and the turn it holds until dropped.
    mock: Option<(MockCloud, Turn)>,
}

impl Opened {
    /// The cloud's instance groups, as the rolling update and validation read them.
    fn groups(&self) -> Arc<dyn InstanceGroupCloud> {
        match &self.api {
            Api::Aws(cloud) => Arc::new(AwsInstanceGroups::new(cloud.clone())),
            Api::Gce(cloud) => Arc::new(GceInstanceGroups::new(cloud.clone())),
        }
    }

    /// Keeps what the call changed in the mock (nothing to do on AWS). Called also after
    /// a failure: the cloud changed anyway.
    async fn save(&self) -> Result<(), Diags> {
        match &self.mock {
            Some((mock, _)) => mock
                .save()
                .await
                .map_err(|e| vec![Diag::failed("Saving the mock cloud", &e)]),
            None => Ok(()),
        }
    }
}

async fn open(session: &Session, stored: &Stored) -> Result<Opened, Diags> {
    let region = &stored.region;
    if let Cloud::Gce { project } = &stored.cloud {
        if session.mock {
            return Err(vec![Diag::error(
                "No GCE mock",
                format!(
                    "cluster {}: mock_cloud runs AWS clusters only; GCE's run on Google's APIs \
                     (gce {{ endpoint }} for a fake of them)",
                    stored.cluster.name()
                ),
            )]);
        }
        let cloud = session
            .gce(project, region)
            .map_err(|e| vec![Diag::failed("Opening GCE", &e)])?;
        return Ok(Opened {
            api: Api::Gce(Arc::new(cloud)),
            mock: None,
        });
    }
    if session.mock {
        let (mock, turn) = MockCloud::open(session.store.clone(), &session.state, region)
            .await
            .map_err(|e| vec![Diag::failed("Opening the mock cloud", &e)])?;
        return Ok(Opened {
            api: Api::Aws(mock.cloud()),
            mock: Some((mock, turn)),
        });
    }
    let cloud = session
        .aws(region)
        .await
        .map_err(|e| vec![Diag::failed("Opening AWS", &e)])?;
    Ok(Opened {
        api: Api::Aws(Arc::new(cloud)),
        mock: None,
    })
}

/// `result`, once what the call changed in the mock is saved.
async fn saved<T>(opened: &Opened, result: Result<T, Diags>) -> Result<T, Diags> {
    let kept = opened.save().await;
    let value = result?;
    kept?;
    Ok(value)
}

/// Runs a library call on a thread of its own, where its future need not be `Send`
/// (some of kops-model's futures are not, for every lifetime the gRPC server's
/// futures demand).
async fn off_thread<F, Fut, T>(f: F) -> Result<T, Diags>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<T, Diags>>,
    T: Send + 'static,
{
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || handle.block_on(f()))
        .await
        .map_err(|e| vec![Diag::error("A library call failed", e.to_string())])?
}

/// What `kops_cluster_status` reports of a cluster that exists.
pub struct Status {
    /// Its instance groups.
    pub groups: Vec<String>,
    /// How many changes applying its stored spec would make.
    pub changes: usize,
    /// Whether it validates through its API right now.
    pub valid: bool,
}

/// A cluster's [`Status`] (`None`: no such cluster), off the server's threads.
pub async fn status(
    session: &Arc<Session>,
    name: &str,
    access: ApiAccess,
) -> Result<Option<Status>, Diags> {
    let (session, name) = (session.clone(), name.to_string());
    off_thread(move || async move {
        let Some(stored) = load(&session, &name).await? else {
            return Ok(None);
        };
        let groups = stored.groups.iter().map(|g| g.name().to_string()).collect();
        let changes = update_here(&session, &name, true, &Apply::default()).await?;
        let valid = is_valid_here(&session, &name, &stored, &access).await?;
        Ok(Some(Status {
            groups,
            changes,
            valid,
        }))
    })
    .await
}

/// How long one validation of `kops_cluster_status` may take before the cluster counts
/// as not valid (an API that does not answer).
const STATUS_VALIDATION_TIMEOUT: Duration = Duration::from_secs(30);

/// Whether cluster `name` validates through its API once, now: false when it does not,
/// when its API does not answer, or when it has no CA yet (never applied). Only a
/// failure to read the state store is an error.
async fn is_valid_here(
    session: &Session,
    name: &str,
    stored: &Stored,
    access: &ApiAccess,
) -> Result<bool, Diags> {
    let Some(ca) = read_ca(session, name).await? else {
        return Ok(false);
    };
    let Ok((cluster, groups)) = stored.internal() else {
        return Ok(false);
    };
    let entry = api_entry(name, &cluster, &ca, access)?;
    let Ok(client) = client_for(&entry).await else {
        return Ok(false);
    };
    let opened = open(session, stored).await?;
    let validator = Validator::new(
        client,
        opened.groups(),
        name,
        groups,
        ValidateOptions::default(),
    );
    let checked = tokio::time::timeout(STATUS_VALIDATION_TIMEOUT, validator.validate()).await;
    Ok(matches!(checked, Ok(Ok(v)) if v.is_valid()))
}

/// The updater's `apply { .. }` settings.
#[derive(Default)]
pub struct Apply {
    /// Per-kind lifecycle overrides.
    pub lifecycle_overrides: kops_model::tasks::LifecycleOverrides,
    /// Apply over a newer kOps release's state.
    pub allow_kops_downgrade: bool,
}

/// [`update_here`] off the server's threads.
pub async fn update(
    session: &Arc<Session>,
    name: &str,
    dry_run: bool,
    apply: Apply,
) -> Result<usize, Diags> {
    let (session, name) = (session.clone(), name.to_string());
    off_thread(move || async move { update_here(&session, &name, dry_run, &apply).await }).await
}

/// [`rolling_update_here`] off the server's threads.
pub async fn rolling_update(
    session: &Arc<Session>,
    name: &str,
    roll: Roll,
) -> Result<usize, Diags> {
    let (session, name) = (session.clone(), name.to_string());
    off_thread(move || async move { rolling_update_here(&session, &name, &roll).await }).await
}

/// How a cluster's deletion retries (`kops_cluster`'s `delete` block, as
/// terraform-provider-kops names it).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Deletion {
    /// The pause between passes.
    pub interval: Option<Duration>,
    /// How long the passes may take in all.
    pub wait: Option<Duration>,
    /// Retries after the first pass (0: as `wait` says).
    pub count: Option<u32>,
}

impl Deletion {
    /// The library's options: `interval` the pause between passes; `count` retries
    /// after the first pass, else as many passes as pauses fit in `wait`; neither, the
    /// library's default.
    pub fn options(&self) -> DeleteOptions {
        let mut options = DeleteOptions::default();
        let interval = self.interval.unwrap_or(options.retry_delay);
        options = options.with_retry_delay(interval);
        let by_wait = self.wait.map(|w| {
            let pauses = w.as_secs_f64() / interval.as_secs_f64().max(0.001);
            (pauses.ceil() as u32).saturating_add(1)
        });
        let rounds = match (self.count.filter(|c| *c > 0), by_wait) {
            (Some(c), Some(w)) => Some(c.saturating_add(1).min(w)),
            (Some(c), None) => Some(c.saturating_add(1)),
            (None, w) => w,
        };
        if let Some(r) = rounds {
            options = options.with_max_rounds(r);
        }
        options
    }
}

/// [`delete_cluster_here`] off the server's threads.
pub async fn delete_cluster(
    session: &Arc<Session>,
    name: &str,
    deletion: Deletion,
) -> Result<(), Diags> {
    let (session, name) = (session.clone(), name.to_string());
    off_thread(move || async move { delete_cluster_here(&session, &name, &deletion).await }).await
}

/// [`delete_group_here`] off the server's threads.
pub async fn delete_instance_group(
    session: &Arc<Session>,
    cluster: &str,
    group: &str,
) -> Result<(), Diags> {
    let (session, cluster, group) = (session.clone(), cluster.to_string(), group.to_string());
    off_thread(move || async move { delete_group_here(&session, &cluster, &group).await }).await
}

/// `kops update cluster --yes`: discovers, plans and applies the stored spec, holding
/// the cluster's lock; with `dry_run`, plans only. Returns how many changes there were.
async fn update_here(
    session: &Session,
    name: &str,
    dry_run: bool,
    apply: &Apply,
) -> Result<usize, Diags> {
    let Some(stored) = load(session, name).await? else {
        return Err(vec![Diag::attr(
            "cluster_name",
            "No such cluster",
            format!("{name} is not in {}", session.state),
        )]);
    };
    let opened = open(session, &stored).await?;
    let mut discover =
        DiscoverOptions::default().with_state_store(session.store.clone(), &session.state);
    let keys = session
        .registry
        .list_ssh_public_keys(name)
        .await
        .map_err(|e| vec![Diag::error("Reading the admin SSH key", e.to_string())])?;
    if let Some((_, key)) = keys.into_iter().next() {
        discover = discover.with_ssh_public_key(key);
    }
    // The mock's machines read nothing: a local config base is fine there.
    let options = UpdateOptions::default()
        .with_unreadable_config_base(session.mock)
        .with_lifecycle_overrides(apply.lifecycle_overrides.clone())
        .with_allow_kops_downgrade(apply.allow_kops_downgrade);
    let applied = match &opened.api {
        Api::Aws(cloud) => {
            let ctx = aws::discover(cloud.as_ref(), &stored.cluster, &stored.groups, &discover)
                .await
                .map_err(failed(format!("Discovering cluster {name}")))?;
            let update = UpdateCluster::new(ctx, options)
                .map_err(failed(format!("Building the model of cluster {name}")))?;
            let plan = update
                .plan(cloud.as_ref())
                .await
                .map_err(failed(format!("Planning cluster {name}")))?;
            let changes = plan.plan.changes().count();
            if dry_run {
                return Ok(changes);
            }
            update
                .apply(
                    cloud.as_ref(),
                    &session.registry,
                    &plan,
                    ApplyOptions::default(),
                )
                .await
                .map(|_| changes)
        }
        Api::Gce(cloud) => {
            let ctx = gce::discover(cloud.as_ref(), &stored.cluster, &stored.groups, &discover)
                .await
                .map_err(failed(format!("Discovering cluster {name}")))?;
            let update = gce::UpdateCluster::new(ctx, options)
                .map_err(failed(format!("Building the model of cluster {name}")))?;
            // Each collection listed once per plan and apply.
            let plan = update
                .plan(&ListCache::for_cluster(cloud.clone(), name))
                .await
                .map_err(failed(format!("Planning cluster {name}")))?;
            let changes = plan.plan.changes().count();
            if dry_run {
                return Ok(changes);
            }
            update
                .apply(
                    &ListCache::for_cluster(cloud.clone(), name),
                    &session.registry,
                    &plan,
                    ApplyOptions::default(),
                )
                .await
                .map(|_| changes)
        }
    }
    .map_err(failed(format!("Applying cluster {name}")));
    saved(&opened, applied).await
}

/// The rolling update's settings a `kops_cluster_updater` gives.
pub struct Roll {
    /// Replace without draining or validating through the Kubernetes API.
    pub cloud_only: bool,
    /// Replace even machines that are up to date.
    pub force: bool,
    /// Only these groups (empty: all).
    pub include: Vec<String>,
    /// Not these groups.
    pub exclude: Vec<String>,
    /// Stop when a drain fails.
    pub fail_on_drain_error: bool,
    /// Stop when validation fails.
    pub fail_on_validate: bool,
    /// Successful validations in a row before going on.
    pub validate_count: u32,
    /// Wait after draining a machine.
    pub post_drain_delay: Option<Duration>,
    /// How long validation may take.
    pub validation_timeout: Option<Duration>,
    /// How long draining one node may take.
    pub drain_timeout: Option<Duration>,
    /// Wait after replacing a control-plane machine.
    pub control_plane_interval: Option<Duration>,
    /// Wait after replacing a node (or API server) machine.
    pub node_interval: Option<Duration>,
    /// Wait after replacing a bastion.
    pub bastion_interval: Option<Duration>,
    /// The pause between the roll's validations, after a failed one and between
    /// successful ones (`validate { poll_interval }`; kOps: 30s and 10s).
    pub validate_interval: Option<Duration>,
    /// How the roll reaches the cluster's API (unless `cloud_only`).
    pub access: ApiAccess,
}

/// `kops rolling-update cluster --yes`: replaces out-of-date machines, resumable from
/// its journal in the state store. Returns how many machines were replaced.
async fn rolling_update_here(session: &Session, name: &str, roll: &Roll) -> Result<usize, Diags> {
    let Some(stored) = load(session, name).await? else {
        return Ok(0);
    };
    let (cluster, groups) = stored.internal()?;
    let selected: Vec<String> = groups
        .iter()
        .map(|g| g.name().to_string())
        .filter(|g| roll.include.is_empty() || roll.include.contains(g))
        .filter(|g| !roll.exclude.contains(g))
        .collect();
    if selected.is_empty() {
        return Ok(0);
    }
    let opened = open(session, &stored).await?;
    let mut options = RollingOptions::default()
        .with_cloud_only(roll.cloud_only)
        .with_force(roll.force)
        .with_instance_groups(selected)
        .with_fail_on_drain_error(roll.fail_on_drain_error)
        .with_fail_on_validate_error(roll.fail_on_validate)
        .with_validate_count(roll.validate_count);
    if let Some(d) = roll.post_drain_delay {
        options = options.with_post_drain_delay(d);
    }
    if let Some(d) = roll.validation_timeout {
        options = options.with_validation_timeout(d);
    }
    if let Some(d) = roll.drain_timeout {
        options = options.with_drain_timeout(d);
    }
    if let Some(d) = roll.control_plane_interval {
        options = options.with_control_plane_interval(d);
    }
    if let Some(d) = roll.node_interval {
        options = options.with_node_interval(d);
    }
    if let Some(d) = roll.bastion_interval {
        options = options.with_bastion_interval(d);
    }
    if let Some(d) = roll.validate_interval {
        options = options
            .with_validate_tick(d)
            .with_validate_success_interval(d);
    }
    let instance_groups = opened.groups();
    let mut rolling = RollingUpdate::new(instance_groups.clone(), options)
        .with_journal(Journal::new(session.store.clone(), name));
    if !roll.cloud_only {
        // Taint, cordon, drain and validate through the cluster's API, as an admin whose
        // credential is minted for this run and never stored.
        let Some(ca) = read_ca(session, name).await? else {
            return Err(no_ca(name));
        };
        let entry = api_entry(name, &cluster, &ca, &roll.access)?;
        let client = client_for(&entry)
            .await
            .map_err(failed(format!("A client for cluster {name}'s API")))?;
        let validator: Arc<dyn ClusterValidator> = Arc::new(Validator::new(
            client.clone(),
            instance_groups,
            name,
            groups.clone(),
            ValidateOptions::default(),
        ));
        rolling = rolling.with_kube(client, validator);
    }
    let report = rolling
        .run(&cluster, &groups)
        .await
        .map_err(failed(format!("Rolling update of cluster {name}")));
    Ok(saved(&opened, report).await?.replaced.len())
}

/// How the provider reaches a cluster's API: at `server` (default: the cluster's public
/// API name), as an admin whose credential, minted for the run, lasts `lifetime`.
#[derive(Debug, Clone)]
pub struct ApiAccess {
    /// The API's URL, when the cluster's name for it does not resolve from here.
    pub server: Option<String>,
    /// How long the admin credential lasts.
    pub lifetime: Duration,
}

/// The cluster's CA keyset (`None`: not made yet, the cluster was never applied).
async fn read_ca(session: &Session, name: &str) -> Result<Option<Keyset>, Diags> {
    match session.registry.get_keyset(name, "kubernetes-ca").await {
        Ok(ca) => Ok(Some(ca.value)),
        Err(StoreError::NotFound { .. }) => Ok(None),
        Err(e) => Err(vec![Diag::error("Reading the cluster's CA", e.to_string())]),
    }
}

fn no_ca(name: &str) -> Diags {
    vec![Diag::attr(
        "cluster_name",
        "No cluster CA yet",
        format!(
            "cluster {name} has no kubernetes-ca keyset: it is made when the cluster is first applied"
        ),
    )]
}

/// A client configuration for cluster `name`'s API: its CA bundle, the API's internal
/// name as the TLS server name (the name its certificate carries whatever URL reaches
/// it), and an admin credential minted now (held in memory only).
fn api_entry(
    name: &str,
    cluster: &internal::Cluster,
    ca: &Keyset,
    access: &ApiAccess,
) -> Result<KubeconfigEntry, Diags> {
    let minted = failed(format!("Minting an admin credential for {name}"));
    let bundle = trusted_certificates(ca).map_err(&minted)?;
    let credential = issue_admin_credential(ca, "terraform", access.lifetime, SystemTime::now())
        .map_err(&minted)?;
    let public = cluster.spec.api.public_name.as_deref();
    let server = access
        .server
        .clone()
        .unwrap_or_else(|| api_server_url(name, public, false));
    Ok(KubeconfigEntry::new(name, server)
        .with_ca_pem(bundle)
        .with_tls_server_name(format!("api.internal.{name}"))
        .with_admin(credential))
}

/// How the updater validates: through the API (see [`ApiAccess`]), until it validates
/// once or `timeout` passes.
pub struct Check {
    /// Where the API is, and the credential's lifetime.
    pub access: ApiAccess,
    /// How long validation may take.
    pub timeout: Duration,
    /// The pause between attempts.
    pub poll_interval: Duration,
}

/// [`validate_here`] off the server's threads.
pub async fn validate(session: &Arc<Session>, name: &str, check: Check) -> Result<(), Diags> {
    let (session, name) = (session.clone(), name.to_string());
    off_thread(move || async move { validate_here(&session, &name, &check).await }).await
}

/// `kops validate cluster --wait`: the cluster's nodes and system pods through its API,
/// with an admin credential minted for the run (never stored), and its groups' machines
/// in the cloud.
async fn validate_here(session: &Session, name: &str, check: &Check) -> Result<(), Diags> {
    let Some(stored) = load(session, name).await? else {
        return Err(vec![Diag::attr(
            "cluster_name",
            "No such cluster",
            format!("{name} is not in {}", session.state),
        )]);
    };
    let (cluster, groups) = stored.internal()?;
    let Some(ca) = read_ca(session, name).await? else {
        return Err(no_ca(name));
    };
    let entry = api_entry(name, &cluster, &ca, &check.access)?;
    let client = client_for(&entry)
        .await
        .map_err(failed(format!("A client for cluster {name}'s API")))?;
    let opened = open(session, &stored).await?;
    let validator = Validator::new(
        client,
        opened.groups(),
        name,
        groups,
        ValidateOptions::default(),
    );
    let repeat = RepeatOptions::new(check.timeout, 1)
        .with_intervals(check.poll_interval, check.poll_interval);
    match validate_until(&validator, &repeat, |_| {}).await {
        Ok(v) if v.is_valid() => Ok(()),
        Ok(v) => Err(vec![Diag::error(
            format!("Cluster {name} did not validate"),
            v.failures
                .iter()
                .map(|f| format!("{} {}: {}", f.kind, f.name, f.message))
                .collect::<Vec<_>>()
                .join("\n"),
        )]),
        Err(e) => Err(vec![Diag::error(
            format!("Cluster {name} could not be validated"),
            e.to_string(),
        )]),
    }
}

/// `kops delete cluster --yes`: deletes what cluster `name` owns in its cloud.
async fn delete_cluster_here(
    session: &Session,
    name: &str,
    deletion: &Deletion,
) -> Result<(), Diags> {
    let Some(stored) = load(session, name).await? else {
        return Ok(());
    };
    let opened = open(session, &stored).await?;
    match &opened.api {
        Api::Aws(cloud) => {
            let deleted = aws::delete_cluster(cloud.as_ref(), name, &deletion.options())
                .await
                .map_err(|e| {
                    vec![Diag::error(
                        format!("Deleting cluster {name} in AWS"),
                        e.to_string(),
                    )]
                });
            let report = saved(&opened, deleted).await?;
            if !report.is_complete() {
                let left: Vec<String> = report.failed.iter().map(|l| format!("{l:?}")).collect();
                return Err(vec![Diag::error(
                    "Objects left in AWS",
                    format!("cluster {name}: {}", left.join("; ")),
                )]);
            }
        }
        Api::Gce(cloud) => {
            gce::delete_cluster(cloud.as_ref(), name)
                .await
                .map_err(failed(format!("Deleting cluster {name} in GCE")))?;
        }
    }
    Ok(())
}

/// `kops delete instancegroup --yes` in the cloud: deletes what instance group `group` of
/// `cluster` owns there (its autoscaling or managed instance group, instances and
/// template), as terraform-provider-kops does; the caller removes its spec after.
async fn delete_group_here(session: &Session, cluster: &str, group: &str) -> Result<(), Diags> {
    let Some(stored) = load(session, cluster).await? else {
        return Ok(());
    };
    let opened = open(session, &stored).await?;
    let what = format!("Deleting instance group {group} of cluster {cluster}");
    match &opened.api {
        Api::Aws(cloud) => {
            let deleted = aws::delete_instance_group(
                cloud.as_ref(),
                cluster,
                group,
                &DeleteOptions::default(),
            )
            .await
            .map_err(|e| vec![Diag::error(format!("{what} in AWS"), e.to_string())]);
            let report = saved(&opened, deleted).await?;
            if !report.is_complete() {
                let left: Vec<String> = report.failed.iter().map(|l| format!("{l:?}")).collect();
                return Err(vec![Diag::error(
                    "Objects left in AWS",
                    format!(
                        "instance group {group} of cluster {cluster}: {}",
                        left.join("; ")
                    ),
                )]);
            }
        }
        Api::Gce(cloud) => {
            gce::delete_group(cloud.as_ref(), cluster, group)
                .await
                .map_err(failed(format!("{what} in GCE")))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Deletion;
    use std::time::Duration;

    #[test]
    fn the_delete_block_bounds_the_passes() {
        let s = Duration::from_secs;
        let none = Deletion::default().options();
        let default = kops_model::aws::DeleteOptions::default();
        assert_eq!(none.max_rounds, default.max_rounds);
        assert_eq!(none.retry_delay, default.retry_delay);
        // The Go provider's defaults: every 10s for 10m.
        let go = Deletion {
            interval: Some(s(10)),
            wait: Some(s(600)),
            count: None,
        }
        .options();
        assert_eq!((go.retry_delay, go.max_rounds), (s(10), 61));
        // count retries after the first pass; the smaller bound wins.
        let counted = Deletion {
            interval: Some(Duration::from_millis(200)),
            wait: Some(s(60)),
            count: Some(2),
        }
        .options();
        assert_eq!(
            (counted.retry_delay, counted.max_rounds),
            (Duration::from_millis(200), 3)
        );
        let waited = Deletion {
            interval: Some(s(1)),
            wait: Some(s(2)),
            count: Some(9),
        }
        .options();
        assert_eq!(waited.max_rounds, 3);
    }
}
