//! How the GCE model stores the cluster's managed files ([`crate::files`]): direct apply
//! writes them into the config base through the state store; the Terraform target
//! renders each as kOps does for the config base's scheme: `memfs://` (kOps' tests) as
//! an `aws_s3_object` in bucket `testingBucket` (kOps' memfs always renders S3-style),
//! `gs://` as a `google_storage_bucket_object` in the `google.files` provider. A local
//! config base has no Terraform form.

use kops_statestore::StoreUrl;
use kops_tasks::terraform::{Body, Expr, TerraformWriter};
use kops_tasks::{Change, Context, Fields, Found, Outputs, Task, TaskKey, async_trait};

use super::cloud::GceCloud;
use super::{GceModel, GceModelContext};
use crate::error::{Result, invalid};
use crate::files::{ManagedFileTask, managed_files};

/// The bucket kOps' test harness renders in-memory config bases to.
const MEMFS_BUCKET: &str = "testingBucket";

#[derive(Clone, Debug)]
enum Render {
    S3 { bucket: String, key: String },
    Gcs { bucket: String, key: String },
}

/// A managed file of the GCE model.
#[derive(Debug)]
pub(crate) struct GceManagedFile {
    file: ManagedFileTask,
    name: String,
    contents: String,
    render: Option<Render>,
}

#[async_trait]
impl Task<dyn GceCloud> for GceManagedFile {
    fn key(&self) -> &TaskKey {
        <ManagedFileTask as Task<dyn GceCloud>>::key(&self.file)
    }

    fn fields(&self) -> Fields {
        <ManagedFileTask as Task<dyn GceCloud>>::fields(&self.file)
    }

    async fn find(&self, cx: &Context<'_, dyn GceCloud>) -> kops_tasks::Result<Option<Found>> {
        self.file.find(cx).await
    }

    async fn apply(
        &self,
        cx: &Context<'_, dyn GceCloud>,
        change: &Change<'_>,
    ) -> kops_tasks::Result<Outputs> {
        self.file.apply(cx, change).await
    }

    fn render_terraform(&self, w: &mut TerraformWriter) -> kops_tasks::Result<()> {
        match &self.render {
            Some(Render::S3 { bucket, key }) => {
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
            Some(Render::Gcs { bucket, key }) => {
                let content = w.add_file(
                    "google_storage_bucket_object",
                    &self.name,
                    "content",
                    self.contents.clone().into_bytes(),
                );
                let body = Body::new()
                    .attr("bucket", bucket.as_str())
                    .attr("content", content)
                    .attr("name", key.as_str())
                    .attr("provider", Expr::traversal("google.files"));
                w.resource("google_storage_bucket_object", &self.name, body)
            }
            None => Ok(()),
        }
    }
}

pub(crate) fn build(ctx: &GceModelContext, m: &mut GceModel) -> Result<()> {
    let (base, url) = ctx.config_base()?;
    let target = match url {
        StoreUrl::Memory { prefix } => Some((true, MEMFS_BUCKET.to_owned(), prefix)),
        StoreUrl::Gcs { bucket, prefix } => Some((false, bucket, prefix)),
        StoreUrl::File { .. } => None,
        _ => {
            return Err(invalid(
                "spec.configBase",
                format!("{base:?}: the GCE model keeps a cluster's files in a gs:// bucket"),
            ));
        }
    };
    let files = managed_files(ctx)?;
    for f in files {
        // Secret files (keysets, Cilium's manifest with IPsec keys) never go into
        // Terraform: they are written straight to the store, as kOps writes keysets;
        // without a store they exist only for this render.
        if f.sensitive && ctx.config_store.is_none() {
            continue;
        }
        let render = target
            .as_ref()
            .filter(|_| !f.sensitive)
            .map(|(memfs, bucket, prefix)| {
                let key = if prefix.is_empty() {
                    f.location.clone()
                } else {
                    format!("{prefix}/{}", f.location)
                };
                if *memfs {
                    Render::S3 {
                        bucket: bucket.clone(),
                        key,
                    }
                } else {
                    Render::Gcs {
                        bucket: bucket.clone(),
                        key,
                    }
                }
            });
        m.files.push(GceManagedFile {
            file: ManagedFileTask::new(&f, ctx),
            name: f.name.clone(),
            contents: f.contents.clone(),
            render,
        });
    }
    Ok(())
}
