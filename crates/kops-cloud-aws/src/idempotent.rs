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

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use crate::cloud::{
    AwsCloud, CloudError, CloudResult, CreateRequest, ListQuery, Resource, ResourceCloud,
    ResourceType, TagFilter, UpdateRequest,
};
use crate::decorator::Decorator;

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
            uncertain: Mutex::new(HashSet::new()),
        }
    }

    /// How many listings a look-before-create makes at most (at least 1).
    pub fn with_lookups(mut self, n: u32) -> Self {
        self.lookups = n.max(1);
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
        for _ in 0..self.lookups {
            let found = match self.inner.list(&query).await {
                Ok(v) => v,
                Err(e) if e.is_retryable() => continue,
                Err(e) => return Err(e),
            };
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
        }
        Ok(None)
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
