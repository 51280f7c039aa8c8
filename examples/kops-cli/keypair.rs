//! Keypair rotation: `create keypair`, `promote keypair`, `distrust keypair`
//! and `get keypairs`, as kOps' commands of those names (cmd/kops/*_keypair*.go),
//! over the keysets in `<cluster>/pki/private/<name>/keyset.yaml`.
//!
//! Private keys are never printed: `get keypairs` shows ids, dates and flags.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, bail};
use clap::{Args, Subcommand};
use kops_api::keyset::{Keyset, KeysetType};
use kops_model::pki;
use kops_statestore::{PutOptions, Version};

use crate::cli::{GetFormat, Global};
use crate::get::print_table;
use crate::state::{self, State};

/// `kops create keypair`.
#[derive(Debug, Args)]
pub struct CreateKeypairArgs {
    /// Keyset to add a keypair to (e.g. kubernetes-ca, service-account), or `all`
    #[arg(value_name = "KEYSET")]
    pub keyset: String,
    /// Make the new keypair the primary (required for an empty keyset)
    #[arg(long)]
    pub primary: bool,
}

/// `kops promote ...`.
#[derive(Debug, Args)]
pub struct PromoteArgs {
    #[command(subcommand)]
    pub command: PromoteCommand,
}

#[derive(Debug, Subcommand)]
pub enum PromoteCommand {
    /// Make a keypair the primary of its keyset (default: the newest trusted one)
    Keypair(PromoteKeypairArgs),
}

#[derive(Debug, Args)]
pub struct PromoteKeypairArgs {
    /// Keyset, or `all`
    #[arg(value_name = "KEYSET")]
    pub keyset: String,
    /// Id of the keypair to promote (default: the newest trusted one with a private key)
    #[arg(value_name = "ID")]
    pub id: Option<String>,
}

/// `kops distrust ...`.
#[derive(Debug, Args)]
pub struct DistrustArgs {
    #[command(subcommand)]
    pub command: DistrustCommand,
}

#[derive(Debug, Subcommand)]
pub enum DistrustCommand {
    /// Stop trusting keypairs (default: every one older than the primary)
    Keypair(DistrustKeypairArgs),
}

#[derive(Debug, Args)]
pub struct DistrustKeypairArgs {
    /// Keyset, or `all`
    #[arg(value_name = "KEYSET")]
    pub keyset: String,
    /// Ids of the keypairs to distrust (default: those older than the primary)
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
}

#[derive(Debug, Args)]
pub struct TrustArgs {
    #[command(subcommand)]
    pub command: TrustCommand,
}

#[derive(Debug, Subcommand)]
pub enum TrustCommand {
    /// Trust distrusted keypairs again (undoes `distrust keypair`)
    Keypair(TrustKeypairArgs),
}

#[derive(Debug, Args)]
pub struct TrustKeypairArgs {
    /// Keyset
    #[arg(value_name = "KEYSET")]
    pub keyset: String,
    /// Ids of the keypairs to trust again
    #[arg(value_name = "ID", required = true)]
    pub ids: Vec<String>,
}

/// `kops get keypairs`.
#[derive(Debug, Args)]
pub struct GetKeypairsArgs {
    /// Keysets to show (default: all)
    #[arg(value_name = "KEYSET")]
    pub keysets: Vec<String>,
    /// Also show distrusted keypairs
    #[arg(long)]
    pub distrusted: bool,
    /// Output format
    #[arg(short, long, value_enum, default_value = "table")]
    pub output: GetFormat,
}

/// The keysets a command acts on: `all` (every rotatable keyset) or one name.
async fn targets(st: &State, cluster: &str, keyset: &str) -> anyhow::Result<Vec<String>> {
    if !pki::is_rotatable(keyset) {
        bail!(
            "rotating keyset {keyset:?} is not supported (only service-account and *-ca keysets)"
        );
    }
    if keyset != "all" {
        return Ok(vec![keyset.to_string()]);
    }
    let names = st
        .registry
        .list_keysets(cluster)
        .await
        .with_context(|| format!("listing the keysets of cluster {cluster}"))?;
    Ok(names.into_iter().filter(|n| pki::is_rotatable(n)).collect())
}

async fn read(st: &State, cluster: &str, name: &str) -> anyhow::Result<Option<(Keyset, Version)>> {
    match st.registry.get_keyset(cluster, name).await {
        Ok(v) => Ok(Some((v.value, v.version))),
        Err(kops_statestore::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(anyhow::Error::new(e).context(format!("reading keyset {name}"))),
    }
}

async fn write(
    st: &State,
    cluster: &str,
    ks: &Keyset,
    version: Option<Version>,
) -> anyhow::Result<()> {
    let options = match version {
        Some(v) => PutOptions::update(v),
        None => PutOptions::create(),
    };
    st.registry
        .put_keyset(cluster, ks, options)
        .await
        .with_context(|| format!("writing keyset {}", ks.name()))?;
    Ok(())
}

/// `kops create keypair KEYSET|all [--primary]`.
pub async fn create_keypair(global: &Global, args: &CreateKeypairArgs) -> anyhow::Result<()> {
    let st = State::open(global).await?;
    let cluster = state::cluster_name(None, global)?;
    st.cluster(&cluster).await?;
    st.locked(&cluster, "create keypair", async || {
        for name in targets(&st, &cluster, &args.keyset).await? {
            let (mut ks, version) = match read(&st, &cluster, &name).await? {
                Some((ks, v)) => (ks, Some(v)),
                None => (Keyset::new(&name, KeysetType::Keypair), None),
            };
            let id = pki::create_keypair(&mut ks, args.primary, SystemTime::now())
                .with_context(|| format!("creating a keypair in keyset {name}"))?;
            write(&st, &cluster, &ks, version).await?;
            println!("Created {name} {id}");
        }
        Ok(())
    })
    .await
}

/// `kops promote keypair KEYSET|all [ID]`.
pub async fn promote_keypair(global: &Global, args: &PromoteKeypairArgs) -> anyhow::Result<()> {
    let st = State::open(global).await?;
    let cluster = state::cluster_name(None, global)?;
    st.cluster(&cluster).await?;
    if args.keyset == "all" && args.id.is_some() {
        bail!("promote keypair all takes no keypair id");
    }
    st.locked(&cluster, "promote keypair", async || {
        for name in targets(&st, &cluster, &args.keyset).await? {
            let Some((mut ks, version)) = read(&st, &cluster, &name).await? else {
                bail!("keyset {name} not found in cluster {cluster}");
            };
            let current = ks.spec.primary_id.clone().unwrap_or_default();
            match pki::promote_keypair(&mut ks, args.id.as_deref())
                .with_context(|| format!("promoting a keypair of keyset {name}"))?
            {
                Some(id) => {
                    write(&st, &cluster, &ks, Some(version)).await?;
                    println!("Promoted {name} {id}");
                }
                None => println!("No {name} keypair newer than current primary {current}"),
            }
        }
        Ok(())
    })
    .await
}

/// `kops distrust keypair KEYSET|all [IDS...]`.
pub async fn distrust_keypair(global: &Global, args: &DistrustKeypairArgs) -> anyhow::Result<()> {
    let st = State::open(global).await?;
    let cluster = state::cluster_name(None, global)?;
    st.cluster(&cluster).await?;
    if args.keyset == "all" && !args.ids.is_empty() {
        bail!("distrust keypair all takes no keypair ids");
    }
    st.locked(&cluster, "distrust keypair", async || {
        for name in targets(&st, &cluster, &args.keyset).await? {
            let Some((mut ks, version)) = read(&st, &cluster, &name).await? else {
                bail!("keyset {name} not found in cluster {cluster}");
            };
            let done = pki::distrust_keypair(&mut ks, &args.ids, SystemTime::now())
                .with_context(|| format!("distrusting keypairs of keyset {name}"))?;
            if done.is_empty() {
                eprintln!("No {name} keypairs older than the primary.");
                continue;
            }
            write(&st, &cluster, &ks, Some(version)).await?;
            for id in done {
                println!("Distrusted {name} {id}");
            }
        }
        Ok(())
    })
    .await
}

/// `kops trust keypair KEYSET IDS...`.
pub async fn trust_keypair(global: &Global, args: &TrustKeypairArgs) -> anyhow::Result<()> {
    let st = State::open(global).await?;
    let cluster = state::cluster_name(None, global)?;
    st.cluster(&cluster).await?;
    let name = &args.keyset;
    st.locked(&cluster, "trust keypair", async || {
        let Some((mut ks, version)) = read(&st, &cluster, name).await? else {
            bail!("keyset {name} not found in cluster {cluster}");
        };
        let done = pki::trust_keypair(&mut ks, &args.ids)
            .with_context(|| format!("trusting keypairs of keyset {name}"))?;
        if done.is_empty() {
            eprintln!("No {name} keypair among them was distrusted.");
            return Ok(());
        }
        write(&st, &cluster, &ks, Some(version)).await?;
        for id in done {
            println!("Trusted {name} {id}");
        }
        Ok(())
    })
    .await
}

fn date(unix: i64) -> String {
    let t = UNIX_EPOCH + Duration::from_secs(unix.max(0) as u64);
    rfc3339(t)[..10].to_string()
}

fn rfc3339(t: SystemTime) -> String {
    // One formatter for every timestamp: the PKI's (RFC 3339 UTC seconds).
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0) as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// `kops get keypairs [KEYSETS...] [--distrusted] [-o table|yaml|json]`.
pub async fn get_keypairs(global: &Global, args: &GetKeypairsArgs) -> anyhow::Result<()> {
    let st = State::open(global).await?;
    let cluster = state::cluster_name(None, global)?;
    st.cluster(&cluster).await?;
    let mut keysets = BTreeMap::new();
    let names = st
        .registry
        .list_keysets(&cluster)
        .await
        .with_context(|| format!("listing the keysets of cluster {cluster}"))?;
    for name in names {
        if !args.keysets.is_empty() && !args.keysets.contains(&name) {
            continue;
        }
        if let Some((ks, _)) = read(&st, &cluster, &name).await? {
            keysets.insert(name, ks);
        }
    }
    let rows = pki::list_keypairs(&keysets, &args.keysets, args.distrusted)
        .context("reading the keypairs' certificates")?;
    if rows.is_empty() {
        bail!("no keypairs found");
    }
    let flag = |b: bool| if b { "*".to_string() } else { String::new() };
    match args.output {
        GetFormat::Table => {
            let mut header = vec!["NAME", "ID", "ISSUED", "EXPIRES"];
            if args.distrusted {
                header.push("DISTRUSTED");
            }
            header.extend(["PRIMARY", "HASPRIVATE"]);
            let table: Vec<Vec<String>> = rows
                .iter()
                .map(|r| {
                    let mut row = vec![
                        r.name.clone(),
                        r.id.clone(),
                        r.certificate
                            .as_ref()
                            .map(|c| date(c.not_before))
                            .unwrap_or_default(),
                        r.certificate
                            .as_ref()
                            .map(|c| date(c.not_after))
                            .unwrap_or_default(),
                    ];
                    if args.distrusted {
                        row.push(
                            r.distrust_timestamp
                                .as_deref()
                                .map(|t| t.chars().take(10).collect())
                                .unwrap_or_default(),
                        );
                    }
                    row.push(flag(r.is_primary));
                    row.push(flag(r.has_private_key));
                    row
                })
                .collect();
            print_table(&header, &table);
        }
        GetFormat::Yaml | GetFormat::Json => {
            // kOps' keypairItem fields; empty ones left out as its omitempty does.
            let items: Vec<serde_json::Value> = rows
                .iter()
                .map(|r| {
                    let mut m = serde_json::Map::new();
                    m.insert("name".into(), r.name.clone().into());
                    m.insert("id".into(), r.id.clone().into());
                    if let Some(t) = &r.distrust_timestamp {
                        m.insert("distrustTimestamp".into(), t.clone().into());
                    }
                    if r.is_primary {
                        m.insert("isPrimary".into(), true.into());
                    }
                    if let Some(c) = &r.certificate {
                        m.insert("subject".into(), c.subject.clone().into());
                        m.insert("issuer".into(), c.issuer.clone().into());
                        if c.is_ca {
                            m.insert("isCA".into(), true.into());
                        }
                        let ts =
                            |s: i64| rfc3339(UNIX_EPOCH + Duration::from_secs(s.max(0) as u64));
                        m.insert("notBefore".into(), ts(c.not_before).into());
                        m.insert("notAfter".into(), ts(c.not_after).into());
                        if c.key_bits > 0 {
                            m.insert("keyLength".into(), c.key_bits.into());
                        }
                    }
                    if r.has_private_key {
                        m.insert("hasPrivateKey".into(), true.into());
                    }
                    serde_json::Value::Object(m)
                })
                .collect();
            if args.output == GetFormat::Yaml {
                print!("{}", kops_api::yaml::to_string(&items)?);
            } else {
                println!("{}", serde_json::to_string(&items)?);
            }
        }
    }
    Ok(())
}
