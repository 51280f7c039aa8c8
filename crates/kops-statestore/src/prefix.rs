//! A decorator that roots another store under a path prefix.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;

use crate::error::{Error, Result};
use crate::store::{
    DeleteOptions, GetResult, ObjectMeta, PutOptions, Store, Version, Warning, validate_path,
    validate_prefix,
};

/// A view of `inner` under `prefix/`: path `a/b` here is `prefix/a/b` there.
/// Errors name paths as seen through this view.
#[derive(Debug, Clone)]
pub struct PrefixStore {
    inner: Arc<dyn Store>,
    prefix: String,
}

impl PrefixStore {
    /// Roots `inner` at `prefix` (a valid path; surrounding `/` are trimmed).
    pub fn new(inner: Arc<dyn Store>, prefix: &str) -> Result<Self> {
        let prefix = prefix.trim_matches('/');
        validate_path(prefix)?;
        Ok(PrefixStore {
            inner,
            prefix: prefix.to_string(),
        })
    }

    fn full(&self, path: &str) -> String {
        format!("{}/{}", self.prefix, path)
    }

    fn strip(&self, full: &str) -> String {
        full.strip_prefix(&self.prefix)
            .and_then(|s| s.strip_prefix('/'))
            .unwrap_or(full)
            .to_string()
    }

    fn rename_err(&self, e: Error) -> Error {
        match e {
            Error::NotFound { path } => Error::NotFound {
                path: self.strip(&path),
            },
            Error::AlreadyExists { path } => Error::AlreadyExists {
                path: self.strip(&path),
            },
            Error::Precondition { path, expected } => Error::Precondition {
                path: self.strip(&path),
                expected,
            },
            other => other,
        }
    }
}

#[async_trait]
impl Store for PrefixStore {
    async fn get(&self, path: &str) -> Result<GetResult> {
        validate_path(path)?;
        self.inner
            .get(&self.full(path))
            .await
            .map_err(|e| self.rename_err(e))
    }

    async fn put(&self, path: &str, data: Bytes, options: PutOptions) -> Result<Version> {
        validate_path(path)?;
        self.inner
            .put(&self.full(path), data, options)
            .await
            .map_err(|e| self.rename_err(e))
    }

    async fn delete_opts(&self, path: &str, options: DeleteOptions) -> Result<()> {
        validate_path(path)?;
        self.inner
            .delete_opts(&self.full(path), options)
            .await
            .map_err(|e| self.rename_err(e))
    }

    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>> {
        validate_prefix(prefix)?;
        let full = self.full(prefix);
        let mut out = self.inner.list(&full).await?;
        for o in &mut out {
            o.path = self.strip(&o.path);
        }
        Ok(out)
    }

    fn url(&self) -> String {
        let base = self.inner.url();
        if base.ends_with('/') {
            format!("{base}{}", self.prefix)
        } else {
            format!("{base}/{}", self.prefix)
        }
    }

    fn region(&self) -> Option<String> {
        self.inner.region()
    }

    async fn warnings(&self) -> Result<Vec<Warning>> {
        self.inner.warnings().await
    }

    async fn safety_checks(&self) -> Result<Vec<crate::store::SafetyCheck>> {
        self.inner.safety_checks().await
    }

    async fn fix_safety(&self) -> Result<Vec<String>> {
        self.inner.fix_safety().await
    }

    async fn list_versions(&self, prefix: &str) -> Result<Vec<crate::store::ObjectVersion>> {
        validate_prefix(prefix)?;
        let mut out = self.inner.list_versions(&self.full(prefix)).await?;
        for v in &mut out {
            v.path = self.strip(&v.path);
        }
        Ok(out)
    }

    async fn get_version(&self, path: &str, version_id: &str) -> Result<GetResult> {
        validate_path(path)?;
        self.inner
            .get_version(&self.full(path), version_id)
            .await
            .map_err(|e| self.rename_err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryStore;

    #[tokio::test]
    async fn roots_paths_and_errors_under_the_prefix() {
        let mem = MemoryStore::new();
        let p = PrefixStore::new(Arc::new(mem.clone()), "/state/a/").unwrap();
        assert_eq!(p.url(), "memfs://state/a");
        p.put("c/config", Bytes::from_static(b"x"), PutOptions::create())
            .await
            .unwrap();
        assert!(mem.get("state/a/c/config").await.is_ok());
        let e = p
            .put("c/config", Bytes::from_static(b"x"), PutOptions::create())
            .await
            .unwrap_err();
        assert!(
            matches!(e, Error::AlreadyExists { ref path } if path == "c/config"),
            "{e:?}"
        );
        let e = p.get("missing").await.unwrap_err();
        assert!(
            matches!(e, Error::NotFound { ref path } if path == "missing"),
            "{e:?}"
        );
        mem.put("state/ab/x", Bytes::new(), PutOptions::default())
            .await
            .unwrap();
        let listed: Vec<_> = p
            .list("")
            .await
            .unwrap()
            .into_iter()
            .map(|o| o.path)
            .collect();
        assert_eq!(listed, ["c/config"], "a sibling prefix must not leak in");
        assert!(PrefixStore::new(Arc::new(mem), "a/../b").is_err());
    }
}
