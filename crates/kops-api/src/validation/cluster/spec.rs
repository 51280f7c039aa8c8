//! Cluster-wide settings: the name, the cloud, the Kubernetes version, fields
//! kOps removed, access lists and the small top-level fields of the spec
//! (kOps' `validateClusterSpec` and `ValidateCluster` outside networking, etcd
//! and components).

use super::super::{ValidationErrors, is_dns_subdomain, is_hcl_identifier, parse_cidr};
use super::Cloud;
use crate::internal::Cluster;
use crate::version::{OLDEST_SUPPORTED_KUBERNETES_VERSION, parse_kubernetes_version};

/// `metadata.name`: required, a DNS name with a dot.
pub(super) fn validate_cluster_name(c: &Cluster, errs: &mut ValidationErrors) {
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
}

/// Terraform provider settings: each key becomes an attribute of a provider block.
pub(super) fn validate_terraform_target(c: &Cluster, errs: &mut ValidationErrors) {
    let Some(tf) = c.spec.target.as_ref().and_then(|t| t.terraform.as_ref()) else {
        return;
    };
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

/// `spec.cloudProvider`: exactly one. Returns the cloud the other rules ask about.
pub(super) fn validate_cloud_provider(c: &Cluster, errs: &mut ValidationErrors) -> Cloud {
    let providers = c.spec.cloud_provider.set();
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
    Cloud::of(c)
}

/// `spec.kubernetesVersion`: required, a version, not older than the oldest supported.
pub(super) fn validate_kubernetes_version(c: &Cluster, errs: &mut ValidationErrors) {
    match c.spec.kubernetes_version.as_deref() {
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
}

/// Fields of features kOps removed: gossip DNS, node authorization, Docker.
pub(super) fn validate_removed_fields(c: &Cluster, errs: &mut ValidationErrors) {
    let spec = &c.spec;
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
}

/// `sshAccess`, `kubernetesApiAccess`, `nodePortAccess`: CIDRs, or AWS prefix lists on AWS.
pub(super) fn validate_access_cidrs(c: &Cluster, cloud: Cloud, errs: &mut ValidationErrors) {
    let spec = &c.spec;
    for (field, list) in [
        ("sshAccess", &spec.ssh_access),
        ("kubernetesApiAccess", &spec.api.access),
        ("nodePortAccess", &spec.node_port_access),
    ] {
        for (i, cidr) in list.iter().flatten().enumerate() {
            let path = format!("spec.{field}[{i}]");
            if cidr.starts_with("pl-") {
                if !cloud.aws {
                    errs.push(path, "prefix list IDs (pl-...) are only supported on AWS");
                }
            } else {
                parse_cidr(errs, &path, cidr);
            }
        }
    }
}

/// `spec.updatePolicy`: automatic or external.
pub(super) fn validate_update_policy(c: &Cluster, errs: &mut ValidationErrors) {
    if let Some(p) = c.spec.update_policy.as_deref()
        && p != "automatic"
        && p != "external"
    {
        errs.push(
            "spec.updatePolicy",
            format!("unsupported value {p:?}: use automatic or external"),
        );
    }
}

/// `spec.addons`: no `file://` manifests (the nodes fetch them, not kops).
pub(super) fn validate_addons(c: &Cluster, errs: &mut ValidationErrors) {
    for (i, a) in c.spec.addons.iter().flatten().enumerate() {
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
}

/// `spec.assets`: a container proxy or a container registry, not both.
pub(super) fn validate_assets(c: &Cluster, errs: &mut ValidationErrors) {
    if let Some(assets) = &c.spec.assets
        && assets.container_proxy.is_some()
        && assets.container_registry.is_some()
    {
        errs.push(
            "spec.assets.containerProxy",
            "containerProxy cannot be used together with containerRegistry",
        );
    }
}

/// `spec.sysctlParameters`: each `name=value`.
pub(super) fn validate_sysctl_parameters(c: &Cluster, errs: &mut ValidationErrors) {
    for (i, p) in c.spec.sysctl_parameters.iter().flatten().enumerate() {
        if !p.contains('=') {
            errs.push(
                format!("spec.sysctlParameters[{i}]"),
                format!("{p:?} must have the form name=value"),
            );
        }
    }
}

/// `spec.project`: required on GCE.
pub(super) fn validate_gce_project(c: &Cluster, cloud: Cloud, errs: &mut ValidationErrors) {
    if cloud.gce
        && c.spec
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
}
