//! The crate's error type.

use std::path::PathBuf;

/// Errors returned by the mock cloud, classified by what a caller acts on.
///
/// Every variant carries the AWS operation (`ec2:DescribeVpcs`) where one applies, and
/// [`Error::code`] gives the error code AWS would have answered with, so callers that
/// classify AWS errors by code can treat the mock the same way.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The named object does not exist.
    #[error("{operation}: {kind} {id} not found")]
    NotFound {
        /// The operation, e.g. `ec2:DeleteVpc`.
        operation: String,
        /// The kind of object, e.g. `vpc`.
        kind: &'static str,
        /// The identifier that was looked up.
        id: String,
    },
    /// An object with the same identity already exists.
    #[error("{operation}: {kind} {id} already exists")]
    AlreadyExists {
        /// The operation.
        operation: String,
        /// The kind of object.
        kind: &'static str,
        /// The identifier that collided.
        id: String,
    },
    /// The object cannot be changed or removed while others depend on it (AWS
    /// `DependencyViolation`, `DeleteConflict`, `ResourceInUse`, ...).
    #[error("{operation}: {kind} {id}: {message}")]
    Conflict {
        /// The operation.
        operation: String,
        /// The kind of object.
        kind: &'static str,
        /// Its identifier.
        id: String,
        /// What depends on it.
        message: String,
    },
    /// A request parameter is invalid.
    #[error("{operation}: {field}: {message}")]
    Invalid {
        /// The operation.
        operation: String,
        /// The parameter, e.g. `Filters[0].Name`.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// The call was refused because of rate limiting (injected by a [`crate::FaultPlan`]).
    #[error("{operation}: throttled ({code})")]
    Throttled {
        /// The operation.
        operation: String,
        /// The AWS error code, e.g. `RequestLimitExceeded`.
        code: String,
    },
    /// The call failed with a transient service error (injected by a [`crate::FaultPlan`]).
    #[error("{operation}: service unavailable ({code})")]
    Unavailable {
        /// The operation.
        operation: String,
        /// The AWS error code, e.g. `ServiceUnavailable`.
        code: String,
    },
    /// The caller lacks permission for the call (injected by a [`crate::FaultPlan`]).
    #[error("{operation}: not authorized ({code})")]
    PermissionDenied {
        /// The operation.
        operation: String,
        /// The AWS error code, e.g. `UnauthorizedOperation`.
        code: String,
    },
    /// An account quota or service limit was reached (injected by a [`crate::FaultPlan`]).
    #[error("{operation}: limit reached ({code})")]
    Quota {
        /// The operation.
        operation: String,
        /// The AWS error code naming the limit, e.g. `VpcLimitExceeded`.
        code: String,
    },
    /// The fixture file could not be read.
    #[error("cannot read fixture {path}")]
    FixtureIo {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The fixture is not valid YAML of the expected shape, or refers to objects that do not
    /// exist.
    #[error("fixture {location}: {message}")]
    Fixture {
        /// Where: a field path such as `aws.ec2.subnets[1].vpcId`, or the file.
        location: String,
        /// What is wrong.
        message: String,
    },
}

impl Error {
    /// The error code AWS would answer with (`InvalidVpcID.NotFound`,
    /// `RequestLimitExceeded`, `DependencyViolation`, ...).
    pub fn code(&self) -> String {
        match self {
            Error::NotFound { kind, .. } => not_found_code(kind).to_owned(),
            Error::AlreadyExists { kind, .. } => already_exists_code(kind).to_owned(),
            Error::Conflict { kind, .. } => conflict_code(kind).to_owned(),
            Error::Invalid { .. } => "InvalidParameterValue".to_owned(),
            Error::Throttled { code, .. }
            | Error::Unavailable { code, .. }
            | Error::PermissionDenied { code, .. }
            | Error::Quota { code, .. } => code.clone(),
            Error::FixtureIo { .. } | Error::Fixture { .. } => "Fixture".to_owned(),
        }
    }

    /// Whether retrying the same call may succeed ([`Error::Throttled`],
    /// [`Error::Unavailable`]).
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::Throttled { .. } | Error::Unavailable { .. })
    }

    /// Whether this is [`Error::NotFound`].
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound { .. })
    }

    pub(crate) fn not_found(operation: &str, kind: &'static str, id: impl Into<String>) -> Self {
        Error::NotFound {
            operation: operation.to_owned(),
            kind,
            id: id.into(),
        }
    }

    pub(crate) fn exists(operation: &str, kind: &'static str, id: impl Into<String>) -> Self {
        Error::AlreadyExists {
            operation: operation.to_owned(),
            kind,
            id: id.into(),
        }
    }

    pub(crate) fn conflict(
        operation: &str,
        kind: &'static str,
        id: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Error::Conflict {
            operation: operation.to_owned(),
            kind,
            id: id.into(),
            message: message.into(),
        }
    }

    pub(crate) fn invalid(
        operation: &str,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Error::Invalid {
            operation: operation.to_owned(),
            field: field.into(),
            message: message.into(),
        }
    }
}

fn not_found_code(kind: &str) -> &'static str {
    match kind {
        "vpc" => "InvalidVpcID.NotFound",
        "subnet" => "InvalidSubnetID.NotFound",
        "route-table" => "InvalidRouteTableID.NotFound",
        "route" => "InvalidRoute.NotFound",
        "internet-gateway" => "InvalidInternetGatewayID.NotFound",
        "nat-gateway" => "NatGatewayNotFound",
        "elastic-ip" => "InvalidAllocationID.NotFound",
        "dhcp-options" => "InvalidDhcpOptionID.NotFound",
        "security-group" => "InvalidGroup.NotFound",
        "security-group-rule" => "InvalidSecurityGroupRuleId.NotFound",
        "volume" => "InvalidVolume.NotFound",
        "key-pair" => "InvalidKeyPair.NotFound",
        "image" => "InvalidAMIID.NotFound",
        "launch-template" => "InvalidLaunchTemplateId.NotFound",
        "launch-template-version" => "InvalidLaunchTemplateId.VersionNotFound",
        "instance" => "InvalidInstanceID.NotFound",
        "autoscaling-group" | "warm-pool" | "lifecycle-hook" => "ValidationError",
        "load-balancer" => "LoadBalancerNotFound",
        "target-group" => "TargetGroupNotFound",
        "listener" => "ListenerNotFound",
        "role" | "role-policy" | "instance-profile" | "oidc-provider" | "policy" => "NoSuchEntity",
        "hosted-zone" => "NoSuchHostedZone",
        "record-set" => "InvalidChangeBatch",
        "queue" => "AWS.SimpleQueueService.NonExistentQueue",
        "rule" | "events-target" => "ResourceNotFoundException",
        "bucket" => "NoSuchBucket",
        "object" => "NoSuchKey",
        _ => "NotFound",
    }
}

fn already_exists_code(kind: &str) -> &'static str {
    match kind {
        "security-group" => "InvalidGroup.Duplicate",
        "security-group-rule" => "InvalidPermission.Duplicate",
        "key-pair" => "InvalidKeyPair.Duplicate",
        "launch-template" => "InvalidLaunchTemplateName.AlreadyExistsException",
        "autoscaling-group" => "AlreadyExists",
        "load-balancer" => "DuplicateLoadBalancerName",
        "target-group" => "DuplicateTargetGroupName",
        "listener" => "DuplicateListener",
        "role" | "instance-profile" | "oidc-provider" => "EntityAlreadyExists",
        "hosted-zone" => "HostedZoneAlreadyExists",
        "record-set" => "InvalidChangeBatch",
        "queue" => "QueueAlreadyExists",
        "rule" => "ResourceAlreadyExistsException",
        "bucket" => "BucketAlreadyOwnedByYou",
        "route" => "RouteAlreadyExists",
        _ => "AlreadyExists",
    }
}

fn conflict_code(kind: &str) -> &'static str {
    match kind {
        "role" | "instance-profile" | "policy" => "DeleteConflict",
        "hosted-zone" => "HostedZoneNotEmpty",
        "autoscaling-group" => "ResourceInUse",
        "load-balancer" | "target-group" => "ResourceInUse",
        "rule" => "ValidationException",
        "elastic-ip" => "InvalidIPAddress.InUse",
        "bucket" => "BucketNotEmpty",
        "instance-profile-role" => "LimitExceeded",
        _ => "DependencyViolation",
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
