//! How the Hetzner model stores the cluster's managed files ([`crate::files`]): direct
//! apply writes them into the config base through the state store; the Terraform target
//! renders each as an `aws_s3_object` in the `aws.files` provider, for a config base in
//! S3-compatible storage (`s3://`, Hetzner's object storage through `S3_ENDPOINT`) and for
//! `memfs://` (kOps' tests, in bucket `testingBucket`). A local config base has no
//! Terraform form.

use kops_statestore::StoreUrl;
use kops_tasks::terraform::{Body, Expr, TerraformWriter};
use kops_tasks::{Change, Context, Fields, Found, Outputs, Task, TaskKey, async_trait};

use super::cloud::HetznerCloud;
use super::{HetznerModel, HetznerModelContext};
use crate::error::{Result, invalid};
use crate::files::{ManagedFileTask, managed_files};

/// The bucket kOps' test harness renders in-memory config bases to.
const MEMFS_BUCKET: &str = "testingBucket";

/// A managed file of the Hetzner model.
#[derive(Debug)]
pub(crate) struct HetznerManagedFile {
    file: ManagedFileTask,
    name: String,
    contents: String,
    /// The bucket and key Terraform writes it to.
    render: Option<(String, String)>,
}

#[async_trait]
impl Task<dyn HetznerCloud> for HetznerManagedFile {
    fn key(&self) -> &TaskKey {
        <ManagedFileTask as Task<dyn HetznerCloud>>::key(&self.file)
    }

    fn fields(&self) -> Fields {
        <ManagedFileTask as Task<dyn HetznerCloud>>::fields(&self.file)
    }

    async fn find(&self, cx: &Context<'_, dyn HetznerCloud>) -> kops_tasks::Result<Option<Found>> {
        self.file.find(cx).await
    }

    async fn apply(
        &self,
        cx: &Context<'_, dyn HetznerCloud>,
        change: &Change<'_>,
    ) -> kops_tasks::Result<Outputs> {
        self.file.apply(cx, change).await
    }

    fn render_terraform(&self, w: &mut TerraformWriter) -> kops_tasks::Result<()> {
        let Some((bucket, key)) = &self.render else {
            return Ok(());
        };
        let content = w.add_file(
            "aws_s3_object",
            &self.name,
            "content",
            self.contents.clone().into_bytes(),
        );
        let body = Body::new()
            .attr("bucket", bucket.as_str())
            .attr("content", content)
            .attr("key", key.as_str())
            .attr("provider", Expr::traversal("aws.files"))
            .attr("server_side_encryption", "AES256");
        w.resource("aws_s3_object", &self.name, body)
    }
}

pub(crate) fn build(ctx: &HetznerModelContext, m: &mut HetznerModel) -> Result<()> {
    let (base, url) = ctx.config_base()?;
    let target = match url {
        StoreUrl::Memory { prefix } => Some((MEMFS_BUCKET.to_owned(), prefix)),
        StoreUrl::S3 { bucket, prefix } => Some((bucket, prefix)),
        StoreUrl::File { .. } => None,
        _ => {
            return Err(invalid(
                "spec.configBase",
                format!(
                    "{base:?}: the Hetzner model keeps a cluster's files in S3-compatible storage (s3://)"
                ),
            ));
        }
    };
    for f in managed_files(ctx)? {
        // Secret files never go into Terraform: they are written straight to the store;
        // without a store they exist only for this render.
        if f.sensitive && ctx.config_store.is_none() {
            continue;
        }
        let render = target
            .as_ref()
            .filter(|_| !f.sensitive)
            .map(|(bucket, prefix)| {
                let key = if prefix.is_empty() {
                    f.location.clone()
                } else {
                    format!("{prefix}/{}", f.location)
                };
                (bucket.clone(), key)
            });
        m.files.push(HetznerManagedFile {
            file: ManagedFileTask::new(&f, ctx),
            name: f.name.clone(),
            contents: f.contents.clone(),
            render,
        });
    }
    Ok(())
}
