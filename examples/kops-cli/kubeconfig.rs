//! `export kubeconfig`, and the Kubernetes client `validate` and `rolling-update` use: an
//! in-memory admin credential signed by the cluster's `kubernetes-ca`, as kOps builds one.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use anyhow::{Context as _, anyhow, bail};
use clap::Args;
use kops_api::{internal, v1alpha2};
use kops_model::day2::kubeconfig::{
    DEFAULT_ADMIN_LIFETIME, KubeconfigEntry, api_server_url, client_for, client_from_kubeconfig,
    issue_admin_credential, merge_kubeconfig, server_from_load_balancer,
};
use kops_model::pki;

use crate::cli::Global;
use crate::state::{self, State};

/// `kops export kubeconfig` flags.
#[derive(Debug, Args)]
pub struct ExportKubeconfigArgs {
    /// Cluster name (default: --name)
    pub cluster_name: Option<String>,
    /// Every cluster of the state store (the last one becomes the current context)
    #[arg(long, conflicts_with_all = ["cluster_name", "api_server"])]
    pub all: bool,
    #[command(flatten)]
    pub credentials: KubeconfigFlags,
    /// The kubeconfig file to merge into (default: $KUBECONFIG, else ~/.kube/config)
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Override the API server URL
    #[arg(long, value_name = "URL")]
    pub api_server: Option<String>,
}

/// How an exported kubeconfig reaches the cluster: `export kubeconfig`'s and `update
/// cluster`'s flags.
#[derive(Debug, Clone, Default, Args)]
pub struct KubeconfigFlags {
    /// Add an admin credential valid this long (default 18h); never stored in the state store
    #[arg(long, num_args = 0..=1, default_missing_value = "18h", value_name = "DURATION")]
    pub admin: Option<String>,
    /// Point the context at this existing kubeconfig user
    #[arg(long, value_name = "NAME", conflicts_with = "admin")]
    pub user: Option<String>,
    /// Use the cluster's internal API name (api.internal.<cluster>)
    #[arg(long)]
    pub internal: bool,
    /// Authenticate with `kops helpers kubectl-auth`, which kubectl runs for a
    /// short-lived certificate each time the last one expires: no lasting credential in
    /// the kubeconfig
    #[arg(long, conflicts_with_all = ["admin", "user"])]
    pub auth_plugin: bool,
}

/// Parses Go-style durations: `18h`, `90m`, `1h30m`, `45s`, `500ms`.
pub fn parse_duration(s: &str) -> anyhow::Result<Duration> {
    let bad = || anyhow!("invalid duration {s:?} (use e.g. 18h, 15m, 1h30m, 30s)");
    let mut total = Duration::ZERO;
    let mut rest = s.trim();
    if rest == "0" {
        return Ok(total);
    }
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .ok_or_else(bad)?;
        let n: f64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let secs = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return Err(bad()),
        };
        total += Duration::from_secs_f64(n * secs);
        rest = &rest[unit_len..];
    }
    Ok(total)
}

/// The OS user, for the certificate's CN.
pub(crate) fn os_user() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "unknown".into())
}

/// The address of the cluster's API load balancer, asked of its cloud (kOps'
/// `GetApiIngressStatus`): an external one before an internal one, the first in order,
/// with a warning when there are several alike; `None`, with a warning, when there is
/// none.
async fn load_balancer_address(
    global: &Global,
    st: &State,
    stored: &v1alpha2::Cluster,
    warn: bool,
) -> anyhow::Result<Option<String>> {
    let name = stored.name();
    let found = match stored.spec.cloud_provider.as_deref() {
        Some("aws") => {
            let cloud =
                crate::cloud::Cloud::open(st, global.mock_cloud, &crate::update::region(stored)?)
                    .await?;
            kops_model::aws::api_ingress(cloud.api.as_ref(), name)
                .await
                .with_context(|| format!("cluster {name}: in {}", cloud.description))?
        }
        Some("gce") => {
            let cloud = crate::gce::open(global, st, stored).await?;
            kops_model::gce::api_ingress(cloud.api.as_ref(), name)
                .await
                .with_context(|| format!("cluster {name}: in {}", cloud.description))?
        }
        Some("hetzner") => {
            let cloud = crate::hetzner::HetznerCloudHandle::open(global, st).await?;
            kops_model::hetzner::api_ingress(cloud.api.as_ref(), name)
                .await
                .with_context(|| format!("cluster {name}: in {}", cloud.description))?
        }
        _ => Vec::new(),
    };
    let Some(chosen) = kops_model::ApiIngress::choose(&found) else {
        if !warn {
            return Ok(None);
        }
        eprintln!(
            "warning: cluster {name}: found no API load balancer; its API name may not resolve from here"
        );
        return Ok(None);
    };
    let same_kind = found
        .iter()
        .filter(|f| f.internal == chosen.internal)
        .count();
    if same_kind > 1 && warn {
        let all: Vec<&str> = found.iter().map(|f| f.address.as_str()).collect();
        eprintln!(
            "warning: cluster {name}: several API addresses ({}); using {}",
            all.join(", "),
            chosen.address
        );
    }
    Ok(Some(chosen.address.clone()))
}

async fn entry(
    global: &Global,
    st: &State,
    name: &str,
    internal_name: bool,
    api_server: Option<&str>,
    admin: Option<Duration>,
    warn: bool,
) -> anyhow::Result<KubeconfigEntry> {
    let stored: v1alpha2::Cluster = st.cluster(name).await?.value;
    let ca = st
        .registry
        .get_keyset(name, "kubernetes-ca")
        .await
        .with_context(|| format!("reading keyset kubernetes-ca of cluster {name}"))?
        .value;
    let known = Known {
        stored: &stored,
        ca: &ca,
    };
    entry_of(
        global,
        st,
        name,
        known,
        internal_name,
        api_server,
        admin,
        warn,
    )
    .await
}

/// What a command has already read of a cluster: its stored spec and its `kubernetes-ca`
/// keyset, so that building its client reads neither again.
#[derive(Clone, Copy)]
pub struct Known<'a> {
    /// The stored spec.
    pub stored: &'a v1alpha2::Cluster,
    /// The `kubernetes-ca` keyset.
    pub ca: &'a kops_api::keyset::Keyset,
}

#[allow(clippy::too_many_arguments)]
async fn entry_of(
    global: &Global,
    st: &State,
    name: &str,
    known: Known<'_>,
    internal_name: bool,
    api_server: Option<&str>,
    admin: Option<Duration>,
    warn: bool,
) -> anyhow::Result<KubeconfigEntry> {
    let Known { stored, ca } = known;
    let cluster = internal::Cluster::try_from(stored)
        .with_context(|| format!("cluster {name}: converting the spec"))?;
    let public = cluster.spec.api.public_name.clone();
    let server = match api_server {
        Some(s) => s.to_owned(),
        // A name that cannot resolve from here: the load balancer's address instead.
        None if !internal_name && server_from_load_balancer(&cluster) => {
            match load_balancer_address(global, st, stored, warn).await? {
                Some(address) => format!("https://{address}"),
                None => api_server_url(name, public.as_deref(), false),
            }
        }
        None => api_server_url(name, public.as_deref(), internal_name),
    };
    let bundle = pki::trusted_certificates(ca)
        .with_context(|| format!("cluster {name}: keyset kubernetes-ca"))?;
    let mut e = KubeconfigEntry::new(name, server)
        .with_ca_pem(bundle)
        .with_tls_server_name(format!("api.internal.{name}"));
    if let Some(lifetime) = admin {
        let cred = issue_admin_credential(ca, &os_user(), lifetime, SystemTime::now())
            .with_context(|| format!("cluster {name}: minting the admin credential"))?;
        e = e.with_admin(cred);
    }
    Ok(e)
}

/// A client for the cluster's API with a fresh admin credential (kOps' default for
/// `validate` and `rolling-update`).
pub async fn admin_client(
    global: &Global,
    st: &State,
    name: &str,
    api_server: Option<&str>,
) -> anyhow::Result<kube::Client> {
    client_with(global, st, name, api_server, true).await
}

/// [`admin_client`] without the warnings about the API's address, from what the command
/// already read: for a probe whose failure is itself an answer (`update cluster` asking
/// the running version).
pub async fn admin_client_quiet(
    global: &Global,
    st: &State,
    name: &str,
    known: Known<'_>,
) -> anyhow::Result<kube::Client> {
    if global.use_kubeconfig {
        return client_with(global, st, name, None, false).await;
    }
    let lifetime = Some(DEFAULT_ADMIN_LIFETIME);
    let e = entry_of(global, st, name, known, false, None, lifetime, false).await?;
    client_for(&e)
        .await
        .with_context(|| format!("building the Kubernetes client for cluster {name}"))
}

async fn client_with(
    global: &Global,
    st: &State,
    name: &str,
    api_server: Option<&str>,
    warn: bool,
) -> anyhow::Result<kube::Client> {
    if global.use_kubeconfig {
        if api_server.is_some() {
            bail!("--use-kubeconfig and --api-server cannot be used together");
        }
        let path = kubeconfig_path(None)?;
        let hint = || {
            format!(
                "--use-kubeconfig: context {name} of {} (`kops export kubeconfig {name}` writes it)",
                path.display()
            )
        };
        let text = std::fs::read_to_string(&path).with_context(hint)?;
        return client_from_kubeconfig(&text, Some(name))
            .await
            .with_context(hint);
    }
    let e = entry(
        global,
        st,
        name,
        false,
        api_server,
        Some(DEFAULT_ADMIN_LIFETIME),
        warn,
    )
    .await?;
    client_for(&e)
        .await
        .with_context(|| format!("building the Kubernetes client for cluster {name}"))
}

fn kubeconfig_path(flag: Option<&PathBuf>) -> anyhow::Result<PathBuf> {
    if let Some(p) = flag {
        return Ok(p.clone());
    }
    if let Some(first) = std::env::var_os("KUBECONFIG")
        .as_ref()
        .and_then(|v| std::env::split_paths(v).next())
    {
        return Ok(first);
    }
    let home = std::env::var_os("HOME").ok_or_else(|| anyhow!("no --kubeconfig and no $HOME"))?;
    Ok(PathBuf::from(home).join(".kube").join("config"))
}

/// `kops export kubeconfig`.
pub async fn export_kubeconfig(global: &Global, args: &ExportKubeconfigArgs) -> anyhow::Result<()> {
    let st = State::open(global).await?;
    let names = if args.all {
        let names = st
            .registry
            .list_clusters()
            .await
            .with_context(|| format!("listing clusters in state store {}", st.url))?;
        if names.is_empty() {
            bail!("--all: no clusters in state store {}", st.url);
        }
        names
    } else {
        vec![state::cluster_name(args.cluster_name.as_deref(), global)?]
    };
    for name in &names {
        write_kubeconfig(
            global,
            &st,
            name,
            &args.credentials,
            args.kubeconfig.as_ref(),
            args.api_server.as_deref(),
        )
        .await?;
    }
    Ok(())
}

/// Merges cluster `name`'s context, with the credential `flags` ask for, into the
/// kubeconfig file (`path`, else `$KUBECONFIG`, else `~/.kube/config`) and makes it
/// current.
pub async fn write_kubeconfig(
    global: &Global,
    st: &State,
    name: &str,
    flags: &KubeconfigFlags,
    path: Option<&PathBuf>,
    api_server: Option<&str>,
) -> anyhow::Result<()> {
    let admin = flags
        .admin
        .as_deref()
        .map(parse_duration)
        .transpose()
        .context("--admin")?;
    if admin.is_some_and(|d| d.is_zero()) {
        bail!("--admin: the lifetime must be positive");
    }
    let mut e = entry(global, st, name, flags.internal, api_server, admin, true).await?;
    if let Some(u) = &flags.user {
        e = e.with_user(u.clone());
    }
    if flags.auth_plugin {
        let state = global.state.clone().unwrap_or_else(|| st.url.clone());
        e = e.with_exec(
            "kops",
            vec![
                "helpers".into(),
                "kubectl-auth".into(),
                format!("--cluster={name}"),
                format!("--state={state}"),
            ],
        );
    }
    let path = kubeconfig_path(path)?;
    let existing = match std::fs::read_to_string(&path) {
        Ok(t) => Some(t),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => {
            return Err(anyhow::Error::new(err).context(format!("reading {}", path.display())));
        }
    };
    let text = merge_kubeconfig(existing.as_deref(), &e)
        .with_context(|| format!("merging into {}", path.display()))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    write_private(&path, &text).with_context(|| format!("writing {}", path.display()))?;
    eprintln!("kOps has set your kubectl context to {name}");
    if admin.is_none() && flags.user.is_none() && !flags.auth_plugin {
        eprintln!(
            "Exported kubeconfig with no user authentication; use --admin, --user or --auth-plugin flags with `kops export kubeconfig`"
        );
    }
    Ok(())
}

pub(crate) fn write_private(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        opts.mode(0o600);
    }
    opts.open(path)?.write_all(text.as_bytes())
}
