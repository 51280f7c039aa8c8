//! Task identity ([`TaskKey`]) and typed references between tasks ([`TaskRef`]).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The stable identity of a task: its kind (e.g. `VPC`) and its name (e.g.
/// `minimal.example.com`), written `Kind/name` as kOps does.
///
/// A key is one reference-counted string plus a precomputed hash, so cloning, hashing and
/// comparing keys (the hot path of graph building and diffing) is cheap. Keys order by
/// kind, then name. The kind must not contain `/`; the name may.
#[derive(Clone)]
pub struct TaskKey {
    text: Arc<str>,
    kind_len: usize,
    hash: u64,
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn key_hash(text: &str) -> u64 {
    // FNV-1a: stable and cheap; maps mix it further (`KeyHasher`).
    fnv_extend(FNV_OFFSET, text.as_bytes())
}

/// Strings hashed one after another, eight bytes at a step, each part followed by its
/// length (so `["ab", "c"]` and `["a", "bc"]` differ): stable within a process and cheap
/// (a listing index hashes a query's tag keys and values on every lookup), for maps keyed
/// by the hash with [`KeyHashing`], which spreads its bits.
pub(crate) fn parts_hash(parts: &[&str]) -> u64 {
    let mut h = FNV_OFFSET;
    for p in parts {
        let bytes = p.as_bytes();
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut word = [0u8; 8];
            word.copy_from_slice(w);
            h = mix_word(h, u64::from_le_bytes(word));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            h = mix_word(h, u64::from_le_bytes(word));
        }
        h = mix_word(h, bytes.len() as u64);
    }
    h
}

/// One step of [`parts_hash`]: the word folded into the state, then multiplied by an odd
/// constant (the golden ratio's bits) so every input bit reaches the upper ones.
fn mix_word(h: u64, word: u64) -> u64 {
    (h.rotate_left(5) ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

fn fnv_extend(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(FNV_PRIME))
}

impl TaskKey {
    /// Builds a key from a kind and a name.
    pub fn new(kind: impl AsRef<str>, name: impl AsRef<str>) -> Self {
        let (kind, name) = (kind.as_ref(), name.as_ref());
        let mut text = String::with_capacity(kind.len() + 1 + name.len());
        text.push_str(kind);
        text.push('/');
        text.push_str(name);
        TaskKey {
            hash: key_hash(&text),
            text: Arc::from(text),
            kind_len: kind.len(),
        }
    }

    /// The task kind, e.g. `VPC`.
    pub fn kind(&self) -> &str {
        self.text.get(..self.kind_len).unwrap_or_default()
    }

    /// The task name, e.g. `minimal.example.com`.
    pub fn name(&self) -> &str {
        self.text.get(self.kind_len + 1..).unwrap_or_default()
    }

    /// The key as `Kind/name`.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Parses `Kind/name` (the kind ends at the first `/`). Returns `None` when there is no
    /// `/` or either part is empty.
    pub fn parse(s: &str) -> Option<Self> {
        let (kind, name) = s.split_once('/')?;
        if kind.is_empty() || name.is_empty() {
            return None;
        }
        Some(TaskKey::new(kind, name))
    }

    /// A reference to this task's `id` output.
    pub fn to_ref(&self) -> TaskRef {
        TaskRef::new(self.clone())
    }

    /// The hash stored in the key (FNV-1a of its text).
    pub(crate) fn stored_hash(&self) -> u64 {
        self.hash
    }

    /// The address of the key's text: two keys with the same address are the same key
    /// (clones of one another), without reading the text. Only compared, never followed.
    pub(crate) fn text_addr(&self) -> usize {
        Arc::as_ptr(&self.text).cast::<u8>() as usize
    }
}

/// The hasher of maps keyed by [`TaskKey`]: a key carries its hash (computed once, when the
/// key was made), so the map only spreads its bits instead of hashing it again. Task keys
/// come from the model, not from an adversary, so no random seed is needed.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Not used by `TaskKey`; anything else is hashed as the key text is.
        self.write_u64(fnv_extend(self.0 ^ FNV_OFFSET, bytes));
    }

    fn write_u64(&mut self, v: u64) {
        // One multiply moves FNV's weak low bits up, where the map takes its tag from; the
        // shift folds them back down, where it takes the slot from.
        let x = (self.0 ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = x ^ (x >> 29);
    }
}

/// Builds [`KeyHasher`]s.
pub(crate) type KeyHashing = BuildHasherDefault<KeyHasher>;

impl PartialEq for TaskKey {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash
            && self.kind_len == other.kind_len
            && (Arc::ptr_eq(&self.text, &other.text) || self.text == other.text)
    }
}

impl Eq for TaskKey {}

impl Hash for TaskKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl Ord for TaskKey {
    fn cmp(&self, other: &Self) -> Ordering {
        if Arc::ptr_eq(&self.text, &other.text) {
            return Ordering::Equal;
        }
        self.kind()
            .cmp(other.kind())
            .then_with(|| self.name().cmp(other.name()))
    }
}

impl PartialOrd for TaskKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for TaskKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for TaskKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl Serialize for TaskKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TaskKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = Cow::<'de, str>::deserialize(deserializer)?;
        TaskKey::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format!("task key {s:?} is not of the form Kind/name"))
        })
    }
}

/// A typed reference from one task's field to another task, resolved when the graph is
/// built (an unknown target is an error) and compared by the identity of the referenced
/// object: two references are equal when they name the same task, and a reference equals an
/// actual value when the referenced task's output `attr` (by default `id`) equals it.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TaskRef {
    /// The referenced task.
    pub key: TaskKey,
    /// Which output of the referenced task this reference stands for (`id`, `arn`, `name`, ...).
    #[serde(default = "default_attr", skip_serializing_if = "is_default_attr")]
    pub attr: Cow<'static, str>,
}

fn default_attr() -> Cow<'static, str> {
    Cow::Borrowed(TaskRef::ID)
}

fn is_default_attr(a: &str) -> bool {
    a == TaskRef::ID
}

impl TaskRef {
    /// The default output name, `id`.
    pub const ID: &'static str = "id";

    /// A reference to `key`'s `id` output.
    pub fn new(key: TaskKey) -> Self {
        TaskRef {
            key,
            attr: Cow::Borrowed(Self::ID),
        }
    }

    /// A reference to another output of the same task (e.g. `arn`, `name`).
    pub fn with_attr(mut self, attr: impl Into<Cow<'static, str>>) -> Self {
        self.attr = attr.into();
        self
    }
}

impl fmt::Display for TaskRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.attr == Self::ID {
            write!(f, "{}", self.key)
        } else {
            write!(f, "{}#{}", self.key, self.attr)
        }
    }
}

impl fmt::Debug for TaskRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ref({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_hash_keeps_the_parts_apart() {
        assert_ne!(parts_hash(&["ab", "c"]), parts_hash(&["a", "bc"]));
        assert_ne!(parts_hash(&["a", ""]), parts_hash(&["a"]));
        assert_eq!(parts_hash(&["Name", "x"]), parts_hash(&["Name", "x"]));
        assert_ne!(parts_hash(&["abcdefgh"]), parts_hash(&["abcdefgh", ""]));
        assert_ne!(parts_hash(&["abcdefgh\0"]), parts_hash(&["abcdefgh"]));
        assert_ne!(parts_hash(&["Name", "x"]), parts_hash(&["Name", "y"]));
    }

    #[test]
    fn key_parses_at_first_slash_and_round_trips() {
        let k = TaskKey::parse("Route/route-0.0.0.0/0").unwrap();
        assert_eq!(k.kind(), "Route");
        assert_eq!(k.name(), "route-0.0.0.0/0");
        let json = serde_json::to_string(&k).unwrap();
        assert_eq!(json, "\"Route/route-0.0.0.0/0\"");
        assert_eq!(serde_json::from_str::<TaskKey>(&json).unwrap(), k);
        assert!(TaskKey::parse("novalue").is_none());
        assert!(serde_json::from_str::<TaskKey>("\"/x\"").is_err());
    }

    #[test]
    fn equal_keys_are_equal_whatever_their_allocation() {
        use std::collections::HashSet;
        let a = TaskKey::new("VPC", "main");
        let b = TaskKey::parse("VPC/main").unwrap();
        assert_eq!(a, b);
        assert_ne!(a, TaskKey::new("VPC", "other"));
        assert_ne!(TaskKey::new("A", "b/c"), TaskKey::new("A/b", "c"));
        let set: HashSet<TaskKey> = [a.clone(), b].into_iter().collect();
        assert_eq!(set.len(), 1);
        assert_eq!(a.kind(), "VPC");
        assert_eq!(a.name(), "main");
    }

    #[test]
    fn keys_order_by_kind_then_name() {
        let mut v = [
            TaskKey::new("VPC", "a"),
            TaskKey::new("Subnet", "z"),
            TaskKey::new("Subnet", "b"),
        ];
        v.sort();
        let s: Vec<String> = v.iter().map(ToString::to_string).collect();
        assert_eq!(s, ["Subnet/b", "Subnet/z", "VPC/a"]);
    }
}
