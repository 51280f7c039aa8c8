//! v1alpha2 <-> internal conversion.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;

use kops_api::internal::{self, CloudProvider, InstanceGroupRole};
use kops_api::manifest::{self, Object};
use kops_api::v1alpha2::{self as v, ObjectMeta};
use proptest::option;
use proptest::prelude::*;

fn name() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9-]{0,8}"
}

fn cidr() -> impl Strategy<Value = String> {
    (0u8..=255, 0u8..=255, 8u8..=28).prop_map(|(a, b, p)| format!("10.{a}.{b}.0/{p}"))
}

fn subnet() -> impl Strategy<Value = v::ClusterSubnetSpec> {
    (
        name(),
        option::of(cidr()),
        option::of(prop_oneof!["Public", "Private", "Utility"]),
        option::of(name()),
        option::of("subnet-[0-9a-f]{4}"),
    )
        .prop_map(|(n, cidr, ty, zone, id)| {
            let mut built = v::ClusterSubnetSpec::default();
            built.name = Some(n);
            built.cidr = cidr;
            built.type_ = ty;
            built.zone = zone;
            built.id = id;
            built
        })
}

fn networking() -> impl Strategy<Value = Option<v::NetworkingSpec>> {
    option::of(prop_oneof![
        Just({
            let mut built = v::NetworkingSpec::default();
            built.cilium = Some(Default::default());
            built
        }),
        Just({
            let mut built = v::NetworkingSpec::default();
            built.calico = Some(Default::default());
            built
        }),
        Just({
            let mut built = v::NetworkingSpec::default();
            built.cni = Some(Default::default());
            built
        }),
        Just({
            let mut built = v::NetworkingSpec::default();
            built.kubenet = Some(Default::default());
            built
        }),
        Just({
            let mut built = v::NetworkingSpec::default();
            built.gce = Some(Default::default());
            built
        }),
    ])
}

fn policies() -> impl Strategy<Value = Option<BTreeMap<String, Vec<String>>>> {
    option::of(proptest::collection::btree_map(
        prop_oneof!["master", "node", "bastion"],
        proptest::collection::vec("arn:aws:iam::[0-9]{4}:policy/[a-z]{3}", 0..2),
        0..3,
    ))
}

prop_compose! {
    fn cluster_spec()(
        cloud in prop_oneof![Just(None), Just(Some("aws")), Just(Some("gce")), Just(Some("azure"))],
        project in option::of(name()),
        k8s in option::of("v?1\\.[0-9]{2}\\.[0-9]"),
        base in option::of("s3://[a-z]{4}/[a-z]{4}"),
        keys in option::of("s3://[a-z]{4}/pki"),
        secrets in option::of("s3://[a-z]{4}/secrets"),
        network_cidr in option::of(cidr()),
        network_id in option::of("vpc-[0-9a-f]{6}"),
        extra_cidrs in option::of(proptest::collection::vec(cidr(), 0..3)),
        subnets in option::of(proptest::collection::vec(subnet(), 0..4)),
        dns in option::of(prop_oneof!["Public", "Private", "None"]),
        bastion in any::<bool>(),
        nm in option::of(Just("100.64.0.0/10".to_string())),
        pod in option::of(cidr()),
        svc in option::of(cidr()),
        isolate in option::of(any::<bool>()),
        disable_tags in option::of(any::<bool>()),
        networking in networking(),
        public_name in option::of("api\\.[a-z]{3}\\.example\\.com"),
        sans in option::of(proptest::collection::vec(name(), 0..2)),
        access in option::of(proptest::collection::vec(cidr(), 0..3)),
        api_lb in option::of(prop_oneof!["Public", "Internal"]),
        external_policies in policies(),
        knobs in any::<(bool, bool, bool, bool)>(),
        ssh in option::of(proptest::collection::vec(cidr(), 0..2)),
    ) -> v::ClusterSpec {
        let aws = cloud == Some("aws");
        let gce = cloud == Some("gce");
        let mut cloud_config: Option<v::CloudConfiguration> = None;
        if aws && knobs.0 {
            cloud_config.get_or_insert_with(Default::default).aws_ebscsi_driver =
                Some({ let mut built = v::EBSCSIDriverSpec::default(); built.enabled = Some(true); built });
        }
        if gce && knobs.0 {
            cloud_config.get_or_insert_with(Default::default).gce_service_account = Some("sa@x".into());
        }
        if knobs.1 {
            cloud_config.get_or_insert_with(Default::default).manage_storage_classes = Some(true);
        }
        { let mut built = v::ClusterSpec::default(); built.cloud_provider = cloud.map(str::to_string); built.project = if gce { project } else { None }; built.kubernetes_version = k8s; built.config_base = base; built.key_store = keys; built.secret_store = secrets; built.network_cidr = network_cidr; built.network_id = network_id; built.additional_network_cidrs = extra_cidrs; built.subnets = subnets; built.topology = if dns.is_some() || bastion {
                Some({ let mut built = v::TopologySpec::default(); built.dns = dns.map(|d| { let mut built = v::DNSSpec::default(); built.type_ = Some(d.to_string()); built }); built.bastion = bastion.then(|| { let mut built = v::BastionSpec::default(); built.bastion_public_name = Some("bastion.x".into()); built }); built })
            } else {
                None
            }; built.non_masquerade_cidr = nm; built.pod_cidr = pod; built.service_cluster_ip_range = svc; built.isolate_masters = isolate; built.disable_subnet_tags = disable_tags; built.networking = networking; built.master_public_name = public_name; built.additional_sans = sans; built.kubernetes_api_access = access; built.api = api_lb.map(|t| { let mut built = v::APISpec::default(); built.load_balancer = Some({ let mut built = v::LoadBalancerAccessSpec::default(); built.type_ = Some(t.to_string()); built }); built }); built.external_policies = external_policies; built.cloud_config = cloud_config; built.node_termination_handler = (aws && knobs.2).then(|| { let mut built = v::NodeTerminationHandlerSpec::default(); built.enabled = Some(true); built }); built.warm_pool = (aws && knobs.3).then(|| { let mut built = v::WarmPoolSpec::default(); built.max_size = Some(3); built }); built.ssh_access = ssh; built.kubelet = knobs.3.then(|| { let mut built = v::KubeletConfigSpec::default(); built.anonymous_auth = Some(false); built }); built }
    }
}

prop_compose! {
    fn instance_group_spec()(
        role in option::of(prop_oneof!["Master", "Node", "Bastion", "APIServer"]),
        min in option::of(0i32..5),
        max in option::of(0i32..5),
        machine in option::of("[a-z][0-9]\\.(medium|large)"),
        size in option::of(8i32..200),
        ty in option::of(prop_oneof!["gp3", "io1", "pd-standard"]),
        iops in option::of(100i32..9000),
        enc in option::of(any::<bool>()),
        subnets in option::of(proptest::collection::vec(name(), 0..3)),
        image in option::of("[a-z]{4}/[a-z0-9-]{6}"),
    ) -> v::InstanceGroupSpec {
        { let mut built = v::InstanceGroupSpec::default(); built.role = role; built.min_size = min; built.max_size = max; built.machine_type = machine; built.root_volume_size = size; built.root_volume_type = ty; built.root_volume_iops = iops; built.root_volume_encryption = enc; built.subnets = subnets; built.image = image; built }
    }
}

/// Runs a property on a thread with a large stack: the generated values are
/// big nested structs and debug builds keep many copies of them on the stack.
fn run_property<S: Strategy + Send + 'static>(
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError> + Send + 'static,
) where
    S::Value: std::fmt::Debug,
{
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
                cases: 256,
                ..ProptestConfig::default()
            });
            runner.run(&strategy, test).unwrap();
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn cluster_round_trips_through_internal() {
    run_property((cluster_spec(), name()), |(spec, n)| {
        let original = v::Cluster {
            metadata: ObjectMeta::named(format!("{n}.example.com")),
            spec,
            ..Default::default()
        };
        let hub = internal::Cluster::try_from(&original).unwrap();
        let back = v::Cluster::from(&hub);
        prop_assert_eq!(&back, &original);
        // And the hub survives the trip the other way.
        prop_assert_eq!(internal::Cluster::try_from(&back).unwrap(), hub);
        Ok(())
    });
}

#[test]
fn instance_group_round_trips_through_internal() {
    run_property((instance_group_spec(), name()), |(spec, n)| {
        let original = v::InstanceGroup {
            metadata: ObjectMeta::named(n),
            spec,
            ..Default::default()
        };
        let hub = internal::InstanceGroup::from(&original);
        prop_assert_eq!(v::InstanceGroup::from(&hub), original);
        Ok(())
    });
}

#[test]
fn moves_fields_to_the_internal_layout() {
    let text = "apiVersion: kops.k8s.io/v1alpha2
kind: Cluster
metadata: {name: a.example.com}
spec:
  cloudProvider: aws
  configBase: s3://b/a.example.com
  networkCIDR: 172.20.0.0/16
  masterPublicName: api.a.example.com
  kubernetesApiAccess: [0.0.0.0/0]
  externalPolicies: {master: [arn:x]}
  cloudConfig: {awsEBSCSIDriver: {enabled: true}}
  topology: {dns: {type: Private}}
  DisableSubnetTags: true
---
apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata: {name: cp}
spec: {role: Master, rootVolumeSize: 20, rootVolumeType: gp3}
";
    let objects = manifest::parse(text.as_bytes(), "t").unwrap();
    let (Object::Cluster(c), Object::InstanceGroup(ig)) = (&objects[0], &objects[1]) else {
        panic!()
    };
    let c = internal::Cluster::try_from(c).unwrap();
    assert_eq!(c.spec.cloud_provider.provider(), Some(CloudProvider::Aws));
    assert_eq!(
        c.spec.config_store.base.as_deref(),
        Some("s3://b/a.example.com")
    );
    assert_eq!(
        c.spec.networking.network_cidr.as_deref(),
        Some("172.20.0.0/16")
    );
    assert_eq!(c.spec.api.public_name.as_deref(), Some("api.a.example.com"));
    assert_eq!(
        c.spec.api.access.as_deref(),
        Some(&["0.0.0.0/0".to_string()][..])
    );
    assert!(
        c.spec
            .external_policies
            .as_ref()
            .unwrap()
            .contains_key("control-plane")
    );
    let aws = c.spec.cloud_provider.aws.as_ref().unwrap();
    assert_eq!(aws.ebs_csi_driver.as_ref().unwrap().enabled, Some(true));
    assert_eq!(
        c.spec.networking.topology.as_ref().unwrap().dns.as_deref(),
        Some("Private")
    );
    assert_eq!(c.spec.networking.tag_subnets, Some(false));
    let ig = internal::InstanceGroup::from(ig);
    assert_eq!(ig.spec.role, Some(InstanceGroupRole::ControlPlane));
    assert_eq!(ig.spec.root_volume.as_ref().unwrap().size, Some(20));
    assert_eq!(
        ig.spec.root_volume.as_ref().unwrap().type_.as_deref(),
        Some("gp3")
    );
}

#[test]
fn provider_specific_settings_for_another_cloud_are_rejected() {
    let mut c = v::Cluster::new("a.example.com");
    c.spec.cloud_provider = Some("gce".into());
    c.spec.node_termination_handler = Some(Default::default());
    let err = internal::Cluster::try_from(&c).unwrap_err();
    assert_eq!(
        err.to_string(),
        "converting spec.nodeTerminationHandler: only supported on AWS (cloudProvider: aws)"
    );

    let mut c = v::Cluster::new("a.example.com");
    c.spec.cloud_provider = Some("aws".into());
    c.spec.cloud_config = Some({
        let mut built = v::CloudConfiguration::default();
        built.gce_service_account = Some("x".into());
        built
    });
    let err = internal::Cluster::try_from(&c).unwrap_err();
    assert!(
        err.to_string()
            .contains("spec.cloudConfig.gceServiceAccount"),
        "{err}"
    );

    let mut c = v::Cluster::new("a.example.com");
    c.spec.cloud_provider = Some("vsphere".into());
    assert!(internal::Cluster::try_from(&c).is_err());
}

/// Every conformance case converts and comes back unchanged, apart from what
/// kOps itself normalises (fields it drops, `Master` spellings).
#[test]
fn every_case_round_trips_through_internal() {
    let Some(shared) = common::shared_dir("every_case_round_trips_through_internal") else {
        return;
    };
    for dir in common::case_dirs(&shared) {
        let file = dir.join("in-v1alpha2.yaml");
        let objects =
            manifest::parse(&std::fs::read(&file).unwrap(), &file.display().to_string()).unwrap();
        for o in objects {
            match o {
                Object::Cluster(mut c) => {
                    let hub = internal::Cluster::try_from(&c)
                        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                    c.spec.service_oidc_provider = None;
                    c.spec.master_internal_name = None;
                    for e in c.spec.etcd_clusters.iter_mut().flatten() {
                        (
                            e.type_,
                            e.volume_size,
                            e.volume_iops,
                            e.volume_throughput,
                            e.volume_type,
                        ) = (None, None, None, None, None);
                    }
                    assert_eq!(v::Cluster::from(&hub), c, "{}", file.display());
                }
                Object::InstanceGroup(mut ig) => {
                    let hub = internal::InstanceGroup::from(&ig);
                    ig.spec.root_volume = None;
                    assert_eq!(v::InstanceGroup::from(&hub), ig, "{}", file.display());
                }
                _ => {}
            }
        }
    }
}

/// Population and validation never panic, whatever the (converted) spec:
/// they return a result or an error.
#[test]
fn populate_and_validate_never_panic() {
    run_property((cluster_spec(), name(), 0usize..4), |(spec, n, members)| {
        let mut original = v::Cluster {
            metadata: ObjectMeta::named(format!("{n}.example.com")),
            spec,
            ..Default::default()
        };
        original.spec.etcd_clusters = Some(vec![{
            let mut built = v::EtcdClusterSpec::default();
            built.name = Some("main".into());
            built.etcd_members = Some(
                (0..members)
                    .map(|i| {
                        let mut built = v::EtcdMemberSpec::default();
                        built.name = Some(format!("m{i}"));
                        built.instance_group = Some(format!("cp-{i}"));
                        built
                    })
                    .collect(),
            );
            built
        }]);
        let hub = internal::Cluster::try_from(&original).unwrap();
        let _ = kops_api::validation::validate_cluster(&hub);
        if let Ok(full) = kops_api::defaults::populate_cluster(&hub, &Default::default()) {
            let _ = kops_api::validation::validate_cluster(&full);
            // A populated spec always converts back and serialises.
            let back = v::Cluster::from(&full);
            manifest::to_yaml(&[Object::Cluster(back)]).unwrap();
        }
        Ok(())
    });
}

#[test]
fn cluster_helpers() {
    let mut c = v::Cluster::new("h.example.com");
    c.spec.cloud_provider = Some("aws".into());
    c.spec.subnets = Some(vec![{
        let mut built = v::ClusterSubnetSpec::default();
        built.name = Some("a".into());
        built.zone = Some("eu-west-2b".into());
        built
    }]);
    let hub = internal::Cluster::try_from(&c).unwrap();
    assert_eq!(hub.cloud_provider(), Some(CloudProvider::Aws));
    assert_eq!(hub.region().as_deref(), Some("eu-west-2"));
    assert_eq!(hub.dns_type(), "Public");
    assert!(!hub.uses_none_dns());
    assert_eq!(hub.api_internal_name(), "api.internal.h.example.com");
    assert!(!hub.is_ipv6_only());
}
