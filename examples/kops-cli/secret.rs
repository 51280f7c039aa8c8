//! `kops create secret encryptionconfig|dockerconfig|ciliumpassword -f FILE|-
//! [--force]`, as kOps' command of that name (cmd/kops/create_secret*.go): the value is
//! checked for its kind and stored at `<cluster>/secrets/<name>` as kOps stores secrets
//! (JSON `{"Data":"<base64>"}`). The value is never printed, nor quoted in errors.

use std::io::Read as _;
use std::path::PathBuf;

use anyhow::{Context as _, bail};
use bytes::Bytes;
use clap::{Args, Subcommand};
use kops_model::secrets;
use kops_statestore::{PutOptions, Store as _};

use crate::cli::Global;
use crate::state::{self, State};

/// `kops create secret ...`.
#[derive(Debug, Args)]
pub struct CreateSecretArgs {
    #[command(subcommand)]
    pub command: SecretKind,
}

#[derive(Debug, Subcommand)]
pub enum SecretKind {
    /// The API server's encryption-at-rest configuration (an EncryptionConfiguration)
    Encryptionconfig(SecretValueArgs),
    /// A docker config.json the nodes pull images with
    Dockerconfig(SecretValueArgs),
    /// The password Cilium's IPsec uses
    Ciliumpassword(SecretValueArgs),
}

/// Where the secret's value comes from.
#[derive(Debug, Args)]
pub struct SecretValueArgs {
    /// File holding the value (`-` for standard input)
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub filename: PathBuf,
    /// Replace the secret if it exists
    #[arg(long)]
    pub force: bool,
}

/// `kops create secret KIND -f FILE [--force]`.
pub async fn create_secret(global: &Global, args: &CreateSecretArgs) -> anyhow::Result<()> {
    let (kind, value_args) = match &args.command {
        SecretKind::Encryptionconfig(a) => ("encryptionconfig", a),
        SecretKind::Dockerconfig(a) => ("dockerconfig", a),
        SecretKind::Ciliumpassword(a) => ("ciliumpassword", a),
    };
    let mut value = Vec::new();
    if value_args.filename.as_os_str() == "-" {
        std::io::stdin()
            .read_to_end(&mut value)
            .context("reading the secret from standard input")?;
    } else {
        value = std::fs::read(&value_args.filename)
            .with_context(|| format!("reading {}", value_args.filename.display()))?;
    }
    secrets::validate_secret(kind, &value).with_context(|| {
        format!(
            "{}: not a valid {kind} secret",
            value_args.filename.display()
        )
    })?;
    let st = State::open(global).await?;
    let cluster = state::cluster_name(None, global)?;
    st.cluster(&cluster).await?;
    let path = format!("{cluster}/{}", secrets::secret_path(kind));
    let options = if value_args.force {
        PutOptions::overwrite()
    } else {
        PutOptions::create()
    };
    match st
        .store()
        .put(&path, Bytes::from(secrets::encode_secret(&value)), options)
        .await
    {
        Ok(_) => {}
        Err(kops_statestore::Error::AlreadyExists { .. }) => {
            bail!("secret {kind} of cluster {cluster} already exists (use --force to replace it)")
        }
        Err(e) => {
            return Err(anyhow::Error::new(e).context(format!("writing secret {kind}")));
        }
    }
    println!("secret {kind} of cluster {cluster} stored");
    Ok(())
}
