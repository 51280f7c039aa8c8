//! What the AWS model needs from the cloud before it can build: kOps' `ApplyClusterCmd`
//! up to the model builders.

use std::sync::Arc;

use kops_api::channel::Channel;
use kops_api::defaults::{DnsZoneInfo, PopulateOptions};
use kops_api::{internal, v1alpha2};
use kops_statestore::{PrefixStore, Store};

use super::ModelContext;
use kops_tasks::retry::RetryPolicy;

use super::cloud::{AwsCloud, ListQuery, ResourceType, ZoneQuery};
use super::reads::Reads;
use crate::cluster::{ClusterContext, DEFAULT_KOPS_RELEASE};
use crate::complete::complete_internal;
use crate::error::{Error, Result, cloud, invalid};

/// Options for [`discover`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DiscoverOptions {
    /// The channel the spec is completed with (images, Kubernetes versions); default
    /// the shipped [`channel::stable`](crate::channel::stable), `None` for no channel
    /// (every group then names its image).
    pub channel: Option<Channel>,
    /// The admin SSH public key.
    pub ssh_public_key: Option<String>,
    /// The kOps release the cluster uses (default [`DEFAULT_KOPS_RELEASE`]).
    pub kops_release: String,
    /// The state store holding the cluster, and its URL: the managed files go to the
    /// cluster's config base inside it.
    pub state_store: Option<(Arc<dyn Store>, String)>,
    /// The cluster's additional objects (kOps' `clusteraddons/default`), such as a
    /// `KubeSchedulerConfiguration` the scheduler's configuration starts from.
    pub additional_objects: Vec<serde_json::Value>,
    /// How the cloud reads are retried when throttled or unavailable.
    pub retry: RetryPolicy,
    /// The Kubernetes version the control plane runs, as its API reports it (see
    /// [`ClusterContext::with_control_plane_version`]); `None` when unknown (a new
    /// cluster, an API out of reach).
    pub control_plane_version: Option<String>,
}

impl Default for DiscoverOptions {
    fn default() -> Self {
        DiscoverOptions {
            channel: Some(crate::channel::stable()),
            ssh_public_key: None,
            kops_release: DEFAULT_KOPS_RELEASE.to_owned(),
            state_store: None,
            additional_objects: Vec::new(),
            retry: RetryPolicy::default(),
            control_plane_version: None,
        }
    }
}

impl DiscoverOptions {
    /// The cluster context of a completed cluster in `region`, with what these options
    /// carry: the kOps release, additional objects, the running control plane's version,
    /// the SSH key and the config store inside the state store. Every cloud's discover
    /// ends here.
    pub(crate) fn cluster_context(
        &self,
        cluster: internal::Cluster,
        groups: Vec<internal::InstanceGroup>,
        region: impl Into<String>,
    ) -> Result<ClusterContext> {
        let mut base = ClusterContext::new(cluster, groups, region)
            .with_kops_release(self.kops_release.clone())
            .with_additional_objects(self.additional_objects.clone())
            .with_control_plane_version(self.control_plane_version.as_deref());
        if let Some(k) = &self.ssh_public_key {
            base = base.with_ssh_public_key(k.clone());
        }
        if let Some((root, url)) = &self.state_store {
            let (config_base, _) = base.config_base()?;
            let store = config_store(root, url, config_base)?;
            base = base.with_config_store(store);
        }
        Ok(base)
    }

    /// Sets the channel.
    pub fn with_channel(mut self, channel: Channel) -> Self {
        self.channel = Some(channel);
        self
    }

    /// Sets the admin SSH public key.
    pub fn with_ssh_public_key(mut self, key: impl Into<String>) -> Self {
        self.ssh_public_key = Some(key.into());
        self
    }

    /// Sets the cluster's additional objects.
    pub fn with_additional_objects(mut self, objects: Vec<serde_json::Value>) -> Self {
        self.additional_objects = objects;
        self
    }

    /// Sets the kOps release.
    pub fn with_kops_release(mut self, release: impl Into<String>) -> Self {
        self.kops_release = release.into();
        self
    }

    /// Sets how the cloud reads are retried (the executor's policy is
    /// [`ExecutorOptions::retry_policy`](kops_tasks::ExecutorOptions::retry_policy)).
    pub fn with_retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Sets the Kubernetes version the control plane runs (see
    /// [`DiscoverOptions::control_plane_version`]).
    pub fn with_control_plane_version(mut self, version: Option<String>) -> Self {
        self.control_plane_version = version;
        self
    }

    /// Sets the state store the cluster lives in, with the URL it was opened from.
    pub fn with_state_store(mut self, store: Arc<dyn Store>, url: impl Into<String>) -> Self {
        self.state_store = Some((store, url.into().trim_end_matches('/').to_owned()));
        self
    }
}

/// The DNS zones that could hold `name`'s records: zones named like one of its parents.
async fn candidate_zones(api: Reads<'_>, name: &str) -> Result<Vec<DnsZoneInfo>> {
    let mut out = Vec::new();
    let mut rest = name;
    while let Some((_, parent)) = rest.split_once('.') {
        for z in api
            .hosted_zones(&ZoneQuery::Name(parent.to_owned()))
            .await
            .map_err(cloud(format!("looking up DNS zone {parent}")))?
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

/// The store rooted at `base`, inside the state store `root` opened from `url`.
fn config_store(root: &Arc<dyn Store>, url: &str, base: &str) -> Result<Arc<dyn Store>> {
    let base = base.trim_end_matches('/');
    let Some(rest) = base.strip_prefix(url).and_then(|r| r.strip_prefix('/')) else {
        return Err(invalid(
            "spec.configBase",
            format!("{base:?} is not inside the state store {url:?}"),
        ));
    };
    let store = PrefixStore::new(root.clone(), rest)
        .map_err(|e| invalid("spec.configBase", e.to_string()))?;
    Ok(Arc::new(store))
}

/// Completes `cluster` and `groups` and looks up in the cloud what the AWS model needs:
/// the zones of shared subnets named by id, the DNS zones the cluster could use, the CIDR
/// of a shared VPC, the account, the groups' images, the gateways of a shared VPC and the
/// cluster's hosted zone.
pub async fn discover(
    api: &dyn AwsCloud,
    cluster: &v1alpha2::Cluster,
    groups: &[v1alpha2::InstanceGroup],
    options: &DiscoverOptions,
) -> Result<ModelContext> {
    let name = cluster.name().to_owned();
    let api = Reads::new(api, &options.retry);
    let mut c = internal::Cluster::try_from(cluster)?;
    if c.cloud_provider() != Some(internal::CloudProvider::Aws) {
        return Err(invalid(
            "spec.cloudProvider",
            "the AWS model needs an AWS cluster",
        ));
    }
    // Shared subnets named only by id take their zone from the cloud, as kOps does.
    for (i, sn) in c.spec.networking.subnets.iter_mut().flatten().enumerate() {
        if sn.zone.is_none()
            && let Some(id) = sn.id.clone()
        {
            let found = api
                .get(ResourceType::Subnet, &id)
                .await
                .map_err(cloud(format!(
                    "looking up subnet {id} (spec.subnets[{i}].id)"
                )))?;
            sn.zone = found.and_then(|r| r.attr_str("availability_zone").map(str::to_owned));
        }
    }
    let mut popts = PopulateOptions::default();
    if let Some(ch) = &options.channel {
        popts = popts.with_channel(ch.clone());
    }
    if !(c.uses_none_dns() || c.is_gossip()) && c.spec.dns_zone.is_none() {
        popts = popts.with_dns_zones(candidate_zones(api, &name).await?);
    }
    if let Some(vpc) = c.spec.networking.network_id.clone() {
        let found = api
            .get(ResourceType::Vpc, &vpc)
            .await
            .map_err(cloud(format!("looking up VPC {vpc} (spec.networkID)")))?;
        if let Some(cidr) = found.as_ref().and_then(|r| r.attr_str("cidr_block")) {
            popts = popts.with_shared_network_cidr(cidr);
        }
    }
    let (full, full_groups) = complete_internal(&c, groups, &popts)?;
    let region = full.region().ok_or_else(|| {
        invalid(
            "spec.subnets",
            "no zone or region to take the cloud region from",
        )
    })?;
    check_zones(api, &full, &region).await?;
    let account = api
        .account()
        .await
        .map_err(cloud("reading the cloud account"))?;

    let mut base = options.cluster_context(full, full_groups, region)?;
    Box::pin(crate::files::prepare_boot(&mut base)).await?;
    let mut ctx = ModelContext::from_cluster_context(base).with_account(account);
    for ig in ctx.groups.clone() {
        if let Some(image) = &ig.spec.image
            && !ctx.images.contains_key(image)
        {
            let found = match api.resolve_image(image).await {
                Ok(found) => found,
                Err(kops_tasks::resource::CloudError::NotFound { .. }) => {
                    return Err(Error::ImageNotFound {
                        group: ig.name().to_owned(),
                        image: image.clone(),
                    });
                }
                Err(e) => {
                    return Err(cloud(format!(
                        "instance group {}: spec.image: resolving {image}",
                        ig.name()
                    ))(e));
                }
            };
            ctx = ctx.with_image(image.clone(), found);
        }
    }
    if let Some(vpc) = ctx.cluster.spec.networking.network_id.clone() {
        for (rt, egress_only) in [
            (ResourceType::InternetGateway, false),
            (ResourceType::EgressOnlyInternetGateway, true),
        ] {
            let found = api.list(&ListQuery::new(rt)).await.map_err(cloud(format!(
                "listing {} of VPC {vpc}",
                rt.terraform_type()
            )))?;
            if let Some(g) = found
                .iter()
                .find(|g| g.attr_str("vpc_id") == Some(vpc.as_str()))
            {
                ctx = if egress_only {
                    ctx.with_egress_only_internet_gateway(g.id.clone())
                } else {
                    ctx.with_internet_gateway(g.id.clone())
                };
            }
        }
    }
    if !ctx.dns_none()
        && let Some(zone) = ctx.cluster.spec.dns_zone.clone()
    {
        let found = api
            .hosted_zones(&ZoneQuery::from_spec(&zone))
            .await
            .map_err(cloud(format!("looking up DNS zone {zone} (spec.dnsZone)")))?;
        match found.into_iter().next() {
            Some(z) => ctx = ctx.with_dns_zone(z),
            None => {
                return Err(Error::NotFound {
                    what: format!("DNS zone {zone:?} (spec.dnsZone of cluster {name})"),
                });
            }
        }
    }
    Ok(ctx)
}

/// Every subnet's zone is one the region has. A cloud that lists no zones (the mock)
/// is not checked.
async fn check_zones(api: Reads<'_>, cluster: &internal::Cluster, region: &str) -> Result<()> {
    let known = api
        .zones()
        .await
        .map_err(cloud(format!("listing the zones of region {region}")))?;
    if known.is_empty() {
        return Ok(());
    }
    for (i, sn) in cluster.spec.networking.subnets.iter().flatten().enumerate() {
        if let Some(zone) = sn.zone.as_deref()
            && !known.iter().any(|k| k == zone)
        {
            return Err(invalid(
                format!("spec.subnets[{i}].zone"),
                format!(
                    "zone {zone} does not exist in region {region} (its zones: {})",
                    known.join(", ")
                ),
            ));
        }
    }
    Ok(())
}
