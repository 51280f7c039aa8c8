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
use serde_json::{Map, Value as Json, json};

use crate::asg::{
    AutoScalingGroupSpec, LaunchTemplateSpec, LifecycleHook, MixedInstancesPolicy, WarmPool,
};
use crate::ec2::{
    CreateSubnet, CreateVolume, LaunchTemplateData, NetworkInterfaceSpec, Route, RuleSpec,
    SubnetAttributes, TemplateRef, VpcCidr,
};
use crate::elbv2::{
    Action, CreateLoadBalancer, CreateTargetGroup, HealthCheck, ListenerSpec, SubnetMapping,
};
use crate::events::{PutRule, Target};
use crate::iam::CreateRole;
use crate::route53::{AliasTarget, Change, ChangeAction, RecordSet, ZoneVpc};
use crate::s3::PutOptions;
use crate::{Error, Filter, MockAws, Tags};

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

fn route_destination(r: &Route) -> String {
    r.destination().unwrap_or_default().to_owned()
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
    fn finish(&self, mut r: Resource) -> Resource {
        let rt = r.resource_type;
        let mut attrs = self.raw_get(rt, &r.id);
        let known = native_keys(rt);
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
        use ResourceType as R;
        let rt = q.resource_type;
        let mut out: Vec<Resource> = Vec::new();
        match rt {
            R::Vpc => {
                for v in self
                    .describe_vpcs(&[], &ec2_filters(q, "vpc-id", None))
                    .into_cloud()?
                {
                    let mut r = new_res(rt, &v.id, &v.tags);
                    put(&mut r.attrs, "cidr_block", v.cidr_block.clone());
                    put(&mut r.attrs, "enable_dns_hostnames", v.enable_dns_hostnames);
                    put(&mut r.attrs, "enable_dns_support", v.enable_dns_support);
                    put_opt(
                        &mut r.attrs,
                        "ipv6_cidr_block",
                        v.ipv6_cidr_block_associations
                            .first()
                            .map(|a| a.cidr_block.clone()),
                    );
                    out.push(r);
                }
            }
            R::VpcCidrBlock | R::VpcIpv6CidrBlock => {
                let filters = match &q.parent {
                    Some(p) => vec![Filter::new("vpc-id", [p.clone()])],
                    None => Vec::new(),
                };
                for v in self.describe_vpcs(&[], &filters).into_cloud()? {
                    if rt == R::VpcCidrBlock {
                        for a in v.cidr_block_associations.iter().skip(1) {
                            let mut r = Resource::new(rt, &a.association_id).with_parent(&v.id);
                            put(&mut r.attrs, "vpc_id", v.id.clone());
                            put(&mut r.attrs, "cidr_block", a.cidr_block.clone());
                            out.push(r);
                        }
                    } else {
                        for a in &v.ipv6_cidr_block_associations {
                            let mut r = Resource::new(rt, &a.association_id).with_parent(&v.id);
                            put(&mut r.attrs, "vpc_id", v.id.clone());
                            put(&mut r.attrs, "ipv6_cidr_block", a.cidr_block.clone());
                            out.push(r);
                        }
                    }
                }
            }
            R::DhcpOptions => {
                for d in self
                    .describe_dhcp_options(&[], &ec2_filters(q, "dhcp-options-id", None))
                    .into_cloud()?
                {
                    let mut r = new_res(rt, &d.id, &d.tags);
                    if let Some(v) = d.configurations.get("domain-name").and_then(|v| v.first()) {
                        put(&mut r.attrs, "domain_name", v.clone());
                    }
                    if let Some(v) = d.configurations.get("domain-name-servers") {
                        put(&mut r.attrs, "domain_name_servers", v.clone());
                    }
                    if let Some(v) = d.configurations.get("ntp-servers") {
                        put(&mut r.attrs, "ntp_servers", v.clone());
                    }
                    out.push(r);
                }
            }
            R::DhcpOptionsAssociation => {
                for v in self.describe_vpcs(&[], &[]).into_cloud()? {
                    if v.dhcp_options_id == "default" {
                        continue;
                    }
                    let mut r = Resource::new(rt, &v.id).with_parent(&v.id);
                    put(&mut r.attrs, "vpc_id", v.id.clone());
                    put(&mut r.attrs, "dhcp_options_id", v.dhcp_options_id.clone());
                    out.push(r);
                }
            }
            R::InternetGateway => {
                for g in self
                    .describe_internet_gateways(&[], &ec2_filters(q, "internet-gateway-id", None))
                    .into_cloud()?
                {
                    let mut r = new_res(rt, &g.id, &g.tags);
                    put_opt(&mut r.attrs, "vpc_id", g.attached_vpc_id.clone());
                    out.push(r);
                }
            }
            R::EgressOnlyInternetGateway => {
                for g in self
                    .describe_egress_only_internet_gateways(
                        &[],
                        &ec2_filters(q, "egress-only-internet-gateway-id", None),
                    )
                    .into_cloud()?
                {
                    let mut r = new_res(rt, &g.id, &g.tags);
                    put(&mut r.attrs, "vpc_id", g.vpc_id.clone());
                    out.push(r);
                }
            }
            R::Subnet => {
                for s in self
                    .describe_subnets(&[], &ec2_filters(q, "subnet-id", None))
                    .into_cloud()?
                {
                    let mut r = new_res(rt, &s.id, &s.tags);
                    put(&mut r.attrs, "vpc_id", s.vpc_id.clone());
                    put(
                        &mut r.attrs,
                        "availability_zone",
                        s.availability_zone.clone(),
                    );
                    put_opt(&mut r.attrs, "cidr_block", s.cidr_block.clone());
                    put_opt(
                        &mut r.attrs,
                        "ipv6_cidr_block",
                        s.ipv6_cidr_block_associations
                            .first()
                            .map(|a| a.cidr_block.clone()),
                    );
                    if s.ipv6_native {
                        put(&mut r.attrs, "ipv6_native", true);
                    }
                    let a = &s.attributes;
                    put_opt(
                        &mut r.attrs,
                        "map_public_ip_on_launch",
                        a.map_public_ip_on_launch,
                    );
                    put_opt(
                        &mut r.attrs,
                        "assign_ipv6_address_on_creation",
                        a.assign_ipv6_address_on_creation,
                    );
                    put_opt(&mut r.attrs, "enable_dns64", a.enable_dns64);
                    put_opt(
                        &mut r.attrs,
                        "enable_resource_name_dns_a_record_on_launch",
                        a.enable_resource_name_dns_a_record_on_launch,
                    );
                    put_opt(
                        &mut r.attrs,
                        "enable_resource_name_dns_aaaa_record_on_launch",
                        a.enable_resource_name_dns_aaaa_record_on_launch,
                    );
                    put_opt(
                        &mut r.attrs,
                        "private_dns_hostname_type_on_launch",
                        a.private_dns_hostname_type_on_launch.clone(),
                    );
                    out.push(r);
                }
            }
            R::RouteTable => {
                for t in self
                    .describe_route_tables(&[], &ec2_filters(q, "route-table-id", None))
                    .into_cloud()?
                {
                    let mut r = new_res(rt, &t.id, &t.tags);
                    put(&mut r.attrs, "vpc_id", t.vpc_id.clone());
                    out.push(r);
                }
            }
            R::Route | R::RouteTableAssociation => {
                let filters = match &q.parent {
                    Some(p) => vec![Filter::new("route-table-id", [p.clone()])],
                    None => Vec::new(),
                };
                for t in self.describe_route_tables(&[], &filters).into_cloud()? {
                    if rt == R::Route {
                        for route in &t.routes {
                            if route.gateway_id.as_deref() == Some("local") {
                                continue;
                            }
                            let dest = route_destination(route);
                            let mut r =
                                Resource::new(rt, format!("{}_{dest}", t.id)).with_parent(&t.id);
                            put(&mut r.attrs, "route_table_id", t.id.clone());
                            route_attrs(&mut r.attrs, route);
                            out.push(r);
                        }
                    } else {
                        for a in &t.associations {
                            let Some(subnet) = &a.subnet_id else { continue };
                            let mut r = Resource::new(rt, &a.id).with_parent(&t.id);
                            put(&mut r.attrs, "route_table_id", t.id.clone());
                            put(&mut r.attrs, "subnet_id", subnet.clone());
                            out.push(r);
                        }
                    }
                }
            }
            R::ElasticIp => {
                for a in self
                    .describe_addresses(&[], &ec2_filters(q, "allocation-id", None))
                    .into_cloud()?
                {
                    let mut r = new_res(rt, &a.allocation_id, &a.tags);
                    put(&mut r.attrs, "domain", a.domain.clone());
                    put(&mut r.attrs, "public_ip", a.public_ip.clone());
                    out.push(r);
                }
            }
            R::NatGateway => {
                for n in self
                    .describe_nat_gateways(&[], &ec2_filters(q, "nat-gateway-id", None))
                    .into_cloud()?
                {
                    let mut r = new_res(rt, &n.id, &n.tags);
                    put(&mut r.attrs, "subnet_id", n.subnet_id.clone());
                    put_opt(&mut r.attrs, "allocation_id", n.allocation_id.clone());
                    put_opt(&mut r.attrs, "public_ip", n.public_ip.clone());
                    out.push(r);
                }
            }
            R::SecurityGroup => {
                for g in self
                    .describe_security_groups(&[], &ec2_filters(q, "group-id", Some("group-name")))
                    .into_cloud()?
                {
                    let mut r = new_res(rt, &g.id, &g.tags).with_name(&g.name);
                    put(&mut r.attrs, "vpc_id", g.vpc_id.clone());
                    put(&mut r.attrs, "description", g.description.clone());
                    put(&mut r.attrs, "name", g.name.clone());
                    out.push(r);
                }
            }
            R::SecurityGroupRule => {
                let mut filters = Vec::new();
                if let Some(p) = &q.parent {
                    filters.push(Filter::new("group-id", [p.clone()]));
                }
                if !q.ids.is_empty() {
                    filters.push(Filter::new("security-group-rule-id", q.ids.clone()));
                }
                for rule in self
                    .describe_security_group_rules(&[], &filters)
                    .into_cloud()?
                {
                    let mut r = Resource::new(rt, &rule.id).with_parent(&rule.group_id);
                    rule_attrs(&mut r.attrs, &rule.group_id, rule.is_egress, &rule.spec);
                    out.push(r);
                }
            }
            R::IamRole => {
                for role in self.list_roles("/").into_cloud()? {
                    let mut r = new_res(rt, &role.name, &role.tags)
                        .with_name(&role.name)
                        .with_arn(&role.arn);
                    put(
                        &mut r.attrs,
                        "assume_role_policy",
                        role.assume_role_policy_document,
                    );
                    put_opt(
                        &mut r.attrs,
                        "permissions_boundary",
                        role.permissions_boundary,
                    );
                    put_opt(&mut r.attrs, "description", role.description);
                    put_opt(
                        &mut r.attrs,
                        "max_session_duration",
                        role.max_session_duration,
                    );
                    put(&mut r.attrs, "path", role.path);
                    put(&mut r.attrs, "unique_id", role.id);
                    out.push(r);
                }
            }
            R::IamRolePolicy | R::IamRolePolicyAttachment => {
                let roles = match &q.parent {
                    Some(p) => match self.get_role(p) {
                        Ok(r) => vec![r.name],
                        Err(e) if e.is_not_found() => Vec::new(),
                        Err(e) => return Err(to_cloud_error(e)),
                    },
                    None => self
                        .list_roles("/")
                        .into_cloud()?
                        .into_iter()
                        .map(|r| r.name)
                        .collect(),
                };
                for role in roles {
                    if rt == R::IamRolePolicy {
                        for p in self.list_role_policies(&role).into_cloud()? {
                            let doc = self.get_role_policy(&role, &p).into_cloud()?;
                            let mut r = Resource::new(rt, format!("{role}:{p}"))
                                .with_name(&p)
                                .with_parent(&role);
                            put(&mut r.attrs, "role", role.clone());
                            put(&mut r.attrs, "policy", doc);
                            put(&mut r.attrs, "name", p);
                            out.push(r);
                        }
                    } else {
                        for arn in self.list_attached_role_policies(&role).into_cloud()? {
                            let mut r =
                                Resource::new(rt, format!("{role}:{arn}")).with_parent(&role);
                            put(&mut r.attrs, "role", role.clone());
                            put(&mut r.attrs, "policy_arn", arn);
                            out.push(r);
                        }
                    }
                }
            }
            R::IamInstanceProfile => {
                for p in self.list_instance_profiles("/").into_cloud()? {
                    let mut r = new_res(rt, &p.name, &p.tags)
                        .with_name(&p.name)
                        .with_arn(&p.arn);
                    put_opt(&mut r.attrs, "role", p.roles.first().cloned());
                    put(&mut r.attrs, "path", p.path);
                    out.push(r);
                }
            }
            R::IamOidcProvider => {
                for arn in self.list_oidc_providers().into_cloud()? {
                    let p = self.get_oidc_provider(&arn).into_cloud()?;
                    let mut r = new_res(rt, &p.arn, &p.tags).with_arn(&p.arn);
                    put(&mut r.attrs, "url", p.url);
                    put(&mut r.attrs, "client_id_list", p.client_ids);
                    put(&mut r.attrs, "thumbprint_list", p.thumbprints);
                    out.push(r);
                }
            }
            R::KeyPair => {
                let mut f = tag_filters(q);
                let names: Vec<String> = q.ids.iter().chain(&q.names).cloned().collect();
                if !names.is_empty() {
                    f.push(Filter::new("key-name", names));
                }
                for k in self.describe_key_pairs(&[], &f).into_cloud()? {
                    let mut r = new_res(rt, &k.name, &k.tags).with_name(&k.name);
                    put(&mut r.attrs, "key_name", k.name.clone());
                    put(&mut r.attrs, "public_key", k.public_key.clone());
                    put(&mut r.attrs, "fingerprint", k.fingerprint.clone());
                    put(&mut r.attrs, "key_pair_id", k.id.clone());
                    out.push(r);
                }
            }
            R::LaunchTemplate => {
                for t in self
                    .describe_launch_templates(
                        &[],
                        &[],
                        &ec2_filters(q, "launch-template-id", Some("launch-template-name")),
                    )
                    .into_cloud()?
                {
                    let mut r = new_res(rt, &t.id, &t.tags).with_name(&t.name);
                    put(&mut r.attrs, "name", t.name.clone());
                    // Strings, so tasks can reference them as outputs (`$Latest` style).
                    put(
                        &mut r.attrs,
                        "latest_version",
                        t.latest_version_number.to_string(),
                    );
                    put(
                        &mut r.attrs,
                        "default_version",
                        t.default_version_number.to_string(),
                    );
                    let latest = crate::lock(&self.inner.state)
                        .ec2
                        .lt_versions
                        .get(&(t.id.clone(), t.latest_version_number))
                        .map(|v| v.data.clone());
                    if let Some(data) = latest {
                        lt_version_attrs(&mut r.attrs, &self.raw_get(rt, &t.id), &data);
                    }
                    out.push(r);
                }
            }
            R::AutoscalingGroup => {
                let filters: Vec<Filter> = q.tags.iter().map(ec2_tag_filter).collect();
                let names: Vec<String> = q.ids.iter().chain(&q.names).cloned().collect();
                for g in self
                    .describe_auto_scaling_groups(&names, &filters)
                    .into_cloud()?
                {
                    let mut r = new_res(rt, &g.spec.name, &g.tags)
                        .with_name(&g.spec.name)
                        .with_arn(&g.arn);
                    asg_attrs(&mut r.attrs, &g);
                    out.push(r);
                }
            }
            R::WarmPool | R::LifecycleHook => {
                let groups: Vec<String> = match &q.parent {
                    Some(p) => vec![p.clone()],
                    None => self
                        .describe_auto_scaling_groups(&[], &[])
                        .into_cloud()?
                        .into_iter()
                        .map(|g| g.spec.name)
                        .collect(),
                };
                for g in groups {
                    if rt == R::WarmPool {
                        let pool = match self.describe_warm_pool(&g) {
                            Ok(p) => p,
                            Err(e) if e.is_not_found() => None,
                            Err(e) => return Err(to_cloud_error(e)),
                        };
                        if let Some(p) = pool {
                            let mut r = Resource::new(rt, &g).with_parent(&g);
                            put(&mut r.attrs, "autoscaling_group_name", g.clone());
                            put_opt(&mut r.attrs, "min_size", p.min_size);
                            put_opt(
                                &mut r.attrs,
                                "max_group_prepared_capacity",
                                p.max_group_prepared_capacity,
                            );
                            put_opt(&mut r.attrs, "pool_state", p.pool_state);
                            if let Some(reuse) = p.reuse_on_scale_in {
                                put(
                                    &mut r.attrs,
                                    "instance_reuse_policy",
                                    json!({"reuse_on_scale_in": reuse}),
                                );
                            }
                            out.push(r);
                        }
                    } else {
                        let hooks = match self.describe_lifecycle_hooks(&g, &[]) {
                            Ok(h) => h,
                            Err(e) if e.is_not_found() => Vec::new(),
                            Err(e) => return Err(to_cloud_error(e)),
                        };
                        for h in hooks {
                            let mut r = Resource::new(rt, format!("{g}:{}", h.name))
                                .with_name(&h.name)
                                .with_parent(&g);
                            put(&mut r.attrs, "autoscaling_group_name", g.clone());
                            put(&mut r.attrs, "name", h.name);
                            put(&mut r.attrs, "lifecycle_transition", h.transition);
                            put_opt(&mut r.attrs, "default_result", h.default_result);
                            put_opt(&mut r.attrs, "heartbeat_timeout", h.heartbeat_timeout);
                            put_opt(
                                &mut r.attrs,
                                "notification_target_arn",
                                h.notification_target_arn,
                            );
                            put_opt(&mut r.attrs, "role_arn", h.role_arn);
                            put_opt(
                                &mut r.attrs,
                                "notification_metadata",
                                h.notification_metadata,
                            );
                            out.push(r);
                        }
                    }
                }
            }
            R::Volume => {
                for v in self
                    .describe_volumes(&[], &ec2_filters(q, "volume-id", None))
                    .into_cloud()?
                {
                    let mut r = new_res(rt, &v.id, &v.tags);
                    put(
                        &mut r.attrs,
                        "availability_zone",
                        v.availability_zone.clone(),
                    );
                    put(&mut r.attrs, "size", v.size);
                    put(&mut r.attrs, "type", v.volume_type.clone());
                    put_opt(&mut r.attrs, "iops", v.iops);
                    put_opt(&mut r.attrs, "throughput", v.throughput);
                    put(&mut r.attrs, "encrypted", v.encrypted);
                    put_opt(&mut r.attrs, "kms_key_id", v.kms_key_id.clone());
                    out.push(r);
                }
            }
            R::LoadBalancer => {
                let lbs = self.describe_load_balancers(&[], &[]).into_cloud()?;
                let arns: Vec<String> = lbs.iter().map(|l| l.arn.clone()).collect();
                let tags = if arns.is_empty() {
                    BTreeMap::new()
                } else {
                    self.describe_elbv2_tags(&arns).into_cloud()?
                };
                for l in lbs {
                    let t = tags.get(&l.arn).cloned().unwrap_or_default();
                    let mut r = new_res(rt, &l.arn, &t).with_name(&l.name).with_arn(&l.arn);
                    put(&mut r.attrs, "name", l.name.clone());
                    put(
                        &mut r.attrs,
                        "load_balancer_type",
                        l.load_balancer_type.clone(),
                    );
                    put(&mut r.attrs, "internal", l.scheme == "internal");
                    put(&mut r.attrs, "ip_address_type", l.ip_address_type.clone());
                    put(&mut r.attrs, "security_groups", as_set(&l.security_groups));
                    put(
                        &mut r.attrs,
                        "subnet_mapping",
                        l.subnet_mappings
                            .iter()
                            .rev()
                            .map(|m| {
                                let mut o = Map::new();
                                o.insert("subnet_id".into(), m.subnet_id.clone().into());
                                if let Some(a) = &m.allocation_id {
                                    o.insert("allocation_id".into(), a.clone().into());
                                }
                                if let Some(a) = &m.private_ipv4_address {
                                    o.insert("private_ipv4_address".into(), a.clone().into());
                                }
                                if let Some(a) = &m.ipv6_address {
                                    o.insert("ipv6_address".into(), a.clone().into());
                                }
                                Json::Object(o)
                            })
                            .collect::<Vec<_>>(),
                    );
                    if let Some(v) = l.attributes.get("load_balancing.cross_zone.enabled") {
                        put(
                            &mut r.attrs,
                            "enable_cross_zone_load_balancing",
                            v == "true",
                        );
                    }
                    put(&mut r.attrs, "dns_name", l.dns_name.clone());
                    put(&mut r.attrs, "zone_id", l.canonical_hosted_zone_id.clone());
                    out.push(r);
                }
            }
            R::TargetGroup => {
                let tgs = self.describe_target_groups(&[], &[], None).into_cloud()?;
                let arns: Vec<String> = tgs.iter().map(|t| t.arn.clone()).collect();
                let tags = if arns.is_empty() {
                    BTreeMap::new()
                } else {
                    self.describe_elbv2_tags(&arns).into_cloud()?
                };
                for t in tgs {
                    let tg_tags = tags.get(&t.arn).cloned().unwrap_or_default();
                    let mut r = new_res(rt, &t.arn, &tg_tags)
                        .with_name(&t.name)
                        .with_arn(&t.arn);
                    put(&mut r.attrs, "name", t.name.clone());
                    put(&mut r.attrs, "port", t.port);
                    put(&mut r.attrs, "protocol", t.protocol.clone());
                    if !t.vpc_id.is_empty() {
                        put(&mut r.attrs, "vpc_id", t.vpc_id.clone());
                    }
                    put(&mut r.attrs, "target_type", t.target_type.clone());
                    if let Some(v) = t.attributes.get("deregistration_delay.timeout_seconds") {
                        put(&mut r.attrs, "deregistration_delay", v.clone());
                    }
                    if let Some(v) = t
                        .attributes
                        .get("deregistration_delay.connection_termination.enabled")
                    {
                        put(&mut r.attrs, "connection_termination", v == "true");
                    }
                    put(
                        &mut r.attrs,
                        "load_balancer_arns",
                        t.load_balancer_arns.clone(),
                    );
                    out.push(r);
                }
            }
            R::Listener => {
                let listeners = match self.describe_listeners(q.parent.as_deref(), &[]) {
                    Ok(l) => l,
                    Err(e) if e.is_not_found() => Vec::new(),
                    Err(e) => return Err(to_cloud_error(e)),
                };
                for l in listeners {
                    let mut r = Resource::new(rt, &l.arn)
                        .with_arn(&l.arn)
                        .with_parent(&l.load_balancer_arn);
                    put(
                        &mut r.attrs,
                        "load_balancer_arn",
                        l.load_balancer_arn.clone(),
                    );
                    put(&mut r.attrs, "port", l.spec.port);
                    put(&mut r.attrs, "protocol", l.spec.protocol.clone());
                    put_opt(
                        &mut r.attrs,
                        "certificate_arn",
                        l.spec.certificates.first().cloned(),
                    );
                    put_opt(&mut r.attrs, "ssl_policy", l.spec.ssl_policy.clone());
                    put(
                        &mut r.attrs,
                        "default_action",
                        l.spec
                            .default_actions
                            .iter()
                            .map(|a| {
                                let mut o = Map::new();
                                o.insert("type".into(), a.action_type.clone().into());
                                if let Some(t) = &a.target_group_arn {
                                    o.insert("target_group_arn".into(), t.clone().into());
                                }
                                Json::Object(o)
                            })
                            .collect::<Vec<_>>(),
                    );
                    out.push(r);
                }
            }
            R::RecordSet => {
                let zones: Vec<String> = match &q.parent {
                    Some(p) => vec![p.clone()],
                    None => self
                        .list_hosted_zones()
                        .into_cloud()?
                        .into_iter()
                        .map(|z| z.id)
                        .collect(),
                };
                for z in zones {
                    let records = match self.list_resource_record_sets(&z) {
                        Ok(r) => r,
                        Err(e) if e.is_not_found() => continue,
                        Err(e) => return Err(to_cloud_error(e)),
                    };
                    let short = z.trim_start_matches("/hostedzone/").to_owned();
                    for rs in records {
                        let name = rs.name.trim_end_matches('.').to_owned();
                        let mut r = Resource::new(rt, format!("{short}_{name}_{}", rs.record_type))
                            .with_parent(&z);
                        put(&mut r.attrs, "zone_id", z.clone());
                        put(&mut r.attrs, "name", name);
                        put(&mut r.attrs, "type", rs.record_type.clone());
                        put_opt(&mut r.attrs, "ttl", rs.ttl);
                        if !rs.records.is_empty() {
                            put(&mut r.attrs, "records", rs.records.clone());
                        }
                        if let Some(a) = &rs.alias_target {
                            put(
                                &mut r.attrs,
                                "alias",
                                json!({
                                    "name": a.dns_name,
                                    "zone_id": a.hosted_zone_id,
                                    "evaluate_target_health": a.evaluate_target_health,
                                }),
                            );
                        }
                        put_opt(&mut r.attrs, "set_identifier", rs.set_identifier.clone());
                        out.push(r);
                    }
                }
            }
            R::HostedZone => {
                for z in self.list_hosted_zones().into_cloud()? {
                    let mut r = new_res(rt, &z.id, &z.tags).with_name(z.name.trim_end_matches('.'));
                    put(
                        &mut r.attrs,
                        "name",
                        z.name.trim_end_matches('.').to_owned(),
                    );
                    put(&mut r.attrs, "private", z.private);
                    if !z.vpcs.is_empty() {
                        put(
                            &mut r.attrs,
                            "vpc",
                            z.vpcs
                                .iter()
                                .map(|v| json!({"vpc_id": v.vpc_id, "vpc_region": v.region}))
                                .collect::<Vec<_>>(),
                        );
                    }
                    put_opt(&mut r.attrs, "comment", z.comment.clone());
                    out.push(r);
                }
            }
            R::SqsQueue => {
                let urls: Vec<String> = if !q.names.is_empty() {
                    let mut urls = Vec::new();
                    for n in &q.names {
                        match self.get_queue_url(n) {
                            Ok(u) => urls.push(u),
                            Err(e) if e.is_not_found() => {}
                            Err(e) => return Err(to_cloud_error(e)),
                        }
                    }
                    urls
                } else {
                    self.list_queues("").into_cloud()?
                };
                for url in urls {
                    if !q.ids.is_empty() && !q.ids.contains(&url) {
                        continue;
                    }
                    let attrs = self.get_queue_attributes(&url).into_cloud()?;
                    let tags = self.list_queue_tags(&url).into_cloud()?;
                    let name = url.rsplit('/').next().unwrap_or_default().to_owned();
                    let arn = attrs.get("QueueArn").cloned().unwrap_or_default();
                    let mut r = new_res(rt, &url, &tags).with_name(&name).with_arn(arn);
                    put(&mut r.attrs, "name", name);
                    put_opt(
                        &mut r.attrs,
                        "message_retention_seconds",
                        attrs
                            .get("MessageRetentionPeriod")
                            .and_then(|v| v.parse::<i64>().ok()),
                    );
                    put_opt(&mut r.attrs, "policy", attrs.get("Policy").cloned());
                    out.push(r);
                }
            }
            R::EventRule => {
                for rule in self.list_rules("").into_cloud()? {
                    let tags = self.list_rule_tags(&rule.arn).into_cloud()?;
                    let mut r = new_res(rt, &rule.name, &tags)
                        .with_name(&rule.name)
                        .with_arn(&rule.arn);
                    put(&mut r.attrs, "name", rule.name.clone());
                    put_opt(&mut r.attrs, "event_pattern", rule.event_pattern.clone());
                    put_opt(
                        &mut r.attrs,
                        "schedule_expression",
                        rule.schedule_expression.clone(),
                    );
                    put_opt(&mut r.attrs, "description", rule.description.clone());
                    put(&mut r.attrs, "state", rule.state.clone());
                    out.push(r);
                }
            }
            R::EventTarget => {
                let rules: Vec<String> = match &q.parent {
                    Some(p) => vec![p.clone()],
                    None => self
                        .list_rules("")
                        .into_cloud()?
                        .into_iter()
                        .map(|r| r.name)
                        .collect(),
                };
                for rule in rules {
                    let targets = match self.list_targets_by_rule(&rule) {
                        Ok(t) => t,
                        Err(e) if e.is_not_found() => continue,
                        Err(e) => return Err(to_cloud_error(e)),
                    };
                    for t in targets {
                        let mut r =
                            Resource::new(rt, format!("{rule}:{}", t.id)).with_parent(&rule);
                        put(&mut r.attrs, "rule", rule.clone());
                        put(&mut r.attrs, "target_id", t.id.clone());
                        put(&mut r.attrs, "arn", t.arn.clone());
                        put_opt(&mut r.attrs, "input", t.input.clone());
                        out.push(r);
                    }
                }
            }
            R::S3Object => {
                let mut keys: Vec<(String, String)> = Vec::new();
                if !q.ids.is_empty() {
                    for id in &q.ids {
                        if let Some((b, k)) = id.split_once('/') {
                            keys.push((b.to_owned(), k.to_owned()));
                        }
                    }
                } else {
                    let buckets = match &q.parent {
                        Some(p) => vec![p.clone()],
                        None => self.list_buckets().into_cloud()?,
                    };
                    for b in buckets {
                        match self.list_objects(&b, "") {
                            Ok(ks) => keys.extend(ks.into_iter().map(|k| (b.clone(), k))),
                            Err(e) if e.is_not_found() => {}
                            Err(e) => return Err(to_cloud_error(e)),
                        }
                    }
                }
                for (b, k) in keys {
                    let o = match self.get_object(&b, &k) {
                        Ok(o) => o,
                        Err(e) if e.is_not_found() => continue,
                        Err(e) => return Err(to_cloud_error(e)),
                    };
                    let mut r = Resource::new(rt, format!("{b}/{k}")).with_parent(&b);
                    put(&mut r.attrs, "bucket", b.clone());
                    put(&mut r.attrs, "key", k.clone());
                    put(
                        &mut r.attrs,
                        "content",
                        String::from_utf8_lossy(&o.data).into_owned(),
                    );
                    put_opt(
                        &mut r.attrs,
                        "server_side_encryption",
                        o.server_side_encryption,
                    );
                    put_opt(&mut r.attrs, "acl", o.acl);
                    put_opt(&mut r.attrs, "content_type", o.content_type);
                    put(&mut r.attrs, "etag", o.etag);
                    out.push(r);
                }
            }
            R::Instance => {
                for i in self
                    .describe_instances(&[], &ec2_filters(q, "instance-id", None))
                    .into_cloud()?
                {
                    let mut r = new_res(rt, &i.id, &i.tags);
                    put(&mut r.attrs, "instance_type", i.instance_type.clone());
                    put(&mut r.attrs, "subnet_id", i.subnet_id.clone());
                    put(&mut r.attrs, "image_id", i.image_id.clone());
                    put(&mut r.attrs, "state", i.state.clone());
                    put(
                        &mut r.attrs,
                        "availability_zone",
                        i.availability_zone.clone(),
                    );
                    if !i.private_ip.is_empty() {
                        put(&mut r.attrs, "private_ip", i.private_ip.clone());
                    }
                    out.push(r);
                }
            }
            other => {
                return Err(CloudError::NotImplemented {
                    operation: format!("list {other}"),
                    implementer: "kops-mock".into(),
                });
            }
        }
        let mut out: Vec<Resource> = out
            .into_iter()
            .map(|r| self.finish(r))
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

/// The attributes [`MockAws::list_native`] derives from the mock's state, per type.
fn native_keys(rt: ResourceType) -> &'static [&'static str] {
    use ResourceType as R;
    match rt {
        R::Vpc => &[
            "cidr_block",
            "enable_dns_hostnames",
            "enable_dns_support",
            "ipv6_cidr_block",
        ],
        R::VpcCidrBlock => &["vpc_id", "cidr_block"],
        R::VpcIpv6CidrBlock => &["vpc_id", "ipv6_cidr_block"],
        R::DhcpOptions => &["domain_name", "domain_name_servers", "ntp_servers"],
        R::DhcpOptionsAssociation => &["vpc_id", "dhcp_options_id"],
        R::InternetGateway | R::EgressOnlyInternetGateway => &["vpc_id"],
        R::Subnet => &[
            "vpc_id",
            "availability_zone",
            "cidr_block",
            "ipv6_cidr_block",
            "ipv6_native",
            "map_public_ip_on_launch",
            "assign_ipv6_address_on_creation",
            "enable_dns64",
            "enable_resource_name_dns_a_record_on_launch",
            "enable_resource_name_dns_aaaa_record_on_launch",
            "private_dns_hostname_type_on_launch",
        ],
        R::RouteTable => &["vpc_id"],
        R::Route => &[
            "route_table_id",
            "destination_cidr_block",
            "destination_ipv6_cidr_block",
            "destination_prefix_list_id",
            "gateway_id",
            "nat_gateway_id",
            "egress_only_gateway_id",
            "instance_id",
            "transit_gateway_id",
            "network_interface_id",
            "vpc_peering_connection_id",
        ],
        R::RouteTableAssociation => &["route_table_id", "subnet_id"],
        R::ElasticIp => &["domain", "public_ip"],
        R::NatGateway => &["subnet_id", "allocation_id", "public_ip"],
        R::SecurityGroup => &["vpc_id", "description", "name"],
        R::SecurityGroupRule => &[
            "security_group_id",
            "type",
            "protocol",
            "from_port",
            "to_port",
            "cidr_blocks",
            "ipv6_cidr_blocks",
            "prefix_list_ids",
            "source_security_group_id",
            "description",
        ],
        R::IamRole => &[
            "assume_role_policy",
            "permissions_boundary",
            "description",
            "max_session_duration",
            "path",
            "unique_id",
        ],
        R::IamRolePolicy => &["role", "policy", "name"],
        R::IamRolePolicyAttachment => &["role", "policy_arn"],
        R::IamInstanceProfile => &["role", "path"],
        R::IamOidcProvider => &["url", "client_id_list", "thumbprint_list"],
        R::KeyPair => &["key_name", "public_key", "fingerprint", "key_pair_id"],
        R::LaunchTemplate => &[
            "name",
            "latest_version",
            "default_version",
            "image_id",
            "instance_type",
            "key_name",
            "user_data",
            "vpc_security_group_ids",
            "network_interfaces",
        ],
        R::AutoscalingGroup => &[
            "name",
            "min_size",
            "max_size",
            "desired_capacity",
            "vpc_zone_identifier",
            "launch_template",
            "target_group_arns",
            "load_balancers",
            "suspended_processes",
            "enabled_metrics",
            "metrics_granularity",
            "capacity_rebalance",
            "max_instance_lifetime",
            "health_check_type",
            "health_check_grace_period",
            "tag",
        ],
        R::WarmPool => &[
            "autoscaling_group_name",
            "min_size",
            "max_group_prepared_capacity",
            "pool_state",
            "instance_reuse_policy",
        ],
        R::LifecycleHook => &[
            "autoscaling_group_name",
            "name",
            "lifecycle_transition",
            "default_result",
            "heartbeat_timeout",
            "notification_target_arn",
            "role_arn",
            "notification_metadata",
        ],
        R::Volume => &[
            "availability_zone",
            "size",
            "type",
            "iops",
            "throughput",
            "encrypted",
            "kms_key_id",
        ],
        R::LoadBalancer => &[
            "name",
            "load_balancer_type",
            "internal",
            "ip_address_type",
            "security_groups",
            "subnet_mapping",
            "enable_cross_zone_load_balancing",
            "dns_name",
            "zone_id",
        ],
        R::TargetGroup => &[
            "name",
            "port",
            "protocol",
            "vpc_id",
            "target_type",
            "deregistration_delay",
            "connection_termination",
            "load_balancer_arns",
        ],
        R::Listener => &[
            "load_balancer_arn",
            "port",
            "protocol",
            "certificate_arn",
            "ssl_policy",
            "default_action",
        ],
        R::RecordSet => &[
            "zone_id",
            "name",
            "type",
            "ttl",
            "records",
            "alias",
            "set_identifier",
        ],
        R::HostedZone => &["name", "private", "vpc", "comment"],
        R::SqsQueue => &["name", "message_retention_seconds", "policy"],
        R::EventRule => &[
            "name",
            "event_pattern",
            "schedule_expression",
            "description",
            "state",
        ],
        R::EventTarget => &["rule", "target_id", "arn", "input"],
        R::S3Object => &[
            "bucket",
            "key",
            "content",
            "server_side_encryption",
            "acl",
            "content_type",
            "etag",
        ],
        R::Instance => &[
            "instance_type",
            "subnet_id",
            "image_id",
            "state",
            "availability_zone",
        ],
        _ => &[],
    }
}

const ROUTE_TARGETS: &[&str] = &[
    "gateway_id",
    "nat_gateway_id",
    "egress_only_gateway_id",
    "instance_id",
    "transit_gateway_id",
    "network_interface_id",
    "vpc_peering_connection_id",
];

fn route_attrs(a: &mut ResourceAttrs, r: &Route) {
    put_opt(
        a,
        "destination_cidr_block",
        r.destination_cidr_block.clone(),
    );
    put_opt(
        a,
        "destination_ipv6_cidr_block",
        r.destination_ipv6_cidr_block.clone(),
    );
    put_opt(
        a,
        "destination_prefix_list_id",
        r.destination_prefix_list_id.clone(),
    );
    put_opt(a, "gateway_id", r.gateway_id.clone());
    put_opt(a, "nat_gateway_id", r.nat_gateway_id.clone());
    put_opt(
        a,
        "egress_only_gateway_id",
        r.egress_only_internet_gateway_id.clone(),
    );
    put_opt(a, "instance_id", r.instance_id.clone());
    put_opt(a, "transit_gateway_id", r.transit_gateway_id.clone());
    put_opt(a, "network_interface_id", r.network_interface_id.clone());
    put_opt(
        a,
        "vpc_peering_connection_id",
        r.vpc_peering_connection_id.clone(),
    );
}

fn route_from(a: &Attrs) -> Route {
    Route {
        destination_cidr_block: a_str(a, "destination_cidr_block"),
        destination_ipv6_cidr_block: a_str(a, "destination_ipv6_cidr_block"),
        destination_prefix_list_id: a_str(a, "destination_prefix_list_id"),
        gateway_id: a_str(a, "gateway_id"),
        nat_gateway_id: a_str(a, "nat_gateway_id"),
        egress_only_internet_gateway_id: a_str(a, "egress_only_gateway_id"),
        instance_id: a_str(a, "instance_id"),
        transit_gateway_id: a_str(a, "transit_gateway_id"),
        network_interface_id: a_str(a, "network_interface_id"),
        vpc_peering_connection_id: a_str(a, "vpc_peering_connection_id"),
    }
}

fn rule_attrs(a: &mut ResourceAttrs, group: &str, egress: bool, s: &RuleSpec) {
    put(a, "security_group_id", group.to_owned());
    put(a, "type", if egress { "egress" } else { "ingress" });
    put(a, "protocol", s.ip_protocol.clone());
    // Terraform writes "all ports" as 0..0.
    put(a, "from_port", s.from_port.unwrap_or(0));
    put(a, "to_port", s.to_port.unwrap_or(0));
    if let Some(c) = &s.cidr_ipv4 {
        put(a, "cidr_blocks", vec![c.clone()]);
    }
    if let Some(c) = &s.cidr_ipv6 {
        put(a, "ipv6_cidr_blocks", vec![c.clone()]);
    }
    if let Some(c) = &s.prefix_list_id {
        put(a, "prefix_list_ids", vec![c.clone()]);
    }
    put_opt(a, "source_security_group_id", s.referenced_group_id.clone());
    put_opt(a, "description", s.description.clone());
}

fn rule_from(rt: ResourceType, a: &Attrs) -> CloudResult<(String, bool, RuleSpec)> {
    let group = a_str(a, "security_group_id")
        .ok_or_else(|| invalid(rt, "security_group_id", "is required"))?;
    let egress = match a_str(a, "type").as_deref() {
        Some("egress") => true,
        Some("ingress") | None => false,
        Some(other) => {
            return Err(invalid(
                rt,
                "type",
                format!("{other:?} is not ingress or egress"),
            ));
        }
    };
    let cidrs = a_list(a, "cidr_blocks");
    let v6 = a_list(a, "ipv6_cidr_blocks");
    let pls = a_list(a, "prefix_list_ids");
    let src = a_str(a, "source_security_group_id");
    let peers = cidrs.len() + v6.len() + pls.len() + usize::from(src.is_some());
    if peers != 1 {
        return Err(invalid(
            rt,
            "cidr_blocks",
            format!(
                "a rule needs exactly one peer (CIDR, IPv6 CIDR, prefix list or group), got {peers}"
            ),
        ));
    }
    let protocol = a_str(a, "protocol").unwrap_or_else(|| "-1".into());
    Ok((
        group,
        egress,
        RuleSpec {
            ip_protocol: protocol,
            from_port: a_i32(a, "from_port"),
            to_port: a_i32(a, "to_port"),
            cidr_ipv4: cidrs.into_iter().next(),
            cidr_ipv6: v6.into_iter().next(),
            prefix_list_id: pls.into_iter().next(),
            referenced_group_id: src,
            description: a_str(a, "description"),
        },
    ))
}

/// A list AWS holds as a set, listed in an order of its own: the mock reverses the order
/// the items were given in, so that a caller that compares such a list by position (the
/// subnets of an autoscaling group or a load balancer, its target groups) sees a change
/// on the mock as it would on AWS, where the order follows the IDs.
fn as_set(items: &[String]) -> Vec<String> {
    items.iter().rev().cloned().collect()
}

fn asg_attrs(a: &mut ResourceAttrs, g: &crate::asg::AutoScalingGroup) {
    let s = &g.spec;
    put(a, "name", s.name.clone());
    put(a, "min_size", s.min_size);
    put(a, "max_size", s.max_size);
    put_opt(a, "desired_capacity", s.desired_capacity);
    put(a, "vpc_zone_identifier", as_set(&s.subnets));
    if let Some(lt) = &s.launch_template {
        let mut o = Map::new();
        if let Some(id) = &lt.launch_template_id {
            o.insert("id".into(), id.clone().into());
        }
        if let Some(n) = &lt.launch_template_name {
            o.insert("name".into(), n.clone().into());
        }
        if let Some(v) = &lt.version {
            o.insert("version".into(), v.clone().into());
        }
        put(a, "launch_template", Json::Object(o));
    }
    put(a, "target_group_arns", as_set(&s.target_group_arns));
    put(a, "load_balancers", as_set(&s.load_balancer_names));
    put(a, "suspended_processes", s.suspended_processes.clone());
    put(a, "enabled_metrics", s.enabled_metrics.clone());
    put_opt(a, "metrics_granularity", s.metrics_granularity.clone());
    put_opt(a, "capacity_rebalance", s.capacity_rebalance);
    put_opt(a, "max_instance_lifetime", s.max_instance_lifetime);
    put_opt(a, "health_check_type", s.health_check_type.clone());
    put_opt(a, "health_check_grace_period", s.health_check_grace_period);
    put(
        a,
        "tag",
        g.tags
            .iter()
            .map(|(k, v)| {
                json!({"key": k, "value": v, "propagate_at_launch": g.propagate_at_launch.contains(k)})
            })
            .collect::<Vec<_>>(),
    );
}

fn template_spec(o: &Map<String, Json>) -> LaunchTemplateSpec {
    let s = |k: &str| o.get(k).and_then(Json::as_str).map(str::to_owned);
    LaunchTemplateSpec {
        launch_template_id: s("id").or(s("launch_template_id")),
        launch_template_name: s("name").or(s("launch_template_name")),
        version: s("version").or_else(|| o.get("version").map(|v| v.to_string())),
    }
}

fn asg_spec(rt: ResourceType, name: &str, a: &Attrs) -> CloudResult<AutoScalingGroupSpec> {
    let launch_template = a_obj(a, "launch_template").map(template_spec);
    let mixed = a_obj(a, "mixed_instances_policy").map(|m| {
        let lt = m.get("launch_template").and_then(obj_of);
        let spec = lt
            .and_then(|l| l.get("launch_template_specification"))
            .and_then(obj_of)
            .map(template_spec)
            .unwrap_or_default();
        let overrides = lt
            .and_then(|l| l.get("override"))
            .and_then(Json::as_array)
            .map(|v| {
                v.iter()
                    .filter_map(Json::as_object)
                    .filter_map(|o| {
                        Some(crate::asg::InstanceOverride {
                            instance_type: o.get("instance_type")?.as_str()?.to_owned(),
                            weighted_capacity: o
                                .get("weighted_capacity")
                                .and_then(Json::as_str)
                                .map(str::to_owned),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        MixedInstancesPolicy {
            launch_template: spec,
            overrides,
            ..MixedInstancesPolicy::default()
        }
    });
    let min = a_i32(a, "min_size").ok_or_else(|| invalid(rt, "min_size", "is required"))?;
    let max = a_i32(a, "max_size").ok_or_else(|| invalid(rt, "max_size", "is required"))?;
    Ok(AutoScalingGroupSpec {
        name: name.to_owned(),
        launch_template,
        mixed_instances_policy: mixed,
        min_size: min,
        max_size: max,
        desired_capacity: a_i32(a, "desired_capacity"),
        subnets: a_list(a, "vpc_zone_identifier"),
        target_group_arns: a_list(a, "target_group_arns"),
        load_balancer_names: a_list(a, "load_balancers"),
        health_check_type: a_str(a, "health_check_type"),
        health_check_grace_period: a_i32(a, "health_check_grace_period"),
        termination_policies: a_list(a, "termination_policies"),
        suspended_processes: a_list(a, "suspended_processes"),
        enabled_metrics: a_list(a, "enabled_metrics"),
        metrics_granularity: a_str(a, "metrics_granularity"),
        max_instance_lifetime: a_i32(a, "max_instance_lifetime"),
        capacity_rebalance: a_bool(a, "capacity_rebalance"),
    })
}

/// ASG tags: the request's tags propagate at launch; a `tag` attribute list overrides.
fn asg_tags(tags: &Tags, a: &Attrs) -> BTreeMap<String, (String, bool)> {
    let mut out: BTreeMap<String, (String, bool)> = tags
        .iter()
        .map(|(k, v)| (k.clone(), (v.clone(), true)))
        .collect();
    for t in objs(a, "tag") {
        if let Some(k) = a_str(&t, "key") {
            out.insert(
                k,
                (
                    a_str(&t, "value").unwrap_or_default(),
                    a_bool(&t, "propagate_at_launch").unwrap_or(true),
                ),
            );
        }
    }
    out
}

fn lt_data(a: &Attrs) -> LaunchTemplateData {
    let profile = match a.get("iam_instance_profile") {
        Some(Json::String(s)) => Some(s.clone()),
        Some(v) => obj_of(v).and_then(|o| {
            o.get("name")
                .or(o.get("arn"))
                .and_then(Json::as_str)
                .map(str::to_owned)
        }),
        None => None,
    };
    let network_interfaces = objs(a, "network_interfaces")
        .into_iter()
        .map(|n| NetworkInterfaceSpec {
            device_index: a_i32(&n, "device_index").unwrap_or(0),
            associate_public_ip_address: a_bool(&n, "associate_public_ip_address"),
            delete_on_termination: a_bool(&n, "delete_on_termination"),
            groups: a_list(&n, "security_groups"),
            ipv6_address_count: a_i32(&n, "ipv6_address_count"),
        })
        .collect();
    let mut tag_specifications = BTreeMap::new();
    for t in objs(a, "tag_specifications") {
        if let (Some(rt), Some(Json::Object(tags))) = (a_str(&t, "resource_type"), t.get("tags")) {
            tag_specifications.insert(
                rt,
                tags.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect(),
            );
        }
    }
    LaunchTemplateData {
        image_id: a_str(a, "image_id"),
        instance_type: a_str(a, "instance_type"),
        key_name: a_str(a, "key_name"),
        iam_instance_profile: profile,
        security_group_ids: a_list(a, "vpc_security_group_ids"),
        user_data: a_str(a, "user_data"),
        network_interfaces,
        tag_specifications,
        ebs_optimized: a_bool(a, "ebs_optimized"),
        ..LaunchTemplateData::default()
    }
}

/// The settings of a template's latest version the mock models (the ones an instance
/// launched from it gets: image, type, key, user data, security groups), read from that
/// version, as the SDK backend reads `$Latest`: a version made outside the model shows.
/// The network interfaces keep what the caller sent but for their security groups.
fn lt_version_attrs(out: &mut ResourceAttrs, raw: &Attrs, data: &LaunchTemplateData) {
    put_opt(out, "image_id", data.image_id.clone());
    put_opt(out, "instance_type", data.instance_type.clone());
    put_opt(out, "key_name", data.key_name.clone());
    put_opt(out, "user_data", data.user_data.clone());
    put(
        out,
        "vpc_security_group_ids",
        Json::from(data.security_group_ids.clone()),
    );
    let mut interfaces = objs(raw, "network_interfaces");
    for (sent, held) in interfaces.iter_mut().zip(&data.network_interfaces) {
        sent.insert("security_groups".into(), Json::from(held.groups.clone()));
    }
    if !interfaces.is_empty() {
        let list: Vec<Json> = interfaces
            .into_iter()
            .map(|a| Json::Object(a.into_iter().collect()))
            .collect();
        put(out, "network_interfaces", Json::Array(list));
    }
}

fn health_check(a: &Attrs) -> HealthCheck {
    let Some(h) = a_obj(a, "health_check") else {
        return HealthCheck::default();
    };
    let h = m_attrs(h);
    HealthCheck {
        protocol: a_str(&h, "protocol"),
        port: a_str(&h, "port"),
        path: a_str(&h, "path"),
        interval_seconds: a_i32(&h, "interval"),
        timeout_seconds: a_i32(&h, "timeout"),
        healthy_threshold_count: a_i32(&h, "healthy_threshold"),
        unhealthy_threshold_count: a_i32(&h, "unhealthy_threshold"),
    }
}

fn tg_attributes(a: &Attrs) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    if let Some(v) = a_str(a, "deregistration_delay") {
        m.insert("deregistration_delay.timeout_seconds".into(), v);
    }
    if let Some(v) = a_bool(a, "connection_termination") {
        m.insert(
            "deregistration_delay.connection_termination.enabled".into(),
            v.to_string(),
        );
    }
    m
}

fn listener_spec(rt: ResourceType, a: &Attrs) -> CloudResult<ListenerSpec> {
    let actions = objs(a, "default_action")
        .into_iter()
        .map(|o| Action {
            action_type: a_str(&o, "type").unwrap_or_else(|| "forward".into()),
            target_group_arn: a_str(&o, "target_group_arn"),
        })
        .collect();
    Ok(ListenerSpec {
        port: a_i32(a, "port").ok_or_else(|| invalid(rt, "port", "is required"))?,
        protocol: a_str(a, "protocol").unwrap_or_else(|| "TCP".into()),
        certificates: a_str(a, "certificate_arn").into_iter().collect(),
        ssl_policy: a_str(a, "ssl_policy"),
        default_actions: actions,
    })
}

fn subnet_mappings(a: &Attrs) -> Vec<SubnetMapping> {
    let mut m: Vec<SubnetMapping> = objs(a, "subnet_mapping")
        .into_iter()
        .filter_map(|o| {
            Some(SubnetMapping {
                subnet_id: a_str(&o, "subnet_id")?,
                allocation_id: a_str(&o, "allocation_id"),
                private_ipv4_address: a_str(&o, "private_ipv4_address"),
                ipv6_address: a_str(&o, "ipv6_address"),
            })
        })
        .collect();
    if m.is_empty() {
        m = a_list(a, "subnets")
            .into_iter()
            .map(|s| SubnetMapping {
                subnet_id: s,
                ..SubnetMapping::default()
            })
            .collect();
    }
    m
}

fn record_from(a: &Attrs) -> RecordSet {
    RecordSet {
        name: a_str(a, "name").unwrap_or_default(),
        record_type: a_str(a, "type").unwrap_or_default(),
        ttl: a_int(a, "ttl"),
        records: a_list(a, "records"),
        alias_target: a_obj(a, "alias").map(|o| {
            let o = m_attrs(o);
            AliasTarget {
                dns_name: a_str(&o, "name").unwrap_or_default(),
                hosted_zone_id: a_str(&o, "zone_id").unwrap_or_default(),
                evaluate_target_health: a_bool(&o, "evaluate_target_health").unwrap_or(false),
            }
        }),
        set_identifier: a_str(a, "set_identifier"),
    }
}

fn zone_vpcs(a: &Attrs, region: &str) -> Vec<ZoneVpc> {
    objs(a, "vpc")
        .into_iter()
        .filter_map(|o| {
            Some(ZoneVpc {
                vpc_id: a_str(&o, "vpc_id")?,
                region: a_str(&o, "vpc_region").unwrap_or_else(|| region.to_owned()),
            })
        })
        .collect()
}

fn queue_attributes(a: &Attrs) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    if let Some(v) = a_str(a, "message_retention_seconds") {
        m.insert("MessageRetentionPeriod".into(), v);
    }
    if let Some(v) = a_str(a, "policy") {
        m.insert("Policy".into(), v);
    }
    if let Some(v) = a_str(a, "visibility_timeout_seconds") {
        m.insert("VisibilityTimeout".into(), v);
    }
    m
}

fn subnet_attributes(a: &Attrs) -> SubnetAttributes {
    SubnetAttributes {
        map_public_ip_on_launch: a_bool(a, "map_public_ip_on_launch"),
        assign_ipv6_address_on_creation: a_bool(a, "assign_ipv6_address_on_creation"),
        enable_dns64: a_bool(a, "enable_dns64"),
        enable_resource_name_dns_a_record_on_launch: a_bool(
            a,
            "enable_resource_name_dns_a_record_on_launch",
        ),
        enable_resource_name_dns_aaaa_record_on_launch: a_bool(
            a,
            "enable_resource_name_dns_aaaa_record_on_launch",
        ),
        private_dns_hostname_type_on_launch: a_str(a, "private_dns_hostname_type_on_launch"),
    }
}

impl MockAws {
    fn create_native(&self, req: &CreateRequest) -> CloudResult<Resource> {
        use ResourceType as R;
        let rt = req.resource_type;
        let a = &req.attrs;
        let tags = if rt.is_taggable() {
            req.tags.clone()
        } else {
            Tags::new()
        };
        let need = |k: &str| a_str(a, k).ok_or_else(|| invalid(rt, k, "is required"));
        let name = || {
            req.name
                .clone()
                .or_else(|| a_str(a, "name"))
                .ok_or_else(|| invalid(rt, "name", "is required"))
        };
        let parent_or = |k: &str| {
            a_str(a, k)
                .or(req.parent.clone())
                .ok_or_else(|| invalid(rt, k, "is required"))
        };
        let id: String = match rt {
            R::Vpc => {
                let v = self
                    .create_vpc(
                        &need("cidr_block")?,
                        a_bool(a, "assign_generated_ipv6_cidr_block").unwrap_or(false),
                        tags,
                    )
                    .into_cloud()?;
                let (h, s) = (
                    a_bool(a, "enable_dns_hostnames"),
                    a_bool(a, "enable_dns_support"),
                );
                if h.is_some() || s.is_some() {
                    self.modify_vpc_attribute(&v.id, h, s).into_cloud()?;
                }
                v.id
            }
            R::VpcCidrBlock => {
                self.associate_vpc_cidr_block(
                    &parent_or("vpc_id")?,
                    VpcCidr::Ipv4(need("cidr_block")?),
                )
                .into_cloud()?
                .association_id
            }
            R::VpcIpv6CidrBlock => {
                let cidr = match (
                    a_bool(a, "amazon_provided_ipv6_cidr_block"),
                    a_str(a, "ipv6_cidr_block"),
                ) {
                    (Some(false), Some(c)) | (None, Some(c)) => VpcCidr::Ipv6(c),
                    _ => VpcCidr::AmazonIpv6,
                };
                self.associate_vpc_cidr_block(&parent_or("vpc_id")?, cidr)
                    .into_cloud()?
                    .association_id
            }
            R::DhcpOptions => {
                let mut conf = BTreeMap::new();
                if let Some(d) = a_str(a, "domain_name") {
                    conf.insert("domain-name".to_owned(), vec![d]);
                }
                for (attr, key) in [
                    ("domain_name_servers", "domain-name-servers"),
                    ("ntp_servers", "ntp-servers"),
                ] {
                    let v = a_list(a, attr);
                    if !v.is_empty() {
                        conf.insert(key.to_owned(), v);
                    }
                }
                self.create_dhcp_options(conf, tags).into_cloud()?.id
            }
            R::DhcpOptionsAssociation => {
                let vpc = need("vpc_id")?;
                self.associate_dhcp_options(&need("dhcp_options_id")?, &vpc)
                    .into_cloud()?;
                vpc
            }
            R::InternetGateway => {
                let g = self.create_internet_gateway(tags).into_cloud()?;
                if let Some(v) = a_str(a, "vpc_id") {
                    self.attach_internet_gateway(&g.id, &v).into_cloud()?;
                }
                g.id
            }
            R::EgressOnlyInternetGateway => {
                self.create_egress_only_internet_gateway(&need("vpc_id")?, tags)
                    .into_cloud()?
                    .id
            }
            R::Subnet => {
                let s = self
                    .create_subnet(CreateSubnet {
                        vpc_id: need("vpc_id")?,
                        availability_zone: need("availability_zone")?,
                        cidr_block: a_str(a, "cidr_block"),
                        ipv6_cidr_block: a_str(a, "ipv6_cidr_block"),
                        ipv6_native: a_bool(a, "ipv6_native").unwrap_or(false),
                        tags,
                    })
                    .into_cloud()?;
                let attrs = subnet_attributes(a);
                if attrs != SubnetAttributes::default() {
                    self.modify_subnet_attribute(&s.id, attrs).into_cloud()?;
                }
                s.id
            }
            R::RouteTable => {
                self.create_route_table(&need("vpc_id")?, tags)
                    .into_cloud()?
                    .id
            }
            R::Route => {
                let rtb = parent_or("route_table_id")?;
                let route = route_from(a);
                let dest = route_destination(&route);
                self.create_route(&rtb, route).into_cloud()?;
                format!("{rtb}_{dest}")
            }
            R::RouteTableAssociation => self
                .associate_route_table(&parent_or("route_table_id")?, &need("subnet_id")?)
                .into_cloud()?,
            R::ElasticIp => self.allocate_address(tags).into_cloud()?.allocation_id,
            R::NatGateway => {
                self.create_nat_gateway(
                    &need("subnet_id")?,
                    a_str(a, "allocation_id").as_deref(),
                    tags,
                )
                .into_cloud()?
                .id
            }
            R::SecurityGroup => {
                self.create_security_group(
                    &name()?,
                    &a_str(a, "description").unwrap_or_default(),
                    &need("vpc_id")?,
                    tags,
                )
                .into_cloud()?
                .id
            }
            R::SecurityGroupRule => {
                let mut attrs = a.clone();
                if !attrs.contains_key("security_group_id")
                    && let Some(p) = &req.parent
                {
                    attrs.insert("security_group_id".into(), p.clone().into());
                }
                let (group, egress, spec) = rule_from(rt, &attrs)?;
                let made = if egress {
                    self.authorize_security_group_egress(&group, vec![spec], Tags::new())
                } else {
                    self.authorize_security_group_ingress(&group, vec![spec], Tags::new())
                }
                .into_cloud()?;
                made.into_iter()
                    .next()
                    .map(|r| r.id)
                    .ok_or_else(|| CloudError::other("ec2:AuthorizeSecurityGroupRules"))?
            }
            R::IamRole => {
                self.create_role(CreateRole {
                    name: name()?,
                    path: a_str(a, "path").unwrap_or_default(),
                    assume_role_policy_document: need("assume_role_policy")?,
                    description: a_str(a, "description"),
                    max_session_duration: a_i32(a, "max_session_duration"),
                    permissions_boundary: a_str(a, "permissions_boundary"),
                    tags,
                })
                .into_cloud()?
                .name
            }
            R::IamRolePolicy => {
                let role = parent_or("role")?;
                let policy = name()?;
                self.put_role_policy(&role, &policy, &need("policy")?)
                    .into_cloud()?;
                format!("{role}:{policy}")
            }
            R::IamRolePolicyAttachment => {
                let role = parent_or("role")?;
                let arn = need("policy_arn")?;
                self.attach_role_policy(&role, &arn).into_cloud()?;
                format!("{role}:{arn}")
            }
            R::IamInstanceProfile => {
                let n = name()?;
                self.create_instance_profile(&n, &a_str(a, "path").unwrap_or_default(), tags)
                    .into_cloud()?;
                if let Some(role) = a_str(a, "role") {
                    self.add_role_to_instance_profile(&n, &role).into_cloud()?;
                }
                n
            }
            R::IamOidcProvider => {
                self.create_oidc_provider(
                    &need("url")?,
                    a_list(a, "client_id_list"),
                    a_list(a, "thumbprint_list"),
                    tags,
                )
                .into_cloud()?
                .arn
            }
            R::KeyPair => {
                let n = a_str(a, "key_name")
                    .or(req.name.clone())
                    .ok_or_else(|| invalid(rt, "key_name", "is required"))?;
                self.import_key_pair(&n, &need("public_key")?, tags)
                    .into_cloud()?
                    .name
            }
            R::LaunchTemplate => {
                let t = self
                    .create_launch_template(&name()?, lt_data(a), tags)
                    .into_cloud()?;
                t.id
            }
            R::AutoscalingGroup => {
                let n = name()?;
                let spec = asg_spec(rt, &n, a)?;
                self.create_auto_scaling_group(spec, asg_tags(&req.tags, a))
                    .into_cloud()?
                    .spec
                    .name
            }
            R::WarmPool => {
                let g = parent_or("autoscaling_group_name")?;
                self.put_warm_pool(&g, warm_pool(a)).into_cloud()?;
                g
            }
            R::LifecycleHook => {
                let g = parent_or("autoscaling_group_name")?;
                let n = name()?;
                self.put_lifecycle_hook(hook(&g, &n, a)?).into_cloud()?;
                format!("{g}:{n}")
            }
            R::Volume => {
                self.create_volume(CreateVolume {
                    availability_zone: need("availability_zone")?,
                    size: a_i32(a, "size").ok_or_else(|| invalid(rt, "size", "is required"))?,
                    volume_type: a_str(a, "type").unwrap_or_default(),
                    iops: a_i32(a, "iops"),
                    throughput: a_i32(a, "throughput"),
                    encrypted: a_bool(a, "encrypted").unwrap_or(false),
                    kms_key_id: a_str(a, "kms_key_id"),
                    tags,
                })
                .into_cloud()?
                .id
            }
            R::LoadBalancer => {
                let lb = self
                    .create_load_balancer(CreateLoadBalancer {
                        name: name()?,
                        load_balancer_type: a_str(a, "load_balancer_type").unwrap_or_default(),
                        scheme: match a_bool(a, "internal") {
                            Some(true) => "internal".into(),
                            _ => String::new(),
                        },
                        subnet_mappings: subnet_mappings(a),
                        security_groups: a_list(a, "security_groups"),
                        ip_address_type: a_str(a, "ip_address_type").unwrap_or_default(),
                        tags,
                    })
                    .into_cloud()?;
                if let Some(v) = a_bool(a, "enable_cross_zone_load_balancing") {
                    self.modify_load_balancer_attributes(
                        &lb.arn,
                        [(
                            "load_balancing.cross_zone.enabled".to_owned(),
                            v.to_string(),
                        )]
                        .into(),
                    )
                    .into_cloud()?;
                }
                lb.arn
            }
            R::TargetGroup => {
                let tg = self
                    .create_target_group(CreateTargetGroup {
                        name: name()?,
                        protocol: a_str(a, "protocol").unwrap_or_else(|| "TCP".into()),
                        port: a_i32(a, "port").ok_or_else(|| invalid(rt, "port", "is required"))?,
                        vpc_id: need("vpc_id")?,
                        target_type: a_str(a, "target_type").unwrap_or_default(),
                        health_check: health_check(a),
                        tags,
                    })
                    .into_cloud()?;
                let attrs = tg_attributes(a);
                if !attrs.is_empty() {
                    self.modify_target_group_attributes(&tg.arn, attrs)
                        .into_cloud()?;
                }
                tg.arn
            }
            R::Listener => {
                self.create_listener(
                    &parent_or("load_balancer_arn")?,
                    listener_spec(rt, a)?,
                    Tags::new(),
                )
                .into_cloud()?
                .arn
            }
            R::RecordSet => {
                let zone = parent_or("zone_id")?;
                let rs = record_from(a);
                let z = self.get_hosted_zone(&zone).into_cloud()?;
                let id = record_id(&z.id, &rs);
                self.change_resource_record_sets(
                    &z.id,
                    vec![Change {
                        action: ChangeAction::Create,
                        record_set: rs,
                    }],
                )
                .into_cloud()?;
                id
            }
            R::HostedZone => {
                let region = self.options().region.clone();
                let vpcs = zone_vpcs(a, &region);
                let n = a_str(a, "name")
                    .or(req.name.clone())
                    .ok_or_else(|| invalid(rt, "name", "is required"))?;
                let z = self
                    .create_hosted_zone(&n, vpcs.first().cloned(), a_str(a, "comment"), tags)
                    .into_cloud()?;
                for v in vpcs.into_iter().skip(1) {
                    self.associate_vpc_with_hosted_zone(&z.id, v).into_cloud()?;
                }
                z.id
            }
            R::SqsQueue => {
                self.create_queue(&name()?, queue_attributes(a), tags)
                    .into_cloud()?
                    .url
            }
            R::EventRule => {
                let n = name()?;
                self.put_rule(PutRule {
                    name: n.clone(),
                    event_pattern: a_str(a, "event_pattern"),
                    schedule_expression: a_str(a, "schedule_expression"),
                    state: a_str(a, "state"),
                    description: a_str(a, "description"),
                    tags,
                })
                .into_cloud()?;
                n
            }
            R::EventTarget => {
                let rule = parent_or("rule")?;
                let tid = match a_str(a, "target_id").or(req.name.clone()) {
                    Some(t) => t,
                    // Terraform generates an id when none is given; so do we.
                    None => self.fresh_target_id(&rule),
                };
                self.put_targets(
                    &rule,
                    vec![Target {
                        id: tid.clone(),
                        arn: need("arn")?,
                        input: a_str(a, "input"),
                    }],
                )
                .into_cloud()?;
                format!("{rule}:{tid}")
            }
            R::S3Object => {
                let bucket = parent_or("bucket")?;
                let key = need("key")?;
                let opts = put_options(a);
                self.put_object(
                    &bucket,
                    &key,
                    a_str(a, "content").unwrap_or_default().into_bytes(),
                    opts,
                )
                .into_cloud()?;
                format!("{bucket}/{key}")
            }
            R::Instance => {
                let made = self
                    .run_instances(crate::ec2::RunInstances {
                        image_id: a_str(a, "image_id"),
                        instance_type: a_str(a, "instance_type"),
                        subnet_id: need("subnet_id")?,
                        count: 1,
                        tags,
                        ..Default::default()
                    })
                    .into_cloud()?;
                made.into_iter()
                    .next()
                    .map(|i| i.id)
                    .ok_or_else(|| CloudError::other("ec2:RunInstances"))?
            }
            other => {
                return Err(CloudError::NotImplemented {
                    operation: format!("create {other}"),
                    implementer: "kops-mock".into(),
                });
            }
        };
        self.raw_set(rt, &id, a.clone());
        self.one(rt, &id)
    }

    fn update_native(&self, req: &UpdateRequest) -> CloudResult<Resource> {
        use ResourceType as R;
        let rt = req.resource_type;
        let id = req.id.as_str();
        let current = self.one(rt, id)?;
        self.raw_merge(rt, id, &req.attrs);
        let a = &req.attrs;
        // The full desired state: what the object has now, with the changes on top. A new
        // route target replaces the old one.
        let mut merged = current.attrs.to_map();
        if rt == R::Route && a.keys().any(|k| ROUTE_TARGETS.contains(&k.as_str())) {
            merged.retain(|k, _| !ROUTE_TARGETS.contains(&k.as_str()));
        }
        merged.extend(a.iter().map(|(k, v)| (k.clone(), v.clone())));
        let changed = |k: &str| a.contains_key(k) && current.attrs.get(k) != a.get(k);
        // What cannot change in place, from the one table of facts.
        let fixed = immutable_changes(rt, &current.attrs, a);
        if !fixed.is_empty() {
            return Err(CloudError::immutable(rt.terraform_type(), &fixed));
        }
        match rt {
            R::Vpc => {
                let (h, s) = (
                    a_bool(a, "enable_dns_hostnames"),
                    a_bool(a, "enable_dns_support"),
                );
                if h.is_some() || s.is_some() {
                    self.modify_vpc_attribute(id, h, s).into_cloud()?;
                }
            }
            R::DhcpOptionsAssociation => {
                if let Some(d) = a_str(a, "dhcp_options_id") {
                    self.associate_dhcp_options(&d, id).into_cloud()?;
                }
            }
            R::InternetGateway => {
                if changed("vpc_id") {
                    if let Some(old) = current.attr_str("vpc_id") {
                        self.detach_internet_gateway(id, old).into_cloud()?;
                    }
                    if let Some(new) = a_str(a, "vpc_id") {
                        self.attach_internet_gateway(id, &new).into_cloud()?;
                    }
                }
            }
            R::Subnet => {
                let attrs = subnet_attributes(a);
                if attrs != SubnetAttributes::default() {
                    self.modify_subnet_attribute(id, attrs).into_cloud()?;
                }
                if changed("ipv6_cidr_block")
                    && !current.attrs.contains_key("ipv6_cidr_block")
                    && let Some(c) = a_str(a, "ipv6_cidr_block")
                {
                    self.associate_subnet_cidr_block(id, &c).into_cloud()?;
                }
            }
            R::Route => {
                let (rtb, _) = split2(rt, id, '_')?;
                let route = route_from(&merged);
                self.replace_route(rtb, route).into_cloud()?;
            }
            R::RouteTableAssociation => {
                // ReplaceRouteTableAssociation: the subnet moves to the other table under
                // a new association id (the one answered).
                if changed("route_table_id")
                    && let Some(rtb) = a_str(a, "route_table_id")
                {
                    let new_id = self
                        .replace_route_table_association(id, &rtb)
                        .into_cloud()?;
                    return self.one(rt, &new_id);
                }
            }
            R::SecurityGroup => {}
            R::SecurityGroupRule => {
                // Only the description of a rule can change in place.
                if a.contains_key("description") {
                    self.modify_security_group_rule_description(id, a_str(a, "description"))
                        .into_cloud()?;
                }
            }
            R::IamRole => {
                if let Some(d) = a_str(a, "assume_role_policy") {
                    self.update_assume_role_policy(id, &d).into_cloud()?;
                }
                if a.contains_key("permissions_boundary") {
                    self.set_role_permissions_boundary(id, a_str(a, "permissions_boundary"))
                        .into_cloud()?;
                }
                if a.contains_key("description") || a.contains_key("max_session_duration") {
                    self.update_role(
                        id,
                        a_str(a, "description"),
                        a_i32(a, "max_session_duration"),
                    )
                    .into_cloud()?;
                }
            }
            R::IamRolePolicy => {
                let (role, policy) = split2(rt, id, ':')?;
                if let Some(d) = a_str(a, "policy") {
                    self.put_role_policy(role, policy, &d).into_cloud()?;
                }
            }
            R::IamInstanceProfile => {
                if changed("role") {
                    if let Some(old) = current.attr_str("role") {
                        self.remove_role_from_instance_profile(id, old)
                            .into_cloud()?;
                    }
                    if let Some(new) = a_str(a, "role") {
                        self.add_role_to_instance_profile(id, &new).into_cloud()?;
                    }
                }
            }
            R::IamOidcProvider => {
                if a.contains_key("thumbprint_list") {
                    self.update_oidc_thumbprints(id, a_list(a, "thumbprint_list"))
                        .into_cloud()?;
                }
                if a.contains_key("client_id_list") {
                    let want = a_list(a, "client_id_list");
                    let have = list_of(current.attrs.get("client_id_list"));
                    for c in want.iter().filter(|c| !have.contains(c)) {
                        self.add_oidc_client_id(id, c).into_cloud()?;
                    }
                    for c in have.iter().filter(|c| !want.contains(c)) {
                        self.remove_oidc_client_id(id, c).into_cloud()?;
                    }
                }
            }
            R::KeyPair => {}
            R::LaunchTemplate => {
                if !a.is_empty() {
                    // A new version with the full data (callers send the changed fields).
                    self.create_launch_template_version(
                        &TemplateRef::Id(id.to_owned()),
                        lt_data(&merged),
                        None,
                        None,
                    )
                    .into_cloud()?;
                }
            }
            R::AutoscalingGroup => {
                if a.keys().any(|k| k != "tag") {
                    let spec = asg_spec(rt, id, &merged)?;
                    self.update_auto_scaling_group(spec).into_cloud()?;
                }
                if a.contains_key("tag") || req.tags.is_some() {
                    let current_tags = current.tags.to_map();
                    let want = asg_tags(req.tags.as_ref().unwrap_or(&current_tags), &merged);
                    let stale: Vec<String> = current
                        .tags
                        .keys()
                        .filter(|k| !want.contains_key(*k))
                        .map(str::to_owned)
                        .collect();
                    if !stale.is_empty() {
                        self.delete_asg_tags(id, &stale).into_cloud()?;
                    }
                    self.create_or_update_asg_tags(id, want).into_cloud()?;
                }
            }
            R::WarmPool => self.put_warm_pool(id, warm_pool(&merged)).into_cloud()?,
            R::LifecycleHook => {
                let (g, n) = split2(rt, id, ':')?;
                self.put_lifecycle_hook(hook(g, n, &merged)?).into_cloud()?;
            }
            R::Volume => {
                if a.keys()
                    .any(|k| ["size", "type", "iops", "throughput"].contains(&k.as_str()))
                {
                    self.modify_volume(
                        id,
                        a_i32(a, "size"),
                        a_str(a, "type"),
                        a_i32(a, "iops"),
                        a_i32(a, "throughput"),
                    )
                    .into_cloud()?;
                }
            }
            R::LoadBalancer => {
                if a.contains_key("subnet_mapping") || a.contains_key("subnets") {
                    self.set_load_balancer_subnets(id, subnet_mappings(&merged))
                        .into_cloud()?;
                }
                if a.contains_key("security_groups") {
                    self.set_load_balancer_security_groups(id, a_list(a, "security_groups"))
                        .into_cloud()?;
                }
                if let Some(v) = a_bool(a, "enable_cross_zone_load_balancing") {
                    self.modify_load_balancer_attributes(
                        id,
                        [(
                            "load_balancing.cross_zone.enabled".to_owned(),
                            v.to_string(),
                        )]
                        .into(),
                    )
                    .into_cloud()?;
                }
            }
            R::TargetGroup => {
                if a.contains_key("health_check") {
                    self.modify_target_group(id, health_check(&merged))
                        .into_cloud()?;
                }
                let attrs = tg_attributes(a);
                if !attrs.is_empty() {
                    self.modify_target_group_attributes(id, attrs)
                        .into_cloud()?;
                }
            }
            R::Listener => {
                self.modify_listener(id, listener_spec(rt, &merged)?)
                    .into_cloud()?;
            }
            R::RecordSet => {
                let zone = current
                    .parent
                    .clone()
                    .ok_or_else(|| invalid(rt, "zone_id", "unknown"))?;
                self.change_resource_record_sets(
                    &zone,
                    vec![Change {
                        action: ChangeAction::Upsert,
                        record_set: record_from(&merged),
                    }],
                )
                .into_cloud()?;
            }
            R::HostedZone => {
                if a.contains_key("vpc") {
                    let region = self.options().region.clone();
                    let want = zone_vpcs(a, &region);
                    let have = zone_vpcs(&current.attrs.to_map(), &region);
                    for v in want.iter().filter(|v| !have.contains(v)) {
                        self.associate_vpc_with_hosted_zone(id, v.clone())
                            .into_cloud()?;
                    }
                    for v in have.iter().filter(|v| !want.contains(v)) {
                        self.disassociate_vpc_from_hosted_zone(id, v).into_cloud()?;
                    }
                }
            }
            R::SqsQueue => {
                let attrs = queue_attributes(a);
                if !attrs.is_empty() {
                    self.set_queue_attributes(id, attrs).into_cloud()?;
                }
            }
            R::EventRule => {
                self.put_rule(PutRule {
                    name: id.to_owned(),
                    event_pattern: a_str(&merged, "event_pattern"),
                    schedule_expression: a_str(&merged, "schedule_expression"),
                    state: a_str(&merged, "state"),
                    description: a_str(&merged, "description"),
                    tags: Tags::new(),
                })
                .into_cloud()?;
            }
            R::EventTarget => {
                let (rule, tid) = split2(rt, id, ':')?;
                self.put_targets(
                    rule,
                    vec![Target {
                        id: tid.to_owned(),
                        arn: a_str(&merged, "arn").unwrap_or_default(),
                        input: a_str(&merged, "input"),
                    }],
                )
                .into_cloud()?;
            }
            R::S3Object => {
                let (bucket, key) = split2(rt, id, '/')?;
                let opts = put_options(&merged);
                self.put_object(
                    bucket,
                    key,
                    a_str(&merged, "content").unwrap_or_default().into_bytes(),
                    opts,
                )
                .into_cloud()?;
            }
            R::VpcCidrBlock
            | R::VpcIpv6CidrBlock
            | R::DhcpOptions
            | R::EgressOnlyInternetGateway
            | R::RouteTable
            | R::ElasticIp
            | R::NatGateway
            | R::IamRolePolicyAttachment
            | R::Instance => {
                // The mock changes nothing else of these in place.
                let keys: Vec<&str> = a
                    .keys()
                    .filter(|k| current.attrs.get(k) != a.get(*k))
                    .map(String::as_str)
                    .collect();
                if !keys.is_empty() {
                    return Err(CloudError::immutable(rt.terraform_type(), &keys));
                }
            }
            other => {
                return Err(CloudError::NotImplemented {
                    operation: format!("update {other}"),
                    implementer: "kops-mock".into(),
                });
            }
        }
        if let Some(tags) = &req.tags
            && rt.is_taggable()
            && *tags != current.tags
        {
            self.retag(rt, id, &current.tags, tags)?;
        }
        self.one(rt, id)
    }

    fn retag(&self, rt: ResourceType, id: &str, old: &ResourceTags, new: &Tags) -> CloudResult<()> {
        use ResourceType as R;
        let removed: Vec<String> = old
            .keys()
            .filter(|k| !new.contains_key(*k))
            .map(str::to_owned)
            .collect();
        match rt {
            R::IamRole => {
                if !removed.is_empty() {
                    self.untag_role(id, &removed).into_cloud()?;
                }
                self.tag_role(id, new).into_cloud()
            }
            R::IamInstanceProfile => {
                if !removed.is_empty() {
                    self.untag_instance_profile(id, &removed).into_cloud()?;
                }
                self.tag_instance_profile(id, new).into_cloud()
            }
            R::IamOidcProvider => self.tag_oidc_provider(id, new).into_cloud(),
            R::AutoscalingGroup => Ok(()),
            R::LoadBalancer | R::TargetGroup => {
                if !removed.is_empty() {
                    self.remove_elbv2_tags(&[id.to_owned()], &removed)
                        .into_cloud()?;
                }
                self.add_elbv2_tags(&[id.to_owned()], new).into_cloud()
            }
            R::HostedZone => self.change_hosted_zone_tags(id, new, &removed).into_cloud(),
            R::SqsQueue => {
                if !removed.is_empty() {
                    self.untag_queue(id, &removed).into_cloud()?;
                }
                self.tag_queue(id, new).into_cloud()
            }
            R::EventRule => {
                let arn = self.describe_rule(id).into_cloud()?.arn;
                self.tag_rule(&arn, new).into_cloud()
            }
            R::KeyPair => {
                let kid = self
                    .describe_key_pairs(&[id.to_owned()], &[])
                    .into_cloud()?
                    .into_iter()
                    .next()
                    .map(|k| k.id)
                    .unwrap_or_default();
                self.retag_ec2(&kid, old, new).into_cloud()
            }
            _ => self.retag_ec2(id, old, new).into_cloud(),
        }
    }

    fn delete_native(&self, rt: ResourceType, id: &str) -> CloudResult<()> {
        use ResourceType as R;
        match rt {
            R::Vpc => gone(self.delete_vpc(id)),
            R::VpcCidrBlock | R::VpcIpv6CidrBlock => gone(self.disassociate_vpc_cidr_block(id)),
            R::DhcpOptions => gone(self.delete_dhcp_options(id)),
            R::DhcpOptionsAssociation => gone(self.associate_dhcp_options("default", id)),
            R::InternetGateway => {
                let g = match self.describe_internet_gateways(&[id.to_owned()], &[]) {
                    Ok(g) => g,
                    Err(e) if e.is_not_found() => return Ok(()),
                    Err(e) => return Err(to_cloud_error(e)),
                };
                if let Some(v) = g.first().and_then(|g| g.attached_vpc_id.clone()) {
                    gone(self.detach_internet_gateway(id, &v))?;
                }
                gone(self.delete_internet_gateway(id))
            }
            R::EgressOnlyInternetGateway => gone(self.delete_egress_only_internet_gateway(id)),
            R::Subnet => gone(self.delete_subnet(id)),
            R::RouteTable => gone(self.delete_route_table(id)),
            R::Route => {
                let (rtb, dest) = split2(rt, id, '_')?;
                gone(self.delete_route(rtb, dest))
            }
            R::RouteTableAssociation => gone(self.disassociate_route_table(id)),
            R::ElasticIp => gone(self.release_address(id)),
            R::NatGateway => gone(self.delete_nat_gateway(id)),
            R::SecurityGroup => gone(self.delete_security_group(id)),
            R::SecurityGroupRule => {
                let rules = match self.describe_security_group_rules(&[id.to_owned()], &[]) {
                    Ok(r) => r,
                    Err(e) if e.is_not_found() => return Ok(()),
                    Err(e) => return Err(to_cloud_error(e)),
                };
                let Some(r) = rules.first() else {
                    return Ok(());
                };
                if r.is_egress {
                    gone(self.revoke_security_group_egress(&r.group_id, &[id.to_owned()]))
                } else {
                    gone(self.revoke_security_group_ingress(&r.group_id, &[id.to_owned()]))
                }
            }
            R::IamRole => {
                match self.get_role(id) {
                    Ok(_) => {}
                    Err(e) if e.is_not_found() => return Ok(()),
                    Err(e) => return Err(to_cloud_error(e)),
                }
                for p in self.list_role_policies(id).into_cloud()? {
                    gone(self.delete_role_policy(id, &p))?;
                }
                for arn in self.list_attached_role_policies(id).into_cloud()? {
                    gone(self.detach_role_policy(id, &arn))?;
                }
                for p in self.list_instance_profiles("/").into_cloud()? {
                    if p.roles.iter().any(|r| r == id) {
                        gone(self.remove_role_from_instance_profile(&p.name, id))?;
                    }
                }
                gone(self.delete_role(id))
            }
            R::IamRolePolicy => {
                let (role, policy) = split2(rt, id, ':')?;
                gone(self.delete_role_policy(role, policy))
            }
            R::IamRolePolicyAttachment => {
                let (role, arn) = split2(rt, id, ':')?;
                gone(self.detach_role_policy(role, arn))
            }
            R::IamInstanceProfile => {
                let p = match self.get_instance_profile(id) {
                    Ok(p) => p,
                    Err(e) if e.is_not_found() => return Ok(()),
                    Err(e) => return Err(to_cloud_error(e)),
                };
                for r in &p.roles {
                    gone(self.remove_role_from_instance_profile(id, r))?;
                }
                gone(self.delete_instance_profile(id))
            }
            R::IamOidcProvider => gone(self.delete_oidc_provider(id)),
            R::KeyPair => gone(self.delete_key_pair(id)),
            R::LaunchTemplate => gone(
                self.delete_launch_template(&TemplateRef::Id(id.to_owned()))
                    .map(|_| ()),
            ),
            R::AutoscalingGroup => gone(self.delete_auto_scaling_group(id, true)),
            R::WarmPool => gone(self.delete_warm_pool(id)),
            R::LifecycleHook => {
                let (g, n) = split2(rt, id, ':')?;
                gone(self.delete_lifecycle_hook(g, n))
            }
            R::Volume => gone(self.delete_volume(id)),
            R::LoadBalancer => gone(self.delete_load_balancer(id)),
            R::TargetGroup => gone(self.delete_target_group(id)),
            R::Listener => gone(self.delete_listener(id)),
            R::RecordSet => {
                let found = self.list_native(&ListQuery::new(rt).with_ids([id]))?;
                let Some(r) = found.into_iter().next() else {
                    return Ok(());
                };
                let zone = r.parent.clone().unwrap_or_default();
                gone(self.change_resource_record_sets(
                    &zone,
                    vec![Change {
                        action: ChangeAction::Delete,
                        record_set: record_from(&r.attrs.to_map()),
                    }],
                ))
            }
            R::HostedZone => gone(self.delete_hosted_zone(id)),
            R::SqsQueue => gone(self.delete_queue(id)),
            R::EventRule => {
                match self.list_targets_by_rule(id) {
                    Ok(t) if !t.is_empty() => {
                        let ids: Vec<String> = t.into_iter().map(|t| t.id).collect();
                        self.remove_targets(id, &ids).into_cloud()?;
                    }
                    Ok(_) => {}
                    Err(e) if e.is_not_found() => return Ok(()),
                    Err(e) => return Err(to_cloud_error(e)),
                }
                gone(self.delete_rule(id))
            }
            R::EventTarget => {
                let (rule, tid) = split2(rt, id, ':')?;
                gone(self.remove_targets(rule, &[tid.to_owned()]))
            }
            R::S3Object => {
                let (bucket, key) = split2(rt, id, '/')?;
                gone(self.delete_object(bucket, key))
            }
            R::Instance => gone(self.terminate_instances(&[id.to_owned()])),
            other => Err(CloudError::NotImplemented {
                operation: format!("delete {other}"),
                implementer: "kops-mock".into(),
            }),
        }
    }
}

fn put_options(a: &Attrs) -> PutOptions {
    let mut o = PutOptions::default();
    if let Some(v) = a_str(a, "acl") {
        o = o.with_acl(v);
    }
    if let Some(v) = a_str(a, "server_side_encryption") {
        o = o.with_server_side_encryption(v);
    }
    if let Some(v) = a_str(a, "content_type") {
        o = o.with_content_type(v);
    }
    o
}

fn record_id(zone_id: &str, rs: &RecordSet) -> String {
    format!(
        "{}_{}_{}",
        zone_id.trim_start_matches("/hostedzone/"),
        rs.name.trim_end_matches('.').to_ascii_lowercase(),
        rs.record_type
    )
}

fn warm_pool(a: &Attrs) -> WarmPool {
    WarmPool {
        max_group_prepared_capacity: a_i32(a, "max_group_prepared_capacity"),
        min_size: a_i32(a, "min_size"),
        pool_state: a_str(a, "pool_state"),
        reuse_on_scale_in: a_obj(a, "instance_reuse_policy")
            .and_then(|o| o.get("reuse_on_scale_in"))
            .and_then(Json::as_bool),
    }
}

fn hook(group: &str, name: &str, a: &Attrs) -> CloudResult<LifecycleHook> {
    Ok(LifecycleHook {
        group_name: group.to_owned(),
        name: name.to_owned(),
        transition: a_str(a, "lifecycle_transition").ok_or_else(|| {
            invalid(
                ResourceType::LifecycleHook,
                "lifecycle_transition",
                "is required",
            )
        })?,
        heartbeat_timeout: a_i32(a, "heartbeat_timeout"),
        default_result: a_str(a, "default_result"),
        notification_target_arn: a_str(a, "notification_target_arn"),
        role_arn: a_str(a, "role_arn"),
        notification_metadata: a_str(a, "notification_metadata"),
    })
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
