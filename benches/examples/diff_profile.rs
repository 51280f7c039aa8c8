//! A stand-alone driver for profiling the diff (`perf stat`, `perf record`, callgrind):
//! builds the synthetic workload once, then plans it `iters` times and prints each time.
//!
//! `cargo run --release -p kops-benches --example diff_profile -- 100000 20 [map|found]`
//!
//! `map` (the default) plans with `Plan::from_state` from the `HashMap<TaskKey, Found>`;
//! `found` copies the same objects into a `FoundSet` once (timed separately) and plans
//! with `Plan::from_found`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Instant;

use kops_benches::{boxed, synthetic};
use kops_tasks::{Found, FoundSet, Plan, TaskGraph, TaskKey};

/// One measured unit, as in the criterion bench: plan, then drop the plan. Not inlined so
/// `callgrind --toggle-collect=diff_profile::plan_and_drop` can isolate it.
#[inline(never)]
fn plan_and_drop(graph: &TaskGraph<()>, actual: &HashMap<TaskKey, Found>) -> f64 {
    let plan = black_box(Plan::from_state(graph, actual).unwrap());
    let t = Instant::now();
    drop(plan);
    t.elapsed().as_secs_f64() * 1e3
}

/// The same for `Plan::from_found` (`--toggle-collect=diff_profile::plan_found_and_drop`).
#[inline(never)]
fn plan_found_and_drop(found: &FoundSet<'_, ()>) -> f64 {
    let plan = black_box(Plan::from_found(found).unwrap());
    let t = Instant::now();
    drop(plan);
    t.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(100_000, |s| s.parse().unwrap());
    let iters: usize = args.next().map_or(10, |s| s.parse().unwrap());
    let mode = args.next().unwrap_or_else(|| "map".into());
    let (tasks, actual) = synthetic(n, 100);
    let boxed_tasks = boxed(&tasks);
    let t = Instant::now();
    let graph = TaskGraph::build(boxed_tasks).unwrap();
    println!(
        "n={n} TaskGraph::build: {:.2} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    compare_fills(n, &graph, &actual);
    let found = mode.starts_with("found").then(|| {
        let t = Instant::now();
        let set = if mode == "found-sorted" {
            let mut set = FoundSet::new(&graph);
            for node in graph.nodes() {
                set.insert(node.key().clone(), actual[node.key()].clone())
                    .unwrap();
            }
            set
        } else {
            FoundSet::from_map(&graph, &actual).unwrap()
        };
        println!(
            "n={n} FoundSet::from_map: {:.2} ms",
            t.elapsed().as_secs_f64() * 1e3
        );
        set
    });
    let mut wall = Vec::with_capacity(iters);
    let mut cpu = Vec::with_capacity(iters);
    let mut drops = Vec::with_capacity(iters);
    let proc0 = process_cpu_ticks();
    let t0 = Instant::now();
    for _ in 0..iters {
        let (t, c) = (Instant::now(), thread_cpu_ns());
        drops.push(match &found {
            Some(set) => plan_found_and_drop(set),
            None => plan_and_drop(&graph, &actual),
        });
        wall.push(t.elapsed().as_secs_f64() * 1e3);
        cpu.push((thread_cpu_ns() - c) as f64 / 1e6);
    }
    let stats = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        format!(
            "min {:.2} median {:.2} max {:.2} ms",
            v[0],
            v[v.len() / 2],
            v[v.len() - 1]
        )
    };
    let total_wall = t0.elapsed().as_secs_f64() * 1e3;
    let total_cpu = (process_cpu_ticks() - proc0) as f64 * 10.0;
    println!("n={n} mode={mode} iters={iters} wall: {}", stats(&mut wall));
    println!(
        "n={n} mode={mode} iters={iters} main-thread cpu: {}",
        stats(&mut cpu)
    );
    println!(
        "n={n} mode={mode} iters={iters} of which dropping the plan: {}",
        stats(&mut drops)
    );
    println!(
        "n={n} mode={mode} iters={iters} all threads: cpu {:.1} ms per iteration (10 ms ticks), wall {:.1} ms per iteration",
        total_cpu / iters as f64,
        total_wall / iters as f64
    );
}

/// Prints what filling each kind of actual state costs for the same objects: the
/// `HashMap` that `Plan::from_state` takes and the `FoundSet` that `Plan::from_found`
/// takes, each from objects already owned (as a backend has them after listing), and each
/// dropped after.
fn compare_fills(n: usize, graph: &TaskGraph<()>, actual: &HashMap<TaskKey, Found>) {
    let owned = || -> Vec<(TaskKey, Found)> {
        actual.iter().map(|(k, f)| (k.clone(), f.clone())).collect()
    };
    let timed = |what: &str, f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        println!("n={n} {what}: {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
    };
    let mut objects = Some(owned());
    let mut map: HashMap<TaskKey, Found> = HashMap::new();
    timed("HashMap: insert owned objects", &mut || {
        map = objects.take().unwrap_or_default().into_iter().collect();
    });
    timed("HashMap: drop", &mut || drop(std::mem::take(&mut map)));
    let mut objects = Some(owned());
    let mut set = Some(FoundSet::new(graph));
    timed("FoundSet: insert owned objects", &mut || {
        if let Some(set) = set.as_mut() {
            for (k, f) in objects.take().unwrap_or_default() {
                set.insert(k, f).unwrap();
            }
        }
    });
    timed("FoundSet: drop", &mut || drop(set.take()));
    // As a backend fills them: each object made (here: copied) right before it is stored,
    // so it is still in cache.
    let mut map: HashMap<TaskKey, Found> = HashMap::new();
    timed("HashMap: copy and insert each object", &mut || {
        for (k, f) in actual {
            map.insert(k.clone(), f.clone());
        }
    });
    drop(map);
    let mut set = FoundSet::new(graph);
    timed("FoundSet: copy and insert each object", &mut || {
        for (k, f) in actual {
            set.insert(k.clone(), f.clone()).unwrap();
        }
    });
}

/// User + system CPU time of the whole process (all threads, including finished ones) in
/// clock ticks (1/100 s) from `/proc/self/stat`; 0 elsewhere.
fn process_cpu_ticks() -> u64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest = s.rsplit_once(')')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
        })
        .unwrap_or(0)
}

/// CPU time of the calling thread in ns (Linux schedstat; 0 elsewhere): unlike wall time
/// it excludes time spent waiting for a core on a loaded machine.
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}
