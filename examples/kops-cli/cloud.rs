//! The cloud a command talks to: real AWS, or the in-memory mock (`--mock-cloud`).
//!
//! # How the mock cloud persists between invocations
//!
//! The mock (`kops-mock`) lives in memory, but `create`, `update --yes` and `delete
//! --yes` are separate processes. The CLI therefore keeps the mock's history in the
//! state store it already uses, as a journal (`kops_mock::journal`, at
//! [`AWS_JOURNAL_PATH`] under the store root, outside every cluster's tree):
//!
//! 1. every run starts a fresh mock from kops-mock's seed (`kops_mock::journal::aws_seed`:
//!    DNS zones and images), or from the fixture file `KOPS_MOCK_CLOUD_FIXTURE` names, in
//!    the journal's region, and replays the journal into it;
//! 2. the command runs against [`JournaledAws`], which records each successful mutation;
//! 3. when the command ends (also after a failed apply: the cloud changed anyway) the
//!    journal is written back with compare-and-swap against the version read in step 1,
//!    so two concurrent commands cannot lose each other's changes.
//!
//! Deleting the journal object resets the mock cloud to its seed. The Terraform
//! provider's `mock_cloud = true` keeps the same journal, so each sees the other's
//! clusters.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use anyhow::Context as _;
use kops_mock::journal::{AWS_JOURNAL_PATH, AwsJournal};
use kops_model::aws::cloud::AwsCloud;

pub use kops_mock::journal::JournaledAws;

use crate::state::State;

/// The environment variable naming a fixture file (the format of kops-mock's
/// `Fixture`) the mock cloud starts from instead of the embedded seed.
pub const FIXTURE_ENV: &str = "KOPS_MOCK_CLOUD_FIXTURE";

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
    pub api: Arc<JournaledAws>,
    /// For the mock: its journal in the state store.
    mock: Option<AwsJournal>,
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
        let journal = AwsJournal::read(st.store().clone(), &st.url, region).await?;
        let fixture = match std::env::var_os(FIXTURE_ENV).filter(|p| !p.is_empty()) {
            Some(path) => kops_mock::fixture::Fixture::from_file(&path).with_context(|| {
                format!(
                    "reading the mock cloud's fixture {} ({FIXTURE_ENV})",
                    std::path::Path::new(&path).display()
                )
            })?,
            None => kops_mock::journal::aws_seed().context("reading the mock cloud's seed")?,
        };
        let api = journal.open_mock(&fixture).await?;
        Ok(Cloud {
            api: Arc::new(api),
            description: format!(
                "mock cloud (region {region}, state in {}/{AWS_JOURNAL_PATH})",
                st.url
            ),
            mock: Some(journal),
        })
    }

    async fn open_aws(region: &str) -> anyhow::Result<Cloud> {
        // The backend opened already in this scope, if any (see [`ReuseOpened`]).
        let reused = lock(&AWS_OPENED)
            .as_ref()
            .and_then(|m| m.get(region).cloned());
        if let Some(backend) = reused {
            return Ok(Cloud {
                api: Arc::new(JournaledAws::new(backend)),
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
            api: Arc::new(JournaledAws::new(backend)),
            description: format!("AWS (region {region})"),
            mock: None,
        })
    }

    /// Persists what changed in the mock cloud (nothing to do for AWS).
    pub async fn save(&self) -> anyhow::Result<()> {
        match &self.mock {
            Some(journal) => Ok(journal.save(&self.api).await?),
            None => Ok(()),
        }
    }
}
