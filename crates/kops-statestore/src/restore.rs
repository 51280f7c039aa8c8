//! A cluster's state put back as it was at a point in time, from the object versions a
//! versioned bucket keeps: objects deleted since come back, objects changed since get
//! their old content as a new version, objects created since are deleted (a delete
//! marker). Everything a restore does is itself versions, so it can be undone the same
//! way.
//!
//! [`plan_restore`] decides from the versions alone; [`crate::Registry::restore_plan`]
//! reads them for a cluster and [`crate::Registry::apply_restore`] carries a plan out.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};
use crate::store::ObjectVersion;

/// What a restore does to one object.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RestoreAction {
    /// Write the content of version `version_id` (made at `modified_ms`) as the current.
    Put {
        /// The object.
        path: String,
        /// The version whose content comes back.
        version_id: String,
        /// When that version was written, Unix milliseconds.
        modified_ms: i64,
    },
    /// Delete the object: it did not exist at the time.
    Delete {
        /// The object.
        path: String,
    },
}

impl RestoreAction {
    /// The object it concerns.
    pub fn path(&self) -> &str {
        match self {
            RestoreAction::Put { path, .. } | RestoreAction::Delete { path } => path,
        }
    }
}

/// The actions that put every object back as it was at `at_ms`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RestorePlan {
    /// The time restored to, Unix milliseconds.
    pub at_ms: i64,
    /// What changes, by path.
    pub actions: Vec<RestoreAction>,
    /// How many objects already are as they were.
    pub unchanged: usize,
}

/// Unix milliseconds of `t`.
pub fn unix_ms(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i64,
        Err(e) => -(e.duration().as_millis() as i64),
    }
}

/// `ms` as RFC 3339 UTC with milliseconds (`2026-12-07T10:00:00.123Z`).
pub fn format_ms(ms: i64) -> String {
    let t = UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64);
    let secs = crate::lock::rfc3339(t);
    format!("{}.{:03}Z", secs.trim_end_matches('Z'), ms.rem_euclid(1000))
}

/// The plan that puts the objects of `versions` (every version and delete marker of
/// each, as [`crate::Store::list_versions`] lists them) back as they were at `at_ms`,
/// leaving out the paths `skip` names (the cluster's lock). An object's state at a time
/// is its newest version written at or before it; none, or a delete marker, means it
/// did not exist. Among versions of equal times the later in `versions` is the newer
/// (the order [`crate::Store::list_versions`] gives).
///
/// Errors when there are no versions, or when `at_ms` is before the oldest one: the
/// bucket keeps no state from that time (it was not versioned yet, or the versions
/// expired).
pub fn plan_restore(
    versions: &[ObjectVersion],
    at_ms: i64,
    skip: &dyn Fn(&str) -> bool,
) -> Result<RestorePlan> {
    let oldest = versions
        .iter()
        .map(|v| v.modified_ms)
        .min()
        .ok_or_else(|| Error::Invalid {
            what: "restore".into(),
            reason: "the bucket keeps no object versions here (is versioning on?)".into(),
        })?;
    if at_ms < oldest {
        return Err(Error::Invalid {
            what: "--to".into(),
            reason: format!(
                "{} is before the oldest object version here ({}): the bucket keeps no state from that time (it was not versioned yet, or its versions expired)",
                format_ms(at_ms),
                format_ms(oldest)
            ),
        });
    }
    let mut by_path: BTreeMap<&str, Vec<&ObjectVersion>> = BTreeMap::new();
    for v in versions {
        if !skip(&v.path) {
            by_path.entry(&v.path).or_default().push(v);
        }
    }
    let mut plan = RestorePlan {
        at_ms,
        actions: Vec::new(),
        unchanged: 0,
    };
    for (path, mut vs) in by_path {
        vs.sort_by_key(|v| v.modified_ms);
        let then = vs.iter().rev().find(|v| v.modified_ms <= at_ms);
        let now = vs.iter().find(|v| v.latest).or(vs.last());
        let exists_now = now.is_some_and(|v| !v.deleted);
        match then.filter(|v| !v.deleted) {
            None if exists_now => plan.actions.push(RestoreAction::Delete {
                path: path.to_owned(),
            }),
            None => plan.unchanged += 1,
            Some(t) if now.is_some_and(|n| n.version_id == t.version_id) => plan.unchanged += 1,
            Some(t) => plan.actions.push(RestoreAction::Put {
                path: path.to_owned(),
                version_id: t.version_id.clone(),
                modified_ms: t.modified_ms,
            }),
        }
    }
    Ok(plan)
}

/// The distinct times of `versions`, newest first, each with the paths written or
/// deleted then: the points a restore can return to.
pub fn restore_points(versions: &[ObjectVersion]) -> Vec<(i64, Vec<String>)> {
    let mut by_time: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for v in versions {
        let label = if v.deleted {
            format!("{} (deleted)", v.path)
        } else {
            v.path.clone()
        };
        by_time.entry(v.modified_ms).or_default().push(label);
    }
    by_time.into_iter().rev().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(path: &str, id: &str, ms: i64) -> ObjectVersion {
        ObjectVersion::new(path, id, ms)
    }

    #[test]
    fn each_object_returns_to_its_newest_version_before_the_time() {
        let versions = vec![
            // Changed after the time: its older content comes back.
            v("c/config", "1", 1000),
            v("c/config", "2", 3000).latest(),
            // Deleted after the time: it comes back.
            v("c/ig/a", "1", 1000),
            v("c/ig/a", "2", 4000).deleted().latest(),
            // Created after the time: deleted.
            v("c/ig/b", "1", 5000).latest(),
            // Unchanged since.
            v("c/keyset", "1", 500).latest(),
            // Deleted before the time and still deleted.
            v("c/old", "1", 100),
            v("c/old", "2", 200).deleted().latest(),
            // The lock is left alone.
            v("c/lock", "1", 6000).latest(),
        ];
        let plan = plan_restore(&versions, 2000, &|p| p == "c/lock").unwrap();
        assert_eq!(
            plan.actions,
            [
                RestoreAction::Put {
                    path: "c/config".into(),
                    version_id: "1".into(),
                    modified_ms: 1000
                },
                RestoreAction::Put {
                    path: "c/ig/a".into(),
                    version_id: "1".into(),
                    modified_ms: 1000
                },
                RestoreAction::Delete {
                    path: "c/ig/b".into()
                },
            ]
        );
        assert_eq!(plan.unchanged, 2);
        // Restoring to now changes nothing.
        let now = plan_restore(&versions, 10_000, &|p| p == "c/lock").unwrap();
        assert!(now.actions.is_empty(), "{now:?}");
    }

    #[test]
    fn of_equal_times_the_later_listed_is_the_newer() {
        // Deleted, then written again, in the same second (S3's times are whole seconds).
        let versions = vec![
            v("c/config", "1", 1000),
            v("c/config", "2", 2000).deleted(),
            v("c/config", "3", 2000),
            v("c/config", "4", 3000).deleted().latest(),
        ];
        let plan = plan_restore(&versions, 2500, &|_| false).unwrap();
        assert_eq!(
            plan.actions,
            [RestoreAction::Put {
                path: "c/config".into(),
                version_id: "3".into(),
                modified_ms: 2000
            }]
        );
    }

    #[test]
    fn a_time_before_the_oldest_version_is_refused() {
        let versions = vec![v("c/config", "1", 1000).latest()];
        let e = plan_restore(&versions, 999, &|_| false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("before the oldest object version"), "{e}");
        assert!(plan_restore(&[], 999, &|_| false).is_err());
    }

    #[test]
    fn times_print_with_milliseconds() {
        assert_eq!(format_ms(1_765_101_600_123), "2025-12-07T10:00:00.123Z");
        let points = restore_points(&[v("a", "1", 1), v("b", "1", 1), v("a", "2", 2).deleted()]);
        assert_eq!(
            points,
            [
                (2, vec!["a (deleted)".to_string()]),
                (1, vec!["a".into(), "b".into()])
            ]
        );
    }
}
