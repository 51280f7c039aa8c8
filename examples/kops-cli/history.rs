//! `get history` and `rollback cluster`: the saved versions of a cluster's spec.
//!
//! Every change of a cluster's spec saves the version it replaces under
//! `<cluster>/history/` (kops-rs only; kOps ignores that folder), numbered from 1. The
//! state store keeps the newest `--history-limit` of them (`KOPS_HISTORY_LIMIT`, default
//! 50). A rollback makes a saved version current again; it is itself a change, so the
//! version it replaces is saved too and the rollback can be undone.

use anyhow::{Context as _, bail};
use clap::Args;

use crate::cli::Global;
use crate::get::print_table;
use crate::state::{self, State};

/// `kops get history`.
#[derive(Debug, Args)]
pub struct GetHistoryArgs {
    /// Cluster name (also taken from --name)
    #[arg(value_name = "CLUSTER")]
    pub cluster_name: Option<String>,
}

/// `kops rollback cluster`.
#[derive(Debug, Args)]
pub struct RollbackClusterArgs {
    /// Cluster name (also taken from --name)
    #[arg(value_name = "CLUSTER")]
    pub cluster_name: Option<String>,
    /// Number of the saved version to restore (see `kops get history`)
    #[arg(long, value_name = "N")]
    pub to: u64,
}

/// `20240102T030405Z` -> `2024-01-02T03:04:05Z`.
fn saved_at(id: &str) -> String {
    let Some((_, ts)) = id.split_once('-') else {
        return String::new();
    };
    let b = ts.as_bytes();
    if b.len() != 16 || b[8] != b'T' {
        return ts.to_string();
    }
    format!(
        "{}-{}-{}T{}:{}:{}Z",
        &ts[0..4],
        &ts[4..6],
        &ts[6..8],
        &ts[9..11],
        &ts[11..13],
        &ts[13..15]
    )
}

/// `kops get history`.
pub async fn get_history(global: &Global, args: &GetHistoryArgs) -> anyhow::Result<()> {
    let name = state::cluster_name(args.cluster_name.as_deref(), global)?;
    let st = State::open(global).await?;
    let current = st.cluster(&name).await?.value;
    let history = st
        .registry
        .list_history(&name)
        .await
        .with_context(|| format!("listing the history of cluster {name}"))?;
    let mut rows = Vec::new();
    for h in &history {
        let generation = match st.registry.get_history(&name, &h.id).await {
            Ok(c) => c
                .metadata
                .generation
                .map_or_else(|| "-".to_string(), |g| g.to_string()),
            Err(e) => format!("unreadable: {e}"),
        };
        rows.push(vec![h.sequence.to_string(), saved_at(&h.id), generation]);
    }
    if rows.is_empty() {
        println!("Cluster {name} has no saved versions yet (one is saved on each change).");
    } else {
        print_table(&["N", "REPLACED AT", "GENERATION"], &rows);
    }
    println!(
        "Current: generation {}.",
        current
            .metadata
            .generation
            .map_or_else(|| "-".to_string(), |g| g.to_string())
    );
    Ok(())
}

/// `kops rollback cluster`.
pub async fn rollback_cluster(global: &Global, args: &RollbackClusterArgs) -> anyhow::Result<()> {
    let name = state::cluster_name(args.cluster_name.as_deref(), global)?;
    let st = State::open(global).await?;
    st.cluster(&name).await?;
    st.locked(&name, "rollback cluster", async || {
        let history = st
            .registry
            .list_history(&name)
            .await
            .with_context(|| format!("listing the history of cluster {name}"))?;
        let Some(entry) = history.iter().find(|h| h.sequence == args.to) else {
            let known: Vec<String> = history.iter().map(|h| h.sequence.to_string()).collect();
            bail!(
                "--to {}: cluster {name} has no saved version {} (saved: {}; see `kops get history {name}`)",
                args.to,
                args.to,
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            );
        };
        let current = st.cluster(&name).await?;
        st.registry
            .restore_history(&name, &entry.id, &current.version)
            .await
            .with_context(|| format!("restoring version {} of cluster {name}", args.to))?;
        Ok(())
    })
    .await?;
    println!(
        "Cluster {name} rolled back to saved version {} (the replaced spec is saved too). Run `kops update cluster {name} --yes` to apply it.",
        args.to
    );
    Ok(())
}
