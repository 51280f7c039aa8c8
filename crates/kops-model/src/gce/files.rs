//! How the GCE model stores the cluster's managed files ([`crate::files`]): direct apply
//! writes them into the config base through the state store; the Terraform target
//! renders each as kOps does for the config base's scheme: `memfs://` (kOps' tests) as
//! an `aws_s3_object` in bucket `testingBucket` (kOps' memfs always renders S3-style),
//! `gs://` as a `google_storage_bucket_object` in the `google.files` provider. A local
//! config base has no Terraform form.

use kops_statestore::StoreUrl;
use kops_tasks::terraform::{Body, Expr, TerraformWriter};

use super::{GceModel, GceModelContext};
use crate::error::{Result, invalid};
use crate::files::{ManagedFileTask, managed_files};

/// The bucket kOps' test harness renders in-memory config bases to.
const MEMFS_BUCKET: &str = "testingBucket";

/// The Terraform resource of a managed file in `bucket` at `key`: an `aws_s3_object` in
/// the `aws.files` provider (`memfs://`), else a `google_storage_bucket_object` in
/// `google.files`.
fn render(
    name: String,
    contents: String,
    memfs: bool,
    bucket: String,
    key: String,
) -> impl Fn(&mut TerraformWriter) -> kops_tasks::Result<()> + Send + Sync + 'static {
    move |w: &mut TerraformWriter| {
        if memfs {
            let content = w.add_file(
                "aws_s3_object",
                &name,
                "content",
                contents.clone().into_bytes(),
            );
            let body = Body::new()
                .attr("bucket", bucket.as_str())
                .attr("content", content)
                .attr("key", key.as_str())
                .attr("provider", Expr::traversal("aws.files"))
                .attr("server_side_encryption", "AES256");
            return w.resource("aws_s3_object", &name, body);
        }
        let t = "google_storage_bucket_object";
        let content = w.add_file(t, &name, "content", contents.clone().into_bytes());
        let body = Body::new()
            .attr("bucket", bucket.as_str())
            .attr("content", content)
            .attr("name", key.as_str())
            .attr("provider", Expr::traversal("google.files"));
        w.resource(t, &name, body)
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
        let mut task = ManagedFileTask::new(&f, ctx);
        if let Some((memfs, bucket, prefix)) = target.as_ref().filter(|_| !f.sensitive) {
            let key = if prefix.is_empty() {
                f.location.clone()
            } else {
                format!("{prefix}/{}", f.location)
            };
            let r = render(
                f.name.clone(),
                f.contents.clone(),
                *memfs,
                bucket.clone(),
                key,
            );
            task = task.with_render(r);
        }
        m.files.push(task);
    }
    Ok(())
}
