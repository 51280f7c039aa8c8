//! The journaled Hetzner mock: [`HetznerJournal`] and [`JournaledHetzner`].

use std::sync::Arc;

use kops_cloud_hetzner::{HetznerCloud, HetznerResourceType};
use kops_statestore::Store;
use kops_tasks::resource::CloudResult;
use serde::{Deserialize, Serialize};

use super::core::{Extra, Journaled, MockJournal, Scope};
use super::{DeleteHook, JournalError, forward_resource_cloud};
use crate::hetzner::MockHetzner;

/// Where the Hetzner mock's journal lives in the state store.
pub const HETZNER_JOURNAL_PATH: &str = "kops-rs-mock-cloud/hetzner-journal.json";

/// The name of the mock in messages.
const WHAT: &str = "Hetzner mock cloud";

/// The Hetzner mutations beyond the resource calls.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
enum HetznerEntry {
    /// A server (its ID) shut down, before it is deleted.
    Shutdown { id: String },
}

#[async_trait::async_trait]
impl Extra<dyn HetznerCloud> for HetznerEntry {
    async fn replay(&self, cloud: &dyn HetznerCloud) -> CloudResult<()> {
        match self {
            HetznerEntry::Shutdown { id } => cloud.shutdown_server(id).await,
        }
    }
}

/// The mock project: one per state store (nothing stored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Project;

impl Scope for Project {
    fn describe(&self) -> String {
        "the Hetzner mock project".into()
    }
}

/// A Hetzner cloud that records each successful mutation of the cloud it wraps, for
/// [`HetznerJournal::save`]: `create`, `update`, `delete` and `shutdown_server`. Every
/// other call goes to the wrapped cloud unchanged.
#[derive(Debug)]
pub struct JournaledHetzner {
    core: Journaled<dyn HetznerCloud, HetznerResourceType, HetznerEntry>,
}

impl JournaledHetzner {
    /// Wraps `inner` (a mock, or a real backend: then nothing is saved, but the delete
    /// hook still runs).
    pub fn new(inner: Arc<dyn HetznerCloud>) -> Self {
        JournaledHetzner {
            core: Journaled::new(inner),
        }
    }

    /// The wrapped cloud.
    pub fn inner(&self) -> &dyn HetznerCloud {
        self.core.inner()
    }

    /// Sets (or with `None` clears) the callback run after each successful delete.
    pub fn set_on_delete(&self, hook: Option<DeleteHook<HetznerResourceType>>) {
        self.core.set_on_delete(hook);
    }

    /// How many mutations were recorded and not yet saved.
    pub fn unsaved(&self) -> usize {
        self.core.unsaved()
    }
}

forward_resource_cloud!(JournaledHetzner, HetznerResourceType);

#[async_trait::async_trait]
impl HetznerCloud for JournaledHetzner {
    async fn shutdown_server(&self, id: &str) -> CloudResult<()> {
        self.inner().shutdown_server(id).await?;
        self.core
            .record_extra(HetznerEntry::Shutdown { id: id.to_owned() });
        Ok(())
    }
}

/// The Hetzner mock's journal in a state store ([`HETZNER_JOURNAL_PATH`]); see the
/// [module](super) for the whole story.
#[derive(Debug)]
pub struct HetznerJournal {
    core: MockJournal<Project, HetznerResourceType, HetznerEntry>,
}

impl HetznerJournal {
    /// Reads the journal of `store` (whose URL `url` is, for messages), empty when there
    /// is none.
    pub async fn read(store: Arc<dyn Store>, url: &str) -> Result<HetznerJournal, JournalError> {
        let core = MockJournal::read(WHAT, store, url, HETZNER_JOURNAL_PATH, Project).await?;
        Ok(HetznerJournal { core })
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
    pub async fn replay(&self, cloud: &dyn HetznerCloud) -> Result<(), JournalError> {
        self.core.replay(cloud).await
    }

    /// A fresh [`MockHetzner`], the journal replayed into it, wrapped to record what comes
    /// next.
    pub async fn open_mock(&self) -> Result<JournaledHetzner, JournalError> {
        let inner: Arc<dyn HetznerCloud> = Arc::new(MockHetzner::new());
        self.replay(inner.as_ref()).await?;
        Ok(JournaledHetzner::new(inner))
    }

    /// Appends what `cloud` recorded since the last save and writes the journal back with
    /// compare-and-swap (nothing when it recorded nothing). Fails with
    /// [`JournalError::Conflict`] when another process saved since this one read.
    pub async fn save(&self, cloud: &JournaledHetzner) -> Result<(), JournalError> {
        self.core.save(&cloud.core).await
    }
}
