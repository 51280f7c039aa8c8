//! Image references as the cluster pulls them.

use crate::cluster::ClusterContext;

/// `image` remapped through the cluster's `assets` (kOps' `RemapImage`; the rule itself
/// is [`kops_api::defaults::remap_image_with`], shared with defaulting).
/// Every image is recorded as one of the cluster's assets ([`crate::assets`]).
pub(crate) fn remap(ctx: &ClusterContext, image: &str) -> String {
    let assets = ctx.cluster.spec.assets.as_ref();
    let download = kops_api::defaults::remap_image_with(
        assets.and_then(|a| a.container_registry.as_deref()),
        assets.and_then(|a| a.container_proxy.as_deref()),
        image,
    );
    ctx.assets.image(image, &download);
    download
}

/// `prefix` (an image name up to its tag, `registry.k8s.io/kube-proxy:`) remapped as an
/// image would be, without recording it as an asset.
pub(crate) fn remap_prefix(ctx: &ClusterContext, prefix: &str) -> String {
    let assets = ctx.cluster.spec.assets.as_ref();
    kops_api::defaults::remap_image_with(
        assets.and_then(|a| a.container_registry.as_deref()),
        assets.and_then(|a| a.container_proxy.as_deref()),
        prefix,
    )
}

/// Records the images populate put into the completed spec, which nodeup runs: the
/// control plane's components, kube-proxy and the sandbox image. One still as populate
/// named it (its default, remapped) is recorded under its default name; one a user set is
/// recorded as set.
pub(crate) fn record_spec_images(ctx: &ClusterContext) {
    let spec = &ctx.cluster.spec;
    let version = spec.kubernetes_version.as_deref().unwrap_or_default();
    let components = [
        (
            "kube-apiserver",
            spec.kube_api_server
                .as_ref()
                .and_then(|c| c.image.as_deref()),
        ),
        (
            "kube-controller-manager",
            spec.kube_controller_manager
                .as_ref()
                .and_then(|c| c.image.as_deref()),
        ),
        (
            "kube-scheduler",
            spec.kube_scheduler
                .as_ref()
                .and_then(|c| c.image.as_deref()),
        ),
        (
            "kube-proxy",
            // A disabled kube-proxy (cilium, kube-router, calico's eBPF) runs nowhere.
            spec.kube_proxy
                .as_ref()
                .filter(|c| c.enabled != Some(false))
                .and_then(|c| c.image.as_deref()),
        ),
    ];
    let defaults = components
        .into_iter()
        .map(|(c, image)| (kops_api::defaults::component_image(c, version), image))
        .chain(std::iter::once((
            kops_api::defaults::SANDBOX_IMAGE.to_owned(),
            spec.containerd
                .as_ref()
                .and_then(|c| c.sandbox_image.as_deref()),
        )));
    for (default, image) in defaults {
        let Some(image) = image.filter(|i| !i.is_empty()) else {
            continue;
        };
        let pulled = remap_prefix(ctx, &default);
        let canonical = if pulled == image {
            default.as_str()
        } else {
            image
        };
        ctx.assets.image(canonical, image);
    }
}
