//! `helpers kubectl-auth`: kubectl's credential plugin for a kubeconfig written with
//! `--auth-plugin` (kOps' helper). Each call prints an `ExecCredential` with a short-lived
//! admin certificate signed by the cluster's `kubernetes-ca` from the state store, so no
//! lasting credential sits in the kubeconfig; it is cached (mode 0600) under
//! `~/.kube/cache/kops-authentication/` until five minutes before it expires.

use std::path::PathBuf;
use std::time::SystemTime;

use anyhow::{Context as _, anyhow};
use clap::{Args, Subcommand};
use kops_model::day2::kubeconfig::{exec_credential, issue_admin_credential};
use sha2::{Digest as _, Sha256};

use crate::cli::Global;
use crate::kubeconfig::{os_user, parse_duration};
use crate::state::State;

/// `kops helpers`.
#[derive(Debug, Args)]
pub struct HelpersArgs {
    #[command(subcommand)]
    pub command: HelpersCommand,
}

/// The helpers.
#[derive(Debug, Subcommand)]
pub enum HelpersCommand {
    /// kubectl's credential plugin for kubeconfigs written with --auth-plugin
    KubectlAuth(KubectlAuthArgs),
}

/// `kops helpers kubectl-auth` flags.
#[derive(Debug, Args)]
pub struct KubectlAuthArgs {
    /// The cluster (default: --name)
    #[arg(long, value_name = "NAME")]
    pub cluster: Option<String>,
    /// How long the issued certificate is valid
    #[arg(long, default_value = "1h", value_name = "DURATION")]
    pub lifetime: String,
    /// Version of client.authentication.k8s.io kubectl speaks (v1beta1 or v1alpha1)
    #[arg(long, default_value = "v1beta1", value_name = "VERSION")]
    pub api_version: String,
}

/// Where the credential of `cluster` in `state` is cached: the cluster's name made safe
/// for a file name, and a digest of both (two stores may hold clusters of one name).
fn cache_path(state: &str, cluster: &str) -> anyhow::Result<PathBuf> {
    let home = std::env::var_os("HOME").ok_or_else(|| anyhow!("$HOME is not set"))?;
    let safe: String = cluster
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(32)
        .collect();
    let mut digest = Sha256::new();
    digest.update(state.as_bytes());
    digest.update([0]);
    digest.update(cluster.as_bytes());
    let hex: String = digest.finalize()[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(PathBuf::from(home)
        .join(".kube")
        .join("cache")
        .join("kops-authentication")
        .join(format!("{safe}_{hex}")))
}

/// A cached credential still good for `api_version`: of that version, with a certificate
/// and key, and not yet at its expiry.
fn cached(path: &PathBuf, api_version: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let doc: serde_json::Value = serde_json::from_str(&text).ok()?;
    let status = &doc["status"];
    let fresh = doc["apiVersion"].as_str()
        == Some(&*format!("client.authentication.k8s.io/{api_version}"))
        && status["clientCertificateData"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
        && status["clientKeyData"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
        && status["expirationTimestamp"]
            .as_str()
            .and_then(kops_statestore::lock::parse_rfc3339)
            .is_some_and(|t| t > SystemTime::now());
    fresh.then_some(text)
}

/// `kops helpers kubectl-auth`: prints the `ExecCredential`.
pub async fn kubectl_auth(global: &Global, args: &KubectlAuthArgs) -> anyhow::Result<()> {
    let name = crate::state::cluster_name(args.cluster.as_deref(), global)?;
    let lifetime = parse_duration(&args.lifetime).context("--lifetime")?;
    let state = global.state.clone().unwrap_or_default();
    let path = cache_path(&state, &name)?;
    if let Some(text) = cached(&path, &args.api_version) {
        println!("{text}");
        return Ok(());
    }
    let st = State::open(global).await?;
    let ca = st
        .registry
        .get_keyset(&name, "kubernetes-ca")
        .await
        .with_context(|| format!("reading keyset kubernetes-ca of cluster {name}"))?
        .value;
    let credential = issue_admin_credential(&ca, &os_user(), lifetime, SystemTime::now())
        .with_context(|| format!("cluster {name}: minting a credential"))?;
    let text = exec_credential(&credential, &args.api_version)?;
    println!("{text}");
    // A cache that cannot be written costs a new credential next time, nothing more.
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Err(e) = crate::kubeconfig::write_private(&path, &text) {
        eprintln!("warning: caching the credential in {}: {e}", path.display());
    }
    Ok(())
}
