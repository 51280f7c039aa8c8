//! Elastic Load Balancing v2: load balancers, target groups and listeners (IDs are ARNs).

use std::collections::BTreeMap;

use crate::cloud::{CloudError as Error, CloudResult as Result, Tags};
use crate::cloud::{CreateRequest, Resource, ResourceType, Service, UpdateRequest};
use aws_sdk_elasticloadbalancingv2::types::{
    self as t, Action, ActionTypeEnum, Certificate, LoadBalancerAttribute, SubnetMapping, Tag,
    TargetGroupAttribute,
};
use serde_json::Value as Json;

use crate::backend::{AwsBackend, Scope};
use crate::convert::{
    Attrs, b, check_immutable, i32_, immutable, jb, ji, jlist, js, obj, object, objs, req, s, strs,
    tag_diff,
};

use ResourceType as R;

const ELB: Service = Service::Elbv2;

async fn tags_for(
    be: &AwsBackend,
    arns: &[String],
) -> Result<BTreeMap<String, BTreeMap<String, String>>> {
    let mut out = BTreeMap::new();
    for chunk in arns.chunks(20) {
        let o = be
            .call(
                ELB,
                "DescribeTags",
                "load balancer tags",
                be.inner
                    .elb
                    .describe_tags()
                    .set_resource_arns(Some(chunk.to_vec()))
                    .send(),
            )
            .await?;
        for d in o.tag_descriptions() {
            let tags = d
                .tags()
                .iter()
                .filter_map(|t| {
                    Some((
                        t.key()?.to_owned(),
                        t.value().unwrap_or_default().to_owned(),
                    ))
                })
                .collect();
            out.insert(d.resource_arn().unwrap_or_default().to_owned(), tags);
        }
    }
    Ok(out)
}

fn attr_value<'a>(attrs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

pub(crate) async fn list(
    be: &AwsBackend,
    rt: ResourceType,
    scope: &Scope,
) -> Result<Vec<Resource>> {
    let mut out = Vec::new();
    match rt {
        R::LoadBalancer => list_load_balancers(be, rt, scope, &mut out).await?,
        R::TargetGroup => list_target_groups(be, rt, scope, &mut out).await?,
        R::Listener => list_listeners(be, rt, scope, &mut out).await?,
        other => {
            return Err(Error::NotImplemented {
                operation: format!("list {other}"),
                implementer: "kops-cloud-aws ELBv2".into(),
            });
        }
    }
    Ok(out)
}

/// Lists `LoadBalancer` objects in `scope` into `out`.
async fn list_load_balancers(
    be: &AwsBackend,
    rt: ResourceType,
    scope: &Scope,
    out: &mut Vec<Resource>,
) -> Result<()> {
    let elb = &be.inner.elb;
    let mut lbs = Vec::new();
    let r = match scope {
        Scope::Ids(ids) => elb
            .describe_load_balancers()
            .set_load_balancer_arns(Some(ids.clone())),
        _ => elb.describe_load_balancers(),
    };
    let mut st = r.into_paginator().send();
    loop {
        match be
            .page(ELB, "DescribeLoadBalancers", "load balancers", st.next())
            .await
        {
            Ok(Some(p)) => lbs.extend(p.load_balancers().iter().cloned()),
            Ok(None) | Err(Error::NotFound { .. }) => break,
            Err(e) => return Err(e),
        }
    }
    let arns: Vec<String> = lbs
        .iter()
        .filter_map(|l| l.load_balancer_arn().map(str::to_owned))
        .collect();
    let tags = tags_for(be, &arns).await?;
    for l in lbs {
        let arn = l.load_balancer_arn().unwrap_or_default();
        let mut r = Resource::new(rt, arn)
            .with_arn(arn)
            .with_name(l.load_balancer_name().unwrap_or_default())
            .with_attr(
                "load_balancer_type",
                l.r#type().map(|t| t.as_str()).unwrap_or_default(),
            )
            .with_attr(
                "internal",
                l.scheme().map(|s| s.as_str()) == Some("internal"),
            )
            .with_attr("security_groups", jlist(l.security_groups()))
            .with_attr(
                "ip_address_type",
                l.ip_address_type().map(|t| t.as_str()).unwrap_or_default(),
            )
            .with_attr("dns_name", l.dns_name().unwrap_or_default())
            .with_attr("zone_id", l.canonical_hosted_zone_id().unwrap_or_default());
        let mut mappings: Vec<Json> = l
            .availability_zones()
            .iter()
            .map(|z| {
                let addr = z.load_balancer_addresses().first();
                object([
                    ("allocation_id", js(addr.and_then(|a| a.allocation_id()))),
                    (
                        "private_ipv4_address",
                        js(addr.and_then(|a| a.private_ipv4_address())),
                    ),
                    ("subnet_id", js(z.subnet_id())),
                ])
            })
            .collect();
        mappings.sort_by_key(|m| {
            m.get("subnet_id")
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_owned()
        });
        r = r.with_attr("subnet_mapping", Json::Array(mappings));
        let a = be
            .call_opt(
                ELB,
                "DescribeLoadBalancerAttributes",
                arn,
                elb.describe_load_balancer_attributes()
                    .load_balancer_arn(arn)
                    .send(),
            )
            .await?;
        let kv: Vec<(String, String)> = a
            .iter()
            .flat_map(|a| a.attributes())
            .filter_map(|x| Some((x.key()?.to_owned(), x.value()?.to_owned())))
            .collect();
        if let Some(v) = attr_value(&kv, "load_balancing.cross_zone.enabled") {
            r = r.with_attr("enable_cross_zone_load_balancing", v == "true");
        }
        r.tags = tags.get(arn).map(Tags::from).unwrap_or_default();
        out.push(r);
    }
    Ok(())
}

/// Lists `TargetGroup` objects in `scope` into `out`.
async fn list_target_groups(
    be: &AwsBackend,
    rt: ResourceType,
    scope: &Scope,
    out: &mut Vec<Resource>,
) -> Result<()> {
    let elb = &be.inner.elb;
    let mut tgs = Vec::new();
    let r = match scope {
        Scope::Ids(ids) => elb
            .describe_target_groups()
            .set_target_group_arns(Some(ids.clone())),
        _ => elb.describe_target_groups(),
    };
    let mut st = r.into_paginator().send();
    loop {
        match be
            .page(ELB, "DescribeTargetGroups", "target groups", st.next())
            .await
        {
            Ok(Some(p)) => tgs.extend(p.target_groups().iter().cloned()),
            Ok(None) | Err(Error::NotFound { .. }) => break,
            Err(e) => return Err(e),
        }
    }
    let arns: Vec<String> = tgs
        .iter()
        .filter_map(|l| l.target_group_arn().map(str::to_owned))
        .collect();
    let tags = tags_for(be, &arns).await?;
    for g in tgs {
        let arn = g.target_group_arn().unwrap_or_default();
        let mut r = Resource::new(rt, arn)
            .with_arn(arn)
            .with_name(g.target_group_name().unwrap_or_default())
            .with_attr("port", i64::from(g.port().unwrap_or(0)))
            .with_attr(
                "protocol",
                g.protocol().map(|p| p.as_str()).unwrap_or_default(),
            )
            .with_attr("vpc_id", g.vpc_id().unwrap_or_default())
            .with_attr(
                "health_check",
                object([
                    ("enabled", jb(g.health_check_enabled())),
                    ("healthy_threshold", ji(g.healthy_threshold_count())),
                    ("interval", ji(g.health_check_interval_seconds())),
                    ("path", js(g.health_check_path())),
                    ("port", js(g.health_check_port())),
                    (
                        "protocol",
                        js(g.health_check_protocol().map(|p| p.as_str())),
                    ),
                    ("timeout", ji(g.health_check_timeout_seconds())),
                    ("unhealthy_threshold", ji(g.unhealthy_threshold_count())),
                ]),
            );
        let a = be
            .call_opt(
                ELB,
                "DescribeTargetGroupAttributes",
                arn,
                elb.describe_target_group_attributes()
                    .target_group_arn(arn)
                    .send(),
            )
            .await?;
        let kv: Vec<(String, String)> = a
            .iter()
            .flat_map(|a| a.attributes())
            .filter_map(|x| Some((x.key()?.to_owned(), x.value()?.to_owned())))
            .collect();
        if let Some(v) = attr_value(&kv, "deregistration_delay.timeout_seconds")
            .and_then(|v| v.parse::<i64>().ok())
        {
            r = r.with_attr("deregistration_delay", v);
        }
        if let Some(v) = attr_value(&kv, "deregistration_delay.connection_termination.enabled") {
            r = r.with_attr("connection_termination", v == "true");
        }
        r.tags = tags.get(arn).map(Tags::from).unwrap_or_default();
        out.push(r);
    }
    Ok(())
}

/// Lists `Listener` objects in `scope` into `out`.
async fn list_listeners(
    be: &AwsBackend,
    rt: ResourceType,
    scope: &Scope,
    out: &mut Vec<Resource>,
) -> Result<()> {
    let elb = &be.inner.elb;
    let lbs: Vec<String> = match scope {
        Scope::Parent(p) => vec![p.clone()],
        _ => Box::pin(list(be, R::LoadBalancer, &Scope::All))
            .await?
            .into_iter()
            .map(|r| r.id)
            .collect(),
    };
    for lb in lbs {
        let o = be
            .call_opt(
                ELB,
                "DescribeListeners",
                &lb,
                elb.describe_listeners().load_balancer_arn(&lb).send(),
            )
            .await?;
        for l in o.iter().flat_map(|o| o.listeners()) {
            let arn = l.listener_arn().unwrap_or_default();
            let actions: Vec<Json> = l
                .default_actions()
                .iter()
                .map(|a| {
                    object([
                        ("target_group_arn", js(a.target_group_arn())),
                        ("type", js(a.r#type().map(|t| t.as_str()))),
                    ])
                })
                .collect();
            let mut r = Resource::new(rt, arn)
                .with_arn(arn)
                .with_parent(lb.as_str())
                .with_attr("load_balancer_arn", lb.as_str())
                .with_attr("port", i64::from(l.port().unwrap_or(0)))
                .with_attr(
                    "protocol",
                    l.protocol().map(|p| p.as_str()).unwrap_or_default(),
                )
                .with_attr("default_action", Json::Array(actions));
            if let Some(c) = l.certificates().first().and_then(|c| c.certificate_arn()) {
                r = r.with_attr("certificate_arn", c);
            }
            if let Some(p) = l.ssl_policy() {
                r = r.with_attr("ssl_policy", p);
            }
            out.push(r);
        }
    }
    Ok(())
}

fn tag_list(tags: &BTreeMap<String, String>) -> Result<Vec<Tag>> {
    Ok(tags
        .iter()
        .map(|(k, v)| Tag::builder().key(k).value(v).build())
        .collect())
}

fn mappings(a: &Attrs) -> Vec<SubnetMapping> {
    objs(a, "subnet_mapping")
        .iter()
        .map(|m| {
            SubnetMapping::builder()
                .set_subnet_id(s(m, "subnet_id"))
                .set_allocation_id(s(m, "allocation_id"))
                .set_private_ipv4_address(s(m, "private_ipv4_address"))
                .build()
        })
        .collect()
}

fn actions(a: &Attrs) -> Result<Vec<Action>> {
    Ok(objs(a, "default_action")
        .iter()
        .map(|x| {
            Action::builder()
                .r#type(ActionTypeEnum::from(
                    s(x, "type").unwrap_or_else(|| "forward".into()).as_str(),
                ))
                .set_target_group_arn(s(x, "target_group_arn"))
                .build()
        })
        .collect())
}

async fn set_lb_attrs(be: &AwsBackend, arn: &str, a: &Attrs) -> Result<()> {
    if let Some(v) = b(a, "enable_cross_zone_load_balancing") {
        be.call(
            ELB,
            "ModifyLoadBalancerAttributes",
            arn,
            be.inner
                .elb
                .modify_load_balancer_attributes()
                .load_balancer_arn(arn)
                .attributes(
                    LoadBalancerAttribute::builder()
                        .key("load_balancing.cross_zone.enabled")
                        .value(v.to_string())
                        .build(),
                )
                .send(),
        )
        .await?;
    }
    Ok(())
}

async fn set_tg_attrs(be: &AwsBackend, arn: &str, a: &Attrs) -> Result<()> {
    let mut attrs = Vec::new();
    if let Some(v) = i32_(a, "deregistration_delay") {
        attrs.push(
            TargetGroupAttribute::builder()
                .key("deregistration_delay.timeout_seconds")
                .value(v.to_string())
                .build(),
        );
    }
    if let Some(v) = b(a, "connection_termination") {
        attrs.push(
            TargetGroupAttribute::builder()
                .key("deregistration_delay.connection_termination.enabled")
                .value(v.to_string())
                .build(),
        );
    }
    if !attrs.is_empty() {
        be.call(
            ELB,
            "ModifyTargetGroupAttributes",
            arn,
            be.inner
                .elb
                .modify_target_group_attributes()
                .target_group_arn(arn)
                .set_attributes(Some(attrs))
                .send(),
        )
        .await?;
    }
    Ok(())
}

pub(crate) async fn create(be: &AwsBackend, rq: &CreateRequest) -> Result<Resource> {
    let elb = &be.inner.elb;
    let rt = rq.resource_type;
    let a = &rq.attrs;
    let name = || {
        rq.name
            .clone()
            .or_else(|| s(a, "name"))
            .ok_or_else(|| Error::invalid(format!("{rt}.name"), "is required"))
    };
    let tags = tag_list(&rq.tags)?;
    let tags = (!tags.is_empty()).then_some(tags);
    let id = match rt {
        R::LoadBalancer => {
            let n = name()?;
            let sgs = strs(a, "security_groups");
            let o = be
                .call(
                    ELB,
                    "CreateLoadBalancer",
                    &n,
                    elb.create_load_balancer()
                        .name(&n)
                        .set_type(
                            s(a, "load_balancer_type")
                                .map(|v| t::LoadBalancerTypeEnum::from(v.as_str())),
                        )
                        .scheme(if b(a, "internal").unwrap_or(false) {
                            t::LoadBalancerSchemeEnum::Internal
                        } else {
                            t::LoadBalancerSchemeEnum::InternetFacing
                        })
                        .set_subnet_mappings(Some(mappings(a)))
                        .set_security_groups((!sgs.is_empty()).then_some(sgs))
                        .set_ip_address_type(
                            s(a, "ip_address_type").map(|v| t::IpAddressType::from(v.as_str())),
                        )
                        .set_tags(tags)
                        .send(),
                )
                .await?;
            let arn = o
                .load_balancers()
                .first()
                .and_then(|l| l.load_balancer_arn())
                .unwrap_or_default()
                .to_owned();
            set_lb_attrs(be, &arn, a).await?;
            arn
        }
        R::TargetGroup => {
            let n = name()?;
            let hc = obj(a, "health_check").unwrap_or_default();
            let o = be
                .call(
                    ELB,
                    "CreateTargetGroup",
                    &n,
                    elb.create_target_group()
                        .name(&n)
                        .set_port(i32_(a, "port"))
                        .set_protocol(s(a, "protocol").map(|v| t::ProtocolEnum::from(v.as_str())))
                        .set_vpc_id(s(a, "vpc_id"))
                        .set_health_check_enabled(b(&hc, "enabled"))
                        .set_health_check_interval_seconds(i32_(&hc, "interval"))
                        .set_health_check_path(s(&hc, "path"))
                        .set_health_check_port(s(&hc, "port"))
                        .set_health_check_protocol(
                            s(&hc, "protocol").map(|v| t::ProtocolEnum::from(v.as_str())),
                        )
                        .set_health_check_timeout_seconds(i32_(&hc, "timeout"))
                        .set_healthy_threshold_count(i32_(&hc, "healthy_threshold"))
                        .set_unhealthy_threshold_count(i32_(&hc, "unhealthy_threshold"))
                        .set_tags(tags)
                        .send(),
                )
                .await?;
            let arn = o
                .target_groups()
                .first()
                .and_then(|g| g.target_group_arn())
                .unwrap_or_default()
                .to_owned();
            set_tg_attrs(be, &arn, a).await?;
            arn
        }
        R::Listener => {
            let lb = rq
                .parent
                .clone()
                .map_or_else(|| req(a, "load_balancer_arn", rt), Ok)?;
            let o = be
                .call(
                    ELB,
                    "CreateListener",
                    &lb,
                    elb.create_listener()
                        .load_balancer_arn(&lb)
                        .set_port(i32_(a, "port"))
                        .set_protocol(s(a, "protocol").map(|v| t::ProtocolEnum::from(v.as_str())))
                        .set_ssl_policy(s(a, "ssl_policy"))
                        .set_certificates(
                            s(a, "certificate_arn")
                                .map(|c| vec![Certificate::builder().certificate_arn(c).build()]),
                        )
                        .set_default_actions(Some(actions(a)?))
                        .send(),
                )
                .await?;
            o.listeners()
                .first()
                .and_then(|l| l.listener_arn())
                .unwrap_or_default()
                .to_owned()
        }
        other => {
            return Err(Error::NotImplemented {
                operation: format!("create {other}"),
                implementer: "kops-cloud-aws".into(),
            });
        }
    };
    be.reread(rt, &id).await
}

pub(crate) async fn update(be: &AwsBackend, rq: &UpdateRequest) -> Result<Resource> {
    let elb = &be.inner.elb;
    let rt = rq.resource_type;
    let id = rq.id.as_str();
    let old = be.reread(rt, id).await.map_err(|_| Error::NotFound {
        what: format!("{rt} {id}"),
    })?;
    check_immutable(rt, &old.attrs, &rq.attrs)?;
    let mut a = rq.attrs.clone();
    match rt {
        R::LoadBalancer => {
            if a.contains_key("subnet_mapping") {
                be.call(
                    ELB,
                    "SetSubnets",
                    id,
                    elb.set_subnets()
                        .load_balancer_arn(id)
                        .set_subnet_mappings(Some(mappings(&a)))
                        .send(),
                )
                .await?;
            }
            if a.contains_key("security_groups") {
                be.call(
                    ELB,
                    "SetSecurityGroups",
                    id,
                    elb.set_security_groups()
                        .load_balancer_arn(id)
                        .set_security_groups(Some(strs(&a, "security_groups")))
                        .send(),
                )
                .await?;
            }
            if let Some(v) = s(&a, "ip_address_type") {
                be.call(
                    ELB,
                    "SetIpAddressType",
                    id,
                    elb.set_ip_address_type()
                        .load_balancer_arn(id)
                        .ip_address_type(t::IpAddressType::from(v.as_str()))
                        .send(),
                )
                .await?;
            }
            set_lb_attrs(be, id, &a).await?;
            for k in [
                "subnet_mapping",
                "security_groups",
                "ip_address_type",
                "enable_cross_zone_load_balancing",
            ] {
                a.remove(k);
            }
        }
        R::TargetGroup => {
            set_tg_attrs(be, id, &a).await?;
            if let Some(hc) = obj(&a, "health_check") {
                be.call(
                    ELB,
                    "ModifyTargetGroup",
                    id,
                    elb.modify_target_group()
                        .target_group_arn(id)
                        .set_health_check_enabled(b(&hc, "enabled"))
                        .set_health_check_interval_seconds(i32_(&hc, "interval"))
                        .set_health_check_path(s(&hc, "path"))
                        .set_health_check_port(s(&hc, "port"))
                        .set_health_check_protocol(
                            s(&hc, "protocol").map(|v| t::ProtocolEnum::from(v.as_str())),
                        )
                        .set_health_check_timeout_seconds(i32_(&hc, "timeout"))
                        .set_healthy_threshold_count(i32_(&hc, "healthy_threshold"))
                        .set_unhealthy_threshold_count(i32_(&hc, "unhealthy_threshold"))
                        .send(),
                )
                .await?;
            }
            for k in [
                "deregistration_delay",
                "connection_termination",
                "health_check",
            ] {
                a.remove(k);
            }
        }
        R::Listener => {
            let mut merged = old.attrs.to_map();
            merged.extend(a.clone());
            be.call(
                ELB,
                "ModifyListener",
                id,
                elb.modify_listener()
                    .listener_arn(id)
                    .set_port(i32_(&merged, "port"))
                    .set_protocol(s(&merged, "protocol").map(|v| t::ProtocolEnum::from(v.as_str())))
                    .set_ssl_policy(s(&merged, "ssl_policy"))
                    .set_certificates(
                        s(&merged, "certificate_arn")
                            .map(|c| vec![Certificate::builder().certificate_arn(c).build()]),
                    )
                    .set_default_actions(Some(actions(&merged)?))
                    .send(),
            )
            .await?;
            a.clear();
        }
        _ => {}
    }
    if !a.is_empty() {
        return Err(immutable(rt, &a));
    }
    if let Some(new) = &rq.tags {
        let (set, removed) = tag_diff(&old.tags, new);
        if !set.is_empty() {
            be.call(
                ELB,
                "AddTags",
                id,
                elb.add_tags()
                    .resource_arns(id)
                    .set_tags(Some(tag_list(&set)?))
                    .send(),
            )
            .await?;
        }
        if !removed.is_empty() {
            be.call(
                ELB,
                "RemoveTags",
                id,
                elb.remove_tags()
                    .resource_arns(id)
                    .set_tag_keys(Some(removed))
                    .send(),
            )
            .await?;
        }
    }
    be.reread(rt, id).await
}

pub(crate) async fn delete(be: &AwsBackend, rt: ResourceType, id: &str) -> Result<()> {
    let elb = &be.inner.elb;
    match rt {
        R::LoadBalancer => {
            be.call(
                ELB,
                "DeleteLoadBalancer",
                id,
                elb.delete_load_balancer().load_balancer_arn(id).send(),
            )
            .await?;
        }
        R::TargetGroup => {
            be.call(
                ELB,
                "DeleteTargetGroup",
                id,
                elb.delete_target_group().target_group_arn(id).send(),
            )
            .await?;
        }
        R::Listener => {
            be.call(
                ELB,
                "DeleteListener",
                id,
                elb.delete_listener().listener_arn(id).send(),
            )
            .await?;
        }
        other => {
            return Err(Error::NotImplemented {
                operation: format!("delete {other}"),
                implementer: "kops-cloud-aws".into(),
            });
        }
    }
    Ok(())
}
