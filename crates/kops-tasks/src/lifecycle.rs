//! Task lifecycles (what the engine may do with a task's object) and per-kind overrides.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// What the engine may do with the object a task describes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Lifecycle {
    /// Create or update the object so it matches (the normal case).
    #[default]
    Sync,
    /// Skip the task entirely: no lookup, no change.
    Ignore,
    /// Like `Sync`, but a failed lookup (for example missing permissions) is a warning.
    WarnIfInsufficientAccess,
    /// The object must exist and match; it is never changed, and a mismatch is an error.
    ExistsAndValidates,
    /// The object must exist; differences are reported as warnings and not changed.
    ExistsAndWarnIfChanges,
}

impl Lifecycle {
    /// Every lifecycle, in declaration order.
    pub const ALL: [Lifecycle; 5] = [
        Lifecycle::Sync,
        Lifecycle::Ignore,
        Lifecycle::WarnIfInsufficientAccess,
        Lifecycle::ExistsAndValidates,
        Lifecycle::ExistsAndWarnIfChanges,
    ];

    /// The name used in overrides and output.
    pub fn as_str(self) -> &'static str {
        match self {
            Lifecycle::Sync => "Sync",
            Lifecycle::Ignore => "Ignore",
            Lifecycle::WarnIfInsufficientAccess => "WarnIfInsufficientAccess",
            Lifecycle::ExistsAndValidates => "ExistsAndValidates",
            Lifecycle::ExistsAndWarnIfChanges => "ExistsAndWarnIfChanges",
        }
    }
}

impl fmt::Display for Lifecycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Lifecycle {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Lifecycle::ALL
            .into_iter()
            .find(|l| l.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                Error::invalid(
                    "lifecycle",
                    format!(
                        "unknown lifecycle {s:?} (expected one of {})",
                        Lifecycle::ALL.map(Lifecycle::as_str).join(", ")
                    ),
                )
            })
    }
}

/// Per-kind lifecycle overrides, as given to kOps' `--lifecycle-overrides`
/// (`IAMRole=ExistsAndWarnIfChanges,SecurityGroup=Ignore`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LifecycleOverrides(HashMap<String, Lifecycle>);

impl LifecycleOverrides {
    /// No overrides.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an override for a task kind.
    pub fn with(mut self, kind: impl Into<String>, lifecycle: Lifecycle) -> Self {
        self.0.insert(kind.into(), lifecycle);
        self
    }

    /// Parses a comma-separated list of `Kind=Lifecycle`; reports every bad entry at once.
    pub fn parse(s: &str) -> Result<Self> {
        let mut out = LifecycleOverrides::new();
        let mut problems = Vec::new();
        for (i, entry) in s.split(',').map(str::trim).enumerate() {
            if entry.is_empty() {
                continue;
            }
            match entry.split_once('=') {
                Some((kind, lc)) if !kind.trim().is_empty() => match lc.parse::<Lifecycle>() {
                    Ok(l) => {
                        out.0.insert(kind.trim().to_owned(), l);
                    }
                    Err(_) => problems.push(format!("[{i}] {entry:?}: unknown lifecycle {lc:?}")),
                },
                _ => problems.push(format!("[{i}] {entry:?}: expected Kind=Lifecycle")),
            }
        }
        if problems.is_empty() {
            Ok(out)
        } else {
            Err(Error::invalid("lifecycleOverrides", problems.join("; ")))
        }
    }

    /// The override for `kind`, if any.
    pub fn get(&self, kind: &str) -> Option<Lifecycle> {
        self.0.get(kind).copied()
    }

    /// The lifecycle to use for a task of `kind` whose own lifecycle is `declared`.
    pub fn resolve(&self, kind: &str, declared: Lifecycle) -> Lifecycle {
        self.get(kind).unwrap_or(declared)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_overrides() {
        let o = LifecycleOverrides::parse("IAMRole=ExistsAndWarnIfChanges, SecurityGroup=ignore")
            .unwrap();
        assert_eq!(o.get("IAMRole"), Some(Lifecycle::ExistsAndWarnIfChanges));
        assert_eq!(o.get("SecurityGroup"), Some(Lifecycle::Ignore));
        assert_eq!(o.resolve("VPC", Lifecycle::Sync), Lifecycle::Sync);
        assert_eq!(
            o.resolve("IAMRole", Lifecycle::Sync),
            Lifecycle::ExistsAndWarnIfChanges
        );
    }

    #[test]
    fn reports_every_bad_entry() {
        let err = LifecycleOverrides::parse("IAMRole=Nope,Bad,VPC=Sync")
            .unwrap_err()
            .to_string();
        assert!(err.contains("[0]") && err.contains("Nope"), "{err}");
        assert!(
            err.contains("[1]") && err.contains("Kind=Lifecycle"),
            "{err}"
        );
    }
}
