//! Renders a GCE model for the Terraform target: `kubernetes.tf` with kOps' locals,
//! outputs, providers and `terraform` block, plus the `data/` files.

use kops_statestore::StoreUrl;
use kops_tasks::terraform::{Body, TerraformOutput, TerraformWriter, render_graph};
use kops_tasks::{LifecycleOverrides, TaskGraph};

use super::cloud::GceCloud;
use super::{GceModelContext, build};
use crate::error::Result;

/// The region kOps' memfs renders the files provider with.
const MEMFS_REGION: &str = "us-test-1";

/// Builds the GCE model of `ctx` and renders it as kOps' Terraform target does; tasks
/// whose lifecycle the overrides set to `Ignore` are not rendered.
pub fn render_terraform(
    ctx: &GceModelContext,
    overrides: &LifecycleOverrides,
) -> Result<TerraformOutput> {
    let graph = TaskGraph::build_with(build(ctx)?.into_tasks(), overrides)?;
    render(ctx, &graph)
}

/// Renders `graph`, the graph of `ctx`'s model, as kOps' Terraform target does.
pub(crate) fn render(
    ctx: &GceModelContext,
    graph: &TaskGraph<dyn GceCloud>,
) -> Result<TerraformOutput> {
    let mut w = TerraformWriter::new();
    render_graph(graph, &mut w)?;
    w.output("cluster_name", ctx.name());
    w.output("project", ctx.project.as_str());
    w.output("region", ctx.region.as_str());
    let google = || {
        Body::new()
            .attr("project", ctx.project.as_str())
            .attr("region", ctx.region.as_str())
    };
    w.provider("google", ctx.terraform_provider(google(), false));
    w.required_version(">= 0.15.0");
    w.required_provider("google", "hashicorp/google", ">= 5.11.0");
    match ctx.config_base().map(|(_, u)| u) {
        Ok(StoreUrl::Memory { .. }) => {
            w.provider_alias(
                "aws",
                "files",
                ctx.terraform_provider(Body::new().attr("region", MEMFS_REGION), true),
            );
            w.required_provider("aws", "hashicorp/aws", ">= 5.0.0");
        }
        Ok(StoreUrl::Gcs { .. }) => {
            w.provider_alias("google", "files", ctx.terraform_provider(google(), true));
        }
        _ => {}
    }
    Ok(w.finish()?)
}
