//! The Hetzner Cloud vocabulary: the resource types the Hetzner model manages
//! ([`HetznerResourceType`], with its one table of facts, [`TypeFacts`]), kOps' labels and
//! locations, and the [`HetznerCloud`] trait the Hetzner tasks talk to.
//!
//! # Identity, labels and references
//!
//! Hetzner objects have numeric IDs (a [`Resource`]'s `id`, as text) and names unique per
//! type in a project. Attributes are named as the `hcloud_*` Terraform resource's
//! (`ip_range`, `server_type`, `load_balancer_type`), and references between objects are
//! IDs (`network_id = "12"`). The parts of a network and a load balancer that Terraform
//! models as objects of their own (a subnet, a service, a target, a network attachment)
//! are objects of their own here too, with the owner's ID as their parent; a backend
//! turns them into the API's actions on the owner (`add_subnet`, `add_service`, ...).
//!
//! Every object kOps makes carries labels ([`Resource::tags`], the `labels` attribute in
//! Terraform): [`CLUSTER_LABEL`] with the cluster name, and on servers and volumes the
//! instance group ([`INSTANCE_GROUP_LABEL`]). kOps finds a cluster's objects by these
//! labels; so do [`HetznerCloudExt::list_labelled`] and the delete workflow.
//!
//! # Servers
//!
//! There is no autoscaling group: the model creates each server of an instance group
//! itself, names it `<group>-<random hex>`, and labels it with the hash of its user data
//! ([`USER_DATA_LABEL`], [`user_data_hash`]). A server whose user data, location, type,
//! image or public addresses differ from the group's is marked with [`NEEDS_UPDATE_LABEL`]
//! and replaced by rolling update.
//!
//! # Errors
//!
//! Methods return [`CloudError`]. A backend classifies the API's error codes:
//! `rate_limit_exceeded` -> throttled; `unavailable`, `timeout`, `locked` -> unavailable;
//! `not_found` -> not found; `uniqueness_error` -> already exists; `conflict`,
//! `resource_in_use` -> conflict; `invalid_input` -> invalid naming the field;
//! `forbidden`, `unauthorized` -> permission denied; `resource_limit_exceeded` -> quota.

use std::fmt;

use async_trait::async_trait;
use base64::Engine as _;
use kops_tasks::resource::{self, ResourceKind};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

pub use kops_tasks::resource::{Attrs, CloudError, CloudResult, ResourceCloud, TagFilter, Tags};

use HetznerResourceType as R;

/// One Hetzner object, as plain data.
pub type Resource = resource::Resource<HetznerResourceType>;
/// A batched lookup of one Hetzner resource type.
pub type ListQuery = resource::ListQuery<HetznerResourceType>;
/// A request to create one Hetzner object.
pub type CreateRequest = resource::CreateRequest<HetznerResourceType>;
/// A request to change an existing Hetzner object.
pub type UpdateRequest = resource::UpdateRequest<HetznerResourceType>;

/// The label kOps puts on every object of a cluster; its value is the cluster name.
pub const CLUSTER_LABEL: &str = "kops.k8s.io/cluster";
/// The label naming a server's or an etcd volume's instance group.
pub const INSTANCE_GROUP_LABEL: &str = "kops.k8s.io/instance-group";
/// The label holding a server's role (`ControlPlane`, `Node`, `APIServer`, `Bastion`).
pub const INSTANCE_ROLE_LABEL: &str = "kops.k8s.io/instance-role";
/// The label holding the [`user_data_hash`] a server was created with.
pub const USER_DATA_LABEL: &str = "kops.k8s.io/instance-userdata";
/// The label (empty value) marking a server rolling update must replace.
pub const NEEDS_UPDATE_LABEL: &str = "kops.k8s.io/needs-update";
/// The label naming a firewall's role (`control-plane`, `nodes`).
pub const FIREWALL_ROLE_LABEL: &str = "kops.k8s.io/firewall-role";
/// The label naming an etcd volume's etcd cluster (`main`, `events`).
pub const VOLUME_ROLE_LABEL: &str = "kops.k8s.io/volume-role";
/// The prefix of the labels that carry an instance group's node labels to its servers.
pub const NODE_LABEL_PREFIX: &str = "node-label.kops.k8s.io.";
/// The label the Hetzner cluster autoscaler reads a node group from.
pub const AUTOSCALER_NODE_GROUP_LABEL: &str = "hcloud/node-group";

/// Every kind of Hetzner object the model manages. The attribute names listed for each
/// type are the ones tasks write and read (the Terraform names, also in
/// [`TypeFacts::attrs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
pub enum HetznerResourceType {
    /// Private network (`hcloud_network`): `ip_range`. Labelled.
    Network,
    /// A network's subnet (`hcloud_network_subnet`): `network_id`, `type`,
    /// `network_zone`, `ip_range`. Parent: the network; ID `<network>-<ip_range>`.
    NetworkSubnet,
    /// Firewall (`hcloud_firewall`): `rule` (list of `{direction, protocol, port,
    /// source_ips}`), `apply_to` (list of `{label_selector}`). Labelled.
    Firewall,
    /// Load balancer (`hcloud_load_balancer`): `load_balancer_type`, `location`;
    /// `ipv4`, `private_ip` (read only). Labelled.
    LoadBalancer,
    /// A load balancer's attachment to a network (`hcloud_load_balancer_network`):
    /// `load_balancer_id`, `network_id`. Parent: the load balancer.
    LoadBalancerNetwork,
    /// A load balancer's service (`hcloud_load_balancer_service`): `load_balancer_id`,
    /// `protocol`, `listen_port`, `destination_port`. Parent: the load balancer; ID
    /// `<load balancer>__<listen_port>`.
    LoadBalancerService,
    /// A load balancer's target (`hcloud_load_balancer_target`): `load_balancer_id`,
    /// `type` (`label_selector`), `label_selector`, `use_private_ip`. Parent: the load
    /// balancer.
    LoadBalancerTarget,
    /// SSH key (`hcloud_ssh_key`): `public_key`; `fingerprint` (read only). Labelled.
    SshKey,
    /// Block volume (`hcloud_volume`): `location`, `size` (GB). Labelled.
    Volume,
    /// Server (`hcloud_server`): `location`, `server_type`, `image`, `user_data`,
    /// `network` (list of `{network_id}`), `public_net` (`{ipv4_enabled,
    /// ipv6_enabled}`), `ssh_keys` (IDs); `status`, `private_ip`, `ipv4_address` (read
    /// only). Labelled. Made and replaced one by one by the model's server groups.
    Server,
}

/// What is known about one resource type, in one place: the Terraform type, the API
/// collection, whether objects carry labels, which attributes cannot change in place and
/// the attribute names tasks and backends exchange. Read it through
/// [`HetznerResourceType::facts`].
#[derive(Debug)]
#[non_exhaustive]
pub struct TypeFacts {
    /// The Terraform resource type (`hcloud_network`).
    pub terraform_type: &'static str,
    /// The API collection the objects (or, for parts, their owners) live in
    /// (`networks`, `load_balancers`).
    pub collection: &'static str,
    /// Whether the type is a part of another object (its parent).
    pub part: bool,
    /// Whether objects of the type carry labels.
    pub labelled: bool,
    /// Attributes that cannot change once the object exists.
    pub immutable: &'static [&'static str],
    /// The attributes tasks write and backends read (Terraform names).
    pub attrs: &'static [&'static str],
}

impl HetznerResourceType {
    /// Every resource type, in declaration order.
    pub const ALL: &'static [HetznerResourceType] = &[
        R::Network,
        R::NetworkSubnet,
        R::Firewall,
        R::LoadBalancer,
        R::LoadBalancerNetwork,
        R::LoadBalancerService,
        R::LoadBalancerTarget,
        R::SshKey,
        R::Volume,
        R::Server,
    ];

    /// The facts about this type: the one table every layer reads.
    pub fn facts(self) -> &'static TypeFacts {
        match self {
            R::Network => &TypeFacts {
                terraform_type: "hcloud_network",
                collection: "networks",
                part: false,
                labelled: true,
                immutable: &["ip_range"],
                attrs: &["ip_range"],
            },
            R::NetworkSubnet => &TypeFacts {
                terraform_type: "hcloud_network_subnet",
                collection: "networks",
                part: true,
                labelled: false,
                immutable: &["network_id", "type", "network_zone", "ip_range"],
                attrs: &["network_id", "type", "network_zone", "ip_range"],
            },
            R::Firewall => &TypeFacts {
                terraform_type: "hcloud_firewall",
                collection: "firewalls",
                part: false,
                labelled: true,
                immutable: &[],
                attrs: &["rule", "apply_to"],
            },
            R::LoadBalancer => &TypeFacts {
                terraform_type: "hcloud_load_balancer",
                collection: "load_balancers",
                part: false,
                labelled: true,
                immutable: &["location"],
                attrs: &["load_balancer_type", "location", "ipv4", "private_ip"],
            },
            R::LoadBalancerNetwork => &TypeFacts {
                terraform_type: "hcloud_load_balancer_network",
                collection: "load_balancers",
                part: true,
                labelled: false,
                immutable: &["load_balancer_id", "network_id"],
                attrs: &["load_balancer_id", "network_id"],
            },
            R::LoadBalancerService => &TypeFacts {
                terraform_type: "hcloud_load_balancer_service",
                collection: "load_balancers",
                part: true,
                labelled: false,
                immutable: &["load_balancer_id", "listen_port"],
                attrs: &[
                    "load_balancer_id",
                    "protocol",
                    "listen_port",
                    "destination_port",
                ],
            },
            R::LoadBalancerTarget => &TypeFacts {
                terraform_type: "hcloud_load_balancer_target",
                collection: "load_balancers",
                part: true,
                labelled: false,
                immutable: &["load_balancer_id", "type", "label_selector"],
                attrs: &[
                    "load_balancer_id",
                    "type",
                    "label_selector",
                    "use_private_ip",
                ],
            },
            R::SshKey => &TypeFacts {
                terraform_type: "hcloud_ssh_key",
                collection: "ssh_keys",
                part: false,
                labelled: true,
                immutable: &["public_key"],
                attrs: &["public_key", "fingerprint"],
            },
            R::Volume => &TypeFacts {
                terraform_type: "hcloud_volume",
                collection: "volumes",
                part: false,
                labelled: true,
                immutable: &["location"],
                attrs: &["location", "size"],
            },
            R::Server => &TypeFacts {
                terraform_type: "hcloud_server",
                collection: "servers",
                part: false,
                labelled: true,
                immutable: &[
                    "location",
                    "server_type",
                    "image",
                    "user_data",
                    "network",
                    "public_net",
                    "ssh_keys",
                ],
                attrs: &[
                    "location",
                    "server_type",
                    "image",
                    "user_data",
                    "network",
                    "public_net",
                    "ssh_keys",
                    "status",
                    "private_ip",
                    "ipv4_address",
                ],
            },
        }
    }

    /// The Terraform resource type.
    pub fn terraform_type(self) -> &'static str {
        self.facts().terraform_type
    }
}

impl ResourceKind for HetznerResourceType {
    fn terraform_type(self) -> &'static str {
        self.facts().terraform_type
    }

    fn is_taggable(self) -> bool {
        self.facts().labelled
    }

    fn immutable_attrs(self) -> &'static [&'static str] {
        self.facts().immutable
    }

    fn unordered_attrs(self) -> &'static [&'static str] {
        match self {
            R::Firewall => &["rule"],
            R::Server => &["ssh_keys"],
            _ => &[],
        }
    }

    fn tags_attr(self) -> &'static str {
        "labels"
    }

    /// A cluster's object found by labels: the cluster label and the instance-group
    /// label naming `name` (servers and volumes).
    fn name_tags<'a>(cluster: &'a str, name: &'a str) -> resource::NameTags<'a> {
        resource::NameTags::new(
            (CLUSTER_LABEL, cluster.into()),
            (INSTANCE_GROUP_LABEL, name.into()),
        )
    }
}

impl fmt::Display for HetznerResourceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.terraform_type())
    }
}

/// The locations kOps knows, with their network zone (kOps' `FindRegion`): the zone is
/// what kOps calls the cluster's region.
pub const LOCATIONS: &[(&str, &str)] = &[
    ("fsn1", "eu-central"),
    ("nbg1", "eu-central"),
    ("hel1", "eu-central"),
    ("ash", "us-east"),
    ("hil", "us-west"),
];

/// The network zone of a location (`fsn1` -> `eu-central`); `None` for a location kOps
/// does not know.
pub fn network_zone(location: &str) -> Option<&'static str> {
    LOCATIONS
        .iter()
        .find(|(l, _)| *l == location)
        .map(|(_, z)| *z)
}

/// The hash kOps labels a server with for its user data ([`USER_DATA_LABEL`]):
/// `sha256.` and the URL-safe base64 of the SHA-256 digest, without padding (a label
/// value allows no `+`, `/` or `=`).
pub fn user_data_hash(user_data: &[u8]) -> String {
    let digest = Sha256::digest(user_data);
    format!(
        "sha256.{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest)
    )
}

/// A label selector matching every `key=value` pair (`a=b,c=d`), as the API's
/// `label_selector` and a firewall's or load balancer target's selector take it.
pub fn label_selector<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    pairs
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The Hetzner operations the model's tasks need: the generic resource operations of
/// [`ResourceCloud`] over [`HetznerResourceType`] (list with label selectors, create,
/// update labels and attributes, delete), for one project.
///
/// Implemented by `kops-mock` (in memory). See the [module docs](self) for identity,
/// labels and the error mapping.
#[async_trait]
pub trait HetznerCloud: ResourceCloud<HetznerResourceType> {
    /// Shuts the server `id` down gracefully (an ACPI shutdown, the `shutdown` action) and
    /// waits until it is off, as kOps does before it deletes a server. `NotFound` when the
    /// server does not exist.
    async fn shutdown_server(&self, id: &str) -> CloudResult<()>;
}

/// Conveniences over [`HetznerCloud`], implemented for every cloud.
#[async_trait]
pub trait HetznerCloudExt: HetznerCloud {
    /// The single object of `resource_type` with `id`; `Ok(None)` when absent.
    async fn get(
        &self,
        resource_type: HetznerResourceType,
        id: &str,
    ) -> CloudResult<Option<Resource>> {
        let found = self
            .list(&ListQuery::new(resource_type).with_ids([id]))
            .await?;
        Ok(found.into_iter().find(|r| r.id == id))
    }

    /// Every object of `resource_type` carrying `cluster`'s [`CLUSTER_LABEL`].
    async fn list_labelled(
        &self,
        resource_type: HetznerResourceType,
        cluster: &str,
    ) -> CloudResult<Vec<Resource>> {
        self.list(
            &ListQuery::new(resource_type).with_tag(TagFilter::equals(CLUSTER_LABEL, cluster)),
        )
        .await
    }
}

impl<T: HetznerCloud + ?Sized> HetznerCloudExt for T {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_of_facts_is_complete_and_consistent() {
        let mut tf_types = std::collections::BTreeSet::new();
        for &rt in HetznerResourceType::ALL {
            let f = rt.facts();
            assert!(f.terraform_type.starts_with("hcloud_"), "{rt:?}");
            assert!(tf_types.insert(f.terraform_type), "{rt:?} twice");
            for a in f.immutable {
                assert!(
                    f.attrs.contains(a),
                    "{rt:?}: immutable {a} not an attribute"
                );
            }
            assert!(!(f.part && f.labelled), "{rt:?}: a part carries no labels");
            assert_eq!(rt.to_string(), f.terraform_type);
        }
        // Exhaustive: a new variant does not compile until it has a place here and in ALL.
        let position = |rt: HetznerResourceType| match rt {
            R::Network => 0,
            R::NetworkSubnet => 1,
            R::Firewall => 2,
            R::LoadBalancer => 3,
            R::LoadBalancerNetwork => 4,
            R::LoadBalancerService => 5,
            R::LoadBalancerTarget => 6,
            R::SshKey => 7,
            R::Volume => 8,
            R::Server => 9,
        };
        for (i, &rt) in HetznerResourceType::ALL.iter().enumerate() {
            assert_eq!(position(rt), i, "{rt:?}");
        }
    }

    #[test]
    fn locations_map_to_kops_regions() {
        assert_eq!(network_zone("fsn1"), Some("eu-central"));
        assert_eq!(network_zone("hel1"), Some("eu-central"));
        assert_eq!(network_zone("ash"), Some("us-east"));
        assert_eq!(network_zone("hil"), Some("us-west"));
        assert_eq!(network_zone("sin"), None);
    }

    #[test]
    fn the_user_data_hash_is_a_label_value() {
        // SHA-256 of the empty input: 47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU (URL-safe).
        assert_eq!(
            user_data_hash(b""),
            "sha256.47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"
        );
        let h = user_data_hash(b"#!/bin/bash\n");
        assert!(h.len() <= 63, "{h}");
        assert!(!h.contains(['+', '/', '=']), "{h}");
    }

    #[test]
    fn cluster_objects_are_found_by_labels() {
        let f = <HetznerResourceType as ResourceKind>::name_filters("a.example.com", "nodes");
        let r = Resource::new(R::Server, "1")
            .with_tag(CLUSTER_LABEL, "a.example.com")
            .with_tag(INSTANCE_GROUP_LABEL, "nodes");
        assert!(f.iter().all(|f| f.matches(&r.tags)));
        assert_eq!(
            label_selector([
                (CLUSTER_LABEL, "a.example.com"),
                (INSTANCE_ROLE_LABEL, "Node")
            ]),
            "kops.k8s.io/cluster=a.example.com,kops.k8s.io/instance-role=Node"
        );
    }
}
