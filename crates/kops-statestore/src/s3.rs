//! Amazon S3 backend (`s3://bucket/prefix`), through aws-sdk-s3.
//!
//! Conditional writes use S3's `If-None-Match: *` (create-if-absent) and
//! `If-Match: <etag>` (update-if-version-matches) on `PutObject`; versions
//! are ETags. No AWS SDK type appears in this module's public API: the
//! client is configured from an [`S3Config`].
//!
//! # The bucket's region
//!
//! S3 answers a request sent to another region than the bucket's with a 301
//! (`PermanentRedirect`), so, as kOps does, the store finds its bucket's region
//! before its first request and sends every request there (see
//! [`S3Config::with_region`] for when nothing is probed). The probe runs once per
//! store, on first use ([`S3Store::bucket_region`] runs it on demand); concurrent
//! first uses wait for the one probe. `GetBucketLocation` is asked first, from
//! the environment's region (else `us-east-1`): an empty location means
//! `us-east-1`, `EU` means `eu-west-1`. When it fails (no
//! `s3:GetBucketLocation` permission), `HeadBucket`, whose answer, success or
//! failure (a 301 from another region), carries the `x-amz-bucket-region` header.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::BucketVersioningStatus;
use bytes::Bytes;
use tokio::sync::OnceCell;

use crate::aws::{AwsEnv, CredentialsError};
use crate::error::{BoxError, Error, Result};
use crate::store::{
    CheckStatus, DeleteOptions, GetResult, ObjectMeta, ObjectVersion, PutMode, PutOptions,
    SafetyCheck, Store, Version, Warning, validate_path, validate_prefix,
};

/// Static access keys. The secret never appears in `Debug` output.
#[derive(Clone)]
struct StaticKeys {
    access_key_id: String,
    secret_access_key: String,
    session_token: Option<String>,
}

impl fmt::Debug for StaticKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticKeys")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<redacted>")
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// How to reach S3: region, endpoint, addressing style and credentials.
///
/// Built from [`Default`] and `with_*` setters (nothing is read from the
/// environment; [`S3Config::with_aws_env`] takes a loaded [`AwsEnv`]), or from
/// [`S3Config::from_env`], which runs the AWS SDK's standard provider chain
/// (environment, profile, instance metadata).
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct S3Config {
    region: Option<String>,
    endpoint: Option<String>,
    force_path_style: bool,
    keys: Option<StaticKeys>,
    sdk: Option<AwsEnv>,
    /// Where the credentials come from, for error messages.
    origin: Option<String>,
}

impl fmt::Debug for S3Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Config")
            .field("region", &self.region)
            .field("endpoint", &self.endpoint)
            .field("force_path_style", &self.force_path_style)
            .field("keys", &self.keys)
            .field("from_env", &self.sdk.is_some())
            .field("origin", &self.origin)
            .finish()
    }
}

/// The environment variables kOps reads for an S3-compatible store.
const S3_ENDPOINT: &str = "S3_ENDPOINT";
const S3_REGION: &str = "S3_REGION";
const S3_ACCESS_KEY_ID: &str = "S3_ACCESS_KEY_ID";
const S3_SECRET_ACCESS_KEY: &str = "S3_SECRET_ACCESS_KEY";

impl S3Config {
    /// Reads the environment as kOps does.
    ///
    /// With `S3_ENDPOINT` set (MinIO, Ceph, an emulator): requests go to that
    /// endpoint with path-style addressing, in region `S3_REGION` (default
    /// `us-east-1`), signed with `S3_ACCESS_KEY_ID` and `S3_SECRET_ACCESS_KEY`,
    /// which must then both be set and non-empty; nothing else is read.
    ///
    /// Without it: region, endpoint (`AWS_ENDPOINT_URL`) and credentials come
    /// from the AWS SDK's own chain, as the AWS CLI finds them (environment
    /// variables, `AWS_PROFILE` and the shared config files, SSO, web
    /// identity, container and instance roles).
    pub async fn from_env() -> Result<Self> {
        Self::from_env_sharing(AwsEnv::from_env).await
    }

    /// [`S3Config::from_env`], with the AWS SDK's environment (used without
    /// `S3_ENDPOINT`) from `aws`, which is called only then: give it one that
    /// hands out the [`AwsEnv`] the caller's other AWS clients use (loading it
    /// at most once), and the store shares their credentials provider and
    /// identity cache, so credentials are fetched once for all of them.
    pub async fn from_env_sharing<F, Fut>(aws: F) -> Result<Self>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = AwsEnv>,
    {
        Self::from_vars(|k| std::env::var(k).ok(), aws).await
    }

    /// [`S3Config::from_env_sharing`] over a variable lookup (`var(name)`), so
    /// it can be tested without touching the process environment. The SDK chain
    /// used without `S3_ENDPOINT` still reads the real environment.
    async fn from_vars<F, Fut>(var: impl Fn(&str) -> Option<String>, aws: F) -> Result<Self>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = AwsEnv>,
    {
        let get = |k: &str| var(k).filter(|v| !v.is_empty());
        if let Some(endpoint) = get(S3_ENDPOINT) {
            let missing = |k: &str| Error::Unauthenticated {
                service: "S3",
                reason: format!(
                    "S3 state store: {S3_ENDPOINT}={endpoint} is set but {k} is not: an S3-compatible store needs {S3_ACCESS_KEY_ID} and {S3_SECRET_ACCESS_KEY}"
                ),
                source: None,
            };
            let key = get(S3_ACCESS_KEY_ID).ok_or_else(|| missing(S3_ACCESS_KEY_ID))?;
            let secret = get(S3_SECRET_ACCESS_KEY).ok_or_else(|| missing(S3_SECRET_ACCESS_KEY))?;
            let region = get(S3_REGION).unwrap_or_else(|| "us-east-1".to_string());
            let mut c = S3Config::default()
                .with_endpoint(endpoint.clone())
                .with_force_path_style(true)
                .with_region(region)
                .with_static_credentials(key, secret, None);
            c.origin = Some(format!("{S3_ACCESS_KEY_ID} (for {S3_ENDPOINT}={endpoint})"));
            return Ok(c);
        }
        Ok(S3Config::default().with_aws_env(&aws().await))
    }

    /// Takes the region, the endpoint and the credentials from `env`, sharing its
    /// credentials provider and identity cache with every other client built from
    /// it. The other setters override it (static keys replace its credentials).
    pub fn with_aws_env(mut self, env: &AwsEnv) -> Self {
        self.origin = Some(env.credentials_origin().to_string());
        self.sdk = Some(env.clone());
        self
    }

    /// Sends every request to `region`, the bucket's: nothing is probed. Without it,
    /// the store finds its bucket's region on first use (see the [module](self)
    /// docs) and sends its requests there, starting from the environment's region
    /// (else `us-east-1`). `S3_ENDPOINT`'s S3-compatible mode sets it (`S3_REGION`,
    /// default `us-east-1`), as kOps probes nothing there.
    pub fn with_region(mut self, region: impl Into<String>) -> Self {
        self.region = Some(region.into());
        self
    }

    /// Sends requests to `endpoint` (an S3-compatible server or an emulator).
    pub fn with_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// Uses path-style addressing (`endpoint/bucket/key`), as emulators need.
    pub fn with_force_path_style(mut self, on: bool) -> Self {
        self.force_path_style = on;
        self
    }

    /// Uses fixed access keys.
    pub fn with_static_credentials(
        mut self,
        access_key_id: impl Into<String>,
        secret_access_key: impl Into<String>,
        session_token: Option<String>,
    ) -> Self {
        self.keys = Some(StaticKeys {
            access_key_id: access_key_id.into(),
            secret_access_key: secret_access_key.into(),
            session_token,
        });
        self
    }

    /// The client of the configured region (else the environment's, else `us-east-1`).
    fn client(&self) -> aws_sdk_s3::Client {
        self.client_in(None)
    }

    /// The client sending to `region` when given, with the same credentials provider
    /// and identity cache.
    fn client_in(&self, region: Option<&str>) -> aws_sdk_s3::Client {
        // From the environment's configuration: its credentials provider and its
        // identity cache are shared (not copied) with every client built from it.
        let mut b = match &self.sdk {
            Some(env) => aws_sdk_s3::config::Builder::from(env.sdk()),
            None => aws_sdk_s3::config::Builder::new(),
        };
        b = b.behavior_version(aws_sdk_s3::config::BehaviorVersion::latest());
        if let Some(r) = region.or(self.region.as_deref()) {
            b = b.region(aws_sdk_s3::config::Region::new(r.to_string()));
        } else if self.sdk.as_ref().and_then(|s| s.region()).is_none() {
            b = b.region(aws_sdk_s3::config::Region::from_static("us-east-1"));
        }
        if let Some(e) = &self.endpoint {
            b = b.endpoint_url(e.clone());
        }
        if self.force_path_style {
            b = b.force_path_style(true);
        }
        if let Some(k) = &self.keys {
            b = b.credentials_provider(aws_sdk_s3::config::Credentials::new(
                k.access_key_id.clone(),
                k.secret_access_key.clone(),
                k.session_token.clone(),
                None,
                "kops-statestore",
            ));
        }
        aws_sdk_s3::Client::from_conf(b.build())
    }
}

/// An S3 bucket as a [`Store`]. Wrap it in a
/// [`PrefixStore`](crate::PrefixStore) for a key prefix.
#[derive(Clone)]
pub struct S3Store {
    /// The client of the configured or the environment's region: it probes the
    /// bucket's region, and creates the bucket.
    client: aws_sdk_s3::Client,
    bucket: String,
    origin: String,
    config: S3Config,
    /// The bucket's region and the client sending there, found once (shared by clones).
    located: Arc<OnceCell<Located>>,
}

/// Where the bucket lives, and the client sending there.
#[derive(Clone)]
struct Located {
    region: String,
    client: aws_sdk_s3::Client,
}

/// The region a `GetBucketLocation` answer names: no constraint is `us-east-1`, and
/// the legacy `EU` is `eu-west-1`.
fn location_region(constraint: Option<&str>) -> String {
    match constraint.unwrap_or("") {
        "" => "us-east-1".to_string(),
        "EU" => "eu-west-1".to_string(),
        r => r.to_string(),
    }
}

/// The `x-amz-bucket-region` header of a `HeadBucket` answer, if it carries one.
fn bucket_region_header(headers: &aws_sdk_s3::config::http::HttpResponse) -> Option<String> {
    headers
        .headers()
        .get("x-amz-bucket-region")
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::to_string)
}

impl fmt::Debug for S3Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Store")
            .field("bucket", &self.bucket)
            .finish_non_exhaustive()
    }
}

/// An S3 failure reduced to what we classify on.
struct Failure {
    code: Option<String>,
    status: Option<u16>,
    source: Source,
}

/// What the SDK's error says.
enum Source {
    /// Missing or rejected credentials (they concern the store, not the object).
    Credentials(CredentialsError),
    /// Anything else: the SDK's error.
    Sdk(BoxError),
}

impl Failure {
    /// Maps a failure of `op` on `path` in `store`: credentials and a missing bucket
    /// first (they concern the store, not the object), then by code and status.
    fn into_error(self, store: &S3Store, op: &'static str, path: &str) -> Error {
        let source = match self.source {
            Source::Credentials(c) => {
                return Error::Unauthenticated {
                    service: "S3",
                    reason: format!("S3 state store {}: {c}", store.url()),
                    source: Some(c.into_source()),
                };
            }
            Source::Sdk(source) => source,
        };
        let code = self.code.as_deref().unwrap_or("");
        match (code, self.status) {
            // A missing bucket is not a missing object.
            ("NoSuchBucket", _) => Error::BucketNotFound {
                bucket: store.bucket.clone(),
                url: store.url(),
            },
            ("NoSuchKey" | "NotFound", _) | (_, Some(404)) => Error::NotFound {
                path: path.to_string(),
            },
            ("AccessDenied" | "Forbidden", _) | (_, Some(403)) => Error::PermissionDenied {
                operation: op,
                path: path.to_string(),
                source,
            },
            (
                "SlowDown"
                | "Throttling"
                | "ThrottlingException"
                | "RequestLimitExceeded"
                | "TooManyRequestsException",
                _,
            )
            | (_, Some(429 | 503)) => Error::Throttled {
                operation: op,
                path: path.to_string(),
                source,
            },
            _ => Error::Backend {
                backend: "s3",
                operation: op,
                path: path.to_string(),
                source,
            },
        }
    }

    /// A lost conditional write: 412 `PreconditionFailed`, or 409
    /// `ConditionalRequestConflict` (a concurrent conditional write won).
    fn is_precondition(&self) -> bool {
        matches!(
            self.code.as_deref(),
            Some("PreconditionFailed" | "ConditionalRequestConflict")
        ) || matches!(self.status, Some(412))
    }
}

impl S3Store {
    /// Reduces an SDK error to a [`Failure`], recognising missing or rejected
    /// credentials by the rule every AWS client shares ([`CredentialsError::classify`]).
    fn failure<E>(&self, e: SdkError<E, aws_sdk_s3::config::http::HttpResponse>) -> Failure
    where
        E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    {
        let code = e.code().map(str::to_string);
        let status = e.raw_response().map(|r| r.status().as_u16());
        let source = match CredentialsError::classify("S3", &self.origin, code.as_deref(), e) {
            Ok(c) => Source::Credentials(c),
            Err(e) => Source::Sdk(Box::new(e)),
        };
        Failure {
            code,
            status,
            source,
        }
    }

    /// Maps a failure of `op` on `path` ([`Failure::into_error`]).
    fn error(&self, f: Failure, op: &'static str, path: &str) -> Error {
        f.into_error(self, op, path)
    }

    /// A store over `bucket`, reached as `config` says. Nothing is sent: the bucket's
    /// region is found on first use, unless `config` names it
    /// ([`S3Config::with_region`]).
    pub fn new(bucket: impl Into<String>, config: &S3Config) -> Self {
        let client = config.client();
        let located = match &config.region {
            Some(region) => OnceCell::new_with(Some(Located {
                region: region.clone(),
                client: client.clone(),
            })),
            None => OnceCell::new(),
        };
        S3Store {
            client,
            bucket: bucket.into(),
            origin: config
                .origin
                .clone()
                .unwrap_or_else(|| "the configured credentials".to_string()),
            config: config.clone(),
            located: Arc::new(located),
        }
    }

    /// The bucket's region: the configured one ([`S3Config::with_region`]), else found
    /// by asking S3 once (see the [module](self) docs); later calls, and every request,
    /// reuse it. Fails, naming the bucket, when neither `GetBucketLocation` nor
    /// `HeadBucket` tells it (a missing bucket, no permission for either).
    pub async fn bucket_region(&self) -> Result<String> {
        Ok(self.located().await?.region.clone())
    }

    /// Where the bucket lives, found on first use.
    async fn located(&self) -> Result<&Located> {
        self.located
            .get_or_try_init(|| async {
                let region = self.probe_region().await?;
                let client = self.config.client_in(Some(&region));
                Ok(Located { region, client })
            })
            .await
    }

    /// Asks S3 for the bucket's region: `GetBucketLocation`, else `HeadBucket` (whose
    /// answer carries it even when it fails with a redirect).
    async fn probe_region(&self) -> Result<String> {
        let location = match self
            .client
            .get_bucket_location()
            .bucket(&self.bucket)
            .send()
            .await
        {
            Ok(out) => {
                return Ok(location_region(
                    out.location_constraint().map(|c| c.as_str()),
                ));
            }
            Err(e) => self.failure(e),
        };
        if location.code.as_deref() == Some("NoSuchBucket") {
            return Err(Error::BucketNotFound {
                bucket: self.bucket.clone(),
                url: self.url(),
            });
        }
        if let Source::Credentials(_) = location.source {
            return Err(self.error(location, "find the region of S3 bucket", &self.bucket));
        }
        let head = match self.client.head_bucket().bucket(&self.bucket).send().await {
            Ok(out) => match out.bucket_region() {
                Some(r) if !r.is_empty() => return Ok(r.to_string()),
                _ => None,
            },
            Err(e) => {
                if let Some(r) = e.raw_response().and_then(bucket_region_header) {
                    return Ok(r);
                }
                Some(self.failure(e))
            }
        };
        // Neither said: report the more telling failure (HeadBucket's has no code).
        let f = match head {
            Some(h) if h.status == Some(404) => {
                return Err(Error::BucketNotFound {
                    bucket: self.bucket.clone(),
                    url: self.url(),
                });
            }
            Some(h) if matches!(h.source, Source::Credentials(_)) => h,
            _ => location,
        };
        Err(
            match self.error(f, "find the region of S3 bucket", &self.bucket) {
                Error::PermissionDenied { source, .. } => Error::PermissionDenied {
                    operation: "find the region of S3 bucket",
                    path: format!(
                        "{} (GetBucketLocation and HeadBucket were refused: grant s3:GetBucketLocation or s3:ListBucket on it, or give the store its region)",
                        self.bucket
                    ),
                    source,
                },
                other => other,
            },
        )
    }

    /// The bucket name.
    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// Creates the bucket (for tests and bootstrapping), in the configured region
    /// ([`S3Config::with_region`]; else the environment's region's client creates it
    /// without a location, in `us-east-1`); an existing bucket owned by the caller is
    /// not an error.
    pub async fn create_bucket(&self) -> Result<()> {
        use aws_sdk_s3::types::{BucketLocationConstraint, CreateBucketConfiguration};
        let mut req = self.client.create_bucket().bucket(&self.bucket);
        if let Some(r) = self.config.region.as_deref().filter(|r| *r != "us-east-1") {
            req = req.create_bucket_configuration(
                CreateBucketConfiguration::builder()
                    .location_constraint(BucketLocationConstraint::from(r))
                    .build(),
            );
        }
        match req.send().await {
            Ok(_) => Ok(()),
            Err(e) => {
                let f = self.failure(e);
                if f.code.as_deref() == Some("BucketAlreadyOwnedByYou") {
                    Ok(())
                } else {
                    Err(self.error(f, "create bucket", &self.bucket))
                }
            }
        }
    }
}

#[async_trait]
impl Store for S3Store {
    async fn get(&self, path: &str) -> Result<GetResult> {
        validate_path(path)?;
        let out = self
            .located()
            .await?
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(path)
            .send()
            .await
            .map_err(|e| self.error(self.failure(e), "get", path))?;
        let etag = out
            .e_tag()
            .map(str::to_string)
            .ok_or_else(|| Error::backend("s3", "get", path, "response carries no ETag"))?;
        let data = out
            .body
            .collect()
            .await
            .map_err(|e| Error::backend("s3", "get", path, e))?
            .into_bytes();
        Ok(GetResult {
            data,
            version: Version::new(etag),
        })
    }

    async fn put(&self, path: &str, data: Bytes, options: PutOptions) -> Result<Version> {
        validate_path(path)?;
        let mut req = self
            .located()
            .await?
            .client
            .put_object()
            .bucket(&self.bucket)
            .key(path)
            .body(ByteStream::from(data));
        match &options.mode {
            PutMode::Overwrite => {}
            PutMode::CreateIfAbsent => req = req.if_none_match("*"),
            PutMode::UpdateIfVersionMatches(v) => req = req.if_match(v.as_str()),
        }
        match req.send().await {
            Ok(out) => out
                .e_tag()
                .map(Version::new)
                .ok_or_else(|| Error::backend("s3", "put", path, "response carries no ETag")),
            Err(e) => {
                let f = self.failure(e);
                match &options.mode {
                    PutMode::CreateIfAbsent if f.is_precondition() => Err(Error::AlreadyExists {
                        path: path.to_string(),
                    }),
                    // A missing object fails If-Match with 404 NoSuchKey.
                    PutMode::UpdateIfVersionMatches(v)
                        if f.is_precondition()
                            || f.code.as_deref() == Some("NoSuchKey")
                            || f.status == Some(404) =>
                    {
                        Err(Error::Precondition {
                            path: path.to_string(),
                            expected: v.to_string(),
                        })
                    }
                    _ => Err(self.error(f, "put", path)),
                }
            }
        }
    }

    async fn delete_opts(&self, path: &str, options: DeleteOptions) -> Result<()> {
        validate_path(path)?;
        let mut req = self
            .located()
            .await?
            .client
            .delete_object()
            .bucket(&self.bucket)
            .key(path);
        if let Some(v) = &options.if_version {
            req = req.if_match(v.as_str());
        }
        match req.send().await {
            Ok(_) => Ok(()),
            Err(e) => {
                let f = self.failure(e);
                match &options.if_version {
                    Some(v)
                        if f.is_precondition()
                            || f.code.as_deref() == Some("NoSuchKey")
                            || f.status == Some(404) =>
                    {
                        Err(Error::Precondition {
                            path: path.to_string(),
                            expected: v.to_string(),
                        })
                    }
                    _ => match self.error(f, "delete", path) {
                        Error::NotFound { .. } => Ok(()),
                        other => Err(other),
                    },
                }
            }
        }
    }

    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>> {
        validate_prefix(prefix)?;
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        let client = &self.located().await?.client;
        loop {
            let page = client
                .list_objects_v2()
                .bucket(&self.bucket)
                .prefix(prefix)
                .set_continuation_token(token.take())
                .send()
                .await
                .map_err(|e| match self.error(self.failure(e), "list", prefix) {
                    // A missing bucket is a failure, not an empty listing.
                    Error::NotFound { .. } => Error::BucketNotFound {
                        bucket: self.bucket.clone(),
                        url: self.url(),
                    },
                    other => other,
                })?;
            for o in page.contents() {
                if let Some(k) = o.key() {
                    let mut meta = ObjectMeta::new(k, o.size().unwrap_or(0).max(0) as u64);
                    // A one-part upload's ETag is its MD5 unless the object is encrypted
                    // with KMS; then it is another 32 hex digits, which only fails to
                    // match what a reader expects (and the reader reads the object).
                    if let Some(etag) = o.e_tag() {
                        if let Some(md5) = md5_from_hex(etag) {
                            meta = meta.with_md5(md5);
                        }
                        meta = meta.with_version(Version::new(etag));
                    }
                    out.push(meta);
                }
            }
            match page.next_continuation_token() {
                Some(t) if page.is_truncated() == Some(true) => token = Some(t.to_string()),
                _ => break,
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    fn url(&self) -> String {
        format!("s3://{}", self.bucket)
    }

    /// The bucket's region once known: the configured one, or the one found on the
    /// store's first use (or by [`S3Store::bucket_region`]); `None` before that.
    fn region(&self) -> Option<String> {
        self.located.get().map(|l| l.region.clone())
    }

    async fn warnings(&self) -> Result<Vec<Warning>> {
        if self.versioning_enabled().await? {
            Ok(Vec::new())
        } else {
            Ok(vec![Warning::new(
                self.url(),
                "bucket versioning is not enabled: an overwritten or deleted state file cannot be recovered; enable versioning on the bucket",
            )])
        }
    }

    async fn safety_checks(&self) -> Result<Vec<SafetyCheck>> {
        let b = &self.bucket;
        let versioning = match self.versioning_enabled().await {
            Ok(true) => CheckStatus::Passed,
            Ok(false) => CheckStatus::failed(format!(
                "turn versioning on: aws s3api put-bucket-versioning --bucket {b} --versioning-configuration Status=Enabled (or kops toolbox check-state-store --fix)"
            )),
            Err(Error::PermissionDenied { .. }) => CheckStatus::unknown("s3:GetBucketVersioning"),
            Err(e) => return Err(e),
        };
        let client = &self.located().await?.client;
        let encryption = client
            .get_bucket_encryption()
            .bucket(b)
            .send()
            .await
            .map(|out| {
                out.server_side_encryption_configuration()
                    .is_some_and(|c| !c.rules().is_empty())
            });
        let encryption = self.setting_status(
            encryption,
            "ServerSideEncryptionConfigurationNotFoundError",
            "s3:GetEncryptionConfiguration",
            encryption_fix(b),
            "get bucket encryption",
        )?;
        let public = client
            .get_public_access_block()
            .bucket(b)
            .send()
            .await
            .map(|out| {
                out.public_access_block_configuration().is_some_and(|c| {
                    c.block_public_acls() == Some(true)
                        && c.ignore_public_acls() == Some(true)
                        && c.block_public_policy() == Some(true)
                        && c.restrict_public_buckets() == Some(true)
                })
            });
        let public = self.setting_status(
            public,
            "NoSuchPublicAccessBlockConfiguration",
            "s3:GetBucketPublicAccessBlock",
            public_access_fix(b),
            "get public access block",
        )?;
        Ok(vec![
            SafetyCheck::new("versioning", versioning),
            SafetyCheck::new("default encryption", encryption),
            SafetyCheck::new("public access blocked", public),
        ])
    }

    async fn list_versions(&self, prefix: &str) -> Result<Vec<ObjectVersion>> {
        validate_prefix(prefix)?;
        let client = &self.located().await?.client;
        let (mut versions, mut markers) = (Vec::new(), Vec::new());
        let (mut key_marker, mut version_marker) = (None::<String>, None::<String>);
        loop {
            let page = client
                .list_object_versions()
                .bucket(&self.bucket)
                .prefix(prefix)
                .set_key_marker(key_marker.take())
                .set_version_id_marker(version_marker.take())
                .send()
                .await
                .map_err(|e| self.error(self.failure(e), "list object versions", prefix))?;
            for v in page.versions() {
                let (Some(k), Some(id)) = (v.key(), v.version_id()) else {
                    continue;
                };
                let mut ov = ObjectVersion::new(k, id, millis(v.last_modified()));
                if v.is_latest() == Some(true) {
                    ov = ov.latest();
                }
                versions.push(ov);
            }
            for m in page.delete_markers() {
                let (Some(k), Some(id)) = (m.key(), m.version_id()) else {
                    continue;
                };
                let mut ov = ObjectVersion::new(k, id, millis(m.last_modified())).deleted();
                if m.is_latest() == Some(true) {
                    ov = ov.latest();
                }
                markers.push(ov);
            }
            if page.is_truncated() != Some(true) {
                break;
            }
            key_marker = page.next_key_marker().map(str::to_owned);
            version_marker = page.next_version_id_marker().map(str::to_owned);
            if key_marker.is_none() {
                break;
            }
        }
        // S3 lists each key's versions newest first, and its times are whole seconds at
        // worst: oldest first, delete markers before versions, then a stable sort by
        // time keeps what can be known of the order among equal times (a version and a
        // marker of the same second count the version as the later, so a restore keeps
        // content rather than lose it).
        markers.reverse();
        versions.reverse();
        let mut out = markers;
        out.extend(versions);
        out.sort_by(|a, b| a.path.cmp(&b.path).then(a.modified_ms.cmp(&b.modified_ms)));
        Ok(out)
    }

    async fn get_version(&self, path: &str, version_id: &str) -> Result<GetResult> {
        validate_path(path)?;
        let out = self
            .located()
            .await?
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(path)
            .version_id(version_id)
            .send()
            .await
            .map_err(|e| self.error(self.failure(e), "get version", path))?;
        let etag = out.e_tag().map(str::to_string).unwrap_or_default();
        let data = out
            .body
            .collect()
            .await
            .map_err(|e| Error::backend("s3", "get version", path, e))?
            .into_bytes();
        Ok(GetResult {
            data,
            version: Version::new(etag),
        })
    }

    async fn fix_safety(&self) -> Result<Vec<String>> {
        use aws_sdk_s3::types::{
            PublicAccessBlockConfiguration, ServerSideEncryption, ServerSideEncryptionByDefault,
            ServerSideEncryptionConfiguration, ServerSideEncryptionRule, VersioningConfiguration,
        };
        let b = &self.bucket;
        let mut changed = Vec::new();
        for check in self.safety_checks().await? {
            if !matches!(check.status, CheckStatus::Failed { .. }) {
                continue;
            }
            let client = &self.located().await?.client;
            let (op, done) = match check.name.as_str() {
                "versioning" => (
                    "put bucket versioning",
                    client
                        .put_bucket_versioning()
                        .bucket(b)
                        .versioning_configuration(
                            VersioningConfiguration::builder()
                                .status(BucketVersioningStatus::Enabled)
                                .build(),
                        )
                        .send()
                        .await
                        .map(|_| "turned versioning on")
                        .map_err(|e| self.failure(e)),
                ),
                "default encryption" => {
                    let by_default = ServerSideEncryptionByDefault::builder()
                        .sse_algorithm(ServerSideEncryption::Aes256)
                        .build()
                        .map_err(|e| Error::Invalid {
                            what: "encryption configuration".into(),
                            reason: e.to_string(),
                        })?;
                    let rule = ServerSideEncryptionRule::builder()
                        .apply_server_side_encryption_by_default(by_default)
                        .build();
                    let config = ServerSideEncryptionConfiguration::builder()
                        .rules(rule)
                        .build()
                        .map_err(|e| Error::Invalid {
                            what: "encryption configuration".into(),
                            reason: e.to_string(),
                        })?;
                    (
                        "put bucket encryption",
                        client
                            .put_bucket_encryption()
                            .bucket(b)
                            .server_side_encryption_configuration(config)
                            .send()
                            .await
                            .map(|_| "turned default encryption on (SSE-S3, AES256)")
                            .map_err(|e| self.failure(e)),
                    )
                }
                "public access blocked" => (
                    "put public access block",
                    client
                        .put_public_access_block()
                        .bucket(b)
                        .public_access_block_configuration(
                            PublicAccessBlockConfiguration::builder()
                                .block_public_acls(true)
                                .ignore_public_acls(true)
                                .block_public_policy(true)
                                .restrict_public_buckets(true)
                                .build(),
                        )
                        .send()
                        .await
                        .map(|_| "blocked public access (all four settings)")
                        .map_err(|e| self.failure(e)),
                ),
                _ => continue,
            };
            match done {
                Ok(what) => changed.push(format!("{}: {what}", self.url())),
                Err(f) => return Err(self.error(f, op, b)),
            }
        }
        Ok(changed)
    }
}

/// Unix milliseconds of an S3 timestamp.
fn millis(t: Option<&aws_sdk_s3::primitives::DateTime>) -> i64 {
    t.map(|d| d.secs() * 1000 + i64::from(d.subsec_nanos() / 1_000_000))
        .unwrap_or(0)
}

fn encryption_fix(bucket: &str) -> String {
    format!(
        "turn default encryption on: aws s3api put-bucket-encryption --bucket {bucket} --server-side-encryption-configuration '{{\"Rules\":[{{\"ApplyServerSideEncryptionByDefault\":{{\"SSEAlgorithm\":\"AES256\"}}}}]}}' (or kops toolbox check-state-store --fix)"
    )
}

fn public_access_fix(bucket: &str) -> String {
    format!(
        "block public access: aws s3api put-public-access-block --bucket {bucket} --public-access-block-configuration BlockPublicAcls=true,IgnorePublicAcls=true,BlockPublicPolicy=true,RestrictPublicBuckets=true (or kops toolbox check-state-store --fix)"
    )
}

impl S3Store {
    /// The status of a bucket setting read as on (`Ok(true)`) or off: the error code
    /// `unset_code` (no configuration at all) is off too, a denial is unknown naming
    /// `permission`, anything else an error of `op`.
    fn setting_status<E>(
        &self,
        read: std::result::Result<bool, SdkError<E, aws_sdk_s3::config::http::HttpResponse>>,
        unset_code: &str,
        permission: &str,
        fix: String,
        op: &'static str,
    ) -> Result<CheckStatus>
    where
        E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    {
        match read {
            Ok(true) => Ok(CheckStatus::Passed),
            Ok(false) => Ok(CheckStatus::failed(fix)),
            Err(e) => match e.code() {
                Some(code) if code == unset_code => Ok(CheckStatus::failed(fix)),
                Some("AccessDenied" | "Forbidden") => Ok(CheckStatus::unknown(permission)),
                _ => Err(self.error(self.failure(e), op, &self.bucket)),
            },
        }
    }

    /// Whether the bucket's versioning is enabled (`GetBucketVersioning`).
    async fn versioning_enabled(&self) -> Result<bool> {
        let enabled = match self
            .located()
            .await?
            .client
            .get_bucket_versioning()
            .bucket(&self.bucket)
            .send()
            .await
        {
            Ok(out) => out.status() == Some(&BucketVersioningStatus::Enabled),
            Err(e) => {
                // moto answers a never-versioned bucket with an empty
                // `GetBucketVersioningResponse` element the SDK cannot
                // decode; a 200 without `<Status>Enabled</Status>` means off.
                let raw_ok = e.raw_response().and_then(|r| {
                    (r.status().as_u16() == 200)
                        .then(|| r.body().bytes().map(|b| b.to_vec()))
                        .flatten()
                });
                match raw_ok {
                    Some(body) => {
                        String::from_utf8_lossy(&body).contains("<Status>Enabled</Status>")
                    }
                    None => {
                        return Err(self.error(
                            self.failure(e),
                            "get bucket versioning",
                            &self.bucket,
                        ));
                    }
                }
            }
        };
        Ok(enabled)
    }
}

/// `hex` (32 hexadecimal digits, as an S3 ETag of a one-part upload) as an MD5 digest.
fn md5_from_hex(hex: &str) -> Option<[u8; 16]> {
    let hex = hex.trim_matches('"');
    if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use aws_credential_types::provider::{self, ProvideCredentials};

    use super::*;

    fn f(code: Option<&str>, status: Option<u16>) -> Failure {
        Failure {
            code: code.map(str::to_string),
            status,
            source: Source::Sdk("x".into()),
        }
    }

    #[test]
    fn classifies_errors_by_code_and_status() {
        let store = S3Store::new(
            "b",
            &S3Config::default().with_static_credentials("AK", "SK", None),
        );
        let e = |code, status| f(code, status).into_error(&store, "get", "k");
        assert!(matches!(
            e(Some("NoSuchKey"), Some(404)),
            Error::NotFound { .. }
        ));
        assert!(matches!(
            e(Some("NoSuchBucket"), Some(404)),
            Error::BucketNotFound { bucket, url } if bucket == "b" && url == "s3://b"
        ));
        let rejected = CredentialsError::classify(
            "S3",
            "access key AK",
            Some("InvalidAccessKeyId"),
            std::io::Error::other("403"),
        )
        .map_err(|_| "not a credentials error")
        .unwrap();
        let unauthenticated = Failure {
            code: Some("InvalidAccessKeyId".into()),
            status: Some(403),
            source: Source::Credentials(rejected),
        }
        .into_error(&store, "get", "k");
        assert!(
            matches!(&unauthenticated, Error::Unauthenticated { service: "S3", reason, .. }
                if reason.starts_with("S3 state store s3://b: S3 rejected the credentials of access key AK (InvalidAccessKeyId)")),
            "{unauthenticated:?}"
        );
        assert!(matches!(
            e(Some("AccessDenied"), Some(403)),
            Error::PermissionDenied { .. }
        ));
        assert!(matches!(
            e(Some("SlowDown"), Some(503)),
            Error::Throttled { .. }
        ));
        assert!(matches!(e(None, Some(429)), Error::Throttled { .. }));
        assert!(matches!(
            e(Some("InternalError"), Some(500)),
            Error::Backend { .. }
        ));
        assert!(f(Some("PreconditionFailed"), Some(412)).is_precondition());
        assert!(f(Some("ConditionalRequestConflict"), Some(409)).is_precondition());
        assert!(f(None, Some(412)).is_precondition());
        assert!(!f(Some("NoSuchKey"), Some(404)).is_precondition());
    }

    /// kOps' reading of `GetBucketLocation`: no constraint is us-east-1, `EU` eu-west-1.
    #[test]
    fn location_constraints_name_regions() {
        assert_eq!(location_region(None), "us-east-1");
        assert_eq!(location_region(Some("")), "us-east-1");
        assert_eq!(location_region(Some("EU")), "eu-west-1");
        assert_eq!(location_region(Some("eu-central-1")), "eu-central-1");
    }

    /// `HeadBucket`'s failure from another region (a 301) still names the bucket's.
    #[test]
    fn head_bucket_redirect_names_the_region() {
        use aws_sdk_s3::config::http::HttpResponse;
        use aws_sdk_s3::primitives::SdkBody;
        let mut moved = HttpResponse::new(301u16.try_into().unwrap(), SdkBody::empty());
        moved
            .headers_mut()
            .insert("x-amz-bucket-region", "ap-southeast-2");
        assert_eq!(
            bucket_region_header(&moved).as_deref(),
            Some("ap-southeast-2")
        );
        let bare = HttpResponse::new(403u16.try_into().unwrap(), SdkBody::empty());
        assert_eq!(bucket_region_header(&bare), None);
    }

    /// A configured region is the bucket's: known at once, nothing probed. Without one
    /// the region is unknown until the store's first use.
    #[test]
    fn a_configured_region_is_not_probed() {
        let keys = S3Config::default().with_static_credentials("AK", "SK", None);
        let s = S3Store::new("b", &keys.clone().with_region("eu-north-1"));
        assert_eq!(s.region().as_deref(), Some("eu-north-1"));
        assert_eq!(S3Store::new("b", &keys).region(), None);
    }

    /// A loopback S3 answering every request with a `GetBucketLocation` body naming
    /// eu-central-1 (and an ETag, so a get succeeds); it records each request's line and
    /// `Authorization` header.
    async fn located_in_frankfurt() -> (String, Arc<std::sync::Mutex<Vec<(String, String)>>>) {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = seen.clone();
        tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                let log = log.clone();
                tokio::spawn(async move {
                    let mut r = BufReader::new(conn);
                    let (mut line, mut auth, mut h) = (String::new(), String::new(), String::new());
                    r.read_line(&mut line).await.unwrap();
                    while r.read_line(&mut h).await.unwrap() > 0 && h != "\r\n" {
                        if h.to_ascii_lowercase().starts_with("authorization:") {
                            auth = h.clone();
                        }
                        h.clear();
                    }
                    log.lock().unwrap().push((line, auth));
                    let body = r#"<?xml version="1.0" encoding="UTF-8"?><LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/">eu-central-1</LocationConstraint>"#;
                    let resp = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nETag: \"e\"\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = r.get_mut().write_all(resp.as_bytes()).await;
                });
            }
        });
        (url, seen)
    }

    /// Concurrent first uses of a store (and its clones) wait for one probe, asked from
    /// the environment's region; every request then goes to the bucket's region.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_bucket_region_is_probed_once() {
        let (url, seen) = located_in_frankfurt().await;
        let store = S3Store::new(
            "b",
            &S3Config::default()
                .with_endpoint(url)
                .with_force_path_style(true)
                .with_static_credentials("AK", "SK", None),
        );
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..8 {
            let s = store.clone();
            tasks.spawn(async move { s.get(&format!("k{i}")).await.map(|_| ()) });
        }
        while let Some(r) = tasks.join_next().await {
            r.unwrap().unwrap();
        }
        assert_eq!(store.region().as_deref(), Some("eu-central-1"));
        let seen = seen.lock().unwrap().clone();
        let (probes, requests): (Vec<_>, Vec<_>) =
            seen.iter().partition(|(line, _)| line.contains("location"));
        assert_eq!(probes.len(), 1, "{seen:?}");
        assert!(probes[0].1.contains("/us-east-1/s3/"), "{probes:?}");
        assert_eq!(requests.len(), 8, "{seen:?}");
        for (line, auth) in requests {
            assert!(auth.contains("/eu-central-1/s3/"), "{line} signed {auth}");
        }
    }

    /// For `S3_ENDPOINT`'s static-key mode, which must not load the SDK's environment.
    async fn no_aws_env() -> AwsEnv {
        panic!("the SDK's environment is loaded for an S3_ENDPOINT store")
    }

    #[tokio::test]
    async fn s3_endpoint_means_kops_compatible_store() {
        let vars = crate::aws::lookup;
        let c = S3Config::from_vars(
            vars(&[
                ("S3_ENDPOINT", "http://minio.local:9000"),
                ("S3_ACCESS_KEY_ID", "AK"),
                ("S3_SECRET_ACCESS_KEY", "SK"),
            ]),
            no_aws_env,
        )
        .await
        .unwrap();
        assert_eq!(c.endpoint.as_deref(), Some("http://minio.local:9000"));
        assert!(c.force_path_style);
        assert_eq!(c.region.as_deref(), Some("us-east-1"));
        assert_eq!(
            c.keys.as_ref().map(|k| k.access_key_id.as_str()),
            Some("AK")
        );
        assert!(c.sdk.is_none(), "the SDK chain is not consulted");
        assert!(
            c.origin
                .as_deref()
                .is_some_and(|o| o.contains("S3_ACCESS_KEY_ID"))
        );
        let c = S3Config::from_vars(
            vars(&[
                ("S3_ENDPOINT", "http://minio.local:9000"),
                ("S3_REGION", "eu-central-1"),
                ("S3_ACCESS_KEY_ID", "AK"),
                ("S3_SECRET_ACCESS_KEY", "SK"),
            ]),
            no_aws_env,
        )
        .await
        .unwrap();
        assert_eq!(c.region.as_deref(), Some("eu-central-1"));
        for (missing, vars) in [
            (
                "S3_ACCESS_KEY_ID",
                vars(&[("S3_ENDPOINT", "http://m"), ("S3_SECRET_ACCESS_KEY", "SK")]),
            ),
            (
                "S3_SECRET_ACCESS_KEY",
                vars(&[
                    ("S3_ENDPOINT", "http://m"),
                    ("S3_ACCESS_KEY_ID", "AK"),
                    ("S3_SECRET_ACCESS_KEY", ""),
                ]),
            ),
        ] {
            let e = S3Config::from_vars(vars, no_aws_env).await.unwrap_err();
            assert!(
                matches!(&e, Error::Unauthenticated { service: "S3", .. }),
                "{e:?}"
            );
            assert!(e.to_string().contains(&format!("{missing} is not")), "{e}");
        }
    }

    #[test]
    fn debug_hides_secrets() {
        let c = S3Config::default().with_static_credentials(
            "AKIDEXAMPLE",
            "wJalrXUtnFEMI/K7MDENG",
            Some("session-token-value".into()),
        );
        let d = format!("{c:?}");
        assert!(d.contains("AKIDEXAMPLE"));
        assert!(
            !d.contains("wJalrXUtnFEMI") && !d.contains("session-token-value"),
            "{d}"
        );
    }

    /// A credentials provider counting how often it is asked.
    #[derive(Debug, Clone, Default)]
    struct Counting(Arc<AtomicUsize>);

    impl ProvideCredentials for Counting {
        fn provide_credentials<'a>(&'a self) -> provider::future::ProvideCredentials<'a>
        where
            Self: 'a,
        {
            self.0.fetch_add(1, Ordering::SeqCst);
            provider::future::ProvideCredentials::ready(Ok(aws_credential_types::Credentials::new(
                "AK", "SK", None, None, "counting",
            )))
        }
    }

    /// The SDK's defaults with `provider`, sending to a closed loopback port (a request
    /// resolves and signs with its credentials before it connects) without retries.
    async fn sdk_with(provider: &Counting) -> aws_config::SdkConfig {
        aws_config::defaults(aws_config::BehaviorVersion::latest())
            .credentials_provider(provider.clone())
            .region(aws_config::Region::new("eu-west-1"))
            .endpoint_url("http://127.0.0.1:9")
            .retry_config(aws_config::retry::RetryConfig::disabled())
            .load()
            .await
    }

    /// Stores configured from one loaded environment (one in another region, one through
    /// `from_env_sharing`) ask its credentials provider once: they share its identity
    /// cache. Stores from two loaded environments ask once each.
    #[tokio::test]
    async fn stores_from_one_aws_env_fetch_credentials_once() {
        let provider = Counting::default();
        let env = AwsEnv::from_sdk(sdk_with(&provider).await, "a test provider");
        let shared = S3Config::from_vars(crate::aws::lookup(&[]), || async { env.clone() })
            .await
            .unwrap();
        let stores = [
            S3Store::new("a", &S3Config::default().with_aws_env(&env)),
            S3Store::new(
                "b",
                &S3Config::default()
                    .with_aws_env(&env.clone())
                    .with_region("us-west-2"),
            ),
            S3Store::new("c", &shared),
        ];
        for s in &stores {
            assert!(s.get("k").await.is_err(), "nothing listens on the endpoint");
        }
        assert_eq!(provider.0.load(Ordering::SeqCst), 1);
        assert_eq!(stores[2].origin, "a test provider");

        let other = AwsEnv::from_sdk(sdk_with(&provider).await, "a test provider");
        let _ = S3Store::new("d", &S3Config::default().with_aws_env(&other))
            .get("k")
            .await;
        assert_eq!(provider.0.load(Ordering::SeqCst), 2);
    }
}
