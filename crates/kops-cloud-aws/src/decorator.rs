//! Decorators of an [`AwsCloud`]: a type in front of another cloud that changes some of
//! its calls ([`Idempotent`](crate::Idempotent) its creates, `kops_mock::ChaosCloud` all
//! of them) implements [`ResourceCloud`] itself and [`Decorator`] for the rest, which
//! gives it [`AwsCloud`]: every account, zone, image, hosted-zone and instance call goes
//! through [`Decorator::before`] and then to [`Decorator::decorated`] unchanged.
//!
//! ```
//! use std::sync::Arc;
//! use kops_cloud_aws::cloud::{
//!     AwsCloud, CloudResult, CreateRequest, ListQuery, Resource, ResourceCloud,
//!     ResourceType, UpdateRequest,
//! };
//! use kops_cloud_aws::decorator::Decorator;
//!
//! /// Refuses every change; reads pass.
//! #[derive(Debug)]
//! struct ReadOnly(Arc<dyn AwsCloud>);
//!
//! #[async_trait::async_trait]
//! impl ResourceCloud<ResourceType> for ReadOnly {
//!     async fn list(&self, q: &ListQuery) -> CloudResult<Vec<Resource>> {
//!         self.0.list(q).await
//!     }
//!     async fn create(&self, _: &CreateRequest) -> CloudResult<Resource> {
//!         Err(kops_cloud_aws::cloud::CloudError::unavailable("read-only"))
//!     }
//!     async fn update(&self, _: &UpdateRequest) -> CloudResult<Resource> {
//!         Err(kops_cloud_aws::cloud::CloudError::unavailable("read-only"))
//!     }
//!     async fn delete(&self, _: ResourceType, _: &str) -> CloudResult<()> {
//!         Err(kops_cloud_aws::cloud::CloudError::unavailable("read-only"))
//!     }
//! }
//!
//! impl Decorator for ReadOnly {
//!     fn decorated(&self) -> &dyn AwsCloud {
//!         self.0.as_ref()
//!     }
//!     fn before(&self, operation: &str, mutation: bool) -> CloudResult<()> {
//!         if mutation {
//!             return Err(kops_cloud_aws::cloud::CloudError::unavailable(operation));
//!         }
//!         Ok(())
//!     }
//! }
//!
//! fn as_cloud(c: ReadOnly) -> Arc<dyn AwsCloud> {
//!     Arc::new(c)
//! }
//! ```

use async_trait::async_trait;

use crate::cloud::{
    AccountInfo, AwsCloud, CloudResult, GroupMembers, HostedZone, Image, ImageQuery, ResourceCloud,
    ResourceType, ZoneQuery,
};

/// A cloud in front of another (see the module docs).
pub trait Decorator: ResourceCloud<ResourceType> {
    /// The cloud the calls go on to.
    fn decorated(&self) -> &dyn AwsCloud;

    /// Runs before each [`AwsCloud`] call is passed on; an error fails the call there.
    /// `operation` is the AWS API (`ec2:DescribeImages`), `mutation` whether the call
    /// changes the cloud. The default lets every call through.
    fn before(&self, operation: &str, mutation: bool) -> CloudResult<()> {
        let _ = (operation, mutation);
        Ok(())
    }
}

#[async_trait]
impl<T: Decorator> AwsCloud for T {
    async fn account(&self) -> CloudResult<AccountInfo> {
        self.before("sts:GetCallerIdentity", false)?;
        self.decorated().account().await
    }

    async fn zones(&self) -> CloudResult<Vec<String>> {
        self.before("ec2:DescribeAvailabilityZones", false)?;
        self.decorated().zones().await
    }

    async fn images(&self, query: &ImageQuery) -> CloudResult<Vec<Image>> {
        self.before("ec2:DescribeImages", false)?;
        self.decorated().images(query).await
    }

    async fn hosted_zones(&self, query: &ZoneQuery) -> CloudResult<Vec<HostedZone>> {
        self.before("route53:ListHostedZones", false)?;
        self.decorated().hosted_zones(query).await
    }

    async fn group_members(&self, names: &[String]) -> CloudResult<Vec<GroupMembers>> {
        self.before("autoscaling:DescribeAutoScalingGroups", false)?;
        self.decorated().group_members(names).await
    }

    async fn detach_instance(&self, group: &str, instance: &str) -> CloudResult<()> {
        self.before("autoscaling:DetachInstances", true)?;
        self.decorated().detach_instance(group, instance).await
    }

    async fn terminate_instance(&self, instance: &str) -> CloudResult<()> {
        self.before("ec2:TerminateInstances", true)?;
        self.decorated().terminate_instance(instance).await
    }

    async fn deregister_instance(&self, group: &str, instance: &str) -> CloudResult<()> {
        self.before("elasticloadbalancing:DeregisterTargets", true)?;
        self.decorated().deregister_instance(group, instance).await
    }

    async fn instance_type_zones(
        &self,
        instance_type: &str,
        zones: &[String],
    ) -> CloudResult<Vec<String>> {
        self.before("ec2:DescribeInstanceTypeOfferings", false)?;
        self.decorated()
            .instance_type_zones(instance_type, zones)
            .await
    }

    async fn default_instance_type(
        &self,
        role: crate::cloud::MachineRole,
        zones: &[String],
        arm64: bool,
    ) -> CloudResult<String> {
        self.decorated()
            .default_instance_type(role, zones, arm64)
            .await
    }
}
