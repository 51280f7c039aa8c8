//! The plan: what would happen to every task, as a typed, serialisable value, with a
//! human-readable printer (kOps' dry run) and JSON output.
//!
//! # Exit codes
//!
//! Callers that turn a plan into a process exit status should use [`Plan::exit_code`]:
//! [`EXIT_NO_CHANGES`] (0) when nothing would change, [`EXIT_CHANGES_PENDING`] (2) when
//! something would be created, modified or deleted, and [`EXIT_ERROR`] (1) when planning
//! failed. Drift in objects owned by another phase (lifecycle `ExistsAndWarnIfChanges`) is
//! reported but is not a pending change.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::{self, Write as _};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::diff::{FieldChange, Resolver, diff_fields_with};
use crate::error::{Error, Result};
use crate::found::{FoundSet, SEGMENT};
use crate::graph::TaskGraph;
use crate::key::{TaskKey, TaskRef};
use crate::lifecycle::Lifecycle;
use crate::task::{Found, OwnedObject};
use crate::value::{Fields, Sensitive, Value};

/// Exit code: nothing to change.
pub const EXIT_NO_CHANGES: i32 = 0;
/// Exit code: planning or applying failed.
pub const EXIT_ERROR: i32 = 1;
/// Exit code: changes are pending.
pub const EXIT_CHANGES_PENDING: i32 = 2;

/// What will happen (or happened) to one task or owned object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Action {
    /// The object does not exist and will be created.
    Create,
    /// The object exists and some fields will be changed.
    Update,
    /// The object exists and matches.
    Unchanged,
    /// The task's lifecycle is `Ignore`.
    Ignored,
    /// The object is owned by another phase and differs (or is missing); it is reported,
    /// not changed.
    Drift,
    /// An owned object no task describes any more will be deleted.
    Delete,
}

impl Action {
    /// Whether this action changes the cloud.
    pub fn is_change(self) -> bool {
        matches!(self, Action::Create | Action::Update | Action::Delete)
    }
}

/// The plan for one task or owned object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanItem {
    /// The task (or, for a deletion, the key of the owned object).
    pub key: TaskKey,
    /// What will happen.
    pub action: Action,
    /// Why, in words.
    pub reason: Cow<'static, str>,
    /// The task's effective lifecycle.
    #[serde(default, skip_serializing_if = "is_sync")]
    pub lifecycle: Lifecycle,
    /// Changed fields (on create: every non-null expected field, with no old value).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<FieldChange>,
    /// For deletions: the cloud ID of the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// For deletions: only performed when deferred deletions are allowed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deferred: bool,
}

fn is_sync(l: &Lifecycle) -> bool {
    *l == Lifecycle::Sync
}

impl PlanItem {
    fn new(key: TaskKey, action: Action, reason: impl Into<Cow<'static, str>>) -> Self {
        PlanItem {
            key,
            action,
            reason: reason.into(),
            lifecycle: Lifecycle::Sync,
            changes: Vec::new(),
            id: None,
            deferred: false,
        }
    }
}

/// Counts of each action in a plan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Objects to create.
    pub create: usize,
    /// Objects to modify.
    pub update: usize,
    /// Objects to delete.
    pub delete: usize,
    /// Objects that match.
    pub unchanged: usize,
    /// Tasks skipped by lifecycle `Ignore`.
    pub ignored: usize,
    /// Objects from another phase that differ.
    pub drift: usize,
}

/// The plan for a whole graph: one item per task (sorted by key) plus deletions.
///
/// A plan of many thousands of items is freed in parallel when dropped (see its `Drop`), so
/// its fields cannot be moved out by destructuring; take them with [`std::mem::take`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Every item, sorted by key (deletions last).
    pub items: Vec<PlanItem>,
    /// Warnings raised while planning (e.g. lookups skipped for lack of access).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Plan {
    /// A plan from items (sorted here: tasks by key, then deletions by key).
    pub fn new(mut items: Vec<PlanItem>, warnings: Vec<String>) -> Self {
        let order = |a: &PlanItem, b: &PlanItem| {
            (a.action == Action::Delete, &a.key).cmp(&(b.action == Action::Delete, &b.key))
        };
        if !items.is_sorted_by(|a, b| order(a, b).is_le()) {
            items.sort_by(order);
        }
        Plan { items, warnings }
    }

    /// Plans a graph against a known actual state (no cloud calls): `actual` maps a task key
    /// to the object found for it; references resolve through the found objects' outputs.
    /// As in [`crate::Executor::plan`], every pending create or update is validated with
    /// [`crate::Task::check_changes`]. Lifecycle violations and rejected changes are all
    /// reported in one [`Error::Failed`].
    ///
    /// Large graphs (thousands of tasks) are planned on rayon's global thread pool; the
    /// result does not depend on how many threads were used.
    pub fn from_state<C: ?Sized + Sync>(
        graph: &TaskGraph<C>,
        actual: &HashMap<TaskKey, Found>,
    ) -> Result<Plan> {
        let n = graph.len();
        let found = join_state(graph, actual);
        // The `id` output of every found object, gathered up front so the diff's reference
        // lookups do not each chase a found object's outputs.
        fn id_of<'a>(f: &Option<&'a Found>) -> Option<&'a str> {
            f.and_then(|f| f.outputs.get(TaskRef::ID))
        }
        let ids: Vec<Option<&str>> = if in_parallel(n) {
            let mut ids = Vec::with_capacity(n);
            found
                .par_iter()
                .with_min_len(TASKS_PER_THREAD)
                .map(id_of)
                .collect_into_vec(&mut ids);
            ids
        } else {
            found.iter().map(id_of).collect()
        };
        let state = StatePlanner {
            graph,
            found: &found,
            ids: &ids,
            actual,
        };
        plan_nodes(
            n,
            || ((Vec::new(), Vec::new()), 0),
            |(levels, ahead), i| {
                // Read ahead one block of nodes at a time (each rayon job runs a contiguous,
                // ascending range of nodes with its own state).
                if i >= *ahead {
                    let block = i..(i + WARM_BLOCK).min(n);
                    *ahead = block.end;
                    state.warm(block, levels);
                }
                state.plan_node(i)
            },
        )
    }

    /// Plans a graph against the actual state in a [`FoundSet`] (objects stored by graph
    /// node in a compact arena, filled as they are listed): the same plan as
    /// [`Plan::from_state`] gives for the same objects, computed with far fewer memory
    /// accesses on large graphs. Every task's expected fields are compared field by field
    /// with its found object, pending creates and updates are validated with
    /// [`crate::Task::check_changes`], and lifecycle violations and rejected changes are
    /// all reported in one [`Error::Failed`].
    ///
    /// Filling a `FoundSet` costs more than filling the map `from_state` takes (it copies
    /// and indexes every value), so for a single plan `from_state` is cheaper in all; the
    /// set pays off when the same objects are planned against more than once. Large graphs
    /// are planned on rayon's global thread pool.
    pub fn from_found<C: ?Sized + Sync>(found: &FoundSet<'_, C>) -> Result<Plan> {
        let n = found.graph().len();
        plan_nodes(
            n,
            || (None, 0),
            |(swept, ahead), i| {
                // As in `from_state`: read ahead per block, and sweep each segment once.
                if i >= *ahead {
                    let block = i..(i + WARM_BLOCK).min(n);
                    *ahead = block.end;
                    for seg in [block.start / SEGMENT, (block.end - 1) / SEGMENT] {
                        if *swept < Some(seg) {
                            std::hint::black_box(found.warm_segment(seg));
                            *swept = Some(seg);
                        }
                    }
                    std::hint::black_box(found.warm(block));
                }
                found_node(found, i)
            },
        )
    }

    /// Adds a deletion for every owned object whose key no task in `graph` has.
    pub fn add_orphans<C: ?Sized + Sync>(&mut self, graph: &TaskGraph<C>, owned: &[OwnedObject]) {
        for o in owned.iter().filter(|o| !graph.contains(&o.key)) {
            let mut item = PlanItem::new(
                o.key.clone(),
                Action::Delete,
                "owned by the cluster but no longer described by any task",
            );
            item.id = Some(o.id.clone());
            item.deferred = o.deferred;
            if !o.description.is_empty() {
                item.reason = format!("{}; {}", o.description, item.reason).into();
            }
            self.items.push(item);
        }
        let items = std::mem::take(&mut self.items);
        *self = Plan::new(items, std::mem::take(&mut self.warnings));
    }

    /// Counts of each action.
    pub fn summary(&self) -> Summary {
        let mut s = Summary::default();
        for i in &self.items {
            match i.action {
                Action::Create => s.create += 1,
                Action::Update => s.update += 1,
                Action::Delete => s.delete += 1,
                Action::Unchanged => s.unchanged += 1,
                Action::Ignored => s.ignored += 1,
                Action::Drift => s.drift += 1,
            }
        }
        s
    }

    /// Whether anything would be created, modified or deleted.
    pub fn has_changes(&self) -> bool {
        self.items.iter().any(|i| i.action.is_change())
    }

    /// The process exit code for this plan: [`EXIT_CHANGES_PENDING`] or [`EXIT_NO_CHANGES`].
    pub fn exit_code(&self) -> i32 {
        if self.has_changes() {
            EXIT_CHANGES_PENDING
        } else {
            EXIT_NO_CHANGES
        }
    }

    /// The items that change something.
    pub fn changes(&self) -> impl Iterator<Item = &PlanItem> {
        self.items.iter().filter(|i| i.action.is_change())
    }

    /// The plan as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        // Serialising these plain data types cannot fail (string keys, no non-finite floats).
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The human-readable report (same as `Display`).
    pub fn render_text(&self) -> String {
        self.to_string()
    }
}

impl Drop for Plan {
    /// A large plan (thousands of items) is freed on rayon's pool, a share per thread, like
    /// it was planned: the items and their changes are then mostly freed by the threads that
    /// allocated them, and in parallel.
    fn drop(&mut self) {
        if in_parallel(self.items.len()) {
            std::mem::take(&mut self.items)
                .into_par_iter()
                .with_min_len(TASKS_PER_THREAD)
                .for_each(drop);
        }
    }
}

/// Decides what to do with one task given what was found.
pub(crate) fn evaluate<R: Resolver + ?Sized>(
    key: &TaskKey,
    lifecycle: Lifecycle,
    expected: &Fields,
    found: Option<&Found>,
    resolver: &R,
) -> Result<PlanItem> {
    if lifecycle == Lifecycle::Ignore {
        return Ok(ignored(key));
    }
    let changes = diff_fields_with(expected, found.map(|f| &f.fields), resolver);
    decide(key, lifecycle, found.is_some(), changes)
}

/// The item of a task whose lifecycle is `Ignore`.
fn ignored(key: &TaskKey) -> PlanItem {
    let mut item = PlanItem::new(key.clone(), Action::Ignored, "lifecycle is Ignore");
    item.lifecycle = Lifecycle::Ignore;
    item
}

/// The item of a (not ignored) task, given whether its object was found and the changes
/// its fields need.
fn decide(
    key: &TaskKey,
    lifecycle: Lifecycle,
    found: bool,
    changes: Vec<FieldChange>,
) -> Result<PlanItem> {
    let mut item = PlanItem::new(key.clone(), Action::Unchanged, "");
    item.lifecycle = lifecycle;
    match (found, lifecycle) {
        (false, Lifecycle::ExistsAndValidates) => {
            return Err(Error::Lifecycle {
                key: key.clone(),
                message: "must already exist (lifecycle ExistsAndValidates) but was not found"
                    .into(),
            });
        }
        (false, Lifecycle::ExistsAndWarnIfChanges) => {
            item.action = Action::Drift;
            item.reason = "expected to exist (lifecycle ExistsAndWarnIfChanges) but was not found; not created".into();
        }
        (false, _) => {
            item.action = Action::Create;
            item.reason = "not found".into();
        }
        (true, _) if changes.is_empty() => {
            item.reason = "matches".into();
        }
        (true, Lifecycle::ExistsAndValidates) => {
            let names: Vec<&str> = changes.iter().map(|c| c.field.as_str()).collect();
            return Err(Error::Lifecycle {
                key: key.clone(),
                message: format!(
                    "object from another phase does not match (lifecycle ExistsAndValidates); differing fields: {}",
                    names.join(", ")
                ),
            });
        }
        (true, Lifecycle::ExistsAndWarnIfChanges) => {
            item.action = Action::Drift;
            item.reason = format!(
                "{} field(s) differ; not changed (lifecycle ExistsAndWarnIfChanges)",
                changes.len()
            )
            .into();
        }
        (true, _) => {
            item.action = Action::Update;
            item.reason = differ_reason(changes.len());
        }
    }
    item.changes = changes;
    Ok(item)
}

/// The reason of an update: `N field(s) differ` (static for the usual small counts).
fn differ_reason(n: usize) -> Cow<'static, str> {
    const SMALL: [&str; 8] = [
        "0 field(s) differ",
        "1 field(s) differ",
        "2 field(s) differ",
        "3 field(s) differ",
        "4 field(s) differ",
        "5 field(s) differ",
        "6 field(s) differ",
        "7 field(s) differ",
    ];
    match SMALL.get(n) {
        Some(s) => Cow::Borrowed(s),
        None => format!("{n} field(s) differ").into(),
    }
}

/// Graphs smaller than this are planned on the calling thread: handing work to other
/// threads costs tens of microseconds, about the time planning a few hundred tasks takes.
/// It is also the smallest share of a larger graph one thread takes.
const TASKS_PER_THREAD: usize = 4096;

/// Whether `n` tasks are planned on rayon's thread pool.
fn in_parallel(n: usize) -> bool {
    n >= 2 * TASKS_PER_THREAD && rayon::current_num_threads() > 1
}

/// A task that could not be planned, with why.
type Failure = (TaskKey, Error);

/// Plans nodes `0..n` with `plan_one`, in parallel for large graphs. Each thread plans
/// contiguous, ascending ranges of nodes with its own state from `init`, and writes their
/// items straight into their places in the plan (no per-thread vectors to join). Items
/// come out in node order, which is key order.
fn plan_nodes<S, I, F>(n: usize, init: I, plan_one: F) -> Result<Plan>
where
    I: Fn() -> S + Sync + Send,
    F: Fn(&mut S, usize) -> std::result::Result<PlanItem, Failure> + Sync + Send,
{
    let failures = std::sync::Mutex::new(Vec::new());
    let one = |state: &mut S, i: usize| {
        plan_one(state, i).unwrap_or_else(|(key, e)| {
            // The plan is discarded when anything failed; the slot only keeps the order.
            let item = PlanItem::new(key.clone(), Action::Unchanged, "");
            failures
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push((key, e));
            item
        })
    };
    let mut items = Vec::with_capacity(n);
    if in_parallel(n) {
        (0..n)
            .into_par_iter()
            .with_min_len(TASKS_PER_THREAD)
            .map_init(&init, one)
            .collect_into_vec(&mut items);
    } else {
        let mut state = init();
        items.extend((0..n).map(|i| one(&mut state, i)));
    }
    let mut failures = failures
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if failures.is_empty() {
        // Graph nodes are stored sorted by key, so the items already are.
        Ok(Plan {
            items,
            warnings: Vec::new(),
        })
    } else {
        failures.sort_by(|a, b| a.0.cmp(&b.0));
        Err(Error::Failed { failures })
    }
}

/// Plans node `i` against a [`FoundSet`].
fn found_node<C: ?Sized + Sync>(
    found: &FoundSet<'_, C>,
    i: usize,
) -> std::result::Result<PlanItem, Failure> {
    let Some(node) = found.graph().node(i) else {
        return Err((
            TaskKey::new("node", i.to_string()),
            Error::invalid("plan", "node index out of range"),
        ));
    };
    if node.lifecycle() == Lifecycle::Ignore {
        return Ok(ignored(node.key()));
    }
    let changes = found.diff_node(i);
    if changes.is_empty() && found.is_found(i) {
        // The common case, built in place: the object exists and matches.
        return Ok(PlanItem {
            key: node.key().clone(),
            action: Action::Unchanged,
            reason: Cow::Borrowed("matches"),
            lifecycle: node.lifecycle(),
            changes,
            id: None,
            deferred: false,
        });
    }
    decide(node.key(), node.lifecycle(), found.is_found(i), changes)
        .and_then(|item| {
            if matches!(item.action, Action::Create | Action::Update) {
                node.task()
                    .check_changes(found.found_at(i), &item.changes)?;
            }
            Ok(item)
        })
        .map_err(|e| (node.key().clone(), e))
}

/// For every graph node, the object found for it in `actual`.
fn join_state<'a, C: ?Sized + Sync>(
    graph: &TaskGraph<C>,
    actual: &'a HashMap<TaskKey, Found>,
) -> Vec<Option<&'a Found>> {
    let mut found = vec![None; graph.len()];
    if actual.len() <= graph.len().saturating_mul(2) {
        // Walk the found objects (a sequential scan) and place each through the graph's
        // own index, whose hasher reuses the key's cached hash.
        let index = graph.index_map();
        for (key, f) in actual {
            if let Some(slot) = index.get(key).and_then(|&i| found.get_mut(i)) {
                *slot = Some(f);
            }
        }
    } else {
        for (slot, node) in found.iter_mut().zip(graph.nodes()) {
            *slot = actual.get(node.key());
        }
    }
    found
}

/// Nodes whose data [`StatePlanner::warm`] reads ahead at a time: enough for many
/// outstanding cache misses, few enough that the data is still cached when it is diffed.
const WARM_BLOCK: usize = 32;

/// Shared, read-only state of one [`Plan::from_state`] run.
struct StatePlanner<'a, C: ?Sized + Sync> {
    graph: &'a TaskGraph<C>,
    /// The found object of each node.
    found: &'a [Option<&'a Found>],
    /// The `id` output of each node's found object.
    ids: &'a [Option<&'a str>],
    actual: &'a HashMap<TaskKey, Found>,
}

impl<C: ?Sized + Sync> StatePlanner<'_, C> {
    /// Reads the actual state the diff of nodes `block` will compare (found fields, the
    /// strings and containers inside them, the referenced objects' IDs) one nesting level
    /// at a time across the whole block. That state is a tree of small heap objects
    /// scattered in memory; walking one level of many nodes at once lets the processor
    /// overlap the cache misses, which the comparison, one node after another, cannot.
    /// (The expected fields need no warming: the graph allocated them in node order, so
    /// the hardware prefetcher already streams them.)
    fn warm<'a>(
        &'a self,
        block: std::ops::Range<usize>,
        levels: &mut (Vec<&'a Value>, Vec<&'a Value>),
    ) {
        let (cur, next) = levels;
        cur.clear();
        let mut acc = 0u8;
        for i in block {
            if let Some(f) = self.found.get(i).copied().flatten() {
                cur.extend(f.fields.values());
            }
            for &(_, target) in self.graph.resolved_refs(i) {
                if let Some(id) = self.ids.get(target).copied().flatten() {
                    acc ^= id.as_bytes().first().copied().unwrap_or(0);
                }
            }
        }
        while !cur.is_empty() {
            next.clear();
            for v in cur.iter() {
                acc ^= v.touch(next);
            }
            std::mem::swap(cur, next);
        }
        std::hint::black_box(acc);
    }

    /// Plans node `i`.
    fn plan_node(&self, i: usize) -> std::result::Result<PlanItem, Failure> {
        let Some(node) = self.graph.node(i) else {
            return Err((
                TaskKey::new("node", i.to_string()),
                Error::invalid("plan", "node index out of range"),
            ));
        };
        let found = self.found.get(i).copied().flatten();
        let resolver = NodeResolver {
            refs: self.graph.resolved_refs(i),
            found: self.found,
            ids: self.ids,
            actual: self.actual,
        };
        evaluate(
            node.key(),
            node.lifecycle(),
            node.fields(),
            found,
            &resolver,
        )
        .and_then(|item| {
            if matches!(item.action, Action::Create | Action::Update) {
                node.task().check_changes(found, &item.changes)?;
            }
            Ok(item)
        })
        .map_err(|e| (node.key().clone(), e))
    }
}

/// Resolves references while diffing one node: the node's own references through the
/// indices resolved when the graph was built, anything else (references in the actual
/// state) through the actual-state map.
struct NodeResolver<'a> {
    refs: &'a [(usize, usize)],
    found: &'a [Option<&'a Found>],
    ids: &'a [Option<&'a str>],
    actual: &'a HashMap<TaskKey, Found>,
}

impl Resolver for NodeResolver<'_> {
    fn resolve(&self, r: &TaskRef) -> Option<&str> {
        let addr = r.key.addr();
        match self.refs.iter().find(|(a, _)| *a == addr) {
            Some(&(_, target)) if r.attr == TaskRef::ID => self.ids.get(target).copied().flatten(),
            Some(&(_, target)) => self
                .found
                .get(target)
                .copied()
                .flatten()
                .and_then(|f| f.outputs.get(&r.attr)),
            None => self.actual.resolve(r),
        }
    }
}

const FIELD_WIDTH: usize = 20;

fn write_value_block(out: &mut String, text: &str) {
    for line in text.lines() {
        let _ = writeln!(out, "      {:FIELD_WIDTH$}    {line}", "");
    }
}

fn is_multiline(v: &Value) -> bool {
    matches!(v, Value::Text(t) | Value::String(t) if t.contains('\n'))
}

fn write_change(out: &mut String, c: &FieldChange, create: bool) {
    let name = &c.field;
    if create {
        if is_multiline(&c.new) {
            let lines = c.new.to_string().lines().count();
            let _ = writeln!(out, "      {name:FIELD_WIDTH$}  ({lines} lines)");
            write_value_block(out, &c.new.to_string());
        } else {
            let _ = writeln!(out, "      {name:FIELD_WIDTH$}  {}", c.new);
        }
        return;
    }
    if let Some(diff) = &c.diff {
        let _ = writeln!(out, "      {name:FIELD_WIDTH$}  (text changed)");
        write_value_block(out, diff);
        return;
    }
    let old = c
        .old
        .as_ref()
        .map_or_else(|| "<none>".to_owned(), ToString::to_string);
    if let (Some(Value::Map(before)), Value::Map(after)) = (&c.old, &c.new) {
        let _ = writeln!(out, "      {name:FIELD_WIDTH$}  (map changed)");
        let mut lines = String::new();
        for (k, v) in after.iter() {
            match before.get(k) {
                None => {
                    let _ = writeln!(lines, "+ {k}: {v}");
                }
                Some(b) if b != v => {
                    let _ = writeln!(lines, "~ {k}: {b} -> {v}");
                }
                Some(_) => {}
            }
        }
        for (k, b) in before.iter().filter(|(k, _)| !after.contains_key(k)) {
            let _ = writeln!(lines, "- {k}: {b}");
        }
        write_value_block(out, &lines);
        return;
    }
    if matches!(c.new, Value::Sensitive(_)) {
        let _ = writeln!(
            out,
            "      {name:FIELD_WIDTH$}  {} (changed)",
            Sensitive::MASK
        );
    } else if is_multiline(&c.new) || c.old.as_ref().is_some_and(is_multiline) {
        let _ = writeln!(out, "      {name:FIELD_WIDTH$}  (text changed)");
        write_value_block(out, &crate::diff::text_diff(&old, &c.new.to_string()));
    } else {
        let _ = writeln!(out, "      {name:FIELD_WIDTH$}  {old} -> {}", c.new);
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        let section = |out: &mut String, title: &str, pred: &dyn Fn(&PlanItem) -> bool| {
            let mut any = false;
            for item in self.items.iter().filter(|i| pred(i)) {
                if !any {
                    let _ = writeln!(out, "{title}");
                    any = true;
                }
                match item.action {
                    Action::Create => {
                        let _ = writeln!(out, "  {}", item.key);
                    }
                    Action::Delete => {
                        let _ =
                            writeln!(out, "  {}  {}", item.key, item.id.as_deref().unwrap_or(""));
                        let _ = writeln!(out, "      reason: {}", item.reason);
                    }
                    _ => {
                        let _ = writeln!(out, "  {}  ({})", item.key, item.reason);
                    }
                }
                for c in &item.changes {
                    write_change(out, c, c.old.is_none() && item.action != Action::Update);
                }
                out.push('\n');
            }
        };
        section(&mut out, "Will create resources:", &|i| {
            i.action == Action::Create
        });
        section(&mut out, "Will modify resources:", &|i| {
            i.action == Action::Update
        });
        section(&mut out, "Will delete resources:", &|i| {
            i.action == Action::Delete && !i.deferred
        });
        section(
            &mut out,
            "Will delete only when deferred deletions are allowed (--prune):",
            &|i| i.action == Action::Delete && i.deferred,
        );
        section(
            &mut out,
            "Objects from another phase differ and will not be changed:",
            &|i| i.action == Action::Drift,
        );
        if !self.warnings.is_empty() {
            out.push_str("Warnings:\n");
            for w in &self.warnings {
                let _ = writeln!(out, "  {w}");
            }
            out.push('\n');
        }
        let s = self.summary();
        let _ = write!(
            out,
            "Plan: {} to create, {} to modify, {} to delete, {} unchanged",
            s.create, s.update, s.delete, s.unchanged
        );
        if s.ignored > 0 {
            let _ = write!(out, ", {} ignored", s.ignored);
        }
        if s.drift > 0 {
            let _ = write!(out, ", {} drifted (not changed)", s.drift);
        }
        out.push_str(".\n");
        if !self.has_changes() {
            out.push_str("No changes need to be applied.\n");
        }
        f.write_str(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::{Change, Context, Task};
    use crate::value::Outputs;

    /// A task with fixed fields that rejects updates of `Immutable`.
    #[derive(Debug)]
    struct T {
        key: TaskKey,
        fields: Fields,
    }

    #[async_trait::async_trait]
    impl Task<()> for T {
        fn key(&self) -> &TaskKey {
            &self.key
        }
        fn fields(&self) -> Fields {
            self.fields.clone()
        }
        fn check_changes(&self, actual: Option<&Found>, changes: &[FieldChange]) -> Result<()> {
            match changes.iter().find(|c| c.field == "Immutable") {
                Some(_) if actual.is_some() => Err(Error::invalid(
                    format!("{}.Immutable", self.key),
                    "field cannot be changed",
                )),
                _ => Ok(()),
            }
        }
        async fn find(&self, _cx: &Context<'_, ()>) -> Result<Option<Found>> {
            Ok(None)
        }
        async fn apply(&self, _cx: &Context<'_, ()>, _change: &Change<'_>) -> Result<Outputs> {
            Ok(Outputs::new())
        }
    }

    type Tasks = Vec<Box<dyn Task<()>>>;

    /// `n` tasks referencing earlier ones (by `id`, by `arn`, inside lists and objects),
    /// with an actual state in which objects are missing, differ, refer by ID or by
    /// reference, lack outputs, and extra objects exist that no task describes.
    fn workload(n: usize) -> (Tasks, HashMap<TaskKey, Found>) {
        let keys: Vec<TaskKey> = (0..n)
            .map(|i| TaskKey::new(["A", "B", "C"][i % 3], format!("t{i}")))
            .collect();
        let mut tasks: Tasks = Vec::new();
        let mut actual = HashMap::new();
        for (i, key) in keys.iter().enumerate() {
            let parent = (i > 0).then(|| &keys[(i * 7 + 3) % i]);
            let other = (i > 1).then(|| &keys[(i * 13 + 1) % i]);
            let mut e = Fields::new()
                .with("Name", key.name())
                .with("Size", (i % 17) as i64)
                .with("DontCare", Value::Null);
            let mut a = Fields::new()
                .with("Name", key.name())
                .with("Size", (i % 17) as i64 + i64::from(i % 11 == 0))
                .with("DontCare", "whatever");
            if let Some(p) = parent {
                e.insert("Parent", p);
                // Actual refers by ID, by reference, or by a wrong ID.
                let v = match i % 5 {
                    0 => Value::Ref(p.to_ref()),
                    1 => Value::string("wrong-id"),
                    _ => Value::string(format!("id-{}", p.name())),
                };
                a.insert("Parent", v);
            }
            if let Some(o) = other {
                let arn = o.to_ref().with_attr("arn");
                e.insert(
                    "Rules",
                    Value::List(vec![Value::Object(
                        Fields::new().with("Source", arn).with("Port", 443i64),
                    )]),
                );
                a.insert(
                    "Rules",
                    Value::List(vec![Value::Object(
                        Fields::new()
                            .with("Source", format!("arn:{}", o.name()))
                            .with("Port", 443i64),
                    )]),
                );
            }
            if i % 97 == 5 {
                e.insert("Immutable", "x");
                a.insert("Immutable", "y");
            }
            tasks.push(Box::new(T {
                key: key.clone(),
                fields: e,
            }));
            if i % 13 != 4 {
                let outputs = if i % 19 == 7 {
                    Outputs::new()
                } else {
                    Outputs::id(format!("id-{}", key.name()))
                        .with("arn", format!("arn:{}", key.name()))
                };
                actual.insert(key.clone(), Found::new(a, outputs));
            }
        }
        actual.insert(
            TaskKey::new("Extra", "not-in-graph"),
            Found::new(Fields::new(), Outputs::id("x")),
        );
        (tasks, actual)
    }

    /// The plan as the executor computes it: each node diffed on its own, references
    /// resolved through the whole actual-state map.
    fn reference_plan(
        graph: &TaskGraph<()>,
        actual: &HashMap<TaskKey, Found>,
    ) -> (Vec<PlanItem>, Vec<TaskKey>) {
        let mut items = Vec::new();
        let mut failed = Vec::new();
        for node in graph.nodes() {
            let found = actual.get(node.key());
            let item = evaluate(
                node.key(),
                node.lifecycle(),
                node.fields(),
                found,
                actual as &dyn Resolver,
            )
            .unwrap();
            if matches!(item.action, Action::Create | Action::Update)
                && node.task().check_changes(found, &item.changes).is_err()
            {
                failed.push(node.key().clone());
            } else {
                items.push(item);
            }
        }
        (items, failed)
    }

    #[test]
    fn from_state_matches_planning_each_task_alone() {
        // 9000 tasks: above the threshold for a second thread, on a machine with two cores.
        for n in [50, 9000] {
            let (tasks, mut actual) = workload(n);
            actual.retain(|k, _| k.name() != "t0" || k.kind() != "A");
            let graph = TaskGraph::build(tasks).unwrap();
            let (items, failed) = reference_plan(&graph, &actual);
            assert!(!failed.is_empty());
            let s = Plan {
                items: items.clone(),
                warnings: Vec::new(),
            }
            .summary();
            assert!(s.create > 0 && s.update > 0 && s.unchanged > 0, "{s:?}");

            let err = Plan::from_state(&graph, &actual).unwrap_err();
            let Error::Failed { failures } = err else {
                panic!("{err}")
            };
            let keys: Vec<TaskKey> = failures.into_iter().map(|(k, _)| k).collect();
            assert_eq!(keys, failed);

            // Without the failing tasks' immutable changes, the plans are equal.
            let mut fixed = actual.clone();
            for k in &failed {
                if let Some(f) = fixed.get_mut(k) {
                    f.fields.insert("Immutable", "x");
                }
            }
            let (items, failed) = reference_plan(&graph, &fixed);
            assert!(failed.is_empty());
            let plan = Plan::from_state(&graph, &fixed).unwrap();
            assert_eq!(plan.items.len(), n);
            assert_eq!(plan.items, items);
        }
    }

    /// Both planners' results, comparable: the plan, or each failure as `key: error`.
    fn outcome(r: Result<Plan>) -> std::result::Result<Plan, Vec<String>> {
        r.map_err(|e| match e {
            Error::Failed { failures } => {
                failures.iter().map(|(k, e)| format!("{k}: {e}")).collect()
            }
            other => vec![other.to_string()],
        })
    }

    #[test]
    fn from_found_gives_the_plan_from_state_gives() {
        // 9000 tasks: planned on two threads where two cores exist.
        for n in [50, 9000] {
            let (tasks, mut actual) = workload(n);
            let graph = TaskGraph::build(tasks).unwrap();
            let found = FoundSet::from_map(&graph, &actual).unwrap();
            assert_eq!(
                found.len(),
                actual.len() - 1,
                "the extra object is not a task's"
            );
            let expected = outcome(Plan::from_state(&graph, &actual));
            assert!(matches!(&expected, Err(f) if !f.is_empty()));
            assert_eq!(outcome(Plan::from_found(&found)), expected);

            // Without the rejected changes both give the same full plan.
            for f in actual.values_mut() {
                f.fields.insert("Immutable", "x");
            }
            let found = FoundSet::from_map(&graph, &actual).unwrap();
            let expected = Plan::from_state(&graph, &actual).unwrap();
            let s = expected.summary();
            assert!(s.create > 0 && s.update > 0 && s.unchanged > 0, "{s:?}");
            assert_eq!(Plan::from_found(&found).unwrap(), expected);
        }
    }

    #[test]
    fn found_set_insert_places_replaces_and_keeps_other_objects() {
        let (tasks, actual) = workload(20);
        let graph = TaskGraph::build(tasks).unwrap();
        let mut found = FoundSet::new(&graph);
        assert!(found.is_empty());
        let key = graph.node(3).unwrap().key().clone();
        let first = Found::new(Fields::new().with("Size", 1i64), Outputs::id("a"));
        let second = actual[&key].clone();
        assert!(found.insert(key.clone(), first).unwrap());
        assert!(found.insert(key.clone(), second.clone()).unwrap());
        assert_eq!(found.len(), 1);
        assert_eq!(found.get(&key), Some(&second));
        let other = TaskKey::new("Extra", "elsewhere");
        assert!(!found.insert(other.clone(), Found::default()).unwrap());
        assert_eq!(found.get(&other), None);
        assert_eq!(found.len(), 1);
        // The replaced object is the one compared.
        let only: HashMap<TaskKey, Found> = [(key.clone(), second)].into_iter().collect();
        let mut fixed = only.clone();
        for f in fixed.values_mut() {
            f.fields.insert("Immutable", "x");
        }
        let mut set = FoundSet::new(&graph);
        for (k, f) in &fixed {
            set.insert(k.clone(), f.clone()).unwrap();
        }
        assert_eq!(
            outcome(Plan::from_found(&set)),
            outcome(Plan::from_state(&graph, &fixed))
        );
    }

    #[test]
    fn from_state_finds_objects_when_the_actual_map_is_much_larger() {
        let (tasks, mut actual) = workload(30);
        for i in 0..100 {
            actual.insert(
                TaskKey::new("Extra", format!("e{i}")),
                Found::new(Fields::new(), Outputs::id("x")),
            );
        }
        for f in actual.values_mut() {
            f.fields.insert("Immutable", "x");
        }
        let graph = TaskGraph::build(tasks).unwrap();
        let (items, _) = reference_plan(&graph, &actual);
        assert_eq!(Plan::from_state(&graph, &actual).unwrap().items, items);
    }
}
