//! Chaos harness: applies and deletes clusters on the mock cloud under injected faults
//! and counts what went wrong.
//!
//! ```text
//! cargo run --release -p kops-examples --example chaos -- --seed S --runs N \
//!     [--throttle 0.3] [--delayed-visibility 0.2] [--lost-responses 0.1] [--crash 0.2]
//! ```
//!
//! Each run makes a fresh mock cloud and state store, then for a public-topology and a
//! private-topology cluster: plans and applies under [`kops_mock::ChaosCloud`] faults
//! (throttled calls, lost responses after the effect, creates that stay invisible to
//! listings for a few calls and deletes that linger, half-done creates, and in a
//! fraction of runs a crash at a random mutation, after which the next attempt starts
//! from the cloud and the state store only, taking over the dead run's expired lock)
//! until a fault-free plan is empty; then deletes it the same way. The kops-rs side runs
//! as a real caller would: [`kops_cloud_aws::Idempotent`] in front of the cloud, the
//! executor's retries, the state-store lock.
//!
//! Counted per run and summed:
//! - **duplicates**: objects the clusters own beyond one per kind and name (after the
//!   applies);
//! - **leaks**: objects left in the cloud after the deletes that were not there before
//!   (terminated instances aside, which AWS lists for a while);
//! - **unconverged**: clusters whose plan was not empty after the attempts allowed, or
//!   whose delete left something.
//!
//! The last line is exactly `N runs, D duplicates, L leaks, F unconverged`. The exit code
//! is 0 when all three are 0.

use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use anyhow::{Context as _, bail};
use kops_cloud_aws::Idempotent;
use kops_mock::{ChaosCloud, ChaosPlan, ClientTokens};
use kops_model::aws::cloud::{AwsCloud, ListQuery, Resource, ResourceType};
use kops_model::aws::delete::{DeleteOptions, delete_cluster, find_cluster_resources, is_owned};
use kops_model::aws::{ApplyOptions, DiscoverOptions, UpdateCluster, UpdateOptions, discover};
use kops_model::{DnsType, NewClusterOptions, Topology, new_cluster};
use kops_statestore::{Clock, LockRequest, MemoryStore, Registry, Store};
use kops_tasks::{ExecutorOptions, ManualClock};

const FIXTURE: &str = "aws:\n  region: us-test-1\n  zones: [us-test-1a, us-test-1b]\n  route53:\n    hostedZones:\n    - {id: /hostedzone/ZCHAOS, name: example.com., private: false}\n  ec2:\n    images:\n    - {imageId: ami-00000001, name: chaos, ownerId: '1', rootDeviceName: /dev/xvda}\n";
const STORE: &str = "memfs://chaos-state";
/// Attempts allowed to converge one cluster (and to delete it).
const ATTEMPTS: u32 = 12;
/// The lease of the harness' locks; a crashed attempt's lock is taken over after it.
const LEASE: Duration = Duration::from_secs(60);

/// The command line.
#[derive(Debug, Clone)]
pub struct Args {
    /// `--seed`.
    pub seed: u64,
    /// `--runs`.
    pub runs: u64,
    /// `--throttle`: fraction of calls throttled.
    pub throttle: f64,
    /// `--delayed-visibility`: fraction of creates hidden (and deletes lingering).
    pub visibility: f64,
    /// `--lost-responses`: fraction of mutations whose answer is lost.
    pub lost: f64,
    /// `--crash`: fraction of runs that crash at a random mutation.
    pub crash: f64,
    /// `--verbose`.
    pub verbose: bool,
}

/// Parses the flags (without the program name).
pub fn parse_args(args: impl IntoIterator<Item = String>) -> anyhow::Result<Args> {
    let mut a = Args {
        seed: 1,
        runs: 10,
        throttle: 0.3,
        visibility: 0.2,
        lost: 0.1,
        crash: 0.2,
        verbose: false,
    };
    let mut it = args.into_iter();
    while let Some(flag) = it.next() {
        if flag == "--verbose" || flag == "-v" {
            a.verbose = true;
            continue;
        }
        let value = it
            .next()
            .with_context(|| format!("{flag}: needs a value"))?;
        let frac = |v: &str| -> anyhow::Result<f64> {
            let f: f64 = v
                .parse()
                .with_context(|| format!("{flag} {v}: not a number"))?;
            if !(0.0..=1.0).contains(&f) {
                bail!("{flag} {v}: must be between 0 and 1");
            }
            Ok(f)
        };
        match flag.as_str() {
            "--seed" => a.seed = value.parse().with_context(|| format!("--seed {value}"))?,
            "--runs" => a.runs = value.parse().with_context(|| format!("--runs {value}"))?,
            "--throttle" => a.throttle = frac(&value)?,
            "--delayed-visibility" => a.visibility = frac(&value)?,
            "--lost-responses" => a.lost = frac(&value)?,
            "--crash" => a.crash = frac(&value)?,
            other => bail!(
                "unknown flag {other} (known: --seed, --runs, --throttle, --delayed-visibility, --lost-responses, --crash, --verbose)"
            ),
        }
    }
    Ok(a)
}

/// The wall clock plus an offset the harness moves forward to let leases expire.
#[derive(Debug, Default)]
struct SkewClock(AtomicU64);

impl Clock for SkewClock {
    fn now(&self) -> SystemTime {
        SystemTime::now() + Duration::from_secs(self.0.load(Ordering::SeqCst))
    }
}

impl SkewClock {
    fn advance(&self, d: Duration) {
        self.0.fetch_add(d.as_secs(), Ordering::SeqCst);
    }
}

fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn unit(x: u64) -> f64 {
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// What the runs counted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Objects owned twice under one kind and name.
    pub duplicates: u64,
    /// Objects left after the deletes.
    pub leaks: u64,
    /// Clusters not converged, or not deleted.
    pub unconverged: u64,
    /// Crashes injected.
    pub crashes: u64,
    /// Faults injected in all (throttles, lost answers, hidden and lingering objects,
    /// half-done creates).
    pub faults: u64,
}

fn executor() -> ExecutorOptions {
    // Instant retries: the faults are in calls, not in time.
    ExecutorOptions::default()
        .with_backoff(Duration::ZERO, Duration::ZERO)
        .with_jitter(0.0)
        .with_max_attempts(25)
        .with_clock(Arc::new(ManualClock::new()))
}

fn chaos_plan(args: &Args, seed: u64, crash_at: Option<u64>) -> ChaosPlan {
    ChaosPlan::new(seed)
        .with_throttle(args.throttle)
        .with_lost_response(args.lost)
        .with_delayed_visibility(args.visibility, 5)
        .with_half_create(args.lost / 2.0)
        .with_crash_at(crash_at)
}

struct Cluster {
    name: String,
    spec: kops_api::v1alpha2::Cluster,
    groups: Vec<kops_api::v1alpha2::InstanceGroup>,
}

fn clusters(run: u64) -> anyhow::Result<Vec<Cluster>> {
    let mut out = Vec::new();
    for (label, topology) in [("public", Topology::Public), ("private", Topology::Private)] {
        let name = format!("{label}-{run}.example.com");
        let (spec, groups) = new_cluster(
            &NewClusterOptions::new(&name, STORE)
                .with_zones(["us-test-1a", "us-test-1b"])
                .with_control_plane_zones(["us-test-1a"])
                .with_node_count(2)
                .with_topology(topology)
                .with_dns(DnsType::Public)
                .with_image(Some("ami-00000001".into()))
                .with_kubernetes_version("v1.34.1"),
        )
        .with_context(|| format!("making the spec of {name}"))?;
        out.push(Cluster { name, spec, groups });
    }
    Ok(out)
}

/// One attempt to apply `c` through `api`; Ok(true) when the plan was already empty.
async fn attempt(
    api: &dyn AwsCloud,
    c: &Cluster,
    store: &Arc<MemoryStore>,
    registry: &Registry,
) -> anyhow::Result<bool> {
    let opts = DiscoverOptions::default().with_state_store(store.clone(), STORE);
    let ctx = discover(api, &c.spec, &c.groups, &opts).await?;
    let update = UpdateCluster::new(
        ctx,
        UpdateOptions::default()
            .with_executor(executor())
            .with_lock_request(LockRequest::new("chaos", "update cluster").with_lease(LEASE))
            .with_unreadable_config_base(true),
    )?;
    let plan = update.plan(api).await?;
    if !plan.plan.has_changes() {
        return Ok(true);
    }
    update
        .apply(
            api,
            registry,
            &plan,
            ApplyOptions::default().with_prune(true),
        )
        .await?;
    Ok(false)
}

/// Whether a fault-free plan of `c` against `cloud` is empty.
async fn converged(
    cloud: &dyn AwsCloud,
    c: &Cluster,
    store: &Arc<MemoryStore>,
) -> anyhow::Result<bool> {
    let opts = DiscoverOptions::default().with_state_store(store.clone(), STORE);
    let ctx = discover(cloud, &c.spec, &c.groups, &opts).await?;
    let update = UpdateCluster::new(
        ctx,
        UpdateOptions::default().with_unreadable_config_base(true),
    )?;
    let plan = update.plan(cloud).await?;
    Ok(!plan.plan.has_changes())
}

/// Objects `cluster` owns beyond one per kind and name.
async fn duplicates(cloud: &dyn AwsCloud, cluster: &str) -> anyhow::Result<Vec<String>> {
    let mut seen: BTreeMap<(String, String), u32> = BTreeMap::new();
    for r in find_cluster_resources(cloud, cluster).await? {
        let Some(rt) = r.resource_type else { continue };
        if rt == ResourceType::Instance || !is_owned(&r, cluster) {
            continue;
        }
        let name = r
            .name
            .clone()
            .or_else(|| r.tags.get("Name").cloned())
            .unwrap_or_default();
        if name.is_empty() {
            continue;
        }
        *seen.entry((rt.to_string(), name)).or_default() += 1;
    }
    Ok(seen
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|((k, n), c)| format!("{k} {n} x{c}"))
        .collect())
}

async fn terminated(cloud: &dyn AwsCloud) -> BTreeSet<String> {
    cloud
        .list(&ListQuery::new(ResourceType::Instance))
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.attr_str("state") == Some("terminated"))
        .map(|r| r.id)
        .collect()
}

/// What the cluster still owns in the cloud, leaving out terminated instances (EC2 keeps
/// listing those for a while; they cost nothing and go away by themselves).
async fn remaining(cloud: &dyn AwsCloud, cluster: &str) -> anyhow::Result<Vec<Resource>> {
    Ok(find_cluster_resources(cloud, cluster)
        .await?
        .into_iter()
        .filter(|r| {
            !(r.resource_type == Some(ResourceType::Instance)
                && r.attr_str("state") == Some("terminated"))
        })
        .collect())
}

async fn one_run(args: &Args, run: u64, tally: &mut Tally) -> anyhow::Result<()> {
    let seed = mix(args.seed, run);
    let mock = kops_mock::fixture::Fixture::parse(FIXTURE, "chaos fixture")?.build()?;
    let before = mock.resource_ids();
    let server: Arc<dyn AwsCloud> = Arc::new(ClientTokens::new(Arc::new(mock.clone())));
    let raw: &dyn AwsCloud = &mock;
    let store = Arc::new(MemoryStore::new());
    let clock = Arc::new(SkewClock::default());
    let registry = Registry::new(store.clone() as Arc<dyn Store>, clock.clone());
    let crash_run = unit(mix(seed, 1)) < args.crash;
    let mut crash_at = crash_run.then(|| 1 + mix(seed, 2) % 150);
    let all = clusters(run)?;

    for (ci, c) in all.iter().enumerate() {
        let mut done = false;
        for n in 0..ATTEMPTS {
            let chaos = Arc::new(ChaosCloud::new(
                server.clone(),
                chaos_plan(
                    args,
                    mix(seed, 100 + (ci as u64) * 31 + u64::from(n)),
                    crash_at.take(),
                ),
            ));
            let api = Idempotent::new(chaos.clone());
            let result = attempt(&api, c, &store, &registry).await;
            let st = chaos.stats();
            tally.faults += st.throttled + st.lost + st.hidden + st.lingering + st.half_created;
            if st.crashed {
                tally.crashes += 1;
                // The process died holding the lock: the next one takes it over once the
                // lease has run out.
                clock.advance(LEASE + Duration::from_secs(1));
                continue;
            }
            match result {
                Ok(true) => {
                    done = true;
                    break;
                }
                Ok(false) => {}
                Err(e) => {
                    if args.verbose {
                        eprintln!("run {run} {} attempt {n}: {e:#}", c.name);
                    }
                }
            }
        }
        let ok = done && converged(raw, c, &store).await?;
        if !ok {
            tally.unconverged += 1;
            if args.verbose {
                eprintln!("run {run} {}: not converged", c.name);
            }
        }
        let dups = duplicates(raw, &c.name).await?;
        if args.verbose && !dups.is_empty() {
            eprintln!("run {run} {}: duplicates {dups:?}", c.name);
        }
        tally.duplicates += dups.len() as u64;
    }

    for (ci, c) in all.iter().enumerate() {
        let mut clean = false;
        for n in 0..ATTEMPTS {
            let chaos = Arc::new(ChaosCloud::new(
                server.clone(),
                chaos_plan(args, mix(seed, 900 + (ci as u64) * 31 + u64::from(n)), None),
            ));
            let api = Idempotent::new(chaos);
            let opts = DeleteOptions::default()
                .with_max_rounds(30)
                .with_retry_delay(Duration::ZERO);
            match delete_cluster(&api, &c.name, &opts).await {
                Ok(report) if report.is_complete() => {}
                Ok(report) => {
                    if args.verbose {
                        eprintln!("run {run} {} delete attempt {n}: {report}", c.name);
                    }
                }
                Err(e) => {
                    if args.verbose {
                        eprintln!("run {run} {} delete attempt {n}: {e}", c.name);
                    }
                }
            }
            if remaining(raw, &c.name).await?.is_empty() {
                clean = true;
                break;
            }
        }
        if !clean {
            tally.unconverged += 1;
            if args.verbose {
                let left = remaining(raw, &c.name).await?;
                eprintln!("run {run} {}: delete left objects {left:?}", c.name);
            }
        }
    }
    let gone = terminated(raw).await;
    let left: Vec<String> = mock
        .resource_ids()
        .into_iter()
        .filter(|id| !before.contains(id) && !gone.contains(id))
        .collect();
    if args.verbose && !left.is_empty() {
        eprintln!("run {run}: left behind {left:?}");
    }
    tally.leaks += left.len() as u64;
    Ok(())
}

/// Runs `args.runs` runs and sums what they counted.
pub fn run_all(args: &Args) -> anyhow::Result<Tally> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let mut tally = Tally::default();
    let started = std::time::Instant::now();
    for run in 0..args.runs {
        if let Err(e) = runtime.block_on(one_run(args, run, &mut tally)) {
            eprintln!("error: run {run}: {e:#}");
            tally.unconverged += 1;
        }
        if args.verbose || (run + 1) % 50 == 0 {
            eprintln!(
                "after {} runs ({:.0?}): {} duplicates, {} leaks, {} unconverged, {} crashes and {} other faults injected",
                run + 1,
                started.elapsed(),
                tally.duplicates,
                tally.leaks,
                tally.unconverged,
                tally.crashes,
                tally.faults
            );
        }
    }
    Ok(tally)
}

#[allow(dead_code)]
fn main() -> ExitCode {
    let result = parse_args(std::env::args().skip(1)).and_then(|a| Ok((run_all(&a)?, a)));
    let (tally, args) = match result {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "{} runs, {} duplicates, {} leaks, {} unconverged",
        args.runs, tally.duplicates, tally.leaks, tally.unconverged
    );
    if tally.duplicates + tally.leaks + tally.unconverged == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
