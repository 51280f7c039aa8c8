//! `reconcile cluster`: kOps' order for changes that reach the machines (a Kubernetes
//! upgrade above all, where nodes must never run a newer kubelet than the control plane):
//! the control plane's configuration is updated, its API awaited and its machines
//! replaced; only then the nodes' configuration is updated and their machines replaced;
//! last, what the spec no longer needs is pruned. Each step is the command of its own
//! (`update cluster --instance-group-roles`, `validate`, `rolling-update cluster`), so a
//! run stopped at a step can be finished by hand or by running `reconcile` again.

use std::time::Duration;

use anyhow::{Context as _, bail};
use clap::{Args, Subcommand};
use kops_api::internal::InstanceGroupRole;
use kops_model::day2::validate::{RepeatOptions, ValidateOptions, Validator, validate_until};

use crate::cli::{Global, PlanFormat, Target, UpdateClusterArgs};
use crate::kubeconfig::{admin_client, parse_duration};
use crate::rolling::{RollFlags, RollingFormat, RollingUpdateClusterArgs};
use crate::state::{self, State};
use crate::validate::{group_cloud, instance_groups};

/// `kops reconcile`.
#[derive(Debug, Args)]
pub struct ReconcileArgs {
    #[command(subcommand)]
    pub command: ReconcileCommand,
}

/// What `kops reconcile` reconciles.
#[derive(Debug, Subcommand)]
pub enum ReconcileCommand {
    /// Update and roll the control plane, then the nodes, then prune (the update's plan
    /// without --yes)
    Cluster(ReconcileClusterArgs),
}

/// `kops reconcile cluster` flags.
#[derive(Debug, Args)]
pub struct ReconcileClusterArgs {
    /// Cluster name (default: --name)
    pub cluster_name: Option<String>,
    /// Reconcile (default: show the update's plan)
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// How long to wait for the control plane's API to be served once its configuration
    /// is updated
    #[arg(long, default_value = "10m", value_name = "DURATION")]
    pub api_wait: String,
    #[command(flatten)]
    pub roll: RollFlags,
}

/// The roles of the control plane's groups.
const CONTROL_PLANE: [InstanceGroupRole; 2] = [
    InstanceGroupRole::ApiServer,
    InstanceGroupRole::ControlPlane,
];

/// `kops reconcile cluster`; returns the exit code.
pub async fn reconcile_cluster(global: &Global, args: &ReconcileClusterArgs) -> anyhow::Result<u8> {
    let name = state::cluster_name(args.cluster_name.as_deref(), global)?;
    let api_wait = parse_duration(&args.api_wait).context("--api-wait")?;
    let update = |roles: &[InstanceGroupRole], prune: bool| UpdateClusterArgs {
        cluster_name: Some(name.clone()),
        yes: args.yes,
        target: Target::Direct,
        out: None,
        output: PlanFormat::Text,
        lifecycle_overrides: Vec::new(),
        prune,
        refresh: false,
        instance_groups: Vec::new(),
        roles: roles.iter().map(|r| r.as_v1alpha2().to_owned()).collect(),
        create_kube_config: Some(false),
        kubeconfig: Default::default(),
        ignore_kubelet_version_skew: false,
        backend: Default::default(),
        phase: None,
        kops_identical_files: false,
        reconciling: true,
    };
    if !args.yes {
        return crate::update::update_cluster(global, &update(&[], false)).await;
    }
    let roll = |roles: &[InstanceGroupRole]| RollingUpdateClusterArgs {
        cluster_name: Some(name.clone()),
        yes: true,
        force: false,
        instance_groups: Vec::new(),
        roles: roles.iter().map(|r| r.as_v1alpha2().to_owned()).collect(),
        output: RollingFormat::Table,
        roll: args.roll.clone(),
    };

    eprintln!("Updating control plane configuration");
    step(crate::update::update_cluster(global, &update(&CONTROL_PLANE, false)).await)?;
    if args.roll.cloudonly {
        eprintln!("Not waiting for the Kubernetes API (--cloudonly)");
    } else {
        eprintln!("Waiting for the Kubernetes API to be served");
        wait_for_api(global, &name, args, api_wait).await?;
    }
    eprintln!("Performing rolling-update for control plane");
    step(crate::rolling::rolling_update_cluster(global, &roll(&CONTROL_PLANE)).await)?;
    eprintln!("Updating node configuration");
    step(crate::update::update_cluster(global, &update(&[], false)).await)?;
    eprintln!("Performing rolling-update for nodes");
    step(crate::rolling::rolling_update_cluster(global, &roll(&[])).await)?;
    eprintln!("Pruning old resources that are no longer used");
    step(crate::update::update_cluster(global, &update(&[], true)).await)?;
    eprintln!("Cluster {name} reconciled");
    Ok(0)
}

/// A step's exit code: anything but success stops the reconcile there.
fn step(code: anyhow::Result<u8>) -> anyhow::Result<()> {
    match code? {
        0 => Ok(()),
        code => bail!("stopped: the step above ended with exit code {code}"),
    }
}

/// Waits until the control plane's groups validate (pods left out: they settle later),
/// or `wait` passes.
async fn wait_for_api(
    global: &Global,
    name: &str,
    args: &ReconcileClusterArgs,
    wait: Duration,
) -> anyhow::Result<()> {
    let st = State::open(global).await?;
    let groups: Vec<_> = instance_groups(&st, name)
        .await?
        .into_iter()
        .filter(|g| {
            g.spec
                .role
                .as_ref()
                .is_some_and(|r| CONTROL_PLANE.contains(r))
        })
        .collect();
    let (_journaled, cloud) = group_cloud(global, &st, name, "reconcile cluster").await?;
    let client = admin_client(global, &st, name, args.roll.api_server.as_deref()).await?;
    let validator = Validator::new(
        client,
        cloud,
        name.to_owned(),
        groups,
        ValidateOptions::default().with_pod_checks(false),
    );
    let interval = Duration::from_secs(10).min(wait.max(Duration::from_secs(1)));
    let repeat = RepeatOptions::new(wait, 1).with_intervals(interval, interval);
    match validate_until(&validator, &repeat, |_| {}).await {
        Ok(v) if v.is_valid() => Ok(()),
        Ok(v) => {
            let failures: Vec<String> = v
                .failures
                .iter()
                .map(|f| format!("{} {}: {}", f.kind, f.name, f.message))
                .collect();
            bail!(
                "cluster {name}: the control plane did not validate within {}: {}",
                args.api_wait,
                failures.join("; ")
            )
        }
        Err(e) => Err(anyhow::Error::new(e).context(format!(
            "cluster {name}: waiting for the Kubernetes API within {}",
            args.api_wait
        ))),
    }
}
