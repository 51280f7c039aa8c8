//! A small HCL2 emitter that prints exactly what `terraform fmt` would: two-space
//! indentation, `=` aligned across runs of consecutive single-line attributes (a block or a
//! multi-line value ends a run), attributes and blocks sorted by name, map keys quoted.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::key::TaskRef;

/// An HCL expression.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Expr {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A quoted string; every special character (including `${` and `%{`) is escaped.
    String(String),
    /// A quoted template: `"` and `\` are escaped but `${...}` interpolations are kept, as in
    /// `"${path.module}/data/x"`.
    Template(String),
    /// A reference to another task, written as `type.name.attr` once the writer knows which
    /// Terraform resource the task rendered (or as the literal ID of a shared object).
    Ref(TaskRef),
    /// A traversal such as `aws.files` or `local.vpc_id`; the parts are joined with dots.
    Traversal(Vec<String>),
    /// A function call `name(arg, ...)`.
    Call(String, Vec<Expr>),
    /// A list, printed on one line: `[a, b]`.
    List(Vec<Expr>),
    /// A map with quoted keys, printed one entry per line, sorted by key.
    Map(BTreeMap<String, Expr>),
    /// An expression written verbatim (e.g. a conditional). The caller is responsible for
    /// it being canonical HCL.
    Raw(String),
}

impl Expr {
    /// A quoted string.
    pub fn string(s: impl Into<String>) -> Self {
        Expr::String(s.into())
    }

    /// A traversal from dotted text (`"aws.files"`).
    pub fn traversal(dotted: &str) -> Self {
        Expr::Traversal(dotted.split('.').map(str::to_owned).collect())
    }

    /// A list of quoted strings.
    pub fn string_list<S: Into<String>>(items: impl IntoIterator<Item = S>) -> Self {
        Expr::List(items.into_iter().map(|s| Expr::String(s.into())).collect())
    }

    /// A map of quoted strings.
    pub fn string_map<K: Into<String>, V: Into<String>>(
        entries: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Expr::Map(
            entries
                .into_iter()
                .map(|(k, v)| (k.into(), Expr::String(v.into())))
                .collect(),
        )
    }

    /// Whether kOps omits this attribute (null, empty list, empty map).
    pub(crate) fn is_omitted(&self) -> bool {
        match self {
            Expr::Null => true,
            Expr::List(v) => v.is_empty(),
            Expr::Map(m) => m.is_empty(),
            _ => false,
        }
    }

    /// Calls `f` on every reference (recursively), allowing it to be replaced.
    pub(crate) fn map_refs(
        &mut self,
        f: &mut dyn FnMut(&TaskRef) -> crate::Result<Expr>,
    ) -> crate::Result<()> {
        match self {
            Expr::Ref(r) => {
                *self = f(r)?;
            }
            Expr::Call(_, args) | Expr::List(args) => {
                for a in args {
                    a.map_refs(f)?;
                }
            }
            Expr::Map(m) => {
                for v in m.values_mut() {
                    v.map_refs(f)?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

impl From<&str> for Expr {
    fn from(s: &str) -> Self {
        Expr::String(s.to_owned())
    }
}
impl From<String> for Expr {
    fn from(s: String) -> Self {
        Expr::String(s)
    }
}
impl From<bool> for Expr {
    fn from(b: bool) -> Self {
        Expr::Bool(b)
    }
}
impl From<i64> for Expr {
    fn from(i: i64) -> Self {
        Expr::Int(i)
    }
}
impl From<i32> for Expr {
    fn from(i: i32) -> Self {
        Expr::Int(i64::from(i))
    }
}
impl From<TaskRef> for Expr {
    fn from(r: TaskRef) -> Self {
        Expr::Ref(r)
    }
}

/// One entry of a [`Body`].
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// `name = expr`.
    Attr(Expr),
    /// `name { ... }`.
    Block(Body),
    /// Repeated `name { ... }` blocks, in the given order.
    Blocks(Vec<Body>),
}

/// The body of a resource or nested block: attributes and blocks, printed sorted by name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Body {
    items: BTreeMap<String, Item>,
}

impl Body {
    /// An empty body.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets an attribute (null, empty lists and empty maps are omitted when printed).
    pub fn attr(mut self, name: impl Into<String>, value: impl Into<Expr>) -> Self {
        self.set(name, value);
        self
    }

    /// Sets an attribute in place.
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<Expr>) {
        self.items.insert(name.into(), Item::Attr(value.into()));
    }

    /// Sets an attribute if `value` is `Some`.
    pub fn attr_opt<E: Into<Expr>>(mut self, name: impl Into<String>, value: Option<E>) -> Self {
        if let Some(v) = value {
            self.set(name, v);
        }
        self
    }

    /// Sets a nested block.
    pub fn block(mut self, name: impl Into<String>, body: Body) -> Self {
        self.items.insert(name.into(), Item::Block(body));
        self
    }

    /// Appends one block to a repeated block (`tag { }` several times).
    pub fn push_block(mut self, name: impl Into<String>, body: Body) -> Self {
        let name = name.into();
        match self.items.get_mut(&name) {
            Some(Item::Blocks(v)) => v.push(body),
            _ => {
                self.items.insert(name, Item::Blocks(vec![body]));
            }
        }
        self
    }

    /// Whether the body has no entries.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The entries, sorted by name.
    pub fn items(&self) -> impl Iterator<Item = (&str, &Item)> {
        self.items.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub(crate) fn map_refs(
        &mut self,
        f: &mut dyn FnMut(&TaskRef) -> crate::Result<Expr>,
    ) -> crate::Result<()> {
        for item in self.items.values_mut() {
            match item {
                Item::Attr(e) => e.map_refs(f)?,
                Item::Block(b) => b.map_refs(f)?,
                Item::Blocks(bs) => {
                    for b in bs {
                        b.map_refs(f)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Escapes a string for an HCL quoted string. `template` keeps `${` / `%{` sequences.
pub(crate) fn quote(s: &str, template: bool) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '$' | '%' if !template && chars.peek() == Some(&'{') => {
                out.push(c);
                out.push(c);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A rendered expression: single-line text, or lines (first line after `=`, the rest
/// already indented relative to the attribute's indentation level).
fn expr_text(e: &Expr, indent: usize) -> String {
    match e {
        Expr::Null => "null".to_owned(),
        Expr::Bool(b) => b.to_string(),
        Expr::Int(i) => i.to_string(),
        Expr::String(s) => quote(s, false),
        Expr::Template(s) => quote(s, true),
        Expr::Ref(r) => format!("{}.{}", r.key, r.attr),
        Expr::Traversal(parts) => parts.join("."),
        Expr::Raw(s) => s.clone(),
        Expr::Call(name, args) => {
            let args: Vec<String> = args.iter().map(|a| expr_text(a, indent)).collect();
            format!("{name}({})", args.join(", "))
        }
        Expr::List(items) => {
            let texts: Vec<String> = items.iter().map(|a| expr_text(a, indent + 1)).collect();
            if texts.iter().any(|t| t.contains('\n')) {
                let pad = "  ".repeat(indent + 1);
                let mut out = String::from("[\n");
                for t in texts {
                    let _ = writeln!(out, "{pad}{t},");
                }
                out.push_str(&"  ".repeat(indent));
                out.push(']');
                out
            } else {
                format!("[{}]", texts.join(", "))
            }
        }
        Expr::Map(m) => {
            let mut out = String::from("{\n");
            let entries = m
                .iter()
                .filter(|(_, v)| !v.is_omitted())
                .map(|(k, v)| (quote(k, false), Line::Attr(expr_text(v, indent + 1))));
            write_lines(&mut out, entries, indent + 1);
            out.push_str(&"  ".repeat(indent));
            out.push('}');
            out
        }
    }
}

enum Line {
    Attr(String),
    Block(String),
}

/// Writes `name = value` lines and blocks at `indent`, aligning `=` across runs of
/// single-line attributes as `terraform fmt` does.
fn write_lines(out: &mut String, lines: impl Iterator<Item = (String, Line)>, indent: usize) {
    let pad = "  ".repeat(indent);
    let mut run: Vec<(String, String)> = Vec::new();
    let flush = |out: &mut String, run: &mut Vec<(String, String)>| {
        let width = run.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        for (k, v) in run.drain(..) {
            let _ = writeln!(out, "{pad}{k:width$} = {v}");
        }
    };
    for (name, line) in lines {
        match line {
            Line::Attr(text) if !text.contains('\n') => run.push((name, text)),
            Line::Attr(text) => {
                flush(out, &mut run);
                let _ = writeln!(out, "{pad}{name} = {text}");
            }
            Line::Block(text) => {
                flush(out, &mut run);
                let _ = writeln!(out, "{pad}{name} {text}");
            }
        }
    }
    flush(out, &mut run);
}

fn block_text(body: &Body, indent: usize) -> String {
    let mut out = String::from("{\n");
    write_body(&mut out, body, indent + 1);
    out.push_str(&"  ".repeat(indent));
    out.push('}');
    out
}

/// Writes a body's entries at `indent`.
pub(crate) fn write_body(out: &mut String, body: &Body, indent: usize) {
    let mut lines = Vec::new();
    for (name, item) in &body.items {
        match item {
            Item::Attr(e) if e.is_omitted() => {}
            Item::Attr(e) => lines.push((name.clone(), Line::Attr(expr_text(e, indent)))),
            Item::Block(b) => lines.push((name.clone(), Line::Block(block_text(b, indent)))),
            Item::Blocks(bs) => {
                for b in bs {
                    lines.push((name.clone(), Line::Block(block_text(b, indent))));
                }
            }
        }
    }
    write_lines(out, lines.into_iter(), indent);
}

/// Writes a top-level block: `header {`, body, `}`.
pub(crate) fn write_block(out: &mut String, header: &str, body: &Body) {
    let _ = writeln!(out, "{header} {}", block_text(body, 0));
}

/// Renders a standalone expression (as it would appear after `=` at top level).
pub(crate) fn render_expr(e: &Expr, indent: usize) -> String {
    expr_text(e, indent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_runs_and_breaks_on_blocks_and_maps() {
        let body = Body::new()
            .attr("name", "x")
            .attr("event_pattern", Expr::Raw("file(\"p\")".into()))
            .attr(
                "tags",
                Expr::string_map([("Name", "x"), ("kubernetes.io/cluster/c", "owned")]),
            )
            .block("lifecycle", Body::new().attr("create_before_destroy", true))
            .attr("zz", 1i64);
        let mut out = String::new();
        write_block(&mut out, "resource \"t\" \"n\"", &body);
        let expected = "resource \"t\" \"n\" {\n  event_pattern = file(\"p\")\n  lifecycle {\n    create_before_destroy = true\n  }\n  name = \"x\"\n  tags = {\n    \"Name\"                    = \"x\"\n    \"kubernetes.io/cluster/c\" = \"owned\"\n  }\n  zz = 1\n}\n";
        assert_eq!(out, expected);
    }

    #[test]
    fn escapes_strings_but_not_templates() {
        assert_eq!(
            quote("a\"b\\c\n${x}%{y}", false),
            r#""a\"b\\c\n$${x}%%{y}""#
        );
        assert_eq!(quote("${path.module}/d", true), r#""${path.module}/d""#);
    }
}
