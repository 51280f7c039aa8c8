//! `validate cluster` over [`kops_model::day2::validate`]: exit 0 valid, 2 not valid, 1
//! could not validate.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use kops_api::{internal, v1alpha2};
use kops_model::day2::groups::{AwsInstanceGroups, GceInstanceGroups, InstanceGroupCloud};
use kops_model::day2::validate::{
    RepeatOptions, ValidateOptions, ValidationCluster, Validator, validate_until,
};

use crate::cli::Global;
use crate::cloud::Cloud;
use crate::gce::GceCloudHandle;
use crate::kubeconfig::{admin_client, parse_duration};
use crate::state::{self, State};

/// Output of `validate cluster`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq, Default)]
pub enum ValidateFormat {
    /// Tables
    #[default]
    Table,
    /// One JSON document per attempt, one line each
    Json,
}

/// `kops validate cluster` flags.
#[derive(Debug, Args)]
pub struct ValidateClusterArgs {
    /// Cluster name (default: --name)
    pub cluster_name: Option<String>,
    /// Retry until valid for this long (e.g. 10m); 0 validates once
    #[arg(long, default_value = "0", value_name = "DURATION")]
    pub wait: String,
    /// Consecutive successes needed (0 acts as 1)
    #[arg(long, default_value_t = 0)]
    pub count: u32,
    /// Pause between attempts
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub interval: String,
    /// Tolerate up to this many not-ready worker nodes
    #[arg(long, default_value_t = 0)]
    pub max_unready_nodes: usize,
    /// Output format
    #[arg(short = 'o', long, value_enum, default_value_t)]
    pub output: ValidateFormat,
    /// Override the API server URL
    #[arg(long, value_name = "URL")]
    pub api_server: Option<String>,
}

/// The cluster's internal instance groups.
pub async fn instance_groups(
    st: &State,
    name: &str,
) -> anyhow::Result<Vec<internal::InstanceGroup>> {
    let groups: Vec<v1alpha2::InstanceGroup> = st.groups(name).await?;
    Ok(groups.iter().map(internal::InstanceGroup::from).collect())
}

/// The cloud a validate or rolling-update command opened: what a rolling update did to
/// a mock cloud is kept with [`GroupCloud::save`].
pub enum GroupCloud {
    /// An AWS cluster's.
    Aws(Cloud),
    /// A GCE cluster's.
    Gce(GceCloudHandle),
    /// A Hetzner cluster's.
    Hetzner(crate::hetzner::HetznerCloudHandle),
}

impl GroupCloud {
    /// Persists what changed in the mock cloud (nothing to do for a real one).
    pub async fn save(&self) -> anyhow::Result<()> {
        match self {
            GroupCloud::Aws(c) => c.save().await,
            GroupCloud::Gce(c) => c.save().await,
            GroupCloud::Hetzner(c) => c.save().await,
        }
    }
}

/// The cloud side of validate and rolling-update (`command`) for a stored cluster, with
/// the cloud itself. AWS, GCE and Hetzner; another cloud's cluster is an error naming
/// its provider.
pub async fn group_cloud(
    global: &Global,
    st: &State,
    name: &str,
    command: &str,
) -> anyhow::Result<(GroupCloud, Arc<dyn InstanceGroupCloud>)> {
    let stored = st.cluster(name).await?.value;
    match stored.spec.cloud_provider.as_deref().unwrap_or_default() {
        "aws" => {
            let cloud =
                Cloud::open(st, global.mock_cloud, &crate::update::region(&stored)?).await?;
            let api: Arc<dyn kops_model::aws::AwsCloud> = cloud.api.clone();
            Ok((
                GroupCloud::Aws(cloud),
                Arc::new(AwsInstanceGroups::new(api)),
            ))
        }
        "gce" => {
            let cloud = crate::gce::open(global, st, &stored).await?;
            let api: Arc<dyn kops_cloud_gce::GceCloud> = cloud.api.clone();
            Ok((
                GroupCloud::Gce(cloud),
                Arc::new(GceInstanceGroups::new(api)),
            ))
        }
        "hetzner" => {
            // Commands that terminate servers make their replacements.
            let replace = !matches!(command, "validate cluster" | "get instances");
            let (cloud, igs) =
                crate::hetzner::instance_groups(global, st, &stored, replace).await?;
            Ok((GroupCloud::Hetzner(cloud), igs))
        }
        provider => anyhow::bail!(
            "cluster {name}: spec.cloudProvider {provider:?}: `{command}` supports AWS, GCE and Hetzner clusters"
        ),
    }
}

fn print_table(name: &str, v: &ValidationCluster) {
    println!("Validating cluster {name}\n");
    println!("NODE STATUS");
    println!("{:<30} {:<15} {:<6}", "NAME", "ROLE", "READY");
    for n in &v.nodes {
        println!("{:<30} {:<15} {:<6}", n.name, n.role, n.status);
    }
    if !v.failures.is_empty() {
        println!("\nVALIDATION ERRORS");
        println!("{:<15} {:<30} MESSAGE", "KIND", "NAME");
        for f in &v.failures {
            println!("{:<15} {:<30} {}", f.kind, f.name, f.message);
        }
        println!("\nValidation Failed");
    } else {
        println!("\nYour cluster {name} is ready");
    }
}

/// `kops validate cluster`; returns the exit code.
pub async fn validate_cluster(global: &Global, args: &ValidateClusterArgs) -> anyhow::Result<u8> {
    let name = state::cluster_name(args.cluster_name.as_deref(), global)?;
    let st = State::open(global).await?;
    let wait = parse_duration(&args.wait).context("--wait")?;
    let interval = parse_duration(&args.interval).context("--interval")?;
    let groups = instance_groups(&st, &name).await?;
    let (_cloud, cloud) = group_cloud(global, &st, &name, "validate cluster").await?;
    let client = admin_client(global, &st, &name, args.api_server.as_deref()).await?;
    let validator = Validator::new(
        client,
        cloud,
        name.clone(),
        groups,
        ValidateOptions::default().with_max_unready_nodes(args.max_unready_nodes),
    );
    let repeat = RepeatOptions::new(wait, args.count).with_intervals(interval, interval);
    let json = args.output == ValidateFormat::Json;
    let last = validate_until(&validator, &repeat, |attempt| match attempt {
        Ok(v) if json => println!("{}", serde_json::to_string(v).unwrap_or_default()),
        Err(e) if json && wait > Duration::ZERO => {
            println!("{}", serde_json::json!({"error": e.to_string()}))
        }
        _ => {}
    })
    .await;
    match last {
        Ok(v) => {
            if !json {
                print_table(&name, &v);
            }
            Ok(if v.is_valid() { 0 } else { 2 })
        }
        Err(e) => Err(anyhow::Error::new(e).context(format!("cluster {name}: could not validate"))),
    }
}
