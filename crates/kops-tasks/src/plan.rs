//! The plan: what would happen to every task, as a typed, serialisable value, with a
//! human-readable printer (kOps' dry run) and JSON output.
//!
//! # Exit codes
//!
//! Callers that turn a plan into a process exit status should use [`Plan::exit_code`]:
//! [`EXIT_NO_CHANGES`] (0) when nothing would change, [`EXIT_CHANGES_PENDING`] (2) when
//! something would be created, modified or deleted, and [`EXIT_ERROR`] (1) when planning
//! failed. Drift in objects owned by another phase (lifecycle `ExistsAndWarnIfChanges`) is
//! reported but is not a pending change.

use std::borrow::Cow;
use std::fmt::{self, Write as _};

use serde::{Deserialize, Serialize};

use crate::diff::{FieldChange, Resolver, diff_fields_with};
use crate::error::{Error, Result};
use crate::graph::TaskGraph;
use crate::key::TaskKey;
use crate::lifecycle::Lifecycle;
use crate::task::{Found, OwnedObject};
use crate::value::{Fields, Sensitive, Value};

/// Exit code: nothing to change.
pub const EXIT_NO_CHANGES: i32 = 0;
/// Exit code: planning or applying failed.
pub const EXIT_ERROR: i32 = 1;
/// Exit code: changes are pending.
pub const EXIT_CHANGES_PENDING: i32 = 2;

/// What will happen (or happened) to one task or owned object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Action {
    /// The object does not exist and will be created.
    Create,
    /// The object exists and some fields will be changed.
    Update,
    /// The object exists and matches.
    Unchanged,
    /// The task's lifecycle is `Ignore`.
    Ignored,
    /// The object is owned by another phase and differs (or is missing); it is reported,
    /// not changed.
    Drift,
    /// An owned object no task describes any more will be deleted.
    Delete,
}

impl Action {
    /// Whether this action changes the cloud.
    pub fn is_change(self) -> bool {
        matches!(self, Action::Create | Action::Update | Action::Delete)
    }
}

/// The plan for one task or owned object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PlanItem {
    /// The task (or, for a deletion, the key of the owned object).
    pub key: TaskKey,
    /// What will happen.
    pub action: Action,
    /// Why, in words.
    pub reason: Cow<'static, str>,
    /// The task's effective lifecycle.
    #[serde(default, skip_serializing_if = "is_sync")]
    pub lifecycle: Lifecycle,
    /// Changed fields (on create: every non-null expected field, with no old value).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<FieldChange>,
    /// For deletions: the cloud ID of the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// For deletions: only performed when deferred deletions are allowed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deferred: bool,
}

fn is_sync(l: &Lifecycle) -> bool {
    *l == Lifecycle::Sync
}

impl PlanItem {
    fn new(key: TaskKey, action: Action, reason: impl Into<Cow<'static, str>>) -> Self {
        PlanItem {
            key,
            action,
            reason: reason.into(),
            lifecycle: Lifecycle::Sync,
            changes: Vec::new(),
            id: None,
            deferred: false,
        }
    }
}

/// Counts of each action in a plan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Summary {
    /// Objects to create.
    pub create: usize,
    /// Objects to modify.
    pub update: usize,
    /// Objects to delete.
    pub delete: usize,
    /// Objects that match.
    pub unchanged: usize,
    /// Tasks skipped by lifecycle `Ignore`.
    pub ignored: usize,
    /// Objects from another phase that differ.
    pub drift: usize,
}

/// The plan for a whole graph: one item per task (sorted by key) plus deletions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Plan {
    /// Every item, sorted by key (deletions last).
    pub items: Vec<PlanItem>,
    /// Warnings raised while planning (e.g. lookups skipped for lack of access).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Plan {
    /// A plan from items (sorted here: tasks by key, then deletions by key).
    pub fn new(mut items: Vec<PlanItem>, warnings: Vec<String>) -> Self {
        let order = |a: &PlanItem, b: &PlanItem| {
            (a.action == Action::Delete, &a.key).cmp(&(b.action == Action::Delete, &b.key))
        };
        if !items.is_sorted_by(|a, b| order(a, b).is_le()) {
            items.sort_by(order);
        }
        Plan { items, warnings }
    }

    /// Adds a deletion for every owned object whose key no task in `graph` has.
    pub fn add_orphans<C: ?Sized + Sync>(&mut self, graph: &TaskGraph<C>, owned: &[OwnedObject]) {
        for o in owned.iter().filter(|o| !graph.contains(&o.key)) {
            let mut item = PlanItem::new(
                o.key.clone(),
                Action::Delete,
                "owned by the cluster but no longer described by any task",
            );
            item.id = Some(o.id.clone());
            item.deferred = o.deferred;
            if !o.description.is_empty() {
                item.reason = format!("{}; {}", o.description, item.reason).into();
            }
            self.items.push(item);
        }
        let items = std::mem::take(&mut self.items);
        *self = Plan::new(items, std::mem::take(&mut self.warnings));
    }

    /// Counts of each action.
    pub fn summary(&self) -> Summary {
        let mut s = Summary::default();
        for i in &self.items {
            match i.action {
                Action::Create => s.create += 1,
                Action::Update => s.update += 1,
                Action::Delete => s.delete += 1,
                Action::Unchanged => s.unchanged += 1,
                Action::Ignored => s.ignored += 1,
                Action::Drift => s.drift += 1,
            }
        }
        s
    }

    /// Whether anything would be created, modified or deleted.
    pub fn has_changes(&self) -> bool {
        self.items.iter().any(|i| i.action.is_change())
    }

    /// The process exit code for this plan: [`EXIT_CHANGES_PENDING`] or [`EXIT_NO_CHANGES`].
    pub fn exit_code(&self) -> i32 {
        if self.has_changes() {
            EXIT_CHANGES_PENDING
        } else {
            EXIT_NO_CHANGES
        }
    }

    /// The items that change something.
    pub fn changes(&self) -> impl Iterator<Item = &PlanItem> {
        self.items.iter().filter(|i| i.action.is_change())
    }

    /// The plan as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        // Serialising these plain data types cannot fail (string keys, no non-finite floats).
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The human-readable report (same as `Display`).
    pub fn render_text(&self) -> String {
        self.to_string()
    }
}

/// Decides what to do with one task given what was found.
pub(crate) fn evaluate<R: Resolver + ?Sized>(
    key: &TaskKey,
    lifecycle: Lifecycle,
    expected: &Fields,
    found: Option<&Found>,
    resolver: &R,
) -> Result<PlanItem> {
    if lifecycle == Lifecycle::Ignore {
        return Ok(ignored(key));
    }
    let changes = match found.and_then(Found::changes) {
        Some(own) => own.to_vec(),
        None => diff_fields_with(expected, found.map(|f| &f.fields), resolver),
    };
    decide(key, lifecycle, found.is_some(), changes)
}

/// The item of a task whose lookup found an object that the task compared itself
/// ([`Found::compared`]): `changes` are its differences.
pub(crate) fn evaluate_compared(
    key: &TaskKey,
    lifecycle: Lifecycle,
    changes: Vec<FieldChange>,
) -> Result<PlanItem> {
    if lifecycle == Lifecycle::Ignore {
        return Ok(ignored(key));
    }
    decide(key, lifecycle, true, changes)
}

/// The item of a task whose lifecycle is `Ignore`.
fn ignored(key: &TaskKey) -> PlanItem {
    let mut item = PlanItem::new(key.clone(), Action::Ignored, "lifecycle is Ignore");
    item.lifecycle = Lifecycle::Ignore;
    item
}

/// The item of a (not ignored) task, given whether its object was found and the changes
/// its fields need.
fn decide(
    key: &TaskKey,
    lifecycle: Lifecycle,
    found: bool,
    changes: Vec<FieldChange>,
) -> Result<PlanItem> {
    let mut item = PlanItem::new(key.clone(), Action::Unchanged, "");
    item.lifecycle = lifecycle;
    match (found, lifecycle) {
        (false, Lifecycle::ExistsAndValidates) => {
            return Err(Error::Lifecycle {
                key: key.clone(),
                message: "must already exist (lifecycle ExistsAndValidates) but was not found"
                    .into(),
            });
        }
        (false, Lifecycle::ExistsAndWarnIfChanges) => {
            item.action = Action::Drift;
            item.reason = "expected to exist (lifecycle ExistsAndWarnIfChanges) but was not found; not created".into();
        }
        (false, _) => {
            item.action = Action::Create;
            item.reason = "not found".into();
        }
        (true, _) if changes.is_empty() => {
            item.reason = "matches".into();
        }
        (true, Lifecycle::ExistsAndValidates) => {
            let names: Vec<&str> = changes.iter().map(|c| c.field.as_str()).collect();
            return Err(Error::Lifecycle {
                key: key.clone(),
                message: format!(
                    "object from another phase does not match (lifecycle ExistsAndValidates); differing fields: {}",
                    names.join(", ")
                ),
            });
        }
        (true, Lifecycle::ExistsAndWarnIfChanges) => {
            item.action = Action::Drift;
            item.reason = format!(
                "{} field(s) differ; not changed (lifecycle ExistsAndWarnIfChanges)",
                changes.len()
            )
            .into();
        }
        (true, _) => {
            item.action = Action::Update;
            item.reason = differ_reason(changes.len());
        }
    }
    item.changes = changes;
    Ok(item)
}

/// The reason of an update: `N field(s) differ` (static for the usual small counts).
fn differ_reason(n: usize) -> Cow<'static, str> {
    const SMALL: [&str; 8] = [
        "0 field(s) differ",
        "1 field(s) differ",
        "2 field(s) differ",
        "3 field(s) differ",
        "4 field(s) differ",
        "5 field(s) differ",
        "6 field(s) differ",
        "7 field(s) differ",
    ];
    match SMALL.get(n) {
        Some(s) => Cow::Borrowed(s),
        None => format!("{n} field(s) differ").into(),
    }
}

const FIELD_WIDTH: usize = 20;

fn write_value_block(out: &mut String, text: &str) {
    for line in text.lines() {
        let _ = writeln!(out, "      {:FIELD_WIDTH$}    {line}", "");
    }
}

fn is_multiline(v: &Value) -> bool {
    matches!(v, Value::Text(t) | Value::String(t) if t.contains('\n'))
}

fn write_change(out: &mut String, c: &FieldChange, create: bool) {
    let name = &c.field;
    if create {
        if is_multiline(&c.new) {
            let lines = c.new.to_string().lines().count();
            let _ = writeln!(out, "      {name:FIELD_WIDTH$}  ({lines} lines)");
            write_value_block(out, &c.new.to_string());
        } else {
            let _ = writeln!(out, "      {name:FIELD_WIDTH$}  {}", c.new);
        }
        return;
    }
    if let Some(diff) = &c.diff {
        let _ = writeln!(out, "      {name:FIELD_WIDTH$}  (text changed)");
        write_value_block(out, diff);
        return;
    }
    let old = c
        .old
        .as_ref()
        .map_or_else(|| "<none>".to_owned(), ToString::to_string);
    if let (Some(Value::Map(before)), Value::Map(after)) = (&c.old, &c.new) {
        let _ = writeln!(out, "      {name:FIELD_WIDTH$}  (map changed)");
        let mut lines = String::new();
        for (k, v) in after.iter() {
            match before.get(k) {
                None => {
                    let _ = writeln!(lines, "+ {k}: {v}");
                }
                Some(b) if b != v => {
                    let _ = writeln!(lines, "~ {k}: {b} -> {v}");
                }
                Some(_) => {}
            }
        }
        for (k, b) in before.iter().filter(|(k, _)| !after.contains_key(k)) {
            let _ = writeln!(lines, "- {k}: {b}");
        }
        write_value_block(out, &lines);
        return;
    }
    if matches!(c.new, Value::Sensitive(_)) {
        let _ = writeln!(
            out,
            "      {name:FIELD_WIDTH$}  {} (changed)",
            Sensitive::MASK
        );
    } else if is_multiline(&c.new) || c.old.as_ref().is_some_and(is_multiline) {
        let _ = writeln!(out, "      {name:FIELD_WIDTH$}  (text changed)");
        write_value_block(out, &crate::diff::text_diff(&old, &c.new.to_string()));
    } else {
        let _ = writeln!(out, "      {name:FIELD_WIDTH$}  {old} -> {}", c.new);
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        let section = |out: &mut String, title: &str, pred: &dyn Fn(&PlanItem) -> bool| {
            let mut any = false;
            for item in self.items.iter().filter(|i| pred(i)) {
                if !any {
                    let _ = writeln!(out, "{title}");
                    any = true;
                }
                match item.action {
                    Action::Create => {
                        let _ = writeln!(out, "  {}", item.key);
                    }
                    Action::Delete => {
                        let _ =
                            writeln!(out, "  {}  {}", item.key, item.id.as_deref().unwrap_or(""));
                        let _ = writeln!(out, "      reason: {}", item.reason);
                    }
                    _ => {
                        let _ = writeln!(out, "  {}  ({})", item.key, item.reason);
                    }
                }
                for c in &item.changes {
                    write_change(out, c, c.old.is_none() && item.action != Action::Update);
                }
                out.push('\n');
            }
        };
        section(&mut out, "Will create resources:", &|i| {
            i.action == Action::Create
        });
        section(&mut out, "Will modify resources:", &|i| {
            i.action == Action::Update
        });
        section(&mut out, "Will delete resources:", &|i| {
            i.action == Action::Delete && !i.deferred
        });
        section(
            &mut out,
            "Will delete only when deferred deletions are allowed (--prune):",
            &|i| i.action == Action::Delete && i.deferred,
        );
        section(
            &mut out,
            "Objects from another phase differ and will not be changed:",
            &|i| i.action == Action::Drift,
        );
        if !self.warnings.is_empty() {
            out.push_str("Warnings:\n");
            for w in &self.warnings {
                let _ = writeln!(out, "  {w}");
            }
            out.push('\n');
        }
        let s = self.summary();
        let _ = write!(
            out,
            "Plan: {} to create, {} to modify, {} to delete, {} unchanged",
            s.create, s.update, s.delete, s.unchanged
        );
        if s.ignored > 0 {
            let _ = write!(out, ", {} ignored", s.ignored);
        }
        if s.drift > 0 {
            let _ = write!(out, ", {} drifted (not changed)", s.drift);
        }
        out.push_str(".\n");
        if !self.has_changes() {
            out.push_str("No changes need to be applied.\n");
        }
        f.write_str(&out)
    }
}
