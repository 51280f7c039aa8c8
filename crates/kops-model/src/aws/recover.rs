//! A lost state store's cluster, read back from the cloud objects the cluster owns: the
//! `kops create cluster` options that make the same cluster, and each instance group as
//! it runs, with where every value came from and what the cloud cannot tell.
//!
//! The objects are the ones [`crate::aws::find_cluster_resources`] finds by the cluster's
//! ownership tags. The network comes from the VPC and the subnets (their `SubnetType`
//! tags give the topology), the groups from the autoscaling groups (their
//! `kops.k8s.io/instancegroup` and role tags) and launch templates (machine type, image),
//! the API load balancer's type from its scheme, the DNS zone from the API record's zone.
//! Nothing is invented: a value the cloud does not hold is left to kOps' defaults and
//! listed in [`Recovered::unknown`].

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value as Json;

use super::cloud::{AwsCloud, ListQuery, Resource, ResourceType as R};
use crate::{Error, Result};

/// One instance group as the cloud runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ObservedGroup {
    /// Its name (`kops.k8s.io/instancegroup`).
    pub name: String,
    /// `ControlPlane`, `Node`, `Bastion` or `APIServer` (from the role tags).
    pub role: String,
    /// The zones of its subnets.
    pub zones: Vec<String>,
    /// Autoscaling group bounds.
    pub min_size: i64,
    /// Autoscaling group bounds.
    pub max_size: i64,
    /// The launch template's instance type.
    pub machine_type: Option<String>,
    /// The launch template's image id.
    pub image: Option<String>,
}

/// What [`recover`] read from the cloud.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Recovered {
    /// The region the objects are in.
    pub region: String,
    /// The zones of the cluster's (non-utility) subnets.
    pub zones: Vec<String>,
    /// `private` when a subnet is private, else `public`.
    pub topology: String,
    /// The VPC's CIDR.
    pub network_cidr: Option<String>,
    /// The VPC's id when the cluster shares it (it does not own it).
    pub network_id: Option<String>,
    /// `Public` or `Internal` when the API has a load balancer.
    pub api_load_balancer_type: Option<String>,
    /// The DNS zone holding the API's record.
    pub dns_zone: Option<String>,
    /// The instance groups, by name.
    pub groups: Vec<ObservedGroup>,
    /// Each value found and the object it came from.
    pub sources: Vec<(String, String)>,
    /// What the cloud does not tell, and what to do about it.
    pub unknown: Vec<(String, String)>,
}

impl Recovered {
    /// The groups of `role`.
    pub fn groups_of(&self, role: &str) -> impl Iterator<Item = &ObservedGroup> {
        self.groups.iter().filter(move |g| g.role == role)
    }
}

fn attr<'a>(r: &'a Resource, k: &str) -> Option<&'a Json> {
    r.attrs.get(k)
}

fn attr_str(r: &Resource, k: &str) -> Option<String> {
    attr(r, k).and_then(Json::as_str).map(str::to_owned)
}

fn role_of(r: &Resource) -> &'static str {
    let has = |k: &str| r.tags.contains_key(k);
    if has("k8s.io/role/control-plane") || has("k8s.io/role/master") {
        "ControlPlane"
    } else if has("k8s.io/role/bastion") {
        "Bastion"
    } else if has("k8s.io/role/api-server") {
        "APIServer"
    } else {
        "Node"
    }
}

/// Reads cluster `name` back from the objects it owns in `cloud` (region `region`).
/// Fails naming the cluster when the cloud holds none of its objects.
pub async fn recover(cloud: &dyn AwsCloud, name: &str, region: &str) -> Result<Recovered> {
    let owned = super::find_cluster_resources(cloud, name)
        .await
        .map_err(crate::error::cloud(format!(
            "listing the objects cluster {name} owns"
        )))?;
    let mut out = Recovered {
        region: region.to_owned(),
        ..Recovered::default()
    };
    let of = |rt: R| owned.iter().filter(move |r| r.resource_type == rt);
    if of(R::AutoscalingGroup).next().is_none() {
        return Err(Error::Invalid {
            field: format!("cluster {name}"),
            message: format!(
                "the cloud (region {region}) holds no autoscaling group tagged for it: nothing to recover"
            ),
        });
    }
    network(cloud, name, &owned, &mut out).await?;
    groups(&owned, &mut out);
    for lb in of(R::LoadBalancer) {
        let internal = attr(lb, "internal").and_then(Json::as_bool) == Some(true);
        let t = if internal { "Internal" } else { "Public" };
        out.api_load_balancer_type = Some(t.to_owned());
        out.sources.push((
            "api.loadBalancer.type".into(),
            format!(
                "{t}: load balancer {}",
                lb.name.as_deref().unwrap_or(&lb.id)
            ),
        ));
    }
    dns_zone(cloud, name, &owned, &mut out).await?;
    for (what, why) in [
        (
            "kubernetesVersion",
            "the machines' configuration was in the lost store: kOps' default is used; the running version is what `kubectl version` (or the API's /version) reports",
        ),
        (
            "networking",
            "the cloud does not show the CNI: kOps' default (cilium) is used; set spec.networking to what the cluster runs",
        ),
        (
            "keysets and secrets",
            "the CA keys and secrets were only in the old store and on the control-plane disks: new ones are made on the first update, so the control plane's certificates change when its machines are replaced (copy /srv/kubernetes/kube-apiserver/ca.* off a control-plane node to keep them)",
        ),
    ] {
        out.unknown.push((what.into(), why.into()));
    }
    Ok(out)
}

/// The VPC, its ownership and the subnets.
async fn network(
    cloud: &dyn AwsCloud,
    name: &str,
    owned: &[Resource],
    out: &mut Recovered,
) -> Result<()> {
    let subnets: Vec<&Resource> = owned
        .iter()
        .filter(|r| r.resource_type == R::Subnet)
        .collect();
    let mut zones = BTreeSet::new();
    let mut private = false;
    let mut vpcs = BTreeSet::new();
    for s in &subnets {
        let kind = s.tags.get("SubnetType").unwrap_or_default().to_owned();
        private |= kind == "Private";
        if let Some(v) = attr_str(s, "vpc_id") {
            vpcs.insert(v);
        }
        if kind != "Utility"
            && let Some(z) = attr_str(s, "availability_zone")
        {
            zones.insert(z);
        }
    }
    out.zones = zones.into_iter().collect();
    out.topology = if private { "private" } else { "public" }.to_owned();
    out.sources.push((
        "zones, topology".into(),
        format!(
            "{} subnet(s) and their SubnetType tags: {} {}",
            subnets.len(),
            out.topology,
            out.zones.join(",")
        ),
    ));
    let vpc = owned.iter().find(|r| r.resource_type == R::Vpc);
    match vpc {
        Some(v) => {
            out.network_cidr = attr_str(v, "cidr_block");
            out.sources.push((
                "networkCIDR".into(),
                format!("VPC {} (owned by the cluster)", v.id),
            ));
        }
        None => {
            // The cluster's subnets are in a VPC it does not own: a shared VPC.
            let Some(id) = vpcs.into_iter().next() else {
                out.unknown.push((
                    "network".into(),
                    format!("cluster {name} owns no VPC and no subnet"),
                ));
                return Ok(());
            };
            let found = cloud
                .list(&ListQuery::new(R::Vpc).with_ids([id.clone()]))
                .await
                .map_err(crate::error::cloud("reading the shared VPC"))?;
            out.network_cidr = found.first().and_then(|v| attr_str(v, "cidr_block"));
            out.sources.push((
                "networkID".into(),
                format!("VPC {id} of its subnets (shared)"),
            ));
            out.network_id = Some(id);
        }
    }
    Ok(())
}

/// The instance groups: autoscaling groups and their launch templates.
fn groups(owned: &[Resource], out: &mut Recovered) {
    let templates: BTreeMap<&str, &Resource> = owned
        .iter()
        .filter(|r| r.resource_type == R::LaunchTemplate)
        .map(|r| (r.id.as_str(), r))
        .collect();
    let subnet_zone: BTreeMap<&str, String> = owned
        .iter()
        .filter(|r| r.resource_type == R::Subnet)
        .filter_map(|r| Some((r.id.as_str(), attr_str(r, "availability_zone")?)))
        .collect();
    for g in owned
        .iter()
        .filter(|r| r.resource_type == R::AutoscalingGroup)
    {
        let Some(name) = g.tags.get("kops.k8s.io/instancegroup").map(str::to_owned) else {
            continue;
        };
        let lt_id = attr(g, "launch_template")
            .and_then(|l| l.get("id"))
            .and_then(Json::as_str);
        let lt = lt_id.and_then(|id| templates.get(id));
        let mut zones: Vec<String> = attr(g, "vpc_zone_identifier")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .filter_map(|s| subnet_zone.get(s).cloned())
            .collect();
        zones.sort();
        zones.dedup();
        let observed = ObservedGroup {
            name: name.clone(),
            role: role_of(g).to_owned(),
            zones,
            min_size: attr(g, "min_size").and_then(Json::as_i64).unwrap_or(0),
            max_size: attr(g, "max_size").and_then(Json::as_i64).unwrap_or(0),
            machine_type: lt.and_then(|t| attr_str(t, "instance_type")),
            image: lt.and_then(|t| attr_str(t, "image_id")),
        };
        out.sources.push((
            format!("instance group {name}"),
            format!(
                "autoscaling group {} ({}, {}..{}), launch template {}",
                g.id,
                observed.role,
                observed.min_size,
                observed.max_size,
                lt_id.unwrap_or("?")
            ),
        ));
        out.groups.push(observed);
    }
    out.groups.sort_by(|a, b| a.name.cmp(&b.name));
}

/// The hosted zone of the API's DNS record, when the cluster has one.
async fn dns_zone(
    cloud: &dyn AwsCloud,
    name: &str,
    owned: &[Resource],
    out: &mut Recovered,
) -> Result<()> {
    let api = format!("api.{name}");
    let record = owned.iter().find(|r| {
        r.resource_type == R::RecordSet
            && attr_str(r, "name").is_some_and(|n| n.trim_end_matches('.') == api)
    });
    let Some(record) = record else {
        return Ok(());
    };
    let zone_id = attr_str(record, "zone_id").or_else(|| record.parent.clone());
    let Some(zone_id) = zone_id else {
        return Ok(());
    };
    let bare = zone_id.trim_start_matches("/hostedzone/");
    let zones = cloud
        .hosted_zones(&super::cloud::ZoneQuery::Id(format!("/hostedzone/{bare}")))
        .await
        .map_err(crate::error::cloud("reading the API record's hosted zone"))?;
    if let Some(z) = zones.first() {
        let zname = z.name.trim_end_matches('.').to_owned();
        out.sources.push((
            "dnsZone".into(),
            format!("{zname}: the zone of record {api}"),
        ));
        out.dns_zone = Some(zname);
    }
    Ok(())
}
