//! Validation of internal clusters and instance groups.
//!
//! Every function returns every problem at once ([`ValidationErrors`]), each
//! with a field path and a message saying what to change. Paths use the
//! **v1alpha2 spelling**, the one users see in the files they write:
//! `spec.subnets[1].cidr`, `spec.networkCIDR`, `spec.topology.dns.type`,
//! `spec.kubernetesApiAccess[0]`, `spec.rootVolumeIops` (not the internal
//! `spec.networking.subnets[1].cidr`).
//!
//! The rules follow kOps' strict validation of a completed spec: run them on
//! the output of [`crate::defaults::populate_cluster`] and
//! [`crate::defaults::populate_instance_group`], where required values such
//! as `networkCIDR`, subnet CIDRs, images and machine types have been filled.
//!
//! ```
//! use kops_api::internal::Cluster;
//! use kops_api::validation::validate_cluster;
//!
//! let errors = validate_cluster(&Cluster::default()).unwrap_err();
//! assert!(errors.errors().iter().any(|e| e.path == "metadata.name"));
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::net::IpAddr;

use ipnet::IpNet;

use crate::internal::{CloudProvider, Cluster, InstanceGroup, InstanceGroupRole};
use crate::version::{OLDEST_SUPPORTED_KUBERNETES_VERSION, parse_kubernetes_version};

/// One validation problem: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ValidationError {
    /// The object the problem is in, when the list covers several objects
    /// (`InstanceGroup nodes`); `None` for the cluster.
    pub object: Option<String>,
    /// Field path in v1alpha2 spelling, e.g. `spec.subnets[1].cidr`.
    pub path: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(o) = &self.object {
            write!(f, "{o}: ")?;
        }
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Every validation problem found, in the order found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ValidationErrors(pub Vec<ValidationError>);

impl ValidationErrors {
    /// The problems.
    pub fn errors(&self) -> &[ValidationError] {
        &self.0
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Records a problem.
    pub fn push(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(ValidationError {
            object: None,
            path: path.into(),
            message: message.into(),
        });
    }

    fn extend_for(&mut self, object: &str, other: ValidationErrors) {
        for mut e in other.0 {
            e.object.get_or_insert_with(|| object.to_string());
            self.0.push(e);
        }
    }

    fn into_result(self) -> Result<(), ValidationErrors> {
        if self.0.is_empty() { Ok(()) } else { Err(self) }
    }
}

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} validation error(s)", self.0.len())?;
        for e in &self.0 {
            write!(f, "\n  {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationErrors {}

/// The etcd cluster names kOps manages.
const ETCD_CLUSTER_NAMES: [&str; 4] = ["cilium", "main", "events", "leases"];
const SUBNET_TYPES: [&str; 4] = ["Public", "Private", "DualStack", "Utility"];
const DNS_TYPES: [&str; 3] = ["Public", "Private", "None"];
const REMOVED_CNIS: [&str; 5] = ["classic", "external", "lyftvpc", "romana", "weave"];
const POLICY_ROLES: [&str; 3] = ["control-plane", "node", "bastion"];
const AWS_ROOT_VOLUME_TYPES: [&str; 5] = ["standard", "gp3", "gp2", "io1", "io2"];

fn parse_cidr(errs: &mut ValidationErrors, path: &str, cidr: &str) -> Option<IpNet> {
    match cidr.parse::<IpNet>() {
        Ok(n) => Some(n),
        Err(_) => {
            errs.push(
                path,
                format!("{cidr:?} is not a valid CIDR (expected e.g. 172.20.0.0/16)"),
            );
            None
        }
    }
}

fn overlaps(a: &IpNet, b: &IpNet) -> bool {
    a.contains(&b.network()) || b.contains(&a.network())
}

/// A DNS-1123 subdomain: lower-case labels of letters, digits and `-`.
fn is_dns_subdomain(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

/// An HCL identifier: a letter or `_`, then letters, digits, `_` and `-`.
fn is_hcl_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The AWS region of a zone (`us-east-1a` -> `us-east-1`), GCE's likewise
/// (`us-central1-a` -> `us-central1`). The one definition of region-of-zone.
pub fn region_of_zone(zone: &str, provider: Option<CloudProvider>) -> String {
    match provider {
        Some(CloudProvider::Gce) => match zone.rfind('-') {
            Some(i) => zone[..i].to_string(),
            None => zone.to_string(),
        },
        _ => zone
            .trim_end_matches(|c: char| c.is_ascii_lowercase())
            .to_string(),
    }
}

/// Validates a completed cluster spec on its own.
pub fn validate_cluster(cluster: &Cluster) -> Result<(), ValidationErrors> {
    cluster_errors(cluster).into_result()
}

/// Validates a completed instance group on its own (rules that need the
/// cluster are in [`validate_instance_group_for_cluster`]).
pub fn validate_instance_group(ig: &InstanceGroup) -> Result<(), ValidationErrors> {
    instance_group_errors(ig).into_result()
}

/// Validates an instance group against its cluster: its own rules plus the
/// cross-checks (subnets exist, etcd membership, cloud-specific rules).
pub fn validate_instance_group_for_cluster(
    ig: &InstanceGroup,
    cluster: &Cluster,
) -> Result<(), ValidationErrors> {
    let mut errs = instance_group_errors(ig);
    cross_errors(ig, cluster, &mut errs);
    errs.into_result()
}

/// Validates a cluster and all its instance groups together, returning every
/// problem of every object. Instance-group problems carry
/// `object = "InstanceGroup <name>"`.
pub fn validate_all(cluster: &Cluster, igs: &[InstanceGroup]) -> Result<(), ValidationErrors> {
    let mut errs = cluster_errors(cluster);
    let mut names = BTreeSet::new();
    for ig in igs {
        let mut e = instance_group_errors(ig);
        cross_errors(ig, cluster, &mut e);
        if !names.insert(ig.name()) {
            e.push(
                "metadata.name",
                format!("duplicate instance group name {:?}", ig.name()),
            );
        }
        errs.extend_for(&format!("InstanceGroup {}", ig.name()), e);
    }
    let group_names: BTreeMap<&str, &InstanceGroup> = igs.iter().map(|g| (g.name(), g)).collect();
    if !igs.iter().any(|g| g.is_control_plane()) {
        errs.push(
            "instanceGroups",
            "no instance group has role Master (ControlPlane); add one per etcd member",
        );
    }
    for (i, etcd) in cluster.spec.etcd_clusters.iter().flatten().enumerate() {
        for (j, m) in etcd.etcd_members.iter().flatten().enumerate() {
            let Some(ig_name) = m.instance_group.as_deref() else {
                continue;
            };
            let path = format!("spec.etcdClusters[{i}].etcdMembers[{j}].instanceGroup");
            match group_names.get(ig_name) {
                None => errs.push(path, format!("instance group {ig_name:?} does not exist; etcd members must name a control-plane instance group")),
                Some(g) if !g.is_control_plane() => errs.push(path, format!("instance group {ig_name:?} does not have role Master (ControlPlane); etcd runs only on the control plane")),
                Some(_) => {}
            }
        }
    }
    errs.into_result()
}

fn cluster_errors(c: &Cluster) -> ValidationErrors {
    let mut errs = ValidationErrors::default();
    let spec = &c.spec;
    let net = &spec.networking;

    // Name.
    match c.metadata.name.as_deref() {
        None | Some("") => errs.push(
            "metadata.name",
            "cluster name is required (a DNS name such as mycluster.example.com)",
        ),
        Some(name) => {
            if !is_dns_subdomain(name) {
                errs.push("metadata.name", format!("{name:?} is not a valid DNS name: use lower-case letters, digits, '-' and '.'"));
            } else if !name.contains('.') {
                errs.push("metadata.name", format!("{name:?} must be a fully qualified DNS name (contain a dot), e.g. {name}.example.com"));
            }
        }
    }

    // Terraform provider settings: each key becomes an attribute of a provider block.
    if let Some(tf) = spec.target.as_ref().and_then(|t| t.terraform.as_ref()) {
        for (field, extra) in [
            ("providerExtraConfig", &tf.provider_extra_config),
            ("filesProviderExtraConfig", &tf.files_provider_extra_config),
        ] {
            for key in extra.iter().flatten().map(|(k, _)| k) {
                let path = format!("spec.target.terraform.{field}.{key}");
                if key == "alias" {
                    errs.push(path, "kops sets the providers' aliases itself (the files provider is `files`); remove this key");
                } else if !is_hcl_identifier(key) {
                    errs.push(path, format!("{key:?} is not a Terraform argument name: use letters, digits, '_' and '-', starting with a letter or '_'"));
                }
            }
        }
    }

    // Cloud provider.
    let providers = spec.cloud_provider.set();
    let provider = spec.cloud_provider.provider();
    if providers.is_empty() {
        errs.push(
            "spec.cloudProvider",
            "a cloud provider is required (aws or gce)",
        );
    } else if providers.len() > 1 {
        errs.push(
            "spec.cloudProvider",
            "only one cloudProvider option permitted",
        );
    }
    let aws = provider == Some(CloudProvider::Aws);
    let gce = provider == Some(CloudProvider::Gce);

    // Kubernetes version.
    match spec.kubernetes_version.as_deref() {
        None | Some("") => errs.push("spec.kubernetesVersion", "required (e.g. 1.34.0)"),
        Some(v) => match parse_kubernetes_version(v) {
            None => errs.push(
                "spec.kubernetesVersion",
                format!("{v:?} is not a Kubernetes version (expected e.g. 1.34.0)"),
            ),
            Some(sv) => {
                let oldest = semver::Version::parse(OLDEST_SUPPORTED_KUBERNETES_VERSION)
                    .unwrap_or(semver::Version::new(1, 32, 0));
                if (sv.major, sv.minor, sv.patch) < (oldest.major, oldest.minor, oldest.patch) {
                    errs.push("spec.kubernetesVersion", format!("version {v} is not supported: the oldest supported version is {OLDEST_SUPPORTED_KUBERNETES_VERSION}"));
                }
            }
        },
    }

    // Removed features.
    if spec.gossip_config.is_some() {
        errs.push(
            "spec.gossipConfig",
            "gossip DNS support was removed in kOps 1.37; remove this field",
        );
    }
    if spec.dns_controller_gossip_config.is_some() {
        errs.push(
            "spec.dnsControllerGossipConfig",
            "gossip DNS support was removed in kOps 1.37; remove this field",
        );
    }
    if spec.node_authorization.is_some() {
        errs.push(
            "spec.nodeAuthorization",
            "must be empty: node authorization is built into Kubernetes",
        );
    }
    if spec.docker.is_some() {
        errs.push("spec.docker", "Docker is no longer supported as container runtime (dockershim was removed in Kubernetes 1.24); use containerd");
    }

    // Access lists.
    for (field, list) in [
        ("sshAccess", &spec.ssh_access),
        ("kubernetesApiAccess", &spec.api.access),
        ("nodePortAccess", &spec.node_port_access),
    ] {
        for (i, cidr) in list.iter().flatten().enumerate() {
            let path = format!("spec.{field}[{i}]");
            if cidr.starts_with("pl-") {
                if !aws {
                    errs.push(path, "prefix list IDs (pl-...) are only supported on AWS");
                }
            } else {
                parse_cidr(&mut errs, &path, cidr);
            }
        }
    }

    if let Some(p) = spec.update_policy.as_deref()
        && p != "automatic"
        && p != "external"
    {
        errs.push(
            "spec.updatePolicy",
            format!("unsupported value {p:?}: use automatic or external"),
        );
    }
    for (i, a) in spec.addons.iter().flatten().enumerate() {
        if a.manifest
            .as_deref()
            .is_some_and(|m| m.starts_with("file://"))
        {
            errs.push(
                format!("spec.addons[{i}].manifest"),
                "file:// addon manifests are not supported; use a state-store or https location",
            );
        }
    }
    if let Some(assets) = &spec.assets
        && assets.container_proxy.is_some()
        && assets.container_registry.is_some()
    {
        errs.push(
            "spec.assets.containerProxy",
            "containerProxy cannot be used together with containerRegistry",
        );
    }
    for (i, p) in spec.sysctl_parameters.iter().flatten().enumerate() {
        if !p.contains('=') {
            errs.push(
                format!("spec.sysctlParameters[{i}]"),
                format!("{p:?} must have the form name=value"),
            );
        }
    }
    for (field, map) in [
        (
            "externalPolicies",
            spec.external_policies
                .as_ref()
                .map(|m| m.keys().cloned().collect::<Vec<_>>()),
        ),
        (
            "additionalPolicies",
            spec.additional_policies
                .as_ref()
                .map(|m| m.keys().cloned().collect()),
        ),
    ] {
        for key in map.iter().flatten() {
            if !POLICY_ROLES.contains(&key.as_str()) {
                let shown = if key == "control-plane" {
                    "master"
                } else {
                    key
                };
                errs.push(
                    format!("spec.{field}.{shown}"),
                    "unsupported role: use master, node or bastion",
                );
            }
        }
    }
    for (role, policy) in spec.additional_policies.iter().flatten() {
        if serde_json::from_str::<serde_json::Value>(policy).is_err() {
            let shown = if role == "control-plane" {
                "master"
            } else {
                role
            };
            errs.push(
                format!("spec.additionalPolicies.{shown}"),
                "policy is not valid JSON",
            );
        }
    }
    for key in spec.cloud_labels.iter().flatten().map(|(k, _)| k) {
        if key == "KubernetesCluster" || key == "Name" || key.starts_with("kubernetes.io/cluster/")
        {
            errs.push(
                format!("spec.cloudLabels.{key}"),
                "this tag is reserved for kOps; use another key",
            );
        }
    }

    // IAM.
    if let Some(iam) = &spec.iam {
        if iam.legacy == Some(true) {
            errs.push(
                "spec.iam.legacy",
                "legacy IAM permissions are no longer supported; remove it or set false",
            );
        }
        let mut seen = BTreeSet::new();
        for (i, p) in iam
            .service_account_external_permissions
            .iter()
            .flatten()
            .enumerate()
        {
            let path = format!("spec.iam.serviceAccountExternalPermissions[{i}]");
            let name = p.name.as_deref().unwrap_or("");
            let ns = p.namespace.as_deref().unwrap_or("");
            if name.is_empty() {
                errs.push(format!("{path}.name"), "service account name is required");
            }
            if ns.is_empty() {
                errs.push(
                    format!("{path}.namespace"),
                    "service account namespace is required",
                );
            }
            if !seen.insert((ns.to_string(), name.to_string())) {
                errs.push(
                    path.clone(),
                    format!("duplicate service account {ns}/{name}"),
                );
            }
            match &p.aws {
                None => errs.push(format!("{path}.aws"), "AWS permissions are required"),
                Some(a) => {
                    let inline = a.inline_policy.as_deref().is_some_and(|s| !s.is_empty());
                    let arns = a.policy_arns.as_ref().is_some_and(|v| !v.is_empty());
                    if inline == arns {
                        errs.push(
                            format!("{path}.aws"),
                            "set exactly one of inlinePolicy or policyARNs",
                        );
                    }
                }
            }
        }
    }
    if spec.karpenter.as_ref().and_then(|k| k.enabled) == Some(true)
        && spec
            .iam
            .as_ref()
            .and_then(|i| i.use_service_account_external_permissions)
            != Some(true)
    {
        errs.push(
            "spec.karpenter.enabled",
            "Karpenter requires spec.iam.useServiceAccountExternalPermissions: true",
        );
    }
    if let Some(said) = &spec.service_account_issuer_discovery {
        if said.discovery_store.is_some() && said.discovery_service.is_some() {
            errs.push(
                "spec.serviceAccountIssuerDiscovery",
                "set only one of discoveryStore or discoveryService",
            );
        }
        if said.enable_awsoidc_provider == Some(true)
            && said.discovery_store.is_none()
            && said.discovery_service.is_none()
        {
            errs.push(
                "spec.serviceAccountIssuerDiscovery.enableAWSOIDCProvider",
                "requires discoveryStore (or discoveryService) so AWS can fetch the issuer's keys",
            );
        }
    }

    // API.
    if let Some(lb) = &spec.api.load_balancer {
        let p = "spec.api.loadBalancer";
        if !aws {
            for (set, f) in [
                (lb.class.is_some(), "class"),
                (
                    lb.security_group_override.is_some(),
                    "securityGroupOverride",
                ),
                (
                    lb.additional_security_groups.is_some(),
                    "additionalSecurityGroups",
                ),
                (lb.ssl_certificate.is_some(), "sslCertificate"),
                (lb.ssl_policy.is_some(), "sslPolicy"),
                (
                    lb.cross_zone_load_balancing.is_some(),
                    "crossZoneLoadBalancing",
                ),
                (lb.access_log.is_some(), "accessLog"),
            ] {
                if set {
                    errs.push(format!("{p}.{f}"), format!("{f} is only supported on AWS"));
                }
            }
        }
        match lb.type_.as_deref() {
            None | Some("Public") => {}
            Some("Internal") => {
                let has_private = net
                    .subnets
                    .iter()
                    .flatten()
                    .any(|s| s.type_.as_deref() == Some("Private"));
                if !has_private {
                    errs.push(
                        format!("{p}.type"),
                        "an Internal load balancer needs at least one subnet of type Private",
                    );
                }
            }
            Some(t) => errs.push(
                format!("{p}.type"),
                format!("unsupported value {t:?}: use Public or Internal"),
            ),
        }
        if aws {
            match lb.class.as_deref() {
                Some("Network") => {}
                Some("Classic") => errs.push(format!("{p}.class"), "Classic load balancers are no longer supported for the API; set class: Network"),
                None => errs.push(format!("{p}.class"), "required on AWS: set class: Network"),
                Some(other) => errs.push(format!("{p}.class"), format!("unsupported value {other:?}: the only supported class is Network")),
            }
            if lb.class.as_deref() == Some("Network")
                && lb.use_for_internal_api == Some(true)
                && lb.type_.as_deref() == Some("Internal")
            {
                errs.push(format!("{p}.useForInternalApi"), "cannot be used with an internal Network load balancer (NLBs do not support hairpinning)");
            }
            if lb.ssl_policy.is_some() && lb.ssl_certificate.is_none() {
                errs.push(
                    format!("{p}.sslPolicy"),
                    "sslPolicy requires sslCertificate",
                );
            }
            for (i, sg) in lb.additional_security_groups.iter().flatten().enumerate() {
                if !sg.starts_with("sg-") {
                    errs.push(
                        format!("{p}.additionalSecurityGroups[{i}]"),
                        format!("{sg:?} is not a security group ID (sg-...)"),
                    );
                }
            }
        }
    }

    if let Some(lb) = spec.api.load_balancer.as_ref().filter(|_| aws) {
        let known: BTreeSet<&str> = net
            .subnets
            .iter()
            .flatten()
            .filter_map(|s| s.name.as_deref())
            .collect();
        for (i, sn) in lb.subnets.iter().flatten().enumerate() {
            let n = sn.name.as_deref().unwrap_or("");
            if !known.contains(n) {
                errs.push(
                    format!("spec.api.loadBalancer.subnets[{i}].name"),
                    format!("subnet {n:?} does not exist in spec.subnets"),
                );
            }
        }
    }
    if gce
        && spec
            .cloud_provider
            .gce
            .as_ref()
            .and_then(|g| g.project.as_deref())
            .unwrap_or("")
            .is_empty()
    {
        errs.push(
            "spec.project",
            "required on GCE: the project the cluster runs in",
        );
    }
    // Component settings that must agree with the cluster's networks.
    if let (Some(a), Some(range)) = (
        spec.kube_api_server
            .as_ref()
            .and_then(|a| a.service_cluster_ip_range.as_deref()),
        net.service_cluster_ip_range.as_deref(),
    ) && a != range
    {
        errs.push(
            "spec.kubeAPIServer.serviceClusterIPRange",
            format!(
                "{a} differs from spec.serviceClusterIPRange {range}; remove it or make them equal"
            ),
        );
    }
    if let Some(dns_ip) = spec.kube_dns.as_ref().and_then(|d| d.server_ip.as_deref()) {
        let local = spec
            .kube_dns
            .as_ref()
            .and_then(|d| d.node_local_dns.as_ref())
            .filter(|n| n.enabled == Some(true))
            .and_then(|n| n.local_ip.as_deref());
        for (field, k) in [
            ("kubelet", &spec.kubelet),
            ("masterKubelet", &spec.master_kubelet),
        ] {
            if let Some(cd) = k.as_ref().and_then(|k| k.cluster_dns.as_deref())
                && cd != dns_ip
                && Some(cd) != local
            {
                errs.push(format!("spec.{field}.clusterDNS"), format!("{cd} differs from spec.kubeDNS.serverIP {dns_ip} (and the node-local DNS address)"));
            }
        }
    }

    // Topology / DNS.
    let dns = net.topology.as_ref().and_then(|t| t.dns.as_deref());
    if let Some(d) = dns {
        if !DNS_TYPES.contains(&d) {
            errs.push(
                "spec.topology.dns.type",
                format!("unsupported value {d:?}: use Public, Private or None"),
            );
        } else if !aws && !gce && provider.is_some() && !c.uses_none_dns() {
            errs.push(
                "spec.topology.dns.type",
                format!(
                    "cloud provider {:?} only supports dns type None",
                    provider.map(|p| p.as_str()).unwrap_or("")
                ),
            );
        }
    }
    if c.is_gossip() && !c.uses_none_dns() {
        errs.push("spec.topology.dns.type", "gossip DNS (*.k8s.local) was removed in kOps 1.37: set topology.dns.type: None or use a hosted DNS zone");
    }
    for (field, v) in [
        (
            "masters",
            net.topology.as_ref().and_then(|t| t.masters.as_deref()),
        ),
        (
            "nodes",
            net.topology.as_ref().and_then(|t| t.nodes.as_deref()),
        ),
    ] {
        if let Some(v) = v {
            if v != "public" && v != "private" {
                errs.push(
                    format!("spec.topology.{field}"),
                    format!("unsupported value {v:?}: use public or private"),
                );
            } else {
                let wanted = if v == "private" { "Private" } else { "Public" };
                if !net
                    .subnets
                    .iter()
                    .flatten()
                    .any(|s| s.type_.as_deref() == Some(wanted))
                {
                    errs.push(
                        format!("spec.topology.{field}"),
                        format!("topology {v} needs at least one subnet of type {wanted}"),
                    );
                }
            }
        }
    }

    // Networks.
    let mut network_cidrs: Vec<IpNet> = Vec::new();
    match net.network_cidr.as_deref() {
        None | Some("") => {
            if aws {
                errs.push(
                    "spec.networkCIDR",
                    "required: the CIDR of the VPC (e.g. 172.20.0.0/16)",
                );
            }
        }
        Some(cidr) => {
            if let Some(n) = parse_cidr(&mut errs, "spec.networkCIDR", cidr) {
                network_cidrs.push(n);
            }
        }
    }
    for (i, cidr) in net.additional_network_cidrs.iter().flatten().enumerate() {
        if let Some(n) = parse_cidr(
            &mut errs,
            &format!("spec.additionalNetworkCIDRs[{i}]"),
            cidr,
        ) {
            network_cidrs.push(n);
        }
    }
    let non_masq = match net.non_masquerade_cidr.as_deref() {
        None | Some("") => {
            errs.push(
                "spec.nonMasqueradeCIDR",
                "required (e.g. 100.64.0.0/10, or ::/0 for IPv6)",
            );
            None
        }
        Some(cidr) => {
            let n = parse_cidr(&mut errs, "spec.nonMasqueradeCIDR", cidr);
            if cidr.contains(':') && cidr != "::/0" {
                errs.push(
                    "spec.nonMasqueradeCIDR",
                    "IPv6 clusters must use nonMasqueradeCIDR ::/0",
                );
            }
            let eni = net.cilium.as_ref().and_then(|c| c.ipam.as_deref()) == Some("eni");
            if let (Some(nm), Some(first)) = (n, network_cidrs.first())
                && net.amazonvpc.is_none()
                && !eni
                && !cidr.contains(':')
                && overlaps(&nm, first)
            {
                errs.push(
                    "spec.nonMasqueradeCIDR",
                    format!(
                        "{cidr} must not overlap networkCIDR {}",
                        net.network_cidr.as_deref().unwrap_or("")
                    ),
                );
            }
            n
        }
    };
    let pod = net.pod_cidr.as_deref().and_then(|cidr| {
        let n = parse_cidr(&mut errs, "spec.podCIDR", cidr)?;
        if let Some(nm) = non_masq
            && !nm.contains(&n)
        {
            errs.push(
                "spec.podCIDR",
                format!("{cidr} must be within nonMasqueradeCIDR {nm}"),
            );
        }
        Some(n)
    });
    let service = net.service_cluster_ip_range.as_deref().and_then(|cidr| {
        let n = parse_cidr(&mut errs, "spec.serviceClusterIPRange", cidr)?;
        if let Some(p) = pod
            && overlaps(&p, &n)
        {
            errs.push(
                "spec.serviceClusterIPRange",
                format!("{cidr} must not overlap podCIDR {p}"),
            );
        }
        Some(n)
    });
    if let Some(kcm) = spec
        .kube_controller_manager
        .as_ref()
        .and_then(|k| k.cluster_cidr.as_deref())
        && let Some(n) = parse_cidr(&mut errs, "spec.kubeControllerManager.clusterCIDR", kcm)
        && let Some(nm) = non_masq
        && !nm.contains(&n)
    {
        errs.push(
            "spec.kubeControllerManager.clusterCIDR",
            format!("{kcm} must be within nonMasqueradeCIDR {nm}"),
        );
    }
    if let Some(ip) = spec.kube_dns.as_ref().and_then(|k| k.server_ip.as_deref()) {
        match ip.parse::<IpAddr>() {
            Err(_) => errs.push(
                "spec.kubeDNS.serverIP",
                format!("{ip:?} is not an IP address"),
            ),
            Ok(addr) => {
                if let Some(s) = service
                    && !s.contains(&addr)
                {
                    errs.push(
                        "spec.kubeDNS.serverIP",
                        format!("{ip} must be within serviceClusterIPRange {s}"),
                    );
                }
            }
        }
    }

    // Subnets.
    let subnets = net.subnets.as_deref().unwrap_or(&[]);
    if subnets.is_empty() && (aws || gce) {
        errs.push("spec.subnets", "at least one subnet is required (one per zone, e.g. name: us-east-1a, zone: us-east-1a, type: Public)");
    }
    let mut names = BTreeSet::new();
    let mut parsed: Vec<(usize, IpNet)> = Vec::new();
    let has_id = subnets.first().is_some_and(|s| s.id.is_some());
    let mut region: Option<(usize, String)> = None;
    for (i, s) in subnets.iter().enumerate() {
        let p = format!("spec.subnets[{i}]");
        let name = s.name.as_deref().unwrap_or("");
        if name.is_empty() {
            errs.push(format!("{p}.name"), "subnet name is required");
        } else if !names.insert(name) {
            errs.push(
                format!("{p}.name"),
                format!("duplicate subnet name {name:?}"),
            );
        }
        if s.id.is_some() != has_id {
            errs.push(format!("{p}.id"), "cannot mix subnets with and without id: either all subnets are existing ones or none");
        }
        match s.type_.as_deref() {
            None => errs.push(format!("{p}.type"), "required: Public, Private or Utility"),
            Some(t) if !SUBNET_TYPES.contains(&t) => errs.push(
                format!("{p}.type"),
                format!("unsupported value {t:?}: use Public, Private, Utility or DualStack"),
            ),
            Some("DualStack") if !net.is_ipv6_only() => errs.push(
                format!("{p}.type"),
                "DualStack subnets may only be used in IPv6 clusters (nonMasqueradeCIDR ::/0)",
            ),
            _ => {}
        }
        match s.cidr.as_deref() {
            None => {
                if aws && s.id.is_none() && !(net.is_ipv6_only() && s.ipv6_cidr.is_some()) {
                    errs.push(
                        format!("{p}.cidr"),
                        "subnet has no cidr (it is assigned when the spec is populated)",
                    );
                }
            }
            Some(cidr) => {
                if let Some(n) = parse_cidr(&mut errs, &format!("{p}.cidr"), cidr) {
                    if !network_cidrs.is_empty() && !network_cidrs.iter().any(|nc| nc.contains(&n))
                    {
                        let extra = if network_cidrs.len() > 1 {
                            " (or an additionalNetworkCIDR)"
                        } else {
                            ""
                        };
                        errs.push(
                            format!("{p}.cidr"),
                            format!(
                                "must be within spec.networkCIDR {}{extra}",
                                net.network_cidr.as_deref().unwrap_or("")
                            ),
                        );
                    }
                    if let Some(pc) = pod
                        && net.amazonvpc.is_none()
                        && overlaps(&n, &pc)
                    {
                        errs.push(
                            format!("{p}.cidr"),
                            format!("{cidr} must not overlap podCIDR {pc}"),
                        );
                    }
                    if let Some(sc) = service
                        && overlaps(&n, &sc)
                    {
                        errs.push(
                            format!("{p}.cidr"),
                            format!("{cidr} must not overlap serviceClusterIPRange {sc}"),
                        );
                    }
                    for (j, other) in &parsed {
                        if overlaps(&n, other) {
                            errs.push(
                                format!("{p}.cidr"),
                                format!("{cidr} overlaps spec.subnets[{j}].cidr {other}"),
                            );
                        }
                    }
                    parsed.push((i, n));
                }
            }
        }
        if let Some(v6) = s.ipv6_cidr.as_deref() {
            if !aws {
                errs.push(
                    format!("{p}.ipv6CIDR"),
                    "ipv6CIDR can only be specified on AWS",
                );
            } else if !v6.starts_with('/') && !v6.starts_with("::/") {
                parse_cidr(&mut errs, &format!("{p}.ipv6CIDR"), v6);
            }
        }
        if let Some(egress) = s.egress.as_deref() {
            let kind = egress.split('-').next().unwrap_or("");
            if !["nat", "eipalloc", "i", "tgw", "External"].contains(&kind) {
                errs.push(format!("{p}.egress"), format!("{egress:?} is not a NAT gateway (nat-), elastic IP (eipalloc-), NAT instance (i-), transit gateway (tgw-) or External"));
            }
            let t = s.type_.as_deref().unwrap_or("");
            if egress != "External"
                && t != "Private"
                && t != "DualStack"
                && !(t == "Public" && s.ipv6_cidr.is_some())
            {
                errs.push(
                    format!("{p}.egress"),
                    "egress can only be set on Private (or IPv6-capable Public) subnets",
                );
            }
        }
        if s.additional_routes.is_some() && aws {
            if s.id.is_some() {
                errs.push(
                    format!("{p}.additionalRoutes"),
                    "additional routes cannot be added to a shared subnet (one with id)",
                );
            } else if s.type_.as_deref() != Some("Private") {
                errs.push(
                    format!("{p}.additionalRoutes"),
                    "additional routes can only be added to Private subnets",
                );
            }
        }
        // Zones belong to the cluster's region.
        if let Some(zone) = s.zone.as_deref() {
            let r = s
                .region
                .clone()
                .unwrap_or_else(|| region_of_zone(zone, provider));
            if gce && !zone.starts_with(&format!("{r}-")) {
                errs.push(
                    format!("{p}.zone"),
                    format!("zone {zone:?} is not in region {r:?}"),
                );
            }
            match &region {
                None => region = Some((i, r)),
                Some((j, first)) if *first != r => errs.push(format!("{p}.zone"), format!("zone {zone:?} is in region {r:?} but spec.subnets[{j}] is in region {first:?}: a cluster cannot span regions")),
                _ => {}
            }
        } else if let Some(r) = s.region.as_deref() {
            match &region {
                None => region = Some((i, r.to_string())),
                Some((j, first)) if first != r => errs.push(format!("{p}.region"), format!("region {r:?} differs from spec.subnets[{j}] region {first:?}: a cluster cannot span regions")),
                _ => {}
            }
        } else if aws && s.id.is_none() {
            errs.push(format!("{p}.zone"), "required on AWS (e.g. us-east-1a)");
        }
    }

    // CNI.
    let cnis = net.cni_options();
    match cnis.as_slice() {
        [] => errs.push(
            "spec.networking",
            "a networking option is required (e.g. networking: {cilium: {}})",
        ),
        [one] => {
            if REMOVED_CNIS.contains(one) {
                errs.push(format!("spec.networking.{one}"), format!("{one} networking is no longer supported; choose cilium, calico, kindnet, amazonvpc or cni"));
            }
            if *one == "amazonvpc" && !aws {
                errs.push(
                    "spec.networking.amazonvpc",
                    "amazonvpc networking is only supported on AWS",
                );
            }
            if *one == "gce" && !gce {
                errs.push(
                    "spec.networking.gce",
                    "gce networking is only supported on GCE",
                );
            }
            if net.is_ipv6_only()
                && [
                    "kubenet",
                    "kopeio",
                    "kuberouter",
                    "amazonvpc",
                    "flannel",
                    "canal",
                ]
                .contains(one)
            {
                errs.push(
                    format!("spec.networking.{one}"),
                    format!("{one} does not support IPv6 clusters"),
                );
            }
            if *one == "canal"
                && let Some(v) = spec
                    .kubernetes_version
                    .as_deref()
                    .and_then(parse_kubernetes_version)
                && (v.major, v.minor) >= (1, 28)
            {
                errs.push("spec.networking.canal", "canal is not supported on Kubernetes 1.28 and later; migrate to calico or cilium");
            }
            if *one == "kuberouter"
                && spec.kube_proxy.as_ref().and_then(|k| k.enabled) != Some(false)
            {
                errs.push(
                    "spec.kubeProxy.enabled",
                    "kube-router replaces kube-proxy: set kubeProxy.enabled: false",
                );
            }
        }
        many => errs.push(
            "spec.networking",
            format!(
                "only one networking option permitted, found {}",
                many.join(", ")
            ),
        ),
    }
    if let Some(c) = net.cilium.as_ref() {
        validate_cilium(c, net.is_ipv6_only(), &mut errs);
    }

    // etcd.
    let etcd = spec.etcd_clusters.as_deref().unwrap_or(&[]);
    if etcd.is_empty() {
        errs.push(
            "spec.etcdClusters",
            "required: at least the main and events etcd clusters",
        );
    }
    let mut etcd_names = BTreeSet::new();
    for (i, e) in etcd.iter().enumerate() {
        let p = format!("spec.etcdClusters[{i}]");
        let name = e.name.as_deref().unwrap_or("");
        if !ETCD_CLUSTER_NAMES.contains(&name) {
            errs.push(
                format!("{p}.name"),
                format!("unsupported value {name:?}: use main, events, cilium or leases"),
            );
        } else if !etcd_names.insert(name) {
            errs.push(
                format!("{p}.name"),
                format!("duplicate etcd cluster {name:?}"),
            );
        }
        if let Some(prov) = e.provider.as_deref()
            && prov != "Manager"
        {
            errs.push(
                format!("{p}.provider"),
                format!("unsupported value {prov:?}: the only provider is Manager"),
            );
        }
        let members = e.etcd_members.as_deref().unwrap_or(&[]);
        if members.is_empty() {
            errs.push(
                format!("{p}.etcdMembers"),
                "at least one member is required (one per control-plane instance group)",
            );
        } else if members.len() % 2 == 0 {
            errs.push(
                format!("{p}.etcdMembers"),
                format!(
                    "has {} members; use an odd number: etcd needs a majority for quorum, so 1 member tolerates 0 failures, 3 tolerate 1, 5 tolerate 2; 2 and 4 add nothing",
                    members.len()
                ),
            );
        }
        let mut member_names = BTreeSet::new();
        for (j, m) in members.iter().enumerate() {
            let mp = format!("{p}.etcdMembers[{j}]");
            match m.name.as_deref() {
                None | Some("") => errs.push(format!("{mp}.name"), "member name is required"),
                Some(n) => {
                    if !member_names.insert(n) {
                        errs.push(format!("{mp}.name"), format!("duplicate member name {n:?}"));
                    }
                }
            }
            if m.instance_group.as_deref().unwrap_or("").is_empty() {
                errs.push(format!("{mp}.instanceGroup"), "member instanceGroup is required (the control-plane instance group it runs on)");
            }
        }
        if e.image.is_some() && e.version.is_none() {
            errs.push(
                format!("{p}.version"),
                "version must be set when image is set",
            );
        }
        if let Some(v) = e.version.as_deref() {
            match semver::Version::parse(v.trim_start_matches('v')) {
                Err(_) => errs.push(
                    format!("{p}.version"),
                    format!("{v:?} is not a valid etcd version"),
                ),
                Ok(sv) if sv.major != 3 => errs.push(
                    format!("{p}.version"),
                    format!("etcd {v} is not supported: only major version 3"),
                ),
                Ok(_) => {}
            }
        }
    }

    errs
}

fn instance_group_errors(ig: &InstanceGroup) -> ValidationErrors {
    let mut errs = ValidationErrors::default();
    let s = &ig.spec;
    match ig.metadata.name.as_deref() {
        None | Some("") => errs.push("metadata.name", "instance group name is required"),
        Some(n) if !is_dns_subdomain(n) => errs.push(
            "metadata.name",
            format!("{n:?} is not a valid name: use lower-case letters, digits, '-' and '.'"),
        ),
        _ => {}
    }
    match &s.role {
        None => errs.push("spec.role", "required: Master, Node, Bastion or APIServer"),
        Some(InstanceGroupRole::Unknown(r)) => errs.push(
            "spec.role",
            format!("unsupported value {r:?}: use Master, Node, Bastion or APIServer"),
        ),
        Some(InstanceGroupRole::ControlPlane) => {
            if s.subnets.as_ref().is_none_or(|v| v.is_empty()) {
                errs.push(
                    "spec.subnets",
                    "a control-plane instance group must name at least one subnet",
                );
            }
            if s.min_size.unwrap_or(0) > 1 {
                errs.push("spec.minSize", "a control-plane instance group must have minSize 1; add more instance groups instead");
            }
            if s.max_size.unwrap_or(0) > 1 {
                errs.push("spec.maxSize", "a control-plane instance group must have maxSize 1; add more instance groups instead");
            }
        }
        Some(_) => {}
    }
    let manager = s.manager.as_deref().unwrap_or("CloudGroup");
    if manager != "CloudGroup" && manager != "Karpenter" {
        errs.push(
            "spec.manager",
            format!("unsupported value {manager:?}: use CloudGroup or Karpenter"),
        );
    }
    if manager == "CloudGroup" {
        if s.min_size.is_none() {
            errs.push("spec.minSize", "required");
        }
        if s.max_size.is_none() {
            errs.push("spec.maxSize", "required");
        }
    }
    if let Some(min) = s.min_size
        && min < 0
    {
        errs.push("spec.minSize", format!("must not be negative (is {min})"));
    }
    if let (Some(min), Some(max)) = (s.min_size, s.max_size)
        && max < min
    {
        errs.push(
            "spec.maxSize",
            format!("maxSize {max} must be greater than or equal to minSize {min}"),
        );
    }
    if s.image.as_deref().unwrap_or("").is_empty() {
        errs.push(
            "spec.image",
            "image is required (it is filled from the channel when the spec is populated)",
        );
    }
    if manager == "CloudGroup" && s.machine_type.as_deref().unwrap_or("").is_empty() {
        errs.push(
            "spec.machineType",
            "machine type is required (e.g. t3.medium or e2-medium)",
        );
    }
    if let Some(rv) = &s.root_volume {
        if rv.iops.is_some_and(|v| v < 0) {
            errs.push("spec.rootVolumeIops", "IOPS must be greater than 0");
        }
        if rv.throughput.is_some_and(|v| v < 0) {
            errs.push(
                "spec.rootVolumeThroughput",
                "throughput must be greater than 0",
            );
        }
        if rv.size.is_some_and(|v| v <= 0) {
            errs.push("spec.rootVolumeSize", "size must be greater than 0 GB");
        }
    }
    if let Some(t) = s.tenancy.as_deref()
        && !["default", "dedicated", "host"].contains(&t)
    {
        errs.push(
            "spec.tenancy",
            format!("unsupported value {t:?}: use default, dedicated or host"),
        );
    }
    if let Some(md) = &s.instance_metadata {
        if let Some(t) = md.http_tokens.as_deref()
            && t != "optional"
            && t != "required"
        {
            errs.push(
                "spec.instanceMetadata.httpTokens",
                format!("unsupported value {t:?}: use optional or required"),
            );
        }
        if let Some(h) = md.http_put_response_hop_limit
            && !(1..=64).contains(&h)
        {
            errs.push(
                "spec.instanceMetadata.httpPutResponseHopLimit",
                format!("must be between 1 and 64 (is {h})"),
            );
        }
    }
    let mut devices = BTreeSet::new();
    for (i, v) in s.volumes.iter().flatten().enumerate() {
        let d = v.device.as_deref().unwrap_or("");
        if d.is_empty() {
            errs.push(format!("spec.volumes[{i}].device"), "device is required");
        } else if !devices.insert(d) {
            errs.push(
                format!("spec.volumes[{i}].device"),
                format!("duplicate device {d:?}"),
            );
        }
    }
    for (i, sg) in s.additional_security_groups.iter().flatten().enumerate() {
        if !sg.starts_with("sg-") {
            errs.push(
                format!("spec.additionalSecurityGroups[{i}]"),
                format!("{sg:?} is not a security group ID (sg-...)"),
            );
        }
    }
    if let Some(m) = &s.mixed_instances_policy {
        if let Some(b) = m.on_demand_base
            && (b < 0 || s.max_size.is_some_and(|max| b > i64::from(max)))
        {
            errs.push(
                "spec.mixedInstancesPolicy.onDemandBase",
                format!("must be between 0 and maxSize (is {b})"),
            );
        }
        if let Some(a) = m.on_demand_above_base
            && !(0..=100).contains(&a)
        {
            errs.push(
                "spec.mixedInstancesPolicy.onDemandAboveBase",
                format!("must be a percentage between 0 and 100 (is {a})"),
            );
        }
    }
    if let Some(p) = s.max_price.as_deref()
        && p.parse::<f64>().map_or(true, |v| v.is_nan() || v <= 0.0)
    {
        errs.push(
            "spec.maxPrice",
            format!("{p:?} is not a positive price in USD per hour (e.g. \"0.05\")"),
        );
    }
    for (i, lb) in s.external_load_balancers.iter().flatten().enumerate() {
        if lb.load_balancer_name.is_some() == lb.target_group_arn.is_some() {
            errs.push(
                format!("spec.externalLoadBalancers[{i}]"),
                "set exactly one of loadBalancerName or targetGroupArn",
            );
        }
    }
    if let Some(v) = s
        .cloud_labels
        .as_ref()
        .and_then(|l| l.get("kops.k8s.io/instancegroup"))
        && v != ig.name()
    {
        errs.push(
            "spec.cloudLabels.kops.k8s.io/instancegroup",
            format!("must equal the instance group name {:?}", ig.name()),
        );
    }
    errs
}

fn cross_errors(ig: &InstanceGroup, c: &Cluster, errs: &mut ValidationErrors) {
    let s = &ig.spec;
    let provider = c.spec.cloud_provider.provider();
    if provider == Some(CloudProvider::Gce) {
        let region = c.spec.networking.subnets.iter().flatten().find_map(|s| {
            s.region
                .clone()
                .or_else(|| s.zone.as_deref().map(|z| region_of_zone(z, provider)))
        });
        if let Some(region) = region {
            for (i, z) in s.zones.iter().flatten().enumerate() {
                if !z.starts_with(&format!("{region}-")) {
                    errs.push(
                        format!("spec.zones[{i}]"),
                        format!("zone {z:?} is not in the cluster's region {region:?}"),
                    );
                }
            }
        }
    }
    if provider != Some(CloudProvider::Aws) && s.mixed_instances_policy.is_some() {
        errs.push(
            "spec.mixedInstancesPolicy",
            "mixed instances policies are only supported on AWS",
        );
    }
    let subnets: BTreeMap<&str, &crate::v1alpha2::ClusterSubnetSpec> = c
        .spec
        .networking
        .subnets
        .iter()
        .flatten()
        .filter_map(|s| Some((s.name.as_deref()?, s)))
        .collect();
    for (i, name) in s.subnets.iter().flatten().enumerate() {
        match subnets.get(name.as_str()) {
            None => errs.push(
                format!("spec.subnets[{i}]"),
                format!("subnet {name:?} does not exist in the cluster (known: {})", subnets.keys().cloned().collect::<Vec<_>>().join(", ")),
            ),
            Some(sn) if sn.type_.as_deref() == Some("Utility") && s.role != Some(InstanceGroupRole::Bastion) => errs.push(
                format!("spec.subnets[{i}]"),
                format!("subnet {name:?} is a Utility subnet (load balancers and NAT only); run instances in Public or Private subnets"),
            ),
            _ => {}
        }
    }
    if s.role == Some(InstanceGroupRole::ApiServer) {
        match provider {
            Some(CloudProvider::Aws) => {
                if c.uses_none_dns() {
                    errs.push(
                        "spec.role",
                        "APIServer instance groups cannot be used with topology.dns.type None",
                    );
                }
            }
            Some(CloudProvider::Gce) => {}
            _ => errs.push(
                "spec.role",
                "APIServer instance groups are only supported on AWS and GCE",
            ),
        }
    }
    if ig.is_control_plane() {
        for e in c.spec.etcd_clusters.iter().flatten() {
            let has = e
                .etcd_members
                .iter()
                .flatten()
                .any(|m| m.instance_group.as_deref() == Some(ig.name()));
            if !has {
                errs.push(
                    "metadata.name",
                    format!("control-plane instance group {:?} has no member in etcd cluster {:?}; add an etcdMembers entry with instanceGroup: {}", ig.name(), e.name.as_deref().unwrap_or(""), ig.name()),
                );
            }
        }
    }
    if s.manager.as_deref() == Some("Karpenter") {
        if provider != Some(CloudProvider::Aws) {
            errs.push("spec.manager", "Karpenter is only supported on AWS");
        }
        if s.role != Some(InstanceGroupRole::Node) {
            errs.push("spec.role", "Karpenter instance groups must have role Node");
        }
    }
    if provider == Some(CloudProvider::Aws) {
        if let Some(t) = s.root_volume.as_ref().and_then(|r| r.type_.as_deref())
            && !AWS_ROOT_VOLUME_TYPES.contains(&t)
        {
            errs.push(
                "spec.rootVolumeType",
                format!("unsupported value {t:?}: use gp3, gp2, io1, io2 or standard"),
            );
        }
        let cluster_pool = c
            .spec
            .cloud_provider
            .aws
            .as_ref()
            .and_then(|a| a.warm_pool.as_ref());
        // As kOps resolves it: the cluster-wide pool applies to nodes and API servers only.
        let applies = !matches!(
            s.role,
            Some(InstanceGroupRole::ControlPlane) | Some(InstanceGroupRole::Bastion)
        );
        let pool = s
            .warm_pool
            .as_ref()
            .or(if applies { cluster_pool } else { None });
        if let Some(p) = pool {
            let max = p.max_size;
            let min = p.min_size.unwrap_or(0);
            if max != Some(0) {
                if !matches!(
                    s.role,
                    Some(InstanceGroupRole::Node) | Some(InstanceGroupRole::ApiServer)
                ) {
                    errs.push("spec.warmPool", "a warm pool is only allowed on instance groups with role Node or APIServer");
                }
                if s.max_price.is_some() {
                    errs.push(
                        "spec.warmPool",
                        "a warm pool cannot be used with spot instances (maxPrice)",
                    );
                }
            }
            if let Some(max) = max {
                if max < 0 {
                    errs.push("spec.warmPool.maxSize", "must not be negative");
                } else if min > max {
                    errs.push(
                        "spec.warmPool.maxSize",
                        format!("must not be lower than warmPool.minSize {min}"),
                    );
                }
            }
            if min < 0 {
                errs.push("spec.warmPool.minSize", "must not be negative");
            }
        }
    } else if s.warm_pool.is_some() {
        errs.push("spec.warmPool", "warm pools are only supported on AWS");
    }
}

/// Cilium's settings kOps checks: encryption (not on IPv6, a known type, the type only
/// with encryption on) and the ingress controller's load-balancer mode.
fn validate_cilium(
    c: &crate::v1alpha2::CiliumNetworkingSpec,
    ipv6: bool,
    errs: &mut ValidationErrors,
) {
    const P: &str = "spec.networking.cilium";
    let encryption = c.enable_encryption == Some(true);
    if encryption && ipv6 {
        errs.push(
            format!("{P}.enableEncryption"),
            "encryption is not supported on IPv6 clusters",
        );
    }
    if let Some(t) = c.encryption_type.as_deref().filter(|t| !t.is_empty()) {
        if !encryption {
            errs.push(
                format!("{P}.encryptionType"),
                "encryptionType requires enableEncryption",
            );
        }
        if !matches!(t, "ipsec" | "wireguard") {
            errs.push(
                format!("{P}.encryptionType"),
                format!("unsupported value {t:?}: use ipsec or wireguard"),
            );
        }
    }
    // A given `ingress` block is on unless it says otherwise (kOps' default).
    if let Some(i) = c.ingress.as_ref().filter(|i| i.enabled != Some(false))
        && let Some(mode) = i
            .default_load_balancer_mode
            .as_deref()
            .filter(|m| !m.is_empty())
        && !matches!(mode, "shared" | "dedicated")
    {
        errs.push(
            format!("{P}.ingress.defaultLoadBalancerMode"),
            format!("unsupported value {mode:?}: use shared or dedicated"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_of_zones() {
        assert_eq!(
            region_of_zone("us-east-1a", Some(CloudProvider::Aws)),
            "us-east-1"
        );
        assert_eq!(
            region_of_zone("us-central1-f", Some(CloudProvider::Gce)),
            "us-central1"
        );
    }

    #[test]
    fn dns_names() {
        assert!(is_dns_subdomain("a-b.example.com"));
        assert!(!is_dns_subdomain("A.example.com"));
        assert!(!is_dns_subdomain("a..b"));
        assert!(!is_dns_subdomain("-a.b"));
    }
}
