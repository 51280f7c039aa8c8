//! The read-only catalogs of the fake hcloud API: locations, datacenters, server types,
//! images and load balancer types, a small set of what Hetzner offers, in the API's
//! shapes. Names, sizes and places are Hetzner's; IDs and prices are the fake's own
//! (illustrative, not a price list).
//!
//! A create names a catalog entry by name or by ID (a number, or a number in a string:
//! hcloud-go sends a location's ID so), [`Catalog::find`] resolves both.

use serde_json::{Value as Json, json};

/// A location and its one datacenter.
struct Place {
    id: u64,
    name: &'static str,
    description: &'static str,
    country: &'static str,
    city: &'static str,
    latitude: f64,
    longitude: f64,
    network_zone: &'static str,
    datacenter_id: u64,
    datacenter: &'static str,
    datacenter_description: &'static str,
}

const PLACES: &[Place] = &[
    Place {
        id: 1,
        name: "fsn1",
        description: "Falkenstein DC Park 1",
        country: "DE",
        city: "Falkenstein",
        latitude: 50.47612,
        longitude: 12.370071,
        network_zone: "eu-central",
        datacenter_id: 4,
        datacenter: "fsn1-dc14",
        datacenter_description: "Falkenstein 1 virtual DC 14",
    },
    Place {
        id: 2,
        name: "nbg1",
        description: "Nuremberg DC Park 1",
        country: "DE",
        city: "Nuremberg",
        latitude: 49.452102,
        longitude: 11.076665,
        network_zone: "eu-central",
        datacenter_id: 2,
        datacenter: "nbg1-dc3",
        datacenter_description: "Nuremberg 1 virtual DC 3",
    },
    Place {
        id: 3,
        name: "hel1",
        description: "Helsinki DC Park 1",
        country: "FI",
        city: "Helsinki",
        latitude: 60.169855,
        longitude: 24.938379,
        network_zone: "eu-central",
        datacenter_id: 3,
        datacenter: "hel1-dc2",
        datacenter_description: "Helsinki 1 virtual DC 2",
    },
    Place {
        id: 4,
        name: "ash",
        description: "Ashburn, VA",
        country: "US",
        city: "Ashburn, VA",
        latitude: 39.045821,
        longitude: -77.487073,
        network_zone: "us-east",
        datacenter_id: 5,
        datacenter: "ash-dc1",
        datacenter_description: "Ashburn virtual DC 1",
    },
    Place {
        id: 5,
        name: "hil",
        description: "Hillsboro, OR",
        country: "US",
        city: "Hillsboro, OR",
        latitude: 45.54222,
        longitude: -122.95128,
        network_zone: "us-west",
        datacenter_id: 6,
        datacenter: "hil-dc1",
        datacenter_description: "Hillsboro virtual DC 1",
    },
    Place {
        id: 6,
        name: "sin",
        description: "Singapore",
        country: "SG",
        city: "Singapore",
        latitude: 1.283333,
        longitude: 103.833333,
        network_zone: "ap-southeast",
        datacenter_id: 7,
        datacenter: "sin-dc1",
        datacenter_description: "Singapore virtual DC 1",
    },
];

/// The European locations (the only ones of the `cx` and `cax` series).
const EU: &[&str] = &["fsn1", "nbg1", "hel1"];
const EVERYWHERE: &[&str] = &["fsn1", "nbg1", "hel1", "ash", "hil", "sin"];

struct Machine {
    id: u64,
    name: &'static str,
    cores: u64,
    memory: f64,
    disk: u64,
    cpu_type: &'static str,
    architecture: &'static str,
    /// Monthly net price in EUR.
    monthly: f64,
    locations: &'static [&'static str],
}

const fn shared(
    id: u64,
    name: &'static str,
    (cores, memory, disk): (u64, f64, u64),
    monthly: f64,
    locations: &'static [&'static str],
) -> Machine {
    Machine {
        id,
        name,
        cores,
        memory,
        disk,
        cpu_type: "shared",
        architecture: "x86",
        monthly,
        locations,
    }
}

const MACHINES: &[Machine] = &[
    shared(22, "cpx11", (2, 2.0, 40), 4.35, EVERYWHERE),
    shared(23, "cpx21", (3, 4.0, 80), 7.55, EVERYWHERE),
    shared(24, "cpx31", (4, 8.0, 160), 13.60, EVERYWHERE),
    shared(25, "cpx41", (8, 16.0, 240), 25.20, EVERYWHERE),
    shared(26, "cpx51", (16, 32.0, 360), 54.90, EVERYWHERE),
    Machine {
        architecture: "arm",
        ..shared(45, "cax11", (2, 4.0, 40), 3.79, EU)
    },
    Machine {
        architecture: "arm",
        ..shared(93, "cax21", (4, 8.0, 80), 6.49, EU)
    },
    Machine {
        cpu_type: "dedicated",
        ..shared(96, "ccx13", (2, 8.0, 80), 12.49, EVERYWHERE)
    },
    shared(104, "cx22", (2, 4.0, 40), 3.79, EU),
    shared(105, "cx32", (4, 8.0, 80), 6.80, EU),
    shared(106, "cx42", (8, 16.0, 160), 16.40, EU),
    shared(107, "cx52", (16, 32.0, 320), 32.40, EU),
    shared(114, "cx23", (2, 4.0, 40), 2.99, EU),
    shared(115, "cx33", (4, 8.0, 80), 4.99, EU),
    shared(116, "cx43", (8, 16.0, 160), 9.99, EU),
    shared(117, "cx53", (16, 32.0, 320), 17.99, EU),
];

struct Image {
    id: u64,
    name: &'static str,
    description: &'static str,
    os_flavor: &'static str,
    os_version: &'static str,
    architecture: &'static str,
}

const fn image(
    id: u64,
    name: &'static str,
    description: &'static str,
    os_flavor: &'static str,
    os_version: &'static str,
    architecture: &'static str,
) -> Image {
    Image {
        id,
        name,
        description,
        os_flavor,
        os_version,
        architecture,
    }
}

/// x86 images first: a lookup by name without an architecture finds the x86 one.
const IMAGES: &[Image] = &[
    image(
        67794396,
        "ubuntu-22.04",
        "Ubuntu 22.04",
        "ubuntu",
        "22.04",
        "x86",
    ),
    image(114690387, "debian-12", "Debian 12", "debian", "12", "x86"),
    image(
        161547269,
        "ubuntu-24.04",
        "Ubuntu 24.04",
        "ubuntu",
        "24.04",
        "x86",
    ),
    image(241276000, "debian-13", "Debian 13", "debian", "13", "x86"),
    image(
        103908070,
        "ubuntu-22.04",
        "Ubuntu 22.04",
        "ubuntu",
        "22.04",
        "arm",
    ),
    image(114690389, "debian-12", "Debian 12", "debian", "12", "arm"),
    image(
        161547270,
        "ubuntu-24.04",
        "Ubuntu 24.04",
        "ubuntu",
        "24.04",
        "arm",
    ),
    image(241276001, "debian-13", "Debian 13", "debian", "13", "arm"),
];

struct Balancer {
    id: u64,
    name: &'static str,
    max_connections: u64,
    max_services: u64,
    max_targets: u64,
    max_assigned_certificates: u64,
    monthly: f64,
}

const BALANCERS: &[Balancer] = &[
    Balancer {
        id: 1,
        name: "lb11",
        max_connections: 10_000,
        max_services: 5,
        max_targets: 25,
        max_assigned_certificates: 10,
        monthly: 5.39,
    },
    Balancer {
        id: 2,
        name: "lb21",
        max_connections: 20_000,
        max_services: 15,
        max_targets: 75,
        max_assigned_certificates: 25,
        monthly: 16.40,
    },
    Balancer {
        id: 3,
        name: "lb31",
        max_connections: 40_000,
        max_services: 30,
        max_targets: 150,
        max_assigned_certificates: 50,
        monthly: 32.40,
    },
];

/// A catalog of the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Catalog {
    Locations,
    Datacenters,
    ServerTypes,
    Images,
    LoadBalancerTypes,
}

/// A price of `monthly` EUR net in `location`, as the API lists them (strings, with
/// 19 % VAT in `gross`).
fn price(location: &str, monthly: f64) -> Json {
    let money = |net: f64, digits: usize| json!({ "net": format!("{net:.digits$}"), "gross": format!("{:.digits$}", net * 1.19) });
    json!({ "location": location, "price_hourly": money(monthly / 730.0, 4),
        "price_monthly": money(monthly, 4) })
}

fn location_json(p: &Place) -> Json {
    json!({ "id": p.id, "name": p.name, "description": p.description, "country": p.country,
        "city": p.city, "latitude": p.latitude, "longitude": p.longitude,
        "network_zone": p.network_zone })
}

fn machine_ids_in(location: &str) -> Vec<u64> {
    MACHINES
        .iter()
        .filter(|m| m.locations.contains(&location))
        .map(|m| m.id)
        .collect()
}

impl Catalog {
    /// The catalog served at `collection` (`server_types`).
    pub(super) fn of(collection: &str) -> Option<Catalog> {
        Some(match collection {
            "locations" => Catalog::Locations,
            "datacenters" => Catalog::Datacenters,
            "server_types" => Catalog::ServerTypes,
            "images" => Catalog::Images,
            "load_balancer_types" => Catalog::LoadBalancerTypes,
            _ => return None,
        })
    }

    /// The object's key in a single answer (`server_type`).
    pub(super) fn singular(self) -> &'static str {
        match self {
            Catalog::Locations => "location",
            Catalog::Datacenters => "datacenter",
            Catalog::ServerTypes => "server_type",
            Catalog::Images => "image",
            Catalog::LoadBalancerTypes => "load_balancer_type",
        }
    }

    /// Every entry, in ID order, as the API returns it.
    pub(super) fn entries(self) -> Vec<Json> {
        let mut out: Vec<Json> = match self {
            Catalog::Locations => PLACES.iter().map(location_json).collect(),
            Catalog::Datacenters => PLACES
                .iter()
                .map(|p| {
                    let ids = machine_ids_in(p.name);
                    json!({ "id": p.datacenter_id, "name": p.datacenter,
                        "description": p.datacenter_description, "location": location_json(p),
                        "server_types": { "supported": ids, "available": ids,
                            "available_for_migration": ids } })
                })
                .collect(),
            Catalog::ServerTypes => MACHINES
                .iter()
                .map(|m| {
                    let upper = m.name.to_uppercase();
                    let locations: Vec<Json> = PLACES
                        .iter()
                        .filter(|p| m.locations.contains(&p.name))
                        .map(|p| json!({ "id": p.id, "name": p.name, "deprecation": null }))
                        .collect();
                    let prices: Vec<Json> =
                        m.locations.iter().map(|l| price(l, m.monthly)).collect();
                    json!({ "id": m.id, "name": m.name, "description": upper,
                        "cores": m.cores, "memory": m.memory, "disk": m.disk,
                        "deprecated": false, "deprecation": null, "prices": prices,
                        "storage_type": "local", "cpu_type": m.cpu_type,
                        "architecture": m.architecture, "included_traffic": 21_990_232_555_520_u64,
                        "locations": locations })
                })
                .collect(),
            Catalog::Images => IMAGES
                .iter()
                .map(|i| {
                    json!({ "id": i.id, "type": "system", "status": "available", "name": i.name,
                        "description": i.description, "image_size": null, "disk_size": 5,
                        "created": super::CREATED, "created_from": null, "bound_to": null,
                        "os_flavor": i.os_flavor, "os_version": i.os_version,
                        "rapid_deploy": true, "protection": { "delete": false },
                        "deprecated": null, "deleted": null, "labels": {},
                        "architecture": i.architecture })
                })
                .collect(),
            Catalog::LoadBalancerTypes => BALANCERS
                .iter()
                .map(|b| {
                    let prices: Vec<Json> =
                        PLACES.iter().map(|p| price(p.name, b.monthly)).collect();
                    json!({ "id": b.id, "name": b.name, "description": b.name.to_uppercase(),
                        "max_connections": b.max_connections, "max_services": b.max_services,
                        "max_targets": b.max_targets,
                        "max_assigned_certificates": b.max_assigned_certificates,
                        "deprecated": null, "prices": prices })
                })
                .collect(),
        };
        out.sort_by_key(|e| e["id"].as_u64().unwrap_or(0));
        out
    }

    /// The entries a list answers for `query` (`name`; for images also `type`,
    /// `architecture` and `status`), in the catalog's order (x86 images first).
    pub(super) fn select(self, query: &std::collections::BTreeMap<String, String>) -> Vec<Json> {
        let all = if self == Catalog::Images {
            // The API's own order puts one name's x86 image before its arm one.
            let mut all = self.entries();
            all.sort_by_key(|e| (e["architecture"] != "x86", e["id"].as_u64().unwrap_or(0)));
            all
        } else {
            self.entries()
        };
        let keys: &[&str] = match self {
            Catalog::Images => &["name", "type", "architecture", "status"],
            _ => &["name"],
        };
        all.into_iter()
            .filter(|e| {
                keys.iter().all(|k| {
                    query
                        .get(*k)
                        .is_none_or(|want| e[*k].as_str() == Some(want.as_str()))
                })
            })
            .collect()
    }

    /// The entry with ID `id`.
    pub(super) fn by_id(self, id: &str) -> Option<Json> {
        self.entries()
            .into_iter()
            .find(|e| e["id"].as_u64().is_some_and(|n| n.to_string() == id))
    }

    /// The entry a request names by `reference`: a name, an ID, or an ID in a string.
    pub(super) fn find(self, reference: &Json) -> Option<Json> {
        let text = match reference {
            Json::String(s) => s.clone(),
            Json::Number(n) => n.to_string(),
            _ => return None,
        };
        self.by_id(&text).or_else(|| {
            self.select(&Default::default())
                .into_iter()
                .find(|e| e["name"].as_str() == Some(text.as_str()))
        })
    }

    /// The entry named `name`, for showing an object that names it (x86 first).
    pub(super) fn named(self, name: &str) -> Option<Json> {
        self.find(&Json::String(name.to_owned()))
    }
}

/// A location's datacenter (`fsn1` -> `fsn1-dc14`), as a server shows it.
pub(super) fn datacenter_of(location: &str) -> Option<Json> {
    Catalog::Datacenters
        .entries()
        .into_iter()
        .find(|d| d["location"]["name"].as_str() == Some(location))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_found_by_name_by_id_and_by_id_in_a_string() {
        for given in [json!("cx22"), json!(104), json!("104")] {
            let found = Catalog::ServerTypes.find(&given);
            assert_eq!(
                found.map(|e| e["name"].clone()),
                Some(json!("cx22")),
                "{given}"
            );
        }
        assert_eq!(Catalog::ServerTypes.find(&json!("cx999")), None);
        assert_eq!(Catalog::Locations.find(&json!(true)), None);
        let lb = Catalog::LoadBalancerTypes.named("lb11").unwrap_or_default();
        assert_eq!(lb["max_targets"], 25);
    }

    #[test]
    fn images_by_name_give_the_x86_one_first_and_filter_by_architecture() {
        let by_name = |arch: Option<&str>| {
            let mut q = std::collections::BTreeMap::from([("name".into(), "debian-12".into())]);
            if let Some(a) = arch {
                q.insert("architecture".into(), a.into());
            }
            Catalog::Images
                .select(&q)
                .iter()
                .map(|i| i["architecture"].as_str().unwrap_or_default().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(by_name(None), ["x86", "arm"]);
        assert_eq!(by_name(Some("arm")), ["arm"]);
    }

    #[test]
    fn every_location_has_a_datacenter_offering_its_server_types() {
        for l in Catalog::Locations.entries() {
            let name = l["name"].as_str().unwrap_or_default();
            let dc = datacenter_of(name).unwrap_or_default();
            assert_eq!(dc["location"], l, "{name}");
            let available = dc["server_types"]["available"]
                .as_array()
                .map_or(0, Vec::len);
            assert!(available > 0, "{name}");
        }
        // The cx series is European.
        let ash = datacenter_of("ash").unwrap_or_default();
        assert!(
            !ash["server_types"]["available"]
                .as_array()
                .is_some_and(|a| a.contains(&json!(104)))
        );
    }
}
