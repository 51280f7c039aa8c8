//! A stand-alone driver for profiling the production planning path (callgrind, `perf`):
//! builds the synthetic workload once and lists its cloud, then plans it `iters` times as
//! `kops update cluster` does (graph build, then the executor's planning pass) and prints
//! the wall and CPU time of the build, of the executor's pass, and of both.
//!
//! `cargo run --release -p kops-benches --example plan_profile -- 100000 20 [resource]`:
//! with `resource`, the tasks are the model's `ResourceTask`s against a listing answered
//! as the AWS backend answers it (`kops_benches::resource_tasks`); without, the
//! hand-written synthetic task (`kops_benches::synthetic`).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use kops_benches::{boxed, boxed_resources, resource_tasks, runtime, synthetic};
use kops_tasks::{Executor, ExecutorOptions, Plan, Task, TaskGraph};

/// The allocator the `kops` binary uses (examples/kops-cli/main.rs), so that the figures
/// are of what it runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// One measured unit, as in the criterion bench `plan/update`: graph build and plan,
/// without dropping either. Not inlined, so that
/// `callgrind --toggle-collect=plan_profile::plan_once` can isolate it.
#[inline(never)]
fn plan_once<C: Sync>(
    rt: &tokio::runtime::Runtime,
    tasks: Vec<Box<dyn Task<C>>>,
    cloud: &C,
    times: &mut [Vec<f64>; 3],
) -> (TaskGraph<C>, Plan) {
    let t = (Instant::now(), thread_cpu_ns());
    let graph = TaskGraph::build(tasks).unwrap();
    let built = (Instant::now(), thread_cpu_ns());
    let plan = rt
        .block_on(Executor::new(options()).plan(&graph, cloud))
        .unwrap();
    let planned = (Instant::now(), thread_cpu_ns());
    let ms = |a: (Instant, u64), b: (Instant, u64)| {
        (
            (b.0 - a.0).as_secs_f64() * 1e3,
            b.1.saturating_sub(a.1) as f64 / 1e6,
        )
    };
    let (build, executor, all) = (ms(t, built), ms(built, planned), ms(t, planned));
    println!(
        "build {:.1} ms (cpu {:.1}), executor {:.1} ms (cpu {:.1}), both {:.1} ms (cpu {:.1})",
        build.0, build.1, executor.0, executor.1, all.0, all.1
    );
    for (v, x) in times.iter_mut().zip([build.0, executor.0, all.0]) {
        v.push(x);
    }
    (graph, plan)
}

/// The executor's default options, with `PLAN_THREADS` threads when that is set.
fn options() -> ExecutorOptions {
    let opts = ExecutorOptions::default();
    match std::env::var("PLAN_THREADS")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        Some(n) => opts.with_plan_threads(n),
        None => opts,
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(100_000, |s| s.parse().unwrap());
    let iters: usize = args.next().map_or(10, |s| s.parse().unwrap());
    let workload = args.next().unwrap_or_default();
    let rt = runtime();
    let mut times = [Vec::new(), Vec::new(), Vec::new()];
    if workload == "resource" {
        let (tasks, listing) = resource_tasks(n, 100);
        for _ in 0..iters {
            let input = boxed_resources(&tasks);
            drop(plan_once(&rt, input, &listing, &mut times));
        }
    } else {
        let (tasks, cloud) = synthetic(n, 100);
        cloud.list_all();
        for _ in 0..iters {
            let input = boxed(&tasks);
            drop(plan_once(&rt, input, &cloud, &mut times));
        }
    }
    for (what, v) in ["build", "executor", "both"].iter().zip(&mut times) {
        v.sort_by(f64::total_cmp);
        if let (Some(min), Some(med), Some(max)) = (v.first(), v.get(v.len() / 2), v.last()) {
            println!(
                "n={n} iters={iters} {what} wall: min {min:.2} median {med:.2} max {max:.2} ms"
            );
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
