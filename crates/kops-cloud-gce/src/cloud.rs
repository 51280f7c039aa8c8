//! The GCE vocabulary: the resource types the GCE model manages ([`GceResourceType`], with
//! its one table of facts, [`TypeFacts`]), the plain data the cloud exchanges about them,
//! and the [`GceCloud`] trait the GCE tasks talk to.
//!
//! [`GceCloud`] extends the cloud-neutral [`ResourceCloud`] (list, create, update, delete
//! over [`GceResourceType`]) with what only GCE has: the project, the region and its
//! zones, the project's default service account, Cloud DNS zones, and a managed instance
//! group's instances ([`ManagedInstance`]), which validate and rolling update read and
//! replace (`recreateInstances`: made again from the group's current template, keeping
//! their names).
//!
//! # Identity, scope and references
//!
//! GCE objects are named: a name is unique per collection and scope (`global`, a region,
//! a zone). A [`Resource`]'s `id` is its name for global and regional types (a cloud
//! object works in one region) and `<zone>/<name>` for zonal ones ([`Scope::Zonal`]:
//! instance group managers, disks, instances); [`Resource::name`] is always the bare
//! name. Attributes are named as the `google_*` Terraform resource's (`ip_cidr_range`,
//! `source_ranges`, `allow`), and references between objects are names (`network =
//! "my-net"`) or, where Terraform writes a link (`self_link`, `id`), the object's ID;
//! a backend turns either into the REST API's URLs. Every found object reports its
//! `self_link` (the `https://www.googleapis.com/compute/v1/...` URL).
//!
//! # Labels
//!
//! Disks, forwarding rules and instance templates carry labels (the templates in their
//! properties); they are the [`Resource::tags`] of the object, and the `labels` attribute
//! in Terraform ([`ResourceKind::tags_attr`]). kOps marks a cluster's objects with
//! `k8s-io-cluster-name = <cluster name, dots as dashes>` ([`CLUSTER_LABEL`]); the other
//! types carry no labels and are a cluster's by name (`<object>-<cluster>`), as kOps
//! matches them when it deletes a cluster.
//!
//! # Instance templates
//!
//! A template cannot change in GCE. An update of a template is a replacement done by the
//! backend: a new template `<name_prefix><unix time>` with the complete properties, every
//! instance group manager that used the old one pointed at it, then the old one deleted
//! (kOps' `InstanceTemplate` and `InstanceGroupManager.setInstanceTemplate`). The model
//! therefore plans a template change as an update, as kOps plans it.
//!
//! # Errors
//!
//! Methods return [`CloudError`]. A backend classifies Google's error reasons:
//! `rateLimitExceeded`, `userRateLimitExceeded` -> throttled; `backendError`,
//! `internalError`, `resourceNotReady` -> unavailable; `notFound` -> not found;
//! `alreadyExists` -> already exists; `resourceInUseByAnotherResource` -> conflict;
//! `quotaExceeded` -> quota naming the quota (`SSD_TOTAL_GB`); `forbidden` -> permission
//! denied; `invalid`, `badRequest` -> invalid.

use std::fmt;

use async_trait::async_trait;
use kops_tasks::resource::{self, ResourceKind};
use serde::{Deserialize, Serialize};

pub use kops_tasks::resource::{Attrs, CloudError, CloudResult, ResourceCloud, TagFilter, Tags};

use GceResourceType as R;

/// One GCE object, as plain data.
pub type Resource = resource::Resource<GceResourceType>;
/// A batched lookup of one GCE resource type.
pub type ListQuery = resource::ListQuery<GceResourceType>;
/// A request to create one GCE object.
pub type CreateRequest = resource::CreateRequest<GceResourceType>;
/// A request to change an existing GCE object.
pub type UpdateRequest = resource::UpdateRequest<GceResourceType>;

/// The label kOps puts on a cluster's labelled objects; its value is the cluster name
/// with dots as dashes, never truncated.
pub const CLUSTER_LABEL: &str = "k8s-io-cluster-name";

/// The label holding an instance group's name on its template.
pub const INSTANCE_GROUP_LABEL: &str = "k8s-io-instance-group";

/// Every kind of GCE object the model manages. The attribute names listed for each type
/// are the ones tasks write and read (the Terraform names, also in [`TypeFacts::attrs`]);
/// backends may return more (`self_link`, `address`, `instance_group`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
pub enum GceResourceType {
    /// VPC network (`google_compute_network`): `auto_create_subnetworks`.
    Network,
    /// Subnetwork (`google_compute_subnetwork`): `network`, `region`, `ip_cidr_range`,
    /// `stack_type`, `ipv6_access_type`, `secondary_ip_range` (list of `{range_name,
    /// ip_cidr_range}`).
    Subnetwork,
    /// Cloud router (`google_compute_router`): `network`.
    Router,
    /// Cloud NAT of a router (`google_compute_router_nat`): `router`, `region`,
    /// `nat_ip_allocate_option`, `source_subnetwork_ip_ranges_to_nat`, `subnetwork` (list of
    /// `{name, source_ip_ranges_to_nat}`). Parent: the router's name; ID
    /// `<router>/<nat>`.
    RouterNat,
    /// Firewall rule (`google_compute_firewall`): `network`, `allow` (list of `{protocol,
    /// ports}`), `source_ranges`, `source_tags`, `target_tags`, `disabled`.
    Firewall,
    /// Regional address (`google_compute_address`): `address_type`, `purpose`,
    /// `subnetwork`, `address` (allocated, read only).
    Address,
    /// Instance template (`google_compute_instance_template`): `name_prefix`,
    /// `machine_type`, `can_ip_forward`, `disk`, `network_interface`, `scheduling`,
    /// `service_account`, `metadata` (map), `tags` (network tags), `labels` (map; also the
    /// object's labels), `guest_accelerator`. Updated by replacement (module docs).
    InstanceTemplate,
    /// Zonal managed instance group (`google_compute_instance_group_manager`): `zone`,
    /// `base_instance_name`, `target_size`, `target_pools`, `version` (`{instance_template}`,
    /// a template self-link), `update_policy`, `list_managed_instances_results`;
    /// `instance_group` (read only). Zonal.
    InstanceGroupManager,
    /// Persistent disk (`google_compute_disk`): `zone`, `size`, `type`,
    /// `provisioned_iops`, `provisioned_throughput`. Zonal; labelled.
    Disk,
    /// Regional health check (`google_compute_region_health_check`): `tcp_health_check`
    /// or `ssl_health_check` (`{port}`).
    RegionHealthCheck,
    /// Legacy HTTP health check (`google_compute_http_health_check`): `port`,
    /// `request_path`. Global.
    HttpHealthCheck,
    /// Regional backend service (`google_compute_region_backend_service`): `protocol`,
    /// `load_balancing_scheme`, `health_checks` (IDs), `backend` (list of
    /// `{group, balancing_mode}`).
    RegionBackendService,
    /// Target pool (`google_compute_target_pool`): `health_checks` (self-links).
    TargetPool,
    /// Regional forwarding rule (`google_compute_forwarding_rule`): `ip_address`,
    /// `ip_protocol`, `load_balancing_scheme`, `port_range`, `ports`, `target`,
    /// `backend_service`, `network`, `subnetwork`. Labelled.
    ForwardingRule,
    /// IAM service account (`google_service_account`): `account_id`, `display_name`,
    /// `description`, `project`; `email` (read only). ID is the email.
    ServiceAccount,
    /// Authoritative project IAM binding (`google_project_iam_binding`): `project`,
    /// `role`, `members`. ID `<project>/<role>`.
    ProjectIamBinding,
    /// Bucket IAM member (`google_storage_bucket_iam_member`): `bucket`, `role`,
    /// `member`. Parent: the bucket; ID `<bucket>/<role>/<member>`.
    StorageBucketIam,
    /// Bucket ACL (`google_storage_bucket_acl`): `bucket`, `role_entity` (list of
    /// `ROLE:entity`). Parent and ID: the bucket.
    StorageBucketAcl,
    /// VM instance (read only, for delete and rolling update): `zone`, `machine_type`,
    /// `status`, `network_ip`, `instance_template`. Zonal; labelled.
    Instance,
}

/// Where a type's objects live, which decides their ID and the REST collection path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Scope {
    /// `projects/<p>/global/<collection>`.
    Global,
    /// `projects/<p>/regions/<region>/<collection>`.
    Regional,
    /// `projects/<p>/zones/<zone>/<collection>`; the ID is `<zone>/<name>`.
    Zonal,
    /// Another API than Compute (IAM, Resource Manager, Storage).
    Other,
}

/// What is known about one resource type, in one place: the Terraform type, the REST
/// collection and its scope, whether the objects carry labels, which attributes cannot
/// change in place and the attribute names tasks and backends exchange. Read it through
/// [`GceResourceType::facts`].
#[derive(Debug)]
#[non_exhaustive]
pub struct TypeFacts {
    /// The Terraform resource type (`google_compute_network`).
    pub terraform_type: &'static str,
    /// The REST collection (`networks`, `instanceGroupManagers`, `serviceAccounts`).
    pub collection: &'static str,
    /// Where its objects live.
    pub scope: Scope,
    /// Whether objects of the type carry labels.
    pub labelled: bool,
    /// Attributes that cannot change once the object exists.
    pub immutable: &'static [&'static str],
    /// The attributes tasks write and backends read (Terraform names).
    pub attrs: &'static [&'static str],
}

impl GceResourceType {
    /// Every resource type, in declaration order.
    pub const ALL: &'static [GceResourceType] = &[
        R::Network,
        R::Subnetwork,
        R::Router,
        R::RouterNat,
        R::Firewall,
        R::Address,
        R::InstanceTemplate,
        R::InstanceGroupManager,
        R::Disk,
        R::RegionHealthCheck,
        R::HttpHealthCheck,
        R::RegionBackendService,
        R::TargetPool,
        R::ForwardingRule,
        R::ServiceAccount,
        R::ProjectIamBinding,
        R::StorageBucketIam,
        R::StorageBucketAcl,
        R::Instance,
    ];

    /// The facts about this type: the one table every layer reads.
    pub fn facts(self) -> &'static TypeFacts {
        match self {
            R::Network => &TypeFacts {
                terraform_type: "google_compute_network",
                collection: "networks",
                scope: Scope::Global,
                labelled: false,
                immutable: &["auto_create_subnetworks"],
                attrs: &["auto_create_subnetworks"],
            },
            R::Subnetwork => &TypeFacts {
                terraform_type: "google_compute_subnetwork",
                collection: "subnetworks",
                scope: Scope::Regional,
                labelled: false,
                immutable: &["network", "region"],
                attrs: &[
                    "network",
                    "region",
                    "ip_cidr_range",
                    "stack_type",
                    "ipv6_access_type",
                    "secondary_ip_range",
                ],
            },
            R::Router => &TypeFacts {
                terraform_type: "google_compute_router",
                collection: "routers",
                scope: Scope::Regional,
                labelled: false,
                immutable: &["network"],
                attrs: &["network"],
            },
            R::RouterNat => &TypeFacts {
                terraform_type: "google_compute_router_nat",
                collection: "routers",
                scope: Scope::Regional,
                labelled: false,
                immutable: &["router", "region"],
                attrs: &[
                    "router",
                    "region",
                    "nat_ip_allocate_option",
                    "source_subnetwork_ip_ranges_to_nat",
                    "subnetwork",
                ],
            },
            R::Firewall => &TypeFacts {
                terraform_type: "google_compute_firewall",
                collection: "firewalls",
                scope: Scope::Global,
                labelled: false,
                immutable: &["network"],
                attrs: &[
                    "network",
                    "allow",
                    "source_ranges",
                    "source_tags",
                    "target_tags",
                    "disabled",
                ],
            },
            R::Address => &TypeFacts {
                terraform_type: "google_compute_address",
                collection: "addresses",
                scope: Scope::Regional,
                labelled: false,
                immutable: &["address_type", "purpose", "subnetwork"],
                attrs: &["address_type", "purpose", "subnetwork", "address"],
            },
            R::InstanceTemplate => &TypeFacts {
                terraform_type: "google_compute_instance_template",
                collection: "instanceTemplates",
                scope: Scope::Global,
                labelled: true,
                // Replaced by the backend on update (module docs).
                immutable: &[],
                attrs: &[
                    "name_prefix",
                    "machine_type",
                    "can_ip_forward",
                    "disk",
                    "network_interface",
                    "scheduling",
                    "service_account",
                    "metadata",
                    "tags",
                    "labels",
                    "guest_accelerator",
                ],
            },
            R::InstanceGroupManager => &TypeFacts {
                terraform_type: "google_compute_instance_group_manager",
                collection: "instanceGroupManagers",
                scope: Scope::Zonal,
                labelled: false,
                immutable: &["zone", "base_instance_name"],
                attrs: &[
                    "zone",
                    "base_instance_name",
                    "target_size",
                    "target_pools",
                    "version",
                    "update_policy",
                    "list_managed_instances_results",
                    "instance_group",
                ],
            },
            R::Disk => &TypeFacts {
                terraform_type: "google_compute_disk",
                collection: "disks",
                scope: Scope::Zonal,
                labelled: true,
                immutable: &["zone", "type"],
                attrs: &[
                    "zone",
                    "size",
                    "type",
                    "provisioned_iops",
                    "provisioned_throughput",
                ],
            },
            R::RegionHealthCheck => &TypeFacts {
                terraform_type: "google_compute_region_health_check",
                collection: "healthChecks",
                scope: Scope::Regional,
                labelled: false,
                immutable: &[],
                attrs: &["tcp_health_check", "ssl_health_check"],
            },
            R::HttpHealthCheck => &TypeFacts {
                terraform_type: "google_compute_http_health_check",
                collection: "httpHealthChecks",
                scope: Scope::Global,
                labelled: false,
                immutable: &[],
                attrs: &["port", "request_path"],
            },
            R::RegionBackendService => &TypeFacts {
                terraform_type: "google_compute_region_backend_service",
                collection: "backendServices",
                scope: Scope::Regional,
                labelled: false,
                immutable: &["load_balancing_scheme"],
                attrs: &[
                    "protocol",
                    "load_balancing_scheme",
                    "health_checks",
                    "backend",
                ],
            },
            R::TargetPool => &TypeFacts {
                terraform_type: "google_compute_target_pool",
                collection: "targetPools",
                scope: Scope::Regional,
                labelled: false,
                immutable: &[],
                attrs: &["health_checks"],
            },
            R::ForwardingRule => &TypeFacts {
                terraform_type: "google_compute_forwarding_rule",
                collection: "forwardingRules",
                scope: Scope::Regional,
                labelled: true,
                immutable: &[
                    "ip_address",
                    "ip_protocol",
                    "load_balancing_scheme",
                    "port_range",
                    "ports",
                    "network",
                    "subnetwork",
                ],
                attrs: &[
                    "ip_address",
                    "ip_protocol",
                    "load_balancing_scheme",
                    "port_range",
                    "ports",
                    "target",
                    "backend_service",
                    "network",
                    "subnetwork",
                ],
            },
            R::ServiceAccount => &TypeFacts {
                terraform_type: "google_service_account",
                collection: "serviceAccounts",
                scope: Scope::Other,
                labelled: false,
                immutable: &["account_id", "project"],
                attrs: &[
                    "account_id",
                    "display_name",
                    "description",
                    "project",
                    "email",
                ],
            },
            R::ProjectIamBinding => &TypeFacts {
                terraform_type: "google_project_iam_binding",
                collection: "projects",
                scope: Scope::Other,
                labelled: false,
                immutable: &["project", "role"],
                attrs: &["project", "role", "members"],
            },
            R::StorageBucketIam => &TypeFacts {
                terraform_type: "google_storage_bucket_iam_member",
                collection: "b",
                scope: Scope::Other,
                labelled: false,
                immutable: &["bucket", "role", "member"],
                attrs: &["bucket", "role", "member"],
            },
            R::StorageBucketAcl => &TypeFacts {
                terraform_type: "google_storage_bucket_acl",
                collection: "b",
                scope: Scope::Other,
                labelled: false,
                immutable: &["bucket"],
                attrs: &["bucket", "role_entity"],
            },
            R::Instance => &TypeFacts {
                terraform_type: "google_compute_instance",
                collection: "instances",
                scope: Scope::Zonal,
                labelled: true,
                immutable: &[],
                attrs: &[
                    "zone",
                    "machine_type",
                    "status",
                    "network_ip",
                    "instance_template",
                ],
            },
        }
    }

    /// The Terraform resource type.
    pub fn terraform_type(self) -> &'static str {
        self.facts().terraform_type
    }

    /// Where the type's objects live.
    pub fn scope(self) -> Scope {
        self.facts().scope
    }

    /// The ID of an object of this type named `name` (in `zone` for zonal types).
    pub fn id_of(self, name: &str, zone: Option<&str>) -> String {
        match (self.scope(), zone) {
            (Scope::Zonal, Some(z)) => format!("{z}/{name}"),
            _ => name.to_owned(),
        }
    }
}

impl ResourceKind for GceResourceType {
    fn terraform_type(self) -> &'static str {
        self.facts().terraform_type
    }

    fn is_taggable(self) -> bool {
        self.facts().labelled
    }

    fn immutable_attrs(self) -> &'static [&'static str] {
        self.facts().immutable
    }

    fn tags_attr(self) -> &'static str {
        "labels"
    }

    /// A cluster's object found by labels: the cluster label and, for instance templates
    /// (whose real names carry a timestamp), the instance-group label naming `name`.
    fn name_tags<'a>(cluster: &'a str, name: &'a str) -> resource::NameTags<'a> {
        resource::NameTags::new(
            (CLUSTER_LABEL, safe_cluster_name(cluster).into()),
            (INSTANCE_GROUP_LABEL, name.into()),
        )
    }
}

impl fmt::Display for GceResourceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.terraform_type())
    }
}

/// kOps' "safe" cluster name: every `.` becomes `-` (the [`CLUSTER_LABEL`] value, and the
/// base of every GCE name of the cluster).
pub fn safe_cluster_name(cluster: &str) -> String {
    cluster.replace('.', "-")
}

/// The Compute API URL of an object (`https://www.googleapis.com/compute/v1/projects/p/
/// global/networks/n`), as GCE writes self-links; `location` is the region or zone for
/// regional and zonal types.
pub fn self_link(
    project: &str,
    resource_type: GceResourceType,
    location: Option<&str>,
    name: &str,
) -> String {
    let facts = resource_type.facts();
    let scope = match (facts.scope, location) {
        (Scope::Regional, Some(r)) => format!("regions/{r}"),
        (Scope::Zonal, Some(z)) => format!("zones/{z}"),
        _ => "global".to_owned(),
    };
    format!(
        "{COMPUTE_URL}projects/{project}/{scope}/{}/{name}",
        facts.collection
    )
}

/// The prefix of every Compute self-link.
pub const COMPUTE_URL: &str = "https://www.googleapis.com/compute/v1/";

/// The text after the last `/` of a URL or path (kOps' `LastComponent`): the name in a
/// self-link.
pub fn last_component(url: &str) -> &str {
    url.rsplit('/').next().unwrap_or(url)
}

/// The region of a zone (`us-test1-a` -> `us-test1`): its first two dash-separated
/// tokens; `None` when the zone has fewer than three.
pub fn zone_to_region(zone: &str) -> Option<&str> {
    let mut it = zone.match_indices('-');
    let _ = it.next()?;
    let (second, _) = it.next()?;
    Some(&zone[..second])
}

/// Who and where the cloud is: the project, its region and its default service account.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProjectInfo {
    /// The project ID.
    pub project: String,
    /// The region the cloud object works in.
    pub region: String,
    /// The project's default compute service account email
    /// (`<number>-compute@developer.gserviceaccount.com`).
    pub default_service_account: String,
}

impl ProjectInfo {
    /// Project, region and default service account.
    pub fn new(
        project: impl Into<String>,
        region: impl Into<String>,
        default_service_account: impl Into<String>,
    ) -> Self {
        ProjectInfo {
            project: project.into(),
            region: region.into(),
            default_service_account: default_service_account.into(),
        }
    }
}

/// A Cloud DNS managed zone, as far as choosing a cluster's zone needs it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ManagedZone {
    /// The zone's numeric ID, as text (`1`); kOps stores it as `spec.dnsZone`.
    pub id: String,
    /// The zone's DNS name (`example.com.`).
    pub dns_name: String,
    /// Whether the zone's visibility is private.
    pub private: bool,
}

impl ManagedZone {
    /// A zone with this ID, DNS name and visibility.
    pub fn new(id: impl Into<String>, dns_name: impl Into<String>, private: bool) -> Self {
        ManagedZone {
            id: id.into(),
            dns_name: dns_name.into(),
            private,
        }
    }
}

/// One instance of a managed instance group, as `listManagedInstances` reports it: what
/// validate and rolling update read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ManagedInstance {
    /// The instance's name (the last segment of its URL, and of its node's
    /// `spec.providerID`, `gce://<project>/<zone>/<name>`).
    pub name: String,
    /// The instance's zone.
    pub zone: String,
    /// The self-link of the instance template the instance was made from
    /// (`version.instanceTemplate`); `None` while the group has not decided.
    pub instance_template: Option<String>,
    /// The instance's status (`RUNNING`, `PROVISIONING`, `STOPPING`, ...); empty while the
    /// group is still creating it.
    pub status: String,
    /// What the group is doing to it (`NONE`, `CREATING`, `RECREATING`, `DELETING`, ...).
    pub current_action: String,
}

impl ManagedInstance {
    /// A running instance `name` in `zone` made from `instance_template`, with no action
    /// under way.
    pub fn new(
        name: impl Into<String>,
        zone: impl Into<String>,
        instance_template: Option<String>,
    ) -> Self {
        ManagedInstance {
            name: name.into(),
            zone: zone.into(),
            instance_template,
            status: "RUNNING".into(),
            current_action: "NONE".into(),
        }
    }

    /// The same instance with `status` and `current_action`.
    pub fn with_state(mut self, status: impl Into<String>, action: impl Into<String>) -> Self {
        self.status = status.into();
        self.current_action = action.into();
        self
    }

    /// Whether the group is deleting or abandoning it: it no longer counts as a member.
    pub fn is_leaving(&self) -> bool {
        matches!(self.current_action.as_str(), "DELETING" | "ABANDONING")
            || matches!(self.status.as_str(), "STOPPING" | "TERMINATED")
                && self.current_action != "RECREATING"
    }
}

/// The GCE operations the model's tasks need, for one region of one project: the generic
/// resource operations of [`ResourceCloud`] plus the project and the region's zones.
///
/// Implemented by `kops-mock` (in memory) and this crate's REST backend (feature `rest`).
/// See the [module docs](self) for identity, labels and the error mapping.
#[async_trait]
pub trait GceCloud: ResourceCloud<GceResourceType> {
    /// The project, region and default service account.
    async fn project(&self) -> CloudResult<ProjectInfo>;

    /// The zones of the region (names, sorted).
    async fn zones(&self) -> CloudResult<Vec<String>>;

    /// The project's Cloud DNS managed zones (`dns.managedZones.list`), from which kOps
    /// picks a cluster's `spec.dnsZone` when the spec names none.
    async fn managed_zones(&self) -> CloudResult<Vec<ManagedZone>>;

    /// The instances of the managed instance group `group` (its ID, `<zone>/<name>`), in
    /// the group's order (`instanceGroupManagers.listManagedInstances`). `NotFound` when
    /// the group does not exist.
    async fn managed_instances(&self, group: &str) -> CloudResult<Vec<ManagedInstance>>;

    /// Asks the managed instance group `group` (its ID) to recreate `instances` (names)
    /// from its current template, keeping their names
    /// (`instanceGroupManagers.recreateInstances`), and waits for the request to be
    /// accepted; the group then replaces them in the background. `NotFound` when the group
    /// or one of the instances does not exist.
    async fn recreate_instances(&self, group: &str, instances: &[String]) -> CloudResult<()>;
}

/// Conveniences over [`GceCloud`], implemented for every cloud.
#[async_trait]
pub trait GceCloudExt: GceCloud {
    /// The single object of `resource_type` with `id`; `Ok(None)` when absent.
    async fn get(&self, resource_type: GceResourceType, id: &str) -> CloudResult<Option<Resource>> {
        let found = self
            .list(&ListQuery::new(resource_type).with_ids([id]))
            .await?;
        Ok(found.into_iter().find(|r| r.id == id))
    }

    /// Every labelled object of `resource_type` carrying `cluster`'s [`CLUSTER_LABEL`].
    async fn list_labelled(
        &self,
        resource_type: GceResourceType,
        cluster: &str,
    ) -> CloudResult<Vec<Resource>> {
        self.list(
            &ListQuery::new(resource_type)
                .with_tag(TagFilter::equals(CLUSTER_LABEL, safe_cluster_name(cluster))),
        )
        .await
    }
}

impl<T: GceCloud + ?Sized> GceCloudExt for T {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_of_facts_is_complete_and_consistent() {
        let mut tf_types = std::collections::BTreeSet::new();
        for &rt in GceResourceType::ALL {
            let f = rt.facts();
            assert!(f.terraform_type.starts_with("google_"), "{rt:?}");
            assert!(tf_types.insert(f.terraform_type), "{rt:?} twice");
            for a in f.immutable {
                assert!(
                    f.attrs.contains(a),
                    "{rt:?}: immutable {a} not an attribute"
                );
            }
            assert_eq!(rt.to_string(), f.terraform_type);
        }
        // Exhaustive: a new variant does not compile until it has a place here and in ALL.
        let position = |rt: GceResourceType| match rt {
            R::Network => 0,
            R::Subnetwork => 1,
            R::Router => 2,
            R::RouterNat => 3,
            R::Firewall => 4,
            R::Address => 5,
            R::InstanceTemplate => 6,
            R::InstanceGroupManager => 7,
            R::Disk => 8,
            R::RegionHealthCheck => 9,
            R::HttpHealthCheck => 10,
            R::RegionBackendService => 11,
            R::TargetPool => 12,
            R::ForwardingRule => 13,
            R::ServiceAccount => 14,
            R::ProjectIamBinding => 15,
            R::StorageBucketIam => 16,
            R::StorageBucketAcl => 17,
            R::Instance => 18,
        };
        for (i, &rt) in GceResourceType::ALL.iter().enumerate() {
            assert_eq!(position(rt), i, "{rt:?}");
        }
    }

    #[test]
    fn urls_zones_and_ids_follow_gce() {
        assert_eq!(
            self_link("p", R::Network, None, "n"),
            "https://www.googleapis.com/compute/v1/projects/p/global/networks/n"
        );
        assert_eq!(
            self_link("p", R::Disk, Some("us-test1-a"), "d"),
            "https://www.googleapis.com/compute/v1/projects/p/zones/us-test1-a/disks/d"
        );
        assert_eq!(last_component("a/b/c"), "c");
        assert_eq!(zone_to_region("us-test1-a"), Some("us-test1"));
        assert_eq!(zone_to_region("us-test1"), None);
        assert_eq!(R::Disk.id_of("d", Some("z")), "z/d");
        assert_eq!(R::Network.id_of("n", Some("z")), "n");
    }

    #[test]
    fn labelled_objects_are_found_by_the_cluster_label() {
        let f = <GceResourceType as ResourceKind>::name_filters("a.example.com", "nodes");
        let r = Resource::new(R::InstanceTemplate, "nodes-a-example-com-1")
            .with_tag(CLUSTER_LABEL, "a-example-com")
            .with_tag(INSTANCE_GROUP_LABEL, "nodes");
        assert!(f.iter().all(|f| f.matches(&r.tags)));
        let other = Resource::new(R::InstanceTemplate, "x").with_tag(CLUSTER_LABEL, "b");
        assert!(!f.iter().all(|f| f.matches(&other.tags)));
    }
}
