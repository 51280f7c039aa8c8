//! Autoscaling, ELBv2, IAM, Route53, SQS, EventBridge and S3 behaviour of the mock.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cloned_ref_to_slice_refs
)]

use std::collections::BTreeMap;

use kops_mock::asg::{AutoScalingGroupSpec, LaunchTemplateSpec, LifecycleHook, WarmPool};
use kops_mock::ec2::{CreateSubnet, LaunchTemplateData};
use kops_mock::elbv2::{
    Action, CreateLoadBalancer, CreateTargetGroup, ListenerSpec, SubnetMapping,
};
use kops_mock::events::{PutRule, Target};
use kops_mock::iam::CreateRole;
use kops_mock::route53::{Change, ChangeAction, RecordSet, ZoneVpc};
use kops_mock::s3::PutOptions;
use kops_mock::{Error, Filter, MockAws, tags};

/// A VPC with one subnet per zone and an image; returns (vpc, subnets).
fn network(m: &MockAws) -> (String, Vec<String>) {
    m.seed(kops_mock::ec2::Image {
        id: "ami-1".into(),
        name: "img".into(),
        owner_id: "1".into(),
        ..Default::default()
    })
    .unwrap();
    let vpc = m
        .create_vpc("10.0.0.0/16", false, Default::default())
        .unwrap()
        .id;
    let subnets = ["a", "b"]
        .iter()
        .enumerate()
        .map(|(i, z)| {
            m.create_subnet(CreateSubnet {
                vpc_id: vpc.clone(),
                availability_zone: format!("us-test-1{z}"),
                cidr_block: Some(format!("10.0.{i}.0/24")),
                ..Default::default()
            })
            .unwrap()
            .id
        })
        .collect();
    (vpc, subnets)
}

#[test]
fn autoscaling_groups_tags_warm_pools_hooks() {
    let m = MockAws::new();
    let (_, subnets) = network(&m);
    let lt = m
        .create_launch_template(
            "nodes.x",
            LaunchTemplateData {
                image_id: Some("ami-1".into()),
                instance_type: Some("t3.medium".into()),
                ..Default::default()
            },
            Default::default(),
        )
        .unwrap();
    let spec = AutoScalingGroupSpec {
        name: "nodes.x".into(),
        launch_template: Some(LaunchTemplateSpec {
            launch_template_id: Some(lt.id.clone()),
            version: Some("$Latest".into()),
            ..Default::default()
        }),
        min_size: 2,
        max_size: 4,
        subnets: subnets.clone(),
        ..Default::default()
    };
    let tags_in = BTreeMap::from([
        ("KubernetesCluster".to_owned(), ("x".to_owned(), true)),
        ("k8s.io/role/node".to_owned(), ("1".to_owned(), false)),
    ]);
    let g = m
        .create_auto_scaling_group(spec.clone(), tags_in.clone())
        .unwrap();
    // Launched to min size, spread over subnets, with propagated tags.
    assert_eq!(g.instances.len(), 2);
    let inst = m.describe_instances(&g.instances, &[]).unwrap();
    assert_ne!(inst[0].subnet_id, inst[1].subnet_id);
    assert_eq!(
        inst[0].tags.get("KubernetesCluster").map(String::as_str),
        Some("x")
    );
    assert!(!inst[0].tags.contains_key("k8s.io/role/node"));
    assert!(m.create_auto_scaling_group(spec.clone(), tags_in).is_err());

    // Tag filters on groups, and DescribeTags.
    let by_tag = m
        .describe_auto_scaling_groups(&[], &[Filter::tag("KubernetesCluster", "x")])
        .unwrap();
    assert_eq!(by_tag.len(), 1);
    assert!(
        m.describe_auto_scaling_groups(&[], &[Filter::tag("KubernetesCluster", "y")])
            .unwrap()
            .is_empty()
    );
    m.create_or_update_asg_tags(
        "nodes.x",
        BTreeMap::from([("extra".to_owned(), ("1".to_owned(), true))]),
    )
    .unwrap();
    m.delete_asg_tags("nodes.x", &["k8s.io/role/node".into()])
        .unwrap();
    let t = m
        .describe_asg_tags(&[Filter::new("auto-scaling-group", ["nodes.x"])])
        .unwrap();
    assert_eq!(
        t.iter().map(|t| t.key.as_str()).collect::<Vec<_>>(),
        ["KubernetesCluster", "extra"]
    );

    // Scale in.
    let mut smaller = spec.clone();
    smaller.min_size = 1;
    smaller.desired_capacity = Some(1);
    let g = m.update_auto_scaling_group(smaller).unwrap();
    assert_eq!(g.instances.len(), 1);
    let mut bad = spec.clone();
    bad.min_size = 9;
    assert!(matches!(
        m.update_auto_scaling_group(bad),
        Err(Error::Invalid { .. })
    ));

    m.put_warm_pool(
        "nodes.x",
        WarmPool {
            min_size: Some(1),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        m.describe_warm_pool("nodes.x").unwrap().unwrap().min_size,
        Some(1)
    );
    m.put_lifecycle_hook(LifecycleHook {
        group_name: "nodes.x".into(),
        name: "kops-warmpool".into(),
        transition: "autoscaling:EC2_INSTANCE_LAUNCHING".into(),
        default_result: Some("ABANDON".into()),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(m.describe_lifecycle_hooks("nodes.x", &[]).unwrap().len(), 1);
    // Deleting with instances needs force; hooks and pool go with the group.
    assert!(matches!(
        m.delete_auto_scaling_group("nodes.x", false),
        Err(Error::Conflict { .. })
    ));
    m.delete_auto_scaling_group("nodes.x", true).unwrap();
    assert!(
        m.describe_auto_scaling_groups(&["nodes.x".into()], &[])
            .unwrap()
            .is_empty()
    );
    assert!(m.describe_lifecycle_hooks("nodes.x", &[]).is_err());
    let running = m
        .describe_instances(&[], &[Filter::new("instance-state-name", ["running"])])
        .unwrap();
    assert!(running.is_empty());
}

#[test]
fn load_balancers_target_groups_listeners() {
    let m = MockAws::new();
    let (vpc, subnets) = network(&m);
    let sg = m
        .create_security_group("api-elb.x", "api", &vpc, Default::default())
        .unwrap();
    let lb = m
        .create_load_balancer(CreateLoadBalancer {
            name: "api-x-abcdef".into(),
            subnet_mappings: subnets
                .iter()
                .map(|s| SubnetMapping {
                    subnet_id: s.clone(),
                    ..Default::default()
                })
                .collect(),
            security_groups: vec![sg.id.clone()],
            tags: tags([("KubernetesCluster", "x")]),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        (lb.load_balancer_type.as_str(), lb.scheme.as_str()),
        ("network", "internet-facing")
    );
    assert!(lb.arn.contains(":loadbalancer/net/api-x-abcdef/"));
    assert!(
        m.create_load_balancer(CreateLoadBalancer {
            name: "this-name-is-far-too-long-for-an-nlb".into(),
            ..Default::default()
        })
        .is_err()
    );
    let tg = m
        .create_target_group(CreateTargetGroup {
            name: "tcp-x-abcdef".into(),
            protocol: "TCP".into(),
            port: 443,
            vpc_id: vpc.clone(),
            ..Default::default()
        })
        .unwrap();
    let l = m
        .create_listener(
            &lb.arn,
            ListenerSpec {
                port: 443,
                protocol: "TCP".into(),
                default_actions: vec![Action {
                    action_type: "forward".into(),
                    target_group_arn: Some(tg.arn.clone()),
                }],
                ..Default::default()
            },
            Default::default(),
        )
        .unwrap();
    let dup = ListenerSpec {
        port: 443,
        protocol: "TCP".into(),
        default_actions: vec![Action {
            action_type: "forward".into(),
            target_group_arn: Some(tg.arn.clone()),
        }],
        ..Default::default()
    };
    assert!(m.create_listener(&lb.arn, dup, Default::default()).is_err());
    let tgs = m.describe_target_groups(&[], &[], Some(&lb.arn)).unwrap();
    assert_eq!(tgs[0].load_balancer_arns, [lb.arn.clone()]);
    assert!(matches!(
        m.delete_target_group(&tg.arn),
        Err(Error::Conflict { .. })
    ));
    assert!(matches!(
        m.delete_subnet(&subnets[0]),
        Err(Error::Conflict { .. })
    ));
    assert!(matches!(
        m.delete_security_group(&sg.id),
        Err(Error::Conflict { .. })
    ));
    m.add_elbv2_tags(&[lb.arn.clone(), tg.arn.clone()], &tags([("Name", "api")]))
        .unwrap();
    m.remove_elbv2_tags(&[lb.arn.clone()], &["KubernetesCluster".into()])
        .unwrap();
    let t = m
        .describe_elbv2_tags(&[lb.arn.clone(), tg.arn.clone()])
        .unwrap();
    assert_eq!(t[&lb.arn], tags([("Name", "api")]));
    assert_eq!(
        m.describe_listeners(Some(&lb.arn), &[]).unwrap()[0].arn,
        l.arn
    );
    m.delete_load_balancer(&lb.arn).unwrap();
    assert!(
        m.describe_listeners(None, &[l.arn.clone()]).is_err(),
        "listeners go with the LB"
    );
    m.delete_target_group(&tg.arn).unwrap();
    assert!(
        m.describe_load_balancers(&[lb.arn], &[])
            .unwrap_err()
            .is_not_found()
    );
}

#[test]
fn iam_roles_policies_profiles_oidc() {
    let m = MockAws::new();
    let role = m
        .create_role(CreateRole {
            name: "nodes.x".into(),
            assume_role_policy_document: "{}".into(),
            tags: tags([("KubernetesCluster", "x")]),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(role.arn, "arn:aws:iam::123456789012:role/nodes.x");
    assert_eq!(
        m.create_role(CreateRole {
            name: "nodes.x".into(),
            assume_role_policy_document: "{}".into(),
            ..Default::default()
        })
        .unwrap_err()
        .code(),
        "EntityAlreadyExists"
    );
    m.put_role_policy("nodes.x", "nodes.x", "{\"Version\":\"2012-10-17\"}")
        .unwrap();
    m.attach_role_policy("nodes.x", "arn:aws:iam::aws:policy/X")
        .unwrap();
    let p = m
        .create_instance_profile("nodes.x", "/", Default::default())
        .unwrap();
    assert!(p.arn.ends_with(":instance-profile/nodes.x"));
    m.add_role_to_instance_profile("nodes.x", "nodes.x")
        .unwrap();
    assert!(
        m.add_role_to_instance_profile("nodes.x", "nodes.x")
            .is_err(),
        "one role per profile"
    );
    let e = m.delete_role("nodes.x").unwrap_err();
    assert_eq!(e.code(), "DeleteConflict");
    assert!(matches!(
        m.delete_instance_profile("nodes.x"),
        Err(Error::Conflict { .. })
    ));
    m.update_assume_role_policy("nodes.x", "{\"a\":1}").unwrap();
    assert_eq!(
        m.get_role("nodes.x").unwrap().assume_role_policy_document,
        "{\"a\":1}"
    );
    assert_eq!(m.list_role_policies("nodes.x").unwrap(), ["nodes.x"]);
    m.remove_role_from_instance_profile("nodes.x", "nodes.x")
        .unwrap();
    m.delete_role_policy("nodes.x", "nodes.x").unwrap();
    m.detach_role_policy("nodes.x", "arn:aws:iam::aws:policy/X")
        .unwrap();
    m.delete_role("nodes.x").unwrap();
    m.delete_instance_profile("nodes.x").unwrap();
    assert_eq!(m.get_role("nodes.x").unwrap_err().code(), "NoSuchEntity");

    let o = m
        .create_oidc_provider(
            "https://x.s3.amazonaws.com/x",
            vec!["amazonaws.com".into()],
            vec!["abc".into()],
            Default::default(),
        )
        .unwrap();
    assert_eq!(
        o.arn,
        "arn:aws:iam::123456789012:oidc-provider/x.s3.amazonaws.com/x"
    );
    assert!(
        m.create_oidc_provider("http://insecure", vec![], vec![], Default::default())
            .is_err()
    );
    m.update_oidc_thumbprints(&o.arn, vec!["def".into()])
        .unwrap();
    assert_eq!(m.get_oidc_provider(&o.arn).unwrap().thumbprints, ["def"]);
    m.delete_oidc_provider(&o.arn).unwrap();
    assert!(m.list_oidc_providers().unwrap().is_empty());
}

#[test]
fn route53_zones_and_records() {
    let m = MockAws::new();
    let vpc = m
        .create_vpc("10.0.0.0/16", false, Default::default())
        .unwrap()
        .id;
    let z = m
        .create_hosted_zone("Example.COM", None, None, Default::default())
        .unwrap();
    assert_eq!(z.name, "example.com.");
    let private = m
        .create_hosted_zone(
            "internal.example.com",
            Some(ZoneVpc {
                vpc_id: vpc.clone(),
                region: "us-test-1".into(),
            }),
            None,
            Default::default(),
        )
        .unwrap();
    assert!(private.private);
    // SOA and NS exist from the start.
    assert_eq!(m.list_resource_record_sets(&z.id).unwrap().len(), 2);
    let a = RecordSet {
        name: "api.x.example.com".into(),
        record_type: "A".into(),
        ttl: Some(60),
        records: vec!["203.0.113.10".into()],
        ..Default::default()
    };
    m.change_resource_record_sets(
        &z.id,
        vec![Change {
            action: ChangeAction::Create,
            record_set: a.clone(),
        }],
    )
    .unwrap();
    assert!(
        m.change_resource_record_sets(
            &z.id,
            vec![Change {
                action: ChangeAction::Create,
                record_set: a.clone()
            }]
        )
        .is_err()
    );
    // A batch is atomic: the bad second change undoes the first.
    let b = RecordSet {
        name: "b.x.example.com".into(),
        ..a.clone()
    };
    let outside = RecordSet {
        name: "api.other.org".into(),
        ..a.clone()
    };
    assert!(
        m.change_resource_record_sets(
            &z.id,
            vec![
                Change {
                    action: ChangeAction::Create,
                    record_set: b
                },
                Change {
                    action: ChangeAction::Create,
                    record_set: outside
                },
            ]
        )
        .is_err()
    );
    assert_eq!(m.list_resource_record_sets(&z.id).unwrap().len(), 3);
    let updated = RecordSet {
        records: vec!["203.0.113.11".into()],
        ..a.clone()
    };
    m.change_resource_record_sets(
        &z.id,
        vec![Change {
            action: ChangeAction::Upsert,
            record_set: updated.clone(),
        }],
    )
    .unwrap();
    // Delete must name the current values.
    assert!(
        m.change_resource_record_sets(
            &z.id,
            vec![Change {
                action: ChangeAction::Delete,
                record_set: a
            }]
        )
        .is_err()
    );
    assert!(matches!(
        m.delete_hosted_zone(&z.id),
        Err(Error::Conflict { .. })
    ));
    m.change_resource_record_sets(
        &z.id,
        vec![Change {
            action: ChangeAction::Delete,
            record_set: updated,
        }],
    )
    .unwrap();
    m.delete_hosted_zone(&z.id).unwrap();
    let by_name = m
        .list_hosted_zones_by_name(Some("internal.example.com"))
        .unwrap();
    assert_eq!(by_name[0].id, private.id);
    assert!(
        m.disassociate_vpc_from_hosted_zone(
            &private.id,
            &ZoneVpc {
                vpc_id: vpc,
                region: "us-test-1".into()
            }
        )
        .is_err(),
        "last VPC stays"
    );
    assert_eq!(
        m.get_hosted_zone("ZNOPE").unwrap_err().code(),
        "NoSuchHostedZone"
    );
}

#[test]
fn sqs_events_s3() {
    let m = MockAws::new();
    let attrs = BTreeMap::from([("MessageRetentionPeriod".to_owned(), "300".to_owned())]);
    let q = m
        .create_queue(
            "x-example-com-nth",
            attrs.clone(),
            tags([("KubernetesCluster", "x")]),
        )
        .unwrap();
    assert_eq!(
        m.create_queue("x-example-com-nth", attrs, Default::default())
            .unwrap()
            .url,
        q.url,
        "idempotent"
    );
    assert!(
        m.create_queue("x-example-com-nth", BTreeMap::new(), Default::default())
            .is_err()
    );
    assert_eq!(m.get_queue_attributes(&q.url).unwrap()["QueueArn"], q.arn);
    assert_eq!(m.list_queues("x-").unwrap(), [q.url.clone()]);

    let arn = m
        .put_rule(PutRule {
            name: "x-ASGLifecycle".into(),
            event_pattern: Some("{\"source\":[\"aws.autoscaling\"]}".into()),
            ..Default::default()
        })
        .unwrap();
    assert!(arn.ends_with(":rule/x-ASGLifecycle"));
    m.put_targets(
        "x-ASGLifecycle",
        vec![Target {
            id: "1".into(),
            arn: q.arn.clone(),
            input: None,
        }],
    )
    .unwrap();
    assert!(matches!(
        m.delete_rule("x-ASGLifecycle"),
        Err(Error::Conflict { .. })
    ));
    m.remove_targets("x-ASGLifecycle", &["1".into()]).unwrap();
    m.delete_rule("x-ASGLifecycle").unwrap();
    m.delete_queue(&q.url).unwrap();
    assert!(
        m.get_queue_url("x-example-com-nth")
            .unwrap_err()
            .is_not_found()
    );

    assert_eq!(
        m.put_object("nope", "k", vec![], PutOptions::default())
            .unwrap_err()
            .code(),
        "NoSuchBucket"
    );
    m.create_bucket("testingBucket").unwrap();
    let o = m
        .put_object(
            "testingBucket",
            "c/x/config",
            b"hello".to_vec(),
            PutOptions::default().with_server_side_encryption("AES256"),
        )
        .unwrap();
    assert_eq!(o.etag, "\"5d41402abc4b2a76b9719d911017c592\"");
    assert_eq!(
        m.get_object("testingBucket", "c/x/config").unwrap().data,
        b"hello"
    );
    assert_eq!(
        m.list_objects("testingBucket", "c/").unwrap(),
        ["c/x/config"]
    );
    assert!(m.delete_bucket("testingBucket").is_err());
    m.delete_object("testingBucket", "c/x/config").unwrap();
    m.delete_object("testingBucket", "c/x/config").unwrap();
    m.delete_bucket("testingBucket").unwrap();
}

#[test]
fn debug_output_never_shows_object_contents() {
    let m = MockAws::new();
    m.create_bucket("state").unwrap();
    let o = m
        .put_object(
            "state",
            "pki/private/ca/key",
            b"-----BEGIN RSA PRIVATE KEY----- SECRET".to_vec(),
            PutOptions::default(),
        )
        .unwrap();
    let shown = format!("{m:?} {o:?}");
    assert!(!shown.contains("SECRET"), "{shown}");
    assert!(
        shown.contains("pki/private/ca/key") && shown.contains("bytes"),
        "{shown}"
    );
}
