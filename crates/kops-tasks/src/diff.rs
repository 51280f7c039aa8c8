//! Field-level comparison of expected vs actual state.
//!
//! Rules (kOps' `BuildChanges`): a `Null` expected field is "don't care"; when the object
//! does not exist every non-null expected field is a change; references compare by the
//! identity of the referenced object (same task, or the same resolved output value); lists
//! and maps compare element-wise with the same rules; long text changes carry a unified diff.

use std::collections::HashMap;
use std::hash::BuildHasher;

use serde::{Deserialize, Serialize};

use crate::key::{TaskKey, TaskRef};
use crate::task::Found;
use crate::value::{Fields, Outputs, Value};

/// One changed field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FieldChange {
    /// The field name.
    pub field: String,
    /// The actual value (absent on create, or when the object lacks the field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old: Option<Value>,
    /// The expected value.
    pub new: Value,
    /// For long text: a unified diff of lines from old to new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

/// Turns a reference into the actual value it stands for, when known.
pub trait Resolver {
    /// The referenced output's value, if the referenced task has produced it.
    fn resolve(&self, r: &TaskRef) -> Option<&str>;
}

impl<S: BuildHasher> Resolver for HashMap<TaskKey, Outputs, S> {
    fn resolve(&self, r: &TaskRef) -> Option<&str> {
        self.get(&r.key).and_then(|o| o.get(&r.attr))
    }
}

impl<S: BuildHasher> Resolver for HashMap<TaskKey, Found, S> {
    fn resolve(&self, r: &TaskRef) -> Option<&str> {
        self.get(&r.key).and_then(|f| f.outputs.get(&r.attr))
    }
}

/// A resolver that knows nothing (references then only equal identical references).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoResolver;

impl Resolver for NoResolver {
    fn resolve(&self, _r: &TaskRef) -> Option<&str> {
        None
    }
}

/// The changes needed to turn `actual` into `expected` (`actual = None`: the object does
/// not exist, so every non-null expected field is a change).
pub fn diff_fields(
    expected: &Fields,
    actual: Option<&Fields>,
    resolver: &dyn Resolver,
) -> Vec<FieldChange> {
    diff_fields_with(expected, actual, resolver)
}

/// [`diff_fields`] for a known resolver type (the planner's hot path: no dynamic calls).
pub(crate) fn diff_fields_with<R: Resolver + ?Sized>(
    expected: &Fields,
    actual: Option<&Fields>,
    resolver: &R,
) -> Vec<FieldChange> {
    let mut out = Vec::new();
    for (i, (name, e)) in expected.iter().enumerate() {
        if e.is_null() {
            continue;
        }
        let a = actual.and_then(|a| a.get_near(name, i));
        if actual.is_some() && values_equal_with(e, a, resolver) {
            continue;
        }
        if out.is_empty() {
            // A missing object changes every field; a found one usually only one. Sized to
            // fit: a large plan holds thousands of these lists.
            out.reserve_exact(if actual.is_some() { 1 } else { expected.len() });
        }
        out.push(field_change(name, a, e));
    }
    out
}

/// The change record of one differing field (cold: most fields match).
#[cold]
pub(crate) fn field_change(name: &str, a: Option<&Value>, e: &Value) -> FieldChange {
    let (field, old, new) = (name.to_owned(), a.cloned(), e.clone());
    let diff = match (&old, &new) {
        (Some(Value::Text(old) | Value::String(old)), Value::Text(new)) => {
            Some(text_diff(old, new))
        }
        (Some(Value::Text(old)), Value::String(new)) => Some(text_diff(old, new)),
        _ => None,
    };
    FieldChange {
        field,
        old,
        new,
        diff,
    }
}

/// Whether an expected value matches an actual one under the diff rules.
pub fn values_equal(expected: &Value, actual: Option<&Value>, resolver: &dyn Resolver) -> bool {
    values_equal_with(expected, actual, resolver)
}

pub(crate) fn values_equal_with<R: Resolver + ?Sized>(
    expected: &Value,
    actual: Option<&Value>,
    resolver: &R,
) -> bool {
    match actual {
        Some(actual) => value_matches(expected, actual, resolver),
        None => expected.is_null(),
    }
}

/// The comparison itself. The common same-kind scalar cases come first; the rules are
/// those of the module documentation.
fn value_matches<R: Resolver + ?Sized>(expected: &Value, actual: &Value, resolver: &R) -> bool {
    match (expected, actual) {
        (Value::String(e), Value::String(a)) => e == a,
        (Value::Int(e), Value::Int(a)) => e == a,
        (Value::Bool(e), Value::Bool(a)) => e == a,
        (Value::Null, _) => true,
        (Value::Ref(e), Value::String(a)) => resolver.resolve(e) == Some(a.as_str()),
        (Value::Ref(e), Value::Ref(a)) => {
            e == a
                || matches!((resolver.resolve(e), resolver.resolve(a)), (Some(x), Some(y)) if x == y)
        }
        (Value::Map(e), Value::Map(a)) => {
            // Both maps are sorted by key: compare in lockstep.
            e.len() == a.len()
                && e.iter()
                    .zip(a.iter())
                    .all(|((ek, ev), (ak, av))| ek == ak && value_matches(ev, av, resolver))
        }
        (Value::List(e), Value::List(a)) => {
            e.len() == a.len() && e.iter().zip(a).all(|(e, a)| value_matches(e, a, resolver))
        }
        (Value::Object(e), Value::Object(a)) => e
            .iter()
            .all(|(k, e)| e.is_null() || values_equal_with(e, a.get(k), resolver)),
        (Value::String(e), Value::Text(a)) | (Value::Text(e), Value::String(a)) => e == a,
        (e, a) => e == a,
    }
}

/// A unified diff of lines (3 lines of context) from `old` to `new`.
pub fn text_diff(old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header("actual", "expected")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_is_dont_care_and_missing_is_a_change() {
        let e = Fields::new().with("A", Value::Null).with("B", 1i64);
        let a = Fields::new().with("A", "x");
        let ch = diff_fields(&e, Some(&a), &NoResolver);
        assert_eq!(ch.len(), 1);
        assert_eq!(ch[0].field, "B");
        assert_eq!(ch[0].old, None);
    }

    #[test]
    fn refs_compare_by_identity() {
        let vpc = TaskKey::new("VPC", "main");
        let mut outputs = HashMap::new();
        outputs.insert(vpc.clone(), Outputs::id("vpc-1"));
        let e = Fields::new().with("VPC", &vpc);
        let same_id = Fields::new().with("VPC", "vpc-1");
        let other_id = Fields::new().with("VPC", "vpc-2");
        assert!(diff_fields(&e, Some(&same_id), &outputs).is_empty());
        assert_eq!(diff_fields(&e, Some(&other_id), &outputs).len(), 1);
        assert_eq!(diff_fields(&e, Some(&same_id), &NoResolver).len(), 1);
        assert!(diff_fields(&e, Some(&e.clone()), &NoResolver).is_empty());
    }

    #[test]
    fn text_changes_carry_a_unified_diff() {
        let e = Fields::new().with("Policy", Value::text("a\nb\nc\n"));
        let a = Fields::new().with("Policy", Value::text("a\nB\nc\n"));
        let ch = diff_fields(&e, Some(&a), &NoResolver);
        let d = ch[0].diff.as_deref().unwrap();
        assert!(d.contains("-B\n") && d.contains("+b\n"), "{d}");
    }
}
