//! The backend conformance suite (feature `conformance`).
//!
//! Every function takes stores rooted at a fresh, empty location and panics
//! (via `assert!`) when the backend misbehaves. Where two stores are taken
//! they must be independent instances (separate clients) over the same
//! location, so that exclusion is shown between clients, not inside one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant, UNIX_EPOCH};

use bytes::Bytes;

use crate::error::Error;
use crate::lock::{Clock, Lock, LockRequest, force_unlock, read_lock};
use crate::store::{DeleteOptions, PutMode, PutOptions, Store, StoreExt, Version};

/// A clock stuck at a fixed instant, for predictable lock timestamps.
#[derive(Debug, Clone, Copy)]
pub struct FixedClock(pub Duration);

impl Clock for FixedClock {
    fn now(&self) -> std::time::SystemTime {
        UNIX_EPOCH + self.0
    }
}

/// Write, read back, overwrite, read back; versions track content changes.
pub async fn round_trip(store: &dyn Store) {
    let v1 = store
        .put(
            "a/config",
            Bytes::from_static(b"one"),
            PutOptions::default(),
        )
        .await
        .unwrap();
    let got = store.get("a/config").await.unwrap();
    assert_eq!(got.data, Bytes::from_static(b"one"));
    assert_eq!(got.version, v1, "get must return the version put returned");
    let again = store.get("a/config").await.unwrap();
    assert_eq!(again.version, v1, "an unchanged object keeps its version");

    let v2 = store
        .put(
            "a/config",
            Bytes::from_static(b"two"),
            PutOptions::overwrite(),
        )
        .await
        .unwrap();
    assert_ne!(v1, v2, "a changed object gets a new version");
    let got = store.get("a/config").await.unwrap();
    assert_eq!(got.data, Bytes::from_static(b"two"));
    assert_eq!(got.version, v2);

    // Binary content and an empty object survive.
    let bin: Vec<u8> = (0..=255u8).collect();
    store
        .put("a/bin", Bytes::from(bin.clone()), PutOptions::default())
        .await
        .unwrap();
    assert_eq!(store.get("a/bin").await.unwrap().data, Bytes::from(bin));
    store
        .put("a/empty", Bytes::new(), PutOptions::default())
        .await
        .unwrap();
    assert!(store.get("a/empty").await.unwrap().data.is_empty());

    // Names with spaces, unicode and URL-special characters.
    for odd in ["a/with space/ü-é.txt", "a/q?x=1&y#z", "a/plus+percent%20"] {
        store
            .put(
                odd,
                Bytes::from(odd.as_bytes().to_vec()),
                PutOptions::create(),
            )
            .await
            .unwrap();
        assert_eq!(store.get(odd).await.unwrap().data, odd.as_bytes(), "{odd}");
        assert!(
            store
                .list("a/")
                .await
                .unwrap()
                .iter()
                .any(|o| o.path == odd),
            "{odd} not listed"
        );
        store.delete(odd).await.unwrap();
        assert!(store.get(odd).await.unwrap_err().is_not_found(), "{odd}");
    }

    let missing = store.get("a/missing").await.unwrap_err();
    assert!(missing.is_not_found(), "missing object gave {missing:?}");
    assert!(
        store.get("a//bad").await.is_err(),
        "malformed paths are refused"
    );
}

/// Listing returns exactly the objects under a string prefix, sorted.
pub async fn list_by_prefix(store: &dyn Store) {
    for p in [
        "c1/config",
        "c1/instancegroup/nodes",
        "c1/instancegroup/master",
        "c10/config",
        "c2/config",
        "top",
    ] {
        store
            .put(p, Bytes::from(p.as_bytes().to_vec()), PutOptions::default())
            .await
            .unwrap();
    }
    let paths =
        |v: Vec<crate::store::ObjectMeta>| v.into_iter().map(|o| o.path).collect::<Vec<_>>();
    assert_eq!(
        paths(store.list("c1/").await.unwrap()),
        [
            "c1/config",
            "c1/instancegroup/master",
            "c1/instancegroup/nodes"
        ]
    );
    assert_eq!(
        paths(store.list("c1/instancegroup/").await.unwrap()),
        ["c1/instancegroup/master", "c1/instancegroup/nodes"]
    );
    assert_eq!(
        paths(store.list("c1").await.unwrap()),
        [
            "c1/config",
            "c1/instancegroup/master",
            "c1/instancegroup/nodes",
            "c10/config"
        ]
    );
    let all = store.list("").await.unwrap();
    assert_eq!(all.len(), 6);
    let top = all.iter().find(|o| o.path == "top").unwrap();
    assert_eq!(top.size, 3);
    assert!(store.list("nothing/").await.unwrap().is_empty());
}

/// Create-if-absent succeeds once and then reports [`Error::AlreadyExists`]
/// without touching the object.
pub async fn create_conflict(store: &dyn Store) {
    let v = store
        .put("k", Bytes::from_static(b"first"), PutOptions::create())
        .await
        .unwrap();
    let err = store
        .put("k", Bytes::from_static(b"second"), PutOptions::create())
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::AlreadyExists { ref path } if path == "k"),
        "second create gave {err:?}"
    );
    let got = store.get("k").await.unwrap();
    assert_eq!(got.data, Bytes::from_static(b"first"));
    assert_eq!(got.version, v);
}

/// Update-if-version-matches succeeds with the current version and fails
/// with [`Error::Precondition`] with a stale one or on a missing object.
pub async fn update_precondition(store: &dyn Store) {
    let v1 = store
        .put("k", Bytes::from_static(b"1"), PutOptions::create())
        .await
        .unwrap();
    let v2 = store
        .put(
            "k",
            Bytes::from_static(b"2"),
            PutOptions::update(v1.clone()),
        )
        .await
        .unwrap();
    let err = store
        .put(
            "k",
            Bytes::from_static(b"stale"),
            PutOptions::update(v1.clone()),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Precondition { ref path, .. } if path == "k"),
        "stale update gave {err:?}"
    );
    assert!(err.is_conflict());
    let got = store.get("k").await.unwrap();
    assert_eq!(got.data, Bytes::from_static(b"2"));
    assert_eq!(got.version, v2);

    let err = store
        .put(
            "missing",
            Bytes::from_static(b"x"),
            PutOptions::default().with_mode(PutMode::UpdateIfVersionMatches(v2.clone())),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Precondition { .. }),
        "update of a missing object gave {err:?}"
    );
    assert!(store.get("missing").await.unwrap_err().is_not_found());
    let bogus = Version::new("0");
    assert!(
        store
            .put("k", Bytes::from_static(b"x"), PutOptions::update(bogus))
            .await
            .unwrap_err()
            .is_conflict()
    );
}

/// Delete removes one object, leaves its neighbours, and is idempotent.
pub async fn delete(store: &dyn Store) {
    for p in ["d/a", "d/b", "d/sub/c"] {
        store
            .put(p, Bytes::from_static(b"x"), PutOptions::default())
            .await
            .unwrap();
    }
    store.delete("d/a").await.unwrap();
    assert!(store.get("d/a").await.unwrap_err().is_not_found());
    assert_eq!(
        store.get("d/b").await.unwrap().data,
        Bytes::from_static(b"x")
    );
    store.delete("d/a").await.unwrap();
    store.delete("d/sub/c").await.unwrap();
    let left: Vec<_> = store
        .list("d/")
        .await
        .unwrap()
        .into_iter()
        .map(|o| o.path)
        .collect();
    assert_eq!(left, ["d/b"]);
    // After delete, create-if-absent works again.
    store
        .put("d/a", Bytes::from_static(b"y"), PutOptions::create())
        .await
        .unwrap();
    assert_eq!(store.delete_prefix("d/").await.unwrap(), 2);
    assert!(store.list("d/").await.unwrap().is_empty());
}

/// A conditional delete removes the object only at the expected version.
pub async fn conditional_delete(store: &dyn Store) {
    let v1 = store
        .put("k", Bytes::from_static(b"1"), PutOptions::create())
        .await
        .unwrap();
    let v2 = store
        .put(
            "k",
            Bytes::from_static(b"2"),
            PutOptions::update(v1.clone()),
        )
        .await
        .unwrap();
    let err = store
        .delete_opts("k", DeleteOptions::if_version(v1))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Precondition { ref path, .. } if path == "k"),
        "stale delete gave {err:?}"
    );
    assert_eq!(store.get("k").await.unwrap().version, v2);
    store
        .delete_opts("k", DeleteOptions::if_version(v2.clone()))
        .await
        .unwrap();
    assert!(store.get("k").await.unwrap_err().is_not_found());
    let err = store
        .delete_opts("k", DeleteOptions::if_version(v2))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Precondition { .. }),
        "conditional delete of a missing object gave {err:?}"
    );
}

/// Two independent store instances contend for one lock: only one holds it,
/// the other is told who does; after release the other can take it.
pub async fn lock_exclusion(a: Arc<dyn Store>, b: Arc<dyn Store>) {
    let clock = FixedClock(Duration::from_secs(1_700_000_000));
    let held = Lock::acquire(
        a.clone(),
        "c1/lock",
        &LockRequest::new("alice@host-a", "update cluster").with_tool_version("test 1.0"),
        &clock,
    )
    .await
    .unwrap();
    let err = Lock::acquire(
        b.clone(),
        "c1/lock",
        &LockRequest::new("bob@host-b", "delete cluster"),
        &clock,
    )
    .await
    .unwrap_err();
    match &err {
        Error::Locked { info, .. } => {
            assert_eq!(info.holder, "alice@host-a");
            assert_eq!(info.operation, "update cluster");
            assert_eq!(info.created, "2023-11-14T22:13:20Z");
            assert_eq!(info.tool_version, "test 1.0");
            assert_eq!(&info.id, &held.info().id);
        }
        other => panic!("second acquire gave {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("alice@host-a") && msg.contains("update cluster"),
        "{msg}"
    );
    assert_eq!(
        read_lock(b.as_ref(), "c1/lock").await.unwrap().as_ref(),
        Some(held.info())
    );

    held.release().await.unwrap();
    assert!(read_lock(a.as_ref(), "c1/lock").await.unwrap().is_none());
    let bobs = Lock::acquire(
        b.clone(),
        "c1/lock",
        &LockRequest::new("bob@host-b", "delete cluster"),
        &clock,
    )
    .await
    .unwrap();
    assert!(
        Lock::acquire(
            a.clone(),
            "c1/lock",
            &LockRequest::new("alice", "x"),
            &clock
        )
        .await
        .is_err()
    );
    bobs.release().await.unwrap();

    // Many contenders at once through both instances: exactly one wins.
    let mut tasks = Vec::new();
    for i in 0..8 {
        let s = if i % 2 == 0 { a.clone() } else { b.clone() };
        tasks.push(tokio::spawn(async move {
            Lock::acquire(
                s,
                "c2/lock",
                &LockRequest::new(format!("w{i}"), "race"),
                &clock,
            )
            .await
        }));
    }
    let mut winners = Vec::new();
    for t in tasks {
        match t.await.unwrap() {
            Ok(l) => winners.push(l),
            Err(e) => assert!(
                matches!(e, Error::Locked { .. } | Error::AlreadyExists { .. }),
                "loser got {e:?}"
            ),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one contender may win the lock");
    for w in winners {
        w.release().await.unwrap();
    }
}

/// A lock left behind is removed by force-unlock with its id (not with
/// another id), and the original holder's release then fails.
pub async fn force_unlock_lock(a: Arc<dyn Store>, b: Arc<dyn Store>) {
    let clock = FixedClock(Duration::from_secs(0));
    let stale = Lock::acquire(
        a.clone(),
        "c/lock",
        &LockRequest::new("crashed", "update"),
        &clock,
    )
    .await
    .unwrap();
    let id = stale.info().id.clone();
    let err = force_unlock(b.as_ref(), "c/lock", "not-the-id")
        .await
        .unwrap_err();
    assert!(matches!(err, Error::LockMismatch { .. }), "{err:?}");
    assert!(read_lock(b.as_ref(), "c/lock").await.unwrap().is_some());

    let removed = force_unlock(b.as_ref(), "c/lock", &id).await.unwrap();
    assert_eq!(removed.holder, "crashed");
    assert!(read_lock(a.as_ref(), "c/lock").await.unwrap().is_none());

    let fresh = Lock::acquire(
        b.clone(),
        "c/lock",
        &LockRequest::new("new", "update"),
        &clock,
    )
    .await
    .unwrap();
    // The crashed holder comes back: its release must not remove the new lock.
    let err = stale.release().await.unwrap_err();
    assert!(matches!(err, Error::LockMismatch { .. }), "{err:?}");
    assert_eq!(
        read_lock(a.as_ref(), "c/lock")
            .await
            .unwrap()
            .map(|i| i.holder),
        Some("new".to_string())
    );
    fresh.release().await.unwrap();
    let err = force_unlock(a.as_ref(), "c/lock", &id).await.unwrap_err();
    assert!(matches!(err, Error::LockMismatch { .. }), "{err:?}");
}

/// What [`race`] measured.
#[derive(Debug, Clone, Copy)]
pub struct RaceReport {
    /// Successful increments (must be `2 * cycles`).
    pub final_value: u64,
    /// Conditional writes that lost and were retried.
    pub conflicts: u64,
    /// Wall time of the whole race.
    pub elapsed: Duration,
}

async fn writer(store: Arc<dyn Store>, path: &'static str, cycles: u64) -> u64 {
    let mut conflicts = 0;
    for _ in 0..cycles {
        loop {
            let current = store.get(path).await.unwrap();
            let n: u64 = std::str::from_utf8(&current.data)
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            // Let the other writer run between our read and our write, so
            // even a backend whose calls never block sees contention.
            tokio::task::yield_now().await;
            match store
                .put(
                    path,
                    Bytes::from((n + 1).to_string()),
                    PutOptions::update(current.version),
                )
                .await
            {
                Ok(_) => break,
                Err(e) if e.is_conflict() => conflicts += 1,
                Err(e) => panic!("writer failed: {e:?}"),
            }
        }
    }
    conflicts
}

/// Two writers, each doing `cycles` read-modify-write increments of one
/// counter through its own store instance; no increment may be lost.
pub async fn race(a: Arc<dyn Store>, b: Arc<dyn Store>, cycles: u64) -> RaceReport {
    a.put("counter", Bytes::from_static(b"0"), PutOptions::create())
        .await
        .unwrap();
    let start = Instant::now();
    let wa = tokio::spawn(writer(a.clone(), "counter", cycles));
    let wb = tokio::spawn(writer(b.clone(), "counter", cycles));
    let conflicts = wa.await.unwrap() + wb.await.unwrap();
    let elapsed = start.elapsed();
    let data = a.get("counter").await.unwrap().data;
    let final_value: u64 = std::str::from_utf8(&data).unwrap().parse().unwrap();
    assert_eq!(
        final_value,
        2 * cycles,
        "lost {} updates",
        2 * cycles - final_value
    );
    RaceReport {
        final_value,
        conflicts,
        elapsed,
    }
}

/// Every single-store case, in order, each under its own sub-prefix of a
/// fresh root (`store` must be empty).
pub async fn run_single(store: Arc<dyn Store>) {
    let sub = |p: &str| -> Arc<dyn Store> {
        Arc::new(crate::PrefixStore::new(store.clone(), p).unwrap())
    };
    round_trip(sub("round_trip").as_ref()).await;
    list_by_prefix(sub("list").as_ref()).await;
    create_conflict(sub("create").as_ref()).await;
    update_precondition(sub("update").as_ref()).await;
    delete(sub("delete").as_ref()).await;
    conditional_delete(sub("cond_delete").as_ref()).await;
}
