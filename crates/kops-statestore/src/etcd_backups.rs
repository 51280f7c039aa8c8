//! The backups etcd-manager keeps in the state store, and the restore request its
//! `etcd-manager-ctl restore-backup` writes, in etcd-manager's own layout:
//!
//! - an etcd cluster's backup store is `<config base>/backups/etcd/<etcd cluster>/` (kOps
//!   points etcd-manager's `--backup-store` there);
//! - each backup is a directory named `<RFC 3339 time>-<suffix>` holding the snapshot
//!   `etcd.backup.gz` and `_etcd_backup.meta` (JSON: `etcdVersion`, `timestamp`,
//!   `clusterSpec`);
//! - `control/etcd-cluster-spec` is the cluster spec kOps writes (`memberCount`,
//!   `etcdVersion`); a command is `control/<RFC 3339 time>-000000/_command.json`, the
//!   protobuf JSON of a `Command` whose `restoreBackup` names the backup and carries that
//!   spec. etcd-manager reads it on every control-plane node and restores the backup.

use std::time::SystemTime;

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::store::{PutOptions, Store, StoreExt as _};

/// The backup's metadata file in each backup directory.
pub const META_FILE: &str = "_etcd_backup.meta";
/// The snapshot file in each backup directory.
pub const DATA_FILE: &str = "etcd.backup.gz";
/// A command's file in its directory under `control/`.
pub const COMMAND_FILE: &str = "_command.json";

/// The backup store of etcd cluster `etcd` (`main`, `events`), relative to the config
/// base.
pub fn backup_store(etcd: &str) -> String {
    format!("backups/etcd/{etcd}/")
}

/// One backup etcd-manager wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EtcdBackup {
    /// Its name (`2026-12-07T10:00:00Z-000001`), which `restore-backup` takes.
    pub name: String,
    /// The etcd cluster (`main`, `events`).
    pub etcd: String,
    /// The etcd version that wrote it (from its metadata).
    pub etcd_version: Option<String>,
    /// The snapshot's size in bytes (0 when it is missing).
    pub size: u64,
}

/// The backups of etcd cluster `etcd` in `store` (rooted at the cluster's config base),
/// oldest first, as etcd-manager lists them: every directory holding a metadata file.
pub async fn list_backups(store: &dyn Store, etcd: &str) -> Result<Vec<EtcdBackup>> {
    let base = backup_store(etcd);
    let listed = store.list(&base).await?;
    let mut out = Vec::new();
    for meta in &listed {
        let Some(rest) = meta.path.strip_prefix(&base) else {
            continue;
        };
        let Some(name) = rest.strip_suffix(&format!("/{META_FILE}")) else {
            continue;
        };
        if name.contains('/') || name == "control" {
            continue;
        }
        let info = store.get(&meta.path).await?;
        let parsed: serde_json::Value =
            serde_json::from_slice(&info.data).map_err(|e| Error::Invalid {
                what: meta.path.clone(),
                reason: format!("not etcd-manager backup metadata: {e}"),
            })?;
        let data = format!("{base}{name}/{DATA_FILE}");
        let size = listed.iter().find(|m| m.path == data).map_or(0, |m| m.size);
        out.push(EtcdBackup {
            name: name.to_owned(),
            etcd: etcd.to_owned(),
            etcd_version: parsed["etcdVersion"].as_str().map(str::to_owned),
            size,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// A `restore-backup` request: the command file's path (relative to the config base) and
/// its content.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RestoreRequest {
    /// `backups/etcd/<etcd>/control/<time>-000000/_command.json`.
    pub path: String,
    /// The command, as etcd-manager-ctl writes it.
    pub content: String,
}

/// The command etcd-manager-ctl writes for `restore-backup BACKUP` at `now`: protobuf
/// JSON (fields in field-number order, 64-bit integers as strings, two-space indent) of a
/// `Command` with `timestamp` (Unix nanoseconds) and `restoreBackup` { `clusterSpec`,
/// `backup` }, where the spec is the store's `control/etcd-cluster-spec`.
pub fn restore_command(
    etcd: &str,
    backup: &str,
    cluster_spec_json: &str,
    now: SystemTime,
) -> Result<RestoreRequest> {
    let spec: serde_json::Value =
        serde_json::from_str(cluster_spec_json).map_err(|e| Error::Invalid {
            what: format!("{}control/etcd-cluster-spec", backup_store(etcd)),
            reason: format!("not an etcd cluster spec: {e}"),
        })?;
    let nanos = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut spec_lines = Vec::new();
    if let Some(n) = spec["memberCount"].as_i64().filter(|n| *n != 0) {
        spec_lines.push(format!("      \"memberCount\": {n}"));
    }
    if let Some(v) = spec["etcdVersion"].as_str().filter(|v| !v.is_empty()) {
        spec_lines.push(format!("      \"etcdVersion\": {}", json_string(v)));
    }
    let spec_block = if spec_lines.is_empty() {
        "    \"clusterSpec\": {},\n".to_owned()
    } else {
        format!(
            "    \"clusterSpec\": {{\n{}\n    }},\n",
            spec_lines.join(",\n")
        )
    };
    let content = format!(
        "{{\n  \"timestamp\": \"{nanos}\",\n  \"restoreBackup\": {{\n{spec_block}    \"backup\": {}\n  }}\n}}",
        json_string(backup)
    );
    let name = format!("{}-000000", crate::lock::rfc3339(now));
    Ok(RestoreRequest {
        path: format!("{}control/{name}/{COMMAND_FILE}", backup_store(etcd)),
        content,
    })
}

fn json_string(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

/// Builds the restore request for `backup` of etcd cluster `etcd` from the store: the
/// backup must exist and the cluster spec kOps wrote must be there (as etcd-manager-ctl
/// requires). Nothing is written.
pub async fn plan_restore_backup(
    store: &dyn Store,
    etcd: &str,
    backup: &str,
    now: SystemTime,
) -> Result<RestoreRequest> {
    let backups = list_backups(store, etcd).await?;
    if !backups.iter().any(|b| b.name == backup) {
        let known: Vec<&str> = backups.iter().map(|b| b.name.as_str()).collect();
        return Err(Error::Invalid {
            what: format!("backup {backup:?}"),
            reason: format!(
                "etcd cluster {etcd} has no such backup in {} (it has: {})",
                backup_store(etcd),
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            ),
        });
    }
    let spec_path = format!("{}control/etcd-cluster-spec", backup_store(etcd));
    let spec = store.get_opt(&spec_path).await?.ok_or_else(|| Error::Invalid {
        what: spec_path.clone(),
        reason: "the etcd cluster spec was not found: is this a new cluster? (`kops update cluster --yes` writes it)".into(),
    })?;
    let text = String::from_utf8_lossy(&spec.data);
    restore_command(etcd, backup, &text, now)
}

/// Writes `request` (see [`plan_restore_backup`]).
pub async fn write_restore_request(store: &dyn Store, request: &RestoreRequest) -> Result<()> {
    store
        .put(
            &request.path,
            Bytes::from(request.content.clone()),
            PutOptions::overwrite(),
        )
        .await
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;
    use crate::memory::MemoryStore;

    /// What etcd-manager-ctl's `restore-backup` writes for this spec and backup at
    /// 2026-12-07T10:00:00.5Z: protojson of its `Command` (field numbers 1 and 10; in
    /// `RestoreBackupCommand` 1 and 3; in `ClusterSpec` 1 and 2), int64 as a string.
    const GOLDEN: &str = "{\n  \"timestamp\": \"1796637600500000000\",\n  \"restoreBackup\": {\n    \"clusterSpec\": {\n      \"memberCount\": 3,\n      \"etcdVersion\": \"3.6.6\"\n    },\n    \"backup\": \"2026-12-07T09:45:01Z-000012\"\n  }\n}";

    fn at() -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(1_796_637_600_500)
    }

    #[test]
    fn the_command_is_etcd_manager_ctls() {
        let r = restore_command(
            "main",
            "2026-12-07T09:45:01Z-000012",
            "{\n  \"memberCount\": 3,\n  \"etcdVersion\": \"3.6.6\"\n}",
            at(),
        )
        .unwrap();
        assert_eq!(r.content, GOLDEN);
        assert_eq!(
            r.path,
            "backups/etcd/main/control/2026-12-07T10:00:00Z-000000/_command.json"
        );
        // It parses back to what was asked.
        let v: serde_json::Value = serde_json::from_str(&r.content).unwrap();
        assert_eq!(v["restoreBackup"]["backup"], "2026-12-07T09:45:01Z-000012");
    }

    async fn put(store: &MemoryStore, path: &str, data: &str) {
        store
            .put(path, Bytes::from(data.to_owned()), PutOptions::overwrite())
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn backups_are_listed_and_a_restore_needs_the_backup_and_the_spec() {
        let store = Arc::new(MemoryStore::new());
        let base = "backups/etcd/main/";
        for (name, size) in [
            ("2026-12-07T09:30:00Z-000011", 7),
            ("2026-12-07T09:45:01Z-000012", 9),
        ] {
            put(
                &store,
                &format!("{base}{name}/{META_FILE}"),
                "{\"etcdVersion\": \"3.6.6\", \"timestamp\": \"1\"}",
            )
            .await;
            put(
                &store,
                &format!("{base}{name}/{DATA_FILE}"),
                &"x".repeat(size),
            )
            .await;
        }
        // A command directory and a stray file are no backups.
        put(
            &store,
            &format!("{base}control/2026-01-01T00:00:00Z-000000/{COMMAND_FILE}"),
            "{}",
        )
        .await;
        put(&store, &format!("{base}notes.txt"), "hi").await;
        let listed = list_backups(store.as_ref(), "main").await.unwrap();
        let names: Vec<(&str, u64)> = listed.iter().map(|b| (b.name.as_str(), b.size)).collect();
        assert_eq!(
            names,
            [
                ("2026-12-07T09:30:00Z-000011", 7),
                ("2026-12-07T09:45:01Z-000012", 9)
            ]
        );
        assert_eq!(listed[0].etcd_version.as_deref(), Some("3.6.6"));

        let e = plan_restore_backup(store.as_ref(), "main", "2026-12-07T09:45:01Z-000012", at())
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("etcd cluster spec was not found"), "{e}");
        put(
            &store,
            &format!("{base}control/etcd-cluster-spec"),
            "{\n  \"memberCount\": 3,\n  \"etcdVersion\": \"3.6.6\"\n}",
        )
        .await;
        let e = plan_restore_backup(store.as_ref(), "main", "nope", at())
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("no such backup") && e.contains("000012"), "{e}");
        let r = plan_restore_backup(store.as_ref(), "main", "2026-12-07T09:45:01Z-000012", at())
            .await
            .unwrap();
        assert_eq!(r.content, GOLDEN);
        write_restore_request(store.as_ref(), &r).await.unwrap();
        assert_eq!(store.get(&r.path).await.unwrap().data, GOLDEN.as_bytes());
    }
}
