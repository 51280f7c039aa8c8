//! kOps' `APILoadBalancerBuilder` (`pkg/model/gcemodel/api_loadbalancer.go`): with
//! `api.loadBalancer` set, an internal TCP load balancer (regional health check, backend
//! service over the control-plane groups, and per subnet an internal address and
//! forwarding rules); `type: Public` adds, on top, the legacy HTTP health check, a target
//! pool, an external address and an external forwarding rule. Plus the firewall rules
//! that let the health checks and clients in.

use std::collections::BTreeMap;

use kops_api::internal::{InstanceGroup, InstanceGroupRole};
use kops_tasks::TaskKey;
use kops_tasks::resource::Attr;

use super::cloud::{CLUSTER_LABEL, GceResourceType as R};
use super::firewall::{Source, add_pair, add_single, cilium_etcd_managed};
use super::{GceModel, GceModelContext, naming};
use crate::error::{Result, invalid};

/// Google's health-check source ranges.
const HEALTH_CHECK_RANGES: &[&str] = &[
    "35.191.0.0/16",
    "130.211.0.0/22",
    "209.85.204.0/22",
    "209.85.152.0/22",
];

/// Whether the API has a public (external) load balancer.
pub(crate) fn is_public(ctx: &GceModelContext) -> bool {
    ctx.cluster
        .spec
        .api
        .load_balancer
        .as_ref()
        .and_then(|l| l.type_.as_deref())
        .unwrap_or("Public")
        == "Public"
}

/// The groups that run an API server.
pub(crate) fn apiserver_groups(ctx: &GceModelContext) -> Vec<&InstanceGroup> {
    ctx.groups
        .iter()
        .filter(|g| {
            matches!(
                g.spec.role,
                Some(InstanceGroupRole::ControlPlane | InstanceGroupRole::ApiServer)
            )
        })
        .collect()
}

/// The target pool key, when the API has a public load balancer.
pub(crate) fn target_pool_key(ctx: &GceModelContext) -> Option<TaskKey> {
    (ctx.has_api_lb() && is_public(ctx)).then(|| TaskKey::new("TargetPool", ctx.suffixed("api")))
}

fn forwarding_rule_labels(ctx: &GceModelContext, name: &str) -> BTreeMap<String, String> {
    [
        (CLUSTER_LABEL.to_owned(), ctx.safe_name()),
        ("name".to_owned(), name.to_owned()),
    ]
    .into_iter()
    .collect()
}

pub(crate) fn build(ctx: &GceModelContext, m: &mut GceModel) -> Result<()> {
    if !ctx.has_api_lb() {
        return Ok(());
    }
    let net = ctx.network_key();
    if is_public(ctx) {
        let name = ctx.suffixed("api");
        let hc = ctx
            .task("HTTPHealthcheck", &name, R::HttpHealthCheck)
            .named(&name)
            .attr("port", 3990)
            .attr("request_path", "/healthz");
        let hc_key = hc.task_key().clone();
        m.add(hc);
        let pool = ctx
            .task("TargetPool", &name, R::TargetPool)
            .named(&name)
            .attr(
                "health_checks",
                Attr::List(vec![Attr::out(&hc_key, "self_link")]),
            );
        let pool_key = pool.task_key().clone();
        m.add(pool);
        let address = ctx.task("Address", &name, R::Address).named(&name);
        let address_key = address.task_key().clone();
        m.add(address);
        m.add(
            ctx.task("ForwardingRule", &name, R::ForwardingRule)
                .named(&name)
                .attr("ip_address", Attr::out(&address_key, "address"))
                .attr("ip_protocol", "TCP")
                .attr("load_balancing_scheme", "EXTERNAL")
                .attr("port_range", "443-443")
                .attr("target", Attr::out(&pool_key, "self_link"))
                .tags(forwarding_rule_labels(ctx, "api")),
        );
    }

    // The internal load balancer, for both types.
    let name = ctx.suffixed("api");
    let hc = ctx
        .task("HealthCheck", &name, R::RegionHealthCheck)
        .named(&name)
        .attr(
            "tcp_health_check",
            Attr::Block(vec![("port".to_owned(), Attr::Int(443))]),
        );
    let hc_key = hc.task_key().clone();
    m.add(hc);
    let groups = apiserver_groups(ctx);
    let mut backends = Vec::new();
    let mut subnets: Vec<String> = Vec::new();
    for ig in &groups {
        let zones = ctx.zones_of(ig)?;
        let [zone] = zones.as_slice() else {
            return Err(invalid(
                format!("instancegroup {}: spec.zones", ig.name()),
                "a group behind the GCE API load balancer must have exactly one zone",
            ));
        };
        let igm = naming::instance_group_manager_name(ctx.name(), ig.name(), zone);
        // A group this update leaves alone has no task: its instance group is named.
        let group = if ctx.builds_group(ig) {
            Attr::out(&TaskKey::new("InstanceGroupManager", igm), "instance_group")
        } else {
            Attr::s(format!(
                "{}projects/{}/zones/{zone}/instanceGroups/{igm}",
                kops_cloud_gce::cloud::COMPUTE_URL,
                ctx.project
            ))
        };
        backends.push(vec![
            ("balancing_mode".to_owned(), Attr::s("CONNECTION")),
            ("group".to_owned(), group),
        ]);
        for s in ig.spec.subnets.iter().flatten() {
            if !subnets.contains(s) {
                subnets.push(s.clone());
            }
        }
    }
    let bs = ctx
        .task("BackendService", &name, R::RegionBackendService)
        .named(&name)
        .attr("backend", Attr::Blocks(backends))
        .attr("health_checks", Attr::List(vec![Attr::id(&hc_key)]))
        .attr("load_balancing_scheme", "INTERNAL")
        .attr("protocol", "TCP");
    let bs_key = bs.task_key().clone();
    m.add(bs);

    let mut rules: Vec<(&str, i64)> = vec![("api", 443)];
    if ctx.dns_none() {
        rules.push(("kops-controller", 3988));
    }
    if cilium_etcd_managed(ctx) {
        rules.push(("cilium-etcd", 4003));
    }
    for s in &subnets {
        let subnet_key = ctx.subnet_key(s);
        let addr_name = ctx.suffixed(&format!("api-{s}"));
        let address = ctx
            .task("Address", &addr_name, R::Address)
            .named(&addr_name)
            .attr("address_type", "INTERNAL")
            .attr("purpose", "SHARED_LOADBALANCER_VIP")
            .attr("subnetwork", Attr::out(&subnet_key, "name"));
        let address_key = address.task_key().clone();
        m.add(address);
        for (prefix, port) in &rules {
            let label = format!("{prefix}-{s}");
            let fr_name = ctx.suffixed(&label);
            m.add(
                ctx.task("ForwardingRule", &fr_name, R::ForwardingRule)
                    .named(&fr_name)
                    .attr("backend_service", Attr::id(&bs_key))
                    .attr("ip_address", Attr::out(&address_key, "address"))
                    .attr("ip_protocol", "TCP")
                    .attr("load_balancing_scheme", "INTERNAL")
                    .attr("network", Attr::out(&net, "name"))
                    .attr("ports", Attr::strs([port.to_string()]))
                    .attr("subnetwork", Attr::out(&subnet_key, "name"))
                    .tags(forwarding_rule_labels(ctx, &label)),
            );
        }
    }

    // Firewall rules of the load balancer.
    let cp = ctx.control_plane_tags();
    add_single(
        ctx,
        m,
        "lb-health-checks",
        Source::Ranges(
            HEALTH_CHECK_RANGES
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
        ),
        &cp,
        &[("tcp", Vec::new())],
    );
    let access = ctx.cluster.spec.api.access.clone().unwrap_or_default();
    add_pair(
        ctx,
        m,
        "https-api",
        Source::Ranges(access.clone()),
        &cp,
        &[("tcp", vec!["443".to_owned()])],
    );
    let control_plane = vec![ctx.tag("control-plane")];
    if ctx.dns_none() {
        add_pair(
            ctx,
            m,
            "kops-controller",
            Source::Ranges(access.clone()),
            &control_plane,
            &[("tcp", vec!["3988".to_owned()])],
        );
    }
    if cilium_etcd_managed(ctx) {
        add_pair(
            ctx,
            m,
            "cilium-etcd",
            Source::Ranges(access),
            &control_plane,
            &[("tcp", vec!["4003".to_owned()])],
        );
    }
    Ok(())
}
