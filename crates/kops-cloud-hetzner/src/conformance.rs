//! The Hetzner cloud conformance suite: `pub async fn`s over `&dyn HetznerCloud` that every
//! implementation must pass: the in-memory mock of `kops-mock`, and [`crate::rest`]'s
//! client against the local fake of the hcloud API (`kops_mock::hetzner::rest`). It lives
//! next to the trait, as `object_store` keeps its integration suite next to `ObjectStore`.
//!
//! Each function creates what it needs under names and labels derived from `cluster` (use
//! a fresh one per run), finds it again by ID, name or label selector, changes it and
//! deletes it, as kOps' model does: networks with subnets, firewalls, SSH keys, load
//! balancers with their services, targets and network attachment, servers found by
//! [`CLUSTER_LABEL`], volumes. It checks that a missing object is `NotFound` (the shared
//! kind), that deleting what another object uses is `Conflict`, that labels round-trip
//! exactly (an empty value included), that immutable attributes are refused with
//! `Invalid`, and that a list spanning several pages returns every object. Cloud errors
//! are returned; behaviour violations panic with a message naming the object (they are
//! test assertions).
//!
//! Enabled with the `conformance` feature.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use serde_json::{Value as Json, json};

use crate::cloud::{
    AUTOSCALER_NODE_GROUP_LABEL, CLUSTER_LABEL, CloudError as Error, CloudResult as Result,
    CreateRequest, FIREWALL_ROLE_LABEL, HetznerCloud, HetznerCloudExt, HetznerResourceType,
    INSTANCE_GROUP_LABEL, INSTANCE_ROLE_LABEL, ListQuery, NEEDS_UPDATE_LABEL, NODE_LABEL_PREFIX,
    Resource, TagFilter, USER_DATA_LABEL, UpdateRequest, VOLUME_ROLE_LABEL, label_selector,
    user_data_hash,
};

/// Labels of an object, by key.
pub type Labels = BTreeMap<String, String>;

type R = HetznerResourceType;

/// A well-formed OpenSSH RSA public key; its private half was never kept.
const TEST_PUBLIC_KEY: &str = concat!(
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCM/O+4uTXlglTw9QR/RE4l5UX6tMAGWC",
    "cKgihNY2O0O5X9d2iT6zizIe9VghQBRIzteAebX2040cSx6amnqu60Pj5qaamfDLVwTUN3",
    "lGviJjJYyNVwtUZcK1UYiP3k/JuF5s+mXWch6mbm08KvNA/b1pLganXsk9jmmclc7m0wWa",
    "cwP1cthH500DApK9s71TghBQr3L4Kmhgl0o9sB0UIyixyyqSUigoUXMHPwzBcYV0mOJB9y",
    "cd3TunrIw78Ca1IAB+fSzCACtu7oghStTW4DY5uJFO8dR+1YlRRHR4xcGBTQwEdnfoX0o8",
    "Am3CXmVs/r2yIF8Ogsdlz5eQTkcz3F conformance@example",
);

/// An ID no implementation has handed out.
const MISSING_ID: &str = "987654321";

/// The location and network zone every check uses.
const LOCATION: &str = "fsn1";
const ZONE: &str = "eu-central";

/// kOps' labels on every object of `cluster`.
pub fn cluster_labels(cluster: &str) -> Labels {
    [(CLUSTER_LABEL.to_owned(), cluster.to_owned())].into()
}

fn with(mut labels: Labels, extra: &[(&str, &str)]) -> Labels {
    labels.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    labels
}

fn attrs<const N: usize>(pairs: [(&str, Json); N]) -> BTreeMap<String, Json> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// Whether `ip` is an IPv4 address inside `cidr`.
fn in_range(ip: &str, cidr: &str) -> bool {
    let Some((net, len)) = cidr.split_once('/') else {
        return false;
    };
    let (Ok(ip), Ok(net), Ok(len)) = (
        ip.parse::<Ipv4Addr>(),
        net.parse::<Ipv4Addr>(),
        len.parse::<u32>(),
    ) else {
        return false;
    };
    let mask = match len {
        0 => 0,
        1..=32 => u32::MAX << (32 - len),
        _ => return false,
    };
    u32::from(ip) & mask == u32::from(net) & mask
}

fn ids(rs: &[Resource]) -> Vec<&str> {
    let mut v: Vec<&str> = rs.iter().map(|r| r.id.as_str()).collect();
    v.sort_unstable();
    v
}

fn what(r: &Resource) -> String {
    format!("{} {}", r.resource_type, r.name.as_deref().unwrap_or(&r.id))
}

/// The labels of `r` are exactly `want`.
fn assert_labels(context: &str, r: &Resource, want: &Labels) {
    assert_eq!(
        r.tags.to_map(),
        *want,
        "{context}: labels of {} (ID {}) do not round-trip",
        what(r),
        r.id
    );
}

/// The attributes `want` of `r` are as given.
fn assert_attrs(context: &str, r: &Resource, want: &BTreeMap<String, Json>) {
    for (k, v) in want {
        assert_eq!(
            r.attrs.get(k),
            Some(v),
            "{context}: {} (ID {}): attribute {k}",
            what(r),
            r.id
        );
    }
}

/// Creates an object and checks what every create answers: a non-empty ID (a number for
/// an object of its own), the type, the name, the labels exactly as given.
async fn make(
    cloud: &dyn HetznerCloud,
    rt: R,
    name: Option<&str>,
    labels: Labels,
    a: BTreeMap<String, Json>,
) -> Result<Resource> {
    let mut req = CreateRequest::new(rt)
        .with_tags(labels.clone())
        .with_attrs(a);
    if let Some(n) = name {
        req = req.with_name(n);
    }
    let r = cloud.create(&req).await?;
    let label = name.unwrap_or("(part)");
    assert!(!r.id.is_empty(), "create {rt} {label}: empty ID");
    assert_eq!(r.resource_type, rt, "create {rt} {label}: wrong type");
    if !rt.facts().part {
        assert!(
            r.id.bytes().all(|b| b.is_ascii_digit()),
            "create {rt} {label}: ID {:?} is not a Hetzner ID (a number)",
            r.id
        );
        assert_eq!(r.name.as_deref(), name, "create {rt} {label}: name");
        assert_labels(&format!("create {rt}"), &r, &labels);
    }
    Ok(r)
}

/// The object `id`, which must exist.
async fn must_get(cloud: &dyn HetznerCloud, rt: R, id: &str) -> Result<Resource> {
    cloud.get(rt, id).await?.ok_or_else(|| Error::NotFound {
        what: format!("{rt} {id}, expected to exist"),
    })
}

/// Deletes `id`, checks it is gone, and that deleting it again is not an error.
async fn gone(cloud: &dyn HetznerCloud, rt: R, id: &str) -> Result<()> {
    cloud.delete(rt, id).await?;
    assert!(
        cloud.get(rt, id).await?.is_none(),
        "{rt} {id} still listed after delete"
    );
    cloud.delete(rt, id).await?;
    Ok(())
}

fn assert_kind(
    context: &str,
    got: &Result<impl std::fmt::Debug>,
    want: fn(&Error) -> bool,
    kind: &str,
) {
    match got {
        Err(e) if want(e) => {}
        other => panic!("{context}: expected {kind}, got {other:?}"),
    }
}

fn is_not_found(e: &Error) -> bool {
    matches!(e, Error::NotFound { .. })
}

fn is_conflict(e: &Error) -> bool {
    matches!(e, Error::Conflict { .. })
}

fn is_already_exists(e: &Error) -> bool {
    matches!(e, Error::AlreadyExists { .. })
}

/// An update asking to change the immutable `attr` is refused with `Invalid` naming it.
fn assert_immutable(context: &str, got: &Result<Resource>, attr: &str) {
    match got {
        Err(Error::Invalid { field, .. }) if field.contains(attr) => {}
        other => panic!(
            "{context}: changing immutable {attr}: expected Invalid naming it, got {other:?}"
        ),
    }
}

async fn network_of(cloud: &dyn HetznerCloud, cluster: &str, ip_range: &str) -> Result<Resource> {
    make(
        cloud,
        R::Network,
        Some(cluster),
        cluster_labels(cluster),
        attrs([("ip_range", json!(ip_range))]),
    )
    .await
}

/// A network with a subnet, as kOps makes them: found by name, by label and by parent;
/// names and subnets are unique; labels change and round-trip; the range is immutable;
/// a subnet of a missing network is `NotFound`; a subnet goes on its own, the network
/// after it.
pub async fn network(cloud: &dyn HetznerCloud, cluster: &str) -> Result<()> {
    let net = network_of(cloud, cluster, "10.0.0.0/16").await?;
    assert_eq!(
        net.attr_str("ip_range"),
        Some("10.0.0.0/16"),
        "network {cluster}: ip_range"
    );
    let by_name = cloud
        .list(&ListQuery::new(R::Network).with_names([cluster]))
        .await?;
    assert_eq!(
        ids(&by_name),
        [net.id.as_str()],
        "network {cluster} by name"
    );
    let by_label = cloud.list_labelled(R::Network, cluster).await?;
    assert_eq!(
        ids(&by_label),
        [net.id.as_str()],
        "network {cluster} by label"
    );
    let again = network_of(cloud, cluster, "10.0.0.0/16").await;
    assert_kind(
        &format!("a second network named {cluster}"),
        &again,
        is_already_exists,
        "AlreadyExists",
    );

    let range = "10.0.16.0/20";
    let subnet_attrs = attrs([
        ("network_id", json!(net.id)),
        ("type", json!("cloud")),
        ("network_zone", json!(ZONE)),
        ("ip_range", json!(range)),
    ]);
    let subnet = make(
        cloud,
        R::NetworkSubnet,
        None,
        Labels::new(),
        subnet_attrs.clone(),
    )
    .await?;
    assert_eq!(
        subnet.id,
        format!("{}-{range}", net.id),
        "subnet {range} of network {}: ID",
        net.id
    );
    assert_eq!(
        subnet.parent.as_deref(),
        Some(net.id.as_str()),
        "subnet {}: parent",
        subnet.id
    );
    assert_attrs("create", &subnet, &subnet_attrs);
    let under = cloud
        .list(&ListQuery::new(R::NetworkSubnet).with_parent(net.id.clone()))
        .await?;
    assert_eq!(
        ids(&under),
        [subnet.id.as_str()],
        "subnets of network {}",
        net.id
    );
    assert_attrs("list", &under[0], &subnet_attrs);
    must_get(cloud, R::NetworkSubnet, &subnet.id).await?;
    let twice = cloud
        .create(&CreateRequest::new(R::NetworkSubnet).with_attrs(subnet_attrs.clone()))
        .await;
    assert_kind(
        &format!("subnet {range} added twice to network {}", net.id),
        &twice,
        is_already_exists,
        "AlreadyExists",
    );
    let mut orphan = subnet_attrs.clone();
    orphan.insert("network_id".into(), json!(MISSING_ID));
    let orphan = cloud
        .create(&CreateRequest::new(R::NetworkSubnet).with_attrs(orphan))
        .await;
    assert_kind(
        &format!("a subnet of the missing network {MISSING_ID}"),
        &orphan,
        is_not_found,
        "NotFound",
    );

    // Labels are replaced as a whole, an empty value included.
    let relabelled = with(cluster_labels(cluster), &[(NEEDS_UPDATE_LABEL, "")]);
    let changed = cloud
        .update(&UpdateRequest::new(R::Network, net.id.clone()).with_tags(relabelled.clone()))
        .await?;
    assert_labels("update", &changed, &relabelled);
    assert_labels(
        "update, then get",
        &must_get(cloud, R::Network, &net.id).await?,
        &relabelled,
    );
    let back = cloud
        .update(&UpdateRequest::new(R::Network, net.id.clone()).with_tags(cluster_labels(cluster)))
        .await?;
    assert_labels("a label removed", &back, &cluster_labels(cluster));
    let moved = cloud
        .update(
            &UpdateRequest::new(R::Network, net.id.clone())
                .with_attrs(attrs([("ip_range", json!("10.1.0.0/16"))])),
        )
        .await;
    assert_immutable(&format!("network {}", net.id), &moved, "ip_range");
    assert_eq!(
        must_get(cloud, R::Network, &net.id)
            .await?
            .attr_str("ip_range"),
        Some("10.0.0.0/16"),
        "network {}: a refused update changed the range",
        net.id
    );

    gone(cloud, R::NetworkSubnet, &subnet.id).await?;
    must_get(cloud, R::Network, &net.id).await?;
    gone(cloud, R::Network, &net.id).await?;
    Ok(())
}

fn rule(port: &str, protocol: &str, sources: &[&str]) -> Json {
    json!({ "direction": "in", "port": port, "protocol": protocol, "source_ips": sources })
}

/// The rules of a firewall as a sorted list (their order carries no meaning).
fn rules_of(r: &Resource) -> Vec<String> {
    let mut v: Vec<String> = r
        .attrs
        .get("rule")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .map(Json::to_string)
        .collect();
    v.sort();
    v
}

fn sorted_rules(rules: &Json) -> Vec<String> {
    let mut v: Vec<String> = rules
        .as_array()
        .into_iter()
        .flatten()
        .map(Json::to_string)
        .collect();
    v.sort();
    v
}

/// A firewall as kOps makes one per role: rules and a label selector it applies to;
/// found by its role label; its rules replaced.
pub async fn firewall(cloud: &dyn HetznerCloud, cluster: &str) -> Result<()> {
    let name = format!("nodes.{cluster}");
    let rules = json!([
        rule("22", "tcp", &["0.0.0.0/0", "::/0"]),
        rule("30000-32767", "udp", &["10.0.0.0/8"]),
    ]);
    let selector = label_selector([(CLUSTER_LABEL, cluster), (INSTANCE_ROLE_LABEL, "Node")]);
    let apply_to = json!([{ "label_selector": selector }]);
    let labels = with(cluster_labels(cluster), &[(FIREWALL_ROLE_LABEL, "nodes")]);
    let fw = make(
        cloud,
        R::Firewall,
        Some(name.as_str()),
        labels.clone(),
        attrs([("rule", rules.clone()), ("apply_to", apply_to.clone())]),
    )
    .await?;
    for (context, r) in [
        ("create", fw.clone()),
        ("get", must_get(cloud, R::Firewall, &fw.id).await?),
    ] {
        assert_eq!(
            rules_of(&r),
            sorted_rules(&rules),
            "{context}: firewall {name}: rules"
        );
        assert_eq!(
            r.attrs.get("apply_to"),
            Some(&apply_to),
            "{context}: firewall {name}: apply_to"
        );
    }
    let by_role = cloud
        .list(
            &ListQuery::new(R::Firewall)
                .with_tag(TagFilter::equals(CLUSTER_LABEL, cluster))
                .with_tag(TagFilter::equals(FIREWALL_ROLE_LABEL, "nodes")),
        )
        .await?;
    assert_eq!(ids(&by_role), [fw.id.as_str()], "firewall {name} by role");
    let none = cloud
        .list(
            &ListQuery::new(R::Firewall)
                .with_tag(TagFilter::equals(CLUSTER_LABEL, cluster))
                .with_tag(TagFilter::equals(FIREWALL_ROLE_LABEL, "control-plane")),
        )
        .await?;
    assert!(none.is_empty(), "firewall {name} found by another role");

    let tighter = json!([rule("22", "tcp", &["10.0.0.0/8"])]);
    let changed = cloud
        .update(
            &UpdateRequest::new(R::Firewall, fw.id.clone())
                .with_attrs(attrs([("rule", tighter.clone())])),
        )
        .await?;
    assert_eq!(
        rules_of(&changed),
        sorted_rules(&tighter),
        "update: firewall {name}: rules"
    );
    let now = must_get(cloud, R::Firewall, &fw.id).await?;
    assert_eq!(
        rules_of(&now),
        sorted_rules(&tighter),
        "update, then get: firewall {name}: rules"
    );
    assert_labels("a rules update", &now, &labels);
    gone(cloud, R::Firewall, &fw.id).await?;
    Ok(())
}

/// An SSH key: its public key round-trips and cannot change; names are unique.
pub async fn ssh_key(cloud: &dyn HetznerCloud, cluster: &str) -> Result<()> {
    let name = format!("{cluster}-key");
    let key = make(
        cloud,
        R::SshKey,
        Some(name.as_str()),
        cluster_labels(cluster),
        attrs([("public_key", json!(TEST_PUBLIC_KEY))]),
    )
    .await?;
    assert_eq!(
        must_get(cloud, R::SshKey, &key.id)
            .await?
            .attr_str("public_key"),
        Some(TEST_PUBLIC_KEY),
        "SSH key {name}: public_key"
    );
    let again = cloud
        .create(
            &CreateRequest::new(R::SshKey)
                .with_name(&name)
                .with_attrs(attrs([("public_key", json!(TEST_PUBLIC_KEY))])),
        )
        .await;
    assert_kind(
        &format!("a second SSH key named {name}"),
        &again,
        is_already_exists,
        "AlreadyExists",
    );
    let other = cloud
        .update(
            &UpdateRequest::new(R::SshKey, key.id.clone())
                .with_attrs(attrs([("public_key", json!("ssh-ed25519 AAAA other"))])),
        )
        .await;
    assert_immutable(&format!("SSH key {name}"), &other, "public_key");
    gone(cloud, R::SshKey, &key.id).await?;
    Ok(())
}

/// The API load balancer as kOps makes it: a public address; attached to the cluster's
/// network (then it has a private address there, and the network is in use); services
/// by listen port, a target by label selector, each found under the load balancer;
/// a service's port changed; parts of a missing load balancer are `NotFound`; the parts
/// go with the load balancer.
pub async fn load_balancer(cloud: &dyn HetznerCloud, cluster: &str) -> Result<()> {
    let net_range = "10.0.0.0/16";
    let net = network_of(cloud, cluster, net_range).await?;
    let name = format!("api.{cluster}");
    let lb_attrs = attrs([
        ("load_balancer_type", json!("lb11")),
        ("location", json!(LOCATION)),
    ]);
    let lb = make(
        cloud,
        R::LoadBalancer,
        Some(name.as_str()),
        cluster_labels(cluster),
        lb_attrs.clone(),
    )
    .await?;
    assert_attrs("create", &lb, &lb_attrs);
    assert!(
        lb.attr_str("ipv4")
            .is_some_and(|ip| ip.parse::<Ipv4Addr>().is_ok()),
        "load balancer {name}: no public IPv4 address in {:?}",
        lb.attrs
    );

    let attach_attrs = attrs([
        ("load_balancer_id", json!(lb.id)),
        ("network_id", json!(net.id)),
    ]);
    let attached = make(
        cloud,
        R::LoadBalancerNetwork,
        None,
        Labels::new(),
        attach_attrs.clone(),
    )
    .await?;
    assert_eq!(
        attached.parent.as_deref(),
        Some(lb.id.as_str()),
        "network attachment of load balancer {name}: parent"
    );
    assert_attrs("attach", &attached, &attach_attrs);
    let lb_now = must_get(cloud, R::LoadBalancer, &lb.id).await?;
    assert!(
        lb_now
            .attr_str("private_ip")
            .is_some_and(|ip| in_range(ip, net_range)),
        "load balancer {name} attached to network {}: no private address in {net_range}: {:?}",
        net.id,
        lb_now.attrs
    );
    let in_use = cloud.delete(R::Network, &net.id).await;
    assert_kind(
        &format!(
            "deleting network {} while load balancer {name} is attached",
            net.id
        ),
        &in_use,
        is_conflict,
        "Conflict",
    );
    must_get(cloud, R::Network, &net.id).await?;

    let service = |port: i64| {
        attrs([
            ("load_balancer_id", json!(lb.id)),
            ("protocol", json!("tcp")),
            ("listen_port", json!(port)),
            ("destination_port", json!(port)),
        ])
    };
    let mut made = Vec::new();
    for port in [443, 8443] {
        let s = make(
            cloud,
            R::LoadBalancerService,
            None,
            Labels::new(),
            service(port),
        )
        .await?;
        assert_eq!(
            s.id,
            format!("{}__{port}", lb.id),
            "service {port} of load balancer {name}: ID"
        );
        assert_attrs("create", &s, &service(port));
        made.push(s);
    }
    let twice = cloud
        .create(&CreateRequest::new(R::LoadBalancerService).with_attrs(service(443)))
        .await;
    assert_kind(
        &format!("service 443 added twice to load balancer {name}"),
        &twice,
        is_already_exists,
        "AlreadyExists",
    );
    let services = cloud
        .list(&ListQuery::new(R::LoadBalancerService).with_parent(lb.id.clone()))
        .await?;
    assert_eq!(
        ids(&services),
        ids(&made),
        "services of load balancer {name}"
    );
    // A service's destination changes in place (same ID); its listen port cannot.
    let moved = cloud
        .update(
            &UpdateRequest::new(R::LoadBalancerService, made[0].id.clone())
                .with_attrs(attrs([("destination_port", json!(6443))])),
        )
        .await?;
    assert_eq!(
        moved.id, made[0].id,
        "service 443 of {name}: ID after update"
    );
    let mut want = service(443);
    want.insert("destination_port".into(), json!(6443));
    assert_attrs("update", &moved, &want);
    assert_attrs(
        "update, then get",
        &must_get(cloud, R::LoadBalancerService, &made[0].id).await?,
        &want,
    );
    let relisten = cloud
        .update(
            &UpdateRequest::new(R::LoadBalancerService, made[0].id.clone())
                .with_attrs(attrs([("listen_port", json!(9443))])),
        )
        .await;
    assert_immutable(
        &format!("service {} of {name}", made[0].id),
        &relisten,
        "listen_port",
    );
    assert_eq!(
        ids(&cloud
            .list(&ListQuery::new(R::LoadBalancerService).with_parent(lb.id.clone()))
            .await?),
        ids(&made),
        "services of load balancer {name} after a refused update"
    );

    let selector = label_selector([
        (CLUSTER_LABEL, cluster),
        (INSTANCE_ROLE_LABEL, "ControlPlane"),
    ]);
    let target_attrs = attrs([
        ("load_balancer_id", json!(lb.id)),
        ("type", json!("label_selector")),
        ("label_selector", json!(selector)),
        ("use_private_ip", json!(true)),
    ]);
    let target = make(
        cloud,
        R::LoadBalancerTarget,
        None,
        Labels::new(),
        target_attrs.clone(),
    )
    .await?;
    assert_attrs("create", &target, &target_attrs);
    let targets = cloud.list(&ListQuery::new(R::LoadBalancerTarget)).await?;
    assert!(
        targets.iter().any(|t| t.id == target.id),
        "target {selector} of {name} not among all targets {:?}",
        ids(&targets)
    );

    let orphan = cloud
        .create(
            &CreateRequest::new(R::LoadBalancerService).with_attrs(attrs([
                ("load_balancer_id", json!(MISSING_ID)),
                ("protocol", json!("tcp")),
                ("listen_port", json!(443)),
                ("destination_port", json!(443)),
            ])),
        )
        .await;
    assert_kind(
        &format!("a service of the missing load balancer {MISSING_ID}"),
        &orphan,
        is_not_found,
        "NotFound",
    );

    gone(cloud, R::LoadBalancerService, &made[1].id).await?;
    must_get(cloud, R::LoadBalancerService, &made[0].id).await?;
    gone(cloud, R::LoadBalancer, &lb.id).await?;
    for (rt, id) in [
        (R::LoadBalancerService, &made[0].id),
        (R::LoadBalancerTarget, &target.id),
        (R::LoadBalancerNetwork, &attached.id),
    ] {
        assert!(
            cloud.get(rt, id).await?.is_none(),
            "{rt} {id} outlived its load balancer {name}"
        );
    }
    // Nothing uses the network any more.
    gone(cloud, R::Network, &net.id).await?;
    Ok(())
}

/// The labels the model puts on a server of instance group `group`.
fn server_labels(cluster: &str, group: &str, role: &str, user_data: &str) -> Labels {
    let hash = user_data_hash(user_data.as_bytes());
    let node_label = format!("{NODE_LABEL_PREFIX}tier");
    with(
        cluster_labels(cluster),
        &[
            (INSTANCE_GROUP_LABEL, group),
            (INSTANCE_ROLE_LABEL, role),
            (USER_DATA_LABEL, hash.as_str()),
            (AUTOSCALER_NODE_GROUP_LABEL, group),
            (node_label.as_str(), "web"),
        ],
    )
}

/// A server's attributes as the model creates it.
fn server_attrs(
    network: Option<&str>,
    ssh_keys: &[&str],
    ipv4: bool,
    user_data: &str,
) -> BTreeMap<String, Json> {
    let networks: Vec<Json> = network
        .map(|n| json!({ "network_id": n }))
        .into_iter()
        .collect();
    attrs([
        ("location", json!(LOCATION)),
        ("server_type", json!("cx23")),
        ("image", json!("ubuntu-24.04")),
        ("user_data", json!(user_data)),
        ("network", Json::Array(networks)),
        (
            "public_net",
            json!({ "ipv4_enabled": ipv4, "ipv6_enabled": false }),
        ),
        ("ssh_keys", json!(ssh_keys)),
    ])
}

/// Servers as the model's server groups make them: in the cluster's network with its SSH
/// key, running, with the addresses asked for; found by the cluster's label selector and
/// the instance group's, never another cluster's; labels replaced exactly (the empty
/// needs-update label); immutable attributes refused; the network in use while a server
/// is in it (the SSH key is not: Hetzner copies it); shut down, then deleted.
pub async fn servers(cloud: &dyn HetznerCloud, cluster: &str, other: &str) -> Result<()> {
    let net_range = "10.0.0.0/16";
    let net = network_of(cloud, cluster, net_range).await?;
    let subnet = make(
        cloud,
        R::NetworkSubnet,
        None,
        Labels::new(),
        attrs([
            ("network_id", json!(net.id)),
            ("type", json!("cloud")),
            ("network_zone", json!(ZONE)),
            ("ip_range", json!("10.0.0.0/24")),
        ]),
    )
    .await?;
    let key = make(
        cloud,
        R::SshKey,
        Some(format!("{cluster}-servers").as_str()),
        cluster_labels(cluster),
        attrs([("public_key", json!(TEST_PUBLIC_KEY))]),
    )
    .await?;
    let user_data = "#!/bin/bash\necho conformance\n";
    let mut made = Vec::new();
    for (name, group, role, ipv4) in [
        (
            "control-plane-fsn1-1",
            "control-plane-fsn1",
            "ControlPlane",
            false,
        ),
        ("nodes-1", "nodes", "Node", true),
        ("nodes-2", "nodes", "Node", true),
    ] {
        let name = format!("{name}.{cluster}");
        let labels = server_labels(cluster, group, role, user_data);
        let a = server_attrs(Some(net.id.as_str()), &[key.id.as_str()], ipv4, user_data);
        let s = make(cloud, R::Server, Some(name.as_str()), labels.clone(), a).await?;
        // What the model compares and reads, as created and as listed again.
        for (context, r) in [
            ("create", s.clone()),
            ("get", must_get(cloud, R::Server, &s.id).await?),
        ] {
            assert_attrs(
                context,
                &r,
                &attrs([
                    ("location", json!(LOCATION)),
                    ("server_type", json!("cx23")),
                    ("image", json!("ubuntu-24.04")),
                    ("status", json!("running")),
                    ("network", json!([{ "network_id": net.id }])),
                    (
                        "public_net",
                        json!({ "ipv4_enabled": ipv4, "ipv6_enabled": false }),
                    ),
                ]),
            );
            assert_labels(context, &r, &labels);
            assert!(
                r.attr_str("private_ip")
                    .is_some_and(|ip| in_range(ip, net_range)),
                "{context}: server {name}: no private address in {net_range}: {:?}",
                r.attrs
            );
            let public = r.attr_str("ipv4_address").filter(|a| !a.is_empty());
            assert_eq!(
                public.is_some_and(|ip| ip.parse::<Ipv4Addr>().is_ok()),
                ipv4,
                "{context}: server {name}: public IPv4 address {public:?} (asked for: {ipv4})"
            );
        }
        made.push(s);
    }
    let strangers = make(
        cloud,
        R::Server,
        Some(format!("nodes-1.{other}").as_str()),
        server_labels(other, "nodes", "Node", user_data),
        server_attrs(None, &[], true, user_data),
    )
    .await?;

    // Found by label selector: the cluster's, the instance group's; never another's.
    let all = cloud.list_labelled(R::Server, cluster).await?;
    assert_eq!(
        ids(&all),
        ids(&made),
        "servers by {CLUSTER_LABEL}={cluster}"
    );
    let nodes = cloud
        .list(
            &ListQuery::new(R::Server)
                .with_tag(TagFilter::equals(CLUSTER_LABEL, cluster))
                .with_tag(TagFilter::equals(INSTANCE_GROUP_LABEL, "nodes")),
        )
        .await?;
    assert_eq!(
        ids(&nodes),
        ids(&made[1..]),
        "servers of instance group nodes of {cluster}"
    );
    let theirs = cloud.list_labelled(R::Server, other).await?;
    assert_eq!(
        ids(&theirs),
        [strangers.id.as_str()],
        "servers by {CLUSTER_LABEL}={other}"
    );
    let by_name = cloud
        .list(&ListQuery::new(R::Server).with_names([made[1].name.clone().unwrap_or_default()]))
        .await?;
    assert_eq!(
        ids(&by_name),
        [made[1].id.as_str()],
        "server {} by name",
        what(&made[1])
    );

    // Rolling update marks a server with an empty label; it is found by the key alone.
    let mut marked = made[2].tags.to_map();
    marked.insert(NEEDS_UPDATE_LABEL.to_owned(), String::new());
    let updated = cloud
        .update(&UpdateRequest::new(R::Server, made[2].id.clone()).with_tags(marked.clone()))
        .await?;
    assert_labels("marking for update", &updated, &marked);
    let to_replace = cloud
        .list(
            &ListQuery::new(R::Server)
                .with_tag(TagFilter::equals(CLUSTER_LABEL, cluster))
                .with_tag(TagFilter::exists(NEEDS_UPDATE_LABEL)),
        )
        .await?;
    assert_eq!(
        ids(&to_replace),
        [made[2].id.as_str()],
        "servers of {cluster} carrying {NEEDS_UPDATE_LABEL}"
    );
    assert_labels("marking, then list", &to_replace[0], &marked);

    let retyped = cloud
        .update(
            &UpdateRequest::new(R::Server, made[1].id.clone())
                .with_attrs(attrs([("server_type", json!("cx33"))])),
        )
        .await;
    assert_immutable(
        &format!("server {}", what(&made[1])),
        &retyped,
        "server_type",
    );

    // The network is in use while servers are in it; the SSH key is not.
    let in_use = cloud.delete(R::Network, &net.id).await;
    assert_kind(
        &format!("deleting network {} with servers in it", net.id),
        &in_use,
        is_conflict,
        "Conflict",
    );
    must_get(cloud, R::Network, &net.id).await?;
    gone(cloud, R::SshKey, &key.id).await?;

    for s in &made {
        cloud.shutdown_server(&s.id).await?;
        assert_eq!(
            must_get(cloud, R::Server, &s.id).await?.attr_str("status"),
            Some("off"),
            "server {} after shutdown",
            what(s)
        );
        gone(cloud, R::Server, &s.id).await?;
    }
    gone(cloud, R::Server, &strangers.id).await?;
    gone(cloud, R::NetworkSubnet, &subnet.id).await?;
    gone(cloud, R::Network, &net.id).await?;
    Ok(())
}

/// An etcd volume: found by its labels, resized, relabelled; its location is immutable.
pub async fn volume(cloud: &dyn HetznerCloud, cluster: &str) -> Result<()> {
    let name = format!("a.etcd-main.{cluster}");
    let labels = with(
        cluster_labels(cluster),
        &[
            (INSTANCE_GROUP_LABEL, "control-plane-fsn1"),
            (VOLUME_ROLE_LABEL, "main"),
        ],
    );
    let a = attrs([("location", json!(LOCATION)), ("size", json!(20))]);
    let vol = make(
        cloud,
        R::Volume,
        Some(name.as_str()),
        labels.clone(),
        a.clone(),
    )
    .await?;
    assert_attrs("create", &vol, &a);
    assert_attrs("get", &must_get(cloud, R::Volume, &vol.id).await?, &a);
    let by_role = cloud
        .list(
            &ListQuery::new(R::Volume)
                .with_tag(TagFilter::equals(CLUSTER_LABEL, cluster))
                .with_tag(TagFilter::equals(VOLUME_ROLE_LABEL, "main")),
        )
        .await?;
    assert_eq!(ids(&by_role), [vol.id.as_str()], "volume {name} by role");

    let grown = cloud
        .update(
            &UpdateRequest::new(R::Volume, vol.id.clone()).with_attrs(attrs([("size", json!(30))])),
        )
        .await?;
    assert_eq!(
        grown.attrs.get("size"),
        Some(&json!(30)),
        "volume {name}: size after resize"
    );
    assert_eq!(
        must_get(cloud, R::Volume, &vol.id).await?.attrs.get("size"),
        Some(&json!(30)),
        "volume {name}: size after resize, then get"
    );
    let relabelled = with(labels.clone(), &[(VOLUME_ROLE_LABEL, "events")]);
    let changed = cloud
        .update(&UpdateRequest::new(R::Volume, vol.id.clone()).with_tags(relabelled.clone()))
        .await?;
    assert_labels("relabel", &changed, &relabelled);
    let moved = cloud
        .update(
            &UpdateRequest::new(R::Volume, vol.id.clone())
                .with_attrs(attrs([("location", json!("hel1"))])),
        )
        .await;
    assert_immutable(&format!("volume {name}"), &moved, "location");
    gone(cloud, R::Volume, &vol.id).await?;
    Ok(())
}

/// Missing objects: a get is `None`, an update and a shutdown are `NotFound`, a delete
/// succeeds, a list under a missing owner is empty; an object without a name is
/// `Invalid` naming the field.
pub async fn not_found(cloud: &dyn HetznerCloud) -> Result<()> {
    for &rt in R::ALL {
        let id = match rt {
            R::NetworkSubnet => format!("{MISSING_ID}-10.9.0.0/24"),
            R::LoadBalancerService => format!("{MISSING_ID}__443"),
            R::LoadBalancerNetwork => format!("{MISSING_ID}-{MISSING_ID}"),
            R::LoadBalancerTarget => format!("{MISSING_ID}-a=b"),
            _ => MISSING_ID.to_owned(),
        };
        assert!(
            cloud.get(rt, &id).await?.is_none(),
            "{rt} {id}: a missing object was found"
        );
        let relabel = if rt.facts().labelled {
            UpdateRequest::new(rt, id.clone()).with_tags(Labels::new())
        } else {
            UpdateRequest::new(rt, id.clone()).with_attrs(BTreeMap::new())
        };
        let u = cloud.update(&relabel).await;
        assert_kind(
            &format!("updating the missing {rt} {id}"),
            &u,
            is_not_found,
            "NotFound",
        );
        cloud.delete(rt, &id).await?;
        if rt.facts().part {
            let under = cloud
                .list(&ListQuery::new(rt).with_parent(MISSING_ID))
                .await?;
            assert!(
                under.is_empty(),
                "{rt} of a missing owner {MISSING_ID}: {:?}",
                ids(&under)
            );
        }
    }
    let off = cloud.shutdown_server(MISSING_ID).await;
    assert_kind(
        &format!("shutting down the missing server {MISSING_ID}"),
        &off,
        is_not_found,
        "NotFound",
    );
    let nameless = cloud
        .create(
            &CreateRequest::new(R::Network).with_attrs(attrs([("ip_range", json!("10.0.0.0/16"))])),
        )
        .await;
    match &nameless {
        Err(Error::Invalid { field, .. }) if field.contains("name") => {}
        other => panic!("a network without a name: expected Invalid naming name, got {other:?}"),
    }
    Ok(())
}

/// `count` servers of one cluster (more than one page of the API's 50 at `count` > 50):
/// a labelled list returns every one; one past the first page is found by ID and by
/// name; all are deleted.
pub async fn many_servers(cloud: &dyn HetznerCloud, cluster: &str, count: usize) -> Result<()> {
    let user_data = "#!/bin/bash\n";
    let mut made = Vec::with_capacity(count);
    for i in 0..count {
        let name = format!("nodes-{i:03}.{cluster}");
        made.push(
            make(
                cloud,
                R::Server,
                Some(name.as_str()),
                server_labels(cluster, "nodes", "Node", user_data),
                server_attrs(None, &[], false, user_data),
            )
            .await?,
        );
    }
    let listed = cloud.list_labelled(R::Server, cluster).await?;
    assert_eq!(
        listed.len(),
        count,
        "{count} servers by {CLUSTER_LABEL}={cluster}: got {}",
        listed.len()
    );
    assert_eq!(ids(&listed), ids(&made), "{count} servers of {cluster}");
    let everything = cloud.list(&ListQuery::new(R::Server)).await?;
    for s in &made {
        assert!(
            everything.iter().any(|e| e.id == s.id),
            "server {} missing from an unfiltered list of {}",
            what(s),
            everything.len()
        );
    }
    if let Some(last) = made.last() {
        must_get(cloud, R::Server, &last.id).await?;
        let by_name = cloud
            .list(&ListQuery::new(R::Server).with_names([last.name.clone().unwrap_or_default()]))
            .await?;
        assert_eq!(
            ids(&by_name),
            [last.id.as_str()],
            "server {} by name",
            what(last)
        );
    }
    for s in &made {
        cloud.delete(R::Server, &s.id).await?;
    }
    let left = cloud.list_labelled(R::Server, cluster).await?;
    assert!(
        left.is_empty(),
        "servers of {cluster} left after delete: {:?}",
        ids(&left)
    );
    Ok(())
}

/// Every check, with clusters named from `prefix` (`<check>.<prefix>.example.com`); the
/// pagination check makes 60 servers.
pub async fn run_all(cloud: &dyn HetznerCloud, prefix: &str) -> Result<()> {
    let cluster = |check: &str| format!("{check}.{prefix}.example.com");
    network(cloud, &cluster("net")).await?;
    firewall(cloud, &cluster("fw")).await?;
    ssh_key(cloud, &cluster("key")).await?;
    load_balancer(cloud, &cluster("lb")).await?;
    servers(cloud, &cluster("srv"), &cluster("other")).await?;
    volume(cloud, &cluster("vol")).await?;
    not_found(cloud).await?;
    many_servers(cloud, &cluster("many"), 60).await?;
    Ok(())
}
