// kops-model features: mock, aws-sdk
//! kops-rs embedded: a cluster's whole life, with `kops-model` as the only kops dependency.
//! On a mock cloud by default; with `KOPS_STATE_STORE=s3://BUCKET`, on the AWS the SDK's
//! environment names (`AWS_ENDPOINT_URL`, `AWS_REGION`, ...; `EMBED_IMAGE`: the image).
use std::sync::Arc;

use kops_model::aws::{self, ApplyOptions, DeleteOptions, DiscoverOptions, UpdateCluster};
use kops_model::cloud_aws::{AwsBackendBuilder, AwsCloud};
use kops_model::statestore::{Registry, StoreOptions, SystemClock, open};
use kops_model::{DnsType, NewClusterOptions, UpdateOptions, channel, new_cluster};

const NAME: &str = "embed.example.com";

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let state = std::env::var("KOPS_STATE_STORE").unwrap_or("memfs://state".into());
    // The cloud: AWS for an s3:// store, else an in-memory account holding the images of
    // kops-model's default channel (kOps' stable channel).
    let cloud: Box<dyn AwsCloud> = match state.starts_with("s3://") {
        true => Box::new(AwsBackendBuilder::from_env().await.build()?),
        false => Box::new(channel::mock_aws(Default::default(), &channel::stable())?),
    };
    let cloud = cloud.as_ref();
    // 1. Create: the Cluster and InstanceGroups `kops create cluster` writes, in the cloud's
    //    first zone; the API is reached through its load balancer, so no DNS zone is needed.
    let zones = cloud.zones().await?.into_iter().take(1);
    let image = std::env::var("EMBED_IMAGE").ok();
    let options = NewClusterOptions::new(NAME, &state).with_zones(zones);
    let (cluster, groups) = new_cluster(&options.with_image(image).with_dns(DnsType::None))?;
    // 2. Store them in the state store in kOps' layout, where `kops` itself finds them.
    let store = open(&state, &StoreOptions::from_env_for(&state).await?)?;
    let registry = Registry::new(store.clone(), Arc::new(SystemClock));
    registry.create_cluster(&cluster).await?;
    for group in &groups {
        registry.create_instance_group(NAME, group).await?;
    }
    // 3. Plan: look up what the model needs in the cloud, then diff its tasks against it.
    //    (The machines of a memfs:// store could not read their config: accepted here.)
    let discover = DiscoverOptions::default().with_state_store(store, &state);
    let ctx = aws::discover(cloud, &cluster, &groups, &discover).await?;
    let update = UpdateOptions::default().with_unreadable_config_base(true);
    let update = UpdateCluster::new(ctx, update)?;
    let plan = update.plan(cloud).await?;
    println!("plan: {} changes", plan.plan.changes().count());
    // 4. Apply it, holding the state store's lock; then plan again: nothing is left to do.
    let apply = ApplyOptions::default();
    update.apply(cloud, &registry, &plan, apply).await?;
    let again = update.plan(cloud).await?.plan.changes().count();
    println!("applied; plan again: {again} changes");
    // 5. The same cluster as Terraform: file name -> contents.
    let terraform = update.render_terraform().await?;
    println!("terraform: {} files", terraform.files.len());
    // 6. Delete everything the cluster owns in the cloud, then its state.
    let report = aws::delete_cluster(cloud, NAME, &DeleteOptions::default()).await?;
    registry.delete_cluster(NAME).await?;
    println!("deleted: {} objects", report.deleted.len());
    Ok(())
}
