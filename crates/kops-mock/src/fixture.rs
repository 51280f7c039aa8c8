//! Loader for the conformance fixture `mock-cloud.yaml`: the resources that exist before
//! a case is rendered (a shared VPC with subnets, NAT gateways and elastic IPs, hosted
//! zones, an image, target groups, an IAM role and instance profile).
//!
//! The loader takes the YAML text ([`Fixture::parse`]) or a path the caller gives
//! ([`Fixture::from_file`]); the crate never looks for the file itself. Only the `aws`
//! section is read; other top-level sections (`gce`) are ignored.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::ec2::{
    Address, EgressOnlyInternetGateway, Image, InternetGateway, NatGateway, RouteTable,
    RouteTableAssociation, Subnet, Vpc,
};
use crate::elbv2::TargetGroup;
use crate::error::{Error, Result};
use crate::iam::{InstanceProfile, Role};
use crate::route53::{HostedZone, ZoneVpc};
use crate::{MockAws, MockOptions, Seed};
use kops_cloud_aws::cloud::MachineRole;

/// A parsed fixture: the region, its zones and the objects to seed, in dependency order.
#[derive(Debug, Clone, PartialEq)]
pub struct Fixture {
    /// Region.
    pub region: String,
    /// Zones.
    pub zones: Vec<String>,
    /// Objects, in an order in which they can be seeded.
    pub seeds: Vec<Seed>,
    /// Fixed answers to `default_instance_type` by role (`defaultInstanceTypes`: keys
    /// `ControlPlane` (or `Master`), `Node`, `Bastion`), as kOps' test mock answers it.
    pub default_instance_types: BTreeMap<MachineRole, String>,
}

#[derive(Deserialize)]
struct File {
    aws: Option<Aws>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Aws {
    region: String,
    #[serde(default)]
    default_instance_types: BTreeMap<String, String>,
    #[serde(default)]
    zones: Vec<String>,
    #[serde(default)]
    route53: R53,
    #[serde(default)]
    ec2: Ec2,
    #[serde(default)]
    elbv2: Elbv2,
    #[serde(default)]
    iam: Iam,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct R53 {
    #[serde(default)]
    hosted_zones: Vec<FZone>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FZone {
    id: String,
    name: String,
    #[serde(default)]
    private: bool,
    #[serde(default)]
    vpcs: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Ec2 {
    #[serde(default)]
    images: Vec<FImage>,
    #[serde(default)]
    vpcs: Vec<FVpc>,
    #[serde(default)]
    internet_gateways: Vec<FIgw>,
    #[serde(default)]
    egress_only_internet_gateways: Vec<FEigw>,
    #[serde(default)]
    route_tables: Vec<FRtb>,
    #[serde(default)]
    subnets: Vec<FSubnet>,
    #[serde(default)]
    elastic_ips: Vec<FEip>,
    #[serde(default)]
    nat_gateways: Vec<FNat>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FImage {
    image_id: String,
    name: String,
    owner_id: String,
    #[serde(default)]
    owner_alias: Option<String>,
    #[serde(default)]
    root_device_name: String,
    #[serde(default)]
    architecture: String,
    #[serde(default)]
    creation_date: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FVpc {
    id: String,
    cidr_block: String,
    #[serde(default)]
    tags: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FIgw {
    #[serde(default)]
    id: String,
    #[serde(default)]
    attached_to: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FEigw {
    #[serde(default)]
    id: String,
    vpc_id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FRtb {
    #[serde(default)]
    id: String,
    vpc_id: String,
    #[serde(default)]
    associations: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FSubnet {
    id: String,
    vpc_id: String,
    availability_zone: String,
    cidr_block: String,
    #[serde(default)]
    tags: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FEip {
    allocation_id: String,
    public_ip: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FNat {
    id: String,
    subnet_id: String,
    #[serde(default)]
    allocation_id: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Elbv2 {
    #[serde(default)]
    target_groups: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Iam {
    #[serde(default)]
    roles: Vec<String>,
    #[serde(default)]
    instance_profiles: Vec<FProfile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FProfile {
    name: String,
    #[serde(default)]
    roles: Vec<String>,
}

impl Fixture {
    /// Parses fixture YAML. `source` names it in errors (a file name).
    pub fn parse(text: &str, source: &str) -> Result<Fixture> {
        let file: File = serde_saphyr::from_str(text).map_err(|e| Error::Fixture {
            location: source.to_owned(),
            message: e.to_string(),
        })?;
        let aws = file.aws.ok_or_else(|| Error::Fixture {
            location: format!("{source}: aws"),
            message: "the fixture has no aws section".into(),
        })?;
        let mut default_instance_types = BTreeMap::new();
        for (role, instance_type) in &aws.default_instance_types {
            let r = match role.as_str() {
                "ControlPlane" | "Master" => MachineRole::ControlPlane,
                "Node" => MachineRole::Node,
                "Bastion" => MachineRole::Bastion,
                other => {
                    return Err(Error::Fixture {
                        location: format!("{source}: aws.defaultInstanceTypes.{other}"),
                        message: "unknown role (ControlPlane, Node or Bastion)".into(),
                    });
                }
            };
            default_instance_types.insert(r, instance_type.clone());
        }
        let mut fixture = Fixture::from_aws(aws);
        fixture.default_instance_types = default_instance_types;
        Ok(fixture)
    }

    /// Reads and parses a fixture file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Fixture> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| Error::FixtureIo {
            path: path.to_owned(),
            source,
        })?;
        Fixture::parse(&text, &path.display().to_string())
    }

    /// Mock options for the fixture's region and zones.
    pub fn options(&self) -> MockOptions {
        MockOptions::default()
            .with_region(self.region.clone())
            .with_zones(self.zones.clone())
    }

    /// A new mock cloud with the fixture's options, seeded with its objects.
    pub fn build(&self) -> Result<MockAws> {
        let cloud = MockAws::with_options(self.options());
        self.apply(&cloud)?;
        Ok(cloud)
    }

    /// Seeds an existing cloud with the fixture's objects.
    pub fn apply(&self, cloud: &MockAws) -> Result<()> {
        for (i, s) in self.seeds.iter().enumerate() {
            cloud.seed(s.clone()).map_err(|e| Error::Fixture {
                location: format!("aws object #{i}"),
                message: e.to_string(),
            })?;
        }
        for (role, instance_type) in &self.default_instance_types {
            cloud.set_default_instance_type(*role, instance_type.clone());
        }
        Ok(())
    }

    fn from_aws(aws: Aws) -> Fixture {
        let mut seeds = Vec::new();
        for v in aws.ec2.vpcs {
            seeds.push(Seed::Vpc(Vpc {
                id: v.id,
                cidr_block: v.cidr_block,
                enable_dns_support: true,
                enable_dns_hostnames: true,
                tags: v.tags,
                ..Vpc::default()
            }));
        }
        for s in aws.ec2.subnets {
            seeds.push(Seed::Subnet(Subnet {
                id: s.id,
                vpc_id: s.vpc_id,
                availability_zone: s.availability_zone,
                cidr_block: Some(s.cidr_block),
                tags: s.tags,
                ..Subnet::default()
            }));
        }
        for g in aws.ec2.internet_gateways {
            seeds.push(Seed::InternetGateway(InternetGateway {
                id: g.id,
                attached_vpc_id: g.attached_to,
                tags: Default::default(),
            }));
        }
        for g in aws.ec2.egress_only_internet_gateways {
            seeds.push(Seed::EgressOnlyInternetGateway(EgressOnlyInternetGateway {
                id: g.id,
                vpc_id: g.vpc_id,
                tags: Default::default(),
            }));
        }
        for r in aws.ec2.route_tables {
            seeds.push(Seed::RouteTable(RouteTable {
                id: r.id,
                vpc_id: r.vpc_id,
                routes: Vec::new(),
                associations: r
                    .associations
                    .into_iter()
                    .map(|s| RouteTableAssociation {
                        id: String::new(),
                        subnet_id: Some(s),
                        main: false,
                    })
                    .collect(),
                tags: Default::default(),
            }));
        }
        for a in aws.ec2.elastic_ips {
            seeds.push(Seed::Address(Address {
                allocation_id: a.allocation_id,
                public_ip: a.public_ip,
                domain: "vpc".into(),
                nat_gateway_id: None,
                tags: Default::default(),
            }));
        }
        for n in aws.ec2.nat_gateways {
            seeds.push(Seed::NatGateway(NatGateway {
                id: n.id,
                subnet_id: n.subnet_id,
                allocation_id: n.allocation_id,
                ..NatGateway::default()
            }));
        }
        for i in aws.ec2.images {
            seeds.push(Seed::Image(Image {
                id: i.image_id,
                name: i.name,
                owner_id: i.owner_id,
                owner_alias: i.owner_alias,
                architecture: i.architecture,
                root_device_name: i.root_device_name,
                creation_date: i.creation_date,
                ..Image::default()
            }));
        }
        let region = aws.region.clone();
        for z in aws.route53.hosted_zones {
            seeds.push(Seed::HostedZone(HostedZone {
                id: z.id,
                name: z.name,
                private: z.private,
                vpcs: z
                    .vpcs
                    .into_iter()
                    .map(|v| ZoneVpc {
                        vpc_id: v,
                        region: region.clone(),
                    })
                    .collect(),
                comment: None,
                tags: Default::default(),
            }));
        }
        for t in aws.elbv2.target_groups {
            seeds.push(Seed::TargetGroup(TargetGroup {
                name: t,
                protocol: "TCP".into(),
                port: 443,
                ..TargetGroup::default()
            }));
        }
        for r in aws.iam.roles {
            seeds.push(Seed::Role(Role {
                name: r,
                assume_role_policy_document: String::new(),
                ..Role::default()
            }));
        }
        for p in aws.iam.instance_profiles {
            seeds.push(Seed::InstanceProfile(InstanceProfile {
                name: p.name,
                roles: p.roles,
                ..InstanceProfile::default()
            }));
        }
        Fixture {
            region: aws.region,
            zones: aws.zones,
            seeds,
            default_instance_types: BTreeMap::new(),
        }
    }
}

/// Parses fixture YAML and builds a seeded mock cloud.
pub fn load_str(text: &str) -> Result<MockAws> {
    Fixture::parse(text, "mock-cloud.yaml")?.build()
}

/// Reads a fixture file and builds a seeded mock cloud.
pub fn load_file(path: impl AsRef<Path>) -> Result<MockAws> {
    Fixture::from_file(path)?.build()
}
