//! The journaled AWS mock: [`AwsJournal`] and [`JournaledAws`].

use std::sync::Arc;

use kops_cloud_aws::AwsCloud;
use kops_cloud_aws::ResourceType;
use kops_cloud_aws::cloud::{
    AccountInfo, GroupMembers, HostedZone, Image, ImageQuery, MachineRole, ZoneQuery,
};
use kops_statestore::Store;
use kops_tasks::resource::CloudResult;
use serde::{Deserialize, Serialize};

use super::core::{Extra, Journaled, MockJournal, Scope};
use super::{DeleteHook, JournalError, forward_resource_cloud};
use crate::fixture::Fixture;
use crate::{MockAws, MockOptions};

/// Where the AWS mock's journal lives in the state store.
pub const AWS_JOURNAL_PATH: &str = "kops-rs-mock-cloud/journal.json";

/// The AWS mock's default seed, a fixture ([`crate::fixture`] format): two DNS zones
/// (`example.com` public and `internal.example.com` private) and Ubuntu 24.04 images
/// (amd64 and arm64) of Canonical's account. Journals replay onto it, so it changes only
/// when stored journals may be reset.
pub const AWS_SEED: &str = include_str!("aws-seed.yaml");

/// The name of the mock in messages.
const WHAT: &str = "mock cloud";

/// [`AWS_SEED`], parsed.
pub fn aws_seed() -> crate::Result<Fixture> {
    Fixture::parse(AWS_SEED, "kops-mock/src/journal/aws-seed.yaml")
}

/// A fresh [`MockAws`] serving `region` (any zone of it), seeded with `fixture` (its own
/// region and zones are ignored).
pub fn seeded_aws(region: &str, fixture: &Fixture) -> crate::Result<MockAws> {
    let options = MockOptions::default()
        .with_region(region)
        .with_zones(Vec::<String>::new());
    let mock = MockAws::with_options(options);
    fixture.apply(&mock)?;
    Ok(mock)
}

/// The AWS mutations beyond the resource calls: a rolling update's.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
enum AwsEntry {
    /// A rolling update's surge: the instance left its group (which launched another).
    Detach { group: String, instance: String },
    /// A rolling update's replacement (the group launches another).
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

/// An AWS cloud that records each successful mutation of the cloud it wraps, for
/// [`AwsJournal::save`]: `create`, `update`, `delete`, and a rolling update's
/// `detach_instance` and `terminate_instance` (the groups launch replacements, so the
/// cloud changed). Deregistering from load balancers changes only target health, which
/// the mock does not keep, and is not recorded. Every other call goes to the wrapped
/// cloud unchanged.
#[derive(Debug)]
pub struct JournaledAws {
    core: Journaled<dyn AwsCloud, ResourceType, AwsEntry>,
}

impl JournaledAws {
    /// Wraps `inner` (a mock, or a real backend: then nothing is saved, but the delete
    /// hook still runs).
    pub fn new(inner: Arc<dyn AwsCloud>) -> Self {
        JournaledAws {
            core: Journaled::new(inner),
        }
    }

    /// The wrapped cloud.
    pub fn inner(&self) -> &dyn AwsCloud {
        self.core.inner()
    }

    /// Sets (or with `None` clears) the callback run after each successful delete.
    pub fn set_on_delete(&self, hook: Option<DeleteHook<ResourceType>>) {
        self.core.set_on_delete(hook);
    }

    /// How many mutations were recorded and not yet saved.
    pub fn unsaved(&self) -> usize {
        self.core.unsaved()
    }
}

forward_resource_cloud!(JournaledAws, ResourceType);

#[async_trait::async_trait]
impl AwsCloud for JournaledAws {
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
        self.core.record_extra(AwsEntry::Detach {
            group: group.to_owned(),
            instance: instance.to_owned(),
        });
        Ok(())
    }
    async fn terminate_instance(&self, instance: &str) -> CloudResult<()> {
        self.inner().terminate_instance(instance).await?;
        self.core.record_extra(AwsEntry::Terminate {
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
        role: MachineRole,
        zones: &[String],
        arm64: bool,
    ) -> CloudResult<String> {
        self.inner().default_instance_type(role, zones, arm64).await
    }
}

/// The AWS mock's journal in a state store ([`AWS_JOURNAL_PATH`]); see the
/// [module](super) for the whole story.
#[derive(Debug)]
pub struct AwsJournal {
    core: MockJournal<Region, ResourceType, AwsEntry>,
}

impl AwsJournal {
    /// Reads the journal of `store` (whose URL `url` is, for messages), empty when there
    /// is none. Fails with [`JournalError::WrongScope`] when it was written for another
    /// region than `region`.
    pub async fn read(
        store: Arc<dyn Store>,
        url: &str,
        region: &str,
    ) -> Result<AwsJournal, JournalError> {
        let scope = Region {
            region: region.to_owned(),
        };
        let core = MockJournal::read(WHAT, store, url, AWS_JOURNAL_PATH, scope).await?;
        Ok(AwsJournal { core })
    }

    /// How many mutations the journal holds.
    pub fn len(&self) -> usize {
        self.core.len()
    }

    /// Whether the journal holds no mutation (the mock is its seed).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Makes every journaled mutation again, in order, on `cloud` (a fresh mock seeded as
    /// the one the journal was written against).
    pub async fn replay(&self, cloud: &dyn AwsCloud) -> Result<(), JournalError> {
        self.core.replay(cloud).await
    }

    /// A fresh [`MockAws`] in the journal's region seeded with `fixture` (usually
    /// [`aws_seed`]; see [`seeded_aws`]), the journal replayed into it, wrapped to record
    /// what comes next.
    pub async fn open_mock(&self, fixture: &Fixture) -> Result<JournaledAws, JournalError> {
        let region = self.core.scope(|s| s.region.clone());
        let mock = seeded_aws(&region, fixture).map_err(|source| JournalError::Seed {
            what: self.core.what(),
            source,
        })?;
        let inner: Arc<dyn AwsCloud> = Arc::new(mock);
        self.replay(inner.as_ref()).await?;
        Ok(JournaledAws::new(inner))
    }

    /// Appends what `cloud` recorded since the last save and writes the journal back with
    /// compare-and-swap (nothing when it recorded nothing). Fails with
    /// [`JournalError::Conflict`] when another process saved since this one read.
    pub async fn save(&self, cloud: &JournaledAws) -> Result<(), JournalError> {
        self.core.save(&cloud.core).await
    }
}
