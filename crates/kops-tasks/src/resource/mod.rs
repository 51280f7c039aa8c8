//! The cloud-neutral resource layer both clouds stand on: a cloud's resource types
//! ([`ResourceKind`]), the plain data a cloud exchanges about them ([`Resource`],
//! [`ListQuery`], [`CreateRequest`], [`UpdateRequest`], [`TagFilter`]), the generic cloud
//! trait over them ([`ResourceCloud`]) with its error ([`CloudError`]), and the one task
//! type that manages any such object ([`ResourceTask`]).
//!
//! A cloud crate defines its resource-type enum, implements [`ResourceKind`] for it (the
//! facts the task needs: Terraform type, tags or labels, immutable attributes, how an
//! object is found by name within a cluster) and a cloud trait that extends
//! [`ResourceCloud`] with what only that cloud has (AWS: account, zones, images, hosted
//! zones). Its model builds [`ResourceTask`]s; the task finds, diffs, creates and updates
//! through [`ResourceCloud`] and renders itself for Terraform.
//!
//! Attribute names are the Terraform attribute names of the cloud's resources, so the same
//! names drive the Terraform renderer, the diff and the cloud calls. References between
//! objects are plain IDs in attributes (`vpc_id = "vpc-1"`).
//!
//! # Tags and labels
//!
//! Objects carry string key/value pairs: AWS calls them tags, GCE labels. A [`TagFilter`]
//! selects by them (a key, optionally one of some values), whatever the cloud calls them;
//! how a backend turns filters into API calls (EC2's `tag:Key` filters, GCE's `labels.key`
//! expressions) is its own business. Which pairs mark an object as a cluster's is the
//! kind's policy ([`ResourceKind::name_tags`]).

mod attrs;
mod error;
mod index;
mod tags;
mod task;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

pub use attrs::{Attrs, AttrsIter};
pub use error::{CloudError, CloudResult};
pub use index::ResourceIndex;
pub use tags::{Tags, TagsIter};
pub use task::{Attr, FindBy, ResourceTask};

/// A cloud's resource-type enum: the facts about each type the generic task needs.
///
/// Implemented by each cloud crate for its own enum (`kops_cloud_aws::ResourceType`),
/// usually by reading its one table of per-type facts.
pub trait ResourceKind:
    Copy + Eq + Ord + Hash + fmt::Debug + fmt::Display + Send + Sync + 'static
{
    /// The Terraform resource type (`aws_vpc`, `google_compute_network`).
    fn terraform_type(self) -> &'static str;

    /// Whether objects of this type carry tags (labels).
    fn is_taggable(self) -> bool;

    /// Attributes that cannot change once the object exists: a change means replacing
    /// the object, which the task refuses to plan ([`ResourceTask`]'s `check_changes`).
    fn immutable_attrs(self) -> &'static [&'static str];

    /// Attributes whose list is a set (a Terraform `set`): the cloud may report its
    /// elements in any order, so the task compares them regardless of order.
    fn unordered_attrs(self) -> &'static [&'static str] {
        &[]
    }

    /// The Terraform attribute holding the object's tags (`tags`, GCE's `labels`).
    fn tags_attr(self) -> &'static str {
        "tags"
    }

    /// The tags that find the object a task calls `name` among cluster `cluster`'s
    /// objects of a type without a cloud name of its own ([`FindBy::NameTag`]): the object
    /// carries both pairs. AWS: `KubernetesCluster=<cluster>` and `Name=<name>`.
    fn name_tags<'a>(cluster: &'a str, name: &'a str) -> NameTags<'a>;

    /// [`ResourceKind::name_tags`] as the filters of a [`ListQuery`].
    fn name_filters(cluster: &str, name: &str) -> Vec<TagFilter> {
        Self::name_tags(cluster, name)
            .pairs()
            .into_iter()
            .map(|(k, v)| TagFilter::equals(k, v))
            .collect()
    }

    /// How backends of this cloud may report a long text attribute by a digest of its
    /// content instead of the content (see [`ResourceCloud::list_digests`]); `None`, the
    /// default, when they always return the content.
    fn content_digest() -> Option<ContentDigest> {
        None
    }
}

/// How a backend reports a text attribute `a` by digest: as attribute `a` + `suffix`
/// (`content_md5`) holding `digest(content)`, lowercase hex.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct ContentDigest {
    /// Appended to the attribute name (`_md5`).
    pub suffix: &'static str,
    /// The digest of some content, as the backend reports it.
    pub digest: fn(&[u8]) -> String,
}

impl ContentDigest {
    /// Digests reported as `<attr><suffix>`, computed by `digest`.
    pub fn new(suffix: &'static str, digest: fn(&[u8]) -> String) -> Self {
        ContentDigest { suffix, digest }
    }
}

/// One cloud object, as plain data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Resource<K> {
    /// Its type.
    pub resource_type: K,
    /// The cloud ID (`vpc-1`, an ARN, a name, a self-link, ... as the type defines it).
    pub id: String,
    /// The name where the type has one apart from its tags (security group name, IAM role
    /// name, a GCE object's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The ARN, where the type has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arn: Option<String>,
    /// The parent the object lives under (route table of a route, group of a rule, zone of
    /// a record, bucket of an object), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Tags (labels).
    #[serde(default)]
    pub tags: Tags,
    /// Attributes by Terraform attribute name; references are plain IDs.
    #[serde(default)]
    pub attrs: Attrs,
}

impl<K> Resource<K> {
    /// A resource of `resource_type` with this ID.
    pub fn new(resource_type: K, id: impl Into<String>) -> Self {
        Resource {
            resource_type,
            id: id.into(),
            name: None,
            arn: None,
            parent: None,
            tags: Tags::new(),
            attrs: Attrs::new(),
        }
    }

    /// Sets the name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets the ARN.
    pub fn with_arn(mut self, arn: impl Into<String>) -> Self {
        self.arn = Some(arn.into());
        self
    }

    /// Sets the parent.
    pub fn with_parent(mut self, parent: impl Into<String>) -> Self {
        self.parent = Some(parent.into());
        self
    }

    /// Adds a tag.
    pub fn with_tag(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.tags.insert(key.into(), value.into());
        self
    }

    /// Sets an attribute.
    pub fn with_attr(mut self, name: impl Into<String>, value: impl Into<Json>) -> Self {
        self.attrs.insert(name.into(), value.into());
        self
    }

    /// A string attribute.
    pub fn attr_str(&self, name: &str) -> Option<&str> {
        self.attrs.get(name).and_then(Json::as_str)
    }

    /// The `Name` tag.
    pub fn name_tag(&self) -> Option<&str> {
        self.tags.get("Name")
    }
}

/// A filter on tags (labels): the object has `key` and, when `values` is not empty, its
/// value is one of `values`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TagFilter {
    /// Tag (label) key.
    pub key: String,
    /// Accepted values; empty means any value.
    #[serde(default)]
    pub values: Vec<String>,
}

impl TagFilter {
    /// Objects with tag `key` equal to `value`.
    pub fn equals(key: impl Into<String>, value: impl Into<String>) -> Self {
        TagFilter {
            key: key.into(),
            values: vec![value.into()],
        }
    }

    /// Objects that carry tag `key` with any value.
    pub fn exists(key: impl Into<String>) -> Self {
        TagFilter {
            key: key.into(),
            values: Vec::new(),
        }
    }

    /// Whether `tags` pass this filter.
    pub fn matches(&self, tags: &Tags) -> bool {
        match tags.get(&self.key) {
            None => false,
            Some(v) => self.values.is_empty() || self.values.iter().any(|x| x == v),
        }
    }
}

/// The two tags (labels) that find a cluster's object by name
/// ([`ResourceKind::name_tags`]): the one naming the cluster and the one naming the
/// object, each a key and a value.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NameTags<'a> {
    /// The tag naming the cluster.
    pub cluster: (&'static str, Cow<'a, str>),
    /// The tag naming the object.
    pub name: (&'static str, Cow<'a, str>),
}

impl<'a> NameTags<'a> {
    /// The tag `cluster` naming the cluster and the tag `name` naming the object.
    pub fn new(cluster: (&'static str, Cow<'a, str>), name: (&'static str, Cow<'a, str>)) -> Self {
        NameTags { cluster, name }
    }

    /// Both pairs, the cluster's first and the object's name last: a lookup by tag pairs
    /// ([`ResourceIndex::tagged`]) tries the last pair first.
    pub fn pairs(&self) -> [(&str, &str); 2] {
        [
            (self.cluster.0, self.cluster.1.as_ref()),
            (self.name.0, self.name.1.as_ref()),
        ]
    }
}

/// A batched lookup of one resource type. Every criterion that is set must hold (AND);
/// within `ids`, `names` and a filter's values any may match (OR). A query with no
/// criterion lists every object of the type the cloud holds in scope (backends may refuse
/// that for large types with [`CloudError::Invalid`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ListQuery<K> {
    /// The type to list.
    pub resource_type: K,
    /// Only these IDs (an ID that does not exist is simply absent from the answer).
    #[serde(default)]
    pub ids: Vec<String>,
    /// Only objects with one of these names ([`Resource::name`]).
    #[serde(default)]
    pub names: Vec<String>,
    /// Only objects under this parent ([`Resource::parent`]).
    #[serde(default)]
    pub parent: Option<String>,
    /// Only objects whose tags pass every filter.
    #[serde(default)]
    pub tags: Vec<TagFilter>,
}

impl<K> ListQuery<K> {
    /// Every object of a type (narrow it with the `with_*` setters).
    pub fn new(resource_type: K) -> Self {
        ListQuery {
            resource_type,
            ids: Vec::new(),
            names: Vec::new(),
            parent: None,
            tags: Vec::new(),
        }
    }

    /// Only these IDs.
    pub fn with_ids<S: Into<String>>(mut self, ids: impl IntoIterator<Item = S>) -> Self {
        self.ids = ids.into_iter().map(Into::into).collect();
        self
    }

    /// Only these names.
    pub fn with_names<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.names = names.into_iter().map(Into::into).collect();
        self
    }

    /// Only objects under `parent`.
    pub fn with_parent(mut self, parent: impl Into<String>) -> Self {
        self.parent = Some(parent.into());
        self
    }

    /// Adds a tag filter.
    pub fn with_tag(mut self, filter: TagFilter) -> Self {
        self.tags.push(filter);
        self
    }
}

impl<K: PartialEq> ListQuery<K> {
    /// Whether `r` satisfies the query (what a backend filtering client-side applies).
    pub fn matches(&self, r: &Resource<K>) -> bool {
        r.resource_type == self.resource_type
            && (self.ids.is_empty() || self.ids.contains(&r.id))
            && (self.names.is_empty() || r.name.as_ref().is_some_and(|n| self.names.contains(n)))
            && self
                .parent
                .as_ref()
                .is_none_or(|p| r.parent.as_ref() == Some(p))
            && self.tags.iter().all(|f| f.matches(&r.tags))
    }
}

/// A request to create one object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CreateRequest<K> {
    /// The type.
    pub resource_type: K,
    /// The name, for types that have one ([`Resource::name`]).
    #[serde(default)]
    pub name: Option<String>,
    /// The parent, for types that live under one.
    #[serde(default)]
    pub parent: Option<String>,
    /// Tags to create the object with (ignored for types without tags).
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Attributes (Terraform names), references as actual IDs.
    #[serde(default)]
    pub attrs: BTreeMap<String, Json>,
}

impl<K> CreateRequest<K> {
    /// A request to create an object of `resource_type`.
    pub fn new(resource_type: K) -> Self {
        CreateRequest {
            resource_type,
            name: None,
            parent: None,
            tags: BTreeMap::new(),
            attrs: BTreeMap::new(),
        }
    }

    /// Sets the name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets the parent.
    pub fn with_parent(mut self, parent: impl Into<String>) -> Self {
        self.parent = Some(parent.into());
        self
    }

    /// Sets the tags.
    pub fn with_tags(mut self, tags: BTreeMap<String, String>) -> Self {
        self.tags = tags;
        self
    }

    /// Sets the attributes.
    pub fn with_attrs(mut self, attrs: BTreeMap<String, Json>) -> Self {
        self.attrs = attrs;
        self
    }
}

/// A request to change an existing object: only the attributes given change; `tags`, when
/// set, replace the object's tags (backends add/remove the difference).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UpdateRequest<K> {
    /// The type.
    pub resource_type: K,
    /// The object's ID.
    pub id: String,
    /// Attributes to set.
    #[serde(default)]
    pub attrs: BTreeMap<String, Json>,
    /// New full tag set, when tags change.
    #[serde(default)]
    pub tags: Option<BTreeMap<String, String>>,
}

impl<K> UpdateRequest<K> {
    /// A request to change object `id`.
    pub fn new(resource_type: K, id: impl Into<String>) -> Self {
        UpdateRequest {
            resource_type,
            id: id.into(),
            attrs: BTreeMap::new(),
            tags: None,
        }
    }

    /// Sets the changed attributes.
    pub fn with_attrs(mut self, attrs: BTreeMap<String, Json>) -> Self {
        self.attrs = attrs;
        self
    }

    /// Replaces the tags.
    pub fn with_tags(mut self, tags: BTreeMap<String, String>) -> Self {
        self.tags = Some(tags);
        self
    }
}

/// The generic operations of a cloud over its resource types `K`: what a
/// [`ResourceTask<K>`] needs. A cloud's own trait extends it (`AwsCloud:
/// ResourceCloud<ResourceType>`), so its trait objects are tasks' clouds as they are.
///
/// Discovery is batched: [`ResourceCloud::list`] takes a [`ListQuery`] for one type and a
/// backend answers it with as few API calls as the service allows, and may cache the
/// answer for a run (invalidated on writes). Errors are [`CloudError`] kinds a caller
/// acts on.
#[async_trait]
pub trait ResourceCloud<K: ResourceKind>: Send + Sync + fmt::Debug + 'static {
    /// Every object matching `query`, in a stable order (by ID).
    async fn list(&self, query: &ListQuery<K>) -> CloudResult<Vec<Resource<K>>>;

    /// Like [`ResourceCloud::list`], for finding objects to compare with what a task
    /// expects: a text attribute may come as its digest instead of its content (see
    /// [`ResourceKind::content_digest`]), when the backend learns digests from one listing
    /// instead of reading every object. By default, as `list`.
    async fn list_digests(&self, query: &ListQuery<K>) -> CloudResult<Vec<Resource<K>>> {
        self.list(query).await
    }

    /// Like [`ResourceCloud::list`], but the objects may be shared with the backend's
    /// cache instead of copied out of it: what a task's find reads, once per task of a
    /// run. A backend that answers from a [`ResourceIndex`] returns
    /// [`ResourceIndex::shared`]. By default, `list`'s answer.
    async fn list_shared(&self, query: &ListQuery<K>) -> CloudResult<Vec<Arc<Resource<K>>>> {
        Ok(self.list(query).await?.into_iter().map(Arc::new).collect())
    }

    /// Like [`ResourceCloud::list_shared`], for the objects of `resource_type` that carry
    /// every `(key, value)` pair of `tags`: what a task's find by name tag reads
    /// ([`FindBy::NameTag`]), without a [`ListQuery`] made and dropped per find. A backend
    /// that answers from a [`ResourceIndex`] returns [`ResourceIndex::tagged`]. By
    /// default, `list_shared` of the query with those filters.
    async fn list_tagged(
        &self,
        resource_type: K,
        tags: &[(&str, &str)],
    ) -> CloudResult<Vec<Arc<Resource<K>>>> {
        let mut query = ListQuery::new(resource_type);
        query.tags = tags
            .iter()
            .map(|(k, v)| TagFilter::equals(*k, *v))
            .collect();
        self.list_shared(&query).await
    }

    /// The first object (the one with the lowest ID) of [`ResourceCloud::list_tagged`]'s
    /// answer, when the backend can tell without waiting (from a listing it already
    /// holds); `None` when it has to call the cloud. What a task's find by name tag reads
    /// when planning, from several threads at once: it must not block. A backend that
    /// answers from a [`ResourceIndex`] it holds returns [`ResourceIndex::first_tagged`].
    /// By default, `None`.
    fn first_tagged_now(
        &self,
        _resource_type: K,
        _tags: &[(&str, &str)],
    ) -> Option<CloudResult<Option<Arc<Resource<K>>>>> {
        None
    }

    /// Creates an object and returns it as the cloud now holds it (with its new ID).
    async fn create(&self, request: &CreateRequest<K>) -> CloudResult<Resource<K>>;

    /// Changes an existing object and returns it as the cloud now holds it;
    /// [`CloudError::NotFound`] when it does not exist, [`CloudError::Invalid`] naming the
    /// attribute when an immutable one is asked to change.
    async fn update(&self, request: &UpdateRequest<K>) -> CloudResult<Resource<K>>;

    /// Deletes an object (detaching it first where the cloud requires); deleting an
    /// object that does not exist is not an error.
    async fn delete(&self, resource_type: K, id: &str) -> CloudResult<()>;
}

/// The immutable attributes of `kind` that `requested` changes relative to `current`
/// (an attribute absent from `current` counts as changed): the check a backend runs
/// before an update, reading the same facts the task plans with.
pub fn immutable_changes<'a, K: ResourceKind>(
    kind: K,
    current: &Attrs,
    requested: &'a BTreeMap<String, Json>,
) -> Vec<&'a str> {
    let immutable = kind.immutable_attrs();
    requested
        .iter()
        .filter(|(k, v)| immutable.contains(&k.as_str()) && current.get(k) != Some(*v))
        .map(|(k, _)| k.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    enum Kind {
        Net,
        Rule,
    }

    impl fmt::Display for Kind {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.terraform_type())
        }
    }

    impl ResourceKind for Kind {
        fn terraform_type(self) -> &'static str {
            match self {
                Kind::Net => "toy_network",
                Kind::Rule => "toy_rule",
            }
        }
        fn is_taggable(self) -> bool {
            self == Kind::Net
        }
        fn immutable_attrs(self) -> &'static [&'static str] {
            match self {
                Kind::Net => &["cidr"],
                Kind::Rule => &[],
            }
        }
        fn name_tags<'a>(cluster: &'a str, name: &'a str) -> NameTags<'a> {
            NameTags {
                cluster: ("cluster", cluster.into()),
                name: ("name", name.into()),
            }
        }
    }

    #[test]
    fn queries_and_filters_match_by_type_ids_parent_and_tags() {
        let r = Resource::new(Kind::Net, "n-1")
            .with_tag("cluster", "a")
            .with_parent("p");
        assert!(ListQuery::new(Kind::Net).matches(&r));
        assert!(!ListQuery::new(Kind::Rule).matches(&r));
        assert!(
            ListQuery::new(Kind::Net)
                .with_ids(["n-2", "n-1"])
                .matches(&r)
        );
        assert!(!ListQuery::new(Kind::Net).with_ids(["n-2"]).matches(&r));
        assert!(ListQuery::new(Kind::Net).with_parent("p").matches(&r));
        assert!(!ListQuery::new(Kind::Net).with_parent("q").matches(&r));
        assert!(
            ListQuery::new(Kind::Net)
                .with_tag(TagFilter::exists("cluster"))
                .matches(&r)
        );
        assert!(
            !ListQuery::new(Kind::Net)
                .with_tag(TagFilter::equals("cluster", "b"))
                .matches(&r)
        );
        assert!(!ListQuery::new(Kind::Net).with_names(["x"]).matches(&r));
    }

    #[test]
    fn immutable_changes_name_only_changed_immutable_attributes() {
        let current = Attrs::from([("cidr", Json::from("10.0.0.0/16"))]);
        let same = current.to_map();
        assert!(immutable_changes(Kind::Net, &current, &same).is_empty());
        let changed: BTreeMap<String, Json> = [
            ("cidr".to_owned(), Json::from("10.1.0.0/16")),
            ("dns".to_owned(), Json::from(true)),
        ]
        .into_iter()
        .collect();
        assert_eq!(immutable_changes(Kind::Net, &current, &changed), ["cidr"]);
        assert!(immutable_changes(Kind::Rule, &current, &changed).is_empty());
    }
}
