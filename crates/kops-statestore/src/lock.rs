//! An advisory lock object for mutating operations, and the clock it stamps.
//!
//! A lock is a small JSON object created with [`PutMode::CreateIfAbsent`]:
//! whoever creates it holds the lock; anyone else gets [`Error::Locked`]
//! naming the holder (who, on which host, which process, which command, since
//! when and until when). It is released by deleting it, after checking that
//! it is still the same lock (same id).
//!
//! A lock is a **lease**: it records when it expires ([`LockRequest::with_lease`],
//! [`DEFAULT_LEASE`] unless set). A holder that works longer calls
//! [`Lock::renew`]. A lock whose lease has run out is stale: the next
//! [`Lock::acquire`] replaces it (compare-and-swap against the stale version, so
//! of two processes taking over one stale lock only one wins). Before that,
//! [`force_unlock`] removes a lock by id whatever its expiry, as Terraform's
//! `force-unlock` does. Dropping a [`Lock`] without [`Lock::release`] leaves it in
//! place until its lease runs out.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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

/// Parses what [`rfc3339`] writes (`2024-01-02T03:04:05Z`; fractional seconds and
/// numeric offsets are accepted too). `None` for anything else.
pub fn parse_rfc3339(s: &str) -> Option<SystemTime> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        if !t.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let o = rest.get(1..)?;
            let (oh, om) = o.split_once(':')?;
            if oh.len() != 2 || om.len() != 2 {
                return None;
            }
            sign * (oh.parse::<i64>().ok()? * 3600 + om.parse::<i64>().ok()? * 60)
        }
    };
    let secs = days_from_civil(y, mo as u32, d as u32) * 86_400 + h * 3600 + mi * 60 + se - offset;
    if secs >= 0 {
        Some(UNIX_EPOCH + Duration::from_secs(secs as u64))
    } else {
        Some(UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs()))
    }
}

/// A proleptic Gregorian date to days since 1970-01-01.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
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
    /// Host the holder runs on (empty when not recorded, as in locks written before
    /// leases).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
    /// Process id of the holder on `host` (0 when not recorded).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pid: u32,
    /// The command line the holder runs (`kops update cluster --yes`), or empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub command: String,
    /// What the holder is doing (`update cluster`, ...).
    pub operation: String,
    /// When it was taken, RFC 3339 UTC.
    pub created: String,
    /// When the lease runs out, RFC 3339 UTC; `None` for a lock without a lease (written
    /// before leases existed), which never expires by itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    /// Version of the tool that took it.
    pub tool_version: String,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl LockInfo {
    /// Whether the lease has run out at `now` (a lock without a readable expiry never
    /// has).
    pub fn is_expired(&self, now: SystemTime) -> bool {
        self.expires
            .as_deref()
            .and_then(parse_rfc3339)
            .is_some_and(|e| e <= now)
    }

    /// One line naming the holder: `alice@ci (host ci-7, pid 42, `kops update cluster
    /// --yes`) for update cluster since T, lease until U`.
    pub fn describe(&self) -> String {
        let mut who = self.holder.clone();
        let mut details = Vec::new();
        if !self.host.is_empty() {
            details.push(format!("host {}", self.host));
        }
        if self.pid != 0 {
            details.push(format!("pid {}", self.pid));
        }
        if !self.command.is_empty() {
            details.push(format!("`{}`", self.command));
        }
        if !details.is_empty() {
            who = format!("{who} ({})", details.join(", "));
        }
        let until = match &self.expires {
            Some(e) => format!(", lease until {e}"),
            None => ", no lease expiry".to_string(),
        };
        format!("{who} for {} since {}{until}", self.operation, self.created)
    }
}

/// How long a lock is held when [`LockRequest::with_lease`] is not called: long enough
/// for an update of a large cluster, short enough that a crashed holder does not block
/// the cluster for a day.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(15 * 60);

/// Who wants a lock and why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LockRequest {
    /// Who is asking.
    pub holder: String,
    /// For what.
    pub operation: String,
    /// Host to record (default: none).
    pub host: String,
    /// Process id to record (default: none, 0).
    pub pid: u32,
    /// Command line to record (default: none).
    pub command: String,
    /// How long the lease lasts from acquisition (and from each renewal).
    pub lease: Duration,
    /// Tool version to record (defaults to this crate's version).
    pub tool_version: String,
}

impl LockRequest {
    /// A request by `holder` for `operation`.
    pub fn new(holder: impl Into<String>, operation: impl Into<String>) -> Self {
        LockRequest {
            holder: holder.into(),
            operation: operation.into(),
            host: String::new(),
            pid: 0,
            command: String::new(),
            lease: DEFAULT_LEASE,
            tool_version: concat!("kops-rs ", env!("CARGO_PKG_VERSION")).to_string(),
        }
    }

    /// Records the host and process id of the holder.
    pub fn with_process(mut self, host: impl Into<String>, pid: u32) -> Self {
        self.host = host.into();
        self.pid = pid;
        self
    }

    /// Records the command line the holder runs.
    pub fn with_command(mut self, command: impl Into<String>) -> Self {
        self.command = command.into();
        self
    }

    /// Sets how long the lease lasts (from acquisition and from each renewal).
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
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
    lease: Duration,
    replaced: Option<LockInfo>,
}

fn encode(path: &str, info: &LockInfo) -> Result<Bytes> {
    serde_json::to_vec_pretty(info)
        .map(Bytes::from)
        .map_err(|e| Error::Serialize {
            path: path.to_string(),
            what: "lock",
            source: e.into(),
        })
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
    /// naming the current holder. A lock whose lease ran out is replaced (see
    /// [`Lock::replaced`]).
    pub async fn acquire(
        store: Arc<dyn Store>,
        path: &str,
        request: &LockRequest,
        clock: &dyn Clock,
    ) -> Result<Lock> {
        let now = clock.now();
        let info = LockInfo {
            id: format!("{:032x}", rand::random::<u128>()),
            holder: request.holder.clone(),
            host: request.host.clone(),
            pid: request.pid,
            command: request.command.clone(),
            operation: request.operation.clone(),
            created: rfc3339(now),
            expires: Some(rfc3339(now + request.lease)),
            tool_version: request.tool_version.clone(),
        };
        let data = encode(path, &info)?;
        let lock = |version, replaced| Lock {
            store: store.clone(),
            path: path.to_string(),
            info: info.clone(),
            version,
            lease: request.lease,
            replaced,
        };
        match store
            .put(
                path,
                data.clone(),
                PutOptions::default().with_mode(PutMode::CreateIfAbsent),
            )
            .await
        {
            Ok(version) => return Ok(lock(version, None)),
            Err(Error::AlreadyExists { .. }) => {}
            Err(e) => return Err(e),
        }
        let Some(current) = store.get_opt(path).await? else {
            // Released between our write and our read: report it as a conflict so the
            // caller may retry.
            return Err(Error::AlreadyExists {
                path: path.to_string(),
            });
        };
        let held = parse_info(path, &current.data)?;
        if !held.is_expired(now) {
            return Err(Error::Locked {
                path: path.to_string(),
                info: Box::new(held),
            });
        }
        // A stale lease: take it over, provided nobody else did since we read it.
        match store
            .put(path, data, PutOptions::update(current.version))
            .await
        {
            Ok(version) => Ok(lock(version, Some(held))),
            Err(Error::Precondition { .. }) | Err(Error::NotFound { .. }) => {
                match read_lock(store.as_ref(), path).await? {
                    Some(now_held) => Err(Error::Locked {
                        path: path.to_string(),
                        info: Box::new(now_held),
                    }),
                    None => Err(Error::AlreadyExists {
                        path: path.to_string(),
                    }),
                }
            }
            Err(e) => Err(e),
        }
    }

    /// The stale lock this acquisition replaced, if its lease had run out; a caller
    /// should say so, since that holder may have left work half done.
    pub fn replaced(&self) -> Option<&LockInfo> {
        self.replaced.as_ref()
    }

    /// Extends the lease by its length from now. Fails with [`Error::LockMismatch`] if
    /// the lock is no longer this one (its lease ran out and someone took it over, or
    /// it was force-unlocked).
    pub async fn renew(&mut self, clock: &dyn Clock) -> Result<()> {
        let mut info = self.info.clone();
        info.expires = Some(rfc3339(clock.now() + self.lease));
        let data = encode(&self.path, &info)?;
        match self
            .store
            .put(&self.path, data, PutOptions::update(self.version.clone()))
            .await
        {
            Ok(v) => {
                self.version = v;
                self.info = info;
                Ok(())
            }
            Err(Error::Precondition { .. }) | Err(Error::NotFound { .. }) => {
                Err(self.mismatch().await)
            }
            Err(e) => Err(e),
        }
    }

    async fn mismatch(&self) -> Error {
        let found = match self.store.get_opt(&self.path).await {
            Ok(Some(c)) => parse_info(&self.path, &c.data)
                .map(|i| i.id)
                .unwrap_or_else(|_| "an unreadable lock".to_string()),
            Ok(None) => "no lock".to_string(),
            Err(e) => return e,
        };
        Error::LockMismatch {
            path: self.path.clone(),
            expected: self.info.id.clone(),
            found,
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

    /// How long the lease lasts from acquisition and from each [`renew`](Self::renew).
    pub fn lease(&self) -> Duration {
        self.lease
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
        Err(self.mismatch().await)
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

    #[test]
    fn parses_what_it_formats() {
        for secs in [0u64, 951_827_696, 1_735_689_599, 4_102_444_800, 86_399] {
            let t = UNIX_EPOCH + Duration::from_secs(secs);
            assert_eq!(parse_rfc3339(&rfc3339(t)), Some(t), "{secs}");
        }
        let t = UNIX_EPOCH + Duration::from_secs(951_827_696);
        assert_eq!(parse_rfc3339("2000-02-29T13:34:56.250+01:00"), Some(t));
        for bad in [
            "",
            "2000-02-29",
            "2000-13-01T00:00:00Z",
            "2000-02-29T12:34:56",
            "x000-02-29T12:34:56Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[derive(Debug)]
    struct At(std::sync::atomic::AtomicU64);
    impl Clock for At {
        fn now(&self) -> SystemTime {
            UNIX_EPOCH + Duration::from_secs(self.0.load(std::sync::atomic::Ordering::SeqCst))
        }
    }
    impl At {
        fn set(&self, s: u64) {
            self.0.store(s, std::sync::atomic::Ordering::SeqCst);
        }
    }

    fn run<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn a_lease_blocks_until_it_expires_then_is_taken_over() {
        run(async {
            let store: Arc<dyn Store> = Arc::new(crate::MemoryStore::new());
            let clock = At(1_000_000.into());
            let a = LockRequest::new("alice@ci", "update cluster")
                .with_process("ci-7", 42)
                .with_command("kops update cluster --yes")
                .with_lease(Duration::from_secs(60));
            let held = Lock::acquire(store.clone(), "c/lock", &a, &clock)
                .await
                .unwrap();
            assert!(held.replaced().is_none());
            clock.set(1_000_059);
            let b = LockRequest::new("bob", "update cluster");
            let err = Lock::acquire(store.clone(), "c/lock", &b, &clock)
                .await
                .unwrap_err();
            let text = err.to_string();
            for part in [
                "alice@ci",
                "host ci-7",
                "pid 42",
                "`kops update cluster --yes`",
                "lease until",
            ] {
                assert!(text.contains(part), "{text:?} lacks {part:?}");
            }
            clock.set(1_000_060);
            let taken = Lock::acquire(store.clone(), "c/lock", &b, &clock)
                .await
                .unwrap();
            assert_eq!(
                taken.replaced().map(|i| i.holder.as_str()),
                Some("alice@ci")
            );
            // The stale holder can neither renew nor release the lock it lost.
            let mut held = held;
            assert!(matches!(
                held.renew(&clock).await,
                Err(Error::LockMismatch { .. })
            ));
            assert!(matches!(
                held.release().await,
                Err(Error::LockMismatch { .. })
            ));
            taken.release().await.unwrap();
            assert!(read_lock(store.as_ref(), "c/lock").await.unwrap().is_none());
        });
    }

    #[test]
    fn renewal_extends_the_lease() {
        run(async {
            let store: Arc<dyn Store> = Arc::new(crate::MemoryStore::new());
            let clock = At(0.into());
            let a = LockRequest::new("alice", "update").with_lease(Duration::from_secs(10));
            let mut held = Lock::acquire(store.clone(), "c/lock", &a, &clock)
                .await
                .unwrap();
            clock.set(8);
            held.renew(&clock).await.unwrap();
            clock.set(15);
            let b = LockRequest::new("bob", "update");
            assert!(matches!(
                Lock::acquire(store.clone(), "c/lock", &b, &clock).await,
                Err(Error::Locked { .. })
            ));
            held.release().await.unwrap();
        });
    }

    #[test]
    fn a_lock_without_expiry_never_expires() {
        let info: LockInfo = serde_json::from_str(
            r#"{"id":"1","holder":"old","operation":"update","created":"2020-01-01T00:00:00Z","toolVersion":"x"}"#,
        )
        .unwrap();
        assert!(!info.is_expired(SystemTime::now()));
        assert!(info.describe().contains("no lease expiry"));
    }
}
