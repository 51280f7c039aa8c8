//! Objects to insert with [`crate::MockAws::seed`]: pre-existing resources with fixed ids,
//! as a test fixture describes them.
//!
//! A seed is inserted as given: a seeded VPC gets no default route table or security
//! group, and an empty id (or ARN) is allocated like a created object's. Referenced
//! objects (a subnet's VPC, a NAT gateway's subnet and address, an instance profile's
//! roles) must already exist; private hosted zones may name VPCs the mock does not hold,
//! as kOps' own fixture does.

use crate::MockOptions;
use crate::ec2::{
    Address, CidrAssociation, DhcpOptions, EgressOnlyInternetGateway, Image, InternetGateway,
    KeyPair, NatGateway, RouteTable, SecurityGroup, Subnet, Volume, Vpc,
};
use crate::elbv2::TargetGroup;
use crate::error::{Error, Result};
use crate::iam::{InstanceProfile, Role};
use crate::route53::{HostedZone, fqdn, normalize_zone_id};
use crate::state::State;

/// One object to seed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Seed {
    /// A VPC.
    Vpc(Vpc),
    /// A subnet.
    Subnet(Subnet),
    /// A route table (its associations' ids are allocated when empty).
    RouteTable(RouteTable),
    /// An internet gateway.
    InternetGateway(InternetGateway),
    /// An egress-only internet gateway.
    EgressOnlyInternetGateway(EgressOnlyInternetGateway),
    /// An elastic IP.
    Address(Address),
    /// A NAT gateway.
    NatGateway(NatGateway),
    /// DHCP options.
    DhcpOptions(DhcpOptions),
    /// A security group.
    SecurityGroup(SecurityGroup),
    /// A key pair.
    KeyPair(KeyPair),
    /// An image.
    Image(Image),
    /// A volume.
    Volume(Volume),
    /// A hosted zone (gets its SOA and NS records).
    HostedZone(HostedZone),
    /// A target group.
    TargetGroup(TargetGroup),
    /// An IAM role.
    Role(Role),
    /// An instance profile.
    InstanceProfile(InstanceProfile),
    /// An empty S3 bucket.
    Bucket(String),
}

macro_rules! from_seed {
    ($($ty:ident),*) => {$(
        impl From<$ty> for Seed {
            fn from(v: $ty) -> Self {
                Seed::$ty(v)
            }
        }
    )*};
}
from_seed!(
    Vpc,
    Subnet,
    RouteTable,
    InternetGateway,
    EgressOnlyInternetGateway,
    Address,
    NatGateway,
    DhcpOptions,
    SecurityGroup,
    KeyPair,
    Image,
    Volume,
    HostedZone,
    TargetGroup,
    Role,
    InstanceProfile
);

const OP: &str = "seed";

fn claim(st: &mut State, kind: &'static str, prefix: &str, id: &mut String) -> Result<()> {
    if id.is_empty() {
        *id = st.ids.next(prefix);
        return Ok(());
    }
    if st.ids.reserve(id) {
        Ok(())
    } else {
        Err(Error::exists(OP, kind, id.clone()))
    }
}

fn need_vpc(st: &State, vpc: &str) -> Result<()> {
    if st.ec2.vpcs.contains_key(vpc) {
        Ok(())
    } else {
        Err(Error::not_found(OP, "vpc", vpc))
    }
}

pub(crate) fn apply(st: &mut State, options: &MockOptions, seed: Seed) -> Result<()> {
    match seed {
        Seed::Vpc(mut v) => {
            claim(st, "vpc", "vpc", &mut v.id)?;
            if v.cidr_block_associations.is_empty() {
                v.cidr_block_associations.push(CidrAssociation {
                    association_id: st.ids.next("vpc-cidr-assoc"),
                    cidr_block: v.cidr_block.clone(),
                    state: "associated".into(),
                });
            }
            if v.dhcp_options_id.is_empty() {
                v.dhcp_options_id = "default".into();
            }
            st.ec2.vpcs.insert(v.id.clone(), v);
        }
        Seed::Subnet(mut s) => {
            need_vpc(st, &s.vpc_id)?;
            claim(st, "subnet", "subnet", &mut s.id)?;
            st.ec2.subnets.insert(s.id.clone(), s);
        }
        Seed::RouteTable(r) => route_table(st, r)?,
        Seed::InternetGateway(mut g) => {
            if let Some(v) = &g.attached_vpc_id {
                need_vpc(st, v)?;
            }
            claim(st, "internet-gateway", "igw", &mut g.id)?;
            st.ec2.igws.insert(g.id.clone(), g);
        }
        Seed::EgressOnlyInternetGateway(mut g) => {
            need_vpc(st, &g.vpc_id)?;
            claim(st, "egress-only-internet-gateway", "eigw", &mut g.id)?;
            st.ec2.eigws.insert(g.id.clone(), g);
        }
        Seed::Address(mut a) => {
            claim(st, "elastic-ip", "eipalloc", &mut a.allocation_id)?;
            if a.public_ip.is_empty() {
                a.public_ip = st.ec2.public_ip();
            }
            if a.domain.is_empty() {
                a.domain = "vpc".into();
            }
            st.ec2.addresses.insert(a.allocation_id.clone(), a);
        }
        Seed::NatGateway(n) => nat_gateway(st, n)?,
        Seed::DhcpOptions(mut d) => {
            claim(st, "dhcp-options", "dopt", &mut d.id)?;
            st.ec2.dhcp_options.insert(d.id.clone(), d);
        }
        Seed::SecurityGroup(mut g) => {
            need_vpc(st, &g.vpc_id)?;
            claim(st, "security-group", "sg", &mut g.id)?;
            st.ec2.security_groups.insert(g.id.clone(), g);
        }
        Seed::KeyPair(mut k) => {
            if st.ec2.key_pairs.contains_key(&k.name) {
                return Err(Error::exists(OP, "key-pair", k.name.clone()));
            }
            claim(st, "key-pair", "key", &mut k.id)?;
            st.ec2.key_pairs.insert(k.name.clone(), k);
        }
        Seed::Image(mut i) => {
            claim(st, "image", "ami", &mut i.id)?;
            if i.state.is_empty() {
                i.state = "available".into();
            }
            if i.root_device_type.is_empty() {
                i.root_device_type = "ebs".into();
            }
            st.ec2.images.insert(i.id.clone(), i);
        }
        Seed::Volume(mut v) => {
            claim(st, "volume", "vol", &mut v.id)?;
            if v.state.is_empty() {
                v.state = "available".into();
            }
            st.ec2.volumes.insert(v.id.clone(), v);
        }
        Seed::HostedZone(z) => hosted_zone(st, z)?,
        Seed::TargetGroup(t) => target_group(st, options, t)?,
        Seed::Role(r) => role(st, options, r)?,
        Seed::InstanceProfile(p) => instance_profile(st, options, p)?,
        Seed::Bucket(b) => {
            if st.s3.buckets.contains_key(&b) {
                return Err(Error::exists(OP, "bucket", b));
            }
            st.s3.buckets.insert(b, Default::default());
        }
    }
    Ok(())
}

/// Seeds a route table: its VPC and subnets must exist; association ids are allocated.
fn route_table(st: &mut State, mut r: RouteTable) -> Result<()> {
    need_vpc(st, &r.vpc_id)?;
    for a in &r.associations {
        if let Some(s) = &a.subnet_id
            && !st.ec2.subnets.contains_key(s)
        {
            return Err(Error::not_found(OP, "subnet", s.clone()));
        }
    }
    claim(st, "route-table", "rtb", &mut r.id)?;
    for a in &mut r.associations {
        if a.id.is_empty() {
            a.id = st.ids.next("rtbassoc");
        }
    }
    st.ec2.route_tables.insert(r.id.clone(), r);
    Ok(())
}

/// Seeds a NAT gateway in its subnet's VPC, holding its address.
fn nat_gateway(st: &mut State, mut n: NatGateway) -> Result<()> {
    let subnet = st
        .ec2
        .subnets
        .get(&n.subnet_id)
        .ok_or_else(|| Error::not_found(OP, "subnet", n.subnet_id.clone()))?;
    n.vpc_id = subnet.vpc_id.clone();
    if let Some(a) = &n.allocation_id {
        let addr = st
            .ec2
            .addresses
            .get(a)
            .ok_or_else(|| Error::not_found(OP, "elastic-ip", a.clone()))?;
        n.public_ip = Some(addr.public_ip.clone());
    }
    claim(st, "nat-gateway", "nat", &mut n.id)?;
    if let Some(a) = n
        .allocation_id
        .as_ref()
        .and_then(|a| st.ec2.addresses.get_mut(a))
    {
        a.nat_gateway_id = Some(n.id.clone());
    }
    if n.state.is_empty() {
        n.state = "available".into();
    }
    if n.connectivity_type.is_empty() {
        n.connectivity_type = if n.allocation_id.is_some() {
            "public"
        } else {
            "private"
        }
        .into();
    }
    st.ec2.nat_gateways.insert(n.id.clone(), n);
    Ok(())
}

/// Seeds a hosted zone under a normalized id and name.
fn hosted_zone(st: &mut State, mut z: HostedZone) -> Result<()> {
    if z.id.is_empty() {
        let n = st.ids.next_number("hostedzone");
        z.id = format!("/hostedzone/ZMOCK{n:09}");
    }
    z.id = normalize_zone_id(&z.id);
    if st.route53.zones.contains_key(&z.id) {
        return Err(Error::exists(OP, "hosted-zone", z.id.clone()));
    }
    z.name = fqdn(&z.name);
    z.private = z.private || !z.vpcs.is_empty();
    crate::route53::insert_zone(st, z);
    Ok(())
}

/// Seeds a target group, with an ARN when it has none.
fn target_group(st: &mut State, options: &MockOptions, mut t: TargetGroup) -> Result<()> {
    let partition = options.partition.as_str();
    let account = options.account_id.as_str();
    let region = options.region.as_str();
    if st.elbv2_has_target_group_named(&t.name) {
        return Err(Error::exists(OP, "target-group", t.name.clone()));
    }
    if t.arn.is_empty() {
        let n = st.ids.next_number("elbv2");
        t.arn = format!(
            "arn:{partition}:elasticloadbalancing:{region}:{account}:targetgroup/{}/{n:016x}",
            t.name
        );
    }
    if t.target_type.is_empty() {
        t.target_type = "instance".into();
    }
    st.elbv2.insert_target_group(t);
    Ok(())
}

/// Seeds a role, with an ARN and id when it has none.
fn role(st: &mut State, options: &MockOptions, mut r: Role) -> Result<()> {
    let partition = options.partition.as_str();
    let account = options.account_id.as_str();
    if st.iam.roles.contains_key(&r.name) {
        return Err(Error::exists(OP, "role", r.name.clone()));
    }
    if r.path.is_empty() {
        r.path = "/".into();
    }
    if r.arn.is_empty() || r.id.is_empty() {
        let made = crate::iam::new_role(
            st,
            partition,
            account,
            crate::iam::CreateRole {
                name: r.name.clone(),
                ..Default::default()
            },
            r.path.clone(),
        );
        if r.arn.is_empty() {
            r.arn = made.arn;
        }
        if r.id.is_empty() {
            r.id = made.id;
        }
    }
    st.iam.roles.insert(r.name.clone(), r);
    Ok(())
}

/// Seeds an instance profile of existing roles, with an ARN and id when it has none.
fn instance_profile(st: &mut State, options: &MockOptions, mut p: InstanceProfile) -> Result<()> {
    let partition = options.partition.as_str();
    let account = options.account_id.as_str();
    if st.iam.profiles.contains_key(&p.name) {
        return Err(Error::exists(OP, "instance-profile", p.name.clone()));
    }
    for r in &p.roles {
        if !st.iam.roles.contains_key(r) {
            return Err(Error::not_found(OP, "role", r.clone()));
        }
    }
    if p.path.is_empty() {
        p.path = "/".into();
    }
    if p.arn.is_empty() || p.id.is_empty() {
        let made = crate::iam::new_profile(
            st,
            partition,
            account,
            &p.name,
            p.path.clone(),
            Default::default(),
        );
        if p.arn.is_empty() {
            p.arn = made.arn;
        }
        if p.id.is_empty() {
            p.id = made.id;
        }
    }
    st.iam.profiles.insert(p.name.clone(), p);
    Ok(())
}

impl State {
    fn elbv2_has_target_group_named(&self, name: &str) -> bool {
        let mut ids = std::collections::BTreeSet::new();
        self.elbv2.collect_ids(&mut ids);
        ids.iter()
            .any(|arn| arn.contains(&format!(":targetgroup/{name}/")))
    }
}
