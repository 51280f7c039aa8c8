//! Renders one GCE conformance case with the Terraform target, without the AWS SDK (the
//! project's `examples/conformance.rs` renders every cloud; this one builds quickly):
//!
//! ```text
//! cargo run -p kops-model --example gce_conformance -- CASE_DIR OUT_DIR
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use kops_api::channel::Channel;
use kops_api::manifest::{self, Object};
use kops_model::aws::DiscoverOptions;
use kops_tasks::LifecycleOverrides;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gce_conformance: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(case_dir), Some(out_dir)) = (args.next(), args.next()) else {
        bail!("usage: gce_conformance CASE_DIR OUT_DIR");
    };
    let case_dir = PathBuf::from(case_dir);
    let fixtures = case_dir.join("../../fixtures");
    let case = std::fs::read_to_string(case_dir.join("case.yaml")).unwrap_or_default();
    let ssh_key = case.lines().any(|l| l.trim() == "sshKey: true");
    let input_path = case_dir.join("in-v1alpha2.yaml");
    let input =
        std::fs::read(&input_path).with_context(|| format!("reading {}", input_path.display()))?;
    let channel = Channel::parse(
        &std::fs::read_to_string(fixtures.join("channels/stable"))
            .context("reading the stable channel")?,
    )?;
    let mut cluster = None;
    let mut groups = Vec::new();
    for o in manifest::parse(&input, &input_path.display().to_string())? {
        match o {
            Object::Cluster(c) => cluster = Some(c),
            Object::InstanceGroup(ig) => groups.push(ig),
            _ => {}
        }
    }
    let Some(cluster) = cluster else {
        bail!("{}: no Cluster object", input_path.display());
    };
    let mut opts = DiscoverOptions::default().with_channel(channel);
    if ssh_key {
        opts = opts.with_ssh_public_key(
            std::fs::read_to_string(case_dir.join("id_rsa.pub")).context("reading id_rsa.pub")?,
        );
    }
    let text = std::fs::read_to_string(fixtures.join("mock-cloud.yaml"))
        .context("reading mock-cloud.yaml")?;
    let mock = kops_mock::gce::MockGce::from_fixture(&text).map_err(anyhow::Error::msg)?;
    let rt = tokio::runtime::Builder::new_current_thread().build()?;
    let ctx = rt.block_on(kops_model::gce::discover(&mock, &cluster, &groups, &opts))?;
    let out = kops_model::gce::render_terraform(&ctx, &LifecycleOverrides::new())?;
    out.write_to(&PathBuf::from(out_dir))?;
    Ok(())
}
