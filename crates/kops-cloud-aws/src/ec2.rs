//! EC2: VPC networking, security groups, key pairs, volumes, launch templates, instances,
//! images and zones.

use std::collections::BTreeMap;

use crate::cloud::{CloudError as Error, CloudResult as Result, Tags};
use crate::cloud::{
    CreateRequest, Image, ImageQuery, Resource, ResourceType, Service, UpdateRequest,
};
use aws_sdk_ec2::primitives::Blob;
use aws_sdk_ec2::types::{
    self as t, AttributeBooleanValue, Filter, IpPermission, IpRange, Ipv6Range,
    NewDhcpConfiguration, PrefixListId, Tag, TagSpecification, UserIdGroupPair,
};
use base64::Engine as _;
use serde_json::Value as Json;

use crate::backend::{AwsBackend, Scope};
use crate::convert::{
    self as c, Attrs, b, check_immutable, i32_, immutable, jb, ji, jlist, js, obj, object, objs,
    req, s, strs,
};

use ResourceType as R;

const EC2: Service = Service::Ec2;

macro_rules! pages {
    ($be:expr, $op:literal, $what:expr, $builder:expr, |$page:ident| $body:block) => {{
        let mut stream = $builder.into_paginator().send();
        while let Some($page) = $be.page(EC2, $op, $what, stream.next()).await? $body
    }};
}

/// Whether EC2 filters this type by tag server-side.
pub(crate) fn filters_tags_server_side(rt: ResourceType) -> bool {
    matches!(
        rt,
        R::Vpc
            | R::DhcpOptions
            | R::InternetGateway
            | R::EgressOnlyInternetGateway
            | R::Subnet
            | R::RouteTable
            | R::ElasticIp
            | R::NatGateway
            | R::SecurityGroup
            | R::KeyPair
            | R::LaunchTemplate
            | R::Volume
            | R::Instance
    )
}

fn filter(name: &str, values: &[String]) -> Filter {
    Filter::builder()
        .name(name)
        .set_values(Some(values.to_vec()))
        .build()
}

/// The filters of a scope; `id_filter` is the type's ID filter name.
fn filters(scope: &Scope, id_filter: &str) -> Vec<Filter> {
    match scope {
        Scope::Tag(k, v) if v.is_empty() => vec![filter("tag-key", std::slice::from_ref(k))],
        Scope::Tag(k, v) => vec![filter(&format!("tag:{k}"), v)],
        Scope::Ids(ids) => vec![filter(id_filter, ids)],
        _ => Vec::new(),
    }
}

fn tags_of(tags: &[Tag]) -> Tags {
    tags.iter()
        .filter_map(|t| {
            Some((
                t.key()?.to_owned(),
                t.value().unwrap_or_default().to_owned(),
            ))
        })
        .collect()
}

fn res(rt: ResourceType, id: &str, tags: &[Tag]) -> Resource {
    let mut r = Resource::new(rt, id);
    r.tags = tags_of(tags);
    r
}

fn tag_list(tags: &BTreeMap<String, String>) -> Vec<Tag> {
    tags.iter()
        .map(|(k, v)| Tag::builder().key(k).value(v).build())
        .collect()
}

fn tag_spec(kind: t::ResourceType, tags: &BTreeMap<String, String>) -> Option<TagSpecification> {
    if tags.is_empty() {
        return None;
    }
    Some(
        TagSpecification::builder()
            .resource_type(kind)
            .set_tags(Some(tag_list(tags)))
            .build(),
    )
}

fn bool_attr(v: bool) -> AttributeBooleanValue {
    AttributeBooleanValue::builder().value(v).build()
}

/// Replaces the tags of `id` with `new` (adds/changes and removes the difference).
async fn sync_tags(
    be: &AwsBackend,
    id: &str,
    old: &Tags,
    new: &BTreeMap<String, String>,
) -> Result<()> {
    let (set, removed) = c::tag_diff(old, new);
    let ec2 = &be.inner.ec2;
    if !set.is_empty() {
        be.call(
            EC2,
            "CreateTags",
            id,
            ec2.create_tags()
                .resources(id)
                .set_tags(Some(tag_list(&set)))
                .send(),
        )
        .await?;
    }
    if !removed.is_empty() {
        let tags = removed
            .iter()
            .map(|k| Tag::builder().key(k).build())
            .collect();
        be.call(
            EC2,
            "DeleteTags",
            id,
            ec2.delete_tags().resources(id).set_tags(Some(tags)).send(),
        )
        .await?;
    }
    Ok(())
}

async fn current(be: &AwsBackend, rt: ResourceType, id: &str) -> Result<Resource> {
    be.reread(rt, id).await.map_err(|e| match e {
        Error::Unavailable { .. } => Error::NotFound {
            what: format!("{rt} {id}"),
        },
        other => other,
    })
}

pub(crate) async fn zones(be: &AwsBackend) -> Result<Vec<String>> {
    let out = be
        .call(
            EC2,
            "DescribeAvailabilityZones",
            "availability zones",
            be.inner
                .ec2
                .describe_availability_zones()
                .filters(filter("state", &["available".to_owned()]))
                .send(),
        )
        .await?;
    let mut z: Vec<String> = out
        .availability_zones()
        .iter()
        .filter_map(|z| z.zone_name().map(str::to_owned))
        .collect();
    z.sort();
    Ok(z)
}

/// Which of `zones` offer `instance_type` (`DescribeInstanceTypeOfferings` by availability
/// zone, every page), sorted.
pub(crate) async fn instance_type_zones(
    be: &AwsBackend,
    instance_type: &str,
    wanted: &[String],
) -> Result<Vec<String>> {
    let mut zones = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let req = be
            .inner
            .ec2
            .describe_instance_type_offerings()
            .location_type(aws_sdk_ec2::types::LocationType::AvailabilityZone)
            .filters(filter("instance-type", &[instance_type.to_owned()]))
            .filters(filter("location", wanted))
            .set_next_token(token.take());
        let out = be
            .call(
                EC2,
                "DescribeInstanceTypeOfferings",
                "instance type offerings",
                req.send(),
            )
            .await?;
        zones.extend(
            out.instance_type_offerings()
                .iter()
                .filter(|o| o.instance_type().map(|t| t.as_str()) == Some(instance_type))
                .filter_map(|o| o.location().map(str::to_owned))
                .filter(|z| wanted.contains(z)),
        );
        match out.next_token() {
            Some(t) if !t.is_empty() => token = Some(t.to_owned()),
            _ => break,
        }
    }
    zones.sort();
    zones.dedup();
    Ok(zones)
}

pub(crate) async fn images(be: &AwsBackend, q: &ImageQuery) -> Result<Vec<Image>> {
    let mut req = be.inner.ec2.describe_images();
    match q {
        ImageQuery::Id(id) => req = req.filters(filter("image-id", std::slice::from_ref(id))),
        ImageQuery::Name { owner, name } => {
            req = req.filters(filter("name", std::slice::from_ref(name)));
            if let Some(o) = owner {
                req = req.owners(o);
            }
        }
    }
    let out = be.call(EC2, "DescribeImages", "images", req.send()).await?;
    let mut v: Vec<Image> = out
        .images()
        .iter()
        .map(|i| {
            Image::new(
                i.image_id().unwrap_or_default(),
                i.name().unwrap_or_default(),
                i.owner_id().unwrap_or_default(),
            )
            .with_root_device_name(i.root_device_name().unwrap_or_default())
            .with_architecture(i.architecture().map(|a| a.as_str()).unwrap_or_default())
            .with_creation_date(i.creation_date().unwrap_or_default())
        })
        .filter(|i| q.matches(i))
        .collect();
    v.sort_by(|a, b| b.creation_date.cmp(&a.creation_date));
    Ok(v)
}

// ---------------------------------------------------------------------------------------
// list

pub(crate) async fn list(
    be: &AwsBackend,
    rt: ResourceType,
    scope: &Scope,
) -> Result<Vec<Resource>> {
    let mut out = Vec::new();
    match rt {
        R::Vpc | R::VpcCidrBlock | R::VpcIpv6CidrBlock | R::DhcpOptionsAssociation => {
            list_vpcs_and_associations(be, rt, scope, &mut out).await?
        }
        R::DhcpOptions => list_dhcp_options(be, rt, scope, &mut out).await?,
        R::InternetGateway => list_internet_gateways(be, rt, scope, &mut out).await?,
        R::EgressOnlyInternetGateway => {
            list_egress_only_internet_gateways(be, rt, scope, &mut out).await?
        }
        R::Subnet => list_subnets(be, scope, &mut out).await?,
        R::RouteTable | R::Route | R::RouteTableAssociation => {
            list_route_tables_routes_and_associations(be, rt, scope, &mut out).await?
        }
        R::ElasticIp => list_elastic_ips(be, rt, scope, &mut out).await?,
        R::NatGateway => list_nat_gateways(be, rt, scope, &mut out).await?,
        R::SecurityGroup => list_security_groups(be, rt, scope, &mut out).await?,
        R::SecurityGroupRule => list_security_group_rules(be, scope, &mut out).await?,
        R::KeyPair => list_key_pairs(be, rt, scope, &mut out).await?,
        R::Volume => list_volumes(be, rt, scope, &mut out).await?,
        R::LaunchTemplate => list_launch_templates(be, scope, &mut out).await?,
        R::Instance => list_instances(be, rt, scope, &mut out).await?,
        other => {
            return Err(Error::NotImplemented {
                operation: format!("list {other}"),
                implementer: "kops-cloud-aws EC2".into(),
            });
        }
    }
    Ok(out)
}

/// Lists VPCs, their IPv4 or IPv6 CIDR block associations or their DHCP options
/// associations (whichever `rt` is) in `scope` into `out`.
async fn list_vpcs_and_associations(
    be: &AwsBackend,
    rt: ResourceType,
    scope: &Scope,
    out: &mut Vec<Resource>,
) -> Result<()> {
    let ec2 = &be.inner.ec2;
    let fs = match (rt, scope) {
        (R::VpcCidrBlock, Scope::Ids(ids)) => {
            vec![filter("cidr-block-association.association-id", ids)]
        }
        (R::VpcIpv6CidrBlock, Scope::Ids(ids)) => {
            vec![filter("ipv6-cidr-block-association.association-id", ids)]
        }
        (_, Scope::Parent(p)) => vec![filter("vpc-id", std::slice::from_ref(p))],
        _ => filters(scope, "vpc-id"),
    };
    let mut vpcs = Vec::new();
    pages!(
        be,
        "DescribeVpcs",
        "vpcs",
        ec2.describe_vpcs().set_filters(Some(fs)),
        |p| {
            vpcs.extend(p.vpcs().iter().cloned());
        }
    );
    for v in vpcs {
        let id = v.vpc_id().unwrap_or_default();
        match rt {
            R::Vpc => out.push(vpc_resource(be, &v).await?),
            R::DhcpOptionsAssociation => {
                if let Some(d) = v.dhcp_options_id() {
                    out.push(
                        Resource::new(rt, id)
                            .with_parent(id)
                            .with_attr("vpc_id", id)
                            .with_attr("dhcp_options_id", d),
                    );
                }
            }
            R::VpcCidrBlock => {
                for a in v.cidr_block_association_set() {
                    let cidr = a.cidr_block().unwrap_or_default();
                    let state = a
                        .cidr_block_state()
                        .and_then(|s| s.state())
                        .map(|s| s.as_str());
                    if Some(cidr) == v.cidr_block()
                        || matches!(state, Some("disassociated" | "disassociating"))
                    {
                        continue;
                    }
                    out.push(
                        Resource::new(rt, a.association_id().unwrap_or_default())
                            .with_parent(id)
                            .with_attr("vpc_id", id)
                            .with_attr("cidr_block", cidr),
                    );
                }
            }
            _ => {
                for a in v.ipv6_cidr_block_association_set() {
                    let state = a
                        .ipv6_cidr_block_state()
                        .and_then(|s| s.state())
                        .map(|s| s.as_str());
                    if matches!(state, Some("disassociated" | "disassociating")) {
                        continue;
                    }
                    out.push(
                        Resource::new(rt, a.association_id().unwrap_or_default())
                            .with_parent(id)
                            .with_attr("vpc_id", id)
                            .with_attr("amazon_provided_ipv6_cidr_block", true)
                            .with_attr("ipv6_cidr_block", a.ipv6_cidr_block().unwrap_or_default()),
                    );
                }
            }
        }
    }
    Ok(())
}

/// Lists `DhcpOptions` objects in `scope` into `out`.
async fn list_dhcp_options(
    be: &AwsBackend,
    rt: ResourceType,
    scope: &Scope,
    out: &mut Vec<Resource>,
) -> Result<()> {
    let ec2 = &be.inner.ec2;
    let fs = filters(scope, "dhcp-options-id");
    pages!(
        be,
        "DescribeDhcpOptions",
        "DHCP options",
        ec2.describe_dhcp_options().set_filters(Some(fs)),
        |p| {
            for d in p.dhcp_options() {
                let mut r = res(rt, d.dhcp_options_id().unwrap_or_default(), d.tags());
                for cfg in d.dhcp_configurations() {
                    let vals: Vec<&str> = cfg.values().iter().filter_map(|v| v.value()).collect();
                    match cfg.key() {
                        Some("domain-name") => {
                            r = r.with_attr("domain_name", vals.join(" "));
                        }
                        Some("domain-name-servers") => {
                            r = r.with_attr("domain_name_servers", jlist(vals));
                        }
                        _ => {}
                    }
                }
                out.push(r);
            }
        }
    );
    Ok(())
}

/// Lists `InternetGateway` objects in `scope` into `out`.
async fn list_internet_gateways(
    be: &AwsBackend,
    rt: ResourceType,
    scope: &Scope,
    out: &mut Vec<Resource>,
) -> Result<()> {
    let ec2 = &be.inner.ec2;
    let fs = filters(scope, "internet-gateway-id");
    pages!(
        be,
        "DescribeInternetGateways",
        "internet gateways",
        ec2.describe_internet_gateways().set_filters(Some(fs)),
        |p| {
            for g in p.internet_gateways() {
                let mut r = res(rt, g.internet_gateway_id().unwrap_or_default(), g.tags());
                if let Some(v) = g.attachments().first().and_then(|a| a.vpc_id()) {
                    r = r.with_attr("vpc_id", v);
                }
                out.push(r);
            }
        }
    );
    Ok(())
}

/// Lists `EgressOnlyInternetGateway` objects in `scope` into `out`.
async fn list_egress_only_internet_gateways(
    be: &AwsBackend,
    rt: ResourceType,
    scope: &Scope,
    out: &mut Vec<Resource>,
) -> Result<()> {
    let ec2 = &be.inner.ec2;
    let fs = match scope {
        Scope::Ids(_) => Vec::new(),
        _ => filters(scope, ""),
    };
    let ids = match scope {
        Scope::Ids(ids) => Some(ids.clone()),
        _ => None,
    };
    pages!(
        be,
        "DescribeEgressOnlyInternetGateways",
        "egress-only internet gateways",
        ec2.describe_egress_only_internet_gateways()
            .set_filters(Some(fs))
            .set_egress_only_internet_gateway_ids(ids),
        |p| {
            for g in p.egress_only_internet_gateways() {
                let mut r = res(
                    rt,
                    g.egress_only_internet_gateway_id().unwrap_or_default(),
                    g.tags(),
                );
                if let Some(v) = g.attachments().first().and_then(|a| a.vpc_id()) {
                    r = r.with_attr("vpc_id", v);
                }
                out.push(r);
            }
        }
    );
    Ok(())
}

/// Lists `Subnet` objects in `scope` into `out`.
async fn list_subnets(be: &AwsBackend, scope: &Scope, out: &mut Vec<Resource>) -> Result<()> {
    let ec2 = &be.inner.ec2;
    let fs = filters(scope, "subnet-id");
    pages!(
        be,
        "DescribeSubnets",
        "subnets",
        ec2.describe_subnets().set_filters(Some(fs)),
        |p| {
            for sn in p.subnets() {
                out.push(subnet_resource(sn));
            }
        }
    );
    Ok(())
}

/// Lists route tables, their routes or their subnet associations (whichever `rt` is) in
/// `scope` into `out`.
async fn list_route_tables_routes_and_associations(
    be: &AwsBackend,
    rt: ResourceType,
    scope: &Scope,
    out: &mut Vec<Resource>,
) -> Result<()> {
    let ec2 = &be.inner.ec2;
    let fs = match (rt, scope) {
        (R::Route, Scope::Ids(ids)) => {
            let rts: Vec<String> = ids
                .iter()
                .filter_map(|i| i.split_once('_').map(|(a, _)| a.to_owned()))
                .collect();
            vec![filter("route-table-id", &rts)]
        }
        (R::RouteTableAssociation, Scope::Ids(ids)) => {
            vec![filter("association.route-table-association-id", ids)]
        }
        (_, Scope::Parent(p)) => vec![filter("route-table-id", std::slice::from_ref(p))],
        _ => filters(scope, "route-table-id"),
    };
    pages!(
        be,
        "DescribeRouteTables",
        "route tables",
        ec2.describe_route_tables().set_filters(Some(fs)),
        |p| {
            for t in p.route_tables() {
                route_table_resources(rt, t, out);
            }
        }
    );
    Ok(())
}

/// Lists `ElasticIp` objects in `scope` into `out`.
async fn list_elastic_ips(
    be: &AwsBackend,
    rt: ResourceType,
    scope: &Scope,
    out: &mut Vec<Resource>,
) -> Result<()> {
    let ec2 = &be.inner.ec2;
    let fs = filters(scope, "allocation-id");
    let o = be
        .call(
            EC2,
            "DescribeAddresses",
            "elastic IPs",
            ec2.describe_addresses().set_filters(Some(fs)).send(),
        )
        .await?;
    for a in o.addresses() {
        let mut r = res(rt, a.allocation_id().unwrap_or_default(), a.tags())
            .with_attr("domain", a.domain().map(|d| d.as_str()).unwrap_or("vpc"));
        if let Some(ip) = a.public_ip() {
            r = r.with_attr("public_ip", ip);
        }
        out.push(r);
    }
    Ok(())
}

/// Lists `NatGateway` objects in `scope` into `out`.
async fn list_nat_gateways(
    be: &AwsBackend,
    rt: ResourceType,
    scope: &Scope,
    out: &mut Vec<Resource>,
) -> Result<()> {
    let ec2 = &be.inner.ec2;
    let fs = filters(scope, "nat-gateway-id");
    pages!(
        be,
        "DescribeNatGateways",
        "NAT gateways",
        ec2.describe_nat_gateways().set_filter(Some(fs)),
        |p| {
            for n in p.nat_gateways() {
                let state = n.state().map(|s| s.as_str()).unwrap_or_default();
                if matches!(state, "deleted" | "deleting" | "failed") {
                    continue;
                }
                let mut r = res(rt, n.nat_gateway_id().unwrap_or_default(), n.tags())
                    .with_attr("subnet_id", n.subnet_id().unwrap_or_default());
                if let Some(a) = n
                    .nat_gateway_addresses()
                    .first()
                    .and_then(|a| a.allocation_id())
                {
                    r = r.with_attr("allocation_id", a);
                }
                out.push(r);
            }
        }
    );
    Ok(())
}

/// Lists `SecurityGroup` objects in `scope` into `out`.
async fn list_security_groups(
    be: &AwsBackend,
    rt: ResourceType,
    scope: &Scope,
    out: &mut Vec<Resource>,
) -> Result<()> {
    let ec2 = &be.inner.ec2;
    let fs = filters(scope, "group-id");
    pages!(
        be,
        "DescribeSecurityGroups",
        "security groups",
        ec2.describe_security_groups().set_filters(Some(fs)),
        |p| {
            for g in p.security_groups() {
                let mut r = res(rt, g.group_id().unwrap_or_default(), g.tags())
                    .with_attr("description", g.description().unwrap_or_default())
                    .with_attr("vpc_id", g.vpc_id().unwrap_or_default());
                r.name = g.group_name().map(str::to_owned);
                out.push(r);
            }
        }
    );
    Ok(())
}

/// Lists `SecurityGroupRule` objects in `scope` into `out`.
async fn list_security_group_rules(
    be: &AwsBackend,
    scope: &Scope,
    out: &mut Vec<Resource>,
) -> Result<()> {
    let ec2 = &be.inner.ec2;
    let fs = match scope {
        Scope::Parent(p) => vec![filter("group-id", std::slice::from_ref(p))],
        Scope::Ids(ids) => vec![filter("security-group-rule-id", ids)],
        _ => Vec::new(),
    };
    pages!(
        be,
        "DescribeSecurityGroupRules",
        "security group rules",
        ec2.describe_security_group_rules().set_filters(Some(fs)),
        |p| {
            for r in p.security_group_rules() {
                out.push(sg_rule_resource(r));
            }
        }
    );
    Ok(())
}

/// Lists `KeyPair` objects in `scope` into `out`.
async fn list_key_pairs(
    be: &AwsBackend,
    rt: ResourceType,
    scope: &Scope,
    out: &mut Vec<Resource>,
) -> Result<()> {
    let ec2 = &be.inner.ec2;
    let fs = filters(scope, "key-name");
    let o = be
        .call(
            EC2,
            "DescribeKeyPairs",
            "key pairs",
            ec2.describe_key_pairs()
                .set_filters(Some(fs))
                .include_public_key(true)
                .send(),
        )
        .await?;
    for k in o.key_pairs() {
        let name = k.key_name().unwrap_or_default();
        let mut r = res(rt, name, k.tags()).with_attr("key_name", name);
        r.name = Some(name.to_owned());
        if let Some(f) = k.key_fingerprint() {
            r = r.with_attr("fingerprint", f);
        }
        if let Some(pk) = k.public_key() {
            r = r.with_attr("public_key", pk.trim_end());
        }
        out.push(r);
    }
    Ok(())
}

/// Lists `Volume` objects in `scope` into `out`.
async fn list_volumes(
    be: &AwsBackend,
    rt: ResourceType,
    scope: &Scope,
    out: &mut Vec<Resource>,
) -> Result<()> {
    let ec2 = &be.inner.ec2;
    let fs = filters(scope, "volume-id");
    pages!(
        be,
        "DescribeVolumes",
        "volumes",
        ec2.describe_volumes().set_filters(Some(fs)),
        |p| {
            for v in p.volumes() {
                let mut r = res(rt, v.volume_id().unwrap_or_default(), v.tags())
                    .with_attr(
                        "availability_zone",
                        v.availability_zone().unwrap_or_default(),
                    )
                    .with_attr("size", i64::from(v.size().unwrap_or_default()))
                    .with_attr(
                        "type",
                        v.volume_type().map(|t| t.as_str()).unwrap_or_default(),
                    )
                    .with_attr("encrypted", v.encrypted().unwrap_or(false));
                if let Some(i) = v.iops() {
                    r = r.with_attr("iops", i64::from(i));
                }
                if let Some(t) = v.throughput() {
                    r = r.with_attr("throughput", i64::from(t));
                }
                if let Some(k) = v.kms_key_id() {
                    r = r.with_attr("kms_key_id", k);
                }
                out.push(r);
            }
        }
    );
    Ok(())
}

/// Lists `Instance` objects in `scope` into `out`.
async fn list_instances(
    be: &AwsBackend,
    rt: ResourceType,
    scope: &Scope,
    out: &mut Vec<Resource>,
) -> Result<()> {
    let ec2 = &be.inner.ec2;
    let mut fs = filters(scope, "instance-id");
    fs.push(filter(
        "instance-state-name",
        &["pending", "running", "stopping", "stopped"].map(str::to_owned),
    ));
    pages!(
        be,
        "DescribeInstances",
        "instances",
        ec2.describe_instances().set_filters(Some(fs)),
        |p| {
            for resv in p.reservations() {
                for i in resv.instances() {
                    let mut r = res(rt, i.instance_id().unwrap_or_default(), i.tags())
                        .with_attr(
                            "instance_type",
                            i.instance_type().map(|t| t.as_str()).unwrap_or_default(),
                        )
                        .with_attr("image_id", i.image_id().unwrap_or_default())
                        .with_attr(
                            "state",
                            i.state()
                                .and_then(|s| s.name())
                                .map(|s| s.as_str())
                                .unwrap_or_default(),
                        );
                    if let Some(sn) = i.subnet_id() {
                        r = r.with_attr("subnet_id", sn);
                    }
                    if let Some(ip) = i.private_ip_address() {
                        r = r.with_attr("private_ip", ip);
                    }
                    if let Some(z) = i.placement().and_then(|p| p.availability_zone()) {
                        r = r.with_attr("availability_zone", z);
                    }
                    out.push(r);
                }
            }
        }
    );
    Ok(())
}

async fn vpc_resource(be: &AwsBackend, v: &t::Vpc) -> Result<Resource> {
    let id = v.vpc_id().unwrap_or_default();
    let mut r =
        res(R::Vpc, id, v.tags()).with_attr("cidr_block", v.cidr_block().unwrap_or_default());
    let ipv6 = v.ipv6_cidr_block_association_set().iter().find(|a| {
        !matches!(
            a.ipv6_cidr_block_state()
                .and_then(|s| s.state())
                .map(|s| s.as_str()),
            Some("disassociated" | "disassociating")
        )
    });
    r = r.with_attr("assign_generated_ipv6_cidr_block", ipv6.is_some());
    if let Some(c) = ipv6.and_then(|a| a.ipv6_cidr_block()) {
        r = r.with_attr("ipv6_cidr_block", c);
    }
    for (attr, name) in [
        (
            t::VpcAttributeName::EnableDnsHostnames,
            "enable_dns_hostnames",
        ),
        (t::VpcAttributeName::EnableDnsSupport, "enable_dns_support"),
    ] {
        let o = be
            .call(
                EC2,
                "DescribeVpcAttribute",
                id,
                be.inner
                    .ec2
                    .describe_vpc_attribute()
                    .vpc_id(id)
                    .attribute(attr)
                    .send(),
            )
            .await?;
        let val = o
            .enable_dns_hostnames()
            .or(o.enable_dns_support())
            .and_then(|a| a.value())
            .unwrap_or(false);
        r = r.with_attr(name, val);
    }
    Ok(r)
}

fn subnet_resource(sn: &t::Subnet) -> Resource {
    let mut r = res(R::Subnet, sn.subnet_id().unwrap_or_default(), sn.tags())
        .with_attr("vpc_id", sn.vpc_id().unwrap_or_default())
        .with_attr(
            "availability_zone",
            sn.availability_zone().unwrap_or_default(),
        )
        .with_attr(
            "assign_ipv6_address_on_creation",
            sn.assign_ipv6_address_on_creation().unwrap_or(false),
        )
        .with_attr("enable_dns64", sn.enable_dns64().unwrap_or(false))
        .with_attr("ipv6_native", sn.ipv6_native().unwrap_or(false));
    if let Some(cidr) = sn.cidr_block() {
        r = r.with_attr("cidr_block", cidr);
    }
    if let Some(c) = sn
        .ipv6_cidr_block_association_set()
        .first()
        .and_then(|a| a.ipv6_cidr_block())
    {
        r = r.with_attr("ipv6_cidr_block", c);
    }
    if let Some(o) = sn.private_dns_name_options_on_launch() {
        if let Some(h) = o.hostname_type() {
            r = r.with_attr("private_dns_hostname_type_on_launch", h.as_str());
        }
        r = r
            .with_attr(
                "enable_resource_name_dns_a_record_on_launch",
                o.enable_resource_name_dns_a_record().unwrap_or(false),
            )
            .with_attr(
                "enable_resource_name_dns_aaaa_record_on_launch",
                o.enable_resource_name_dns_aaaa_record().unwrap_or(false),
            );
    }
    r
}

fn route_table_resources(rt: ResourceType, t: &t::RouteTable, out: &mut Vec<Resource>) {
    let id = t.route_table_id().unwrap_or_default();
    match rt {
        R::RouteTable => {
            out.push(res(rt, id, t.tags()).with_attr("vpc_id", t.vpc_id().unwrap_or_default()));
        }
        R::Route => {
            for r in t.routes() {
                if r.gateway_id() == Some("local")
                    || r.origin().map(|o| o.as_str()) == Some("EnableVgwRoutePropagation")
                {
                    continue;
                }
                let (dk, dest) = match (r.destination_cidr_block(), r.destination_ipv6_cidr_block())
                {
                    (Some(d), _) => ("destination_cidr_block", d),
                    (None, Some(d)) => ("destination_ipv6_cidr_block", d),
                    _ => continue,
                };
                let mut x = Resource::new(rt, format!("{id}_{dest}"))
                    .with_parent(id)
                    .with_attr("route_table_id", id)
                    .with_attr(dk, dest);
                for (k, v) in [
                    ("gateway_id", r.gateway_id()),
                    ("nat_gateway_id", r.nat_gateway_id()),
                    (
                        "egress_only_gateway_id",
                        r.egress_only_internet_gateway_id(),
                    ),
                    ("transit_gateway_id", r.transit_gateway_id()),
                    ("vpc_peering_connection_id", r.vpc_peering_connection_id()),
                    ("network_interface_id", r.network_interface_id()),
                    ("instance_id", r.instance_id()),
                ] {
                    if let Some(v) = v {
                        x = x.with_attr(k, v);
                    }
                }
                out.push(x);
            }
        }
        _ => {
            for a in t.associations() {
                if a.main() == Some(true) {
                    continue;
                }
                let Some(sn) = a.subnet_id() else { continue };
                out.push(
                    Resource::new(rt, a.route_table_association_id().unwrap_or_default())
                        .with_parent(id)
                        .with_attr("route_table_id", id)
                        .with_attr("subnet_id", sn),
                );
            }
        }
    }
}

fn sg_rule_resource(r: &t::SecurityGroupRule) -> Resource {
    let group = r.group_id().unwrap_or_default();
    let proto = r.ip_protocol().unwrap_or("-1").to_owned();
    let portless = !matches!(
        proto.as_str(),
        "tcp" | "udp" | "icmp" | "icmpv6" | "6" | "17" | "1" | "58"
    );
    let (mut from, mut to) = (r.from_port().unwrap_or(0), r.to_port().unwrap_or(0));
    if portless {
        from = from.max(0);
        to = to.max(0);
    }
    let mut x = Resource::new(
        R::SecurityGroupRule,
        r.security_group_rule_id().unwrap_or_default(),
    )
    .with_parent(group)
    .with_attr("security_group_id", group)
    .with_attr(
        "type",
        if r.is_egress() == Some(true) {
            "egress"
        } else {
            "ingress"
        },
    )
    .with_attr("protocol", proto)
    .with_attr("from_port", i64::from(from))
    .with_attr("to_port", i64::from(to));
    if let Some(cidr) = r.cidr_ipv4() {
        x = x.with_attr("cidr_blocks", jlist([cidr]));
    }
    if let Some(cidr) = r.cidr_ipv6() {
        x = x.with_attr("ipv6_cidr_blocks", jlist([cidr]));
    }
    if let Some(p) = r.prefix_list_id() {
        x = x.with_attr("prefix_list_ids", jlist([p]));
    }
    if let Some(g) = r.referenced_group_info().and_then(|g| g.group_id()) {
        x = x.with_attr("source_security_group_id", g);
    }
    if let Some(d) = r.description() {
        x = x.with_attr("description", d);
    }
    x.tags = tags_of(r.tags());
    x
}

// ---------------------------------------------------------------------------------------
// launch templates

async fn list_launch_templates(
    be: &AwsBackend,
    scope: &Scope,
    out: &mut Vec<Resource>,
) -> Result<()> {
    let ec2 = &be.inner.ec2;
    // By IDs through the ID parameter (not every EC2 implementation filters on
    // `launch-template-id`); a missing ID fails the whole call, so then list them all and
    // let the caller filter.
    let (fs, ids) = match scope {
        Scope::Ids(ids) => (Vec::new(), Some(ids.clone())),
        _ => (filters(scope, "launch-template-id"), None),
    };
    let mut templates = Vec::new();
    let mut stream = ec2
        .describe_launch_templates()
        .max_results(200)
        .set_filters(Some(fs.clone()))
        .set_launch_template_ids(ids.clone())
        .into_paginator()
        .send();
    loop {
        match be
            .page(
                EC2,
                "DescribeLaunchTemplates",
                "launch templates",
                stream.next(),
            )
            .await
        {
            Ok(Some(p)) => templates.extend(p.launch_templates().iter().cloned()),
            Ok(None) => break,
            Err(Error::NotFound { .. }) if ids.is_some() => {
                templates.clear();
                pages!(
                    be,
                    "DescribeLaunchTemplates",
                    "launch templates",
                    ec2.describe_launch_templates().max_results(200),
                    |p| {
                        templates.extend(p.launch_templates().iter().cloned());
                    }
                );
                break;
            }
            Err(e) => return Err(e),
        }
    }
    if templates.is_empty() {
        return Ok(());
    }
    // The latest version of every template in one (paginated) call instead of one call
    // per template.
    let mut data: BTreeMap<String, (i64, t::ResponseLaunchTemplateData)> = BTreeMap::new();
    let single = templates.len() == 1;
    // Full pages (AWS allows 200; some implementations return only the first page of
    // their smaller default without a continuation token).
    let mut req = ec2
        .describe_launch_template_versions()
        .versions("$Latest")
        .max_results(200);
    if single {
        req = req.set_launch_template_id(templates[0].launch_template_id().map(str::to_owned));
    }
    pages!(
        be,
        "DescribeLaunchTemplateVersions",
        "launch template versions",
        req,
        |p| {
            for v in p.launch_template_versions() {
                if let (Some(id), Some(d)) = (v.launch_template_id(), v.launch_template_data()) {
                    data.insert(id.to_owned(), (v.version_number().unwrap_or(0), d.clone()));
                }
            }
        }
    );
    for lt in templates {
        let id = lt.launch_template_id().unwrap_or_default();
        let mut r = res(R::LaunchTemplate, id, lt.tags());
        r.name = lt.launch_template_name().map(str::to_owned);
        let latest = lt.latest_version_number().unwrap_or(1);
        if let Some((_, d)) = data.get(id) {
            r.attrs = lt_data_to_attrs(d).into();
        }
        r = r.with_attr("latest_version", latest.to_string());
        out.push(r);
    }
    Ok(())
}

/// The template data in Terraform's shape.
pub(crate) fn lt_data_to_attrs(d: &t::ResponseLaunchTemplateData) -> Attrs {
    let mut a = Attrs::new();
    if let Some(v) = d.image_id() {
        a.insert("image_id".into(), v.into());
    }
    if let Some(v) = d.instance_type() {
        a.insert("instance_type".into(), v.as_str().into());
    }
    if let Some(v) = d.key_name() {
        a.insert("key_name".into(), v.into());
    }
    if let Some(v) = d.user_data() {
        // Tasks exchange user data as text; EC2 holds it base64-encoded.
        let text = base64::engine::general_purpose::STANDARD
            .decode(v)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .unwrap_or_else(|| v.to_owned());
        a.insert("user_data".into(), text.into());
    }
    let bdm = lt_block_device_mappings(d);
    if !bdm.is_empty() {
        a.insert("block_device_mappings".into(), Json::Array(bdm));
    }
    if let Some(p) = d.iam_instance_profile() {
        a.insert(
            "iam_instance_profile".into(),
            object([("arn", js(p.arn())), ("name", js(p.name()))]),
        );
    }
    if let Some(m) = d.metadata_options() {
        a.insert("metadata_options".into(), lt_metadata_options(m));
    }
    if let Some(m) = d.monitoring() {
        a.insert("monitoring".into(), object([("enabled", jb(m.enabled()))]));
    }
    let nis = lt_network_interfaces(d);
    // One interface (what kOps configures) is a single block; several are a list.
    match nis.len() {
        0 => {}
        1 => {
            a.insert(
                "network_interfaces".into(),
                nis.into_iter().next().unwrap_or(Json::Null),
            );
        }
        _ => {
            a.insert("network_interfaces".into(), Json::Array(nis));
        }
    }
    let ts = lt_tag_specifications(d);
    if !ts.is_empty() {
        a.insert("tag_specifications".into(), Json::Array(ts));
    }
    if let Some(cs) = d.credit_specification() {
        a.insert(
            "credit_specification".into(),
            object([("cpu_credits", js(cs.cpu_credits()))]),
        );
    }
    if let Some(p) = d.placement()
        && (p.tenancy().is_some() || p.availability_zone().is_some())
    {
        a.insert(
            "placement".into(),
            object([
                ("availability_zone", js(p.availability_zone())),
                ("tenancy", js(p.tenancy().map(|t| t.as_str()))),
            ]),
        );
    }
    if let Some(m) = d.instance_market_options() {
        a.insert(
            "instance_market_options".into(),
            lt_instance_market_options(m),
        );
    }
    a
}

/// The template's block device mappings, as Terraform attributes.
fn lt_block_device_mappings(d: &t::ResponseLaunchTemplateData) -> Vec<Json> {
    d.block_device_mappings()
        .iter()
        .map(|m| {
            let ebs = m.ebs().map(|e| {
                object([
                    ("delete_on_termination", jb(e.delete_on_termination())),
                    ("encrypted", jb(e.encrypted())),
                    ("iops", ji(e.iops())),
                    ("kms_key_id", js(e.kms_key_id())),
                    ("snapshot_id", js(e.snapshot_id())),
                    ("throughput", ji(e.throughput())),
                    ("volume_size", ji(e.volume_size())),
                    ("volume_type", js(e.volume_type().map(|t| t.as_str()))),
                ])
            });
            object([
                ("device_name", js(m.device_name())),
                ("ebs", ebs),
                ("virtual_name", js(m.virtual_name())),
            ])
        })
        .collect()
}

/// The template's network interfaces, as Terraform attributes.
fn lt_network_interfaces(d: &t::ResponseLaunchTemplateData) -> Vec<Json> {
    d.network_interfaces()
        .iter()
        .map(|n| {
            object([
                (
                    "associate_public_ip_address",
                    jb(n.associate_public_ip_address()),
                ),
                ("delete_on_termination", jb(n.delete_on_termination())),
                ("device_index", ji(n.device_index())),
                ("ipv6_address_count", ji(n.ipv6_address_count())),
                ("security_groups", Some(jlist(n.groups()))),
            ])
        })
        .collect()
}

/// The template's tag specifications for the objects it launches, as Terraform attributes.
/// Tags of the template itself are not part of its data (some implementations echo
/// them there).
fn lt_tag_specifications(d: &t::ResponseLaunchTemplateData) -> Vec<Json> {
    d.tag_specifications()
        .iter()
        .filter(|s| s.resource_type().map(|r| r.as_str()) != Some("launch-template"))
        .map(|s| {
            let tags: serde_json::Map<String, Json> = tags_of(s.tags())
                .iter()
                .map(|(k, v)| (k.to_owned(), Json::from(v)))
                .collect();
            object([
                ("resource_type", js(s.resource_type().map(|r| r.as_str()))),
                ("tags", Some(Json::Object(tags))),
            ])
        })
        .collect()
}

/// The template's instance metadata options, as Terraform attributes.
fn lt_metadata_options(m: &t::LaunchTemplateInstanceMetadataOptions) -> Json {
    object([
        ("http_endpoint", js(m.http_endpoint().map(|v| v.as_str()))),
        (
            "http_protocol_ipv6",
            js(m.http_protocol_ipv6().map(|v| v.as_str())),
        ),
        (
            "http_put_response_hop_limit",
            ji(m.http_put_response_hop_limit()),
        ),
        ("http_tokens", js(m.http_tokens().map(|v| v.as_str()))),
        (
            "instance_metadata_tags",
            js(m.instance_metadata_tags().map(|v| v.as_str())),
        ),
    ])
}

/// The template's instance market options (spot), as Terraform attributes.
fn lt_instance_market_options(m: &t::LaunchTemplateInstanceMarketOptions) -> Json {
    let spot = m.spot_options().map(|s| {
        object([
            (
                "instance_interruption_behavior",
                js(s.instance_interruption_behavior().map(|v| v.as_str())),
            ),
            ("max_price", js(s.max_price())),
        ])
    });
    object([
        ("market_type", js(m.market_type().map(|v| v.as_str()))),
        ("spot_options", spot),
    ])
}

/// Full template data from Terraform-shaped attributes.
pub(crate) fn lt_data_from_attrs(a: &Attrs) -> t::RequestLaunchTemplateData {
    let mut d = t::RequestLaunchTemplateData::builder()
        .set_image_id(s(a, "image_id"))
        .set_instance_type(s(a, "instance_type").map(|v| t::InstanceType::from(v.as_str())))
        .set_key_name(s(a, "key_name").filter(|k| !k.is_empty()));
    if let Some(u) = s(a, "user_data") {
        d = d.user_data(base64::engine::general_purpose::STANDARD.encode(u.as_bytes()));
    }
    for m in objs(a, "block_device_mappings") {
        let mut bm = t::LaunchTemplateBlockDeviceMappingRequest::builder()
            .set_device_name(s(&m, "device_name"))
            .set_virtual_name(s(&m, "virtual_name"));
        if let Some(e) = obj(&m, "ebs") {
            bm = bm.ebs(
                t::LaunchTemplateEbsBlockDeviceRequest::builder()
                    .set_delete_on_termination(b(&e, "delete_on_termination"))
                    .set_encrypted(b(&e, "encrypted"))
                    .set_iops(i32_(&e, "iops"))
                    .set_kms_key_id(s(&e, "kms_key_id"))
                    .set_snapshot_id(s(&e, "snapshot_id"))
                    .set_throughput(i32_(&e, "throughput"))
                    .set_volume_size(i32_(&e, "volume_size"))
                    .set_volume_type(s(&e, "volume_type").map(|v| t::VolumeType::from(v.as_str())))
                    .build(),
            );
        }
        d = d.block_device_mappings(bm.build());
    }
    if let Some(p) = obj(a, "iam_instance_profile") {
        d = d.iam_instance_profile(
            t::LaunchTemplateIamInstanceProfileSpecificationRequest::builder()
                .set_arn(s(&p, "arn"))
                .set_name(s(&p, "name"))
                .build(),
        );
    }
    if let Some(m) = obj(a, "metadata_options") {
        d = d.metadata_options(
            t::LaunchTemplateInstanceMetadataOptionsRequest::builder()
                .set_http_endpoint(
                    s(&m, "http_endpoint")
                        .map(|v| t::LaunchTemplateInstanceMetadataEndpointState::from(v.as_str())),
                )
                .set_http_protocol_ipv6(
                    s(&m, "http_protocol_ipv6")
                        .map(|v| t::LaunchTemplateInstanceMetadataProtocolIpv6::from(v.as_str())),
                )
                .set_http_put_response_hop_limit(i32_(&m, "http_put_response_hop_limit"))
                .set_http_tokens(
                    s(&m, "http_tokens")
                        .map(|v| t::LaunchTemplateHttpTokensState::from(v.as_str())),
                )
                .set_instance_metadata_tags(
                    s(&m, "instance_metadata_tags")
                        .map(|v| t::LaunchTemplateInstanceMetadataTagsState::from(v.as_str())),
                )
                .build(),
        );
    }
    if let Some(m) = obj(a, "monitoring") {
        d = d.monitoring(
            t::LaunchTemplatesMonitoringRequest::builder()
                .set_enabled(b(&m, "enabled"))
                .build(),
        );
    }
    for (idx, n) in objs(a, "network_interfaces").into_iter().enumerate() {
        let groups = strs(&n, "security_groups");
        d = d.network_interfaces(
            t::LaunchTemplateInstanceNetworkInterfaceSpecificationRequest::builder()
                .set_associate_public_ip_address(b(&n, "associate_public_ip_address"))
                .set_delete_on_termination(b(&n, "delete_on_termination"))
                .device_index(i32_(&n, "device_index").unwrap_or(i32::try_from(idx).unwrap_or(0)))
                .set_ipv6_address_count(i32_(&n, "ipv6_address_count"))
                .set_groups((!groups.is_empty()).then_some(groups))
                .build(),
        );
    }
    for ts in objs(a, "tag_specifications") {
        let tags = c::string_map(&ts, "tags");
        d = d.tag_specifications(
            t::LaunchTemplateTagSpecificationRequest::builder()
                .set_resource_type(
                    s(&ts, "resource_type").map(|v| t::ResourceType::from(v.as_str())),
                )
                .set_tags(Some(tag_list(&tags)))
                .build(),
        );
    }
    if let Some(cs) = obj(a, "credit_specification") {
        d = d.credit_specification(
            t::CreditSpecificationRequest::builder()
                .set_cpu_credits(s(&cs, "cpu_credits"))
                .build(),
        );
    }
    if let Some(p) = obj(a, "placement") {
        d = d.placement(
            t::LaunchTemplatePlacementRequest::builder()
                .set_availability_zone(s(&p, "availability_zone"))
                .set_tenancy(s(&p, "tenancy").map(|v| t::Tenancy::from(v.as_str())))
                .build(),
        );
    }
    if let Some(m) = obj(a, "instance_market_options") {
        let mut mo = t::LaunchTemplateInstanceMarketOptionsRequest::builder()
            .set_market_type(s(&m, "market_type").map(|v| t::MarketType::from(v.as_str())));
        if let Some(so) = obj(&m, "spot_options") {
            mo = mo.spot_options(
                t::LaunchTemplateSpotMarketOptionsRequest::builder()
                    .set_max_price(s(&so, "max_price").filter(|p| !p.is_empty()))
                    .set_instance_interruption_behavior(
                        s(&so, "instance_interruption_behavior")
                            .map(|v| t::InstanceInterruptionBehavior::from(v.as_str())),
                    )
                    .build(),
            );
        }
        d = d.instance_market_options(mo.build());
    }
    d.build()
}

// ---------------------------------------------------------------------------------------
// create

pub(crate) async fn create(be: &AwsBackend, rq: &CreateRequest) -> Result<Resource> {
    let rt = rq.resource_type;
    let a = &rq.attrs;
    let tags = &rq.tags;
    let what = rq
        .name
        .clone()
        .or_else(|| tags.get("Name").cloned())
        .unwrap_or_else(|| rt.to_string());
    let what = what.as_str();
    let id: String = match rt {
        R::Vpc => create_vpc(be, rt, a, tags, what).await?,
        R::VpcCidrBlock | R::VpcIpv6CidrBlock => create_vpc_cidr_block(be, rt, a).await?,
        R::DhcpOptions => create_dhcp_options(be, a, tags, what).await?,
        R::DhcpOptionsAssociation => create_dhcp_options_association(be, rt, a).await?,
        R::InternetGateway => create_internet_gateway(be, a, tags, what).await?,
        R::EgressOnlyInternetGateway => {
            create_egress_only_internet_gateway(be, rt, a, tags, what).await?
        }
        R::Subnet => create_subnet(be, rt, a, tags, what).await?,
        R::RouteTable => create_route_table(be, rt, a, tags, what).await?,
        R::Route => create_route(be, rq, rt, a).await?,
        R::RouteTableAssociation => create_route_table_association(be, rt, a).await?,
        R::ElasticIp => create_elastic_ip(be, tags, what).await?,
        R::NatGateway => create_nat_gateway(be, rt, a, tags, what).await?,
        R::SecurityGroup => create_security_group(be, rq, rt, a, tags).await?,
        R::SecurityGroupRule => return create_sg_rule(be, rq).await,
        R::KeyPair => create_key_pair(be, rq, rt, a, tags).await?,
        R::Volume => create_volume(be, rt, a, tags, what).await?,
        R::LaunchTemplate => create_launch_template(be, rq, rt, a, tags).await?,
        other => {
            return Err(Error::NotImplemented {
                operation: format!("create {other}"),
                implementer: "kops-cloud-aws".into(),
            });
        }
    };
    let r = be.reread(rt, &id).await?;
    // Some EC2 implementations ignore tag specifications on a few create calls (DHCP
    // options in moto): tag explicitly what is missing.
    if rt.is_taggable()
        && !tags.is_empty()
        && tags.iter().any(|(k, v)| r.tags.get(k) != Some(v.as_str()))
    {
        let mut want = r.tags.to_map();
        want.extend(tags.clone());
        sync_tags(be, &id, &r.tags, &want).await?;
        return be.reread(rt, &id).await;
    }
    Ok(r)
}

/// Creates one `Vpc`; returns its ID.
async fn create_vpc(
    be: &AwsBackend,
    rt: ResourceType,
    a: &Attrs,
    tags: &BTreeMap<String, String>,
    what: &str,
) -> Result<String> {
    let ec2 = &be.inner.ec2;
    let o = be
        .call(
            EC2,
            "CreateVpc",
            what,
            ec2.create_vpc()
                .cidr_block(req(a, "cidr_block", rt)?)
                .set_amazon_provided_ipv6_cidr_block(b(a, "assign_generated_ipv6_cidr_block"))
                .set_tag_specifications(tag_spec(t::ResourceType::Vpc, tags).map(|t| vec![t]))
                .send(),
        )
        .await?;
    let id = o
        .vpc()
        .and_then(|v| v.vpc_id())
        .unwrap_or_default()
        .to_owned();
    set_vpc_attrs(be, &id, a).await?;
    Ok(id)
}

/// Associates one IPv4 (`VpcCidrBlock`) or Amazon-provided IPv6 (`VpcIpv6CidrBlock`) CIDR
/// block with a VPC; returns the association ID.
async fn create_vpc_cidr_block(be: &AwsBackend, rt: ResourceType, a: &Attrs) -> Result<String> {
    let ec2 = &be.inner.ec2;
    let vpc = req(a, "vpc_id", rt)?;
    let mut r = ec2.associate_vpc_cidr_block().vpc_id(&vpc);
    if rt == R::VpcCidrBlock {
        r = r.cidr_block(req(a, "cidr_block", rt)?);
    } else {
        r = r.amazon_provided_ipv6_cidr_block(true);
    }
    let o = be
        .call(EC2, "AssociateVpcCidrBlock", &vpc, r.send())
        .await?;
    Ok(o.cidr_block_association()
        .and_then(|x| x.association_id())
        .or(o
            .ipv6_cidr_block_association()
            .and_then(|x| x.association_id()))
        .unwrap_or_default()
        .to_owned())
}

/// Creates one `DhcpOptions`; returns its ID.
async fn create_dhcp_options(
    be: &AwsBackend,
    a: &Attrs,
    tags: &BTreeMap<String, String>,
    what: &str,
) -> Result<String> {
    let ec2 = &be.inner.ec2;
    let mut cfgs = Vec::new();
    if let Some(d) = s(a, "domain_name") {
        cfgs.push(
            NewDhcpConfiguration::builder()
                .key("domain-name")
                .values(d)
                .build(),
        );
    }
    let servers = strs(a, "domain_name_servers");
    if !servers.is_empty() {
        cfgs.push(
            NewDhcpConfiguration::builder()
                .key("domain-name-servers")
                .set_values(Some(servers))
                .build(),
        );
    }
    let o = be
        .call(
            EC2,
            "CreateDhcpOptions",
            what,
            ec2.create_dhcp_options()
                .set_dhcp_configurations(Some(cfgs))
                .set_tag_specifications(
                    tag_spec(t::ResourceType::DhcpOptions, tags).map(|t| vec![t]),
                )
                .send(),
        )
        .await?;
    Ok(o.dhcp_options()
        .and_then(|d| d.dhcp_options_id())
        .unwrap_or_default()
        .to_owned())
}

/// Creates one `DhcpOptionsAssociation`; returns its ID.
async fn create_dhcp_options_association(
    be: &AwsBackend,
    rt: ResourceType,
    a: &Attrs,
) -> Result<String> {
    let ec2 = &be.inner.ec2;
    let vpc = req(a, "vpc_id", rt)?;
    be.call(
        EC2,
        "AssociateDhcpOptions",
        &vpc,
        ec2.associate_dhcp_options()
            .vpc_id(&vpc)
            .dhcp_options_id(req(a, "dhcp_options_id", rt)?)
            .send(),
    )
    .await?;
    be.invalidate(R::Vpc);
    Ok(vpc)
}

/// Creates one `InternetGateway`; returns its ID.
async fn create_internet_gateway(
    be: &AwsBackend,
    a: &Attrs,
    tags: &BTreeMap<String, String>,
    what: &str,
) -> Result<String> {
    let ec2 = &be.inner.ec2;
    let o = be
        .call(
            EC2,
            "CreateInternetGateway",
            what,
            ec2.create_internet_gateway()
                .set_tag_specifications(
                    tag_spec(t::ResourceType::InternetGateway, tags).map(|t| vec![t]),
                )
                .send(),
        )
        .await?;
    let id = o
        .internet_gateway()
        .and_then(|g| g.internet_gateway_id())
        .unwrap_or_default()
        .to_owned();
    if let Some(vpc) = s(a, "vpc_id") {
        be.call(
            EC2,
            "AttachInternetGateway",
            &id,
            ec2.attach_internet_gateway()
                .internet_gateway_id(&id)
                .vpc_id(vpc)
                .send(),
        )
        .await?;
    }
    Ok(id)
}

/// Creates one `EgressOnlyInternetGateway`; returns its ID.
async fn create_egress_only_internet_gateway(
    be: &AwsBackend,
    rt: ResourceType,
    a: &Attrs,
    tags: &BTreeMap<String, String>,
    what: &str,
) -> Result<String> {
    let ec2 = &be.inner.ec2;
    let o = be
        .call(
            EC2,
            "CreateEgressOnlyInternetGateway",
            what,
            ec2.create_egress_only_internet_gateway()
                .vpc_id(req(a, "vpc_id", rt)?)
                .set_tag_specifications(
                    tag_spec(t::ResourceType::EgressOnlyInternetGateway, tags).map(|t| vec![t]),
                )
                .send(),
        )
        .await?;
    Ok(o.egress_only_internet_gateway()
        .and_then(|g| g.egress_only_internet_gateway_id())
        .unwrap_or_default()
        .to_owned())
}

/// Creates one `Subnet`; returns its ID.
async fn create_subnet(
    be: &AwsBackend,
    rt: ResourceType,
    a: &Attrs,
    tags: &BTreeMap<String, String>,
    what: &str,
) -> Result<String> {
    let ec2 = &be.inner.ec2;
    let o = be
        .call(
            EC2,
            "CreateSubnet",
            what,
            ec2.create_subnet()
                .vpc_id(req(a, "vpc_id", rt)?)
                .set_cidr_block(s(a, "cidr_block"))
                .set_ipv6_cidr_block(s(a, "ipv6_cidr_block"))
                .set_availability_zone(s(a, "availability_zone"))
                .set_ipv6_native(b(a, "ipv6_native"))
                .set_tag_specifications(tag_spec(t::ResourceType::Subnet, tags).map(|t| vec![t]))
                .send(),
        )
        .await?;
    let id = o
        .subnet()
        .and_then(|s| s.subnet_id())
        .unwrap_or_default()
        .to_owned();
    let mut rest = a.clone();
    for k in [
        "vpc_id",
        "cidr_block",
        "ipv6_cidr_block",
        "availability_zone",
        "ipv6_native",
    ] {
        rest.remove(k);
    }
    set_subnet_attrs(be, &id, &rest).await?;
    Ok(id)
}

/// Creates one `RouteTable`; returns its ID.
async fn create_route_table(
    be: &AwsBackend,
    rt: ResourceType,
    a: &Attrs,
    tags: &BTreeMap<String, String>,
    what: &str,
) -> Result<String> {
    let ec2 = &be.inner.ec2;
    let o = be
        .call(
            EC2,
            "CreateRouteTable",
            what,
            ec2.create_route_table()
                .vpc_id(req(a, "vpc_id", rt)?)
                .set_tag_specifications(
                    tag_spec(t::ResourceType::RouteTable, tags).map(|t| vec![t]),
                )
                .send(),
        )
        .await?;
    Ok(o.route_table()
        .and_then(|r| r.route_table_id())
        .unwrap_or_default()
        .to_owned())
}

/// Creates one `Route`; returns its ID.
async fn create_route(
    be: &AwsBackend,
    rq: &CreateRequest,
    rt: ResourceType,
    a: &Attrs,
) -> Result<String> {
    let ec2 = &be.inner.ec2;
    let rtb = rq
        .parent
        .clone()
        .or_else(|| s(a, "route_table_id"))
        .ok_or_else(|| Error::invalid(format!("{rt}.route_table_id"), "is required"))?;
    let dest4 = s(a, "destination_cidr_block");
    let dest6 = s(a, "destination_ipv6_cidr_block");
    let dest = dest4
        .clone()
        .or(dest6.clone())
        .ok_or_else(|| Error::invalid(format!("{rt}.destination_cidr_block"), "is required"))?;
    be.call(
        EC2,
        "CreateRoute",
        &format!("{rtb} {dest}"),
        ec2.create_route()
            .route_table_id(&rtb)
            .set_destination_cidr_block(dest4)
            .set_destination_ipv6_cidr_block(dest6)
            .set_gateway_id(s(a, "gateway_id"))
            .set_nat_gateway_id(s(a, "nat_gateway_id"))
            .set_egress_only_internet_gateway_id(s(a, "egress_only_gateway_id"))
            .set_transit_gateway_id(s(a, "transit_gateway_id"))
            .set_vpc_peering_connection_id(s(a, "vpc_peering_connection_id"))
            .set_network_interface_id(s(a, "network_interface_id"))
            .set_instance_id(s(a, "instance_id"))
            .send(),
    )
    .await?;
    Ok(format!("{rtb}_{dest}"))
}

/// Creates one `RouteTableAssociation`; returns its ID.
async fn create_route_table_association(
    be: &AwsBackend,
    rt: ResourceType,
    a: &Attrs,
) -> Result<String> {
    let ec2 = &be.inner.ec2;
    let rtb = req(a, "route_table_id", rt)?;
    let o = be
        .call(
            EC2,
            "AssociateRouteTable",
            &rtb,
            ec2.associate_route_table()
                .route_table_id(&rtb)
                .subnet_id(req(a, "subnet_id", rt)?)
                .send(),
        )
        .await?;
    Ok(o.association_id().unwrap_or_default().to_owned())
}

/// Creates one `ElasticIp`; returns its ID.
async fn create_elastic_ip(
    be: &AwsBackend,
    tags: &BTreeMap<String, String>,
    what: &str,
) -> Result<String> {
    let ec2 = &be.inner.ec2;
    let o = be
        .call(
            EC2,
            "AllocateAddress",
            what,
            ec2.allocate_address()
                .domain(t::DomainType::Vpc)
                .set_tag_specifications(tag_spec(t::ResourceType::ElasticIp, tags).map(|t| vec![t]))
                .send(),
        )
        .await?;
    Ok(o.allocation_id().unwrap_or_default().to_owned())
}

/// Creates one `NatGateway`; returns its ID.
async fn create_nat_gateway(
    be: &AwsBackend,
    rt: ResourceType,
    a: &Attrs,
    tags: &BTreeMap<String, String>,
    what: &str,
) -> Result<String> {
    let ec2 = &be.inner.ec2;
    let o = be
        .call(
            EC2,
            "CreateNatGateway",
            what,
            ec2.create_nat_gateway()
                .set_client_token(s(a, crate::idempotent::CLIENT_TOKEN_ATTR))
                .subnet_id(req(a, "subnet_id", rt)?)
                .set_allocation_id(s(a, "allocation_id"))
                .set_tag_specifications(
                    tag_spec(t::ResourceType::Natgateway, tags).map(|t| vec![t]),
                )
                .send(),
        )
        .await?;
    Ok(o.nat_gateway()
        .and_then(|n| n.nat_gateway_id())
        .unwrap_or_default()
        .to_owned())
}

/// Creates one `SecurityGroup`; returns its ID.
async fn create_security_group(
    be: &AwsBackend,
    rq: &CreateRequest,
    rt: ResourceType,
    a: &Attrs,
    tags: &BTreeMap<String, String>,
) -> Result<String> {
    let ec2 = &be.inner.ec2;
    let name = rq
        .name
        .clone()
        .or_else(|| s(a, "name"))
        .ok_or_else(|| Error::invalid(format!("{rt}.name"), "is required"))?;
    let o = be
        .call(
            EC2,
            "CreateSecurityGroup",
            &name,
            ec2.create_security_group()
                .group_name(&name)
                .description(s(a, "description").unwrap_or_else(|| name.clone()))
                .set_vpc_id(s(a, "vpc_id"))
                .set_tag_specifications(
                    tag_spec(t::ResourceType::SecurityGroup, tags).map(|t| vec![t]),
                )
                .send(),
        )
        .await?;
    Ok(o.group_id().unwrap_or_default().to_owned())
}

/// Creates one `KeyPair`; returns its ID.
async fn create_key_pair(
    be: &AwsBackend,
    rq: &CreateRequest,
    rt: ResourceType,
    a: &Attrs,
    tags: &BTreeMap<String, String>,
) -> Result<String> {
    let ec2 = &be.inner.ec2;
    let name = s(a, "key_name")
        .or_else(|| rq.name.clone())
        .ok_or_else(|| Error::invalid(format!("{rt}.key_name"), "is required"))?;
    be.call(
        EC2,
        "ImportKeyPair",
        &name,
        ec2.import_key_pair()
            .key_name(&name)
            .public_key_material(Blob::new(req(a, "public_key", rt)?.into_bytes()))
            .set_tag_specifications(tag_spec(t::ResourceType::KeyPair, tags).map(|t| vec![t]))
            .send(),
    )
    .await?;
    Ok(name)
}

/// Creates one `Volume`; returns its ID.
async fn create_volume(
    be: &AwsBackend,
    rt: ResourceType,
    a: &Attrs,
    tags: &BTreeMap<String, String>,
    what: &str,
) -> Result<String> {
    let ec2 = &be.inner.ec2;
    let o = be
        .call(
            EC2,
            "CreateVolume",
            what,
            ec2.create_volume()
                .set_client_token(s(a, crate::idempotent::CLIENT_TOKEN_ATTR))
                .availability_zone(req(a, "availability_zone", rt)?)
                .set_size(i32_(a, "size"))
                .set_volume_type(s(a, "type").map(|v| t::VolumeType::from(v.as_str())))
                .set_iops(i32_(a, "iops"))
                .set_throughput(i32_(a, "throughput"))
                .set_encrypted(b(a, "encrypted"))
                .set_kms_key_id(s(a, "kms_key_id"))
                .set_tag_specifications(tag_spec(t::ResourceType::Volume, tags).map(|t| vec![t]))
                .send(),
        )
        .await?;
    Ok(o.volume_id().unwrap_or_default().to_owned())
}

/// Creates one `LaunchTemplate`; returns its ID.
async fn create_launch_template(
    be: &AwsBackend,
    rq: &CreateRequest,
    rt: ResourceType,
    a: &Attrs,
    tags: &BTreeMap<String, String>,
) -> Result<String> {
    let ec2 = &be.inner.ec2;
    let name = rq
        .name
        .clone()
        .or_else(|| s(a, "name"))
        .ok_or_else(|| Error::invalid(format!("{rt}.name"), "is required"))?;
    let o = be
        .call(
            EC2,
            "CreateLaunchTemplate",
            &name,
            ec2.create_launch_template()
                .set_client_token(s(a, crate::idempotent::CLIENT_TOKEN_ATTR))
                .launch_template_name(&name)
                .launch_template_data(lt_data_from_attrs(a))
                .set_tag_specifications(
                    tag_spec(t::ResourceType::LaunchTemplate, tags).map(|t| vec![t]),
                )
                .send(),
        )
        .await?;
    Ok(o.launch_template()
        .and_then(|l| l.launch_template_id())
        .unwrap_or_default()
        .to_owned())
}

async fn set_vpc_attrs(be: &AwsBackend, id: &str, a: &Attrs) -> Result<()> {
    for (k, attr) in [("enable_dns_support", 0), ("enable_dns_hostnames", 1)] {
        if let Some(v) = b(a, k) {
            let mut r = be.inner.ec2.modify_vpc_attribute().vpc_id(id);
            r = if attr == 0 {
                r.enable_dns_support(bool_attr(v))
            } else {
                r.enable_dns_hostnames(bool_attr(v))
            };
            be.call(EC2, "ModifyVpcAttribute", id, r.send()).await?;
        }
    }
    Ok(())
}

async fn set_subnet_attrs(be: &AwsBackend, id: &str, a: &Attrs) -> Result<()> {
    let ec2 = &be.inner.ec2;
    for (k, v) in a {
        let base = ec2.modify_subnet_attribute().subnet_id(id);
        let r = match (k.as_str(), v) {
            ("assign_ipv6_address_on_creation", Json::Bool(x)) => {
                base.assign_ipv6_address_on_creation(bool_attr(*x))
            }
            ("enable_dns64", Json::Bool(x)) => base.enable_dns64(bool_attr(*x)),
            ("enable_resource_name_dns_a_record_on_launch", Json::Bool(x)) => {
                base.enable_resource_name_dns_a_record_on_launch(bool_attr(*x))
            }
            ("enable_resource_name_dns_aaaa_record_on_launch", Json::Bool(x)) => {
                base.enable_resource_name_dns_aaaa_record_on_launch(bool_attr(*x))
            }
            ("private_dns_hostname_type_on_launch", Json::String(x)) => {
                base.private_dns_hostname_type_on_launch(t::HostnameType::from(x.as_str()))
            }
            ("map_public_ip_on_launch", Json::Bool(x)) => {
                base.map_public_ip_on_launch(bool_attr(*x))
            }
            (k, _) => {
                return Err(Error::invalid(
                    format!("aws_subnet.{k}"),
                    "cannot be changed in place",
                ));
            }
        };
        be.call(EC2, "ModifySubnetAttribute", id, r.send()).await?;
    }
    Ok(())
}

fn permission(a: &Attrs) -> IpPermission {
    let proto = s(a, "protocol").unwrap_or_else(|| "-1".into());
    let proto = if proto == "all" {
        "-1".to_owned()
    } else {
        proto
    };
    let portless = !matches!(
        proto.as_str(),
        "tcp" | "udp" | "icmp" | "icmpv6" | "6" | "17" | "1" | "58"
    );
    // AWS ignores ports for protocols other than TCP, UDP and ICMP, so they may be sent
    // either way; moto fails (HTTP 500) when they are missing for a numbered protocol
    // such as 4 (IP-in-IP), so for those 0-0 is sent when none is given.
    let numbered_portless = portless && proto != "-1";
    let mut p = IpPermission::builder().ip_protocol(proto);
    if !portless {
        p = p
            .set_from_port(i32_(a, "from_port"))
            .set_to_port(i32_(a, "to_port"));
    } else if numbered_portless {
        p = p
            .from_port(i32_(a, "from_port").unwrap_or(0))
            .to_port(i32_(a, "to_port").unwrap_or(0));
    }
    for cidr in strs(a, "cidr_blocks") {
        p = p.ip_ranges(IpRange::builder().cidr_ip(cidr).build());
    }
    for cidr in strs(a, "ipv6_cidr_blocks") {
        p = p.ipv6_ranges(Ipv6Range::builder().cidr_ipv6(cidr).build());
    }
    for pl in strs(a, "prefix_list_ids") {
        p = p.prefix_list_ids(PrefixListId::builder().prefix_list_id(pl).build());
    }
    if let Some(g) = s(a, "source_security_group_id") {
        p = p.user_id_group_pairs(UserIdGroupPair::builder().group_id(g).build());
    }
    p.build()
}

fn rule_matches(r: &Resource, a: &Attrs) -> bool {
    [
        "type",
        "protocol",
        "from_port",
        "to_port",
        "cidr_blocks",
        "ipv6_cidr_blocks",
        "prefix_list_ids",
        "source_security_group_id",
    ]
    .iter()
    .all(|k| match a.get(*k) {
        None => true,
        Some(v) => {
            let v = if *k == "protocol" && v == "all" {
                Json::from("-1")
            } else {
                v.clone()
            };
            r.attrs.get(k) == Some(&v)
                || (matches!(*k, "from_port" | "to_port") && r.attr_str("protocol") == Some("-1"))
        }
    })
}

async fn create_sg_rule(be: &AwsBackend, rq: &CreateRequest) -> Result<Resource> {
    let rt = rq.resource_type;
    let a = &rq.attrs;
    let group = rq
        .parent
        .clone()
        .or_else(|| s(a, "security_group_id"))
        .ok_or_else(|| Error::invalid(format!("{rt}.security_group_id"), "is required"))?;
    let egress = s(a, "type").as_deref() == Some("egress");
    let perm = permission(a);
    let ec2 = &be.inner.ec2;
    let r = if egress {
        be.call(
            EC2,
            "AuthorizeSecurityGroupEgress",
            &group,
            ec2.authorize_security_group_egress()
                .group_id(&group)
                .ip_permissions(perm)
                .send(),
        )
        .await
        .map(|_| ())
    } else {
        be.call(
            EC2,
            "AuthorizeSecurityGroupIngress",
            &group,
            ec2.authorize_security_group_ingress()
                .group_id(&group)
                .ip_permissions(perm)
                .send(),
        )
        .await
        .map(|_| ())
    };
    match r {
        Ok(()) => {}
        // The rule exists already (e.g. the default egress rule of a new group).
        Err(Error::AlreadyExists { .. }) => {}
        Err(e) => return Err(e),
    }
    be.invalidate(rt);
    let rules = list(be, rt, &Scope::Parent(group.clone())).await?;
    rules
        .into_iter()
        .find(|r| rule_matches(r, a))
        .ok_or_else(|| Error::unavailable(format!("read back rule of {group} after creating it")))
}

// ---------------------------------------------------------------------------------------
// update

pub(crate) async fn update(be: &AwsBackend, rq: &UpdateRequest) -> Result<Resource> {
    let ec2 = &be.inner.ec2;
    let rt = rq.resource_type;
    let id = rq.id.as_str();
    let old = current(be, rt, id).await?;
    check_immutable(rt, &old.attrs, &rq.attrs)?;
    let mut a = rq.attrs.clone();
    match rt {
        R::Vpc => {
            let mut rest = a.clone();
            rest.remove("enable_dns_support");
            rest.remove("enable_dns_hostnames");
            if !rest.is_empty() {
                return Err(immutable(rt, &rest));
            }
            set_vpc_attrs(be, id, &a).await?;
        }
        R::Subnet => set_subnet_attrs(be, id, &a).await?,
        R::DhcpOptionsAssociation => update_dhcp_options_association(be, id, &mut a).await?,
        R::InternetGateway => update_internet_gateway(be, rt, id, &old, &mut a).await?,
        R::Route => update_route(be, rt, id, &old, &mut a).await?,
        R::RouteTableAssociation => {
            // A subnet associated with another table than the model's is moved there;
            // the moved association gets a new ID, the one read back.
            if let Some(rtb) = s(&a, "route_table_id") {
                a.remove("route_table_id");
                if !a.is_empty() {
                    return Err(immutable(rt, &a));
                }
                if old.attr_str("route_table_id") != Some(rtb.as_str()) {
                    let o = be
                        .call(
                            EC2,
                            "ReplaceRouteTableAssociation",
                            id,
                            ec2.replace_route_table_association()
                                .association_id(id)
                                .route_table_id(&rtb)
                                .send(),
                        )
                        .await?;
                    let new_id = o.new_association_id().unwrap_or(id).to_owned();
                    return be.reread(rt, &new_id).await;
                }
            } else if !a.is_empty() {
                return Err(immutable(rt, &a));
            }
        }
        R::Volume => update_volume(be, rq, rt, id, &mut a).await?,
        R::LaunchTemplate => update_launch_template(be, id, &old, &mut a).await?,
        _ => {
            if !a.is_empty() {
                return Err(immutable(rt, &a));
            }
        }
    }
    if let Some(new_tags) = &rq.tags
        && rt.is_taggable()
    {
        let tag_id = if rt == R::KeyPair {
            let k = be
                .call(
                    EC2,
                    "DescribeKeyPairs",
                    id,
                    ec2.describe_key_pairs().key_names(id).send(),
                )
                .await?;
            k.key_pairs()
                .first()
                .and_then(|k| k.key_pair_id())
                .unwrap_or(id)
                .to_owned()
        } else {
            id.to_owned()
        };
        sync_tags(be, &tag_id, &old.tags, new_tags).await?;
    }
    be.reread(rt, id).await
}

/// Applies the changed attributes `a` to one `DhcpOptionsAssociation`.
async fn update_dhcp_options_association(be: &AwsBackend, id: &str, a: &mut Attrs) -> Result<()> {
    let ec2 = &be.inner.ec2;
    if let Some(d) = s(a, "dhcp_options_id") {
        be.call(
            EC2,
            "AssociateDhcpOptions",
            id,
            ec2.associate_dhcp_options()
                .vpc_id(id)
                .dhcp_options_id(d)
                .send(),
        )
        .await?;
    }
    Ok(())
}

/// Applies the changed attributes `a` to one `InternetGateway`.
async fn update_internet_gateway(
    be: &AwsBackend,
    rt: ResourceType,
    id: &str,
    old: &Resource,
    a: &mut Attrs,
) -> Result<()> {
    let ec2 = &be.inner.ec2;
    if let Some(vpc) = a.remove("vpc_id") {
        if let Some(prev) = old.attr_str("vpc_id") {
            be.call(
                EC2,
                "DetachInternetGateway",
                id,
                ec2.detach_internet_gateway()
                    .internet_gateway_id(id)
                    .vpc_id(prev)
                    .send(),
            )
            .await?;
        }
        if let Some(v) = vpc.as_str() {
            be.call(
                EC2,
                "AttachInternetGateway",
                id,
                ec2.attach_internet_gateway()
                    .internet_gateway_id(id)
                    .vpc_id(v)
                    .send(),
            )
            .await?;
        }
    }
    if !a.is_empty() {
        return Err(immutable(rt, a));
    }
    Ok(())
}

/// Applies the changed attributes `a` to one `Route`.
async fn update_route(
    be: &AwsBackend,
    rt: ResourceType,
    id: &str,
    old: &Resource,
    a: &mut Attrs,
) -> Result<()> {
    let ec2 = &be.inner.ec2;
    let (rtb, dest) = id.split_once('_').ok_or_else(|| {
        Error::invalid(
            format!("{rt} {id}"),
            "route IDs are <route table>_<destination>",
        )
    })?;
    let mut merged = old.attrs.to_map();
    for k in [
        "gateway_id",
        "nat_gateway_id",
        "egress_only_gateway_id",
        "transit_gateway_id",
        "vpc_peering_connection_id",
        "network_interface_id",
        "instance_id",
    ] {
        if a.contains_key(k) {
            merged.retain(|mk, _| !mk.ends_with("_id") || mk == "route_table_id");
        }
    }
    merged.extend(a.clone());
    let v6 = dest.contains(':');
    be.call(
        EC2,
        "ReplaceRoute",
        id,
        ec2.replace_route()
            .route_table_id(rtb)
            .set_destination_cidr_block((!v6).then(|| dest.to_owned()))
            .set_destination_ipv6_cidr_block(v6.then(|| dest.to_owned()))
            .set_gateway_id(s(&merged, "gateway_id"))
            .set_nat_gateway_id(s(&merged, "nat_gateway_id"))
            .set_egress_only_internet_gateway_id(s(&merged, "egress_only_gateway_id"))
            .set_transit_gateway_id(s(&merged, "transit_gateway_id"))
            .set_vpc_peering_connection_id(s(&merged, "vpc_peering_connection_id"))
            .set_network_interface_id(s(&merged, "network_interface_id"))
            .set_instance_id(s(&merged, "instance_id"))
            .send(),
    )
    .await?;
    Ok(())
}

/// Applies the changed attributes `a` to one `Volume`.
async fn update_volume(
    be: &AwsBackend,
    rq: &UpdateRequest,
    rt: ResourceType,
    id: &str,
    a: &mut Attrs,
) -> Result<()> {
    let ec2 = &be.inner.ec2;
    let mut r = ec2.modify_volume().volume_id(id);
    if let Some(v) = i32_(a, "size") {
        r = r.size(v);
    }
    if let Some(v) = s(a, "type") {
        r = r.volume_type(t::VolumeType::from(v.as_str()));
    }
    if let Some(v) = i32_(a, "iops") {
        r = r.iops(v);
    }
    if let Some(v) = i32_(a, "throughput") {
        r = r.throughput(v);
    }
    for k in ["size", "type", "iops", "throughput"] {
        a.remove(k);
    }
    if !a.is_empty() {
        return Err(immutable(rt, a));
    }
    if !rq.attrs.is_empty() {
        be.call(EC2, "ModifyVolume", id, r.send()).await?;
    }
    Ok(())
}

/// Applies the changed attributes `a` to one `LaunchTemplate`.
async fn update_launch_template(
    be: &AwsBackend,
    id: &str,
    old: &Resource,
    a: &mut Attrs,
) -> Result<()> {
    let ec2 = &be.inner.ec2;
    if !a.is_empty() {
        // A new version carries the complete data: the current version's overlaid
        // with the changes (no SourceVersion merge, which emulators lack).
        let mut full = old.attrs.to_map();
        full.remove("latest_version");
        full.extend(std::mem::take(a));
        let o = be
            .call(
                EC2,
                "CreateLaunchTemplateVersion",
                id,
                ec2.create_launch_template_version()
                    .launch_template_id(id)
                    .launch_template_data(lt_data_from_attrs(&full))
                    .send(),
            )
            .await?;
        if let Some(v) = o.launch_template_version().and_then(|v| v.version_number()) {
            be.call(
                EC2,
                "ModifyLaunchTemplate",
                id,
                ec2.modify_launch_template()
                    .launch_template_id(id)
                    .default_version(v.to_string())
                    .send(),
            )
            .await?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// delete

pub(crate) async fn delete(be: &AwsBackend, rt: ResourceType, id: &str) -> Result<()> {
    let ec2 = &be.inner.ec2;
    match rt {
        R::Vpc => {
            be.call(EC2, "DeleteVpc", id, ec2.delete_vpc().vpc_id(id).send())
                .await?;
        }
        R::VpcCidrBlock | R::VpcIpv6CidrBlock => delete_vpc_cidr_block(be, id).await?,
        R::DhcpOptions => delete_dhcp_options(be, id).await?,
        R::DhcpOptionsAssociation => delete_dhcp_options_association(be, id).await?,
        R::InternetGateway => delete_internet_gateway(be, rt, id).await?,
        R::EgressOnlyInternetGateway => delete_egress_only_internet_gateway(be, id).await?,
        R::Subnet => delete_subnet(be, id).await?,
        R::RouteTable => delete_route_table(be, id).await?,
        R::Route => delete_route(be, rt, id).await?,
        R::RouteTableAssociation => delete_route_table_association(be, id).await?,
        R::ElasticIp => delete_elastic_ip(be, id).await?,
        R::NatGateway => delete_nat_gateway(be, id).await?,
        R::SecurityGroup => delete_security_group(be, id).await?,
        R::SecurityGroupRule => delete_security_group_rule(be, rt, id).await?,
        R::KeyPair => delete_key_pair(be, id).await?,
        R::Volume => delete_volume(be, id).await?,
        R::LaunchTemplate => delete_launch_template(be, id).await?,
        R::Instance => delete_instance(be, id).await?,
        other => {
            return Err(Error::NotImplemented {
                operation: format!("delete {other}"),
                implementer: "kops-cloud-aws".into(),
            });
        }
    }
    Ok(())
}

/// Deletes one `SecurityGroupRule`.
async fn delete_security_group_rule(be: &AwsBackend, rt: ResourceType, id: &str) -> Result<()> {
    let ec2 = &be.inner.ec2;
    let found = list(be, rt, &Scope::Ids(vec![id.to_owned()])).await?;
    let Some(r) = found.into_iter().find(|r| r.id == id) else {
        return Ok(());
    };
    let group = r.parent.clone().unwrap_or_default();
    if r.attr_str("type") == Some("egress") {
        be.call(
            EC2,
            "RevokeSecurityGroupEgress",
            id,
            ec2.revoke_security_group_egress()
                .group_id(&group)
                .security_group_rule_ids(id)
                .send(),
        )
        .await?;
    } else {
        be.call(
            EC2,
            "RevokeSecurityGroupIngress",
            id,
            ec2.revoke_security_group_ingress()
                .group_id(&group)
                .security_group_rule_ids(id)
                .send(),
        )
        .await?;
    }
    Ok(())
}

/// Disassociates one IPv4 or IPv6 CIDR block from its VPC.
async fn delete_vpc_cidr_block(be: &AwsBackend, id: &str) -> Result<()> {
    let ec2 = &be.inner.ec2;
    be.call(
        EC2,
        "DisassociateVpcCidrBlock",
        id,
        ec2.disassociate_vpc_cidr_block().association_id(id).send(),
    )
    .await?;
    Ok(())
}

/// Deletes one `DhcpOptions`.
async fn delete_dhcp_options(be: &AwsBackend, id: &str) -> Result<()> {
    let ec2 = &be.inner.ec2;
    be.call(
        EC2,
        "DeleteDhcpOptions",
        id,
        ec2.delete_dhcp_options().dhcp_options_id(id).send(),
    )
    .await?;
    Ok(())
}

/// Deletes one `Subnet`.
async fn delete_subnet(be: &AwsBackend, id: &str) -> Result<()> {
    let ec2 = &be.inner.ec2;
    be.call(
        EC2,
        "DeleteSubnet",
        id,
        ec2.delete_subnet().subnet_id(id).send(),
    )
    .await?;
    Ok(())
}

/// Deletes one `RouteTableAssociation`.
async fn delete_route_table_association(be: &AwsBackend, id: &str) -> Result<()> {
    let ec2 = &be.inner.ec2;
    be.call(
        EC2,
        "DisassociateRouteTable",
        id,
        ec2.disassociate_route_table().association_id(id).send(),
    )
    .await?;
    Ok(())
}

/// Deletes one `ElasticIp`.
async fn delete_elastic_ip(be: &AwsBackend, id: &str) -> Result<()> {
    let ec2 = &be.inner.ec2;
    be.call(
        EC2,
        "ReleaseAddress",
        id,
        ec2.release_address().allocation_id(id).send(),
    )
    .await?;
    Ok(())
}

/// Deletes one `NatGateway`.
async fn delete_nat_gateway(be: &AwsBackend, id: &str) -> Result<()> {
    let ec2 = &be.inner.ec2;
    be.call(
        EC2,
        "DeleteNatGateway",
        id,
        ec2.delete_nat_gateway().nat_gateway_id(id).send(),
    )
    .await?;
    Ok(())
}

/// Deletes one `SecurityGroup`.
async fn delete_security_group(be: &AwsBackend, id: &str) -> Result<()> {
    let ec2 = &be.inner.ec2;
    be.call(
        EC2,
        "DeleteSecurityGroup",
        id,
        ec2.delete_security_group().group_id(id).send(),
    )
    .await?;
    Ok(())
}

/// Deletes one `KeyPair`.
async fn delete_key_pair(be: &AwsBackend, id: &str) -> Result<()> {
    let ec2 = &be.inner.ec2;
    be.call(
        EC2,
        "DeleteKeyPair",
        id,
        ec2.delete_key_pair().key_name(id).send(),
    )
    .await?;
    Ok(())
}

/// Deletes one `Volume`.
async fn delete_volume(be: &AwsBackend, id: &str) -> Result<()> {
    let ec2 = &be.inner.ec2;
    be.call(
        EC2,
        "DeleteVolume",
        id,
        ec2.delete_volume().volume_id(id).send(),
    )
    .await?;
    Ok(())
}

/// Deletes one `LaunchTemplate`.
async fn delete_launch_template(be: &AwsBackend, id: &str) -> Result<()> {
    let ec2 = &be.inner.ec2;
    be.call(
        EC2,
        "DeleteLaunchTemplate",
        id,
        ec2.delete_launch_template().launch_template_id(id).send(),
    )
    .await?;
    Ok(())
}

/// Deletes one `Instance`.
async fn delete_instance(be: &AwsBackend, id: &str) -> Result<()> {
    let ec2 = &be.inner.ec2;
    be.call(
        EC2,
        "TerminateInstances",
        id,
        ec2.terminate_instances().instance_ids(id).send(),
    )
    .await?;
    Ok(())
}

/// Deletes one `DhcpOptionsAssociation`.
async fn delete_dhcp_options_association(be: &AwsBackend, id: &str) -> Result<()> {
    let ec2 = &be.inner.ec2;
    be.call(
        EC2,
        "AssociateDhcpOptions",
        id,
        ec2.associate_dhcp_options()
            .vpc_id(id)
            .dhcp_options_id("default")
            .send(),
    )
    .await?;
    Ok(())
}

/// Deletes one `InternetGateway`.
async fn delete_internet_gateway(be: &AwsBackend, rt: ResourceType, id: &str) -> Result<()> {
    let ec2 = &be.inner.ec2;
    let found = list(be, rt, &Scope::Ids(vec![id.to_owned()])).await?;
    if let Some(vpc) = found.first().and_then(|g| g.attr_str("vpc_id")) {
        be.call(
            EC2,
            "DetachInternetGateway",
            id,
            ec2.detach_internet_gateway()
                .internet_gateway_id(id)
                .vpc_id(vpc)
                .send(),
        )
        .await?;
    }
    be.call(
        EC2,
        "DeleteInternetGateway",
        id,
        ec2.delete_internet_gateway().internet_gateway_id(id).send(),
    )
    .await?;
    Ok(())
}

/// Deletes one `EgressOnlyInternetGateway`.
async fn delete_egress_only_internet_gateway(be: &AwsBackend, id: &str) -> Result<()> {
    let ec2 = &be.inner.ec2;
    be.call(
        EC2,
        "DeleteEgressOnlyInternetGateway",
        id,
        ec2.delete_egress_only_internet_gateway()
            .egress_only_internet_gateway_id(id)
            .send(),
    )
    .await?;
    Ok(())
}

/// Deletes one `RouteTable`.
async fn delete_route_table(be: &AwsBackend, id: &str) -> Result<()> {
    let ec2 = &be.inner.ec2;
    let assocs = list(be, R::RouteTableAssociation, &Scope::Parent(id.to_owned())).await?;
    for x in assocs {
        be.call(
            EC2,
            "DisassociateRouteTable",
            &x.id,
            ec2.disassociate_route_table().association_id(&x.id).send(),
        )
        .await?;
    }
    be.call(
        EC2,
        "DeleteRouteTable",
        id,
        ec2.delete_route_table().route_table_id(id).send(),
    )
    .await?;
    Ok(())
}

/// Deletes one `Route`.
async fn delete_route(be: &AwsBackend, rt: ResourceType, id: &str) -> Result<()> {
    let ec2 = &be.inner.ec2;
    let (rtb, dest) = id.split_once('_').ok_or_else(|| {
        Error::invalid(
            format!("{rt} {id}"),
            "route IDs are <route table>_<destination>",
        )
    })?;
    let v6 = dest.contains(':');
    be.call(
        EC2,
        "DeleteRoute",
        id,
        ec2.delete_route()
            .route_table_id(rtb)
            .set_destination_cidr_block((!v6).then(|| dest.to_owned()))
            .set_destination_ipv6_cidr_block(v6.then(|| dest.to_owned()))
            .send(),
    )
    .await?;
    Ok(())
}
