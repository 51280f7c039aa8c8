//! `update cluster`: the library's discovery and update workflow
//! ([`kops_model::aws::discover`], [`kops_model::aws::UpdateCluster`]) with the CLI's
//! flags, output and the mock cloud's journal.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context as _, anyhow, bail};
use kops_api::{internal, v1alpha2};
use kops_model::aws::{
    ApplyOptions, DiscoverOptions, ModelContext, UpdateCluster, UpdateOptions, discover,
};
use kops_tasks::{ExecutorOptions, LifecycleOverrides};

use crate::cli::{Global, PlanFormat, Target, UpdateClusterArgs};
use crate::cloud::Cloud;
use crate::output;
use crate::spec;
use crate::state::{self, State};

/// What the model needs, looked up: the cloud and the model context.
pub struct Prepared {
    /// The cloud.
    pub cloud: Cloud,
    /// The model context.
    pub ctx: ModelContext,
}

/// The region of a stored cluster (from its subnets' zones), or an error naming it.
pub fn region(cluster: &v1alpha2::Cluster) -> anyhow::Result<String> {
    let c = internal::Cluster::try_from(cluster)
        .with_context(|| format!("cluster {}: converting the spec", cluster.name()))?;
    c.region().ok_or_else(|| {
        anyhow!(
            "cluster {}: spec.subnets: no zone to take the region from",
            cluster.name()
        )
    })
}

/// Loads the cluster, opens its cloud and discovers the model context.
pub async fn prepare(global: &Global, st: &State, name: &str) -> anyhow::Result<Prepared> {
    let stored = st.cluster(name).await?.value;
    prepare_stored(global, st, name, &stored).await
}

/// [`prepare`] of a cluster whose stored spec the command has read.
async fn prepare_stored(
    global: &Global,
    st: &State,
    name: &str,
    stored: &v1alpha2::Cluster,
) -> anyhow::Result<Prepared> {
    let groups: Vec<v1alpha2::InstanceGroup> = st.groups(name).await?;
    let provider = stored.spec.cloud_provider.clone().unwrap_or_default();
    if provider != "aws" {
        bail!("cluster {name}: spec.cloudProvider {provider:?}: this command supports AWS only");
    }
    let cloud = Cloud::open(st, global.mock_cloud, &region(stored)?).await?;
    let opts = discover_options(st, name).await?;
    let ctx = discover(cloud.api.as_ref(), stored, &groups, &opts)
        .await
        .with_context(|| format!("cluster {name}: discovering it in {}", cloud.description))?;
    Ok(Prepared { cloud, ctx })
}

/// What discovery reads of the stored cluster `name` besides its spec (either cloud's):
/// the channel, the state store its files go to, its additional objects and its first
/// SSH public key.
pub async fn discover_options(st: &State, name: &str) -> anyhow::Result<DiscoverOptions> {
    let additional = st
        .registry
        .get_additional_objects(name)
        .await
        .with_context(|| format!("reading the additional objects of cluster {name}"))?;
    let mut opts = DiscoverOptions::default()
        .with_channel(spec::channel()?)
        .with_state_store(st.store().clone(), st.url.clone())
        .with_additional_objects(additional);
    let keys = st
        .registry
        .list_ssh_public_keys(name)
        .await
        .with_context(|| format!("reading the SSH public keys of cluster {name}"))?;
    if let Some((_, key)) = keys.into_iter().next() {
        opts = opts.with_ssh_public_key(key);
    }
    Ok(opts)
}

fn overrides(args: &UpdateClusterArgs) -> anyhow::Result<LifecycleOverrides> {
    if args.lifecycle_overrides.is_empty() {
        return Ok(LifecycleOverrides::new());
    }
    LifecycleOverrides::parse(&args.lifecycle_overrides.join(",")).context("--lifecycle-overrides")
}

/// The library's update options for these flags (either cloud).
pub fn update_options(global: &Global, args: &UpdateClusterArgs) -> anyhow::Result<UpdateOptions> {
    if args.target == Target::Terraform
        && !(args.instance_groups.is_empty() && args.roles.is_empty())
    {
        bail!(
            "--instance-group and --instance-group-roles cannot be used with --target terraform: the configuration would leave out the other groups, and applying it would delete them"
        );
    }
    if args.backend.terraform_backend.is_some() && args.target != Target::Terraform {
        bail!("--terraform-backend is for --target terraform");
    }
    if args.target == Target::Terraform && args.phase.is_some() {
        bail!(
            "--phase cannot be used with --target terraform: the configuration would leave out the other phases, and applying it would delete them"
        );
    }
    let phase = args
        .phase
        .as_deref()
        .map(kops_model::Phase::parse)
        .transpose()
        .context("--phase")?;
    Ok(UpdateOptions::default()
        .with_lifecycle_overrides(overrides(args)?)
        .with_lock_request(state::lock_request("update cluster"))
        // The mock's machines read nothing: a local state store is fine there.
        .with_unreadable_config_base(global.mock_cloud)
        .with_instance_groups(args.instance_groups.clone())
        .with_instance_group_roles(crate::rolling::parse_roles(&args.roles)?)
        .with_phase(phase)
        .with_refresh(args.refresh))
}

/// `kops update cluster`; returns the exit code.
///
/// With `--yes` the cluster's lock is taken first and held through discovery, plan,
/// apply and saving the mock cloud, so two concurrent runs never plan against the same
/// cloud: the second exits 1 naming the holder.
pub async fn update_cluster(global: &Global, args: &UpdateClusterArgs) -> anyhow::Result<u8> {
    // One run, one cloud client: asking the control plane's version, the plan, the apply
    // and the kubeconfig's load balancer share the first one opened.
    let _reuse = crate::cloud::reuse_opened();
    let name = state::cluster_name(args.cluster_name.as_deref(), global)?;
    let st = State::open(global).await?;
    if args.yes && args.target == Target::Direct {
        // The spec is read once, under the lock (a missing cluster is named there, and
        // the lock released).
        let mut lock = st.lock(&name, "update cluster").await?;
        let result = update_locked(global, args, &st, &name, Some(&mut lock)).await;
        let released = lock
            .release()
            .await
            .with_context(|| format!("releasing the lock of cluster {name}"));
        let code = result?;
        released?;
        return Ok(code);
    }
    update_locked(global, args, &st, &name, None).await
}

async fn update_locked(
    global: &Global,
    args: &UpdateClusterArgs,
    st: &State,
    name: &str,
    lock: Option<&mut kops_statestore::Lock>,
) -> anyhow::Result<u8> {
    let stored = st.cluster(name).await?.value;
    if stored.spec.cloud_provider.as_deref() == Some("hetzner") {
        let groups: Vec<v1alpha2::InstanceGroup> = st.groups(name).await?;
        let options = update_options(global, args)?;
        return crate::hetzner::update_cluster(global, args, st, &stored, &groups, options, lock)
            .await;
    }
    if stored.spec.cloud_provider.as_deref() == Some("gce") {
        let groups: Vec<v1alpha2::InstanceGroup> = st.groups(name).await?;
        let options = update_options(global, args)?;
        let asks = !(args.ignore_kubelet_version_skew || global.mock_cloud);
        let ca = match asks {
            true => st.registry.get_keyset(name, "kubernetes-ca").await.ok(),
            false => None,
        };
        let running = match &ca {
            Some(ca) => {
                let known = crate::kubeconfig::Known {
                    stored: &stored,
                    ca: &ca.value,
                };
                control_plane_version(global, st, name, known, args).await
            }
            None => None,
        };
        return crate::gce::update_cluster(
            global,
            args,
            st,
            &stored,
            &groups,
            (options, running),
            lock,
        )
        .await;
    }
    let options = update_options(global, args)?;
    let backend = terraform_backend(args, &region(&stored)?)?;
    let Prepared { cloud, mut ctx } = prepare_stored(global, st, name, &stored).await?;
    // Asked with the keyset discovery read: nothing is read twice.
    let running = match ctx.keysets.get("kubernetes-ca") {
        Some(ca) => {
            let known = crate::kubeconfig::Known {
                stored: &stored,
                ca,
            };
            control_plane_version(global, st, name, known, args).await
        }
        None => None,
    };
    ctx.cluster_context
        .set_control_plane_version(running.as_deref());
    let new_keysets = ctx.new_keysets.clone();
    let update = UpdateCluster::new(ctx, options)
        .with_context(|| format!("building the model of cluster {name}"))?;

    if args.target == Target::Terraform {
        let rendered = update
            .render_terraform()
            .await
            .with_context(|| format!("rendering cluster {name} as Terraform"))?;
        return write_terraform(args, name, &rendered, backend.as_ref(), "");
    }

    let api = cloud.api.as_ref();
    // A dry run trusts the record of the last apply for the groups' lifecycle hooks
    // (AWS reads them one group per call) unless --refresh; an apply reads everything.
    let dry_run = lock.is_none() || !args.yes;
    let plan = if dry_run {
        let shared: Arc<dyn kops_model::aws::AwsCloud> = cloud.api.clone();
        update.dry_run(shared, &st.registry).await
    } else {
        update.plan(api).await
    }
    .with_context(|| format!("planning cluster {name} against {}", cloud.description))?;
    if let Some(recorded) = plan.recorded_hooks() {
        eprintln!("note: {}", recorded.note());
    }
    // Keysets made now for a cluster already in the cloud (a recovered store): say what
    // their being new changes.
    let running_already = plan
        .plan
        .items
        .iter()
        .any(|i| i.key.kind() == "AutoscalingGroup" && i.action != kops_tasks::Action::Create);
    if running_already && !new_keysets.is_empty() {
        eprintln!(
            "note: cluster {name}: keysets {} are not in the state store and are made new: the launch templates' user data changes, and machines replaced from them trust the new CA (the old CA is only on the control-plane disks)",
            new_keysets.join(", ")
        );
    }

    let Some(lock) = lock.filter(|_| args.yes) else {
        return Ok(print_unapplied(args, &plan.plan));
    };

    let only_deferred = !args.prune
        && plan.plan.has_changes()
        && plan.plan.items.iter().all(|i| {
            !i.action.is_change() || (i.action == kops_tasks::Action::Delete && i.deferred)
        });
    if !plan.plan.has_changes() || only_deferred {
        if args.output == PlanFormat::Json {
            println!("{}", plan.plan.to_json());
        } else if only_deferred {
            println!(
                "No changes applied to cluster {name}; deferred deletions are pending (apply them with --prune)."
            );
        } else {
            println!("No changes needed for cluster {name}.");
        }
        // Nothing applied, but every hook was read: the next dry runs trust them.
        if let Err(e) = update.record_lifecycle_hooks(api, &st.registry).await {
            eprintln!("warning: {e:#}");
        }
        export_after_update(global, st, name, args).await?;
        return Ok(0);
    }
    let (bar, executor) = apply_progress(update.graph().len());
    let apply = ApplyOptions::default()
        .with_executor(executor)
        .with_prune(args.prune);
    let result = update
        .apply_holding(api, &st.registry, &plan, lock, apply)
        .await;
    bar.finish_and_clear();
    // The cloud changed whatever the outcome: persist the mock's state first.
    cloud.save().await?;
    let result =
        result.with_context(|| format!("updating cluster {name} in {}", cloud.description))?;
    print_applied(args, name, &result);
    if args.output == PlanFormat::Text && !args.reconciling {
        let groups: Arc<dyn kops_model::day2::groups::InstanceGroupCloud> = Arc::new(
            kops_model::day2::groups::AwsInstanceGroups::new(cloud.api.clone()),
        );
        crate::rolling::hint_after_update(groups, st, name).await;
    }
    export_after_update(global, st, name, args).await?;
    Ok(0)
}

/// After a direct `--yes` update: the cluster's kubeconfig, as kOps writes it (see
/// `--create-kube-config`).
pub async fn export_after_update(
    global: &Global,
    st: &State,
    name: &str,
    args: &UpdateClusterArgs,
) -> anyhow::Result<()> {
    let flags = &args.kubeconfig;
    let asked = flags.admin.is_some() || flags.user.is_some() || flags.auth_plugin;
    if !args
        .create_kube_config
        .unwrap_or(!global.mock_cloud || asked)
    {
        return Ok(());
    }
    crate::kubeconfig::write_kubeconfig(global, st, name, flags, None, None)
        .await
        .with_context(|| format!("cluster {name} was updated; exporting its kubeconfig"))
}

/// `kops get assets`: every container image and file the cluster's machines download,
/// canonical and as downloaded (through `spec.assets`), as the model names them.
pub async fn get_assets(global: &Global, args: &crate::cli::GetAssetsArgs) -> anyhow::Result<()> {
    let name = state::cluster_name(args.cluster_name.as_deref(), global)?;
    let st = State::open(global).await?;
    let stored = st.cluster(&name).await?.value;
    let assets = if stored.spec.cloud_provider.as_deref() == Some("gce") {
        let groups = st.groups(&name).await?;
        crate::gce::assets(global, &st, &stored, &groups).await?
    } else if stored.spec.cloud_provider.as_deref() == Some("hetzner") {
        let groups = st.groups(&name).await?;
        crate::hetzner::assets(&st, &stored, &groups).await?
    } else {
        let Prepared { ctx, .. } = prepare(global, &st, &name).await?;
        UpdateCluster::new(ctx, UpdateOptions::default())
            .with_context(|| format!("building the model of cluster {name}"))?
            .assets()
    };
    if args.copy {
        return copy_assets(&assets, &stored, args).await;
    }
    match args.output {
        crate::cli::GetFormat::Table => {
            let images: Vec<Vec<String>> = assets
                .images
                .iter()
                .map(|i| vec![i.canonical.clone(), i.download.clone()])
                .collect();
            println!();
            crate::get::print_table(&["CANONICAL", "DOWNLOAD"], &images);
            let files: Vec<Vec<String>> = assets
                .files
                .iter()
                .map(|f| vec![f.canonical.clone(), f.download.clone(), f.sha.clone()])
                .collect();
            println!();
            crate::get::print_table(&["CANONICAL", "DOWNLOAD", "SHA"], &files);
        }
        crate::cli::GetFormat::Json => println!("{}", serde_json::to_string_pretty(&assets)?),
        crate::cli::GetFormat::Yaml => {
            print!("{}", kops_api::yaml::to_string(&assets)?);
        }
    }
    Ok(())
}

/// `get assets --copy`: every asset copied to its download location, each outcome printed;
/// an error when one could not be copied.
async fn copy_assets(
    assets: &kops_model::assets::Assets,
    cluster: &v1alpha2::Cluster,
    args: &crate::cli::GetAssetsArgs,
) -> anyhow::Result<()> {
    use kops_model::assets::{AssetCopier, Copied};
    // The stores the file repository is written through, configured from the environment
    // as the state store's are.
    let stores = match cluster
        .spec
        .assets
        .as_ref()
        .and_then(|a| a.file_repository.as_deref())
    {
        Some(repo) => {
            let (store_url, _) = kops_model::assets::writable_location(&format!(
                "{}/file",
                repo.trim_end_matches('/')
            ))
            .map_err(|e| anyhow::anyhow!("spec.assets.fileRepository: {e}"))?;
            crate::state::store_options(&store_url)
                .await
                .with_context(|| format!("configuring access to {store_url}"))?
        }
        None => kops_statestore::StoreOptions::default(),
    };
    let mut copier = AssetCopier::new(stores)?.with_concurrency(args.copy_concurrency);
    for (registry, url) in pairs(&args.registry_endpoints, "--registry-endpoint")? {
        copier = copier.with_registry_endpoint(&registry, &url);
    }
    for (prefix, replacement) in pairs(&args.file_sources, "--file-source")? {
        copier = copier.with_file_source(&prefix, &replacement);
    }
    let docker_config = args.docker_config.clone().or_else(|| {
        let dir = std::env::var_os("DOCKER_CONFIG")
            .map(std::path::PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".docker"))
            })?;
        Some(dir.join("config.json")).filter(|p| p.exists())
    });
    if let Some(path) = docker_config {
        copier = copier.with_docker_config(&path)?;
    }
    let report = copier.copy(assets).await;
    let mut copied = (0usize, 0u64);
    let mut present = 0usize;
    let rows: Vec<Vec<String>> = report
        .outcomes
        .iter()
        .map(|o| {
            let result = match &o.result {
                Ok(Copied::Copied { bytes }) => {
                    copied.0 += 1;
                    copied.1 += bytes;
                    format!("copied ({})", human_bytes(*bytes))
                }
                Ok(Copied::AlreadyThere) => {
                    present += 1;
                    "already there".to_owned()
                }
                Ok(Copied::SameLocation) => "not remapped".to_owned(),
                Ok(_) => "done".to_owned(),
                Err(e) => format!("failed: {}", e.message),
            };
            vec![
                o.kind.to_owned(),
                o.canonical.clone(),
                o.download.clone(),
                result,
            ]
        })
        .collect();
    match args.output {
        crate::cli::GetFormat::Table => {
            crate::get::print_table(&["KIND", "CANONICAL", "DOWNLOAD", "RESULT"], &rows);
        }
        format => {
            let outcomes: Vec<serde_json::Value> = rows
                .iter()
                .map(|r| {
                    serde_json::json!({ "kind": r[0], "canonical": r[1], "download": r[2], "result": r[3] })
                })
                .collect();
            if matches!(format, crate::cli::GetFormat::Json) {
                println!("{}", serde_json::to_string_pretty(&outcomes)?);
            } else {
                print!("{}", kops_api::yaml::to_string(&outcomes)?);
            }
        }
    }
    let failed: Vec<String> = report.failures().map(ToString::to_string).collect();
    eprintln!(
        "Copied {} asset(s) ({}), {present} already in place, {} failed",
        copied.0,
        human_bytes(copied.1),
        failed.len()
    );
    if failed.is_empty() {
        Ok(())
    } else {
        anyhow::bail!(
            "{} asset(s) not copied:\n  {}",
            failed.len(),
            failed.join("\n  ")
        )
    }
}

/// The Terraform backend `--terraform-backend` asks for, if any (an S3 bucket's region
/// defaulting to `region`): read before anything is rendered, so a bad flag changes
/// nothing.
pub fn terraform_backend(
    args: &UpdateClusterArgs,
    region: &str,
) -> anyhow::Result<Option<kops_tasks::terraform::Backend>> {
    use kops_tasks::terraform::{Backend, BackendKind, BackendLock};
    let args = &args.backend;
    let Some(url) = &args.terraform_backend else {
        return Ok(None);
    };
    let mut backend = Backend::parse(url).context("--terraform-backend")?;
    if backend.kind == BackendKind::S3 {
        let region = args.terraform_backend_region.as_deref().unwrap_or(region);
        if !region.is_empty() {
            backend = backend.with_region(region);
        }
        let lock = args.terraform_backend_lock.as_deref().unwrap_or("lockfile");
        backend = backend.with_lock(BackendLock::parse(lock).context("--terraform-backend-lock")?);
        if let Some(e) = &args.terraform_backend_endpoint {
            backend = backend.with_endpoint(e);
        }
    }
    Ok(Some(backend))
}

/// Writes `backend` to `backend.tf` in `out`; without one an existing file is left as it
/// is, so later updates keep it.
pub fn write_terraform_backend(
    backend: Option<&kops_tasks::terraform::Backend>,
    out: &std::path::Path,
) -> anyhow::Result<()> {
    let Some(backend) = backend else {
        return Ok(());
    };
    let path = out.join(kops_tasks::terraform::Backend::FILE);
    std::fs::write(&path, backend.render())
        .with_context(|| format!("writing {}", path.display()))?;
    eprintln!(
        "Terraform's state goes to bucket {} (backend in {}); turn on the bucket's versioning to keep earlier states",
        backend.bucket,
        path.display()
    );
    Ok(())
}

/// `FROM=TO` pairs of a repeatable flag.
fn pairs(values: &[String], flag: &str) -> anyhow::Result<Vec<(String, String)>> {
    values
        .iter()
        .map(|v| {
            v.split_once('=')
                .filter(|(k, v)| !k.is_empty() && !v.is_empty())
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .ok_or_else(|| anyhow::anyhow!("{flag} {v:?}: expected FROM=TO"))
        })
        .collect()
}

fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / f64::from(1u32 << 30)),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / f64::from(1u32 << 20)),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

/// The Kubernetes version the cluster's control plane runs: the oldest kubelet of its
/// control-plane nodes, as the cluster's API reports it (kOps'
/// `checkControlPlaneRunningVersion`), so that an update during an upgrade keeps the
/// other machines' kubelets no newer. `None`, as kOps assumes no upgrade is under way,
/// with `--ignore-kubelet-version-skew`, on the mock cloud (it has no API), or when the
/// API cannot be asked within a few seconds (a new cluster, no route to it).
async fn control_plane_version(
    global: &Global,
    st: &State,
    name: &str,
    known: crate::kubeconfig::Known<'_>,
    args: &UpdateClusterArgs,
) -> Option<String> {
    if args.ignore_kubelet_version_skew || global.mock_cloud {
        return None;
    }
    let ask = async {
        let client = crate::kubeconfig::admin_client_quiet(global, st, name, known).await?;
        anyhow::Ok(kops_model::day2::validate::control_plane_version(&client).await?)
    };
    // Unknown (an error, or no answer in time): no upgrade is taken to be under way.
    let running = tokio::time::timeout(std::time::Duration::from_secs(10), ask)
        .await
        .ok()?
        .ok()??;
    eprintln!(
        "The control plane of cluster {name} runs Kubernetes {running}: the other groups' machines keep it until the control plane runs the spec's version (`kops reconcile cluster` updates both in turn)"
    );
    Some(running)
}

/// Writes a rendered Terraform configuration to `--out` (and its backend), saying where
/// and what to run next; `extra` adds to that advice. The exit code.
pub fn write_terraform(
    args: &UpdateClusterArgs,
    name: &str,
    rendered: &kops_tasks::terraform::TerraformOutput,
    backend: Option<&kops_tasks::terraform::Backend>,
    extra: &str,
) -> anyhow::Result<u8> {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out/terraform"));
    rendered
        .write_to(&out)
        .with_context(|| format!("writing Terraform to {}", out.display()))?;
    write_terraform_backend(backend, &out)?;
    eprintln!(
        "Terraform configuration for cluster {name} written to {}",
        out.display()
    );
    eprintln!("Run `terraform init` and `terraform apply` in that directory to create it{extra}.");
    Ok(0)
}

/// Prints a plan that is not applied (no `--yes`), as text or JSON; the exit code: 0
/// without changes, 2 with.
pub fn print_unapplied(args: &UpdateClusterArgs, plan: &kops_tasks::Plan) -> u8 {
    match args.output {
        PlanFormat::Json => println!("{}", plan.to_json()),
        PlanFormat::Text => {
            println!(
                "{}",
                output::plan_text(&plan.render_text(), output::stdout_colours())
            );
            if plan.has_changes() {
                println!("\nMust specify --yes to apply changes");
            }
        }
    }
    u8::try_from(plan.exit_code()).unwrap_or(1)
}

/// Prints what an apply did, as text or JSON.
pub fn print_applied(args: &UpdateClusterArgs, name: &str, result: &kops_tasks::Plan) {
    match args.output {
        PlanFormat::Json => println!("{}", result.to_json()),
        PlanFormat::Text => {
            let s = result.summary();
            println!(
                "Cluster {name} updated: {} created, {} modified, {} deleted, {} unchanged.",
                s.create, s.update, s.delete, s.unchanged
            );
        }
    }
}

/// The apply options of a direct update: the executor's progress shown on a bar of the
/// graph's `tasks`, returned to be cleared once the apply ends.
pub fn apply_progress(tasks: usize) -> (indicatif::ProgressBar, ExecutorOptions) {
    let bar = output::progress_bar(tasks as u64, "apply");
    let b = bar.clone();
    let executor = ExecutorOptions::default().with_progress(move |e| output::follow(&b, e));
    (bar, executor)
}
