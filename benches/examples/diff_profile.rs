//! A stand-alone driver for profiling the diff (`perf stat`, `perf record`, callgrind):
//! builds the synthetic workload once, then plans it `iters` times and prints each time.
//!
//! `cargo run --release -p kops-benches --example diff_profile -- 100000 20`
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Instant;

use kops_benches::{boxed, synthetic};
use kops_tasks::{Found, Plan, TaskGraph, TaskKey};

/// One measured unit, as in the criterion bench: plan, then drop the plan. Not inlined so
/// `callgrind --toggle-collect=diff_profile::plan_and_drop` can isolate it.
#[inline(never)]
fn plan_and_drop(graph: &TaskGraph<()>, actual: &HashMap<TaskKey, Found>) {
    black_box(Plan::from_state(graph, actual).unwrap());
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(100_000, |s| s.parse().unwrap());
    let iters: usize = args.next().map_or(10, |s| s.parse().unwrap());
    let (tasks, actual) = synthetic(n, 100);
    let graph = TaskGraph::build(boxed(&tasks)).unwrap();
    let mut wall = Vec::with_capacity(iters);
    let mut cpu = Vec::with_capacity(iters);
    for _ in 0..iters {
        let (t, c) = (Instant::now(), thread_cpu_ns());
        plan_and_drop(&graph, &actual);
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
    println!("n={n} iters={iters} wall: {}", stats(&mut wall));
    println!("n={n} iters={iters} main-thread cpu: {}", stats(&mut cpu));
}

/// CPU time of the calling thread in ns (Linux schedstat; 0 elsewhere): unlike wall time
/// it excludes time spent waiting for a core on a loaded machine.
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}
