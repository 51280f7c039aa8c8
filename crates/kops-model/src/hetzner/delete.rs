//! `delete cluster` on Hetzner (kOps' `pkg/resources/hetzner`): every object that carries
//! the cluster's label, deleted in dependency order: servers (each shut down first, as
//! kOps does), load balancers (their services, targets and network attachment go with
//! them), volumes, firewalls, SSH keys, then the network (its subnet goes with it). An
//! object without the cluster's label is never deleted; a shared network
//! (`spec.networking.networkID`) carries none.

use super::cloud::{HetznerCloud, HetznerCloudExt as _, HetznerResourceType as R, Resource};
use crate::error::{Result, cloud};

/// Deletion order: users before what they use.
const ORDER: &[R] = &[
    R::Server,
    R::LoadBalancer,
    R::Volume,
    R::Firewall,
    R::SshKey,
    R::Network,
];

/// Every object `cluster` owns, in deletion order (one labelled list per type).
pub async fn find_cluster_resources(
    api: &dyn HetznerCloud,
    cluster: &str,
) -> Result<Vec<Resource>> {
    let mut out = Vec::new();
    for &rt in ORDER {
        let found = api
            .list_labelled(rt, cluster)
            .await
            .map_err(cloud(format!("listing the {rt}s of cluster {cluster}")))?;
        out.extend(found);
    }
    Ok(out)
}

/// Deletes everything `cluster` owns ([`find_cluster_resources`]); returns what was
/// deleted. A dry run is [`find_cluster_resources`].
pub async fn delete_cluster(api: &dyn HetznerCloud, cluster: &str) -> Result<Vec<Resource>> {
    let found = find_cluster_resources(api, cluster).await?;
    for r in &found {
        let rt = r.resource_type;
        let what = format!(
            "{rt} {} of cluster {cluster}",
            r.name.as_deref().unwrap_or(&r.id)
        );
        if rt == R::Server && r.attr_str("status") != Some("off") {
            api.shutdown_server(&r.id)
                .await
                .map_err(cloud(format!("shutting down {what}")))?;
        }
        api.delete(rt, &r.id)
            .await
            .map_err(cloud(format!("deleting {what}")))?;
    }
    Ok(found)
}
