//! Terraform's remote state: the `backend` block of a configuration, written to its own
//! file (`backend.tf`) beside the generated ones so that regenerating them keeps it.
//!
//! The state of a cluster's configuration is worth keeping where a lost laptop cannot take
//! it: in a bucket with versioning on, so an overwritten or deleted state can be restored
//! from an earlier version, and with a lock so that two `terraform apply` runs never write
//! it at once.

use std::fmt;

use super::hcl::{Body, Expr, write_block};

/// Where Terraform keeps the state, parsed from a URL: `s3://BUCKET/KEY` or
/// `gs://BUCKET/PREFIX`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Backend {
    /// The store.
    pub kind: BackendKind,
    /// The bucket.
    pub bucket: String,
    /// The state object's key (S3) or the prefix of the state objects (GCS).
    pub key: String,
    /// The bucket's region (S3).
    pub region: Option<String>,
    /// How concurrent runs are kept apart (S3; GCS always locks).
    pub lock: BackendLock,
    /// An S3-compatible endpoint instead of AWS's (MinIO, a local emulator): addressed in
    /// path style, without AWS's account, region and credential checks.
    pub endpoint: Option<String>,
}

/// The kind of store a [`Backend`] writes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BackendKind {
    /// Amazon S3 (`backend "s3"`).
    S3,
    /// Google Cloud Storage (`backend "gcs"`).
    Gcs,
}

/// How an S3 backend locks the state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum BackendLock {
    /// A lock object beside the state in the same bucket (`use_lockfile`, Terraform 1.10
    /// and later).
    #[default]
    Lockfile,
    /// A DynamoDB table (`dynamodb_table`), for older Terraform.
    DynamoDb(String),
    /// No lock.
    None,
}

/// A backend URL or lock that cannot be used; the message says why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendError(String);

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BackendError {}

impl Backend {
    /// The file the block is written to.
    pub const FILE: &'static str = "backend.tf";

    /// Parses `s3://BUCKET/KEY` or `gs://BUCKET/PREFIX`; the key (or prefix) is required.
    pub fn parse(url: &str) -> Result<Self, BackendError> {
        let (kind, rest) = if let Some(rest) = url.strip_prefix("s3://") {
            (BackendKind::S3, rest)
        } else if let Some(rest) = url.strip_prefix("gs://") {
            (BackendKind::Gcs, rest)
        } else {
            return Err(BackendError(format!(
                "{url:?}: a Terraform backend is s3://BUCKET/KEY or gs://BUCKET/PREFIX"
            )));
        };
        let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
        let key = key.trim_matches('/');
        if bucket.is_empty() || key.is_empty() {
            return Err(BackendError(format!(
                "{url:?}: name the bucket and the state's key (s3://BUCKET/KEY, gs://BUCKET/PREFIX)"
            )));
        }
        Ok(Backend {
            kind,
            bucket: bucket.to_owned(),
            key: key.to_owned(),
            region: None,
            lock: BackendLock::Lockfile,
            endpoint: None,
        })
    }

    /// Sets the bucket's region.
    pub fn with_region(mut self, region: impl Into<String>) -> Self {
        self.region = Some(region.into());
        self
    }

    /// Sets the lock.
    pub fn with_lock(mut self, lock: BackendLock) -> Self {
        self.lock = lock;
        self
    }

    /// Sets an S3-compatible endpoint.
    pub fn with_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// The `terraform { backend ... }` block, as `terraform fmt` prints it.
    pub fn render(&self) -> String {
        let (label, body) = match self.kind {
            BackendKind::S3 => ("s3", self.s3_body()),
            BackendKind::Gcs => (
                "gcs",
                Body::new()
                    .attr("bucket", self.bucket.as_str())
                    .attr("prefix", self.key.as_str()),
            ),
        };
        let mut out = String::new();
        write_block(
            &mut out,
            "terraform",
            &Body::new().block(format!("backend \"{label}\""), body),
        );
        out
    }

    fn s3_body(&self) -> Body {
        let mut body = Body::new()
            .attr("bucket", self.bucket.as_str())
            .attr("key", self.key.as_str())
            .attr_opt("region", self.region.clone())
            .attr("encrypt", true);
        match &self.lock {
            BackendLock::Lockfile => body.set("use_lockfile", true),
            BackendLock::DynamoDb(table) => body.set("dynamodb_table", table.as_str()),
            BackendLock::None => {}
        }
        if let Some(endpoint) = &self.endpoint {
            body = body
                .attr(
                    "endpoints",
                    Expr::Map([("s3".to_owned(), Expr::string(endpoint.as_str()))].into()),
                )
                .attr("use_path_style", true)
                .attr("skip_credentials_validation", true)
                .attr("skip_requesting_account_id", true)
                .attr("skip_region_validation", true)
                .attr("skip_metadata_api_check", true);
        }
        body
    }
}

impl BackendLock {
    /// Parses `lockfile`, `dynamodb:TABLE` or `none`.
    pub fn parse(text: &str) -> Result<Self, BackendError> {
        match text {
            "lockfile" => Ok(BackendLock::Lockfile),
            "none" => Ok(BackendLock::None),
            _ => match text.strip_prefix("dynamodb:") {
                Some(table) if !table.is_empty() => Ok(BackendLock::DynamoDb(table.to_owned())),
                _ => Err(BackendError(format!(
                    "{text:?}: a lock is lockfile, dynamodb:TABLE or none"
                ))),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_with_a_lockfile() {
        let b = Backend::parse("s3://tf-state/clusters/a.example.com.tfstate")
            .unwrap()
            .with_region("eu-west-1");
        assert_eq!(
            b.render(),
            "terraform {\n  backend \"s3\" {\n    bucket       = \"tf-state\"\n    encrypt      = true\n    key          = \"clusters/a.example.com.tfstate\"\n    region       = \"eu-west-1\"\n    use_lockfile = true\n  }\n}\n"
        );
    }

    #[test]
    fn s3_compatible_endpoint_and_dynamodb() {
        let b = Backend::parse("s3://b/k")
            .unwrap()
            .with_lock(BackendLock::parse("dynamodb:locks").unwrap())
            .with_endpoint("http://127.0.0.1:9000");
        let text = b.render();
        for want in [
            "dynamodb_table",
            "\"s3\" = \"http://127.0.0.1:9000\"",
            "use_path_style",
            "skip_credentials_validation",
        ] {
            assert!(text.contains(want), "{want}: {text}");
        }
        assert!(!text.contains("use_lockfile"), "{text}");
    }

    #[test]
    fn gcs_and_bad_urls() {
        assert_eq!(
            Backend::parse("gs://b/p/").unwrap().render(),
            "terraform {\n  backend \"gcs\" {\n    bucket = \"b\"\n    prefix = \"p\"\n  }\n}\n"
        );
        for bad in ["s3://bucket", "s3:///key", "file:///tmp/x", "gs://b/"] {
            assert!(Backend::parse(bad).is_err(), "{bad}");
        }
        assert!(BackendLock::parse("dynamodb:").is_err());
    }
}
