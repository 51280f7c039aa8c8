//! Trait-level tests of the AWS backend against moto server (`KOPS_TEST_S3_ENDPOINT`).
//!
//! Tests share one moto server with other test binaries, so they never reset it: each
//! test uses its own cluster name (IAM is global) and its own region (EC2 state is per
//! region), and every lookup filters by tag (moto has a default VPC in every region).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::time::Duration;

use kops_cloud_aws::AwsBackend;
use kops_cloud_aws::cloud::{
    AwsCloudExt, CloudError, CreateRequest, ListQuery, Resource, ResourceCloud, ResourceType as R,
    TagFilter, UpdateRequest,
};
use kops_model::aws::{DeleteOptions, delete_cluster, find_cluster_resources};
use serde_json::{Value as Json, json};

mod common;
use common::{backend, endpoint};

fn tags(cluster: &str, name: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("KubernetesCluster".to_owned(), cluster.to_owned()),
        (
            format!("kubernetes.io/cluster/{cluster}"),
            "owned".to_owned(),
        ),
        ("Name".to_owned(), name.to_owned()),
    ])
}

fn attrs(v: Json) -> BTreeMap<String, Json> {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn by_name_tag(cluster: &str, rt: R, name: &str) -> ListQuery {
    ListQuery::new(rt)
        .with_tag(TagFilter::equals("KubernetesCluster", cluster))
        .with_tag(TagFilter::equals("Name", name))
}

/// Removes what an earlier, interrupted run of a test left behind (the server is shared
/// and not reset).
async fn fresh(cloud: &AwsBackend, cluster: &str) {
    let opts = DeleteOptions::default()
        .with_retry_delay(Duration::from_millis(100))
        .with_max_rounds(5);
    let report = delete_cluster(cloud, cluster, &opts).await.unwrap();
    assert!(report.is_complete(), "{report}");
    cloud.clear_cache();
}

/// The backend of a test on moto in `region`, with what an earlier, interrupted run of
/// the test left of `cluster` removed; `None` without moto. With the endpoint, for tests
/// that also make plain SDK clients.
async fn moto_cloud(cluster: &str, region: &str) -> Option<(String, AwsBackend)> {
    let ep = endpoint()?;
    let cloud = backend(&ep, region);
    fresh(&cloud, cluster).await;
    Some((ep, cloud))
}

async fn create(cloud: &AwsBackend, rt: R, cluster: &str, name: &str, a: Json) -> Resource {
    cloud
        .create(
            &CreateRequest::new(rt)
                .with_tags(tags(cluster, name))
                .with_attrs(attrs(a)),
        )
        .await
        .unwrap_or_else(|e| panic!("create {rt} {name}: {e:?}"))
}

#[tokio::test]
async fn network_objects_round_trip() {
    let cluster = "net.example.com";
    let Some((_, cloud)) = moto_cloud(cluster, "eu-west-1").await else {
        return;
    };

    let vpc = create(&cloud, R::Vpc, cluster, "net", json!({"cidr_block": "172.20.0.0/16", "enable_dns_hostnames": true, "enable_dns_support": true})).await;
    assert!(vpc.id.starts_with("vpc-"));
    assert_eq!(vpc.attrs["enable_dns_hostnames"], json!(true));
    assert_eq!(vpc.attrs["cidr_block"], json!("172.20.0.0/16"));

    // Two lookups of the type, one DescribeVpcs: the second comes from the run's cache.
    cloud.reset_api_calls();
    let a = cloud
        .list(&by_name_tag(cluster, R::Vpc, "net"))
        .await
        .unwrap();
    let b = cloud
        .list(&by_name_tag(cluster, R::Vpc, "other"))
        .await
        .unwrap();
    assert_eq!(a.len(), 1);
    assert!(b.is_empty());
    assert_eq!(
        cloud.api_calls().get("ec2:DescribeVpcs"),
        Some(&1),
        "{:?}",
        cloud.api_calls()
    );
    // The default VPC is not the cluster's.
    let mine = cloud.list_for_cluster(R::Vpc, cluster).await.unwrap();
    assert_eq!(
        mine.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        vec![vpc.id.as_str()]
    );

    let mut new_tags = tags(cluster, "net");
    new_tags.insert("extra".into(), "1".into());
    let upd = cloud
        .update(
            &UpdateRequest::new(R::Vpc, &vpc.id)
                .with_attrs(attrs(json!({"enable_dns_hostnames": false})))
                .with_tags(new_tags.clone()),
        )
        .await
        .unwrap();
    assert_eq!(upd.attrs["enable_dns_hostnames"], json!(false));
    assert_eq!(upd.tags, new_tags);
    // The write invalidated the cache: a new lookup sees the change.
    let again = cloud.get(R::Vpc, &vpc.id).await.unwrap().unwrap();
    assert_eq!(again.tags.get("extra"), Some("1"));

    let dhcp = create(&cloud, R::DhcpOptions, cluster, "net", json!({"domain_name": "eu-west-1.compute.internal", "domain_name_servers": ["AmazonProvidedDNS"]})).await;
    assert_eq!(
        dhcp.attrs["domain_name_servers"],
        json!(["AmazonProvidedDNS"])
    );
    let assoc = cloud
        .create(
            &CreateRequest::new(R::DhcpOptionsAssociation)
                .with_attrs(attrs(json!({"vpc_id": vpc.id, "dhcp_options_id": dhcp.id}))),
        )
        .await
        .unwrap();
    assert_eq!(assoc.id, vpc.id);
    let found = cloud
        .list(&ListQuery::new(R::DhcpOptionsAssociation).with_parent(vpc.id.clone()))
        .await
        .unwrap();
    assert_eq!(found[0].attrs["dhcp_options_id"], json!(dhcp.id));

    let igw = create(
        &cloud,
        R::InternetGateway,
        cluster,
        "net",
        json!({"vpc_id": vpc.id}),
    )
    .await;
    assert_eq!(igw.attrs["vpc_id"], json!(vpc.id));

    let subnet = create(&cloud, R::Subnet, cluster, "eu-west-1a.net", json!({"vpc_id": vpc.id, "cidr_block": "172.20.32.0/19", "availability_zone": "eu-west-1a"})).await;
    assert_eq!(subnet.attrs["availability_zone"], json!("eu-west-1a"));
    assert_eq!(subnet.attrs["cidr_block"], json!("172.20.32.0/19"));

    let rtb = create(
        &cloud,
        R::RouteTable,
        cluster,
        "net",
        json!({"vpc_id": vpc.id}),
    )
    .await;
    let route = cloud
        .create(&CreateRequest::new(R::Route).with_parent(rtb.id.clone()).with_attrs(attrs(json!({"route_table_id": rtb.id, "destination_cidr_block": "0.0.0.0/0", "gateway_id": igw.id}))))
        .await
        .unwrap();
    assert_eq!(route.id, format!("{}_0.0.0.0/0", rtb.id));
    assert_eq!(route.attrs["gateway_id"], json!(igw.id));
    let rta = cloud
        .create(
            &CreateRequest::new(R::RouteTableAssociation).with_attrs(attrs(
                json!({"route_table_id": rtb.id, "subnet_id": subnet.id}),
            )),
        )
        .await
        .unwrap();
    let routes = cloud
        .list(&ListQuery::new(R::Route).with_parent(rtb.id.clone()))
        .await
        .unwrap();
    assert_eq!(
        routes.len(),
        1,
        "the local route is not reported: {routes:?}"
    );
    let assocs = cloud
        .list(&ListQuery::new(R::RouteTableAssociation).with_parent(rtb.id.clone()))
        .await
        .unwrap();
    assert_eq!(
        assocs.iter().map(|r| r.id.clone()).collect::<Vec<_>>(),
        vec![rta.id.clone()]
    );

    let sg = cloud
        .create(
            &CreateRequest::new(R::SecurityGroup)
                .with_name("nodes.net.example.com")
                .with_tags(tags(cluster, "nodes.net.example.com"))
                .with_attrs(attrs(
                    json!({"vpc_id": vpc.id, "description": "Security group for nodes"}),
                )),
        )
        .await
        .unwrap();
    assert_eq!(sg.name.as_deref(), Some("nodes.net.example.com"));
    let rule = cloud
        .create(&CreateRequest::new(R::SecurityGroupRule).with_parent(sg.id.clone()).with_attrs(attrs(json!({"security_group_id": sg.id, "type": "ingress", "protocol": "tcp", "from_port": 22, "to_port": 22, "cidr_blocks": ["0.0.0.0/0"]}))))
        .await
        .unwrap();
    assert_eq!(rule.attrs["from_port"], json!(22));
    assert_eq!(rule.attrs["cidr_blocks"], json!(["0.0.0.0/0"]));
    // The default egress rule exists already; creating it again answers the existing rule.
    let egress = cloud
        .create(&CreateRequest::new(R::SecurityGroupRule).with_parent(sg.id.clone()).with_attrs(attrs(json!({"security_group_id": sg.id, "type": "egress", "protocol": "-1", "from_port": 0, "to_port": 0, "cidr_blocks": ["0.0.0.0/0"]}))))
        .await
        .unwrap();
    assert_eq!(egress.attrs["type"], json!("egress"));
    let rules = cloud
        .list(&ListQuery::new(R::SecurityGroupRule).with_parent(sg.id.clone()))
        .await
        .unwrap();
    assert_eq!(rules.len(), 2, "{rules:?}");

    // Deletes, children first; deleting again is not an error.
    cloud.delete(R::SecurityGroupRule, &rule.id).await.unwrap();
    cloud.delete(R::SecurityGroup, &sg.id).await.unwrap();
    cloud.delete(R::Route, &route.id).await.unwrap();
    cloud.delete(R::RouteTable, &rtb.id).await.unwrap();
    cloud.delete(R::Subnet, &subnet.id).await.unwrap();
    cloud.delete(R::InternetGateway, &igw.id).await.unwrap();
    cloud.delete(R::Vpc, &vpc.id).await.unwrap();
    cloud.delete(R::DhcpOptions, &dhcp.id).await.unwrap();
    cloud.delete(R::Vpc, &vpc.id).await.unwrap();
    for rt in [
        R::Vpc,
        R::Subnet,
        R::InternetGateway,
        R::RouteTable,
        R::SecurityGroup,
        R::DhcpOptions,
    ] {
        assert!(
            cloud
                .list_for_cluster(rt, cluster)
                .await
                .unwrap()
                .is_empty(),
            "{rt} left"
        );
    }
    // Updating what does not exist is NotFound.
    let err = cloud
        .update(
            &UpdateRequest::new(R::Vpc, &vpc.id)
                .with_attrs(attrs(json!({"enable_dns_support": true}))),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, CloudError::NotFound { .. }), "{err:?}");
}

/// A plan finds every object by its name tag within the cluster's tag: the lookups of a
/// type share one listing, and a write to the type makes the next lookup fetch again.
#[tokio::test]
async fn lookups_by_tag_pairs_share_one_listing_until_a_write() {
    let cluster = "tagged.example.com";
    let Some((_, cloud)) = moto_cloud(cluster, "ap-southeast-1").await else {
        return;
    };
    let vpc = |cidr: &str| json!({"cidr_block": cidr});
    let a = create(&cloud, R::Vpc, cluster, "a", vpc("172.21.0.0/16")).await;

    cloud.reset_api_calls();
    let find = |name: &'static str| {
        let cloud = &cloud;
        async move {
            let tags = [("KubernetesCluster", cluster), ("Name", name)];
            let found = cloud.list_tagged(R::Vpc, &tags).await.unwrap();
            found.iter().map(|r| r.id.clone()).collect::<Vec<_>>()
        }
    };
    assert_eq!(find("a").await, vec![a.id.clone()]);
    assert!(find("b").await.is_empty());
    assert_eq!(find("a").await, vec![a.id.clone()]);
    let describes = |cloud: &AwsBackend| cloud.api_calls().get("ec2:DescribeVpcs").copied();
    assert_eq!(describes(&cloud), Some(1), "{:?}", cloud.api_calls());

    // A create of the type drops the listing: the next lookup sees the new object, and
    // the lookups after it share the new listing.
    let b = create(&cloud, R::Vpc, cluster, "b", vpc("172.22.0.0/16")).await;
    cloud.reset_api_calls();
    assert_eq!(find("b").await, vec![b.id.clone()]);
    assert_eq!(find("a").await, vec![a.id.clone()]);
    assert_eq!(describes(&cloud), Some(1), "{:?}", cloud.api_calls());

    // So does a delete.
    cloud.delete(R::Vpc, &b.id).await.unwrap();
    cloud.reset_api_calls();
    assert!(find("b").await.is_empty());
    assert_eq!(find("a").await, vec![a.id.clone()]);
    assert_eq!(describes(&cloud), Some(1), "{:?}", cloud.api_calls());

    // A lookup within another cluster's tag has a listing of its own, and the lookups
    // of the first cluster keep theirs.
    let other = [("KubernetesCluster", "other.example.com"), ("Name", "a")];
    assert!(cloud.list_tagged(R::Vpc, &other).await.unwrap().is_empty());
    assert_eq!(find("a").await, vec![a.id.clone()]);
    assert_eq!(describes(&cloud), Some(2), "{:?}", cloud.api_calls());

    fresh(&cloud, cluster).await;
}

#[tokio::test]
async fn iam_objects_round_trip() {
    let cluster = "iam.example.com";
    let Some((_, cloud)) = moto_cloud(cluster, "us-east-1").await else {
        return;
    };
    let role_name = "nodes.iam.example.com";
    let assume = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}"#;
    let role = cloud
        .create(
            &CreateRequest::new(R::IamRole)
                .with_name(role_name)
                .with_tags(tags(cluster, role_name))
                .with_attrs(attrs(json!({"assume_role_policy": assume}))),
        )
        .await
        .unwrap();
    assert_eq!(role.id, role_name);
    assert!(role.arn.as_deref().unwrap_or_default().ends_with(role_name));
    let parsed: Json = serde_json::from_str(role.attr_str("assume_role_policy").unwrap()).unwrap();
    assert_eq!(parsed, serde_json::from_str::<Json>(assume).unwrap());

    let policy = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:Describe*","Resource":"*"}]}"#;
    let pol = cloud
        .create(
            &CreateRequest::new(R::IamRolePolicy)
                .with_name(role_name)
                .with_parent(role_name)
                .with_attrs(attrs(json!({"role": role_name, "policy": policy}))),
        )
        .await
        .unwrap();
    assert_eq!(pol.id, format!("{role_name}:{role_name}"));
    let profile = cloud
        .create(
            &CreateRequest::new(R::IamInstanceProfile)
                .with_name(role_name)
                .with_tags(tags(cluster, role_name))
                .with_attrs(attrs(json!({"role": role_name}))),
        )
        .await
        .unwrap();
    assert_eq!(profile.attrs["role"], json!(role_name));

    let found = cloud
        .list(&ListQuery::new(R::IamRole).with_names([role_name]))
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].tags.get("KubernetesCluster"), Some(cluster));
    let pols = cloud
        .list(&ListQuery::new(R::IamRolePolicy).with_parent(role_name))
        .await
        .unwrap();
    assert_eq!(pols.len(), 1);

    let policy2 = policy.replace("ec2:Describe*", "ec2:*");
    let upd = cloud
        .update(
            &UpdateRequest::new(R::IamRolePolicy, &pol.id)
                .with_attrs(attrs(json!({"policy": policy2}))),
        )
        .await
        .unwrap();
    assert_eq!(upd.attrs["policy"], json!(policy2));

    // Deleting the role detaches its policy and removes it from the profile first.
    cloud.delete(R::IamRole, role_name).await.unwrap();
    cloud
        .delete(R::IamInstanceProfile, role_name)
        .await
        .unwrap();
    assert!(
        cloud
            .list(&ListQuery::new(R::IamRole).with_names([role_name]))
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        cloud
            .list(&ListQuery::new(R::IamInstanceProfile).with_names([role_name]))
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn launch_templates_keep_full_data_and_asgs_follow() {
    let cluster = "lt.example.com";
    let Some((_, cloud)) = moto_cloud(cluster, "us-west-2").await else {
        return;
    };
    let vpc = create(
        &cloud,
        R::Vpc,
        cluster,
        "lt",
        json!({"cidr_block": "10.0.0.0/16"}),
    )
    .await;
    let subnet = create(
        &cloud,
        R::Subnet,
        cluster,
        "a",
        json!({"vpc_id": vpc.id, "cidr_block": "10.0.1.0/24", "availability_zone": "us-west-2a"}),
    )
    .await;
    let sg = cloud
        .create(
            &CreateRequest::new(R::SecurityGroup)
                .with_name("nodes.lt")
                .with_tags(tags(cluster, "nodes.lt"))
                .with_attrs(attrs(json!({"vpc_id": vpc.id, "description": "nodes"}))),
        )
        .await
        .unwrap();
    let data = json!({
        "image_id": "ami-12c6146b",
        "instance_type": "t3.medium",
        "user_data": "#!/bin/bash\necho hello\n",
        "block_device_mappings": [{"device_name": "/dev/xvda", "ebs": {"delete_on_termination": true, "encrypted": true, "volume_size": 128, "volume_type": "gp3"}}],
        "metadata_options": {"http_endpoint": "enabled", "http_put_response_hop_limit": 1, "http_tokens": "required"},
        "monitoring": {"enabled": false},
        "network_interfaces": {"associate_public_ip_address": true, "delete_on_termination": true, "security_groups": [sg.id]},
        "tag_specifications": [{"resource_type": "instance", "tags": {"KubernetesCluster": cluster}}]
    });
    let lt = cloud
        .create(
            &CreateRequest::new(R::LaunchTemplate)
                .with_name("nodes.lt.example.com")
                .with_tags(tags(cluster, "nodes.lt.example.com"))
                .with_attrs(attrs(data.clone())),
        )
        .await
        .unwrap();
    assert!(lt.id.starts_with("lt-"));
    assert_eq!(lt.attrs["latest_version"], json!("1"));
    assert_eq!(lt.attrs["instance_type"], json!("t3.medium"));
    assert_eq!(
        lt.attrs["user_data"], data["user_data"],
        "user data round-trips as text"
    );
    assert_eq!(
        lt.attrs["network_interfaces"]["security_groups"],
        json!([sg.id])
    );
    assert_eq!(
        lt.attrs["block_device_mappings"][0]["ebs"]["volume_size"],
        json!(128)
    );

    // An update sends the complete data as a new version: unchanged fields survive.
    let v2 = cloud
        .update(
            &UpdateRequest::new(R::LaunchTemplate, &lt.id)
                .with_attrs(attrs(json!({"instance_type": "m5.large"}))),
        )
        .await
        .unwrap();
    assert_eq!(v2.attrs["latest_version"], json!("2"));
    assert_eq!(v2.attrs["instance_type"], json!("m5.large"));
    assert_eq!(v2.attrs["image_id"], data["image_id"]);
    assert_eq!(v2.attrs["user_data"], data["user_data"]);
    assert_eq!(
        v2.attrs["block_device_mappings"],
        lt.attrs["block_device_mappings"]
    );

    // Version 1: moto cannot launch instances from a later version with user data (it
    // keeps that version's user data undecoded), which AWS can.
    let asg_name = "nodes.lt.example.com";
    let asg = cloud
        .create(
            &CreateRequest::new(R::AutoscalingGroup)
                .with_name(asg_name)
                .with_tags(tags(cluster, asg_name))
                .with_attrs(attrs(json!({
                    "min_size": 1, "max_size": 2,
                    "vpc_zone_identifier": [subnet.id],
                    "launch_template": {"id": lt.id, "version": "1"},
                    "enabled_metrics": ["GroupDesiredCapacity", "GroupInServiceInstances"],
                    "metrics_granularity": "1Minute",
                }))),
        )
        .await
        .unwrap();
    assert_eq!(asg.id, asg_name);
    assert_eq!(
        asg.attrs["launch_template"],
        json!({"id": lt.id, "version": "1"})
    );
    assert_eq!(asg.attrs["vpc_zone_identifier"], json!([subnet.id]));
    assert_eq!(
        asg.attrs["enabled_metrics"],
        json!(["GroupDesiredCapacity", "GroupInServiceInstances"])
    );
    let tag_list = asg.attrs["tag"].as_array().unwrap();
    assert!(
        tag_list
            .iter()
            .any(|t| t["key"] == "KubernetesCluster" && t["propagate_at_launch"] == true)
    );
    let upd = cloud
        .update(
            &UpdateRequest::new(R::AutoscalingGroup, asg_name)
                .with_attrs(attrs(json!({"min_size": 2, "max_size": 3}))),
        )
        .await
        .unwrap();
    assert_eq!(
        (upd.attrs["min_size"].clone(), upd.attrs["max_size"].clone()),
        (json!(2), json!(3))
    );

    // Lifecycle hooks live under the group.
    let hook = cloud
        .create(&CreateRequest::new(R::LifecycleHook).with_name("kops-nth").with_parent(asg_name).with_attrs(attrs(json!({"autoscaling_group_name": asg_name, "lifecycle_transition": "autoscaling:EC2_INSTANCE_TERMINATING", "default_result": "CONTINUE", "heartbeat_timeout": 300}))))
        .await
        .unwrap();
    assert_eq!(hook.id, format!("{asg_name}:kops-nth"));
    assert_eq!(hook.attrs["heartbeat_timeout"], json!(300));

    // Many lookups by name, one listing per type.
    cloud.clear_cache();
    cloud.reset_api_calls();
    for _ in 0..20 {
        assert_eq!(
            cloud
                .list(&ListQuery::new(R::LaunchTemplate).with_names(["nodes.lt.example.com"]))
                .await
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            cloud
                .list(&ListQuery::new(R::AutoscalingGroup).with_names([asg_name]))
                .await
                .unwrap()
                .len(),
            1
        );
    }
    let calls = cloud.api_calls();
    assert_eq!(
        calls.get("ec2:DescribeLaunchTemplates"),
        Some(&1),
        "{calls:?}"
    );
    assert_eq!(
        calls.get("ec2:DescribeLaunchTemplateVersions"),
        Some(&1),
        "{calls:?}"
    );
    assert_eq!(
        calls.get("autoscaling:DescribeAutoScalingGroups"),
        Some(&1),
        "{calls:?}"
    );

    cloud.delete(R::AutoscalingGroup, asg_name).await.unwrap();
    cloud.delete(R::LaunchTemplate, &lt.id).await.unwrap();
    assert!(
        cloud
            .list(&ListQuery::new(R::LaunchTemplate).with_names(["nodes.lt.example.com"]))
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        cloud
            .list(&ListQuery::new(R::AutoscalingGroup).with_names([asg_name]))
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn files_queues_and_rules_round_trip() {
    let cluster = "files.example.com";
    let Some((ep, cloud)) = moto_cloud(cluster, "us-east-1").await else {
        return;
    };
    // The state-store bucket exists before a cluster is created.
    let s3 = common::s3_client(&ep);
    let bucket = "kops-cloud-aws-files-test";
    let _ = s3.create_bucket().bucket(bucket).send().await;

    let obj = cloud
        .create(&CreateRequest::new(R::S3Object).with_parent(bucket).with_attrs(attrs(json!({"bucket": bucket, "key": "files.example.com/cluster.spec", "content": "a: 1\n", "server_side_encryption": "AES256"}))))
        .await
        .unwrap();
    assert_eq!(obj.id, format!("{bucket}/files.example.com/cluster.spec"));
    assert_eq!(obj.attrs["content"], json!("a: 1\n"));
    let upd = cloud
        .update(
            &UpdateRequest::new(R::S3Object, &obj.id)
                .with_attrs(attrs(json!({"content": "a: 2\n"}))),
        )
        .await
        .unwrap();
    assert_eq!(upd.attrs["content"], json!("a: 2\n"));
    let listed = cloud
        .list(&ListQuery::new(R::S3Object).with_parent(bucket))
        .await
        .unwrap();
    assert!(listed.iter().any(|o| o.id == obj.id));
    cloud.delete(R::S3Object, &obj.id).await.unwrap();
    assert!(cloud.get(R::S3Object, &obj.id).await.unwrap().is_none());

    let q = cloud
        .create(
            &CreateRequest::new(R::SqsQueue)
                .with_name("files-example-com-nth")
                .with_tags(tags(cluster, "q"))
                .with_attrs(attrs(json!({"message_retention_seconds": 300}))),
        )
        .await
        .unwrap();
    assert!(
        q.arn
            .as_deref()
            .unwrap_or_default()
            .contains("files-example-com-nth")
    );
    assert_eq!(q.attrs["message_retention_seconds"], json!(300));
    let rule = cloud
        .create(
            &CreateRequest::new(R::EventRule)
                .with_name("files-ASGLifecycle")
                .with_tags(tags(cluster, "r"))
                .with_attrs(attrs(
                    json!({"event_pattern": "{\"source\":[\"aws.autoscaling\"]}"}),
                )),
        )
        .await
        .unwrap();
    let target = cloud
        .create(
            &CreateRequest::new(R::EventTarget)
                .with_parent(rule.id.clone())
                .with_attrs(attrs(json!({"rule": rule.id, "arn": q.arn}))),
        )
        .await
        .unwrap();
    assert_eq!(target.attrs["arn"], json!(q.arn));
    // Deleting the rule removes its targets first.
    cloud.delete(R::EventRule, &rule.id).await.unwrap();
    cloud.delete(R::SqsQueue, &q.id).await.unwrap();
    assert!(
        cloud
            .list(&ListQuery::new(R::EventRule).with_names(["files-ASGLifecycle"]))
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn delete_cluster_removes_owned_and_keeps_shared() {
    let cluster = "del.example.com";
    let Some((_, cloud)) = moto_cloud(cluster, "ap-southeast-2").await else {
        return;
    };
    // A shared VPC and subnet the cluster uses but does not own.
    let shared_tags = BTreeMap::from([
        (
            format!("kubernetes.io/cluster/{cluster}"),
            "shared".to_owned(),
        ),
        ("Name".to_owned(), "shared".to_owned()),
    ]);
    let vpc = cloud
        .create(
            &CreateRequest::new(R::Vpc)
                .with_tags(shared_tags.clone())
                .with_attrs(attrs(json!({"cidr_block": "10.1.0.0/16"}))),
        )
        .await
        .unwrap();
    let shared_subnet = cloud
        .create(&CreateRequest::new(R::Subnet).with_tags(shared_tags.clone()).with_attrs(attrs(json!({"vpc_id": vpc.id, "cidr_block": "10.1.1.0/24", "availability_zone": "ap-southeast-2a"}))))
        .await
        .unwrap();
    // An untagged object in the same VPC.
    let untagged = cloud
        .create(&CreateRequest::new(R::RouteTable).with_attrs(attrs(json!({"vpc_id": vpc.id}))))
        .await
        .unwrap();
    // Owned objects, two groups referencing each other.
    let subnet = create(&cloud, R::Subnet, cluster, "own", json!({"vpc_id": vpc.id, "cidr_block": "10.1.2.0/24", "availability_zone": "ap-southeast-2a"})).await;
    let rtb = create(
        &cloud,
        R::RouteTable,
        cluster,
        "own",
        json!({"vpc_id": vpc.id}),
    )
    .await;
    cloud
        .create(
            &CreateRequest::new(R::RouteTableAssociation).with_attrs(attrs(
                json!({"route_table_id": rtb.id, "subnet_id": subnet.id}),
            )),
        )
        .await
        .unwrap();
    let mut sgs = Vec::new();
    for n in ["masters.del", "nodes.del"] {
        sgs.push(
            cloud
                .create(
                    &CreateRequest::new(R::SecurityGroup)
                        .with_name(n)
                        .with_tags(tags(cluster, n))
                        .with_attrs(attrs(json!({"vpc_id": vpc.id, "description": n}))),
                )
                .await
                .unwrap(),
        );
    }
    for (a, b) in [(0, 1), (1, 0)] {
        cloud
            .create(&CreateRequest::new(R::SecurityGroupRule).with_attrs(attrs(json!({"security_group_id": sgs[a].id, "type": "ingress", "protocol": "-1", "from_port": 0, "to_port": 0, "source_security_group_id": sgs[b].id}))))
            .await
            .unwrap();
    }
    let vol = create(&cloud, R::Volume, cluster, "a.etcd-main.del", json!({"availability_zone": "ap-southeast-2a", "size": 20, "type": "gp3", "encrypted": false})).await;
    cloud
        .create(&CreateRequest::new(R::KeyPair).with_tags(tags(cluster, "kubernetes.del")).with_attrs(attrs(json!({"key_name": "kubernetes.del.example.com", "public_key": include_str!("data/id_rsa.pub").trim()}))))
        .await
        .unwrap();

    let plan = find_cluster_resources(&cloud, cluster).await.unwrap();
    let ids: Vec<&str> = plan.iter().map(|r| r.id.as_str()).collect();
    for owned in [
        subnet.id.as_str(),
        rtb.id.as_str(),
        sgs[0].id.as_str(),
        sgs[1].id.as_str(),
        vol.id.as_str(),
        "kubernetes.del.example.com",
    ] {
        assert!(ids.contains(&owned), "{owned} missing from {ids:?}");
    }
    for kept in [
        vpc.id.as_str(),
        shared_subnet.id.as_str(),
        untagged.id.as_str(),
    ] {
        assert!(!ids.contains(&kept), "{kept} must not be deleted");
    }
    // Cross-group rules are revoked before the groups.
    let first_rule = plan
        .iter()
        .position(|r| r.resource_type == R::SecurityGroupRule)
        .unwrap();
    let first_group = plan
        .iter()
        .position(|r| r.resource_type == R::SecurityGroup)
        .unwrap();
    assert!(first_rule < first_group);

    let report = delete_cluster(
        &cloud,
        cluster,
        &DeleteOptions::default()
            .with_retry_delay(Duration::from_millis(100))
            .with_max_rounds(5),
    )
    .await
    .unwrap();
    assert!(report.is_complete(), "{report}");
    assert_eq!(report.deleted.len(), plan.len());
    assert!(
        find_cluster_resources(&cloud, cluster)
            .await
            .unwrap()
            .is_empty()
    );
    // Shared and untagged objects are untouched.
    assert!(cloud.get(R::Vpc, &vpc.id).await.unwrap().is_some());
    let s = cloud
        .get(R::Subnet, &shared_subnet.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(s.tags, shared_tags);
    assert!(
        cloud
            .get(R::RouteTable, &untagged.id)
            .await
            .unwrap()
            .is_some()
    );
}

/// The day-two calls of rolling update against moto: an ASG's members and the launch
/// template version each runs (`$Latest` resolved to a number), deregistration from the
/// group's target group, detach (tagged, capacity kept) and terminate (again, and of an
/// unknown instance: not errors).
#[tokio::test]
async fn rolling_update_calls_members_deregister_detach_terminate() {
    use kops_cloud_aws::AwsCloud;
    use kops_cloud_aws::cloud::DETACHED_TAG;
    let cluster = "day2.example.com";
    let region = "eu-central-1";
    let Some((ep, cloud)) = moto_cloud(cluster, region).await else {
        return;
    };
    let vpc = create(
        &cloud,
        R::Vpc,
        cluster,
        "day2",
        json!({"cidr_block": "10.2.0.0/16"}),
    )
    .await;
    let subnet = create(&cloud, R::Subnet, cluster, "a", json!({"vpc_id": vpc.id, "cidr_block": "10.2.1.0/24", "availability_zone": "eu-central-1a"})).await;
    let lt = cloud
        .create(
            &CreateRequest::new(R::LaunchTemplate)
                .with_name("nodes.day2.example.com")
                .with_tags(tags(cluster, "nodes.day2.example.com"))
                .with_attrs(attrs(
                    json!({"image_id": "ami-12c6146b", "instance_type": "t3.medium"}),
                )),
        )
        .await
        .unwrap();
    let tg = cloud
        .create(
            &CreateRequest::new(R::TargetGroup)
                .with_name("nodes-day2")
                .with_tags(tags(cluster, "nodes-day2"))
                .with_attrs(attrs(
                    json!({"port": 443, "protocol": "TCP", "vpc_id": vpc.id}),
                )),
        )
        .await
        .unwrap();
    let tg_arn = tg.id.clone();
    let asg = "nodes.day2.example.com";
    cloud
        .create(
            &CreateRequest::new(R::AutoscalingGroup)
                .with_name(asg)
                .with_tags(tags(cluster, asg))
                .with_attrs(attrs(json!({
                    "min_size": 2, "max_size": 3, "desired_capacity": 2,
                    "vpc_zone_identifier": [subnet.id],
                    "launch_template": {"id": lt.id, "version": "$Latest"},
                    "target_group_arns": [tg_arn],
                }))),
        )
        .await
        .unwrap();

    // Members and versions: all run version 1, which the group wants.
    let groups = cloud
        .group_members(&[asg.to_owned(), "absent.day2.example.com".to_owned()])
        .await
        .unwrap();
    assert_eq!(groups.len(), 1, "absent groups are left out");
    let g = &groups[0];
    assert_eq!((g.min_size, g.max_size, g.desired_capacity), (2, 3, 2));
    assert_eq!(g.launch_template, Some((lt.id.clone(), "1".to_owned())));
    assert_eq!(g.instances.len(), 2, "{g:?}");
    for m in &g.instances {
        assert_eq!(
            m.launch_template,
            Some((lt.id.clone(), "1".to_owned())),
            "{m:?}"
        );
    }
    let (first, second) = (g.instances[0].id.clone(), g.instances[1].id.clone());

    // A new version (an edited instance type): `$Latest` now resolves to 2. (AWS keeps
    // reporting the version each member was launched from, 1; moto reports the template's
    // current default version for every member, so which members are out of date cannot
    // be checked against moto: the mock cloud's tests cover it.)
    cloud
        .update(
            &UpdateRequest::new(R::LaunchTemplate, &lt.id)
                .with_attrs(attrs(json!({"instance_type": "m5.large"}))),
        )
        .await
        .unwrap();
    let g = &cloud.group_members(&[asg.to_owned()]).await.unwrap()[0];
    assert_eq!(g.launch_template, Some((lt.id.clone(), "2".to_owned())));
    assert!(
        g.instances
            .iter()
            .all(|m| m.launch_template.as_ref().map(|t| &t.0) == Some(&lt.id)),
        "{g:?}"
    );

    // Deregistration: the instance leaves the target group, the other stays.
    let sdk = aws_sdk_elasticloadbalancingv2::Client::from_conf(
        aws_sdk_elasticloadbalancingv2::config::Builder::from(&common::sdk_config(&ep))
            .region(aws_sdk_elasticloadbalancingv2::config::Region::new(region))
            .build(),
    );
    let registered = || async {
        let h = sdk
            .describe_target_health()
            .target_group_arn(&tg_arn)
            .send()
            .await
            .unwrap();
        h.target_health_descriptions()
            .iter()
            .filter_map(|d| d.target().and_then(|t| t.id()).map(str::to_owned))
            .collect::<Vec<String>>()
    };
    if !registered().await.contains(&first) {
        // moto does not register an ASG's instances in its target groups itself.
        sdk.register_targets()
            .target_group_arn(&tg_arn)
            .targets(
                aws_sdk_elasticloadbalancingv2::types::TargetDescription::builder()
                    .id(&first)
                    .build(),
            )
            .targets(
                aws_sdk_elasticloadbalancingv2::types::TargetDescription::builder()
                    .id(&second)
                    .build(),
            )
            .send()
            .await
            .unwrap();
    }
    assert!(registered().await.contains(&first));
    cloud.deregister_instance(asg, &first).await.unwrap();
    let now = registered().await;
    assert!(!now.contains(&first), "{now:?}");
    assert!(now.contains(&second), "{now:?}");
    // Again: not registered any more, not an error.
    cloud.deregister_instance(asg, &first).await.unwrap();
    let err = cloud
        .deregister_instance("absent.day2.example.com", &first)
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");

    // Detach: tagged with the group's name, out of the group, capacity kept.
    cloud.detach_instance(asg, &first).await.unwrap();
    let g = &cloud.group_members(&[asg.to_owned()]).await.unwrap()[0];
    assert!(!g.instances.iter().any(|m| m.id == first), "{g:?}");
    assert_eq!(g.desired_capacity, 2);
    cloud.clear_cache();
    let detached = cloud
        .list(
            &ListQuery::new(R::Instance)
                .with_tag(TagFilter::equals("KubernetesCluster", cluster))
                .with_tag(TagFilter::exists(DETACHED_TAG)),
        )
        .await
        .unwrap();
    assert_eq!(
        detached.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        [first.as_str()]
    );
    assert_eq!(detached[0].tags.get(DETACHED_TAG), Some(asg));
    // What `get instances` shows of a machine: its type and private address.
    assert!(
        detached[0]
            .attr_str("instance_type")
            .is_some_and(|t| !t.is_empty())
    );
    let ip = detached[0].attr_str("private_ip").unwrap_or_default();
    assert!(
        ip.parse::<std::net::Ipv4Addr>().is_ok(),
        "{:?}",
        detached[0]
    );

    // Terminate, twice, and an instance that never existed: none is an error.
    cloud.terminate_instance(&first).await.unwrap();
    cloud.terminate_instance(&first).await.unwrap();
    cloud
        .terminate_instance("i-0123456789abcdef0")
        .await
        .unwrap();
    let ec2 = aws_sdk_ec2::Client::from_conf(
        aws_sdk_ec2::config::Builder::from(&common::sdk_config(&ep))
            .region(aws_sdk_ec2::config::Region::new(region))
            .build(),
    );
    let state = ec2
        .describe_instances()
        .instance_ids(&first)
        .send()
        .await
        .unwrap()
        .reservations()[0]
        .instances()[0]
        .state()
        .and_then(|s| s.name())
        .map(|s| s.as_str().to_owned());
    assert!(
        matches!(state.as_deref(), Some("terminated" | "shutting-down")),
        "{state:?}"
    );
    fresh(&cloud, cluster).await;
}
