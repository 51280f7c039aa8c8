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

/// An image reference as the cluster pulls it: with `assets.containerProxy` set, the
/// registry host is replaced by the proxy (a Docker Hub short name gets it prefixed).
pub fn remap_image(ctx: &ModelContext, image: &str) -> String {
    let Some(proxy) = ctx
        .cluster
        .spec
        .assets
        .as_ref()
        .and_then(|a| a.container_proxy.as_deref())
    else {
        return image.to_owned();
    };
    let proxy = proxy.trim_end_matches('/');
    let first = image.split('/').next().unwrap_or_default();
    let hub_short = image.matches('/').count() <= 1 && !first.contains(['.', ':']);
    if hub_short {
        format!("{proxy}/{image}")
    } else {
        match image.split_once('/') {
            Some((_, rest)) => format!("{proxy}/{rest}"),
            None => proxy.to_owned(),
        }
    }
}

/// The static pod that exposes the API server's health to the load balancer
/// (`manifests/static/kube-apiserver-healthcheck.yaml`).
fn apiserver_healthcheck_manifest(ctx: &ModelContext) -> String {
    let image = remap_image(
        ctx,
        &format!(
            "registry.k8s.io/kops/kube-apiserver-healthcheck:{}",
            ctx.kops_version
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

/// The static pod that applies the bootstrap channel on control-plane nodes
/// (`manifests/channels/kops-channels.yaml`).
fn kops_channels_manifest(ctx: &ModelContext) -> String {
    let image = remap_image(
        ctx,
        &format!("registry.k8s.io/kops/channels:{}", ctx.kops_version),
    );
    let base = ctx
        .cluster
        .spec
        .config_store
        .base
        .clone()
        .unwrap_or_default();
    let mut s = String::from(concat!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  labels:\n    k8s-app: kops-channels\n",
        "  name: kops-channels\n  namespace: kube-system\nspec:\n  containers:\n  - args:\n",
    ));
    for a in [
        "apply",
        "channel",
        "--v=4",
        "--yes",
        "--interval=1m0s",
        "--node-labels=node-role.kubernetes.io/control-plane",
        "--node-name=$(NODE_NAME)",
    ] {
        s.push_str(&format!("    - {a}\n"));
    }
    s.push_str(&format!("    - {base}/addons/bootstrap-channel.yaml\n"));
    s.push_str(concat!(
        "    env:\n    - name: NODE_NAME\n      valueFrom:\n        fieldRef:\n",
        "          fieldPath: spec.nodeName\n    - name: KUBECONFIG\n",
        "      value: /var/lib/kops/kubeconfig\n    - name: HOME\n      value: /tmp\n",
    ));
    if ctx.cluster.spec.cloud_provider.aws.is_some() {
        s.push_str(&format!(
            "    - name: AWS_REGION\n      value: {}\n",
            ctx.region
        ));
    }
    s.push_str(&format!("    image: {image}\n"));
    s.push_str(concat!(
        "    name: kops-channels\n    readinessProbe:\n      failureThreshold: 2\n",
        "      httpGet:\n        host: 127.0.0.1\n        path: /readyz\n        port: 3986\n",
        "      initialDelaySeconds: 30\n      periodSeconds: 10\n",
        "    resources:\n      requests:\n        cpu: 50m\n        memory: 50Mi\n",
        "    securityContext:\n      runAsNonRoot: true\n      runAsUser: 10013\n",
        "    volumeMounts:\n    - mountPath: /var/lib/kops/kubeconfig\n      name: kubeconfig\n",
        "      readOnly: true\n  dnsPolicy: Default\n  hostNetwork: true\n",
        "  priorityClassName: system-node-critical\n  tolerations:\n",
        "  - key: CriticalAddonsOnly\n    operator: Exists\n  volumes:\n  - hostPath:\n",
        "      path: /var/lib/kops/kubeconfig\n      type: File\n    name: kubeconfig\nstatus: {}\n",
    ));
    s
}

/// The etcd-manager image kOps pins.
const ETCD_MANAGER_IMAGE: &str = "registry.k8s.io/etcd-manager/etcd-manager-slim:v3.0.20260707";

/// The etcd ports of a cluster: (client, peer, quarantined client, grpc).
fn etcd_ports(name: &str) -> (u16, u16, u16, u16) {
    match name {
        "main" => (4001, 2380, 3994, 3996),
        "events" => (4002, 2381, 3995, 3997),
        "cilium" => (4003, 2382, 3992, 3991),
        _ => (4004, 2383, 4005, 4006),
    }
}

/// The etcd versions the etcd-manager pod can run, with the volume each one's binaries
/// come from: every patch release of a supported minor maps to that minor's latest
/// image; a cluster with its own image runs only its version.
fn etcd_binaries(
    ctx: &ModelContext,
    e: &v1alpha2::EtcdClusterSpec,
) -> Vec<(String, String, String)> {
    let vol = |v: &str| format!("etcd-v{}", v.replace('.', "-"));
    if let Some(image) = e.image.as_deref().filter(|i| !i.is_empty()) {
        let v = e
            .version
            .as_deref()
            .unwrap_or_default()
            .trim_start_matches('v')
            .to_owned();
        return vec![(v.clone(), vol(&v), remap_image(ctx, image))];
    }
    let mut out = Vec::new();
    for latest in [
        kops_api::defaults::ETCD_35_VERSION,
        kops_api::defaults::ETCD_36_VERSION,
        kops_api::defaults::ETCD_37_VERSION,
    ] {
        let mut parts = latest.splitn(3, '.');
        let (Some(maj), Some(min), Some(patch)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let patch: u32 = patch.parse().unwrap_or(0);
        let image = remap_image(ctx, &format!("registry.k8s.io/etcd:v{latest}"));
        for p in 0..=patch {
            out.push((format!("{maj}.{min}.{p}"), vol(latest), image.clone()));
        }
    }
    out
}

/// The etcd-manager static pod of one etcd cluster
/// (`manifests/etcd/<cluster>-<group>.yaml`).
fn etcd_manager_manifest(ctx: &ModelContext, e: &v1alpha2::EtcdClusterSpec, name: &str) -> String {
    let cluster = ctx.name();
    let (client, peer, quarantine, grpc) = etcd_ports(name);
    let client_host = if name == "cilium" {
        format!("api.internal.{cluster}")
    } else {
        "__name__".to_owned()
    };
    let etcd_name = if name == "main" {
        "etcd".to_owned()
    } else {
        format!("etcd-{name}")
    };
    let backup_store = e
        .backups
        .as_ref()
        .and_then(|b| b.backup_store.clone())
        .unwrap_or_else(|| {
            format!(
                "{}/backups/etcd/{name}",
                ctx.cluster
                    .spec
                    .config_store
                    .base
                    .clone()
                    .unwrap_or_default()
            )
        });
    let manager = e.manager.as_ref();
    let mut flags = vec![
        format!("--backup-store={backup_store}"),
        format!("--client-urls=https://{client_host}:{client}"),
        format!("--cluster-name={etcd_name}"),
        "--containerized=true".to_owned(),
        format!("--dns-suffix=.internal.{cluster}"),
        format!("--grpc-port={grpc}"),
        format!("--peer-urls=https://__name__:{peer}"),
        format!("--quarantine-client-urls=https://__name__:{quarantine}"),
        format!("--v={}", manager.and_then(|m| m.log_level).unwrap_or(6)),
        format!("--volume-name-tag=k8s.io/etcd/{name}"),
        "--volume-provider=aws".to_owned(),
        format!("--volume-tag=k8s.io/etcd/{name}"),
        "--volume-tag=k8s.io/role/control-plane=1".to_owned(),
        format!("--volume-tag=kubernetes.io/cluster/{cluster}=owned"),
    ];
    flags.sort();
    let mut env: Vec<(String, String)> = Vec::new();
    if ctx.cluster.spec.cloud_provider.aws.is_some() {
        env.push(("AWS_REGION".into(), ctx.region.clone()));
    }
    if let Some(m) = manager {
        if let Some(d) = m.backup_retention_days {
            env.push((
                "ETCD_MANAGER_DAILY_BACKUPS_RETENTION".into(),
                format!("{d}d"),
            ));
        }
        if let Some(u) = m.listen_metrics_urls.as_ref().filter(|u| !u.is_empty()) {
            env.push(("ETCD_LISTEN_METRICS_URLS".into(), u.join(",")));
        }
        if let Some(u) = m.listen_client_httpurls.as_ref().filter(|u| !u.is_empty()) {
            env.push(("ETCD_LISTEN_CLIENT_HTTP_URLS".into(), u.join(",")));
        }
        for v in m.env.iter().flatten() {
            env.push((
                v.name.clone().unwrap_or_default(),
                v.value.clone().unwrap_or_default(),
            ));
        }
    }
    let image = remap_image(
        ctx,
        manager
            .and_then(|m| m.image.as_deref())
            .filter(|i| !i.is_empty())
            .unwrap_or(ETCD_MANAGER_IMAGE),
    );
    let cpu = e.cpu_request.as_ref().map_or("200m", |q| q.as_str());
    let memory = e.memory_request.as_ref().map_or("100Mi", |q| q.as_str());
    let binaries = etcd_binaries(ctx, e);
    let log = format!("/var/log/{etcd_name}.log");

    let mut s = format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  labels:\n    k8s-app: etcd-manager-{name}\n  name: etcd-manager-{name}\n  namespace: kube-system\nspec:\n  containers:\n  - args:\n    - --log-file=/var/log/etcd.log\n    - --also-stdout\n    - /ko-app/etcd-manager\n"
    );
    for f in &flags {
        s.push_str(&format!("    - {f}\n"));
    }
    s.push_str("    command:\n    - /go-runner\n");
    if !env.is_empty() {
        s.push_str("    env:\n");
        for (k, v) in &env {
            s.push_str(&format!("    - name: {k}\n      value: {v}\n"));
        }
    }
    s.push_str(&format!(
        "    image: {image}\n    name: etcd-manager\n    resources:\n      requests:\n        cpu: {cpu}\n        memory: {memory}\n    securityContext:\n      privileged: true\n    volumeMounts:\n    - mountPath: /rootfs\n      name: rootfs\n    - mountPath: /run\n      name: run\n    - mountPath: /etc/kubernetes/pki/etcd-manager\n      name: pki\n"
    ));
    for (v, vol, _) in &binaries {
        s.push_str(&format!(
            "    - mountPath: /opt/etcd-v{v}\n      name: {vol}\n"
        ));
    }
    s.push_str(&format!(
        "    - mountPath: /var/log/etcd.log\n      name: varlogetcd\n  hostNetwork: true\n  hostPID: true\n  priorityClassName: system-cluster-critical\n  tolerations:\n  - key: CriticalAddonsOnly\n    operator: Exists\n  volumes:\n  - hostPath:\n      path: /\n      type: Directory\n    name: rootfs\n  - hostPath:\n      path: /run\n      type: DirectoryOrCreate\n    name: run\n  - hostPath:\n      path: /etc/kubernetes/pki/etcd-manager-{name}\n      type: DirectoryOrCreate\n    name: pki\n"
    ));
    let mut seen = std::collections::BTreeSet::new();
    for (_, vol, image) in &binaries {
        if seen.insert(vol.clone()) {
            s.push_str(&format!(
                "  - image:\n      pullPolicy: IfNotPresent\n      reference: {image}\n    name: {vol}\n"
            ));
        }
    }
    s.push_str(&format!(
        "  - hostPath:\n      path: {log}\n      type: FileOrCreate\n    name: varlogetcd\nstatus: {{}}\n"
    ));
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
            let manifest = etcd_manager_manifest(ctx, e, ename);
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
            apiserver_healthcheck_manifest(ctx),
            None,
        );
    }
    add_file(
        ctx,
        m,
        "manifests-channels-kops-channels",
        &bucket,
        &key("manifests/channels/kops-channels.yaml"),
        kops_channels_manifest(ctx),
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
