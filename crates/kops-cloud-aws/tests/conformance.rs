//! The cloud conformance suite that `kops-mock` passes (`kops_cloud_aws::conformance`), run
//! against this backend on moto: the real backend and the mock answer the same checks.
//! One test per family, each under fresh names, so a failure names the family.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::future::Future;
use std::pin::Pin;
use std::time::{SystemTime, UNIX_EPOCH};

use kops_cloud_aws::AwsBackend;
use kops_cloud_aws::AwsCloud;
use kops_cloud_aws::conformance;

mod common;
use common::{backend, endpoint, make_bucket};

/// A name prefix no earlier run on the same (never reset) server used.
fn prefix(family: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{family}{:x}", nanos % 0xffff_ffff)
}

type Check = for<'a> fn(
    &'a AwsBackend,
    &'a str,
) -> Pin<
    Box<dyn Future<Output = kops_cloud_aws::cloud::CloudResult<()>> + Send + 'a>,
>;

/// Runs one family of the suite on a large-stack runtime (the SDK's futures are deep in
/// debug builds).
fn run(family: &'static str, region: &'static str, check: Check) {
    let Some(ep) = endpoint() else { return };
    common::run(async move {
        let be = backend(&ep, region);
        let p = prefix(family);
        if let Err(e) = check(&be, &p).await {
            panic!("conformance {family} on moto: {e}");
        }
    });
}

#[test]
fn conformance_account_and_zones() {
    run("acct", "us-east-2", |be, _| {
        Box::pin(conformance::account_and_zones(be as &dyn AwsCloud))
    });
}

#[test]
fn conformance_not_found() {
    run("nf", "us-east-2", |be, _| {
        Box::pin(conformance::not_found(be as &dyn AwsCloud))
    });
}

#[test]
fn conformance_network() {
    run("net", "us-east-2", |be, p| {
        Box::pin(async move {
            conformance::network(be as &dyn AwsCloud, &format!("net-{p}.example.com")).await
        })
    });
}

#[test]
fn conformance_iam() {
    run("iam", "us-east-2", |be, p| {
        Box::pin(async move {
            conformance::iam(be as &dyn AwsCloud, &format!("iam-{p}.example.com")).await
        })
    });
}

#[test]
fn conformance_compute() {
    run("cmp", "us-east-2", |be, p| {
        Box::pin(async move {
            conformance::compute(be as &dyn AwsCloud, &format!("cmp-{p}.example.com")).await
        })
    });
}

#[test]
fn conformance_load_balancer() {
    run("lb", "us-east-2", |be, p| {
        Box::pin(async move {
            conformance::load_balancer(be as &dyn AwsCloud, &format!("lb-{p}.example.com"), p).await
        })
    });
}

#[test]
fn conformance_dns() {
    run("dns", "us-east-2", |be, p| {
        Box::pin(async move {
            conformance::dns(be as &dyn AwsCloud, &format!("dns-{p}.example.com")).await
        })
    });
}

#[test]
fn conformance_messaging() {
    run("msg", "us-east-2", |be, p| {
        Box::pin(async move {
            conformance::messaging(be as &dyn AwsCloud, &format!("msg-{p}.example.com")).await
        })
    });
}

#[test]
fn conformance_objects() {
    run("obj", "us-east-2", |be, p| {
        Box::pin(async move {
            let bucket = "kops-cloud-aws-conformance";
            // The run has an endpoint: `run` returned early otherwise.
            make_bucket(&endpoint().unwrap(), bucket).await;
            conformance::objects(be as &dyn AwsCloud, bucket, &format!("obj-{p}")).await
        })
    });
}

#[test]
fn conformance_cluster_isolation() {
    run("iso", "us-east-2", |be, p| {
        Box::pin(async move {
            conformance::cluster_isolation(
                be as &dyn AwsCloud,
                &format!("a-{p}.example.com"),
                &format!("b-{p}.example.com"),
            )
            .await
        })
    });
}
