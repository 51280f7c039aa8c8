//! The cloud conformance suite: `pub async fn`s over `&dyn AwsCloud` that every
//! implementation must pass: the in-memory mock (`kops-mock`), and the SDK backend
//! against an emulator. It lives next to the trait, as `object_store` keeps its
//! integration suite next to `ObjectStore`.
//!
//! Each function creates what it needs under names derived from `cluster` (use a fresh
//! one per run), finds it again by tags, changes it, deletes it, and checks not-found
//! behaviour and that filters never return another cluster's objects. Cloud errors are
//! returned; behaviour violations panic with a message (they are test assertions).
//!
//! Enabled with the `conformance` feature.

use std::collections::BTreeMap;

use serde_json::{Value as Json, json};

use crate::cloud::{
    AwsCloud, AwsCloudExt, CloudError as Error, CloudResult as Result, CreateRequest, ImageQuery,
    ListQuery, Resource, ResourceType, TagFilter, UpdateRequest, ZoneQuery,
};

/// Tags of an object, by key.
pub type Tags = BTreeMap<String, String>;

type R = ResourceType;

/// A well-formed OpenSSH RSA public key (AWS and moto reject malformed key material);
/// its private half was never kept.
const TEST_PUBLIC_KEY: &str = concat!(
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCM/O+4uTXlglTw9QR/RE4l5UX6tMAGWC",
    "cKgihNY2O0O5X9d2iT6zizIe9VghQBRIzteAebX2040cSx6amnqu60Pj5qaamfDLVwTUN3",
    "lGviJjJYyNVwtUZcK1UYiP3k/JuF5s+mXWch6mbm08KvNA/b1pLganXsk9jmmclc7m0wWa",
    "cwP1cthH500DApK9s71TghBQr3L4Kmhgl0o9sB0UIyixyyqSUigoUXMHPwzBcYV0mOJB9y",
    "cd3TunrIw78Ca1IAB+fSzCACtu7oghStTW4DY5uJFO8dR+1YlRRHR4xcGBTQwEdnfoX0o8",
    "Am3CXmVs/r2yIF8Ogsdlz5eQTkcz3F conformance@example",
);

/// kOps' tags for an object `name` owned by `cluster`.
pub fn owned_tags(cluster: &str, name: &str) -> Tags {
    [
        ("Name".to_owned(), name.to_owned()),
        ("KubernetesCluster".to_owned(), cluster.to_owned()),
        (
            format!("kubernetes.io/cluster/{cluster}"),
            "owned".to_owned(),
        ),
    ]
    .into()
}

fn attrs<const N: usize>(pairs: [(&str, Json); N]) -> BTreeMap<String, Json> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

async fn make(
    cloud: &dyn AwsCloud,
    rt: ResourceType,
    name: Option<&str>,
    tags: Tags,
    a: BTreeMap<String, Json>,
) -> Result<Resource> {
    let mut req = CreateRequest::new(rt).with_tags(tags).with_attrs(a);
    if let Some(n) = name {
        req = req.with_name(n);
    }
    let r = cloud.create(&req).await?;
    assert!(!r.id.is_empty(), "create {rt}: empty id");
    assert_eq!(r.resource_type, rt, "create {rt}: wrong type");
    Ok(r)
}

async fn must_get(cloud: &dyn AwsCloud, rt: ResourceType, id: &str) -> Result<Resource> {
    cloud.get(rt, id).await?.ok_or_else(|| Error::NotFound {
        what: format!("{rt} {id} right after it was created"),
    })
}

async fn gone(cloud: &dyn AwsCloud, rt: ResourceType, id: &str) -> Result<()> {
    cloud.delete(rt, id).await?;
    assert!(
        cloud.get(rt, id).await?.is_none(),
        "{rt} {id} still listed after delete"
    );
    // Deleting again is not an error.
    cloud.delete(rt, id).await?;
    Ok(())
}

fn ids(rs: &[Resource]) -> Vec<&str> {
    rs.iter().map(|r| r.id.as_str()).collect()
}

/// Account and zones answer.
pub async fn account_and_zones(cloud: &dyn AwsCloud) -> Result<()> {
    let a = cloud.account().await?;
    assert_eq!(a.account_id.len(), 12, "account id {:?}", a.account_id);
    assert!(!a.region.is_empty());
    let z = cloud.zones().await?;
    assert!(!z.is_empty(), "no zones");
    let mut sorted = z.clone();
    sorted.sort();
    assert_eq!(z, sorted, "zones are sorted");
    assert!(
        z.iter().all(|z| z.starts_with(&a.region)),
        "zones {z:?} of {}",
        a.region
    );
    Ok(())
}

/// VPC, subnet, internet gateway, route table, route, association, elastic IP, NAT
/// gateway, security group and rule: create, find by tags, update, delete in order.
pub async fn network(cloud: &dyn AwsCloud, cluster: &str) -> Result<()> {
    let zone = cloud.zones().await?.into_iter().next().unwrap_or_default();
    let vpc = network_vpc(cloud, cluster).await?;
    let subnet_name = format!("{zone}.{cluster}");
    let subnet = network_subnet(cloud, cluster, &zone, &subnet_name, &vpc).await?;
    let (igw, rt, route, assoc) = network_routes(cloud, cluster, &vpc, &subnet).await?;
    let (eip, nat) = network_nat(cloud, cluster, &subnet_name, &subnet).await?;
    let (sg, rule) = network_security_group(cloud, cluster, &vpc).await?;

    gone(cloud, R::SecurityGroupRule, &rule.id).await?;
    gone(cloud, R::SecurityGroup, &sg.id).await?;
    gone(cloud, R::NatGateway, &nat.id).await?;
    gone(cloud, R::ElasticIp, &eip.id).await?;
    gone(cloud, R::RouteTableAssociation, &assoc.id).await?;
    gone(cloud, R::Route, &route.id).await?;
    gone(cloud, R::RouteTable, &rt.id).await?;
    gone(cloud, R::InternetGateway, &igw.id).await?;
    gone(cloud, R::Subnet, &subnet.id).await?;
    gone(cloud, R::Vpc, &vpc.id).await?;
    assert!(cloud.list_for_cluster(R::Vpc, cluster).await?.is_empty());
    Ok(())
}

/// The VPC: created, found by the cluster's tags and by Name, updated, and its immutable
/// CIDR refused.
async fn network_vpc(cloud: &dyn AwsCloud, cluster: &str) -> Result<Resource> {
    let vpc = make(
        cloud,
        R::Vpc,
        None,
        owned_tags(cluster, cluster),
        attrs([
            ("cidr_block", json!("10.100.0.0/16")),
            ("enable_dns_hostnames", json!(true)),
            ("enable_dns_support", json!(true)),
        ]),
    )
    .await?;
    assert_eq!(vpc.attr_str("cidr_block"), Some("10.100.0.0/16"));
    assert_eq!(vpc.attrs.get("enable_dns_hostnames"), Some(&json!(true)));

    // Found by the cluster's tags, by Name, and not by another cluster's.
    let mine = cloud.list_for_cluster(R::Vpc, cluster).await?;
    assert_eq!(ids(&mine), [vpc.id.as_str()], "list_for_cluster({cluster})");
    let by_name = cloud
        .list(
            &ListQuery::new(R::Vpc)
                .with_tag(TagFilter::equals("KubernetesCluster", cluster))
                .with_tag(TagFilter::equals("Name", cluster)),
        )
        .await?;
    assert_eq!(ids(&by_name), [vpc.id.as_str()]);
    let wrong_name = cloud
        .list(
            &ListQuery::new(R::Vpc)
                .with_tag(TagFilter::equals("KubernetesCluster", cluster))
                .with_tag(TagFilter::equals("Name", "someone-else")),
        )
        .await?;
    assert!(wrong_name.is_empty(), "tag filters are ANDed");
    let other = format!("other-{cluster}");
    assert!(
        !ids(&cloud.list_for_cluster(R::Vpc, &other).await?).contains(&vpc.id.as_str()),
        "another cluster's filter returned {}",
        vpc.id
    );

    // Update attributes and tags.
    let mut new_tags = owned_tags(cluster, cluster);
    new_tags.insert("extra".into(), "1".into());
    let updated = cloud
        .update(
            &UpdateRequest::new(R::Vpc, &vpc.id)
                .with_attrs(attrs([("enable_dns_hostnames", json!(false))]))
                .with_tags(new_tags.clone()),
        )
        .await?;
    assert_eq!(
        updated.attrs.get("enable_dns_hostnames"),
        Some(&json!(false))
    );
    assert_eq!(updated.tags, new_tags);
    let again = must_get(cloud, R::Vpc, &vpc.id).await?;
    assert_eq!(again.tags, new_tags, "tag update persisted");

    // What the table of facts calls immutable is refused, naming the attribute, and
    // nothing changes.
    let refused = cloud
        .update(
            &UpdateRequest::new(R::Vpc, &vpc.id)
                .with_attrs(attrs([("cidr_block", json!("10.101.0.0/16"))])),
        )
        .await;
    assert!(
        matches!(&refused, Err(Error::Invalid { field, .. }) if field == "aws_vpc.cidr_block"),
        "changing a VPC's CIDR: {refused:?}"
    );
    let again = must_get(cloud, R::Vpc, &vpc.id).await?;
    assert_eq!(again.attr_str("cidr_block"), Some("10.100.0.0/16"));
    Ok(vpc)
}

/// A subnet of `vpc` in `zone`, found by the cluster's tags.
async fn network_subnet(
    cloud: &dyn AwsCloud,
    cluster: &str,
    zone: &str,
    subnet_name: &str,
    vpc: &Resource,
) -> Result<Resource> {
    let subnet = make(
        cloud,
        R::Subnet,
        None,
        owned_tags(cluster, subnet_name),
        attrs([
            ("vpc_id", json!(vpc.id)),
            ("availability_zone", json!(zone)),
            ("cidr_block", json!("10.100.32.0/19")),
        ]),
    )
    .await?;
    assert_eq!(subnet.attr_str("vpc_id"), Some(vpc.id.as_str()));
    assert_eq!(subnet.attr_str("availability_zone"), Some(zone));
    let subnets = cloud.list_for_cluster(R::Subnet, cluster).await?;
    assert_eq!(ids(&subnets), [subnet.id.as_str()]);
    Ok(subnet)
}

/// An internet gateway, a route table with a default route through it, and the table's
/// association with `subnet`: (gateway, table, route, association).
async fn network_routes(
    cloud: &dyn AwsCloud,
    cluster: &str,
    vpc: &Resource,
    subnet: &Resource,
) -> Result<(Resource, Resource, Resource, Resource)> {
    let igw = make(
        cloud,
        R::InternetGateway,
        None,
        owned_tags(cluster, cluster),
        attrs([("vpc_id", json!(vpc.id))]),
    )
    .await?;
    assert_eq!(igw.attr_str("vpc_id"), Some(vpc.id.as_str()));

    let rt = make(
        cloud,
        R::RouteTable,
        None,
        owned_tags(cluster, cluster),
        attrs([("vpc_id", json!(vpc.id))]),
    )
    .await?;
    let route = cloud
        .create(
            &CreateRequest::new(R::Route)
                .with_parent(&rt.id)
                .with_attrs(attrs([
                    ("route_table_id", json!(rt.id)),
                    ("destination_cidr_block", json!("0.0.0.0/0")),
                    ("gateway_id", json!(igw.id)),
                ])),
        )
        .await?;
    let routes = cloud
        .list(&ListQuery::new(R::Route).with_parent(&rt.id))
        .await?;
    let found = routes
        .iter()
        .find(|r| r.attr_str("destination_cidr_block") == Some("0.0.0.0/0"))
        .unwrap_or_else(|| panic!("route to 0.0.0.0/0 not listed under {}: {routes:?}", rt.id));
    assert_eq!(found.id, route.id);
    assert_eq!(found.attr_str("gateway_id"), Some(igw.id.as_str()));
    let assoc = cloud
        .create(
            &CreateRequest::new(R::RouteTableAssociation)
                .with_parent(&rt.id)
                .with_attrs(attrs([
                    ("route_table_id", json!(rt.id)),
                    ("subnet_id", json!(subnet.id)),
                ])),
        )
        .await?;
    let assocs = cloud
        .list(&ListQuery::new(R::RouteTableAssociation).with_parent(&rt.id))
        .await?;
    assert_eq!(ids(&assocs), [assoc.id.as_str()]);
    Ok((igw, rt, route, assoc))
}

/// An elastic IP and a NAT gateway in `subnet` using it: (elastic IP, NAT gateway).
async fn network_nat(
    cloud: &dyn AwsCloud,
    cluster: &str,
    subnet_name: &str,
    subnet: &Resource,
) -> Result<(Resource, Resource)> {
    let eip = make(
        cloud,
        R::ElasticIp,
        None,
        owned_tags(cluster, subnet_name),
        attrs([("domain", json!("vpc"))]),
    )
    .await?;
    assert!(eip.attr_str("public_ip").is_some_and(|p| !p.is_empty()));
    let nat = make(
        cloud,
        R::NatGateway,
        None,
        owned_tags(cluster, subnet_name),
        attrs([
            ("subnet_id", json!(subnet.id)),
            ("allocation_id", json!(eip.id)),
        ]),
    )
    .await?;
    assert_eq!(nat.attr_str("subnet_id"), Some(subnet.id.as_str()));
    Ok((eip, nat))
}

/// A security group found by name and an ingress rule listed under it: (group, rule).
async fn network_security_group(
    cloud: &dyn AwsCloud,
    cluster: &str,
    vpc: &Resource,
) -> Result<(Resource, Resource)> {
    let sg_name = format!("nodes.{cluster}");
    let sg = make(
        cloud,
        R::SecurityGroup,
        Some(&sg_name),
        owned_tags(cluster, &sg_name),
        attrs([
            ("vpc_id", json!(vpc.id)),
            ("description", json!("Security group for nodes")),
        ]),
    )
    .await?;
    assert_eq!(sg.name.as_deref(), Some(sg_name.as_str()));
    let by_name = cloud
        .list(&ListQuery::new(R::SecurityGroup).with_names([sg_name.clone()]))
        .await?;
    assert_eq!(ids(&by_name), [sg.id.as_str()]);
    let rule = cloud
        .create(
            &CreateRequest::new(R::SecurityGroupRule)
                .with_parent(&sg.id)
                .with_attrs(attrs([
                    ("security_group_id", json!(sg.id)),
                    ("type", json!("ingress")),
                    ("protocol", json!("tcp")),
                    ("from_port", json!(22)),
                    ("to_port", json!(22)),
                    ("cidr_blocks", json!(["10.0.0.0/8"])),
                ])),
        )
        .await?;
    let rules = cloud
        .list(&ListQuery::new(R::SecurityGroupRule).with_parent(&sg.id))
        .await?;
    let r = rules
        .iter()
        .find(|r| r.id == rule.id)
        .unwrap_or_else(|| panic!("rule {} not listed under {}", rule.id, sg.id));
    assert_eq!(r.attrs.get("from_port"), Some(&json!(22)));
    assert_eq!(r.attr_str("type"), Some("ingress"));
    Ok((sg, rule))
}

/// Role, inline policy and instance profile: create, find by name, update, delete.
pub async fn iam(cloud: &dyn AwsCloud, cluster: &str) -> Result<()> {
    let name = format!("nodes.{cluster}");
    let assume = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}"#;
    let role = make(
        cloud,
        R::IamRole,
        Some(&name),
        owned_tags(cluster, &name),
        attrs([("assume_role_policy", json!(assume))]),
    )
    .await?;
    assert!(
        role.arn
            .as_deref()
            .is_some_and(|a| a.ends_with(&format!(":role/{name}")))
    );
    let found = cloud
        .list(&ListQuery::new(R::IamRole).with_names([name.clone()]))
        .await?;
    assert_eq!(ids(&found), [role.id.as_str()]);
    let tagged = cloud.list_for_cluster(R::IamRole, cluster).await?;
    assert_eq!(ids(&tagged), [role.id.as_str()]);

    let policy_doc = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["ec2:DescribeInstances"],"Resource":"*"}]}"#;
    let policy = cloud
        .create(
            &CreateRequest::new(R::IamRolePolicy)
                .with_name(&name)
                .with_parent(&name)
                .with_attrs(attrs([
                    ("role", json!(name)),
                    ("policy", json!(policy_doc)),
                ])),
        )
        .await?;
    let policies = cloud
        .list(&ListQuery::new(R::IamRolePolicy).with_parent(&name))
        .await?;
    assert_eq!(ids(&policies), [policy.id.as_str()]);
    assert_eq!(policies[0].attr_str("policy"), Some(policy_doc));

    let profile = make(
        cloud,
        R::IamInstanceProfile,
        Some(&name),
        owned_tags(cluster, &name),
        attrs([("role", json!(name))]),
    )
    .await?;
    assert_eq!(profile.attr_str("role"), Some(name.as_str()));

    let assume2 = assume.replace("ec2.amazonaws.com", "ec2.amazonaws.com.cn");
    let updated = cloud
        .update(
            &UpdateRequest::new(R::IamRole, &role.id)
                .with_attrs(attrs([("assume_role_policy", json!(assume2))])),
        )
        .await?;
    assert_eq!(
        updated.attr_str("assume_role_policy"),
        Some(assume2.as_str())
    );

    gone(cloud, R::IamInstanceProfile, &profile.id).await?;
    gone(cloud, R::IamRolePolicy, &policy.id).await?;
    gone(cloud, R::IamRole, &role.id).await?;
    Ok(())
}

/// Launch template, autoscaling group (no instances) and lifecycle hook, with an EBS
/// volume and a key pair.
pub async fn compute(cloud: &dyn AwsCloud, cluster: &str) -> Result<()> {
    let zone = cloud.zones().await?.into_iter().next().unwrap_or_default();
    let vpc = make(
        cloud,
        R::Vpc,
        None,
        owned_tags(cluster, cluster),
        attrs([("cidr_block", json!("10.101.0.0/16"))]),
    )
    .await?;
    let subnet = make(
        cloud,
        R::Subnet,
        None,
        owned_tags(cluster, cluster),
        attrs([
            ("vpc_id", json!(vpc.id)),
            ("availability_zone", json!(zone)),
            ("cidr_block", json!("10.101.0.0/24")),
        ]),
    )
    .await?;
    let name = format!("nodes.{cluster}");
    let lt = compute_launch_template(cloud, cluster, &name).await?;
    let (asg, hook) = compute_group(cloud, cluster, &name, &subnet, &lt).await?;
    let (vol, key) = compute_volume_and_key(cloud, cluster, &zone).await?;

    gone(cloud, R::KeyPair, &key.id).await?;
    gone(cloud, R::Volume, &vol.id).await?;
    gone(cloud, R::LifecycleHook, &hook.id).await?;
    gone(cloud, R::AutoscalingGroup, &asg.id).await?;
    gone(cloud, R::LaunchTemplate, &lt.id).await?;
    gone(cloud, R::Subnet, &subnet.id).await?;
    gone(cloud, R::Vpc, &vpc.id).await?;
    Ok(())
}

/// A launch template: created, then updated into a new version that keeps the unchanged
/// fields.
async fn compute_launch_template(
    cloud: &dyn AwsCloud,
    cluster: &str,
    name: &str,
) -> Result<Resource> {
    let lt = make(
        cloud,
        R::LaunchTemplate,
        Some(name),
        owned_tags(cluster, name),
        attrs([
            ("image_id", json!("ami-12345678")),
            ("instance_type", json!("t3.medium")),
            ("user_data", json!("IyEvYmluL3NoCg==")),
        ]),
    )
    .await?;
    assert_eq!(lt.attr_str("instance_type"), Some("t3.medium"));
    let version = |r: &Resource| -> Option<i64> {
        match r.attrs.get("latest_version")? {
            Json::Number(n) => n.as_i64(),
            Json::String(s) => s.parse().ok(),
            _ => None,
        }
    };
    let v1 = version(&lt);
    let lt2 = cloud
        .update(
            &UpdateRequest::new(R::LaunchTemplate, &lt.id)
                .with_attrs(attrs([("instance_type", json!("m5.large"))])),
        )
        .await?;
    assert_eq!(lt2.attr_str("instance_type"), Some("m5.large"));
    assert_eq!(
        lt2.attr_str("image_id"),
        Some("ami-12345678"),
        "unchanged fields kept"
    );
    let v2 = version(&lt2);
    assert!(v1.is_some(), "latest_version is reported");
    assert!(v2 > v1, "a change makes a new version ({v1:?} -> {v2:?})");
    Ok(lt)
}

/// An autoscaling group (no instances) on `lt` in `subnet`, updated, and a lifecycle hook
/// listed under it: (group, hook).
async fn compute_group(
    cloud: &dyn AwsCloud,
    cluster: &str,
    name: &str,
    subnet: &Resource,
    lt: &Resource,
) -> Result<(Resource, Resource)> {
    let asg = make(
        cloud,
        R::AutoscalingGroup,
        Some(name),
        owned_tags(cluster, name),
        attrs([
            ("min_size", json!(0)),
            ("max_size", json!(2)),
            ("vpc_zone_identifier", json!([subnet.id])),
            (
                "launch_template",
                json!({"id": lt.id, "version": "$Latest"}),
            ),
        ]),
    )
    .await?;
    assert_eq!(asg.id, name);
    let found = cloud.list_for_cluster(R::AutoscalingGroup, cluster).await?;
    assert_eq!(ids(&found), [name]);
    let grown = cloud
        .update(
            &UpdateRequest::new(R::AutoscalingGroup, &asg.id)
                .with_attrs(attrs([("max_size", json!(3))])),
        )
        .await?;
    assert_eq!(grown.attrs.get("max_size"), Some(&json!(3)));
    assert_eq!(
        grown.attrs.get("min_size"),
        Some(&json!(0)),
        "unchanged fields kept"
    );

    let hook = cloud
        .create(
            &CreateRequest::new(R::LifecycleHook)
                .with_name("kops-warmpool")
                .with_parent(name)
                .with_attrs(attrs([
                    ("autoscaling_group_name", json!(name)),
                    (
                        "lifecycle_transition",
                        json!("autoscaling:EC2_INSTANCE_LAUNCHING"),
                    ),
                    ("default_result", json!("ABANDON")),
                    ("heartbeat_timeout", json!(600)),
                ])),
        )
        .await?;
    let hooks = cloud
        .list(&ListQuery::new(R::LifecycleHook).with_parent(name))
        .await?;
    assert_eq!(ids(&hooks), [hook.id.as_str()]);
    Ok((asg, hook))
}

/// An EBS volume in `zone`, grown, and a key pair: (volume, key pair).
async fn compute_volume_and_key(
    cloud: &dyn AwsCloud,
    cluster: &str,
    zone: &str,
) -> Result<(Resource, Resource)> {
    let vol_name = format!("a.etcd-main.{cluster}");
    let vol = make(
        cloud,
        R::Volume,
        None,
        owned_tags(cluster, &vol_name),
        attrs([
            ("availability_zone", json!(zone)),
            ("size", json!(20)),
            ("type", json!("gp3")),
            ("encrypted", json!(false)),
        ]),
    )
    .await?;
    let bigger = cloud
        .update(&UpdateRequest::new(R::Volume, &vol.id).with_attrs(attrs([("size", json!(30))])))
        .await?;
    assert_eq!(bigger.attrs.get("size"), Some(&json!(30)));

    let key_name = format!("kubernetes.{cluster}-00:11");
    let key = make(
        cloud,
        R::KeyPair,
        Some(&key_name),
        owned_tags(cluster, &key_name),
        attrs([
            ("key_name", json!(key_name)),
            ("public_key", json!(TEST_PUBLIC_KEY)),
        ]),
    )
    .await?;
    assert_eq!(key.id, key_name);
    Ok((vol, key))
}

/// Network load balancer, target group and listener.
pub async fn load_balancer(cloud: &dyn AwsCloud, cluster: &str, suffix: &str) -> Result<()> {
    let zones = cloud.zones().await?;
    let vpc = make(
        cloud,
        R::Vpc,
        None,
        owned_tags(cluster, cluster),
        attrs([("cidr_block", json!("10.102.0.0/16"))]),
    )
    .await?;
    let mut subnets = Vec::new();
    for (i, z) in zones.iter().take(2).enumerate() {
        subnets.push(
            make(
                cloud,
                R::Subnet,
                None,
                owned_tags(cluster, cluster),
                attrs([
                    ("vpc_id", json!(vpc.id)),
                    ("availability_zone", json!(z)),
                    ("cidr_block", json!(format!("10.102.{i}.0/24"))),
                ]),
            )
            .await?,
        );
    }
    let lb_name = format!("api-{suffix}");
    let lb = make(
        cloud,
        R::LoadBalancer,
        Some(&lb_name),
        owned_tags(cluster, &format!("api.{cluster}")),
        attrs([
            ("load_balancer_type", json!("network")),
            ("internal", json!(false)),
            (
                "subnet_mapping",
                json!(
                    subnets
                        .iter()
                        .map(|s| json!({"subnet_id": s.id}))
                        .collect::<Vec<_>>()
                ),
            ),
        ]),
    )
    .await?;
    assert_eq!(lb.name.as_deref(), Some(lb_name.as_str()));
    assert!(lb.attr_str("dns_name").is_some_and(|d| !d.is_empty()));
    let tg_name = format!("tcp-{suffix}");
    let tg = make(
        cloud,
        R::TargetGroup,
        Some(&tg_name),
        owned_tags(cluster, &tg_name),
        attrs([
            ("port", json!(443)),
            ("protocol", json!("TCP")),
            ("vpc_id", json!(vpc.id)),
        ]),
    )
    .await?;
    let listener = cloud
        .create(
            &CreateRequest::new(R::Listener)
                .with_parent(&lb.id)
                .with_attrs(attrs([
                    ("load_balancer_arn", json!(lb.id)),
                    ("port", json!(443)),
                    ("protocol", json!("TCP")),
                    (
                        "default_action",
                        json!([{"type": "forward", "target_group_arn": tg.id}]),
                    ),
                ])),
        )
        .await?;
    let ls = cloud
        .list(&ListQuery::new(R::Listener).with_parent(&lb.id))
        .await?;
    assert_eq!(ids(&ls), [listener.id.as_str()]);
    let lbs = cloud.list_for_cluster(R::LoadBalancer, cluster).await?;
    assert_eq!(ids(&lbs), [lb.id.as_str()]);
    let tgs = cloud
        .list(&ListQuery::new(R::TargetGroup).with_names([tg_name.clone()]))
        .await?;
    assert_eq!(ids(&tgs), [tg.id.as_str()]);

    gone(cloud, R::Listener, &listener.id).await?;
    gone(cloud, R::LoadBalancer, &lb.id).await?;
    gone(cloud, R::TargetGroup, &tg.id).await?;
    for s in &subnets {
        gone(cloud, R::Subnet, &s.id).await?;
    }
    gone(cloud, R::Vpc, &vpc.id).await?;
    Ok(())
}

/// Hosted zone and record set: create, find, upsert, delete.
pub async fn dns(cloud: &dyn AwsCloud, cluster: &str) -> Result<()> {
    let zone = make(
        cloud,
        R::HostedZone,
        None,
        owned_tags(cluster, cluster),
        attrs([("name", json!(cluster))]),
    )
    .await?;
    let found = cloud
        .hosted_zones(&ZoneQuery::Name(cluster.to_owned()))
        .await?;
    assert!(
        found.iter().any(|z| z.id == zone.id),
        "zone {cluster} not found by name"
    );
    let rec_name = format!("api.{cluster}");
    let rec = cloud
        .create(
            &CreateRequest::new(R::RecordSet)
                .with_parent(&zone.id)
                .with_attrs(attrs([
                    ("zone_id", json!(zone.id)),
                    ("name", json!(rec_name)),
                    ("type", json!("A")),
                    ("ttl", json!(60)),
                    ("records", json!(["203.0.113.10"])),
                ])),
        )
        .await?;
    let recs = cloud
        .list(&ListQuery::new(R::RecordSet).with_parent(&zone.id))
        .await?;
    let r = recs
        .iter()
        .find(|r| r.id == rec.id)
        .unwrap_or_else(|| panic!("record {} not listed: {recs:?}", rec.id));
    assert_eq!(r.attrs.get("records"), Some(&json!(["203.0.113.10"])));
    let up = cloud
        .update(
            &UpdateRequest::new(R::RecordSet, &rec.id)
                .with_attrs(attrs([("records", json!(["203.0.113.11"]))])),
        )
        .await?;
    assert_eq!(up.attrs.get("records"), Some(&json!(["203.0.113.11"])));
    gone(cloud, R::RecordSet, &rec.id).await?;
    gone(cloud, R::HostedZone, &zone.id).await?;
    Ok(())
}

/// SQS queue, EventBridge rule and target.
pub async fn messaging(cloud: &dyn AwsCloud, cluster: &str) -> Result<()> {
    let qname = format!("{}-nth", cluster.replace('.', "-"));
    let q = make(
        cloud,
        R::SqsQueue,
        Some(&qname),
        owned_tags(cluster, &qname),
        attrs([("message_retention_seconds", json!(300))]),
    )
    .await?;
    let arn = q.arn.clone().unwrap_or_default();
    assert!(arn.ends_with(&qname), "queue arn {arn}");
    let found = cloud.list_for_cluster(R::SqsQueue, cluster).await?;
    assert_eq!(ids(&found), [q.id.as_str()]);
    let up = cloud
        .update(
            &UpdateRequest::new(R::SqsQueue, &q.id)
                .with_attrs(attrs([("message_retention_seconds", json!(600))])),
        )
        .await?;
    assert_eq!(up.attrs.get("message_retention_seconds"), Some(&json!(600)));

    let rule_name = format!("{}-ASGLifecycle", cluster.replace('.', "-"));
    let rule = make(
        cloud,
        R::EventRule,
        Some(&rule_name),
        owned_tags(cluster, &rule_name),
        attrs([(
            "event_pattern",
            json!(r#"{"source":["aws.autoscaling"],"detail-type":["EC2 Instance-terminate Lifecycle Action"]}"#),
        )]),
    )
    .await?;
    let target = cloud
        .create(
            &CreateRequest::new(R::EventTarget)
                .with_parent(&rule_name)
                .with_attrs(attrs([
                    ("rule", json!(rule_name)),
                    ("target_id", json!("1")),
                    ("arn", json!(arn)),
                ])),
        )
        .await?;
    let targets = cloud
        .list(&ListQuery::new(R::EventTarget).with_parent(&rule_name))
        .await?;
    assert_eq!(ids(&targets), [target.id.as_str()]);
    gone(cloud, R::EventTarget, &target.id).await?;
    gone(cloud, R::EventRule, &rule.id).await?;
    gone(cloud, R::SqsQueue, &q.id).await?;
    Ok(())
}

/// S3 objects in an existing `bucket`.
pub async fn objects(cloud: &dyn AwsCloud, bucket: &str, prefix: &str) -> Result<()> {
    let key = format!("{prefix}/cluster-completed.spec");
    let o = cloud
        .create(
            &CreateRequest::new(R::S3Object)
                .with_parent(bucket)
                .with_attrs(attrs([
                    ("bucket", json!(bucket)),
                    ("key", json!(key)),
                    ("content", json!("kind: Cluster\n")),
                    ("server_side_encryption", json!("AES256")),
                ])),
        )
        .await?;
    let listed = cloud
        .list(&ListQuery::new(R::S3Object).with_parent(bucket))
        .await?;
    let got = listed
        .iter()
        .find(|r| r.id == o.id)
        .unwrap_or_else(|| panic!("object {} not listed", o.id));
    assert_eq!(got.attr_str("content"), Some("kind: Cluster\n"));
    let up = cloud
        .update(
            &UpdateRequest::new(R::S3Object, &o.id)
                .with_attrs(attrs([("content", json!("kind: Cluster\nspec: {}\n"))])),
        )
        .await?;
    assert_eq!(up.attr_str("content"), Some("kind: Cluster\nspec: {}\n"));
    gone(cloud, R::S3Object, &o.id).await?;
    Ok(())
}

/// Missing objects: `get` is `None`, `update` is `NotFound`, `delete` succeeds; an image
/// and a zone that do not exist are empty answers.
pub async fn not_found(cloud: &dyn AwsCloud) -> Result<()> {
    for (rt, id) in [
        (R::Vpc, "vpc-0000000000dead"),
        (R::Subnet, "subnet-0000000000dead"),
        (R::SecurityGroup, "sg-0000000000dead"),
        (R::IamRole, "no-such-role-kops-conformance"),
        (R::AutoscalingGroup, "no-such-group-kops-conformance"),
    ] {
        assert!(
            cloud.get(rt, id).await?.is_none(),
            "{rt} {id} should not exist"
        );
        let res = cloud
            .update(&UpdateRequest::new(rt, id).with_attrs(attrs([("x", json!(1))])))
            .await;
        assert!(
            matches!(res, Err(Error::NotFound { .. })),
            "update of missing {rt} {id} must be NotFound, got {res:?}"
        );
        cloud.delete(rt, id).await?;
    }
    assert!(
        cloud
            .images(&ImageQuery::parse("ubuntu/images/no-such-image-kops"))
            .await?
            .is_empty()
    );
    assert!(
        cloud
            .hosted_zones(&ZoneQuery::Name("no-such-zone.kops.invalid".into()))
            .await?
            .is_empty()
    );
    Ok(())
}

/// Two clusters side by side, plus a shared object: each cluster's filters return its own
/// objects (and the one shared with it), never the other cluster's.
pub async fn cluster_isolation(cloud: &dyn AwsCloud, a: &str, b: &str) -> Result<()> {
    let va = make(
        cloud,
        R::Vpc,
        None,
        owned_tags(a, a),
        attrs([("cidr_block", json!("10.110.0.0/16"))]),
    )
    .await?;
    let vb = make(
        cloud,
        R::Vpc,
        None,
        owned_tags(b, b),
        attrs([("cidr_block", json!("10.111.0.0/16"))]),
    )
    .await?;
    let shared_tags: Tags = [(format!("kubernetes.io/cluster/{a}"), "shared".to_owned())].into();
    let vs = make(
        cloud,
        R::Vpc,
        None,
        shared_tags,
        attrs([("cidr_block", json!("10.112.0.0/16"))]),
    )
    .await?;
    let la = cloud.list_for_cluster(R::Vpc, a).await?;
    let lb = cloud.list_for_cluster(R::Vpc, b).await?;
    assert_eq!(ids(&la), sorted([va.id.as_str(), vs.id.as_str()]));
    assert_eq!(ids(&lb), [vb.id.as_str()]);
    let owned_a = cloud
        .list(&ListQuery::new(R::Vpc).with_tag(TagFilter::equals(
            format!("kubernetes.io/cluster/{a}"),
            "owned",
        )))
        .await?;
    assert_eq!(
        ids(&owned_a),
        [va.id.as_str()],
        "owned filter excludes shared objects"
    );
    for v in [&va, &vb, &vs] {
        gone(cloud, R::Vpc, &v.id).await?;
    }
    Ok(())
}

fn sorted<const N: usize>(mut v: [&str; N]) -> [&str; N] {
    v.sort();
    v
}

/// Every check above, with names derived from `prefix` (e.g. a random token), and
/// `bucket` an existing S3 bucket.
pub async fn run_all(cloud: &dyn AwsCloud, prefix: &str, bucket: &str) -> Result<()> {
    account_and_zones(cloud).await?;
    not_found(cloud).await?;
    network(cloud, &format!("net-{prefix}.example.com")).await?;
    iam(cloud, &format!("iam-{prefix}.example.com")).await?;
    compute(cloud, &format!("cmp-{prefix}.example.com")).await?;
    load_balancer(cloud, &format!("lb-{prefix}.example.com"), prefix).await?;
    dns(cloud, &format!("dns-{prefix}.example.com")).await?;
    messaging(cloud, &format!("msg-{prefix}.example.com")).await?;
    objects(cloud, bucket, &format!("obj-{prefix}")).await?;
    cluster_isolation(
        cloud,
        &format!("a-{prefix}.example.com"),
        &format!("b-{prefix}.example.com"),
    )
    .await?;
    Ok(())
}
