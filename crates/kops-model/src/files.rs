//! The files kOps keeps in a cluster's config base (`ManagedFile`s): the completed spec,
//! the kOps version, etcd cluster specs and manifests, the static pods, nodeup configs,
//! addon manifests and the bootstrap channel.
//!
//! [`managed_files`] lists them for a completed spec, cloud-neutrally. Each file is a
//! [`ManagedFileTask`]: direct apply writes it into the cluster's config base in its own
//! state store (the [`ClusterContext::config_store`]), as kOps' `fitasks.ManagedFile`
//! does; each cloud's model adds how the Terraform target renders it (AWS: an
//! `aws_s3_object`).

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use kops_api::internal::{InstanceGroup, InstanceGroupRole};
use kops_api::manifest::{self, Object};
use kops_api::v1alpha2;
use kops_statestore::{PutOptions, Store, StoreExt as _};
use kops_tasks::{Change, Context, Fields, Found, Outputs, Task, TaskKey, Value, async_trait};

use crate::addons;
use crate::cluster::ClusterContext;
use crate::error::Result;
use crate::etcd;

/// One file of the config base.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ManagedFile {
    /// Task name (kOps' `ManagedFile` name, also the Terraform resource name).
    pub(crate) name: String,
    /// Path relative to the config base.
    pub(crate) location: String,
    /// The content.
    pub(crate) contents: String,
}

impl ManagedFile {
    fn new(name: impl Into<String>, location: impl Into<String>, contents: String) -> Self {
        ManagedFile {
            name: name.into(),
            location: location.into(),
            contents,
        }
    }
}

/// The role directory of a group under `igconfig/`.
fn igconfig_role(ig: &InstanceGroup) -> &'static str {
    match ig.spec.role {
        Some(InstanceGroupRole::ControlPlane) => "control-plane",
        Some(InstanceGroupRole::ApiServer) => "apiserver",
        Some(InstanceGroupRole::Bastion) => "bastion",
        _ => "node",
    }
}

fn nodeup_config(ctx: &ClusterContext, ig: &InstanceGroup) -> String {
    let mut s = String::new();
    s.push_str(&format!("ClusterName: {}\n", ctx.name()));
    s.push_str(&format!("InstanceGroupName: {}\n", ig.name()));
    s.push_str(&format!("InstanceGroupRole: {}\n", igconfig_role(ig)));
    if let Some(v) = &ctx.cluster.spec.kubernetes_version {
        s.push_str(&format!("KubernetesVersion: {v}\n"));
    }
    let mut labels: BTreeMap<String, String> = ig.spec.node_labels.clone().unwrap_or_default();
    labels.insert("kops.k8s.io/instancegroup".into(), ig.name().into());
    s.push_str("NodeLabels:\n");
    for (k, v) in labels {
        s.push_str(&format!("  {k}: \"{v}\"\n"));
    }
    s
}

/// The static pod that exposes the API server's health to the load balancer
/// (`manifests/static/kube-apiserver-healthcheck.yaml`).
fn apiserver_healthcheck_manifest(ctx: &ClusterContext) -> String {
    let image = crate::images::remap(
        ctx,
        &format!(
            "registry.k8s.io/kops/kube-apiserver-healthcheck:{}",
            ctx.kops_release
        ),
    );
    let mut s =
        String::from("apiVersion: v1\nkind: Pod\nmetadata: {}\nspec:\n  containers:\n  - args:\n");
    for a in [
        "ca-cert=/secrets/ca.crt",
        "client-cert=/secrets/client.crt",
        "client-key=/secrets/client.key",
    ] {
        s.push_str(&format!("    - --{a}\n"));
    }
    s.push_str(&format!("    image: {image}\n"));
    s.push_str(concat!(
        "    livenessProbe:\n      httpGet:\n        host: 127.0.0.1\n",
        "        path: /.kube-apiserver-healthcheck/healthz\n        port: 3990\n",
        "      initialDelaySeconds: 5\n      timeoutSeconds: 5\n",
        "    name: healthcheck\n    resources: {}\n",
        "    securityContext:\n      runAsNonRoot: true\n      runAsUser: 10012\n",
        "    volumeMounts:\n    - mountPath: /secrets\n      name: healthcheck-secrets\n      readOnly: true\n",
        "  volumes:\n  - hostPath:\n      path: /etc/kubernetes/kube-apiserver-healthcheck/secrets\n",
        "      type: Directory\n    name: healthcheck-secrets\nstatus: {}\n",
    ));
    s
}

/// Every managed file of a cluster, in kOps' order.
pub(crate) fn managed_files(ctx: &ClusterContext) -> Result<Vec<ManagedFile>> {
    let mut out = Vec::new();
    let completed = manifest::to_yaml(&[Object::Cluster(v1alpha2::Cluster::from(&ctx.cluster))])?;
    out.push(ManagedFile::new(
        "cluster-completed.spec",
        "cluster-completed.spec",
        completed,
    ));
    out.push(ManagedFile::new(
        "kops-version.txt",
        "kops-version.txt",
        ctx.kops_release.clone(),
    ));

    let control_planes: Vec<&InstanceGroup> =
        ctx.groups_with(&InstanceGroupRole::ControlPlane).collect();
    for e in ctx.cluster.spec.etcd_clusters.iter().flatten() {
        let Some(ename) = e.name.as_deref() else {
            continue;
        };
        let members = e.etcd_members.as_ref().map_or(0, Vec::len);
        let spec = format!(
            "{{\n  \"memberCount\": {members},\n  \"etcdVersion\": \"{}\"\n}}",
            etcd::etcd_version(ctx, e)
        );
        out.push(ManagedFile::new(
            format!("etcd-cluster-spec-{ename}"),
            format!("backups/etcd/{ename}/control/etcd-cluster-spec"),
            spec,
        ));
        for ig in &control_planes {
            out.push(ManagedFile::new(
                format!("manifests-etcdmanager-{ename}-{}", ig.name()),
                format!("manifests/etcd/{ename}-{}.yaml", ig.name()),
                etcd::etcd_manager_manifest(ctx, e, ename),
            ));
        }
    }
    if !control_planes.is_empty() {
        out.push(ManagedFile::new(
            "manifests-static-kube-apiserver-healthcheck",
            "manifests/static/kube-apiserver-healthcheck.yaml",
            apiserver_healthcheck_manifest(ctx),
        ));
    }
    out.push(ManagedFile::new(
        "manifests-channels-kops-channels",
        "manifests/channels/kops-channels.yaml",
        addons::kops_channels_manifest(ctx),
    ));

    for ig in &ctx.groups {
        let has_user_data = ig.spec.role != Some(InstanceGroupRole::Bastion)
            || ig
                .spec
                .additional_user_data
                .as_ref()
                .is_some_and(|u| !u.is_empty());
        if !has_user_data {
            continue;
        }
        let dir = format!("igconfig/{}/{}", igconfig_role(ig), ig.name());
        out.push(ManagedFile::new(
            format!("nodeupconfig-{}", ig.name()),
            format!("{dir}/nodeupconfig.yaml"),
            nodeup_config(ctx, ig),
        ));
        if ClusterContext::is_karpenter(ig) {
            out.push(ManagedFile::new(
                format!("nodeupscript-{}", ig.name()),
                format!("{dir}/nodeupscript.sh"),
                format!("#!/bin/bash\n# nodeup bootstrap for {}\n", ig.name()),
            ));
        }
    }

    out.extend(addons::managed_files(ctx)?);
    for (rel, content) in &ctx.extra_files {
        out.push(ManagedFile::new(rel.clone(), rel.clone(), content.clone()));
    }
    Ok(out)
}

/// The task of one managed file: found by reading, applied by writing, the file at its
/// location in the config-base store. Cloud-neutral: it never calls the cloud.
#[derive(Clone, Debug)]
pub(crate) struct ManagedFileTask {
    key: TaskKey,
    location: String,
    contents: String,
    store: Option<Arc<dyn Store>>,
}

impl ManagedFileTask {
    /// The task of `file`, writing into `store` (the config base).
    pub(crate) fn new(file: &ManagedFile, store: Option<Arc<dyn Store>>) -> Self {
        ManagedFileTask {
            key: TaskKey::new("ManagedFile", &file.name),
            location: file.location.clone(),
            contents: file.contents.clone(),
            store,
        }
    }

    fn store(&self) -> kops_tasks::Result<&Arc<dyn Store>> {
        self.store.as_ref().ok_or_else(|| kops_tasks::Error::Lifecycle {
            key: self.key.clone(),
            message: "no config-base store to write managed files to (set ClusterContext::config_store)".into(),
        })
    }

    fn store_error(&self, operation: &str, e: kops_statestore::Error) -> kops_tasks::Error {
        kops_tasks::Error::Cloud {
            operation: format!("{operation} {} in the config base", self.location),
            source: Some(Box::new(e)),
        }
    }
}

#[async_trait]
impl<C: ?Sized + Sync> Task<C> for ManagedFileTask {
    fn key(&self) -> &TaskKey {
        &self.key
    }

    fn fields(&self) -> Fields {
        Fields::new()
            .with("location", Value::string(self.location.as_str()))
            .with("contents", Value::text(self.contents.as_str()))
    }

    async fn find(&self, _cx: &Context<'_, C>) -> kops_tasks::Result<Option<Found>> {
        let store = self.store()?;
        let got = store
            .get_opt(&self.location)
            .await
            .map_err(|e| self.store_error("reading", e))?;
        Ok(got.map(|g| {
            let fields = Fields::new()
                .with("location", Value::string(self.location.as_str()))
                .with(
                    "contents",
                    Value::text(String::from_utf8_lossy(&g.data).into_owned()),
                );
            Found::new(fields, Outputs::new())
        }))
    }

    async fn apply(
        &self,
        _cx: &Context<'_, C>,
        _change: &Change<'_>,
    ) -> kops_tasks::Result<Outputs> {
        let store = self.store()?;
        store
            .put(
                &self.location,
                Bytes::from(self.contents.clone().into_bytes()),
                PutOptions::overwrite(),
            )
            .await
            .map_err(|e| self.store_error("writing", e))?;
        Ok(Outputs::new())
    }
}

/// Writes every file straight into `store`: for a Terraform target whose config base
/// Terraform cannot write (a local directory), as kOps does without Terraform-managed
/// files.
pub(crate) async fn write_all(
    store: &dyn Store,
    files: impl IntoIterator<Item = &ManagedFileTask>,
) -> Result<usize> {
    let mut n = 0;
    for f in files {
        store
            .put(
                &f.location,
                Bytes::from(f.contents.clone().into_bytes()),
                PutOptions::overwrite(),
            )
            .await
            .map_err(crate::error::store(format!(
                "writing {} in the config base",
                f.location
            )))?;
        n += 1;
    }
    Ok(n)
}
