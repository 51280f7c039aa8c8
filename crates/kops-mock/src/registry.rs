//! [`FakeRegistry`]: a container registry speaking the OCI distribution API, served on
//! 127.0.0.1 for tests of a real registry client (`kops_model::assets::AssetCopier`), plus
//! plain files at any other path (the downloads of a file mirror). Feature `registry`.
//!
//! What it does as registries do:
//!
//! - **manifests** by tag or digest (`GET`/`HEAD /v2/<name>/manifests/<ref>`), answered
//!   with their media type and `Docker-Content-Digest`; a `PUT` stores the bytes as sent,
//!   checks a digest reference against them, and refuses (`400 MANIFEST_BLOB_UNKNOWN`) a
//!   manifest whose config, layers or (for an index) manifests the repository lacks;
//! - **blobs** per repository (`GET`/`HEAD /v2/<name>/blobs/<digest>`), uploaded with
//!   `POST /v2/<name>/blobs/uploads/` (answered `202` with a relative `Location`) and one
//!   `PUT <location>?digest=<digest>`, whose bytes must have that digest
//!   (`400 DIGEST_INVALID`);
//! - **token authentication** once [`FakeRegistry::require_login`] is called: every
//!   `/v2/` request needs a bearer token from `GET /token?scope=repository:<name>:<actions>`,
//!   anonymous for `pull`, with the login's basic authentication for `push`; a request
//!   without the token it needs is answered `401` with a `WWW-Authenticate: Bearer`
//!   challenge naming the realm, service and scope;
//! - **errors** in the registry JSON shape (`{"errors": [{"code", "message"}]}`).
//!
//! Faults: [`FakeRegistry::corrupt_blob`] serves a blob's bytes changed. Every request is
//! recorded ([`FakeRegistry::requests`]). Simplifications: no chunked (`PATCH`) uploads, no
//! cross-repository mounts, no deletes, no catalog or tag listing.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use serde_json::{Value as Json, json};
use sha2::{Digest, Sha256};
use tokio::task::JoinHandle;

/// OCI image index.
pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
/// OCI image manifest.
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";

#[derive(Default)]
struct Repo {
    blobs: HashMap<String, Bytes>,
    /// By digest: media type and bytes.
    manifests: HashMap<String, (String, Bytes)>,
    tags: HashMap<String, String>,
}

#[derive(Default)]
struct Registry {
    repos: HashMap<String, Repo>,
    uploads: HashMap<String, String>,
    files: HashMap<String, Bytes>,
    login: Option<(String, String)>,
    /// Token → whether it may push, and to which repository.
    tokens: HashMap<String, (String, bool)>,
    corrupt: HashSet<String>,
    requests: Vec<String>,
    next: u64,
}

/// A fake container registry and file server on 127.0.0.1, until dropped.
pub struct FakeRegistry {
    addr: SocketAddr,
    state: Arc<Mutex<Registry>>,
    accept: JoinHandle<()>,
}

impl Drop for FakeRegistry {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// `sha256:<hex>` of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    let sum = Sha256::digest(bytes);
    let hex: String = sum.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

impl FakeRegistry {
    /// An empty registry on a free port (needs a tokio runtime).
    pub async fn start() -> std::io::Result<FakeRegistry> {
        let state = Arc::new(Mutex::new(Registry::default()));
        let (addr, accept) = crate::serve::serve(state.clone(), |state, addr, req| async move {
            handle(&state, addr, req).await
        })
        .await?;
        Ok(FakeRegistry {
            addr,
            state,
            accept,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Registry> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `127.0.0.1:<port>`: the registry's name in an image reference.
    pub fn host(&self) -> String {
        self.addr.to_string()
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// From now on every `/v2/` request needs a token; pushing needs this login.
    pub fn require_login(&self, user: &str, password: &str) {
        self.lock().login = Some((user.to_owned(), password.to_owned()));
    }

    /// Serves `bytes` at `path` (`/release/v1/kubelet`).
    pub fn serve_file(&self, path: &str, bytes: &[u8]) {
        self.lock()
            .files
            .insert(path.to_owned(), Bytes::copy_from_slice(bytes));
    }

    /// Stores an image of `layers` (and a config naming `tag`) as `repo:tag`; returns its
    /// manifest's digest.
    pub fn push_image(&self, repo: &str, tag: &str, layers: &[&[u8]]) -> String {
        let (manifest, _) = self.store_image(repo, tag, layers);
        let d = digest(&manifest);
        let mut s = self.lock();
        let r = s.repos.entry(repo.to_owned()).or_default();
        r.manifests
            .insert(d.clone(), (OCI_MANIFEST.to_owned(), manifest));
        r.tags.insert(tag.to_owned(), d.clone());
        d
    }

    /// Stores an index of one image per platform in `platforms` (`linux/amd64`) as
    /// `repo:tag`; returns the index's digest.
    pub fn push_index(&self, repo: &str, tag: &str, platforms: &[&str]) -> String {
        let mut entries = Vec::new();
        for p in platforms {
            let layer = format!("{repo}:{tag} layer for {p}");
            let (manifest, _) = self.store_image(repo, &format!("{tag}-{p}"), &[layer.as_bytes()]);
            let d = digest(&manifest);
            let (os, arch) = p.split_once('/').unwrap_or((p, ""));
            entries.push(
                json!({ "mediaType": OCI_MANIFEST, "digest": d, "size": manifest.len(),
                "platform": { "os": os, "architecture": arch } }),
            );
            self.lock()
                .repos
                .entry(repo.to_owned())
                .or_default()
                .manifests
                .insert(d, (OCI_MANIFEST.to_owned(), manifest));
        }
        let index = json!({ "schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": entries });
        let bytes = Bytes::from(serde_json::to_vec(&index).unwrap_or_default());
        let d = digest(&bytes);
        let mut s = self.lock();
        let r = s.repos.entry(repo.to_owned()).or_default();
        r.manifests.insert(d.clone(), (OCI_INDEX.to_owned(), bytes));
        r.tags.insert(tag.to_owned(), d.clone());
        d
    }

    /// The blobs of an image, stored; returns its manifest (not stored) and config digest.
    fn store_image(&self, repo: &str, tag: &str, layers: &[&[u8]]) -> (Bytes, String) {
        let config = serde_json::to_vec(&json!({ "architecture": "amd64", "os": "linux",
            "config": { "Labels": { "tag": tag } }, "rootfs": { "type": "layers" } }))
        .unwrap_or_default();
        let mut s = self.lock();
        let r = s.repos.entry(repo.to_owned()).or_default();
        let config_digest = digest(&config);
        let config_size = config.len();
        r.blobs.insert(config_digest.clone(), Bytes::from(config));
        let mut descs = Vec::new();
        for l in layers {
            let d = digest(l);
            descs.push(
                json!({ "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                "digest": d, "size": l.len() }),
            );
            r.blobs.insert(d, Bytes::copy_from_slice(l));
        }
        let manifest = json!({ "schemaVersion": 2, "mediaType": OCI_MANIFEST,
            "config": { "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": config_digest, "size": config_size },
            "layers": descs });
        (
            Bytes::from(serde_json::to_vec(&manifest).unwrap_or_default()),
            config_digest,
        )
    }

    /// The digest `repo:reference` names (a tag or a digest held).
    pub fn manifest_digest(&self, repo: &str, reference: &str) -> Option<String> {
        let s = self.lock();
        let r = s.repos.get(repo)?;
        resolve(r, reference)
    }

    /// The manifest `repo@digest` as stored.
    pub fn manifest(&self, repo: &str, digest: &str) -> Option<Bytes> {
        let s = self.lock();
        s.repos
            .get(repo)?
            .manifests
            .get(digest)
            .map(|m| m.1.clone())
    }

    /// The blobs `repo` holds, by digest.
    pub fn blobs(&self, repo: &str) -> BTreeMap<String, Bytes> {
        let s = self.lock();
        s.repos
            .get(repo)
            .map(|r| {
                r.blobs
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// From now on the blob `digest` is served with its bytes changed.
    pub fn corrupt_blob(&self, digest: &str) {
        self.lock().corrupt.insert(digest.to_owned());
    }

    /// Every request so far, as `METHOD /path` (without the query).
    pub fn requests(&self) -> Vec<String> {
        self.lock().requests.clone()
    }
}

fn resolve(r: &Repo, reference: &str) -> Option<String> {
    if reference.starts_with("sha256:") {
        r.manifests
            .contains_key(reference)
            .then(|| reference.to_owned())
    } else {
        r.tags.get(reference).cloned()
    }
}

fn respond(status: StatusCode, headers: &[(&str, String)], body: Bytes) -> Response<Full<Bytes>> {
    let mut b = Response::builder().status(status);
    for (k, v) in headers {
        b = b.header(*k, v.as_str());
    }
    b.body(Full::new(body))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

fn error(status: StatusCode, code: &str, message: &str) -> Response<Full<Bytes>> {
    let body = json!({ "errors": [{ "code": code, "message": message }] });
    respond(
        status,
        &[("content-type", "application/json".to_owned())],
        Bytes::from(body.to_string()),
    )
}

/// The `key` parameter of a query, with `%3A` / `%2C` / `%2F` decoded.
fn query_param(query: &str, key: &str) -> Option<String> {
    query.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == key).then(|| {
            v.replace("%3A", ":")
                .replace("%3a", ":")
                .replace("%2C", ",")
                .replace("%2c", ",")
                .replace("%2F", "/")
                .replace("%2f", "/")
        })
    })
}

/// `<name>` and the rest of a `/v2/<name>/<what>/<rest>` path.
fn split_v2<'p>(path: &'p str, what: &str) -> Option<(&'p str, &'p str)> {
    let rest = path.strip_prefix("/v2/")?;
    let marker = format!("/{what}/");
    let i = rest.rfind(&marker)?;
    Some((&rest[..i], &rest[i + marker.len()..]))
}

async fn handle(
    state: &Arc<Mutex<Registry>>,
    addr: SocketAddr,
    req: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let query = req.uri().query().unwrap_or("").to_owned();
    let authorization = req
        .headers()
        .get("authorization")
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned);
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return error(StatusCode::BAD_REQUEST, "BODY", "unreadable body"),
    };
    let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
    s.requests.push(format!("{method} {path}"));
    if path == "/token" {
        return token(&mut s, &query, authorization.as_deref());
    }
    if !path.starts_with("/v2/") {
        return match (&method, s.files.get(&path)) {
            (&Method::GET, Some(f)) => respond(StatusCode::OK, &[], f.clone()),
            _ => error(StatusCode::NOT_FOUND, "NOT_FOUND", "no such file"),
        };
    }
    // The repository a request reads or writes, and whether it writes.
    let repo = split_v2(&path, "manifests")
        .or_else(|| split_v2(&path, "blobs"))
        .map(|(n, _)| n.to_owned());
    let push = method == Method::POST || method == Method::PUT;
    if s.login.is_some() {
        let granted = authorization
            .as_deref()
            .and_then(|a| a.strip_prefix("Bearer "))
            .and_then(|t| s.tokens.get(t))
            .is_some_and(|(r, may_push)| {
                repo.as_deref().is_none_or(|n| n == r) && (!push || *may_push)
            });
        if !granted {
            let scope = repo.as_deref().map_or(String::new(), |n| {
                format!(
                    ",scope=\"repository:{n}:{}\"",
                    if push { "pull,push" } else { "pull" }
                )
            });
            let challenge =
                format!("Bearer realm=\"http://{addr}/token\",service=\"fake-registry\"{scope}");
            let mut r = error(
                StatusCode::UNAUTHORIZED,
                "UNAUTHORIZED",
                "authentication required",
            );
            if let Ok(v) = challenge.parse() {
                r.headers_mut().insert("www-authenticate", v);
            }
            return r;
        }
    }
    if path == "/v2/" {
        return respond(StatusCode::OK, &[], Bytes::new());
    }
    if let Some((name, reference)) = split_v2(&path, "manifests") {
        return manifests(&mut s, &method, name, reference, body);
    }
    if let Some((name, id)) = split_v2(&path, "uploads") {
        let name = name.strip_suffix("/blobs").unwrap_or(name).to_owned();
        return uploads(&mut s, &method, &name, id, &query, body);
    }
    if let Some((name, d)) = split_v2(&path, "blobs") {
        let Some(blob) = s.repos.get(name).and_then(|r| r.blobs.get(d)).cloned() else {
            return error(
                StatusCode::NOT_FOUND,
                "BLOB_UNKNOWN",
                "blob unknown to registry",
            );
        };
        let blob = if s.corrupt.contains(d) {
            let mut changed = blob.to_vec();
            changed.push(b'!');
            Bytes::from(changed)
        } else {
            blob
        };
        let headers = [
            ("docker-content-digest", d.to_owned()),
            ("content-length", blob.len().to_string()),
        ];
        return match method {
            Method::HEAD => respond(StatusCode::OK, &headers, Bytes::new()),
            Method::GET => respond(StatusCode::OK, &headers, blob),
            _ => error(StatusCode::METHOD_NOT_ALLOWED, "UNSUPPORTED", "method"),
        };
    }
    error(StatusCode::NOT_FOUND, "NAME_UNKNOWN", "unknown path")
}

fn token(s: &mut Registry, query: &str, authorization: Option<&str>) -> Response<Full<Bytes>> {
    let scope = query_param(query, "scope").unwrap_or_default();
    let Some(rest) = scope.strip_prefix("repository:") else {
        return error(
            StatusCode::BAD_REQUEST,
            "DENIED",
            "scope must name a repository",
        );
    };
    let (repo, actions) = rest.rsplit_once(':').unwrap_or((rest, ""));
    let push = actions.split(',').any(|a| a == "push");
    if push {
        use base64::Engine as _;
        let given = authorization
            .and_then(|a| a.strip_prefix("Basic "))
            .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
            .and_then(|d| String::from_utf8(d).ok());
        let expected = s.login.as_ref().map(|(u, p)| format!("{u}:{p}"));
        if given.is_none() || given != expected {
            return error(
                StatusCode::UNAUTHORIZED,
                "DENIED",
                "push needs the registry's login",
            );
        }
    }
    s.next += 1;
    let t = format!("token-{}", s.next);
    s.tokens.insert(t.clone(), (repo.to_owned(), push));
    respond(
        StatusCode::OK,
        &[("content-type", "application/json".to_owned())],
        Bytes::from(json!({ "token": t }).to_string()),
    )
}

fn manifests(
    s: &mut Registry,
    method: &Method,
    name: &str,
    reference: &str,
    body: Bytes,
) -> Response<Full<Bytes>> {
    match *method {
        Method::GET | Method::HEAD => {
            let found = s.repos.get(name).and_then(|r| {
                let d = resolve(r, reference)?;
                let (t, b) = r.manifests.get(&d)?;
                Some((d, t.clone(), b.clone()))
            });
            let Some((d, media_type, bytes)) = found else {
                return error(
                    StatusCode::NOT_FOUND,
                    "MANIFEST_UNKNOWN",
                    "manifest unknown",
                );
            };
            let headers = [
                ("content-type", media_type),
                ("docker-content-digest", d),
                ("content-length", bytes.len().to_string()),
            ];
            let body = if *method == Method::GET {
                bytes
            } else {
                Bytes::new()
            };
            respond(StatusCode::OK, &headers, body)
        }
        Method::PUT => {
            let d = digest(&body);
            if reference.starts_with("sha256:") && reference != d {
                return error(
                    StatusCode::BAD_REQUEST,
                    "DIGEST_INVALID",
                    "manifest digest mismatch",
                );
            }
            let Ok(m) = serde_json::from_slice::<Json>(&body) else {
                return error(StatusCode::BAD_REQUEST, "MANIFEST_INVALID", "not JSON");
            };
            let media_type = m["mediaType"].as_str().unwrap_or(OCI_MANIFEST).to_owned();
            let repo = s.repos.entry(name.to_owned()).or_default();
            let digests = |v: &Json| -> Vec<String> {
                v.as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|d| d["digest"].as_str().map(str::to_owned))
                    .collect()
            };
            let missing = if m.get("manifests").is_some() {
                digests(&m["manifests"])
                    .into_iter()
                    .find(|d| !repo.manifests.contains_key(d))
            } else {
                let mut blobs = digests(&m["layers"]);
                if let Some(c) = m["config"]["digest"].as_str() {
                    blobs.push(c.to_owned());
                }
                blobs.into_iter().find(|d| !repo.blobs.contains_key(d))
            };
            if let Some(d) = missing {
                return error(
                    StatusCode::BAD_REQUEST,
                    "MANIFEST_BLOB_UNKNOWN",
                    &format!("blob unknown to registry: {d}"),
                );
            }
            repo.manifests.insert(d.clone(), (media_type, body));
            if !reference.starts_with("sha256:") {
                repo.tags.insert(reference.to_owned(), d.clone());
            }
            respond(
                StatusCode::CREATED,
                &[
                    ("location", format!("/v2/{name}/manifests/{d}")),
                    ("docker-content-digest", d),
                ],
                Bytes::new(),
            )
        }
        _ => error(StatusCode::METHOD_NOT_ALLOWED, "UNSUPPORTED", "method"),
    }
}

fn uploads(
    s: &mut Registry,
    method: &Method,
    name: &str,
    id: &str,
    query: &str,
    body: Bytes,
) -> Response<Full<Bytes>> {
    match *method {
        Method::POST if id.is_empty() => {
            s.next += 1;
            let id = format!("upload-{}", s.next);
            s.uploads.insert(id.clone(), name.to_owned());
            respond(
                StatusCode::ACCEPTED,
                &[
                    ("location", format!("/v2/{name}/blobs/uploads/{id}")),
                    ("docker-upload-uuid", id),
                ],
                Bytes::new(),
            )
        }
        Method::PUT => {
            if s.uploads.get(id).map(String::as_str) != Some(name) {
                return error(
                    StatusCode::NOT_FOUND,
                    "BLOB_UPLOAD_UNKNOWN",
                    "upload unknown",
                );
            }
            let Some(want) = query_param(query, "digest") else {
                return error(StatusCode::BAD_REQUEST, "DIGEST_INVALID", "digest missing");
            };
            if digest(&body) != want {
                return error(StatusCode::BAD_REQUEST, "DIGEST_INVALID", "digest mismatch");
            }
            s.uploads.remove(id);
            s.repos
                .entry(name.to_owned())
                .or_default()
                .blobs
                .insert(want.clone(), body);
            respond(
                StatusCode::CREATED,
                &[
                    ("location", format!("/v2/{name}/blobs/{want}")),
                    ("docker-content-digest", want),
                ],
                Bytes::new(),
            )
        }
        _ => error(StatusCode::METHOD_NOT_ALLOWED, "UNSUPPORTED", "method"),
    }
}
