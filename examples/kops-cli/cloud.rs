//! The cloud a command talks to: real AWS, or the in-memory mock (`--mock-cloud`).
//!
//! # How the mock cloud persists between invocations
//!
//! The mock (`kops-mock`) lives in memory, but `create`, `update --yes` and `delete
//! --yes` are separate processes. The CLI therefore keeps the mock's history in the
//! state store it already uses, as a journal at [`JOURNAL_PATH`] under the store root
//! (outside every cluster's tree, so kOps and the registry ignore it):
//!
//! 1. every run starts a fresh mock from the embedded seed (`seed/mock-cloud.yaml`: DNS
//!    zones and images) in the journal's region;
//! 2. it replays the journal: each successful `create`, `update` and `delete` made
//!    through the [`AwsCloud`] trait, and each instance a rolling update detached or
//!    terminated (the groups launch the same replacements again), in order. The mock gives sequential ids, so a
//!    replayed create must get the id it got the first time; if not the journal does not
//!    belong to this seed and the command fails rather than guessing;
//! 3. the command runs against [`JournaledCloud`], which appends each successful
//!    mutation to the journal;
//! 4. when the command ends (also after a failed apply: the cloud changed anyway) the
//!    journal is written back with compare-and-swap against the version read in step 1,
//!    so two concurrent commands cannot lose each other's changes.
//!
//! Deleting the journal object resets the mock cloud to its seed.

use std::sync::{Arc, Mutex};

use anyhow::{Context as _, anyhow, bail};
use bytes::Bytes;
use kops_model::aws::cloud::{
    AccountInfo, AwsCloud, CloudResult, CreateRequest, HostedZone, Image, ImageQuery, ListQuery,
    Resource, ResourceCloud, ResourceType, UpdateRequest, ZoneQuery,
};
use kops_statestore::{PutOptions, Store, StoreExt as _, Version};
use serde::{Deserialize, Serialize};

use crate::state::State;

/// Where the mock cloud's journal lives in the state store.
pub const JOURNAL_PATH: &str = "kops-rs-mock-cloud/journal.json";

/// The mock cloud's seed.
const SEED: &str = include_str!("seed/mock-cloud.yaml");

/// One successful mutation.
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
        resource_type: ResourceType,
        id: String,
    },
    /// A rolling update's surge: the instance left its group (which launched another).
    Detach {
        group: String,
        instance: String,
    },
    /// A rolling update's replacement (the group launches another).
    Terminate {
        instance: String,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Journal {
    /// Region the mock serves.
    region: String,
    /// Mutations, oldest first.
    entries: Vec<Entry>,
}

/// Called after each successful delete.
type DeleteHook = Box<dyn Fn(ResourceType, &str) + Send + Sync>;

/// A cloud that records each successful mutation of the cloud it wraps.
pub struct JournaledCloud {
    inner: Arc<dyn AwsCloud>,
    entries: Mutex<Vec<Entry>>,
    /// Called after each successful delete (drives the delete progress bar).
    on_delete: Mutex<Option<DeleteHook>>,
}

impl std::fmt::Debug for JournaledCloud {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JournaledCloud")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl JournaledCloud {
    fn new(inner: Arc<dyn AwsCloud>) -> Self {
        JournaledCloud {
            inner,
            entries: Mutex::new(Vec::new()),
            on_delete: Mutex::new(None),
        }
    }

    fn record(&self, e: Entry) {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(e);
    }

    fn take(&self) -> Vec<Entry> {
        std::mem::take(&mut *self.entries.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Sets the callback run after each successful delete.
    pub fn set_on_delete(&self, f: Option<DeleteHook>) {
        *self.on_delete.lock().unwrap_or_else(|p| p.into_inner()) = f;
    }
}

#[async_trait::async_trait]
impl ResourceCloud<ResourceType> for JournaledCloud {
    async fn list(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        self.inner.list(query).await
    }
    async fn list_digests(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        self.inner.list_digests(query).await
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
    async fn delete(&self, resource_type: ResourceType, id: &str) -> CloudResult<()> {
        self.inner.delete(resource_type, id).await?;
        self.record(Entry::Delete {
            resource_type,
            id: id.to_string(),
        });
        if let Some(f) = &*self.on_delete.lock().unwrap_or_else(|p| p.into_inner()) {
            f(resource_type, id);
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl AwsCloud for JournaledCloud {
    async fn account(&self) -> CloudResult<AccountInfo> {
        self.inner.account().await
    }
    async fn zones(&self) -> CloudResult<Vec<String>> {
        self.inner.zones().await
    }
    async fn images(&self, query: &ImageQuery) -> CloudResult<Vec<Image>> {
        self.inner.images(query).await
    }
    async fn hosted_zones(&self, query: &ZoneQuery) -> CloudResult<Vec<HostedZone>> {
        self.inner.hosted_zones(query).await
    }
    // Rolling update: detach and terminate change the cloud (the groups launch
    // replacements), so they are journaled and replayed like creates; deregistration only
    // changes load balancers' target health, which the mock does not keep.
    async fn group_members(
        &self,
        names: &[String],
    ) -> CloudResult<Vec<kops_model::aws::cloud::GroupMembers>> {
        self.inner.group_members(names).await
    }
    async fn detach_instance(&self, group: &str, instance: &str) -> CloudResult<()> {
        self.inner.detach_instance(group, instance).await?;
        self.record(Entry::Detach {
            group: group.to_owned(),
            instance: instance.to_owned(),
        });
        Ok(())
    }
    async fn terminate_instance(&self, instance: &str) -> CloudResult<()> {
        self.inner.terminate_instance(instance).await?;
        self.record(Entry::Terminate {
            instance: instance.to_owned(),
        });
        Ok(())
    }
    async fn deregister_instance(&self, group: &str, instance: &str) -> CloudResult<()> {
        self.inner.deregister_instance(group, instance).await
    }
}

/// The cloud of one command.
pub struct Cloud {
    /// The cloud, as the model and the delete code see it.
    pub api: Arc<JournaledCloud>,
    /// For the mock: the journal's store, its version when read, and its entries then.
    mock: Option<Mutex<MockState>>,
    /// A line saying which cloud this is.
    pub description: String,
}

struct MockState {
    store: Arc<dyn Store>,
    version: Option<Version>,
    journal: Journal,
}

impl Cloud {
    /// Opens the cloud for a cluster in `region`: the mock when asked for, else AWS.
    pub async fn open(st: &State, mock: bool, region: &str) -> anyhow::Result<Cloud> {
        if mock {
            return Cloud::open_mock(st, region).await;
        }
        Cloud::open_aws(region).await
    }

    async fn open_mock(st: &State, region: &str) -> anyhow::Result<Cloud> {
        let store = st.store().clone();
        let (journal, version) = match store.get_opt(JOURNAL_PATH).await {
            Ok(Some(got)) => {
                let j: Journal = serde_json::from_slice(&got.data).with_context(|| {
                    format!("reading the mock cloud's journal {}/{JOURNAL_PATH}", st.url)
                })?;
                (j, Some(got.version))
            }
            Ok(None) => (
                Journal {
                    region: region.to_string(),
                    entries: Vec::new(),
                },
                None,
            ),
            Err(e) => {
                return Err(anyhow::Error::new(e).context(format!(
                    "reading the mock cloud's journal {}/{JOURNAL_PATH}",
                    st.url
                )));
            }
        };
        if journal.region != region {
            bail!(
                "the mock cloud of state store {} serves region {}, not {region} (delete {JOURNAL_PATH} in the store to reset it)",
                st.url,
                journal.region
            );
        }
        let fixture = kops_mock::fixture::Fixture::parse(SEED, "kops-cli/seed/mock-cloud.yaml")
            .context("reading the mock cloud's seed")?;
        let options = kops_mock::MockOptions::default()
            .with_region(region)
            .with_zones(Vec::<String>::new());
        let mock = kops_mock::MockAws::with_options(options);
        fixture.apply(&mock).context("seeding the mock cloud")?;
        let inner: Arc<dyn AwsCloud> = Arc::new(mock);
        for (i, e) in journal.entries.iter().enumerate() {
            let at = || {
                format!(
                    "replaying the mock cloud's journal {JOURNAL_PATH}: entry {}",
                    i + 1
                )
            };
            match e {
                Entry::Create { request, id } => {
                    let r = inner.create(request).await.with_context(at)?;
                    if &r.id != id {
                        bail!(
                            "{}: created {} where the journal recorded {id}; the journal does not match this seed (delete it to reset the mock cloud)",
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
                Entry::Detach { group, instance } => {
                    inner
                        .detach_instance(group, instance)
                        .await
                        .with_context(at)?;
                }
                Entry::Terminate { instance } => {
                    inner.terminate_instance(instance).await.with_context(at)?;
                }
            }
        }
        Ok(Cloud {
            api: Arc::new(JournaledCloud::new(inner)),
            description: format!(
                "mock cloud (region {region}, state in {}/{JOURNAL_PATH})",
                st.url
            ),
            mock: Some(Mutex::new(MockState {
                store,
                version,
                journal,
            })),
        })
    }

    async fn open_aws(region: &str) -> anyhow::Result<Cloud> {
        let builder = kops_cloud_aws::AwsBackendBuilder::from_env()
            .await
            .region(region);
        let backend = builder
            .build()
            .with_context(|| format!("configuring the AWS client for region {region}"))?;
        // The first request: missing or rejected credentials show here, as one line.
        if let Err(e) = backend.account().await {
            return Err(crate::errors::aws_account_error(e, region));
        }
        Ok(Cloud {
            api: Arc::new(JournaledCloud::new(Arc::new(backend))),
            description: format!("AWS (region {region})"),
            mock: None,
        })
    }

    /// Persists what changed in the mock cloud (nothing to do for AWS).
    pub async fn save(&self) -> anyhow::Result<()> {
        let Some(mock) = &self.mock else {
            return Ok(());
        };
        let new = self.api.take();
        if new.is_empty() {
            return Ok(());
        }
        let (store, data, opts) = {
            let mut m = mock.lock().unwrap_or_else(|p| p.into_inner());
            m.journal.entries.extend(new);
            let data =
                serde_json::to_vec(&m.journal).context("encoding the mock cloud's journal")?;
            let opts = match &m.version {
                Some(v) => PutOptions::update(v.clone()),
                None => PutOptions::create(),
            };
            (m.store.clone(), data, opts)
        };
        let v = put_journal(store.as_ref(), JOURNAL_PATH, data, opts, "mock cloud").await?;
        mock.lock().unwrap_or_else(|p| p.into_inner()).version = Some(v);
        Ok(())
    }
}

/// Writes a mock cloud's journal at `path` with `opts` (created, or updated from the
/// version it was read at); a conflict means another command changed that mock cloud
/// meanwhile, and the error says so. `what` names the mock in errors.
pub async fn put_journal(
    store: &dyn Store,
    path: &str,
    data: Vec<u8>,
    opts: PutOptions,
    what: &str,
) -> anyhow::Result<Version> {
    store.put(path, Bytes::from(data), opts).await.map_err(|e| {
        let conflict = e.is_conflict();
        let err = anyhow::Error::new(e);
        if conflict {
            err.context(anyhow!(
                "saving the {what}'s journal {path}: another command changed the mock cloud meanwhile"
            ))
        } else {
            err.context(format!("saving the {what}'s journal {path}"))
        }
    })
}
