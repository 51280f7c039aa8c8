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
//! indices), so the comparison walks two compact arrays and compares names by number. IDs
//! are numbered as they are inserted (the same text, the same number), and so is the
//! string a found object has where its task expects another task's ID: such a reference
//! is compared as two numbers. The original [`Found`] values are kept too, for
//! [`crate::Task::check_changes`].
//!
//! The comparison rules are exactly those of [`crate::diff`]; `Plan::from_found` gives the
//! same plan as `Plan::from_state` on the same objects.

use std::collections::HashMap;
use std::hash::BuildHasher;

use crate::diff::{FieldChange, owned_field_change};
use crate::error::{Error, Result};
use crate::graph::TaskGraph;
use crate::key::{KeyBuildHasher, TaskKey, TaskRef};
use crate::task::Found;
use crate::value::{Fields, Outputs, Sensitive, Value};

/// "None" for slot positions and name numbers.
const NONE: u32 = u32::MAX;

/// A range in one of an arena's buffers: string bytes, or (for containers) slots.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Span {
    start: u32,
    len: u32,
}

/// One value, 12 bytes: scalars in place, containers as the range of their children's
/// slots (which are contiguous).
#[derive(Clone, Copy, Debug)]
enum Val {
    Null,
    Bool(bool),
    /// An `i64` as two halves, so the type needs only 4-byte alignment.
    Int([u32; 2]),
    Str(Span),
    Text(Span),
    Sensitive(Span),
    /// Index into [`Arena::refs`].
    Ref(u32),
    List(Span),
    Map(Span),
    Object(Span),
}

fn int(i: i64) -> Val {
    let b = i.to_le_bytes();
    Val::Int([
        u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
    ])
}

fn int_value(h: [u32; 2]) -> i64 {
    let (lo, hi) = (h[0].to_le_bytes(), h[1].to_le_bytes());
    i64::from_le_bytes([lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]])
}

/// One named value in an arena (16 bytes): a field of an object (named by its interned
/// field name), an entry of a map (its interned key) or an item of a list ([`NONE`]).
#[derive(Clone, Copy, Debug)]
struct Slot {
    name: u32,
    val: Val,
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

/// Values encoded as [`Slot`]s and string bytes. A container's children take
/// consecutive slots; the slots of nested containers' children come after them.
#[derive(Default)]
struct Arena {
    slots: Vec<Slot>,
    text: String,
    refs: Vec<TaskRef>,
}

impl Arena {
    /// Reserves `n` consecutive slots (filled by [`Arena::set`]).
    fn reserve(&mut self, n: usize) -> Result<Span> {
        let start = len32(self.slots.len())?;
        let len = len32(n)?;
        len32(self.slots.len() + n)?;
        self.slots.extend(std::iter::repeat_n(
            Slot {
                name: NONE,
                val: Val::Null,
            },
            n,
        ));
        Ok(Span { start, len })
    }

    fn set(&mut self, at: u32, name: u32, val: Val) {
        if let Some(slot) = self.slots.get_mut(at as usize) {
            *slot = Slot { name, val };
        }
    }

    /// Encodes an object's fields; returns the range of their slots.
    fn encode_fields(
        &mut self,
        fields: &Fields,
        intern: &mut dyn FnMut(&str) -> Result<u32>,
    ) -> Result<Span> {
        let span = self.reserve(fields.len())?;
        for (at, (name, v)) in (span.start..).zip(fields.iter()) {
            let name = intern(name)?;
            let val = self.encode(v, intern)?;
            self.set(at, name, val);
        }
        Ok(span)
    }

    fn encode(&mut self, v: &Value, intern: &mut dyn FnMut(&str) -> Result<u32>) -> Result<Val> {
        Ok(match v {
            Value::Null => Val::Null,
            Value::Bool(b) => Val::Bool(*b),
            Value::Int(i) => int(*i),
            Value::String(s) => Val::Str(push_str(&mut self.text, s)?),
            Value::Text(s) => Val::Text(push_str(&mut self.text, s)?),
            Value::Sensitive(s) => Val::Sensitive(push_str(&mut self.text, s.expose())?),
            Value::Ref(r) => {
                let i = len32(self.refs.len())?;
                self.refs.push(r.clone());
                Val::Ref(i)
            }
            Value::List(items) => {
                let span = self.reserve(items.len())?;
                for (at, item) in (span.start..).zip(items) {
                    let val = self.encode(item, intern)?;
                    self.set(at, NONE, val);
                }
                Val::List(span)
            }
            Value::Map(m) => {
                let span = self.reserve(m.len())?;
                for (at, (k, item)) in (span.start..).zip(m.iter()) {
                    let name = intern(k)?;
                    let val = self.encode(item, intern)?;
                    self.set(at, name, val);
                }
                Val::Map(span)
            }
            Value::Object(f) => Val::Object(self.encode_fields(f, intern)?),
        })
    }

    fn bytes(&self, s: Span) -> &[u8] {
        span_bytes(&self.text, s)
    }

    /// The slots in `span`.
    fn children(&self, span: Span) -> &[Slot] {
        let start = span.start as usize;
        self.slots
            .get(start..start + span.len as usize)
            .unwrap_or_default()
    }

    /// The field named `name` among the object slots `span`, trying position `hint` first
    /// (expected and actual fields usually come in the same order).
    fn field(&self, span: Span, name: u32, hint: usize) -> Option<Val> {
        let fields = self.children(span);
        match fields.get(hint) {
            Some(s) if s.name == name => Some(s.val),
            _ => fields.iter().find(|s| s.name == name).map(|s| s.val),
        }
    }
}

/// A value of `arena`, rebuilt as a [`Value`] (equal to the one encoded); `name` gives the
/// text of an interned name.
fn rebuild(arena: &Arena, v: Val, name: &dyn Fn(u32) -> String) -> Value {
    let text = |s: Span| String::from_utf8_lossy(arena.bytes(s)).into_owned();
    let named = |span: Span| {
        arena
            .children(span)
            .iter()
            .map(move |c| (name(c.name), rebuild(arena, c.val, name)))
    };
    match v {
        Val::Null => Value::Null,
        Val::Bool(b) => Value::Bool(b),
        Val::Int(i) => Value::Int(int_value(i)),
        Val::Str(s) => Value::String(text(s)),
        Val::Text(s) => Value::Text(text(s)),
        Val::Sensitive(s) => Value::Sensitive(Sensitive::new(text(s))),
        Val::Ref(i) => arena
            .refs
            .get(i as usize)
            .cloned()
            .map_or(Value::Null, Value::Ref),
        Val::List(span) => Value::List(
            arena
                .children(span)
                .iter()
                .map(|c| rebuild(arena, c.val, name))
                .collect(),
        ),
        Val::Map(span) => Value::Map(named(span).collect()),
        Val::Object(span) => Value::Object(named(span).collect()),
    }
}

/// A graph's expected fields in arena form, built with the graph: node `i`'s fields are
/// the slots `roots[i]`; references carry the node index they resolve to.
#[derive(Default)]
pub(crate) struct Expected {
    arena: Arena,
    names: Names,
    roots: Vec<Span>,
    /// For each of `arena.refs`, the referenced node.
    ref_targets: Vec<RefTarget>,
    /// For each [`SEGMENT`] of nodes: how many slots and text bytes its expected fields
    /// take (what a [`FoundSet`] reserves for the segment's found objects).
    seg_sizes: Vec<(usize, usize)>,
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
            seg_sizes,
        } = self;
        let first_ref = arena.refs.len();
        let before = (arena.slots.len(), arena.text.len());
        roots.push(arena.encode_fields(fields, &mut |s| names.intern(s))?);
        if roots.len() % SEGMENT == 1 {
            seg_sizes.push((0, 0));
        }
        if let Some(size) = seg_sizes.last_mut() {
            size.0 += arena.slots.len() - before.0;
            size.1 += arena.text.len() - before.1;
        }
        for r in arena.refs.get(first_ref..).unwrap_or_default() {
            // The graph resolved every reference before calling this.
            ref_targets.push(RefTarget {
                node: target(r).unwrap_or(usize::MAX),
                id: r.attr == TaskRef::ID,
            });
        }
        Ok(())
    }
}

/// What an expected reference points at.
#[derive(Clone, Copy, Debug)]
struct RefTarget {
    /// The referenced node.
    node: usize,
    /// Whether the reference is to the node's `id` output.
    id: bool,
}

/// Numbers for the IDs of a [`FoundSet`]'s objects and for the found strings that stand
/// for such IDs: the same text always gets the same number, so two of them are equal
/// exactly when their numbers are. The texts are kept in one buffer, looked up through a
/// table of numbers (no allocation per text).
struct IdNumbers {
    text: String,
    spans: Vec<Span>,
    table: hashbrown::HashTable<u32>,
    /// IDs are made by the cloud, not chosen by an adversary: no per-table seed.
    hasher: KeyBuildHasher,
}

impl IdNumbers {
    /// Room for about `n` texts.
    fn with_capacity(n: usize) -> Self {
        IdNumbers {
            text: String::new(),
            spans: Vec::with_capacity(n),
            table: hashbrown::HashTable::with_capacity(n),
            hasher: KeyBuildHasher::default(),
        }
    }

    fn number(&mut self, text: &str) -> Result<u32> {
        let IdNumbers {
            text: buf,
            spans,
            table,
            hasher,
        } = self;
        let hash = hasher.hash_one(text.as_bytes());
        let eq = |&n: &u32| {
            spans
                .get(n as usize)
                .is_some_and(|&s| span_bytes(buf, s) == text.as_bytes())
        };
        if let Some(&n) = table.find(hash, eq) {
            return Ok(n);
        }
        let n = len32(spans.len())?;
        spans.push(push_str(buf, text)?);
        let rehash = |&m: &u32| {
            let s = spans.get(m as usize).copied().unwrap_or_default();
            hasher.hash_one(span_bytes(buf, s))
        };
        table.insert_unique(hash, n, rehash);
        Ok(n)
    }
}

/// Per node: where its found object is (one record, so that storing an object writes one
/// place per node).
#[derive(Clone, Copy, Debug)]
struct NodeState {
    /// The slots of the object's fields.
    fields: Span,
    /// The object's `id` output, in `FoundSet::id_text`.
    id: Option<Span>,
    /// The object's position in `FoundSet::found`, or [`NONE`] when none was found.
    found: u32,
}

const ABSENT: NodeState = NodeState {
    fields: Span { start: 0, len: 0 },
    id: None,
    found: NONE,
};

/// Bytes per cache line, the stride [`FoundSet::warm_segment`] reads at.
const LINE: usize = 64;

/// Nodes per arena segment of a [`FoundSet`]: a segment's objects (a few hundred KiB)
/// fit in a core's L2 cache.
pub(crate) const SEGMENT: usize = 1024;

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
    /// The text of the found objects' `id` outputs.
    id_text: String,
    /// Each node's `id` output as a number: equal IDs, equal numbers (see [`IdNumbers`]).
    id_nums: Vec<u32>,
    /// For each of the graph's expected references to an `id` (numbered as in
    /// [`Expected`]) that is a top-level field: the number of the string the found object
    /// has in that field, or [`NONE`].
    ref_nums: Vec<u32>,
    id_numbers: IdNumbers,
    /// The names (as numbers) the last inserted object used, in the order it used them.
    recent: Vec<u32>,
    /// The found objects, in the order they were first inserted.
    found: Vec<Found>,
    count: usize,
    /// The found values, one arena per [`SEGMENT`] consecutive nodes: objects are stored
    /// in the order they are listed, and a segment keeps each node's object near its
    /// neighbours', so that the planner can read a segment in one sequential sweep.
    segs: Vec<Arena>,
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
            id_text: String::new(),
            id_nums: vec![NONE; graph.len()],
            ref_nums: vec![NONE; graph.expected().arena.refs.len()],
            id_numbers: IdNumbers::with_capacity(graph.len()),
            recent: Vec::new(),
            found: Vec::new(),
            count: 0,
            segs: std::iter::repeat_with(Arena::default)
                .take(graph.len().div_ceil(SEGMENT))
                .collect(),
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
        let x = self.graph.expected();
        let FoundSet {
            segs,
            names,
            id_text,
            id_numbers,
            ref_nums,
            recent,
            ..
        } = self;
        let Some(arena) = segs.get_mut(i / SEGMENT) else {
            return Ok(false);
        };
        if arena.slots.capacity() == 0 {
            // Room for the segment's objects, sized after their expected fields (found
            // objects hold about as many values, and IDs where references are expected),
            // so the arena is not copied over and over while it grows.
            let (slots, text) = x.seg_sizes.get(i / SEGMENT).copied().unwrap_or_default();
            let refs = x.ref_targets.len().div_ceil(x.roots.len().max(1));
            arena.slots.reserve(slots + slots / 4);
            arena.text.reserve(text + text / 4 + refs * SEGMENT * 32);
        }
        // Objects of a kind name their fields and tag keys alike, in the same order: each
        // name is first compared with the one the previous object had at its position.
        let mut pos = 0;
        let fields = arena.encode_fields(&found.fields, &mut |s| {
            let at = pos;
            pos += 1;
            if let Some(&id) = recent.get(at) {
                let text = match id.checked_sub(base) {
                    Some(own) => names.bytes(own),
                    None => known.bytes(id),
                };
                if text == s.as_bytes() {
                    return Ok(id);
                }
            }
            let id = match known.get(s) {
                Some(id) => id,
                None => base.checked_add(names.intern(s)?).ok_or_else(too_large)?,
            };
            match recent.get_mut(at) {
                Some(slot) => *slot = id,
                None => recent.push(id),
            }
            Ok(id)
        })?;
        let id = match found.outputs.get(TaskRef::ID) {
            Some(id) => Some(push_str(id_text, id)?),
            None => None,
        };
        // Number the ID, and the strings found where the task expects another task's ID:
        // a reference is then compared as two numbers, read from small dense arrays,
        // rather than as the referenced object's ID text read from wherever it lies.
        let id_num = match found.outputs.get(TaskRef::ID) {
            Some(id) => id_numbers.number(id)?,
            None => NONE,
        };
        if let Some(&eroot) = x.roots.get(i) {
            for (k, ec) in x.arena.children(eroot).iter().enumerate() {
                let Val::Ref(e) = ec.val else { continue };
                if !x.ref_targets.get(e as usize).is_some_and(|t| t.id) {
                    continue;
                }
                let num = match arena.field(fields, ec.name, k) {
                    Some(Val::Str(a)) => match std::str::from_utf8(arena.bytes(a)) {
                        Ok(text) => id_numbers.number(text)?,
                        Err(_) => NONE,
                    },
                    _ => NONE,
                };
                if let Some(slot) = ref_nums.get_mut(e as usize) {
                    *slot = num;
                }
            }
        }
        if let (Some(state), Some(num_slot)) = (self.nodes.get_mut(i), self.id_nums.get_mut(i)) {
            let at = match self.found.get_mut(state.found as usize) {
                // Found again: the new object replaces the old one in place.
                Some(old) => {
                    *old = found;
                    state.found
                }
                None => {
                    let at = len32(self.found.len())?;
                    self.found.push(found);
                    self.count += 1;
                    at
                }
            };
            *state = NodeState {
                fields,
                id,
                found: at,
            };
            *num_slot = id_num;
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
        let at = self.nodes.get(i)?.found;
        self.found.get(at as usize)
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
        Some(span_bytes(&self.id_text, self.nodes.get(i)?.id?))
    }

    /// The arena holding node `i`'s object.
    fn seg(&self, i: usize) -> &Arena {
        static EMPTY: Arena = Arena {
            slots: Vec::new(),
            text: String::new(),
            refs: Vec::new(),
        };
        self.segs.get(i / SEGMENT).unwrap_or(&EMPTY)
    }

    /// Whether node `i`'s object was found.
    pub(crate) fn is_found(&self, i: usize) -> bool {
        self.nodes.get(i).is_some_and(|s| s.found != NONE)
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
        let target = x.ref_targets.get(i as usize)?;
        if target.id {
            // The usual case, decided without reading the reference itself.
            return self.id(target.node);
        }
        self.output(target.node, &x.arena.refs.get(i as usize)?.attr)
    }

    /// A found value, rebuilt (for the old value of a change).
    fn to_value(&self, fa: &Arena, v: Val) -> Value {
        rebuild(fa, v, &|id| self.name(id))
    }

    /// [`FoundSet::matches`], with the common scalar cases inline.
    #[inline(always)]
    fn same(&self, x: &Expected, fa: &Arena, e: Val, a: Val) -> bool {
        match (e, a) {
            (Val::Str(e), Val::Str(a)) => e.len == a.len && x.arena.bytes(e) == fa.bytes(a),
            (Val::Int(e), Val::Int(a)) => e == a,
            (Val::Bool(e), Val::Bool(a)) => e == a,
            (Val::Null, _) => true,
            _ => self.matches(x, fa, e, a),
        }
    }

    /// Whether expected value `e` matches found value `a`, under the rules of
    /// [`crate::diff::values_equal`].
    #[inline(never)]
    fn matches(&self, x: &Expected, fa: &Arena, e: Val, a: Val) -> bool {
        match (e, a) {
            (Val::Str(e), Val::Str(a)) => x.arena.bytes(e) == fa.bytes(a),
            (Val::Int(e), Val::Int(a)) => e == a,
            (Val::Bool(e), Val::Bool(a)) => e == a,
            (Val::Null, _) => true,
            (Val::Ref(e), Val::Str(a)) => match self.ref_nums.get(e as usize) {
                // Numbered when the object was inserted (a top-level field): the found
                // string is the referenced object's ID exactly when their numbers agree.
                Some(&num) if num != NONE => {
                    x.ref_targets
                        .get(e as usize)
                        .and_then(|t| self.id_nums.get(t.node))
                        == Some(&num)
                }
                _ => self.resolve_expected(x, e) == Some(fa.bytes(a)),
            },
            (Val::Ref(i), Val::Ref(j)) => {
                match (x.arena.refs.get(i as usize), fa.refs.get(j as usize)) {
                    (Some(er), Some(ar)) => {
                        er == ar
                            || matches!((self.resolve_expected(x, i), self.resolve(ar)), (Some(p), Some(q)) if p == q)
                    }
                    _ => false,
                }
            }
            (Val::Map(e), Val::Map(a)) => {
                e.len == a.len
                    && x.arena
                        .children(e)
                        .iter()
                        .zip(fa.children(a))
                        .all(|(ec, ac)| ec.name == ac.name && self.same(x, fa, ec.val, ac.val))
            }
            (Val::List(e), Val::List(a)) => {
                e.len == a.len
                    && x.arena
                        .children(e)
                        .iter()
                        .zip(fa.children(a))
                        .all(|(ec, ac)| self.same(x, fa, ec.val, ac.val))
            }
            (Val::Object(e), Val::Object(a)) => {
                x.arena.children(e).iter().enumerate().all(|(k, ec)| {
                    matches!(ec.val, Val::Null)
                        || fa
                            .field(a, ec.name, k)
                            .is_some_and(|av| self.same(x, fa, ec.val, av))
                })
            }
            (Val::Str(e) | Val::Text(e), Val::Str(a) | Val::Text(a))
            | (Val::Sensitive(e), Val::Sensitive(a)) => x.arena.bytes(e) == fa.bytes(a),
            _ => false,
        }
    }

    /// Reads the whole arena of segment `seg` in one sequential sweep (a read per cache
    /// line), returning a value built from what was read so the loads are kept. Objects
    /// are stored in the order they were listed, not in node order; read one by one while
    /// diffing, each would be a few cache misses taken in turn. Swept, the hardware
    /// prefetcher streams the segment, which then stays in cache while its nodes are
    /// diffed. (The expected side needs no sweep: the graph stores it in node order.)
    pub(crate) fn warm_segment(&self, seg: usize) -> u64 {
        let Some(arena) = self.segs.get(seg) else {
            return 0;
        };
        let per_line = LINE / std::mem::size_of::<Slot>();
        let mut acc = arena
            .slots
            .iter()
            .step_by(per_line)
            .fold(0u64, |acc, s| acc.wrapping_add(u64::from(s.name)));
        acc = arena
            .text
            .as_bytes()
            .iter()
            .step_by(LINE)
            .fold(acc, |acc, &b| acc.wrapping_add(u64::from(b)));
        acc
    }

    /// Reads what the diff of nodes `block` reads at random outside their segment (the
    /// numbers of the IDs their references point at, and the keys plan items clone) in one
    /// tight loop, so that those cache misses overlap instead of being taken one by one.
    pub(crate) fn warm(&self, block: std::ops::Range<usize>) -> u64 {
        let mut acc = 0u64;
        for i in block {
            // The key the plan item will clone (its reference count is next to its text).
            if let Some(node) = self.graph.node(i) {
                acc = acc.wrapping_add(u64::from(node.key().first_byte()));
            }
            for &(_, t) in self.graph.resolved_refs(i) {
                if let Some(&num) = self.id_nums.get(t) {
                    acc = acc.wrapping_add(u64::from(num));
                }
            }
        }
        acc
    }

    /// The changes needed to turn node `i`'s found object into its expected fields (as the
    /// graph holds them encoded), as [`crate::diff::diff_fields`] computes them.
    pub(crate) fn diff_node(&self, i: usize) -> Vec<FieldChange> {
        let x = self.graph.expected();
        let Some(&eroot) = x.roots.get(i) else {
            return Vec::new();
        };
        let aroot = self
            .nodes
            .get(i)
            .filter(|s| s.found != NONE)
            .map(|s| s.fields);
        let fa = self.seg(i);
        let mut out = Vec::new();
        for (k, ec) in x.arena.children(eroot).iter().enumerate() {
            if matches!(ec.val, Val::Null) {
                continue;
            }
            let av = aroot.and_then(|a| fa.field(a, ec.name, k));
            if av.is_some_and(|av| self.same(x, fa, ec.val, av)) {
                continue;
            }
            // A change (the cold path): rebuild both values from the arenas, which are
            // in cache, rather than read the expected `Fields` tree.
            let known = |id| String::from_utf8_lossy(x.names.bytes(id)).into_owned();
            if out.is_empty() {
                // A missing object changes every field; a found one usually only one. Sized
                // to fit: a large plan holds thousands of these lists.
                out.reserve_exact(if aroot.is_some() {
                    1
                } else {
                    x.arena.children(eroot).len()
                });
            }
            out.push(owned_field_change(
                known(ec.name),
                av.map(|av| self.to_value(fa, av)),
                rebuild(&x.arena, ec.val, &known),
            ));
        }
        out
    }
}
