//! Task-engine benchmarks: graph build (reference resolution, cycle check, topological
//! order), diff/plan of 1k / 10k / 100k tasks with 10 % changes (from a `HashMap` of found
//! objects, and from a `FoundSet`), level ordering, a planning pass through the executor,
//! and Terraform rendering of 10k resources.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use kops_benches::{boxed, synthetic};
use kops_tasks::terraform::{TerraformWriter, render_graph};
use kops_tasks::{
    Executor, ExecutorOptions, Found, FoundSet, ManualClock, Plan, TaskGraph, TaskKey,
};

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

fn graph_and_diff(c: &mut Criterion) {
    let mut group = c.benchmark_group("tasks");
    group.sample_size(10);
    for &n in sizes() {
        let (tasks, actual) = synthetic(n, 100);
        group.bench_with_input(BenchmarkId::new("build", n), &n, |b, _| {
            b.iter_batched(
                || boxed(&tasks),
                |t| black_box(TaskGraph::build(t).unwrap()),
                criterion::BatchSize::LargeInput,
            )
        });
        let graph = TaskGraph::build(boxed(&tasks)).unwrap();
        group.bench_with_input(BenchmarkId::new("diff", n), &n, |b, _| {
            b.iter(|| black_box(Plan::from_state(&graph, &actual).unwrap()))
        });
        // The same diff from a `FoundSet` (the actual state stored by node in an arena),
        // and what filling that set from the map costs (done once, as a backend would while
        // listing objects; not part of `diff_found`).
        group.bench_with_input(BenchmarkId::new("found_set", n), &n, |b, _| {
            b.iter(|| black_box(FoundSet::from_map(&graph, &actual).unwrap()))
        });
        // The same copy into the map `diff` takes, for comparison with `found_set`.
        group.bench_with_input(BenchmarkId::new("fill_map", n), &n, |b, _| {
            b.iter(|| {
                black_box(
                    actual
                        .iter()
                        .map(|(k, f)| (k.clone(), f.clone()))
                        .collect::<HashMap<TaskKey, Found>>(),
                )
            })
        });
        let found = FoundSet::from_map(&graph, &actual).unwrap();
        group.bench_with_input(BenchmarkId::new("diff_found", n), &n, |b, _| {
            b.iter(|| black_box(Plan::from_found(&found).unwrap()))
        });
        drop(found);
        group.bench_with_input(BenchmarkId::new("build_and_diff", n), &n, |b, _| {
            b.iter_batched(
                || boxed(&tasks),
                |t| {
                    let g = TaskGraph::build(t).unwrap();
                    black_box(Plan::from_state(&g, &actual).unwrap())
                },
                criterion::BatchSize::LargeInput,
            )
        });
        group.bench_with_input(BenchmarkId::new("levels", n), &n, |b, _| {
            b.iter(|| black_box(graph.levels()))
        });
    }
    group.finish();
}

fn executor_plan(c: &mut Criterion) {
    let mut group = c.benchmark_group("executor");
    group.sample_size(10);
    let n = big(10_000);
    let (tasks, _) = synthetic(n, 100);
    let graph = TaskGraph::build(boxed(&tasks)).unwrap();
    let clock = ManualClock::new();
    let exec = Executor::new(
        ExecutorOptions::default()
            .with_clock(Arc::new(clock.clone()))
            .with_concurrency(64),
    );
    group.bench_with_input(BenchmarkId::new("plan", n), &n, |b, _| {
        b.iter(|| black_box(clock.block_on(exec.plan(&graph, &())).unwrap().unwrap()))
    });
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

criterion_group!(benches, graph_and_diff, executor_plan, terraform);
criterion_main!(benches);
