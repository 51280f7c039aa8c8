//! Task-engine benchmarks: the production planning path (graph build, each task finding
//! its object in one listing per kind, diff) at 1k / 10k / 100k tasks with 10 % changes,
//! with a hand-written task (`plan/update`) and with the model's `ResourceTask`
//! (`plan/update-resource`), the parts of the first (graph build, the executor's planning pass), level ordering, and Terraform
//! rendering of 10k resources.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use kops_benches::{boxed, boxed_resources, plan, resource_tasks, runtime, synthetic};
use kops_tasks::terraform::{TerraformWriter, render_graph};
use kops_tasks::{Executor, ExecutorOptions, TaskGraph};

/// The allocator the `kops` binary uses (examples/kops-cli/main.rs), so that the figures
/// are of what it runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Graph sizes. Under `cargo test` (no `--bench` flag) only the smallest size runs, once,
/// so `cargo test --workspace --all-targets` stays fast.
fn sizes() -> &'static [usize] {
    if std::env::args().any(|a| a == "--bench") {
        &[1_000, 10_000, 100_000]
    } else {
        &[1_000]
    }
}

fn big(n: usize) -> usize {
    if std::env::args().any(|a| a == "--bench") {
        n
    } else {
        1_000
    }
}

fn planning(c: &mut Criterion) {
    let mut group = c.benchmark_group("plan");
    group.sample_size(10);
    let rt = runtime();
    for &n in sizes() {
        let (tasks, cloud) = synthetic(n, 100);
        // The cloud's one list call per kind is made here, outside the timing: what is
        // timed is finding each object in those listings, not fetching them.
        cloud.list_all();
        // The whole path: boxed tasks in, plan out (graph and plan dropped after timing).
        group.bench_with_input(BenchmarkId::new("update", n), &n, |b, _| {
            b.iter_batched(
                || boxed(&tasks),
                |t| rt.block_on(plan(t, &cloud)).unwrap(),
                BatchSize::LargeInput,
            )
        });
        // Its parts: the graph build alone, and the executor's pass over a built graph.
        group.bench_with_input(BenchmarkId::new("build", n), &n, |b, _| {
            b.iter_batched(
                || boxed(&tasks),
                |t| TaskGraph::build(t).unwrap(),
                BatchSize::LargeInput,
            )
        });
        let graph = TaskGraph::build(boxed(&tasks)).unwrap();
        let exec = Executor::new(ExecutorOptions::default());
        group.bench_with_input(BenchmarkId::new("executor", n), &n, |b, _| {
            b.iter_batched(
                || (),
                |()| rt.block_on(exec.plan(&graph, &cloud)).unwrap(),
                BatchSize::LargeInput,
            )
        });
        group.bench_with_input(BenchmarkId::new("levels", n), &n, |b, _| {
            b.iter(|| black_box(graph.levels()))
        });
        // The whole path again, with the model's own task type against a listing answered
        // as the AWS backend answers it.
        let (resources, listing) = resource_tasks(n, 100);
        group.bench_with_input(BenchmarkId::new("update-resource", n), &n, |b, _| {
            b.iter_batched(
                || boxed_resources(&resources),
                |t| rt.block_on(plan(t, &listing)).unwrap(),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

fn terraform(c: &mut Criterion) {
    let mut group = c.benchmark_group("terraform");
    group.sample_size(10);
    let n = big(10_000);
    let (tasks, _) = synthetic(n, 0);
    let graph = TaskGraph::build(boxed(&tasks)).unwrap();
    group.bench_with_input(BenchmarkId::new("render", n), &n, |b, _| {
        b.iter(|| {
            let mut w = TerraformWriter::new();
            render_graph(&graph, &mut w).unwrap();
            black_box(w.finish().unwrap())
        })
    });
    group.finish();
}

criterion_group!(benches, planning, terraform);
criterion_main!(benches);
