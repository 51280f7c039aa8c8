//! Golden tests for the dry-run printer and the JSON plan.
//!
//! Each directory under `tests/golden/` holds `input.json` (tasks, actual state, owned
//! objects, optional lifecycle overrides) and the expected `plan.txt`, `plan.json` and
//! `exit-code`. Set `KOPS_UPDATE_GOLDEN=1` to rewrite the expected files from the current
//! output.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::TestTask;
use kops_tasks::{
    Fields, Found, Lifecycle, LifecycleOverrides, OwnedObject, Plan, TaskGraph, TaskKey,
};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    #[serde(default)]
    overrides: String,
    tasks: Vec<InputTask>,
    actual: HashMap<TaskKey, Found>,
    owned: Vec<OwnedObject>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InputTask {
    key: TaskKey,
    #[serde(default)]
    lifecycle: Lifecycle,
    fields: Fields,
}

fn check(path: &Path, actual: &str, update: bool, failures: &mut Vec<String>) {
    if update {
        std::fs::write(path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_default();
    if expected != actual {
        failures.push(format!(
            "{} differs (run with KOPS_UPDATE_GOLDEN=1 to accept):\n{}",
            path.display(),
            kops_tasks::diff::text_diff(&expected, actual)
        ));
    }
}

#[test]
fn golden_plans() {
    let update = std::env::var("KOPS_UPDATE_GOLDEN").is_ok_and(|v| v == "1");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("input.json").exists())
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 3,
        "golden cases missing under {}",
        root.display()
    );
    let mut failures = Vec::new();
    for case in &cases {
        let input: Input =
            serde_json::from_str(&std::fs::read_to_string(case.join("input.json")).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", case.display()));
        let overrides = LifecycleOverrides::parse(&input.overrides).unwrap();
        let tasks = input
            .tasks
            .into_iter()
            .map(|t| {
                TestTask::new(t.key.kind(), t.key.name(), t.fields)
                    .lifecycle(t.lifecycle)
                    .boxed()
            })
            .collect();
        let graph = TaskGraph::build_with(tasks, &overrides).unwrap();
        let mut plan = Plan::from_state(&graph, &input.actual).unwrap();
        plan.add_orphans(&graph, &input.owned);

        let json = plan.to_json() + "\n";
        // The JSON form round-trips.
        let back: Plan = serde_json::from_str(&json).unwrap();
        assert_eq!(back.summary(), plan.summary());
        assert!(!json.contains("secret-token") && !json.contains("new-token"));
        let text = plan.to_string();
        assert!(!text.contains("secret-token") && !text.contains("new-token"));

        check(&case.join("plan.txt"), &text, update, &mut failures);
        check(&case.join("plan.json"), &json, update, &mut failures);
        check(
            &case.join("exit-code"),
            &format!("{}\n", plan.exit_code()),
            update,
            &mut failures,
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
