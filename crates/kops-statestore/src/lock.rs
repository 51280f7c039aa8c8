//! An advisory lock object for mutating operations, and the clock it stamps.
//!
//! A lock is a small JSON object created with [`PutMode::CreateIfAbsent`]:
//! whoever creates it holds the lock; anyone else gets [`Error::Locked`]
//! naming the holder. It is released by deleting it, after checking that
//! it is still the same lock (same id). A lock whose holder died stays until
//! someone calls [`force_unlock`] with its id, as with Terraform's
//! `force-unlock`; dropping a [`Lock`] without [`Lock::release`] leaves it in place.

use std::fmt;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::store::{DeleteOptions, PutMode, PutOptions, Store, StoreExt, Version};

/// A source of the current time, passed in so tests control it.
pub trait Clock: Send + Sync + fmt::Debug + 'static {
    /// The current time.
    fn now(&self) -> SystemTime;
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// Formats `t` as RFC 3339 UTC with second precision (`2024-01-02T03:04:05Z`).
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_else(|e| -(e.duration().as_secs() as i64));
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// What a lock object records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LockInfo {
    /// Unique id of this acquisition; needed to release or force-unlock it.
    pub id: String,
    /// Who holds it (user@host, a CI job id, ...).
    pub holder: String,
    /// What the holder is doing (`update cluster`, ...).
    pub operation: String,
    /// When it was taken, RFC 3339 UTC.
    pub created: String,
    /// Version of the tool that took it.
    pub tool_version: String,
}

/// Who wants a lock and why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LockRequest {
    /// Who is asking.
    pub holder: String,
    /// For what.
    pub operation: String,
    /// Tool version to record (defaults to this crate's version).
    pub tool_version: String,
}

impl LockRequest {
    /// A request by `holder` for `operation`.
    pub fn new(holder: impl Into<String>, operation: impl Into<String>) -> Self {
        LockRequest {
            holder: holder.into(),
            operation: operation.into(),
            tool_version: concat!("kops-rs ", env!("CARGO_PKG_VERSION")).to_string(),
        }
    }

    /// Sets the tool version recorded in the lock.
    pub fn with_tool_version(mut self, v: impl Into<String>) -> Self {
        self.tool_version = v.into();
        self
    }
}

/// A held lock. Release it with [`Lock::release`].
#[derive(Debug)]
#[must_use = "a lock stays held until released"]
pub struct Lock {
    store: Arc<dyn Store>,
    path: String,
    info: LockInfo,
    version: Version,
}

fn parse_info(path: &str, data: &[u8]) -> Result<LockInfo> {
    serde_json::from_slice(data).map_err(|e| Error::Parse {
        path: path.to_string(),
        what: "lock",
        source: e.into(),
    })
}

impl Lock {
    /// Takes the lock at `path` in `store`, or fails with [`Error::Locked`]
    /// naming the current holder.
    pub async fn acquire(
        store: Arc<dyn Store>,
        path: &str,
        request: &LockRequest,
        clock: &dyn Clock,
    ) -> Result<Lock> {
        let info = LockInfo {
            id: format!("{:032x}", rand::random::<u128>()),
            holder: request.holder.clone(),
            operation: request.operation.clone(),
            created: rfc3339(clock.now()),
            tool_version: request.tool_version.clone(),
        };
        let data = serde_json::to_vec_pretty(&info).map_err(|e| Error::Serialize {
            path: path.to_string(),
            what: "lock",
            source: e.into(),
        })?;
        match store
            .put(
                path,
                Bytes::from(data),
                PutOptions::default().with_mode(PutMode::CreateIfAbsent),
            )
            .await
        {
            Ok(version) => Ok(Lock {
                store,
                path: path.to_string(),
                info,
                version,
            }),
            Err(Error::AlreadyExists { .. }) => match read_lock(store.as_ref(), path).await? {
                Some(held) => Err(Error::Locked {
                    path: path.to_string(),
                    info: Box::new(held),
                }),
                // Released between our write and our read: report it as a
                // conflict so the caller may retry.
                None => Err(Error::AlreadyExists {
                    path: path.to_string(),
                }),
            },
            Err(e) => Err(e),
        }
    }

    /// What this lock records.
    pub fn info(&self) -> &LockInfo {
        &self.info
    }

    /// Path of the lock object.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Releases the lock, failing with [`Error::LockMismatch`] if it was
    /// force-unlocked (and perhaps taken by someone else) meanwhile.
    ///
    /// The delete is conditional on the version this lock was written at, so
    /// a lock taken by someone else after a force-unlock is never removed.
    pub async fn release(self) -> Result<()> {
        match self
            .store
            .delete_opts(&self.path, DeleteOptions::if_version(self.version.clone()))
            .await
        {
            Err(Error::Precondition { .. }) => {}
            other => return other,
        }
        // Not ours any more: say whose it is.
        let current = self.store.get_opt(&self.path).await?;
        match current {
            Some(c) => Err(Error::LockMismatch {
                path: self.path.clone(),
                expected: self.info.id.clone(),
                found: parse_info(&self.path, &c.data)
                    .map(|i| i.id)
                    .unwrap_or_else(|_| "an unreadable lock".to_string()),
            }),
            None => Err(Error::LockMismatch {
                path: self.path.clone(),
                expected: self.info.id.clone(),
                found: "no lock".to_string(),
            }),
        }
    }
}

/// The lock currently at `path`, if any.
pub async fn read_lock(store: &dyn Store, path: &str) -> Result<Option<LockInfo>> {
    match store.get_opt(path).await? {
        Some(c) => parse_info(path, &c.data).map(Some),
        None => Ok(None),
    }
}

/// Removes the lock at `path` whatever its holder, provided its id is `id`
/// (so a lock taken again since the caller looked is not removed).
pub async fn force_unlock(store: &dyn Store, path: &str, id: &str) -> Result<LockInfo> {
    let current = store.get_opt(path).await?;
    let Some(current) = current else {
        return Err(Error::LockMismatch {
            path: path.to_string(),
            expected: id.to_string(),
            found: "no lock".to_string(),
        });
    };
    let info = parse_info(path, &current.data)?;
    if info.id != id {
        return Err(Error::LockMismatch {
            path: path.to_string(),
            expected: id.to_string(),
            found: info.id,
        });
    }
    store
        .delete_opts(path, DeleteOptions::if_version(current.version))
        .await?;
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_rfc3339() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        // 2000-02-29T12:34:56Z (leap day) = 951827696
        let t = UNIX_EPOCH + Duration::from_secs(951_827_696);
        assert_eq!(rfc3339(t), "2000-02-29T12:34:56Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_735_689_599);
        assert_eq!(rfc3339(t), "2024-12-31T23:59:59Z");
    }
}
