//! Renders one kOps conformance case with the Terraform target, as kOps' integration
//! harness does (`kops update cluster --target terraform` with state in memory).
//!
//! ```text
//! cargo run --release -p kops-examples --example conformance -- CASE_DIR OUT_DIR
//! ```
//!
//! `CASE_DIR` holds `in-v1alpha2.yaml`, `case.yaml` and (when `sshKey: true`)
//! `id_rsa.pub`; the cloud is seeded from `CASE_DIR/../../fixtures/mock-cloud.yaml` and
//! images come from `fixtures/channels/stable`. `OUT_DIR` receives `kubernetes.tf` and
//! `data/`. Exits non-zero with the error chain when the case cannot be rendered.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use kops_api::channel::Channel;
use kops_api::defaults::{PopulateOptions, populate};
use kops_api::internal;
use kops_api::manifest::{self, Object};
use kops_api::validation::validate_all;
use kops_mock::fixture::Fixture;
use kops_mock::{MockAws, Seed};
use kops_model::aws::builders::files::MEMFS_BUCKET;
use kops_model::aws::builders::{self, ModelContext};
use kops_model::aws::cloud::{AwsCloud, AwsCloudExt, ListQuery, ResourceType, ZoneQuery};
use kops_model::aws::terraform::{RenderOptions, render};
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
}

/// The mock cloud seeded from `fixtures/mock-cloud.yaml`, with the partition kOps' test
/// harness reports (`aws-test`) and the state-store bucket.
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
    cloud
        .seed(Seed::Bucket(MEMFS_BUCKET.to_owned()))
        .context("seeding the state-store bucket")?;
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
    let mock = seeded_cloud(&fixtures)?;
    // Through the cloud trait (MockAws' own methods are the AWS operations).
    let cloud: &dyn AwsCloud = &mock;

    let mut cluster = None;
    let mut groups = Vec::new();
    for object in manifest::parse(&input, &input_path.display().to_string())? {
        match object {
            Object::Cluster(c) => cluster = Some(internal::Cluster::try_from(&c)?),
            Object::InstanceGroup(ig) => groups.push(internal::InstanceGroup::from(&ig)),
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
    if cluster.spec.cloud_provider.aws.is_none() {
        bail!("only AWS clusters are supported by this renderer");
    }

    // Shared subnets named only by ID take their zone from the cloud, as kOps does.
    let mut cluster = cluster;
    for sn in cluster.spec.networking.subnets.iter_mut().flatten() {
        if sn.zone.is_none()
            && let Some(id) = sn.id.clone()
            && let Some(found) = block_on(cloud.get(ResourceType::Subnet, &id))??
        {
            sn.zone = found.attr_str("availability_zone").map(str::to_owned);
        }
    }

    let mut opts = PopulateOptions::default().with_channel(channel);
    if let Some(vpc) = &cluster.spec.networking.network_id {
        let found = block_on(cloud.get(ResourceType::Vpc, vpc))??;
        if let Some(cidr) = found.as_ref().and_then(|r| r.attr_str("cidr_block")) {
            opts = opts.with_shared_network_cidr(cidr);
        }
    }
    let (cluster, groups) = populate(&cluster, &groups, &opts).context("completing the spec")?;
    if let Err(errors) = validate_all(&cluster, &groups) {
        let list: Vec<String> = errors.errors().iter().map(ToString::to_string).collect();
        bail!("the completed spec is invalid:\n  {}", list.join("\n  "));
    }

    let account = block_on(cloud.account())??;
    let mut ctx = ModelContext::new(cluster, groups, account.region.clone()).with_account(account);
    if case.ssh_key {
        let key =
            std::fs::read_to_string(case_dir.join("id_rsa.pub")).context("reading id_rsa.pub")?;
        ctx = ctx.with_ssh_public_key(key);
    }
    for ig in ctx.groups.clone() {
        if let Some(image) = &ig.spec.image
            && !ctx.images.contains_key(image)
        {
            let found = block_on(cloud.resolve_image(image))?
                .with_context(|| format!("instance group {}: resolving image", ig.name()))?;
            ctx = ctx.with_image(image.clone(), found);
        }
    }
    if let Some(vpc) = ctx.cluster.spec.networking.network_id.clone() {
        let igws = block_on(cloud.list(&ListQuery::new(ResourceType::InternetGateway)))??;
        if let Some(g) = igws
            .iter()
            .find(|g| g.attr_str("vpc_id") == Some(vpc.as_str()))
        {
            ctx = ctx.with_internet_gateway(g.id.clone());
        }
    }
    if !ctx.dns_none() {
        let zone_query = match &ctx.cluster.spec.dns_zone {
            Some(z) => ZoneQuery::from_spec(z),
            None => {
                let name = ctx.name().split_once('.').map_or("", |(_, d)| d).to_owned();
                ZoneQuery::Name(name)
            }
        };
        if let Some(z) = block_on(cloud.hosted_zones(&zone_query))??
            .into_iter()
            .next()
        {
            ctx = ctx.with_dns_zone(z);
        }
    }

    let mut overrides = LifecycleOverrides::new();
    if !case.lifecycle_overrides.is_empty() {
        overrides = LifecycleOverrides::parse(&case.lifecycle_overrides.join(","))
            .context("parsing lifecycleOverrides")?;
    }
    let model = builders::build(&ctx)?;
    let output = render(
        &ctx,
        model,
        &RenderOptions::default().with_lifecycle_overrides(overrides),
    )?;
    output.write_to(&out_dir)?;
    Ok(())
}
