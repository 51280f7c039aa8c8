//! The GCS backend against an in-process fake of the GCS JSON API that,
//! unlike gcp-storage-emulator, enforces `ifGenerationMatch` preconditions.
//!
//! The emulator ignores preconditions on uploads (a second
//! `ifGenerationMatch=0` upload succeeds, a stale generation is accepted),
//! so the conditional half of the conformance suite and the race cannot be
//! shown against it. This fake implements the part of the JSON API the
//! backend uses, with GCS' documented precondition semantics, on 127.0.0.1.
//! It can also leave out the `x-goog-generation` download header, as the
//! emulator does, to exercise the backend's metadata-then-media read path.
#![cfg(feature = "gcs")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use kops_statestore::conformance;
use kops_statestore::gcs::{GcsConfig, GcsStore};
use kops_statestore::{PrefixStore, Store};
use percent_encoding::percent_decode_str;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

#[derive(Default)]
struct State {
    objects: BTreeMap<String, (Vec<u8>, u64)>,
    /// The bucket's settings as PATCH requests changed them.
    bucket_patch: serde_json::Map<String, serde_json::Value>,
    next_generation: u64,
    /// `Authorization` header of every request, in order.
    authorization: Vec<Option<String>>,
}

#[derive(Clone)]
struct Fake {
    state: Arc<Mutex<State>>,
    generation_header: bool,
    versioning: bool,
}

struct Request {
    authorization: Option<String>,
    method: String,
    path: String,
    query: BTreeMap<String, String>,
    body: Vec<u8>,
}

struct Response {
    status: u16,
    body: Vec<u8>,
    generation: Option<u64>,
}

fn json(status: u16, v: serde_json::Value) -> Response {
    Response {
        status,
        body: v.to_string().into_bytes(),
        generation: None,
    }
}

fn decode(s: &str) -> String {
    percent_decode_str(s).decode_utf8().unwrap().into_owned()
}

fn resource(name: &str, data: &[u8], generation: u64) -> serde_json::Value {
    serde_json::json!({
        "kind": "storage#object",
        "name": name,
        "bucket": "fake",
        "generation": generation.to_string(),
        "size": data.len().to_string(),
    })
}

impl Fake {
    fn handle(&self, req: Request) -> Response {
        let mut st = self.state.lock().unwrap();
        st.authorization.push(req.authorization.clone());
        let if_gen: Option<u64> = req
            .query
            .get("ifGenerationMatch")
            .map(|g| g.parse().unwrap());
        let segs: Vec<&str> = req.path.trim_start_matches('/').split('/').collect();
        match (req.method.as_str(), segs.as_slice()) {
            ("GET", ["storage", "v1", "b", _bucket]) => {
                let mut b =
                    serde_json::json!({"name": "fake", "versioning": {"enabled": self.versioning}});
                for (k, v) in &st.bucket_patch {
                    b[k] = v.clone();
                }
                json(200, b)
            }
            ("PATCH", ["storage", "v1", "b", _bucket]) => {
                let patch: serde_json::Value = serde_json::from_slice(&req.body).unwrap();
                for (k, v) in patch.as_object().unwrap() {
                    st.bucket_patch.insert(k.clone(), v.clone());
                }
                json(200, serde_json::json!({"name": "fake"}))
            }
            ("GET", ["storage", "v1", "b", _, "o"]) => {
                let prefix = req.query.get("prefix").cloned().unwrap_or_default();
                let start = req.query.get("pageToken").cloned().unwrap_or_default();
                // Small pages, so the backend's pagination is exercised.
                let page: Vec<_> = st
                    .objects
                    .iter()
                    .filter(|(k, _)| k.starts_with(&prefix) && k.as_str() > start.as_str())
                    .take(3)
                    .map(|(k, (d, g))| (k.clone(), resource(k, d, *g)))
                    .collect();
                let more = st
                    .objects
                    .keys()
                    .filter(|k| k.starts_with(&prefix))
                    .any(|k| page.last().is_some_and(|(last, _)| k > last));
                let mut v = serde_json::json!({
                    "kind": "storage#objects",
                    "items": page.iter().map(|(_, r)| r.clone()).collect::<Vec<_>>(),
                });
                if more {
                    v["nextPageToken"] = page.last().unwrap().0.clone().into();
                }
                json(200, v)
            }
            ("GET", ["storage", "v1", "b", _, "o", name]) => {
                let name = decode(name);
                let Some((data, generation)) = st.objects.get(&name) else {
                    return json(404, serde_json::json!({"error": "not found"}));
                };
                if if_gen.is_some_and(|g| g != *generation) {
                    return json(412, serde_json::json!({"error": "precondition"}));
                }
                if req.query.get("alt").map(String::as_str) == Some("media") {
                    Response {
                        status: 200,
                        body: data.clone(),
                        generation: self.generation_header.then_some(*generation),
                    }
                } else {
                    json(200, resource(&name, data, *generation))
                }
            }
            ("DELETE", ["storage", "v1", "b", _, "o", name]) => {
                let name = decode(name);
                let current = st.objects.get(&name).map(|(_, g)| *g).unwrap_or(0);
                if if_gen.is_some_and(|g| g != current) {
                    return json(412, serde_json::json!({"error": "precondition"}));
                }
                match st.objects.remove(&name) {
                    Some(_) => Response {
                        status: 204,
                        body: Vec::new(),
                        generation: None,
                    },
                    None => json(404, serde_json::json!({"error": "not found"})),
                }
            }
            ("POST", ["upload", "storage", "v1", "b", _, "o"]) => {
                let name = req.query.get("name").cloned().unwrap();
                let current = st.objects.get(&name).map(|(_, g)| *g).unwrap_or(0);
                if if_gen.is_some_and(|g| g != current) {
                    return json(412, serde_json::json!({"error": "precondition"}));
                }
                let data = match req.query.get("uploadType").map(String::as_str) {
                    Some("media") => req.body,
                    Some("multipart") => multipart_media(&req.body),
                    other => panic!("unexpected uploadType {other:?}"),
                };
                st.next_generation += 1;
                let generation = st.next_generation;
                let r = resource(&name, &data, generation);
                st.objects.insert(name, (data, generation));
                json(200, r)
            }
            (
                "GET",
                [
                    "computeMetadata",
                    "v1",
                    "instance",
                    "service-accounts",
                    "default",
                    "token",
                ],
            ) => {
                st.next_generation += 1;
                json(
                    200,
                    serde_json::json!({
                        "access_token": format!("token-{}", st.next_generation),
                        "expires_in": 3599,
                        "token_type": "Bearer"
                    }),
                )
            }
            // OAuth2's token endpoint: a refresh-token exchange (authorized_user files).
            ("POST", ["token"]) => {
                // google-cloud-auth sends the grant as JSON.
                let grant: serde_json::Value =
                    serde_json::from_slice(&req.body).unwrap_or_default();
                if grant["grant_type"] != "refresh_token" || grant["refresh_token"] != "refresh-1" {
                    return json(400, serde_json::json!({"error": "invalid_grant"}));
                }
                st.next_generation += 1;
                json(
                    200,
                    serde_json::json!({
                        "access_token": format!("user-token-{}", st.next_generation),
                        "expires_in": 3599,
                        "token_type": "Bearer"
                    }),
                )
            }
            (m, p) => panic!("fake GCS: unexpected request {m} {p:?}"),
        }
    }
}

/// The media part of a `multipart/related` upload body.
fn multipart_media(body: &[u8]) -> Vec<u8> {
    let text = String::from_utf8(body.to_vec()).unwrap();
    let boundary = text.lines().next().unwrap().to_string();
    let parts: Vec<&str> = text.split(boundary.as_str()).collect();
    // ["", metadata part, media part, "--\r\n"]
    let media = parts[2];
    let content = &media[media.find("\r\n\r\n").unwrap() + 4..];
    content.strip_suffix("\r\n").unwrap().as_bytes().to_vec()
}

async fn serve(fake: Fake) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (sock, _) = listener.accept().await.unwrap();
            sock.set_nodelay(true).unwrap();
            let fake = fake.clone();
            tokio::spawn(async move {
                let (rd, mut wr) = sock.into_split();
                let mut rd = BufReader::new(rd);
                loop {
                    let mut line = String::new();
                    if rd.read_line(&mut line).await.unwrap_or(0) == 0 {
                        return;
                    }
                    let mut it = line.split_whitespace();
                    let method = it.next().unwrap().to_string();
                    let target = it.next().unwrap().to_string();
                    let mut len = 0;
                    let mut authorization = None;
                    loop {
                        let mut h = String::new();
                        rd.read_line(&mut h).await.unwrap();
                        let h = h.trim_end();
                        if h.is_empty() {
                            break;
                        }
                        if let Some((k, v)) = h.split_once(':') {
                            if k.eq_ignore_ascii_case("content-length") {
                                len = v.trim().parse().unwrap();
                            } else if k.eq_ignore_ascii_case("authorization") {
                                authorization = Some(v.trim().to_string());
                            }
                        }
                    }
                    let mut body = vec![0; len];
                    rd.read_exact(&mut body).await.unwrap();
                    let (path, q) = target.split_once('?').unwrap_or((&target, ""));
                    let query = q
                        .split('&')
                        .filter(|kv| !kv.is_empty())
                        .map(|kv| {
                            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                            (decode(k), decode(v))
                        })
                        .collect();
                    let resp = fake.handle(Request {
                        authorization,
                        method,
                        path: path.to_string(),
                        query,
                        body,
                    });
                    let mut head = format!(
                        "HTTP/1.1 {} X\r\ncontent-length: {}\r\ncontent-type: application/json\r\n",
                        resp.status,
                        resp.body.len()
                    );
                    if let Some(g) = resp.generation {
                        head.push_str(&format!("x-goog-generation: {g}\r\n"));
                    }
                    head.push_str("\r\n");
                    // One write per response: split writes meet delayed ACKs.
                    let mut out = head.into_bytes();
                    out.extend_from_slice(&resp.body);
                    wr.write_all(&out).await.unwrap();
                }
            });
        }
    });
    format!("http://{addr}")
}

async fn fake(generation_header: bool, versioning: bool) -> String {
    serve(Fake {
        state: Arc::default(),
        generation_header,
        versioning,
    })
    .await
}

#[tokio::test]
async fn requests_carry_the_token_source_bearer_token() {
    use kops_statestore::gcs::StaticToken;
    let state: Arc<Mutex<State>> = Arc::default();
    let ep = serve(Fake {
        state: state.clone(),
        generation_header: true,
        versioning: true,
    })
    .await;
    let config = GcsConfig::default()
        .with_endpoint(&ep)
        .with_token_source(Arc::new(StaticToken::new("tok-123")));
    let s = GcsStore::new("fake", &config).unwrap();
    s.put("k", bytes::Bytes::from_static(b"v"), Default::default())
        .await
        .unwrap();
    s.get("k").await.unwrap();
    s.list("").await.unwrap();
    s.delete("k").await.unwrap();
    let seen = state.lock().unwrap().authorization.clone();
    assert_eq!(seen.len(), 4);
    assert!(
        seen.iter().all(|a| a.as_deref() == Some("Bearer tok-123")),
        "{seen:?}"
    );
    // Without a token source, nothing is sent.
    let anon = GcsStore::new("fake", &GcsConfig::default().with_endpoint(&ep)).unwrap();
    anon.list("").await.unwrap();
    assert_eq!(state.lock().unwrap().authorization.last(), Some(&None));
}

fn store(endpoint: &str, prefix: &str) -> Arc<dyn Store> {
    let gcs: Arc<dyn Store> =
        Arc::new(GcsStore::new("fake", &GcsConfig::default().with_endpoint(endpoint)).unwrap());
    Arc::new(PrefixStore::new(gcs, prefix).unwrap())
}

async fn full_suite(generation_header: bool) {
    let ep = fake(generation_header, true).await;
    conformance::run_single(store(&ep, "single")).await;
    conformance::lock_exclusion(store(&ep, "lock"), store(&ep, "lock")).await;
    conformance::force_unlock_lock(store(&ep, "force"), store(&ep, "force")).await;
    let r = conformance::race(store(&ep, "race"), store(&ep, "race"), 1000).await;
    eprintln!(
        "race[gcs/fake, generation header {generation_header}]: {} increments, {} conflicts retried, {:.2?}",
        r.final_value, r.conflicts, r.elapsed
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcs_fake_conformance_with_generation_header() {
    full_suite(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcs_fake_conformance_without_generation_header() {
    full_suite(false).await;
}

#[tokio::test]
async fn gcs_fake_versioning_warning() {
    let on = fake(true, true).await;
    assert!(store(&on, "p").warnings().await.unwrap().is_empty());
    let off = fake(true, false).await;
    let w = store(&off, "p").warnings().await.unwrap();
    assert_eq!(w.len(), 1);
    assert!(w[0].to_string().starts_with("gs://fake: "), "{}", w[0]);
}

/// The safety checks of a GCS bucket: versioning and uniform bucket-level access, each
/// failed with its fix; `fix_safety` turns both on in one PATCH and says so; then both
/// pass and there is nothing left to fix.
#[tokio::test]
async fn gcs_fake_safety_checks_and_fix() {
    use kops_statestore::CheckStatus;
    let off = fake(true, false).await;
    let s = store(&off, "p");
    let checks = s.safety_checks().await.unwrap();
    let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["versioning", "uniform bucket-level access"]);
    for c in &checks {
        match &c.status {
            CheckStatus::Failed { fix } => assert!(
                fix.contains("gcloud storage buckets update gs://fake"),
                "{fix}"
            ),
            other => panic!("{}: {other:?}", c.name),
        }
    }
    let changed = s.fix_safety().await.unwrap();
    assert_eq!(changed.len(), 2, "{changed:?}");
    let checks = s.safety_checks().await.unwrap();
    assert!(
        checks.iter().all(|c| c.status == CheckStatus::Passed),
        "{checks:?}"
    );
    assert!(s.fix_safety().await.unwrap().is_empty());
}

#[derive(Debug)]
struct StepClock(std::sync::Mutex<std::time::SystemTime>);

impl kops_statestore::Clock for StepClock {
    fn now(&self) -> std::time::SystemTime {
        *self.0.lock().unwrap()
    }
}

#[tokio::test]
async fn metadata_server_tokens_are_cached_until_expiry() {
    use kops_statestore::gcs::{GcsTokenSource, MetadataServerToken};
    let ep = fake(true, true).await;
    let clock = Arc::new(StepClock(std::sync::Mutex::new(std::time::UNIX_EPOCH)));
    let src = MetadataServerToken::new(&ep, clock.clone()).unwrap();
    let first = src.token().await.unwrap();
    assert_eq!(first, "token-1");
    *clock.0.lock().unwrap() += std::time::Duration::from_secs(3000);
    assert_eq!(src.token().await.unwrap(), "token-1", "still valid: cached");
    *clock.0.lock().unwrap() += std::time::Duration::from_secs(600);
    assert_eq!(src.token().await.unwrap(), "token-2", "expired: refreshed");
    assert!(
        !format!("{src:?}").contains("token-2"),
        "Debug shows the token"
    );
}

/// A store on the fake authenticated with `creds`, after a put, get, list and delete:
/// the `Authorization` headers GCS saw.
async fn authorization_seen(creds: kops_statestore::gcs::GoogleCredentials) -> Vec<Option<String>> {
    let state: Arc<Mutex<State>> = Arc::default();
    let ep = serve(Fake {
        state: state.clone(),
        generation_header: true,
        versioning: true,
    })
    .await;
    let config = GcsConfig::default()
        .with_endpoint(&ep)
        .with_token_source(Arc::new(creds));
    let s = GcsStore::new("fake", &config).unwrap();
    s.put("k", bytes::Bytes::from_static(b"v"), Default::default())
        .await
        .unwrap();
    s.get("k").await.unwrap();
    s.list("").await.unwrap();
    s.delete("k").await.unwrap();
    state.lock().unwrap().authorization.clone()
}

fn b64url(s: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .unwrap()
}

/// A service-account key file: every request carries a JWT the key signed (RS256), issued
/// by the account for the storage scope; no token endpoint is asked (google-cloud-auth
/// signs its own JWTs for service accounts).
#[tokio::test]
async fn service_account_keys_sign_the_requests() {
    let dir = tempfile_dir();
    let key = dir.join("key.pem");
    let ok = std::process::Command::new("openssl")
        .args([
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-out",
        ])
        .arg(&key)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        assert!(
            std::env::var("KOPS_TEST_REQUIRE_EMULATORS").as_deref() != Ok("1"),
            "openssl is required to make a test key"
        );
        eprintln!("skipping: openssl cannot make an RSA key");
        return;
    }
    let pem = std::fs::read_to_string(&key).unwrap();
    let sa = serde_json::json!({
        "type": "service_account",
        "project_id": "kops-test",
        "private_key_id": "key-1",
        "private_key": pem,
        "client_email": "kops@kops-test.iam.gserviceaccount.com",
        "client_id": "1",
        // Never asked; loopback all the same.
        "token_uri": "http://127.0.0.1:9/token",
    });
    let creds =
        kops_statestore::gcs::GoogleCredentials::from_json(sa.to_string().as_bytes(), "test key")
            .unwrap();
    assert!(!format!("{creds:?}").contains("PRIVATE KEY"));
    let seen = authorization_seen(creds).await;
    assert_eq!(seen.len(), 4, "{seen:?}");
    let jwt = seen[0]
        .as_deref()
        .unwrap()
        .strip_prefix("Bearer ")
        .unwrap()
        .to_string();
    assert!(
        seen.iter()
            .all(|a| a.as_deref() == Some(&format!("Bearer {jwt}"))),
        "one cached token"
    );
    let parts: Vec<&str> = jwt.split('.').collect();
    assert_eq!(parts.len(), 3, "{jwt}");
    let header: serde_json::Value = serde_json::from_slice(&b64url(parts[0])).unwrap();
    let claims: serde_json::Value = serde_json::from_slice(&b64url(parts[1])).unwrap();
    assert_eq!(header["alg"], "RS256");
    assert_eq!(header["kid"], "key-1");
    assert_eq!(claims["iss"], "kops@kops-test.iam.gserviceaccount.com");
    assert!(
        claims["scope"]
            .as_str()
            .unwrap_or_default()
            .contains("devstorage.read_write"),
        "{claims}"
    );
    // The signature verifies with the key's public half.
    std::fs::write(dir.join("signed"), format!("{}.{}", parts[0], parts[1])).unwrap();
    std::fs::write(dir.join("sig"), b64url(parts[2])).unwrap();
    let public = dir.join("pub.pem");
    assert!(
        std::process::Command::new("openssl")
            .args(["pkey", "-pubout", "-in"])
            .arg(&key)
            .arg("-out")
            .arg(&public)
            .status()
            .unwrap()
            .success()
    );
    let verified = std::process::Command::new("openssl")
        .args(["dgst", "-sha256", "-verify"])
        .arg(&public)
        .arg("-signature")
        .arg(dir.join("sig"))
        .arg(dir.join("signed"))
        .output()
        .unwrap();
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
    // The same key for every Google API: its JWTs carry the scope asked for instead.
    let creds = kops_statestore::gcs::GoogleCredentials::from_json_with_scopes(
        sa.to_string().as_bytes(),
        "test key",
        [kops_statestore::gcs::CLOUD_PLATFORM_SCOPE],
    )
    .unwrap();
    let seen = authorization_seen(creds).await;
    let jwt = seen[0].as_deref().unwrap().strip_prefix("Bearer ").unwrap();
    let claims: serde_json::Value =
        serde_json::from_slice(&b64url(jwt.split('.').nth(1).unwrap())).unwrap();
    let scope = claims["scope"].as_str().unwrap_or_default();
    assert!(scope.contains("auth/cloud-platform"), "{claims}");
    assert!(!scope.contains("devstorage"), "{claims}");
}

/// An `authorized_user` file (`gcloud auth application-default login`): its refresh
/// token is exchanged at its `token_uri` (the fake, on loopback) and the access token
/// authenticates the requests.
#[tokio::test]
async fn authorized_user_files_exchange_their_refresh_token() {
    let state: Arc<Mutex<State>> = Arc::default();
    let token_ep = serve(Fake {
        state: state.clone(),
        generation_header: true,
        versioning: true,
    })
    .await;
    let adc = serde_json::json!({
        "type": "authorized_user",
        "client_id": "client-1",
        "client_secret": "secret-1",
        "refresh_token": "refresh-1",
        "token_uri": format!("{token_ep}/token"),
    });
    let creds =
        kops_statestore::gcs::GoogleCredentials::from_json(adc.to_string().as_bytes(), "adc.json")
            .unwrap();
    assert!(!format!("{creds:?}").contains("secret-1"));
    let seen = authorization_seen(creds).await;
    assert!(
        seen.iter()
            .all(|a| a.as_deref() == Some("Bearer user-token-1")),
        "{seen:?}"
    );
    // A rejected refresh token is an authentication error naming the file.
    let bad = serde_json::json!({
        "type": "authorized_user",
        "client_id": "client-1",
        "client_secret": "secret-1",
        "refresh_token": "revoked",
        "token_uri": format!("{token_ep}/token"),
    });
    let creds =
        kops_statestore::gcs::GoogleCredentials::from_json(bad.to_string().as_bytes(), "adc.json")
            .unwrap();
    let s = GcsStore::new(
        "fake",
        &GcsConfig::default()
            .with_endpoint(&token_ep)
            .with_token_source(Arc::new(creds)),
    )
    .unwrap();
    let e = s.list("").await.unwrap_err();
    assert!(
        matches!(
            &e,
            kops_statestore::Error::Unauthenticated { service: "GCS", .. }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("adc.json"), "{e}");
    assert!(
        !e.to_string().contains("secret-1") && !e.to_string().contains("revoked"),
        "{e}"
    );
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!(
        "kops-gcs-auth-{}-{}",
        std::process::id(),
        rand_suffix()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn rand_suffix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}
