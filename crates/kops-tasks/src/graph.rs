//! The task graph: tasks indexed by key, references resolved to edges, cycles rejected,
//! and a topological order computed once.

use std::collections::HashMap;
use std::fmt;

use petgraph::algo::{tarjan_scc, toposort};
use petgraph::graph::{DiGraph, NodeIndex};

use crate::error::{Error, Result};
use crate::found::Expected;
use crate::key::{KeyBuildHasher, TaskKey};
use crate::lifecycle::{Lifecycle, LifecycleOverrides};
use crate::task::Task;
use crate::value::Fields;

/// One task in a built graph, with its cached expected fields and effective lifecycle.
pub struct Node<C: ?Sized + Sync> {
    pub(crate) task: Box<dyn Task<C>>,
    pub(crate) key: TaskKey,
    pub(crate) fields: Fields,
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
    /// Its expected fields (as returned by [`Task::fields`] at build time).
    pub fn fields(&self) -> &Fields {
        &self.fields
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
    index: HashMap<TaskKey, usize, KeyBuildHasher>,
    /// Every reference in the nodes' expected fields, resolved at build time: node `i`'s
    /// references are `refs[ref_start[i]..ref_start[i + 1]]`, each the address of the
    /// referenced key's text ([`TaskKey::addr`]) and the referenced node's index. The diff
    /// resolves the graph's own references through this instead of a map lookup.
    refs: Vec<(usize, usize)>,
    ref_start: Vec<usize>,
    /// The expected fields again, encoded for [`crate::Plan::from_found`].
    expected: Expected,
    deps: Vec<Vec<usize>>,
    dependents: Vec<Vec<usize>>,
    order: Vec<usize>,
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
        // Nodes are stored sorted by key: plans and renderers walk them in that order, and
        // the cached fields are then laid out in memory in the same order.
        let mut tasks = tasks;
        tasks.sort_by_cached_key(|t| t.key().clone());
        let mut nodes = Vec::with_capacity(tasks.len());
        let mut index = HashMap::with_capacity_and_hasher(tasks.len(), KeyBuildHasher::default());
        // The nodes' keys are copied into allocations of their own, made one after another
        // in node order: plan items clone and drop them (an atomic count each) while walking
        // the nodes, so they should lie in memory in that order, next to each other.
        let keys: Vec<TaskKey> = tasks.iter().map(|t| t.key().detached()).collect();
        for (task, key) in tasks.into_iter().zip(keys) {
            if index.insert(key.clone(), nodes.len()).is_some() {
                return Err(Error::DuplicateTask { key });
            }
            let fields = task.fields();
            let lifecycle = overrides.resolve(key.kind(), task.lifecycle());
            nodes.push(Node {
                task,
                key,
                fields,
                lifecycle,
            });
        }

        let mut refs: Vec<(usize, usize)> = Vec::new();
        let mut expected = Expected::default();
        let mut ref_start: Vec<usize> = Vec::with_capacity(nodes.len() + 1);
        let mut deps: Vec<Vec<usize>> = Vec::with_capacity(nodes.len());
        let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        let mut graph: DiGraph<(), ()> = DiGraph::with_capacity(nodes.len(), nodes.len());
        for _ in 0..nodes.len() {
            graph.add_node(());
        }
        for (i, node) in nodes.iter().enumerate() {
            let mut mine = Vec::new();
            let lookup = |to: &TaskKey| -> Result<usize> {
                index
                    .get(to)
                    .copied()
                    .ok_or_else(|| Error::UnknownReference {
                        from: node.key.clone(),
                        to: to.clone(),
                    })
            };
            let first = refs.len();
            ref_start.push(first);
            for r in node.fields.refs() {
                let j = lookup(&r.key)?;
                refs.push((r.key.addr(), j));
                mine.push(j);
            }
            let own = refs.get(first..).unwrap_or_default();
            expected.push(&node.fields, |r| {
                let addr = r.key.addr();
                own.iter().find(|(a, _)| *a == addr).map(|&(_, j)| j)
            })?;
            for k in node.task.dependencies() {
                mine.push(lookup(&k)?);
            }
            mine.sort_unstable();
            mine.dedup();
            for &j in &mine {
                graph.add_edge(NodeIndex::new(j), NodeIndex::new(i), ());
                dependents[j].push(i);
            }
            deps.push(mine);
        }
        ref_start.push(refs.len());

        let order = match toposort(&graph, None) {
            Ok(order) => order.into_iter().map(NodeIndex::index).collect(),
            Err(_) => {
                let mut cycles: Vec<Vec<TaskKey>> = tarjan_scc(&graph)
                    .into_iter()
                    .filter(|scc| {
                        scc.len() > 1 || scc.iter().any(|n| deps[n.index()].contains(&n.index()))
                    })
                    .map(|scc| {
                        let mut keys: Vec<TaskKey> =
                            scc.iter().map(|n| nodes[n.index()].key.clone()).collect();
                        keys.sort();
                        keys
                    })
                    .collect();
                cycles.sort();
                return Err(Error::Cycle {
                    tasks: cycles.into_iter().next().unwrap_or_default(),
                });
            }
        };

        Ok(TaskGraph {
            nodes,
            index,
            refs,
            ref_start,
            expected,
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

    /// The references in node `i`'s expected fields, resolved when the graph was built:
    /// `(address of the referenced key's text, referenced node index)`.
    pub(crate) fn resolved_refs(&self, i: usize) -> &[(usize, usize)] {
        match (self.ref_start.get(i), self.ref_start.get(i + 1)) {
            (Some(&a), Some(&b)) => self.refs.get(a..b).unwrap_or_default(),
            _ => &[],
        }
    }

    /// The expected fields in arena form.
    pub(crate) fn expected(&self) -> &Expected {
        &self.expected
    }

    /// The key -> node index map.
    pub(crate) fn index_map(&self) -> &HashMap<TaskKey, usize, KeyBuildHasher> {
        &self.index
    }

    /// Direct dependencies of a node.
    pub fn dependencies(&self, i: usize) -> &[usize] {
        self.deps.get(i).map_or(&[], Vec::as_slice)
    }

    /// Direct dependents of a node.
    pub fn dependents(&self, i: usize) -> &[usize] {
        self.dependents.get(i).map_or(&[], Vec::as_slice)
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
            let l = self.deps[i]
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
