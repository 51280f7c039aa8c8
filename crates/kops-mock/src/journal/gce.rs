//! The journaled GCE mock: [`GceJournal`] and [`JournaledGce`].

use std::sync::Arc;

use kops_cloud_gce::cloud::{ManagedInstance, ManagedZone, ProjectInfo};
use kops_cloud_gce::{GceCloud, GceResourceType};
use kops_statestore::Store;
use kops_tasks::resource::CloudResult;
use serde::{Deserialize, Serialize};

use super::core::{Extra, Journaled, MockJournal, Scope};
use super::{DeleteHook, JournalError, forward_resource_cloud};
use crate::gce::MockGce;

/// Where the GCE mock's journal lives in the state store.
pub const GCE_JOURNAL_PATH: &str = "kops-rs-mock-cloud/gce-journal.json";

/// The name of the mock in messages.
const WHAT: &str = "GCE mock cloud";

/// The GCE mutations beyond the resource calls: a rolling update's.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
enum GceEntry {
    /// A rolling update's replacement: the group (its ID, `<zone>/<name>`) recreated these
    /// instances (names) from its current template.
    Recreate {
        group: String,
        instances: Vec<String>,
    },
}

#[async_trait::async_trait]
impl Extra<dyn GceCloud> for GceEntry {
    async fn replay(&self, cloud: &dyn GceCloud) -> CloudResult<()> {
        match self {
            GceEntry::Recreate { group, instances } => {
                cloud.recreate_instances(group, instances).await
            }
        }
    }
}

/// The project and region the GCE mock serves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ProjectRegion {
    project: String,
    region: String,
}

impl Scope for ProjectRegion {
    fn describe(&self) -> String {
        format!("project {} in {}", self.project, self.region)
    }
}

/// A GCE cloud that records each successful mutation of the cloud it wraps, for
/// [`GceJournal::save`]: `create`, `update`, `delete` and a rolling update's
/// `recreate_instances`. Every other call goes to the wrapped cloud unchanged.
#[derive(Debug)]
pub struct JournaledGce {
    core: Journaled<dyn GceCloud, GceResourceType, GceEntry>,
}

impl JournaledGce {
    /// Wraps `inner` (a mock, or a real backend: then nothing is saved, but the delete
    /// hook still runs).
    pub fn new(inner: Arc<dyn GceCloud>) -> Self {
        JournaledGce {
            core: Journaled::new(inner),
        }
    }

    /// The wrapped cloud.
    pub fn inner(&self) -> &dyn GceCloud {
        self.core.inner()
    }

    /// Sets (or with `None` clears) the callback run after each successful delete.
    pub fn set_on_delete(&self, hook: Option<DeleteHook<GceResourceType>>) {
        self.core.set_on_delete(hook);
    }

    /// How many mutations were recorded and not yet saved.
    pub fn unsaved(&self) -> usize {
        self.core.unsaved()
    }
}

forward_resource_cloud!(JournaledGce, GceResourceType);

#[async_trait::async_trait]
impl GceCloud for JournaledGce {
    async fn project(&self) -> CloudResult<ProjectInfo> {
        self.inner().project().await
    }
    async fn zones(&self) -> CloudResult<Vec<String>> {
        self.inner().zones().await
    }
    async fn managed_zones(&self) -> CloudResult<Vec<ManagedZone>> {
        self.inner().managed_zones().await
    }
    async fn managed_instances(&self, group: &str) -> CloudResult<Vec<ManagedInstance>> {
        self.inner().managed_instances(group).await
    }
    async fn recreate_instances(&self, group: &str, instances: &[String]) -> CloudResult<()> {
        self.inner().recreate_instances(group, instances).await?;
        self.core.record_extra(GceEntry::Recreate {
            group: group.to_owned(),
            instances: instances.to_vec(),
        });
        Ok(())
    }
}

/// The GCE mock's journal in a state store ([`GCE_JOURNAL_PATH`]); see the
/// [module](super) for the whole story.
#[derive(Debug)]
pub struct GceJournal {
    core: MockJournal<ProjectRegion, GceResourceType, GceEntry>,
}

impl GceJournal {
    /// Reads the journal of `store` (whose URL `url` is, for messages), empty when there
    /// is none. Fails with [`JournalError::WrongScope`] when it was written for another
    /// project or region.
    pub async fn read(
        store: Arc<dyn Store>,
        url: &str,
        project: &str,
        region: &str,
    ) -> Result<GceJournal, JournalError> {
        let scope = ProjectRegion {
            project: project.to_owned(),
            region: region.to_owned(),
        };
        let core = MockJournal::read(WHAT, store, url, GCE_JOURNAL_PATH, scope).await?;
        Ok(GceJournal { core })
    }

    /// How many mutations the journal holds.
    pub fn len(&self) -> usize {
        self.core.len()
    }

    /// Whether the journal holds no mutation (the mock is empty).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Makes every journaled mutation again, in order, on `cloud` (a fresh mock).
    pub async fn replay(&self, cloud: &dyn GceCloud) -> Result<(), JournalError> {
        self.core.replay(cloud).await
    }

    /// A fresh [`MockGce`] of the journal's project and region, the journal replayed into
    /// it, wrapped to record what comes next.
    pub async fn open_mock(&self) -> Result<JournaledGce, JournalError> {
        let (project, region) = self.core.scope(|s| (s.project.clone(), s.region.clone()));
        let inner: Arc<dyn GceCloud> = Arc::new(MockGce::new(project, region));
        self.replay(inner.as_ref()).await?;
        Ok(JournaledGce::new(inner))
    }

    /// Appends what `cloud` recorded since the last save and writes the journal back with
    /// compare-and-swap (nothing when it recorded nothing). Fails with
    /// [`JournalError::Conflict`] when another process saved since this one read.
    pub async fn save(&self, cloud: &JournaledGce) -> Result<(), JournalError> {
        self.core.save(&cloud.core).await
    }
}
