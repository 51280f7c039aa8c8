//! Helpers between Terraform-named JSON attributes and SDK values.

use std::collections::BTreeMap;

use crate::cloud::ResourceType;
use crate::cloud::{CloudError as Error, CloudResult as Result, Tags};
use kops_tasks::resource::immutable_changes;
use serde_json::{Map, Value as Json};

pub(crate) type Attrs = BTreeMap<String, Json>;

pub(crate) fn s(a: &Attrs, k: &str) -> Option<String> {
    match a.get(k)? {
        Json::String(v) => Some(v.clone()),
        Json::Number(n) => Some(n.to_string()),
        Json::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

pub(crate) fn req(a: &Attrs, k: &str, rt: ResourceType) -> Result<String> {
    s(a, k).ok_or_else(|| Error::invalid(format!("{rt}.{k}"), "is required"))
}

pub(crate) fn b(a: &Attrs, k: &str) -> Option<bool> {
    match a.get(k)? {
        Json::Bool(v) => Some(*v),
        Json::String(v) => v.parse().ok(),
        _ => None,
    }
}

pub(crate) fn i(a: &Attrs, k: &str) -> Option<i64> {
    match a.get(k)? {
        Json::Number(n) => n.as_i64(),
        Json::String(v) => v.parse().ok(),
        _ => None,
    }
}

pub(crate) fn i32_(a: &Attrs, k: &str) -> Option<i32> {
    i(a, k).and_then(|v| i32::try_from(v).ok())
}

pub(crate) fn strs(a: &Attrs, k: &str) -> Vec<String> {
    strs_of(a.get(k))
}

/// The strings of a list attribute's value (or of a comma-separated string).
pub(crate) fn strs_of(v: Option<&Json>) -> Vec<String> {
    match v {
        Some(Json::Array(v)) => v
            .iter()
            .filter_map(|x| x.as_str().map(str::to_owned))
            .collect(),
        Some(Json::String(v)) if !v.is_empty() => v.split(',').map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

/// A nested block given as an object or as a list of one object.
pub(crate) fn obj(a: &Attrs, k: &str) -> Option<Attrs> {
    match a.get(k)? {
        Json::Object(m) => Some(to_attrs(m)),
        Json::Array(v) => v.first().and_then(Json::as_object).map(to_attrs),
        _ => None,
    }
}

/// Repeated blocks given as a list of objects or as one object.
pub(crate) fn objs(a: &Attrs, k: &str) -> Vec<Attrs> {
    match a.get(k) {
        Some(Json::Array(v)) => v.iter().filter_map(Json::as_object).map(to_attrs).collect(),
        Some(Json::Object(m)) => vec![to_attrs(m)],
        _ => Vec::new(),
    }
}

pub(crate) fn to_attrs(m: &Map<String, Json>) -> Attrs {
    m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

pub(crate) fn string_map(a: &Attrs, k: &str) -> BTreeMap<String, String> {
    match a.get(k) {
        Some(Json::Object(m)) => m
            .iter()
            .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
            .collect(),
        _ => BTreeMap::new(),
    }
}

/// Builds a JSON object from optional fields, leaving out the absent ones.
pub(crate) fn object<const N: usize>(fields: [(&str, Option<Json>); N]) -> Json {
    let mut m = Map::new();
    for (k, v) in fields {
        if let Some(v) = v {
            m.insert(k.to_owned(), v);
        }
    }
    Json::Object(m)
}

pub(crate) fn js(v: Option<&str>) -> Option<Json> {
    v.map(|s| Json::String(s.to_owned()))
}

pub(crate) fn jb(v: Option<bool>) -> Option<Json> {
    v.map(Json::Bool)
}

pub(crate) fn ji(v: Option<i32>) -> Option<Json> {
    v.map(|n| Json::from(i64::from(n)))
}

pub(crate) fn jlist<S: AsRef<str>>(v: impl IntoIterator<Item = S>) -> Json {
    Json::Array(
        v.into_iter()
            .map(|s| Json::String(s.as_ref().to_owned()))
            .collect(),
    )
}

/// `(added or changed, removed keys)` to go from `old` to `new` tags.
pub(crate) fn tag_diff(
    old: &Tags,
    new: &BTreeMap<String, String>,
) -> (BTreeMap<String, String>, Vec<String>) {
    let set = new
        .iter()
        .filter(|(k, v)| old.get(k) != Some(v.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let removed = old
        .keys()
        .filter(|k| !new.contains_key(*k))
        .map(str::to_owned)
        .collect();
    (set, removed)
}

/// Decodes `%XX` escapes (IAM returns policy documents URL-encoded).
pub(crate) fn url_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_owned();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_owned())
}

/// Attributes this backend cannot change in place were asked to change (what AWS offers
/// no update call for; the type's [`immutable`](crate::cloud::TypeFacts::immutable)
/// attributes are refused before, by [`check_immutable`]).
pub(crate) fn immutable(rt: ResourceType, keys: &Attrs) -> Error {
    let keys: Vec<&str> = keys.keys().map(String::as_str).collect();
    Error::immutable(rt.terraform_type(), &keys)
}

/// Refuses an update that changes an attribute the type's facts list as immutable, before
/// any call is made.
pub(crate) fn check_immutable(
    rt: ResourceType,
    current: &crate::cloud::Attrs,
    requested: &Attrs,
) -> Result<()> {
    let fixed = immutable_changes(rt, current, requested);
    if fixed.is_empty() {
        Ok(())
    } else {
        Err(Error::immutable(rt.terraform_type(), &fixed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_decoding_and_tag_diff() {
        assert_eq!(url_decode("%7B%22a%22%3A1%7D"), "{\"a\":1}");
        assert_eq!(url_decode("100%"), "100%");
        let old = Tags::from([("a", "1"), ("b", "2")]);
        let new = BTreeMap::from([("a".to_owned(), "1".to_owned()), ("c".into(), "3".into())]);
        let (set, rm) = tag_diff(&old, &new);
        assert_eq!(set, BTreeMap::from([("c".to_owned(), "3".to_owned())]));
        assert_eq!(rm, vec!["b".to_owned()]);
    }
}
