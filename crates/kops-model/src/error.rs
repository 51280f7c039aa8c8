//! The crate's error type.

/// Result alias for model building.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong while turning a spec into tasks or rendering them.
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
    /// The task engine rejected the tasks or a cloud call failed.
    #[error("task engine")]
    Tasks(#[from] kops_tasks::Error),
    /// The cluster API layer failed (e.g. writing the completed spec).
    #[error("cluster API")]
    Api(#[from] kops_api::Error),
}

pub(crate) fn invalid(field: impl Into<String>, message: impl Into<String>) -> Error {
    Error::Invalid {
        field: field.into(),
        message: message.into(),
    }
}
