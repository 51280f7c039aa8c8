//! Route tables, routes and subnet associations, elastic IPs, NAT gateways.

use kops_cloud_aws::cloud::{CloudResult, ListQuery, Resource, ResourceType};
use kops_tasks::resource::Attrs as ResourceAttrs;

use super::{Create, Kind, Update, parent_filter};
use crate::MockAws;
use crate::cloud::{Attrs, IntoCloud, a_str, ec2_filters, gone, new_res, put, put_opt, split2};
use crate::ec2;

/// [`ResourceType::RouteTable`].
pub(super) struct RouteTable;

impl Kind for RouteTable {
    fn kind(&self) -> ResourceType {
        ResourceType::RouteTable
    }

    fn native(&self) -> &'static [&'static str] {
        &["vpc_id"]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        for t in m
            .describe_route_tables(&[], &ec2_filters(q, "route-table-id", None))
            .into_cloud()?
        {
            let mut r = new_res(rt, &t.id, &t.tags);
            put(&mut r.attrs, "vpc_id", t.vpc_id.clone());
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let tags = c.tags();
        Ok(m.create_route_table(&c.need("vpc_id")?, tags)
            .into_cloud()?
            .id)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.delete_route_table(id))
    }
}

/// [`ResourceType::Route`].
pub(super) struct Route;

impl Kind for Route {
    fn kind(&self) -> ResourceType {
        ResourceType::Route
    }

    fn native(&self) -> &'static [&'static str] {
        &[
            "route_table_id",
            "destination_cidr_block",
            "destination_ipv6_cidr_block",
            "destination_prefix_list_id",
            "gateway_id",
            "nat_gateway_id",
            "egress_only_gateway_id",
            "instance_id",
            "transit_gateway_id",
            "network_interface_id",
            "vpc_peering_connection_id",
        ]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        let filters = parent_filter(q, "route-table-id");
        for t in m.describe_route_tables(&[], &filters).into_cloud()? {
            for route in &t.routes {
                if route.gateway_id.as_deref() == Some("local") {
                    continue;
                }
                let dest = route_destination(route);
                let mut r = Resource::new(rt, format!("{}_{dest}", t.id)).with_parent(&t.id);
                put(&mut r.attrs, "route_table_id", t.id.clone());
                route_attrs(&mut r.attrs, route);
                out.push(r);
            }
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let rtb = c.parent_or("route_table_id")?;
        let route = route_from(a);
        let dest = route_destination(&route);
        m.create_route(&rtb, route).into_cloud()?;
        Ok(format!("{rtb}_{dest}"))
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let (rt, id, a) = (u.rt, u.id, u.a);
        // The full desired state, in which a new route target replaces the old one.
        let mut merged = u.current.attrs.to_map();
        if a.keys().any(|k| ROUTE_TARGETS.contains(&k.as_str())) {
            merged.retain(|k, _| !ROUTE_TARGETS.contains(&k.as_str()));
        }
        merged.extend(a.iter().map(|(k, v)| (k.clone(), v.clone())));
        let (rtb, _) = split2(rt, id, '_')?;
        let route = route_from(&merged);
        m.replace_route(rtb, route).into_cloud()?;
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        let rt = self.kind();
        let (rtb, dest) = split2(rt, id, '_')?;
        gone(m.delete_route(rtb, dest))
    }
}

/// [`ResourceType::RouteTableAssociation`].
pub(super) struct RouteTableAssociation;

impl Kind for RouteTableAssociation {
    fn kind(&self) -> ResourceType {
        ResourceType::RouteTableAssociation
    }

    fn native(&self) -> &'static [&'static str] {
        &["route_table_id", "subnet_id"]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        let filters = parent_filter(q, "route-table-id");
        for t in m.describe_route_tables(&[], &filters).into_cloud()? {
            for a in &t.associations {
                let Some(subnet) = &a.subnet_id else { continue };
                let mut r = Resource::new(rt, &a.id).with_parent(&t.id);
                put(&mut r.attrs, "route_table_id", t.id.clone());
                put(&mut r.attrs, "subnet_id", subnet.clone());
                out.push(r);
            }
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        m.associate_route_table(&c.parent_or("route_table_id")?, &c.need("subnet_id")?)
            .into_cloud()
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let id = u.id;
        let a = u.a;
        // ReplaceRouteTableAssociation: the subnet moves to the other table under
        // a new association id (the one answered).
        if u.changed("route_table_id")
            && let Some(rtb) = a_str(a, "route_table_id")
        {
            let new_id = m.replace_route_table_association(id, &rtb).into_cloud()?;
            return Ok(Some(new_id));
        }
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.disassociate_route_table(id))
    }
}

/// [`ResourceType::ElasticIp`].
pub(super) struct ElasticIp;

impl Kind for ElasticIp {
    fn kind(&self) -> ResourceType {
        ResourceType::ElasticIp
    }

    fn native(&self) -> &'static [&'static str] {
        &["domain", "public_ip"]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        for a in m
            .describe_addresses(&[], &ec2_filters(q, "allocation-id", None))
            .into_cloud()?
        {
            let mut r = new_res(rt, &a.allocation_id, &a.tags);
            put(&mut r.attrs, "domain", a.domain.clone());
            put(&mut r.attrs, "public_ip", a.public_ip.clone());
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let tags = c.tags();
        Ok(m.allocate_address(tags).into_cloud()?.allocation_id)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.release_address(id))
    }
}

/// [`ResourceType::NatGateway`].
pub(super) struct NatGateway;

impl Kind for NatGateway {
    fn kind(&self) -> ResourceType {
        ResourceType::NatGateway
    }

    fn native(&self) -> &'static [&'static str] {
        &["subnet_id", "allocation_id", "public_ip"]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        for n in m
            .describe_nat_gateways(&[], &ec2_filters(q, "nat-gateway-id", None))
            .into_cloud()?
        {
            let mut r = new_res(rt, &n.id, &n.tags);
            put(&mut r.attrs, "subnet_id", n.subnet_id.clone());
            put_opt(&mut r.attrs, "allocation_id", n.allocation_id.clone());
            put_opt(&mut r.attrs, "public_ip", n.public_ip.clone());
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let tags = c.tags();
        Ok(m.create_nat_gateway(
            &c.need("subnet_id")?,
            a_str(a, "allocation_id").as_deref(),
            tags,
        )
        .into_cloud()?
        .id)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.delete_nat_gateway(id))
    }
}

const ROUTE_TARGETS: &[&str] = &[
    "gateway_id",
    "nat_gateway_id",
    "egress_only_gateway_id",
    "instance_id",
    "transit_gateway_id",
    "network_interface_id",
    "vpc_peering_connection_id",
];

fn route_attrs(a: &mut ResourceAttrs, r: &ec2::Route) {
    put_opt(
        a,
        "destination_cidr_block",
        r.destination_cidr_block.clone(),
    );
    put_opt(
        a,
        "destination_ipv6_cidr_block",
        r.destination_ipv6_cidr_block.clone(),
    );
    put_opt(
        a,
        "destination_prefix_list_id",
        r.destination_prefix_list_id.clone(),
    );
    put_opt(a, "gateway_id", r.gateway_id.clone());
    put_opt(a, "nat_gateway_id", r.nat_gateway_id.clone());
    put_opt(
        a,
        "egress_only_gateway_id",
        r.egress_only_internet_gateway_id.clone(),
    );
    put_opt(a, "instance_id", r.instance_id.clone());
    put_opt(a, "transit_gateway_id", r.transit_gateway_id.clone());
    put_opt(a, "network_interface_id", r.network_interface_id.clone());
    put_opt(
        a,
        "vpc_peering_connection_id",
        r.vpc_peering_connection_id.clone(),
    );
}

fn route_from(a: &Attrs) -> ec2::Route {
    ec2::Route {
        destination_cidr_block: a_str(a, "destination_cidr_block"),
        destination_ipv6_cidr_block: a_str(a, "destination_ipv6_cidr_block"),
        destination_prefix_list_id: a_str(a, "destination_prefix_list_id"),
        gateway_id: a_str(a, "gateway_id"),
        nat_gateway_id: a_str(a, "nat_gateway_id"),
        egress_only_internet_gateway_id: a_str(a, "egress_only_gateway_id"),
        instance_id: a_str(a, "instance_id"),
        transit_gateway_id: a_str(a, "transit_gateway_id"),
        network_interface_id: a_str(a, "network_interface_id"),
        vpc_peering_connection_id: a_str(a, "vpc_peering_connection_id"),
    }
}

fn route_destination(r: &ec2::Route) -> String {
    r.destination().unwrap_or_default().to_owned()
}
