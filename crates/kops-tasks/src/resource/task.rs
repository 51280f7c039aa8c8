//! [`ResourceTask`]: one cloud object described as Terraform-named attributes and tags,
//! which renders itself for the Terraform target and finds, creates and updates itself
//! through any [`ResourceCloud`] of its kind.
//!
//! Every task kind of a cloud model (VPC, Subnet, SecurityGroupRule, ...) is a
//! `ResourceTask` with its kind in the [`TaskKey`] and its resource type `K`; the model's
//! builders decide names, attributes and tags.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value as Json;

use super::{CreateRequest, ListQuery, Resource, ResourceCloud, ResourceKind, Tags, UpdateRequest};
use crate::diff::{FieldChange, Resolver, field_change, values_equal_with};
use crate::terraform::{Body, Expr, Link, TerraformWriter};
use crate::value::StrMap;
use crate::{
    Change, ChangeKind, Context, Error, Fields, Found, Lifecycle, Outputs, Result, Task, TaskKey,
    TaskRef, Value, async_trait,
};

/// One attribute value of a [`ResourceTask`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Attr {
    /// A string.
    Str(String),
    /// An integer.
    Int(i64),
    /// A boolean.
    Bool(bool),
    /// A list (rendered on one line).
    List(Vec<Attr>),
    /// A map with quoted keys.
    Map(BTreeMap<String, Attr>),
    /// A reference to another task's output.
    Ref(TaskRef),
    /// A nested block.
    Block(Vec<(String, Attr)>),
    /// Repeated nested blocks.
    Blocks(Vec<Vec<(String, Attr)>>),
    /// Long text stored as a Terraform data file (`file(...)`), e.g. a policy document.
    File(String),
    /// Like [`Attr::File`] but with a data-file key other than the attribute name
    /// (kOps names a role's assume-role policy file `..._policy`).
    FileAs(&'static str, String),
    /// Binary-safe text stored as a data file read with `filebase64(...)` (user data).
    FileBase64(String),
    /// Like [`Attr::FileAs`] with a data-file key built at run time (kOps names a GCE
    /// template's metadata file `..._metadata_<key>`): `(key, content)`.
    FileNamed(String, String),
    /// A value sent to the cloud and diffed as `value`, but rendered for Terraform as
    /// `terraform` (kOps writes `format("serviceAccount:%s", <ref>)` where the cloud takes
    /// the member text).
    RenderedAs {
        /// What the cloud gets and the diff compares.
        value: Box<Attr>,
        /// What the Terraform rendering writes.
        terraform: Box<Attr>,
    },
    /// A verbatim Terraform expression with no cloud meaning (rendered only).
    Raw(String),
}

impl Attr {
    /// A string.
    pub fn s(v: impl Into<String>) -> Self {
        Attr::Str(v.into())
    }

    /// A list of strings.
    pub fn strs<S: Into<String>>(v: impl IntoIterator<Item = S>) -> Self {
        Attr::List(v.into_iter().map(|s| Attr::Str(s.into())).collect())
    }

    /// A reference to `key`'s `id`.
    pub fn id(key: &TaskKey) -> Self {
        Attr::Ref(key.to_ref())
    }

    /// A reference to `key`'s output `attr`.
    pub fn out(key: &TaskKey, attr: &'static str) -> Self {
        Attr::Ref(key.to_ref().with_attr(attr))
    }

    fn to_value(&self) -> Value {
        match self {
            Attr::Str(s) => Value::string(s.as_str()),
            Attr::Int(i) => Value::Int(*i),
            Attr::Bool(b) => Value::Bool(*b),
            Attr::List(v) => Value::List(v.iter().map(Attr::to_value).collect()),
            Attr::Map(m) => Value::Map(m.iter().map(|(k, v)| (k.as_str(), v.to_value())).collect()),
            Attr::Ref(r) => Value::reference(r.clone()),
            Attr::Block(b) => Value::Object(block_fields(b)),
            Attr::Blocks(bs) => {
                Value::List(bs.iter().map(|b| Value::Object(block_fields(b))).collect())
            }
            Attr::File(t) | Attr::FileAs(_, t) | Attr::FileBase64(t) | Attr::FileNamed(_, t) => {
                Value::text(t.as_str())
            }
            Attr::RenderedAs { value, .. } => value.to_value(),
            Attr::Raw(_) => Value::Null,
        }
    }

    /// Passes every reference [`Attr::to_value`] holds to `f`.
    fn for_each_ref(&self, f: &mut dyn FnMut(&TaskRef)) {
        match self {
            Attr::Ref(r) => f(r),
            Attr::List(v) => v.iter().for_each(|a| a.for_each_ref(f)),
            Attr::Map(m) => m.values().for_each(|a| a.for_each_ref(f)),
            Attr::Block(b) => b.iter().for_each(|(_, a)| a.for_each_ref(f)),
            Attr::Blocks(bs) => bs.iter().flatten().for_each(|(_, a)| a.for_each_ref(f)),
            Attr::RenderedAs { value, .. } => value.for_each_ref(f),
            Attr::Str(_)
            | Attr::Int(_)
            | Attr::Bool(_)
            | Attr::File(_)
            | Attr::FileAs(..)
            | Attr::FileBase64(_)
            | Attr::FileNamed(..)
            | Attr::Raw(_) => {}
        }
    }

    /// Whether the object's value `actual` matches this expected attribute, decided
    /// without building either value where the diff's rule is a plain comparison (a
    /// string, number or flag reported as such, a reference reported as an ID); `None`
    /// where the general rule must decide ([`align`], then the diff's comparison).
    fn matches_in_place(&self, actual: Option<&Json>, resolver: &dyn Resolver) -> Option<bool> {
        Some(match (self, actual?) {
            (Attr::Str(e), Json::String(a)) => e == a,
            (Attr::Int(e), Json::Number(a)) => a.as_i64() == Some(*e),
            (Attr::Bool(e), Json::Bool(a)) => e == a,
            (Attr::Ref(r), Json::String(a)) => resolver.resolve(r) == Some(a.as_str()),
            (
                Attr::File(e) | Attr::FileAs(_, e) | Attr::FileBase64(e) | Attr::FileNamed(_, e),
                Json::String(a),
            ) => e == a,
            _ => return None,
        })
    }

    fn to_expr(&self, w: &mut TerraformWriter, tf_type: &str, name: &str, attr: &str) -> Expr {
        match self {
            Attr::Str(s) => Expr::String(s.clone()),
            Attr::Int(i) => Expr::Int(*i),
            Attr::Bool(b) => Expr::Bool(*b),
            Attr::List(v) => Expr::List(
                v.iter()
                    .map(|a| a.to_expr(w, tf_type, name, attr))
                    .collect(),
            ),
            Attr::Map(m) => Expr::Map(
                m.iter()
                    .map(|(k, v)| (k.clone(), v.to_expr(w, tf_type, name, attr)))
                    .collect(),
            ),
            Attr::Ref(r) => Expr::Ref(r.clone()),
            Attr::File(t) => w.add_file(tf_type, name, attr, t.clone().into_bytes()),
            Attr::FileAs(key, t) => w.add_file(tf_type, name, key, t.clone().into_bytes()),
            Attr::FileBase64(t) => w.add_file_base64(tf_type, name, attr, t.clone().into_bytes()),
            Attr::FileNamed(key, t) => w.add_file(tf_type, name, key, t.clone().into_bytes()),
            Attr::RenderedAs { terraform, .. } => terraform.to_expr(w, tf_type, name, attr),
            Attr::Raw(r) => Expr::Raw(r.clone()),
            Attr::Block(_) | Attr::Blocks(_) => Expr::Null,
        }
    }

    /// The value sent to the cloud, references resolved.
    fn to_json<C: ?Sized>(&self, cx: &Context<'_, C>) -> Result<Json> {
        Ok(match self {
            Attr::Str(s)
            | Attr::File(s)
            | Attr::FileAs(_, s)
            | Attr::FileBase64(s)
            | Attr::FileNamed(_, s) => Json::String(s.clone()),
            Attr::RenderedAs { value, .. } => value.to_json(cx)?,
            Attr::Int(i) => Json::from(*i),
            Attr::Bool(b) => Json::Bool(*b),
            Attr::List(v) => Json::Array(v.iter().map(|a| a.to_json(cx)).collect::<Result<_>>()?),
            Attr::Map(m) => Json::Object(
                m.iter()
                    .map(|(k, v)| Ok((k.clone(), v.to_json(cx)?)))
                    .collect::<Result<_>>()?,
            ),
            Attr::Ref(r) => Json::String(cx.resolve(r)?),
            Attr::Block(b) => block_json(b, cx)?,
            Attr::Blocks(bs) => Json::Array(
                bs.iter()
                    .map(|b| block_json(b, cx))
                    .collect::<Result<_>>()?,
            ),
            Attr::Raw(_) => Json::Null,
        })
    }
}

impl From<&str> for Attr {
    fn from(v: &str) -> Self {
        Attr::Str(v.to_owned())
    }
}
impl From<String> for Attr {
    fn from(v: String) -> Self {
        Attr::Str(v)
    }
}
impl From<i64> for Attr {
    fn from(v: i64) -> Self {
        Attr::Int(v)
    }
}
impl From<i32> for Attr {
    fn from(v: i32) -> Self {
        Attr::Int(i64::from(v))
    }
}
impl From<bool> for Attr {
    fn from(v: bool) -> Self {
        Attr::Bool(v)
    }
}
impl From<TaskRef> for Attr {
    fn from(v: TaskRef) -> Self {
        Attr::Ref(v)
    }
}

fn block_fields(b: &[(String, Attr)]) -> Fields {
    let mut f = Fields::new();
    for (k, v) in b {
        f.insert(k, v.to_value());
    }
    f
}

fn block_json<C: ?Sized>(b: &[(String, Attr)], cx: &Context<'_, C>) -> Result<Json> {
    let mut m = serde_json::Map::new();
    for (k, v) in b {
        m.insert(k.clone(), v.to_json(cx)?);
    }
    Ok(Json::Object(m))
}

fn block_body(b: &[(String, Attr)], w: &mut TerraformWriter, tf_type: &str, name: &str) -> Body {
    let mut body = Body::new();
    for (k, v) in b {
        body = add_attr(body, k, v, w, tf_type, name);
    }
    body
}

fn add_attr(
    body: Body,
    k: &str,
    v: &Attr,
    w: &mut TerraformWriter,
    tf_type: &str,
    name: &str,
) -> Body {
    match v {
        Attr::Block(b) => body.block(k, block_body(b, w, tf_type, name)),
        Attr::Blocks(bs) => {
            let mut body = body;
            for b in bs {
                body = body.push_block(k, block_body(b, w, tf_type, name));
            }
            body
        }
        other => {
            let e = other.to_expr(w, tf_type, name, k);
            body.attr(k, e)
        }
    }
}

/// How a task finds its object in the cloud.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum FindBy {
    /// By a known ID (shared objects, objects named by their ID such as key pairs).
    Id(String),
    /// By [`Resource::name`] (security groups, IAM, ASGs, LBs, queues, rules).
    Name(String),
    /// By the name and cluster tags (labels) of the kind's policy,
    /// [`ResourceKind::name_tags`] (AWS: the `Name` and `KubernetesCluster` tags of VPC
    /// networking objects and volumes).
    NameTag(String),
    /// Under a parent (given by one of the task's attributes), matching the listed
    /// attributes (routes, associations, rules, hooks, targets, objects).
    Parent {
        /// The attribute holding the parent's ID.
        parent_attr: String,
        /// Attributes that identify the object under the parent.
        match_attrs: Vec<String>,
    },
    /// Like [`FindBy::Parent`], but among the objects of every parent: the one matching
    /// the listed attributes wherever it is. For association-like kinds whose object
    /// exists at most once per matched attributes (a subnet's route-table association):
    /// one found under another parent than the task's is a change of the parent
    /// attribute, which an update makes (the association is moved), instead of a create
    /// the cloud refuses.
    AnyParent {
        /// The attribute holding the parent's ID the object should be under.
        parent_attr: String,
        /// Attributes that identify the object among all of its type.
        match_attrs: Vec<String>,
    },
}

/// One cloud object the model manages, of resource type `K`.
///
/// It implements [`Task`] for every cloud `C` that is a [`ResourceCloud<K>`], among them
/// the cloud's own trait object (`dyn AwsCloud`).
#[derive(Clone, Debug)]
pub struct ResourceTask<K> {
    key: TaskKey,
    resource_type: K,
    /// The resource type's own unless set otherwise: no allocation of its own.
    tf_type: Cow<'static, str>,
    /// `None`: the task's name.
    tf_name: Option<String>,
    name: Option<String>,
    /// Names the model writes as literals are borrowed, not allocated per task.
    attrs: Vec<(Cow<'static, str>, Attr)>,
    /// In one buffer: a find compares them with every listed object's.
    tags: Option<StrMap>,
    tags_attr: &'static str,
    /// Shared by the tasks made from one `Arc` (a model's context passes its own).
    cluster: Arc<str>,
    /// `None`: by the name tags of the task's name ([`FindBy::NameTag`]), without a copy
    /// of the name.
    find_by: Option<FindBy>,
    shared_id: Option<String>,
    lifecycle: Lifecycle,
    deps: Vec<TaskKey>,
    render: bool,
    render_only: Vec<(String, Attr)>,
}

impl<K: ResourceKind> ResourceTask<K> {
    /// A task of `kind` named `name` managing a `resource_type` object of `cluster`. It
    /// renders as `resource "<terraform type>" "<name>"` and is found by its name tag
    /// ([`FindBy::NameTag`]) unless set otherwise.
    pub fn new(
        kind: &str,
        name: impl Into<String>,
        resource_type: K,
        cluster: impl Into<Arc<str>>,
    ) -> Self {
        let name = name.into();
        ResourceTask {
            key: TaskKey::new(kind, &name),
            resource_type,
            tf_type: Cow::Borrowed(resource_type.terraform_type()),
            tf_name: None,
            name: None,
            attrs: Vec::new(),
            tags: None,
            tags_attr: resource_type.tags_attr(),
            cluster: cluster.into(),
            find_by: None,
            shared_id: None,
            lifecycle: Lifecycle::Sync,
            deps: Vec::new(),
            render: true,
            render_only: Vec::new(),
        }
    }

    /// The task's key.
    pub fn task_key(&self) -> &TaskKey {
        &self.key
    }

    /// The type of cloud object the task manages.
    pub fn resource_type(&self) -> K {
        self.resource_type
    }

    /// The object's cloud name ([`Resource::name`]), when the type has one.
    pub fn cloud_name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The tags the object should carry, when the task sets them.
    pub fn expected_tags(&self) -> Option<BTreeMap<String, String>> {
        self.tags.as_ref().map(StrMap::to_map)
    }

    /// Sets an attribute (replacing an earlier one with the same name).
    pub fn attr(mut self, name: impl Into<Cow<'static, str>>, value: impl Into<Attr>) -> Self {
        self.set(name, value);
        self
    }

    /// Sets an attribute in place.
    pub fn set(&mut self, name: impl Into<Cow<'static, str>>, value: impl Into<Attr>) {
        let (name, value) = (name.into(), value.into());
        if let Some(slot) = self.attrs.iter_mut().find(|(k, _)| *k == name) {
            slot.1 = value;
        } else {
            self.attrs.push((name, value));
        }
    }

    /// Sets an attribute when `value` is `Some`.
    pub fn attr_opt(
        self,
        name: impl Into<Cow<'static, str>>,
        value: Option<impl Into<Attr>>,
    ) -> Self {
        match value {
            Some(v) => self.attr(name, v),
            None => self,
        }
    }

    /// An attribute.
    pub fn get(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// Sets the tags (rendered as `tags = {...}`).
    pub fn tags(mut self, tags: BTreeMap<String, String>) -> Self {
        self.tags = Some(StrMap::from(&tags));
        self
    }

    /// Sets the object's cloud name ([`Resource::name`]) and finds it by that name.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        self.find_by = Some(FindBy::Name(name.clone()));
        self.name = Some(name);
        self
    }

    /// Sets the Terraform resource name (default: the task name).
    pub fn tf_name(mut self, name: impl Into<String>) -> Self {
        self.tf_name = Some(name.into());
        self
    }

    /// Sets the Terraform resource type (default: the resource type's).
    pub fn tf_type(mut self, t: &str) -> Self {
        self.tf_type = Cow::Owned(t.to_owned());
        self
    }

    /// Sets how the object is found.
    pub fn find_by(mut self, f: FindBy) -> Self {
        self.find_by = Some(f);
        self
    }

    /// Marks the object as existing and not managed here (a shared VPC or subnet):
    /// references to it render as the literal `id`, and nothing is rendered.
    pub fn shared(mut self, id: impl Into<String>) -> Self {
        let id = id.into();
        self.find_by = Some(FindBy::Id(id.clone()));
        self.shared_id = Some(id);
        self.lifecycle = Lifecycle::ExistsAndWarnIfChanges;
        self
    }

    /// Whether the task describes a shared object.
    pub fn is_shared(&self) -> bool {
        self.shared_id.is_some()
    }

    /// Adds an explicit dependency.
    pub fn depends_on(mut self, key: TaskKey) -> Self {
        self.deps.push(key);
        self
    }

    /// Adds an attribute that only the Terraform rendering has (kOps renders some
    /// separate objects inline, e.g. an ASG's warm pool); it is neither diffed nor sent
    /// to the cloud by this task.
    pub fn render_attr(mut self, name: &str, value: impl Into<Attr>) -> Self {
        self.render_only.push((name.to_owned(), value.into()));
        self
    }

    /// Skips Terraform rendering (the object exists only for the direct target).
    pub fn no_render(mut self) -> Self {
        self.render = false;
        self
    }

    /// The Terraform resource name: [`ResourceTask::tf_name`]'s, or the task's name.
    fn terraform_name(&self) -> &str {
        self.tf_name.as_deref().unwrap_or(self.key.name())
    }

    fn cloud_tags(&self) -> BTreeMap<String, String> {
        self.tags.as_ref().map(StrMap::to_map).unwrap_or_default()
    }

    async fn candidates<C>(&self, cx: &Context<'_, C>) -> Result<Vec<Arc<Resource<K>>>>
    where
        C: ResourceCloud<K> + ?Sized,
    {
        let cloud = cx.cloud();
        let rt = self.resource_type;
        let by_name_tag;
        let find_by = match &self.find_by {
            Some(f) => f,
            None => {
                by_name_tag = FindBy::NameTag(self.key.name().to_owned());
                &by_name_tag
            }
        };
        match find_by {
            FindBy::Id(id) => Ok(cloud
                .list_shared(&ListQuery::new(rt).with_ids([id.clone()]))
                .await?),
            FindBy::Name(n) => Ok(cloud
                .list_shared(&ListQuery::new(rt).with_names([n.clone()]))
                .await?),
            FindBy::NameTag(n) => {
                let tags = K::name_tags(&self.cluster, n);
                Ok(cloud.list_tagged(rt, &tags.pairs()).await?)
            }
            FindBy::Parent {
                parent_attr,
                match_attrs,
            } => {
                let Some(parent) = self.get(parent_attr) else {
                    return Err(Error::invalid(
                        format!("{}.{parent_attr}", self.key),
                        "parent attribute is not set",
                    ));
                };
                let parent = match parent.to_json(cx) {
                    Ok(Json::String(s)) => s,
                    // The parent does not exist yet: neither does this object.
                    _ => return Ok(Vec::new()),
                };
                let all = cloud
                    .list_digests(&ListQuery::new(rt).with_parent(parent))
                    .await?;
                let mut want = BTreeMap::new();
                for a in match_attrs {
                    if let Some(v) = self.get(a)
                        && let Ok(j) = v.to_json(cx)
                    {
                        want.insert(a.clone(), j);
                    }
                }
                Ok(all
                    .into_iter()
                    .filter(|r| want.iter().all(|(k, v)| r.attrs.get(k) == Some(v)))
                    .map(Arc::new)
                    .collect())
            }
            FindBy::AnyParent { match_attrs, .. } => {
                let mut want = BTreeMap::new();
                for a in match_attrs {
                    let Some(v) = self.get(a) else {
                        return Err(Error::invalid(
                            format!("{}.{a}", self.key),
                            "attribute to find the object by is not set",
                        ));
                    };
                    match v.to_json(cx) {
                        Ok(Json::Null) | Err(_) => return Ok(Vec::new()),
                        // What it refers to does not exist yet: neither does this object.
                        Ok(j) => {
                            want.insert(a.as_str(), j);
                        }
                    }
                }
                let all = cloud.list_shared(&ListQuery::new(rt)).await?;
                let mut found: Vec<Arc<Resource<K>>> = all
                    .into_iter()
                    .filter(|r| want.iter().all(|(k, v)| r.attrs.get(k) == Some(v)))
                    .collect();
                // One under the task's own parent first, when there are several.
                if let FindBy::AnyParent { parent_attr, .. } = find_by
                    && let Some(Ok(Json::String(p))) = self.get(parent_attr).map(|v| v.to_json(cx))
                {
                    found.sort_by_key(|r| r.parent.as_deref() != Some(p.as_str()));
                }
                Ok(found)
            }
        }
    }

    /// What a find returns for the first object it found (`None`: not found).
    fn found<C>(&self, r: Option<&Resource<K>>, cx: &Context<'_, C>) -> Option<Found>
    where
        C: ResourceCloud<K> + ?Sized,
    {
        let r = r?;
        let outputs = self.outputs_of(r);
        if self.shadows_fields() {
            return Some(Found::new(self.found_fields(r), outputs));
        }
        let changes = cx.with_resolver(|resolver| self.compare(r, resolver));
        Some(Found::compared(changes, outputs))
    }

    /// Whether the task has a `tags` field ([`Task::fields`]).
    fn has_tags_field(&self) -> bool {
        self.resource_type.is_taggable() && self.tags.is_some()
    }

    /// Whether an attribute is named as the field the name or the tags are
    /// ([`Task::fields`]), whose value it then is.
    fn shadows_fields(&self) -> bool {
        self.attrs.iter().any(|(k, _)| {
            (k == "name" && self.name.is_some()) || (k == "tags" && self.has_tags_field())
        })
    }

    /// The object's value of attribute `k`, shaped as `expected` ([`align`]); a text the
    /// cloud reports only by its digest is the expected text when the digests match.
    fn actual_value(r: &Resource<K>, k: &str, expected: &Value) -> Value {
        let reported = match (r.attrs.get(k), K::content_digest()) {
            (None, Some(d)) => r
                .attr_str(&format!("{k}{}", d.suffix))
                .map(|reported| (reported, d.digest)),
            _ => None,
        };
        let actual = match reported {
            Some((reported, digest)) => content_by_digest(expected, reported, digest),
            None => r.attrs.get(k).map_or(Value::Null, json_to_value),
        };
        align(expected, actual)
    }

    /// The object's fields, named and shaped as the task's ([`Task::fields`]), for the
    /// executor to diff.
    fn found_fields(&self, r: &Resource<K>) -> Fields {
        let mut fields = Fields::with_capacity(self.attrs.len() + 2);
        if self.name.is_some() {
            fields.insert("name", r.name.clone().map_or(Value::Null, Value::string));
        }
        for (k, v) in &self.attrs {
            fields.insert(k, Self::actual_value(r, k, &v.to_value()));
        }
        if self.has_tags_field() {
            fields.insert("tags", string_map(&r.tags));
        }
        fields
    }

    /// The changes that turn the object into the task's fields, as
    /// [`crate::diff::diff_fields`] finds them between [`Task::fields`] and
    /// [`ResourceTask::found_fields`] (in field order, each with the aligned actual value
    /// as `old`), building values only for the fields that differ or that the plain
    /// comparisons cannot decide. Not for a task whose attributes shadow the name or the
    /// tags ([`ResourceTask::shadows_fields`]).
    fn compare(&self, r: &Resource<K>, resolver: &dyn Resolver) -> Vec<FieldChange> {
        let mut changes = Vec::new();
        if let Some(n) = &self.name
            && r.name.as_deref() != Some(n.as_str())
        {
            let actual = r.name.as_deref().map_or(Value::Null, Value::string);
            changes.push(field_change(
                "name",
                Some(&actual),
                &Value::string(n.as_str()),
            ));
        }
        for (k, v) in &self.attrs {
            if v.matches_in_place(r.attrs.get(k), resolver) == Some(true) {
                continue;
            }
            let expected = v.to_value();
            if expected.is_null() {
                continue;
            }
            let actual = Self::actual_value(r, k, &expected);
            if values_equal_with(&expected, Some(&actual), resolver)
                || (self.resource_type.unordered_attrs().contains(&&**k)
                    && same_elements(&expected, &actual, resolver))
            {
                continue;
            }
            changes.push(field_change(k, Some(&actual), &expected));
        }
        if self.has_tags_field()
            && let Some(t) = &self.tags
            && t != r.tags.as_str_map()
        {
            changes.push(field_change(
                "tags",
                Some(&string_map(&r.tags)),
                &Value::string_map(t.iter()),
            ));
        }
        changes
    }

    fn outputs_of(&self, r: &Resource<K>) -> Outputs {
        // Every entry is copied once, into one buffer sized for them all (names, values
        // and a few bytes of lengths each).
        let name = r.name.as_ref().or(self.name.as_ref());
        let mut text = r.id.len() + r.arn.as_ref().map_or(0, |a| a.len() + 8);
        text += name.map_or(0, |n| n.len() + 8) + 8;
        for (k, v) in &r.attrs {
            if let Json::String(s) = v {
                text += k.len() + s.len() + 4;
            }
        }
        let mut o = Outputs::with_capacity(text);
        o.insert(TaskRef::ID, r.id.as_str());
        if let Some(a) = &r.arn {
            o.insert("arn", a.as_str());
        }
        if let Some(n) = name {
            o.insert("name", n.as_str());
        }
        for (k, v) in &r.attrs {
            if let Json::String(s) = v {
                o.insert(k, s.as_str());
            }
        }
        o
    }
}

/// Tags as the `tags` field's value.
fn string_map(tags: &Tags) -> Value {
    Value::string_map(tags.iter())
}

fn json_to_value(j: &Json) -> Value {
    match j {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => n.as_i64().map_or(Value::Null, Value::Int),
        Json::String(s) => Value::string(s.as_str()),
        Json::Array(v) => Value::List(v.iter().map(json_to_value).collect()),
        Json::Object(m) => {
            let mut f = Fields::new();
            for (k, v) in m {
                f.insert(k, json_to_value(v));
            }
            Value::Object(f)
        }
    }
}

/// The actual value of a text attribute the cloud reported only as a digest of its
/// content (see [`ResourceCloud::list_digests`]): the expected value when the digests
/// match, otherwise a placeholder naming the digest (which differs from anything expected).
fn content_by_digest(expected: &Value, reported: &str, digest: fn(&[u8]) -> String) -> Value {
    let text = match expected {
        Value::Text(t) | Value::String(t) => t.as_str(),
        _ => return Value::string(format!("<content with digest {reported}>")),
    };
    if digest(text.as_bytes()).eq_ignore_ascii_case(reported) {
        expected.clone()
    } else {
        Value::string(format!("<content with digest {reported}>"))
    }
}

/// Whether two lists hold the same elements in any order (a set attribute,
/// [`ResourceKind::unordered_attrs`]): each expected element matches its own actual one.
fn same_elements(expected: &Value, actual: &Value, resolver: &dyn Resolver) -> bool {
    let (Value::List(e), Value::List(a)) = (expected, actual) else {
        return false;
    };
    if e.len() != a.len() {
        return false;
    }
    let mut used = vec![false; a.len()];
    e.iter().all(|ev| {
        let hit = a
            .iter()
            .enumerate()
            .find(|(i, av)| !used[*i] && values_equal_with(ev, Some(av), resolver));
        match hit {
            Some((i, _)) => {
                used[i] = true;
                true
            }
            None => false,
        }
    })
}

/// Aligns the actual value's shape with the expected one (maps vs objects, text vs
/// string) so the diff compares content, not representation.
fn align(expected: &Value, actual: Value) -> Value {
    match (expected, actual) {
        (Value::Text(_), Value::String(s)) => Value::Text(s),
        // Terraform writes some numbers and flags as strings (`deregistration_delay =
        // "30"`); APIs answer with the typed value.
        (Value::String(_), Value::Bool(b)) => Value::string(b.to_string()),
        (Value::String(_), Value::Int(i)) => Value::string(i.to_string()),
        // A single nested block is a one-element list in the APIs (a listener's
        // `default_action`).
        (Value::Object(_), Value::List(mut l)) if l.len() == 1 => {
            let only = l.remove(0);
            align(expected, only)
        }
        (Value::Map(_), Value::Object(f)) => {
            Value::Map(f.iter().map(|(k, v)| (k.to_owned(), v.clone())).collect())
        }
        (Value::Object(ef), Value::Object(af)) => {
            let mut out = Fields::new();
            for (k, ev) in ef.iter() {
                let av = af.get(k).cloned().unwrap_or(Value::Null);
                out.insert(k.to_owned(), align(ev, av));
            }
            Value::Object(out)
        }
        (Value::List(el), Value::List(al)) => Value::List(
            al.into_iter()
                .enumerate()
                .map(|(i, a)| match el.get(i) {
                    Some(e) => align(e, a),
                    None => a,
                })
                .collect(),
        ),
        (_, a) => a,
    }
}

#[async_trait]
impl<K, C> Task<C> for ResourceTask<K>
where
    K: ResourceKind,
    C: ResourceCloud<K> + ?Sized,
{
    fn key(&self) -> &TaskKey {
        &self.key
    }

    fn fields(&self) -> Fields {
        let mut f = Fields::with_capacity(self.attrs.len() + 2);
        if let Some(n) = &self.name {
            f.insert("name", Value::string(n.as_str()));
        }
        for (k, v) in &self.attrs {
            f.insert(k, v.to_value());
        }
        if self.resource_type.is_taggable()
            && let Some(t) = &self.tags
        {
            f.insert("tags", Value::string_map(t.iter()));
        }
        f
    }

    fn dependencies(&self) -> Vec<TaskKey> {
        self.deps.clone()
    }

    fn lifecycle(&self) -> Lifecycle {
        self.lifecycle
    }

    /// Compares the object with the task in place ([`Found::compared`]): only the
    /// outputs and the differing fields are copied.
    async fn find(&self, cx: &Context<'_, C>) -> Result<Option<Found>> {
        let found = self.candidates(cx).await?;
        Ok(self.found(found.first().map(|r| &**r), cx))
    }

    /// Answers a find by name tag when the cloud holds the kind's listing
    /// ([`ResourceCloud::first_tagged_now`]).
    fn find_now(&self, cx: &Context<'_, C>) -> Option<Result<Option<Found>>> {
        let n = match &self.find_by {
            None => self.key.name(),
            Some(FindBy::NameTag(n)) => n.as_str(),
            Some(_) => return None,
        };
        let tags = K::name_tags(&self.cluster, n);
        match cx
            .cloud()
            .first_tagged_now(self.resource_type, &tags.pairs())?
        {
            Ok(found) => Some(Ok(self.found(found.as_deref(), cx))),
            Err(e) => Some(Err(e.into())),
        }
    }

    fn for_each_ref(&self, f: &mut dyn FnMut(&TaskRef)) -> bool {
        for (_, v) in &self.attrs {
            v.for_each_ref(f);
        }
        true
    }

    /// Refuses an update that changes an attribute the kind lists as immutable
    /// ([`ResourceKind::immutable_attrs`]), naming the field, so a dry run reports it before
    /// anything is applied.
    fn check_changes(&self, actual: Option<&Found>, changes: &[FieldChange]) -> Result<()> {
        if actual.is_none() || self.shared_id.is_some() {
            return Ok(());
        }
        let immutable = self.resource_type.immutable_attrs();
        let fields: Vec<&str> = changes
            .iter()
            .map(|c| c.field.as_str())
            .filter(|f| immutable.contains(f))
            .collect();
        let Some((first, rest)) = fields.split_first() else {
            return Ok(());
        };
        let mut message = format!(
            "cannot change in place: {} {first} is immutable; the object must be replaced",
            self.resource_type.terraform_type()
        );
        if !rest.is_empty() {
            message.push_str(&format!(" (also changed: {})", rest.join(", ")));
        }
        Err(Error::invalid(format!("{}.{first}", self.key), message))
    }

    async fn apply(&self, cx: &Context<'_, C>, change: &Change<'_>) -> Result<Outputs> {
        if let Some(id) = &self.shared_id {
            return Err(Error::Lifecycle {
                key: self.key.clone(),
                message: format!("shared object {id} is not managed by this cluster"),
            });
        }
        let mut attrs = BTreeMap::new();
        for (k, v) in &self.attrs {
            if matches!(v, Attr::Raw(_)) {
                continue;
            }
            if change.kind == ChangeKind::Update && !change.changed(k) {
                continue;
            }
            attrs.insert(k.to_string(), v.to_json(cx)?);
        }
        let parent = match &self.find_by {
            Some(FindBy::Parent { parent_attr, .. } | FindBy::AnyParent { parent_attr, .. }) => {
                attrs
                    .get(parent_attr)
                    .and_then(Json::as_str)
                    .map(str::to_owned)
                    .or(match self.get(parent_attr) {
                        Some(a) => a.to_json(cx)?.as_str().map(str::to_owned),
                        None => None,
                    })
            }
            _ => None,
        };
        let r = match (change.kind, change.actual) {
            (ChangeKind::Update, Some(actual)) => {
                let id = actual.outputs.get("id").unwrap_or_default().to_owned();
                let mut req = UpdateRequest::new(self.resource_type, id).with_attrs(attrs);
                if change.changed("tags") {
                    req = req.with_tags(self.cloud_tags());
                }
                cx.cloud().update(&req).await?
            }
            _ => {
                let mut req = CreateRequest::new(self.resource_type)
                    .with_attrs(attrs)
                    .with_tags(self.cloud_tags());
                if let Some(n) = &self.name {
                    req = req.with_name(n.clone());
                }
                if let Some(p) = parent {
                    req = req.with_parent(p);
                }
                cx.cloud().create(&req).await?
            }
        };
        Ok(self.outputs_of(&r))
    }

    fn render_terraform(&self, w: &mut TerraformWriter) -> Result<()> {
        if let Some(id) = &self.shared_id {
            w.link(self.key.clone(), Link::Literal(id.clone()));
            return Ok(());
        }
        if !self.render {
            return Ok(());
        }
        let mut body = Body::new();
        if let Some(n) = &self.name
            && !self.attrs.iter().any(|(k, _)| k == "name")
        {
            body = body.attr("name", n.as_str());
        }
        let attrs = self.attrs.iter().map(|(k, v)| (&**k, v));
        let render_only = self.render_only.iter().map(|(k, v)| (k.as_str(), v));
        for (k, v) in attrs.chain(render_only) {
            body = add_attr(body, k, v, w, &self.tf_type, self.terraform_name());
        }
        if let Some(t) = &self.tags
            && !t.is_empty()
        {
            body = body.attr(self.tags_attr, Expr::string_map(t.iter()));
        }
        w.resource(&self.tf_type, self.terraform_name(), body)
    }
}

#[cfg(test)]
mod tests {
    use std::fmt;
    use std::sync::Mutex;

    use super::*;
    use crate::resource::{CloudError, CloudResult, ContentDigest, NameTags};
    use crate::{Executor, ExecutorOptions, ManualClock, TaskGraph};

    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    enum Kind {
        Net,
        File,
    }

    impl fmt::Display for Kind {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.terraform_type())
        }
    }

    /// A digest that is easy to compute by hand: the content's length.
    fn length(content: &[u8]) -> String {
        format!("len{}", content.len())
    }

    impl ResourceKind for Kind {
        fn terraform_type(self) -> &'static str {
            match self {
                Kind::Net => "toy_network",
                Kind::File => "toy_file",
            }
        }
        fn is_taggable(self) -> bool {
            self == Kind::Net
        }
        fn immutable_attrs(self) -> &'static [&'static str] {
            match self {
                Kind::Net => &["cidr"],
                Kind::File => &[],
            }
        }
        fn unordered_attrs(self) -> &'static [&'static str] {
            match self {
                Kind::Net => &["zones"],
                Kind::File => &[],
            }
        }
        fn tags_attr(self) -> &'static str {
            "labels"
        }
        fn name_tags<'a>(cluster: &'a str, name: &'a str) -> NameTags<'a> {
            NameTags {
                cluster: ("cluster", cluster.into()),
                name: ("name", name.into()),
            }
        }
        fn content_digest() -> Option<ContentDigest> {
            Some(ContentDigest::new("_digest", length))
        }
    }

    /// A toy cloud: objects in a list, every request recorded.
    #[derive(Debug, Default)]
    struct Toy {
        objects: Mutex<Vec<Resource<Kind>>>,
        updates: Mutex<Vec<UpdateRequest<Kind>>>,
        fail: Mutex<Option<CloudError>>,
    }

    impl Toy {
        fn objects(&self) -> Vec<Resource<Kind>> {
            self.objects
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
        }
    }

    #[async_trait]
    impl ResourceCloud<Kind> for Toy {
        async fn list(&self, query: &ListQuery<Kind>) -> CloudResult<Vec<Resource<Kind>>> {
            if let Some(e) = self.fail.lock().unwrap_or_else(|e| e.into_inner()).take() {
                return Err(e);
            }
            Ok(self
                .objects()
                .into_iter()
                .filter(|r| query.matches(r))
                .collect())
        }
        async fn create(&self, request: &CreateRequest<Kind>) -> CloudResult<Resource<Kind>> {
            let mut objects = self.objects.lock().unwrap_or_else(|e| e.into_inner());
            let mut r = Resource::new(request.resource_type, format!("id-{}", objects.len()));
            r.tags = Tags::from(&request.tags);
            r.attrs = crate::resource::Attrs::from(&request.attrs);
            r.parent = request.parent.clone();
            r.name = request.name.clone();
            objects.push(r.clone());
            Ok(r)
        }
        async fn update(&self, request: &UpdateRequest<Kind>) -> CloudResult<Resource<Kind>> {
            self.updates
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(request.clone());
            let mut objects = self.objects.lock().unwrap_or_else(|e| e.into_inner());
            let r = objects
                .iter_mut()
                .find(|r| r.id == request.id)
                .ok_or_else(|| CloudError::not_found(request.id.clone()))?;
            r.attrs.extend(request.attrs.clone());
            if let Some(t) = &request.tags {
                r.tags = Tags::from(t);
            }
            Ok(r.clone())
        }
        async fn delete(&self, _kind: Kind, id: &str) -> CloudResult<()> {
            self.objects
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|r| r.id != id);
            Ok(())
        }
    }

    fn net(cidr: &str, dns: bool) -> ResourceTask<Kind> {
        ResourceTask::new("Network", "main", Kind::Net, "a.example.com")
            .attr("cidr", cidr)
            .attr("dns", dns)
            .tags([("name".to_owned(), "main".to_owned())].into())
    }

    fn plan_and_apply(
        tasks: Vec<ResourceTask<Kind>>,
        cloud: &Toy,
        apply: bool,
    ) -> crate::Result<crate::Plan> {
        let boxed: Vec<Box<dyn Task<Toy>>> = tasks
            .into_iter()
            .map(|t| Box::new(t) as Box<dyn Task<Toy>>)
            .collect();
        let graph = TaskGraph::build(boxed)?;
        let clock = ManualClock::new();
        let exec = Executor::new(
            ExecutorOptions::default()
                .with_clock(std::sync::Arc::new(clock.clone()))
                .with_max_attempts(2),
        );
        if apply {
            clock
                .block_on(exec.apply(&graph, cloud))
                .unwrap_or_default()
                .into_result()
        } else {
            clock
                .block_on(exec.plan(&graph, cloud))
                .unwrap_or_else(|| Err(crate::Error::invalid("plan", "did not finish")))
        }
    }

    #[test]
    fn creates_then_finds_by_the_kinds_name_filters() {
        let cloud = Toy::default();
        let plan = plan_and_apply(vec![net("10.0.0.0/16", true)], &cloud, true).unwrap();
        assert_eq!(plan.exit_code(), 2, "{plan}");
        let objects = cloud.objects();
        assert_eq!(objects.len(), 1);
        // The kind's filters want the cluster label as well as the name: an object without
        // it is not this task's, so it would be created again.
        assert_eq!(objects[0].attr_str("cidr"), Some("10.0.0.0/16"));
        let again = plan_and_apply(vec![net("10.0.0.0/16", true)], &cloud, false).unwrap();
        assert_eq!(again.summary().create, 1, "{again}");

        let cloud = Toy::default();
        let tagged = |t: ResourceTask<Kind>| {
            t.tags(
                [
                    ("name".to_owned(), "main".to_owned()),
                    ("cluster".to_owned(), "a.example.com".to_owned()),
                ]
                .into(),
            )
        };
        plan_and_apply(vec![tagged(net("10.0.0.0/16", true))], &cloud, true).unwrap();
        let again = plan_and_apply(vec![tagged(net("10.0.0.0/16", true))], &cloud, false).unwrap();
        assert_eq!(again.exit_code(), 0, "{again}");
    }

    /// A set attribute ([`ResourceKind::unordered_attrs`]) the cloud reports in
    /// another order is unchanged; other elements are a change, and so is another order
    /// of an ordinary list.
    #[test]
    fn set_attributes_compare_regardless_of_order() {
        let cloud = Toy::default();
        let with = |zones: &[&str], rules: &[&str]| {
            tagged_net("10.0.0.0/16", true)
                .attr("zones", Attr::strs(zones.iter().copied()))
                .attr("rules", Attr::strs(rules.iter().copied()))
        };
        plan_and_apply(vec![with(&["a", "b", "c"], &["x", "y"])], &cloud, true).unwrap();
        let report = |attr: &str, v: &[&str]| {
            let mut objects = cloud.objects.lock().unwrap_or_else(|e| e.into_inner());
            objects[0].attrs.insert(attr, serde_json::json!(v));
        };
        report("zones", &["c", "a", "b"]);
        let plan =
            plan_and_apply(vec![with(&["a", "b", "c"], &["x", "y"])], &cloud, false).unwrap();
        assert_eq!(plan.exit_code(), 0, "{plan}");

        report("zones", &["c", "a", "a"]);
        let plan =
            plan_and_apply(vec![with(&["a", "b", "c"], &["x", "y"])], &cloud, false).unwrap();
        assert_eq!(plan.summary().update, 1, "{plan}");

        report("zones", &["a", "b", "c"]);
        report("rules", &["y", "x"]);
        let plan =
            plan_and_apply(vec![with(&["a", "b", "c"], &["x", "y"])], &cloud, false).unwrap();
        assert_eq!(plan.summary().update, 1, "{plan}");
    }

    fn tagged_net(cidr: &str, dns: bool) -> ResourceTask<Kind> {
        net(cidr, dns).tags(
            [
                ("name".to_owned(), "main".to_owned()),
                ("cluster".to_owned(), "a.example.com".to_owned()),
            ]
            .into(),
        )
    }

    /// A cloud that holds a listing answers a find by name tag at once, as `find` does.
    #[test]
    fn a_find_answered_at_once_from_a_listing_is_the_find() {
        /// The toy cloud's objects as one listing it holds.
        #[derive(Debug)]
        struct Listed(crate::resource::ResourceIndex<Kind>, Toy);
        #[async_trait]
        impl ResourceCloud<Kind> for Listed {
            async fn list(&self, query: &ListQuery<Kind>) -> CloudResult<Vec<Resource<Kind>>> {
                Ok(self.0.answer(query))
            }
            fn first_tagged_now(
                &self,
                kind: Kind,
                tags: &[(&str, &str)],
            ) -> Option<CloudResult<Option<std::sync::Arc<Resource<Kind>>>>> {
                Some(Ok(self.0.first_tagged(kind, tags).cloned()))
            }
            async fn create(&self, r: &CreateRequest<Kind>) -> CloudResult<Resource<Kind>> {
                self.1.create(r).await
            }
            async fn update(&self, r: &UpdateRequest<Kind>) -> CloudResult<Resource<Kind>> {
                self.1.update(r).await
            }
            async fn delete(&self, kind: Kind, id: &str) -> CloudResult<()> {
                self.1.delete(kind, id).await
            }
        }
        let toy = Toy::default();
        plan_and_apply(vec![tagged_net("10.0.0.0/16", true)], &toy, true).unwrap();
        let listed = Listed(crate::resource::ResourceIndex::new(toy.objects()), toy);
        let results = crate::Results::new();
        let clock = ManualClock::new();
        for task in [
            tagged_net("10.0.0.0/16", true),
            tagged_net("10.0.0.0/16", false),
            tagged_net("10.1.0.0/16", true),
            net("10.0.0.0/16", true),
        ] {
            let cx = crate::Context::new(&listed, &task.key, &results, &clock);
            let now = Task::<Listed>::find_now(&task, &cx).expect("answered at once");
            let found = clock.block_on(Task::<Listed>::find(&task, &cx)).unwrap();
            assert_eq!(now.unwrap(), found.unwrap(), "{task:?}");
            // The toy cloud holds no listing: only `find` tells.
            let cx = crate::Context::new(&listed.1, &task.key, &results, &clock);
            assert!(Task::<Toy>::find_now(&task, &cx).is_none());
        }
        // A plan through the listing sees the object unchanged, and a change as a change.
        let plan = plan_and_apply(vec![tagged_net("10.0.0.0/16", true)], &listed.1, false);
        assert_eq!(plan.unwrap().exit_code(), 0);
        let boxed: Vec<Box<dyn Task<Listed>>> = vec![Box::new(tagged_net("10.0.0.0/16", false))];
        let graph = TaskGraph::build(boxed).unwrap();
        let exec = Executor::new(
            ExecutorOptions::default().with_clock(std::sync::Arc::new(clock.clone())),
        );
        let plan = clock.block_on(exec.plan(&graph, &listed)).unwrap().unwrap();
        assert_eq!(plan.summary().update, 1, "{plan}");
    }

    #[test]
    fn updates_send_only_the_changed_attributes() {
        let cloud = Toy::default();
        plan_and_apply(vec![tagged_net("10.0.0.0/16", true)], &cloud, true).unwrap();
        let plan = plan_and_apply(vec![tagged_net("10.0.0.0/16", false)], &cloud, true).unwrap();
        assert_eq!(plan.summary().update, 1, "{plan}");
        let updates = cloud
            .updates
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        assert_eq!(updates.len(), 1);
        assert_eq!(
            updates[0].attrs.keys().collect::<Vec<_>>(),
            ["dns"],
            "{updates:?}"
        );
        assert!(updates[0].tags.is_none(), "tags did not change");
        let again = plan_and_apply(vec![tagged_net("10.0.0.0/16", false)], &cloud, false).unwrap();
        assert_eq!(again.exit_code(), 0, "{again}");
    }

    #[test]
    fn a_dry_run_refuses_an_immutable_change_naming_the_field() {
        let cloud = Toy::default();
        plan_and_apply(vec![tagged_net("10.0.0.0/16", true)], &cloud, true).unwrap();
        let err = plan_and_apply(vec![tagged_net("10.1.0.0/16", true)], &cloud, false).unwrap_err();
        let shown = err.to_string();
        assert!(shown.contains("Network/main.cidr"), "{shown}");
        assert!(shown.contains("cannot change in place"), "{shown}");
        assert!(shown.contains("toy_network"), "{shown}");
        // Applying refuses it as well, before any call.
        assert!(plan_and_apply(vec![tagged_net("10.1.0.0/16", true)], &cloud, true).is_err());
        assert!(
            cloud
                .updates
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_empty()
        );
        assert_eq!(cloud.objects()[0].attr_str("cidr"), Some("10.0.0.0/16"));
    }

    #[test]
    fn check_changes_accepts_creates_and_mutable_changes() {
        let t = tagged_net("10.0.0.0/16", true);
        let change = |field: &str| FieldChange {
            field: field.to_owned(),
            old: None,
            new: Value::Bool(true),
            diff: None,
        };
        let found = Found::default();
        let check = |actual, changes: &[FieldChange]| {
            <ResourceTask<Kind> as Task<Toy>>::check_changes(&t, actual, changes)
        };
        assert!(check(None, &[change("cidr")]).is_ok(), "a create");
        assert!(check(Some(&found), &[change("dns")]).is_ok());
        let err = check(Some(&found), &[change("dns"), change("cidr")]).unwrap_err();
        assert!(
            matches!(&err, Error::Invalid { field, .. } if field == "Network/main.cidr"),
            "{err}"
        );
    }

    #[test]
    fn text_reported_by_digest_compares_by_content() {
        let cloud = Toy::default();
        let file = |content: &str| {
            ResourceTask::new("File", "f", Kind::File, "a.example.com")
                .attr("bucket", "b")
                .attr("content", Attr::File(content.to_owned()))
                .find_by(FindBy::Parent {
                    parent_attr: "bucket".into(),
                    match_attrs: vec!["bucket".into()],
                })
        };
        // The cloud holds the object with the content's digest only.
        cloud
            .objects
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(
                Resource::new(Kind::File, "b/f")
                    .with_parent("b")
                    .with_attr("bucket", "b")
                    .with_attr("content_digest", length(b"hello")),
            );
        let same = plan_and_apply(vec![file("hello")], &cloud, false).unwrap();
        assert_eq!(same.exit_code(), 0, "{same}");
        let other = plan_and_apply(vec![file("hello, world")], &cloud, false).unwrap();
        assert_eq!(other.summary().update, 1, "{other}");
    }

    #[test]
    fn cloud_errors_are_wrapped_and_retryable_ones_retried() {
        let cloud = Toy::default();
        *cloud.fail.lock().unwrap_or_else(|e| e.into_inner()) =
            Some(CloudError::throttled("toy:List"));
        // One throttled call, then the retry succeeds.
        let plan = plan_and_apply(vec![tagged_net("10.0.0.0/16", true)], &cloud, false).unwrap();
        assert_eq!(plan.summary().create, 1, "{plan}");
        *cloud.fail.lock().unwrap_or_else(|e| e.into_inner()) =
            Some(CloudError::PermissionDenied {
                operation: "toy:List".into(),
                source: None,
            });
        let err = plan_and_apply(vec![tagged_net("10.0.0.0/16", true)], &cloud, false).unwrap_err();
        assert!(
            err.to_string().contains("toy:List: permission denied"),
            "{err}"
        );
        let e: Error = CloudError::throttled("x").into();
        assert!(e.is_retryable());
    }

    /// Comparing in place finds exactly what the executor's diff finds between the task's
    /// fields and the object's (field names, order, old and new values), whatever the
    /// pair of values: plain ones, references, text, lists, maps, blocks, typed values
    /// Terraform writes as strings, missing and null attributes, names and tags.
    #[test]
    fn comparing_in_place_finds_what_the_diff_finds() {
        use serde_json::json;
        let parent = TaskKey::new("Network", "p");
        let unknown = TaskKey::new("Network", "q");
        let resolver: std::collections::HashMap<TaskKey, Outputs> =
            [(parent.clone(), Outputs::id("id-p"))].into();
        let expected = [
            Attr::s("a"),
            Attr::s("3"),
            Attr::s("true"),
            Attr::Int(3),
            Attr::Bool(true),
            Attr::id(&parent),
            Attr::id(&unknown),
            Attr::File("x\ny\n".into()),
            Attr::FileAs("policy", "x\ny\n".into()),
            Attr::strs(["a", "b"]),
            Attr::Map([("k".to_owned(), Attr::s("v"))].into()),
            Attr::Block(vec![("k".to_owned(), Attr::s("v"))]),
            Attr::RenderedAs {
                value: Box::new(Attr::s("a")),
                terraform: Box::new(Attr::Raw("x".into())),
            },
            Attr::Raw("x".into()),
        ];
        let actual = [
            None,
            Some(json!("a")),
            Some(json!("b")),
            Some(json!("3")),
            Some(json!(3)),
            Some(json!(4)),
            Some(json!(true)),
            Some(json!(false)),
            Some(json!("id-p")),
            Some(json!("id-q")),
            Some(json!("x\ny\n")),
            Some(json!("x\nz\n")),
            Some(json!(["a", "b"])),
            Some(json!(["b", "a"])),
            Some(json!({"k": "v"})),
            Some(json!({"k": "w"})),
            Some(json!([{"k": "v"}])),
            Some(json!(null)),
            Some(json!(1.5)),
        ];
        let tags =
            |v: &str| -> BTreeMap<String, String> { [("name".to_owned(), v.to_owned())].into() };
        let mut compared = 0;
        for e in &expected {
            for a in &actual {
                for (named, object_name) in [(false, None), (true, Some("n")), (true, Some("m"))] {
                    for object_tags in ["main", "other"] {
                        let mut t = ResourceTask::new("Network", "main", Kind::Net, "c")
                            .attr("f", e.clone())
                            .attr("g", 1i64)
                            .tags(tags("main"));
                        if named {
                            t = t.named("n");
                        }
                        let mut r = Resource::new(Kind::Net, "id-1").with_attr("g", 1);
                        if let Some(a) = a {
                            r.attrs.insert("f", a.clone());
                        }
                        r.name = object_name.map(str::to_owned);
                        r.tags = tags(object_tags).into();
                        let fields = <ResourceTask<Kind> as Task<Toy>>::fields(&t);
                        let want =
                            crate::diff::diff_fields(&fields, Some(&t.found_fields(&r)), &resolver);
                        let got = t.compare(&r, &resolver);
                        assert_eq!(
                            got, want,
                            "expected {e:?}, actual {a:?}, name {object_name:?}"
                        );
                        compared += 1;
                    }
                }
            }
        }
        assert_eq!(compared, expected.len() * actual.len() * 6);

        // Text the cloud reports by its digest.
        let file = |content: &str| {
            ResourceTask::new("File", "f", Kind::File, "c")
                .attr("content", Attr::File(content.into()))
        };
        for (content, digest) in [("hello", "len5"), ("hello", "LEN5"), ("hello", "len6")] {
            let t = file(content);
            let r = Resource::new(Kind::File, "b/f").with_attr("content_digest", digest);
            let fields = <ResourceTask<Kind> as Task<Toy>>::fields(&t);
            let want = crate::diff::diff_fields(&fields, Some(&t.found_fields(&r)), &resolver);
            assert_eq!(t.compare(&r, &resolver), want, "{digest}");
        }
    }

    /// The references a task lists without building its fields are the ones its fields
    /// hold, however deeply nested.
    #[test]
    fn listed_references_are_the_fields_references() {
        let key = |n: &str| TaskKey::new("Network", n);
        let t = ResourceTask::new("Rule", "r", Kind::Net, "c")
            .attr("a", Attr::id(&key("a")))
            .attr(
                "b",
                Attr::List(vec![Attr::s("x"), Attr::out(&key("b"), "arn")]),
            )
            .attr(
                "c",
                Attr::Map([("k".to_owned(), Attr::id(&key("c")))].into()),
            )
            .attr(
                "d",
                Attr::Block(vec![("k".to_owned(), Attr::id(&key("d")))]),
            )
            .attr(
                "e",
                Attr::Blocks(vec![vec![("k".to_owned(), Attr::id(&key("e")))]]),
            )
            .attr(
                "f",
                Attr::RenderedAs {
                    value: Box::new(Attr::id(&key("f"))),
                    terraform: Box::new(Attr::Raw("x".into())),
                },
            )
            .render_attr("g", Attr::id(&key("g")))
            .tags([("name".to_owned(), "r".to_owned())].into());
        let mut listed = Vec::new();
        assert!(<ResourceTask<Kind> as Task<Toy>>::for_each_ref(
            &t,
            &mut |r| {
                listed.push(r.clone());
            }
        ));
        let mut held = Vec::new();
        <ResourceTask<Kind> as Task<Toy>>::fields(&t).for_each_ref(&mut |r| held.push(r.clone()));
        listed.sort_by(|a, b| a.key.cmp(&b.key));
        held.sort_by(|a, b| a.key.cmp(&b.key));
        assert_eq!(listed, held);
        assert_eq!(listed.len(), 6, "{listed:?}");
    }

    /// A task whose attributes are named as its name or tags fields is diffed by the
    /// executor, through the object's fields.
    #[test]
    fn attributes_named_as_the_name_or_tags_field_are_diffed_through_fields() {
        let cloud = Toy::default();
        let task = |name_attr: &str| {
            tagged_net("10.0.0.0/16", true)
                .named("main")
                .attr("name", name_attr)
        };
        assert!(task("x").shadows_fields());
        assert!(!tagged_net("10.0.0.0/16", true).shadows_fields());
        plan_and_apply(vec![task("main")], &cloud, true).unwrap();
        let again = plan_and_apply(vec![task("main")], &cloud, false).unwrap();
        assert_eq!(again.exit_code(), 0, "{again}");
        let changed = plan_and_apply(vec![task("other")], &cloud, false).unwrap();
        assert_eq!(changed.summary().update, 1, "{changed}");
    }

    #[test]
    fn renders_with_the_kinds_terraform_type_and_tags_attribute() {
        let t = tagged_net("10.0.0.0/16", true);
        let mut w = crate::terraform::TerraformWriter::new();
        <ResourceTask<Kind> as Task<Toy>>::render_terraform(&t, &mut w).unwrap();
        let out = w.finish().unwrap();
        let main = out.main_tf();
        assert!(main.contains("resource \"toy_network\" \"main\""), "{main}");
        assert!(main.contains("labels = {"), "{main}");
    }
}
