//! Mock mode (`mock_cloud = true` in the provider block): clusters live on kops-mock's
//! in-memory AWS cloud instead of AWS, for examples and tests that need no account.
//!
//! Each of Terraform's commands runs the provider as a process of its own, so the mock
//! outlives one the way the `kops` CLI's `--mock-cloud` makes it: each cloud call of
//! the provider starts a fresh mock from the CLI's seed (two DNS zones, `example.com`
//! public and `internal.example.com` private, and Ubuntu images), replays the journal
//! of the mock's mutations kept in the state store (`kops-rs-mock-cloud/journal.json`,
//! outside every cluster's tree), runs against the journaled mock, and writes the
//! journal back with compare-and-swap. Same seed and same journal: `kops --mock-cloud
//! --state <store>` sees the clusters Terraform made, and Terraform the CLI's.

use std::sync::{Arc, Mutex};

use kops_model::aws::cloud::{
    AccountInfo, AwsCloud, CloudResult, GroupMembers, HostedZone, Image, ImageQuery, MachineRole,
    ResourceType, ZoneQuery,
};
use kops_model::mock::MockAws;
use kops_model::mock::fixture::Fixture;
use kops_model::statestore::Store;
use serde::{Deserialize, Serialize};

// The journal's code is the CLI's own, so that both write and replay the same journal.
#[path = "../../kops-cli/journal.rs"]
#[allow(dead_code)]
mod journal;

use journal::{Extra, Journaled, MockJournal, Scope};

/// Where the journal lives in the state store (the CLI's `JOURNAL_PATH`).
pub const JOURNAL_PATH: &str = "kops-rs-mock-cloud/journal.json";

/// The mock's seed: the CLI's.
const SEED: &str = include_str!("../../kops-cli/seed/mock-cloud.yaml");

/// The AWS mutations beyond the resource calls, a rolling update's, spelled as the CLI
/// journals them.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
enum AwsEntry {
    /// A surge: the instance left its group, which launched another.
    Detach { group: String, instance: String },
    /// A replacement: the group launches another.
    Terminate { instance: String },
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

/// The region the mock serves: a journal written for another is refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Region {
    region: String,
}

impl Scope for Region {
    fn describe(&self) -> String {
        format!("region {}", self.region)
    }
}

type JournaledCloud = Journaled<dyn AwsCloud, ResourceType, AwsEntry>;

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
    async fn group_members(&self, names: &[String]) -> CloudResult<Vec<GroupMembers>> {
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
    // Deregistering changes only target health, which the mock does not keep.
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
        role: MachineRole,
        zones: &[String],
        arm64: bool,
    ) -> CloudResult<String> {
        self.inner().default_instance_type(role, zones, arm64).await
    }
}

/// One opened mock: the journaled cloud, and its journal to write back.
pub struct MockCloud {
    cloud: Arc<JournaledCloud>,
    journal: Mutex<MockJournal<Region, ResourceType, AwsEntry>>,
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
        let scope = Region {
            region: region.to_string(),
        };
        let journal = MockJournal::read("mock cloud", store, url, JOURNAL_PATH, scope).await?;
        let fixture = Fixture::parse(SEED, "kops-cli/seed/mock-cloud.yaml")?;
        let options = kops_model::mock::MockOptions::default()
            .with_region(region)
            .with_zones(Vec::<String>::new());
        let mock = MockAws::with_options(options);
        fixture.apply(&mock)?;
        let inner: Arc<dyn AwsCloud> = Arc::new(mock);
        journal.replay(inner.as_ref()).await?;
        let cloud = MockCloud {
            cloud: Arc::new(Journaled::new(inner)),
            journal: Mutex::new(journal),
        };
        Ok((cloud, turn))
    }

    /// The cloud, as the library sees it.
    pub fn cloud(&self) -> Arc<dyn AwsCloud> {
        self.cloud.clone()
    }

    /// Writes what changed back to the journal (nothing when nothing did).
    pub async fn save(&self) -> anyhow::Result<()> {
        MockJournal::save(&self.journal, &self.cloud).await
    }
}
