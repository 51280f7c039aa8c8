//! Route53: public and private hosted zones (with their VPCs) and record sets.

use std::collections::{BTreeMap, BTreeSet};

use crate::MockAws;
use crate::error::{Error, Result};
use crate::filter::Tags;
use crate::state::State;

/// A VPC a private zone is attached to.
#[derive(Debug, Clone, PartialEq, Eq, Default, PartialOrd, Ord)]
pub struct ZoneVpc {
    /// VPC.
    pub vpc_id: String,
    /// Its region.
    pub region: String,
}

/// A hosted zone.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostedZone {
    /// `/hostedzone/Z...`.
    pub id: String,
    /// Name with the trailing dot (`example.com.`).
    pub name: String,
    /// Private zone.
    pub private: bool,
    /// VPCs of a private zone.
    pub vpcs: Vec<ZoneVpc>,
    /// Comment.
    pub comment: Option<String>,
    /// Tags.
    pub tags: Tags,
}

/// An alias target.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AliasTarget {
    /// DNS name of the target.
    pub dns_name: String,
    /// Zone of the target.
    pub hosted_zone_id: String,
    /// Evaluate target health.
    pub evaluate_target_health: bool,
}

/// A record set.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecordSet {
    /// Name with the trailing dot.
    pub name: String,
    /// `A`, `AAAA`, `CNAME`, `NS`, `SOA`, `TXT`, ...
    pub record_type: String,
    /// TTL (none for an alias).
    pub ttl: Option<i64>,
    /// Values.
    pub records: Vec<String>,
    /// Alias target.
    pub alias_target: Option<AliasTarget>,
    /// Set identifier (routing policies).
    pub set_identifier: Option<String>,
}

/// What a change does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeAction {
    /// Create; fails if it exists.
    Create,
    /// Delete; fails unless it exists with exactly these values.
    Delete,
    /// Create or replace.
    Upsert,
}

/// One change of a `ChangeResourceRecordSets` batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Action.
    pub action: ChangeAction,
    /// The record set.
    pub record_set: RecordSet,
}

#[derive(Debug, Default)]
pub(crate) struct Route53State {
    pub(crate) zones: BTreeMap<String, HostedZone>,
    pub(crate) records: BTreeMap<String, Vec<RecordSet>>,
}

impl Route53State {
    pub(crate) fn collect_ids(&self, out: &mut BTreeSet<String>) {
        out.extend(self.zones.keys().cloned());
        for (z, rs) in &self.records {
            out.extend(
                rs.iter()
                    .map(|r| format!("{z}/{}/{}", r.name, r.record_type)),
            );
        }
    }
}

/// Lower-cases and adds the trailing dot.
pub(crate) fn fqdn(name: &str) -> String {
    let n = name.to_ascii_lowercase();
    if n.ends_with('.') { n } else { format!("{n}.") }
}

pub(crate) fn normalize_zone_id(id: &str) -> String {
    if id.starts_with("/hostedzone/") {
        id.to_owned()
    } else {
        format!("/hostedzone/{id}")
    }
}

pub(crate) fn insert_zone(st: &mut State, zone: HostedZone) {
    let soa = RecordSet {
        name: zone.name.clone(),
        record_type: "SOA".into(),
        ttl: Some(900),
        records: vec![format!(
            "ns-1.awsdns-mock.com. awsdns-hostmaster.amazon.com. 1 7200 900 1209600 86400"
        )],
        ..RecordSet::default()
    };
    let ns = RecordSet {
        name: zone.name.clone(),
        record_type: "NS".into(),
        ttl: Some(172800),
        records: (1..=4)
            .map(|i| format!("ns-{i}.awsdns-mock.com."))
            .collect(),
        ..RecordSet::default()
    };
    st.route53.records.insert(zone.id.clone(), vec![soa, ns]);
    st.route53.zones.insert(zone.id.clone(), zone);
}

fn zone<'a>(st: &'a mut State, op: &str, id: &str) -> Result<&'a mut HostedZone> {
    st.route53
        .zones
        .get_mut(&normalize_zone_id(id))
        .ok_or_else(|| Error::not_found(op, "hosted-zone", id))
}

fn same_key(a: &RecordSet, b: &RecordSet) -> bool {
    a.name == b.name && a.record_type == b.record_type && a.set_identifier == b.set_identifier
}

/// Orders names the way `ListHostedZonesByName` does: by reversed labels.
fn reversed(name: &str) -> String {
    name.trim_end_matches('.')
        .split('.')
        .rev()
        .collect::<Vec<_>>()
        .join(".")
}

impl MockAws {
    /// `CreateHostedZone`: private when `vpc` is given. Adds the zone's SOA and NS records.
    pub fn create_hosted_zone(
        &self,
        name: &str,
        vpc: Option<ZoneVpc>,
        comment: Option<String>,
        tags: Tags,
    ) -> Result<HostedZone> {
        self.call("route53:CreateHostedZone", |st, op| {
            let name = fqdn(name);
            if name.len() < 2 {
                return Err(Error::invalid(op, "Name", "is required"));
            }
            if let Some(v) = &vpc
                && !st.ec2.vpcs.contains_key(&v.vpc_id)
            {
                return Err(Error::not_found(op, "vpc", v.vpc_id.clone()));
            }
            // AWS allows several zones of the same name, but not two private zones of one
            // name in the same VPC.
            if let Some(v) = &vpc
                && st
                    .route53
                    .zones
                    .values()
                    .any(|z| z.name == name && z.vpcs.contains(v))
            {
                return Err(Error::exists(
                    op,
                    "hosted-zone",
                    format!("{name} in {}", v.vpc_id),
                ));
            }
            let n = st.ids.next_number("hostedzone");
            let z = HostedZone {
                id: format!("/hostedzone/ZMOCK{n:09}"),
                name,
                private: vpc.is_some(),
                vpcs: vpc.into_iter().collect(),
                comment,
                tags,
            };
            insert_zone(st, z.clone());
            Ok(z)
        })
    }

    /// `GetHostedZone` (id with or without `/hostedzone/`).
    pub fn get_hosted_zone(&self, id: &str) -> Result<HostedZone> {
        self.call("route53:GetHostedZone", |st, op| {
            zone(st, op, id).map(|z| z.clone())
        })
    }

    /// `ListHostedZones`.
    pub fn list_hosted_zones(&self) -> Result<Vec<HostedZone>> {
        self.call("route53:ListHostedZones", |st, _| {
            Ok(st.route53.zones.values().cloned().collect())
        })
    }

    /// `ListHostedZonesByName`: zones ordered by reversed labels, starting at `dns_name`.
    pub fn list_hosted_zones_by_name(&self, dns_name: Option<&str>) -> Result<Vec<HostedZone>> {
        self.call("route53:ListHostedZonesByName", |st, _| {
            let mut zones: Vec<HostedZone> = st.route53.zones.values().cloned().collect();
            zones.sort_by_key(|z| (reversed(&z.name), z.id.clone()));
            if let Some(start) = dns_name {
                let start = reversed(&fqdn(start));
                zones.retain(|z| reversed(&z.name) >= start);
            }
            Ok(zones)
        })
    }

    /// `AssociateVPCWithHostedZone` (private zones only).
    pub fn associate_vpc_with_hosted_zone(&self, zone_id: &str, vpc: ZoneVpc) -> Result<()> {
        self.call("route53:AssociateVPCWithHostedZone", |st, op| {
            if !st.ec2.vpcs.contains_key(&vpc.vpc_id) {
                return Err(Error::not_found(op, "vpc", vpc.vpc_id.clone()));
            }
            let z = zone(st, op, zone_id)?;
            if !z.private {
                return Err(Error::invalid(op, "HostedZoneId", "the zone is public"));
            }
            if z.vpcs.contains(&vpc) {
                return Err(Error::exists(op, "hosted-zone-vpc", vpc.vpc_id));
            }
            z.vpcs.push(vpc);
            Ok(())
        })
    }

    /// `DisassociateVPCFromHostedZone`: the last VPC cannot be removed.
    pub fn disassociate_vpc_from_hosted_zone(&self, zone_id: &str, vpc: &ZoneVpc) -> Result<()> {
        self.call("route53:DisassociateVPCFromHostedZone", |st, op| {
            let z = zone(st, op, zone_id)?;
            if !z.vpcs.contains(vpc) {
                return Err(Error::not_found(op, "hosted-zone-vpc", vpc.vpc_id.clone()));
            }
            if z.vpcs.len() == 1 {
                return Err(Error::conflict(
                    op,
                    "hosted-zone-vpc",
                    vpc.vpc_id.clone(),
                    "is the zone's last VPC",
                ));
            }
            z.vpcs.retain(|v| v != vpc);
            Ok(())
        })
    }

    /// `DeleteHostedZone`: fails while records other than the apex SOA and NS remain.
    pub fn delete_hosted_zone(&self, zone_id: &str) -> Result<()> {
        self.call("route53:DeleteHostedZone", |st, op| {
            let z = zone(st, op, zone_id)?.clone();
            let extra = st
                .route53
                .records
                .get(&z.id)
                .into_iter()
                .flatten()
                .filter(|r| {
                    !(r.name == z.name && (r.record_type == "SOA" || r.record_type == "NS"))
                })
                .count();
            if extra > 0 {
                return Err(Error::conflict(
                    op,
                    "hosted-zone",
                    z.id,
                    format!("still has {extra} record set(s)"),
                ));
            }
            st.route53.zones.remove(&z.id);
            st.route53.records.remove(&z.id);
            Ok(())
        })
    }

    /// `ChangeResourceRecordSets`: all changes apply or none does.
    pub fn change_resource_record_sets(&self, zone_id: &str, changes: Vec<Change>) -> Result<()> {
        self.call("route53:ChangeResourceRecordSets", |st, op| {
            let z = zone(st, op, zone_id)?.clone();
            let mut records = st.route53.records.get(&z.id).cloned().unwrap_or_default();
            for (i, c) in changes.into_iter().enumerate() {
                let mut r = c.record_set;
                r.name = fqdn(&r.name);
                if !(r.name == z.name || r.name.ends_with(&format!(".{}", z.name))) {
                    return Err(Error::invalid(
                        op,
                        format!("Changes[{i}].Name"),
                        format!("{} is not in zone {}", r.name, z.name),
                    ));
                }
                if r.alias_target.is_none() && (r.records.is_empty() || r.ttl.is_none()) {
                    return Err(Error::invalid(
                        op,
                        format!("Changes[{i}]"),
                        "a record set needs values and a TTL, or an alias target",
                    ));
                }
                let pos = records.iter().position(|x| same_key(x, &r));
                match (c.action, pos) {
                    (ChangeAction::Create, Some(_)) => {
                        return Err(Error::exists(
                            op,
                            "record-set",
                            format!("{} {}", r.name, r.record_type),
                        ));
                    }
                    (ChangeAction::Create | ChangeAction::Upsert, None) => records.push(r),
                    (ChangeAction::Upsert, Some(p)) => records[p] = r,
                    (ChangeAction::Delete, Some(p)) if records[p] == r => {
                        records.remove(p);
                    }
                    (ChangeAction::Delete, _) => {
                        return Err(Error::not_found(
                            op,
                            "record-set",
                            format!("{} {} with these values", r.name, r.record_type),
                        ));
                    }
                }
            }
            st.route53.records.insert(z.id, records);
            Ok(())
        })
    }

    /// `ListResourceRecordSets`.
    pub fn list_resource_record_sets(&self, zone_id: &str) -> Result<Vec<RecordSet>> {
        self.call("route53:ListResourceRecordSets", |st, op| {
            let z = zone(st, op, zone_id)?.id.clone();
            let mut rs = st.route53.records.get(&z).cloned().unwrap_or_default();
            rs.sort_by(|a, b| {
                (reversed(&a.name), &a.record_type).cmp(&(reversed(&b.name), &b.record_type))
            });
            Ok(rs)
        })
    }

    /// `ChangeTagsForResource` on a hosted zone: adds `add`, then removes `remove`.
    pub fn change_hosted_zone_tags(
        &self,
        zone_id: &str,
        add: &Tags,
        remove: &[String],
    ) -> Result<()> {
        self.call("route53:ChangeTagsForResource", |st, op| {
            let z = zone(st, op, zone_id)?;
            z.tags
                .extend(add.iter().map(|(k, v)| (k.clone(), v.clone())));
            for k in remove {
                z.tags.remove(k);
            }
            Ok(())
        })
    }
}
