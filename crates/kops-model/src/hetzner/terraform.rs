//! Renders a Hetzner model for the Terraform target: `kubernetes.tf` with kOps' locals,
//! outputs, providers and `terraform` block, plus the `data/` files.

use kops_statestore::StoreUrl;
use kops_tasks::terraform::{Body, TerraformOutput, TerraformWriter, render_graph};
use kops_tasks::{LifecycleOverrides, TaskGraph};

use super::cloud::HetznerCloud;
use super::{HetznerModelContext, build};
use crate::error::Result;

/// The region kOps' memfs renders the files provider with.
const MEMFS_REGION: &str = "us-test-1";

/// Builds the Hetzner model of `ctx` and renders it as kOps' Terraform target does; tasks
/// whose lifecycle the overrides set to `Ignore` are not rendered.
pub fn render_terraform(
    ctx: &HetznerModelContext,
    overrides: &LifecycleOverrides,
) -> Result<TerraformOutput> {
    let graph = TaskGraph::build_with(build(ctx)?.into_tasks(), overrides)?;
    render(ctx, &graph)
}

/// Renders `graph`, the graph of `ctx`'s model, as kOps' Terraform target does.
pub(crate) fn render(
    ctx: &HetznerModelContext,
    graph: &TaskGraph<dyn HetznerCloud>,
) -> Result<TerraformOutput> {
    let mut w = TerraformWriter::new();
    render_graph(graph, &mut w)?;
    w.output("cluster_name", ctx.name());
    w.output("region", ctx.region.as_str());
    w.provider("hcloud", ctx.terraform_provider(Body::new(), false));
    w.required_version(">= 0.15.0");
    w.required_provider("hcloud", "hetznercloud/hcloud", ">= 1.35.1");
    // The files' provider, with the bucket's region when the store knows it (an
    // S3-compatible store elsewhere takes its endpoint from `filesProviderExtraConfig`).
    let files_region = match ctx.config_base().map(|(_, u)| u) {
        Ok(StoreUrl::Memory { .. }) => Some(Some(MEMFS_REGION.to_owned())),
        Ok(StoreUrl::S3 { .. }) => Some(ctx.files_region()),
        _ => None,
    };
    if let Some(region) = files_region {
        let body = Body::new().attr_opt("region", region);
        w.provider_alias("aws", "files", ctx.terraform_provider(body, true));
        w.required_provider("aws", "hashicorp/aws", ">= 5.0.0");
    }
    Ok(w.finish()?)
}
