//! The task graph: tasks indexed by key, references resolved to edges, cycles rejected,
//! and a topological order computed once.

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::error::{Error, Result};
use crate::key::{TaskKey, TaskRef};
use crate::lifecycle::{Lifecycle, LifecycleOverrides};
use crate::task::Task;
use crate::value::Fields;

/// One task in a built graph, with its cached expected fields and effective lifecycle.
pub struct Node<C: ?Sized + Sync> {
    pub(crate) task: Box<dyn Task<C>>,
    pub(crate) key: TaskKey,
    /// The expected fields, when the task does not hold them itself ([`Task::fields_ref`]):
    /// built at graph build, or when first needed for a task that lists its references
    /// itself ([`Task::for_each_ref`]).
    pub(crate) fields: OnceLock<Fields>,
    pub(crate) lifecycle: Lifecycle,
}

impl<C: ?Sized + Sync> Node<C> {
    /// The task.
    pub fn task(&self) -> &dyn Task<C> {
        self.task.as_ref()
    }
    /// Its key.
    pub fn key(&self) -> &TaskKey {
        &self.key
    }
    /// Its expected fields (as returned by [`Task::fields`], once, or borrowed from the
    /// task through [`Task::fields_ref`]).
    pub fn fields(&self) -> &Fields {
        if let Some(f) = self.fields.get() {
            return f;
        }
        match self.task.fields_ref() {
            Some(f) => f,
            None => self.fields.get_or_init(|| self.task.fields()),
        }
    }

    /// Passes every reference its fields hold to `f`, reading them from the task when it
    /// lists them itself ([`Task::for_each_ref`]).
    fn for_each_ref(&self, f: &mut dyn FnMut(&TaskRef)) {
        if self.fields.get().is_some() || !self.task.for_each_ref(f) {
            self.fields().for_each_ref(&mut |r| f(r));
        }
    }
    /// Its effective lifecycle (after overrides).
    pub fn lifecycle(&self) -> Lifecycle {
        self.lifecycle
    }
}

impl<C: ?Sized + Sync> fmt::Debug for Node<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Node")
            .field("key", &self.key)
            .field("lifecycle", &self.lifecycle)
            .finish_non_exhaustive()
    }
}

/// A validated, acyclic graph of tasks. Nodes are stored in the order the tasks were
/// given, and node indices (`usize`) refer to that order: it is usually the order the
/// tasks lie in memory, so a pass over the nodes in index order reads them one after
/// another. [`TaskGraph::in_key_order`] lists them sorted by key.
pub struct TaskGraph<C: ?Sized + Sync> {
    nodes: Vec<Node<C>>,
    /// Each node's key identity and the index of them (shared with the [`Results`] of a
    /// run on this graph).
    ///
    /// [`Results`]: crate::Results
    table: Arc<KeyTable>,
    /// Node indices sorted by key.
    by_key: Vec<usize>,
    /// Node `i`'s direct dependencies are `deps.of(i)`, its direct dependents
    /// `dependents.of(i)`, both in ascending node order.
    deps: Adjacency,
    dependents: Adjacency,
    order: Vec<usize>,
}

/// Lists of node indices, one per node, stored one after another.
#[derive(Debug, Default)]
struct Adjacency {
    /// Node `i`'s list is `items[start[i]..start[i + 1]]`.
    start: Vec<usize>,
    items: Vec<usize>,
}

impl Adjacency {
    fn of(&self, i: usize) -> &[usize] {
        match (self.start.get(i), self.start.get(i + 1)) {
            (Some(&a), Some(&b)) => self.items.get(a..b).unwrap_or_default(),
            _ => &[],
        }
    }

    /// The reverse lists: `j` is in the result's list of `i` when `i` is in this list of
    /// `j` (each list ascending, as this one's are).
    fn reversed(&self) -> Adjacency {
        let n = self.start.len().saturating_sub(1);
        let mut start = vec![0usize; n + 1];
        for &j in &self.items {
            start[j + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut next = start.clone();
        let mut items = vec![0usize; self.items.len()];
        for i in 0..n {
            for &j in self.of(i) {
                items[next[j]] = i;
                next[j] += 1;
            }
        }
        Adjacency { start, items }
    }
}

impl<C: ?Sized + Sync> fmt::Debug for TaskGraph<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskGraph")
            .field("tasks", &self.nodes.len())
            .finish_non_exhaustive()
    }
}

impl<C: ?Sized + Sync> TaskGraph<C> {
    /// Builds the graph with no lifecycle overrides. See [`TaskGraph::build_with`].
    pub fn build(tasks: Vec<Box<dyn Task<C>>>) -> Result<Self> {
        Self::build_with(tasks, &LifecycleOverrides::default())
    }

    /// Builds the graph: rejects duplicate keys, resolves every reference (an unknown one
    /// is an error naming both tasks), applies per-kind lifecycle overrides, and rejects a
    /// cycle (the error names the tasks in it) before anything can run.
    ///
    /// A large graph is built on several threads (one per 8192 tasks, up to the machine's
    /// parallelism); the graph is the same on any number.
    pub fn build_with(
        tasks: Vec<Box<dyn Task<C>>>,
        overrides: &LifecycleOverrides,
    ) -> Result<Self> {
        let threads = build_threads(tasks.len());
        Self::build_on(tasks, overrides, threads)
    }

    /// [`TaskGraph::build_with`] on up to `threads` threads.
    fn build_on(
        tasks: Vec<Box<dyn Task<C>>>,
        overrides: &LifecycleOverrides,
        threads: usize,
    ) -> Result<Self> {
        let n = tasks.len();
        // The first pass, over runs of neighbouring tasks, one per thread.
        let Pass {
            entries,
            ids,
            keys,
            sorter,
            refs,
            ref_start,
            extra,
        } = Pass::read_all(tasks, overrides, threads);

        // The nodes' order (sorted by key) on one thread while the references are
        // resolved to edges and ordered on this one: neither reads what the other writes.
        let sort = || {
            sorter.sorted(
                |a, b| entries[a].key.cmp(&entries[b].key),
                |i| entries[i].key.name(),
            )
        };
        let link = || Links::of(&entries, &ids, &refs, &ref_start, extra);
        let (perm, links) = if threads > 1 {
            both(sort, link)
        } else {
            (sort(), link())
        };

        // A duplicate key: equal keys end up next to each other in key order.
        if let Some(w) = perm
            .windows(2)
            .find(|w| ids[w[0]].hash == ids[w[1]].hash && entries[w[0]].key == entries[w[1]].key)
        {
            return Err(Error::DuplicateTask {
                key: entries[w[1]].key.clone(),
            });
        }
        let Links {
            index,
            deps,
            dependents,
            unknown,
            order,
        } = links;
        // The first unknown reference in key order, as a walk of the sorted nodes meets it.
        if !unknown.is_empty() {
            let mut rank = vec![0usize; n];
            for (j, &i) in perm.iter().enumerate() {
                rank[i] = j;
            }
            if let Some((i, to)) = unknown.into_iter().min_by_key(|(i, _)| rank[*i]) {
                return Err(Error::UnknownReference {
                    from: entries[i].key.clone(),
                    to,
                });
            }
        }
        let nodes = entries;
        let Some(order) = order else {
            return Err(Error::Cycle {
                tasks: first_cycle(&nodes, &deps),
            });
        };

        Ok(TaskGraph {
            nodes,
            table: Arc::new(KeyTable { ids, keys, index }),
            by_key: perm,
            deps,
            dependents,
            order,
        })
    }

    /// Number of tasks.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the graph has no tasks.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The node at an index.
    pub fn node(&self, i: usize) -> Option<&Node<C>> {
        self.nodes.get(i)
    }

    /// All nodes, in the order the tasks were given.
    pub fn nodes(&self) -> &[Node<C>] {
        &self.nodes
    }

    /// Node indices sorted by key (kind, then name).
    pub fn in_key_order(&self) -> &[usize] {
        &self.by_key
    }

    /// The index of a task.
    pub fn index_of(&self, key: &TaskKey) -> Option<usize> {
        let id = KeyId::of(key);
        self.table.index.find(id.hash, |j| {
            self.table.ids.get(j) == Some(&id) || self.nodes.get(j).is_some_and(|n| n.key == *key)
        })
    }

    /// The nodes' key identities and their index.
    pub(crate) fn key_table(&self) -> &Arc<KeyTable> {
        &self.table
    }

    /// The node a reference held by node `from`'s fields points to, without hashing: a
    /// reference of a task is one of its dependencies, so they are searched first (by key
    /// identity, then by key), then the key index. `None` when no task has the key.
    pub fn target_of(&self, from: usize, r: &TaskRef) -> Option<usize> {
        let id = KeyId::of(&r.key);
        let deps = self.deps.of(from);
        let key_of = |d: usize| self.nodes.get(d).map(|n| &n.key);
        deps.iter()
            .copied()
            .find(|&d| self.table.ids.get(d) == Some(&id))
            .or_else(|| deps.iter().copied().find(|&d| key_of(d) == Some(&r.key)))
            .or_else(|| self.index_of(&r.key))
    }

    /// Whether a task with this key is in the graph.
    pub fn contains(&self, key: &TaskKey) -> bool {
        self.index_of(key).is_some()
    }

    /// Direct dependencies of a node.
    pub fn dependencies(&self, i: usize) -> &[usize] {
        self.deps.of(i)
    }

    /// Direct dependents of a node.
    pub fn dependents(&self, i: usize) -> &[usize] {
        self.dependents.of(i)
    }

    /// A topological order: every task comes after all of its dependencies.
    pub fn topological_order(&self) -> &[usize] {
        &self.order
    }

    /// The graph in levels (waves): level 0 has no dependencies, and every task is one
    /// level after its deepest dependency. Tasks of one level are independent of each
    /// other; this is the order kOps' executor runs them in and a bound on parallelism.
    pub fn levels(&self) -> Vec<Vec<usize>> {
        let mut level = vec![0usize; self.nodes.len()];
        let mut levels: Vec<Vec<usize>> = Vec::new();
        for &i in &self.order {
            let l = self
                .deps
                .of(i)
                .iter()
                .map(|&d| level[d] + 1)
                .max()
                .unwrap_or(0);
            level[i] = l;
            if levels.len() <= l {
                levels.resize_with(l + 1, Vec::new);
            }
            levels[l].push(i);
        }
        levels
    }
}

/// Tasks read together by the build's first pass.
const GROUP: usize = 16;

/// The fewest tasks the build gives a thread of its own: below that, starting the thread
/// costs about what it saves.
const MIN_TASKS_PER_BUILD_THREAD: usize = 8192;

/// Threads the build of `n` tasks uses: one per [`MIN_TASKS_PER_BUILD_THREAD`], up to the
/// machine's parallelism.
fn build_threads(n: usize) -> usize {
    (n / MIN_TASKS_PER_BUILD_THREAD).clamp(1, crate::executor::available_threads())
}

/// What the build's first pass reads from a run of tasks, node by node.
struct Pass<C: ?Sized + Sync> {
    entries: Vec<Node<C>>,
    ids: Vec<KeyId>,
    /// Cloned while the key is at hand, for the key table.
    keys: Vec<TaskKey>,
    sorter: KeySorter,
    /// The identities of the keys each node's fields refer to, node after node.
    refs: Vec<KeyId>,
    /// Where each node's references start in `refs`.
    ref_start: Vec<usize>,
    /// Explicit dependencies: (node, key), ascending by node.
    extra: Vec<(usize, TaskKey)>,
}

impl<C: ?Sized + Sync> Pass<C> {
    /// Reads `tasks` in runs of neighbouring tasks, one run per thread, and joins what
    /// the runs read in the tasks' order.
    fn read_all(
        mut tasks: Vec<Box<dyn Task<C>>>,
        overrides: &LifecycleOverrides,
        threads: usize,
    ) -> Self {
        let n = tasks.len();
        let per_thread = n.div_ceil(threads.max(1)).max(1);
        let mut runs = Vec::with_capacity(threads);
        while tasks.len() > per_thread {
            let first = (tasks.len() - 1) / per_thread * per_thread;
            runs.push((first, tasks.split_off(first)));
        }
        runs.push((0, tasks));
        runs.reverse();
        // The first run's buffers have room for every run's.
        let read = |(first, run)| Pass::read(run, first, if first == 0 { n } else { 0 }, overrides);
        let mut parts = in_parallel(runs, read).into_iter();
        let mut all = match parts.next() {
            Some(all) => all,
            None => Pass::read(Vec::new(), 0, 0, overrides),
        };
        for part in parts {
            all.append(part);
        }
        all.ref_start.push(all.refs.len());
        all
    }

    /// Reads a run of tasks, the first of which is node `first`, into buffers with room
    /// for `room` nodes at least: each task's key, fields,
    /// lifecycle and the identities of the keys its fields refer to are read here, and
    /// nowhere else in the common case. The run is usually the order the tasks lie in
    /// memory.
    fn read(
        tasks: Vec<Box<dyn Task<C>>>,
        first: usize,
        room: usize,
        overrides: &LifecycleOverrides,
    ) -> Self {
        let n = tasks.len().max(room);
        let mut pass = Pass {
            entries: Vec::with_capacity(n),
            ids: Vec::with_capacity(n),
            keys: Vec::with_capacity(n),
            sorter: KeySorter::with_capacity(n),
            refs: Vec::with_capacity(n),
            ref_start: Vec::with_capacity(n + 1),
            extra: Vec::new(),
        };
        let mut tasks = tasks.into_iter().peekable();
        let mut group: Vec<Box<dyn Task<C>>> = Vec::with_capacity(GROUP);
        while tasks.peek().is_some() {
            group.extend(tasks.by_ref().take(GROUP));
            // First what the group's keys are, read without writing them, so that the
            // reads of neighbouring tasks wait for memory together; then the clones,
            // whose counts are written where the reads brought them.
            for task in &group {
                let key = task.key();
                pass.ids.push(KeyId::of(key));
                pass.sorter.push(key);
            }
            for task in group.drain(..) {
                let key = task.key().clone();
                pass.keys.push(key.clone());
                let lifecycle = overrides.resolve(key.kind(), task.lifecycle());
                pass.ref_start.push(pass.refs.len());
                let node = Node {
                    task,
                    key,
                    fields: OnceLock::new(),
                    lifecycle,
                };
                let refs = &mut pass.refs;
                node.for_each_ref(&mut |r| refs.push(KeyId::of(&r.key)));
                for k in node.task.dependencies() {
                    pass.extra.push((first + pass.entries.len(), k));
                }
                pass.entries.push(node);
            }
        }
        pass
    }

    /// Appends what the next run read.
    fn append(&mut self, next: Pass<C>) {
        let offset = self.refs.len();
        self.entries.extend(next.entries);
        self.ids.extend(next.ids);
        self.keys.extend(next.keys);
        self.sorter.append(next.sorter);
        self.refs.extend(next.refs);
        self.ref_start
            .extend(next.ref_start.into_iter().map(|s| s + offset));
        self.extra.extend(next.extra);
    }
}

/// The graph's edges, from the references of its nodes.
struct Links {
    index: KeyIndex,
    deps: Adjacency,
    dependents: Adjacency,
    /// Nodes with a reference to no node, and the first such key of each.
    unknown: Vec<(usize, TaskKey)>,
    /// The topological order, or `None` when there is a cycle (not computed when a
    /// reference is unknown).
    order: Option<Vec<usize>>,
}

impl Links {
    fn of<C: ?Sized + Sync>(
        entries: &[Node<C>],
        ids: &[KeyId],
        refs: &[KeyId],
        ref_start: &[usize],
        extra: Vec<(usize, TaskKey)>,
    ) -> Self {
        let n = entries.len();
        let index = KeyIndex::new(ids.iter().map(|id| id.hash));
        // References resolved to node indices, task by task. A reference holding a clone
        // of its target's key is recognised by the key's address; one holding a key made
        // separately compares the key text.
        let find = |key: &TaskKey| {
            let id = KeyId::of(key);
            index.find(id.hash, |j| {
                ids[j] == id || (ids[j].hash == id.hash && entries[j].key == *key)
            })
        };
        let mut deps = Adjacency {
            start: Vec::with_capacity(n + 1),
            items: Vec::with_capacity(refs.len()),
        };
        let mut unknown = Vec::new();
        let mut extra = extra.into_iter().peekable();
        for (i, node) in entries.iter().enumerate() {
            deps.start.push(deps.items.len());
            let first = deps.items.len();
            let mine = refs.get(ref_start[i]..ref_start[i + 1]).unwrap_or_default();
            let all_known = mine
                .iter()
                .all(|id| match index.find(id.hash, |j| ids[j] == *id) {
                    Some(j) => {
                        deps.items.push(j);
                        true
                    }
                    None => false,
                });
            let mut failed = None;
            if !all_known {
                // Some reference is not a clone of its target's key: compare by text.
                deps.items.truncate(first);
                node.for_each_ref(&mut |r| {
                    if failed.is_none() {
                        match find(&r.key) {
                            Some(j) => deps.items.push(j),
                            None => failed = Some(r.key.clone()),
                        }
                    }
                });
            }
            while let Some((_, k)) = extra.next_if(|(e, _)| *e == i) {
                if failed.is_none() {
                    match find(&k) {
                        Some(j) => deps.items.push(j),
                        None => failed = Some(k),
                    }
                }
            }
            if let Some(to) = failed {
                unknown.push((i, to));
                continue;
            }
            let list = &mut deps.items[first..];
            if list.len() > 1 {
                list.sort_unstable();
                let mut kept = 1;
                for r in 1..list.len() {
                    if list[r] != list[kept - 1] {
                        list[kept] = list[r];
                        kept += 1;
                    }
                }
                deps.items.truncate(first + kept);
            }
        }
        deps.start.push(deps.items.len());
        let dependents = deps.reversed();
        let order = match unknown.is_empty() {
            true => topological_order(&deps, &dependents),
            false => None,
        };
        Links {
            index,
            deps,
            dependents,
            unknown,
            order,
        }
    }
}

/// `f` of every item, in order: the first item on this thread, each other one on a thread
/// of its own (on this one when no thread can be started).
fn in_parallel<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let mut items = items.into_iter();
    let Some(first) = items.next() else {
        return Vec::new();
    };
    let slots: Vec<Mutex<Option<T>>> = items.map(|t| Mutex::new(Some(t))).collect();
    let take = |slot: &Mutex<Option<T>>| slot.lock().unwrap_or_else(PoisonError::into_inner).take();
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = slots
            .iter()
            .map(|slot| {
                std::thread::Builder::new()
                    .name("kops-build".into())
                    .spawn_scoped(s, move || take(slot).map(f))
                    .ok()
            })
            .collect();
        let mut out = Vec::with_capacity(slots.len() + 1);
        out.push(f(first));
        for (slot, handle) in slots.iter().zip(handles) {
            let done = match handle.map(|h| h.join()) {
                Some(Ok(done)) => done,
                Some(Err(panic)) => std::panic::resume_unwind(panic),
                None => None,
            };
            // The item's thread could not be started: it is still in its slot.
            if let Some(r) = done.or_else(|| take(slot).map(f)) {
                out.push(r);
            }
        }
        out
    })
}

/// `a()` on a thread of its own (on this one when no thread can be started) and `b()`
/// on this one.
fn both<A: Send, B>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B) -> (A, B) {
    let slot = Mutex::new(Some(a));
    let take = || slot.lock().unwrap_or_else(PoisonError::into_inner).take();
    std::thread::scope(|s| {
        let handle = std::thread::Builder::new()
            .name("kops-build".into())
            .spawn_scoped(s, || take().map(|a| a()))
            .ok();
        let b = b();
        let a = match handle.map(|h| h.join()) {
            Some(Ok(a)) => a,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => None,
        };
        match a.or_else(|| take().map(|a| a())) {
            Some(a) => (a, b),
            // Only the thread started here takes the closure, and it returns what the
            // closure gave.
            None => unreachable!("the closure was taken and not run"),
        }
    })
}

/// What identifies a key without reading its text: its hash and the address of its text
/// (equal for clones of one key; keys made separately compare their text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KeyId {
    pub(crate) hash: u64,
    addr: usize,
}

impl KeyId {
    pub(crate) fn of(key: &TaskKey) -> Self {
        KeyId {
            hash: key.stored_hash(),
            addr: key.text_addr(),
        }
    }
}

/// The key identities of a graph's nodes, by node index, and the index of their hashes.
#[derive(Debug, Default)]
pub(crate) struct KeyTable {
    pub(crate) ids: Vec<KeyId>,
    /// The keys, by node: the outputs a run recorded by node are kept under them when the
    /// graph is gone.
    keys: Vec<TaskKey>,
    index: KeyIndex,
}

impl KeyTable {
    /// Node `j`'s key.
    pub(crate) fn key(&self, j: usize) -> Option<&TaskKey> {
        self.keys.get(j)
    }

    /// The first node placed under `hash` that `is` accepts.
    pub(crate) fn find(&self, hash: u64, is: impl Fn(usize) -> bool) -> Option<usize> {
        self.index.find(hash, is)
    }
}

/// The key index: an open-addressed table of node indices placed by the keys' hashes
/// (4 bytes a slot, half full at most), the caller confirming a candidate.
#[derive(Debug, Default)]
struct KeyIndex {
    slots: Vec<u32>,
    shift: u32,
}

impl KeyIndex {
    const EMPTY: u32 = u32::MAX;

    /// The index of nodes `0..` with these key hashes.
    fn new(hashes: impl ExactSizeIterator<Item = u64>) -> Self {
        let bits = (hashes.len().max(4) * 2)
            .next_power_of_two()
            .trailing_zeros();
        let mut index = KeyIndex {
            slots: vec![Self::EMPTY; 1 << bits],
            shift: 64 - bits,
        };
        let mask = index.slots.len() - 1;
        for (j, h) in hashes.enumerate() {
            let mut s = index.slot(h);
            while index.slots[s] != Self::EMPTY {
                s = (s + 1) & mask;
            }
            index.slots[s] = j as u32;
        }
        index
    }

    fn slot(&self, hash: u64) -> usize {
        // FNV's low bits are weak: one multiply moves every bit into the top ones.
        (hash.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    /// The first node placed under `hash` that `is` accepts.
    fn find(&self, hash: u64, is: impl Fn(usize) -> bool) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut s = self.slot(hash);
        loop {
            match self.slots[s] {
                Self::EMPTY => return None,
                j if is(j as usize) => return Some(j as usize),
                _ => s = (s + 1) & mask,
            }
        }
    }
}

/// Sorts items by their task keys. Keys order by kind, then name; the sort compares one
/// number per item (its kind's rank, then the bytes of its name that follow the prefix all
/// names of its kind share), and compares the keys themselves only where those numbers
/// are equal.
struct KeySorter {
    /// Distinct kinds, in order of appearance: a key of the kind, and the length of the
    /// prefix all names of the kind share.
    kinds: Vec<(TaskKey, usize)>,
    /// Per item: its kind, whether its whole name was copied, and the first bytes of its
    /// name (zero-padded).
    items: Vec<(u16, bool, [u8; Self::HEAD])>,
    /// Items whose kind has no number (more than `u16::MAX` kinds): compared by key.
    overflow: bool,
}

impl KeySorter {
    /// Bytes of the name held in the sort number, below the kind's rank (two bytes).
    const PREFIX: usize = 14;
    /// Bytes of each name copied as it is pushed: enough for the number unless the
    /// names of a kind share a long prefix (then the number reads the keys).
    const HEAD: usize = 32;

    fn with_capacity(n: usize) -> Self {
        KeySorter {
            kinds: Vec::new(),
            items: Vec::with_capacity(n),
            overflow: false,
        }
    }

    fn push(&mut self, key: &TaskKey) {
        let (kind, name) = (key.kind(), key.name().as_bytes());
        // Tasks of one kind usually come together: try the last kind seen first.
        let last = self.kinds.len().checked_sub(1);
        let id = match last.filter(|&l| self.kinds[l].0.kind() == kind) {
            Some(l) => Some(l),
            None => self.kinds.iter().position(|(k, _)| k.kind() == kind),
        };
        let id = match id {
            Some(id) => {
                let (first, shared) = &mut self.kinds[id];
                let prefix = &first.name().as_bytes()[..*shared];
                if !name.starts_with(prefix) {
                    *shared = prefix.iter().zip(name).take_while(|(a, b)| a == b).count();
                }
                id
            }
            None => {
                self.kinds.push((key.clone(), name.len()));
                self.kinds.len() - 1
            }
        };
        let mut head = [0u8; Self::HEAD];
        let len = name.len().min(Self::HEAD);
        head[..len].copy_from_slice(&name[..len]);
        let id = u16::try_from(id).unwrap_or_else(|_| {
            self.overflow = true;
            0
        });
        self.items.push((id, name.len() <= Self::HEAD, head));
    }

    /// Appends the items of `next`, pushed after this one's.
    fn append(&mut self, next: KeySorter) {
        let map: Vec<u16> = next
            .kinds
            .into_iter()
            .map(|(key, shared)| {
                let id = match self.kinds.iter().position(|(k, _)| k.kind() == key.kind()) {
                    Some(id) => {
                        // The prefix both runs' names of the kind share.
                        let (first, mine) = &mut self.kinds[id];
                        let (a, b) = (first.name().as_bytes(), key.name().as_bytes());
                        let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
                        *mine = (*mine).min(shared).min(common);
                        id
                    }
                    None => {
                        self.kinds.push((key, shared));
                        self.kinds.len() - 1
                    }
                };
                u16::try_from(id).unwrap_or_else(|_| {
                    self.overflow = true;
                    0
                })
            })
            .collect();
        self.overflow |= next.overflow;
        self.items
            .extend(next.items.into_iter().map(|(id, whole, head)| {
                (map.get(usize::from(id)).copied().unwrap_or(0), whole, head)
            }));
    }

    /// The items' order: position `j` of the result is the item that sorts `j`th.
    /// `cmp` compares two items by key; `name` gives an item's name (read only when the
    /// bytes copied do not reach past its kind's shared prefix).
    fn sorted<'a>(
        self,
        cmp: impl Fn(usize, usize) -> std::cmp::Ordering,
        name: impl Fn(usize) -> &'a str,
    ) -> Vec<usize> {
        let mut by_name: Vec<usize> = (0..self.kinds.len()).collect();
        by_name.sort_unstable_by(|&a, &b| self.kinds[a].0.kind().cmp(self.kinds[b].0.kind()));
        let mut rank = vec![0u128; self.kinds.len()];
        for (r, &k) in by_name.iter().enumerate() {
            rank[k] = (r as u128) << (8 * Self::PREFIX);
        }
        let mut keys: Vec<(u128, u32)> = self
            .items
            .iter()
            .enumerate()
            .map(|(i, &(id, whole, ref head))| {
                if self.overflow {
                    return (0, i as u32);
                }
                let id = usize::from(id);
                let shared = self.kinds[id].1;
                let mut bytes = [0u8; 16];
                let dst = &mut bytes[16 - Self::PREFIX..];
                let src: &[u8] = if whole || shared + Self::PREFIX <= Self::HEAD {
                    head
                } else {
                    name(i).as_bytes()
                };
                let rest = src.get(shared..).unwrap_or_default();
                let len = rest.len().min(Self::PREFIX);
                dst[..len].copy_from_slice(&rest[..len]);
                (rank[id] | u128::from_be_bytes(bytes), i as u32)
            })
            .collect();
        // A zero-padded prefix orders like the name (a shorter name that is a prefix of a
        // longer one pads with zeros and sorts first, or ties), so only ties need the keys.
        keys.sort_unstable();
        let mut order: Vec<usize> = keys.iter().map(|&(_, i)| i as usize).collect();
        let mut a = 0;
        while a < keys.len() {
            let b = a + keys[a..].iter().take_while(|k| k.0 == keys[a].0).count();
            if b - a > 1 {
                order[a..b].sort_by(|&x, &y| cmp(x, y));
            }
            a = b;
        }
        order
    }
}

/// An order in which every node comes after its dependencies, or `None` when there is a
/// cycle. It is the order of a depth-first search along the dependents that starts at
/// each unvisited node in index order, reversed (nodes in the reverse order of finishing),
/// visiting a node's dependents from the last one back.
fn topological_order(deps: &Adjacency, dependents: &Adjacency) -> Option<Vec<usize>> {
    let n = deps.start.len().saturating_sub(1);
    let mut discovered = vec![false; n];
    let mut finished = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut stack = Vec::new();
    for root in 0..n {
        if discovered[root] {
            continue;
        }
        stack.push(root);
        while let Some(&i) = stack.last() {
            if !discovered[i] {
                discovered[i] = true;
                for &d in dependents.of(i).iter().rev() {
                    if !discovered[d] {
                        stack.push(d);
                    }
                }
            } else {
                stack.pop();
                if !finished[i] {
                    finished[i] = true;
                    order.push(i);
                }
            }
        }
    }
    order.reverse();
    // In a graph without cycles this order puts every dependency first; with a cycle no
    // order can, so checking every edge detects one.
    let mut position = vec![0usize; n];
    for (p, &i) in order.iter().enumerate() {
        position[i] = p;
    }
    let acyclic = (0..n).all(|i| deps.of(i).iter().all(|&j| position[j] < position[i]));
    acyclic.then_some(order)
}

/// The tasks of one dependency cycle, sorted (the first, in key order, of the graph's
/// cycles); a task that depends on itself is a cycle of one.
fn first_cycle<C: ?Sized + Sync>(nodes: &[Node<C>], deps: &Adjacency) -> Vec<TaskKey> {
    let mut graph: DiGraph<(), ()> = DiGraph::with_capacity(nodes.len(), deps.items.len());
    for _ in nodes {
        graph.add_node(());
    }
    for i in 0..nodes.len() {
        for &j in deps.of(i) {
            graph.add_edge(NodeIndex::new(j), NodeIndex::new(i), ());
        }
    }
    let mut cycles: Vec<Vec<TaskKey>> = tarjan_scc(&graph)
        .into_iter()
        .filter(|scc| scc.len() > 1 || scc.iter().any(|n| deps.of(n.index()).contains(&n.index())))
        .map(|scc| {
            let mut keys: Vec<TaskKey> = scc.iter().map(|n| nodes[n.index()].key.clone()).collect();
            keys.sort();
            keys
        })
        .collect();
    cycles.sort();
    cycles.into_iter().next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::{Change, Context, Found};
    use crate::value::{Outputs, Value};

    #[derive(Debug)]
    struct T(TaskKey, Fields);

    /// A task with extra dependencies.
    #[derive(Debug)]
    struct D(TaskKey, Fields, Vec<TaskKey>);

    #[async_trait::async_trait]
    impl Task<()> for D {
        fn key(&self) -> &TaskKey {
            &self.0
        }
        fn fields(&self) -> Fields {
            self.1.clone()
        }
        fn dependencies(&self) -> Vec<TaskKey> {
            self.2.clone()
        }
        async fn find(&self, _cx: &Context<'_, ()>) -> Result<Option<Found>> {
            Ok(None)
        }
        async fn apply(&self, _cx: &Context<'_, ()>, _change: &Change<'_>) -> Result<Outputs> {
            Ok(Outputs::new())
        }
    }

    fn boxed(tasks: Vec<D>) -> Vec<Box<dyn Task<()>>> {
        tasks
            .into_iter()
            .map(|t| Box::new(t) as Box<dyn Task<()>>)
            .collect()
    }

    #[test]
    fn references_resolve_whether_or_not_they_share_the_key() {
        let k = |kind: &str, name: &str| TaskKey::new(kind, name);
        let vpc = k("VPC", "main");
        let tasks = vec![
            // A reference holding a key made separately, and one holding a clone.
            D(
                k("Subnet", "a"),
                Fields::new().with("VPC", &k("VPC", "main")).with(
                    "Tags",
                    Value::Map([("x", Value::from(&vpc))].into_iter().collect()),
                ),
                vec![],
            ),
            D(
                k("Subnet", "b"),
                Fields::new().with("VPC", &vpc),
                vec![k("Subnet", "a")],
            ),
            D(vpc.clone(), Fields::new(), vec![]),
        ];
        let graph = TaskGraph::build(boxed(tasks)).unwrap();
        let at = |kind: &str, name: &str| graph.index_of(&k(kind, name)).unwrap();
        assert_eq!(graph.dependencies(at("Subnet", "a")), [at("VPC", "main")]);
        let mut b = vec![at("Subnet", "a"), at("VPC", "main")];
        b.sort();
        assert_eq!(graph.dependencies(at("Subnet", "b")), b.as_slice());
        assert_eq!(graph.dependents(at("VPC", "main")).len(), 2);
        let (a, vpc_at) = (at("Subnet", "a"), at("VPC", "main"));
        assert_eq!(graph.target_of(a, &vpc.to_ref()), Some(vpc_at));
        assert_eq!(graph.target_of(a, &k("VPC", "main").to_ref()), Some(vpc_at));
        assert_eq!(graph.target_of(vpc_at, &k("Subnet", "a").to_ref()), Some(a));
        assert_eq!(graph.target_of(a, &k("VPC", "none").to_ref()), None);
        assert!(graph.contains(&k("VPC", "main")));
        assert!(!graph.contains(&k("VPC", "other")));
        assert!(!graph.contains(&k("Subnet", "main")));
    }

    #[test]
    fn duplicates_and_unknown_references_are_named() {
        let k = |kind: &str, name: &str| TaskKey::new(kind, name);
        let dup = vec![
            D(k("VPC", "x"), Fields::new(), vec![]),
            D(k("Subnet", "x"), Fields::new(), vec![]),
            D(k("VPC", "x"), Fields::new(), vec![]),
        ];
        match TaskGraph::build(boxed(dup)) {
            Err(Error::DuplicateTask { key }) => assert_eq!(key, k("VPC", "x")),
            other => panic!("{other:?}"),
        }
        // Two unknown references: the one of the first task in key order is reported,
        // whether it is a field's or an extra dependency.
        let unknown = vec![
            D(
                k("VPC", "b"),
                Fields::new().with("R", &k("IGW", "gone")),
                vec![],
            ),
            D(k("Subnet", "a"), Fields::new(), vec![k("VPC", "missing")]),
            D(k("VPC", "a"), Fields::new(), vec![]),
        ];
        match TaskGraph::build(boxed(unknown)) {
            Err(Error::UnknownReference { from, to }) => {
                assert_eq!((from, to), (k("Subnet", "a"), k("VPC", "missing")));
            }
            other => panic!("{other:?}"),
        }
    }

    #[async_trait::async_trait]
    impl Task<()> for T {
        fn key(&self) -> &TaskKey {
            &self.0
        }
        fn fields(&self) -> Fields {
            self.1.clone()
        }
        async fn find(&self, _cx: &Context<'_, ()>) -> Result<Option<Found>> {
            Ok(None)
        }
        async fn apply(&self, _cx: &Context<'_, ()>, _change: &Change<'_>) -> Result<Outputs> {
            Ok(Outputs::new())
        }
    }

    /// A deterministic pseudo-random sequence.
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self, below: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) as usize) % below.max(1)
        }
    }

    #[test]
    fn key_order_sorts_by_kind_then_name() {
        // Names sharing long prefixes, shorter than, as long as and longer than the 16 bytes
        // compared in place, prefixes of each other, and kinds that are prefixes of others.
        // Once as they are, once with every name starting alike.
        for common in ["", "securitygroup-", "nodes-us-east-1a.masters."] {
            sorted_like_keys(common);
        }
    }

    fn sorted_like_keys(common: &str) {
        let mut rng = Lcg(7);
        let stems = ["", "a", "nodes-us-east-1a", "nodes-us-east-1a.", "é", "z"];
        let kinds = ["VPC", "VPCx", "Subnet", "S", "IAMRole"];
        let mut keys = Vec::new();
        for i in 0..600 {
            let stem = format!("{common}{}", stems[rng.next(stems.len())]);
            let tail = match rng.next(4) {
                0 => String::new(),
                1 => format!("{}", rng.next(50)),
                2 => format!("\0{}", rng.next(5)),
                _ => format!("-{i}.example.com"),
            };
            let name = format!("{stem}{tail}");
            let key = TaskKey::new(
                kinds[rng.next(kinds.len())],
                if name.is_empty() { "x" } else { &name },
            );
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        let tasks: Vec<Box<dyn Task<()>>> = keys
            .iter()
            .map(|k| Box::new(T(k.clone(), Fields::new())) as Box<dyn Task<()>>)
            .collect();
        let graph = TaskGraph::build(tasks).unwrap();
        // Nodes stay in the order given; the key order lists them sorted.
        let given: Vec<&TaskKey> = graph.nodes().iter().map(Node::key).collect();
        assert_eq!(given, keys.iter().collect::<Vec<_>>());
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(graph.index_of(k), Some(i));
        }
        keys.sort();
        let got: Vec<&TaskKey> = graph
            .in_key_order()
            .iter()
            .map(|&i| graph.nodes()[i].key())
            .collect();
        assert_eq!(got, keys.iter().collect::<Vec<_>>());
    }

    #[test]
    fn the_order_is_petgraphs_topological_sort() {
        // The order the executor starts tasks in did not change when the graph stopped
        // building a petgraph graph for every build.
        let mut rng = Lcg(11);
        for n in [1usize, 2, 5, 40, 300] {
            let keys: Vec<TaskKey> = (0..n)
                .map(|i| TaskKey::new(["A", "B", "C"][rng.next(3)], format!("t{i}")))
                .collect();
            let mut tasks: Vec<Box<dyn Task<()>>> = Vec::new();
            for (i, key) in keys.iter().enumerate() {
                let mut f = Fields::new();
                for d in 0..rng.next(4).min(i) {
                    f.insert(format!("R{d}"), Value::from(&keys[rng.next(i)]));
                }
                tasks.push(Box::new(T(key.clone(), f)));
            }
            let graph = TaskGraph::build(tasks).unwrap();
            let mut pg: DiGraph<(), ()> = DiGraph::new();
            for _ in 0..graph.len() {
                pg.add_node(());
            }
            for i in 0..graph.len() {
                for &j in graph.dependencies(i) {
                    pg.add_edge(NodeIndex::new(j), NodeIndex::new(i), ());
                }
            }
            let expected: Vec<usize> = petgraph::algo::toposort(&pg, None)
                .unwrap()
                .into_iter()
                .map(NodeIndex::index)
                .collect();
            assert_eq!(graph.topological_order(), expected.as_slice(), "n={n}");
        }
    }

    /// Every build of `tasks` (made by `make`) on 1 to 4 threads, checked to give one
    /// graph, or one error.
    fn on_every_thread_count<D: fmt::Debug>(
        make: impl Fn() -> Vec<Box<dyn Task<()>>>,
        check: impl Fn(&Result<TaskGraph<()>>) -> D,
    ) -> D {
        let one = check(&TaskGraph::build_on(
            make(),
            &LifecycleOverrides::default(),
            1,
        ));
        for threads in 2..=4 {
            let other = check(&TaskGraph::build_on(
                make(),
                &LifecycleOverrides::default(),
                threads,
            ));
            assert_eq!(
                format!("{one:?}"),
                format!("{other:?}"),
                "{threads} threads"
            );
        }
        one
    }

    /// What a built graph is: its nodes' keys, key order, edges and topological order.
    fn shape(graph: &Result<TaskGraph<()>>) -> String {
        let g = match graph {
            Ok(g) => g,
            Err(e) => return format!("error: {e:?}"),
        };
        let keys: Vec<String> = g.nodes().iter().map(|n| n.key().to_string()).collect();
        let edges: Vec<(&[usize], &[usize])> = (0..g.len())
            .map(|i| (g.dependencies(i), g.dependents(i)))
            .collect();
        format!(
            "{keys:?} {:?} {edges:?} {:?}",
            g.in_key_order(),
            g.topological_order()
        )
    }

    #[test]
    fn a_graph_built_on_several_threads_is_the_one_built_on_one() {
        // Names whose shared prefix differs between the runs the threads read (on 2 and 4
        // threads, the first runs hold names of one prefix and a later run names of
        // another, which the joined prefix must not keep), kinds that
        // appear in some runs only, references forwards and backwards, to keys made
        // separately, and explicit dependencies.
        let n = 701;
        let keys: Vec<TaskKey> = (0..n)
            .map(|i| match i {
                0..351 => TaskKey::new("Subnet", format!("nodes-us-east-1a.masters.{i}")),
                351..450 => TaskKey::new("Subnet", format!("zone-b.{i}")),
                450..500 => TaskKey::new("IAMRole", format!("r{}", n - i)),
                _ => TaskKey::new(["VPC", "SG", "S"][i % 3], format!("t{}", i * 7919 % 1000)),
            })
            .collect();
        let make = || {
            let mut rng = Lcg(9);
            keys.iter()
                .enumerate()
                .map(|(i, key)| {
                    let mut f = Fields::new();
                    for r in 0..rng.next(3) {
                        let to = &keys[rng.next(n)];
                        if to != key {
                            f.insert(
                                format!("R{r}"),
                                Value::from(&TaskKey::new(to.kind(), to.name())),
                            );
                        }
                    }
                    let extra = match i % 5 {
                        0 if i > 0 => vec![keys[rng.next(i)].clone()],
                        _ => vec![],
                    };
                    Box::new(D(key.clone(), f, extra)) as Box<dyn Task<()>>
                })
                .collect()
        };
        // A graph with cycles is rejected the same way on any number of threads; without
        // references to later tasks there is none, and the graph is the same.
        let cyclic = on_every_thread_count(make, shape);
        assert!(cyclic.starts_with("error: Cycle"), "{cyclic}");
        let make = || {
            keys.iter()
                .enumerate()
                .map(|(i, key)| {
                    let mut f = Fields::new();
                    for r in 0..rng_below(i, 3).min(i) {
                        let to = &keys[rng_below(i * 31 + r, i)];
                        f.insert(
                            format!("R{r}"),
                            Value::from(&TaskKey::new(to.kind(), to.name())),
                        );
                    }
                    let extra = match i % 5 {
                        0 if i > 0 => vec![keys[rng_below(i * 17, i)].clone()],
                        _ => vec![],
                    };
                    Box::new(D(key.clone(), f, extra)) as Box<dyn Task<()>>
                })
                .collect()
        };
        let built = on_every_thread_count(make, shape);
        let graph = TaskGraph::build_on(make(), &LifecycleOverrides::default(), 3).unwrap();
        let mut sorted = keys.clone();
        sorted.sort();
        let got: Vec<&TaskKey> = graph.in_key_order().iter().map(|&i| &keys[i]).collect();
        assert_eq!(got, sorted.iter().collect::<Vec<_>>());
        assert!(graph.deps.items.len() > n / 2, "{built}");
    }

    /// A fixed pseudo-random number below `below` (0 when `below` is 0) for `seed`.
    fn rng_below(seed: usize, below: usize) -> usize {
        let mut rng = Lcg(seed as u64 + 1);
        rng.next(below)
    }

    #[test]
    fn errors_across_the_threads_runs_are_those_of_one_thread() {
        let k = |kind: &str, name: &str| TaskKey::new(kind, name);
        let task = |key: TaskKey, refs: &[TaskKey]| {
            let mut f = Fields::new();
            for (r, to) in refs.iter().enumerate() {
                f.insert(format!("R{r}"), Value::from(to));
            }
            Box::new(D(key, f, vec![])) as Box<dyn Task<()>>
        };
        let filler = |from: usize| (from..from + 40).map(move |i| k("Subnet", &format!("s{i}")));
        // A duplicate: first and last task.
        let dup = || {
            let mut t = vec![task(k("VPC", "x"), &[])];
            t.extend(filler(0).map(|key| task(key, &[])));
            t.push(task(k("VPC", "x"), &[]));
            t
        };
        let e = on_every_thread_count(dup, shape);
        assert!(e.contains("DuplicateTask") && e.contains("VPC/x"), "{e}");
        // Unknown references in the first and the last run: the first in key order.
        let unknown = || {
            let mut t = vec![task(k("VPC", "b"), &[k("IGW", "gone")])];
            t.extend(filler(0).map(|key| task(key, &[])));
            t.push(task(k("IAMRole", "a"), &[k("VPC", "missing")]));
            t
        };
        let e = on_every_thread_count(unknown, shape);
        assert!(e.contains("IAMRole/a") && e.contains("VPC/missing"), "{e}");
        // A cycle through the first and the last run.
        let cycle = || {
            let mut t = vec![task(k("VPC", "a"), &[k("VPC", "z")])];
            t.extend(filler(0).map(|key| task(key, &[k("VPC", "a")])));
            t.push(task(k("VPC", "z"), &[k("Subnet", "s39")]));
            t
        };
        let e = on_every_thread_count(cycle, shape);
        assert!(e.starts_with("error: Cycle") && e.contains("VPC/z"), "{e}");
    }
}
