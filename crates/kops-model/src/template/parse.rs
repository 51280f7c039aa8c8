//! Lexing and parsing of the template language into a tree of nodes.

use std::collections::BTreeMap;

use super::TemplateError;

/// One token inside an action.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// `.name`
    Field(String),
    /// `.` alone
    Dot,
    /// `$name` (`$` alone is the empty name)
    Var(String),
    /// A function name or a keyword.
    Ident(String),
    Str(String),
    Int(i64),
    Float(f64),
    Pipe,
    LParen,
    RParen,
    Comma,
    Declare,
    Assign,
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    /// Whether whitespace separates it from the token before.
    spaced: bool,
}

/// An item of the template's text: plain text or one action's tokens.
#[derive(Debug)]
enum Item {
    Text(String),
    Action { line: usize, tokens: Vec<Token> },
}

/// An operand of a command.
#[derive(Debug, Clone)]
pub(super) enum Arg {
    /// `.` followed by fields (`.a.b` is `Dot` with `["a","b"]`).
    Dot(Vec<String>),
    /// `$x.a.b`
    Var(String, Vec<String>),
    /// A function name.
    Func(String),
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Nil,
    /// `(pipeline).a.b`
    Sub(Box<Pipe>, Vec<String>),
}

/// A command: a function and its arguments, or one operand.
#[derive(Debug, Clone)]
pub(super) struct Cmd {
    pub(super) args: Vec<Arg>,
}

/// A pipeline, optionally declaring or assigning variables.
#[derive(Debug, Clone)]
pub(super) struct Pipe {
    pub(super) line: usize,
    pub(super) vars: Vec<String>,
    pub(super) assign: bool,
    pub(super) cmds: Vec<Cmd>,
}

/// A node of a template's tree.
#[derive(Debug, Clone)]
pub(super) enum Node {
    Text(String),
    Action(Pipe),
    If(Pipe, Vec<Node>, Vec<Node>),
    With(Pipe, Vec<Node>, Vec<Node>),
    Range(Pipe, Vec<Node>, Vec<Node>),
    Template(usize, String, Option<Pipe>),
    Break,
    Continue,
}

/// A parsed template: its main tree and the templates it defines.
#[derive(Debug)]
pub(super) struct Parsed {
    pub(super) root: Vec<Node>,
    pub(super) defines: BTreeMap<String, Vec<Node>>,
}

/// Parses `text`; errors name `name` and the line.
pub(super) fn parse(name: &str, text: &str) -> Result<Parsed, TemplateError> {
    let items = lex(name, text)?;
    let mut p = Parser {
        name,
        items,
        pos: 0,
        defines: BTreeMap::new(),
        range_depth: 0,
    };
    let (root, end) = p.list()?;
    if let Some((line, word)) = end {
        return Err(TemplateError::new(
            name,
            line,
            format!("unexpected {{{{{word}}}}}"),
        ));
    }
    Ok(Parsed {
        root,
        defines: p.defines,
    })
}

fn lex(name: &str, text: &str) -> Result<Vec<Item>, TemplateError> {
    let mut items = Vec::new();
    let mut rest = text;
    let mut line = 1usize;
    let mut trim_next = false;
    while !rest.is_empty() {
        let Some(start) = rest.find("{{") else {
            let t = if trim_next { rest.trim_start() } else { rest };
            if !t.is_empty() {
                items.push(Item::Text(t.to_string()));
            }
            break;
        };
        let mut before = &rest[..start];
        line += before.matches('\n').count();
        if trim_next {
            before = before.trim_start();
        }
        let mut inner = &rest[start + 2..];
        if inner.starts_with("- ")
            || inner.starts_with("-\t")
            || inner.starts_with("-\n")
            || inner.starts_with("-\r")
        {
            before = before.trim_end();
            inner = &inner[1..];
        }
        if !before.is_empty() {
            items.push(Item::Text(before.to_string()));
        }
        let action_line = line;
        // Find the closing delimiter outside of quotes.
        let (body, close_len, trim) = find_close(inner)
            .ok_or_else(|| TemplateError::new(name, action_line, "unclosed action".to_string()))?;
        let body_text = &inner[..body];
        line += body_text.matches('\n').count();
        rest = &inner[body + close_len..];
        trim_next = trim;
        let trimmed = body_text.trim();
        if trimmed.starts_with("/*") {
            if !trimmed.ends_with("*/") {
                return Err(TemplateError::new(
                    name,
                    action_line,
                    "unclosed comment".to_string(),
                ));
            }
            continue;
        }
        let tokens = lex_action(body_text).map_err(|m| TemplateError::new(name, action_line, m))?;
        items.push(Item::Action {
            line: action_line,
            tokens,
        });
    }
    Ok(items)
}

/// Where the action in `s` (after `{{`) ends: the length of its body, of the closing
/// delimiter, and whether it trims the text after it.
fn find_close(s: &str) -> Option<(usize, usize, bool)> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut in_comment = false;
    while i < b.len() {
        let c = b[i];
        if in_comment {
            if b[i..].starts_with(b"*/") {
                in_comment = false;
                i += 2;
                continue;
            }
            i += 1;
            continue;
        }
        match c {
            b'/' if b[i..].starts_with(b"/*") => {
                in_comment = true;
                i += 2;
                continue;
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'`' => {
                i += 1;
                while i < b.len() && b[i] != b'`' {
                    i += 1;
                }
            }
            b'\'' => {
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b' ' | b'\t' | b'\n' | b'\r' if b[i + 1..].starts_with(b"-}}") => {
                return Some((i, 4, true));
            }
            b'}' if b[i..].starts_with(b"}}") => return Some((i, 2, false)),
            _ => {}
        }
        i += 1;
    }
    None
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn lex_action(s: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut spaced = true;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            spaced = true;
            i += 1;
            continue;
        }
        let start = i;
        let tok = match c {
            '|' => {
                i += 1;
                Tok::Pipe
            }
            '(' => {
                i += 1;
                Tok::LParen
            }
            ')' => {
                i += 1;
                Tok::RParen
            }
            ',' => {
                i += 1;
                Tok::Comma
            }
            ':' if chars.get(i + 1) == Some(&'=') => {
                i += 2;
                Tok::Declare
            }
            '=' => {
                i += 1;
                Tok::Assign
            }
            '.' if chars.get(i + 1).is_some_and(|c| c.is_ascii_digit()) => {
                let (t, n) = lex_number(&chars[i..])?;
                i += n;
                t
            }
            '.' => {
                i += 1;
                let st = i;
                while i < chars.len() && is_ident(chars[i]) {
                    i += 1;
                }
                if st == i {
                    Tok::Dot
                } else {
                    Tok::Field(chars[st..i].iter().collect())
                }
            }
            '$' => {
                i += 1;
                let st = i;
                while i < chars.len() && is_ident(chars[i]) {
                    i += 1;
                }
                Tok::Var(chars[st..i].iter().collect())
            }
            '"' => {
                i += 1;
                let mut v = String::new();
                loop {
                    let Some(&c) = chars.get(i) else {
                        return Err("unterminated quoted string".into());
                    };
                    i += 1;
                    match c {
                        '"' => break,
                        '\\' => {
                            let Some(&e) = chars.get(i) else {
                                return Err("unterminated quoted string".into());
                            };
                            i += 1;
                            match e {
                                'n' => v.push('\n'),
                                't' => v.push('\t'),
                                'r' => v.push('\r'),
                                '\\' => v.push('\\'),
                                '"' => v.push('"'),
                                '\'' => v.push('\''),
                                '0' => v.push('\0'),
                                'x' | 'u' | 'U' => {
                                    let n = match e {
                                        'x' => 2,
                                        'u' => 4,
                                        _ => 8,
                                    };
                                    let hex: String = chars.iter().skip(i).take(n).collect();
                                    i += n;
                                    let ch = u32::from_str_radix(&hex, 16)
                                        .ok()
                                        .and_then(char::from_u32)
                                        .ok_or_else(|| format!("bad escape \\{e}{hex}"))?;
                                    v.push(ch);
                                }
                                other => return Err(format!("unknown escape \\{other}")),
                            }
                        }
                        '\n' => return Err("unterminated quoted string".into()),
                        c => v.push(c),
                    }
                }
                Tok::Str(v)
            }
            '`' => {
                i += 1;
                let st = i;
                while i < chars.len() && chars[i] != '`' {
                    i += 1;
                }
                if i >= chars.len() {
                    return Err("unterminated raw quoted string".into());
                }
                let v: String = chars[st..i].iter().collect();
                i += 1;
                Tok::Str(v)
            }
            '\'' => {
                // A character constant is its code point, as in Go.
                let (ch, n) = match (chars.get(i + 1), chars.get(i + 2), chars.get(i + 3)) {
                    (Some('\\'), Some(e), Some('\'')) => {
                        let ch = match e {
                            'n' => '\n',
                            't' => '\t',
                            'r' => '\r',
                            other => *other,
                        };
                        (ch, 4)
                    }
                    (Some(c), Some('\''), _) => (*c, 3),
                    _ => return Err("malformed character constant".into()),
                };
                i += n;
                Tok::Int(i64::from(u32::from(ch)))
            }
            c if c.is_ascii_digit()
                || ((c == '-' || c == '+')
                    && chars
                        .get(i + 1)
                        .is_some_and(|d| d.is_ascii_digit() || *d == '.')) =>
            {
                let (t, n) = lex_number(&chars[i..])?;
                i += n;
                t
            }
            c if is_ident(c) => {
                while i < chars.len() && is_ident(chars[i]) {
                    i += 1;
                }
                Tok::Ident(chars[start..i].iter().collect())
            }
            other => return Err(format!("unexpected {other:?} in action")),
        };
        out.push(Token { tok, spaced });
        spaced = false;
    }
    Ok(out)
}

fn lex_number(chars: &[char]) -> Result<(Tok, usize), String> {
    let mut i = 0;
    while i < chars.len()
        && (chars[i].is_ascii_alphanumeric()
            || chars[i] == '.'
            || chars[i] == '_'
            || ((chars[i] == '-' || chars[i] == '+')
                && (i == 0 || matches!(chars[i - 1], 'e' | 'E'))))
    {
        i += 1;
    }
    let text: String = chars[..i].iter().filter(|c| **c != '_').collect();
    let (neg, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text.strip_prefix('+').unwrap_or(&text)),
    };
    let radix = |p: &str, r: u32| -> Option<i64> {
        let lower = digits.to_ascii_lowercase();
        lower
            .strip_prefix(p)
            .and_then(|d| i64::from_str_radix(d, r).ok())
    };
    let int = radix("0x", 16)
        .or_else(|| radix("0o", 8))
        .or_else(|| radix("0b", 2))
        .or_else(|| digits.parse::<i64>().ok());
    if let Some(v) = int {
        return Ok((Tok::Int(if neg { -v } else { v }), i));
    }
    match text.parse::<f64>() {
        Ok(f) => Ok((Tok::Float(f), i)),
        Err(_) => Err(format!("bad number syntax: {text:?}")),
    }
}

struct Parser<'a> {
    name: &'a str,
    items: Vec<Item>,
    pos: usize,
    defines: BTreeMap<String, Vec<Node>>,
    range_depth: usize,
}

/// The keyword that ended a list (`end`, `else`) with the action's line and the rest
/// of its tokens.
type End = Option<(usize, String)>;

impl Parser<'_> {
    fn err(&self, line: usize, msg: impl Into<String>) -> TemplateError {
        TemplateError::new(self.name, line, msg.into())
    }

    /// Parses nodes until `{{end}}`, `{{else ...}}` or the end of input; returns the
    /// nodes and the ending keyword (`end`, `else`, `else if`, `else with`), leaving the
    /// tokens after `else` for the caller in `self.pending`.
    fn list(&mut self) -> Result<(Vec<Node>, End), TemplateError> {
        let mut nodes = Vec::new();
        while self.pos < self.items.len() {
            let idx = self.pos;
            self.pos += 1;
            let (line, tokens) = match &mut self.items[idx] {
                Item::Text(t) => {
                    nodes.push(Node::Text(std::mem::take(t)));
                    continue;
                }
                Item::Action { line, tokens } => (*line, std::mem::take(tokens)),
            };
            let keyword = match tokens.first().map(|t| &t.tok) {
                Some(Tok::Ident(w)) => w.clone(),
                None => return Err(self.err(line, "missing value for command")),
                _ => String::new(),
            };
            let rest = &tokens[1.min(tokens.len())..];
            match keyword.as_str() {
                "end" => {
                    if !rest.is_empty() {
                        return Err(self.err(line, "unexpected tokens after end"));
                    }
                    return Ok((nodes, Some((line, "end".into()))));
                }
                "else" => {
                    // Keep the tokens after `else` for the caller (`else if p`).
                    self.items[idx] = Item::Action {
                        line,
                        tokens: rest.to_vec(),
                    };
                    return Ok((nodes, Some((line, "else".into()))));
                }
                "if" | "with" | "range" => {
                    let node = self.control(&keyword, line, rest)?;
                    nodes.push(node);
                }
                "define" | "block" => {
                    let (tname, pipe) = self.template_head(line, rest, keyword == "block")?;
                    let (body, end) = self.list()?;
                    match end {
                        Some((_, w)) if w == "end" => {}
                        _ => return Err(self.err(line, format!("unexpected EOF in {keyword}"))),
                    }
                    self.defines.insert(tname.clone(), body);
                    if keyword == "block" {
                        nodes.push(Node::Template(line, tname, pipe));
                    }
                }
                "template" => {
                    let (tname, pipe) = self.template_head(line, rest, true)?;
                    nodes.push(Node::Template(line, tname, pipe));
                }
                "break" | "continue" => {
                    if self.range_depth == 0 {
                        return Err(
                            self.err(line, format!("{{{{{keyword}}}}} outside {{{{range}}}}"))
                        );
                    }
                    if !rest.is_empty() {
                        return Err(self.err(line, format!("unexpected tokens after {keyword}")));
                    }
                    nodes.push(if keyword == "break" {
                        Node::Break
                    } else {
                        Node::Continue
                    });
                }
                _ => {
                    let pipe = self.pipeline(line, &tokens, true)?;
                    nodes.push(Node::Action(pipe));
                }
            }
        }
        Ok((nodes, None))
    }

    /// `if`, `with` and `range` with their `else` branches.
    fn control(&mut self, kw: &str, line: usize, rest: &[Token]) -> Result<Node, TemplateError> {
        let pipe = self.pipeline(line, rest, true)?;
        if kw == "range" {
            self.range_depth += 1;
        }
        let body = self.list();
        if kw == "range" {
            self.range_depth -= 1;
        }
        let (body, end) = body?;
        let else_list = match end {
            Some((_, w)) if w == "end" => Vec::new(),
            Some((eline, _)) => {
                // The action after `else` holds the tokens that followed it.
                let idx = self.pos - 1;
                let tokens = match &mut self.items[idx] {
                    Item::Action { tokens, .. } => std::mem::take(tokens),
                    Item::Text(_) => Vec::new(),
                };
                match tokens.first().map(|t| &t.tok) {
                    None => {
                        let (els, end) = self.list()?;
                        match end {
                            Some((_, w)) if w == "end" => els,
                            _ => {
                                return Err(
                                    self.err(eline, format!("expected end after else in {kw}"))
                                );
                            }
                        }
                    }
                    Some(Tok::Ident(w)) if (w == "if" || w == "with") && kw != "range" => {
                        let w = w.clone();
                        // `else if p` ends with the enclosing `end`.
                        vec![self.control(&w, eline, &tokens[1..])?]
                    }
                    _ => return Err(self.err(eline, "unexpected tokens after else")),
                }
            }
            None => return Err(self.err(line, format!("unexpected EOF in {kw}"))),
        };
        Ok(match kw {
            "if" => Node::If(pipe, body, else_list),
            "with" => Node::With(pipe, body, else_list),
            _ => Node::Range(pipe, body, else_list),
        })
    }

    fn template_head(
        &self,
        line: usize,
        rest: &[Token],
        pipe_allowed: bool,
    ) -> Result<(String, Option<Pipe>), TemplateError> {
        let Some(Token {
            tok: Tok::Str(name),
            ..
        }) = rest.first()
        else {
            return Err(self.err(line, "expected a quoted template name"));
        };
        let pipe = if rest.len() > 1 {
            if !pipe_allowed {
                return Err(self.err(line, "unexpected tokens after the template name"));
            }
            Some(self.pipeline(line, &rest[1..], false)?)
        } else {
            None
        };
        Ok((name.clone(), pipe))
    }

    fn pipeline(
        &self,
        line: usize,
        tokens: &[Token],
        decl_ok: bool,
    ) -> Result<Pipe, TemplateError> {
        let mut vars = Vec::new();
        let mut assign = false;
        let mut start = 0;
        // `$x :=`, `$x =`, `$i, $v :=`
        let decl_end = tokens
            .iter()
            .position(|t| matches!(t.tok, Tok::Declare | Tok::Assign));
        if let Some(d) = decl_end {
            let head = &tokens[..d];
            let names: Vec<String> = head
                .iter()
                .filter_map(|t| match &t.tok {
                    Tok::Var(n) => Some(n.clone()),
                    _ => None,
                })
                .collect();
            let commas = head.iter().filter(|t| t.tok == Tok::Comma).count();
            let shaped = !names.is_empty()
                && names.len() <= 2
                && names.len() + commas == head.len()
                && commas + 1 == names.len();
            if shaped {
                if !decl_ok {
                    return Err(self.err(line, "variable declaration not allowed here"));
                }
                vars = names;
                assign = tokens[d].tok == Tok::Assign;
                start = d + 1;
            }
        }
        let mut pos = start;
        let pipe = self.pipe_from(line, tokens, &mut pos, false)?;
        if pos != tokens.len() {
            return Err(self.err(line, format!("unexpected {:?} in command", tokens[pos].tok)));
        }
        Ok(Pipe {
            vars,
            assign,
            ..pipe
        })
    }

    /// Commands separated by `|` until the end or a `)` (when `nested`).
    fn pipe_from(
        &self,
        line: usize,
        tokens: &[Token],
        pos: &mut usize,
        nested: bool,
    ) -> Result<Pipe, TemplateError> {
        let mut cmds = Vec::new();
        let mut args = Vec::new();
        loop {
            let Some(t) = tokens.get(*pos) else {
                if nested {
                    return Err(self.err(line, "unclosed left paren"));
                }
                break;
            };
            match &t.tok {
                Tok::RParen if nested => break,
                Tok::Pipe => {
                    if args.is_empty() {
                        return Err(self.err(line, "missing command before |"));
                    }
                    cmds.push(Cmd {
                        args: std::mem::take(&mut args),
                    });
                    *pos += 1;
                }
                _ => {
                    let a = self.operand(line, tokens, pos)?;
                    args.push(a);
                }
            }
        }
        if args.is_empty() {
            return Err(self.err(line, "missing value for command"));
        }
        cmds.push(Cmd { args });
        Ok(Pipe {
            line,
            vars: Vec::new(),
            assign: false,
            cmds,
        })
    }

    /// One operand and the fields chained to it.
    fn operand(
        &self,
        line: usize,
        tokens: &[Token],
        pos: &mut usize,
    ) -> Result<Arg, TemplateError> {
        let t = &tokens[*pos];
        *pos += 1;
        let mut arg = match &t.tok {
            Tok::Dot => Arg::Dot(Vec::new()),
            Tok::Field(f) => Arg::Dot(vec![f.clone()]),
            Tok::Var(v) => Arg::Var(v.clone(), Vec::new()),
            Tok::Str(s) => Arg::Str(s.clone()),
            Tok::Int(i) => Arg::Int(*i),
            Tok::Float(f) => Arg::Float(*f),
            Tok::Ident(w) => match w.as_str() {
                "true" => Arg::Bool(true),
                "false" => Arg::Bool(false),
                "nil" => Arg::Nil,
                _ => Arg::Func(w.clone()),
            },
            Tok::LParen => {
                let p = self.pipe_from(line, tokens, pos, true)?;
                *pos += 1; // the `)`
                Arg::Sub(Box::new(p), Vec::new())
            }
            other => return Err(self.err(line, format!("unexpected {other:?} in operand"))),
        };
        // Fields directly after the operand chain onto it.
        while let Some(Token {
            tok: Tok::Field(f),
            spaced: false,
        }) = tokens.get(*pos)
        {
            match &mut arg {
                Arg::Dot(fs) | Arg::Var(_, fs) | Arg::Sub(_, fs) => fs.push(f.clone()),
                _ => return Err(self.err(line, format!("unexpected .{f} after a literal"))),
            }
            *pos += 1;
        }
        Ok(arg)
    }
}
