//! [`Attrs`]: a listed object's attributes in one buffer.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value as Json;

use crate::value::Str;

/// The attributes of a cloud object, by Terraform attribute name, in name order.
///
/// The entries lie one after another in one buffer, and names of up to [`Str::INLINE`]
/// bytes (nearly all of them) are held in place: a plan reads the attributes of thousands
/// of listed objects, and a map with a node and a string allocation per name costs a cache
/// miss for each of them there. Objects have a few dozen attributes at most: lookups
/// search the sorted names, and an insert or removal moves the entries after it.
///
/// It reads as a `BTreeMap<String, serde_json::Value>` does ([`Attrs::get`],
/// [`Attrs::iter`], [`Attrs::insert`], ...), converts from and to one, and serialises as
/// the same JSON object.
#[derive(Clone, Default, PartialEq)]
pub struct Attrs(Vec<(Str, Json)>);

impl Attrs {
    /// No attributes.
    pub fn new() -> Self {
        Attrs(Vec::new())
    }

    /// Where `name` is, or would be inserted.
    fn find(&self, name: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(name))
    }

    /// The value of attribute `name`. A scan for an equal name: for the few attributes
    /// an object has, cheaper than ordering names in a search.
    pub fn get(&self, name: &str) -> Option<&Json> {
        self.0
            .iter()
            .find(|(k, _)| k.as_str() == name)
            .map(|(_, v)| v)
    }

    /// The value of attribute `name`, to change in place.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Json> {
        self.0
            .iter_mut()
            .find(|(k, _)| k.as_str() == name)
            .map(|(_, v)| v)
    }

    /// Whether the object has attribute `name`.
    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Sets attribute `name`, returning its earlier value.
    pub fn insert(&mut self, name: impl Into<Str>, value: impl Into<Json>) -> Option<Json> {
        let name = name.into();
        let value = value.into();
        match self.find(&name) {
            Ok(at) => self.0.get_mut(at).map(|(_, v)| std::mem::replace(v, value)),
            Err(at) => {
                self.0.insert(at, (name, value));
                None
            }
        }
    }

    /// Removes attribute `name`, returning its value.
    pub fn remove(&mut self, name: &str) -> Option<Json> {
        let at = self.find(name).ok()?;
        Some(self.0.remove(at).1)
    }

    /// Keeps the attributes `keep` accepts.
    pub fn retain(&mut self, mut keep: impl FnMut(&str, &mut Json) -> bool) {
        self.0.retain_mut(|(k, v)| keep(k, v));
    }

    /// How many attributes there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The attributes in name order.
    pub fn iter(&self) -> AttrsIter<'_> {
        AttrsIter(self.0.iter())
    }

    /// The attributes in name order, their values to change in place.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&str, &mut Json)> {
        self.0.iter_mut().map(|(k, v)| (k.as_str(), v))
    }

    /// The names in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.iter().map(|(k, _)| k)
    }

    /// The values, in the order of their names.
    pub fn values(&self) -> impl Iterator<Item = &Json> {
        self.iter().map(|(_, v)| v)
    }

    /// The attributes as a `BTreeMap`.
    pub fn to_map(&self) -> BTreeMap<String, Json> {
        self.iter()
            .map(|(k, v)| (k.to_owned(), v.clone()))
            .collect()
    }
}

/// The attributes of an [`Attrs`], in name order.
#[derive(Clone, Debug)]
pub struct AttrsIter<'a>(std::slice::Iter<'a, (Str, Json)>);

impl<'a> Iterator for AttrsIter<'a> {
    type Item = (&'a str, &'a Json);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k.as_str(), v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

/// The value of attribute `name`, `null` when there is none (as a JSON object's index).
impl std::ops::Index<&str> for Attrs {
    type Output = Json;

    fn index(&self, name: &str) -> &Json {
        static NULL: Json = Json::Null;
        self.get(name).unwrap_or(&NULL)
    }
}

impl<'a> IntoIterator for &'a Attrs {
    type Item = (&'a str, &'a Json);
    type IntoIter = AttrsIter<'a>;

    fn into_iter(self) -> AttrsIter<'a> {
        self.iter()
    }
}

impl IntoIterator for Attrs {
    type Item = (String, Json);
    type IntoIter =
        std::iter::Map<std::vec::IntoIter<(Str, Json)>, fn((Str, Json)) -> (String, Json)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter().map(|(k, v)| (k.as_str().to_owned(), v))
    }
}

/// Sorted by name; of a name given more than once, the last value is kept (as a
/// `BTreeMap` collects).
impl<K: Into<Str>, V: Into<Json>> FromIterator<(K, V)> for Attrs {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(entries: I) -> Self {
        Attrs(crate::value::sorted_last_wins(
            entries
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        ))
    }
}

impl<K: Into<Str>, V: Into<Json>> Extend<(K, V)> for Attrs {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, entries: I) {
        for (k, v) in entries {
            self.insert(k, v);
        }
    }
}

impl<K: Into<Str>, V: Into<Json>, const N: usize> From<[(K, V); N]> for Attrs {
    fn from(entries: [(K, V); N]) -> Self {
        entries.into_iter().collect()
    }
}

impl From<BTreeMap<String, Json>> for Attrs {
    fn from(map: BTreeMap<String, Json>) -> Self {
        // A BTreeMap is sorted, without repeats.
        Attrs(map.into_iter().map(|(k, v)| (Str::from(k), v)).collect())
    }
}

impl From<&BTreeMap<String, Json>> for Attrs {
    fn from(map: &BTreeMap<String, Json>) -> Self {
        Attrs(
            map.iter()
                .map(|(k, v)| (Str::from(k.as_str()), v.clone()))
                .collect(),
        )
    }
}

impl From<Attrs> for BTreeMap<String, Json> {
    fn from(attrs: Attrs) -> Self {
        attrs.into_iter().collect()
    }
}

impl PartialEq<BTreeMap<String, Json>> for Attrs {
    fn eq(&self, map: &BTreeMap<String, Json>) -> bool {
        self.len() == map.len()
            && self
                .iter()
                .zip(map)
                .all(|((k, v), (mk, mv))| k == mk.as_str() && v == mv)
    }
}

impl fmt::Debug for Attrs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for Attrs {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self)
    }
}

impl<'de> Deserialize<'de> for Attrs {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        BTreeMap::<String, Json>::deserialize(deserializer).map(Attrs::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every way of making and changing attributes ends as the `BTreeMap` made and
    /// changed the same way: same entries, same order, same JSON.
    #[test]
    fn attributes_read_and_change_as_the_map_they_stand_for() {
        let given = [
            ("size", json!(1)),
            ("a_name_longer_than_twenty_four_bytes", json!("long")),
            ("cidr", json!("10.0.0.0/16")),
            ("size", json!(2)),
        ];
        let mut attrs: Attrs = given.iter().cloned().collect();
        let mut expected: BTreeMap<String, Json> = given
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect();
        assert_eq!(attrs, expected);
        assert_eq!(attrs.to_map(), expected);
        assert_eq!((attrs.len(), attrs.get("size")), (3, Some(&json!(2))));
        assert!(attrs.contains_key("cidr") && !attrs.contains_key("cid"));
        assert_eq!(attrs.get("zzz"), None);

        for (k, v) in [("b", json!(true)), ("0", json!([1])), ("b", json!(null))] {
            assert_eq!(
                attrs.insert(k, v.clone()),
                expected.insert(k.to_owned(), v),
                "{k}"
            );
            assert_eq!(attrs, expected, "after inserting {k}");
        }
        assert_eq!(attrs.remove("0"), expected.remove("0"));
        assert_eq!(attrs.remove("zz"), None);
        if let (Some(a), Some(e)) = (attrs.get_mut("size"), expected.get_mut("size")) {
            *a = json!(3);
            *e = json!(3);
        }
        attrs.retain(|k, _| k != "cidr");
        expected.retain(|k, _| k != "cidr");
        assert_eq!(attrs, expected);
        attrs.extend([("e", json!("5")), ("size", json!(4))]);
        expected.extend([("e".to_owned(), json!("5")), ("size".to_owned(), json!(4))]);
        assert_eq!(attrs, expected);
        let pairs: Vec<(&str, &Json)> = expected.iter().map(|(k, v)| (k.as_str(), v)).collect();
        assert_eq!(attrs.iter().collect::<Vec<_>>(), pairs);

        let json = serde_json::to_string(&attrs).unwrap_or_default();
        assert_eq!(json, serde_json::to_string(&expected).unwrap_or_default());
        let back: Attrs = serde_json::from_str(&json).unwrap_or_default();
        assert_eq!(back, attrs);
        assert_eq!(format!("{attrs:?}"), format!("{expected:?}"));
        assert_eq!(Attrs::from(&expected), attrs);
        assert_eq!(BTreeMap::from(attrs.clone()), expected);
        attrs.remove("e");
        assert_ne!(attrs, expected);
    }
}
