//! Golden tests of `kops_api::yaml` against kOps' own files: every YAML file
//! kOps' integration tests expect (`../shared/conformance/cases/*/expected/data/`:
//! completed specs, nodeup configs, the boot config inside user-data, static
//! pods, the bootstrap channel, addon manifests) is read and written again;
//! the bytes must be kOps' bytes.
//!
//! This test reads `../shared`. Under `CI=true` a missing `../shared` fails
//! it; elsewhere it prints that it skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[path = "../../../support/shared.rs"]
mod shared;

fn cases_dir() -> Option<PathBuf> {
    shared::require("yaml_golden", "conformance/cases")
}

/// The kind of a kOps data file, or `None` when it is not YAML written by kOps'
/// YAML writer.
fn kind(name: &str) -> Option<&'static str> {
    if name.ends_with("_user_data") || name.ends_with("_metadata_user-data") {
        return Some("boot config (in user-data)");
    }
    if !name.ends_with("_content") {
        return None;
    }
    if name.contains("etcd-cluster-spec")
        || name.contains("kops-version.txt")
        || name.contains("nodeupscript-")
        || name.ends_with(".json_content")
    {
        return None;
    }
    Some(if name.contains("cluster-completed.spec") {
        "completed spec"
    } else if name.contains("nodeupconfig-") {
        "nodeup config"
    } else if name.contains("-addons-bootstrap") {
        "bootstrap channel"
    } else if name.contains("-addons-") {
        "addon manifest"
    } else if name.contains("manifests-") {
        "static pod"
    } else {
        "other"
    })
}

/// The YAML documents of a file as kOps writes them: addon manifests are
/// documents joined by `\n---\n\n`; user-data carries the boot config in a
/// heredoc.
fn documents(kind: &str, text: &str) -> Option<Vec<String>> {
    if kind.starts_with("boot config") {
        let start = "cat > conf/kube_env.yaml << '__EOF_KUBE_ENV'\n";
        let i = text.find(start)? + start.len();
        let j = text[i..].find("\n__EOF_KUBE_ENV")? + i;
        // The boot config ends with a line feed, then the heredoc adds an empty line.
        return Some(vec![text[i..j].to_string()]);
    }
    let body = text.trim_end();
    if body.is_empty() {
        return Some(Vec::new());
    }
    Some(
        body.split("\n---\n")
            .enumerate()
            .map(|(i, d)| {
                let d = if i == 0 {
                    d
                } else {
                    d.strip_prefix('\n').unwrap_or(d)
                };
                // Every document ends with its own line feed; the file's final
                // one was trimmed with the rest.
                format!("{}\n", d.trim_end_matches('\n'))
            })
            .collect(),
    )
}

#[test]
fn kops_files_are_written_byte_for_byte() {
    let Some(dir) = cases_dir() else { return };
    let mut per_kind: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut first_diffs: Vec<String> = Vec::new();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("cases dir")
        .map(|e| e.expect("entry").path())
        .collect();
    cases.sort();
    for case in cases {
        let data = case.join("expected/data");
        let Ok(entries) = std::fs::read_dir(&data) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries.map(|e| e.expect("entry").path()).collect();
        files.sort();
        for file in files {
            let name = file
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_string();
            let Some(k) = kind(&name) else { continue };
            let text = std::fs::read_to_string(&file).expect("read data file");
            let Some(docs) = documents(k, &text) else {
                continue;
            };
            if docs.is_empty() {
                continue;
            }
            let entry = per_kind.entry(k).or_default();
            entry.1 += 1;
            let mut equal = true;
            for doc in &docs {
                let value = kops_api::yaml::from_str(doc)
                    .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                let ours = kops_api::yaml::value_to_string(&value);
                if &ours != doc {
                    equal = false;
                    if first_diffs.len() < 8 {
                        first_diffs.push(first_difference(&file, doc, &ours));
                    }
                    break;
                }
            }
            if equal {
                entry.0 += 1;
            }
        }
    }
    let (mut eq, mut all) = (0, 0);
    for (k, (e, n)) in &per_kind {
        println!("{k}: {e}/{n} byte-equal");
        eq += e;
        all += n;
    }
    println!("kOps YAML files byte-equal: {eq}/{all}");
    for d in &first_diffs {
        println!("{d}");
    }
    assert!(all > 0, "no kOps YAML files found under {}", dir.display());
    assert_eq!(
        eq,
        all,
        "files differ from kOps' bytes:\n{}",
        first_diffs.join("\n")
    );
}

fn first_difference(file: &Path, want: &str, got: &str) -> String {
    for (i, (w, g)) in want.lines().zip(got.lines()).enumerate() {
        if w != g {
            return format!(
                "{} line {}:\n  kOps: {w:?}\n  ours: {g:?}",
                file.display(),
                i + 1
            );
        }
    }
    format!(
        "{}: lengths differ (kOps {} lines, ours {})",
        file.display(),
        want.lines().count(),
        got.lines().count()
    )
}
