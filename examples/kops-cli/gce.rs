//! GCE clusters: the cloud a command talks to (the in-memory GCE mock with
//! `--mock-cloud`, else the REST backend), `update cluster` and `delete cluster` on it.
//!
//! The REST backend reaches Google's APIs with application-default credentials, or
//! every API under the root `KOPS_GCE_ENDPOINT` names (a local fake of the APIs; tests
//! set it to a 127.0.0.1 address).
//!
//! The mock persists between invocations as the AWS mock does (see `cloud.rs`): a journal
//! of successful mutations at [`GCE_JOURNAL_PATH`] in the state store, replayed into a fresh
//! mock on each run and written back with compare-and-swap.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use anyhow::{Context as _, anyhow};
use kops_api::v1alpha2;
use kops_cloud_gce::cache::ListCache;
use kops_cloud_gce::cloud::{CloudError, CloudResult, GceCloud};
use kops_cloud_gce::rest::{RestConfig, RestGce, TokenSource};
pub use kops_mock::journal::JournaledGce;
use kops_mock::journal::{GCE_JOURNAL_PATH, GceJournal};
use kops_model::gce::{self, ApplyOptions, GceModelContext, UpdateCluster, UpdateOptions};
use kops_statestore::StoreUrl;
use kops_statestore::gcs::{GcsTokenSource as _, GoogleCredentials};

use crate::cli::{Global, PlanFormat, Target, UpdateClusterArgs};
use crate::get::print_resources;
use crate::state::State;

/// What a GCE client is opened for: project, region and state store URL (whose bucket
/// the client covers).
type ClientKey = (String, String, String);

/// The GCE clients opened within a [`crate::cloud::ReuseOpened`] scope; `None` outside
/// one.
static GCE_OPENED: Mutex<Option<BTreeMap<ClientKey, Arc<dyn GceCloud>>>> = Mutex::new(None);

/// Starts (`true`) or ends a scope reusing the GCE clients opened in it
/// ([`crate::cloud::reuse_opened`]).
pub fn reuse_opened(on: bool) {
    *crate::cloud::lock(&GCE_OPENED) = on.then(BTreeMap::new);
}

/// The GCE cloud of one command.
pub struct GceCloudHandle {
    /// The cloud.
    pub api: Arc<JournaledGce>,
    /// For the mock: its journal in the state store.
    mock: Option<GceJournal>,
    /// A line saying which cloud this is.
    pub description: String,
}

impl GceCloudHandle {
    /// Opens the cloud of a cluster in `project` and `region`.
    pub async fn open(
        st: &State,
        mock: bool,
        project: &str,
        region: &str,
    ) -> anyhow::Result<GceCloudHandle> {
        if mock {
            return Self::open_mock(st, project, region).await;
        }
        let description = format!("GCE (project {project}, region {region})");
        // The client opened already in this scope, if any (see
        // [`crate::cloud::ReuseOpened`]).
        let key = (project.to_owned(), region.to_owned(), st.url.clone());
        let reused = crate::cloud::lock(&GCE_OPENED)
            .as_ref()
            .and_then(|m| m.get(&key).cloned());
        if let Some(rest) = reused {
            return Ok(GceCloudHandle {
                api: Arc::new(JournaledGce::new(rest)),
                mock: None,
                description,
            });
        }
        // The command's Google credentials, shared with a `gs://` state store: a token
        // is fetched once per command.
        let mut cfg = RestConfig::from_env_sharing(project, region, shared_google_token)
            .with_context(|| format!("configuring the GCE client for project {project}"))?;
        if crate::state::endpoint_credentials() {
            cfg = cfg.with_token_source(shared_google_token()?);
        }
        if let Ok(StoreUrl::Gcs { bucket, .. }) = StoreUrl::parse(&st.url) {
            cfg = cfg.with_buckets([bucket]);
        }
        let rest = RestGce::new(cfg)
            .with_context(|| format!("configuring the GCE client for project {project}"))?;
        rest.project()
            .await
            .with_context(|| format!("reaching {description}"))?;
        let rest: Arc<dyn GceCloud> = Arc::new(rest);
        if let Some(opened) = crate::cloud::lock(&GCE_OPENED).as_mut() {
            opened.insert(key, rest.clone());
        }
        Ok(GceCloudHandle {
            api: Arc::new(JournaledGce::new(rest)),
            mock: None,
            description,
        })
    }

    async fn open_mock(st: &State, project: &str, region: &str) -> anyhow::Result<GceCloudHandle> {
        let journal = GceJournal::read(st.store().clone(), &st.url, project, region).await?;
        let api = journal.open_mock().await?;
        Ok(GceCloudHandle {
            api: Arc::new(api),
            description: format!(
                "GCE mock cloud (project {project}, region {region}, state in {}/{GCE_JOURNAL_PATH})",
                st.url
            ),
            mock: Some(journal),
        })
    }

    /// Persists what changed in the mock cloud (nothing to do for GCE itself).
    pub async fn save(&self) -> anyhow::Result<()> {
        match &self.mock {
            Some(journal) => Ok(journal.save(&self.api).await?),
            None => Ok(()),
        }
    }
}

/// The command's Google credentials ([`crate::state::google_credentials`]) as the REST
/// backend's token source.
fn shared_google_token() -> CloudResult<Arc<dyn TokenSource>> {
    match crate::state::google_credentials() {
        Ok(c) => Ok(Arc::new(SharedGoogleToken(c))),
        Err(e) => Err(CloudError::PermissionDenied {
            operation: "loading Google application-default credentials".into(),
            source: Some(Box::new(e)),
        }),
    }
}

/// The state store's Google credentials serving the REST backend's tokens.
#[derive(Debug)]
struct SharedGoogleToken(Arc<GoogleCredentials>);

#[async_trait::async_trait]
impl TokenSource for SharedGoogleToken {
    async fn token(&self) -> CloudResult<String> {
        self.0
            .token()
            .await
            .map_err(|e| CloudError::PermissionDenied {
                operation: "getting a Google access token".into(),
                source: Some(Box::new(e)),
            })
    }
}

/// The project of a stored GCE cluster, or an error naming the field.
pub fn project(cluster: &v1alpha2::Cluster) -> anyhow::Result<String> {
    cluster
        .spec
        .project
        .clone()
        .filter(|p| !p.is_empty())
        .ok_or_else(|| {
            anyhow!(
                "cluster {}: spec.project: a GCE cluster needs its project",
                cluster.name()
            )
        })
}

/// Opens the cloud of a stored GCE cluster.
pub async fn open(
    global: &Global,
    st: &State,
    cluster: &v1alpha2::Cluster,
) -> anyhow::Result<GceCloudHandle> {
    let region = crate::update::region(cluster)?;
    GceCloudHandle::open(st, global.mock_cloud, &project(cluster)?, &region).await
}

async fn context(
    st: &State,
    cloud: &GceCloudHandle,
    cluster: &v1alpha2::Cluster,
    groups: &[v1alpha2::InstanceGroup],
    running: Option<String>,
) -> anyhow::Result<GceModelContext> {
    let name = cluster.name();
    let opts = crate::update::discover_options(st, name)
        .await?
        .with_control_plane_version(running);
    gce::discover(cloud.api.as_ref(), cluster, groups, &opts)
        .await
        .with_context(|| format!("cluster {name}: discovering it in {}", cloud.description))
}

/// The images and files the machines of a stored GCE cluster download
/// ([`gce::UpdateCluster::assets`]).
pub async fn assets(
    global: &Global,
    st: &State,
    cluster: &v1alpha2::Cluster,
    groups: &[v1alpha2::InstanceGroup],
) -> anyhow::Result<kops_model::assets::Assets> {
    let cloud = open(global, st, cluster).await?;
    let ctx = context(st, &cloud, cluster, groups, None).await?;
    let update = UpdateCluster::new(ctx, UpdateOptions::default())
        .with_context(|| format!("building the model of cluster {}", cluster.name()))?;
    Ok(update.assets())
}

/// `update cluster` of a GCE cluster through the library's workflow
/// ([`gce::UpdateCluster`]); returns the exit code. `lock` is the cluster's lock, held by
/// the caller for a direct `--yes` run.
pub async fn update_cluster(
    global: &Global,
    args: &UpdateClusterArgs,
    st: &State,
    cluster: &v1alpha2::Cluster,
    groups: &[v1alpha2::InstanceGroup],
    (options, running): (UpdateOptions, Option<String>),
    lock: Option<&mut kops_statestore::Lock>,
) -> anyhow::Result<u8> {
    let name = cluster.name();
    // An S3 backend of a GCE cluster has no region of the cluster's to default to.
    let backend = crate::update::terraform_backend(args, "")?;
    let cloud = open(global, st, cluster).await?;
    let ctx = context(st, &cloud, cluster, groups, running).await?;
    let update = UpdateCluster::new(ctx, options)
        .with_context(|| format!("building the model of cluster {name}"))?;
    if args.target == Target::Terraform {
        let rendered = update
            .render_terraform()
            .with_context(|| format!("rendering cluster {name} as Terraform"))?;
        return crate::update::write_terraform(args, name, &rendered, backend.as_ref(), "");
    }
    let api: Arc<dyn GceCloud> = cloud.api.clone();
    let plan = update
        .plan(&ListCache::for_cluster(api.clone(), name))
        .await
        .with_context(|| format!("planning cluster {name} against {}", cloud.description))?;
    let Some(lock) = lock.filter(|_| args.yes) else {
        return Ok(crate::update::print_unapplied(args, &plan.plan));
    };
    if !plan.plan.has_changes() {
        match args.output {
            PlanFormat::Json => println!("{}", plan.plan.to_json()),
            PlanFormat::Text => println!("No changes needed for cluster {name}."),
        }
        crate::update::export_after_update(global, st, name, args).await?;
        return Ok(0);
    }
    let (bar, executor) = crate::update::apply_progress(update.graph().len());
    let apply = ApplyOptions::default().with_executor(executor);
    let result = update
        .apply_holding(
            &ListCache::for_cluster(api, name),
            &st.registry,
            &plan,
            lock,
            apply,
        )
        .await;
    bar.finish_and_clear();
    // The cloud changed whatever the outcome: persist the mock's state first.
    cloud.save().await?;
    let result =
        result.with_context(|| format!("updating cluster {name} in {}", cloud.description))?;
    crate::update::print_applied(args, name, &result);
    if args.output == PlanFormat::Text && !args.reconciling {
        let groups: Arc<dyn kops_model::day2::groups::InstanceGroupCloud> = Arc::new(
            kops_model::day2::groups::GceInstanceGroups::new(cloud.api.clone()),
        );
        crate::rolling::hint_after_update(groups, st, name).await;
    }
    crate::update::export_after_update(global, st, name, args).await?;
    Ok(0)
}

/// The cloud resources of a GCE cluster, or of one of its instance groups (`group`):
/// listed as a table, or (with `yes`) deleted. Returns how many there are.
pub async fn delete_resources(
    global: &Global,
    st: &State,
    cluster: &v1alpha2::Cluster,
    group: Option<&str>,
    yes: bool,
) -> anyhow::Result<usize> {
    let name = cluster.name();
    let cloud = open(global, st, cluster).await?;
    let api = cloud.api.as_ref();
    let what = match group {
        Some(g) => format!("instance group {g:?} of cluster {name}"),
        None => format!("cluster {name}"),
    };
    let found = match group {
        Some(g) => gce::find_group_resources(api, name, g).await,
        None => gce::find_cluster_resources(api, name).await,
    }
    .with_context(|| format!("listing the resources of {what} in {}", cloud.description))?;
    if !yes {
        print_resources(&found);
        return Ok(found.len());
    }
    let deleted = match group {
        Some(g) => gce::delete_group(api, name, g).await,
        None => gce::delete_cluster(api, name).await,
    };
    cloud.save().await?;
    let deleted = deleted
        .with_context(|| format!("deleting the resources of {what} in {}", cloud.description))?;
    println!("Deleted {} cloud resource(s) of {what}.", deleted.len());
    Ok(deleted.len())
}
