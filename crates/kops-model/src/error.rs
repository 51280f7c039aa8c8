//! The crate's error type.

use kops_tasks::TaskKey;

/// Result alias for model building.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong while turning a spec into tasks, planning, applying or rendering them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The spec is missing something the model needs, or has a value it cannot use.
    #[error("{field}: {message}")]
    Invalid {
        /// Field path, e.g. `spec.subnets[0].zone`.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// Something had to be looked up in the cloud and was not there.
    #[error("not found in the cloud: {what}")]
    NotFound {
        /// What was looked for.
        what: String,
    },
    /// An instance group names an image the cloud does not have.
    #[error("instance group {group}: spec.image: image {image:?} not found in the cloud")]
    ImageNotFound {
        /// The instance group.
        group: String,
        /// The image as the spec names it.
        image: String,
    },
    /// A call to the cloud failed while discovering, planning or deleting.
    #[error("{operation}")]
    Cloud {
        /// What was being done, e.g. `looking up DNS zone example.com`.
        operation: String,
        /// The cloud's error.
        #[source]
        source: kops_tasks::Error,
    },
    /// A state-store operation failed (lock, completed spec, managed files).
    #[error("{operation}")]
    StateStore {
        /// What was being done, e.g. `taking the lock of cluster a.example.com`.
        operation: String,
        /// The store's error.
        #[source]
        source: kops_statestore::Error,
    },
    /// Applying the cluster left tasks failed: each with its typed error.
    ///
    /// Match on each failure's [`TaskFailure::kind`] (permission, quota, throttling,
    /// invalid value, not found, ...) or on the cloud's own error
    /// ([`TaskFailure::cloud_error`]: the quota's limit, the invalid field, the backend's
    /// error as its source).
    #[error("applying cluster {cluster}: {} task(s) failed: {}{}", failed.len(),
        failed.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "),
        if *skipped > 0 { format!(" ({skipped} task(s) not run because a dependency failed)") } else { String::new() })]
    Apply {
        /// The cluster.
        cluster: String,
        /// Each failed task with its error.
        failed: Vec<TaskFailure>,
        /// How many tasks were not run because a dependency failed.
        skipped: usize,
    },
    /// The task engine rejected the tasks or a cloud call failed.
    #[error("task engine")]
    Tasks(#[from] kops_tasks::Error),
    /// A call to the cluster's Kubernetes API failed (day-two commands).
    #[error("{operation}")]
    Kubernetes {
        /// What was being done, e.g. `listing nodes`.
        operation: String,
        /// The client's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A day-two operation did not finish in time (validation, drain); the message names
    /// what it waited for.
    #[error("{operation}")]
    Timeout {
        /// What timed out, with the node, pod, budget or group it waited on.
        operation: String,
    },
    /// The cluster API layer failed (converting, completing or validating the spec).
    #[error("cluster API")]
    Api(#[from] kops_api::Error),
}

/// One task an apply could not complete, with its typed error (shown with its causes on one
/// line: `task: error: cause`).
#[derive(Debug)]
#[non_exhaustive]
pub struct TaskFailure {
    /// The task: its kind and name (`RouteTable/main.example.com`).
    pub task: TaskKey,
    /// Why it failed, as the task engine and the cloud reported it.
    pub error: kops_tasks::Error,
}

impl TaskFailure {
    /// A failure of `task` with `error`.
    pub fn new(task: TaskKey, error: kops_tasks::Error) -> Self {
        TaskFailure { task, error }
    }

    /// What kind of failure it is, through every wrapper (see [`kops_tasks::ErrorKind`]).
    pub fn kind(&self) -> kops_tasks::ErrorKind {
        self.error.kind()
    }

    /// The cloud's typed error, when the task failed in a cloud call.
    pub fn cloud_error(&self) -> Option<&kops_tasks::resource::CloudError> {
        self.error.cloud_error()
    }
}

impl std::fmt::Display for TaskFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.task, chain(&self.error))
    }
}

pub(crate) fn invalid(field: impl Into<String>, message: impl Into<String>) -> Error {
    Error::Invalid {
        field: field.into(),
        message: message.into(),
    }
}

pub(crate) fn cloud<E: Into<kops_tasks::Error>>(
    operation: impl Into<String>,
) -> impl FnOnce(E) -> Error {
    let operation = operation.into();
    move |source| Error::Cloud {
        operation,
        source: source.into(),
    }
}

pub(crate) fn store(operation: impl Into<String>) -> impl FnOnce(kops_statestore::Error) -> Error {
    let operation = operation.into();
    move |source| Error::StateStore { operation, source }
}

/// An error and its causes on one line, `a: b: c`.
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut line = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        line.push_str(": ");
        line.push_str(&s.to_string());
        source = s.source();
    }
    line
}
