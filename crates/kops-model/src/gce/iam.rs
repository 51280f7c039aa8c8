//! kOps' `ServiceAccountsBuilder` (`pkg/model/gcemodel/service_accounts.go`) and
//! `StorageAclBuilder` (`storageacl.go`): with a shared account
//! (`cloudConfig.gceServiceAccount`) nothing; otherwise one service account per role,
//! the control plane's project IAM binding, and the bucket IAM members that let the
//! roles read (and the control plane write) a `gs://` state store.

use kops_api::internal::InstanceGroupRole;
use kops_statestore::StoreUrl;
use kops_tasks::resource::Attr;

use super::cloud::GceResourceType as R;
use super::{GceModel, GceModelContext, naming};
use crate::error::Result;

/// The account a role's groups run as: control plane and API servers share one.
pub(crate) fn account_role(role: Option<&InstanceGroupRole>) -> &'static str {
    match role {
        Some(InstanceGroupRole::ControlPlane | InstanceGroupRole::ApiServer) => "control-plane",
        Some(InstanceGroupRole::Bastion) => "bastion",
        _ => "node",
    }
}

fn description(role: &str) -> &'static str {
    match role {
        "control-plane" => "kubernetes control-plane instances",
        "bastion" => "bastion nodes",
        _ => "kubernetes worker nodes",
    }
}

/// The roles with groups, in kOps' order.
fn roles(ctx: &GceModelContext) -> Vec<&'static str> {
    let mut out = Vec::new();
    for r in ["control-plane", "node", "bastion"] {
        if ctx
            .groups
            .iter()
            .any(|g| account_role(g.spec.role.as_ref()) == r)
        {
            out.push(r);
        }
    }
    out
}

/// The email of a role's account.
fn email(ctx: &GceModelContext, role: &str) -> String {
    format!(
        "{}@{}.iam.gserviceaccount.com",
        naming::service_account_name(role, ctx.name()),
        ctx.project
    )
}

/// `format("serviceAccount:%s", <account>.email)` for Terraform, the member text for the
/// cloud.
fn member(ctx: &GceModelContext, role: &str) -> Attr {
    let rendered = format!("google_service_account.{role}.email");
    Attr::RenderedAs {
        value: Box::new(Attr::s(format!("serviceAccount:{}", email(ctx, role)))),
        terraform: Box::new(Attr::Raw(format!(
            "format(\"serviceAccount:%s\", {rendered})"
        ))),
    }
}

pub(crate) fn build_service_accounts(ctx: &GceModelContext, m: &mut GceModel) -> Result<()> {
    if ctx.shared_service_account().is_some() {
        return Ok(());
    }
    for role in roles(ctx) {
        let account_id = naming::service_account_name(role, ctx.name());
        m.add(
            ctx.task("ServiceAccount", role, R::ServiceAccount)
                .find_by(kops_tasks::resource::FindBy::Id(email(ctx, role)))
                .attr("account_id", account_id)
                .attr("description", description(role))
                .attr("display_name", role)
                .attr("project", ctx.project.as_str()),
        );
        if role == "control-plane" {
            let sa = kops_tasks::TaskKey::new("ServiceAccount", role);
            m.add(
                ctx.task(
                    "ProjectIAMBinding",
                    format!("serviceaccount-{role}"),
                    R::ProjectIamBinding,
                )
                .find_by(kops_tasks::resource::FindBy::Id(format!(
                    "{}/roles/container.serviceAgent",
                    ctx.project
                )))
                .attr("members", Attr::List(vec![member(ctx, role)]))
                .attr("project", ctx.project.as_str())
                .attr("role", "roles/container.serviceAgent")
                .depends_on(sa),
            );
        }
    }
    Ok(())
}

/// The bucket of a `gs://` URL.
fn gs_bucket(url: &str) -> Option<String> {
    match StoreUrl::parse(url) {
        Ok(StoreUrl::Gcs { bucket, .. }) => Some(bucket),
        _ => None,
    }
}

pub(crate) fn build_storage_acls(ctx: &GceModelContext, m: &mut GceModel) -> Result<()> {
    if ctx.shared_service_account().is_some() {
        return Ok(());
    }
    let Some(base) = ctx.cluster.spec.config_store.base.as_deref() else {
        return Ok(());
    };
    let Some(config_bucket) = gs_bucket(base) else {
        return Ok(());
    };
    // The etcd backups go to the config base's bucket unless a backup store says
    // otherwise.
    let mut writeable = Vec::new();
    for e in ctx.cluster.spec.etcd_clusters.iter().flatten() {
        let store = e
            .backups
            .as_ref()
            .and_then(|b| b.backup_store.clone())
            .unwrap_or_else(|| base.to_owned());
        if let Some(b) = gs_bucket(&store)
            && !writeable.contains(&b)
        {
            writeable.push(b);
        }
    }
    for role in roles(ctx) {
        let sa = kops_tasks::TaskKey::new("ServiceAccount", role);
        let lower = role.replace('-', "");
        let mut add = |bucket: &str, what: &str, gcp_role: &str| {
            let name = format!("{what}-{bucket}-serviceaccount-{lower}");
            m.add(
                ctx.task("StorageBucketIAM", &name, R::StorageBucketIam)
                    .find_by(kops_tasks::resource::FindBy::Id(format!(
                        "{bucket}/{gcp_role}/serviceAccount:{}",
                        email(ctx, role)
                    )))
                    .attr("bucket", bucket)
                    .attr("member", member(ctx, role))
                    .attr("role", gcp_role)
                    .depends_on(sa.clone()),
            );
        };
        if role == "control-plane" {
            for b in &writeable {
                add(b, "objectadmin", "roles/storage.objectAdmin");
            }
            if !writeable.contains(&config_bucket) {
                add(&config_bucket, "objectviewer", "roles/storage.objectViewer");
            }
        }
    }
    Ok(())
}
