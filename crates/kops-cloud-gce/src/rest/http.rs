//! The HTTP layer of the REST backend: bearer tokens, Google's JSON error shape mapped
//! to [`CloudError`], retries of throttling and backend errors, pagination and
//! Compute operations.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::Method;
use serde_json::{Value as Json, json};

use crate::cloud::{CloudError, CloudResult};

/// Supplies OAuth2 bearer tokens for the Google APIs.
#[async_trait]
pub trait TokenSource: Send + Sync + fmt::Debug + 'static {
    /// A currently valid access token.
    async fn token(&self) -> CloudResult<String>;
}

/// The OAuth scope the backend's tokens carry.
pub const CLOUD_PLATFORM_SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

/// Google credentials through `google-cloud-auth` (the crate `kops-statestore`'s GCS
/// backend uses): application-default credentials, a service-account key or the
/// metadata server. `Debug` never shows a secret.
#[derive(Clone)]
pub struct GoogleCredentials {
    inner: google_cloud_auth::credentials::AccessTokenCredentials,
}

impl fmt::Debug for GoogleCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GoogleCredentials(<redacted>)")
    }
}

impl GoogleCredentials {
    /// Application-default credentials (`GOOGLE_APPLICATION_CREDENTIALS`, gcloud's ADC
    /// file, else the metadata server), with the cloud-platform scope.
    pub fn from_env() -> CloudResult<Self> {
        let inner = google_cloud_auth::credentials::Builder::default()
            .with_scopes([CLOUD_PLATFORM_SCOPE])
            .build_access_token_credentials()
            .map_err(|e| CloudError::PermissionDenied {
                operation: "loading Google application-default credentials".into(),
                source: Some(Box::new(e)),
            })?;
        Ok(GoogleCredentials { inner })
    }
}

#[async_trait]
impl TokenSource for GoogleCredentials {
    async fn token(&self) -> CloudResult<String> {
        self.inner
            .access_token()
            .await
            .map(|t| t.token)
            .map_err(|e| CloudError::PermissionDenied {
                operation: "getting a Google access token".into(),
                source: Some(Box::new(e)),
            })
    }
}

/// A fixed access token. `Debug` never shows it.
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
impl TokenSource for StaticToken {
    async fn token(&self) -> CloudResult<String> {
        Ok(self.0.clone())
    }
}

/// How throttled and failed calls are retried: `attempts` tries in all, waiting
/// `base_delay` doubled after each failure.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Tries in all (at least one).
    pub attempts: u32,
    /// The first wait.
    pub base_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            attempts: 6,
            base_delay: Duration::from_millis(500),
        }
    }
}

impl RetryPolicy {
    /// `attempts` tries, waiting `base_delay`, doubled each time.
    pub fn new(attempts: u32, base_delay: Duration) -> Self {
        RetryPolicy {
            attempts: attempts.max(1),
            base_delay,
        }
    }
}

/// One error as Google's APIs report it (`{"error": {"code", "message", "errors":
/// [{"reason"}]}}`, or a failed operation's `error.errors[0]`), kept as the source of a
/// [`CloudError`].
#[derive(Debug)]
pub(crate) struct ApiError {
    pub status: u16,
    pub reason: String,
    pub message: String,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {} {}: {}", self.status, self.reason, self.message)
    }
}

impl std::error::Error for ApiError {}

impl ApiError {
    fn from_body(status: u16, body: &str) -> Self {
        let j: Json = serde_json::from_str(body).unwrap_or(Json::Null);
        let e = j.get("error").cloned().unwrap_or(Json::Null);
        let reason = e
            .pointer("/errors/0/reason")
            .and_then(Json::as_str)
            .or_else(|| e.get("status").and_then(Json::as_str))
            .unwrap_or("")
            .to_owned();
        let message = e
            .get("message")
            .and_then(Json::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| body.chars().take(200).collect());
        ApiError {
            status,
            reason,
            message,
        }
    }

    /// The quota a `quotaExceeded` message names (`Quota 'SSD_TOTAL_GB' exceeded.`).
    fn quota(&self) -> String {
        let mut parts = self.message.split('\'');
        match (parts.next(), parts.next()) {
            (Some(_), Some(q)) if !q.is_empty() => q.to_owned(),
            _ => self.reason.clone(),
        }
    }

    /// The [`CloudError`] a caller acts on (the crate's `cloud` module docs).
    pub(super) fn into_cloud(self, operation: &str, what: &str) -> CloudError {
        let operation = operation.to_owned();
        let reason = self.reason.to_ascii_lowercase();
        let boxed = |e: ApiError| -> Option<kops_tasks::BoxError> { Some(Box::new(e)) };
        match (self.status, reason.as_str()) {
            (_, "ratelimitexceeded" | "userratelimitexceeded" | "rate_limit_exceeded")
            | (429, _) => CloudError::Throttled {
                operation,
                source: boxed(self),
            },
            (_, "quotaexceeded" | "quota_exceeded") => CloudError::Quota {
                operation,
                limit: self.quota(),
                source: boxed(self),
            },
            (_, "backenderror" | "internalerror" | "resourcenotready" | "resource_not_ready")
            | (500..=599, _) => CloudError::Unavailable {
                operation,
                source: boxed(self),
            },
            (404, _) | (_, "notfound" | "resource_not_found") => CloudError::NotFound {
                what: what.to_owned(),
            },
            (409, _) | (_, "alreadyexists" | "already_exists") => CloudError::AlreadyExists {
                operation,
                what: what.to_owned(),
                source: boxed(self),
            },
            (_, "resourceinusebyanotherresource" | "resource_in_use_by_another_resource") => {
                CloudError::Conflict {
                    operation,
                    what: what.to_owned(),
                    reason: "resourceInUseByAnotherResource".into(),
                    source: boxed(self),
                }
            }
            (401 | 403, _) | (_, "forbidden") => CloudError::PermissionDenied {
                operation,
                source: boxed(self),
            },
            (400, _) | (_, "invalid" | "badrequest") => CloudError::Invalid {
                field: format!("{operation} {what}"),
                message: format!("{}: {}", self.reason, self.message),
            },
            _ => CloudError::Other {
                operation,
                source: boxed(self),
            },
        }
    }
}

/// The authenticated, retrying HTTP client.
#[derive(Clone)]
pub(crate) struct Http {
    client: reqwest::Client,
    token: Option<Arc<dyn TokenSource>>,
    retry: RetryPolicy,
}

impl fmt::Debug for Http {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Http")
            .field("token", &self.token)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

impl Http {
    pub(super) fn new(
        token: Option<Arc<dyn TokenSource>>,
        retry: RetryPolicy,
    ) -> CloudResult<Self> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(120))
            .build()
            .map_err(|e| CloudError::Other {
                operation: "building the GCE HTTP client".into(),
                source: Some(Box::new(e)),
            })?;
        Ok(Http {
            client,
            token,
            retry,
        })
    }

    /// One call, retried while Google answers throttled or unavailable. `operation` and
    /// `what` name the call and the object in errors.
    pub(super) async fn call(
        &self,
        method: Method,
        url: &str,
        query: &[(&str, String)],
        body: Option<&Json>,
        operation: &str,
        what: &str,
    ) -> CloudResult<Json> {
        let mut delay = self.retry.base_delay;
        let mut attempt = 1;
        loop {
            match self
                .once(method.clone(), url, query, body, operation, what)
                .await
            {
                Err(e)
                    if attempt < self.retry.attempts
                        && matches!(
                            e,
                            CloudError::Throttled { .. } | CloudError::Unavailable { .. }
                        ) =>
                {
                    tracing::debug!(%operation, attempt, "retrying: {e}");
                    tokio::time::sleep(delay).await;
                    delay *= 2;
                    attempt += 1;
                }
                r => return r,
            }
        }
    }

    async fn once(
        &self,
        method: Method,
        url: &str,
        query: &[(&str, String)],
        body: Option<&Json>,
        operation: &str,
        what: &str,
    ) -> CloudResult<Json> {
        let mut rb = self.client.request(method, url).query(query);
        if let Some(t) = &self.token {
            rb = rb.bearer_auth(t.token().await?);
        }
        if let Some(b) = body {
            rb = rb.json(b);
        }
        let resp = rb.send().await.map_err(|e| CloudError::Unavailable {
            operation: operation.to_owned(),
            source: Some(Box::new(e)),
        })?;
        let status = resp.status().as_u16();
        let text = resp.text().await.map_err(|e| CloudError::Unavailable {
            operation: operation.to_owned(),
            source: Some(Box::new(e)),
        })?;
        if !(200..300).contains(&status) {
            return Err(ApiError::from_body(status, &text).into_cloud(operation, what));
        }
        if text.trim().is_empty() {
            return Ok(json!({}));
        }
        serde_json::from_str(&text).map_err(|e| CloudError::Other {
            operation: format!("{operation}: decoding the answer"),
            source: Some(Box::new(e)),
        })
    }

    /// Every item of a paginated list (`items`, or `key` for other APIs), following
    /// `nextPageToken`.
    pub(super) async fn list_pages(
        &self,
        url: &str,
        query: &[(&str, String)],
        key: &str,
        operation: &str,
    ) -> CloudResult<Vec<Json>> {
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut q = query.to_vec();
            if let Some(t) = &token {
                q.push(("pageToken", t.clone()));
            }
            let page = self
                .call(Method::GET, url, &q, None, operation, url)
                .await?;
            if let Some(items) = page.get(key) {
                match items {
                    Json::Array(a) => out.extend(a.iter().cloned()),
                    // Aggregated lists: `{"zones/z": {"<collection>": [...]}}`.
                    Json::Object(scopes) => {
                        for scoped in scopes.values() {
                            if let Some(Json::Array(a)) = scoped.get(operation_key(operation)) {
                                out.extend(a.iter().cloned());
                            }
                        }
                    }
                    _ => {}
                }
            }
            match page.get("nextPageToken").and_then(Json::as_str) {
                Some(t) if !t.is_empty() => token = Some(t.to_owned()),
                _ => return Ok(out),
            }
        }
    }
}

/// The collection name in an operation label (`compute.disks.aggregatedList` -> `disks`).
fn operation_key(operation: &str) -> &str {
    operation.split('.').nth(1).unwrap_or(operation)
}

/// Whether a JSON answer is a Compute operation.
pub(crate) fn is_operation(j: &Json) -> bool {
    j.get("kind").and_then(Json::as_str) == Some("compute#operation")
}

/// The failure a finished operation reports, as a [`CloudError`]; `None` when it
/// succeeded.
pub(crate) fn operation_error(op: &Json, operation: &str, what: &str) -> Option<CloudError> {
    let first = op.pointer("/error/errors/0")?;
    let code = first.get("code").and_then(Json::as_str).unwrap_or("");
    let status = op
        .get("httpErrorStatusCode")
        .and_then(Json::as_u64)
        .and_then(|s| u16::try_from(s).ok())
        .unwrap_or(400);
    Some(
        ApiError {
            status,
            reason: code.to_owned(),
            message: first
                .get("message")
                .and_then(Json::as_str)
                .unwrap_or("")
                .to_owned(),
        }
        .into_cloud(operation, what),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(status: u16, reason: &str, message: &str) -> CloudError {
        let body = json!({"error": {"code": status, "message": message,
            "errors": [{"reason": reason, "message": message}]}})
        .to_string();
        ApiError::from_body(status, &body).into_cloud("compute.disks.insert", "disk d")
    }

    #[test]
    fn google_error_reasons_map_to_what_callers_act_on() {
        assert!(matches!(
            err(403, "rateLimitExceeded", "slow down"),
            CloudError::Throttled { .. }
        ));
        assert!(matches!(
            err(503, "backendError", "x"),
            CloudError::Unavailable { .. }
        ));
        assert!(matches!(
            err(404, "notFound", "x"),
            CloudError::NotFound { .. }
        ));
        assert!(matches!(
            err(409, "alreadyExists", "x"),
            CloudError::AlreadyExists { .. }
        ));
        assert!(matches!(
            err(400, "resourceInUseByAnotherResource", "x"),
            CloudError::Conflict { .. }
        ));
        assert!(matches!(
            err(403, "forbidden", "x"),
            CloudError::PermissionDenied { .. }
        ));
        match err(
            403,
            "quotaExceeded",
            "Quota 'SSD_TOTAL_GB' exceeded.  Limit: 500.0",
        ) {
            CloudError::Quota { limit, .. } => assert_eq!(limit, "SSD_TOTAL_GB"),
            other => panic!("{other:?}"),
        }
        match err(400, "invalid", "Invalid value for field 'resource.name'") {
            CloudError::Invalid { message, .. } => assert!(message.contains("resource.name")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_failed_operation_names_its_error() {
        let op = json!({"kind": "compute#operation", "status": "DONE", "httpErrorStatusCode": 403,
            "error": {"errors": [{"code": "QUOTA_EXCEEDED", "message": "Quota 'CPUS' exceeded."}]}});
        match operation_error(&op, "insert", "x") {
            Some(CloudError::Quota { limit, .. }) => assert_eq!(limit, "CPUS"),
            other => panic!("{other:?}"),
        }
        assert!(operation_error(&json!({"status": "DONE"}), "insert", "x").is_none());
    }
}
