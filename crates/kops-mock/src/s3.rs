//! S3 buckets and objects.

use std::collections::{BTreeMap, BTreeSet};

use crate::MockAws;
use crate::error::{Error, Result};

/// An object's metadata and content. `Debug` shows the content's length, not the content
/// (state-store objects include private keys).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Object {
    /// Bucket.
    pub bucket: String,
    /// Key.
    pub key: String,
    /// Content.
    pub data: Vec<u8>,
    /// Canned ACL (`private`, `bucket-owner-full-control`, ...).
    pub acl: Option<String>,
    /// Server-side encryption (`AES256`, `aws:kms`).
    pub server_side_encryption: Option<String>,
    /// Content type.
    pub content_type: Option<String>,
    /// MD5 of the content, hex, quoted as S3 does.
    pub etag: String,
}

/// Options of `PutObject`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct PutOptions {
    /// Canned ACL.
    pub acl: Option<String>,
    /// Server-side encryption.
    pub server_side_encryption: Option<String>,
    /// Content type.
    pub content_type: Option<String>,
}

impl PutOptions {
    /// Sets the ACL.
    pub fn with_acl(mut self, acl: impl Into<String>) -> Self {
        self.acl = Some(acl.into());
        self
    }

    /// Sets server-side encryption.
    pub fn with_server_side_encryption(mut self, sse: impl Into<String>) -> Self {
        self.server_side_encryption = Some(sse.into());
        self
    }

    /// Sets the content type.
    pub fn with_content_type(mut self, ct: impl Into<String>) -> Self {
        self.content_type = Some(ct.into());
        self
    }
}

impl std::fmt::Debug for Object {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Object")
            .field("bucket", &self.bucket)
            .field("key", &self.key)
            .field("data", &format_args!("<{} bytes>", self.data.len()))
            .field("acl", &self.acl)
            .field("server_side_encryption", &self.server_side_encryption)
            .field("content_type", &self.content_type)
            .field("etag", &self.etag)
            .finish()
    }
}

#[derive(Debug, Default)]
pub(crate) struct S3State {
    pub(crate) buckets: BTreeMap<String, BTreeMap<String, Object>>,
}

impl S3State {
    pub(crate) fn collect_ids(&self, out: &mut BTreeSet<String>) {
        for (b, objs) in &self.buckets {
            out.insert(format!("s3://{b}"));
            out.extend(objs.keys().map(|k| format!("s3://{b}/{k}")));
        }
    }
}

fn etag(data: &[u8]) -> String {
    use md5::{Digest, Md5};
    let d = Md5::digest(data);
    format!(
        "\"{}\"",
        d.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

impl MockAws {
    /// `CreateBucket`.
    pub fn create_bucket(&self, bucket: &str) -> Result<()> {
        self.call("s3:CreateBucket", |st, op| {
            if bucket.len() < 3 || bucket.len() > 63 {
                return Err(Error::invalid(op, "Bucket", "3..63 characters"));
            }
            if st.s3.buckets.contains_key(bucket) {
                return Err(Error::exists(op, "bucket", bucket));
            }
            st.s3.buckets.insert(bucket.to_owned(), BTreeMap::new());
            Ok(())
        })
    }

    /// `ListBuckets`.
    pub fn list_buckets(&self) -> Result<Vec<String>> {
        self.call("s3:ListBuckets", |st, _| {
            Ok(st.s3.buckets.keys().cloned().collect())
        })
    }

    /// `DeleteBucket`: fails while it holds objects.
    pub fn delete_bucket(&self, bucket: &str) -> Result<()> {
        self.call("s3:DeleteBucket", |st, op| {
            let objs = st
                .s3
                .buckets
                .get(bucket)
                .ok_or_else(|| Error::not_found(op, "bucket", bucket))?;
            if !objs.is_empty() {
                return Err(Error::conflict(op, "bucket", bucket, "is not empty"));
            }
            st.s3.buckets.remove(bucket);
            Ok(())
        })
    }

    /// `PutObject`.
    pub fn put_object(
        &self,
        bucket: &str,
        key: &str,
        data: Vec<u8>,
        options: PutOptions,
    ) -> Result<Object> {
        self.call("s3:PutObject", |st, op| {
            let objs = st
                .s3
                .buckets
                .get_mut(bucket)
                .ok_or_else(|| Error::not_found(op, "bucket", bucket))?;
            if key.is_empty() {
                return Err(Error::invalid(op, "Key", "is empty"));
            }
            let o = Object {
                bucket: bucket.to_owned(),
                key: key.to_owned(),
                etag: etag(&data),
                data,
                acl: options.acl,
                server_side_encryption: options.server_side_encryption,
                content_type: options.content_type,
            };
            objs.insert(key.to_owned(), o.clone());
            Ok(o)
        })
    }

    /// `GetObject`.
    pub fn get_object(&self, bucket: &str, key: &str) -> Result<Object> {
        self.call("s3:GetObject", |st, op| {
            st.s3
                .buckets
                .get(bucket)
                .ok_or_else(|| Error::not_found(op, "bucket", bucket))?
                .get(key)
                .cloned()
                .ok_or_else(|| Error::not_found(op, "object", format!("s3://{bucket}/{key}")))
        })
    }

    /// `ListObjectsV2`: keys under `prefix`, sorted.
    pub fn list_objects(&self, bucket: &str, prefix: &str) -> Result<Vec<String>> {
        self.call("s3:ListObjectsV2", |st, op| {
            Ok(st
                .s3
                .buckets
                .get(bucket)
                .ok_or_else(|| Error::not_found(op, "bucket", bucket))?
                .keys()
                .filter(|k| k.starts_with(prefix))
                .cloned()
                .collect())
        })
    }

    /// `DeleteObject` (succeeds when absent, as on S3).
    pub fn delete_object(&self, bucket: &str, key: &str) -> Result<()> {
        self.call("s3:DeleteObject", |st, op| {
            st.s3
                .buckets
                .get_mut(bucket)
                .ok_or_else(|| Error::not_found(op, "bucket", bucket))?
                .remove(key);
            Ok(())
        })
    }
}
