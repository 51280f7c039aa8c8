//! `kops create secret encryptionconfig|dockerconfig|ciliumpassword -f FILE|-
//! [--force]`, as kOps' command of that name (cmd/kops/create_secret*.go): the value is
//! checked for its kind and stored at `<cluster>/secrets/<name>` as kOps stores secrets
//! (JSON `{"Data":"<base64>"}`). The value is never printed, nor quoted in errors.
//!
//! `get secrets` lists the secrets' names (kOps' `-o plaintext` is left out: values are
//! never printed), `delete secret NAME...` deletes them; `get sshpublickeys` and `delete
//! sshpublickey` do the same for the admin SSH public keys.

use std::io::Read as _;
use std::path::PathBuf;

use anyhow::{Context as _, bail};
use bytes::Bytes;
use clap::{Args, Subcommand};
use kops_model::secrets;
use kops_statestore::{PutOptions, Store as _};

use crate::cli::{GetFormat, Global};
use crate::get::print_table;
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

/// `kops get secrets` flags.
#[derive(Debug, Args)]
pub struct GetSecretsArgs {
    /// Secrets to show (default: all)
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
    /// Output format (the names; values are never printed)
    #[arg(short = 'o', long, value_enum, default_value_t)]
    pub output: GetFormat,
}

/// `kops get secrets [NAME...]`: the names of the cluster's secrets.
pub async fn get_secrets(global: &Global, args: &GetSecretsArgs) -> anyhow::Result<()> {
    let cluster = state::cluster_name(None, global)?;
    let st = State::open(global).await?;
    st.cluster(&cluster).await?;
    let mut names = st
        .registry
        .list_secrets(&cluster)
        .await
        .with_context(|| format!("listing the secrets of cluster {cluster}"))?;
    if !args.names.is_empty() {
        if let Some(missing) = args.names.iter().find(|n| !names.contains(n)) {
            bail!("secret {missing:?} not found in cluster {cluster}");
        }
        names.retain(|n| args.names.contains(n));
    }
    if names.is_empty() {
        bail!("no secrets found in cluster {cluster}");
    }
    let items: Vec<serde_json::Value> = names
        .iter()
        .map(|n| serde_json::json!({ "name": n }))
        .collect();
    match args.output {
        GetFormat::Table => {
            let rows: Vec<Vec<String>> = names.iter().map(|n| vec![n.clone()]).collect();
            print_table(&["NAME"], &rows);
        }
        GetFormat::Json => println!("{}", serde_json::to_string_pretty(&items)?),
        GetFormat::Yaml => print!(
            "{}",
            kops_api::yaml::to_string(&serde_json::Value::Array(items))?
        ),
    }
    Ok(())
}

/// `kops delete secret` flags.
#[derive(Debug, Args)]
pub struct DeleteSecretArgs {
    /// Secrets to delete
    #[arg(value_name = "NAME", required = true)]
    pub names: Vec<String>,
}

/// `kops delete secret NAME...`: every name must exist, else nothing is deleted.
pub async fn delete_secrets(global: &Global, args: &DeleteSecretArgs) -> anyhow::Result<()> {
    let cluster = state::cluster_name(None, global)?;
    let st = State::open(global).await?;
    st.cluster(&cluster).await?;
    let names = st
        .registry
        .list_secrets(&cluster)
        .await
        .with_context(|| format!("listing the secrets of cluster {cluster}"))?;
    if let Some(missing) = args.names.iter().find(|n| !names.contains(n)) {
        bail!("secret {missing:?} not found in cluster {cluster}; nothing deleted");
    }
    st.locked(&cluster, "delete secret", async || {
        for name in &args.names {
            st.registry
                .delete_secret(&cluster, name)
                .await
                .with_context(|| format!("deleting secret {name} of cluster {cluster}"))?;
            println!("secret {name} of cluster {cluster} deleted");
        }
        Ok(())
    })
    .await
}

/// `kops get sshpublickeys` flags.
#[derive(Debug, Args)]
pub struct GetSshKeysArgs {
    /// Output format
    #[arg(short = 'o', long, value_enum, default_value_t)]
    pub output: GetFormat,
}

/// `kops get sshpublickeys`: the admin SSH public keys, by ID (fingerprint).
pub async fn get_ssh_public_keys(global: &Global, args: &GetSshKeysArgs) -> anyhow::Result<()> {
    let cluster = state::cluster_name(None, global)?;
    let st = State::open(global).await?;
    st.cluster(&cluster).await?;
    let keys = st
        .registry
        .list_ssh_public_keys(&cluster)
        .await
        .with_context(|| format!("listing the SSH public keys of cluster {cluster}"))?;
    // kOps' item: the fingerprint and the key line.
    let items: Vec<serde_json::Value> = keys
        .iter()
        .map(|(id, key)| serde_json::json!({ "ID": id, "PublicKey": key }))
        .collect();
    match args.output {
        GetFormat::Table => {
            if keys.is_empty() {
                bail!("no SSH public key found in cluster {cluster}");
            }
            let rows: Vec<Vec<String>> = keys.iter().map(|(id, _)| vec![id.clone()]).collect();
            print_table(&["ID"], &rows);
        }
        GetFormat::Json => println!("{}", serde_json::to_string_pretty(&items)?),
        GetFormat::Yaml => print!(
            "{}",
            kops_api::yaml::to_string(&serde_json::Value::Array(items))?
        ),
    }
    Ok(())
}

/// `kops delete sshpublickey`: removes the admin SSH public keys.
pub async fn delete_ssh_public_keys(global: &Global) -> anyhow::Result<()> {
    let cluster = state::cluster_name(None, global)?;
    let st = State::open(global).await?;
    st.cluster(&cluster).await?;
    let n = st
        .locked(&cluster, "delete sshpublickey", async || {
            st.registry
                .delete_ssh_public_keys(&cluster)
                .await
                .with_context(|| format!("deleting the SSH public keys of cluster {cluster}"))
        })
        .await?;
    if n == 0 {
        bail!("no SSH public key found in cluster {cluster}");
    }
    println!("Deleted {n} SSH public key(s) of cluster {cluster}");
    Ok(())
}
