// kops-model features: mock, aws-sdk
//! kops-rs embedded: a cluster's whole life, with `kops-model` as the only kops dependency.
//! On the mock cloud by default; with `KOPS_STATE_STORE=s3://BUCKET` (and `EMBED_IMAGE`), on
//! the AWS the SDK's environment names (`AWS_ENDPOINT_URL`, `AWS_REGION`, ...).
use std::sync::Arc;

use kops_model::aws::{
    self, ApplyOptions, DeleteOptions, DiscoverOptions, UpdateCluster, UpdateOptions,
};
use kops_model::statestore::{Registry, StoreOptions, SystemClock, open};
use kops_model::{DnsType, NewClusterOptions, cloud_aws::AwsCloud, new_cluster};

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let state = std::env::var("KOPS_STATE_STORE").unwrap_or("memfs://state".into());
    let image = std::env::var("EMBED_IMAGE").unwrap_or("ami-00000001".into());
    // The cloud: the in-memory mock (holding the image), or the SDK's AWS for an s3:// store.
    let cloud: Box<dyn AwsCloud> = if state.starts_with("s3://") {
        Box::new(
            kops_model::cloud_aws::AwsBackendBuilder::from_env()
                .await
                .build()?,
        )
    } else {
        let zone = "aws:\n  region: us-test-1\n  zones: [us-test-1a]\n  ec2:\n    images:\n";
        let img = format!(
            "    - {{imageId: {image}, name: u, ownerId: '1', rootDeviceName: /dev/xvda}}\n"
        );
        Box::new(
            kops_model::mock::fixture::Fixture::parse(&(zone.to_owned() + &img), "embed")?
                .build()?,
        )
    };
    let zone = cloud.zones().await?.first().cloned().unwrap_or_default();
    // 1. Create: the Cluster and InstanceGroups `kops create cluster` would write (no DNS
    //    zone needed: the API is reached through its load balancer).
    let (cluster, groups) = new_cluster(
        &NewClusterOptions::new("embed.example.com", &state)
            .with_zones([zone.as_str()])
            .with_dns(DnsType::None)
            .with_image(Some(image))
            .with_kubernetes_version("v1.34.1"),
    )?;
    // 2. Store them in the state store, kOps' layout, so `kops` itself can pick them up.
    let store = open(&state, &StoreOptions::from_env_for(&state).await?)?;
    let registry = Registry::new(store.clone(), Arc::new(SystemClock));
    registry.create_cluster(&cluster).await?;
    for g in &groups {
        registry
            .create_instance_group("embed.example.com", g)
            .await?;
    }
    // 3. Plan: look up what the model needs in the cloud, then diff the tasks against it.
    let opts = DiscoverOptions::default().with_state_store(store, &state);
    let ctx = aws::discover(cloud.as_ref(), &cluster, &groups, &opts).await?;
    let update = UpdateCluster::new(
        ctx,
        UpdateOptions::default().with_unreadable_config_base(true),
    )?;
    let plan = update.plan(cloud.as_ref()).await?;
    println!("plan: {} changes", plan.plan.changes().count());
    // 4. Apply it (holding the state store's lock), then plan again: nothing left to do.
    update
        .apply(cloud.as_ref(), &registry, &plan, ApplyOptions::default())
        .await?;
    let again = update.plan(cloud.as_ref()).await?;
    println!(
        "applied; plan again: {} changes",
        again.plan.changes().count()
    );
    // 5. The same cluster as Terraform: file name -> contents.
    let terraform = update.render_terraform().await?;
    println!("terraform: {} files", terraform.files.len());
    // 6. Delete everything the cluster owns in the cloud, then its state.
    let report = aws::delete_cluster(
        cloud.as_ref(),
        "embed.example.com",
        &DeleteOptions::default(),
    )
    .await?;
    registry.delete_cluster("embed.example.com").await?;
    println!("deleted: {} objects", report.deleted.len());
    Ok(())
}
