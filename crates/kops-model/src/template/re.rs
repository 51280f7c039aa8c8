//! Sprig's regular-expression functions (`regexMatch`, `regexFind`, `regexFindAll`,
//! `regexReplaceAll`, `regexReplaceAllLiteral`, `regexSplit`, their `must*` forms and
//! `regexQuoteMeta`) over the `regex` crate, with Go's `regexp` semantics.
//!
//! Go's `regexp` and the `regex` crate both implement RE2's syntax with leftmost-first
//! matching, and both skip an empty match right after a match when iterating. Where
//! their syntax differs, [`translate`] rewrites a Go pattern so that it means what it
//! means in Go:
//!
//! - `\d`, `\w`, `\s`, `\b` (and `\D`, `\W`, `\S`, `\B`) are ASCII in Go and Unicode
//!   in the crate: they become `[0-9]`, `[0-9A-Za-z_]`, `[\t\n\f\r ]` (Go's `\s` has no
//!   `\v`) and ASCII word boundaries.
//! - `\Q...\E` quotes literal text in Go only.
//! - A `{` that does not start a repetition (`{n}`, `{n,}`, `{n,m}`) and a lone `}`
//!   are literal in Go and errors (or operators) in the crate.
//! - Inside a class, Go reads `[` (unless it starts `[:alpha:]`), `&&` and `~~` as
//!   characters and `+--` as the range from `+` to `-`; the crate reads nested classes
//!   and set operations.
//! - Octal escapes (`\123`) are Go syntax the crate takes only when asked to.
//!
//! What remains: the crate accepts some patterns Go rejects (the `x`, `R` and `u`
//! flags, `\<` and `\>`, a nested repetition `a**`, `\1` read as an octal escape where
//! Go refuses a backreference), and its error messages are its own.

use regex::{Captures, Regex, RegexBuilder};
use serde_json::Value;

use super::funcs::{FnError, R, fail, int_arg, string_arg, want};

/// Calls the regex function `name` (`funcs::call` sends the names it lists here).
///
/// Sprig's plain forms panic on a bad regex (its `regexMatch` answers false) and the
/// `must*` forms return the error; here both fail the template with the error.
pub(super) fn call(name: &str, a: &[Value]) -> R {
    if name == "regexQuoteMeta" {
        want(name, a, 1)?;
        return Ok(Value::String(quote_meta(&string_arg(name, &a[0])?)));
    }
    // `mustRegexFind` is `regexFind` returning its error.
    let base = match name {
        "mustRegexMatch" => "regexMatch",
        "mustRegexFind" => "regexFind",
        "mustRegexFindAll" => "regexFindAll",
        "mustRegexReplaceAll" => "regexReplaceAll",
        "mustRegexReplaceAllLiteral" => "regexReplaceAllLiteral",
        "mustRegexSplit" => "regexSplit",
        other => other,
    };
    let arity = match base {
        "regexMatch" | "regexFind" => 2,
        _ => 3,
    };
    want(name, a, arity)?;
    let pattern = string_arg(name, &a[0])?;
    let text = string_arg(name, &a[1])?;
    let re = compile(&pattern)?;
    let strings = |v: Vec<&str>| Value::Array(v.into_iter().map(Value::from).collect());
    match base {
        "regexMatch" => Ok(Value::Bool(re.is_match(&text))),
        "regexFind" => Ok(Value::String(
            re.find(&text).map_or("", |m| m.as_str()).to_string(),
        )),
        "regexFindAll" => {
            let n = int_arg(name, &a[2])?;
            Ok(strings(
                re.find_iter(&text)
                    .take(limit(n))
                    .map(|m| m.as_str())
                    .collect(),
            ))
        }
        "regexReplaceAll" => {
            let repl = string_arg(name, &a[2])?;
            Ok(Value::String(replace_all(&re, &text, |caps, out| {
                expand(&repl, caps, out)
            })))
        }
        "regexReplaceAllLiteral" => {
            let repl = string_arg(name, &a[2])?;
            Ok(Value::String(replace_all(&re, &text, |_, out| {
                out.push_str(&repl)
            })))
        }
        "regexSplit" => {
            let n = int_arg(name, &a[2])?;
            Ok(strings(split(&re, !pattern.is_empty(), &text, n)))
        }
        _ => Err(FnError::Unknown),
    }
}

/// How many matches Go's `FindAll(s, n)` returns at most: all when `n` is negative.
fn limit(n: i64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Compiles a Go pattern; the error is Go's `error parsing regexp: ...` with the crate's
/// reason.
fn compile(pattern: &str) -> Result<Regex, FnError> {
    RegexBuilder::new(&translate(pattern))
        .octal(true)
        .build()
        .or_else(|e| {
            let reason = match &e {
                // The crate's message shows the (translated) pattern with a caret; the
                // reason is its last line.
                regex::Error::Syntax(text) => text
                    .lines()
                    .rev()
                    .find_map(|l| l.strip_prefix("error: "))
                    .unwrap_or(text)
                    .trim()
                    .to_string(),
                other => other.to_string(),
            };
            fail(format!("error parsing regexp: {reason}: `{pattern}`"))
        })
}

/// Go's `regexp.QuoteMeta`: a backslash before each of `\.+*?()|[]{}^$`.
fn quote_meta(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Go's `ReplaceAllString`: each match replaced by what `repl` writes, the text between
/// matches kept.
fn replace_all(re: &Regex, text: &str, mut repl: impl FnMut(&Captures<'_>, &mut String)) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for caps in re.captures_iter(text) {
        let Some(m) = caps.get(0) else { continue };
        out.push_str(&text[last..m.start()]);
        repl(&caps, &mut out);
        last = m.end();
    }
    out.push_str(&text[last..]);
    out
}

/// Go's `Regexp.Expand` of a template: `$1`, `$name`, `${1}`, `${name}` are the
/// groups' text (empty when a group is unknown or did not take part), `$$` is `$`, and
/// a `$` without a valid name stays as it is. A name is the longest run of letters,
/// digits and `_` (`$1x` is the group named `1x`); a number with a leading zero is a
/// name.
fn expand(template: &str, caps: &Captures<'_>, out: &mut String) {
    let mut rest = template;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        rest = &rest[i + 1..];
        if let Some(r) = rest.strip_prefix('$') {
            out.push('$');
            rest = r;
            continue;
        }
        let Some((name, after)) = group_ref(rest) else {
            out.push('$');
            continue;
        };
        rest = after;
        let group = match group_number(name) {
            Some(n) => caps.get(n),
            None => caps.name(name),
        };
        if let Some(g) = group {
            out.push_str(g.as_str());
        }
    }
    out.push_str(rest);
}

/// The group name after a `$` (`name` or `{name}`) and the text after it; `None` when
/// there is no valid name.
fn group_ref(s: &str) -> Option<(&str, &str)> {
    let (braced, body) = match s.strip_prefix('{') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let end = body
        .char_indices()
        .find(|&(_, c)| !(c.is_alphanumeric() || c == '_'))
        .map_or(body.len(), |(i, _)| i);
    if end == 0 {
        return None;
    }
    let name = &body[..end];
    if braced {
        body[end..].strip_prefix('}').map(|after| (name, after))
    } else {
        Some((name, &body[end..]))
    }
}

/// A group number as Go reads one: ASCII digits, no leading zero, below 10^8.
fn group_number(name: &str) -> Option<usize> {
    if !name.bytes().all(|b| b.is_ascii_digit()) || (name.len() > 1 && name.starts_with('0')) {
        return None;
    }
    name.parse().ok().filter(|n| *n < 100_000_000)
}

/// Go's `Regexp.Split`: the text between the first `n` matches (all when `n` is
/// negative, none when 0), the last piece holding the rest.
fn split<'t>(re: &Regex, pattern_nonempty: bool, text: &'t str, n: i64) -> Vec<&'t str> {
    if n == 0 {
        return Vec::new();
    }
    if pattern_nonempty && text.is_empty() {
        return vec![""];
    }
    let mut out = Vec::new();
    let (mut begin, mut end) = (0, 0);
    for m in re.find_iter(text).take(limit(n)) {
        if n > 0 && out.len() as i64 == n - 1 {
            break;
        }
        end = m.start();
        if m.end() != 0 {
            out.push(&text[begin..end]);
        }
        begin = m.end();
    }
    if end != text.len() {
        out.push(&text[begin..]);
    }
    out
}

/// Go's `\d`, `\w` and `\s` (ASCII) and their negations, as class items.
fn perl_class(c: char) -> Option<(&'static str, bool)> {
    match c {
        'd' => Some(("0-9", false)),
        'D' => Some(("0-9", true)),
        'w' => Some(("0-9A-Za-z_", false)),
        'W' => Some(("0-9A-Za-z_", true)),
        's' => Some((r"\t\n\f\r ", false)),
        'S' => Some((r"\t\n\f\r ", true)),
        _ => None,
    }
}

/// The length in bytes of the escape sequence at the start of `s` (which starts with
/// `\`): `\x{...}`, `\xHH`, `\p{...}`, `\pL`, octal `\123`, or `\` and one character.
fn escape_len(s: &str) -> usize {
    let rest = &s[1..];
    let Some(c) = rest.chars().next() else {
        return 1;
    };
    let after = &rest[c.len_utf8()..];
    let tail = match c {
        'x' | 'p' | 'P' if after.starts_with('{') => after.find('}').map_or(after.len(), |i| i + 1),
        'x' => after.chars().take(2).map(char::len_utf8).sum(),
        'p' | 'P' => after.chars().next().map_or(0, char::len_utf8),
        '0'..='7' => after
            .chars()
            .take(2)
            .take_while(|d| ('0'..='7').contains(d))
            .count(),
        _ => 0,
    };
    1 + c.len_utf8() + tail
}

/// Whether `s` starts with a Go repetition `{n}`, `{n,}` or `{n,m}` (numbers without a
/// leading zero); its length.
fn repetition_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    // The length of the number at `from`; `None` for a leading zero.
    let number = |from: usize| {
        let n = b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
        (n < 2 || b[from] != b'0').then_some(n)
    };
    let mut i = 1;
    let d = number(i)?;
    if d == 0 {
        return None;
    }
    i += d;
    if b.get(i) == Some(&b',') {
        i += 1;
        i += number(i)?;
    }
    (b.get(i) == Some(&b'}')).then_some(i + 1)
}

/// Rewrites a Go pattern into the `regex` crate's syntax with the same meaning (see the
/// module's docs). Errors are left for the crate to report.
fn translate(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut rest = pattern;
    while let Some(c) = rest.chars().next() {
        match c {
            '\\' => {
                let next = rest[1..].chars().next();
                if next == Some('Q') {
                    let quoted = &rest[2..];
                    let (lit, after) = quoted.split_once(r"\E").unwrap_or((quoted, ""));
                    out.push_str(&regex::escape(lit));
                    rest = after;
                    continue;
                }
                if let Some((items, negated)) = next.and_then(perl_class) {
                    out.push_str(if negated { "[^" } else { "[" });
                    out.push_str(items);
                    out.push(']');
                    rest = &rest[2..];
                    continue;
                }
                if let Some(b @ ('b' | 'B')) = next {
                    out.push_str("(?-u:\\");
                    out.push(b);
                    out.push(')');
                    rest = &rest[2..];
                    continue;
                }
                let n = escape_len(rest);
                out.push_str(&rest[..n]);
                rest = &rest[n..];
            }
            '[' => rest = translate_class(rest, &mut out),
            '{' => match repetition_len(rest) {
                Some(n) => {
                    out.push_str(&rest[..n]);
                    rest = &rest[n..];
                }
                None => {
                    out.push_str(r"\{");
                    rest = &rest[1..];
                }
            },
            '}' => {
                out.push_str(r"\}");
                rest = &rest[1..];
            }
            c => {
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    out
}

/// Translates the class at the start of `s` (which starts with `[`) into `out`, as Go
/// parses it: an optional `^`, a leading `]` taken literally, named classes
/// `[:alpha:]`, Perl classes, `\p` classes, and characters or ranges `a-z`. Returns the
/// rest of the pattern; an unclosed class is left open for the crate to report.
fn translate_class<'p>(s: &'p str, out: &mut String) -> &'p str {
    out.push('[');
    let mut rest = &s[1..];
    if let Some(r) = rest.strip_prefix('^') {
        out.push('^');
        rest = r;
    }
    let mut first = true;
    while let Some(c) = rest.chars().next() {
        if c == ']' && !first {
            out.push(']');
            return &rest[1..];
        }
        first = false;
        if rest.starts_with("[:")
            && let Some(end) = rest.find(":]")
        {
            out.push_str(&rest[..end + 2]);
            rest = &rest[end + 2..];
            continue;
        }
        if c == '\\' {
            let next = rest[1..].chars().next();
            if let Some((items, negated)) = next.and_then(perl_class) {
                if negated {
                    out.push_str("[^");
                    out.push_str(items);
                    out.push(']');
                } else {
                    out.push_str(items);
                }
                rest = &rest[2..];
                continue;
            }
            if let Some('p' | 'P') = next {
                let n = escape_len(rest);
                out.push_str(&rest[..n]);
                rest = &rest[n..];
                continue;
            }
        }
        rest = class_char(rest, out);
        // A range: `-` and a character, unless the `-` ends the class.
        if let Some(r) = rest.strip_prefix('-')
            && !r.is_empty()
            && !r.starts_with(']')
        {
            out.push('-');
            rest = class_char(r, out);
        }
    }
    rest
}

/// Copies one class character (a character or an escape) from the start of `s` into
/// `out`, escaping what the crate would read as an operator; returns the rest.
fn class_char<'p>(s: &'p str, out: &mut String) -> &'p str {
    let Some(c) = s.chars().next() else {
        return s;
    };
    if c == '\\' {
        let n = escape_len(s);
        out.push_str(&s[..n]);
        return &s[n..];
    }
    if matches!(c, '[' | ']' | '-' | '&' | '~' | '^') {
        out.push('\\');
    }
    out.push(c);
    &s[c.len_utf8()..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn go(pattern: &str) -> Regex {
        compile(pattern).unwrap_or_else(|e| panic!("{pattern:?}: {e}"))
    }

    #[test]
    fn perl_classes_and_word_boundaries_are_ascii_as_in_go() {
        assert_eq!(translate(r"\d+\W"), r"[0-9]+[^0-9A-Za-z_]");
        assert_eq!(go(r"\w+").find("café").map(|m| m.as_str()), Some("caf"));
        assert!(!go(r"\d").is_match("٣"));
        assert!(!go(r"\s").is_match("\u{a0}\u{0b}"));
        assert!(go(r"\s").is_match("\u{0c}"));
        // é is not a word character in Go: a boundary after x, none at the start.
        assert_eq!(go(r"\bé").find("é"), None);
        assert_eq!(go(r"\bé").find("xé").map(|m| m.start()), Some(1));
        assert_eq!(
            go(r"[\d\s]+").find("a1 2b").map(|m| m.as_str()),
            Some("1 2")
        );
        assert_eq!(go(r"[^\D]+").find("ab12").map(|m| m.as_str()), Some("12"));
        assert_eq!(go(r"[\Sx]+").find(" ab ").map(|m| m.as_str()), Some("ab"));
    }

    #[test]
    fn go_literals_the_crate_reads_otherwise() {
        assert_eq!(translate(r"\Qa.b\E+"), r"a\.b+");
        assert!(go(r"\Qa.b").is_match("a.b") && !go(r"\Qa.b").is_match("axb"));
        assert_eq!(go(r"x{").find("ax{").map(|m| m.as_str()), Some("x{"));
        assert_eq!(go(r"{a}").find("{a}").map(|m| m.as_str()), Some("{a}"));
        assert_eq!(
            go(r"a{,2}").find("a{,2}").map(|m| m.as_str()),
            Some("a{,2}")
        );
        assert_eq!(
            go(r"a{01}").find("a{01}").map(|m| m.as_str()),
            Some("a{01}")
        );
        assert_eq!(
            go(r"a{2,}b{1,2}c{1}").find("aabbc").map(|m| m.as_str()),
            Some("aabbc")
        );
        assert_eq!(go(r"[a[]+").find("x[a[").map(|m| m.as_str()), Some("[a["));
        assert_eq!(go(r"[a&&b]+").find("x&ab").map(|m| m.as_str()), Some("&ab"));
        assert_eq!(go(r"[~~]").find("a~").map(|m| m.as_str()), Some("~"));
        assert_eq!(go(r"[]a]+").find("x]a").map(|m| m.as_str()), Some("]a"));
        assert_eq!(go(r"[^]a]").find("]ab").map(|m| m.as_str()), Some("b"));
        // `+--` is the range from `+` to `-` in Go.
        assert_eq!(go(r"[+--]+").find("a+,-").map(|m| m.as_str()), Some("+,-"));
        assert_eq!(go(r"[a-]+").find("x-a").map(|m| m.as_str()), Some("-a"));
        assert_eq!(
            go(r"[[:alpha:]-]+").find("1a-b").map(|m| m.as_str()),
            Some("a-b")
        );
        assert_eq!(
            go(r"\101\x42\x{43}").find("ABC").map(|m| m.as_str()),
            Some("ABC")
        );
        assert_eq!(
            go(r"[\x41-\x{43}]+").find("ABCD").map(|m| m.as_str()),
            Some("ABC")
        );
        assert_eq!(
            go(r"\p{Greek}+\pL").find("aαβ").map(|m| m.as_str()),
            Some("αβ")
        );
        assert_eq!(
            go(r"[\p{Greek}x]+").find("axα").map(|m| m.as_str()),
            Some("xα")
        );
        assert_eq!(
            go(r"(?P<a>x)(?<b>y)").find("xy").map(|m| m.as_str()),
            Some("xy")
        );
    }

    #[test]
    fn bad_patterns_report_the_reason_and_the_pattern() {
        let msg = |p: &str| match compile(p) {
            Err(FnError::Failed(m)) => m,
            other => panic!("{p:?}: {other:?}"),
        };
        assert_eq!(msg("a("), "error parsing regexp: unclosed group: `a(`");
        assert_eq!(
            msg("[a"),
            "error parsing regexp: unclosed character class: `[a`"
        );
        assert!(msg("\\").starts_with("error parsing regexp: incomplete escape"));
    }

    #[test]
    fn expand_as_go() {
        let re = go(r"(?P<first>\w+) (\w+)");
        let caps = re.captures("hello world").unwrap();
        let x = |t: &str| {
            let mut out = String::new();
            expand(t, &caps, &mut out);
            out
        };
        assert_eq!(x("$2 $1"), "world hello");
        assert_eq!(x("${2}x $2x"), "worldx ");
        assert_eq!(x("$first-${first}"), "hello-hello");
        assert_eq!(x("$$1 $ $. ${1 ${} $9 $01"), "$1 $ $. ${1 ${}  ");
        assert_eq!(x("trailing $"), "trailing $");
    }

    #[test]
    fn split_as_go() {
        fn sp<'t>(p: &str, t: &'t str, n: i64) -> Vec<&'t str> {
            split(&go(p), !p.is_empty(), t, n)
        }
        assert_eq!(sp("z+", "pizza", -1), ["pi", "a"]);
        assert_eq!(sp("a", "banana", -1), ["b", "n", "n", ""]);
        assert_eq!(sp("a", "banana", 2), ["b", "nana"]);
        assert_eq!(sp("a", "banana", 1), ["banana"]);
        assert!(sp("a", "banana", 0).is_empty());
        assert_eq!(sp("", "abc", -1), ["a", "b", "c"]);
        assert_eq!(sp("x*", "axxb", -1), ["a", "b"]);
        assert_eq!(sp("a", "", -1), [""]);
        assert!(sp("", "", -1).is_empty());
    }

    #[test]
    fn translating_never_splits_a_character() {
        // Every pattern of up to four characters from an alphabet of the syntax's
        // special characters: translating slices the pattern only at boundaries.
        let alphabet: Vec<char> = "\\[]{}-^:QExp0,é".chars().collect();
        let mut patterns = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> = patterns
                .iter()
                .flat_map(|p| alphabet.iter().map(move |c| format!("{p}{c}")))
                .collect();
            for p in &longer {
                let _ = translate(p);
            }
            patterns = longer;
        }
    }

    #[test]
    fn quote_meta_as_go() {
        assert_eq!(
            quote_meta(r"1.2+[x]{3}-#&~ $\"),
            r"1\.2\+\[x\]\{3\}-#&~ \$\\"
        );
        assert!(go(&quote_meta("a.b{1}(c)")).is_match("a.b{1}(c)"));
    }
}
