//! The channel a cluster is completed with when the caller names none.
//!
//! A kOps channel lists the machine images per cloud and CPU architecture and the
//! Kubernetes versions kOps recommends ([`Channel`]). kops-model ships the facts of kOps'
//! stable channel as [`stable`]: [`new_cluster`](crate::new_cluster) takes its
//! recommended Kubernetes version when the options name none, and
//! [`aws::DiscoverOptions`](crate::aws::DiscoverOptions) completes groups without an image
//! with its images. An embedder with its own channel (a newer one, a private mirror's)
//! parses it with [`Channel::parse`] and passes it in their place.
//!
//! ```
//! let channel = kops_model::channel::stable();
//! let version = kops_model::channel::default_kubernetes_version(&channel).unwrap();
//! assert!(version.starts_with("v1."));
//! ```

use std::sync::OnceLock;

use kops_api::channel::Channel;

/// The default channel's YAML, as [`Channel::parse`] reads it.
pub const STABLE_YAML: &str = include_str!("channel/stable.yaml");

/// The default channel: kOps' stable channel's images and Kubernetes versions, as of the
/// kOps release this crate follows (the file is [`STABLE_YAML`]).
pub fn stable() -> Channel {
    static PARSED: OnceLock<Channel> = OnceLock::new();
    PARSED
        .get_or_init(|| {
            // A test parses the same text; it is part of the crate, not input.
            Channel::parse(STABLE_YAML).unwrap_or_default()
        })
        .clone()
}

/// The Kubernetes version `channel` gives a new cluster (`v1.34.2`): the first
/// recommendation of its `kubernetesVersions`, as `kops create cluster` picks it. `None`
/// when the channel recommends none.
pub fn default_kubernetes_version(channel: &Channel) -> Option<String> {
    channel
        .spec
        .kubernetes_versions
        .iter()
        .find_map(|k| k.recommended_version.as_deref())
        .map(|v| match v.strip_prefix('v') {
            Some(_) => v.to_owned(),
            None => format!("v{v}"),
        })
}

/// A mock AWS account (`options`: region and zones) that holds the AWS images of
/// `channel`, as the real region holds its publishers' images: a cluster completed with
/// the channel resolves its machine image on it.
///
/// ```
/// use kops_model::channel;
/// use kops_model::mock::MockOptions;
/// let cloud = channel::mock_aws(MockOptions::default(), &channel::stable()).unwrap();
/// assert!(cloud.resource_ids().iter().any(|id| id.starts_with("ami-")));
/// ```
#[cfg(feature = "mock")]
#[cfg_attr(docsrs, doc(cfg(feature = "mock")))]
pub fn mock_aws(
    options: kops_mock::MockOptions,
    channel: &Channel,
) -> kops_mock::Result<kops_mock::MockAws> {
    let cloud = kops_mock::MockAws::with_options(options);
    for image in channel
        .spec
        .images
        .iter()
        .filter(|i| i.provider_id == "aws")
    {
        let Some((owner, name)) = image.name.split_once('/') else {
            continue;
        };
        let architecture = match image.architecture_id.as_str() {
            "arm64" => "arm64",
            _ => "x86_64",
        };
        let seed = kops_mock::ec2::Image {
            name: name.to_owned(),
            owner_id: owner.to_owned(),
            architecture: architecture.to_owned(),
            root_device_name: "/dev/sda1".to_owned(),
            ..Default::default()
        };
        cloud.seed(kops_mock::Seed::Image(seed))?;
    }
    Ok(cloud)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_channel_parses_and_recommends_a_version() {
        let channel = Channel::parse(STABLE_YAML).expect("stable.yaml parses");
        assert_eq!(stable(), channel);
        assert!(channel.spec.images.iter().any(|i| i.provider_id == "aws"));
        assert!(channel.spec.images.iter().any(|i| i.provider_id == "gce"));
        let v = default_kubernetes_version(&channel).expect("a recommendation");
        assert!(v.starts_with("v1."), "{v}");
    }
}
