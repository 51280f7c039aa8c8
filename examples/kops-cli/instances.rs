//! `get instances`: each instance group's machines as the cloud reports them (AWS and GCE),
//! whether each runs its group's current configuration, and, when the cluster's API
//! answers, the node registered on it.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use kops_api::internal::InstanceGroupRole;
use kops_model::day2::groups::MemberStatus;
use kops_model::day2::validate::{NodeOfInstance, nodes_by_instance};
use serde_json::json;

use crate::cli::Global;
use crate::get::print_table;
use crate::kubeconfig::admin_client;
use crate::state::{self, State};
use crate::validate::{group_cloud, instance_groups};

/// How long `get instances` waits for the cluster's API before it shows the machines
/// without their nodes.
const API_TIMEOUT: Duration = Duration::from_secs(10);

/// Output of `get instances`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq, Default)]
pub enum InstancesFormat {
    /// A table
    #[default]
    Table,
    /// One JSON document
    Json,
    /// One YAML document
    Yaml,
}

/// `kops get instances` flags.
#[derive(Debug, Args)]
pub struct GetInstancesArgs {
    /// Cluster name (default: --name)
    pub cluster_name: Option<String>,
    /// Output format
    #[arg(short, long, value_enum, default_value_t)]
    pub output: InstancesFormat,
    /// Do not ask the Kubernetes API for the nodes
    #[arg(long)]
    pub cloudonly: bool,
    /// Override the API server URL
    #[arg(long, value_name = "URL")]
    pub api_server: Option<String>,
}

fn role(r: Option<&InstanceGroupRole>) -> &'static str {
    match r {
        Some(InstanceGroupRole::ControlPlane) => "control-plane",
        Some(InstanceGroupRole::ApiServer) => "apiserver",
        Some(InstanceGroupRole::Bastion) => "bastion",
        _ => "node",
    }
}

/// The nodes by machine, or nothing (with a warning saying why) when the API does not
/// answer in time.
async fn nodes(
    global: &Global,
    st: &State,
    name: &str,
    api_server: Option<&str>,
) -> BTreeMap<String, NodeOfInstance> {
    let listed = async {
        let client = admin_client(global, st, name, api_server).await?;
        nodes_by_instance(&client).await.map_err(anyhow::Error::new)
    };
    match tokio::time::timeout(API_TIMEOUT, listed).await {
        Ok(Ok(nodes)) => nodes,
        Ok(Err(e)) => {
            eprintln!(
                "warning: cluster {name}: cannot list its nodes ({e:#}); showing the machines only"
            );
            BTreeMap::new()
        }
        Err(_) => {
            eprintln!(
                "warning: cluster {name}: its API did not answer within {}s; showing the machines only",
                API_TIMEOUT.as_secs()
            );
            BTreeMap::new()
        }
    }
}

/// `kops get instances`.
pub async fn get_instances(global: &Global, args: &GetInstancesArgs) -> anyhow::Result<()> {
    let name = state::cluster_name(args.cluster_name.as_deref(), global)?;
    let st = State::open(global).await?;
    let groups = instance_groups(&st, &name).await?;
    let (_cloud, cloud) = group_cloud(global, &st, &name, "get instances").await?;
    let found = cloud
        .cloud_groups(&name, &groups)
        .await
        .with_context(|| format!("cluster {name}: reading its instance groups"))?;
    let nodes = if args.cloudonly {
        BTreeMap::new()
    } else {
        nodes(global, &st, &name, args.api_server.as_deref()).await
    };
    let mut rows = Vec::new();
    let mut docs = Vec::new();
    for g in &found {
        let ig = groups.iter().find(|ig| ig.name() == g.instance_group);
        let roles = role(ig.and_then(|ig| ig.spec.role.as_ref()));
        for m in &g.members {
            let (status, reason) = match &m.status {
                MemberStatus::UpToDate => ("UpToDate", None),
                MemberStatus::NeedsUpdate { reason } => ("NeedsUpdate", Some(reason.as_str())),
                MemberStatus::Detached => ("Detached", None),
                _ => ("Unknown", None),
            };
            let node = nodes.get(&m.id);
            // kOps' states: a machine waiting in the warm pool, or none.
            let state = if m.warm_pool { "WarmPool" } else { "" };
            rows.push(vec![
                m.id.clone(),
                node.map(|n| n.name.clone()).unwrap_or_default(),
                status.to_owned(),
                roles.to_owned(),
                state.to_owned(),
                m.internal_ip.clone().unwrap_or_default(),
                g.instance_group.clone(),
                m.machine_type.clone().unwrap_or_default(),
            ]);
            docs.push(json!({
                "id": m.id,
                "nodeName": node.map(|n| n.name.as_str()),
                "ready": node.map(|n| n.ready),
                "status": status,
                "reason": reason,
                "roles": roles,
                "state": state,
                "internalIP": m.internal_ip,
                "instanceGroup": g.instance_group,
                "cloudGroup": g.group,
                "machineType": m.machine_type,
            }));
        }
    }
    match args.output {
        InstancesFormat::Json => println!("{}", serde_json::to_string_pretty(&docs)?),
        InstancesFormat::Yaml => print!("{}", kops_api::yaml::to_string(&docs)?),
        InstancesFormat::Table => {
            print_table(
                &[
                    "ID",
                    "NODE-NAME",
                    "STATUS",
                    "ROLES",
                    "STATE",
                    "INTERNAL-IP",
                    "INSTANCE-GROUP",
                    "MACHINE-TYPE",
                ],
                &rows,
            );
        }
    }
    Ok(())
}
