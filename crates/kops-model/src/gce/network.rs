//! kOps' `NetworkModelBuilder` (`pkg/model/gcemodel/network.go`): the network (custom
//! mode, or a shared one by name), one subnetwork per spec subnet (shared when it has an
//! `id`), and a router with Cloud NAT for private subnets.

use super::cloud::GceResourceType as R;
use super::{GceModel, GceModelContext};
use crate::error::{Result, invalid};
use crate::gce::naming;
use kops_tasks::resource::Attr;

/// Whether the cluster uses GCE IP aliases (`networking.gce` or `kindnet`).
pub(crate) fn ip_aliases(ctx: &GceModelContext) -> bool {
    let net = &ctx.cluster.spec.networking;
    net.gce.is_some() || net.kindnet.is_some()
}

pub(crate) fn build(ctx: &GceModelContext, m: &mut GceModel) -> Result<()> {
    let net_key = ctx.network_key();
    let network_name = ctx.network_name();
    let mut network = ctx
        .task("Network", &network_name, R::Network)
        .named(&network_name)
        .attr("auto_create_subnetworks", false);
    if ctx.shared_vpc() {
        network = network.shared(network_name.clone());
    }
    m.add(network);

    let mut nat_subnets = Vec::new();
    for (i, sn) in ctx.subnets().iter().enumerate() {
        let Some(sn_name) = sn.name.as_deref() else {
            return Err(invalid(format!("spec.subnets[{i}].name"), "required"));
        };
        let name = ctx.suffixed(sn_name);
        let mut t = ctx
            .task("Subnet", &name, R::Subnetwork)
            .named(&name)
            .attr_opt("ip_cidr_range", sn.cidr.clone())
            .attr("network", Attr::out(&net_key, "name"))
            .attr("region", ctx.region.as_str());
        if ctx.is_ipv6_only() {
            t = t
                .attr("stack_type", "IPV4_IPV6")
                .attr("ipv6_access_type", "EXTERNAL");
        } else {
            t = t.attr("stack_type", "IPV4_ONLY");
        }
        if ip_aliases(ctx) {
            let safe = ctx.safe_name();
            let mut ranges = Vec::new();
            if let Some(pods) = ctx.cluster.spec.networking.pod_cidr.clone() {
                ranges.push(vec![
                    ("ip_cidr_range".to_owned(), Attr::s(pods)),
                    (
                        "range_name".to_owned(),
                        Attr::s(naming::limited_length_name(&format!("pods-{safe}"), 63)),
                    ),
                ]);
            }
            if let Some(svc) = ctx.cluster.spec.networking.service_cluster_ip_range.clone() {
                ranges.push(vec![
                    ("ip_cidr_range".to_owned(), Attr::s(svc)),
                    (
                        "range_name".to_owned(),
                        Attr::s(naming::limited_length_name(&format!("services-{safe}"), 63)),
                    ),
                ]);
            }
            if !ranges.is_empty() {
                t = t.attr("secondary_ip_range", Attr::Blocks(ranges));
            }
        }
        match &sn.id {
            Some(id) => t = t.shared(id.clone()),
            None => {
                let private = matches!(sn.type_.as_deref(), Some("Private" | "DualStack"));
                if private {
                    match sn.egress.as_deref().unwrap_or("") {
                        "" | "NatGateway" => nat_subnets.push(ctx.subnet_key(sn_name)),
                        "External" => {}
                        other => {
                            return Err(invalid(
                                format!("spec.subnets[{i}].egress"),
                                format!(
                                    "{other:?} is not supported on GCE (use NatGateway or External)"
                                ),
                            ));
                        }
                    }
                }
            }
        }
        m.add(t);
    }

    if !nat_subnets.is_empty() {
        let name = ctx.suffixed("nat");
        let router = ctx
            .task("Router", &name, R::Router)
            .named(&name)
            .attr("network", Attr::out(&net_key, "name"));
        let router_key = router.task_key().clone();
        m.add(router);
        let subnets = nat_subnets
            .iter()
            .map(|k| {
                vec![
                    ("name".to_owned(), Attr::out(k, "name")),
                    (
                        "source_ip_ranges_to_nat".to_owned(),
                        Attr::strs(["ALL_IP_RANGES"]),
                    ),
                ]
            })
            .collect();
        m.add(
            ctx.task("RouterNAT", &name, R::RouterNat)
                .named(&name)
                .attr("nat_ip_allocate_option", "AUTO_ONLY")
                .attr("region", ctx.region.as_str())
                .attr("router", Attr::out(&router_key, "name"))
                .attr("source_subnetwork_ip_ranges_to_nat", "LIST_OF_SUBNETWORKS")
                .attr("subnetwork", Attr::Blocks(subnets)),
        );
    }
    Ok(())
}
