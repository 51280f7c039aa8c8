//! Kubernetes components, as kOps' option builders in `pkg/model/components`
//! fill them, one function per builder, run in this order.

use super::network::well_known_service_ip;
use super::{Assets, SANDBOX_IMAGE, component_image, remap_image, spec_assets};
use crate::Result;
use crate::internal::{CloudProvider, Cluster};
use crate::v1alpha2 as v;

/// The components' settings, in kOps' builder order: cluster DNS domain,
/// CoreDNS and node-local DNS, kubelets, GCE cloud config, kube-apiserver,
/// kube-controller-manager, kube-scheduler, kube-proxy, containerd.
pub(super) fn populate_components(
    c: &mut Cluster,
    provider: Option<CloudProvider>,
    gce: bool,
    k8s: &semver::Version,
) -> Result<()> {
    let spec = &mut c.spec;
    if spec.cluster_dns_domain.is_none() {
        spec.cluster_dns_domain = Some("cluster.local".to_string());
    }
    let service_range = spec
        .networking
        .service_cluster_ip_range
        .clone()
        .unwrap_or_default();
    let dns_ip = well_known_service_ip(&service_range, 10)?.to_string();
    let cluster_dns = populate_kube_dns(c, provider, dns_ip);
    populate_kubelets(c, gce, k8s, &cluster_dns);
    if gce {
        populate_gce_cloud_config(c);
    }
    let images = Images::of(c);
    populate_kube_api_server(c, k8s, &images);
    let kcm_cidr = populate_kube_controller_manager(c, gce, &images);
    populate_kube_scheduler(c, &images);
    populate_kube_proxy(c, kcm_cidr, &images);
    populate_containerd(c, &images.assets);
    Ok(())
}

/// Where the components' images come from: the cluster's Kubernetes version
/// and its registry or proxy.
struct Images {
    version: String,
    assets: Assets,
}

impl Images {
    fn of(c: &Cluster) -> Self {
        Images {
            version: c.spec.kubernetes_version.clone().unwrap_or_default(),
            assets: spec_assets(&c.spec.assets),
        }
    }

    /// The image of a Kubernetes component, remapped.
    fn component(&self, component: &str) -> String {
        remap_image(&self.assets, &component_image(component, &self.version))
    }
}

/// kube-dns / CoreDNS and node-local DNS (kOps' `KubeDnsOptionsBuilder`);
/// returns the address the kubelets use for cluster DNS.
fn populate_kube_dns(c: &mut Cluster, provider: Option<CloudProvider>, dns_ip: String) -> String {
    let spec = &mut c.spec;
    let domain = spec.cluster_dns_domain.clone();
    let ipv6 = spec.networking.is_ipv6_only();
    let kd = spec.kube_dns.get_or_insert_with(Default::default);
    kd.provider.get_or_insert_with(|| "CoreDNS".into());
    kd.cache_max_size.get_or_insert(1000);
    kd.cache_max_concurrent.get_or_insert(150);
    kd.server_ip.get_or_insert_with(|| dns_ip.clone());
    if kd.domain.is_none() {
        kd.domain = domain;
    }
    kd.memory_request.get_or_insert_with(|| "70Mi".into());
    kd.cpu_request.get_or_insert_with(|| "100m".into());
    kd.memory_limit.get_or_insert_with(|| "170Mi".into());
    if ipv6 && provider == Some(CloudProvider::Aws) && kd.upstream_nameservers.is_none() {
        kd.upstream_nameservers = Some(vec!["fd00:ec2::253".to_string()]);
    }
    let nl = kd.node_local_dns.get_or_insert_with(Default::default);
    let nl_enabled = *nl.enabled.get_or_insert(false);
    if nl_enabled {
        nl.local_ip.get_or_insert_with(|| {
            if ipv6 {
                "fd00:90de:d95::1"
            } else {
                "169.254.20.10"
            }
            .to_string()
        });
        nl.forward_to_kube_dns.get_or_insert(false);
    }
    nl.image
        .get_or_insert_with(|| "registry.k8s.io/dns/k8s-dns-node-cache:1.26.0".into());
    nl.memory_request.get_or_insert_with(|| "5Mi".into());
    nl.cpu_request.get_or_insert_with(|| "25m".into());
    if nl_enabled {
        nl.local_ip.clone().unwrap_or_default()
    } else {
        dns_ip
    }
}

/// The cluster's kubelet and control-plane kubelet (kOps' `KubeletOptionsBuilder`).
fn populate_kubelets(c: &mut Cluster, gce: bool, k8s: &semver::Version, cluster_dns: &str) {
    let spec = &mut c.spec;
    let domain = spec.cluster_dns_domain.clone();
    let amazon_vpc = spec.networking.amazonvpc.is_some();
    let anonymous_off = spec.kubelet.as_ref().and_then(|k| k.anonymous_auth) == Some(false);
    for (kubelet, control_plane) in [(&mut spec.kubelet, false), (&mut spec.master_kubelet, true)] {
        let k = kubelet.get_or_insert_with(Default::default);
        k.enable_debugging_handlers = Some(true);
        k.pod_manifest_path = Some("/etc/kubernetes/manifests".to_string());
        k.log_level = Some(2);
        k.cluster_domain = domain.clone();
        k.allow_privileged = None;
        k.cluster_dns.get_or_insert_with(|| cluster_dns.to_string());
        k.eviction_hard.get_or_insert_with(|| {
            "memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<10%,imagefs.inodesFree<5%".to_string()
        });
        k.kubeconfig_path = Some("/var/lib/kubelet/kubeconfig".to_string());
        k.cgroup_root = Some("/".to_string());
        k.cloud_provider = Some("external".to_string());
        if gce {
            k.hairpin_mode = Some("promiscuous-bridge".to_string());
        }
        k.cgroup_driver = Some("systemd".to_string());
        k.protect_kernel_defaults.get_or_insert(true);
        if amazon_vpc {
            k.shutdown_grace_period = Some("0s".to_string());
            k.shutdown_grace_period_critical_pods = Some("0s".to_string());
        } else if k.shutdown_grace_period.is_none() {
            k.shutdown_grace_period = Some("30s".to_string());
            k.shutdown_grace_period_critical_pods = Some("10s".to_string());
        }
        if (k8s.major, k8s.minor) < (1, 34) {
            k.register_schedulable = Some(true);
        }
        if control_plane && anonymous_off {
            k.anonymous_auth = Some(false);
        }
        // etcd-manager mounts its image as a volume on the control plane.
        if control_plane && (k8s.major, k8s.minor) >= (1, 32) && (k8s.major, k8s.minor) < (1, 36) {
            k.feature_gates
                .get_or_insert_with(Default::default)
                .entry("ImageVolume".to_string())
                .or_insert_with(|| "true".to_string());
        }
    }
}

/// GCE: multi-zone, and the node tag firewall rules select nodes by.
fn populate_gce_cloud_config(c: &mut Cluster) {
    if let Some(g) = c.spec.cloud_provider.gce.as_mut() {
        g.multizone = Some(true);
        let name = c.metadata.name.as_deref().unwrap_or("");
        let tag = crate::naming::cluster_prefixed_name("k8s-io-role-node", name, 63);
        g.node_tags = Some(tag);
    }
}

/// kube-apiserver (kOps' `KubeAPIServerOptionsBuilder`).
fn populate_kube_api_server(c: &mut Cluster, k8s: &semver::Version, images: &Images) {
    let spec = &mut c.spec;
    let ipv6 = spec.networking.is_ipv6_only();
    let main_members = spec
        .etcd_clusters
        .iter()
        .flatten()
        .find(|e| e.name.as_deref() == Some("main"))
        .map(|e| e.etcd_members.as_ref().map_or(0, Vec::len))
        .unwrap_or(0);
    let etcd_major = spec
        .etcd_clusters
        .iter()
        .flatten()
        .next()
        .and_then(|e| e.version.as_deref())
        .and_then(|v| semver::Version::parse(v.trim_start_matches('v')).ok())
        .map(|v| v.major);
    let etcd_names: Vec<String> = spec
        .etcd_clusters
        .iter()
        .flatten()
        .filter_map(|e| e.name.clone())
        .collect();
    let authz = spec.authorization.clone().unwrap_or_default();
    let kopeio_authn = spec
        .authentication
        .as_ref()
        .is_some_and(|a| a.kopeio.is_some());
    let metrics_server = spec.metrics_server.as_ref().and_then(|m| m.enabled) == Some(true);
    let service_range = spec.networking.service_cluster_ip_range.clone();
    let a = spec.kube_api_server.get_or_insert_with(Default::default);
    if a.api_server_count.is_none() && main_members > 0 {
        a.api_server_count = i32::try_from(main_members).ok();
    }
    if a.storage_backend.is_none()
        && let Some(major) = etcd_major
    {
        a.storage_backend = Some(format!("etcd{major}"));
    }
    a.kubelet_preferred_address_types
        .get_or_insert_with(|| vec!["InternalIP".into(), "Hostname".into(), "ExternalIP".into()]);
    if kopeio_authn {
        a.authentication_token_webhook_config_file = Some("/etc/kubernetes/authn.config".into());
    }
    if authz.always_allow.is_some() {
        a.authorization_mode = Some("AlwaysAllow".into());
    } else if authz.rbac.is_some() {
        a.authorization_mode = Some("Node,RBAC".into());
    }
    a.requestheader_allowed_names = Some(vec!["aggregator".into()]);
    a.requestheader_extra_header_prefixes = Some(vec!["X-Remote-Extra-".into()]);
    a.requestheader_group_headers = Some(vec!["X-Remote-Group".into()]);
    a.requestheader_username_headers = Some(vec!["X-Remote-User".into()]);
    a.image = Some(images.component("kube-apiserver"));
    if (k8s.major, k8s.minor) < (1, 33) {
        a.cloud_provider = Some("external".into());
    }
    a.log_level = Some(2);
    a.secure_port = Some(443);
    a.bind_address = Some(if ipv6 { "::" } else { "0.0.0.0" }.into());
    a.allow_privileged = Some(true);
    a.service_cluster_ip_range = service_range;
    populate_etcd_servers(a, &etcd_names);
    populate_admission_plugins(a);
    a.anonymous_auth = Some(false);
    a.insecure_bind_address = None;
    a.insecure_port = None;
    if metrics_server && a.enable_aggregator_routing.is_none() {
        a.enable_aggregator_routing = Some(true);
    }
}

/// kube-apiserver's etcd servers: main on 4001, events and leases as overrides.
fn populate_etcd_servers(a: &mut v::KubeAPIServerConfig, etcd_names: &[String]) {
    let mut servers = Vec::new();
    let mut overrides = Vec::new();
    for name in etcd_names {
        match name.as_str() {
            "main" => servers.push("https://127.0.0.1:4001".to_string()),
            "events" => overrides.push("/events#https://127.0.0.1:4002".to_string()),
            "leases" => {
                overrides.push("coordination.k8s.io/leases#https://127.0.0.1:4003".to_string())
            }
            _ => {}
        }
    }
    a.etcd_servers = (!servers.is_empty()).then_some(servers);
    a.etcd_servers_overrides = (!overrides.is_empty()).then_some(overrides);
}

/// kube-apiserver's admission plugins: kOps' list, then the appended ones.
fn populate_admission_plugins(a: &mut v::KubeAPIServerConfig) {
    let mut plugins: Vec<String> = [
        "DefaultStorageClass",
        "DefaultTolerationSeconds",
        "LimitRanger",
        "MutatingAdmissionWebhook",
        "NamespaceLifecycle",
        "NodeRestriction",
        "ResourceQuota",
        "RuntimeClass",
        "ServiceAccount",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionWebhook",
    ]
    .iter()
    .map(|p| p.to_string())
    .collect();
    plugins.extend(a.append_admission_plugins.iter().flatten().cloned());
    a.enable_admission_plugins = Some(plugins);
}

/// kube-controller-manager (kOps' `KubeControllerManagerOptionsBuilder`);
/// returns its cluster CIDR for kube-proxy.
fn populate_kube_controller_manager(c: &mut Cluster, gce: bool, images: &Images) -> Option<String> {
    let name = c.metadata.name.clone();
    let spec = &mut c.spec;
    // kops-controller allocates pod CIDRs on IPv6 clusters.
    let kops_ipam = spec.networking.is_ipv6_only();
    let pod_cidr = spec.networking.pod_cidr.clone();
    let net = &spec.networking;
    let routes = if net.kubenet.is_some() {
        Some(true)
    } else if net.cni_options().is_empty() {
        None
    } else {
        Some(false)
    };
    let gce_aliases = gce && (net.gce.is_some() || net.kindnet.is_some());
    let kcm = spec
        .kube_controller_manager
        .get_or_insert_with(Default::default);
    if kcm
        .attach_detach_reconcile_sync_period
        .as_deref()
        .is_none_or(|d| d == "0s")
    {
        kcm.attach_detach_reconcile_sync_period = Some("1m0s".into());
    }
    kcm.cluster_name = name;
    kcm.cloud_provider = Some("external".into());
    kcm.log_level.get_or_insert(2);
    kcm.image = Some(images.component("kube-controller-manager"));
    kcm.leader_election = Some(v::LeaderElectionConfiguration {
        leader_elect: Some(true),
        ..Default::default()
    });
    kcm.allocate_node_cidrs = Some(!kops_ipam && !gce_aliases);
    if kcm.cluster_cidr.is_none() && !kops_ipam {
        kcm.cluster_cidr = pod_cidr;
    }
    if routes.is_some() {
        kcm.configure_cloud_routes = routes;
    }
    kcm.use_service_account_credentials.get_or_insert(true);
    if kops_ipam && kcm.controllers.as_ref().is_none_or(|c| c.is_empty()) {
        kcm.controllers = Some(vec!["*".into(), "-nodeipam".into()]);
    }
    kcm.cluster_cidr.clone()
}

/// kube-scheduler (kOps' `KubeSchedulerOptionsBuilder`).
fn populate_kube_scheduler(c: &mut Cluster, images: &Images) {
    let sch = c.spec.kube_scheduler.get_or_insert_with(Default::default);
    sch.log_level.get_or_insert(2);
    sch.image
        .get_or_insert_with(|| images.component("kube-scheduler"));
    sch.leader_election
        .get_or_insert_with(|| v::LeaderElectionConfiguration {
            leader_elect: Some(true),
            ..Default::default()
        });
}

/// kube-proxy (kOps' `KubeProxyOptionsBuilder`): the controller manager's
/// cluster CIDR unless kops-controller or the Amazon VPC CNI hands out pod IPs.
fn populate_kube_proxy(c: &mut Cluster, kcm_cidr: Option<String>, images: &Images) {
    let spec = &mut c.spec;
    let kops_ipam = spec.networking.is_ipv6_only();
    let amazon_vpc = spec.networking.amazonvpc.is_some();
    let kp = spec.kube_proxy.get_or_insert_with(Default::default);
    kp.log_level.get_or_insert(2);
    kp.cpu_request.get_or_insert_with(|| "100m".into());
    kp.image = Some(images.component("kube-proxy"));
    if kp.cluster_cidr.is_none() && !kops_ipam && !amazon_vpc {
        kp.cluster_cidr = kcm_cidr.filter(|c| !c.is_empty());
    }
}

/// containerd (kOps' `ContainerdOptionsBuilder`): version, sandbox image,
/// NVIDIA and gVisor defaults.
fn populate_containerd(c: &mut Cluster, assets: &Assets) {
    let ctr = c.spec.containerd.get_or_insert_with(Default::default);
    if ctr.version.as_deref().unwrap_or("").is_empty() {
        ctr.version = Some("2.3.4".into());
        ctr.runc = Some(v::Runc {
            version: Some("1.4.3".into()),
            ..Default::default()
        });
    }
    ctr.log_level = Some("info".into());
    if ctr.sandbox_image.as_deref().unwrap_or("").is_empty() {
        ctr.sandbox_image = Some(remap_image(assets, SANDBOX_IMAGE));
    }
    if let Some(n) = ctr.nvidia_gpu.as_mut()
        && n.enabled == Some(true)
    {
        n.package
            .get_or_insert_with(|| "nvidia-driver-535-server".into());
        n.image
            .get_or_insert_with(|| "nvcr.io/nvidia/k8s-device-plugin:v0.17.3".into());
    }
    if let Some(g) = ctr.gvisor.as_mut()
        && g.enabled == Some(true)
    {
        g.platform.get_or_insert_with(|| "systrap".into());
    }
}
