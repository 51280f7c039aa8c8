//! Executing a parsed template against its data.

use std::collections::BTreeMap;

use serde_json::Value;

use super::funcs::{self, FnError, fmt_top, truthy, type_name};
use super::parse::{Arg, Cmd, Node, Pipe};
use super::{TemplateError, TemplateFn};

/// How deep `template` and `include` may nest (a recursion guard).
const MAX_DEPTH: usize = 200;

/// The templates by name: the name of the source that defines it, and its tree.
pub(super) type Templates = BTreeMap<String, (String, Vec<Node>)>;

pub(super) struct Exec<'a> {
    pub(super) templates: &'a Templates,
    pub(super) fail_on_missing: bool,
    /// The caller's functions, consulted when no built-in function has the name.
    pub(super) functions: &'a BTreeMap<String, TemplateFn>,
    pub(super) depth: usize,
}

/// One template's execution: its name (for errors) and its variables.
struct Scope<'n> {
    name: &'n str,
    vars: Vec<(String, Value)>,
}

enum Flow {
    Normal,
    Break,
    Continue,
}

impl Exec<'_> {
    /// Renders `nodes` (from the source `name`) with `data` as dot and `$`.
    pub(super) fn run(
        &mut self,
        name: &str,
        nodes: &[Node],
        data: &Value,
    ) -> Result<String, TemplateError> {
        let mut scope = Scope {
            name,
            vars: vec![(String::new(), data.clone())],
        };
        let mut out = String::new();
        self.walk(&mut scope, nodes, data, &mut out)?;
        Ok(out)
    }

    fn walk(
        &mut self,
        st: &mut Scope<'_>,
        nodes: &[Node],
        dot: &Value,
        out: &mut String,
    ) -> Result<Flow, TemplateError> {
        for node in nodes {
            let flow = self.node(st, node, dot, out)?;
            if !matches!(flow, Flow::Normal) {
                return Ok(flow);
            }
        }
        Ok(Flow::Normal)
    }

    fn node(
        &mut self,
        st: &mut Scope<'_>,
        node: &Node,
        dot: &Value,
        out: &mut String,
    ) -> Result<Flow, TemplateError> {
        match node {
            Node::Text(t) => out.push_str(t),
            Node::Action(pipe) => {
                let v = self.pipe(st, pipe, dot, true)?;
                if pipe.vars.is_empty() {
                    out.push_str(&fmt_top(&v));
                }
            }
            Node::If(pipe, body, els) | Node::With(pipe, body, els) => {
                let mark = st.vars.len();
                let v = self.pipe(st, pipe, dot, true)?;
                let flow = if truthy(&v) {
                    let d = if matches!(node, Node::With(..)) {
                        &v
                    } else {
                        dot
                    };
                    self.walk(st, body, d, out)
                } else {
                    self.walk(st, els, dot, out)
                };
                st.vars.truncate(mark);
                return flow;
            }
            Node::Range(pipe, body, els) => {
                let mark = st.vars.len();
                let v = self.pipe(st, pipe, dot, false)?;
                let items: Vec<(Value, Value)> = match v {
                    Value::Array(a) => a
                        .into_iter()
                        .enumerate()
                        .map(|(i, e)| (Value::from(i), e))
                        .collect(),
                    Value::Object(m) => {
                        let mut kv: Vec<(String, Value)> = m.into_iter().collect();
                        kv.sort_by(|a, b| a.0.cmp(&b.0));
                        kv.into_iter().map(|(k, e)| (Value::String(k), e)).collect()
                    }
                    Value::Null => Vec::new(),
                    Value::Number(n) if n.is_i64() || n.is_u64() => {
                        let count = n.as_i64().unwrap_or(0).max(0);
                        (0..count)
                            .map(|i| (Value::from(i), Value::from(i)))
                            .collect()
                    }
                    other => {
                        return Err(TemplateError::new(
                            st.name,
                            pipe.line,
                            format!("range can't iterate over {}", funcs::fmt_v(&other)),
                        ));
                    }
                };
                if items.is_empty() {
                    let flow = self.walk(st, els, dot, out);
                    st.vars.truncate(mark);
                    flow?;
                    return Ok(Flow::Normal);
                }
                for (k, e) in items {
                    match pipe.vars.as_slice() {
                        [v] => st.vars.push((v.clone(), e.clone())),
                        [kn, vn] => {
                            st.vars.push((kn.clone(), k));
                            st.vars.push((vn.clone(), e.clone()));
                        }
                        _ => {}
                    }
                    let flow = self.walk(st, body, &e, out);
                    st.vars.truncate(mark);
                    if let Flow::Break = flow? {
                        break;
                    }
                }
            }
            Node::Template(line, name, pipe) => {
                let data = match pipe {
                    Some(p) => self.pipe(st, p, dot, false)?,
                    None => Value::Null,
                };
                let s = self.call_template(st.name, *line, name, &data)?;
                out.push_str(&s);
            }
            Node::Break => return Ok(Flow::Break),
            Node::Continue => return Ok(Flow::Continue),
        }
        Ok(Flow::Normal)
    }

    fn call_template(
        &mut self,
        from: &str,
        line: usize,
        name: &str,
        data: &Value,
    ) -> Result<String, TemplateError> {
        let templates = self.templates;
        let Some((source, body)) = templates.get(name) else {
            return Err(TemplateError::new(
                from,
                line,
                format!("no such template or snippet {name:?}"),
            ));
        };
        if self.depth >= MAX_DEPTH {
            return Err(TemplateError::new(
                from,
                line,
                format!("exceeded maximum template depth ({MAX_DEPTH}) calling {name:?}"),
            ));
        }
        self.depth += 1;
        let r = self.run(source, body, data);
        self.depth -= 1;
        r
    }

    /// Evaluates a pipeline; declares or assigns its variables when `declare`.
    fn pipe(
        &mut self,
        st: &mut Scope<'_>,
        pipe: &Pipe,
        dot: &Value,
        declare: bool,
    ) -> Result<Value, TemplateError> {
        let mut v: Option<Value> = None;
        for cmd in &pipe.cmds {
            v = Some(self.cmd(st, cmd, dot, v, pipe.line)?);
        }
        let v = v.unwrap_or(Value::Null);
        if declare {
            for name in &pipe.vars {
                if pipe.assign {
                    match st.vars.iter_mut().rev().find(|(n, _)| n == name) {
                        Some(slot) => slot.1 = v.clone(),
                        None => {
                            return Err(TemplateError::new(
                                st.name,
                                pipe.line,
                                format!("undefined variable: ${name}"),
                            ));
                        }
                    }
                } else {
                    st.vars.push((name.clone(), v.clone()));
                }
            }
        }
        Ok(v)
    }

    fn cmd(
        &mut self,
        st: &mut Scope<'_>,
        cmd: &Cmd,
        dot: &Value,
        piped: Option<Value>,
        line: usize,
    ) -> Result<Value, TemplateError> {
        let Some(first) = cmd.args.first() else {
            return Err(TemplateError::new(st.name, line, "empty command".into()));
        };
        if let Arg::Func(name) = first {
            return self.call(st, name, &cmd.args[1..], dot, piped, line);
        }
        if cmd.args.len() > 1 || piped.is_some() {
            return Err(TemplateError::new(
                st.name,
                line,
                "can't give argument to non-function".into(),
            ));
        }
        self.arg(st, first, dot, line)
    }

    fn arg(
        &mut self,
        st: &mut Scope<'_>,
        arg: &Arg,
        dot: &Value,
        line: usize,
    ) -> Result<Value, TemplateError> {
        match arg {
            Arg::Dot(fields) => self.fields(st, dot.clone(), fields, line),
            Arg::Var(name, fields) => {
                let Some((_, v)) = st.vars.iter().rev().find(|(n, _)| n == name) else {
                    return Err(TemplateError::new(
                        st.name,
                        line,
                        format!("undefined variable: ${name}"),
                    ));
                };
                let v = v.clone();
                self.fields(st, v, fields, line)
            }
            Arg::Func(name) => self.call(st, name, &[], dot, None, line),
            Arg::Str(s) => Ok(Value::String(s.clone())),
            Arg::Int(i) => Ok(Value::from(*i)),
            Arg::Float(f) => {
                Ok(serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number))
            }
            Arg::Bool(b) => Ok(Value::Bool(*b)),
            Arg::Nil => Ok(Value::Null),
            Arg::Sub(pipe, fields) => {
                let v = self.pipe(st, pipe, dot, false)?;
                self.fields(st, v, fields, line)
            }
        }
    }

    fn fields(
        &self,
        st: &Scope<'_>,
        mut v: Value,
        fields: &[String],
        line: usize,
    ) -> Result<Value, TemplateError> {
        for f in fields {
            v = match v {
                Value::Object(mut m) => match m.remove(f) {
                    Some(x) => x,
                    None if self.fail_on_missing => {
                        return Err(TemplateError::new(
                            st.name,
                            line,
                            format!("map has no entry for key {f:?}"),
                        ));
                    }
                    None => Value::Null,
                },
                Value::Null if self.fail_on_missing => {
                    return Err(TemplateError::new(
                        st.name,
                        line,
                        format!("nil pointer evaluating interface {{}}.{f}"),
                    ));
                }
                Value::Null => Value::Null,
                other => {
                    return Err(TemplateError::new(
                        st.name,
                        line,
                        format!("can't evaluate field {f} in type {}", type_name(&other)),
                    ));
                }
            };
        }
        Ok(v)
    }

    fn call(
        &mut self,
        st: &mut Scope<'_>,
        name: &str,
        args: &[Arg],
        dot: &Value,
        piped: Option<Value>,
        line: usize,
    ) -> Result<Value, TemplateError> {
        let err = |st: &Scope<'_>, m: String| {
            TemplateError::new(st.name, line, format!("error calling {name}: {m}"))
        };
        // `and` and `or` stop at the deciding argument.
        if name == "and" || name == "or" {
            let total = args.len() + usize::from(piped.is_some());
            if total == 0 {
                return Err(err(
                    st,
                    "wrong number of args: want at least 1 got 0".into(),
                ));
            }
            let mut last = Value::Null;
            for a in args {
                last = self.arg(st, a, dot, line)?;
                if truthy(&last) != (name == "and") {
                    return Ok(last);
                }
            }
            if let Some(p) = piped {
                last = p;
            }
            return Ok(last);
        }
        let mut vals = Vec::with_capacity(args.len() + 1);
        for a in args {
            vals.push(self.arg(st, a, dot, line)?);
        }
        if let Some(p) = piped {
            vals.push(p);
        }
        match name {
            "include" | "tpl_include" => {
                let tname = match vals.first() {
                    Some(Value::String(s)) => s.clone(),
                    _ => return Err(err(st, "the first argument must be a template name".into())),
                };
                let ctx = vals.get(1).cloned().unwrap_or(Value::Null);
                if vals.len() > 2 {
                    return Err(err(
                        st,
                        format!("wrong number of args: want 2 got {}", vals.len()),
                    ));
                }
                let s = self.call_template(st.name, line, &tname, &ctx)?;
                Ok(Value::String(s))
            }
            "set" | "unset" => {
                let r = funcs::call(name, vals).map_err(|e| err(st, e.to_string()))?;
                // Dictionaries are values here: write the result back to a variable
                // passed as the dictionary, as Sprig's in-place change would.
                if let Some(Arg::Var(var, fields)) = args.first()
                    && fields.is_empty()
                    && let Some(slot) = st.vars.iter_mut().rev().find(|(n, _)| n == var)
                {
                    slot.1 = r.clone();
                }
                Ok(r)
            }
            _ => {
                // Built-ins win; the arguments are kept for a caller's function only
                // when there is one of this name.
                let user = self.functions.get(name);
                let kept = user.map(|_| vals.clone());
                match funcs::call(name, vals) {
                    Ok(v) => Ok(v),
                    Err(FnError::Failed(m)) => Err(err(st, m)),
                    Err(FnError::Unknown) => match (user, kept) {
                        (Some(f), Some(args)) => f(&args).map_err(|m| err(st, m)),
                        _ => Err(TemplateError::new(
                            st.name,
                            line,
                            format!("function {name:?} not defined"),
                        )),
                    },
                }
            }
        }
    }
}
