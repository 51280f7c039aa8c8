//! [`MockGce`]: an in-memory GCE project for tests, implementing
//! `kops_cloud_gce::GceCloud` (in the spirit of kOps' `cloudmock/gce`).
//!
//! It holds every [`GceResourceType`] as [`Resource`]s keyed by type and ID, answers
//! [`ListQuery`]s client-side, and behaves as GCE does where the model depends on it:
//!
//! - **names**: a create names its object; a second create of the same name is
//!   `AlreadyExists`; zonal objects are `<zone>/<name>`;
//! - **self-links** on every object (`https://www.googleapis.com/compute/v1/...`);
//! - **addresses** are allocated: internal ones from the subnetwork's range, external
//!   ones from 203.0.113.0/24;
//! - **instance templates** are named `<name_prefix><n>` and their labels are the
//!   object's labels; an update replaces the template, re-points the managed instance
//!   groups that used it and deletes the old one;
//! - **managed instance groups** report their `instance_group` link and keep
//!   `target_size` instances, named `<base_instance_name>-<4 characters>` and made from
//!   the group's template at the time; a replaced template re-points the group, not its
//!   instances, until they are recreated (which keeps their names);
//! - **deletes** refuse what others still use (a network with subnetworks or firewall
//!   rules, a template a group uses) with `Conflict`;
//! - **Cloud DNS** holds one public managed zone, `example.com.` with ID `1`, as kOps'
//!   fake Cloud DNS does (its GCE integration tests get their `dnsZone: "1"` from it);
//!   [`MockGce::set_managed_zones`] replaces it;
//! - **calls** are counted per REST method (`compute.firewalls.list`), for API-call
//!   budgets ([`MockGce::calls`], [`MockGce::total_calls`]).
//!
//! ```
//! # async fn demo() -> Result<(), kops_cloud_gce::cloud::CloudError> {
//! use kops_cloud_gce::GceResourceType;
//! use kops_cloud_gce::cloud::{CreateRequest, ListQuery, ResourceCloud};
//! use kops_mock::gce::MockGce;
//!
//! let cloud = MockGce::new("testproject", "us-test1");
//! let net = cloud
//!     .create(&CreateRequest::new(GceResourceType::Network).with_name("net"))
//!     .await?;
//! assert!(net.attr_str("self_link").is_some_and(|l| l.ends_with("/global/networks/net")));
//! assert_eq!(cloud.list(&ListQuery::new(GceResourceType::Network)).await?.len(), 1);
//! # Ok(()) }
//! # tokio::runtime::Builder::new_current_thread().build().map_err(|e| e.to_string())?
//! #     .block_on(demo()).map_err(|e| e.to_string())?;
//! # Ok::<(), String>(())
//! ```

#[cfg(feature = "gce-rest")]
pub mod rest;

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use kops_cloud_gce::cloud::{
    CloudError, CloudResult, CreateRequest, GceCloud, GceResourceType, ListQuery, ManagedInstance,
    ManagedZone, ProjectInfo, Resource, ResourceCloud, Scope, UpdateRequest, last_component,
    self_link,
};
use kops_tasks::resource::immutable_changes;
use serde_json::Value as Json;

use GceResourceType as R;

#[derive(Debug, Default)]
struct State {
    objects: BTreeMap<(GceResourceType, String), Resource>,
    calls: BTreeMap<String, u64>,
    serial: u64,
    next_external: u32,
    next_internal: BTreeMap<String, u32>,
    managed_zones: Vec<ManagedZone>,
    /// Each managed instance group's instances, by the group's ID.
    instances: BTreeMap<String, Vec<ManagedInstance>>,
    /// Names a group's next instance.
    instance_serial: u64,
    /// Each instance's private address, by its name.
    addresses: BTreeMap<String, String>,
    /// Every this many inserts the answer is lost (0: none).
    lose_every: u64,
    /// Inserts made, for `lose_every`.
    writes: u64,
    /// Answers lost.
    lost: u64,
}

/// An in-memory GCE project in one region (module docs).
#[derive(Debug)]
pub struct MockGce {
    project: String,
    region: String,
    zones: Vec<String>,
    state: Mutex<State>,
}

impl MockGce {
    /// An empty project `project` in `region`, with zones `<region>-a`, `-b` and `-c`.
    pub fn new(project: impl Into<String>, region: impl Into<String>) -> Self {
        let region = region.into();
        let zones = ["a", "b", "c"]
            .iter()
            .map(|z| format!("{region}-{z}"))
            .collect();
        MockGce {
            project: project.into(),
            region,
            zones,
            state: Mutex::new(State {
                managed_zones: vec![ManagedZone::new("1", "example.com.", false)],
                ..State::default()
            }),
        }
    }

    /// Loses the answer of every `n`-th insert (0: none): the operation
    /// happens, and the caller gets [`CloudError::Unavailable`], as when the connection
    /// resets before the operation's answer arrives. A retry must find what was made
    /// rather than make it again: GCE refuses a second object of one name
    /// (`AlreadyExists`), and an instance template, named by the mock from its
    /// `name_prefix`, is found by the task's find before a create is repeated.
    pub fn lose_answers(&self, n: u64) {
        self.lock().lose_every = n;
    }

    /// How many answers [`MockGce::lose_answers`] lost so far.
    pub fn lost_answers(&self) -> u64 {
        self.lock().lost
    }

    fn answer_lost(s: &mut State, op: String) -> Option<CloudError> {
        s.writes += 1;
        if s.lose_every == 0 || !s.writes.is_multiple_of(s.lose_every) {
            return None;
        }
        s.lost += 1;
        Some(CloudError::Unavailable {
            operation: format!("{op} (answer lost, injected)"),
            source: None,
        })
    }

    /// Replaces the project's Cloud DNS managed zones.
    pub fn set_managed_zones(&self, zones: Vec<ManagedZone>) {
        self.lock().managed_zones = zones;
    }

    /// The project's default compute service account.
    pub fn default_service_account(&self) -> &'static str {
        "12345678-compute@developer.gserviceaccount.com"
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Calls so far, by REST method.
    pub fn calls(&self) -> BTreeMap<String, u64> {
        self.lock().calls.clone()
    }

    /// Every call so far.
    pub fn total_calls(&self) -> u64 {
        self.lock().calls.values().sum()
    }

    /// Every object the project holds, by type and ID.
    pub fn objects(&self) -> Vec<Resource> {
        self.lock().objects.values().cloned().collect()
    }

    /// Inserts an object as it is (seeding; no call counted). Its self-link is added
    /// when missing.
    pub fn seed(&self, mut r: Resource) {
        let rt = r.resource_type;
        let name = r
            .name
            .clone()
            .unwrap_or_else(|| last_component(&r.id).to_owned());
        r.name.get_or_insert(name.clone());
        if !r.attrs.contains_key("self_link") {
            let loc = self.location(rt, r.attrs.get("zone"));
            r.attrs.insert(
                "self_link",
                Json::String(self_link(&self.project, rt, loc.as_deref(), &name)),
            );
        }
        self.lock().objects.insert((rt, r.id.clone()), r);
    }

    /// Seeds the `gce` section of the conformance fixture (`mock-cloud.yaml`): networks
    /// and subnetworks. Returns the project and region it names.
    pub fn from_fixture(text: &str) -> Result<Self, String> {
        #[derive(serde::Deserialize)]
        struct File {
            gce: Option<Section>,
        }
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Section {
            project: String,
            region: String,
            #[serde(default)]
            networks: Vec<Net>,
            #[serde(default)]
            subnetworks: Vec<Sub>,
        }
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Net {
            name: String,
            #[serde(default)]
            auto_create_subnetworks: bool,
        }
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Sub {
            name: String,
            network: String,
            region: String,
            #[serde(default)]
            ip_cidr_range: Option<String>,
        }
        let file: File =
            serde_saphyr::from_str(text).map_err(|e| format!("mock-cloud fixture: {e}"))?;
        let Some(g) = file.gce else {
            return Err("mock-cloud fixture: no gce section".into());
        };
        let cloud = MockGce::new(g.project, g.region);
        for n in g.networks {
            cloud.seed(
                Resource::new(R::Network, n.name.clone())
                    .with_name(n.name)
                    .with_attr("auto_create_subnetworks", n.auto_create_subnetworks),
            );
        }
        for s in g.subnetworks {
            let mut r = Resource::new(R::Subnetwork, s.name.clone())
                .with_name(s.name)
                .with_attr("network", s.network)
                .with_attr("region", s.region);
            if let Some(c) = s.ip_cidr_range {
                r = r.with_attr("ip_cidr_range", c);
            }
            cloud.seed(r);
        }
        Ok(cloud)
    }

    /// The location of an object of type `rt` in `zone` (its `zone` attribute).
    fn location(&self, rt: GceResourceType, zone: Option<&Json>) -> Option<String> {
        match rt.scope() {
            Scope::Regional => Some(self.region.clone()),
            Scope::Zonal => zone.and_then(Json::as_str).map(str::to_owned),
            _ => None,
        }
    }

    fn count(state: &mut State, rt: GceResourceType, verb: &str) {
        let api = match rt.scope() {
            Scope::Other => match rt {
                R::ServiceAccount => "iam",
                R::ProjectIamBinding => "cloudresourcemanager",
                _ => "storage",
            },
            _ => "compute",
        };
        *state
            .calls
            .entry(format!("{api}.{}.{verb}", rt.facts().collection))
            .or_insert(0) += 1;
    }

    /// Allocates an address: from the subnetwork's range for an internal one.
    fn allocate(&self, state: &mut State, attrs: &BTreeMap<String, Json>) -> String {
        if attrs.get("address_type").and_then(Json::as_str) == Some("INTERNAL") {
            let subnet = attrs
                .get("subnetwork")
                .and_then(Json::as_str)
                .map(last_component)
                .unwrap_or_default()
                .to_owned();
            let cidr = state
                .objects
                .get(&(R::Subnetwork, subnet.clone()))
                .and_then(|s| s.attr_str("ip_cidr_range"))
                .and_then(|c| c.parse::<ipnet::Ipv4Net>().ok());
            let n = state.next_internal.entry(subnet).or_insert(1);
            *n += 1;
            match cidr {
                Some(net) => std::net::Ipv4Addr::from(u32::from(net.network()) + *n).to_string(),
                None => format!("10.255.0.{n}"),
            }
        } else {
            state.next_external += 1;
            format!("203.0.113.{}", state.next_external)
        }
    }

    /// Keeps the instances of the managed instance group `id` at its target size: new
    /// ones from its current template, surplus ones removed from the end; none once the
    /// group is gone.
    fn sync_instances(state: &mut State, id: &str) {
        let Some(mig) = state.objects.get(&(R::InstanceGroupManager, id.to_owned())) else {
            state.instances.remove(id);
            return;
        };
        let target = mig
            .attrs
            .get("target_size")
            .and_then(Json::as_u64)
            .unwrap_or(0) as usize;
        let template = group_template(mig);
        let zone = mig.attr_str("zone").unwrap_or_default().to_owned();
        let base = mig
            .attr_str("base_instance_name")
            .map(str::to_owned)
            .or_else(|| mig.name.clone())
            .unwrap_or_default();
        let mut serial = state.instance_serial;
        let members = state.instances.entry(id.to_owned()).or_default();
        members.truncate(target);
        let mut made = Vec::new();
        while members.len() < target {
            serial += 1;
            let name = format!("{base}-{}", base36(serial));
            members.push(ManagedInstance::new(&name, zone.clone(), template.clone()));
            made.push((name, instance_address(serial)));
        }
        state.instance_serial = serial;
        state.addresses.extend(made);
    }

    fn missing(rt: GceResourceType, id: &str) -> CloudError {
        CloudError::not_found(format!("{rt} {id}"))
    }
}

fn name_of(req: &CreateRequest) -> CloudResult<String> {
    req.name
        .clone()
        .or_else(|| {
            req.attrs
                .get("account_id")
                .and_then(Json::as_str)
                .map(str::to_owned)
        })
        .ok_or_else(|| CloudError::Invalid {
            field: format!("{}.name", req.resource_type),
            message: "required".into(),
        })
}

/// The template a managed instance group makes instances from (`version.instance_template`).
/// The instances of every managed instance group, as the instances collection lists them:
/// zone, status, address, and the machine type and labels of the template each was made
/// from.
fn listed_instances(s: &State) -> Vec<Resource> {
    let mut out = Vec::new();
    for m in s.instances.values().flatten() {
        let mut r = Resource::new(R::Instance, R::Instance.id_of(&m.name, Some(&m.zone)));
        r.name = Some(m.name.clone());
        r.attrs.insert("zone", Json::String(m.zone.clone()));
        let status = if m.status.is_empty() {
            "PROVISIONING"
        } else {
            &m.status
        };
        r.attrs.insert("status", Json::String(status.to_owned()));
        if let Some(ip) = s.addresses.get(&m.name) {
            r.attrs.insert("network_ip", Json::String(ip.clone()));
        }
        if let Some(link) = &m.instance_template {
            r.attrs
                .insert("instance_template", Json::String(link.clone()));
            let template = s
                .objects
                .get(&(R::InstanceTemplate, last_component(link).to_owned()));
            if let Some(t) = template {
                if let Some(machine) = t.attr_str("machine_type") {
                    let machine = last_component(machine).to_owned();
                    r.attrs.insert("machine_type", Json::String(machine));
                }
                r.tags = t.tags.clone();
            }
        }
        out.push(r);
    }
    out
}

fn group_template(mig: &Resource) -> Option<String> {
    mig.attrs
        .get("version")
        .and_then(|v| v.get("instance_template"))
        .and_then(Json::as_str)
        .map(str::to_owned)
}

/// The private address of the `n`th instance a project makes: from the default network's
/// range, in the order instances are made.
pub(crate) fn instance_address(n: u64) -> String {
    format!("10.128.{}.{}", n / 250, n % 250 + 2)
}

/// Four lowercase base-36 characters of `n`, as GCE suffixes a group's instance names.
pub(crate) fn base36(n: u64) -> String {
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut n = n % 36u64.pow(4);
    let mut out = [b'0'; 4];
    for c in out.iter_mut().rev() {
        *c = digits[(n % 36) as usize];
        n /= 36;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn str_attr(attrs: &BTreeMap<String, Json>, k: &str) -> String {
    attrs
        .get(k)
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The labels of a `labels` attribute.
fn labels_of(labels: Option<&Json>) -> BTreeMap<String, String> {
    labels
        .and_then(Json::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

#[async_trait]
impl ResourceCloud<GceResourceType> for MockGce {
    async fn list(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        let mut s = self.lock();
        Self::count(&mut s, query.resource_type, "list");
        if query.resource_type == R::Instance {
            let mut all = listed_instances(&s);
            all.retain(|r| query.matches(r));
            return Ok(all);
        }
        Ok(s.objects
            .values()
            .filter(|r| query.matches(r))
            .cloned()
            .collect())
    }

    async fn create(&self, req: &CreateRequest) -> CloudResult<Resource> {
        let rt = req.resource_type;
        let mut s = self.lock();
        Self::count(&mut s, rt, "insert");
        let mut attrs = req.attrs.clone();
        let mut tags = req.tags.clone();
        let (name, id) = match rt {
            R::InstanceTemplate => {
                s.serial += 1;
                let prefix = str_attr(&attrs, "name_prefix");
                let name = format!("{prefix}{}", s.serial);
                tags = labels_of(attrs.get("labels"));
                (name.clone(), name)
            }
            R::ServiceAccount => {
                let account = name_of(req)?;
                let email = format!("{account}@{}.iam.gserviceaccount.com", self.project);
                attrs.insert("email".into(), Json::String(email.clone()));
                (account, email)
            }
            R::ProjectIamBinding => {
                let id = format!(
                    "{}/{}",
                    str_attr(&attrs, "project"),
                    str_attr(&attrs, "role")
                );
                (id.clone(), id)
            }
            R::StorageBucketIam => {
                let id = format!(
                    "{}/{}/{}",
                    str_attr(&attrs, "bucket"),
                    str_attr(&attrs, "role"),
                    str_attr(&attrs, "member")
                );
                (id.clone(), id)
            }
            R::StorageBucketAcl => {
                let b = str_attr(&attrs, "bucket");
                (b.clone(), b)
            }
            R::RouterNat => {
                let name = name_of(req)?;
                let router = last_component(&str_attr(&attrs, "router")).to_owned();
                (name.clone(), format!("{router}/{name}"))
            }
            _ => {
                let name = name_of(req)?;
                let zone = attrs.get("zone").and_then(Json::as_str);
                let id = rt.id_of(&name, zone);
                (name, id)
            }
        };
        if s.objects.contains_key(&(rt, id.clone())) {
            return Err(CloudError::AlreadyExists {
                operation: format!("inserting {rt}"),
                what: id,
                source: None,
            });
        }
        let loc = self.location(rt, attrs.get("zone"));
        let link = self_link(&self.project, rt, loc.as_deref(), &name);
        match rt {
            R::Address => {
                let a = self.allocate(&mut s, &attrs);
                attrs.insert("address".into(), Json::String(a));
            }
            R::InstanceGroupManager => {
                let group = link.replace("/instanceGroupManagers/", "/instanceGroups/");
                attrs.insert("instance_group".into(), Json::String(group));
            }
            _ => {}
        }
        attrs.insert("self_link".into(), Json::String(link));
        let mut r = Resource::new(rt, id.clone()).with_name(name);
        if rt == R::RouterNat {
            r = r.with_parent(last_component(&str_attr(&attrs, "router")).to_owned());
        }
        r.attrs = attrs.into();
        if rt.facts().labelled {
            r.tags = tags.into();
        }
        s.objects.insert((rt, id.clone()), r.clone());
        if rt == R::InstanceGroupManager {
            Self::sync_instances(&mut s, &id);
        }
        if let Some(e) = Self::answer_lost(&mut s, format!("inserting {rt} {id}")) {
            return Err(e);
        }
        Ok(r)
    }

    async fn update(&self, req: &UpdateRequest) -> CloudResult<Resource> {
        let rt = req.resource_type;
        let mut s = self.lock();
        Self::count(&mut s, rt, "patch");
        let Some(current) = s.objects.get(&(rt, req.id.clone())).cloned() else {
            return Err(Self::missing(rt, &req.id));
        };
        let bad = immutable_changes(rt, &current.attrs, &req.attrs);
        if let Some(first) = bad.first() {
            return Err(CloudError::Invalid {
                field: format!("{rt}.{first}"),
                message: "cannot change in place".into(),
            });
        }
        let mut next = current.clone();
        next.attrs.extend(req.attrs.clone());
        if let Some(t) = &req.tags {
            next.tags = t.into();
        }
        if rt == R::InstanceTemplate {
            // Replace: a new template, the groups re-pointed, the old one deleted.
            s.serial += 1;
            let name = format!(
                "{}{}",
                next.attr_str("name_prefix").unwrap_or_default(),
                s.serial
            );
            let old_link = current.attr_str("self_link").unwrap_or_default().to_owned();
            let link = self_link(&self.project, rt, None, &name);
            next.id = name.clone();
            next.name = Some(name);
            next.tags = labels_of(next.attrs.get("labels")).into();
            next.attrs.insert("self_link", Json::String(link.clone()));
            for ((t, _), mig) in s.objects.iter_mut() {
                if *t != R::InstanceGroupManager {
                    continue;
                }
                let uses = mig
                    .attrs
                    .get("version")
                    .and_then(|v| v.get("instance_template"))
                    .and_then(Json::as_str)
                    == Some(old_link.as_str());
                if uses {
                    mig.attrs
                        .insert("version", serde_json::json!({ "instance_template": link }));
                }
            }
            s.objects.remove(&(rt, current.id.clone()));
            s.objects.insert((rt, next.id.clone()), next.clone());
            return Ok(next);
        }
        s.objects.insert((rt, next.id.clone()), next.clone());
        if rt == R::InstanceGroupManager {
            Self::sync_instances(&mut s, &next.id);
        }
        Ok(next)
    }

    async fn delete(&self, rt: GceResourceType, id: &str) -> CloudResult<()> {
        let mut s = self.lock();
        Self::count(&mut s, rt, "delete");
        let Some(current) = s.objects.get(&(rt, id.to_owned())).cloned() else {
            return Ok(());
        };
        let name = current.name.clone().unwrap_or_default();
        let link = current.attr_str("self_link").unwrap_or_default().to_owned();
        let user = s.objects.values().find(|o| {
            let refers = |k: &str| {
                o.attrs.get(k).and_then(Json::as_str).is_some_and(|v| {
                    v == name || v == link || last_component(v) == name && !v.is_empty()
                })
            };
            match rt {
                R::Network => {
                    matches!(o.resource_type, R::Subnetwork | R::Firewall | R::Router)
                        && refers("network")
                }
                R::InstanceTemplate => {
                    o.resource_type == R::InstanceGroupManager
                        && o.attrs
                            .get("version")
                            .and_then(|v| v.get("instance_template"))
                            .and_then(Json::as_str)
                            == Some(link.as_str())
                }
                R::Router => o.resource_type == R::RouterNat && refers("router"),
                _ => false,
            }
        });
        if let Some(u) = user {
            return Err(CloudError::Conflict {
                operation: format!("deleting {rt}"),
                what: id.to_owned(),
                reason: format!("resourceInUseByAnotherResource: used by {}", u.id),
                source: None,
            });
        }
        s.objects.remove(&(rt, id.to_owned()));
        if rt == R::InstanceGroupManager {
            Self::sync_instances(&mut s, id);
        }
        Ok(())
    }
}

#[async_trait]
impl GceCloud for MockGce {
    async fn project(&self) -> CloudResult<ProjectInfo> {
        let mut s = self.lock();
        *s.calls.entry("compute.projects.get".into()).or_insert(0) += 1;
        Ok(ProjectInfo::new(
            self.project.clone(),
            self.region.clone(),
            self.default_service_account(),
        ))
    }

    async fn zones(&self) -> CloudResult<Vec<String>> {
        let mut s = self.lock();
        *s.calls.entry("compute.zones.list".into()).or_insert(0) += 1;
        Ok(self.zones.clone())
    }

    async fn managed_zones(&self) -> CloudResult<Vec<ManagedZone>> {
        let mut s = self.lock();
        *s.calls.entry("dns.managedZones.list".into()).or_insert(0) += 1;
        Ok(s.managed_zones.clone())
    }

    async fn managed_instances(&self, group: &str) -> CloudResult<Vec<ManagedInstance>> {
        let mut s = self.lock();
        Self::count(&mut s, R::InstanceGroupManager, "listManagedInstances");
        if !s
            .objects
            .contains_key(&(R::InstanceGroupManager, group.to_owned()))
        {
            return Err(Self::missing(R::InstanceGroupManager, group));
        }
        Ok(s.instances.get(group).cloned().unwrap_or_default())
    }

    async fn recreate_instances(&self, group: &str, instances: &[String]) -> CloudResult<()> {
        let mut s = self.lock();
        Self::count(&mut s, R::InstanceGroupManager, "recreateInstances");
        let Some(mig) = s.objects.get(&(R::InstanceGroupManager, group.to_owned())) else {
            return Err(Self::missing(R::InstanceGroupManager, group));
        };
        let template = group_template(mig);
        let members = s.instances.entry(group.to_owned()).or_default();
        if let Some(unknown) = instances
            .iter()
            .find(|i| !members.iter().any(|m| &m.name == *i))
        {
            return Err(CloudError::not_found(format!(
                "instance {unknown} of managed instance group {group}"
            )));
        }
        for m in members.iter_mut().filter(|m| instances.contains(&m.name)) {
            m.instance_template = template.clone();
        }
        Ok(())
    }
}
