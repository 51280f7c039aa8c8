//! `update cluster`: complete the stored spec, look up what the model needs in the
//! cloud, build the task graph, then plan it (dry run), apply it (`--yes`) or write it
//! as Terraform (`--target terraform`).

use std::path::PathBuf;

use anyhow::{Context as _, anyhow, bail};
use kops_api::defaults::DnsZoneInfo;
use kops_api::{internal, v1alpha2};
use kops_model::aws::builders::{self, ModelContext};
use kops_model::aws::cloud::{AwsCloud, AwsCloudExt, ListQuery, ResourceType, ZoneQuery};
use kops_model::aws::orphans::{self, DELETION_WAVES, OrphanDeleter};
use kops_model::aws::terraform::{RenderOptions, render};
use kops_tasks::{Executor, ExecutorOptions, LifecycleOverrides, Task, TaskGraph};

use crate::cli::{Global, PlanFormat, Target, UpdateClusterArgs};
use crate::cloud::Cloud;
use crate::output;
use crate::spec;
use crate::state::{self, State};

/// What the model needs, looked up: the completed spec and the model context.
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

/// The DNS zones that could hold `name`'s records: zones named like one of its parent
/// domains.
async fn candidate_zones(cloud: &dyn AwsCloud, name: &str) -> anyhow::Result<Vec<DnsZoneInfo>> {
    let mut out = Vec::new();
    let mut rest = name;
    while let Some((_, parent)) = rest.split_once('.') {
        for z in cloud
            .hosted_zones(&ZoneQuery::Name(parent.to_string()))
            .await
            .with_context(|| format!("looking up DNS zone {parent}"))?
        {
            out.push(DnsZoneInfo::new(
                z.id.clone(),
                z.name.clone(),
                Some(z.private),
            ));
        }
        rest = parent;
    }
    Ok(out)
}

/// Loads the cluster, completes it and gathers the model context.
pub async fn prepare(global: &Global, st: &State, name: &str) -> anyhow::Result<Prepared> {
    let stored = st.cluster(name).await?.value;
    let groups: Vec<v1alpha2::InstanceGroup> = st
        .registry
        .list_instance_groups(name)
        .await
        .with_context(|| format!("listing instance groups of cluster {name}"))?
        .into_iter()
        .map(|g| g.value)
        .collect();
    let provider = stored.spec.cloud_provider.clone().unwrap_or_default();
    if provider != "aws" {
        bail!(
            "cluster {name}: spec.cloudProvider {provider:?}: update cluster supports AWS only (kops-model has no {provider} model yet)"
        );
    }
    let region = region(&stored)?;
    let cloud = Cloud::open(st, global.mock_cloud, &region).await?;
    let api: &dyn AwsCloud = cloud.api.as_ref();
    crate::errors::check_zones(api, &stored, &region, &cloud.description).await?;

    let dns_none = stored
        .spec
        .topology
        .as_ref()
        .and_then(|t| t.dns.as_ref())
        .and_then(|d| d.type_.as_deref())
        == Some("None");
    let zones = if dns_none || stored.spec.dns_zone.is_some() {
        None
    } else {
        Some(candidate_zones(api, name).await?)
    };
    let shared_cidr = match stored.spec.network_id.as_deref() {
        Some(vpc) => api
            .get(ResourceType::Vpc, vpc)
            .await
            .with_context(|| format!("looking up VPC {vpc} (spec.networkID)"))?
            .and_then(|r| r.attr_str("cidr_block").map(str::to_string)),
        None => None,
    };
    let (full, full_groups) = spec::complete(&stored, &groups, zones, shared_cidr)?;

    let account = api
        .account()
        .await
        .with_context(|| format!("reading the account of {}", cloud.description))?;
    let mut ctx = ModelContext::new(full, full_groups, region)
        .with_account(account)
        .with_kops_version(env!("CARGO_PKG_VERSION"));
    let keys = st
        .registry
        .list_ssh_public_keys(name)
        .await
        .with_context(|| format!("reading the SSH public keys of cluster {name}"))?;
    if let Some((_, key)) = keys.into_iter().next() {
        ctx = ctx.with_ssh_public_key(key);
    }
    for ig in ctx.groups.clone() {
        if let Some(image) = &ig.spec.image
            && !ctx.images.contains_key(image)
        {
            let found = match api.resolve_image(image).await {
                Ok(found) => found,
                Err(kops_tasks::Error::NotFound { .. }) => {
                    return Err(crate::errors::user(format!(
                        "instance group {}: spec.image: image {image:?} not found in {}; pass an image it has with `kops create cluster --image`, or set spec.image with `kops edit ig {}`",
                        ig.name(),
                        cloud.description,
                        ig.name()
                    )));
                }
                Err(e) => {
                    return Err(anyhow::Error::new(e).context(format!(
                        "instance group {}: spec.image: resolving {image}",
                        ig.name()
                    )));
                }
            };
            ctx = ctx.with_image(image.clone(), found);
        }
    }
    if let Some(vpc) = ctx.cluster.spec.networking.network_id.clone() {
        let igws = api
            .list(&ListQuery::new(ResourceType::InternetGateway))
            .await
            .context("listing internet gateways")?;
        if let Some(g) = igws
            .iter()
            .find(|g| g.attr_str("vpc_id") == Some(vpc.as_str()))
        {
            ctx = ctx.with_internet_gateway(g.id.clone());
        }
    }
    if !ctx.dns_none()
        && let Some(zone) = ctx.cluster.spec.dns_zone.clone()
    {
        let found = api
            .hosted_zones(&ZoneQuery::from_spec(&zone))
            .await
            .with_context(|| format!("looking up DNS zone {zone} (spec.dnsZone)"))?;
        match found.into_iter().next() {
            Some(z) => ctx = ctx.with_dns_zone(z),
            None => bail!(
                "cluster {name}: spec.dnsZone: DNS zone {zone:?} not found in {}",
                cloud.description
            ),
        }
    }
    Ok(Prepared { cloud, ctx })
}

fn overrides(args: &UpdateClusterArgs) -> anyhow::Result<LifecycleOverrides> {
    if args.lifecycle_overrides.is_empty() {
        return Ok(LifecycleOverrides::new());
    }
    LifecycleOverrides::parse(&args.lifecycle_overrides.join(",")).context("--lifecycle-overrides")
}

/// `kops update cluster`; returns the exit code.
pub async fn update_cluster(global: &Global, args: &UpdateClusterArgs) -> anyhow::Result<u8> {
    let name = state::cluster_name(args.cluster_name.as_deref(), global)?;
    let overrides = overrides(args)?;
    let st = State::open(global).await?;
    let Prepared { cloud, ctx } = prepare(global, &st, &name).await?;
    let model =
        builders::build(&ctx).with_context(|| format!("building the model of cluster {name}"))?;

    if args.target == Target::Terraform {
        let out = args
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from("out/terraform"));
        let rendered = render(
            &ctx,
            model,
            &RenderOptions::default().with_lifecycle_overrides(overrides),
        )
        .with_context(|| format!("rendering cluster {name} as Terraform"))?;
        rendered
            .write_to(&out)
            .with_context(|| format!("writing Terraform to {}", out.display()))?;
        eprintln!(
            "Terraform configuration for cluster {name} written to {}",
            out.display()
        );
        eprintln!("Run `terraform init` and `terraform apply` in that directory to create it.");
        return Ok(0);
    }

    let tasks: Vec<Box<dyn Task<dyn AwsCloud>>> = model
        .tasks
        .into_iter()
        .map(|t| Box::new(t) as Box<dyn Task<dyn AwsCloud>>)
        .collect();
    let graph = TaskGraph::build_with(tasks, &overrides)
        .with_context(|| format!("building the task graph of cluster {name}"))?;
    let api: &dyn AwsCloud = cloud.api.as_ref();
    let executor = Executor::new(ExecutorOptions::default());
    let mut plan = executor
        .plan(&graph, api)
        .await
        .with_context(|| format!("planning cluster {name} against {}", cloud.description))?;
    // Groups removed from the spec leave their autoscaling group and launch template
    // behind: plan their deletion too.
    let owned = orphans::find_group_objects(api, &name)
        .await
        .with_context(|| format!("listing the instance-group objects of cluster {name}"))?;
    plan.add_orphans(&graph, &owned);

    if !args.yes {
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
        return Ok(u8::try_from(plan.exit_code()).unwrap_or(1));
    }

    if !plan.has_changes() {
        if args.output == PlanFormat::Json {
            println!("{}", plan.to_json());
        } else {
            println!("No changes needed for cluster {name}.");
        }
        return Ok(0);
    }
    let full = v1alpha2::Cluster::from(&ctx.cluster);
    let result = st
        .locked(&name, "update cluster", async || {
            let bar = output::progress_bar(graph.len() as u64, "apply");
            let b = bar.clone();
            let executor = Executor::new(
                ExecutorOptions::default().with_progress(move |e| output::follow(&b, e)),
            );
            let report = executor.apply(&graph, api).await;
            bar.finish_and_clear();
            // The cloud changed whatever the outcome: persist the mock's state first.
            cloud.save().await?;
            if !report.failed.is_empty() {
                // One line per failed task with its error, then the skipped ones.
                let mut lines: Vec<String> = report
                    .failed
                    .iter()
                    .map(|(key, e)| {
                        let mut l = format!("{key}: {e}");
                        let mut source = std::error::Error::source(e);
                        while let Some(s) = source {
                            l.push_str(&format!(": {s}"));
                            source = s.source();
                        }
                        l
                    })
                    .collect();
                if !report.skipped.is_empty() {
                    lines.push(format!(
                        "{} task(s) not run because a dependency failed",
                        report.skipped.len()
                    ));
                }
                return Err(anyhow!("{}", lines.join("\n  ")).context(format!(
                    "applying cluster {name} to {}: {} task(s) failed",
                    cloud.description,
                    report.failed.len()
                )));
            }
            let mut applied = report.plan;
            // Then the orphans, one wave at a time (groups before their templates).
            let mut failed = Vec::new();
            for kinds in DELETION_WAVES {
                let wave: Vec<_> = owned
                    .iter()
                    .filter(|o| kinds.contains(&o.key.kind()))
                    .cloned()
                    .collect();
                failed.extend(
                    executor
                        .delete_orphans(&plan, &wave, &OrphanDeleter::new(), api, false)
                        .await,
                );
            }
            cloud.save().await?;
            if !failed.is_empty() {
                let lines: Vec<String> = failed.iter().map(|(k, e)| format!("{k}: {e}")).collect();
                return Err(anyhow!("{}", lines.join("\n  ")).context(format!(
                    "deleting objects of cluster {name} no longer in its spec: {} failed",
                    failed.len()
                )));
            }
            applied.add_orphans(&graph, &owned);
            st.registry
                .put_completed_spec(&full)
                .await
                .with_context(|| format!("writing the completed spec of cluster {name}"))?;
            st.registry
                .put_kops_version(&name, env!("CARGO_PKG_VERSION"))
                .await
                .with_context(|| format!("writing the kops version of cluster {name}"))?;
            Ok(applied)
        })
        .await?;
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
    Ok(0)
}
