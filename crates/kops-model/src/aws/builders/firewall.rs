//! The firewall and external-access builders (kOps' `awsmodel/firewall.go` and
//! `external_access.go`): security groups for masters and nodes and kOps' rule set.

use kops_api::internal::InstanceGroupRole;
use kops_tasks::TaskKey;

use super::{AwsModel, ModelContext};
use crate::aws::cloud::ResourceType as R;
use crate::aws::task::{Attr, AwsTask, FindBy};
use crate::error::Result;

/// Where a rule's traffic comes from (ingress) or goes to (egress).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Peer {
    /// Another security group, by task name (its AWS group name).
    Group(String),
    /// An IPv4 or IPv6 CIDR.
    Cidr(String),
    /// A managed prefix list (`pl-...`).
    PrefixList(String),
}

impl Peer {
    /// A CIDR or prefix list from an access entry.
    pub(crate) fn access(entry: &str) -> Self {
        if entry.starts_with("pl-") {
            Peer::PrefixList(entry.to_owned())
        } else {
            Peer::Cidr(entry.to_owned())
        }
    }

    /// The peer as kOps writes it in generated rule names (prefix lists have no CIDR and
    /// are written as the default `0.0.0.0/0`).
    fn label(&self) -> &str {
        match self {
            Peer::Group(s) | Peer::Cidr(s) => s,
            Peer::PrefixList(_) => "0.0.0.0/0",
        }
    }
}

/// One security-group rule, named as kOps' `generateName` does unless given a name.
#[derive(Clone, Debug)]
pub(crate) struct Rule {
    /// The group the rule belongs to (task name = AWS group name).
    pub(crate) group: String,
    /// `true` for egress.
    pub(crate) egress: bool,
    /// `tcp`, `udp`, `icmp`, `icmpv6`, a protocol number, or `None` for all.
    pub(crate) protocol: Option<String>,
    /// First port.
    pub(crate) from_port: i64,
    /// Last port.
    pub(crate) to_port: i64,
    /// The other side.
    pub(crate) peer: Peer,
    /// A fixed task name instead of the generated one.
    pub(crate) name: Option<String>,
}

impl Rule {
    /// An ingress rule into `group` from `peer`.
    pub(crate) fn ingress(
        group: &str,
        peer: Peer,
        protocol: Option<&str>,
        from: i64,
        to: i64,
    ) -> Self {
        Rule {
            group: group.to_owned(),
            egress: false,
            protocol: protocol.map(str::to_owned),
            from_port: from,
            to_port: to,
            peer,
            name: None,
        }
    }

    /// An egress rule of `group` to a CIDR, all protocols.
    pub(crate) fn egress_all(group: &str, cidr: &str) -> Self {
        Rule {
            group: group.to_owned(),
            egress: true,
            protocol: None,
            from_port: 0,
            to_port: 0,
            peer: Peer::Cidr(cidr.to_owned()),
            name: None,
        }
    }

    /// Gives the rule a fixed name.
    pub(crate) fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// kOps' generated name:
    /// `from-<source>-<ingress|egress>-<protocol|all>-<from>to<to>-<destination>`.
    pub(crate) fn task_name(&self) -> String {
        if let Some(n) = &self.name {
            return n.clone();
        }
        let proto = self.protocol.as_deref().unwrap_or("all");
        let (src, dst) = if self.egress {
            (self.group.as_str(), self.peer.label())
        } else {
            (self.peer.label(), self.group.as_str())
        };
        let dir = if self.egress { "egress" } else { "ingress" };
        let (from, to) = if self.protocol.is_none() || self.protocol.as_deref() == Some("4") {
            (0, 0)
        } else {
            (self.from_port, self.to_port)
        };
        format!("from-{src}-{dir}-{proto}-{from}to{to}-{dst}")
    }

    /// The task.
    pub(crate) fn task(&self, ctx: &ModelContext) -> AwsTask {
        let sg = TaskKey::new("SecurityGroup", &self.group);
        let (from, to, proto) = match self.protocol.as_deref() {
            None => (0, 0, "-1".to_owned()),
            Some(p) => (self.from_port, self.to_port, p.to_owned()),
        };
        // AWS keeps a port range only for TCP, UDP, ICMP and ICMPv6; for other protocols
        // the range is Terraform's notation alone, neither sent nor compared.
        let has_ports = matches!(
            proto.as_str(),
            "tcp" | "udp" | "icmp" | "icmpv6" | "6" | "17" | "1" | "58"
        );
        let mut t = ctx
            .task("SecurityGroupRule", self.task_name(), R::SecurityGroupRule)
            .attr("type", if self.egress { "egress" } else { "ingress" })
            .attr("security_group_id", Attr::id(&sg))
            .attr("protocol", proto);
        let mut match_attrs = vec!["type".to_owned(), "protocol".to_owned()];
        if has_ports {
            t = t.attr("from_port", from).attr("to_port", to);
            match_attrs.extend(["from_port".to_owned(), "to_port".to_owned()]);
        } else {
            t = t
                .render_attr("from_port", Attr::Int(from))
                .render_attr("to_port", Attr::Int(to));
        }
        match &self.peer {
            Peer::Group(g) => {
                t.set(
                    "source_security_group_id",
                    Attr::id(&TaskKey::new("SecurityGroup", g)),
                );
                match_attrs.push("source_security_group_id".into());
            }
            Peer::Cidr(c) if c.contains(':') => {
                t.set("ipv6_cidr_blocks", Attr::strs([c.as_str()]));
                match_attrs.push("ipv6_cidr_blocks".into());
            }
            Peer::Cidr(c) => {
                t.set("cidr_blocks", Attr::strs([c.as_str()]));
                match_attrs.push("cidr_blocks".into());
            }
            Peer::PrefixList(p) => {
                t.set("prefix_list_ids", Attr::strs([p.as_str()]));
                match_attrs.push("prefix_list_ids".into());
            }
        }
        t.find_by(FindBy::Parent {
            parent_attr: "security_group_id".into(),
            match_attrs,
        })
    }
}

/// A security group task.
pub(crate) fn security_group(ctx: &ModelContext, name: &str, description: &str) -> AwsTask {
    ctx.task("SecurityGroup", name, R::SecurityGroup)
        .named(name)
        .attr("description", description)
        .attr("vpc_id", Attr::id(&ctx.vpc_key()))
        .tags(ctx.tags(name))
}

/// Adds the egress-everywhere rules of a group.
pub(crate) fn add_egress(ctx: &ModelContext, m: &mut AwsModel, group: &str) {
    m.add(Rule::egress_all(group, "0.0.0.0/0").task(ctx));
    m.add(Rule::egress_all(group, "::/0").task(ctx));
}

/// One security group of a role as kOps lists them (`GetSecurityGroups`): each distinct
/// `securityGroupOverride` of the role's instance groups (a shared group, task name
/// `<id>-<Role>`, rule-name suffix `-<id>`), then the cluster's own group when some
/// instance group of the role has no override.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RoleGroup {
    /// The task name: the AWS group name of the cluster's own group.
    pub(crate) name: String,
    /// `""` for the cluster's own group, `-<id>` for an override.
    pub(crate) suffix: String,
    /// The override's ID.
    pub(crate) shared_id: Option<String>,
    description: &'static str,
}

impl RoleGroup {
    /// The group's task key.
    pub(crate) fn key(&self) -> TaskKey {
        TaskKey::new("SecurityGroup", &self.name)
    }

    /// The group's task: a shared reference for an override, else the cluster's group.
    pub(crate) fn task(&self, ctx: &ModelContext) -> AwsTask {
        match &self.shared_id {
            Some(id) => ctx
                .task("SecurityGroup", self.name.clone(), R::SecurityGroup)
                .shared(id.clone()),
            None => security_group(ctx, &self.name, self.description),
        }
    }
}

/// The role as kOps spells it in override group names.
fn role_label(role: &InstanceGroupRole) -> &str {
    match role {
        InstanceGroupRole::ControlPlane => "ControlPlane",
        InstanceGroupRole::Node => "Node",
        InstanceGroupRole::Bastion => "Bastion",
        InstanceGroupRole::ApiServer => "APIServer",
        InstanceGroupRole::Unknown(s) => s,
    }
}

/// The security groups of a role (see [`RoleGroup`]).
pub(crate) fn role_groups(ctx: &ModelContext, role: &InstanceGroupRole) -> Vec<RoleGroup> {
    let description = match role {
        InstanceGroupRole::ControlPlane | InstanceGroupRole::ApiServer => {
            "Security group for masters"
        }
        InstanceGroupRole::Bastion => "Security group for bastion",
        _ => "Security group for nodes",
    };
    let mut out: Vec<RoleGroup> = Vec::new();
    let mut all_overridden = true;
    for ig in ctx.groups_with(role) {
        let Some(id) = ig.spec.security_group_override.as_deref() else {
            all_overridden = false;
            continue;
        };
        if out.iter().any(|g| g.shared_id.as_deref() == Some(id)) {
            continue;
        }
        out.push(RoleGroup {
            name: format!("{id}-{}", role_label(role)),
            suffix: format!("-{id}"),
            shared_id: Some(id.to_owned()),
            description,
        });
    }
    if !all_overridden {
        out.push(RoleGroup {
            name: ctx.sg_name(role),
            suffix: String::new(),
            shared_id: None,
            description,
        });
    }
    out
}

/// TCP port ranges from nodes to the control plane: everything but etcd's client and
/// peer ports (and the leases cluster's, and Cilium's etcd peer port when kOps manages
/// Cilium's etcd).
pub(crate) fn node_to_master_tcp_ranges(ctx: &ModelContext) -> Vec<(i64, i64)> {
    let mut blocked = vec![2380, 2381, 4001, 4002];
    let spec = &ctx.cluster.spec;
    if spec
        .etcd_clusters
        .iter()
        .flatten()
        .any(|e| e.name.as_deref() == Some("leases"))
    {
        blocked.extend([2383, 4004]);
    }
    if spec
        .networking
        .cilium
        .as_ref()
        .and_then(|c| c.etcd_managed)
        .unwrap_or(false)
    {
        blocked.push(2382);
    }
    blocked.sort_unstable();
    blocked.dedup();
    let mut out = Vec::new();
    let mut start = 1;
    for b in blocked {
        if b > start {
            out.push((start, b - 1));
        }
        start = b + 1;
    }
    if start <= 65535 {
        out.push((start, 65535));
    }
    out
}

/// Adds security groups and rules for masters and nodes plus external access.
pub(crate) fn build(ctx: &ModelContext, m: &mut AwsModel) -> Result<()> {
    let masters = role_groups(ctx, &InstanceGroupRole::ControlPlane);
    let nodes = role_groups(ctx, &InstanceGroupRole::Node);
    for g in nodes.iter().chain(&masters) {
        m.add(g.task(ctx));
    }
    for g in &masters {
        m.output_item(
            "master_security_group_ids",
            kops_tasks::terraform::Expr::Ref(g.key().to_ref()),
        );
    }
    for g in &nodes {
        m.output_item(
            "node_security_group_ids",
            kops_tasks::terraform::Expr::Ref(g.key().to_ref()),
        );
    }
    let peer = |g: &RoleGroup| Peer::Group(g.name.clone());

    // Nodes: egress everywhere, node to node.
    for src in &nodes {
        add_egress(ctx, m, &src.name);
        for dst in &nodes {
            m.add(Rule::ingress(&dst.name, peer(src), None, 0, 0).task(ctx));
        }
    }
    // Control plane: egress everywhere, to each other and to nodes.
    for src in &masters {
        add_egress(ctx, m, &src.name);
        for dst in masters.iter().chain(&nodes) {
            m.add(Rule::ingress(&dst.name, peer(src), None, 0, 0).task(ctx));
        }
    }

    // Nodes to the control plane: all but etcd.
    let net = &ctx.cluster.spec.networking;
    let tcp = node_to_master_tcp_ranges(ctx);
    let ipip = net.calico.is_some() || net.kuberouter.is_some();
    for cp in &masters {
        for node in &nodes {
            m.add(Rule::ingress(&cp.name, peer(node), Some("udp"), 1, 65535).task(ctx));
            for &(from, to) in &tcp {
                m.add(Rule::ingress(&cp.name, peer(node), Some("tcp"), from, to).task(ctx));
            }
            if ipip {
                m.add(Rule::ingress(&cp.name, peer(node), Some("4"), 0, 65535).task(ctx));
            }
        }
    }
    if net.amazonvpc.is_some() {
        for node in &nodes {
            for cp in &masters {
                m.add(Rule::ingress(&cp.name, peer(node), None, 0, 0).task(ctx));
            }
        }
    }

    // External access.
    if !ctx.has_role(&InstanceGroupRole::Bastion) {
        for a in ctx.cluster.spec.ssh_access.iter().flatten() {
            for g in masters.iter().chain(&nodes) {
                m.add(Rule::ingress(&g.name, Peer::access(a), Some("tcp"), 22, 22).task(ctx));
            }
        }
    }
    let (np_from, np_to) = node_port_range(ctx);
    for a in ctx.cluster.spec.node_port_access.iter().flatten() {
        for g in &nodes {
            for proto in ["tcp", "udp"] {
                m.add(
                    Rule::ingress(&g.name, Peer::access(a), Some(proto), np_from, np_to)
                        .named(format!("nodeport-{proto}-external-to-node-{a}{}", g.suffix))
                        .task(ctx),
                );
            }
        }
    }
    if !ctx.has_api_lb() {
        for a in ctx.cluster.spec.api.access.iter().flatten() {
            for g in &masters {
                m.add(Rule::ingress(&g.name, Peer::access(a), Some("tcp"), 443, 443).task(ctx));
            }
        }
    }
    Ok(())
}

fn node_port_range(ctx: &ModelContext) -> (i64, i64) {
    ctx.cluster
        .spec
        .kube_api_server
        .as_ref()
        .and_then(|k| k.service_node_port_range.as_deref())
        .and_then(|r| r.split_once('-'))
        .and_then(|(a, b)| Some((a.trim().parse().ok()?, b.trim().parse().ok()?)))
        .unwrap_or((30000, 32767))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_names_follow_kops() {
        let r = Rule::ingress(
            "masters.a.com",
            Peer::Group("nodes.a.com".into()),
            Some("tcp"),
            1,
            2379,
        );
        assert_eq!(
            r.task_name(),
            "from-nodes.a.com-ingress-tcp-1to2379-masters.a.com"
        );
        let e = Rule::egress_all("nodes.a.com", "::/0");
        assert_eq!(e.task_name(), "from-nodes.a.com-egress-all-0to0-::/0");
        let ipip = Rule::ingress("m", Peer::Group("n".into()), Some("4"), 0, 65535);
        assert_eq!(ipip.task_name(), "from-n-ingress-4-0to0-m");
        let fixed = Rule::ingress("m", Peer::Cidr("0.0.0.0/0".into()), Some("icmp"), 3, 4)
            .named("icmp-pmtu-api-elb-0.0.0.0/0");
        assert_eq!(fixed.task_name(), "icmp-pmtu-api-elb-0.0.0.0/0");
    }
}
