//! [`FakeGceApi`]: a fake of Google's Compute v1, IAM v1, Cloud Resource Manager v1 and
//! Storage v1 (IAM and ACL) JSON REST APIs, served on 127.0.0.1 for tests of a real REST
//! client (`kops_cloud_gce::rest::RestGce`). Feature `gce-rest`.
//!
//! No emulator of Compute Engine exists; this one serves what kOps' GCE tasks use, in
//! Google's shapes:
//!
//! - **collections** under `/compute/v1/projects/<p>/{global,regions/<r>,zones/<z>}/<c>`:
//!   list (paginated with `maxResults`/`pageToken`, `filter` of `labels.k = "v"`
//!   expressions joined by `AND`), insert, get, patch, put, delete, and
//!   `aggregated/<c>` for zonal ones;
//! - **operations**: every write answers a `RUNNING` operation whose `selfLink` is waited
//!   on with `POST .../operations/<op>/wait` (which answers it `DONE`, with its
//!   `error` when the write failed);
//! - **objects** get `id` (an int64, as a string), `selfLink`
//!   (`https://www.googleapis.com/compute/v1/...`), `creationTimestamp`, `kind`,
//!   `labelFingerprint`/`fingerprint`; addresses are allocated (internal ones from the
//!   subnetwork's range); groups report `instanceGroup`; references to networks,
//!   subnetworks, templates and targets must exist; a delete of an object another one
//!   refers to fails with `RESOURCE_IN_USE_BY_ANOTHER_RESOURCE`;
//! - **verbs**: `setLabels` (checking `labelFingerprint`), `setInstanceTemplate`,
//!   `setTargetPools`, `resize`, `setTarget`, `addHealthCheck`, `removeHealthCheck`,
//!   `listManagedInstances` and `recreateInstances`;
//! - **managed instance groups keep `targetSize` instances** (`zones/<z>/instances`,
//!   named `<baseInstanceName>-<4 characters>`) made from the group's template at the
//!   time, with its machine type, labels and metadata plus the `instance-template` and
//!   `created-by` items; a new template re-points the group, not its instances, until
//!   `recreateInstances` makes them again (keeping their names); a smaller target or a
//!   deleted group deletes them;
//! - **errors** in Google's JSON shape (`{"error": {"code", "message", "errors":
//!   [{"reason", "message", "domain"}]}}`), and injected faults ([`FakeGceApi::fail_next`]);
//! - **Cloud DNS**: `GET /dns/v1/projects/<p>/managedZones` lists one public zone,
//!   `example.com.` with ID `1` (as kOps' fake Cloud DNS);
//! - **calls** counted per method (`compute.firewalls.list`).
//!
//! Simplifications: operations finish at once (the first wait answers `DONE`), and so
//! does an instance's creation or recreation (`RUNNING`, current action `NONE`); a group's
//! instance group may be deleted while a backend service uses it; request bodies are not
//! validated beyond names and references.

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use serde_json::{Map, Value as Json, json};
use tokio::task::JoinHandle;

use super::{base36, instance_address};

const COMPUTE: &str = "https://www.googleapis.com/compute/v1/";

type Reply = Response<Full<Bytes>>;

#[derive(Debug, Default)]
struct Api {
    project: String,
    region: String,
    zones: Vec<String>,
    default_sa: String,
    /// Compute objects by collection path (`global/networks`, `zones/z/disks`) and name.
    objects: BTreeMap<String, BTreeMap<String, Json>>,
    operations: BTreeMap<String, Json>,
    accounts: BTreeMap<String, Json>,
    policy: Json,
    bucket_iam: BTreeMap<String, Json>,
    bucket_acl: BTreeMap<String, Vec<Json>>,
    calls: BTreeMap<String, u64>,
    faults: VecDeque<(u16, String)>,
    serial: u64,
    next_external: u32,
    next_internal: BTreeMap<String, u32>,
    page_size: usize,
    /// Cloud DNS managed zones, as the API returns them.
    managed_zones: Vec<Json>,
    /// Names a managed instance group's next instance.
    instance_serial: u64,
}

/// A running fake of the Google APIs (module docs). Dropping it stops the server.
#[derive(Debug)]
pub struct FakeGceApi {
    addr: SocketAddr,
    state: Arc<Mutex<Api>>,
    accept: JoinHandle<()>,
}

impl Drop for FakeGceApi {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// One object the fake holds: its collection path and JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct FakeObject {
    /// `global/networks`, `regions/us-test1/subnetworks`, `zones/us-test1-a/disks`.
    pub collection: String,
    /// The object's name.
    pub name: String,
    /// The object as the API returns it.
    pub json: Json,
}

impl FakeGceApi {
    /// Project `project` in `region` with zones `<region>-a`, `-b`, `-c`, served on a
    /// free port of 127.0.0.1 until dropped (needs a tokio runtime).
    pub async fn start(project: &str, region: &str) -> std::io::Result<FakeGceApi> {
        let api = Api {
            project: project.to_owned(),
            region: region.to_owned(),
            zones: ["a", "b", "c"]
                .iter()
                .map(|z| format!("{region}-{z}"))
                .collect(),
            default_sa: "12345678-compute@developer.gserviceaccount.com".to_owned(),
            policy: json!({ "version": 1, "etag": "BwAAAA==", "bindings": [] }),
            page_size: 500,
            // kOps' fake Cloud DNS holds this one zone (the mock cloud's docs).
            managed_zones: vec![json!({ "kind": "dns#managedZone", "name": "example-com",
                "dnsName": "example.com.", "id": "1", "visibility": "public" })],
            ..Api::default()
        };
        let state = Arc::new(Mutex::new(api));
        let (addr, accept) = crate::serve::serve(state.clone(), |state, _, req| async move {
            handle(&state, req).await
        })
        .await?;
        Ok(FakeGceApi {
            addr,
            state,
            accept,
        })
    }

    /// `http://127.0.0.1:<port>`: the root of every API (`RestConfig::with_endpoint`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn lock(&self) -> MutexGuard<'_, Api> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Pages hold at most `n` items (default 500, Google's maximum).
    pub fn set_page_size(&self, n: usize) {
        self.lock().page_size = n.max(1);
    }

    /// The next `n` requests fail with HTTP `status` and Google reason `reason`
    /// (`rateLimitExceeded`, `backendError`, `quotaExceeded`).
    pub fn fail_next(&self, n: usize, status: u16, reason: &str) {
        let mut s = self.lock();
        for _ in 0..n {
            s.faults.push_back((status, reason.to_owned()));
        }
    }

    /// Calls so far, by method (`compute.firewalls.list`).
    pub fn calls(&self) -> BTreeMap<String, u64> {
        self.lock().calls.clone()
    }

    /// Every call so far.
    pub fn total_calls(&self) -> u64 {
        self.lock().calls.values().sum()
    }

    /// Every Compute object, IAM service account (`iam/serviceAccounts`) and non-empty
    /// project IAM binding (`crm/bindings`, named by role).
    pub fn objects(&self) -> Vec<FakeObject> {
        let s = self.lock();
        let mut out: Vec<FakeObject> = s
            .objects
            .iter()
            .flat_map(|(c, m)| {
                m.iter().map(|(n, j)| FakeObject {
                    collection: c.clone(),
                    name: n.clone(),
                    json: j.clone(),
                })
            })
            .collect();
        for (email, j) in &s.accounts {
            out.push(FakeObject {
                collection: "iam/serviceAccounts".into(),
                name: email.clone(),
                json: j.clone(),
            });
        }
        for b in s
            .policy
            .get("bindings")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(role) = b.get("role").and_then(Json::as_str) {
                out.push(FakeObject {
                    collection: "crm/bindings".into(),
                    name: role.to_owned(),
                    json: b.clone(),
                });
            }
        }
        out
    }

    /// Inserts a Compute object as an insert would (seeding; no call counted):
    /// `collection` is `global/networks`, `regions/<r>/subnetworks`, ...
    pub fn seed(&self, collection: &str, object: Json) -> Result<(), String> {
        let mut s = self.lock();
        let segs: Vec<&str> = collection.split('/').collect();
        let (scope, coll) = match segs.as_slice() {
            ["global", c] => ("global".to_owned(), *c),
            [kind, loc, c] => (format!("{kind}/{loc}"), *c),
            _ => return Err(format!("not a collection path: {collection}")),
        };
        match s.insert(&scope, coll, object) {
            Ok(_) => Ok(()),
            Err((_, reason, msg)) => Err(format!("{reason}: {msg}")),
        }
    }
}

/// An error answer: HTTP status, Google reason, message.
type Fail = (u16, String, String);

fn fail(status: u16, reason: &str, message: impl Into<String>) -> Fail {
    (status, reason.to_owned(), message.into())
}

fn reply(status: u16, body: &Json) -> Reply {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json; charset=UTF-8"),
    );
    r
}

fn error_reply((status, reason, message): Fail) -> Reply {
    reply(
        status,
        &json!({ "error": {
            "code": status,
            "message": message,
            "errors": [{ "message": message, "domain": "global", "reason": reason }],
        }}),
    )
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16)
                {
                    Ok(v) => {
                        out.push(v);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn query_map(q: Option<&str>) -> BTreeMap<String, String> {
    q.unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (decode(k), decode(v)),
            None => (decode(p), String::new()),
        })
        .collect()
}

/// A filter: `path = "value"` (or `eq`) terms joined by `AND`; `Err` when malformed.
fn parse_filter(f: &str) -> Result<Vec<(String, String)>, Fail> {
    let bad = || {
        fail(
            400,
            "invalid",
            format!("Invalid value for field 'filter': '{f}'. Invalid list filter expression."),
        )
    };
    let mut out = Vec::new();
    for term in f.split(" AND ") {
        let term = term
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
            .trim();
        let (path, value) = term
            .split_once(" = ")
            .or_else(|| term.split_once(" eq "))
            .ok_or_else(bad)?;
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value);
        if path.trim().is_empty() {
            return Err(bad());
        }
        out.push((path.trim().to_owned(), value.to_owned()));
    }
    Ok(out)
}

fn lookup<'a>(j: &'a Json, path: &str) -> Option<&'a Json> {
    path.split('.').try_fold(j, |v, k| v.get(k))
}

fn matches(j: &Json, terms: &[(String, String)]) -> bool {
    terms
        .iter()
        .all(|(p, v)| lookup(j, p).and_then(Json::as_str) == Some(v.as_str()))
}

/// A page of `items` from `start` (the page token).
fn page(
    items: Vec<Json>,
    q: &BTreeMap<String, String>,
    cap: usize,
) -> Result<(Vec<Json>, Option<String>), Fail> {
    let max = q
        .get("maxResults")
        .and_then(|m| m.parse::<usize>().ok())
        .unwrap_or(500)
        .clamp(1, cap);
    let start = match q.get("pageToken") {
        Some(t) => t.parse::<usize>().map_err(|_| {
            fail(
                400,
                "invalid",
                format!("Invalid value for field 'pageToken': '{t}'"),
            )
        })?,
        None => 0,
    };
    let end = (start + max).min(items.len());
    let next = (end < items.len()).then(|| end.to_string());
    Ok((
        items
            .get(start..end)
            .map(<[Json]>::to_vec)
            .unwrap_or_default(),
        next,
    ))
}

fn singular(coll: &str) -> String {
    let s = coll.strip_suffix("ies").map(|s| format!("{s}y"));
    s.unwrap_or_else(|| coll.strip_suffix('s').unwrap_or(coll).to_owned())
}

/// The value of metadata item `key` of an instance.
fn metadata_item<'a>(j: &'a Json, key: &str) -> Option<&'a str> {
    j.pointer("/metadata/items")?
        .as_array()?
        .iter()
        .find(|i| i.get("key").and_then(Json::as_str) == Some(key))?
        .get("value")?
        .as_str()
}

fn fingerprint(j: &Json) -> String {
    use md5::{Digest, Md5};
    let d = Md5::digest(j.to_string().as_bytes());
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

impl Api {
    fn count(&mut self, method: String) {
        *self.calls.entry(method).or_insert(0) += 1;
    }

    fn url(&self, path: &str) -> String {
        format!("{COMPUTE}projects/{}/{path}", self.project)
    }

    fn scope_ok(&self, scope: &str) -> bool {
        match scope.split_once('/') {
            None => scope == "global",
            Some(("regions", r)) => r == self.region,
            Some(("zones", z)) => self.zones.iter().any(|x| x == z),
            _ => false,
        }
    }

    fn exists_link(&self, link: &str) -> bool {
        let Some(path) = link
            .strip_prefix(COMPUTE)
            .and_then(|p| p.strip_prefix(&format!("projects/{}/", self.project)))
        else {
            // Another project's object (an image): not ours to check.
            return true;
        };
        match path.rsplit_once('/') {
            Some((coll, name)) => {
                if coll.ends_with("/diskTypes") || coll.starts_with("zones/") && !coll.contains('/')
                {
                    return true;
                }
                self.objects.get(coll).is_some_and(|m| m.contains_key(name))
            }
            None => false,
        }
    }

    fn operation(&mut self, scope: &str, kind: &str, target: &str, error: Option<Fail>) -> Json {
        self.serial += 1;
        let name = format!(
            "operation-{}-{:08x}",
            self.serial,
            self.serial * 2654435761 % 4294967296
        );
        let mut op = json!({
            "kind": "compute#operation",
            "id": (1_000_000 + self.serial).to_string(),
            "name": name,
            "operationType": kind,
            "targetLink": target,
            "status": "RUNNING",
            "progress": 0,
            "selfLink": self.url(&format!("{scope}/operations/{name}")),
        });
        if let Some(z) = scope.strip_prefix("zones/") {
            op["zone"] = json!(self.url(&format!("zones/{z}")));
        } else if let Some(r) = scope.strip_prefix("regions/") {
            op["region"] = json!(self.url(&format!("regions/{r}")));
        }
        let mut done = op.clone();
        done["status"] = json!("DONE");
        done["progress"] = json!(100);
        if let Some((status, reason, message)) = error {
            let code = match reason.as_str() {
                "resourceInUseByAnotherResource" => {
                    "RESOURCE_IN_USE_BY_ANOTHER_RESOURCE".to_owned()
                }
                "quotaExceeded" => "QUOTA_EXCEEDED".to_owned(),
                other => other.to_owned(),
            };
            done["httpErrorStatusCode"] = json!(status);
            done["error"] = json!({ "errors": [{ "code": code, "message": message }] });
        }
        self.operations.insert(name, done);
        op
    }

    /// Inserts `object` into `scope`/`coll` as the API does; the operation answered.
    fn insert(&mut self, scope: &str, coll: &str, mut object: Json) -> Result<Json, Fail> {
        if !self.scope_ok(scope) {
            return Err(fail(
                400,
                "invalid",
                format!("Invalid value for field 'scope': '{scope}'"),
            ));
        }
        let Some(name) = object.get("name").and_then(Json::as_str).map(str::to_owned) else {
            return Err(fail(
                400,
                "required",
                "Required field 'resource.name' not specified",
            ));
        };
        let path = format!("{scope}/{coll}");
        if self
            .objects
            .get(&path)
            .is_some_and(|m| m.contains_key(&name))
        {
            return Err(fail(
                409,
                "alreadyExists",
                format!(
                    "The resource 'projects/{}/{path}/{name}' already exists",
                    self.project
                ),
            ));
        }
        for k in [
            "network",
            "subnetwork",
            "instanceTemplate",
            "backendService",
            "target",
        ] {
            if let Some(l) = object.get(k).and_then(Json::as_str)
                && !self.exists_link(l)
            {
                return Err(fail(
                    404,
                    "notFound",
                    format!(
                        "The resource '{}' was not found",
                        l.trim_start_matches(COMPUTE)
                    ),
                ));
            }
        }
        self.serial += 1;
        let link = self.url(&format!("{path}/{name}"));
        let Some(o) = object.as_object_mut() else {
            return Err(fail(400, "invalid", "the body is not an object"));
        };
        o.insert("kind".into(), json!(format!("compute#{}", singular(coll))));
        o.insert(
            "id".into(),
            json!((4_000_000_000_000_000_000u64 + self.serial).to_string()),
        );
        o.insert(
            "creationTimestamp".into(),
            json!("2026-01-01T00:00:00.000-07:00"),
        );
        o.insert("selfLink".into(), json!(link));
        if let Some(z) = scope.strip_prefix("zones/") {
            o.insert("zone".into(), json!(self.url(&format!("zones/{z}"))));
        }
        if let Some(r) = scope.strip_prefix("regions/") {
            o.insert("region".into(), json!(self.url(&format!("regions/{r}"))));
        }
        o.insert("fingerprint".into(), json!(format!("fp{}", self.serial)));
        if o.contains_key("labels") || matches!(coll, "disks" | "forwardingRules" | "instances") {
            let labels = o.get("labels").cloned().unwrap_or(json!({}));
            o.insert("labelFingerprint".into(), json!(fingerprint(&labels)));
        }
        match coll {
            "addresses" => {
                if !o.contains_key("address") {
                    let a = self.allocate(o);
                    o.insert("address".into(), json!(a));
                }
                o.entry("addressType").or_insert(json!("EXTERNAL"));
                o.insert("status".into(), json!("RESERVED"));
            }
            "instanceGroupManagers" => {
                o.insert(
                    "instanceGroup".into(),
                    json!(link.replace("/instanceGroupManagers/", "/instanceGroups/")),
                );
                if !o.contains_key("instanceTemplate")
                    && let Some(t) = o
                        .get("versions")
                        .and_then(|v| v.pointer("/0/instanceTemplate"))
                        .cloned()
                {
                    o.insert("instanceTemplate".into(), t);
                }
                o.insert("status".into(), json!({ "isStable": true }));
            }
            "disks" => {
                o.entry("sizeGb").or_insert(json!("500"));
                o.insert("status".into(), json!("READY"));
            }
            "networks" => {
                o.insert("subnetworks".into(), json!([]));
            }
            "subnetworks" => {
                o.insert("gatewayAddress".into(), json!("10.0.0.1"));
                if let Some(net) = o.get("network").and_then(Json::as_str).map(str::to_owned) {
                    self.refresh_subnets_of(&net, Some(&link));
                }
            }
            _ => {}
        }
        self.objects
            .entry(path)
            .or_default()
            .insert(name.clone(), object);
        if coll == "instanceGroupManagers" {
            self.sync_instances(scope, &name);
        }
        Ok(self.operation(scope, "insert", &link, None))
    }

    /// The object a Compute link of this project names.
    fn by_link(&self, link: &str) -> Option<&Json> {
        let path = link.strip_prefix(&self.url(""))?;
        let (coll, name) = path.rsplit_once('/')?;
        self.objects.get(coll)?.get(name)
    }

    /// The instances of the managed instance group `name` in `scope` (a zone), in the
    /// order the group made them: those whose `created-by` metadata is the group.
    fn members(&self, scope: &str, name: &str) -> Vec<(String, Json)> {
        let group = self.url(&format!("{scope}/instanceGroupManagers/{name}"));
        let mut out: Vec<(String, Json)> = self
            .objects
            .get(&format!("{scope}/instances"))
            .into_iter()
            .flatten()
            .filter(|(_, j)| metadata_item(j, "created-by") == Some(group.as_str()))
            .map(|(n, j)| (n.clone(), j.clone()))
            .collect();
        out.sort_by_key(|(_, j)| {
            j.get("id")
                .and_then(Json::as_str)
                .and_then(|i| i.parse::<u64>().ok())
                .unwrap_or(0)
        });
        out
    }

    /// Makes `instance` (an instance JSON) run `template`: its machine type, labels,
    /// metadata and tags, with the `instance-template` and `created-by` items GCE adds.
    fn make_from_template(&self, scope: &str, instance: &mut Json, template: &str, group: &str) {
        let props = self
            .by_link(template)
            .and_then(|t| t.get("properties"))
            .cloned()
            .unwrap_or(json!({}));
        let zone = scope.strip_prefix("zones/").unwrap_or_default();
        let machine = props
            .get("machineType")
            .and_then(Json::as_str)
            .map(|m| {
                self.url(&format!(
                    "zones/{zone}/machineTypes/{}",
                    m.rsplit('/').next().unwrap_or(m)
                ))
            })
            .unwrap_or_default();
        let mut items: Vec<Json> = props
            .pointer("/metadata/items")
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_default();
        items.retain(|i| {
            !matches!(
                i.get("key").and_then(Json::as_str),
                Some("instance-template" | "created-by")
            )
        });
        items.push(json!({"key": "instance-template", "value": template}));
        items.push(json!({"key": "created-by", "value": group}));
        let labels = props.get("labels").cloned().unwrap_or(json!({}));
        instance["machineType"] = json!(machine);
        instance["labelFingerprint"] = json!(fingerprint(&labels));
        instance["labels"] = labels;
        instance["tags"] = props.get("tags").cloned().unwrap_or(json!({}));
        instance["metadata"] = json!({"kind": "compute#metadata", "items": items});
        instance["status"] = json!("RUNNING");
    }

    /// Keeps the instances of the managed instance group `name` in `scope` at its target
    /// size: new ones made from its current template, surplus ones (the newest) deleted,
    /// all of them once the group is gone.
    fn sync_instances(&mut self, scope: &str, name: &str) {
        let group = self.url(&format!("{scope}/instanceGroupManagers/{name}"));
        let members = self.members(scope, name);
        let path = format!("{scope}/instances");
        let mig = self
            .objects
            .get(&format!("{scope}/instanceGroupManagers"))
            .and_then(|m| m.get(name))
            .cloned();
        let target = mig
            .as_ref()
            .and_then(|m| m.get("targetSize"))
            .and_then(|t| t.as_u64().or_else(|| t.as_str()?.parse().ok()))
            .unwrap_or(0) as usize;
        for (n, _) in members.iter().skip(target) {
            if let Some(m) = self.objects.get_mut(&path) {
                m.remove(n);
            }
        }
        let Some(mig) = mig else { return };
        let template = mig
            .get("instanceTemplate")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_owned();
        let base = mig
            .get("baseInstanceName")
            .and_then(Json::as_str)
            .unwrap_or(name)
            .to_owned();
        for _ in members.len()..target {
            self.instance_serial += 1;
            self.serial += 1;
            let n = self.instance_serial;
            let instance_name = format!("{base}-{}", base36(n));
            let mut instance = json!({
                "kind": "compute#instance",
                "id": (5_000_000_000_000_000_000u64 + self.serial).to_string(),
                "name": instance_name,
                "creationTimestamp": "2026-01-01T00:00:00.000-07:00",
                "zone": self.url(scope),
                "selfLink": self.url(&format!("{path}/{instance_name}")),
                "networkInterfaces": [{
                    "kind": "compute#networkInterface",
                    "name": "nic0",
                    "networkIP": instance_address(n),
                }],
            });
            self.make_from_template(scope, &mut instance, &template, &group);
            self.objects
                .entry(path.clone())
                .or_default()
                .insert(instance_name, instance);
        }
    }

    /// `listManagedInstances` of the group `name` in `scope`, paginated.
    fn list_managed(
        &self,
        scope: &str,
        name: &str,
        q: &BTreeMap<String, String>,
    ) -> Result<Json, Fail> {
        let path = format!("{scope}/instanceGroupManagers");
        if !self
            .objects
            .get(&path)
            .is_some_and(|m| m.contains_key(name))
        {
            return Err(not_found(&self.project, &path, name));
        }
        let items: Vec<Json> = self
            .members(scope, name)
            .into_iter()
            .map(|(_, j)| {
                json!({
                    "instance": j.get("selfLink").cloned().unwrap_or(Json::Null),
                    "id": j.get("id").cloned().unwrap_or(Json::Null),
                    "instanceStatus": j.get("status").cloned().unwrap_or(Json::Null),
                    "currentAction": "NONE",
                    "version": {"instanceTemplate": metadata_item(&j, "instance-template")},
                })
            })
            .collect();
        let (items, next) = page(items, q, self.page_size)?;
        let mut out = json!({ "managedInstances": items });
        if let Some(n) = next {
            out["nextPageToken"] = json!(n);
        }
        Ok(out)
    }

    /// `recreateInstances` of the group `name` in `scope`: each named instance (a URL,
    /// full or partial) must be the group's; each is made again from the group's current
    /// template, keeping its name. Nothing changes when one is not the group's.
    fn recreate(&mut self, scope: &str, name: &str, body: &Json) -> Result<Json, Fail> {
        let path = format!("{scope}/instanceGroupManagers");
        let Some(mig) = self.objects.get(&path).and_then(|m| m.get(name)).cloned() else {
            return Err(not_found(&self.project, &path, name));
        };
        let group = self.url(&format!("{path}/{name}"));
        let members = self.members(scope, name);
        let mut wanted = Vec::new();
        for i in body
            .get("instances")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let n = i
                .as_str()
                .and_then(|u| u.rsplit('/').next())
                .unwrap_or_default()
                .to_owned();
            if !members.iter().any(|(m, _)| *m == n) {
                return Err(not_found(&self.project, &format!("{scope}/instances"), &n));
            }
            wanted.push(n);
        }
        if wanted.is_empty() {
            return Err(fail(
                400,
                "required",
                "Required field 'instances' not specified",
            ));
        }
        let template = mig
            .get("instanceTemplate")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_owned();
        for n in wanted {
            let ipath = format!("{scope}/instances");
            let Some(mut instance) = self.objects.get(&ipath).and_then(|m| m.get(&n)).cloned()
            else {
                continue;
            };
            self.make_from_template(scope, &mut instance, &template, &group);
            if let Some(m) = self.objects.get_mut(&ipath) {
                m.insert(n, instance);
            }
        }
        Ok(self.operation(scope, "recreateInstances", &group, None))
    }

    /// Adds `added` to the `subnetworks` of network `net` (a link), as GCE keeps it.
    fn refresh_subnets_of(&mut self, net: &str, added: Option<&str>) {
        let path = net
            .strip_prefix(&self.url(""))
            .unwrap_or_default()
            .to_owned();
        if let Some((coll, name)) = path.rsplit_once('/')
            && let Some(n) = self.objects.get_mut(coll).and_then(|m| m.get_mut(name))
        {
            let mut list: Vec<Json> = n
                .get("subnetworks")
                .and_then(Json::as_array)
                .cloned()
                .unwrap_or_default();
            if let Some(a) = added {
                list.push(json!(a));
            }
            n["subnetworks"] = Json::Array(list);
        }
    }

    fn allocate(&mut self, o: &Map<String, Json>) -> String {
        if o.get("addressType").and_then(Json::as_str) == Some("INTERNAL") {
            let sub = o
                .get("subnetwork")
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_owned();
            let cidr = sub
                .strip_prefix(&self.url(""))
                .and_then(|p| p.rsplit_once('/'))
                .and_then(|(c, n)| self.objects.get(c).and_then(|m| m.get(n)))
                .and_then(|s| s.get("ipCidrRange").and_then(Json::as_str))
                .and_then(|c| c.parse::<ipnet::Ipv4Net>().ok());
            let n = self.next_internal.entry(sub).or_insert(1);
            *n += 1;
            match cidr {
                Some(net) => std::net::Ipv4Addr::from(u32::from(net.network()) + *n).to_string(),
                None => format!("10.128.0.{n}"),
            }
        } else {
            self.next_external += 1;
            format!("198.51.100.{}", self.next_external)
        }
    }

    /// Who refers to `link` (another object holding it anywhere in its JSON), apart from
    /// networks' own list of subnetworks and templates (which GCE does not count).
    fn user_of(&self, link: &str) -> Option<String> {
        fn holds(j: &Json, link: &str) -> bool {
            match j {
                Json::String(s) => s == link,
                Json::Array(a) => a.iter().any(|v| holds(v, link)),
                Json::Object(m) => m
                    .iter()
                    .any(|(k, v)| k != "selfLink" && k != "subnetworks" && holds(v, link)),
                _ => false,
            }
        }
        for (coll, m) in &self.objects {
            // A template or an instance made from a template does not keep it (or its
            // group) in use: only a group does.
            if coll.ends_with("/instanceTemplates") || coll.ends_with("/instances") {
                continue;
            }
            for (name, j) in m {
                let is_network_list = coll.ends_with("/networks");
                if !is_network_list && holds(j, link) {
                    return Some(format!("projects/{}/{coll}/{name}", self.project));
                }
            }
        }
        None
    }

    fn delete(&mut self, scope: &str, coll: &str, name: &str) -> Result<Json, Fail> {
        let path = format!("{scope}/{coll}");
        let link = self.url(&format!("{path}/{name}"));
        let Some(obj) = self.objects.get(&path).and_then(|m| m.get(name)).cloned() else {
            return Err(not_found(&self.project, &path, name));
        };
        if let Some(user) = self.user_of(&link) {
            let msg = format!(
                "The resource 'projects/{}/{path}/{name}' is already being used by '{user}'",
                self.project
            );
            return Ok(self.operation(
                scope,
                "delete",
                &link,
                Some(fail(400, "resourceInUseByAnotherResource", msg)),
            ));
        }
        if let Some(m) = self.objects.get_mut(&path) {
            m.remove(name);
        }
        if coll == "instanceGroupManagers" {
            self.sync_instances(scope, name);
        }
        if coll == "subnetworks"
            && let Some(net) = obj.get("network").and_then(Json::as_str).map(str::to_owned)
        {
            let path = net
                .strip_prefix(&self.url(""))
                .unwrap_or_default()
                .to_owned();
            if let Some((c, n)) = path.rsplit_once('/')
                && let Some(n) = self.objects.get_mut(c).and_then(|m| m.get_mut(n))
                && let Some(Json::Array(list)) = n.get_mut("subnetworks")
            {
                list.retain(|l| l.as_str() != Some(link.as_str()));
            }
        }
        Ok(self.operation(scope, "delete", &link, None))
    }

    fn get_mut(&mut self, scope: &str, coll: &str, name: &str) -> Result<&mut Json, Fail> {
        let path = format!("{scope}/{coll}");
        let project = self.project.clone();
        self.objects
            .get_mut(&path)
            .and_then(|m| m.get_mut(name))
            .ok_or_else(|| not_found(&project, &path, name))
    }

    fn patch(
        &mut self,
        scope: &str,
        coll: &str,
        name: &str,
        body: Json,
        replace: bool,
    ) -> Result<Json, Fail> {
        let Json::Object(fields) = body else {
            return Err(fail(400, "invalid", "the body is not an object"));
        };
        for k in ["network", "subnetwork"] {
            if let Some(l) = fields.get(k).and_then(Json::as_str)
                && !self.exists_link(l)
            {
                return Err(fail(
                    404,
                    "notFound",
                    format!("The resource '{l}' was not found"),
                ));
            }
        }
        self.serial += 1;
        let serial = self.serial;
        let o = self.get_mut(scope, coll, name)?;
        if let Some(fp) = fields.get("fingerprint")
            && o.get("fingerprint") != Some(fp)
        {
            return Err(fail(
                412,
                "conditionNotMet",
                "Precondition Failed: the fingerprint does not match",
            ));
        }
        let link = o.get("selfLink").cloned().unwrap_or(Json::Null);
        if let Some(m) = o.as_object_mut() {
            if replace {
                let keep: Vec<&str> = vec![
                    "kind",
                    "id",
                    "creationTimestamp",
                    "selfLink",
                    "zone",
                    "region",
                    "labelFingerprint",
                ];
                m.retain(|k, _| keep.contains(&k.as_str()));
            }
            for (k, v) in fields {
                if k == "fingerprint" {
                    continue;
                }
                m.insert(k, v);
            }
            m.insert("fingerprint".into(), json!(format!("fp{serial}")));
        }
        let link = link.as_str().unwrap_or_default().to_owned();
        if coll == "instanceGroupManagers" {
            self.sync_instances(scope, name);
        }
        Ok(self.operation(scope, if replace { "update" } else { "patch" }, &link, None))
    }

    fn verb(
        &mut self,
        scope: &str,
        coll: &str,
        name: &str,
        verb: &str,
        q: &BTreeMap<String, String>,
        body: Json,
    ) -> Result<Json, Fail> {
        for k in ["instanceTemplate", "target"] {
            if let Some(l) = body.get(k).and_then(Json::as_str)
                && !self.exists_link(l)
            {
                return Err(fail(
                    404,
                    "notFound",
                    format!("The resource '{l}' was not found"),
                ));
            }
        }
        let o = self.get_mut(scope, coll, name)?;
        let link = o
            .get("selfLink")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_owned();
        match (coll, verb) {
            (_, "setLabels") => {
                let want = o.get("labelFingerprint").cloned().unwrap_or(Json::Null);
                if body.get("labelFingerprint") != Some(&want) {
                    return Err(fail(
                        412,
                        "conditionNotMet",
                        "Labels fingerprint either invalid or resource labels have changed",
                    ));
                }
                let labels = body.get("labels").cloned().unwrap_or(json!({}));
                o["labelFingerprint"] = json!(fingerprint(&labels));
                o["labels"] = labels;
            }
            ("instanceGroupManagers", "setInstanceTemplate") => {
                let t = body.get("instanceTemplate").cloned().unwrap_or(Json::Null);
                o["instanceTemplate"] = t.clone();
                o["versions"] = json!([{ "instanceTemplate": t, "targetSize": {"calculated": o.get("targetSize")} }]);
            }
            ("instanceGroupManagers", "setTargetPools") => {
                o["targetPools"] = body.get("targetPools").cloned().unwrap_or(json!([]));
            }
            ("instanceGroupManagers", "resize") => {
                let n = q
                    .get("size")
                    .and_then(|s| s.parse::<i64>().ok())
                    .ok_or_else(|| fail(400, "required", "Required field 'size' not specified"))?;
                o["targetSize"] = json!(n);
            }
            ("disks", "resize") => {
                o["sizeGb"] = body.get("sizeGb").cloned().unwrap_or(Json::Null);
            }
            ("forwardingRules", "setTarget") => {
                o["target"] = body.get("target").cloned().unwrap_or(Json::Null);
            }
            ("targetPools", "addHealthCheck" | "removeHealthCheck") => {
                let mut list: Vec<Json> = o
                    .get("healthChecks")
                    .and_then(Json::as_array)
                    .cloned()
                    .unwrap_or_default();
                for h in body
                    .get("healthChecks")
                    .and_then(Json::as_array)
                    .into_iter()
                    .flatten()
                {
                    let Some(h) = h.get("healthCheck") else {
                        continue;
                    };
                    list.retain(|x| x != h);
                    if verb == "addHealthCheck" {
                        list.push(h.clone());
                    }
                }
                o["healthChecks"] = Json::Array(list);
            }
            _ => {
                return Err(fail(
                    400,
                    "invalid",
                    format!("unknown method {coll}.{verb}"),
                ));
            }
        }
        if (coll, verb) == ("instanceGroupManagers", "resize") {
            self.sync_instances(scope, name);
        }
        Ok(self.operation(scope, verb, &link, None))
    }

    fn list(&self, path: &str, q: &BTreeMap<String, String>) -> Result<Json, Fail> {
        let terms = match q.get("filter") {
            Some(f) if !f.is_empty() => parse_filter(f)?,
            _ => Vec::new(),
        };
        let items: Vec<Json> = self
            .objects
            .get(path)
            .into_iter()
            .flat_map(|m| m.values())
            .filter(|j| matches(j, &terms))
            .cloned()
            .collect();
        let (items, next) = page(items, q, self.page_size)?;
        let mut out = json!({
            "kind": "compute#list",
            "id": format!("projects/{}/{path}", self.project),
            "items": items,
            "selfLink": self.url(path),
        });
        if let Some(n) = next {
            out["nextPageToken"] = json!(n);
        }
        Ok(out)
    }

    fn aggregated(&self, coll: &str, q: &BTreeMap<String, String>) -> Result<Json, Fail> {
        let terms = match q.get("filter") {
            Some(f) if !f.is_empty() => parse_filter(f)?,
            _ => Vec::new(),
        };
        let mut all = Vec::new();
        for z in &self.zones {
            let path = format!("zones/{z}/{coll}");
            for j in self.objects.get(&path).into_iter().flat_map(|m| m.values()) {
                if matches(j, &terms) {
                    all.push((format!("zones/{z}"), j.clone()));
                }
            }
        }
        let tagged: Vec<Json> = all.into_iter().map(|(z, j)| json!([z, j])).collect();
        let (items, next) = page(tagged, q, self.page_size)?;
        let mut scoped = Map::new();
        for z in &self.zones {
            scoped.insert(
                format!("zones/{z}"),
                json!({ "warning": { "code": "NO_RESULTS_ON_PAGE" } }),
            );
        }
        for it in items {
            let (Some(z), Some(j)) = (it.get(0).and_then(Json::as_str), it.get(1)) else {
                continue;
            };
            let e = scoped.entry(z.to_owned()).or_insert(json!({}));
            if e.get("warning").is_some() {
                *e = json!({ coll: [] });
            }
            if let Some(Json::Array(a)) = e.get_mut(coll) {
                a.push(j.clone());
            }
        }
        let mut out = json!({ "kind": "compute#aggregatedList", "items": scoped });
        if let Some(n) = next {
            out["nextPageToken"] = json!(n);
        }
        Ok(out)
    }

    fn compute(
        &mut self,
        method: &Method,
        segs: &[&str],
        q: &BTreeMap<String, String>,
        body: Json,
    ) -> Result<Json, Fail> {
        let project = self.project.clone();
        if segs.is_empty() {
            self.count("compute.projects.get".into());
            return Ok(json!({ "kind": "compute#project", "name": project,
                "id": "1234567890", "defaultServiceAccount": self.default_sa }));
        }
        if segs == ["zones"] {
            self.count("compute.zones.list".into());
            let zones: Vec<Json> = self
                .zones
                .iter()
                .map(|z| {
                    json!({ "kind": "compute#zone", "name": z, "status": "UP",
                    "region": self.url(&format!("regions/{}", self.region)),
                    "selfLink": self.url(&format!("zones/{z}")) })
                })
                .collect();
            let (items, next) = page(zones, q, self.page_size)?;
            let mut out = json!({ "kind": "compute#zoneList", "items": items });
            if let Some(n) = next {
                out["nextPageToken"] = json!(n);
            }
            return Ok(out);
        }
        if let ["aggregated", coll] = segs {
            self.count(format!("compute.{coll}.aggregatedList"));
            return self.aggregated(coll, q);
        }
        let (scope, rest) = match segs {
            ["global", rest @ ..] => ("global".to_owned(), rest),
            [kind @ ("regions" | "zones"), loc, rest @ ..] => (format!("{kind}/{loc}"), rest),
            _ => {
                return Err(fail(
                    404,
                    "notFound",
                    format!("no such path {}", segs.join("/")),
                ));
            }
        };
        match (method.clone(), rest) {
            (Method::GET, ["operations", op]) | (Method::POST, ["operations", op, "wait"]) => {
                let kind = match scope.split('/').next() {
                    Some("zones") => "zoneOperations",
                    Some("regions") => "regionOperations",
                    _ => "globalOperations",
                };
                let verb = if method == Method::GET { "get" } else { "wait" };
                self.count(format!("compute.{kind}.{verb}"));
                self.operations
                    .get(*op)
                    .cloned()
                    .ok_or_else(|| not_found(&project, &format!("{scope}/operations"), op))
            }
            (Method::GET, [coll]) => {
                self.count(format!("compute.{coll}.list"));
                self.list(&format!("{scope}/{coll}"), q)
            }
            (Method::POST, [coll]) => {
                self.count(format!("compute.{coll}.insert"));
                self.insert(&scope, coll, body)
            }
            (Method::GET, [coll, name]) => {
                self.count(format!("compute.{coll}.get"));
                let path = format!("{scope}/{coll}");
                self.objects
                    .get(&path)
                    .and_then(|m| m.get(*name))
                    .cloned()
                    .ok_or_else(|| not_found(&project, &path, name))
            }
            (Method::DELETE, [coll, name]) => {
                self.count(format!("compute.{coll}.delete"));
                self.delete(&scope, coll, name)
            }
            (Method::PATCH, [coll, name]) => {
                self.count(format!("compute.{coll}.patch"));
                self.patch(&scope, coll, name, body, false)
            }
            (Method::PUT, [coll, name]) => {
                self.count(format!("compute.{coll}.update"));
                self.patch(&scope, coll, name, body, true)
            }
            (Method::POST, ["instanceGroupManagers", name, "listManagedInstances"]) => {
                self.count("compute.instanceGroupManagers.listManagedInstances".into());
                self.list_managed(&scope, name, q)
            }
            (Method::POST, ["instanceGroupManagers", name, "recreateInstances"]) => {
                self.count("compute.instanceGroupManagers.recreateInstances".into());
                self.recreate(&scope, name, &body)
            }
            (Method::POST, [coll, name, verb]) => {
                self.count(format!("compute.{coll}.{verb}"));
                self.verb(&scope, coll, name, verb, q, body)
            }
            _ => Err(fail(
                404,
                "notFound",
                format!("no such method {method} {}", segs.join("/")),
            )),
        }
    }

    fn iam(&mut self, method: &Method, rest: &[&str], body: Json) -> Result<Json, Fail> {
        match (method.clone(), rest) {
            (Method::GET, []) => {
                self.count("iam.serviceAccounts.list".into());
                Ok(json!({ "accounts": self.accounts.values().cloned().collect::<Vec<_>>() }))
            }
            (Method::POST, []) => {
                self.count("iam.serviceAccounts.create".into());
                let id = body
                    .get("accountId")
                    .and_then(Json::as_str)
                    .unwrap_or_default();
                let valid = (6..=30).contains(&id.len())
                    && id.starts_with(|c: char| c.is_ascii_lowercase())
                    && id
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                    && !id.ends_with('-');
                if !valid {
                    return Err(fail(
                        400,
                        "badRequest",
                        format!("Invalid value for field 'accountId': '{id}'"),
                    ));
                }
                let email = format!("{id}@{}.iam.gserviceaccount.com", self.project);
                if self.accounts.contains_key(&email) {
                    return Err(fail(
                        409,
                        "alreadyExists",
                        format!(
                            "Service account {id} already exists within project projects/{}.",
                            self.project
                        ),
                    ));
                }
                self.serial += 1;
                let sa = body.get("serviceAccount").cloned().unwrap_or(json!({}));
                let mut a = json!({
                    "name": format!("projects/{}/serviceAccounts/{email}", self.project),
                    "projectId": self.project,
                    "uniqueId": (100_000_000_000_000_000_000u128 + u128::from(self.serial)).to_string(),
                    "email": email,
                    "etag": "MDEwMjE5MjA=",
                    "oauth2ClientId": (100_000_000_000_000_000_000u128 + u128::from(self.serial)).to_string(),
                });
                for k in ["displayName", "description"] {
                    if let Some(v) = sa.get(k).filter(|v| !v.is_null()) {
                        a[k] = v.clone();
                    }
                }
                self.accounts.insert(email, a.clone());
                Ok(a)
            }
            (m, [email]) => {
                let verb = match m {
                    Method::GET => "get",
                    Method::PATCH => "patch",
                    Method::DELETE => "delete",
                    _ => "unknown",
                };
                self.count(format!("iam.serviceAccounts.{verb}"));
                let project = self.project.clone();
                let missing = || {
                    fail(
                        404,
                        "notFound",
                        format!(
                            "Unknown service account projects/{project}/serviceAccounts/{email}"
                        ),
                    )
                };
                match verb {
                    "get" => self.accounts.get(*email).cloned().ok_or_else(missing),
                    "delete" => self
                        .accounts
                        .remove(*email)
                        .map(|_| json!({}))
                        .ok_or_else(missing),
                    "patch" => {
                        let a = self.accounts.get_mut(*email).ok_or_else(missing)?;
                        let sa = body.get("serviceAccount").cloned().unwrap_or(json!({}));
                        let mask = body
                            .get("updateMask")
                            .and_then(Json::as_str)
                            .unwrap_or_default();
                        for k in mask.split(',').filter(|k| !k.is_empty()) {
                            a[k] = sa.get(k).cloned().unwrap_or(Json::Null);
                        }
                        Ok(a.clone())
                    }
                    _ => Err(fail(405, "badRequest", "method not allowed")),
                }
            }
            _ => Err(fail(404, "notFound", "no such IAM method")),
        }
    }

    fn crm(&mut self, verb: &str, body: Json) -> Result<Json, Fail> {
        match verb {
            "getIamPolicy" => {
                self.count("cloudresourcemanager.projects.getIamPolicy".into());
                Ok(self.policy.clone())
            }
            "setIamPolicy" => {
                self.count("cloudresourcemanager.projects.setIamPolicy".into());
                let p = body.get("policy").cloned().unwrap_or(Json::Null);
                if p.get("etag") != self.policy.get("etag") {
                    return Err(fail(
                        409,
                        "aborted",
                        "There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff.",
                    ));
                }
                let mut p = p;
                if let Some(Json::Array(b)) = p.get_mut("bindings") {
                    b.retain(|b| {
                        b.get("members")
                            .and_then(Json::as_array)
                            .is_some_and(|m| !m.is_empty())
                    });
                }
                self.serial += 1;
                p["etag"] = json!(format!("BwX{}", self.serial));
                self.policy = p.clone();
                Ok(p)
            }
            _ => Err(fail(404, "notFound", "no such Resource Manager method")),
        }
    }

    fn storage(
        &mut self,
        method: &Method,
        bucket: &str,
        rest: &[&str],
        body: Json,
    ) -> Result<Json, Fail> {
        match (method.clone(), rest) {
            (Method::GET, ["iam"]) => {
                self.count("storage.buckets.getIamPolicy".into());
                Ok(self
                    .bucket_iam
                    .get(bucket)
                    .cloned()
                    .unwrap_or_else(|| json!({ "kind": "storage#policy", "resourceId": format!("projects/_/buckets/{bucket}"), "version": 1, "etag": "CAE=", "bindings": [] })))
            }
            (Method::PUT, ["iam"]) => {
                self.count("storage.buckets.setIamPolicy".into());
                let mut p = body;
                self.serial += 1;
                p["etag"] = json!(format!("CA{}", self.serial));
                self.bucket_iam.insert(bucket.to_owned(), p.clone());
                Ok(p)
            }
            (Method::GET, ["acl"]) => {
                self.count("storage.bucketAccessControls.list".into());
                Ok(json!({ "kind": "storage#bucketAccessControls",
                    "items": self.bucket_acl.get(bucket).cloned().unwrap_or_default() }))
            }
            (Method::POST, ["acl"]) => {
                self.count("storage.bucketAccessControls.insert".into());
                let entity = body
                    .get("entity")
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let role = body.get("role").cloned().unwrap_or(Json::Null);
                let list = self.bucket_acl.entry(bucket.to_owned()).or_default();
                list.retain(|e| e.get("entity").and_then(Json::as_str) != Some(entity.as_str()));
                let e = json!({ "kind": "storage#bucketAccessControl", "bucket": bucket, "entity": entity, "role": role });
                list.push(e.clone());
                Ok(e)
            }
            (Method::DELETE, ["acl", entity]) => {
                self.count("storage.bucketAccessControls.delete".into());
                let list = self.bucket_acl.entry(bucket.to_owned()).or_default();
                let before = list.len();
                list.retain(|e| e.get("entity").and_then(Json::as_str) != Some(*entity));
                if list.len() == before {
                    return Err(fail(404, "notFound", "Not Found"));
                }
                Ok(json!({}))
            }
            _ => Err(fail(404, "notFound", "no such Storage method")),
        }
    }
}

fn not_found(project: &str, path: &str, name: &str) -> Fail {
    fail(
        404,
        "notFound",
        format!("The resource 'projects/{project}/{path}/{name}' was not found"),
    )
}

async fn handle(state: &Mutex<Api>, req: Request<Incoming>) -> Reply {
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let q = query_map(req.uri().query());
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return error_reply(fail(400, "badRequest", e.to_string())),
    };
    let body: Json = if body.is_empty() {
        Json::Null
    } else {
        match serde_json::from_slice(&body) {
            Ok(j) => j,
            Err(e) => return error_reply(fail(400, "parseError", format!("Parse Error: {e}"))),
        }
    };
    let mut api = state.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((status, reason)) = api.faults.pop_front() {
        api.count(format!("fault.{reason}"));
        let message = match reason.as_str() {
            "quotaExceeded" => {
                "Quota 'SSD_TOTAL_GB' exceeded.  Limit: 500.0 in region us-test1.".to_owned()
            }
            other => format!("injected {other}"),
        };
        return error_reply((status, reason, message));
    }
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let project = api.project.clone();
    let result = match segs.as_slice() {
        ["compute", "v1", "projects", p, rest @ ..] if *p == project => {
            api.compute(&method, rest, &q, body)
        }
        ["v1", "projects", p, "serviceAccounts", rest @ ..] if *p == project => {
            api.iam(&method, rest, body)
        }
        ["v1", "projects", pv] if method == Method::POST => match pv.split_once(':') {
            Some((p, verb)) if p == project => api.crm(verb, body),
            _ => Err(fail(
                403,
                "forbidden",
                format!("The caller does not have permission on {pv}"),
            )),
        },
        ["dns", "v1", "projects", p, "managedZones"] if *p == project && method == Method::GET => {
            api.count("dns.managedZones.list".into());
            Ok(json!({ "kind": "dns#managedZonesListResponse",
                "managedZones": api.managed_zones.clone() }))
        }
        ["storage", "v1", "b", bucket, rest @ ..] => {
            let b = bucket.to_string();
            api.storage(&method, &b, rest, body)
        }
        ["compute", "v1", "projects", p, ..] => Err(fail(
            403,
            "forbidden",
            format!("Required 'compute.projects.get' permission for 'projects/{p}'"),
        )),
        _ => Err(fail(404, "notFound", format!("no such path {path}"))),
    };
    match result {
        Ok(j) => reply(200, &j),
        Err(f) => error_reply(f),
    }
}
