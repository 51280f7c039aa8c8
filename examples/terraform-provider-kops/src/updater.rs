//! `kops_cluster_updater`: applies the stored spec to the cloud, then rolls the
//! machines, as `kops update cluster --yes` and `kops rolling-update cluster --yes` do.
//! It runs when it is created and whenever its configuration changes, `keepers` (the
//! revisions of the cluster and its groups) above all. A failed run changes nothing in
//! Terraform's state, so the next `terraform apply` runs it again: the apply is
//! idempotent and the rolling update resumes from its journal in the state store.

use std::sync::Arc;
use std::time::Duration;

use kops_model::day2::kubeconfig::DEFAULT_ADMIN_LIFETIME;
use kops_model::tasks::{Lifecycle, LifecycleOverrides};

use crate::cloud::{self, ApiAccess, Apply, Check, Roll};
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

/// `admin_lifetime`, when the configuration sets it.
fn admin_lifetime(v: &Value) -> Result<Option<Duration>, Diags> {
    duration(
        v.get("admin_lifetime"),
        vec![Step::Attr("admin_lifetime".into())],
    )
}

/// `rolling_update { api_server }`, else `validate { api_server }`.
fn api_server(v: &Value) -> Option<String> {
    let of = |phase: &str| {
        block(v, phase)
            .get("api_server")
            .as_str()
            .map(str::to_string)
    };
    of("rolling_update").or_else(|| of("validate"))
}

fn roll_of(v: &Value) -> Result<Roll, Diags> {
    let r = block(v, "rolling_update");
    let at = |name: &str| duration(r.get(name), roll_path(name));
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
        post_drain_delay: at("post_drain_delay")?,
        validation_timeout: at("validation_timeout")?,
        drain_timeout: at("drain_timeout")?,
        control_plane_interval: at("master_interval")?,
        node_interval: at("node_interval")?,
        bastion_interval: at("bastion_interval")?,
        validate_interval: poll_interval(v)?,
        access: ApiAccess {
            server: api_server(v),
            lifetime: admin_lifetime(v)?.unwrap_or(DEFAULT_ADMIN_LIFETIME),
        },
    })
}

fn validate_path(name: &str) -> Vec<Step> {
    vec![
        Step::Attr("validate".into()),
        Step::Index(0),
        Step::Attr(name.into()),
    ]
}

/// `validate { poll_interval }`, when the configuration sets it: the pause between
/// validation attempts, of the validate phase and of the rolling update's validations.
fn poll_interval(v: &Value) -> Result<Option<Duration>, Diags> {
    duration(
        block(v, "validate").get("poll_interval"),
        validate_path("poll_interval"),
    )
}

fn check_of(v: &Value) -> Result<Check, Diags> {
    let b = block(v, "validate");
    let timeout = duration(b.get("timeout"), validate_path("timeout"))?
        .unwrap_or(Duration::from_secs(15 * 60));
    Ok(Check {
        access: ApiAccess {
            server: b.get("api_server").as_str().map(str::to_string),
            // The validation's timeout and some margin, unless the configuration says.
            lifetime: admin_lifetime(v)?.unwrap_or(timeout + Duration::from_secs(600)),
        },
        timeout,
        poll_interval: poll_interval(v)?.unwrap_or(Duration::from_secs(10)),
    })
}

fn apply_path(name: &str) -> Vec<Step> {
    vec![
        Step::Attr("apply".into()),
        Step::Index(0),
        Step::Attr(name.into()),
    ]
}

/// The apply phase's settings: `lifecycle_overrides` (task kind to lifecycle, every bad
/// one a diagnostic naming its key) and `allow_kops_downgrade`.
fn apply_of(v: &Value) -> Result<Apply, Diags> {
    let b = block(v, "apply");
    let mut overrides = LifecycleOverrides::new();
    let mut diags = Vec::new();
    if let Value::Map(m) = b.get("lifecycle_overrides") {
        for (kind, lifecycle) in m {
            let Some(text) = lifecycle.as_str() else {
                continue;
            };
            match text.parse::<Lifecycle>() {
                Ok(l) if !kind.trim().is_empty() => overrides = overrides.with(kind.trim(), l),
                Ok(_) => diags.push(Diag::at(
                    apply_path("lifecycle_overrides"),
                    "Invalid lifecycle override",
                    "an empty task kind",
                )),
                Err(_) => diags.push(Diag::at(
                    apply_path("lifecycle_overrides"),
                    "Invalid lifecycle override",
                    format!(
                        "{kind}: unknown lifecycle {text:?} (one of {})",
                        Lifecycle::ALL.map(Lifecycle::as_str).join(", ")
                    ),
                )),
            }
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    Ok(Apply {
        lifecycle_overrides: overrides,
        allow_kops_downgrade: b.get("allow_kops_downgrade").as_bool().unwrap_or(false),
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
                Attr::new(
                    "admin_lifetime",
                    Ty::String,
                    Mode::Optional,
                    "How long the admin credential minted for the run's calls to the \
                     Kubernetes API lasts (default: 18h for the rolling update, the \
                     validation's timeout and 10m for the validation).",
                ),
            ],
            blocks: vec![
                nested(
                    "apply",
                    "Applying the stored spec to the cloud.",
                    vec![
                        flag("skip", "Do not apply."),
                        flag(
                            "allow_kops_downgrade",
                            "Apply even when the cluster was last updated by a newer kOps \
                             release than this provider's (its kops-version.txt).",
                        ),
                        Attr::new(
                            "lifecycle_overrides",
                            Ty::Map(Box::new(Ty::String)),
                            Mode::Optional,
                            "Task kind to lifecycle (Sync, Ignore, WarnIfInsufficientAccess, \
                             ExistsAndValidates, ExistsAndWarnIfChanges), as kops' \
                             --lifecycle-overrides: { InstanceGroupManager = \"Ignore\" }.",
                        ),
                    ],
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
                            "drain_timeout",
                            Ty::String,
                            Mode::Optional,
                            "How long draining one node may take (default 15m).",
                        ),
                        Attr::new(
                            "master_interval",
                            Ty::String,
                            Mode::Optional,
                            "Wait after replacing a control-plane machine (default 15s).",
                        ),
                        Attr::new(
                            "node_interval",
                            Ty::String,
                            Mode::Optional,
                            "Wait after replacing a node machine (default 15s).",
                        ),
                        Attr::new(
                            "bastion_interval",
                            Ty::String,
                            Mode::Optional,
                            "Wait after replacing a bastion (default 15s).",
                        ),
                        Attr::new(
                            "api_server",
                            Ty::String,
                            Mode::Optional,
                            "The API's URL, when the cluster's name for it does not \
                             resolve from here (default: validate's api_server).",
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
                            "The pause between validation attempts (default 10s), also the rolling \
                             update's between its validations (default, as kOps: 30s after a \
                             failed one, 10s between successful ones).",
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
        apply_of(proposed)?;
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
            cloud::update(session, name, false, apply_of(planned)?).await?;
        }
        if !skipped(planned, "rolling_update") {
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
    use super::{parse_duration, roll_of};
    use crate::schema::Step;
    use crate::value::Value;
    use std::collections::BTreeMap;
    use std::time::Duration;

    fn updater(rolling: &[(&str, Value)], validate: &[(&str, Value)]) -> Value {
        let object = |pairs: &[(&str, Value)]| {
            Value::List(vec![Value::Map(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.clone()))
                    .collect::<BTreeMap<_, _>>(),
            )])
        };
        let mut top = BTreeMap::new();
        top.insert("rolling_update".to_string(), object(rolling));
        top.insert("validate".to_string(), object(validate));
        Value::Map(top)
    }

    #[test]
    fn every_rolling_tunable_reaches_the_roll() {
        let text = |s: &str| Value::String(s.into());
        let v = updater(
            &[
                ("drain_timeout", text("2m")),
                ("validation_timeout", text("3m")),
                ("master_interval", text("4s")),
                ("node_interval", text("5s")),
                ("bastion_interval", text("6s")),
                ("post_drain_delay", text("7s")),
                ("validate_count", Value::Int(3)),
                ("fail_on_drain_error", Value::Bool(false)),
            ],
            &[
                ("api_server", text("https://127.0.0.1:6443")),
                ("poll_interval", text("250ms")),
            ],
        );
        let roll = roll_of(&v).unwrap();
        let s = Duration::from_secs;
        assert_eq!(roll.drain_timeout, Some(s(120)));
        assert_eq!(roll.validation_timeout, Some(s(180)));
        assert_eq!(roll.control_plane_interval, Some(s(4)));
        assert_eq!(roll.node_interval, Some(s(5)));
        assert_eq!(roll.bastion_interval, Some(s(6)));
        assert_eq!(roll.post_drain_delay, Some(s(7)));
        assert_eq!(roll.validate_count, 3);
        assert_eq!(roll.validate_interval, Some(Duration::from_millis(250)));
        assert!(!roll.fail_on_drain_error);
        assert!(!roll.cloud_only);
        // The roll reaches the API where validation does, unless it says otherwise.
        assert_eq!(
            roll.access.server.as_deref(),
            Some("https://127.0.0.1:6443")
        );
        assert_eq!(roll.access.lifetime, s(18 * 3600));
        // Without a poll_interval the roll keeps kOps' pauses.
        assert_eq!(roll_of(&updater(&[], &[])).unwrap().validate_interval, None);

        // A bad duration is a diagnostic on its attribute.
        let bad = updater(&[("node_interval", text("soon"))], &[]);
        let diags = roll_of(&bad).err().unwrap();
        assert_eq!(
            diags[0].path.as_deref(),
            Some(
                &[
                    Step::Attr("rolling_update".into()),
                    Step::Index(0),
                    Step::Attr("node_interval".into())
                ][..]
            )
        );
    }

    #[test]
    fn durations_read_as_go_writes_them() {
        assert_eq!(parse_duration("90s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("5"), None);
        assert_eq!(parse_duration("5d"), None);
    }
}
