//! S3 objects.

use kops_cloud_aws::cloud::{CloudResult, ListQuery, Resource, ResourceType};

use super::{Create, Kind, Update};
use crate::MockAws;
use crate::cloud::{Attrs, IntoCloud, a_str, gone, put, put_opt, split2, to_cloud_error};
use crate::s3::PutOptions;

/// [`ResourceType::S3Object`].
pub(super) struct S3Object;

impl Kind for S3Object {
    fn kind(&self) -> ResourceType {
        ResourceType::S3Object
    }

    fn native(&self) -> &'static [&'static str] {
        &[
            "bucket",
            "key",
            "content",
            "server_side_encryption",
            "acl",
            "content_type",
            "etag",
        ]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        let mut keys: Vec<(String, String)> = Vec::new();
        if !q.ids.is_empty() {
            for id in &q.ids {
                if let Some((b, k)) = id.split_once('/') {
                    keys.push((b.to_owned(), k.to_owned()));
                }
            }
        } else {
            let buckets = match &q.parent {
                Some(p) => vec![p.clone()],
                None => m.list_buckets().into_cloud()?,
            };
            for b in buckets {
                match m.list_objects(&b, "") {
                    Ok(ks) => keys.extend(ks.into_iter().map(|k| (b.clone(), k))),
                    Err(e) if e.is_not_found() => {}
                    Err(e) => return Err(to_cloud_error(e)),
                }
            }
        }
        for (b, k) in keys {
            let o = match m.get_object(&b, &k) {
                Ok(o) => o,
                Err(e) if e.is_not_found() => continue,
                Err(e) => return Err(to_cloud_error(e)),
            };
            let mut r = Resource::new(rt, format!("{b}/{k}")).with_parent(&b);
            put(&mut r.attrs, "bucket", b.clone());
            put(&mut r.attrs, "key", k.clone());
            put(
                &mut r.attrs,
                "content",
                String::from_utf8_lossy(&o.data).into_owned(),
            );
            put_opt(
                &mut r.attrs,
                "server_side_encryption",
                o.server_side_encryption,
            );
            put_opt(&mut r.attrs, "acl", o.acl);
            put_opt(&mut r.attrs, "content_type", o.content_type);
            put(&mut r.attrs, "etag", o.etag);
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let bucket = c.parent_or("bucket")?;
        let key = c.need("key")?;
        let opts = put_options(a);
        m.put_object(
            &bucket,
            &key,
            a_str(a, "content").unwrap_or_default().into_bytes(),
            opts,
        )
        .into_cloud()?;
        Ok(format!("{bucket}/{key}"))
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let rt = u.rt;
        let id = u.id;
        let merged = &u.merged;
        let (bucket, key) = split2(rt, id, '/')?;
        let opts = put_options(merged);
        m.put_object(
            bucket,
            key,
            a_str(merged, "content").unwrap_or_default().into_bytes(),
            opts,
        )
        .into_cloud()?;
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        let rt = self.kind();
        let (bucket, key) = split2(rt, id, '/')?;
        gone(m.delete_object(bucket, key))
    }
}

fn put_options(a: &Attrs) -> PutOptions {
    let mut o = PutOptions::default();
    if let Some(v) = a_str(a, "acl") {
        o = o.with_acl(v);
    }
    if let Some(v) = a_str(a, "server_side_encryption") {
        o = o.with_server_side_encryption(v);
    }
    if let Some(v) = a_str(a, "content_type") {
        o = o.with_content_type(v);
    }
    o
}
