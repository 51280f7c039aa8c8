//! Load balancers and DNS (kOps' `awsmodel/api_loadbalancer.go`, `bastion.go`,
//! `dns.go`): the API network load balancer with its target groups, listeners and
//! security group, the bastion group and its load balancer, and Route53 alias records.

use kops_api::internal::{InstanceGroup, InstanceGroupRole};
use kops_tasks::TaskKey;

use super::firewall::{Peer, Rule, add_egress, role_groups, security_group};
use super::{AwsModel, ModelContext};
use crate::aws::cloud::ResourceType as R;
use crate::aws::naming::resource_name_32;
use crate::aws::task::{Attr, AwsTask, FindBy};
use crate::error::Result;

fn lb_settings(ctx: &ModelContext) -> Option<&kops_api::v1alpha2::LoadBalancerAccessSpec> {
    ctx.cluster.spec.api.load_balancer.as_ref()
}

fn has_cert(ctx: &ModelContext) -> bool {
    lb_settings(ctx).is_some_and(|l| l.ssl_certificate.as_ref().is_some_and(|c| !c.is_empty()))
}

/// Whether kOps manages Cilium's etcd (`networking.cilium.etcdManaged`).
pub(crate) fn cilium_etcd_managed(ctx: &ModelContext) -> bool {
    ctx.cluster
        .spec
        .networking
        .cilium
        .as_ref()
        .and_then(|c| c.etcd_managed)
        .unwrap_or(false)
}

/// Target groups an instance group's ASG registers with.
pub(crate) fn target_groups_for(ctx: &ModelContext, ig: &InstanceGroup) -> Vec<TaskKey> {
    let mut out = Vec::new();
    match ig.spec.role {
        Some(InstanceGroupRole::ControlPlane | InstanceGroupRole::ApiServer)
            if ctx.has_api_lb() =>
        {
            if ctx.dns_none() && ig.spec.role == Some(InstanceGroupRole::ControlPlane) {
                out.push(tg_key(ctx, "kops-controller"));
                if cilium_etcd_managed(ctx) {
                    out.push(tg_key(ctx, "etcd-cilium"));
                }
            }
            out.push(tg_key(ctx, "tcp"));
            if has_cert(ctx) {
                out.push(tg_key(ctx, "tls"));
            }
        }
        Some(InstanceGroupRole::Bastion) => out.push(tg_key(ctx, "bastion")),
        _ => {}
    }
    out
}

fn tg_key(ctx: &ModelContext, prefix: &str) -> TaskKey {
    TaskKey::new("TargetGroup", resource_name_32(ctx.name(), prefix))
}

fn target_group(
    ctx: &ModelContext,
    prefix: &str,
    port: i64,
    protocol: &str,
    https_health: bool,
) -> AwsTask {
    let name = resource_name_32(ctx.name(), prefix);
    let mut hc = vec![
        ("healthy_threshold".to_owned(), Attr::Int(2)),
        ("interval".to_owned(), Attr::Int(10)),
    ];
    if https_health {
        hc.push(("path".into(), Attr::s("/healthz")));
        hc.push(("protocol".into(), Attr::s("HTTPS")));
    } else {
        hc.push(("protocol".into(), Attr::s("TCP")));
    }
    hc.push(("unhealthy_threshold".into(), Attr::Int(2)));
    ctx.task("TargetGroup", name.clone(), R::TargetGroup)
        .named(name.clone())
        .attr("connection_termination", "true")
        .attr("deregistration_delay", "30")
        .attr("health_check", Attr::Block(hc))
        .attr("port", port)
        .attr("protocol", protocol)
        .attr("vpc_id", Attr::id(&ctx.vpc_key()))
        .tags(ctx.tags(&name))
}

fn listener(
    lb_key: &TaskKey,
    lb_task: &str,
    ctx: &ModelContext,
    port: i64,
    protocol: &str,
    tg: &TaskKey,
) -> AwsTask {
    ctx.task("Listener", format!("{lb_task}-{port}"), R::Listener)
        .attr(
            "default_action",
            Attr::Block(vec![
                ("target_group_arn".into(), Attr::id(tg)),
                ("type".into(), Attr::s("forward")),
            ]),
        )
        .attr("load_balancer_arn", Attr::id(lb_key))
        .attr("port", port)
        .attr("protocol", protocol)
        .find_by(FindBy::Parent {
            parent_attr: "load_balancer_arn".into(),
            match_attrs: vec!["port".into()],
        })
}

/// Chooses one subnet per zone for a load balancer, as kOps scores them: utility +3,
/// dual-stack +2, a subnet hosting a control-plane group +1.
fn lb_subnets(ctx: &ModelContext, internal: bool) -> Vec<String> {
    let cp_subnets: Vec<&str> = ctx
        .groups_with(&InstanceGroupRole::ControlPlane)
        .flat_map(|g| g.spec.subnets.iter().flatten().map(String::as_str))
        .collect();
    let mut best: std::collections::BTreeMap<String, (i32, String)> = Default::default();
    for s in ctx.subnets() {
        let (Some(name), Some(zone)) = (s.name.as_deref(), s.zone.as_deref()) else {
            continue;
        };
        let ty = s.type_.as_deref().unwrap_or("Public");
        let eligible = if internal {
            matches!(ty, "Private" | "DualStack" | "Utility")
        } else {
            matches!(ty, "Public" | "Utility")
        };
        if !eligible {
            continue;
        }
        let mut score = match ty {
            "Utility" => 3,
            "DualStack" => 2,
            _ => 0,
        };
        if internal && ty == "Private" {
            score += 4;
        }
        if cp_subnets.contains(&name) {
            score += 1;
        }
        match best.get(zone) {
            Some((sc, _)) if *sc >= score => {}
            _ => {
                best.insert(zone.to_owned(), (score, name.to_owned()));
            }
        }
    }
    best.into_values().map(|(_, n)| n).collect()
}

fn subnet_attr(ctx: &ModelContext, subnet: &str) -> Attr {
    match ctx.subnet(subnet).and_then(|s| s.id.clone()) {
        Some(id) => Attr::Str(id),
        None => Attr::id(&ctx.subnet_key(subnet)),
    }
}

fn alias_records(ctx: &ModelContext, m: &mut AwsModel, dns_name: &str, lb: &TaskKey) {
    let Some(zone) = &ctx.dns_zone else {
        return;
    };
    for (suffix, ty) in [("", "A"), ("-AAAA", "AAAA")] {
        m.add(
            ctx.task("DNSName", format!("{dns_name}{suffix}"), R::RecordSet)
                .attr(
                    "alias",
                    Attr::Block(vec![
                        ("evaluate_target_health".into(), Attr::Bool(false)),
                        ("name".into(), Attr::out(lb, "dns_name")),
                        ("zone_id".into(), Attr::out(lb, "zone_id")),
                    ]),
                )
                .attr("name", dns_name)
                .attr("type", ty)
                .attr("zone_id", zone.id.as_str())
                .find_by(FindBy::Parent {
                    parent_attr: "zone_id".into(),
                    match_attrs: vec!["name".into(), "type".into()],
                }),
        );
    }
}

fn build_api(ctx: &ModelContext, m: &mut AwsModel) {
    let Some(lbs) = lb_settings(ctx) else {
        return;
    };
    let masters = role_groups(ctx, &InstanceGroupRole::ControlPlane);
    let nodes = role_groups(ctx, &InstanceGroupRole::Node);
    let internal = lbs.type_.as_deref() == Some("Internal");
    let lb_task = ctx.scoped("api");
    let lb_key = TaskKey::new("NetworkLoadBalancer", &lb_task);

    // Security group and rules.
    let elb_sg = ctx.scoped("api-elb");
    // An overriding group is shared (not managed), but kOps still opens its egress.
    let elb_sg_key = if let Some(o) = &lbs.security_group_override {
        m.add(
            ctx.task("SecurityGroup", elb_sg.clone(), R::SecurityGroup)
                .shared(o.clone()),
        );
        TaskKey::new("SecurityGroup", &elb_sg)
    } else {
        m.add(security_group(ctx, &elb_sg, "Security group for api ELB"));
        TaskKey::new("SecurityGroup", &elb_sg)
    };
    add_egress(ctx, m, &elb_sg);
    let api_port = 443;
    for a in ctx.cluster.spec.api.access.iter().flatten() {
        m.add(Rule::ingress(&elb_sg, Peer::access(a), Some("tcp"), api_port, api_port).task(ctx));
        if has_cert(ctx) {
            m.add(Rule::ingress(&elb_sg, Peer::access(a), Some("tcp"), 8443, 8443).task(ctx));
        }
        // A prefix list may hold both families: it gets both PMTU rules.
        if !a.contains(':') {
            m.add(
                Rule::ingress(&elb_sg, Peer::access(a), Some("icmp"), 3, 4)
                    .named(format!("icmp-pmtu-api-elb-{a}"))
                    .task(ctx),
            );
        }
        if a.contains(':') || a.starts_with("pl-") {
            m.add(
                Rule::ingress(&elb_sg, Peer::access(a), Some("icmpv6"), -1, -1)
                    .named(format!("icmpv6-pmtu-api-elb-{a}"))
                    .task(ctx),
            );
        }
    }
    for cp in &masters {
        let sfx = &cp.suffix;
        let from_elb = |proto: &str, from: i64, to: i64, name: String| {
            Rule::ingress(&cp.name, Peer::Group(elb_sg.clone()), Some(proto), from, to)
                .named(name)
                .task(ctx)
        };
        m.add(from_elb(
            "tcp",
            443,
            443,
            format!("https-elb-to-master{sfx}"),
        ));
        m.add(from_elb("icmp", 3, 4, format!("icmp-pmtu-elb-to-cp{sfx}")));
        m.add(
            Rule::ingress(&elb_sg, Peer::Group(cp.name.clone()), Some("icmp"), 3, 4)
                .named(format!("icmp-pmtu-cp{sfx}-to-elb"))
                .task(ctx),
        );
        if ctx.dns_none() {
            m.add(from_elb(
                "tcp",
                3988,
                3988,
                format!("kops-controller-elb-to-cp{sfx}"),
            ));
            if cilium_etcd_managed(ctx) {
                m.add(from_elb(
                    "tcp",
                    4003,
                    4003,
                    format!("etcd-cilium-elb-to-cp{sfx}"),
                ));
            }
        }
        if has_cert(ctx) {
            m.add(from_elb("tcp", 8443, 8443, format!("tcp-api-cp{sfx}")));
        }
    }
    if ctx.dns_none() {
        for node in &nodes {
            m.add(
                Rule::ingress(&elb_sg, Peer::Group(node.name.clone()), None, 0, 0)
                    .named(format!("node{}-to-elb", node.suffix))
                    .task(ctx),
            );
        }
    }

    // Target groups and listeners.
    let tcp = tg_key(ctx, "tcp");
    m.add(target_group(ctx, "tcp", 443, "TCP", false));
    if has_cert(ctx) {
        let tls = tg_key(ctx, "tls");
        m.add(target_group(ctx, "tls", 443, "TLS", false));
        let mut l = listener(&lb_key, &lb_task, ctx, 443, "TLS", &tls)
            .attr_opt("certificate_arn", lbs.ssl_certificate.clone());
        l.set(
            "ssl_policy",
            lbs.ssl_policy
                .clone()
                .unwrap_or_else(|| "ELBSecurityPolicy-2016-08".into()),
        );
        m.add(l);
        m.add(listener(&lb_key, &lb_task, ctx, 8443, "TCP", &tcp));
    } else {
        m.add(listener(&lb_key, &lb_task, ctx, 443, "TCP", &tcp));
    }
    if ctx.dns_none() {
        let kc = tg_key(ctx, "kops-controller");
        m.add(target_group(ctx, "kops-controller", 3988, "TCP", true));
        m.add(listener(&lb_key, &lb_task, ctx, 3988, "TCP", &kc));
        if cilium_etcd_managed(ctx) {
            let ec = tg_key(ctx, "etcd-cilium");
            m.add(target_group(ctx, "etcd-cilium", 4003, "TCP", false));
            // kOps names this listener after an `etcd-cilium` load balancer.
            let name = ctx.scoped("etcd-cilium");
            m.add(listener(&lb_key, &name, ctx, 4003, "TCP", &ec));
        }
    }

    // The load balancer.
    let mut mappings = Vec::new();
    if let Some(explicit) = lbs.subnets.as_ref().filter(|s| !s.is_empty()) {
        for s in explicit {
            let Some(n) = s.name.as_deref() else { continue };
            let mut b = Vec::new();
            if let Some(a) = &s.allocation_id {
                b.push(("allocation_id".to_owned(), Attr::s(a.as_str())));
            }
            if let Some(ip) = &s.private_i_pv4_address {
                b.push(("private_ipv4_address".to_owned(), Attr::s(ip.as_str())));
            }
            b.push(("subnet_id".to_owned(), subnet_attr(ctx, n)));
            mappings.push(b);
        }
    } else {
        for n in lb_subnets(ctx, internal) {
            mappings.push(vec![("subnet_id".to_owned(), subnet_attr(ctx, &n))]);
        }
    }
    let mut sgs: Vec<Attr> = lbs
        .additional_security_groups
        .iter()
        .flatten()
        .map(|s| Attr::s(s.as_str()))
        .collect();
    sgs.push(Attr::id(&elb_sg_key));
    let lb_name = resource_name_32(ctx.name(), "api");
    let mut lb = ctx
        .task("NetworkLoadBalancer", lb_task.clone(), R::LoadBalancer)
        .named(lb_name)
        .attr(
            "enable_cross_zone_load_balancing",
            // Nodes reach kops-controller through the load balancer without DNS: kOps
            // turns cross-zone balancing on then.
            ctx.dns_none() || lbs.cross_zone_load_balancing.unwrap_or(false),
        )
        .attr("internal", internal)
        .attr("load_balancer_type", "network")
        .attr("security_groups", Attr::List(sgs))
        .attr("subnet_mapping", Attr::Blocks(mappings))
        .tags(ctx.tags(&lb_task));
    if let Some(log) = &lbs.access_log {
        let mut b = Vec::new();
        if let Some(bucket) = &log.bucket {
            b.push(("bucket".to_owned(), Attr::s(bucket.as_str())));
        }
        b.push(("enabled".to_owned(), Attr::Bool(true)));
        if let Some(p) = &log.bucket_prefix {
            b.push(("prefix".to_owned(), Attr::s(p.as_str())));
        }
        lb.set("access_logs", Attr::Block(b));
    }
    if ctx.is_ipv6_only() && !internal {
        lb.set("ip_address_type", "dualstack");
    }
    m.add(lb);

    if !ctx.dns_none() {
        if let Some(public) = &ctx.cluster.spec.api.public_name {
            alias_records(ctx, m, public, &lb_key);
        }
        if lbs.use_for_internal_api == Some(true) {
            alias_records(ctx, m, &format!("api.internal.{}", ctx.name()), &lb_key);
        }
    }
}

fn build_bastion(ctx: &ModelContext, m: &mut AwsModel) {
    if !ctx.has_role(&InstanceGroupRole::Bastion) {
        return;
    }
    let bastions = role_groups(ctx, &InstanceGroupRole::Bastion);
    let masters = role_groups(ctx, &InstanceGroupRole::ControlPlane);
    let nodes = role_groups(ctx, &InstanceGroupRole::Node);
    let elb = ctx.scoped("bastion-elb");
    for g in &bastions {
        m.add(g.task(ctx));
        m.output_item(
            "bastion_security_group_ids",
            kops_tasks::terraform::Expr::Ref(g.key().to_ref()),
        );
        add_egress(ctx, m, &g.name);
    }
    m.add(security_group(ctx, &elb, "Security group for bastion ELB"));
    add_egress(ctx, m, &elb);
    for b in &bastions {
        let from_bastion = || Peer::Group(b.name.clone());
        for dst in masters.iter().chain(&nodes) {
            m.add(Rule::ingress(&dst.name, from_bastion(), Some("tcp"), 22, 22).task(ctx));
        }
        m.add(Rule::ingress(&b.name, Peer::Group(elb.clone()), Some("tcp"), 22, 22).task(ctx));
        m.add(Rule::ingress(&b.name, Peer::Group(elb.clone()), Some("icmp"), 3, 4).task(ctx));
        m.add(Rule::ingress(&elb, from_bastion(), Some("icmp"), 3, 4).task(ctx));
    }
    let bastion_internal = ctx
        .cluster
        .spec
        .networking
        .topology
        .as_ref()
        .and_then(|t| t.bastion.as_ref())
        .and_then(|b| b.load_balancer.as_ref())
        .and_then(|l| l.type_.as_deref())
        == Some("Internal");
    // SSH reaches the load balancer from the subnets it may sit in and from sshAccess.
    let mut sources: Vec<String> = Vec::new();
    for s in ctx.subnets() {
        let ty = s.type_.as_deref().unwrap_or("Public");
        let eligible = if bastion_internal {
            matches!(ty, "Private" | "DualStack")
        } else {
            matches!(ty, "Public" | "Utility")
        };
        if eligible && let Some(c) = &s.cidr {
            sources.push(c.clone());
        }
    }
    sources.extend(ctx.cluster.spec.ssh_access.iter().flatten().cloned());
    sources.sort();
    sources.dedup();
    for a in &sources {
        m.add(Rule::ingress(&elb, Peer::access(a), Some("tcp"), 22, 22).task(ctx));
        // A prefix list may hold both families: it gets both PMTU rules.
        let prefix_list = a.starts_with("pl-");
        if a.contains(':') || prefix_list {
            m.add(
                Rule::ingress(&elb, Peer::access(a), Some("icmpv6"), -1, -1)
                    .named(format!("icmpv6-pmtu-ssh-nlb-{a}"))
                    .task(ctx),
            );
        }
        if !a.contains(':') {
            m.add(
                Rule::ingress(&elb, Peer::access(a), Some("icmp"), 3, 4)
                    .named(format!("icmp-pmtu-ssh-nlb-{a}"))
                    .task(ctx),
            );
        }
    }

    let lb_task = ctx.scoped("bastion");
    let lb_key = TaskKey::new("NetworkLoadBalancer", &lb_task);
    let tg = tg_key(ctx, "bastion");
    m.add(target_group(ctx, "bastion", 22, "TCP", false));
    m.add(listener(&lb_key, &lb_task, ctx, 22, "TCP", &tg));
    let bspec = ctx
        .cluster
        .spec
        .networking
        .topology
        .as_ref()
        .and_then(|t| t.bastion.as_ref());
    let internal = bspec
        .and_then(|b| b.load_balancer.as_ref())
        .and_then(|l| l.type_.as_deref())
        == Some("Internal");
    let mut sgs: Vec<Attr> = bspec
        .and_then(|b| b.load_balancer.as_ref())
        .and_then(|l| l.additional_security_groups.clone())
        .unwrap_or_default()
        .into_iter()
        .map(Attr::Str)
        .collect();
    sgs.push(Attr::id(&TaskKey::new("SecurityGroup", &elb)));
    let mappings: Vec<Vec<(String, Attr)>> = lb_subnets(ctx, internal)
        .into_iter()
        .map(|n| vec![("subnet_id".to_owned(), subnet_attr(ctx, &n))])
        .collect();
    m.add(
        ctx.task("NetworkLoadBalancer", lb_task.clone(), R::LoadBalancer)
            .named(resource_name_32(ctx.name(), "bastion"))
            .attr("enable_cross_zone_load_balancing", false)
            .attr("internal", internal)
            .attr("load_balancer_type", "network")
            .attr("security_groups", Attr::List(sgs))
            .attr("subnet_mapping", Attr::Blocks(mappings))
            .tags(ctx.tags(&lb_task)),
    );
    if let Some(public) = bspec.and_then(|b| b.bastion_public_name.as_deref())
        && !ctx.dns_none()
    {
        alias_records(ctx, m, public, &lb_key);
    }
}

/// Adds the API and bastion load balancers and their DNS records.
pub(crate) fn build(ctx: &ModelContext, m: &mut AwsModel) -> Result<()> {
    build_api(ctx, m);
    build_bastion(ctx, m);
    Ok(())
}
