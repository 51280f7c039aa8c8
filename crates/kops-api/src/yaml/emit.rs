//! The block-style emitter: the subset of libyaml's emitter (as go-yaml v2
//! ported it) that go-yaml's encoder drives for JSON-shaped data, with the
//! same column, indentation and whitespace bookkeeping, so that line breaks,
//! folding and quoting land where go-yaml puts them.

use serde_json::Value;

use super::resolve::plain_reads_as_string;
use super::{format_number, sort_keys};

/// go-yaml v2's default `best_width`.
const BEST_WIDTH: usize = 80;
/// go-yaml v2's indentation step.
const BEST_INDENT: i64 = 2;
/// libyaml writes a key as a simple key only up to this many bytes.
const MAX_SIMPLE_KEY: usize = 128;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

/// Where a node sits (libyaml's `*_context` flags).
#[derive(Clone, Copy, Default)]
struct Ctx {
    /// The node is a mapping's key or value.
    mapping: bool,
    /// The node is a simple (one-line, `key:`) key.
    simple_key: bool,
}

/// What the scalar analysis allows (libyaml's `scalar_data`).
struct Analysis {
    multiline: bool,
    flow_plain_allowed: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

pub(crate) struct Emitter {
    pub(crate) out: String,
    column: usize,
    indent: i64,
    indents: Vec<i64>,
    whitespace: bool,
    indention: bool,
    flow_level: usize,
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// libyaml's `is_blankz` on a character: blank, break or NUL.
fn is_blankz(c: char) -> bool {
    is_blank(c) || is_break(c) || c == '\0'
}

/// libyaml's `is_printable` (its byte tests, read as code points).
fn is_printable(c: char) -> bool {
    c == '\n'
        || (' '..='~').contains(&c)
        || ('\u{A0}'..='\u{D7FF}').contains(&c)
        || (('\u{E000}'..='\u{FFFD}').contains(&c) && c != '\u{FEFF}')
}

fn analyze(value: &str) -> Analysis {
    if value.is_empty() {
        return Analysis {
            multiline: false,
            flow_plain_allowed: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let mut block_indicators = false;
    let mut flow_indicators = false;
    let mut line_breaks = false;
    let mut special_characters = false;
    let mut leading_space = false;
    let mut leading_break = false;
    let mut trailing_space = false;
    let mut trailing_break = false;
    let mut break_space = false;
    let mut space_break = false;
    let mut previous_space = false;
    let mut previous_break = false;

    if value.starts_with("---") || value.starts_with("...") {
        block_indicators = true;
        flow_indicators = true;
    }
    let mut chars = value.chars().peekable();
    let mut first = true;
    let mut preceded_by_whitespace = true;
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        let last = next.is_none();
        let followed_by_whitespace = next.is_none_or(is_blank);
        if first {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                '?' | ':' => {
                    flow_indicators = true;
                    if followed_by_whitespace {
                        block_indicators = true;
                    }
                }
                '-' if followed_by_whitespace => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                _ => {}
            }
        } else {
            match c {
                ',' | '?' | '[' | ']' | '{' | '}' => flow_indicators = true,
                ':' => {
                    flow_indicators = true;
                    if followed_by_whitespace {
                        block_indicators = true;
                    }
                }
                '#' if preceded_by_whitespace => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                _ => {}
            }
        }
        if !is_printable(c) {
            special_characters = true;
        }
        if c == ' ' {
            leading_space |= first;
            trailing_space |= last;
            if previous_break {
                break_space = true;
            }
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            leading_break |= first;
            trailing_break |= last;
            if previous_space {
                space_break = true;
            }
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = is_blankz(c);
        first = false;
    }

    let mut a = Analysis {
        multiline: line_breaks,
        flow_plain_allowed: true,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special_characters {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
        a.block_allowed = false;
    }
    if line_breaks {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
    }
    if flow_indicators {
        a.flow_plain_allowed = false;
    }
    if block_indicators {
        a.block_plain_allowed = false;
    }
    a
}

impl Emitter {
    pub(crate) fn new() -> Self {
        Emitter {
            out: String::with_capacity(1024),
            column: 0,
            indent: -1,
            indents: Vec::new(),
            whitespace: true,
            indention: true,
            flow_level: 0,
        }
    }

    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.out.push(c);
            self.column = 0;
        }
    }

    fn write_indent(&mut self) {
        let indent = self.indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(&mut self, ind: &str, need_ws: bool, is_ws: bool, is_indention: bool) {
        if need_ws && !self.whitespace {
            self.put(' ');
        }
        for c in ind.chars() {
            self.put(c);
        }
        self.whitespace = is_ws;
        self.indention = self.indention && is_indention;
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { BEST_INDENT } else { 0 };
        } else if !indentless {
            self.indent += BEST_INDENT;
        }
    }

    fn pop_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    /// Writes `value` as the root node of the document.
    pub(crate) fn root(&mut self, value: &Value) {
        self.node(value, Ctx::default());
    }

    /// The end of the (only) document: a final line break.
    pub(crate) fn document_end(&mut self) {
        self.write_indent();
    }

    fn node(&mut self, value: &Value, ctx: Ctx) {
        match value {
            Value::Null => self.scalar("null", Style::Plain, ctx),
            Value::Bool(b) => self.scalar(if *b { "true" } else { "false" }, Style::Plain, ctx),
            Value::Number(n) => self.scalar(&format_number(n), Style::Plain, ctx),
            Value::String(s) => self.string(s, ctx),
            Value::Array(items) if items.is_empty() || self.flow_level > 0 => {
                self.flow_empty("[", "]");
            }
            Value::Object(map) if map.is_empty() || self.flow_level > 0 => {
                self.flow_empty("{", "}");
            }
            Value::Array(items) => {
                let indentless = ctx.mapping && !self.indention;
                self.increase_indent(false, indentless);
                for item in items {
                    self.write_indent();
                    self.write_indicator("-", true, false, true);
                    self.node(item, Ctx::default());
                }
                self.pop_indent();
            }
            Value::Object(map) => {
                self.increase_indent(false, false);
                for (k, v) in sort_keys(map) {
                    self.write_indent();
                    let simple = !analyze(k).multiline && k.len() <= MAX_SIMPLE_KEY;
                    if simple {
                        self.string(
                            k,
                            Ctx {
                                mapping: true,
                                simple_key: true,
                            },
                        );
                        self.write_indicator(":", false, false, false);
                    } else {
                        self.write_indicator("?", true, false, true);
                        self.string(
                            k,
                            Ctx {
                                mapping: true,
                                simple_key: false,
                            },
                        );
                        self.write_indent();
                        self.write_indicator(":", true, false, true);
                    }
                    self.node(
                        v,
                        Ctx {
                            mapping: true,
                            simple_key: false,
                        },
                    );
                }
                self.pop_indent();
            }
        }
    }

    /// An empty collection (`[]`/`{}`): the only flow collections go-yaml
    /// writes for JSON-shaped data.
    fn flow_empty(&mut self, open: &str, close: &str) {
        self.write_indicator(open, true, true, false);
        self.increase_indent(true, false);
        self.pop_indent();
        self.write_indicator(close, false, false, false);
    }

    /// A string with the style go-yaml's encoder asks for: literal when it
    /// has a line feed, plain when it reads back as a string, else double
    /// quotes.
    fn string(&mut self, s: &str, ctx: Ctx) {
        let style = if s.contains('\n') {
            Style::Literal
        } else if plain_reads_as_string(s) {
            Style::Plain
        } else {
            Style::DoubleQuoted
        };
        self.scalar(s, style, ctx);
    }

    fn scalar(&mut self, value: &str, requested: Style, ctx: Ctx) {
        let a = analyze(value);
        let mut style = requested;
        if ctx.simple_key && a.multiline {
            style = Style::DoubleQuoted;
        }
        if style == Style::Plain {
            if (self.flow_level > 0 && !a.flow_plain_allowed)
                || (self.flow_level == 0 && !a.block_plain_allowed)
            {
                style = Style::SingleQuoted;
            }
            if value.is_empty() && (self.flow_level > 0 || ctx.simple_key) {
                style = Style::SingleQuoted;
            }
        }
        if style == Style::SingleQuoted && !a.single_quoted_allowed {
            style = Style::DoubleQuoted;
        }
        if style == Style::Literal && (!a.block_allowed || self.flow_level > 0 || ctx.simple_key) {
            style = Style::DoubleQuoted;
        }
        self.increase_indent(true, false);
        let allow_breaks = !ctx.simple_key;
        match style {
            Style::Plain => self.write_plain(value, allow_breaks),
            Style::SingleQuoted => self.write_single_quoted(value, allow_breaks),
            Style::DoubleQuoted => self.write_double_quoted(value, allow_breaks),
            Style::Literal => self.write_literal(value),
        }
        self.pop_indent();
    }

    /// Appends a run of characters that holds no space and no line break.
    fn put_run(&mut self, run: &str) {
        self.out.push_str(run);
        self.column += run.chars().count();
    }

    fn write_plain(&mut self, value: &str, allow_breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        if !value.contains(|c: char| c == ' ' || is_break(c)) {
            // No space to fold at and no break: the value as it is.
            self.put_run(value);
            self.whitespace = false;
            self.indention = false;
            return;
        }
        let chars: Vec<char> = value.chars().collect();
        let mut spaces = false;
        let mut breaks = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if allow_breaks && !spaces && self.column > BEST_WIDTH && !next_space {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn write_single_quoted(&mut self, value: &str, allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        let chars: Vec<char> = value.chars().collect();
        let n = chars.len();
        let mut spaces = false;
        let mut breaks = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i > 0
                    && i + 1 < n
                    && !next_space
                {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_double_quoted(&mut self, value: &str, allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        // libyaml's BOM test looks at the start of the value, not at the
        // current character: a value starting with U+FEFF is escaped whole.
        let bom = value.starts_with('\u{FEFF}');
        let chars: Vec<char> = value.chars().collect();
        let n = chars.len();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if !is_printable(c) || bom || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                let short = match c {
                    '\0' => Some('0'),
                    '\u{7}' => Some('a'),
                    '\u{8}' => Some('b'),
                    '\t' => Some('t'),
                    '\n' => Some('n'),
                    '\u{b}' => Some('v'),
                    '\u{c}' => Some('f'),
                    '\r' => Some('r'),
                    '\u{1b}' => Some('e'),
                    '"' => Some('"'),
                    '\\' => Some('\\'),
                    '\u{85}' => Some('N'),
                    '\u{A0}' => Some('_'),
                    '\u{2028}' => Some('L'),
                    '\u{2029}' => Some('P'),
                    _ => None,
                };
                match short {
                    Some(e) => self.put(e),
                    None => {
                        let v = c as u32;
                        let (tag, width) = if v <= 0xFF {
                            ('x', 2)
                        } else if v <= 0xFFFF {
                            ('u', 4)
                        } else {
                            ('U', 8)
                        };
                        self.put(tag);
                        for k in (0..width).rev() {
                            let d = (v >> (4 * k)) & 0xF;
                            let h = char::from_digit(d, 16).unwrap_or('0').to_ascii_uppercase();
                            self.put(h);
                        }
                    }
                }
                spaces = false;
            } else if c == ' ' {
                if allow_breaks && !spaces && self.column > BEST_WIDTH && i > 0 && i + 1 < n {
                    self.write_indent();
                    if chars.get(i + 1) == Some(&' ') {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_literal(&mut self, value: &str) {
        self.write_indicator("|", true, false, false);
        if let Some(first) = value.chars().next()
            && (first == ' ' || is_break(first))
        {
            self.write_indicator("2", false, false, false);
        }
        let mut from_end = value.chars().rev();
        let chomp = match (from_end.next(), from_end.next()) {
            (None, _) => Some("-"),
            (Some(last), _) if !is_break(last) => Some("-"),
            (Some(_), None) => Some("+"),
            (Some(_), Some(prev)) if is_break(prev) => Some("+"),
            _ => None,
        };
        if let Some(h) = chomp {
            self.write_indicator(h, false, false, false);
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        let mut rest = value;
        while !rest.is_empty() {
            let end = rest.find(is_break).unwrap_or(rest.len());
            if end > 0 {
                if breaks {
                    self.write_indent();
                }
                self.put_run(&rest[..end]);
                self.indention = false;
                breaks = false;
            }
            let mut tail = rest[end..].chars();
            if let Some(c) = tail.next() {
                self.write_break(c);
                self.indention = true;
                breaks = true;
            }
            rest = tail.as_str();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn analysis_matches_libyaml() {
        assert!(!analyze("a: b").block_plain_allowed);
        assert!(analyze("a:b").block_plain_allowed);
        assert!(!analyze("a #b").block_plain_allowed);
        assert!(analyze("a#b").block_plain_allowed);
        assert!(!analyze("- a").block_plain_allowed);
        assert!(analyze("-a").block_plain_allowed);
        assert!(!analyze("---x").block_plain_allowed);
        assert!(!analyze(" a").block_plain_allowed);
        assert!(!analyze("a\tb").single_quoted_allowed);
        assert!(analyze("a\n b").block_allowed);
        assert!(!analyze("a \nb").block_allowed);
        assert!(!analyze("\u{1F600}").block_plain_allowed);
    }
}
