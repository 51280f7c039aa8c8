//! The addons kOps' bootstrap channel lists for a cluster, the channel itself, and the
//! `kops-channels` static pod that applies it (kOps' `pkg/model/components/addonmanifests`
//! and `bootstrapchannelbuilder`).

use crate::cluster::ClusterContext;

/// One addon of the bootstrap channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Addon {
    /// Addon name (`coredns.addons.k8s.io`).
    pub(crate) name: String,
    /// Manifest id (`k8s-1.12`; empty for addons without one).
    pub(crate) id: String,
    /// Manifest file name under `addons/<name>/`.
    pub(crate) file: String,
}

/// The addons (name, manifest id, file name) the bootstrap channel lists for this spec.
pub(crate) fn addons(ctx: &ClusterContext) -> Vec<Addon> {
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
        .map(|(name, id, file)| Addon {
            name: name.to_owned(),
            id: id.to_owned(),
            file: file.to_owned(),
        })
        .collect()
}

/// The bootstrap channel (`addons/bootstrap-channel.yaml`) listing `list`.
pub(crate) fn bootstrap_channel(list: &[Addon]) -> String {
    let mut s = String::from(
        "kind: Addons\nmetadata:\n  creationTimestamp: null\n  name: bootstrap\nspec:\n  addons:\n",
    );
    for Addon { name, id, file } in list {
        s.push_str(&format!("  - id: {id}\n    manifest: {name}/{file}\n    name: {name}\n    selector:\n      k8s-addon: {name}\n"));
    }
    s
}

/// The static pod that applies the bootstrap channel on control-plane nodes
/// (`manifests/channels/kops-channels.yaml`).
pub(crate) fn kops_channels_manifest(ctx: &ClusterContext) -> String {
    let image = crate::images::remap(
        ctx,
        &format!("registry.k8s.io/kops/channels:{}", ctx.kops_release),
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
