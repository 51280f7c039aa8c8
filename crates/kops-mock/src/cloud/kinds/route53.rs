//! Route53 hosted zones and record sets.

use kops_cloud_aws::cloud::{CloudResult, ListQuery, Resource, ResourceType};
use kops_tasks::resource::Tags as ResourceTags;
use serde_json::json;

use super::{Create, Kind, Update, removed_tags};
use crate::cloud::{
    Attrs, IntoCloud, a_bool, a_int, a_list, a_obj, a_str, gone, invalid, m_attrs, new_res, objs,
    put, put_opt, to_cloud_error,
};
use crate::route53::{AliasTarget, Change, ChangeAction, ZoneVpc};
use crate::{MockAws, Tags};

/// [`ResourceType::HostedZone`].
pub(super) struct HostedZone;

impl Kind for HostedZone {
    fn kind(&self) -> ResourceType {
        ResourceType::HostedZone
    }

    fn native(&self) -> &'static [&'static str] {
        &["name", "private", "vpc", "comment"]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        for z in m.list_hosted_zones().into_cloud()? {
            let mut r = new_res(rt, &z.id, &z.tags).with_name(z.name.trim_end_matches('.'));
            put(
                &mut r.attrs,
                "name",
                z.name.trim_end_matches('.').to_owned(),
            );
            put(&mut r.attrs, "private", z.private);
            if !z.vpcs.is_empty() {
                put(
                    &mut r.attrs,
                    "vpc",
                    z.vpcs
                        .iter()
                        .map(|v| json!({"vpc_id": v.vpc_id, "vpc_region": v.region}))
                        .collect::<Vec<_>>(),
                );
            }
            put_opt(&mut r.attrs, "comment", z.comment.clone());
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let rt = c.rt;
        let a = c.a;
        let tags = c.tags();
        let region = m.options().region.clone();
        let vpcs = zone_vpcs(a, &region);
        let n = a_str(a, "name")
            .or(c.req.name.clone())
            .ok_or_else(|| invalid(rt, "name", "is required"))?;
        let z = m
            .create_hosted_zone(&n, vpcs.first().cloned(), a_str(a, "comment"), tags)
            .into_cloud()?;
        for v in vpcs.into_iter().skip(1) {
            m.associate_vpc_with_hosted_zone(&z.id, v).into_cloud()?;
        }
        Ok(z.id)
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let id = u.id;
        let a = u.a;
        let current = &u.current;
        if a.contains_key("vpc") {
            let region = m.options().region.clone();
            let want = zone_vpcs(a, &region);
            let have = zone_vpcs(&current.attrs.to_map(), &region);
            for v in want.iter().filter(|v| !have.contains(v)) {
                m.associate_vpc_with_hosted_zone(id, v.clone())
                    .into_cloud()?;
            }
            for v in have.iter().filter(|v| !want.contains(v)) {
                m.disassociate_vpc_from_hosted_zone(id, v).into_cloud()?;
            }
        }
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.delete_hosted_zone(id))
    }

    fn retag(&self, m: &MockAws, id: &str, old: &ResourceTags, new: &Tags) -> CloudResult<()> {
        m.change_hosted_zone_tags(id, new, &removed_tags(old, new))
            .into_cloud()
    }
}

/// [`ResourceType::RecordSet`].
pub(super) struct RecordSet;

impl Kind for RecordSet {
    fn kind(&self) -> ResourceType {
        ResourceType::RecordSet
    }

    fn native(&self) -> &'static [&'static str] {
        &[
            "zone_id",
            "name",
            "type",
            "ttl",
            "records",
            "alias",
            "set_identifier",
        ]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        let zones: Vec<String> = match &q.parent {
            Some(p) => vec![p.clone()],
            None => m
                .list_hosted_zones()
                .into_cloud()?
                .into_iter()
                .map(|z| z.id)
                .collect(),
        };
        for z in zones {
            let records = match m.list_resource_record_sets(&z) {
                Ok(r) => r,
                Err(e) if e.is_not_found() => continue,
                Err(e) => return Err(to_cloud_error(e)),
            };
            let short = z.trim_start_matches("/hostedzone/").to_owned();
            for rs in records {
                let name = rs.name.trim_end_matches('.').to_owned();
                let mut r =
                    Resource::new(rt, format!("{short}_{name}_{}", rs.record_type)).with_parent(&z);
                put(&mut r.attrs, "zone_id", z.clone());
                put(&mut r.attrs, "name", name);
                put(&mut r.attrs, "type", rs.record_type.clone());
                put_opt(&mut r.attrs, "ttl", rs.ttl);
                if !rs.records.is_empty() {
                    put(&mut r.attrs, "records", rs.records.clone());
                }
                if let Some(a) = &rs.alias_target {
                    put(
                        &mut r.attrs,
                        "alias",
                        json!({
                            "name": a.dns_name,
                            "zone_id": a.hosted_zone_id,
                            "evaluate_target_health": a.evaluate_target_health,
                        }),
                    );
                }
                put_opt(&mut r.attrs, "set_identifier", rs.set_identifier.clone());
                out.push(r);
            }
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let zone = c.parent_or("zone_id")?;
        let rs = record_from(a);
        let z = m.get_hosted_zone(&zone).into_cloud()?;
        let id = record_id(&z.id, &rs);
        m.change_resource_record_sets(
            &z.id,
            vec![Change {
                action: ChangeAction::Create,
                record_set: rs,
            }],
        )
        .into_cloud()?;
        Ok(id)
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let rt = u.rt;
        let current = &u.current;
        let merged = &u.merged;
        let zone = current
            .parent
            .clone()
            .ok_or_else(|| invalid(rt, "zone_id", "unknown"))?;
        m.change_resource_record_sets(
            &zone,
            vec![Change {
                action: ChangeAction::Upsert,
                record_set: record_from(merged),
            }],
        )
        .into_cloud()?;
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        let rt = self.kind();
        let found = m.list_native(&ListQuery::new(rt).with_ids([id]))?;
        let Some(r) = found.into_iter().next() else {
            return Ok(());
        };
        let zone = r.parent.clone().unwrap_or_default();
        gone(m.change_resource_record_sets(
            &zone,
            vec![Change {
                action: ChangeAction::Delete,
                record_set: record_from(&r.attrs.to_map()),
            }],
        ))
    }
}

fn record_from(a: &Attrs) -> crate::route53::RecordSet {
    crate::route53::RecordSet {
        name: a_str(a, "name").unwrap_or_default(),
        record_type: a_str(a, "type").unwrap_or_default(),
        ttl: a_int(a, "ttl"),
        records: a_list(a, "records"),
        alias_target: a_obj(a, "alias").map(|o| {
            let o = m_attrs(o);
            AliasTarget {
                dns_name: a_str(&o, "name").unwrap_or_default(),
                hosted_zone_id: a_str(&o, "zone_id").unwrap_or_default(),
                evaluate_target_health: a_bool(&o, "evaluate_target_health").unwrap_or(false),
            }
        }),
        set_identifier: a_str(a, "set_identifier"),
    }
}

fn zone_vpcs(a: &Attrs, region: &str) -> Vec<ZoneVpc> {
    objs(a, "vpc")
        .into_iter()
        .filter_map(|o| {
            Some(ZoneVpc {
                vpc_id: a_str(&o, "vpc_id")?,
                region: a_str(&o, "vpc_region").unwrap_or_else(|| region.to_owned()),
            })
        })
        .collect()
}

fn record_id(zone_id: &str, rs: &crate::route53::RecordSet) -> String {
    format!(
        "{}_{}_{}",
        zone_id.trim_start_matches("/hostedzone/"),
        rs.name.trim_end_matches('.').to_ascii_lowercase(),
        rs.record_type
    )
}
