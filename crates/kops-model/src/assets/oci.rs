//! A client of the OCI distribution API (the registry protocol Docker and containerd
//! speak) that copies one image, with every platform of an index, from one registry to
//! another: manifests byte for byte, so the digests stay the same, and each blob only
//! when the target lacks it, streamed from one registry to the other and checked against
//! its digest on the way.
//!
//! Authentication follows the registries' challenges: anonymous or basic-authenticated
//! bearer tokens per repository and action, or basic authentication, with the logins the
//! caller gave ([`super::copy::AssetCopier::with_registry_login`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use reqwest::header::{
    ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, HeaderMap, LOCATION, WWW_AUTHENTICATE,
};
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde::Deserialize;
use sha2::{Digest, Sha256};

/// OCI image index.
const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
/// Docker manifest list.
const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";
/// OCI image manifest.
const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// Docker image manifest, schema 2.
const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
/// Layers a registry may not redistribute (Windows base layers): referenced by URL, not
/// copied.
const FOREIGN_LAYERS: [&str; 2] = [
    "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
    "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
];
/// How many times a request failing with a status a retry may fix (429, 5xx) or a lost
/// connection is sent.
const ATTEMPTS: u32 = 3;

/// An image reference, split as registries address it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ImageRef {
    /// `registry.k8s.io`, `127.0.0.1:5000`, `docker.io`.
    pub(crate) registry: String,
    /// `kube-apiserver`, `library/busybox`, `cilium/cilium`.
    pub(crate) repository: String,
    pub(crate) tag: Option<String>,
    /// `sha256:<hex>`.
    pub(crate) digest: Option<String>,
}

impl ImageRef {
    /// Parses `image` as Docker does: the first path component is the registry when it
    /// has a dot or a port or is `localhost`, else the image is on Docker Hub (official
    /// images under `library/`).
    pub(crate) fn parse(image: &str) -> Result<ImageRef, String> {
        let (rest, digest) = match image.split_once('@') {
            Some((rest, digest)) => (rest, Some(digest)),
            None => (image, None),
        };
        if let Some(d) = digest {
            let hex = d.strip_prefix("sha256:").unwrap_or("");
            if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!("digest {d:?} is not sha256:<64 hex digits>"));
            }
        }
        let slash = rest.rfind('/');
        let (name, tag) = match rest.rfind(':') {
            Some(i) if slash.is_none_or(|s| i > s) => (&rest[..i], Some(&rest[i + 1..])),
            _ => (rest, None),
        };
        if tag.is_some_and(str::is_empty) {
            return Err("empty tag".to_owned());
        }
        let (registry, repository) = match name.split_once('/') {
            Some((first, path)) if first.contains(['.', ':']) || first == "localhost" => {
                (first.to_owned(), path.to_owned())
            }
            Some(_) => ("docker.io".to_owned(), name.to_owned()),
            None => ("docker.io".to_owned(), format!("library/{name}")),
        };
        let registry = if registry == "index.docker.io" {
            "docker.io".to_owned()
        } else {
            registry
        };
        let valid = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-/".contains(c);
        if repository.is_empty() || !repository.chars().all(valid) {
            return Err(format!(
                "repository {repository:?} must be lowercase letters, digits, '.', '_', '-' and '/'"
            ));
        }
        Ok(ImageRef {
            registry,
            repository,
            tag: tag.map(str::to_owned),
            digest: digest.map(str::to_owned),
        })
    }

    /// What a pull reads: the digest when given, else the tag (`latest` when neither).
    pub(crate) fn pull_reference(&self) -> &str {
        self.digest
            .as_deref()
            .or(self.tag.as_deref())
            .unwrap_or("latest")
    }

    /// What a push names: the tag when given (so that the image can be pulled by it),
    /// else the digest.
    pub(crate) fn push_reference(&self) -> &str {
        self.tag
            .as_deref()
            .or(self.digest.as_deref())
            .unwrap_or("latest")
    }
}

/// A login for one registry. Its `Debug` leaves the password out.
#[derive(Clone)]
pub(crate) struct Login {
    pub(crate) user: String,
    pub(crate) password: String,
}

impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Login")
            .field("user", &self.user)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// The registries an [`Oci`] client reaches and how.
#[derive(Clone, Debug, Default)]
pub(crate) struct Registries {
    /// Base URLs replacing a registry's own (`registry.k8s.io` →
    /// `http://127.0.0.1:5000`).
    pub(crate) endpoints: HashMap<String, String>,
    pub(crate) logins: HashMap<String, Login>,
    /// Docker credential helpers by registry (`credHelpers`): `ecr-login` runs
    /// `docker-credential-ecr-login`.
    pub(crate) helpers: HashMap<String, String>,
    /// The helper of every other registry (`credsStore`).
    pub(crate) default_helper: Option<String>,
}

impl Registries {
    /// The base URL of `registry`'s API: the configured endpoint, else plain HTTP for a
    /// registry on the loopback interface (as Docker allows without configuration) and
    /// HTTPS for any other; Docker Hub's API is at `registry-1.docker.io`.
    fn base(&self, registry: &str) -> String {
        if let Some(e) = self.endpoints.get(registry) {
            return e.trim_end_matches('/').to_owned();
        }
        let host = registry.rsplit_once(':').map_or(registry, |(h, _)| h);
        let loopback = host == "localhost" || host.starts_with("127.") || host == "[::1]";
        match registry {
            "docker.io" => "https://registry-1.docker.io".to_owned(),
            _ if loopback => format!("http://{registry}"),
            _ => format!("https://{registry}"),
        }
    }
}

/// A manifest as read: its bytes, media type and digest.
struct Manifest {
    bytes: Bytes,
    media_type: String,
    digest: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Descriptor {
    #[serde(default)]
    media_type: String,
    digest: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ManifestBody {
    #[serde(default)]
    media_type: String,
    #[serde(default)]
    schema_version: u32,
    #[serde(default)]
    manifests: Vec<Descriptor>,
    config: Option<Descriptor>,
    #[serde(default)]
    layers: Vec<Descriptor>,
}

/// What an image copy did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ImageCopy {
    /// Whether the target already had the image (nothing was written).
    pub(crate) unchanged: bool,
    /// Blob bytes uploaded.
    pub(crate) bytes: u64,
}

/// A registry client: one HTTP client, the registries' endpoints and logins, and the
/// bearer tokens granted so far.
pub(crate) struct Oci<'a> {
    http: &'a reqwest::Client,
    registries: &'a Registries,
    /// Tokens by registry and scope (`repository:<name>:pull,push`).
    tokens: Mutex<HashMap<(String, String), String>>,
    /// Basic authentication answers a registry's challenge with the login itself.
    basic: Mutex<HashMap<String, bool>>,
    /// Each registry's login, once looked up (given, or from its credential helper).
    resolved: Mutex<HashMap<String, Option<Login>>>,
}

/// `sha256:<hex>` of `bytes`.
pub(crate) fn digest_of(bytes: &[u8]) -> String {
    hex_digest(Sha256::digest(bytes).as_slice())
}

/// `sha256:<hex>` of a SHA-256 sum.
fn hex_digest(sum: &[u8]) -> String {
    let mut out = String::with_capacity(71);
    out.push_str("sha256:");
    for b in sum {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// What went through a blob's stream.
#[derive(Default)]
struct Streamed {
    hasher: Sha256,
    bytes: u64,
    /// Whether the source's body ended (it was read whole).
    complete: bool,
}

/// The parameters of a `WWW-Authenticate` challenge: its scheme and `key="value"` pairs.
fn parse_challenge(header: &str) -> (String, HashMap<String, String>) {
    let header = header.trim();
    let (scheme, rest) = header.split_once(' ').unwrap_or((header, ""));
    let mut params = HashMap::new();
    let mut rest = rest.trim();
    while !rest.is_empty() {
        let Some((key, after)) = rest.split_once('=') else {
            break;
        };
        let key = key.trim().to_ascii_lowercase();
        let after = after.trim_start();
        let (value, next) = if let Some(quoted) = after.strip_prefix('"') {
            match quoted.find('"') {
                Some(end) => (&quoted[..end], &quoted[end + 1..]),
                None => (quoted, ""),
            }
        } else {
            match after.find(',') {
                Some(end) => (&after[..end], &after[end..]),
                None => (after, ""),
            }
        };
        params.insert(key, value.to_owned());
        rest = next.trim_start().trim_start_matches(',').trim_start();
    }
    (scheme.to_ascii_lowercase(), params)
}

/// The media type of a response, without parameters.
fn media_type(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(CONTENT_TYPE)?.to_str().ok()?;
    Some(value.split(';').next().unwrap_or("").trim().to_owned())
}

impl<'a> Oci<'a> {
    pub(crate) fn new(http: &'a reqwest::Client, registries: &'a Registries) -> Self {
        Oci {
            http,
            registries,
            tokens: Mutex::new(HashMap::new()),
            basic: Mutex::new(HashMap::new()),
            resolved: Mutex::new(HashMap::new()),
        }
    }

    /// Copies `source` to `target`: nothing when the target's manifest already has the
    /// source's digest, else the blobs the target lacks, then the manifests.
    pub(crate) async fn copy(
        &self,
        source: &ImageRef,
        target: &ImageRef,
    ) -> Result<ImageCopy, String> {
        let top = self.manifest(source, source.pull_reference()).await?;
        if let Some(d) = &target.digest
            && *d != top.digest
        {
            return Err(format!(
                "the target names digest {d}, but the source's manifest is {}",
                top.digest
            ));
        }
        if self
            .manifest_digest(target, target.push_reference())
            .await?
            == Some(top.digest.clone())
        {
            return Ok(ImageCopy {
                unchanged: true,
                bytes: 0,
            });
        }
        let mut bytes = 0;
        let body = parse_manifest(&top)?;
        if is_index(&top.media_type, &body) {
            for child in &body.manifests {
                let m = self.manifest(source, &child.digest).await?;
                let child_body = parse_manifest(&m)?;
                if is_index(&m.media_type, &child_body) {
                    return Err(format!(
                        "manifest {} is an index inside an index, which is not copied",
                        m.digest
                    ));
                }
                bytes += self.copy_blobs(source, target, &child_body).await?;
                self.put_manifest(target, &m.digest, &m).await?;
            }
        } else {
            bytes += self.copy_blobs(source, target, &body).await?;
        }
        self.put_manifest(target, target.push_reference(), &top)
            .await?;
        Ok(ImageCopy {
            unchanged: false,
            bytes,
        })
    }

    async fn copy_blobs(
        &self,
        source: &ImageRef,
        target: &ImageRef,
        body: &ManifestBody,
    ) -> Result<u64, String> {
        let mut bytes = 0;
        let blobs = body.config.iter().chain(&body.layers);
        for blob in blobs.filter(|b| !FOREIGN_LAYERS.contains(&b.media_type.as_str())) {
            bytes += self.copy_blob(source, target, &blob.digest).await?;
        }
        Ok(bytes)
    }

    /// Copies one blob unless the target has it; returns the bytes uploaded. The blob is
    /// streamed from the source to the target (never held whole in memory) and hashed on
    /// the way: a source whose bytes do not have the blob's digest is an error whatever
    /// the target answered (registries check it too).
    async fn copy_blob(
        &self,
        source: &ImageRef,
        target: &ImageRef,
        digest: &str,
    ) -> Result<u64, String> {
        let path = format!("/v2/{}/blobs/{digest}", target.repository);
        let head = self.send(target, false, Method::HEAD, &path, |r| r).await?;
        if head.status().is_success() {
            return Ok(0);
        }
        if head.status() != StatusCode::NOT_FOUND {
            return Err(response_error(target, "checking blob", digest, head).await);
        }
        // Started first: the target's push token is then granted before the body streams.
        let uploads = format!("/v2/{}/blobs/uploads/", target.repository);
        let started = self
            .send(target, true, Method::POST, &uploads, |r| r)
            .await?;
        if started.status() != StatusCode::ACCEPTED {
            return Err(response_error(target, "starting the upload of", digest, started).await);
        }
        let location = started
            .headers()
            .get(LOCATION)
            .and_then(|l| l.to_str().ok())
            .ok_or_else(|| format!("{}: an upload started without a Location", target.registry))?
            .to_owned();
        let path = format!("/v2/{}/blobs/{digest}", source.repository);
        let got = self.send(source, false, Method::GET, &path, |r| r).await?;
        if !got.status().is_success() {
            return Err(response_error(source, "reading blob", digest, got).await);
        }
        let length = got.content_length();
        let seen = Arc::new(Mutex::new(Streamed::default()));
        let (hashing, ended) = (seen.clone(), seen.clone());
        let stream = got
            .bytes_stream()
            .map(move |chunk| {
                if let Ok(c) = &chunk {
                    let mut s = lock(&hashing);
                    s.hasher.update(c);
                    s.bytes += c.len() as u64;
                }
                chunk
            })
            .chain(futures::stream::poll_fn(move |_| {
                lock(&ended).complete = true;
                std::task::Poll::Ready(None)
            }));
        let base = self.registries.base(&target.registry);
        let separator = if location.contains('?') { '&' } else { '?' };
        let url = if location.starts_with("http://") || location.starts_with("https://") {
            format!("{location}{separator}digest={digest}")
        } else {
            format!("{base}{location}{separator}digest={digest}")
        };
        let mut put = self
            .http
            .put(&url)
            .header(CONTENT_TYPE, "application/octet-stream")
            .body(reqwest::Body::wrap_stream(stream));
        if let Some(n) = length {
            put = put.header(CONTENT_LENGTH, n);
        }
        let scope = format!("repository:{}:pull,push", target.repository);
        let put = self.authorize(put, &target.registry, &scope).send().await;
        let streamed = std::mem::take(&mut *lock(&seen));
        // Read whole: to its end, or (a body of known length, which is sent without
        // reading past it) to its length.
        if streamed.complete || length == Some(streamed.bytes) {
            let actual = hex_digest(streamed.hasher.finalize().as_slice());
            if actual != digest {
                return Err(format!(
                    "blob {digest} from {} has digest {actual}: refusing to copy it",
                    source.registry
                ));
            }
        }
        let put = put.map_err(|e| {
            format!(
                "uploading blob {digest} to {}: {}",
                target.registry,
                causes(&e)
            )
        })?;
        if put.status() != StatusCode::CREATED {
            return Err(response_error(target, "uploading blob", digest, put).await);
        }
        Ok(streamed.bytes)
    }

    /// The manifest `reference` names in `image`'s repository, checked against the digest
    /// asked for (or the one the registry reports).
    async fn manifest(&self, image: &ImageRef, reference: &str) -> Result<Manifest, String> {
        let path = format!("/v2/{}/manifests/{reference}", image.repository);
        let got = self
            .send(image, false, Method::GET, &path, |r| {
                r.header(ACCEPT, accept())
            })
            .await?;
        if !got.status().is_success() {
            return Err(response_error(image, "reading manifest", reference, got).await);
        }
        let reported = got
            .headers()
            .get("docker-content-digest")
            .and_then(|d| d.to_str().ok())
            .map(str::to_owned);
        let header_type = media_type(got.headers());
        let bytes = got.bytes().await.map_err(|e| {
            format!(
                "reading manifest {reference} from {}: {}",
                image.registry,
                causes(&e)
            )
        })?;
        let digest = digest_of(&bytes);
        let expected = if reference.starts_with("sha256:") {
            Some(reference.to_owned())
        } else {
            reported
        };
        if let Some(e) = expected
            && e != digest
        {
            return Err(format!(
                "manifest {reference} of {}/{} has digest {digest}, not {e}",
                image.registry, image.repository
            ));
        }
        let media_type = header_type
            .filter(|t| !t.is_empty() && t != "application/json")
            .or_else(|| {
                serde_json::from_slice::<ManifestBody>(&bytes)
                    .ok()
                    .map(|b| b.media_type)
            })
            .unwrap_or_default();
        Ok(Manifest {
            bytes,
            media_type,
            digest,
        })
    }

    /// The digest of the manifest `reference` names, or `None` when there is none.
    async fn manifest_digest(
        &self,
        image: &ImageRef,
        reference: &str,
    ) -> Result<Option<String>, String> {
        let path = format!("/v2/{}/manifests/{reference}", image.repository);
        let head = self
            .send(image, false, Method::HEAD, &path, |r| {
                r.header(ACCEPT, accept())
            })
            .await?;
        match head.status() {
            StatusCode::NOT_FOUND => return Ok(None),
            s if !s.is_success() => {
                return Err(status_error(image, "checking manifest", reference, s));
            }
            _ => {}
        }
        match head
            .headers()
            .get("docker-content-digest")
            .and_then(|d| d.to_str().ok())
        {
            Some(d) => Ok(Some(d.to_owned())),
            // A registry that does not report it: the manifest itself tells.
            None => Ok(Some(self.manifest(image, reference).await?.digest)),
        }
    }

    async fn put_manifest(
        &self,
        image: &ImageRef,
        reference: &str,
        manifest: &Manifest,
    ) -> Result<(), String> {
        let path = format!("/v2/{}/manifests/{reference}", image.repository);
        let put = self
            .send(image, true, Method::PUT, &path, |r| {
                r.header(CONTENT_TYPE, manifest.media_type.as_str())
                    .body(manifest.bytes.clone())
            })
            .await?;
        if put.status() != StatusCode::CREATED && !put.status().is_success() {
            return Err(response_error(image, "writing manifest", reference, put).await);
        }
        Ok(())
    }

    /// Sends a request to `image`'s registry (`path` is absolute, or a URL the registry
    /// gave), answering an authentication challenge once and retrying what a retry may
    /// fix.
    async fn send(
        &self,
        image: &ImageRef,
        push: bool,
        method: Method,
        path: &str,
        build: impl Fn(RequestBuilder) -> RequestBuilder,
    ) -> Result<Response, String> {
        let base = self.registries.base(&image.registry);
        let url = if path.starts_with("http://") || path.starts_with("https://") {
            path.to_owned()
        } else {
            format!("{base}{path}")
        };
        let scope = format!(
            "repository:{}:{}",
            image.repository,
            if push { "pull,push" } else { "pull" }
        );
        let mut challenged = false;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut request = build(self.http.request(method.clone(), &url));
            request = self.authorize(request, &image.registry, &scope);
            let response = match request.send().await {
                Ok(r) => r,
                Err(e) if attempt < ATTEMPTS && (e.is_connect() || e.is_timeout()) => {
                    backoff(attempt).await;
                    continue;
                }
                Err(e) => return Err(format!("{} {url}: {}", method.as_str(), causes(&e))),
            };
            let status = response.status();
            if status == StatusCode::UNAUTHORIZED && !challenged {
                challenged = true;
                let challenge = response
                    .headers()
                    .get(WWW_AUTHENTICATE)
                    .and_then(|h| h.to_str().ok())
                    .map(str::to_owned);
                if let Some(c) = challenge {
                    self.answer(&image.registry, &scope, &c).await?;
                    continue;
                }
            }
            let retryable = status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error();
            if retryable && attempt < ATTEMPTS {
                backoff(attempt).await;
                continue;
            }
            return Ok(response);
        }
    }

    fn authorize(&self, request: RequestBuilder, registry: &str, scope: &str) -> RequestBuilder {
        let key = (registry.to_owned(), scope.to_owned());
        if let Some(token) = lock(&self.tokens).get(&key) {
            return request.bearer_auth(token);
        }
        let basic = lock(&self.basic).get(registry).copied().unwrap_or(false);
        match lock(&self.resolved).get(registry) {
            Some(Some(l)) if basic => request.basic_auth(&l.user, Some(&l.password)),
            _ => request,
        }
    }

    /// `registry`'s login: the credential helper configured for it, else the one given,
    /// else the default helper's; looked up once.
    async fn login(&self, registry: &str) -> Result<Option<Login>, String> {
        if let Some(known) = lock(&self.resolved).get(registry) {
            return Ok(known.clone());
        }
        let r = self.registries;
        let helper = r.helpers.get(registry);
        let found = match (helper, r.logins.get(registry)) {
            (Some(h), _) => run_helper(h, registry).await?,
            (None, Some(l)) => Some(l.clone()),
            (None, None) => match &r.default_helper {
                Some(h) => run_helper(h, registry).await?,
                None => None,
            },
        };
        lock(&self.resolved).insert(registry.to_owned(), found.clone());
        Ok(found)
    }

    /// Answers a registry's challenge: a bearer token for `scope` from its realm, or
    /// basic authentication with its login.
    async fn answer(&self, registry: &str, scope: &str, challenge: &str) -> Result<(), String> {
        let (scheme, params) = parse_challenge(challenge);
        let login = self.login(registry).await?;
        let login = login.as_ref();
        match scheme.as_str() {
            "basic" => {
                if login.is_none() {
                    return Err(format!(
                        "{registry} asks for a login: log in first (docker login {registry})"
                    ));
                }
                lock(&self.basic).insert(registry.to_owned(), true);
                Ok(())
            }
            "bearer" => {
                let realm = params
                    .get("realm")
                    .ok_or_else(|| format!("{registry}: a bearer challenge without a realm"))?;
                let mut query = vec![("scope", scope.to_owned())];
                if let Some(s) = params.get("service") {
                    query.push(("service", s.clone()));
                }
                let url = reqwest::Url::parse_with_params(realm, &query)
                    .map_err(|e| format!("{registry}: token realm {realm:?}: {e}"))?;
                let mut request = self.http.get(url);
                if let Some(l) = login {
                    request = request.basic_auth(&l.user, Some(&l.password));
                }
                let response = request.send().await.map_err(|e| {
                    format!("{registry}: asking {realm} for a token: {}", causes(&e))
                })?;
                if !response.status().is_success() {
                    return Err(format!(
                        "{registry}: {realm} refused a token for {scope} (HTTP {}){}",
                        response.status().as_u16(),
                        if login.is_none() {
                            "; log in first (docker login)"
                        } else {
                            ""
                        }
                    ));
                }
                #[derive(Deserialize)]
                struct Token {
                    token: Option<String>,
                    access_token: Option<String>,
                }
                let t: Token = response.json().await.map_err(|e| {
                    format!("{registry}: reading the token from {realm}: {}", causes(&e))
                })?;
                let token = t
                    .token
                    .or(t.access_token)
                    .ok_or_else(|| format!("{registry}: {realm} answered without a token"))?;
                lock(&self.tokens).insert((registry.to_owned(), scope.to_owned()), token);
                Ok(())
            }
            other => Err(format!(
                "{registry}: unsupported authentication scheme {other:?}"
            )),
        }
    }
}

/// The login Docker's credential helper `helper` (`docker-credential-<helper> get`, the
/// registry's server on its input) holds for `registry`; `None` when it holds none.
async fn run_helper(helper: &str, registry: &str) -> Result<Option<Login>, String> {
    let program = format!("docker-credential-{helper}");
    // Docker Hub's logins are kept under its v1 index URL.
    let server = if registry == "docker.io" {
        "https://index.docker.io/v1/".to_owned()
    } else {
        registry.to_owned()
    };
    let run = {
        let program = program.clone();
        tokio::task::spawn_blocking(move || {
            use std::io::Write as _;
            let mut child = std::process::Command::new(&program)
                .arg("get")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()?;
            if let Some(mut stdin) = child.stdin.take() {
                stdin.write_all(server.as_bytes())?;
            }
            child.wait_with_output()
        })
    };
    let output = run
        .await
        .map_err(|e| format!("running {program}: {e}"))?
        .map_err(|e| format!("running {program} (is it on PATH?): {e}"))?;
    helper_output(&program, registry, output.status.success(), &output.stdout)
}

/// A credential helper's answer: its JSON on success, `None` for Docker's "credentials not
/// found" answer. The secret never appears in an error.
fn helper_output(
    program: &str,
    registry: &str,
    success: bool,
    stdout: &[u8],
) -> Result<Option<Login>, String> {
    let text = String::from_utf8_lossy(stdout);
    if !success {
        if text.contains("credentials not found") {
            return Ok(None);
        }
        return Err(format!(
            "{program} found no login for {registry}: {}",
            text.trim().lines().next().unwrap_or("it failed")
        ));
    }
    #[derive(Deserialize)]
    struct Answer {
        #[serde(rename = "Username")]
        username: String,
        #[serde(rename = "Secret")]
        secret: String,
    }
    let a: Answer = serde_json::from_str(&text).map_err(|_| {
        format!("{program} answered for {registry} with something other than a login")
    })?;
    if a.username == "<token>" {
        return Err(format!(
            "{program} holds an identity token for {registry}, which is not supported: log in with a user and password"
        ));
    }
    Ok(Some(Login {
        user: a.username,
        password: a.secret,
    }))
}

/// A failed response's error: the status, what the registry said (its `errors` codes and
/// messages) and a hint.
async fn response_error(image: &ImageRef, doing: &str, what: &str, response: Response) -> String {
    let status = response.status();
    let said = response
        .bytes()
        .await
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|j| {
            let errors = j.get("errors")?.as_array()?;
            let texts: Vec<String> = errors
                .iter()
                .map(|e| {
                    let code = e.get("code").and_then(|c| c.as_str()).unwrap_or("");
                    let message = e.get("message").and_then(|m| m.as_str()).unwrap_or("");
                    format!("{code}: {message}")
                })
                .collect();
            (!texts.is_empty()).then(|| texts.join("; "))
        });
    let mut text = status_error(image, doing, what, status);
    if let Some(s) = said {
        text.push_str(&format!(" ({s})"));
    }
    text
}

/// An HTTP error with its causes (reqwest's own text says only that a request failed).
pub(crate) fn causes(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let t = s.to_string();
        if !text.contains(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        source = s.source();
    }
    text
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) async fn backoff(attempt: u32) {
    tokio::time::sleep(Duration::from_millis(250 << attempt.min(4))).await;
}

fn accept() -> String {
    [OCI_INDEX, DOCKER_LIST, OCI_MANIFEST, DOCKER_MANIFEST].join(", ")
}

fn is_index(media_type: &str, body: &ManifestBody) -> bool {
    media_type == OCI_INDEX || media_type == DOCKER_LIST || !body.manifests.is_empty()
}

fn parse_manifest(m: &Manifest) -> Result<ManifestBody, String> {
    let body: ManifestBody = serde_json::from_slice(&m.bytes)
        .map_err(|e| format!("manifest {} is not a manifest: {e}", m.digest))?;
    if body.schema_version == 1 {
        return Err(format!(
            "manifest {} is Docker schema 1, which registries no longer accept",
            m.digest
        ));
    }
    Ok(body)
}

fn status_error(image: &ImageRef, doing: &str, what: &str, status: StatusCode) -> String {
    let hint = match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
            ": access denied (log in first: docker login)"
        }
        StatusCode::NOT_FOUND => ": not found",
        _ => "",
    };
    format!(
        "{doing} {what} of {}/{}: HTTP {}{hint}",
        image.registry,
        image.repository,
        status.as_u16()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_split_as_docker_splits_them() {
        let r = ImageRef::parse("registry.k8s.io/kube-apiserver:v1.34.1").unwrap();
        assert_eq!(
            (r.registry.as_str(), r.repository.as_str(), r.tag.as_deref()),
            ("registry.k8s.io", "kube-apiserver", Some("v1.34.1"))
        );
        let r = ImageRef::parse("busybox").unwrap();
        assert_eq!(
            (r.registry.as_str(), r.repository.as_str()),
            ("docker.io", "library/busybox")
        );
        assert_eq!(r.pull_reference(), "latest");
        let r = ImageRef::parse("localhost:5000/a/b").unwrap();
        assert_eq!(
            (r.registry.as_str(), r.repository.as_str(), r.tag),
            ("localhost:5000", "a/b", None)
        );
        let d = format!("sha256:{}", "ab".repeat(32));
        let r = ImageRef::parse(&format!("quay.io/cilium/cilium:v1.18@{d}")).unwrap();
        assert_eq!(r.pull_reference(), d);
        assert_eq!(r.push_reference(), "v1.18");
        assert!(ImageRef::parse("registry.k8s.io/Upper:1").is_err());
        assert!(ImageRef::parse("registry.k8s.io/a@sha256:12").is_err());
    }

    #[test]
    fn challenges_are_read_with_quoted_commas() {
        let (scheme, p) = parse_challenge(
            r#"Bearer realm="https://auth.example.com/token",service="reg",scope="repository:a:pull,push""#,
        );
        assert_eq!(scheme, "bearer");
        assert_eq!(p["realm"], "https://auth.example.com/token");
        assert_eq!(p["scope"], "repository:a:pull,push");
        assert_eq!(p["service"], "reg");
    }

    #[test]
    fn credential_helpers_answers_are_logins_or_nothing() {
        let ok = helper_output(
            "docker-credential-ecr-login",
            "1.dkr.ecr.us-east-1.amazonaws.com",
            true,
            br#"{"ServerURL":"1.dkr.ecr.us-east-1.amazonaws.com","Username":"AWS","Secret":"tok"}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!((ok.user.as_str(), ok.password.as_str()), ("AWS", "tok"));
        let none = helper_output(
            "h",
            "r",
            false,
            b"credentials not found in native keychain\n",
        );
        assert!(none.unwrap().is_none());
        let token = helper_output(
            "h",
            "r",
            true,
            br#"{"Username":"<token>","Secret":"refresh-xyz"}"#,
        )
        .unwrap_err();
        assert!(
            token.contains("identity token") && !token.contains("refresh-xyz"),
            "{token}"
        );
        let garbled = helper_output("h", "r", true, b"Secret: abc").unwrap_err();
        assert!(!garbled.contains("abc"), "{garbled}");
    }

    #[test]
    fn loopback_registries_are_plain_http() {
        let r = Registries::default();
        assert_eq!(r.base("127.0.0.1:5000"), "http://127.0.0.1:5000");
        assert_eq!(r.base("registry.k8s.io"), "https://registry.k8s.io");
        assert_eq!(r.base("docker.io"), "https://registry-1.docker.io");
    }
}
