//! The values templates read: the deep merge of values files and Helm's `--set`.

use serde_json::{Map, Value};

/// Deep-merges `src` into `dest`: maps merge key by key (`src` wins), anything else
/// replaces.
pub fn merge_values(dest: &mut Value, src: &Value) {
    match (dest, src) {
        (Value::Object(d), Value::Object(s)) => {
            for (k, v) in s {
                match d.get_mut(k) {
                    Some(existing) if existing.is_object() && v.is_object() => {
                        merge_values(existing, v);
                    }
                    _ => {
                        d.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (dest, src) => *dest = src.clone(),
    }
}

/// A `--set` expression that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SetValuesError(String);

/// The largest list index `--set` creates (as Helm).
const MAX_INDEX: usize = 65536;

enum Seg {
    Key(String),
    Index(usize),
}

/// Applies Helm's `--set` syntax to `dest`: `key=value` pairs separated by commas,
/// dotted keys (`a.b=c`) create maps, `name[1]=v` sets a list's item (padding with
/// null), `x={a,b,c}` is a list, a backslash escapes `,`, `.`, `=`, `[`. With
/// `as_strings` every value is a string; otherwise `true`, `false`, `null` and integers
/// are typed and the rest are strings.
pub fn set_values(dest: &mut Value, text: &str, as_strings: bool) -> Result<(), SetValuesError> {
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let err = |m: String| SetValuesError(m);
    while i < chars.len() {
        // The key, up to `=`.
        let mut key = String::new();
        let mut raw_key = String::new();
        let mut segs = Vec::new();
        loop {
            let Some(&c) = chars.get(i) else {
                return Err(err(format!("key {raw_key:?} has no value")));
            };
            i += 1;
            match c {
                '\\' => {
                    let Some(&e) = chars.get(i) else {
                        return Err(err(format!("key {raw_key:?}: a trailing backslash")));
                    };
                    i += 1;
                    key.push(e);
                    raw_key.push(e);
                }
                '=' => break,
                ',' => return Err(err(format!("key {raw_key:?} has no value"))),
                '.' => {
                    if !key.is_empty() {
                        segs.push(Seg::Key(std::mem::take(&mut key)));
                    } else if !matches!(segs.last(), Some(Seg::Index(_))) {
                        return Err(err(format!("key {raw_key:?}: an empty key")));
                    }
                    raw_key.push(c);
                }
                '[' => {
                    raw_key.push(c);
                    if !key.is_empty() {
                        segs.push(Seg::Key(std::mem::take(&mut key)));
                    }
                    if segs.is_empty() {
                        return Err(err(format!("key {raw_key:?}: an index without a name")));
                    }
                    let mut digits = String::new();
                    loop {
                        let Some(&d) = chars.get(i) else {
                            return Err(err(format!("key {raw_key:?}: unclosed [")));
                        };
                        i += 1;
                        raw_key.push(d);
                        if d == ']' {
                            break;
                        }
                        digits.push(d);
                    }
                    let idx: usize = digits
                        .trim()
                        .parse()
                        .map_err(|_| err(format!("key {raw_key:?}: bad index {digits:?}")))?;
                    if idx > MAX_INDEX {
                        return Err(err(format!(
                            "key {raw_key:?}: index {idx} is larger than {MAX_INDEX}"
                        )));
                    }
                    segs.push(Seg::Index(idx));
                }
                c => {
                    key.push(c);
                    raw_key.push(c);
                }
            }
        }
        if !key.is_empty() {
            segs.push(Seg::Key(key));
        } else if segs.is_empty() || raw_key.ends_with('.') {
            return Err(err(format!("key {raw_key:?}: an empty key")));
        }
        // The value: a `{a,b}` list or text up to an unescaped comma.
        let value = if chars.get(i) == Some(&'{') {
            i += 1;
            let mut items = Vec::new();
            let mut cur = String::new();
            loop {
                let Some(&c) = chars.get(i) else {
                    return Err(err(format!("key {raw_key:?}: unclosed {{")));
                };
                i += 1;
                match c {
                    '\\' => {
                        if let Some(&e) = chars.get(i) {
                            cur.push(e);
                            i += 1;
                        }
                    }
                    ',' => items.push(typed(std::mem::take(&mut cur), as_strings)),
                    '}' => {
                        if !cur.is_empty() || !items.is_empty() {
                            items.push(typed(cur, as_strings));
                        }
                        break;
                    }
                    c => cur.push(c),
                }
            }
            match chars.get(i) {
                None => {}
                Some(',') => i += 1,
                Some(c) => {
                    return Err(err(format!(
                        "key {raw_key:?}: unexpected {c:?} after a list"
                    )));
                }
            }
            Value::Array(items)
        } else {
            let mut cur = String::new();
            while let Some(&c) = chars.get(i) {
                i += 1;
                match c {
                    '\\' => {
                        if let Some(&e) = chars.get(i) {
                            cur.push(e);
                            i += 1;
                        }
                    }
                    ',' => break,
                    c => cur.push(c),
                }
            }
            typed(cur, as_strings)
        };
        set_path(dest, &segs, value);
    }
    Ok(())
}

fn typed(text: String, as_strings: bool) -> Value {
    if as_strings {
        return Value::String(text);
    }
    match text.as_str() {
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        "null" => return Value::Null,
        "0" => return Value::from(0),
        _ => {}
    }
    // Integers without a leading zero are numbers; `012` stays a string, as Helm.
    let digits = text.strip_prefix('-').unwrap_or(&text);
    if !digits.is_empty()
        && !digits.starts_with('0')
        && digits.bytes().all(|b| b.is_ascii_digit())
        && let Ok(n) = text.parse::<i64>()
    {
        return Value::from(n);
    }
    Value::String(text)
}

fn set_path(dest: &mut Value, segs: &[Seg], value: Value) {
    let Some((first, rest)) = segs.split_first() else {
        *dest = value;
        return;
    };
    match first {
        Seg::Key(k) => {
            if !dest.is_object() {
                *dest = Value::Object(Map::new());
            }
            if let Value::Object(m) = dest {
                let slot = m.entry(k.clone()).or_insert(Value::Null);
                set_path(slot, rest, value);
            }
        }
        Seg::Index(idx) => {
            if !dest.is_array() {
                *dest = Value::Array(Vec::new());
            }
            if let Value::Array(l) = dest {
                if l.len() <= *idx {
                    l.resize(idx + 1, Value::Null);
                }
                set_path(&mut l[*idx], rest, value);
            }
        }
    }
}
