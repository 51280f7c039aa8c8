//! S3 objects, SQS queues, EventBridge rules and targets, Route53 zones and records.

use std::collections::BTreeMap;

use crate::cloud::{CloudError as Error, CloudResult as Result};
use crate::cloud::{
    CreateRequest, HostedZone, Resource, ResourceType, Service, UpdateRequest, ZoneQuery,
};
use aws_sdk_eventbridge::types::{Tag as EbTag, Target};
use aws_sdk_route53::types::{
    AliasTarget, Change, ChangeAction, ChangeBatch, ResourceRecord, ResourceRecordSet, RrType,
};
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_sqs::types::QueueAttributeName;
use serde_json::Value as Json;

use crate::backend::{AwsBackend, Scope};
use crate::convert::{
    Attrs, b, check_immutable, i, immutable, jlist, obj, object, objs, req, s, strs, tag_diff,
};

use ResourceType as R;

fn not_impl(op: &str, rt: ResourceType) -> Error {
    Error::NotImplemented {
        operation: format!("{op} {rt}"),
        implementer: "kops-cloud-aws".into(),
    }
}

fn built<T, E: std::fmt::Display>(r: std::result::Result<T, E>, field: &str) -> Result<T> {
    r.map_err(|e| Error::invalid(field.to_owned(), e.to_string()))
}

pub(crate) async fn list(
    be: &AwsBackend,
    rt: ResourceType,
    scope: &Scope,
) -> Result<Vec<Resource>> {
    match rt {
        R::S3Object => list_objects(be, scope).await,
        R::SqsQueue => list_queues(be, scope).await,
        R::EventRule | R::EventTarget => list_events(be, rt, scope).await,
        R::RecordSet => list_records(be, scope).await,
        R::HostedZone => {
            let zones = hosted_zones_all(be).await?;
            Ok(zones
                .into_iter()
                .map(|z| {
                    Resource::new(rt, z.id.as_str())
                        .with_attr("name", z.name.as_str())
                        .with_attr("private", z.private)
                        .with_attr(
                            "vpc",
                            Json::Array(
                                z.vpcs
                                    .iter()
                                    .map(|v| object([("vpc_id", Some(Json::from(v.as_str())))]))
                                    .collect(),
                            ),
                        )
                })
                .collect())
        }
        other => Err(not_impl("list", other)),
    }
}

// ------------------------------------------------------------------------- S3 objects

async fn get_object(be: &AwsBackend, bucket: &str, key: &str) -> Result<Option<Resource>> {
    let id = format!("{bucket}/{key}");
    let Some(o) = be
        .call_opt(
            Service::S3,
            "GetObject",
            &id,
            be.inner.s3.get_object().bucket(bucket).key(key).send(),
        )
        .await?
    else {
        return Ok(None);
    };
    let sse = o.server_side_encryption().map(|s| s.as_str().to_owned());
    let body = o
        .body
        .collect()
        .await
        .map_err(|e| Error::Unavailable {
            operation: format!("read s3://{id}"),
            source: Some(Box::new(e)),
        })?
        .into_bytes();
    let mut r = Resource::new(R::S3Object, id.as_str())
        .with_parent(bucket)
        .with_attr("bucket", bucket)
        .with_attr("key", key)
        .with_attr("content", String::from_utf8_lossy(&body).into_owned());
    if let Some(sse) = sse {
        r = r.with_attr("server_side_encryption", sse);
    }
    Ok(Some(r))
}

/// Whether an ETag is the plain MD5 of an object's content: 32 hex digits, no `-<parts>`
/// suffix (S3 gives multipart uploads and SSE-KMS/SSE-C objects other ETags).
fn etag_md5(etag: &str) -> Option<String> {
    let e = etag.trim_matches('"');
    (e.len() == 32 && e.bytes().all(|b| b.is_ascii_hexdigit())).then(|| e.to_ascii_lowercase())
}

/// One bucket's objects from `ListObjectsV2` pages alone where the ETag is the content's
/// MD5: such an object is reported with `content_md5` and, as S3 has encrypted every new
/// object with SSE-S3 at least since January 2023 and gives SSE-KMS and SSE-C objects
/// other ETags, `server_side_encryption = AES256`. Objects with other ETags are read.
async fn list_object_digests(be: &AwsBackend, bucket: &str) -> Result<Vec<Resource>> {
    let mut out = Vec::new();
    let mut read = Vec::new();
    for (k, etag) in list_keys(be, bucket).await? {
        match etag.as_deref().and_then(etag_md5) {
            Some(md5) => out.push(
                Resource::new(R::S3Object, format!("{bucket}/{k}"))
                    .with_parent(bucket)
                    .with_attr("bucket", bucket)
                    .with_attr("key", k.as_str())
                    .with_attr("content_md5", md5)
                    .with_attr("server_side_encryption", "AES256"),
            ),
            None => read.push(k),
        }
    }
    for k in read {
        out.extend(get_object(be, bucket, &k).await?);
    }
    Ok(out)
}

/// Every object in `bucket` (all `ListObjectsV2` pages): its key and ETag.
async fn list_keys(be: &AwsBackend, bucket: &str) -> Result<Vec<(String, Option<String>)>> {
    let mut out = Vec::new();
    let mut st = be
        .inner
        .s3
        .list_objects_v2()
        .bucket(bucket)
        .into_paginator()
        .send();
    while let Some(p) = be
        .page(Service::S3, "ListObjectsV2", bucket, st.next())
        .await?
    {
        out.extend(
            p.contents()
                .iter()
                .filter_map(|o| Some((o.key()?.to_owned(), o.e_tag().map(str::to_owned)))),
        );
    }
    Ok(out)
}

async fn list_objects(be: &AwsBackend, scope: &Scope) -> Result<Vec<Resource>> {
    let mut keys: Vec<(String, String)> = Vec::new();
    match scope {
        Scope::Digests(bucket) => return list_object_digests(be, bucket).await,
        Scope::Ids(ids) => {
            for id in ids {
                if let Some((b, k)) = id.split_once('/') {
                    keys.push((b.to_owned(), k.to_owned()));
                }
            }
        }
        Scope::Parent(bucket) => {
            let listed = list_keys(be, bucket).await?;
            keys.extend(listed.into_iter().map(|(k, _)| (bucket.clone(), k)));
        }
        _ => {
            return Err(Error::invalid(
                "aws_s3_object",
                "list objects by bucket (parent) or by ID (<bucket>/<key>)",
            ));
        }
    }
    let mut out = Vec::new();
    for (b, k) in keys {
        out.extend(get_object(be, &b, &k).await?);
    }
    Ok(out)
}

async fn put_object(be: &AwsBackend, bucket: &str, key: &str, a: &Attrs) -> Result<()> {
    let content = s(a, "content").unwrap_or_default();
    let mut r = be
        .inner
        .s3
        .put_object()
        .bucket(bucket)
        .key(key)
        .body(ByteStream::from(content.into_bytes()));
    if let Some(sse) = s(a, "server_side_encryption") {
        r = r.server_side_encryption(aws_sdk_s3::types::ServerSideEncryption::from(sse.as_str()));
    }
    if let Some(acl) = s(a, "acl") {
        r = r.acl(aws_sdk_s3::types::ObjectCannedAcl::from(acl.as_str()));
    }
    be.call(
        Service::S3,
        "PutObject",
        &format!("{bucket}/{key}"),
        r.send(),
    )
    .await?;
    Ok(())
}

// ------------------------------------------------------------------------- SQS

async fn queue(be: &AwsBackend, url: &str) -> Result<Option<Resource>> {
    let Some(o) = be
        .call_opt(
            Service::Sqs,
            "GetQueueAttributes",
            url,
            be.inner
                .sqs
                .get_queue_attributes()
                .queue_url(url)
                .attribute_names(QueueAttributeName::All)
                .send(),
        )
        .await?
    else {
        return Ok(None);
    };
    let attrs = o.attributes().cloned().unwrap_or_default();
    let name = url.rsplit('/').next().unwrap_or(url);
    let mut r = Resource::new(R::SqsQueue, url).with_name(name);
    if let Some(a) = attrs.get(&QueueAttributeName::QueueArn) {
        r = r.with_arn(a.as_str());
    }
    if let Some(v) = attrs
        .get(&QueueAttributeName::MessageRetentionPeriod)
        .and_then(|v| v.parse::<i64>().ok())
    {
        r = r.with_attr("message_retention_seconds", v);
    }
    if let Some(p) = attrs.get(&QueueAttributeName::Policy) {
        // SQS stores the policy re-serialised; answer it in one canonical form (sorted
        // keys, pretty-printed) so that equal documents read back equal.
        let canonical = serde_json::from_str::<Json>(p)
            .ok()
            .and_then(|j| serde_json::to_string_pretty(&j).ok())
            .unwrap_or_else(|| p.clone());
        r = r.with_attr("policy", canonical);
    }
    let tags = be
        .call_opt(
            Service::Sqs,
            "ListQueueTags",
            url,
            be.inner.sqs.list_queue_tags().queue_url(url).send(),
        )
        .await?;
    if let Some(t) = tags.and_then(|t| t.tags().cloned()) {
        r.tags = t.into_iter().collect();
    }
    Ok(Some(r))
}

async fn list_queues(be: &AwsBackend, scope: &Scope) -> Result<Vec<Resource>> {
    let urls: Vec<String> = match scope {
        Scope::Ids(ids) => ids.clone(),
        _ => {
            let mut urls = Vec::new();
            let mut st = be.inner.sqs.list_queues().into_paginator().send();
            while let Some(p) = be
                .page(Service::Sqs, "ListQueues", "queues", st.next())
                .await?
            {
                urls.extend(p.queue_urls().iter().cloned());
            }
            urls
        }
    };
    let mut out = Vec::new();
    for u in urls {
        out.extend(queue(be, &u).await?);
    }
    Ok(out)
}

fn queue_attrs(a: &Attrs) -> BTreeMap<QueueAttributeName, String> {
    let mut m = BTreeMap::new();
    if let Some(v) = i(a, "message_retention_seconds") {
        m.insert(QueueAttributeName::MessageRetentionPeriod, v.to_string());
    }
    if let Some(p) = s(a, "policy") {
        m.insert(QueueAttributeName::Policy, p);
    }
    m
}

// ------------------------------------------------------------------------- EventBridge

async fn list_events(be: &AwsBackend, rt: ResourceType, scope: &Scope) -> Result<Vec<Resource>> {
    let eb = &be.inner.events;
    let rule_names: Vec<String> = match (rt, scope) {
        (R::EventTarget, Scope::Parent(p)) => vec![p.clone()],
        (R::EventRule, Scope::Ids(ids)) => ids.clone(),
        (R::EventTarget, Scope::Ids(ids)) => ids
            .iter()
            .filter_map(|i| i.split_once('/').map(|(r, _)| r.to_owned()))
            .collect(),
        _ => {
            let mut names = Vec::new();
            let mut token = None;
            loop {
                let o = be
                    .call(
                        Service::EventBridge,
                        "ListRules",
                        "rules",
                        eb.list_rules().set_next_token(token.clone()).send(),
                    )
                    .await?;
                names.extend(o.rules().iter().filter_map(|r| r.name().map(str::to_owned)));
                token = o.next_token().map(str::to_owned);
                if token.is_none() {
                    break;
                }
            }
            names
        }
    };
    let mut out = Vec::new();
    for name in rule_names {
        if rt == R::EventRule {
            let Some(o) = be
                .call_opt(
                    Service::EventBridge,
                    "DescribeRule",
                    &name,
                    eb.describe_rule().name(&name).send(),
                )
                .await?
            else {
                continue;
            };
            let mut r = Resource::new(rt, name.as_str()).with_name(name.as_str());
            if let Some(a) = o.arn() {
                r = r.with_arn(a);
                let tags = be
                    .call_opt(
                        Service::EventBridge,
                        "ListTagsForResource",
                        &name,
                        eb.list_tags_for_resource().resource_arn(a).send(),
                    )
                    .await?;
                r.tags = tags
                    .iter()
                    .flat_map(|t| t.tags())
                    .map(|t| (t.key().to_owned(), t.value().to_owned()))
                    .collect();
            }
            if let Some(p) = o.event_pattern() {
                r = r.with_attr("event_pattern", p);
            }
            out.push(r);
        } else {
            let Some(o) = be
                .call_opt(
                    Service::EventBridge,
                    "ListTargetsByRule",
                    &name,
                    eb.list_targets_by_rule().rule(&name).send(),
                )
                .await?
            else {
                continue;
            };
            for t in o.targets() {
                out.push(
                    Resource::new(rt, format!("{name}/{}", t.id()))
                        .with_parent(name.as_str())
                        .with_attr("rule", name.as_str())
                        .with_attr("arn", t.arn())
                        .with_attr("target_id", t.id()),
                );
            }
        }
    }
    Ok(out)
}

// ------------------------------------------------------------------------- Route53

async fn hosted_zones_all(be: &AwsBackend) -> Result<Vec<HostedZone>> {
    let mut out = Vec::new();
    let mut st = be.inner.r53.list_hosted_zones().into_paginator().send();
    while let Some(p) = be
        .page(
            Service::Route53,
            "ListHostedZones",
            "hosted zones",
            st.next(),
        )
        .await?
    {
        for z in p.hosted_zones() {
            let private = z.config().is_some_and(|c| c.private_zone());
            out.push(HostedZone::new(z.id(), z.name(), private));
        }
    }
    Ok(out)
}

/// Creates a hosted zone (private when `vpc` names a VPC) and tags it; returns its ID.
async fn create_zone(be: &AwsBackend, rq: &CreateRequest) -> Result<String> {
    use aws_sdk_route53::types::{Tag as R53Tag, TagResourceType, Vpc, VpcRegion};
    let a = &rq.attrs;
    let name = rq
        .name
        .clone()
        .or_else(|| s(a, "name"))
        .ok_or_else(|| Error::invalid("aws_route53_zone.name", "is required"))?;
    // Route53 wants a caller reference unique per request; a retry with the same one
    // would be answered with the zone the first attempt created.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut c = be
        .inner
        .r53
        .create_hosted_zone()
        .name(&name)
        .caller_reference(format!("kops-rs-{name}-{nanos}"));
    if let Some(v) = objs(a, "vpc").first() {
        let region = s(v, "vpc_region").unwrap_or_else(|| be.inner.region.clone());
        c = c.vpc(
            Vpc::builder()
                .set_vpc_id(s(v, "vpc_id"))
                .vpc_region(VpcRegion::from(region.as_str()))
                .build(),
        );
    }
    let o = be
        .call(Service::Route53, "CreateHostedZone", &name, c.send())
        .await?;
    let id = o
        .hosted_zone()
        .map(|z| z.id().to_owned())
        .ok_or_else(|| Error::unavailable(format!("CreateHostedZone {name} returned no zone")))?;
    if !rq.tags.is_empty() {
        let tags: Vec<R53Tag> = rq
            .tags
            .iter()
            .map(|(k, v)| R53Tag::builder().key(k).value(v).build())
            .collect();
        be.call(
            Service::Route53,
            "ChangeTagsForResource",
            &id,
            be.inner
                .r53
                .change_tags_for_resource()
                .resource_type(TagResourceType::Hostedzone)
                .resource_id(short_zone(&id))
                .set_add_tags(Some(tags))
                .send(),
        )
        .await?;
    }
    Ok(id)
}

pub(crate) async fn hosted_zones(be: &AwsBackend, q: &ZoneQuery) -> Result<Vec<HostedZone>> {
    let mut out = Vec::new();
    for z in hosted_zones_all(be).await? {
        if !q.matches(&z) {
            continue;
        }
        if z.private {
            let o = be
                .call(
                    Service::Route53,
                    "GetHostedZone",
                    &z.id,
                    be.inner.r53.get_hosted_zone().id(z.short_id()).send(),
                )
                .await?;
            let vpcs: Vec<String> = o
                .vpcs()
                .iter()
                .filter_map(|v| v.vpc_id().map(str::to_owned))
                .collect();
            out.push(z.with_vpcs(vpcs));
        } else {
            out.push(z);
        }
    }
    Ok(out)
}

fn short_zone(z: &str) -> &str {
    z.strip_prefix("/hostedzone/").unwrap_or(z)
}

fn record_id(zone: &str, name: &str, ty: &str) -> String {
    format!("{}_{}_{ty}", short_zone(zone), name.trim_end_matches('.'))
}

async fn list_records(be: &AwsBackend, scope: &Scope) -> Result<Vec<Resource>> {
    let zones: Vec<String> = match scope {
        Scope::Parent(z) => vec![short_zone(z).to_owned()],
        Scope::Ids(ids) => ids
            .iter()
            .filter_map(|i| i.split_once('_').map(|(z, _)| z.to_owned()))
            .collect(),
        _ => hosted_zones_all(be)
            .await?
            .iter()
            .map(|z| z.short_id().to_owned())
            .collect(),
    };
    let mut out = Vec::new();
    for z in zones {
        let mut start: Option<(String, RrType)> = None;
        loop {
            let p = be
                .call(
                    Service::Route53,
                    "ListResourceRecordSets",
                    &z,
                    be.inner
                        .r53
                        .list_resource_record_sets()
                        .hosted_zone_id(&z)
                        .set_start_record_name(start.as_ref().map(|s| s.0.clone()))
                        .set_start_record_type(start.as_ref().map(|s| s.1.clone()))
                        .send(),
                )
                .await?;
            start = match (p.is_truncated(), p.next_record_name(), p.next_record_type()) {
                (true, Some(n), Some(t)) => Some((n.to_owned(), t.clone())),
                _ => None,
            };
            for r in p.resource_record_sets() {
                let name = r.name().trim_end_matches('.');
                let ty = r.r#type().as_str();
                // Parent and zone_id in the `/hostedzone/...` form HostedZone IDs have
                // (what tasks hold); the record's own ID uses the short form.
                let full = format!("/hostedzone/{z}");
                let mut x = Resource::new(R::RecordSet, record_id(&z, name, ty))
                    .with_parent(full.as_str())
                    .with_attr("zone_id", full.as_str())
                    .with_attr("name", name)
                    .with_attr("type", ty);
                if let Some(ttl) = r.ttl() {
                    x = x.with_attr("ttl", ttl);
                }
                if !r.resource_records().is_empty() {
                    x = x.with_attr(
                        "records",
                        jlist(r.resource_records().iter().map(|v| v.value())),
                    );
                }
                if let Some(a) = r.alias_target() {
                    x = x.with_attr(
                        "alias",
                        object([
                            ("name", Some(Json::from(a.dns_name().trim_end_matches('.')))),
                            ("zone_id", Some(Json::from(a.hosted_zone_id()))),
                            (
                                "evaluate_target_health",
                                Some(Json::from(a.evaluate_target_health())),
                            ),
                        ]),
                    );
                }
                out.push(x);
            }
            if start.is_none() {
                break;
            }
        }
    }
    Ok(out)
}

fn record_set(a: &Attrs) -> Result<ResourceRecordSet> {
    let rt = R::RecordSet;
    let mut r = ResourceRecordSet::builder()
        .name(req(a, "name", rt)?)
        .r#type(RrType::from(req(a, "type", rt)?.as_str()))
        .set_ttl(i(a, "ttl"));
    for v in strs(a, "records") {
        r = r.resource_records(built(
            ResourceRecord::builder().value(v).build(),
            "aws_route53_record.records",
        )?);
    }
    if let Some(al) = obj(a, "alias") {
        r = r.alias_target(built(
            AliasTarget::builder()
                .dns_name(s(&al, "name").unwrap_or_default())
                .hosted_zone_id(s(&al, "zone_id").unwrap_or_default())
                .evaluate_target_health(b(&al, "evaluate_target_health").unwrap_or(false))
                .build(),
            "aws_route53_record.alias",
        )?);
    }
    built(r.build(), "aws_route53_record")
}

async fn change_record(be: &AwsBackend, zone: &str, action: ChangeAction, a: &Attrs) -> Result<()> {
    let change = built(
        Change::builder()
            .action(action)
            .resource_record_set(record_set(a)?)
            .build(),
        "aws_route53_record",
    )?;
    let batch = built(
        ChangeBatch::builder().changes(change).build(),
        "aws_route53_record",
    )?;
    be.call(
        Service::Route53,
        "ChangeResourceRecordSets",
        zone,
        be.inner
            .r53
            .change_resource_record_sets()
            .hosted_zone_id(short_zone(zone))
            .change_batch(batch)
            .send(),
    )
    .await?;
    Ok(())
}

// ------------------------------------------------------------------------- writes

pub(crate) async fn create(be: &AwsBackend, rq: &CreateRequest) -> Result<Resource> {
    let rt = rq.resource_type;
    let a = &rq.attrs;
    let name = || {
        rq.name
            .clone()
            .or_else(|| s(a, "name"))
            .ok_or_else(|| Error::invalid(format!("{rt}.name"), "is required"))
    };
    let id = match rt {
        R::S3Object => {
            let bucket = rq.parent.clone().map_or_else(|| req(a, "bucket", rt), Ok)?;
            let key = req(a, "key", rt)?;
            put_object(be, &bucket, &key, a).await?;
            format!("{bucket}/{key}")
        }
        R::SqsQueue => {
            let n = name()?;
            let o = be
                .call(
                    Service::Sqs,
                    "CreateQueue",
                    &n,
                    be.inner
                        .sqs
                        .create_queue()
                        .queue_name(&n)
                        .set_attributes(Some(queue_attrs(a).into_iter().collect()))
                        .set_tags(
                            (!rq.tags.is_empty()).then(|| rq.tags.clone().into_iter().collect()),
                        )
                        .send(),
                )
                .await?;
            o.queue_url().unwrap_or_default().to_owned()
        }
        R::EventRule => {
            let n = name()?;
            let tags = rq
                .tags
                .iter()
                .map(|(k, v)| {
                    built(
                        EbTag::builder().key(k).value(v).build(),
                        "aws_cloudwatch_event_rule.tags",
                    )
                })
                .collect::<Result<Vec<_>>>()?;
            be.call(
                Service::EventBridge,
                "PutRule",
                &n,
                be.inner
                    .events
                    .put_rule()
                    .name(&n)
                    .set_event_pattern(s(a, "event_pattern"))
                    .set_tags((!tags.is_empty()).then_some(tags))
                    .send(),
            )
            .await?;
            n
        }
        R::EventTarget => {
            let rule = rq.parent.clone().map_or_else(|| req(a, "rule", rt), Ok)?;
            let tid = s(a, "target_id").unwrap_or_else(|| "1".into());
            let t = built(
                Target::builder().id(&tid).arn(req(a, "arn", rt)?).build(),
                "aws_cloudwatch_event_target",
            )?;
            be.call(
                Service::EventBridge,
                "PutTargets",
                &rule,
                be.inner.events.put_targets().rule(&rule).targets(t).send(),
            )
            .await?;
            format!("{rule}/{tid}")
        }
        R::RecordSet => {
            let zone = rq
                .parent
                .clone()
                .map_or_else(|| req(a, "zone_id", rt), Ok)?;
            // UPSERT, as kOps writes its records: it also keeps moto from refusing a
            // CREATE identical to an earlier one in its change journal (it then checks a
            // listing that starts at the name, so any record sorting after it counts).
            change_record(be, &zone, ChangeAction::Upsert, a).await?;
            record_id(&zone, &req(a, "name", rt)?, &req(a, "type", rt)?)
        }
        R::HostedZone => create_zone(be, rq).await?,
        other => return Err(not_impl("create", other)),
    };
    be.reread(rt, &id).await
}

pub(crate) async fn update(be: &AwsBackend, rq: &UpdateRequest) -> Result<Resource> {
    let rt = rq.resource_type;
    let id = rq.id.as_str();
    let old = be.reread(rt, id).await.map_err(|_| Error::NotFound {
        what: format!("{rt} {id}"),
    })?;
    check_immutable(rt, &old.attrs, &rq.attrs)?;
    let mut merged = old.attrs.to_map();
    merged.extend(rq.attrs.clone());
    match rt {
        R::S3Object => {
            let (bucket, key) = id
                .split_once('/')
                .ok_or_else(|| Error::invalid(format!("{rt} {id}"), "IDs are <bucket>/<key>"))?;
            put_object(be, bucket, key, &merged).await?;
        }
        R::SqsQueue => {
            let attrs = queue_attrs(&rq.attrs);
            if !attrs.is_empty() {
                be.call(
                    Service::Sqs,
                    "SetQueueAttributes",
                    id,
                    be.inner
                        .sqs
                        .set_queue_attributes()
                        .queue_url(id)
                        .set_attributes(Some(attrs.into_iter().collect()))
                        .send(),
                )
                .await?;
            }
            if let Some(new) = &rq.tags {
                let (set, removed) = tag_diff(&old.tags, new);
                if !set.is_empty() {
                    be.call(
                        Service::Sqs,
                        "TagQueue",
                        id,
                        be.inner
                            .sqs
                            .tag_queue()
                            .queue_url(id)
                            .set_tags(Some(set.into_iter().collect()))
                            .send(),
                    )
                    .await?;
                }
                if !removed.is_empty() {
                    be.call(
                        Service::Sqs,
                        "UntagQueue",
                        id,
                        be.inner
                            .sqs
                            .untag_queue()
                            .queue_url(id)
                            .set_tag_keys(Some(removed))
                            .send(),
                    )
                    .await?;
                }
            }
        }
        R::EventRule => {
            be.call(
                Service::EventBridge,
                "PutRule",
                id,
                be.inner
                    .events
                    .put_rule()
                    .name(id)
                    .set_event_pattern(s(&merged, "event_pattern"))
                    .send(),
            )
            .await?;
            if let (Some(new), Some(arn)) = (&rq.tags, old.arn.as_deref()) {
                let (set, removed) = tag_diff(&old.tags, new);
                if !set.is_empty() {
                    let tags = set
                        .iter()
                        .map(|(k, v)| {
                            built(
                                EbTag::builder().key(k).value(v).build(),
                                "aws_cloudwatch_event_rule.tags",
                            )
                        })
                        .collect::<Result<Vec<_>>>()?;
                    be.call(
                        Service::EventBridge,
                        "TagResource",
                        id,
                        be.inner
                            .events
                            .tag_resource()
                            .resource_arn(arn)
                            .set_tags(Some(tags))
                            .send(),
                    )
                    .await?;
                }
                if !removed.is_empty() {
                    be.call(
                        Service::EventBridge,
                        "UntagResource",
                        id,
                        be.inner
                            .events
                            .untag_resource()
                            .resource_arn(arn)
                            .set_tag_keys(Some(removed))
                            .send(),
                    )
                    .await?;
                }
            }
        }
        R::EventTarget => {
            let (rule, tid) = id.split_once('/').ok_or_else(|| {
                Error::invalid(format!("{rt} {id}"), "IDs are <rule>/<target id>")
            })?;
            let t = built(
                Target::builder()
                    .id(tid)
                    .arn(req(&merged, "arn", rt)?)
                    .build(),
                "aws_cloudwatch_event_target",
            )?;
            be.call(
                Service::EventBridge,
                "PutTargets",
                rule,
                be.inner.events.put_targets().rule(rule).targets(t).send(),
            )
            .await?;
        }
        R::RecordSet => {
            let zone = old.parent.clone().unwrap_or_default();
            change_record(be, &zone, ChangeAction::Upsert, &merged).await?;
        }
        _ => return Err(immutable(rt, &rq.attrs)),
    }
    be.reread(rt, id).await
}

pub(crate) async fn delete(be: &AwsBackend, rt: ResourceType, id: &str) -> Result<()> {
    match rt {
        R::HostedZone => {
            be.call(
                Service::Route53,
                "DeleteHostedZone",
                id,
                be.inner.r53.delete_hosted_zone().id(short_zone(id)).send(),
            )
            .await?;
        }
        R::S3Object => {
            let (bucket, key) = id
                .split_once('/')
                .ok_or_else(|| Error::invalid(format!("{rt} {id}"), "IDs are <bucket>/<key>"))?;
            be.call(
                Service::S3,
                "DeleteObject",
                id,
                be.inner.s3.delete_object().bucket(bucket).key(key).send(),
            )
            .await?;
        }
        R::SqsQueue => {
            be.call(
                Service::Sqs,
                "DeleteQueue",
                id,
                be.inner.sqs.delete_queue().queue_url(id).send(),
            )
            .await?;
        }
        R::EventRule => {
            // Targets first: EventBridge refuses to delete a rule that has targets.
            let targets = list_events(be, R::EventTarget, &Scope::Parent(id.to_owned())).await?;
            let ids: Vec<String> = targets
                .iter()
                .filter_map(|t| t.attr_str("target_id").map(str::to_owned))
                .collect();
            if !ids.is_empty() {
                be.call(
                    Service::EventBridge,
                    "RemoveTargets",
                    id,
                    be.inner
                        .events
                        .remove_targets()
                        .rule(id)
                        .set_ids(Some(ids))
                        .send(),
                )
                .await?;
            }
            be.call(
                Service::EventBridge,
                "DeleteRule",
                id,
                be.inner.events.delete_rule().name(id).send(),
            )
            .await?;
        }
        R::EventTarget => {
            let (rule, tid) = id.split_once('/').ok_or_else(|| {
                Error::invalid(format!("{rt} {id}"), "IDs are <rule>/<target id>")
            })?;
            be.call(
                Service::EventBridge,
                "RemoveTargets",
                id,
                be.inner.events.remove_targets().rule(rule).ids(tid).send(),
            )
            .await?;
        }
        R::RecordSet => {
            let found = list_records(be, &Scope::Ids(vec![id.to_owned()])).await?;
            if let Some(r) = found.into_iter().find(|r| r.id == id) {
                let zone = r.parent.clone().unwrap_or_default();
                change_record(be, &zone, ChangeAction::Delete, &r.attrs.to_map()).await?;
            }
        }
        other => return Err(not_impl("delete", other)),
    }
    Ok(())
}
