//! [`CloudError`]: what a cloud call can fail with, by what the caller does about it.

use crate::error::BoxError;

/// Result alias of cloud calls.
pub type CloudResult<T, E = CloudError> = std::result::Result<T, E>;

/// Why a cloud call failed, as kinds a caller acts on.
///
/// Backends map their own errors into these kinds (AWS by error code:
/// `RequestLimitExceeded` -> [`CloudError::Throttled`], `InvalidVpcID.NotFound` ->
/// [`CloudError::NotFound`], `VpcLimitExceeded` -> [`CloudError::Quota`], ...). `Display`
/// says what failed with identifiers; the backend's own error, when there is one, is the
/// [`std::error::Error::source`], never repeated in the message. The task engine wraps a
/// cloud error in [`crate::Error::CloudCall`]; [`CloudError::is_retryable`] is what the
/// executor retries.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CloudError {
    /// The addressed object does not exist.
    #[error("{what} not found")]
    NotFound {
        /// What was looked for (type and ID, and the operation).
        what: String,
    },
    /// An object with the same identity already exists.
    #[error("{operation}: {what} already exists")]
    AlreadyExists {
        /// The operation.
        operation: String,
        /// The object that collided.
        what: String,
        /// The backend error, if any.
        #[source]
        source: Option<BoxError>,
    },
    /// The object cannot be changed or removed now: others still depend on it, or it is
    /// being changed concurrently (AWS `DependencyViolation`, `ResourceInUse`,
    /// `ConcurrentModification`). Retried: during ordered changes this clears.
    #[error("{operation}: {what} is in use or changing ({reason})")]
    Conflict {
        /// The operation.
        operation: String,
        /// The object.
        what: String,
        /// Why, as the cloud put it (an error code, or what depends on the object).
        reason: String,
        /// The backend error, if any.
        #[source]
        source: Option<BoxError>,
    },
    /// The caller lacks permission for the operation.
    #[error("{operation}: permission denied")]
    PermissionDenied {
        /// The denied operation, with the object.
        operation: String,
        /// The backend error, if any.
        #[source]
        source: Option<BoxError>,
    },
    /// The cloud asked the caller to slow down; retried with backoff.
    #[error("{operation}: throttled")]
    Throttled {
        /// The throttled operation.
        operation: String,
        /// The backend error, if any.
        #[source]
        source: Option<BoxError>,
    },
    /// An account quota or service limit was reached; permanent until the quota is raised
    /// or capacity is freed.
    #[error("{operation}: limit {limit} reached; request a quota increase or free capacity")]
    Quota {
        /// The operation.
        operation: String,
        /// The limit, as the cloud names it (`VpcLimitExceeded`, `TooManyLoadBalancers`).
        limit: String,
        /// The backend error, if any.
        #[source]
        source: Option<BoxError>,
    },
    /// The request was rejected: a value is missing or wrong, or an immutable attribute
    /// was asked to change.
    #[error("{field}: {message}")]
    Invalid {
        /// The field, as precisely as known: `aws_vpc.cidr_block`, or the object addressed
        /// when the cloud did not say which of its fields.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// A transient failure (the service is unavailable, a timeout, eventual consistency);
    /// retried.
    #[error("{operation}: temporarily unavailable")]
    Unavailable {
        /// What failed.
        operation: String,
        /// The backend error, if any.
        #[source]
        source: Option<BoxError>,
    },
    /// The operation is not implemented by this backend.
    #[error("{operation} is not implemented by {implementer}")]
    NotImplemented {
        /// The operation.
        operation: String,
        /// Who does not implement it.
        implementer: String,
    },
    /// Anything else.
    #[error("{operation} failed")]
    Other {
        /// The operation, with the object.
        operation: String,
        /// The backend error, if any.
        #[source]
        source: Option<BoxError>,
    },
}

impl CloudError {
    /// Whether retrying the same call may succeed ([`CloudError::Throttled`],
    /// [`CloudError::Unavailable`], [`CloudError::Conflict`]).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            CloudError::Throttled { .. }
                | CloudError::Unavailable { .. }
                | CloudError::Conflict { .. }
        )
    }

    /// The kind of failure, as the task engine classifies every error
    /// ([`crate::Error::kind`]).
    pub fn kind(&self) -> crate::ErrorKind {
        use crate::ErrorKind;
        match self {
            CloudError::NotFound { .. } => ErrorKind::NotFound,
            CloudError::AlreadyExists { .. } => ErrorKind::AlreadyExists,
            CloudError::Conflict { .. } => ErrorKind::Conflict,
            CloudError::PermissionDenied { .. } => ErrorKind::PermissionDenied,
            CloudError::Throttled { .. } => ErrorKind::Throttled,
            CloudError::Quota { .. } => ErrorKind::Quota,
            CloudError::Invalid { .. } => ErrorKind::Invalid,
            CloudError::Unavailable { .. } => ErrorKind::Unavailable,
            CloudError::NotImplemented { .. } => ErrorKind::NotImplemented,
            CloudError::Other { .. } => ErrorKind::Other,
        }
    }

    /// Whether this is [`CloudError::NotFound`].
    pub fn is_not_found(&self) -> bool {
        matches!(self, CloudError::NotFound { .. })
    }

    /// [`CloudError::NotFound`].
    pub fn not_found(what: impl Into<String>) -> Self {
        CloudError::NotFound { what: what.into() }
    }

    /// [`CloudError::Invalid`].
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        CloudError::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }

    /// [`CloudError::Throttled`] without a source.
    pub fn throttled(operation: impl Into<String>) -> Self {
        CloudError::Throttled {
            operation: operation.into(),
            source: None,
        }
    }

    /// [`CloudError::Unavailable`] without a source.
    pub fn unavailable(operation: impl Into<String>) -> Self {
        CloudError::Unavailable {
            operation: operation.into(),
            source: None,
        }
    }

    /// [`CloudError::Other`] without a source.
    pub fn other(operation: impl Into<String>) -> Self {
        CloudError::Other {
            operation: operation.into(),
            source: None,
        }
    }

    /// [`CloudError::Invalid`] for immutable attributes of `terraform_type` that a request
    /// asks to change.
    pub fn immutable(terraform_type: &str, attrs: &[&str]) -> Self {
        CloudError::Invalid {
            field: format!("{terraform_type}.{}", attrs.join(",")),
            message: "cannot change in place; the object must be replaced".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_object_and_leaves_the_cause_to_the_source() {
        let cause = std::io::Error::other("VpcLimitExceeded: The maximum number of VPCs");
        let e = CloudError::Quota {
            operation: "ec2:CreateVpc on aws_vpc main".into(),
            limit: "VpcLimitExceeded".into(),
            source: Some(Box::new(cause)),
        };
        let shown = e.to_string();
        assert!(shown.contains("ec2:CreateVpc on aws_vpc main"), "{shown}");
        assert!(shown.contains("limit VpcLimitExceeded"), "{shown}");
        assert!(!shown.contains("maximum number"), "{shown}");
        let source = std::error::Error::source(&e).map(ToString::to_string);
        assert!(source.is_some_and(|s| s.contains("maximum number")));
        assert!(!e.is_retryable());
        assert!(CloudError::throttled("ec2:DescribeVpcs").is_retryable());
        assert!(CloudError::unavailable("ec2:DescribeVpcs").is_retryable());
        assert!(CloudError::not_found("aws_vpc vpc-1").is_not_found());
        assert_eq!(
            CloudError::immutable("aws_vpc", &["cidr_block"]).to_string(),
            "aws_vpc.cidr_block: cannot change in place; the object must be replaced"
        );
    }
}
