//! Renders an AWS model for the Terraform target: `kubernetes.tf` with kOps' locals,
//! outputs, providers and `terraform` block, plus the `data/` files.

use kops_tasks::terraform::{Body, TerraformOutput, TerraformWriter, render_graph};
use kops_tasks::{LifecycleOverrides, TaskGraph};

use super::builders::{AwsModel, ModelContext, OutputValue};
use super::cloud::AwsCloud;
use crate::error::Result;

/// Options for [`render`].
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct RenderOptions {
    /// Per-kind lifecycle overrides (`IAMRole=ExistsAndWarnIfChanges`); tasks with
    /// lifecycle `Ignore` are not rendered.
    pub lifecycle_overrides: LifecycleOverrides,
}

impl RenderOptions {
    /// Sets the lifecycle overrides.
    pub fn with_lifecycle_overrides(mut self, o: LifecycleOverrides) -> Self {
        self.lifecycle_overrides = o;
        self
    }
}

/// Builds the graph of a model and renders it.
pub fn render(
    ctx: &ModelContext,
    mut model: AwsModel,
    opts: &RenderOptions,
) -> Result<TerraformOutput> {
    let outputs = std::mem::take(&mut model.outputs);
    let tasks = model.into_tasks();
    let graph = TaskGraph::build_with(tasks, &opts.lifecycle_overrides)?;
    render_built(ctx, &graph, outputs)
}

/// Renders a model whose graph is built already, with its outputs.
pub(crate) fn render_built(
    ctx: &ModelContext,
    graph: &TaskGraph<dyn AwsCloud>,
    outputs: Vec<(String, OutputValue)>,
) -> Result<TerraformOutput> {
    let mut w = TerraformWriter::new();
    render_graph(graph, &mut w)?;
    for (name, v) in outputs {
        match v {
            OutputValue::Single(e) => w.output(name, e),
            OutputValue::ListItem(e) => w.output_list_item(name, e),
        }
    }
    let region = |r: &str| Body::new().attr("region", r);
    w.provider("aws", ctx.terraform_provider(region(&ctx.region), false));
    // The files go to the state store's bucket, in the bucket's region (the cluster's
    // for a store without one).
    let files_region = ctx.files_region().unwrap_or_else(|| ctx.region.clone());
    w.provider_alias(
        "aws",
        "files",
        ctx.terraform_provider(region(&files_region), true),
    );
    w.required_version(">= 0.15.0");
    w.required_provider("aws", "hashicorp/aws", ">= 5.0.0");
    Ok(w.finish()?)
}
