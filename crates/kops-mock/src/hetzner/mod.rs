//! [`MockHetzner`]: an in-memory Hetzner Cloud project for tests, implementing
//! `kops_cloud_hetzner::HetznerCloud`.
//!
//! It holds every [`HetznerResourceType`] as [`Resource`]s keyed by type and ID, answers
//! [`ListQuery`]s client-side (label selectors are tag filters), and behaves as the hcloud
//! API does where the model depends on it:
//!
//! - **IDs** are numbers, given in creation order; **names** are unique per type (a
//!   second create of one name is `AlreadyExists`, the API's `uniqueness_error`);
//! - **parts** of a network or a load balancer (a subnet, a network attachment, a
//!   service, a target) live under their owner, whose ID is their parent; creating one
//!   under a missing owner is `NotFound`, and a second one with the same identity
//!   (subnet range, network, listen port, selector) is `AlreadyExists`; they go with
//!   their owner;
//! - **servers** come up `running`, with a private address from their network's range
//!   and a public IPv4 address when asked for; [`HetznerCloud::shutdown_server`] turns
//!   one `off`; **load balancers** get a public IPv4 address, and a private one
//!   (`private_ip`) while attached to a network;
//! - **deletes** refuse what others still use (a network a server or a load balancer is
//!   attached to, an SSH key is not: Hetzner copies keys into servers) with `Conflict`,
//!   the API's `resource_in_use`;
//! - **calls** are counted per collection and verb (`servers.list`), for API-call
//!   budgets ([`MockHetzner::calls`], [`MockHetzner::total_calls`]).
//!
//! ```
//! # async fn demo() -> Result<(), kops_cloud_hetzner::cloud::CloudError> {
//! use kops_cloud_hetzner::HetznerResourceType as R;
//! use kops_cloud_hetzner::cloud::{CreateRequest, ListQuery, ResourceCloud};
//! use kops_mock::hetzner::MockHetzner;
//!
//! let cloud = MockHetzner::new();
//! let mut attrs = std::collections::BTreeMap::new();
//! attrs.insert("ip_range".to_owned(), serde_json::json!("10.0.0.0/16"));
//! let net = cloud
//!     .create(&CreateRequest::new(R::Network).with_name("net").with_attrs(attrs))
//!     .await?;
//! assert_eq!(net.id, "1");
//! assert_eq!(cloud.list(&ListQuery::new(R::Network)).await?.len(), 1);
//! # Ok(()) }
//! # tokio::runtime::Builder::new_current_thread().build().map_err(|e| e.to_string())?
//! #     .block_on(demo()).map_err(|e| e.to_string())?;
//! # Ok::<(), String>(())
//! ```

#[cfg(feature = "hetzner-rest")]
pub mod rest;

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use kops_cloud_hetzner::cloud::{
    CloudError, CloudResult, CreateRequest, HetznerCloud, HetznerResourceType, ListQuery, Resource,
    ResourceCloud, UpdateRequest,
};
use kops_tasks::resource::immutable_changes;
use serde_json::Value as Json;

use HetznerResourceType as R;

#[derive(Debug, Default)]
struct State {
    objects: BTreeMap<(HetznerResourceType, String), Resource>,
    calls: BTreeMap<String, u64>,
    serial: u64,
    /// Addresses handed out per network, by network ID.
    next_private: BTreeMap<String, u32>,
    next_public: u32,
    /// Every this many creates the answer is lost (0: none).
    lose_every: u64,
    writes: u64,
    lost: u64,
}

/// An in-memory Hetzner Cloud project (module docs).
#[derive(Debug, Default)]
pub struct MockHetzner {
    state: Mutex<State>,
}

/// The attribute naming a part's owner.
fn owner_attr(rt: HetznerResourceType) -> Option<(&'static str, HetznerResourceType)> {
    match rt {
        R::NetworkSubnet => Some(("network_id", R::Network)),
        R::LoadBalancerNetwork | R::LoadBalancerService | R::LoadBalancerTarget => {
            Some(("load_balancer_id", R::LoadBalancer))
        }
        _ => None,
    }
}

/// What identifies a part under its owner (kOps' and Terraform's IDs are built from it).
fn part_identity(rt: HetznerResourceType, attrs: &BTreeMap<String, Json>) -> String {
    let key = match rt {
        R::NetworkSubnet => "ip_range",
        R::LoadBalancerNetwork => "network_id",
        R::LoadBalancerService => "listen_port",
        _ => "label_selector",
    };
    match attrs.get(key) {
        Some(Json::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

fn text(v: Option<&Json>) -> String {
    match v {
        Some(Json::String(s)) => s.clone(),
        Some(Json::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

impl MockHetzner {
    /// An empty project.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Loses the answer of every `n`-th create (0: none): the object is made and the
    /// caller gets [`CloudError::Unavailable`], as when the connection resets before the
    /// answer arrives.
    pub fn lose_answers(&self, n: u64) {
        self.lock().lose_every = n;
    }

    /// How many answers [`MockHetzner::lose_answers`] lost so far.
    pub fn lost_answers(&self) -> u64 {
        self.lock().lost
    }

    /// Calls so far, by `<collection>.<verb>`.
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

    /// Inserts an object as it is (seeding; no call counted).
    pub fn seed(&self, r: Resource) {
        self.lock()
            .objects
            .insert((r.resource_type, r.id.clone()), r);
    }

    fn count(s: &mut State, rt: HetznerResourceType, verb: &str) {
        let collection = rt.facts().collection;
        let verb = if rt.facts().part {
            format!("actions.{verb}")
        } else {
            verb.to_owned()
        };
        *s.calls.entry(format!("{collection}.{verb}")).or_insert(0) += 1;
    }

    /// A private address in the network `network`: the next host of its range.
    fn private_ip(s: &mut State, network: &str) -> String {
        let base = s
            .objects
            .get(&(R::Network, network.to_owned()))
            .and_then(|n| n.attr_str("ip_range"))
            .and_then(|r| r.parse::<ipnet::Ipv4Net>().ok())
            .map_or(0x0a00_0000, |n| u32::from(n.network()));
        let n = s.next_private.entry(network.to_owned()).or_insert(1);
        *n += 1;
        std::net::Ipv4Addr::from(base + *n).to_string()
    }

    fn missing(rt: HetznerResourceType, id: &str) -> CloudError {
        CloudError::not_found(format!("{rt} {id}"))
    }

    /// Checks a part's owner and identity, returning its parent ID and its own ID.
    fn place_part(
        s: &State,
        rt: HetznerResourceType,
        attrs: &BTreeMap<String, Json>,
    ) -> CloudResult<(String, String)> {
        let Some((attr, owner)) = owner_attr(rt) else {
            return Err(CloudError::invalid(format!("{rt}"), "not a part"));
        };
        let parent = text(attrs.get(attr));
        if !s.objects.contains_key(&(owner, parent.clone())) {
            return Err(Self::missing(owner, &parent));
        }
        let identity = part_identity(rt, attrs);
        let id = match rt {
            R::LoadBalancerService => format!("{parent}__{identity}"),
            _ => format!("{parent}-{identity}"),
        };
        if s.objects.contains_key(&(rt, id.clone())) {
            return Err(CloudError::AlreadyExists {
                operation: format!("adding {rt}"),
                what: id,
                source: None,
            });
        }
        Ok((parent, id))
    }

    /// Fills in what the API reports about a new server: its status and addresses.
    fn boot_server(s: &mut State, attrs: &mut BTreeMap<String, Json>) {
        attrs.insert("status".into(), Json::String("running".into()));
        let network = attrs
            .get("network")
            .and_then(|n| n.get(0))
            .map(|n| text(n.get("network_id")));
        if let Some(network) = network {
            let ip = Self::private_ip(s, &network);
            attrs.insert("private_ip".into(), Json::String(ip));
        }
        let ipv4 = attrs
            .get("public_net")
            .and_then(|p| p.get("ipv4_enabled"))
            .and_then(Json::as_bool)
            .unwrap_or(true);
        if ipv4 {
            s.next_public += 1;
            let ip = format!("203.0.113.{}", s.next_public);
            attrs.insert("ipv4_address".into(), Json::String(ip));
        }
    }

    /// The object that keeps `rt` `id` from being deleted, if any.
    fn user_of(s: &State, rt: HetznerResourceType, id: &str) -> Option<String> {
        let uses = |o: &Resource| match (rt, o.resource_type) {
            (R::Network, R::Server) => o
                .attrs
                .get("network")
                .and_then(Json::as_array)
                .is_some_and(|ns| ns.iter().any(|n| text(n.get("network_id")) == id)),
            (R::Network, R::LoadBalancerNetwork) => text(o.attrs.get("network_id")) == id,
            _ => false,
        };
        s.objects
            .values()
            .find(|o| uses(o))
            .map(|o| format!("{} {}", o.resource_type, o.name.as_deref().unwrap_or(&o.id)))
    }
}

#[async_trait]
impl ResourceCloud<HetznerResourceType> for MockHetzner {
    async fn list(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        let mut s = self.lock();
        Self::count(&mut s, query.resource_type, "list");
        Ok(s.objects
            .values()
            .filter(|r| query.matches(r))
            .cloned()
            .collect())
    }

    async fn create(&self, req: &CreateRequest) -> CloudResult<Resource> {
        let rt = req.resource_type;
        let mut s = self.lock();
        Self::count(&mut s, rt, "create");
        let mut attrs = req.attrs.clone();
        let mut r = if rt.facts().part {
            let (parent, id) = Self::place_part(&s, rt, &attrs)?;
            if rt == R::LoadBalancerNetwork {
                // The load balancer gets an address in the network, as the API reports it.
                let ip = Self::private_ip(&mut s, &text(attrs.get("network_id")));
                if let Some(lb) = s.objects.get_mut(&(R::LoadBalancer, parent.clone())) {
                    lb.attrs.insert("private_ip", Json::String(ip));
                }
            }
            Resource::new(rt, id).with_parent(parent)
        } else {
            let name = req.name.clone().ok_or_else(|| {
                CloudError::invalid(format!("{rt}.name"), "invalid_input: name is required")
            })?;
            if s.objects
                .values()
                .any(|o| o.resource_type == rt && o.name.as_deref() == Some(name.as_str()))
            {
                return Err(CloudError::AlreadyExists {
                    operation: format!("creating {rt}"),
                    what: name,
                    source: None,
                });
            }
            s.serial += 1;
            if rt == R::Server {
                Self::boot_server(&mut s, &mut attrs);
            }
            if rt == R::LoadBalancer {
                s.next_public += 1;
                let ip = format!("203.0.113.{}", s.next_public);
                attrs.insert("ipv4".into(), Json::String(ip));
            }
            Resource::new(rt, s.serial.to_string()).with_name(name)
        };
        r.attrs = attrs.into();
        if rt.facts().labelled {
            r.tags = req.tags.clone().into();
        }
        s.objects.insert((rt, r.id.clone()), r.clone());
        s.writes += 1;
        if s.lose_every != 0 && s.writes.is_multiple_of(s.lose_every) {
            s.lost += 1;
            return Err(CloudError::Unavailable {
                operation: format!("creating {rt} {} (answer lost, injected)", r.id),
                source: None,
            });
        }
        Ok(r)
    }

    async fn update(&self, req: &UpdateRequest) -> CloudResult<Resource> {
        let rt = req.resource_type;
        let mut s = self.lock();
        Self::count(&mut s, rt, "update");
        let Some(current) = s.objects.get(&(rt, req.id.clone())).cloned() else {
            return Err(Self::missing(rt, &req.id));
        };
        let bad = immutable_changes(rt, &current.attrs, &req.attrs);
        if let Some(first) = bad.first() {
            return Err(CloudError::invalid(
                format!("{rt}.{first}"),
                "invalid_input: cannot change in place",
            ));
        }
        let mut next = current;
        next.attrs.extend(req.attrs.clone());
        if let Some(t) = &req.tags {
            next.tags = t.into();
        }
        s.objects.insert((rt, next.id.clone()), next.clone());
        Ok(next)
    }

    async fn delete(&self, rt: HetznerResourceType, id: &str) -> CloudResult<()> {
        let mut s = self.lock();
        Self::count(&mut s, rt, "delete");
        if !s.objects.contains_key(&(rt, id.to_owned())) {
            return Ok(());
        }
        if let Some(user) = Self::user_of(&s, rt, id) {
            return Err(CloudError::Conflict {
                operation: format!("deleting {rt}"),
                what: id.to_owned(),
                reason: format!("resource_in_use: used by {user}"),
                source: None,
            });
        }
        let removed = s.objects.remove(&(rt, id.to_owned()));
        if let Some(attachment) = removed.filter(|r| r.resource_type == R::LoadBalancerNetwork)
            && let Some(lb) = attachment
                .parent
                .and_then(|p| s.objects.get_mut(&(R::LoadBalancer, p)))
        {
            lb.attrs.remove("private_ip");
        }
        // Parts go with their owner.
        s.objects.retain(|(t, _), o| {
            !(owner_attr(*t).is_some_and(|(_, owner)| owner == rt)
                && o.parent.as_deref() == Some(id))
        });
        Ok(())
    }
}

#[async_trait]
impl HetznerCloud for MockHetzner {
    async fn shutdown_server(&self, id: &str) -> CloudResult<()> {
        let mut s = self.lock();
        *s.calls
            .entry("servers.actions.shutdown".into())
            .or_insert(0) += 1;
        let Some(server) = s.objects.get_mut(&(R::Server, id.to_owned())) else {
            return Err(Self::missing(R::Server, id));
        };
        server.attrs.insert("status", Json::String("off".into()));
        Ok(())
    }
}
