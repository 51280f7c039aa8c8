//! Terraform's values as they cross the wire: MessagePack documents whose shape the
//! schema gives (`DynamicValue.msgpack`), with an extension for values not yet known.

use std::collections::BTreeMap;

use anyhow::{Context as _, bail};

/// A value of Terraform's type system, as far as this provider needs it: objects and
/// maps are both [`Value::Map`], lists and sets both [`Value::List`].
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// No value (an attribute not set, a block-less list is empty instead).
    Null,
    /// A value Terraform will know only after apply.
    Unknown,
    /// A bool.
    Bool(bool),
    /// A whole number.
    Int(i64),
    /// A number with a fraction.
    Float(f64),
    /// A string.
    String(String),
    /// A list, a set or a tuple.
    List(Vec<Value>),
    /// An object or a map.
    Map(BTreeMap<String, Value>),
}

/// A null to borrow.
pub static NULL: Value = Value::Null;

/// MessagePack's extension type Terraform writes for an unknown value.
const UNKNOWN_EXT: i8 = 0;

impl Value {
    /// Reads a `DynamicValue`'s MessagePack bytes (empty bytes: null).
    pub fn from_msgpack(bytes: &[u8]) -> anyhow::Result<Value> {
        if bytes.is_empty() {
            return Ok(Value::Null);
        }
        let mut reader = bytes;
        let raw = rmpv::decode::read_value(&mut reader).context("reading a MessagePack value")?;
        Value::from_rmpv(raw)
    }

    /// Reads a `DynamicValue`'s JSON bytes (Terraform sends JSON for upgraded state).
    pub fn from_json_bytes(bytes: &[u8]) -> anyhow::Result<Value> {
        if bytes.is_empty() {
            return Ok(Value::Null);
        }
        let json: serde_json::Value = serde_json::from_slice(bytes).context("reading JSON")?;
        Ok(Value::from_json(&json))
    }

    fn from_rmpv(raw: rmpv::Value) -> anyhow::Result<Value> {
        Ok(match raw {
            rmpv::Value::Nil => Value::Null,
            rmpv::Value::Boolean(b) => Value::Bool(b),
            rmpv::Value::Integer(i) => match i.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(i.as_f64().unwrap_or(f64::MAX)),
            },
            rmpv::Value::F32(f) => Value::Float(f64::from(f)),
            rmpv::Value::F64(f) => Value::Float(f),
            rmpv::Value::String(s) => match s.into_str() {
                Some(s) => Value::String(s),
                None => bail!("a string that is not UTF-8"),
            },
            rmpv::Value::Binary(b) => Value::String(String::from_utf8(b)?),
            rmpv::Value::Array(items) => Value::List(
                items
                    .into_iter()
                    .map(Value::from_rmpv)
                    .collect::<anyhow::Result<_>>()?,
            ),
            rmpv::Value::Map(entries) => {
                let mut map = BTreeMap::new();
                for (k, v) in entries {
                    let Some(key) = k.as_str() else {
                        bail!("a map key that is not a string: {k}")
                    };
                    map.insert(key.to_string(), Value::from_rmpv(v)?);
                }
                Value::Map(map)
            }
            // Type 0 is an unknown value; newer Terraform refines unknowns with other
            // types, which mean "unknown" all the same.
            rmpv::Value::Ext(_, _) => Value::Unknown,
        })
    }

    /// Writes the value as a `DynamicValue`'s MessagePack bytes.
    pub fn to_msgpack(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // Writing to a Vec cannot fail.
        let _ = rmpv::encode::write_value(&mut out, &self.to_rmpv());
        out
    }

    fn to_rmpv(&self) -> rmpv::Value {
        match self {
            Value::Null => rmpv::Value::Nil,
            Value::Unknown => rmpv::Value::Ext(UNKNOWN_EXT, vec![0]),
            Value::Bool(b) => rmpv::Value::Boolean(*b),
            Value::Int(i) => rmpv::Value::from(*i),
            Value::Float(f) => rmpv::Value::F64(*f),
            Value::String(s) => rmpv::Value::from(s.as_str()),
            Value::List(items) => rmpv::Value::Array(items.iter().map(Value::to_rmpv).collect()),
            Value::Map(map) => rmpv::Value::Map(
                map.iter()
                    .map(|(k, v)| (rmpv::Value::from(k.as_str()), v.to_rmpv()))
                    .collect(),
            ),
        }
    }

    /// The value of a JSON document (no unknowns in JSON).
    pub fn from_json(json: &serde_json::Value) -> Value {
        match json {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(0.0)),
            },
            serde_json::Value::String(s) => Value::String(s.clone()),
            serde_json::Value::Array(a) => Value::List(a.iter().map(Value::from_json).collect()),
            serde_json::Value::Object(o) => Value::Map(
                o.iter()
                    .map(|(k, v)| (k.clone(), Value::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// The attribute `name` of an object (null when absent or not an object).
    pub fn get(&self, name: &str) -> &Value {
        match self {
            Value::Map(map) => map.get(name).unwrap_or(&NULL),
            _ => &NULL,
        }
    }

    /// A string value, or `None`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// A whole number, or `None`.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Float(f) if f.fract() == 0.0 => Some(*f as i64),
            _ => None,
        }
    }

    /// A bool, or `None`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// Whether the value is null.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Whether the value or anything in it is unknown.
    pub fn has_unknown(&self) -> bool {
        match self {
            Value::Unknown => true,
            Value::List(items) => items.iter().any(Value::has_unknown),
            Value::Map(map) => map.values().any(Value::has_unknown),
            _ => false,
        }
    }

    /// The elements of a list (none for null or another kind).
    pub fn items(&self) -> &[Value] {
        match self {
            Value::List(items) => items,
            _ => &[],
        }
    }

    /// Sets the attribute `name` of an object (a no-op on other kinds).
    pub fn set(&mut self, name: &str, value: Value) {
        if let Value::Map(map) = self {
            map.insert(name.to_string(), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msgpack_round_trips_every_kind_and_reads_terraforms_unknown() {
        let mut map = BTreeMap::new();
        map.insert("n".to_string(), Value::Int(-3));
        map.insert("f".to_string(), Value::Float(1.5));
        map.insert("s".to_string(), Value::String("x".into()));
        map.insert("u".to_string(), Value::Unknown);
        map.insert("z".to_string(), Value::Null);
        map.insert(
            "l".to_string(),
            Value::List(vec![Value::Bool(true), Value::Null]),
        );
        let value = Value::Map(map);
        assert_eq!(Value::from_msgpack(&value.to_msgpack()).unwrap(), value);
        // Terraform writes an unknown as fixext1 of type 0 (0xd4 0x00 0x00).
        assert_eq!(Value::from_msgpack(&[0xd4, 0, 0]).unwrap(), Value::Unknown);
        assert_eq!(Value::Unknown.to_msgpack(), vec![0xd4, 0, 0]);
    }
}
