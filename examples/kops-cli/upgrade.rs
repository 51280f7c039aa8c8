//! `upgrade cluster` over [`kops_model::upgrade`]: the changes the channel recommends (the
//! Kubernetes version, one minor version at a time, and the groups' images) as kOps' table;
//! with `--yes` they are stored, under the cluster's lock, for `update cluster` to apply.

use anyhow::{Context as _, bail};
use clap::{Args, Subcommand, ValueEnum};
use kops_api::channel::Channel;
use kops_model::upgrade::{self, UpgradeOptions, UpgradePlan};

use crate::cli::Global;
use crate::get::print_table;
use crate::spec;
use crate::state::{self, State};

/// `kops upgrade`.
#[derive(Debug, Args)]
pub struct UpgradeArgs {
    #[command(subcommand)]
    pub command: UpgradeCommand,
}

/// What `kops upgrade` upgrades.
#[derive(Debug, Subcommand)]
pub enum UpgradeCommand {
    /// Move a cluster to the Kubernetes version and images its channel recommends (dry run
    /// without --yes)
    Cluster(UpgradeClusterArgs),
}

/// Output of `upgrade cluster`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq, Default)]
pub enum UpgradeFormat {
    /// kOps' table
    #[default]
    Table,
    /// The changes and warnings as one JSON document
    Json,
}

/// `kops upgrade cluster` flags.
#[derive(Debug, Args)]
pub struct UpgradeClusterArgs {
    /// Cluster name (default: --name)
    #[arg(value_name = "CLUSTER")]
    pub cluster_name: Option<String>,
    /// Store the changes (default: show them)
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Channel to follow: `stable` (embedded), or a channel file (path or file:// URL)
    #[arg(long, value_name = "CHANNEL")]
    pub channel: Option<String>,
    /// Kubernetes version to upgrade to (default: the channel's recommendation)
    #[arg(long, value_name = "VERSION")]
    pub kubernetes_version: Option<String>,
    /// Output format of the changes
    #[arg(short = 'o', long, value_enum, default_value_t)]
    pub output: UpgradeFormat,
}

/// kOps' address of its stable channel, which the embedded one stands for.
const KOPS_STABLE: &str =
    "https://raw.githubusercontent.com/kubernetes/kops/master/channels/stable";

/// The channel at `location`: the embedded one for `stable`, else a local file.
pub(crate) fn load_channel(location: &str) -> anyhow::Result<Channel> {
    if location == upgrade::DEFAULT_CHANNEL || location == KOPS_STABLE {
        return spec::channel();
    }
    let path = location.strip_prefix("file://").unwrap_or(location);
    if location.contains("://") && !location.starts_with("file://") {
        bail!(
            "--channel {location}: this kops reads the embedded `stable` channel and channel files (a path or a file:// URL); download the channel and pass its path"
        );
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--channel {location}: reading the channel file {path}"))?;
    Channel::parse(&text).with_context(|| format!("--channel {location}: parsing {path}"))
}

fn print_plan(plan: &UpgradePlan) {
    let rows: Vec<Vec<String>> = plan
        .actions
        .iter()
        .map(|a| {
            vec![
                a.item.clone(),
                a.property.clone(),
                a.old.clone(),
                a.new.clone(),
            ]
        })
        .collect();
    print_table(&["ITEM", "PROPERTY", "OLD", "NEW"], &rows);
}

/// `kops upgrade cluster`; returns the exit code (2: a dry run found changes to make).
pub async fn upgrade_cluster(global: &Global, args: &UpgradeClusterArgs) -> anyhow::Result<u8> {
    let name = state::cluster_name(args.cluster_name.as_deref(), global)?;
    let st = State::open(global).await?;
    let stored = st.cluster(&name).await?;
    let groups = st
        .registry
        .list_instance_groups(&name)
        .await
        .with_context(|| format!("reading the instance groups of cluster {name}"))?;
    let mut options = UpgradeOptions::default();
    if let Some(c) = &args.channel {
        options = options.with_channel(c.clone());
    }
    if let Some(v) = &args.kubernetes_version {
        options = options.with_kubernetes_version(v.clone());
    }
    let location = upgrade::channel_location(&stored.value, &options);
    let channel = load_channel(&location)?;
    let values: Vec<_> = groups.iter().map(|g| g.value.clone()).collect();
    let plan = upgrade::plan_upgrade(&stored.value, &values, &channel, &options)
        .with_context(|| format!("planning the upgrade of cluster {name}"))?;
    for w in &plan.warnings {
        eprintln!("warning: {w}");
    }
    if args.output == UpgradeFormat::Json {
        println!("{}", serde_json::to_string(&plan).unwrap_or_default());
    } else if !plan.is_empty() {
        print_plan(&plan);
    }
    if plan.is_empty() {
        eprintln!("No upgrade required");
        return Ok(0);
    }
    if !args.yes {
        eprintln!("Must specify --yes to perform the upgrade");
        return Ok(2);
    }
    st.locked(&name, "upgrade cluster", async || {
        // What was read is what is written: a change stored meanwhile fails the
        // compare-and-swap instead of being overwritten.
        let mut cluster = stored.value.clone();
        let mut values = values.clone();
        let changed = upgrade::apply_upgrade(&plan, &mut cluster, &mut values);
        if plan.actions.iter().any(|a| a.item == "Cluster") {
            st.registry
                .update_cluster(&cluster, &stored.version)
                .await
                .with_context(|| format!("saving cluster {name}"))?;
        }
        for (g, read) in values.iter().zip(&groups) {
            let group = g.metadata.name.clone().unwrap_or_default();
            if changed.contains(&group) {
                st.registry
                    .update_instance_group(&name, g, &read.version)
                    .await
                    .with_context(|| format!("saving instance group {group} of cluster {name}"))?;
            }
        }
        Ok(())
    })
    .await?;
    println!("\nUpdates applied to configuration.");
    println!("You can now apply these changes, using `kops update cluster {name} --yes`");
    Ok(0)
}
