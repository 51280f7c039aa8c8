//! The functions templates call: text/template's builtins, the Sprig subset and kOps'
//! `indent`. `and`, `or` and `include` are in `exec`, which they need; the regex
//! functions in `re`.

use std::cmp::Ordering;
use std::fmt::Write as _;

use base64::Engine as _;
use serde_json::{Map, Number, Value};

/// Why a function call failed.
#[derive(Debug)]
pub(super) enum FnError {
    /// No function has this name.
    Unknown,
    /// The function failed with this message.
    Failed(String),
}

impl std::fmt::Display for FnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FnError::Unknown => f.write_str("function not defined"),
            FnError::Failed(m) => f.write_str(m),
        }
    }
}

impl From<String> for FnError {
    fn from(m: String) -> Self {
        FnError::Failed(m)
    }
}

pub(super) type R = Result<Value, FnError>;

/// The longest string `repeat` makes (a guard against a typo's huge count).
const MAX_STRING: usize = 64 << 20;

/// The longest list `until` and `untilStep` make.
const MAX_LIST: i64 = 1_000_000;

pub(super) fn fail<T>(m: impl Into<String>) -> Result<T, FnError> {
    Err(FnError::Failed(m.into()))
}

/// Go's truth: false, 0, nil, "" and empty collections are false.
pub(super) fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(m) => !m.is_empty(),
    }
}

/// Go's name of a value's type.
pub(super) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// How an action prints its value: nil is `<no value>`.
pub(super) fn fmt_top(v: &Value) -> String {
    match v {
        Value::Null => "<no value>".into(),
        other => fmt_v(other),
    }
}

/// Go's `%v` of a float64: the shortest form, exponents past 1e21 and below 1e-4.
fn fmt_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    let a = f.abs();
    if a != 0.0 && !(1e-4..1e21).contains(&a) {
        let s = format!("{f:e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let (sign, digits) = match e.strip_prefix('-') {
            Some(d) => ('-', d),
            None => ('+', e),
        };
        let digits = if digits.len() < 2 {
            format!("0{digits}")
        } else {
            digits.to_string()
        };
        return format!("{m}e{sign}{digits}");
    }
    format!("{f}")
}

fn fmt_number(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        i.to_string()
    } else if let Some(u) = n.as_u64() {
        u.to_string()
    } else {
        fmt_float(n.as_f64().unwrap_or(0.0))
    }
}

/// Go's `%v`: strings as they are, `[a b]` lists, `map[k:v]` maps with sorted keys,
/// `<nil>` for nil.
pub(super) fn fmt_v(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => fmt_number(n),
        Value::String(s) => s.clone(),
        Value::Array(a) => {
            let parts: Vec<String> = a.iter().map(fmt_v).collect();
            format!("[{}]", parts.join(" "))
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", fmt_v(&m[k.as_str()])))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

/// Go's `%q` of a string.
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Sprig's `strval`: strings as they are, anything else as `%v`.
fn strval(v: &Value) -> String {
    fmt_v(v)
}

/// A string parameter: strings, numbers and booleans.
pub(super) fn string_arg(f: &str, v: &Value) -> Result<String, FnError> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(_) | Value::Bool(_) => Ok(fmt_v(v)),
        other => fail(format!("{f}: expected a string, got {}", type_name(other))),
    }
}

/// Sprig's `toInt64`: numbers truncated, numeric strings parsed, booleans 1 or 0,
/// anything else 0.
fn to_i64(v: &Value) -> i64 {
    match v {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_u64().map(|u| i64::try_from(u).unwrap_or(i64::MAX)))
            .unwrap_or_else(|| n.as_f64().unwrap_or(0.0) as i64),
        Value::String(s) => s
            .trim()
            .parse::<i64>()
            .ok()
            .or_else(|| s.trim().parse::<f64>().ok().map(|f| f as i64))
            .unwrap_or(0),
        Value::Bool(b) => i64::from(*b),
        _ => 0,
    }
}

fn to_f64(v: &Value) -> f64 {
    match v {
        Value::Number(n) => n.as_f64().unwrap_or(0.0),
        Value::String(s) => s.trim().parse().unwrap_or(0.0),
        Value::Bool(b) => f64::from(u8::from(*b)),
        _ => 0.0,
    }
}

/// An integer parameter (a count, a width, an index).
pub(super) fn int_arg(f: &str, v: &Value) -> Result<i64, FnError> {
    match v {
        Value::Number(_) => Ok(to_i64(v)),
        other => fail(format!(
            "{f}: expected an integer, got {}",
            type_name(other)
        )),
    }
}

/// Sprig's `strslice`: a list's non-nil items as strings, anything else one string.
fn strslice(v: &Value) -> Vec<String> {
    match v {
        Value::Array(a) => a.iter().filter(|x| !x.is_null()).map(strval).collect(),
        Value::Null => Vec::new(),
        other => vec![strval(other)],
    }
}

fn list_arg<'a>(f: &str, v: &'a Value) -> Result<&'a Vec<Value>, FnError> {
    match v {
        Value::Array(a) => Ok(a),
        other => fail(format!("{f}: expected a list, got {}", type_name(other))),
    }
}

fn map_arg<'a>(f: &str, v: &'a Value) -> Result<&'a Map<String, Value>, FnError> {
    match v {
        Value::Object(m) => Ok(m),
        other => fail(format!("{f}: expected a map, got {}", type_name(other))),
    }
}

pub(super) fn want(f: &str, args: &[Value], n: usize) -> Result<(), FnError> {
    if args.len() != n {
        return fail(format!(
            "wrong number of args for {f}: want {n} got {}",
            args.len()
        ));
    }
    Ok(())
}

fn want_at_least(f: &str, args: &[Value], n: usize) -> Result<(), FnError> {
    if args.len() < n {
        return fail(format!(
            "wrong number of args for {f}: want at least {n} got {}",
            args.len()
        ));
    }
    Ok(())
}

fn s(v: impl Into<String>) -> R {
    Ok(Value::String(v.into()))
}

/// kOps' `indent`: every line but the first indented by `n` spaces; empty lines stay
/// empty.
fn kops_indent(n: usize, text: &str) -> String {
    let pad = " ".repeat(n);
    text.split('\n')
        .enumerate()
        .map(|(i, l)| {
            if i == 0 || l.is_empty() {
                l.to_string()
            } else {
                format!("{pad}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn compare(a: &Value, b: &Value) -> Result<Ordering, FnError> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(i), Some(j)) = (x.as_i64(), y.as_i64()) {
                Ok(i.cmp(&j))
            } else {
                let (f, g) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
                f.partial_cmp(&g)
                    .ok_or_else(|| FnError::Failed("NaN is not comparable".into()))
            }
        }
        (Value::String(x), Value::String(y)) => Ok(x.cmp(y)),
        (Value::Bool(_), Value::Bool(_)) => fail("invalid type for comparison"),
        _ => fail(format!(
            "incompatible types for comparison: {} and {}",
            type_name(a),
            type_name(b)
        )),
    }
}

fn equal(a: &Value, b: &Value) -> Result<bool, FnError> {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => Ok(compare(a, b)? == Ordering::Equal),
        (Value::Null, _) | (_, Value::Null) => Ok(a == b),
        _ if std::mem::discriminant(a) != std::mem::discriminant(b) => fail(format!(
            "incompatible types for comparison: {} and {}",
            type_name(a),
            type_name(b)
        )),
        _ => Ok(a == b),
    }
}

/// Go's `fmt.Sprintf` for the verbs templates use: `%s %d %v %q %f %t %x %%`, with
/// flags, width and precision.
pub(super) fn sprintf(format: &str, args: &[Value]) -> String {
    let mut out = String::new();
    let chars: Vec<char> = format.chars().collect();
    let mut i = 0;
    let mut next = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '%' {
            out.push(c);
            continue;
        }
        let (mut minus, mut zero, mut plus) = (false, false, false);
        while let Some(&f) = chars.get(i) {
            match f {
                '-' => minus = true,
                '0' => zero = true,
                '+' => plus = true,
                ' ' | '#' => {}
                _ => break,
            }
            i += 1;
        }
        let mut width = None;
        while let Some(d) = chars.get(i).and_then(|c| c.to_digit(10)) {
            width = Some(width.unwrap_or(0) * 10 + d as usize);
            i += 1;
        }
        let mut prec = None;
        if chars.get(i) == Some(&'.') {
            i += 1;
            let mut p = 0;
            while let Some(d) = chars.get(i).and_then(|c| c.to_digit(10)) {
                p = p * 10 + d as usize;
                i += 1;
            }
            prec = Some(p);
        }
        let Some(&verb) = chars.get(i) else {
            out.push_str("%!(NOVERB)");
            break;
        };
        i += 1;
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(arg) = args.get(next) else {
            let _ = write!(out, "%!{verb}(MISSING)");
            continue;
        };
        next += 1;
        let numeric = matches!(arg, Value::Number(_));
        let body = match verb {
            'v' | 's' => {
                let t = fmt_v(arg);
                match prec {
                    Some(p) if verb == 's' => t.chars().take(p).collect(),
                    _ => t,
                }
            }
            'd' => match arg {
                Value::Number(n) if n.is_f64() => format!("%!d(float64={})", fmt_number(n)),
                Value::Number(_) => {
                    let v = to_i64(arg);
                    if plus && v >= 0 {
                        format!("+{v}")
                    } else {
                        v.to_string()
                    }
                }
                other => format!("%!d({}={})", type_name(other), fmt_v(other)),
            },
            'f' | 'F' | 'e' | 'g' => match arg {
                Value::Number(_) => {
                    let f = to_f64(arg);
                    let t = match verb {
                        'e' => format!("{:.*e}", prec.unwrap_or(6), f),
                        'g' => match prec {
                            Some(p) => format!("{:.*}", p, f),
                            None => fmt_float(f),
                        },
                        _ => format!("{:.*}", prec.unwrap_or(6), f),
                    };
                    if plus && f >= 0.0 { format!("+{t}") } else { t }
                }
                other => format!("%!{verb}({}={})", type_name(other), fmt_v(other)),
            },
            'q' => go_quote(&fmt_v(arg)),
            't' => match arg {
                Value::Bool(b) => b.to_string(),
                other => format!("%!t({}={})", type_name(other), fmt_v(other)),
            },
            'x' | 'X' => {
                let t = match arg {
                    Value::Number(_) => format!("{:x}", to_i64(arg)),
                    other => fmt_v(other).bytes().map(|b| format!("{b:02x}")).collect(),
                };
                if verb == 'X' { t.to_uppercase() } else { t }
            }
            other => format!("%!{other}({}={})", type_name(arg), fmt_v(arg)),
        };
        let len = body.chars().count();
        match width {
            Some(w) if w > len => {
                let pad = w - len;
                if minus {
                    out.push_str(&body);
                    out.push_str(&" ".repeat(pad));
                } else if zero && numeric {
                    let (sign, digits) = match body.strip_prefix('-') {
                        Some(d) => ("-", d),
                        None => ("", body.as_str()),
                    };
                    out.push_str(sign);
                    out.push_str(&"0".repeat(pad));
                    out.push_str(digits);
                } else {
                    out.push_str(&" ".repeat(pad));
                    out.push_str(&body);
                }
            }
            _ => out.push_str(&body),
        }
    }
    if next < args.len() {
        out.push_str("%!(EXTRA ");
        let extra: Vec<String> = args[next..]
            .iter()
            .map(|a| format!("{}={}", type_name(a), fmt_v(a)))
            .collect();
        out.push_str(&extra.join(", "));
        out.push(')');
    }
    out
}

/// Go's `fmt.Sprint`: a space between operands when neither is a string.
fn sprint(args: &[Value]) -> String {
    let mut out = String::new();
    for (i, a) in args.iter().enumerate() {
        if i > 0 && !a.is_string() && !args[i - 1].is_string() {
            out.push(' ');
        }
        out.push_str(&fmt_v(a));
    }
    out
}

fn to_yaml(v: &Value) -> String {
    let text = kops_api::yaml::value_to_string(v);
    text.strip_suffix('\n').unwrap_or(&text).to_string()
}

/// Calls the function `name`.
pub(super) fn call(name: &str, mut args: Vec<Value>) -> R {
    let a = &args;
    match name {
        // text/template's builtins.
        "not" => {
            want(name, a, 1)?;
            Ok(Value::Bool(!truthy(&a[0])))
        }
        "len" => {
            want(name, a, 1)?;
            let n = match &a[0] {
                Value::String(s) => s.len(),
                Value::Array(x) => x.len(),
                Value::Object(m) => m.len(),
                Value::Null => return fail("len of nil pointer"),
                other => return fail(format!("len of type {}", type_name(other))),
            };
            Ok(Value::from(n))
        }
        "index" => {
            want_at_least(name, a, 1)?;
            let mut v = a[0].clone();
            for k in &a[1..] {
                v = match (v, k) {
                    (Value::Array(mut x), Value::Number(_)) => {
                        let i = to_i64(k);
                        if i < 0 || i as usize >= x.len() {
                            return fail(format!("index out of range: {i}"));
                        }
                        x.swap_remove(i as usize)
                    }
                    (Value::Object(mut m), Value::String(key)) => {
                        m.remove(key).unwrap_or(Value::Null)
                    }
                    (Value::Null, _) => return fail("index of untyped nil"),
                    (other, k) => {
                        return fail(format!(
                            "can't index item of type {} with {}",
                            type_name(&other),
                            type_name(k)
                        ));
                    }
                };
            }
            Ok(v)
        }
        "slice" => {
            want_at_least(name, a, 1)?;
            let bounds = |len: usize| -> Result<(usize, usize), FnError> {
                let lo = a.get(1).map(to_i64).unwrap_or(0);
                let hi = a.get(2).map(to_i64).unwrap_or(len as i64);
                if lo < 0 || hi < lo || hi as usize > len {
                    return fail(format!("slice index out of range: {lo}:{hi}"));
                }
                Ok((lo as usize, hi as usize))
            };
            match &a[0] {
                Value::Array(x) => {
                    let (lo, hi) = bounds(x.len())?;
                    Ok(Value::Array(x[lo..hi].to_vec()))
                }
                Value::String(t) => {
                    let (lo, hi) = bounds(t.len())?;
                    t.get(lo..hi)
                        .map(|x| Value::String(x.to_string()))
                        .ok_or_else(|| FnError::Failed("slice splits a character".into()))
                }
                other => fail(format!("can't slice item of type {}", type_name(other))),
            }
        }
        "print" => s(sprint(a)),
        "println" => {
            let parts: Vec<String> = a.iter().map(fmt_v).collect();
            s(format!("{}\n", parts.join(" ")))
        }
        "printf" => {
            want_at_least(name, a, 1)?;
            let f = string_arg(name, &a[0])?;
            s(sprintf(&f, &a[1..]))
        }
        "eq" => {
            want_at_least(name, a, 2)?;
            for b in &a[1..] {
                if equal(&a[0], b)? {
                    return Ok(Value::Bool(true));
                }
            }
            Ok(Value::Bool(false))
        }
        "ne" => {
            want(name, a, 2)?;
            Ok(Value::Bool(!equal(&a[0], &a[1])?))
        }
        "lt" | "le" | "gt" | "ge" => {
            want(name, a, 2)?;
            let o = compare(&a[0], &a[1])?;
            Ok(Value::Bool(match name {
                "lt" => o == Ordering::Less,
                "le" => o != Ordering::Greater,
                "gt" => o == Ordering::Greater,
                _ => o != Ordering::Less,
            }))
        }
        // Sprig: defaults and flow.
        "default" => {
            want_at_least(name, a, 1)?;
            match a.get(1) {
                Some(v) if truthy(v) => Ok(v.clone()),
                _ => Ok(a[0].clone()),
            }
        }
        "empty" => {
            want(name, a, 1)?;
            Ok(Value::Bool(!truthy(&a[0])))
        }
        "coalesce" => Ok(a.iter().find(|v| truthy(v)).cloned().unwrap_or(Value::Null)),
        "ternary" => {
            want(name, a, 3)?;
            Ok(if truthy(&a[2]) {
                a[0].clone()
            } else {
                a[1].clone()
            })
        }
        "required" => {
            want(name, a, 2)?;
            match &a[1] {
                Value::Null => fail(string_arg(name, &a[0])?),
                Value::String(x) if x.is_empty() => fail(string_arg(name, &a[0])?),
                v => Ok(v.clone()),
            }
        }
        "fail" => {
            want(name, a, 1)?;
            fail(string_arg(name, &a[0])?)
        }
        // Sprig: strings.
        "quote" => {
            let parts: Vec<String> = a
                .iter()
                .filter(|v| !v.is_null())
                .map(|v| go_quote(&strval(v)))
                .collect();
            s(parts.join(" "))
        }
        "squote" => {
            let parts: Vec<String> = a
                .iter()
                .filter(|v| !v.is_null())
                .map(|v| format!("'{}'", strval(v)))
                .collect();
            s(parts.join(" "))
        }
        "cat" => {
            let parts: Vec<String> = a.iter().filter(|v| !v.is_null()).map(strval).collect();
            s(parts.join(" "))
        }
        "upper" | "lower" | "title" | "trim" | "b64enc" | "b64dec" | "nospace" => {
            want(name, a, 1)?;
            let t = string_arg(name, &a[0])?;
            match name {
                "upper" => s(t.to_uppercase()),
                "lower" => s(t.to_lowercase()),
                "trim" => s(t.trim()),
                "nospace" => s(t.chars().filter(|c| !c.is_whitespace()).collect::<String>()),
                "b64enc" => s(base64::engine::general_purpose::STANDARD.encode(t.as_bytes())),
                "b64dec" => {
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(t.trim())
                        .map_err(|e| FnError::Failed(format!("invalid base64: {e}")))?;
                    s(String::from_utf8_lossy(&bytes).into_owned())
                }
                _ => {
                    let mut out = String::new();
                    let mut start = true;
                    for c in t.chars() {
                        if start && c.is_alphabetic() {
                            out.extend(c.to_uppercase());
                        } else {
                            out.push(c);
                        }
                        start = c.is_whitespace();
                    }
                    s(out)
                }
            }
        }
        "trimAll" | "trimPrefix" | "trimSuffix" | "contains" | "hasPrefix" | "hasSuffix"
        | "splitList" | "split" => {
            want(name, a, 2)?;
            let x = string_arg(name, &a[0])?;
            let t = string_arg(name, &a[1])?;
            match name {
                "trimAll" => s(t.trim_matches(|c| x.contains(c))),
                "trimPrefix" => s(t.strip_prefix(x.as_str()).unwrap_or(&t)),
                "trimSuffix" => s(t.strip_suffix(x.as_str()).unwrap_or(&t)),
                "contains" => Ok(Value::Bool(t.contains(x.as_str()))),
                "hasPrefix" => Ok(Value::Bool(t.starts_with(x.as_str()))),
                "hasSuffix" => Ok(Value::Bool(t.ends_with(x.as_str()))),
                "splitList" => Ok(Value::Array(
                    t.split(x.as_str())
                        .map(|p| Value::String(p.into()))
                        .collect(),
                )),
                _ => Ok(Value::Object(
                    t.split(x.as_str())
                        .enumerate()
                        .map(|(i, p)| (format!("_{i}"), Value::String(p.into())))
                        .collect(),
                )),
            }
        }
        "replace" => {
            want(name, a, 3)?;
            let old = string_arg(name, &a[0])?;
            let new = string_arg(name, &a[1])?;
            let t = string_arg(name, &a[2])?;
            s(t.replace(old.as_str(), &new))
        }
        "repeat" | "indent" | "nindent" | "trunc" => {
            want(name, a, 2)?;
            let n = int_arg(name, &a[0])?;
            let t = string_arg(name, &a[1])?;
            let count = usize::try_from(n).unwrap_or(0);
            match name {
                "repeat" => {
                    if count.saturating_mul(t.len()) > MAX_STRING {
                        return fail(format!(
                            "repeat: the result would exceed {MAX_STRING} bytes"
                        ));
                    }
                    s(t.repeat(count))
                }
                "indent" => s(kops_indent(count, &t)),
                "nindent" => {
                    let pad = " ".repeat(count);
                    s(format!("\n{pad}{}", t.replace('\n', &format!("\n{pad}"))))
                }
                _ => {
                    let chars: Vec<char> = t.chars().collect();
                    let len = chars.len() as i64;
                    if n < 0 && len + n > 0 {
                        s(chars[(len + n) as usize..].iter().collect::<String>())
                    } else if n >= 0 && len > n {
                        s(chars[..n as usize].iter().collect::<String>())
                    } else {
                        s(t)
                    }
                }
            }
        }
        "substr" => {
            want(name, a, 3)?;
            let start = int_arg(name, &a[0])?;
            let end = int_arg(name, &a[1])?;
            let chars: Vec<char> = string_arg(name, &a[2])?.chars().collect();
            let len = chars.len() as i64;
            let (lo, hi) = if start < 0 {
                (0, end.clamp(0, len))
            } else if end < 0 || end > len {
                (start.min(len), len)
            } else {
                (start.min(end), end)
            };
            s(chars[lo as usize..hi as usize].iter().collect::<String>())
        }
        "join" => {
            want(name, a, 2)?;
            let sep = string_arg(name, &a[0])?;
            s(strslice(&a[1]).join(&sep))
        }
        "toString" => {
            want(name, a, 1)?;
            s(strval(&a[0]))
        }
        "toStrings" => {
            want(name, a, 1)?;
            Ok(Value::Array(
                strslice(&a[0]).into_iter().map(Value::String).collect(),
            ))
        }
        "sha256sum" => {
            use sha2::Digest as _;
            want(name, a, 1)?;
            let t = string_arg(name, &a[0])?;
            let d = sha2::Sha256::digest(t.as_bytes());
            s(d.iter().map(|b| format!("{b:02x}")).collect::<String>())
        }
        // Sprig: lists and dictionaries.
        "list" => Ok(Value::Array(args)),
        "dict" => {
            let mut m = Map::new();
            for pair in a.chunks(2) {
                let k = strval(&pair[0]);
                let v = pair
                    .get(1)
                    .cloned()
                    .unwrap_or_else(|| Value::String(String::new()));
                m.insert(k, v);
            }
            Ok(Value::Object(m))
        }
        "hasKey" => {
            want(name, a, 2)?;
            let m = map_arg(name, &a[0])?;
            Ok(Value::Bool(m.contains_key(&string_arg(name, &a[1])?)))
        }
        "keys" => {
            let mut keys = Vec::new();
            for m in a {
                keys.extend(map_arg(name, m)?.keys().cloned());
            }
            keys.sort();
            Ok(Value::Array(keys.into_iter().map(Value::String).collect()))
        }
        "values" => {
            want(name, a, 1)?;
            let m = map_arg(name, &a[0])?;
            let mut kv: Vec<(&String, &Value)> = m.iter().collect();
            kv.sort_by(|x, y| x.0.cmp(y.0));
            Ok(Value::Array(
                kv.into_iter().map(|(_, v)| v.clone()).collect(),
            ))
        }
        "get" => {
            want(name, a, 2)?;
            let m = map_arg(name, &a[0])?;
            Ok(m.get(&string_arg(name, &a[1])?)
                .cloned()
                .unwrap_or_else(|| Value::String(String::new())))
        }
        "set" => {
            want(name, a, 3)?;
            let k = string_arg(name, &a[1])?;
            map_arg(name, &a[0])?;
            let v = args.swap_remove(2);
            let Value::Object(mut m) = args.swap_remove(0) else {
                return fail("set: expected a map");
            };
            m.insert(k, v);
            Ok(Value::Object(m))
        }
        "unset" => {
            want(name, a, 2)?;
            let k = string_arg(name, &a[1])?;
            map_arg(name, &a[0])?;
            let Value::Object(mut m) = args.swap_remove(0) else {
                return fail("unset: expected a map");
            };
            m.remove(&k);
            Ok(Value::Object(m))
        }
        "merge" => {
            want_at_least(name, a, 1)?;
            // Sprig's merge: earlier dictionaries win.
            let mut out = Value::Object(Map::new());
            for m in a.iter().rev() {
                map_arg(name, m)?;
                super::merge_values(&mut out, m);
            }
            Ok(out)
        }
        "first" | "last" | "rest" | "initial" | "uniq" | "sortAlpha" | "reverse" | "compact" => {
            want(name, a, 1)?;
            if a[0].is_null() {
                return Ok(if matches!(name, "first" | "last") {
                    Value::Null
                } else {
                    Value::Array(Vec::new())
                });
            }
            let l = list_arg(name, &a[0])?;
            match name {
                "first" => Ok(l.first().cloned().unwrap_or(Value::Null)),
                "last" => Ok(l.last().cloned().unwrap_or(Value::Null)),
                "rest" => Ok(Value::Array(l.iter().skip(1).cloned().collect())),
                "initial" => Ok(Value::Array(l[..l.len().saturating_sub(1)].to_vec())),
                "reverse" => Ok(Value::Array(l.iter().rev().cloned().collect())),
                "compact" => Ok(Value::Array(
                    l.iter().filter(|v| truthy(v)).cloned().collect(),
                )),
                "uniq" => {
                    let mut out: Vec<Value> = Vec::new();
                    for v in l {
                        if !out.contains(v) {
                            out.push(v.clone());
                        }
                    }
                    Ok(Value::Array(out))
                }
                _ => {
                    let mut v = strslice(&a[0]);
                    v.sort();
                    Ok(Value::Array(v.into_iter().map(Value::String).collect()))
                }
            }
        }
        "has" => {
            want(name, a, 2)?;
            Ok(Value::Bool(match &a[1] {
                Value::Array(l) => l.contains(&a[0]),
                _ => false,
            }))
        }
        "append" | "push" => {
            want(name, a, 2)?;
            let mut l = list_arg(name, &a[0])?.clone();
            l.push(a[1].clone());
            Ok(Value::Array(l))
        }
        "concat" => {
            let mut out = Vec::new();
            for l in a {
                out.extend(list_arg(name, l)?.iter().cloned());
            }
            Ok(Value::Array(out))
        }
        "until" => {
            want(name, a, 1)?;
            let n = int_arg(name, &a[0])?;
            if n > MAX_LIST {
                return fail(format!("until: {n} is more than {MAX_LIST} items"));
            }
            Ok(Value::Array((0..n.max(0)).map(Value::from).collect()))
        }
        "untilStep" => {
            want(name, a, 3)?;
            let (start, stop, step) = (
                int_arg(name, &a[0])?,
                int_arg(name, &a[1])?,
                int_arg(name, &a[2])?,
            );
            let mut out = Vec::new();
            let mut i = start;
            while (step > 0 && i < stop) || (step < 0 && i > stop) {
                if out.len() as i64 >= MAX_LIST {
                    return fail(format!("untilStep: more than {MAX_LIST} items"));
                }
                out.push(Value::from(i));
                i += step;
            }
            Ok(Value::Array(out))
        }
        // Sprig: conversions and serialisation.
        "int" | "int64" => {
            want(name, a, 1)?;
            Ok(Value::from(to_i64(&a[0])))
        }
        "float64" => {
            want(name, a, 1)?;
            Ok(Number::from_f64(to_f64(&a[0])).map_or(Value::Null, Value::Number))
        }
        "toYaml" => {
            want(name, a, 1)?;
            s(to_yaml(&a[0]))
        }
        "fromYaml" => {
            want(name, a, 1)?;
            let t = string_arg(name, &a[0])?;
            kops_api::yaml::from_str(&t).map_err(|e| FnError::Failed(format!("invalid YAML: {e}")))
        }
        "toJson" | "toPrettyJson" => {
            want(name, a, 1)?;
            let r = if name == "toJson" {
                serde_json::to_string(&a[0])
            } else {
                serde_json::to_string_pretty(&a[0])
            };
            r.map(Value::String)
                .map_err(|e| FnError::Failed(e.to_string()))
        }
        "fromJson" => {
            want(name, a, 1)?;
            let t = string_arg(name, &a[0])?;
            serde_json::from_str(&t).map_err(|e| FnError::Failed(format!("invalid JSON: {e}")))
        }
        // Sprig: regular expressions.
        "regexMatch"
        | "mustRegexMatch"
        | "regexFind"
        | "mustRegexFind"
        | "regexFindAll"
        | "mustRegexFindAll"
        | "regexReplaceAll"
        | "mustRegexReplaceAll"
        | "regexReplaceAllLiteral"
        | "mustRegexReplaceAllLiteral"
        | "regexSplit"
        | "mustRegexSplit"
        | "regexQuoteMeta" => super::re::call(name, a),
        // Sprig: integer arithmetic.
        "add" | "mul" | "max" | "min" => {
            want_at_least(name, a, 1)?;
            let mut acc = to_i64(&a[0]);
            for v in &a[1..] {
                let x = to_i64(v);
                acc = match name {
                    "add" => acc.wrapping_add(x),
                    "mul" => acc.wrapping_mul(x),
                    "max" => acc.max(x),
                    _ => acc.min(x),
                };
            }
            Ok(Value::from(acc))
        }
        "add1" => {
            want(name, a, 1)?;
            Ok(Value::from(to_i64(&a[0]).wrapping_add(1)))
        }
        "sub" | "div" | "mod" => {
            want(name, a, 2)?;
            let (x, y) = (to_i64(&a[0]), to_i64(&a[1]));
            if name != "sub" && y == 0 {
                return fail("integer divide by zero");
            }
            Ok(Value::from(match name {
                "sub" => x.wrapping_sub(y),
                "div" => x.wrapping_div(y),
                _ => x.wrapping_rem(y),
            }))
        }
        _ => Err(FnError::Unknown),
    }
}
