//! Between the vocabulary's attributes (Terraform names, references as names or links)
//! and the REST API's JSON (camelCase, references as URLs, int64 values as strings).
//!
//! Most fields follow one rule: `snake_case` <-> `camelCase`, nested objects too. Each
//! type lists its exceptions in a small table ([`fields`]): references built into URLs
//! on the way out and read back as names, int64 fields sent as strings, renamed fields.
//! Instance templates and router NATs have their own code.

use std::collections::BTreeMap;

use serde_json::{Map, Value as Json, json};

use crate::cloud::{COMPUTE_URL, GceResourceType, Resource, Scope, last_component, zone_to_region};

use GceResourceType as R;

/// What an attribute refers to, when it is a reference sent as a URL.
#[derive(Clone, Copy, Debug)]
enum To {
    Network,
    Subnetwork,
    Region,
    Zone,
    RegionHealthCheck,
    BackendService,
    DiskType,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    /// The value as it is (nested keys converted).
    Plain,
    /// An int64: a string on the wire.
    Int64,
    /// A name (or link) sent as a URL, read back as the name.
    Ref(To),
    /// A list of [`Kind::Ref`]s.
    Refs(To),
    /// A URL kept as it is (self-links), nested keys untouched.
    Link,
}

/// One field with an exception to the naming rule.
struct Field {
    tf: &'static str,
    rest: &'static str,
    kind: Kind,
}

const fn f(tf: &'static str, rest: &'static str, kind: Kind) -> Field {
    Field { tf, rest, kind }
}

/// The fields of a type that do not follow the plain rule.
fn fields(rt: GceResourceType) -> &'static [Field] {
    use Kind::*;
    match rt {
        R::Subnetwork => {
            const {
                &[
                    f("network", "network", Ref(To::Network)),
                    f("region", "region", Ref(To::Region)),
                    f("secondary_ip_range", "secondaryIpRanges", Plain),
                ]
            }
        }
        R::Router => {
            const {
                &[
                    f("network", "network", Ref(To::Network)),
                    f("region", "region", Ref(To::Region)),
                ]
            }
        }
        R::Firewall => const { &[f("network", "network", Ref(To::Network))] },
        R::Address => {
            const {
                &[
                    f("subnetwork", "subnetwork", Ref(To::Subnetwork)),
                    f("region", "region", Ref(To::Region)),
                ]
            }
        }
        R::RegionHealthCheck => const { &[f("region", "region", Ref(To::Region))] },
        R::RegionBackendService => {
            const {
                &[
                    f("health_checks", "healthChecks", Refs(To::RegionHealthCheck)),
                    f("backend", "backends", Plain),
                    f("region", "region", Ref(To::Region)),
                ]
            }
        }
        R::TargetPool => {
            const {
                &[
                    f("health_checks", "healthChecks", Link),
                    f("region", "region", Ref(To::Region)),
                ]
            }
        }
        R::ForwardingRule => {
            const {
                &[
                    f("ip_address", "IPAddress", Plain),
                    f("ip_protocol", "IPProtocol", Plain),
                    f("backend_service", "backendService", Ref(To::BackendService)),
                    f("network", "network", Ref(To::Network)),
                    f("subnetwork", "subnetwork", Ref(To::Subnetwork)),
                    f("target", "target", Link),
                    f("region", "region", Ref(To::Region)),
                ]
            }
        }
        R::Disk => {
            const {
                &[
                    f("zone", "zone", Ref(To::Zone)),
                    f("size", "sizeGb", Int64),
                    f("type", "type", Ref(To::DiskType)),
                    f("provisioned_iops", "provisionedIops", Int64),
                    f("provisioned_throughput", "provisionedThroughput", Int64),
                ]
            }
        }
        R::InstanceGroupManager => {
            const {
                &[
                    f("zone", "zone", Ref(To::Zone)),
                    f("target_pools", "targetPools", Link),
                    f("instance_group", "instanceGroup", Link),
                ]
            }
        }
        R::Instance => const { &[f("zone", "zone", Ref(To::Zone))] },
        _ => &[],
    }
}

/// REST fields never turned into attributes: identity and bookkeeping.
const SKIPPED: &[&str] = &[
    "id",
    "kind",
    "name",
    "creationTimestamp",
    "labels",
    "labelFingerprint",
    "fingerprint",
    "selfLinkWithId",
    "properties",
    "nats",
    "versions",
    "instanceTemplate",
    "allowed",
    "networkInterfaces",
    "tcpHealthCheck",
    "sslHealthCheck",
    "status",
    "type",
];

/// `snake_case` -> `camelCase`.
pub(crate) fn camel(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut up = false;
    for c in s.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `camelCase` -> `snake_case` (`IPProtocol` -> `ip_protocol`).
pub(crate) fn snake(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev_lower = i > 0 && !chars[i - 1].is_ascii_uppercase();
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if i > 0 && (prev_lower || next_lower) {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn deep(v: &Json, key: fn(&str) -> String) -> Json {
    match v {
        Json::Object(m) => Json::Object(m.iter().map(|(k, v)| (key(k), deep(v, key))).collect()),
        Json::Array(a) => Json::Array(a.iter().map(|v| deep(v, key)).collect()),
        other => other.clone(),
    }
}

fn str_of(v: &Json) -> Option<&str> {
    v.as_str()
}

/// Where the backend works: builds the URLs references become.
#[derive(Clone, Debug)]
pub(crate) struct Ctx {
    pub project: String,
    pub region: String,
}

impl Ctx {
    fn url(&self, path: &str) -> String {
        format!("{COMPUTE_URL}projects/{}/{path}", self.project)
    }

    /// A reference as a URL: links and `projects/...` paths stay, names are placed in
    /// their collection.
    fn link(&self, to: To, v: &str, zone: Option<&str>) -> String {
        if v.starts_with("https://") || v.starts_with("http://") {
            return v.to_owned();
        }
        if v.starts_with("projects/") {
            return format!("{COMPUTE_URL}{v}");
        }
        let r = &self.region;
        match to {
            To::Network => self.url(&format!("global/networks/{v}")),
            To::Subnetwork => self.url(&format!("regions/{r}/subnetworks/{v}")),
            To::Region => self.url(&format!("regions/{v}")),
            To::Zone => self.url(&format!("zones/{v}")),
            To::RegionHealthCheck => self.url(&format!("regions/{r}/healthChecks/{v}")),
            To::BackendService => self.url(&format!("regions/{r}/backendServices/{v}")),
            To::DiskType => self.url(&format!("zones/{}/diskTypes/{v}", zone.unwrap_or_default())),
        }
    }

    /// The collection URL path (after `projects/<p>/`) of `rt`, in `zone` for zonal types.
    pub(super) fn collection(&self, rt: GceResourceType, zone: Option<&str>) -> String {
        let coll = rt.facts().collection;
        match rt.scope() {
            Scope::Regional => format!("regions/{}/{coll}", self.region),
            Scope::Zonal => format!("zones/{}/{coll}", zone.unwrap_or_default()),
            _ => format!("global/{coll}"),
        }
    }

    /// The object path of an ID (`<zone>/<name>` for zonal types).
    pub(super) fn object(&self, rt: GceResourceType, id: &str) -> String {
        match (rt.scope(), id.split_once('/')) {
            (Scope::Zonal, Some((zone, name))) => {
                format!("{}/{name}", self.collection(rt, Some(zone)))
            }
            _ => format!("{}/{id}", self.collection(rt, None)),
        }
    }

    /// The REST body of an object of `rt` named `name` with these attributes and labels.
    pub(super) fn to_rest(
        &self,
        rt: GceResourceType,
        name: &str,
        attrs: &BTreeMap<String, Json>,
        labels: &BTreeMap<String, String>,
    ) -> Json {
        if rt == R::InstanceTemplate {
            return self.template_to_rest(name, attrs);
        }
        let zone = attrs.get("zone").and_then(str_of);
        let mut out = Map::new();
        if !name.is_empty() {
            out.insert("name".into(), json!(name));
        }
        let table = fields(rt);
        for (k, v) in attrs {
            if k == "self_link" || k == "labels" || v.is_null() {
                continue;
            }
            match table.iter().find(|f| f.tf == k) {
                Some(field) => {
                    let value = match field.kind {
                        Kind::Plain => deep(v, camel),
                        Kind::Int64 => match v.as_i64() {
                            Some(0) if k.starts_with("provisioned") => continue,
                            Some(n) => json!(n.to_string()),
                            None => v.clone(),
                        },
                        Kind::Ref(to) => match v.as_str() {
                            Some(s) => json!(self.link(to, s, zone)),
                            None => v.clone(),
                        },
                        Kind::Refs(to) => Json::Array(
                            v.as_array()
                                .into_iter()
                                .flatten()
                                .filter_map(str_of)
                                .map(|s| json!(self.link(to, s, zone)))
                                .collect(),
                        ),
                        Kind::Link => v.clone(),
                    };
                    out.insert(field.rest.into(), value);
                }
                None => {
                    self.special_to_rest(rt, k, v, &mut out);
                }
            }
        }
        // Regional objects carry their region.
        if rt.scope() == Scope::Regional && !out.contains_key("region") {
            out.insert(
                "region".into(),
                json!(self.link(To::Region, &self.region, None)),
            );
        }
        if rt.facts().labelled && !labels.is_empty() {
            out.insert("labels".into(), json!(labels));
        }
        Json::Object(out)
    }

    fn special_to_rest(&self, rt: GceResourceType, k: &str, v: &Json, out: &mut Map<String, Json>) {
        let one = |v: &Json| match v {
            Json::Array(a) => a.first().cloned().unwrap_or(Json::Null),
            other => other.clone(),
        };
        match (rt, k) {
            (R::Firewall, "allow") => {
                let allowed: Vec<Json> = v
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|a| {
                        let mut m = Map::new();
                        if let Some(p) = a.get("protocol") {
                            m.insert("IPProtocol".into(), p.clone());
                        }
                        if let Some(p) = a.get("ports") {
                            m.insert("ports".into(), p.clone());
                        }
                        Json::Object(m)
                    })
                    .collect();
                out.insert("allowed".into(), Json::Array(allowed));
            }
            (R::RegionHealthCheck, "tcp_health_check" | "ssl_health_check") => {
                let t = if k == "tcp_health_check" {
                    "TCP"
                } else {
                    "SSL"
                };
                out.insert("type".into(), json!(t));
                out.insert(camel(k), deep(&one(v), camel));
            }
            (R::InstanceGroupManager, "version") => {
                let tmpl = one(v)
                    .get("instance_template")
                    .cloned()
                    .unwrap_or(Json::Null);
                out.insert("instanceTemplate".into(), tmpl.clone());
                out.insert("versions".into(), json!([{ "instanceTemplate": tmpl }]));
            }
            (R::InstanceGroupManager, "update_policy") => {
                out.insert("updatePolicy".into(), deep(&one(v), camel));
            }
            (R::Address, "address") if v.as_str().is_some_and(str::is_empty) => {}
            _ => {
                out.insert(camel(k), deep(v, camel));
            }
        }
    }

    /// The vocabulary's object for a REST answer of `rt`.
    pub(super) fn read_rest(&self, rt: GceResourceType, j: &Json) -> Resource {
        if rt == R::InstanceTemplate {
            return self.read_template(j);
        }
        let name = j
            .get("name")
            .and_then(str_of)
            .unwrap_or_default()
            .to_owned();
        let mut attrs = BTreeMap::new();
        let table = fields(rt);
        let Some(obj) = j.as_object() else {
            return Resource::new(rt, name);
        };
        for (k, v) in obj {
            match table.iter().find(|f| f.rest == k) {
                Some(field) => {
                    let value = match field.kind {
                        Kind::Plain => deep(v, snake),
                        Kind::Int64 => v
                            .as_str()
                            .and_then(|s| s.parse::<i64>().ok())
                            .map_or_else(|| v.clone(), |n| json!(n)),
                        Kind::Ref(_) => v
                            .as_str()
                            .map_or_else(|| v.clone(), |s| json!(last_component(s))),
                        Kind::Refs(_) => Json::Array(
                            v.as_array()
                                .into_iter()
                                .flatten()
                                .filter_map(str_of)
                                .map(|s| json!(last_component(s)))
                                .collect(),
                        ),
                        Kind::Link => v.clone(),
                    };
                    attrs.insert(field.tf.to_owned(), value);
                }
                None if k == "selfLink" => {
                    attrs.insert("self_link".into(), v.clone());
                }
                None if SKIPPED.contains(&k.as_str()) => {}
                None => {
                    attrs.insert(snake(k), deep(v, snake));
                }
            }
        }
        self.special_from_rest(rt, j, &mut attrs);
        let labels: BTreeMap<String, String> = j
            .get("labels")
            .and_then(Json::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        let zone = attrs.get("zone").and_then(str_of).map(str::to_owned);
        let id = rt.id_of(&name, zone.as_deref());
        let mut r = Resource::new(rt, id).with_name(name);
        r.attrs = attrs.into();
        if rt.facts().labelled {
            r.tags = labels.into();
        }
        r
    }

    fn special_from_rest(&self, rt: GceResourceType, j: &Json, attrs: &mut BTreeMap<String, Json>) {
        match rt {
            R::Firewall => {
                let allow: Vec<Json> = j
                    .get("allowed")
                    .and_then(Json::as_array)
                    .into_iter()
                    .flatten()
                    .map(|a| {
                        let mut m = Map::new();
                        if let Some(p) = a.get("IPProtocol") {
                            m.insert("protocol".into(), p.clone());
                        }
                        if let Some(p) = a.get("ports") {
                            m.insert("ports".into(), p.clone());
                        }
                        Json::Object(m)
                    })
                    .collect();
                attrs.insert("allow".into(), Json::Array(allow));
            }
            R::RegionHealthCheck => {
                for k in ["tcpHealthCheck", "sslHealthCheck"] {
                    if let Some(v) = j.get(k) {
                        attrs.insert(snake(k), deep(v, snake));
                    }
                }
            }
            R::InstanceGroupManager => {
                let tmpl = j
                    .get("instanceTemplate")
                    .or_else(|| j.pointer("/versions/0/instanceTemplate"))
                    .cloned()
                    .unwrap_or(Json::Null);
                attrs.insert("version".into(), json!({ "instance_template": tmpl }));
            }
            R::Instance => {
                if let Some(s) = j.get("status") {
                    attrs.insert("status".into(), s.clone());
                }
                if let Some(m) = j.get("machineType").and_then(str_of) {
                    attrs.insert("machine_type".into(), json!(last_component(m)));
                }
                if let Some(ip) = j.pointer("/networkInterfaces/0/networkIP") {
                    attrs.insert("network_ip".into(), ip.clone());
                }
            }
            _ => {}
        }
    }

    fn template_to_rest(&self, name: &str, attrs: &BTreeMap<String, Json>) -> Json {
        let one = |k: &str| match attrs.get(k) {
            Some(Json::Array(a)) => a.first().cloned(),
            Some(Json::Null) | None => None,
            Some(v) => Some(v.clone()),
        };
        let mut p = Map::new();
        if let Some(m) = attrs.get("machine_type") {
            p.insert("machineType".into(), m.clone());
        }
        if let Some(c) = attrs.get("can_ip_forward") {
            p.insert("canIpForward".into(), c.clone());
        }
        let disks: Vec<Json> = match attrs.get("disk") {
            Some(Json::Array(a)) => a.clone(),
            Some(d @ Json::Object(_)) => vec![d.clone()],
            _ => Vec::new(),
        };
        let disks: Vec<Json> = disks.iter().map(disk_to_rest).collect();
        if !disks.is_empty() {
            p.insert("disks".into(), Json::Array(disks));
        }
        if let Some(Json::Object(m)) = attrs.get("metadata") {
            let items: Vec<Json> = m
                .iter()
                .map(|(k, v)| json!({ "key": k, "value": v }))
                .collect();
            p.insert(
                "metadata".into(),
                json!({ "kind": "compute#metadata", "items": items }),
            );
        }
        if let Some(nic) = one("network_interface") {
            let mut n = Map::new();
            n.insert("kind".into(), json!("compute#networkInterface"));
            if let Some(v) = nic.get("network").and_then(str_of) {
                n.insert("network".into(), json!(self.link(To::Network, v, None)));
            }
            if let Some(v) = nic.get("subnetwork").and_then(str_of) {
                n.insert(
                    "subnetwork".into(),
                    json!(self.link(To::Subnetwork, v, None)),
                );
            }
            if let Some(v) = nic.get("stack_type") {
                n.insert("stackType".into(), v.clone());
            }
            if nic.get("access_config").is_some_and(|a| !a.is_null()) {
                n.insert(
                    "accessConfigs".into(),
                    json!([{ "kind": "compute#accessConfig", "name": "external-nat",
                        "type": "ONE_TO_ONE_NAT", "networkTier": "PREMIUM" }]),
                );
            }
            if let Some(a) = nic.get("alias_ip_range") {
                let list = match a {
                    Json::Array(_) => a.clone(),
                    other => json!([other]),
                };
                n.insert("aliasIpRanges".into(), deep(&list, camel));
            }
            p.insert("networkInterfaces".into(), json!([n]));
        }
        if let Some(s) = one("scheduling") {
            p.insert("scheduling".into(), deep(&s, camel));
        }
        if let Some(sa) = one("service_account") {
            p.insert("serviceAccounts".into(), json!([deep(&sa, camel)]));
        }
        if let Some(t) = attrs.get("tags") {
            p.insert("tags".into(), json!({ "items": t }));
        }
        if let Some(l) = attrs.get("labels") {
            p.insert("labels".into(), l.clone());
        }
        if let Some(Json::Array(g)) = attrs.get("guest_accelerator") {
            let list: Vec<Json> = g
                .iter()
                .map(|a| json!({ "acceleratorType": a.get("type"), "acceleratorCount": a.get("count") }))
                .collect();
            p.insert("guestAccelerators".into(), Json::Array(list));
        }
        json!({ "name": name, "properties": p })
    }

    fn read_template(&self, j: &Json) -> Resource {
        let name = j
            .get("name")
            .and_then(str_of)
            .unwrap_or_default()
            .to_owned();
        let p = j.get("properties").cloned().unwrap_or(Json::Null);
        let mut a = BTreeMap::new();
        a.insert(
            "name_prefix".to_owned(),
            json!(name.trim_end_matches(|c: char| c.is_ascii_digit())),
        );
        if let Some(l) = j.get("selfLink") {
            a.insert("self_link".into(), l.clone());
        }
        if let Some(m) = p.get("machineType").and_then(str_of) {
            a.insert("machine_type".into(), json!(last_component(m)));
        }
        if let Some(c) = p.get("canIpForward") {
            a.insert("can_ip_forward".into(), c.clone());
        }
        if let Some(Json::Array(d)) = p.get("disks") {
            a.insert(
                "disk".into(),
                Json::Array(d.iter().map(disk_from_rest).collect()),
            );
        }
        if let Some(Json::Array(items)) = p.pointer("/metadata/items") {
            let m: Map<String, Json> = items
                .iter()
                .filter_map(|i| {
                    Some((
                        i.get("key")?.as_str()?.to_owned(),
                        i.get("value").cloned().unwrap_or(Json::Null),
                    ))
                })
                .collect();
            a.insert("metadata".into(), Json::Object(m));
        }
        if let Some(Json::Array(nics)) = p.get("networkInterfaces") {
            let list: Vec<Json> = nics
                .iter()
                .map(|n| {
                    let mut m = Map::new();
                    for (k, v) in [("network", "network"), ("subnetwork", "subnetwork")] {
                        if let Some(s) = n.get(k).and_then(str_of) {
                            m.insert(v.into(), json!(last_component(s)));
                        }
                    }
                    if let Some(s) = n.get("stackType") {
                        m.insert("stack_type".into(), s.clone());
                    }
                    if let Some(Json::Array(acs)) = n.get("accessConfigs")
                        && !acs.is_empty()
                    {
                        let list: Vec<Json> = acs
                            .iter()
                            .map(|ac| {
                                let mut o = Map::new();
                                if let Some(t) = ac.get("networkTier") {
                                    o.insert("network_tier".into(), t.clone());
                                }
                                if let Some(ip) = ac.get("natIP") {
                                    o.insert("nat_ip".into(), ip.clone());
                                }
                                Json::Object(o)
                            })
                            .collect();
                        m.insert("access_config".into(), Json::Array(list));
                    }
                    if let Some(r) = n.get("aliasIpRanges") {
                        m.insert("alias_ip_range".into(), deep(r, snake));
                    }
                    Json::Object(m)
                })
                .collect();
            a.insert("network_interface".into(), Json::Array(list));
        }
        if let Some(s) = p.get("scheduling") {
            a.insert("scheduling".into(), deep(s, snake));
        }
        if let Some(Json::Array(sas)) = p.get("serviceAccounts") {
            a.insert(
                "service_account".into(),
                Json::Array(sas.iter().map(|s| deep(s, snake)).collect()),
            );
        }
        if let Some(t) = p.pointer("/tags/items") {
            a.insert("tags".into(), t.clone());
        }
        let labels: BTreeMap<String, String> = p
            .get("labels")
            .and_then(Json::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        if p.get("labels").is_some() {
            a.insert("labels".into(), json!(labels));
        }
        if let Some(Json::Array(g)) = p.get("guestAccelerators") {
            let list: Vec<Json> = g
                .iter()
                .map(|x| json!({ "type": x.get("acceleratorType"), "count": x.get("acceleratorCount") }))
                .collect();
            a.insert("guest_accelerator".into(), Json::Array(list));
        }
        let mut r = Resource::new(R::InstanceTemplate, name.clone()).with_name(name);
        r.attrs = a.into();
        r.tags = labels.into();
        r
    }

    /// The router NATs of a router answer, as `RouterNat` objects.
    pub(super) fn nats_from_router(&self, router: &Json) -> Vec<Resource> {
        let rname = router.get("name").and_then(str_of).unwrap_or_default();
        let link = router.get("selfLink").cloned().unwrap_or(Json::Null);
        let region = router
            .get("region")
            .and_then(str_of)
            .map_or(self.region.as_str(), last_component);
        router
            .get("nats")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .map(|n| {
                let name = n.get("name").and_then(str_of).unwrap_or_default();
                let mut a = BTreeMap::new();
                a.insert("router".to_owned(), json!(rname));
                a.insert("region".to_owned(), json!(region));
                a.insert("self_link".to_owned(), link.clone());
                for (k, v) in n.as_object().into_iter().flatten() {
                    if k == "name" {
                        continue;
                    }
                    if k == "subnetworks" {
                        let list: Vec<Json> = v
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|s| {
                                let mut o = Map::new();
                                if let Some(n) = s.get("name").and_then(str_of) {
                                    o.insert("name".into(), json!(last_component(n)));
                                }
                                if let Some(r) = s.get("sourceIpRangesToNat") {
                                    o.insert("source_ip_ranges_to_nat".into(), r.clone());
                                }
                                Json::Object(o)
                            })
                            .collect();
                        a.insert("subnetwork".into(), Json::Array(list));
                    } else {
                        a.insert(snake(k), deep(v, snake));
                    }
                }
                let mut r = Resource::new(R::RouterNat, format!("{rname}/{name}"))
                    .with_name(name)
                    .with_parent(rname);
                r.attrs = a.into();
                r
            })
            .collect()
    }

    /// A router NAT's entry in its router's `nats`.
    pub(super) fn nat_to_rest(&self, name: &str, attrs: &BTreeMap<String, Json>) -> Json {
        let mut n = Map::new();
        n.insert("name".into(), json!(name));
        for (k, v) in attrs {
            match k.as_str() {
                "router" | "region" | "self_link" => {}
                "subnetwork" => {
                    let list: Vec<Json> = v
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|s| {
                            let name = s.get("name").and_then(str_of).unwrap_or_default();
                            json!({
                                "name": self.link(To::Subnetwork, name, None),
                                "sourceIpRangesToNat": s.get("source_ip_ranges_to_nat"),
                            })
                        })
                        .collect();
                    n.insert("subnetworks".into(), Json::Array(list));
                }
                _ => {
                    n.insert(camel(k), deep(v, camel));
                }
            }
        }
        Json::Object(n)
    }

    /// The zone of a zonal attribute set, checked against the region.
    pub(super) fn zone_of<'a>(&self, attrs: &'a BTreeMap<String, Json>) -> Option<&'a str> {
        attrs
            .get("zone")
            .and_then(str_of)
            .map(last_component)
            .filter(|z| zone_to_region(z).is_some())
    }
}

/// A template disk block (`disk`) as the API's attached disk.
fn disk_to_rest(d: &Json) -> Json {
    let s = |k: &str| d.get(k).and_then(str_of).filter(|s| !s.is_empty());
    let i = |k: &str| d.get(k).and_then(Json::as_i64).filter(|n| *n > 0);
    let mut init = Map::new();
    if let Some(img) = s("source_image") {
        init.insert("sourceImage".into(), json!(image_link(img)));
    }
    if let Some(n) = i("disk_size_gb") {
        init.insert("diskSizeGb".into(), json!(n.to_string()));
    }
    if let Some(t) = s("disk_type") {
        init.insert("diskType".into(), json!(t));
    }
    if let Some(n) = s("disk_name") {
        init.insert("diskName".into(), json!(n));
    }
    if let Some(n) = i("provisioned_iops") {
        init.insert("provisionedIops".into(), json!(n.to_string()));
    }
    if let Some(n) = i("provisioned_throughput") {
        init.insert("provisionedThroughput".into(), json!(n.to_string()));
    }
    let mut out = Map::new();
    out.insert("kind".into(), json!("compute#attachedDisk"));
    for (tf, rest) in [("auto_delete", "autoDelete"), ("boot", "boot")] {
        if let Some(v) = d.get(tf) {
            out.insert(rest.into(), v.clone());
        }
    }
    for (tf, rest) in [
        ("device_name", "deviceName"),
        ("mode", "mode"),
        ("type", "type"),
        ("interface", "interface"),
        ("source", "source"),
    ] {
        if let Some(v) = s(tf) {
            out.insert(rest.into(), json!(v));
        }
    }
    out.insert("initializeParams".into(), Json::Object(init));
    Json::Object(out)
}

/// An attached disk as the template's `disk` block; fields the API leaves out come back
/// as Terraform reports them (`""`, `0`).
fn disk_from_rest(d: &Json) -> Json {
    let s = |v: Option<&Json>| json!(v.and_then(str_of).unwrap_or(""));
    let n = |v: Option<&Json>| {
        json!(
            v.and_then(|v| v
                .as_str()
                .and_then(|s| s.parse::<i64>().ok())
                .or(v.as_i64()))
                .unwrap_or(0)
        )
    };
    let ip = d.get("initializeParams");
    let p = |k: &str| ip.and_then(|i| i.get(k));
    json!({
        "auto_delete": d.get("autoDelete").cloned().unwrap_or(json!(false)),
        "boot": d.get("boot").cloned().unwrap_or(json!(false)),
        "device_name": s(d.get("deviceName")),
        "disk_name": s(p("diskName")),
        "disk_size_gb": n(p("diskSizeGb")),
        "disk_type": s(p("diskType").and_then(str_of).map(last_component).map(Json::from).as_ref()),
        "interface": s(d.get("interface")),
        "mode": s(d.get("mode")),
        "provisioned_iops": n(p("provisionedIops")),
        "provisioned_throughput": n(p("provisionedThroughput")),
        "source": s(d.get("source")),
        "source_image": s(p("sourceImage")),
        "type": s(d.get("type")),
    })
}

/// `project/image` as the image's URL; URLs and other forms stay.
fn image_link(img: &str) -> String {
    match img.split_once('/') {
        Some((project, image)) if !img.contains("://") && !image.contains('/') => {
            format!("{COMPUTE_URL}projects/{project}/global/images/{image}")
        }
        _ => img.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx {
        Ctx {
            project: "p".into(),
            region: "us-test1".into(),
        }
    }

    #[test]
    fn names_convert_both_ways() {
        assert_eq!(camel("ip_cidr_range"), "ipCidrRange");
        assert_eq!(snake("ipCidrRange"), "ip_cidr_range");
        assert_eq!(snake("IPProtocol"), "ip_protocol");
        assert_eq!(snake("IPAddress"), "ip_address");
        assert_eq!(snake("selfLink"), "self_link");
    }

    #[test]
    fn references_become_urls_and_come_back_as_names() {
        let c = ctx();
        let attrs: BTreeMap<String, Json> = [
            ("network".to_owned(), json!("net")),
            ("region".to_owned(), json!("us-test1")),
            ("ip_cidr_range".to_owned(), json!("10.0.0.0/20")),
        ]
        .into();
        let body = c.to_rest(R::Subnetwork, "sub", &attrs, &BTreeMap::new());
        assert_eq!(
            body["network"],
            "https://www.googleapis.com/compute/v1/projects/p/global/networks/net"
        );
        assert_eq!(body["ipCidrRange"], "10.0.0.0/20");
        let back = c.read_rest(R::Subnetwork, &body);
        for (k, v) in &attrs {
            assert_eq!(back.attrs.get(k), Some(v), "{k}");
        }
    }

    #[test]
    fn int64_values_are_strings_on_the_wire() {
        let c = ctx();
        let attrs: BTreeMap<String, Json> = [
            ("zone".to_owned(), json!("us-test1-a")),
            ("size".to_owned(), json!(20)),
            ("type".to_owned(), json!("pd-ssd")),
        ]
        .into();
        let labels: BTreeMap<String, String> = [("a".to_owned(), "b".to_owned())].into();
        let body = c.to_rest(R::Disk, "d", &attrs, &labels);
        assert_eq!(body["sizeGb"], "20");
        assert!(
            body["type"]
                .as_str()
                .is_some_and(|t| t.ends_with("/zones/us-test1-a/diskTypes/pd-ssd"))
        );
        let back = c.read_rest(R::Disk, &body);
        assert_eq!(back.id, "us-test1-a/d");
        assert_eq!(back.attrs.get("size"), Some(&json!(20)));
        assert_eq!(back.attrs.get("type"), Some(&json!("pd-ssd")));
        assert_eq!(back.tags, labels);
    }

    #[test]
    fn a_template_round_trips() {
        let c = ctx();
        let attrs: BTreeMap<String, Json> = [
            ("machine_type".to_owned(), json!("e2-medium")),
            ("name_prefix".to_owned(), json!("nodes-x-")),
            ("metadata".to_owned(), json!({"cluster-name": "x"})),
            ("tags".to_owned(), json!(["t"])),
            ("labels".to_owned(), json!({"k8s-io-cluster-name": "x"})),
            (
                "network_interface".to_owned(),
                json!({"access_config": {}, "network": "n", "subnetwork": "s", "stack_type": "IPV4_ONLY"}),
            ),
            (
                "disk".to_owned(),
                json!({"auto_delete": true, "boot": true, "device_name": "persistent-disks-0",
                    "disk_name": "", "disk_size_gb": 128, "disk_type": "pd-standard",
                    "interface": "", "mode": "READ_WRITE", "provisioned_iops": 0,
                    "provisioned_throughput": 0, "source": "",
                    "source_image": "https://www.googleapis.com/compute/v1/projects/ubuntu-os-cloud/global/images/ubuntu-2404",
                    "type": "PERSISTENT"}),
            ),
        ]
        .into();
        let body = c.to_rest(
            R::InstanceTemplate,
            "nodes-x-1700000000000",
            &attrs,
            &BTreeMap::new(),
        );
        assert_eq!(
            body["properties"]["disks"][0]["initializeParams"]["diskSizeGb"],
            "128"
        );
        let back = c.read_rest(R::InstanceTemplate, &body);
        assert_eq!(back.attrs["name_prefix"], "nodes-x-");
        assert_eq!(back.attrs["disk"][0], attrs["disk"]);
        assert_eq!(back.attrs["metadata"], attrs["metadata"]);
        assert_eq!(back.attrs["network_interface"][0]["subnetwork"], "s");
        assert_eq!(back.tags.get("k8s-io-cluster-name"), Some("x"));
    }
}
