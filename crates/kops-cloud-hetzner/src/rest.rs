//! [`RestHetzner`]: a thin client of the Hetzner Cloud API (`https://api.hetzner.cloud/v1`)
//! over reqwest, implementing [`HetznerCloud`].
//!
//! - **Auth**: a bearer token, `HCLOUD_TOKEN` ([`RestConfig::from_env`]); the endpoint is
//!   `HCLOUD_ENDPOINT` when set (the variable Hetzner's own CLI reads), for a local fake.
//!   The token is never logged or put in an error.
//! - **Lists** follow the pagination (`page`, `per_page` 50, `meta.pagination.next_page`)
//!   and send a query's tag filters as the API's `label_selector` (`k=v,k2`), one name as
//!   `name`; the answer is filtered again exactly.
//! - **Parts** (a network's subnet, a load balancer's network attachment, service and
//!   target) are read from their owner and written with the owner's actions
//!   (`add_subnet`, `attach_to_network`, `add_service`, `add_target` and their inverses).
//! - **Actions** a call starts are waited on (`GET /actions/{id}`) until they succeed; a
//!   failed action is the call's error, with the action's error code.
//! - **Rate limits**: a `429` (`rate_limit_exceeded`) is retried after the
//!   `RateLimit-Reset` time the API sends (capped by the retry policy's largest delay), as
//!   are `503`s and connection failures, with the workspace's [`RetryPolicy`].
//! - **Errors** map the API's error codes to [`CloudError`] (module docs of
//!   [`crate::cloud`]); an `invalid_input` names the first field the API lists.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use kops_tasks::resource::immutable_changes;
use kops_tasks::retry::RetryPolicy;
use reqwest::Method;
use serde_json::{Value as Json, json};

use crate::cloud::{
    CloudError, CloudResult, CreateRequest, HetznerCloud, HetznerResourceType, ListQuery, Resource,
    ResourceCloud, UpdateRequest,
};

use HetznerResourceType as R;

/// The API's root.
pub const DEFAULT_ENDPOINT: &str = "https://api.hetzner.cloud/v1";
/// Items per page.
const PER_PAGE: &str = "50";

/// How [`RestHetzner`] reaches the API.
#[derive(Clone)]
#[non_exhaustive]
pub struct RestConfig {
    /// The API's root, `https://api.hetzner.cloud/v1` unless set.
    pub endpoint: String,
    token: String,
    /// How throttled and unavailable calls are retried.
    pub retry: RetryPolicy,
    /// How often a running action is polled.
    pub action_poll: Duration,
    /// How long an action may run.
    pub action_timeout: Duration,
    /// How long a shut-down server may take to stop before it is deleted anyway (kOps
    /// waits 150 s).
    pub shutdown_timeout: Duration,
}

impl std::fmt::Debug for RestConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestConfig")
            .field("endpoint", &self.endpoint)
            .field("token", &"<sensitive>")
            .finish_non_exhaustive()
    }
}

impl RestConfig {
    /// A configuration with `token` and the defaults.
    pub fn new(token: impl Into<String>) -> Self {
        RestConfig {
            endpoint: DEFAULT_ENDPOINT.to_owned(),
            token: token.into(),
            retry: RetryPolicy::default()
                .with_backoff(Duration::from_millis(500), Duration::from_secs(30))
                .with_max_attempts(8),
            action_poll: Duration::from_millis(500),
            action_timeout: Duration::from_secs(600),
            shutdown_timeout: Duration::from_secs(150),
        }
    }

    /// The token from `HCLOUD_TOKEN` and the endpoint from `HCLOUD_ENDPOINT` when set; an
    /// error naming `HCLOUD_TOKEN` when it is missing.
    pub fn from_env() -> CloudResult<Self> {
        let token = std::env::var("HCLOUD_TOKEN")
            .ok()
            .filter(|t| !t.trim().is_empty())
            .ok_or_else(|| {
                CloudError::invalid(
                    "HCLOUD_TOKEN",
                    "not set: the Hetzner Cloud API needs a token (Security > API tokens in the console)",
                )
            })?;
        let mut cfg = RestConfig::new(token.trim());
        if let Ok(e) = std::env::var("HCLOUD_ENDPOINT")
            && !e.trim().is_empty()
        {
            cfg = cfg.with_endpoint(e.trim());
        }
        Ok(cfg)
    }

    /// Another API root (a local fake).
    pub fn with_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = endpoint.into().trim_end_matches('/').to_owned();
        self
    }

    /// Another retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Another action polling interval.
    pub fn with_action_poll(mut self, poll: Duration) -> Self {
        self.action_poll = poll;
        self
    }
}

/// The Hetzner Cloud API client (module docs).
#[derive(Debug)]
pub struct RestHetzner {
    http: reqwest::Client,
    cfg: RestConfig,
}

/// One failed call as the API reports it (`{"error": {"code", "message", "details"}}`),
/// kept as the source of a [`CloudError`].
#[derive(Debug)]
struct ApiError {
    status: u16,
    code: String,
    message: String,
    field: Option<String>,
    /// `RateLimit-Reset`, seconds since the epoch.
    reset: Option<u64>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status, self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

impl ApiError {
    fn from_body(status: u16, body: &str, reset: Option<u64>) -> Self {
        let v: Json = serde_json::from_str(body).unwrap_or(Json::Null);
        let e = &v["error"];
        let text = |j: &Json| j.as_str().unwrap_or_default().to_owned();
        ApiError {
            status,
            code: text(&e["code"]),
            message: text(&e["message"]),
            field: e["details"]["fields"][0]["name"]
                .as_str()
                .map(str::to_owned),
            reset,
        }
    }

    fn into_cloud(self, operation: &str, what: &str) -> CloudError {
        let operation = operation.to_owned();
        let what = what.to_owned();
        match (self.code.as_str(), self.status) {
            ("rate_limit_exceeded", _) | (_, 429) => CloudError::Throttled {
                operation,
                source: Some(Box::new(self)),
            },
            (
                "unavailable" | "timeout" | "locked" | "server_error" | "service_error"
                | "maintenance",
                _,
            )
            | (_, 500..=599) => CloudError::Unavailable {
                operation,
                source: Some(Box::new(self)),
            },
            ("not_found", _) | (_, 404) => CloudError::NotFound { what },
            ("uniqueness_error", _) => CloudError::AlreadyExists {
                operation,
                what,
                source: Some(Box::new(self)),
            },
            ("conflict" | "resource_in_use" | "protected", _) | (_, 409) => CloudError::Conflict {
                operation,
                what,
                reason: format!("{}: {}", self.code, self.message),
                source: Some(Box::new(self)),
            },
            ("resource_limit_exceeded", _) => CloudError::Quota {
                operation,
                limit: self.message.clone(),
                source: Some(Box::new(self)),
            },
            ("forbidden" | "unauthorized" | "token_readonly", _) | (_, 401 | 403) => {
                CloudError::PermissionDenied {
                    operation: format!("{operation} (check HCLOUD_TOKEN)"),
                    source: Some(Box::new(self)),
                }
            }
            ("invalid_input" | "json_error", _) | (_, 400 | 422) => CloudError::Invalid {
                field: self
                    .field
                    .clone()
                    .unwrap_or_else(|| format!("{what}: request")),
                message: format!("{}: {}", self.code, self.message),
            },
            _ => CloudError::Other {
                operation,
                source: Some(Box::new(self)),
            },
        }
    }
}

fn text(j: &Json) -> Option<String> {
    match j {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// An ID the API takes as a number.
fn number(id: &str, what: &str) -> CloudResult<i64> {
    id.parse()
        .map_err(|_| CloudError::invalid(what, format!("{id:?} is not a Hetzner ID")))
}

fn labels_of(j: &Json) -> BTreeMap<String, String> {
    j.as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

/// The answer's object under `key` as a [`Resource`] of `rt`.
fn resource(rt: HetznerResourceType, j: &Json) -> Resource {
    let mut r = Resource::new(rt, text(&j["id"]).unwrap_or_default());
    r.name = j["name"].as_str().map(str::to_owned);
    r.tags = labels_of(&j["labels"]).into();
    let mut set = |k: &str, v: Json| {
        if !v.is_null() {
            r.attrs.insert(k, v);
        }
    };
    match rt {
        R::Network => set("ip_range", j["ip_range"].clone()),
        R::Firewall => {
            let rules: Vec<Json> = j["rules"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| {
                    json!({ "direction": r["direction"], "port": r["port"], "protocol": r["protocol"],
                        "source_ips": r["source_ips"] })
                })
                .collect();
            set("rule", Json::Array(rules));
            let applied: Vec<Json> = j["applied_to"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|a| a["type"] == "label_selector")
                .map(|a| json!({ "label_selector": a["label_selector"]["selector"] }))
                .collect();
            set("apply_to", Json::Array(applied));
        }
        R::LoadBalancer => {
            set(
                "load_balancer_type",
                j["load_balancer_type"]["name"].clone(),
            );
            set("location", j["location"]["name"].clone());
            set("ipv4", j["public_net"]["ipv4"]["ip"].clone());
            set("private_ip", j["private_net"][0]["ip"].clone());
        }
        R::SshKey => {
            set("public_key", j["public_key"].clone());
            set("fingerprint", j["fingerprint"].clone());
        }
        R::Volume => {
            set("location", j["location"]["name"].clone());
            set("size", j["size"].clone());
        }
        R::Server => {
            set("location", j["datacenter"]["location"]["name"].clone());
            set("server_type", j["server_type"]["name"].clone());
            set("image", j["image"]["name"].clone());
            set("status", j["status"].clone());
            set("private_ip", j["private_net"][0]["ip"].clone());
            set("ipv4_address", j["public_net"]["ipv4"]["ip"].clone());
            let networks: Vec<Json> = j["private_net"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|n| json!({ "network_id": text(&n["network"]) }))
                .collect();
            set("network", Json::Array(networks));
            set(
                "public_net",
                json!({ "ipv4_enabled": !j["public_net"]["ipv4"].is_null(),
                    "ipv6_enabled": !j["public_net"]["ipv6"].is_null() }),
            );
        }
        _ => {}
    }
    r
}

/// The parts of an owner (a network's subnets; a load balancer's attachments, services,
/// targets), as the resource types the model has for them.
fn parts(rt: HetznerResourceType, owner: &Json) -> Vec<Resource> {
    let id = text(&owner["id"]).unwrap_or_default();
    let part = |pid: String, attrs: Json| {
        let mut r = Resource::new(rt, pid).with_parent(id.clone());
        if let Json::Object(m) = attrs {
            for (k, v) in m {
                r.attrs.insert(k, v);
            }
        }
        r
    };
    let list = |k: &str| owner[k].as_array().cloned().unwrap_or_default();
    match rt {
        R::NetworkSubnet => list("subnets")
            .iter()
            .map(|s| {
                let range = s["ip_range"].as_str().unwrap_or_default();
                part(
                    format!("{id}-{range}"),
                    json!({ "network_id": id, "ip_range": range, "type": s["type"],
                        "network_zone": s["network_zone"] }),
                )
            })
            .collect(),
        R::LoadBalancerNetwork => list("private_net")
            .iter()
            .map(|n| {
                let net = text(&n["network"]).unwrap_or_default();
                part(
                    format!("{id}-{net}"),
                    json!({ "load_balancer_id": id, "network_id": net }),
                )
            })
            .collect(),
        R::LoadBalancerService => list("services")
            .iter()
            .map(|s| {
                part(
                    format!("{id}__{}", s["listen_port"]),
                    json!({ "load_balancer_id": id, "protocol": s["protocol"],
                        "listen_port": s["listen_port"], "destination_port": s["destination_port"] }),
                )
            })
            .collect(),
        R::LoadBalancerTarget => list("targets")
            .iter()
            .filter(|t| t["type"] == "label_selector")
            .map(|t| {
                let selector = t["label_selector"]["selector"].as_str().unwrap_or_default();
                part(
                    format!("{id}-{selector}"),
                    json!({ "load_balancer_id": id, "type": "label_selector",
                        "label_selector": selector, "use_private_ip": t["use_private_ip"] }),
                )
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The owner's type and attribute of a part's parent.
fn owner_of(rt: HetznerResourceType) -> Option<(HetznerResourceType, &'static str)> {
    match rt {
        R::NetworkSubnet => Some((R::Network, "network_id")),
        R::LoadBalancerNetwork | R::LoadBalancerService | R::LoadBalancerTarget => {
            Some((R::LoadBalancer, "load_balancer_id"))
        }
        _ => None,
    }
}

/// The key an object of `rt` is under in an answer (`server`, `load_balancer`).
fn singular(rt: HetznerResourceType) -> &'static str {
    let c = rt.facts().collection;
    c.strip_suffix('s').unwrap_or(c)
}

impl RestHetzner {
    /// A client with `cfg`.
    pub fn new(cfg: RestConfig) -> CloudResult<Self> {
        let http = reqwest::Client::builder()
            .user_agent(concat!("kops-rs/", env!("CARGO_PKG_VERSION")))
            .timeout(Duration::from_secs(60))
            .build()
            .map_err(|e| CloudError::Other {
                operation: "building the Hetzner Cloud client".into(),
                source: Some(Box::new(e)),
            })?;
        Ok(RestHetzner { http, cfg })
    }

    /// One call, retried while the API answers throttled or unavailable; a 429 waits for
    /// the `RateLimit-Reset` the API sends.
    async fn call(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Json>,
        operation: &str,
        what: &str,
    ) -> CloudResult<Json> {
        let retry = &self.cfg.retry;
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.once(method.clone(), path, query, body).await {
                Ok(v) => return Ok(v),
                Err(Err(e)) => {
                    let retryable = e.is_retryable();
                    if !(retryable && retry.allows(attempt)) {
                        return Err(e);
                    }
                    tokio::time::sleep(retry.delay(attempt, 0)).await;
                }
                Err(Ok(api)) => {
                    let reset = api.reset;
                    let e = api.into_cloud(operation, what);
                    if !(e.is_retryable() && retry.allows(attempt)) {
                        return Err(e);
                    }
                    let backoff = retry.delay(attempt, 0);
                    let wait = match reset {
                        Some(at) => {
                            let now = std::time::SystemTime::now()
                                .duration_since(std::time::UNIX_EPOCH)
                                .map_or(0, |d| d.as_secs());
                            Duration::from_secs(at.saturating_sub(now)).min(retry.max_backoff)
                        }
                        None => backoff,
                    };
                    tracing::debug!(%operation, attempt, ?wait, "retrying");
                    tokio::time::sleep(wait.max(Duration::from_millis(1))).await;
                }
            }
        }
    }

    /// One request: the answer, the API's error, or a transport failure.
    async fn once(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Json>,
    ) -> Result<Json, Result<ApiError, CloudError>> {
        let url = format!("{}{path}", self.cfg.endpoint);
        let mut rb = self
            .http
            .request(method, &url)
            .query(query)
            .bearer_auth(&self.cfg.token);
        if let Some(b) = body {
            rb = rb.json(b);
        }
        let transport = |e: reqwest::Error| {
            Err(CloudError::Unavailable {
                operation: format!("calling {path}"),
                source: Some(Box::new(e.without_url())),
            })
        };
        let resp = rb.send().await.map_err(transport)?;
        let status = resp.status().as_u16();
        let reset = resp
            .headers()
            .get("ratelimit-reset")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok());
        let body = resp.text().await.map_err(transport)?;
        if !(200..300).contains(&status) {
            return Err(Ok(ApiError::from_body(status, &body, reset)));
        }
        if body.trim().is_empty() {
            return Ok(Json::Null);
        }
        serde_json::from_str(&body).map_err(|e| {
            Err(CloudError::Other {
                operation: format!("decoding the answer of {path}"),
                source: Some(Box::new(e)),
            })
        })
    }

    /// Waits for the actions an answer started (`action`, `actions`, `next_actions`).
    async fn wait(&self, answer: &Json, operation: &str) -> CloudResult<()> {
        let mut ids: Vec<String> = Vec::new();
        ids.extend(text(&answer["action"]["id"]));
        for k in ["actions", "next_actions"] {
            ids.extend(
                answer[k]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|a| text(&a["id"])),
            );
        }
        for id in ids {
            let started = std::time::Instant::now();
            loop {
                let a = self
                    .call(
                        Method::GET,
                        &format!("/actions/{id}"),
                        &[],
                        None,
                        operation,
                        &id,
                    )
                    .await?;
                match a["action"]["status"].as_str() {
                    Some("success") => break,
                    Some("error") => {
                        let err = &a["action"]["error"];
                        return Err(ApiError {
                            status: 200,
                            code: err["code"].as_str().unwrap_or("action_failed").to_owned(),
                            message: err["message"].as_str().unwrap_or_default().to_owned(),
                            field: None,
                            reset: None,
                        }
                        .into_cloud(operation, &format!("action {id}")));
                    }
                    _ if started.elapsed() > self.cfg.action_timeout => {
                        return Err(CloudError::Unavailable {
                            operation: format!("{operation}: action {id} still running"),
                            source: None,
                        });
                    }
                    _ => tokio::time::sleep(self.cfg.action_poll).await,
                }
            }
        }
        Ok(())
    }

    /// Every object of a collection matching `selector` (and `name`), all pages.
    async fn list_all(
        &self,
        rt: HetznerResourceType,
        selector: Option<String>,
        name: Option<&str>,
    ) -> CloudResult<Vec<Json>> {
        let collection = rt.facts().collection;
        let mut out = Vec::new();
        let mut page = 1u64;
        loop {
            let mut q = vec![
                ("page", page.to_string()),
                ("per_page", PER_PAGE.to_owned()),
            ];
            if let Some(s) = &selector {
                q.push(("label_selector", s.clone()));
            }
            if let Some(n) = name {
                q.push(("name", n.to_owned()));
            }
            let op = format!("listing {rt}s");
            let answer = self
                .call(
                    Method::GET,
                    &format!("/{collection}"),
                    &q,
                    None,
                    &op,
                    collection,
                )
                .await?;
            out.extend(answer[collection].as_array().cloned().unwrap_or_default());
            match answer["meta"]["pagination"]["next_page"].as_u64() {
                Some(next) if next > page => page = next,
                _ => return Ok(out),
            }
        }
    }

    /// The owner object `id` of type `rt`; `None` when it does not exist.
    async fn owner(&self, rt: HetznerResourceType, id: &str) -> CloudResult<Option<Json>> {
        let path = format!("/{}/{id}", rt.facts().collection);
        match self
            .call(
                Method::GET,
                &path,
                &[],
                None,
                &format!("reading {rt} {id}"),
                id,
            )
            .await
        {
            Ok(v) => Ok(Some(v[singular(rt)].clone())),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Runs an action on the owner of a part and waits for it.
    async fn owner_action(
        &self,
        owner: HetznerResourceType,
        owner_id: &str,
        action: &str,
        body: Json,
        operation: &str,
    ) -> CloudResult<()> {
        let path = format!("/{}/{owner_id}/actions/{action}", owner.facts().collection);
        let answer = self
            .call(Method::POST, &path, &[], Some(&body), operation, owner_id)
            .await?;
        self.wait(&answer, operation).await
    }

    /// The request body of a part's action, and the action's name, to add (`add`) or
    /// remove it.
    fn part_action(
        rt: HetznerResourceType,
        attrs: &BTreeMap<String, Json>,
        add: bool,
    ) -> CloudResult<(&'static str, Json)> {
        let a = |k: &str| attrs.get(k).cloned().unwrap_or(Json::Null);
        let id = |k: &str| -> CloudResult<Json> {
            let v = text(&a(k)).unwrap_or_default();
            Ok(json!(number(&v, k)?))
        };
        Ok(match (rt, add) {
            (R::NetworkSubnet, true) => (
                "add_subnet",
                json!({ "type": a("type"), "ip_range": a("ip_range"), "network_zone": a("network_zone") }),
            ),
            (R::NetworkSubnet, false) => ("delete_subnet", json!({ "ip_range": a("ip_range") })),
            (R::LoadBalancerNetwork, true) => {
                ("attach_to_network", json!({ "network": id("network_id")? }))
            }
            (R::LoadBalancerNetwork, false) => (
                "detach_from_network",
                json!({ "network": id("network_id")? }),
            ),
            (R::LoadBalancerService, true) => (
                "add_service",
                json!({ "protocol": a("protocol"), "listen_port": a("listen_port"),
                    "destination_port": a("destination_port"), "proxyprotocol": false }),
            ),
            (R::LoadBalancerService, false) => {
                ("delete_service", json!({ "listen_port": a("listen_port") }))
            }
            (R::LoadBalancerTarget, add) => (
                if add { "add_target" } else { "remove_target" },
                json!({ "type": "label_selector", "label_selector": { "selector": a("label_selector") },
                    "use_private_ip": a("use_private_ip") }),
            ),
            _ => return Err(CloudError::invalid(format!("{rt}"), "not a part")),
        })
    }

    /// The creation body of a top-level object.
    fn create_body(req: &CreateRequest) -> CloudResult<Json> {
        let rt = req.resource_type;
        let a = |k: &str| req.attrs.get(k).cloned().unwrap_or(Json::Null);
        let mut body = json!({ "name": req.name, "labels": req.tags });
        let o = body
            .as_object_mut()
            .ok_or_else(|| CloudError::invalid("request", "not an object"))?;
        match rt {
            R::Network => {
                o.insert("ip_range".into(), a("ip_range"));
            }
            R::Firewall => {
                let rules: Vec<Json> = a("rule")
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|r| {
                        json!({ "direction": r["direction"], "protocol": r["protocol"],
                        "port": r["port"], "source_ips": r["source_ips"] })
                    })
                    .collect();
                o.insert("rules".into(), Json::Array(rules));
                let apply: Vec<Json> = a("apply_to")
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|t| json!({ "type": "label_selector", "label_selector": { "selector": t["label_selector"] } }))
                    .collect();
                o.insert("apply_to".into(), Json::Array(apply));
            }
            R::LoadBalancer => {
                o.insert("load_balancer_type".into(), a("load_balancer_type"));
                o.insert("location".into(), a("location"));
            }
            R::SshKey => {
                o.insert("public_key".into(), a("public_key"));
            }
            R::Volume => {
                o.insert("location".into(), a("location"));
                o.insert("size".into(), a("size"));
                o.insert("format".into(), json!("ext4"));
            }
            R::Server => {
                for k in ["location", "server_type", "image", "user_data"] {
                    o.insert(k.into(), a(k));
                }
                let mut networks = Vec::new();
                for n in a("network").as_array().into_iter().flatten() {
                    let id = text(&n["network_id"]).unwrap_or_default();
                    networks.push(json!(number(&id, "network.network_id")?));
                }
                o.insert("networks".into(), Json::Array(networks));
                let mut keys = Vec::new();
                for k in a("ssh_keys").as_array().into_iter().flatten() {
                    let id = text(k).unwrap_or_default();
                    keys.push(json!(number(&id, "ssh_keys")?));
                }
                o.insert("ssh_keys".into(), Json::Array(keys));
                let p = a("public_net");
                o.insert(
                    "public_net".into(),
                    json!({ "enable_ipv4": p["ipv4_enabled"].as_bool().unwrap_or(true),
                        "enable_ipv6": p["ipv6_enabled"].as_bool().unwrap_or(false) }),
                );
                o.insert("start_after_create".into(), json!(true));
            }
            _ => {
                return Err(CloudError::invalid(
                    format!("{rt}"),
                    "a part is added to its owner",
                ));
            }
        }
        Ok(body)
    }
}

#[async_trait]
impl ResourceCloud<HetznerResourceType> for RestHetzner {
    async fn list(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = query.resource_type;
        let mut found = Vec::new();
        if let Some((owner, _)) = owner_of(rt) {
            let owners = match &query.parent {
                Some(p) => self.owner(owner, p).await?.into_iter().collect(),
                None => self.list_all(owner, None, None).await?,
            };
            for o in &owners {
                found.extend(parts(rt, o));
            }
        } else {
            let selector = (!query.tags.is_empty()).then(|| {
                query
                    .tags
                    .iter()
                    .map(|f| match f.values.as_slice() {
                        [] => f.key.clone(),
                        [one] => format!("{}={one}", f.key),
                        many => format!("{} in ({})", f.key, many.join(",")),
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            });
            let name = match query.names.as_slice() {
                [one] => Some(one.as_str()),
                _ => None,
            };
            for j in self.list_all(rt, selector, name).await? {
                found.push(resource(rt, &j));
            }
        }
        found.retain(|r| query.matches(r));
        Ok(found)
    }

    async fn create(&self, req: &CreateRequest) -> CloudResult<Resource> {
        let rt = req.resource_type;
        let operation = format!("creating {rt} {}", req.name.as_deref().unwrap_or_default());
        if let Some((owner, attr)) = owner_of(rt) {
            let owner_id = req.attrs.get(attr).and_then(text).unwrap_or_default();
            let (action, body) = Self::part_action(rt, &req.attrs, true)?;
            self.owner_action(owner, &owner_id, action, body, &operation)
                .await?;
            let listed = self
                .list(&ListQuery::new(rt).with_parent(owner_id.clone()))
                .await?;
            let probe = parts_probe(rt, &req.attrs);
            return listed.into_iter().find(|r| probe(r)).ok_or_else(|| {
                CloudError::not_found(format!("{rt} just added to {owner} {owner_id}"))
            });
        }
        let body = Self::create_body(req)?;
        let path = format!("/{}", rt.facts().collection);
        let what = req.name.clone().unwrap_or_default();
        let answer = self
            .call(Method::POST, &path, &[], Some(&body), &operation, &what)
            .await?;
        self.wait(&answer, &operation).await?;
        let id = text(&answer[singular(rt)]["id"]).unwrap_or_default();
        // The object as it is once its actions are done (a server's addresses).
        Ok(match self.owner(rt, &id).await? {
            Some(j) => resource(rt, &j),
            None => resource(rt, &answer[singular(rt)]),
        })
    }

    async fn update(&self, req: &UpdateRequest) -> CloudResult<Resource> {
        let rt = req.resource_type;
        let operation = format!("updating {rt} {}", req.id);
        if owner_of(rt).is_some() {
            // A part changes by being replaced: removed, then added as wanted.
            let current = self
                .list(&ListQuery::new(rt).with_ids([req.id.clone()]))
                .await?
                .into_iter()
                .next()
                .ok_or_else(|| CloudError::not_found(format!("{rt} {}", req.id)))?;
            refuse_immutable(rt, &current, req)?;
            self.delete(rt, &req.id).await?;
            let mut attrs = current.attrs.to_map();
            attrs.extend(req.attrs.clone());
            return self.create(&CreateRequest::new(rt).with_attrs(attrs)).await;
        }
        // The API has no action for an immutable attribute: refuse it rather than leave
        // it as it is and answer success.
        if req
            .attrs
            .keys()
            .any(|k| rt.facts().immutable.contains(&k.as_str()))
        {
            let current = self
                .owner(rt, &req.id)
                .await?
                .ok_or_else(|| CloudError::not_found(format!("{rt} {}", req.id)))?;
            refuse_immutable(rt, &resource(rt, &current), req)?;
        }
        let path = format!("/{}/{}", rt.facts().collection, req.id);
        if let Some(tags) = &req.tags {
            self.call(
                Method::PUT,
                &path,
                &[],
                Some(&json!({ "labels": tags })),
                &operation,
                &req.id,
            )
            .await?;
        }
        // The attributes an update may change, each through its action.
        let rules = |v: &Json| -> CloudResult<Json> {
            let body = Self::create_body(
                &CreateRequest::new(R::Firewall)
                    .with_attrs(BTreeMap::from([("rule".to_owned(), v.clone())])),
            )?;
            Ok(json!({ "rules": body["rules"] }))
        };
        let changes: [(HetznerResourceType, &str, &str); 3] = [
            (R::Firewall, "rule", "set_rules"),
            (R::LoadBalancer, "load_balancer_type", "change_type"),
            (R::Volume, "size", "resize"),
        ];
        for (t, key, action) in changes {
            let Some(v) = req.attrs.get(key).filter(|_| t == rt) else {
                continue;
            };
            let body = match action {
                "set_rules" => rules(v)?,
                _ => json!({ key: v }),
            };
            let answer = self
                .call(
                    Method::POST,
                    &format!("{path}/actions/{action}"),
                    &[],
                    Some(&body),
                    &operation,
                    &req.id,
                )
                .await?;
            self.wait(&answer, &operation).await?;
        }
        self.owner(rt, &req.id)
            .await?
            .map(|j| resource(rt, &j))
            .ok_or_else(|| CloudError::not_found(format!("{rt} {}", req.id)))
    }

    async fn delete(&self, rt: HetznerResourceType, id: &str) -> CloudResult<()> {
        let operation = format!("deleting {rt} {id}");
        if let Some((owner, _)) = owner_of(rt) {
            let Some(current) = self
                .list(&ListQuery::new(rt).with_ids([id.to_owned()]))
                .await?
                .into_iter()
                .next()
            else {
                return Ok(());
            };
            let owner_id = current.parent.clone().unwrap_or_default();
            let (action, body) = Self::part_action(rt, &current.attrs.to_map(), false)?;
            return self
                .owner_action(owner, &owner_id, action, body, &operation)
                .await;
        }
        let path = format!("/{}/{id}", rt.facts().collection);
        match self
            .call(Method::DELETE, &path, &[], None, &operation, id)
            .await
        {
            Ok(answer) => self.wait(&answer, &operation).await,
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// `Invalid` naming the immutable attributes `req` asks to change on `current`.
fn refuse_immutable(
    rt: HetznerResourceType,
    current: &Resource,
    req: &UpdateRequest,
) -> CloudResult<()> {
    let bad = immutable_changes(rt, &current.attrs, &req.attrs);
    if bad.is_empty() {
        Ok(())
    } else {
        Err(CloudError::immutable(rt.terraform_type(), &bad))
    }
}

/// Whether a listed part is the one `attrs` describe.
fn parts_probe(
    rt: HetznerResourceType,
    attrs: &BTreeMap<String, Json>,
) -> impl Fn(&Resource) -> bool + '_ {
    let key = match rt {
        R::NetworkSubnet => "ip_range",
        R::LoadBalancerNetwork => "network_id",
        R::LoadBalancerService => "listen_port",
        _ => "label_selector",
    };
    move |r: &Resource| r.attrs.get(key).and_then(text) == attrs.get(key).and_then(text)
}

#[async_trait]
impl HetznerCloud for RestHetzner {
    async fn shutdown_server(&self, id: &str) -> CloudResult<()> {
        let operation = format!("shutting down server {id}");
        let path = format!("/servers/{id}/actions/shutdown");
        let answer = self
            .call(Method::POST, &path, &[], None, &operation, id)
            .await?;
        self.wait(&answer, &operation).await?;
        // The action ends when the signal is sent: wait until the server is off.
        let started = std::time::Instant::now();
        loop {
            let Some(server) = self.owner(R::Server, id).await? else {
                return Ok(());
            };
            if server["status"] == "off" || started.elapsed() > self.cfg.shutdown_timeout {
                return Ok(());
            }
            tokio::time::sleep(self.cfg.action_poll).await;
        }
    }
}
