//! `rolling-update cluster` over [`kops_model::day2::rolling`]: without `--yes` the plan
//! (exit 2 when an update is needed, 0 when none); with it the roll, journaled in the state
//! store so an interrupted run (SIGINT lets the current step finish) resumes.
//! `delete instance`: one instance replaced the same way (surge, validate, drain,
//! terminate).

use std::sync::Arc;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use kops_api::internal::{self, InstanceGroupRole};
use kops_model::day2::rolling::{Event, Journal, Plan, RollingOptions, RollingUpdate};
use kops_model::day2::validate::{ValidateOptions, Validator};

use crate::cli::Global;
use crate::kubeconfig::{admin_client, parse_duration};
use crate::state::{self, State};
use crate::validate::{group_cloud, instance_groups};

/// Output of `rolling-update cluster`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq, Default)]
pub enum RollingFormat {
    /// A table, and progress lines
    #[default]
    Table,
    /// The plan as JSON, and one JSON line per event
    Json,
}

/// `kops rolling-update cluster` flags.
#[derive(Debug, Args)]
pub struct RollingUpdateClusterArgs {
    /// Cluster name (default: --name)
    pub cluster_name: Option<String>,
    /// Perform the update (default: show the plan)
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Replace up-to-date instances too
    #[arg(long)]
    pub force: bool,
    /// Only these instance groups
    #[arg(long = "instance-group", visible_aliases = ["ig", "instance-groups"], value_delimiter = ',')]
    pub instance_groups: Vec<String>,
    /// Only groups of these roles (ControlPlane, Node, Bastion, APIServer)
    #[arg(long = "instance-group-roles", visible_aliases = ["role", "roles"], value_delimiter = ',')]
    pub roles: Vec<String>,
    /// Output format
    #[arg(short = 'o', long, value_enum, default_value_t)]
    pub output: RollingFormat,
    #[command(flatten)]
    pub roll: RollFlags,
}

/// How machines are replaced: `rolling-update cluster`'s and `reconcile cluster`'s flags.
#[derive(Debug, Clone, Args)]
pub struct RollFlags {
    /// Do not use the Kubernetes API (no taint, drain or validation)
    #[arg(long)]
    pub cloudonly: bool,
    /// Per validation episode
    #[arg(long, default_value = "15m", value_name = "DURATION")]
    pub validation_timeout: String,
    /// Consecutive successful validations after each replacement
    #[arg(long, default_value_t = 2)]
    pub validate_count: u32,
    /// Per node drain
    #[arg(long, default_value = "15m", value_name = "DURATION")]
    pub drain_timeout: String,
    /// After each drain
    #[arg(long, default_value = "5s", value_name = "DURATION")]
    pub post_drain_delay: String,
    /// After each bastion termination
    #[arg(long, default_value = "15s", value_name = "DURATION")]
    pub bastion_interval: String,
    /// After each control-plane termination
    #[arg(
        long,
        visible_alias = "master-interval",
        default_value = "15s",
        value_name = "DURATION"
    )]
    pub control_plane_interval: String,
    /// After each node termination
    #[arg(long, default_value = "15s", value_name = "DURATION")]
    pub node_interval: String,
    /// Stop when validation times out
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub fail_on_validate_error: bool,
    /// Stop when a drain fails
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub fail_on_drain_error: bool,
    /// Override the API server URL
    #[arg(long, value_name = "URL")]
    pub api_server: Option<String>,
}

/// Instance-group roles as flags name them (`--instance-group-roles`), or an error naming
/// the unknown one.
pub fn parse_roles(roles: &[String]) -> anyhow::Result<Vec<InstanceGroupRole>> {
    roles
        .iter()
        .map(|r| match InstanceGroupRole::parse(r) {
            InstanceGroupRole::Unknown(u) => Err(anyhow::anyhow!(
                "--instance-group-roles: unknown role {u:?}"
            )),
            role => Ok(role),
        })
        .collect()
}

fn options(args: &RollingUpdateClusterArgs) -> anyhow::Result<RollingOptions> {
    let d = |flag: &str, v: &str| parse_duration(v).with_context(|| format!("--{flag}"));
    let roles = parse_roles(&args.roles)?;
    let roll = &args.roll;
    Ok(RollingOptions::default()
        .with_force(args.force)
        .with_cloud_only(roll.cloudonly)
        .with_instance_groups(args.instance_groups.clone())
        .with_roles(roles)
        .with_validation_timeout(d("validation-timeout", &roll.validation_timeout)?)
        .with_validate_count(roll.validate_count)
        .with_drain_timeout(d("drain-timeout", &roll.drain_timeout)?)
        .with_post_drain_delay(d("post-drain-delay", &roll.post_drain_delay)?)
        .with_bastion_interval(d("bastion-interval", &roll.bastion_interval)?)
        .with_control_plane_interval(d("control-plane-interval", &roll.control_plane_interval)?)
        .with_node_interval(d("node-interval", &roll.node_interval)?)
        .with_fail_on_validate_error(roll.fail_on_validate_error)
        .with_fail_on_drain_error(roll.fail_on_drain_error))
}

fn print_plan(plan: &Plan, cloud_only: bool) {
    print!(
        "{:<28} {:<12} {:<11} {:<6} {:<4} {:<7} {:<4}",
        "NAME", "STATUS", "NEEDUPDATE", "READY", "MIN", "TARGET", "MAX"
    );
    println!("{}", if cloud_only { "" } else { " NODES" });
    for g in &plan.groups {
        print!(
            "{:<28} {:<12} {:<11} {:<6} {:<4} {:<7} {:<4}",
            g.name, g.status, g.need_update, g.ready, g.min, g.target, g.max
        );
        match g.nodes {
            Some(n) => println!(" {n}"),
            None => println!(),
        }
    }
    for g in &plan.groups {
        for u in &g.update {
            println!("  {} {}: {}", g.name, u.id, u.reason);
        }
    }
}

/// Prints each event: one JSON line on stdout, or a line on stderr.
fn event_sink(json: bool) -> kops_model::day2::rolling::EventSink {
    Arc::new(move |e: &Event| {
        if json {
            println!("{}", serde_json::to_string(e).unwrap_or_default());
        } else {
            eprintln!(
                "{} {} {} {}",
                e.group,
                e.action,
                e.instance.as_deref().unwrap_or(""),
                e.detail.as_deref().unwrap_or("")
            );
        }
    })
}

/// `roll` with the cluster's Kubernetes API (an admin client) and a validator of its
/// groups; as it is when `api` is `None` (`--cloudonly`). `Some(url)` overrides the API
/// server's address (`--api-server`).
async fn with_api(
    roll: RollingUpdate,
    api: Option<Option<&str>>,
    global: &Global,
    st: &State,
    name: &str,
    groups: &[internal::InstanceGroup],
    cloud: Arc<dyn kops_model::day2::groups::InstanceGroupCloud>,
) -> anyhow::Result<RollingUpdate> {
    let Some(api_server) = api else {
        return Ok(roll);
    };
    let client = admin_client(global, st, name, api_server).await?;
    let validator = Arc::new(Validator::new(
        client.clone(),
        cloud,
        name.to_owned(),
        groups.to_vec(),
        ValidateOptions::default(),
    ));
    Ok(roll.with_kube(client, validator))
}

/// `kops rolling-update cluster`; returns the exit code.
pub async fn rolling_update_cluster(
    global: &Global,
    args: &RollingUpdateClusterArgs,
) -> anyhow::Result<u8> {
    let name = state::cluster_name(args.cluster_name.as_deref(), global)?;
    let st = State::open(global).await?;
    let stored = st.cluster(&name).await?.value;
    let cluster = internal::Cluster::try_from(&stored)
        .with_context(|| format!("cluster {name}: converting the spec"))?;
    let groups = instance_groups(&st, &name).await?;
    let (journaled, cloud) = group_cloud(global, &st, &name, "rolling-update cluster").await?;
    let json = args.output == RollingFormat::Json;
    let roll = RollingUpdate::new(cloud.clone(), options(args)?)
        .with_journal(Journal::new(st.store().clone(), &name))
        .with_events(event_sink(json));
    let api = (!args.roll.cloudonly).then_some(args.roll.api_server.as_deref());
    let roll = with_api(roll, api, global, &st, &name, &groups, cloud).await?;
    let plan = roll
        .plan(&cluster, &groups)
        .await
        .with_context(|| format!("planning the rolling update of cluster {name}"))?;
    if json {
        println!("{}", serde_json::to_string(&plan).unwrap_or_default());
    } else {
        print_plan(&plan, args.roll.cloudonly);
    }
    if !plan.needs_update() && !args.force {
        eprintln!("No rolling-update required.");
        return Ok(0);
    }
    if !args.yes {
        eprintln!("Must specify --yes to rolling-update.");
        return Ok(2);
    }
    let (tx, rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("interrupted: finishing the current step, then removing the taints set");
            let _ = tx.send(true);
        }
    });
    let result = roll.with_stop(rx).run(&cluster, &groups).await;
    // The cloud changed even when the roll failed: keep it (the mock cloud's journal).
    let saved = journaled.save().await;
    let report = result.with_context(|| format!("rolling update of cluster {name}"))?;
    saved?;
    if report.stopped {
        eprintln!("Rolling update stopped; run it again to resume.");
        return Ok(1);
    }
    eprintln!("Rolling update completed for cluster {name:?}");
    Ok(0)
}

/// After an update applied changes: how many machines run an older configuration than
/// their group now wants, said on stderr with the command that replaces them (kOps always
/// says "changes may require instances to restart"; this counts them). Quiet when none,
/// or when the cloud cannot be read (the update itself succeeded).
pub async fn hint_after_update(
    cloud: Arc<dyn kops_model::day2::groups::InstanceGroupCloud>,
    st: &State,
    name: &str,
) {
    let Ok(groups) = instance_groups(st, name).await else {
        return;
    };
    let Ok(found) = cloud.cloud_groups(name, &groups).await else {
        return;
    };
    let stale: usize = found
        .iter()
        .map(|g| g.members.iter().filter(|m| m.status.needs_update()).count())
        .sum();
    if stale > 0 {
        eprintln!(
            "{stale} instance(s) of cluster {name} run an older configuration: replace them with `kops rolling-update cluster {name} --yes`"
        );
    }
}

/// `kops delete instance` flags.
#[derive(Debug, Args)]
pub struct DeleteInstanceArgs {
    /// The instance's ID, or (unless --cloudonly) its node's name
    #[arg(value_name = "INSTANCE|NODE")]
    pub instance: String,
    /// Delete it (default: say which instance would be deleted)
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Do not use the Kubernetes API (no drain or validation)
    #[arg(long)]
    pub cloudonly: bool,
    /// Detach the instance from its group first, so a replacement starts before it goes
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub surge: bool,
    /// Per validation episode
    #[arg(long, default_value = "15m", value_name = "DURATION")]
    pub validation_timeout: String,
    /// Consecutive successful validations after detaching
    #[arg(long, default_value_t = 2)]
    pub validate_count: u32,
    /// Per node drain
    #[arg(long, default_value = "15m", value_name = "DURATION")]
    pub drain_timeout: String,
    /// After the drain
    #[arg(long, default_value = "5s", value_name = "DURATION")]
    pub post_drain_delay: String,
    /// Stop when validation times out
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub fail_on_validate_error: bool,
    /// Stop when the drain fails
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub fail_on_drain_error: bool,
    /// Override the API server URL
    #[arg(long, value_name = "URL")]
    pub api_server: Option<String>,
}

/// `kops delete instance`; returns the exit code (2: a dry run found the instance).
pub async fn delete_instance(global: &Global, args: &DeleteInstanceArgs) -> anyhow::Result<u8> {
    let name = state::cluster_name(None, global)?;
    let d = |flag: &str, v: &str| parse_duration(v).with_context(|| format!("--{flag}"));
    let options = RollingOptions::default()
        .with_cloud_only(args.cloudonly)
        .with_validation_timeout(d("validation-timeout", &args.validation_timeout)?)
        .with_validate_count(args.validate_count)
        .with_drain_timeout(d("drain-timeout", &args.drain_timeout)?)
        .with_post_drain_delay(d("post-drain-delay", &args.post_drain_delay)?)
        .with_fail_on_validate_error(args.fail_on_validate_error)
        .with_fail_on_drain_error(args.fail_on_drain_error);
    let st = State::open(global).await?;
    let stored = st.cluster(&name).await?.value;
    let cluster = internal::Cluster::try_from(&stored)
        .with_context(|| format!("cluster {name}: converting the spec"))?;
    let groups = instance_groups(&st, &name).await?;
    let (journaled, cloud) = group_cloud(global, &st, &name, "delete instance").await?;
    let roll = RollingUpdate::new(cloud.clone(), options).with_events(event_sink(false));
    let api = (!args.cloudonly).then_some(args.api_server.as_deref());
    let roll = with_api(roll, api, global, &st, &name, &groups, cloud).await?;
    let found = roll
        .find_instance(&cluster, &groups, &args.instance)
        .await
        .with_context(|| format!("cluster {name}: finding the instance to delete"))?;
    match &found.node {
        Some(node) => println!(
            "Instance {} ({node}) of instance group {} found for deletion",
            found.id, found.instance_group
        ),
        None => println!(
            "Instance {} of instance group {} found for deletion",
            found.id, found.instance_group
        ),
    }
    if !args.yes {
        println!("Must specify --yes to delete the instance");
        return Ok(2);
    }
    let result = roll
        .delete_instance(&cluster, &groups, &found.id, args.surge)
        .await;
    // The cloud changed even when a later step failed: keep it (the mock cloud's journal).
    let saved = journaled.save().await;
    result.with_context(|| format!("cluster {name}: deleting instance {}", found.id))?;
    saved?;
    println!("Deleted instance {}", found.id);
    Ok(0)
}
