//! `get clusters`, `get instancegroups` and `get all` (a cluster, its groups and its
//! additional objects: `-o yaml` is a manifest `create -f` / `replace -f` read back).

use anyhow::{Context as _, bail};
use kops_api::manifest::Object;

use kops_api::v1alpha2;

use crate::cli::{GetAllArgs, GetClustersArgs, GetFormat, GetIgArgs, Global};
use crate::spec;
use crate::state::{self, State};

/// Prints rows as a left-aligned table.
pub fn print_table(header: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.len());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut out = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                out.push_str(c);
            } else {
                out.push_str(&format!("{c:<w$}  ", w = widths[i]));
            }
        }
        println!("{}", out.trim_end());
    };
    line(header.to_vec());
    for r in rows {
        line(r.iter().map(String::as_str).collect());
    }
}

/// `kops get clusters`.
pub async fn get_clusters(global: &Global, args: &GetClustersArgs) -> anyhow::Result<()> {
    let st = State::open(global).await?;
    let mut names = if args.names.is_empty() {
        match &global.name {
            Some(n) => vec![n.clone()],
            None => st
                .registry
                .list_clusters()
                .await
                .with_context(|| format!("listing clusters in state store {}", st.url))?,
        }
    } else {
        args.names.clone()
    };
    names.dedup();
    let mut clusters = Vec::new();
    for n in &names {
        let stored = st.cluster(n).await?.value;
        clusters.push(if args.full {
            let groups = st.groups(n).await?;
            v1alpha2::Cluster::from(&spec::complete(&stored, &groups)?.0)
        } else {
            stored
        });
    }
    match args.output {
        GetFormat::Table => {
            if clusters.is_empty() {
                bail!("no clusters found in state store {}", st.url);
            }
            print_clusters(&clusters);
        }
        format => {
            let objects: Vec<Object> = clusters.into_iter().map(Object::Cluster).collect();
            print!("{}", spec::render(&objects, format == GetFormat::Json)?);
        }
    }
    Ok(())
}

/// `kops get instancegroups`.
pub async fn get_instance_groups(global: &Global, args: &GetIgArgs) -> anyhow::Result<()> {
    let name = state::cluster_name(None, global)?;
    let st = State::open(global).await?;
    st.cluster(&name).await?;
    let mut groups = st.groups(&name).await?;
    if !args.names.is_empty() {
        for n in &args.names {
            if !groups.iter().any(|g| g.name() == n) {
                bail!("instance group {n:?} not found in cluster {name}");
            }
        }
        groups.retain(|g| args.names.iter().any(|n| n == g.name()));
    }
    match args.output {
        GetFormat::Table => {
            print_groups(&groups);
        }
        format => {
            let objects: Vec<Object> = groups.into_iter().map(Object::InstanceGroup).collect();
            print!("{}", spec::render(&objects, format == GetFormat::Json)?);
        }
    }
    Ok(())
}

fn print_clusters(clusters: &[v1alpha2::Cluster]) {
    let rows: Vec<Vec<String>> = clusters
        .iter()
        .map(|c| {
            let zones: Vec<String> = c
                .spec
                .subnets
                .iter()
                .flatten()
                .filter_map(|s| s.zone.clone().or_else(|| s.region.clone()))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            vec![
                c.name().to_string(),
                c.spec.cloud_provider.clone().unwrap_or_default(),
                zones.join(","),
            ]
        })
        .collect();
    print_table(&["NAME", "CLOUD", "ZONES"], &rows);
}

fn print_groups(groups: &[v1alpha2::InstanceGroup]) {
    let rows: Vec<Vec<String>> = groups
        .iter()
        .map(|g| {
            let s = &g.spec;
            let opt = |v: Option<i32>| v.map(|n| n.to_string()).unwrap_or_default();
            vec![
                g.name().to_string(),
                s.role.clone().unwrap_or_default(),
                s.machine_type.clone().unwrap_or_default(),
                opt(s.min_size),
                opt(s.max_size),
                s.zones
                    .clone()
                    .or_else(|| s.subnets.clone())
                    .unwrap_or_default()
                    .join(","),
            ]
        })
        .collect();
    print_table(
        &["NAME", "ROLE", "MACHINETYPE", "MIN", "MAX", "ZONES"],
        &rows,
    );
}

/// `kops get all [CLUSTER]`: the cluster, its instance groups and its additional objects.
pub async fn get_all(global: &Global, args: &GetAllArgs) -> anyhow::Result<()> {
    let name = state::cluster_name(args.cluster_name.as_deref(), global)?;
    let st = State::open(global).await?;
    let cluster = st.cluster(&name).await?.value;
    let groups = st.groups(&name).await?;
    let additional = st
        .registry
        .get_additional_objects(&name)
        .await
        .with_context(|| format!("reading the additional objects of cluster {name}"))?;
    if groups.is_empty() {
        eprintln!("No instance groups found");
    }
    match args.output {
        GetFormat::Table => {
            println!("Cluster");
            print_clusters(std::slice::from_ref(&cluster));
            println!("\nInstance Groups");
            print_groups(&groups);
            if !additional.is_empty() {
                println!("\nAddon Objects");
                let rows: Vec<Vec<String>> = additional
                    .iter()
                    .map(|o| {
                        let text =
                            |v: &serde_json::Value| v.as_str().unwrap_or_default().to_owned();
                        vec![
                            text(&o["kind"]),
                            text(&o["apiVersion"]),
                            text(&o["metadata"]["name"]),
                        ]
                    })
                    .collect();
                print_table(&["KIND", "APIVERSION", "NAME"], &rows);
            }
        }
        format => {
            let mut objects = vec![Object::Cluster(cluster)];
            objects.extend(groups.into_iter().map(Object::InstanceGroup));
            objects.extend(
                additional
                    .into_iter()
                    .map(|value| Object::Other(kops_api::manifest::OtherObject::new(value))),
            );
            print!("{}", spec::render(&objects, format == GetFormat::Json)?);
        }
    }
    Ok(())
}

/// Cloud objects as a TYPE / ID / NAME table (nothing when there are none).
pub fn print_resources<K: std::fmt::Display>(found: &[kops_tasks::resource::Resource<K>]) {
    let rows: Vec<Vec<String>> = found
        .iter()
        .map(|r| {
            vec![
                r.resource_type.to_string(),
                r.id.clone(),
                r.name.clone().unwrap_or_default(),
            ]
        })
        .collect();
    if !rows.is_empty() {
        print_table(&["TYPE", "ID", "NAME"], &rows);
    }
}
