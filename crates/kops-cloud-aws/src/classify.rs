//! Classification of AWS errors by their error code into the cloud error kinds
//! ([`crate::cloud::CloudError`]).
//!
//! The rules are plain functions of `(operation, code, message)` so they can be tested
//! without a network (and need no SDK); with the `sdk` feature, the backend feeds them
//! from SDK errors, which become the [`std::error::Error::source`] of the kind.

#[cfg(feature = "sdk")]
use aws_sdk_ec2::error::{ProvideErrorMetadata, SdkError};
use kops_tasks::BoxError;

use crate::cloud::CloudError as Error;

/// The kind an AWS error code maps to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The service asked us to slow down (retried with backoff).
    Throttled,
    /// The object is in use or changing (a dependency still attached, a concurrent
    /// change; retried).
    Conflict,
    /// A transient failure of the service or of eventual consistency (retried).
    Unavailable,
    /// The addressed object does not exist.
    NotFound,
    /// The object already exists.
    AlreadyExists,
    /// The caller lacks permission.
    PermissionDenied,
    /// An account quota or service limit was reached (permanent until raised).
    Quota,
    /// The request was rejected as invalid.
    Invalid,
    /// Anything else.
    Other,
}

const THROTTLING: &[&str] = &[
    "RequestLimitExceeded",
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "TooManyRequestsException",
    "SlowDown",
    "RequestThrottled",
    "RequestThrottledException",
    "EC2ThrottledException",
    "PriorRequestNotComplete",
    "ProvisionedThroughputExceededException",
    "BandwidthLimitExceeded",
    "TransactionInProgressException",
];

const CONFLICT: &[&str] = &[
    "DependencyViolation",
    "DeleteConflict",
    "ResourceInUse",
    "ResourceInUseException",
    "InvalidGroup.InUse",
    "InvalidIPAddress.InUse",
    "IncorrectState",
    "IncorrectInstanceState",
    "ScalingActivityInProgress",
    "ResourceContention",
    "ConcurrentModification",
    "ConcurrentModificationException",
    "OperationAborted",
    "OperationPending",
];

const UNAVAILABLE: &[&str] = &[
    "InternalError",
    "InternalFailure",
    "InternalServerError",
    "ServiceUnavailable",
    "ServiceUnavailableException",
    "Unavailable",
    "RequestTimeout",
    "RequestTimeoutException",
];

const NOT_FOUND: &[&str] = &[
    "NoSuchEntity",
    "NoSuchBucket",
    "NoSuchKey",
    "NotFound",
    "NoSuchHostedZone",
    "ResourceNotFoundException",
    "LoadBalancerNotFound",
    "TargetGroupNotFound",
    "ListenerNotFound",
    "NatGatewayNotFound",
    "QueueDoesNotExist",
    "AWS.SimpleQueueService.NonExistentQueue",
    "InvalidLaunchTemplateName.NotFoundException",
    "InvalidLaunchTemplateId.NotFound",
    "InvalidLaunchTemplateId.Malformed",
];

const ALREADY_EXISTS: &[&str] = &[
    "EntityAlreadyExists",
    "AlreadyExists",
    "AlreadyExistsException",
    "ResourceAlreadyExistsException",
    "DuplicateLoadBalancerName",
    "DuplicateTargetGroupName",
    "DuplicateListener",
    "InvalidLaunchTemplateName.AlreadyExistsException",
    "RouteAlreadyExists",
    "BucketAlreadyOwnedByYou",
    "HostedZoneAlreadyExists",
    "QueueAlreadyExists",
];

const PERMISSION: &[&str] = &[
    "UnauthorizedOperation",
    "AccessDenied",
    "AccessDeniedException",
    "AuthFailure",
    "InvalidClientTokenId",
    "UnrecognizedClientException",
    "OptInRequired",
    "SignatureDoesNotMatch",
    "Blocked",
];

const QUOTA: &[&str] = &[
    "TooManyLoadBalancers",
    "TooManyTargetGroups",
    "TooManyListeners",
    "TooManyRules",
    "TooManyTargets",
    "TooManyTags",
    "TooManyBuckets",
    "TooManyHostedZones",
    "MaxSpotInstanceCountExceeded",
    "InsufficientInstanceCapacity",
    "VolumeLimitExceeded",
];

const INVALID: &[&str] = &[
    "InvalidParameterValue",
    "InvalidParameter",
    "InvalidParameterCombination",
    "InvalidInput",
    "InvalidRequest",
    "ValidationError",
    "ValidationException",
    "MissingParameter",
    "MalformedPolicyDocument",
    "InvalidChangeBatch",
    "UnsupportedOperation",
    "InvalidConfigurationRequest",
];

/// The kind of an AWS error code (`message` refines a few codes AWS reuses).
pub fn kind_of(code: &str, message: &str) -> ErrorKind {
    if THROTTLING.contains(&code) {
        return ErrorKind::Throttled;
    }
    if CONFLICT.contains(&code) {
        return ErrorKind::Conflict;
    }
    if UNAVAILABLE.contains(&code) {
        return ErrorKind::Unavailable;
    }
    if PERMISSION.contains(&code) {
        return ErrorKind::PermissionDenied;
    }
    if NOT_FOUND.contains(&code) || code.ends_with(".NotFound") {
        return ErrorKind::NotFound;
    }
    if ALREADY_EXISTS.contains(&code) || code.ends_with(".Duplicate") {
        return ErrorKind::AlreadyExists;
    }
    if QUOTA.contains(&code)
        || code.ends_with("LimitExceeded")
        || code.ends_with("LimitExceededException")
        || code.ends_with("QuotaExceeded")
    {
        return ErrorKind::Quota;
    }
    let lower = message.to_ascii_lowercase();
    if code == "ValidationError" && lower.contains("not found") {
        // Auto Scaling reports a missing group as a validation error.
        return ErrorKind::NotFound;
    }
    if code == "InvalidParameterValue" && lower.contains("iaminstanceprofile") {
        // A freshly created instance profile is not yet visible to EC2.
        return ErrorKind::Unavailable;
    }
    if INVALID.contains(&code) || code.starts_with("Invalid") || code.starts_with("Malformed") {
        return ErrorKind::Invalid;
    }
    ErrorKind::Other
}

/// Turns an AWS error (code and message) from `operation` on `what` (the object the
/// call addressed) into a cloud error. The message is left to `source` (the SDK error
/// carries it); the code names the kind's cause where the kind has no other: the limit of
/// a quota, the reason of a conflict. Without a source (tests, callers that only have
/// the code) the message goes into the display of invalid and other errors.
pub fn classify(
    operation: &str,
    what: &str,
    code: &str,
    message: &str,
    source: Option<BoxError>,
) -> Error {
    let on = format!("{operation} on {what}");
    match kind_of(code, message) {
        ErrorKind::Throttled => Error::Throttled {
            operation: format!("{operation} ({code})"),
            source,
        },
        ErrorKind::Conflict => Error::Conflict {
            operation: operation.to_owned(),
            what: what.to_owned(),
            reason: code.to_owned(),
            source,
        },
        ErrorKind::Unavailable => Error::Unavailable {
            operation: format!("{on} ({code})"),
            source,
        },
        ErrorKind::NotFound => Error::NotFound {
            what: format!("{what} ({operation}: {code})"),
        },
        ErrorKind::AlreadyExists => Error::AlreadyExists {
            operation: operation.to_owned(),
            what: what.to_owned(),
            source,
        },
        // The message names what was denied (`... not authorized to perform: ec2:X`).
        ErrorKind::PermissionDenied if !message.is_empty() => Error::PermissionDenied {
            operation: format!("{on} ({code}: {message})"),
            source,
        },
        ErrorKind::PermissionDenied => Error::PermissionDenied {
            operation: format!("{on} ({code})"),
            source,
        },
        ErrorKind::Quota => Error::Quota {
            operation: on,
            limit: code.to_owned(),
            source,
        },
        ErrorKind::Invalid => Error::Invalid {
            field: what.to_owned(),
            message: if message.is_empty() {
                format!("{operation} rejected the request ({code})")
            } else {
                format!("{operation} rejected the request ({code}: {message})")
            },
        },
        ErrorKind::Other if source.is_none() && !message.is_empty() => Error::Other {
            operation: format!("{on} ({code}: {message})"),
            source: None,
        },
        ErrorKind::Other => Error::Other {
            operation: format!("{on} ({code})"),
            source,
        },
    }
}

/// Maps an SDK error of a request signed with credentials from `origin`. Missing or
/// rejected credentials are [`Error::PermissionDenied`] whose source is the
/// [`CredentialsError`](kops_statestore::aws::CredentialsError) every AWS client of
/// kops-rs reports them with (not retried); transport failures and timeouts are
/// unavailable (retried); a request the SDK could not even build is invalid.
#[cfg(feature = "sdk")]
pub(crate) fn from_sdk<E, R>(
    operation: &str,
    what: &str,
    origin: &str,
    err: SdkError<E, R>,
) -> Error
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: ErrorBody + std::fmt::Debug + Send + Sync + 'static,
{
    // An error the SDK could not read (an XML error where the protocol is JSON, as some
    // emulators and proxies answer): its code and message from the body.
    if err.code().is_none()
        && let SdkError::ServiceError(ctx) = &err
        && let Some((code, message)) = ctx.raw().error_body().and_then(xml_error)
    {
        return classify(operation, what, &code, &message, Some(Box::new(err)));
    }
    let code = err.code().map(str::to_owned);
    let err =
        match kops_statestore::aws::CredentialsError::classify("AWS", origin, code.as_deref(), err)
        {
            Ok(credentials) => {
                return Error::PermissionDenied {
                    operation: format!("{operation} on {what}"),
                    source: Some(Box::new(credentials)),
                };
            }
            Err(err) => err,
        };
    match &err {
        SdkError::ServiceError(_) => {
            let code = err.code().unwrap_or("Unknown").to_owned();
            let message = err.message().unwrap_or_default().to_owned();
            classify(operation, what, &code, &message, Some(Box::new(err)))
        }
        SdkError::ConstructionFailure(_) => Error::Invalid {
            field: what.to_owned(),
            message: format!("{operation}: the request could not be built"),
        },
        _ => match err.code() {
            Some(code) => {
                let code = code.to_owned();
                let message = err.message().unwrap_or_default().to_owned();
                classify(operation, what, &code, &message, Some(Box::new(err)))
            }
            None => Error::Unavailable {
                operation: format!("{operation} on {what} (transport)"),
                source: Some(Box::new(err)),
            },
        },
    }
}

/// The body of a response, for the errors the SDK cannot read.
#[cfg(feature = "sdk")]
pub(crate) trait ErrorBody {
    /// The body's bytes, when they are in memory.
    fn error_body(&self) -> Option<&[u8]>;
}

#[cfg(feature = "sdk")]
impl ErrorBody for aws_sdk_ec2::config::http::HttpResponse {
    fn error_body(&self) -> Option<&[u8]> {
        self.body().bytes()
    }
}

/// `<Code>` and `<Message>` of an AWS XML error body.
#[cfg(any(feature = "sdk", test))]
fn xml_error(body: &[u8]) -> Option<(String, String)> {
    let text = std::str::from_utf8(body).ok()?;
    let element = |name: &str| {
        let open = format!("<{name}>");
        let start = text.find(&open)? + open.len();
        let len = text[start..].find(&format!("</{name}>"))?;
        Some(text[start..start + len].trim().to_owned())
    };
    Some((element("Code")?, element("Message").unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_xml_error_the_sdk_could_not_read_is_read() {
        let body = b"<?xml version='1.0'?><ErrorResponse><Error><Code>AccessDenied</Code><Message>User: arn:aws:iam::1:user/op is not authorized to perform: sqs:GetQueueAttributes</Message></Error></ErrorResponse>";
        let (code, message) = xml_error(body).unwrap();
        assert_eq!(code, "AccessDenied");
        assert!(message.ends_with("sqs:GetQueueAttributes"));
        assert!(xml_error(b"{\"__type\": \"x\"}").is_none());
    }

    #[test]
    fn throttling_codes_are_throttled_and_retryable() {
        for code in [
            "RequestLimitExceeded",
            "Throttling",
            "ThrottlingException",
            "TooManyRequestsException",
            "SlowDown",
        ] {
            assert_eq!(kind_of(code, ""), ErrorKind::Throttled, "{code}");
            let e = classify("DescribeVpcs", "vpcs", code, "rate exceeded", None);
            assert!(matches!(e, Error::Throttled { .. }), "{code}: {e}");
            assert!(e.is_retryable());
        }
    }

    #[test]
    fn not_found_codes() {
        for code in [
            "InvalidVpcID.NotFound",
            "InvalidGroup.NotFound",
            "NoSuchEntity",
            "NoSuchKey",
            "LoadBalancerNotFound",
            "InvalidLaunchTemplateName.NotFoundException",
        ] {
            assert_eq!(kind_of(code, ""), ErrorKind::NotFound, "{code}");
        }
        assert_eq!(
            kind_of("ValidationError", "AutoScalingGroup name not found - x"),
            ErrorKind::NotFound
        );
        let e = classify("DeleteVpc", "vpc-1", "InvalidVpcID.NotFound", "", None);
        assert!(matches!(&e, Error::NotFound { what } if what.contains("vpc-1")));
        assert!(!e.is_retryable());
    }

    #[test]
    fn quota_errors_are_permanent_and_name_the_limit() {
        for code in [
            "VpcLimitExceeded",
            "VcpuLimitExceeded",
            "AddressLimitExceeded",
            "LimitExceeded",
            "LimitExceededException",
            "RulesPerSecurityGroupLimitExceeded",
            "TooManyLoadBalancers",
        ] {
            assert_eq!(kind_of(code, ""), ErrorKind::Quota, "{code}");
            let e = classify("CreateVpc", "vpc main", code, "too many", None);
            assert!(!e.is_retryable());
            assert!(
                matches!(&e, Error::Quota { limit, .. } if limit == code),
                "{code}: {e:?}"
            );
            assert!(e.to_string().contains(code), "{e}");
        }
        // The request-rate limit is not a quota.
        assert_eq!(kind_of("RequestLimitExceeded", ""), ErrorKind::Throttled);
    }

    #[test]
    fn permission_and_dependency_codes() {
        for code in [
            "UnauthorizedOperation",
            "AccessDenied",
            "AccessDeniedException",
        ] {
            let e = classify("CreateVpc", "vpc", code, "", None);
            assert!(matches!(e, Error::PermissionDenied { .. }), "{code}");
        }
        let e = classify(
            "DeleteSecurityGroup",
            "sg-1",
            "DependencyViolation",
            "",
            None,
        );
        assert!(matches!(e, Error::Conflict { .. }), "{e}");
        assert!(e.is_retryable());
        assert_eq!(kind_of("DeleteConflict", ""), ErrorKind::Conflict);
        assert_eq!(kind_of("ServiceUnavailable", ""), ErrorKind::Unavailable);
        assert!(classify("DescribeVpcs", "vpcs", "InternalError", "", None).is_retryable());
    }

    #[test]
    fn invalid_and_other_codes() {
        let e = classify(
            "CreateSubnet",
            "subnet a",
            "InvalidSubnet.Range",
            "bad",
            None,
        );
        assert!(matches!(e, Error::Invalid { .. }));
        assert_eq!(
            kind_of("InvalidGroup.Duplicate", ""),
            ErrorKind::AlreadyExists
        );
        assert_eq!(kind_of("EntityAlreadyExists", ""), ErrorKind::AlreadyExists);
        assert_eq!(
            kind_of(
                "InvalidParameterValue",
                "Value (x) for parameter iamInstanceProfile.name is invalid"
            ),
            ErrorKind::Unavailable
        );
        assert_eq!(kind_of("SomethingNew", ""), ErrorKind::Other);
    }

    #[test]
    fn already_exists_is_its_own_kind() {
        let e = classify(
            "CreateSecurityGroup",
            "aws_security_group nodes",
            "InvalidGroup.Duplicate",
            "already exists",
            None,
        );
        assert!(matches!(e, Error::AlreadyExists { .. }), "{e:?}");
        assert!(!e.is_retryable());
    }

    #[test]
    fn display_does_not_repeat_the_source() {
        let source = std::io::Error::other("DependencyViolation: sg-1 has a dependent object");
        let e = classify(
            "DeleteSecurityGroup",
            "sg-1",
            "DependencyViolation",
            "sg-1 has a dependent object",
            Some(Box::new(source)),
        );
        let shown = e.to_string();
        assert!(shown.contains("DeleteSecurityGroup"), "{shown}");
        assert!(shown.contains("sg-1"), "{shown}");
        assert!(!shown.contains("dependent object"), "{shown}");
        let cause = std::error::Error::source(&e).map(ToString::to_string);
        assert!(cause.is_some_and(|c| c.contains("dependent object")));
    }
}
