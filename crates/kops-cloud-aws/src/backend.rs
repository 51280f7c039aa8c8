//! [`AwsBackend`]: the [`AwsCloud`] implementation over the aws-sdk crates, with the
//! per-run discovery cache, per-service token buckets and the API-call report.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};

use crate::cloud::{
    AccountInfo, AwsCloud, CreateRequest, HostedZone, Image, ImageQuery, ListQuery, Resource,
    ResourceCloud, ResourceType, Service, UpdateRequest, ZoneQuery,
};
use crate::cloud::{CloudError as Error, CloudResult as Result};
use aws_config::SdkConfig;
use aws_sdk_ec2::error::{ProvideErrorMetadata, SdkError};
use kops_tasks::async_trait;
use tokio::sync::OnceCell;

use crate::classify::from_sdk;
use crate::options::AwsBackendBuilder;
use crate::ratelimit::{Buckets, Clock, RateLimit};
use crate::{asg, ec2, elb, iam, misc};

/// How much of a type one batched fetch covers; the cache key together with the type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Scope {
    /// Every object of the type in the region (or account, for IAM).
    All,
    /// Objects carrying a tag (any of `values`, or any value when empty).
    Tag(String, Vec<String>),
    /// These IDs.
    Ids(Vec<String>),
    /// These names (IAM, where listing everything does not return tags).
    Names(Vec<String>),
    /// Children of one parent.
    Parent(String),
    /// The objects of one S3 bucket, with content digests in place of content where S3's
    /// listing gives them ([`AwsCloud::list_digests`]).
    Digests(String),
}

impl Scope {
    /// The fetch that answers `q`: IDs, else a parent, else the cluster tag for types EC2
    /// filters by tag server-side, else everything (filtered client-side afterwards).
    fn of(q: &ListQuery) -> Scope {
        let rt = q.resource_type;
        if !q.ids.is_empty() {
            let mut ids = q.ids.clone();
            ids.sort();
            ids.dedup();
            return Scope::Ids(ids);
        }
        if let Some(p) = &q.parent {
            return Scope::Parent(p.clone());
        }
        if !q.names.is_empty()
            && matches!(rt, ResourceType::IamRole | ResourceType::IamInstanceProfile)
        {
            let mut n = q.names.clone();
            n.sort();
            n.dedup();
            return Scope::Names(n);
        }
        if let Some(f) =
            scoping_tag(rt, q.tags.iter().map(|f| f.key.as_str())).and_then(|i| q.tags.get(i))
        {
            let mut v = f.values.clone();
            v.sort();
            return Scope::Tag(f.key.clone(), v);
        }
        Scope::All
    }

    /// The fetch that answers a lookup of the objects carrying every `(key, value)` pair
    /// of `tags` ([`ResourceCloud::list_tagged`]): as [`Scope::of`] a query with those
    /// filters.
    fn of_tags(rt: ResourceType, tags: &[(&str, &str)]) -> Scope {
        match scoping_tag(rt, tags.iter().map(|(k, _)| *k)).and_then(|i| tags.get(i)) {
            Some((k, v)) => Scope::Tag((*k).to_owned(), vec![(*v).to_owned()]),
            None => Scope::All,
        }
    }

    /// Whether this is [`Scope::of_tags`]`(rt, tags)`, without building that scope.
    fn is_of_tags(&self, rt: ResourceType, tags: &[(&str, &str)]) -> bool {
        let pair = scoping_tag(rt, tags.iter().map(|(k, _)| *k)).and_then(|i| tags.get(i));
        match (self, pair) {
            (Scope::Tag(k, values), Some((key, value))) => {
                k == key && matches!(values.as_slice(), [v] if v == value)
            }
            (Scope::All, None) => true,
            _ => false,
        }
    }
}

/// Which of a lookup's tag keys the fetch filters on, for types EC2 filters by tag
/// server-side: the cluster's tag, else the first; `None` for other types or no tags.
fn scoping_tag<'k>(rt: ResourceType, keys: impl Iterator<Item = &'k str> + Clone) -> Option<usize> {
    if !(ec2::filters_tags_server_side(rt) || rt == ResourceType::AutoscalingGroup) {
        return None;
    }
    keys.clone()
        .position(|k| k == "KubernetesCluster" || k.starts_with("kubernetes.io/cluster/"))
        .or_else(|| keys.clone().next().map(|_| 0))
}

/// Types listed by the same API call: a write to one invalidates the cached lists of all.
fn family(rt: ResourceType) -> &'static [ResourceType] {
    use ResourceType as R;
    match rt {
        R::Vpc | R::VpcCidrBlock | R::VpcIpv6CidrBlock | R::DhcpOptionsAssociation => &[
            R::Vpc,
            R::VpcCidrBlock,
            R::VpcIpv6CidrBlock,
            R::DhcpOptionsAssociation,
        ],
        R::RouteTable | R::Route | R::RouteTableAssociation => {
            &[R::RouteTable, R::Route, R::RouteTableAssociation]
        }
        R::SecurityGroup | R::SecurityGroupRule => &[R::SecurityGroup, R::SecurityGroupRule],
        R::IamRole | R::IamRolePolicy | R::IamRolePolicyAttachment | R::IamInstanceProfile => &[
            R::IamRole,
            R::IamRolePolicy,
            R::IamRolePolicyAttachment,
            R::IamInstanceProfile,
        ],
        R::AutoscalingGroup | R::WarmPool | R::LifecycleHook | R::Instance => &[
            R::AutoscalingGroup,
            R::WarmPool,
            R::LifecycleHook,
            R::Instance,
        ],
        R::LoadBalancer | R::Listener => &[R::LoadBalancer, R::Listener],
        R::EventRule | R::EventTarget => &[R::EventRule, R::EventTarget],
        R::ElasticIp | R::NatGateway => &[R::ElasticIp, R::NatGateway],
        _ => &[],
    }
}

type Cell = Arc<OnceCell<Arc<Listing>>>;

/// The backend's cached listings.
#[derive(Default)]
struct Cache {
    /// By type and by what was fetched.
    scopes: HashMap<(ResourceType, Scope), Cell>,
    /// Per type, the scope of the last lookup by tag pairs ([`AwsBackend::list_tagged`])
    /// and the listing that answered it. A plan finds every object of a type by its
    /// name tag within the cluster's tag, so each lookup after the first finds its
    /// listing here, without building its scope and hashing it.
    last_tagged: BTreeMap<ResourceType, (Scope, Cell)>,
}

/// One cached list of a type (kops-tasks' index: each query reads only its candidates).
type Listing = kops_tasks::resource::ResourceIndex<ResourceType>;

/// The AWS backend: implements [`AwsCloud`] for one region of one account.
///
/// Discovery is batched and cached for the backend's lifetime (one run): the first
/// `list` ([`kops_tasks::resource::ResourceCloud::list`]) of a type fetches every object
/// of that type in the query's scope (the cluster tag for EC2 types, the whole account
/// for IAM and Auto Scaling, paginated), later queries of the type are answered from memory, and any write of the type drops
/// its cached lists. Concurrent first queries share one fetch. Each API request waits for
/// a token of its service's bucket and is counted in [`AwsBackend::api_calls`].
#[derive(Clone)]
pub struct AwsBackend {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) region: String,
    /// Where the credentials come from, for errors that concern them.
    origin: String,
    pub(crate) ec2: aws_sdk_ec2::Client,
    pub(crate) asg: aws_sdk_autoscaling::Client,
    pub(crate) elb: aws_sdk_elasticloadbalancingv2::Client,
    pub(crate) iam: aws_sdk_iam::Client,
    pub(crate) r53: aws_sdk_route53::Client,
    pub(crate) s3: aws_sdk_s3::Client,
    pub(crate) sqs: aws_sdk_sqs::Client,
    pub(crate) events: aws_sdk_eventbridge::Client,
    pub(crate) sts: aws_sdk_sts::Client,
    buckets: Buckets,
    calls: Mutex<BTreeMap<String, u64>>,
    cache: Mutex<Cache>,
    account: OnceCell<AccountInfo>,
    zones: OnceCell<Vec<String>>,
}

impl fmt::Debug for AwsBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AwsBackend")
            .field("region", &self.inner.region)
            .finish_non_exhaustive()
    }
}

impl AwsBackend {
    /// A builder; see [`AwsBackendBuilder`].
    pub fn builder() -> AwsBackendBuilder {
        AwsBackendBuilder::new()
    }

    pub(crate) fn from_parts(
        sdk: &SdkConfig,
        region: String,
        origin: String,
        path_style: bool,
        limits: &BTreeMap<Service, RateLimit>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let s3_conf = aws_sdk_s3::config::Builder::from(sdk)
            .force_path_style(path_style)
            .build();
        AwsBackend {
            inner: Arc::new(Inner {
                region,
                origin,
                ec2: aws_sdk_ec2::Client::new(sdk),
                asg: aws_sdk_autoscaling::Client::new(sdk),
                elb: aws_sdk_elasticloadbalancingv2::Client::new(sdk),
                iam: aws_sdk_iam::Client::new(sdk),
                r53: aws_sdk_route53::Client::new(sdk),
                s3: aws_sdk_s3::Client::from_conf(s3_conf),
                sqs: aws_sdk_sqs::Client::new(sdk),
                events: aws_sdk_eventbridge::Client::new(sdk),
                sts: aws_sdk_sts::Client::new(sdk),
                buckets: Buckets::new(limits, clock),
                calls: Mutex::new(BTreeMap::new()),
                cache: Mutex::new(Cache::default()),
                account: OnceCell::new(),
                zones: OnceCell::new(),
            }),
        }
    }

    /// API requests made so far, by `service:Operation` (`ec2:DescribeVpcs`), one count
    /// per request sent by this backend (each page of a paginated call counts; the SDK's
    /// own retries of a request do not).
    pub fn api_calls(&self) -> BTreeMap<String, u64> {
        match self.inner.calls.lock() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// The total of [`AwsBackend::api_calls`].
    pub fn total_api_calls(&self) -> u64 {
        self.api_calls().values().sum()
    }

    /// Clears the call counts (to measure one phase of a run).
    pub fn reset_api_calls(&self) {
        match self.inner.calls.lock() {
            Ok(mut g) => g.clear(),
            Err(p) => p.into_inner().clear(),
        }
    }

    /// Drops every cached list (the next queries fetch again).
    pub fn clear_cache(&self) {
        let mut cache = self.lock_cache();
        cache.scopes.clear();
        cache.last_tagged.clear();
    }

    /// Answers `query` from the cached list in `cell`, fetching `scope` into it first when
    /// it is empty; sorted by ID.
    async fn answer(
        &self,
        cell: &Cell,
        rt: ResourceType,
        scope: &Scope,
        query: &ListQuery,
    ) -> Result<Vec<Resource>> {
        Ok(self.listing(cell, rt, scope).await?.answer(query))
    }

    /// The cached list in `cell`, fetching `scope` into it first when it is empty.
    async fn listing(&self, cell: &Cell, rt: ResourceType, scope: &Scope) -> Result<Arc<Listing>> {
        let all = cell
            .get_or_try_init(|| async {
                self.fetch(rt, scope)
                    .await
                    .map(|items| Arc::new(Listing::new(items)))
            })
            .await?;
        Ok(all.clone())
    }

    /// The cached list that answers `query` (fetched on first use), and the query as it
    /// applies to it: a record's zone may be named with or without `/hostedzone/`, and
    /// records carry the long form.
    async fn listing_for<'q>(
        &self,
        query: &'q ListQuery,
    ) -> Result<(Arc<Listing>, std::borrow::Cow<'q, ListQuery>)> {
        let rt = query.resource_type;
        let query = match &query.parent {
            Some(p) if rt == ResourceType::RecordSet && !p.starts_with("/hostedzone/") => {
                let mut q = query.clone();
                q.parent = Some(format!("/hostedzone/{p}"));
                std::borrow::Cow::Owned(q)
            }
            _ => std::borrow::Cow::Borrowed(query),
        };
        let listing = self.listing_in(rt, Scope::of(&query)).await?;
        Ok((listing, query))
    }

    /// The cached list of `rt` fetched for `scope` (fetched on first use), or the cached
    /// list of everything of the type, which answers any query of it.
    async fn listing_in(&self, rt: ResourceType, scope: Scope) -> Result<Arc<Listing>> {
        let (cell, scope) = self.cell_for(rt, scope);
        self.listing(&cell, rt, &scope).await
    }

    /// The cell holding the listing that answers a fetch of `scope`: the whole type's
    /// when it is fetched, else the scope's own (made empty on first use); and the scope,
    /// for the fetch.
    fn cell_for(&self, rt: ResourceType, scope: Scope) -> (Cell, Scope) {
        let mut cache = self.lock_cache();
        if let Some(all) = cache.scopes.get(&(rt, Scope::All))
            && all.initialized()
        {
            return (all.clone(), scope);
        }
        let key = (rt, scope);
        let cell = match cache.scopes.get(&key) {
            Some(cell) => cell.clone(),
            None => {
                let cell = Cell::default();
                cache.scopes.insert(key.clone(), cell.clone());
                cell
            }
        };
        (cell, key.1)
    }

    /// The listing that answers a lookup by tag pairs: the one the last such lookup of
    /// the type used when it had the same scope and is fetched, else as
    /// [`AwsBackend::listing_in`] finds it (then kept for the next lookup).
    async fn listing_tagged(
        &self,
        rt: ResourceType,
        tags: &[(&str, &str)],
    ) -> Result<Arc<Listing>> {
        if let Some(listing) = self.recent_tagged(rt, tags) {
            return Ok(listing);
        }
        let (cell, scope) = self.cell_for(rt, Scope::of_tags(rt, tags));
        let listing = self.listing(&cell, rt, &scope).await?;
        // Kept only while the cache still holds the cell: a write to the type while the
        // fetch ran has dropped it, and the next lookup must fetch again.
        let mut cache = self.lock_cache();
        let key = (rt, scope);
        let held =
            |k: &(ResourceType, Scope)| cache.scopes.get(k).is_some_and(|c| Arc::ptr_eq(c, &cell));
        if held(&key) || held(&(rt, Scope::All)) {
            cache.last_tagged.insert(rt, (key.1, cell));
        }
        Ok(listing)
    }

    /// The listing the last lookup by tag pairs of `rt` used, when it has the scope of
    /// `tags` and is fetched.
    fn recent_tagged(&self, rt: ResourceType, tags: &[(&str, &str)]) -> Option<Arc<Listing>> {
        let cache = self.lock_cache();
        cache
            .last_tagged
            .get(&rt)
            .filter(|(scope, _)| scope.is_of_tags(rt, tags))
            .and_then(|(_, cell)| cell.get().cloned())
    }

    fn lock_cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        match self.inner.cache.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    pub(crate) fn invalidate(&self, rt: ResourceType) {
        let fam = family(rt);
        let mut cache = self.lock_cache();
        cache
            .scopes
            .retain(|(t, _), _| *t != rt && !fam.contains(t));
        cache
            .last_tagged
            .retain(|t, _| *t != rt && !fam.contains(t));
    }

    fn count(&self, service: Service, op: &str) {
        let svc = match service {
            _ if op == "GetCallerIdentity" => "sts",
            Service::Ec2 => "ec2",
            Service::Autoscaling => "autoscaling",
            Service::Elbv2 => "elbv2",
            Service::Iam => "iam",
            Service::Route53 => "route53",
            Service::Sqs => "sqs",
            Service::EventBridge => "eventbridge",
            Service::S3 => "s3",
        };
        let key = format!("{svc}:{op}");
        let mut g = match self.inner.calls.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        *g.entry(key).or_insert(0) += 1;
    }

    /// Sends one request: waits for a token, counts it and classifies its error.
    pub(crate) async fn call<T, E, R, F>(
        &self,
        service: Service,
        op: &str,
        what: &str,
        fut: F,
    ) -> Result<T>
    where
        F: Future<Output = std::result::Result<T, SdkError<E, R>>>,
        E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
        R: crate::classify::ErrorBody + fmt::Debug + Send + Sync + 'static,
    {
        self.inner.buckets.acquire(service).await;
        self.count(service, op);
        let r = fut
            .await
            .map_err(|e| from_sdk(op, what, &self.inner.origin, e));
        if let Err(e) = &r {
            tracing::debug!(operation = op, object = what, error = %e, "AWS call failed");
        }
        r
    }

    /// Like [`AwsBackend::call`] but a not-found error is `Ok(None)`.
    pub(crate) async fn call_opt<T, E, R, F>(
        &self,
        service: Service,
        op: &str,
        what: &str,
        fut: F,
    ) -> Result<Option<T>>
    where
        F: Future<Output = std::result::Result<T, SdkError<E, R>>>,
        E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
        R: crate::classify::ErrorBody + fmt::Debug + Send + Sync + 'static,
    {
        match self.call(service, op, what, fut).await {
            Ok(v) => Ok(Some(v)),
            Err(Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The next page of a paginated call.
    pub(crate) async fn page<T, E, R, F>(
        &self,
        service: Service,
        op: &str,
        what: &str,
        fut: F,
    ) -> Result<Option<T>>
    where
        F: Future<Output = Option<std::result::Result<T, SdkError<E, R>>>>,
        E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
        R: crate::classify::ErrorBody + fmt::Debug + Send + Sync + 'static,
    {
        self.inner.buckets.acquire(service).await;
        match fut.await {
            None => Ok(None),
            Some(r) => {
                self.count(service, op);
                r.map(Some)
                    .map_err(|e| from_sdk(op, what, &self.inner.origin, e))
            }
        }
    }

    async fn fetch(&self, rt: ResourceType, scope: &Scope) -> Result<Vec<Resource>> {
        use ResourceType as R;
        match rt {
            R::Vpc
            | R::VpcCidrBlock
            | R::VpcIpv6CidrBlock
            | R::DhcpOptions
            | R::DhcpOptionsAssociation
            | R::InternetGateway
            | R::EgressOnlyInternetGateway
            | R::Subnet
            | R::RouteTable
            | R::Route
            | R::RouteTableAssociation
            | R::ElasticIp
            | R::NatGateway
            | R::SecurityGroup
            | R::SecurityGroupRule
            | R::KeyPair
            | R::LaunchTemplate
            | R::Volume
            | R::Instance => ec2::list(self, rt, scope).await,
            R::IamRole
            | R::IamRolePolicy
            | R::IamRolePolicyAttachment
            | R::IamInstanceProfile
            | R::IamOidcProvider => iam::list(self, rt, scope).await,
            R::AutoscalingGroup | R::WarmPool | R::LifecycleHook => {
                asg::list(self, rt, scope).await
            }
            R::LoadBalancer | R::TargetGroup | R::Listener => elb::list(self, rt, scope).await,
            _ => misc::list(self, rt, scope).await,
        }
    }

    /// The current state of one object, bypassing the cache (after a write).
    pub(crate) async fn reread(&self, rt: ResourceType, id: &str) -> Result<Resource> {
        self.invalidate(rt);
        let found = self.fetch(rt, &Scope::Ids(vec![id.to_owned()])).await?;
        found
            .into_iter()
            .find(|r| r.id == id)
            .ok_or_else(|| Error::unavailable(format!("read back {rt} {id} after writing it")))
    }
}

#[async_trait]
impl ResourceCloud<ResourceType> for AwsBackend {
    async fn list(&self, query: &ListQuery) -> Result<Vec<Resource>> {
        let (listing, query) = self.listing_for(query).await?;
        Ok(listing.answer(&query))
    }

    async fn list_shared(&self, query: &ListQuery) -> Result<Vec<Arc<Resource>>> {
        let (listing, query) = self.listing_for(query).await?;
        Ok(listing.shared(&query))
    }

    async fn list_tagged(
        &self,
        rt: ResourceType,
        tags: &[(&str, &str)],
    ) -> Result<Vec<Arc<Resource>>> {
        let listing = self.listing_tagged(rt, tags).await?;
        Ok(listing.tagged(rt, tags))
    }

    fn first_tagged_now(
        &self,
        rt: ResourceType,
        tags: &[(&str, &str)],
    ) -> Option<Result<Option<Arc<Resource>>>> {
        let listing = self.recent_tagged(rt, tags)?;
        Some(Ok(listing.first_tagged(rt, tags).cloned()))
    }

    async fn list_digests(&self, query: &ListQuery) -> Result<Vec<Resource>> {
        let (ResourceType::S3Object, Some(bucket), true) =
            (query.resource_type, &query.parent, query.ids.is_empty())
        else {
            return self.list(query).await;
        };
        let rt = query.resource_type;
        let scope = Scope::Digests(bucket.clone());
        let cell = self
            .lock_cache()
            .scopes
            .entry((rt, scope.clone()))
            .or_default()
            .clone();
        self.answer(&cell, rt, &scope, query).await
    }

    async fn create(&self, request: &CreateRequest) -> Result<Resource> {
        let rt = request.resource_type;
        self.invalidate(rt);
        let r = match rt.service() {
            Service::Ec2 => ec2::create(self, request).await,
            Service::Iam => iam::create(self, request).await,
            Service::Autoscaling => asg::create(self, request).await,
            Service::Elbv2 => elb::create(self, request).await,
            _ => misc::create(self, request).await,
        };
        self.invalidate(rt);
        r
    }

    async fn update(&self, request: &UpdateRequest) -> Result<Resource> {
        let rt = request.resource_type;
        self.invalidate(rt);
        let r = match rt.service() {
            Service::Ec2 => ec2::update(self, request).await,
            Service::Iam => iam::update(self, request).await,
            Service::Autoscaling => asg::update(self, request).await,
            Service::Elbv2 => elb::update(self, request).await,
            _ => misc::update(self, request).await,
        };
        self.invalidate(rt);
        r
    }

    async fn delete(&self, resource_type: ResourceType, id: &str) -> Result<()> {
        self.invalidate(resource_type);
        let r = match resource_type.service() {
            Service::Ec2 => ec2::delete(self, resource_type, id).await,
            Service::Iam => iam::delete(self, resource_type, id).await,
            Service::Autoscaling => asg::delete(self, resource_type, id).await,
            Service::Elbv2 => elb::delete(self, resource_type, id).await,
            _ => misc::delete(self, resource_type, id).await,
        };
        self.invalidate(resource_type);
        match r {
            Err(Error::NotFound { .. }) => Ok(()),
            other => other,
        }
    }
}

#[async_trait]
impl AwsCloud for AwsBackend {
    async fn account(&self) -> Result<AccountInfo> {
        self.inner
            .account
            .get_or_try_init(|| async {
                let out = self
                    .call(
                        Service::Ec2,
                        "GetCallerIdentity",
                        "caller identity",
                        self.inner.sts.get_caller_identity().send(),
                    )
                    .await?;
                let region = self.inner.region.clone();
                let partition = match out.arn() {
                    Some(arn) => arn.split(':').nth(1).unwrap_or("aws").to_owned(),
                    None if region.starts_with("cn-") => "aws-cn".to_owned(),
                    None if region.starts_with("us-gov-") => "aws-us-gov".to_owned(),
                    None => "aws".to_owned(),
                };
                Ok(AccountInfo::new(
                    out.account().unwrap_or_default(),
                    partition,
                    region,
                ))
            })
            .await
            .cloned()
    }

    async fn zones(&self) -> Result<Vec<String>> {
        self.inner
            .zones
            .get_or_try_init(|| ec2::zones(self))
            .await
            .cloned()
    }

    async fn images(&self, query: &ImageQuery) -> Result<Vec<Image>> {
        ec2::images(self, query).await
    }

    async fn hosted_zones(&self, query: &ZoneQuery) -> Result<Vec<HostedZone>> {
        misc::hosted_zones(self, query).await
    }

    async fn group_members(&self, names: &[String]) -> Result<Vec<crate::cloud::GroupMembers>> {
        crate::members::group_members(self, names).await
    }

    async fn detach_instance(&self, group: &str, instance: &str) -> Result<()> {
        self.invalidate(ResourceType::AutoscalingGroup);
        crate::members::detach_instance(self, group, instance).await
    }

    async fn terminate_instance(&self, instance: &str) -> Result<()> {
        self.invalidate(ResourceType::Instance);
        crate::members::terminate_instance(self, instance).await
    }

    async fn deregister_instance(&self, group: &str, instance: &str) -> Result<()> {
        crate::members::deregister_instance(self, group, instance).await
    }

    async fn instance_type_zones(
        &self,
        instance_type: &str,
        zones: &[String],
    ) -> Result<Vec<String>> {
        ec2::instance_type_zones(self, instance_type, zones).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud::TagFilter;

    /// A lookup by tag pairs is fetched as the query with those filters is: the same scope
    /// and so the same cached list.
    #[test]
    fn a_lookup_by_tag_pairs_has_the_scope_of_its_query() {
        let pairs: [&[(&str, &str)]; 4] = [
            &[],
            &[("Name", "main")],
            &[("Name", "main"), ("KubernetesCluster", "a.example.com")],
            &[
                ("kubernetes.io/cluster/a.example.com", "owned"),
                ("Name", "x"),
            ],
        ];
        for rt in [
            ResourceType::Vpc,
            ResourceType::Subnet,
            ResourceType::AutoscalingGroup,
            ResourceType::IamRole,
            ResourceType::S3Object,
        ] {
            for tags in pairs {
                let mut q = ListQuery::new(rt);
                q.tags = tags
                    .iter()
                    .map(|(k, v)| TagFilter::equals(*k, *v))
                    .collect();
                assert_eq!(Scope::of_tags(rt, tags), Scope::of(&q), "{rt:?} {tags:?}");
                // A scope is the scope of exactly the lookups that build it.
                for other in pairs {
                    assert_eq!(
                        Scope::of_tags(rt, tags).is_of_tags(rt, other),
                        Scope::of_tags(rt, tags) == Scope::of_tags(rt, other),
                        "{rt:?} {tags:?} {other:?}"
                    );
                }
            }
        }
        let two = Scope::Tag("KubernetesCluster".into(), vec!["a".into(), "b".into()]);
        assert!(!two.is_of_tags(ResourceType::Vpc, &[("KubernetesCluster", "a")]));
        assert_eq!(
            Scope::of_tags(
                ResourceType::Vpc,
                &[("Name", "main"), ("KubernetesCluster", "a.example.com")]
            ),
            Scope::Tag("KubernetesCluster".into(), vec!["a.example.com".into()])
        );
    }
}
