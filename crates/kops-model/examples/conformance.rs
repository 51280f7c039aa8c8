//! Renders one kOps conformance case with the Terraform target, as kOps' integration
//! harness does (`kops update cluster --target terraform` with state in memory).
//!
//! ```text
//! cargo run --release -p kops-model --example conformance -- CASE_DIR OUT_DIR
//! ```
//!
//! `CASE_DIR` holds `in-v1alpha2.yaml`, `case.yaml` and (when `sshKey: true`)
//! `id_rsa.pub`; the cloud is seeded from `CASE_DIR/../../fixtures/mock-cloud.yaml` and
//! images come from `fixtures/channels/stable`. `OUT_DIR` receives `kubernetes.tf` and
//! `data/`. Exits non-zero with the error chain when the case cannot be rendered.
//!
//! `KOPS_CONFORMANCE_KOPS_IDENTICAL=1` renders Hetzner cases with the library's
//! kOps-identical files (`HetznerModelContext::with_kops_identical_files`: the API token
//! in data files, the autoscaler's SSH key empty, as kOps writes them); by default they
//! are rendered as `kops update cluster --target terraform` renders them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use kops_api::channel::Channel;
use kops_api::manifest::{self, Object};
use kops_mock::MockAws;
use kops_mock::fixture::Fixture;
use kops_model::aws::cloud::AwsCloud;
use kops_model::aws::{DiscoverOptions, UpdateCluster, UpdateOptions, discover};
use kops_tasks::LifecycleOverrides;
use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CaseFile {
    #[serde(default)]
    cluster_name: Option<String>,
    #[serde(default)]
    ssh_key: bool,
    #[serde(default)]
    lifecycle_overrides: Vec<String>,
    #[serde(default)]
    cilium_etcd: bool,
    /// Variables set before rendering, as kOps' harness sets them. The library reads no
    /// environment: each variable the model knows is passed as its option
    /// (`HCLOUD_TOKEN`: the Hetzner context's token), and an unknown one is an error.
    #[serde(default)]
    env: std::collections::BTreeMap<String, String>,
}

/// The state store kOps' harness prepares: the fixture keysets (`fixtures/keysets`, the
/// `*-cilium` ones only when the case says `ciliumEtcd: true`) in an in-memory store, at
/// `pki/private/<name>/keyset.yaml` under the cluster's config base. Returns the store
/// and its root URL (the config base's parent).
fn fixture_state_store(
    fixtures: &Path,
    config_base: &str,
    cilium: bool,
) -> anyhow::Result<(std::sync::Arc<kops_statestore::MemoryStore>, String)> {
    use kops_api::keyset::{Keyset, KeysetType};
    use kops_statestore::{PutOptions, Store as _};
    let base = config_base.trim_end_matches('/');
    let (root, rel) = base
        .rsplit_once('/')
        .with_context(|| format!("configBase {base:?} has no parent"))?;
    let store = std::sync::Arc::new(kops_statestore::MemoryStore::new());
    let dir = fixtures.join("keysets");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .into_string()
                .ok()
                .and_then(|n| n.strip_suffix(".primary.crt").map(str::to_owned))
        })
        .collect();
    names.sort();
    let now = std::time::SystemTime::now();
    for name in names {
        if name.ends_with("-cilium") && !cilium {
            continue;
        }
        let mut ks = Keyset::new(&name, KeysetType::Keypair);
        for (which, primary) in [("primary", true), ("secondary", false)] {
            let crt = std::fs::read_to_string(dir.join(format!("{name}.{which}.crt")))?;
            let key = std::fs::read_to_string(dir.join(format!("{name}.{which}.key")))?;
            let key = kops_model::pki::PrivateKeyPem::new(key)?;
            kops_model::pki::add_item(&mut ks, &crt, Some(&key), primary, now)
                .with_context(|| format!("fixture keyset {name} ({which})"))?;
        }
        let path = format!("{rel}/{}", kops_model::pki::keyset_path(&name));
        block_on(store.put(
            &path,
            ks.to_yaml()?.into_bytes().into(),
            PutOptions::overwrite(),
        ))?
        .with_context(|| format!("storing {path}"))?;
    }
    Ok((store, root.to_owned()))
}

/// The mock cloud seeded from `fixtures/mock-cloud.yaml`, with the partition kOps' test
/// harness reports (`aws-test`).
fn seeded_cloud(fixtures: &Path) -> anyhow::Result<MockAws> {
    let path = fixtures.join("mock-cloud.yaml");
    if !path.is_file() {
        bail!(
            "the mock-cloud fixture {} is missing (expected CASE_DIR/../../fixtures/mock-cloud.yaml)",
            path.display()
        );
    }
    let fixture = Fixture::from_file(&path)?;
    let cloud = MockAws::with_options(fixture.options().with_partition("aws-test"));
    fixture
        .apply(&cloud)
        .with_context(|| format!("seeding the mock cloud from {}", path.display()))?;
    Ok(cloud)
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn block_on<F: std::future::Future>(f: F) -> anyhow::Result<F::Output> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .context("starting a tokio runtime")?;
    Ok(rt.block_on(f))
}

fn run() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(case_dir), Some(out_dir)) = (args.next(), args.next()) else {
        bail!("usage: conformance CASE_DIR OUT_DIR");
    };
    let case_dir = PathBuf::from(case_dir);
    let out_dir = PathBuf::from(out_dir);
    let fixtures = case_dir.join("../../fixtures");

    let case: CaseFile = match std::fs::read_to_string(case_dir.join("case.yaml")) {
        Ok(t) => serde_saphyr::from_str(&t).context("parsing case.yaml")?,
        Err(_) => CaseFile::default(),
    };
    let input_path = case_dir.join("in-v1alpha2.yaml");
    let input =
        std::fs::read(&input_path).with_context(|| format!("reading {}", input_path.display()))?;
    let channel_text = std::fs::read_to_string(fixtures.join("channels/stable"))
        .context("reading the stable channel")?;
    let channel = Channel::parse(&channel_text).context("parsing the stable channel")?;
    let mut cluster = None;
    let mut groups = Vec::new();
    let mut additional = Vec::new();
    for object in manifest::parse(&input, &input_path.display().to_string())? {
        match object {
            Object::Cluster(c) => cluster = Some(c),
            Object::InstanceGroup(ig) => groups.push(ig),
            Object::Other(o) => additional.push(o.value),
            _ => {}
        }
    }
    let Some(cluster) = cluster else {
        bail!("{}: no Cluster object", input_path.display());
    };
    if let Some(expected) = &case.cluster_name
        && cluster.name() != expected
    {
        bail!(
            "case.yaml names cluster {expected}, the manifest {}",
            cluster.name()
        );
    }

    let config_base = cluster
        .spec
        .config_base
        .clone()
        .context("the case's cluster has no configBase")?;
    let (store, root) = fixture_state_store(&fixtures, &config_base, case.cilium_etcd)?;
    let mut opts = DiscoverOptions::default()
        .with_channel(channel)
        .with_state_store(store, root)
        .with_additional_objects(additional);
    if case.ssh_key {
        let key =
            std::fs::read_to_string(case_dir.join("id_rsa.pub")).context("reading id_rsa.pub")?;
        opts = opts.with_ssh_public_key(key);
    }
    let mut overrides = LifecycleOverrides::new();
    if !case.lifecycle_overrides.is_empty() {
        overrides = LifecycleOverrides::parse(&case.lifecycle_overrides.join(","))
            .context("parsing lifecycleOverrides")?;
    }
    if cluster.spec.cloud_provider.as_deref() == Some("hetzner") {
        let mut ctx = block_on(kops_model::hetzner::discover(&cluster, &groups, &opts))?
            .context("completing the Hetzner cluster")?;
        for (k, v) in &case.env {
            match k.as_str() {
                "HCLOUD_TOKEN" => ctx = ctx.with_token(v.clone()),
                other => bail!("case.yaml env: {other} is not a variable the renderer knows"),
            }
        }
        if std::env::var_os("KOPS_CONFORMANCE_KOPS_IDENTICAL").is_some_and(|v| v == "1") {
            ctx = ctx.with_kops_identical_files();
        }
        kops_model::hetzner::render_terraform(&ctx, &overrides)?.write_to(&out_dir)?;
        return Ok(());
    }
    if cluster.spec.cloud_provider.as_deref() == Some("gce") {
        return render_gce(&fixtures, &cluster, &groups, &opts, &overrides, &out_dir);
    }
    let mock = seeded_cloud(&fixtures)?;
    // Through the cloud trait (MockAws' own methods are the AWS operations).
    let cloud: &dyn AwsCloud = &mock;
    let ctx = block_on(discover(cloud, &cluster, &groups, &opts))?
        .context("discovering the cluster in the mock cloud")?;

    let update = UpdateCluster::new(
        ctx,
        UpdateOptions::default().with_lifecycle_overrides(overrides),
    )?;
    let output = block_on(update.render_terraform())??;
    output.write_to(&out_dir)?;
    Ok(())
}

/// A GCE case: the GCE mock seeded from the fixture's `gce` section, the GCE model, the
/// Terraform target.
fn render_gce(
    fixtures: &Path,
    cluster: &kops_api::v1alpha2::Cluster,
    groups: &[kops_api::v1alpha2::InstanceGroup],
    opts: &DiscoverOptions,
    overrides: &LifecycleOverrides,
    out_dir: &Path,
) -> anyhow::Result<()> {
    let path = fixtures.join("mock-cloud.yaml");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let mock = kops_mock::gce::MockGce::from_fixture(&text).map_err(anyhow::Error::msg)?;
    let cloud: &dyn kops_model::gce::cloud::GceCloud = &mock;
    let ctx = block_on(kops_model::gce::discover(cloud, cluster, groups, opts))?
        .context("discovering the cluster in the GCE mock cloud")?;
    let output = kops_model::gce::render_terraform(&ctx, overrides)?;
    output.write_to(out_dir)?;
    Ok(())
}
