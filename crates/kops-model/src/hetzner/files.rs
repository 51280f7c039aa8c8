//! How the Hetzner model stores the cluster's managed files ([`crate::files`]): direct
//! apply writes them into the config base through the state store; the Terraform target
//! renders each as an `aws_s3_object` in the `aws.files` provider, for a config base in
//! S3-compatible storage (`s3://`, Hetzner's object storage through `S3_ENDPOINT`) and for
//! `memfs://` (kOps' tests, in bucket `testingBucket`). A local config base has no
//! Terraform form.
//!
//! # The API token in Terraform
//!
//! kOps writes the Hetzner token into the manifests of etcd-manager, kops-channels and
//! kops-controller and into the `hcloud` Secret, and with the Terraform target into their
//! data files, where `terraform plan` prints it and version control keeps it. Here those
//! files are templates (`templatefile(...)`) with `${hcloud_token}` where the token goes,
//! filled from the sensitive variable `hcloud_token` (`TF_VAR_hcloud_token`): the bucket
//! gets the same objects, and Terraform redacts them in plans. Other secret files (Cilium's
//! IPsec keys) are never rendered: direct writes put them in the store.
//!
//! A context made [`with_kops_identical_files`](super::HetznerModelContext::with_kops_identical_files)
//! writes those files as kOps does instead, the token in their data files.

use kops_statestore::StoreUrl;
use std::collections::BTreeMap;

use kops_tasks::terraform::{Body, Expr, TerraformWriter};

use super::{HetznerModel, HetznerModelContext};
use crate::error::{Result, invalid};
use crate::files::{ManagedFileTask, managed_files};

/// The bucket kOps' test harness renders in-memory config bases to.
const MEMFS_BUCKET: &str = "testingBucket";

/// The Terraform variable the API token comes from.
pub(crate) const TOKEN_VARIABLE: &str = "hcloud_token";

/// The content Terraform writes for a file.
#[derive(Debug)]
enum Content {
    /// The file's text, as a data file read with `file(...)`.
    Plain(String),
    /// A template whose `${hcloud_token}` Terraform fills from the token variable.
    WithToken(String),
}

/// `contents` as a Terraform template in which every `token` is `${hcloud_token}`: the
/// template syntax already in the text (`${`, `%{`) is escaped first.
fn token_template(contents: &str, token: &str) -> String {
    contents
        .replace("${", "$${")
        .replace("%{", "%%{")
        .replace(token, &format!("${{{TOKEN_VARIABLE}}}"))
}

/// The `aws_s3_object` of a managed file in `bucket` at `key`, in the `aws.files`
/// provider: its text as a data file, or a template filled from the token variable.
fn render(
    name: String,
    contents: Content,
    bucket: String,
    key: String,
) -> impl Fn(&mut TerraformWriter) -> kops_tasks::Result<()> + Send + Sync + 'static {
    move |w: &mut TerraformWriter| {
        let content = match &contents {
            Content::Plain(text) => w.add_file("aws_s3_object", &name, "content", text.clone()),
            Content::WithToken(template) => {
                let file = w.add_file("aws_s3_object", &name, "content", template.clone());
                let Expr::Call(_, path) = file else {
                    return Err(kops_tasks::Error::invalid(
                        &name,
                        "the Terraform writer did not return file(...)",
                    ));
                };
                w.variable(
                    TOKEN_VARIABLE,
                    Body::new()
                        .attr(
                            "description",
                            "The Hetzner API token the cluster's components use (HCLOUD_TOKEN).",
                        )
                        .attr("sensitive", true)
                        .attr("type", Expr::traversal("string")),
                );
                let vars = BTreeMap::from([(
                    TOKEN_VARIABLE.to_owned(),
                    Expr::traversal(&format!("var.{TOKEN_VARIABLE}")),
                )]);
                let args = path.into_iter().chain([Expr::Map(vars)]).collect();
                Expr::Call("templatefile".into(), args)
            }
        };
        let body = Body::new()
            .attr("bucket", bucket.as_str())
            .attr("content", content)
            .attr("key", key.as_str())
            .attr("provider", Expr::traversal("aws.files"))
            .attr("server_side_encryption", "AES256");
        w.resource("aws_s3_object", &name, body)
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
    let token = ctx.hcloud_token.as_ref().map(|t| t.expose());
    for f in managed_files(ctx)? {
        let holds_token =
            token.is_some_and(|t| f.sensitive && !t.is_empty() && f.contents.contains(t));
        let contents = match token {
            Some(t) if holds_token && !ctx.hcloud_kops_identical => {
                Content::WithToken(token_template(&f.contents, t))
            }
            _ => Content::Plain(f.contents.clone()),
        };
        let rendered = !f.sensitive || holds_token;
        // Other secret files never go into Terraform: they are written straight to the
        // store; without a store they exist only for this render.
        if !rendered && ctx.config_store.is_none() {
            continue;
        }
        let mut task = ManagedFileTask::new(&f, ctx);
        if let Some((bucket, prefix)) = target.as_ref().filter(|_| rendered) {
            let key = if prefix.is_empty() {
                f.location.clone()
            } else {
                format!("{prefix}/{}", f.location)
            };
            task = task.with_render(render(f.name.clone(), contents, bucket.clone(), key));
        }
        m.files.push(task);
    }
    Ok(())
}
