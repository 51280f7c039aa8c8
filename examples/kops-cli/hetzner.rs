//! Hetzner clusters: the cloud a command talks to (the in-memory Hetzner mock with
//! `--mock-cloud`, else the hcloud API through `kops_cloud_hetzner::rest`), `update
//! cluster` and `delete cluster` on it.
//!
//! The cluster's components need the Hetzner API token: it comes from `HCLOUD_TOKEN`, as
//! kOps takes it, and a missing one is an error naming the variable.
//!
//! The mock persists between invocations as the other mocks do (see `cloud.rs`): a
//! journal of successful mutations at [`HETZNER_JOURNAL_PATH`] in the state store, replayed into a
//! fresh mock on each run and written back with compare-and-swap.

use std::sync::Arc;

use anyhow::{Context as _, anyhow};
use kops_api::v1alpha2;
use kops_cloud_hetzner::cloud::HetznerCloud;
use kops_cloud_hetzner::rest::{RestConfig, RestHetzner};
pub use kops_mock::journal::JournaledHetzner;
use kops_mock::journal::{HETZNER_JOURNAL_PATH, HetznerJournal};
use kops_model::hetzner::{self, ApplyOptions, HetznerModelContext, UpdateCluster, UpdateOptions};

use crate::cli::{Global, PlanFormat, Target, UpdateClusterArgs};
use crate::get::print_resources;
use crate::state::State;

/// The variable the API token comes from.
const TOKEN_VAR: &str = "HCLOUD_TOKEN";

/// The Hetzner cloud of one command.
pub struct HetznerCloudHandle {
    /// The cloud.
    pub api: Arc<JournaledHetzner>,
    mock: Option<HetznerJournal>,
    /// A line saying which cloud this is.
    pub description: String,
}

impl HetznerCloudHandle {
    /// Opens the Hetzner cloud of the command: the mock with `--mock-cloud`, else the
    /// hcloud API with the token in `HCLOUD_TOKEN` (at `HCLOUD_ENDPOINT` when set).
    pub async fn open(global: &Global, st: &State) -> anyhow::Result<HetznerCloudHandle> {
        if !global.mock_cloud {
            let cfg = RestConfig::from_env().map_err(|e| anyhow!("{e}"))?;
            let description = format!("Hetzner Cloud ({})", cfg.endpoint);
            let rest: Arc<dyn HetznerCloud> = Arc::new(
                RestHetzner::new(cfg).with_context(|| format!("configuring {description}"))?,
            );
            return Ok(HetznerCloudHandle {
                api: Arc::new(JournaledHetzner::new(rest)),
                mock: None,
                description,
            });
        }
        let journal = HetznerJournal::read(st.store().clone(), &st.url).await?;
        let api = journal.open_mock().await?;
        Ok(HetznerCloudHandle {
            api: Arc::new(api),
            description: format!(
                "Hetzner mock cloud (state in {}/{HETZNER_JOURNAL_PATH})",
                st.url
            ),
            mock: Some(journal),
        })
    }

    /// Persists what changed in the mock cloud.
    pub async fn save(&self) -> anyhow::Result<()> {
        match &self.mock {
            Some(journal) => Ok(journal.save(&self.api).await?),
            None => Ok(()),
        }
    }
}

/// The API token the cluster's components use, from `HCLOUD_TOKEN`.
fn token() -> anyhow::Result<String> {
    match std::env::var(TOKEN_VAR) {
        Ok(t) if !t.trim().is_empty() => Ok(t.trim().to_owned()),
        _ => Err(anyhow!(
            "{TOKEN_VAR} is not set: a Hetzner cluster's components need the API token (create one in the Hetzner Cloud console under Security > API tokens)"
        )),
    }
}

async fn context(
    st: &State,
    cluster: &v1alpha2::Cluster,
    groups: &[v1alpha2::InstanceGroup],
) -> anyhow::Result<HetznerModelContext> {
    let name = cluster.name();
    let token = token()?;
    let opts = crate::update::discover_options(st, name).await?;
    let ctx = hetzner::discover(cluster, groups, &opts)
        .await
        .with_context(|| format!("cluster {name}: completing its spec for Hetzner"))?;
    Ok(ctx.with_token(token))
}

/// The images and files the machines of a stored Hetzner cluster download
/// ([`hetzner::UpdateCluster::assets`]); the model needs the token (`HCLOUD_TOKEN`).
pub async fn assets(
    st: &State,
    cluster: &v1alpha2::Cluster,
    groups: &[v1alpha2::InstanceGroup],
) -> anyhow::Result<kops_model::assets::Assets> {
    let ctx = context(st, cluster, groups).await?;
    let update = UpdateCluster::new(ctx, UpdateOptions::default())
        .with_context(|| format!("building the model of cluster {}", cluster.name()))?;
    Ok(update.assets())
}

/// `update cluster` of a Hetzner cluster through the library's workflow
/// ([`hetzner::UpdateCluster`]); returns the exit code. `lock` is the cluster's lock,
/// held by the caller for a direct `--yes` run.
pub async fn update_cluster(
    global: &Global,
    args: &UpdateClusterArgs,
    st: &State,
    cluster: &v1alpha2::Cluster,
    groups: &[v1alpha2::InstanceGroup],
    options: UpdateOptions,
    lock: Option<&mut kops_statestore::Lock>,
) -> anyhow::Result<u8> {
    let name = cluster.name();
    let backend = crate::update::terraform_backend(args, "")?;
    let mut ctx = context(st, cluster, groups).await?;
    if args.kops_identical_files {
        ctx = ctx.with_kops_identical_files();
    }
    let update = UpdateCluster::new(ctx, options)
        .with_context(|| format!("building the model of cluster {name}"))?;
    if args.target == Target::Terraform {
        let rendered = update
            .render_terraform()
            .with_context(|| format!("rendering cluster {name} as Terraform"))?;
        return crate::update::write_terraform(
            args,
            name,
            &rendered,
            backend.as_ref(),
            if args.kops_identical_files {
                ", with the token in HCLOUD_TOKEN (the data files hold it too: keep them secret)"
            } else {
                ", with the token in TF_VAR_hcloud_token and HCLOUD_TOKEN"
            },
        );
    }
    let cloud = HetznerCloudHandle::open(global, st).await?;
    let plan = update
        .plan(cloud.api.as_ref())
        .await
        .with_context(|| format!("planning cluster {name} against {}", cloud.description))?;
    let Some(lock) = lock.filter(|_| args.yes) else {
        return Ok(crate::update::print_unapplied(args, &plan.plan));
    };
    if !plan.plan.has_changes() {
        match args.output {
            PlanFormat::Json => println!("{}", plan.plan.to_json()),
            PlanFormat::Text => println!("No changes needed for cluster {name}."),
        }
        return Ok(0);
    }
    let (bar, executor) = crate::update::apply_progress(update.graph().len());
    let apply = ApplyOptions::default().with_executor(executor);
    let result = update
        .apply_holding(cloud.api.as_ref(), &st.registry, &plan, lock, apply)
        .await;
    bar.finish_and_clear();
    // The cloud changed whatever the outcome: persist the mock's state first.
    cloud.save().await?;
    let result =
        result.with_context(|| format!("updating cluster {name} in {}", cloud.description))?;
    crate::update::print_applied(args, name, &result);
    Ok(0)
}

/// The cloud resources of a Hetzner cluster: listed as a table, or (with `yes`) deleted.
/// Returns how many there are.
pub async fn delete_resources(
    global: &Global,
    st: &State,
    cluster: &v1alpha2::Cluster,
    yes: bool,
) -> anyhow::Result<usize> {
    let name = cluster.name();
    let cloud = HetznerCloudHandle::open(global, st).await?;
    let api = cloud.api.as_ref();
    if !yes {
        let found = hetzner::find_cluster_resources(api, name)
            .await
            .with_context(|| {
                format!(
                    "listing the resources of cluster {name} in {}",
                    cloud.description
                )
            })?;
        print_resources(&found);
        return Ok(found.len());
    }
    let deleted = hetzner::delete_cluster(api, name).await;
    cloud.save().await?;
    let deleted = deleted.with_context(|| {
        format!(
            "deleting the resources of cluster {name} in {}",
            cloud.description
        )
    })?;
    println!(
        "Deleted {} cloud resource(s) of cluster {name}.",
        deleted.len()
    );
    Ok(deleted.len())
}

/// The cloud side of validate and rolling update for a stored Hetzner cluster. With
/// `replace` (a rolling update) a terminated server's replacement is made by applying the
/// cluster's update, so the token (`HCLOUD_TOKEN`) is needed; validate only reads.
pub async fn instance_groups(
    global: &Global,
    st: &State,
    cluster: &v1alpha2::Cluster,
    replace: bool,
) -> anyhow::Result<(
    HetznerCloudHandle,
    Arc<dyn kops_model::day2::groups::InstanceGroupCloud>,
)> {
    use kops_model::day2::groups::HetznerInstanceGroups;
    let cloud = HetznerCloudHandle::open(global, st).await?;
    let api: Arc<dyn HetznerCloud> = cloud.api.clone();
    if !replace {
        return Ok((cloud, Arc::new(HetznerInstanceGroups::new(api))));
    }
    let name = cluster.name();
    let groups: Vec<v1alpha2::InstanceGroup> = st.groups(name).await?;
    let ctx = context(st, cluster, &groups).await?;
    let update = UpdateCluster::new(ctx, UpdateOptions::default())
        .with_context(|| format!("building the model of cluster {name}"))?;
    let igs = HetznerInstanceGroups::with_update(api, Arc::new(update));
    Ok((cloud, Arc::new(igs)))
}
