//! The addon manifests apply as a set: for clusters with each addon family turned on,
//! every object is well-formed, every ServiceAccount and role a binding or pod names is
//! in the set (or is one Kubernetes ships), every image is pinned, and the bootstrap
//! channel lists every manifest with the SHA-256 of its exact bytes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};

use kops_api::defaults::{PopulateOptions, populate};
use kops_api::internal;
use kops_api::manifest::{self, Object};
use kops_model::aws::cloud::{AccountInfo, HostedZone, Image};
use kops_model::aws::terraform::{RenderOptions, render};
use kops_model::aws::{ModelContext, build_model};
use kops_model::gce::GceModelContext;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// A small AWS cluster whose `spec.networking` and extra spec lines are `networking` and
/// `extra`.
fn cluster_yaml(name: &str, networking: &str, extra: &str) -> String {
    format!(
        r#"apiVersion: kops.k8s.io/v1alpha2
kind: Cluster
metadata:
  name: {name}
spec:
  cloudProvider: aws
  configBase: s3://addons-state/{name}
  kubernetesVersion: v1.34.1
  api:
    dns: {{}}
  kubernetesApiAccess: [0.0.0.0/0]
  sshAccess: [0.0.0.0/0]
  networkCIDR: 10.40.0.0/16
  networking:
    {networking}
  etcdClusters:
  - name: main
    etcdMembers: [{{name: a, instanceGroup: cp}}]
  - name: events
    etcdMembers: [{{name: a, instanceGroup: cp}}]
  subnets:
  - {{name: eu-west-9a, zone: eu-west-9a, type: Public, cidr: 10.40.32.0/19}}
{extra}---
apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata: {{name: cp}}
spec: {{role: Master, image: ami-0000aaaa, machineType: m5.large, minSize: 1, maxSize: 1, subnets: [eu-west-9a]}}
---
apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata: {{name: nodes}}
spec: {{role: Node, image: ami-0000aaaa, machineType: m5.large, minSize: 1, maxSize: 2, subnets: [eu-west-9a]}}
"#
    )
}

/// The cluster and groups of a manifest, populated.
fn populated(yaml: &str) -> (internal::Cluster, Vec<internal::InstanceGroup>) {
    let mut cluster = None;
    let mut groups = Vec::new();
    for o in manifest::parse(yaml.as_bytes(), "cluster.yaml").unwrap() {
        match o {
            Object::Cluster(c) => cluster = Some(internal::Cluster::try_from(&c).unwrap()),
            Object::InstanceGroup(ig) => groups.push(internal::InstanceGroup::from(&ig)),
            _ => {}
        }
    }
    let (cluster, groups) =
        populate(&cluster.unwrap(), &groups, &PopulateOptions::default()).unwrap();
    (cluster, groups)
}

/// Renders the cluster and returns every data file of the Terraform output (by file
/// name under `data/`).
fn rendered_files(yaml: &str) -> (String, BTreeMap<String, String>) {
    let (cluster, groups) = populated(yaml);
    let name = cluster.name().to_owned();
    let image = Image::new("ami-0000aaaa", "addons-image", "111111111111")
        .with_root_device_name("/dev/sda1")
        .with_architecture("x86_64");
    let mut ctx = ModelContext::new(cluster, groups, "eu-west-9")
        .with_account(AccountInfo::new("111111111111", "aws", "eu-west-9"))
        .with_image("ami-0000aaaa", image)
        .with_dns_zone(HostedZone::new(
            "/hostedzone/ZADDONS",
            "example.org.",
            false,
        ));
    // The nodeup configs in the same render carry the cluster's CAs.
    ctx.cluster_context
        .ensure_keysets(std::time::SystemTime::now())
        .unwrap();
    let model = build_model(&ctx).unwrap();
    let files = render(&ctx, model, &RenderOptions::default())
        .unwrap()
        .files;
    let out = files
        .into_iter()
        .filter_map(|(k, v)| {
            let key = k.strip_prefix("data/")?.to_owned();
            Some((key, String::from_utf8(v).unwrap()))
        })
        .collect();
    (name, out)
}

/// Renders the cluster and returns the addon files (by location under `addons/`).
fn addon_files(yaml: &str) -> (String, BTreeMap<String, String>) {
    let (name, files) = rendered_files(yaml);
    let addons = addons_of(&name, &files);
    (name, addons)
}

/// The addon files among a render's data files, by location under `addons/`.
fn addons_of(name: &str, files: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let prefix = format!("aws_s3_object_{name}-addons-");
    files
        .iter()
        .filter_map(|(k, v)| {
            let key = k
                .strip_prefix(&prefix)?
                .trim_end_matches("_content")
                .to_owned();
            Some((key, v.clone()))
        })
        .collect()
}

fn s<'a>(v: &'a Value, path: &str) -> Option<&'a str> {
    v.pointer(path).and_then(Value::as_str)
}

/// Roles and users Kubernetes itself provides, which bindings may name without the
/// addon shipping them.
fn builtin_role(kind: &str, name: &str) -> bool {
    match kind {
        "ClusterRole" => {
            name.starts_with("system:")
                || matches!(name, "admin" | "edit" | "view" | "cluster-admin")
        }
        "Role" => name == "extension-apiserver-authentication-reader",
        _ => false,
    }
}

/// Roles kOps' GCE PD CSI manifest binds but does not ship (left from pod security
/// policies); a dangling binding grants nothing.
fn known_dangling_role(kind: &str, name: &str) -> bool {
    kind == "ClusterRole"
        && matches!(
            name,
            "csi-gce-pd-node-deploy" | "csi-gce-pd-controller-deploy"
        )
}

/// Service accounts Kubernetes itself creates: the in-tree cloud providers' (AWS, GCE)
/// and the cloud node controller's, which kOps' storage and cloud addons bind.
fn builtin_service_account(ns: &str, name: &str) -> bool {
    ns == "kube-system"
        && matches!(
            name,
            "aws-cloud-provider" | "cloud-provider" | "cloud-node-controller"
        )
}

/// Every check of the set; `label` names the case in failures.
fn check_set(label: &str, files: &BTreeMap<String, String>) {
    let channel = kops_api::yaml::from_str(&files["bootstrap"]).unwrap();
    let listed = channel
        .pointer("/spec/addons")
        .and_then(Value::as_array)
        .expect("the channel lists addons");
    assert!(!listed.is_empty(), "{label}: the channel lists no addon");
    let mut objects = Vec::new();
    for a in listed {
        let name = s(a, "/name").unwrap();
        let key = match s(a, "/id") {
            Some(id) => format!("{name}-{id}"),
            None => name.to_owned(),
        };
        let text = files
            .get(&key)
            .unwrap_or_else(|| panic!("{label}: the channel lists {key}, no file for it"));
        let hash: String = Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            s(a, "/manifestHash"),
            Some(hash.as_str()),
            "{label}: {key}: manifestHash is not the SHA-256 of the file"
        );
        assert!(
            s(a, "/manifest").is_some_and(|m| m.starts_with(&format!("{name}/"))),
            "{label}: {key}: manifest path"
        );
        for o in kops_api::yaml::from_str_multi(text).unwrap() {
            objects.push((key.clone(), o));
        }
    }
    assert!(!objects.is_empty(), "{label}: no objects");

    let mut have: BTreeSet<(String, String, String)> = BTreeSet::new();
    for (key, o) in &objects {
        let api = s(o, "/apiVersion")
            .unwrap_or_else(|| panic!("{label}: {key}: object without apiVersion"));
        let kind = s(o, "/kind").unwrap_or_else(|| panic!("{label}: {key}: object without kind"));
        let name = s(o, "/metadata/name")
            .unwrap_or_else(|| panic!("{label}: {key}: {kind} without a name"));
        assert!(!api.is_empty() && !kind.is_empty() && !name.is_empty());
        let ns = s(o, "/metadata/namespace").unwrap_or("").to_owned();
        let cluster_scoped = matches!(
            kind,
            "ClusterRole"
                | "ClusterRoleBinding"
                | "StorageClass"
                | "CSIDriver"
                | "Namespace"
                | "CustomResourceDefinition"
                | "PriorityClass"
                | "MutatingWebhookConfiguration"
                | "ValidatingWebhookConfiguration"
                | "APIService"
                | "IngressClass"
                | "GatewayClass"
                | "IngressClassParams"
                | "RuntimeClass"
                | "VolumeSnapshotClass"
                | "IAMIdentityMapping"
                | "EC2NodeClass"
                | "NodePool"
        );
        assert_eq!(
            ns.is_empty(),
            cluster_scoped,
            "{label}: {key}: {kind}/{name} namespace {ns:?}"
        );
        assert_eq!(
            s(o, "/metadata/labels/app.kubernetes.io~1managed-by"),
            Some("kops"),
            "{label}: {key}: {kind}/{name} lacks kOps' managed-by label"
        );
        assert!(
            have.insert((kind.to_owned(), ns.clone(), name.to_owned())),
            "{label}: {key}: {kind} {ns}/{name} appears twice"
        );
    }
    let exists = |kind: &str, ns: &str, name: &str| {
        have.contains(&(kind.to_owned(), ns.to_owned(), name.to_owned()))
    };

    for (key, o) in &objects {
        let kind = s(o, "/kind").unwrap();
        let ns = s(o, "/metadata/namespace").unwrap_or("");
        if matches!(kind, "ClusterRoleBinding" | "RoleBinding") {
            let rk = s(o, "/roleRef/kind").unwrap();
            let rn = s(o, "/roleRef/name").unwrap();
            let role_ns = if rk == "Role" { ns } else { "" };
            assert!(
                exists(rk, role_ns, rn) || builtin_role(rk, rn) || known_dangling_role(rk, rn),
                "{label}: {key}: binding {} names {rk} {rn}, not in the set",
                s(o, "/metadata/name").unwrap()
            );
            for sub in o.pointer("/subjects").and_then(Value::as_array).unwrap() {
                match s(sub, "/kind") {
                    Some("ServiceAccount") => {
                        let sn = s(sub, "/name").unwrap();
                        let sns = s(sub, "/namespace").unwrap_or(ns);
                        assert!(
                            exists("ServiceAccount", sns, sn) || builtin_service_account(sns, sn),
                            "{label}: {key}: subject ServiceAccount {sns}/{sn} not in the set"
                        );
                    }
                    Some("User") => {
                        // A service account named as its user.
                        if let Some(rest) = s(sub, "/name")
                            .unwrap()
                            .strip_prefix("system:serviceaccount:")
                        {
                            let (sns, sn) = rest.split_once(':').unwrap();
                            assert!(
                                exists("ServiceAccount", sns, sn),
                                "{label}: {key}: user {rest} not in the set"
                            );
                        }
                    }
                    _ => {}
                }
            }
        }
        let pod = match kind {
            "Deployment" | "DaemonSet" | "StatefulSet" | "Job" => o.pointer("/spec/template/spec"),
            "Pod" => o.pointer("/spec"),
            _ => None,
        };
        if let Some(pod) = pod {
            for field in ["/serviceAccountName", "/serviceAccount"] {
                if let Some(sa) = s(pod, field) {
                    assert!(
                        exists("ServiceAccount", ns, sa),
                        "{label}: {key}: pod uses ServiceAccount {ns}/{sa}, not in the set"
                    );
                }
            }
            for list in ["/containers", "/initContainers"] {
                for c in pod
                    .pointer(list)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let image = s(c, "/image")
                        .unwrap_or_else(|| panic!("{label}: {key}: container without image"));
                    let last = image.rsplit('/').next().unwrap();
                    let pinned = image.contains("@sha256:")
                        || last
                            .split_once(':')
                            .is_some_and(|(_, tag)| !tag.is_empty() && tag != "latest");
                    assert!(
                        pinned,
                        "{label}: {key}: image {image} is not pinned to a version"
                    );
                }
            }
            for m in pod
                .pointer("/containers")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                for vm in m
                    .pointer("/volumeMounts")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let v = s(vm, "/name").unwrap();
                    let declared = pod
                        .pointer("/volumes")
                        .and_then(Value::as_array)
                        .is_some_and(|vs| vs.iter().any(|x| s(x, "/name") == Some(v)));
                    assert!(declared, "{label}: {key}: mount of undeclared volume {v}");
                }
            }
            if let Some(cm) = pod.pointer("/volumes").and_then(Value::as_array) {
                for v in cm {
                    if let Some(name) = s(v, "/configMap/name") {
                        assert!(
                            exists("ConfigMap", ns, name),
                            "{label}: {key}: volume uses ConfigMap {ns}/{name}, not in the set"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn default_aws_addons_apply_as_a_set() {
    let (_, files) = addon_files(&cluster_yaml("addons-cni.example.org", "cni: {}", ""));
    for key in [
        "kops-controller.addons.k8s.io-k8s-1.16",
        "coredns.addons.k8s.io-k8s-1.12",
        "kubelet-api.rbac.addons.k8s.io-k8s-1.9",
        "limit-range.addons.k8s.io",
        "dns-controller.addons.k8s.io-k8s-1.12",
        "node-termination-handler.aws-k8s-1.11",
        "storage-aws.addons.k8s.io-v1.15.0",
        "aws-cloud-controller.addons.k8s.io-k8s-1.18",
        "aws-ebs-csi-driver.addons.k8s.io-k8s-1.17",
    ] {
        assert!(
            files.get(key).is_some_and(|f| !f.trim().is_empty()),
            "{key}: missing or empty"
        );
    }
    check_set("cni", &files);
}

#[test]
fn kops_controller_config_names_the_node_roles_and_the_region() {
    let (name, files) = addon_files(&cluster_yaml("addons-kc.example.org", "cni: {}", ""));
    let objs =
        kops_api::yaml::from_str_multi(&files["kops-controller.addons.k8s.io-k8s-1.16"]).unwrap();
    let cm = objs
        .iter()
        .find(|o| s(o, "/kind") == Some("ConfigMap"))
        .unwrap();
    let config: Value = serde_json::from_str(s(cm, "/data/config.yaml").unwrap()).unwrap();
    assert_eq!(config["clusterName"], name.as_str());
    assert_eq!(
        config["server"]["provider"]["aws"]["nodesRoles"],
        serde_json::json!([format!("nodes.{name}")])
    );
    assert_eq!(config["server"]["provider"]["aws"]["Region"], "eu-west-9");
}

#[test]
fn nth_reads_the_cluster_queue_in_the_account() {
    let (_, files) = addon_files(&cluster_yaml("addons-nth.example.org", "cni: {}", ""));
    let text = &files["node-termination-handler.aws-k8s-1.11"];
    assert!(
        text.contains(
            "https://sqs.eu-west-9.amazonaws.com/111111111111/addons-nth-example-org-nth"
        ),
        "{text}"
    );
}

#[test]
fn dns_controller_is_empty_and_pruned_without_dns() {
    let yaml = cluster_yaml(
        "addons-none.example.org",
        "cni: {}",
        "  topology:\n    dns: {type: None}\n",
    );
    let (_, files) = addon_files(&yaml);
    assert_eq!(files["dns-controller.addons.k8s.io-k8s-1.12"].trim(), "");
    let channel = kops_api::yaml::from_str(&files["bootstrap"]).unwrap();
    let dc = channel["spec"]["addons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "dns-controller.addons.k8s.io")
        .unwrap();
    assert_eq!(
        dc["manifestHash"],
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert!(
        dc["prune"]["kinds"]
            .as_array()
            .is_some_and(|k| k.len() == 13)
    );
    let coredns = &files["coredns.addons.k8s.io-k8s-1.12"];
    assert!(
        coredns.contains("hosts /rootfs/etc/hosts addons-none.example.org"),
        "{coredns}"
    );
}

#[test]
fn kindnet_applies_as_a_set() {
    let (_, files) = addon_files(&cluster_yaml(
        "addons-kindnet.example.org",
        "kindnet: {}",
        "",
    ));
    let text = &files["networking.kindnet-k8s-1.32"];
    assert!(text.contains("kind: DaemonSet"), "{text}");
    check_set("kindnet", &files);
}

#[test]
fn kopeio_applies_as_a_set() {
    let (_, files) = addon_files(&cluster_yaml("addons-kopeio.example.org", "kopeio: {}", ""));
    let text = &files["networking.kope.io-k8s-1.12"];
    assert!(text.contains("kopeio-networking-agent"), "{text}");
    check_set("kopeio", &files);
}

#[test]
fn flannel_applies_as_a_set() {
    let (_, files) = addon_files(&cluster_yaml(
        "addons-flannel.example.org",
        "flannel: {backend: vxlan}",
        "",
    ));
    let text = &files["networking.flannel-k8s-1.25"];
    assert!(text.contains("\"Type\": \"vxlan\""), "{text}");
    check_set("flannel", &files);
}

/// The optional addons' spec lines: everything the AWS generators cover turned on.
const OPTIONAL: &str = "  certManager: {enabled: true, defaultIssuer: letsencrypt, featureGates: {AdditionalCertificateOutputFormats: true}}
  awsLoadBalancerController: {enabled: true}
  clusterAutoscaler: {enabled: true, expander: priority, createPriorityExpanderConfig: true}
  metricsServer: {enabled: true, insecure: false}
  snapshotController: {enabled: true, installDefaultClass: true}
  nodeProblemDetector: {enabled: true}
  containerd: {nvidiaGPU: {enabled: true}}
  externalDns: {provider: external-dns}
";

/// The optional addons' files are there, non-empty, and listed in the channel.
fn assert_optional(files: &BTreeMap<String, String>, keys: &[&str]) {
    for key in keys {
        assert!(
            files.get(*key).is_some_and(|f| !f.trim().is_empty()),
            "{key}: missing or empty"
        );
    }
}

#[test]
fn optional_addons_apply_as_a_set() {
    let (name, files) = addon_files(&cluster_yaml("addons-opt.example.org", "cni: {}", OPTIONAL));
    assert_optional(
        &files,
        &[
            "certmanager.io-k8s-1.16",
            "aws-load-balancer-controller.addons.k8s.io-k8s-1.19",
            "cluster-autoscaler.addons.k8s.io-k8s-1.15",
            "metrics-server.addons.k8s.io-k8s-1.11",
            "snapshot-controller.addons.k8s.io-k8s-1.20",
            "node-problem-detector.addons.k8s.io-k8s-1.17",
            "nvidia.addons.k8s.io-k8s-1.16",
            "external-dns.addons.k8s.io-k8s-1.19",
        ],
    );
    check_set("optional", &files);
    let cm = &files["certmanager.io-k8s-1.16"];
    assert!(cm.contains("--default-issuer-name=letsencrypt"), "{cm}");
    assert!(
        cm.contains("--feature-gates=AdditionalCertificateOutputFormats=true"),
        "{cm}"
    );
    assert!(cm.contains("kind: CustomResourceDefinition"), "{cm}");
    let ca = &files["cluster-autoscaler.addons.k8s.io-k8s-1.15"];
    assert!(ca.contains(&format!("--nodes=1:2:nodes.{name}")), "{ca}");
    assert!(ca.contains("cluster-autoscaler-priority-expander"), "{ca}");
    let ms = &files["metrics-server.addons.k8s.io-k8s-1.11"];
    assert!(ms.contains("--tls-cert-file=/srv/tls.crt"), "{ms}");
    assert!(!ms.contains("--kubelet-insecure-tls"), "{ms}");
    let snap = &files["snapshot-controller.addons.k8s.io-k8s-1.20"];
    assert!(snap.contains("kind: VolumeSnapshotClass"), "{snap}");
    let alb = &files["aws-load-balancer-controller.addons.k8s.io-k8s-1.19"];
    assert!(alb.contains(&format!("--cluster-name={name}")), "{alb}");
    assert!(alb.contains("hostNetwork: true"), "{alb}");
    let channel = kops_api::yaml::from_str(&files["bootstrap"]).unwrap();
    let certmanager = channel["spec"]["addons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "certmanager.io")
        .unwrap();
    assert!(certmanager.get("selector").is_none(), "{certmanager}");
}

#[test]
fn optional_addons_with_irsa_get_their_roles() {
    let extra = format!(
        "{OPTIONAL}  iam: {{useServiceAccountExternalPermissions: true, serviceAccountExternalPermissions: [{{name: app, namespace: team-*, aws: {{policyARNs: [arn:aws:iam::aws:policy/ReadOnlyAccess]}}}}]}}
  serviceAccountIssuerDiscovery: {{discoveryStore: s3://addons-oidc/disc, enableAWSOIDCProvider: true}}
  podIdentityWebhook: {{enabled: true}}
"
    );
    let (name, files) = addon_files(&cluster_yaml("ai.example.org", "cni: {}", &extra));
    assert_optional(
        &files,
        &[
            "aws-load-balancer-controller.addons.k8s.io-k8s-1.19-irsa",
            "eks-pod-identity-webhook.addons.k8s.io-k8s-1.16",
        ],
    );
    check_set("optional-irsa", &files);
    // kOps keeps external-dns on the control plane's host network even with IRSA.
    for (key, sa, moves_off_host) in [
        (
            "aws-load-balancer-controller.addons.k8s.io-k8s-1.19-irsa",
            "aws-load-balancer-controller",
            true,
        ),
        (
            "cluster-autoscaler.addons.k8s.io-k8s-1.15",
            "cluster-autoscaler",
            true,
        ),
        ("external-dns.addons.k8s.io-k8s-1.19", "external-dns", false),
    ] {
        let text = &files[key];
        let arn = format!("arn:aws:iam::111111111111:role/{sa}.kube-system.sa.{name}");
        assert!(text.contains(&arn), "{key}: no {arn}\n{text}");
        assert_eq!(
            text.contains("hostNetwork: true"),
            !moves_off_host,
            "{key}: host network\n{text}"
        );
    }
    let piw = &files["eks-pod-identity-webhook.addons.k8s.io-k8s-1.16"];
    assert!(
        piw.contains(&format!("role/app.team-wildcard.sa.{name}")),
        "{piw}"
    );
}

#[test]
fn aws_authenticator_applies_as_a_set_with_its_mappings() {
    let extra = "  authentication:
    aws:
      backendMode: CRD
      identityMappings:
      - {arn: \"arn:aws:iam::111111111111:role/dev\", username: dev, groups: [devs]}
";
    let (name, files) = addon_files(&cluster_yaml("addons-auth.example.org", "cni: {}", extra));
    let text = &files["authentication.aws-k8s-1.12"];
    assert!(text.contains(&format!("--cluster-id={name}")), "{text}");
    assert!(text.contains("--backend-mode=CRD"), "{text}");
    assert!(text.contains("name: iam-identity-mapping-0"), "{text}");
    assert!(!text.contains("--config="), "{text}");
    check_set("authentication", &files);
}

#[test]
fn cilium_applies_as_a_set() {
    let (_, files) = addon_files(&cluster_yaml("addons-cilium.example.org", "cilium: {}", ""));
    let text = &files["networking.cilium.io-k8s-1.16"];
    assert!(
        text.contains("image: quay.io/cilium/cilium:v1.18.12"),
        "{text}"
    );
    assert!(text.contains("routing-mode: tunnel"), "{text}");
    check_set("cilium", &files);
}

#[test]
fn cilium_eni_with_metrics_applies_as_a_set() {
    let (_, files) = addon_files(&cluster_yaml(
        "addons-cilium-eni.example.org",
        "cilium: {ipam: eni, enableNodePort: true, enablePrometheusMetrics: true, debug: true}",
        "",
    ));
    let text = &files["networking.cilium.io-k8s-1.16"];
    for want in [
        "ipam: eni",
        "routing-mode: native",
        "kube-proxy-replacement: \"true\"",
        "prometheus-serve-addr: :9090",
        "name: cilium-monitor",
        "--eni-tags=KubernetesCluster=addons-cilium-eni.example.org",
    ] {
        assert!(text.contains(want), "{want} missing from {text}");
    }
    check_set("cilium-eni", &files);
}

#[test]
fn calico_applies_as_a_set() {
    let (_, files) = addon_files(&cluster_yaml("addons-calico.example.org", "calico: {}", ""));
    let text = &files["networking.projectcalico.org-k8s-1.25"];
    assert!(
        text.contains("image: docker.io/calico/node:v3.31.6"),
        "{text}"
    );
    assert!(
        text.contains("name: felixconfigurations.crd.projectcalico.org"),
        "{text}"
    );
    assert!(text.contains("calico_backend: bird"), "{text}");
    check_set("calico", &files);
}

#[test]
fn calico_with_typha_and_metrics_applies_as_a_set() {
    let (_, files) = addon_files(&cluster_yaml(
        "addons-calico-typha.example.org",
        "calico: {typhaReplicas: 2, typhaPrometheusMetricsEnabled: true, prometheusMetricsEnabled: true, bpfEnabled: true}",
        "",
    ));
    let text = &files["networking.projectcalico.org-k8s-1.25"];
    for want in [
        "name: calico-typha",
        "typha_service_name: calico-typha",
        "name: kubernetes-services-endpoint",
        "containerPort: 9093",
        "containerPort: 9091",
    ] {
        assert!(text.contains(want), "{want} missing from {text}");
    }
    check_set("calico-typha", &files);
}

#[test]
fn amazon_vpc_applies_as_a_set() {
    let (_, files) = addon_files(&cluster_yaml(
        "addons-vpc.example.org",
        "amazonvpc: {env: [{name: ANNOTATE_POD_IP, value: \"true\"}]}",
        "",
    ));
    let text = &files["networking.amazon-vpc-routed-eni-k8s-1.16"];
    for want in [
        "amazon-k8s-cni:v1.23.0",
        "name: eniconfigs.crd.k8s.amazonaws.com",
        "name: ANNOTATE_POD_IP",
        r#"value: '{"KubernetesCluster":"addons-vpc.example.org","kubernetes.io/cluster/addons-vpc.example.org":"owned"}'"#,
    ] {
        assert!(text.contains(want), "{want} missing from {text}");
    }
    let ds = text
        .split("\n---\n")
        .find(|d| d.contains("kind: ClusterRole\n"))
        .unwrap();
    assert!(
        ds.contains("- patch"),
        "ANNOTATE_POD_IP lets aws-node patch pods: {ds}"
    );
    check_set("amazon-vpc", &files);
}

/// A small GCE cluster with the PD CSI driver on.
fn gce_cluster_yaml(name: &str) -> String {
    format!(
        r#"apiVersion: kops.k8s.io/v1alpha2
kind: Cluster
metadata:
  name: {name}
spec:
  api:
    loadBalancer: {{type: Public}}
  cloudProvider: gce
  cloudConfig:
    gcpPDCSIDriver: {{enabled: true}}
  configBase: memfs://tests/{name}
  etcdClusters:
  - name: main
    etcdMembers: [{{name: a, instanceGroup: cp}}]
  - name: events
    etcdMembers: [{{name: a, instanceGroup: cp}}]
  iam: {{legacy: false}}
  kubernetesApiAccess: [0.0.0.0/0]
  kubernetesVersion: v1.32.0
  networking:
    cilium: {{}}
  nonMasqueradeCIDR: 100.64.0.0/10
  project: testproject
  sshAccess: [0.0.0.0/0]
  subnets:
  - {{name: us-test1, region: us-test1, type: Public}}
  topology:
    dns: {{type: Public}}
---
apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata: {{name: cp}}
spec: {{role: Master, image: ubuntu-os-cloud/ubuntu-2404, machineType: e2-medium, minSize: 1, maxSize: 1, subnets: [us-test1], zones: [us-test1-a]}}
---
apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata: {{name: nodes}}
spec: {{role: Node, image: ubuntu-os-cloud/ubuntu-2404, machineType: e2-medium, minSize: 1, maxSize: 2, subnets: [us-test1], zones: [us-test1-a]}}
"#
    )
}

#[test]
fn gce_addons_apply_as_a_set() {
    let yaml = gce_cluster_yaml("addons-gce.example.org");
    let (cluster, groups) = populated(&yaml);
    let name = cluster.name().to_owned();
    let mut cc = kops_model::ClusterContext::new(cluster, groups, "us-test1");
    cc.ensure_keysets(std::time::SystemTime::now()).unwrap();
    let ctx = GceModelContext::new(cc).unwrap();
    let out = kops_model::gce::render_terraform(&ctx, &Default::default()).unwrap();
    let prefix = format!("data/aws_s3_object_{name}-addons-");
    let files: BTreeMap<String, String> = out
        .files
        .into_iter()
        .filter(|(k, _)| k.starts_with(&prefix))
        .map(|(k, v)| {
            let key = k
                .trim_start_matches(&prefix)
                .trim_end_matches("_content")
                .to_owned();
            (key, String::from_utf8(v).unwrap())
        })
        .collect();
    for (key, want) in [
        (
            "gcp-cloud-controller.addons.k8s.io-k8s-1.23",
            "--cloud-provider=gce",
        ),
        (
            "gcp-pd-csi-driver.addons.k8s.io-k8s-1.23",
            "gcp-compute-persistent-disk-csi-driver:v",
        ),
        ("storage-gce.addons.k8s.io-v1.7.0", "kubernetes.io/gce-pd"),
        ("networking.cilium.io-k8s-1.16", "quay.io/cilium/operator:"),
    ] {
        let text = files
            .get(key)
            .unwrap_or_else(|| panic!("no {key} in {:?}", files.keys()));
        assert!(text.contains(want), "{key}: {want} missing from {text}");
        assert!(!text.contains("kind: List"), "{key} is a placeholder");
    }
    check_set("gce", &files);
}

/// kOps' GCE branches of two shared builders: cluster-autoscaler gets one node group per
/// zonal managed instance group (sizes split across the zones; a zone whose share of the
/// maximum is zero left out), and etcd-manager finds its disks by their GCE labels.
#[test]
fn gce_autoscaler_groups_are_zonal_migs_and_etcd_finds_gce_disks() {
    let yaml = gce_cluster_yaml("ca-gce.example.org")
        .replace(
            "  cloudProvider: gce\n",
            "  cloudProvider: gce\n  clusterAutoscaler: {enabled: true}\n",
        )
        .replace(
            "minSize: 1, maxSize: 2, subnets: [us-test1], zones: [us-test1-a]",
            "minSize: 1, maxSize: 2, subnets: [us-test1], zones: [us-test1-a, us-test1-b, us-test1-c]",
        );
    let (cluster, groups) = populated(&yaml);
    let mut cc = kops_model::ClusterContext::new(cluster, groups, "us-test1");
    cc.ensure_keysets(std::time::SystemTime::now()).unwrap();
    let ctx = GceModelContext::new(cc).unwrap();
    let out = kops_model::gce::render_terraform(&ctx, &Default::default()).unwrap();
    let file = |part: &str| {
        out.files
            .iter()
            .find(|(k, _)| k.contains(part))
            .map(|(_, v)| String::from_utf8(v.clone()).unwrap())
            .unwrap_or_else(|| panic!("no {part} file"))
    };
    let ca = file("cluster-autoscaler.addons.k8s.io");
    let nodes: Vec<&str> = ca
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("- --nodes="))
        .collect();
    let mig = |z: &str| {
        format!(
            "https://www.googleapis.com/compute/v1/projects/testproject/zones/us-test1-{z}/instanceGroups/{z}-nodes-ca-gce-example-org"
        )
    };
    assert_eq!(
        nodes,
        [
            format!("- --nodes=1:1:{}", mig("a")),
            format!("- --nodes=0:1:{}", mig("b")),
        ]
    );
    let etcd = file("manifests-etcdmanager-main-cp");
    for flag in [
        "--volume-provider=gce",
        "--volume-name-tag=k8s-io-etcd-main",
        "--volume-tag=k8s-io-cluster-name=ca-gce-example-org",
        "--volume-tag=k8s-io-etcd-main",
        "--volume-tag=k8s-io-role-master=master",
    ] {
        assert!(etcd.contains(flag), "{flag} missing from {etcd}");
    }
    assert!(!etcd.contains("--volume-tag=k8s.io/"), "{etcd}");
}

#[test]
fn kuberouter_applies_as_a_set() {
    let (_, files) = addon_files(&cluster_yaml(
        "addons-kuberouter.example.org",
        "kuberouter: {useNFTablesForNetpol: true}",
        "",
    ));
    let text = &files["networking.kuberouter-k8s-1.12"];
    for want in [
        "image: docker.io/cloudnativelabs/kube-router:v2.11.1",
        "--service-cluster-ip-range=\"100.64.0.0/13\"",
        "--use-nftables-for-netpol=true",
    ] {
        assert!(text.contains(want), "{want} missing from {text}");
    }
    check_set("kuberouter", &files);
}

/// Karpenter groups beside the cluster's own: one on the resolved image with an
/// encrypted gp3 root volume, one spot group on an Ubuntu image name with mixed types,
/// labels and a taint.
const KARPENTER_GROUPS: &str = "---
apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata: {name: kp-a}
spec: {role: Node, manager: Karpenter, image: ami-0000aaaa, machineType: m5.large, minSize: 2, maxSize: 5, rootVolumeType: gp3, rootVolumeIops: 1000, rootVolumeEncryption: true, rootVolumeEncryptionKey: arn:aws:kms:eu-west-9:111111111111:key/k1, subnets: [eu-west-9a], kubelet: {maxPods: 40}}
---
apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata: {name: kp-b}
spec: {role: Node, manager: Karpenter, image: ubuntu/images/hvm-ssd/ubuntu-x, machineType: m5.xlarge, maxPrice: \"0.2\", maxSize: 7, subnets: [eu-west-9a], nodeLabels: {team: web, karpenter.sh/nodepool: ignored}, taints: [dedicated=web:NoSchedule], mixedInstancesPolicy: {instances: [m5.xlarge, c5.xlarge]}}
";

#[test]
fn karpenter_applies_as_a_set() {
    let extra = "  karpenter: {enabled: true, featureGates: StaticCapacity=true}
  iam: {useServiceAccountExternalPermissions: true}
  serviceAccountIssuerDiscovery: {discoveryStore: s3://addons-oidc/disc, enableAWSOIDCProvider: true}
";
    let yaml = format!(
        "{}{KARPENTER_GROUPS}",
        cluster_yaml("addons-kp.example.org", "cni: {}", extra)
    );
    let (name, all) = rendered_files(&yaml);
    let files = addons_of(&name, &all);
    let key = "karpenter.sh-k8s-1.19";
    assert_optional(&files, &[key]);
    check_set("karpenter", &files);

    let objs = kops_api::yaml::from_str_multi(&files[key]).unwrap();
    let find = |kind: &str, n: &str| {
        objs.iter()
            .find(|o| s(o, "/kind") == Some(kind) && s(o, "/metadata/name") == Some(n))
            .unwrap_or_else(|| panic!("no {kind} {n}"))
    };
    let crds = objs
        .iter()
        .filter(|o| s(o, "/kind") == Some("CustomResourceDefinition"))
        .count();
    assert_eq!(crds, 4);
    // Every group Karpenter manages gets a node class and a pool, and only those.
    let classes: Vec<_> = objs
        .iter()
        .filter(|o| s(o, "/kind") == Some("EC2NodeClass"))
        .filter_map(|o| s(o, "/metadata/name"))
        .collect();
    assert_eq!(classes, ["kp-a", "kp-b"]);
    assert_eq!(
        objs.iter()
            .filter(|o| s(o, "/kind") == Some("NodePool"))
            .count(),
        2
    );

    let deployment = find("Deployment", "karpenter");
    let text = serde_json::to_string(deployment).unwrap();
    assert!(
        text.contains(&format!(
            "arn:aws:iam::111111111111:role/karpenter.kube-system.sa.{name}"
        )),
        "{text}"
    );
    assert!(text.contains("StaticCapacity=true"), "{text}");
    assert!(
        text.contains(&format!("https://api.internal.{name}")),
        "{text}"
    );

    for g in ["kp-a", "kp-b"] {
        let class = find("EC2NodeClass", g);
        let script = &all[&format!("aws_s3_object_nodeupscript-{g}_content")];
        assert_eq!(
            s(class, "/spec/userData"),
            Some(script.trim_end()),
            "{g}: the node class runs the group's nodeup script"
        );
        assert_eq!(
            s(class, "/spec/instanceProfile"),
            Some(&*format!("nodes.{name}"))
        );
        assert_eq!(
            class.pointer(&format!(
                "/spec/subnetSelectorTerms/0/tags/kops.k8s.io~1instance-group~1{g}"
            )),
            Some(&Value::from("true"))
        );
        assert!(
            class
                .pointer(&format!("/spec/tags/kubernetes.io~1cluster~1{name}"))
                .is_none(),
            "{g}: Karpenter refuses the cluster ownership tag"
        );
    }

    let a = find("EC2NodeClass", "kp-a");
    let ebs = a.pointer("/spec/blockDeviceMappings/0").unwrap();
    assert_eq!(
        s(ebs, "/deviceName"),
        Some("/dev/sda1"),
        "the image's root device"
    );
    assert_eq!(
        ebs.pointer("/ebs/iops"),
        Some(&Value::from(3000)),
        "gp3 minimum"
    );
    assert_eq!(
        s(ebs, "/ebs/kmsKeyID"),
        Some("arn:aws:kms:eu-west-9:111111111111:key/k1")
    );
    assert_eq!(a.pointer("/spec/kubelet/maxPods"), Some(&Value::from(40)));
    assert_eq!(
        a.pointer("/spec/amiSelectorTerms/0/id"),
        Some(&Value::from("ami-0000aaaa"))
    );
    let pa = find("NodePool", "kp-a");
    assert_eq!(pa.pointer("/spec/replicas"), Some(&Value::from(2)));
    assert_eq!(s(pa, "/spec/limits/nodes"), Some("5"));

    let b = find("EC2NodeClass", "kp-b");
    assert_eq!(
        b.pointer("/spec/amiSelectorTerms/0"),
        Some(&serde_json::json!({"name": "images/hvm-ssd/ubuntu-x", "owner": "099720109477"}))
    );
    let pb = find("NodePool", "kp-b");
    assert!(
        pb.pointer("/spec/replicas").is_none(),
        "no minimum, no static replicas"
    );
    let reqs = pb.pointer("/spec/template/spec/requirements").unwrap();
    assert_eq!(
        reqs[1],
        serde_json::json!({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["c5.xlarge", "m5.xlarge"]})
    );
    assert_eq!(reqs[2]["values"], serde_json::json!(["spot"]));
    assert_eq!(
        pb.pointer("/spec/template/spec/taints/0"),
        Some(&serde_json::json!({"effect": "NoSchedule", "key": "dedicated", "value": "web"}))
    );
    let labels = pb.pointer("/spec/template/metadata/labels").unwrap();
    assert_eq!(labels["team"], "web");
    assert_eq!(labels["node-role.kubernetes.io/node"], "");
    assert!(labels.get("karpenter.sh/nodepool").is_none(), "{labels}");

    // The controller's role: scoped launches, passing the node role, the key through EC2.
    let policy: Value = serde_json::from_str(
        &all[&format!("aws_iam_role_policy_karpenter.kube-system.sa.{name}_policy")],
    )
    .unwrap();
    let statements = policy["Statement"].as_array().unwrap();
    assert!(statements.iter().any(|st| st["Action"] == "iam:PassRole"
        && st["Resource"] == format!("arn:aws:iam::*:role/nodes.{name}")));
    assert!(
        statements
            .iter()
            .any(|st| st["Action"] == "kms:CreateGrant")
    );
    assert!(statements.iter().any(|st| st["Action"]
        == serde_json::json!(["ec2:DeleteLaunchTemplate", "ec2:TerminateInstances"])
        && st["Condition"]["StringEquals"]["aws:ResourceTag/KubernetesCluster"] == name.as_str()));
}

/// The outcome of [`on_the_mock`]: the cluster name, the roles on the mock after apply,
/// the Terraform main file and the addon files of the Terraform render.
struct OnTheMock {
    name: String,
    roles: BTreeSet<String>,
    terraform: String,
    files: BTreeMap<String, String>,
    /// The addon files the apply wrote to the state store, keyed as `files`.
    stored: BTreeMap<String, String>,
    /// The first plan as text.
    plan: String,
    /// Every file of the Terraform render, as text.
    rendered: String,
}

/// Plans the cluster of `yaml` (built by [`cluster_yaml`]) on a new mock cloud, applies
/// the plan, checks the next plan is empty, and renders Terraform; its addon manifests
/// must apply as a set.
async fn on_the_mock(label: &str, yaml: &str) -> OnTheMock {
    Box::pin(on_the_mock_with(label, yaml, &[])).await
}

/// [`on_the_mock`] with `stored` (paths under the cluster's config base, and their
/// bytes) in the state store before the plan.
async fn on_the_mock_with(label: &str, yaml: &str, stored: &[(&str, Vec<u8>)]) -> OnTheMock {
    use kops_model::aws::cloud::{AwsCloud, ListQuery, ResourceType};
    use kops_model::aws::{ApplyOptions, DiscoverOptions, UpdateCluster, UpdateOptions, discover};
    use kops_statestore::{MemoryStore, Registry, Store, SystemClock};
    use std::sync::Arc;

    let mut cluster = None;
    let mut groups = Vec::new();
    for o in manifest::parse(yaml.as_bytes(), "cluster.yaml").unwrap() {
        match o {
            Object::Cluster(c) => cluster = Some(c),
            Object::InstanceGroup(ig) => groups.push(ig),
            _ => {}
        }
    }
    let cluster = cluster.unwrap();
    let name = cluster.metadata.name.clone().unwrap_or_default();
    let cloud = kops_mock::fixture::Fixture::parse(
        "aws:\n  region: eu-west-9\n  zones: [eu-west-9a]\n  route53:\n    hostedZones:\n    - {id: /hostedzone/ZADDONS, name: example.org., private: false}\n  ec2:\n    images:\n    - {imageId: ami-0000aaaa, name: addons-image, ownerId: '111111111111', rootDeviceName: /dev/sda1, architecture: x86_64}\n",
        label,
    )
    .unwrap()
    .build()
    .unwrap();
    // The IRSA discovery documents' bucket.
    cloud.create_bucket("addons-oidc").unwrap();
    let store = Arc::new(MemoryStore::new());
    for (path, bytes) in stored {
        store
            .put(
                &format!("{name}/{path}"),
                bytes.clone().into(),
                kops_statestore::PutOptions::default(),
            )
            .await
            .unwrap();
    }
    let opts = DiscoverOptions::default().with_state_store(store.clone(), "s3://addons-state");
    let ctx = discover(&cloud, &cluster, &groups, &opts).await.unwrap();
    let update = UpdateCluster::new(
        ctx,
        UpdateOptions::default()
            .with_lock_holder(label)
            .with_unreadable_config_base(true),
    )
    .unwrap();
    let api: &dyn AwsCloud = &cloud;
    let plan = Box::pin(update.plan(api)).await.unwrap();
    let registry = Registry::new(store.clone() as Arc<dyn Store>, Arc::new(SystemClock));
    Box::pin(update.apply(api, &registry, &plan, ApplyOptions::default()))
        .await
        .unwrap_or_else(|e| panic!("{label}: apply on the mock: {e:?}"));
    let again = Box::pin(update.plan(api)).await.unwrap();
    assert!(
        !again.plan.has_changes(),
        "{label}: changes after apply:\n{}",
        again.plan.render_text()
    );
    let roles = api
        .list(&ListQuery::new(ResourceType::IamRole))
        .await
        .unwrap()
        .into_iter()
        .filter_map(|r| r.name.clone())
        .collect();
    let tf = update.render_terraform().await.unwrap();
    let terraform = String::from_utf8_lossy(&tf.files["kubernetes.tf"]).into_owned();
    let rendered = tf
        .files
        .values()
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect::<Vec<_>>()
        .join("\n");
    let data: BTreeMap<String, String> = tf
        .files
        .iter()
        .filter_map(|(k, v)| {
            let key = k.strip_prefix("data/")?.to_owned();
            Some((key, String::from_utf8(v.clone()).unwrap()))
        })
        .collect();
    let files = addons_of(&name, &data);
    // What the cluster reads: the channel and the manifests it names, from the store.
    let read = |path: String| {
        let store = store.clone();
        async move {
            let got = store
                .get(&path)
                .await
                .unwrap_or_else(|e| panic!("{path}: {e}"));
            String::from_utf8(got.data.to_vec()).unwrap()
        }
    };
    let channel = read(format!("{name}/addons/bootstrap-channel.yaml")).await;
    let mut stored = BTreeMap::from([("bootstrap".to_owned(), channel.clone())]);
    let channel = kops_api::yaml::from_str(&channel).unwrap();
    for a in channel
        .pointer("/spec/addons")
        .and_then(Value::as_array)
        .unwrap()
    {
        let key = match s(a, "/id") {
            Some(id) => format!("{}-{id}", s(a, "/name").unwrap()),
            None => s(a, "/name").unwrap().to_owned(),
        };
        let text = read(format!("{name}/addons/{}", s(a, "/manifest").unwrap())).await;
        stored.insert(key, text);
    }
    check_set(label, &stored);
    for (key, text) in &files {
        assert_eq!(
            stored.get(key),
            Some(text),
            "{label}: {key}: Terraform and the store differ"
        );
    }
    OnTheMock {
        name,
        roles,
        terraform,
        files,
        stored,
        plan: plan.plan.render_text(),
        rendered,
    }
}

/// kOps' IRSA rule follows the addons: external-dns (not dns-controller) and the
/// node-termination-handler in IMDS mode get their roles and policies, the roles exist on
/// the mock after apply, Terraform has them, and the pods carry the roles' tokens.
#[tokio::test]
async fn irsa_roles_follow_the_addons_that_run() {
    let extra = "  externalDns: {provider: external-dns}
  nodeTerminationHandler: {enabled: true, enableSQSTerminationDraining: false}
  iam: {useServiceAccountExternalPermissions: true, permissionsBoundary: arn:aws:iam::111111111111:policy/boundary}
  serviceAccountIssuerDiscovery: {discoveryStore: s3://addons-oidc/disc, enableAWSOIDCProvider: true}
";
    let yaml = cluster_yaml("irsa.example.org", "cni: {}", extra);
    let m = on_the_mock("irsa-rule", &yaml).await;
    let name = &m.name;
    for sa in [
        "external-dns",
        "aws-node-termination-handler",
        "aws-cloud-controller-manager",
        "ebs-csi-controller-sa",
    ] {
        let role = format!("{sa}.kube-system.sa.{name}");
        assert!(
            m.roles.contains(&role),
            "no role {role} on the mock: {:?}",
            m.roles
        );
        let tf_role = format!("resource \"aws_iam_role\" \"{}\"", role.replace('.', "-"));
        assert!(m.terraform.contains(&tf_role), "no {tf_role} in Terraform");
        assert!(
            m.terraform.contains(&format!(
                "resource \"aws_iam_role_policy\" \"{}\"",
                role.replace('.', "-")
            )),
            "no policy of {role} in Terraform"
        );
    }
    let dns_role = format!("dns-controller.kube-system.sa.{name}");
    assert!(
        !m.roles.contains(&dns_role),
        "{dns_role} made for external-dns"
    );
    assert!(
        m.terraform
            .contains("permissions_boundary = \"arn:aws:iam::111111111111:policy/boundary\"")
    );
    for (key, sa) in [
        ("external-dns.addons.k8s.io-k8s-1.19", "external-dns"),
        (
            "node-termination-handler.aws-k8s-1.11",
            "aws-node-termination-handler",
        ),
    ] {
        let arn = format!(":role/{sa}.kube-system.sa.{name}");
        assert!(
            m.files[key].contains(&arn),
            "{key}: no {arn}\n{}",
            m.files[key]
        );
    }
}

/// Hubble: the agent serves it with its certificate, the relay runs beside the agents
/// with its own, both issued by cert-manager from the addon's PKI issuer (the cluster
/// CA); the spec plans, applies on the mock and renders Terraform.
#[tokio::test]
async fn cilium_hubble_applies_as_a_set() {
    let yaml = cluster_yaml(
        "hubble.example.org",
        "cilium: {hubble: {enabled: true, metrics: [dns, drop, flow]}}",
        "  certManager: {enabled: true}\n",
    );
    let m = on_the_mock("hubble", &yaml).await;
    let text = &m.files["networking.cilium.io-k8s-1.16"];
    for want in [
        "enable-hubble: \"true\"",
        "hubble-metrics: dns drop flow",
        "hubble-listen-address: :4244",
        "image: quay.io/cilium/hubble-relay:v1.18.12",
        "name: hubble-peer",
        "name: hubble-metrics",
        "containerPort: 4244",
        "secretName: hubble-server-certs",
        "'*.hubble-example-org.hubble-grpc.cilium.io'",
        "name: networking.cilium.io",
    ] {
        assert!(text.contains(want), "{want} missing from {text}");
    }
    // The channel gives the addon its PKI issuer.
    assert!(
        m.files["bootstrap"].contains("needsPKI: true"),
        "{}",
        m.files["bootstrap"]
    );
    // The agent mounts the server certificate from the secret the Certificate fills.
    let objects = kops_api::yaml::from_str_multi(text).unwrap();
    let agent = objects
        .iter()
        .find(|o| s(o, "/kind") == Some("DaemonSet") && s(o, "/metadata/name") == Some("cilium"))
        .unwrap();
    let volumes = agent
        .pointer("/spec/template/spec/volumes")
        .unwrap()
        .to_string();
    assert!(volumes.contains("hubble-server-certs"), "{volumes}");

    // Without cert-manager kOps refuses Hubble, naming the field.
    let (cluster, groups) = populated(&cluster_yaml(
        "hubble-nocm.example.org",
        "cilium: {hubble: {enabled: true}}",
        "",
    ));
    let mut ctx = ModelContext::new(cluster, groups, "eu-west-9").with_account(AccountInfo::new(
        "111111111111",
        "aws",
        "eu-west-9",
    ));
    ctx.cluster_context
        .ensure_keysets(std::time::SystemTime::now())
        .unwrap();
    let err = build_model(&ctx).map(|_| ()).unwrap_err().to_string();
    assert!(
        err.contains("spec.networking.cilium.hubble.enabled"),
        "{err}"
    );
}

/// NVIDIA's DCGM exporter (`containerd.nvidiaGPU.dcgmExporter.enabled`): kOps' objects on
/// the GPU nodes, applying as a set with the device plugin; the spec plans, applies on the
/// mock and renders Terraform.
#[tokio::test]
async fn the_dcgm_exporter_applies_as_a_set() {
    let yaml = cluster_yaml(
        "addons-dcgm.example.org",
        "cni: {}",
        "  containerd: {nvidiaGPU: {enabled: true, dcgmExporter: {enabled: true}}}\n",
    );
    let m = on_the_mock("dcgm", &yaml).await;
    let text = &m.files["nvidia.addons.k8s.io-k8s-1.16"];
    for needle in [
        "kind: ServiceAccount",
        "name: exporter-metrics-config-map",
        "DCGM_FI_DEV_GPU_UTIL, gauge",
        "name: dcgm-exporter-read-cm",
        "kind: RoleBinding",
        "kind: Service",
        "port: 9400",
        "image: nvcr.io/nvidia/k8s/dcgm-exporter:2.4.6-2.6.10-ubuntu20.04",
        "runtimeClassName: nvidia",
        "/var/lib/kubelet/pod-resources",
    ] {
        assert!(text.contains(needle), "{needle}:\n{text}");
    }
    // Without it, none of its objects.
    let (_, plain) = addon_files(&cluster_yaml(
        "addons-gpu.example.org",
        "cni: {}",
        "  containerd: {nvidiaGPU: {enabled: true}}\n",
    ));
    assert!(!plain["nvidia.addons.k8s.io-k8s-1.16"].contains("dcgm"));
}

/// kindnet enforcing admin network policies: the AdminNetworkPolicy and
/// BaselineAdminNetworkPolicy CRDs, each with its setting, and kindnet allowed to list
/// and watch them; the spec plans, applies on the mock and renders Terraform.
#[tokio::test]
async fn kindnet_admin_network_policies_apply_as_a_set() {
    let yaml = cluster_yaml(
        "addons-anp.example.org",
        "kindnet: {adminNetworkPolicies: true, baselineAdminNetworkPolicies: true}",
        "",
    );
    let m = on_the_mock("anp", &yaml).await;
    let text = &m.files["networking.kindnet-k8s-1.32"];
    for needle in [
        "name: adminnetworkpolicies.policy.networking.k8s.io",
        "name: baselineadminnetworkpolicies.policy.networking.k8s.io",
        "- policy.networking.k8s.io",
        "--admin-network-policy=true",
    ] {
        assert!(text.contains(needle), "{needle}:\n{text}");
    }
    // Only the one asked for.
    let (_, files) = addon_files(&cluster_yaml(
        "addons-banp.example.org",
        "kindnet: {baselineAdminNetworkPolicies: true}",
        "",
    ));
    let text = &files["networking.kindnet-k8s-1.32"];
    assert!(
        text.contains("name: baselineadminnetworkpolicies."),
        "{text}"
    );
    assert!(!text.contains("name: adminnetworkpolicies."), "{text}");
    check_set("banp", &files);
}

fn cilium_objects(text: &str) -> Vec<Value> {
    kops_api::yaml::from_str_multi(text).unwrap()
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> Option<&'a Value> {
    objects
        .iter()
        .find(|o| s(o, "/kind") == Some(kind) && s(o, "/metadata/name") == Some(name))
}

/// Cilium's ingress controller (one shared load balancer, kOps' default mode) and its
/// Gateway API support: the settings, the classes, the secrets roles of the agent and the
/// operator and the operator's permissions; the spec plans, applies on the mock and
/// renders Terraform.
#[tokio::test]
async fn cilium_ingress_and_gateway_api_apply_as_a_set() {
    let yaml = cluster_yaml(
        "cilium-envoy.example.org",
        "cilium: {ingress: {enforceHttps: false}, gatewayAPI: {enableSecretsSync: true}, enablePrometheusMetrics: true}",
        "",
    );
    let m = on_the_mock("cilium-envoy", &yaml).await;
    let text = &m.stored["networking.cilium.io-k8s-1.16"];
    for want in [
        "enable-envoy-config: \"true\"",
        "enable-ingress-controller: \"true\"",
        "enforce-ingress-https: \"false\"",
        "enable-gateway-api: \"true\"",
        "enable-gateway-api-secrets-sync: \"true\"",
        "controller: cilium.io/ingress-controller",
        "controllerName: io.cilium/gateway-controller",
        "name: envoy-metrics",
    ] {
        assert!(text.contains(want), "{want} missing from {text}");
    }
    // Settings kOps writes only when the spec sets them.
    assert!(!text.contains("ingress-default-lb-mode"), "{text}");
    let objects = cilium_objects(text);
    for (kind, name) in [
        ("IngressClass", "cilium"),
        ("GatewayClass", "cilium"),
        ("Service", "cilium-ingress"),
        ("Endpoints", "cilium-ingress"),
        ("Role", "cilium-ingress-secrets"),
        ("Role", "cilium-gateway-secrets"),
        ("Role", "cilium-envoy-config-secrets"),
        ("Role", "cilium-operator-ingress-secrets"),
        ("Role", "cilium-operator-gateway-secrets"),
        ("RoleBinding", "cilium-secrets"),
        ("RoleBinding", "cilium-operator-gateway-secrets"),
    ] {
        assert!(find(&objects, kind, name).is_some(), "no {kind} {name}");
    }
    assert_eq!(
        s(
            find(&objects, "Service", "cilium-ingress").unwrap(),
            "/spec/type"
        ),
        Some("LoadBalancer")
    );
    let operator = find(&objects, "ClusterRole", "cilium-operator")
        .unwrap()
        .to_string();
    for want in [
        "ingresses/status",
        "gatewayclasses/status",
        "serviceimports",
    ] {
        assert!(operator.contains(want), "operator lacks {want}: {operator}");
    }

    // Dedicated load balancers: no shared service; the mode is written.
    let (_, files) = addon_files(&cluster_yaml(
        "cilium-dedicated.example.org",
        "cilium: {ingress: {defaultLoadBalancerMode: dedicated}}",
        "",
    ));
    let text = &files["networking.cilium.io-k8s-1.16"];
    assert!(
        text.contains("ingress-default-lb-mode: dedicated"),
        "{text}"
    );
    let objects = cilium_objects(text);
    assert!(find(&objects, "Service", "cilium-ingress").is_none());
    assert!(find(&objects, "GatewayClass", "cilium").is_none());
    check_set("cilium-dedicated", &files);

    // An unknown mode is refused, naming the field.
    let raw = manifest::parse(
        cluster_yaml(
            "cilium-badmode.example.org",
            "cilium: {ingress: {defaultLoadBalancerMode: spread}}",
            "",
        )
        .as_bytes(),
        "cluster.yaml",
    )
    .unwrap()
    .into_iter()
    .find_map(|o| match o {
        Object::Cluster(c) => Some(c),
        _ => None,
    })
    .unwrap();
    let err = kops_api::validation::validate_cluster(&internal::Cluster::try_from(&raw).unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("spec.networking.cilium.ingress.defaultLoadBalancerMode"),
        "{err}"
    );
}

/// Cilium's IPsec encryption: the keys of the `ciliumpassword` secret reach the agents
/// through a Secret they mount, and never a plan or Terraform; WireGuard needs no keys;
/// IPsec without the secret is refused, naming the field and the command that makes it.
#[tokio::test]
async fn cilium_encryption_applies_with_its_keys_kept_secret() {
    const KEY: &str = "3 rfc4106(gcm(aes)) 0123456789abcdef0123456789abcdef01234567 128";
    let secret = kops_model::secrets::encode_secret(format!("keys: {KEY}").as_bytes());
    let yaml = cluster_yaml(
        "cilium-ipsec.example.org",
        "cilium: {enableEncryption: true, nodeEncryption: true}",
        "",
    );
    let m = Box::pin(on_the_mock_with(
        "cilium-ipsec",
        &yaml,
        &[("secrets/ciliumpassword", secret.into_bytes())],
    ))
    .await;
    let text = &m.stored["networking.cilium.io-k8s-1.16"];
    for want in [
        "enable-ipsec: \"true\"",
        "ipsec-key-file: /etc/ipsec/keys",
        "encrypt-node: \"true\"",
        "mountPath: /etc/ipsec",
        "secretName: cilium-ipsec-keys",
    ] {
        assert!(text.contains(want), "{want} missing");
    }
    let objects = cilium_objects(text);
    let keys = find(&objects, "Secret", "cilium-ipsec-keys").expect("the keys' Secret");
    assert_eq!(s(keys, "/stringData/keys"), Some(KEY));
    // The keys are in the store only.
    assert!(
        !m.plan.contains("0123456789abcdef"),
        "the plan shows the key"
    );
    assert!(
        !m.rendered.contains("0123456789abcdef"),
        "Terraform holds the key"
    );
    assert!(!m.files.contains_key("networking.cilium.io-k8s-1.16"));

    // WireGuard: no keys, no Secret.
    let (_, files) = addon_files(&cluster_yaml(
        "cilium-wg.example.org",
        "cilium: {enableEncryption: true, encryptionType: wireguard}",
        "",
    ));
    let text = &files["networking.cilium.io-k8s-1.16"];
    assert!(text.contains("enable-wireguard: \"true\""), "{text}");
    assert!(text.contains("encrypt-node: \"false\""), "{text}");
    assert!(!text.contains("enable-ipsec"), "{text}");
    assert!(!text.contains("cilium-ipsec-keys"), "{text}");
    check_set("cilium-wg", &files);
}

/// IPsec with no `ciliumpassword` secret in the store: the plan is refused before any
/// change, naming the field and the command that makes the secret.
#[tokio::test]
async fn cilium_ipsec_without_its_secret_is_refused() {
    use kops_model::aws::{DiscoverOptions, discover};
    use kops_statestore::MemoryStore;
    use std::sync::Arc;

    let yaml = cluster_yaml(
        "cilium-nokeys.example.org",
        "cilium: {enableEncryption: true}",
        "",
    );
    let (cluster, groups) = manifest::parse(yaml.as_bytes(), "cluster.yaml")
        .unwrap()
        .into_iter()
        .fold((None, Vec::new()), |(c, mut g), o| match o {
            Object::Cluster(x) => (Some(x), g),
            Object::InstanceGroup(ig) => {
                g.push(ig);
                (c, g)
            }
            _ => (c, g),
        });
    let cloud = kops_mock::fixture::Fixture::parse(
        "aws:\n  region: eu-west-9\n  zones: [eu-west-9a]\n  route53:\n    hostedZones:\n    - {id: /hostedzone/ZADDONS, name: example.org., private: false}\n  ec2:\n    images:\n    - {imageId: ami-0000aaaa, name: addons-image, ownerId: '111111111111', rootDeviceName: /dev/sda1, architecture: x86_64}\n",
        "nokeys",
    )
    .unwrap()
    .build()
    .unwrap();
    let opts = DiscoverOptions::default()
        .with_state_store(Arc::new(MemoryStore::new()), "s3://addons-state");
    // Refused as the context is read from the store, before any plan.
    let err = discover(&cloud, &cluster.unwrap(), &groups, &opts)
        .await
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("spec.networking.cilium.enableEncryption")
            && err.contains("kops create secret ciliumpassword"),
        "{err}"
    );
}
