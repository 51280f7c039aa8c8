//! A stand-alone driver for profiling the production planning path (callgrind, `perf`):
//! builds the synthetic workload once, then plans it `iters` times as `kops update
//! cluster` does (graph build, then the executor's planning pass against a fresh cloud)
//! and prints the wall and CPU time of each pass.
//!
//! `cargo run --release -p kops-benches --example plan_profile -- 100000 20`
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use kops_benches::{Cloud, boxed, plan, runtime, synthetic};
use kops_tasks::{Plan, Task, TaskGraph};

/// One measured unit, as in the criterion bench `plan/update`: graph build and plan,
/// without dropping either. Not inlined, so that
/// `callgrind --toggle-collect=plan_profile::plan_once` can isolate it.
#[inline(never)]
fn plan_once(
    rt: &tokio::runtime::Runtime,
    tasks: Vec<Box<dyn Task<Cloud>>>,
    cloud: &Cloud,
) -> (TaskGraph<Cloud>, Plan) {
    rt.block_on(plan(tasks, cloud)).unwrap()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(100_000, |s| s.parse().unwrap());
    let iters: usize = args.next().map_or(10, |s| s.parse().unwrap());
    let (tasks, cloud) = synthetic(n, 100);
    let rt = runtime();
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for _ in 0..iters {
        let (input, fresh) = (boxed(&tasks), cloud.fresh());
        let (t, c) = (Instant::now(), thread_cpu_ns());
        let out = plan_once(&rt, input, &fresh);
        cpu.push((thread_cpu_ns() - c) as f64 / 1e6);
        wall.push(t.elapsed().as_secs_f64() * 1e3);
        drop((out, fresh));
    }
    for (what, v) in [("wall", &mut wall), ("main-thread cpu", &mut cpu)] {
        v.sort_by(f64::total_cmp);
        if let (Some(min), Some(med), Some(max)) = (v.first(), v.get(v.len() / 2), v.last()) {
            println!("n={n} iters={iters} {what}: min {min:.2} median {med:.2} max {max:.2} ms");
        }
    }
}

/// CPU time of the calling thread in ns (Linux schedstat; 0 elsewhere): unlike wall time
/// it excludes time spent waiting for a core on a loaded machine.
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}
