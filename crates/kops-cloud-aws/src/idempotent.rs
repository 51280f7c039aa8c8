//! Creates that never make a second object: [`Idempotent`], a decorator of any
//! [`AwsCloud`].
//!
//! A create can happen and still fail for its caller (the response was lost, the
//! connection reset, tagging after the create failed). Retrying it blindly makes a
//! duplicate, the classic leak of tools driving AWS. This decorator prevents that two
//! ways:
//!
//! - **client tokens** where the API takes one (`CreateLaunchTemplate`,
//!   `CreateNatGateway`, `CreateVolume`, `RunInstances`): the request carries a token
//!   derived from what the task asks for (its type, name, parent, tags and attributes)
//!   and a salt of this process, in the attribute [`CLIENT_TOKEN_ATTR`], which the SDK
//!   backend passes as `ClientToken`. AWS answers a repeat with the first object;
//! - **look before creating again** everywhere else: after a create failed in a way
//!   that may have happened (unavailable, an unclassified error, a timeout), the next
//!   create of the same request first looks for the object (by name for named kinds,
//!   else by its tags and parent), listing a few times since AWS' describes lag behind
//!   its writes, and returns what it finds.
//!
//! The salt keeps a token from matching an object of an earlier process (AWS keeps
//! tokens for a day or more, and a deleted cluster made again must get new objects);
//! across a crash, the next run finds what the dead one made by its tags, as any run
//! does.
//!
//! # The rule of each kind
//!
//! [`create_rule`] says how a lost answer to each kind's create is recovered without a
//! second object ([`CreateRule`]):
//!
//! | rule | kinds |
//! | --- | --- |
//! | [`CreateRule::ClientToken`]: AWS answers a repeat with the first object | launch template, NAT gateway, EBS volume, instance |
//! | [`CreateRule::UniqueName`]: AWS refuses a second object of the name (`AlreadyExists`), the retry's find then finds the first; a create left untagged is found by name | IAM role, instance profile, security group (per VPC), autoscaling group, load balancer, target group, SQS queue, EventBridge rule, key pair, IAM OIDC provider (per URL), hosted zone records |
//! | [`CreateRule::NaturalKey`]: AWS refuses a second object of the key (the subnet of an association, a route's destination, a rule's permission, a role's policy name), or the create is a put that overwrites | route, route-table association, security-group rule, IAM role policy and attachment, DHCP options association, VPC CIDR blocks, lifecycle hook, warm pool, listener, EventBridge target, S3 object, Route 53 record |
//! | [`CreateRule::TagLookup`]: nothing in AWS stops a second object; the create writes the object's unique name tags (`Name` and the cluster's) in the same call (`TagSpecifications`), and after an answer that may have been lost the next create looks the object up by those tags, listing until it is seen or the look-up's bound has passed ([`Idempotent::with_retry`]: the retry policy's delays on its clock, and at least [`Idempotent::with_lookups`] answered listings), before creating again | VPC, subnet, route table, internet gateway, egress-only internet gateway, elastic IP, DHCP options |
//!
//! What a look-up cannot see in time (a process that died between the create and its
//! answer, a listing lagging beyond the bound) leaves a second object of one name: the
//! plan finds it (two objects the cluster owns under one task's name), keeps the one the
//! model's references use and deletes the other after moving what points at it (see
//! `kops_model::aws::orphans`).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use crate::cloud::{
    AwsCloud, CloudError, CloudResult, CreateRequest, ListQuery, Resource, ResourceCloud,
    ResourceType, TagFilter, UpdateRequest,
};
use crate::decorator::Decorator;
use kops_tasks::RetryPolicy;

/// The attribute a create request carries its client token in.
pub const CLIENT_TOKEN_ATTR: &str = "client_token";

/// Types whose create API takes a `ClientToken`.
pub fn takes_client_token(rt: ResourceType) -> bool {
    matches!(
        rt,
        ResourceType::LaunchTemplate
            | ResourceType::NatGateway
            | ResourceType::Volume
            | ResourceType::Instance
    )
}

/// How a create of a kind is kept from making a second object when its answer is lost
/// (see the module docs for the table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CreateRule {
    /// The API takes a `ClientToken`: a repeat returns the first object.
    ClientToken,
    /// The name is unique (per account and region, or per VPC): a repeat is refused.
    UniqueName,
    /// The object's identifying attributes are unique (or the create overwrites): a
    /// repeat is refused or harmless.
    NaturalKey,
    /// Nothing stops a second object: the create writes unique name tags in the same
    /// call, and a create after an uncertain one first looks for the object by them.
    TagLookup,
}

/// The [`CreateRule`] of `rt`'s create.
pub fn create_rule(rt: ResourceType) -> CreateRule {
    use ResourceType as R;
    if takes_client_token(rt) {
        return CreateRule::ClientToken;
    }
    if is_named(rt) || matches!(rt, R::IamOidcProvider | R::HostedZone) {
        return CreateRule::UniqueName;
    }
    match rt {
        R::Vpc
        | R::Subnet
        | R::RouteTable
        | R::InternetGateway
        | R::EgressOnlyInternetGateway
        | R::ElasticIp
        | R::DhcpOptions => CreateRule::TagLookup,
        _ => CreateRule::NaturalKey,
    }
}

/// Types found by their name (unique per account and region, or per VPC).
fn is_named(rt: ResourceType) -> bool {
    use ResourceType as R;
    matches!(
        rt,
        R::IamRole
            | R::IamInstanceProfile
            | R::SecurityGroup
            | R::AutoscalingGroup
            | R::LaunchTemplate
            | R::LoadBalancer
            | R::TargetGroup
            | R::SqsQueue
            | R::EventRule
            | R::KeyPair
    )
}

/// Errors after which the create may have happened.
fn is_ambiguous(e: &CloudError) -> bool {
    matches!(e, CloudError::Unavailable { .. } | CloudError::Other { .. })
}

/// FNV-1a, 128 bits, over `bytes`: stable across processes and Rust versions.
fn fnv128(salt: u128, bytes: &[u8]) -> u128 {
    let mut h: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d ^ salt;
    for b in bytes {
        h ^= u128::from(*b);
        h = h.wrapping_mul(0x0000_0000_0100_0000_0000_0000_0000_013B);
    }
    h
}

fn fingerprint(request: &CreateRequest) -> u128 {
    // Serialization of plain maps is deterministic (BTreeMap order).
    let bytes = serde_json::to_vec(request).unwrap_or_default();
    fnv128(0, &bytes)
}

/// The decorator (see the module docs).
#[derive(Debug)]
pub struct Idempotent {
    inner: Arc<dyn AwsCloud>,
    salt: u128,
    lookups: u32,
    retry: Option<RetryPolicy>,
    uncertain: Mutex<HashSet<u128>>,
}

impl Idempotent {
    /// Wraps `inner` with a random salt.
    pub fn new(inner: Arc<dyn AwsCloud>) -> Self {
        Idempotent::with_salt(inner, rand_salt())
    }

    /// Wraps `inner` with a given salt (tests, or a caller that wants tokens to survive
    /// its own restart).
    pub fn with_salt(inner: Arc<dyn AwsCloud>, salt: u128) -> Self {
        Idempotent {
            inner,
            salt,
            lookups: 8,
            retry: None,
            uncertain: Mutex::new(HashSet::new()),
        }
    }

    /// How many answered listings a look-before-create makes at least before it
    /// concludes the object was not made (at least 1; 8 unless set). Listings that
    /// fail (throttled, unavailable) do not count: they are retried.
    pub fn with_lookups(mut self, n: u32) -> Self {
        self.lookups = n.max(1);
        self
    }

    /// Waits out the listings' delay with `policy`: between two listings of a
    /// look-before-create it sleeps the policy's delay on the policy's clock, and it
    /// keeps listing until the object is seen, or both [`Idempotent::with_lookups`]
    /// answered listings were made and the policy's attempts are used up (failed
    /// listings are bounded by the policy's attempts too). Without a policy the
    /// listings follow each other at once.
    pub fn with_retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }

    /// The client token of `request`, for types that take one.
    pub fn client_token(&self, request: &CreateRequest) -> Option<String> {
        takes_client_token(request.resource_type).then(|| {
            let bytes = serde_json::to_vec(request).unwrap_or_default();
            // ClientToken: up to 64 ASCII characters.
            format!("kops-{:032x}", fnv128(self.salt, &bytes))
        })
    }

    fn uncertain(&self) -> std::sync::MutexGuard<'_, HashSet<u128>> {
        self.uncertain.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The object an earlier, uncertain create of `request` made, if it can be seen.
    async fn find_made(&self, request: &CreateRequest) -> CloudResult<Option<Resource>> {
        let rt = request.resource_type;
        let mut query = ListQuery::new(rt);
        if let Some(p) = &request.parent {
            query = query.with_parent(p.clone());
        }
        let by_name = is_named(rt) && request.name.is_some();
        if by_name {
            query.names = request.name.iter().cloned().collect();
        } else if request.tags.is_empty() {
            // Nothing to recognize it by: the model's own find (by parent and
            // attributes) runs before every create.
            return Ok(None);
        } else {
            for (k, v) in &request.tags {
                query = query.with_tag(TagFilter::equals(k.clone(), v.clone()));
            }
        }
        // Answered listings that did not show it, failed listings, and the attempts the
        // policy allows (answered and failed) before the look-up gives up.
        let (mut answered, mut failed, mut tries) = (0u32, 0u32, 0u32);
        let max_failed = self
            .retry
            .as_ref()
            .and_then(|p| p.max_attempts)
            .unwrap_or(8)
            .max(self.lookups);
        let salt = u64::try_from(fingerprint(request) & u128::from(u64::MAX)).unwrap_or(0);
        loop {
            tries += 1;
            match self.inner.list(&query).await {
                Ok(found) => {
                    let hit = found.into_iter().find(|r| {
                        if by_name {
                            r.name == request.name
                        } else {
                            request.tags.iter().all(|(k, v)| r.tags.get(k) == Some(v))
                        }
                    });
                    if hit.is_some() {
                        return Ok(hit);
                    }
                    answered += 1;
                }
                Err(e) if e.is_retryable() => {
                    failed += 1;
                    if failed >= max_failed {
                        return Err(e);
                    }
                }
                Err(e) => return Err(e),
            }
            let policy_done = match &self.retry {
                Some(p) if p.max_attempts.is_some() => !p.allows(tries),
                _ => true,
            };
            if answered >= self.lookups && policy_done {
                return Ok(None);
            }
            if let Some(p) = &self.retry {
                let delay = p.delay(tries.min(30), salt);
                if !delay.is_zero() {
                    p.clock.sleep(delay).await;
                }
            }
        }
    }
}

fn rand_salt() -> u128 {
    use std::hash::{BuildHasher, Hasher};
    // RandomState is seeded from the OS per process.
    let a = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    let b = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    (u128::from(a) << 64) | u128::from(b)
}

#[async_trait]
impl ResourceCloud<ResourceType> for Idempotent {
    async fn list(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        self.inner.list(query).await
    }

    async fn list_digests(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        self.inner.list_digests(query).await
    }

    async fn list_shared(&self, query: &ListQuery) -> CloudResult<Vec<std::sync::Arc<Resource>>> {
        self.inner.list_shared(query).await
    }

    async fn list_tagged(
        &self,
        resource_type: ResourceType,
        tags: &[(&str, &str)],
    ) -> CloudResult<Vec<std::sync::Arc<Resource>>> {
        self.inner.list_tagged(resource_type, tags).await
    }

    fn first_tagged_now(
        &self,
        resource_type: ResourceType,
        tags: &[(&str, &str)],
    ) -> Option<CloudResult<Option<std::sync::Arc<Resource>>>> {
        self.inner.first_tagged_now(resource_type, tags)
    }

    async fn create(&self, request: &CreateRequest) -> CloudResult<Resource> {
        if let Some(token) = self.client_token(request) {
            let mut with_token = request.clone();
            with_token
                .attrs
                .insert(CLIENT_TOKEN_ATTR.to_owned(), token.into());
            return self.inner.create(&with_token).await;
        }
        let fp = fingerprint(request);
        let was_uncertain = self.uncertain().contains(&fp);
        if was_uncertain && let Some(r) = self.find_made(request).await? {
            tracing::info!(kind = %request.resource_type, id = %r.id, "an earlier create whose answer was lost had made it");
            self.uncertain().remove(&fp);
            return Ok(r);
        }
        match self.inner.create(request).await {
            Ok(r) => {
                self.uncertain().remove(&fp);
                Ok(r)
            }
            Err(e) => {
                if is_ambiguous(&e) {
                    self.uncertain().insert(fp);
                }
                Err(e)
            }
        }
    }

    async fn update(&self, request: &UpdateRequest) -> CloudResult<Resource> {
        self.inner.update(request).await
    }

    async fn delete(&self, resource_type: ResourceType, id: &str) -> CloudResult<()> {
        self.inner.delete(resource_type, id).await
    }
}

impl Decorator for Idempotent {
    fn decorated(&self) -> &dyn AwsCloud {
        self.inner.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud::{AccountInfo, HostedZone, Image, ImageQuery, ZoneQuery};

    #[test]
    fn tokens_follow_the_request_and_the_salt() {
        #[derive(Debug)]
        struct Nothing;
        #[async_trait]
        impl ResourceCloud<ResourceType> for Nothing {
            async fn list(&self, _: &ListQuery) -> CloudResult<Vec<Resource>> {
                Ok(Vec::new())
            }
            async fn create(&self, r: &CreateRequest) -> CloudResult<Resource> {
                Ok(Resource::new(r.resource_type, "x"))
            }
            async fn update(&self, r: &UpdateRequest) -> CloudResult<Resource> {
                Ok(Resource::new(r.resource_type, "x"))
            }
            async fn delete(&self, _: ResourceType, _: &str) -> CloudResult<()> {
                Ok(())
            }
        }
        #[async_trait]
        impl AwsCloud for Nothing {
            async fn account(&self) -> CloudResult<AccountInfo> {
                Err(CloudError::not_found("account"))
            }
            async fn zones(&self) -> CloudResult<Vec<String>> {
                Ok(Vec::new())
            }
            async fn images(&self, _: &ImageQuery) -> CloudResult<Vec<Image>> {
                Ok(Vec::new())
            }
            async fn hosted_zones(&self, _: &ZoneQuery) -> CloudResult<Vec<HostedZone>> {
                Ok(Vec::new())
            }
        }
        let inner: Arc<dyn AwsCloud> = Arc::new(Nothing);
        let a = Idempotent::with_salt(inner.clone(), 1);
        let b = Idempotent::with_salt(inner, 2);
        let lt = CreateRequest::new(ResourceType::LaunchTemplate).with_name("nodes.a.example.com");
        let other = CreateRequest::new(ResourceType::LaunchTemplate).with_name("cp.a.example.com");
        let t = a.client_token(&lt).unwrap();
        assert!(t.len() <= 64, "{t}");
        assert_eq!(a.client_token(&lt), Some(t.clone()));
        assert_ne!(a.client_token(&other), Some(t.clone()));
        assert_ne!(b.client_token(&lt), Some(t));
        assert_eq!(a.client_token(&CreateRequest::new(ResourceType::Vpc)), None);
    }
}
