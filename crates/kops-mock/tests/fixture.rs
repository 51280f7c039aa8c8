//! The conformance fixture `mock-cloud.yaml` loads into the mock (skipped when
//! `../shared` is absent).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cloned_ref_to_slice_refs
)]

use std::path::PathBuf;

use kops_mock::fixture::{self, Fixture};
use kops_mock::{Filter, MockAws};

#[path = "../../../support/shared.rs"]
mod shared;

fn fixture_path() -> Option<PathBuf> {
    shared::require("fixture", "conformance/fixtures/mock-cloud.yaml")
}

fn load() -> Option<MockAws> {
    Some(fixture::load_file(fixture_path()?).unwrap())
}

#[test]
fn shared_vpc_subnets_nat_and_eips() {
    let Some(m) = load() else { return };
    assert_eq!(m.options().region, "us-test-1");
    let vpc = &m.describe_vpcs(&["vpc-12345678".into()], &[]).unwrap()[0];
    assert_eq!(vpc.cidr_block, "172.20.0.0/16");
    assert!(
        vpc.tags
            .contains_key("kubernetes.io/cluster/minimal.example.com")
    );
    let subnets = m
        .describe_subnets(&[], &[Filter::new("vpc-id", ["vpc-12345678"])])
        .unwrap();
    let ids: Vec<&str> = subnets.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["subnet-12345678", "subnet-abcdef", "subnet-b2345678"]);
    let nats = m
        .describe_nat_gateways(&[], &[Filter::new("subnet-id", ["subnet-b2345678"])])
        .unwrap();
    assert_eq!(nats[0].id, "nat-b2345678");
    assert_eq!(nats[0].public_ip.as_deref(), Some("2.22.22.22"));
    let eip = &m
        .describe_addresses(&["eipalloc-12345678".into()], &[])
        .unwrap()[0];
    assert_eq!(eip.nat_gateway_id.as_deref(), Some("nat-a2345678"));
    let igw = m
        .describe_internet_gateways(&[], &[Filter::new("attachment.vpc-id", ["vpc-12345678"])])
        .unwrap();
    assert_eq!(igw[0].id, "igw-1");
    assert_eq!(
        m.describe_egress_only_internet_gateways(&[], &[])
            .unwrap()
            .len(),
        1
    );
    let rt = &m
        .describe_route_tables(&["rtb-12345678".into()], &[])
        .unwrap()[0];
    assert_eq!(rt.associations.len(), 2);
    // Fixture ids do not collide with new ones.
    assert_eq!(
        m.create_vpc("10.0.0.0/16", false, Default::default())
            .unwrap()
            .id,
        "vpc-1"
    );
    assert_eq!(
        m.create_internet_gateway(Default::default()).unwrap().id,
        "igw-2"
    );
}

#[test]
fn zones_image_target_groups_iam() {
    let Some(m) = load() else { return };
    let zones = m.list_hosted_zones().unwrap();
    let names: Vec<&str> = zones.iter().map(|z| z.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "example.com.",
            "internal.example.com.",
            "private.example.com."
        ]
    );
    let private = m.get_hosted_zone("Z3AFAKE1ZOMORE").unwrap();
    assert!(private.private);
    assert_eq!(private.vpcs[0].vpc_id, "vpc-12345678");
    // The image as specs name it: owner alias + name.
    let img = m
        .resolve_image("ubuntu/images/hvm-ssd-gp3/ubuntu-resolute-26.04-amd64-server-20220404")
        .unwrap();
    assert_eq!(img.id, "ami-12345678");
    assert_eq!(img.root_device_name, "/dev/xvda");
    let tgs = m
        .describe_target_groups(&[], &["my-external-tg-2".into()], None)
        .unwrap();
    assert_eq!(tgs.len(), 1);
    assert_eq!(
        m.get_instance_profile("kops-custom-node-role")
            .unwrap()
            .roles,
        ["kops-custom-node-role"]
    );
    // Loading is not API traffic: only the five calls above were made.
    assert_eq!(m.total_calls(), 5);
}

#[test]
fn fixture_errors_name_the_problem() {
    let e = Fixture::parse("aws: {region: r, bogus: 1}", "f.yaml").unwrap_err();
    assert!(e.to_string().contains("f.yaml"), "{e}");
    let e = Fixture::parse("gce: {}", "f.yaml").unwrap_err();
    assert!(e.to_string().contains("aws"), "{e}");
    let dangling = "aws:\n  region: r\n  ec2:\n    subnets:\n      - {id: subnet-1, vpcId: vpc-404, availabilityZone: ra, cidrBlock: 10.0.0.0/24}\n";
    let e = fixture::load_str(dangling).unwrap_err();
    assert!(e.to_string().contains("vpc-404"), "{e}");
    let e = fixture::load_file("/nonexistent/mock-cloud.yaml").unwrap_err();
    assert!(
        e.to_string().contains("/nonexistent/mock-cloud.yaml"),
        "{e}"
    );
}
