//! EC2 behaviour of the mock: ids, create/describe/delete, dependencies, tag filters,
//! call counting and fault injection.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cloned_ref_to_slice_refs
)]

use std::collections::BTreeMap;

use kops_mock::ec2::{
    CreateSubnet, CreateVolume, LaunchTemplateData, Route, RuleSpec, RunInstances, TemplateRef,
    VpcCidr,
};
use kops_mock::{Error, FaultKind, FaultPlan, FaultRule, Filter, MockAws, MockOptions, Seed, tags};

fn cluster_tags(cluster: &str, name: &str) -> kops_mock::Tags {
    tags([
        ("Name", name.to_owned()),
        ("KubernetesCluster", cluster.to_owned()),
        (
            &*format!("kubernetes.io/cluster/{cluster}"),
            "owned".to_owned(),
        ),
    ])
}

fn subnet(vpc: &str, zone: &str, cidr: &str) -> CreateSubnet {
    CreateSubnet {
        vpc_id: vpc.into(),
        availability_zone: zone.into(),
        cidr_block: Some(cidr.into()),
        ..CreateSubnet::default()
    }
}

#[test]
fn ids_are_sequential_per_kind_and_skip_seeded_ids() {
    let m = MockAws::new();
    m.seed(kops_mock::ec2::InternetGateway {
        id: "igw-2".into(),
        ..Default::default()
    })
    .unwrap();
    let v1 = m
        .create_vpc("10.0.0.0/16", false, tags::<_, &str, &str>([]))
        .unwrap();
    let v2 = m
        .create_vpc("10.1.0.0/16", false, Default::default())
        .unwrap();
    assert_eq!((v1.id.as_str(), v2.id.as_str()), ("vpc-1", "vpc-2"));
    let s = m
        .create_subnet(subnet("vpc-1", "us-test-1a", "10.0.1.0/24"))
        .unwrap();
    assert_eq!(s.id, "subnet-1");
    let g1 = m.create_internet_gateway(Default::default()).unwrap();
    let g2 = m.create_internet_gateway(Default::default()).unwrap();
    assert_eq!((g1.id.as_str(), g2.id.as_str()), ("igw-1", "igw-3"));
    // Deleted ids are never reused.
    m.delete_internet_gateway("igw-3").unwrap();
    assert_eq!(
        m.create_internet_gateway(Default::default()).unwrap().id,
        "igw-4"
    );
    // Seeding a taken id fails.
    let e = m
        .seed(Seed::InternetGateway(kops_mock::ec2::InternetGateway {
            id: "igw-1".into(),
            ..Default::default()
        }))
        .unwrap_err();
    assert!(matches!(e, Error::AlreadyExists { .. }), "{e}");
}

#[test]
fn vpc_defaults_and_delete_dependencies() {
    let m = MockAws::new();
    let vpc = m
        .create_vpc("10.0.0.0/16", true, Default::default())
        .unwrap();
    assert_eq!(vpc.ipv6_cidr_block_associations.len(), 1);
    // The main route table and default security group exist, as on AWS.
    let rts = m
        .describe_route_tables(&[], &[Filter::new("vpc-id", [vpc.id.clone()])])
        .unwrap();
    assert_eq!(rts.len(), 1);
    assert!(rts[0].associations[0].main);
    let sgs = m
        .describe_security_groups(&[], &[Filter::new("group-name", ["default"])])
        .unwrap();
    assert_eq!(sgs.len(), 1);

    let s = m
        .create_subnet(subnet(&vpc.id, "us-test-1a", "10.0.0.0/24"))
        .unwrap();
    let igw = m.create_internet_gateway(Default::default()).unwrap();
    m.attach_internet_gateway(&igw.id, &vpc.id).unwrap();
    let e = m.delete_vpc(&vpc.id).unwrap_err();
    assert!(matches!(e, Error::Conflict { .. }));
    assert_eq!(e.code(), "DependencyViolation");
    assert!(
        e.to_string().contains(&s.id) && e.to_string().contains(&igw.id),
        "{e}"
    );
    assert!(matches!(
        m.delete_internet_gateway(&igw.id),
        Err(Error::Conflict { .. })
    ));
    m.detach_internet_gateway(&igw.id, &vpc.id).unwrap();
    m.delete_internet_gateway(&igw.id).unwrap();
    m.delete_subnet(&s.id).unwrap();
    m.delete_vpc(&vpc.id).unwrap();
    assert!(m.resource_ids().is_empty(), "{:?}", m.resource_ids());
    let e = m.describe_vpcs(&[vpc.id.clone()], &[]).unwrap_err();
    assert_eq!(e.code(), "InvalidVpcID.NotFound");
}

#[test]
fn subnet_ranges_are_checked() {
    let m = MockAws::new();
    let vpc = m
        .create_vpc("10.0.0.0/16", false, Default::default())
        .unwrap();
    m.create_subnet(subnet(&vpc.id, "us-test-1a", "10.0.0.0/20"))
        .unwrap();
    // Overlap.
    assert!(
        m.create_subnet(subnet(&vpc.id, "us-test-1b", "10.0.8.0/24"))
            .is_err()
    );
    // Outside the VPC until a second block is associated.
    assert!(
        m.create_subnet(subnet(&vpc.id, "us-test-1b", "10.1.0.0/24"))
            .is_err()
    );
    m.associate_vpc_cidr_block(&vpc.id, VpcCidr::Ipv4("10.1.0.0/16".into()))
        .unwrap();
    m.create_subnet(subnet(&vpc.id, "us-test-1b", "10.1.0.0/24"))
        .unwrap();
    // Unknown zone.
    assert!(
        m.create_subnet(subnet(&vpc.id, "eu-west-1a", "10.0.16.0/24"))
            .is_err()
    );
    // IPv6 subnets need a block inside the VPC's.
    let a = m
        .associate_vpc_cidr_block(&vpc.id, VpcCidr::AmazonIpv6)
        .unwrap();
    let v6: ipnet_like::V6 = a.cidr_block.parse().unwrap();
    let mut s = subnet(&vpc.id, "us-test-1c", "10.0.32.0/24");
    s.ipv6_cidr_block = Some(v6.first_64());
    m.create_subnet(s).unwrap();
}

/// A tiny helper instead of a dev-dependency: the first /64 of a /56.
mod ipnet_like {
    pub struct V6(String);
    impl std::str::FromStr for V6 {
        type Err = ();
        fn from_str(s: &str) -> Result<Self, ()> {
            Ok(V6(s.split("::").next().ok_or(())?.to_owned()))
        }
    }
    impl V6 {
        pub fn first_64(&self) -> String {
            format!("{}::/64", self.0)
        }
    }
}

#[test]
fn tag_filters_follow_aws_semantics() {
    let m = MockAws::new();
    let a = m
        .create_vpc("10.0.0.0/16", false, cluster_tags("a.example.com", "a"))
        .unwrap();
    let b = m
        .create_vpc("10.1.0.0/16", false, cluster_tags("b.example.com", "b"))
        .unwrap();
    let c = m
        .create_vpc(
            "10.2.0.0/16",
            false,
            tags([("kubernetes.io/cluster/a.example.com", "shared")]),
        )
        .unwrap();
    let ids = |f: &[Filter]| -> Vec<String> {
        m.describe_vpcs(&[], f)
            .unwrap()
            .into_iter()
            .map(|v| v.id)
            .collect()
    };
    assert_eq!(
        ids(&[Filter::tag("KubernetesCluster", "a.example.com")]),
        [a.id.clone()]
    );
    // Several values: OR.
    assert_eq!(
        ids(&[Filter::new(
            "tag:KubernetesCluster",
            ["a.example.com", "b.example.com"]
        )]),
        [a.id.clone(), b.id.clone()]
    );
    // tag-key: any value.
    assert_eq!(
        ids(&[Filter::tag_key("kubernetes.io/cluster/a.example.com")]),
        [a.id.clone(), c.id.clone()]
    );
    // Several filters: AND.
    assert_eq!(
        ids(&[
            Filter::tag_key("kubernetes.io/cluster/a.example.com"),
            Filter::tag("kubernetes.io/cluster/a.example.com", "shared"),
        ]),
        [c.id.clone()]
    );
    // Wildcards and tag-value.
    assert_eq!(
        ids(&[Filter::new("tag:Name", ["?"])]),
        [a.id.clone(), b.id.clone()]
    );
    assert_eq!(ids(&[Filter::new("tag-value", ["shared"])]), [c.id.clone()]);
    // Filters never return another cluster's objects.
    assert!(!ids(&[Filter::tag("KubernetesCluster", "b.example.com")]).contains(&a.id));
    // Unknown filter names are rejected.
    let e = m
        .describe_vpcs(&[], &[Filter::new("colour", ["blue"])])
        .unwrap_err();
    assert!(matches!(e, Error::Invalid { .. }));
    // Tags can be changed.
    m.create_tags(&[c.id.clone()], &tags([("Name", "c")]))
        .unwrap();
    m.delete_tags(
        &[c.id.clone()],
        &[("kubernetes.io/cluster/a.example.com".into(), None)],
    )
    .unwrap();
    assert_eq!(
        ids(&[Filter::tag_key("kubernetes.io/cluster/a.example.com")]),
        [a.id.clone()]
    );
    let described = m
        .describe_tags(&[Filter::new("resource-id", [c.id.clone()])])
        .unwrap();
    assert_eq!(described.len(), 1);
    assert_eq!(described[0].key, "Name");
}

#[test]
fn routes_gateways_addresses_and_nat() {
    let m = MockAws::new();
    let vpc = m
        .create_vpc("10.0.0.0/16", true, Default::default())
        .unwrap();
    let s = m
        .create_subnet(subnet(&vpc.id, "us-test-1a", "10.0.0.0/24"))
        .unwrap();
    let igw = m.create_internet_gateway(Default::default()).unwrap();
    m.attach_internet_gateway(&igw.id, &vpc.id).unwrap();
    let eigw = m
        .create_egress_only_internet_gateway(&vpc.id, Default::default())
        .unwrap();
    let rt = m.create_route_table(&vpc.id, Default::default()).unwrap();
    // Local routes for both blocks.
    assert_eq!(rt.routes.len(), 2);
    m.create_route(
        &rt.id,
        Route {
            destination_cidr_block: Some("0.0.0.0/0".into()),
            gateway_id: Some(igw.id.clone()),
            ..Route::default()
        },
    )
    .unwrap();
    m.create_route(
        &rt.id,
        Route {
            destination_ipv6_cidr_block: Some("::/0".into()),
            egress_only_internet_gateway_id: Some(eigw.id.clone()),
            ..Route::default()
        },
    )
    .unwrap();
    // Same destination twice fails; a target that does not exist fails.
    let dup = Route {
        destination_cidr_block: Some("0.0.0.0/0".into()),
        gateway_id: Some(igw.id.clone()),
        ..Route::default()
    };
    assert!(matches!(
        m.create_route(&rt.id, dup),
        Err(Error::AlreadyExists { .. })
    ));
    let bad = Route {
        destination_cidr_block: Some("10.9.0.0/16".into()),
        nat_gateway_id: Some("nat-404".into()),
        ..Route::default()
    };
    assert!(m.create_route(&rt.id, bad).unwrap_err().is_not_found());
    let assoc = m.associate_route_table(&rt.id, &s.id).unwrap();
    assert!(m.associate_route_table(&rt.id, &s.id).is_err());
    let found = m
        .describe_route_tables(&[], &[Filter::new("association.subnet-id", [s.id.clone()])])
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].id, rt.id);
    assert!(matches!(
        m.delete_route_table(&rt.id),
        Err(Error::Conflict { .. })
    ));

    let eip = m.allocate_address(Default::default()).unwrap();
    let nat = m
        .create_nat_gateway(&s.id, Some(&eip.allocation_id), Default::default())
        .unwrap();
    assert_eq!(nat.public_ip.as_deref(), Some(eip.public_ip.as_str()));
    assert_eq!(nat.vpc_id, vpc.id);
    assert!(matches!(
        m.release_address(&eip.allocation_id),
        Err(Error::Conflict { .. })
    ));
    assert!(matches!(
        m.delete_subnet(&s.id),
        Err(Error::Conflict { .. })
    ));
    m.replace_route(
        &rt.id,
        Route {
            destination_cidr_block: Some("0.0.0.0/0".into()),
            nat_gateway_id: Some(nat.id.clone()),
            ..Route::default()
        },
    )
    .unwrap();
    let rt_now = &m.describe_route_tables(&[rt.id.clone()], &[]).unwrap()[0];
    assert!(
        rt_now
            .routes
            .iter()
            .any(|r| r.nat_gateway_id.as_deref() == Some(nat.id.as_str()))
    );
    m.delete_route(&rt.id, "0.0.0.0/0").unwrap();
    m.delete_nat_gateway(&nat.id).unwrap();
    m.release_address(&eip.allocation_id).unwrap();
    m.disassociate_route_table(&assoc).unwrap();
    m.delete_route_table(&rt.id).unwrap();
    m.delete_egress_only_internet_gateway(&eigw.id).unwrap();
    m.detach_internet_gateway(&igw.id, &vpc.id).unwrap();
    m.delete_internet_gateway(&igw.id).unwrap();
    m.delete_subnet(&s.id).unwrap();
    m.delete_vpc(&vpc.id).unwrap();
    assert!(m.resource_ids().is_empty(), "{:?}", m.resource_ids());
}

#[test]
fn dhcp_options() {
    let m = MockAws::new();
    let vpc = m
        .create_vpc("10.0.0.0/16", false, Default::default())
        .unwrap();
    let conf = BTreeMap::from([
        (
            "domain-name".to_owned(),
            vec!["us-test-1.compute.internal".to_owned()],
        ),
        (
            "domain-name-servers".to_owned(),
            vec!["AmazonProvidedDNS".to_owned()],
        ),
    ]);
    let d = m
        .create_dhcp_options(conf.clone(), tags([("Name", "x")]))
        .unwrap();
    m.associate_dhcp_options(&d.id, &vpc.id).unwrap();
    assert!(matches!(
        m.delete_dhcp_options(&d.id),
        Err(Error::Conflict { .. })
    ));
    let got = m
        .describe_dhcp_options(&[], &[Filter::new("key", ["domain-name"])])
        .unwrap();
    assert_eq!(got[0].configurations, conf);
    m.associate_dhcp_options("default", &vpc.id).unwrap();
    m.delete_dhcp_options(&d.id).unwrap();
}

#[test]
fn security_groups_and_rules() {
    let m = MockAws::new();
    let vpc = m
        .create_vpc("10.0.0.0/16", false, Default::default())
        .unwrap();
    let a = m
        .create_security_group("masters.x", "masters", &vpc.id, Default::default())
        .unwrap();
    let b = m
        .create_security_group("nodes.x", "nodes", &vpc.id, Default::default())
        .unwrap();
    assert!(
        m.create_security_group("nodes.x", "again", &vpc.id, Default::default())
            .is_err()
    );
    // New groups allow all egress, as on AWS.
    let egress = m
        .describe_security_group_rules(&[], &[Filter::new("group-id", [a.id.clone()])])
        .unwrap();
    assert_eq!(egress.len(), 1);
    assert!(egress[0].is_egress && egress[0].spec.ip_protocol == "-1");
    let ssh = RuleSpec {
        ip_protocol: "tcp".into(),
        from_port: Some(22),
        to_port: Some(22),
        cidr_ipv4: Some("0.0.0.0/0".into()),
        ..RuleSpec::default()
    };
    let from_nodes = RuleSpec {
        ip_protocol: "-1".into(),
        referenced_group_id: Some(b.id.clone()),
        ..RuleSpec::default()
    };
    let made = m
        .authorize_security_group_ingress(&a.id, vec![ssh.clone(), from_nodes], Default::default())
        .unwrap();
    assert_eq!(made.len(), 2);
    let e = m
        .authorize_security_group_ingress(&a.id, vec![ssh], Default::default())
        .unwrap_err();
    assert_eq!(e.code(), "InvalidPermission.Duplicate");
    // The all-egress rule again is a duplicate too ("all" is -1, ports are ignored).
    let all = RuleSpec {
        ip_protocol: "all".into(),
        from_port: Some(0),
        to_port: Some(0),
        cidr_ipv4: Some("0.0.0.0/0".into()),
        ..RuleSpec::default()
    };
    assert!(
        m.authorize_security_group_egress(&a.id, vec![all], Default::default())
            .is_err()
    );
    // b is referenced by a's rule: it cannot go first.
    assert!(matches!(
        m.delete_security_group(&b.id),
        Err(Error::Conflict { .. })
    ));
    m.revoke_security_group_ingress(&a.id, &[made[1].id.clone()])
        .unwrap();
    m.delete_security_group(&b.id).unwrap();
    m.delete_security_group(&a.id).unwrap();
    let left = m.describe_security_group_rules(&[], &[]).unwrap();
    assert!(
        left.iter().all(|r| r.group_id != a.id),
        "rules go with their group"
    );
}

#[test]
fn volumes_keys_images() {
    let m = MockAws::new();
    let v = m
        .create_volume(CreateVolume {
            availability_zone: "us-test-1a".into(),
            size: 20,
            volume_type: "gp3".into(),
            encrypted: true,
            tags: tags([("k8s.io/etcd/main", "a/a")]),
            ..CreateVolume::default()
        })
        .unwrap();
    assert_eq!(v.id, "vol-1");
    assert!(m.modify_volume(&v.id, Some(10), None, None, None).is_err());
    m.modify_volume(&v.id, Some(30), None, Some(3000), None)
        .unwrap();
    let got = m
        .describe_volumes(&[], &[Filter::tag_key("k8s.io/etcd/main")])
        .unwrap();
    assert_eq!((got[0].size, got[0].iops), (30, Some(3000)));
    m.delete_volume(&v.id).unwrap();
    assert!(m.delete_volume(&v.id).unwrap_err().is_not_found());

    let k = m
        .import_key_pair("kubernetes.x", "ssh-rsa AAAA test", Default::default())
        .unwrap();
    assert_eq!(k.fingerprint.split(':').count(), 16);
    assert!(
        m.import_key_pair("kubernetes.x", "ssh-rsa BBBB", Default::default())
            .is_err()
    );
    assert_eq!(
        m.describe_key_pairs(&["kubernetes.x".into()], &[])
            .unwrap()
            .len(),
        1
    );
    m.delete_key_pair("kubernetes.x").unwrap();
    assert!(m.describe_key_pairs(&["kubernetes.x".into()], &[]).is_err());

    for (id, date) in [("ami-1", "2022-01-01"), ("ami-2", "2023-01-01")] {
        m.seed(kops_mock::ec2::Image {
            id: id.into(),
            name: "images/ubuntu-x".into(),
            owner_id: "099720109477".into(),
            creation_date: date.into(),
            ..Default::default()
        })
        .unwrap();
    }
    assert_eq!(
        m.resolve_image("ubuntu/images/ubuntu-x").unwrap().id,
        "ami-2"
    );
    assert_eq!(
        m.resolve_image("099720109477/images/ubuntu-x").unwrap().id,
        "ami-2"
    );
    assert_eq!(m.resolve_image("ami-1").unwrap().id, "ami-1");
    assert!(
        m.resolve_image("amazon/images/ubuntu-x")
            .unwrap_err()
            .is_not_found()
    );
}

#[test]
fn launch_templates_versions_and_instances() {
    let m = MockAws::new();
    m.seed(kops_mock::ec2::Image {
        id: "ami-1".into(),
        name: "img".into(),
        owner_id: "1".into(),
        ..Default::default()
    })
    .unwrap();
    let vpc = m
        .create_vpc("10.0.0.0/16", false, Default::default())
        .unwrap();
    let s = m
        .create_subnet(subnet(&vpc.id, "us-test-1a", "10.0.0.0/24"))
        .unwrap();
    let data = LaunchTemplateData {
        image_id: Some("ami-1".into()),
        instance_type: Some("t3.medium".into()),
        user_data: Some("dXNlcg==".into()),
        ..LaunchTemplateData::default()
    };
    let lt = m
        .create_launch_template("nodes.x", data, Default::default())
        .unwrap();
    assert_eq!((lt.id.as_str(), lt.latest_version_number), ("lt-1", 1));
    assert!(
        m.create_launch_template("nodes.x", Default::default(), Default::default())
            .is_err()
    );
    // A version from a source version keeps the fields it does not set (AWS semantics).
    let v2 = m
        .create_launch_template_version(
            &TemplateRef::Name("nodes.x".into()),
            LaunchTemplateData {
                instance_type: Some("m5.large".into()),
                ..Default::default()
            },
            Some("$Latest"),
            None,
        )
        .unwrap();
    assert_eq!(v2.version_number, 2);
    assert_eq!(v2.data.image_id.as_deref(), Some("ami-1"));
    assert_eq!(v2.data.instance_type.as_deref(), Some("m5.large"));
    // Without a source, only what is sent.
    let v3 = m
        .create_launch_template_version(
            &TemplateRef::Id(lt.id.clone()),
            LaunchTemplateData {
                instance_type: Some("m5.xlarge".into()),
                ..Default::default()
            },
            None,
            None,
        )
        .unwrap();
    assert_eq!(v3.data.image_id, None);
    let vs = m
        .describe_launch_template_versions(
            &TemplateRef::Id(lt.id.clone()),
            &["$Default".into(), "$Latest".into()],
        )
        .unwrap();
    assert_eq!((vs[0].version_number, vs[1].version_number), (1, 3));
    m.modify_launch_template(&TemplateRef::Id(lt.id.clone()), "2")
        .unwrap();
    let t = &m
        .describe_launch_templates(&[], &["nodes.x".into()], &[])
        .unwrap()[0];
    assert_eq!((t.default_version_number, t.latest_version_number), (2, 3));

    let inst = m
        .run_instances(RunInstances {
            launch_template: Some((TemplateRef::Id(lt.id.clone()), "$Default".into())),
            subnet_id: s.id.clone(),
            count: 2,
            tags: tags([("Name", "i")]),
            ..RunInstances::default()
        })
        .unwrap();
    assert_eq!(inst.len(), 2);
    assert_eq!(inst[0].instance_type, "m5.large");
    assert!(matches!(
        m.delete_subnet(&s.id),
        Err(Error::Conflict { .. })
    ));
    m.terminate_instances(&[inst[0].id.clone(), inst[1].id.clone()])
        .unwrap();
    let running = m
        .describe_instances(&[], &[Filter::new("instance-state-name", ["running"])])
        .unwrap();
    assert!(running.is_empty());
    m.delete_subnet(&s.id).unwrap();
    m.delete_launch_template(&TemplateRef::Name("nodes.x".into()))
        .unwrap();
}

#[test]
fn calls_are_counted_per_operation() {
    let m = MockAws::new();
    m.create_vpc("10.0.0.0/16", false, Default::default())
        .unwrap();
    m.describe_vpcs(&[], &[]).unwrap();
    m.describe_vpcs(&[], &[]).unwrap();
    let _ = m.describe_subnets(&["subnet-404".into()], &[]);
    let calls = m.calls();
    assert_eq!(calls["ec2:CreateVpc"], 1);
    assert_eq!(calls["ec2:DescribeVpcs"], 2);
    assert_eq!(calls["ec2:DescribeSubnets"], 1, "failed calls count too");
    assert_eq!(m.total_calls(), 4);
    // Seeding is not an API call.
    m.seed(Seed::Bucket("b-seed".into())).unwrap();
    assert_eq!(m.total_calls(), 4);
    m.reset_calls();
    assert!(m.calls().is_empty());
}

#[test]
fn faults_are_injected_deterministically() {
    let m = MockAws::new();
    m.set_faults(FaultPlan::new().with_rule(FaultRule::next(
        "ec2:CreateVpc",
        2,
        FaultKind::Throttle,
    )));
    for _ in 0..2 {
        let e = m
            .create_vpc("10.0.0.0/16", false, Default::default())
            .unwrap_err();
        assert!(e.is_retryable());
        assert_eq!(e.code(), "RequestLimitExceeded");
    }
    // Failed calls changed nothing and still counted.
    assert!(m.describe_vpcs(&[], &[]).unwrap().is_empty());
    assert_eq!(
        m.create_vpc("10.0.0.0/16", false, Default::default())
            .unwrap()
            .id,
        "vpc-1"
    );
    assert_eq!(m.call_count("ec2:CreateVpc"), 3);
    assert_eq!(m.injected_faults(), 2);

    let pattern = |seed| {
        let m = MockAws::with_options(MockOptions::default());
        m.set_faults(FaultPlan::throttle_fraction(0.3, seed));
        (0..200)
            .map(|_| m.describe_vpcs(&[], &[]).is_err())
            .collect::<Vec<_>>()
    };
    let a = pattern(42);
    assert_eq!(a, pattern(42));
    let failed = a.iter().filter(|x| **x).count();
    assert!((35..=85).contains(&failed), "{failed} of 200 throttled");
}

#[test]
fn ports_are_kept_only_for_port_protocols() {
    let m = MockAws::new();
    let vpc = m
        .create_vpc("10.0.0.0/16", false, Default::default())
        .unwrap();
    let g = m
        .create_security_group("g", "g", &vpc.id, Default::default())
        .unwrap();
    let ipip = |from, to| RuleSpec {
        ip_protocol: "4".into(),
        from_port: from,
        to_port: to,
        referenced_group_id: Some(g.id.clone()),
        ..RuleSpec::default()
    };
    let made = m
        .authorize_security_group_ingress(&g.id, vec![ipip(Some(0), Some(0))], Default::default())
        .unwrap();
    assert_eq!((made[0].spec.from_port, made[0].spec.to_port), (None, None));
    let e = m
        .authorize_security_group_ingress(&g.id, vec![ipip(None, None)], Default::default())
        .unwrap_err();
    assert_eq!(e.code(), "InvalidPermission.Duplicate");
}
