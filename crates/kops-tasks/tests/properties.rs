//! Invariants, checked with proptest: diff(x, x) is empty; apply then plan is empty; every
//! task runs after its dependencies; any cycle is rejected.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use common::{MemCloud, TestTask};
use kops_tasks::diff::{NoResolver, diff_fields};
use kops_tasks::{
    Error, Event, Executor, ExecutorOptions, Fields, ManualClock, Task, TaskGraph, TaskKey, Value,
};
use proptest::prelude::*;

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        "[a-z0-9./:-]{0,12}".prop_map(Value::string),
        "([a-z ]{0,8}\n){0,4}".prop_map(Value::text),
        ("[A-Z][a-z]{0,5}", "[a-z.]{1,8}")
            .prop_map(|(k, n)| Value::reference(TaskKey::new(k, n).to_ref())),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::List),
            prop::collection::btree_map("[a-z/.]{1,6}", inner.clone(), 0..4)
                .prop_map(|m| Value::Map(m.into())),
            prop::collection::vec(("[A-Z][a-z]{0,6}", inner), 0..4)
                .prop_map(|v| Value::Object(v.into_iter().collect())),
        ]
    })
}

fn fields() -> impl Strategy<Value = Fields> {
    prop::collection::vec(("[A-Z][a-zA-Z]{0,8}", value()), 0..6)
        .prop_map(|v| v.into_iter().collect())
}

/// A random DAG: task `i` may depend on any `j < i`; returned in a shuffled order.
#[derive(Debug, Clone)]
struct Dag {
    /// (name, deps by index, scalar field values)
    nodes: Vec<(usize, Vec<usize>, i64)>,
}

fn dag(max: usize) -> impl Strategy<Value = Dag> {
    (1..max)
        .prop_flat_map(|n| {
            let deps = (0..n)
                .map(|i| {
                    if i == 0 {
                        Just(Vec::new()).boxed()
                    } else {
                        prop::collection::vec(0..i, 0..3.min(i + 1)).boxed()
                    }
                })
                .collect::<Vec<_>>();
            (deps, prop::collection::vec(any::<i64>(), n), Just(n))
        })
        .prop_flat_map(|(deps, vals, n)| {
            let nodes: Vec<(usize, Vec<usize>, i64)> = deps
                .into_iter()
                .zip(vals)
                .enumerate()
                .map(|(i, (d, v))| (i, d, v))
                .collect();
            Just(nodes).prop_shuffle().prop_map(move |nodes| {
                let _ = n;
                Dag { nodes }
            })
        })
}

fn key(i: usize) -> TaskKey {
    TaskKey::new(
        ["VPC", "Subnet", "Role"][i % 3],
        format!("t{i}.example.com"),
    )
}

fn tasks_of(d: &Dag) -> Vec<TestTask> {
    d.nodes
        .iter()
        .map(|(i, deps, v)| {
            let k = key(*i);
            let mut f = Fields::new().with("Size", *v);
            if let Some(first) = deps.first() {
                f.insert("Parent", &key(*first));
            }
            if deps.len() > 1 {
                f.insert(
                    "Others",
                    Value::List(deps[1..].iter().map(|d| Value::from(&key(*d))).collect()),
                );
            }
            TestTask::new(k.kind(), k.name(), f)
        })
        .collect()
}

fn boxed(ts: &[TestTask]) -> Vec<Box<dyn Task<MemCloud>>> {
    ts.iter().cloned().map(TestTask::boxed).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, .. ProptestConfig::default() })]

    #[test]
    fn diff_of_a_value_with_itself_is_empty(f in fields()) {
        prop_assert!(diff_fields(&f, Some(&f), &NoResolver).is_empty());
    }

    #[test]
    fn a_missing_object_diffs_every_non_null_field(f in fields()) {
        let n = f.values().filter(|v| !v.is_null()).count();
        prop_assert_eq!(diff_fields(&f, None, &NoResolver).len(), n);
    }

    #[test]
    fn apply_then_plan_is_empty(d in dag(24), existing in prop::collection::vec(any::<bool>(), 24), conc in 1usize..6) {
        let tasks = tasks_of(&d);
        let cloud = MemCloud::new();
        // Some objects already exist, with drifted values and stale references.
        for (t, keep) in tasks.iter().zip(existing) {
            if keep {
                cloud.put(&t.key, &format!("old-{}", t.key.name()),
                    Fields::new().with("Size", 0i64).with("Parent", "stale-id"));
            }
        }
        let graph = TaskGraph::build(boxed(&tasks)).unwrap();
        let clock = ManualClock::new();
        let exec = Executor::new(ExecutorOptions::default()
            .with_clock(Arc::new(clock.clone())).with_concurrency(conc));
        let report = clock.block_on(exec.apply(&graph, &cloud)).unwrap();
        prop_assert!(report.is_success());
        let plan = clock.block_on(exec.plan(&graph, &cloud)).unwrap().unwrap();
        prop_assert!(!plan.has_changes(), "{}", plan);
        prop_assert_eq!(plan.items.len(), tasks.len());
    }

    #[test]
    fn every_task_runs_after_its_dependencies(d in dag(40), conc in 1usize..8) {
        let tasks = tasks_of(&d);
        let graph = TaskGraph::build(boxed(&tasks)).unwrap();
        // Static order.
        let order = graph.topological_order();
        let pos: HashMap<usize, usize> = order.iter().enumerate().map(|(p, &i)| (i, p)).collect();
        for i in 0..graph.len() {
            for &dep in graph.dependencies(i) {
                prop_assert!(pos[&dep] < pos[&i]);
            }
        }
        // Executor order: a task starts only after every dependency finished.
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = events.clone();
        let clock = ManualClock::new();
        let exec = Executor::new(ExecutorOptions::default()
            .with_clock(Arc::new(clock.clone()))
            .with_concurrency(conc)
            .with_progress(move |e| sink.lock().unwrap().push(e.clone())));
        let cloud = MemCloud::new().with_apply_delay(std::time::Duration::from_millis(10));
        let report = clock.block_on(exec.apply(&graph, &cloud)).unwrap();
        prop_assert!(report.is_success());
        let mut finished: BTreeMap<TaskKey, usize> = BTreeMap::new();
        let mut started: BTreeMap<TaskKey, usize> = BTreeMap::new();
        for (n, e) in events.lock().unwrap().iter().enumerate() {
            match e {
                Event::Started { key, .. } => { started.insert(key.clone(), n); }
                Event::Finished { key, .. } => { finished.insert(key.clone(), n); }
                _ => {}
            }
        }
        for i in 0..graph.len() {
            let me = graph.node(i).unwrap().key();
            for &dep in graph.dependencies(i) {
                let dk = graph.node(dep).unwrap().key();
                prop_assert!(finished[dk] < started[me], "{} started before {} finished", me, dk);
            }
        }
    }

    #[test]
    fn any_cycle_is_rejected(d in dag(30), picks in prop::collection::vec(any::<prop::sample::Index>(), 1..5)) {
        let mut tasks = tasks_of(&d);
        // Close a cycle through the picked tasks: each depends on the next, the last on the first.
        let mut members: Vec<usize> = picks.iter().map(|p| p.index(tasks.len())).collect();
        members.sort_unstable();
        members.dedup();
        for w in 0..members.len() {
            let next = tasks[members[(w + 1) % members.len()]].key.clone();
            tasks[members[w]].extra_deps.push(next);
        }
        let err = TaskGraph::build(boxed(&tasks)).unwrap_err();
        match err {
            Error::Cycle { tasks: in_cycle } => {
                for m in &members {
                    prop_assert!(in_cycle.contains(&tasks[*m].key), "{:?} not in {:?}", tasks[*m].key, in_cycle);
                }
            }
            other => prop_assert!(false, "expected a cycle error, got {}", other),
        }
    }
}

#[test]
fn unknown_reference_names_both_tasks() {
    let tasks = vec![
        TestTask::new(
            "Subnet",
            "a",
            Fields::new().with("VPC", &TaskKey::new("VPC", "nope")),
        )
        .boxed(),
    ];
    let err = TaskGraph::build(tasks).unwrap_err().to_string();
    assert_eq!(err, "task Subnet/a refers to unknown task VPC/nope");
}

#[test]
fn duplicate_keys_and_cycles_are_rejected_with_names() {
    let dup = vec![
        TestTask::new("VPC", "a", Fields::new()).boxed(),
        TestTask::new("VPC", "a", Fields::new()).boxed(),
    ];
    assert_eq!(
        TaskGraph::build(dup).unwrap_err().to_string(),
        "duplicate task VPC/a"
    );
    let a = TaskKey::new("SecurityGroup", "a");
    let b = TaskKey::new("SecurityGroupRule", "b");
    let cyc = vec![
        TestTask::new("SecurityGroup", "a", Fields::new().with("Rule", &b)).boxed(),
        TestTask::new("SecurityGroupRule", "b", Fields::new().with("Group", &a)).boxed(),
        TestTask::new("VPC", "c", Fields::new()).boxed(),
    ];
    assert_eq!(
        TaskGraph::build(cyc).unwrap_err().to_string(),
        "dependency cycle between tasks: SecurityGroup/a, SecurityGroupRule/b"
    );
    let self_ref = vec![
        TestTask::new(
            "VPC",
            "x",
            Fields::new().with("Me", &TaskKey::new("VPC", "x")),
        )
        .boxed(),
    ];
    assert_eq!(
        TaskGraph::build(self_ref).unwrap_err().to_string(),
        "dependency cycle between tasks: VPC/x"
    );
}

#[test]
fn lifecycle_overrides_apply_per_kind() {
    let overrides =
        kops_tasks::LifecycleOverrides::parse("IAMRole=ExistsAndWarnIfChanges").unwrap();
    let graph = TaskGraph::build_with(
        vec![
            TestTask::new("IAMRole", "r", Fields::new()).boxed(),
            TestTask::new("VPC", "v", Fields::new()).boxed(),
        ],
        &overrides,
    )
    .unwrap();
    let lcs: Vec<_> = graph.nodes().iter().map(|n| n.lifecycle()).collect();
    assert_eq!(
        lcs,
        [
            kops_tasks::Lifecycle::ExistsAndWarnIfChanges,
            kops_tasks::Lifecycle::Sync
        ]
    );
}
