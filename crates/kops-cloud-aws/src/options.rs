//! Building an [`AwsBackend`]: region, endpoint, credentials, retries and rate limits, all
//! given explicitly (or read from the environment only by [`AwsBackendBuilder::from_env`],
//! or taken from a loaded [`AwsEnv`] by [`AwsBackendBuilder::from_aws_env`]).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::cloud::Service;
use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_sdk_ec2::config::{Credentials, SharedCredentialsProvider};
use kops_statestore::aws::AwsEnv;

use crate::backend::AwsBackend;
use crate::error::{Error, Result};
use crate::ratelimit::{Clock, RateLimit, SystemClock};

/// Static credentials (an access key pair and optional session token). The secret and the
/// token never appear in `Debug` output.
#[derive(Clone)]
pub struct StaticCredentials {
    access_key_id: String,
    secret_access_key: String,
    session_token: Option<String>,
}

impl StaticCredentials {
    /// An access key pair.
    pub fn new(access_key_id: impl Into<String>, secret_access_key: impl Into<String>) -> Self {
        StaticCredentials {
            access_key_id: access_key_id.into(),
            secret_access_key: secret_access_key.into(),
            session_token: None,
        }
    }

    /// Adds a session token.
    pub fn with_session_token(mut self, token: impl Into<String>) -> Self {
        self.session_token = Some(token.into());
        self
    }
}

impl fmt::Debug for StaticCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"** redacted **")
            .finish_non_exhaustive()
    }
}

/// Builds an [`AwsBackend`].
///
/// The SDK configuration is an implementation detail of this crate: callers give the
/// region, an optional endpoint (an emulator such as moto, or a VPC endpoint), credentials
/// and limits as plain values, so no aws-sdk type appears in this crate's API and the SDK
/// can be upgraded without breaking callers. [`AwsBackendBuilder::new`] reads nothing from
/// the environment; [`AwsBackendBuilder::from_env`] resolves region and credentials with
/// the SDK's default chain (environment, profile, instance metadata);
/// [`AwsBackendBuilder::from_aws_env`] takes them from an [`AwsEnv`] loaded once and
/// shared with the caller's other AWS clients (the `s3://` state store), so credentials
/// are fetched once for all of them.
#[derive(Debug)]
pub struct AwsBackendBuilder {
    region: Option<String>,
    endpoint: Option<String>,
    credentials: Option<StaticCredentials>,
    max_attempts: u32,
    rate_limits: BTreeMap<Service, RateLimit>,
    clock: Arc<dyn Clock>,
    env: Option<SdkConfig>,
    /// Where [`AwsBackendBuilder::from_env`]'s chain takes credentials from, for errors.
    env_origin: Option<String>,
    /// An [`AwsEnv`] was given whose configuration is not this crate's aws-config's.
    foreign_env: bool,
}

impl Default for AwsBackendBuilder {
    fn default() -> Self {
        AwsBackendBuilder::new()
    }
}

impl AwsBackendBuilder {
    /// A builder that reads nothing from the environment.
    pub fn new() -> Self {
        AwsBackendBuilder {
            region: None,
            endpoint: None,
            credentials: None,
            max_attempts: 5,
            rate_limits: BTreeMap::new(),
            clock: Arc::new(SystemClock::default()),
            env: None,
            env_origin: None,
            foreign_env: false,
        }
    }

    /// A builder whose region and credentials come from the SDK's default provider chain
    /// (environment variables, shared config files, instance metadata); the setters
    /// override them.
    pub async fn from_env() -> Self {
        Self::from_aws_env(&AwsEnv::from_env().await)
    }

    /// [`AwsBackendBuilder::from_env`] for a known region: credentials come from the
    /// SDK's default chain, and the region chain is not run, so a machine with no region
    /// configured does not wait for the instance metadata service to answer (or time
    /// out) for a region that would be replaced anyway.
    pub async fn from_env_in(region: impl Into<String>) -> Self {
        Self::from_aws_env(&AwsEnv::from_env_in(region).await)
    }

    /// A builder whose region, endpoint and credentials come from `env`, an AWS
    /// environment loaded once (`AwsEnv::from_env`) and shared with the caller's other
    /// AWS clients: the backend keeps `env`'s credentials provider and identity cache
    /// when the setters override the region (or anything else but the credentials), so
    /// credentials the state store already fetched are not fetched again, and the other
    /// way round. Reads nothing from the environment itself.
    pub fn from_aws_env(env: &AwsEnv) -> Self {
        // The configuration is type-erased in kops-statestore's API; both crates are built
        // with the workspace's aws-config, so this is its `SdkConfig`.
        let Some(cfg) = env.sdk_config().downcast_ref::<SdkConfig>() else {
            return AwsBackendBuilder {
                foreign_env: true,
                ..AwsBackendBuilder::new()
            };
        };
        AwsBackendBuilder {
            region: env.region().map(str::to_string),
            env: Some(cfg.clone()),
            env_origin: Some(env.credentials_origin().to_string()),
            ..AwsBackendBuilder::new()
        }
    }

    /// The region (`us-east-1`).
    pub fn region(mut self, region: impl Into<String>) -> Self {
        self.region = Some(region.into());
        self
    }

    /// Sends every service's requests to this endpoint (`http://127.0.0.1:5000` for moto).
    /// S3 then uses path-style addressing.
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into());
        self
    }

    /// Static credentials.
    pub fn credentials(mut self, credentials: StaticCredentials) -> Self {
        self.credentials = Some(credentials);
        self
    }

    /// Attempts per call by the SDK's standard retry strategy (with exponential backoff);
    /// default 5, minimum 1.
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The client-side token bucket of one service (default:
    /// [`RateLimit::default_for`]).
    pub fn rate_limit(mut self, service: Service, limit: RateLimit) -> Self {
        self.rate_limits.insert(service, limit);
        self
    }

    /// The clock the token buckets use (tests inject a manual one).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Builds the backend. Fails when no region is set, or when no credentials are set on
    /// a builder made with [`AwsBackendBuilder::new`].
    pub fn build(self) -> Result<AwsBackend> {
        if self.foreign_env {
            return Err(Error::Invalid {
                option: "aws env",
                message: "the AwsEnv was loaded by a kops-statestore built with another aws-config than kops-cloud-aws".into(),
            });
        }
        let Some(region) = self.region.clone().filter(|r| !r.is_empty()) else {
            return Err(Error::Invalid {
                option: "region",
                message: "a region is required".into(),
            });
        };
        // From the environment's configuration: `to_builder` keeps its credentials provider
        // and identity cache (shared, not copied) while the region and the rest change.
        let mut b = match &self.env {
            Some(env) => env.to_builder(),
            None => SdkConfig::builder().behavior_version(BehaviorVersion::latest()),
        };
        b = b.region(Region::new(region.clone())).retry_config(
            aws_config::retry::RetryConfig::standard().with_max_attempts(self.max_attempts),
        );
        if let Some(c) = &self.credentials {
            let creds = Credentials::new(
                c.access_key_id.clone(),
                c.secret_access_key.clone(),
                c.session_token.clone(),
                None,
                "kops-cloud-aws",
            );
            b = b.credentials_provider(SharedCredentialsProvider::new(creds));
        } else if self.env.is_none() {
            return Err(Error::Invalid {
                option: "credentials",
                message: "credentials are required (or use AwsBackendBuilder::from_env)".into(),
            });
        }
        if let Some(e) = &self.endpoint {
            b = b.endpoint_url(e.clone());
        }
        let origin = match (&self.credentials, self.env_origin) {
            (Some(c), _) => format!("access key {}", c.access_key_id),
            (None, Some(origin)) => origin,
            (None, None) => "the SDK's default chain".to_string(),
        };
        let sdk = b.build();
        Ok(AwsBackend::from_parts(
            &sdk,
            region,
            origin,
            self.endpoint.is_some(),
            &self.rate_limits,
            self.clock,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The region given is the loaded configuration's, whatever the environment says:
    /// the SDK's region chain (environment, profile, instance metadata) is not asked.
    #[tokio::test]
    async fn a_builder_from_the_environment_in_a_region_loads_that_region() {
        let b = AwsBackendBuilder::from_env_in("eu-south-2").await;
        assert_eq!(b.region.as_deref(), Some("eu-south-2"));
        let loaded = b
            .env
            .as_ref()
            .and_then(|c| c.region())
            .map(|r| r.to_string());
        assert_eq!(loaded.as_deref(), Some("eu-south-2"));
        assert!(b.env_origin.is_some());
    }

    /// A builder from a shared environment takes its configuration (with the identity
    /// cache its clients share) and origin, and the region set on the builder wins.
    #[tokio::test]
    async fn a_builder_from_a_shared_environment_keeps_it_in_another_region() {
        let env = AwsEnv::from_env_in("eu-south-2").await;
        let b = AwsBackendBuilder::from_aws_env(&env);
        assert_eq!(b.region.as_deref(), Some("eu-south-2"));
        assert_eq!(b.env_origin.as_deref(), Some(env.credentials_origin()));
        assert!(b.env.as_ref().is_some_and(|c| c.identity_cache().is_some()));
        let backend = b.region("ap-east-1").build();
        assert!(backend.is_ok(), "{backend:?}");
        assert_eq!(
            env.region(),
            Some("eu-south-2"),
            "the environment is not changed"
        );
    }
}
