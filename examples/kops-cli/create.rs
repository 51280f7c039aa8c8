//! `create cluster`, `create -f`, `create sshpublickey` and `replace -f`.
//!
//! `create cluster` builds the Cluster and InstanceGroups from flags the way kOps' `create
//! cluster` does (`kops_model::new_cluster`), finding an existing network's VPC, subnets
//! and CIDRs in the cloud, applies `--set`/`--unset`, validates the completed spec and
//! stores the unpopulated one with the CIDRs, machine types and images the completed spec
//! assigned.

use std::path::Path;

use anyhow::{Context as _, anyhow, bail};
use kops_api::defaults::PopulateOptions;
use kops_api::manifest::Object;
use kops_api::v1alpha2;
use kops_model::{
    DnsType, GroupRole, LoadBalancerType, NewClusterOptions, NewInstanceGroupOptions, Topology,
    new_cluster, new_instance_group,
};

use crate::cli::{
    CloudArg, CreateClusterArgs, CreateIgArgs, CreateSshKeyArgs, DnsArg, Global, LoadBalancerArg,
    TopologyArg,
};
use crate::spec::{self, Manifest};
use crate::state::{self, State};

/// The library's options for the `create cluster` flags; `network` is what
/// [`shared_network`] found for `--network-id`, `--subnets` and `--utility-subnets`.
fn options(
    name: &str,
    args: &CreateClusterArgs,
    state_url: &str,
    kubernetes_version: &str,
    network: SharedNetwork,
) -> anyhow::Result<NewClusterOptions> {
    let labels = args
        .cloud_labels
        .iter()
        .map(|l| cloud_label(l))
        .collect::<anyhow::Result<_>>()?;
    let authorization = match args.authorization.to_ascii_lowercase().as_str() {
        "rbac" | "" => kops_model::Authorization::Rbac,
        "alwaysallow" => kops_model::Authorization::AlwaysAllow,
        other => bail!("--authorization: unknown mode {other:?} (RBAC or AlwaysAllow)"),
    };
    let instance_manager = match args.instance_manager.to_ascii_lowercase().as_str() {
        "cloudgroups" | "" => kops_model::InstanceManager::CloudGroups,
        "karpenter" => kops_model::InstanceManager::Karpenter,
        other => bail!("--instance-manager: unknown manager {other:?} (cloudgroups or karpenter)"),
    };
    let mut o = NewClusterOptions::new(name, state_url)
        .with_cloud(match args.cloud {
            CloudArg::Aws => kops_model::Cloud::Aws,
            CloudArg::Gce => kops_model::Cloud::Gce,
            CloudArg::Hetzner => kops_model::Cloud::Hetzner,
        })
        .with_zones(args.zones.iter().cloned())
        .with_control_plane_zones(args.control_plane_zones.iter().cloned())
        .with_control_plane_count(args.control_plane_count)
        .with_node_size(args.node_size.clone())
        .with_control_plane_size(args.control_plane_size.clone())
        .with_api_server_count(args.api_server_count)
        .with_api_server_size(args.api_server_size.clone())
        .with_image(args.image.clone())
        .with_networking(args.networking.clone())
        .with_dns_zone(args.dns_zone.clone())
        .with_project(args.project.clone())
        .with_kubernetes_version(kubernetes_version)
        .with_bastion(args.bastion)
        .with_api_load_balancer_type(args.api_load_balancer_type.map(|t| match t {
            LoadBalancerArg::Public => LoadBalancerType::Public,
            LoadBalancerArg::Internal => LoadBalancerType::Internal,
        }))
        .with_admin_access(args.admin_access.clone())
        .with_ssh_access(args.ssh_access.clone())
        .with_cloud_labels(labels)
        .with_channel(args.channel.clone())
        .with_node_volume_size(args.node_volume_size)
        .with_control_plane_volume_size(args.control_plane_volume_size)
        .with_encrypt_etcd_storage(args.encrypt_etcd_storage);
    if let Some(n) = args.node_count {
        o = o.with_node_count(n);
    }
    if let Some(t) = args.topology {
        o = o.with_topology(match t {
            TopologyArg::Public => Topology::Public,
            TopologyArg::Private => Topology::Private,
        });
    }
    if let Some(d) = args.dns {
        o = o.with_dns(match d {
            DnsArg::Public => DnsType::Public,
            DnsArg::Private => DnsType::Private,
            DnsArg::None => DnsType::None,
        });
    }
    let mut cidrs = args.network_cidr.iter().map(|c| c.trim().to_owned());
    o.network_cidr = cidrs.next().or(network.cidr);
    o.additional_network_cidrs = cidrs.collect();
    o.network_id = network.id;
    o.subnet_ids = network.subnets;
    o.utility_subnet_ids = network.utility_subnets;
    o.subnet_cidrs = network.cidrs;
    o.ipv6 = args.ipv6;
    o.egress = args.egress.clone().filter(|e| !e.trim().is_empty());
    o.disable_subnet_tags = args.disable_subnet_tags;
    o.node_image.clone_from(&args.node_image);
    o.control_plane_image.clone_from(&args.control_plane_image);
    o.bastion_image.clone_from(&args.bastion_image);
    o.node_security_groups
        .clone_from(&args.node_security_groups);
    o.control_plane_security_groups
        .clone_from(&args.control_plane_security_groups);
    o.associate_public_ip = args.associate_public_ip;
    o.api_ssl_certificate.clone_from(&args.api_ssl_certificate);
    o.api_public_name.clone_from(&args.api_public_name);
    o.authorization = authorization;
    o.kubernetes_feature_gates
        .clone_from(&args.kubernetes_feature_gates);
    o.discovery_store.clone_from(&args.discovery_store);
    o.instance_manager = instance_manager;
    o.etcd_clusters.clone_from(&args.etcd_clusters);
    o.etcd_storage_type.clone_from(&args.etcd_storage_type);
    o.node_volume_type.clone_from(&args.node_volume_type);
    o.control_plane_volume_type
        .clone_from(&args.control_plane_volume_type);
    o.node_tenancy.clone_from(&args.node_tenancy);
    o.control_plane_tenancy
        .clone_from(&args.control_plane_tenancy);
    o.gce_service_account.clone_from(&args.gce_service_account);
    Ok(o)
}

/// One `--cloud-labels` pair as kOps reads it: `KEY=VALUE`, either side in double quotes
/// when it holds `=` (`""` is a quote inside them), leading spaces dropped.
fn cloud_label(pair: &str) -> anyhow::Result<(String, String)> {
    let malformed =
        || anyhow!("--cloud-labels: {pair:?} is not KEY=VALUE (quote a side holding '=')");
    let mut fields = Vec::new();
    let mut rest = pair;
    loop {
        rest = rest.trim_start();
        let (field, after) = if let Some(quoted) = rest.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices().peekable();
            let mut end = None;
            while let Some((i, c)) = chars.next() {
                if c == '"' {
                    if chars.peek().map(|(_, n)| *n) == Some('"') {
                        value.push('"');
                        chars.next();
                    } else {
                        end = Some(i + 1);
                        break;
                    }
                } else {
                    value.push(c);
                }
            }
            let end = end.ok_or_else(malformed)?;
            let after = &quoted[end..];
            if !(after.is_empty() || after.starts_with('=')) {
                return Err(malformed());
            }
            (value, after)
        } else {
            match rest.find('=') {
                Some(i) => (rest[..i].to_owned(), &rest[i..]),
                None => (rest.to_owned(), ""),
            }
        };
        fields.push(field);
        match after.strip_prefix('=') {
            Some(next) => rest = next,
            None => break,
        }
    }
    match fields.as_slice() {
        [k, v] if !k.is_empty() => Ok((k.clone(), v.clone())),
        _ => Err(malformed()),
    }
}

/// An existing network the cluster is built in, as `create cluster` found it.
#[derive(Default)]
pub struct SharedNetwork {
    id: Option<String>,
    /// The VPC's CIDR, when no --network-cidr is given (kOps reads it too).
    cidr: Option<String>,
    subnets: std::collections::BTreeMap<String, String>,
    utility_subnets: std::collections::BTreeMap<String, String>,
    /// Each subnet's CIDR, by ID.
    cidrs: std::collections::BTreeMap<String, String>,
}

/// `--network-id`, `--subnets` and `--utility-subnets` resolved as kOps resolves them on
/// AWS: the VPC of the first subnet when no network is given, each subnet's zone, and the
/// VPC's CIDR (asked of the cloud: the mock with `--mock-cloud`). On GCE the one subnet
/// is taken as given.
async fn shared_network(
    global: &Global,
    args: &CreateClusterArgs,
) -> anyhow::Result<SharedNetwork> {
    let mut network = SharedNetwork {
        id: args.network_id.clone().filter(|n| !n.trim().is_empty()),
        ..SharedNetwork::default()
    };
    if args.cloud == CloudArg::Gce {
        if args.subnets.len() > 1 {
            bail!(
                "--subnets: a GCE cluster takes one subnet, not {}",
                args.subnets.len()
            );
        }
        if let Some(s) = args.subnets.first() {
            network.subnets.insert(String::new(), s.clone());
        }
        return Ok(network);
    }
    if network.id.is_none() && args.subnets.is_empty() {
        return Ok(network);
    }
    use kops_model::aws::cloud::{ListQuery, ResourceType};
    use kops_tasks::resource::ResourceCloud as _;
    let region = kops_api::validation::region_of_zone(
        args.zones.first().map(String::as_str).unwrap_or_default(),
        Some(kops_api::internal::CloudProvider::Aws),
    );
    let st = State::open(global).await?;
    let cloud = crate::cloud::Cloud::open(&st, global.mock_cloud, &region).await?;
    let ids: Vec<String> = args
        .subnets
        .iter()
        .chain(&args.utility_subnets)
        .cloned()
        .collect();
    let found = if ids.is_empty() {
        Vec::new()
    } else {
        cloud
            .api
            .list(&ListQuery::new(ResourceType::Subnet).with_ids(ids.clone()))
            .await
            .context("looking up --subnets and --utility-subnets")?
    };
    let attr = |r: &kops_model::aws::cloud::Resource, k: &str| {
        r.attrs.get(k).and_then(|v| v.as_str()).map(str::to_owned)
    };
    if network.id.is_none() {
        let first = &args.subnets[0];
        let subnet = found
            .iter()
            .find(|r| &r.id == first)
            .ok_or_else(|| anyhow!("--subnets: subnet {first} not found"))?;
        network.id = attr(subnet, "vpc_id");
        if network.id.is_none() {
            bail!("--subnets: cannot tell the VPC of subnet {first}");
        }
    }
    let vpc = network.id.clone().unwrap_or_default();
    let zones_of = |ids: &[String],
                    flag: &str|
     -> anyhow::Result<std::collections::BTreeMap<String, String>> {
        let mut by_zone = std::collections::BTreeMap::new();
        for id in ids {
            let subnet = found
                .iter()
                .find(|r| &r.id == id && attr(r, "vpc_id").as_deref() == Some(vpc.as_str()))
                .ok_or_else(|| anyhow!("{flag}: subnet {id} not found in VPC {vpc}"))?;
            let zone = attr(subnet, "availability_zone")
                .ok_or_else(|| anyhow!("{flag}: subnet {id} has no zone"))?;
            if let Some(other) = by_zone.insert(zone.clone(), id.clone()) {
                bail!("{flag}: subnets {other} and {id} are both in zone {zone}");
            }
        }
        Ok(by_zone)
    };
    network.cidrs = found
        .iter()
        .filter_map(|r| Some((r.id.clone(), attr(r, "cidr_block")?)))
        .collect();
    network.subnets = zones_of(&args.subnets, "--subnets")?;
    network.utility_subnets = zones_of(&args.utility_subnets, "--utility-subnets")?;
    if args.network_cidr.is_empty() {
        let vpcs = cloud
            .api
            .list(&ListQuery::new(ResourceType::Vpc).with_ids([vpc.clone()]))
            .await
            .with_context(|| format!("looking up VPC {vpc}"))?;
        let found = vpcs
            .first()
            .ok_or_else(|| anyhow!("--network-id: VPC {vpc} not found"))?;
        network.cidr = attr(found, "cidr_block");
        if network.cidr.is_none() {
            bail!("--network-id: cannot tell the CIDR of VPC {vpc}; give --network-cidr");
        }
    }
    Ok(network)
}

/// Asks the cloud (the mock with `--mock-cloud`) for the machine type of each group that
/// has none, as kOps' `create cluster` does on AWS: by the group's role, the zones of its
/// subnets and its image's architecture (arm64 when the image names it; kOps' default
/// images are amd64 unless a machine type was given).
async fn default_machine_types(
    global: &Global,
    cluster: &v1alpha2::Cluster,
    groups: &mut [v1alpha2::InstanceGroup],
) -> anyhow::Result<()> {
    use kops_model::aws::cloud::{AwsCloud as _, MachineRole};
    if groups.iter().all(|g| g.spec.machine_type.is_some()) {
        return Ok(());
    }
    let subnets = cluster.spec.subnets.as_deref().unwrap_or_default();
    let region = kops_api::validation::region_of_zone(
        subnets
            .iter()
            .find_map(|s| s.zone.as_deref())
            .unwrap_or_default(),
        Some(kops_api::internal::CloudProvider::Aws),
    );
    let st = State::open(global).await?;
    let cloud = crate::cloud::Cloud::open(&st, global.mock_cloud, &region).await?;
    for g in groups.iter_mut() {
        if g.spec.machine_type.is_some() || g.spec.manager.as_deref() == Some("Karpenter") {
            continue;
        }
        let role = match g.spec.role.as_deref() {
            Some("Node") => MachineRole::Node,
            Some("Bastion") => MachineRole::Bastion,
            _ => MachineRole::ControlPlane,
        };
        let mut zones: Vec<String> = g
            .spec
            .subnets
            .iter()
            .flatten()
            .filter_map(|n| subnets.iter().find(|s| s.name.as_ref() == Some(n)))
            .filter_map(|s| s.zone.clone())
            .collect();
        zones.sort();
        zones.dedup();
        let arm64 = g.spec.image.as_deref().is_some_and(|i| i.contains("arm64"));
        let machine_type = cloud
            .api
            .default_instance_type(role, &zones, arm64)
            .await
            .with_context(|| {
                format!(
                    "instance group {}: choosing its default machine type in {}",
                    g.name(),
                    cloud.description
                )
            })?;
        g.spec.machine_type = Some(machine_type);
    }
    Ok(())
}

/// `--set`/`--unset` paths as kOps' `create cluster` takes them: a path may start with
/// `cluster.` (`cluster.spec.x=y` is `spec.x=y`); only the key is changed, never the value.
fn without_cluster_prefix(fields: &[String]) -> Vec<String> {
    fields
        .iter()
        .map(|f| match f.strip_prefix("cluster.") {
            Some(rest) if !rest.starts_with('=') && !rest.is_empty() => rest.to_owned(),
            _ => f.clone(),
        })
        .collect()
}

/// Builds the Cluster and InstanceGroups `create cluster` stores.
pub fn build_cluster(
    name: &str,
    args: &CreateClusterArgs,
    state_url: &str,
    kubernetes_version: &str,
    network: SharedNetwork,
) -> anyhow::Result<(v1alpha2::Cluster, Vec<v1alpha2::InstanceGroup>)> {
    new_cluster(&options(
        name,
        args,
        state_url,
        kubernetes_version,
        network,
    )?)
    .map_err(|e| anyhow!(e).context("building the cluster from flags"))
}

/// `kops create cluster`.
pub async fn create_cluster(global: &Global, args: &CreateClusterArgs) -> anyhow::Result<u8> {
    let name = state::cluster_name(args.cluster_name.as_deref(), global)?;
    let state_url = global.state.clone().unwrap_or_default();
    let version = match &args.kubernetes_version {
        Some(v) => v.clone(),
        None => default_kubernetes_version()?,
    };
    let network = shared_network(global, args).await?;
    let (cluster, mut groups) = build_cluster(
        &name,
        args,
        state_url.trim_end_matches('/'),
        &version,
        network,
    )?;
    // kOps' --unset and --set, on the cluster the flags made.
    let sets = without_cluster_prefix(&args.fields.sets);
    let unsets = without_cluster_prefix(&args.fields.unsets);
    let mut cluster = kops_api::fields::apply_fields(&cluster, &sets, &unsets)
        .context("create cluster: --set/--unset")?;
    // Calico's eBPF data plane replaces kube-proxy (and takes its health port): kOps turns
    // kube-proxy off unless the spec says otherwise.
    let calico_bpf = cluster
        .spec
        .networking
        .as_ref()
        .and_then(|n| n.calico.as_ref())
        .and_then(|c| c.bpf_enabled)
        == Some(true);
    if calico_bpf {
        let kube_proxy = cluster.spec.kube_proxy.get_or_insert_with(Default::default);
        if kube_proxy.enabled.is_none() {
            kube_proxy.enabled = Some(false);
        }
    }
    // kOps asks the cloud for the machine type of each AWS group given none.
    if args.cloud == CloudArg::Aws {
        default_machine_types(global, &cluster, &mut groups).await?;
    }
    let ssh_key = match &args.ssh_public_key {
        Some(p) => Some(read_ssh_key(p)?),
        None => None,
    };
    // Validate the completed spec; keep what kOps' create writes explicitly (machine
    // types and images) in the stored, otherwise unpopulated, spec.
    let (full, full_groups) = spec::complete(&cluster, &groups)?;
    kops_model::perform_assignments(&mut cluster, &v1alpha2::Cluster::from(&full));
    for (g, full) in groups.iter_mut().zip(&full_groups) {
        if g.spec.machine_type.is_none() {
            g.spec.machine_type = full.spec.machine_type.clone();
        }
        if g.spec.image.is_none() {
            g.spec.image = full.spec.image.clone();
        }
    }
    if args.dry_run {
        let mut objects = vec![Object::Cluster(cluster)];
        objects.extend(groups.into_iter().map(Object::InstanceGroup));
        print!(
            "{}",
            spec::render(&objects, args.output == crate::cli::ManifestFormat::Json)?
        );
        return Ok(0);
    }
    let st = State::open(global).await?;
    store_new(&st, &cluster, &groups, ssh_key.as_deref()).await?;
    println!("Created cluster {name} in {}", st.url);
    crate::toolbox::warn_unsafe_store(&st).await;
    if args.yes {
        // kOps' `create cluster --yes`: the update follows.
        let update = crate::cli::UpdateClusterArgs {
            cluster_name: Some(name),
            yes: true,
            target: args.target,
            out: args.out.clone(),
            output: crate::cli::PlanFormat::Text,
            lifecycle_overrides: Vec::new(),
            prune: false,
            refresh: false,
            instance_groups: Vec::new(),
            roles: Vec::new(),
            create_kube_config: None,
            kubeconfig: Default::default(),
            ignore_kubelet_version_skew: false,
            backend: Default::default(),
            phase: None,
            kops_identical_files: false,
            reconciling: false,
        };
        return crate::update::update_cluster(global, &update).await;
    }
    println!(" * edit it:    kops edit cluster {name}");
    println!(" * plan it:    kops update cluster {name}");
    println!(" * apply it:   kops update cluster {name} --yes");
    Ok(0)
}

/// `kops create instancegroup`: the group as kOps' command makes it (role, subnets, zones,
/// node label, and the machine type, image and sizes the completed spec gives it), checked
/// with the cluster's other groups; printed with --dry-run, opened in the editor unless
/// --edit=false, then stored under the cluster's lock.
pub async fn create_instance_group(global: &Global, args: &CreateIgArgs) -> anyhow::Result<()> {
    let name = state::cluster_name(None, global)?;
    let st = State::open(global).await?;
    let cluster = st.cluster(&name).await?.value;
    let existing = st.groups(&name).await?;
    let options = NewInstanceGroupOptions::new(args.group.as_str())
        .with_role(GroupRole::parse(&args.role).map_err(|e| anyhow!(e).context("--role"))?)
        .with_subnets(args.subnets.iter().cloned())
        .with_zones(args.zones.iter().cloned());
    let populate = PopulateOptions::default().with_channel(spec::channel()?);
    let group = new_instance_group(&cluster, &existing, &options, &populate).map_err(|e| {
        anyhow!(e).context(format!(
            "creating instance group {:?} of cluster {name}",
            args.group
        ))
    })?;
    if args.dry_run {
        let json = args.output == crate::cli::ManifestFormat::Json;
        print!("{}", spec::render(&[Object::InstanceGroup(group)], json)?);
        return Ok(());
    }
    if args.edit {
        return crate::edit::edit_new_group(&st, &name, group).await;
    }
    st.locked(&name, "create instancegroup", async || {
        st.registry
            .create_instance_group(&name, &group)
            .await
            .map(|_| ())
            .with_context(|| format!("storing instance group {} of cluster {name}", group.name()))
    })
    .await?;
    println!("Created instance group {name}/{}", group.name());
    println!(" * apply it:   kops update cluster {name} --yes");
    Ok(())
}

fn default_kubernetes_version() -> anyhow::Result<String> {
    kops_model::channel::default_kubernetes_version(&spec::channel()?).ok_or_else(|| {
        anyhow!("the channel recommends no Kubernetes version; pass --kubernetes-version")
    })
}

fn read_ssh_key(path: &Path) -> anyhow::Result<String> {
    let key = std::fs::read_to_string(path)
        .with_context(|| format!("reading SSH public key {}", path.display()))?;
    kops_statestore::registry::ssh_fingerprint(&key)
        .with_context(|| format!("SSH public key {}", path.display()))?;
    Ok(key)
}

/// Stores a new cluster with its groups (and key) under the cluster's lock.
async fn store_new(
    st: &State,
    cluster: &v1alpha2::Cluster,
    groups: &[v1alpha2::InstanceGroup],
    ssh_key: Option<&str>,
) -> anyhow::Result<()> {
    let name = cluster.name().to_string();
    // Only a store that answers "not found" gets the cluster: one that cannot be read
    // (no credentials, another account's bucket) is never written to.
    match st.registry.get_cluster(&name).await {
        Ok(_) => bail!("cluster {name} already exists in state store {}", st.url),
        Err(kops_statestore::Error::NotFound { .. }) => {}
        Err(e) => {
            return Err(anyhow::Error::new(e).context(format!(
                "reading cluster {name} from state store {}",
                st.url
            )));
        }
    }
    st.locked(&name, "create cluster", async || {
        st.registry
            .create_cluster(cluster)
            .await
            .with_context(|| format!("storing cluster {name} in {}", st.url))?;
        for g in groups {
            st.registry
                .create_instance_group(&name, g)
                .await
                .with_context(|| {
                    format!("storing instance group {} of cluster {name}", g.name())
                })?;
        }
        if let Some(key) = ssh_key {
            st.registry
                .add_ssh_public_key(&name, key)
                .await
                .with_context(|| format!("storing the SSH public key of cluster {name}"))?;
        }
        Ok(())
    })
    .await
}

/// `kops create sshpublickey`.
pub async fn create_ssh_public_key(global: &Global, args: &CreateSshKeyArgs) -> anyhow::Result<()> {
    let name = state::cluster_name(None, global)?;
    let key = read_ssh_key(&args.ssh_public_key)?;
    let st = State::open(global).await?;
    st.cluster(&name).await?;
    let id = st
        .locked(&name, "create sshpublickey", async || {
            st.registry
                .add_ssh_public_key(&name, &key)
                .await
                .with_context(|| format!("storing the SSH public key of cluster {name}"))
        })
        .await?;
    println!("Added SSH public key {id} to cluster {name}");
    Ok(())
}

/// The cluster a manifest's instance groups belong to: their label, else the manifest's
/// cluster, else `--name`.
pub(crate) fn group_cluster(
    g: &v1alpha2::InstanceGroup,
    manifest: &Manifest,
    global: &Global,
    source: &str,
) -> anyhow::Result<String> {
    if let Some(c) = g
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(kops_statestore::registry::CLUSTER_LABEL))
    {
        return Ok(c.clone());
    }
    if let [c] = manifest.clusters.as_slice() {
        return Ok(c.name().to_string());
    }
    global.name.clone().ok_or_else(|| {
        anyhow!(
            "{source}: instance group {} has no label {} and no cluster is named (use --name)",
            g.name(),
            kops_statestore::registry::CLUSTER_LABEL
        )
    })
}

/// Checks everything a manifest would leave in the store: each cluster with its final
/// set of instance groups completes and validates.
async fn check_manifest(
    st: &State,
    m: &Manifest,
    global: &Global,
    source: &str,
    replace: bool,
) -> anyhow::Result<Vec<(String, Vec<v1alpha2::InstanceGroup>)>> {
    let mut by_cluster: Vec<(String, Vec<v1alpha2::InstanceGroup>)> = Vec::new();
    for g in &m.groups {
        let c = group_cluster(g, m, global, source)?;
        match by_cluster.iter_mut().find(|(n, _)| *n == c) {
            Some((_, v)) => v.push(g.clone()),
            None => by_cluster.push((c, vec![g.clone()])),
        }
    }
    for c in &m.clusters {
        if !by_cluster.iter().any(|(n, _)| n == c.name()) {
            by_cluster.push((c.name().to_string(), Vec::new()));
        }
    }
    for (name, new_groups) in &by_cluster {
        let cluster = match m.clusters.iter().find(|c| c.name() == name) {
            Some(c) => c.clone(),
            None => st.cluster(name).await?.value,
        };
        let mut all: Vec<v1alpha2::InstanceGroup> =
            match st.registry.list_instance_groups(name).await {
                Ok(v) => v.into_iter().map(|g| g.value).collect(),
                Err(e) => {
                    return Err(anyhow::Error::new(e)
                        .context(format!("listing instance groups of cluster {name}")));
                }
            };
        for g in new_groups {
            match all.iter_mut().find(|x| x.name() == g.name()) {
                Some(x) if replace => *x = g.clone(),
                Some(_) => bail!(
                    "{source}: instance group {} of cluster {name} already exists (use `kops replace -f`)",
                    g.name()
                ),
                None => all.push(g.clone()),
            }
        }
        spec::check_groups(&cluster, &all).with_context(|| format!("{source}: cluster {name}"))?;
    }
    Ok(by_cluster)
}

/// `kops create -f FILE`.
pub async fn create_from_file(global: &Global, file: &Path) -> anyhow::Result<()> {
    let source = file.display().to_string();
    let m = Manifest::read(file)?;
    let st = State::open(global).await?;
    for c in &m.clusters {
        if st.registry.get_cluster(c.name()).await.is_ok() {
            bail!(
                "{source}: cluster {} already exists in state store {} (use `kops replace -f`)",
                c.name(),
                st.url
            );
        }
    }
    let plan = check_manifest(&st, &m, global, &source, false).await?;
    if !m.additional.is_empty() && m.clusters.len() != 1 {
        m.additional_for("", &source)?;
    }
    for (name, groups) in &plan {
        let cluster = m.clusters.iter().find(|c| c.name() == name);
        st.locked(name, "create -f", async || {
            if let Some(c) = cluster {
                st.registry
                    .create_cluster(c)
                    .await
                    .with_context(|| format!("storing cluster {name}"))?;
                println!("Created cluster {name}");
                if let Some(objects) = m.additional_for(name, &source)? {
                    st.registry
                        .put_additional_objects(name, objects)
                        .await
                        .with_context(|| {
                            format!("storing the additional objects of cluster {name}")
                        })?;
                }
            }
            for g in groups {
                st.registry
                    .create_instance_group(name, g)
                    .await
                    .with_context(|| {
                        format!("storing instance group {} of cluster {name}", g.name())
                    })?;
                println!("Created instance group {}/{}", name, g.name());
            }
            Ok(())
        })
        .await?;
    }
    for s in &m.ssh_credentials {
        add_credential(&st, global, s, &source).await?;
    }
    Ok(())
}

/// The cluster an SSH credential of a manifest belongs to: its label, else `--name`.
pub(crate) fn credential_cluster(
    s: &v1alpha2::SshCredential,
    global: &Global,
    source: &str,
) -> anyhow::Result<String> {
    s.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(kops_statestore::registry::CLUSTER_LABEL))
        .cloned()
        .or_else(|| global.name.clone())
        .ok_or_else(|| {
            anyhow!(
                "{source}: SSHCredential {} names no cluster (label {})",
                s.name(),
                kops_statestore::registry::CLUSTER_LABEL
            )
        })
}

async fn add_credential(
    st: &State,
    global: &Global,
    s: &v1alpha2::SshCredential,
    source: &str,
) -> anyhow::Result<()> {
    let cluster = credential_cluster(s, global, source)?;
    let key = s.spec.public_key.clone().ok_or_else(|| {
        anyhow!(
            "{source}: SSHCredential {}: spec.publicKey is missing",
            s.name()
        )
    })?;
    st.cluster(&cluster).await?;
    let id = st
        .locked(&cluster, "create -f", async || {
            st.registry
                .add_ssh_public_key(&cluster, &key)
                .await
                .with_context(|| format!("{source}: SSHCredential {}", s.name()))
        })
        .await?;
    println!("Added SSH public key {id} to cluster {cluster}");
    Ok(())
}

/// `kops replace -f FILE`.
pub async fn replace_from_file(global: &Global, file: &Path, force: bool) -> anyhow::Result<()> {
    let source = file.display().to_string();
    let m = Manifest::read(file)?;
    let st = State::open(global).await?;
    let mut existing = Vec::new();
    for c in &m.clusters {
        match st.registry.get_cluster(c.name()).await {
            Ok(v) => existing.push(Some(v.version)),
            Err(kops_statestore::Error::NotFound { .. }) if force => existing.push(None),
            Err(kops_statestore::Error::NotFound { .. }) => bail!(
                "{source}: cluster {} not found in state store {} (use `kops create -f`, or --force)",
                c.name(),
                st.url
            ),
            Err(e) => {
                return Err(anyhow::Error::new(e).context(format!("reading cluster {}", c.name())));
            }
        }
    }
    let plan = check_manifest(&st, &m, global, &source, true).await?;
    if !m.additional.is_empty() && m.clusters.len() != 1 {
        m.additional_for("", &source)?;
    }
    // Refuse before writing anything, so a failed replace leaves the store as it was.
    if !force {
        for (name, groups) in &plan {
            for g in groups {
                if let Err(kops_statestore::Error::NotFound { .. }) =
                    st.registry.get_instance_group(name, g.name()).await
                {
                    bail!(
                        "{source}: instance group {} of cluster {name} not found (use `kops create -f`, or --force)",
                        g.name()
                    );
                }
            }
        }
    }
    for (name, groups) in &plan {
        let cluster = m.clusters.iter().position(|c| c.name() == name);
        st.locked(name, "replace -f", async || {
            if let Some(i) = cluster {
                let c = &m.clusters[i];
                match &existing[i] {
                    Some(v) => {
                        st.registry.update_cluster(c, v).await.with_context(|| format!("replacing cluster {name}"))?;
                    }
                    None => {
                        st.registry.create_cluster(c).await.with_context(|| format!("storing cluster {name}"))?;
                    }
                }
                // The file's additional objects replace the stored ones.
                st.registry
                    .put_additional_objects(name, m.additional_for(name, &source)?.unwrap_or_default())
                    .await
                    .with_context(|| format!("storing the additional objects of cluster {name}"))?;
                println!("Replaced cluster {name}");
            }
            for g in groups {
                match st.registry.get_instance_group(name, g.name()).await {
                    Ok(v) => {
                        st.registry
                            .update_instance_group(name, g, &v.version)
                            .await
                            .with_context(|| format!("replacing instance group {} of cluster {name}", g.name()))?;
                    }
                    Err(kops_statestore::Error::NotFound { .. }) if force => {
                        st.registry
                            .create_instance_group(name, g)
                            .await
                            .with_context(|| format!("storing instance group {} of cluster {name}", g.name()))?;
                    }
                    Err(kops_statestore::Error::NotFound { .. }) => bail!(
                        "{source}: instance group {} of cluster {name} not found (use `kops create -f`, or --force)",
                        g.name()
                    ),
                    Err(e) => return Err(anyhow::Error::new(e).context(format!("reading instance group {}", g.name()))),
                }
                println!("Replaced instance group {}/{}", name, g.name());
            }
            Ok(())
        })
        .await?;
    }
    for s in &m.ssh_credentials {
        add_credential(&st, global, s, &source).await?;
    }
    Ok(())
}
