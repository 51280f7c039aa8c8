//! Keysets for a spec, kOps' id rules, rotation, and what nodeup configs read.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use kops_api::internal::Cluster;
use kops_api::keyset::{Keyset, KeysetItem, KeysetType, id_older};

use super::{Certificate, PrivateKeyPem, Serial, build_pki_serial, issue_ca, pki_error};
use crate::Result;

/// kOps' name of the discovery-service CA.
const DISCOVERY_CA: &str = "discovery-ca";

fn discovery_service_configured(cluster: &Cluster) -> bool {
    cluster
        .spec
        .service_account_issuer_discovery
        .as_ref()
        .and_then(|d| d.discovery_service.as_ref())
        .and_then(|s| s.url.as_deref())
        .is_some_and(|u| !u.is_empty())
}

fn etcd_cluster_names(cluster: &Cluster) -> Vec<String> {
    cluster
        .spec
        .etcd_clusters
        .iter()
        .flatten()
        .filter_map(|e| e.name.clone())
        .collect()
}

/// Every keyset kOps creates for `cluster`, in kOps' task order:
/// `kubernetes-ca`, `discovery-ca` (with a discovery service URL),
/// `apiserver-aggregator-ca`, `service-account`, then for each etcd cluster
/// `etcd-manager-ca-<c>`, `etcd-peers-ca-<c>`, the shared `etcd-clients-ca`,
/// and `etcd-clients-ca-cilium` for an etcd cluster named `cilium`.
pub fn keyset_names(cluster: &Cluster) -> Vec<String> {
    let mut names = vec!["kubernetes-ca".to_string()];
    if discovery_service_configured(cluster) {
        names.push(DISCOVERY_CA.into());
    }
    names.push("apiserver-aggregator-ca".into());
    names.push("service-account".into());
    for etcd in etcd_cluster_names(cluster) {
        for n in [
            format!("etcd-manager-ca-{etcd}"),
            format!("etcd-peers-ca-{etcd}"),
            "etcd-clients-ca".to_string(),
        ] {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        if etcd == "cilium" && !names.iter().any(|n| n == "etcd-clients-ca-cilium") {
            names.push("etcd-clients-ca-cilium".into());
        }
    }
    names
}

/// Whether `kops create/promote/distrust keypair` accept the keyset name:
/// `all`, `service-account`, or a name containing `-ca`.
pub fn is_rotatable(name: &str) -> bool {
    name == "all" || name == "service-account" || name.contains("-ca")
}

/// A new keyset `name` holding one freshly issued CA (subject `CN=<name>`)
/// as primary, its id the certificate serial: what kOps' keypair task makes.
pub fn new_keyset(name: &str, now: SystemTime) -> Result<Keyset> {
    let ca = issue_ca(name, false, build_pki_serial(now), now)?;
    let mut ks = Keyset::new(name, KeysetType::Keypair);
    add_item(
        &mut ks,
        &ca.certificate_pem,
        Some(&ca.private_key),
        true,
        now,
    )?;
    Ok(ks)
}

/// Creates every keyset of [`keyset_names`] that `keysets` lacks, adds it to
/// `keysets`, and returns the names created (empty when all exist, so a
/// second call changes nothing). The caller stores the created keysets at
/// [`super::keyset_path`].
pub fn ensure_keysets(
    cluster: &Cluster,
    keysets: &mut BTreeMap<String, Keyset>,
    now: SystemTime,
) -> Result<Vec<String>> {
    let mut created = Vec::new();
    for name in keyset_names(cluster) {
        if keysets.contains_key(&name) {
            continue;
        }
        keysets.insert(name.clone(), new_keyset(&name, now)?);
        created.push(name);
    }
    Ok(created)
}

fn item_certificate(keyset: &Keyset, item: &KeysetItem) -> Result<Option<Certificate>> {
    match &item.public_material {
        None => Ok(None),
        Some(pem) => Certificate::from_pem(pem).map(Some).map_err(|e| {
            pki_error(
                keyset.name(),
                format!("item {}: {e}", item.id.as_deref().unwrap_or("")),
            )
        }),
    }
}

fn primary_certificate(keyset: &Keyset) -> Result<Option<Certificate>> {
    match keyset.primary() {
        Some(p) => item_certificate(keyset, p),
        None => Ok(None),
    }
}

/// kOps' `Keyset.AddItem`: adds a certificate (and key) to `keyset` and
/// returns the new item's id.
///
/// The id is the certificate serial when that serial is not from the future
/// and, for a primary, higher than every existing numeric id; otherwise a
/// fresh [`build_pki_serial`] (above every existing id). A certificate without a key whose serial is
/// not older than the primary's gets the smallest free integer id from 0, so
/// it sorts before the primary. A primary needs a key; a secondary needs an
/// existing primary.
pub fn add_item(
    keyset: &mut Keyset,
    certificate_pem: &str,
    private_key: Option<&PrivateKeyPem>,
    primary: bool,
    now: SystemTime,
) -> Result<String> {
    let name = keyset.name().to_string();
    let cert = Certificate::from_pem(certificate_pem.as_bytes())
        .map_err(|e| pki_error(&name, format!("certificate: {e}")))?;
    if private_key.is_none() && primary {
        return Err(pki_error(
            &name,
            "private key not provided for primary item",
        ));
    }
    let primary_cert = primary_certificate(keyset)?;
    if !primary && keyset.primary().is_none() {
        return Err(pki_error(
            &name,
            "cannot add secondary item when no existing primary item",
        ));
    }
    let highest = keyset
        .spec
        .keys
        .iter()
        .filter_map(|k| k.id.as_deref().and_then(Serial::from_decimal))
        .max()
        .unwrap_or_else(|| Serial::from(0u128));
    let nanos = now
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    // The largest serial BuildPKISerial could give at `now`.
    let latest_now = Serial::from((nanos << 32) | u32::MAX as u128);
    let mut id = if cert.serial <= latest_now && (!primary || cert.serial > highest) {
        cert.serial.clone()
    } else {
        // kOps relies on the clock having moved on since the highest id was
        // made; with a clock passed in, keep the promise explicitly.
        let fresh = build_pki_serial(now);
        if fresh > highest {
            fresh
        } else {
            highest.successor()
        }
    };
    if private_key.is_none()
        && let Some(pc) = &primary_cert
        && pc.serial <= id
    {
        let mut n: u128 = 0;
        while keyset.item(&n.to_string()).is_some() {
            n += 1;
        }
        id = Serial::from(n);
    }
    let id = id.to_string();
    keyset
        .spec
        .keys
        .retain(|k| k.id.as_deref() != Some(id.as_str()));
    let mut item = KeysetItem::default();
    item.id = Some(id.clone());
    item.public_material = Some(cert.to_pem().into_bytes());
    item.private_material = private_key.map(|k| k.expose_pem().as_bytes().to_vec());
    keyset.spec.keys.push(item);
    if primary {
        keyset.spec.primary_id = Some(id.clone());
    }
    keyset.sort_keys();
    Ok(id)
}

/// `kops create keypair NAME`: issues a new self-signed CA (subject
/// `CN=<name>,serialNumber=<serial>`, a new RSA-2048 key) and adds it as a
/// secondary item, or as primary when `primary`. The first item of an empty
/// keyset must be primary. Returns the new id.
pub fn create_keypair(keyset: &mut Keyset, primary: bool, now: SystemTime) -> Result<String> {
    let name = keyset.name().to_string();
    if !is_rotatable(&name) {
        return Err(pki_error(
            &name,
            "adding a keypair to this keyset is not supported",
        ));
    }
    if keyset.primary().is_none() && !primary {
        return Err(pki_error(
            &name,
            "the first keypair added to a keyset must be primary",
        ));
    }
    let ca = issue_ca(&name, true, build_pki_serial(now), now)?;
    add_item(
        keyset,
        &ca.certificate_pem,
        Some(&ca.private_key),
        primary,
        now,
    )
}

/// `kops promote keypair NAME [ID]`: makes `id` (or, without one, the
/// highest-id trusted item that has a certificate and a private key) the
/// primary. Returns the promoted id, or `None` when no item is newer than
/// the current primary.
pub fn promote_keypair(keyset: &mut Keyset, id: Option<&str>) -> Result<Option<String>> {
    let name = keyset.name().to_string();
    let id = match id {
        None => {
            let best = keyset
                .spec
                .keys
                .iter()
                .filter(|k| {
                    k.private_material.is_some()
                        && k.distrust_timestamp.is_none()
                        && k.public_material.is_some()
                })
                .filter_map(|k| k.id.as_deref().and_then(Serial::from_decimal))
                .max()
                .ok_or_else(|| pki_error(&name, "no trusted keypair with a private key"))?
                .to_string();
            if keyset.spec.primary_id.as_deref() == Some(best.as_str()) {
                return Ok(None);
            }
            best
        }
        Some(id) => {
            let item = keyset
                .item(id)
                .ok_or_else(|| pki_error(&name, format!("keypair {id} not found")))?;
            if item.distrust_timestamp.is_some() {
                return Err(pki_error(&name, format!("keypair {id} is distrusted")));
            }
            if item.private_material.is_none() {
                return Err(pki_error(&name, format!("keypair {id} has no private key")));
            }
            if item.public_material.is_none() {
                return Err(pki_error(&name, format!("keypair {id} has no certificate")));
            }
            id.to_string()
        }
    };
    keyset.spec.primary_id = Some(id.clone());
    Ok(Some(id))
}

/// RFC 3339 UTC seconds, as `metav1.Time` writes a distrust timestamp.
pub(crate) fn rfc3339(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let days = secs.div_euclid(86400);
    let rem = secs.rem_euclid(86400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719468;
    let era = if z >= 0 { z } else { z - 146096 } / 146097;
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `kops distrust keypair NAME [IDS...]`: marks the items distrusted at
/// `now`; without ids, every trusted item whose certificate serial is lower
/// than the primary's. The primary cannot be distrusted. Returns the ids
/// newly distrusted.
pub fn distrust_keypair(
    keyset: &mut Keyset,
    ids: &[String],
    now: SystemTime,
) -> Result<Vec<String>> {
    let name = keyset.name().to_string();
    let primary_id = keyset
        .spec
        .primary_id
        .clone()
        .ok_or_else(|| pki_error(&name, "keyset has no primary keypair"))?;
    let ids: Vec<String> = if ids.is_empty() {
        let primary_serial = primary_certificate(keyset)?
            .ok_or_else(|| pki_error(&name, "the primary keypair has no certificate"))?
            .serial;
        let mut older = Vec::new();
        for item in &keyset.spec.keys {
            if item.distrust_timestamp.is_some() {
                continue;
            }
            if let Some(c) = item_certificate(keyset, item)?
                && c.serial < primary_serial
                && let Some(id) = &item.id
            {
                older.push(id.clone());
            }
        }
        older
    } else {
        ids.to_vec()
    };
    let stamp = rfc3339(now);
    let mut done = Vec::new();
    for id in ids {
        if id == primary_id {
            return Err(pki_error(&name, "cannot distrust the primary keypair"));
        }
        let item = keyset
            .item_mut(&id)
            .ok_or_else(|| pki_error(&name, format!("keypair {id} not found")))?;
        if item.distrust_timestamp.is_some() {
            continue;
        }
        item.distrust_timestamp = Some(stamp.clone());
        done.push(id);
    }
    Ok(done)
}

/// `kops trust keypair NAME IDS...`: clears the distrust timestamps.
/// Returns the ids trusted again.
pub fn trust_keypair(keyset: &mut Keyset, ids: &[String]) -> Result<Vec<String>> {
    let name = keyset.name().to_string();
    let mut done = Vec::new();
    for id in ids {
        let item = keyset
            .item_mut(id)
            .ok_or_else(|| pki_error(&name, format!("keypair {id} not found")))?;
        if item.distrust_timestamp.take().is_some() {
            done.push(id.clone());
        }
    }
    Ok(done)
}

/// Trusted items with their certificates, oldest id first.
fn trusted(keyset: &Keyset) -> Result<Vec<Certificate>> {
    let mut items: Vec<&KeysetItem> = keyset
        .spec
        .keys
        .iter()
        .filter(|k| k.distrust_timestamp.is_none())
        .collect();
    items.sort_by(|a, b| {
        let (a, b) = (a.id.as_deref().unwrap_or(""), b.id.as_deref().unwrap_or(""));
        if id_older(a, b) {
            std::cmp::Ordering::Less
        } else if id_older(b, a) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    });
    let mut out = Vec::new();
    for item in items {
        if let Some(c) = item_certificate(keyset, item)? {
            out.push(c);
        }
    }
    Ok(out)
}

/// kOps' `ToCertificateBytes`: the PEM certificates of every trusted item,
/// oldest id first, concatenated (what nodeup trusts).
pub fn trusted_certificates(keyset: &Keyset) -> Result<String> {
    Ok(trusted(keyset)?.iter().map(Certificate::to_pem).collect())
}

/// kOps' `ToPublicKeys`: the public keys of every trusted item, oldest id
/// first (the API server's `ServiceAccountPublicKeys`).
pub fn public_keys_pem(keyset: &Keyset) -> Result<String> {
    Ok(trusted(keyset)?
        .iter()
        .map(Certificate::public_key_pem)
        .collect())
}

/// The role of the instance group a nodeup config is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NodeRole {
    /// `ControlPlane` (also spelled `Master`).
    ControlPlane,
    /// `APIServer`: runs an API server but no etcd.
    ApiServer,
    /// `Node`.
    Node,
    /// `Bastion`.
    Bastion,
}

impl NodeRole {
    /// From an instance group's `spec.role` (`Master`, `ControlPlane`,
    /// `APIServer`, `Node`, `Bastion`).
    pub fn from_role(role: &str) -> Option<NodeRole> {
        Some(match role {
            "Master" | "ControlPlane" => NodeRole::ControlPlane,
            "APIServer" => NodeRole::ApiServer,
            "Node" => NodeRole::Node,
            "Bastion" => NodeRole::Bastion,
            _ => return None,
        })
    }
}

/// The PKI part of a nodeup config and its boot config.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct NodeupPki {
    /// `CAs`: keyset name -> trusted certificates (PEM, oldest first).
    pub cas: BTreeMap<String, String>,
    /// `KeypairIDs`: keyset name -> primary id.
    pub keypair_ids: BTreeMap<String, String>,
    /// `APIServerConfig.ServiceAccountPublicKeys` (instance groups that run an
    /// API server).
    pub service_account_public_keys: Option<String>,
    /// `ConfigServer.CACertificates` of the boot config (instance groups that
    /// do not run an API server): the kubernetes-ca certificates, which are
    /// then not in `cas`.
    pub config_server_ca_certificates: Option<String>,
}

/// What kOps' nodeup config builder takes from the keysets for an instance
/// group of `role` (`pkg/nodemodel/nodeupconfigbuilder.go`). Every keyset it
/// needs must be in `keysets`.
pub fn nodeup_pki(
    cluster: &Cluster,
    role: NodeRole,
    keysets: &BTreeMap<String, Keyset>,
) -> Result<NodeupPki> {
    let mut out = NodeupPki::default();
    if role == NodeRole::Bastion {
        return Ok(out);
    }
    let control_plane = role == NodeRole::ControlPlane;
    let api_server = control_plane || role == NodeRole::ApiServer;
    let get = |name: &str| -> Result<&Keyset> {
        keysets
            .get(name)
            .ok_or_else(|| pki_error(name, "keyset not found"))
    };
    let primary_id = |name: &str| -> Result<String> {
        get(name)?
            .spec
            .primary_id
            .clone()
            .filter(|id| !id.is_empty())
            .ok_or_else(|| pki_error(name, "keyset has no primary id"))
    };
    let load = |out: &mut NodeupPki, name: &str| -> Result<()> {
        out.cas
            .insert(name.to_string(), trusted_certificates(get(name)?)?);
        out.keypair_ids.insert(name.to_string(), primary_id(name)?);
        Ok(())
    };

    load(&mut out, "kubernetes-ca")?;
    if keysets.contains_key("etcd-clients-ca-cilium") {
        load(&mut out, "etcd-clients-ca-cilium")?;
    }
    if control_plane {
        load(&mut out, "etcd-clients-ca")?;
        for etcd in etcd_cluster_names(cluster) {
            load(&mut out, &format!("etcd-manager-ca-{etcd}"))?;
            load(&mut out, &format!("etcd-peers-ca-{etcd}"))?;
            if !matches!(etcd.as_str(), "events" | "main" | "leases") {
                load(&mut out, &format!("etcd-clients-ca-{etcd}"))?;
            }
        }
        out.keypair_ids
            .insert("service-account".into(), primary_id("service-account")?);
        if discovery_service_configured(cluster) {
            out.keypair_ids
                .insert(DISCOVERY_CA.into(), primary_id(DISCOVERY_CA)?);
        }
    } else if keysets.contains_key("etcd-client-cilium") {
        out.keypair_ids.insert(
            "etcd-client-cilium".into(),
            primary_id("etcd-client-cilium")?,
        );
    }
    if api_server {
        load(&mut out, "apiserver-aggregator-ca")?;
        if keysets.contains_key("etcd-clients-ca") {
            load(&mut out, "etcd-clients-ca")?;
        }
        out.keypair_ids
            .insert("service-account".into(), primary_id("service-account")?);
        out.service_account_public_keys = Some(public_keys_pem(get("service-account")?)?);
    } else {
        for legacy in ["kubelet", "kube-proxy", "kube-router"] {
            if keysets.contains_key(legacy) {
                out.keypair_ids.insert(legacy.into(), primary_id(legacy)?);
            }
        }
        out.config_server_ca_certificates =
            Some(out.cas.remove("kubernetes-ca").unwrap_or_default());
    }
    Ok(out)
}

/// One row of `kops get keypairs`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeypairListing {
    /// Keyset name.
    pub name: String,
    /// Item id.
    pub id: String,
    /// When it was distrusted (RFC 3339), if it was.
    pub distrust_timestamp: Option<String>,
    /// Whether it is the keyset's primary.
    pub is_primary: bool,
    /// The certificate, if the item has one.
    pub certificate: Option<Certificate>,
    /// Whether the item has a private key.
    pub has_private_key: bool,
}

/// `kops get keypairs [NAMES...]`: the items of the named keysets (all when
/// `names` is empty), by keyset name and then oldest id first; distrusted
/// items and items without a certificate only with `include_distrusted`.
pub fn list_keypairs(
    keysets: &BTreeMap<String, Keyset>,
    names: &[String],
    include_distrusted: bool,
) -> Result<Vec<KeypairListing>> {
    let mut out = Vec::new();
    for (name, keyset) in keysets {
        if !names.is_empty() && !names.contains(name) {
            continue;
        }
        let mut ks = keyset.clone();
        ks.sort_keys();
        for item in &ks.spec.keys {
            let trusted = item.distrust_timestamp.is_none() && item.public_material.is_some();
            if !include_distrusted && !trusted {
                continue;
            }
            let id = item.id.clone().unwrap_or_default();
            out.push(KeypairListing {
                name: name.clone(),
                is_primary: ks.spec.primary_id.as_deref() == Some(id.as_str()),
                id,
                distrust_timestamp: item.distrust_timestamp.clone(),
                certificate: item_certificate(&ks, item)?,
                has_private_key: item.private_material.is_some(),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc_seconds() {
        let t = UNIX_EPOCH + std::time::Duration::from_secs(1_625_814_480);
        assert_eq!(rfc3339(t), "2021-07-09T07:08:00Z");
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
    }

    #[test]
    fn rotatable_names() {
        assert!(is_rotatable("kubernetes-ca"));
        assert!(is_rotatable("service-account"));
        assert!(is_rotatable("etcd-peers-ca-main"));
        assert!(!is_rotatable("kubelet"));
    }
}
