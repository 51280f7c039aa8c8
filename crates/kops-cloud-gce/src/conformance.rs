//! The GCE cloud conformance suite: `pub async fn`s over `&dyn GceCloud` that every
//! implementation must pass (the in-memory mock of `kops-mock`; a REST backend against a
//! local fake of the Compute API). It lives next to the trait, as `object_store` keeps
//! its integration suite next to `ObjectStore`.
//!
//! Each function creates what it needs under names derived from `cluster` (use a fresh
//! one per run), finds it again by name or label, changes it, deletes it, and checks
//! not-found behaviour and that label filters never return another cluster's objects.
//! Cloud errors are returned; behaviour violations panic with a message (they are test
//! assertions).
//!
//! Enabled with the `conformance` feature.

use std::collections::BTreeMap;

use serde_json::{Value as Json, json};

use crate::cloud::{
    CLUSTER_LABEL, CloudError as Error, CloudResult as Result, CreateRequest, GceCloud,
    GceCloudExt, GceResourceType, ListQuery, Resource, UpdateRequest, safe_cluster_name,
};

type R = GceResourceType;

fn attrs<const N: usize>(pairs: [(&str, Json); N]) -> BTreeMap<String, Json> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

fn labels(cluster: &str) -> BTreeMap<String, String> {
    [(CLUSTER_LABEL.to_owned(), safe_cluster_name(cluster))].into()
}

async fn make(
    cloud: &dyn GceCloud,
    rt: R,
    name: &str,
    tags: BTreeMap<String, String>,
    a: BTreeMap<String, Json>,
) -> Result<Resource> {
    let r = cloud
        .create(
            &CreateRequest::new(rt)
                .with_name(name)
                .with_tags(tags)
                .with_attrs(a),
        )
        .await?;
    assert!(!r.id.is_empty(), "create {rt}: empty id");
    assert_eq!(r.resource_type, rt, "create {rt}: wrong type");
    assert!(
        r.attr_str("self_link")
            .is_some_and(|l| l.starts_with(crate::cloud::COMPUTE_URL)),
        "create {rt}: no Compute self_link in {:?}",
        r.attrs
    );
    Ok(r)
}

async fn by_name(cloud: &dyn GceCloud, rt: R, name: &str) -> Result<Resource> {
    let found = cloud.list(&ListQuery::new(rt).with_names([name])).await?;
    assert_eq!(
        found.len(),
        1,
        "{rt} {name}: expected one object by name, got {found:?}"
    );
    found.into_iter().next().ok_or_else(|| Error::NotFound {
        what: format!("{rt} {name}"),
    })
}

async fn gone(cloud: &dyn GceCloud, rt: R, id: &str) -> Result<()> {
    cloud.delete(rt, id).await?;
    assert!(
        cloud.get(rt, id).await?.is_none(),
        "{rt} {id} still exists after delete"
    );
    // Deleting what does not exist is not an error.
    cloud.delete(rt, id).await?;
    Ok(())
}

/// The project, its region and zones, and its Cloud DNS managed zones.
pub async fn project_and_zones(cloud: &dyn GceCloud) -> Result<()> {
    let p = cloud.project().await?;
    assert!(!p.project.is_empty(), "empty project");
    assert!(!p.region.is_empty(), "empty region");
    let zones = cloud.zones().await?;
    assert!(!zones.is_empty(), "no zones");
    for z in &zones {
        assert_eq!(
            crate::cloud::zone_to_region(z),
            Some(p.region.as_str()),
            "zone {z} is not in region {}",
            p.region
        );
    }
    // Cloud DNS: every managed zone has a numeric ID and a fully qualified DNS name.
    for z in cloud.managed_zones().await? {
        assert!(
            !z.id.is_empty() && z.id.bytes().all(|b| b.is_ascii_digit()),
            "managed zone {} has ID {:?}",
            z.dns_name,
            z.id
        );
        assert!(
            z.dns_name.ends_with('.'),
            "managed zone name {:?}",
            z.dns_name
        );
    }
    Ok(())
}

/// Network, subnetwork, firewall rule, router and NAT: create, find by name, update,
/// delete in dependency order (a network in use cannot be deleted).
pub async fn network(cloud: &dyn GceCloud, cluster: &str) -> Result<()> {
    let safe = safe_cluster_name(cluster);
    let region = cloud.project().await?.region;
    let net = make(
        cloud,
        R::Network,
        &safe,
        BTreeMap::new(),
        attrs([("auto_create_subnetworks", json!(false))]),
    )
    .await?;
    let sub_name = format!("sub-{safe}");
    let sub = make(
        cloud,
        R::Subnetwork,
        &sub_name,
        BTreeMap::new(),
        attrs([
            ("network", json!(safe)),
            ("region", json!(region)),
            ("ip_cidr_range", json!("10.0.16.0/20")),
            ("stack_type", json!("IPV4_ONLY")),
        ]),
    )
    .await?;
    assert_eq!(
        by_name(cloud, R::Subnetwork, &sub_name)
            .await?
            .attr_str("ip_cidr_range"),
        Some("10.0.16.0/20")
    );
    let fw_name = format!("ssh-{safe}");
    let fw = make(
        cloud,
        R::Firewall,
        &fw_name,
        BTreeMap::new(),
        attrs([
            ("network", json!(safe)),
            ("allow", json!([{"protocol": "tcp", "ports": ["22"]}])),
            ("source_ranges", json!(["0.0.0.0/0"])),
            ("target_tags", json!([format!("{safe}-k8s-io-role-node")])),
            ("disabled", json!(false)),
        ]),
    )
    .await?;
    let changed = cloud
        .update(
            &UpdateRequest::new(R::Firewall, fw.id.clone())
                .with_attrs(attrs([("source_ranges", json!(["10.0.0.0/8"]))])),
        )
        .await?;
    assert_eq!(
        changed.attrs.get("source_ranges"),
        Some(&json!(["10.0.0.0/8"]))
    );
    assert_eq!(
        by_name(cloud, R::Firewall, &fw_name)
            .await?
            .attrs
            .get("source_ranges"),
        Some(&json!(["10.0.0.0/8"])),
        "an update is visible to a later list"
    );
    // An immutable attribute cannot change in place.
    let err = cloud
        .update(
            &UpdateRequest::new(R::Firewall, fw.id.clone())
                .with_attrs(attrs([("network", json!("other"))])),
        )
        .await;
    assert!(
        matches!(err, Err(Error::Invalid { .. })),
        "network of a firewall changed: {err:?}"
    );

    let router_name = format!("nat-{safe}");
    let router = make(
        cloud,
        R::Router,
        &router_name,
        BTreeMap::new(),
        attrs([("network", json!(safe))]),
    )
    .await?;
    let nat = make(
        cloud,
        R::RouterNat,
        &router_name,
        BTreeMap::new(),
        attrs([
            ("router", json!(router_name)),
            ("region", json!(region)),
            ("nat_ip_allocate_option", json!("AUTO_ONLY")),
            (
                "source_subnetwork_ip_ranges_to_nat",
                json!("LIST_OF_SUBNETWORKS"),
            ),
            (
                "subnetwork",
                json!([{"name": sub_name, "source_ip_ranges_to_nat": ["ALL_IP_RANGES"]}]),
            ),
        ]),
    )
    .await?;
    // The network is in use.
    let in_use = cloud.delete(R::Network, &net.id).await;
    assert!(
        matches!(in_use, Err(Error::Conflict { .. })),
        "deleting a used network: {in_use:?}"
    );
    gone(cloud, R::RouterNat, &nat.id).await?;
    gone(cloud, R::Router, &router.id).await?;
    gone(cloud, R::Firewall, &fw.id).await?;
    gone(cloud, R::Subnetwork, &sub.id).await?;
    gone(cloud, R::Network, &net.id).await?;
    Ok(())
}

/// Instance template, managed instance group and etcd disk: labels select a cluster's
/// objects, an updated template is replaced and its groups follow, zonal IDs.
pub async fn compute(cloud: &dyn GceCloud, cluster: &str) -> Result<()> {
    let safe = safe_cluster_name(cluster);
    let zone = cloud
        .zones()
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| Error::not_found("a zone"))?;
    let mut tl = labels(cluster);
    tl.insert(
        crate::cloud::INSTANCE_GROUP_LABEL.to_owned(),
        "nodes".to_owned(),
    );
    let tmpl_attrs = |machine: &str| {
        attrs([
            ("name_prefix", json!(format!("nodes-{safe}-"))),
            ("machine_type", json!(machine)),
            ("labels", json!(tl)),
            ("metadata", json!({"cluster-name": cluster})),
            ("tags", json!([format!("{safe}-k8s-io-role-node")])),
        ])
    };
    let tmpl = cloud
        .create(&CreateRequest::new(R::InstanceTemplate).with_attrs(tmpl_attrs("e2-medium")))
        .await?;
    assert!(
        tmpl.name
            .as_deref()
            .is_some_and(|n| n.starts_with(&format!("nodes-{safe}-"))),
        "template name {:?} does not start with its prefix",
        tmpl.name
    );
    let found = cloud.list_labelled(R::InstanceTemplate, cluster).await?;
    assert_eq!(found.len(), 1, "templates by cluster label: {found:?}");
    let link = tmpl.attr_str("self_link").unwrap_or_default().to_owned();
    let mig_name = format!("a-nodes-{safe}");
    let mig = make(
        cloud,
        R::InstanceGroupManager,
        &mig_name,
        BTreeMap::new(),
        attrs([
            ("zone", json!(zone)),
            ("base_instance_name", json!("nodes")),
            ("target_size", json!(1)),
            ("version", json!({"instance_template": link})),
        ]),
    )
    .await?;
    assert_eq!(mig.id, format!("{zone}/{mig_name}"), "zonal ID");
    assert!(
        mig.attr_str("instance_group").is_some(),
        "no instance_group link"
    );
    // A used template cannot be deleted.
    let in_use = cloud.delete(R::InstanceTemplate, &tmpl.id).await;
    assert!(
        matches!(in_use, Err(Error::Conflict { .. })),
        "deleting a used template: {in_use:?}"
    );
    // An update replaces the template; the group follows.
    let replaced = cloud
        .update(
            &UpdateRequest::new(R::InstanceTemplate, tmpl.id.clone())
                .with_attrs(attrs([("machine_type", json!("e2-standard-2"))])),
        )
        .await?;
    assert_eq!(replaced.attr_str("machine_type"), Some("e2-standard-2"));
    let new_link = replaced
        .attr_str("self_link")
        .unwrap_or_default()
        .to_owned();
    assert_ne!(new_link, link, "an updated template keeps its self-link");
    let mig_now = cloud
        .get(R::InstanceGroupManager, &mig.id)
        .await?
        .ok_or_else(|| Error::not_found(format!("group {}", mig.id)))?;
    assert_eq!(
        mig_now
            .attrs
            .get("version")
            .and_then(|v| v.get("instance_template"))
            .and_then(Json::as_str),
        Some(new_link.as_str()),
        "the group does not use the replacing template"
    );
    assert_eq!(
        cloud
            .list_labelled(R::InstanceTemplate, cluster)
            .await?
            .len(),
        1
    );

    let disk_name = format!("a-etcd-main-{safe}");
    let mut dl = labels(cluster);
    dl.insert("k8s-io-role-master".into(), "master".into());
    let disk = make(
        cloud,
        R::Disk,
        &disk_name,
        dl,
        attrs([
            ("zone", json!(zone)),
            ("size", json!(20)),
            ("type", json!("pd-ssd")),
        ]),
    )
    .await?;
    let by_label = cloud.list_labelled(R::Disk, cluster).await?;
    assert_eq!(by_label.len(), 1, "disks by cluster label: {by_label:?}");
    let relabelled = cloud
        .update(&UpdateRequest::new(R::Disk, disk.id.clone()).with_tags(labels(cluster)))
        .await?;
    assert!(
        !relabelled.tags.contains_key("k8s-io-role-master"),
        "labels not replaced"
    );

    gone(cloud, R::InstanceGroupManager, &mig.id).await?;
    gone(cloud, R::InstanceTemplate, &replaced.id).await?;
    gone(cloud, R::Disk, &disk.id).await?;
    Ok(())
}

/// A managed instance group's instances, as validate and rolling update read and replace
/// them: made from the group's template and kept at its target size; a replaced template
/// leaves them on the old one until they are recreated, which keeps their names.
pub async fn managed_instances(cloud: &dyn GceCloud, cluster: &str) -> Result<()> {
    let safe = safe_cluster_name(cluster);
    let zone = cloud
        .zones()
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| Error::not_found("a zone"))?;
    let tmpl = cloud
        .create(&CreateRequest::new(R::InstanceTemplate).with_attrs(attrs([
            ("name_prefix", json!(format!("mi-{safe}-"))),
            ("machine_type", json!("e2-medium")),
            ("labels", json!(labels(cluster))),
        ])))
        .await?;
    let old = tmpl.attr_str("self_link").unwrap_or_default().to_owned();
    let mig = make(
        cloud,
        R::InstanceGroupManager,
        &format!("a-mi-{safe}"),
        BTreeMap::new(),
        attrs([
            ("zone", json!(zone)),
            ("base_instance_name", json!("mi")),
            ("target_size", json!(2)),
            ("version", json!({"instance_template": old})),
        ]),
    )
    .await?;
    let sorted = |mut v: Vec<crate::cloud::ManagedInstance>| {
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    };
    let first = sorted(cloud.managed_instances(&mig.id).await?);
    assert_eq!(first.len(), 2, "target size 2: {first:?}");
    assert_ne!(first[0].name, first[1].name, "instance names repeat");
    for i in &first {
        assert!(
            i.name.starts_with("mi-"),
            "{} is not named from its base",
            i.name
        );
        assert_eq!(i.zone, zone, "{}: zone", i.name);
        assert_eq!(
            i.instance_template.as_deref(),
            Some(old.as_str()),
            "{}",
            i.name
        );
        assert!(!i.is_leaving(), "{i:?}");
    }

    // A replaced template re-points the group, not its instances.
    let replaced = cloud
        .update(
            &UpdateRequest::new(R::InstanceTemplate, tmpl.id.clone())
                .with_attrs(attrs([("machine_type", json!("e2-standard-2"))])),
        )
        .await?;
    let new = replaced
        .attr_str("self_link")
        .unwrap_or_default()
        .to_owned();
    let still = sorted(cloud.managed_instances(&mig.id).await?);
    assert_eq!(still, first, "a template change touched the instances");

    // Recreating one: same name, the group's template now.
    cloud
        .recreate_instances(&mig.id, std::slice::from_ref(&first[0].name))
        .await?;
    let after = sorted(cloud.managed_instances(&mig.id).await?);
    assert_eq!(after.len(), 2, "{after:?}");
    assert_eq!(
        after[0].name, first[0].name,
        "a recreated instance keeps its name"
    );
    assert_eq!(after[0].instance_template.as_deref(), Some(new.as_str()));
    assert_eq!(after[1], first[1], "the other instance changed");

    // A larger target adds instances from the current template.
    cloud
        .update(
            &UpdateRequest::new(R::InstanceGroupManager, mig.id.clone())
                .with_attrs(attrs([("target_size", json!(3))])),
        )
        .await?;
    let grown = cloud.managed_instances(&mig.id).await?;
    assert_eq!(grown.len(), 3, "target size 3: {grown:?}");
    let added: Vec<_> = grown
        .iter()
        .filter(|g| !after.iter().any(|a| a.name == g.name))
        .collect();
    assert_eq!(added.len(), 1, "{grown:?}");
    assert_eq!(added[0].instance_template.as_deref(), Some(new.as_str()));

    let unknown = cloud
        .recreate_instances(&mig.id, &["mi-does-not-exist".to_owned()])
        .await;
    assert!(
        matches!(unknown, Err(Error::NotFound { .. })),
        "recreating an unknown instance: {unknown:?}"
    );
    gone(cloud, R::InstanceGroupManager, &mig.id).await?;
    let missing = cloud.managed_instances(&mig.id).await;
    assert!(
        matches!(missing, Err(Error::NotFound { .. })),
        "the instances of a deleted group: {missing:?}"
    );
    let missing = cloud
        .recreate_instances(&mig.id, std::slice::from_ref(&first[0].name))
        .await;
    assert!(
        matches!(missing, Err(Error::NotFound { .. })),
        "recreating in a deleted group: {missing:?}"
    );
    gone(cloud, R::InstanceTemplate, &replaced.id).await?;
    Ok(())
}

/// The internal and external API load balancer objects: addresses are allocated,
/// forwarding rules carry labels.
pub async fn load_balancer(cloud: &dyn GceCloud, cluster: &str) -> Result<()> {
    let safe = safe_cluster_name(cluster);
    let name = format!("api-{safe}");
    let hc = make(
        cloud,
        R::RegionHealthCheck,
        &name,
        BTreeMap::new(),
        attrs([("tcp_health_check", json!({"port": 443}))]),
    )
    .await?;
    let bs = make(
        cloud,
        R::RegionBackendService,
        &name,
        BTreeMap::new(),
        attrs([
            ("health_checks", json!([hc.id])),
            ("load_balancing_scheme", json!("INTERNAL")),
            ("protocol", json!("TCP")),
        ]),
    )
    .await?;
    let http = make(
        cloud,
        R::HttpHealthCheck,
        &name,
        BTreeMap::new(),
        attrs([("port", json!(3990)), ("request_path", json!("/healthz"))]),
    )
    .await?;
    let pool = make(
        cloud,
        R::TargetPool,
        &name,
        BTreeMap::new(),
        attrs([("health_checks", json!([http.attr_str("self_link")]))]),
    )
    .await?;
    let addr = make(cloud, R::Address, &name, BTreeMap::new(), BTreeMap::new()).await?;
    let ip = addr.attr_str("address").unwrap_or_default().to_owned();
    assert!(
        ip.parse::<std::net::IpAddr>().is_ok(),
        "address not allocated: {:?}",
        addr.attrs
    );
    let mut fl = labels(cluster);
    fl.insert("name".into(), "api".into());
    let fr = make(
        cloud,
        R::ForwardingRule,
        &name,
        fl,
        attrs([
            ("ip_address", json!(ip)),
            ("ip_protocol", json!("TCP")),
            ("load_balancing_scheme", json!("EXTERNAL")),
            ("port_range", json!("443-443")),
            ("target", json!(pool.attr_str("self_link"))),
        ]),
    )
    .await?;
    assert_eq!(
        cloud.list_labelled(R::ForwardingRule, cluster).await?.len(),
        1
    );
    gone(cloud, R::ForwardingRule, &fr.id).await?;
    gone(cloud, R::Address, &addr.id).await?;
    gone(cloud, R::TargetPool, &pool.id).await?;
    gone(cloud, R::HttpHealthCheck, &http.id).await?;
    gone(cloud, R::RegionBackendService, &bs.id).await?;
    gone(cloud, R::RegionHealthCheck, &hc.id).await?;
    Ok(())
}

/// Service account and project IAM binding: the account's ID is its email.
pub async fn iam(cloud: &dyn GceCloud, cluster: &str) -> Result<()> {
    let project = cloud.project().await?.project;
    let account = crate::cloud::safe_cluster_name(cluster);
    let account: String = format!("node-{account}").chars().take(30).collect();
    let sa = cloud
        .create(&CreateRequest::new(R::ServiceAccount).with_attrs(attrs([
            ("account_id", json!(account)),
            ("display_name", json!("node")),
            ("description", json!("kubernetes worker nodes")),
            ("project", json!(project)),
        ])))
        .await?;
    let email = format!("{account}@{project}.iam.gserviceaccount.com");
    assert_eq!(sa.id, email, "a service account's ID is its email");
    assert_eq!(sa.attr_str("email"), Some(email.as_str()));
    let binding = cloud
        .create(&CreateRequest::new(R::ProjectIamBinding).with_attrs(attrs([
            ("project", json!(project)),
            ("role", json!("roles/container.serviceAgent")),
            ("members", json!([format!("serviceAccount:{email}")])),
        ])))
        .await?;
    assert!(
        cloud
            .get(R::ProjectIamBinding, &binding.id)
            .await?
            .is_some()
    );
    gone(cloud, R::ProjectIamBinding, &binding.id).await?;
    gone(cloud, R::ServiceAccount, &sa.id).await?;
    Ok(())
}

/// Missing objects: an update is `NotFound`, a get is `None`, a delete succeeds.
pub async fn not_found(cloud: &dyn GceCloud) -> Result<()> {
    for rt in [R::Network, R::Firewall, R::InstanceGroupManager, R::Disk] {
        let id = rt.id_of("does-not-exist", Some("us-test1-a"));
        assert!(cloud.get(rt, &id).await?.is_none());
        let u = cloud
            .update(&UpdateRequest::new(rt, id.clone()).with_attrs(BTreeMap::new()))
            .await;
        assert!(
            matches!(u, Err(Error::NotFound { .. })),
            "{rt}: update of a missing object: {u:?}"
        );
        cloud.delete(rt, &id).await?;
    }
    Ok(())
}

/// Label filters never return another cluster's objects; a name already taken is
/// `AlreadyExists`.
pub async fn cluster_isolation(cloud: &dyn GceCloud, a: &str, b: &str) -> Result<()> {
    let zone = cloud
        .zones()
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| Error::not_found("a zone"))?;
    let mut made = Vec::new();
    for c in [a, b] {
        made.push(
            make(
                cloud,
                R::Disk,
                &format!("d-{}", safe_cluster_name(c)),
                labels(c),
                attrs([
                    ("zone", json!(zone)),
                    ("size", json!(10)),
                    ("type", json!("pd-ssd")),
                ]),
            )
            .await?,
        );
    }
    let only_a = cloud.list_labelled(R::Disk, a).await?;
    assert_eq!(only_a.len(), 1, "cluster {a} sees {only_a:?}");
    assert_eq!(only_a[0].id, made[0].id);
    let again = cloud
        .create(
            &CreateRequest::new(R::Disk)
                .with_name(format!("d-{}", safe_cluster_name(a)))
                .with_attrs(attrs([("zone", json!(zone)), ("size", json!(10))])),
        )
        .await;
    assert!(
        matches!(again, Err(Error::AlreadyExists { .. })),
        "a taken name: {again:?}"
    );
    for d in made {
        gone(cloud, R::Disk, &d.id).await?;
    }
    Ok(())
}

/// Every check, with clusters named from `prefix`.
pub async fn run_all(cloud: &dyn GceCloud, prefix: &str) -> Result<()> {
    project_and_zones(cloud).await?;
    network(cloud, &format!("net.{prefix}.example.com")).await?;
    compute(cloud, &format!("compute.{prefix}.example.com")).await?;
    managed_instances(cloud, &format!("mi.{prefix}.example.com")).await?;
    load_balancer(cloud, &format!("lb.{prefix}.example.com")).await?;
    iam(cloud, &format!("iam.{prefix}.example.com")).await?;
    not_found(cloud).await?;
    cluster_isolation(
        cloud,
        &format!("a.{prefix}.example.com"),
        &format!("b.{prefix}.example.com"),
    )
    .await?;
    Ok(())
}
