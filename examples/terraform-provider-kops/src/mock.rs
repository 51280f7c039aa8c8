//! Mock mode (`mock_cloud = true` in the provider block): clusters live on kops-mock's
//! in-memory AWS cloud instead of AWS, for examples and tests that need no account.
//!
//! Each of Terraform's commands runs the provider as a process of its own, so the mock
//! outlives one the way the `kops` CLI's `--mock-cloud` makes it: each cloud call of
//! the provider opens kops-mock's journaled AWS mock (`kops_mock::journal`), which starts
//! a fresh mock from its seed (two DNS zones, `example.com` public and
//! `internal.example.com` private, and Ubuntu images) and replays into it the journal of
//! the mock's mutations kept in the state store (`kops-rs-mock-cloud/journal.json`,
//! outside every cluster's tree); the provider runs against the journaled mock and
//! writes the journal back with compare-and-swap. The CLI opens the same mock: `kops --mock-cloud --state <store>`
//! sees the clusters Terraform made, and Terraform the CLI's.

use std::sync::Arc;

use kops_model::aws::cloud::AwsCloud;
use kops_model::mock::journal::{AwsJournal, JournaledAws, aws_seed};
use kops_model::statestore::Store;

/// One opened mock: the journaled cloud, and its journal to write back.
pub struct MockCloud {
    cloud: Arc<JournaledAws>,
    journal: AwsJournal,
}

/// Holds the provider's mock cloud calls one at a time: each reads the journal,
/// replays it and writes it back, which two at once in one process would race on.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The guard of [`ONE_AT_A_TIME`], held for as long as a mock is open.
pub type Turn = tokio::sync::MutexGuard<'static, ()>;

impl MockCloud {
    /// Waits for the provider's other mock calls, then opens the mock of `store` (at
    /// `url`) in `region`: seeded and replayed.
    pub async fn open(
        store: Arc<dyn Store>,
        url: &str,
        region: &str,
    ) -> anyhow::Result<(MockCloud, Turn)> {
        let turn = ONE_AT_A_TIME.lock().await;
        let journal = AwsJournal::read(store, url, region).await?;
        let cloud = journal.open_mock(&aws_seed()?).await?;
        let cloud = MockCloud {
            cloud: Arc::new(cloud),
            journal,
        };
        Ok((cloud, turn))
    }

    /// The cloud, as the library sees it.
    pub fn cloud(&self) -> Arc<dyn AwsCloud> {
        self.cloud.clone()
    }

    /// Writes what changed back to the journal (nothing when nothing did).
    pub async fn save(&self) -> anyhow::Result<()> {
        Ok(self.journal.save(&self.cloud).await?)
    }
}
