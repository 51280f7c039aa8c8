//! [`AwsCloud`] for [`MockAws`]: the model's generic resource API mapped onto the mock's
//! service operations, so a task's create, list, update and delete go through the same
//! AWS semantics (ids, dependencies, tag filters, call counts, injected faults) as a
//! direct call would.
//!
//! Attributes use the Terraform names the trait documents. The mock keeps the attributes
//! a caller sent (per object, latest version) and answers with them, overlaid by what its
//! own model knows (ids, references, CIDRs, computed values), so nested settings it does
//! not interpret (a launch template's block devices, a target group's health check) read
//! back exactly as written. For the attributes it does model, its state is the truth.
//!
//! This file holds what every type shares; each type's list, create, update, delete and
//! retag are together in one implementation per type under `cloud/kinds/`, found through
//! the table in `cloud/kinds.rs` (which also maps the types to their files).
//!
//! # Identifiers
//!
//! | type | `id` | `parent` |
//! | --- | --- | --- |
//! | VPC, subnet, route table, gateways, EIP (`eipalloc-`), NAT, DHCP options, SG, rule (`sgr-`), volume, launch template, instance | the EC2 id | rule: its group |
//! | `VpcCidrBlock`, `VpcIpv6CidrBlock` | association id | the VPC |
//! | `DhcpOptionsAssociation` | the VPC id | the VPC |
//! | `Route` | `<route table>_<destination>` | the route table |
//! | `RouteTableAssociation` | `rtbassoc-` id | the route table |
//! | `KeyPair` | key name | |
//! | `IamRole`, `IamInstanceProfile` | name (`arn` set) | |
//! | `IamRolePolicy` | `<role>:<policy>` | the role |
//! | `IamRolePolicyAttachment` | `<role>:<policy arn>` | the role |
//! | `IamOidcProvider` | ARN | |
//! | `AutoscalingGroup`, `WarmPool` | group name | warm pool: the group |
//! | `LifecycleHook` | `<group>:<hook>` | the group |
//! | `LoadBalancer`, `TargetGroup`, `Listener` | ARN | listener: the LB ARN |
//! | `HostedZone` | `/hostedzone/<id>` | |
//! | `RecordSet` | `<zone id without /hostedzone/>_<name>_<type>` | the zone id (`/hostedzone/...`; either form matches) |
//! | `SqsQueue` | queue URL (`arn` set) | |
//! | `EventRule` | rule name (`arn` set) | |
//! | `EventTarget` | `<rule>:<target id>` (`target-N` when none is given) | the rule |
//! | `S3Object` | `<bucket>/<key>` | the bucket (must exist: seed it with [`crate::Seed::Bucket`]) |
//!
//! `latest_version` and `default_version` of a launch template are strings, so tasks can
//! use them as outputs; its image, instance type, key, user data and security groups are
//! read from its latest version (as the SDK backend reads `$Latest`), so a version made
//! outside the model is seen. An all-protocol security-group rule reads back as protocol `-1`,
//! ports 0..0, as Terraform writes it.
//!
//! # Errors
//!
//! [`to_cloud_error`]: not found -> `NotFound`, duplicates -> `AlreadyExists`, dependency
//! conflicts (`DependencyViolation`, `DeleteConflict`, `ResourceInUse`) -> `Conflict`
//! (retried, as ordered deletes need), invalid -> `Invalid` naming the field, throttled
//! -> `Throttled`, unavailable -> `Unavailable`. An update that changes an immutable
//! attribute of [`ResourceType::facts`] is `Invalid` naming the attribute, before
//! anything changes.

use std::collections::BTreeMap;

use async_trait::async_trait;
use kops_cloud_aws::cloud::{
    AccountInfo, AwsCloud, CloudError, CloudResult, CreateRequest, GroupMember, GroupMembers,
    HostedZone as ZoneInfo, Image as ImageInfo, ImageQuery, ListQuery, Resource, ResourceCloud,
    ResourceType, TagFilter, UpdateRequest, ZoneQuery,
};
use kops_tasks::resource::{Attrs as ResourceAttrs, Tags as ResourceTags, immutable_changes};
use serde_json::{Map, Value as Json};

use crate::{Error, Filter, MockAws, Tags};

mod kinds;

use kinds::{Create, Update};

type Attrs = BTreeMap<String, Json>;

/// Maps a mock error onto the cloud error kinds. Everything the mock's error says goes
/// into the cloud error's fields (the mock's error is not kept as a source, so nothing is
/// printed twice).
pub fn to_cloud_error(e: Error) -> CloudError {
    let code = e.code();
    match e {
        Error::NotFound {
            operation,
            kind,
            id,
        } => CloudError::NotFound {
            what: format!("{kind} {id} ({operation})"),
        },
        Error::AlreadyExists {
            operation,
            kind,
            id,
        } => CloudError::AlreadyExists {
            operation,
            what: format!("{kind} {id}"),
            source: None,
        },
        // A dependency still in place is what AWS' eventual consistency looks like during
        // ordered deletes: a conflict, retried.
        Error::Conflict {
            operation,
            kind,
            id,
            message,
        } => CloudError::Conflict {
            operation,
            what: format!("{kind} {id}"),
            reason: format!("{code}: {message}"),
            source: None,
        },
        Error::Invalid {
            operation,
            field,
            message,
        } => CloudError::Invalid {
            field,
            message: format!("{operation}: {message}"),
        },
        Error::Throttled { operation, code } => CloudError::Throttled {
            operation: format!("{operation} ({code})"),
            source: None,
        },
        Error::Unavailable { operation, code } => CloudError::Unavailable {
            operation: format!("{operation} ({code})"),
            source: None,
        },
        Error::PermissionDenied { operation, code } => CloudError::PermissionDenied {
            operation: format!("{operation} ({code})"),
            source: None,
        },
        Error::Quota { operation, code } => CloudError::Quota {
            operation,
            limit: code,
            source: None,
        },
        other => CloudError::Other {
            operation: "kops-mock".into(),
            source: Some(Box::new(other)),
        },
    }
}

/// Mock results as cloud results.
trait IntoCloud<T> {
    fn into_cloud(self) -> CloudResult<T>;
}

impl<T> IntoCloud<T> for crate::Result<T> {
    fn into_cloud(self) -> CloudResult<T> {
        self.map_err(to_cloud_error)
    }
}

/// `Ok(())` for a not-found error: deleting what is gone succeeds.
fn gone(r: crate::Result<()>) -> CloudResult<()> {
    match r {
        Err(e) if e.is_not_found() => Ok(()),
        other => other.into_cloud(),
    }
}

fn invalid(rt: ResourceType, field: &str, message: impl Into<String>) -> CloudError {
    CloudError::Invalid {
        field: format!("{rt}.{field}"),
        message: message.into(),
    }
}

// ----- attribute helpers ------------------------------------------------------------------

fn a_str(a: &Attrs, k: &str) -> Option<String> {
    match a.get(k)? {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        Json::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn a_bool(a: &Attrs, k: &str) -> Option<bool> {
    match a.get(k)? {
        Json::Bool(b) => Some(*b),
        Json::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn a_int(a: &Attrs, k: &str) -> Option<i64> {
    match a.get(k)? {
        Json::Number(n) => n.as_i64(),
        Json::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn a_i32(a: &Attrs, k: &str) -> Option<i32> {
    a_int(a, k).and_then(|v| i32::try_from(v).ok())
}

fn a_list(a: &Attrs, k: &str) -> Vec<String> {
    list_of(a.get(k))
}

/// The strings of a list (or single string) attribute's value.
fn list_of(v: Option<&Json>) -> Vec<String> {
    match v {
        Some(Json::Array(v)) => v
            .iter()
            .filter_map(|x| match x {
                Json::String(s) => Some(s.clone()),
                Json::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .collect(),
        Some(Json::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// A nested block: an object, or the first element of a list of objects.
fn a_obj<'a>(a: &'a Attrs, k: &str) -> Option<&'a Map<String, Json>> {
    obj_of(a.get(k)?)
}

fn obj_of(v: &Json) -> Option<&Map<String, Json>> {
    match v {
        Json::Object(m) => Some(m),
        Json::Array(v) => v.first().and_then(Json::as_object),
        _ => None,
    }
}

fn m_attrs(m: &Map<String, Json>) -> Attrs {
    m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn objs(a: &Attrs, k: &str) -> Vec<Attrs> {
    match a.get(k) {
        Some(Json::Array(v)) => v.iter().filter_map(Json::as_object).map(m_attrs).collect(),
        Some(Json::Object(m)) => vec![m_attrs(m)],
        _ => Vec::new(),
    }
}

fn put(a: &mut ResourceAttrs, k: &str, v: impl Into<Json>) {
    a.insert(k, v.into());
}

fn put_opt<T: Into<Json>>(a: &mut ResourceAttrs, k: &str, v: Option<T>) {
    if let Some(v) = v {
        a.insert(k, v.into());
    }
}

fn tag_filters(q: &ListQuery) -> Vec<Filter> {
    q.tags.iter().map(ec2_tag_filter).collect()
}

fn ec2_tag_filter(t: &TagFilter) -> Filter {
    if t.values.is_empty() {
        Filter::tag_key(t.key.clone())
    } else {
        Filter::new(format!("tag:{}", t.key), t.values.clone())
    }
}

/// EC2 filters for a query: tags, and ids / names through the kind's own filter names.
fn ec2_filters(q: &ListQuery, id_filter: &str, name_filter: Option<&str>) -> Vec<Filter> {
    let mut f = tag_filters(q);
    if !q.ids.is_empty() {
        f.push(Filter::new(id_filter, q.ids.clone()));
    }
    if let Some(n) = name_filter
        && !q.names.is_empty()
    {
        f.push(Filter::new(n, q.names.clone()));
    }
    f
}

fn new_res(rt: ResourceType, id: &str, tags: &Tags) -> Resource {
    let mut r = Resource::new(rt, id);
    r.tags = tags.into();
    r
}

fn raw_key(rt: ResourceType, id: &str) -> String {
    format!("{}/{id}", rt.terraform_type())
}

fn split2(rt: ResourceType, id: &str, sep: char) -> CloudResult<(&str, &str)> {
    id.split_once(sep)
        .ok_or_else(|| invalid(rt, "id", format!("{id:?} is not of the form A{sep}B")))
}

impl MockAws {
    fn raw_get(&self, rt: ResourceType, id: &str) -> Attrs {
        crate::lock(&self.inner.raw)
            .get(&raw_key(rt, id))
            .cloned()
            .unwrap_or_default()
    }

    fn raw_set(&self, rt: ResourceType, id: &str, attrs: Attrs) {
        crate::lock(&self.inner.raw).insert(raw_key(rt, id), attrs);
    }

    fn raw_merge(&self, rt: ResourceType, id: &str, attrs: &Attrs) -> Attrs {
        let mut m = crate::lock(&self.inner.raw);
        let e = m.entry(raw_key(rt, id)).or_default();
        e.extend(attrs.iter().map(|(k, v)| (k.clone(), v.clone())));
        e.clone()
    }

    /// The caller's attributes overlaid with the mock's own. For the attributes the mock
    /// models, its state is the truth, also when it has no value.
    fn finish(&self, known: &[&str], mut r: Resource) -> Resource {
        let rt = r.resource_type;
        let mut attrs = self.raw_get(rt, &r.id);
        attrs.retain(|k, _| !known.contains(&k.as_str()));
        attrs.extend(std::mem::take(&mut r.attrs));
        r.attrs = attrs.into();
        r
    }

    fn retag_ec2(&self, id: &str, old: &ResourceTags, new: &Tags) -> crate::Result<()> {
        let removed: Vec<(String, Option<String>)> = old
            .keys()
            .filter(|k| !new.contains_key(*k))
            .map(|k| (k.to_owned(), None))
            .collect();
        if !removed.is_empty() {
            self.delete_tags(&[id.to_owned()], &removed)?;
        }
        let changed: Tags = new
            .iter()
            .filter(|(k, v)| old.get(k) != Some(v.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !changed.is_empty() {
            self.create_tags(&[id.to_owned()], &changed)?;
        }
        Ok(())
    }

    fn one(&self, rt: ResourceType, id: &str) -> CloudResult<Resource> {
        let found = self.list_native(&ListQuery::new(rt).with_ids([id]))?;
        found
            .into_iter()
            .find(|r| r.id == id)
            .ok_or_else(|| CloudError::not_found(format!("{rt} {id}")))
    }

    // ----- list -------------------------------------------------------------------------

    fn list_native(&self, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let kind = kinds::find(q.resource_type, "list")?;
        let mut out: Vec<Resource> = kind
            .list(self, q)?
            .into_iter()
            .map(|r| self.finish(kind.native(), r))
            .filter(|r| query_matches(q, r))
            .collect();
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }
}

/// [`ListQuery::matches`], with hosted-zone parents compared with or without
/// `/hostedzone/`.
fn query_matches(q: &ListQuery, r: &Resource) -> bool {
    if q.resource_type == ResourceType::RecordSet
        && let Some(p) = &q.parent
    {
        let norm = |s: &str| s.trim_start_matches("/hostedzone/").to_owned();
        if r.parent.as_deref().map(norm) != Some(norm(p)) {
            return false;
        }
        let mut q2 = q.clone();
        q2.parent = None;
        return q2.matches(r);
    }
    q.matches(r)
}

/// A list AWS holds as a set, listed in an order of its own: the mock reverses the order
/// the items were given in, so that a caller that compares such a list by position (the
/// subnets of an autoscaling group or a load balancer, its target groups) sees a change
/// on the mock as it would on AWS, where the order follows the IDs.
fn as_set(items: &[String]) -> Vec<String> {
    items.iter().rev().cloned().collect()
}

impl MockAws {
    fn create_native(&self, req: &CreateRequest) -> CloudResult<Resource> {
        let rt = req.resource_type;
        let id = kinds::find(rt, "create")?.create(self, &Create::new(req))?;
        self.raw_set(rt, &id, req.attrs.clone());
        self.one(rt, &id)
    }

    fn update_native(&self, req: &UpdateRequest) -> CloudResult<Resource> {
        let rt = req.resource_type;
        let id = req.id.as_str();
        let current = self.one(rt, id)?;
        self.raw_merge(rt, id, &req.attrs);
        let a = &req.attrs;
        // The full desired state: what the object has now, with the changes on top.
        let mut merged = current.attrs.to_map();
        merged.extend(a.iter().map(|(k, v)| (k.clone(), v.clone())));
        // What cannot change in place, from the one table of facts.
        let fixed = immutable_changes(rt, &current.attrs, a);
        if !fixed.is_empty() {
            return Err(CloudError::immutable(rt.terraform_type(), &fixed));
        }
        let kind = kinds::find(rt, "update")?;
        let u = Update {
            rt,
            id,
            req,
            a,
            current,
            merged,
        };
        if let Some(new_id) = kind.update(self, &u)? {
            return self.one(rt, &new_id);
        }
        let current = u.current;
        if let Some(tags) = &req.tags
            && rt.is_taggable()
            && *tags != current.tags
        {
            kind.retag(self, id, &current.tags, tags)?;
        }
        self.one(rt, id)
    }

    fn delete_native(&self, rt: ResourceType, id: &str) -> CloudResult<()> {
        kinds::find(rt, "delete")?.delete(self, id)
    }
}

#[async_trait]
impl ResourceCloud<ResourceType> for MockAws {
    async fn list(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        self.list_native(query)
    }

    async fn create(&self, request: &CreateRequest) -> CloudResult<Resource> {
        self.create_native(request)
    }

    async fn update(&self, request: &UpdateRequest) -> CloudResult<Resource> {
        self.update_native(request)
    }

    async fn delete(&self, resource_type: ResourceType, id: &str) -> CloudResult<()> {
        self.delete_native(resource_type, id)
    }
}

#[async_trait]
impl AwsCloud for MockAws {
    async fn account(&self) -> CloudResult<AccountInfo> {
        Ok(AccountInfo::new(
            self.options().account_id.clone(),
            self.options().partition.clone(),
            self.options().region.clone(),
        ))
    }

    async fn zones(&self) -> CloudResult<Vec<String>> {
        let mut z = self.describe_availability_zones().into_cloud()?;
        z.sort();
        Ok(z)
    }

    async fn images(&self, query: &ImageQuery) -> CloudResult<Vec<ImageInfo>> {
        let found = match query {
            ImageQuery::Id(id) => match self.describe_images(std::slice::from_ref(id), &[], &[]) {
                Ok(f) => f,
                Err(e) if e.is_not_found() => Vec::new(),
                Err(e) => return Err(to_cloud_error(e)),
            },
            ImageQuery::Name { owner, name } => self
                .describe_images(
                    &[],
                    &owner.iter().cloned().collect::<Vec<_>>(),
                    &[Filter::new("name", [name.clone()])],
                )
                .into_cloud()?,
            _ => self.describe_images(&[], &[], &[]).into_cloud()?,
        };
        let mut out: Vec<ImageInfo> = found
            .into_iter()
            .map(|i| {
                ImageInfo::new(i.id, i.name, i.owner_id)
                    .with_root_device_name(i.root_device_name)
                    .with_architecture(i.architecture)
                    .with_creation_date(i.creation_date)
            })
            .filter(|i| query.matches(i))
            .collect();
        out.sort_by(|a, b| b.creation_date.cmp(&a.creation_date));
        Ok(out)
    }

    async fn hosted_zones(&self, query: &ZoneQuery) -> CloudResult<Vec<ZoneInfo>> {
        let zones = match query {
            ZoneQuery::Name(n) => self.list_hosted_zones_by_name(Some(n)).into_cloud()?,
            ZoneQuery::Id(id) => match self.get_hosted_zone(id) {
                Ok(z) => vec![z],
                Err(e) if e.is_not_found() => Vec::new(),
                Err(e) => return Err(to_cloud_error(e)),
            },
            _ => self.list_hosted_zones().into_cloud()?,
        };
        Ok(zones
            .into_iter()
            .map(|z| {
                ZoneInfo::new(z.id, z.name, z.private)
                    .with_vpcs(z.vpcs.into_iter().map(|v| v.vpc_id))
            })
            .filter(|z| query.matches(z))
            .collect())
    }

    async fn group_members(&self, names: &[String]) -> CloudResult<Vec<GroupMembers>> {
        let groups = self.describe_group_members(names).into_cloud()?;
        let lt = |t: Option<(String, i64)>| t.map(|(id, v)| (id, v.to_string()));
        Ok(groups
            .into_iter()
            .map(|g| {
                let mut out = GroupMembers::new(g.name, g.min_size, g.max_size, g.desired_capacity);
                out.launch_template = lt(g.launch_template);
                out.instances = g
                    .instances
                    .into_iter()
                    .map(|(id, state, t)| {
                        let mut m = GroupMember::new(id, state);
                        m.launch_template = lt(t);
                        m
                    })
                    .collect();
                out
            })
            .collect())
    }

    async fn detach_instance(&self, group: &str, instance: &str) -> CloudResult<()> {
        self.create_tags(
            &[instance.to_owned()],
            &crate::tags([(kops_cloud_aws::cloud::DETACHED_TAG, group)]),
        )
        .into_cloud()?;
        self.detach_instances(group, &[instance.to_owned()], false)
            .into_cloud()
    }

    async fn terminate_instance(&self, instance: &str) -> CloudResult<()> {
        match self.terminate_instances(&[instance.to_owned()]) {
            Ok(()) => {}
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(to_cloud_error(e)),
        }
        self.heal_auto_scaling_groups();
        Ok(())
    }

    async fn deregister_instance(&self, group: &str, instance: &str) -> CloudResult<()> {
        self.deregister_from_group_load_balancers(group, instance)
            .into_cloud()
    }

    async fn instance_type_zones(
        &self,
        instance_type: &str,
        zones: &[String],
    ) -> CloudResult<Vec<String>> {
        self.describe_instance_type_offerings(instance_type, zones)
            .into_cloud()
    }

    async fn default_instance_type(
        &self,
        role: kops_cloud_aws::cloud::MachineRole,
        zones: &[String],
        arm64: bool,
    ) -> CloudResult<String> {
        if let Some(t) = self.fixed_default_instance_type(role) {
            return Ok(t);
        }
        kops_cloud_aws::cloud::choose_default_instance_type(self, role, zones, arm64).await
    }
}

/// A decorator that runs a [`crate::FaultPlan`] in front of any [`AwsCloud`]: each call is
/// named `<service>:<Verb><Type>` (`ec2:ListVpc`, `iam:CreateIamRole`, `ec2:Images`, ...)
/// and may be answered with an injected throttling or unavailable error instead of
/// reaching the inner cloud. `FaultPlan::throttle_fraction(0.3, seed)` is the "30% of
/// calls throttled" wrapper of the backend tests.
#[derive(Debug)]
pub struct FaultyCloud<C: ?Sized> {
    faults: crate::FaultInjector,
    inner: std::sync::Arc<C>,
}

impl<C: AwsCloud + ?Sized> FaultyCloud<C> {
    /// Wraps `inner` with `plan`.
    pub fn new(inner: std::sync::Arc<C>, plan: crate::FaultPlan) -> Self {
        FaultyCloud {
            faults: crate::FaultInjector::new(plan),
            inner,
        }
    }

    /// How many faults have been injected.
    pub fn injected(&self) -> u64 {
        self.faults.injected()
    }

    fn check(&self, service: &str, op: impl std::fmt::Display) -> CloudResult<()> {
        self.faults.check(&format!("{service}:{op}")).into_cloud()
    }
}

fn service_prefix(rt: ResourceType) -> &'static str {
    use kops_cloud_aws::cloud::Service as S;
    match rt.service() {
        S::Ec2 => "ec2",
        S::Autoscaling => "autoscaling",
        S::Elbv2 => "elbv2",
        S::Iam => "iam",
        S::Route53 => "route53",
        S::Sqs => "sqs",
        S::EventBridge => "events",
        S::S3 => "s3",
        _ => "aws",
    }
}

#[async_trait]
impl<C: AwsCloud + ?Sized> ResourceCloud<ResourceType> for FaultyCloud<C> {
    async fn list(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = query.resource_type;
        self.check(service_prefix(rt), format_args!("List{rt:?}"))?;
        self.inner.list(query).await
    }

    async fn list_digests(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = query.resource_type;
        self.check(service_prefix(rt), format_args!("List{rt:?}"))?;
        self.inner.list_digests(query).await
    }

    async fn create(&self, request: &CreateRequest) -> CloudResult<Resource> {
        let rt = request.resource_type;
        self.check(service_prefix(rt), format_args!("Create{rt:?}"))?;
        self.inner.create(request).await
    }

    async fn update(&self, request: &UpdateRequest) -> CloudResult<Resource> {
        let rt = request.resource_type;
        self.check(service_prefix(rt), format_args!("Update{rt:?}"))?;
        self.inner.update(request).await
    }

    async fn delete(&self, resource_type: ResourceType, id: &str) -> CloudResult<()> {
        self.check(
            service_prefix(resource_type),
            format_args!("Delete{resource_type:?}"),
        )?;
        self.inner.delete(resource_type, id).await
    }
}

#[async_trait]
impl<C: AwsCloud + ?Sized> AwsCloud for FaultyCloud<C> {
    async fn account(&self) -> CloudResult<AccountInfo> {
        self.check("sts", "GetCallerIdentity")?;
        self.inner.account().await
    }

    async fn zones(&self) -> CloudResult<Vec<String>> {
        self.check("ec2", "DescribeAvailabilityZones")?;
        self.inner.zones().await
    }

    async fn images(&self, query: &ImageQuery) -> CloudResult<Vec<ImageInfo>> {
        self.check("ec2", "DescribeImages")?;
        self.inner.images(query).await
    }

    async fn hosted_zones(&self, query: &ZoneQuery) -> CloudResult<Vec<ZoneInfo>> {
        self.check("route53", "ListHostedZones")?;
        self.inner.hosted_zones(query).await
    }

    async fn group_members(&self, names: &[String]) -> CloudResult<Vec<GroupMembers>> {
        self.check("autoscaling", "DescribeAutoScalingGroups")?;
        self.inner.group_members(names).await
    }

    async fn detach_instance(&self, group: &str, instance: &str) -> CloudResult<()> {
        self.check("autoscaling", "DetachInstances")?;
        self.inner.detach_instance(group, instance).await
    }

    async fn terminate_instance(&self, instance: &str) -> CloudResult<()> {
        self.check("ec2", "TerminateInstances")?;
        self.inner.terminate_instance(instance).await
    }

    async fn deregister_instance(&self, group: &str, instance: &str) -> CloudResult<()> {
        self.check("elbv2", "DeregisterTargets")?;
        self.inner.deregister_instance(group, instance).await
    }

    async fn instance_type_zones(
        &self,
        instance_type: &str,
        zones: &[String],
    ) -> CloudResult<Vec<String>> {
        self.check("ec2", "DescribeInstanceTypeOfferings")?;
        self.inner.instance_type_zones(instance_type, zones).await
    }

    async fn default_instance_type(
        &self,
        role: kops_cloud_aws::cloud::MachineRole,
        zones: &[String],
        arm64: bool,
    ) -> CloudResult<String> {
        self.inner.default_instance_type(role, zones, arm64).await
    }
}

/// A decorator that counts calls per `<service>:<Verb><Type>` (the names
/// [`FaultyCloud`] uses) in front of any [`AwsCloud`], for call budgets on backends that
/// do not count by themselves. [`MockAws::calls`] counts the underlying AWS operations
/// instead (`ec2:DescribeVpcs`).
#[derive(Debug)]
pub struct CountingCloud<C: ?Sized> {
    calls: std::sync::Mutex<BTreeMap<String, u64>>,
    inner: std::sync::Arc<C>,
}

impl<C: AwsCloud + ?Sized> CountingCloud<C> {
    /// Wraps `inner`.
    pub fn new(inner: std::sync::Arc<C>) -> Self {
        CountingCloud {
            calls: std::sync::Mutex::new(BTreeMap::new()),
            inner,
        }
    }

    /// Calls so far, by name.
    pub fn calls(&self) -> BTreeMap<String, u64> {
        crate::lock(&self.calls).clone()
    }

    /// Total calls so far.
    pub fn total(&self) -> u64 {
        crate::lock(&self.calls).values().sum()
    }

    fn count(&self, service: &str, op: impl std::fmt::Display) {
        *crate::lock(&self.calls)
            .entry(format!("{service}:{op}"))
            .or_insert(0) += 1;
    }
}

#[async_trait]
impl<C: AwsCloud + ?Sized> ResourceCloud<ResourceType> for CountingCloud<C> {
    async fn list(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = query.resource_type;
        self.count(service_prefix(rt), format_args!("List{rt:?}"));
        self.inner.list(query).await
    }

    async fn list_digests(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = query.resource_type;
        self.count(service_prefix(rt), format_args!("List{rt:?}"));
        self.inner.list_digests(query).await
    }

    async fn create(&self, request: &CreateRequest) -> CloudResult<Resource> {
        let rt = request.resource_type;
        self.count(service_prefix(rt), format_args!("Create{rt:?}"));
        self.inner.create(request).await
    }

    async fn update(&self, request: &UpdateRequest) -> CloudResult<Resource> {
        let rt = request.resource_type;
        self.count(service_prefix(rt), format_args!("Update{rt:?}"));
        self.inner.update(request).await
    }

    async fn delete(&self, resource_type: ResourceType, id: &str) -> CloudResult<()> {
        self.count(
            service_prefix(resource_type),
            format_args!("Delete{resource_type:?}"),
        );
        self.inner.delete(resource_type, id).await
    }
}

#[async_trait]
impl<C: AwsCloud + ?Sized> AwsCloud for CountingCloud<C> {
    async fn account(&self) -> CloudResult<AccountInfo> {
        self.count("sts", "GetCallerIdentity");
        self.inner.account().await
    }

    async fn zones(&self) -> CloudResult<Vec<String>> {
        self.count("ec2", "DescribeAvailabilityZones");
        self.inner.zones().await
    }

    async fn images(&self, query: &ImageQuery) -> CloudResult<Vec<ImageInfo>> {
        self.count("ec2", "DescribeImages");
        self.inner.images(query).await
    }

    async fn hosted_zones(&self, query: &ZoneQuery) -> CloudResult<Vec<ZoneInfo>> {
        self.count("route53", "ListHostedZones");
        self.inner.hosted_zones(query).await
    }

    async fn group_members(&self, names: &[String]) -> CloudResult<Vec<GroupMembers>> {
        self.count("autoscaling", "DescribeAutoScalingGroups");
        self.inner.group_members(names).await
    }

    async fn detach_instance(&self, group: &str, instance: &str) -> CloudResult<()> {
        self.count("autoscaling", "DetachInstances");
        self.inner.detach_instance(group, instance).await
    }

    async fn terminate_instance(&self, instance: &str) -> CloudResult<()> {
        self.count("ec2", "TerminateInstances");
        self.inner.terminate_instance(instance).await
    }

    async fn deregister_instance(&self, group: &str, instance: &str) -> CloudResult<()> {
        self.count("elbv2", "DeregisterTargets");
        self.inner.deregister_instance(group, instance).await
    }

    async fn instance_type_zones(
        &self,
        instance_type: &str,
        zones: &[String],
    ) -> CloudResult<Vec<String>> {
        self.count("ec2", "DescribeInstanceTypeOfferings");
        self.inner.instance_type_zones(instance_type, zones).await
    }

    async fn default_instance_type(
        &self,
        role: kops_cloud_aws::cloud::MachineRole,
        zones: &[String],
        arm64: bool,
    ) -> CloudResult<String> {
        self.inner.default_instance_type(role, zones, arm64).await
    }
}
