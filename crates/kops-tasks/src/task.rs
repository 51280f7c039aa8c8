//! The [`Task`] trait, the [`Context`] handed to it, and the shared [`Results`] map.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt;
use std::sync::RwLock;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::clock::Clock;
use crate::diff::FieldChange;
use crate::error::{Error, Result};
use crate::key::{KeyHashing, TaskKey, TaskRef};
use crate::lifecycle::Lifecycle;
use crate::terraform::TerraformWriter;
use crate::value::{Fields, Outputs};

/// One unit of desired cloud state (a VPC, a security-group rule, a file in the state
/// store), generic over the cloud/context type `C` it talks to.
///
/// `C` may be unsized so a model can hold `Box<dyn Task<dyn AwsCloud>>`. The trait is
/// object-safe. Implementations describe their desired state as [`Fields`] (references to
/// other tasks as [`crate::Value::Ref`]); the engine diffs those against what [`Task::find`]
/// returns, and calls [`Task::apply`] only with the differences.
#[async_trait]
pub trait Task<C: ?Sized + Sync>: Send + Sync + fmt::Debug {
    /// The task's stable key (`Kind/name`); unique within a graph.
    fn key(&self) -> &TaskKey;

    /// The expected state. [`crate::Value::Null`] fields are "don't care". Called once when
    /// the graph is built; the result is cached there.
    fn fields(&self) -> Fields;

    /// The expected state when the task keeps it ready-made: the graph then borrows it
    /// for its whole life instead of calling [`Task::fields`] and caching a copy. It must
    /// equal what [`Task::fields`] returns. Default `None` (the graph calls `fields`).
    fn fields_ref(&self) -> Option<&Fields> {
        None
    }

    /// Dependencies beyond the references found in [`Task::fields`] (which are always
    /// dependencies). Default: none.
    fn dependencies(&self) -> Vec<TaskKey> {
        Vec::new()
    }

    /// The task's own lifecycle; per-kind overrides given to the graph win. Default `Sync`.
    fn lifecycle(&self) -> Lifecycle {
        Lifecycle::Sync
    }

    /// Reads the actual state from the cloud; `Ok(None)` when the object does not exist.
    /// References in the returned fields may be given as the referenced object's actual
    /// value (e.g. the VPC ID string) or as a [`crate::Value::Ref`]; both compare by
    /// identity.
    async fn find(&self, cx: &Context<'_, C>) -> Result<Option<Found>>;

    /// Validates a pending change (required fields on create, immutable fields on update).
    /// Called when planning and before applying, so a dry run reports the problem.
    /// Default: accept.
    fn check_changes(&self, _actual: Option<&Found>, _changes: &[FieldChange]) -> Result<()> {
        Ok(())
    }

    /// Creates the object or applies the changed fields, returning its outputs (at least
    /// `id` on create). Resolve references through [`Context::resolve`].
    async fn apply(&self, cx: &Context<'_, C>, change: &Change<'_>) -> Result<Outputs>;

    /// Renders the task for the Terraform target. Default: the task has no Terraform form
    /// (it is skipped).
    fn render_terraform(&self, _w: &mut TerraformWriter) -> Result<()> {
        Ok(())
    }
}

/// What [`Task::find`] returns for an existing object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Found {
    /// The actual field values, named as in [`Task::fields`].
    pub fields: Fields,
    /// Outputs of the existing object (`id`, `arn`, ...), for dependents' references.
    #[serde(default)]
    pub outputs: Outputs,
}

impl Found {
    /// An existing object with these fields and outputs.
    pub fn new(fields: Fields, outputs: Outputs) -> Self {
        Found { fields, outputs }
    }
}

/// Whether [`Task::apply`] must create the object or update it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChangeKind {
    /// The object does not exist.
    Create,
    /// The object exists; only `changes` differ.
    Update,
}

/// The change handed to [`Task::apply`].
#[derive(Debug)]
#[non_exhaustive]
pub struct Change<'a> {
    /// Create or update.
    pub kind: ChangeKind,
    /// The full expected state.
    pub expected: &'a Fields,
    /// The actual object, when updating.
    pub actual: Option<&'a Found>,
    /// The differing fields (on create, every non-null expected field).
    pub changes: &'a [FieldChange],
}

impl Change<'_> {
    /// Whether `field` is among the changes.
    pub fn changed(&self, field: &str) -> bool {
        self.changes.iter().any(|c| c.field == field)
    }
}

/// Outputs of finished tasks, shared by all tasks of a run so references resolve to real
/// IDs at apply time. Callers may pre-seed it (e.g. with shared, externally managed objects).
#[derive(Debug, Default)]
pub struct Results(RwLock<HashMap<TaskKey, Outputs, KeyHashing>>);

impl Results {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records (merges) outputs for a task.
    pub fn insert(&self, key: TaskKey, outputs: Outputs) {
        let mut map = self.0.write().unwrap_or_else(|e| e.into_inner());
        match map.entry(key) {
            Entry::Occupied(mut known) => known.get_mut().merge(outputs),
            Entry::Vacant(slot) => {
                slot.insert(outputs);
            }
        }
    }

    /// Makes room for `n` more tasks' outputs.
    pub(crate) fn reserve(&self, n: usize) {
        let mut map = self.0.write().unwrap_or_else(|e| e.into_inner());
        map.reserve(n);
    }

    /// One output of a task.
    pub fn get(&self, key: &TaskKey, attr: &str) -> Option<String> {
        let map = self.0.read().unwrap_or_else(|e| e.into_inner());
        map.get(key).and_then(|o| o.get(attr)).map(str::to_owned)
    }

    /// All outputs of a task.
    pub fn outputs(&self, key: &TaskKey) -> Option<Outputs> {
        let map = self.0.read().unwrap_or_else(|e| e.into_inner());
        map.get(key).cloned()
    }

    /// Runs `f` with read access to the whole map.
    pub(crate) fn with_map<R>(
        &self,
        f: impl FnOnce(&HashMap<TaskKey, Outputs, KeyHashing>) -> R,
    ) -> R {
        let map = self.0.read().unwrap_or_else(|e| e.into_inner());
        f(&map)
    }
}

/// What a task sees while it runs: the cloud, its own key, the shared results and the clock.
pub struct Context<'a, C: ?Sized> {
    pub(crate) cloud: &'a C,
    pub(crate) key: &'a TaskKey,
    pub(crate) results: &'a Results,
    pub(crate) clock: &'a dyn Clock,
    pub(crate) attempt: u32,
}

impl<'a, C: ?Sized> Context<'a, C> {
    /// A context outside the executor (for tests and tools that call a task directly).
    pub fn new(cloud: &'a C, key: &'a TaskKey, results: &'a Results, clock: &'a dyn Clock) -> Self {
        Context {
            cloud,
            key,
            results,
            clock,
            attempt: 1,
        }
    }

    /// The cloud.
    pub fn cloud(&self) -> &'a C {
        self.cloud
    }

    /// The running task's key.
    pub fn key(&self) -> &TaskKey {
        self.key
    }

    /// The attempt number, starting at 1.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The clock (use it for any polling so tests stay instant).
    pub fn clock(&self) -> &dyn Clock {
        self.clock
    }

    /// The shared results map.
    pub fn results(&self) -> &Results {
        self.results
    }

    /// The actual value a reference stands for (e.g. the created VPC's ID); an error naming
    /// both tasks when the referenced task has not produced that output.
    pub fn resolve(&self, r: &TaskRef) -> Result<String> {
        self.results
            .get(&r.key, &r.attr)
            .ok_or_else(|| Error::UnresolvedReference {
                from: self.key.clone(),
                to: r.key.clone(),
                attr: r.attr.to_string(),
            })
    }
}

impl<C: ?Sized> fmt::Debug for Context<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("key", self.key)
            .field("attempt", &self.attempt)
            .finish_non_exhaustive()
    }
}

/// An actual object owned by the cluster (found by tags or supplied by the caller), used to
/// find orphans: owned objects no task describes any more are planned for deletion.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnedObject {
    /// The key a task describing this object would have.
    pub key: TaskKey,
    /// The cloud ID.
    pub id: String,
    /// What will be deleted, for humans.
    #[serde(default)]
    pub description: String,
    /// Whether deletion waits until deferred deletions are allowed (kOps' `--prune`).
    #[serde(default)]
    pub deferred: bool,
}

/// Deletes orphaned objects; implemented by the cloud crates.
#[async_trait]
pub trait Deleter<C: ?Sized + Sync>: Send + Sync + fmt::Debug {
    /// Deletes one object.
    async fn delete(&self, cx: &Context<'_, C>, object: &OwnedObject) -> Result<()>;
}
