//! Task identity ([`TaskKey`]) and typed references between tasks ([`TaskRef`]).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The stable identity of a task: its kind (e.g. `VPC`) and its name (e.g.
/// `minimal.example.com`), written `Kind/name` as kOps does.
///
/// Both parts are reference-counted so cloning a key is cheap; keys order by kind, then name.
/// The kind must not contain `/`; the name may.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskKey {
    kind: Arc<str>,
    name: Arc<str>,
}

impl TaskKey {
    /// Builds a key from a kind and a name.
    pub fn new(kind: impl AsRef<str>, name: impl AsRef<str>) -> Self {
        TaskKey {
            kind: Arc::from(kind.as_ref()),
            name: Arc::from(name.as_ref()),
        }
    }

    /// The task kind, e.g. `VPC`.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The task name, e.g. `minimal.example.com`.
    pub fn name(&self) -> &str {
        &self.name
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
}

impl fmt::Display for TaskKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.kind, self.name)
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
