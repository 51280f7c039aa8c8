//! The state store: opening it from `--state`, the cluster registry, and the lock
//! every mutating command takes.

use std::sync::Arc;

use anyhow::{Context as _, anyhow, bail};
use kops_statestore::{LockRequest, Registry, Store, StoreOptions, SystemClock};

use crate::cli::Global;

/// An opened state store.
pub struct State {
    /// The URL it was opened from.
    pub url: String,
    /// The cluster registry over it.
    pub registry: Registry,
}

impl State {
    /// Opens the store named by `--state` / `KOPS_STATE_STORE`.
    pub async fn open(global: &Global) -> anyhow::Result<State> {
        let Some(url) = global.state.clone().filter(|s| !s.trim().is_empty()) else {
            bail!(
                "no state store: pass --state URL or set KOPS_STATE_STORE (e.g. file:///tmp/kops-state, s3://bucket/prefix)"
            );
        };
        let url = url.trim_end_matches('/').to_string();
        // Only cloud stores need client configuration; reading it for a local store
        // would make the SDK probe for a region (instance metadata) for nothing.
        let options = StoreOptions::from_env_for(&url)
            .await
            .with_context(|| format!("opening state store {url}"))?;
        let store = kops_statestore::open(&url, &options)
            .with_context(|| format!("opening state store {url}"))?;
        Ok(State {
            registry: Registry::new(store, Arc::new(SystemClock)),
            url,
        })
    }

    /// The underlying store.
    pub fn store(&self) -> &Arc<dyn Store> {
        self.registry.store()
    }

    /// Reads a cluster, with a clear message when it does not exist.
    pub async fn cluster(
        &self,
        name: &str,
    ) -> anyhow::Result<kops_statestore::Versioned<kops_api::v1alpha2::Cluster>> {
        match self.registry.get_cluster(name).await {
            Ok(c) => Ok(c),
            Err(kops_statestore::Error::NotFound { .. }) => Err(anyhow!(
                "cluster {name:?} not found in state store {} (see `kops get clusters`)",
                self.url
            )),
            Err(e) => Err(anyhow::Error::new(e).context(format!(
                "reading cluster {name} from state store {}",
                self.url
            ))),
        }
    }

    /// Runs `f` holding the cluster's lock, and releases it whatever `f` returns.
    pub async fn locked<T>(
        &self,
        cluster: &str,
        operation: &str,
        f: impl AsyncFnOnce() -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        let request = LockRequest::new(holder(), operation);
        let lock = self.registry.lock(cluster, &request).await.map_err(|e| {
            let what = match &e {
                kops_statestore::Error::Locked { info, .. } => format!(
                    "cluster {cluster} is locked by {} ({} since {}, lock id {})",
                    info.holder, info.operation, info.created, info.id
                ),
                _ => format!("taking the lock of cluster {cluster}"),
            };
            anyhow::Error::new(e).context(what)
        })?;
        let result = f().await;
        let released = lock
            .release()
            .await
            .with_context(|| format!("releasing the lock of cluster {cluster}"));
        match (result, released) {
            (Ok(v), Ok(())) => Ok(v),
            (Err(e), _) => Err(e),
            (Ok(_), Err(e)) => Err(e),
        }
    }
}

/// `user@host` for lock records.
pub fn holder() -> String {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "unknown".into());
    let host = std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    format!("{user}@{host} (pid {})", std::process::id())
}

/// The cluster a command acts on: its positional argument, else `--name`.
pub fn cluster_name(positional: Option<&str>, global: &Global) -> anyhow::Result<String> {
    positional
        .or(global.name.as_deref())
        .map(str::to_string)
        .ok_or_else(|| anyhow!("no cluster name: give it as an argument or with --name"))
}
