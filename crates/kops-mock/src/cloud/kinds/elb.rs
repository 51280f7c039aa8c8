//! Network load balancers, target groups, listeners (ELBv2).

use std::collections::BTreeMap;

use kops_cloud_aws::cloud::{CloudResult, ListQuery, Resource, ResourceType};
use kops_tasks::resource::Tags as ResourceTags;
use serde_json::{Map, Value as Json};

use super::{Create, Kind, Update, removed_tags};
use crate::cloud::{
    Attrs, IntoCloud, a_bool, a_i32, a_list, a_obj, a_str, as_set, gone, invalid, m_attrs, new_res,
    objs, put, put_opt, to_cloud_error,
};
use crate::elbv2::{
    Action, CreateLoadBalancer, CreateTargetGroup, HealthCheck, ListenerSpec, SubnetMapping,
};
use crate::{MockAws, Tags};

/// [`ResourceType::LoadBalancer`].
pub(super) struct LoadBalancer;

impl Kind for LoadBalancer {
    fn kind(&self) -> ResourceType {
        ResourceType::LoadBalancer
    }

    fn native(&self) -> &'static [&'static str] {
        &[
            "name",
            "load_balancer_type",
            "internal",
            "ip_address_type",
            "security_groups",
            "subnet_mapping",
            "enable_cross_zone_load_balancing",
            "dns_name",
            "zone_id",
        ]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        let lbs = m.describe_load_balancers(&[], &[]).into_cloud()?;
        let arns: Vec<String> = lbs.iter().map(|l| l.arn.clone()).collect();
        let tags = if arns.is_empty() {
            BTreeMap::new()
        } else {
            m.describe_elbv2_tags(&arns).into_cloud()?
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
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let tags = c.tags();
        let lb = m
            .create_load_balancer(CreateLoadBalancer {
                name: c.name()?,
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
            m.modify_load_balancer_attributes(
                &lb.arn,
                [(
                    "load_balancing.cross_zone.enabled".to_owned(),
                    v.to_string(),
                )]
                .into(),
            )
            .into_cloud()?;
        }
        Ok(lb.arn)
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let id = u.id;
        let a = u.a;
        let merged = &u.merged;
        if a.contains_key("subnet_mapping") || a.contains_key("subnets") {
            m.set_load_balancer_subnets(id, subnet_mappings(merged))
                .into_cloud()?;
        }
        if a.contains_key("security_groups") {
            m.set_load_balancer_security_groups(id, a_list(a, "security_groups"))
                .into_cloud()?;
        }
        if let Some(v) = a_bool(a, "enable_cross_zone_load_balancing") {
            m.modify_load_balancer_attributes(
                id,
                [(
                    "load_balancing.cross_zone.enabled".to_owned(),
                    v.to_string(),
                )]
                .into(),
            )
            .into_cloud()?;
        }
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.delete_load_balancer(id))
    }

    fn retag(&self, m: &MockAws, id: &str, old: &ResourceTags, new: &Tags) -> CloudResult<()> {
        elbv2_retag(m, id, old, new)
    }
}

/// [`ResourceType::TargetGroup`].
pub(super) struct TargetGroup;

impl Kind for TargetGroup {
    fn kind(&self) -> ResourceType {
        ResourceType::TargetGroup
    }

    fn native(&self) -> &'static [&'static str] {
        &[
            "name",
            "port",
            "protocol",
            "vpc_id",
            "target_type",
            "deregistration_delay",
            "connection_termination",
            "load_balancer_arns",
        ]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        let tgs = m.describe_target_groups(&[], &[], None).into_cloud()?;
        let arns: Vec<String> = tgs.iter().map(|t| t.arn.clone()).collect();
        let tags = if arns.is_empty() {
            BTreeMap::new()
        } else {
            m.describe_elbv2_tags(&arns).into_cloud()?
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
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let rt = c.rt;
        let a = c.a;
        let tags = c.tags();
        let tg = m
            .create_target_group(CreateTargetGroup {
                name: c.name()?,
                protocol: a_str(a, "protocol").unwrap_or_else(|| "TCP".into()),
                port: a_i32(a, "port").ok_or_else(|| invalid(rt, "port", "is required"))?,
                vpc_id: c.need("vpc_id")?,
                target_type: a_str(a, "target_type").unwrap_or_default(),
                health_check: health_check(a),
                tags,
            })
            .into_cloud()?;
        let attrs = tg_attributes(a);
        if !attrs.is_empty() {
            m.modify_target_group_attributes(&tg.arn, attrs)
                .into_cloud()?;
        }
        Ok(tg.arn)
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let id = u.id;
        let a = u.a;
        let merged = &u.merged;
        if a.contains_key("health_check") {
            m.modify_target_group(id, health_check(merged))
                .into_cloud()?;
        }
        let attrs = tg_attributes(a);
        if !attrs.is_empty() {
            m.modify_target_group_attributes(id, attrs).into_cloud()?;
        }
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.delete_target_group(id))
    }

    fn retag(&self, m: &MockAws, id: &str, old: &ResourceTags, new: &Tags) -> CloudResult<()> {
        elbv2_retag(m, id, old, new)
    }
}

/// [`ResourceType::Listener`].
pub(super) struct Listener;

impl Kind for Listener {
    fn kind(&self) -> ResourceType {
        ResourceType::Listener
    }

    fn native(&self) -> &'static [&'static str] {
        &[
            "load_balancer_arn",
            "port",
            "protocol",
            "certificate_arn",
            "ssl_policy",
            "default_action",
        ]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        let listeners = match m.describe_listeners(q.parent.as_deref(), &[]) {
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
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let rt = c.rt;
        let a = c.a;
        Ok(m.create_listener(
            &c.parent_or("load_balancer_arn")?,
            listener_spec(rt, a)?,
            Tags::new(),
        )
        .into_cloud()?
        .arn)
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let rt = u.rt;
        let id = u.id;
        let merged = &u.merged;
        m.modify_listener(id, listener_spec(rt, merged)?)
            .into_cloud()?;
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.delete_listener(id))
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

/// ELBv2 tags: the removed ones removed, the rest set.
fn elbv2_retag(m: &MockAws, id: &str, old: &ResourceTags, new: &Tags) -> CloudResult<()> {
    let removed = removed_tags(old, new);
    if !removed.is_empty() {
        m.remove_elbv2_tags(&[id.to_owned()], &removed)
            .into_cloud()?;
    }
    m.add_elbv2_tags(&[id.to_owned()], new).into_cloud()
}
