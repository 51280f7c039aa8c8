//! In-memory backend (`memfs://`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use bytes::Bytes;

use crate::error::{Error, Result};
use crate::store::{
    DeleteOptions, GetResult, ObjectMeta, PutMode, PutOptions, Store, Version, validate_path,
};

#[derive(Debug, Default)]
struct Inner {
    objects: BTreeMap<String, (Bytes, u64)>,
    counter: u64,
}

/// A store held in memory. Clones share the same objects, so two clones
/// behave like two clients of one bucket; [`MemoryStore::new`] makes an
/// empty, independent one.
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    inner: Arc<Mutex<Inner>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave the map half-updated
        // (every mutation is a single insert/remove), so poisoning is ignored.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait]
impl Store for MemoryStore {
    async fn get(&self, path: &str) -> Result<GetResult> {
        validate_path(path)?;
        let inner = self.lock();
        match inner.objects.get(path) {
            Some((data, v)) => Ok(GetResult {
                data: data.clone(),
                version: Version::new(v.to_string()),
            }),
            None => Err(Error::NotFound {
                path: path.to_string(),
            }),
        }
    }

    async fn put(&self, path: &str, data: Bytes, options: PutOptions) -> Result<Version> {
        validate_path(path)?;
        let mut inner = self.lock();
        let current = inner.objects.get(path).map(|(_, v)| *v);
        match (&options.mode, current) {
            (PutMode::Overwrite, _) | (PutMode::CreateIfAbsent, None) => {}
            (PutMode::CreateIfAbsent, Some(_)) => {
                return Err(Error::AlreadyExists {
                    path: path.to_string(),
                });
            }
            (PutMode::UpdateIfVersionMatches(expected), current) => {
                if current.map(|c| c.to_string()).as_deref() != Some(expected.as_str()) {
                    return Err(Error::Precondition {
                        path: path.to_string(),
                        expected: expected.to_string(),
                    });
                }
            }
        }
        inner.counter += 1;
        let v = inner.counter;
        inner.objects.insert(path.to_string(), (data, v));
        Ok(Version::new(v.to_string()))
    }

    async fn delete_opts(&self, path: &str, options: DeleteOptions) -> Result<()> {
        validate_path(path)?;
        let mut inner = self.lock();
        if let Some(expected) = &options.if_version {
            let current = inner.objects.get(path).map(|(_, v)| v.to_string());
            if current.as_deref() != Some(expected.as_str()) {
                return Err(Error::Precondition {
                    path: path.to_string(),
                    expected: expected.to_string(),
                });
            }
        }
        inner.objects.remove(path);
        Ok(())
    }

    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>> {
        crate::store::validate_prefix(prefix)?;
        let inner = self.lock();
        Ok(inner
            .objects
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, (d, v))| {
                use md5::Digest as _;
                ObjectMeta::new(k.clone(), d.len() as u64)
                    .with_md5(md5::Md5::digest(d).into())
                    .with_version(Version::new(v.to_string()))
            })
            .collect())
    }

    fn url(&self) -> String {
        "memfs://".to_string()
    }
}
