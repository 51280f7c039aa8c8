//! `toolbox template`: renders templates (Go's text/template language with Sprig's
//! functions, `kops_model::template`) with values files, `--set` and snippets, as kOps'
//! `kops toolbox template`. It needs no state store and no cloud.
//!
//! Templates may call kOps' channel functions `ChannelRecommendedKubernetesUpgradeVersion`,
//! `ChannelRecommendedKopsKubernetesVersion` and `ChannelRecommendedImage`, which read
//! the `--channel` (the embedded `stable` channel by default).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, anyhow, bail};
use clap::{ArgAction, Args};
use kops_api::channel::{Architecture, Channel};
use kops_api::version::parse_kubernetes_version;
use kops_model::template::{Templater, merge_values, set_values};
use serde_json::{Map, Value};

use crate::cli::Global;
use crate::upgrade::load_channel;

#[derive(Debug, Args)]
pub struct TemplateArgs {
    /// Values files or directories (walked in lexical order), each merged over the
    /// ones before it
    #[arg(long = "values", value_name = "PATH", value_delimiter = ',')]
    pub values: Vec<PathBuf>,
    /// Values as key=value pairs (Helm's --set: a.b=c,list[0]=x,l={a,b})
    #[arg(long = "set", value_name = "K=V,...")]
    pub set: Vec<String>,
    /// Values as key=value pairs, all strings
    #[arg(long = "set-string", value_name = "K=V,...")]
    pub set_string: Vec<String>,
    /// Template files or directories (walked in lexical order) to render
    #[arg(long = "template", value_name = "PATH", value_delimiter = ',')]
    pub templates: Vec<PathBuf>,
    /// Snippet files or directories: each file is a template `include` reaches by its
    /// base name
    #[arg(long = "snippets", value_name = "PATH", value_delimiter = ',')]
    pub snippets: Vec<PathBuf>,
    /// Write the result to FILE (default: standard output)
    #[arg(long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print the top-level value KEY of the values and exit
    #[arg(long = "config-value", value_name = "KEY")]
    pub config_value: Option<String>,
    /// Fail when a template reads a key the values lack (else it prints <no value>)
    #[arg(
        long = "fail-on-missing",
        action = ArgAction::Set,
        num_args = 0..=1,
        default_value_t = true,
        default_missing_value = "true",
        require_equals = true,
        value_name = "BOOL"
    )]
    pub fail_on_missing: bool,
    /// Parse each rendered document as YAML and write it again with sorted keys
    #[arg(long = "format-yaml")]
    pub format_yaml: bool,
    /// Channel the Channel* template functions read: `stable` (embedded), or a channel
    /// file (path or file:// URL), read before the templates are rendered
    #[arg(long = "channel", value_name = "LOCATION", default_value = "stable")]
    pub channel: String,
}

/// The files under `path`: the file itself, or a directory's files walked recursively
/// in lexical order.
fn walk(path: &Path, flag: &str) -> anyhow::Result<Vec<PathBuf>> {
    let meta = std::fs::metadata(path).with_context(|| format!("{flag} {}", path.display()))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .with_context(|| format!("{flag} {}: reading the directory", path.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .with_context(|| format!("{flag} {}: reading the directory", path.display()))?;
    entries.sort();
    let mut files = Vec::new();
    for e in entries {
        files.extend(walk(&e, flag)?);
    }
    Ok(files)
}

fn read(path: &Path, flag: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("{flag} {}", path.display()))
}

/// The values templates see: the values files merged in order, then `--set`, then
/// `--set-string`, then `clusterName` (see below).
fn context(global: &Global, args: &TemplateArgs) -> anyhow::Result<Value> {
    let mut ctx = Value::Object(Map::new());
    for root in &args.values {
        for file in walk(root, "--values")? {
            let text = read(&file, "--values")?;
            let v = kops_api::yaml::from_str(&text)
                .map_err(|e| anyhow!("--values {}: {e}", file.display()))?;
            match v {
                Value::Null => {}
                Value::Object(_) => merge_values(&mut ctx, &v),
                _ => bail!("--values {}: not a YAML mapping", file.display()),
            }
        }
    }
    for s in &args.set {
        set_values(&mut ctx, s, false).map_err(|e| anyhow!("--set {s}: {e}"))?;
    }
    for s in &args.set_string {
        set_values(&mut ctx, s, true).map_err(|e| anyhow!("--set-string {s}: {e}"))?;
    }
    // kOps sets `clusterName` to the cluster's name; without `--name` (kOps would take
    // the kubeconfig's current context) a `clusterName` the values give is kept, else it
    // is empty.
    if let Value::Object(m) = &mut ctx {
        match &global.name {
            Some(name) => {
                m.insert("clusterName".into(), Value::String(name.clone()));
            }
            None => {
                m.entry("clusterName")
                    .or_insert_with(|| Value::String(String::new()));
            }
        }
    }
    Ok(ctx)
}

/// The string argument `i` of a channel function (errors are reported as
/// `error calling NAME: ...`, so they need not name it).
fn str_arg(args: &[Value], i: usize) -> Result<&str, String> {
    match args.get(i) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!("argument {} must be a string, not {other}", i + 1)),
        None => Err(format!("missing argument {}", i + 1)),
    }
}

fn want_args(args: &[Value], allowed: &[usize]) -> Result<(), String> {
    if allowed.contains(&args.len()) {
        return Ok(());
    }
    let want: Vec<String> = allowed.iter().map(usize::to_string).collect();
    Err(format!(
        "wrong number of args: want {} got {}",
        want.join(" or "),
        args.len()
    ))
}

/// `ChannelRecommendedKubernetesUpgradeVersion VERSION`: the `recommendedVersion` of
/// the channel's `kubernetesVersions` entry whose range matches VERSION when it is newer
/// than VERSION; else (no entry, no recommendation, or not newer) VERSION unchanged,
/// where kOps would fail or print nothing.
fn recommended_upgrade(channel: &Channel, args: &[Value]) -> Result<Value, String> {
    want_args(args, &[1])?;
    let given = str_arg(args, 0)?;
    let version = parse_kubernetes_version(given)
        .ok_or_else(|| format!("unable to parse Kubernetes version {given:?}"))?;
    let recommended = channel
        .kubernetes_version_spec(&version)
        .and_then(|spec| spec.recommended_version.as_deref())
        .and_then(parse_kubernetes_version)
        .filter(|r| *r > version);
    Ok(Value::String(match recommended {
        Some(r) => r.to_string(),
        None => given.to_string(),
    }))
}

/// `ChannelRecommendedKopsKubernetesVersion`: the Kubernetes version the channel gives
/// new clusters of the kOps release this kops emulates ([`kops_model::DEFAULT_KOPS_RELEASE`],
/// which `kops version` prints): the `kubernetesVersion` of the first `spec.kopsVersions`
/// entry whose range holds the release, as kOps' `RecommendedKubernetesVersion` answers
/// (its template prints the version without a leading `v`). It fails where kOps' would
/// panic: no entry holds the release, or the entry names no Kubernetes version that
/// parses.
fn recommended_kops_kubernetes(channel: &Channel, args: &[Value]) -> Result<Value, String> {
    want_args(args, &[0])?;
    let release = kops_model::DEFAULT_KOPS_RELEASE;
    let kops = parse_kubernetes_version(release)
        .ok_or_else(|| format!("the kOps release {release:?} is not a version"))?;
    channel
        .recommended_kubernetes_version(&kops)
        .map(|v| Value::String(v.to_string()))
        .ok_or_else(|| {
            let Some(spec) = channel.kops_version_spec(&kops) else {
                return format!("the channel's kopsVersions have no entry for kOps {release}");
            };
            let entry = format!(
                "the channel's kopsVersions entry for kOps {release} (range {:?})",
                spec.range
            );
            match &spec.kubernetes_version {
                None => format!("{entry} has no kubernetesVersion"),
                Some(k) => format!("{entry} has kubernetesVersion {k:?}, which is not a version"),
            }
        })
}

/// `ChannelRecommendedImage CLOUD KUBERNETES_VERSION [ARCHITECTURE]`: the name of the
/// channel's image for the cloud, version and architecture (`amd64`, the default, or
/// `arm64`).
fn recommended_image(channel: &Channel, args: &[Value]) -> Result<Value, String> {
    want_args(args, &[2, 3])?;
    let cloud = str_arg(args, 0)?;
    let given = str_arg(args, 1)?;
    let arch_name = if args.len() == 3 {
        str_arg(args, 2)?
    } else {
        "amd64"
    };
    let arch = match arch_name {
        "amd64" => Architecture::Amd64,
        "arm64" => Architecture::Arm64,
        other => {
            return Err(format!(
                "unknown architecture {other:?} (want amd64 or arm64)"
            ));
        }
    };
    let version = parse_kubernetes_version(given)
        .ok_or_else(|| format!("unable to parse Kubernetes version {given:?}"))?;
    channel
        .find_image(cloud, &version, arch)
        .map(|image| Value::String(image.name.clone()))
        .ok_or_else(|| {
            format!(
                "the channel has no image for cloud {cloud:?}, Kubernetes version {given:?} and architecture {arch_name:?}"
            )
        })
}

/// `templater` with the channel functions, reading `channel`.
fn with_channel_functions(templater: Templater, channel: Channel) -> Templater {
    let channel = Arc::new(channel);
    let (c1, c2, c3) = (channel.clone(), channel.clone(), channel);
    templater
        .with_function(
            "ChannelRecommendedKubernetesUpgradeVersion",
            Arc::new(move |args: &[Value]| recommended_upgrade(&c1, args)),
        )
        .with_function(
            "ChannelRecommendedKopsKubernetesVersion",
            Arc::new(move |args: &[Value]| recommended_kops_kubernetes(&c2, args)),
        )
        .with_function(
            "ChannelRecommendedImage",
            Arc::new(move |args: &[Value]| recommended_image(&c3, args)),
        )
}

/// `kops toolbox template`.
pub fn toolbox_template(global: &Global, args: &TemplateArgs) -> anyhow::Result<()> {
    let ctx = context(global, args)?;
    if let Some(key) = &args.config_value {
        let line = match ctx.get(key) {
            None | Some(Value::Null) => "null".to_string(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        write_out(args.output.as_deref(), &format!("{line}\n"))?;
        return Ok(());
    }
    if args.templates.is_empty() {
        bail!("toolbox template: give at least one --template");
    }
    let channel = load_channel(&args.channel)?;
    let mut templater =
        with_channel_functions(Templater::new(), channel).fail_on_missing(args.fail_on_missing);
    for root in &args.snippets {
        for file in walk(root, "--snippets")? {
            let name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            templater = templater.with_snippet(name, read(&file, "--snippets")?);
        }
    }
    let mut documents: Vec<String> = Vec::new();
    for root in &args.templates {
        for file in walk(root, "--template")? {
            let shown = file.display().to_string();
            let text = read(&file, "--template")?;
            let rendered = templater.render(&shown, &text, &ctx).map_err(|e| {
                if e.name() == shown && e.line() > 0 {
                    anyhow!("--template {shown}: line {}: {}", e.line(), e.message())
                } else {
                    anyhow!("--template {shown}: {e}")
                }
            })?;
            if rendered.is_empty() {
                continue;
            }
            for doc in rendered.split("---\n") {
                if args.format_yaml {
                    let v = kops_api::yaml::from_str(doc)
                        .map_err(|e| anyhow!("--template {shown}: the result is not YAML: {e}"))?;
                    match v {
                        Value::Null => {}
                        Value::Object(_) => documents.push(kops_api::yaml::value_to_string(&v)),
                        _ => bail!("--template {shown}: a rendered document is not a YAML mapping"),
                    }
                } else if !doc.trim().is_empty() {
                    // Each document ends a line, so the separator starts one.
                    let mut d = doc.to_string();
                    if !d.ends_with('\n') {
                        d.push('\n');
                    }
                    documents.push(d);
                }
            }
        }
    }
    write_out(args.output.as_deref(), &documents.join("---\n"))
}

fn write_out(output: Option<&Path>, text: &str) -> anyhow::Result<()> {
    match output {
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("--output {}: writing", path.display())),
        None => {
            use std::io::Write as _;
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .context("writing to standard output")
        }
    }
}
