//! Google Cloud Storage backend (`gs://bucket/prefix`), over the GCS JSON API.
//!
//! Why plain HTTP (reqwest with rustls) and not an SDK: the official
//! `google-cloud-storage` crate cannot read from the local GCS emulator (it
//! insists on an `x-goog-generation` response header the emulator does not
//! send) and lists over gRPC, which the emulator lacks; the JSON API is small,
//! stable, works against both, and keeps the dependency tree light.
//!
//! Versions are object generations. Conditional writes send
//! `ifGenerationMatch=0` (create-if-absent) or `ifGenerationMatch=<gen>`
//! (update-if-version-matches); GCS answers 412 when they do not hold.
//!
//! A read needs the generation of exactly the bytes returned. GCS sends it in
//! `x-goog-generation`; when a server does not (the emulator), the backend
//! reads the metadata first and then the media with `ifGenerationMatch`,
//! so the bytes can never be older than the version reported.
//!
//! Testing: gcp-storage-emulator ignores `ifGenerationMatch` on uploads
//! (a second create succeeds, a stale generation is accepted), so the
//! conditional half of the conformance suite cannot be shown against it;
//! the crate's tests run it against an in-process fake of the JSON API
//! that enforces preconditions as GCS documents them, and run everything
//! else against the emulator.
//!
//! Authentication: requests carry a bearer token from a [`GcsTokenSource`]:
//! [`GoogleCredentials`] (application-default credentials, a service-account
//! key or `gcloud auth application-default login` file, the metadata server;
//! through Google's `google-cloud-auth` crate), a fixed [`StaticToken`], the
//! GCE metadata server alone ([`MetadataServerToken`]), or the caller's own
//! source; without one they are sent unauthenticated, as an emulator accepts.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use async_trait::async_trait;
use bytes::Bytes;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde::Deserialize;

use crate::error::{Error, Result};
use crate::store::{
    CheckStatus, DeleteOptions, GetResult, ObjectMeta, PutMode, PutOptions, SafetyCheck, Store,
    Version, Warning, validate_path, validate_prefix,
};

/// Characters left as they are in a path segment: RFC 3986 unreserved.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

const DEFAULT_ENDPOINT: &str = "https://storage.googleapis.com";

/// Supplies OAuth2 bearer tokens for GCS requests.
#[async_trait]
pub trait GcsTokenSource: Send + Sync + fmt::Debug + 'static {
    /// A currently valid access token.
    async fn token(&self) -> Result<String>;

    /// Where the tokens come from, for error messages (a file, the metadata
    /// server); never the token itself.
    fn origin(&self) -> String {
        "the configured token source".to_string()
    }
}

/// The OAuth scope of the tokens [`GoogleCredentials::from_env`] asks for.
pub const STORAGE_SCOPE: &str = "https://www.googleapis.com/auth/devstorage.read_write";

/// The OAuth scope of every Google Cloud API, storage included: credentials shared by a
/// `gs://` store and other Google clients ask for it
/// ([`GoogleCredentials::from_env_with_scopes`]).
pub const CLOUD_PLATFORM_SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

/// Reads of metadata then media, when the server sends no generation header,
/// before a get gives up on an object that keeps changing in between.
const GET_ATTEMPTS: u32 = 12;
/// The first pause between those attempts is up to this many milliseconds,
/// doubling each attempt up to [`GET_BACKOFF_MAX_MS`].
const GET_BACKOFF_START_MS: u64 = 2;
const GET_BACKOFF_MAX_MS: u64 = 100;

/// Google credentials through `google-cloud-auth`: a service-account key
/// (self-signed JWTs), an `authorized_user` file as written by `gcloud auth
/// application-default login` (refresh-token exchange at the file's
/// `token_uri`), or the metadata server. Tokens are cached and refreshed by
/// the crate; `Debug` never shows a secret.
#[derive(Clone)]
pub struct GoogleCredentials {
    inner: google_cloud_auth::credentials::AccessTokenCredentials,
    origin: String,
}

impl fmt::Debug for GoogleCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GoogleCredentials")
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

/// `e` in one line: its root cause when it has one (google-cloud-auth's outer
/// layers repeat each other), else its own message.
fn one_line(e: &dyn std::error::Error) -> String {
    let mut root = e;
    while let Some(s) = root.source() {
        root = s;
    }
    root.to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

impl GoogleCredentials {
    /// Application-default credentials, found as Google's client libraries
    /// find them: the file named by `GOOGLE_APPLICATION_CREDENTIALS`, else
    /// gcloud's `application_default_credentials.json` (under
    /// `$HOME/.config/gcloud`), else the metadata server (`GCE_METADATA_HOST`
    /// overrides its address). Tokens carry the storage scope.
    ///
    /// The credentials start fetching their first token when built (google-cloud-auth
    /// refreshes in the background): build them only when a request will need one, and
    /// once per process when several clients need one
    /// ([`GcsConfig::from_env_sharing`]).
    pub fn from_env() -> Result<Self> {
        Self::from_env_with_scopes([STORAGE_SCOPE])
    }

    /// [`GoogleCredentials::from_env`] with tokens for `scopes` (for example
    /// [`CLOUD_PLATFORM_SCOPE`], which covers storage, when the same credentials serve
    /// other Google APIs too).
    pub fn from_env_with_scopes<I, S>(scopes: I) -> Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let origin = match std::env::var_os("GOOGLE_APPLICATION_CREDENTIALS") {
            Some(p) => format!(
                "GOOGLE_APPLICATION_CREDENTIALS={}",
                std::path::Path::new(&p).display()
            ),
            None => {
                let well_known = std::env::var_os("HOME").map(|h| {
                    std::path::Path::new(&h)
                        .join(".config/gcloud/application_default_credentials.json")
                });
                match well_known {
                    Some(p) if p.is_file() => format!("gcloud's ADC file {}", p.display()),
                    _ => "the GCE metadata server (no GOOGLE_APPLICATION_CREDENTIALS, no gcloud ADC file)".to_string(),
                }
            }
        };
        let inner = google_cloud_auth::credentials::Builder::default()
            .with_scopes(scopes)
            .build_access_token_credentials()
            .map_err(|e| Error::Unauthenticated {
                service: "GCS",
                reason: format!(
                    "GCS: cannot load Google credentials from {origin}: {}",
                    one_line(&e)
                ),
                source: Some(Box::new(e)),
            })?;
        Ok(GoogleCredentials { inner, origin })
    }

    /// Credentials from the JSON of a service-account key file or an
    /// `authorized_user` file; `origin` names it in error messages. Reads
    /// nothing from the environment. Tokens carry the storage scope.
    pub fn from_json(json: &[u8], origin: impl Into<String>) -> Result<Self> {
        Self::from_json_with_scopes(json, origin, [STORAGE_SCOPE])
    }

    /// [`GoogleCredentials::from_json`] with tokens for `scopes` (for example
    /// [`CLOUD_PLATFORM_SCOPE`], when the same key serves other Google APIs too).
    pub fn from_json_with_scopes<I, S>(
        json: &[u8],
        origin: impl Into<String>,
        scopes: I,
    ) -> Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let scopes: Vec<String> = scopes.into_iter().map(Into::into).collect();
        let origin = origin.into();
        let invalid = |reason: String| Error::Invalid {
            what: origin.clone(),
            reason,
        };
        let value: serde_json::Value = serde_json::from_slice(json)
            .map_err(|e| invalid(format!("not a Google credentials JSON file: {e}")))?;
        let kind = value
            .get("type")
            .and_then(|t| t.as_str())
            .unwrap_or_default()
            .to_string();
        use google_cloud_auth::credentials::{service_account, user_account};
        let built = match kind.as_str() {
            "service_account" => service_account::Builder::new(value)
                .with_access_specifier(service_account::AccessSpecifier::from_scopes(scopes))
                .build_access_token_credentials(),
            "authorized_user" => user_account::Builder::new(value)
                .with_scopes(scopes)
                .build_access_token_credentials(),
            other => {
                return Err(invalid(format!(
                    "type {other:?}: expected \"service_account\" or \"authorized_user\""
                )));
            }
        };
        let inner = built.map_err(|e| invalid(one_line(&e)))?;
        Ok(GoogleCredentials { inner, origin })
    }

    /// [`GoogleCredentials::from_json`] of a file.
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Self> {
        let path = path.as_ref();
        let data = std::fs::read(path).map_err(|e| Error::Invalid {
            what: path.display().to_string(),
            reason: format!("cannot read the credentials file: {e}"),
        })?;
        Self::from_json(&data, path.display().to_string())
    }
}

#[async_trait]
impl GcsTokenSource for GoogleCredentials {
    async fn token(&self) -> Result<String> {
        match self.inner.access_token().await {
            Ok(t) => Ok(t.token),
            Err(e) => Err(Error::Unauthenticated {
                service: "GCS",
                reason: format!(
                    "GCS: no access token from {}: {}",
                    self.origin,
                    one_line(&e)
                ),
                source: Some(Box::new(e)),
            }),
        }
    }

    fn origin(&self) -> String {
        self.origin.clone()
    }
}

/// A fixed access token (for example from `gcloud auth print-access-token`).
/// Never shown by `Debug`.
#[derive(Clone)]
pub struct StaticToken(String);

impl StaticToken {
    /// Wraps a token.
    pub fn new(token: impl Into<String>) -> Self {
        StaticToken(token.into())
    }
}

impl fmt::Debug for StaticToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StaticToken(<redacted>)")
    }
}

#[async_trait]
impl GcsTokenSource for StaticToken {
    async fn token(&self) -> Result<String> {
        Ok(self.0.clone())
    }
}

/// Tokens from the GCE metadata server (the VM's service account), cached
/// until a minute before they expire. `Debug` never shows the token.
pub struct MetadataServerToken {
    http: reqwest::Client,
    endpoint: String,
    clock: Arc<dyn crate::lock::Clock>,
    cached: tokio::sync::Mutex<Option<(String, std::time::SystemTime)>>,
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    expires_in: u64,
}

impl MetadataServerToken {
    /// A source asking `endpoint` (normally `http://metadata.google.internal`),
    /// timing expiry with `clock`.
    pub fn new(endpoint: impl Into<String>, clock: Arc<dyn crate::lock::Clock>) -> Result<Self> {
        Ok(MetadataServerToken {
            http: reqwest::Client::builder()
                .build()
                .map_err(|e| Error::backend("gcs", "build client", "", e))?,
            endpoint: endpoint.into().trim_end_matches('/').to_string(),
            clock,
            cached: tokio::sync::Mutex::new(None),
        })
    }
}

impl fmt::Debug for MetadataServerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetadataServerToken")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for TokenResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenResponse(<redacted>)")
    }
}

#[async_trait]
impl GcsTokenSource for MetadataServerToken {
    async fn token(&self) -> Result<String> {
        let mut cached = self.cached.lock().await;
        let now = self.clock.now();
        if let Some((token, expiry)) = cached.as_ref()
            && now < *expiry
        {
            return Ok(token.clone());
        }
        const PATH: &str = "/computeMetadata/v1/instance/service-accounts/default/token";
        let resp = self
            .http
            .get(format!("{}{PATH}", self.endpoint))
            .header("Metadata-Flavor", "Google")
            .send()
            .await
            .map_err(|e| Error::backend("gcs", "fetch token", PATH, e))?;
        if !resp.status().is_success() {
            return Err(GcsStore::status_error(resp, "fetch token", PATH).await);
        }
        let t: TokenResponse = GcsStore::json(resp, "fetch token", PATH).await?;
        let expiry = now + std::time::Duration::from_secs(t.expires_in.saturating_sub(60));
        *cached = Some((t.access_token.clone(), expiry));
        Ok(t.access_token)
    }
}

/// How to reach GCS: endpoint and token source.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct GcsConfig {
    endpoint: Option<String>,
    token: Option<Arc<dyn GcsTokenSource>>,
}

impl GcsConfig {
    /// Reads `STORAGE_EMULATOR_HOST` (an emulator's address: requests go
    /// there unauthenticated, as Google's client libraries send them) and
    /// `GOOGLE_OAUTH_ACCESS_TOKEN` (a fixed token); without either, the
    /// application-default credentials ([`GoogleCredentials::from_env`]).
    pub fn from_env() -> Result<Self> {
        Self::from_env_sharing(|| Ok(Arc::new(GoogleCredentials::from_env()?)))
    }

    /// [`GcsConfig::from_env`], with the application-default credentials from `google`,
    /// which is called only when they are needed (neither `STORAGE_EMULATOR_HOST` nor
    /// `GOOGLE_OAUTH_ACCESS_TOKEN` is set): give it one that hands out the credentials
    /// the caller's other Google clients use (built at most once, with a scope covering
    /// storage such as [`CLOUD_PLATFORM_SCOPE`]), and a token is fetched once for all of
    /// them.
    pub fn from_env_sharing<F>(google: F) -> Result<Self>
    where
        F: FnOnce() -> Result<Arc<dyn GcsTokenSource>>,
    {
        let mut c = GcsConfig::default();
        if let Ok(host) = std::env::var("STORAGE_EMULATOR_HOST") {
            let host = if host.starts_with("http://") || host.starts_with("https://") {
                host
            } else {
                format!("http://{host}")
            };
            c = c.with_endpoint(host);
        }
        if let Ok(t) = std::env::var("GOOGLE_OAUTH_ACCESS_TOKEN") {
            c = c.with_token_source(Arc::new(StaticToken::new(t)));
        } else if c.endpoint.is_none() {
            c = c.with_token_source(google()?);
        }
        Ok(c)
    }

    /// Sends requests to `endpoint` (default `https://storage.googleapis.com`).
    pub fn with_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into().trim_end_matches('/').to_string());
        self
    }

    /// Authenticates requests with tokens from `source`.
    pub fn with_token_source(mut self, source: Arc<dyn GcsTokenSource>) -> Self {
        self.token = Some(source);
        self
    }
}

const HEADER_UNKNOWN: u8 = 0;
const HEADER_SENT: u8 = 1;
const HEADER_MISSING: u8 = 2;

/// A GCS bucket as a [`Store`]. Wrap it in a
/// [`PrefixStore`](crate::PrefixStore) for a key prefix.
#[derive(Debug)]
pub struct GcsStore {
    http: reqwest::Client,
    endpoint: String,
    bucket: String,
    token: Option<Arc<dyn GcsTokenSource>>,
    /// Whether the server sends `x-goog-generation` with media downloads.
    generation_header: AtomicU8,
    /// The bucket is known to exist.
    bucket_seen: AtomicBool,
}

#[derive(Deserialize)]
struct ObjectResource {
    name: String,
    generation: String,
    #[serde(default)]
    size: Option<String>,
    /// Base64 of the content's MD5 (absent for composite objects).
    #[serde(default, rename = "md5Hash")]
    md5_hash: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ObjectList {
    #[serde(default)]
    items: Vec<ObjectResource>,
    next_page_token: Option<String>,
}

#[derive(Deserialize)]
struct BucketResource {
    #[serde(default)]
    versioning: Option<Versioning>,
    #[serde(default, rename = "iamConfiguration")]
    iam_configuration: Option<IamConfiguration>,
}

#[derive(Deserialize)]
struct IamConfiguration {
    #[serde(default, rename = "uniformBucketLevelAccess")]
    uniform_bucket_level_access: Option<Versioning>,
}

#[derive(Deserialize)]
struct Versioning {
    #[serde(default)]
    enabled: bool,
}

/// An HTTP error status with the start of its body.
#[derive(Debug, thiserror::Error)]
#[error("HTTP {status}: {body}")]
struct HttpStatus {
    status: u16,
    body: String,
}

impl GcsStore {
    /// A store over `bucket`, reached as `config` says.
    pub fn new(bucket: impl Into<String>, config: &GcsConfig) -> Result<Self> {
        let http = reqwest::Client::builder()
            .build()
            .map_err(|e| Error::backend("gcs", "build client", "", e))?;
        Ok(GcsStore {
            http,
            endpoint: config
                .endpoint
                .clone()
                .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string()),
            bucket: bucket.into(),
            token: config.token.clone(),
            generation_header: AtomicU8::new(HEADER_UNKNOWN),
            bucket_seen: AtomicBool::new(false),
        })
    }

    /// The bucket name.
    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    fn object_url(&self, path: &str) -> String {
        format!(
            "{}/storage/v1/b/{}/o/{}",
            self.endpoint,
            utf8_percent_encode(&self.bucket, SEGMENT),
            utf8_percent_encode(path, SEGMENT)
        )
    }

    async fn request(
        &self,
        method: Method,
        url: &str,
        op: &'static str,
        path: &str,
    ) -> Result<RequestBuilder> {
        let mut rb = self.http.request(method, url);
        if let Some(t) = &self.token {
            let token = t.token().await.map_err(|e| match e {
                e @ Error::Unauthenticated { .. } => e,
                e => Error::backend("gcs", op, path, e),
            })?;
            rb = rb.bearer_auth(token);
        }
        Ok(rb)
    }

    async fn send(&self, rb: RequestBuilder, op: &'static str, path: &str) -> Result<Response> {
        rb.send()
            .await
            .map_err(|e| Error::backend("gcs", op, path, e))
    }

    /// Maps an unexpected status of a request about this store: a missing
    /// bucket and rejected credentials are told apart from a missing object
    /// and a denied one.
    async fn fail(&self, resp: Response, op: &'static str, path: &str) -> Error {
        let status = resp.status();
        match (status, Self::status_error(resp, op, path).await) {
            (StatusCode::NOT_FOUND, Error::NotFound { .. }) => self.missing(path).await,
            (StatusCode::UNAUTHORIZED, Error::PermissionDenied { source, .. }) => {
                Error::Unauthenticated {
                    service: "GCS",
                    reason: format!(
                        "GCS state store {}: GCS rejected the credentials from {} (HTTP 401)",
                        self.url(),
                        self.token
                            .as_ref()
                            .map(|t| t.origin())
                            .unwrap_or_else(|| "no credentials (unauthenticated requests)".into())
                    ),
                    source: Some(source),
                }
            }
            (_, e) => e,
        }
    }

    /// The error for a 404 on `path`: [`Error::BucketNotFound`] when the
    /// bucket itself is missing (asked once, then remembered), else
    /// [`Error::NotFound`].
    async fn missing(&self, path: &str) -> Error {
        let not_found = Error::NotFound {
            path: path.to_string(),
        };
        if self.bucket_seen.load(Ordering::Relaxed) {
            return not_found;
        }
        let url = format!(
            "{}/storage/v1/b/{}",
            self.endpoint,
            utf8_percent_encode(&self.bucket, SEGMENT)
        );
        let Ok(rb) = self
            .request(Method::GET, &url, "get bucket", &self.bucket)
            .await
        else {
            return not_found;
        };
        match self.send(rb, "get bucket", &self.bucket).await {
            Ok(r) if r.status() == StatusCode::NOT_FOUND => Error::BucketNotFound {
                bucket: self.bucket.clone(),
                url: self.url(),
            },
            Ok(r) if r.status().is_success() => {
                self.bucket_seen.store(true, Ordering::Relaxed);
                not_found
            }
            _ => not_found,
        }
    }

    /// Maps an unexpected status to an error.
    async fn status_error(resp: Response, op: &'static str, path: &str) -> Error {
        let status = resp.status();
        let mut body = resp.text().await.unwrap_or_default();
        body.truncate(300);
        let source = HttpStatus {
            status: status.as_u16(),
            body,
        };
        match status {
            StatusCode::NOT_FOUND => Error::NotFound {
                path: path.to_string(),
            },
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Error::PermissionDenied {
                operation: op,
                path: path.to_string(),
                source: source.into(),
            },
            StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE => Error::Throttled {
                operation: op,
                path: path.to_string(),
                source: source.into(),
            },
            _ => Error::backend("gcs", op, path, source),
        }
    }

    async fn json<T: for<'de> Deserialize<'de>>(
        resp: Response,
        op: &'static str,
        path: &str,
    ) -> Result<T> {
        let body = resp
            .bytes()
            .await
            .map_err(|e| Error::backend("gcs", op, path, e))?;
        serde_json::from_slice(&body).map_err(|e| Error::backend("gcs", op, path, e))
    }

    /// Downloads the media; `Some(generation)` when the server sent it.
    async fn media(
        &self,
        path: &str,
        if_generation: Option<&str>,
    ) -> Result<std::result::Result<(Bytes, Option<String>), StatusCode>> {
        let mut url = format!("{}?alt=media", self.object_url(path));
        if let Some(g) = if_generation {
            url.push_str("&ifGenerationMatch=");
            url.push_str(g);
        }
        let rb = self.request(Method::GET, &url, "get", path).await?;
        let resp = self.send(rb, "get", path).await?;
        match resp.status() {
            s if s.is_success() => {
                let generation = resp
                    .headers()
                    .get("x-goog-generation")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                let data = resp
                    .bytes()
                    .await
                    .map_err(|e| Error::backend("gcs", "get", path, e))?;
                Ok(Ok((data, generation)))
            }
            s @ (StatusCode::NOT_FOUND | StatusCode::PRECONDITION_FAILED) => Ok(Err(s)),
            _ => Err(self.fail(resp, "get", path).await),
        }
    }

    /// Creates the bucket in `project` (for tests and bootstrapping); an
    /// existing bucket is not an error.
    pub async fn create_bucket(&self, project: &str) -> Result<()> {
        let url = format!(
            "{}/storage/v1/b?project={}",
            self.endpoint,
            utf8_percent_encode(project, SEGMENT)
        );
        let rb = self
            .request(Method::POST, &url, "create bucket", &self.bucket)
            .await?
            .json(&serde_json::json!({ "name": self.bucket }));
        let resp = self.send(rb, "create bucket", &self.bucket).await?;
        if resp.status().is_success() || resp.status() == StatusCode::CONFLICT {
            Ok(())
        } else {
            Err(self.fail(resp, "create bucket", &self.bucket).await)
        }
    }
}

#[async_trait]
impl Store for GcsStore {
    async fn get(&self, path: &str) -> Result<GetResult> {
        validate_path(path)?;
        if self.generation_header.load(Ordering::Relaxed) != HEADER_MISSING {
            match self.media(path, None).await? {
                Ok((data, Some(generation))) => {
                    self.generation_header.store(HEADER_SENT, Ordering::Relaxed);
                    return Ok(GetResult {
                        data,
                        version: Version::new(generation),
                    });
                }
                Ok((_, None)) => self
                    .generation_header
                    .store(HEADER_MISSING, Ordering::Relaxed),
                Err(_) => return Err(self.missing(path).await),
            }
        }
        // Metadata first, then the media of that generation: the bytes are
        // never older than the version returned. A writer that keeps
        // replacing the object between the two reads is waited out with a
        // jittered, growing pause, so two readers do not collide in step.
        for attempt in 0..GET_ATTEMPTS {
            if attempt > 0 {
                let cap = GET_BACKOFF_START_MS << (attempt - 1).min(6);
                let pause = rand::random::<u64>() % cap.min(GET_BACKOFF_MAX_MS) + 1;
                tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
            }
            let url = self.object_url(path);
            let rb = self.request(Method::GET, &url, "get", path).await?;
            let resp = self.send(rb, "get", path).await?;
            if !resp.status().is_success() {
                return Err(self.fail(resp, "get", path).await);
            }
            let meta: ObjectResource = Self::json(resp, "get", path).await?;
            match self.media(path, Some(&meta.generation)).await? {
                Ok((data, _)) => {
                    return Ok(GetResult {
                        data,
                        version: Version::new(meta.generation),
                    });
                }
                Err(StatusCode::PRECONDITION_FAILED) => continue, // changed in between
                Err(_) => return Err(self.missing(path).await),
            }
        }
        Err(Error::backend(
            "gcs",
            "get",
            path,
            format!(
                "object kept changing between metadata and media reads ({GET_ATTEMPTS} attempts)"
            ),
        ))
    }

    async fn put(&self, path: &str, data: Bytes, options: PutOptions) -> Result<Version> {
        validate_path(path)?;
        // An empty body goes as a multipart upload: gcp-storage-emulator
        // fails on empty media uploads; GCS takes either.
        let multipart = data.is_empty();
        let mut url = format!(
            "{}/upload/storage/v1/b/{}/o?uploadType={}&name={}",
            self.endpoint,
            utf8_percent_encode(&self.bucket, SEGMENT),
            if multipart { "multipart" } else { "media" },
            utf8_percent_encode(path, SEGMENT)
        );
        match &options.mode {
            PutMode::Overwrite => {}
            PutMode::CreateIfAbsent => url.push_str("&ifGenerationMatch=0"),
            PutMode::UpdateIfVersionMatches(v) => {
                url.push_str("&ifGenerationMatch=");
                url.push_str(&utf8_percent_encode(v.as_str(), SEGMENT).to_string());
            }
        }
        let rb = self.request(Method::POST, &url, "put", path).await?;
        let rb = if multipart {
            let boundary = format!("kops{:032x}", rand::random::<u128>());
            let meta = serde_json::json!({ "name": path }).to_string();
            let body = format!(
                "--{boundary}\r\ncontent-type: application/json; charset=UTF-8\r\n\r\n{meta}\r\n\
                 --{boundary}\r\ncontent-type: application/octet-stream\r\n\r\n\r\n--{boundary}--\r\n"
            );
            rb.header(
                "content-type",
                format!("multipart/related; boundary={boundary}"),
            )
            .body(body)
        } else {
            rb.header("content-type", "application/octet-stream")
                .body(data)
        };
        let resp = self.send(rb, "put", path).await?;
        if resp.status() == StatusCode::PRECONDITION_FAILED {
            return Err(match options.mode {
                PutMode::UpdateIfVersionMatches(v) => Error::Precondition {
                    path: path.to_string(),
                    expected: v.to_string(),
                },
                _ => Error::AlreadyExists {
                    path: path.to_string(),
                },
            });
        }
        if !resp.status().is_success() {
            return Err(self.fail(resp, "put", path).await);
        }
        let o: ObjectResource = Self::json(resp, "put", path).await?;
        Ok(Version::new(o.generation))
    }

    async fn delete_opts(&self, path: &str, options: DeleteOptions) -> Result<()> {
        validate_path(path)?;
        let mut url = self.object_url(path);
        if let Some(v) = &options.if_version {
            url.push_str("?ifGenerationMatch=");
            url.push_str(&utf8_percent_encode(v.as_str(), SEGMENT).to_string());
        }
        let rb = self.request(Method::DELETE, &url, "delete", path).await?;
        let resp = self.send(rb, "delete", path).await?;
        match (resp.status(), &options.if_version) {
            (s, _) if s.is_success() => Ok(()),
            (StatusCode::NOT_FOUND, None) => Ok(()),
            (StatusCode::NOT_FOUND | StatusCode::PRECONDITION_FAILED, Some(v)) => {
                Err(Error::Precondition {
                    path: path.to_string(),
                    expected: v.to_string(),
                })
            }
            _ => Err(self.fail(resp, "delete", path).await),
        }
    }

    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>> {
        validate_prefix(prefix)?;
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut url = format!(
                "{}/storage/v1/b/{}/o?prefix={}",
                self.endpoint,
                utf8_percent_encode(&self.bucket, SEGMENT),
                utf8_percent_encode(prefix, SEGMENT)
            );
            if let Some(t) = token.take() {
                url.push_str("&pageToken=");
                url.push_str(&utf8_percent_encode(&t, SEGMENT).to_string());
            }
            let rb = self.request(Method::GET, &url, "list", prefix).await?;
            let resp = self.send(rb, "list", prefix).await?;
            if !resp.status().is_success() {
                return Err(match self.fail(resp, "list", prefix).await {
                    Error::NotFound { path } => Error::backend(
                        "gcs",
                        "list",
                        path,
                        format!("bucket {} does not exist", self.bucket),
                    ),
                    other => other,
                });
            }
            let page: ObjectList = Self::json(resp, "list", prefix).await?;
            for o in page.items {
                // Emulators may not filter; filter here too.
                if o.name.starts_with(prefix) {
                    let size = o.size.and_then(|s| s.parse().ok()).unwrap_or(0);
                    let md5 = o.md5_hash.as_deref().and_then(|h| {
                        use base64::Engine as _;
                        let raw = base64::engine::general_purpose::STANDARD.decode(h).ok()?;
                        <[u8; 16]>::try_from(raw.as_slice()).ok()
                    });
                    let meta =
                        ObjectMeta::new(o.name, size).with_version(Version::new(o.generation));
                    out.push(match md5 {
                        Some(m) => meta.with_md5(m),
                        None => meta,
                    });
                }
            }
            match page.next_page_token {
                Some(t) if !t.is_empty() => token = Some(t),
                _ => break,
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    fn url(&self) -> String {
        format!("gs://{}", self.bucket)
    }

    async fn warnings(&self) -> Result<Vec<Warning>> {
        let b = self.bucket_resource().await?;
        if b.versioning.is_some_and(|v| v.enabled) {
            Ok(Vec::new())
        } else {
            Ok(vec![Warning::new(
                self.url(),
                "bucket object versioning is not enabled: an overwritten or deleted state file cannot be recovered; enable versioning on the bucket",
            )])
        }
    }

    async fn safety_checks(&self) -> Result<Vec<SafetyCheck>> {
        let bucket = &self.bucket;
        let b = match self.bucket_resource().await {
            Ok(b) => b,
            Err(Error::PermissionDenied { .. }) => {
                let unknown = || CheckStatus::unknown("storage.buckets.get");
                return Ok(vec![
                    SafetyCheck::new("versioning", unknown()),
                    SafetyCheck::new("uniform bucket-level access", unknown()),
                ]);
            }
            Err(e) => return Err(e),
        };
        let versioning = if b.versioning.is_some_and(|v| v.enabled) {
            CheckStatus::Passed
        } else {
            CheckStatus::failed(format!(
                "turn object versioning on: gcloud storage buckets update gs://{bucket} --versioning (or kops toolbox check-state-store --fix)"
            ))
        };
        let uniform = b
            .iam_configuration
            .and_then(|c| c.uniform_bucket_level_access)
            .is_some_and(|u| u.enabled);
        let uniform = if uniform {
            CheckStatus::Passed
        } else {
            CheckStatus::failed(format!(
                "turn uniform bucket-level access on: gcloud storage buckets update gs://{bucket} --uniform-bucket-level-access (or kops toolbox check-state-store --fix)"
            ))
        };
        // GCS encrypts every object at rest; there is nothing to turn on.
        Ok(vec![
            SafetyCheck::new("versioning", versioning),
            SafetyCheck::new("uniform bucket-level access", uniform),
        ])
    }

    async fn fix_safety(&self) -> Result<Vec<String>> {
        let mut patch = serde_json::Map::new();
        let mut changed = Vec::new();
        for check in self.safety_checks().await? {
            if !matches!(check.status, CheckStatus::Failed { .. }) {
                continue;
            }
            match check.name.as_str() {
                "versioning" => {
                    patch.insert("versioning".into(), serde_json::json!({"enabled": true}));
                    changed.push(format!("{}: turned object versioning on", self.url()));
                }
                "uniform bucket-level access" => {
                    patch.insert(
                        "iamConfiguration".into(),
                        serde_json::json!({"uniformBucketLevelAccess": {"enabled": true}}),
                    );
                    changed.push(format!(
                        "{}: turned uniform bucket-level access on",
                        self.url()
                    ));
                }
                _ => {}
            }
        }
        if patch.is_empty() {
            return Ok(changed);
        }
        let url = self.bucket_url();
        let rb = self
            .request(Method::PATCH, &url, "patch bucket", &self.bucket)
            .await?
            .json(&serde_json::Value::Object(patch));
        let resp = self.send(rb, "patch bucket", &self.bucket).await?;
        if !resp.status().is_success() {
            return Err(self.fail(resp, "patch bucket", &self.bucket).await);
        }
        Ok(changed)
    }
}

impl GcsStore {
    fn bucket_url(&self) -> String {
        format!(
            "{}/storage/v1/b/{}",
            self.endpoint,
            utf8_percent_encode(&self.bucket, SEGMENT)
        )
    }

    /// The bucket's metadata (`GET .../b/<bucket>`).
    async fn bucket_resource(&self) -> Result<BucketResource> {
        let url = self.bucket_url();
        let rb = self
            .request(Method::GET, &url, "get bucket", &self.bucket)
            .await?;
        let resp = self.send(rb, "get bucket", &self.bucket).await?;
        if !resp.status().is_success() {
            return Err(self.fail(resp, "get bucket", &self.bucket).await);
        }
        Self::json(resp, "get bucket", &self.bucket).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_object_names_as_one_segment() {
        let s = GcsStore::new("b", &GcsConfig::default().with_endpoint("http://h/")).unwrap();
        assert_eq!(
            s.object_url("c/with space/ü?#%"),
            "http://h/storage/v1/b/b/o/c%2Fwith%20space%2F%C3%BC%3F%23%25"
        );
    }

    #[test]
    fn debug_hides_tokens() {
        let c = GcsConfig::default().with_token_source(Arc::new(StaticToken::new("ya29.secret")));
        assert!(!format!("{c:?}").contains("ya29"));
    }
}
