//! Local-file backend (`file://`).
//!
//! Objects are files under a root directory. Writes go to a temporary file
//! in the target directory which is then renamed over the target, so a
//! reader sees the old or the new content, never a mix. Versions are the
//! SHA-256 of the content. Every write and delete holds an exclusive
//! advisory lock on `<root>/.kops-statestore.lock` (`flock` on Unix) while it
//! checks its precondition and renames, so conditional writes are safe
//! between store instances in one process and between processes.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use bytes::Bytes;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::store::{
    DeleteOptions, GetResult, ObjectMeta, PutMode, PutOptions, Store, Version, validate_path,
    validate_prefix,
};

const LOCK_FILE: &str = ".kops-statestore.lock";
const TMP_PREFIX: &str = ".kops-tmp-";

/// A store in a local directory.
#[derive(Debug, Clone)]
pub struct LocalStore {
    root: PathBuf,
}

impl LocalStore {
    /// A store rooted at `root`; the directory is created on the first write.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        LocalStore { root: root.into() }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    async fn blocking<T: Send + 'static>(
        &self,
        op: &'static str,
        path: &str,
        f: impl FnOnce(&Path) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let root = self.root.clone();
        tokio::task::spawn_blocking(move || f(&root))
            .await
            .map_err(|e| Error::backend("file", op, path, e))?
    }
}

fn version_of(data: &[u8]) -> Version {
    let digest = Sha256::digest(data);
    let mut s = String::with_capacity(32);
    for b in &digest[..16] {
        s.push_str(&format!("{b:02x}"));
    }
    Version::new(s)
}

fn io_err(op: &'static str, path: &str, e: io::Error) -> Error {
    match e.kind() {
        io::ErrorKind::PermissionDenied => Error::PermissionDenied {
            operation: op,
            path: path.to_string(),
            source: e.into(),
        },
        _ => Error::backend("file", op, path, e),
    }
}

/// Reads a file; `None` if missing or a directory.
fn read_opt(file: &Path, op: &'static str, path: &str) -> Result<Option<Vec<u8>>> {
    match fs::read(file) {
        Ok(d) => Ok(Some(d)),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound
                    | io::ErrorKind::IsADirectory
                    | io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(None)
        }
        Err(e) if file.is_dir() => {
            let _ = e;
            Ok(None)
        }
        Err(e) => Err(io_err(op, path, e)),
    }
}

/// Holds the root's advisory lock until dropped.
struct RootLock(File);

impl RootLock {
    fn acquire(root: &Path, op: &'static str, path: &str) -> Result<Self> {
        fs::create_dir_all(root).map_err(|e| io_err(op, path, e))?;
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(root.join(LOCK_FILE))
            .map_err(|e| io_err(op, path, e))?;
        f.lock().map_err(|e| io_err(op, path, e))?;
        Ok(RootLock(f))
    }
}

impl Drop for RootLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

fn put_blocking(root: &Path, path: &str, data: &[u8], mode: &PutMode) -> Result<Version> {
    let target = root.join(path);
    let _lock = RootLock::acquire(root, "put", path)?;
    match mode {
        PutMode::Overwrite => {}
        PutMode::CreateIfAbsent => {
            if read_opt(&target, "put", path)?.is_some() {
                return Err(Error::AlreadyExists {
                    path: path.to_string(),
                });
            }
        }
        PutMode::UpdateIfVersionMatches(expected) => {
            let current = read_opt(&target, "put", path)?.map(|d| version_of(&d));
            if current.as_ref() != Some(expected) {
                return Err(Error::Precondition {
                    path: path.to_string(),
                    expected: expected.to_string(),
                });
            }
        }
    }
    let dir = target.parent().unwrap_or(root);
    fs::create_dir_all(dir).map_err(|e| io_err("put", path, e))?;
    let tmp = dir.join(format!("{TMP_PREFIX}{:016x}", rand::random::<u64>()));
    let write = || -> io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(data)?;
        f.sync_data()?;
        fs::rename(&tmp, &target)
    };
    if let Err(e) = write() {
        let _ = fs::remove_file(&tmp);
        return Err(io_err("put", path, e));
    }
    Ok(version_of(data))
}

fn delete_blocking(root: &Path, path: &str, if_version: Option<&Version>) -> Result<()> {
    let target = root.join(path);
    let precondition = |expected: &Version| Error::Precondition {
        path: path.to_string(),
        expected: expected.to_string(),
    };
    if !root.exists() {
        return match if_version {
            Some(v) => Err(precondition(v)),
            None => Ok(()),
        };
    }
    let _lock = RootLock::acquire(root, "delete", path)?;
    if let Some(expected) = if_version {
        let current = read_opt(&target, "delete", path)?.map(|d| version_of(&d));
        if current.as_ref() != Some(expected) {
            return Err(precondition(expected));
        }
    }
    match fs::remove_file(&target) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) if target.is_dir() => {
            let _ = e;
            return Ok(());
        }
        Err(e) => return Err(io_err("delete", path, e)),
    }
    // Remove directories left empty, up to (not including) the root.
    let mut dir = target.parent();
    while let Some(d) = dir {
        if d == root || !d.starts_with(root) || fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(())
}

fn list_blocking(root: &Path, prefix: &str) -> Result<Vec<ObjectMeta>> {
    // Start at the deepest directory the prefix names in full.
    let start_rel = match prefix.rfind('/') {
        Some(i) => &prefix[..i],
        None => "",
    };
    let mut out = Vec::new();
    let mut stack = vec![(root.join(start_rel), start_rel.to_string())];
    while let Some((dir, rel)) = stack.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                continue;
            }
            Err(e) => return Err(io_err("list", prefix, e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| io_err("list", prefix, e))?;
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue; // not UTF-8: not one of ours
            };
            if name.starts_with(TMP_PREFIX) || (rel.is_empty() && name == LOCK_FILE) {
                continue;
            }
            let key = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            let ft = entry.file_type().map_err(|e| io_err("list", prefix, e))?;
            if ft.is_dir() {
                if key.starts_with(prefix) || prefix.starts_with(&format!("{key}/")) {
                    stack.push((entry.path(), key));
                }
            } else if ft.is_file() && key.starts_with(prefix) {
                let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                out.push(ObjectMeta::new(key, size));
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Rejects paths that would collide with the backend's own files.
fn validate_local(path: &str) -> Result<()> {
    validate_path(path)?;
    if path == LOCK_FILE || path.split('/').any(|s| s.starts_with(TMP_PREFIX)) {
        return Err(Error::InvalidPath {
            path: path.to_string(),
            reason: "reserved by the file backend".to_string(),
        });
    }
    Ok(())
}

#[async_trait]
impl Store for LocalStore {
    async fn get(&self, path: &str) -> Result<GetResult> {
        validate_local(path)?;
        let p = path.to_string();
        self.blocking("get", path, move |root| {
            match read_opt(&root.join(&p), "get", &p)? {
                Some(d) => Ok(GetResult {
                    version: version_of(&d),
                    data: Bytes::from(d),
                }),
                None => Err(Error::NotFound { path: p }),
            }
        })
        .await
    }

    async fn put(&self, path: &str, data: Bytes, options: PutOptions) -> Result<Version> {
        validate_local(path)?;
        let p = path.to_string();
        self.blocking("put", path, move |root| {
            put_blocking(root, &p, &data, &options.mode)
        })
        .await
    }

    async fn delete_opts(&self, path: &str, options: DeleteOptions) -> Result<()> {
        validate_local(path)?;
        let p = path.to_string();
        self.blocking("delete", path, move |root| {
            delete_blocking(root, &p, options.if_version.as_ref())
        })
        .await
    }

    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>> {
        validate_prefix(prefix)?;
        let p = prefix.to_string();
        self.blocking("list", prefix, move |root| list_blocking(root, &p))
            .await
    }

    fn url(&self) -> String {
        format!("file://{}", self.root.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(tag: &str) -> PathBuf {
        std::env::temp_dir().join(format!(
            "kops-local-{tag}-{}-{:x}",
            std::process::id(),
            rand::random::<u32>()
        ))
    }

    #[tokio::test]
    async fn keeps_its_own_files_out_of_the_key_space() {
        let root = tmp("reserved");
        let s = LocalStore::new(&root);
        s.put("a/b/c", Bytes::from_static(b"x"), PutOptions::default())
            .await
            .unwrap();
        // A temp file left by a crashed writer is not an object.
        fs::write(root.join("a/b/.kops-tmp-0123"), b"partial").unwrap();
        let paths: Vec<_> = s
            .list("")
            .await
            .unwrap()
            .into_iter()
            .map(|o| o.path)
            .collect();
        assert_eq!(paths, ["a/b/c"]);
        for bad in [LOCK_FILE, "a/.kops-tmp-1"] {
            let e = s.put(bad, Bytes::new(), PutOptions::default()).await;
            assert!(matches!(e, Err(Error::InvalidPath { .. })), "{bad}: {e:?}");
        }
        // A directory is not an object.
        assert!(s.get("a/b").await.unwrap_err().is_not_found());
        fs::remove_dir_all(&root).unwrap();
    }

    #[tokio::test]
    async fn delete_prunes_empty_directories() {
        let root = tmp("prune");
        let s = LocalStore::new(&root);
        for p in ["c/instancegroup/nodes", "c/config"] {
            s.put(p, Bytes::from_static(b"x"), PutOptions::default())
                .await
                .unwrap();
        }
        s.delete("c/instancegroup/nodes").await.unwrap();
        assert!(!root.join("c/instancegroup").exists());
        assert!(root.join("c/config").is_file());
        s.delete("c/config").await.unwrap();
        assert!(!root.join("c").exists());
        assert!(root.exists(), "the root itself stays");
        // Missing root: reads say not found, listings are empty.
        let missing = LocalStore::new(root.join("nope"));
        assert!(missing.get("x").await.unwrap_err().is_not_found());
        assert!(missing.list("").await.unwrap().is_empty());
        missing.delete("x").await.unwrap();
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn version_is_content_hash() {
        assert_eq!(version_of(b"a"), version_of(b"a"));
        assert_ne!(version_of(b"a"), version_of(b"b"));
        assert_eq!(version_of(b"").as_str().len(), 32);
    }
}
