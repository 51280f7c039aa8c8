//! The blob-store trait every backend implements, and its value types.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;

use crate::error::{Error, Result};

/// An opaque version of a stored object: an S3 ETag, a GCS generation, a
/// content hash for files, a counter in memory.
///
/// Two reads of an unchanged object return equal versions; a write that
/// changes the object changes the version. Only the backend that produced a
/// version can interpret it.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Version(String);

impl Version {
    /// Wraps a backend's version string.
    pub fn new(v: impl Into<String>) -> Self {
        Version(v.into())
    }

    /// The backend's version string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Version({})", self.0)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An object read from a store: its bytes and the version they belong to.
///
/// `Debug` shows the length of the content, never the content: objects
/// include private keys (`pki/private/...`) and secrets (`secrets/...`).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GetResult {
    /// The object's content.
    pub data: Bytes,
    /// The version of exactly these bytes.
    pub version: Version,
}

impl fmt::Debug for GetResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GetResult")
            .field("data", &format_args!("<{} bytes>", self.data.len()))
            .field("version", &self.version)
            .finish()
    }
}

/// One entry of a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ObjectMeta {
    /// Path relative to the store root.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// The MD5 digest of the content, when the backend's listing tells it for certain
    /// (GCS's `md5Hash`; an S3 ETag that is a plain MD5, as for an object written in
    /// one part without KMS, may be one). A reader can compare it with the MD5 of
    /// what it expects and skip the read when they are equal; an unequal or missing
    /// digest only means the object has to be read.
    pub md5: Option<[u8; 16]>,
    /// The object's [`Version`] as a read would return it, when the listing tells it (S3's
    /// ETag, GCS's generation, the memory store's counter).
    pub version: Option<Version>,
}

impl ObjectMeta {
    /// A listing entry.
    pub fn new(path: impl Into<String>, size: u64) -> Self {
        ObjectMeta {
            path: path.into(),
            size,
            md5: None,
            version: None,
        }
    }

    /// The entry with the object's version.
    pub fn with_version(mut self, version: Version) -> Self {
        self.version = Some(version);
        self
    }

    /// The entry with the content's MD5 digest.
    pub fn with_md5(mut self, md5: [u8; 16]) -> Self {
        self.md5 = Some(md5);
        self
    }

    /// Whether the listing says the content is exactly `data` (its MD5 matches).
    pub fn has_content(&self, data: &[u8]) -> bool {
        use md5::Digest as _;
        self.md5
            .is_some_and(|m| m == <[u8; 16]>::from(md5::Md5::digest(data)))
    }
}

/// How a write treats an object already at the path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum PutMode {
    /// Replace whatever is there (or create).
    #[default]
    Overwrite,
    /// Create only if nothing is there; else [`Error::AlreadyExists`].
    CreateIfAbsent,
    /// Replace only if the current version is this one; else
    /// [`Error::Precondition`] (also when the object is gone).
    UpdateIfVersionMatches(Version),
}

/// Options of [`Store::put`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PutOptions {
    /// How to treat an existing object.
    pub mode: PutMode,
}

impl PutOptions {
    /// Overwrite (the default).
    pub fn overwrite() -> Self {
        Self::default()
    }

    /// Create if absent.
    pub fn create() -> Self {
        Self::default().with_mode(PutMode::CreateIfAbsent)
    }

    /// Update if the current version is `version`.
    pub fn update(version: Version) -> Self {
        Self::default().with_mode(PutMode::UpdateIfVersionMatches(version))
    }

    /// Sets the mode.
    pub fn with_mode(mut self, mode: PutMode) -> Self {
        self.mode = mode;
        self
    }
}

/// Options of [`Store::delete_opts`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeleteOptions {
    /// Delete only if the current version is this one; else
    /// [`Error::Precondition`] (also when the object is gone).
    pub if_version: Option<Version>,
}

impl DeleteOptions {
    /// Delete only if the object is still at `version`.
    pub fn if_version(version: Version) -> Self {
        DeleteOptions {
            if_version: Some(version),
        }
    }
}

/// Something the caller should tell the user about the store, such as a
/// bucket without object versioning.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Warning {
    /// The store's URL.
    pub store: String,
    /// What is wrong and what to do about it.
    pub message: String,
}

impl Warning {
    /// A warning about `store`.
    pub fn new(store: impl Into<String>, message: impl Into<String>) -> Self {
        Warning {
            store: store.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.store, self.message)
    }
}

/// One version of an object in a store that keeps versions (a versioned bucket), as
/// [`Store::list_versions`] returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ObjectVersion {
    /// The object's path.
    pub path: String,
    /// The backend's id of this version (S3's `VersionId`).
    pub version_id: String,
    /// When this version was written, Unix milliseconds.
    pub modified_ms: i64,
    /// A delete marker: the object did not exist from this time on.
    pub deleted: bool,
    /// The object's current version.
    pub latest: bool,
}

impl ObjectVersion {
    /// A version of `path`.
    pub fn new(path: impl Into<String>, version_id: impl Into<String>, modified_ms: i64) -> Self {
        ObjectVersion {
            path: path.into(),
            version_id: version_id.into(),
            modified_ms,
            deleted: false,
            latest: false,
        }
    }

    /// Marks it a delete marker.
    pub fn deleted(mut self) -> Self {
        self.deleted = true;
        self
    }

    /// Marks it the current version.
    pub fn latest(mut self) -> Self {
        self.latest = true;
        self
    }
}

/// One setting of a store's bucket that decides whether its state can be lost or read by
/// others, as `kops toolbox check-state-store` reports it ([`Store::safety_checks`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SafetyCheck {
    /// What is checked: `versioning`, `default encryption`, `public access blocked`,
    /// `uniform bucket-level access`.
    pub name: String,
    /// What was found.
    pub status: CheckStatus,
}

impl SafetyCheck {
    /// A check named `name` with `status`.
    pub fn new(name: impl Into<String>, status: CheckStatus) -> Self {
        SafetyCheck {
            name: name.into(),
            status,
        }
    }
}

/// The outcome of a [`SafetyCheck`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CheckStatus {
    /// The setting is on.
    Passed,
    /// The setting is off; `fix` says exactly what to turn on (and that `--fix` does it).
    Failed {
        /// The fix, naming the setting and a command that makes it.
        fix: String,
    },
    /// The credentials may not read the setting; `permission` names what to grant.
    Unknown {
        /// The IAM permission that reads it.
        permission: String,
    },
}

impl CheckStatus {
    /// A failed check with `fix`.
    pub fn failed(fix: impl Into<String>) -> Self {
        CheckStatus::Failed { fix: fix.into() }
    }

    /// A check the credentials may not read without `permission`.
    pub fn unknown(permission: impl Into<String>) -> Self {
        CheckStatus::Unknown {
            permission: permission.into(),
        }
    }
}

/// A path-addressed blob store with optimistic concurrency.
///
/// Paths are `/`-separated, relative to the store root, non-empty, without
/// empty, `.` or `..` segments (see [`validate_path`]). Implementations are
/// object safe and held as `Arc<dyn Store>`.
#[async_trait]
pub trait Store: Send + Sync + fmt::Debug + 'static {
    /// Reads the object at `path` with its version; [`Error::NotFound`] if absent.
    async fn get(&self, path: &str) -> Result<GetResult>;

    /// Writes `data` at `path` according to `options.mode` and returns the new version.
    async fn put(&self, path: &str, data: Bytes, options: PutOptions) -> Result<Version>;

    /// Deletes the object at `path`, unconditionally or (with
    /// [`DeleteOptions::if_version`]) only if it is still at that version.
    /// Unconditionally deleting a missing object succeeds.
    async fn delete_opts(&self, path: &str, options: DeleteOptions) -> Result<()>;

    /// Deletes the object at `path` unconditionally; a missing object is fine.
    async fn delete(&self, path: &str) -> Result<()> {
        self.delete_opts(path, DeleteOptions::default()).await
    }

    /// Every object whose path starts with `prefix` (a plain string prefix,
    /// `""` for all), sorted by path.
    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>>;

    /// A URL naming this store's root, for messages (`s3://bucket/prefix`).
    fn url(&self) -> String;

    /// The cloud region the store's objects live in, when the store has one: an S3
    /// bucket's region, which a Terraform configuration writing files into the store
    /// must name in its provider. The default has none (local and memory stores, GCS,
    /// whose buckets need no region in requests).
    fn region(&self) -> Option<String> {
        None
    }

    /// Problems with the store's configuration that the caller should show
    /// the user (for example a bucket without versioning). The default has none.
    async fn warnings(&self) -> Result<Vec<Warning>> {
        Ok(Vec::new())
    }

    /// The bucket settings that keep the state safe (versioning, default encryption,
    /// blocked public access, or what the backend has instead), each passed, failed with
    /// its fix, or unknown for want of a permission. The default has none to check (a
    /// local directory, memory).
    async fn safety_checks(&self) -> Result<Vec<SafetyCheck>> {
        Ok(Vec::new())
    }

    /// Turns on every setting [`Store::safety_checks`] found off; returns what it changed,
    /// one line each. The default changes nothing.
    async fn fix_safety(&self) -> Result<Vec<String>> {
        Ok(Vec::new())
    }

    /// Every version (and delete marker) of the objects under `prefix`, for a store that
    /// keeps versions; the default is [`Error::NotImplemented`].
    async fn list_versions(&self, prefix: &str) -> Result<Vec<ObjectVersion>> {
        let _ = prefix;
        Err(Error::NotImplemented {
            operation: "listing object versions".into(),
            implementer: self.url(),
        })
    }

    /// The content of one version of `path` ([`Store::list_versions`]); the default is
    /// [`Error::NotImplemented`].
    async fn get_version(&self, path: &str, version_id: &str) -> Result<GetResult> {
        let _ = (path, version_id);
        Err(Error::NotImplemented {
            operation: "reading an object version".into(),
            implementer: self.url(),
        })
    }
}

#[async_trait]
impl<T: Store + ?Sized> Store for Arc<T> {
    async fn get(&self, path: &str) -> Result<GetResult> {
        (**self).get(path).await
    }
    async fn put(&self, path: &str, data: Bytes, options: PutOptions) -> Result<Version> {
        (**self).put(path, data, options).await
    }
    async fn delete_opts(&self, path: &str, options: DeleteOptions) -> Result<()> {
        (**self).delete_opts(path, options).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>> {
        (**self).list(prefix).await
    }
    fn url(&self) -> String {
        (**self).url()
    }
    fn region(&self) -> Option<String> {
        (**self).region()
    }
    async fn warnings(&self) -> Result<Vec<Warning>> {
        (**self).warnings().await
    }
    async fn safety_checks(&self) -> Result<Vec<SafetyCheck>> {
        (**self).safety_checks().await
    }
    async fn fix_safety(&self) -> Result<Vec<String>> {
        (**self).fix_safety().await
    }
    async fn list_versions(&self, prefix: &str) -> Result<Vec<ObjectVersion>> {
        (**self).list_versions(prefix).await
    }
    async fn get_version(&self, path: &str, version_id: &str) -> Result<GetResult> {
        (**self).get_version(path, version_id).await
    }
}

mod sealed {
    pub trait Sealed {}
    impl<T: super::Store + ?Sized> Sealed for T {}
}

/// Conveniences over any [`Store`]; implemented for every store, not implementable elsewhere.
#[async_trait]
pub trait StoreExt: Store + sealed::Sealed {
    /// Like [`Store::get`], with `None` for a missing object.
    async fn get_opt(&self, path: &str) -> Result<Option<GetResult>> {
        match self.get(path).await {
            Ok(r) => Ok(Some(r)),
            Err(Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Deletes every object under `prefix` and returns how many there were.
    async fn delete_prefix(&self, prefix: &str) -> Result<usize> {
        let objects = self.list(prefix).await?;
        for o in &objects {
            self.delete(&o.path).await?;
        }
        Ok(objects.len())
    }

    /// Reads `path`, applies `f` to its content (`None` when absent) and
    /// writes the result with compare-and-swap, retrying up to `max_attempts`
    /// times when another writer got there first. `f` returning `None` leaves
    /// the object as it is. Returns the new version, or the current one.
    async fn update_with<F>(
        &self,
        path: &str,
        max_attempts: usize,
        mut f: F,
    ) -> Result<Option<Version>>
    where
        F: FnMut(Option<&Bytes>) -> Result<Option<Bytes>> + Send,
    {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let current = self.get_opt(path).await?;
            let next = f(current.as_ref().map(|c| &c.data))?;
            let Some(next) = next else {
                return Ok(current.map(|c| c.version));
            };
            let opts = match &current {
                Some(c) => PutOptions::update(c.version.clone()),
                None => PutOptions::create(),
            };
            match self.put(path, next, opts).await {
                Ok(v) => return Ok(Some(v)),
                Err(e) if e.is_conflict() && attempt < max_attempts => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

impl<T: Store + ?Sized> StoreExt for T {}

/// Checks that `path` is a valid object path: non-empty, no leading or
/// trailing `/`, no empty, `.` or `..` segment, no NUL or `\`.
pub fn validate_path(path: &str) -> Result<()> {
    let bad = |reason: &str| {
        Err(Error::InvalidPath {
            path: path.to_string(),
            reason: reason.to_string(),
        })
    };
    if path.is_empty() {
        return bad("empty");
    }
    if path.contains('\0') || path.contains('\\') {
        return bad("contains NUL or backslash");
    }
    for seg in path.split('/') {
        match seg {
            "" => return bad("empty segment (leading, trailing or double '/')"),
            "." | ".." => return bad("'.' or '..' segment"),
            _ => {}
        }
    }
    Ok(())
}

/// Checks a list prefix: empty, or a path prefix without `.`/`..` segments
/// (a trailing `/` is allowed).
pub(crate) fn validate_prefix(prefix: &str) -> Result<()> {
    if prefix.is_empty() {
        return Ok(());
    }
    let trimmed = prefix.strip_suffix('/').unwrap_or(prefix);
    validate_path(trimmed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_result_debug_hides_the_content() {
        let got = GetResult {
            data: Bytes::from_static(b"-----BEGIN RSA PRIVATE KEY-----"),
            version: Version::new("v1"),
        };
        let shown = format!("{got:?}");
        assert!(!shown.contains("PRIVATE"), "{shown}");
        assert!(
            shown.contains("31 bytes") && shown.contains("v1"),
            "{shown}"
        );
    }

    #[test]
    fn path_validation() {
        assert!(validate_path("a/b/config").is_ok());
        assert!(validate_path(".well-known/openid-configuration").is_ok());
        for bad in ["", "/a", "a/", "a//b", "a/../b", "./a", "a\\b"] {
            assert!(validate_path(bad).is_err(), "{bad:?} accepted");
        }
        assert!(validate_prefix("").is_ok());
        assert!(validate_prefix("a/").is_ok());
        assert!(validate_prefix("a/..").is_err());
    }
}
