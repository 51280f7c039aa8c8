//! The cloud reads made outside the executor's tasks (discovery, the listings of orphans
//! and of `delete cluster`), each retried under one [`RetryPolicy`] when the cloud
//! throttles it or is unavailable: the executor's policy, so a throttled describe is
//! treated the same wherever it is made.

use kops_tasks::retry::RetryPolicy;

use super::cloud::{
    AccountInfo, AwsCloud, AwsCloudExt, CloudError, CloudResult, HostedZone, Image, ListQuery,
    Resource, ResourceType, ZoneQuery,
};

/// `cloud`'s read calls, retried under `policy`.
#[derive(Clone, Copy)]
pub(crate) struct Reads<'a> {
    cloud: &'a dyn AwsCloud,
    policy: &'a RetryPolicy,
}

impl<'a> Reads<'a> {
    pub(crate) fn new(cloud: &'a dyn AwsCloud, policy: &'a RetryPolicy) -> Self {
        Reads { cloud, policy }
    }

    pub(crate) async fn list(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        let what = format!("list {}", query.resource_type);
        self.policy
            .run(&what, CloudError::is_retryable, || self.cloud.list(query))
            .await
    }

    /// [`AwsCloud::list_digests`]: the query a task's find by parent makes.
    pub(crate) async fn list_digests(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        let what = format!("list {}", query.resource_type);
        self.policy
            .run(&what, CloudError::is_retryable, || {
                self.cloud.list_digests(query)
            })
            .await
    }

    /// [`AwsCloud::list_tagged`]: the query a task's find by name tag makes.
    pub(crate) async fn list_tagged(
        &self,
        rt: ResourceType,
        tags: &[(&str, &str)],
    ) -> CloudResult<Vec<std::sync::Arc<Resource>>> {
        let what = format!("list {rt} by tags");
        self.policy
            .run(&what, CloudError::is_retryable, || {
                self.cloud.list_tagged(rt, tags)
            })
            .await
    }

    pub(crate) async fn get(&self, rt: ResourceType, id: &str) -> CloudResult<Option<Resource>> {
        let what = format!("get {rt} {id}");
        self.policy
            .run(&what, CloudError::is_retryable, || self.cloud.get(rt, id))
            .await
    }

    pub(crate) async fn list_for_cluster(
        &self,
        rt: ResourceType,
        cluster: &str,
    ) -> CloudResult<Vec<Resource>> {
        let what = format!("list {rt} of {cluster}");
        self.policy
            .run(&what, CloudError::is_retryable, || {
                self.cloud.list_for_cluster(rt, cluster)
            })
            .await
    }

    pub(crate) async fn hosted_zones(&self, query: &ZoneQuery) -> CloudResult<Vec<HostedZone>> {
        self.policy
            .run("list hosted zones", CloudError::is_retryable, || {
                self.cloud.hosted_zones(query)
            })
            .await
    }

    pub(crate) async fn zones(&self) -> CloudResult<Vec<String>> {
        self.policy
            .run("list zones", CloudError::is_retryable, || {
                self.cloud.zones()
            })
            .await
    }

    pub(crate) async fn account(&self) -> CloudResult<AccountInfo> {
        self.policy
            .run("read the account", CloudError::is_retryable, || {
                self.cloud.account()
            })
            .await
    }

    pub(crate) async fn resolve_image(&self, image: &str) -> CloudResult<Image> {
        let what = format!("resolve image {image}");
        self.policy
            .run(&what, CloudError::is_retryable, || {
                self.cloud.resolve_image(image)
            })
            .await
    }
}
