//! The cluster's rules, one function per rule, by area.
//!
//! `cluster_errors` runs them in a fixed order: the order of the problems
//! in a `ValidationErrors` is part of what users and tests read, so a new
//! rule goes where its area runs, not at the end.
//!
//! | kOps (pkg/apis/kops/validation/) | here |
//! |---|---|
//! | `validation.go` `newValidateCluster` (`ValidateObjectMeta`) | `spec::validate_cluster_name` |
//! | none (ours: Terraform provider keys) | `spec::validate_terraform_target` |
//! | `validation.go` `validateCloudProvider` | `spec::validate_cloud_provider` |
//! | `legacy.go` `ValidateCluster` (kubernetesVersion) | `spec::validate_kubernetes_version` |
//! | `validation.go` `validateClusterSpec` (gossip, nodeAuthorization, docker) | `spec::validate_removed_fields` |
//! | `validation.go` `validateClusterSpec` (sshAccess, kubernetesAPIAccess, nodePortAccess), `validateCIDR` | `spec::validate_access_cidrs` |
//! | `validation.go` `validateClusterSpec` (updatePolicy) | `spec::validate_update_policy` |
//! | `validation.go` `validateClusterSpec` (addons) | `spec::validate_addons` |
//! | `validation.go` `validateClusterSpec` (assets) | `spec::validate_assets` |
//! | `validation.go` `validateClusterSpec` (sysctlParameters) | `spec::validate_sysctl_parameters` |
//! | `validation.go` `validateExternalPolicies`, `validateAdditionalPolicy` | `iam::validate_policy_roles`, `iam::validate_additional_policies` |
//! | `cluster.go` `validateClusterCloudLabels` | `iam::validate_cloud_labels` |
//! | `validation.go` `validateClusterSpec` (iam), `validateSAExternalPermissions` | `iam::validate_iam`, `iam::validate_sa_external_permissions` |
//! | `validation.go` `validateClusterSpec` (karpenter) | `iam::validate_karpenter` |
//! | `legacy.go` `validateServiceAccountIssuerDiscovery` | `iam::validate_service_account_issuer_discovery` |
//! | `validation.go` `validateClusterSpec` (api.loadBalancer), `aws.go` `awsValidateSSLPolicy`, `awsValidateAdditionalSecurityGroups` | `api::validate_api_load_balancer` |
//! | `aws.go` `awsValidateLoadBalancerSubnets` | `api::validate_api_load_balancer_subnets` |
//! | none (ours: kOps finds the project elsewhere) | `spec::validate_gce_project` |
//! | `validation.go` `validateKubeAPIServer` (serviceClusterIPRange) | `components::validate_kube_api_server_service_range` |
//! | `legacy.go` `ValidateCluster` (kubelet clusterDNS), `isExperimentalClusterDNS` | `components::validate_kubelet_cluster_dns` |
//! | `validation.go` `validateTopology`, `validateCloudDNSTopology`, `usesLegacyGossip` | `topology::validate_topology` |
//! | `validation.go` `validateNetworking` (networkCIDR, additionalNetworkCIDRs, nonMasqueradeCIDR, podCIDR, serviceClusterIPRange), `legacy.go` `ValidateCluster` (kubeControllerManager clusterCIDR, kubeDNS serverIP) | `networking::validate_network_ranges` |
//! | `validation.go` `validateSubnets`, `validateSubnet` | `subnets::validate_subnets`, `subnets::validate_subnet` |
//! | `validation.go` `validateNetworking` (the CNI options) | `networking::validate_networking` |
//! | `validation.go` `validateNetworkingCilium` | `networking::validate_cilium` |
//! | `validation.go` `validateEtcdClusterSpec`, `validateEtcdMemberSpec`, `validateEtcdVersion` | `etcd::validate_etcd_clusters`, `etcd::validate_etcd_cluster_spec` |

mod api;
mod components;
mod etcd;
mod iam;
mod networking;
mod spec;
mod subnets;
mod topology;

use super::ValidationErrors;
use crate::internal::{CloudProvider, Cluster};

/// The cloud the cluster runs on, as the rules ask about it.
#[derive(Debug, Clone, Copy)]
struct Cloud {
    provider: Option<CloudProvider>,
    aws: bool,
    gce: bool,
}

impl Cloud {
    fn of(c: &Cluster) -> Self {
        let provider = c.spec.cloud_provider.provider();
        Cloud {
            provider,
            aws: provider == Some(CloudProvider::Aws),
            gce: provider == Some(CloudProvider::Gce),
        }
    }
}

/// Every problem of a cluster on its own, in the order users read them.
pub(super) fn cluster_errors(c: &Cluster) -> ValidationErrors {
    let mut errs = ValidationErrors::default();
    let e = &mut errs;
    spec::validate_cluster_name(c, e);
    spec::validate_terraform_target(c, e);
    let cloud = spec::validate_cloud_provider(c, e);
    spec::validate_kubernetes_version(c, e);
    spec::validate_removed_fields(c, e);
    spec::validate_access_cidrs(c, cloud, e);
    spec::validate_update_policy(c, e);
    spec::validate_addons(c, e);
    spec::validate_assets(c, e);
    spec::validate_sysctl_parameters(c, e);
    iam::validate_policy_roles(c, e);
    iam::validate_additional_policies(c, e);
    iam::validate_cloud_labels(c, e);
    iam::validate_iam(c, e);
    iam::validate_karpenter(c, e);
    iam::validate_service_account_issuer_discovery(c, e);
    api::validate_api_load_balancer(c, cloud, e);
    api::validate_api_load_balancer_subnets(c, cloud, e);
    spec::validate_gce_project(c, cloud, e);
    components::validate_kube_api_server_service_range(c, e);
    components::validate_kubelet_cluster_dns(c, e);
    topology::validate_topology(c, cloud, e);
    let ranges = networking::validate_network_ranges(c, cloud, e);
    subnets::validate_subnets(c, cloud, &ranges, e);
    networking::validate_networking(c, cloud, e);
    networking::validate_cilium(c, e);
    etcd::validate_etcd_clusters(c, e);
    errs
}
