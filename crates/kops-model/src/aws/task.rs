//! [`AwsTask`]: one AWS object described as Terraform-named attributes and tags, which
//! renders itself for the Terraform target and finds/creates/updates itself through
//! [`AwsCloud`].
//!
//! Every AWS task kind (VPC, Subnet, SecurityGroupRule, LaunchTemplate, ...) is an
//! `AwsTask` with its kind in the [`TaskKey`] and its [`ResourceType`]; the builders in
//! [`crate::aws::builders`] decide names, attributes and tags.

use std::collections::BTreeMap;

use kops_tasks::terraform::{Body, Expr, Link, TerraformWriter};
use kops_tasks::{
    Change, ChangeKind, Context, Error, Fields, Found, Lifecycle, Outputs, Result, Task, TaskKey,
    TaskRef, Value, async_trait,
};
use serde_json::Value as Json;

use super::cloud::{
    AwsCloud, CreateRequest, ListQuery, Resource, ResourceType, TagFilter, UpdateRequest,
};

/// One attribute value of an [`AwsTask`].
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
            Attr::Str(s) => Value::String(s.clone()),
            Attr::Int(i) => Value::Int(*i),
            Attr::Bool(b) => Value::Bool(*b),
            Attr::List(v) => Value::List(v.iter().map(Attr::to_value).collect()),
            Attr::Map(m) => Value::Map(m.iter().map(|(k, v)| (k.clone(), v.to_value())).collect()),
            Attr::Ref(r) => Value::Ref(r.clone()),
            Attr::Block(b) => Value::Object(block_fields(b)),
            Attr::Blocks(bs) => {
                Value::List(bs.iter().map(|b| Value::Object(block_fields(b))).collect())
            }
            Attr::File(t) | Attr::FileAs(_, t) | Attr::FileBase64(t) => Value::Text(t.clone()),
            Attr::Raw(_) => Value::Null,
        }
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
            Attr::Raw(r) => Expr::Raw(r.clone()),
            Attr::Block(_) | Attr::Blocks(_) => Expr::Null,
        }
    }

    /// The value sent to the cloud, references resolved.
    fn to_json(&self, cx: &Context<'_, dyn AwsCloud>) -> Result<Json> {
        Ok(match self {
            Attr::Str(s) | Attr::File(s) | Attr::FileAs(_, s) | Attr::FileBase64(s) => {
                Json::String(s.clone())
            }
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
        f.insert(k.clone(), v.to_value());
    }
    f
}

fn block_json(b: &[(String, Attr)], cx: &Context<'_, dyn AwsCloud>) -> Result<Json> {
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
    /// By the `Name` tag plus the cluster tag (VPC networking objects, volumes).
    NameTag(String),
    /// Under a parent (given by one of the task's attributes), matching the listed
    /// attributes (routes, associations, rules, hooks, targets, objects).
    Parent {
        /// The attribute holding the parent's ID.
        parent_attr: String,
        /// Attributes that identify the object under the parent.
        match_attrs: Vec<String>,
    },
}

/// One AWS object the model manages.
#[derive(Clone, Debug)]
pub struct AwsTask {
    key: TaskKey,
    resource_type: ResourceType,
    tf_type: String,
    tf_name: String,
    name: Option<String>,
    attrs: Vec<(String, Attr)>,
    tags: Option<BTreeMap<String, String>>,
    tags_attr: &'static str,
    cluster: String,
    find_by: FindBy,
    shared_id: Option<String>,
    lifecycle: Lifecycle,
    deps: Vec<TaskKey>,
    render: bool,
    render_only: Vec<(String, Attr)>,
}

impl AwsTask {
    /// A task of `kind` named `name` managing a `resource_type` object. It renders as
    /// `resource "<terraform type>" "<name>"` and is found by its `Name` tag unless set
    /// otherwise.
    pub fn new(
        kind: &str,
        name: impl Into<String>,
        resource_type: ResourceType,
        cluster: impl Into<String>,
    ) -> Self {
        let name = name.into();
        AwsTask {
            key: TaskKey::new(kind, &name),
            resource_type,
            tf_type: resource_type.terraform_type().to_owned(),
            tf_name: name.clone(),
            name: None,
            attrs: Vec::new(),
            tags: None,
            tags_attr: "tags",
            cluster: cluster.into(),
            find_by: FindBy::NameTag(name),
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
    pub fn resource_type(&self) -> ResourceType {
        self.resource_type
    }

    /// The object's cloud name ([`Resource::name`]), when the type has one.
    pub fn cloud_name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The tags the object should carry, when the task sets them.
    pub fn expected_tags(&self) -> Option<&BTreeMap<String, String>> {
        self.tags.as_ref()
    }

    /// Sets an attribute (replacing an earlier one with the same name).
    pub fn attr(mut self, name: &str, value: impl Into<Attr>) -> Self {
        self.set(name, value);
        self
    }

    /// Sets an attribute in place.
    pub fn set(&mut self, name: &str, value: impl Into<Attr>) {
        let value = value.into();
        if let Some(slot) = self.attrs.iter_mut().find(|(k, _)| k == name) {
            slot.1 = value;
        } else {
            self.attrs.push((name.to_owned(), value));
        }
    }

    /// Sets an attribute when `value` is `Some`.
    pub fn attr_opt(self, name: &str, value: Option<impl Into<Attr>>) -> Self {
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
        self.tags = Some(tags);
        self
    }

    /// Sets the object's cloud name ([`Resource::name`]) and finds it by that name.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        self.find_by = FindBy::Name(name.clone());
        self.name = Some(name);
        self
    }

    /// Sets the Terraform resource name (default: the task name).
    pub fn tf_name(mut self, name: impl Into<String>) -> Self {
        self.tf_name = name.into();
        self
    }

    /// Sets the Terraform resource type (default: the resource type's).
    pub fn tf_type(mut self, t: &str) -> Self {
        self.tf_type = t.to_owned();
        self
    }

    /// Sets how the object is found.
    pub fn find_by(mut self, f: FindBy) -> Self {
        self.find_by = f;
        self
    }

    /// Marks the object as existing and not managed here (a shared VPC or subnet):
    /// references to it render as the literal `id`, and nothing is rendered.
    pub fn shared(mut self, id: impl Into<String>) -> Self {
        let id = id.into();
        self.find_by = FindBy::Id(id.clone());
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

    fn cloud_tags(&self) -> BTreeMap<String, String> {
        self.tags.clone().unwrap_or_default()
    }

    async fn candidates(&self, cx: &Context<'_, dyn AwsCloud>) -> Result<Vec<Resource>> {
        let cloud = cx.cloud();
        let rt = self.resource_type;
        match &self.find_by {
            FindBy::Id(id) => cloud.list(&ListQuery::new(rt).with_ids([id.clone()])).await,
            FindBy::Name(n) => {
                cloud
                    .list(&ListQuery::new(rt).with_names([n.clone()]))
                    .await
            }
            FindBy::NameTag(n) => {
                cloud
                    .list(
                        &ListQuery::new(rt)
                            .with_tag(TagFilter::equals("KubernetesCluster", self.cluster.clone()))
                            .with_tag(TagFilter::equals("Name", n.clone())),
                    )
                    .await
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
                    .collect())
            }
        }
    }

    fn outputs_of(&self, r: &Resource) -> Outputs {
        let mut o = Outputs::id(r.id.clone());
        if let Some(a) = &r.arn {
            o.insert("arn", a.clone());
        }
        if let Some(n) = r.name.clone().or_else(|| self.name.clone()) {
            o.insert("name", n);
        }
        for (k, v) in &r.attrs {
            if let Json::String(s) = v {
                o.insert(k.clone(), s.clone());
            }
        }
        o
    }
}

fn json_to_value(j: &Json) -> Value {
    match j {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => n.as_i64().map_or(Value::Null, Value::Int),
        Json::String(s) => Value::String(s.clone()),
        Json::Array(v) => Value::List(v.iter().map(json_to_value).collect()),
        Json::Object(m) => {
            let mut f = Fields::new();
            for (k, v) in m {
                f.insert(k.clone(), json_to_value(v));
            }
            Value::Object(f)
        }
    }
}

/// The actual value of a text attribute the cloud reported only as the hex MD5 of its
/// content (see [`AwsCloud::list_digests`]): the expected value when the digests match,
/// otherwise a placeholder naming the digest (which differs from anything expected).
fn content_by_digest(expected: &Value, digest: &str) -> Value {
    use md5::{Digest as _, Md5};
    let text = match expected {
        Value::Text(t) | Value::String(t) => t.as_str(),
        _ => return Value::String(format!("<content with MD5 {digest}>")),
    };
    let want: String = Md5::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if want.eq_ignore_ascii_case(digest) {
        expected.clone()
    } else {
        Value::String(format!("<content with MD5 {digest}>"))
    }
}

/// Aligns the actual value's shape with the expected one (maps vs objects, text vs
/// string) so the diff compares content, not representation.
fn align(expected: &Value, actual: Value) -> Value {
    match (expected, actual) {
        (Value::Text(_), Value::String(s)) => Value::Text(s),
        // Terraform writes some numbers and flags as strings (`deregistration_delay =
        // "30"`); APIs answer with the typed value.
        (Value::String(_), Value::Bool(b)) => Value::String(b.to_string()),
        (Value::String(_), Value::Int(i)) => Value::String(i.to_string()),
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
impl Task<dyn AwsCloud> for AwsTask {
    fn key(&self) -> &TaskKey {
        &self.key
    }

    fn fields(&self) -> Fields {
        let mut f = Fields::with_capacity(self.attrs.len() + 2);
        if let Some(n) = &self.name {
            f.insert("name", Value::String(n.clone()));
        }
        for (k, v) in &self.attrs {
            f.insert(k.clone(), v.to_value());
        }
        if self.resource_type.is_taggable()
            && let Some(t) = &self.tags
        {
            f.insert("tags", Value::string_map(t.clone()));
        }
        f
    }

    fn dependencies(&self) -> Vec<TaskKey> {
        self.deps.clone()
    }

    fn lifecycle(&self) -> Lifecycle {
        self.lifecycle
    }

    async fn find(&self, cx: &Context<'_, dyn AwsCloud>) -> Result<Option<Found>> {
        let found = self.candidates(cx).await?;
        let Some(r) = found.into_iter().next() else {
            return Ok(None);
        };
        let mut fields = Fields::new();
        if self.name.is_some() {
            fields.insert("name", r.name.clone().map_or(Value::Null, Value::String));
        }
        for (k, v) in &self.attrs {
            let expected = v.to_value();
            let actual = match (r.attrs.get(k), r.attr_str(&format!("{k}_md5"))) {
                (None, Some(digest)) => content_by_digest(&expected, digest),
                (a, _) => a.map_or(Value::Null, json_to_value),
            };
            fields.insert(k.clone(), align(&expected, actual));
        }
        if self.resource_type.is_taggable() && self.tags.is_some() {
            fields.insert("tags", Value::string_map(r.tags.clone()));
        }
        Ok(Some(Found::new(fields, self.outputs_of(&r))))
    }

    async fn apply(&self, cx: &Context<'_, dyn AwsCloud>, change: &Change<'_>) -> Result<Outputs> {
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
            attrs.insert(k.clone(), v.to_json(cx)?);
        }
        let parent = match &self.find_by {
            FindBy::Parent { parent_attr, .. } => attrs
                .get(parent_attr)
                .and_then(Json::as_str)
                .map(str::to_owned)
                .or(match self.get(parent_attr) {
                    Some(a) => a.to_json(cx)?.as_str().map(str::to_owned),
                    None => None,
                }),
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
        for (k, v) in self.attrs.iter().chain(&self.render_only) {
            body = add_attr(body, k, v, w, &self.tf_type, &self.tf_name);
        }
        if let Some(t) = &self.tags
            && !t.is_empty()
        {
            body = body.attr(self.tags_attr, Expr::string_map(t.clone()));
        }
        w.resource(&self.tf_type, &self.tf_name, body)
    }
}
