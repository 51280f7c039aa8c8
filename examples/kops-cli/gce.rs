//! GCE clusters: the cloud a command talks to (the in-memory GCE mock with
//! `--mock-cloud`, else the REST backend), `update cluster` and `delete cluster` on it.
//!
//! The REST backend reaches Google's APIs with application-default credentials, or
//! every API under the root `KOPS_GCE_ENDPOINT` names (a local fake of the APIs; tests
//! set it to a 127.0.0.1 address).
//!
//! The mock persists between invocations as the AWS mock does (see `cloud.rs`): a journal
//! of successful mutations at [`JOURNAL_PATH`] in the state store, replayed into a fresh
//! mock on each run and written back with compare-and-swap.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::{Context as _, anyhow, bail};
use kops_api::v1alpha2;
use kops_cloud_gce::cache::ListCache;
use kops_cloud_gce::cloud::{
    CloudResult, CreateRequest, GceCloud, GceResourceType, ListQuery, ManagedZone, ProjectInfo,
    Resource, ResourceCloud, UpdateRequest,
};
use kops_cloud_gce::rest::{RestConfig, RestGce};
use kops_model::aws::DiscoverOptions;
use kops_model::gce::{self, GceModelContext};
use kops_statestore::{PutOptions, Store, StoreExt as _, StoreUrl, Version};
use kops_tasks::LifecycleOverrides;
use serde::{Deserialize, Serialize};

use crate::cli::{Global, PlanFormat, Target, UpdateClusterArgs};
use crate::get::print_table;
use crate::output;
use crate::spec;
use crate::state::State;

/// Where the GCE mock cloud's journal lives in the state store.
pub const JOURNAL_PATH: &str = "kops-rs-mock-cloud/gce-journal.json";

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
enum Entry {
    Create {
        request: CreateRequest,
        id: String,
    },
    Update {
        request: UpdateRequest,
    },
    Delete {
        resource_type: GceResourceType,
        id: String,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Journal {
    project: String,
    region: String,
    entries: Vec<Entry>,
}

/// A GCE cloud that records each successful mutation of the cloud it wraps.
#[derive(Debug)]
pub struct JournaledGce {
    inner: Arc<dyn GceCloud>,
    entries: Mutex<Vec<Entry>>,
}

impl JournaledGce {
    fn record(&self, e: Entry) {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(e);
    }
}

#[async_trait::async_trait]
impl ResourceCloud<GceResourceType> for JournaledGce {
    async fn list(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        self.inner.list(query).await
    }
    async fn create(&self, request: &CreateRequest) -> CloudResult<Resource> {
        let r = self.inner.create(request).await?;
        self.record(Entry::Create {
            request: request.clone(),
            id: r.id.clone(),
        });
        Ok(r)
    }
    async fn update(&self, request: &UpdateRequest) -> CloudResult<Resource> {
        let r = self.inner.update(request).await?;
        self.record(Entry::Update {
            request: request.clone(),
        });
        Ok(r)
    }
    async fn delete(&self, resource_type: GceResourceType, id: &str) -> CloudResult<()> {
        self.inner.delete(resource_type, id).await?;
        self.record(Entry::Delete {
            resource_type,
            id: id.to_owned(),
        });
        Ok(())
    }
}

#[async_trait::async_trait]
impl GceCloud for JournaledGce {
    async fn project(&self) -> CloudResult<ProjectInfo> {
        self.inner.project().await
    }
    async fn zones(&self) -> CloudResult<Vec<String>> {
        self.inner.zones().await
    }
    async fn managed_zones(&self) -> CloudResult<Vec<ManagedZone>> {
        self.inner.managed_zones().await
    }
}

struct MockState {
    store: Arc<dyn Store>,
    version: Option<Version>,
    journal: Journal,
}

/// The GCE cloud of one command.
pub struct GceCloudHandle {
    /// The cloud.
    pub api: Arc<JournaledGce>,
    mock: Option<Mutex<MockState>>,
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
        let mut cfg = RestConfig::from_env(project, region)
            .with_context(|| format!("configuring the GCE client for project {project}"))?;
        if let Ok(StoreUrl::Gcs { bucket, .. }) = StoreUrl::parse(&st.url) {
            cfg = cfg.with_buckets([bucket]);
        }
        let rest = RestGce::new(cfg)
            .with_context(|| format!("configuring the GCE client for project {project}"))?;
        let description = format!("GCE (project {project}, region {region})");
        rest.project()
            .await
            .with_context(|| format!("reaching {description}"))?;
        Ok(GceCloudHandle {
            api: Arc::new(JournaledGce {
                inner: Arc::new(rest),
                entries: Mutex::new(Vec::new()),
            }),
            mock: None,
            description,
        })
    }

    async fn open_mock(st: &State, project: &str, region: &str) -> anyhow::Result<GceCloudHandle> {
        let store = st.store().clone();
        let reading = || {
            format!(
                "reading the GCE mock cloud's journal {}/{JOURNAL_PATH}",
                st.url
            )
        };
        let (journal, version) = match store.get_opt(JOURNAL_PATH).await {
            Ok(Some(got)) => {
                let j: Journal = serde_json::from_slice(&got.data).with_context(reading)?;
                (j, Some(got.version))
            }
            Ok(None) => (
                Journal {
                    project: project.to_owned(),
                    region: region.to_owned(),
                    entries: Vec::new(),
                },
                None,
            ),
            Err(e) => return Err(anyhow::Error::new(e).context(reading())),
        };
        if journal.project != project || journal.region != region {
            bail!(
                "the GCE mock cloud of state store {} serves project {} in {}, not {project} in {region} (delete {JOURNAL_PATH} in the store to reset it)",
                st.url,
                journal.project,
                journal.region
            );
        }
        let inner: Arc<dyn GceCloud> = Arc::new(kops_mock::gce::MockGce::new(project, region));
        for (i, e) in journal.entries.iter().enumerate() {
            let at = || {
                format!(
                    "replaying the GCE mock cloud's journal {JOURNAL_PATH}: entry {}",
                    i + 1
                )
            };
            match e {
                Entry::Create { request, id } => {
                    let r = inner.create(request).await.with_context(at)?;
                    if &r.id != id {
                        bail!(
                            "{}: created {} where the journal recorded {id} (delete the journal to reset the mock cloud)",
                            at(),
                            r.id
                        );
                    }
                }
                Entry::Update { request } => {
                    inner.update(request).await.with_context(at)?;
                }
                Entry::Delete { resource_type, id } => {
                    inner.delete(*resource_type, id).await.with_context(at)?;
                }
            }
        }
        Ok(GceCloudHandle {
            api: Arc::new(JournaledGce {
                inner,
                entries: Mutex::new(Vec::new()),
            }),
            description: format!(
                "GCE mock cloud (project {project}, region {region}, state in {}/{JOURNAL_PATH})",
                st.url
            ),
            mock: Some(Mutex::new(MockState {
                store,
                version,
                journal,
            })),
        })
    }

    /// Persists what changed in the mock cloud (nothing to do for GCE itself).
    pub async fn save(&self) -> anyhow::Result<()> {
        let Some(mock) = &self.mock else {
            return Ok(());
        };
        let new = std::mem::take(&mut *self.api.entries.lock().unwrap_or_else(|p| p.into_inner()));
        if new.is_empty() {
            return Ok(());
        }
        let (store, data, opts) = {
            let mut m = mock.lock().unwrap_or_else(|p| p.into_inner());
            m.journal.entries.extend(new);
            let data =
                serde_json::to_vec(&m.journal).context("encoding the GCE mock cloud's journal")?;
            let opts = match &m.version {
                Some(v) => PutOptions::update(v.clone()),
                None => PutOptions::create(),
            };
            (m.store.clone(), data, opts)
        };
        let v =
            crate::cloud::put_journal(store.as_ref(), JOURNAL_PATH, data, opts, "GCE mock cloud")
                .await?;
        mock.lock().unwrap_or_else(|p| p.into_inner()).version = Some(v);
        Ok(())
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
) -> anyhow::Result<GceModelContext> {
    let name = cluster.name();
    let mut opts = DiscoverOptions::default()
        .with_channel(spec::channel()?)
        .with_state_store(st.store().clone(), st.url.clone());
    let keys = st
        .registry
        .list_ssh_public_keys(name)
        .await
        .with_context(|| format!("reading the SSH public keys of cluster {name}"))?;
    if let Some((_, key)) = keys.into_iter().next() {
        opts = opts.with_ssh_public_key(key);
    }
    gce::discover(cloud.api.as_ref(), cluster, groups, &opts)
        .await
        .with_context(|| format!("cluster {name}: discovering it in {}", cloud.description))
}

/// `update cluster` of a GCE cluster; returns the exit code.
pub async fn update_cluster(
    global: &Global,
    args: &UpdateClusterArgs,
    st: &State,
    cluster: &v1alpha2::Cluster,
    groups: &[v1alpha2::InstanceGroup],
    overrides: LifecycleOverrides,
) -> anyhow::Result<u8> {
    let name = cluster.name();
    let cloud = open(global, st, cluster).await?;
    let ctx = context(st, &cloud, cluster, groups).await?;
    if args.target == Target::Terraform {
        let out = args
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from("out/terraform"));
        let rendered = gce::render_terraform(&ctx, &overrides)
            .with_context(|| format!("rendering cluster {name} as Terraform"))?;
        rendered
            .write_to(&out)
            .with_context(|| format!("writing Terraform to {}", out.display()))?;
        eprintln!(
            "Terraform configuration for cluster {name} written to {}",
            out.display()
        );
        eprintln!("Run `terraform init` and `terraform apply` in that directory to create it.");
        return Ok(0);
    }
    let api: Arc<dyn GceCloud> = cloud.api.clone();
    let plan = gce::plan(&ListCache::for_cluster(api.clone(), name), &ctx, &overrides)
        .await
        .with_context(|| format!("planning cluster {name} against {}", cloud.description))?;
    if !args.yes {
        match args.output {
            PlanFormat::Json => println!("{}", plan.to_json()),
            PlanFormat::Text => {
                println!(
                    "{}",
                    output::plan_text(&plan.render_text(), output::stdout_colours())
                );
                if plan.has_changes() {
                    println!("\nMust specify --yes to apply changes");
                }
            }
        }
        return Ok(u8::try_from(plan.exit_code()).unwrap_or(1));
    }
    if !plan.has_changes() {
        match args.output {
            PlanFormat::Json => println!("{}", plan.to_json()),
            PlanFormat::Text => println!("No changes needed for cluster {name}."),
        }
        return Ok(0);
    }
    let result = gce::apply(&ListCache::for_cluster(api, name), &ctx, &overrides).await;
    // The cloud changed whatever the outcome: persist the mock's state first.
    cloud.save().await?;
    let result =
        result.with_context(|| format!("updating cluster {name} in {}", cloud.description))?;
    match args.output {
        PlanFormat::Json => println!("{}", result.to_json()),
        PlanFormat::Text => {
            let s = result.summary();
            println!(
                "Cluster {name} updated: {} created, {} modified, {} deleted, {} unchanged.",
                s.create, s.update, s.delete, s.unchanged
            );
        }
    }
    Ok(0)
}

/// The cloud resources of a GCE cluster, and (with `yes`) their deletion; `Ok(None)` when
/// only listed.
pub async fn delete_resources(
    global: &Global,
    st: &State,
    cluster: &v1alpha2::Cluster,
    yes: bool,
) -> anyhow::Result<usize> {
    let name = cluster.name();
    let cloud = open(global, st, cluster).await?;
    let found = gce::find_cluster_resources(cloud.api.as_ref(), name)
        .await
        .with_context(|| {
            format!(
                "listing the resources of cluster {name} in {}",
                cloud.description
            )
        })?;
    if !yes {
        let rows: Vec<Vec<String>> = found
            .iter()
            .map(|r| {
                vec![
                    r.resource_type.map(|t| t.to_string()).unwrap_or_default(),
                    r.id.clone(),
                    r.name.clone().unwrap_or_default(),
                ]
            })
            .collect();
        if !rows.is_empty() {
            print_table(&["TYPE", "ID", "NAME"], &rows);
        }
        return Ok(found.len());
    }
    let deleted = gce::delete_cluster(cloud.api.as_ref(), name).await;
    cloud.save().await?;
    let deleted = deleted.with_context(|| {
        format!(
            "deleting the resources of cluster {name} in {}",
            cloud.description
        )
    })?;
    println!(
        "Deleted {} cloud resource(s) of cluster {name}.",
        deleted.len()
    );
    Ok(deleted.len())
}
