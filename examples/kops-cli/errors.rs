//! Errors a user acts on, printed as one line: missing or rejected credentials, a
//! state-store bucket that does not exist or is not ours, an image or a zone the cloud
//! does not have. Everything else prints with its chain of causes.

use std::fmt;

/// A problem the user fixes, with its whole explanation in one line.
#[derive(Debug)]
pub struct UserError(pub String);

impl fmt::Display for UserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UserError {}

/// Wraps a one-line message as an error for the user.
pub fn user(message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UserError(message.into()))
}

/// The one line to print for `e` when somewhere in its chain is a problem the user
/// fixes; `None` for everything else.
pub fn user_line(e: &anyhow::Error) -> Option<String> {
    for cause in e.chain() {
        if let Some(u) = cause.downcast_ref::<UserError>() {
            return Some(u.0.clone());
        }
        if let Some(m) = cause.downcast_ref::<kops_model::Error>() {
            match m {
                kops_model::Error::ImageNotFound { group, .. } => {
                    return Some(format!(
                        "{m}; pass an image it has with `kops create cluster --image`, or set spec.image with `kops edit ig {group}`"
                    ));
                }
                kops_model::Error::Invalid { .. } => return Some(m.to_string()),
                _ => {}
            }
        }
        if let Some(s) = cause.downcast_ref::<kops_statestore::Error>() {
            match s {
                kops_statestore::Error::Unauthenticated { reason, .. } => {
                    return Some(reason.clone());
                }
                kops_statestore::Error::BucketNotFound { bucket, url } => {
                    return Some(format!(
                        "state store {url}: bucket {bucket} does not exist (create it, or point --state / KOPS_STATE_STORE at an existing bucket)"
                    ));
                }
                kops_statestore::Error::PermissionDenied {
                    operation, path, ..
                } => {
                    return Some(format!(
                        "{e}: access denied ({operation} {path}): the bucket belongs to another account, or these credentials may not use it"
                    ));
                }
                _ => {}
            }
        }
    }
    None
}

/// AWS error codes that mean the credentials were rejected (not merely short of a
/// permission).
const REJECTED: &[&str] = &[
    "InvalidClientTokenId",
    "SignatureDoesNotMatch",
    "ExpiredToken",
    "ExpiredTokenException",
    "InvalidAccessKeyId",
    "UnrecognizedClientException",
    "AuthFailure",
    "InvalidToken",
];

/// Where the AWS SDK's chain takes credentials from, as far as the environment tells.
pub fn aws_credentials_origin() -> String {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    if var("AWS_ACCESS_KEY_ID").is_some() {
        "AWS_ACCESS_KEY_ID from the environment".to_string()
    } else {
        format!(
            "AWS profile {:?}",
            var("AWS_PROFILE").unwrap_or_else(|| "default".to_string())
        )
    }
}

/// Explains a failure of the first AWS call of a command (`sts:GetCallerIdentity`):
/// missing or rejected credentials become one line naming the service and the
/// profile; anything else keeps its chain.
pub fn aws_account_error(
    e: impl std::error::Error + Send + Sync + 'static,
    region: &str,
) -> anyhow::Error {
    let origin = aws_credentials_origin();
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(c) = cur {
        if let Some(ce) =
            c.downcast_ref::<aws_credential_types::provider::error::CredentialsError>()
        {
            use aws_credential_types::provider::error::CredentialsError as C;
            let why = if matches!(ce, C::CredentialsNotLoaded(_)) {
                "none in the environment, the profile, web identity, the container or instance metadata".to_string()
            } else {
                let mut root: &dyn std::error::Error = ce;
                while let Some(s) = root.source() {
                    root = s;
                }
                root.to_string()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            return user(format!(
                "AWS (region {region}): no AWS credentials for {origin} ({why}); set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or log in with `aws sso login`"
            ));
        }
        cur = c.source();
    }
    // The AWS error code may sit at any level of the chain.
    let mut text = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cur = c.source();
    }
    if let Some(code) = REJECTED.iter().find(|c| text.contains(&format!("({c})"))) {
        return user(format!(
            "AWS (region {region}): AWS rejected the credentials of {origin} ({code}); check the access key, or refresh the session (`aws sso login`)"
        ));
    }
    anyhow::Error::new(e).context(format!(
        "reading the AWS account (sts:GetCallerIdentity, region {region})"
    ))
}
