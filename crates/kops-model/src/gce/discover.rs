//! What the GCE model needs from the cloud before it can build (kOps' `ApplyClusterCmd`
//! up to the model builders on GCE): the subnet ranges already used in the cluster's
//! network (so new subnets get the next free /20, as kOps' `PerformNetworkAssignments`),
//! the project's Cloud DNS zones when the cluster publishes DNS records and names no
//! `dnsZone` (kOps' `FindDNSHostedZone`), then completion and validation.

use kops_api::defaults::{DnsZoneInfo, PopulateOptions};
use kops_api::{internal, v1alpha2};

use super::GceModelContext;
use super::cloud::{GceCloud, GceResourceType, ListQuery};
use crate::complete::complete_internal;
use crate::error::{Result, cloud, invalid};

/// The options of [`discover`]: the same as the AWS model's (channel, SSH key, kOps
/// release, state store).
pub type GceDiscoverOptions = crate::aws::DiscoverOptions;

/// Completes `cluster` and `groups` for GCE and returns the [`GceModelContext`]. The
/// cloud is asked for the subnetworks of the cluster's network (one list call), whose
/// ranges count as used when subnets without a CIDR are given one, and, when the
/// cluster publishes DNS records without naming `spec.dnsZone`, for the project's
/// managed zones: the longest one whose name ends the cluster name becomes the zone.
pub async fn discover(
    api: &dyn GceCloud,
    cluster: &v1alpha2::Cluster,
    groups: &[v1alpha2::InstanceGroup],
    options: &GceDiscoverOptions,
) -> Result<GceModelContext> {
    let mut c = internal::Cluster::try_from(cluster)?;
    if c.cloud_provider() != Some(internal::CloudProvider::Gce) {
        return Err(invalid(
            "spec.cloudProvider",
            "the GCE model needs a GCE cluster (cloudProvider: gce)",
        ));
    }
    let mut popts = PopulateOptions::default();
    if let Some(ch) = &options.channel {
        popts = popts.with_channel(ch.clone());
    }
    // kOps looks the network up by the untruncated safe name here.
    let network = match &c.spec.networking.network_id {
        Some(id) => id.rsplit('/').next().unwrap_or(id).to_owned(),
        None => super::naming::safe_cluster_name(c.name()),
    };
    let subnets = api
        .list(&ListQuery::new(GceResourceType::Subnetwork))
        .await
        .map_err(cloud(format!(
            "listing the subnetworks of network {network}"
        )))?;
    let in_network: Vec<_> = subnets
        .iter()
        .filter(|s| {
            s.attr_str("network")
                .is_some_and(|n| super::cloud::last_component(n) == network)
        })
        .collect();
    // A spec subnet without a range whose subnetwork already exists (an earlier apply)
    // keeps the range it has.
    let name = c.name().to_owned();
    for sn in c.spec.networking.subnets.iter_mut().flatten() {
        if sn.cidr.is_some() {
            continue;
        }
        let cloud_name = match (&sn.id, &sn.name) {
            (Some(id), _) => id.clone(),
            (None, Some(n)) => super::naming::suffixed(n, &name),
            (None, None) => continue,
        };
        if let Some(existing) = in_network
            .iter()
            .find(|s| s.name.as_deref() == Some(cloud_name.as_str()))
            .and_then(|s| s.attr_str("ip_cidr_range"))
        {
            sn.cidr = Some(existing.to_owned());
        }
    }
    let used: Vec<String> = in_network
        .iter()
        .filter_map(|s| s.attr_str("ip_cidr_range").map(str::to_owned))
        .collect();
    popts = popts.with_used_cidrs(used);
    // kOps picks the zone among all of the project's managed zones by name alone: the
    // public/private check applies to Route 53 zones only.
    if !(c.uses_none_dns() || c.is_gossip()) && c.spec.dns_zone.is_none() {
        let zones = api.managed_zones().await.map_err(cloud(
            "listing the Cloud DNS managed zones (for spec.dnsZone)",
        ))?;
        popts = popts.with_dns_zones(
            zones
                .into_iter()
                .map(|z| DnsZoneInfo::new(z.id, z.dns_name, None))
                .collect(),
        );
    }
    let (full, full_groups) = complete_internal(&c, groups, &popts)?;
    let region = full.region().ok_or_else(|| {
        invalid(
            "spec.subnets",
            "no region: set spec.subnets[].region (required on GCE)",
        )
    })?;
    let mut base = options.cluster_context(full, full_groups, region)?;
    // Keysets (loaded, or generated as kOps' create does) and secret hashes the nodeup
    // configs carry: the same step as on AWS.
    Box::pin(crate::files::prepare_boot(&mut base)).await?;
    GceModelContext::new(base)
}
