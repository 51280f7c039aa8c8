//! Setting and unsetting one field of an API object by its path, as kOps' `--set` and
//! `--unset` flags do (`kops edit cluster --set spec.kubernetesVersion=1.34.1`).
//!
//! A path is the field's JSON names joined by dots, with `[N]` to pick a list element
//! (`spec.etcdClusters[0].name`); `[N]` one past the end adds an element. The value is
//! text, read as the field's type: a string, a flag (`true`, `false`, `1`, `0`, ...), an
//! integer; for a list, comma-separated items added to the list; for a map,
//! `key=value` (added, or replaced), and for a map of lists, `key=a,b`. A field of
//! another type is set with an empty value only when it is a map or an object (which then
//! stays as it is), as in kOps.
//!
//! The object is checked by decoding it again, which the API types do strictly: a path
//! naming no field is refused as such, and a value that is not of the field's type names
//! the field.
//!
//! ```
//! use kops_api::fields::{set_field, unset_field};
//! use kops_api::v1alpha2::Cluster;
//!
//! let cluster = Cluster::new("demo.example.com");
//! let cluster = set_field(&cluster, "spec.kubernetesVersion", "1.34.1").unwrap();
//! let cluster = set_field(&cluster, "spec.cloudLabels", "team=platform").unwrap();
//! assert_eq!(cluster.spec.kubernetes_version.as_deref(), Some("1.34.1"));
//! let cluster = unset_field(&cluster, "spec.kubernetesVersion").unwrap();
//! assert_eq!(cluster.spec.kubernetes_version, None);
//! assert!(set_field(&cluster, "spec.kubernetesVersio", "1").is_err());
//! ```

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::{Error, Result};

/// One step of a path: a field name, then the list indexes after it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Step {
    name: String,
    indexes: Vec<usize>,
}

/// Where a path leads in a JSON document.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Slot {
    Field(String),
    Index(usize),
}

fn field_error(path: &str, message: impl Into<String>) -> Error {
    Error::Field {
        path: path.to_owned(),
        message: message.into(),
    }
}

fn parse_path(path: &str) -> Result<Vec<Slot>> {
    if path.trim().is_empty() {
        return Err(field_error(path, "empty field path"));
    }
    let mut slots = Vec::new();
    for part in path.split('.') {
        let (name, rest) = match part.find('[') {
            Some(at) => part.split_at(at),
            None => (part, ""),
        };
        if name.is_empty() {
            return Err(field_error(path, format!("empty field name in {part:?}")));
        }
        let mut step = Step {
            name: name.to_owned(),
            indexes: Vec::new(),
        };
        let mut rest = rest;
        while !rest.is_empty() {
            let inner = rest
                .strip_prefix('[')
                .and_then(|r| r.split_once(']'))
                .and_then(|(n, tail)| n.parse::<usize>().ok().map(|n| (n, tail)));
            let Some((n, tail)) = inner else {
                return Err(field_error(
                    path,
                    format!("{part:?}: a list index is written [N]"),
                ));
            };
            step.indexes.push(n);
            rest = tail;
        }
        slots.push(Slot::Field(step.name));
        slots.extend(step.indexes.into_iter().map(Slot::Index));
    }
    Ok(slots)
}

/// The value at `slots`, made (empty objects, a new last list element) where missing.
fn reach<'a>(root: &'a mut Value, slots: &[Slot], path: &str) -> Result<&'a mut Value> {
    let mut at = root;
    for (i, slot) in slots.iter().enumerate() {
        // What the next step needs this one to hold.
        let wants_list = matches!(slots.get(i + 1), Some(Slot::Index(_)));
        let empty = || {
            if wants_list {
                Value::Array(Vec::new())
            } else {
                Value::Object(Map::new())
            }
        };
        at = match slot {
            Slot::Field(name) => {
                if at.is_null() {
                    *at = Value::Object(Map::new());
                }
                let Value::Object(map) = at else {
                    return Err(field_error(
                        path,
                        format!("{name}: its parent is not an object"),
                    ));
                };
                let next = map.entry(name.clone()).or_insert(Value::Null);
                if next.is_null() && i + 1 < slots.len() {
                    *next = empty();
                }
                next
            }
            Slot::Index(n) => {
                if at.is_null() {
                    *at = Value::Array(Vec::new());
                }
                let Value::Array(list) = at else {
                    return Err(field_error(path, format!("[{n}]: not a list")));
                };
                if *n == list.len() {
                    list.push(if i + 1 < slots.len() {
                        empty()
                    } else {
                        Value::Null
                    });
                }
                let len = list.len();
                list.get_mut(*n).ok_or_else(|| {
                    field_error(
                        path,
                        format!("index {n} is past the end of a list of {len}"),
                    )
                })?
            }
        };
    }
    Ok(at)
}

/// Go's `strconv.ParseBool`.
fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// One item of a list or a map as each type it may be, most specific first: a field that
/// takes either a number or a text (`maxSurge`) gets the number, as kOps' `intstr.Parse`
/// gives it; a text field refuses the number and gets the text.
fn scalars(text: &str) -> Vec<Value> {
    let mut out = Vec::new();
    if let Ok(i) = text.parse::<i64>() {
        out.push(Value::from(i));
    }
    if let Some(b) = parse_bool(text) {
        out.push(Value::Bool(b));
    }
    out.push(Value::String(text.to_owned()));
    out
}

/// What the field at a path may become for `text`, given what it holds now, in the order
/// they are tried.
fn candidates(current: &Value, text: &str) -> Vec<Value> {
    let mut out = scalars(text);
    // A list: the items added to it.
    let existing = match current {
        Value::Array(items) => items.clone(),
        _ => Vec::new(),
    };
    let tokens: Vec<&str> = text.split(',').collect();
    let typed: [fn(&str) -> Option<Value>; 3] = [
        |t| t.parse::<i64>().ok().map(Value::from),
        |t| parse_bool(t).map(Value::Bool),
        |t| Some(Value::String(t.to_owned())),
    ];
    for item in typed {
        if let Some(items) = tokens.iter().map(|t| item(t)).collect::<Option<Vec<_>>>() {
            let mut all = existing.clone();
            all.extend(items);
            out.push(Value::Array(all));
        }
    }
    // A map: one entry added or replaced.
    let map = match current {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    if let Some((key, value)) = text.split_once('=') {
        for v in scalars(value) {
            let mut m = map.clone();
            m.insert(key.to_owned(), v);
            out.push(Value::Object(m));
        }
        let mut m = map.clone();
        m.insert(
            key.to_owned(),
            Value::Array(
                value
                    .split(',')
                    .map(|s| Value::String(s.to_owned()))
                    .collect(),
            ),
        );
        out.push(Value::Object(m));
    }
    // An empty value leaves a map or an object as it is.
    if text.is_empty() {
        out.push(Value::Object(map));
    }
    out
}

/// Decodes `doc` as `T`; on failure, the error's field path and message.
fn decode<T: DeserializeOwned>(doc: Value) -> std::result::Result<T, (String, String)> {
    serde_path_to_error::deserialize(doc).map_err(|e| (e.path().to_string(), e.inner().to_string()))
}

/// Whether a decoding error says the path names no field.
fn is_unknown(message: &str) -> bool {
    message.contains("unknown field")
}

fn to_json<T: Serialize>(object: &T) -> Result<Value> {
    serde_json::to_value(object).map_err(|e| Error::Serialize {
        what: "the object whose field is set".into(),
        message: e.to_string(),
    })
}

/// `object` with the field at `path` set from `value` (see the module docs).
pub fn set_field<T: Serialize + DeserializeOwned>(
    object: &T,
    path: &str,
    value: &str,
) -> Result<T> {
    let slots = parse_path(path)?;
    let doc = to_json(object)?;
    let current = {
        let mut probe = doc.clone();
        reach(&mut probe, &slots, path)?.clone()
    };
    let mut first_error = None;
    for candidate in candidates(&current, value) {
        let mut next = doc.clone();
        *reach(&mut next, &slots, path)? = candidate;
        match decode::<T>(next) {
            Ok(t) => return Ok(t),
            Err((_, message)) if is_unknown(&message) => {
                return Err(field_error(path, "no such field"));
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let detail = first_error.map(|(_, m)| m).unwrap_or_default();
    Err(field_error(
        path,
        format!("{value:?} is not a value of this field: {detail}"),
    ))
}

/// `object` with the field at `path` removed (unset: its default). Unsetting a field that
/// is not set changes nothing; a path naming no field is refused.
pub fn unset_field<T: Serialize + DeserializeOwned>(object: &T, path: &str) -> Result<T> {
    let slots = parse_path(path)?;
    let Some((last, parents)) = slots.split_last() else {
        return Err(field_error(path, "empty field path"));
    };
    let mut doc = to_json(object)?;
    // Whether the field exists: some value of it decodes, or fails for its type only.
    let known = [
        Value::String(String::new()),
        Value::Object(Map::new()),
        Value::Array(Vec::new()),
        Value::from(0),
        Value::Bool(false),
    ]
    .into_iter()
    .any(|probe| {
        let mut next = doc.clone();
        match reach(&mut next, &slots, path) {
            Ok(slot) => {
                *slot = probe;
                !matches!(decode::<T>(next), Err((_, m)) if is_unknown(&m))
            }
            Err(_) => false,
        }
    });
    if !known {
        return Err(field_error(path, "no such field"));
    }
    // Remove it where it is; a parent that is missing means it is not set.
    let mut at = &mut doc;
    for slot in parents {
        let next = match (slot, at) {
            (Slot::Field(name), Value::Object(m)) => m.get_mut(name),
            (Slot::Index(n), Value::Array(l)) => l.get_mut(*n),
            _ => None,
        };
        match next {
            Some(v) => at = v,
            None => return decode_or_field_error(doc, path),
        }
    }
    match (last, at) {
        (Slot::Field(name), Value::Object(m)) => {
            m.remove(name);
        }
        (Slot::Index(n), Value::Array(l)) if *n < l.len() => {
            l.remove(*n);
        }
        _ => {}
    }
    decode_or_field_error(doc, path)
}

fn decode_or_field_error<T: DeserializeOwned>(doc: Value, path: &str) -> Result<T> {
    decode(doc).map_err(|(at, message)| field_error(path, format!("{at}: {message}")))
}

/// `object` with `unsets` removed, then `sets` (`path=value` each) set, in order, as kOps
/// applies its `--unset` and `--set` flags.
pub fn apply_fields<T: Serialize + DeserializeOwned>(
    object: &T,
    sets: &[String],
    unsets: &[String],
) -> Result<T> {
    let mut out = decode_or_field_error(to_json(object)?, "")?;
    for path in unsets {
        out = unset_field(&out, path)?;
    }
    for set in sets {
        let Some((path, value)) = set.split_once('=') else {
            return Err(field_error(
                set,
                "a --set value is written path=value (spec.kubernetesVersion=1.34.1)",
            ));
        };
        out = set_field(&out, path, value)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v1alpha2::{Cluster, InstanceGroup};

    fn json<T: Serialize>(t: &T) -> Value {
        serde_json::to_value(t).unwrap()
    }

    #[test]
    fn values_take_the_fields_type() {
        let c = Cluster::new("c.example.com");
        let c = set_field(&c, "spec.kubernetesVersion", "1.34").unwrap();
        assert_eq!(json(&c)["spec"]["kubernetesVersion"], "1.34");
        // A string field keeps text that reads as a flag or a number.
        let c = set_field(&c, "spec.kubernetesVersion", "true").unwrap();
        assert_eq!(json(&c)["spec"]["kubernetesVersion"], "true");
        let c = set_field(&c, "spec.api.loadBalancer.crossZoneLoadBalancing", "T").unwrap();
        assert_eq!(
            json(&c)["spec"]["api"]["loadBalancer"]["crossZoneLoadBalancing"],
            true
        );
        let c = set_field(&c, "spec.kubelet.maxPods", "200").unwrap();
        assert_eq!(json(&c)["spec"]["kubelet"]["maxPods"], 200);
        // A text field keeps digits as text; a number-or-text field takes the number, or
        // the text when it is not one.
        let c = set_field(&c, "spec.kubernetesVersion", "134").unwrap();
        assert_eq!(json(&c)["spec"]["kubernetesVersion"], "134");
        let c = set_field(&c, "spec.rollingUpdate.maxSurge", "1").unwrap();
        assert_eq!(json(&c)["spec"]["rollingUpdate"]["maxSurge"], 1);
        let c = set_field(&c, "spec.rollingUpdate.maxUnavailable", "25%").unwrap();
        assert_eq!(json(&c)["spec"]["rollingUpdate"]["maxUnavailable"], "25%");
        // Lists grow by the items given; maps by the entry.
        let c = set_field(&c, "spec.sshAccess", "10.0.0.0/8,192.168.0.0/16").unwrap();
        let c = set_field(&c, "spec.sshAccess", "1.2.3.4/32").unwrap();
        assert_eq!(
            json(&c)["spec"]["sshAccess"],
            serde_json::json!(["10.0.0.0/8", "192.168.0.0/16", "1.2.3.4/32"])
        );
        let c = set_field(&c, "spec.cloudLabels", "team=a").unwrap();
        let c = set_field(&c, "spec.cloudLabels", "cost=b=c").unwrap();
        assert_eq!(
            json(&c)["spec"]["cloudLabels"],
            serde_json::json!({"team": "a", "cost": "b=c"})
        );
        // A list element by index; one past the end adds it.
        let c = set_field(&c, "spec.etcdClusters[0].name", "main").unwrap();
        let c = set_field(&c, "spec.etcdClusters[1].name", "events").unwrap();
        let c = set_field(&c, "spec.etcdClusters[0].name", "main2").unwrap();
        let names: Vec<&str> = c
            .spec
            .etcd_clusters
            .iter()
            .flatten()
            .filter_map(|e| e.name.as_deref())
            .collect();
        assert_eq!(names, ["main2", "events"]);
    }

    #[test]
    fn bad_paths_and_values_name_the_field() {
        let c = Cluster::new("c.example.com");
        for (path, value, needle) in [
            ("spec.kubernetesVersio", "1", "no such field"),
            ("spec.kubelet.maxPod", "1", "no such field"),
            ("spec.kubelet.maxPods", "many", "\"many\" is not a value"),
            ("spec.etcdClusters[3].name", "x", "past the end"),
            ("spec.etcdClusters[x].name", "x", "[N]"),
            ("", "x", "empty field path"),
        ] {
            let e = set_field(&c, path, value).unwrap_err().to_string();
            assert!(e.contains(needle), "{path}: {e}");
            assert!(e.starts_with(&format!("{path}:")), "{path}: {e}");
        }
        let e = apply_fields(&c, &["spec.kubernetesVersion".into()], &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("path=value"), "{e}");
    }

    #[test]
    fn unset_removes_the_field_and_refuses_unknown_paths() {
        let g = InstanceGroup::new("nodes");
        let g = apply_fields(
            &g,
            &[
                "spec.machineType=m5.large".into(),
                "spec.maxSize=3".into(),
                "spec.nodeLabels=a=b".into(),
            ],
            &[],
        )
        .unwrap();
        assert_eq!(g.spec.max_size, Some(3));
        let g = apply_fields(
            &g,
            &["spec.minSize=1".into()],
            &["spec.maxSize".into(), "spec.rootVolume.size".into()],
        )
        .unwrap();
        assert_eq!((g.spec.min_size, g.spec.max_size), (Some(1), None));
        assert_eq!(g.spec.machine_type.as_deref(), Some("m5.large"));
        // Unsetting something not set changes nothing; an unknown path is refused.
        assert_eq!(unset_field(&g, "spec.image").unwrap(), g);
        let e = unset_field(&g, "spec.imag").unwrap_err().to_string();
        assert!(e.contains("spec.imag: no such field"), "{e}");
    }
}
