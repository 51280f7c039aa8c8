//! Loads a kOps manifest, completes it as `kops update cluster` would
//! (defaults, subnet CIDRs, images from a channel), validates it and prints
//! the completed spec as v1alpha2 YAML.
//!
//! ```text
//! cargo run -p kops-examples --example complete [MANIFEST] [CHANNEL]
//! ```
//!
//! Without arguments it uses the small AWS cluster and channel embedded from
//! `examples/data/`. Validation problems are all printed, and the program
//! exits with status 1.

use std::process::ExitCode;

use anyhow::{Context, bail};
use kops_api::channel::Channel;
use kops_api::defaults::{PopulateOptions, populate};
use kops_api::internal;
use kops_api::manifest::{self, Object};
use kops_api::v1alpha2;
use kops_api::validation::validate_all;

const DEFAULT_MANIFEST: &str = include_str!("data/cluster.yaml");
const DEFAULT_CHANNEL: &str = include_str!("data/channel.yaml");

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<ExitCode> {
    let mut args = std::env::args().skip(1);
    let (name, text) = match args.next() {
        Some(path) => {
            let bytes = std::fs::read(&path).with_context(|| format!("reading {path}"))?;
            (path, bytes)
        }
        None => (
            "examples/data/cluster.yaml".to_string(),
            DEFAULT_MANIFEST.as_bytes().to_vec(),
        ),
    };
    let channel_text = match args.next() {
        Some(path) => std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?,
        None => DEFAULT_CHANNEL.to_string(),
    };
    let channel = Channel::parse(&channel_text).context("reading the channel")?;

    let mut cluster = None;
    let mut groups = Vec::new();
    let mut others = Vec::new();
    for object in manifest::parse(&text, &name)? {
        match object {
            Object::Cluster(c) => {
                if cluster.is_some() {
                    bail!("{name}: more than one Cluster");
                }
                cluster = Some(internal::Cluster::try_from(&c)?);
            }
            Object::InstanceGroup(ig) => groups.push(internal::InstanceGroup::from(&ig)),
            other => others.push(other),
        }
    }
    let Some(cluster) = cluster else {
        bail!("{name}: no Cluster object");
    };

    let opts = PopulateOptions::default().with_channel(channel);
    let (cluster, groups) = populate(&cluster, &groups, &opts).context("completing the spec")?;

    if let Err(errors) = validate_all(&cluster, &groups) {
        eprintln!(
            "{name}: the completed spec is invalid ({} problem(s)):",
            errors.errors().len()
        );
        for e in errors.errors() {
            eprintln!("  {e}");
        }
        return Ok(ExitCode::FAILURE);
    }

    let mut out = vec![Object::Cluster(v1alpha2::Cluster::from(&cluster))];
    out.extend(
        groups
            .iter()
            .map(|g| Object::InstanceGroup(v1alpha2::InstanceGroup::from(g))),
    );
    out.extend(others);
    print!("{}", manifest::to_yaml(&out)?);
    Ok(ExitCode::SUCCESS)
}
