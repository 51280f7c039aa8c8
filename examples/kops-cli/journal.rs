//! The journal that makes a mock cloud outlive one command, for every cloud: a
//! [`Journaled`] cloud records each successful mutation of the cloud it wraps, and a
//! [`MockJournal`] keeps them in the state store, replays them into a fresh mock and
//! writes the new ones back with compare-and-swap (see `cloud.rs` for the whole story).
//!
//! Generic over the cloud's resource kind: the resource calls every cloud has (create,
//! update, delete) are journaled here once; each cloud names its other mutations (a
//! rolling update's: detach and terminate on AWS, recreate on GCE) as its [`Extra`]
//! entries.

use std::fmt;
use std::sync::{Arc, Mutex};

use anyhow::{Context as _, anyhow, bail};
use bytes::Bytes;
use kops_statestore::{PutOptions, Store, StoreExt as _, Version};
use kops_tasks::resource::{
    CloudResult, CreateRequest, ListQuery, Resource, ResourceCloud, ResourceKind, UpdateRequest,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// One successful mutation: a resource call, or one of the cloud's own (`X`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Entry<K, X> {
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
pub trait Extra<C: ?Sized + Sync>:
    Serialize + DeserializeOwned + Clone + fmt::Debug + Send + Sync + 'static
{
    /// Makes the same mutation again on `cloud`.
    async fn replay(&self, cloud: &C) -> CloudResult<()>;
}

/// Called after each successful delete.
pub type DeleteHook<K> = Box<dyn Fn(K, &str) + Send + Sync>;

/// A cloud (`C`, a trait object such as `dyn AwsCloud`) that records each successful
/// mutation of the cloud it wraps.
pub struct Journaled<C: ?Sized, K, X> {
    inner: Arc<C>,
    entries: Mutex<Vec<Entry<K, X>>>,
    /// Called after each successful delete (drives the delete progress bar).
    on_delete: Mutex<Option<DeleteHook<K>>>,
}

impl<C: ?Sized + fmt::Debug, K, X> fmt::Debug for Journaled<C, K, X> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Journaled")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<C: ?Sized, K, X> Journaled<C, K, X> {
    /// Wraps `inner` with an empty record.
    pub fn new(inner: Arc<C>) -> Self {
        Journaled {
            inner,
            entries: Mutex::new(Vec::new()),
            on_delete: Mutex::new(None),
        }
    }

    /// The wrapped cloud.
    pub fn inner(&self) -> &C {
        &self.inner
    }

    /// Records one successful mutation.
    pub fn record(&self, e: Entry<K, X>) {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(e);
    }

    /// Records one of the cloud's own mutations.
    pub fn record_extra(&self, x: X) {
        self.record(Entry::Extra(x));
    }

    /// Takes what was recorded since the last call.
    fn take(&self) -> Vec<Entry<K, X>> {
        std::mem::take(&mut *self.entries.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Sets the callback run after each successful delete.
    pub fn set_on_delete(&self, f: Option<DeleteHook<K>>) {
        *self.on_delete.lock().unwrap_or_else(|p| p.into_inner()) = f;
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
    async fn list_shared(
        &self,
        query: &ListQuery<K>,
    ) -> CloudResult<Vec<std::sync::Arc<Resource<K>>>> {
        self.inner.list_shared(query).await
    }
    async fn list_tagged(
        &self,
        resource_type: K,
        tags: &[(&str, &str)],
    ) -> CloudResult<Vec<std::sync::Arc<Resource<K>>>> {
        self.inner.list_tagged(resource_type, tags).await
    }
    fn first_tagged_now(
        &self,
        resource_type: K,
        tags: &[(&str, &str)],
    ) -> Option<CloudResult<Option<std::sync::Arc<Resource<K>>>>> {
        self.inner.first_tagged_now(resource_type, tags)
    }
    async fn create(&self, request: &CreateRequest<K>) -> CloudResult<Resource<K>> {
        let r = self.inner.create(request).await?;
        self.record(Entry::Create {
            request: request.clone(),
            id: r.id.clone(),
        });
        Ok(r)
    }
    async fn update(&self, request: &UpdateRequest<K>) -> CloudResult<Resource<K>> {
        let r = self.inner.update(request).await?;
        self.record(Entry::Update {
            request: request.clone(),
        });
        Ok(r)
    }
    async fn delete(&self, resource_type: K, id: &str) -> CloudResult<()> {
        self.inner.delete(resource_type, id).await?;
        self.record(Entry::Delete {
            resource_type,
            id: id.to_owned(),
        });
        if let Some(f) = &*self.on_delete.lock().unwrap_or_else(|p| p.into_inner()) {
            f(resource_type, id);
        }
        Ok(())
    }
}

/// What a mock cloud serves (its region; for GCE its project too): a journal written for
/// another scope is refused.
pub trait Scope: Serialize + DeserializeOwned + PartialEq + Send + 'static {
    /// The scope in words (`region eu-west-1`).
    fn describe(&self) -> String;
}

/// The stored journal: the scope, then the mutations, oldest first.
#[derive(Debug, Serialize, Deserialize)]
struct Stored<S, K, X> {
    #[serde(flatten)]
    scope: S,
    entries: Vec<Entry<K, X>>,
}

/// A mock cloud's journal in the state store: read when the command starts, replayed
/// into a fresh mock, written back with the command's mutations when it ends.
pub struct MockJournal<S, K, X> {
    /// Names the mock in messages ("mock cloud", "GCE mock cloud").
    what: &'static str,
    path: &'static str,
    store: Arc<dyn Store>,
    /// The journal's version when read (`None`: there was none).
    version: Option<Version>,
    stored: Stored<S, K, X>,
}

impl<S, K, X> MockJournal<S, K, X>
where
    S: Scope,
    K: ResourceKind + Serialize + DeserializeOwned,
    X: Serialize + DeserializeOwned,
{
    /// Reads the journal at `path` of `store` (at `url`), empty when there is none; fails
    /// when it was written for another scope than `scope`.
    pub async fn read(
        what: &'static str,
        store: Arc<dyn Store>,
        url: &str,
        path: &'static str,
        scope: S,
    ) -> anyhow::Result<Self> {
        let reading = || format!("reading the {what}'s journal {url}/{path}");
        let (stored, version) = match store.get_opt(path).await {
            Ok(Some(got)) => {
                let s: Stored<S, K, X> = serde_json::from_slice(&got.data).with_context(reading)?;
                if s.scope != scope {
                    bail!(
                        "the {what} of state store {url} serves {}, not {} (delete {path} in the store to reset it)",
                        s.scope.describe(),
                        scope.describe()
                    );
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
            Err(e) => return Err(anyhow::Error::new(e).context(reading())),
        };
        Ok(MockJournal {
            what,
            path,
            store,
            version,
            stored,
        })
    }

    /// Makes every journaled mutation again, in order, on a fresh mock `cloud`. The mock
    /// gives sequential IDs, so a replayed create must get the ID it got the first time;
    /// if not, the journal does not belong to this mock and replaying fails.
    pub async fn replay<C>(&self, cloud: &C) -> anyhow::Result<()>
    where
        C: ResourceCloud<K> + ?Sized,
        X: Extra<C>,
    {
        let (what, path) = (self.what, self.path);
        for (i, e) in self.stored.entries.iter().enumerate() {
            let at = || format!("replaying the {what}'s journal {path}: entry {}", i + 1);
            match e {
                Entry::Create { request, id } => {
                    let r = cloud.create(request).await.with_context(at)?;
                    if &r.id != id {
                        bail!(
                            "{}: created {} where the journal recorded {id}; the journal does not match this mock cloud (delete it to reset the mock cloud)",
                            at(),
                            r.id
                        );
                    }
                }
                Entry::Update { request } => {
                    cloud.update(request).await.with_context(at)?;
                }
                Entry::Delete { resource_type, id } => {
                    cloud.delete(*resource_type, id).await.with_context(at)?;
                }
                Entry::Extra(x) => x.replay(cloud).await.with_context(at)?,
            }
        }
        Ok(())
    }

    /// Appends what `cloud` recorded since the last save and writes the journal back
    /// (nothing when it recorded nothing): created when there was none, else updated
    /// from the version read, so a concurrent command's changes are never lost.
    pub async fn save<C: ?Sized>(
        journal: &Mutex<Self>,
        cloud: &Journaled<C, K, X>,
    ) -> anyhow::Result<()> {
        let new = cloud.take();
        if new.is_empty() {
            return Ok(());
        }
        let (store, data, opts, what, path) = {
            let mut m = journal.lock().unwrap_or_else(|p| p.into_inner());
            m.stored.entries.extend(new);
            let data = serde_json::to_vec(&m.stored)
                .with_context(|| format!("encoding the {}'s journal", m.what))?;
            let opts = match &m.version {
                Some(v) => PutOptions::update(v.clone()),
                None => PutOptions::create(),
            };
            (m.store.clone(), data, opts, m.what, m.path)
        };
        let v = store
            .put(path, Bytes::from(data), opts)
            .await
            .map_err(|e| {
                let conflict = e.is_conflict();
                let err = anyhow::Error::new(e);
                if conflict {
                    err.context(anyhow!(
                        "saving the {what}'s journal {path}: another command changed the mock cloud meanwhile"
                    ))
                } else {
                    err.context(format!("saving the {what}'s journal {path}"))
                }
            })?;
        journal.lock().unwrap_or_else(|p| p.into_inner()).version = Some(v);
        Ok(())
    }
}
