//! [`ResourceIndex`]: one listed type, indexed so that each query reads only its
//! candidates.

use std::collections::HashMap;
use std::sync::Arc;

use super::{ListQuery, Resource};
use crate::key::{KeyHashing, parts_hash};

/// Positions of the objects filed under each hash: one table probe reads an entry, and an
/// entry of one object (an ID, a name, a `Name` tag) holds its position in place.
#[derive(Debug, Default)]
struct Index {
    entries: HashMap<u64, Entry, KeyHashing>,
    /// The positions of the entries with more than one object, one run after another.
    positions: Vec<u32>,
}

/// One hash's positions: `len` of them from `start` in [`Index::positions`], or the one
/// position `start` itself when `len` is 1. Eight bytes, so that the table of a large
/// listing stays small enough to be read from cache.
#[derive(Clone, Copy, Debug)]
struct Entry {
    start: u32,
    len: u32,
}

impl Index {
    /// The index of positions filed under each hash, ascending.
    fn new(filed: Filing) -> Self {
        let mut index = Index {
            entries: HashMap::with_capacity_and_hasher(filed.len(), KeyHashing::default()),
            positions: Vec::new(),
        };
        for (hash, list) in filed {
            let entry = match list.as_slice() {
                [one] => Entry {
                    start: *one,
                    len: 1,
                },
                _ => {
                    let start = pos(index.positions.len());
                    index.positions.extend_from_slice(&list);
                    Entry {
                        start,
                        len: pos(list.len()),
                    }
                }
            };
            index.entries.insert(hash, entry);
        }
        index
    }

    /// The positions filed under `hash`.
    fn get(&self, hash: u64) -> &[u32] {
        match self.entries.get(&hash) {
            None => &[],
            Some(e) if e.len == 1 => std::slice::from_ref(&e.start),
            Some(e) => {
                let start = e.start as usize;
                self.positions
                    .get(start..start + e.len as usize)
                    .unwrap_or_default()
            }
        }
    }
}

/// A position in a listing, as the index keeps it (listings hold far fewer than 2^32
/// objects).
fn pos(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

/// The indexes being filled: positions by hash.
type Filing = HashMap<u64, Vec<u32>, KeyHashing>;

/// Every object of one type that a backend listed, sorted by ID and indexed by ID, name,
/// parent and tag, so that a run's thousands of queries (one per task's find) each read
/// only their candidates instead of the whole list.
///
/// A backend that fetches a type once per run keeps one of these per fetch and answers
/// every [`ListQuery`] of the type from it ([`ResourceIndex::answer`]). The indexes hold
/// hashes of the strings; every candidate is checked against the whole query before it is
/// returned, so a hash collision costs a check, never a wrong answer.
#[derive(Debug)]
pub struct ResourceIndex<K> {
    /// Shared, so that an answer can lend objects instead of copying them
    /// ([`ResourceIndex::shared`]).
    items: Vec<Arc<Resource<K>>>,
    by_id: Index,
    by_name: Index,
    by_parent: Index,
    /// By tag key and value.
    by_tag: Index,
    /// By tag key alone (for filters accepting any value).
    by_tag_key: Index,
}

impl<K> Default for ResourceIndex<K> {
    fn default() -> Self {
        ResourceIndex {
            items: Vec::new(),
            by_id: Index::default(),
            by_name: Index::default(),
            by_parent: Index::default(),
            by_tag: Index::default(),
            by_tag_key: Index::default(),
        }
    }
}

fn file(index: &mut Filing, parts: &[&str], i: usize) {
    index.entry(parts_hash(parts)).or_default().push(pos(i));
}

/// The objects a query may match, before the check against the whole query.
enum Candidates<'a> {
    /// Every object (the query uses no index).
    All,
    /// One index entry: ascending, without repeats.
    One(&'a [u32]),
    /// The union of several entries (any of several IDs, names or tag values).
    Union(Vec<u32>),
}

impl Candidates<'_> {
    fn len(&self, all: usize) -> usize {
        match self {
            Candidates::All => all,
            Candidates::One(c) => c.len(),
            Candidates::Union(c) => c.len(),
        }
    }
}

/// The candidates' positions, ascending.
enum Picked<'a> {
    All(std::ops::Range<usize>),
    One(std::slice::Iter<'a, u32>),
    Union(std::vec::IntoIter<u32>),
}

impl Iterator for Picked<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        match self {
            Picked::All(r) => r.next(),
            Picked::One(c) => c.next().map(|&i| i as usize),
            Picked::Union(c) => c.next().map(|i| i as usize),
        }
    }
}

impl<K: PartialEq> ResourceIndex<K> {
    /// Indexes `items` (in any order).
    pub fn new(mut items: Vec<Resource<K>>) -> Self {
        items.sort_by(|a, b| a.id.cmp(&b.id));
        let [
            mut by_id,
            mut by_name,
            mut by_parent,
            mut by_tag,
            mut by_tag_key,
        ] = <[Filing; 5]>::default();
        for (i, r) in items.iter().enumerate() {
            file(&mut by_id, &[r.id.as_str()], i);
            if let Some(n) = &r.name {
                file(&mut by_name, &[n.as_str()], i);
            }
            if let Some(p) = &r.parent {
                file(&mut by_parent, &[p.as_str()], i);
            }
            for (k, v) in &r.tags {
                file(&mut by_tag, &[k, v], i);
                file(&mut by_tag_key, &[k], i);
            }
        }
        ResourceIndex {
            items: items.into_iter().map(Arc::new).collect(),
            by_id: Index::new(by_id),
            by_name: Index::new(by_name),
            by_parent: Index::new(by_parent),
            by_tag: Index::new(by_tag),
            by_tag_key: Index::new(by_tag_key),
        }
    }

    /// How many objects are indexed.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether no object is indexed.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Every indexed object, sorted by ID.
    pub fn items(&self) -> &[Arc<Resource<K>>] {
        &self.items
    }

    /// The objects matching `query`, sorted by ID, borrowed from the index.
    pub fn matching<'a>(
        &'a self,
        query: &'a ListQuery<K>,
    ) -> impl Iterator<Item = &'a Arc<Resource<K>>> {
        let picked = match self.candidates(query) {
            Candidates::All => Picked::All(0..self.items.len()),
            Candidates::One(c) => Picked::One(c.iter()),
            Candidates::Union(mut c) => {
                c.sort_unstable();
                c.dedup();
                Picked::Union(c.into_iter())
            }
        };
        picked
            .filter_map(|i| self.items.get(i))
            .filter(move |r| query.matches(r))
    }

    /// The objects matching `query`, sorted by ID: what [`super::ResourceCloud::list`]
    /// returns.
    pub fn answer(&self, query: &ListQuery<K>) -> Vec<Resource<K>>
    where
        K: Clone,
    {
        self.matching(query).map(|r| Resource::clone(r)).collect()
    }

    /// The objects matching `query`, sorted by ID, shared with the index: what
    /// [`super::ResourceCloud::list_shared`] returns.
    pub fn shared(&self, query: &ListQuery<K>) -> Vec<Arc<Resource<K>>> {
        self.matching(query).cloned().collect()
    }

    /// The objects of `resource_type` carrying every `(key, value)` pair of `tags`,
    /// sorted by ID, shared with the index: what [`super::ResourceCloud::list_tagged`]
    /// returns (the answer to a query with those filters, [`ResourceIndex::shared`],
    /// without the query).
    ///
    /// The pairs are looked up last first, and the lookup stops at an entry of at most one
    /// object: a caller passing the most selective pair last ([`super::NameTags::pairs`]
    /// passes the object's name last) has one pair hashed and looked up.
    pub fn tagged(&self, resource_type: K, tags: &[(&str, &str)]) -> Vec<Arc<Resource<K>>> {
        self.tagged_iter(resource_type, tags).cloned().collect()
    }

    /// The first of [`ResourceIndex::tagged`]'s objects (the one with the lowest ID),
    /// without collecting the others.
    pub fn first_tagged(
        &self,
        resource_type: K,
        tags: &[(&str, &str)],
    ) -> Option<&Arc<Resource<K>>> {
        self.tagged_iter(resource_type, tags).next()
    }

    fn tagged_iter<'a, 't>(
        &'a self,
        resource_type: K,
        tags: &'t [(&'t str, &'t str)],
    ) -> impl Iterator<Item = &'a Arc<Resource<K>>> + use<'a, 't, K> {
        let mut picked: Option<&[u32]> = None;
        for (k, v) in tags.iter().rev() {
            let c = self.by_tag.get(parts_hash(&[k, v]));
            if picked.is_none_or(|p| c.len() < p.len()) {
                picked = Some(c);
            }
            if c.len() <= 1 {
                break;
            }
        }
        // The picked entry's positions, or every position when no pair was given.
        let all = if picked.is_none() {
            self.items.len()
        } else {
            0
        };
        let candidates = picked
            .into_iter()
            .flatten()
            .map(|&i| i as usize)
            .chain(0..all)
            .filter_map(|i| self.items.get(i));
        candidates.filter(move |r| {
            r.resource_type == resource_type && tags.iter().all(|(k, v)| r.tags.has(k, v))
        })
    }

    /// The most selective index entry (or union of entries) that includes every object
    /// matching `query`.
    fn candidates(&self, query: &ListQuery<K>) -> Candidates<'_> {
        fn look<'a>(index: &'a Index, parts: &[&str]) -> &'a [u32] {
            index.get(parts_hash(parts))
        }
        fn any<'a, 'k>(
            index: &'a Index,
            keys: impl ExactSizeIterator<Item = [&'k str; 2]>,
            parts: usize,
        ) -> Candidates<'a> {
            let one = keys.len() == 1;
            let mut union = Vec::new();
            for k in keys {
                let c = look(index, &k[..parts]);
                if one {
                    return Candidates::One(c);
                }
                union.extend_from_slice(c);
            }
            Candidates::Union(union)
        }
        fn consider<'a>(best: &mut Candidates<'a>, c: Candidates<'a>, all: usize) {
            if matches!(best, Candidates::All) || c.len(all) < best.len(all) {
                *best = c;
            }
        }
        let all = self.items.len();
        let mut best = Candidates::All;
        if !query.ids.is_empty() {
            let c = any(&self.by_id, query.ids.iter().map(|k| [k.as_str(), ""]), 1);
            consider(&mut best, c, all);
        }
        if !query.names.is_empty() {
            let c = any(
                &self.by_name,
                query.names.iter().map(|k| [k.as_str(), ""]),
                1,
            );
            consider(&mut best, c, all);
        }
        if let Some(p) = &query.parent {
            let c = Candidates::One(look(&self.by_parent, &[p.as_str()]));
            consider(&mut best, c, all);
        }
        for f in &query.tags {
            let c = if f.values.is_empty() {
                Candidates::One(look(&self.by_tag_key, &[f.key.as_str()]))
            } else {
                any(
                    &self.by_tag,
                    f.values.iter().map(|v| [f.key.as_str(), v.as_str()]),
                    2,
                )
            };
            consider(&mut best, c, all);
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::TagFilter;

    fn object(
        id: &str,
        name: Option<&str>,
        parent: Option<&str>,
        tags: &[(&str, &str)],
    ) -> Resource<&'static str> {
        let mut r = Resource::new("subnet", id);
        r.name = name.map(str::to_owned);
        r.parent = parent.map(str::to_owned);
        r.tags = tags
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        r
    }

    fn ids<'a>(rs: impl IntoIterator<Item = &'a Resource<&'static str>>) -> Vec<&'a str> {
        rs.into_iter().map(|r| r.id.as_str()).collect()
    }

    /// The indexed answer is the plain filter of the whole list, sorted by ID, for every
    /// kind of criterion (one key or several) and their combinations.
    #[test]
    fn indexed_answers_equal_filtering_the_whole_list() {
        let items = vec![
            object(
                "s-3",
                Some("c"),
                Some("vpc-1"),
                &[("Name", "c"), ("Role", "x")],
            ),
            object("s-1", Some("a"), Some("vpc-1"), &[("Name", "a")]),
            object(
                "s-2",
                Some("b"),
                Some("vpc-2"),
                &[("Name", "b"), ("Role", "x")],
            ),
            object("s-4", None, None, &[]),
        ];
        let index = ResourceIndex::new(items.clone());
        let tag = |k: &str, vs: &[&str]| {
            let mut f = TagFilter::exists(k);
            f.values = vs.iter().map(|v| (*v).to_owned()).collect();
            f
        };
        let q = || ListQuery::new("subnet");
        let queries = [
            q(),
            ListQuery::new("vpc"),
            q().with_ids(["s-2"]),
            q().with_ids(["s-2", "s-9"]),
            q().with_ids(["s-2", "s-2"]),
            q().with_ids(["s-9"]),
            q().with_names(["b"]),
            q().with_names(["a", "c"]),
            q().with_parent("vpc-1"),
            q().with_tag(tag("Role", &[])),
            q().with_tag(tag("Name", &["c"])),
            q().with_tag(tag("Name", &["b", "c"])),
            q().with_tag(tag("Name", &["zzz"])),
            q().with_parent("vpc-1").with_tag(tag("Role", &["x"])),
            q().with_names(["c"]).with_tag(tag("Role", &["x"])),
            q().with_ids(["s-1", "s-3"]).with_tag(tag("Name", &["a"])),
            q().with_tag(tag("Missing", &[])),
        ];
        for q in &queries {
            let mut expected: Vec<&Resource<&'static str>> =
                items.iter().filter(|r| q.matches(r)).collect();
            expected.sort_by(|a, b| a.id.cmp(&b.id));
            let expected = ids(expected);
            assert_eq!(ids(&index.answer(q)), expected, "{q:?}");
            assert_eq!(ids(index.shared(q).iter().map(|r| &**r)), expected, "{q:?}");
            assert_eq!(ids(index.matching(q).map(|r| &**r)), expected, "{q:?}");
        }
        // A lookup by tag pairs answers as the query with those filters.
        let pairs: [&[(&str, &str)]; 8] = [
            &[],
            &[("Name", "c")],
            &[("Role", "x")],
            &[("Role", "x"), ("Name", "b")],
            &[("Name", "b"), ("Role", "x")],
            &[("Name", "zzz"), ("Role", "x")],
            &[("Name", "b"), ("Name", "c")],
            &[("Name", "zzz")],
        ];
        for tags in pairs {
            let mut query = q();
            query.tags = tags
                .iter()
                .map(|(k, v)| TagFilter::equals(*k, *v))
                .collect();
            assert_eq!(
                ids(index.tagged("subnet", tags).iter().map(|r| &**r)),
                ids(&index.answer(&query)),
                "{tags:?}"
            );
            assert!(index.tagged("vpc", tags).is_empty(), "{tags:?}");
            assert_eq!(
                index.first_tagged("subnet", tags).map(|r| &r.id),
                index.tagged("subnet", tags).first().map(|r| &r.id),
                "{tags:?}"
            );
        }
        assert_eq!(ids(&index.answer(&q())), ["s-1", "s-2", "s-3", "s-4"]);
        assert_eq!((index.len(), index.is_empty()), (4, false));
    }
}
