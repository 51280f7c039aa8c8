//! [`FakeHcloudApi`]: a fake of the Hetzner Cloud API (`/v1`), served on 127.0.0.1 for
//! tests of real clients: `kops_cloud_hetzner::rest::RestHetzner`, and Hetzner's own
//! `hcloud` CLI and python3-hcloud (`HCLOUD_ENDPOINT`). Feature `hetzner-rest`.
//!
//! It is an HTTP face on a [`MockHetzner`], whose objects it keeps and whose rules it
//! applies (unique names, parts under their owners, deletes refusing what is in use), in
//! the API's shapes:
//!
//! - **collections** `networks`, `firewalls`, `load_balancers`, `ssh_keys`, `volumes`,
//!   `servers`: list (paginated, `page`/`per_page`, with `meta.pagination`; filtered by
//!   `label_selector` terms `k=v`, `k!=v`, `k`, `!k` joined by commas, and by `name`),
//!   get, create (a network with its `subnets`), update (`name`, `labels`), delete;
//! - **catalogs**, read-only: `locations`, `datacenters`, `server_types`, `images`,
//!   `load_balancer_types` (a small set: fsn1, nbg1, hel1, ash, hil, sin; cx22 to cx53,
//!   cpx11 to cpx51, cax11, cax21, ccx13; debian-12/13 and ubuntu-22.04/24.04 for x86 and
//!   arm; lb11, lb21, lb31), listed (by `name`; images also by `type`, `architecture`,
//!   `status`) and got by ID. A create names its server type, image, location (or
//!   datacenter) and load balancer type by name or ID, and the fake keeps the name; an
//!   unknown one is `422 invalid_input` naming the field, as is a subnet outside its
//!   network's range or in an unknown network zone;
//! - **objects** as the API returns them: a server's `server_type`, `image` and
//!   `datacenter` from the catalogs, `public_net`, `private_net` and `status`; a network's `subnets`,
//!   a load balancer's `services`, `targets` and `private_net`, a firewall's `rules` and
//!   `applied_to`; `created` times; numeric IDs;
//! - **actions**: `add_subnet`/`delete_subnet`, `attach_to_network`/
//!   `detach_from_network`, `add_service`/`delete_service`, `add_target`/`remove_target`,
//!   `set_rules`, a volume's `resize`, `shutdown`; each write answers an action (a
//!   firewall's a list, `actions`), finished at once (`GET /actions/{id}` and `GET
//!   /actions?id=..` say `success`);
//! - **auth**: a bearer token equal to the fake's, else `401 unauthorized`;
//! - **errors** in the API's shape (`{"error": {"code", "message", "details"}}`): `404
//!   not_found`, `409 uniqueness_error` and `409 resource_in_use`, `422 invalid_input`
//!   naming the field, and `429 rate_limit_exceeded` with `RateLimit-Reset`, injected
//!   with [`FakeHcloudApi::throttle_next`];
//! - **calls** counted per method and path pattern (`GET /servers`).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use kops_cloud_hetzner::cloud::{
    CloudError, CreateRequest, HetznerCloud as _, HetznerResourceType, ListQuery, Resource,
    ResourceCloud as _, UpdateRequest, network_zone,
};
use serde_json::{Value as Json, json};
use tokio::task::JoinHandle;

use super::MockHetzner;

mod catalog;

use catalog::Catalog;

use HetznerResourceType as R;

type Reply = Response<Full<Bytes>>;

/// When the fake says its objects were made.
const CREATED: &str = "2026-01-01T00:00:00+00:00";

#[derive(Debug, Default)]
struct Fake {
    cloud: MockHetzner,
    token: String,
    calls: Mutex<BTreeMap<String, u64>>,
    /// Requests still to answer `429`.
    throttle: Mutex<u32>,
    /// Every action's command, the first with ID 1.
    actions: Mutex<Vec<String>>,
}

/// A running fake of the Hetzner Cloud API (module docs). Dropping it stops the server.
#[derive(Debug)]
pub struct FakeHcloudApi {
    addr: SocketAddr,
    state: Arc<Fake>,
    accept: JoinHandle<()>,
}

impl Drop for FakeHcloudApi {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

impl FakeHcloudApi {
    /// An empty project accepting `token`, served on a free port of 127.0.0.1 until
    /// dropped (needs a tokio runtime).
    pub async fn start(token: &str) -> std::io::Result<FakeHcloudApi> {
        let state = Arc::new(Fake {
            token: token.to_owned(),
            ..Fake::default()
        });
        let (addr, accept) = crate::serve::serve(state.clone(), |s, _, req| handle(s, req)).await?;
        Ok(FakeHcloudApi {
            addr,
            state,
            accept,
        })
    }

    /// The API's root, `http://127.0.0.1:<port>/v1` (`HCLOUD_ENDPOINT`).
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The in-memory project behind the API.
    pub fn cloud(&self) -> &MockHetzner {
        &self.state.cloud
    }

    /// Calls so far, by method and path pattern (`GET /servers`, `POST
    /// /servers/{id}/actions/shutdown`).
    pub fn calls(&self) -> BTreeMap<String, u64> {
        self.state
            .calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Every call so far.
    pub fn total_calls(&self) -> u64 {
        self.calls().values().sum()
    }

    /// Answers the next `n` requests `429 rate_limit_exceeded`, with a `RateLimit-Reset`
    /// of now.
    pub fn throttle_next(&self, n: u32) {
        *self
            .state
            .throttle
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = n;
    }
}

fn reply(status: StatusCode, body: &Json) -> Reply {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        "content-type",
        http::HeaderValue::from_static("application/json"),
    );
    r
}

fn error(status: StatusCode, code: &str, message: &str, field: Option<&str>) -> Reply {
    let details = match field {
        Some(f) => json!({ "fields": [ { "name": f, "messages": [message] } ] }),
        None => Json::Null,
    };
    reply(
        status,
        &json!({ "error": { "code": code, "message": message, "details": details } }),
    )
}

/// The API's answer to a failed call of the in-memory project.
fn cloud_error(e: &CloudError) -> Reply {
    match e {
        CloudError::NotFound { what } => error(StatusCode::NOT_FOUND, "not_found", what, None),
        CloudError::AlreadyExists { what, .. } => error(
            StatusCode::CONFLICT,
            "uniqueness_error",
            &format!("{what} is already used"),
            Some("name"),
        ),
        CloudError::Conflict { reason, .. } => {
            error(StatusCode::CONFLICT, "resource_in_use", reason, None)
        }
        CloudError::Invalid { field, message } => error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_input",
            message,
            Some(field),
        ),
        other => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            &other.to_string(),
            None,
        ),
    }
}

/// The answer to a path naming no collection of the API.
fn no_collection() -> Reply {
    error(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such collection",
        None,
    )
}

/// The answer for an object `id` of `rt` that does not exist.
fn missing(rt: HetznerResourceType, id: &str) -> Reply {
    let what = format!("{} with ID {id} not found", singular(rt));
    error(StatusCode::NOT_FOUND, "not_found", &what, None)
}

/// The resource type of a collection.
fn type_of(collection: &str) -> Option<HetznerResourceType> {
    [
        R::Network,
        R::Firewall,
        R::LoadBalancer,
        R::SshKey,
        R::Volume,
        R::Server,
    ]
    .into_iter()
    .find(|t| t.facts().collection == collection)
}

fn singular(rt: HetznerResourceType) -> &'static str {
    let c = rt.facts().collection;
    c.strip_suffix('s').unwrap_or(c)
}

fn num(id: &str) -> Json {
    id.parse::<i64>().map_or(json!(id), Json::from)
}

fn location(name: &str) -> Json {
    if let Some(known) = Catalog::Locations.named(name) {
        return known;
    }
    json!({ "id": 1, "name": name, "network_zone": network_zone(name).unwrap_or("eu-central"),
        "country": "DE", "city": name, "description": name, "latitude": 0.0, "longitude": 0.0 })
}

fn attr<'a>(r: &'a Resource, k: &str) -> &'a str {
    r.attr_str(k).unwrap_or_default()
}

/// An object of the project as the API returns it, with its parts.
fn to_api(r: &Resource, all: &[Resource]) -> Json {
    let parts = |rt: HetznerResourceType| {
        all.iter()
            .filter(move |p| p.resource_type == rt && p.parent.as_deref() == Some(&r.id))
    };
    let mut j = json!({ "id": num(&r.id), "name": r.name, "labels": r.tags.to_map(), "created": CREATED,
        "protection": { "delete": false } });
    let o = j.as_object_mut().map(std::mem::take).unwrap_or_default();
    let mut o = o;
    match r.resource_type {
        R::Network => {
            o.insert("ip_range".into(), json!(attr(r, "ip_range")));
            // Every subnet's gateway is the network's first address.
            let gateway = attr(r, "ip_range").parse::<ipnet::Ipv4Net>().map_or_else(
                |_| "10.0.0.1".to_owned(),
                |n| std::net::Ipv4Addr::from(u32::from(n.network()) + 1).to_string(),
            );
            let subnets: Vec<Json> = parts(R::NetworkSubnet)
                .map(|s| {
                    json!({ "type": s.attrs.get("type"), "ip_range": s.attrs.get("ip_range"),
                    "network_zone": s.attrs.get("network_zone"), "gateway": gateway,
                    "vswitch_id": null })
                })
                .collect();
            o.insert("subnets".into(), Json::Array(subnets));
            o.insert("routes".into(), json!([]));
            o.insert("servers".into(), json!([]));
            o.insert("load_balancers".into(), json!([]));
            o.insert("expose_routes_to_vswitch".into(), json!(false));
        }
        R::Firewall => firewall_api(&mut o, r),
        R::LoadBalancer => {
            o.insert(
                "load_balancer_type".into(),
                Catalog::LoadBalancerTypes
                    .named(attr(r, "load_balancer_type"))
                    .unwrap_or_else(|| json!({ "id": 1, "name": attr(r, "load_balancer_type") })),
            );
            o.insert("location".into(), location(attr(r, "location")));
            o.insert(
                "public_net".into(),
                json!({ "enabled": true,
                    "ipv4": { "ip": r.attrs.get("ipv4"), "dns_ptr": "static.example.invalid" },
                    "ipv6": { "ip": "2001:db8::1", "dns_ptr": "static.example.invalid" } }),
            );
            let nets: Vec<Json> = parts(R::LoadBalancerNetwork)
                .map(|n| json!({ "network": num(n.attr_str("network_id").unwrap_or_default()), "ip": "10.0.0.100" }))
                .collect();
            o.insert("private_net".into(), Json::Array(nets));
            let services: Vec<Json> = parts(R::LoadBalancerService)
                .map(|s| json!({ "protocol": s.attrs.get("protocol"), "listen_port": s.attrs.get("listen_port"),
                    "destination_port": s.attrs.get("destination_port"), "proxyprotocol": false,
                    // The API gives every service a health check, by default on its port.
                    "health_check": { "protocol": "tcp", "port": s.attrs.get("destination_port"),
                        "interval": 15, "timeout": 10, "retries": 3, "http": null } }))
                .collect();
            o.insert("services".into(), Json::Array(services));
            let targets: Vec<Json> = parts(R::LoadBalancerTarget)
                .map(|t| json!({ "type": "label_selector", "label_selector": { "selector": t.attrs.get("label_selector") },
                    "use_private_ip": t.attrs.get("use_private_ip") }))
                .collect();
            o.insert("targets".into(), Json::Array(targets));
            o.insert("algorithm".into(), json!({ "type": "round_robin" }));
        }
        R::SshKey => {
            o.insert("public_key".into(), json!(attr(r, "public_key")));
            o.insert(
                "fingerprint".into(),
                r.attrs.get("fingerprint").cloned().unwrap_or(Json::Null),
            );
        }
        R::Volume => {
            o.insert(
                "size".into(),
                r.attrs.get("size").cloned().unwrap_or(json!(10)),
            );
            o.insert("location".into(), location(attr(r, "location")));
            o.insert("server".into(), Json::Null);
            o.insert("status".into(), json!("available"));
            o.insert("format".into(), json!("ext4"));
        }
        R::Server => server_api(&mut o, r),
        _ => {}
    }
    Json::Object(o)
}

/// A server's fields: its type, image, datacenter and networks.
fn server_api(o: &mut serde_json::Map<String, Json>, r: &Resource) {
    let loc = attr(r, "location");
    o.insert("status".into(), json!(attr(r, "status")));
    let machine = Catalog::ServerTypes.named(attr(r, "server_type")).unwrap_or_else(|| {
        json!({ "id": 1, "name": attr(r, "server_type"), "cores": 2, "memory": 4.0, "disk": 40, "architecture": "x86" })
    });
    // The image of the server's architecture.
    let image = Catalog::Images
        .select(&BTreeMap::from([
            ("name".to_owned(), attr(r, "image").to_owned()),
            ("architecture".to_owned(), machine["architecture"].as_str().unwrap_or("x86").to_owned()),
        ]))
        .into_iter()
        .next()
        .unwrap_or_else(|| json!({ "id": 1, "name": attr(r, "image"), "type": "system", "status": "available", "os_flavor": "ubuntu" }));
    o.insert("primary_disk_size".into(), machine["disk"].clone());
    o.insert("server_type".into(), machine);
    o.insert("image".into(), image);
    let dc = catalog::datacenter_of(loc).unwrap_or_else(|| {
        json!({ "id": 1, "name": format!("{loc}-dc1"), "description": loc, "location": location(loc) })
    });
    o.insert("datacenter".into(), dc);
    let ipv4 = r
        .attr_str("ipv4_address")
        .map(|ip| json!({ "id": 1, "ip": ip, "blocked": false, "dns_ptr": "" }));
    o.insert(
        "public_net".into(),
        json!({ "ipv4": ipv4, "ipv6": null, "floating_ips": [], "firewalls": [] }),
    );
    let private: Vec<Json> = r
        .attrs
        .get("network")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .map(|n| {
            json!({ "network": num(n["network_id"].as_str().unwrap_or_default()),
            "ip": r.attrs.get("private_ip"), "alias_ips": [], "mac_address": "86:00:00:00:00:01" })
        })
        .collect();
    o.insert("private_net".into(), Json::Array(private));
    o.insert("volumes".into(), json!([]));
    o.insert("load_balancers".into(), json!([]));
    o.insert("included_traffic".into(), json!(0));
    o.insert("rescue_enabled".into(), json!(false));
    o.insert("locked".into(), json!(false));
}

/// A firewall's fields: its rules and what they apply to.
fn firewall_api(o: &mut serde_json::Map<String, Json>, r: &Resource) {
    let rules: Vec<Json> = r
        .attrs
        .get("rule")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .map(|rule| {
            let ips = |k: &str| rule[k].as_array().cloned().unwrap_or_default();
            json!({ "direction": rule["direction"], "protocol": rule["protocol"],
                "port": rule["port"], "source_ips": ips("source_ips"),
                "destination_ips": ips("destination_ips"), "description": rule["description"] })
        })
        .collect();
    o.insert("rules".into(), Json::Array(rules));
    let applied: Vec<Json> = r
        .attrs
        .get("apply_to")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .map(|a| json!({ "type": "label_selector", "label_selector": { "selector": a["label_selector"] } }))
        .collect();
    o.insert("applied_to".into(), Json::Array(applied));
}

/// Whether `labels` pass an API label selector (`k=v,k!=v,k,!k`).
fn selected(selector: &str, r: &Resource) -> bool {
    selector_terms(selector)
        .into_iter()
        .all(|term| matches(term, r))
}

/// The terms of a label selector: its commas outside `in (a,b)` sets.
fn selector_terms(selector: &str) -> Vec<&str> {
    let (mut terms, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (i, c) in selector.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                terms.push(selector[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(selector[start..].trim());
    terms.retain(|t| !t.is_empty());
    terms
}

/// Whether `r`'s labels satisfy one selector term: `k`, `!k`, `k=v`, `k==v`, `k!=v`,
/// `k in (a,b)`, `k notin (a,b)`.
fn matches(term: &str, r: &Resource) -> bool {
    let set = |rest: &str| -> Vec<String> {
        rest.trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
            .split(',')
            .map(|v| v.trim().to_owned())
            .collect()
    };
    if let Some((k, rest)) = term.split_once(" notin ") {
        let value = r.tags.get(k.trim());
        return value.is_none_or(|v| !set(rest).iter().any(|s| s == v));
    }
    if let Some((k, rest)) = term.split_once(" in ") {
        let value = r.tags.get(k.trim());
        return value.is_some_and(|v| set(rest).iter().any(|s| s == v));
    }
    if let Some((k, v)) = term.split_once("!=") {
        r.tags.get(k.trim()) != Some(v.trim())
    } else if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
        r.tags.get(k.trim()) == Some(v.trim())
    } else if let Some(k) = term.strip_prefix('!') {
        !r.tags.contains_key(k.trim())
    } else {
        r.tags.contains_key(term)
    }
}

/// The model's attributes of a create request body.
fn create_request(rt: HetznerResourceType, body: &Json) -> Result<CreateRequest, CloudError> {
    let name = body["name"]
        .as_str()
        .filter(|n| !n.is_empty())
        .ok_or_else(|| CloudError::invalid("name", "name is required"))?;
    let required = |k: &str| -> Result<Json, CloudError> {
        match &body[k] {
            Json::Null => Err(CloudError::invalid(k, format!("{k} is required"))),
            v => Ok(v.clone()),
        }
    };
    let mut attrs = BTreeMap::new();
    match rt {
        R::Network => {
            let range = required("ip_range")?;
            let net = network_range(&range, "ip_range")?;
            for (i, subnet) in body["subnets"].as_array().into_iter().flatten().enumerate() {
                check_subnet(net, subnet, &format!("subnets[{i}]."))?;
            }
            attrs.insert("ip_range".to_owned(), range);
        }
        R::Firewall => {
            attrs.insert(
                "rule".to_owned(),
                body["rules"].as_array().map_or(json!([]), |r| json!(r)),
            );
            let apply: Vec<Json> = body["apply_to"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| json!({ "label_selector": a["label_selector"]["selector"] }))
                .collect();
            attrs.insert("apply_to".to_owned(), Json::Array(apply));
        }
        R::LoadBalancer => {
            attrs.insert(
                "load_balancer_type".to_owned(),
                reference(body, "load_balancer_type", Catalog::LoadBalancerTypes)?,
            );
            attrs.insert("location".to_owned(), place(body)?);
        }
        R::SshKey => {
            let key = required("public_key")?;
            attrs.insert(
                "fingerprint".to_owned(),
                json!(fingerprint(key.as_str().unwrap_or_default())),
            );
            attrs.insert("public_key".to_owned(), key);
        }
        R::Volume => {
            attrs.insert("size".to_owned(), required("size")?);
            attrs.insert("location".to_owned(), place(body)?);
        }
        R::Server => {
            attrs.insert(
                "server_type".to_owned(),
                reference(body, "server_type", Catalog::ServerTypes)?,
            );
            attrs.insert(
                "image".to_owned(),
                reference(body, "image", Catalog::Images)?,
            );
            attrs.insert("location".to_owned(), place(body)?);
            attrs.insert("user_data".to_owned(), body["user_data"].clone());
            let networks: Vec<Json> = body["networks"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|n| json!({ "network_id": n.to_string() }))
                .collect();
            attrs.insert("network".to_owned(), Json::Array(networks));
            let keys: Vec<Json> = body["ssh_keys"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|k| json!(k.to_string()))
                .collect();
            attrs.insert("ssh_keys".to_owned(), Json::Array(keys));
            let p = &body["public_net"];
            attrs.insert(
                "public_net".to_owned(),
                json!({ "ipv4_enabled": p["enable_ipv4"].as_bool().unwrap_or(true),
                    "ipv6_enabled": p["enable_ipv6"].as_bool().unwrap_or(true) }),
            );
        }
        _ => {}
    }
    let labels = body["labels"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default();
    Ok(CreateRequest::new(rt)
        .with_name(name)
        .with_tags(labels)
        .with_attrs(attrs))
}

/// An IPv4 range in CIDR notation given in `field`, or `422 invalid_input` naming it.
fn network_range(given: &Json, field: &str) -> Result<ipnet::Ipv4Net, CloudError> {
    given
        .as_str()
        .and_then(|r| r.parse::<ipnet::Ipv4Net>().ok())
        .ok_or_else(|| {
            CloudError::invalid(
                field,
                format!("invalid input in field '{field}': {given} is not an IPv4 range"),
            )
        })
}

/// Checks a subnet for a network of `net`: its range inside the network's, a known
/// network zone and type (fields named with `prefix`).
fn check_subnet(net: ipnet::Ipv4Net, subnet: &Json, prefix: &str) -> Result<(), CloudError> {
    let field = format!("{prefix}ip_range");
    let range = network_range(&subnet["ip_range"], &field)?;
    if !net.contains(&range) {
        return Err(CloudError::invalid(
            field.as_str(),
            format!("invalid input in field '{field}': {range} is not within the network's {net}"),
        ));
    }
    let zone = &subnet["network_zone"];
    if !["eu-central", "us-east", "us-west", "ap-southeast"]
        .iter()
        .any(|z| zone.as_str() == Some(z))
    {
        let field = format!("{prefix}network_zone");
        return Err(CloudError::invalid(
            field.as_str(),
            format!("invalid input in field '{field}': no network zone {zone}"),
        ));
    }
    if !["cloud", "server", "vswitch"]
        .iter()
        .any(|t| subnet["type"].as_str() == Some(t))
    {
        let field = format!("{prefix}type");
        return Err(CloudError::invalid(
            field.as_str(),
            format!(
                "invalid input in field '{field}': {} is not cloud, server or vswitch",
                subnet["type"]
            ),
        ));
    }
    Ok(())
}

/// The name of the catalog entry that `field` of a create names by name or by ID, or
/// `422 invalid_input` naming the field.
fn reference(body: &Json, field: &str, catalog: Catalog) -> Result<Json, CloudError> {
    let given = &body[field];
    let shown = match given {
        Json::Null => return Err(CloudError::invalid(field, format!("{field} is required"))),
        Json::String(s) => s.clone(),
        other => other.to_string(),
    };
    catalog
        .find(given)
        .map(|e| e["name"].clone())
        .ok_or_else(|| {
            let what = catalog.singular().replace('_', " ");
            CloudError::invalid(
                field,
                format!("invalid input in field '{field}': {what} {shown} not found"),
            )
        })
}

/// The location a create names: its `location`, or the location of its `datacenter`.
fn place(body: &Json) -> Result<Json, CloudError> {
    if body["location"].is_null() && !body["datacenter"].is_null() {
        let dc = reference(body, "datacenter", Catalog::Datacenters)?;
        return Ok(Catalog::Datacenters
            .named(dc.as_str().unwrap_or_default())
            .map_or(Json::Null, |d| d["location"]["name"].clone()));
    }
    reference(body, "location", Catalog::Locations)
}

/// An OpenSSH key's MD5 fingerprint, colon-separated, as the API reports it.
fn fingerprint(key: &str) -> String {
    use base64::Engine as _;
    use md5::Digest as _;
    let blob = key
        .split_whitespace()
        .nth(1)
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .unwrap_or_default();
    md5::Md5::digest(&blob)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// A part's type and attributes of an owner's action.
fn part_of(
    owner: &str,
    action: &str,
    body: &Json,
) -> Option<(HetznerResourceType, bool, BTreeMap<String, Json>)> {
    let mut a = BTreeMap::new();
    let (rt, add) = match action {
        "add_subnet" | "delete_subnet" => {
            a.insert("network_id".to_owned(), json!(owner));
            for k in ["type", "ip_range", "network_zone"] {
                a.insert(k.to_owned(), body[k].clone());
            }
            (R::NetworkSubnet, action == "add_subnet")
        }
        "attach_to_network" | "detach_from_network" => {
            a.insert("load_balancer_id".to_owned(), json!(owner));
            a.insert("network_id".to_owned(), json!(body["network"].to_string()));
            (R::LoadBalancerNetwork, action == "attach_to_network")
        }
        "add_service" | "delete_service" => {
            a.insert("load_balancer_id".to_owned(), json!(owner));
            for k in ["protocol", "listen_port", "destination_port"] {
                a.insert(k.to_owned(), body[k].clone());
            }
            (R::LoadBalancerService, action == "add_service")
        }
        "add_target" | "remove_target" => {
            a.insert("load_balancer_id".to_owned(), json!(owner));
            a.insert("type".to_owned(), json!("label_selector"));
            a.insert(
                "label_selector".to_owned(),
                body["label_selector"]["selector"].clone(),
            );
            a.insert("use_private_ip".to_owned(), body["use_private_ip"].clone());
            (R::LoadBalancerTarget, action == "add_target")
        }
        _ => return None,
    };
    Some((rt, add, a))
}

impl Fake {
    fn action(&self, command: &str) -> Json {
        let mut n = self.actions.lock().unwrap_or_else(|e| e.into_inner());
        n.push(command.to_owned());
        Self::finished(u64::try_from(n.len()).unwrap_or(u64::MAX), command)
    }

    fn finished(id: u64, command: &str) -> Json {
        json!({ "id": id, "command": command, "status": "success", "progress": 100,
            "started": CREATED, "finished": CREATED, "resources": [], "error": null })
    }

    /// Action `id`, finished (every action of the fake finishes at once).
    fn done(&self, id: u64) -> Json {
        let n = self.actions.lock().unwrap_or_else(|e| e.into_inner());
        let command = usize::try_from(id)
            .ok()
            .and_then(|i| n.get(i.checked_sub(1)?))
            .map_or("", String::as_str);
        Self::finished(id, command)
    }

    async fn all(&self) -> Vec<Resource> {
        let mut out = Vec::new();
        for rt in HetznerResourceType::ALL {
            out.extend(
                self.cloud
                    .list(&ListQuery::new(*rt))
                    .await
                    .unwrap_or_default(),
            );
        }
        out
    }

    async fn get(&self, rt: HetznerResourceType, id: &str) -> Option<Resource> {
        self.cloud
            .list(&ListQuery::new(rt).with_ids([id]))
            .await
            .ok()?
            .into_iter()
            .next()
    }
}

/// Every `key=value` of a query string, repeated keys included (`id=1&id=2`).
fn query_all(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), percent_decode(v)))
        .collect()
}

/// One page of `items` as a list answers it under `key`, with `meta.pagination`
/// (`page`, `per_page` of at most 50, 25 by default).
fn page(query: &BTreeMap<String, String>, key: &str, items: Vec<Json>) -> Json {
    let per = query
        .get("per_page")
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(25)
        .clamp(1, 50);
    let page = query
        .get("page")
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    let total = items.len();
    let last = total.div_ceil(per).max(1);
    let shown: Vec<Json> = items.into_iter().skip((page - 1) * per).take(per).collect();
    let next = (page < last).then_some(page + 1);
    let previous = (page > 1).then_some(page - 1);
    json!({ key: shown, "meta": { "pagination": {
        "page": page, "per_page": per, "previous_page": previous, "next_page": next,
        "last_page": last, "total_entries": total } } })
}

fn query_of(req: &Request<Incoming>) -> BTreeMap<String, String> {
    req.uri()
        .query()
        .unwrap_or_default()
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| {
            let v = percent_decode(v);
            (k.to_owned(), v)
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(&s.replace('+', " "))
        .decode_utf8_lossy()
        .into_owned()
}

async fn handle(s: Arc<Fake>, req: Request<Incoming>) -> Reply {
    let method = req.method().clone();
    let path = req.uri().path().trim_end_matches('/').to_owned();
    let query = query_of(&req);
    let query_string = req.uri().query().unwrap_or_default().to_owned();
    let authorized = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        == Some(s.token.as_str());
    let body: Json = match req.into_body().collect().await {
        Ok(b) => serde_json::from_slice(&b.to_bytes()).unwrap_or(Json::Null),
        Err(_) => Json::Null,
    };
    let parts: Vec<&str> = path
        .trim_start_matches("/v1")
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    if let Some(refused) = admit(&s, &method, &parts, authorized) {
        return refused;
    }
    match (method, parts.as_slice()) {
        (Method::GET, ["actions", id]) => match id.parse::<u64>() {
            Ok(n) => reply(StatusCode::OK, &json!({ "action": s.done(n) })),
            Err(_) => error(StatusCode::NOT_FOUND, "not_found", "no such action", None),
        },
        (Method::GET, ["actions"]) => {
            // The actions asked for by `id=` (hcloud-go waits on several at once).
            let ids = query_all(&query_string);
            let shown: Vec<Json> = ids
                .iter()
                .filter(|(k, _)| k == "id")
                .filter_map(|(_, v)| v.parse::<u64>().ok())
                .map(|id| s.done(id))
                .collect();
            reply(StatusCode::OK, &page(&query, "actions", shown))
        }
        (Method::GET, [collection]) if Catalog::of(collection).is_some() => {
            let Some(catalog) = Catalog::of(collection) else {
                return no_collection();
            };
            let mut answer = page(&query, collection, catalog.select(&query));
            if catalog == Catalog::Datacenters {
                // The API recommends a datacenter for new servers.
                answer["recommendation"] = json!(4);
            }
            reply(StatusCode::OK, &answer)
        }
        (Method::GET, [collection, id]) if Catalog::of(collection).is_some() => {
            let Some(catalog) = Catalog::of(collection) else {
                return no_collection();
            };
            match catalog.by_id(id) {
                Some(e) => reply(StatusCode::OK, &json!({ catalog.singular(): e })),
                None => error(
                    StatusCode::NOT_FOUND,
                    "not_found",
                    &format!("{} with ID {id} not found", catalog.singular()),
                    None,
                ),
            }
        }
        (Method::GET, [collection]) => list_collection(&s, collection, &query).await,
        (Method::GET, [collection, id]) => {
            let Some(rt) = type_of(collection) else {
                return no_collection();
            };
            match s.get(rt, id).await {
                Some(r) => reply(
                    StatusCode::OK,
                    &json!({ singular(rt): to_api(&r, &s.all().await) }),
                ),
                None => missing(rt, id),
            }
        }
        (Method::POST, [collection]) => create(&s, collection, &body).await,
        (Method::PUT, [collection, id]) => update(&s, collection, id, &body).await,
        (Method::DELETE, [collection, id]) => {
            let Some(rt) = type_of(collection) else {
                return no_collection();
            };
            if s.get(rt, id).await.is_none() {
                return missing(rt, id);
            }
            match s.cloud.delete(rt, id).await {
                Ok(()) if rt == R::Server => reply(
                    StatusCode::OK,
                    &json!({ "action": s.action("delete_server") }),
                ),
                Ok(()) => {
                    let mut r = Response::new(Full::new(Bytes::new()));
                    *r.status_mut() = StatusCode::NO_CONTENT;
                    r
                }
                Err(e) => cloud_error(&e),
            }
        }
        (Method::POST, [collection, id, "actions", action]) => {
            act(&s, collection, id, action, &body).await
        }
        _ => error(StatusCode::NOT_FOUND, "not_found", "no such endpoint", None),
    }
}

/// Counts the call under its path pattern (`GET /servers/{id}`), then refuses it when the
/// token is wrong or a throttle is pending.
fn admit(s: &Fake, method: &Method, parts: &[&str], authorized: bool) -> Option<Reply> {
    let pattern: Vec<&str> = parts
        .iter()
        .map(|p| {
            if p.chars().all(|c| c.is_ascii_digit()) {
                "{id}"
            } else {
                p
            }
        })
        .collect();
    *s.calls
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(format!("{method} /{}", pattern.join("/")))
        .or_insert(0) += 1;
    if !authorized {
        return Some(error(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "unable to authenticate",
            None,
        ));
    }
    {
        let mut t = s.throttle.lock().unwrap_or_else(|e| e.into_inner());
        if *t > 0 {
            *t -= 1;
            let mut r = error(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limit_exceeded",
                "limit of 3600 requests per hour reached",
                None,
            );
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            if let Ok(v) = http::HeaderValue::from_str(&now.to_string()) {
                r.headers_mut().insert("ratelimit-reset", v);
            }
            return Some(r);
        }
    }
    None
}

/// `GET /<collection>`: the objects of a type, by label selector and name, a page of them.
async fn list_collection(s: &Fake, collection: &str, query: &BTreeMap<String, String>) -> Reply {
    let Some(rt) = type_of(collection) else {
        return no_collection();
    };
    let all = s.all().await;
    let mut items: Vec<&Resource> = all
        .iter()
        .filter(|r| r.resource_type == rt)
        .filter(|r| {
            query
                .get("label_selector")
                .is_none_or(|sel| selected(sel, r))
        })
        .filter(|r| {
            query
                .get("name")
                .is_none_or(|n| r.name.as_deref() == Some(n.as_str()))
        })
        .collect();
    items.sort_by_key(|r| r.id.parse::<u64>().unwrap_or(0));
    let shown = items.iter().map(|r| to_api(r, &all)).collect();
    reply(StatusCode::OK, &page(query, collection, shown))
}

/// `POST /<collection>`: a create, with a network's subnets and the actions the API answers.
async fn create(s: &Fake, collection: &str, body: &Json) -> Reply {
    let Some(rt) = type_of(collection) else {
        return no_collection();
    };
    let request = match create_request(rt, body) {
        Ok(r) => r,
        Err(e) => return cloud_error(&e),
    };
    let made = match s.cloud.create(&request).await {
        Ok(r) => r,
        Err(e) => return cloud_error(&e),
    };
    // A network may come with its subnets.
    for subnet in body["subnets"].as_array().into_iter().flatten() {
        let Some((part, _, attrs)) = part_of(&made.id, "add_subnet", subnet) else {
            continue;
        };
        if let Err(e) = s
            .cloud
            .create(&CreateRequest::new(part).with_attrs(attrs))
            .await
        {
            return cloud_error(&e);
        }
    }
    let mut answer = json!({ singular(rt): to_api(&made, &s.all().await) });
    if rt != R::SshKey && rt != R::Network {
        answer["action"] = s.action(&format!("create_{}", singular(rt)));
    }
    if rt == R::Server {
        answer["next_actions"] = json!([s.action("start_server")]);
        answer["root_password"] = Json::Null;
    }
    if rt == R::Firewall {
        // Rules and the resources they apply to are set by actions of their own.
        let mut actions = Vec::new();
        if body["rules"].as_array().is_some_and(|r| !r.is_empty()) {
            actions.push(s.action("set_firewall_rules"));
        }
        if body["apply_to"].as_array().is_some_and(|a| !a.is_empty()) {
            actions.push(s.action("apply_firewall"));
        }
        answer["actions"] = Json::Array(actions);
    }
    reply(StatusCode::CREATED, &answer)
}

/// `PUT /<collection>/<id>`: new labels.
async fn update(s: &Fake, collection: &str, id: &str, body: &Json) -> Reply {
    let Some(rt) = type_of(collection) else {
        return no_collection();
    };
    let mut update = UpdateRequest::new(rt, id.to_owned());
    if let Some(labels) = body["labels"].as_object() {
        update = update.with_tags(
            labels
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect(),
        );
    }
    match s.cloud.update(&update).await {
        Ok(r) => reply(
            StatusCode::OK,
            &json!({ singular(rt): to_api(&r, &s.all().await) }),
        ),
        Err(e) => cloud_error(&e),
    }
}

/// `POST /<collection>/<id>/actions/<action>`: an action on an object (power, firewall rules,
/// resize, or adding or removing one of its parts).
async fn act(s: &Fake, collection: &str, id: &str, action: &str, body: &Json) -> Reply {
    let Some(rt) = type_of(collection) else {
        return no_collection();
    };
    if s.get(rt, id).await.is_none() {
        return missing(rt, id);
    }
    if (rt, action) == (R::Network, "add_subnet") {
        let network = s.get(rt, id).await;
        let range = network
            .as_ref()
            .and_then(|n| n.attr_str("ip_range"))
            .unwrap_or_default();
        if let Err(e) =
            network_range(&json!(range), "ip_range").and_then(|net| check_subnet(net, body, ""))
        {
            return cloud_error(&e);
        }
    }
    let done = match (rt, action) {
        (R::Server, "shutdown" | "poweroff") => s.cloud.shutdown_server(id).await,
        (R::Firewall, "set_rules") => {
            let update = UpdateRequest::new(rt, id.to_owned())
                .with_attrs(BTreeMap::from([("rule".to_owned(), body["rules"].clone())]));
            s.cloud.update(&update).await.map(|_| ())
        }
        (R::Volume, "resize") => {
            let update = UpdateRequest::new(rt, id.to_owned())
                .with_attrs(BTreeMap::from([("size".to_owned(), body["size"].clone())]));
            s.cloud.update(&update).await.map(|_| ())
        }
        _ => match part_of(id, action, body) {
            Some((part, true, attrs)) => s
                .cloud
                .create(&CreateRequest::new(part).with_attrs(attrs))
                .await
                .map(|_| ()),
            Some((part, false, attrs)) => {
                let key = super::part_identity(part, &attrs);
                let found = s
                    .cloud
                    .list(&ListQuery::new(part).with_parent(id))
                    .await
                    .unwrap_or_default();
                match found
                    .into_iter()
                    .find(|p| super::part_identity(part, &p.attrs.to_map()) == key)
                {
                    Some(p) => s.cloud.delete(part, &p.id).await,
                    None => Err(CloudError::not_found(format!("{part} {key} of {id}"))),
                }
            }
            None => {
                return error(
                    StatusCode::NOT_FOUND,
                    "not_found",
                    &format!("no action {action}"),
                    None,
                );
            }
        },
    };
    match done {
        // A firewall's actions answer a list: one per resource it touches.
        Ok(()) if rt == R::Firewall => reply(
            StatusCode::CREATED,
            &json!({ "actions": [s.action("set_firewall_rules")] }),
        ),
        Ok(()) => reply(StatusCode::CREATED, &json!({ "action": s.action(action) })),
        Err(e) => cloud_error(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invalid(r: Result<impl std::fmt::Debug, CloudError>) -> (String, String) {
        match r {
            Err(CloudError::Invalid { field, message }) => (field, message),
            other => panic!("not invalid_input: {other:?}"),
        }
    }

    #[test]
    fn label_selectors_take_sets_and_negations() {
        let r = Resource::new(HetznerResourceType::Server, "1")
            .with_tag("kops.k8s.io/cluster", "a.example.com")
            .with_tag("kops.k8s.io/instance-group", "nodes");
        let pick = |sel: &str| selected(sel, &r);
        assert!(pick("kops.k8s.io/cluster=a.example.com"));
        assert!(pick(
            "kops.k8s.io/cluster==a.example.com,kops.k8s.io/instance-group"
        ));
        assert!(pick("kops.k8s.io/instance-group in (control-plane,nodes)"));
        assert!(!pick(
            "kops.k8s.io/instance-group in (control-plane, bastion)"
        ));
        assert!(pick(
            "kops.k8s.io/instance-group notin (control-plane),kops.k8s.io/cluster"
        ));
        assert!(!pick("kops.k8s.io/instance-group notin (nodes)"));
        assert!(pick("kops.k8s.io/other notin (x)"));
        assert!(!pick(
            "kops.k8s.io/cluster in (b.example.com,c.example.com),!x"
        ));
        assert!(!pick("!kops.k8s.io/cluster"));
        assert!(pick("kops.k8s.io/cluster!=b.example.com"));
    }

    #[test]
    fn a_server_names_its_type_image_and_location_by_name_or_id() {
        let body = json!({ "name": "s", "server_type": 104, "image": "debian-12",
            "location": "2", "labels": { "role": "web" } });
        let req = create_request(R::Server, &body).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(req.attrs.get("server_type"), Some(&json!("cx22")));
        assert_eq!(req.attrs.get("image"), Some(&json!("debian-12")));
        assert_eq!(req.attrs.get("location"), Some(&json!("nbg1")));
        // A datacenter instead of a location.
        let body = json!({ "name": "s", "server_type": "cpx11", "image": "ubuntu-24.04",
            "datacenter": "hel1-dc2" });
        let req = create_request(R::Server, &body).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(req.attrs.get("location"), Some(&json!("hel1")));
    }

    #[test]
    fn an_unknown_catalog_entry_is_invalid_input_naming_the_field() {
        let server = |k: &str, v: Json| {
            let mut body = json!({ "name": "s", "server_type": "cx22", "image": "debian-12",
                "location": "fsn1" });
            body[k] = v;
            invalid(create_request(R::Server, &body))
        };
        for (k, v) in [
            ("server_type", "cx999"),
            ("image", "debian-99"),
            ("location", "sin1"),
        ] {
            let (field, message) = server(k, json!(v));
            assert_eq!(field, k);
            assert!(
                message.contains(v) && message.contains(&format!("'{k}'")),
                "{message}"
            );
        }
        let lb = json!({ "name": "l", "load_balancer_type": "lb99", "location": "fsn1" });
        assert_eq!(
            invalid(create_request(R::LoadBalancer, &lb)).0,
            "load_balancer_type"
        );
        let missing = json!({ "name": "s", "image": "debian-12", "location": "fsn1" });
        assert_eq!(
            invalid(create_request(R::Server, &missing)).0,
            "server_type"
        );
    }

    #[test]
    fn a_subnet_lies_in_its_network_and_a_known_zone() {
        let net = json!({ "name": "n", "ip_range": "10.0.0.0/16", "subnets": [
            { "type": "cloud", "ip_range": "10.0.1.0/24", "network_zone": "eu-central" },
            { "type": "cloud", "ip_range": "10.1.0.0/24", "network_zone": "eu-central" } ] });
        let (field, message) = invalid(create_request(R::Network, &net));
        assert_eq!(field, "subnets[1].ip_range");
        assert!(
            message.contains("10.1.0.0/24") && message.contains("10.0.0.0/16"),
            "{message}"
        );
        let range = "10.0.0.0/16".parse().unwrap_or_else(|e| panic!("{e}"));
        let zone = json!({ "type": "cloud", "ip_range": "10.0.2.0/24", "network_zone": "mars" });
        assert_eq!(invalid(check_subnet(range, &zone, "")).0, "network_zone");
        let kind = json!({ "type": "lan", "ip_range": "10.0.2.0/24", "network_zone": "us-east" });
        assert_eq!(invalid(check_subnet(range, &kind, "")).0, "type");
        let bad = json!({ "name": "n", "ip_range": "10.0.0.0/33" });
        assert_eq!(invalid(create_request(R::Network, &bad)).0, "ip_range");
    }

    #[test]
    fn a_list_answers_one_page_with_its_pagination() {
        let items: Vec<Json> = (1..=30).map(|i| json!({ "id": i })).collect();
        let q = BTreeMap::from([("page".to_owned(), "2".to_owned())]);
        let p = page(&q, "things", items);
        assert_eq!(p["things"].as_array().map(Vec::len), Some(5));
        assert_eq!(p["things"][0]["id"], 26);
        let pg = &p["meta"]["pagination"];
        assert_eq!(
            (
                pg["page"].clone(),
                pg["last_page"].clone(),
                pg["next_page"].clone(),
                pg["previous_page"].clone(),
                pg["total_entries"].clone()
            ),
            (json!(2), json!(2), Json::Null, json!(1), json!(30))
        );
        assert_eq!(
            query_all("id=1&id=2&sort=x"),
            [
                ("id".into(), "1".into()),
                ("id".into(), "2".into()),
                ("sort".into(), "x".into())
            ]
        );
    }
}
