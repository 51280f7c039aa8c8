//! The HTTP side of the fake API server: routing, JSON, status objects.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::store::{Eviction, KubeObjects, KubeRequest, set_node_ready};
use super::tls::KubeTls;

/// A running fake API server. Dropping it stops the server.
#[derive(Debug)]
pub struct FakeKube {
    addr: SocketAddr,
    https: bool,
    state: Arc<Mutex<KubeObjects>>,
    accept: JoinHandle<()>,
}

impl Drop for FakeKube {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

type Reply = Response<Full<Bytes>>;

impl FakeKube {
    /// Binds a free port on 127.0.0.1 and serves until dropped (needs a tokio runtime).
    pub async fn start() -> std::io::Result<FakeKube> {
        let state = Arc::new(Mutex::new(KubeObjects::default()));
        let (addr, accept) = crate::serve::serve(state.clone(), |state, _, req| async move {
            handle(&state, req).await
        })
        .await?;
        Ok(FakeKube {
            addr,
            https: false,
            state,
            accept,
        })
    }

    /// Binds a free port on 127.0.0.1 and serves HTTPS with `tls` until dropped (needs a
    /// tokio runtime). Requests are authenticated as kube-apiserver authenticates them (a
    /// client certificate of the client CA, or a bearer token), else `401 Unauthorized`.
    pub async fn start_tls(tls: &KubeTls) -> std::io::Result<FakeKube> {
        let state = Arc::new(Mutex::new(KubeObjects::default()));
        let (addr, accept) = super::tls::serve(state.clone(), tls).await?;
        Ok(FakeKube {
            addr,
            https: true,
            state,
            accept,
        })
    }

    /// `http://127.0.0.1:<port>`, or `https://` when serving TLS.
    pub fn url(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// The objects, locked (a test may read or change them directly).
    pub fn objects(&self) -> MutexGuard<'_, KubeObjects> {
        match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Adds or replaces a node.
    pub fn put_node(&self, mut node: Node) {
        let mut o = self.objects();
        node.metadata.resource_version = Some(o.bump());
        let name = node.metadata.name.clone().unwrap_or_default();
        o.nodes.insert(name, node);
        o.schedule_pending();
    }

    /// Sets a node's `Ready` condition; `false` when there is no such node.
    pub fn set_ready(&self, node: &str, ready: bool) -> bool {
        let mut o = self.objects();
        let Some(n) = o.nodes.get_mut(node) else {
            return false;
        };
        set_node_ready(n, ready);
        o.schedule_pending();
        true
    }

    /// Removes a node and its pods (controllers recreate theirs elsewhere).
    pub fn delete_node(&self, node: &str) -> Option<Node> {
        self.objects().delete_node(node)
    }

    /// Adds or replaces a pod (namespace `default` when unset).
    pub fn put_pod(&self, mut pod: Pod) {
        let mut o = self.objects();
        let ns = pod
            .metadata
            .namespace
            .get_or_insert_with(|| "default".into())
            .clone();
        pod.metadata.resource_version = Some(o.bump());
        let name = pod.metadata.name.clone().unwrap_or_default();
        pod.metadata
            .uid
            .get_or_insert_with(|| format!("uid-{name}"));
        o.pods.insert((ns, name), pod);
    }

    /// Adds or replaces a PodDisruptionBudget.
    pub fn put_pdb(&self, mut pdb: PodDisruptionBudget) {
        let mut o = self.objects();
        let ns = pdb
            .metadata
            .namespace
            .get_or_insert_with(|| "default".into())
            .clone();
        let name = pdb.metadata.name.clone().unwrap_or_default();
        o.pdbs.insert((ns, name), pdb);
    }

    /// Every request but the reads so far, in order.
    pub fn requests(&self) -> Vec<KubeRequest> {
        self.objects().requests.clone()
    }

    /// Every eviction requested so far.
    pub fn evictions(&self) -> Vec<Eviction> {
        self.objects().evictions.clone()
    }
}

fn reply(code: StatusCode, body: &Value) -> Reply {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())));
    *r.status_mut() = code;
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

fn ok<T: serde::Serialize>(v: &T) -> Reply {
    match serde_json::to_value(v) {
        Ok(v) => reply(StatusCode::OK, &v),
        Err(e) => status(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalError",
            &e.to_string(),
        ),
    }
}

fn status(code: StatusCode, reason: &str, message: &str) -> Reply {
    reply(
        code,
        &json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure", "message": message, "reason": reason, "code": code.as_u16(),
        }),
    )
}

fn not_found(kind: &str, name: &str) -> Reply {
    status(
        StatusCode::NOT_FOUND,
        "NotFound",
        &format!("{kind} \"{name}\" not found"),
    )
}

fn list<T: serde::Serialize>(kind: &str, api_version: &str, rv: u64, items: Vec<T>) -> Reply {
    let items: Vec<Value> = items
        .iter()
        .filter_map(|i| serde_json::to_value(i).ok())
        .collect();
    reply(
        StatusCode::OK,
        &json!({
            "kind": kind, "apiVersion": api_version,
            "metadata": {"resourceVersion": rv.to_string()}, "items": items,
        }),
    )
}

/// RFC 7386 JSON merge patch.
fn merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

fn query_param(query: Option<&str>, key: &str) -> Option<String> {
    query?.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == key).then(|| v.replace("%3D", "=").replace("%2F", "/"))
    })
}

fn node_selector(query: Option<&str>) -> Option<String> {
    let fs = query_param(query, "fieldSelector")?;
    fs.strip_prefix("spec.nodeName=").map(str::to_owned)
}

/// Discovery's `APIResourceList` of `group_version`: each resource's name, whether it is
/// namespaced, its kind and short names.
fn resources(group_version: &str, list: &[(&str, bool, &str, &[&str])]) -> Value {
    let resources: Vec<Value> = list
        .iter()
        .map(|(name, namespaced, kind, short)| {
            let verbs: &[&str] = if name.contains('/') {
                &["create"]
            } else {
                &["create", "delete", "get", "list", "patch", "update"]
            };
            json!({
                "name": name, "singularName": "", "namespaced": namespaced, "kind": kind,
                "verbs": verbs, "shortNames": short,
            })
        })
        .collect();
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources})
}

/// kube-apiserver's answer to a request no authenticator accepted.
pub(super) fn unauthorized() -> Reply {
    status(StatusCode::UNAUTHORIZED, "Unauthorized", "Unauthorized")
}

pub(super) async fn handle(state: &Mutex<KubeObjects>, req: Request<Incoming>) -> Reply {
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let query = req.uri().query().map(str::to_owned);
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return status(StatusCode::BAD_REQUEST, "BadRequest", &e.to_string()),
    };
    let mut o = match state.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    if method != Method::GET {
        o.requests.push(KubeRequest {
            method: method.to_string(),
            path: path.clone(),
            body: String::from_utf8_lossy(&body).into_owned(),
        });
    }
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let q = query.as_deref();
    if method == Method::GET
        && let Some(r) = discovery(&segs)
    {
        return r;
    }
    match (method.clone(), segs.as_slice()) {
        (Method::GET, ["api", "v1", "nodes"]) => {
            let rv = o.resource_version;
            list("NodeList", "v1", rv, o.nodes.values().cloned().collect())
        }
        (Method::POST, ["api", "v1", "nodes"]) => create_node(&mut o, &body),
        (m, ["api", "v1", "nodes", name]) => node(&mut o, m, (*name).to_owned(), &body),
        (Method::GET, ["api", "v1", "pods"]) => {
            let node = node_selector(q);
            let rv = o.resource_version;
            let pods = o
                .pods
                .values()
                .filter(|p| {
                    node.as_ref().is_none_or(|n| {
                        p.spec.as_ref().and_then(|s| s.node_name.as_ref()) == Some(n)
                    })
                })
                .cloned()
                .collect();
            list("PodList", "v1", rv, pods)
        }
        (Method::GET, ["api", "v1", "namespaces", ns, "pods"]) => {
            let node = node_selector(q);
            let rv = o.resource_version;
            let pods = o
                .pods
                .iter()
                .filter(|((pns, _), p)| {
                    pns == ns
                        && node.as_ref().is_none_or(|n| {
                            p.spec.as_ref().and_then(|s| s.node_name.as_ref()) == Some(n)
                        })
                })
                .map(|(_, p)| p.clone())
                .collect();
            list("PodList", "v1", rv, pods)
        }
        (Method::POST, ["api", "v1", "namespaces", ns, "pods"]) => {
            match serde_json::from_slice::<Pod>(&body) {
                Ok(mut p) => {
                    let name = p.metadata.name.clone().unwrap_or_default();
                    p.metadata.namespace = Some((*ns).to_owned());
                    p.metadata.resource_version = Some(o.bump());
                    o.pods.insert(((*ns).to_owned(), name), p.clone());
                    reply(
                        StatusCode::CREATED,
                        &serde_json::to_value(&p).unwrap_or_default(),
                    )
                }
                Err(e) => status(StatusCode::BAD_REQUEST, "BadRequest", &e.to_string()),
            }
        }
        (Method::GET, ["api", "v1", "namespaces", ns, "pods", name]) => {
            match o.pods.get(&((*ns).to_owned(), (*name).to_owned())) {
                Some(p) => ok(p),
                None => not_found("pods", name),
            }
        }
        (Method::DELETE, ["api", "v1", "namespaces", ns, "pods", name]) => {
            match o.delete_pod(ns, name) {
                Some(p) => ok(&p),
                None => not_found("pods", name),
            }
        }
        (Method::POST, ["api", "v1", "namespaces", ns, "pods", name, "eviction"]) => {
            evict(&mut o, ns, name)
        }
        (Method::GET, ["apis", "policy", "v1", "poddisruptionbudgets"]) => {
            let rv = o.resource_version;
            list(
                "PodDisruptionBudgetList",
                "policy/v1",
                rv,
                o.pdbs.values().cloned().collect(),
            )
        }
        (
            Method::GET,
            [
                "apis",
                "policy",
                "v1",
                "namespaces",
                ns,
                "poddisruptionbudgets",
            ],
        ) => {
            let rv = o.resource_version;
            let items = o
                .pdbs
                .iter()
                .filter(|((pns, _), _)| pns == ns)
                .map(|(_, p)| p.clone())
                .collect();
            list("PodDisruptionBudgetList", "policy/v1", rv, items)
        }
        (
            Method::POST,
            [
                "apis",
                "policy",
                "v1",
                "namespaces",
                ns,
                "poddisruptionbudgets",
            ],
        ) => create_pdb(&mut o, ns, &body),
        _ => status(
            StatusCode::NOT_FOUND,
            "NotFound",
            &format!("the server could not find the requested resource ({method} {path})"),
        ),
    }
}

/// `POST /apis/policy/v1/namespaces/<ns>/poddisruptionbudgets`.
fn create_pdb(o: &mut KubeObjects, ns: &str, body: &[u8]) -> Reply {
    match serde_json::from_slice::<PodDisruptionBudget>(body) {
        Ok(mut p) => {
            p.metadata.namespace = Some(ns.to_owned());
            let name = p.metadata.name.clone().unwrap_or_default();
            o.pdbs.insert((ns.to_owned(), name), p.clone());
            reply(
                StatusCode::CREATED,
                &serde_json::to_value(&p).unwrap_or_default(),
            )
        }
        Err(e) => status(StatusCode::BAD_REQUEST, "BadRequest", &e.to_string()),
    }
}

/// The discovery documents: version, API groups and their resources.
fn discovery(segs: &[&str]) -> Option<Reply> {
    Some(match segs {
        ["version"] => reply(
            StatusCode::OK,
            &json!({"major": "1", "minor": "34", "gitVersion": "v1.34.0", "platform": "linux/amd64"}),
        ),
        ["api"] => reply(
            StatusCode::OK,
            &json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}),
        ),
        ["apis"] => reply(
            StatusCode::OK,
            &json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": [{
                "name": "policy",
                "versions": [{"groupVersion": "policy/v1", "version": "v1"}],
                "preferredVersion": {"groupVersion": "policy/v1", "version": "v1"},
            }]}),
        ),
        ["api", "v1"] => reply(
            StatusCode::OK,
            &resources(
                "v1",
                &[
                    ("nodes", false, "Node", &["no"]),
                    ("pods", true, "Pod", &["po"]),
                    ("pods/eviction", true, "Eviction", &[]),
                ],
            ),
        ),
        ["apis", "policy", "v1"] => reply(
            StatusCode::OK,
            &resources(
                "policy/v1",
                &[(
                    "poddisruptionbudgets",
                    true,
                    "PodDisruptionBudget",
                    &["pdb"],
                )],
            ),
        ),
        _ => return None,
    })
}

/// `POST /api/v1/nodes`.
fn create_node(o: &mut KubeObjects, body: &[u8]) -> Reply {
    match serde_json::from_slice::<Node>(body) {
        Ok(mut n) => {
            let name = n.metadata.name.clone().unwrap_or_default();
            if o.nodes.contains_key(&name) {
                return status(
                    StatusCode::CONFLICT,
                    "AlreadyExists",
                    &format!("nodes \"{name}\" already exists"),
                );
            }
            n.metadata.resource_version = Some(o.bump());
            o.nodes.insert(name, n.clone());
            reply(
                StatusCode::CREATED,
                &serde_json::to_value(&n).unwrap_or_default(),
            )
        }
        Err(e) => status(StatusCode::BAD_REQUEST, "BadRequest", &e.to_string()),
    }
}

/// `GET`, `DELETE`, `PATCH` or `PUT /api/v1/nodes/<name>`.
fn node(o: &mut KubeObjects, m: Method, name: String, body: &[u8]) -> Reply {
    match m {
        Method::GET => match o.nodes.get(&name) {
            Some(n) => ok(n),
            None => not_found("nodes", &name),
        },
        Method::DELETE => match o.delete_node(&name) {
            Some(n) => ok(&n),
            None => not_found("nodes", &name),
        },
        Method::PATCH | Method::PUT => {
            let Some(current) = o.nodes.get(&name) else {
                return not_found("nodes", &name);
            };
            let patch: Value = match serde_json::from_slice(body) {
                Ok(v) => v,
                Err(e) => {
                    return status(StatusCode::BAD_REQUEST, "BadRequest", &e.to_string());
                }
            };
            let mut v = serde_json::to_value(current).unwrap_or_default();
            if m == Method::PUT {
                v = patch;
            } else {
                merge(&mut v, &patch);
            }
            match serde_json::from_value::<Node>(v) {
                Ok(mut n) => {
                    n.metadata.resource_version = Some(o.bump());
                    o.nodes.insert(name, n.clone());
                    o.schedule_pending();
                    ok(&n)
                }
                Err(e) => status(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", &e.to_string()),
            }
        }
        _ => status(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            "method not allowed",
        ),
    }
}

/// `POST /api/v1/namespaces/<ns>/pods/<name>/eviction`: refused (429) where a disruption
/// budget does not allow it.
fn evict(o: &mut KubeObjects, ns: &str, name: &str) -> Reply {
    match o.evict(ns, name) {
        Ok(true) => reply(
            StatusCode::CREATED,
            &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
        ),
        Ok(false) => not_found("pods", name),
        Err((_pdb, message)) => reply(
            StatusCode::TOO_MANY_REQUESTS,
            &json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Cannot evict pod as it would violate the pod's disruption budget.",
                "reason": "TooManyRequests", "code": 429,
                "details": {"causes": [{"reason": "DisruptionBudget", "message": message}]},
            }),
        ),
    }
}
