//! Settings kOps' add-on option builders fill in (`pkg/model/components`),
//! one function per builder, run in this order: etcd backups, storage
//! classes, cloud controller managers, the service-account issuer, CSI
//! drivers, the node termination handler, CNI plug-ins, node problem
//! detector, Karpenter and the cluster autoscaler.

use super::store_https_url;
use crate::internal::{CloudProvider, Cluster};
use crate::v1alpha2 as v;

/// Every add-on's settings, in kOps' builder order.
pub(super) fn populate_addons(
    c: &mut Cluster,
    provider: Option<CloudProvider>,
    k8s: &semver::Version,
) {
    let aws = provider == Some(CloudProvider::Aws);
    let gce = provider == Some(CloudProvider::Gce);
    populate_etcd_backups(c);
    populate_cloud_configuration(c);
    if aws {
        populate_aws_cloud_controller_manager(c);
    } else if gce {
        populate_gcp_cloud_controller_manager(c);
    }
    if provider == Some(CloudProvider::Hetzner) {
        populate_hetzner_cloud_controller_manager(c);
    }
    populate_service_account_issuer(c);
    populate_aws_ebs_csi_driver(c);
    populate_gcp_pd_csi_driver(c);
    populate_calico(c);
    populate_kindnet(c, aws);
    populate_cilium(c);
    populate_node_problem_detector(c);
    populate_karpenter(c);
    populate_cluster_autoscaler(c, k8s);
}

/// etcd backups live under the state store (kOps' `EtcdManagerOptionsBuilder`).
fn populate_etcd_backups(c: &mut Cluster) {
    let spec = &mut c.spec;
    let base = spec.config_store.base.clone().unwrap_or_default();
    for e in spec.etcd_clusters.iter_mut().flatten() {
        let backups = e.backups.get_or_insert_with(Default::default);
        if backups.backup_store.as_deref().unwrap_or("").is_empty() {
            let ename = e.name.clone().unwrap_or_default();
            backups.backup_store = Some(format!(
                "{}/backups/etcd/{ename}",
                base.trim_end_matches('/')
            ));
        }
    }
}

/// Storage classes (kOps' `CloudConfigurationOptionsBuilder`).
fn populate_cloud_configuration(c: &mut Cluster) {
    let cc = c.spec.cloud_config.get_or_insert_with(Default::default);
    cc.manage_storage_classes.get_or_insert(true);
}

/// Whether the cloud controller manager configures routes: yes with
/// kubenet, no with another CNI, unsaid without one.
fn configure_cloud_routes(c: &Cluster) -> Option<bool> {
    let net = &c.spec.networking;
    if net.kubenet.is_some() {
        Some(true)
    } else if net.cni_options().is_empty() {
        None
    } else {
        Some(false)
    }
}

/// AWS cloud controller manager (kOps' `AWSCloudControllerManagerOptionsBuilder`).
fn populate_aws_cloud_controller_manager(c: &mut Cluster) {
    let name = c.name().to_string();
    let routes = configure_cloud_routes(c);
    let spec = &mut c.spec;
    let ipv6 = spec.networking.is_ipv6_only();
    let pod_cidr = spec.networking.pod_cidr.clone();
    let ccm = spec
        .cloud_controller_manager
        .get_or_insert_with(Default::default);
    ccm.leader_election = Some(v::LeaderElectionConfiguration {
        leader_elect: Some(true),
        ..Default::default()
    });
    ccm.cluster_name = Some(name);
    ccm.allocate_node_cidrs = Some(!ipv6);
    if ccm.cluster_cidr.is_none() && !ipv6 {
        ccm.cluster_cidr = pod_cidr;
    }
    if routes.is_some() {
        ccm.configure_cloud_routes = routes;
    }
    ccm.image.get_or_insert_with(|| {
        "registry.k8s.io/provider-aws/cloud-controller-manager:v1.36.1".into()
    });
}

/// GCP cloud controller manager (kOps' `GCPCloudControllerManagerOptionsBuilder`).
fn populate_gcp_cloud_controller_manager(c: &mut Cluster) {
    let name = c.name().to_string();
    let spec = &mut c.spec;
    let ipv6 = spec.networking.is_ipv6_only();
    let pod_cidr = spec.networking.pod_cidr.clone();
    let gce_aliases = spec.networking.gce.is_some() || spec.networking.kindnet.is_some();
    let ccm = spec
        .cloud_controller_manager
        .get_or_insert_with(Default::default);
    ccm.leader_election = Some(v::LeaderElectionConfiguration {
        leader_elect: Some(true),
        ..Default::default()
    });
    ccm.cluster_name = Some(name.replace('.', "-"));
    ccm.allocate_node_cidrs = Some(true);
    ccm.cidr_allocator_type = Some("CloudAllocator".into());
    if ccm.cluster_cidr.is_none() {
        ccm.cluster_cidr = pod_cidr;
    }
    if gce_aliases {
        ccm.configure_cloud_routes = Some(false);
    }
    if ccm.controllers.is_none() {
        let mut controllers = vec!["*".to_string()];
        if ipv6 {
            controllers.push("-node-ipam-controller".into());
            controllers.push("-node-route-controller".into());
        }
        ccm.controllers = Some(controllers);
    }
    ccm.image.get_or_insert_with(|| {
        "registry.k8s.io/cloud-provider-gcp/cloud-controller-manager:v35.0.0".into()
    });
}

/// kOps' `HetznerCloudControllerManagerOptionsBuilder`: hcloud's controller manager,
/// allocating node CIDRs from the pod range, with no routes and no leader election.
fn populate_hetzner_cloud_controller_manager(c: &mut Cluster) {
    let spec = &mut c.spec;
    let pod_cidr = spec.networking.pod_cidr.clone();
    let ccm = spec
        .cloud_controller_manager
        .get_or_insert_with(Default::default);
    ccm.cloud_provider = Some("hcloud".into());
    ccm.allow_untagged_cloud = Some(true);
    ccm.leader_election = Some(v::LeaderElectionConfiguration {
        leader_elect: Some(false),
        ..Default::default()
    });
    if ccm.cluster_cidr.is_none() {
        ccm.cluster_cidr = pod_cidr;
    }
    ccm.allocate_node_cidrs = Some(true);
    ccm.configure_cloud_routes = Some(false);
    ccm.image
        .get_or_insert_with(|| "hetznercloud/hcloud-cloud-controller-manager:v1.31.0".into());
}

/// Service-account issuer and its JWKS URI, from the discovery store or
/// service when one is set (kOps' `DiscoveryOptionsBuilder`).
fn populate_service_account_issuer(c: &mut Cluster) {
    let name = c.name().to_string();
    let spec = &mut c.spec;
    let said = spec.service_account_issuer_discovery.clone();
    let a = spec.kube_api_server.get_or_insert_with(Default::default);
    if a.api_audiences.as_ref().is_none_or(|v| v.is_empty()) {
        a.api_audiences = Some(vec!["kubernetes.svc.default".into()]);
    }
    if a.service_account_issuer.is_none() {
        let store = said.as_ref().and_then(|s| s.discovery_store.clone());
        let service = said
            .as_ref()
            .and_then(|s| s.discovery_service.as_ref())
            .and_then(|d| d.url.clone());
        let issuer = if let Some(store) = store {
            store_https_url(&store)
        } else if let Some(url) = service {
            url
        } else {
            format!("https://api.internal.{name}")
        };
        a.service_account_issuer = Some(issuer);
    }
    a.service_account_jwksuri = a
        .service_account_issuer
        .as_ref()
        .map(|i| format!("{i}/openid/v1/jwks"));
}

/// AWS: the EBS CSI driver (kOps' `AWSEBSCSIDriverOptionsBuilder`), the node
/// IP families on IPv6 (`AWSOptionsBuilder`) and, without Karpenter, the node
/// termination handler.
fn populate_aws_ebs_csi_driver(c: &mut Cluster) {
    let spec = &mut c.spec;
    let ipv6 = spec.networking.is_ipv6_only();
    let karpenter = spec.karpenter.as_ref().and_then(|k| k.enabled) == Some(true);
    let Some(awsspec) = spec.cloud_provider.aws.as_mut() else {
        return;
    };
    let ebs = awsspec.ebs_csi_driver.get_or_insert_with(Default::default);
    ebs.version.get_or_insert_with(|| "v1.58.0".into());
    // kOps' completed spec never records `enabled` for this driver; an
    // explicit `false` is kept so the choice is not lost.
    if ebs.enabled == Some(true) {
        ebs.enabled = None;
    }
    if ipv6
        && awsspec
            .node_ip_families
            .as_ref()
            .is_none_or(|f| f.is_empty())
    {
        awsspec.node_ip_families = Some(vec!["ipv6".into(), "ipv4".into()]);
    }
    if !karpenter {
        populate_node_termination_handler(
            awsspec
                .node_termination_handler
                .get_or_insert_with(Default::default),
        );
    }
}

/// The node termination handler, when on (kOps' `NodeTerminationHandlerOptionsBuilder`).
fn populate_node_termination_handler(nth: &mut v::NodeTerminationHandlerSpec) {
    if *nth.enabled.get_or_insert(true) {
        nth.delete_sqs_msg_if_node_not_found.get_or_insert(false);
        nth.enable_spot_interruption_draining.get_or_insert(true);
        nth.enable_scheduled_event_draining.get_or_insert(true);
        nth.enable_rebalance_monitoring.get_or_insert(false);
        nth.enable_rebalance_draining.get_or_insert(false);
        nth.enable_out_of_service_taint.get_or_insert(false);
        nth.prometheus_enable.get_or_insert(false);
        nth.exclude_from_load_balancers.get_or_insert(true);
        nth.managed_asg_tag
            .get_or_insert_with(|| "aws-node-termination-handler/managed".into());
        nth.pod_termination_grace_period.get_or_insert(-1);
        nth.taint_node.get_or_insert(false);
        nth.cpu_request.get_or_insert_with(|| "50m".into());
        nth.memory_request.get_or_insert_with(|| "64Mi".into());
        nth.version.get_or_insert_with(|| "v1.25.5".into());
    }
}

/// GCE: the persistent-disk CSI driver (kOps' `GCPPDCSIDriverOptionsBuilder`).
fn populate_gcp_pd_csi_driver(c: &mut Cluster) {
    if let Some(gcespec) = c.spec.cloud_provider.gce.as_mut() {
        let pd = gcespec.pd_csi_driver.get_or_insert_with(Default::default);
        pd.enabled.get_or_insert(true);
        pd.default_storage_class_name
            .get_or_insert_with(|| "balanced-csi".into());
        pd.version.get_or_insert_with(|| "v1.22.1".into());
    }
}

/// Calico's encapsulation (kOps' `CalicoOptionsBuilder`).
fn populate_calico(c: &mut Cluster) {
    let ipv6 = c.spec.networking.is_ipv6_only();
    if let Some(calico) = c.spec.networking.calico.as_mut() {
        calico.encapsulation_mode = Some(if ipv6 { "none" } else { "ipip" }.into());
    }
}

/// kindnet (kOps' `KindnetOptionsBuilder`): masquerading except to the
/// cluster's own ranges, NAT64 on IPv6 off AWS.
fn populate_kindnet(c: &mut Cluster, aws: bool) {
    let net = &mut c.spec.networking;
    let ipv6 = net.is_ipv6_only();
    let network_cidr = net.network_cidr.clone();
    let pod_cidr = net.pod_cidr.clone();
    let service_range = net.service_cluster_ip_range.clone();
    let Some(kindnet) = net.kindnet.as_mut() else {
        return;
    };
    kindnet.version.get_or_insert_with(|| "v1.0.1".into());
    if kindnet.masquerade.is_none() {
        let mut m = v::KindnetMasqueradeSpec::default();
        if ipv6 {
            m.enabled = Some(false);
            if !aws {
                kindnet.nat64 = Some(true);
            }
        } else {
            m.enabled = Some(true);
            let cidrs: Vec<String> = [network_cidr, pod_cidr, service_range]
                .into_iter()
                .flatten()
                .collect();
            m.non_masquerade_cidrs = (!cidrs.is_empty()).then_some(cidrs);
        }
        kindnet.masquerade = Some(m);
    }
    kindnet.fast_path_threshold.get_or_insert(0);
    kindnet.log_level.get_or_insert(2);
}

/// Cilium (kOps' `CiliumOptionsBuilder`).
fn populate_cilium(c: &mut Cluster) {
    let ipv6 = c.spec.networking.is_ipv6_only();
    let Some(ci) = c.spec.networking.cilium.as_mut() else {
        return;
    };
    ci.version.get_or_insert_with(|| "v1.18.12".into());
    ci.enable_endpoint_health_checking.get_or_insert(true);
    ci.enable_host_firewall.get_or_insert(false);
    ci.identity_allocation_mode
        .get_or_insert_with(|| "crd".into());
    ci.identity_change_grace_period
        .get_or_insert_with(|| "5s".into());
    ci.bpf_ct_global_any_max.get_or_insert(262_144);
    ci.bpf_ct_global_tcp_max.get_or_insert(524_288);
    ci.bpf_lb_algorithm.get_or_insert_with(|| "random".into());
    ci.bpf_lb_maglev_table_size
        .get_or_insert_with(|| "16381".into());
    ci.bpf_nat_global_max.get_or_insert(524_288);
    ci.bpf_neigh_global_max.get_or_insert(524_288);
    ci.bpf_policy_map_max.get_or_insert(16_384);
    ci.bpf_lb_map_max.get_or_insert(65_536);
    ci.cluster_name.get_or_insert_with(|| "default".into());
    ci.monitor_aggregation
        .get_or_insert_with(|| "medium".into());
    ci.sidecar_istio_proxy_image
        .get_or_insert_with(|| "cilium/istio_proxy".into());
    ci.to_fqdns_dns_reject_response_code
        .get_or_insert_with(|| "refused".into());
    ci.agent_prometheus_port.get_or_insert(9090);
    let ipam = ci.ipam.get_or_insert_with(|| "kubernetes".into()).clone();
    // v1alpha2 spells kOps' `masquerade` as its negation.
    ci.disable_masquerade.get_or_insert(ipv6);
    ci.tunnel.get_or_insert_with(|| {
        if ipam == "eni" || ipv6 {
            "disabled"
        } else {
            "vxlan"
        }
        .into()
    });
    ci.enable_remote_node_identity.get_or_insert(true);
    ci.enable_unreachable_routes.get_or_insert(false);
    ci.enable_bpf_masquerade.get_or_insert(ipam == "eni");
    ci.enable_l7_proxy.get_or_insert(true);
    ci.enable_local_redirect_policy.get_or_insert(false);
    ci.disable_cnp_status_updates.get_or_insert(true);
    ci.cpu_request.get_or_insert_with(|| "25m".into());
    ci.memory_request.get_or_insert_with(|| "128Mi".into());
    if ci.enable_encryption == Some(true) && ci.encryption_type.is_none() {
        ci.encryption_type = Some("ipsec".into());
    }
    ci.cni_exclusive.get_or_insert(true);
    populate_cilium_features(ci);
}

/// Cilium's Hubble, ingress and Gateway API: a given block is on unless it
/// says otherwise, a missing one is written as off.
fn populate_cilium_features(ci: &mut v::CiliumNetworkingSpec) {
    match ci.hubble.as_mut() {
        Some(h) => {
            h.enabled.get_or_insert(true);
        }
        None => {
            ci.hubble = Some(v::HubbleSpec {
                enabled: Some(false),
                ..Default::default()
            })
        }
    }
    match ci.ingress.as_mut() {
        Some(i) => {
            i.enabled.get_or_insert(true);
        }
        None => {
            ci.ingress = Some(v::CiliumIngressSpec {
                enabled: Some(false),
                ..Default::default()
            })
        }
    }
    match ci.gateway_api.as_mut() {
        Some(g) => {
            g.enabled.get_or_insert(true);
        }
        None => {
            ci.gateway_api = Some(v::CiliumGatewayAPISpec {
                enabled: Some(false),
                ..Default::default()
            })
        }
    }
}

/// Node problem detector, when configured (kOps' `NodeProblemDetectorOptionsBuilder`).
fn populate_node_problem_detector(c: &mut Cluster) {
    if let Some(npd) = c.spec.node_problem_detector.as_mut() {
        npd.enabled.get_or_insert(false);
        npd.cpu_request.get_or_insert_with(|| "20m".into());
        npd.memory_request.get_or_insert_with(|| "100Mi".into());
        npd.memory_limit.get_or_insert_with(|| "100Mi".into());
        npd.image.get_or_insert_with(|| {
            "registry.k8s.io/node-problem-detector/node-problem-detector:v0.8.18".into()
        });
    }
}

/// Karpenter, when configured (kOps' `KarpenterOptionsBuilder`).
fn populate_karpenter(c: &mut Cluster) {
    if let Some(k) = c.spec.karpenter.as_mut() {
        k.image
            .get_or_insert_with(|| "public.ecr.aws/karpenter/controller:1.13.0".into());
        k.log_encoding.get_or_insert_with(|| "console".into());
        k.log_level.get_or_insert_with(|| "debug".into());
    }
}

/// Cluster autoscaler, when enabled (kOps' `ClusterAutoscalerOptionsBuilder`):
/// the image for the Kubernetes minor version and kOps' defaults.
fn populate_cluster_autoscaler(c: &mut Cluster, k8s: &semver::Version) {
    let Some(cas) = c
        .spec
        .cluster_autoscaler
        .as_mut()
        .filter(|cas| cas.enabled == Some(true))
    else {
        return;
    };
    let image = match k8s.minor {
        32 => "v1.32.7",
        33 => "v1.33.5",
        34 => "v1.34.4",
        35 => "v1.35.1",
        _ => "v1.36.0",
    };
    cas.image
        .get_or_insert_with(|| format!("registry.k8s.io/autoscaling/cluster-autoscaler:{image}"));
    if cas.expander.as_deref().unwrap_or("").is_empty() {
        cas.expander = Some("random".into());
    }
    cas.ignore_daemon_sets_utilization.get_or_insert(false);
    cas.scale_down_utilization_threshold
        .get_or_insert_with(|| "0.5".into());
    cas.skip_nodes_with_custom_controller_pods
        .get_or_insert(true);
    cas.skip_nodes_with_local_storage.get_or_insert(true);
    cas.skip_nodes_with_system_pods.get_or_insert(true);
    cas.balance_similar_node_groups.get_or_insert(false);
    cas.emit_per_nodegroup_metrics.get_or_insert(false);
    cas.aws_use_static_instance_list.get_or_insert(false);
    cas.new_pod_scale_up_delay
        .get_or_insert_with(|| "0s".into());
    cas.scale_down_delay_after_add
        .get_or_insert_with(|| "10m0s".into());
    cas.scale_down_unneeded_time
        .get_or_insert_with(|| "10m0s".into());
    cas.scale_down_unready_time
        .get_or_insert_with(|| "20m0s".into());
    if cas
        .max_node_provision_time
        .as_deref()
        .unwrap_or("")
        .is_empty()
    {
        cas.max_node_provision_time = Some("15m0s".into());
    }
    if cas.expander.as_deref() == Some("priority") {
        cas.create_priority_expander_config = Some(true);
    }
}
