//! Spec completion: kOps' `PopulateClusterSpec`.

use kops_api::defaults::{PopulateOptions, populate};
use kops_api::{internal, v1alpha2, validation};

use crate::error::Result;

/// Converts a stored cluster and its groups to the internal form, completes them
/// (defaults, channel, DNS zone, subnet CIDRs) and validates the result; the error lists
/// every problem with its field path.
pub fn complete(
    cluster: &v1alpha2::Cluster,
    groups: &[v1alpha2::InstanceGroup],
    options: &PopulateOptions,
) -> Result<(internal::Cluster, Vec<internal::InstanceGroup>)> {
    let c = internal::Cluster::try_from(cluster)?;
    complete_internal(&c, groups, options)
}

pub(crate) fn complete_internal(
    cluster: &internal::Cluster,
    groups: &[v1alpha2::InstanceGroup],
    options: &PopulateOptions,
) -> Result<(internal::Cluster, Vec<internal::InstanceGroup>)> {
    let g: Vec<internal::InstanceGroup> =
        groups.iter().map(internal::InstanceGroup::from).collect();
    let (full, full_groups) = populate(cluster, &g, options)?;
    validation::validate_all(&full, &full_groups).map_err(kops_api::Error::Invalid)?;
    Ok((full, full_groups))
}
