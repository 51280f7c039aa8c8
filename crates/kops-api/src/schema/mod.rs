//! The API types described as data: for each struct, its fields with their JSON
//! names, one-line docs and shapes, for embedders that build forms, docs or a
//! Terraform schema from the API rather than from hand-kept lists.
//!
//! Every struct of [`crate::v1alpha2`] (the top-level objects, [`ObjectMeta`]
//! and every component struct) and of [`crate::internal`] is an [`Object`]. The
//! tables are generated from this crate's Rust sources by
//! `tools/gen_schema.py`, and the unit tests check each against the names serde
//! reads and writes for its type.
//!
//! An object reached from several places is one shared `&'static Object`.
//! Kubernetes scalars (`Quantity`, `Duration`, ...) are [`Shape::Scalar`];
//! free-form Kubernetes types (`Affinity`, `Toleration`, `CoreEnvVar`) are
//! [`Shape::Json`]; enums written as strings (the instance-group role) are
//! [`Shape::String`].
//!
//! [`ObjectMeta`]: crate::v1alpha2::ObjectMeta
//!
//! ```
//! use kops_api::schema::{self, Shape};
//!
//! let spec = schema::internal_cluster_spec();
//! let networking = spec.field("networking").unwrap();
//! let Shape::Object(net) = networking.shape() else { panic!("an object") };
//! assert_eq!(net.name(), "NetworkingSpec");
//! assert!(net.fields().iter().any(|f| f.wire() == "networkCIDR"));
//!
//! let kubelet = schema::object("v1alpha2::KubeletConfigSpec").unwrap();
//! assert_eq!(kubelet.field("maxPods").unwrap().shape(), &Shape::Int);
//! ```

use std::fmt;

#[rustfmt::skip]
mod generated;

/// A struct of the API: its Rust name and its fields in declaration order
/// (the order serde writes them).
#[non_exhaustive]
pub struct Object {
    module: &'static str,
    name: &'static str,
    fields: &'static [Field],
}

impl Object {
    /// The module that declares the type: `"v1alpha2"` or `"internal"`.
    pub fn module(&self) -> &'static str {
        self.module
    }

    /// The Rust type name, e.g. `ClusterSpec` (the same in both modules for some types).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The fields, in declaration order.
    pub fn fields(&self) -> &'static [Field] {
        self.fields
    }

    /// The field with this JSON name.
    pub fn field(&self, wire: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.wire == wire)
    }
}

impl PartialEq for Object {
    /// Objects are equal when they describe the same type (module and name).
    fn eq(&self, other: &Self) -> bool {
        self.module == other.module && self.name == other.name
    }
}

impl Eq for Object {}

impl fmt::Debug for Object {
    /// `module::Name` and the JSON names of the fields (not their shapes, which
    /// would print every nested object).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}::{} ", self.module, self.name)?;
        f.debug_list()
            .entries(self.fields.iter().map(|x| x.wire))
            .finish()
    }
}

/// A field of an [`Object`].
#[derive(Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Field {
    wire: &'static str,
    name: &'static str,
    doc: &'static str,
    shape: &'static Shape,
}

impl Field {
    /// The JSON name, as serde reads and writes it (`networkCIDR`, `type`).
    pub fn wire(&self) -> &'static str {
        self.wire
    }

    /// The Rust field name without the trailing `_` of a keyword (`network_cidr`, `type`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The first paragraph of the field's documentation, on one line.
    pub fn doc(&self) -> &'static str {
        self.doc
    }

    /// What the field holds. Every field may be omitted.
    pub fn shape(&self) -> &'static Shape {
        self.shape
    }
}

/// What a field holds, as JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Shape {
    /// A string (also enums written as strings).
    String,
    /// `true` or `false`.
    Bool,
    /// An integer.
    Int,
    /// A number with a fraction.
    Float,
    /// A Kubernetes scalar written as a string.
    Scalar(Scalar),
    /// An array of values of this shape.
    List(&'static Shape),
    /// An object with string keys and values of this shape.
    Map(&'static Shape),
    /// A struct described by its own table.
    Object(&'static Object),
    /// Any JSON value: a Kubernetes type kept free-form (`Affinity`, `Toleration`, ...).
    Json,
}

/// The Kubernetes scalars of [`Shape::Scalar`]: strings with a format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Scalar {
    /// A resource quantity (`100m`, `128Mi`; a number is accepted on input).
    Quantity,
    /// A Go duration (`90s`, `5m0s`).
    Duration,
    /// An RFC 3339 time.
    Time,
    /// An integer or a string (`1`, `25%`): the one scalar also written as a number.
    IntOrString,
    /// A secret string (a password, a token): to be treated as sensitive.
    Secret,
}

/// The internal `ClusterSpec` ([`crate::internal::ClusterSpec`]).
pub fn internal_cluster_spec() -> &'static Object {
    &generated::INTERNAL_CLUSTER_SPEC
}

/// The internal `InstanceGroupSpec` ([`crate::internal::InstanceGroupSpec`]).
pub fn internal_instance_group_spec() -> &'static Object {
    &generated::INTERNAL_INSTANCE_GROUP_SPEC
}

/// The v1alpha2 `ClusterSpec` ([`crate::v1alpha2::ClusterSpec`]).
pub fn cluster_spec() -> &'static Object {
    &generated::V1ALPHA2_CLUSTER_SPEC
}

/// The v1alpha2 `InstanceGroupSpec` ([`crate::v1alpha2::InstanceGroupSpec`]).
pub fn instance_group_spec() -> &'static Object {
    &generated::V1ALPHA2_INSTANCE_GROUP_SPEC
}

/// Every described object: v1alpha2's, then the internal ones.
pub fn objects() -> &'static [&'static Object] {
    generated::OBJECTS
}

/// The object of a type by name: `v1alpha2::ClusterSpec`, `internal::ClusterSpec`,
/// or a bare name that only one module has (`KubeletConfigSpec`). `None` for an
/// unknown name and for a bare name both modules have.
pub fn object(name: &str) -> Option<&'static Object> {
    let (module, bare) = match name.split_once("::") {
        Some((m, n)) => (Some(m), n),
        None => (None, name),
    };
    let mut found = objects()
        .iter()
        .copied()
        .filter(|o| o.name == bare && module.is_none_or(|m| m == o.module));
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde::Serialize;
    use serde::de::DeserializeOwned;
    use serde_json::{Value, json};

    use super::*;

    /// Decodes a value as a Rust type and encodes it again.
    pub(super) type Codec = fn(Value) -> Result<Value, String>;

    pub(super) fn codec<T: Serialize + DeserializeOwned>(v: Value) -> Result<Value, String> {
        let t: T = serde_json::from_value(v).map_err(|e| e.to_string())?;
        serde_json::to_value(&t).map_err(|e| e.to_string())
    }

    /// The JSON names serde accepts for a type, from its unknown-field error
    /// (every type rejects unknown fields and lists the ones it knows).
    fn accepted(codec: Codec) -> BTreeSet<String> {
        let err = codec(json!({"\u{1}unknown": null})).unwrap_err();
        if err.contains("there are no fields") {
            return BTreeSet::new();
        }
        let (_, expected) = err
            .split_once(", expected ")
            .unwrap_or_else(|| panic!("{err}"));
        expected
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    }

    /// A value of this shape; objects with every field set.
    fn sample(shape: &Shape, depth: usize) -> Value {
        match shape {
            Shape::String => json!("x"),
            Shape::Bool => json!(true),
            Shape::Int => json!(7),
            Shape::Float => json!(1.5),
            Shape::Scalar(Scalar::Quantity) => json!("250m"),
            Shape::Scalar(Scalar::Duration) => json!("1m30s"),
            Shape::Scalar(Scalar::Time) => json!("2024-01-02T03:04:05Z"),
            Shape::Scalar(Scalar::IntOrString) => json!("25%"),
            Shape::Scalar(Scalar::Secret) => json!("s3cret"),
            Shape::List(inner) => json!([sample(inner, depth)]),
            Shape::Map(inner) => json!({"k": sample(inner, depth)}),
            Shape::Object(o) => full(o, depth + 1),
            Shape::Json => json!({}),
        }
    }

    fn full(o: &Object, depth: usize) -> Value {
        assert!(depth < 32, "{o:?}: nested too deep (a cycle?)");
        o.fields
            .iter()
            .map(|f| (f.wire.to_string(), sample(f.shape, depth)))
            .collect::<serde_json::Map<_, _>>()
            .into()
    }

    /// `written` is `sent` back: equal, except that a free-form value only has to be there.
    fn same(shape: &Shape, sent: &Value, written: &Value, path: &str) {
        match (shape, sent, written) {
            (Shape::Json, _, _) => {}
            (Shape::Object(o), Value::Object(s), Value::Object(w)) => {
                let keys =
                    |m: &serde_json::Map<String, Value>| m.keys().cloned().collect::<Vec<_>>();
                assert_eq!(keys(w), keys(s), "{path}: {o:?} wrote other fields");
                for f in o.fields {
                    let p = format!("{path}.{}", f.wire);
                    same(f.shape, &s[f.wire], &w[f.wire], &p);
                }
            }
            (Shape::List(inner), Value::Array(s), Value::Array(w)) if s.len() == w.len() => {
                for (i, (s, w)) in s.iter().zip(w).enumerate() {
                    same(inner, s, w, &format!("{path}[{i}]"));
                }
            }
            (Shape::Map(inner), Value::Object(s), Value::Object(w)) if s.len() == w.len() => {
                for (k, s) in s {
                    same(inner, s, &w[k], &format!("{path}.{k}"));
                }
            }
            _ => assert_eq!(written, sent, "{path}: written differently"),
        }
    }

    /// Each table names exactly the fields serde reads, with shapes serde
    /// accepts, and serde writes every one of them back under the same name.
    #[test]
    fn every_table_matches_its_types_serde() {
        assert_eq!(generated::TYPES.len(), objects().len());
        for ((o, codec), listed) in generated::TYPES.iter().zip(objects()) {
            assert!(std::ptr::eq(*o, *listed), "{o:?}");
            let o: &Object = o;
            let table: BTreeSet<String> = o.fields.iter().map(|f| f.wire.to_string()).collect();
            assert_eq!(table.len(), o.fields.len(), "{o:?}: a JSON name twice");
            assert_eq!(
                accepted(*codec),
                table,
                "{o:?}: the table's names are not serde's"
            );
            let sent = full(o, 0);
            let written = codec(sent.clone()).unwrap_or_else(|e| panic!("{o:?}: {e}"));
            same(&Shape::Object(o), &sent, &written, o.name);
        }
    }

    #[test]
    fn entry_points_and_lookup() {
        let pairs = [
            (internal_cluster_spec(), "internal", "ClusterSpec"),
            (
                internal_instance_group_spec(),
                "internal",
                "InstanceGroupSpec",
            ),
            (cluster_spec(), "v1alpha2", "ClusterSpec"),
            (instance_group_spec(), "v1alpha2", "InstanceGroupSpec"),
        ];
        for (o, module, name) in pairs {
            assert_eq!((o.module(), o.name()), (module, name));
            let path = format!("{module}::{name}");
            assert!(std::ptr::eq(object(&path).unwrap(), o), "{path}");
        }
        assert_eq!(object("ClusterSpec"), None, "both modules have it");
        assert_eq!(object("KubeletConfigSpec").unwrap().module(), "v1alpha2");
        assert_eq!(object("ConfigStoreSpec").unwrap().module(), "internal");
        assert_eq!(object("internal::KubeletConfigSpec"), None);
        assert_eq!(object("NoSuchSpec"), None);
    }

    #[test]
    fn shapes_and_names() {
        let at = |o: &'static Object, path: &str| -> &'static Field {
            let mut o = o;
            let mut parts = path.split('.').peekable();
            loop {
                let f = o
                    .field(parts.next().unwrap())
                    .unwrap_or_else(|| panic!("{path}"));
                if parts.peek().is_none() {
                    return f;
                }
                o = match f.shape() {
                    Shape::Object(x) => x,
                    Shape::List(Shape::Object(x)) => x,
                    other => panic!("{path}: {other:?}"),
                };
            }
        };
        let hub = internal_cluster_spec();
        assert_eq!(at(hub, "networking.networkCIDR").shape(), &Shape::String);
        assert_eq!(at(hub, "networking.subnets.zone").name(), "zone");
        assert_eq!(at(hub, "networking.subnets.type").name(), "type");
        assert_eq!(at(hub, "configStore.base").shape(), &Shape::String);
        assert_eq!(
            at(hub, "cloudProvider.aws.warmPool.minSize").shape(),
            &Shape::Int
        );
        assert_eq!(at(hub, "api.publicName").name(), "public_name");
        assert_eq!(at(hub, "controlPlaneKubelet.maxPods").shape(), &Shape::Int);
        assert_eq!(at(hub, "cloudLabels").shape(), &Shape::Map(&Shape::String));
        assert_eq!(
            at(hub, "etcdClusters.memoryRequest").shape(),
            &Shape::Scalar(Scalar::Quantity)
        );
        let ig = internal_instance_group_spec();
        assert_eq!(at(ig, "role").shape(), &Shape::String);
        assert_eq!(at(ig, "rootVolume.size").shape(), &Shape::Int);
        assert_eq!(at(instance_group_spec(), "role").shape(), &Shape::String);
        let v = cluster_spec();
        assert_eq!(at(v, "networkCIDR").name(), "network_cidr");
        assert_eq!(
            at(v, "gossipConfig.secret").shape(),
            &Shape::Scalar(Scalar::Secret)
        );
        assert_eq!(at(v, "certManager.defaultIssuer").shape(), &Shape::String);
        assert_eq!(at(v, "kubeDNS.affinity").shape(), &Shape::Json);
        // One shared table for a struct reached from both versions.
        let Shape::List(Shape::Object(a)) = at(hub, "networking.subnets").shape() else {
            panic!("subnets")
        };
        let Shape::List(Shape::Object(b)) = at(v, "subnets").shape() else {
            panic!("subnets")
        };
        assert!(std::ptr::eq(*a, *b));
        assert!(!at(v, "kubernetesVersion").doc().is_empty());
    }
}
