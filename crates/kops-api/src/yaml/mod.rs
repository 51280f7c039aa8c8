//! kOps' YAML: the exact bytes kOps writes for its files, and a reader that
//! types scalars the way kOps' go-yaml v2 reads them.
//!
//! kOps writes its files (the completed cluster spec, nodeup and boot
//! configs, keysets, static pods, the bootstrap channel, addon manifests)
//! from Go structs through JSON and then go-yaml v2 (`sigs.k8s.io/yaml`).
//! [`to_string`] reproduces that second step for any `serde::Serialize`
//! value (its JSON form is what gets written):
//!
//! - mapping keys in go-yaml's natural order: runs of digits compare as
//!   numbers, a non-letter sorts before a letter, letters by code point (so
//!   upper case before lower case);
//! - strings that YAML 1.1 would read as something else (`"yes"`, `"on"`,
//!   `"1.30"`, `"0o12"`, `"2021-07-09"`, `""`, base-60 `"1:20"`) in double
//!   quotes; strings that cannot be plain (`'- x'`, `'a: b'`) in single
//!   quotes; strings with a line feed as literal blocks (`|`, `|-`, `|+`);
//! - long plain and quoted strings folded after column 80 as go-yaml does;
//! - block sequences not indented under their key, two-space indentation,
//!   `{}` and `[]` for empty collections, `null` for none;
//! - numbers as Go writes them after a JSON round trip (integral values as
//!   integers, others in Go's shortest `%g` form).
//!
//! ```
//! use serde_json::json;
//! let v = json!({"b": [1, "yes"], "B": {}, "a10": "x", "a9": "line\n", "v": "1.30"});
//! assert_eq!(
//!     kops_api::yaml::to_string(&v)?,
//!     "B: {}\na9: |\n  line\na10: x\nb:\n- 1\n- \"yes\"\nv: \"1.30\"\n"
//! );
//! // Reading types scalars as YAML 1.1 does: `on` is a boolean.
//! assert_eq!(kops_api::yaml::from_str("a: on\nb: '1.30'\n")?, json!({"a": true, "b": "1.30"}));
//! # Ok::<(), kops_api::Error>(())
//! ```

mod emit;
mod read;
mod resolve;

use std::cmp::Ordering;

use serde::Serialize;
use serde_json::{Map, Number, Value};

use crate::{Error, Result};

pub use read::{from_str, from_str_multi};

/// Writes `value` as kOps writes it (its JSON form through go-yaml v2).
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String> {
    let v = serde_json::to_value(value).map_err(|e| Error::Serialize {
        what: "YAML".into(),
        message: e.to_string(),
    })?;
    Ok(value_to_string(&v))
}

/// Writes an untyped value as kOps writes it.
pub fn value_to_string(value: &Value) -> String {
    let mut e = emit::Emitter::new();
    e.root(value);
    e.document_end();
    e.out
}

/// go-yaml v2's order of two mapping keys (`sorter.go`): `true` when `a`
/// sorts before `b`. Digit runs compare by value, a non-letter sorts before a
/// letter, two letters by code point.
///
/// Letters are Rust's alphabetic characters, digits ASCII digits; for ASCII
/// keys (all of kOps') this is go-yaml's order exactly.
pub fn key_less(a: &str, b: &str) -> bool {
    if a.is_ascii() && b.is_ascii() {
        // One byte per character: no decoding, no allocation (every kOps key).
        less_in(a.as_bytes(), b.as_bytes(), |c| c.is_ascii_alphabetic())
    } else {
        let ar: Vec<char> = a.chars().collect();
        let br: Vec<char> = b.chars().collect();
        less_in(&ar, &br, |c: char| c.is_alphabetic())
    }
}

/// A character of a key as [`key_less`] reads it: a byte of an ASCII key or a `char`.
trait KeyChar: Copy + PartialOrd {
    /// The value of an ASCII digit, `None` for anything else.
    fn digit(self) -> Option<i64>;
}

impl KeyChar for u8 {
    fn digit(self) -> Option<i64> {
        self.is_ascii_digit().then(|| i64::from(self - b'0'))
    }
}

impl KeyChar for char {
    fn digit(self) -> Option<i64> {
        self.is_ascii_digit().then(|| self as i64 - '0' as i64)
    }
}

/// [`key_less`] over decoded keys, `letter` telling letters.
fn less_in<C: KeyChar>(ar: &[C], br: &[C], letter: impl Fn(C) -> bool) -> bool {
    let is_digit = |c: C| c.digit().is_some();
    for i in 0..ar.len().min(br.len()) {
        if ar[i] == br[i] {
            continue;
        }
        let al = letter(ar[i]);
        let bl = letter(br[i]);
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return bl;
        }
        // Go accumulates in an int64 that wraps.
        let (mut an, mut bn): (i64, i64) = (0, 0);
        if ar[i].digit() == Some(0) || br[i].digit() == Some(0) {
            let mut j = i;
            while j > 0 && is_digit(ar[j - 1]) {
                j -= 1;
                if ar[j].digit() != Some(0) {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while let Some(d) = ar.get(ai).and_then(|c| c.digit()) {
            an = an.wrapping_mul(10).wrapping_add(d);
            ai += 1;
        }
        let mut bi = i;
        while let Some(d) = br.get(bi).and_then(|c| c.digit()) {
            bn = bn.wrapping_mul(10).wrapping_add(d);
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ar[i] < br[i];
    }
    ar.len() < br.len()
}

/// The entries of `map` in go-yaml's key order ([`key_less`]).
fn sort_keys(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut v: Vec<(&String, &Value)> = map.iter().collect();
    // A map's keys mostly come in go-yaml's order already (its byte order, which differs
    // only around digit runs and non-letters): check before sorting.
    if v.windows(2).all(|w| !key_less(w[1].0, w[0].0)) {
        return v;
    }
    merge_sort(&mut v, &|x: &(&String, &Value), y: &(&String, &Value)| {
        key_less(x.0, y.0)
    });
    v
}

/// A stable merge sort on a "less" function that never panics, whatever the
/// function does (the standard sorts may panic on an inconsistent order).
fn merge_sort<T: Copy>(v: &mut [T], less: &dyn Fn(&T, &T) -> bool) {
    let n = v.len();
    if n <= 1 {
        return;
    }
    let mid = n / 2;
    merge_sort(&mut v[..mid], less);
    merge_sort(&mut v[mid..], less);
    let mut merged = Vec::with_capacity(n);
    let (mut i, mut j) = (0, mid);
    while i < mid && j < n {
        if less(&v[j], &v[i]) {
            merged.push(v[j]);
            j += 1;
        } else {
            merged.push(v[i]);
            i += 1;
        }
    }
    merged.extend_from_slice(&v[i..mid]);
    merged.extend_from_slice(&v[j..n]);
    v.copy_from_slice(&merged);
}

/// Compares keys as go-yaml sorts them, as an [`Ordering`].
pub fn key_cmp(a: &str, b: &str) -> Ordering {
    if key_less(a, b) {
        Ordering::Less
    } else if key_less(b, a) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

/// A JSON number as it comes out of Go's JSON encoder and go-yaml: integers
/// as integers, integral floats below 1e21 as integers (Go writes them
/// without exponent and go-yaml reads them back as integers), anything else
/// in Go's shortest `%g` form (`0.5`, `1e+21`, `1.2345675e+06`).
pub(crate) fn format_number(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    if f.fract() == 0.0 && f.abs() < 1e21 {
        if f >= i64::MIN as f64 && f < i64::MAX as f64 {
            return (f as i64).to_string();
        }
        if f >= 0.0 && f < u64::MAX as f64 {
            return (f as u64).to_string();
        }
    }
    go_format_g(f)
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`.
fn go_format_g(f: f64) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    // Shortest round-trip digits and decimal exponent from Rust's `{:e}`.
    let e = format!("{:e}", f.abs());
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let neg = if f.is_sign_negative() && f != 0.0 {
        "-"
    } else {
        ""
    };
    if f == 0.0 {
        return format!("{neg}0");
    }
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let mut s = format!("{neg}{first}");
        if !rest.is_empty() {
            s.push('.');
            s.push_str(rest);
        }
        let sign = if exp < 0 { '-' } else { '+' };
        s.push_str(&format!("e{sign}{:02}", exp.abs()));
        return s;
    }
    let dp = exp + 1; // digits before the decimal point
    let nd = digits.len() as i32;
    let mut s = neg.to_string();
    if dp <= 0 {
        s.push_str("0.");
        for _ in 0..-dp {
            s.push('0');
        }
        s.push_str(&digits);
    } else if dp >= nd {
        s.push_str(&digits);
        for _ in 0..dp - nd {
            s.push('0');
        }
    } else {
        s.push_str(&digits[..dp as usize]);
        s.push('.');
        s.push_str(&digits[dp as usize..]);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn natural_key_order() {
        let mut keys = vec![
            "usesNoneDNS",
            "APIServerConfig",
            "a10",
            "a9",
            "Assets",
            "CAs",
            "a",
            "a0",
            "a_b",
            "ab",
            "UpdatePolicy",
            "channelsManifest",
        ];
        let mut refs: Vec<&str> = keys.clone();
        merge_sort(&mut refs, &|a: &&str, b: &&str| key_less(a, b));
        keys.sort_by(|a, b| key_cmp(a, b));
        assert_eq!(refs, keys);
        assert_eq!(
            refs,
            [
                "APIServerConfig",
                "Assets",
                "CAs",
                "UpdatePolicy",
                "a",
                // '_' and '0' are both non-letters: an empty digit run sorts first.
                "a_b",
                "a0",
                "a9",
                "a10",
                "ab",
                "channelsManifest",
                "usesNoneDNS"
            ]
        );
    }

    #[test]
    fn go_number_forms() {
        let f = |x: f64| format_number(&Number::from_f64(x).unwrap());
        assert_eq!(f(0.5), "0.5");
        assert_eq!(f(2.0), "2");
        assert_eq!(f(1e21), "1e+21");
        assert_eq!(f(1234567.5), "1.2345675e+06");
        assert_eq!(f(0.0001), "0.0001");
        assert_eq!(f(0.00001), "1e-05");
        assert_eq!(f(-12.25), "-12.25");
        assert_eq!(f(123456.5), "123456.5");
    }

    #[test]
    fn writes_as_go_yaml_v2() {
        let v = json!({
            "list": [{"a": 1, "b": [true, null]}, [], {}],
            "empty": "",
            "quoted": ["on", "1.30", "0o12", "2016-12-10T22:42:27Z", "~", "1:20"],
            "single": ["- x", "a: b", " lead", "::", "#{query}"],
            "literal": "a\nb\n",
            "keep": "a\n\n",
            "strip": "a\nb",
            "indent": " a\nb",
            "tab": "a\tb",
        });
        let want = "\
empty: \"\"
indent: |2-
   a
  b
keep: |+
  a

list:
- a: 1
  b:
  - true
  - null
- []
- {}
literal: |
  a
  b
quoted:
- \"on\"
- \"1.30\"
- \"0o12\"
- \"2016-12-10T22:42:27Z\"
- \"~\"
- \"1:20\"
single:
- '- x'
- 'a: b'
- ' lead'
- '::'
- '#{query}'
strip: |-
  a
  b
tab: \"a\\tb\"
";
        assert_eq!(value_to_string(&v), want);
    }

    #[test]
    fn folds_long_strings_at_80_columns() {
        let long = "word ".repeat(30).trim_end().to_string();
        let text = value_to_string(&json!({ "description": long }));
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.len() > 1, "{text}");
        assert!(lines[0].starts_with("description: word"));
        // The break comes at the first space after column 80.
        assert!(
            lines[0].chars().count() > 80 && lines[0].chars().count() <= 85,
            "{text}"
        );
        assert!(lines[1].starts_with("  word"), "{text}");
        assert_eq!(from_str(&text).unwrap(), json!({ "description": long }));
    }
}
