//! The task graph: tasks indexed by key, references resolved to edges, cycles rejected,
//! and a topological order computed once.

use std::collections::HashMap;
use std::fmt;

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::error::{Error, Result};
use crate::key::{KeyHashing, TaskKey};
use crate::lifecycle::{Lifecycle, LifecycleOverrides};
use crate::task::Task;
use crate::value::Fields;

/// One task in a built graph, with its cached expected fields and effective lifecycle.
pub struct Node<C: ?Sized + Sync> {
    pub(crate) task: Box<dyn Task<C>>,
    pub(crate) key: TaskKey,
    /// The expected fields, when the task does not hold them itself ([`Task::fields_ref`]).
    pub(crate) fields: Option<Fields>,
    pub(crate) lifecycle: Lifecycle,
}

/// What a node without fields shows (a task whose `fields_ref` stopped answering).
static NO_FIELDS: Fields = Fields::new();

impl<C: ?Sized + Sync> Node<C> {
    /// The task.
    pub fn task(&self) -> &dyn Task<C> {
        self.task.as_ref()
    }
    /// Its key.
    pub fn key(&self) -> &TaskKey {
        &self.key
    }
    /// Its expected fields (as returned by [`Task::fields`] at build time, or borrowed
    /// from the task through [`Task::fields_ref`]).
    pub fn fields(&self) -> &Fields {
        match &self.fields {
            Some(f) => f,
            None => self.task.fields_ref().unwrap_or(&NO_FIELDS),
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

/// A validated, acyclic graph of tasks. Nodes are stored sorted by key; node indices
/// (`usize`) refer to that order.
pub struct TaskGraph<C: ?Sized + Sync> {
    nodes: Vec<Node<C>>,
    index: HashMap<TaskKey, usize, KeyHashing>,
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
        // Each task's fields are taken in the order the tasks came in, which is usually
        // the order they lie in memory; then the nodes are sorted by key, the order plans
        // and renderers walk them in.
        let tasks: Vec<(Box<dyn Task<C>>, Option<Fields>)> = tasks
            .into_iter()
            .map(|t| {
                let fields = match t.fields_ref() {
                    Some(_) => None,
                    None => Some(t.fields()),
                };
                (t, fields)
            })
            .collect();
        let tasks = sorted_by_key(tasks, |(t, _)| t.key());
        let mut nodes = Vec::with_capacity(tasks.len());
        let mut index = HashMap::with_capacity_and_hasher(tasks.len(), KeyHashing::default());
        for (task, fields) in tasks {
            let key = task.key().clone();
            if index.insert(key.clone(), nodes.len()).is_some() {
                return Err(Error::DuplicateTask { key });
            }
            let lifecycle = overrides.resolve(key.kind(), task.lifecycle());
            nodes.push(Node {
                task,
                key,
                fields,
                lifecycle,
            });
        }

        let mut deps = Adjacency {
            start: Vec::with_capacity(nodes.len() + 1),
            items: Vec::with_capacity(nodes.len()),
        };
        // One node's dependencies at a time: its references, then the extra ones.
        let mut mine: Vec<usize> = Vec::new();
        let mut unknown = None;
        for node in &nodes {
            let lookup = |to: &TaskKey| match index.get(to) {
                Some(&j) => Ok(j),
                None => Err(Error::UnknownReference {
                    from: node.key.clone(),
                    to: to.clone(),
                }),
            };
            mine.clear();
            for v in node.fields().values() {
                v.for_each_ref(&mut |r| {
                    if unknown.is_none() {
                        match lookup(&r.key) {
                            Ok(j) => mine.push(j),
                            Err(e) => unknown = Some(e),
                        }
                    }
                });
            }
            if let Some(e) = unknown {
                return Err(e);
            }
            for k in node.task.dependencies() {
                mine.push(lookup(&k)?);
            }
            mine.sort_unstable();
            mine.dedup();
            deps.start.push(deps.items.len());
            deps.items.extend_from_slice(&mine);
        }
        deps.start.push(deps.items.len());
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
            index,
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

    /// All nodes, sorted by key.
    pub fn nodes(&self) -> &[Node<C>] {
        &self.nodes
    }

    /// The index of a task.
    pub fn index_of(&self, key: &TaskKey) -> Option<usize> {
        self.index.get(key).copied()
    }

    /// Whether a task with this key is in the graph.
    pub fn contains(&self, key: &TaskKey) -> bool {
        self.index.contains_key(key)
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

/// `items` sorted by their task keys. Keys order by kind, then name; the sort compares one
/// number per item, held in the array being sorted (its kind's rank, then the bytes of its
/// name that follow the prefix all names of its kind share), and reads the keys themselves
/// only when those numbers are equal.
fn sorted_by_key<T>(items: Vec<T>, key: impl Fn(&T) -> &TaskKey) -> Vec<T> {
    /// Bytes of the name held in the number, below the kind's rank (two bytes).
    const PREFIX: usize = 14;
    // Number the distinct kinds (a model has a few dozen), then rank them by name. Names
    // of one kind often start alike (`subnet-`, `nodes-us-east-1`): the bytes compared
    // start after the prefix all names of the kind share.
    let mut kinds: Vec<(&str, &[u8])> = Vec::new();
    let ids: Vec<usize> = items
        .iter()
        .map(|t| {
            let (kind, name) = (key(t).kind(), key(t).name().as_bytes());
            match kinds.iter().rposition(|(k, _)| *k == kind) {
                Some(id) => {
                    let shared = &mut kinds[id].1;
                    let same = shared.iter().zip(name).take_while(|(a, b)| a == b).count();
                    *shared = &shared[..same];
                    id
                }
                None => {
                    kinds.push((kind, name));
                    kinds.len() - 1
                }
            }
        })
        .collect();
    if kinds.len() > usize::from(u16::MAX) {
        // More kinds than the rank holds (no model has that many): compare the keys.
        let mut items = items;
        items.sort_by(|a, b| key(a).cmp(key(b)));
        return items;
    }
    let mut by_name: Vec<usize> = (0..kinds.len()).collect();
    by_name.sort_unstable_by_key(|&k| kinds[k].0);
    let mut rank = vec![0u128; kinds.len()];
    for (r, &k) in by_name.iter().enumerate() {
        rank[k] = (r as u128) << (8 * PREFIX);
    }
    let mut sort_keys: Vec<(u128, usize)> = items
        .iter()
        .zip(&ids)
        .enumerate()
        .map(|(i, (t, &id))| {
            let mut bytes = [0u8; 16];
            let name = key(t).name().as_bytes();
            let rest = name.get(kinds[id].1.len()..).unwrap_or_default();
            let len = rest.len().min(PREFIX);
            bytes[16 - PREFIX..16 - PREFIX + len].copy_from_slice(&rest[..len]);
            (rank[id] | u128::from_be_bytes(bytes), i)
        })
        .collect();
    // A zero-padded prefix orders like the name (a shorter name that is a prefix of a
    // longer one pads with zeros and sorts first, or ties), so only ties need the keys.
    sort_keys.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| key(&items[a.1]).cmp(key(&items[b.1])))
    });
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    sort_keys
        .iter()
        .filter_map(|&(_, i)| slots.get_mut(i).and_then(Option::take))
        .collect()
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
    fn nodes_are_sorted_by_kind_then_name() {
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
        keys.sort();
        let got: Vec<&TaskKey> = graph.nodes().iter().map(Node::key).collect();
        assert_eq!(got, keys.iter().collect::<Vec<_>>());
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(graph.index_of(k), Some(i));
        }
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
