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
                kops_model::Error::Kubernetes { operation, source } => {
                    if let Some(p) = kops_model::day2::api_access_problem(source.as_ref()) {
                        return Some(format!("{operation}: {p}"));
                    }
                }
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

/// Explains a failure of the first AWS call of a command (`sts:GetCallerIdentity`):
/// missing or rejected credentials (the backend classifies them as every AWS client of
/// kops-rs does, [`kops_statestore::aws::CredentialsError`]) become one line naming the
/// region, where the credentials came from and what to do; anything else keeps its chain.
pub fn aws_account_error(e: kops_model::aws::cloud::CloudError, region: &str) -> anyhow::Error {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(c) = cur {
        if let Some(credentials) = c.downcast_ref::<kops_statestore::aws::CredentialsError>() {
            return user(format!("AWS (region {region}): {credentials}"));
        }
        cur = c.source();
    }
    anyhow::Error::new(e).context(format!(
        "reading the AWS account (sts:GetCallerIdentity, region {region})"
    ))
}
