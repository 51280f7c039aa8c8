//! The [`Task`] trait, the [`Context`] handed to it, and the shared [`Results`] map.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt;
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::clock::Clock;
use crate::diff::{FieldChange, Resolver};
use crate::error::{Error, Result};
use crate::graph::{KeyId, KeyTable, TaskGraph};
use crate::key::{KeyHashing, TaskKey, TaskRef};
use crate::lifecycle::Lifecycle;
use crate::terraform::TerraformWriter;
use crate::value::{Fields, Outputs, OutputsView};

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

    /// The expected state. [`crate::Value::Null`] fields are "don't care". Called at most
    /// once per graph, when the graph is built or (for a task that answers
    /// [`Task::for_each_ref`]) when first needed; the result is cached there.
    fn fields(&self) -> Fields;

    /// The expected state when the task keeps it ready-made: the graph then borrows it
    /// for its whole life instead of calling [`Task::fields`] and caching a copy. It must
    /// equal what [`Task::fields`] returns. Default `None` (the graph calls `fields`).
    fn fields_ref(&self) -> Option<&Fields> {
        None
    }

    /// Passes every reference that [`Task::fields`] holds to `f` (in any order, each as
    /// often as the fields hold it) without building the fields, and returns `true`; the
    /// default returns `false` and the graph build reads the references from the fields.
    ///
    /// A task that answers here and compares its object itself ([`Found::compared`]) has
    /// its fields built only when something needs them: a create, an apply, a skipped
    /// lookup.
    fn for_each_ref(&self, _f: &mut dyn FnMut(&TaskRef)) -> bool {
        false
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

    /// Answers [`Task::find`] at once when that needs no waiting (the cloud answers from a
    /// listing it already holds); `None` when only `find` can tell. When planning, the
    /// executor asks this first, for many ready tasks at once and from several threads,
    /// and calls `find` for the tasks it leaves unanswered. It must give what `find` would
    /// and must not block. Default: `None`.
    fn find_now(&self, _cx: &Context<'_, C>) -> Option<Result<Option<Found>>> {
        None
    }

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
    /// The actual field values, named as in [`Task::fields`] (empty for an object the
    /// task compared itself: see [`Found::compared`]).
    pub fields: Fields,
    /// Outputs of the existing object (`id`, `arn`, ...), for dependents' references.
    #[serde(default)]
    pub outputs: Outputs,
    /// The differences, when the task compared the object with its expected fields
    /// itself (not serialised: they belong to the run that found them).
    #[serde(skip)]
    changes: Option<Vec<FieldChange>>,
}

impl Found {
    /// An existing object with these fields and outputs: the executor diffs the fields
    /// against the task's expected ones.
    pub fn new(fields: Fields, outputs: Outputs) -> Self {
        Found {
            fields,
            outputs,
            changes: None,
        }
    }

    /// An existing object that the task compared with its expected fields itself, in
    /// place, under the diff's rules ([`crate::diff`]): `changes` are exactly what
    /// [`crate::diff::diff_fields`] would return for the task's fields and the object's
    /// (each with its actual value as `old`), so the executor neither builds the actual
    /// fields nor diffs them. Most objects match, and then nothing is copied but the
    /// outputs.
    pub fn compared(changes: Vec<FieldChange>, outputs: Outputs) -> Self {
        Found {
            fields: Fields::new(),
            outputs,
            changes: Some(changes),
        }
    }

    /// The differences the task found itself ([`Found::compared`]); `None` when the
    /// executor diffs [`Found::fields`].
    pub fn changes(&self) -> Option<&[FieldChange]> {
        self.changes.as_deref()
    }

    /// Takes the task's own differences out, leaving `None`.
    pub(crate) fn take_changes(&mut self) -> Option<Vec<FieldChange>> {
        self.changes.take()
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
///
/// During a run (and after it, until the next), the outputs of the graph's tasks are kept
/// by node index, so recording and resolving them hashes nothing; other keys (seeded ones,
/// an earlier run's) are kept in a map. A `Results` serves one run at a time: a later run
/// on it moves the earlier run's outputs into the map first.
#[derive(Debug, Default)]
pub struct Results(RwLock<Recorded>);

#[derive(Debug, Default)]
pub(crate) struct Recorded {
    /// Outputs of keys that are not (yet) matched to a node of the current run's graph.
    map: HashMap<TaskKey, Outputs, KeyHashing>,
    /// The current run's graph and its tasks' outputs.
    run: Option<RunOutputs>,
}

/// The bytes of outputs a run reserves per task.
const OUTPUT_BYTES_PER_TASK: usize = 128;

/// The last run id given out (see [`Results::run_id`]).
static LAST_RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

#[derive(Debug)]
struct RunOutputs {
    /// The run's id, unique in the process.
    id: u64,
    /// The graph's key identities and keys, by node.
    table: Arc<KeyTable>,
    /// Where node `i`'s outputs lie in `chunks`, once it recorded some.
    slots: Vec<Slot>,
    /// Every node's outputs ([`Outputs::as_bytes`]), one after another in the order they
    /// were recorded, in a few buffers instead of an allocation per task, freed at once:
    /// the first is written here ([`RunOutputs::put`]); the others are the buffers a plan's
    /// rounds wrote while finding the objects, kept as they are
    /// ([`Results::adopt_node_buffers`]) rather than copied.
    chunks: Vec<Vec<u8>>,
}

/// Where a node's outputs lie in [`RunOutputs::chunks`] (`chunk == Slot::NONE`: none).
#[derive(Debug, Clone, Copy)]
struct Slot {
    start: usize,
    len: u32,
    chunk: u32,
}

impl Slot {
    const NONE: u32 = u32::MAX;
    const EMPTY: Slot = Slot {
        start: 0,
        len: 0,
        chunk: Slot::NONE,
    };

    /// The slot of `range` of chunk `chunk`, when both fit its fields.
    fn of(chunk: usize, range: std::ops::Range<usize>) -> Option<Slot> {
        Some(Slot {
            start: range.start,
            len: u32::try_from(range.end.checked_sub(range.start)?).ok()?,
            chunk: u32::try_from(chunk).ok().filter(|&c| c != Slot::NONE)?,
        })
    }

    fn is_none(self) -> bool {
        self.chunk == Slot::NONE
    }
}

impl RunOutputs {
    fn slot(&self, node: usize) -> Option<OutputsView<'_>> {
        let slot = *self.slots.get(node)?;
        if slot.is_none() {
            return None;
        }
        let chunk = self.chunks.get(slot.chunk as usize)?;
        chunk
            .get(slot.start..slot.start + slot.len as usize)
            .map(OutputsView)
    }

    /// Whether node `node` is in range and has no outputs yet.
    fn is_unset(&self, node: usize) -> bool {
        self.slots.get(node).is_some_and(|s| s.is_none())
    }

    /// Sets node `node`'s outputs (in range) to `outputs`, copied into the first chunk.
    fn put(&mut self, node: usize, outputs: &[u8]) {
        let Some(own) = self.chunks.first_mut() else {
            return;
        };
        let start = own.len();
        own.extend_from_slice(outputs);
        let slot = Slot::of(0, start..own.len());
        if let (Some(s), Some(slot)) = (self.slots.get_mut(node), slot) {
            *s = slot;
        }
    }
}

impl Recorded {
    /// The node of the current run whose key is `key`, when that can be told without the
    /// graph: `key` is a clone of the node's key or has its text.
    fn node_of(&self, key: &TaskKey) -> Option<usize> {
        let run = self.run.as_ref()?;
        let id = KeyId::of(key);
        run.table.find(id.hash, |j| match run.table.ids.get(j) {
            Some(node) => *node == id || (node.hash == id.hash && run.table.key(j) == Some(key)),
            None => false,
        })
    }

    fn slot(&self, node: usize) -> Option<OutputsView<'_>> {
        self.run.as_ref()?.slot(node)
    }

    fn get(&self, key: &TaskKey) -> Option<OutputsView<'_>> {
        self.node_of(key)
            .and_then(|j| self.slot(j))
            .or_else(|| self.map.get(key).map(Outputs::view))
    }

    /// Merges `outputs` into node `node`'s (outputs recorded under its key before it was
    /// matched to the node are merged first).
    fn record(&mut self, node: usize, key: &TaskKey, mut outputs: Outputs) {
        if !self.map.is_empty()
            && let Some(mut earlier) = self.map.remove(key)
        {
            earlier.merge(outputs);
            outputs = earlier;
        }
        let Some(run) = self.run.as_mut().filter(|r| node < r.slots.len()) else {
            self.insert_by_key(key.clone(), outputs);
            return;
        };
        match run.slot(node) {
            // Recorded again (a find, then the apply): the merged outputs are written
            // anew, after the others.
            Some(known) => {
                let mut merged = Outputs::from_view(known);
                merged.merge(outputs);
                run.put(node, merged.as_bytes());
            }
            None => run.put(node, outputs.as_bytes()),
        }
    }

    /// [`Recorded::record`] of outputs given as their bytes, copied once when there is
    /// nothing to merge them with (a node's first outputs, the usual case).
    fn record_bytes(&mut self, node: usize, key: &TaskKey, bytes: &[u8]) {
        if self.map.is_empty()
            && let Some(run) = self.run.as_mut()
            && run.is_unset(node)
        {
            run.put(node, bytes);
            return;
        }
        self.record(node, key, Outputs::from_view(OutputsView(bytes)));
    }

    fn insert_by_key(&mut self, key: TaskKey, outputs: Outputs) {
        match self.map.entry(key) {
            Entry::Occupied(mut known) => known.get_mut().merge(outputs),
            Entry::Vacant(slot) => {
                slot.insert(outputs);
            }
        }
    }
}

/// Bytes `range` of buffer `part` of `buffers`, if it has them.
fn bytes_of(buffers: &[Vec<u8>], part: usize, range: std::ops::Range<usize>) -> Option<&[u8]> {
    buffers.get(part).and_then(|b| b.get(range))
}

impl Results {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of the executor's run this map serves, unique in the process (0 before any
    /// run). What a task remembers of the cloud for one run (a listing it shares with the
    /// other tasks, say) is stale in the next, which has another id.
    pub fn run_id(&self) -> u64 {
        self.read().run.as_ref().map_or(0, |r| r.id)
    }

    pub(crate) fn read(&self) -> std::sync::RwLockReadGuard<'_, Recorded> {
        self.0.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Recorded> {
        self.0.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Records (merges) outputs for a task.
    pub fn insert(&self, key: TaskKey, outputs: Outputs) {
        let mut r = self.write();
        match r.node_of(&key) {
            Some(j) => r.record(j, &key, outputs),
            None => r.insert_by_key(key, outputs),
        }
    }

    /// Records (merges) outputs for node `node` of `graph`: at the node when this map
    /// follows a run of `graph` (by key otherwise, when a later run started on this map
    /// before this one ended).
    pub(crate) fn insert_node<C: ?Sized + Sync>(
        &self,
        graph: &TaskGraph<C>,
        node: usize,
        outputs: Outputs,
    ) {
        self.insert_node_bytes(graph, [(node, outputs.as_bytes())]);
    }

    /// Records the outputs of several nodes of `graph` at once, each given as its bytes
    /// ([`Outputs::as_bytes`]), as [`Results::insert_node`] does for one.
    pub(crate) fn insert_node_bytes<'b, C: ?Sized + Sync>(
        &self,
        graph: &TaskGraph<C>,
        outputs: impl IntoIterator<Item = (usize, &'b [u8])>,
    ) {
        let mut outputs = outputs.into_iter().peekable();
        if outputs.peek().is_none() {
            return;
        }
        let mut r = self.write();
        let ours = r
            .run
            .as_ref()
            .is_some_and(|run| Arc::ptr_eq(&run.table, graph.key_table()));
        for (node, bytes) in outputs {
            let Some(key) = graph.node(node).map(|n| n.key()) else {
                continue;
            };
            if ours {
                r.record_bytes(node, key, bytes);
                continue;
            }
            let outputs = Outputs::from_view(OutputsView(bytes));
            match r.node_of(key) {
                Some(j) => r.record(j, key, outputs),
                None => r.insert_by_key(key.clone(), outputs),
            }
        }
    }

    /// Records the outputs of nodes of `graph` written into `buffers` (by a plan's round,
    /// one buffer per thread): each entry names a node, its buffer and where its outputs
    /// lie there. When this map follows the run of `graph` and holds nothing by key, the
    /// buffers are kept as they are, `buffers` is left empty and nothing is copied;
    /// otherwise each node's outputs are recorded as [`Results::insert_node_bytes`] does and
    /// `buffers` is left as it was.
    pub(crate) fn adopt_node_buffers<C: ?Sized + Sync>(
        &self,
        graph: &TaskGraph<C>,
        buffers: &mut Vec<Vec<u8>>,
        entries: impl IntoIterator<Item = (usize, usize, std::ops::Range<usize>)>,
    ) {
        let mut r = self.write();
        let adopt = r.map.is_empty()
            && r.run
                .as_ref()
                .is_some_and(|run| Arc::ptr_eq(&run.table, graph.key_table()));
        let Some(run) = r.run.as_mut().filter(|_| adopt) else {
            drop(r);
            let buffers = &*buffers;
            return self.insert_node_bytes(
                graph,
                entries.into_iter().filter_map(|(node, part, range)| {
                    Some((node, bytes_of(buffers, part, range)?))
                }),
            );
        };
        let base = run.chunks.len();
        // A node recorded before (whose outputs are merged) is recorded the usual way.
        let mut again = Vec::new();
        for (node, part, range) in entries {
            let slot = Slot::of(base + part, range.clone())
                .filter(|_| bytes_of(buffers, part, range.clone()).is_some());
            match (run.slots.get_mut(node), slot) {
                (Some(s), Some(slot)) if s.is_none() => *s = slot,
                _ => again.push((node, part, range)),
            }
        }
        for (node, part, range) in again {
            let (Some(bytes), Some(node_ref)) = (bytes_of(buffers, part, range), graph.node(node))
            else {
                continue;
            };
            r.record(node, node_ref.key(), Outputs::from_view(OutputsView(bytes)));
        }
        if let Some(run) = r.run.as_mut() {
            run.chunks.append(buffers);
        }
    }

    /// Prepares for a run on `graph`: an earlier run's outputs move into the map, and
    /// outputs recorded under the keys of `graph`'s tasks move to their nodes.
    pub(crate) fn start_run<C: ?Sized + Sync>(&self, graph: &TaskGraph<C>) {
        let mut r = self.write();
        if let Some(earlier) = r.run.take() {
            for j in 0..earlier.slots.len() {
                if let (Some(key), Some(outputs)) = (earlier.table.key(j), earlier.slot(j)) {
                    r.insert_by_key(key.clone(), Outputs::from_view(outputs));
                }
            }
        }
        let mut run = RunOutputs {
            id: LAST_RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
            table: graph.key_table().clone(),
            slots: vec![Slot::EMPTY; graph.len()],
            // Room for typical outputs (an ID, an ARN, a name): pages are only taken as
            // they are written, and the buffer is not copied over as it grows.
            chunks: vec![Vec::with_capacity(graph.len() * OUTPUT_BYTES_PER_TASK)],
        };
        let mut map = std::mem::take(&mut r.map);
        if !map.is_empty() {
            map.retain(|key, outputs| match graph.index_of(key) {
                Some(j) => {
                    run.put(j, outputs.as_bytes());
                    false
                }
                None => true,
            });
        }
        r.map = map;
        r.run = Some(run);
    }

    /// One output of a task.
    pub fn get(&self, key: &TaskKey, attr: &str) -> Option<String> {
        self.read()
            .get(key)
            .and_then(|o| o.get(attr))
            .map(str::to_owned)
    }

    /// All outputs of a task.
    pub fn outputs(&self, key: &TaskKey) -> Option<Outputs> {
        self.read().get(key).map(Outputs::from_view)
    }

    /// Runs `f` with a resolver of the references held by node `from` of `graph` (the
    /// graph of the current run).
    pub(crate) fn with_resolver<C: ?Sized + Sync, R>(
        &self,
        graph: &TaskGraph<C>,
        from: usize,
        f: impl FnOnce(&NodeResolver<'_, C>) -> R,
    ) -> R {
        let r = self.read();
        f(&NodeResolver::new(&r, graph, from))
    }
}

/// Resolves references by key, as [`Context::resolve`] does.
impl Resolver for Recorded {
    fn resolve(&self, r: &TaskRef) -> Option<&str> {
        self.get(&r.key).and_then(|o| o.get(&r.attr))
    }
}

/// Resolves the references of one node of the current run's graph: to the node each
/// points to (one of the node's dependencies, found without hashing), then to the map.
pub(crate) struct NodeResolver<'a, C: ?Sized + Sync> {
    recorded: &'a Recorded,
    graph: &'a TaskGraph<C>,
    from: usize,
    /// Outputs not recorded yet, by node: those a plan's round found earlier on the same
    /// thread ([`NodeResolver::with_unrecorded`]).
    unrecorded: Option<&'a Unrecorded<'a>>,
}

/// The outputs a plan's round found for a node and has not recorded yet, if any.
pub(crate) type Unrecorded<'a> = dyn Fn(usize) -> Option<OutputsView<'a>> + Sync + 'a;

impl<'a, C: ?Sized + Sync> NodeResolver<'a, C> {
    pub(crate) fn new(recorded: &'a Recorded, graph: &'a TaskGraph<C>, from: usize) -> Self {
        NodeResolver {
            recorded,
            graph,
            from,
            unrecorded: None,
        }
    }

    /// The same resolver, reading the outputs of a node `unrecorded` gives there first.
    pub(crate) fn with_unrecorded(self, unrecorded: &'a Unrecorded<'a>) -> Self {
        NodeResolver {
            unrecorded: Some(unrecorded),
            ..self
        }
    }

    /// The outputs of node `d`.
    fn outputs_at(&self, run: &'a RunOutputs, d: usize) -> Option<OutputsView<'a>> {
        self.unrecorded
            .and_then(|unrecorded| unrecorded(d))
            .or_else(|| run.slot(d))
    }
}

impl<C: ?Sized + Sync> Resolver for NodeResolver<'_, C> {
    fn resolve(&self, r: &TaskRef) -> Option<&str> {
        let run = self
            .recorded
            .run
            .as_ref()
            .filter(|run| Arc::ptr_eq(&run.table, self.graph.key_table()));
        let at_node = match run {
            Some(run) => {
                // A reference of a task points to one of its dependencies, usually holding
                // a clone of its key.
                let id = KeyId::of(&r.key);
                self.graph
                    .dependencies(self.from)
                    .iter()
                    .find(|&&d| run.table.ids.get(d) == Some(&id))
                    .and_then(|&d| self.outputs_at(run, d))
                    .or_else(|| {
                        self.graph
                            .target_of(self.from, r)
                            .and_then(|j| self.outputs_at(run, j))
                    })
            }
            None => self.recorded.get(&r.key),
        };
        at_node
            .or_else(|| self.recorded.map.get(&r.key).map(Outputs::view))
            .and_then(|o| o.get(&r.attr))
    }
}

/// What a task sees while it runs: the cloud, its own key, the shared results and the clock.
pub struct Context<'a, C: ?Sized> {
    pub(crate) cloud: &'a C,
    pub(crate) key: &'a TaskKey,
    pub(crate) results: &'a Results,
    pub(crate) clock: &'a dyn Clock,
    pub(crate) attempt: u32,
    /// The resolver of a plan's round, which read the results once for the whole round
    /// (references resolve there without taking the lock once per task).
    pub(crate) resolver: Option<&'a (dyn Resolver + Sync)>,
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
            resolver: None,
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

    /// Runs `f` with a resolver of references to the outputs recorded so far, the ones
    /// [`Context::resolve`] reads, without copying them (a task comparing its object in
    /// place, [`Found::compared`]). `f` must not wait on anything: other tasks cannot
    /// record their outputs while it runs.
    pub fn with_resolver<R>(&self, f: impl FnOnce(&dyn Resolver) -> R) -> R {
        match self.resolver {
            Some(resolver) => f(resolver),
            None => f(&*self.results.read()),
        }
    }

    /// The actual value a reference stands for (e.g. the created VPC's ID); an error naming
    /// both tasks when the referenced task has not produced that output.
    pub fn resolve(&self, r: &TaskRef) -> Result<String> {
        self.with_resolver(|recorded| recorded.resolve(r).map(str::to_owned))
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
