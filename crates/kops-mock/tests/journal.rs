//! The journaled mocks (`kops_mock::journal`): a journal written by one "process" (one
//! `AwsJournal::read` .. `save`) replays in the next, through a memory and a file state
//! store; a rolling update's detach and terminate replay; the stored format is the one
//! the `kops` CLI wrote before the journal moved here; scope, mismatch and concurrent
//! saves are refused.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use kops_cloud_aws::cloud::{
    AwsCloud, CreateRequest, GroupMembers, ImageQuery, ListQuery, MachineRole, Resource,
    ResourceCloud, ResourceType as R, ZoneQuery,
};
use kops_mock::journal::{
    AWS_JOURNAL_PATH, AwsJournal, GCE_JOURNAL_PATH, GceJournal, HETZNER_JOURNAL_PATH,
    HetznerJournal, JournalError, JournaledAws, aws_seed, seeded_aws,
};
use kops_statestore::{LocalStore, MemoryStore, PutOptions, Store};
use serde_json::{Value as Json, json};

const REGION: &str = "eu-west-1";
const URL: &str = "memory://test";
/// The seed's amd64 image.
const IMAGE: &str = "ami-0a1b2c3d4e5f60001";

fn memory() -> Arc<dyn Store> {
    Arc::new(MemoryStore::new())
}

fn attrs<const N: usize>(pairs: [(&str, Json); N]) -> BTreeMap<String, Json> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// One "process": reads the journal of `store`, opens the mock, replayed.
async fn open(store: &Arc<dyn Store>) -> (AwsJournal, JournaledAws) {
    let journal = AwsJournal::read(store.clone(), URL, REGION).await.unwrap();
    let cloud = journal.open_mock(&aws_seed().unwrap()).await.unwrap();
    (journal, cloud)
}

async fn create(
    cloud: &dyn AwsCloud,
    rt: R,
    name: Option<&str>,
    a: BTreeMap<String, Json>,
) -> Resource {
    let mut req = CreateRequest::new(rt).with_attrs(a);
    if let Some(n) = name {
        req = req.with_name(n);
    }
    cloud.create(&req).await.unwrap()
}

/// A VPC, a subnet, a launch template and a group of two instances.
async fn make_group(cloud: &dyn AwsCloud) -> (Resource, Resource) {
    let zone = format!("{REGION}a");
    let vpc = create(
        cloud,
        R::Vpc,
        None,
        attrs([("cidr_block", json!("10.1.0.0/16"))]),
    )
    .await;
    let subnet = create(
        cloud,
        R::Subnet,
        None,
        attrs([
            ("vpc_id", json!(vpc.id)),
            ("availability_zone", json!(zone)),
            ("cidr_block", json!("10.1.0.0/24")),
        ]),
    )
    .await;
    let lt = create(
        cloud,
        R::LaunchTemplate,
        Some("nodes"),
        attrs([
            ("image_id", json!(IMAGE)),
            ("instance_type", json!("t3.medium")),
        ]),
    )
    .await;
    let asg = create(
        cloud,
        R::AutoscalingGroup,
        Some("nodes"),
        attrs([
            ("min_size", json!(2)),
            ("max_size", json!(2)),
            ("desired_capacity", json!(2)),
            ("vpc_zone_identifier", json!([subnet.id])),
            (
                "launch_template",
                json!({"id": lt.id, "version": "$Latest"}),
            ),
        ]),
    )
    .await;
    (vpc, asg)
}

async fn members(cloud: &dyn AwsCloud) -> GroupMembers {
    let mut groups = cloud.group_members(&["nodes".to_owned()]).await.unwrap();
    assert_eq!(groups.len(), 1, "{groups:?}");
    groups.remove(0)
}

/// The IDs of the group's instances, sorted.
fn instance_ids(g: &GroupMembers) -> Vec<String> {
    let mut ids: Vec<String> = g.instances.iter().map(|i| i.id.clone()).collect();
    ids.sort();
    ids
}

async fn stored(store: &Arc<dyn Store>, path: &str) -> Json {
    let got = store.get(path).await.unwrap();
    serde_json::from_slice(&got.data).unwrap()
}

async fn ids_of(cloud: &dyn AwsCloud, rt: R) -> Vec<String> {
    let mut ids: Vec<String> = cloud
        .list(&ListQuery::new(rt))
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn a_saved_journal_replays_in_the_next_process() {
    let store = memory();
    let (journal, cloud) = open(&store).await;
    assert!(journal.is_empty());
    assert_eq!(ids_of(&cloud, R::Vpc).await, Vec::<String>::new());
    let (vpc, asg) = make_group(&cloud).await;
    assert_eq!(cloud.unsaved(), 4);
    let before = members(&cloud).await;
    assert_eq!(before.instances.len(), 2, "{before:?}");
    journal.save(&cloud).await.unwrap();
    assert_eq!(cloud.unsaved(), 0, "saved entries are taken");
    assert_eq!(journal.len(), 4);

    let (journal2, cloud2) = open(&store).await;
    assert_eq!(journal2.len(), 4);
    assert_eq!(ids_of(&cloud2, R::Vpc).await, std::slice::from_ref(&vpc.id));
    assert_eq!(ids_of(&cloud2, R::AutoscalingGroup).await, [asg.id]);
    let after = members(&cloud2).await;
    assert_eq!(instance_ids(&after), instance_ids(&before));
    // Replaying records nothing: a save with no new mutation writes nothing.
    assert_eq!(cloud2.unsaved(), 0);
    let version = store.get(AWS_JOURNAL_PATH).await.unwrap().version;
    journal2.save(&cloud2).await.unwrap();
    assert_eq!(store.get(AWS_JOURNAL_PATH).await.unwrap().version, version);

    // A delete in process 2 is gone in process 3.
    let sg = create(
        &cloud2,
        R::SecurityGroup,
        Some("extra"),
        attrs([("vpc_id", json!(vpc.id)), ("description", json!("extra"))]),
    )
    .await;
    cloud2.delete(R::SecurityGroup, &sg.id).await.unwrap();
    journal2.save(&cloud2).await.unwrap();
    let (journal3, cloud3) = open(&store).await;
    assert_eq!(journal3.len(), 6);
    assert!(!ids_of(&cloud3, R::SecurityGroup).await.contains(&sg.id));
    let j = stored(&store, AWS_JOURNAL_PATH).await;
    let ops: Vec<&str> = j["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["op"].as_str().unwrap())
        .collect();
    assert_eq!(
        ops,
        ["create", "create", "create", "create", "create", "delete"]
    );
    assert_eq!(j["region"], REGION);
}

#[tokio::test]
async fn detach_and_terminate_are_journaled_and_replayed() {
    let store = memory();
    let (journal, cloud) = open(&store).await;
    make_group(&cloud).await;
    let first = members(&cloud).await;
    let ids = instance_ids(&first);
    cloud.detach_instance("nodes", &ids[0]).await.unwrap();
    cloud.terminate_instance(&ids[1]).await.unwrap();
    // Deregistering changes only target health: not journaled.
    let recorded = cloud.unsaved();
    cloud.deregister_instance("nodes", &ids[0]).await.unwrap();
    assert_eq!(cloud.unsaved(), recorded);
    let rolled = members(&cloud).await;
    assert_ne!(
        instance_ids(&rolled),
        ids,
        "the group launched replacements"
    );
    journal.save(&cloud).await.unwrap();

    let j = stored(&store, AWS_JOURNAL_PATH).await;
    let entries = j["entries"].as_array().unwrap();
    let tail: Vec<&Json> = entries.iter().rev().take(2).rev().collect();
    assert_eq!(
        tail,
        [
            &json!({"op": "detach", "group": "nodes", "instance": ids[0]}),
            &json!({"op": "terminate", "instance": ids[1]}),
        ]
    );

    let (_, cloud2) = open(&store).await;
    let replayed = members(&cloud2).await;
    assert_eq!(instance_ids(&replayed), instance_ids(&rolled));
    assert!(!instance_ids(&replayed).contains(&ids[0]));
    assert!(!instance_ids(&replayed).contains(&ids[1]));
}

/// A journal as `kops --mock-cloud` wrote it before the journal moved into kops-mock.
#[tokio::test]
async fn a_journal_in_the_clis_format_replays() {
    let store = memory();
    let old = json!({
        "region": REGION,
        "entries": [
            {"op": "create", "request": {"resource_type": "Vpc", "name": null, "parent": null,
              "tags": {"Name": "old"}, "attrs": {"cidr_block": "10.9.0.0/16"}}, "id": "vpc-1"},
            {"op": "create", "request": {"resource_type": "Vpc",
              "attrs": {"cidr_block": "10.8.0.0/16"}}, "id": "vpc-2"},
            {"op": "delete", "resource_type": "Vpc", "id": "vpc-2"},
        ]
    });
    store
        .put(
            AWS_JOURNAL_PATH,
            serde_json::to_vec(&old).unwrap().into(),
            PutOptions::create(),
        )
        .await
        .unwrap();
    let (journal, cloud) = open(&store).await;
    assert_eq!(journal.len(), 3);
    let vpcs = cloud.list(&ListQuery::new(R::Vpc)).await.unwrap();
    assert_eq!(vpcs.len(), 1, "{vpcs:?}");
    assert_eq!(vpcs[0].id, "vpc-1");
    assert_eq!(vpcs[0].attr_str("cidr_block"), Some("10.9.0.0/16"));
}

#[tokio::test]
async fn the_resource_type_is_stored_as_the_cli_stored_it() {
    let store = memory();
    let (journal, cloud) = open(&store).await;
    create(
        &cloud,
        R::Vpc,
        None,
        attrs([("cidr_block", json!("10.1.0.0/16"))]),
    )
    .await;
    journal.save(&cloud).await.unwrap();
    let j = stored(&store, AWS_JOURNAL_PATH).await;
    assert_eq!(j["entries"][0]["request"]["resource_type"], "Vpc");
    assert_eq!(j["entries"][0]["id"], "vpc-1");
}

#[tokio::test]
async fn a_journal_of_another_region_is_refused() {
    let store = memory();
    let (journal, cloud) = open(&store).await;
    make_group(&cloud).await;
    journal.save(&cloud).await.unwrap();
    let err = AwsJournal::read(store.clone(), URL, "us-east-2")
        .await
        .unwrap_err();
    assert!(matches!(err, JournalError::WrongScope { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("serves region eu-west-1, not region us-east-2"),
        "{msg}"
    );
    assert!(msg.contains(AWS_JOURNAL_PATH), "{msg}");
}

#[tokio::test]
async fn a_journal_of_another_seed_is_refused_at_the_entry() {
    let store = memory();
    let old = json!({
        "region": REGION,
        "entries": [
            {"op": "create", "request": {"resource_type": "Vpc",
              "attrs": {"cidr_block": "10.9.0.0/16"}}, "id": "vpc-7"},
        ]
    });
    store
        .put(
            AWS_JOURNAL_PATH,
            serde_json::to_vec(&old).unwrap().into(),
            PutOptions::create(),
        )
        .await
        .unwrap();
    let journal = AwsJournal::read(store.clone(), URL, REGION).await.unwrap();
    let err = journal.open_mock(&aws_seed().unwrap()).await.unwrap_err();
    match &err {
        JournalError::Mismatch {
            entry,
            created,
            recorded,
            ..
        } => {
            assert_eq!(
                (*entry, created.as_str(), recorded.as_str()),
                (1, "vpc-1", "vpc-7")
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_failing_replay_names_the_entry() {
    let store = memory();
    let old = json!({
        "region": REGION,
        "entries": [
            {"op": "create", "request": {"resource_type": "Vpc",
              "attrs": {"cidr_block": "10.9.0.0/16"}}, "id": "vpc-1"},
            {"op": "create", "request": {"resource_type": "Subnet",
              "attrs": {"vpc_id": "vpc-1", "availability_zone": "eu-west-1a",
                        "cidr_block": "10.9.0.0/24"}}, "id": "subnet-1"},
            {"op": "delete", "resource_type": "Vpc", "id": "vpc-1"},
        ]
    });
    store
        .put(
            AWS_JOURNAL_PATH,
            serde_json::to_vec(&old).unwrap().into(),
            PutOptions::create(),
        )
        .await
        .unwrap();
    let journal = AwsJournal::read(store.clone(), URL, REGION).await.unwrap();
    let err = journal.open_mock(&aws_seed().unwrap()).await.unwrap_err();
    assert!(
        matches!(err, JournalError::Replay { entry: 3, .. }),
        "{err:?}"
    );
    assert!(err.to_string().ends_with(": entry 3"), "{err}");
    assert!(std::error::Error::source(&err).is_some());
}

#[tokio::test]
async fn garbage_in_the_store_is_a_decode_error() {
    let store = memory();
    store
        .put(AWS_JOURNAL_PATH, "not json".into(), PutOptions::create())
        .await
        .unwrap();
    let err = AwsJournal::read(store.clone(), URL, REGION)
        .await
        .unwrap_err();
    assert!(matches!(err, JournalError::Decode { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains(&format!("{URL}/{AWS_JOURNAL_PATH}"))
    );
}

#[tokio::test]
async fn concurrent_saves_conflict_instead_of_losing_changes() {
    let store = memory();
    let (j1, c1) = open(&store).await;
    let (j2, c2) = open(&store).await;
    create(
        &c1,
        R::Vpc,
        None,
        attrs([("cidr_block", json!("10.1.0.0/16"))]),
    )
    .await;
    create(
        &c2,
        R::Vpc,
        None,
        attrs([("cidr_block", json!("10.2.0.0/16"))]),
    )
    .await;
    j1.save(&c1).await.unwrap();
    let err = j2.save(&c2).await.unwrap_err();
    assert!(err.is_conflict(), "{err:?}");
    // The first process's change is what the store holds.
    let (_, c3) = open(&store).await;
    let vpcs = c3.list(&ListQuery::new(R::Vpc)).await.unwrap();
    assert_eq!(vpcs.len(), 1);
    assert_eq!(vpcs[0].attr_str("cidr_block"), Some("10.1.0.0/16"));
}

#[tokio::test]
async fn one_process_saves_twice() {
    let store = memory();
    let (journal, cloud) = open(&store).await;
    create(
        &cloud,
        R::Vpc,
        None,
        attrs([("cidr_block", json!("10.1.0.0/16"))]),
    )
    .await;
    journal.save(&cloud).await.unwrap();
    create(
        &cloud,
        R::Vpc,
        None,
        attrs([("cidr_block", json!("10.2.0.0/16"))]),
    )
    .await;
    journal.save(&cloud).await.unwrap();
    let (again, cloud2) = open(&store).await;
    assert_eq!(again.len(), 2);
    assert_eq!(ids_of(&cloud2, R::Vpc).await, ["vpc-1", "vpc-2"]);
}

#[tokio::test]
async fn a_file_store_holds_the_journal_between_processes() {
    let dir = std::env::temp_dir().join(format!("kops-mock-journal-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store: Arc<dyn Store> = Arc::new(LocalStore::new(&dir));
    let (journal, cloud) = open(&store).await;
    let (vpc, _) = make_group(&cloud).await;
    journal.save(&cloud).await.unwrap();
    assert!(dir.join(AWS_JOURNAL_PATH).is_file());
    // A new store over the same directory: another process.
    let store2: Arc<dyn Store> = Arc::new(LocalStore::new(&dir));
    let (journal2, cloud2) = open(&store2).await;
    assert_eq!(journal2.len(), 4);
    assert_eq!(ids_of(&cloud2, R::Vpc).await, [vpc.id]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn the_journaled_cloud_passes_reads_through_and_records_only_successes() {
    let store = memory();
    let (_, cloud) = open(&store).await;
    let plain = seeded_aws(REGION, &aws_seed().unwrap()).unwrap();
    let plain: &dyn AwsCloud = &plain;
    assert_eq!(
        cloud.account().await.unwrap().region,
        plain.account().await.unwrap().region
    );
    assert_eq!(cloud.account().await.unwrap().region, REGION);
    assert_eq!(cloud.zones().await.unwrap(), plain.zones().await.unwrap());
    let q = ImageQuery::parse(
        "099720109477/ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-arm64-server-20260714",
    );
    let images = cloud.images(&q).await.unwrap();
    assert_eq!(images.len(), 1, "{images:?}");
    assert_eq!(images[0].id, "ami-0a1b2c3d4e5f60002");
    let zones = cloud
        .hosted_zones(&ZoneQuery::from_spec("internal.example.com"))
        .await
        .unwrap();
    assert_eq!(zones.len(), 1);
    assert!(zones[0].private);
    let public = cloud
        .hosted_zones(&ZoneQuery::from_spec("example.com"))
        .await
        .unwrap();
    assert_eq!(public.len(), 1);
    assert!(!public[0].private);
    let zs = vec![format!("{REGION}a")];
    assert_eq!(
        cloud.instance_type_zones("t3.medium", &zs).await.unwrap(),
        plain.instance_type_zones("t3.medium", &zs).await.unwrap()
    );
    assert_eq!(
        cloud
            .default_instance_type(MachineRole::Node, &zs, false)
            .await
            .unwrap(),
        plain
            .default_instance_type(MachineRole::Node, &zs, false)
            .await
            .unwrap()
    );
    assert_eq!(cloud.unsaved(), 0, "reads record nothing");
    // Failed mutations record nothing.
    assert!(cloud.detach_instance("nodes", "i-404").await.is_err());
    let bad_subnet =
        CreateRequest::new(R::Subnet).with_attrs(attrs([("vpc_id", json!("vpc-404"))]));
    assert!(cloud.create(&bad_subnet).await.is_err());
    assert_eq!(cloud.unsaved(), 0);
    let (vpc, _) = make_group(&cloud).await;
    assert_eq!(cloud.unsaved(), 4);
    // A VPC with a subnet cannot be deleted.
    assert!(cloud.delete(R::Vpc, &vpc.id).await.is_err());
    assert_eq!(cloud.unsaved(), 4);
}

#[tokio::test]
async fn the_delete_hook_sees_each_delete() {
    let store = memory();
    let (_, cloud) = open(&store).await;
    let seen: Arc<Mutex<Vec<(R, String)>>> = Arc::default();
    let s = seen.clone();
    cloud.set_on_delete(Some(Box::new(move |rt, id| {
        s.lock().unwrap().push((rt, id.to_owned()));
    })));
    let (busy, _) = make_group(&cloud).await;
    let vpc = create(
        &cloud,
        R::Vpc,
        None,
        attrs([("cidr_block", json!("10.2.0.0/16"))]),
    )
    .await;
    // A failed delete (the VPC still has a subnet) is not reported.
    assert!(cloud.delete(R::Vpc, &busy.id).await.is_err());
    cloud.delete(R::Vpc, &vpc.id).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), [(R::Vpc, vpc.id.clone())]);
    cloud.set_on_delete(None);
    let vpc2 = create(
        &cloud,
        R::Vpc,
        None,
        attrs([("cidr_block", json!("10.3.0.0/16"))]),
    )
    .await;
    cloud.delete(R::Vpc, &vpc2.id).await.unwrap();
    assert_eq!(seen.lock().unwrap().len(), 1, "cleared hook is not called");
}

#[test]
fn the_seed_holds_the_zones_and_images() {
    let mock = seeded_aws("ap-south-1", &aws_seed().unwrap()).unwrap();
    assert_eq!(mock.options().region, "ap-south-1");
    let ids = mock.resource_ids();
    assert!(ids.contains(IMAGE), "{ids:?}");
    assert!(ids.contains("ami-0a1b2c3d4e5f60002"), "{ids:?}");
    assert!(ids.iter().any(|i| i.contains("ZMOCKPUBLIC01")), "{ids:?}");
    assert!(ids.iter().any(|i| i.contains("ZMOCKPRIVATE1")), "{ids:?}");
}

#[tokio::test]
async fn the_gce_journal_round_trips() {
    use kops_cloud_gce::GceResourceType as G;
    use kops_cloud_gce::cloud::{CreateRequest, GceCloud, ListQuery};
    let store = memory();
    let journal = GceJournal::read(store.clone(), URL, "proj", "europe-west1")
        .await
        .unwrap();
    let cloud = journal.open_mock().await.unwrap();
    let net = cloud
        .create(
            &CreateRequest::new(G::Network)
                .with_name("net")
                .with_attrs(attrs([("auto_create_subnetworks", json!(false))])),
        )
        .await
        .unwrap();
    // A recreate of an unknown group fails and records nothing.
    assert!(
        cloud
            .recreate_instances("europe-west1-b/none", &["x".to_owned()])
            .await
            .is_err()
    );
    assert_eq!(cloud.unsaved(), 1);
    journal.save(&cloud).await.unwrap();
    let j = stored(&store, GCE_JOURNAL_PATH).await;
    assert_eq!(
        (j["project"].as_str(), j["region"].as_str()),
        (Some("proj"), Some("europe-west1"))
    );

    let again = GceJournal::read(store.clone(), URL, "proj", "europe-west1")
        .await
        .unwrap();
    let cloud2 = again.open_mock().await.unwrap();
    assert_eq!(cloud2.project().await.unwrap().project, "proj");
    let nets = cloud2.list(&ListQuery::new(G::Network)).await.unwrap();
    assert_eq!(
        nets.iter().map(|r| r.id.clone()).collect::<Vec<_>>(),
        [net.id]
    );
    let err = GceJournal::read(store.clone(), URL, "other", "europe-west1")
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("serves project proj in europe-west1, not project other in europe-west1"),
        "{err}"
    );
}

#[tokio::test]
async fn the_hetzner_journal_round_trips_with_its_shutdowns() {
    use kops_cloud_hetzner::HetznerResourceType as H;
    use kops_cloud_hetzner::cloud::{CreateRequest, HetznerCloud, ListQuery};
    let store = memory();
    let journal = HetznerJournal::read(store.clone(), URL).await.unwrap();
    let cloud = journal.open_mock().await.unwrap();
    let server = cloud
        .create(
            &CreateRequest::new(H::Server)
                .with_name("s1")
                .with_attrs(attrs([
                    ("location", json!("fsn1")),
                    ("server_type", json!("cx23")),
                    ("image", json!("ubuntu-24.04")),
                    ("user_data", json!("")),
                    ("network", json!([])),
                    (
                        "public_net",
                        json!({"ipv4_enabled": false, "ipv6_enabled": false}),
                    ),
                    ("ssh_keys", json!([])),
                ])),
        )
        .await
        .unwrap();
    cloud.shutdown_server(&server.id).await.unwrap();
    assert!(cloud.shutdown_server("987654321").await.is_err());
    assert_eq!(cloud.unsaved(), 2);
    journal.save(&cloud).await.unwrap();
    let j = stored(&store, HETZNER_JOURNAL_PATH).await;
    assert_eq!(j["entries"][1], json!({"op": "shutdown", "id": server.id}));

    let again = HetznerJournal::read(store.clone(), URL).await.unwrap();
    let cloud2 = again.open_mock().await.unwrap();
    let servers = cloud2.list(&ListQuery::new(H::Server)).await.unwrap();
    assert_eq!(servers.len(), 1);
    assert_eq!(servers[0].id, server.id);
    assert_eq!(
        servers[0].attr_str("status"),
        Some("off"),
        "the shutdown replayed"
    );
}
