//! `delete cluster`: lists (dry run) or deletes everything the cluster owns in the
//! cloud, then its state-store tree. `delete -f FILE`: the manifest's clusters, groups and
//! SSH credentials, each as its own command deletes it. `delete instancegroup`: removes a group from the
//! spec; on AWS `update cluster` then plans the deletion of its cloud objects, on GCE
//! they are deleted first, as kOps does (GCE's update deletes nothing the spec dropped).

use anyhow::{Context as _, bail};
use kops_model::aws::cloud::AwsCloud;
use kops_model::aws::{DeleteOptions, delete_cluster as delete_resources, find_cluster_resources};

use std::collections::BTreeSet;
use std::path::Path;

use crate::cli::{DeleteClusterArgs, DeleteIgArgs, Global};
use crate::cloud::Cloud;
use crate::get::print_table;
use crate::output;
use crate::spec::Manifest;
use crate::state::{self, State};
use crate::update;

/// `kops delete cluster`; returns the exit code (2: a dry run found something to delete).
pub async fn delete_cluster(global: &Global, args: &DeleteClusterArgs) -> anyhow::Result<u8> {
    let name = state::cluster_name(args.cluster_name.as_deref(), global)?;
    let st = State::open(global).await?;
    let stored = st.cluster(&name).await?.value;
    if matches!(
        stored.spec.cloud_provider.as_deref(),
        Some("gce" | "hetzner")
    ) {
        return delete_listed(global, args, &st, &stored).await;
    }
    let cloud = if stored.spec.cloud_provider.as_deref() == Some("aws") {
        Some(Cloud::open(&st, global.mock_cloud, &update::region(&stored)?).await?)
    } else {
        None
    };
    let resources = match &cloud {
        Some(c) => {
            let api: &dyn AwsCloud = c.api.as_ref();
            find_cluster_resources(api, &name).await.with_context(|| {
                format!(
                    "listing the resources of cluster {name} in {}",
                    c.description
                )
            })?
        }
        None => Vec::new(),
    };
    if !args.yes {
        if resources.is_empty() {
            println!("No cloud resources of cluster {name} found.");
        } else {
            let rows: Vec<Vec<String>> = resources
                .iter()
                .map(|r| {
                    vec![
                        r.resource_type.to_string(),
                        r.id.clone(),
                        r.name
                            .clone()
                            .or_else(|| r.tags.get("Name").map(str::to_owned))
                            .unwrap_or_default(),
                    ]
                })
                .collect();
            print_table(&["TYPE", "ID", "NAME"], &rows);
        }
        println!(
            "\nWill delete {} cloud resource(s) and the state of cluster {name} in {}.",
            resources.len(),
            st.url
        );
        println!("Must specify --yes to delete the cluster");
        return Ok(2);
    }

    let lock = st.lock(&name, "delete cluster").await?;
    let outcome = async {
        if let Some(c) = &cloud {
            let bar = output::progress_bar(resources.len() as u64, "delete");
            let b = bar.clone();
            c.api.set_on_delete(Some(Box::new(move |rt, id| {
                b.inc(1);
                b.set_message(format!("{rt} {id}"));
            })));
            let api: &dyn AwsCloud = c.api.as_ref();
            let report = delete_resources(api, &name, &DeleteOptions::default()).await;
            c.api.set_on_delete(None);
            bar.finish_and_clear();
            c.save().await?;
            let report = report.with_context(|| format!("deleting the resources of cluster {name}"))?;
            if !report.is_complete() {
                bail!(
                    "deleting cluster {name}: {} resource(s) could not be deleted; the state is kept, run the command again\n{report}",
                    report.failed.len()
                );
            }
            println!("Deleted {} cloud resource(s) of cluster {name}.", report.deleted.len());
        }
        Ok(())
    }
    .await;
    if let Err(e) = outcome {
        if let Err(r) = lock.release().await {
            eprintln!("warning: releasing the lock of cluster {name}: {r}");
        }
        return Err(e);
    }
    // The lock object lives in the cluster's tree and goes with it.
    let n = st
        .registry
        .delete_cluster(&name)
        .await
        .with_context(|| format!("deleting the state of cluster {name} in {}", st.url))?;
    drop(lock);
    println!("Deleted cluster {name} ({n} object(s) in {}).", st.url);
    Ok(0)
}

/// The cloud resources of a GCE or Hetzner cluster: listed (`yes` false) or deleted;
/// how many there are.
async fn cluster_resources(
    global: &Global,
    st: &State,
    stored: &kops_api::v1alpha2::Cluster,
    yes: bool,
) -> anyhow::Result<usize> {
    match stored.spec.cloud_provider.as_deref() {
        Some("hetzner") => crate::hetzner::delete_resources(global, st, stored, yes).await,
        _ => crate::gce::delete_resources(global, st, stored, None, yes).await,
    }
}

/// `delete cluster` of a GCE or Hetzner cluster: its cloud resources (by kOps' labels
/// and names), then its state.
async fn delete_listed(
    global: &Global,
    args: &DeleteClusterArgs,
    st: &State,
    stored: &kops_api::v1alpha2::Cluster,
) -> anyhow::Result<u8> {
    let name = stored.name().to_owned();
    if !args.yes {
        let n = cluster_resources(global, st, stored, false).await?;
        if n == 0 {
            println!("No cloud resources of cluster {name} found.");
        }
        println!(
            "\nWill delete {n} cloud resource(s) and the state of cluster {name} in {}.",
            st.url
        );
        println!("Must specify --yes to delete the cluster");
        return Ok(2);
    }
    let lock = st.lock(&name, "delete cluster").await?;
    if let Err(e) = cluster_resources(global, st, stored, true).await {
        if let Err(r) = lock.release().await {
            eprintln!("warning: releasing the lock of cluster {name}: {r}");
        }
        return Err(e);
    }
    let n = st
        .registry
        .delete_cluster(&name)
        .await
        .with_context(|| format!("deleting the state of cluster {name} in {}", st.url))?;
    drop(lock);
    println!("Deleted cluster {name} ({n} object(s) in {}).", st.url);
    Ok(0)
}

/// `kops delete instancegroup`; returns the exit code (2: a dry run, nothing removed).
pub async fn delete_instance_group(global: &Global, args: &DeleteIgArgs) -> anyhow::Result<u8> {
    let name = state::cluster_name(None, global)?;
    let st = State::open(global).await?;
    let stored = st.cluster(&name).await?.value;
    let gce = stored.spec.cloud_provider.as_deref() == Some("gce");
    let groups = st
        .registry
        .list_instance_groups(&name)
        .await
        .with_context(|| format!("listing the instance groups of cluster {name}"))?;
    let Some(group) = groups.iter().find(|g| g.value.name() == args.group) else {
        bail!(
            "instance group {:?} not found in cluster {name} (see `kops --name {name} get ig`)",
            args.group
        );
    };
    let role = group.value.spec.role.clone().unwrap_or_default();
    let is_control_plane = matches!(role.as_str(), "ControlPlane" | "Master");
    if is_control_plane {
        let left = groups
            .iter()
            .filter(|g| g.value.name() != args.group)
            .filter(|g| {
                matches!(
                    g.value.spec.role.as_deref(),
                    Some("ControlPlane" | "Master")
                )
            })
            .count();
        if left == 0 {
            bail!(
                "instance group {:?} is the last control-plane group of cluster {name}; delete the cluster instead",
                args.group
            );
        }
    }
    if !args.yes {
        if gce {
            let n = crate::gce::delete_resources(global, &st, &stored, Some(&args.group), false)
                .await?;
            println!(
                "\nWill delete {n} cloud resource(s) and remove instance group {:?} ({role}) from cluster {name}.",
                args.group
            );
        } else {
            println!(
                "Will remove instance group {:?} ({role}) from cluster {name}.",
                args.group
            );
        }
        println!("Must specify --yes to remove it");
        return Ok(2);
    }
    st.locked(&name, "delete instancegroup", async || {
        if gce {
            crate::gce::delete_resources(global, &st, &stored, Some(&args.group), true).await?;
        }
        st.registry
            .delete_instance_group(&name, &args.group)
            .await
            .with_context(|| {
                format!(
                    "removing instance group {:?} from cluster {name}",
                    args.group
                )
            })
    })
    .await?;
    if gce {
        println!(
            "Instance group {:?} removed from cluster {name}.",
            args.group
        );
    } else {
        println!(
            "Instance group {:?} removed from cluster {name}. Run `kops update cluster {name} --yes` to delete its cloud resources.",
            args.group
        );
    }
    Ok(0)
}

/// `kops delete -f FILE [--yes]`, as kOps' command of that name: each cluster of the
/// manifest with everything it owns (its groups in the file are then left out), each other
/// instance group from its cluster's spec, and the SSH public keys of each SSH credential's
/// cluster. Without `--yes` each says what it would delete; returns 2 when that found
/// something.
pub async fn delete_from_file(global: &Global, file: &Path, yes: bool) -> anyhow::Result<u8> {
    let source = file.display().to_string();
    let m = Manifest::read(file)?;
    if m.clusters.is_empty() && !m.additional.is_empty() {
        bail!("{source}: objects that are not kOps objects are deleted with their cluster only");
    }
    let mut code = 0;
    let mut clusters = BTreeSet::new();
    for c in &m.clusters {
        let args = DeleteClusterArgs {
            cluster_name: Some(c.name().to_owned()),
            yes,
        };
        code = code.max(delete_cluster(global, &args).await?);
        clusters.insert(c.name().to_owned());
    }
    let of_cluster = |cluster: String| Global {
        name: Some(cluster),
        ..global.clone()
    };
    for g in &m.groups {
        let cluster = crate::create::group_cluster(g, &m, global, &source)?;
        if clusters.contains(&cluster) {
            continue;
        }
        let args = DeleteIgArgs {
            group: g.name().to_owned(),
            yes,
        };
        code = code.max(delete_instance_group(&of_cluster(cluster), &args).await?);
    }
    for s in &m.ssh_credentials {
        let cluster = crate::create::credential_cluster(s, global, &source)?;
        if clusters.contains(&cluster) {
            continue;
        }
        if yes {
            crate::secret::delete_ssh_public_keys(&of_cluster(cluster)).await?;
        } else {
            println!("Will delete the SSH public keys of cluster {cluster}.");
            println!("Must specify --yes to delete them");
            code = code.max(2);
        }
    }
    Ok(code)
}
