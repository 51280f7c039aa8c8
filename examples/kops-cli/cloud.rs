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
//!    zones and images), or from the fixture file `KOPS_MOCK_CLOUD_FIXTURE` names, in the
//!    journal's region;
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

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use anyhow::Context as _;
use kops_model::aws::cloud::{
    AccountInfo, AwsCloud, CloudResult, HostedZone, Image, ImageQuery, ResourceType, ZoneQuery,
};
use serde::{Deserialize, Serialize};

use crate::journal::{Extra, Journaled, MockJournal, Scope};
use crate::state::State;

/// Where the mock cloud's journal lives in the state store.
pub const JOURNAL_PATH: &str = "kops-rs-mock-cloud/journal.json";

/// The environment variable naming a fixture file (the format of kops-mock's
/// `Fixture`) the mock cloud starts from instead of the embedded seed.
pub const FIXTURE_ENV: &str = "KOPS_MOCK_CLOUD_FIXTURE";

/// The mock cloud's seed.
const SEED: &str = include_str!("seed/mock-cloud.yaml");

/// The AWS mutations beyond the resource calls: a rolling update's.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum AwsEntry {
    /// A rolling update's surge: the instance left its group (which launched another).
    Detach {
        /// The group.
        group: String,
        /// The instance.
        instance: String,
    },
    /// A rolling update's replacement (the group launches another).
    Terminate {
        /// The instance.
        instance: String,
    },
}

#[async_trait::async_trait]
impl Extra<dyn AwsCloud> for AwsEntry {
    async fn replay(&self, cloud: &dyn AwsCloud) -> CloudResult<()> {
        match self {
            AwsEntry::Detach { group, instance } => cloud.detach_instance(group, instance).await,
            AwsEntry::Terminate { instance } => cloud.terminate_instance(instance).await,
        }
    }
}

/// The region the AWS mock serves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Region {
    region: String,
}

impl Scope for Region {
    fn describe(&self) -> String {
        format!("region {}", self.region)
    }
}

/// An AWS cloud that records each successful mutation of the cloud it wraps.
pub type JournaledCloud = Journaled<dyn AwsCloud, ResourceType, AwsEntry>;

#[async_trait::async_trait]
impl AwsCloud for JournaledCloud {
    async fn account(&self) -> CloudResult<AccountInfo> {
        self.inner().account().await
    }
    async fn zones(&self) -> CloudResult<Vec<String>> {
        self.inner().zones().await
    }
    async fn images(&self, query: &ImageQuery) -> CloudResult<Vec<Image>> {
        self.inner().images(query).await
    }
    async fn hosted_zones(&self, query: &ZoneQuery) -> CloudResult<Vec<HostedZone>> {
        self.inner().hosted_zones(query).await
    }
    // Rolling update: detach and terminate change the cloud (the groups launch
    // replacements), so they are journaled and replayed like creates; deregistration only
    // changes load balancers' target health, which the mock does not keep.
    async fn group_members(
        &self,
        names: &[String],
    ) -> CloudResult<Vec<kops_model::aws::cloud::GroupMembers>> {
        self.inner().group_members(names).await
    }
    async fn detach_instance(&self, group: &str, instance: &str) -> CloudResult<()> {
        self.inner().detach_instance(group, instance).await?;
        self.record_extra(AwsEntry::Detach {
            group: group.to_owned(),
            instance: instance.to_owned(),
        });
        Ok(())
    }
    async fn terminate_instance(&self, instance: &str) -> CloudResult<()> {
        self.inner().terminate_instance(instance).await?;
        self.record_extra(AwsEntry::Terminate {
            instance: instance.to_owned(),
        });
        Ok(())
    }
    async fn deregister_instance(&self, group: &str, instance: &str) -> CloudResult<()> {
        self.inner().deregister_instance(group, instance).await
    }
    async fn instance_type_zones(
        &self,
        instance_type: &str,
        zones: &[String],
    ) -> CloudResult<Vec<String>> {
        self.inner().instance_type_zones(instance_type, zones).await
    }
    async fn default_instance_type(
        &self,
        role: kops_model::aws::cloud::MachineRole,
        zones: &[String],
        arm64: bool,
    ) -> CloudResult<String> {
        self.inner().default_instance_type(role, zones, arm64).await
    }
}

/// The AWS backends opened within a [`ReuseOpened`] scope, by region; `None` outside one.
static AWS_OPENED: Mutex<Option<BTreeMap<String, Arc<dyn AwsCloud>>>> = Mutex::new(None);

/// While it lives, opening the real cloud again reuses the backend or client opened
/// first (for the same region, or project and region), with its checked account or
/// project, and the AWS backend's discovery cache, which is kept for one run: one
/// `update cluster` asks the running control plane's version, plans, applies and looks
/// up the API's load balancer through one backend (one STS `GetCallerIdentity`). The
/// mock is opened afresh each time (its state is the journal in the store). Dropping it
/// forgets them, so the steps of `reconcile cluster` (updates and rolling updates in
/// turn) each discover the cloud afresh.
pub struct ReuseOpened(());

/// Starts a [`ReuseOpened`] scope.
pub fn reuse_opened() -> ReuseOpened {
    *lock(&AWS_OPENED) = Some(BTreeMap::new());
    crate::gce::reuse_opened(true);
    ReuseOpened(())
}

impl Drop for ReuseOpened {
    fn drop(&mut self) {
        *lock(&AWS_OPENED) = None;
        crate::gce::reuse_opened(false);
    }
}

/// `m`, locked (a panic elsewhere while it was held leaves a usable map).
pub fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The cloud of one command.
pub struct Cloud {
    /// The cloud, as the model and the delete code see it.
    pub api: Arc<JournaledCloud>,
    /// For the mock: its journal in the state store.
    mock: Option<Mutex<MockJournal<Region, ResourceType, AwsEntry>>>,
    /// A line saying which cloud this is.
    pub description: String,
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
        let journal = MockJournal::read(
            "mock cloud",
            st.store().clone(),
            &st.url,
            JOURNAL_PATH,
            Region {
                region: region.to_string(),
            },
        )
        .await?;
        let fixture = match std::env::var_os(FIXTURE_ENV).filter(|p| !p.is_empty()) {
            Some(path) => kops_mock::fixture::Fixture::from_file(&path).with_context(|| {
                format!(
                    "reading the mock cloud's fixture {} ({FIXTURE_ENV})",
                    std::path::Path::new(&path).display()
                )
            })?,
            None => kops_mock::fixture::Fixture::parse(SEED, "kops-cli/seed/mock-cloud.yaml")
                .context("reading the mock cloud's seed")?,
        };
        let options = kops_mock::MockOptions::default()
            .with_region(region)
            .with_zones(Vec::<String>::new());
        let mock = kops_mock::MockAws::with_options(options);
        fixture.apply(&mock).context("seeding the mock cloud")?;
        let inner: Arc<dyn AwsCloud> = Arc::new(mock);
        journal.replay(inner.as_ref()).await?;
        Ok(Cloud {
            api: Arc::new(JournaledCloud::new(inner)),
            description: format!(
                "mock cloud (region {region}, state in {}/{JOURNAL_PATH})",
                st.url
            ),
            mock: Some(Mutex::new(journal)),
        })
    }

    async fn open_aws(region: &str) -> anyhow::Result<Cloud> {
        // The backend opened already in this scope, if any (see [`ReuseOpened`]).
        let reused = lock(&AWS_OPENED)
            .as_ref()
            .and_then(|m| m.get(region).cloned());
        if let Some(backend) = reused {
            return Ok(Cloud {
                api: Arc::new(JournaledCloud::new(backend)),
                description: format!("AWS (region {region})"),
                mock: None,
            });
        }
        // The command's AWS environment, shared with the state store (and with any other
        // cloud this command opens): credentials are fetched once per command.
        let env = crate::state::aws_env(Some(region)).await;
        let backend = kops_cloud_aws::AwsBackendBuilder::from_aws_env(&env)
            .region(region)
            .build()
            .with_context(|| format!("configuring the AWS client for region {region}"))?;
        // The first request: missing or rejected credentials show here, as one line.
        if let Err(e) = backend.account().await {
            return Err(crate::errors::aws_account_error(e, region));
        }
        let backend: Arc<dyn AwsCloud> = Arc::new(backend);
        if let Some(opened) = lock(&AWS_OPENED).as_mut() {
            opened.insert(region.to_owned(), backend.clone());
        }
        Ok(Cloud {
            api: Arc::new(JournaledCloud::new(backend)),
            description: format!("AWS (region {region})"),
            mock: None,
        })
    }

    /// Persists what changed in the mock cloud (nothing to do for AWS).
    pub async fn save(&self) -> anyhow::Result<()> {
        match &self.mock {
            Some(journal) => MockJournal::save(journal, &self.api).await,
            None => Ok(()),
        }
    }
}
