//! Executor behaviour with injected faults, on a virtual clock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Fault, MemCloud, TestTask};
use kops_tasks::{
    Action, Clock, Error, Event, Executor, ExecutorOptions, Fields, Lifecycle, ManualClock, Task,
    TaskGraph, TaskKey, Value,
};

fn executor(clock: &ManualClock) -> (Executor, Arc<Mutex<Vec<Event>>>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let opts = ExecutorOptions::default()
        .with_clock(Arc::new(clock.clone()))
        .with_concurrency(4)
        .with_task_deadline(Duration::from_secs(300))
        .with_backoff(Duration::from_secs(1), Duration::from_secs(30))
        .with_progress(move |e| sink.lock().unwrap().push(e.clone()));
    (Executor::new(opts), events)
}

fn network() -> Vec<Box<dyn Task<MemCloud>>> {
    let vpc = TaskKey::new("VPC", "main");
    let subnet = TaskKey::new("Subnet", "a");
    vec![
        TestTask::new("VPC", "main", Fields::new().with("CIDR", "10.0.0.0/16")).boxed(),
        TestTask::new(
            "Subnet",
            "a",
            Fields::new().with("CIDR", "10.0.1.0/24").with("VPC", &vpc),
        )
        .boxed(),
        TestTask::new("Instance", "i", Fields::new().with("Subnet", &subnet)).boxed(),
        TestTask::new("Bucket", "logs", Fields::new().with("Versioning", true)).boxed(),
    ]
}

#[test]
fn references_resolve_to_created_ids_and_second_plan_is_empty() {
    let clock = ManualClock::new();
    let (exec, _) = executor(&clock);
    let cloud = MemCloud::new();
    let graph = TaskGraph::build(network()).unwrap();
    let report = clock.block_on(exec.apply(&graph, &cloud)).unwrap();
    assert!(report.is_success(), "{:?}", report.failed);
    let (vpc_id, _) = cloud.get(&TaskKey::new("VPC", "main")).unwrap();
    let (_, subnet) = cloud.get(&TaskKey::new("Subnet", "a")).unwrap();
    assert_eq!(subnet.get("VPC"), Some(&Value::string(vpc_id)));
    let plan = clock.block_on(exec.plan(&graph, &cloud)).unwrap().unwrap();
    assert!(!plan.has_changes(), "{plan}");
    assert_eq!(plan.exit_code(), 0);
}

#[test]
fn plan_items_come_in_key_order_whatever_order_the_tasks_ran_in() {
    // A chain that runs against key order (each task refers to the one with the next
    // name), some tasks slowed down so they finish after later ones.
    let clock = ManualClock::new();
    let (exec, events) = executor(&clock);
    let keys: Vec<TaskKey> = (0..30)
        .map(|i| TaskKey::new("T", format!("t{i:02}")))
        .collect();
    let tasks: Vec<Box<dyn Task<MemCloud>>> = keys
        .iter()
        .enumerate()
        .rev()
        .map(|(i, k)| {
            let mut f = Fields::new().with("N", i as i64);
            if let Some(next) = keys.get(i + 1) {
                f.insert("Next", next);
            }
            TestTask::new(k.kind(), k.name(), f).boxed()
        })
        .collect();
    let cloud = MemCloud::new().with_apply_delay(Duration::from_millis(5));
    let graph = TaskGraph::build(tasks).unwrap();
    assert!(
        clock
            .block_on(exec.apply(&graph, &cloud))
            .unwrap()
            .is_success()
    );
    let finished: Vec<TaskKey> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::Finished { key, .. } => Some(key.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(finished.first(), keys.last(), "the chain ran from its end");
    let plan = clock.block_on(exec.plan(&graph, &cloud)).unwrap().unwrap();
    let planned: Vec<&TaskKey> = plan.items.iter().map(|i| &i.key).collect();
    assert_eq!(planned, keys.iter().collect::<Vec<_>>());
    assert!(!plan.has_changes(), "{plan}");
}

#[test]
fn throttled_task_is_retried_with_backoff_and_succeeds() {
    let clock = ManualClock::new();
    let (exec, events) = executor(&clock);
    let cloud = MemCloud::new();
    let vpc = TaskKey::new("VPC", "main");
    cloud.fault_apply(&vpc, &[Fault::Throttle, Fault::Throttle, Fault::Throttle]);
    let graph = TaskGraph::build(network()).unwrap();
    let report = clock.block_on(exec.apply(&graph, &cloud)).unwrap();
    assert!(report.is_success(), "{:?}", report.failed);
    let retries: Vec<(u32, Duration)> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::Retrying {
                key,
                attempt,
                delay,
                ..
            } if *key == vpc => Some((*attempt, *delay)),
            _ => None,
        })
        .collect();
    assert_eq!(retries.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 2, 3]);
    // Exponential with +-25% jitter: ~1s, ~2s, ~4s.
    for ((_, d), base) in retries.iter().zip([1.0, 2.0, 4.0]) {
        let s = d.as_secs_f64();
        assert!(
            s >= base * 0.75 && s <= base * 1.25,
            "delay {s} for base {base}"
        );
    }
    assert!(clock.now() >= Duration::from_secs_f64(0.75 * 7.0));
    assert!(cloud.get(&TaskKey::new("Instance", "i")).is_some());
}

#[test]
fn permanent_failure_is_reported_while_independent_tasks_finish() {
    let clock = ManualClock::new();
    let (exec, events) = executor(&clock);
    let cloud = MemCloud::new();
    let subnet = TaskKey::new("Subnet", "a");
    let bucket = TaskKey::new("Bucket", "logs");
    cloud.fault_apply(&subnet, &[Fault::Fail]);
    let mut tasks = network();
    tasks.push(TestTask::new("Bucket", "other", Fields::new().with("X", 1i64)).boxed());
    cloud.fault_apply(&TaskKey::new("Bucket", "other"), &[Fault::Fail]);
    let graph = TaskGraph::build(tasks).unwrap();
    let report = clock.block_on(exec.apply(&graph, &cloud)).unwrap();

    let failed: Vec<String> = report.failed.iter().map(|(k, _)| k.to_string()).collect();
    assert_eq!(
        failed,
        ["Bucket/other", "Subnet/a"],
        "every failure is reported"
    );
    assert_eq!(
        report.skipped,
        vec![(TaskKey::new("Instance", "i"), subnet.clone())]
    );
    assert!(cloud.get(&bucket).is_some(), "independent branch finished");
    assert!(cloud.get(&TaskKey::new("VPC", "main")).is_some());
    assert!(cloud.get(&TaskKey::new("Instance", "i")).is_none());
    let err = report.into_result().unwrap_err().to_string();
    assert!(
        err.contains("Subnet/a") && err.contains("Bucket/other"),
        "{err}"
    );
    // Progress accounted for every task, including the skipped one.
    let last_done = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::Finished { done, total, .. } | Event::Skipped { done, total, .. } => {
                Some((*done, *total))
            }
            _ => None,
        })
        .max()
        .unwrap();
    assert_eq!(last_done, (5, 5));
}

#[test]
fn deadline_is_reported_with_the_task_name() {
    let clock = ManualClock::new();
    let (exec, _) = executor(&clock);
    let cloud = MemCloud::new();
    let bucket = TaskKey::new("Bucket", "logs");
    cloud.fault_apply(&bucket, &[Fault::Hang]);
    let graph = TaskGraph::build(network()).unwrap();
    let report = clock.block_on(exec.apply(&graph, &cloud)).unwrap();
    assert_eq!(report.failed.len(), 1);
    let (key, err) = &report.failed[0];
    assert_eq!(key, &bucket);
    assert!(matches!(err, Error::DeadlineExceeded { key, .. } if key == &bucket));
    assert!(err.to_string().contains("Bucket/logs"), "{err}");
    assert!(cloud.get(&TaskKey::new("Instance", "i")).is_some());
    assert!(clock.now() >= Duration::from_secs(300));
}

#[test]
fn retries_stop_at_the_deadline_with_the_last_error() {
    let clock = ManualClock::new();
    let (exec, _) = executor(&clock);
    let exec = Executor::new(
        exec.options()
            .clone()
            .with_task_deadline(Duration::from_secs(20)),
    );
    let cloud = MemCloud::new();
    let vpc = TaskKey::new("VPC", "main");
    cloud.fault_apply(&vpc, &[Fault::Throttle; 50]);
    let graph = TaskGraph::build(network()).unwrap();
    let report = clock.block_on(exec.apply(&graph, &cloud)).unwrap();
    let (_, err) = report.failed.iter().find(|(k, _)| k == &vpc).unwrap();
    let msg = err.to_string();
    assert!(
        msg.contains("VPC/main") && msg.contains("RequestLimitExceeded"),
        "{msg}"
    );
    assert_eq!(report.skipped.len(), 2);
}

#[test]
fn concurrency_never_exceeds_the_bound() {
    for bound in [1usize, 3, 8] {
        let clock = ManualClock::new();
        let (exec, events) = executor(&clock);
        let exec = Executor::new(exec.options().clone().with_concurrency(bound));
        let cloud = MemCloud::new().with_apply_delay(Duration::from_secs(1));
        let tasks: Vec<Box<dyn Task<MemCloud>>> = (0..20)
            .map(|i| TestTask::new("Bucket", &format!("b{i}"), Fields::new().with("I", i)).boxed())
            .collect();
        let graph = TaskGraph::build(tasks).unwrap();
        let report = clock.block_on(exec.apply(&graph, &cloud)).unwrap();
        assert!(report.is_success());
        assert_eq!(
            cloud.max_running.load(std::sync::atomic::Ordering::SeqCst),
            bound,
            "bound {bound} reached but never exceeded"
        );
        let max_reported = events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                Event::Started { running, .. } => Some(*running),
                _ => None,
            })
            .max()
            .unwrap();
        assert_eq!(max_reported, bound);
        // 20 one-second applies with `bound` lanes take ceil(20/bound) virtual seconds.
        assert_eq!(
            clock.now(),
            Duration::from_secs(20usize.div_ceil(bound) as u64)
        );
    }
}

#[test]
fn lifecycles_are_honoured() {
    let clock = ManualClock::new();
    let (exec, _) = executor(&clock);
    let cloud = MemCloud::new();
    let role = TaskKey::new("IAMRole", "masters");
    cloud.put(
        &role,
        "role-1",
        Fields::new().with("Policy", Value::text("old\n")),
    );
    let tasks = vec![
        TestTask::new(
            "IAMRole",
            "masters",
            Fields::new().with("Policy", Value::text("new\n")),
        )
        .lifecycle(Lifecycle::ExistsAndWarnIfChanges)
        .boxed(),
        TestTask::new("SecurityGroup", "ignored", Fields::new().with("X", 1i64))
            .lifecycle(Lifecycle::Ignore)
            .boxed(),
    ];
    let graph = TaskGraph::build(tasks).unwrap();
    let report = clock.block_on(exec.apply(&graph, &cloud)).unwrap();
    assert!(report.is_success());
    let actions: Vec<Action> = report.plan.items.iter().map(|i| i.action).collect();
    assert_eq!(actions, [Action::Drift, Action::Ignored]);
    assert_eq!(
        cloud.get(&role).unwrap().1.get("Policy"),
        Some(&Value::text("old\n")),
        "ExistsAndWarnIfChanges never modifies"
    );
    assert!(
        cloud
            .get(&TaskKey::new("SecurityGroup", "ignored"))
            .is_none()
    );

    // ExistsAndValidates: a missing object is an error naming the task.
    let graph = TaskGraph::build(vec![
        TestTask::new("VPC", "shared", Fields::new().with("CIDR", "10.0.0.0/8"))
            .lifecycle(Lifecycle::ExistsAndValidates)
            .boxed(),
    ])
    .unwrap();
    let err = clock
        .block_on(exec.plan(&graph, &cloud))
        .unwrap()
        .unwrap_err()
        .to_string();
    assert!(err.contains("VPC/shared"), "{err}");

    // WarnIfInsufficientAccess: a denied lookup is a warning, not a failure.
    let key = TaskKey::new("Bucket", "acl");
    cloud.fault_find(&key, &[Fault::Denied]);
    let graph = TaskGraph::build(vec![
        TestTask::new("Bucket", "acl", Fields::new().with("ACL", "private"))
            .lifecycle(Lifecycle::WarnIfInsufficientAccess)
            .boxed(),
    ])
    .unwrap();
    let report = clock.block_on(exec.apply(&graph, &cloud)).unwrap();
    assert!(report.is_success());
    assert!(
        report.plan.items[0]
            .reason
            .contains("WarnIfInsufficientAccess")
    );
}

#[tokio::test]
async fn runs_on_tokio_with_the_real_clock() {
    let exec = Executor::new(ExecutorOptions::default().with_concurrency(2));
    let cloud = MemCloud::new();
    let graph = TaskGraph::build(network()).unwrap();
    assert!(exec.apply(&graph, &cloud).await.is_success());
    assert!(!exec.plan(&graph, &cloud).await.unwrap().has_changes());
}

#[test]
fn immutable_field_changes_fail_in_plan_and_apply() {
    let clock = ManualClock::new();
    let (exec, _) = executor(&clock);
    let cloud = MemCloud::new();
    let vpc = TaskKey::new("VPC", "main");
    cloud.put(&vpc, "vpc-1", Fields::new().with("CIDR", "10.0.0.0/16"));
    let mut t = TestTask::new("VPC", "main", Fields::new().with("CIDR", "10.9.0.0/16"));
    t.immutable = vec!["CIDR"];
    let graph = TaskGraph::build(vec![t.boxed()]).unwrap();
    let err = clock
        .block_on(exec.plan(&graph, &cloud))
        .unwrap()
        .unwrap_err()
        .to_string();
    assert!(err.contains("VPC/main"), "{err}");
    let report = clock.block_on(exec.apply(&graph, &cloud)).unwrap();
    let msg = format!("{}", report.failed[0].1);
    assert_eq!(msg, "VPC/main.CIDR: field cannot be changed");
    assert_eq!(
        cloud.get(&vpc).unwrap().1.get("CIDR"),
        Some(&Value::string("10.0.0.0/16"))
    );
}

#[test]
fn orphans_are_planned_and_deleted_deferred_ones_only_when_allowed() {
    use kops_tasks::OwnedObject;
    let clock = ManualClock::new();
    let (exec, _) = executor(&clock);
    let cloud = MemCloud::new();
    let graph = TaskGraph::build(network()).unwrap();
    let stale_rule = TaskKey::new("SecurityGroupRule", "old");
    let stale_role = TaskKey::new("IAMRole", "bastions");
    let broken = TaskKey::new("SecurityGroupRule", "broken");
    for k in [&stale_rule, &stale_role, &broken] {
        cloud.put(k, "x", Fields::new());
    }
    let owned = vec![
        OwnedObject {
            key: stale_rule.clone(),
            id: "sgr-1".into(),
            description: String::new(),
            deferred: false,
        },
        OwnedObject {
            key: stale_role.clone(),
            id: "bastions".into(),
            description: String::new(),
            deferred: true,
        },
        OwnedObject {
            key: broken.clone(),
            id: "sgr-2".into(),
            description: String::new(),
            deferred: false,
        },
        OwnedObject {
            key: TaskKey::new("VPC", "main"),
            id: "vpc-1".into(),
            description: String::new(),
            deferred: false,
        },
    ];
    let mut plan = clock.block_on(exec.plan(&graph, &cloud)).unwrap().unwrap();
    plan.add_orphans(&graph, &owned);
    assert_eq!(
        plan.summary().delete,
        3,
        "the modelled VPC is not an orphan"
    );
    let deleter = common::MemDeleter {
        fail: vec![broken.clone()],
    };
    let failures = clock
        .block_on(exec.delete_orphans(&plan, &owned, &deleter, &cloud, false))
        .unwrap();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].0, broken);
    assert!(cloud.get(&stale_rule).is_none());
    assert!(cloud.get(&stale_role).is_some(), "deferred deletion waits");
    let failures = clock
        .block_on(exec.delete_orphans(&plan, &owned, &common::MemDeleter::default(), &cloud, true))
        .unwrap();
    assert!(failures.is_empty());
    assert!(cloud.get(&stale_role).is_none());
}

#[test]
fn never_returns_while_a_task_is_in_flight() {
    let clock = ManualClock::new();
    let (exec, events) = executor(&clock);
    // Every apply takes 60 virtual seconds; one task fails at the end of its apply.
    let cloud = MemCloud::new().with_apply_delay(Duration::from_secs(60));
    let failing = TaskKey::new("Bucket", "fails");
    cloud.fault_apply(&failing, &[Fault::Fail]);
    let tasks: Vec<Box<dyn Task<MemCloud>>> =
        std::iter::once(TestTask::new("Bucket", "fails", Fields::new().with("X", 1i64)).boxed())
            .chain((0..6).map(|i| {
                TestTask::new("Bucket", &format!("slow{i}"), Fields::new().with("X", i)).boxed()
            }))
            .collect();
    let graph = TaskGraph::build(tasks).unwrap();
    let report = clock.block_on(exec.apply(&graph, &cloud)).unwrap();
    assert_eq!(report.failed.len(), 1);
    assert_eq!(
        cloud.running.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "no apply still running when the executor returned"
    );
    assert_eq!(cloud.applies.lock().unwrap().len(), 6);
    let started = events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, Event::Started { .. }))
        .count();
    let finished = events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, Event::Finished { .. }))
        .count();
    assert_eq!((started, finished), (7, 7));
}

#[test]
fn runs_are_send_so_they_can_be_spawned() {
    fn assert_send<T: Send>(_: &T) {}
    let clock = ManualClock::new();
    let (exec, _) = executor(&clock);
    let cloud = MemCloud::new();
    let graph = TaskGraph::build(network()).unwrap();
    let results = kops_tasks::Results::new();
    assert_send(&exec.plan(&graph, &cloud));
    assert_send(&exec.apply(&graph, &cloud));
    assert_send(&exec.run(&graph, &cloud, kops_tasks::Mode::Plan, &results));
}

#[test]
fn seeded_outputs_merge_with_the_tasks_and_outlive_the_run() {
    // Seeded under keys made separately from the tasks' (so not clones of them), one of a
    // task of the graph and one of an object outside it.
    let clock = ManualClock::new();
    let (exec, _) = executor(&clock);
    let cloud = MemCloud::new();
    let graph = TaskGraph::build(network()).unwrap();
    let results = kops_tasks::Results::new();
    let vpc = TaskKey::new("VPC", "main");
    let shared = TaskKey::new("VPC", "shared");
    results.insert(
        vpc.clone(),
        kops_tasks::Outputs::new().with("arn", "arn:vpc"),
    );
    results.insert(shared.clone(), kops_tasks::Outputs::id("vpc-shared"));
    let report = clock
        .block_on(exec.run(&graph, &cloud, kops_tasks::Mode::Apply, &results))
        .unwrap();
    assert!(report.is_success(), "{:?}", report.failed);
    let (vpc_id, _) = cloud.get(&vpc).unwrap();
    assert_eq!(results.get(&vpc, "id").as_deref(), Some(vpc_id.as_str()));
    assert_eq!(results.get(&vpc, "arn").as_deref(), Some("arn:vpc"));
    assert_eq!(results.get(&shared, "id").as_deref(), Some("vpc-shared"));
    // Recorded again at the node, under a key made separately: merged with what is there.
    results.insert(
        TaskKey::new("VPC", "main"),
        kops_tasks::Outputs::new()
            .with("extra", "1")
            .with("arn", "arn:vpc:2"),
    );
    let merged = results.outputs(&vpc).unwrap_or_default();
    assert_eq!(merged.get("id"), Some(vpc_id.as_str()));
    assert_eq!(merged.get("arn"), Some("arn:vpc:2"));
    assert_eq!(merged.get("extra"), Some("1"));

    // A second run on the same map, on another graph: the first run's outputs stay.
    let other = TaskGraph::build(vec![
        TestTask::new("Bucket", "other", Fields::new().with("Versioning", false)).boxed(),
    ])
    .unwrap();
    let report = clock
        .block_on(exec.run(&other, &cloud, kops_tasks::Mode::Apply, &results))
        .unwrap();
    assert!(report.is_success(), "{:?}", report.failed);
    assert_eq!(results.outputs(&vpc), Some(merged));
    assert!(
        results
            .get(&TaskKey::new("Bucket", "other"), "id")
            .is_some()
    );
}

#[test]
fn ready_tasks_start_in_the_order_they_were_given() {
    // Independent tasks given against key order, one at a time: they start as given.
    let clock = ManualClock::new();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let exec = Executor::new(
        ExecutorOptions::default()
            .with_clock(Arc::new(clock.clone()))
            .with_concurrency(1)
            .with_progress(move |e| sink.lock().unwrap().push(e.clone())),
    );
    let names = ["d", "b", "a", "c"];
    let tasks: Vec<Box<dyn Task<MemCloud>>> = names
        .iter()
        .map(|n| TestTask::new("T", n, Fields::new().with("N", 1)).boxed())
        .collect();
    let graph = TaskGraph::build(tasks).unwrap();
    let plan = clock
        .block_on(exec.plan(&graph, &MemCloud::new()))
        .unwrap()
        .unwrap();
    let started: Vec<String> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::Started { key, .. } => Some(key.name().to_owned()),
            _ => None,
        })
        .collect();
    assert_eq!(started, names);
    let planned: Vec<&str> = plan.items.iter().map(|i| i.key.name()).collect();
    assert_eq!(planned, ["a", "b", "c", "d"], "the plan is in key order");
}

#[test]
fn overlapping_runs_on_one_results_map_keep_every_output() {
    // Two applies on one map at once (slow applies, so they interleave): the second run
    // starts while the first is in flight, and each task's outputs stay under its key.
    let clock = ManualClock::new();
    let (exec, _) = executor(&clock);
    let cloud = MemCloud::new().with_apply_delay(Duration::from_millis(5));
    let first = TaskGraph::build(network()).unwrap();
    let second = TaskGraph::build(
        (0..6)
            .map(|i| TestTask::new("Bucket", &format!("b{i}"), Fields::new().with("N", i)).boxed())
            .collect(),
    )
    .unwrap();
    let results = kops_tasks::Results::new();
    let (a, b) = clock
        .block_on(async {
            futures::join!(
                exec.run(&first, &cloud, kops_tasks::Mode::Apply, &results),
                exec.run(&second, &cloud, kops_tasks::Mode::Apply, &results),
            )
        })
        .unwrap();
    assert!(
        a.is_success() && b.is_success(),
        "{:?} {:?}",
        a.failed,
        b.failed
    );
    for graph in [&first, &second] {
        for node in graph.nodes() {
            let (id, _) = cloud.get(node.key()).unwrap();
            assert_eq!(results.get(node.key(), "id"), Some(id), "{}", node.key());
        }
    }
}
