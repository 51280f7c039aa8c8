//! Each resource type's behaviour in [`MockAws`]'s `AwsCloud` implementation: how it is
//! listed, created, updated in place, deleted and retagged, and which attributes the
//! mock's own state answers for. One [`Kind`] per type, found through [`find`] in
//! [`KINDS`]; `cloud.rs` does what all types share (the caller's attributes kept and
//! overlaid, the immutable-attribute check, filtering and sorting a list).
//!
//! | types | file |
//! | --- | --- |
//! | `Vpc`, `VpcCidrBlock`, `VpcIpv6CidrBlock`, `DhcpOptions`, `DhcpOptionsAssociation`, `InternetGateway`, `EgressOnlyInternetGateway`, `Subnet` | `kinds/network.rs` |
//! | `RouteTable`, `Route`, `RouteTableAssociation`, `ElasticIp`, `NatGateway` | `kinds/routing.rs` |
//! | `SecurityGroup`, `SecurityGroupRule` | `kinds/security.rs` |
//! | `KeyPair`, `LaunchTemplate`, `Volume`, `Instance` | `kinds/compute.rs` |
//! | `AutoscalingGroup`, `WarmPool`, `LifecycleHook` | `kinds/autoscaling.rs` |
//! | `LoadBalancer`, `TargetGroup`, `Listener` | `kinds/elb.rs` |
//! | `IamRole`, `IamRolePolicy`, `IamRolePolicyAttachment`, `IamInstanceProfile`, `IamOidcProvider` | `kinds/iam.rs` |
//! | `HostedZone`, `RecordSet` | `kinds/route53.rs` |
//! | `SqsQueue`, `EventRule`, `EventTarget` | `kinds/messaging.rs` |
//! | `S3Object` | `kinds/s3.rs` |
//!
//! A type not in the table answers every operation with `NotImplemented`.

use kops_cloud_aws::cloud::{
    CloudError, CloudResult, CreateRequest, ListQuery, Resource, ResourceType, UpdateRequest,
};
use kops_tasks::resource::Tags as ResourceTags;

use super::{Attrs, IntoCloud, a_str, invalid};
use crate::{Filter, MockAws, Tags};

mod autoscaling;
mod compute;
mod elb;
mod iam;
mod messaging;
mod network;
mod route53;
mod routing;
mod s3;
mod security;

/// One resource type's operations on the mock. `m` is the mock; `self` is the type.
pub(super) trait Kind: Sync {
    /// The type this implementation serves.
    fn kind(&self) -> ResourceType;

    /// The attributes [`Kind::list`] derives from the mock's state: for these its state is
    /// the truth, also when it has no value, over what a caller sent.
    fn native(&self) -> &'static [&'static str];

    /// The objects of this type the query may select (the caller filters and sorts them).
    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>>;

    /// Makes the object; answers its id.
    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String>;

    /// Changes what can change in place. `Some(id)` when the change moved the object to a
    /// new id (it is answered as is, without retagging). By default nothing changes in
    /// place: any changed attribute is an immutable change.
    fn update(&self, _m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        fixed_in_place(u)
    }

    /// Deletes the object; deleting what is gone succeeds.
    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()>;

    /// Sets the object's tags to `new` (it has `old`). By default through EC2's tags.
    fn retag(&self, m: &MockAws, id: &str, old: &ResourceTags, new: &Tags) -> CloudResult<()> {
        m.retag_ec2(id, old, new).into_cloud()
    }
}

/// Every type the mock serves, one entry each.
static KINDS: &[&dyn Kind] = &[
    &network::Vpc,
    &network::VpcCidrBlock,
    &network::VpcIpv6CidrBlock,
    &network::DhcpOptions,
    &network::DhcpOptionsAssociation,
    &network::InternetGateway,
    &network::EgressOnlyInternetGateway,
    &network::Subnet,
    &routing::RouteTable,
    &routing::Route,
    &routing::RouteTableAssociation,
    &routing::ElasticIp,
    &routing::NatGateway,
    &security::SecurityGroup,
    &security::SecurityGroupRule,
    &compute::KeyPair,
    &compute::LaunchTemplate,
    &compute::Volume,
    &compute::Instance,
    &autoscaling::AutoscalingGroup,
    &autoscaling::WarmPool,
    &autoscaling::LifecycleHook,
    &elb::LoadBalancer,
    &elb::TargetGroup,
    &elb::Listener,
    &iam::IamRole,
    &iam::IamRolePolicy,
    &iam::IamRolePolicyAttachment,
    &iam::IamInstanceProfile,
    &iam::IamOidcProvider,
    &route53::HostedZone,
    &route53::RecordSet,
    &messaging::SqsQueue,
    &messaging::EventRule,
    &messaging::EventTarget,
    &s3::S3Object,
];

/// The implementation of `rt`, or `NotImplemented` naming the operation.
pub(super) fn find(rt: ResourceType, operation: &str) -> CloudResult<&'static dyn Kind> {
    KINDS
        .iter()
        .copied()
        .find(|k| k.kind() == rt)
        .ok_or_else(|| CloudError::NotImplemented {
            operation: format!("{operation} {rt}"),
            implementer: "kops-mock".into(),
        })
}

/// A create request with the lookups every type's create shares.
pub(super) struct Create<'a> {
    pub(super) rt: ResourceType,
    pub(super) req: &'a CreateRequest,
    pub(super) a: &'a Attrs,
}

impl<'a> Create<'a> {
    pub(super) fn new(req: &'a CreateRequest) -> Self {
        Create {
            rt: req.resource_type,
            req,
            a: &req.attrs,
        }
    }

    /// The request's tags, none for a type without tags.
    pub(super) fn tags(&self) -> Tags {
        if self.rt.is_taggable() {
            self.req.tags.clone()
        } else {
            Tags::new()
        }
    }

    /// A required attribute.
    pub(super) fn need(&self, k: &str) -> CloudResult<String> {
        a_str(self.a, k).ok_or_else(|| invalid(self.rt, k, "is required"))
    }

    /// The request's name, or the `name` attribute.
    pub(super) fn name(&self) -> CloudResult<String> {
        self.req
            .name
            .clone()
            .or_else(|| a_str(self.a, "name"))
            .ok_or_else(|| invalid(self.rt, "name", "is required"))
    }

    /// The attribute `k`, or the request's parent.
    pub(super) fn parent_or(&self, k: &str) -> CloudResult<String> {
        a_str(self.a, k)
            .or(self.req.parent.clone())
            .ok_or_else(|| invalid(self.rt, k, "is required"))
    }
}

/// An update request, with the object as it is and the full desired state.
pub(super) struct Update<'a> {
    pub(super) rt: ResourceType,
    pub(super) id: &'a str,
    pub(super) req: &'a UpdateRequest,
    /// The attributes the caller changes.
    pub(super) a: &'a Attrs,
    /// The object before the update.
    pub(super) current: Resource,
    /// What the object has now, with the changes on top.
    pub(super) merged: Attrs,
}

impl Update<'_> {
    /// Whether the caller sets `k` to a value other than the current one.
    pub(super) fn changed(&self, k: &str) -> bool {
        self.a.contains_key(k) && self.current.attrs.get(k) != self.a.get(k)
    }
}

/// The update of a type the mock changes nothing of in place: an error naming what the
/// caller would change.
fn fixed_in_place(u: &Update<'_>) -> CloudResult<Option<String>> {
    let (a, current) = (u.a, &u.current);
    let keys: Vec<&str> = a
        .keys()
        .filter(|k| current.attrs.get(k) != a.get(*k))
        .map(String::as_str)
        .collect();
    if !keys.is_empty() {
        return Err(CloudError::immutable(u.rt.terraform_type(), &keys));
    }
    Ok(None)
}

/// The keys of `old` that `new` no longer has.
fn removed_tags(old: &ResourceTags, new: &Tags) -> Vec<String> {
    old.keys()
        .filter(|k| !new.contains_key(*k))
        .map(str::to_owned)
        .collect()
}

/// A filter on the query's parent under the filter name `name`, or none.
fn parent_filter(q: &ListQuery, name: &str) -> Vec<Filter> {
    match &q.parent {
        Some(p) => vec![Filter::new(name, [p.clone()])],
        None => Vec::new(),
    }
}
