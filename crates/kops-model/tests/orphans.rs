//! Objects the spec no longer needs are planned for deletion, and only those: removing a
//! zone (its subnet and the instance groups in it) and an `sshAccess` CIDR (its
//! security-group rules) from an applied cluster, on the mock cloud.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use kops_api::v1alpha2::{Cluster, InstanceGroup};
use kops_model::aws::cloud::AwsCloud;
use kops_model::aws::{ApplyOptions, DiscoverOptions, UpdateCluster, UpdateOptions, discover};
use kops_model::{DnsType, NewClusterOptions, new_cluster};
use kops_statestore::{MemoryStore, Registry, Store, SystemClock};

const NAME: &str = "orphans.example.com";
const STORE: &str = "memfs://clusters.example.com";

fn mock() -> kops_mock::MockAws {
    kops_mock::fixture::Fixture::parse(
        "aws:\n  region: us-test-1\n  zones: [us-test-1a, us-test-1b]\n  route53:\n    hostedZones:\n    - {id: /hostedzone/ZORPHANS, name: example.com., private: false}\n  ec2:\n    images:\n    - {imageId: ami-00000001, name: orphans, ownerId: '1', rootDeviceName: /dev/xvda}\n    - {imageId: ami-00000002, name: orphans-2, ownerId: '1', rootDeviceName: /dev/xvda}\n",
        "orphans test",
    )
    .unwrap()
    .build()
    .unwrap()
}

fn spec() -> (Cluster, Vec<InstanceGroup>) {
    let (mut cluster, groups) = new_cluster(
        &NewClusterOptions::new(NAME, STORE)
            .with_zones(["us-test-1a", "us-test-1b"])
            .with_control_plane_zones(["us-test-1a"])
            .with_node_count(2)
            .with_dns(DnsType::Public)
            .with_image(Some("ami-00000001".into()))
            .with_kubernetes_version("v1.34.1"),
    )
    .unwrap();
    cluster.spec.ssh_access = Some(vec!["0.0.0.0/0".into(), "10.1.0.0/16".into()]);
    (cluster, groups)
}

async fn update(
    cloud: &kops_mock::MockAws,
    store: &Arc<MemoryStore>,
    cluster: &Cluster,
    groups: &[InstanceGroup],
) -> UpdateCluster {
    let opts = DiscoverOptions::default().with_state_store(store.clone(), STORE);
    let ctx = discover(cloud, cluster, groups, &opts).await.unwrap();
    UpdateCluster::new(
        ctx,
        UpdateOptions::default()
            .with_lock_holder("orphans test")
            .with_unreadable_config_base(true),
    )
    .unwrap()
}

/// [`spec`] applied to a new mock cloud.
struct Applied {
    cloud: kops_mock::MockAws,
    store: Arc<MemoryStore>,
    registry: Registry,
    first: UpdateCluster,
    groups: Vec<InstanceGroup>,
}

async fn applied() -> Applied {
    let cloud = mock();
    let api: &dyn AwsCloud = &cloud;
    let store = Arc::new(MemoryStore::new());
    let registry = Registry::new(store.clone() as Arc<dyn Store>, Arc::new(SystemClock));
    let (cluster, groups) = spec();
    let first = update(&cloud, &store, &cluster, &groups).await;
    let plan = first.plan(api).await.unwrap();
    first
        .apply(api, &registry, &plan, ApplyOptions::default())
        .await
        .unwrap();
    Applied {
        cloud,
        store,
        registry,
        first,
        groups,
    }
}

/// The plan's cloud changes. The state store's copy of the completed spec
/// (`ManagedFile/cluster-completed.spec`) changes with the spec and is left out.
fn changes(plan: &kops_tasks::Plan) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = plan
        .items
        .iter()
        .filter(|i| i.action.is_change())
        .filter(|i| i.key.to_string() != "ManagedFile/cluster-completed.spec")
        .map(|i| (format!("{:?} {}", i.action, i.key), i.deferred))
        .collect();
    out.sort();
    out
}

#[test]
fn removing_a_zone_and_an_ssh_cidr_plans_exactly_their_deletion() {
    deep(removing_a_zone);
}

async fn removing_a_zone() {
    let Applied {
        cloud,
        store,
        registry,
        first,
        groups,
    } = applied().await;
    let api: &dyn AwsCloud = &cloud;
    let again = first.plan(api).await.unwrap();
    assert!(!again.plan.has_changes(), "{}", again.plan.render_text());

    // Remove zone b (its subnet and its node group) and one sshAccess CIDR.
    // From the completed spec, which has every subnet's CIDR as applied.
    let mut smaller = Cluster::from(&first.context().cluster);
    let subnets = smaller.spec.subnets.take().unwrap();
    let (gone, kept): (Vec<_>, Vec<_>) = subnets
        .into_iter()
        .partition(|s| s.zone.as_deref() == Some("us-test-1b"));
    assert_eq!(gone.len(), 1, "one subnet in zone b");
    smaller.spec.subnets = Some(kept);
    smaller.spec.ssh_access = Some(vec!["0.0.0.0/0".into()]);
    let gone_subnet = gone[0].name.clone().unwrap();
    let (removed, kept_groups): (Vec<_>, Vec<_>) = groups.into_iter().partition(|g| {
        g.spec
            .subnets
            .as_ref()
            .is_some_and(|s| s.contains(&gone_subnet))
    });
    assert_eq!(
        removed.len(),
        1,
        "one group in zone b ({gone_subnet}): {:?}",
        kept_groups
            .iter()
            .map(|g| (g.name().to_owned(), g.spec.subnets.clone()))
            .collect::<Vec<_>>()
    );
    let group = removed[0].name().to_owned();

    let second = update(&cloud, &store, &smaller, &kept_groups).await;
    let plan = second.plan(api).await.unwrap();
    let got = changes(&plan.plan);
    let every_delete = got.iter().all(|(c, _)| c.starts_with("Delete "));
    assert!(every_delete, "{got:#?}\n{}", plan.plan.render_text());
    let subnet_key = format!("Delete Subnet/{gone_subnet}.{NAME}");
    let asg_key = format!("Delete AutoscalingGroup/{group}.{NAME}");
    let lt_key = format!("Delete LaunchTemplate/{group}.{NAME}");
    for want in [&subnet_key, &asg_key, &lt_key] {
        assert!(
            got.iter().any(|(c, deferred)| c == want && !deferred),
            "{want} missing: {got:#?}"
        );
    }
    let rules: Vec<&(String, bool)> = got
        .iter()
        .filter(|(c, _)| c.starts_with("Delete SecurityGroupRule/"))
        .collect();
    assert!(!rules.is_empty(), "{got:#?}");
    assert!(
        rules
            .iter()
            .all(|(c, deferred)| c.contains("10.1.0.0/16") && c.contains("-22to22-") && *deferred),
        "{rules:#?}"
    );
    // Exactly those: the subnet, the group's two objects, the CIDR's SSH rules.
    assert_eq!(got.len(), 3 + rules.len(), "{got:#?}");
    let text = plan.plan.render_text();
    assert!(text.contains("--prune"), "{text}");
    assert!(text.contains("no longer described"), "{text}");

    // Without --prune the deferred rule deletions wait; with it they go.
    second
        .apply(api, &registry, &plan, ApplyOptions::default())
        .await
        .unwrap();
    let after = second.plan(api).await.unwrap();
    let left = changes(&after.plan);
    assert!(
        left.iter()
            .all(|(c, deferred)| *deferred && c.contains("SecurityGroupRule")),
        "{left:#?}"
    );
    assert_eq!(left.len(), rules.len(), "{left:#?}");
    second
        .apply(
            api,
            &registry,
            &after,
            ApplyOptions::default().with_prune(true),
        )
        .await
        .unwrap();
    let last = second.plan(api).await.unwrap();
    assert!(!last.plan.has_changes(), "{}", last.plan.render_text());
}

/// The changes of a plan, as `Action Kind/name` lines.
fn changed_keys(plan: &kops_tasks::Plan) -> Vec<String> {
    changes(plan).into_iter().map(|(c, _)| c).collect()
}

#[test]
fn an_update_of_some_groups_leaves_the_others_machines_as_they_are() {
    deep(some_groups);
}

/// Runs a test on a thread of its own: the workflow's futures, nested, are deeper than a
/// debug build's test thread.
fn deep<F: Future<Output = ()> + 'static>(test: fn() -> F) {
    std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(test())
        })
        .unwrap()
        .join()
        .unwrap();
}

async fn some_groups() {
    use kops_api::internal::InstanceGroupRole;
    let Applied {
        cloud,
        store,
        registry,
        groups,
        ..
    } = applied().await;
    let api: &dyn AwsCloud = &cloud;
    let cluster = spec().0;

    // A new image for every group's machines.
    let groups: Vec<InstanceGroup> = groups
        .into_iter()
        .map(|mut g| {
            g.spec.image = Some("ami-00000002".into());
            g
        })
        .collect();
    let discover_opts = DiscoverOptions::default().with_state_store(store.clone(), STORE);
    let ctx = discover(api, &cluster, &groups, &discover_opts)
        .await
        .unwrap();
    let options = UpdateOptions::default()
        .with_lock_holder("orphans test")
        .with_unreadable_config_base(true);
    let control_plane = UpdateCluster::new(
        ctx.clone(),
        options
            .clone()
            .with_instance_group_roles(vec![InstanceGroupRole::ControlPlane]),
    )
    .unwrap();
    let plan = control_plane.plan(api).await.unwrap();
    let got = changed_keys(&plan.plan);
    let cp = groups
        .iter()
        .find(|g| g.name().starts_with("control-plane"))
        .unwrap()
        .name()
        .to_owned();
    assert_eq!(
        got,
        [format!("Update LaunchTemplate/{cp}.masters.{NAME}")],
        "the control plane's machines change, the node groups' are neither changed nor deleted"
    );
    control_plane
        .apply(api, &registry, &plan, ApplyOptions::default())
        .await
        .unwrap();

    // The whole update then changes the node groups' machines only.
    let all = UpdateCluster::new(ctx.clone(), options.clone()).unwrap();
    let rest = changed_keys(&all.plan(api).await.unwrap().plan);
    let nodes: Vec<&str> = groups
        .iter()
        .map(|g| g.name())
        .filter(|n| n.starts_with("nodes-"))
        .collect();
    assert_eq!(nodes.len(), 2);
    for n in &nodes {
        assert!(
            rest.contains(&format!("Update LaunchTemplate/{n}.{NAME}")),
            "{rest:#?}"
        );
    }
    assert!(
        rest.iter()
            .all(|c| c.starts_with("Update ") && !c.contains(&cp)),
        "{rest:#?}"
    );

    // One group by name: only its machines.
    let one = UpdateCluster::new(
        ctx.clone(),
        options
            .clone()
            .with_instance_groups(vec![nodes[0].to_owned()])
            // Names win over roles.
            .with_instance_group_roles(vec![InstanceGroupRole::ControlPlane]),
    )
    .unwrap();
    let only = changed_keys(&one.plan(api).await.unwrap().plan);
    assert!(
        only.contains(&format!("Update LaunchTemplate/{}.{NAME}", nodes[0])),
        "{only:#?}"
    );
    assert!(only.iter().all(|c| !c.contains(nodes[1])), "{only:#?}");

    // A group the cluster does not have is named; Terraform of some groups is refused.
    let err = UpdateCluster::new(
        ctx.clone(),
        options
            .clone()
            .with_instance_groups(vec!["nodes-nope".into()]),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("nodes-nope"), "{err}");
    let err = control_plane
        .render_terraform()
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("Terraform"), "{err}");
}

#[test]
fn an_update_limited_to_a_phase_changes_that_phases_objects_only() {
    deep(phases);
}

async fn phases() {
    use kops_model::Phase;
    let Applied {
        cloud,
        store,
        registry,
        first,
        groups,
    } = applied().await;
    let api: &dyn AwsCloud = &cloud;
    // A new machine type (the cluster phase) and one SSH CIDR less (security).
    let mut cluster = Cluster::from(&first.context().cluster);
    cluster.spec.ssh_access = Some(vec!["0.0.0.0/0".into()]);
    let groups: Vec<InstanceGroup> = groups
        .into_iter()
        .map(|mut g| {
            g.spec.machine_type = Some("m5.large".into());
            g
        })
        .collect();
    let ctx = discover(
        api,
        &cluster,
        &groups,
        &DiscoverOptions::default().with_state_store(store.clone(), STORE),
    )
    .await
    .unwrap();
    let options = UpdateOptions::default()
        .with_lock_holder("phases test")
        .with_unreadable_config_base(true);
    let planned = |phase: Phase| {
        let update =
            UpdateCluster::new(ctx.clone(), options.clone().with_phase(Some(phase))).unwrap();
        async move { changed_keys(&update.plan(api).await.unwrap().plan) }
    };

    let network = planned(Phase::Network).await;
    assert!(network.is_empty(), "{network:#?}");
    let security = planned(Phase::Security).await;
    assert!(!security.is_empty(), "{security:#?}");
    assert!(
        security.iter().all(|c| c.contains("SecurityGroupRule/")),
        "{security:#?}"
    );
    let machines = planned(Phase::Cluster).await;
    assert!(
        machines
            .iter()
            .any(|c| c.starts_with("Update LaunchTemplate/")),
        "{machines:#?}"
    );
    assert!(
        machines
            .iter()
            .all(|c| !c.contains("SecurityGroupRule/") && !c.contains("Subnet/")),
        "{machines:#?}"
    );
    // Applying the cluster phase leaves the security phase's change pending.
    let update = UpdateCluster::new(
        ctx.clone(),
        options.clone().with_phase(Some(Phase::Cluster)),
    )
    .unwrap();
    let plan = update.plan(api).await.unwrap();
    update
        .apply(api, &registry, &plan, ApplyOptions::default())
        .await
        .unwrap();
    let rest = changed_keys(
        &UpdateCluster::new(ctx.clone(), options.clone())
            .unwrap()
            .plan(api)
            .await
            .unwrap()
            .plan,
    );
    assert!(
        !rest.is_empty() && rest.iter().all(|c| c.contains("SecurityGroupRule/")),
        "{rest:#?}"
    );
    // Terraform of one phase is refused; so is an unknown phase.
    let err = update.render_terraform().await.unwrap_err().to_string();
    assert!(err.contains("phase"), "{err}");
    assert!(
        Phase::parse("everything")
            .unwrap_err()
            .to_string()
            .contains("network, security, cluster")
    );
    assert_eq!(Phase::parse("IAM").unwrap(), Phase::Security);

    // The cluster phase on a cloud without the network: refused before anything changes.
    let empty = mock();
    let ctx = discover(
        &empty,
        &cluster,
        &groups,
        &DiscoverOptions::default().with_state_store(Arc::new(MemoryStore::new()), STORE),
    )
    .await
    .unwrap();
    let update = UpdateCluster::new(ctx, options.with_phase(Some(Phase::Cluster))).unwrap();
    let err = format!("{:#}", anyhow_chain(update.plan(&empty).await.unwrap_err()));
    assert!(err.contains("VPC/"), "{err}");
}

/// An error and its sources, as one line.
fn anyhow_chain(e: kops_model::Error) -> String {
    let mut out = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        out.push_str(&format!(": {s}"));
        source = s.source();
    }
    out
}
