//! How go-yaml v2 types an untagged plain scalar (YAML 1.1 with Go's number
//! syntax), and the extra strings its encoder quotes (base-60 floats).
//!
//! The rules, from go-yaml v2's `resolve.go` and `encode.go`:
//! - the first byte gives a hint: `+`/`-` sign, a digit, one of
//!   `yYnNtTfFoO~`, a `.`, or nothing (then the text is a string);
//! - with a hint, a fixed table maps `y`, `yes`, `on`, `true`, `n`, `no`,
//!   `off`, `false` (three spellings each), `~`, `null`, the empty string,
//!   `.nan` and the infinities to their values;
//! - a sign or digit start is tried, in order, as a timestamp (four-digit year
//!   and the layouts go-yaml lists), as a Go integer literal after removing
//!   `_` (`0x`, `0o`, `0b`, leading-`0` octal), as an unsigned integer, and as
//!   a decimal float (`[-+]?(\.d+|d+(\.d*)?)([eE][-+]?d+)?` that Go parses
//!   without overflow);
//! - a `.` start is tried as a Go float.

/// What an untagged plain scalar reads as.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Resolved {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    /// A timestamp; decoded into an untyped value it stays a string.
    Timestamp,
    Str,
}

pub(crate) fn resolve_plain(s: &str) -> Resolved {
    let hint = match s.as_bytes().first() {
        None => b'N',
        Some(b'+' | b'-') => b'S',
        Some(b'0'..=b'9') => b'D',
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => b'M',
        Some(b'.') => b'.',
        Some(_) => return Resolved::Str,
    };
    if let Some(r) = table(s) {
        return r;
    }
    match hint {
        b'.' => {
            if let Some(f) = go_parse_float(s) {
                return Resolved::Float(f);
            }
        }
        b'D' | b'S' => {
            if is_timestamp(s) {
                return Resolved::Timestamp;
            }
            let plain: String = s.chars().filter(|&c| c != '_').collect();
            if let Some(i) = go_parse_int(&plain) {
                return Resolved::Int(i);
            }
            if let Some(u) = go_parse_uint(&plain) {
                return Resolved::Uint(u);
            }
            if yaml_style_float(&plain)
                && let Some(f) = go_parse_float(&plain)
            {
                return Resolved::Float(f);
            }
        }
        _ => {}
    }
    Resolved::Str
}

/// Whether go-yaml v2's encoder writes `s` (requested plain) without quotes as
/// far as typing goes: it reads back as a string and is no base-60 float.
pub(crate) fn plain_reads_as_string(s: &str) -> bool {
    resolve_plain(s) == Resolved::Str && !is_base60_float(s)
}

fn table(s: &str) -> Option<Resolved> {
    Some(match s {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            Resolved::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Resolved::Bool(false)
        }
        "" | "~" | "null" | "Null" | "NULL" => Resolved::Null,
        ".nan" | ".NaN" | ".NAN" => Resolved::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => Resolved::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => Resolved::Float(f64::NEG_INFINITY),
        _ => return None,
    })
}

/// Digits of a Go integer literal after an optional sign: base prefix and
/// digits, or `None` when malformed. Returns the magnitude.
fn go_magnitude(s: &str) -> Option<u128> {
    let b = s.as_bytes();
    let (radix, digits) = if b.len() >= 2 && b[0] == b'0' {
        match b[1] {
            b'x' | b'X' => (16, &s[2..]),
            b'o' | b'O' => (8, &s[2..]),
            b'b' | b'B' => (2, &s[2..]),
            _ => (8, &s[1..]),
        }
    } else {
        (10, s)
    };
    if digits.is_empty() {
        return None;
    }
    let mut n: u128 = 0;
    for c in digits.chars() {
        let d = c.to_digit(radix)? as u128;
        n = n.checked_mul(radix as u128)?.checked_add(d)?;
        if n > u64::MAX as u128 + 1 {
            return None;
        }
    }
    Some(n)
}

/// Go's `strconv.ParseInt(s, 0, 64)`.
fn go_parse_int(s: &str) -> Option<i64> {
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let m = go_magnitude(rest)?;
    if neg {
        if m > i64::MAX as u128 + 1 {
            return None;
        }
        Some((-(m as i128)) as i64)
    } else if m > i64::MAX as u128 {
        None
    } else {
        Some(m as i64)
    }
}

/// Go's `strconv.ParseUint(s, 0, 64)` (no sign accepted).
fn go_parse_uint(s: &str) -> Option<u64> {
    let m = go_magnitude(s)?;
    u64::try_from(m).ok()
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go's `strconv.ParseFloat(s, 64)` for the decimal forms go-yaml can reach
/// here; an overflow is an error in Go, so it is `None` here too.
fn go_parse_float(s: &str) -> Option<f64> {
    // Go accepts the same decimal syntax as the regex above (plus forms that
    // start with `.` only through the `.` hint, which the regex also covers),
    // "inf"/"infinity"/"nan" and hex floats, which cannot start with '.' or a
    // sign-digit-underscore-free text that failed the integer parse except
    // "0x..p..": rare enough to treat as strings.
    if !yaml_style_float(s) {
        return None;
    }
    let f: f64 = s.parse().ok()?;
    if f.is_infinite() { None } else { Some(f) }
}

/// go-yaml v2's `isBase60Float`: `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`.
pub(crate) fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    match b.first() {
        Some(c) if *c == b'+' || *c == b'-' || c.is_ascii_digit() => {}
        _ => return false,
    }
    if !s.contains(':') {
        return false;
    }
    let mut i = 0;
    if matches!(b[0], b'+' | b'-') {
        i = 1;
    }
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return false;
    }
    i += 1;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while b.get(i) == Some(&b':') {
        i += 1;
        // [0-5]?[0-9]
        let d1 = b.get(i).copied();
        let d2 = b.get(i + 1).copied();
        match (d1, d2) {
            (Some(x @ b'0'..=b'5'), Some(y)) if y.is_ascii_digit() => {
                let _ = x;
                i += 2;
            }
            (Some(x), _) if x.is_ascii_digit() => i += 1,
            _ => return false,
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

// ---- timestamps -------------------------------------------------------------

/// go-yaml v2's `parseTimestamp`: four digits and `-`, then one of the layouts
/// `2006-1-2T15:4:5.999999999Z07:00` (also with `t` or a space and no zone)
/// or `2006-1-2`, with Go's `time.Parse` rules for each element.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    [Layout::T, Layout::LowerT, Layout::Space, Layout::DateOnly]
        .iter()
        .any(|l| parse_layout(b, *l))
}

#[derive(Clone, Copy, PartialEq)]
enum Layout {
    T,
    LowerT,
    Space,
    DateOnly,
}

/// Go's `getnum(value, false)`: one or two digits.
fn getnum(b: &[u8], i: &mut usize) -> Option<u32> {
    let d0 = *b.get(*i)?;
    if !d0.is_ascii_digit() {
        return None;
    }
    match b.get(*i + 1) {
        Some(d1) if d1.is_ascii_digit() => {
            *i += 2;
            Some(((d0 - b'0') * 10 + (d1 - b'0')) as u32)
        }
        _ => {
            *i += 1;
            Some((d0 - b'0') as u32)
        }
    }
}

fn parse_layout(b: &[u8], layout: Layout) -> bool {
    let year: u32 = match std::str::from_utf8(&b[..4])
        .ok()
        .and_then(|y| y.parse().ok())
    {
        Some(y) => y,
        None => return false,
    };
    let mut i = 5;
    let Some(month) = getnum(b, &mut i) else {
        return false;
    };
    if b.get(i) != Some(&b'-') {
        return false;
    }
    i += 1;
    let Some(day) = getnum(b, &mut i) else {
        return false;
    };
    if layout != Layout::DateOnly {
        let sep = match layout {
            Layout::T => b'T',
            Layout::LowerT => b't',
            _ => b' ',
        };
        if b.get(i) != Some(&sep) {
            return false;
        }
        i += 1;
        let Some(hour) = getnum(b, &mut i) else {
            return false;
        };
        if hour >= 24 || b.get(i) != Some(&b':') {
            return false;
        }
        i += 1;
        let Some(min) = getnum(b, &mut i) else {
            return false;
        };
        if min >= 60 || b.get(i) != Some(&b':') {
            return false;
        }
        i += 1;
        let Some(sec) = getnum(b, &mut i) else {
            return false;
        };
        if sec >= 60 {
            return false;
        }
        // Optional fraction: '.' or ',' followed by digits.
        if matches!(b.get(i), Some(b'.' | b',')) && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        }
        if layout != Layout::Space {
            // Z07:00
            match b.get(i) {
                Some(b'Z') => i += 1,
                Some(b'+' | b'-') => {
                    if b.len() < i + 6 || b[i + 3] != b':' {
                        return false;
                    }
                    let two = |j: usize| {
                        (b[j].is_ascii_digit() && b[j + 1].is_ascii_digit())
                            .then(|| ((b[j] - b'0') * 10 + (b[j + 1] - b'0')) as u32)
                    };
                    match (two(i + 1), two(i + 4)) {
                        (Some(h), Some(m)) if h <= 24 && m <= 60 => {}
                        _ => return false,
                    }
                    i += 6;
                }
                _ => return false,
            }
        }
    }
    if i != b.len() || !(1..=12).contains(&month) {
        return false;
    }
    day >= 1 && day <= days_in(month, year)
}

fn days_in(month: u32, year: u32) -> u32 {
    match month {
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_yaml_v2_typing() {
        for s in [
            "",
            "~",
            "null",
            "y",
            "Yes",
            "ON",
            "off",
            "n",
            "1",
            "-1",
            "+1",
            "0x1F",
            "0o17",
            "017",
            "0b101",
            "1_000",
            "1.30",
            "1e3",
            ".5",
            "-.inf",
            ".NaN",
            "09",
            "1.",
            "2016-12-10T22:42:27Z",
            "2021-1-2",
            "2001-12-14 21:59:43.10",
            "18446744073709551615",
            "99999999999999999999",
        ] {
            assert_ne!(
                resolve_plain(s),
                Resolved::Str,
                "{s:?} should not read as a string"
            );
        }
        for s in [
            "abc",
            "yess",
            "nulls",
            "1.2.3",
            "0x",
            "0o8",
            "1e",
            "1e400",
            "+",
            "-",
            ".",
            "..5",
            "2021-02-30",
            "2021-13-01",
            "1.30.0",
            "v1.30",
            "<<",
            "1:20x",
            "0b102",
            "12:00:00Z",
        ] {
            assert_eq!(
                resolve_plain(s),
                Resolved::Str,
                "{s:?} should read as a string"
            );
        }
        assert!(is_base60_float("1:20"));
        assert!(is_base60_float("-190:20:30.15"));
        assert!(!is_base60_float("1:2a"));
        assert!(!is_base60_float("a:1"));
        assert!(!plain_reads_as_string("12:30"));
        assert!(plain_reads_as_string("::"));
    }
}
