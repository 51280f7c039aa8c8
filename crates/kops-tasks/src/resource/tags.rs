//! [`Tags`]: a listed object's tags (labels) in one buffer.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::value::{StrIter, StrMap};

/// The tags (AWS) or labels (GCE) of a cloud object: strings by string key, in key order.
///
/// Every key and value lies in one buffer, so that an object's tags are one allocation and
/// reading them reads one block of memory: a plan looks up and compares the tags of
/// thousands of listed objects, and a map of separately allocated strings costs a cache
/// miss per string there. Maps hold a few dozen tags at most (AWS allows 50, GCE 64):
/// lookups scan, and an insert or removal moves the bytes after it.
///
/// It reads as a `BTreeMap<String, String>` does ([`Tags::get`], [`Tags::iter`],
/// [`Tags::insert`], ...), converts from and to one, and serialises as the same JSON
/// object.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Tags(StrMap);

impl Tags {
    /// No tags.
    pub fn new() -> Self {
        Tags(StrMap::new())
    }

    /// The value of tag `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key)
    }

    /// Whether tag `key` is set to `value`.
    pub fn has(&self, key: &str, value: &str) -> bool {
        self.0.has(key, value)
    }

    /// Whether the object has tag `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets tag `key` to `value` (replacing its value when the tag is there).
    pub fn insert(&mut self, key: impl AsRef<str>, value: impl AsRef<str>) {
        self.0.insert(key.as_ref(), value.as_ref());
    }

    /// Removes tag `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<String> {
        self.0.remove(key)
    }

    /// Keeps the tags `keep` accepts.
    pub fn retain(&mut self, keep: impl FnMut(&str, &str) -> bool) {
        self.0.retain(keep);
    }

    /// Removes every tag.
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// How many tags there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The tags in key order.
    pub fn iter(&self) -> TagsIter<'_> {
        TagsIter(self.0.iter())
    }

    /// The keys in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.iter().map(|(k, _)| k)
    }

    /// The values, in the order of their keys.
    pub fn values(&self) -> impl Iterator<Item = &str> {
        self.iter().map(|(_, v)| v)
    }

    /// The tags as a `BTreeMap`.
    pub fn to_map(&self) -> BTreeMap<String, String> {
        self.0.to_map()
    }

    /// The buffer, for comparing with the tags a task expects.
    pub(crate) fn as_str_map(&self) -> &StrMap {
        &self.0
    }
}

/// The tags of a [`Tags`], in key order.
#[derive(Clone, Debug)]
pub struct TagsIter<'a>(StrIter<'a>);

impl<'a> Iterator for TagsIter<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}

impl<'a> IntoIterator for &'a Tags {
    type Item = (&'a str, &'a str);
    type IntoIter = TagsIter<'a>;

    fn into_iter(self) -> TagsIter<'a> {
        self.iter()
    }
}

/// Sorted by key; of a key given more than once, the last value is kept (as a `BTreeMap`
/// collects).
impl<K: AsRef<str>, V: AsRef<str>> FromIterator<(K, V)> for Tags {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(entries: I) -> Self {
        Tags(StrMap::from_entries(entries))
    }
}

impl<K: AsRef<str>, V: AsRef<str>> Extend<(K, V)> for Tags {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, entries: I) {
        for (k, v) in entries {
            self.insert(k, v);
        }
    }
}

impl From<&BTreeMap<String, String>> for Tags {
    fn from(map: &BTreeMap<String, String>) -> Self {
        Tags(StrMap::from(map))
    }
}

impl From<BTreeMap<String, String>> for Tags {
    fn from(map: BTreeMap<String, String>) -> Self {
        Tags(StrMap::from(&map))
    }
}

impl<const N: usize> From<[(&str, &str); N]> for Tags {
    fn from(entries: [(&str, &str); N]) -> Self {
        entries.into_iter().collect()
    }
}

impl From<&Tags> for BTreeMap<String, String> {
    fn from(tags: &Tags) -> Self {
        tags.to_map()
    }
}

impl From<Tags> for BTreeMap<String, String> {
    fn from(tags: Tags) -> Self {
        tags.to_map()
    }
}

impl PartialEq<BTreeMap<String, String>> for Tags {
    fn eq(&self, map: &BTreeMap<String, String>) -> bool {
        self.0.equals(map)
    }
}

impl PartialEq<Tags> for BTreeMap<String, String> {
    fn eq(&self, tags: &Tags) -> bool {
        tags.0.equals(self)
    }
}

impl fmt::Debug for Tags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl Serialize for Tags {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self)
    }
}

impl<'de> Deserialize<'de> for Tags {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        BTreeMap::<String, String>::deserialize(deserializer).map(Tags::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    /// Every way of making and changing tags ends as the `BTreeMap` made and changed the
    /// same way: same entries, same order, same JSON.
    #[test]
    fn tags_read_and_change_as_the_map_they_stand_for() {
        let given = [("b", "2"), ("a", "1"), ("c", ""), ("a", "one")];
        let mut tags: Tags = given.into_iter().collect();
        let mut expected: BTreeMap<String, String> = given
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        assert_eq!(tags, expected);
        assert_eq!(tags.to_map(), expected);
        assert_eq!(
            (tags.len(), tags.get("a"), tags.get("z")),
            (3, Some("one"), None)
        );
        assert!(tags.contains_key("c") && !tags.contains_key("d"));
        assert!(tags.has("a", "one") && tags.has("c", ""));
        assert!(!tags.has("a", "1") && !tags.has("a", "on") && !tags.has("d", ""));

        let long = "x".repeat(300);
        for (k, v) in [
            ("b", long.as_str()),
            ("0", "first"),
            ("d", "last"),
            ("b", ""),
        ] {
            tags.insert(k, v);
            expected.insert(k.to_owned(), v.to_owned());
            assert_eq!(tags, expected, "after inserting {k}");
        }
        assert_eq!(tags.remove("0"), expected.remove("0"));
        assert_eq!(tags.remove("zz"), None);
        tags.retain(|k, _| k != "c");
        expected.retain(|k, _| k != "c");
        assert_eq!(tags, expected);
        tags.extend([("e", "5"), ("a", "again")]);
        expected.extend(map(&[("e", "5"), ("a", "again")]));
        assert_eq!(tags, expected);
        assert_eq!(
            tags.iter().collect::<Vec<_>>(),
            expected
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect::<Vec<_>>()
        );
        assert_eq!(tags.keys().collect::<Vec<_>>(), ["a", "b", "d", "e"]);

        let json = serde_json::to_string(&tags).unwrap_or_default();
        assert_eq!(json, serde_json::to_string(&expected).unwrap_or_default());
        let back: Tags = serde_json::from_str(&json).unwrap_or_default();
        assert_eq!(back, tags);
        assert_eq!(format!("{tags:?}"), format!("{expected:?}"));
        assert_eq!(Tags::from(&expected), tags);
        assert_ne!(tags, map(&[("a", "again")]));

        tags.clear();
        assert!(tags.is_empty() && tags == BTreeMap::new());
    }
}
