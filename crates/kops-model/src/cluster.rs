//! What every cloud's model reads from the completed spec: kOps' `KopsModelContext`.
//!
//! [`ClusterContext`] holds the completed cluster and instance groups, the region, the
//! admin SSH key, the kOps release whose nodeup and images the cluster uses, and the store
//! the cluster's managed files go to, plus the helpers derived from them (subnets, DNS
//! mode, names, tags, the zones of a group). A cloud's context adds what it looked up in
//! the cloud (the AWS one: [`crate::aws::ModelContext`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use kops_api::internal::{Cluster, InstanceGroup, InstanceGroupRole};
use kops_api::keyset::Keyset;
use kops_api::v1alpha2::ClusterSubnetSpec;
use kops_statestore::{Store, StoreUrl};

use crate::error::{Result, invalid};

/// The kOps release a cluster uses when nothing else is said: the version of nodeup and
/// of kOps' own images (`registry.k8s.io/kops/kube-apiserver-healthcheck:<release>`,
/// `registry.k8s.io/kops/channels:<release>`) and the content of `kops-version.txt`.
///
/// This is the release kOps' own integration cases are rendered with, and it is
/// published: its images exist. Set another with
/// [`ClusterContext::with_kops_release`] (or the discovery option of the same name).
pub const DEFAULT_KOPS_RELEASE: &str = "1.34.0-beta.1";

/// The cloud-neutral part of a model context: the completed spec and what derives from it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ClusterContext {
    /// The populated (completed) cluster.
    pub cluster: Cluster,
    /// The populated instance groups.
    pub groups: Vec<InstanceGroup>,
    /// The region.
    pub region: String,
    /// The admin SSH public key (authorized_keys line), if any.
    pub ssh_public_key: Option<String>,
    /// The kOps release whose nodeup and images the cluster uses (see
    /// [`DEFAULT_KOPS_RELEASE`]).
    pub kops_release: String,
    /// Extra files to store with the cluster, by path relative to the config base.
    pub extra_files: BTreeMap<String, String>,
    /// The store rooted at the cluster's config base, where direct apply writes the
    /// managed files; `None` when the context only renders (Terraform, tests).
    pub config_store: Option<Arc<dyn Store>>,
    /// The AWS partition and account the cluster lives in, once the cloud model knows
    /// them (addons name the NTH queue URL and service-account role ARNs with them).
    pub(crate) aws_account: Option<(String, String)>,
    /// The root device name of each resolved AWS image, by the instance groups' `image`
    /// value (Karpenter's node classes override the image's root volume by this name).
    pub(crate) aws_root_devices: BTreeMap<String, String>,
    /// The cluster's keysets by name (`kubernetes-ca`, `service-account`, ...), read from
    /// the keystore or newly generated; the nodeup configs carry their certificates and
    /// primary ids.
    pub keysets: BTreeMap<String, Keyset>,
    /// Keysets generated for this cluster that the keystore does not hold yet: an update
    /// writes them to `pki/private/<name>/keyset.yaml`.
    pub new_keysets: Vec<String>,
    /// The cluster's additional objects: the non-kOps objects stored with it (kOps'
    /// `clusteraddons/default`), such as a `KubeSchedulerConfiguration`.
    pub additional_objects: Vec<serde_json::Value>,
    /// SHA-256 of asset files the built-in table lacks, by URL (see
    /// [`crate::nodeup::assets::fetch_missing_hashes`]).
    pub asset_hashes: BTreeMap<String, String>,
    /// `base64url(sha256(secrets/encryptionconfig))` when `spec.encryptionConfig` is on:
    /// it reaches the nodeup config of API-server machines.
    pub encryption_config_hash: Option<String>,
    /// The `ciliumpassword` secret's text (Cilium's IPsec keys) when the store holds one:
    /// the Cilium addon puts it in a Secret (see [`crate::files::prepare_boot`]).
    pub(crate) cilium_password: Option<String>,
    /// The Hetzner API token the cluster's components use (kOps passes `HCLOUD_TOKEN` to
    /// etcd-manager, kops-channels, kops-controller and the `hcloud` Secret); set through
    /// `HetznerModelContext::with_token`. A file holding it is sensitive.
    pub(crate) hcloud_token: Option<kops_tasks::Sensitive>,
    /// Whether the Hetzner files are written byte for byte as kOps writes them, the API
    /// token in Terraform's data files and the autoscaler's SSH key included; set through
    /// `HetznerModelContext::with_kops_identical_files`.
    pub(crate) hcloud_kops_identical: bool,
    /// The groups whose machines an update builds (launch templates, autoscaling groups,
    /// instance templates, nodeup configs), when an update names some (kOps'
    /// `--instance-group`, `--instance-group-roles`); `None`: every group. The other
    /// groups' machines are left as they are, and everything the cluster shares is still
    /// built from all groups.
    pub(crate) updated_groups: Option<BTreeSet<String>>,
    /// The images and files the model names while it is built (see [`crate::assets`]).
    pub(crate) assets: crate::assets::AssetRecorder,
    /// Each group's nodeup files while a model build is under way.
    pub(crate) nodeup_memo: crate::nodeup::Memo,
    /// The config base's listings an executor run made (see [`crate::files::Listings`]).
    pub(crate) file_listings: Arc<crate::files::Listings>,
    /// The Kubernetes version (`1.33.5`) of the machines that run no API server while the
    /// control plane runs an older one than the spec names, an upgrade under way (see
    /// [`ClusterContext::with_control_plane_version`]).
    pub(crate) node_kubernetes_version: Option<String>,
}

impl ClusterContext {
    /// `body` with the arguments `spec.target.terraform` adds to a Terraform provider
    /// block, as kOps renders them (they win over kOps' own, such as `region`): the main
    /// provider's (`providerExtraConfig`), or with `files` the managed files' provider's
    /// (`filesProviderExtraConfig`).
    pub(crate) fn terraform_provider(
        &self,
        mut body: kops_tasks::terraform::Body,
        files: bool,
    ) -> kops_tasks::terraform::Body {
        let tf = self
            .cluster
            .spec
            .target
            .as_ref()
            .and_then(|t| t.terraform.as_ref());
        let extra = tf.and_then(|t| {
            if files {
                t.files_provider_extra_config.as_ref()
            } else {
                t.provider_extra_config.as_ref()
            }
        });
        for (k, v) in extra.into_iter().flatten() {
            body.set(k.as_str(), v.as_str());
        }
        body
    }

    /// The region of the bucket the managed files go to, as the config store reports
    /// it ([`Store::region`]: an S3 bucket's); `None` for a store without one. kOps
    /// names the bucket's region in Terraform's files provider, which may differ from
    /// the cluster's.
    pub(crate) fn files_region(&self) -> Option<String> {
        self.config_store.as_ref().and_then(|s| s.region())
    }

    /// A context for a completed cluster and its groups in `region`.
    pub fn new(cluster: Cluster, groups: Vec<InstanceGroup>, region: impl Into<String>) -> Self {
        ClusterContext {
            cluster,
            groups,
            region: region.into(),
            ssh_public_key: None,
            kops_release: DEFAULT_KOPS_RELEASE.to_owned(),
            extra_files: BTreeMap::new(),
            config_store: None,
            aws_account: None,
            aws_root_devices: BTreeMap::new(),
            keysets: BTreeMap::new(),
            new_keysets: Vec::new(),
            asset_hashes: BTreeMap::new(),
            encryption_config_hash: None,
            cilium_password: None,
            hcloud_token: None,
            hcloud_kops_identical: false,
            additional_objects: Vec::new(),
            updated_groups: None,
            assets: Default::default(),
            nodeup_memo: Default::default(),
            file_listings: Default::default(),
            node_kubernetes_version: None,
        }
    }

    /// The cloud credentials kOps hands to its system components as environment variables
    /// (its `BuildSystemComponentEnvVars`, which copies them from its own environment):
    /// here only what the context was given, the Hetzner token as `HCLOUD_TOKEN`.
    pub(crate) fn credential_env(&self) -> Vec<(&'static str, &str)> {
        let mut env = Vec::new();
        if let Some(token) = &self.hcloud_token {
            env.push(("HCLOUD_TOKEN", token.expose()));
        }
        env
    }

    /// Whether an update builds the machines of `ig` (see
    /// [`crate::update::UpdateOptions::with_instance_groups`]).
    pub(crate) fn builds_group(&self, ig: &InstanceGroup) -> bool {
        self.updated_groups
            .as_ref()
            .is_none_or(|names| names.contains(ig.name()))
    }

    /// Sets the Kubernetes version the control plane runs (its oldest kubelet, as the
    /// cluster's API reports it). When it is older than the spec's, the machines of the
    /// other groups keep it (their kubelet, and the version in their nodeup config) until
    /// the control plane runs the spec's: a kubelet must never be newer than the API
    /// server (kOps' kubelet version skew rule). `None`, or a version no older than the
    /// spec's, changes nothing.
    pub fn with_control_plane_version(mut self, running: Option<&str>) -> Self {
        self.set_control_plane_version(running);
        self
    }

    /// [`ClusterContext::with_control_plane_version`] on a context already built (after
    /// discovery, when the version was asked with the keysets discovery read).
    pub fn set_control_plane_version(&mut self, running: Option<&str>) {
        let parse = |v: &str| kops_api::version::parse_kubernetes_version(v);
        let spec = self
            .cluster
            .spec
            .kubernetes_version
            .as_deref()
            .and_then(parse);
        self.node_kubernetes_version = match (running.and_then(parse), spec) {
            (Some(running), Some(spec)) if running < spec => Some(running.to_string()),
            _ => None,
        };
    }

    /// The Kubernetes version (`1.34.1`) of `ig`'s machines: the spec's, or for a group
    /// that runs no API server the control plane's while that is older (see
    /// [`ClusterContext::with_control_plane_version`]).
    pub(crate) fn kubernetes_version_of(&self, ig: &InstanceGroup) -> String {
        let runs_api = matches!(
            ig.spec.role,
            Some(InstanceGroupRole::ControlPlane | InstanceGroupRole::ApiServer)
        );
        match &self.node_kubernetes_version {
            Some(v) if !runs_api => v.clone(),
            _ => crate::nodeup::assets::kubernetes_version(self),
        }
    }

    /// Sets the admin SSH public key.
    pub fn with_ssh_public_key(mut self, key: impl Into<String>) -> Self {
        self.ssh_public_key = Some(key.into());
        self
    }

    /// Sets the kOps release (see [`DEFAULT_KOPS_RELEASE`]).
    pub fn with_kops_release(mut self, release: impl Into<String>) -> Self {
        self.kops_release = release.into();
        self
    }

    /// Sets the cluster's additional objects (see [`ClusterContext::additional_objects`]).
    pub fn with_additional_objects(mut self, objects: Vec<serde_json::Value>) -> Self {
        self.additional_objects = objects;
        self
    }

    /// Sets the store rooted at the config base (where managed files are written).
    pub fn with_config_store(mut self, store: Arc<dyn Store>) -> Self {
        self.config_store = Some(store);
        self
    }

    /// Sets the keysets (by name).
    pub fn with_keysets(mut self, keysets: BTreeMap<String, Keyset>) -> Self {
        self.keysets = keysets;
        self
    }

    /// Generates every keyset kOps creates for this spec that [`Self::keysets`] lacks
    /// (kOps' `pki::ensure_keysets`), and records them in [`Self::new_keysets`] so that an
    /// update stores them.
    pub fn ensure_keysets(&mut self, now: std::time::SystemTime) -> Result<()> {
        let created = crate::pki::ensure_keysets(&self.cluster, &mut self.keysets, now)?;
        self.new_keysets.extend(created);
        Ok(())
    }

    /// The cluster name.
    pub fn name(&self) -> &str {
        self.cluster.name()
    }

    /// Whether the cluster publishes no DNS records: `topology.dns.type: None`, or a
    /// gossip name (`*.k8s.local`).
    pub fn dns_none(&self) -> bool {
        self.cluster.uses_none_dns() || self.cluster.is_gossip()
    }

    /// `spec.configBase`, parsed; an error naming the field when it is missing or not a
    /// store URL.
    pub fn config_base(&self) -> Result<(&str, StoreUrl)> {
        let base = self
            .cluster
            .spec
            .config_store
            .base
            .as_deref()
            .ok_or_else(|| invalid("spec.configBase", "not set"))?;
        let url = StoreUrl::parse(base).map_err(|e| invalid("spec.configBase", e.to_string()))?;
        Ok((base, url))
    }

    /// The spec's subnets.
    pub(crate) fn subnets(&self) -> &[ClusterSubnetSpec] {
        self.cluster
            .spec
            .networking
            .subnets
            .as_deref()
            .unwrap_or_default()
    }

    /// The subnet with this name.
    pub(crate) fn subnet(&self, name: &str) -> Option<&ClusterSubnetSpec> {
        self.subnets()
            .iter()
            .find(|s| s.name.as_deref() == Some(name))
    }

    /// The type of the group's first subnet (`Public` when the subnet gives none), which
    /// decides as in kOps whether its machines get a public address; `None` when the
    /// group names no subnet of the cluster.
    pub(crate) fn first_subnet_type(&self, ig: &InstanceGroup) -> Option<&str> {
        let first = ig.spec.subnets.iter().flatten().next()?;
        Some(self.subnet(first)?.type_.as_deref().unwrap_or("Public"))
    }

    /// Whether the network is shared (`networkID` set).
    pub(crate) fn shared_vpc(&self) -> bool {
        self.cluster.spec.networking.network_id.is_some()
    }

    /// Whether the cluster is IPv6-only (pods and services on IPv6).
    pub(crate) fn is_ipv6_only(&self) -> bool {
        self.cluster.is_ipv6_only()
    }

    /// Whether the cluster has dedicated API-server groups. kOps creates those only with
    /// its `APIServerNodes` feature on, which also moves etcd's client URLs to
    /// `<etcd>.etcd.internal.<cluster>` so that API servers off the control plane reach
    /// them; such a cluster is one with that feature on.
    pub(crate) fn has_api_server_nodes(&self) -> bool {
        self.groups
            .iter()
            .any(|g| g.spec.role == Some(InstanceGroupRole::ApiServer))
    }

    /// Whether the API has a load balancer.
    pub(crate) fn has_api_lb(&self) -> bool {
        self.cluster.spec.api.load_balancer.is_some()
    }

    /// The instance groups with a role.
    pub(crate) fn groups_with(
        &self,
        role: &InstanceGroupRole,
    ) -> impl Iterator<Item = &InstanceGroup> {
        self.groups
            .iter()
            .filter(move |g| g.spec.role.as_ref() == Some(role))
    }

    /// Whether some group has this role.
    pub(crate) fn has_role(&self, role: &InstanceGroupRole) -> bool {
        self.groups_with(role).next().is_some()
    }

    /// Whether a group is managed by Karpenter (no autoscaling group).
    pub(crate) fn is_karpenter(ig: &InstanceGroup) -> bool {
        ig.spec.manager.as_deref() == Some("Karpenter")
    }

    /// Whether node-termination-handler runs in queue mode (SQS + EventBridge) on AWS:
    /// on unless turned off, and never with Karpenter.
    pub(crate) fn nth_queue_mode(&self) -> bool {
        let nth = self
            .cluster
            .spec
            .cloud_provider
            .aws
            .as_ref()
            .and_then(|a| a.node_termination_handler.as_ref());
        let enabled = nth.and_then(|n| n.enabled).unwrap_or(true);
        let sqs = nth
            .and_then(|n| n.enable_sqs_termination_draining)
            .unwrap_or(true);
        enabled && sqs && self.cluster.spec.karpenter.as_ref().and_then(|k| k.enabled) != Some(true)
    }

    /// `spec.cloudLabels`.
    pub(crate) fn cloud_labels(&self) -> BTreeMap<String, String> {
        self.cluster.spec.cloud_labels.clone().unwrap_or_default()
    }

    /// kOps' `CloudTags(name, shared=false)`: `Name`, `KubernetesCluster`, the owned
    /// cluster tag and the cluster's cloud labels.
    pub(crate) fn tags(&self, name: &str) -> BTreeMap<String, String> {
        let mut t = self.cloud_labels();
        t.insert("KubernetesCluster".into(), self.name().into());
        t.insert("Name".into(), name.into());
        t.insert(
            format!("kubernetes.io/cluster/{}", self.name()),
            "owned".into(),
        );
        t
    }

    /// `<name>.<cluster>`.
    pub(crate) fn scoped(&self, name: &str) -> String {
        format!("{name}.{}", self.name())
    }

    /// The IAM role short name for a group role (`masters`, `nodes`, `bastions`, ...).
    pub(crate) fn iam_role_prefix(role: &InstanceGroupRole) -> &'static str {
        match role {
            InstanceGroupRole::ControlPlane => "masters",
            InstanceGroupRole::ApiServer => "apiservers",
            InstanceGroupRole::Bastion => "bastions",
            _ => "nodes",
        }
    }

    /// The autoscaling-group / launch-template name of a group.
    pub(crate) fn group_resource_name(&self, ig: &InstanceGroup) -> String {
        match ig.spec.role {
            Some(InstanceGroupRole::ControlPlane) => {
                format!("{}.masters.{}", ig.name(), self.name())
            }
            Some(InstanceGroupRole::ApiServer) => {
                format!("{}.apiservers.{}", ig.name(), self.name())
            }
            _ => format!("{}.{}", ig.name(), self.name()),
        }
    }

    /// The zones of a group (from its subnets, else its `zones`).
    pub(crate) fn group_zones(&self, ig: &InstanceGroup) -> Vec<String> {
        let mut zones: Vec<String> = ig
            .spec
            .subnets
            .iter()
            .flatten()
            .filter_map(|s| self.subnet(s).and_then(|s| s.zone.clone()))
            .collect();
        if zones.is_empty() {
            zones = ig.spec.zones.clone().unwrap_or_default();
        }
        zones.dedup();
        zones
    }
}

/// The node labels kOps carries in a group's cloud tags for the cluster autoscaler
/// (kOps' `BuildNodeLabels`): the role's labels, then the group's `nodeLabels`.
pub(crate) fn node_labels(ig: &InstanceGroup) -> BTreeMap<String, String> {
    let mut labels: BTreeMap<String, String> = BTreeMap::new();
    match ig.spec.role {
        Some(InstanceGroupRole::ControlPlane) => {
            labels.insert("kops.k8s.io/kops-controller-pki".into(), String::new());
            labels.insert(
                "node-role.kubernetes.io/control-plane".into(),
                String::new(),
            );
            labels.insert(
                "node.kubernetes.io/exclude-from-external-load-balancers".into(),
                String::new(),
            );
        }
        Some(InstanceGroupRole::Node) => {
            labels.insert("node-role.kubernetes.io/node".into(), String::new());
        }
        Some(InstanceGroupRole::ApiServer) => {
            labels.insert("node-role.kubernetes.io/api-server".into(), String::new());
        }
        _ => {}
    }
    for (k, v) in ig.spec.node_labels.iter().flatten() {
        labels.insert(k.clone(), v.clone());
    }
    labels
}
