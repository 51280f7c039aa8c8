//! `kops_cluster_updater`: applies the stored spec to the cloud, then rolls the
//! machines, as `kops update cluster --yes` and `kops rolling-update cluster --yes` do.
//! It runs when it is created and whenever its configuration changes, `keepers` (the
//! revisions of the cluster and its groups) above all. A failed run changes nothing in
//! Terraform's state, so the next `terraform apply` runs it again: the apply is
//! idempotent and the rolling update resumes from its journal in the state store.

use std::sync::Arc;
use std::time::Duration;

use crate::cloud::{self, Check, Roll};
use crate::diag::{Diag, Diags};
use crate::resource::{Planned, Resource};
use crate::schema::{Attr, Block, Mode, Nested, Step, Ty};
use crate::session::Session;
use crate::value::{NULL, Value};

/// The resource.
pub struct UpdaterResource;

fn flag(name: &str, description: &str) -> Attr {
    Attr::new(name, Ty::Bool, Mode::Optional, description)
}

fn nested(name: &str, description: &str, attrs: Vec<Attr>) -> Nested {
    Nested {
        name: name.into(),
        max_items: 1,
        block: Block {
            attrs,
            blocks: Vec::new(),
            description: description.into(),
        },
    }
}

/// The one block `name` of `v` (null when absent).
fn block<'a>(v: &'a Value, name: &str) -> &'a Value {
    v.get(name).items().first().unwrap_or(&NULL)
}

fn strings(v: &Value) -> Vec<String> {
    v.items()
        .iter()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

fn duration(v: &Value, path: Vec<Step>) -> Result<Option<Duration>, Diags> {
    let Some(text) = v.as_str() else {
        return Ok(None);
    };
    parse_duration(text).map(Some).ok_or_else(|| {
        vec![Diag::at(
            path,
            "Invalid duration",
            format!("{text:?}: expected e.g. 90s, 5m, 1h30m"),
        )]
    })
}

/// A Go-style duration: `1h30m`, `90s`, `500ms`.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit() && c != '.')?;
        let (number, tail) = rest.split_at(digits);
        let number: f64 = number.parse().ok()?;
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let seconds = match unit {
            "ms" => number / 1000.0,
            "s" => number,
            "m" => number * 60.0,
            "h" => number * 3600.0,
            _ => return None,
        };
        total += Duration::from_secs_f64(seconds);
        rest = tail;
    }
    Some(total)
}

fn roll_path(name: &str) -> Vec<Step> {
    vec![
        Step::Attr("rolling_update".into()),
        Step::Index(0),
        Step::Attr(name.into()),
    ]
}

fn roll_of(v: &Value) -> Result<Roll, Diags> {
    let r = block(v, "rolling_update");
    Ok(Roll {
        cloud_only: r.get("cloud_only").as_bool().unwrap_or(false),
        force: r.get("force").as_bool().unwrap_or(false),
        include: strings(r.get("include_instance_groups")),
        exclude: strings(r.get("exclude_instance_groups")),
        fail_on_drain_error: r.get("fail_on_drain_error").as_bool().unwrap_or(true),
        fail_on_validate: r.get("fail_on_validate").as_bool().unwrap_or(true),
        validate_count: r
            .get("validate_count")
            .as_i64()
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(1),
        post_drain_delay: duration(r.get("post_drain_delay"), roll_path("post_drain_delay"))?,
        validation_timeout: duration(r.get("validation_timeout"), roll_path("validation_timeout"))?,
    })
}

fn validate_path(name: &str) -> Vec<Step> {
    vec![
        Step::Attr("validate".into()),
        Step::Index(0),
        Step::Attr(name.into()),
    ]
}

fn check_of(v: &Value) -> Result<Check, Diags> {
    let b = block(v, "validate");
    Ok(Check {
        api_server: b.get("api_server").as_str().map(str::to_string),
        timeout: duration(b.get("timeout"), validate_path("timeout"))?
            .unwrap_or(Duration::from_secs(15 * 60)),
        poll_interval: duration(b.get("poll_interval"), validate_path("poll_interval"))?
            .unwrap_or(Duration::from_secs(10)),
    })
}

fn skipped(v: &Value, phase: &str) -> bool {
    block(v, phase).get("skip").as_bool().unwrap_or(false)
}

#[async_trait::async_trait]
impl Resource for UpdaterResource {
    fn schema(&self) -> Block {
        Block {
            attrs: vec![
                Attr::new("id", Ty::String, Mode::Computed, "The cluster's name."),
                Attr::new("cluster_name", Ty::String, Mode::Required, "The cluster."),
                Attr::new(
                    "keepers",
                    Ty::Map(Box::new(Ty::String)),
                    Mode::Optional,
                    "Any change of these runs the updater again (the revisions of the \
                     cluster and its groups).",
                ),
            ],
            blocks: vec![
                nested(
                    "apply",
                    "Applying the stored spec to the cloud.",
                    vec![flag("skip", "Do not apply.")],
                ),
                nested(
                    "rolling_update",
                    "Replacing machines whose configuration is out of date.",
                    vec![
                        flag("skip", "Do not roll."),
                        flag(
                            "cloud_only",
                            "Replace machines without draining or validating through the \
                             Kubernetes API.",
                        ),
                        flag("force", "Replace machines that are up to date too."),
                        flag(
                            "fail_on_drain_error",
                            "Stop when a drain fails (default true).",
                        ),
                        flag(
                            "fail_on_validate",
                            "Stop when validation fails (default true).",
                        ),
                        Attr::new(
                            "validate_count",
                            Ty::Number,
                            Mode::Optional,
                            "Successful validations in a row before going on (default 1).",
                        ),
                        Attr::new(
                            "post_drain_delay",
                            Ty::String,
                            Mode::Optional,
                            "Wait after draining a machine (e.g. 5s).",
                        ),
                        Attr::new(
                            "validation_timeout",
                            Ty::String,
                            Mode::Optional,
                            "How long validation may take (e.g. 15m).",
                        ),
                        Attr::new(
                            "include_instance_groups",
                            Ty::List(Box::new(Ty::String)),
                            Mode::Optional,
                            "Only these groups.",
                        ),
                        Attr::new(
                            "exclude_instance_groups",
                            Ty::List(Box::new(Ty::String)),
                            Mode::Optional,
                            "Not these groups.",
                        ),
                    ],
                ),
                nested(
                    "validate",
                    "Validating the cluster through the Kubernetes API.",
                    vec![
                        flag("skip", "Do not validate."),
                        Attr::new(
                            "timeout",
                            Ty::String,
                            Mode::Optional,
                            "How long validation may take (default 15m).",
                        ),
                        Attr::new(
                            "poll_interval",
                            Ty::String,
                            Mode::Optional,
                            "The pause between attempts (default 10s).",
                        ),
                        Attr::new(
                            "api_server",
                            Ty::String,
                            Mode::Optional,
                            "The API's URL, when the cluster's name for it does not \
                             resolve from here (kops' --api-server).",
                        ),
                    ],
                ),
            ],
            description: "Applies a kOps cluster to its cloud and rolls its machines.".into(),
        }
    }

    async fn plan(
        &self,
        _session: Option<&Session>,
        _prior: &Value,
        proposed: &Value,
    ) -> Result<Planned, Diags> {
        if proposed.is_null() {
            return Ok(Planned::of(Value::Null));
        }
        roll_of(proposed)?;
        check_of(proposed)?;
        let mut planned = proposed.clone();
        planned.set("id", proposed.get("cluster_name").clone());
        Ok(Planned::of(planned))
    }

    async fn apply(
        &self,
        session: &Arc<Session>,
        _prior: &Value,
        planned: &Value,
    ) -> Result<Value, Diags> {
        if planned.is_null() {
            return Ok(Value::Null);
        }
        let name = planned.get("cluster_name").as_str().unwrap_or_default();
        let roll = roll_of(planned)?;
        if !skipped(planned, "apply") {
            cloud::update(session, name, false).await?;
        }
        if !skipped(planned, "rolling_update") {
            if !roll.cloud_only {
                return Err(vec![Diag::at(
                    roll_path("cloud_only"),
                    "Draining needs the Kubernetes API",
                    "This provider rolls machines in cloud-only mode so far: set \
                     rolling_update { cloud_only = true } (or skip = true).",
                )]);
            }
            cloud::rolling_update(session, name, roll).await?;
        }
        if !skipped(planned, "validate") {
            cloud::validate(session, name, check_of(planned)?).await?;
        }
        Ok(planned.clone())
    }

    async fn read(&self, _session: &Arc<Session>, state: &Value) -> Result<Value, Diags> {
        Ok(state.clone())
    }

    async fn import(&self, _session: &Arc<Session>, id: &str) -> Result<Value, Diags> {
        Err(vec![Diag::error(
            "Nothing to import",
            format!("{id}: an updater is an action; add it to the configuration instead"),
        )])
    }
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn durations_read_as_go_writes_them() {
        assert_eq!(parse_duration("90s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("5"), None);
        assert_eq!(parse_duration("5d"), None);
    }
}
