//! Key pairs, launch templates, volumes, instances.

use std::collections::BTreeMap;

use kops_cloud_aws::cloud::{CloudError, CloudResult, ListQuery, Resource, ResourceType};
use kops_tasks::resource::{Attrs as ResourceAttrs, Tags as ResourceTags};
use serde_json::Value as Json;

use super::{Create, Kind, Update};
use crate::cloud::{
    Attrs, IntoCloud, a_bool, a_i32, a_list, a_str, ec2_filters, gone, invalid, new_res, obj_of,
    objs, put, put_opt, tag_filters,
};
use crate::ec2::{CreateVolume, LaunchTemplateData, NetworkInterfaceSpec, TemplateRef};
use crate::{Filter, MockAws, Tags};

/// [`ResourceType::KeyPair`].
pub(super) struct KeyPair;

impl Kind for KeyPair {
    fn kind(&self) -> ResourceType {
        ResourceType::KeyPair
    }

    fn native(&self) -> &'static [&'static str] {
        &["key_name", "public_key", "fingerprint", "key_pair_id"]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        let mut f = tag_filters(q);
        let names: Vec<String> = q.ids.iter().chain(&q.names).cloned().collect();
        if !names.is_empty() {
            f.push(Filter::new("key-name", names));
        }
        for k in m.describe_key_pairs(&[], &f).into_cloud()? {
            let mut r = new_res(rt, &k.name, &k.tags).with_name(&k.name);
            put(&mut r.attrs, "key_name", k.name.clone());
            put(&mut r.attrs, "public_key", k.public_key.clone());
            put(&mut r.attrs, "fingerprint", k.fingerprint.clone());
            put(&mut r.attrs, "key_pair_id", k.id.clone());
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let rt = c.rt;
        let a = c.a;
        let tags = c.tags();
        let n = a_str(a, "key_name")
            .or(c.req.name.clone())
            .ok_or_else(|| invalid(rt, "key_name", "is required"))?;
        Ok(m.import_key_pair(&n, &c.need("public_key")?, tags)
            .into_cloud()?
            .name)
    }

    /// Nothing changes in place but the tags.
    fn update(&self, _: &MockAws, _: &Update<'_>) -> CloudResult<Option<String>> {
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.delete_key_pair(id))
    }

    fn retag(&self, m: &MockAws, id: &str, old: &ResourceTags, new: &Tags) -> CloudResult<()> {
        let kid = m
            .describe_key_pairs(&[id.to_owned()], &[])
            .into_cloud()?
            .into_iter()
            .next()
            .map(|k| k.id)
            .unwrap_or_default();
        m.retag_ec2(&kid, old, new).into_cloud()
    }
}

/// [`ResourceType::LaunchTemplate`].
pub(super) struct LaunchTemplate;

impl Kind for LaunchTemplate {
    fn kind(&self) -> ResourceType {
        ResourceType::LaunchTemplate
    }

    fn native(&self) -> &'static [&'static str] {
        &[
            "name",
            "latest_version",
            "default_version",
            "image_id",
            "instance_type",
            "key_name",
            "user_data",
            "vpc_security_group_ids",
            "network_interfaces",
        ]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        for t in m
            .describe_launch_templates(
                &[],
                &[],
                &ec2_filters(q, "launch-template-id", Some("launch-template-name")),
            )
            .into_cloud()?
        {
            let mut r = new_res(rt, &t.id, &t.tags).with_name(&t.name);
            put(&mut r.attrs, "name", t.name.clone());
            // Strings, so tasks can reference them as outputs (`$Latest` style).
            put(
                &mut r.attrs,
                "latest_version",
                t.latest_version_number.to_string(),
            );
            put(
                &mut r.attrs,
                "default_version",
                t.default_version_number.to_string(),
            );
            let latest = crate::lock(&m.inner.state)
                .ec2
                .lt_versions
                .get(&(t.id.clone(), t.latest_version_number))
                .map(|v| v.data.clone());
            if let Some(data) = latest {
                lt_version_attrs(&mut r.attrs, &m.raw_get(rt, &t.id), &data);
            }
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let tags = c.tags();
        let t = m
            .create_launch_template(&c.name()?, lt_data(a), tags)
            .into_cloud()?;
        Ok(t.id)
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let id = u.id;
        let a = u.a;
        let merged = &u.merged;
        if !a.is_empty() {
            // A new version with the full data (callers send the changed fields).
            m.create_launch_template_version(
                &TemplateRef::Id(id.to_owned()),
                lt_data(merged),
                None,
                None,
            )
            .into_cloud()?;
        }
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(
            m.delete_launch_template(&TemplateRef::Id(id.to_owned()))
                .map(|_| ()),
        )
    }
}

/// [`ResourceType::Volume`].
pub(super) struct Volume;

impl Kind for Volume {
    fn kind(&self) -> ResourceType {
        ResourceType::Volume
    }

    fn native(&self) -> &'static [&'static str] {
        &[
            "availability_zone",
            "size",
            "type",
            "iops",
            "throughput",
            "encrypted",
            "kms_key_id",
        ]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        for v in m
            .describe_volumes(&[], &ec2_filters(q, "volume-id", None))
            .into_cloud()?
        {
            let mut r = new_res(rt, &v.id, &v.tags);
            put(
                &mut r.attrs,
                "availability_zone",
                v.availability_zone.clone(),
            );
            put(&mut r.attrs, "size", v.size);
            put(&mut r.attrs, "type", v.volume_type.clone());
            put_opt(&mut r.attrs, "iops", v.iops);
            put_opt(&mut r.attrs, "throughput", v.throughput);
            put(&mut r.attrs, "encrypted", v.encrypted);
            put_opt(&mut r.attrs, "kms_key_id", v.kms_key_id.clone());
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let rt = c.rt;
        let a = c.a;
        let tags = c.tags();
        Ok(m.create_volume(CreateVolume {
            availability_zone: c.need("availability_zone")?,
            size: a_i32(a, "size").ok_or_else(|| invalid(rt, "size", "is required"))?,
            volume_type: a_str(a, "type").unwrap_or_default(),
            iops: a_i32(a, "iops"),
            throughput: a_i32(a, "throughput"),
            encrypted: a_bool(a, "encrypted").unwrap_or(false),
            kms_key_id: a_str(a, "kms_key_id"),
            tags,
        })
        .into_cloud()?
        .id)
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let id = u.id;
        let a = u.a;
        if a.keys()
            .any(|k| ["size", "type", "iops", "throughput"].contains(&k.as_str()))
        {
            m.modify_volume(
                id,
                a_i32(a, "size"),
                a_str(a, "type"),
                a_i32(a, "iops"),
                a_i32(a, "throughput"),
            )
            .into_cloud()?;
        }
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.delete_volume(id))
    }
}

/// [`ResourceType::Instance`].
pub(super) struct Instance;

impl Kind for Instance {
    fn kind(&self) -> ResourceType {
        ResourceType::Instance
    }

    fn native(&self) -> &'static [&'static str] {
        &[
            "instance_type",
            "subnet_id",
            "image_id",
            "state",
            "availability_zone",
        ]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        for i in m
            .describe_instances(&[], &ec2_filters(q, "instance-id", None))
            .into_cloud()?
        {
            let mut r = new_res(rt, &i.id, &i.tags);
            put(&mut r.attrs, "instance_type", i.instance_type.clone());
            put(&mut r.attrs, "subnet_id", i.subnet_id.clone());
            put(&mut r.attrs, "image_id", i.image_id.clone());
            put(&mut r.attrs, "state", i.state.clone());
            put(
                &mut r.attrs,
                "availability_zone",
                i.availability_zone.clone(),
            );
            if !i.private_ip.is_empty() {
                put(&mut r.attrs, "private_ip", i.private_ip.clone());
            }
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let tags = c.tags();
        let made = m
            .run_instances(crate::ec2::RunInstances {
                image_id: a_str(a, "image_id"),
                instance_type: a_str(a, "instance_type"),
                subnet_id: c.need("subnet_id")?,
                count: 1,
                tags,
                ..Default::default()
            })
            .into_cloud()?;
        made.into_iter()
            .next()
            .map(|i| i.id)
            .ok_or_else(|| CloudError::other("ec2:RunInstances"))
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.terminate_instances(&[id.to_owned()]))
    }
}

fn lt_data(a: &Attrs) -> LaunchTemplateData {
    let profile = match a.get("iam_instance_profile") {
        Some(Json::String(s)) => Some(s.clone()),
        Some(v) => obj_of(v).and_then(|o| {
            o.get("name")
                .or(o.get("arn"))
                .and_then(Json::as_str)
                .map(str::to_owned)
        }),
        None => None,
    };
    let network_interfaces = objs(a, "network_interfaces")
        .into_iter()
        .map(|n| NetworkInterfaceSpec {
            device_index: a_i32(&n, "device_index").unwrap_or(0),
            associate_public_ip_address: a_bool(&n, "associate_public_ip_address"),
            delete_on_termination: a_bool(&n, "delete_on_termination"),
            groups: a_list(&n, "security_groups"),
            ipv6_address_count: a_i32(&n, "ipv6_address_count"),
        })
        .collect();
    let mut tag_specifications = BTreeMap::new();
    for t in objs(a, "tag_specifications") {
        if let (Some(rt), Some(Json::Object(tags))) = (a_str(&t, "resource_type"), t.get("tags")) {
            tag_specifications.insert(
                rt,
                tags.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect(),
            );
        }
    }
    LaunchTemplateData {
        image_id: a_str(a, "image_id"),
        instance_type: a_str(a, "instance_type"),
        key_name: a_str(a, "key_name"),
        iam_instance_profile: profile,
        security_group_ids: a_list(a, "vpc_security_group_ids"),
        user_data: a_str(a, "user_data"),
        network_interfaces,
        tag_specifications,
        ebs_optimized: a_bool(a, "ebs_optimized"),
        ..LaunchTemplateData::default()
    }
}

/// The settings of a template's latest version the mock models (the ones an instance
/// launched from it gets: image, type, key, user data, security groups), read from that
/// version, as the SDK backend reads `$Latest`: a version made outside the model shows.
/// The network interfaces keep what the caller sent but for their security groups.
fn lt_version_attrs(out: &mut ResourceAttrs, raw: &Attrs, data: &LaunchTemplateData) {
    put_opt(out, "image_id", data.image_id.clone());
    put_opt(out, "instance_type", data.instance_type.clone());
    put_opt(out, "key_name", data.key_name.clone());
    put_opt(out, "user_data", data.user_data.clone());
    put(
        out,
        "vpc_security_group_ids",
        Json::from(data.security_group_ids.clone()),
    );
    let mut interfaces = objs(raw, "network_interfaces");
    for (sent, held) in interfaces.iter_mut().zip(&data.network_interfaces) {
        sent.insert("security_groups".into(), Json::from(held.groups.clone()));
    }
    if !interfaces.is_empty() {
        let list: Vec<Json> = interfaces
            .into_iter()
            .map(|a| Json::Object(a.into_iter().collect()))
            .collect();
        put(out, "network_interfaces", Json::Array(list));
    }
}
