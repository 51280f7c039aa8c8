//! The task graph: tasks indexed by key, references resolved to edges, cycles rejected,
//! and a topological order computed once.

use std::fmt;
use std::sync::{Arc, OnceLock};

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
    pub fn build_with(
        tasks: Vec<Box<dyn Task<C>>>,
        overrides: &LifecycleOverrides,
    ) -> Result<Self> {
        let n = tasks.len();
        // One pass over the tasks in the order they came in, which is usually the order
        // they lie in memory: each task's key, fields, lifecycle and the identities of
        // the keys its fields refer to are read here, and nowhere else in the common case.
        let mut entries: Vec<Node<C>> = Vec::with_capacity(n);
        let mut ids: Vec<KeyId> = Vec::with_capacity(n);
        // Cloned here, while the key is at hand, for the key table.
        let mut keys: Vec<TaskKey> = Vec::with_capacity(n);
        let mut sorter = KeySorter::with_capacity(n);
        let mut refs: Vec<KeyId> = Vec::with_capacity(n);
        let mut ref_start: Vec<usize> = Vec::with_capacity(n + 1);
        let mut extra: Vec<(usize, TaskKey)> = Vec::new();
        let mut tasks = tasks.into_iter().peekable();
        let mut group: Vec<Box<dyn Task<C>>> = Vec::with_capacity(GROUP);
        while tasks.peek().is_some() {
            group.extend(tasks.by_ref().take(GROUP));
            // First what the group's keys are, read without writing them, so that the
            // reads of neighbouring tasks wait for memory together; then the clones,
            // whose counts are written where the reads brought them.
            for task in &group {
                let key = task.key();
                ids.push(KeyId::of(key));
                sorter.push(key);
            }
            for task in group.drain(..) {
                let key = task.key().clone();
                keys.push(key.clone());
                let lifecycle = overrides.resolve(key.kind(), task.lifecycle());
                ref_start.push(refs.len());
                let node = Node {
                    task,
                    key,
                    fields: OnceLock::new(),
                    lifecycle,
                };
                node.for_each_ref(&mut |r| refs.push(KeyId::of(&r.key)));
                for k in node.task.dependencies() {
                    extra.push((entries.len(), k));
                }
                entries.push(node);
            }
        }
        ref_start.push(refs.len());

        // The nodes' order (sorted by key), and a duplicate key: equal keys end up next to
        // each other.
        let perm = sorter.sorted(
            |a, b| entries[a].key.cmp(&entries[b].key),
            |i| entries[i].key.name(),
        );
        if let Some(w) = perm
            .windows(2)
            .find(|w| ids[w[0]].hash == ids[w[1]].hash && entries[w[0]].key == entries[w[1]].key)
        {
            return Err(Error::DuplicateTask {
                key: entries[w[1]].key.clone(),
            });
        }
        // Each node's position in key order (to report the first unknown reference as a
        // walk in key order meets it).
        let mut rank = vec![0usize; n];
        for (j, &i) in perm.iter().enumerate() {
            rank[i] = j;
        }
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
        // The first unknown reference in key order (as a walk of the sorted nodes meets
        // it): (position in key order, error).
        let mut unknown: Option<(usize, Error)> = None;
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
                if unknown.as_ref().is_none_or(|(at, _)| rank[i] < *at) {
                    let e = Error::UnknownReference {
                        from: node.key.clone(),
                        to,
                    };
                    unknown = Some((rank[i], e));
                }
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
        if let Some((_, e)) = unknown {
            return Err(e);
        }
        let nodes = entries;
        let dependents = deps.reversed();

        let order = match topological_order(&deps, &dependents) {
            Some(order) => order,
            None => {
                return Err(Error::Cycle {
                    tasks: first_cycle(&nodes, &deps),
                });
            }
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
}
