//! The cloud conformance suite against the mock, plus the fault-injecting decorator.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use kops_cloud_aws::cloud::{
    AccountInfo, AwsCloud, AwsCloudExt, CloudError, CloudResult, CreateRequest, HostedZone, Image,
    ImageQuery, ListQuery, Resource, ResourceCloud, ResourceType, UpdateRequest, ZoneQuery,
};
use kops_cloud_aws::conformance;
use kops_mock::{FaultPlan, FaultyCloud, MockAws, Seed};

fn cloud() -> MockAws {
    let m = MockAws::new();
    m.seed(Seed::Bucket("conformance-bucket".into())).unwrap();
    m
}

#[path = "../../../support/shared.rs"]
mod shared;

#[tokio::test]
async fn mock_passes_the_whole_suite_and_leaves_nothing_behind() {
    let m = cloud();
    let before = m.resource_ids();
    conformance::run_all(&m, "t1", "conformance-bucket")
        .await
        .unwrap();
    assert_eq!(m.resource_ids(), before, "everything created was deleted");
    // The suite went through the service operations.
    let calls = m.calls();
    assert!(calls["ec2:CreateVpc"] >= 4);
    assert!(calls["ec2:DescribeVpcs"] >= 4);
    assert!(calls["iam:CreateRole"] == 1);
}

#[tokio::test]
async fn each_part_runs_alone() {
    let m = cloud();
    let c: &dyn AwsCloud = &m;
    conformance::network(c, "n.example.com").await.unwrap();
    conformance::iam(c, "i.example.com").await.unwrap();
    conformance::compute(c, "c.example.com").await.unwrap();
    conformance::load_balancer(c, "l.example.com", "abc")
        .await
        .unwrap();
    conformance::dns(c, "d.example.com").await.unwrap();
    conformance::messaging(c, "m.example.com").await.unwrap();
    conformance::objects(c, "conformance-bucket", "p")
        .await
        .unwrap();
    conformance::not_found(c).await.unwrap();
    conformance::cluster_isolation(c, "a.example.com", "b.example.com")
        .await
        .unwrap();
}

#[tokio::test]
async fn fixture_objects_are_visible_through_the_trait() {
    let Some(path) = shared::require(
        "fixture_objects_are_visible_through_the_trait",
        "conformance/fixtures/mock-cloud.yaml",
    ) else {
        return;
    };
    let m = kops_mock::fixture::load_file(&path).unwrap();
    let c: &dyn AwsCloud = &m;
    let img = c
        .resolve_image("ubuntu/images/hvm-ssd-gp3/ubuntu-resolute-26.04-amd64-server-20220404")
        .await
        .unwrap();
    assert_eq!(img.id, "ami-12345678");
    let zones = c
        .hosted_zones(&ZoneQuery::from_spec("private.example.com"))
        .await
        .unwrap();
    assert_eq!(zones.len(), 1);
    assert_eq!(zones[0].vpcs, ["vpc-12345678"]);
    let z = c
        .hosted_zones(&ZoneQuery::from_spec("Z1AFAKE1ZON3YO"))
        .await
        .unwrap();
    assert_eq!(z[0].name, "example.com.");
    let shared = c
        .list_for_cluster(ResourceType::Vpc, "minimal.example.com")
        .await
        .unwrap();
    assert_eq!(shared.len(), 1);
    assert_eq!(shared[0].id, "vpc-12345678");
    let subnets = c
        .list(&ListQuery::new(ResourceType::Subnet).with_ids(["subnet-abcdef", "subnet-missing"]))
        .await
        .unwrap();
    assert_eq!(subnets.len(), 1, "missing ids are simply absent");
    assert_eq!(subnets[0].attr_str("cidr_block"), Some("172.20.4.0/22"));
    let nat = c
        .get(ResourceType::NatGateway, "nat-a2345678")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(nat.attr_str("allocation_id"), Some("eipalloc-12345678"));
    assert!(
        c.get(ResourceType::IamInstanceProfile, "kops-custom-node-role")
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn faulty_cloud_throttles_a_seeded_fraction() {
    let run = |seed| async move {
        let inner = Arc::new(MockAws::new());
        let f = FaultyCloud::new(inner.clone(), FaultPlan::throttle_fraction(0.3, seed));
        let mut outcome = Vec::new();
        for _ in 0..100 {
            match f.list(&ListQuery::new(ResourceType::Vpc)).await {
                Ok(_) => outcome.push(false),
                Err(e) => {
                    assert!(e.is_retryable(), "{e}");
                    assert!(matches!(e, CloudError::Throttled { .. }), "{e}");
                    outcome.push(true);
                }
            }
        }
        // Throttled calls never reached the inner cloud.
        let reached = inner.call_count("ec2:DescribeVpcs");
        assert_eq!(reached as usize, outcome.iter().filter(|x| !**x).count());
        (outcome, f.injected())
    };
    let (a, n) = run(9).await;
    let (b, _) = run(9).await;
    assert_eq!(a, b, "same seed, same faults");
    assert!((15..=45).contains(&n), "{n} of 100 throttled");
}

#[tokio::test]
async fn mock_errors_map_to_cloud_error_kinds() {
    let m = MockAws::new();
    m.set_faults(FaultPlan::new().with_rule(kops_mock::FaultRule::next(
        "ec2:DescribeVpcs",
        1,
        kops_mock::FaultKind::Throttle,
    )));
    let c: &dyn AwsCloud = &m;
    let e = c
        .list(&ListQuery::new(ResourceType::Vpc))
        .await
        .unwrap_err();
    assert!(matches!(e, CloudError::Throttled { .. }), "{e}");
    // The mock's error is not repeated as a source: the message says it once.
    assert!(std::error::Error::source(&e).is_none(), "{e:?}");
    assert_eq!(e.to_string().matches("ec2:DescribeVpcs").count(), 1, "{e}");
    assert!(
        c.list(&ListQuery::new(ResourceType::Vpc))
            .await
            .unwrap()
            .is_empty()
    );
    // A dependency violation is a conflict, retried (ordered deletes under eventual
    // consistency).
    let vpc = m
        .create_vpc("10.0.0.0/16", false, Default::default())
        .unwrap();
    m.create_internet_gateway(Default::default())
        .and_then(|g| m.attach_internet_gateway(&g.id, &vpc.id))
        .unwrap();
    let e = c.delete(ResourceType::Vpc, &vpc.id).await.unwrap_err();
    assert!(matches!(e, CloudError::Conflict { .. }), "{e}");
    assert!(e.is_retryable());
}

/// A broken cloud that ignores tag filters: the isolation check must catch it, which shows
/// the suite can fail.
#[derive(Debug)]
struct IgnoresTags(MockAws);

#[async_trait::async_trait]
impl ResourceCloud<ResourceType> for IgnoresTags {
    async fn list(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        let mut q = query.clone();
        q.tags.clear();
        self.0.list(&q).await
    }
    async fn create(&self, r: &CreateRequest) -> CloudResult<Resource> {
        self.0.create(r).await
    }
    async fn update(&self, r: &UpdateRequest) -> CloudResult<Resource> {
        self.0.update(r).await
    }
    async fn delete(&self, rt: ResourceType, id: &str) -> CloudResult<()> {
        self.0.delete(rt, id).await
    }
}

#[async_trait::async_trait]
impl AwsCloud for IgnoresTags {
    async fn account(&self) -> CloudResult<AccountInfo> {
        self.0.account().await
    }
    async fn zones(&self) -> CloudResult<Vec<String>> {
        self.0.zones().await
    }
    async fn images(&self, q: &ImageQuery) -> CloudResult<Vec<Image>> {
        self.0.images(q).await
    }
    async fn hosted_zones(&self, q: &ZoneQuery) -> CloudResult<Vec<HostedZone>> {
        self.0.hosted_zones(q).await
    }
}

#[tokio::test]
#[should_panic(expected = "left == right")]
async fn suite_catches_a_cloud_that_ignores_tag_filters() {
    let c = IgnoresTags(MockAws::new());
    conformance::cluster_isolation(&c, "a.example.com", "b.example.com")
        .await
        .unwrap();
}

#[tokio::test]
async fn parents_match_what_the_model_looks_up() {
    use serde_json::json;
    let m = MockAws::new();
    let c: &dyn AwsCloud = &m;
    let vpc = m
        .create_vpc("10.0.0.0/16", false, Default::default())
        .unwrap();
    let dopt = c
        .create(
            &CreateRequest::new(ResourceType::DhcpOptions).with_attrs(
                [
                    (
                        "domain_name".to_owned(),
                        json!("us-test-1.compute.internal"),
                    ),
                    (
                        "domain_name_servers".to_owned(),
                        json!(["AmazonProvidedDNS"]),
                    ),
                ]
                .into(),
            ),
        )
        .await
        .unwrap();
    assert_eq!(
        dopt.attrs["domain_name_servers"],
        json!(["AmazonProvidedDNS"])
    );
    c.create(
        &CreateRequest::new(ResourceType::DhcpOptionsAssociation).with_attrs(
            [
                ("vpc_id".to_owned(), json!(vpc.id)),
                ("dhcp_options_id".to_owned(), json!(dopt.id)),
            ]
            .into(),
        ),
    )
    .await
    .unwrap();
    let found = c
        .list(&ListQuery::new(ResourceType::DhcpOptionsAssociation).with_parent(&vpc.id))
        .await
        .unwrap();
    assert_eq!(found[0].attr_str("dhcp_options_id"), Some(dopt.id.as_str()));
    // DHCP options cannot go while associated; the association's delete restores default.
    assert!(c.delete(ResourceType::DhcpOptions, &dopt.id).await.is_err());
    c.delete(ResourceType::DhcpOptionsAssociation, &vpc.id)
        .await
        .unwrap();
    c.delete(ResourceType::DhcpOptions, &dopt.id).await.unwrap();

    // Record sets: parent and zone_id are the zone id as hosted_zones() reports it.
    let z = m
        .create_hosted_zone("example.com", None, None, Default::default())
        .unwrap();
    let zones: Vec<HostedZone> = c
        .hosted_zones(&ZoneQuery::from_spec("example.com"))
        .await
        .unwrap();
    let zid = zones[0].id.clone();
    assert_eq!(zid, z.id);
    let rec = c
        .create(&CreateRequest::new(ResourceType::RecordSet).with_attrs(
            [
                ("zone_id".to_owned(), json!(zid)),
                ("name".to_owned(), json!("api.x.example.com")),
                ("type".to_owned(), json!("A")),
                (
                    "alias".to_owned(),
                    json!({"name": "lb.example", "zone_id": "ZLB", "evaluate_target_health": false}),
                ),
            ]
            .into(),
        ))
        .await
        .unwrap();
    assert_eq!(rec.attr_str("zone_id"), Some(zid.as_str()));
    let under = c
        .list(&ListQuery::new(ResourceType::RecordSet).with_parent(&zid))
        .await
        .unwrap();
    assert!(
        under
            .iter()
            .any(|r| r.id == rec.id && r.attr_str("name") == Some("api.x.example.com"))
    );
    c.delete(ResourceType::RecordSet, &rec.id).await.unwrap();
    assert!(
        c.get(ResourceType::RecordSet, &rec.id)
            .await
            .unwrap()
            .is_none()
    );

    // A security-group rule for "all traffic" reads back as Terraform writes it.
    let sg = m
        .create_security_group("g", "g", &vpc.id, Default::default())
        .unwrap();
    let rules = c
        .list(&ListQuery::new(ResourceType::SecurityGroupRule).with_parent(&sg.id))
        .await
        .unwrap();
    assert_eq!(rules.len(), 1, "the default egress rule");
    assert_eq!(rules[0].attr_str("protocol"), Some("-1"));
    assert_eq!(rules[0].attrs["from_port"], json!(0));
    assert_eq!(rules[0].attrs["cidr_blocks"], json!(["0.0.0.0/0"]));
}

#[tokio::test]
async fn counting_cloud_counts_trait_calls() {
    let inner = Arc::new(cloud());
    let c = kops_mock::CountingCloud::new(inner.clone());
    conformance::network(&c, "count.example.com").await.unwrap();
    let calls = c.calls();
    assert_eq!(calls["ec2:CreateVpc"], 1);
    assert_eq!(
        calls["ec2:DeleteVpc"], 2,
        "deleted once, then again to check idempotence"
    );
    assert!(calls["ec2:ListVpc"] >= 3);
    assert_eq!(c.total(), calls.values().sum::<u64>());
    // Trait calls map onto more service operations underneath.
    assert!(inner.total_calls() >= c.total());
}

#[tokio::test]
async fn updates_build_on_the_current_state() {
    use serde_json::json;
    let m = MockAws::new();
    let c: &dyn AwsCloud = &m;
    let vpc = m
        .create_vpc("10.0.0.0/16", false, Default::default())
        .unwrap();
    let igw = m.create_internet_gateway(Default::default()).unwrap();
    m.attach_internet_gateway(&igw.id, &vpc.id).unwrap();
    let s = m
        .create_subnet(kops_mock::ec2::CreateSubnet {
            vpc_id: vpc.id.clone(),
            availability_zone: "us-test-1a".into(),
            cidr_block: Some("10.0.0.0/24".into()),
            ..Default::default()
        })
        .unwrap();
    let eip = m.allocate_address(Default::default()).unwrap();
    let nat = m
        .create_nat_gateway(&s.id, Some(&eip.allocation_id), Default::default())
        .unwrap();
    let rt = m.create_route_table(&vpc.id, Default::default()).unwrap();
    let route = c
        .create(
            &CreateRequest::new(ResourceType::Route).with_attrs(
                [
                    ("route_table_id".to_owned(), json!(rt.id)),
                    ("destination_cidr_block".to_owned(), json!("0.0.0.0/0")),
                    ("gateway_id".to_owned(), json!(igw.id)),
                ]
                .into(),
            ),
        )
        .await
        .unwrap();
    // Switching the target replaces it.
    let r = c
        .update(
            &UpdateRequest::new(ResourceType::Route, &route.id)
                .with_attrs([("nat_gateway_id".to_owned(), json!(nat.id))].into()),
        )
        .await
        .unwrap();
    assert_eq!(r.attr_str("nat_gateway_id"), Some(nat.id.as_str()));
    assert_eq!(r.attr_str("gateway_id"), None);

    // An object created outside the trait can still be updated through it.
    let sg = m
        .create_security_group("g", "g", &vpc.id, Default::default())
        .unwrap();
    let rule = &m
        .authorize_security_group_ingress(
            &sg.id,
            vec![kops_mock::ec2::RuleSpec {
                ip_protocol: "tcp".into(),
                from_port: Some(443),
                to_port: Some(443),
                cidr_ipv4: Some("0.0.0.0/0".into()),
                ..Default::default()
            }],
            Default::default(),
        )
        .unwrap()[0];
    let r = c
        .update(
            &UpdateRequest::new(ResourceType::SecurityGroupRule, &rule.id)
                .with_attrs([("description".to_owned(), json!("https"))].into()),
        )
        .await
        .unwrap();
    assert_eq!(r.attr_str("description"), Some("https"));
    let e = c
        .update(
            &UpdateRequest::new(ResourceType::SecurityGroupRule, &rule.id)
                .with_attrs([("from_port".to_owned(), json!(80))].into()),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&e, CloudError::Invalid { field, .. } if field == "aws_security_group_rule.from_port"),
        "{e}"
    );
    assert!(e.to_string().contains("cannot change in place"), "{e}");
}
