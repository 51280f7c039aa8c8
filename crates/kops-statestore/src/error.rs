//! The crate's error type.

use crate::lock::LockInfo;

/// A boxed error from a backend or a parser, kept as the `source` of an [`Error`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Everything that can go wrong in the state store.
///
/// The variants are what a caller acts on: a missing object, a lost
/// compare-and-swap race, a held lock, a bad URL. Backend failures that a
/// caller cannot act on individually are [`Error::Backend`], with the
/// backend's own error as the `source`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No object exists at `path`.
    #[error("{path}: not found")]
    NotFound {
        /// Path of the object, relative to the store root.
        path: String,
    },

    /// A create-if-absent write found an object already at `path`.
    #[error("{path}: already exists")]
    AlreadyExists {
        /// Path of the object, relative to the store root.
        path: String,
    },

    /// An update-if-version-matches write found another version (or no
    /// object) at `path`: someone else changed it since it was read.
    #[error("{path}: precondition failed: the object changed since version {expected} was read")]
    Precondition {
        /// Path of the object, relative to the store root.
        path: String,
        /// The version the writer expected to replace.
        expected: String,
    },

    /// A lock is held by someone else.
    #[error(
        "{path}: locked by {holder} (lock id {id}, tool {tool_version})",
        holder = info.describe(), id = info.id, tool_version = info.tool_version
    )]
    Locked {
        /// Path of the lock object.
        path: String,
        /// What the lock object records about its holder.
        info: Box<LockInfo>,
    },

    /// An unlock without force found a lock whose lease has not run out.
    #[error(
        "{path}: the lease of {holder} has not expired (lock id {id}); force the unlock only if that process is gone",
        holder = info.describe(), id = info.id
    )]
    LeaseNotExpired {
        /// Path of the lock object.
        path: String,
        /// What the lock object records.
        info: Box<LockInfo>,
    },

    /// A lock could not be released or forced because it is not the one expected.
    #[error("{path}: lock id {expected} is not held (found {found})")]
    LockMismatch {
        /// Path of the lock object.
        path: String,
        /// The lock id the caller named.
        expected: String,
        /// What was found instead: another id, or "no lock".
        found: String,
    },

    /// A state-store URL could not be understood.
    #[error("state store URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },

    /// An object path is not acceptable (empty segment, `..`, leading `/`, ...).
    #[error("object path {path:?}: {reason}")]
    InvalidPath {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        reason: String,
    },

    /// A stored document could not be parsed.
    #[error("{path}: cannot parse {what}")]
    Parse {
        /// Path of the object, relative to the store root.
        path: String,
        /// What was being parsed (for example "Cluster").
        what: &'static str,
        /// The parser's error.
        #[source]
        source: BoxError,
    },

    /// A value could not be serialised for storage.
    #[error("cannot serialise {what} for {path}")]
    Serialize {
        /// Path the value was meant for.
        path: String,
        /// What was being serialised.
        what: &'static str,
        /// The serialiser's error.
        #[source]
        source: BoxError,
    },

    /// An argument or stored value is invalid (a name with a `/`, a cluster
    /// whose metadata name does not match, ...).
    #[error("{what}: {reason}")]
    Invalid {
        /// What is invalid (field or argument).
        what: String,
        /// Why.
        reason: String,
    },

    /// The backend could not authenticate: no credentials were found, or the
    /// service rejected the ones found. `reason` says which service, where
    /// the credentials came from (profile, file, variable) and what to do.
    #[error("{reason}")]
    Unauthenticated {
        /// The service ("S3", "GCS").
        service: &'static str,
        /// What is wrong, in one line.
        reason: String,
        /// The client's error, if any.
        #[source]
        source: Option<BoxError>,
    },

    /// The store's bucket does not exist.
    #[error("bucket {bucket} of state store {url} does not exist")]
    BucketNotFound {
        /// The bucket.
        bucket: String,
        /// The store's URL (`s3://bucket`, `gs://bucket`).
        url: String,
    },

    /// The backend refused access.
    #[error("{operation} {path}: permission denied")]
    PermissionDenied {
        /// The operation that was refused.
        operation: &'static str,
        /// Path of the object, relative to the store root.
        path: String,
        /// The backend's error.
        #[source]
        source: BoxError,
    },

    /// The backend asked us to slow down.
    #[error("{operation} {path}: throttled by the backend")]
    Throttled {
        /// The operation that was throttled.
        operation: &'static str,
        /// Path of the object, relative to the store root.
        path: String,
        /// The backend's error.
        #[source]
        source: BoxError,
    },

    /// Any other backend failure.
    #[error("{backend} {operation} {path} failed")]
    Backend {
        /// Which backend ("file", "s3", "gcs", ...).
        backend: &'static str,
        /// The operation ("get", "put", "list", "delete", ...).
        operation: &'static str,
        /// Path of the object (or prefix), relative to the store root.
        path: String,
        /// The backend's error.
        #[source]
        source: BoxError,
    },

    /// The operation is not available for this backend or build.
    #[error("{operation} is not implemented by {implementer}")]
    NotImplemented {
        /// The operation asked for.
        operation: String,
        /// Who does not implement it.
        implementer: String,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// True for [`Error::NotFound`].
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound { .. })
    }

    /// True when a conditional write lost a race: [`Error::AlreadyExists`] or
    /// [`Error::Precondition`]. Re-reading and retrying is the usual answer.
    pub fn is_conflict(&self) -> bool {
        matches!(
            self,
            Error::AlreadyExists { .. } | Error::Precondition { .. }
        )
    }

    pub(crate) fn backend(
        backend: &'static str,
        operation: &'static str,
        path: impl Into<String>,
        source: impl Into<BoxError>,
    ) -> Self {
        Error::Backend {
            backend,
            operation,
            path: path.into(),
            source: source.into(),
        }
    }
}
