//! Day two against the mock cloud and the fake Kubernetes API (kops_mock::kube), reached by
//! the real kube-rs client over HTTP on 127.0.0.1, with tokio's paused time.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Pod, PodSpec};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString as KubeIntOrString;
use kops_api::internal::{Cluster, InstanceGroup, InstanceGroupRole};
use kops_api::v1alpha2;
use kops_mock::MockAws;
use kops_mock::asg::{AutoScalingGroupSpec, LaunchTemplateSpec};
use kops_mock::ec2::{CreateSubnet, Image, LaunchTemplateData, TemplateRef};
use kops_mock::kube::FakeKube;
use kops_mock::kube::kubelet::FakeKubelet;
use kops_mock::seed::Seed;
use kops_model::day2::groups::{AwsInstanceGroups, InstanceGroupCloud};
use kops_model::day2::rolling::{Event, Journal, RollingOptions, RollingUpdate, UPDATE_TAINT};
use kops_model::day2::validate::{ClusterValidator, ValidateOptions, Validator};
use kops_statestore::{Store, StoreOptions};

const CLUSTER: &str = "c.example.com";

struct Rig {
    cloud: MockAws,
    kube: Arc<FakeKube>,
    client: kube::Client,
    cluster: Cluster,
    groups: Vec<InstanceGroup>,
    templates: BTreeMap<String, String>,
    kubelet: tokio::task::JoinHandle<()>,
}

fn ig(name: &str, role: InstanceGroupRole, size: i32) -> InstanceGroup {
    let mut g = InstanceGroup::default();
    g.metadata.name = Some(name.into());
    g.spec.role = Some(role);
    g.spec.min_size = Some(size);
    g.spec.max_size = Some(size);
    g
}

fn client_for(url: &str) -> kube::Client {
    let mut config = kube::Config::new(url.parse().unwrap());
    // No client-side timers: under paused time they would fire while a request is in flight.
    config.connect_timeout = None;
    config.read_timeout = None;
    config.write_timeout = None;
    kube::Client::try_from(config).unwrap()
}

/// One control-plane group of `cp` and one node group of `nodes`, launched from version 1
/// of their templates; kubelets on every instance, Ready when `ready` says so.
async fn rig(cp: i32, nodes: i32, ready: kops_mock::kube::kubelet::ReadyPolicy) -> Rig {
    rig_of(
        vec![
            ig("control-plane-a", InstanceGroupRole::ControlPlane, cp),
            ig("nodes", InstanceGroupRole::Node, nodes),
        ],
        ready,
    )
    .await
}

/// The same with any groups.
async fn rig_of(groups: Vec<InstanceGroup>, ready: kops_mock::kube::kubelet::ReadyPolicy) -> Rig {
    let cloud = MockAws::new();
    cloud
        .seed(Seed::Image(Image {
            id: "ami-1".into(),
            name: "image".into(),
            ..Default::default()
        }))
        .unwrap();
    let vpc = cloud
        .create_vpc("10.0.0.0/16", false, Default::default())
        .unwrap();
    let zone = cloud.options().zones[0].clone();
    let subnet = cloud
        .create_subnet(CreateSubnet {
            vpc_id: vpc.id,
            availability_zone: zone,
            cidr_block: Some("10.0.1.0/24".into()),
            ..Default::default()
        })
        .unwrap();
    let mut cluster = Cluster::default();
    cluster.metadata.name = Some(CLUSTER.into());
    let mut templates = BTreeMap::new();
    for g in &groups {
        let asg = kops_model::day2::groups::group_name(CLUSTER, g);
        let lt = cloud
            .create_launch_template(
                &asg,
                LaunchTemplateData {
                    image_id: Some("ami-1".into()),
                    instance_type: Some("t3.medium".into()),
                    ..Default::default()
                },
                Default::default(),
            )
            .unwrap();
        let role_tag = if g.is_control_plane() {
            "k8s.io/role/control-plane"
        } else {
            "k8s.io/role/node"
        };
        let tags: BTreeMap<String, (String, bool)> = [
            ("KubernetesCluster", CLUSTER),
            ("kops.k8s.io/instancegroup", g.name()),
            (role_tag, "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), (v.to_string(), true)))
        .collect();
        let size = g.spec.min_size.unwrap();
        cloud
            .create_auto_scaling_group(
                AutoScalingGroupSpec {
                    name: asg.clone(),
                    launch_template: Some(LaunchTemplateSpec {
                        launch_template_id: Some(lt.id.clone()),
                        version: Some("$Latest".into()),
                        ..Default::default()
                    }),
                    min_size: size,
                    max_size: size + 2,
                    desired_capacity: Some(size),
                    subnets: vec![subnet.id.clone()],
                    ..Default::default()
                },
                tags,
            )
            .unwrap();
        templates.insert(g.name().to_owned(), lt.id);
    }
    let kube = Arc::new(FakeKube::start().await.unwrap());
    let kubelet = FakeKubelet::new(cloud.clone(), kube.clone()).with_ready_policy(ready);
    kubelet.sync();
    let kubelet = kubelet.spawn(Duration::from_secs(1));
    let client = client_for(&kube.url());
    Rig {
        cloud,
        kube,
        client,
        cluster,
        groups,
        templates,
        kubelet,
    }
}

fn always() -> kops_mock::kube::kubelet::ReadyPolicy {
    Arc::new(|_| true)
}

impl Rig {
    fn cloud_groups(&self) -> Arc<dyn InstanceGroupCloud> {
        Arc::new(AwsInstanceGroups::new(Arc::new(self.cloud.clone())))
    }

    fn validator(&self) -> Arc<dyn ClusterValidator> {
        Arc::new(Validator::new(
            self.client.clone(),
            self.cloud_groups(),
            CLUSTER,
            self.groups.clone(),
            ValidateOptions::default(),
        ))
    }

    /// A new template version with another instance type (`kops edit ig` + `update --yes`).
    fn change_instance_type(&self, group: &str, instance_type: &str) {
        let lt = &self.templates[group];
        self.cloud
            .create_launch_template_version(
                &TemplateRef::Id(lt.clone()),
                LaunchTemplateData {
                    image_id: Some("ami-1".into()),
                    instance_type: Some(instance_type.into()),
                    ..Default::default()
                },
                None,
                None,
            )
            .unwrap();
    }

    fn members(&self, group: &str) -> Vec<String> {
        let g = self.groups.iter().find(|g| g.name() == group).unwrap();
        let name = kops_model::day2::groups::group_name(CLUSTER, g);
        let m = self.cloud.describe_group_members(&[name]).unwrap();
        m[0].instances.iter().map(|i| i.0.clone()).collect()
    }

    fn instance_type(&self, id: &str) -> String {
        self.cloud
            .describe_instances(&[id.to_owned()], &[])
            .unwrap()[0]
            .instance_type
            .clone()
    }

    /// A two-replica workload on the nodes, with a budget.
    fn workload(&self, min_available: i32) {
        let nodes: Vec<String> = self
            .kube
            .objects()
            .nodes
            .iter()
            .filter(|(_, n)| {
                n.metadata
                    .labels
                    .as_ref()
                    .unwrap()
                    .get("kops.k8s.io/instancegroup")
                    .map(String::as_str)
                    == Some("nodes")
            })
            .map(|(k, _)| k.clone())
            .collect();
        for (i, node) in nodes.iter().take(2).enumerate() {
            self.kube.put_pod(Pod {
                metadata: ObjectMeta {
                    name: Some(format!("web-{i}")),
                    generate_name: Some("web-".into()),
                    namespace: Some("default".into()),
                    labels: Some([("app".to_string(), "web".to_string())].into()),
                    owner_references: Some(vec![OwnerReference {
                        kind: "ReplicaSet".into(),
                        name: "web".into(),
                        controller: Some(true),
                        ..Default::default()
                    }]),
                    ..Default::default()
                },
                spec: Some(PodSpec {
                    node_name: Some(node.clone()),
                    ..Default::default()
                }),
                status: Some(k8s_openapi::api::core::v1::PodStatus {
                    phase: Some("Running".into()),
                    conditions: Some(vec![k8s_openapi::api::core::v1::PodCondition {
                        type_: "Ready".into(),
                        status: "True".into(),
                        ..Default::default()
                    }]),
                    ..Default::default()
                }),
            });
        }
        self.kube.put_pdb(PodDisruptionBudget {
            metadata: ObjectMeta {
                name: Some("web".into()),
                namespace: Some("default".into()),
                ..Default::default()
            },
            spec: Some(PodDisruptionBudgetSpec {
                min_available: Some(KubeIntOrString::Int(min_available)),
                selector: Some(LabelSelector {
                    match_labels: Some([("app".to_string(), "web".to_string())].into()),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            status: None,
        });
    }
}

fn fast() -> RollingOptions {
    RollingOptions::default()
        .with_validation_timeout(Duration::from_secs(120))
        .with_drain_timeout(Duration::from_secs(60))
        .with_node_interval(Duration::from_secs(1))
        .with_control_plane_interval(Duration::from_secs(1))
        .with_post_drain_delay(Duration::from_secs(1))
}

fn recorder() -> (Arc<Mutex<Vec<Event>>>, kops_model::day2::rolling::EventSink) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    (
        events,
        Arc::new(move |e: &Event| sink.lock().unwrap().push(e.clone())),
    )
}

/// The largest number of instances of `group` being drained or terminated at once.
fn max_in_flight(events: &[Event], group: &str) -> usize {
    let mut cur = 0usize;
    let mut max = 0;
    for e in events.iter().filter(|e| e.group == group) {
        match e.action.as_str() {
            "drain" => cur += 1,
            "terminated" => cur = cur.saturating_sub(1),
            _ => {}
        }
        max = max.max(cur);
    }
    max
}

#[tokio::test(start_paused = true)]
async fn validate_all_ready_then_an_unready_node_is_named() {
    let rig = rig(1, 2, always()).await;
    let v = rig.validator();
    let result = v.validate().await.unwrap();
    assert!(result.is_valid(), "{:?}", result.failures);
    assert_eq!(result.nodes.len(), 3);

    let node = rig.members("nodes")[0].clone();
    rig.kubelet.abort();
    assert!(rig.kube.set_ready(&node, false));
    let result = v.validate().await.unwrap();
    assert!(!result.is_valid());
    let f = result.failures.iter().find(|f| f.kind == "Node").unwrap();
    assert_eq!(f.name, node);
    assert!(
        f.message
            .contains(&format!("node \"{node}\" of role \"node\" is not ready")),
        "{}",
        f.message
    );

    // --max-unready-nodes tolerates it.
    let tolerant = Validator::new(
        rig.client.clone(),
        rig.cloud_groups(),
        CLUSTER,
        rig.groups.clone(),
        ValidateOptions::default().with_max_unready_nodes(1),
    );
    assert!(tolerant.validate().await.unwrap().is_valid());
}

#[tokio::test(start_paused = true)]
async fn validate_names_missing_static_pods_and_missing_machines() {
    let rig = rig(1, 2, always()).await;
    rig.kubelet.abort();
    let cp = rig.members("control-plane-a")[0].clone();
    rig.kube
        .objects()
        .pods
        .remove(&("kube-system".to_string(), format!("kube-scheduler-{cp}")));
    let worker = rig.members("nodes")[1].clone();
    rig.kube.delete_node(&worker);
    let result = rig.validator().validate().await.unwrap();
    let messages: Vec<&str> = result.failures.iter().map(|f| f.message.as_str()).collect();
    assert!(
        messages.contains(
            &format!("control-plane node \"{cp}\" is missing kube-scheduler pod").as_str()
        ),
        "{messages:?}"
    );
    assert!(
        messages.contains(&format!("machine \"{worker}\" has not yet joined cluster").as_str()),
        "{messages:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn validate_cannot_validate_an_unreachable_api() {
    let rig = rig(1, 1, always()).await;
    // A port nothing listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let v = Validator::new(
        client_for(&url),
        rig.cloud_groups(),
        CLUSTER,
        rig.groups.clone(),
        ValidateOptions::default(),
    );
    let err = v.validate().await.unwrap_err();
    assert!(err.to_string().contains("listing nodes"), "{err}");
}

#[tokio::test(start_paused = true)]
async fn a_changed_instance_type_replaces_every_node_within_surge_and_the_control_plane_serially() {
    let rig = rig(1, 3, always()).await;
    rig.workload(1);
    let before_nodes = rig.members("nodes");
    let before_cp = rig.members("control-plane-a");
    rig.change_instance_type("nodes", "m5.large");
    rig.change_instance_type("control-plane-a", "m5.large");

    let roll = RollingUpdate::new(rig.cloud_groups(), fast())
        .with_kube(rig.client.clone(), rig.validator());
    let plan = roll.plan(&rig.cluster, &rig.groups).await.unwrap();
    assert!(plan.needs_update());
    let names: Vec<&str> = plan.groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["control-plane-a", "nodes"]);
    assert_eq!(
        plan.groups[0].max_surge, 0,
        "the control plane never surges"
    );
    assert_eq!(plan.groups[1].need_update, 3);
    assert!(
        plan.groups[1].update[0]
            .reason
            .contains("version 1, the group wants"),
        "{:?}",
        plan.groups[1].update[0]
    );

    let (events, sink) = recorder();
    let roll = roll.with_events(sink);
    let report = roll.run(&rig.cluster, &rig.groups).await.unwrap();
    assert_eq!(report.replaced.len(), 4);

    let after_nodes = rig.members("nodes");
    assert_eq!(after_nodes.len(), 3);
    for id in &after_nodes {
        assert!(!before_nodes.contains(id), "{id} was not replaced");
        assert_eq!(rig.instance_type(id), "m5.large");
    }
    assert!(!before_cp.contains(&rig.members("control-plane-a")[0]));
    let events = events.lock().unwrap().clone();
    // Each replaced machine's Node object went before the machine (as kOps: a replacement
    // under the same name must not come back cordoned).
    let (nodes_now, requests) = {
        let o = rig.kube.objects();
        (o.nodes.clone(), o.requests.clone())
    };
    for id in &report.replaced {
        let at = |action: &str| {
            events
                .iter()
                .position(|e| e.action == action && e.instance.as_deref() == Some(id.as_str()))
        };
        let (Some(deleted), Some(terminated)) = (at("delete-node"), at("terminate")) else {
            panic!("{id}: no delete-node and terminate events: {events:?}");
        };
        assert!(deleted < terminated, "{id}: {events:?}");
        let node = events[deleted].detail.clone().unwrap_or_default();
        assert!(
            !nodes_now.contains_key(&node),
            "node {node} of {id} is left"
        );
        assert!(
            requests
                .iter()
                .any(|r| r.method == "DELETE" && r.path.ends_with(&format!("/nodes/{node}"))),
            "node {node} of {id} was never deleted"
        );
    }
    // Default AWS settings: surge 1, unavailable 0 -> one at a time; the control plane one.
    assert!(max_in_flight(&events, "nodes") <= 1);
    assert_eq!(max_in_flight(&events, "control-plane-a"), 1);
    assert!(
        !events
            .iter()
            .any(|e| e.group == "control-plane-a" && e.action == "detach")
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| e.group == "nodes" && e.action == "detach")
            .count(),
        1
    );
    // The control plane finished before any node was touched.
    let last_cp = events
        .iter()
        .rposition(|e| e.group == "control-plane-a")
        .unwrap();
    let first_node = events.iter().position(|e| e.group == "nodes").unwrap();
    assert!(last_cp < first_node);
    // The workload survived: every pod is bound to a live node.
    let o = rig.kube.objects();
    assert_eq!(
        o.pods
            .values()
            .filter(|p| p.metadata.namespace.as_deref() == Some("default"))
            .count(),
        2
    );
    assert!(o.evictions.iter().all(|e| e.blocked_by.is_none()));
}

#[tokio::test(start_paused = true)]
async fn surge_and_unavailable_bound_the_concurrency() {
    let mut rig = rig(1, 6, always()).await;
    let nodes = rig.groups.iter_mut().find(|g| g.name() == "nodes").unwrap();
    nodes.spec.rolling_update = Some({
        let mut built = v1alpha2::RollingUpdate::default();
        built.max_surge = Some(v1alpha2::IntOrString::Int(2));
        built.max_unavailable = Some(v1alpha2::IntOrString::Int(1));
        built
    });
    rig.change_instance_type("nodes", "m5.large");
    let (events, sink) = recorder();
    let roll = RollingUpdate::new(rig.cloud_groups(), fast())
        .with_kube(rig.client.clone(), rig.validator())
        .with_events(sink);
    roll.run(&rig.cluster, &rig.groups).await.unwrap();
    let events = events.lock().unwrap().clone();
    let in_flight = max_in_flight(&events, "nodes");
    assert!(in_flight <= 3, "{in_flight}");
    assert!(in_flight >= 2, "concurrency was used: {in_flight}");
    assert_eq!(
        events
            .iter()
            .filter(|e| e.group == "nodes" && e.action == "detach")
            .count(),
        2
    );
    for id in rig.members("nodes") {
        assert_eq!(rig.instance_type(&id), "m5.large");
    }
}

#[tokio::test(start_paused = true)]
async fn a_template_whose_nodes_never_turn_ready_stops_at_the_canary() {
    let rig = rig(1, 3, Arc::new(|i| i.instance_type != "m5.broken")).await;
    let before = rig.members("nodes");
    rig.change_instance_type("nodes", "m5.broken");
    let roll = RollingUpdate::new(rig.cloud_groups(), fast())
        .with_kube(rig.client.clone(), rig.validator());
    let err = roll
        .run(&rig.cluster, &rig.groups)
        .await
        .unwrap_err()
        .to_string();
    let canary = before.last().unwrap();
    assert!(err.contains(&format!("canary {canary}")), "{err}");
    assert!(err.contains("is not ready"), "{err}");
    // Only the canary was touched: the other two still run and nothing was terminated.
    let after = rig.members("nodes");
    assert!(after.contains(&before[0]) && after.contains(&before[1]));
}

#[tokio::test(start_paused = true)]
async fn a_pdb_that_blocks_a_drain_times_out_naming_it() {
    let rig = rig(1, 2, always()).await;
    rig.workload(2);
    rig.change_instance_type("nodes", "m5.large");
    let (events, sink) = recorder();
    let roll = RollingUpdate::new(rig.cloud_groups(), fast())
        .with_kube(rig.client.clone(), rig.validator())
        .with_events(sink);
    let err = roll
        .run(&rig.cluster, &rig.groups)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("PodDisruptionBudget default/web"), "{err}");
    assert!(err.contains("drain timeout"), "{err}");
    assert!(
        rig.kube
            .evictions()
            .iter()
            .any(|e| e.blocked_by.as_deref() == Some("web"))
    );
    assert!(
        events
            .lock()
            .unwrap()
            .iter()
            .any(|e| e.action == "evict-blocked")
    );
}

#[tokio::test(start_paused = true)]
async fn an_interrupted_roll_resumes_replacing_only_the_rest_and_leaves_no_taint() {
    let rig = rig(1, 4, always()).await;
    rig.change_instance_type("nodes", "m5.large");
    let store: Arc<dyn Store> =
        kops_statestore::open("memfs://day2-resume", &StoreOptions::default()).unwrap();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stop_tx = Arc::new(stop_tx);
    let trigger = stop_tx.clone();
    let count = Arc::new(Mutex::new(0));
    let seen = count.clone();
    // Stop after the second termination, as a SIGINT would.
    let sink: kops_model::day2::rolling::EventSink = Arc::new(move |e: &Event| {
        if e.action == "terminate" {
            let mut n = seen.lock().unwrap();
            *n += 1;
            if *n == 2 {
                let _ = trigger.send(true);
            }
        }
    });
    let opts = fast()
        .with_force(true)
        .with_instance_groups(vec!["nodes".into()]);
    let first = RollingUpdate::new(rig.cloud_groups(), opts.clone())
        .with_kube(rig.client.clone(), rig.validator())
        .with_journal(Journal::new(store.clone(), CLUSTER))
        .with_events(sink)
        .with_stop(stop_rx);
    let report = first.run(&rig.cluster, &rig.groups).await.unwrap();
    assert!(report.stopped);
    let first_replaced = report.replaced.clone();
    assert!(
        first_replaced.len() >= 2 && first_replaced.len() < 4,
        "{first_replaced:?}"
    );
    // No taint or cordon is left on any node.
    for (name, n) in rig.kube.objects().nodes.iter() {
        let spec = n.spec.clone().unwrap_or_default();
        assert!(
            !spec
                .taints
                .unwrap_or_default()
                .iter()
                .any(|t| t.key == UPDATE_TAINT),
            "{name} still tainted"
        );
        assert_ne!(spec.unschedulable, Some(true), "{name} still cordoned");
    }

    // The re-run (still --force) replaces only what the first run had not.
    let (events, sink) = recorder();
    let second = RollingUpdate::new(rig.cloud_groups(), opts)
        .with_kube(rig.client.clone(), rig.validator())
        .with_journal(Journal::new(store.clone(), CLUSTER))
        .with_events(sink);
    let plan = second.plan(&rig.cluster, &rig.groups).await.unwrap();
    assert!(plan.resumed);
    let report = second.run(&rig.cluster, &rig.groups).await.unwrap();
    assert_eq!(
        first_replaced.len() + report.replaced.len(),
        4,
        "{first_replaced:?} then {:?}",
        report.replaced
    );
    for id in &report.replaced {
        assert!(!first_replaced.contains(id));
    }
    assert!(events.lock().unwrap().iter().all(|e| {
        e.instance
            .as_ref()
            .is_none_or(|i| !first_replaced.contains(i))
    }));
    for id in rig.members("nodes") {
        assert_eq!(rig.instance_type(&id), "m5.large");
    }
    // Finished: the journal is gone, so the next --force run starts afresh.
    assert!(
        store
            .get("c.example.com/rolling-update/journal.json")
            .await
            .is_err()
    );
}

#[tokio::test(start_paused = true)]
async fn cloudonly_rolls_without_any_api() {
    let rig = rig(1, 2, always()).await;
    rig.change_instance_type("nodes", "m5.large");
    let before = rig.members("nodes");
    let roll = RollingUpdate::new(rig.cloud_groups(), fast().with_cloud_only(true));
    let plan = roll.plan(&rig.cluster, &rig.groups).await.unwrap();
    assert_eq!(plan.groups[1].nodes, None);
    let report = roll.run(&rig.cluster, &rig.groups).await.unwrap();
    assert_eq!(report.replaced.len(), 2);
    for id in rig.members("nodes") {
        assert!(!before.contains(&id));
    }
}

#[tokio::test(start_paused = true)]
async fn nothing_to_do_without_a_change_and_force_replaces_ready_instances() {
    let rig = rig(1, 2, always()).await;
    let roll = RollingUpdate::new(rig.cloud_groups(), fast())
        .with_kube(rig.client.clone(), rig.validator());
    assert!(
        !roll
            .plan(&rig.cluster, &rig.groups)
            .await
            .unwrap()
            .needs_update()
    );
    let forced = RollingUpdate::new(rig.cloud_groups(), fast().with_force(true))
        .with_kube(rig.client.clone(), rig.validator());
    let plan = forced.plan(&rig.cluster, &rig.groups).await.unwrap();
    assert_eq!(plan.groups.iter().map(|g| g.need_update).sum::<usize>(), 3);
    assert!(plan.groups[1].update.iter().all(|u| u.reason == "--force"));
    let unknown = RollingUpdate::new(
        rig.cloud_groups(),
        fast().with_instance_groups(vec!["nope".into()]),
    );
    let err = unknown
        .plan(&rig.cluster, &rig.groups)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("nope"), "{err}");
}

fn openssl(args: &[&str]) -> std::process::Output {
    std::process::Command::new("openssl")
        .args(args)
        .output()
        .expect("openssl must be installed for this test")
}

#[test]
fn the_admin_certificate_verifies_against_the_cluster_ca_and_expires_when_asked() {
    use kops_model::day2::kubeconfig::{KubeconfigEntry, issue_admin_credential, merge_kubeconfig};
    use std::time::SystemTime;
    let now = SystemTime::now();
    let ca = kops_model::pki::new_keyset("kubernetes-ca", now).unwrap();
    let admin = issue_admin_credential(&ca, "alice", Duration::from_secs(3600), now).unwrap();
    assert!(
        !format!("{admin:?}").contains("PRIVATE KEY"),
        "Debug shows no key"
    );

    let dir = tempfile::tempdir().unwrap();
    let ca_pem = String::from_utf8(ca.primary().unwrap().public_material.clone().unwrap()).unwrap();
    let ca_path = dir.path().join("ca.crt");
    let cert_path = dir.path().join("admin.crt");
    std::fs::write(&ca_path, &ca_pem).unwrap();
    std::fs::write(&cert_path, &admin.certificate_pem).unwrap();
    let (ca_s, cert_s) = (ca_path.to_str().unwrap(), cert_path.to_str().unwrap());

    let ok = openssl(&["verify", "-purpose", "sslclient", "-CAfile", ca_s, cert_s]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let subject = openssl(&[
        "x509", "-in", cert_s, "-noout", "-subject", "-nameopt", "RFC2253",
    ]);
    let subject = String::from_utf8_lossy(&subject.stdout).to_string();
    assert!(
        subject.contains("CN=kubecfg-alice") && subject.contains("O=system:masters"),
        "{subject}"
    );
    // Valid now and in 59 minutes, expired in 61.
    let ends = |secs: &str| {
        openssl(&["x509", "-in", cert_s, "-noout", "-checkend", secs])
            .status
            .success()
    };
    assert!(ends("3540"));
    assert!(!ends("3660"));
    // Checked at a time after expiry, verification fails.
    let later = (SystemTime::now() + Duration::from_secs(7200))
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .to_string();
    let expired = openssl(&["verify", "-attime", &later, "-CAfile", ca_s, cert_s]);
    assert!(!expired.status.success());

    // Another CA does not verify it.
    let other = kops_model::pki::new_keyset("kubernetes-ca", now).unwrap();
    let other_path = dir.path().join("other.crt");
    std::fs::write(
        &other_path,
        other.primary().unwrap().public_material.clone().unwrap(),
    )
    .unwrap();
    let wrong = openssl(&["verify", "-CAfile", other_path.to_str().unwrap(), cert_s]);
    assert!(!wrong.status.success());

    // The kubeconfig carries it under the user named after the cluster.
    let text = merge_kubeconfig(
        None,
        &KubeconfigEntry::new(CLUSTER, "https://api.c.example.com")
            .with_ca_pem(ca_pem)
            .with_admin(admin),
    )
    .unwrap();
    let kc = kube::config::Kubeconfig::from_yaml(&text).unwrap();
    assert_eq!(kc.current_context.as_deref(), Some(CLUSTER));
    assert!(
        kc.auth_infos[0]
            .auth_info
            .as_ref()
            .unwrap()
            .client_certificate_data
            .is_some()
    );
}

#[tokio::test(start_paused = true)]
async fn a_kubeconfig_export_reaches_the_api() {
    use kops_model::day2::kubeconfig::{KubeconfigEntry, client_for};
    let rig = rig(1, 1, always()).await;
    let client = client_for(&KubeconfigEntry::new(CLUSTER, rig.kube.url()))
        .await
        .unwrap();
    let v = Validator::new(
        client,
        rig.cloud_groups(),
        CLUSTER,
        rig.groups.clone(),
        ValidateOptions::default(),
    );
    assert!(v.validate().await.unwrap().is_valid());
}

/// Three control-plane groups of one (kOps' usual multi-zone control plane) and a node
/// group: the control-plane groups roll one after the other, in name order, one instance
/// at a time, never surged, and all before any worker; every node is replaced.
#[tokio::test(start_paused = true)]
async fn control_plane_groups_roll_serially_and_never_surge() {
    let rig = rig_of(
        vec![
            ig("control-plane-c", InstanceGroupRole::ControlPlane, 1),
            ig("control-plane-a", InstanceGroupRole::ControlPlane, 1),
            ig("control-plane-b", InstanceGroupRole::ControlPlane, 1),
            ig("nodes", InstanceGroupRole::Node, 2),
        ],
        always(),
    )
    .await;
    for g in [
        "control-plane-a",
        "control-plane-b",
        "control-plane-c",
        "nodes",
    ] {
        rig.change_instance_type(g, "m5.large");
    }
    // Even a cluster-wide surge is ignored for the control plane.
    let mut cluster = rig.cluster.clone();
    cluster.spec.rolling_update = Some({
        let mut built = v1alpha2::RollingUpdate::default();
        built.max_surge = Some(v1alpha2::IntOrString::Int(3));
        built
    });
    let (events, sink) = recorder();
    let roll = RollingUpdate::new(rig.cloud_groups(), fast())
        .with_kube(rig.client.clone(), rig.validator())
        .with_events(sink);
    let report = roll.run(&cluster, &rig.groups).await.unwrap();
    assert_eq!(report.replaced.len(), 5);
    let events = events.lock().unwrap().clone();
    // Group order of the first action of each group, and no interleaving.
    let mut order: Vec<&str> = Vec::new();
    for e in &events {
        if e.group.is_empty() {
            continue;
        }
        if order.last() != Some(&e.group.as_str()) {
            assert!(
                !order.contains(&e.group.as_str()),
                "{} interleaved",
                e.group
            );
            order.push(&e.group);
        }
    }
    assert_eq!(
        order,
        [
            "control-plane-a",
            "control-plane-b",
            "control-plane-c",
            "nodes"
        ]
    );
    // At most one control-plane instance in flight at any moment, across all three.
    let mut cur = 0usize;
    for e in events
        .iter()
        .filter(|e| e.group.starts_with("control-plane"))
    {
        match e.action.as_str() {
            "drain" => cur += 1,
            "terminated" => cur -= 1,
            _ => {}
        }
        assert!(cur <= 1, "{events:#?}");
    }
    assert!(
        !events
            .iter()
            .any(|e| e.group.starts_with("control-plane") && e.action == "detach")
    );
    for g in [
        "control-plane-a",
        "control-plane-b",
        "control-plane-c",
        "nodes",
    ] {
        for id in rig.members(g) {
            assert_eq!(rig.instance_type(&id), "m5.large", "{g} {id}");
        }
    }
}

/// A roll killed halfway (the process dies: its future is dropped mid-drain, nothing is
/// cleaned up), then run again with the same journal: the second run replaces only what
/// the first did not, and no node is left tainted or cordoned.
#[tokio::test(start_paused = true)]
async fn a_killed_roll_run_again_replaces_only_the_rest_and_leaves_no_taint() {
    let rig = rig(1, 4, always()).await;
    rig.workload(1);
    rig.change_instance_type("nodes", "m5.large");
    let before = rig.members("nodes");
    let store: Arc<dyn Store> =
        kops_statestore::open("memfs://day2-killed", &StoreOptions::default()).unwrap();
    let opts = fast().with_instance_groups(vec!["nodes".into()]);
    let terminations = Arc::new(Mutex::new(0usize));
    let (kill_tx, kill_rx) = tokio::sync::oneshot::channel::<()>();
    let kill_tx = Mutex::new(Some(kill_tx));
    let seen = terminations.clone();
    // Kill as the third drain starts: two replaced, one half-drained, one only tainted.
    let sink: kops_model::day2::rolling::EventSink = Arc::new(move |e: &Event| {
        if e.action == "drain" {
            let mut n = seen.lock().unwrap();
            *n += 1;
            if *n == 3
                && let Some(tx) = kill_tx.lock().unwrap().take()
            {
                let _ = tx.send(());
            }
        }
    });
    let first = RollingUpdate::new(rig.cloud_groups(), opts.clone())
        .with_kube(rig.client.clone(), rig.validator())
        .with_journal(Journal::new(store.clone(), CLUSTER))
        .with_events(sink);
    tokio::select! {
        r = first.run(&rig.cluster, &rig.groups) => panic!("the roll finished before the kill: {r:?}"),
        _ = kill_rx => {}
    }
    drop(first);
    // Still running: in the group, or detached from it by the surge.
    let survivors: Vec<String> = before
        .iter()
        .filter(|id| {
            rig.cloud.describe_instances(&[(*id).clone()], &[]).unwrap()[0].state == "running"
        })
        .cloned()
        .collect();
    assert!(
        !survivors.is_empty() && survivors.len() < 4,
        "{survivors:?}"
    );
    // The kill left marks behind (that is what a crash does).
    let tainted = |rig: &Rig| -> Vec<String> {
        rig.kube
            .objects()
            .nodes
            .iter()
            .filter(|(_, n)| {
                let spec = n.spec.clone().unwrap_or_default();
                spec.unschedulable == Some(true)
                    || spec
                        .taints
                        .unwrap_or_default()
                        .iter()
                        .any(|t| t.key == UPDATE_TAINT)
            })
            .map(|(k, _)| k.clone())
            .collect()
    };
    assert!(!tainted(&rig).is_empty());

    let second = RollingUpdate::new(rig.cloud_groups(), opts)
        .with_kube(rig.client.clone(), rig.validator())
        .with_journal(Journal::new(store.clone(), CLUSTER));
    let plan = second.plan(&rig.cluster, &rig.groups).await.unwrap();
    assert!(plan.resumed);
    let planned: Vec<String> = plan.groups[0].update.iter().map(|u| u.id.clone()).collect();
    let mut expected = survivors.clone();
    expected.sort();
    let mut got = planned.clone();
    got.sort();
    assert_eq!(
        got, expected,
        "only the instances the first run did not replace"
    );
    let report = second.run(&rig.cluster, &rig.groups).await.unwrap();
    let mut replaced = report.replaced.clone();
    replaced.sort();
    assert_eq!(replaced, expected);
    for id in rig.members("nodes") {
        assert_eq!(rig.instance_type(&id), "m5.large");
    }
    assert!(tainted(&rig).is_empty(), "{:?}", tainted(&rig));
}

/// Where each of `actions` first happened to `id` in `events`.
fn first_of(events: &[Event], id: &str, actions: &[&str]) -> Vec<Option<usize>> {
    actions
        .iter()
        .map(|a| {
            events
                .iter()
                .position(|e| e.action == *a && e.instance.as_deref() == Some(id))
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn deleting_an_instance_detaches_it_validates_then_drains_and_terminates_it() {
    let rig = rig(1, 3, always()).await;
    rig.workload(1);
    let before = rig.members("nodes");
    let victim = before[0].clone();
    let (events, sink) = recorder();
    let roll = RollingUpdate::new(rig.cloud_groups(), fast())
        .with_kube(rig.client.clone(), rig.validator())
        .with_events(sink);

    let found = roll
        .find_instance(&rig.cluster, &rig.groups, &victim)
        .await
        .unwrap();
    assert_eq!(
        (
            found.id.as_str(),
            found.node.as_deref(),
            found.instance_group.as_str()
        ),
        (victim.as_str(), Some(victim.as_str()), "nodes")
    );
    assert!(events.lock().unwrap().is_empty(), "finding changes nothing");
    assert_eq!(rig.members("nodes"), before);

    let deleted = roll
        .delete_instance(&rig.cluster, &rig.groups, &victim, true)
        .await
        .unwrap();
    assert_eq!(deleted, found);
    // The group launched a replacement before the instance went; the others stayed.
    let after = rig.members("nodes");
    assert_eq!(after.len(), 3, "{after:?}");
    assert!(!after.contains(&victim));
    for id in &before[1..] {
        assert!(after.contains(id), "{id} was touched");
    }
    let events = events.lock().unwrap().clone();
    let order = first_of(
        &events,
        &victim,
        &["detach", "drain", "delete-node", "terminate"],
    );
    assert!(order.iter().all(Option::is_some), "{events:?}");
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{events:?}");
    let validated = events
        .iter()
        .position(|e| e.action == "validate")
        .expect("a validation after detaching");
    assert!(
        order[0] < Some(validated) && Some(validated) < order[1],
        "{events:?}"
    );
    // Only that instance: nothing else detached, drained or terminated.
    assert!(
        events
            .iter()
            .all(|e| e.instance.is_none() || e.instance.as_deref() == Some(victim.as_str())),
        "{events:?}"
    );
    // Its node is gone and the pods on it were evicted, within the budget.
    let o = rig.kube.objects();
    assert!(!o.nodes.contains_key(&victim));
    assert!(
        o.evictions
            .iter()
            .all(|e| e.node.as_deref() == Some(victim.as_str()) && e.blocked_by.is_none()),
        "{:?}",
        o.evictions
    );
}

#[tokio::test(start_paused = true)]
async fn a_control_plane_instance_found_by_its_node_name_is_replaced_without_surge() {
    let rig = rig(1, 2, always()).await;
    // Nodes named as on AWS (not after the instance): the kubelet stops registering them.
    rig.kubelet.abort();
    let cp = rig.members("control-plane-a")[0].clone();
    let mut node = rig.kube.delete_node(&cp).unwrap();
    let node_name = "ip-10-0-1-7.ec2.internal";
    node.metadata.name = Some(node_name.into());
    rig.kube.put_node(node);
    let (events, sink) = recorder();
    let roll = RollingUpdate::new(rig.cloud_groups(), fast())
        .with_kube(rig.client.clone(), rig.validator())
        .with_events(sink);

    let found = roll
        .delete_instance(&rig.cluster, &rig.groups, node_name, true)
        .await
        .unwrap();
    assert_eq!(
        (found.id.as_str(), found.node.as_deref()),
        (cp.as_str(), Some(node_name))
    );
    let events = events.lock().unwrap().clone();
    let order = first_of(
        &events,
        &cp,
        &["no-surge", "detach", "drain", "delete-node", "terminate"],
    );
    assert!(order[0].is_some() && order[1].is_none(), "{events:?}");
    assert!(order[2] < order[3] && order[3] < order[4], "{events:?}");
    assert_eq!(
        events[order[3].unwrap()].detail.as_deref(),
        Some(node_name),
        "the node deleted is the instance's"
    );
    assert!(!rig.kube.objects().nodes.contains_key(node_name));
    assert!(!rig.members("control-plane-a").contains(&cp));
}

#[tokio::test(start_paused = true)]
async fn an_unknown_instance_and_one_without_a_node_are_refused_naming_them() {
    let rig = rig(1, 2, always()).await;
    rig.kubelet.abort();
    let roll = RollingUpdate::new(rig.cloud_groups(), fast())
        .with_kube(rig.client.clone(), rig.validator());
    let e = roll
        .delete_instance(&rig.cluster, &rig.groups, "i-nothere", true)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"i-nothere\"") && e.contains(CLUSTER), "{e}");

    // A machine that never joined: only --cloudonly deletes it.
    let lone = rig.members("nodes")[0].clone();
    rig.kube.delete_node(&lone).unwrap();
    let before = rig.members("nodes");
    let e = roll
        .delete_instance(&rig.cluster, &rig.groups, &lone, true)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains(&lone) && e.contains("--cloudonly"), "{e}");
    assert_eq!(rig.members("nodes"), before, "nothing was deleted");

    let cloud_only = RollingUpdate::new(rig.cloud_groups(), fast().with_cloud_only(true));
    let found = cloud_only
        .delete_instance(&rig.cluster, &rig.groups, &lone, false)
        .await
        .unwrap();
    assert_eq!(found.node, None);
    assert!(!rig.members("nodes").contains(&lone));
}

/// The control plane's version is its oldest kubelet's; other nodes do not count, and a
/// cluster without control-plane nodes has none.
#[tokio::test]
async fn the_control_planes_version_is_its_oldest_kubelets() {
    use kops_model::day2::validate::control_plane_version;
    let kube = FakeKube::start().await.unwrap();
    let client = client_for(&kube.url());
    assert_eq!(control_plane_version(&client).await.unwrap(), None);
    let node = |name: &str, control_plane: bool, version: &str| {
        let mut labels = BTreeMap::new();
        if control_plane {
            labels.insert(
                "node-role.kubernetes.io/control-plane".to_owned(),
                String::new(),
            );
        }
        k8s_openapi::api::core::v1::Node {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: Some(labels),
                ..Default::default()
            },
            status: Some(k8s_openapi::api::core::v1::NodeStatus {
                node_info: Some(k8s_openapi::api::core::v1::NodeSystemInfo {
                    kubelet_version: version.into(),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }
    };
    kube.put_node(node("cp-a", true, "v1.34.1"));
    kube.put_node(node("cp-b", true, "v1.33.5"));
    kube.put_node(node("worker", false, "v1.32.0"));
    assert_eq!(
        control_plane_version(&client).await.unwrap().as_deref(),
        Some("1.33.5")
    );
}

/// A client of the library answers an eviction that a PodDisruptionBudget refuses with
/// the 429 at once (in real time), for the drain to retry on its own terms within its
/// timeout: kube's default retry would hold it for minutes.
#[tokio::test]
async fn a_refused_eviction_reaches_the_drain_at_once() {
    use kops_model::day2::kubeconfig::{KubeconfigEntry, client_for};
    let kube = FakeKube::start().await.unwrap();
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {
            "name": "db-0", "namespace": "default", "labels": {"app": "db"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db",
                                 "uid": "uid-db", "controller": true}],
        },
        "spec": {"nodeName": "n1", "containers": [{"name": "main", "image": "pause"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }))
    .unwrap();
    kube.put_pod(pod);
    let pdb: PodDisruptionBudget = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}},
    }))
    .unwrap();
    kube.put_pdb(pdb);
    let client = client_for(&KubeconfigEntry::new(CLUSTER, kube.url()))
        .await
        .unwrap();
    let pods = kube::Api::<Pod>::namespaced(client, "default");
    let evicted = tokio::time::timeout(
        Duration::from_secs(20),
        pods.evict("db-0", &kube::api::EvictParams::default()),
    )
    .await
    .expect("the 429 comes back within 20s");
    assert!(
        matches!(&evicted, Err(kube::Error::Api(s)) if s.code == 429),
        "{evicted:?}"
    );
    assert_eq!(kube.evictions().len(), 1, "retried: {:?}", kube.evictions());
}
