//! `unlock cluster`: removes a cluster's state-store lock left by a run that died.

use anyhow::Context as _;
use clap::{Args, Subcommand};

use crate::cli::Global;
use crate::state::{self, State};

/// `kops unlock`.
#[derive(Debug, Args)]
pub struct UnlockArgs {
    #[command(subcommand)]
    pub command: UnlockCommand,
}

/// What to unlock.
#[derive(Debug, Subcommand)]
pub enum UnlockCommand {
    /// Remove a cluster's lock whose holder is gone (its lease expired, or --force)
    Cluster(UnlockClusterArgs),
}

/// `kops unlock cluster`.
#[derive(Debug, Args)]
pub struct UnlockClusterArgs {
    /// Cluster name (also taken from --name)
    #[arg(value_name = "CLUSTER")]
    pub cluster_name: Option<String>,
    /// Remove the lock even though its lease has not expired (only when its holder is
    /// known to be gone: a running holder would go on changing the cluster unlocked)
    #[arg(long)]
    pub force: bool,
}

/// `kops unlock cluster`; returns the exit code.
pub async fn unlock_cluster(global: &Global, args: &UnlockClusterArgs) -> anyhow::Result<u8> {
    let name = state::cluster_name(args.cluster_name.as_deref(), global)?;
    let st = State::open(global).await?;
    st.cluster(&name).await?;
    match st.registry.unlock(&name, args.force).await {
        Ok(Some(info)) => {
            println!(
                "Cluster {name} unlocked: removed the lock of {} (lock id {}).",
                info.describe(),
                info.id
            );
            Ok(0)
        }
        Ok(None) => {
            println!("Cluster {name} is not locked.");
            Ok(0)
        }
        Err(kops_statestore::Error::LeaseNotExpired { info, .. }) => {
            Err(crate::errors::user(format!(
                "cluster {name} is locked by {} (lock id {}) and its lease has not expired; if that process is gone, run `kops unlock cluster {name} --force`",
                info.describe(),
                info.id
            )))
        }
        Err(e) => Err(anyhow::Error::new(e))
            .with_context(|| format!("unlocking cluster {name} in {}", st.url)),
    }
}
