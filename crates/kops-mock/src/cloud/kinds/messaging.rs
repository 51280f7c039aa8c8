//! SQS queues, EventBridge rules and targets.

use std::collections::BTreeMap;

use kops_cloud_aws::cloud::{CloudResult, ListQuery, Resource, ResourceType};
use kops_tasks::resource::Tags as ResourceTags;

use super::{Create, Kind, Update, removed_tags};
use crate::cloud::{Attrs, IntoCloud, a_str, gone, new_res, put, put_opt, split2, to_cloud_error};
use crate::events::{PutRule, Target};
use crate::{MockAws, Tags};

/// [`ResourceType::SqsQueue`].
pub(super) struct SqsQueue;

impl Kind for SqsQueue {
    fn kind(&self) -> ResourceType {
        ResourceType::SqsQueue
    }

    fn native(&self) -> &'static [&'static str] {
        &["name", "message_retention_seconds", "policy"]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        let urls: Vec<String> = if !q.names.is_empty() {
            let mut urls = Vec::new();
            for n in &q.names {
                match m.get_queue_url(n) {
                    Ok(u) => urls.push(u),
                    Err(e) if e.is_not_found() => {}
                    Err(e) => return Err(to_cloud_error(e)),
                }
            }
            urls
        } else {
            m.list_queues("").into_cloud()?
        };
        for url in urls {
            if !q.ids.is_empty() && !q.ids.contains(&url) {
                continue;
            }
            let attrs = m.get_queue_attributes(&url).into_cloud()?;
            let tags = m.list_queue_tags(&url).into_cloud()?;
            let name = url.rsplit('/').next().unwrap_or_default().to_owned();
            let arn = attrs.get("QueueArn").cloned().unwrap_or_default();
            let mut r = new_res(rt, &url, &tags).with_name(&name).with_arn(arn);
            put(&mut r.attrs, "name", name);
            put_opt(
                &mut r.attrs,
                "message_retention_seconds",
                attrs
                    .get("MessageRetentionPeriod")
                    .and_then(|v| v.parse::<i64>().ok()),
            );
            put_opt(&mut r.attrs, "policy", attrs.get("Policy").cloned());
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let tags = c.tags();
        Ok(m.create_queue(&c.name()?, queue_attributes(a), tags)
            .into_cloud()?
            .url)
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let id = u.id;
        let a = u.a;
        let attrs = queue_attributes(a);
        if !attrs.is_empty() {
            m.set_queue_attributes(id, attrs).into_cloud()?;
        }
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.delete_queue(id))
    }

    fn retag(&self, m: &MockAws, id: &str, old: &ResourceTags, new: &Tags) -> CloudResult<()> {
        let removed = removed_tags(old, new);
        if !removed.is_empty() {
            m.untag_queue(id, &removed).into_cloud()?;
        }
        m.tag_queue(id, new).into_cloud()
    }
}

/// [`ResourceType::EventRule`].
pub(super) struct EventRule;

impl Kind for EventRule {
    fn kind(&self) -> ResourceType {
        ResourceType::EventRule
    }

    fn native(&self) -> &'static [&'static str] {
        &[
            "name",
            "event_pattern",
            "schedule_expression",
            "description",
            "state",
        ]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        for rule in m.list_rules("").into_cloud()? {
            let tags = m.list_rule_tags(&rule.arn).into_cloud()?;
            let mut r = new_res(rt, &rule.name, &tags)
                .with_name(&rule.name)
                .with_arn(&rule.arn);
            put(&mut r.attrs, "name", rule.name.clone());
            put_opt(&mut r.attrs, "event_pattern", rule.event_pattern.clone());
            put_opt(
                &mut r.attrs,
                "schedule_expression",
                rule.schedule_expression.clone(),
            );
            put_opt(&mut r.attrs, "description", rule.description.clone());
            put(&mut r.attrs, "state", rule.state.clone());
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let tags = c.tags();
        let n = c.name()?;
        m.put_rule(PutRule {
            name: n.clone(),
            event_pattern: a_str(a, "event_pattern"),
            schedule_expression: a_str(a, "schedule_expression"),
            state: a_str(a, "state"),
            description: a_str(a, "description"),
            tags,
        })
        .into_cloud()?;
        Ok(n)
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let id = u.id;
        let merged = &u.merged;
        m.put_rule(PutRule {
            name: id.to_owned(),
            event_pattern: a_str(merged, "event_pattern"),
            schedule_expression: a_str(merged, "schedule_expression"),
            state: a_str(merged, "state"),
            description: a_str(merged, "description"),
            tags: Tags::new(),
        })
        .into_cloud()?;
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        match m.list_targets_by_rule(id) {
            Ok(t) if !t.is_empty() => {
                let ids: Vec<String> = t.into_iter().map(|t| t.id).collect();
                m.remove_targets(id, &ids).into_cloud()?;
            }
            Ok(_) => {}
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(to_cloud_error(e)),
        }
        gone(m.delete_rule(id))
    }

    fn retag(&self, m: &MockAws, id: &str, _old: &ResourceTags, new: &Tags) -> CloudResult<()> {
        let arn = m.describe_rule(id).into_cloud()?.arn;
        m.tag_rule(&arn, new).into_cloud()
    }
}

/// [`ResourceType::EventTarget`].
pub(super) struct EventTarget;

impl Kind for EventTarget {
    fn kind(&self) -> ResourceType {
        ResourceType::EventTarget
    }

    fn native(&self) -> &'static [&'static str] {
        &["rule", "target_id", "arn", "input"]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        let rules: Vec<String> = match &q.parent {
            Some(p) => vec![p.clone()],
            None => m
                .list_rules("")
                .into_cloud()?
                .into_iter()
                .map(|r| r.name)
                .collect(),
        };
        for rule in rules {
            let targets = match m.list_targets_by_rule(&rule) {
                Ok(t) => t,
                Err(e) if e.is_not_found() => continue,
                Err(e) => return Err(to_cloud_error(e)),
            };
            for t in targets {
                let mut r = Resource::new(rt, format!("{rule}:{}", t.id)).with_parent(&rule);
                put(&mut r.attrs, "rule", rule.clone());
                put(&mut r.attrs, "target_id", t.id.clone());
                put(&mut r.attrs, "arn", t.arn.clone());
                put_opt(&mut r.attrs, "input", t.input.clone());
                out.push(r);
            }
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let rule = c.parent_or("rule")?;
        let tid = match a_str(a, "target_id").or(c.req.name.clone()) {
            Some(t) => t,
            // Terraform generates an id when none is given; so do we.
            None => m.fresh_target_id(&rule),
        };
        m.put_targets(
            &rule,
            vec![Target {
                id: tid.clone(),
                arn: c.need("arn")?,
                input: a_str(a, "input"),
            }],
        )
        .into_cloud()?;
        Ok(format!("{rule}:{tid}"))
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let rt = u.rt;
        let id = u.id;
        let merged = &u.merged;
        let (rule, tid) = split2(rt, id, ':')?;
        m.put_targets(
            rule,
            vec![Target {
                id: tid.to_owned(),
                arn: a_str(merged, "arn").unwrap_or_default(),
                input: a_str(merged, "input"),
            }],
        )
        .into_cloud()?;
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        let rt = self.kind();
        let (rule, tid) = split2(rt, id, ':')?;
        gone(m.remove_targets(rule, &[tid.to_owned()]))
    }
}

fn queue_attributes(a: &Attrs) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    if let Some(v) = a_str(a, "message_retention_seconds") {
        m.insert("MessageRetentionPeriod".into(), v);
    }
    if let Some(v) = a_str(a, "policy") {
        m.insert("Policy".into(), v);
    }
    if let Some(v) = a_str(a, "visibility_timeout_seconds") {
        m.insert("VisibilityTimeout".into(), v);
    }
    m
}
