//! How the AWS model stores the cluster's managed files ([`crate::files`]): direct apply
//! writes them into the config base through the state store; the Terraform target renders
//! each as an `aws_s3_object` in the config base's bucket (kOps' `S3Path` and, for the
//! in-memory stores of kOps' tests, `MemFSPath`, whose bucket is [`MEMFS_BUCKET`]). A
//! config base in a local directory has no Terraform form: the update workflow writes
//! those files straight into the store. The OIDC discovery documents live in their own,
//! public bucket and are plain S3 objects.

use kops_statestore::StoreUrl;
use kops_tasks::terraform::TerraformWriter;
use kops_tasks::{Change, Context, Fields, Found, Outputs, Task, TaskKey, async_trait};

use super::{AwsModel, ModelContext};
use crate::aws::cloud::{AwsCloud, ResourceType as R};
use crate::aws::task::{Attr, AwsTask, FindBy};
use crate::error::{Result, invalid};
use crate::files::{ManagedFile, ManagedFileTask, managed_files};

/// The bucket kOps' test harness renders in-memory (`memfs://`) config bases to.
pub(crate) const MEMFS_BUCKET: &str = "testingBucket";

fn s3_object(ctx: &ModelContext, name: &str, bucket: &str, key: &str, content: String) -> AwsTask {
    ctx.task("ManagedFile", name, R::S3Object)
        .attr("bucket", bucket)
        .attr("content", Attr::File(content))
        .attr("key", key)
        .attr("server_side_encryption", "AES256")
        .render_attr("provider", Attr::Raw("aws.files".into()))
        .find_by(FindBy::Parent {
            parent_attr: "bucket".into(),
            match_attrs: vec!["key".into()],
        })
}

fn add_s3_object(
    ctx: &ModelContext,
    m: &mut AwsModel,
    name: &str,
    bucket: &str,
    key: &str,
    content: String,
) {
    m.add(s3_object(ctx, name, bucket, key, content));
}

/// A managed file of the AWS model: written through the config-base store, rendered for
/// Terraform as an S3 object when the config base is a bucket.
#[derive(Debug)]
pub(crate) struct AwsManagedFile {
    file: ManagedFileTask,
    terraform: Option<AwsTask>,
}

impl AwsManagedFile {
    pub(crate) fn task_key(&self) -> &TaskKey {
        <ManagedFileTask as Task<dyn AwsCloud>>::key(&self.file)
    }

    /// The neutral task, when Terraform cannot render it (a local config base).
    pub(crate) fn unrendered(&self) -> Option<&ManagedFileTask> {
        self.terraform.is_none().then_some(&self.file)
    }
}

#[async_trait]
impl Task<dyn AwsCloud> for AwsManagedFile {
    fn key(&self) -> &TaskKey {
        self.task_key()
    }

    fn fields(&self) -> Fields {
        <ManagedFileTask as Task<dyn AwsCloud>>::fields(&self.file)
    }

    async fn find(&self, cx: &Context<'_, dyn AwsCloud>) -> kops_tasks::Result<Option<Found>> {
        self.file.find(cx).await
    }

    async fn apply(
        &self,
        cx: &Context<'_, dyn AwsCloud>,
        change: &Change<'_>,
    ) -> kops_tasks::Result<Outputs> {
        self.file.apply(cx, change).await
    }

    fn render_terraform(&self, w: &mut TerraformWriter) -> kops_tasks::Result<()> {
        match &self.terraform {
            Some(t) => <AwsTask as Task<dyn AwsCloud>>::render_terraform(t, w),
            None => Ok(()),
        }
    }
}

/// Adds the managed files, and the OIDC discovery documents.
pub(crate) fn build(ctx: &ModelContext, m: &mut AwsModel) -> Result<()> {
    let (base, url) = ctx.config_base()?;
    let bucket = match url {
        StoreUrl::S3 { bucket, prefix } => Some((bucket, prefix)),
        StoreUrl::Memory { prefix } => Some((MEMFS_BUCKET.to_owned(), prefix)),
        StoreUrl::File { .. } => None,
        _ => {
            return Err(invalid(
                "spec.configBase",
                format!("{base:?}: the AWS model keeps a cluster's files in an s3:// bucket"),
            ));
        }
    };
    for f in managed_files(ctx)? {
        let ManagedFile {
            name,
            location,
            contents,
            sensitive,
        } = &f;
        // Secret files (keysets, Cilium's manifest with IPsec keys) never go into
        // Terraform: they are written straight to the store, as kOps writes keysets;
        // without a store they exist only for this render.
        if *sensitive && ctx.config_store.is_none() {
            continue;
        }
        let terraform = bucket.as_ref().filter(|_| !*sensitive).map(|(b, prefix)| {
            let key = if prefix.is_empty() {
                location.clone()
            } else {
                format!("{prefix}/{location}")
            };
            s3_object(ctx, name, b, &key, contents.clone())
        });
        m.files.push(AwsManagedFile {
            file: ManagedFileTask::new(&f, ctx),
            terraform,
        });
    }

    // OIDC discovery documents.
    if let Some(store) = ctx
        .cluster
        .spec
        .service_account_issuer_discovery
        .as_ref()
        .and_then(|s| s.discovery_store.clone())
    {
        let (dbucket, dprefix) = match StoreUrl::parse(&store) {
            Ok(StoreUrl::S3 { bucket, prefix }) => (bucket, prefix),
            Ok(StoreUrl::Memory { prefix }) => (MEMFS_BUCKET.to_owned(), prefix),
            _ => {
                return Err(invalid(
                    "spec.serviceAccountIssuerDiscovery.discoveryStore",
                    format!(
                        "{store:?}: the discovery documents must be public: use an s3:// bucket"
                    ),
                ));
            }
        };
        let issuer = ctx
            .cluster
            .spec
            .kube_api_server
            .as_ref()
            .and_then(|k| k.service_account_issuer.clone())
            .unwrap_or_default();
        let discovery = crate::pki::oidc_discovery_json(&issuer);
        add_s3_object(
            ctx,
            m,
            "discovery.json",
            &dbucket,
            &format!("{dprefix}/.well-known/openid-configuration"),
            discovery,
        );
        add_s3_object(
            ctx,
            m,
            "keys.json",
            &dbucket,
            &format!("{dprefix}/openid/v1/jwks"),
            match ctx.keysets.get("service-account") {
                Some(ks) => crate::pki::jwks_json(ks)?,
                None => {
                    return Err(invalid(
                        "service-account",
                        "the service-account keyset is missing: keys.json needs its public keys",
                    ));
                }
            },
        );
    }

    Ok(())
}

/// The key prefix a store URL names inside its bucket (`s3://b/a/c` -> `a/c`; for
/// `memfs://a/c` the path kOps' tests render under [`MEMFS_BUCKET`]; for `file://` the
/// directory).
pub(crate) fn store_prefix(url: &str) -> Result<String> {
    match StoreUrl::parse(url) {
        Ok(StoreUrl::S3 { prefix, .. } | StoreUrl::Gcs { prefix, .. }) => Ok(prefix),
        Ok(StoreUrl::Memory { prefix }) => Ok(prefix),
        Ok(StoreUrl::File { path }) => Ok(path.trim_end_matches('/').to_owned()),
        Ok(_) => Err(invalid(url, "not a store URL the AWS model knows")),
        Err(e) => Err(invalid(url, e.to_string())),
    }
}
