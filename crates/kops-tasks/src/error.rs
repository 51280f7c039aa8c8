//! The crate's error type.

use std::time::Duration;

use crate::key::TaskKey;
use crate::resource::CloudError;

/// A boxed source error from a cloud client or other backend.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while building, planning, applying or rendering tasks.
///
/// Variants are what a caller acts on. Clouds behind the resource layer
/// ([`crate::resource::ResourceCloud`]) fail with a [`CloudError`], which arrives here as
/// [`Error::CloudCall`]; other task implementations map their backend errors into
/// [`Error::Throttled`], [`Error::Retryable`], [`Error::NotFound`],
/// [`Error::PermissionDenied`], [`Error::Invalid`] or [`Error::Cloud`]. The executor retries
/// what [`Error::is_retryable`] says.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Two tasks were added with the same key.
    #[error("duplicate task {key}")]
    DuplicateTask {
        /// The key added twice.
        key: TaskKey,
    },
    /// A task refers to a task that is not in the graph.
    #[error("task {from} refers to unknown task {to}")]
    UnknownReference {
        /// The referring task.
        from: TaskKey,
        /// The missing task.
        to: TaskKey,
    },
    /// The dependency graph has a cycle; `tasks` are the members of the cycle.
    #[error("dependency cycle between tasks: {}", join_keys(tasks))]
    Cycle {
        /// Tasks that form the cycle, sorted.
        tasks: Vec<TaskKey>,
    },
    /// A reference could not be resolved to a value at apply time (the referenced task has
    /// not produced that output).
    #[error("task {from}: output {attr:?} of {to} is not available")]
    UnresolvedReference {
        /// The referring task.
        from: TaskKey,
        /// The referenced task.
        to: TaskKey,
        /// The output attribute that was asked for.
        attr: String,
    },
    /// A cloud API asked us to slow down; retried with backoff.
    #[error("throttled: {operation}")]
    Throttled {
        /// The operation that was throttled.
        operation: String,
        /// The backend error, if any.
        #[source]
        source: Option<BoxError>,
    },
    /// A transient failure that is worth retrying (eventual consistency, a dependency not
    /// ready yet).
    #[error("temporarily failed, will retry: {operation}")]
    Retryable {
        /// What failed.
        operation: String,
        /// The backend error, if any.
        #[source]
        source: Option<BoxError>,
    },
    /// An object that must exist was not found.
    #[error("not found: {what}")]
    NotFound {
        /// What was looked for.
        what: String,
    },
    /// The caller lacks permission for an operation.
    #[error("permission denied: {operation}")]
    PermissionDenied {
        /// The denied operation.
        operation: String,
        /// The backend error, if any.
        #[source]
        source: Option<BoxError>,
    },
    /// A value is invalid (a required field missing, an immutable field changed, ...).
    #[error("{field}: {message}")]
    Invalid {
        /// Field path, e.g. `VPC/main.CIDR`.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// A lifecycle rule was violated (an object required to exist is missing, or an object
    /// from another phase does not match).
    #[error("task {key}: {message}")]
    Lifecycle {
        /// The task.
        key: TaskKey,
        /// What rule was violated.
        message: String,
    },
    /// A task did not finish within its deadline.
    #[error("task {key} did not finish within {after:?}{}", last_error.as_ref().map(|e| format!(" (last error: {e})")).unwrap_or_default())]
    DeadlineExceeded {
        /// The task.
        key: TaskKey,
        /// The deadline that passed.
        after: Duration,
        /// Display of the last retryable error, if the task was retrying.
        last_error: Option<String>,
    },
    /// A task failed; wraps the task's own error with its key.
    #[error("task {key} failed")]
    Task {
        /// The task.
        key: TaskKey,
        /// What went wrong.
        #[source]
        source: Box<Error>,
    },
    /// Applying a graph finished with failures; every failure is listed.
    #[error("{} task(s) failed: {}", failures.len(), join_failures(failures))]
    Failed {
        /// Each failed task and its error.
        failures: Vec<(TaskKey, Error)>,
    },
    /// A call through a cloud's resource trait failed; the [`CloudError`] says which kind
    /// (and is retried when [`CloudError::is_retryable`]).
    #[error(transparent)]
    CloudCall(Box<CloudError>),
    /// A cloud call failed for a reason not covered above.
    #[error("cloud operation failed: {operation}")]
    Cloud {
        /// The operation.
        operation: String,
        /// The backend error.
        #[source]
        source: Option<BoxError>,
    },
    /// Writing rendered output failed.
    #[error("cannot write {path}")]
    Io {
        /// The file or directory.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The operation is not implemented by this task kind or backend.
    #[error("{operation} is not implemented by {implementer}")]
    NotImplemented {
        /// The operation.
        operation: String,
        /// Who does not implement it.
        implementer: String,
    },
}

/// What kind of failure an [`Error`] is, whatever layer it came through: the question a
/// caller asks of a failed task (retry later, fix a permission, raise a quota, fix the spec).
///
/// [`Error::kind`] answers it for the task engine's own variants and for the cloud's
/// [`CloudError`] inside [`Error::CloudCall`]; the details (the limit of a quota, the field
/// of an invalid value, the cloud's own error as the source) are on the error itself, and
/// [`Error::cloud_error`] reaches the cloud's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An object that had to exist does not.
    NotFound,
    /// An object with the same identity already exists.
    AlreadyExists,
    /// The object is in use or changing concurrently.
    Conflict,
    /// The caller lacks a permission.
    PermissionDenied,
    /// The cloud asked the caller to slow down.
    Throttled,
    /// An account quota or service limit was reached ([`CloudError::Quota`] names it).
    Quota,
    /// A value was rejected (the field is named).
    Invalid,
    /// A transient failure: the service was unavailable or not yet consistent.
    Unavailable,
    /// A task did not finish within its deadline.
    Timeout,
    /// The operation is not implemented by the task kind or backend.
    NotImplemented,
    /// The task graph itself is wrong (a duplicate task, a cycle, an unknown reference, an
    /// unresolved output, a lifecycle rule).
    Graph,
    /// Anything else (an I/O error while rendering, an unclassified cloud failure).
    Other,
}

impl Error {
    /// What kind of failure this is, looking through [`Error::Task`] wrappers and into the
    /// cloud's [`CloudError`]. [`Error::Failed`] (many failures) is [`ErrorKind::Other`]:
    /// ask each of its failures.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::DuplicateTask { .. }
            | Error::UnknownReference { .. }
            | Error::Cycle { .. }
            | Error::UnresolvedReference { .. }
            | Error::Lifecycle { .. } => ErrorKind::Graph,
            Error::Throttled { .. } => ErrorKind::Throttled,
            Error::Retryable { .. } => ErrorKind::Unavailable,
            Error::NotFound { .. } => ErrorKind::NotFound,
            Error::PermissionDenied { .. } => ErrorKind::PermissionDenied,
            Error::Invalid { .. } => ErrorKind::Invalid,
            Error::DeadlineExceeded { .. } => ErrorKind::Timeout,
            Error::Task { source, .. } => source.kind(),
            Error::CloudCall(e) => e.kind(),
            Error::NotImplemented { .. } => ErrorKind::NotImplemented,
            Error::Failed { .. } | Error::Cloud { .. } | Error::Io { .. } => ErrorKind::Other,
        }
    }

    /// The cloud's typed error when this failure came from a cloud call through the resource
    /// layer, looking through [`Error::Task`] wrappers: match on it for the details
    /// ([`CloudError::Quota`]'s limit, [`CloudError::Invalid`]'s field, the backend's error
    /// as its source).
    pub fn cloud_error(&self) -> Option<&CloudError> {
        match self {
            Error::CloudCall(e) => Some(e),
            Error::Task { source, .. } => source.cloud_error(),
            _ => None,
        }
    }

    /// Whether the executor should retry the operation that produced this error
    /// ([`Error::Throttled`], [`Error::Retryable`] and retryable [`Error::CloudCall`]s, also
    /// when wrapped in [`Error::Task`]).
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Throttled { .. } | Error::Retryable { .. } => true,
            Error::CloudCall(e) => e.is_retryable(),
            Error::Task { source, .. } => source.is_retryable(),
            _ => false,
        }
    }

    /// Shorthand for [`Error::Throttled`] without a source.
    pub fn throttled(operation: impl Into<String>) -> Self {
        Error::Throttled {
            operation: operation.into(),
            source: None,
        }
    }

    /// Shorthand for [`Error::Retryable`] without a source.
    pub fn retryable(operation: impl Into<String>) -> Self {
        Error::Retryable {
            operation: operation.into(),
            source: None,
        }
    }

    /// Shorthand for [`Error::Cloud`] without a source.
    pub fn cloud(operation: impl Into<String>) -> Self {
        Error::Cloud {
            operation: operation.into(),
            source: None,
        }
    }

    /// Shorthand for [`Error::Invalid`].
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl From<CloudError> for Error {
    fn from(e: CloudError) -> Self {
        Error::CloudCall(Box::new(e))
    }
}

fn join_keys(keys: &[TaskKey]) -> String {
    keys.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `key (error); key (error)`: the failures of a run, each with what failed (its own
/// causes are not sources of the run's error, so they are shown here once).
fn join_failures(failures: &[(TaskKey, Error)]) -> String {
    failures
        .iter()
        .map(|(k, e)| {
            let mut line = format!("{k} ({e}");
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                line.push_str(&format!(": {s}"));
                source = s.source();
            }
            line.push(')');
            line
        })
        .collect::<Vec<_>>()
        .join("; ")
}
