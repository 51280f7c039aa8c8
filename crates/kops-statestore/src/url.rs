//! Choosing a backend from a state-store URL.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::local::LocalStore;
use crate::memory::MemoryStore;
use crate::prefix::PrefixStore;
use crate::store::Store;

/// What [`open`] needs besides the URL: clients' configuration and, for
/// `memfs://`, the memory store to use. Nothing is read from the environment.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct StoreOptions {
    memory: Option<MemoryStore>,
    #[cfg(feature = "s3")]
    s3: crate::s3::S3Config,
    #[cfg(feature = "gcs")]
    gcs: crate::gcs::GcsConfig,
}

impl StoreOptions {
    /// Options whose cloud clients are configured from the environment:
    /// [`S3Config::from_env`](crate::s3::S3Config::from_env) and
    /// [`GcsConfig::from_env`](crate::gcs::GcsConfig::from_env). Fails when the
    /// environment is inconsistent (`S3_ENDPOINT` without its keys, a
    /// credentials file that cannot be read).
    pub async fn from_env() -> Result<Self> {
        Self::configure(true, true).await
    }

    /// Like [`StoreOptions::from_env`], but reads only what opening `url`
    /// needs: the S3 environment for `s3://`, the GCS environment for `gs://`,
    /// nothing for local stores (so a `file://` store never makes the AWS
    /// SDK probe for a region or credentials).
    pub async fn from_env_for(url: &str) -> Result<Self> {
        match StoreUrl::parse(url)? {
            StoreUrl::S3 { .. } => Self::configure(true, false).await,
            StoreUrl::Gcs { .. } => Self::configure(false, true).await,
            _ => Ok(StoreOptions::default()),
        }
    }

    /// [`StoreOptions::from_env_for`], with the AWS SDK's environment of an `s3://` store
    /// from `aws`, which is called only when `url` needs it (an `s3://` URL without
    /// kOps' `S3_ENDPOINT`): give it one that hands out the
    /// [`AwsEnv`](crate::aws::AwsEnv) the caller's other AWS clients use (loading it at
    /// most once), and the store shares their credentials provider and identity cache,
    /// so credentials are fetched once for all of them
    /// ([`S3Config::from_env_sharing`](crate::s3::S3Config::from_env_sharing)).
    #[cfg(feature = "s3")]
    pub async fn from_env_for_sharing<F, Fut>(url: &str, aws: F) -> Result<Self>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = crate::aws::AwsEnv>,
    {
        match StoreUrl::parse(url)? {
            StoreUrl::S3 { .. } => Ok(StoreOptions {
                s3: crate::s3::S3Config::from_env_sharing(aws).await?,
                ..StoreOptions::default()
            }),
            _ => Self::from_env_for(url).await,
        }
    }

    #[allow(unused_variables, unused_mut)]
    async fn configure(s3: bool, gcs: bool) -> Result<Self> {
        let mut o = StoreOptions::default();
        #[cfg(feature = "s3")]
        if s3 {
            o.s3 = crate::s3::S3Config::from_env().await?;
        }
        #[cfg(feature = "gcs")]
        if gcs {
            o.gcs = crate::gcs::GcsConfig::from_env()?;
        }
        Ok(o)
    }

    /// Serves `memfs://` URLs from `store` (default: a new, empty one per [`open`]).
    pub fn with_memory(mut self, store: MemoryStore) -> Self {
        self.memory = Some(store);
        self
    }

    /// Configures the S3 client for `s3://` URLs.
    #[cfg(feature = "s3")]
    pub fn with_s3(mut self, config: crate::s3::S3Config) -> Self {
        self.s3 = config;
        self
    }

    /// Configures the GCS client for `gs://` URLs.
    #[cfg(feature = "gcs")]
    pub fn with_gcs(mut self, config: crate::gcs::GcsConfig) -> Self {
        self.gcs = config;
        self
    }
}

/// A parsed state-store URL.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreUrl {
    /// `memfs://[prefix]`
    Memory {
        /// Key prefix inside the memory store (may be empty).
        prefix: String,
    },
    /// `file:///abs/dir` (or `file://relative/dir`)
    File {
        /// The directory.
        path: String,
    },
    /// `s3://bucket[/prefix]`
    S3 {
        /// Bucket name.
        bucket: String,
        /// Key prefix (may be empty).
        prefix: String,
    },
    /// `gs://bucket[/prefix]`
    Gcs {
        /// Bucket name.
        bucket: String,
        /// Key prefix (may be empty).
        prefix: String,
    },
}

impl StoreUrl {
    /// Parses `url`; unknown schemes and malformed URLs are [`Error::InvalidUrl`].
    pub fn parse(url: &str) -> Result<StoreUrl> {
        let invalid = |reason: &str| Error::InvalidUrl {
            url: url.to_string(),
            reason: reason.to_string(),
        };
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| invalid("expected <scheme>://..., e.g. s3://bucket/prefix"))?;
        if rest.contains(['?', '#']) {
            return Err(invalid("query strings and fragments are not supported"));
        }
        let bucket_and_prefix = |rest: &str| -> Result<(String, String)> {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(invalid("missing bucket name"));
            }
            if !bucket.chars().all(|c| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '.' | '_')
            }) {
                return Err(invalid("bucket names use a-z, 0-9, '-', '.' and '_'"));
            }
            let prefix = prefix.trim_end_matches('/').to_string();
            if !prefix.is_empty() {
                crate::store::validate_path(&prefix)
                    .map_err(|_| invalid("malformed key prefix"))?;
            }
            Ok((bucket.to_string(), prefix))
        };
        match scheme {
            "memfs" => {
                let prefix = rest.trim_matches('/').to_string();
                if !prefix.is_empty() {
                    crate::store::validate_path(&prefix)
                        .map_err(|_| invalid("malformed key prefix"))?;
                }
                Ok(StoreUrl::Memory { prefix })
            }
            "file" => {
                if rest.is_empty() {
                    return Err(invalid("missing directory"));
                }
                Ok(StoreUrl::File {
                    path: rest.to_string(),
                })
            }
            "s3" => bucket_and_prefix(rest).map(|(bucket, prefix)| StoreUrl::S3 { bucket, prefix }),
            "gs" => {
                bucket_and_prefix(rest).map(|(bucket, prefix)| StoreUrl::Gcs { bucket, prefix })
            }
            other => Err(invalid(&format!(
                "unknown scheme {other:?}: expected memfs, file, s3 or gs"
            ))),
        }
    }
}

fn with_prefix(store: Arc<dyn Store>, prefix: &str) -> Result<Arc<dyn Store>> {
    if prefix.is_empty() {
        Ok(store)
    } else {
        Ok(Arc::new(PrefixStore::new(store, prefix)?))
    }
}

/// Opens the store named by `url`: `memfs://`, `file://`, `s3://` (feature
/// `s3`) or `gs://` (feature `gcs`). Nothing is sent: an `s3://` store finds its
/// bucket's region on its first request (unless the options name it), so its
/// [`Store::region`] is known once it has been used (a cluster read, say).
pub fn open(url: &str, options: &StoreOptions) -> Result<Arc<dyn Store>> {
    match StoreUrl::parse(url)? {
        StoreUrl::Memory { prefix } => {
            let mem = options.memory.clone().unwrap_or_default();
            with_prefix(Arc::new(mem), &prefix)
        }
        StoreUrl::File { path } => Ok(Arc::new(LocalStore::new(path))),
        #[cfg(feature = "s3")]
        StoreUrl::S3 { bucket, prefix } => with_prefix(
            Arc::new(crate::s3::S3Store::new(bucket, &options.s3)),
            &prefix,
        ),
        #[cfg(feature = "gcs")]
        StoreUrl::Gcs { bucket, prefix } => with_prefix(
            Arc::new(crate::gcs::GcsStore::new(bucket, &options.gcs)?),
            &prefix,
        ),
        #[allow(unreachable_patterns)]
        _ => Err(Error::NotImplemented {
            operation: format!("opening {url}"),
            implementer: "this build of kops-statestore (enable the s3 / gcs feature)".to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_urls() {
        assert_eq!(
            StoreUrl::parse("s3://my-bucket/a/b/").ok(),
            Some(StoreUrl::S3 {
                bucket: "my-bucket".into(),
                prefix: "a/b".into()
            })
        );
        assert_eq!(
            StoreUrl::parse("gs://b").ok(),
            Some(StoreUrl::Gcs {
                bucket: "b".into(),
                prefix: "".into()
            })
        );
        assert_eq!(
            StoreUrl::parse("file:///tmp/x").ok(),
            Some(StoreUrl::File {
                path: "/tmp/x".into()
            })
        );
        assert_eq!(
            StoreUrl::parse("memfs://tests").ok(),
            Some(StoreUrl::Memory {
                prefix: "tests".into()
            })
        );
        for bad in [
            "azureblob://x",
            "s3:/b",
            "s3://",
            "s3:///p",
            "s3://Bad_Bucket!/p",
            "s3://b/a//c",
            "gs://b/../x",
            "bucket/prefix",
            "file://",
            "s3://b/p?x=1",
        ] {
            let e = StoreUrl::parse(bad).err();
            assert!(
                matches!(e, Some(Error::InvalidUrl { .. })),
                "{bad:?} gave {e:?}"
            );
        }
        let msg = StoreUrl::parse("azureblob://x")
            .err()
            .map(|e| e.to_string());
        assert!(msg.is_some_and(|m| m.contains("unknown scheme \"azureblob\"")));
    }

    /// Local stores never load the AWS SDK's environment.
    #[cfg(feature = "s3")]
    #[tokio::test]
    async fn local_stores_load_no_aws_env() {
        for url in ["memfs://x", "file:///tmp/kops-state"] {
            let o = StoreOptions::from_env_for_sharing(url, || async {
                panic!("{url} loaded the AWS SDK's environment")
            })
            .await;
            assert!(o.is_ok(), "{url}: {o:?}");
        }
    }
}
