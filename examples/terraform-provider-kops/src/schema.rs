//! Terraform schemas: the blocks this provider declares, and the kOps spec described by
//! kops-api's schema tables as Terraform blocks and back.
//!
//! The spec's shape follows terraform-provider-kops, so configurations written for it
//! work here: kOps' internal layout (`networking { subnet { ... } }`, `config_store`,
//! `cloud_provider { aws {} }`), field names in snake case, an object as a block of at
//! most one, a list of objects as repeated blocks (three of them named in the singular,
//! as that provider names them), and what fits no block (free-form Kubernetes objects,
//! maps of objects) as a JSON string.

use std::collections::BTreeMap;

use kops_model::api::schema::{Field, Object, Shape};

use crate::proto::tfplugin6 as tf;
use crate::value::Value;

/// The type of an attribute.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    /// `string`.
    String,
    /// `number`.
    Number,
    /// `bool`.
    Bool,
    /// `list(T)`.
    List(Box<Ty>),
    /// `map(T)`.
    Map(Box<Ty>),
    /// `object({...})`: every attribute, by name.
    Object(Vec<(String, Ty)>),
}

impl Ty {
    /// The type as Terraform's JSON type notation.
    fn json(&self) -> serde_json::Value {
        match self {
            Ty::String => "string".into(),
            Ty::Number => "number".into(),
            Ty::Bool => "bool".into(),
            Ty::List(t) => serde_json::json!(["list", t.json()]),
            Ty::Map(t) => serde_json::json!(["map", t.json()]),
            Ty::Object(attrs) => {
                let attrs: serde_json::Map<String, serde_json::Value> =
                    attrs.iter().map(|(n, t)| (n.clone(), t.json())).collect();
                serde_json::json!(["object", attrs])
            }
        }
    }
}

/// Who sets an attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The configuration must.
    Required,
    /// The configuration may.
    Optional,
    /// The provider does.
    Computed,
}

/// An attribute of a block.
#[derive(Debug, Clone)]
pub struct Attr {
    /// Its name.
    pub name: String,
    /// Its type.
    pub ty: Ty,
    /// Who sets it.
    pub mode: Mode,
    /// Whether Terraform hides it in its output.
    pub sensitive: bool,
    /// One line on it.
    pub description: String,
}

impl Attr {
    /// An attribute.
    pub fn new(name: &str, ty: Ty, mode: Mode, description: &str) -> Attr {
        Attr {
            name: name.to_string(),
            ty,
            mode,
            sensitive: false,
            description: description.to_string(),
        }
    }

    /// The same, hidden in Terraform's output.
    pub fn sensitive(mut self) -> Attr {
        self.sensitive = true;
        self
    }
}

/// A block: attributes and nested blocks.
#[derive(Debug, Clone, Default)]
pub struct Block {
    /// Its attributes.
    pub attrs: Vec<Attr>,
    /// Its nested blocks.
    pub blocks: Vec<Nested>,
    /// One line on it.
    pub description: String,
}

/// A nested block, repeated as a list.
#[derive(Debug, Clone)]
pub struct Nested {
    /// Its name.
    pub name: String,
    /// Its content.
    pub block: Block,
    /// At most this many (0: no limit).
    pub max_items: i64,
}

impl Block {
    /// The type of one object of this block (a nested block: a list of them).
    pub fn object_type(&self) -> Ty {
        let mut attrs: Vec<(String, Ty)> = self
            .attrs
            .iter()
            .map(|a| (a.name.clone(), a.ty.clone()))
            .collect();
        for b in &self.blocks {
            attrs.push((b.name.clone(), Ty::List(Box::new(b.block.object_type()))));
        }
        Ty::Object(attrs)
    }

    /// The block for a data source: every attribute computed, and each nested block an
    /// attribute holding the list of its objects (a data source's blocks are the
    /// provider's to fill, which Terraform allows for attributes only).
    pub fn computed(&self) -> Block {
        let mut attrs: Vec<Attr> = self
            .attrs
            .iter()
            .map(|a| Attr {
                mode: Mode::Computed,
                ..a.clone()
            })
            .collect();
        for b in &self.blocks {
            attrs.push(Attr::new(
                &b.name,
                Ty::List(Box::new(b.block.object_type())),
                Mode::Computed,
                &b.block.description,
            ));
        }
        Block {
            attrs,
            blocks: Vec::new(),
            description: self.description.clone(),
        }
    }

    /// The block as Terraform's schema message.
    pub fn to_proto(&self) -> tf::schema::Block {
        tf::schema::Block {
            version: 0,
            attributes: self
                .attrs
                .iter()
                .map(|a| tf::schema::Attribute {
                    name: a.name.clone(),
                    r#type: a.ty.json().to_string().into_bytes(),
                    nested_type: None,
                    description: a.description.clone(),
                    required: a.mode == Mode::Required,
                    optional: a.mode == Mode::Optional,
                    computed: a.mode == Mode::Computed,
                    sensitive: a.sensitive,
                    description_kind: tf::StringKind::Plain as i32,
                    deprecated: false,
                })
                .collect(),
            block_types: self
                .blocks
                .iter()
                .map(|b| tf::schema::NestedBlock {
                    type_name: b.name.clone(),
                    block: Some(b.block.to_proto()),
                    nesting: tf::schema::nested_block::NestingMode::List as i32,
                    min_items: 0,
                    max_items: b.max_items,
                })
                .collect(),
            description: self.description.clone(),
            description_kind: tf::StringKind::Plain as i32,
            deprecated: false,
        }
    }

    /// A full object of this block from `values` (what is missing is null, a missing
    /// nested block an empty list), as Terraform expects every attribute in a value.
    pub fn complete(&self, mut values: BTreeMap<String, Value>) -> Value {
        for a in &self.attrs {
            values.entry(a.name.clone()).or_insert(Value::Null);
        }
        for b in &self.blocks {
            values
                .entry(b.name.clone())
                .or_insert(Value::List(Vec::new()));
        }
        Value::Map(values)
    }
}

/// The Terraform name of a spec field.
fn tf_name(field: &Field) -> &'static str {
    let is_object_list =
        matches!(field.shape(), Shape::List(inner) if matches!(inner, Shape::Object(_)));
    match (field.wire(), is_object_list) {
        ("etcdClusters", true) => "etcd_cluster",
        ("etcdMembers" | "members", true) => "member",
        ("subnets", true) => "subnet",
        _ => field.name(),
    }
}

/// How a spec field is written in Terraform.
enum Form {
    /// An attribute of this type.
    Attr(Ty),
    /// A block (at most one).
    One(&'static Object),
    /// Repeated blocks.
    Many(&'static Object),
    /// A string holding the field's JSON.
    Json,
}

fn scalar(shape: &Shape) -> Option<Ty> {
    match shape {
        Shape::String => Some(Ty::String),
        Shape::Int | Shape::Float => Some(Ty::Number),
        Shape::Bool => Some(Ty::Bool),
        Shape::Scalar(_) => Some(Ty::String),
        _ => None,
    }
}

fn form(shape: &Shape) -> Form {
    if let Some(ty) = scalar(shape) {
        return Form::Attr(ty);
    }
    match shape {
        Shape::Object(o) => Form::One(o),
        Shape::List(inner) => match (scalar(inner), inner) {
            (Some(ty), _) => Form::Attr(Ty::List(Box::new(ty))),
            (None, Shape::Object(o)) => Form::Many(o),
            _ => Form::Json,
        },
        Shape::Map(inner) => match (scalar(inner), inner) {
            (Some(ty), _) => Form::Attr(Ty::Map(Box::new(ty))),
            (None, Shape::List(item)) => match scalar(item) {
                Some(ty) => Form::Attr(Ty::Map(Box::new(Ty::List(Box::new(ty))))),
                None => Form::Json,
            },
            _ => Form::Json,
        },
        _ => Form::Json,
    }
}

/// Nesting deeper than this is written as JSON (no kOps type is that deep; it bounds a
/// type that would contain itself).
const MAX_DEPTH: usize = 16;

/// The spec described by `object` as a Terraform block (every field optional).
pub fn spec_block(object: &'static Object) -> Block {
    spec_block_at(object, 0)
}

fn spec_block_at(object: &'static Object, depth: usize) -> Block {
    let mut block = Block::default();
    for field in object.fields() {
        let name = tf_name(field);
        let description = field.doc();
        match form(field.shape()) {
            Form::Attr(ty) => block
                .attrs
                .push(Attr::new(name, ty, Mode::Optional, description)),
            Form::One(o) | Form::Many(o) if depth < MAX_DEPTH => block.blocks.push(Nested {
                name: name.to_string(),
                block: spec_block_at(o, depth + 1),
                max_items: if matches!(form(field.shape()), Form::One(_)) {
                    1
                } else {
                    0
                },
            }),
            _ => block.attrs.push(Attr::new(
                name,
                Ty::String,
                Mode::Optional,
                &format!("{description} (JSON)"),
            )),
        }
    }
    block
}

/// A step of the path to a value, for diagnostics.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// An attribute or block name.
    Attr(String),
    /// A list element.
    Index(usize),
}

/// A value that does not fit its field.
#[derive(Debug)]
pub struct Invalid {
    /// Where.
    pub path: Vec<Step>,
    /// What is wrong.
    pub message: String,
}

/// The spec fields of a Terraform object `value` as the JSON of `object`'s type.
pub fn to_json(
    object: &'static Object,
    value: &Value,
    path: &mut Vec<Step>,
) -> Result<serde_json::Map<String, serde_json::Value>, Invalid> {
    to_json_at(object, value, path, 0)
}

fn to_json_at(
    object: &'static Object,
    value: &Value,
    path: &mut Vec<Step>,
    depth: usize,
) -> Result<serde_json::Map<String, serde_json::Value>, Invalid> {
    let mut out = serde_json::Map::new();
    for field in object.fields() {
        let name = tf_name(field);
        let v = value.get(name);
        path.push(Step::Attr(name.to_string()));
        let json = field_to_json(field.shape(), v, path, depth)?;
        path.pop();
        if let Some(json) = json {
            out.insert(field.wire().to_string(), json);
        }
    }
    Ok(out)
}

fn field_to_json(
    shape: &Shape,
    v: &Value,
    path: &mut Vec<Step>,
    depth: usize,
) -> Result<Option<serde_json::Value>, Invalid> {
    let form = match form(shape) {
        Form::One(_) | Form::Many(_) if depth >= MAX_DEPTH => Form::Json,
        f => f,
    };
    Ok(match form {
        Form::Attr(_) if v.is_null() => None,
        Form::Attr(_) => Some(plain_json(shape, v, path)?),
        Form::One(o) => match v.items().first() {
            Some(item) => Some(serde_json::Value::Object(to_json_at(
                o,
                item,
                path,
                depth + 1,
            )?)),
            None => None,
        },
        Form::Many(o) => {
            let mut items = Vec::new();
            for (i, item) in v.items().iter().enumerate() {
                path.push(Step::Index(i));
                items.push(serde_json::Value::Object(to_json_at(
                    o,
                    item,
                    path,
                    depth + 1,
                )?));
                path.pop();
            }
            // No blocks is no field: a block list cannot say "an empty list".
            (!items.is_empty()).then_some(serde_json::Value::Array(items))
        }
        Form::Json => match v.as_str() {
            None if v.is_null() => None,
            None => return Err(invalid(path, "expected a JSON string")),
            Some(text) => Some(
                serde_json::from_str(text)
                    .map_err(|e| invalid(path, &format!("not valid JSON: {e}")))?,
            ),
        },
    })
}

fn invalid(path: &[Step], message: &str) -> Invalid {
    Invalid {
        path: path.to_vec(),
        message: message.to_string(),
    }
}

/// A scalar, list or map attribute's value as JSON of the field's shape.
fn plain_json(
    shape: &Shape,
    v: &Value,
    path: &mut Vec<Step>,
) -> Result<serde_json::Value, Invalid> {
    use serde_json::Value as J;
    Ok(match (shape, v) {
        (_, Value::Null) => J::Null,
        (_, Value::Unknown) => return Err(invalid(path, "the value is not known yet")),
        (Shape::Int, v) => match v.as_i64() {
            Some(i) => J::from(i),
            None => return Err(invalid(path, "expected a whole number")),
        },
        (Shape::Float, Value::Int(i)) => J::from(*i),
        (Shape::Float, Value::Float(f)) => J::from(*f),
        (Shape::Bool, Value::Bool(b)) => J::Bool(*b),
        (Shape::String | Shape::Scalar(_), Value::String(s)) => J::String(s.clone()),
        (Shape::List(inner), Value::List(items)) => {
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                path.push(Step::Index(i));
                out.push(plain_json(inner, item, path)?);
                path.pop();
            }
            J::Array(out)
        }
        (Shape::Map(inner), Value::Map(map)) => {
            let mut out = serde_json::Map::new();
            for (k, item) in map {
                path.push(Step::Attr(k.clone()));
                out.insert(k.clone(), plain_json(inner, item, path)?);
                path.pop();
            }
            J::Object(out)
        }
        _ => return Err(invalid(path, "the value does not have the field's type")),
    })
}

/// The Terraform object of the JSON `json` of `object`'s type, every attribute and
/// block present (null, or an empty list).
pub fn from_json(
    object: &'static Object,
    json: &serde_json::Map<String, serde_json::Value>,
) -> BTreeMap<String, Value> {
    from_json_at(object, json, 0)
}

fn from_json_at(
    object: &'static Object,
    json: &serde_json::Map<String, serde_json::Value>,
    depth: usize,
) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for field in object.fields() {
        let name = tf_name(field).to_string();
        let j = json.get(field.wire()).unwrap_or(&serde_json::Value::Null);
        let form = match form(field.shape()) {
            Form::One(_) | Form::Many(_) if depth >= MAX_DEPTH => Form::Json,
            f => f,
        };
        let value = match form {
            Form::Attr(_) => Value::from_json(j),
            Form::One(o) => match j.as_object() {
                Some(m) => Value::List(vec![Value::Map(from_json_at(o, m, depth + 1))]),
                None => Value::List(Vec::new()),
            },
            Form::Many(o) => Value::List(
                j.as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|item| item.as_object())
                    .map(|m| Value::Map(from_json_at(o, m, depth + 1)))
                    .collect(),
            ),
            Form::Json if j.is_null() => Value::Null,
            Form::Json => Value::String(j.to_string()),
        };
        out.insert(name, value);
    }
    out
}

/// The Terraform path of the field at `wire_path` (JSON names joined by dots, `[N]` for
/// list elements: `networking.subnets[1].cidr`) in `object`; `None` when it names no
/// field the schema shows.
pub fn tf_path(object: &'static Object, wire_path: &str) -> Option<Vec<Step>> {
    let mut path = Vec::new();
    let mut object = Some(object);
    for part in wire_path.split('.') {
        let (name, index) = match part.split_once('[') {
            Some((name, rest)) => (name, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        let field = object?.fields().iter().find(|f| f.wire() == name)?;
        path.push(Step::Attr(tf_name(field).to_string()));
        object = match form(field.shape()) {
            Form::One(o) => {
                path.push(Step::Index(0));
                Some(o)
            }
            Form::Many(o) => {
                path.push(Step::Index(index?));
                Some(o)
            }
            _ => None,
        };
    }
    Some(path)
}
