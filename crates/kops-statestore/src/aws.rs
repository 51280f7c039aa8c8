//! What every AWS client of kops-rs shares: the SDK's environment, loaded once
//! ([`AwsEnv`]), where its default chain takes credentials from, and which failures mean
//! that the credentials, not the request, are the problem (none could be loaded, or AWS
//! rejected them).
//!
//! The S3 store of this crate and the AWS cloud backend (`kops-cloud-aws`, which depends
//! on this crate for it) can be built from one [`AwsEnv`], so they share one credentials
//! provider and one identity cache: credentials are fetched once, not once per client.
//! Both classify their SDK errors with [`CredentialsError::classify`], so a user reads
//! the same line whichever client met the problem. No SDK type appears in this module's
//! API: the SDK error is passed in as any [`std::error::Error`], and the SDK's own
//! credentials error is looked for in its source chain.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use aws_credential_types::provider::error::CredentialsError as SdkCredentialsError;

/// The AWS SDK's environment, loaded once: the region, the endpoint (`AWS_ENDPOINT_URL`)
/// and the default credentials chain (environment keys, `AWS_PROFILE` and the shared
/// config files, SSO, web identity, assume-role, container and instance roles), with
/// the identity cache that keeps the credentials the chain resolves.
///
/// Every client built from one `AwsEnv` (or a clone: clones share everything) uses the
/// same credentials provider and the same identity cache, also when it overrides the
/// region: the credentials are fetched by the first request that needs them and reused
/// by every client until they near expiry. So one command that reads an `s3://` state
/// store and drives the AWS cloud asks SSO, STS (an MFA prompt), the container or the
/// instance metadata service once, not once per client (the S3 store overrides the
/// region with its bucket's, keeping them). Loading runs no credentials
/// provider; only the region chain runs (see [`AwsEnv::from_env_in`] to skip it).
///
/// Give it to [`S3Config::with_aws_env`](crate::s3::S3Config::with_aws_env) or
/// [`StoreOptions::from_env_for_sharing`](crate::StoreOptions::from_env_for_sharing)
/// for the state store, and to kops-cloud-aws' `AwsBackendBuilder::from_aws_env` for
/// the cloud. `Debug` shows the region and where credentials come from, never a secret.
#[derive(Clone)]
pub struct AwsEnv {
    sdk: Arc<aws_config::SdkConfig>,
    origin: String,
}

impl fmt::Debug for AwsEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AwsEnv")
            .field("region", &self.region())
            .field("endpoint", &self.sdk.endpoint_url())
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

impl AwsEnv {
    /// Loads the SDK's defaults from the environment, as the AWS CLI finds them: the
    /// region (`AWS_REGION`, the profile, else the instance metadata service), the
    /// endpoint and the credentials chain.
    pub async fn from_env() -> AwsEnv {
        let loader = aws_config::defaults(aws_config::BehaviorVersion::latest());
        AwsEnv::from_loader(loader).await
    }

    /// [`AwsEnv::from_env`] for a known region: the region chain is not run, so a machine
    /// with no region configured does not wait for the instance metadata service to
    /// answer (or time out) for a region that would be replaced anyway.
    pub async fn from_env_in(region: impl Into<String>) -> AwsEnv {
        let loader = aws_config::defaults(aws_config::BehaviorVersion::latest())
            .region(aws_config::Region::new(region.into()));
        AwsEnv::from_loader(loader).await
    }

    /// Loads the SDK's environment as `options` say: a named profile of the shared config
    /// files in place of `AWS_PROFILE`, a region, an endpoint, fixed keys, and a role to
    /// assume with the credentials found so. What the options leave out comes from the
    /// environment as in [`AwsEnv::from_env`]. With a role, every client built from the
    /// result signs with the role's temporary credentials, which STS is asked for by the
    /// first request that needs them (at the options' endpoint, if any) and again near
    /// their expiry; nothing is sent while loading.
    pub async fn load(options: &AwsEnvOptions) -> AwsEnv {
        let mut loader = aws_config::defaults(aws_config::BehaviorVersion::latest());
        if let Some(region) = &options.region {
            loader = loader.region(aws_config::Region::new(region.clone()));
        }
        if let Some(profile) = &options.profile {
            loader = loader.profile_name(profile);
        }
        if let Some(endpoint) = &options.endpoint {
            loader = loader.endpoint_url(endpoint);
        }
        if let Some((id, secret)) = &options.keys {
            loader = loader.credentials_provider(aws_credential_types::Credentials::new(
                id,
                secret,
                None,
                None,
                "kops-statestore",
            ));
        }
        let base = loader.load().await;
        let mut origin = match (&options.keys, &options.profile) {
            (Some((id, _)), _) => format!("access key {id}"),
            (None, Some(profile)) => format!("AWS profile {profile:?}"),
            (None, None) => credentials_origin(|k| std::env::var(k).ok()),
        };
        let sdk = match &options.assume_role {
            None => base,
            Some(role) => {
                let mut b =
                    aws_config::sts::AssumeRoleProvider::builder(&role.role_arn).configure(&base);
                if let Some(name) = &role.session_name {
                    b = b.session_name(name);
                }
                if let Some(id) = &role.external_id {
                    b = b.external_id(id);
                }
                let provider = b.build().await;
                origin = format!("role {} assumed with {origin}", role.role_arn);
                base.into_builder()
                    .credentials_provider(
                        aws_credential_types::provider::SharedCredentialsProvider::new(provider),
                    )
                    .build()
            }
        };
        AwsEnv {
            sdk: Arc::new(sdk),
            origin,
        }
    }

    async fn from_loader(loader: aws_config::ConfigLoader) -> AwsEnv {
        AwsEnv {
            sdk: Arc::new(loader.load().await),
            origin: credentials_origin(|k| std::env::var(k).ok()),
        }
    }

    /// An environment over an SDK configuration built in this crate's tests.
    #[cfg(test)]
    pub(crate) fn from_sdk(sdk: aws_config::SdkConfig, origin: &str) -> AwsEnv {
        AwsEnv {
            sdk: Arc::new(sdk),
            origin: origin.to_string(),
        }
    }

    /// The region the environment names, if any.
    pub fn region(&self) -> Option<&str> {
        self.sdk.region().map(|r| r.as_ref())
    }

    /// Where the credentials chain takes credentials from ([`credentials_origin`]), for
    /// error messages.
    pub fn credentials_origin(&self) -> &str {
        &self.origin
    }

    /// The loaded configuration (`aws_config::SdkConfig`), type-erased so that no SDK type
    /// is part of this crate's API. For the AWS clients of other kops-rs crates, built
    /// with the same aws-config: they downcast it. Not a stable API.
    #[doc(hidden)]
    pub fn sdk_config(&self) -> &(dyn Any + Send + Sync) {
        &*self.sdk
    }

    /// The loaded configuration, for this crate's S3 client.
    pub(crate) fn sdk(&self) -> &aws_config::SdkConfig {
        &self.sdk
    }
}

/// How [`AwsEnv::load`] loads the SDK's environment; what is not set comes from the
/// environment. `Debug` never shows a secret.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct AwsEnvOptions {
    region: Option<String>,
    profile: Option<String>,
    endpoint: Option<String>,
    keys: Option<(String, String)>,
    assume_role: Option<AssumeRole>,
}

impl fmt::Debug for AwsEnvOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AwsEnvOptions")
            .field("region", &self.region)
            .field("profile", &self.profile)
            .field("endpoint", &self.endpoint)
            .field("access_key_id", &self.keys.as_ref().map(|(id, _)| id))
            .field("assume_role", &self.assume_role)
            .finish()
    }
}

impl AwsEnvOptions {
    /// The region (else `AWS_REGION`, the profile's, the instance metadata service's).
    pub fn with_region(mut self, region: impl Into<String>) -> Self {
        self.region = Some(region.into());
        self
    }

    /// A profile of the shared config and credentials files (`AWS_CONFIG_FILE`,
    /// `AWS_SHARED_CREDENTIALS_FILE`), in place of `AWS_PROFILE`.
    pub fn with_profile(mut self, profile: impl Into<String>) -> Self {
        self.profile = Some(profile.into());
        self
    }

    /// One endpoint for every service, STS included (an emulator, a VPC endpoint).
    pub fn with_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// Fixed keys in place of the credentials chain (and as the base of a role).
    pub fn with_static_credentials(
        mut self,
        access_key_id: impl Into<String>,
        secret_access_key: impl Into<String>,
    ) -> Self {
        self.keys = Some((access_key_id.into(), secret_access_key.into()));
        self
    }

    /// A role to assume with the credentials otherwise found.
    pub fn with_assume_role(mut self, role: AssumeRole) -> Self {
        self.assume_role = Some(role);
        self
    }
}

/// A role [`AwsEnv::load`] assumes through STS `AssumeRole`.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AssumeRole {
    role_arn: String,
    session_name: Option<String>,
    external_id: Option<String>,
}

impl AssumeRole {
    /// The role's ARN (`arn:aws:iam::123456789012:role/kops`).
    pub fn new(role_arn: impl Into<String>) -> Self {
        AssumeRole {
            role_arn: role_arn.into(),
            session_name: None,
            external_id: None,
        }
    }

    /// The session's name (default: one the SDK makes up).
    pub fn with_session_name(mut self, name: impl Into<String>) -> Self {
        self.session_name = Some(name.into());
        self
    }

    /// The external id the role's trust policy asks for.
    pub fn with_external_id(mut self, id: impl Into<String>) -> Self {
        self.external_id = Some(id.into());
        self
    }
}

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

    /// A role in the options: the environment's clients sign with what STS `AssumeRole`
    /// answered (a fake STS on a local socket, at the options' endpoint), asked for with
    /// the role, session name and external id given, on the fixed keys' signature.
    #[tokio::test]
    async fn a_role_in_the_options_is_assumed_through_sts_at_the_endpoint() {
        use aws_credential_types::provider::ProvideCredentials;
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let sts = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            // Headers and a small form body: read until the body's length is in.
            loop {
                let n = socket.read(&mut buf).await.unwrap();
                request.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&request).to_string();
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let length = head
                        .lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case("content-length")
                                .then(|| v.trim().parse::<usize>().ok())?
                        })
                        .unwrap_or(0);
                    if body.len() >= length {
                        break;
                    }
                }
            }
            let body = "<AssumeRoleResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\
                <AssumeRoleResult><Credentials><AccessKeyId>ASIAROLEKEY</AccessKeyId>\
                <SecretAccessKey>rolesecret</SecretAccessKey><SessionToken>roletoken</SessionToken>\
                <Expiration>2099-01-01T00:00:00Z</Expiration></Credentials>\
                <AssumedRoleUser><AssumedRoleId>AROA:s</AssumedRoleId>\
                <Arn>arn:aws:sts::123456789012:assumed-role/kops/s</Arn></AssumedRoleUser>\
                </AssumeRoleResult></AssumeRoleResponse>";
            let response = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/xml\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            socket.write_all(response.as_bytes()).await.unwrap();
            String::from_utf8_lossy(&request).to_string()
        });
        let options = AwsEnvOptions::default()
            .with_region("eu-west-1")
            .with_endpoint(&endpoint)
            .with_static_credentials("AKIABASE", "basesecret")
            .with_assume_role(
                AssumeRole::new("arn:aws:iam::123456789012:role/kops")
                    .with_session_name("tf-session")
                    .with_external_id("ext-42"),
            );
        let env = AwsEnv::load(&options).await;
        assert!(
            env.credentials_origin()
                .contains("role arn:aws:iam::123456789012:role/kops")
        );
        let provider = env.sdk().credentials_provider().unwrap();
        let creds = provider.provide_credentials().await.unwrap();
        assert_eq!(creds.access_key_id(), "ASIAROLEKEY");
        assert_eq!(creds.session_token(), Some("roletoken"));
        let request = sts.await.unwrap();
        assert!(request.contains("Action=AssumeRole"), "{request}");
        assert!(request.contains("RoleSessionName=tf-session"), "{request}");
        assert!(request.contains("ExternalId=ext-42"), "{request}");
        assert!(request.contains("Credential=AKIABASE/"), "{request}");
        assert!(!format!("{options:?}").contains("basesecret"));
    }

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
