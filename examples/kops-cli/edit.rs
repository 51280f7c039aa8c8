//! `edit cluster` and `edit instancegroup`: the object is opened in `$EDITOR`
//! (`KOPS_EDITOR`, then `EDITOR`, then `vi`), checked when the editor exits, and
//! saved only when the completed spec validates.
//!
//! A rejected edit is not lost: the file (a temporary file that is kept) is reopened
//! with the problems as comments at the top. Saving it again unchanged gives up: the
//! command fails, names the file holding the edit, and the store is left as it was.
//!
//! With `--set PATH=VALUE` / `--unset PATH` (kOps' flags) no editor opens: the fields
//! change ([`kops_api::fields`]), then the object is checked and saved the same way.

use std::io::Write as _;
use std::path::Path;

use anyhow::{Context as _, bail};
use kops_api::manifest::Object;
use kops_api::v1alpha2;

use crate::cli::{EditClusterArgs, EditIgArgs, FieldArgs, Global};
use crate::spec::{self, Manifest};
use crate::state::{self, State};

const HEADER: &str = "\
# Edit the object below and save to apply it to the state store.
# Lines starting with '#' are ignored; saving an empty file cancels the edit.
# If the edit is rejected this file is opened again with the problems listed here.
";

/// The object being edited.
enum Target {
    Cluster(String),
    Group(String, String),
    /// An instance group `create instancegroup` made, not stored yet.
    NewGroup(String, Box<v1alpha2::InstanceGroup>),
}

impl Target {
    fn describe(&self) -> String {
        match self {
            Target::Cluster(c) => format!("cluster {c}"),
            Target::Group(c, g) => format!("instance group {g} of cluster {c}"),
            Target::NewGroup(c, g) => format!("new instance group {} of cluster {c}", g.name()),
        }
    }
}

/// `kops edit cluster`.
pub async fn edit_cluster(global: &Global, args: &EditClusterArgs) -> anyhow::Result<()> {
    let name = state::cluster_name(args.cluster_name.as_deref(), global)?;
    edit(global, Target::Cluster(name), &args.fields).await
}

/// `kops edit instancegroup`.
pub async fn edit_instance_group(global: &Global, args: &EditIgArgs) -> anyhow::Result<()> {
    let name = state::cluster_name(None, global)?;
    edit(
        global,
        Target::Group(name, args.group.clone()),
        &args.fields,
    )
    .await
}

/// `kops create instancegroup` without --edit=false: `group` is opened in the editor and
/// stored once the cluster with it completes and validates. Saving it unchanged stores it
/// as it was made; emptying the file cancels.
pub async fn edit_new_group(
    st: &State,
    cluster: &str,
    group: v1alpha2::InstanceGroup,
) -> anyhow::Result<()> {
    edit_in(st, Target::NewGroup(cluster.to_owned(), Box::new(group))).await
}

fn editor() -> String {
    ["KOPS_EDITOR", "EDITOR"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.trim().is_empty()))
        .unwrap_or_else(|| "vi".to_string())
}

/// Runs the editor on `path` (through `sh`, so `EDITOR="code --wait"` works).
fn run_editor(path: &Path) -> anyhow::Result<()> {
    let editor = editor();
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(path)
        .status()
        .with_context(|| format!("starting editor {editor:?}"))?;
    if !status.success() {
        bail!(
            "editor {editor:?} failed ({status}); the edit is kept in {}",
            path.display()
        );
    }
    Ok(())
}

/// The file's content without the leading comment block.
fn body(text: &str) -> String {
    let mut lines = text.lines().peekable();
    while lines
        .peek()
        .is_some_and(|l| l.trim_start().starts_with('#'))
    {
        lines.next();
    }
    let mut out: Vec<&str> = lines.collect();
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    out.join("\n")
}

fn write_file(path: &Path, errors: Option<&str>, body: &str) -> anyhow::Result<()> {
    let mut text = String::from(HEADER);
    if let Some(e) = errors {
        text.push_str("#\n# The edit was rejected:\n");
        for l in e.lines() {
            text.push_str(&format!("#   {l}\n"));
        }
        text.push_str("#\n");
    }
    text.push_str(body);
    text.push('\n');
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// One parsed and checked edit.
enum Edited {
    Cluster(Box<v1alpha2::Cluster>),
    Group(Box<v1alpha2::InstanceGroup>),
}

async fn check(st: &State, target: &Target, text: &str, source: &str) -> anyhow::Result<Edited> {
    let m = Manifest::parse(text.as_bytes(), source)?;
    let count = m.clusters.len() + m.groups.len() + m.ssh_credentials.len() + m.additional.len();
    match target {
        Target::Cluster(name) => {
            let [c] = m.clusters.as_slice() else {
                bail!("{source}: expected exactly one Cluster, found {count} object(s)");
            };
            if count != 1 {
                bail!("{source}: expected exactly one Cluster, found {count} object(s)");
            }
            if c.name() != name {
                bail!(
                    "{source}: metadata.name: renaming cluster {name} to {:?} is not supported",
                    c.name()
                );
            }
            let groups: Vec<_> = st.groups(name).await?;
            spec::check_groups(c, &groups)?;
            Ok(Edited::Cluster(Box::new(c.clone())))
        }
        Target::Group(cluster, group) => check_group(st, cluster, group, false, &m, source).await,
        Target::NewGroup(cluster, group) => {
            check_group(st, cluster, group.name(), true, &m, source).await
        }
    }
}

/// Checks an edited instance group `group` of `cluster`: the cluster with its other groups
/// and this one (`new`: added to them, else replacing the stored one) must complete.
async fn check_group(
    st: &State,
    cluster: &str,
    group: &str,
    new: bool,
    m: &Manifest,
    source: &str,
) -> anyhow::Result<Edited> {
    let count = m.clusters.len() + m.groups.len() + m.ssh_credentials.len() + m.additional.len();
    let [g] = m.groups.as_slice() else {
        bail!("{source}: expected exactly one InstanceGroup, found {count} object(s)");
    };
    if count != 1 {
        bail!("{source}: expected exactly one InstanceGroup, found {count} object(s)");
    }
    if g.name() != group {
        bail!(
            "{source}: metadata.name: renaming instance group {group} to {:?} is not supported",
            g.name()
        );
    }
    let c = st.cluster(cluster).await?.value;
    let mut groups: Vec<_> = st.groups(cluster).await?;
    match groups.iter_mut().find(|x| x.name() == group) {
        Some(_) if new => {
            bail!("instance group {group:?} already exists in cluster {cluster}")
        }
        Some(x) => *x = g.clone(),
        None => groups.push(g.clone()),
    }
    spec::check_groups(&c, &groups)?;
    Ok(Edited::Group(Box::new(g.clone())))
}

async fn edit(global: &Global, target: Target, fields: &FieldArgs) -> anyhow::Result<()> {
    let st = State::open(global).await?;
    if fields.any() {
        return set_fields(&st, target, fields).await;
    }
    edit_in(&st, target).await
}

/// The stored object `target` names (or the new group), its cluster and its version.
async fn read(
    st: &State,
    target: &Target,
) -> anyhow::Result<(String, Object, Option<kops_statestore::Version>)> {
    Ok(match target {
        Target::Cluster(c) => {
            let v = st.cluster(c).await?;
            (c.clone(), Object::Cluster(v.value), Some(v.version))
        }
        Target::Group(c, g) => {
            st.cluster(c).await?;
            let v = match st.registry.get_instance_group(c, g).await {
                Ok(v) => v,
                Err(kops_statestore::Error::NotFound { .. }) => {
                    bail!("instance group {g:?} not found in cluster {c}")
                }
                Err(e) => {
                    return Err(anyhow::Error::new(e)
                        .context(format!("reading instance group {g} of cluster {c}")));
                }
            };
            (c.clone(), Object::InstanceGroup(v.value), Some(v.version))
        }
        Target::NewGroup(c, g) => (c.clone(), Object::InstanceGroup((**g).clone()), None),
    })
}

/// `--set` / `--unset`: the fields changed, then checked and saved as an edit is.
async fn set_fields(st: &State, target: Target, fields: &FieldArgs) -> anyhow::Result<()> {
    let (cluster_name, object, version) = read(st, &target).await?;
    let what = target.describe();
    let changed = match &object {
        Object::Cluster(c) => Object::Cluster(
            kops_api::fields::apply_fields(c, &fields.sets, &fields.unsets)
                .with_context(|| format!("{what}: --set/--unset"))?,
        ),
        Object::InstanceGroup(g) => Object::InstanceGroup(
            kops_api::fields::apply_fields(g, &fields.sets, &fields.unsets)
                .with_context(|| format!("{what}: --set/--unset"))?,
        ),
        other => bail!("{what}: cannot set fields of a {}", other.kind()),
    };
    if changed == object {
        println!("No changes made to {what}.");
        return Ok(());
    }
    let text = spec::render(std::slice::from_ref(&changed), false)?;
    let edited = check(st, &target, &text, "--set/--unset")
        .await
        .with_context(|| format!("{what}: the change was rejected; nothing saved"))?;
    save(st, &cluster_name, &edited, &version).await?;
    println!("Saved {what}.");
    Ok(())
}

async fn edit_in(st: &State, target: Target) -> anyhow::Result<()> {
    let (cluster_name, object, version) = read(st, &target).await?;
    let original = spec::render(&[object], false)?;
    let file = tempfile::Builder::new()
        .prefix("kops-edit-")
        .suffix(".yaml")
        .tempfile()
        .context("creating a temporary file for the edit")?;
    let (mut handle, path) = file.keep().context("keeping the temporary edit file")?;
    handle.flush().ok();
    drop(handle);
    let source = path.display().to_string();
    let original_body = body(&original);
    write_file(&path, None, &original_body)?;

    let mut previous = original_body.clone();
    let mut rejected = false;
    let edited = loop {
        run_editor(&path)?;
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {source}"))?;
        let now = body(&text);
        if now.trim().is_empty() {
            let _ = std::fs::remove_file(&path);
            println!("Edit cancelled: the file was emptied; nothing saved.");
            return Ok(());
        }
        // A new group saved as it was made is stored as it is.
        if now == original_body && !rejected && version.is_some() {
            let _ = std::fs::remove_file(&path);
            println!("Edit cancelled: no changes made.");
            return Ok(());
        }
        if rejected && now == previous {
            bail!(
                "edit of {} rejected and not changed since; nothing saved, your edit is kept in {source}",
                target.describe()
            );
        }
        match check(st, &target, &now, &source).await {
            Ok(e) => break e,
            Err(e) => {
                let chain: Vec<String> = e.chain().map(ToString::to_string).collect();
                let msg = chain.join("\n");
                eprintln!("error: edit of {} rejected:\n{msg}", target.describe());
                write_file(&path, Some(&msg), &now)?;
                previous = now;
                rejected = true;
            }
        }
    };
    let saved = save(st, &cluster_name, &edited, &version).await;
    match saved {
        Ok(()) => {
            let _ = std::fs::remove_file(&path);
            println!("Saved {}.", target.describe());
            Ok(())
        }
        // A one-line user error (a held lock, ...) is printed alone, so it carries the
        // path of the kept edit itself.
        Err(e) => Err(match crate::errors::user_line(&e) {
            Some(line) => crate::errors::user(format!(
                "{line}; saving the edit failed, it is kept in {source}"
            )),
            None => e.context(format!("saving the edit failed; it is kept in {source}")),
        }),
    }
}

/// Stores a checked edit under the cluster's lock; a cluster or group changed since it was
/// read fails the compare-and-swap.
async fn save(
    st: &State,
    cluster_name: &str,
    edited: &Edited,
    version: &Option<kops_statestore::Version>,
) -> anyhow::Result<()> {
    st.locked(cluster_name, "edit", async || match (edited, version) {
        (Edited::Cluster(c), Some(version)) => st
            .registry
            .update_cluster(c, version)
            .await
            .map(|_| ())
            .with_context(|| format!("saving cluster {cluster_name}")),
        (Edited::Group(g), Some(version)) => st
            .registry
            .update_instance_group(cluster_name, g, version)
            .await
            .map(|_| ())
            .with_context(|| {
                format!(
                    "saving instance group {} of cluster {cluster_name}",
                    g.name()
                )
            }),
        (Edited::Group(g), None) => st
            .registry
            .create_instance_group(cluster_name, g)
            .await
            .map(|_| ())
            .with_context(|| {
                format!(
                    "storing instance group {} of cluster {cluster_name}",
                    g.name()
                )
            }),
        (Edited::Cluster(_), None) => bail!("cluster {cluster_name} has no stored version"),
    })
    .await
}
