//! ELBv2: network load balancers, target groups, listeners and their tags.

use std::collections::{BTreeMap, BTreeSet};

use crate::MockAws;
use crate::error::{Error, Result};
use crate::filter::Tags;
use crate::state::State;

/// A subnet of a load balancer, with an optional fixed address.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SubnetMapping {
    /// Subnet.
    pub subnet_id: String,
    /// Elastic IP (internet-facing NLB).
    pub allocation_id: Option<String>,
    /// Private IPv4 (internal NLB).
    pub private_ipv4_address: Option<String>,
    /// IPv6 address.
    pub ipv6_address: Option<String>,
}

/// Parameters of `CreateLoadBalancer`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CreateLoadBalancer {
    /// Name (at most 32 characters: letters, digits, hyphens).
    pub name: String,
    /// `network` (default) or `application`.
    pub load_balancer_type: String,
    /// `internet-facing` (default) or `internal`.
    pub scheme: String,
    /// Subnets.
    pub subnet_mappings: Vec<SubnetMapping>,
    /// Security groups.
    pub security_groups: Vec<String>,
    /// `ipv4` (default) or `dualstack`.
    pub ip_address_type: String,
    /// Tags.
    pub tags: Tags,
}

/// A load balancer.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LoadBalancer {
    /// ARN.
    pub arn: String,
    /// Name.
    pub name: String,
    /// DNS name.
    pub dns_name: String,
    /// Route53 zone of the DNS name (for alias records).
    pub canonical_hosted_zone_id: String,
    /// Type.
    pub load_balancer_type: String,
    /// Scheme.
    pub scheme: String,
    /// VPC (of the subnets).
    pub vpc_id: String,
    /// Subnets.
    pub subnet_mappings: Vec<SubnetMapping>,
    /// Security groups.
    pub security_groups: Vec<String>,
    /// IP address type.
    pub ip_address_type: String,
    /// `active`.
    pub state: String,
    /// Attributes (`load_balancing.cross_zone.enabled`, ...).
    pub attributes: BTreeMap<String, String>,
    /// Tags.
    pub tags: Tags,
}

/// A target group health check.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HealthCheck {
    /// Protocol.
    pub protocol: Option<String>,
    /// Port (`traffic-port` or a number).
    pub port: Option<String>,
    /// Path (HTTP).
    pub path: Option<String>,
    /// Interval in seconds.
    pub interval_seconds: Option<i32>,
    /// Timeout in seconds.
    pub timeout_seconds: Option<i32>,
    /// Healthy threshold.
    pub healthy_threshold_count: Option<i32>,
    /// Unhealthy threshold.
    pub unhealthy_threshold_count: Option<i32>,
}

/// Parameters of `CreateTargetGroup`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CreateTargetGroup {
    /// Name (at most 32 characters).
    pub name: String,
    /// `TCP`, `TLS`, `UDP`, `TCP_UDP`, `HTTP`, `HTTPS`.
    pub protocol: String,
    /// Port.
    pub port: i32,
    /// VPC.
    pub vpc_id: String,
    /// `instance` (default), `ip`, `alb`.
    pub target_type: String,
    /// Health check.
    pub health_check: HealthCheck,
    /// Tags.
    pub tags: Tags,
}

/// A target group.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TargetGroup {
    /// ARN.
    pub arn: String,
    /// Name.
    pub name: String,
    /// Protocol.
    pub protocol: String,
    /// Port.
    pub port: i32,
    /// VPC.
    pub vpc_id: String,
    /// Target type.
    pub target_type: String,
    /// Health check.
    pub health_check: HealthCheck,
    /// Load balancers forwarding to it (through listeners).
    pub load_balancer_arns: Vec<String>,
    /// Attributes (`deregistration_delay.timeout_seconds`, ...).
    pub attributes: BTreeMap<String, String>,
    /// Tags.
    pub tags: Tags,
}

/// A listener action.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Action {
    /// `forward`.
    pub action_type: String,
    /// Target group.
    pub target_group_arn: Option<String>,
}

/// Parameters of `CreateListener` (and the replaceable parts for `ModifyListener`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListenerSpec {
    /// Port.
    pub port: i32,
    /// Protocol.
    pub protocol: String,
    /// Certificate ARNs (TLS).
    pub certificates: Vec<String>,
    /// SSL policy (TLS).
    pub ssl_policy: Option<String>,
    /// Default actions.
    pub default_actions: Vec<Action>,
}

/// A listener.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Listener {
    /// ARN.
    pub arn: String,
    /// Load balancer.
    pub load_balancer_arn: String,
    /// Settings.
    pub spec: ListenerSpec,
    /// Tags.
    pub tags: Tags,
}

#[derive(Debug, Default)]
pub(crate) struct ElbState {
    lbs: BTreeMap<String, LoadBalancer>,
    tgs: BTreeMap<String, TargetGroup>,
    listeners: BTreeMap<String, Listener>,
}

impl ElbState {
    pub(crate) fn collect_ids(&self, out: &mut BTreeSet<String>) {
        out.extend(self.lbs.keys().cloned());
        out.extend(self.tgs.keys().cloned());
        out.extend(self.listeners.keys().cloned());
    }

    pub(crate) fn load_balancers_in_subnet(&self, subnet: &str) -> Vec<String> {
        self.lbs
            .values()
            .filter(|l| l.subnet_mappings.iter().any(|m| m.subnet_id == subnet))
            .map(|l| l.arn.clone())
            .collect()
    }

    pub(crate) fn load_balancers_with_group(&self, group: &str) -> Vec<String> {
        self.lbs
            .values()
            .filter(|l| l.security_groups.iter().any(|g| g == group))
            .map(|l| l.arn.clone())
            .collect()
    }

    pub(crate) fn has_target_group(&self, arn: &str) -> bool {
        self.tgs.contains_key(arn)
    }

    pub(crate) fn insert_target_group(&mut self, tg: TargetGroup) {
        self.tgs.insert(tg.arn.clone(), tg);
    }

    fn tags_mut(&mut self, arn: &str) -> Option<&mut Tags> {
        if let Some(l) = self.lbs.get_mut(arn) {
            return Some(&mut l.tags);
        }
        if let Some(t) = self.tgs.get_mut(arn) {
            return Some(&mut t.tags);
        }
        self.listeners.get_mut(arn).map(|l| &mut l.tags)
    }

    fn with_lb_arns(&self, mut tg: TargetGroup) -> TargetGroup {
        let mut lbs: Vec<String> = self
            .listeners
            .values()
            .filter(|l| {
                l.spec
                    .default_actions
                    .iter()
                    .any(|a| a.target_group_arn.as_deref() == Some(tg.arn.as_str()))
            })
            .map(|l| l.load_balancer_arn.clone())
            .collect();
        lbs.sort();
        lbs.dedup();
        tg.load_balancer_arns = lbs;
        tg
    }
}

fn check_name(op: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && !name.starts_with('-')
        && !name.ends_with('-')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(
            op,
            "Name",
            format!("{name:?}: at most 32 letters, digits and inner hyphens"),
        ))
    }
}

fn subnets_vpc(st: &State, op: &str, mappings: &[SubnetMapping]) -> Result<String> {
    let mut vpc = None;
    let mut zones = BTreeSet::new();
    for m in mappings {
        let s = st
            .ec2
            .subnets
            .get(&m.subnet_id)
            .ok_or_else(|| Error::not_found(op, "subnet", m.subnet_id.clone()))?;
        if !zones.insert(s.availability_zone.clone()) {
            return Err(Error::invalid(
                op,
                "SubnetMappings",
                format!("two subnets in zone {}", s.availability_zone),
            ));
        }
        if let Some(a) = &m.allocation_id
            && !st.ec2.addresses.contains_key(a)
        {
            return Err(Error::not_found(op, "elastic-ip", a.clone()));
        }
        match &vpc {
            None => vpc = Some(s.vpc_id.clone()),
            Some(v) if *v != s.vpc_id => {
                return Err(Error::invalid(
                    op,
                    "SubnetMappings",
                    "subnets are in different VPCs",
                ));
            }
            Some(_) => {}
        }
    }
    vpc.ok_or_else(|| Error::invalid(op, "SubnetMappings", "at least one subnet is required"))
}

fn lb_mut<'a>(st: &'a mut State, op: &str, arn: &str) -> Result<&'a mut LoadBalancer> {
    st.elbv2
        .lbs
        .get_mut(arn)
        .ok_or_else(|| Error::not_found(op, "load-balancer", arn))
}

fn tg_mut<'a>(st: &'a mut State, op: &str, arn: &str) -> Result<&'a mut TargetGroup> {
    st.elbv2
        .tgs
        .get_mut(arn)
        .ok_or_else(|| Error::not_found(op, "target-group", arn))
}

fn or_default(s: String, d: &str) -> String {
    if s.is_empty() { d.to_owned() } else { s }
}

impl MockAws {
    /// `CreateLoadBalancer`.
    pub fn create_load_balancer(&self, req: CreateLoadBalancer) -> Result<LoadBalancer> {
        let (partition, region, account) = (
            self.options().partition.clone(),
            self.options().region.clone(),
            self.options().account_id.clone(),
        );
        self.call("elbv2:CreateLoadBalancer", |st, op| {
            check_name(op, &req.name)?;
            if st.elbv2.lbs.values().any(|l| l.name == req.name) {
                return Err(Error::exists(op, "load-balancer", req.name.clone()));
            }
            let vpc_id = subnets_vpc(st, op, &req.subnet_mappings)?;
            for g in &req.security_groups {
                if !st.ec2.security_groups.contains_key(g) {
                    return Err(Error::not_found(op, "security-group", g.clone()));
                }
            }
            let ty = or_default(req.load_balancer_type, "network");
            let n = st.ids.next_number("elbv2");
            let short = if ty == "network" { "net" } else { "app" };
            let lb = LoadBalancer {
                arn: format!(
                    "arn:{partition}:elasticloadbalancing:{region}:{account}:loadbalancer/{short}/{}/{n:016x}",
                    req.name
                ),
                dns_name: format!("{}-{n:010x}.elb.{region}.amazonaws.com", req.name),
                canonical_hosted_zone_id: "ZLBMOCK0000001".into(),
                name: req.name,
                load_balancer_type: ty,
                scheme: or_default(req.scheme, "internet-facing"),
                vpc_id,
                subnet_mappings: req.subnet_mappings,
                security_groups: req.security_groups,
                ip_address_type: or_default(req.ip_address_type, "ipv4"),
                state: "active".into(),
                attributes: BTreeMap::new(),
                tags: req.tags,
            };
            st.elbv2.lbs.insert(lb.arn.clone(), lb.clone());
            Ok(lb)
        })
    }

    /// `DescribeLoadBalancers` by ARN or name (every one asked for must exist).
    pub fn describe_load_balancers(
        &self,
        arns: &[String],
        names: &[String],
    ) -> Result<Vec<LoadBalancer>> {
        self.call("elbv2:DescribeLoadBalancers", |st, op| {
            for a in arns {
                if !st.elbv2.lbs.contains_key(a) {
                    return Err(Error::not_found(op, "load-balancer", a.clone()));
                }
            }
            for n in names {
                if !st.elbv2.lbs.values().any(|l| &l.name == n) {
                    return Err(Error::not_found(op, "load-balancer", n.clone()));
                }
            }
            Ok(st
                .elbv2
                .lbs
                .values()
                .filter(|l| arns.is_empty() || arns.contains(&l.arn))
                .filter(|l| names.is_empty() || names.contains(&l.name))
                .cloned()
                .collect())
        })
    }

    /// `SetSubnets`.
    pub fn set_load_balancer_subnets(&self, arn: &str, mappings: Vec<SubnetMapping>) -> Result<()> {
        self.call("elbv2:SetSubnets", |st, op| {
            let vpc = subnets_vpc(st, op, &mappings)?;
            let lb = lb_mut(st, op, arn)?;
            if lb.vpc_id != vpc {
                return Err(Error::invalid(op, "Subnets", "subnets are in another VPC"));
            }
            lb.subnet_mappings = mappings;
            Ok(())
        })
    }

    /// `SetSecurityGroups`.
    pub fn set_load_balancer_security_groups(&self, arn: &str, groups: Vec<String>) -> Result<()> {
        self.call("elbv2:SetSecurityGroups", |st, op| {
            for g in &groups {
                if !st.ec2.security_groups.contains_key(g) {
                    return Err(Error::not_found(op, "security-group", g.clone()));
                }
            }
            lb_mut(st, op, arn)?.security_groups = groups;
            Ok(())
        })
    }

    /// `ModifyLoadBalancerAttributes`: merges the given attributes.
    pub fn modify_load_balancer_attributes(
        &self,
        arn: &str,
        attributes: BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>> {
        self.call("elbv2:ModifyLoadBalancerAttributes", |st, op| {
            let lb = lb_mut(st, op, arn)?;
            lb.attributes.extend(attributes);
            Ok(lb.attributes.clone())
        })
    }

    /// `DescribeLoadBalancerAttributes`.
    pub fn describe_load_balancer_attributes(&self, arn: &str) -> Result<BTreeMap<String, String>> {
        self.call("elbv2:DescribeLoadBalancerAttributes", |st, op| {
            Ok(lb_mut(st, op, arn)?.attributes.clone())
        })
    }

    /// `DeleteLoadBalancer`, with its listeners.
    pub fn delete_load_balancer(&self, arn: &str) -> Result<()> {
        self.call("elbv2:DeleteLoadBalancer", |st, op| {
            st.elbv2
                .lbs
                .remove(arn)
                .ok_or_else(|| Error::not_found(op, "load-balancer", arn))?;
            st.elbv2.listeners.retain(|_, l| l.load_balancer_arn != arn);
            Ok(())
        })
    }

    /// `CreateTargetGroup`.
    pub fn create_target_group(&self, req: CreateTargetGroup) -> Result<TargetGroup> {
        let (partition, region, account) = (
            self.options().partition.clone(),
            self.options().region.clone(),
            self.options().account_id.clone(),
        );
        self.call("elbv2:CreateTargetGroup", |st, op| {
            check_name(op, &req.name)?;
            if st.elbv2.tgs.values().any(|t| t.name == req.name) {
                return Err(Error::exists(op, "target-group", req.name.clone()));
            }
            if !st.ec2.vpcs.contains_key(&req.vpc_id) {
                return Err(Error::not_found(op, "vpc", req.vpc_id.clone()));
            }
            if !(1..=65535).contains(&req.port) {
                return Err(Error::invalid(op, "Port", "must be 1..65535"));
            }
            let n = st.ids.next_number("elbv2");
            let tg = TargetGroup {
                arn: format!(
                    "arn:{partition}:elasticloadbalancing:{region}:{account}:targetgroup/{}/{n:016x}",
                    req.name
                ),
                name: req.name,
                protocol: req.protocol,
                port: req.port,
                vpc_id: req.vpc_id,
                target_type: or_default(req.target_type, "instance"),
                health_check: req.health_check,
                load_balancer_arns: Vec::new(),
                attributes: BTreeMap::new(),
                tags: req.tags,
            };
            st.elbv2.tgs.insert(tg.arn.clone(), tg.clone());
            Ok(tg)
        })
    }

    /// `DescribeTargetGroups` by ARN, name or load balancer.
    pub fn describe_target_groups(
        &self,
        arns: &[String],
        names: &[String],
        load_balancer_arn: Option<&str>,
    ) -> Result<Vec<TargetGroup>> {
        self.call("elbv2:DescribeTargetGroups", |st, op| {
            for a in arns {
                if !st.elbv2.tgs.contains_key(a) {
                    return Err(Error::not_found(op, "target-group", a.clone()));
                }
            }
            for n in names {
                if !st.elbv2.tgs.values().any(|t| &t.name == n) {
                    return Err(Error::not_found(op, "target-group", n.clone()));
                }
            }
            if let Some(lb) = load_balancer_arn
                && !st.elbv2.lbs.contains_key(lb)
            {
                return Err(Error::not_found(op, "load-balancer", lb));
            }
            Ok(st
                .elbv2
                .tgs
                .values()
                .filter(|t| arns.is_empty() || arns.contains(&t.arn))
                .filter(|t| names.is_empty() || names.contains(&t.name))
                .map(|t| st.elbv2.with_lb_arns(t.clone()))
                .filter(|t| {
                    load_balancer_arn.is_none_or(|lb| t.load_balancer_arns.iter().any(|a| a == lb))
                })
                .collect())
        })
    }

    /// `ModifyTargetGroup`: replaces the health check.
    pub fn modify_target_group(&self, arn: &str, health_check: HealthCheck) -> Result<TargetGroup> {
        self.call("elbv2:ModifyTargetGroup", |st, op| {
            let tg = tg_mut(st, op, arn)?;
            tg.health_check = health_check;
            Ok(tg.clone())
        })
    }

    /// `ModifyTargetGroupAttributes`: merges the given attributes.
    pub fn modify_target_group_attributes(
        &self,
        arn: &str,
        attributes: BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>> {
        self.call("elbv2:ModifyTargetGroupAttributes", |st, op| {
            let tg = tg_mut(st, op, arn)?;
            tg.attributes.extend(attributes);
            Ok(tg.attributes.clone())
        })
    }

    /// `DeleteTargetGroup`: fails while a listener forwards to it.
    pub fn delete_target_group(&self, arn: &str) -> Result<()> {
        self.call("elbv2:DeleteTargetGroup", |st, op| {
            if !st.elbv2.tgs.contains_key(arn) {
                return Err(Error::not_found(op, "target-group", arn));
            }
            if let Some(l) = st.elbv2.listeners.values().find(|l| {
                l.spec
                    .default_actions
                    .iter()
                    .any(|a| a.target_group_arn.as_deref() == Some(arn))
            }) {
                return Err(Error::conflict(
                    op,
                    "target-group",
                    arn,
                    format!("is in use by listener {}", l.arn),
                ));
            }
            st.elbv2.tgs.remove(arn);
            for g in st.asg_groups_mut() {
                g.retain(|a| a != arn);
            }
            Ok(())
        })
    }

    /// `CreateListener`: one listener per port.
    pub fn create_listener(
        &self,
        load_balancer_arn: &str,
        spec: ListenerSpec,
        tags: Tags,
    ) -> Result<Listener> {
        self.call("elbv2:CreateListener", |st, op| {
            if !st.elbv2.lbs.contains_key(load_balancer_arn) {
                return Err(Error::not_found(op, "load-balancer", load_balancer_arn));
            }
            check_actions(st, op, &spec)?;
            if st
                .elbv2
                .listeners
                .values()
                .any(|l| l.load_balancer_arn == load_balancer_arn && l.spec.port == spec.port)
            {
                return Err(Error::exists(
                    op,
                    "listener",
                    format!("{load_balancer_arn} port {}", spec.port),
                ));
            }
            let n = st.ids.next_number("elbv2");
            let arn = format!(
                "{}/{n:016x}",
                load_balancer_arn.replacen(":loadbalancer/", ":listener/", 1)
            );
            let l = Listener {
                arn: arn.clone(),
                load_balancer_arn: load_balancer_arn.to_owned(),
                spec,
                tags,
            };
            st.elbv2.listeners.insert(arn, l.clone());
            Ok(l)
        })
    }

    /// `DescribeListeners` of a load balancer, or by ARN.
    pub fn describe_listeners(
        &self,
        load_balancer_arn: Option<&str>,
        arns: &[String],
    ) -> Result<Vec<Listener>> {
        self.call("elbv2:DescribeListeners", |st, op| {
            if let Some(lb) = load_balancer_arn
                && !st.elbv2.lbs.contains_key(lb)
            {
                return Err(Error::not_found(op, "load-balancer", lb));
            }
            for a in arns {
                if !st.elbv2.listeners.contains_key(a) {
                    return Err(Error::not_found(op, "listener", a.clone()));
                }
            }
            Ok(st
                .elbv2
                .listeners
                .values()
                .filter(|l| load_balancer_arn.is_none_or(|lb| l.load_balancer_arn == lb))
                .filter(|l| arns.is_empty() || arns.contains(&l.arn))
                .cloned()
                .collect())
        })
    }

    /// `ModifyListener`: replaces the settings.
    pub fn modify_listener(&self, arn: &str, spec: ListenerSpec) -> Result<Listener> {
        self.call("elbv2:ModifyListener", |st, op| {
            check_actions(st, op, &spec)?;
            let l = st
                .elbv2
                .listeners
                .get_mut(arn)
                .ok_or_else(|| Error::not_found(op, "listener", arn))?;
            l.spec = spec;
            Ok(l.clone())
        })
    }

    /// `DeleteListener`.
    pub fn delete_listener(&self, arn: &str) -> Result<()> {
        self.call("elbv2:DeleteListener", |st, op| {
            st.elbv2
                .listeners
                .remove(arn)
                .map(|_| ())
                .ok_or_else(|| Error::not_found(op, "listener", arn))
        })
    }

    /// `AddTags` on load balancers, target groups or listeners.
    pub fn add_elbv2_tags(&self, arns: &[String], tags: &Tags) -> Result<()> {
        self.call("elbv2:AddTags", |st, op| {
            for a in arns {
                if st.elbv2.tags_mut(a).is_none() {
                    return Err(Error::not_found(op, "load-balancer", a.clone()));
                }
            }
            for a in arns {
                if let Some(t) = st.elbv2.tags_mut(a) {
                    t.extend(tags.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
            }
            Ok(())
        })
    }

    /// `RemoveTags`.
    pub fn remove_elbv2_tags(&self, arns: &[String], keys: &[String]) -> Result<()> {
        self.call("elbv2:RemoveTags", |st, op| {
            for a in arns {
                let t = st
                    .elbv2
                    .tags_mut(a)
                    .ok_or_else(|| Error::not_found(op, "load-balancer", a.clone()))?;
                for k in keys {
                    t.remove(k);
                }
            }
            Ok(())
        })
    }

    /// `DescribeTags`: the tags of each ARN.
    pub fn describe_elbv2_tags(&self, arns: &[String]) -> Result<BTreeMap<String, Tags>> {
        self.call("elbv2:DescribeTags", |st, op| {
            let mut out = BTreeMap::new();
            for a in arns {
                let t = st
                    .elbv2
                    .tags_mut(a)
                    .ok_or_else(|| Error::not_found(op, "load-balancer", a.clone()))?;
                out.insert(a.clone(), t.clone());
            }
            Ok(out)
        })
    }
}

fn check_actions(st: &State, op: &str, spec: &ListenerSpec) -> Result<()> {
    if spec.default_actions.is_empty() {
        return Err(Error::invalid(
            op,
            "DefaultActions",
            "at least one action is required",
        ));
    }
    for a in &spec.default_actions {
        if let Some(tg) = &a.target_group_arn
            && !st.elbv2.tgs.contains_key(tg)
        {
            return Err(Error::not_found(op, "target-group", tg.clone()));
        }
    }
    if !(1..=65535).contains(&spec.port) {
        return Err(Error::invalid(op, "Port", "must be 1..65535"));
    }
    Ok(())
}

impl State {
    fn asg_groups_mut(&mut self) -> Vec<&mut Vec<String>> {
        self.asg.target_group_lists_mut()
    }
}
