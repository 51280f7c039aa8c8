//! The files kOps writes to the state store during an update (`ManagedFile`s: the
//! completed spec, the kOps version, etcd cluster specs and manifests, nodeup configs,
//! addon manifests and the bootstrap channel, OIDC discovery documents), as S3 objects.

use std::collections::BTreeMap;

use kops_api::internal::{InstanceGroup, InstanceGroupRole};
use kops_api::manifest::{self, Object};
use kops_api::v1alpha2;

use super::{AwsModel, ModelContext};
use crate::aws::cloud::ResourceType as R;
use crate::aws::task::{Attr, FindBy};
use crate::error::Result;

/// The bucket kOps' test harness uses for in-memory (`memfs://`) state stores.
pub const MEMFS_BUCKET: &str = "testingBucket";

/// Splits a store URL into bucket and key prefix: `s3://bucket/a/b` -> (`bucket`, `a/b`);
/// `memfs://a/b` -> ([`MEMFS_BUCKET`], `a/b`).
pub fn split_store_url(url: &str) -> (String, String) {
    if let Some(rest) = url.strip_prefix("s3://") {
        let (b, p) = rest.split_once('/').unwrap_or((rest, ""));
        return (b.to_owned(), p.trim_end_matches('/').to_owned());
    }
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    (
        MEMFS_BUCKET.to_owned(),
        rest.trim_end_matches('/').to_owned(),
    )
}

/// The bucket and key prefix of the cluster's config base.
pub fn state_location(ctx: &ModelContext) -> (String, String) {
    let base = ctx
        .cluster
        .spec
        .config_store
        .base
        .clone()
        .unwrap_or_else(|| format!("memfs://clusters.example.com/{}", ctx.name()));
    split_store_url(&base)
}

fn add_file(
    ctx: &ModelContext,
    m: &mut AwsModel,
    name: &str,
    bucket: &str,
    key: &str,
    content: String,
    acl: Option<&str>,
) {
    m.add(
        ctx.task("ManagedFile", name, R::S3Object)
            .attr_opt("acl", acl)
            .attr("bucket", bucket)
            .attr("content", Attr::File(content))
            .attr("key", key)
            .attr("server_side_encryption", "AES256")
            .render_attr("provider", Attr::Raw("aws.files".into()))
            .find_by(FindBy::Parent {
                parent_attr: "bucket".into(),
                match_attrs: vec!["key".into()],
            }),
    );
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

/// The addons (name, manifest id, file name) the bootstrap channel lists for this spec.
pub fn addons(ctx: &ModelContext) -> Vec<(String, String, String)> {
    let spec = &ctx.cluster.spec;
    let net = &spec.networking;
    let mut out: Vec<(&str, &str, &str)> = vec![
        ("kops-controller.addons.k8s.io", "k8s-1.16", "k8s-1.16.yaml"),
        ("coredns.addons.k8s.io", "k8s-1.12", "k8s-1.12.yaml"),
        ("kubelet-api.rbac.addons.k8s.io", "k8s-1.9", "k8s-1.9.yaml"),
        ("limit-range.addons.k8s.io", "", "v1.5.0.yaml"),
        ("dns-controller.addons.k8s.io", "k8s-1.12", "k8s-1.12.yaml"),
    ];
    let is_aws = spec.cloud_provider.aws.is_some();
    if is_aws {
        out.push(("storage-aws.addons.k8s.io", "v1.15.0", "v1.15.0.yaml"));
        out.push((
            "aws-ebs-csi-driver.addons.k8s.io",
            "k8s-1.17",
            "k8s-1.17.yaml",
        ));
        out.push((
            "aws-cloud-controller.addons.k8s.io",
            "k8s-1.18",
            "k8s-1.18.yaml",
        ));
        let nth_enabled = spec
            .cloud_provider
            .aws
            .as_ref()
            .and_then(|a| a.node_termination_handler.as_ref())
            .and_then(|n| n.enabled)
            .unwrap_or(true)
            && spec.karpenter.as_ref().and_then(|k| k.enabled) != Some(true);
        if nth_enabled {
            out.push(("node-termination-handler.aws", "k8s-1.11", "k8s-1.11.yaml"));
        }
    }
    if spec.cluster_autoscaler.as_ref().and_then(|c| c.enabled) == Some(true) {
        out.push((
            "cluster-autoscaler.addons.k8s.io",
            "k8s-1.15",
            "k8s-1.15.yaml",
        ));
    }
    if spec.metrics_server.as_ref().and_then(|c| c.enabled) == Some(true) {
        out.push(("metrics-server.addons.k8s.io", "k8s-1.11", "k8s-1.11.yaml"));
    }
    if spec.cert_manager.as_ref().and_then(|c| c.enabled) == Some(true) {
        out.push(("certmanager.io", "k8s-1.16", "k8s-1.16.yaml"));
    }
    if spec.snapshot_controller.as_ref().and_then(|c| c.enabled) == Some(true) {
        out.push((
            "snapshot-controller.addons.k8s.io",
            "k8s-1.20",
            "k8s-1.20.yaml",
        ));
    }
    if spec.node_problem_detector.as_ref().and_then(|c| c.enabled) == Some(true) {
        out.push((
            "node-problem-detector.addons.k8s.io",
            "k8s-1.17",
            "k8s-1.17.yaml",
        ));
    }
    if spec
        .external_dns
        .as_ref()
        .and_then(|c| c.provider.as_deref())
        == Some("external-dns")
    {
        out.push(("external-dns.addons.k8s.io", "k8s-1.19", "k8s-1.19.yaml"));
    }
    if spec.karpenter.as_ref().and_then(|k| k.enabled) == Some(true) {
        out.push(("karpenter.sh", "k8s-1.19", "k8s-1.19.yaml"));
    }
    let irsa = spec
        .service_account_issuer_discovery
        .as_ref()
        .and_then(|s| s.enable_awsoidc_provider)
        == Some(true);
    if spec
        .cloud_provider
        .aws
        .as_ref()
        .and_then(|a| a.load_balancer_controller.as_ref())
        .and_then(|l| l.enabled)
        == Some(true)
    {
        if irsa {
            out.push((
                "aws-load-balancer-controller.addons.k8s.io",
                "k8s-1.19-irsa",
                "k8s-1.19-irsa.yaml",
            ));
        } else {
            out.push((
                "aws-load-balancer-controller.addons.k8s.io",
                "k8s-1.19",
                "k8s-1.19.yaml",
            ));
        }
    }
    if spec
        .cloud_provider
        .aws
        .as_ref()
        .and_then(|a| a.pod_identity_webhook.as_ref())
        .and_then(|p| p.enabled)
        == Some(true)
    {
        out.push((
            "eks-pod-identity-webhook.addons.k8s.io",
            "k8s-1.16",
            "k8s-1.16.yaml",
        ));
    }
    if spec
        .authentication
        .as_ref()
        .is_some_and(|a| a.aws.is_some())
    {
        out.push(("authentication.aws", "k8s-1.12", "k8s-1.12.yaml"));
    }
    let nvidia = spec
        .containerd
        .as_ref()
        .and_then(|c| c.nvidia_gpu.as_ref())
        .and_then(|n| n.enabled)
        == Some(true);
    if nvidia {
        out.push(("nvidia.addons.k8s.io", "k8s-1.16", "k8s-1.16.yaml"));
    }
    if net.cilium.is_some() {
        out.push(("networking.cilium.io", "k8s-1.16", "k8s-1.16-v1.15.yaml"));
    }
    if net.calico.is_some() {
        out.push(("networking.projectcalico.org", "k8s-1.25", "k8s-1.25.yaml"));
    }
    if net.kindnet.is_some() {
        out.push(("networking.kindnet", "k8s-1.32", "k8s-1.32.yaml"));
    }
    if net.amazonvpc.is_some() {
        out.push((
            "networking.amazon-vpc-routed-eni",
            "k8s-1.16",
            "k8s-1.16.yaml",
        ));
    }
    if net.flannel.is_some() || net.canal.is_some() {
        out.push(("networking.flannel", "k8s-1.25", "k8s-1.25.yaml"));
    }
    if net.kopeio.is_some() {
        out.push(("networking.kope.io", "k8s-1.12", "k8s-1.12.yaml"));
    }
    out.into_iter()
        .map(|(a, b, c)| (a.to_owned(), b.to_owned(), c.to_owned()))
        .collect()
}

fn bootstrap_channel(list: &[(String, String, String)]) -> String {
    let mut s = String::from(
        "kind: Addons\nmetadata:\n  creationTimestamp: null\n  name: bootstrap\nspec:\n  addons:\n",
    );
    for (name, id, file) in list {
        s.push_str(&format!("  - id: {id}\n    manifest: {name}/{file}\n    name: {name}\n    selector:\n      k8s-addon: {name}\n"));
    }
    s
}

fn etcd_version(ctx: &ModelContext, e: &v1alpha2::EtcdClusterSpec) -> String {
    let _ = ctx;
    e.version
        .clone()
        .unwrap_or_else(|| kops_api::defaults::ETCD_36_VERSION.to_owned())
}

fn nodeup_config(ctx: &ModelContext, ig: &InstanceGroup) -> String {
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

/// Adds the managed files.
pub fn build(ctx: &ModelContext, m: &mut AwsModel) -> Result<()> {
    let (bucket, prefix) = state_location(ctx);
    let key = |rel: &str| format!("{prefix}/{rel}");

    let completed = manifest::to_yaml(&[Object::Cluster(v1alpha2::Cluster::from(&ctx.cluster))])?;
    add_file(
        ctx,
        m,
        "cluster-completed.spec",
        &bucket,
        &key("cluster-completed.spec"),
        completed,
        None,
    );
    add_file(
        ctx,
        m,
        "kops-version.txt",
        &bucket,
        &key("kops-version.txt"),
        ctx.kops_version.clone(),
        None,
    );

    let control_planes: Vec<&InstanceGroup> =
        ctx.groups_with(&InstanceGroupRole::ControlPlane).collect();
    for e in ctx.cluster.spec.etcd_clusters.iter().flatten() {
        let Some(ename) = e.name.as_deref() else {
            continue;
        };
        let members = e.etcd_members.as_ref().map_or(0, Vec::len);
        let spec = format!(
            "{{\n  \"memberCount\": {members},\n  \"etcdVersion\": \"{}\"\n}}",
            etcd_version(ctx, e)
        );
        add_file(
            ctx,
            m,
            &format!("etcd-cluster-spec-{ename}"),
            &bucket,
            &key(&format!("backups/etcd/{ename}/control/etcd-cluster-spec")),
            spec,
            None,
        );
        for ig in &control_planes {
            let manifest = format!(
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: etcd-manager-{ename}\n  namespace: kube-system\nspec:\n  containers:\n  - name: etcd-manager\n    command:\n    - /etcd-manager\n    - --cluster-name=etcd-{ename}\n    - --backup-store={}/backups/etcd/{ename}\n  hostNetwork: true\n",
                ctx.cluster
                    .spec
                    .config_store
                    .base
                    .clone()
                    .unwrap_or_default()
            );
            add_file(
                ctx,
                m,
                &format!("manifests-etcdmanager-{ename}-{}", ig.name()),
                &bucket,
                &key(&format!("manifests/etcd/{ename}-{}.yaml", ig.name())),
                manifest,
                None,
            );
        }
    }
    if !control_planes.is_empty() {
        add_file(
            ctx,
            m,
            "manifests-static-kube-apiserver-healthcheck",
            &bucket,
            &key("manifests/static/kube-apiserver-healthcheck.yaml"),
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-apiserver-healthcheck\n  namespace: kube-system\nspec:\n  containers:\n  - name: healthcheck\n    image: registry.k8s.io/kops/kube-apiserver-healthcheck\n    livenessProbe:\n      httpGet:\n        path: /.kube-apiserver-healthcheck/healthz\n        port: 3990\n"
                .to_owned(),
            None,
        );
    }
    add_file(
        ctx,
        m,
        "manifests-channels-kops-channels",
        &bucket,
        &key("manifests/channels/kops-channels.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: kops-channels\n  namespace: kube-system\n"
            .to_owned(),
        None,
    );

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
        add_file(
            ctx,
            m,
            &format!("nodeupconfig-{}", ig.name()),
            &bucket,
            &key(&format!("{dir}/nodeupconfig.yaml")),
            nodeup_config(ctx, ig),
            None,
        );
        if ModelContext::is_karpenter(ig) {
            add_file(
                ctx,
                m,
                &format!("nodeupscript-{}", ig.name()),
                &bucket,
                &key(&format!("{dir}/nodeupscript.sh")),
                format!("#!/bin/bash\n# nodeup bootstrap for {}\n", ig.name()),
                None,
            );
        }
    }

    let list = addons(ctx);
    let cluster = ctx.name();
    add_file(
        ctx,
        m,
        &format!("{cluster}-addons-bootstrap"),
        &bucket,
        &key("addons/bootstrap-channel.yaml"),
        bootstrap_channel(&list),
        None,
    );
    for (name, id, file) in &list {
        let task = if id.is_empty() {
            format!("{cluster}-addons-{name}")
        } else {
            format!("{cluster}-addons-{name}-{id}")
        };
        add_file(
            ctx,
            m,
            &task,
            &bucket,
            &key(&format!("addons/{name}/{file}")),
            format!("# addon {name} ({id})\napiVersion: v1\nkind: List\nitems: []\n"),
            None,
        );
    }

    // OIDC discovery documents.
    if let Some(store) = ctx
        .cluster
        .spec
        .service_account_issuer_discovery
        .as_ref()
        .and_then(|s| s.discovery_store.clone())
    {
        let (dbucket, dprefix) = split_store_url(&store);
        let issuer = ctx
            .cluster
            .spec
            .kube_api_server
            .as_ref()
            .and_then(|k| k.service_account_issuer.clone())
            .unwrap_or_default();
        let discovery = serde_json::to_string_pretty(&serde_json::json!({
            "issuer": issuer,
            "jwks_uri": format!("{issuer}/openid/v1/jwks"),
            "authorization_endpoint": "urn:kubernetes:programmatic_authorization",
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "claims_supported": ["sub", "iss"],
        }))
        .unwrap_or_default();
        add_file(
            ctx,
            m,
            "discovery.json",
            &dbucket,
            &format!("{dprefix}/.well-known/openid-configuration"),
            discovery,
            None,
        );
        add_file(
            ctx,
            m,
            "keys.json",
            &dbucket,
            &format!("{dprefix}/openid/v1/jwks"),
            "{\n  \"keys\": []\n}".to_owned(),
            None,
        );
    }

    for (rel, content) in &ctx.extra_files {
        add_file(ctx, m, rel, &bucket, &key(rel), content.clone(), None);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_urls_split_into_bucket_and_prefix() {
        assert_eq!(
            split_store_url("s3://bucket/clusters/a"),
            ("bucket".to_owned(), "clusters/a".to_owned())
        );
        assert_eq!(
            split_store_url("memfs://clusters.example.com/a.example.com"),
            (
                MEMFS_BUCKET.to_owned(),
                "clusters.example.com/a.example.com".to_owned()
            )
        );
    }
}
