//! The generic field representation shared by diff, plan, printers and apply:
//! [`Value`], the ordered field map [`Fields`], and task [`Outputs`].

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::key::{TaskKey, TaskRef};

/// One field value of a task.
///
/// In an *expected* task, [`Value::Null`] means "don't care": the field is never reported
/// as a change. References ([`Value::Ref`]) compare by the identity of the referenced object.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Value {
    /// No value / don't care.
    #[default]
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A short string.
    String(Str),
    /// Long text (policies, user data, manifests): shown as a unified diff of lines.
    Text(Str),
    /// A secret: compared by content, never shown (printed and serialised as `<sensitive>`).
    Sensitive(Sensitive),
    /// A list; order matters.
    List(Vec<Value>),
    /// A map with sorted string keys (tags, labels).
    Map(ValueMap),
    /// A nested object (an ordered set of named fields).
    Object(Fields),
    /// A reference to another task's output (by default its `id`). Boxed, so that a
    /// value takes 32 bytes.
    Ref(Box<TaskRef>),
}

impl Value {
    /// Whether this is [`Value::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// A string value.
    pub fn string(s: impl Into<Str>) -> Self {
        Value::String(s.into())
    }

    /// A long-text value.
    pub fn text(s: impl Into<Str>) -> Self {
        Value::Text(s.into())
    }

    /// A reference value.
    pub fn reference(r: TaskRef) -> Self {
        Value::Ref(Box::new(r))
    }

    /// The string of a [`Value::String`] or [`Value::Text`].
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) | Value::Text(s) => Some(s.as_str()),
            _ => None,
        }
    }

    /// A map of string values.
    pub fn string_map<K: Into<Str>, V: Into<Str>>(
        entries: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| (k.into(), Value::String(v.into())))
                .collect(),
        )
    }

    /// A list of string values.
    pub fn string_list<S: Into<Str>>(items: impl IntoIterator<Item = S>) -> Self {
        Value::List(items.into_iter().map(|s| Value::String(s.into())).collect())
    }

    /// Calls `f` for every reference inside this value (recursively).
    pub fn for_each_ref<'a>(&'a self, f: &mut dyn FnMut(&'a TaskRef)) {
        match self {
            Value::Ref(r) => f(r.as_ref()),
            Value::List(items) => items.iter().for_each(|v| v.for_each_ref(f)),
            Value::Map(m) => m.values().for_each(|v| v.for_each_ref(f)),
            Value::Object(fields) => fields.for_each_ref(f),
            _ => {}
        }
    }

    /// Whether this value holds a reference (at any depth).
    pub fn holds_ref(&self) -> bool {
        match self {
            Value::Ref(_) => true,
            Value::List(items) => items.iter().any(Value::holds_ref),
            Value::Map(m) => m.values().any(Value::holds_ref),
            Value::Object(fields) => fields.holds_ref(),
            _ => false,
        }
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}
impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::Int(i64::from(v))
    }
}
impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::Int(i64::from(v))
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::String(Str::from(v))
    }
}
impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::String(Str::from(v))
    }
}
impl From<Str> for Value {
    fn from(v: Str) -> Self {
        Value::String(v)
    }
}
impl From<TaskRef> for Value {
    fn from(v: TaskRef) -> Self {
        Value::Ref(Box::new(v))
    }
}
impl From<&TaskKey> for Value {
    fn from(v: &TaskKey) -> Self {
        Value::Ref(Box::new(v.to_ref()))
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}
impl From<Fields> for Value {
    fn from(v: Fields) -> Self {
        Value::Object(v)
    }
}

/// Human-readable rendering used by the dry-run printer: strings bare, lists as `[a, b]`,
/// maps as `{k: v, ...}`, references as `Kind/name`, secrets as `<sensitive>`.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("<none>"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::String(s) | Value::Text(s) => f.write_str(s),
            Value::Sensitive(_) => f.write_str(Sensitive::MASK),
            Value::List(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            Value::Map(m) => {
                f.write_str("{")?;
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_str("}")
            }
            Value::Object(fields) => {
                f.write_str("{")?;
                let mut first = true;
                for (k, v) in fields.iter().filter(|(_, v)| !v.is_null()) {
                    if !first {
                        f.write_str(", ")?;
                    }
                    first = false;
                    write!(f, "{k}: {v}")?;
                }
                f.write_str("}")
            }
            Value::Ref(r) => write!(f, "{r}"),
        }
    }
}

/// A string held by a [`Value`], a [`ValueMap`] key or an [`Outputs`] value: up to
/// [`Str::INLINE`] bytes are held in place, longer ones in one heap allocation. Most
/// strings of cloud objects (IDs, CIDRs, tag keys, short names) then need no allocation,
/// and a value stays 32 bytes. Dereferences to `str`; compares, orders and hashes as its
/// text.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Str(compact_str::CompactString);

impl Str {
    /// The longest string held without an allocation.
    pub const INLINE: usize = 24;

    /// The empty string.
    pub const fn new() -> Self {
        Str(compact_str::CompactString::const_new(""))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The text's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the string is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The text as a `String`.
    pub fn into_string(self) -> String {
        self.0.into_string()
    }
}

impl std::ops::Deref for Str {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Str {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::borrow::Borrow<str> for Str {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Self {
        Str(compact_str::CompactString::new(s))
    }
}

impl From<&String> for Str {
    fn from(s: &String) -> Self {
        Str::from(s.as_str())
    }
}

impl From<String> for Str {
    /// A short string is copied in place; a long one keeps its allocation.
    fn from(s: String) -> Self {
        Str(compact_str::CompactString::from(s))
    }
}

impl From<Box<str>> for Str {
    fn from(s: Box<str>) -> Self {
        Str(compact_str::CompactString::from(s))
    }
}

impl From<Cow<'_, str>> for Str {
    fn from(s: Cow<'_, str>) -> Self {
        match s {
            Cow::Borrowed(s) => Str::from(s),
            Cow::Owned(s) => Str::from(s),
        }
    }
}

/// The name of a [`Fields`] entry or of an [`Outputs`] entry: a `&'static str` is kept as
/// the reference it is (the usual case: names the code spells out, compared by pointer
/// first), any other name as a [`Str`] (in place when short, so a name built at run time,
/// such as a Terraform attribute name, needs no allocation).
#[derive(Clone)]
pub struct FieldName(NameRepr);

#[derive(Clone)]
enum NameRepr {
    Static(&'static str),
    Owned(Str),
}

impl FieldName {
    /// The name.
    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            NameRepr::Static(s) => s,
            NameRepr::Owned(s) => s.as_str(),
        }
    }
}

impl std::ops::Deref for FieldName {
    type Target = str;

    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for FieldName {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for FieldName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq for FieldName {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        same_name(self.as_str(), other.as_str())
    }
}

impl Eq for FieldName {}

impl From<&'static str> for FieldName {
    fn from(s: &'static str) -> Self {
        FieldName(NameRepr::Static(s))
    }
}

impl From<String> for FieldName {
    fn from(s: String) -> Self {
        FieldName(NameRepr::Owned(Str::from(s)))
    }
}

impl From<&String> for FieldName {
    fn from(s: &String) -> Self {
        FieldName(NameRepr::Owned(Str::from(s.as_str())))
    }
}

impl From<Str> for FieldName {
    fn from(s: Str) -> Self {
        FieldName(NameRepr::Owned(s))
    }
}

/// A borrowed name stays borrowed; an owned one is copied.
impl From<&Cow<'static, str>> for FieldName {
    fn from(s: &Cow<'static, str>) -> Self {
        match s {
            Cow::Borrowed(s) => FieldName::from(*s),
            Cow::Owned(s) => FieldName::from(s),
        }
    }
}

impl From<Cow<'static, str>> for FieldName {
    fn from(s: Cow<'static, str>) -> Self {
        match s {
            Cow::Borrowed(s) => FieldName::from(s),
            Cow::Owned(s) => FieldName::from(s),
        }
    }
}

impl From<Str> for String {
    fn from(s: Str) -> Self {
        s.into_string()
    }
}

impl PartialEq<str> for Str {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for Str {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<String> for Str {
    fn eq(&self, other: &String) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<Str> for str {
    fn eq(&self, other: &Str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<Str> for &str {
    fn eq(&self, other: &Str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<Str> for String {
    fn eq(&self, other: &Str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for Str {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Str {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Str::from(Cow::<'de, str>::deserialize(deserializer)?))
    }
}

/// A secret value: compared by content, but its Debug, Display and serialised forms are
/// always `<sensitive>`.
#[derive(Clone, PartialEq, Eq)]
pub struct Sensitive(String);

impl Sensitive {
    /// The mask shown instead of the value.
    pub const MASK: &'static str = "<sensitive>";

    /// Wraps a secret.
    pub fn new(secret: impl Into<String>) -> Self {
        Sensitive(secret.into())
    }

    /// The secret itself (for the task that has to send it to the cloud).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Sensitive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(Self::MASK)
    }
}

impl Serialize for Sensitive {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(Self::MASK)
    }
}

impl<'de> Deserialize<'de> for Sensitive {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Sensitive(String::deserialize(deserializer)?))
    }
}

/// An ordered map of field name to [`Value`]; the order is the order fields were added
/// (the printer shows fields in that order, as kOps shows struct fields in declaration
/// order). Serialised as a JSON object in the same order.
#[derive(Clone, Debug, Default)]
pub struct Fields {
    entries: Vec<(FieldName, Value)>,
    /// Bit `i` is set when entry `i` holds a reference (at any depth); the top bit stands
    /// for every entry from 63 on. Kept as entries are set, while they are at hand, so
    /// that finding a task's references reads only the entries that hold some.
    refs: u64,
}

impl Fields {
    /// An empty field map.
    pub const fn new() -> Self {
        Fields {
            entries: Vec::new(),
            refs: 0,
        }
    }

    /// An empty field map with room for `n` fields.
    pub fn with_capacity(n: usize) -> Self {
        Fields {
            entries: Vec::with_capacity(n),
            refs: 0,
        }
    }

    /// Builder form of [`Fields::insert`].
    pub fn with(mut self, name: impl Into<FieldName>, value: impl Into<Value>) -> Self {
        self.insert(name, value);
        self
    }

    /// Sets a field, replacing an existing one of the same name in place.
    pub fn insert(&mut self, name: impl Into<FieldName>, value: impl Into<Value>) {
        let name = name.into();
        let value = value.into();
        let holds_ref = value.holds_ref();
        let at = match self.entries.iter().position(|(n, _)| *n == name) {
            Some(at) => {
                self.entries[at].1 = value;
                at
            }
            None => {
                self.entries.push((name, value));
                self.entries.len() - 1
            }
        };
        let bit = 1u64 << at.min(63);
        if holds_ref {
            self.refs |= bit;
        } else if at < 63 {
            self.refs &= !bit;
        }
    }

    /// The value of a field, if present.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.entries
            .iter()
            .find(|(n, _)| same_name(n, name))
            .map(|(_, v)| v)
    }

    /// Like [`Fields::get`], trying position `hint` first (fields of the expected and the
    /// actual state usually come in the same order).
    pub(crate) fn get_near(&self, name: &str, hint: usize) -> Option<&Value> {
        match self.entries.get(hint) {
            Some((n, v)) if same_name(n, name) => Some(v),
            _ => self.get(name),
        }
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no fields.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Fields in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.entries.iter().map(|(n, v)| (n.as_str(), v))
    }

    /// Values in order.
    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.entries.iter().map(|(_, v)| v)
    }

    /// Every reference held by any field (recursively), in field order.
    pub fn refs(&self) -> Vec<&TaskRef> {
        let mut out = Vec::new();
        self.for_each_ref(&mut |r| out.push(r));
        out
    }

    /// Whether any field holds a reference.
    pub fn holds_ref(&self) -> bool {
        self.refs != 0
    }

    /// Calls `f` for every reference held by any field (recursively), in field order,
    /// reading only the fields that hold some.
    pub fn for_each_ref<'a>(&'a self, f: &mut dyn FnMut(&'a TaskRef)) {
        let mut mask = self.refs;
        while mask != 0 {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let upto = if i == 63 { self.entries.len() } else { i + 1 };
            for (_, v) in self.entries.get(i..upto).unwrap_or_default() {
                v.for_each_ref(f);
            }
        }
    }
}

impl PartialEq for Fields {
    fn eq(&self, other: &Self) -> bool {
        // The reference bits follow from the entries (past the 63rd, conservatively).
        self.entries == other.entries
    }
}

impl<N: Into<FieldName>, V: Into<Value>> FromIterator<(N, V)> for Fields {
    fn from_iter<T: IntoIterator<Item = (N, V)>>(iter: T) -> Self {
        let mut f = Fields::new();
        for (n, v) in iter {
            f.insert(n, v);
        }
        f
    }
}

impl Serialize for Fields {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for (k, v) in &self.entries {
            map.serialize_entry(k.as_ref(), v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Fields;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of field name to value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Fields, A::Error> {
                let mut fields = Fields::with_capacity(access.size_hint().unwrap_or(0));
                while let Some((k, v)) = access.next_entry::<String, Value>()? {
                    fields.insert(k, v);
                }
                Ok(fields)
            }
        }
        deserializer.deserialize_map(V)
    }
}

/// Field names are usually the same `&'static str`: compare pointers before bytes.
#[inline]
fn same_name(a: &str, b: &str) -> bool {
    std::ptr::eq(a, b) || a == b
}

/// A map with sorted string keys, stored as a sorted vector: maps on cloud objects (tags,
/// labels) are small, and a vector keeps them compact and quick to compare. Serialised as
/// a JSON object.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ValueMap(Vec<(Str, Value)>);

impl ValueMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `key`, replacing an existing value; keeps keys sorted.
    pub fn insert(&mut self, key: impl Into<Str>, value: impl Into<Value>) {
        let key = key.into();
        let value = value.into();
        match self.0.binary_search_by(|(k, _)| k.cmp(&key)) {
            Ok(i) => self.0[i].1 = value,
            Err(i) => self.0.insert(i, (key, value)),
        }
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0
            .binary_search_by(|(k, _)| k.as_bytes().cmp(key.as_bytes()))
            .ok()
            .map(|i| &self.0[i].1)
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Entries in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Values in key order.
    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.0.iter().map(|(_, v)| v)
    }
}

impl<K: Into<Str>, V: Into<Value>> FromIterator<(K, V)> for ValueMap {
    fn from_iter<T: IntoIterator<Item = (K, V)>>(iter: T) -> Self {
        ValueMap(sorted_last_wins(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        ))
    }
}

/// `entries` sorted by name, keeping the last value of a repeated name (as repeated
/// inserts into a map would), in place: a stable sort, skipped when the entries come
/// sorted (as from a sorted map), then the repeats dropped.
pub(crate) fn sorted_last_wins<V>(mut entries: Vec<(Str, V)>) -> Vec<(Str, V)> {
    if !entries.is_sorted_by(|a, b| a.0 < b.0) {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        entries.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same {
                std::mem::swap(&mut later.1, &mut earlier.1);
            }
            same
        });
    }
    entries
}

impl From<BTreeMap<String, Value>> for ValueMap {
    fn from(m: BTreeMap<String, Value>) -> Self {
        ValueMap(m.into_iter().map(|(k, v)| (Str::from(k), v)).collect())
    }
}

impl Serialize for ValueMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k.as_str(), v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for ValueMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let m = BTreeMap::<String, Value>::deserialize(deserializer)?;
        Ok(m.into())
    }
}

/// What a task produced or found: named string outputs such as `id`, `arn` or `name`.
/// Dependents' references ([`TaskRef`]) resolve against these. Serialised as a JSON
/// object.
///
/// Every name and value lies in one buffer, in name order: a run keeps one `Outputs`
/// per task for its whole length, so one allocation each (none when empty) keeps them
/// quick to make, to read and to drop.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Outputs(StrMap);

impl Outputs {
    /// No outputs.
    pub fn new() -> Self {
        Outputs(StrMap::new())
    }

    /// Outputs holding just an `id`.
    pub fn id(id: impl AsRef<str>) -> Self {
        let id = id.as_ref();
        let mut o = StrMap::with_capacity(TaskRef::ID.len() + id.len() + 2 * LEN_BYTES);
        o.push(TaskRef::ID, id);
        Outputs(o)
    }

    /// Empty outputs with room for entries whose names and values add up to about
    /// `text` bytes.
    pub(crate) fn with_capacity(text: usize) -> Self {
        Outputs(StrMap::with_capacity(text))
    }

    /// Builder form of [`Outputs::insert`].
    pub fn with(mut self, attr: impl AsRef<str>, value: impl AsRef<str>) -> Self {
        self.insert(attr, value);
        self
    }

    /// Sets an output.
    pub fn insert(&mut self, attr: impl AsRef<str>, value: impl AsRef<str>) {
        self.0.insert(attr.as_ref(), value.as_ref());
    }

    /// The value of an output.
    pub fn get(&self, attr: &str) -> Option<&str> {
        self.0.get(attr)
    }

    /// The outputs as bytes (see [`OutputsView`]).
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.0.bytes
    }

    /// The outputs of bytes [`Outputs::as_bytes`] gave.
    pub(crate) fn from_view(view: OutputsView<'_>) -> Self {
        Outputs(StrMap {
            bytes: view.0.to_vec(),
        })
    }

    /// The outputs read in place.
    pub(crate) fn view(&self) -> OutputsView<'_> {
        OutputsView(&self.0.bytes)
    }

    /// Copies every output of `other` over this one.
    pub fn merge(&mut self, other: Outputs) {
        for (k, v) in other.iter() {
            self.insert(k, v);
        }
    }

    /// Whether there are no outputs.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Outputs in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter()
    }
}

impl fmt::Debug for Outputs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for Outputs {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (k, v) in self.iter() {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Outputs {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let m = BTreeMap::<String, String>::deserialize(deserializer)?;
        Ok(Outputs(StrMap::from(&m)))
    }
}

/// [`Outputs`] read where they lie: in an `Outputs`, or among the bytes of every task's
/// outputs that [`crate::Results`] keeps for a run ([`Outputs::as_bytes`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct OutputsView<'a>(pub(crate) &'a [u8]);

impl<'a> OutputsView<'a> {
    /// The value of an output.
    pub(crate) fn get(self, attr: &str) -> Option<&'a str> {
        find_entry(self.0, attr).and_then(|e| std::str::from_utf8(e.value).ok())
    }
}

/// A map of strings to strings with every key and value in one buffer, in key order:
/// [`Outputs`], and the tags a resource task expects. Small maps that a run reads once
/// and keeps: one allocation each, and a comparison reads one block of memory.
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct StrMap {
    /// Entries in key order, each the key's length and the key, then the value's length
    /// and the value; lengths as LEB128 numbers. Only whole `&str`s are written, so
    /// every key and value slice is UTF-8.
    bytes: Vec<u8>,
}

/// One entry of a [`StrMap`] buffer: where it starts, its key, where its value's length
/// starts, its value, and where the next entry starts. Key and value are read as bytes;
/// only what is handed out is checked as UTF-8.
struct StrEntry<'a> {
    start: usize,
    key: &'a [u8],
    value_at: usize,
    value: &'a [u8],
    end: usize,
}

impl StrMap {
    pub(crate) fn new() -> Self {
        StrMap { bytes: Vec::new() }
    }

    /// An empty map with room for keys and values adding up to about `text` bytes.
    pub(crate) fn with_capacity(text: usize) -> Self {
        StrMap {
            bytes: Vec::with_capacity(text),
        }
    }

    /// Sets `key` to `value`.
    pub(crate) fn insert(&mut self, key: &str, value: &str) {
        let mut pos = 0;
        while let Some(e) = self.entry(pos) {
            match e.key.cmp(key.as_bytes()) {
                std::cmp::Ordering::Less => pos = e.end,
                std::cmp::Ordering::Equal => {
                    let mut encoded = Vec::with_capacity(value.len() + LEN_BYTES);
                    encode(&mut encoded, value);
                    let (from, to) = (e.value_at, e.end);
                    self.bytes.splice(from..to, encoded);
                    return;
                }
                std::cmp::Ordering::Greater => {
                    let mut encoded = Vec::with_capacity(key.len() + value.len() + 2 * LEN_BYTES);
                    encode(&mut encoded, key);
                    encode(&mut encoded, value);
                    let at = e.start;
                    self.bytes.splice(at..at, encoded);
                    return;
                }
            }
        }
        self.push(key, value);
    }

    /// Appends an entry (its key sorts after every key held).
    fn push(&mut self, key: &str, value: &str) {
        encode(&mut self.bytes, key);
        encode(&mut self.bytes, value);
    }

    /// The entry starting at `start`, if one does.
    fn entry(&self, start: usize) -> Option<StrEntry<'_>> {
        entry_at(&self.bytes, start)
    }

    /// The value of `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        OutputsView(&self.bytes).get(key)
    }

    /// Whether `key` is set to `value` (compared as bytes: nothing is decoded).
    pub(crate) fn has(&self, key: &str, value: &str) -> bool {
        find_entry(&self.bytes, key).is_some_and(|e| e.value == value.as_bytes())
    }

    /// Whether the map is empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Entries in key order.
    pub(crate) fn iter(&self) -> StrIter<'_> {
        StrIter { map: self, pos: 0 }
    }

    /// How many entries the map holds.
    pub(crate) fn len(&self) -> usize {
        self.iter().count()
    }

    /// Removes `key`, returning its value.
    pub(crate) fn remove(&mut self, key: &str) -> Option<String> {
        let e = find_entry(&self.bytes, key)?;
        let value = String::from_utf8_lossy(e.value).into_owned();
        let (from, to) = (e.start, e.end);
        self.bytes.drain(from..to);
        Some(value)
    }

    /// Keeps the entries `keep` accepts.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&str, &str) -> bool) {
        let mut kept = Vec::with_capacity(self.bytes.len());
        for (k, v) in self.iter() {
            if keep(k, v) {
                encode(&mut kept, k);
                encode(&mut kept, v);
            }
        }
        self.bytes = kept;
    }

    /// Removes every entry.
    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
    }

    /// The map of these entries, sorted by key, the last of a repeated key kept.
    pub(crate) fn from_entries<K: AsRef<str>, V: AsRef<str>>(
        entries: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let mut all: Vec<(K, V)> = entries.into_iter().collect();
        // Stable: among entries with the same key, the last one given stays last.
        all.sort_by(|a, b| a.0.as_ref().cmp(b.0.as_ref()));
        let text = all
            .iter()
            .map(|(k, v)| k.as_ref().len() + v.as_ref().len() + LEN_BYTES)
            .sum();
        let mut m = StrMap::with_capacity(text);
        let mut entries = all.iter().peekable();
        while let Some((k, v)) = entries.next() {
            if entries
                .peek()
                .is_some_and(|(next, _)| next.as_ref() == k.as_ref())
            {
                continue;
            }
            m.push(k.as_ref(), v.as_ref());
        }
        m
    }

    /// Whether this map holds exactly `map`'s entries.
    pub(crate) fn equals(&self, map: &BTreeMap<String, String>) -> bool {
        let mut pos = 0;
        for (k, v) in map {
            match self.entry(pos) {
                Some(e) if e.key == k.as_bytes() && e.value == v.as_bytes() => pos = e.end,
                _ => return false,
            }
        }
        pos == self.bytes.len()
    }

    /// The entries as a `BTreeMap`.
    pub(crate) fn to_map(&self) -> BTreeMap<String, String> {
        self.iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }
}

/// The entries of a [`StrMap`], in key order.
#[derive(Clone, Debug)]
pub(crate) struct StrIter<'a> {
    map: &'a StrMap,
    pos: usize,
}

impl<'a> Iterator for StrIter<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        let e = self.map.entry(self.pos)?;
        self.pos = e.end;
        let key = std::str::from_utf8(e.key).ok()?;
        Some((key, std::str::from_utf8(e.value).ok()?))
    }
}

impl From<&BTreeMap<String, String>> for StrMap {
    fn from(map: &BTreeMap<String, String>) -> Self {
        let text = map.iter().map(|(k, v)| k.len() + v.len() + LEN_BYTES).sum();
        let mut m = StrMap::with_capacity(text);
        // A BTreeMap iterates in key order: each entry appends.
        for (k, v) in map {
            m.push(k, v);
        }
        m
    }
}

impl fmt::Debug for StrMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// The entry of a [`StrMap`] buffer starting at `start`, if one does.
fn entry_at(bytes: &[u8], start: usize) -> Option<StrEntry<'_>> {
    let (key, value_at) = read_bytes(bytes, start)?;
    let (value, end) = read_bytes(bytes, value_at)?;
    Some(StrEntry {
        start,
        key,
        value_at,
        value,
        end,
    })
}

/// The entry of a [`StrMap`] buffer whose key is `key`.
fn find_entry<'a>(bytes: &'a [u8], key: &str) -> Option<StrEntry<'a>> {
    let mut pos = 0;
    while let Some(e) = entry_at(bytes, pos) {
        if e.key == key.as_bytes() {
            return Some(e);
        }
        pos = e.end;
    }
    None
}

/// Bytes a typical entry's length takes (LEB128: seven bits a byte).
const LEN_BYTES: usize = 2;

/// Appends `text`'s length as a LEB128 number, then `text`.
fn encode(bytes: &mut Vec<u8>, text: &str) {
    let mut n = text.len();
    while n >= 0x80 {
        bytes.push((n as u8) | 0x80);
        n >>= 7;
    }
    bytes.push(n as u8);
    bytes.extend_from_slice(text.as_bytes());
}

/// The bytes whose length starts at `at`, and where they end.
fn read_bytes(bytes: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let first = *bytes.get(at)?;
    if first < 0x80 {
        // The usual case: a length below 128, in one byte.
        let end = at + 1 + usize::from(first);
        return Some((bytes.get(at + 1..end)?, end));
    }
    let mut len = 0usize;
    let mut shift = 0u32;
    let mut pos = at;
    loop {
        let b = *bytes.get(pos)?;
        pos += 1;
        len |= usize::from(b & 0x7f).checked_shl(shift)?;
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    let end = pos.checked_add(len)?;
    Some((bytes.get(pos..end)?, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_keep_order_and_replace_in_place() {
        let f = Fields::new()
            .with("CIDR", "10.0.0.0/16")
            .with("Tags", Value::string_map([("a", "1")]))
            .with("CIDR", "10.1.0.0/16");
        let names: Vec<&str> = f.iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["CIDR", "Tags"]);
        assert_eq!(f.get("CIDR"), Some(&Value::string("10.1.0.0/16")));
        let json = serde_json::to_string(&f).unwrap();
        assert_eq!(
            json,
            r#"{"CIDR":{"string":"10.1.0.0/16"},"Tags":{"map":{"a":{"string":"1"}}}}"#
        );
        assert_eq!(serde_json::from_str::<Fields>(&json).unwrap(), f);
    }

    #[test]
    fn refs_are_found_recursively() {
        let vpc = TaskKey::new("VPC", "v");
        let sg = TaskKey::new("SecurityGroup", "s");
        let f = Fields::new().with("VPC", &vpc).with(
            "Rules",
            Value::List(vec![Value::Object(Fields::new().with("Source", &sg))]),
        );
        let keys: Vec<String> = f.refs().iter().map(|r| r.key.to_string()).collect();
        assert_eq!(keys, ["VPC/v", "SecurityGroup/s"]);
    }

    #[test]
    fn maps_collect_sorted_and_keep_the_last_of_a_repeated_key() {
        let m: ValueMap = [("b", 1), ("a", 2), ("b", 3), ("c", 4), ("a", 5)]
            .into_iter()
            .collect();
        let entries: Vec<(&str, &Value)> = m.iter().collect();
        assert_eq!(
            entries,
            [
                ("a", &Value::Int(5)),
                ("b", &Value::Int(3)),
                ("c", &Value::Int(4))
            ]
        );
        let sorted: ValueMap = [("a", 1), ("b", 2)].into_iter().collect();
        assert_eq!(sorted.get("b"), Some(&Value::Int(2)));
        assert_eq!(Outputs::id("i-1"), Outputs::new().with("id", "i-1"));
    }

    #[test]
    fn outputs_keep_one_entry_per_name_in_name_order_whatever_the_order_of_inserts() {
        // Values of every length class: empty, short, and longer than one length byte
        // holds (127) and than two (16383).
        let long = "x".repeat(300);
        let huge = "é".repeat(9000);
        let entries = [
            ("name", "a"),
            ("id", ""),
            ("arn", long.as_str()),
            ("zone", huge.as_str()),
            ("b", "ü"),
        ];
        let mut expected: Vec<(&str, &str)> = entries.to_vec();
        expected.sort();
        let mut reversed = Outputs::new();
        for (k, v) in entries.iter().rev() {
            reversed.insert(k, v);
        }
        let mut forward = Outputs::with_capacity(4);
        for (k, v) in entries {
            forward.insert(k, v);
        }
        assert_eq!(forward.iter().collect::<Vec<_>>(), expected);
        assert_eq!(forward, reversed);
        for (k, v) in entries {
            assert_eq!(forward.get(k), Some(v), "{k}");
        }
        assert_eq!(forward.get("nam"), None);
        assert_eq!(forward.get("names"), None);
        // Replacing a value with a longer, a shorter and an empty one keeps the others.
        forward.insert("id", huge.as_str());
        forward.insert("arn", "s");
        forward.insert("zone", "");
        assert_eq!(forward.get("id"), Some(huge.as_str()));
        assert_eq!(forward.get("arn"), Some("s"));
        assert_eq!(forward.get("zone"), Some(""));
        assert_eq!(forward.get("name"), Some("a"));
        assert_eq!(forward.iter().count(), 5);
        // Merging overwrites what both hold and adds the rest.
        let mut merged = Outputs::id("i-1").with("only", "here");
        merged.merge(forward.clone());
        assert_eq!(merged.get("id"), Some(huge.as_str()));
        assert_eq!(merged.get("only"), Some("here"));
        assert_eq!(merged.iter().count(), 6);
        // JSON round trip, and Debug as a map.
        let json = serde_json::to_string(&forward).unwrap();
        let back: Outputs = serde_json::from_str(&json).unwrap();
        assert_eq!(back, forward);
        assert_eq!(format!("{:?}", Outputs::id("i-1")), r#"{"id": "i-1"}"#);
        assert!(Outputs::new().is_empty() && !Outputs::id("").is_empty());
    }

    #[test]
    fn a_string_map_equals_exactly_the_map_it_was_made_from() {
        let map = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        let base = map(&[("Name", "a"), ("KubernetesCluster", "c"), ("x", "")]);
        let packed = StrMap::from(&base);
        assert!(packed.equals(&base));
        assert_eq!(packed.to_map(), base);
        assert_eq!(packed.get("x"), Some(""));
        for other in [
            map(&[]),
            map(&[("Name", "a"), ("KubernetesCluster", "c")]),
            map(&[
                ("Name", "a"),
                ("KubernetesCluster", "c"),
                ("x", ""),
                ("y", ""),
            ]),
            map(&[("Name", "b"), ("KubernetesCluster", "c"), ("x", "")]),
            map(&[("Name", "a"), ("KubernetesCluster", "c"), ("X", "")]),
            map(&[("Name", "a"), ("KubernetesCluster", "c"), ("x", "1")]),
        ] {
            assert!(!packed.equals(&other), "{other:?}");
            assert!(!StrMap::from(&other).equals(&base), "{other:?}");
        }
        assert!(StrMap::new().equals(&map(&[])));
    }

    #[test]
    fn field_names_compare_as_text_whatever_holds_them() {
        let dynamic = String::from("vpc_id");
        let long = "a_terraform_attribute_name_longer_than_inline".to_owned();
        let mut f = Fields::new().with("vpc_id", 1i64).with(&long, 2i64);
        // A name built at run time replaces the entry of the same static name, and back.
        f.insert(&dynamic, 3i64);
        f.insert(long.clone(), 4i64);
        f.insert("vpc_id", 5i64);
        assert_eq!(f.len(), 2);
        assert_eq!(f.get("vpc_id"), Some(&Value::Int(5)));
        assert_eq!(f.get(&long), Some(&Value::Int(4)));
        assert_eq!(FieldName::from("id"), FieldName::from(String::from("id")));
        assert_ne!(FieldName::from("id"), FieldName::from("arn"));
        let o = Outputs::id("i-1")
            .with(dynamic.clone(), "vpc-1")
            .with("vpc_id", "vpc-2");
        assert_eq!(o.get("vpc_id"), Some("vpc-2"));
        assert_eq!(o.iter().count(), 2);
        let json = serde_json::to_string(&f).unwrap();
        let back: Fields = serde_json::from_str(&json).unwrap();
        assert_eq!(back, f);
    }

    #[test]
    fn fields_know_which_entries_hold_references() {
        let vpc = TaskKey::new("VPC", "main");
        let subnet = TaskKey::new("Subnet", "a");
        let keys = |f: &Fields| -> Vec<String> {
            f.refs().iter().map(|r| r.key.as_str().to_owned()).collect()
        };
        let mut f = Fields::new().with("Name", "a").with("VPC", &vpc).with(
            "Tags",
            Value::Map([("x", Value::from(&subnet))].into_iter().collect()),
        );
        assert_eq!(keys(&f), ["VPC/main", "Subnet/a"]);
        // Replacing a field that held one drops it; nested fields count.
        f.insert("VPC", "vpc-123");
        assert_eq!(keys(&f), ["Subnet/a"]);
        f.insert("Tags", Value::Object(Fields::new().with("Parent", &vpc)));
        assert_eq!(keys(&f), ["VPC/main"]);
        f.insert("Tags", Value::Null);
        assert!(!f.holds_ref() && keys(&f).is_empty());
        // Past the 63rd field every entry is read.
        let mut many = Fields::new();
        for i in 0..70 {
            many.insert(format!("F{i}"), i as i64);
        }
        many.insert("F65", &vpc);
        many.insert("F68", &subnet);
        assert_eq!(keys(&many), ["VPC/main", "Subnet/a"]);
        let back: Fields = serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
        assert_eq!(back, f);
    }

    #[test]
    fn values_are_compact_and_strings_inline_when_short() {
        assert_eq!(std::mem::size_of::<Str>(), 24);
        assert_eq!(Str::new(), Str::default());
        assert_eq!(std::mem::size_of::<Value>(), 32);
        for s in [
            "",
            "a",
            "é",
            "vpc-0123456789abcdef",
            "kubernetes.io/cluster/x.example.com",
        ] {
            let v = Str::from(s);
            assert_eq!(v.as_str(), s);
            assert_eq!(v, Str::from(s.to_owned()));
            assert_eq!(v.len(), s.len());
            assert_eq!(v.clone().into_string(), s);
            assert_eq!(format!("{v:?}"), format!("{s:?}"));
            assert_eq!(
                serde_json::to_string(&v).unwrap(),
                serde_json::to_string(s).unwrap()
            );
        }
        let mut sorted: Vec<Str> = ["b", "a", "ab", "kubernetes.io/cluster/a.example.com"]
            .into_iter()
            .map(Str::from)
            .collect();
        sorted.sort();
        let texts: Vec<&str> = sorted.iter().map(Str::as_str).collect();
        assert_eq!(
            texts,
            ["a", "ab", "b", "kubernetes.io/cluster/a.example.com"]
        );
        let m: std::collections::HashSet<Str> = sorted.into_iter().collect();
        assert!(m.contains("ab"));
    }

    #[test]
    fn sensitive_is_never_shown() {
        let v = Value::Sensitive(Sensitive::new("hunter2"));
        assert!(!format!("{v:?}").contains("hunter2"));
        assert!(!format!("{v}").contains("hunter2"));
        assert!(!serde_json::to_string(&v).unwrap().contains("hunter2"));
    }
}
