//! kOps' own rolling-update scenarios (`pkg/instancegroups/*_test.go`), in our words: a
//! scripted cloud whose groups hold members in a given state (a terminated member is not
//! replaced, as in kOps' mock autoscaling), the fake Kubernetes API holding one node per
//! member, and scripted validators. Time is tokio's paused clock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use k8s_openapi::api::core::v1::{Node, NodeSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kops_api::internal::{Cluster, InstanceGroup, InstanceGroupRole};
use kops_api::v1alpha2::{self, IntOrString};
use kops_mock::kube::FakeKube;
use kops_model::day2::groups::{CloudGroup, CloudMember, InstanceGroupCloud, MemberStatus};
use kops_model::day2::rolling::{
    Event, EventSink, RollingOptions, RollingReport, RollingUpdate, UPDATE_TAINT,
};
use kops_model::day2::validate::{ClusterValidator, ValidationCluster, ValidationFailure};
use kops_model::{Error, Result};

/// What the scripted cloud was asked to do, in order (validations included).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    Detach(String),
    Terminate(String),
    Deregister(String),
    Validate,
}

#[derive(Debug)]
struct Group {
    target: i32,
    members: Vec<CloudMember>,
}

#[derive(Debug, Default)]
struct World {
    groups: BTreeMap<String, Group>,
    log: Vec<Op>,
    /// Every detach fails.
    fail_detach: bool,
    /// Deregistering these instances fails.
    fail_deregister: Vec<String>,
}

#[derive(Debug, Clone, Default)]
struct Script(Arc<Mutex<World>>);

impl Script {
    fn world(&self) -> std::sync::MutexGuard<'_, World> {
        self.0.lock().unwrap()
    }

    /// Members left in `group` (terminated ones are gone; detached ones count until then).
    fn count(&self, group: &str) -> usize {
        self.world().groups[group].members.len()
    }

    fn log(&self) -> Vec<Op> {
        self.world().log.clone()
    }

    fn terminated(&self) -> Vec<String> {
        self.log()
            .into_iter()
            .filter_map(|o| match o {
                Op::Terminate(i) => Some(i),
                _ => None,
            })
            .collect()
    }

    fn detached(&self) -> Vec<String> {
        self.log()
            .into_iter()
            .filter_map(|o| match o {
                Op::Detach(i) => Some(i),
                _ => None,
            })
            .collect()
    }

    fn validations(&self) -> usize {
        self.log().iter().filter(|o| **o == Op::Validate).count()
    }

    fn set_status(&self, group: &str, index: usize, status: MemberStatus) {
        self.world().groups.get_mut(group).unwrap().members[index].status = status;
    }
}

#[async_trait]
impl InstanceGroupCloud for Script {
    async fn cloud_groups(&self, _: &str, groups: &[InstanceGroup]) -> Result<Vec<CloudGroup>> {
        let w = self.world();
        Ok(groups
            .iter()
            .filter_map(|ig| {
                let g = w.groups.get(ig.name())?;
                let mut cg = CloudGroup::new(ig.name(), ig.name(), 0, 10, g.target);
                let (detached, attached): (Vec<_>, Vec<_>) = g
                    .members
                    .iter()
                    .cloned()
                    .partition(|m| m.status == MemberStatus::Detached);
                cg.members = attached.into_iter().chain(detached).collect();
                Some(cg)
            })
            .collect())
    }

    async fn detach(&self, group: &CloudGroup, member: &str) -> Result<()> {
        let mut w = self.world();
        if w.fail_detach {
            return Err(Error::Invalid {
                field: "detach".into(),
                message: "testing error".into(),
            });
        }
        let g = w.groups.get_mut(&group.group).unwrap();
        let m = g.members.iter_mut().find(|m| m.id == member).unwrap();
        assert_ne!(m.status, MemberStatus::Detached, "{member} detached twice");
        m.status = MemberStatus::Detached;
        w.log.push(Op::Detach(member.to_owned()));
        Ok(())
    }

    async fn terminate(&self, member: &str) -> Result<()> {
        let mut w = self.world();
        for g in w.groups.values_mut() {
            g.members.retain(|m| m.id != member);
        }
        w.log.push(Op::Terminate(member.to_owned()));
        Ok(())
    }

    async fn deregister(&self, _: &CloudGroup, member: &str) -> Result<()> {
        let mut w = self.world();
        w.log.push(Op::Deregister(member.to_owned()));
        if w.fail_deregister.iter().any(|m| m == member) {
            return Err(Error::Invalid {
                field: "deregister".into(),
                message: format!("testing error for {member}"),
            });
        }
        Ok(())
    }
}

type Rule = Box<dyn Fn(&World, usize) -> Result<ValidationCluster> + Send + Sync>;

/// A validator that logs each call and answers by `rule(world, call number from 1)`.
struct Scripted {
    script: Script,
    calls: Mutex<usize>,
    rule: Rule,
}

impl std::fmt::Debug for Scripted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scripted")
    }
}

#[async_trait]
impl ClusterValidator for Scripted {
    async fn validate(&self) -> Result<ValidationCluster> {
        let n = {
            let mut c = self.calls.lock().unwrap();
            *c += 1;
            *c
        };
        let mut w = self.script.world();
        w.log.push(Op::Validate);
        (self.rule)(&w, n)
    }
}

fn failure(ig: Option<&str>) -> ValidationCluster {
    let mut v = ValidationCluster::default();
    v.failures.push(ValidationFailure::new(
        "testing",
        "testingfailure",
        "testing failure",
        ig,
    ));
    v
}

fn ok() -> Result<ValidationCluster> {
    Ok(ValidationCluster::default())
}

fn failing(ig: Option<&'static str>) -> Rule {
    Box::new(move |_, _| Ok(failure(ig)))
}

fn erroring() -> Rule {
    Box::new(|_, _| {
        Err(Error::Invalid {
            field: "validate".into(),
            message: "testing validation error".into(),
        })
    })
}

/// Fails (or errors) while `group` has fewer members than its target: kOps' "fails after
/// one node" validator (its mock does not replace terminated instances).
fn short_of(group: &'static str, error: bool) -> Rule {
    Box::new(move |w, _| {
        let g = &w.groups[group];
        if (g.members.len() as i32) < g.target {
            if error {
                return Err(Error::Invalid {
                    field: "validate".into(),
                    message: "testing validation error".into(),
                });
            }
            return Ok(failure(None));
        }
        ok()
    })
}

struct Rig {
    script: Script,
    kube: FakeKube,
    client: kube::Client,
    cluster: Cluster,
    groups: Vec<InstanceGroup>,
}

fn client_for(url: &str) -> kube::Client {
    let mut config = kube::Config::new(url.parse().unwrap());
    config.connect_timeout = None;
    config.read_timeout = None;
    config.write_timeout = None;
    kube::Client::try_from(config).unwrap()
}

/// kOps' `makeGroup`: `count` members named `<group>a`, `<group>b`, ...; the first
/// `need_update` need an update; every member but a bastion's has a node `<id>.local`.
async fn rig(spec: &[(&str, InstanceGroupRole, usize, usize)]) -> Rig {
    let script = Script::default();
    let kube = FakeKube::start().await.unwrap();
    let mut groups = Vec::new();
    for (name, role, count, need) in spec {
        let mut members = Vec::new();
        for i in 0..*count {
            let id = format!("{name}{}", (b'a' + i as u8) as char);
            let status = if i < *need {
                MemberStatus::NeedsUpdate {
                    reason: "launch template version 1, the group wants 2".into(),
                }
            } else {
                MemberStatus::UpToDate
            };
            members.push(CloudMember::new(&id, status));
            if *role != InstanceGroupRole::Bastion {
                kube.put_node(node(&id));
            }
        }
        script.world().groups.insert(
            name.to_string(),
            Group {
                target: *count as i32,
                members,
            },
        );
        let mut ig = InstanceGroup::default();
        ig.metadata.name = Some(name.to_string());
        ig.spec.role = Some(role.clone());
        ig.spec.min_size = Some(*count as i32);
        groups.push(ig);
    }
    let client = client_for(&kube.url());
    let mut cluster = Cluster::default();
    cluster.metadata.name = Some("test.k8s.local".into());
    Rig {
        script,
        kube,
        client,
        cluster,
        groups,
    }
}

fn node(id: &str) -> Node {
    Node {
        metadata: ObjectMeta {
            name: Some(format!("{id}.local")),
            ..Default::default()
        },
        spec: Some(NodeSpec {
            provider_id: Some(format!("aws:///us-test-1a/{id}")),
            ..Default::default()
        }),
        status: None,
    }
}

/// kOps' test timings (intervals and ticks of a millisecond, two validations) and its test
/// cluster, which is not on AWS: `maxSurge` defaults to 0 (so `maxUnavailable` to 1).
fn opts() -> RollingOptions {
    let ms = Duration::from_millis(1);
    RollingOptions::default()
        .with_default_max_surge(0)
        .with_bastion_interval(ms)
        .with_control_plane_interval(ms)
        .with_node_interval(ms)
        .with_post_drain_delay(Duration::ZERO)
        .with_validate_tick(ms)
        .with_validate_success_interval(Duration::from_millis(5))
        .with_validation_timeout(Duration::from_secs(1))
        .with_validate_count(2)
}

/// The cluster's default rolling-update settings (`spec.rollingUpdate`).
fn cluster_settings(
    rig: &mut Rig,
    surge: Option<IntOrString>,
    unavailable: Option<IntOrString>,
    drain: Option<bool>,
) {
    rig.cluster.spec.rolling_update = Some({
        let mut built = v1alpha2::RollingUpdate::default();
        built.max_surge = surge;
        built.max_unavailable = unavailable;
        built.drain_and_terminate = drain;
        built
    });
}

impl Rig {
    fn validator(&self, rule: Rule) -> Arc<Scripted> {
        Arc::new(Scripted {
            script: self.script.clone(),
            calls: Mutex::new(0),
            rule,
        })
    }

    async fn roll(
        &self,
        options: RollingOptions,
        rule: Rule,
    ) -> (Result<RollingReport>, Vec<Event>) {
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink_events = events.clone();
        let sink: EventSink =
            Arc::new(move |e: &Event| sink_events.lock().unwrap().push(e.clone()));
        let cloud: Arc<dyn InstanceGroupCloud> = Arc::new(self.script.clone());
        let mut roll = RollingUpdate::new(cloud, options.clone()).with_events(sink);
        if !options.cloud_only {
            roll = roll.with_kube(self.client.clone(), self.validator(rule));
        }
        let r = roll.run(&self.cluster, &self.groups).await;
        let events = events.lock().unwrap().clone();
        (r, events)
    }

    fn count(&self, group: &str) -> usize {
        self.script.count(group)
    }

    /// The node patches the API server received: `(node, kind)` with kind `taint`,
    /// `cordon` or `exclude`.
    fn patches(&self) -> Vec<(String, &'static str)> {
        self.kube
            .requests()
            .into_iter()
            .filter(|r| r.method == "PATCH" && r.path.starts_with("/api/v1/nodes/"))
            .map(|r| {
                let node = r.path.trim_start_matches("/api/v1/nodes/").to_owned();
                let kind = if r.body.contains(UPDATE_TAINT) {
                    "taint"
                } else if r.body.contains("unschedulable") {
                    "cordon"
                } else if r.body.contains("exclude-from-external-load-balancers") {
                    "exclude"
                } else {
                    "other"
                };
                (node, kind)
            })
            .collect()
    }
}

/// kOps' four groups: two node groups of 3, a control plane of 2, a bastion of 1; with
/// `all` every member needs an update, else none does.
async fn four_groups(all: bool) -> Rig {
    let n = |c: usize| if all { c } else { 0 };
    rig(&[
        ("node-1", InstanceGroupRole::Node, 3, n(3)),
        ("node-2", InstanceGroupRole::Node, 3, n(3)),
        ("master-1", InstanceGroupRole::ControlPlane, 2, n(2)),
        ("bastion-1", InstanceGroupRole::Bastion, 1, n(1)),
    ])
    .await
}

fn counts(rig: &Rig) -> [usize; 4] {
    [
        rig.count("node-1"),
        rig.count("node-2"),
        rig.count("master-1"),
        rig.count("bastion-1"),
    ]
}

fn int(n: i64) -> Option<IntOrString> {
    Some(IntOrString::Int(n))
}

/// The largest number of replacements of `group` in flight at once (drain started, the
/// interval after its termination not yet over).
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

// ---------------------------------------------------------------------------------------
// Which instances roll, and in what order (rollingupdate_test.go).

/// Every member of every group needs an update: all are replaced; each node is tainted,
/// then cordoned, then excluded from load balancers before its instance goes; the control
/// plane is done before any worker; the bastion first of all.
#[tokio::test(start_paused = true)]
async fn all_need_update_replaces_everything_in_kops_order() {
    let rig = four_groups(true).await;
    let (r, events) = rig.roll(opts(), Box::new(|_, _| ok())).await;
    r.unwrap();
    assert_eq!(counts(&rig), [0; 4]);
    let terminated = rig.script.terminated();
    assert_eq!(terminated[0], "bastion-1a");
    let last_master = terminated
        .iter()
        .rposition(|i| i.starts_with("master-"))
        .unwrap();
    let first_node = terminated
        .iter()
        .position(|i| i.starts_with("node-"))
        .unwrap();
    assert!(last_master < first_node, "{terminated:?}");

    let patches = rig.patches();
    for id in terminated.iter().filter(|i| !i.starts_with("bastion")) {
        let node = format!("{id}.local");
        let kinds: Vec<&str> = patches
            .iter()
            .filter(|(n, _)| *n == node)
            .map(|(_, k)| *k)
            .collect();
        assert_eq!(kinds, ["taint", "cordon", "exclude"], "{node}");
    }
    // Every node of a group is tainted before the group's first drain.
    for g in ["node-1", "node-2", "master-1"] {
        let first_drain = events
            .iter()
            .position(|e| e.group == g && e.action == "drain")
            .unwrap();
        let last_taint = events
            .iter()
            .rposition(|e| e.group == g && e.action == "taint")
            .unwrap();
        assert!(last_taint < first_drain, "{g}");
    }
    // The bastion was never drained through the API.
    assert!(!patches.iter().any(|(n, _)| n.starts_with("bastion")));
}

/// `--cloudonly`: everything is replaced without a single call to the API server and
/// without validation.
#[tokio::test(start_paused = true)]
async fn all_need_update_cloudonly_makes_no_api_call() {
    let rig = four_groups(true).await;
    let (r, _) = rig
        .roll(
            opts().with_cloud_only(true),
            Box::new(|_, _| panic!("validator called unexpectedly")),
        )
        .await;
    r.unwrap();
    assert_eq!(counts(&rig), [0; 4]);
    assert!(rig.kube.requests().is_empty(), "{:?}", rig.kube.requests());
    assert_eq!(rig.script.validations(), 0);
}

/// With `--fail-on-validate-error=false` a cluster that never validates is rolled anyway.
#[tokio::test(start_paused = true)]
async fn a_failing_validation_is_ignored_without_fail_on_validate() {
    let rig = four_groups(true).await;
    let (r, _) = rig
        .roll(opts().with_fail_on_validate_error(false), failing(None))
        .await;
    r.unwrap();
    assert_eq!(counts(&rig), [0; 4]);
}

/// Nothing needs an update: nothing is touched, the API server sees no change.
#[tokio::test(start_paused = true)]
async fn none_need_update_touches_nothing() {
    let rig = four_groups(false).await;
    let (r, _) = rig.roll(opts(), Box::new(|_, _| ok())).await;
    assert!(r.unwrap().replaced.is_empty());
    assert!(rig.kube.requests().is_empty());
    assert_eq!(counts(&rig), [3, 3, 2, 1]);
}

/// `--force` replaces up-to-date instances too.
#[tokio::test(start_paused = true)]
async fn force_replaces_up_to_date_instances() {
    let rig = four_groups(false).await;
    let (r, _) = rig
        .roll(opts().with_force(true), Box::new(|_, _| ok()))
        .await;
    r.unwrap();
    assert_eq!(counts(&rig), [0; 4]);
}

/// No groups at all: nothing to do, no error.
#[tokio::test(start_paused = true)]
async fn no_groups_is_not_an_error() {
    let mut rig = four_groups(true).await;
    rig.groups.clear();
    let (r, _) = rig.roll(opts(), Box::new(|_, _| ok())).await;
    assert!(r.unwrap().replaced.is_empty());
    assert_eq!(counts(&rig), [3, 3, 2, 1]);
}

/// A group of a role kOps does not know stops the roll before anything is done.
#[tokio::test(start_paused = true)]
async fn an_unknown_role_fails_before_any_change() {
    let mut rig = four_groups(true).await;
    rig.groups[0].spec.role = Some(InstanceGroupRole::Unknown("Unknown".into()));
    let (r, _) = rig.roll(opts(), Box::new(|_, _| ok())).await;
    let err = r.unwrap_err().to_string();
    assert!(err.contains("unknown group type"), "{err}");
    assert_eq!(counts(&rig), [3, 3, 2, 1]);
    assert!(rig.script.terminated().is_empty());
}

/// A cluster that fails (or cannot be) validated: the bastion, which is not validated
/// first, is replaced; the control plane's pre-flight validation fails and stops the roll.
#[tokio::test(start_paused = true)]
async fn failing_or_erroring_validation_stops_after_the_bastion() {
    for rule in [failing(None), erroring()] {
        let rig = four_groups(true).await;
        let (r, _) = rig.roll(opts(), rule).await;
        assert!(r.is_err());
        assert_eq!(counts(&rig), [3, 3, 2, 0]);
    }
}

/// One node group alone, failing or erroring validation: nothing is replaced.
#[tokio::test(start_paused = true)]
async fn a_single_group_is_not_touched_when_validation_fails() {
    for rule in [failing(None), erroring()] {
        let rig = rig(&[("node-1", InstanceGroupRole::Node, 3, 3)]).await;
        let (r, _) = rig.roll(opts(), rule).await;
        assert!(r.is_err());
        assert_eq!(rig.count("node-1"), 3);
    }
}

/// The cluster stops validating once the control plane lost a member: the roll stops after
/// the first control-plane replacement and never reaches the workers.
#[tokio::test(start_paused = true)]
async fn validation_failing_after_one_control_plane_instance_stops_the_roll() {
    for error in [false, true] {
        let rig = four_groups(true).await;
        let (r, _) = rig.roll(opts(), short_of("master-1", error)).await;
        let err = r.unwrap_err().to_string();
        assert!(err.contains("control-plane node not healthy"), "{err}");
        assert_eq!(counts(&rig), [3, 3, 1, 0]);
    }
}

/// The same for a worker group: one instance replaced, then the roll stops.
#[tokio::test(start_paused = true)]
async fn validation_failing_after_one_node_stops_the_group() {
    for error in [false, true] {
        let rig = rig(&[("node-1", InstanceGroupRole::Node, 3, 3)]).await;
        let (r, _) = rig.roll(opts(), short_of("node-1", error)).await;
        assert!(r.is_err());
        assert_eq!(rig.count("node-1"), 2);
    }
}

async fn one_group_needs_update() -> Rig {
    rig(&[
        ("node-1", InstanceGroupRole::Node, 3, 3),
        ("node-2", InstanceGroupRole::Node, 3, 0),
        ("master-1", InstanceGroupRole::ControlPlane, 2, 0),
        ("bastion-1", InstanceGroupRole::Bastion, 1, 0),
    ])
    .await
}

/// A failure that belongs to another worker group does not block rolling this one.
#[tokio::test(start_paused = true)]
async fn a_failure_in_an_unrelated_group_does_not_block() {
    let rig = one_group_needs_update().await;
    let (r, _) = rig.roll(opts(), failing(Some("node-2"))).await;
    r.unwrap();
    assert_eq!(counts(&rig), [0, 3, 2, 1]);
}

/// A failure in the group being rolled, in a control-plane group, or with no group at
/// all (cluster-wide) blocks it.
#[tokio::test(start_paused = true)]
async fn a_failure_in_this_group_the_control_plane_or_the_cluster_blocks() {
    for ig in [Some("node-1"), Some("master-1"), None] {
        let rig = one_group_needs_update().await;
        let (r, _) = rig.roll(opts(), failing(ig)).await;
        assert!(r.is_err(), "{ig:?}");
        assert_eq!(counts(&rig), [3, 3, 2, 1], "{ig:?}");
    }
}

/// A validation timeout stops the whole roll (kOps' exitable error): node-1 is done,
/// node-2 cannot be validated, node-3 is never started.
#[tokio::test(start_paused = true)]
async fn a_validation_timeout_in_one_group_stops_the_later_groups() {
    let rig = rig(&[
        ("node-1", InstanceGroupRole::Node, 3, 3),
        ("node-2", InstanceGroupRole::Node, 3, 3),
        ("node-3", InstanceGroupRole::Node, 3, 3),
        ("master-1", InstanceGroupRole::ControlPlane, 2, 0),
        ("bastion-1", InstanceGroupRole::Bastion, 1, 0),
    ])
    .await;
    let (r, _) = rig.roll(opts(), failing(Some("node-2"))).await;
    assert!(r.is_err());
    assert_eq!(rig.count("node-1"), 0);
    assert_eq!(rig.count("node-2"), 3);
    assert_eq!(rig.count("node-3"), 3);
    assert_eq!(rig.count("master-1"), 2);
    assert_eq!(rig.count("bastion-1"), 1);
}

/// Validation that flaps (fails on calls 1, 3 and 5) needs two successes in a row each
/// time, and the roll completes.
#[tokio::test(start_paused = true)]
async fn flapping_validation_resets_the_count_and_completes() {
    let rig = four_groups(true).await;
    let (r, _) = rig
        .roll(
            opts(),
            Box::new(|_, n| {
                if matches!(n, 1 | 3 | 5) {
                    Ok(failure(None))
                } else {
                    ok()
                }
            }),
        )
        .await;
    r.unwrap();
    assert_eq!(counts(&rig), [0; 4]);
    assert!(rig.script.validations() >= 7);
}

/// After the bastion, validation (failing three times, then passing) is waited for, and
/// the roll goes on.
#[tokio::test(start_paused = true)]
async fn validation_after_the_bastion_is_retried() {
    let rig = four_groups(true).await;
    let (r, _) = rig
        .roll(
            opts(),
            Box::new(|_, n| if n <= 3 { Ok(failure(None)) } else { ok() }),
        )
        .await;
    r.unwrap();
    assert_eq!(counts(&rig), [0; 4]);
    // The first validation came after the bastion's replacement.
    let log = rig.script.log();
    assert_eq!(log[0], Op::Terminate("bastion-1a".into()));
}

/// API-server groups roll after the control plane and before the workers; their
/// instances leave the load balancers (the cluster has two API-serving instances in all).
#[tokio::test(start_paused = true)]
async fn api_server_groups_roll_between_the_control_plane_and_the_nodes() {
    let rig = rig(&[
        ("node-1", InstanceGroupRole::Node, 1, 1),
        ("apiserver-1", InstanceGroupRole::ApiServer, 1, 1),
        ("master-1", InstanceGroupRole::ControlPlane, 1, 1),
        ("bastion-1", InstanceGroupRole::Bastion, 1, 1),
    ])
    .await;
    let (r, _) = rig.roll(opts(), Box::new(|_, _| ok())).await;
    r.unwrap();
    assert_eq!(
        rig.script.terminated(),
        ["bastion-1a", "master-1a", "apiserver-1a", "node-1a"]
    );
    let log = rig.script.log();
    assert!(log.contains(&Op::Deregister("apiserver-1a".into())));
    assert!(log.contains(&Op::Deregister("master-1a".into())));
}

/// A validation timeout while rolling an API-server group stops the roll before the
/// workers (an exitable error), as for node groups.
#[tokio::test(start_paused = true)]
async fn an_api_server_validation_timeout_stops_before_the_nodes() {
    let rig = rig(&[
        ("node-1", InstanceGroupRole::Node, 1, 1),
        ("apiserver-1", InstanceGroupRole::ApiServer, 2, 2),
    ])
    .await;
    let (r, _) = rig.roll(opts(), short_of("apiserver-1", false)).await;
    assert!(r.is_err());
    assert_eq!(rig.count("apiserver-1"), 1);
    assert_eq!(rig.count("node-1"), 1);
}

// ---------------------------------------------------------------------------------------
// The needs-update annotation.

fn annotate(rig: &Rig, id: &str) {
    let mut o = rig.kube.objects();
    let n = o.nodes.get_mut(&format!("{id}.local")).unwrap();
    n.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert("kops.k8s.io/needs-update".into(), "somevalue".into());
}

/// A node annotated `kops.k8s.io/needs-update` is replaced although its instance is up to
/// date; one that needs an update anyway is listed once.
#[tokio::test(start_paused = true)]
async fn annotated_nodes_are_added_to_the_update() {
    let rig = rig(&[
        ("master-1", InstanceGroupRole::ControlPlane, 2, 1),
        ("node-1", InstanceGroupRole::Node, 2, 1),
        ("node-2", InstanceGroupRole::Node, 2, 1),
    ])
    .await;
    annotate(&rig, "node-1b");
    annotate(&rig, "node-2a");
    annotate(&rig, "master-1b");
    let cloud: Arc<dyn InstanceGroupCloud> = Arc::new(rig.script.clone());
    let roll = RollingUpdate::new(cloud, opts())
        .with_kube(rig.client.clone(), rig.validator(Box::new(|_, _| ok())));
    let plan = roll.plan(&rig.cluster, &rig.groups).await.unwrap();
    let ids = |g: &str| -> Vec<String> {
        plan.groups
            .iter()
            .find(|p| p.name == g)
            .unwrap()
            .update
            .iter()
            .map(|u| u.id.clone())
            .collect()
    };
    assert_eq!(ids("node-1"), ["node-1a", "node-1b"]);
    assert_eq!(ids("node-2"), ["node-2a"]);
    assert_eq!(ids("master-1"), ["master-1a", "master-1b"]);
    let b = &plan
        .groups
        .iter()
        .find(|p| p.name == "node-1")
        .unwrap()
        .update[1];
    assert!(
        b.reason.contains("kops.k8s.io/needs-update"),
        "{}",
        b.reason
    );
}

/// Members without a node are planned without error (and without the annotation).
#[tokio::test(start_paused = true)]
async fn members_without_nodes_are_planned() {
    let rig = rig(&[("node-1", InstanceGroupRole::Node, 2, 1)]).await;
    rig.kube.delete_node("node-1a.local");
    rig.kube.delete_node("node-1b.local");
    let cloud: Arc<dyn InstanceGroupCloud> = Arc::new(rig.script.clone());
    let roll = RollingUpdate::new(cloud, opts())
        .with_kube(rig.client.clone(), rig.validator(Box::new(|_, _| ok())));
    let plan = roll.plan(&rig.cluster, &rig.groups).await.unwrap();
    assert_eq!(plan.groups[0].need_update, 1);
    assert_eq!(plan.groups[0].nodes, Some(0));
}

/// With `--cloudonly` no node is read, so an annotation cannot be seen: only the cloud's
/// own verdict counts. (kOps' CLI behaves the same: without an API it has no nodes.)
#[tokio::test(start_paused = true)]
async fn cloudonly_plans_from_the_cloud_alone() {
    let rig = rig(&[("node-1", InstanceGroupRole::Node, 2, 1)]).await;
    annotate(&rig, "node-1b");
    let cloud: Arc<dyn InstanceGroupCloud> = Arc::new(rig.script.clone());
    let roll = RollingUpdate::new(cloud, opts().with_cloud_only(true));
    let plan = roll.plan(&rig.cluster, &rig.groups).await.unwrap();
    assert_eq!(plan.groups[0].need_update, 1);
    assert!(rig.kube.requests().is_empty());
}

// ---------------------------------------------------------------------------------------
// Taints, surge, unavailability.

/// Two of three need an update: both are tainted before the first is drained; the third
/// stays.
#[tokio::test(start_paused = true)]
async fn every_node_to_update_is_tainted_before_any_drain() {
    let rig = rig(&[("node-1", InstanceGroupRole::Node, 3, 2)]).await;
    let (r, _) = rig.roll(opts(), Box::new(|_, _| ok())).await;
    r.unwrap();
    assert_eq!(rig.count("node-1"), 1);
    let patches = rig.patches();
    let first_cordon = patches.iter().position(|(_, k)| *k == "cordon").unwrap();
    let taints: Vec<&String> = patches
        .iter()
        .filter(|(_, k)| *k == "taint")
        .map(|(n, _)| n)
        .collect();
    assert_eq!(taints.len(), 2);
    assert!(patches.iter().rposition(|(_, k)| *k == "taint").unwrap() < first_cordon);
    // The taint is kOps' PreferNoSchedule one.
    let body = rig
        .kube
        .requests()
        .into_iter()
        .find(|r| r.body.contains(UPDATE_TAINT))
        .unwrap()
        .body;
    assert!(body.contains("PreferNoSchedule"), "{body}");
}

/// A cluster-wide `maxSurge: 2` is ignored for the control plane: no instance is
/// detached, one is replaced at a time.
#[tokio::test(start_paused = true)]
async fn max_surge_is_ignored_for_the_control_plane() {
    let mut rig = rig(&[("master-1", InstanceGroupRole::ControlPlane, 3, 2)]).await;
    cluster_settings(&mut rig, int(2), None, None);
    let (r, events) = rig.roll(opts(), Box::new(|_, _| ok())).await;
    r.unwrap();
    assert_eq!(rig.count("master-1"), 1);
    assert!(rig.script.detached().is_empty());
    assert_eq!(max_in_flight(&events, "master-1"), 1);
}

/// `drainAndTerminate: false` (cloud-only): nothing is replaced.
#[tokio::test(start_paused = true)]
async fn drain_and_terminate_false_replaces_nothing() {
    let mut rig = four_groups(true).await;
    cluster_settings(&mut rig, None, None, Some(false));
    let (r, _) = rig
        .roll(opts().with_cloud_only(true), Box::new(|_, _| ok()))
        .await;
    r.unwrap();
    assert_eq!(counts(&rig), [3, 3, 2, 1]);
}

/// `drainAndTerminate: false` with `maxSurge: 1`: each non-control-plane group still
/// detaches one instance (its replacement is launched), nothing is terminated.
#[tokio::test(start_paused = true)]
async fn drain_and_terminate_false_still_surges() {
    let mut rig = four_groups(true).await;
    cluster_settings(&mut rig, int(1), None, Some(false));
    let (r, _) = rig.roll(opts(), Box::new(|_, _| ok())).await;
    r.unwrap();
    assert_eq!(counts(&rig), [3, 3, 2, 1]);
    let detached = rig.script.detached();
    assert_eq!(detached.len(), 3, "{detached:?}");
    assert!(detached.iter().all(|d| !d.contains("master")));
    assert!(rig.script.terminated().is_empty());
}

/// kOps' concurrency checks, over the log: the number in flight never exceeds `limit`
/// and reaches it; with `canary`, the first replacement runs alone and is validated before
/// the second starts; detached instances go last.
fn check_concurrency(rig: &Rig, events: &[Event], group: &str, limit: usize, canary: bool) {
    assert_eq!(max_in_flight(events, group), limit, "{events:#?}");
    let log = rig.script.log();
    let terminations: Vec<usize> = log
        .iter()
        .enumerate()
        .filter(|(_, o)| matches!(o, Op::Terminate(_)))
        .map(|(i, _)| i)
        .collect();
    if canary {
        let between = log[terminations[0]..terminations[1]]
            .iter()
            .filter(|o| **o == Op::Validate)
            .count();
        assert!(between >= 1, "canary not validated alone: {log:?}");
        let drains: Vec<&Event> = events
            .iter()
            .filter(|e| e.group == group && (e.action == "drain" || e.action == "terminated"))
            .collect();
        assert_eq!(drains[0].action, "drain");
        assert_eq!(drains[1].action, "terminated", "{drains:#?}");
    }
    // Every termination but those in the last batch is followed by a validation before
    // the replacement after next starts.
    assert_eq!(log.last(), Some(&Op::Validate), "{log:?}");
    let detached = rig.script.detached();
    let terminated = rig.script.terminated();
    let tail = &terminated[terminated.len() - detached.len()..];
    for d in &detached {
        assert!(
            tail.contains(d),
            "detached {d} not among the last: {terminated:?}"
        );
    }
}

/// `maxUnavailable: 2`, all seven need an update: the canary alone, then two at a time.
#[tokio::test(start_paused = true)]
async fn max_unavailable_two_all_need_update() {
    let mut rig = rig(&[("node-1", InstanceGroupRole::Node, 7, 7)]).await;
    cluster_settings(&mut rig, None, int(2), None);
    rig.cluster.spec.rolling_update.as_mut().unwrap().max_surge = int(0);
    let (r, events) = rig
        .roll(opts().with_validate_count(1), Box::new(|_, _| ok()))
        .await;
    r.unwrap();
    assert_eq!(rig.count("node-1"), 0);
    check_concurrency(&rig, &events, "node-1", 2, true);
}

/// `maxUnavailable: 2` on the default AWS settings (surge 1 unless set) for six of seven:
/// here with surge 0, no canary (one member is up to date), two at a time from the start.
#[tokio::test(start_paused = true)]
async fn max_unavailable_two_all_but_one_need_update() {
    let mut rig = rig(&[("node-1", InstanceGroupRole::Node, 7, 6)]).await;
    cluster_settings(&mut rig, int(0), int(2), None);
    let (r, events) = rig
        .roll(opts().with_validate_count(1), Box::new(|_, _| ok()))
        .await;
    r.unwrap();
    assert_eq!(rig.count("node-1"), 1);
    check_concurrency(&rig, &events, "node-1", 2, false);
    let drains: Vec<&str> = events
        .iter()
        .filter(|e| e.action == "drain" || e.action == "terminated")
        .map(|e| e.action.as_str())
        .take(2)
        .collect();
    assert_eq!(drains, ["drain", "drain"]);
}

/// The control plane honours `maxUnavailable: 2` too (it only never surges).
#[tokio::test(start_paused = true)]
async fn max_unavailable_two_on_the_control_plane() {
    let mut rig = rig(&[("master-1", InstanceGroupRole::ControlPlane, 7, 7)]).await;
    cluster_settings(&mut rig, None, int(2), None);
    let (r, events) = rig
        .roll(opts().with_validate_count(1), Box::new(|_, _| ok()))
        .await;
    r.unwrap();
    assert_eq!(rig.count("master-1"), 0);
    assert!(rig.script.detached().is_empty());
    check_concurrency(&rig, &events, "master-1", 2, true);
}

/// `maxSurge: 2`, all six need an update: the last two are detached, validating after the
/// first (the canary) and after the second; then two at a time, the detached ones last.
#[tokio::test(start_paused = true)]
async fn max_surge_two_all_need_update() {
    let mut rig = rig(&[("node-1", InstanceGroupRole::Node, 6, 6)]).await;
    cluster_settings(&mut rig, int(2), None, None);
    let (r, events) = rig
        .roll(opts().with_validate_count(1), Box::new(|_, _| ok()))
        .await;
    r.unwrap();
    assert_eq!(rig.count("node-1"), 0);
    assert_eq!(rig.script.detached(), ["node-1f", "node-1e"]);
    let log = rig.script.log();
    assert_eq!(
        &log[..5],
        &[
            Op::Validate,
            Op::Detach("node-1f".into()),
            Op::Validate,
            Op::Detach("node-1e".into()),
            Op::Validate
        ]
    );
    check_concurrency(&rig, &events, "node-1", 2, false);
}

/// `maxSurge: 2`, six of seven: both are detached before one validation (no canary).
#[tokio::test(start_paused = true)]
async fn max_surge_two_all_but_one_need_update() {
    let mut rig = rig(&[("node-1", InstanceGroupRole::Node, 7, 6)]).await;
    cluster_settings(&mut rig, int(2), None, None);
    let (r, events) = rig
        .roll(opts().with_validate_count(1), Box::new(|_, _| ok()))
        .await;
    r.unwrap();
    assert_eq!(rig.count("node-1"), 1);
    let log = rig.script.log();
    assert_eq!(
        &log[..4],
        &[
            Op::Validate,
            Op::Detach("node-1f".into()),
            Op::Detach("node-1e".into()),
            Op::Validate
        ]
    );
    check_concurrency(&rig, &events, "node-1", 2, false);
}

/// `maxSurge: 10` with two to update surges two, not ten.
#[tokio::test(start_paused = true)]
async fn max_surge_is_capped_at_the_instances_to_update() {
    let mut rig = rig(&[("node-1", InstanceGroupRole::Node, 3, 2)]).await;
    cluster_settings(&mut rig, int(10), None, None);
    let (r, _) = rig.roll(opts(), Box::new(|_, _| ok())).await;
    r.unwrap();
    assert_eq!(rig.count("node-1"), 1);
    assert_eq!(rig.script.detached().len(), 2);
}

/// A detach that fails is skipped; the instance is replaced without a surge.
#[tokio::test(start_paused = true)]
async fn a_failed_detach_is_skipped() {
    let mut rig = rig(&[("node-1", InstanceGroupRole::Node, 3, 2)]).await;
    cluster_settings(&mut rig, int(10), None, None);
    rig.script.world().fail_detach = true;
    let (r, events) = rig.roll(opts(), Box::new(|_, _| ok())).await;
    r.unwrap();
    assert_eq!(rig.count("node-1"), 1);
    assert_eq!(
        events
            .iter()
            .filter(|e| e.action == "detach-failed")
            .count(),
        2
    );
}

/// `maxSurge: 3`, four to update, the last already detached by an interrupted run: it
/// counts toward the surge (two more are detached), it is terminated last, and kOps'
/// five validations happen: before, after each detach, after the first termination, after
/// the rest.
#[tokio::test(start_paused = true)]
async fn an_already_detached_instance_counts_toward_the_surge() {
    let mut rig = rig(&[("node-1", InstanceGroupRole::Node, 4, 4)]).await;
    rig.script.set_status("node-1", 3, MemberStatus::Detached);
    cluster_settings(&mut rig, int(3), None, None);
    let (r, _) = rig
        .roll(opts().with_validate_count(1), Box::new(|_, _| ok()))
        .await;
    r.unwrap();
    assert_eq!(rig.count("node-1"), 0);
    assert_eq!(rig.script.detached(), ["node-1c", "node-1b"]);
    assert_eq!(rig.script.terminated().last().unwrap(), "node-1d");
    assert_eq!(rig.script.validations(), 5, "{:?}", rig.script.log());
}

/// `maxSurge: 2` with two already detached: no new detach; it behaves as
/// `maxUnavailable: 2` (a canary, then two at a time), the detached two last.
#[tokio::test(start_paused = true)]
async fn as_many_already_detached_as_the_surge_detaches_nothing() {
    let mut rig = rig(&[("node-1", InstanceGroupRole::Node, 7, 7)]).await;
    rig.script.set_status("node-1", 1, MemberStatus::Detached);
    rig.script.set_status("node-1", 3, MemberStatus::Detached);
    cluster_settings(&mut rig, int(2), None, None);
    let (r, events) = rig
        .roll(opts().with_validate_count(1), Box::new(|_, _| ok()))
        .await;
    r.unwrap();
    assert_eq!(rig.count("node-1"), 0);
    assert!(rig.script.detached().is_empty());
    let terminated = rig.script.terminated();
    let last_two: Vec<&str> = terminated[5..].iter().map(String::as_str).collect();
    assert!(
        last_two.contains(&"node-1b") && last_two.contains(&"node-1d"),
        "{terminated:?}"
    );
    check_concurrency(&rig, &events, "node-1", 2, true);
}

// ---------------------------------------------------------------------------------------
// Warm pools (rollingupdate_warmpool_test.go, instancegroups_test.go).

fn add_warm_pool(rig: &Rig, group: &str, n: usize) {
    let mut w = rig.script.world();
    let g = w.groups.get_mut(group).unwrap();
    for i in 0..n {
        g.members.push(
            CloudMember::new(
                format!("{group}-wp-{}", (b'a' + i as u8) as char),
                MemberStatus::NeedsUpdate {
                    reason: "launch template version 1, the group wants 2".into(),
                },
            )
            .in_warm_pool(),
        );
    }
}

/// Three up-to-date members and three warm-pool instances to update: the pool is emptied
/// without drain, and only the pre-flight validation runs.
#[tokio::test(start_paused = true)]
async fn only_warm_pool_instances_need_only_the_first_validation() {
    let rig = rig(&[("node-1", InstanceGroupRole::Node, 3, 0)]).await;
    add_warm_pool(&rig, "node-1", 3);
    let (r, events) = rig.roll(opts(), Box::new(|_, _| ok())).await;
    r.unwrap();
    assert_eq!(rig.script.validations(), 1);
    assert_eq!(rig.script.terminated().len(), 3);
    assert!(!events.iter().any(|e| e.action == "drain"));
    assert_eq!(rig.count("node-1"), 3);
}

/// Warm-pool instances are terminated before any joined member is touched: six
/// terminations for three members and three pool instances.
#[tokio::test(start_paused = true)]
async fn warm_pool_instances_go_before_joined_members() {
    let rig = rig(&[("node-1", InstanceGroupRole::Node, 3, 3)]).await;
    add_warm_pool(&rig, "node-1", 3);
    let (r, _) = rig.roll(opts(), Box::new(|_, _| ok())).await;
    r.unwrap();
    let terminated = rig.script.terminated();
    assert_eq!(terminated.len(), 6);
    assert!(
        terminated[..3].iter().all(|t| t.contains("-wp-")),
        "{terminated:?}"
    );
    // No joined member left its load balancers (the start of its drain) before the pool
    // was emptied.
    let log = rig.script.log();
    let first_drain = log
        .iter()
        .position(|o| matches!(o, Op::Deregister(_)))
        .unwrap();
    let third = log
        .iter()
        .position(|o| *o == Op::Terminate("node-1-wp-c".into()))
        .unwrap();
    assert!(third < first_drain, "{log:?}");
}

/// A group whose only instance waits in the warm pool, with a percentage surge, rolls
/// without error.
#[tokio::test(start_paused = true)]
async fn a_warm_pool_only_group_with_a_percentage_surge_rolls() {
    let mut rig = rig(&[("warm", InstanceGroupRole::Node, 0, 0)]).await;
    add_warm_pool(&rig, "warm", 1);
    rig.groups[0].spec.rolling_update = Some({
        let mut built = v1alpha2::RollingUpdate::default();
        built.max_surge = Some(IntOrString::String("25%".into()));
        built
    });
    let (r, _) = rig.roll(opts(), Box::new(|_, _| ok())).await;
    r.unwrap();
    assert_eq!(rig.script.terminated(), ["warm-wp-a"]);
}

// ---------------------------------------------------------------------------------------
// Exitable errors (TestIsExitableError): a validation timeout and a failed deregistration
// stop the roll; other errors stop only their group.

/// Deregistering an instance from its load balancers fails: the roll stops there, even
/// with `--fail-on-drain-error=false`, and the next group is not touched.
#[tokio::test(start_paused = true)]
async fn a_failed_deregistration_stops_the_roll() {
    for fail_on_drain in [true, false] {
        let mut rig = rig(&[
            ("node-1", InstanceGroupRole::Node, 2, 2),
            ("node-2", InstanceGroupRole::Node, 2, 2),
        ])
        .await;
        cluster_settings(&mut rig, int(0), None, None);
        rig.script.world().fail_deregister = vec!["node-1a".into()];
        let (r, _) = rig
            .roll(
                opts().with_fail_on_drain_error(fail_on_drain),
                Box::new(|_, _| ok()),
            )
            .await;
        let err = r.unwrap_err().to_string();
        assert!(err.contains("node-1a"), "{err}");
        assert_eq!(rig.count("node-1"), 2);
        assert_eq!(rig.count("node-2"), 2, "the next group was rolled");
    }
}

/// Workers are deregistered before their drain; a single control-plane instance is not
/// (it would cut the roll off from its own API); with two it is.
#[tokio::test(start_paused = true)]
async fn deregistration_spares_a_single_control_plane() {
    for masters in [1usize, 2] {
        let rig = rig(&[
            (
                "master-1",
                InstanceGroupRole::ControlPlane,
                masters,
                masters,
            ),
            ("node-1", InstanceGroupRole::Node, 1, 1),
        ])
        .await;
        let (r, _) = rig.roll(opts(), Box::new(|_, _| ok())).await;
        r.unwrap();
        let deregistered: Vec<String> = rig
            .script
            .log()
            .into_iter()
            .filter_map(|o| match o {
                Op::Deregister(i) => Some(i),
                _ => None,
            })
            .collect();
        assert!(deregistered.contains(&"node-1a".to_string()));
        assert_eq!(
            deregistered.iter().any(|d| d.starts_with("master")),
            masters > 1,
            "{masters}: {deregistered:?}"
        );
    }
}

/// A drain that fails is not exitable: with `--fail-on-drain-error` the group stops but
/// the next group is still rolled, and the roll reports the error at the end.
#[tokio::test(start_paused = true)]
async fn a_failed_drain_stops_only_its_group() {
    let mut rig = rig(&[
        ("node-1", InstanceGroupRole::Node, 2, 2),
        ("node-2", InstanceGroupRole::Node, 2, 2),
    ])
    .await;
    cluster_settings(&mut rig, int(0), None, None);
    // node-1a's node vanished from the API only for evictions: make its pod list fail by
    // removing the node between taint and drain is not possible here, so block the
    // eviction with a budget instead.
    use k8s_openapi::api::core::v1::{Pod, PodSpec};
    use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference};
    rig.kube.put_pod(Pod {
        metadata: ObjectMeta {
            name: Some("db-0".into()),
            namespace: Some("default".into()),
            labels: Some([("app".to_string(), "db".to_string())].into()),
            owner_references: Some(vec![OwnerReference {
                kind: "StatefulSet".into(),
                name: "db".into(),
                controller: Some(true),
                ..Default::default()
            }]),
            ..Default::default()
        },
        spec: Some(PodSpec {
            node_name: Some("node-1a.local".into()),
            ..Default::default()
        }),
        status: None,
    });
    rig.kube.put_pdb(PodDisruptionBudget {
        metadata: ObjectMeta {
            name: Some("db".into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: Some(PodDisruptionBudgetSpec {
            max_unavailable: Some(
                k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(0),
            ),
            selector: Some(LabelSelector {
                match_labels: Some([("app".to_string(), "db".to_string())].into()),
                ..Default::default()
            }),
            ..Default::default()
        }),
        status: None,
    });
    // Make the pod healthy so the budget protects it.
    {
        let mut o = rig.kube.objects();
        let p = o.pods.get_mut(&("default".into(), "db-0".into())).unwrap();
        p.status = Some(k8s_openapi::api::core::v1::PodStatus {
            phase: Some("Running".into()),
            conditions: Some(vec![k8s_openapi::api::core::v1::PodCondition {
                type_: "Ready".into(),
                status: "True".into(),
                ..Default::default()
            }]),
            ..Default::default()
        });
    }
    let (r, _) = rig
        .roll(
            opts().with_drain_timeout(Duration::from_secs(30)),
            Box::new(|_, _| ok()),
        )
        .await;
    let err = r.unwrap_err().to_string();
    assert!(err.contains("PodDisruptionBudget default/db"), "{err}");
    assert_eq!(
        rig.count("node-1"),
        2,
        "node-1a's drain failed: the group stopped"
    );
    assert_eq!(rig.count("node-2"), 0, "node-2 was still rolled");
}

// ---------------------------------------------------------------------------------------
// Settings (settings_test.go).

mod settings {
    use super::*;
    use kops_model::day2::rolling::resolve_settings;

    fn ru(field: &str, v: Option<&Value>) -> v1alpha2::RollingUpdate {
        let mut r = v1alpha2::RollingUpdate::default();
        match (field, v) {
            (_, None) => {}
            ("drainAndTerminate", Some(Value::Bool(b))) => r.drain_and_terminate = Some(*b),
            ("maxUnavailable", Some(Value::Int(n))) => r.max_unavailable = int(*n),
            ("maxSurge", Some(Value::Int(n))) => r.max_surge = int(*n),
            _ => unreachable!(),
        }
        r
    }

    #[derive(Debug, Clone, PartialEq)]
    enum Value {
        Bool(bool),
        Int(i64),
    }

    fn resolved(
        field: &str,
        cluster: Option<v1alpha2::RollingUpdate>,
        group: Option<v1alpha2::RollingUpdate>,
    ) -> Value {
        let mut c = Cluster::default();
        c.spec.rolling_update = cluster;
        let mut g = InstanceGroup::default();
        g.spec.rolling_update = group;
        // kOps' test cluster is not on AWS: surge defaults to 0.
        let (drain, surge, unavailable) = resolve_settings(&c, &g, 1, 0);
        match field {
            "drainAndTerminate" => Value::Bool(drain),
            "maxUnavailable" => Value::Int(unavailable),
            _ => Value::Int(surge),
        }
    }

    /// Each field resolves from the group, else the cluster, else its default, field by
    /// field, whichever of the two is unset, empty, default or not.
    #[test]
    fn the_group_wins_over_the_cluster_over_the_default() {
        for (field, default, other) in [
            ("drainAndTerminate", Value::Bool(true), Value::Bool(false)),
            ("maxUnavailable", Value::Int(1), Value::Int(2)),
            ("maxSurge", Value::Int(0), Value::Int(2)),
        ] {
            let unset: Option<v1alpha2::RollingUpdate> = None;
            let empty = Some(v1alpha2::RollingUpdate::default());
            let def = Some(ru(field, Some(&default)));
            let non = Some(ru(field, Some(&other)));
            let cases = [
                (&unset, &unset, &default),
                (&empty, &unset, &default),
                (&def, &unset, &default),
                (&non, &unset, &other),
                (&unset, &empty, &default),
                (&empty, &empty, &default),
                (&def, &empty, &default),
                (&non, &empty, &other),
                (&unset, &def, &default),
                (&empty, &def, &default),
                (&def, &def, &default),
                (&non, &def, &default),
                (&unset, &non, &other),
                (&empty, &non, &other),
                (&def, &non, &other),
                (&non, &non, &other),
            ];
            for (cluster, group, want) in cases {
                assert_eq!(
                    &resolved(field, cluster.clone(), group.clone()),
                    want,
                    "{field}: cluster {cluster:?} group {group:?}"
                );
            }
        }
    }

    fn pct_or_int(v: &str) -> IntOrString {
        match v.parse::<i64>() {
            Ok(n) => IntOrString::Int(n),
            Err(_) => IntOrString::String(v.into()),
        }
    }

    /// `maxUnavailable` percentages round down but never below 1; `0` stays 0.
    #[test]
    fn max_unavailable_rounds_down_to_at_least_one() {
        for (n, v, want) in [(1, "0", 0), (1, "0%", 1), (10, "39%", 3), (10, "100%", 10)] {
            let mut g = InstanceGroup::default();
            g.spec.rolling_update = Some({
                let mut built = v1alpha2::RollingUpdate::default();
                built.max_unavailable = Some(pct_or_int(v));
                built
            });
            let (_, _, u) = resolve_settings(&Cluster::default(), &g, n, 0);
            assert_eq!(u, want, "{v} of {n}");
        }
    }

    /// `maxSurge` percentages round up; `maxUnavailable` then defaults to 1 when the
    /// surge is 0, else to 0.
    #[test]
    fn max_surge_rounds_up_and_sets_the_unavailable_default() {
        for (n, v, want) in [(1, "0", 0), (1, "0%", 0), (10, "31%", 4), (10, "100%", 10)] {
            let mut g = InstanceGroup::default();
            g.spec.rolling_update = Some({
                let mut built = v1alpha2::RollingUpdate::default();
                built.max_surge = Some(pct_or_int(v));
                built
            });
            let (_, s, u) = resolve_settings(&Cluster::default(), &g, n, 0);
            assert_eq!(s, want, "{v} of {n}");
            assert_eq!(u, if want == 0 { 1 } else { 0 }, "{v} of {n}");
        }
    }

    /// On AWS the defaults are surge 1, unavailable 0, whatever the group's size.
    #[test]
    fn aws_defaults_to_one_surge_and_none_unavailable() {
        let (_, s, u) = resolve_settings(&Cluster::default(), &InstanceGroup::default(), 1000, 1);
        assert_eq!((s, u), (1, 0));
    }
}

// ---------------------------------------------------------------------------------------
// Validation (pkg/validation/validate_cluster_test.go), over `evaluate`: one snapshot of
// groups, cloud members, nodes and pods.

mod validation {
    use super::*;
    use k8s_openapi::api::core::v1::{
        ContainerStatus, NodeCondition, NodeStatus, Pod, PodSpec, PodStatus,
    };
    use kops_model::day2::validate::{ValidateOptions, evaluate};

    /// A member: instance id, its node (name, Ready) if it joined, detached or not.
    struct M(&'static str, Option<(&'static str, bool)>, bool);

    struct G {
        name: &'static str,
        role: InstanceGroupRole,
        target: i32,
        members: Vec<M>,
        control_plane_labels: bool,
    }

    fn g(name: &'static str, role: InstanceGroupRole, target: i32, members: Vec<M>) -> G {
        G {
            name,
            role,
            target,
            members,
            control_plane_labels: false,
        }
    }

    fn vnode(id: &str, name: &str, ready: bool, cp: bool) -> Node {
        let mut labels = BTreeMap::new();
        labels.insert("kubernetes.io/hostname".to_string(), name.to_string());
        if cp {
            labels.insert(
                "node-role.kubernetes.io/control-plane".to_string(),
                String::new(),
            );
        }
        Node {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: Some(labels),
                ..Default::default()
            },
            spec: Some(NodeSpec {
                provider_id: Some(format!("aws:///us-test-1a/{id}")),
                ..Default::default()
            }),
            status: Some(NodeStatus {
                conditions: Some(vec![NodeCondition {
                    type_: "Ready".into(),
                    status: if ready { "True" } else { "False" }.into(),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
        }
    }

    /// kOps' `dummyPod`: two containers, both ready or not.
    fn pod(
        name: &str,
        ns: &str,
        priority: &str,
        phase: &str,
        ready: bool,
        node: &str,
        app: Option<&str>,
    ) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(ns.into()),
                labels: app.map(|a| [("k8s-app".to_string(), a.to_string())].into()),
                ..Default::default()
            },
            spec: Some(PodSpec {
                priority_class_name: (!priority.is_empty()).then(|| priority.to_string()),
                node_name: (!node.is_empty()).then(|| node.to_string()),
                ..Default::default()
            }),
            status: Some(PodStatus {
                phase: Some(phase.into()),
                container_statuses: Some(
                    ["container1", "container2"]
                        .iter()
                        .map(|c| ContainerStatus {
                            name: c.to_string(),
                            ready,
                            ..Default::default()
                        })
                        .collect(),
                ),
                ..Default::default()
            }),
        }
    }

    /// The snapshot of `groups` (default: one ready control-plane member), validated with
    /// `max_unready` tolerance; `missing` names groups with no cloud group.
    fn validate(
        groups: Vec<G>,
        missing: &[&str],
        pods: Vec<Pod>,
        max_unready: usize,
    ) -> ValidationCluster {
        validate_with(
            groups,
            missing,
            pods,
            &ValidateOptions::default().with_max_unready_nodes(max_unready),
        )
    }

    /// [`validate`] with these options.
    fn validate_with(
        groups: Vec<G>,
        missing: &[&str],
        pods: Vec<Pod>,
        options: &ValidateOptions,
    ) -> ValidationCluster {
        let groups = if groups.is_empty() && missing.is_empty() {
            vec![g(
                "master-1",
                InstanceGroupRole::ControlPlane,
                1,
                vec![M("i-00001", Some(("master-1a", true)), false)],
            )]
        } else {
            groups
        };
        let mut igs = Vec::new();
        let mut cgs = Vec::new();
        let mut nodes = Vec::new();
        for gr in &groups {
            let mut ig = InstanceGroup::default();
            ig.metadata.name = Some(gr.name.into());
            ig.spec.role = Some(gr.role.clone());
            igs.push(ig);
            let mut cg = CloudGroup::new(gr.name, gr.name, 0, 10, gr.target);
            for m in &gr.members {
                let status = if m.2 {
                    MemberStatus::Detached
                } else {
                    MemberStatus::UpToDate
                };
                cg.members.push(CloudMember::new(m.0, status));
                if let Some((name, ready)) = m.1 {
                    nodes.push(vnode(m.0, name, ready, gr.control_plane_labels));
                }
            }
            cgs.push(cg);
        }
        for name in missing {
            let mut ig = InstanceGroup::default();
            ig.metadata.name = Some(name.to_string());
            ig.spec.role = Some(InstanceGroupRole::Node);
            igs.push(ig);
        }
        evaluate(&igs, &cgs, &nodes, &pods, options)
    }

    fn one(v: &ValidationCluster) -> (&str, &str, &str, Option<&str>) {
        assert_eq!(v.failures.len(), 1, "{:#?}", v.failures);
        let f = &v.failures[0];
        (
            f.kind.as_str(),
            f.name.as_str(),
            f.message.as_str(),
            f.instance_group.as_deref(),
        )
    }

    fn two(a: bool, b: bool) -> Vec<M> {
        vec![
            M("i-00001", Some(("node-1a", a)), false),
            M("i-00002", Some(("node-1b", b)), false),
        ]
    }

    /// The table of kOps' group and node cases: (what, groups, tolerance, the one failure
    /// expected, if any).
    #[test]
    fn group_and_node_checks() {
        let node = InstanceGroupRole::Node;
        let cp = InstanceGroupRole::ControlPlane;
        type Want = Option<(&'static str, &'static str, &'static str)>;
        let cases: Vec<(&str, Vec<G>, usize, Want)> = vec![
            (
                "fewer nodes than the group's target",
                vec![g("node-1", node.clone(), 3, two(true, true))],
                0,
                Some((
                    "InstanceGroup",
                    "node-1",
                    "InstanceGroup \"node-1\" did not have enough nodes 2 vs 3",
                )),
            ),
            (
                "a detached member does not count",
                vec![g(
                    "node-1",
                    node.clone(),
                    2,
                    vec![
                        M("i-00001", Some(("node-1a", true)), false),
                        M("i-00002", Some(("node-1b", true)), true),
                    ],
                )],
                0,
                Some((
                    "InstanceGroup",
                    "node-1",
                    "InstanceGroup \"node-1\" did not have enough nodes 1 vs 2",
                )),
            ),
            (
                "a node not ready",
                vec![g("node-1", node.clone(), 2, two(true, false))],
                0,
                Some((
                    "Node",
                    "node-1b",
                    "node \"node-1b\" of role \"node\" is not ready",
                )),
            ),
            (
                "fewer control-plane nodes than the target",
                vec![g(
                    "master-1",
                    cp.clone(),
                    3,
                    vec![
                        M("i-00001", Some(("master-1a", true)), false),
                        M("i-00002", Some(("master-1b", true)), false),
                    ],
                )],
                0,
                Some((
                    "InstanceGroup",
                    "master-1",
                    "InstanceGroup \"master-1\" did not have enough nodes 2 vs 3",
                )),
            ),
            (
                "a control-plane node not ready",
                vec![g(
                    "master-1",
                    cp.clone(),
                    2,
                    vec![
                        M("i-00001", Some(("master-1a", true)), false),
                        M("i-00002", Some(("master-1b", false)), false),
                    ],
                )],
                0,
                Some((
                    "Node",
                    "master-1b",
                    "node \"master-1b\" of role \"control-plane\" is not ready",
                )),
            ),
            (
                "a member that never joined",
                vec![g("ig1", node.clone(), 1, vec![M("i-00001", None, false)])],
                0,
                Some((
                    "Machine",
                    "i-00001",
                    "machine \"i-00001\" has not yet joined cluster",
                )),
            ),
            (
                "a bastion is not expected to join",
                vec![g(
                    "ig1",
                    InstanceGroupRole::Bastion,
                    1,
                    vec![M("i-00001", None, false)],
                )],
                0,
                None,
            ),
            (
                "a detached member without a node is not validated",
                vec![g(
                    "node-1",
                    node.clone(),
                    2,
                    vec![
                        M("i-00001", Some(("node-1a", true)), false),
                        M("i-00002", Some(("node-2a", true)), false),
                        M("i-00003", None, true),
                    ],
                )],
                0,
                None,
            ),
            (
                "one not-ready worker within --max-unready-nodes 1",
                vec![g("node-1", node.clone(), 2, two(true, false))],
                1,
                None,
            ),
            (
                "one worker that never joined within the tolerance",
                vec![g(
                    "node-1",
                    node.clone(),
                    2,
                    vec![
                        M("i-00001", Some(("node-1a", true)), false),
                        M("i-00002", None, false),
                    ],
                )],
                1,
                None,
            ),
            (
                "not tolerated without --max-unready-nodes",
                vec![g("node-1", node.clone(), 2, two(true, false))],
                0,
                Some((
                    "Node",
                    "node-1b",
                    "node \"node-1b\" of role \"node\" is not ready",
                )),
            ),
            (
                "a not-ready control-plane node is never tolerated",
                vec![g(
                    "master-1",
                    cp.clone(),
                    2,
                    vec![
                        M("i-00001", Some(("master-1a", true)), false),
                        M("i-00002", Some(("master-1b", false)), false),
                    ],
                )],
                1,
                Some((
                    "Node",
                    "master-1b",
                    "node \"master-1b\" of role \"control-plane\" is not ready",
                )),
            ),
            (
                "a size mismatch is never tolerated",
                vec![g("node-1", node.clone(), 3, two(true, true))],
                1,
                Some((
                    "InstanceGroup",
                    "node-1",
                    "InstanceGroup \"node-1\" did not have enough nodes 2 vs 3",
                )),
            ),
        ];
        for (what, groups, tolerance, want) in cases {
            let ig = groups[0].name;
            let v = validate(groups, &[], Vec::new(), tolerance);
            match want {
                None => assert!(v.failures.is_empty(), "{what}: {:#?}", v.failures),
                Some((kind, name, message)) => {
                    assert_eq!(one(&v), (kind, name, message, Some(ig)), "{what}");
                }
            }
        }
    }

    /// Two not-ready workers with a tolerance of one: neither is tolerated.
    #[test]
    fn more_unready_workers_than_tolerated_fail_each() {
        let v = validate(
            vec![g("node-1", InstanceGroupRole::Node, 2, two(false, false))],
            &[],
            Vec::new(),
            1,
        );
        assert_eq!(v.failures.len(), 2, "{:#?}", v.failures);
    }

    /// A tolerated worker's critical pods are tolerated with it.
    #[test]
    fn a_tolerated_workers_pods_are_tolerated() {
        let pods = vec![pod(
            "pod1",
            "kube-system",
            "system-node-critical",
            "Running",
            false,
            "node-1b",
            None,
        )];
        let v = validate(
            vec![g("node-1", InstanceGroupRole::Node, 2, two(true, false))],
            &[],
            pods,
            1,
        );
        assert!(v.failures.is_empty(), "{:#?}", v.failures);
    }

    /// A group with no cloud group.
    #[test]
    fn a_group_missing_from_the_cloud() {
        let v = validate(Vec::new(), &["node-1"], Vec::new(), 0);
        assert_eq!(
            one(&v),
            (
                "InstanceGroup",
                "node-1",
                "InstanceGroup \"node-1\" is missing from the cloud provider",
                Some("node-1")
            )
        );
    }

    /// Each ready control-plane node needs the three static pods in kube-system: master-1a
    /// has them, master-1b's are in another namespace, master-1c is not ready (and so not
    /// checked for pods).
    #[test]
    fn control_plane_static_pods() {
        let mut group = g(
            "master-1",
            InstanceGroupRole::ControlPlane,
            3,
            vec![
                M("i-00001", Some(("master-1a", true)), false),
                M("i-00002", Some(("master-1b", true)), false),
                M("i-00003", Some(("master-1c", false)), false),
            ],
        );
        group.control_plane_labels = true;
        let mut pods = Vec::new();
        let mut want = vec![(
            "Node".to_string(),
            "master-1c".to_string(),
            "node \"master-1c\" of role \"control-plane\" is not ready".to_string(),
        )];
        for (i, app) in [
            "kube-apiserver",
            "kube-controller-manager",
            "kube-scheduler",
        ]
        .iter()
        .enumerate()
        {
            pods.push(pod(
                &format!("pod-a-{i}"),
                "kube-system",
                "system-cluster-critical",
                "Running",
                true,
                "master-1a",
                Some(app),
            ));
            pods.push(pod(
                &format!("pod-b-{i}"),
                "other",
                "system-cluster-critical",
                "Running",
                true,
                "master-1b",
                Some(app),
            ));
            want.push((
                "Node".into(),
                "master-1b".into(),
                format!("control-plane node \"master-1b\" is missing {app} pod"),
            ));
        }
        let v = validate(vec![group], &[], pods, 0);
        let mut got: Vec<(String, String, String)> = v
            .failures
            .iter()
            .map(|f| {
                assert_eq!(f.instance_group.as_deref(), Some("master-1"));
                (f.kind.clone(), f.name.clone(), f.message.clone())
            })
            .collect();
        got.sort();
        want.sort();
        assert_eq!(got, want);
    }

    /// Pods that are not critical, and critical pods that run or succeeded, never fail
    /// validation, in any phase or namespace.
    #[test]
    fn no_pod_failures() {
        let mut pods = Vec::new();
        for phase in ["Pending", "Running", "Succeeded", "Failed", "Unknown"] {
            for priority in ["", "otherPriority"] {
                for ready in [true, false] {
                    pods.push(pod(
                        &format!("{ready}-{priority}-{phase}"),
                        "kube-system",
                        priority,
                        phase,
                        ready,
                        "",
                        None,
                    ));
                }
            }
        }
        for ns in ["kube-system", "otherNamespace"] {
            for p in ["node", "cluster"] {
                let prio = format!("system-{p}-critical");
                pods.push(pod(
                    &format!("ready-{p}-{ns}"),
                    ns,
                    &prio,
                    "Running",
                    true,
                    "",
                    None,
                ));
                pods.push(pod(
                    &format!("notready-{p}-{ns}"),
                    ns,
                    &prio,
                    "Succeeded",
                    false,
                    "",
                    None,
                ));
            }
        }
        let v = validate(Vec::new(), &[], pods, 0);
        assert!(v.failures.is_empty(), "{:#?}", v.failures);
    }

    /// Without pod checks (how `reconcile cluster` waits for the API), a pending critical
    /// pod passes, while a control-plane node missing its static pods still fails.
    #[test]
    fn pod_checks_left_out_keep_the_static_pod_checks() {
        let nodes = || {
            g(
                "node-1",
                InstanceGroupRole::Node,
                1,
                vec![M("i-00001", Some(("node-1a", true)), false)],
            )
        };
        let mut cp = g(
            "master-1",
            InstanceGroupRole::ControlPlane,
            1,
            vec![M("i-00002", Some(("master-1a", true)), false)],
        );
        cp.control_plane_labels = true;
        let pending = || {
            vec![pod(
                "dns",
                "kube-system",
                "system-cluster-critical",
                "Pending",
                false,
                "node-1a",
                None,
            )]
        };
        let checked = validate(vec![nodes()], &[], pending(), 0);
        assert_eq!(one(&checked).0, "Pod");
        let unchecked = ValidateOptions::default().with_pod_checks(false);
        let v = validate_with(vec![nodes()], &[], pending(), &unchecked);
        assert!(v.failures.is_empty(), "{:#?}", v.failures);
        let v = validate_with(vec![cp], &[], pending(), &unchecked);
        assert_eq!(v.failures.len(), 3, "{:#?}", v.failures);
        assert!(
            v.failures.iter().all(|f| f
                .message
                .starts_with("control-plane node \"master-1a\" is missing")),
            "{:#?}",
            v.failures
        );
    }

    /// A critical pod that is pending, not ready or of unknown phase fails, named
    /// `namespace/name`; a node-critical failure belongs to its node's group, a
    /// cluster-critical one to none (so it blocks every group's roll).
    #[test]
    fn pod_failures() {
        let group = || {
            g(
                "node-1",
                InstanceGroupRole::Node,
                1,
                vec![
                    M("i-00001", Some(("node-1a", true)), false),
                    M("i-00002", Some(("node-1b", true)), false),
                    M("i-00003", Some(("node-1c", true)), false),
                ],
            )
        };
        for (phase, expected) in [
            ("Pending", "pending"),
            ("Running", "not ready (container1,container2)"),
            ("Unknown", "unknown phase"),
        ] {
            for priority in ["node", "cluster"] {
                for ns in ["kube-system", "otherNamespace"] {
                    for node in ["node-1a", "node-1b", "node-1c"] {
                        let prio = format!("system-{priority}-critical");
                        let v = validate(
                            vec![group()],
                            &[],
                            vec![pod("pod1", ns, &prio, phase, false, node, None)],
                            0,
                        );
                        let want_ig = (priority == "node").then_some("node-1");
                        let message = format!("{prio} pod \"pod1\" is {expected}");
                        assert_eq!(
                            one(&v),
                            (
                                "Pod",
                                format!("{ns}/pod1").as_str(),
                                message.as_str(),
                                want_ig
                            ),
                            "{phase} {priority} {ns} {node}"
                        );
                    }
                }
            }
        }
    }
}
