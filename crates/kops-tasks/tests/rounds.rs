//! Planning rounds: the lookups tasks answer without waiting (`Task::find_now`), asked
//! of many ready tasks at once and on several threads, give the plan `find` gives.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use kops_tasks::{
    Action, Change, Context, Error, Executor, ExecutorOptions, Fields, Found, ManualClock, Outputs,
    Report, Result, Task, TaskGraph, TaskKey, Value, async_trait,
};

/// How a task answers `find_now`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Now {
    /// It does not: only `find` tells.
    Never,
    /// With what `find` would give.
    Answer,
    /// With a throttling error.
    Throttled,
    /// With a permanent error.
    Broken,
}

/// Objects by key: (ID, fields with references given as IDs); and who asked.
#[derive(Debug, Default)]
struct Cloud {
    objects: BTreeMap<TaskKey, (String, Fields)>,
    finds: AtomicUsize,
    answered_now: AtomicUsize,
    threads: Mutex<HashSet<ThreadId>>,
}

#[derive(Debug)]
struct NowTask {
    key: TaskKey,
    fields: Fields,
    now: Now,
}

impl NowTask {
    /// What `find` and `find_now` give: the object with its references compared as the
    /// IDs the run resolved.
    fn look(&self, cx: &Context<'_, Cloud>) -> Result<Option<Found>> {
        let Some((id, stored)) = cx.cloud().objects.get(&self.key) else {
            return Ok(None);
        };
        let mut fields = Fields::new();
        for (k, v) in stored.iter() {
            fields.insert(k.to_owned(), v.clone());
        }
        // A reference compares by the ID the run found for its target.
        for (k, v) in self.fields.iter() {
            if let Value::Ref(r) = v
                && stored.get(k) == Some(&Value::string(cx.resolve(r)?))
            {
                fields.insert(k.to_owned(), v.clone());
            }
        }
        Ok(Some(Found::new(fields, Outputs::id(id.clone()))))
    }
}

#[async_trait]
impl Task<Cloud> for NowTask {
    fn key(&self) -> &TaskKey {
        &self.key
    }

    fn fields(&self) -> Fields {
        self.fields.clone()
    }

    async fn find(&self, cx: &Context<'_, Cloud>) -> Result<Option<Found>> {
        cx.cloud().finds.fetch_add(1, Ordering::SeqCst);
        self.look(cx)
    }

    fn find_now(&self, cx: &Context<'_, Cloud>) -> Option<Result<Option<Found>>> {
        let cloud = cx.cloud();
        cloud
            .threads
            .lock()
            .unwrap()
            .insert(std::thread::current().id());
        match self.now {
            Now::Never => None,
            Now::Throttled => Some(Err(Error::throttled(format!("{}: slow down", self.key)))),
            Now::Broken => Some(Err(Error::cloud(format!("{}: broken", self.key)))),
            Now::Answer => {
                cloud.answered_now.fetch_add(1, Ordering::SeqCst);
                Some(self.look(cx))
            }
        }
    }

    async fn apply(&self, _cx: &Context<'_, Cloud>, _change: &Change<'_>) -> Result<Outputs> {
        Err(Error::cloud("plans only"))
    }
}

/// `roots` networks and `children` subnets, each subnet of a network picked by a fixed
/// sequence; the cloud holds all of them, every seventh subnet with another size and
/// every eleventh with another network than the task names. `now(i)` says how task `i`
/// (networks first) answers `find_now`.
fn workload(
    roots: usize,
    children: usize,
    now: impl Fn(usize) -> Now,
) -> (Vec<Box<dyn Task<Cloud>>>, Cloud) {
    let mut cloud = Cloud::default();
    let mut tasks: Vec<Box<dyn Task<Cloud>>> = Vec::new();
    let mut seed = 0x2545_f491_u64;
    for r in 0..roots {
        let key = TaskKey::new("Network", format!("net-{r:05}"));
        let fields = Fields::new().with("cidr", format!("10.{}.0.0/16", r % 256));
        cloud
            .objects
            .insert(key.clone(), (format!("vpc-{r}"), fields.clone()));
        tasks.push(Box::new(NowTask {
            key,
            fields,
            now: now(r),
        }));
    }
    for c in 0..children {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let parent = (seed >> 33) as usize % roots;
        let key = TaskKey::new("Subnet", format!("subnet-{c:05}"));
        let fields = Fields::new().with("size", (c % 50) as i64).with(
            "network",
            &TaskKey::new("Network", format!("net-{parent:05}")),
        );
        let size = (c % 50) as i64 + i64::from(c % 7 == 0);
        let network = if c % 11 == 0 { parent + 1 } else { parent };
        let stored = Fields::new()
            .with("size", size)
            .with("network", format!("vpc-{network}"));
        cloud
            .objects
            .insert(key.clone(), (format!("subnet-{c}"), stored));
        tasks.push(Box::new(NowTask {
            key,
            fields,
            now: now(roots + c),
        }));
    }
    (tasks, cloud)
}

fn executor(threads: usize) -> (Executor, ManualClock) {
    let clock = ManualClock::new();
    let opts = ExecutorOptions::default()
        .with_clock(Arc::new(clock.clone()))
        .with_plan_threads(threads);
    (Executor::new(opts), clock)
}

/// Each item of the plan as (key, action, changed fields).
fn plan_of(
    roots: usize,
    children: usize,
    threads: usize,
    now: impl Fn(usize) -> Now,
) -> (Vec<(TaskKey, Action, Vec<String>)>, Cloud) {
    let (tasks, cloud) = workload(roots, children, now);
    plan_tasks(tasks, cloud, threads)
}

/// Plans `tasks` against `cloud` on `threads` threads: each item as (key, action, changed
/// fields).
fn plan_tasks(
    tasks: Vec<Box<dyn Task<Cloud>>>,
    cloud: Cloud,
    threads: usize,
) -> (Vec<(TaskKey, Action, Vec<String>)>, Cloud) {
    let graph = TaskGraph::build(tasks).unwrap();
    let (exec, clock) = executor(threads);
    let plan = clock.block_on(exec.plan(&graph, &cloud)).unwrap().unwrap();
    let items = plan
        .items
        .iter()
        .map(|i| {
            let fields = i.changes.iter().map(|c| c.field.clone()).collect();
            (i.key.clone(), i.action, fields)
        })
        .collect();
    (items, cloud)
}

/// Runs a plan of `tasks` on `threads` threads, for its report (failures, skipped tasks).
fn run_plan(tasks: Vec<Box<dyn Task<Cloud>>>, cloud: &Cloud, threads: usize) -> Report {
    let graph = TaskGraph::build(tasks).unwrap();
    let (exec, clock) = executor(threads);
    clock
        .block_on(async {
            let results = kops_tasks::Results::new();
            exec.run(&graph, cloud, kops_tasks::Mode::Plan, &results)
                .await
        })
        .unwrap()
}

#[test]
fn answers_given_now_on_any_number_of_threads_plan_as_find_does() {
    let (through_find, cloud) = plan_of(2000, 3000, 1, |_| Now::Never);
    assert_eq!(cloud.finds.load(Ordering::SeqCst), 5000);
    let updates = through_find
        .iter()
        .filter(|(_, a, _)| *a == Action::Update)
        .count();
    // Every seventh subnet's size and every eleventh's network differ (each 77th both).
    assert_eq!(
        updates,
        3000usize.div_ceil(7) + 3000usize.div_ceil(11) - 3000usize.div_ceil(77)
    );
    assert!(
        through_find
            .iter()
            .any(|(_, _, f)| f == &["network".to_owned()]),
        "a reference compares by the ID found for its target"
    );
    for threads in [1, 2, 4] {
        let (now, cloud) = plan_of(2000, 3000, threads, |_| Now::Answer);
        assert_eq!(now, through_find, "{threads} thread(s)");
        assert_eq!(cloud.finds.load(Ordering::SeqCst), 0, "{threads} thread(s)");
        assert_eq!(cloud.answered_now.load(Ordering::SeqCst), 5000);
        // 2000 networks are ready at once: 512 tasks or more per thread. (Each round
        // starts its own threads, so the count of threads is not that of one round.)
        let used = cloud.threads.lock().unwrap().len();
        if threads == 1 {
            assert_eq!(used, 1, "only the run's own thread answers");
        } else {
            assert!(used >= 2, "{threads} thread(s) allowed, {used} answered");
        }
    }
}

#[test]
fn tasks_left_unanswered_are_found_and_their_dependents_see_their_outputs() {
    let (through_find, _) = plan_of(600, 900, 1, |_| Now::Never);
    // Every third network and every third subnet answers only through `find`.
    let mixed = |i: usize| {
        if i.is_multiple_of(3) {
            Now::Never
        } else {
            Now::Answer
        }
    };
    let (plan, cloud) = plan_of(600, 900, 2, mixed);
    assert_eq!(plan, through_find);
    assert_eq!(cloud.finds.load(Ordering::SeqCst), 500);
    assert_eq!(cloud.answered_now.load(Ordering::SeqCst), 1000);
}

#[test]
fn a_retryable_failure_given_now_is_retried_through_find() {
    let (through_find, _) = plan_of(700, 700, 1, |_| Now::Never);
    let (plan, cloud) = plan_of(700, 700, 2, |i| {
        if i % 100 == 5 {
            Now::Throttled
        } else {
            Now::Answer
        }
    });
    assert_eq!(plan, through_find);
    assert_eq!(cloud.finds.load(Ordering::SeqCst), 14);
}

#[test]
fn a_permanent_failure_given_now_fails_the_task_and_skips_its_dependents() {
    let (tasks, cloud) = workload(800, 800, |i| if i == 3 { Now::Broken } else { Now::Answer });
    let report = run_plan(tasks, &cloud, 2);
    let broken = TaskKey::new("Network", "net-00003");
    assert_eq!(report.failed.len(), 1);
    assert_eq!(report.failed[0].0, broken);
    assert!(report.failed[0].1.to_string().contains("broken"));
    assert!(!report.skipped.is_empty());
    assert!(report.skipped.iter().all(|(_, by)| *by == broken));
    assert_eq!(report.plan.items.len() + report.skipped.len(), 1599);
    assert_eq!(cloud.finds.load(Ordering::SeqCst), 0);
}

/// `n` items, each after the first under a parent picked among the items before it (so
/// the graph is deep: chains of items that lie one after another); the cloud holds all of
/// them, every thirteenth under another parent than its task names. `now(i)` says how
/// item `i` answers `find_now`.
fn tree(n: usize, now: impl Fn(usize) -> Now) -> (Vec<Box<dyn Task<Cloud>>>, Cloud, Vec<usize>) {
    let mut cloud = Cloud::default();
    let mut tasks: Vec<Box<dyn Task<Cloud>>> = Vec::new();
    let mut parents = Vec::with_capacity(n);
    let mut seed = 0x9e37_79b9_u64;
    let key = |i: usize| TaskKey::new("Item", format!("item-{i:05}"));
    for i in 0..n {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        // Mostly a recent item, so that chains run through a round.
        let parent = i.checked_sub(1 + (seed >> 33) as usize % 8.min(i.max(1)));
        parents.push(parent.unwrap_or(usize::MAX));
        let mut fields = Fields::new().with("size", (i % 40) as i64);
        let mut stored = fields.clone();
        if let Some(p) = parent {
            fields = fields.with("parent", &key(p));
            let named = if i % 13 == 0 { p + 1 } else { p };
            stored = stored.with("parent", format!("id-{named}"));
        }
        cloud.objects.insert(key(i), (format!("id-{i}"), stored));
        tasks.push(Box::new(NowTask {
            key: key(i),
            fields,
            now: now(i),
        }));
    }
    (tasks, cloud, parents)
}

fn plan_tree(
    n: usize,
    threads: usize,
    now: impl Fn(usize) -> Now,
) -> (Vec<(TaskKey, Action, Vec<String>)>, Cloud) {
    let (tasks, cloud, _) = tree(n, now);
    plan_tasks(tasks, cloud, threads)
}

#[test]
fn chains_of_tasks_answered_in_one_round_resolve_to_the_ids_found_before_them() {
    let n = 6000;
    let (through_find, cloud) = plan_tree(n, 1, |_| Now::Never);
    assert_eq!(cloud.finds.load(Ordering::SeqCst), n);
    let changed: Vec<_> = through_find
        .iter()
        .filter(|(_, a, _)| *a == Action::Update)
        .collect();
    // Every thirteenth item but the first names another parent: nothing else differs.
    assert_eq!(changed.len(), (n - 1) / 13);
    assert!(changed.iter().all(|(_, _, f)| f == &["parent".to_owned()]));
    for threads in [1, 2, 4] {
        let (now, cloud) = plan_tree(n, threads, |_| Now::Answer);
        assert_eq!(now, through_find, "{threads} thread(s)");
        assert_eq!(cloud.finds.load(Ordering::SeqCst), 0, "{threads} thread(s)");
        assert_eq!(cloud.answered_now.load(Ordering::SeqCst), n);
    }
    // Items answered only through `find` in the middle of the chains: the items after
    // them wait for them, and still see their IDs.
    let mixed = |i: usize| if i % 5 == 2 { Now::Never } else { Now::Answer };
    let throttled = |i: usize| {
        if i % 97 == 3 {
            Now::Throttled
        } else {
            Now::Answer
        }
    };
    for threads in [1, 2] {
        let (plan, cloud) = plan_tree(n, threads, mixed);
        assert_eq!(
            plan, through_find,
            "{threads} thread(s), some never answered"
        );
        assert_eq!(cloud.finds.load(Ordering::SeqCst), n / 5);
        let (plan, cloud) = plan_tree(n, threads, throttled);
        assert_eq!(plan, through_find, "{threads} thread(s), some throttled");
        assert_eq!(cloud.finds.load(Ordering::SeqCst), n.div_ceil(97));
    }
}

#[test]
fn a_failure_in_a_chain_skips_exactly_the_items_under_it() {
    let n = 3000;
    let (_, _, parents) = tree(n, |_| Now::Answer);
    // The items under item `b`: it is their parent, or their parent's, ...
    let under = |b: usize| {
        let mut under = vec![false; n];
        for i in b + 1..n {
            let p = parents[i];
            under[i] = p == b || (p != usize::MAX && under[p]);
        }
        under.iter().filter(|&&u| u).count()
    };
    // An item with some items under it, not most.
    let broken = (30..n)
        .find(|&b| (20..n / 2).contains(&under(b)))
        .expect("the tree has such an item");
    let expected = under(broken);
    for threads in [1, 2] {
        let (tasks, cloud, _) = tree(n, |i| {
            if i == broken {
                Now::Broken
            } else {
                Now::Answer
            }
        });
        let report = run_plan(tasks, &cloud, threads);
        let broken_key = TaskKey::new("Item", format!("item-{broken:05}"));
        assert_eq!(report.failed.len(), 1);
        assert_eq!(report.failed[0].0, broken_key);
        assert_eq!(report.skipped.len(), expected, "{threads} thread(s)");
        assert!(report.skipped.iter().all(|(_, by)| *by == broken_key));
        assert_eq!(report.plan.items.len() + expected, n - 1);
    }
}

/// Plans `tasks` on `threads` threads into `results`, for the plan's items.
fn plan_into(
    tasks: Vec<Box<dyn Task<Cloud>>>,
    cloud: &Cloud,
    threads: usize,
    results: &kops_tasks::Results,
) -> Vec<(TaskKey, Action, Vec<String>)> {
    let graph = TaskGraph::build(tasks).unwrap();
    let (exec, clock) = executor(threads);
    let report = clock
        .block_on(exec.run(&graph, cloud, kops_tasks::Mode::Plan, results))
        .unwrap();
    report
        .plan
        .items
        .iter()
        .map(|i| {
            let fields = i.changes.iter().map(|c| c.field.clone()).collect();
            (i.key.clone(), i.action, fields)
        })
        .collect()
}

#[test]
fn outputs_found_in_rounds_are_kept_whatever_the_results_held_before() {
    let (through_find, _) = plan_of(300, 500, 1, |_| Now::Never);
    let net = TaskKey::new("Network", "net-00007");
    let subnet = TaskKey::new("Subnet", "subnet-00042");
    for threads in [1, 2] {
        // A fresh map keeps the rounds' buffers as they are.
        let results = kops_tasks::Results::new();
        let (tasks, cloud) = workload(300, 500, |_| Now::Answer);
        assert_eq!(plan_into(tasks, &cloud, threads, &results), through_find);
        assert_eq!(results.get(&net, "id").as_deref(), Some("vpc-7"));
        assert_eq!(results.get(&subnet, "id").as_deref(), Some("subnet-42"));
        // A second run on the same map (the first run's outputs move to its keys) and a
        // map given outputs by key beforehand both copy each node's outputs instead.
        let (tasks, cloud) = workload(300, 500, |_| Now::Answer);
        assert_eq!(plan_into(tasks, &cloud, threads, &results), through_find);
        assert_eq!(results.get(&subnet, "id").as_deref(), Some("subnet-42"));
        let seeded = kops_tasks::Results::new();
        seeded.insert(TaskKey::new("Elsewhere", "x"), Outputs::id("elsewhere-1"));
        let (tasks, cloud) = workload(300, 500, |_| Now::Answer);
        assert_eq!(plan_into(tasks, &cloud, threads, &seeded), through_find);
        assert_eq!(seeded.get(&net, "id").as_deref(), Some("vpc-7"));
        assert_eq!(
            seeded.get(&TaskKey::new("Elsewhere", "x"), "id").as_deref(),
            Some("elsewhere-1")
        );
    }
}
