//! The render path at fleet scale: a cluster as `kops create cluster` writes it (one zone,
//! the mock account of kops-model's default channel), plus extra node groups up to `N`,
//! rendered as Terraform the way `kops update cluster --target terraform` renders it
//! (`UpdateCluster::new`, then `render_terraform`), `runs` times. Prints the median wall
//! time of the render (the model's build, the graph, `kubernetes.tf` and the data files),
//! the time of discovery (once; it generates the cluster's keys), the resource and file
//! counts, and the peak resident memory.
//!
//! `cargo run --release -p kops-benches --example render_profile -- 1000 5`
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Instant;

use kops_model::aws::{self, DiscoverOptions, UpdateCluster};
use kops_model::cloud_aws::AwsCloud as _;
use kops_model::statestore::MemoryStore;
use kops_model::{DnsType, NewClusterOptions, UpdateOptions, channel, new_cluster};

/// The allocator the `kops` binary uses, so that the figures are of what it runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const NAME: &str = "fleet.example.com";

/// The process's peak resident set (`VmHWM`), in MB.
fn peak_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let groups: usize = args.next().map_or(Ok(1000), |a| a.parse())?;
    let runs: usize = args.next().map_or(Ok(5), |a| a.parse())?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let cloud = channel::mock_aws(Default::default(), &channel::stable())?;
    let zones = rt.block_on(cloud.zones())?.into_iter().take(1);
    let state = "memfs://fleet";
    let options = NewClusterOptions::new(NAME, state)
        .with_zones(zones)
        .with_dns(DnsType::None);
    let (cluster, mut igs) = new_cluster(&options)?;
    let node = igs
        .iter()
        .find(|g| g.name().starts_with("nodes"))
        .cloned()
        .expect("create cluster writes a node group");
    let mut i = 0;
    while igs.len() < groups {
        let mut extra = node.clone();
        extra.metadata.name = Some(format!("extra-{i}"));
        igs.push(extra);
        i += 1;
    }
    let store = Arc::new(MemoryStore::new());
    let discover = DiscoverOptions::default().with_state_store(store, state);
    let started = Instant::now();
    let ctx = rt.block_on(aws::discover(&cloud, &cluster, &igs, &discover))?;
    let discovered = started.elapsed().as_secs_f64();
    let mut times = Vec::new();
    let mut counts = (0, 0);
    for _ in 0..runs {
        let ctx = ctx.clone();
        let started = Instant::now();
        let update = UpdateCluster::new(ctx, UpdateOptions::default())?;
        let out = rt.block_on(update.render_terraform())?;
        times.push(started.elapsed().as_secs_f64());
        let tf = out
            .files
            .get("kubernetes.tf")
            .map(|b| String::from_utf8_lossy(b));
        let resources = tf.map_or(0, |tf| tf.matches("\nresource \"").count());
        counts = (resources, out.files.len());
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{groups} groups: render median {:.3} s (min {:.3}, max {:.3}, {runs} runs); \
         discovery {discovered:.3} s; {} resources, {} files; peak {:.0} MB",
        times[times.len() / 2],
        times[0],
        times[times.len() - 1],
        counts.0,
        counts.1,
        peak_mb()
    );
    Ok(())
}
