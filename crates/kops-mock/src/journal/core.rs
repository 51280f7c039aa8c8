//! The journal's machinery, generic over the cloud's resource kind: the resource calls
//! every cloud has (create, update, delete) are journaled here once; each cloud names its
//! other mutations as its [`Extra`] entries. Private: the public types are each cloud's
//! (`aws.rs`, `gce.rs`, `hetzner.rs`), so that the stored format is this crate's alone.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use kops_statestore::{PutOptions, Store, StoreExt as _, Version};
use kops_tasks::resource::{
    CloudResult, CreateRequest, ListQuery, Resource, ResourceCloud, ResourceKind, UpdateRequest,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::{DeleteHook, JournalError};

/// One successful mutation: a resource call, or one of the cloud's own (`X`).
///
/// The stored format: `{"op": "create", "request": ..., "id": ...}`, `{"op": "update",
/// "request": ...}`, `{"op": "delete", "resource_type": ..., "id": ...}`, or the cloud's
/// own entry with its own `op` tag.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub(crate) enum Entry<K, X> {
    /// A create, and the ID the cloud gave the object.
    Create {
        /// The request.
        request: CreateRequest<K>,
        /// The new object's ID.
        id: String,
    },
    /// An update.
    Update {
        /// The request.
        request: UpdateRequest<K>,
    },
    /// A delete.
    Delete {
        /// The object's type.
        resource_type: K,
        /// Its ID.
        id: String,
    },
    /// A mutation only this cloud has (its own `op` tags).
    #[serde(untagged)]
    Extra(X),
}

/// A cloud's own mutations beyond the resource calls, journaled and replayed in order
/// with them.
#[async_trait::async_trait]
pub(crate) trait Extra<C: ?Sized + Sync>:
    Serialize + DeserializeOwned + Clone + fmt::Debug + Send + Sync + 'static
{
    /// Makes the same mutation again on `cloud`.
    async fn replay(&self, cloud: &C) -> CloudResult<()>;
}

/// What a mock cloud serves (its region; for GCE its project too): a journal written for
/// another scope is refused. Stored flattened into the journal's top-level object.
pub(crate) trait Scope: Serialize + DeserializeOwned + PartialEq + Send + 'static {
    /// The scope in words (`region eu-west-1`).
    fn describe(&self) -> String;
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A cloud (`C`, a trait object such as `dyn AwsCloud`) that records each successful
/// mutation of the cloud it wraps.
pub(crate) struct Journaled<C: ?Sized, K, X> {
    inner: Arc<C>,
    entries: Mutex<Vec<Entry<K, X>>>,
    on_delete: Mutex<Option<DeleteHook<K>>>,
}

impl<C: ?Sized + fmt::Debug, K, X> fmt::Debug for Journaled<C, K, X> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Journaled")
            .field("inner", &self.inner)
            .field("recorded", &lock(&self.entries).len())
            .finish_non_exhaustive()
    }
}

impl<C: ?Sized, K, X> Journaled<C, K, X> {
    /// Wraps `inner` with an empty record.
    pub(crate) fn new(inner: Arc<C>) -> Self {
        Journaled {
            inner,
            entries: Mutex::new(Vec::new()),
            on_delete: Mutex::new(None),
        }
    }

    /// The wrapped cloud.
    pub(crate) fn inner(&self) -> &C {
        &self.inner
    }

    /// Records one of the cloud's own mutations.
    pub(crate) fn record_extra(&self, x: X) {
        lock(&self.entries).push(Entry::Extra(x));
    }

    /// How many mutations were recorded and not yet saved.
    pub(crate) fn unsaved(&self) -> usize {
        lock(&self.entries).len()
    }

    /// Takes what was recorded since the last call.
    fn take(&self) -> Vec<Entry<K, X>> {
        std::mem::take(&mut *lock(&self.entries))
    }

    /// Sets the callback run after each successful delete.
    pub(crate) fn set_on_delete(&self, f: Option<DeleteHook<K>>) {
        *lock(&self.on_delete) = f;
    }
}

#[async_trait::async_trait]
impl<C, K, X> ResourceCloud<K> for Journaled<C, K, X>
where
    C: ResourceCloud<K> + ?Sized,
    K: ResourceKind,
    X: fmt::Debug + Send + Sync + 'static,
{
    async fn list(&self, query: &ListQuery<K>) -> CloudResult<Vec<Resource<K>>> {
        self.inner.list(query).await
    }
    async fn list_digests(&self, query: &ListQuery<K>) -> CloudResult<Vec<Resource<K>>> {
        self.inner.list_digests(query).await
    }
    async fn list_shared(&self, query: &ListQuery<K>) -> CloudResult<Vec<Arc<Resource<K>>>> {
        self.inner.list_shared(query).await
    }
    async fn list_tagged(
        &self,
        resource_type: K,
        tags: &[(&str, &str)],
    ) -> CloudResult<Vec<Arc<Resource<K>>>> {
        self.inner.list_tagged(resource_type, tags).await
    }
    fn first_tagged_now(
        &self,
        resource_type: K,
        tags: &[(&str, &str)],
    ) -> Option<CloudResult<Option<Arc<Resource<K>>>>> {
        self.inner.first_tagged_now(resource_type, tags)
    }
    async fn create(&self, request: &CreateRequest<K>) -> CloudResult<Resource<K>> {
        let r = self.inner.create(request).await?;
        lock(&self.entries).push(Entry::Create {
            request: request.clone(),
            id: r.id.clone(),
        });
        Ok(r)
    }
    async fn update(&self, request: &UpdateRequest<K>) -> CloudResult<Resource<K>> {
        let r = self.inner.update(request).await?;
        lock(&self.entries).push(Entry::Update {
            request: request.clone(),
        });
        Ok(r)
    }
    async fn delete(&self, resource_type: K, id: &str) -> CloudResult<()> {
        self.inner.delete(resource_type, id).await?;
        lock(&self.entries).push(Entry::Delete {
            resource_type,
            id: id.to_owned(),
        });
        if let Some(f) = &*lock(&self.on_delete) {
            f(resource_type, id);
        }
        Ok(())
    }
}

/// The stored journal: the scope, then the mutations, oldest first.
#[derive(Debug, Serialize, Deserialize)]
struct Stored<S, K, X> {
    #[serde(flatten)]
    scope: S,
    entries: Vec<Entry<K, X>>,
}

/// What was read, and what was saved since.
struct Held<S, K, X> {
    /// The journal's version when last read or written (`None`: there was none).
    version: Option<Version>,
    stored: Stored<S, K, X>,
}

/// A mock cloud's journal in the state store: read when a process starts, replayed into
/// a fresh mock, written back with the process's mutations.
pub(crate) struct MockJournal<S, K, X> {
    /// Names the mock in messages ("mock cloud", "GCE mock cloud").
    what: &'static str,
    path: &'static str,
    store: Arc<dyn Store>,
    held: Mutex<Held<S, K, X>>,
}

impl<S, K, X> fmt::Debug for MockJournal<S, K, X> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let held = lock(&self.held);
        f.debug_struct("MockJournal")
            .field("what", &self.what)
            .field("path", &self.path)
            .field("version", &held.version)
            .field("entries", &held.stored.entries.len())
            .finish_non_exhaustive()
    }
}

impl<S, K, X> MockJournal<S, K, X>
where
    S: Scope,
    K: ResourceKind + Serialize + DeserializeOwned,
    X: Serialize + DeserializeOwned,
{
    /// Reads the journal at `path` of `store` (at `url`), empty when there is none; fails
    /// when it was written for another scope than `scope`.
    pub(crate) async fn read(
        what: &'static str,
        store: Arc<dyn Store>,
        url: &str,
        path: &'static str,
        scope: S,
    ) -> Result<Self, JournalError> {
        let location = || format!("{url}/{path}");
        let (stored, version) = match store.get_opt(path).await {
            Ok(Some(got)) => {
                let s: Stored<S, K, X> =
                    serde_json::from_slice(&got.data).map_err(|e| JournalError::Decode {
                        what,
                        location: location(),
                        source: Box::new(e),
                    })?;
                if s.scope != scope {
                    return Err(JournalError::WrongScope {
                        what,
                        url: url.to_owned(),
                        path,
                        found: s.scope.describe(),
                        wanted: scope.describe(),
                    });
                }
                (s, Some(got.version))
            }
            Ok(None) => (
                Stored {
                    scope,
                    entries: Vec::new(),
                },
                None,
            ),
            Err(source) => {
                return Err(JournalError::Read {
                    what,
                    location: location(),
                    source,
                });
            }
        };
        Ok(MockJournal {
            what,
            path,
            store,
            held: Mutex::new(Held { version, stored }),
        })
    }

    /// The mock's name in messages.
    pub(crate) fn what(&self) -> &'static str {
        self.what
    }

    /// `f` of the scope the journal serves.
    pub(crate) fn scope<T>(&self, f: impl FnOnce(&S) -> T) -> T {
        f(&lock(&self.held).stored.scope)
    }

    /// How many mutations the journal holds (read and saved since).
    pub(crate) fn len(&self) -> usize {
        lock(&self.held).stored.entries.len()
    }

    /// Makes every journaled mutation again, in order, on a fresh mock `cloud`. The mock
    /// gives sequential IDs, so a replayed create must get the ID it got the first time;
    /// if not, the journal does not belong to this mock and replaying fails.
    pub(crate) async fn replay<C>(&self, cloud: &C) -> Result<(), JournalError>
    where
        C: ResourceCloud<K> + ?Sized,
        X: Extra<C>,
        K: Clone,
    {
        let (what, path) = (self.what, self.path);
        // A copy, so that the lock is not held across the cloud's awaits.
        let entries = lock(&self.held).stored.entries.clone();
        for (i, e) in entries.iter().enumerate() {
            let entry = i + 1;
            let replay = |source| JournalError::Replay {
                what,
                path,
                entry,
                source,
            };
            match e {
                Entry::Create { request, id } => {
                    let r = cloud.create(request).await.map_err(replay)?;
                    if &r.id != id {
                        return Err(JournalError::Mismatch {
                            what,
                            path,
                            entry,
                            created: r.id,
                            recorded: id.clone(),
                        });
                    }
                }
                Entry::Update { request } => {
                    cloud.update(request).await.map_err(replay)?;
                }
                Entry::Delete { resource_type, id } => {
                    cloud.delete(*resource_type, id).await.map_err(replay)?;
                }
                Entry::Extra(x) => x.replay(cloud).await.map_err(replay)?,
            }
        }
        Ok(())
    }

    /// Appends what `cloud` recorded since the last save and writes the journal back
    /// (nothing when it recorded nothing): created when there was none, else updated
    /// from the version read, so a concurrent process's changes are never lost.
    pub(crate) async fn save<C: ?Sized>(
        &self,
        cloud: &Journaled<C, K, X>,
    ) -> Result<(), JournalError> {
        let new = cloud.take();
        if new.is_empty() {
            return Ok(());
        }
        let (what, path) = (self.what, self.path);
        let (data, opts) = {
            let mut held = lock(&self.held);
            held.stored.entries.extend(new);
            let data = serde_json::to_vec(&held.stored).map_err(|e| JournalError::Encode {
                what,
                source: Box::new(e),
            })?;
            let opts = match &held.version {
                Some(v) => PutOptions::update(v.clone()),
                None => PutOptions::create(),
            };
            (data, opts)
        };
        let v = self
            .store
            .put(path, data.into(), opts)
            .await
            .map_err(|source| {
                if source.is_conflict() {
                    JournalError::Conflict { what, path, source }
                } else {
                    JournalError::Save { what, path, source }
                }
            })?;
        lock(&self.held).version = Some(v);
        Ok(())
    }
}
