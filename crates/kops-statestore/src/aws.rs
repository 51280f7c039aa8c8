//! What every AWS client of kops-rs reads the same way: where the SDK's default chain
//! takes its credentials from, and which failures mean that the credentials, not the
//! request, are the problem (none could be loaded, or AWS rejected them).
//!
//! The S3 store of this crate and the AWS cloud backend (`kops-cloud-aws`, which depends
//! on this crate for it) classify their SDK errors with [`CredentialsError::classify`],
//! so a user reads the same line whichever client met the problem. No SDK type appears
//! in this module's API: the SDK error is passed in as any [`std::error::Error`], and the
//! SDK's own credentials error is looked for in its source chain.

use aws_credential_types::provider::error::CredentialsError as SdkCredentialsError;

/// Error codes AWS services answer with when they do not accept a request's credentials
/// at all (unknown or malformed key, bad signature, expired session), as opposed to
/// credentials short of a permission (`AccessDenied`, `UnauthorizedOperation`).
const REJECTED: &[&str] = &[
    "InvalidClientTokenId",
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "ExpiredToken",
    "ExpiredTokenException",
    "InvalidToken",
    "TokenRefreshRequired",
    "UnrecognizedClientException",
    "AuthFailure",
];

/// Whether AWS error `code` means the request's credentials were rejected (not merely
/// short of a permission).
pub fn rejects_credentials(code: &str) -> bool {
    REJECTED.contains(&code)
}

/// Where the AWS SDK's default chain takes credentials from, as far as the environment
/// (`var(name)`) tells: keys in the environment come first, else the profile
/// (`AWS_PROFILE`, default `default`). For messages such as `no AWS credentials for AWS
/// profile "ops"`.
pub fn credentials_origin(var: impl Fn(&str) -> Option<String>) -> String {
    let get = |k: &str| var(k).filter(|v| !v.is_empty());
    if get("AWS_ACCESS_KEY_ID").is_some() {
        "AWS_ACCESS_KEY_ID from the environment".to_string()
    } else {
        format!(
            "AWS profile {:?}",
            get("AWS_PROFILE").unwrap_or_else(|| "default".to_string())
        )
    }
}

/// AWS did not take a request's credentials. `Display` is one line a user acts on: what
/// is wrong, where the credentials came from, and what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CredentialsError {
    /// The SDK's provider chain could not load credentials; nothing was sent.
    #[error(
        "no AWS credentials for {origin} ({reason}); set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or log in with `aws sso login`"
    )]
    Missing {
        /// Where the credentials were looked for ([`credentials_origin`]).
        origin: String,
        /// Why none were loaded: that no provider of the chain had any, or the
        /// provider's own root cause (an expired SSO session, a malformed profile).
        reason: String,
        /// The SDK's error.
        #[source]
        source: crate::error::BoxError,
    },
    /// The service answered with an error code that rejects the credentials
    /// ([`rejects_credentials`]).
    #[error(
        "{service} rejected the credentials of {origin} ({code}); check the access key, or refresh the session (`aws sso login`)"
    )]
    Rejected {
        /// The service that rejected them ("S3", or "AWS" for the cloud's APIs).
        service: String,
        /// Where the credentials came from.
        origin: String,
        /// The error code (`InvalidClientTokenId`, `ExpiredToken`, ...).
        code: String,
        /// The SDK's error.
        #[source]
        source: crate::error::BoxError,
    },
}

impl CredentialsError {
    /// Classifies a failed request to `service` made with credentials from `origin`:
    /// `code` is the error code AWS answered with (`None` when nothing was answered), and
    /// `error` the SDK's error, whose source chain is searched for the SDK's failure to
    /// load credentials. Gives `error` back when the credentials are not the problem.
    pub fn classify<E>(service: &str, origin: &str, code: Option<&str>, error: E) -> Result<Self, E>
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        if let Some(reason) = missing_reason(&error) {
            return Ok(CredentialsError::Missing {
                origin: origin.to_string(),
                reason,
                source: Box::new(error),
            });
        }
        match code {
            Some(code) if rejects_credentials(code) => Ok(CredentialsError::Rejected {
                service: service.to_string(),
                origin: origin.to_string(),
                code: code.to_string(),
                source: Box::new(error),
            }),
            _ => Err(error),
        }
    }

    /// The SDK's error this one explains.
    pub(crate) fn into_source(self) -> crate::error::BoxError {
        match self {
            CredentialsError::Missing { source, .. }
            | CredentialsError::Rejected { source, .. } => source,
        }
    }
}

/// Why credentials could not be loaded, in one line, when `e`'s source chain holds the
/// SDK's credentials-loading failure: that no provider of the chain had any, else the
/// provider's own root cause.
fn missing_reason(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut cur = Some(e);
    while let Some(c) = cur {
        if let Some(ce) = c.downcast_ref::<SdkCredentialsError>() {
            if matches!(ce, SdkCredentialsError::CredentialsNotLoaded(_)) {
                return Some("none in the environment, the profile, web identity, the container or instance metadata".to_string());
            }
            let mut root: &dyn std::error::Error = ce;
            while let Some(s) = root.source() {
                root = s;
            }
            return Some(
                root.to_string()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
            );
        }
        cur = c.source();
    }
    None
}

/// An environment of `(name, value)` pairs, for tests of what reads variables.
#[cfg(test)]
pub(crate) fn lookup(
    pairs: &'static [(&'static str, &'static str)],
) -> impl Fn(&str) -> Option<String> {
    move |k: &str| {
        pairs
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("request failed")]
    struct Wrapper(#[source] SdkCredentialsError);

    #[test]
    fn missing_credentials_are_found_in_the_chain() {
        let e = Wrapper(SdkCredentialsError::not_loaded("no providers in chain"));
        let c = CredentialsError::classify("S3", "AWS profile \"ops\"", None, e).unwrap();
        let shown = c.to_string();
        assert!(
            shown
                .starts_with("no AWS credentials for AWS profile \"ops\" (none in the environment"),
            "{shown}"
        );
        assert!(shown.contains("AWS_PROFILE"), "{shown}");
        let e = Wrapper(SdkCredentialsError::provider_error(
            "the SSO session\n  has expired",
        ));
        let c = CredentialsError::classify("S3", "o", Some("AccessDenied"), e).unwrap();
        assert!(
            c.to_string().contains("(the SSO session has expired)"),
            "{c}"
        );
    }

    #[test]
    fn rejected_codes_name_service_origin_and_code() {
        let e = std::io::Error::other("403");
        let c = CredentialsError::classify(
            "AWS",
            "AWS profile \"stale\"",
            Some("InvalidClientTokenId"),
            e,
        )
        .unwrap();
        let shown = c.to_string();
        assert!(
            shown.starts_with(
                "AWS rejected the credentials of AWS profile \"stale\" (InvalidClientTokenId)"
            ),
            "{shown}"
        );
        for code in ["AccessDenied", "NoSuchBucket", "UnauthorizedOperation"] {
            let e = std::io::Error::other(code);
            assert!(
                CredentialsError::classify("S3", "o", Some(code), e).is_err(),
                "{code}"
            );
        }
        assert!(CredentialsError::classify("S3", "o", None, std::io::Error::other("x")).is_err());
    }

    #[test]
    fn origin_prefers_keys_in_the_environment() {
        let vars = lookup;
        assert_eq!(credentials_origin(vars(&[])), "AWS profile \"default\"");
        assert_eq!(
            credentials_origin(vars(&[("AWS_PROFILE", "ops")])),
            "AWS profile \"ops\""
        );
        assert_eq!(
            credentials_origin(vars(&[("AWS_PROFILE", "ops"), ("AWS_ACCESS_KEY_ID", "AK")])),
            "AWS_ACCESS_KEY_ID from the environment"
        );
        assert_eq!(
            credentials_origin(vars(&[("AWS_ACCESS_KEY_ID", "")])),
            "AWS profile \"default\""
        );
    }
}
