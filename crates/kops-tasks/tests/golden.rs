//! Golden tests for the dry-run printer and the JSON plan.
//!
//! Each directory under `tests/golden/` holds `input.json` (tasks, actual state, owned
//! objects, optional lifecycle overrides) and the expected `plan.txt`, `plan.json` and
//! `exit-code`. Each case is planned as `kops update cluster` plans: by the executor, every
//! task finding its object in the actual state. Set `KOPS_UPDATE_GOLDEN=1` to rewrite the
//! expected files from the current output.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kops_tasks::{
    Change, Context, Error, Executor, ExecutorOptions, Fields, Found, Lifecycle,
    LifecycleOverrides, ManualClock, Outputs, OwnedObject, Plan, Result, Task, TaskGraph, TaskKey,
    async_trait,
};
use serde::Deserialize;

/// The cloud of a case: its actual state, by task key.
#[derive(Debug)]
struct Recorded(HashMap<TaskKey, Found>);

/// A task of a case, finding its object in the recorded state.
#[derive(Debug)]
struct GoldenTask(InputTask);

#[async_trait]
impl Task<Recorded> for GoldenTask {
    fn key(&self) -> &TaskKey {
        &self.0.key
    }
    fn fields(&self) -> Fields {
        self.0.fields.clone()
    }
    fn lifecycle(&self) -> Lifecycle {
        self.0.lifecycle
    }
    async fn find(&self, cx: &Context<'_, Recorded>) -> Result<Option<Found>> {
        Ok(cx.cloud().0.get(&self.0.key).cloned())
    }
    async fn apply(&self, _cx: &Context<'_, Recorded>, _change: &Change<'_>) -> Result<Outputs> {
        Err(Error::invalid(
            self.0.key.to_string(),
            "golden cases only plan",
        ))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    #[serde(default)]
    overrides: String,
    tasks: Vec<InputTask>,
    actual: HashMap<TaskKey, Found>,
    owned: Vec<OwnedObject>,
}

#[derive(Debug, Deserialize)]
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
            .map(|t| Box::new(GoldenTask(t)) as Box<dyn Task<Recorded>>)
            .collect();
        let graph = TaskGraph::build_with(tasks, &overrides).unwrap();
        let clock = ManualClock::new();
        let exec = Executor::new(ExecutorOptions::default().with_clock(Arc::new(clock.clone())));
        let cloud = Recorded(input.actual);
        let mut plan = clock.block_on(exec.plan(&graph, &cloud)).unwrap().unwrap();
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
