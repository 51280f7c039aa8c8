//! Image references as the cluster pulls them.

use crate::cluster::ClusterContext;

/// `image` remapped through the cluster's `assets` (kOps' `RemapImage`; the rule itself
/// is [`kops_api::defaults::remap_image_with`], shared with defaulting).
pub(crate) fn remap(ctx: &ClusterContext, image: &str) -> String {
    let assets = ctx.cluster.spec.assets.as_ref();
    kops_api::defaults::remap_image_with(
        assets.and_then(|a| a.container_registry.as_deref()),
        assets.and_then(|a| a.container_proxy.as_deref()),
        image,
    )
}
