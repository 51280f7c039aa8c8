//! EventBridge rules and targets (default event bus).

use std::collections::{BTreeMap, BTreeSet};

use crate::MockAws;
use crate::error::{Error, Result};
use crate::filter::Tags;

/// Parameters of `PutRule`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PutRule {
    /// Name.
    pub name: String,
    /// Event pattern (JSON).
    pub event_pattern: Option<String>,
    /// Schedule expression.
    pub schedule_expression: Option<String>,
    /// `ENABLED` (default) or `DISABLED`.
    pub state: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Tags (applied on creation only, as on AWS).
    pub tags: Tags,
}

/// A rule.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rule {
    /// Name.
    pub name: String,
    /// ARN.
    pub arn: String,
    /// Event pattern.
    pub event_pattern: Option<String>,
    /// Schedule.
    pub schedule_expression: Option<String>,
    /// State.
    pub state: String,
    /// Description.
    pub description: Option<String>,
    /// Tags.
    pub tags: Tags,
}

/// A rule target.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Target {
    /// Id within the rule.
    pub id: String,
    /// Target ARN.
    pub arn: String,
    /// Constant input.
    pub input: Option<String>,
}

#[derive(Debug, Default)]
pub(crate) struct EventsState {
    rules: BTreeMap<String, Rule>,
    targets: BTreeMap<String, Vec<Target>>,
}

impl EventsState {
    pub(crate) fn collect_ids(&self, out: &mut BTreeSet<String>) {
        out.extend(self.rules.values().map(|r| r.arn.clone()));
    }
}

impl MockAws {
    /// The smallest `target-N` not used by `rule` (no API call).
    pub(crate) fn fresh_target_id(&self, rule: &str) -> String {
        let st = crate::lock(&self.inner.state);
        let used = st.events.targets.get(rule);
        (1..)
            .map(|n| format!("target-{n}"))
            .find(|id| !used.is_some_and(|t| t.iter().any(|x| &x.id == id)))
            .unwrap_or_default()
    }

    /// `PutRule`: creates or updates; returns the ARN.
    pub fn put_rule(&self, req: PutRule) -> Result<String> {
        let (partition, region, account) = (
            self.options().partition.clone(),
            self.options().region.clone(),
            self.options().account_id.clone(),
        );
        self.call("events:PutRule", |st, op| {
            if req.name.is_empty() || req.name.len() > 64 {
                return Err(Error::invalid(op, "Name", "1..64 characters"));
            }
            if req.event_pattern.is_none() && req.schedule_expression.is_none() {
                return Err(Error::invalid(
                    op,
                    "EventPattern",
                    "an event pattern or a schedule expression is required",
                ));
            }
            let state = req.state.unwrap_or_else(|| "ENABLED".into());
            let r = st
                .events
                .rules
                .entry(req.name.clone())
                .or_insert_with(|| Rule {
                    arn: format!(
                        "arn:{partition}:events:{region}:{account}:rule/{}",
                        req.name
                    ),
                    name: req.name.clone(),
                    tags: req.tags,
                    ..Rule::default()
                });
            r.event_pattern = req.event_pattern;
            r.schedule_expression = req.schedule_expression;
            r.state = state;
            r.description = req.description;
            Ok(r.arn.clone())
        })
    }

    /// `DescribeRule`.
    pub fn describe_rule(&self, name: &str) -> Result<Rule> {
        self.call("events:DescribeRule", |st, op| {
            st.events
                .rules
                .get(name)
                .cloned()
                .ok_or_else(|| Error::not_found(op, "rule", name))
        })
    }

    /// `ListRules` with a name prefix.
    pub fn list_rules(&self, prefix: &str) -> Result<Vec<Rule>> {
        self.call("events:ListRules", |st, _| {
            Ok(st
                .events
                .rules
                .values()
                .filter(|r| r.name.starts_with(prefix))
                .cloned()
                .collect())
        })
    }

    /// `DeleteRule`: fails while it has targets.
    pub fn delete_rule(&self, name: &str) -> Result<()> {
        self.call("events:DeleteRule", |st, op| {
            if !st.events.rules.contains_key(name) {
                return Err(Error::not_found(op, "rule", name));
            }
            if st.events.targets.get(name).is_some_and(|t| !t.is_empty()) {
                return Err(Error::conflict(op, "rule", name, "still has targets"));
            }
            st.events.rules.remove(name);
            st.events.targets.remove(name);
            Ok(())
        })
    }

    /// `PutTargets`: adds or replaces targets by id.
    pub fn put_targets(&self, rule: &str, targets: Vec<Target>) -> Result<()> {
        self.call("events:PutTargets", |st, op| {
            if !st.events.rules.contains_key(rule) {
                return Err(Error::not_found(op, "rule", rule));
            }
            let list = st.events.targets.entry(rule.to_owned()).or_default();
            for t in targets {
                match list.iter_mut().find(|x| x.id == t.id) {
                    Some(x) => *x = t,
                    None => list.push(t),
                }
            }
            if list.len() > 5 {
                return Err(Error::invalid(
                    op,
                    "Targets",
                    "a rule has at most 5 targets",
                ));
            }
            Ok(())
        })
    }

    /// `ListTargetsByRule`.
    pub fn list_targets_by_rule(&self, rule: &str) -> Result<Vec<Target>> {
        self.call("events:ListTargetsByRule", |st, op| {
            if !st.events.rules.contains_key(rule) {
                return Err(Error::not_found(op, "rule", rule));
            }
            Ok(st.events.targets.get(rule).cloned().unwrap_or_default())
        })
    }

    /// `RemoveTargets` by id.
    pub fn remove_targets(&self, rule: &str, ids: &[String]) -> Result<()> {
        self.call("events:RemoveTargets", |st, op| {
            if !st.events.rules.contains_key(rule) {
                return Err(Error::not_found(op, "rule", rule));
            }
            if let Some(list) = st.events.targets.get_mut(rule) {
                list.retain(|t| !ids.contains(&t.id));
            }
            Ok(())
        })
    }

    /// `TagResource` on a rule (by ARN).
    pub fn tag_rule(&self, arn: &str, tags: &Tags) -> Result<()> {
        self.call("events:TagResource", |st, op| {
            let r = st
                .events
                .rules
                .values_mut()
                .find(|r| r.arn == arn)
                .ok_or_else(|| Error::not_found(op, "rule", arn))?;
            r.tags
                .extend(tags.iter().map(|(k, v)| (k.clone(), v.clone())));
            Ok(())
        })
    }

    /// `ListTagsForResource` on a rule (by ARN).
    pub fn list_rule_tags(&self, arn: &str) -> Result<Tags> {
        self.call("events:ListTagsForResource", |st, op| {
            st.events
                .rules
                .values()
                .find(|r| r.arn == arn)
                .map(|r| r.tags.clone())
                .ok_or_else(|| Error::not_found(op, "rule", arn))
        })
    }
}
