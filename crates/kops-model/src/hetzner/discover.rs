//! What the Hetzner model needs before it can build (kOps' `ApplyClusterCmd` up to the
//! model builders on Hetzner): completion and validation, and the region, which on
//! Hetzner is the network zone of the subnets' locations (kOps' `FindRegion`). The cloud
//! is asked nothing: the model looks nothing up.

use kops_api::defaults::PopulateOptions;
use kops_api::{internal, v1alpha2};

use super::HetznerModelContext;
use super::cloud::{LOCATIONS, network_zone};
use crate::complete::complete_internal;
use crate::error::{Result, invalid};

/// The options of [`discover`]: the same as the AWS model's (channel, SSH key, kOps
/// release, state store).
pub type HetznerDiscoverOptions = crate::aws::DiscoverOptions;

/// The network zone every subnet's location is in; an error naming the subnet when a
/// location is unknown or the subnets span two zones.
fn find_region(cluster: &internal::Cluster) -> Result<String> {
    let mut region: Option<&str> = None;
    for (i, sn) in cluster.spec.networking.subnets.iter().flatten().enumerate() {
        let zone = sn.zone.as_deref().unwrap_or_default();
        let Some(found) = network_zone(zone) else {
            let known: Vec<&str> = LOCATIONS.iter().map(|(l, _)| *l).collect();
            return Err(invalid(
                format!("spec.subnets[{i}].zone"),
                format!(
                    "unknown Hetzner location {zone:?}; known: {}",
                    known.join(", ")
                ),
            ));
        };
        if let Some(r) = region
            && r != found
        {
            return Err(invalid(
                format!("spec.subnets[{i}].zone"),
                format!(
                    "{zone} is in {found}, the cluster in {r}: a cluster cannot span network zones"
                ),
            ));
        }
        region = Some(found);
    }
    region
        .map(str::to_owned)
        .ok_or_else(|| invalid("spec.subnets", "a Hetzner cluster needs a subnet"))
}

/// Completes `cluster` and `groups` for Hetzner and returns the [`HetznerModelContext`],
/// with the keysets and secrets the nodeup configs carry (loaded from the state store, or
/// generated as kOps' create does).
pub async fn discover(
    cluster: &v1alpha2::Cluster,
    groups: &[v1alpha2::InstanceGroup],
    options: &HetznerDiscoverOptions,
) -> Result<HetznerModelContext> {
    let c = internal::Cluster::try_from(cluster)?;
    if c.cloud_provider() != Some(internal::CloudProvider::Hetzner) {
        return Err(invalid(
            "spec.cloudProvider",
            "the Hetzner model needs a Hetzner cluster (cloudProvider: hetzner)",
        ));
    }
    let region = find_region(&c)?;
    let mut popts = PopulateOptions::default();
    if let Some(ch) = &options.channel {
        popts = popts.with_channel(ch.clone());
    }
    let (full, full_groups) = complete_internal(&c, groups, &popts)?;
    let mut base = options.cluster_context(full, full_groups, region)?;
    Box::pin(crate::files::prepare_boot(&mut base)).await?;
    Ok(HetznerModelContext::new(base))
}
