//! The state store: opening it from `--state`, the cluster registry, and the lock
//! every mutating command takes.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, anyhow, bail};
use kops_statestore::aws::AwsEnv;
use kops_statestore::gcs::{CLOUD_PLATFORM_SCOPE, GcsConfig, GcsTokenSource, GoogleCredentials};
use kops_statestore::{Lock, LockRequest, Registry, Store, StoreOptions, StoreUrl, SystemClock};

use crate::cli::Global;

/// The AWS SDK's environment of this command (one process runs one command).
static AWS_ENV: tokio::sync::OnceCell<AwsEnv> = tokio::sync::OnceCell::const_new();

/// The AWS SDK's environment of this command, loaded when first asked for and then
/// shared: the `s3://` state store, the stores assets are copied to and every AWS cloud
/// the command opens are built from it, so they share one credentials provider and one
/// identity cache, and credentials (SSO, assume-role with its MFA prompt, container or
/// instance roles) are fetched once per command. Nothing asks for it on a `file://` or
/// `memfs://` store with the mock cloud, so the SDK probes nothing there.
///
/// The first caller's `region` (the cloud's, when it comes first) spares the SDK's
/// region chain; without one the chain runs (`AWS_REGION`, the profile, instance
/// metadata). The state store is opened before the cloud, so it never gets the cloud's
/// region in place of the configured one.
pub async fn aws_env(region: Option<&str>) -> AwsEnv {
    AWS_ENV
        .get_or_init(|| async {
            match region {
                Some(r) => AwsEnv::from_env_in(r).await,
                None => AwsEnv::from_env().await,
            }
        })
        .await
        .clone()
}

/// The Google credentials of this command (one process runs one command), once built.
static GOOGLE: std::sync::Mutex<Option<Arc<GoogleCredentials>>> = std::sync::Mutex::new(None);

/// With `KOPS_GCE_ENDPOINT` or `STORAGE_EMULATOR_HOST`, whose requests otherwise go
/// unauthenticated, this variable (any non-empty value) makes them carry tokens from the
/// application-default credentials too: an endpoint that checks them (a proxy, a fake
/// counting token fetches in tests). `GOOGLE_OAUTH_ACCESS_TOKEN` still comes first for
/// the store.
pub const ENDPOINT_CREDENTIALS_ENV: &str = "KOPS_GCE_ENDPOINT_CREDENTIALS";

/// Whether [`ENDPOINT_CREDENTIALS_ENV`] is set.
pub fn endpoint_credentials() -> bool {
    std::env::var_os(ENDPOINT_CREDENTIALS_ENV).is_some_and(|v| !v.is_empty())
}

/// The Google application-default credentials of this command, built when first asked
/// for and then shared: the `gs://` state store (and asset stores) and every GCE cloud
/// the command opens take their tokens from them, so a token (the metadata server's,
/// gcloud's refresh-token exchange, a service-account key's) is fetched once per command.
/// They carry the cloud-platform scope, which covers storage. google-cloud-auth starts
/// fetching a token as soon as credentials are built, so nothing builds them on a
/// `file://` or `memfs://` store with the mock cloud, nor with a fixed token or the
/// endpoints of fakes.
pub fn google_credentials() -> kops_statestore::Result<Arc<GoogleCredentials>> {
    let mut google = GOOGLE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = google.as_ref() {
        return Ok(c.clone());
    }
    let c = Arc::new(GoogleCredentials::from_env_with_scopes([
        CLOUD_PLATFORM_SCOPE,
    ])?);
    *google = Some(c.clone());
    Ok(c)
}

/// The options opening `url` needs, from the environment (see
/// [`StoreOptions::from_env_for`]), with the command's shared credentials: an `s3://`
/// store takes the command's AWS environment ([`aws_env`]), a `gs://` one its Google
/// credentials ([`google_credentials`]); a local store reads nothing.
pub async fn store_options(url: &str) -> kops_statestore::Result<StoreOptions> {
    if let StoreUrl::Gcs { .. } = StoreUrl::parse(url)? {
        let shared =
            || -> kops_statestore::Result<Arc<dyn GcsTokenSource>> { Ok(google_credentials()?) };
        let mut gcs = GcsConfig::from_env_sharing(shared)?;
        if endpoint_credentials()
            && std::env::var_os("STORAGE_EMULATOR_HOST").is_some()
            && std::env::var_os("GOOGLE_OAUTH_ACCESS_TOKEN").is_none()
        {
            gcs = gcs.with_token_source(shared()?);
        }
        return Ok(StoreOptions::default().with_gcs(gcs));
    }
    StoreOptions::from_env_for_sharing(url, || aws_env(None)).await
}

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
        // would make the SDK probe for a region (instance metadata) for nothing. An
        // `s3://` store takes the command's AWS environment, a `gs://` one its Google
        // credentials, which the cloud shares.
        let options = store_options(&url)
            .await
            .with_context(|| format!("opening state store {url}"))?;
        let store = kops_statestore::open(&url, &options)
            .with_context(|| format!("opening state store {url}"))?;
        Ok(State {
            registry: Registry::new(store, Arc::new(SystemClock))
                .with_history_limit(Some(global.history_limit)),
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

    /// The stored instance groups of cluster `name`.
    pub async fn groups(
        &self,
        name: &str,
    ) -> anyhow::Result<Vec<kops_api::v1alpha2::InstanceGroup>> {
        Ok(self
            .registry
            .list_instance_groups(name)
            .await
            .with_context(|| format!("listing instance groups of cluster {name}"))?
            .into_iter()
            .map(|g| g.value)
            .collect())
    }

    /// Runs `f` holding the cluster's lock, and releases it whatever `f` returns.
    pub async fn locked<T>(
        &self,
        cluster: &str,
        operation: &str,
        f: impl AsyncFnOnce() -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        let lock = self.lock(cluster, operation).await?;
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

impl State {
    /// Takes the cluster's lock for `operation`, with a one-line error naming the holder
    /// (and how to clear a stale lock) when someone else has it. Says so on stderr when
    /// it replaced a lock whose lease had run out.
    pub async fn lock(&self, cluster: &str, operation: &str) -> anyhow::Result<Lock> {
        let request = lock_request(operation);
        let lock = self
            .registry
            .lock(cluster, &request)
            .await
            .map_err(|e| lock_error(cluster, e))?;
        if let Some(old) = lock.replaced() {
            eprintln!(
                "warning: cluster {cluster}: took over the expired lock of {} (lock id {}); that run may have stopped half way, this one picks up from the cloud as it is",
                old.describe(),
                old.id
            );
        }
        Ok(lock)
    }
}

/// The error for a failed lock acquisition: one line naming the holder when locked.
pub fn lock_error(cluster: &str, e: kops_statestore::Error) -> anyhow::Error {
    match &e {
        kops_statestore::Error::Locked { info, .. } => crate::errors::user(format!(
            "cluster {cluster} is locked by {} (lock id {}); wait for it to finish, or if that process is gone run `kops unlock cluster {cluster}`{}",
            info.describe(),
            info.id,
            if info.expires.is_some() {
                " after the lease expires, or with --force now"
            } else {
                " --force"
            }
        )),
        _ => anyhow::Error::new(e).context(format!("taking the lock of cluster {cluster}")),
    }
}

/// How long a lock taken by this process lasts: `KOPS_LOCK_LEASE` seconds, else the
/// library's default.
fn lease() -> Duration {
    std::env::var("KOPS_LOCK_LEASE")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .filter(|s| *s > 0)
        .map_or(kops_statestore::lock::DEFAULT_LEASE, Duration::from_secs)
}

/// The lock request of this process for `operation`: holder, host, pid, command line,
/// lease.
pub fn lock_request(operation: &str) -> LockRequest {
    // The command as typed, program name shortened; flags of kops carry no secrets.
    let command = std::iter::once("kops".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    LockRequest::new(holder(), operation)
        .with_process(hostname(), std::process::id())
        .with_command(command)
        .with_lease(lease())
}

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// `user@host` for lock records.
pub fn holder() -> String {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "unknown".into());
    format!("{user}@{}", hostname())
}

/// The cluster a command acts on: its positional argument, else `--name`.
pub fn cluster_name(positional: Option<&str>, global: &Global) -> anyhow::Result<String> {
    positional
        .or(global.name.as_deref())
        .map(str::to_string)
        .ok_or_else(|| anyhow!("no cluster name: give it as an argument or with --name"))
}
