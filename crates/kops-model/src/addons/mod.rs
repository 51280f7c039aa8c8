//! The addons kOps' bootstrap channel lists for a cluster, their manifests, the channel
//! itself, and the `kops-channels` static pod that applies it (kOps'
//! `bootstrapchannelbuilder` and `pkg/model/components/addonmanifests`).
//!
//! Each addon's objects are built by code in this module's files (one per addon or
//! family) as JSON values, then go through kOps' manifest pipeline: the kOps labels are
//! added to every object (and to the pod template of `apps/v1` Deployments and
//! DaemonSets), every container image is remapped through `assets`, each object is
//! written with [`kops_api::yaml`] and the documents are joined with `---`. The
//! channel's `manifestHash` is the SHA-256 of exactly those bytes.

mod alb;
mod amazon_vpc;
mod authentication;
mod calico;
mod cert_manager;
mod cilium;
mod cloud_aws;
mod cloud_gce;
mod cloud_hetzner;
mod cluster_autoscaler;
mod core;
mod dns;
mod ebs_csi;
mod external_dns;
mod helpers;
mod k8s;
mod karpenter;
mod kops_controller;
mod metrics_server;
mod networking;
mod npd;
mod nth;
mod nvidia;
mod piw;
mod snapshot;

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::cluster::ClusterContext;
use crate::error::Result;
use crate::files::ManagedFile;

/// kOps' label naming the addon an object belongs to.
const ADDON_LABEL: &str = "addon.kops.k8s.io/name";

/// When the channels tool rolls nodes after the addon changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RollingUpdate {
    /// `control-plane`.
    ControlPlane,
    /// `all`.
    All,
}

/// One addon of the bootstrap channel, before its manifest is built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Addon {
    /// Addon name (`coredns.addons.k8s.io`).
    pub(crate) name: &'static str,
    /// Manifest id (`k8s-1.12`; empty for addons without one).
    pub(crate) id: &'static str,
    /// Manifest path under `addons/` (`coredns.addons.k8s.io/k8s-1.12.yaml`).
    pub(crate) manifest: String,
    /// The channel selector (also stamped on every object as labels).
    selector: Vec<(&'static str, &'static str)>,
    needs_rolling_update: Option<RollingUpdate>,
    needs_pki: bool,
    /// Whether the channel lists prune directives for it.
    prune: bool,
    /// Whether the manifest is empty on purpose (dns-controller when no DNS is published).
    empty: bool,
}

impl Addon {
    fn new(name: &'static str, id: &'static str) -> Self {
        Addon {
            name,
            id,
            manifest: format!("{name}/{id}.yaml"),
            selector: vec![("k8s-addon", name)],
            needs_rolling_update: None,
            needs_pki: false,
            prune: false,
            empty: false,
        }
    }

    fn networking(name: &'static str, id: &'static str) -> Self {
        Addon {
            selector: vec![("role.kubernetes.io/networking", "1")],
            ..Addon::new(name, id)
        }
    }

    fn rolling(mut self, r: RollingUpdate) -> Self {
        self.needs_rolling_update = Some(r);
        self
    }

    fn pki(mut self, on: bool) -> Self {
        self.needs_pki = on;
        self
    }

    fn pruned(mut self) -> Self {
        self.prune = true;
        self
    }

    /// kOps' task key: `<name>` or `<name>-<id>`.
    fn key(&self) -> String {
        if self.id.is_empty() {
            self.name.to_owned()
        } else {
            format!("{}-{}", self.name, self.id)
        }
    }
}

/// kOps' `UseServiceAccountExternalPermissions`: pods get cloud roles of their own
/// (`spec.iam.useServiceAccountExternalPermissions`; IRSA on AWS).
fn irsa(ctx: &ClusterContext) -> bool {
    ctx.cluster
        .spec
        .iam
        .as_ref()
        .and_then(|i| i.use_service_account_external_permissions)
        == Some(true)
}

/// kOps' `ControlPlaneControllerReplicas`: two replicas of a controller when the
/// control plane has more than one instance group, else one.
fn control_plane_replicas(ctx: &ClusterContext) -> u32 {
    if ctx.groups.iter().filter(|g| g.is_control_plane()).count() > 1 {
        2
    } else {
        1
    }
}

/// kOps' `ProxyEnv`: the egress proxy as `http_proxy`/`https_proxy` and the excludes as
/// `no_proxy`/`NO_PROXY`, as environment variables sorted by name.
fn proxy_env(ctx: &ClusterContext) -> Vec<Value> {
    let mut vars = std::collections::BTreeMap::new();
    if let Some(p) = ctx.cluster.spec.networking.egress_proxy.as_ref() {
        let http = p.http_proxy.as_ref();
        if let Some(h) = http
            .and_then(|h| h.host.as_deref())
            .filter(|h| !h.is_empty())
        {
            let url = match http.and_then(|h| h.port).filter(|p| *p != 0) {
                Some(port) => format!("http://{h}:{port}"),
                None => format!("http://{h}"),
            };
            vars.insert("http_proxy", url.clone());
            vars.insert("https_proxy", url);
        }
        if let Some(x) = p.excludes.as_deref().filter(|x| !x.is_empty()) {
            vars.insert("no_proxy", x.to_owned());
            vars.insert("NO_PROXY", x.to_owned());
        }
    }
    vars.into_iter()
        .map(|(k, v)| json!({ "name": k, "value": v }))
        .collect()
}

fn enabled(b: Option<bool>) -> bool {
    b == Some(true)
}

/// The addons the bootstrap channel lists for this spec, in kOps' order.
pub(crate) fn addons(ctx: &ClusterContext) -> Vec<Addon> {
    let spec = &ctx.cluster.spec;
    let net = &spec.networking;
    let aws = spec.cloud_provider.aws.as_ref();
    let gce = spec.cloud_provider.gce.as_ref();
    let mut out = vec![
        Addon::new("kops-controller.addons.k8s.io", "k8s-1.16")
            .rolling(RollingUpdate::ControlPlane),
    ];

    let dns_provider = spec
        .kube_dns
        .as_ref()
        .and_then(|k| k.provider.as_deref())
        .unwrap_or("CoreDNS");
    if dns_provider == "KubeDNS" {
        out.push(Addon::new("kube-dns.addons.k8s.io", "k8s-1.12"));
    } else if dns_provider == "CoreDNS" {
        out.push(Addon::new("coredns.addons.k8s.io", "k8s-1.12"));
    }
    out.push(Addon::new("kubelet-api.rbac.addons.k8s.io", "k8s-1.9"));
    out.push(Addon {
        manifest: "limit-range.addons.k8s.io/v1.5.0.yaml".into(),
        ..Addon::new("limit-range.addons.k8s.io", "")
    });

    let external_dns = spec
        .external_dns
        .as_ref()
        .and_then(|e| e.provider.as_deref());
    let dns_controller = Addon::new("dns-controller.addons.k8s.io", "k8s-1.12");
    if !ctx.cluster.uses_none_dns() && matches!(external_dns, None | Some("dns-controller")) {
        out.push(dns_controller);
    } else {
        out.push(Addon {
            empty: true,
            ..dns_controller.pruned()
        });
    }
    if !ctx.cluster.uses_none_dns() && external_dns == Some("external-dns") {
        out.push(Addon::new("external-dns.addons.k8s.io", "k8s-1.19"));
    }
    let node_local_dns = spec
        .kube_dns
        .as_ref()
        .and_then(|k| k.node_local_dns.as_ref())
        .and_then(|n| n.enabled);
    if dns_provider == "CoreDNS" && enabled(node_local_dns) {
        out.push(Addon::new("nodelocaldns.addons.k8s.io", "k8s-1.12").rolling(RollingUpdate::All));
    }
    if enabled(spec.cluster_autoscaler.as_ref().and_then(|c| c.enabled)) {
        out.push(Addon::new("cluster-autoscaler.addons.k8s.io", "k8s-1.15"));
    }
    if let Some(ms) = spec.metrics_server.as_ref().filter(|m| enabled(m.enabled)) {
        out.push(Addon {
            selector: vec![("k8s-app", "metrics-server")],
            ..Addon::new("metrics-server.addons.k8s.io", "k8s-1.11").pki(!enabled(ms.insecure))
        });
    }
    if let Some(cm) = spec.cert_manager.as_ref()
        && enabled(cm.enabled)
        && cm.managed != Some(false)
    {
        out.push(Addon {
            selector: Vec::new(),
            ..Addon::new("certmanager.io", "k8s-1.16").pruned()
        });
    }
    if let Some(aws) = aws {
        let nth = aws
            .node_termination_handler
            .as_ref()
            .and_then(|n| n.enabled);
        if enabled(nth) {
            out.push(Addon::new("node-termination-handler.aws", "k8s-1.11").pruned());
        }
    }
    if enabled(spec.node_problem_detector.as_ref().and_then(|n| n.enabled)) {
        out.push(Addon::new("node-problem-detector.addons.k8s.io", "k8s-1.17").pruned());
    }
    let nvidia_on = |c: Option<&kops_api::v1alpha2::ContainerdConfig>| {
        enabled(
            c.and_then(|c| c.nvidia_gpu.as_ref())
                .and_then(|n| n.enabled),
        )
    };
    if nvidia_on(spec.containerd.as_ref())
        || ctx
            .groups
            .iter()
            .any(|ig| nvidia_on(ig.spec.containerd.as_ref()))
    {
        out.push(Addon::new("nvidia.addons.k8s.io", "k8s-1.16"));
    }
    if let Some(aws) = aws {
        if enabled(
            aws.load_balancer_controller
                .as_ref()
                .and_then(|l| l.enabled),
        ) {
            let id = if irsa(ctx) {
                "k8s-1.19-irsa"
            } else {
                "k8s-1.19"
            };
            out.push(
                Addon::new("aws-load-balancer-controller.addons.k8s.io", id)
                    .pki(true)
                    .pruned(),
            );
        }
        if enabled(aws.pod_identity_webhook.as_ref().and_then(|p| p.enabled)) {
            out.push(Addon::new("eks-pod-identity-webhook.addons.k8s.io", "k8s-1.16").pki(true));
        }
    }
    let manage_storage = spec
        .cloud_config
        .as_ref()
        .and_then(|c| c.manage_storage_classes);
    if enabled(manage_storage) {
        if aws.is_some() {
            out.push(Addon::new("storage-aws.addons.k8s.io", "v1.15.0"));
        }
        if gce.is_some() {
            out.push(Addon::new("storage-gce.addons.k8s.io", "v1.7.0"));
        }
    }
    if let Some(gce) = gce {
        if enabled(gce.pd_csi_driver.as_ref().and_then(|p| p.enabled)) {
            out.push(Addon::new("gcp-pd-csi-driver.addons.k8s.io", "k8s-1.23"));
        }
        out.push(Addon::new("gcp-cloud-controller.addons.k8s.io", "k8s-1.23").pruned());
    }
    if spec.cloud_provider.hetzner.is_some() {
        for name in [
            "hcloud-config.addons.k8s.io",
            "hcloud-cloud-controller.addons.k8s.io",
            "hcloud-csi-driver.addons.k8s.io",
        ] {
            out.push(Addon::new(name, "k8s-1.22"));
        }
    }
    if net.kopeio.is_some() {
        out.push(Addon::networking("networking.kope.io", "k8s-1.12").pruned());
    }
    if net.flannel.is_some() {
        out.push(Addon::networking("networking.flannel", "k8s-1.25").pruned());
    }
    if net.calico.is_some() {
        out.push(Addon::networking("networking.projectcalico.org", "k8s-1.25").pruned());
    }
    if net.kuberouter.is_some() {
        out.push(Addon::networking("networking.kuberouter", "k8s-1.12"));
    }
    if net.amazonvpc.is_some() {
        out.push(
            Addon::networking("networking.amazon-vpc-routed-eni", "k8s-1.16")
                .rolling(RollingUpdate::All),
        );
    }
    if net.kindnet.is_some() {
        out.push(Addon::networking("networking.kindnet", "k8s-1.32").rolling(RollingUpdate::All));
    }
    if let Some(cilium) = net.cilium.as_ref() {
        let hubble = enabled(cilium.hubble.as_ref().and_then(|h| h.enabled));
        out.push(Addon {
            manifest: "networking.cilium.io/k8s-1.16-v1.15.yaml".into(),
            ..Addon::networking("networking.cilium.io", "k8s-1.16")
                .rolling(RollingUpdate::All)
                .pki(hubble)
        });
    }
    if let Some(auth) = spec.authentication.as_ref() {
        let sel = vec![("role.kubernetes.io/authentication", "1")];
        if auth.kopeio.is_some() {
            out.push(Addon {
                selector: sel.clone(),
                ..Addon::new("authentication.kope.io", "k8s-1.12")
            });
        }
        if auth.aws.is_some() {
            out.push(Addon {
                selector: sel,
                ..Addon::new("authentication.aws", "k8s-1.12")
            });
        }
    }
    if let Some(aws) = aws {
        out.push(Addon::new("aws-cloud-controller.addons.k8s.io", "k8s-1.18"));
        if aws.ebs_csi_driver.as_ref().and_then(|e| e.managed) != Some(false) {
            out.push(Addon::new("aws-ebs-csi-driver.addons.k8s.io", "k8s-1.17"));
        }
    }
    if enabled(spec.snapshot_controller.as_ref().and_then(|s| s.enabled)) {
        out.push(Addon::new("snapshot-controller.addons.k8s.io", "k8s-1.20").pki(true));
    }
    if enabled(spec.karpenter.as_ref().and_then(|k| k.enabled)) {
        out.push(Addon::new("karpenter.sh", "k8s-1.19").pruned());
    }
    out
}

/// The objects kOps' template renders for one addon, or `None` when this crate does not
/// generate that addon yet.
fn objects(ctx: &ClusterContext, addon: &Addon) -> Result<Option<Vec<Value>>> {
    if addon.empty {
        return Ok(Some(Vec::new()));
    }
    Ok(Some(match addon.name {
        "kops-controller.addons.k8s.io" => kops_controller::objects(ctx)?,
        "coredns.addons.k8s.io" => dns::coredns(ctx)?,
        "dns-controller.addons.k8s.io" => dns::dns_controller(ctx)?,
        "node-termination-handler.aws" => nth::objects(ctx)?,
        "aws-ebs-csi-driver.addons.k8s.io" => ebs_csi::objects(ctx)?,
        "networking.kindnet" => networking::kindnet(ctx)?,
        "networking.kope.io" => networking::kopeio(),
        "networking.flannel" => networking::flannel(ctx)?,
        "networking.kuberouter" => networking::kuberouter(ctx)?,
        "networking.cilium.io" => cilium::objects(ctx)?,
        "networking.projectcalico.org" => calico::objects(ctx)?,
        "networking.amazon-vpc-routed-eni" => amazon_vpc::objects(ctx)?,
        "kubelet-api.rbac.addons.k8s.io" => core::kubelet_api_rbac(),
        "limit-range.addons.k8s.io" => core::limit_range(),
        "storage-aws.addons.k8s.io" => cloud_aws::storage_aws(ctx),
        "aws-cloud-controller.addons.k8s.io" => cloud_aws::cloud_controller(ctx)?,
        "certmanager.io" => cert_manager::objects(ctx)?,
        "aws-load-balancer-controller.addons.k8s.io" => alb::objects(ctx)?,
        "cluster-autoscaler.addons.k8s.io" => cluster_autoscaler::objects(ctx)?,
        "metrics-server.addons.k8s.io" => metrics_server::objects(ctx)?,
        "snapshot-controller.addons.k8s.io" => snapshot::objects(ctx)?,
        "node-problem-detector.addons.k8s.io" => npd::objects(ctx)?,
        "nvidia.addons.k8s.io" => nvidia::objects(ctx)?,
        "eks-pod-identity-webhook.addons.k8s.io" => piw::objects(ctx)?,
        "external-dns.addons.k8s.io" => external_dns::objects(ctx)?,
        "authentication.aws" => authentication::objects(ctx)?,
        "storage-gce.addons.k8s.io" => cloud_gce::storage_gce(ctx),
        "gcp-cloud-controller.addons.k8s.io" => cloud_gce::cloud_controller(ctx)?,
        "gcp-pd-csi-driver.addons.k8s.io" => cloud_gce::pd_csi_driver(ctx)?,
        "karpenter.sh" => karpenter::objects(ctx)?,
        "hcloud-config.addons.k8s.io" => cloud_hetzner::config(ctx)?,
        "hcloud-cloud-controller.addons.k8s.io" => cloud_hetzner::cloud_controller(ctx)?,
        "hcloud-csi-driver.addons.k8s.io" => cloud_hetzner::csi_driver(),
        _ => return Ok(None),
    }))
}

/// kOps' `addLabels`: the managed-by and addon labels and the selector on every object,
/// and `kops.k8s.io/managed-by` on the pod template of `apps/v1` Deployments and
/// DaemonSets.
fn add_labels(addon: &Addon, obj: &mut Value) {
    let is_workload = obj.get("apiVersion").and_then(Value::as_str) == Some("apps/v1")
        && matches!(
            obj.get("kind").and_then(Value::as_str),
            Some("Deployment" | "DaemonSet")
        );
    let Some(o) = obj.as_object_mut() else {
        return;
    };
    if let Some(labels) = labels_of(o.entry("metadata").or_insert_with(|| json!({}))) {
        labels.insert("app.kubernetes.io/managed-by".into(), "kops".into());
        labels.insert(ADDON_LABEL.into(), addon.name.into());
        for (k, v) in &addon.selector {
            labels.insert((*k).into(), (*v).into());
        }
    }
    if is_workload
        && let Some(tmeta) = o
            .get_mut("spec")
            .and_then(|s| s.get_mut("template"))
            .and_then(Value::as_object_mut)
            .map(|t| t.entry("metadata").or_insert_with(|| json!({})))
        && let Some(labels) = labels_of(tmeta)
    {
        labels.insert("kops.k8s.io/managed-by".into(), "kops".into());
    }
}

fn labels_of(meta: &mut Value) -> Option<&mut Map<String, Value>> {
    meta.as_object_mut()?
        .entry("labels")
        .or_insert_with(|| json!({}))
        .as_object_mut()
}

/// Calls `f` on every container image (containers, init containers, ephemeral
/// containers) of the pod templates and pods in `v`.
fn for_each_image(v: &mut Value, f: &mut impl FnMut(&mut String)) {
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                if matches!(
                    k.as_str(),
                    "containers" | "initContainers" | "ephemeralContainers"
                ) && let Value::Array(cs) = child
                {
                    for c in cs.iter_mut() {
                        if let Some(Value::String(img)) = c.get_mut("image") {
                            f(img);
                        }
                    }
                }
                for_each_image(child, f);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|c| for_each_image(c, f)),
        _ => {}
    }
}

/// Every container image of `v`, remapped through `assets`.
fn remap_images(ctx: &ClusterContext, v: &mut Value) {
    for_each_image(v, &mut |img| *img = crate::images::remap(ctx, img));
}

/// Every image the cluster's addons run, as pulled (remapped): kOps' image assets of the
/// addons.
pub(crate) fn images(ctx: &ClusterContext) -> Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    for addon in addons(ctx) {
        for mut o in build(ctx, addon)?.objects {
            for_each_image(&mut o, &mut |img| {
                out.insert(img.clone());
            });
        }
    }
    Ok(out)
}

/// One built addon: its channel entry and its manifest bytes.
struct Built {
    addon: Addon,
    manifest: String,
    objects: Vec<Value>,
}

/// An addon's service account that gets an IAM role of its own under IRSA: kOps' `Subject`
/// of each addon (`pkg/model/components/addonmanifests/*/iam.go`), one per addon the
/// bootstrap channel lists with a role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IrsaSubject {
    /// dns-controller, when the cluster publishes DNS records.
    DnsController,
    /// external-dns (`externalDns.provider: external-dns`).
    ExternalDns,
    /// The cluster autoscaler.
    ClusterAutoscaler,
    /// cert-manager, when it solves DNS-01 challenges in `certManager.hostedZoneIDs`.
    CertManager,
    /// The node-termination-handler, in either processing mode.
    NodeTerminationHandler,
    /// The AWS load balancer controller.
    LoadBalancerController,
    /// kube-router (it turns off the instances' source/destination check).
    KubeRouter,
    /// The AWS cloud controller manager.
    CloudControllerManager,
    /// The EBS CSI driver's controller.
    EbsCsiDriver,
    /// Karpenter.
    Karpenter,
}

impl IrsaSubject {
    /// The service account, as (namespace, name).
    pub(crate) fn service_account(self) -> (&'static str, &'static str) {
        let name = match self {
            IrsaSubject::DnsController => "dns-controller",
            IrsaSubject::ExternalDns => "external-dns",
            IrsaSubject::ClusterAutoscaler => "cluster-autoscaler",
            IrsaSubject::CertManager => "cert-manager",
            IrsaSubject::NodeTerminationHandler => "aws-node-termination-handler",
            IrsaSubject::LoadBalancerController => "aws-load-balancer-controller",
            IrsaSubject::KubeRouter => "kube-router",
            IrsaSubject::CloudControllerManager => "aws-cloud-controller-manager",
            IrsaSubject::EbsCsiDriver => "ebs-csi-controller-sa",
            IrsaSubject::Karpenter => "karpenter",
        };
        ("kube-system", name)
    }

    /// The subject an addon of the channel brings, if any.
    fn of(ctx: &ClusterContext, addon: &Addon) -> Option<IrsaSubject> {
        if addon.empty {
            return None;
        }
        Some(match addon.name {
            "dns-controller.addons.k8s.io" if !ctx.dns_none() => IrsaSubject::DnsController,
            "external-dns.addons.k8s.io" => IrsaSubject::ExternalDns,
            "cluster-autoscaler.addons.k8s.io" => IrsaSubject::ClusterAutoscaler,
            "certmanager.io"
                if ctx
                    .cluster
                    .spec
                    .cert_manager
                    .as_ref()
                    .and_then(|c| c.hosted_zone_ids.as_ref())
                    .is_some_and(|z| !z.is_empty()) =>
            {
                IrsaSubject::CertManager
            }
            "node-termination-handler.aws" => IrsaSubject::NodeTerminationHandler,
            "aws-load-balancer-controller.addons.k8s.io" => IrsaSubject::LoadBalancerController,
            "networking.kuberouter" => IrsaSubject::KubeRouter,
            "aws-cloud-controller.addons.k8s.io" => IrsaSubject::CloudControllerManager,
            "aws-ebs-csi-driver.addons.k8s.io" => IrsaSubject::EbsCsiDriver,
            "karpenter.sh" => IrsaSubject::Karpenter,
            _ => return None,
        })
    }
}

/// kOps' general IRSA rule: with `iam.useServiceAccountExternalPermissions` on AWS, every
/// addon the channel lists that has a subject gets a role for that subject's service
/// account (and its pods the web-identity token). The IAM model builds the roles from
/// this list, the manifest pipeline injects the tokens from it: the two cannot disagree.
pub(crate) fn irsa_subjects(ctx: &ClusterContext) -> Vec<IrsaSubject> {
    if !irsa(ctx) || ctx.cluster.spec.cloud_provider.aws.is_none() {
        return Vec::new();
    }
    addons(ctx)
        .iter()
        .filter_map(|a| IrsaSubject::of(ctx, a))
        .collect()
}

/// kOps' `AddServiceAccountRole` on AWS: the pod gets a projected web-identity token, and
/// every container the role ARN and the token path. kOps round-trips the pod spec
/// through its typed form, which drops null and omitted-when-empty fields.
fn add_service_account_role(ctx: &ClusterContext, pod: &mut Value, role_name: &str) {
    let (partition, account) = ctx.aws_account.clone().unwrap_or_default();
    let arn = format!("arn:{partition}:iam::{account}:role/{role_name}");
    let dir = "/var/run/secrets/amazonaws.com/";
    let Some(p) = pod.as_object_mut() else {
        return;
    };
    let omitted = |k: &str, v: &Value| {
        v.is_null()
            || (matches!(k, "hostNetwork" | "hostPID" | "hostIPC") && *v == Value::Bool(false))
    };
    p.retain(|k, v| !omitted(k, v));
    let volumes = p.entry("volumes").or_insert_with(|| json!([]));
    if let Some(v) = volumes.as_array_mut() {
        v.push(json!({ "name": "token-amazonaws-com", "projected": { "defaultMode": 420, "sources": [
            { "serviceAccountToken": { "audience": "amazonaws.com", "expirationSeconds": 86400, "path": "token" } } ] } }));
    }
    if let Some(cs) = p.get_mut("containers").and_then(Value::as_array_mut) {
        for c in cs {
            let Some(c) = c.as_object_mut() else { continue };
            c.retain(|_, v| !v.is_null());
            c.entry("resources").or_insert_with(|| json!({}));
            if let Some(m) = c
                .entry("volumeMounts")
                .or_insert_with(|| json!([]))
                .as_array_mut()
            {
                m.push(
                    json!({ "mountPath": dir, "name": "token-amazonaws-com", "readOnly": true }),
                );
            }
            if let Some(e) = c.entry("env").or_insert_with(|| json!([])).as_array_mut() {
                e.push(json!({ "name": "AWS_ROLE_ARN", "value": arn }));
                e.push(json!({ "name": "AWS_WEB_IDENTITY_TOKEN_FILE", "value": format!("{dir}token") }));
            }
        }
    }
    let sc = p.entry("securityContext").or_insert_with(|| json!({}));
    if let Some(sc) = sc.as_object_mut() {
        sc.entry("fsGroup").or_insert_with(|| json!(10001));
    }
}

fn inject_irsa(ctx: &ClusterContext, addon: &Addon, objects: &mut [Value]) {
    if !irsa(ctx) {
        return;
    }
    let accounts: Vec<(&str, &str)> = irsa_subjects(ctx)
        .into_iter()
        .filter(|&s| IrsaSubject::of(ctx, addon) == Some(s))
        .map(IrsaSubject::service_account)
        .collect();
    for o in objects.iter_mut() {
        let workload = o.get("apiVersion").and_then(Value::as_str) == Some("apps/v1")
            && matches!(
                o.get("kind").and_then(Value::as_str),
                Some("Deployment" | "DaemonSet")
            );
        if !workload {
            continue;
        }
        let ns = o
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let Some(pod) = o.pointer_mut("/spec/template/spec") else {
            continue;
        };
        let sa = pod
            .get("serviceAccountName")
            .or_else(|| pod.get("serviceAccount"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if let Some((sns, sname)) = accounts.iter().find(|(n, s)| *n == ns && *s == sa) {
            let role = crate::aws::naming::truncate(
                &format!("{sname}.{sns}.sa.{}", ctx.name()),
                64,
                false,
            );
            add_service_account_role(ctx, pod, &role);
        }
    }
}

fn build(ctx: &ClusterContext, addon: Addon) -> Result<Built> {
    let mut objects = objects(ctx, &addon)?.unwrap_or_default();
    let manifest = if addon.empty {
        String::new()
    } else {
        inject_irsa(ctx, &addon, &mut objects);
        for o in &mut objects {
            add_labels(&addon, o);
            remap_images(ctx, o);
        }
        let docs: Vec<String> = objects
            .iter()
            .map(kops_api::yaml::value_to_string)
            .collect();
        docs.join("\n---\n\n").trim().to_owned()
    };
    Ok(Built {
        addon,
        manifest,
        objects,
    })
}

/// kOps' prune directives: a fixed list of group kinds (plus Karpenter's own), each with
/// the namespaces the manifest puts such objects in and the kOps label selector.
fn prune_spec(b: &Built) -> Value {
    let mut kinds: Vec<(&str, &str)> = vec![
        ("", "ConfigMap"),
        ("", "Service"),
        ("", "ServiceAccount"),
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration",
        ),
        (
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration",
        ),
        ("apps", "DaemonSet"),
        ("apps", "Deployment"),
        ("apps", "StatefulSet"),
        ("policy", "PodDisruptionBudget"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
        ("rbac.authorization.k8s.io", "Role"),
        ("rbac.authorization.k8s.io", "RoleBinding"),
    ];
    if b.addon.name == "karpenter.sh" {
        kinds.push(("karpenter.k8s.aws", "EC2NodeClass"));
        kinds.push(("karpenter.sh", "NodePool"));
    }
    kinds.sort();
    let selector = format!(
        "{ADDON_LABEL}={},app.kubernetes.io/managed-by=kops",
        b.addon.name
    );
    let list: Vec<Value> = kinds
        .into_iter()
        .map(|(group, kind)| {
            let mut namespaces: Vec<&str> = b
                .objects
                .iter()
                .filter(|o| {
                    let api = o.get("apiVersion").and_then(Value::as_str).unwrap_or("");
                    let g = api.rsplit_once('/').map_or("", |(g, _)| g);
                    g == group && o.get("kind").and_then(Value::as_str) == Some(kind)
                })
                .filter_map(|o| o.pointer("/metadata/namespace").and_then(Value::as_str))
                .filter(|n| !n.is_empty())
                .collect();
            namespaces.sort_unstable();
            namespaces.dedup();
            let mut k = Map::new();
            if !group.is_empty() {
                k.insert("group".into(), group.into());
            }
            k.insert("kind".into(), kind.into());
            if !namespaces.is_empty() {
                k.insert("namespaces".into(), json!(namespaces));
            }
            k.insert("labelSelector".into(), selector.clone().into());
            Value::Object(k)
        })
        .collect();
    json!({ "kinds": list })
}

fn channel_entry(b: &Built) -> Value {
    let a = &b.addon;
    let mut m = Map::new();
    m.insert("name".into(), a.name.into());
    let sel: Map<String, Value> = a
        .selector
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Value::from(*v)))
        .collect();
    if !sel.is_empty() {
        m.insert("selector".into(), Value::Object(sel));
    }
    m.insert("manifest".into(), a.manifest.clone().into());
    m.insert(
        "manifestHash".into(),
        hex(&Sha256::digest(b.manifest.as_bytes())).into(),
    );
    if !a.id.is_empty() {
        m.insert("id".into(), a.id.into());
    }
    match a.needs_rolling_update {
        Some(RollingUpdate::ControlPlane) => {
            m.insert("needsRollingUpdate".into(), "control-plane".into());
        }
        Some(RollingUpdate::All) => {
            m.insert("needsRollingUpdate".into(), "all".into());
        }
        None => {}
    }
    if a.needs_pki {
        m.insert("needsPKI".into(), true.into());
    }
    if a.prune {
        m.insert("prune".into(), prune_spec(b));
    }
    Value::Object(m)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `object` is a Secret that carries data (Cilium's IPsec keys): the manifest
/// holding it is written to the store as the keysets are, never shown nor rendered.
fn holds_secret_data(object: &Value) -> bool {
    object["kind"] == "Secret"
        && ["data", "stringData"]
            .iter()
            .any(|k| object[*k].as_object().is_some_and(|m| !m.is_empty()))
}

/// The bootstrap channel and every addon manifest, as kOps' managed files
/// (`<cluster>-addons-bootstrap` at `addons/bootstrap-channel.yaml`, then
/// `<cluster>-addons-<name>[-<id>]` at `addons/<manifest>`).
pub(crate) fn managed_files(ctx: &ClusterContext) -> Result<Vec<ManagedFile>> {
    let built = addons(ctx)
        .into_iter()
        .map(|a| build(ctx, a))
        .collect::<Result<Vec<_>>>()?;
    let channel = json!({
        "kind": "Addons",
        "metadata": {"name": "bootstrap"},
        "spec": {"addons": built.iter().map(channel_entry).collect::<Vec<_>>()},
    });
    let cluster = ctx.name();
    let mut out = vec![ManagedFile {
        name: format!("{cluster}-addons-bootstrap"),
        location: "addons/bootstrap-channel.yaml".into(),
        contents: kops_api::yaml::value_to_string(&channel),
        sensitive: false,
    }];
    for b in built {
        let sensitive = b.objects.iter().any(holds_secret_data);
        out.push(ManagedFile {
            name: format!("{cluster}-addons-{}", b.addon.key()),
            location: format!("addons/{}", b.addon.manifest),
            contents: b.manifest,
            sensitive,
        });
    }
    Ok(out)
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
    for (k, v) in ctx.credential_env() {
        s.push_str(&format!(
            "    - name: {k}\n      value: {}\n",
            crate::files::yaml_scalar(v)
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
