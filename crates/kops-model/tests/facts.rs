//! The model and the table of facts agree: every attribute a builder sets on a task is one
//! its resource type's facts list ([`TypeFacts::attrs`]), the names the backends and the
//! mock read. A typo in a builder, or an attribute added without telling the vocabulary,
//! fails here instead of being silently ignored by a backend.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use kops_api::defaults::{PopulateOptions, populate};
use kops_api::internal;
use kops_api::manifest::{self, Object};
use kops_model::aws::AwsTask;
use kops_model::aws::cloud::{AccountInfo, AwsCloud, HostedZone, Image, ResourceType, TypeFacts};
use kops_model::aws::{ModelContext, build_model};
use kops_tasks::Task;

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("cluster.yaml").exists())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty());
    dirs
}

fn model_of(dir: &Path) -> Vec<AwsTask> {
    let text = std::fs::read(dir.join("cluster.yaml")).unwrap();
    let mut cluster = None;
    let mut groups = Vec::new();
    for o in manifest::parse(&text, "cluster.yaml").unwrap() {
        match o {
            Object::Cluster(c) => cluster = Some(internal::Cluster::try_from(&c).unwrap()),
            Object::InstanceGroup(ig) => groups.push(internal::InstanceGroup::from(&ig)),
            _ => {}
        }
    }
    let (cluster, groups) =
        populate(&cluster.unwrap(), &groups, &PopulateOptions::default()).unwrap();
    let image = Image::new("ami-0000aaaa", "facts-image", "111111111111")
        .with_root_device_name("/dev/sda1")
        .with_architecture("x86_64");
    let mut ctx = ModelContext::new(cluster, groups, "eu-west-9")
        .with_account(AccountInfo::new("111111111111", "aws", "eu-west-9"))
        .with_image("ami-0000aaaa", image);
    if let Ok(key) = std::fs::read_to_string(dir.join("id_rsa.pub")) {
        ctx = ctx.with_ssh_public_key(key);
    }
    if ctx.cluster.spec.networking.network_id.is_some() {
        ctx = ctx
            .with_internet_gateway("igw-0shared")
            .with_egress_only_internet_gateway("eigw-0shared");
    }
    if !ctx.dns_none() {
        ctx = ctx.with_dns_zone(HostedZone::new("/hostedzone/ZFACTS", "example.org.", false));
    }
    ctx.cluster_context
        .ensure_keysets(std::time::SystemTime::now())
        .unwrap();
    build_model(&ctx).unwrap().tasks
}

#[test]
fn every_attribute_the_model_sets_is_in_its_types_facts() {
    let mut unknown: BTreeMap<ResourceType, BTreeSet<String>> = BTreeMap::new();
    let mut seen = 0;
    for dir in cases() {
        for t in model_of(&dir) {
            let rt = t.resource_type();
            let facts: &TypeFacts = rt.facts();
            for (field, _) in <AwsTask as Task<dyn AwsCloud>>::fields(&t).iter() {
                seen += 1;
                if field == "name" || field == "tags" || facts.attrs.contains(&field) {
                    continue;
                }
                unknown.entry(rt).or_default().insert(field.to_owned());
            }
        }
    }
    assert!(seen > 100, "the cases set {seen} attributes");
    assert!(
        unknown.is_empty(),
        "attributes the model sets that the table of facts does not list: {unknown:#?}"
    );
}
