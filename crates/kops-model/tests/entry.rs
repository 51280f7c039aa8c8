//! The library entry points on the mock cloud: `new_cluster` -> `discover` ->
//! `UpdateCluster` plan / apply / Terraform, as the CLI and embedders call them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use kops_model::aws::cloud::{AwsCloud, ListQuery, ResourceType};
use kops_model::aws::{ApplyOptions, DiscoverOptions, UpdateCluster, UpdateOptions, discover};
use kops_model::{DEFAULT_KOPS_RELEASE, DnsType, Error, NewClusterOptions, new_cluster};
use kops_statestore::{LockRequest, MemoryStore, Registry, Store, StoreExt as _, SystemClock};

const NAME: &str = "entry.example.com";
const STORE: &str = "memfs://clusters.example.com";

fn mock() -> kops_mock::MockAws {
    kops_mock::fixture::Fixture::parse(
        "aws:\n  region: us-test-1\n  zones: [us-test-1a]\n  ec2:\n    images:\n    - {imageId: ami-00000001, name: entry, ownerId: '1', rootDeviceName: /dev/xvda}\n",
        "entry test",
    )
    .unwrap()
    .build()
    .unwrap()
}

fn spec() -> (
    kops_api::v1alpha2::Cluster,
    Vec<kops_api::v1alpha2::InstanceGroup>,
) {
    new_cluster(
        &NewClusterOptions::new(NAME, STORE)
            .with_zones(["us-test-1a"])
            .with_dns(DnsType::None)
            .with_image(Some("ami-00000001".into()))
            .with_kubernetes_version("v1.34.1"),
    )
    .unwrap()
}

async fn setup(allow_memfs: bool) -> (kops_mock::MockAws, Arc<MemoryStore>, UpdateCluster) {
    let (cluster, groups) = spec();
    setup_spec(&cluster, &groups, allow_memfs).await
}

/// The update of `cluster` on a new mock cloud, its files going to a new memory store.
async fn setup_spec(
    cluster: &kops_api::v1alpha2::Cluster,
    groups: &[kops_api::v1alpha2::InstanceGroup],
    allow_memfs: bool,
) -> (kops_mock::MockAws, Arc<MemoryStore>, UpdateCluster) {
    let cloud = mock();
    let store = Arc::new(MemoryStore::new());
    let opts = DiscoverOptions::default().with_state_store(store.clone(), STORE);
    let ctx = discover(&cloud, cluster, groups, &opts).await.unwrap();
    let update = UpdateCluster::new(
        ctx,
        UpdateOptions::default()
            .with_lock_holder("entry test")
            .with_unreadable_config_base(allow_memfs),
    )
    .unwrap();
    (cloud, store, update)
}

fn registry(store: &Arc<MemoryStore>) -> Registry {
    Registry::new(store.clone() as Arc<dyn Store>, Arc::new(SystemClock))
}

#[tokio::test]
async fn managed_files_go_to_the_config_base_in_the_clusters_own_store() {
    let (cloud, store, update) = setup(true).await;
    let api: &dyn AwsCloud = &cloud;
    let plan = update.plan(api).await.unwrap();
    assert!(plan.plan.has_changes());
    update
        .apply(api, &registry(&store), &plan, ApplyOptions::default())
        .await
        .unwrap();

    // The files are in the store, under the cluster's config base...
    let bootstrap = store
        .get_opt(&format!("{NAME}/addons/bootstrap-channel.yaml"))
        .await
        .unwrap()
        .expect("the bootstrap channel in the config base");
    assert!(String::from_utf8_lossy(&bootstrap.data).contains("kind: Addons"));
    let version = store
        .get_opt(&format!("{NAME}/kops-version.txt"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&version.data), DEFAULT_KOPS_RELEASE);
    // ...and none went to an S3 bucket of the cloud.
    let objects = api
        .list(&ListQuery::new(ResourceType::S3Object))
        .await
        .unwrap_or_default();
    assert!(objects.is_empty(), "S3 objects in the cloud: {objects:?}");

    // Applied, the plan is empty: the files are found where they were written.
    let again = update.plan(api).await.unwrap();
    assert!(!again.plan.has_changes(), "{}", again.plan.render_text());
}

/// Lists AWS holds as sets (a load balancer's subnets and security groups, an autoscaling
/// group's subnets and target groups) come back in an order of their own; the mock lists
/// them reversed. Applied across three zones, the next plan is still empty.
#[tokio::test]
async fn sets_listed_in_another_order_are_no_change() {
    let zones = ["us-test-1a", "us-test-1b", "us-test-1c"];
    let (cluster, groups) = new_cluster(
        &NewClusterOptions::new(NAME, STORE)
            .with_zones(zones)
            .with_dns(DnsType::None)
            .with_image(Some("ami-00000001".into()))
            .with_kubernetes_version("v1.34.1"),
    )
    .unwrap();
    let cloud = kops_mock::fixture::Fixture::parse(
        "aws:\n  region: us-test-1\n  zones: [us-test-1a, us-test-1b, us-test-1c]\n  ec2:\n    images:\n    - {imageId: ami-00000001, name: entry, ownerId: '1', rootDeviceName: /dev/xvda}\n",
        "three zones",
    )
    .unwrap()
    .build()
    .unwrap();
    let store = Arc::new(MemoryStore::new());
    let opts = DiscoverOptions::default().with_state_store(store.clone(), STORE);
    let ctx = discover(&cloud, &cluster, &groups, &opts).await.unwrap();
    let update = UpdateCluster::new(
        ctx,
        UpdateOptions::default()
            .with_lock_holder("entry test")
            .with_unreadable_config_base(true),
    )
    .unwrap();
    let api: &dyn AwsCloud = &cloud;
    let plan = update.plan(api).await.unwrap();
    update
        .apply(api, &registry(&store), &plan, ApplyOptions::default())
        .await
        .unwrap();

    // The API load balancer spans the three zones' subnets, listed in the other order.
    let subnets = api
        .list(&ListQuery::new(ResourceType::Subnet))
        .await
        .unwrap();
    let zone_of = |id: &str| {
        subnets
            .iter()
            .find(|s| s.id == id)
            .and_then(|s| s.attr_str("availability_zone"))
            .unwrap_or_default()
            .to_owned()
    };
    let lbs = api
        .list(&ListQuery::new(ResourceType::LoadBalancer))
        .await
        .unwrap();
    let listed: Vec<String> = lbs
        .iter()
        .flat_map(|lb| lb.attrs.get("subnet_mapping").and_then(|m| m.as_array()))
        .flatten()
        .filter_map(|m| m.get("subnet_id").and_then(|s| s.as_str()))
        .map(zone_of)
        .collect();
    assert_eq!(listed, ["us-test-1c", "us-test-1b", "us-test-1a"]);

    let again = update.plan(api).await.unwrap();
    assert!(!again.plan.has_changes(), "{}", again.plan.render_text());
}

#[tokio::test]
async fn direct_apply_refuses_a_config_base_nodes_cannot_read() {
    let (cloud, store, update) = setup(false).await;
    let api: &dyn AwsCloud = &cloud;
    let plan = update.plan(api).await.unwrap();
    let before = cloud.resource_ids();
    let err = update
        .apply(api, &registry(&store), &plan, ApplyOptions::default())
        .await
        .expect_err("a memfs:// config base must be refused on a real cloud");
    let msg = err.to_string();
    assert!(matches!(err, Error::Invalid { .. }), "{msg}");
    assert!(msg.starts_with("spec.configBase: memfs://"), "{msg}");
    assert!(msg.contains("s3://"), "the error says what to use: {msg}");
    assert_eq!(cloud.resource_ids(), before, "nothing was applied");
    assert!(
        store.list(NAME).await.unwrap().is_empty(),
        "nothing was written"
    );
    // The lock was never taken.
    let reg = registry(&store);
    let lock = reg
        .lock(NAME, &LockRequest::new("after", "check"))
        .await
        .unwrap();
    lock.release().await.unwrap();
}

/// `spec.target.terraform` adds its arguments to kOps' provider blocks, the main one and
/// the managed files' one, each only to its own and winning over kOps' `region`.
#[tokio::test]
async fn terraform_provider_blocks_carry_the_specs_extra_config() {
    let (mut cluster, groups) = spec();
    cluster.spec.target = Some({
        let mut built = kops_api::v1alpha2::TargetSpec::default();
        built.terraform = Some({
            let mut built = kops_api::v1alpha2::TerraformSpec::default();
            built.provider_extra_config =
                Some([("max_retries".to_owned(), "10".to_owned())].into());
            built.files_provider_extra_config = Some(
                [
                    ("profile".to_owned(), "files".to_owned()),
                    ("region".to_owned(), "eu-west-1".to_owned()),
                ]
                .into(),
            );
            built
        });
        built
    });
    let (_cloud, _store, update) = setup_spec(&cluster, &groups, true).await;
    let tf = update.render_terraform().await.unwrap();
    let main = String::from_utf8_lossy(&tf.files["kubernetes.tf"]).into_owned();
    let provider = |alias: bool| -> String {
        main.split("\n}\n")
            .map(|b| b.trim_start())
            .find(|b| b.starts_with("provider \"aws\"") && b.contains("alias") == alias)
            .unwrap_or_else(|| panic!("no provider block (alias {alias}):\n{main}"))
            .to_owned()
    };
    assert_eq!(
        provider(false),
        "provider \"aws\" {\n  max_retries = \"10\"\n  region      = \"us-test-1\""
    );
    assert_eq!(
        provider(true),
        "provider \"aws\" {\n  alias   = \"files\"\n  profile = \"files\"\n  region  = \"eu-west-1\""
    );
}

/// A memory store that says its objects live in a region, as an S3 bucket's store does.
#[derive(Debug)]
struct InRegion(MemoryStore, &'static str);

#[async_trait::async_trait]
impl Store for InRegion {
    async fn get(&self, path: &str) -> kops_statestore::Result<kops_statestore::GetResult> {
        self.0.get(path).await
    }
    async fn put(
        &self,
        path: &str,
        data: bytes::Bytes,
        options: kops_statestore::PutOptions,
    ) -> kops_statestore::Result<kops_statestore::Version> {
        self.0.put(path, data, options).await
    }
    async fn delete_opts(
        &self,
        path: &str,
        options: kops_statestore::DeleteOptions,
    ) -> kops_statestore::Result<()> {
        self.0.delete_opts(path, options).await
    }
    async fn list(
        &self,
        prefix: &str,
    ) -> kops_statestore::Result<Vec<kops_statestore::ObjectMeta>> {
        self.0.list(prefix).await
    }
    fn url(&self) -> String {
        self.0.url()
    }
    fn region(&self) -> Option<String> {
        Some(self.1.to_owned())
    }
}

/// The managed files' provider names the region of the store's bucket, as kOps does,
/// not the cluster's: a state bucket often lives in another region.
#[tokio::test]
async fn terraform_files_provider_names_the_buckets_region() {
    let (cluster, groups) = spec();
    let store: Arc<dyn Store> = Arc::new(InRegion(MemoryStore::new(), "eu-central-1"));
    let cloud = mock();
    let opts = DiscoverOptions::default().with_state_store(store, STORE);
    let ctx = discover(&cloud, &cluster, &groups, &opts).await.unwrap();
    let update = UpdateCluster::new(ctx, UpdateOptions::default()).unwrap();
    let tf = update.render_terraform().await.unwrap();
    let main = String::from_utf8_lossy(&tf.files["kubernetes.tf"]).into_owned();
    assert!(
        main.contains("provider \"aws\" {\n  region = \"us-test-1\"\n}"),
        "{main}"
    );
    assert!(
        main.contains("provider \"aws\" {\n  alias  = \"files\"\n  region = \"eu-central-1\"\n}"),
        "{main}"
    );
}

#[tokio::test]
async fn static_pods_name_the_kops_release_images() {
    let (_cloud, _store, update) = setup(true).await;
    let tf = update.render_terraform().await.unwrap();
    let pod = tf
        .files
        .get("data/aws_s3_object_manifests-static-kube-apiserver-healthcheck_content")
        .expect("the healthcheck manifest");
    let pod = String::from_utf8_lossy(pod);
    assert!(
        pod.contains(&format!(
            "image: registry.k8s.io/kops/kube-apiserver-healthcheck:{DEFAULT_KOPS_RELEASE}\n"
        )),
        "{pod}"
    );
    // memfs:// config bases render to kOps' test bucket, as kOps' MemFSPath does.
    let main = String::from_utf8_lossy(&tf.files["kubernetes.tf"]).into_owned();
    assert!(
        main.contains("bucket                 = \"testingBucket\"")
            || main.contains("\"testingBucket\""),
        "{main}"
    );
}

#[test]
fn new_cluster_names_the_bad_option() {
    let err = new_cluster(
        &NewClusterOptions::new(NAME, STORE)
            .with_zones(["us-test-1a"])
            .with_networking("bogus"),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("networking: unknown CNI \"bogus\""),
        "{err}"
    );
    let err =
        new_cluster(&NewClusterOptions::new(NAME, STORE).with_zones(["us-test-1a", "eu-west-1b"]))
            .unwrap_err();
    assert!(
        err.to_string()
            .contains("eu-west-1b is not in region us-test-1"),
        "{err}"
    );
    let (cluster, groups) = spec();
    assert_eq!(
        cluster.spec.config_base.as_deref(),
        Some("memfs://clusters.example.com/entry.example.com")
    );
    assert_eq!(groups.len(), 2);
}

#[test]
fn every_shape_create_cluster_offers_completes_and_validates() {
    use kops_model::{Cloud, Topology};
    for cloud in [Cloud::Aws, Cloud::Gce] {
        for topology in [Topology::Public, Topology::Private] {
            for dns in [DnsType::Public, DnsType::Private, DnsType::None] {
                let gce = matches!(cloud, Cloud::Gce);
                let mut o = NewClusterOptions::new(NAME, STORE)
                    .with_cloud(cloud)
                    .with_zones([if gce { "us-test1-a" } else { "us-test-1a" }])
                    .with_topology(topology)
                    .with_dns(dns)
                    .with_image(Some("image-1".into()))
                    .with_kubernetes_version("v1.34.1");
                if gce {
                    o = o.with_project(Some("testproject".into()));
                }
                // A private cluster gets a bastion and an internal API load balancer.
                let private = matches!(topology, Topology::Private);
                o = o.with_bastion(private).with_api_load_balancer_type(
                    private.then_some(kops_model::LoadBalancerType::Internal),
                );
                let what = format!("{cloud:?} {topology:?} {dns:?}");
                let (cluster, groups) = new_cluster(&o).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(
                    groups.iter().any(|g| g.name() == "bastions"),
                    private,
                    "{what}"
                );
                let opts = kops_api::defaults::PopulateOptions::default();
                if let Err(e) = kops_model::complete(&cluster, &groups, &opts) {
                    let mut chain = e.to_string();
                    let mut source = std::error::Error::source(&e);
                    while let Some(s) = source {
                        chain.push_str(&format!(": {s}"));
                        source = s.source();
                    }
                    panic!("{what}: {chain}");
                }
            }
        }
    }
}

mod new_instance_group {
    use kops_api::channel::Channel;
    use kops_api::defaults::PopulateOptions;
    use kops_model::{
        Cloud, Error, GroupRole, NewClusterOptions, NewInstanceGroupOptions, Topology, new_cluster,
        new_instance_group,
    };

    const CHANNEL: &str = "spec:\n  images:\n  - name: aws-image-amd64\n    providerID: aws\n    architectureID: amd64\n    kubernetesVersion: '>=1.30.0'\n  - name: aws-image-arm64\n    providerID: aws\n    architectureID: arm64\n    kubernetesVersion: '>=1.30.0'\n  - name: gce-image\n    providerID: gce\n    architectureID: amd64\n    kubernetesVersion: '>=1.30.0'\n";

    fn populate() -> PopulateOptions {
        PopulateOptions::default().with_channel(Channel::parse(CHANNEL).unwrap())
    }

    fn cluster(
        cloud: Cloud,
        topology: Topology,
    ) -> (
        kops_api::v1alpha2::Cluster,
        Vec<kops_api::v1alpha2::InstanceGroup>,
    ) {
        let gce = cloud == Cloud::Gce;
        let zones: &[&str] = if gce {
            &["us-test1-a", "us-test1-b"]
        } else {
            &["us-test-1a", "us-test-1b"]
        };
        let mut o = NewClusterOptions::new("ig.example.com", "memfs://store")
            .with_cloud(cloud)
            .with_zones(zones.iter().copied())
            .with_topology(topology)
            .with_kubernetes_version("v1.34.1");
        if gce {
            o = o.with_project(Some("testproject".into()));
        }
        new_cluster(&o).unwrap()
    }

    fn field_of(e: &Error) -> &str {
        match e {
            Error::Invalid { field, .. } => field,
            other => panic!("not an invalid-field error: {other}"),
        }
    }

    #[test]
    fn a_node_group_carries_what_kops_writes() {
        let (c, groups) = cluster(Cloud::Aws, Topology::Private);
        let o = NewInstanceGroupOptions::new("nodes-extra").with_subnets(["us-test-1b"]);
        let g = new_instance_group(&c, &groups, &o, &populate()).unwrap();
        assert_eq!(g.name(), "nodes-extra");
        let labels = g.metadata.labels.as_ref().unwrap();
        assert_eq!(labels["kops.k8s.io/cluster"], "ig.example.com");
        let s = &g.spec;
        assert_eq!(s.role.as_deref(), Some("Node"));
        assert_eq!(s.subnets.as_deref(), Some(&["us-test-1b".to_owned()][..]));
        assert_eq!(s.machine_type.as_deref(), Some("t3.medium"));
        assert_eq!(s.image.as_deref(), Some("aws-image-amd64"));
        assert_eq!((s.min_size, s.max_size), (Some(2), Some(2)));
        assert_eq!(s.manager.as_deref(), Some("CloudGroup"));
        let node_labels = s.node_labels.as_ref().unwrap();
        assert_eq!(node_labels.len(), 1);
        assert_eq!(node_labels["kops.k8s.io/instancegroup"], "nodes-extra");
        assert!(s.zones.is_none());
        // What is stored is still the sparse spec: nothing the cluster derives (kubelet).
        assert!(s.kubelet.is_none());
        // The whole cluster, with the new group, completes.
        let mut all = groups.clone();
        all.push(g);
        kops_model::complete(&c, &all, &populate()).unwrap();
    }

    #[test]
    fn subnets_left_out_are_inferred_as_kops_does() {
        // Private topology: the private subnets, never the utility ones.
        let (c, groups) = cluster(Cloud::Aws, Topology::Private);
        let g = new_instance_group(
            &c,
            &groups,
            &NewInstanceGroupOptions::new("workers"),
            &populate(),
        )
        .unwrap();
        assert_eq!(
            g.spec.subnets.unwrap(),
            vec!["us-test-1a".to_owned(), "us-test-1b".to_owned()]
        );
        // A bastion gets one machine.
        let b = new_instance_group(
            &c,
            &groups,
            &NewInstanceGroupOptions::new("bastions")
                .with_role(GroupRole::Bastion)
                .with_subnets(["utility-us-test-1a"]),
            &populate(),
        )
        .unwrap();
        assert_eq!((b.spec.min_size, b.spec.max_size), (Some(1), Some(1)));
        assert_eq!(b.spec.machine_type.as_deref(), Some("t3.micro"));
        assert_eq!(b.spec.role.as_deref(), Some("Bastion"));
    }

    #[test]
    fn bad_input_names_its_field() {
        let (c, groups) = cluster(Cloud::Aws, Topology::Public);
        let p = populate();
        let e = new_instance_group(
            &c,
            &groups,
            &NewInstanceGroupOptions::new("x").with_subnets(["us-test-1z"]),
            &p,
        )
        .unwrap_err();
        assert_eq!(field_of(&e), "subnet");
        assert!(e.to_string().contains("us-test-1z"), "{e}");
        assert!(e.to_string().contains("us-test-1a, us-test-1b"), "{e}");
        let taken = groups[0].name().to_owned();
        let e =
            new_instance_group(&c, &groups, &NewInstanceGroupOptions::new(&taken), &p).unwrap_err();
        assert_eq!(field_of(&e), "name");
        assert!(e.to_string().contains("already exists"), "{e}");
        // A control-plane group must name its subnets (kOps' rule).
        let e = new_instance_group(
            &c,
            &groups,
            &NewInstanceGroupOptions::new("cp-2").with_role(GroupRole::ControlPlane),
            &p,
        )
        .unwrap_err();
        let mut chain = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            chain.push_str(&format!(": {s}"));
            source = s.source();
        }
        assert!(chain.contains("spec.subnets"), "{chain}");
        assert!(chain.contains("cp-2"), "{chain}");
        assert_eq!(field_of(&GroupRole::parse("worker").unwrap_err()), "role");
        assert_eq!(
            GroupRole::parse("Control-Plane").unwrap(),
            GroupRole::ControlPlane
        );
        assert_eq!(GroupRole::parse("master").unwrap(), GroupRole::ControlPlane);
    }

    #[test]
    fn a_gce_group_needs_its_zones_and_gets_the_metadata_proxy_label() {
        let (c, groups) = cluster(Cloud::Gce, Topology::Public);
        let p = populate();
        let no_zone = NewInstanceGroupOptions::new("nodes-b");
        let e = new_instance_group(&c, &groups, &no_zone, &p).unwrap_err();
        assert_eq!(field_of(&e), "zone");
        let g = new_instance_group(&c, &groups, &no_zone.with_zones(["us-test1-b"]), &p).unwrap();
        let labels = g.spec.node_labels.as_ref().unwrap();
        assert_eq!(labels["cloud.google.com/metadata-proxy-ready"], "true");
        assert_eq!(
            g.spec.zones.as_deref(),
            Some(&["us-test1-b".to_owned()][..])
        );
        assert_eq!(g.spec.machine_type.as_deref(), Some("e2-medium"));
        assert_eq!(g.spec.image.as_deref(), Some("gce-image"));
    }
}

/// `UpdateCluster::assets` lists what the machines download, remapped through
/// `spec.assets`: every image and file once, each pulled from where the stored files say.
#[tokio::test]
async fn assets_name_every_image_and_file_where_machines_download_them() {
    let (mut cluster, groups) = spec();
    let assets = cluster.spec.assets.get_or_insert_default();
    assets.container_registry = Some("registry.example.com".into());
    assets.file_repository = Some("https://files.example.com/kops".into());
    let (cloud, store, update) = setup_spec(&cluster, &groups, true).await;
    let api: &dyn AwsCloud = &cloud;
    let assets = update.assets();

    let apiserver = assets
        .images
        .iter()
        .find(|i| i.canonical == "registry.k8s.io/kube-apiserver:v1.34.1")
        .unwrap_or_else(|| panic!("{:#?}", assets.images));
    assert_eq!(
        apiserver.download,
        "registry.example.com/kube-apiserver:v1.34.1"
    );
    assert!(assets.images.len() > 5, "{:#?}", assets.images);
    let mut seen = std::collections::BTreeSet::new();
    for i in &assets.images {
        assert!(seen.insert(&i.canonical), "{} twice", i.canonical);
        assert!(
            i.download.starts_with("registry.example.com/"),
            "{i:?} not remapped"
        );
    }
    let kubelet = assets
        .files
        .iter()
        .find(|f| f.canonical == "https://dl.k8s.io/release/v1.34.1/bin/linux/amd64/kubelet")
        .unwrap_or_else(|| panic!("{:#?}", assets.files));
    assert_eq!(
        kubelet.download,
        "https://files.example.com/kops/release/v1.34.1/bin/linux/amd64/kubelet"
    );
    assert!(
        assets.files.iter().all(|f| f.sha.len() == 64
            && f.sha.bytes().all(|b| b.is_ascii_hexdigit())
            && f.download.starts_with("https://files.example.com/kops/")),
        "{:#?}",
        assets.files
    );
    assert!(
        assets
            .files
            .iter()
            .any(|f| f.canonical.ends_with("/linux/arm64/nodeup")
                && f.canonical.contains(DEFAULT_KOPS_RELEASE)),
        "{:#?}",
        assets.files
    );

    // What the machines are told to pull and download is in the files the update stores.
    let plan = update.plan(api).await.unwrap();
    update
        .apply(api, &registry(&store), &plan, ApplyOptions::default())
        .await
        .unwrap();
    // The stored manifests and configs; the completed spec names some images before the
    // addons remap them, as kOps' does.
    let mut stored = String::new();
    for o in store.list(&format!("{NAME}/")).await.unwrap() {
        if o.path.ends_with("cluster-completed.spec") {
            continue;
        }
        let data = store.get_opt(&o.path).await.unwrap().unwrap().data;
        stored.push_str(&String::from_utf8_lossy(&data));
    }
    for i in &assets.images {
        assert!(
            stored.contains(&i.download),
            "{} in no stored file",
            i.download
        );
    }
    // ...and every image a stored manifest runs is one of them.
    let downloads: std::collections::BTreeSet<&str> =
        assets.images.iter().map(|i| i.download.as_str()).collect();
    for line in stored.lines() {
        let Some((_, image)) = line.split_once("image: ") else {
            continue;
        };
        let image = image.trim().trim_matches(['"', '\'']);
        assert!(downloads.contains(image), "{image} is not listed");
    }
    // The nodeup binary is in the machines' user data, every other file in nodeup's config.
    let user_data: String = update
        .graph()
        .nodes()
        .iter()
        .filter(|n| n.key().kind() == "LaunchTemplate")
        .map(|n| format!("{:?}", n.fields()))
        .collect();
    for f in &assets.files {
        let place = if f.canonical.ends_with("/nodeup") {
            &user_data
        } else {
            &stored
        };
        assert!(place.contains(&f.sha), "{} named nowhere", f.canonical);
    }
}

/// `create cluster`'s access, bastion, labels, volumes and load balancer options land in
/// the spec as kOps' `NewCluster` puts them, and the AWS model builds the bastion and an
/// internal API load balancer from them.
#[tokio::test]
async fn new_cluster_options_shape_the_spec_and_the_model() {
    use kops_model::{LoadBalancerType, Topology};
    let labels: std::collections::BTreeMap<String, String> =
        [("team".to_owned(), "platform".to_owned())].into();
    let o = NewClusterOptions::new(NAME, STORE)
        .with_zones(["us-test-1a"])
        .with_topology(Topology::Private)
        .with_dns(DnsType::Private)
        .with_image(Some("ami-00000001".into()))
        .with_kubernetes_version("v1.34.1")
        .with_bastion(true)
        .with_api_load_balancer_type(Some(LoadBalancerType::Internal))
        .with_admin_access(vec!["10.0.0.0/8".into()])
        .with_cloud_labels(labels.clone())
        .with_channel(Some("alpha".into()))
        .with_node_volume_size(Some(64))
        .with_control_plane_volume_size(Some(32))
        .with_encrypt_etcd_storage(Some(false));
    let (cluster, groups) = new_cluster(&o).unwrap();
    let spec = &cluster.spec;
    assert_eq!(
        spec.kubernetes_api_access.as_deref(),
        Some(&["10.0.0.0/8".to_owned()][..])
    );
    assert_eq!(
        spec.ssh_access, spec.kubernetes_api_access,
        "SSH defaults to the API's"
    );
    assert_eq!(spec.cloud_labels.as_ref(), Some(&labels));
    assert_eq!(spec.channel.as_deref(), Some("alpha"));
    let lb = spec
        .api
        .as_ref()
        .and_then(|a| a.load_balancer.as_ref())
        .unwrap();
    assert_eq!(lb.type_.as_deref(), Some("Internal"));
    let bastion = spec
        .topology
        .as_ref()
        .and_then(|t| t.bastion.as_ref())
        .unwrap();
    assert_eq!(
        bastion.bastion_public_name.as_deref(),
        Some(format!("bastion.{NAME}").as_str())
    );
    let etcd = spec.etcd_clusters.as_ref().unwrap();
    assert!(
        etcd.iter()
            .flat_map(|e| e.etcd_members.iter().flatten())
            // Not encrypted: kOps leaves the field out.
            .all(|m| m.encrypted_volume.is_none())
    );
    let size = |prefix: &str| {
        groups
            .iter()
            .find(|g| g.name().starts_with(prefix))
            .unwrap()
            .spec
            .root_volume_size
    };
    assert_eq!(
        (size("nodes-"), size("control-plane-")),
        (Some(64), Some(32))
    );
    let b = groups.iter().find(|g| g.name() == "bastions").unwrap();
    assert_eq!(b.spec.role.as_deref(), Some("Bastion"));
    // As kOps: in the private subnets, reached through its load balancer.
    assert_eq!(
        b.spec.subnets.as_deref(),
        Some(&["us-test-1a".to_owned()][..])
    );

    // The model: the bastion's autoscaling group, an internal API load balancer.
    // The mock has no hosted zone: the model is built without DNS (and so without the
    // bastion's DNS name).
    let (mut cluster, groups) = (cluster, groups);
    cluster
        .spec
        .topology
        .as_mut()
        .unwrap()
        .dns
        .as_mut()
        .unwrap()
        .type_ = Some("None".into());
    cluster.spec.topology.as_mut().unwrap().bastion = None;
    let (_, _, update) = setup_spec(&cluster, &groups, true).await;
    let keys: Vec<String> = update
        .graph()
        .nodes()
        .iter()
        .map(|n| n.key().to_string())
        .collect();
    assert!(
        keys.iter()
            .any(|k| k == &format!("AutoscalingGroup/bastions.{NAME}")),
        "{keys:#?}"
    );
    let nlb = update
        .graph()
        .nodes()
        .iter()
        .find(|n| n.key().kind() == "NetworkLoadBalancer" && n.key().name().starts_with("api"))
        .unwrap_or_else(|| panic!("{keys:#?}"));
    let fields = format!("{:?}", nlb.fields());
    assert!(fields.contains(r#"("internal", Bool(true))"#), "{fields}");
    assert!(
        fields.contains(r#"("team", String("platform"))"#),
        "the cloud labels: {fields}"
    );
}

/// What `create cluster` stores, as kOps' `NewCluster`, its command and `PerformAssignments`
/// write it (the facts of kOps' create-cluster cases): no DNS and the API behind an NLB by
/// default, a node per zone, etcd's requests and member names, `Master` groups labelled
/// with their name, cilium without kube-proxy, and the assigned CIDRs.
mod writes_what_kops_writes {
    use kops_api::defaults::PopulateOptions;
    use kops_api::v1alpha2::{Cluster, InstanceGroup};
    use kops_model::{
        Cloud, InstanceManager, NewClusterOptions, Topology, new_cluster, perform_assignments,
    };
    use serde_json::{Value, json};

    fn created(o: &NewClusterOptions) -> (Value, Vec<Value>) {
        let (mut cluster, groups): (Cluster, Vec<InstanceGroup>) = new_cluster(o).unwrap();
        let (full, _) = kops_model::complete(&cluster, &groups, &PopulateOptions::default())
            .unwrap_or_else(|e| panic!("{e:?}"));
        perform_assignments(&mut cluster, &Cluster::from(&full));
        (
            serde_json::to_value(&cluster).unwrap()["spec"].clone(),
            groups
                .iter()
                .map(|g| serde_json::to_value(g).unwrap())
                .collect(),
        )
    }

    fn aws(zones: &[&str]) -> NewClusterOptions {
        NewClusterOptions::new("c.example.com", "memfs://tests")
            .with_zones(zones.iter().copied())
            .with_kubernetes_version("v1.34.1")
            .with_image(Some("image-1".into()))
    }

    #[test]
    fn a_minimal_cluster() {
        let (spec, groups) = created(&aws(&["us-test-1a"]));
        assert_eq!(spec["topology"], json!({ "dns": { "type": "None" } }));
        assert_eq!(
            spec["api"],
            json!({ "loadBalancer": { "class": "Network", "type": "Public" } })
        );
        assert_eq!(spec["networkCIDR"], "172.20.0.0/16");
        assert_eq!(spec["nonMasqueradeCIDR"], "100.64.0.0/10");
        assert_eq!(spec["subnets"][0]["cidr"], "172.20.0.0/16");
        assert_eq!(
            spec["networking"],
            json!({ "cilium": { "enableNodePort": true } })
        );
        assert_eq!(spec["kubeProxy"], json!({ "enabled": false }));
        let etcd = &spec["etcdClusters"];
        assert_eq!(
            (
                &etcd[0]["name"],
                &etcd[0]["cpuRequest"],
                &etcd[1]["cpuRequest"],
                &etcd[1]["memoryRequest"]
            ),
            (
                &json!("main"),
                &json!("200m"),
                &json!("100m"),
                &json!("100Mi")
            )
        );
        assert_eq!(
            etcd[0]["etcdMembers"],
            json!([{ "encryptedVolume": true, "instanceGroup": "control-plane-us-test-1a", "name": "a" }])
        );
        assert_eq!(groups[0]["spec"]["role"], "Master");
        for g in &groups {
            assert_eq!(
                g["spec"]["nodeLabels"]["kops.k8s.io/instancegroup"],
                g["metadata"]["name"]
            );
        }
    }

    #[test]
    fn three_zones_get_a_node_each_and_an_etcd_member_per_control_plane() {
        let (spec, groups) = created(
            &aws(&["us-test-1a", "us-test-1b", "us-test-1c"]).with_control_plane_count(Some(3)),
        );
        let names: Vec<&Value> = spec["etcdClusters"][0]["etcdMembers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| &m["name"])
            .collect();
        assert_eq!(names, [&json!("a"), &json!("b"), &json!("c")]);
        let nodes: Vec<(&Value, &Value)> = groups
            .iter()
            .filter(|g| g["spec"]["role"] == "Node")
            .map(|g| (&g["metadata"]["name"], &g["spec"]["minSize"]))
            .collect();
        assert_eq!(nodes.len(), 3);
        assert!(nodes.iter().all(|(_, n)| **n == json!(1)), "{nodes:?}");
        // Three control planes in one zone: members named after what tells them apart.
        let (spec, _) = created(&aws(&["us-test-1a"]).with_control_plane_count(Some(3)));
        let names: Vec<&Value> = spec["etcdClusters"][0]["etcdMembers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| &m["name"])
            .collect();
        assert_eq!(
            names,
            [&json!("etcd-1"), &json!("etcd-2"), &json!("etcd-3")]
        );
    }

    #[test]
    fn a_private_cluster_puts_its_bastion_in_the_private_subnets() {
        let (spec, groups) = created(
            &aws(&["us-test-1a"])
                .with_topology(Topology::Private)
                .with_bastion(true),
        );
        let subnets: Vec<(&Value, &Value)> = spec["subnets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (&s["name"], &s["cidr"]))
            .collect();
        assert_eq!(
            subnets,
            [
                (&json!("us-test-1a"), &json!("172.20.128.0/17")),
                (&json!("utility-us-test-1a"), &json!("172.20.0.0/20"))
            ]
        );
        let bastion = groups
            .iter()
            .find(|g| g["spec"]["role"] == "Bastion")
            .unwrap();
        assert_eq!(bastion["spec"]["subnets"], json!(["us-test-1a"]));
        // No DNS: no bastion name.
        assert!(spec["topology"].get("bastion").is_none());
    }

    #[test]
    fn gce_encrypts_nothing_by_default_and_has_a_cloud_config() {
        let (spec, groups) = created(
            &NewClusterOptions::new("c.example.com", "memfs://tests")
                .with_cloud(Cloud::Gce)
                .with_project(Some("testproject".into()))
                .with_zones(["us-test1-a"])
                .with_kubernetes_version("v1.34.1")
                .with_image(Some("image-1".into())),
        );
        assert_eq!(spec["cloudConfig"], json!({}));
        assert_eq!(
            spec["etcdClusters"][0]["etcdMembers"],
            json!([{ "instanceGroup": "control-plane-us-test1-a", "name": "a" }])
        );
        assert_eq!(spec["api"], json!({ "loadBalancer": { "type": "Public" } }));
        assert_eq!(spec["subnets"][0]["name"], "us-test1");
        assert!(spec.get("networkCIDR").is_none());
        assert_eq!(groups[0]["spec"]["zones"], json!(["us-test1-a"]));
    }

    #[test]
    fn flags_land_where_kops_puts_them() {
        let mut o = aws(&["us-test-1a"]);
        o.kubernetes_feature_gates = vec!["+Alpha".into(), "-Beta".into(), "Gamma".into()];
        o.discovery_store = Some("s3://discovery/".into());
        o.ipv6 = true;
        o.node_security_groups = vec!["sg-1".into()];
        o.control_plane_volume_type = Some("io1".into());
        o.api_ssl_certificate = Some("arn:aws:acm:cert".into());
        o.node_size = Some("t3.medium,t3.large".into());
        o.etcd_storage_type = Some("gp3".into());
        let (spec, groups) = created(&o);
        let gates = json!({ "Alpha": "true", "Beta": "false", "Gamma": "true" });
        for component in [
            "kubelet",
            "kubeAPIServer",
            "kubeControllerManager",
            "kubeProxy",
            "kubeScheduler",
        ] {
            assert_eq!(spec[component]["featureGates"], gates, "{component}");
        }
        assert_eq!(
            spec["serviceAccountIssuerDiscovery"],
            json!({ "discoveryStore": "s3://discovery/c.example.com", "enableAWSOIDCProvider": true })
        );
        assert_eq!(spec["iam"]["useServiceAccountExternalPermissions"], true);
        // IPv6: private by default, dual-stack subnets for the control plane, an IPv6 block
        // per subnet, no masquerading, an external cloud controller manager.
        assert_eq!(spec["nonMasqueradeCIDR"], "::/0");
        assert_eq!(spec["cloudControllerManager"], json!({}));
        let subnets: Vec<(&Value, &Value)> = spec["subnets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (&s["type"], &s["ipv6CIDR"]))
            .collect();
        assert_eq!(
            subnets,
            [
                (&json!("Private"), &json!("/64#0")),
                (&json!("DualStack"), &json!("/64#1")),
                (&json!("Utility"), &json!("/64#2"))
            ]
        );
        assert_eq!(
            spec["api"]["loadBalancer"]["sslCertificate"],
            "arn:aws:acm:cert"
        );
        assert_eq!(
            spec["etcdClusters"][0]["etcdMembers"][0]["volumeType"],
            "gp3"
        );
        let cp = &groups[0]["spec"];
        assert_eq!(cp["subnets"], json!(["dualstack-us-test-1a"]));
        assert_eq!(cp["rootVolumeType"], "io1");
        let node = &groups[1]["spec"];
        assert_eq!(node["additionalSecurityGroups"], json!(["sg-1"]));
        assert_eq!(node["machineType"], "t3.medium");
        assert_eq!(
            node["mixedInstancesPolicy"]["instances"],
            json!(["t3.medium", "t3.large"])
        );

        let mut o = aws(&["us-test-1a"]);
        o.instance_manager = InstanceManager::Karpenter;
        let err = new_cluster(&o).unwrap_err();
        assert!(err.to_string().contains("--discovery-store"), "{err}");
        o.discovery_store = Some("s3://discovery".into());
        o.node_count = Some(4);
        let (spec, groups) = created(&o);
        assert_eq!(spec["karpenter"], json!({ "enabled": true }));
        let nodes = &groups[1];
        assert_eq!(
            (
                &nodes["metadata"]["name"],
                &nodes["spec"]["manager"],
                &nodes["spec"]["minSize"]
            ),
            (&json!("nodes"), &json!("Karpenter"), &json!(4))
        );
        assert!(nodes["spec"].get("maxSize").is_none());
    }
}

/// `create cluster --api-server-count`: kOps' `apiserver-<zone>` groups, the count split
/// between the zones; on the mock their machines are built (launch template, autoscaling
/// group, IAM, nodeup config) and registered with the API's load balancer, and the plan
/// applies and converges.
#[tokio::test]
async fn api_server_groups_are_created_and_built_end_to_end() {
    use kops_model::GroupRole;
    let o = NewClusterOptions::new(NAME, STORE)
        .with_zones(["us-test-1a", "us-test-1b"])
        .with_kubernetes_version("v1.34.1")
        .with_api_server_count(Some(3))
        .with_api_server_size(Some("m6i.large".into()));
    let (_, groups) = new_cluster(&o).unwrap();
    let api: Vec<(String, Option<i32>, Option<String>)> = groups
        .iter()
        .filter(|g| g.spec.role.as_deref() == Some("APIServer"))
        .map(|g| {
            (
                g.name().to_owned(),
                g.spec.min_size,
                g.spec.machine_type.clone(),
            )
        })
        .collect();
    assert_eq!(
        api,
        [
            (
                "apiserver-us-test-1a".to_owned(),
                Some(2),
                Some("m6i.large".to_owned())
            ),
            (
                "apiserver-us-test-1b".to_owned(),
                Some(1),
                Some("m6i.large".to_owned())
            ),
        ]
    );
    assert_eq!(GroupRole::parse("apiserver").unwrap().as_str(), "APIServer");

    // One zone on the mock: plan, apply, converge.
    let o = NewClusterOptions::new(NAME, STORE)
        .with_zones(["us-test-1a"])
        .with_image(Some("ami-00000001".into()))
        .with_dns(DnsType::Public)
        .with_api_load_balancer_type(Some(kops_model::LoadBalancerType::Public))
        .with_kubernetes_version("v1.34.1")
        .with_api_server_count(Some(2));
    let (cluster, groups) = new_cluster(&o).unwrap();
    // API servers are found through DNS (kOps refuses them without): a hosted zone.
    let cloud = kops_mock::fixture::Fixture::parse(
        "aws:\n  region: us-test-1\n  zones: [us-test-1a]\n  route53:\n    hostedZones:\n    - {id: /hostedzone/ZENTRY, name: example.com., private: false}\n  ec2:\n    images:\n    - {imageId: ami-00000001, name: entry, ownerId: '1', rootDeviceName: /dev/xvda}\n",
        "apiserver test",
    )
    .unwrap()
    .build()
    .unwrap();
    let store = Arc::new(MemoryStore::new());
    let opts = DiscoverOptions::default().with_state_store(store.clone(), STORE);
    let ctx = discover(&cloud, &cluster, &groups, &opts).await.unwrap();
    let update = UpdateCluster::new(
        ctx,
        UpdateOptions::default()
            .with_lock_holder("apiserver test")
            .with_unreadable_config_base(true),
    )
    .unwrap();
    let keys: Vec<String> = update
        .graph()
        .nodes()
        .iter()
        .map(|n| n.key().to_string())
        .collect();
    for want in [
        format!("AutoscalingGroup/apiserver-us-test-1a.apiservers.{NAME}"),
        format!("LaunchTemplate/apiserver-us-test-1a.apiservers.{NAME}"),
        "ManagedFile/nodeupconfig-apiserver-us-test-1a".to_owned(),
    ] {
        assert!(keys.contains(&want), "no {want}: {keys:#?}");
    }
    let asg = update
        .graph()
        .nodes()
        .iter()
        .find(|n| {
            n.key().to_string()
                == format!("AutoscalingGroup/apiserver-us-test-1a.apiservers.{NAME}")
        })
        .unwrap();
    let fields = format!("{:?}", asg.fields());
    assert!(
        fields.contains("tcp-"),
        "not behind the API's target group: {fields}"
    );
    let api: &dyn AwsCloud = &cloud;
    let plan = Box::pin(update.plan(api)).await.unwrap();
    Box::pin(update.apply(api, &registry(&store), &plan, ApplyOptions::default()))
        .await
        .unwrap();
    let again = Box::pin(update.plan(api)).await.unwrap();
    assert!(!again.plan.has_changes(), "{}", again.plan.render_text());
}
