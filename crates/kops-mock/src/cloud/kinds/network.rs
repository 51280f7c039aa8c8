//! VPCs and their CIDR blocks, DHCP options and their association, internet and
//! egress-only gateways, subnets.

use std::collections::BTreeMap;

use kops_cloud_aws::cloud::{CloudResult, ListQuery, Resource, ResourceType};

use super::{Create, Kind, Update, parent_filter};
use crate::MockAws;
use crate::cloud::{
    Attrs, IntoCloud, a_bool, a_list, a_str, ec2_filters, gone, new_res, put, put_opt,
    to_cloud_error,
};
use crate::ec2::{CreateSubnet, SubnetAttributes, VpcCidr};

/// [`ResourceType::Vpc`].
pub(super) struct Vpc;

impl Kind for Vpc {
    fn kind(&self) -> ResourceType {
        ResourceType::Vpc
    }

    fn native(&self) -> &'static [&'static str] {
        &[
            "cidr_block",
            "enable_dns_hostnames",
            "enable_dns_support",
            "ipv6_cidr_block",
        ]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        for v in m
            .describe_vpcs(&[], &ec2_filters(q, "vpc-id", None))
            .into_cloud()?
        {
            let mut r = new_res(rt, &v.id, &v.tags);
            put(&mut r.attrs, "cidr_block", v.cidr_block.clone());
            put(&mut r.attrs, "enable_dns_hostnames", v.enable_dns_hostnames);
            put(&mut r.attrs, "enable_dns_support", v.enable_dns_support);
            put_opt(
                &mut r.attrs,
                "ipv6_cidr_block",
                v.ipv6_cidr_block_associations
                    .first()
                    .map(|a| a.cidr_block.clone()),
            );
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let tags = c.tags();
        let v = m
            .create_vpc(
                &c.need("cidr_block")?,
                a_bool(a, "assign_generated_ipv6_cidr_block").unwrap_or(false),
                tags,
            )
            .into_cloud()?;
        let (h, s) = (
            a_bool(a, "enable_dns_hostnames"),
            a_bool(a, "enable_dns_support"),
        );
        if h.is_some() || s.is_some() {
            m.modify_vpc_attribute(&v.id, h, s).into_cloud()?;
        }
        Ok(v.id)
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let id = u.id;
        let a = u.a;
        let (h, s) = (
            a_bool(a, "enable_dns_hostnames"),
            a_bool(a, "enable_dns_support"),
        );
        if h.is_some() || s.is_some() {
            m.modify_vpc_attribute(id, h, s).into_cloud()?;
        }
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.delete_vpc(id))
    }
}

/// [`ResourceType::VpcCidrBlock`].
pub(super) struct VpcCidrBlock;

impl Kind for VpcCidrBlock {
    fn kind(&self) -> ResourceType {
        ResourceType::VpcCidrBlock
    }

    fn native(&self) -> &'static [&'static str] {
        &["vpc_id", "cidr_block"]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        let filters = parent_filter(q, "vpc-id");
        for v in m.describe_vpcs(&[], &filters).into_cloud()? {
            for a in v.cidr_block_associations.iter().skip(1) {
                let mut r = Resource::new(rt, &a.association_id).with_parent(&v.id);
                put(&mut r.attrs, "vpc_id", v.id.clone());
                put(&mut r.attrs, "cidr_block", a.cidr_block.clone());
                out.push(r);
            }
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        Ok(m.associate_vpc_cidr_block(
            &c.parent_or("vpc_id")?,
            VpcCidr::Ipv4(c.need("cidr_block")?),
        )
        .into_cloud()?
        .association_id)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.disassociate_vpc_cidr_block(id))
    }
}

/// [`ResourceType::VpcIpv6CidrBlock`].
pub(super) struct VpcIpv6CidrBlock;

impl Kind for VpcIpv6CidrBlock {
    fn kind(&self) -> ResourceType {
        ResourceType::VpcIpv6CidrBlock
    }

    fn native(&self) -> &'static [&'static str] {
        &["vpc_id", "ipv6_cidr_block"]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        let filters = parent_filter(q, "vpc-id");
        for v in m.describe_vpcs(&[], &filters).into_cloud()? {
            for a in &v.ipv6_cidr_block_associations {
                let mut r = Resource::new(rt, &a.association_id).with_parent(&v.id);
                put(&mut r.attrs, "vpc_id", v.id.clone());
                put(&mut r.attrs, "ipv6_cidr_block", a.cidr_block.clone());
                out.push(r);
            }
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let cidr = match (
            a_bool(a, "amazon_provided_ipv6_cidr_block"),
            a_str(a, "ipv6_cidr_block"),
        ) {
            (Some(false), Some(c)) | (None, Some(c)) => VpcCidr::Ipv6(c),
            _ => VpcCidr::AmazonIpv6,
        };
        Ok(m.associate_vpc_cidr_block(&c.parent_or("vpc_id")?, cidr)
            .into_cloud()?
            .association_id)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.disassociate_vpc_cidr_block(id))
    }
}

/// [`ResourceType::DhcpOptions`].
pub(super) struct DhcpOptions;

impl Kind for DhcpOptions {
    fn kind(&self) -> ResourceType {
        ResourceType::DhcpOptions
    }

    fn native(&self) -> &'static [&'static str] {
        &["domain_name", "domain_name_servers", "ntp_servers"]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        for d in m
            .describe_dhcp_options(&[], &ec2_filters(q, "dhcp-options-id", None))
            .into_cloud()?
        {
            let mut r = new_res(rt, &d.id, &d.tags);
            if let Some(v) = d.configurations.get("domain-name").and_then(|v| v.first()) {
                put(&mut r.attrs, "domain_name", v.clone());
            }
            if let Some(v) = d.configurations.get("domain-name-servers") {
                put(&mut r.attrs, "domain_name_servers", v.clone());
            }
            if let Some(v) = d.configurations.get("ntp-servers") {
                put(&mut r.attrs, "ntp_servers", v.clone());
            }
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let tags = c.tags();
        let mut conf = BTreeMap::new();
        if let Some(d) = a_str(a, "domain_name") {
            conf.insert("domain-name".to_owned(), vec![d]);
        }
        for (attr, key) in [
            ("domain_name_servers", "domain-name-servers"),
            ("ntp_servers", "ntp-servers"),
        ] {
            let v = a_list(a, attr);
            if !v.is_empty() {
                conf.insert(key.to_owned(), v);
            }
        }
        Ok(m.create_dhcp_options(conf, tags).into_cloud()?.id)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.delete_dhcp_options(id))
    }
}

/// [`ResourceType::DhcpOptionsAssociation`].
pub(super) struct DhcpOptionsAssociation;

impl Kind for DhcpOptionsAssociation {
    fn kind(&self) -> ResourceType {
        ResourceType::DhcpOptionsAssociation
    }

    fn native(&self) -> &'static [&'static str] {
        &["vpc_id", "dhcp_options_id"]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        for v in m.describe_vpcs(&[], &[]).into_cloud()? {
            if v.dhcp_options_id == "default" {
                continue;
            }
            let mut r = Resource::new(rt, &v.id).with_parent(&v.id);
            put(&mut r.attrs, "vpc_id", v.id.clone());
            put(&mut r.attrs, "dhcp_options_id", v.dhcp_options_id.clone());
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let vpc = c.need("vpc_id")?;
        m.associate_dhcp_options(&c.need("dhcp_options_id")?, &vpc)
            .into_cloud()?;
        Ok(vpc)
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let id = u.id;
        let a = u.a;
        if let Some(d) = a_str(a, "dhcp_options_id") {
            m.associate_dhcp_options(&d, id).into_cloud()?;
        }
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.associate_dhcp_options("default", id))
    }
}

/// [`ResourceType::InternetGateway`].
pub(super) struct InternetGateway;

impl Kind for InternetGateway {
    fn kind(&self) -> ResourceType {
        ResourceType::InternetGateway
    }

    fn native(&self) -> &'static [&'static str] {
        &["vpc_id"]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        for g in m
            .describe_internet_gateways(&[], &ec2_filters(q, "internet-gateway-id", None))
            .into_cloud()?
        {
            let mut r = new_res(rt, &g.id, &g.tags);
            put_opt(&mut r.attrs, "vpc_id", g.attached_vpc_id.clone());
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let tags = c.tags();
        let g = m.create_internet_gateway(tags).into_cloud()?;
        if let Some(v) = a_str(a, "vpc_id") {
            m.attach_internet_gateway(&g.id, &v).into_cloud()?;
        }
        Ok(g.id)
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let id = u.id;
        let a = u.a;
        let current = &u.current;
        if u.changed("vpc_id") {
            if let Some(old) = current.attr_str("vpc_id") {
                m.detach_internet_gateway(id, old).into_cloud()?;
            }
            if let Some(new) = a_str(a, "vpc_id") {
                m.attach_internet_gateway(id, &new).into_cloud()?;
            }
        }
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        let g = match m.describe_internet_gateways(&[id.to_owned()], &[]) {
            Ok(g) => g,
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(to_cloud_error(e)),
        };
        if let Some(v) = g.first().and_then(|g| g.attached_vpc_id.clone()) {
            gone(m.detach_internet_gateway(id, &v))?;
        }
        gone(m.delete_internet_gateway(id))
    }
}

/// [`ResourceType::EgressOnlyInternetGateway`].
pub(super) struct EgressOnlyInternetGateway;

impl Kind for EgressOnlyInternetGateway {
    fn kind(&self) -> ResourceType {
        ResourceType::EgressOnlyInternetGateway
    }

    fn native(&self) -> &'static [&'static str] {
        &["vpc_id"]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        for g in m
            .describe_egress_only_internet_gateways(
                &[],
                &ec2_filters(q, "egress-only-internet-gateway-id", None),
            )
            .into_cloud()?
        {
            let mut r = new_res(rt, &g.id, &g.tags);
            put(&mut r.attrs, "vpc_id", g.vpc_id.clone());
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let tags = c.tags();
        Ok(
            m.create_egress_only_internet_gateway(&c.need("vpc_id")?, tags)
                .into_cloud()?
                .id,
        )
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.delete_egress_only_internet_gateway(id))
    }
}

/// [`ResourceType::Subnet`].
pub(super) struct Subnet;

impl Kind for Subnet {
    fn kind(&self) -> ResourceType {
        ResourceType::Subnet
    }

    fn native(&self) -> &'static [&'static str] {
        &[
            "vpc_id",
            "availability_zone",
            "cidr_block",
            "ipv6_cidr_block",
            "ipv6_native",
            "map_public_ip_on_launch",
            "assign_ipv6_address_on_creation",
            "enable_dns64",
            "enable_resource_name_dns_a_record_on_launch",
            "enable_resource_name_dns_aaaa_record_on_launch",
            "private_dns_hostname_type_on_launch",
        ]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        for s in m
            .describe_subnets(&[], &ec2_filters(q, "subnet-id", None))
            .into_cloud()?
        {
            let mut r = new_res(rt, &s.id, &s.tags);
            put(&mut r.attrs, "vpc_id", s.vpc_id.clone());
            put(
                &mut r.attrs,
                "availability_zone",
                s.availability_zone.clone(),
            );
            put_opt(&mut r.attrs, "cidr_block", s.cidr_block.clone());
            put_opt(
                &mut r.attrs,
                "ipv6_cidr_block",
                s.ipv6_cidr_block_associations
                    .first()
                    .map(|a| a.cidr_block.clone()),
            );
            if s.ipv6_native {
                put(&mut r.attrs, "ipv6_native", true);
            }
            let a = &s.attributes;
            put_opt(
                &mut r.attrs,
                "map_public_ip_on_launch",
                a.map_public_ip_on_launch,
            );
            put_opt(
                &mut r.attrs,
                "assign_ipv6_address_on_creation",
                a.assign_ipv6_address_on_creation,
            );
            put_opt(&mut r.attrs, "enable_dns64", a.enable_dns64);
            put_opt(
                &mut r.attrs,
                "enable_resource_name_dns_a_record_on_launch",
                a.enable_resource_name_dns_a_record_on_launch,
            );
            put_opt(
                &mut r.attrs,
                "enable_resource_name_dns_aaaa_record_on_launch",
                a.enable_resource_name_dns_aaaa_record_on_launch,
            );
            put_opt(
                &mut r.attrs,
                "private_dns_hostname_type_on_launch",
                a.private_dns_hostname_type_on_launch.clone(),
            );
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let tags = c.tags();
        let s = m
            .create_subnet(CreateSubnet {
                vpc_id: c.need("vpc_id")?,
                availability_zone: c.need("availability_zone")?,
                cidr_block: a_str(a, "cidr_block"),
                ipv6_cidr_block: a_str(a, "ipv6_cidr_block"),
                ipv6_native: a_bool(a, "ipv6_native").unwrap_or(false),
                tags,
            })
            .into_cloud()?;
        let attrs = subnet_attributes(a);
        if attrs != SubnetAttributes::default() {
            m.modify_subnet_attribute(&s.id, attrs).into_cloud()?;
        }
        Ok(s.id)
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let id = u.id;
        let a = u.a;
        let current = &u.current;
        let attrs = subnet_attributes(a);
        if attrs != SubnetAttributes::default() {
            m.modify_subnet_attribute(id, attrs).into_cloud()?;
        }
        if u.changed("ipv6_cidr_block")
            && !current.attrs.contains_key("ipv6_cidr_block")
            && let Some(c) = a_str(a, "ipv6_cidr_block")
        {
            m.associate_subnet_cidr_block(id, &c).into_cloud()?;
        }
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.delete_subnet(id))
    }
}

fn subnet_attributes(a: &Attrs) -> SubnetAttributes {
    SubnetAttributes {
        map_public_ip_on_launch: a_bool(a, "map_public_ip_on_launch"),
        assign_ipv6_address_on_creation: a_bool(a, "assign_ipv6_address_on_creation"),
        enable_dns64: a_bool(a, "enable_dns64"),
        enable_resource_name_dns_a_record_on_launch: a_bool(
            a,
            "enable_resource_name_dns_a_record_on_launch",
        ),
        enable_resource_name_dns_aaaa_record_on_launch: a_bool(
            a,
            "enable_resource_name_dns_aaaa_record_on_launch",
        ),
        private_dns_hostname_type_on_launch: a_str(a, "private_dns_hostname_type_on_launch"),
    }
}
