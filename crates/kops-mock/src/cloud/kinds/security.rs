//! Security groups and their rules.

use kops_cloud_aws::cloud::{CloudError, CloudResult, ListQuery, Resource, ResourceType};
use kops_tasks::resource::Attrs as ResourceAttrs;

use super::{Create, Kind, Update};
use crate::cloud::{
    Attrs, IntoCloud, a_i32, a_list, a_str, ec2_filters, gone, invalid, new_res, put, put_opt,
    to_cloud_error,
};
use crate::ec2::RuleSpec;
use crate::{Filter, MockAws, Tags};

/// [`ResourceType::SecurityGroup`].
pub(super) struct SecurityGroup;

impl Kind for SecurityGroup {
    fn kind(&self) -> ResourceType {
        ResourceType::SecurityGroup
    }

    fn native(&self) -> &'static [&'static str] {
        &["vpc_id", "description", "name"]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        for g in m
            .describe_security_groups(&[], &ec2_filters(q, "group-id", Some("group-name")))
            .into_cloud()?
        {
            let mut r = new_res(rt, &g.id, &g.tags).with_name(&g.name);
            put(&mut r.attrs, "vpc_id", g.vpc_id.clone());
            put(&mut r.attrs, "description", g.description.clone());
            put(&mut r.attrs, "name", g.name.clone());
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let tags = c.tags();
        Ok(m.create_security_group(
            &c.name()?,
            &a_str(a, "description").unwrap_or_default(),
            &c.need("vpc_id")?,
            tags,
        )
        .into_cloud()?
        .id)
    }

    /// Nothing changes in place but the tags.
    fn update(&self, _: &MockAws, _: &Update<'_>) -> CloudResult<Option<String>> {
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.delete_security_group(id))
    }
}

/// [`ResourceType::SecurityGroupRule`].
pub(super) struct SecurityGroupRule;

impl Kind for SecurityGroupRule {
    fn kind(&self) -> ResourceType {
        ResourceType::SecurityGroupRule
    }

    fn native(&self) -> &'static [&'static str] {
        &[
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
        ]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        let mut filters = Vec::new();
        if let Some(p) = &q.parent {
            filters.push(Filter::new("group-id", [p.clone()]));
        }
        if !q.ids.is_empty() {
            filters.push(Filter::new("security-group-rule-id", q.ids.clone()));
        }
        for rule in m
            .describe_security_group_rules(&[], &filters)
            .into_cloud()?
        {
            let mut r = Resource::new(rt, &rule.id).with_parent(&rule.group_id);
            rule_attrs(&mut r.attrs, &rule.group_id, rule.is_egress, &rule.spec);
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let rt = c.rt;
        let a = c.a;
        let mut attrs = a.clone();
        if !attrs.contains_key("security_group_id")
            && let Some(p) = &c.req.parent
        {
            attrs.insert("security_group_id".into(), p.clone().into());
        }
        let (group, egress, spec) = rule_from(rt, &attrs)?;
        let made = if egress {
            m.authorize_security_group_egress(&group, vec![spec], Tags::new())
        } else {
            m.authorize_security_group_ingress(&group, vec![spec], Tags::new())
        }
        .into_cloud()?;
        made.into_iter()
            .next()
            .map(|r| r.id)
            .ok_or_else(|| CloudError::other("ec2:AuthorizeSecurityGroupRules"))
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let id = u.id;
        let a = u.a;
        // Only the description of a rule can change in place.
        if a.contains_key("description") {
            m.modify_security_group_rule_description(id, a_str(a, "description"))
                .into_cloud()?;
        }
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        let rules = match m.describe_security_group_rules(&[id.to_owned()], &[]) {
            Ok(r) => r,
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(to_cloud_error(e)),
        };
        let Some(r) = rules.first() else {
            return Ok(());
        };
        if r.is_egress {
            gone(m.revoke_security_group_egress(&r.group_id, &[id.to_owned()]))
        } else {
            gone(m.revoke_security_group_ingress(&r.group_id, &[id.to_owned()]))
        }
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
