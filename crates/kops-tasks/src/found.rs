//! [`FoundSet`]: the actual state of a graph's objects, kept by graph node in one compact
//! arena, for planning large graphs with [`crate::Plan::from_found`].
//!
//! [`crate::Plan::from_state`] takes the actual state as a `HashMap<TaskKey, Found>`: each
//! found object is a tree of small heap allocations (a field vector, strings, tag maps,
//! outputs) wherever the caller allocated them, found by a key lookup, and it is compared
//! with the expected fields, another such tree. For tens of thousands of objects the diff
//! then spends most of its time waiting for memory. A [`FoundSet`] is filled as objects
//! are listed ([`FoundSet::insert`]): it places each object by its task's node index and
//! copies the values the diff compares into contiguous arrays (value slots and string
//! bytes), with field names and map keys interned. The graph keeps its expected fields in
//! the same form ([`Expected`], built with the graph, references already resolved to node
//! indices), so the comparison walks two compact arrays and compares names by number. The
//! original [`Found`] values are kept too, for [`crate::Task::check_changes`].
//!
//! The comparison rules are exactly those of [`crate::diff`]; `Plan::from_found` gives the
//! same plan as `Plan::from_state` on the same objects.

use std::collections::HashMap;

use crate::diff::{FieldChange, field_change};
use crate::error::{Error, Result};
use crate::graph::TaskGraph;
use crate::key::{KeyBuildHasher, TaskKey, TaskRef};
use crate::task::Found;
use crate::value::{Fields, Outputs, Sensitive, Value};

/// "None" for slot positions and name numbers.
const NONE: u32 = u32::MAX;

/// A byte range in an arena's string buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Span {
    start: u32,
    len: u32,
}

/// One value in an arena (16 bytes). Containers (`List`, `Map`, `Object`) are followed by
/// their `len` [`Slot::Entry`] slots, each naming a child (an interned map key or field
/// name, [`NONE`] for list items) and pointing to the child's own slot.
#[derive(Clone, Copy, Debug)]
enum Slot {
    Null,
    Bool(bool),
    Int(i64),
    Str(Span),
    Text(Span),
    Sensitive(Span),
    List(u32),
    Map(u32),
    Object(u32),
    /// Index into [`Arena::refs`].
    Ref(u32),
    Entry {
        name: u32,
        value: u32,
    },
}

fn too_large() -> Error {
    Error::invalid("task state", "more than 4 GiB of field values")
}

fn len32(n: usize) -> Result<u32> {
    u32::try_from(n)
        .ok()
        .filter(|&n| n != NONE)
        .ok_or_else(too_large)
}

fn push_str(buf: &mut String, s: &str) -> Result<Span> {
    let start = len32(buf.len())?;
    let len = len32(s.len())?;
    len32(buf.len() + s.len())?;
    buf.push_str(s);
    Ok(Span { start, len })
}

fn span_bytes(buf: &str, s: Span) -> &[u8] {
    let start = s.start as usize;
    buf.as_bytes()
        .get(start..start + s.len as usize)
        .unwrap_or_default()
}

/// Interned names (field names, map keys), numbered from 0.
#[derive(Default)]
struct Names {
    text: String,
    spans: Vec<Span>,
    index: HashMap<Box<str>, u32, KeyBuildHasher>,
}

impl Names {
    fn get(&self, s: &str) -> Option<u32> {
        self.index.get(s).copied()
    }

    fn intern(&mut self, s: &str) -> Result<u32> {
        if let Some(id) = self.get(s) {
            return Ok(id);
        }
        let id = len32(self.spans.len())?;
        self.spans.push(push_str(&mut self.text, s)?);
        self.index.insert(s.into(), id);
        Ok(id)
    }

    fn bytes(&self, id: u32) -> &[u8] {
        self.spans
            .get(id as usize)
            .map_or(&[], |&s| span_bytes(&self.text, s))
    }

    fn len(&self) -> usize {
        self.spans.len()
    }
}

/// Values encoded as [`Slot`]s and string bytes.
#[derive(Default)]
struct Arena {
    slots: Vec<Slot>,
    text: String,
    refs: Vec<TaskRef>,
}

impl Arena {
    fn push_slot(&mut self, s: Slot) -> Result<u32> {
        let pos = len32(self.slots.len())?;
        self.slots.push(s);
        Ok(pos)
    }

    /// Pushes a container header and its entry slots (values not yet set).
    fn open(&mut self, header: Slot, names: impl Iterator<Item = Result<u32>>) -> Result<u32> {
        let pos = self.push_slot(header)?;
        for name in names {
            self.push_slot(Slot::Entry {
                name: name?,
                value: NONE,
            })?;
        }
        Ok(pos)
    }

    fn set_entry(&mut self, header: u32, k: usize, child: u32) {
        if let Some(Slot::Entry { value, .. }) = self.slots.get_mut(header as usize + 1 + k) {
            *value = child;
        }
    }

    fn encode_fields(
        &mut self,
        fields: &Fields,
        intern: &mut dyn FnMut(&str) -> Result<u32>,
    ) -> Result<u32> {
        let pos = self.open(
            Slot::Object(len32(fields.len())?),
            fields.iter().map(|(n, _)| intern(n)),
        )?;
        for (k, v) in fields.values().enumerate() {
            let child = self.encode(v, intern)?;
            self.set_entry(pos, k, child);
        }
        Ok(pos)
    }

    fn encode(&mut self, v: &Value, intern: &mut dyn FnMut(&str) -> Result<u32>) -> Result<u32> {
        let slot = match v {
            Value::Null => Slot::Null,
            Value::Bool(b) => Slot::Bool(*b),
            Value::Int(i) => Slot::Int(*i),
            Value::String(s) => Slot::Str(push_str(&mut self.text, s)?),
            Value::Text(s) => Slot::Text(push_str(&mut self.text, s)?),
            Value::Sensitive(s) => Slot::Sensitive(push_str(&mut self.text, s.expose())?),
            Value::Ref(r) => {
                let i = len32(self.refs.len())?;
                self.refs.push(r.clone());
                Slot::Ref(i)
            }
            Value::List(items) => {
                let pos = self.open(
                    Slot::List(len32(items.len())?),
                    items.iter().map(|_| Ok(NONE)),
                )?;
                for (k, item) in items.iter().enumerate() {
                    let child = self.encode(item, intern)?;
                    self.set_entry(pos, k, child);
                }
                return Ok(pos);
            }
            Value::Map(m) => {
                let pos =
                    self.open(Slot::Map(len32(m.len())?), m.iter().map(|(k, _)| intern(k)))?;
                for (k, item) in m.values().enumerate() {
                    let child = self.encode(item, intern)?;
                    self.set_entry(pos, k, child);
                }
                return Ok(pos);
            }
            Value::Object(f) => return self.encode_fields(f, intern),
        };
        self.push_slot(slot)
    }

    fn slot(&self, p: u32) -> Slot {
        self.slots.get(p as usize).copied().unwrap_or(Slot::Null)
    }

    fn bytes(&self, s: Span) -> &[u8] {
        span_bytes(&self.text, s)
    }

    /// The entries (name, value slot) of the container whose header is at `header`.
    fn entries(&self, header: u32, len: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        let start = header as usize + 1;
        self.slots
            .get(start..start + len as usize)
            .unwrap_or_default()
            .iter()
            .map(|s| match *s {
                Slot::Entry { name, value } => (name, value),
                _ => (NONE, NONE),
            })
    }

    /// The field named `name` of the object at `header` (`len` fields), trying position
    /// `hint` first (expected and actual fields usually come in the same order).
    fn field(&self, header: u32, len: u32, name: u32, hint: usize) -> Option<u32> {
        if hint < len as usize
            && let Some(&Slot::Entry { name: n, value }) =
                self.slots.get(header as usize + 1 + hint)
            && n == name
        {
            return Some(value);
        }
        self.entries(header, len)
            .find(|&(n, _)| n == name)
            .map(|(_, v)| v)
    }

    /// The object header at `p`, with its field count.
    fn object(&self, p: u32) -> Option<(u32, u32)> {
        match self.slot(p) {
            Slot::Object(n) if p != NONE => Some((p, n)),
            _ => None,
        }
    }
}

/// A graph's expected fields in arena form, built with the graph: node `i`'s fields are
/// the object at `roots[i]`; references carry the node index they resolve to.
#[derive(Default)]
pub(crate) struct Expected {
    arena: Arena,
    names: Names,
    roots: Vec<u32>,
    /// For each of `arena.refs`, the referenced node.
    ref_targets: Vec<usize>,
}

impl Expected {
    /// Appends the next node's fields; `target` resolves each of its references to a node.
    pub(crate) fn push(
        &mut self,
        fields: &Fields,
        target: impl Fn(&TaskRef) -> Option<usize>,
    ) -> Result<()> {
        let Expected {
            arena,
            names,
            roots,
            ref_targets,
        } = self;
        let first_ref = arena.refs.len();
        roots.push(arena.encode_fields(fields, &mut |s| names.intern(s))?);
        for r in arena.refs.get(first_ref..).unwrap_or_default() {
            // The graph resolved every reference before calling this.
            ref_targets.push(target(r).unwrap_or(usize::MAX));
        }
        Ok(())
    }
}

/// Per node: where its object's slots and string bytes are, and its `id` output.
#[derive(Clone, Copy, Debug)]
struct NodeState {
    /// The slot of the object's fields ([`Slot::Object`]), or [`NONE`] when not found.
    fields: u32,
    /// How many slots the object's fields take (from `fields` on).
    slots: u32,
    /// The object's string bytes (its `id` output last).
    text: Span,
    /// The object's `id` output, if it has one.
    id: Option<Span>,
}

const ABSENT: NodeState = NodeState {
    fields: NONE,
    slots: 0,
    text: Span { start: 0, len: 0 },
    id: None,
};

/// Bytes per cache line, the stride [`FoundSet::warm`] reads at.
const LINE: usize = 64;

/// The actual state of a [`TaskGraph`]'s objects, stored by node for a fast diff
/// ([`crate::Plan::from_found`]).
///
/// Fill it as objects are listed from the cloud: [`FoundSet::insert`] places an object by
/// its task's key. Objects no task describes are kept only for their outputs, so
/// references to them resolve as they do in [`crate::Plan::from_state`]. Inserting the
/// same key again replaces the earlier object.
///
/// ```
/// # use kops_tasks::*;
/// # #[derive(Debug)] struct Net(TaskKey);
/// # #[async_trait] impl Task<()> for Net {
/// #     fn key(&self) -> &TaskKey { &self.0 }
/// #     fn fields(&self) -> Fields { Fields::new().with("CIDR", "10.0.0.0/16") }
/// #     async fn find(&self, _: &Context<'_, ()>) -> Result<Option<Found>> { Ok(None) }
/// #     async fn apply(&self, _: &Context<'_, ()>, _: &Change<'_>) -> Result<Outputs> { Ok(Outputs::new()) }
/// # }
/// let key = TaskKey::new("Network", "main");
/// let graph = TaskGraph::build(vec![Box::new(Net(key.clone())) as Box<dyn Task<()>>])?;
/// let mut found = FoundSet::new(&graph);
/// let listed = Found::new(Fields::new().with("CIDR", "10.1.0.0/16"), Outputs::id("net-1"));
/// assert!(found.insert(key, listed)?);
/// let plan = Plan::from_found(&found)?;
/// assert_eq!(plan.summary().update, 1);
/// # Ok::<(), kops_tasks::Error>(())
/// ```
pub struct FoundSet<'g, C: ?Sized + Sync> {
    graph: &'g TaskGraph<C>,
    nodes: Vec<NodeState>,
    found: Vec<Option<Found>>,
    count: usize,
    arena: Arena,
    /// Names the graph's expected fields do not use, numbered after the graph's.
    names: Names,
    extra: HashMap<TaskKey, Outputs>,
}

impl<C: ?Sized + Sync> std::fmt::Debug for FoundSet<'_, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FoundSet")
            .field("tasks", &self.nodes.len())
            .field("found", &self.count)
            .field("other_objects", &self.extra.len())
            .finish_non_exhaustive()
    }
}

impl<'g, C: ?Sized + Sync> FoundSet<'g, C> {
    /// An empty set for `graph` (no object found yet).
    pub fn new(graph: &'g TaskGraph<C>) -> Self {
        FoundSet {
            graph,
            nodes: vec![ABSENT; graph.len()],
            found: std::iter::repeat_with(|| None).take(graph.len()).collect(),
            count: 0,
            arena: Arena::default(),
            names: Names::default(),
            extra: HashMap::new(),
        }
    }

    /// A set holding a copy of every object in `actual` (the input of
    /// [`crate::Plan::from_state`]).
    pub fn from_map(graph: &'g TaskGraph<C>, actual: &HashMap<TaskKey, Found>) -> Result<Self> {
        let mut set = FoundSet::new(graph);
        for (key, found) in actual {
            set.insert(key.clone(), found.clone())?;
        }
        Ok(set)
    }

    /// Records the object found for `key`. Returns whether a task of the graph has that key;
    /// other objects are kept only for their outputs (references to them still resolve).
    /// Errors only when the set outgrows its 4 GiB arena.
    pub fn insert(&mut self, key: TaskKey, found: Found) -> Result<bool> {
        let Some(i) = self.graph.index_of(&key) else {
            self.extra.insert(key, found.outputs);
            return Ok(false);
        };
        let known = &self.graph.expected().names;
        let base = len32(known.len())?;
        let FoundSet { arena, names, .. } = self;
        let text_start = len32(arena.text.len())?;
        let fields = arena.encode_fields(&found.fields, &mut |s| match known.get(s) {
            Some(id) => Ok(id),
            None => base.checked_add(names.intern(s)?).ok_or_else(too_large),
        })?;
        let slots = len32(arena.slots.len())? - fields;
        let id = match found.outputs.get(TaskRef::ID) {
            Some(id) => Some(push_str(&mut arena.text, id)?),
            None => None,
        };
        let text = Span {
            start: text_start,
            len: len32(arena.text.len())? - text_start,
        };
        if let (Some(state), Some(slot)) = (self.nodes.get_mut(i), self.found.get_mut(i)) {
            *state = NodeState {
                fields,
                slots,
                text,
                id,
            };
            if slot.replace(found).is_none() {
                self.count += 1;
            }
        }
        Ok(true)
    }

    /// The graph this set belongs to.
    pub fn graph(&self) -> &'g TaskGraph<C> {
        self.graph
    }

    /// The object found for a task of the graph.
    pub fn get(&self, key: &TaskKey) -> Option<&Found> {
        self.graph.index_of(key).and_then(|i| self.found_at(i))
    }

    /// How many of the graph's tasks have a found object.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether no task of the graph has a found object.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The object found for node `i`.
    pub(crate) fn found_at(&self, i: usize) -> Option<&Found> {
        self.found.get(i).and_then(Option::as_ref)
    }

    /// The text of name number `id`.
    fn name(&self, id: u32) -> String {
        let known = &self.graph.expected().names;
        let bytes = match id.checked_sub(len32(known.len()).unwrap_or(NONE)) {
            Some(own) => self.names.bytes(own),
            None => known.bytes(id),
        };
        String::from_utf8_lossy(bytes).into_owned()
    }

    /// The `id` output of node `i`'s object.
    fn id(&self, i: usize) -> Option<&[u8]> {
        Some(self.arena.bytes(self.nodes.get(i)?.id?))
    }

    /// The value output `attr` of node `t` stands for.
    fn output(&self, t: usize, attr: &str) -> Option<&[u8]> {
        if attr == TaskRef::ID {
            self.id(t)
        } else {
            self.found_at(t)
                .and_then(|f| f.outputs.get(attr))
                .map(str::as_bytes)
        }
    }

    /// The value a reference in the found state stands for.
    fn resolve(&self, r: &TaskRef) -> Option<&[u8]> {
        match self.graph.index_of(&r.key) {
            Some(t) => self.output(t, &r.attr),
            None => self
                .extra
                .get(&r.key)
                .and_then(|o| o.get(&r.attr))
                .map(str::as_bytes),
        }
    }

    /// The value expected reference number `i` stands for.
    fn resolve_expected(&self, x: &Expected, i: u32) -> Option<&[u8]> {
        let r = x.arena.refs.get(i as usize)?;
        self.output(*x.ref_targets.get(i as usize)?, &r.attr)
    }

    /// The value at slot `p`, rebuilt (for the old value of a change).
    fn to_value(&self, p: u32) -> Value {
        let text = |s: Span| String::from_utf8_lossy(self.arena.bytes(s)).into_owned();
        match self.arena.slot(p) {
            Slot::Null | Slot::Entry { .. } => Value::Null,
            Slot::Bool(b) => Value::Bool(b),
            Slot::Int(i) => Value::Int(i),
            Slot::Str(s) => Value::String(text(s)),
            Slot::Text(s) => Value::Text(text(s)),
            Slot::Sensitive(s) => Value::Sensitive(Sensitive::new(text(s))),
            Slot::Ref(i) => self
                .arena
                .refs
                .get(i as usize)
                .cloned()
                .map_or(Value::Null, Value::Ref),
            Slot::List(n) => Value::List(
                self.arena
                    .entries(p, n)
                    .map(|(_, v)| self.to_value(v))
                    .collect(),
            ),
            Slot::Map(n) => Value::Map(
                self.arena
                    .entries(p, n)
                    .map(|(k, v)| (self.name(k), self.to_value(v)))
                    .collect(),
            ),
            Slot::Object(n) => Value::Object(
                self.arena
                    .entries(p, n)
                    .map(|(k, v)| (self.name(k), self.to_value(v)))
                    .collect(),
            ),
        }
    }

    /// Whether expected slot `e` matches found slot `a`, under the rules of
    /// [`crate::diff::values_equal`].
    fn matches(&self, x: &Expected, e: u32, a: u32) -> bool {
        match (x.arena.slot(e), self.arena.slot(a)) {
            (Slot::Str(e), Slot::Str(a)) => x.arena.bytes(e) == self.arena.bytes(a),
            (Slot::Int(e), Slot::Int(a)) => e == a,
            (Slot::Bool(e), Slot::Bool(a)) => e == a,
            (Slot::Null, _) => true,
            (Slot::Ref(e), Slot::Str(a)) => {
                self.resolve_expected(x, e) == Some(self.arena.bytes(a))
            }
            (Slot::Ref(i), Slot::Ref(j)) => {
                match (
                    x.arena.refs.get(i as usize),
                    self.arena.refs.get(j as usize),
                ) {
                    (Some(er), Some(ar)) => {
                        er == ar
                            || matches!((self.resolve_expected(x, i), self.resolve(ar)), (Some(p), Some(q)) if p == q)
                    }
                    _ => false,
                }
            }
            (Slot::Map(n), Slot::Map(m)) => {
                n == m
                    && x.arena
                        .entries(e, n)
                        .zip(self.arena.entries(a, m))
                        .all(|((ek, ev), (ak, av))| ek == ak && self.matches(x, ev, av))
            }
            (Slot::List(n), Slot::List(m)) => {
                n == m
                    && x.arena
                        .entries(e, n)
                        .zip(self.arena.entries(a, m))
                        .all(|((_, ev), (_, av))| self.matches(x, ev, av))
            }
            (Slot::Object(n), Slot::Object(m)) => {
                x.arena.entries(e, n).enumerate().all(|(k, (name, ev))| {
                    matches!(x.arena.slot(ev), Slot::Null)
                        || self
                            .arena
                            .field(a, m, name, k)
                            .is_some_and(|av| self.matches(x, ev, av))
                })
            }
            (Slot::Str(e) | Slot::Text(e), Slot::Str(a) | Slot::Text(a))
            | (Slot::Sensitive(e), Slot::Sensitive(a)) => x.arena.bytes(e) == self.arena.bytes(a),
            _ => false,
        }
    }

    /// Reads every cache line of the found state of nodes `block` (their slots, their
    /// string bytes, the `id`s their references resolve to) in one tight loop, returning
    /// a value built from the bytes read so the loads are kept. Objects are stored in the
    /// order they were listed, not in node order, so each node's state is a few cache
    /// misses; issued back to back, those misses overlap, where the comparison, one node
    /// after another, would wait for each in turn. (The expected side needs no warming:
    /// the graph stores it in node order, which the hardware prefetcher follows.)
    pub(crate) fn warm(&self, block: std::ops::Range<usize>) -> u64 {
        let mut acc = 0u64;
        let per_line = LINE / std::mem::size_of::<Slot>();
        let bytes = self.arena.text.as_bytes();
        let byte = |p: usize| u64::from(bytes.get(p).copied().unwrap_or(0));
        for i in block.clone() {
            let Some(s) = self.nodes.get(i) else {
                continue;
            };
            if s.fields != NONE {
                let (start, end) = (s.fields as usize, s.fields as usize + s.slots as usize);
                for p in (start..end).step_by(per_line) {
                    if let Some(Slot::Entry { value, .. } | Slot::Object(value)) =
                        self.arena.slots.get(p)
                    {
                        acc = acc.wrapping_add(u64::from(*value));
                    }
                }
                let (start, end) = (s.text.start as usize, (s.text.start + s.text.len) as usize);
                for p in (start..end).step_by(LINE) {
                    acc = acc.wrapping_add(byte(p));
                }
                acc = acc.wrapping_add(byte(end.saturating_sub(1)));
            }
        }
        for i in block {
            // The key the plan item will clone (its reference count is next to its text).
            if let Some(node) = self.graph.node(i) {
                acc = acc.wrapping_add(u64::from(node.key().first_byte()));
            }
            for &(_, t) in self.graph.resolved_refs(i) {
                if let Some(id) = self.nodes.get(t).and_then(|s| s.id) {
                    let (a, b) = (id.start as usize, (id.start + id.len) as usize);
                    acc = acc.wrapping_add(byte(a) ^ byte(b.saturating_sub(1)));
                }
            }
        }
        acc
    }

    /// The changes needed to turn node `i`'s found object into its expected fields
    /// (`expected`, which the graph also holds encoded), as [`crate::diff::diff_fields`]
    /// computes them.
    pub(crate) fn diff_node(&self, i: usize, expected: &Fields) -> Vec<FieldChange> {
        let x = self.graph.expected();
        let Some((eroot, en)) = x.roots.get(i).and_then(|&r| x.arena.object(r)) else {
            return Vec::new();
        };
        let aroot = self.nodes.get(i).and_then(|s| self.arena.object(s.fields));
        let mut out = Vec::new();
        for (k, (name, ev)) in x.arena.entries(eroot, en).enumerate() {
            if matches!(x.arena.slot(ev), Slot::Null) {
                continue;
            }
            let av = aroot.and_then(|(header, n)| self.arena.field(header, n, name, k));
            if av.is_some_and(|av| self.matches(x, ev, av)) {
                continue;
            }
            if let Some((field, e)) = expected.iter().nth(k) {
                out.push(field_change(
                    field,
                    av.map(|av| self.to_value(av)).as_ref(),
                    e,
                ));
            }
        }
        out
    }
}
