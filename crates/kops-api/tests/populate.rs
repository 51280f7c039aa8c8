//! Population (defaulting) behaviour on small specs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kops_api::channel::Channel;
use kops_api::defaults::{PopulateOptions, populate, populate_cluster, root_volume};
use kops_api::internal::{self, InstanceGroupRole};
use kops_api::manifest::{self, Object};

const CHANNEL: &str = r#"
spec:
  images:
  - {name: aws/amd64, providerID: aws, architectureID: amd64, kubernetesVersion: ">=1.32.0"}
  - {name: aws/arm64, providerID: aws, architectureID: arm64, kubernetesVersion: ">=1.32.0"}
  - {name: gce/amd64, providerID: gce, architectureID: amd64, kubernetesVersion: ">=1.32.0"}
"#;

fn load(text: &str) -> (internal::Cluster, Vec<internal::InstanceGroup>) {
    let mut cluster = None;
    let mut igs = Vec::new();
    for o in manifest::parse(text.as_bytes(), "t").unwrap() {
        match o {
            Object::Cluster(c) => cluster = Some(internal::Cluster::try_from(&c).unwrap()),
            Object::InstanceGroup(ig) => igs.push(internal::InstanceGroup::from(&ig)),
            _ => {}
        }
    }
    (cluster.unwrap(), igs)
}

fn opts() -> PopulateOptions {
    PopulateOptions::default().with_channel(Channel::parse(CHANNEL).unwrap())
}

const AWS: &str = "
apiVersion: kops.k8s.io/v1alpha2
kind: Cluster
metadata: {name: p.example.com}
spec:
  cloudProvider: aws
  kubernetesVersion: v1.33.1
  configBase: s3://b/p.example.com/
  networking: {cilium: {}}
  kubelet: {anonymousAuth: false, taints: [dedicated=x:NoSchedule]}
  subnets:
  - {name: a, zone: us-east-1a, type: Public}
  etcdClusters:
  - {name: main, etcdMembers: [{name: a, instanceGroup: cp}]}
  - {name: events, etcdMembers: [{name: a, instanceGroup: cp}]}
---
apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata: {name: cp}
spec: {role: Master, subnets: [a]}
---
apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata: {name: nodes}
spec:
  role: Node
  machineType: c7g.large
  nodeLabels: {team: blue}
  kubelet: {maxPods: 50}
";

#[test]
fn fills_cluster_defaults_like_kops() {
    let (c, igs) = load(AWS);
    let (full, groups) = populate(&c, &igs, &opts()).unwrap();
    let s = &full.spec;
    assert_eq!(s.kubernetes_version.as_deref(), Some("1.33.1"));
    assert_eq!(s.channel.as_deref(), Some("stable"));
    assert_eq!(s.networking.network_cidr.as_deref(), Some("172.20.0.0/16"));
    assert_eq!(
        s.networking.non_masquerade_cidr.as_deref(),
        Some("100.64.0.0/10")
    );
    assert_eq!(s.networking.pod_cidr.as_deref(), Some("100.96.0.0/11"));
    assert_eq!(
        s.networking.service_cluster_ip_range.as_deref(),
        Some("100.64.0.0/13")
    );
    assert_eq!(
        s.networking.subnets.as_ref().unwrap()[0].cidr.as_deref(),
        Some("172.20.0.0/16")
    );
    assert_eq!(
        s.networking.topology.as_ref().unwrap().dns.as_deref(),
        Some("Public")
    );
    assert_eq!(s.api.public_name.as_deref(), Some("api.p.example.com"));
    // The control plane is in a Public subnet: the API is reached through DNS.
    assert!(s.api.dns.is_some() && s.api.load_balancer.is_none());
    assert_eq!(
        s.config_store.keypairs.as_deref(),
        Some("s3://b/p.example.com/pki")
    );
    assert_eq!(
        s.config_store.secrets.as_deref(),
        Some("s3://b/p.example.com/secrets")
    );
    let etcd = &s.etcd_clusters.as_ref().unwrap()[0];
    assert_eq!(etcd.version.as_deref(), Some("3.5.31"));
    assert_eq!(
        etcd.manager.as_ref().unwrap().backup_retention_days,
        Some(90)
    );
    assert_eq!(
        s.kube_dns.as_ref().unwrap().server_ip.as_deref(),
        Some("100.64.0.10")
    );
    assert_eq!(
        s.kubelet.as_ref().unwrap().cluster_dns.as_deref(),
        Some("100.64.0.10")
    );
    let api = s.kube_api_server.as_ref().unwrap();
    assert_eq!(
        api.image.as_deref(),
        Some("registry.k8s.io/kube-apiserver:v1.33.1")
    );
    assert_eq!(
        api.etcd_servers.as_deref(),
        Some(&["https://127.0.0.1:4001".to_string()][..])
    );
    assert_eq!(api.api_server_count, Some(1));
    assert_eq!(
        s.external_dns.as_ref().unwrap().provider.as_deref(),
        Some("dns-controller")
    );

    let cp = &groups[0];
    assert_eq!((cp.spec.min_size, cp.spec.max_size), (Some(1), Some(1)));
    assert_eq!(cp.spec.machine_type.as_deref(), Some("t3.medium"));
    assert_eq!(cp.spec.image.as_deref(), Some("aws/amd64"));
    let cpk = cp.spec.kubelet.as_ref().unwrap();
    assert_eq!(cpk.anonymous_auth, Some(false));
    assert!(
        cpk.taints
            .as_ref()
            .unwrap()
            .contains(&"node-role.kubernetes.io/control-plane=:NoSchedule".to_string())
    );
    assert!(
        cpk.node_labels
            .as_ref()
            .unwrap()
            .contains_key("node-role.kubernetes.io/control-plane")
    );

    let nodes = &groups[1];
    assert_eq!(
        (nodes.spec.min_size, nodes.spec.max_size),
        (Some(2), Some(2))
    );
    assert_eq!(
        nodes.spec.image.as_deref(),
        Some("aws/arm64"),
        "c7g is a Graviton type"
    );
    assert_eq!(nodes.spec.subnets.as_deref(), Some(&["a".to_string()][..]));
    assert_eq!(nodes.spec.manager.as_deref(), Some("CloudGroup"));
    let nk = nodes.spec.kubelet.as_ref().unwrap();
    assert_eq!(nk.max_pods, Some(50), "the group's kubelet settings win");
    assert_eq!(
        nk.cluster_dns.as_deref(),
        Some("100.64.0.10"),
        "cluster kubelet settings are inherited"
    );
    assert_eq!(
        nk.taints.as_deref(),
        Some(&["dedicated=x:NoSchedule".to_string()][..])
    );
    let labels = nk.node_labels.as_ref().unwrap();
    assert_eq!(labels.get("team").map(String::as_str), Some("blue"));
    assert!(labels.contains_key("node-role.kubernetes.io/node"));

    let rv = root_volume(&full, nodes);
    assert_eq!(
        (rv.size, rv.type_.as_deref(), rv.iops),
        (Some(128), Some("gp3"), Some(3000))
    );
}

#[test]
fn private_control_plane_gets_a_network_load_balancer() {
    let text = AWS.replace(
        "type: Public}",
        "type: Private}\n  - {name: utility-a, zone: us-east-1a, type: Utility}",
    );
    let (c, igs) = load(&text);
    let (full, _) = populate(&c, &igs, &opts()).unwrap();
    let lb = full.spec.api.load_balancer.as_ref().unwrap();
    assert_eq!(lb.type_.as_deref(), Some("Public"));
    assert_eq!(lb.class.as_deref(), Some("Network"));
    assert!(full.spec.api.dns.is_none());
    let cidrs: Vec<_> = full
        .spec
        .networking
        .subnets
        .unwrap()
        .into_iter()
        .map(|s| s.cidr.unwrap())
        .collect();
    // Two blocks needed (one subnet, plus the utility share): halves of the /16;
    // the first half is cut in eighths for the utility subnet.
    assert_eq!(cidrs, ["172.20.128.0/17", "172.20.0.0/20"]);
}

#[test]
fn even_etcd_members_are_refused_with_the_quorum_rule() {
    let text = AWS.replace(
        "{name: main, etcdMembers: [{name: a, instanceGroup: cp}]}",
        "{name: main, etcdMembers: [{name: a, instanceGroup: cp}, {name: b, instanceGroup: cp}]}",
    );
    let (c, _) = load(&text);
    let err = populate_cluster(&c, &opts()).unwrap_err();
    assert!(err.to_string().contains("2 and 4 add nothing"), "{err}");
    assert!(
        err.to_string().contains("spec.etcdClusters[0].etcdMembers"),
        "{err}"
    );
}

#[test]
fn gce_subnets_and_images() {
    let text = "
apiVersion: kops.k8s.io/v1alpha2
kind: Cluster
metadata: {name: g.example.com}
spec:
  cloudProvider: gce
  project: proj
  kubernetesVersion: 1.34.0
  networking: {cilium: {}}
  subnets: [{name: us-central1, region: us-central1, type: Public}]
  etcdClusters:
  - {name: main, etcdMembers: [{name: a, instanceGroup: cp}]}
  - {name: events, etcdMembers: [{name: a, instanceGroup: cp}]}
---
apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata: {name: cp}
spec: {role: Master, subnets: [us-central1], zones: [us-central1-a]}
";
    let (c, igs) = load(text);
    let (full, groups) = populate(&c, &igs, &opts()).unwrap();
    assert_eq!(
        full.spec.networking.subnets.as_ref().unwrap()[0]
            .cidr
            .as_deref(),
        Some("10.0.16.0/20") // kOps hands out the second /20 of 10.0.0.0/8 first
    );
    assert!(full.spec.networking.network_cidr.is_none());
    assert_eq!(groups[0].spec.machine_type.as_deref(), Some("e2-medium"));
    assert_eq!(groups[0].spec.image.as_deref(), Some("gce/amd64"));
    assert_eq!(
        full.spec.cloud_provider.gce.as_ref().unwrap().multizone,
        Some(true)
    );
    assert_eq!(groups[0].spec.role, Some(InstanceGroupRole::ControlPlane));
    kops_api::validation::validate_all(&full, &groups).unwrap();
}

#[test]
fn missing_image_without_channel_is_an_error() {
    let (c, igs) = load(AWS);
    let err = populate(&c, &igs, &PopulateOptions::default()).unwrap_err();
    assert!(err.to_string().contains("spec.image"), "{err}");
}
