//! Reading YAML into untyped values the way go-yaml v2 reads it into
//! `interface{}` (then JSON, as `sigs.k8s.io/yaml` does): plain scalars typed
//! by YAML 1.1 rules ([`super::resolve`]), quoted and block scalars always
//! strings, timestamps kept as strings, mapping keys turned into strings.
//!
//! The syntax is parsed by `granit-parser` (the event parser behind
//! serde-saphyr); only the typing of scalars is go-yaml's. Merge keys
//! (`<<`) are kept as ordinary keys.

use std::collections::HashMap;

use granit_parser::{Event, Parser, ScalarStyle, Tag};
use serde_json::{Map, Number, Value};

use super::resolve::{Resolved, resolve_plain};
use crate::{Error, Result};

/// Reads the first document of `text` (an empty text is `null`).
pub fn from_str(text: &str) -> Result<Value> {
    Ok(from_str_multi(text)?
        .into_iter()
        .next()
        .unwrap_or(Value::Null))
}

/// Reads every document of `text`.
pub fn from_str_multi(text: &str) -> Result<Vec<Value>> {
    let mut reader = Reader {
        parser: Parser::new_from_str(text),
        anchors: HashMap::new(),
        document: 0,
    };
    let mut docs = Vec::new();
    loop {
        match reader.next()? {
            None | Some(Event::StreamEnd) => break,
            Some(Event::DocumentStart(..)) => {
                reader.document += 1;
                reader.anchors.clear();
                let ev = reader.expect_next()?;
                let v = match ev {
                    Event::DocumentEnd => Value::Null,
                    ev => {
                        let v = reader.node(ev)?;
                        match reader.expect_next()? {
                            Event::DocumentEnd => {}
                            _ => return Err(reader.err("expected the end of the document")),
                        }
                        v
                    }
                };
                docs.push(v);
            }
            Some(_) => {}
        }
    }
    Ok(docs)
}

struct Reader<'a> {
    parser: Parser<'a, granit_parser::StrInput<'a>>,
    anchors: HashMap<usize, Value>,
    document: usize,
}

impl<'a> Reader<'a> {
    fn err(&self, message: impl Into<String>) -> Error {
        Error::Parse {
            file: "<yaml>".into(),
            document: self.document.max(1),
            path: String::new(),
            message: message.into(),
        }
    }

    /// The next event that is not presentation detail.
    fn next(&mut self) -> Result<Option<Event<'a>>> {
        loop {
            match self.parser.next_event() {
                None => return Ok(None),
                Some(Err(e)) => return Err(self.err(e.to_string())),
                Some(Ok((ev, _))) => match ev {
                    Event::StreamStart => continue,
                    Event::Scalar(..)
                    | Event::SequenceStart(..)
                    | Event::SequenceEnd
                    | Event::MappingStart(..)
                    | Event::MappingEnd
                    | Event::Alias(_)
                    | Event::DocumentStart(..)
                    | Event::DocumentEnd
                    | Event::StreamEnd => return Ok(Some(ev)),
                    _ => continue,
                },
            }
        }
    }

    fn expect_next(&mut self) -> Result<Event<'a>> {
        self.next()?
            .ok_or_else(|| self.err("unexpected end of input"))
    }

    fn node(&mut self, ev: Event<'a>) -> Result<Value> {
        match ev {
            Event::Scalar(text, style, anchor, tag) => {
                let v = scalar(&text, style, tag.as_deref());
                self.remember(anchor, &v);
                Ok(v)
            }
            Event::Alias(id) => self
                .anchors
                .get(&id)
                .cloned()
                .ok_or_else(|| self.err("alias to an unknown anchor")),
            Event::SequenceStart(_, anchor, _) => {
                let mut items = Vec::new();
                loop {
                    match self.expect_next()? {
                        Event::SequenceEnd => break,
                        ev => items.push(self.node(ev)?),
                    }
                }
                let v = Value::Array(items);
                self.remember(anchor, &v);
                Ok(v)
            }
            Event::MappingStart(_, anchor, _) => {
                let mut map = Map::new();
                loop {
                    let k = match self.expect_next()? {
                        Event::MappingEnd => break,
                        ev => self.node(ev)?,
                    };
                    let ev = self.expect_next()?;
                    let v = self.node(ev)?;
                    map.insert(key_string(k), v);
                }
                let v = Value::Object(map);
                self.remember(anchor, &v);
                Ok(v)
            }
            _ => Err(self.err("unexpected YAML event")),
        }
    }

    fn remember(&mut self, anchor: usize, v: &Value) {
        if anchor != 0 {
            self.anchors.insert(anchor, v.clone());
        }
    }
}

fn scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Value {
    let resolved = match (style, tag) {
        (_, Some(t)) if t.is_yaml_core_schema() => match t.suffix() {
            "str" | "binary" | "timestamp" => Resolved::Str,
            _ => resolve_plain(text),
        },
        (_, Some(_)) => Resolved::Str,
        (ScalarStyle::Plain, None) => resolve_plain(text),
        _ => Resolved::Str,
    };
    match resolved {
        Resolved::Null => Value::Null,
        Resolved::Bool(b) => Value::Bool(b),
        Resolved::Int(i) => Value::Number(i.into()),
        Resolved::Uint(u) => Value::Number(u.into()),
        // JSON has no NaN or infinity: keep the text.
        Resolved::Float(f) => Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or_else(|| Value::String(text.to_string())),
        Resolved::Timestamp | Resolved::Str => Value::String(text.to_string()),
    }
}

/// A key as `sigs.k8s.io/yaml` makes it a JSON object key.
fn key_string(k: Value) -> String {
    match k {
        Value::String(s) => s,
        Value::Null => "null".into(),
        Value::Number(n) => super::format_number(&n),
        other => other.to_string(),
    }
}
