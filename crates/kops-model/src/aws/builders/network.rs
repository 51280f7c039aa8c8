//! The network builder (kOps' `awsmodel/network.go`): VPC, extra CIDRs, DHCP options,
//! gateways, subnets, route tables, routes, NAT gateways and elastic IPs.

use std::collections::{BTreeMap, BTreeSet};

use kops_tasks::TaskKey;
use kops_tasks::terraform::Expr;

use super::{AwsModel, ModelContext};
use crate::aws::cloud::ResourceType as R;
use crate::aws::task::{Attr, FindBy};
use crate::error::Result;

/// The subnet types kOps knows.
fn subnet_type(s: &kops_api::v1alpha2::ClusterSubnetSpec) -> &str {
    s.type_.as_deref().unwrap_or("Public")
}

/// Whether a subnet type routes through the public route table.
fn is_public_type(t: &str) -> bool {
    matches!(t, "Public" | "Utility")
}

/// Adds the network tasks.
pub(crate) fn build(ctx: &ModelContext, m: &mut AwsModel) -> Result<()> {
    let name = ctx.name();
    let net = &ctx.cluster.spec.networking;
    let vpc_key = ctx.vpc_key();
    let shared_vpc = ctx.shared_vpc();

    // VPC.
    if let Some(id) = &net.network_id {
        m.add(ctx.task("VPC", name, R::Vpc).shared(id.clone()));
        m.output("vpc_id", id.as_str());
        m.output(
            "vpc_cidr_block",
            Expr::traversal(&format!(
                "data.aws_vpc.{}.cidr_block",
                kops_tasks::terraform::sanitize_name(name)
            )),
        );
        m.output(
            "vpc_ipv6_cidr_block",
            Expr::traversal(&format!(
                "data.aws_vpc.{}.ipv6_cidr_block",
                kops_tasks::terraform::sanitize_name(name)
            )),
        );
    } else {
        let mut vpc = ctx
            .task("VPC", name, R::Vpc)
            .attr("enable_dns_hostnames", true)
            .attr("enable_dns_support", true)
            .attr("assign_generated_ipv6_cidr_block", true)
            .tags(ctx.tags(name));
        if let Some(cidr) = &net.network_cidr {
            vpc.set("cidr_block", cidr.as_str());
        }
        m.add(vpc);
        m.output("vpc_id", Expr::Ref(vpc_key.to_ref()));
        m.output(
            "vpc_cidr_block",
            Expr::Ref(vpc_key.to_ref().with_attr("cidr_block")),
        );
        m.output(
            "vpc_ipv6_cidr_block",
            Expr::Ref(vpc_key.to_ref().with_attr("ipv6_cidr_block")),
        );
    }
    m.output(
        "vpc_ipv6_cidr_length",
        Expr::Raw(
            "local.vpc_ipv6_cidr_block == \"\" ? null : tonumber(regex(\".*/(\\\\d+)\", local.vpc_ipv6_cidr_block)[0])"
                .into(),
        ),
    );

    for cidr in net.additional_network_cidrs.iter().flatten() {
        m.add(
            ctx.task("VPCCIDRBlock", format!("cidr-{cidr}"), R::VpcCidrBlock)
                .attr("cidr_block", cidr.as_str())
                .attr("vpc_id", Attr::id(&vpc_key))
                .find_by(FindBy::Parent {
                    parent_attr: "vpc_id".into(),
                    match_attrs: vec!["cidr_block".into()],
                }),
        );
    }

    if !shared_vpc {
        let domain = if ctx.region == "us-east-1" {
            "ec2.internal".to_owned()
        } else {
            format!("{}.compute.internal", ctx.region)
        };
        let dhcp = ctx
            .task("DHCPOptions", name, R::DhcpOptions)
            .attr("domain_name", domain)
            .attr("domain_name_servers", Attr::strs(["AmazonProvidedDNS"]))
            .tags(ctx.tags(name));
        let dhcp_key = dhcp.task_key().clone();
        m.add(dhcp);
        m.add(
            ctx.task("VPCDHCPOptionsAssociation", name, R::DhcpOptionsAssociation)
                .attr("dhcp_options_id", Attr::id(&dhcp_key))
                .attr("vpc_id", Attr::id(&vpc_key))
                .find_by(FindBy::Parent {
                    parent_attr: "vpc_id".into(),
                    match_attrs: vec![],
                }),
        );
    }

    let subnets = ctx.subnets();
    let all_shared = !subnets.is_empty() && subnets.iter().all(|s| s.id.is_some());
    let has_private = subnets
        .iter()
        .any(|s| matches!(subnet_type(s), "Private" | "DualStack"));
    let ipv6 = ctx.is_ipv6_only();

    // Internet gateway and public route table.
    let igw_key = TaskKey::new("InternetGateway", name);
    let all_external = !subnets.is_empty()
        && subnets
            .iter()
            .all(|s| s.egress.as_deref() == Some("External"));
    if !all_external {
        if shared_vpc {
            let id = ctx
                .internet_gateway_id
                .clone()
                .unwrap_or_else(|| "igw-unknown".to_owned());
            m.add(
                ctx.task("InternetGateway", name, R::InternetGateway)
                    .shared(id),
            );
        } else {
            m.add(
                ctx.task("InternetGateway", name, R::InternetGateway)
                    .attr("vpc_id", Attr::id(&vpc_key))
                    .tags(ctx.tags(name)),
            );
        }
    }
    let public_rt = TaskKey::new("RouteTable", name);
    let external =
        |s: &kops_api::v1alpha2::ClusterSubnetSpec| s.egress.as_deref() == Some("External");
    let needs_public_rt = subnets
        .iter()
        .any(|s| s.id.is_none() && !external(s) && is_public_type(subnet_type(s)))
        || (!all_shared && !has_private && !all_external);
    if needs_public_rt && !all_shared {
        let mut tags = ctx.tags(name);
        tags.insert("kubernetes.io/kops/role".into(), "public".into());
        m.add(
            ctx.task("RouteTable", name, R::RouteTable)
                .attr("vpc_id", Attr::id(&vpc_key))
                .tags(tags),
        );
        m.output("route_table_public_id", Expr::Ref(public_rt.to_ref()));
        if !all_external {
            m.add(route(
                ctx,
                "route-0.0.0.0/0",
                &public_rt,
                "0.0.0.0/0",
                "gateway_id",
                &igw_key,
            ));
            m.add(route(
                ctx,
                "route-::/0",
                &public_rt,
                "::/0",
                "gateway_id",
                &igw_key,
            ));
        }
    }

    // Egress-only gateway for IPv6 clusters with managed private subnets, as kOps does:
    // created for an owned VPC, the one attached to a shared VPC otherwise.
    let eigw_key = TaskKey::new("EgressOnlyInternetGateway", name);
    let managed_private = subnets
        .iter()
        .any(|s| !external(s) && matches!(subnet_type(s), "Private" | "DualStack"));
    if ipv6 && managed_private {
        if shared_vpc {
            let Some(id) = ctx.egress_only_internet_gateway_id.clone() else {
                return Err(crate::error::invalid(
                    "spec.networking.networkID",
                    format!(
                        "the shared VPC {} has no egress-only internet gateway attached; IPv6 private subnets route ::/0 through one",
                        net.network_id.as_deref().unwrap_or_default()
                    ),
                ));
            };
            m.add(
                ctx.task(
                    "EgressOnlyInternetGateway",
                    name,
                    R::EgressOnlyInternetGateway,
                )
                .shared(id),
            );
        } else {
            m.add(
                ctx.task(
                    "EgressOnlyInternetGateway",
                    name,
                    R::EgressOnlyInternetGateway,
                )
                .attr("vpc_id", Attr::id(&vpc_key))
                .tags(ctx.tags(name)),
            );
        }
    }

    // Subnets.
    let mut subnet_ids = Vec::new();
    for (i, s) in subnets.iter().enumerate() {
        let Some(sname) = s.name.as_deref() else {
            return Err(crate::error::invalid(
                format!("spec.subnets[{i}].name"),
                "subnet has no name",
            ));
        };
        let tname = ctx.scoped(sname);
        let key = ctx.subnet_key(sname);
        let ty = subnet_type(s);
        if let Some(id) = &s.id {
            m.add(
                ctx.task("Subnet", tname.clone(), R::Subnet)
                    .shared(id.clone()),
            );
            m.output(format!("subnet_{sname}_id"), id.as_str());
            subnet_ids.push(Expr::string(id.as_str()));
            continue;
        }
        let mut t = ctx
            .task("Subnet", tname.clone(), R::Subnet)
            .attr("vpc_id", Attr::id(&vpc_key))
            .attr_opt("availability_zone", s.zone.clone())
            .attr("private_dns_hostname_type_on_launch", "resource-name");
        let ipv6_native = s.cidr.is_none() && s.ipv6_cidr.is_some();
        if let Some(c) = &s.cidr {
            t.set("cidr_block", c.as_str());
            t.set("enable_resource_name_dns_a_record_on_launch", true);
        }
        if let Some(c) = &s.ipv6_cidr {
            match c.strip_prefix("/64#") {
                // `/64#N`: the N-th /64 of the VPC's IPv6 block, which exists only once the
                // VPC does; Terraform computes it (the direct target leaves it unset).
                Some(n) => {
                    t = t.render_attr(
                        "ipv6_cidr_block",
                        Attr::Raw(format!(
                            "cidrsubnet(local.vpc_ipv6_cidr_block, 64 - local.vpc_ipv6_cidr_length, {n})"
                        )),
                    );
                }
                None => t.set("ipv6_cidr_block", c.as_str()),
            }
            t.set("assign_ipv6_address_on_creation", true);
            t.set("enable_resource_name_dns_aaaa_record_on_launch", true);
            if ipv6_native {
                t.set("ipv6_native", true);
                t.set("enable_dns64", true);
            }
        }
        let mut tags = ctx.tags(&tname);
        tags.insert("SubnetType".into(), ty.to_owned());
        if net.tag_subnets != Some(false) {
            match ty {
                "Public" | "Utility" => {
                    tags.insert("kubernetes.io/role/elb".into(), "1".into());
                    if !has_private {
                        tags.insert("kubernetes.io/role/internal-elb".into(), "1".into());
                    }
                }
                "Private" if !ipv6_native => {
                    tags.insert("kubernetes.io/role/internal-elb".into(), "1".into());
                }
                "DualStack" => {
                    tags.insert("kubernetes.io/role/internal-elb".into(), "1".into());
                }
                _ => {}
            }
            // Karpenter finds its groups' subnets by tag.
            for ig in ctx
                .groups
                .iter()
                .filter(|g| crate::cluster::ClusterContext::is_karpenter(g))
            {
                if ig.spec.subnets.iter().flatten().any(|n| n == sname) {
                    tags.insert(
                        format!("kops.k8s.io/instance-group/{}", ig.name()),
                        "true".into(),
                    );
                }
            }
        } else {
            tags.remove("Name");
            tags.remove("KubernetesCluster");
            tags.remove(&format!("kubernetes.io/cluster/{name}"));
            tags.insert(format!("kubernetes.io/cluster/{name}"), "shared".into());
        }
        m.add(t.tags(tags));
        m.output(format!("subnet_{sname}_id"), Expr::Ref(key.to_ref()));

        // Route table association (none for subnets whose routing is managed outside).
        if external(s) {
            continue;
        }
        let (assoc_name, rt) = if is_public_type(ty) {
            (tname.clone(), public_rt.clone())
        } else {
            let zone = s.zone.clone().unwrap_or_default();
            (
                format!("private-{tname}"),
                TaskKey::new("RouteTable", ctx.scoped(&format!("private-{zone}"))),
            )
        };
        m.add(
            ctx.task(
                "RouteTableAssociation",
                assoc_name,
                R::RouteTableAssociation,
            )
            .attr("route_table_id", Attr::id(&rt))
            .attr("subnet_id", Attr::id(&key))
            // Found by its subnet in whichever table: one in another table (a duplicate
            // or a foreign one) is moved to the model's (ReplaceRouteTableAssociation).
            .find_by(FindBy::AnyParent {
                parent_attr: "route_table_id".into(),
                match_attrs: vec!["subnet_id".into()],
            }),
        );
    }
    if all_shared {
        for id in subnet_ids {
            m.output_item("subnet_ids", id);
        }
    }

    // Private route tables, NAT gateways and elastic IPs, per zone.
    let private_zones: BTreeSet<String> = subnets
        .iter()
        .filter(|s| {
            s.id.is_none() && !external(s) && matches!(subnet_type(s), "Private" | "DualStack")
        })
        .filter_map(|s| s.zone.clone())
        .collect();
    let mut egress_by_zone: BTreeMap<String, Option<String>> = BTreeMap::new();
    for s in subnets
        .iter()
        .filter(|s| matches!(subnet_type(s), "Private" | "DualStack"))
    {
        if let Some(z) = &s.zone {
            let e = egress_by_zone.entry(z.clone()).or_default();
            if e.is_none() {
                e.clone_from(&s.egress);
            }
        }
    }
    for zone in &private_zones {
        let rt_name = ctx.scoped(&format!("private-{zone}"));
        let rt_key = TaskKey::new("RouteTable", &rt_name);
        let mut tags = ctx.tags(&rt_name);
        tags.insert("kubernetes.io/kops/role".into(), format!("private-{zone}"));
        m.add(
            ctx.task("RouteTable", rt_name.clone(), R::RouteTable)
                .attr("vpc_id", Attr::id(&vpc_key))
                .tags(tags),
        );
        m.output(
            format!("route_table_private-{zone}_id"),
            Expr::Ref(rt_key.to_ref()),
        );
        let egress = egress_by_zone.get(zone).cloned().flatten();
        let nat_target: Option<(&str, Attr)> = match egress.as_deref() {
            Some("External") => None,
            Some(e) if e.starts_with("nat-") => {
                let k = TaskKey::new("NatGateway", e);
                m.add(ctx.task("NatGateway", e, R::NatGateway).shared(e));
                Some(("nat_gateway_id", Attr::id(&k)))
            }
            Some(e) if e.starts_with("i-") => Some(("network_interface_id", Attr::s(e))),
            Some(e) if e.starts_with("tgw-") => Some(("transit_gateway_id", Attr::s(e))),
            _ => {
                let nat_name = ctx.scoped(zone);
                let nat_key = TaskKey::new("NatGateway", &nat_name);
                let utility = subnets
                    .iter()
                    .find(|s| {
                        s.zone.as_deref() == Some(zone.as_str())
                            && matches!(subnet_type(s), "Utility" | "Public")
                    })
                    .and_then(|s| s.name.clone());
                let alloc = match egress.as_deref() {
                    Some(e) if e.starts_with("eipalloc-") => Attr::s(e),
                    _ => {
                        let eip_key = TaskKey::new("ElasticIP", &nat_name);
                        m.add(
                            ctx.task("ElasticIP", nat_name.clone(), R::ElasticIp)
                                .attr("domain", "vpc")
                                .tags(ctx.tags(&nat_name)),
                        );
                        Attr::id(&eip_key)
                    }
                };
                let mut nat = ctx
                    .task("NatGateway", nat_name.clone(), R::NatGateway)
                    .attr("allocation_id", alloc)
                    .tags(ctx.tags(&nat_name));
                if let Some(u) = utility {
                    nat.set("subnet_id", Attr::id(&ctx.subnet_key(&u)));
                }
                m.add(nat);
                Some(("nat_gateway_id", Attr::id(&nat_key)))
            }
        };
        if let Some((attr, target)) = nat_target {
            m.add(
                route_attr(
                    ctx,
                    &format!("route-private-{zone}-0.0.0.0/0"),
                    &rt_key,
                    "0.0.0.0/0",
                )
                .attr(attr, target.clone()),
            );
            if ipv6 {
                m.add(
                    route_attr(
                        ctx,
                        &format!("route-private-{zone}-64:ff9b::/96"),
                        &rt_key,
                        "64:ff9b::/96",
                    )
                    .attr(attr, target),
                );
            }
        }
        if ipv6 {
            m.add(route(
                ctx,
                &format!("route-private-{zone}-::/0"),
                &rt_key,
                "::/0",
                "egress_only_gateway_id",
                &eigw_key,
            ));
        }
    }

    // Additional routes.
    for s in subnets {
        for r in s.additional_routes.iter().flatten() {
            let (Some(cidr), Some(target)) = (r.cidr.as_deref(), r.target.as_deref()) else {
                continue;
            };
            let ty = subnet_type(s);
            let (rt, prefix) = if is_public_type(ty) {
                (public_rt.clone(), "public".to_owned())
            } else {
                let zone = s.zone.clone().unwrap_or_default();
                (
                    TaskKey::new("RouteTable", ctx.scoped(&format!("private-{zone}"))),
                    format!("private-{zone}"),
                )
            };
            let attr = if target.starts_with("pcx-") {
                "vpc_peering_connection_id"
            } else if target.starts_with("nat-") {
                "nat_gateway_id"
            } else if target.starts_with("tgw-") {
                "transit_gateway_id"
            } else if target.starts_with("i-") {
                "instance_id"
            } else if target.starts_with("eigw-") {
                "egress_only_gateway_id"
            } else {
                "gateway_id"
            };
            // kOps names additional routes after the subnet that asks for them.
            let _ = prefix;
            let sname = s.name.as_deref().unwrap_or_default();
            m.add(route_attr(ctx, &format!("route-{sname}-{cidr}"), &rt, cidr).attr(attr, target));
        }
    }
    Ok(())
}

fn route_attr(
    ctx: &ModelContext,
    name: &str,
    rt: &TaskKey,
    cidr: &str,
) -> crate::aws::task::AwsTask {
    let dest = if cidr.contains(':') {
        "destination_ipv6_cidr_block"
    } else {
        "destination_cidr_block"
    };
    ctx.task("Route", name, R::Route)
        .attr(dest, cidr)
        .attr("route_table_id", Attr::id(rt))
        .find_by(FindBy::Parent {
            parent_attr: "route_table_id".into(),
            match_attrs: vec![dest.into()],
        })
}

fn route(
    ctx: &ModelContext,
    name: &str,
    rt: &TaskKey,
    cidr: &str,
    target_attr: &'static str,
    target: &TaskKey,
) -> crate::aws::task::AwsTask {
    route_attr(ctx, name, rt, cidr).attr(target_attr, Attr::id(target))
}
