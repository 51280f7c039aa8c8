//! [`RestGce`]: the [`GceCloud`] backend over Google's JSON REST APIs (Compute v1, IAM v1,
//! Cloud Resource Manager v1, Storage v1), a thin client of our own on reqwest, with
//! bearer tokens from `google-cloud-auth` ([`GoogleCredentials`]).
//!
//! - **Discovery** is one list per collection: global collections in `global/`, regional
//!   ones in the backend's region, zonal ones through one `aggregated/` list for every
//!   zone. Queries that select labelled objects by labels send them as a server-side
//!   `filter` (`labels.k8s-io-cluster-name = "c"`, `properties.labels...` for
//!   templates); the answer is matched again client-side, the source of truth. Pages
//!   are followed (`nextPageToken`).
//! - **Writes** return operations, which are waited on (`operations/<op>/wait`) until
//!   `DONE`; a failed operation is an error naming its code.
//! - **Errors** are classified by Google's reasons (see the [`crate::cloud`] docs):
//!   `rateLimitExceeded` and `backendError` are retried with exponential backoff
//!   ([`RetryPolicy`]); a `quotaExceeded` error names the quota (`SSD_TOTAL_GB`).
//! - **Instance templates** cannot change: an update creates the replacement
//!   (`<name_prefix><unix millis>`), points every group that used the old one at it
//!   (`setInstanceTemplate`) and deletes the old one.
//! - **A group's instances** are `listManagedInstances` (a POST, paginated like a list);
//!   replacing them is `recreateInstances` with their URLs, waited on like a write.
//!
//! Endpoints default to Google's; [`RestConfig::with_endpoint`] puts every API under one
//! root (a local fake of the APIs in tests: `kops_mock::gce::rest`).

mod convert;
mod http;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::Method;
use serde_json::{Value as Json, json};

use crate::cloud::{
    COMPUTE_URL, CloudError, CloudResult, CreateRequest, GceCloud, GceResourceType, ListQuery,
    ManagedInstance, ManagedZone, ProjectInfo, Resource, ResourceCloud, Scope, TagFilter,
    UpdateRequest, last_component, zone_to_region,
};
use convert::Ctx;
pub use http::{CLOUD_PLATFORM_SCOPE, GoogleCredentials, RetryPolicy, StaticToken, TokenSource};
use http::{Http, is_operation, operation_error};
use kops_tasks::resource::immutable_changes;

use GceResourceType as R;

/// The environment variable naming one root for every Google API the backend calls
/// (`http://127.0.0.1:8080`, a local fake); read only by [`RestConfig::from_env`].
pub const ENDPOINT_ENV: &str = "KOPS_GCE_ENDPOINT";

/// Where and how [`RestGce`] reaches Google: project, region, API roots, credentials,
/// retries.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RestConfig {
    /// The project ID.
    pub project: String,
    /// The region the backend works in.
    pub region: String,
    compute: String,
    iam: String,
    crm: String,
    storage: String,
    dns: String,
    token: Option<Arc<dyn TokenSource>>,
    retry: RetryPolicy,
    operation_timeout: Duration,
    buckets: Vec<String>,
}

impl RestConfig {
    /// Google's endpoints for `project` in `region`, without credentials (add them with
    /// [`RestConfig::with_token_source`]).
    pub fn new(project: impl Into<String>, region: impl Into<String>) -> Self {
        RestConfig {
            project: project.into(),
            region: region.into(),
            compute: "https://compute.googleapis.com/compute/v1/".into(),
            iam: "https://iam.googleapis.com/v1/".into(),
            crm: "https://cloudresourcemanager.googleapis.com/v1/".into(),
            storage: "https://storage.googleapis.com/storage/v1/".into(),
            dns: "https://dns.googleapis.com/dns/v1/".into(),
            token: None,
            retry: RetryPolicy::default(),
            operation_timeout: Duration::from_secs(30 * 60),
            buckets: Vec::new(),
        }
    }

    /// The buckets whose IAM members and ACLs a list without a bucket covers (the state
    /// store's); buckets themselves are never listed.
    pub fn with_buckets<S: Into<String>>(mut self, buckets: impl IntoIterator<Item = S>) -> Self {
        self.buckets = buckets.into_iter().map(Into::into).collect();
        self
    }

    /// Every API under one root (`http://127.0.0.1:PORT`): Compute at
    /// `<root>/compute/v1/`, IAM and Resource Manager at `<root>/v1/`, Storage at
    /// `<root>/storage/v1/`, Cloud DNS at `<root>/dns/v1/`.
    pub fn with_endpoint(mut self, root: impl AsRef<str>) -> Self {
        let root = root.as_ref().trim_end_matches('/');
        self.compute = format!("{root}/compute/v1/");
        self.iam = format!("{root}/v1/");
        self.crm = format!("{root}/v1/");
        self.storage = format!("{root}/storage/v1/");
        self.dns = format!("{root}/dns/v1/");
        self
    }

    /// Requests carry tokens from `token`.
    pub fn with_token_source(mut self, token: Arc<dyn TokenSource>) -> Self {
        self.token = Some(token);
        self
    }

    /// How throttled and unavailable calls are retried.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// How long an operation is waited on before giving up.
    pub fn with_operation_timeout(mut self, timeout: Duration) -> Self {
        self.operation_timeout = timeout;
        self
    }

    /// `KOPS_GCE_ENDPOINT` ([`ENDPOINT_ENV`]) when set: every API there, unauthenticated
    /// (a local fake); otherwise Google's endpoints with application-default
    /// credentials ([`GoogleCredentials::from_env`]).
    pub fn from_env(project: impl Into<String>, region: impl Into<String>) -> CloudResult<Self> {
        Self::from_env_sharing(project, region, || {
            Ok(Arc::new(GoogleCredentials::from_env()?))
        })
    }

    /// [`RestConfig::from_env`], with the application-default credentials from
    /// `google`, which is called only when they are needed (`KOPS_GCE_ENDPOINT` is not
    /// set): give it one that hands out the credentials the caller's other Google
    /// clients use (built at most once, with the [`CLOUD_PLATFORM_SCOPE`]), and a token
    /// is fetched once for all of them. (google-cloud-auth's credentials start fetching
    /// a token as soon as they are built.)
    pub fn from_env_sharing<F>(
        project: impl Into<String>,
        region: impl Into<String>,
        google: F,
    ) -> CloudResult<Self>
    where
        F: FnOnce() -> CloudResult<Arc<dyn TokenSource>>,
    {
        let c = RestConfig::new(project, region);
        match std::env::var(ENDPOINT_ENV) {
            Ok(root) if !root.is_empty() => Ok(c.with_endpoint(root)),
            _ => Ok(c.with_token_source(google()?)),
        }
    }
}

/// The GCE backend over the REST APIs (module docs).
pub struct RestGce {
    cfg: RestConfig,
    ctx: Ctx,
    http: Http,
}

impl fmt::Debug for RestGce {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RestGce")
            .field("project", &self.cfg.project)
            .field("region", &self.cfg.region)
            .field("compute", &self.cfg.compute)
            .finish_non_exhaustive()
    }
}

/// A Compute method name for errors and logs (`compute.disks.insert`).
fn op_name(rt: GceResourceType, verb: &str) -> String {
    format!("compute.{}.{verb}", rt.facts().collection)
}

impl RestGce {
    /// A backend for `cfg`.
    pub fn new(cfg: RestConfig) -> CloudResult<Self> {
        let http = Http::new(cfg.token.clone(), cfg.retry)?;
        let ctx = Ctx {
            project: cfg.project.clone(),
            region: cfg.region.clone(),
        };
        Ok(RestGce { cfg, ctx, http })
    }

    fn compute(&self, path: &str) -> String {
        if path.is_empty() {
            format!("{}projects/{}", self.cfg.compute, self.cfg.project)
        } else {
            format!("{}projects/{}/{path}", self.cfg.compute, self.cfg.project)
        }
    }

    /// A self-link (`https://www.googleapis.com/compute/v1/...`) on this backend's
    /// endpoint.
    fn on_endpoint(&self, link: &str) -> String {
        match link.split_once("/compute/v1/") {
            Some((_, rest)) => format!("{}{rest}", self.cfg.compute),
            None => link.to_owned(),
        }
    }

    async fn call(
        &self,
        method: Method,
        url: &str,
        query: &[(&str, String)],
        body: Option<&Json>,
        operation: &str,
        what: &str,
    ) -> CloudResult<Json> {
        let r = self
            .http
            .call(method, url, query, body, operation, what)
            .await?;
        if is_operation(&r) {
            return self.wait(r, operation, what).await;
        }
        Ok(r)
    }

    /// Waits until an operation is `DONE`; its error, if any, is returned.
    async fn wait(&self, mut op: Json, operation: &str, what: &str) -> CloudResult<Json> {
        let deadline = tokio::time::Instant::now() + self.cfg.operation_timeout;
        loop {
            if op.get("status").and_then(Json::as_str) == Some("DONE") {
                return match operation_error(&op, operation, what) {
                    Some(e) => Err(e),
                    None => Ok(op),
                };
            }
            if tokio::time::Instant::now() > deadline {
                return Err(CloudError::Unavailable {
                    operation: format!("{operation}: operation still running after the timeout"),
                    source: None,
                });
            }
            let link = op.get("selfLink").and_then(Json::as_str).ok_or_else(|| {
                CloudError::other(format!("{operation}: operation without selfLink"))
            })?;
            let url = format!("{}/wait", self.on_endpoint(link));
            op = self
                .http
                .call(Method::POST, &url, &[], None, operation, what)
                .await?;
        }
    }

    /// A GET of one object; `None` when it does not exist.
    async fn get_json(&self, url: &str, operation: &str, what: &str) -> CloudResult<Option<Json>> {
        match self
            .http
            .call(Method::GET, url, &[], None, operation, what)
            .await
        {
            Ok(j) => Ok(Some(j)),
            Err(CloudError::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The server-side filter of a query's label selections, where the type carries
    /// labels and every filter asks for one value.
    fn label_filter(rt: GceResourceType, tags: &[TagFilter]) -> Option<String> {
        if !rt.facts().labelled || tags.is_empty() || tags.iter().any(|t| t.values.len() != 1) {
            return None;
        }
        let field = if rt == R::InstanceTemplate {
            "properties.labels"
        } else {
            "labels"
        };
        Some(
            tags.iter()
                .map(|t| format!("{field}.{} = \"{}\"", t.key, t.values[0]))
                .collect::<Vec<_>>()
                .join(" AND "),
        )
    }

    async fn list_compute(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = query.resource_type;
        let coll = rt.facts().collection;
        let url = match rt.scope() {
            Scope::Zonal => self.compute(&format!("aggregated/{coll}")),
            _ => self.compute(&self.ctx.collection(rt, None)),
        };
        let verb = if rt.scope() == Scope::Zonal {
            "aggregatedList"
        } else {
            "list"
        };
        let mut q = vec![("maxResults", "500".to_owned())];
        if let Some(f) = Self::label_filter(rt, &query.tags) {
            q.push(("filter", f));
        }
        let items = self
            .http
            .list_pages(&url, &q, "items", &op_name(rt, verb))
            .await?;
        Ok(items.iter().map(|j| self.ctx.read_rest(rt, j)).collect())
    }

    async fn routers(&self) -> CloudResult<Vec<Json>> {
        let url = self.compute(&self.ctx.collection(R::Router, None));
        self.http
            .list_pages(
                &url,
                &[("maxResults", "500".to_owned())],
                "items",
                "compute.routers.list",
            )
            .await
    }

    async fn router(&self, name: &str) -> CloudResult<Json> {
        let url = self.compute(&self.ctx.object(R::Router, name));
        self.get_json(&url, "compute.routers.get", name)
            .await?
            .ok_or_else(|| CloudError::not_found(format!("google_compute_router {name}")))
    }

    async fn set_nats(&self, router: &Json, nats: Vec<Json>, what: &str) -> CloudResult<()> {
        let name = router
            .get("name")
            .and_then(Json::as_str)
            .unwrap_or_default();
        let url = self.compute(&self.ctx.object(R::Router, name));
        let mut body = json!({ "nats": nats });
        if let Some(fp) = router.get("fingerprint") {
            body["fingerprint"] = fp.clone();
        }
        self.call(
            Method::PATCH,
            &url,
            &[],
            Some(&body),
            "compute.routers.patch",
            what,
        )
        .await?;
        Ok(())
    }

    fn iam_accounts(&self) -> String {
        format!(
            "{}projects/{}/serviceAccounts",
            self.cfg.iam, self.cfg.project
        )
    }

    fn account_from(&self, j: &Json) -> Resource {
        let email = j.get("email").and_then(Json::as_str).unwrap_or_default();
        let account = email.split('@').next().unwrap_or_default();
        let mut r = Resource::new(R::ServiceAccount, email).with_name(account);
        r.attrs = [
            ("account_id", json!(account)),
            ("email", json!(email)),
            (
                "display_name",
                j.get("displayName").cloned().unwrap_or(json!("")),
            ),
            (
                "description",
                j.get("description").cloned().unwrap_or(json!("")),
            ),
            (
                "project",
                j.get("projectId")
                    .cloned()
                    .unwrap_or(json!(self.cfg.project)),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        r
    }

    async fn policy(&self, project: &str) -> CloudResult<Json> {
        let url = format!("{}projects/{project}:getIamPolicy", self.cfg.crm);
        let body = json!({ "options": { "requestedPolicyVersion": 3 } });
        self.http
            .call(
                Method::POST,
                &url,
                &[],
                Some(&body),
                "cloudresourcemanager.projects.getIamPolicy",
                project,
            )
            .await
    }

    async fn set_policy(&self, project: &str, policy: Json) -> CloudResult<()> {
        let url = format!("{}projects/{project}:setIamPolicy", self.cfg.crm);
        self.http
            .call(
                Method::POST,
                &url,
                &[],
                Some(&json!({ "policy": policy })),
                "cloudresourcemanager.projects.setIamPolicy",
                project,
            )
            .await?;
        Ok(())
    }

    fn bindings_of(project: &str, policy: &Json) -> Vec<Resource> {
        policy
            .get("bindings")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter_map(|b| {
                let role = b.get("role")?.as_str()?;
                let mut r = Resource::new(R::ProjectIamBinding, format!("{project}/{role}"))
                    .with_name(format!("{project}/{role}"));
                r.attrs = [
                    ("project".to_owned(), json!(project)),
                    ("role".to_owned(), json!(role)),
                    (
                        "members".to_owned(),
                        b.get("members").cloned().unwrap_or(json!([])),
                    ),
                ]
                .into();
                Some(r)
            })
            .collect()
    }

    /// Sets (or, with `None`, removes) the members of `role` in `project`'s policy.
    async fn bind(&self, project: &str, role: &str, members: Option<Json>) -> CloudResult<()> {
        let mut policy = self.policy(project).await?;
        let mut bindings: Vec<Json> = policy
            .get("bindings")
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_default();
        bindings.retain(|b| b.get("role").and_then(Json::as_str) != Some(role));
        if let Some(m) = members {
            bindings.push(json!({ "role": role, "members": m }));
        }
        policy["bindings"] = Json::Array(bindings);
        policy["version"] = json!(3);
        self.set_policy(project, policy).await
    }

    fn bucket_of(query: &ListQuery) -> Option<String> {
        query.parent.clone().or_else(|| {
            query
                .ids
                .first()
                .and_then(|id| id.split('/').next())
                .map(str::to_owned)
        })
    }

    async fn bucket_iam(&self, bucket: &str) -> CloudResult<Json> {
        let url = format!("{}b/{bucket}/iam", self.cfg.storage);
        self.http
            .call(
                Method::GET,
                &url,
                &[("optionsRequestedPolicyVersion", "3".to_owned())],
                None,
                "storage.buckets.getIamPolicy",
                bucket,
            )
            .await
    }

    async fn set_bucket_member(
        &self,
        bucket: &str,
        role: &str,
        member: &str,
        add: bool,
    ) -> CloudResult<()> {
        let mut policy = self.bucket_iam(bucket).await?;
        let mut bindings: Vec<Json> = policy
            .get("bindings")
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_default();
        let pos = bindings
            .iter()
            .position(|b| b.get("role").and_then(Json::as_str) == Some(role));
        match (pos, add) {
            (Some(i), _) => {
                let mut members: Vec<Json> = bindings[i]
                    .get("members")
                    .and_then(Json::as_array)
                    .cloned()
                    .unwrap_or_default();
                members.retain(|m| m.as_str() != Some(member));
                if add {
                    members.push(json!(member));
                }
                if members.is_empty() {
                    bindings.remove(i);
                } else {
                    bindings[i]["members"] = Json::Array(members);
                }
            }
            (None, true) => bindings.push(json!({ "role": role, "members": [member] })),
            (None, false) => return Ok(()),
        }
        policy["bindings"] = Json::Array(bindings);
        let url = format!("{}b/{bucket}/iam", self.cfg.storage);
        self.http
            .call(
                Method::PUT,
                &url,
                &[],
                Some(&policy),
                "storage.buckets.setIamPolicy",
                bucket,
            )
            .await?;
        Ok(())
    }

    fn bucket_members(bucket: &str, policy: &Json) -> Vec<Resource> {
        let mut out = Vec::new();
        for b in policy
            .get("bindings")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let Some(role) = b.get("role").and_then(Json::as_str) else {
                continue;
            };
            for m in b
                .get("members")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
            {
                let Some(m) = m.as_str() else { continue };
                let id = format!("{bucket}/{role}/{m}");
                let mut r = Resource::new(R::StorageBucketIam, id.clone())
                    .with_name(id)
                    .with_parent(bucket);
                r.attrs = [
                    ("bucket".to_owned(), json!(bucket)),
                    ("role".to_owned(), json!(role)),
                    ("member".to_owned(), json!(m)),
                ]
                .into();
                out.push(r);
            }
        }
        out
    }

    async fn bucket_acl(&self, bucket: &str) -> CloudResult<Vec<String>> {
        let url = format!("{}b/{bucket}/acl", self.cfg.storage);
        let j = self
            .http
            .call(
                Method::GET,
                &url,
                &[],
                None,
                "storage.bucketAccessControls.list",
                bucket,
            )
            .await?;
        Ok(j.get("items")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter_map(|i| {
                Some(format!(
                    "{}:{}",
                    i.get("role")?.as_str()?,
                    i.get("entity")?.as_str()?
                ))
            })
            .collect())
    }

    /// Makes the bucket's ACL exactly `want` (`ROLE:entity` entries).
    async fn set_bucket_acl(&self, bucket: &str, want: &[String]) -> CloudResult<()> {
        let have = self.bucket_acl(bucket).await?;
        let entity = |e: &str| e.split_once(':').map(|(r, e)| (r.to_owned(), e.to_owned()));
        for e in have.iter().filter(|e| !want.contains(e)) {
            if let Some((_, ent)) = entity(e) {
                let url = format!("{}b/{bucket}/acl/{ent}", self.cfg.storage);
                match self
                    .http
                    .call(
                        Method::DELETE,
                        &url,
                        &[],
                        None,
                        "storage.bucketAccessControls.delete",
                        bucket,
                    )
                    .await
                {
                    Ok(_) | Err(CloudError::NotFound { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        for e in want.iter().filter(|e| !have.contains(e)) {
            let Some((role, ent)) = entity(e) else {
                return Err(CloudError::invalid(
                    "google_storage_bucket_acl.role_entity",
                    format!("{e:?} is not ROLE:entity"),
                ));
            };
            let url = format!("{}b/{bucket}/acl", self.cfg.storage);
            self.http
                .call(
                    Method::POST,
                    &url,
                    &[],
                    Some(&json!({ "entity": ent, "role": role })),
                    "storage.bucketAccessControls.insert",
                    bucket,
                )
                .await?;
        }
        Ok(())
    }

    fn acl_resource(bucket: &str, entries: Vec<String>) -> Resource {
        Resource::new(R::StorageBucketAcl, bucket)
            .with_name(bucket)
            .with_parent(bucket)
            .with_attr("bucket", bucket)
            .with_attr("role_entity", json!(entries))
    }

    /// Reads one Compute object back by ID.
    async fn get_compute(&self, rt: GceResourceType, id: &str) -> CloudResult<Option<Resource>> {
        let url = self.compute(&self.ctx.object(rt, id));
        Ok(self
            .get_json(&url, &op_name(rt, "get"), id)
            .await?
            .map(|j| self.ctx.read_rest(rt, &j)))
    }

    async fn insert_template(&self, attrs: &BTreeMap<String, Json>) -> CloudResult<Resource> {
        let prefix = attrs
            .get("name_prefix")
            .and_then(Json::as_str)
            .unwrap_or("template-")
            .to_owned();
        let url = self.compute(&self.ctx.collection(R::InstanceTemplate, None));
        let mut stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        loop {
            let name = format!("{prefix}{stamp}");
            let body = self
                .ctx
                .to_rest(R::InstanceTemplate, &name, attrs, &BTreeMap::new());
            match self
                .call(
                    Method::POST,
                    &url,
                    &[],
                    Some(&body),
                    "compute.instanceTemplates.insert",
                    &name,
                )
                .await
            {
                Ok(_) => {
                    return self
                        .get_compute(R::InstanceTemplate, &name)
                        .await?
                        .ok_or_else(|| CloudError::not_found(format!("instance template {name}")));
                }
                // Two templates in one millisecond: the next one.
                Err(CloudError::AlreadyExists { .. }) => stamp += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// Replaces a template: the new one, every group that used the old one pointed at
    /// it, the old one deleted.
    async fn replace_template(
        &self,
        current: &Resource,
        changes: &BTreeMap<String, Json>,
    ) -> CloudResult<Resource> {
        let mut attrs = current.attrs.to_map();
        attrs.extend(changes.clone());
        let next = self.insert_template(&attrs).await?;
        let old_link = current.attr_str("self_link").unwrap_or_default().to_owned();
        let new_link = next.attr_str("self_link").unwrap_or_default().to_owned();
        let groups = self
            .list_compute(&ListQuery::new(R::InstanceGroupManager))
            .await?;
        for g in groups {
            let uses = g
                .attrs
                .get("version")
                .and_then(|v| v.get("instance_template"))
                .and_then(Json::as_str)
                == Some(old_link.as_str());
            if uses {
                let url = format!(
                    "{}/setInstanceTemplate",
                    self.compute(&self.ctx.object(R::InstanceGroupManager, &g.id))
                );
                self.call(
                    Method::POST,
                    &url,
                    &[],
                    Some(&json!({ "instanceTemplate": new_link })),
                    "compute.instanceGroupManagers.setInstanceTemplate",
                    &g.id,
                )
                .await?;
            }
        }
        self.delete(R::InstanceTemplate, &current.id).await?;
        Ok(next)
    }

    /// A custom verb on a Compute object (`setLabels`, `resize`, ...).
    async fn verb(
        &self,
        rt: GceResourceType,
        id: &str,
        verb: &str,
        query: &[(&str, String)],
        body: Json,
    ) -> CloudResult<()> {
        let url = format!("{}/{verb}", self.compute(&self.ctx.object(rt, id)));
        self.call(
            Method::POST,
            &url,
            query,
            Some(&body),
            &op_name(rt, verb),
            id,
        )
        .await?;
        Ok(())
    }

    async fn update_compute(
        &self,
        req: &UpdateRequest,
        current: Resource,
    ) -> CloudResult<Resource> {
        let rt = req.resource_type;
        let id = &req.id;
        let mut rest = req.attrs.clone();
        let fingerprint = |r: &Resource| r.attrs.get("label_fingerprint").cloned();
        let _ = fingerprint;
        match rt {
            R::InstanceTemplate => return self.replace_template(&current, &req.attrs).await,
            R::InstanceGroupManager => {
                if let Some(size) = rest.remove("target_size") {
                    let n = size.as_i64().unwrap_or_default();
                    self.verb(rt, id, "resize", &[("size", n.to_string())], json!({}))
                        .await?;
                }
                if let Some(v) = rest.remove("version") {
                    let one = match &v {
                        Json::Array(a) => a.first().cloned().unwrap_or(Json::Null),
                        o => o.clone(),
                    };
                    let link = one.get("instance_template").cloned().unwrap_or(Json::Null);
                    self.verb(
                        rt,
                        id,
                        "setInstanceTemplate",
                        &[],
                        json!({ "instanceTemplate": link }),
                    )
                    .await?;
                }
                if let Some(p) = rest.remove("target_pools") {
                    self.verb(rt, id, "setTargetPools", &[], json!({ "targetPools": p }))
                        .await?;
                }
            }
            R::Disk => {
                if let Some(size) = rest.remove("size") {
                    let n = size.as_i64().unwrap_or_default();
                    self.verb(rt, id, "resize", &[], json!({ "sizeGb": n.to_string() }))
                        .await?;
                }
            }
            R::ForwardingRule => {
                if let Some(t) = rest.remove("target") {
                    self.verb(rt, id, "setTarget", &[], json!({ "target": t }))
                        .await?;
                }
            }
            R::TargetPool => {
                if let Some(hc) = rest.remove("health_checks") {
                    let old: Vec<Json> = current
                        .attrs
                        .get("health_checks")
                        .and_then(Json::as_array)
                        .cloned()
                        .unwrap_or_default();
                    let new: Vec<Json> = hc.as_array().cloned().unwrap_or_default();
                    let gone: Vec<Json> = old
                        .iter()
                        .filter(|h| !new.contains(h))
                        .map(|h| json!({ "healthCheck": h }))
                        .collect();
                    let added: Vec<Json> = new
                        .iter()
                        .filter(|h| !old.contains(h))
                        .map(|h| json!({ "healthCheck": h }))
                        .collect();
                    if !gone.is_empty() {
                        self.verb(
                            rt,
                            id,
                            "removeHealthCheck",
                            &[],
                            json!({ "healthChecks": gone }),
                        )
                        .await?;
                    }
                    if !added.is_empty() {
                        self.verb(
                            rt,
                            id,
                            "addHealthCheck",
                            &[],
                            json!({ "healthChecks": added }),
                        )
                        .await?;
                    }
                }
            }
            _ => {}
        }
        if let Some(tags) = &req.tags
            && rt.facts().labelled
            && rt != R::InstanceTemplate
        {
            let url = self.compute(&self.ctx.object(rt, id));
            let now = self
                .get_json(&url, &op_name(rt, "get"), id)
                .await?
                .unwrap_or(Json::Null);
            let mut body = json!({ "labels": tags });
            if let Some(fp) = now.get("labelFingerprint") {
                body["labelFingerprint"] = fp.clone();
            }
            self.verb(rt, id, "setLabels", &[], body).await?;
        }
        if !rest.is_empty() {
            let url = self.compute(&self.ctx.object(rt, id));
            let body = self.ctx.to_rest(rt, "", &rest, &BTreeMap::new());
            self.call(
                Method::PATCH,
                &url,
                &[],
                Some(&body),
                &op_name(rt, "patch"),
                id,
            )
            .await?;
        }
        self.get_compute(rt, id)
            .await?
            .ok_or_else(|| CloudError::not_found(format!("{rt} {id}")))
    }
}

fn str_attr<'a>(attrs: &'a BTreeMap<String, Json>, k: &str) -> &'a str {
    attrs.get(k).and_then(Json::as_str).unwrap_or_default()
}

#[async_trait]
impl ResourceCloud<GceResourceType> for RestGce {
    async fn list(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = query.resource_type;
        let mut all = match rt {
            R::RouterNat => self
                .routers()
                .await?
                .iter()
                .flat_map(|r| self.ctx.nats_from_router(r))
                .collect(),
            R::ServiceAccount => self
                .http
                .list_pages(
                    &self.iam_accounts(),
                    &[],
                    "accounts",
                    "iam.serviceAccounts.list",
                )
                .await?
                .iter()
                .map(|j| self.account_from(j))
                .collect(),
            R::ProjectIamBinding => {
                let project = self.cfg.project.clone();
                Self::bindings_of(&project, &self.policy(&project).await?)
            }
            R::StorageBucketIam | R::StorageBucketAcl => {
                let buckets = match Self::bucket_of(query) {
                    Some(b) => vec![b],
                    None => self.cfg.buckets.clone(),
                };
                let mut out = Vec::new();
                for bucket in buckets {
                    if rt == R::StorageBucketIam {
                        out.extend(Self::bucket_members(
                            &bucket,
                            &self.bucket_iam(&bucket).await?,
                        ));
                    } else {
                        match self.bucket_acl(&bucket).await {
                            Ok(entries) => out.push(Self::acl_resource(&bucket, entries)),
                            Err(CloudError::NotFound { .. }) => {}
                            Err(e) => return Err(e),
                        }
                    }
                }
                out
            }
            _ => self.list_compute(query).await?,
        };
        all.retain(|r| query.matches(r));
        all.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(all)
    }

    async fn create(&self, req: &CreateRequest) -> CloudResult<Resource> {
        let rt = req.resource_type;
        match rt {
            R::InstanceTemplate => return self.insert_template(&req.attrs).await,
            R::RouterNat => {
                let name = req.name.clone().unwrap_or_default();
                let rname = last_component(str_attr(&req.attrs, "router")).to_owned();
                let id = format!("{rname}/{name}");
                let router = self.router(&rname).await?;
                let mut nats: Vec<Json> = router
                    .get("nats")
                    .and_then(Json::as_array)
                    .cloned()
                    .unwrap_or_default();
                if nats
                    .iter()
                    .any(|n| n.get("name").and_then(Json::as_str) == Some(name.as_str()))
                {
                    return Err(CloudError::AlreadyExists {
                        operation: "compute.routers.patch".into(),
                        what: id,
                        source: None,
                    });
                }
                nats.push(self.ctx.nat_to_rest(&name, &req.attrs));
                self.set_nats(&router, nats, &id).await?;
                let router = self.router(&rname).await?;
                return self
                    .ctx
                    .nats_from_router(&router)
                    .into_iter()
                    .find(|n| n.id == id)
                    .ok_or_else(|| CloudError::not_found(format!("router NAT {id}")));
            }
            R::ServiceAccount => {
                let account = req
                    .name
                    .clone()
                    .or_else(|| {
                        req.attrs
                            .get("account_id")
                            .and_then(Json::as_str)
                            .map(str::to_owned)
                    })
                    .unwrap_or_default();
                let body = json!({
                    "accountId": account,
                    "serviceAccount": {
                        "displayName": req.attrs.get("display_name"),
                        "description": req.attrs.get("description"),
                    }
                });
                let j = self
                    .http
                    .call(
                        Method::POST,
                        &self.iam_accounts(),
                        &[],
                        Some(&body),
                        "iam.serviceAccounts.create",
                        &account,
                    )
                    .await?;
                return Ok(self.account_from(&j));
            }
            R::ProjectIamBinding => {
                let project = str_attr(&req.attrs, "project").to_owned();
                let project = if project.is_empty() {
                    self.cfg.project.clone()
                } else {
                    project
                };
                let role = str_attr(&req.attrs, "role").to_owned();
                let members = req.attrs.get("members").cloned().unwrap_or(json!([]));
                self.bind(&project, &role, Some(members)).await?;
                return Self::bindings_of(&project, &self.policy(&project).await?)
                    .into_iter()
                    .find(|b| b.id == format!("{project}/{role}"))
                    .ok_or_else(|| CloudError::not_found(format!("binding {project}/{role}")));
            }
            R::StorageBucketIam => {
                let (b, role, m) = (
                    str_attr(&req.attrs, "bucket"),
                    str_attr(&req.attrs, "role"),
                    str_attr(&req.attrs, "member"),
                );
                self.set_bucket_member(b, role, m, true).await?;
                let id = format!("{b}/{role}/{m}");
                return Ok(Self::bucket_members(b, &self.bucket_iam(b).await?)
                    .into_iter()
                    .find(|r| r.id == id)
                    .unwrap_or_else(|| Resource::new(rt, id)));
            }
            R::StorageBucketAcl => {
                let b = str_attr(&req.attrs, "bucket").to_owned();
                let want: Vec<String> = req
                    .attrs
                    .get("role_entity")
                    .and_then(Json::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|e| e.as_str().map(str::to_owned))
                    .collect();
                self.set_bucket_acl(&b, &want).await?;
                return Ok(Self::acl_resource(&b, self.bucket_acl(&b).await?));
            }
            _ => {}
        }
        let Some(name) = req.name.clone() else {
            return Err(CloudError::invalid(format!("{rt}.name"), "required"));
        };
        let zone = if rt.scope() == Scope::Zonal {
            match self.ctx.zone_of(&req.attrs) {
                Some(z) if zone_to_region(z) == Some(self.cfg.region.as_str()) => {
                    Some(z.to_owned())
                }
                _ => {
                    return Err(CloudError::invalid(
                        format!("{rt} {name}.zone"),
                        format!("must be a zone of region {}", self.cfg.region),
                    ));
                }
            }
        } else {
            None
        };
        let url = self.compute(&self.ctx.collection(rt, zone.as_deref()));
        let body = self.ctx.to_rest(rt, &name, &req.attrs, &req.tags);
        let id = rt.id_of(&name, zone.as_deref());
        self.call(
            Method::POST,
            &url,
            &[],
            Some(&body),
            &op_name(rt, "insert"),
            &format!("{rt} {id}"),
        )
        .await?;
        self.get_compute(rt, &id)
            .await?
            .ok_or_else(|| CloudError::not_found(format!("{rt} {id}")))
    }

    async fn update(&self, req: &UpdateRequest) -> CloudResult<Resource> {
        let rt = req.resource_type;
        let current = match rt {
            R::RouterNat
            | R::ServiceAccount
            | R::ProjectIamBinding
            | R::StorageBucketIam
            | R::StorageBucketAcl => {
                let q = ListQuery::new(rt).with_ids([req.id.clone()]);
                self.list(&q).await?.into_iter().next()
            }
            _ => self.get_compute(rt, &req.id).await?,
        };
        let Some(current) = current else {
            return Err(CloudError::not_found(format!("{rt} {}", req.id)));
        };
        let bad = immutable_changes(rt, &current.attrs, &req.attrs);
        if let Some(first) = bad.first() {
            return Err(CloudError::invalid(
                format!("{rt}.{first}"),
                "cannot change in place",
            ));
        }
        match rt {
            R::RouterNat => {
                let rname = current.parent.clone().unwrap_or_default();
                let name = current.name.clone().unwrap_or_default();
                let mut attrs = current.attrs.to_map();
                attrs.extend(req.attrs.clone());
                let router = self.router(&rname).await?;
                let nats: Vec<Json> = router
                    .get("nats")
                    .and_then(Json::as_array)
                    .into_iter()
                    .flatten()
                    .map(|n| {
                        if n.get("name").and_then(Json::as_str) == Some(name.as_str()) {
                            self.ctx.nat_to_rest(&name, &attrs)
                        } else {
                            n.clone()
                        }
                    })
                    .collect();
                self.set_nats(&router, nats, &req.id).await?;
            }
            R::ServiceAccount => {
                let url = format!("{}/{}", self.iam_accounts(), req.id);
                let mut sa = serde_json::Map::new();
                let mut mask = Vec::new();
                for (tf, rest) in [
                    ("display_name", "displayName"),
                    ("description", "description"),
                ] {
                    if let Some(v) = req.attrs.get(tf) {
                        sa.insert(rest.into(), v.clone());
                        mask.push(rest);
                    }
                }
                if !mask.is_empty() {
                    let body = json!({ "serviceAccount": sa, "updateMask": mask.join(",") });
                    self.http
                        .call(
                            Method::PATCH,
                            &url,
                            &[],
                            Some(&body),
                            "iam.serviceAccounts.patch",
                            &req.id,
                        )
                        .await?;
                }
            }
            R::ProjectIamBinding => {
                let project = current.attr_str("project").unwrap_or_default().to_owned();
                let role = current.attr_str("role").unwrap_or_default().to_owned();
                let members = req
                    .attrs
                    .get("members")
                    .cloned()
                    .or_else(|| current.attrs.get("members").cloned());
                self.bind(&project, &role, members).await?;
            }
            R::StorageBucketIam => {}
            R::StorageBucketAcl => {
                let want: Vec<String> = req
                    .attrs
                    .get("role_entity")
                    .and_then(Json::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|e| e.as_str().map(str::to_owned))
                    .collect();
                self.set_bucket_acl(&req.id, &want).await?;
            }
            _ => return self.update_compute(req, current).await,
        }
        self.list(&ListQuery::new(rt).with_ids([req.id.clone()]))
            .await?
            .into_iter()
            .next()
            .ok_or_else(|| CloudError::not_found(format!("{rt} {}", req.id)))
    }

    async fn delete(&self, rt: GceResourceType, id: &str) -> CloudResult<()> {
        let ignore_missing = |r: CloudResult<Json>| match r {
            Ok(_) | Err(CloudError::NotFound { .. }) => Ok(()),
            Err(e) => Err(e),
        };
        match rt {
            R::RouterNat => {
                let Some((rname, name)) = id.split_once('/') else {
                    return Ok(());
                };
                let router = match self.router(rname).await {
                    Ok(r) => r,
                    Err(CloudError::NotFound { .. }) => return Ok(()),
                    Err(e) => return Err(e),
                };
                let nats: Vec<Json> = router
                    .get("nats")
                    .and_then(Json::as_array)
                    .cloned()
                    .unwrap_or_default();
                let kept: Vec<Json> = nats
                    .iter()
                    .filter(|n| n.get("name").and_then(Json::as_str) != Some(name))
                    .cloned()
                    .collect();
                if kept.len() != nats.len() {
                    self.set_nats(&router, kept, id).await?;
                }
                Ok(())
            }
            R::ServiceAccount => {
                let url = format!("{}/{id}", self.iam_accounts());
                ignore_missing(
                    self.http
                        .call(
                            Method::DELETE,
                            &url,
                            &[],
                            None,
                            "iam.serviceAccounts.delete",
                            id,
                        )
                        .await,
                )
            }
            R::ProjectIamBinding => {
                let Some((project, role)) = id.split_once('/') else {
                    return Ok(());
                };
                self.bind(project, role, None).await
            }
            R::StorageBucketIam => {
                let mut parts = id.splitn(2, '/');
                let (Some(b), Some(rest)) = (parts.next(), parts.next()) else {
                    return Ok(());
                };
                // `roles/storage.objectViewer/serviceAccount:x`: the member follows the
                // role's two path parts.
                let mut rp = rest.splitn(3, '/');
                let (Some(r1), Some(r2), Some(m)) = (rp.next(), rp.next(), rp.next()) else {
                    return Ok(());
                };
                self.set_bucket_member(b, &format!("{r1}/{r2}"), m, false)
                    .await
            }
            // Terraform leaves a bucket's ACL in place on destroy; so does the backend.
            R::StorageBucketAcl => Ok(()),
            _ => {
                let url = self.compute(&self.ctx.object(rt, id));
                ignore_missing(
                    self.call(
                        Method::DELETE,
                        &url,
                        &[],
                        None,
                        &op_name(rt, "delete"),
                        &format!("{rt} {id}"),
                    )
                    .await,
                )
            }
        }
    }
}

#[async_trait]
impl GceCloud for RestGce {
    async fn project(&self) -> CloudResult<ProjectInfo> {
        let j = self
            .http
            .call(
                Method::GET,
                &self.compute(""),
                &[],
                None,
                "compute.projects.get",
                &self.cfg.project,
            )
            .await?;
        let sa = j
            .get("defaultServiceAccount")
            .and_then(Json::as_str)
            .unwrap_or_default();
        Ok(ProjectInfo::new(
            self.cfg.project.clone(),
            self.cfg.region.clone(),
            sa,
        ))
    }

    async fn zones(&self) -> CloudResult<Vec<String>> {
        let items = self
            .http
            .list_pages(
                &self.compute("zones"),
                &[("maxResults", "500".to_owned())],
                "items",
                "compute.zones.list",
            )
            .await?;
        let mut zones: Vec<String> = items
            .iter()
            .filter(|z| {
                z.get("region").and_then(Json::as_str).map(last_component)
                    == Some(self.cfg.region.as_str())
            })
            .filter_map(|z| z.get("name").and_then(Json::as_str).map(str::to_owned))
            .collect();
        zones.sort();
        Ok(zones)
    }

    async fn managed_zones(&self) -> CloudResult<Vec<ManagedZone>> {
        let url = format!("{}projects/{}/managedZones", self.cfg.dns, self.cfg.project);
        let items = self
            .http
            .list_pages(&url, &[], "managedZones", "dns.managedZones.list")
            .await?;
        Ok(items
            .iter()
            .filter_map(|z| {
                // The API writes the uint64 ID as a string; accept a number too.
                let id = match z.get("id")? {
                    Json::String(s) => s.clone(),
                    Json::Number(n) => n.to_string(),
                    _ => return None,
                };
                let dns_name = z.get("dnsName").and_then(Json::as_str)?;
                let private = z.get("visibility").and_then(Json::as_str) == Some("private");
                Some(ManagedZone::new(id, dns_name, private))
            })
            .collect())
    }

    async fn managed_instances(&self, group: &str) -> CloudResult<Vec<ManagedInstance>> {
        let rt = GceResourceType::InstanceGroupManager;
        let url = format!(
            "{}/listManagedInstances",
            self.compute(&self.ctx.object(rt, group))
        );
        let operation = op_name(rt, "listManagedInstances");
        let zone = group.split_once('/').map(|(z, _)| z).unwrap_or_default();
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            // A POST, paginated like a list.
            let mut q = vec![("maxResults", "500".to_owned())];
            if let Some(t) = token.take() {
                q.push(("pageToken", t));
            }
            let page = self
                .http
                .call(Method::POST, &url, &q, None, &operation, group)
                .await?;
            for m in page
                .get("managedInstances")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
            {
                let s = |k: &str| m.get(k).and_then(Json::as_str).unwrap_or_default();
                let link = s("instance");
                let template = m
                    .get("version")
                    .and_then(|v| v.get("instanceTemplate"))
                    .and_then(Json::as_str)
                    .map(str::to_owned);
                let zone = link
                    .split("/zones/")
                    .nth(1)
                    .and_then(|r| r.split('/').next())
                    .unwrap_or(zone);
                out.push(
                    ManagedInstance::new(last_component(link), zone, template)
                        .with_state(s("instanceStatus"), s("currentAction")),
                );
            }
            match page.get("nextPageToken").and_then(Json::as_str) {
                Some(t) if !t.is_empty() => token = Some(t.to_owned()),
                _ => return Ok(out),
            }
        }
    }

    async fn recreate_instances(&self, group: &str, instances: &[String]) -> CloudResult<()> {
        let zone = group.split_once('/').map(|(z, _)| z).unwrap_or_default();
        let urls: Vec<String> = instances
            .iter()
            .map(|i| {
                format!(
                    "{COMPUTE_URL}projects/{}/zones/{zone}/instances/{i}",
                    self.cfg.project
                )
            })
            .collect();
        self.verb(
            GceResourceType::InstanceGroupManager,
            group,
            "recreateInstances",
            &[],
            json!({ "instances": urls }),
        )
        .await
    }
}
