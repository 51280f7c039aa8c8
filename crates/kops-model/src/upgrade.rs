//! `kops upgrade cluster`: the changes a channel recommends for a stored cluster, as kOps
//! proposes them: the channel itself when another is named, the Kubernetes version (the
//! channel's recommendation for the cluster's minor version, or for the next minor version
//! when the kOps release doing the upgrade supports it), and each instance group's image
//! when the group uses the channel's images.
//!
//! [`plan_upgrade`] reads the stored (sparse) cluster and groups and changes nothing;
//! [`apply_upgrade`] writes a plan's changes into them, for the caller to store. Only the
//! fields named in the plan change, so the stored specs stay as sparse as they were.
//!
//! ```
//! use kops_api::channel::Channel;
//! use kops_api::v1alpha2::{Cluster, InstanceGroup};
//! use kops_model::upgrade::{UpgradeOptions, apply_upgrade, plan_upgrade};
//!
//! let channel = Channel::parse(r#"
//! spec:
//!   kubernetesVersions:
//!   - range: ">=1.34.0"
//!     recommendedVersion: 1.34.2
//!   - range: ">=1.33.0"
//!     recommendedVersion: 1.33.13
//! "#).unwrap();
//! let mut cluster: Cluster = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "kops.k8s.io/v1alpha2",
//!     "kind": "Cluster",
//!     "metadata": {"name": "demo.example.com"},
//!     "spec": {"kubernetesVersion": "1.33.1", "cloudProvider": "aws", "channel": "stable"},
//! })).unwrap();
//! let options = UpgradeOptions::default().with_kops_release("1.34.0");
//! let plan = plan_upgrade(&cluster, &[], &channel, &options).unwrap();
//! assert_eq!(plan.actions[0].new, "1.34.2");
//! apply_upgrade(&plan, &mut cluster, &mut []);
//! assert_eq!(cluster.spec.kubernetes_version.as_deref(), Some("1.34.2"));
//! ```

use kops_api::channel::Channel;
use kops_api::defaults::machine_architecture;
use kops_api::internal::{self, CloudProvider};
use kops_api::v1alpha2::{Cluster, InstanceGroup};
use kops_api::version::parse_kubernetes_version;
use serde::Serialize;

use crate::{DEFAULT_KOPS_RELEASE, Error, Result};

/// The channel a cluster without `spec.channel` follows.
pub const DEFAULT_CHANNEL: &str = "stable";

/// The annotation kOps sets on clusters imported from other tools, which it never upgrades.
const MANAGEMENT_ANNOTATION: &str = "kops.k8s.io/management";

/// Image names kOps' own channels have used: a group whose image starts with one of
/// these (or is one of the channel's images) follows the channel; any other image is the
/// user's own and is kept.
const UPSTREAM_IMAGE_PREFIXES: &[&str] = &[
    "kope.io/k8s-",
    "099720109477/ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-",
    "099720109477/ubuntu/images/hvm-ssd/ubuntu-jammy-22.04-",
    "099720109477/ubuntu/images/hvm-ssd/ubuntu-focal-20.04-",
    "cos-cloud/cos-stable-",
    "ubuntu-os-cloud/ubuntu-2004-focal-",
    "ubuntu-os-cloud/ubuntu-2204-jammy-",
    "ubuntu-os-cloud/ubuntu-2404-noble-",
];

/// What an upgrade is to: another channel, a given Kubernetes version, the kOps release
/// doing it.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct UpgradeOptions {
    /// The channel to follow from now on (default: the cluster's `spec.channel`, else
    /// [`DEFAULT_CHANNEL`]). The caller loads it and passes it to [`plan_upgrade`].
    pub channel: Option<String>,
    /// The Kubernetes version to upgrade to (default: the channel's recommendation).
    pub kubernetes_version: Option<String>,
    /// The kOps release doing the upgrade: a minor Kubernetes upgrade goes no further than
    /// its version (default [`DEFAULT_KOPS_RELEASE`]).
    pub kops_release: Option<String>,
}

impl UpgradeOptions {
    /// Follows `channel` from now on.
    pub fn with_channel(mut self, channel: impl Into<String>) -> Self {
        self.channel = Some(channel.into());
        self
    }

    /// Upgrades to this Kubernetes version.
    pub fn with_kubernetes_version(mut self, version: impl Into<String>) -> Self {
        self.kubernetes_version = Some(version.into());
        self
    }

    /// The kOps release doing the upgrade.
    pub fn with_kops_release(mut self, release: impl Into<String>) -> Self {
        self.kops_release = Some(release.into());
        self
    }
}

/// The channel a cluster follows after an upgrade with `options`: the one named, else its
/// `spec.channel`, else [`DEFAULT_CHANNEL`].
pub fn channel_location(cluster: &Cluster, options: &UpgradeOptions) -> String {
    options
        .channel
        .clone()
        .or_else(|| cluster.spec.channel.clone().filter(|c| !c.is_empty()))
        .unwrap_or_else(|| DEFAULT_CHANNEL.to_owned())
}

/// One change of an upgrade (a row of kOps' table).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct UpgradeAction {
    /// What changes: `Cluster` or `InstanceGroup/<name>`.
    pub item: String,
    /// Which property: `Channel`, `KubernetesVersion` or `Image`.
    pub property: String,
    /// Its value now (empty when unset).
    pub old: String,
    /// Its value after the upgrade.
    pub new: String,
}

/// The changes an upgrade makes, and what it could not decide (kOps logs these as
/// warnings and goes on).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct UpgradePlan {
    /// The changes, cluster first, then the groups in the order given.
    pub actions: Vec<UpgradeAction>,
    /// What was left as it is, and why.
    pub warnings: Vec<String>,
}

impl UpgradePlan {
    /// Whether there is nothing to change.
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }
}

/// The upgrade of `cluster` and its `groups` that `channel` (loaded from
/// [`channel_location`]) recommends, as kOps' `upgrade cluster` decides it.
///
/// Errors: an imported cluster (kOps' `kops.k8s.io/management: imported`), an
/// unparsable `kubernetes_version` option, or a spec that does not convert.
pub fn plan_upgrade(
    cluster: &Cluster,
    groups: &[InstanceGroup],
    channel: &Channel,
    options: &UpgradeOptions,
) -> Result<UpgradePlan> {
    let name = cluster.metadata.name.clone().unwrap_or_default();
    let imported = cluster
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(MANAGEMENT_ANNOTATION))
        .is_some_and(|v| v == "imported");
    if imported {
        return Err(Error::Invalid {
            field: format!("cluster {name}: metadata.annotations.{MANAGEMENT_ANNOTATION}"),
            message: "an imported cluster cannot be upgraded".into(),
        });
    }
    let mut plan = UpgradePlan::default();
    let location = channel_location(cluster, options);
    let current_channel = cluster.spec.channel.clone().unwrap_or_default();
    if location != current_channel {
        plan.actions.push(UpgradeAction {
            item: "Cluster".into(),
            property: "Channel".into(),
            old: current_channel,
            new: location.clone(),
        });
    }

    let current_text = cluster.spec.kubernetes_version.clone().unwrap_or_default();
    let current = parse_kubernetes_version(&current_text);
    if current.is_none() {
        plan.warnings.push(format!(
            "spec.kubernetesVersion {current_text:?} is not a Kubernetes version: it is left as it is"
        ));
    }
    let proposed = match &options.kubernetes_version {
        Some(v) => Some(parse_kubernetes_version(v).ok_or_else(|| Error::Invalid {
            field: "kubernetesVersion".into(),
            message: format!("{v:?} is not a Kubernetes version"),
        })?),
        None => match &current {
            Some(current) => recommended(channel, &location, current, options, &mut plan),
            None => None,
        },
    };
    let target = match (&current, proposed) {
        (Some(current), Some(proposed)) if *current > proposed => {
            plan.warnings.push(format!(
                "the cluster's Kubernetes version {current} is newer than {proposed}: it is kept"
            ));
            Some(current.clone())
        }
        (Some(current), Some(proposed)) => {
            if *current != proposed {
                plan.actions.push(UpgradeAction {
                    item: "Cluster".into(),
                    property: "KubernetesVersion".into(),
                    old: current_text.clone(),
                    new: proposed.to_string(),
                });
            }
            Some(proposed)
        }
        (current, proposed) => proposed.or_else(|| current.clone()),
    };

    let Some(target) = target else {
        return Ok(plan);
    };
    let provider = internal::Cluster::try_from(cluster)?.cloud_provider();
    let provider_id = provider.map(CloudProvider::as_str).unwrap_or_default();
    for group in groups {
        let group_name = group.metadata.name.clone().unwrap_or_default();
        let machine_type = group.spec.machine_type.as_deref().unwrap_or_default();
        let architecture = machine_architecture(provider, machine_type);
        let Some(image) = channel.find_image(provider_id, &target, architecture) else {
            plan.warnings.push(format!(
                "instance group {group_name}: channel {location} has no {provider_id} {} image for Kubernetes {target}: its image is left as it is",
                architecture.as_str()
            ));
            continue;
        };
        let old = group.spec.image.clone().unwrap_or_default();
        let follows_channel = old.is_empty()
            || UPSTREAM_IMAGE_PREFIXES.iter().any(|p| old.starts_with(p))
            || channel.spec.images.iter().any(|i| i.name == old);
        if !follows_channel {
            plan.warnings.push(format!(
                "instance group {group_name}: custom image {old} is kept"
            ));
            continue;
        }
        if old != image.name {
            plan.actions.push(UpgradeAction {
                item: format!("InstanceGroup/{group_name}"),
                property: "Image".into(),
                old,
                new: image.name.clone(),
            });
        }
    }
    Ok(plan)
}

/// The version `channel` recommends for a cluster at `current`: the recommendation for its
/// minor version, or for the next minor version when the kOps release is at least that
/// version and the channel has it (an upgrade goes one minor version at a time).
fn recommended(
    channel: &Channel,
    location: &str,
    current: &semver::Version,
    options: &UpgradeOptions,
    plan: &mut UpgradePlan,
) -> Option<semver::Version> {
    let recommendation = |v: &semver::Version| {
        channel
            .kubernetes_version_spec(v)
            .and_then(|s| s.recommended_version.as_deref())
            .and_then(parse_kubernetes_version)
    };
    let Some(proposed) = recommendation(current) else {
        plan.warnings.push(format!(
            "channel {location} recommends no version for Kubernetes {current}"
        ));
        return None;
    };
    let release = options
        .kops_release
        .as_deref()
        .unwrap_or(DEFAULT_KOPS_RELEASE);
    let next_minor = semver::Version::new(proposed.major, proposed.minor + 1, 0);
    match parse_kubernetes_version(release) {
        Some(kops) if next_minor <= kops => recommendation(&next_minor).or(Some(proposed)),
        Some(_) => Some(proposed),
        None => {
            plan.warnings.push(format!(
                "kOps release {release:?} is not a version: no minor upgrade is proposed"
            ));
            Some(proposed)
        }
    }
}

/// Writes `plan`'s changes into `cluster` and `groups` (the stored specs, for the caller to
/// store); returns the names of the groups that changed.
pub fn apply_upgrade(
    plan: &UpgradePlan,
    cluster: &mut Cluster,
    groups: &mut [InstanceGroup],
) -> Vec<String> {
    let mut changed = Vec::new();
    for action in &plan.actions {
        match (action.item.as_str(), action.property.as_str()) {
            ("Cluster", "Channel") => cluster.spec.channel = Some(action.new.clone()),
            ("Cluster", "KubernetesVersion") => {
                cluster.spec.kubernetes_version = Some(action.new.clone());
            }
            (item, "Image") => {
                let Some(name) = item.strip_prefix("InstanceGroup/") else {
                    continue;
                };
                if let Some(g) = groups
                    .iter_mut()
                    .find(|g| g.metadata.name.as_deref() == Some(name))
                {
                    g.spec.image = Some(action.new.clone());
                    if !changed.iter().any(|c| c == name) {
                        changed.push(name.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    changed
}
