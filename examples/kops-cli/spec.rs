//! Spec handling shared by the commands: reading manifests, the embedded channel,
//! completing (populating) and validating a cluster with its instance groups.

use std::path::Path;

use anyhow::{Context as _, anyhow, bail};
use kops_api::channel::Channel;
use kops_api::defaults::PopulateOptions;
use kops_api::manifest::{self, Object};
use kops_api::{internal, v1alpha2};

/// The channel the CLI completes specs with (images and Kubernetes versions).
pub const CHANNEL: &str = kops_model::channel::STABLE_YAML;

/// The environment variable naming a channel file to use instead of the embedded one.
pub const CHANNEL_FILE_ENV: &str = "KOPS_CHANNEL_FILE";

/// The channel in use, parsed: the file `KOPS_CHANNEL_FILE` names when it is set (kOps'
/// channel format, as its `channels/stable`), else the embedded one.
pub fn channel() -> anyhow::Result<Channel> {
    if let Some(path) = std::env::var_os(CHANNEL_FILE_ENV).filter(|p| !p.is_empty()) {
        let path = std::path::PathBuf::from(path);
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "reading channel file {} ({CHANNEL_FILE_ENV})",
                path.display()
            )
        })?;
        return Channel::parse(&text).with_context(|| {
            format!(
                "reading channel file {} ({CHANNEL_FILE_ENV})",
                path.display()
            )
        });
    }
    Channel::parse(CHANNEL).context("reading kops-model's default channel")
}

/// The objects of a manifest, split by kind.
#[derive(Debug, Default)]
pub struct Manifest {
    /// Clusters.
    pub clusters: Vec<v1alpha2::Cluster>,
    /// Instance groups.
    pub groups: Vec<v1alpha2::InstanceGroup>,
    /// SSH credentials.
    pub ssh_credentials: Vec<v1alpha2::SshCredential>,
    /// Non-kOps objects (kOps' additional objects, such as a
    /// `KubeSchedulerConfiguration`), stored with the file's one cluster.
    pub additional: Vec<serde_json::Value>,
}

impl Manifest {
    /// Parses manifest bytes; `source` names the input in errors.
    pub fn parse(data: &[u8], source: &str) -> anyhow::Result<Manifest> {
        let objects =
            manifest::parse(data, source).with_context(|| format!("reading manifest {source}"))?;
        let mut m = Manifest::default();
        for (i, o) in objects.into_iter().enumerate() {
            match o {
                Object::Cluster(c) => m.clusters.push(c),
                Object::InstanceGroup(g) => m.groups.push(g),
                Object::SshCredential(s) => m.ssh_credentials.push(s),
                Object::Other(o) => m.additional.push(o.value),
                other => bail!(
                    "{source}: document {}: kind {} is not a kOps object this command handles",
                    i + 1,
                    other.kind()
                ),
            }
        }
        Ok(m)
    }

    /// The additional objects for cluster `name`: the file's, when it names that one
    /// cluster; an error when the file has additional objects and not exactly one
    /// cluster (they would belong to none, or to several).
    pub fn additional_for(
        &self,
        name: &str,
        source: &str,
    ) -> anyhow::Result<Option<&[serde_json::Value]>> {
        if self.additional.is_empty() {
            return Ok(None);
        }
        match self.clusters.as_slice() {
            [c] if c.name() == name => Ok(Some(&self.additional)),
            [_] => Ok(None),
            _ => bail!(
                "{source}: {} object(s) of other API groups are a cluster's additional objects; the file must hold exactly one Cluster, it holds {}",
                self.additional.len(),
                self.clusters.len()
            ),
        }
    }

    /// Reads and parses a manifest file.
    pub fn read(path: &Path) -> anyhow::Result<Manifest> {
        let data = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        Manifest::parse(&data, &path.display().to_string())
    }
}

/// Completes `cluster` and `groups` as `kops update cluster` would (without the cloud),
/// and validates the result; the error lists every problem with its field path.
pub fn complete(
    cluster: &v1alpha2::Cluster,
    groups: &[v1alpha2::InstanceGroup],
) -> anyhow::Result<(internal::Cluster, Vec<internal::InstanceGroup>)> {
    let name = cluster.name().to_string();
    let opts = PopulateOptions::default().with_channel(channel()?);
    kops_model::complete(cluster, groups, &opts).map_err(|e| {
        anyhow!(e).context(format!("cluster {name}: the spec is incomplete or invalid"))
    })
}

/// Checks a single instance group against its cluster (used by `edit instancegroup`
/// and `replace`): the cluster with all its groups must complete and validate.
pub fn check_groups(
    cluster: &v1alpha2::Cluster,
    groups: &[v1alpha2::InstanceGroup],
) -> anyhow::Result<()> {
    complete(cluster, groups).map(|_| ())
}

/// Writes objects as YAML or JSON.
pub fn render(objects: &[Object], json: bool) -> anyhow::Result<String> {
    if json {
        Ok(manifest::to_json(objects)?)
    } else {
        Ok(manifest::to_yaml(objects)?)
    }
}
