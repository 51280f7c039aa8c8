//! A table of invalid specs: each breaks one rule of a valid, completed
//! cluster and must produce that rule's error with its path and message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kops_api::channel::Channel;
use kops_api::defaults::{PopulateOptions, populate};
use kops_api::internal::{self, InstanceGroupRole};
use kops_api::manifest::{self, Object};
use kops_api::v1alpha2 as v;
use kops_api::validation::{ValidationError, validate_all, validate_cluster};

const BASE: &str = r#"
apiVersion: kops.k8s.io/v1alpha2
kind: Cluster
metadata: {name: table.example.com}
spec:
  cloudProvider: aws
  kubernetesVersion: 1.34.0
  configBase: s3://state/table.example.com
  networking: {calico: {}}
  subnets:
  - {name: us-east-1a, zone: us-east-1a, type: Private}
  - {name: us-east-1b, zone: us-east-1b, type: Private}
  - {name: utility-us-east-1a, zone: us-east-1a, type: Utility}
  sshAccess: [10.0.0.0/8]
  kubernetesApiAccess: [0.0.0.0/0]
  etcdClusters:
  - name: main
    etcdMembers: [{name: a, instanceGroup: cp-a}]
  - name: events
    etcdMembers: [{name: a, instanceGroup: cp-a}]
---
apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata: {name: cp-a}
spec: {role: Master, subnets: [us-east-1a], machineType: m6i.large}
---
apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata: {name: nodes}
spec: {role: Node, subnets: [us-east-1a, us-east-1b], machineType: m6i.large, minSize: 1, maxSize: 3}
---
apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata: {name: bastions}
spec: {role: Bastion, subnets: [utility-us-east-1a]}
"#;

const CHANNEL: &str = r#"
spec:
  images:
  - {name: test/image-amd64, providerID: aws, architectureID: amd64, kubernetesVersion: ">=1.32.0"}
"#;

type Spec = (internal::Cluster, Vec<internal::InstanceGroup>);

fn base() -> Spec {
    let mut cluster = None;
    let mut igs = Vec::new();
    for o in manifest::parse(BASE.as_bytes(), "base").unwrap() {
        match o {
            Object::Cluster(c) => cluster = Some(internal::Cluster::try_from(&c).unwrap()),
            Object::InstanceGroup(ig) => igs.push(internal::InstanceGroup::from(&ig)),
            _ => {}
        }
    }
    let opts = PopulateOptions::default().with_channel(Channel::parse(CHANNEL).unwrap());
    populate(&cluster.unwrap(), &igs, &opts).unwrap()
}

fn ig<'a>(s: &'a mut Spec, name: &str) -> &'a mut internal::InstanceGroup {
    s.1.iter_mut().find(|g| g.name() == name).unwrap()
}

fn subnets(s: &mut Spec) -> &mut Vec<v::ClusterSubnetSpec> {
    s.0.spec.networking.subnets.as_mut().unwrap()
}

fn etcd(s: &mut Spec, i: usize) -> &mut v::EtcdClusterSpec {
    &mut s.0.spec.etcd_clusters.as_mut().unwrap()[i]
}

fn member(name: &str, ig: &str) -> v::EtcdMemberSpec {
    {
        let mut built = v::EtcdMemberSpec::default();
        built.name = Some(name.into());
        built.instance_group = Some(ig.into());
        built
    }
}

struct Case {
    name: &'static str,
    mutate: fn(&mut Spec),
    object: Option<&'static str>,
    path: &'static str,
    message: &'static str,
}

const fn case(
    name: &'static str,
    mutate: fn(&mut Spec),
    object: Option<&'static str>,
    path: &'static str,
    message: &'static str,
) -> Case {
    Case {
        name,
        mutate,
        object,
        path,
        message,
    }
}

fn terraform_extra(s: &mut Spec, files: bool, key: &str) {
    let tf = {
        let mut built = v::TerraformSpec::default();
        built.provider_extra_config = (!files).then(|| [(key.to_owned(), "1".to_owned())].into());
        built.files_provider_extra_config =
            files.then(|| [(key.to_owned(), "1".to_owned())].into());
        built
    };
    s.0.spec.target = Some({
        let mut built = v::TargetSpec::default();
        built.terraform = Some(tf);
        built
    });
}

fn cases() -> Vec<Case> {
    vec![
        case(
            "terraform provider key not an argument name",
            |s| terraform_extra(s, false, "max retries"),
            None,
            "spec.target.terraform.providerExtraConfig.max retries",
            "is not a Terraform argument name",
        ),
        case(
            "terraform files provider alias",
            |s| terraform_extra(s, true, "alias"),
            None,
            "spec.target.terraform.filesProviderExtraConfig.alias",
            "kops sets the providers' aliases itself",
        ),
        case(
            "name not a DNS name",
            |s| s.0.metadata.name = Some("Bad_Name.example.com".into()),
            None,
            "metadata.name",
            "is not a valid DNS name",
        ),
        case(
            "name not fully qualified",
            |s| s.0.metadata.name = Some("table".into()),
            None,
            "metadata.name",
            "must be a fully qualified DNS name",
        ),
        case(
            "no cloud provider",
            |s| s.0.spec.cloud_provider = Default::default(),
            None,
            "spec.cloudProvider",
            "a cloud provider is required",
        ),
        case(
            "two cloud providers",
            |s| s.0.spec.cloud_provider.gce = Some(Default::default()),
            None,
            "spec.cloudProvider",
            "only one cloudProvider option permitted",
        ),
        case(
            "version does not parse",
            |s| s.0.spec.kubernetes_version = Some("one.two".into()),
            None,
            "spec.kubernetesVersion",
            "is not a Kubernetes version",
        ),
        case(
            "version too old",
            |s| s.0.spec.kubernetes_version = Some("1.29.3".into()),
            None,
            "spec.kubernetesVersion",
            "the oldest supported version is 1.32.0",
        ),
        case(
            "subnet outside networkCIDR",
            |s| subnets(s)[1].cidr = Some("10.1.0.0/24".into()),
            None,
            "spec.subnets[1].cidr",
            "must be within spec.networkCIDR 172.20.0.0/16",
        ),
        case(
            "subnets overlap",
            |s| {
                let c = subnets(s)[0].cidr.clone();
                subnets(s)[1].cidr = c;
            },
            None,
            "spec.subnets[1].cidr",
            "overlaps spec.subnets[0].cidr",
        ),
        case(
            "subnet CIDR does not parse",
            |s| subnets(s)[0].cidr = Some("172.20.0.0/33".into()),
            None,
            "spec.subnets[0].cidr",
            "is not a valid CIDR",
        ),
        case(
            "zone in another region",
            |s| subnets(s)[1].zone = Some("eu-west-1b".into()),
            None,
            "spec.subnets[1].zone",
            "a cluster cannot span regions",
        ),
        case(
            "duplicate subnet names",
            |s| subnets(s)[1].name = Some("us-east-1a".into()),
            None,
            "spec.subnets[1].name",
            "duplicate subnet name",
        ),
        case(
            "unknown subnet type",
            |s| subnets(s)[0].type_ = Some("Secret".into()),
            None,
            "spec.subnets[0].type",
            "use Public, Private, Utility or DualStack",
        ),
        case(
            "networkCIDR does not parse",
            |s| s.0.spec.networking.network_cidr = Some("172.20.0.0".into()),
            None,
            "spec.networkCIDR",
            "is not a valid CIDR",
        ),
        case(
            "nonMasqueradeCIDR overlaps the VPC",
            |s| s.0.spec.networking.non_masquerade_cidr = Some("172.16.0.0/12".into()),
            None,
            "spec.nonMasqueradeCIDR",
            "must not overlap networkCIDR",
        ),
        case(
            "podCIDR outside nonMasqueradeCIDR",
            |s| s.0.spec.networking.pod_cidr = Some("192.168.0.0/16".into()),
            None,
            "spec.podCIDR",
            "must be within nonMasqueradeCIDR 100.64.0.0/10",
        ),
        case(
            "ssh access is not a CIDR",
            |s| s.0.spec.ssh_access = Some(vec!["everyone".into()]),
            None,
            "spec.sshAccess[0]",
            "is not a valid CIDR",
        ),
        case(
            "two networking options",
            |s| s.0.spec.networking.cilium = Some(Default::default()),
            None,
            "spec.networking",
            "only one networking option permitted",
        ),
        case(
            "cilium encryption type without encryption",
            |s| {
                s.0.spec.networking.calico = None;
                let mut c = v::CiliumNetworkingSpec::default();
                c.encryption_type = Some("wireguard".into());
                s.0.spec.networking.cilium = Some(c);
            },
            None,
            "spec.networking.cilium.encryptionType",
            "encryptionType requires enableEncryption",
        ),
        case(
            "unknown cilium encryption type",
            |s| {
                s.0.spec.networking.calico = None;
                let mut c = v::CiliumNetworkingSpec::default();
                c.enable_encryption = Some(true);
                c.encryption_type = Some("tls".into());
                s.0.spec.networking.cilium = Some(c);
            },
            None,
            "spec.networking.cilium.encryptionType",
            "use ipsec or wireguard",
        ),
        case(
            "removed networking option",
            |s| {
                s.0.spec.networking.calico = None;
                s.0.spec.networking.weave = Some(Default::default());
            },
            None,
            "spec.networking.weave",
            "no longer supported",
        ),
        case(
            "unknown DNS topology",
            |s| s.0.spec.networking.topology.as_mut().unwrap().dns = Some("Magic".into()),
            None,
            "spec.topology.dns.type",
            "use Public, Private or None",
        ),
        case(
            "legacy topology disagrees with subnets",
            |s| s.0.spec.networking.topology.as_mut().unwrap().nodes = Some("public".into()),
            None,
            "spec.topology.nodes",
            "needs at least one subnet of type Public",
        ),
        case(
            "even etcd members",
            |s| {
                let m = etcd(s, 0).etcd_members.as_mut().unwrap();
                m.push(member("b", "cp-a"));
            },
            None,
            "spec.etcdClusters[0].etcdMembers",
            "1 member tolerates 0 failures, 3 tolerate 1, 5 tolerate 2; 2 and 4 add nothing",
        ),
        case(
            "etcd member without instance group",
            |s| etcd(s, 1).etcd_members.as_mut().unwrap()[0].instance_group = None,
            None,
            "spec.etcdClusters[1].etcdMembers[0].instanceGroup",
            "member instanceGroup is required",
        ),
        case(
            "etcd member names a missing group",
            |s| etcd(s, 0).etcd_members.as_mut().unwrap()[0].instance_group = Some("cp-z".into()),
            None,
            "spec.etcdClusters[0].etcdMembers[0].instanceGroup",
            "instance group \"cp-z\" does not exist",
        ),
        case(
            "etcd member names a node group",
            |s| etcd(s, 0).etcd_members.as_mut().unwrap()[0].instance_group = Some("nodes".into()),
            None,
            "spec.etcdClusters[0].etcdMembers[0].instanceGroup",
            "does not have role Master",
        ),
        case(
            "unknown etcd cluster name",
            |s| etcd(s, 1).name = Some("extra".into()),
            None,
            "spec.etcdClusters[1].name",
            "use main, events, cilium or leases",
        ),
        case(
            "etcd version 2",
            |s| etcd(s, 0).version = Some("2.2.1".into()),
            None,
            "spec.etcdClusters[0].version",
            "only major version 3",
        ),
        case(
            "classic API load balancer",
            |s| s.0.spec.api.load_balancer.as_mut().unwrap().class = Some("Classic".into()),
            None,
            "spec.api.loadBalancer.class",
            "set class: Network",
        ),
        case(
            "internal API LB without private subnets",
            |s| {
                s.0.spec.api.load_balancer.as_mut().unwrap().type_ = Some("Internal".into());
                for sn in subnets(s).iter_mut() {
                    if sn.type_.as_deref() == Some("Private") {
                        sn.type_ = Some("Public".into());
                    }
                }
            },
            None,
            "spec.api.loadBalancer.type",
            "needs at least one subnet of type Private",
        ),
        case(
            "legacy IAM",
            |s| s.0.spec.iam.get_or_insert_with(Default::default).legacy = Some(true),
            None,
            "spec.iam.legacy",
            "no longer supported",
        ),
        case(
            "docker configured",
            |s| s.0.spec.docker = Some(Default::default()),
            None,
            "spec.docker",
            "use containerd",
        ),
        case(
            "sysctl without =",
            |s| s.0.spec.sysctl_parameters = Some(vec!["net.ipv4.ip_forward".into()]),
            None,
            "spec.sysctlParameters[0]",
            "must have the form name=value",
        ),
        case(
            "minSize above maxSize",
            |s| {
                let g = ig(s, "nodes");
                g.spec.min_size = Some(5);
                g.spec.max_size = Some(2);
            },
            Some("InstanceGroup nodes"),
            "spec.maxSize",
            "maxSize 2 must be greater than or equal to minSize 5",
        ),
        case(
            "instance group subnet missing",
            |s| ig(s, "nodes").spec.subnets = Some(vec!["us-east-1z".into()]),
            Some("InstanceGroup nodes"),
            "spec.subnets[0]",
            "subnet \"us-east-1z\" does not exist",
        ),
        case(
            "node group in a utility subnet",
            |s| ig(s, "nodes").spec.subnets = Some(vec!["utility-us-east-1a".into()]),
            Some("InstanceGroup nodes"),
            "spec.subnets[0]",
            "is a Utility subnet",
        ),
        case(
            "machine type missing",
            |s| ig(s, "nodes").spec.machine_type = None,
            Some("InstanceGroup nodes"),
            "spec.machineType",
            "machine type is required",
        ),
        case(
            "image missing",
            |s| ig(s, "nodes").spec.image = None,
            Some("InstanceGroup nodes"),
            "spec.image",
            "image is required",
        ),
        case(
            "role missing",
            |s| ig(s, "nodes").spec.role = None,
            Some("InstanceGroup nodes"),
            "spec.role",
            "required: Master, Node, Bastion or APIServer",
        ),
        case(
            "unknown role",
            |s| ig(s, "nodes").spec.role = Some(InstanceGroupRole::Unknown("Worker".into())),
            Some("InstanceGroup nodes"),
            "spec.role",
            "unsupported value \"Worker\"",
        ),
        case(
            "control plane with two machines",
            |s| ig(s, "cp-a").spec.max_size = Some(2),
            Some("InstanceGroup cp-a"),
            "spec.maxSize",
            "add more instance groups instead",
        ),
        case(
            "control plane without etcd member",
            |s| etcd(s, 1).etcd_members = Some(vec![member("a", "cp-b")]),
            Some("InstanceGroup cp-a"),
            "metadata.name",
            "has no member in etcd cluster \"events\"",
        ),
        case(
            "AWS root volume type",
            |s| {
                ig(s, "nodes").spec.root_volume = Some({
                    let mut built = internal::InstanceRootVolumeSpec::default();
                    built.type_ = Some("pd-ssd".into());
                    built
                })
            },
            Some("InstanceGroup nodes"),
            "spec.rootVolumeType",
            "use gp3, gp2, io1, io2 or standard",
        ),
        case(
            "bad security group id",
            |s| ig(s, "nodes").spec.additional_security_groups = Some(vec!["web".into()]),
            Some("InstanceGroup nodes"),
            "spec.additionalSecurityGroups[0]",
            "is not a security group ID",
        ),
        case(
            "metadata hop limit",
            |s| {
                ig(s, "nodes").spec.instance_metadata = Some({
                    let mut built = v::InstanceMetadataOptions::default();
                    built.http_put_response_hop_limit = Some(99);
                    built
                })
            },
            Some("InstanceGroup nodes"),
            "spec.instanceMetadata.httpPutResponseHopLimit",
            "must be between 1 and 64",
        ),
        case(
            "API load balancer in an unknown subnet",
            |s| {
                s.0.spec.api.load_balancer.as_mut().unwrap().subnets = Some(vec![{
                    let mut built = v::LoadBalancerSubnetSpec::default();
                    built.name = Some("nowhere".into());
                    built
                }])
            },
            None,
            "spec.api.loadBalancer.subnets[0].name",
            "subnet \"nowhere\" does not exist",
        ),
        case(
            "apiserver service range disagrees",
            |s| {
                s.0.spec
                    .kube_api_server
                    .as_mut()
                    .unwrap()
                    .service_cluster_ip_range = Some("100.70.0.0/16".into())
            },
            None,
            "spec.kubeAPIServer.serviceClusterIPRange",
            "differs from spec.serviceClusterIPRange 100.64.0.0/13",
        ),
        case(
            "kubelet DNS disagrees",
            |s| s.0.spec.kubelet.as_mut().unwrap().cluster_dns = Some("100.64.0.53".into()),
            None,
            "spec.kubelet.clusterDNS",
            "differs from spec.kubeDNS.serverIP 100.64.0.10",
        ),
        case(
            "spot price not a number",
            |s| ig(s, "nodes").spec.max_price = Some("cheap".into()),
            Some("InstanceGroup nodes"),
            "spec.maxPrice",
            "is not a positive price",
        ),
        case(
            "warm pool on the control plane",
            |s| {
                ig(s, "cp-a").spec.warm_pool = Some({
                    let mut built = v::WarmPoolSpec::default();
                    built.max_size = Some(2);
                    built
                })
            },
            Some("InstanceGroup cp-a"),
            "spec.warmPool",
            "only allowed on instance groups with role Node or APIServer",
        ),
    ]
}

fn describe(errors: &[ValidationError]) -> String {
    errors
        .iter()
        .map(|e| format!("  {e}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_base_spec_is_valid() {
    let (c, igs) = base();
    if let Err(e) = validate_all(&c, &igs) {
        panic!("base spec must be valid:\n{e}");
    }
}

#[test]
fn each_invalid_spec_reports_its_path_and_message() {
    let cases = cases();
    assert!(cases.len() >= 30, "the table has {} cases", cases.len());
    for case in cases {
        let mut spec = base();
        (case.mutate)(&mut spec);
        let errors = validate_all(&spec.0, &spec.1).expect_err(case.name);
        let found = errors.errors().iter().any(|e| {
            e.object.as_deref() == case.object
                && e.path == case.path
                && e.message.contains(case.message)
        });
        assert!(
            found,
            "{}: expected {:?} {} containing {:?}; got:\n{}",
            case.name,
            case.object,
            case.path,
            case.message,
            describe(errors.errors())
        );
    }
}

#[test]
fn every_problem_is_reported_at_once() {
    let mut spec = base();
    subnets(&mut spec)[1].cidr = Some("10.1.0.0/24".into());
    spec.0.spec.ssh_access = Some(vec!["nope".into()]);
    ig(&mut spec, "nodes").spec.machine_type = None;
    let errors = validate_all(&spec.0, &spec.1).unwrap_err();
    let paths: Vec<&str> = errors.errors().iter().map(|e| e.path.as_str()).collect();
    assert!(paths.contains(&"spec.subnets[1].cidr"), "{paths:?}");
    assert!(paths.contains(&"spec.sshAccess[0]"), "{paths:?}");
    assert!(paths.contains(&"spec.machineType"), "{paths:?}");
    // The cluster on its own has exactly the two cluster problems.
    assert_eq!(validate_cluster(&spec.0).unwrap_err().errors().len(), 2);
}
