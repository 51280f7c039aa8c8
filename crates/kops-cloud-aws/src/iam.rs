//! IAM: roles, inline policies, managed-policy attachments, instance profiles and OIDC
//! providers. IDs are names (`<role>:<policy>` for inline policies,
//! `<role>:<policy arn>` for attachments, the ARN for OIDC providers).

use std::collections::BTreeMap;

use crate::cloud::{CloudError as Error, CloudResult as Result, Tags};
use crate::cloud::{CreateRequest, Resource, ResourceType, Service, UpdateRequest};
use aws_sdk_iam::types::Tag;

use crate::backend::{AwsBackend, Scope};
use crate::convert::{
    Attrs, check_immutable, immutable, jlist, req, s, strs, strs_of, tag_diff, url_decode,
};

use ResourceType as R;

const IAM: Service = Service::Iam;

fn tags_of(tags: &[Tag]) -> Tags {
    tags.iter()
        .map(|t| (t.key().to_owned(), t.value().to_owned()))
        .collect()
}

fn tag_list(tags: &BTreeMap<String, String>) -> Result<Vec<Tag>> {
    tags.iter()
        .map(|(k, v)| {
            Tag::builder()
                .key(k)
                .value(v)
                .build()
                .map_err(|e| Error::invalid(format!("tags.{k}"), e.to_string()))
        })
        .collect()
}

async fn role_names(be: &AwsBackend) -> Result<Vec<String>> {
    let mut names = Vec::new();
    let mut st = be.inner.iam.list_roles().into_paginator().send();
    while let Some(p) = be.page(IAM, "ListRoles", "roles", st.next()).await? {
        names.extend(p.roles().iter().map(|r| r.role_name().to_owned()));
    }
    Ok(names)
}

async fn role(be: &AwsBackend, name: &str) -> Result<Option<Resource>> {
    let Some(o) = be
        .call_opt(
            IAM,
            "GetRole",
            name,
            be.inner.iam.get_role().role_name(name).send(),
        )
        .await?
    else {
        return Ok(None);
    };
    let Some(r) = o.role() else { return Ok(None) };
    let mut x = Resource::new(R::IamRole, r.role_name())
        .with_name(r.role_name())
        .with_arn(r.arn())
        .with_attr(
            "assume_role_policy",
            url_decode(r.assume_role_policy_document().unwrap_or_default()),
        );
    if let Some(b) = r
        .permissions_boundary()
        .and_then(|b| b.permissions_boundary_arn())
    {
        x = x.with_attr("permissions_boundary", b);
    }
    x.tags = tags_of(r.tags());
    Ok(Some(x))
}

async fn profile(be: &AwsBackend, name: &str) -> Result<Option<Resource>> {
    let Some(o) = be
        .call_opt(
            IAM,
            "GetInstanceProfile",
            name,
            be.inner
                .iam
                .get_instance_profile()
                .instance_profile_name(name)
                .send(),
        )
        .await?
    else {
        return Ok(None);
    };
    let Some(p) = o.instance_profile() else {
        return Ok(None);
    };
    let mut x = Resource::new(R::IamInstanceProfile, p.instance_profile_name())
        .with_name(p.instance_profile_name())
        .with_arn(p.arn());
    if let Some(r) = p.roles().first() {
        x = x.with_attr("role", r.role_name());
    }
    x.tags = tags_of(p.tags());
    Ok(Some(x))
}

async fn role_policies(be: &AwsBackend, role: &str, out: &mut Vec<Resource>) -> Result<()> {
    let mut names = Vec::new();
    let mut st = be
        .inner
        .iam
        .list_role_policies()
        .role_name(role)
        .into_paginator()
        .send();
    loop {
        match be.page(IAM, "ListRolePolicies", role, st.next()).await {
            Ok(Some(p)) => names.extend(p.policy_names().iter().cloned()),
            Ok(None) => break,
            Err(Error::NotFound { .. }) => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    for n in names {
        let what = format!("{role}:{n}");
        if let Some(o) = be
            .call_opt(
                IAM,
                "GetRolePolicy",
                &what,
                be.inner
                    .iam
                    .get_role_policy()
                    .role_name(role)
                    .policy_name(&n)
                    .send(),
            )
            .await?
        {
            out.push(
                Resource::new(R::IamRolePolicy, what)
                    .with_name(n.as_str())
                    .with_parent(role)
                    .with_attr("role", role)
                    .with_attr("policy", url_decode(o.policy_document())),
            );
        }
    }
    Ok(())
}

async fn role_attachments(be: &AwsBackend, role: &str, out: &mut Vec<Resource>) -> Result<()> {
    let mut st = be
        .inner
        .iam
        .list_attached_role_policies()
        .role_name(role)
        .into_paginator()
        .send();
    loop {
        match be
            .page(IAM, "ListAttachedRolePolicies", role, st.next())
            .await
        {
            Ok(Some(p)) => {
                for a in p.attached_policies() {
                    let arn = a.policy_arn().unwrap_or_default();
                    out.push(
                        Resource::new(R::IamRolePolicyAttachment, format!("{role}:{arn}"))
                            .with_parent(role)
                            .with_attr("role", role)
                            .with_attr("policy_arn", arn),
                    );
                }
            }
            Ok(None) => return Ok(()),
            Err(Error::NotFound { .. }) => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

fn parent_of(id: &str) -> Option<String> {
    id.split_once(':').map(|(r, _)| r.to_owned())
}

pub(crate) async fn list(
    be: &AwsBackend,
    rt: ResourceType,
    scope: &Scope,
) -> Result<Vec<Resource>> {
    let mut out = Vec::new();
    match rt {
        R::IamRole | R::IamInstanceProfile => {
            let names = match scope {
                Scope::Names(n) | Scope::Ids(n) => n.clone(),
                _ if rt == R::IamRole => role_names(be).await?,
                _ => {
                    let mut names = Vec::new();
                    let mut st = be
                        .inner
                        .iam
                        .list_instance_profiles()
                        .into_paginator()
                        .send();
                    while let Some(p) = be
                        .page(IAM, "ListInstanceProfiles", "instance profiles", st.next())
                        .await?
                    {
                        names.extend(
                            p.instance_profiles()
                                .iter()
                                .map(|p| p.instance_profile_name().to_owned()),
                        );
                    }
                    names
                }
            };
            // List calls do not return tags; reading each object does.
            for n in names {
                let r = if rt == R::IamRole {
                    role(be, &n).await?
                } else {
                    profile(be, &n).await?
                };
                out.extend(r);
            }
        }
        R::IamRolePolicy | R::IamRolePolicyAttachment => {
            let roles = match scope {
                Scope::Parent(p) => vec![p.clone()],
                Scope::Ids(ids) => {
                    let mut r: Vec<String> = ids.iter().filter_map(|i| parent_of(i)).collect();
                    r.dedup();
                    r
                }
                _ => role_names(be).await?,
            };
            for r in roles {
                if rt == R::IamRolePolicy {
                    role_policies(be, &r, &mut out).await?;
                } else {
                    role_attachments(be, &r, &mut out).await?;
                }
            }
        }
        R::IamOidcProvider => {
            let arns: Vec<String> = match scope {
                Scope::Ids(ids) => ids.clone(),
                _ => {
                    let o = be
                        .call(
                            IAM,
                            "ListOpenIDConnectProviders",
                            "OIDC providers",
                            be.inner.iam.list_open_id_connect_providers().send(),
                        )
                        .await?;
                    o.open_id_connect_provider_list()
                        .iter()
                        .filter_map(|p| p.arn().map(str::to_owned))
                        .collect()
                }
            };
            for arn in arns {
                if let Some(o) = be
                    .call_opt(
                        IAM,
                        "GetOpenIDConnectProvider",
                        &arn,
                        be.inner
                            .iam
                            .get_open_id_connect_provider()
                            .open_id_connect_provider_arn(&arn)
                            .send(),
                    )
                    .await?
                {
                    let url = o.url().unwrap_or_default();
                    let url = if url.starts_with("https://") {
                        url.to_owned()
                    } else {
                        format!("https://{url}")
                    };
                    let mut x = Resource::new(rt, arn.as_str())
                        .with_arn(arn.as_str())
                        .with_attr("url", url)
                        .with_attr("client_id_list", jlist(o.client_id_list()))
                        .with_attr("thumbprint_list", jlist(o.thumbprint_list()));
                    x.tags = tags_of(o.tags());
                    out.push(x);
                }
            }
        }
        other => {
            return Err(Error::NotImplemented {
                operation: format!("list {other}"),
                implementer: "kops-cloud-aws IAM".into(),
            });
        }
    }
    Ok(out)
}

async fn reread(be: &AwsBackend, rt: ResourceType, id: &str) -> Result<Resource> {
    be.reread(rt, id).await
}

pub(crate) async fn create(be: &AwsBackend, rq: &CreateRequest) -> Result<Resource> {
    let iam = &be.inner.iam;
    let rt = rq.resource_type;
    let a = &rq.attrs;
    let name = || {
        rq.name
            .clone()
            .or_else(|| s(a, "name"))
            .ok_or_else(|| Error::invalid(format!("{rt}.name"), "is required"))
    };
    let id = match rt {
        R::IamRole => {
            let n = name()?;
            be.call(
                IAM,
                "CreateRole",
                &n,
                iam.create_role()
                    .role_name(&n)
                    .assume_role_policy_document(req(a, "assume_role_policy", rt)?)
                    .set_permissions_boundary(s(a, "permissions_boundary"))
                    .set_tags(Some(tag_list(&rq.tags)?))
                    .send(),
            )
            .await?;
            n
        }
        R::IamRolePolicy => {
            let n = name()?;
            let role = rq.parent.clone().map_or_else(|| req(a, "role", rt), Ok)?;
            be.call(
                IAM,
                "PutRolePolicy",
                &n,
                iam.put_role_policy()
                    .role_name(&role)
                    .policy_name(&n)
                    .policy_document(req(a, "policy", rt)?)
                    .send(),
            )
            .await?;
            format!("{role}:{n}")
        }
        R::IamRolePolicyAttachment => {
            let role = rq.parent.clone().map_or_else(|| req(a, "role", rt), Ok)?;
            let arn = req(a, "policy_arn", rt)?;
            be.call(
                IAM,
                "AttachRolePolicy",
                &role,
                iam.attach_role_policy()
                    .role_name(&role)
                    .policy_arn(&arn)
                    .send(),
            )
            .await?;
            format!("{role}:{arn}")
        }
        R::IamInstanceProfile => {
            let n = name()?;
            be.call(
                IAM,
                "CreateInstanceProfile",
                &n,
                iam.create_instance_profile()
                    .instance_profile_name(&n)
                    .set_tags(Some(tag_list(&rq.tags)?))
                    .send(),
            )
            .await?;
            if let Some(role) = s(a, "role") {
                be.call(
                    IAM,
                    "AddRoleToInstanceProfile",
                    &n,
                    iam.add_role_to_instance_profile()
                        .instance_profile_name(&n)
                        .role_name(role)
                        .send(),
                )
                .await?;
            }
            n
        }
        R::IamOidcProvider => {
            let o = be
                .call(
                    IAM,
                    "CreateOpenIDConnectProvider",
                    "OIDC provider",
                    iam.create_open_id_connect_provider()
                        .url(req(a, "url", rt)?)
                        .set_client_id_list(Some(strs(a, "client_id_list")))
                        .set_thumbprint_list(Some(strs(a, "thumbprint_list")))
                        .set_tags(Some(tag_list(&rq.tags)?))
                        .send(),
                )
                .await?;
            o.open_id_connect_provider_arn()
                .unwrap_or_default()
                .to_owned()
        }
        other => {
            return Err(Error::NotImplemented {
                operation: format!("create {other}"),
                implementer: "kops-cloud-aws".into(),
            });
        }
    };
    reread(be, rt, &id).await
}

pub(crate) async fn update(be: &AwsBackend, rq: &UpdateRequest) -> Result<Resource> {
    let rt = rq.resource_type;
    let id = rq.id.as_str();
    let old = be.reread(rt, id).await.map_err(|_| Error::NotFound {
        what: format!("{rt} {id}"),
    })?;
    check_immutable(rt, &old.attrs, &rq.attrs)?;
    let mut a = rq.attrs.clone();
    match rt {
        R::IamRole => update_iam_role(be, rq, id, &old, &mut a).await?,
        R::IamRolePolicy => update_iam_role_policy(be, id, &old, &mut a).await?,
        R::IamInstanceProfile => update_iam_instance_profile(be, rq, rt, id, &old, &mut a).await?,
        R::IamOidcProvider => update_iam_oidc_provider(be, rt, id, &old, &mut a).await?,
        _ => {
            if !a.is_empty() {
                return Err(immutable(rt, &a));
            }
        }
    }
    reread(be, rt, id).await
}

/// Applies the changed attributes `a` to one `IamRole`.
async fn update_iam_role(
    be: &AwsBackend,
    rq: &UpdateRequest,
    id: &str,
    old: &Resource,
    a: &mut Attrs,
) -> Result<()> {
    let iam = &be.inner.iam;
    if let Some(p) = s(a, "assume_role_policy") {
        be.call(
            IAM,
            "UpdateAssumeRolePolicy",
            id,
            iam.update_assume_role_policy()
                .role_name(id)
                .policy_document(p)
                .send(),
        )
        .await?;
    }
    if a.contains_key("permissions_boundary") {
        match s(a, "permissions_boundary") {
            Some(b) => {
                be.call(
                    IAM,
                    "PutRolePermissionsBoundary",
                    id,
                    iam.put_role_permissions_boundary()
                        .role_name(id)
                        .permissions_boundary(b)
                        .send(),
                )
                .await?;
            }
            None => {
                be.call(
                    IAM,
                    "DeleteRolePermissionsBoundary",
                    id,
                    iam.delete_role_permissions_boundary().role_name(id).send(),
                )
                .await?;
            }
        }
    }
    if let Some(new) = &rq.tags {
        let (set, removed) = tag_diff(&old.tags, new);
        if !set.is_empty() {
            be.call(
                IAM,
                "TagRole",
                id,
                iam.tag_role()
                    .role_name(id)
                    .set_tags(Some(tag_list(&set)?))
                    .send(),
            )
            .await?;
        }
        if !removed.is_empty() {
            be.call(
                IAM,
                "UntagRole",
                id,
                iam.untag_role()
                    .role_name(id)
                    .set_tag_keys(Some(removed))
                    .send(),
            )
            .await?;
        }
    }
    Ok(())
}

/// Applies the changed attributes `a` to one `IamRolePolicy`.
async fn update_iam_role_policy(
    be: &AwsBackend,
    id: &str,
    old: &Resource,
    a: &mut Attrs,
) -> Result<()> {
    let iam = &be.inner.iam;
    let role = parent_of(id).unwrap_or_default();
    if let Some(p) = s(a, "policy") {
        be.call(
            IAM,
            "PutRolePolicy",
            id,
            iam.put_role_policy()
                .role_name(&role)
                .policy_name(old.name.clone().unwrap_or_default())
                .policy_document(p)
                .send(),
        )
        .await?;
    }
    Ok(())
}

/// Applies the changed attributes `a` to one `IamInstanceProfile`.
async fn update_iam_instance_profile(
    be: &AwsBackend,
    rq: &UpdateRequest,
    rt: ResourceType,
    id: &str,
    old: &Resource,
    a: &mut Attrs,
) -> Result<()> {
    let iam = &be.inner.iam;
    if a.contains_key("role") {
        if let Some(prev) = old.attr_str("role") {
            be.call(
                IAM,
                "RemoveRoleFromInstanceProfile",
                id,
                iam.remove_role_from_instance_profile()
                    .instance_profile_name(id)
                    .role_name(prev)
                    .send(),
            )
            .await?;
        }
        if let Some(r) = s(a, "role") {
            be.call(
                IAM,
                "AddRoleToInstanceProfile",
                id,
                iam.add_role_to_instance_profile()
                    .instance_profile_name(id)
                    .role_name(r)
                    .send(),
            )
            .await?;
        }
        a.remove("role");
    }
    if !a.is_empty() {
        return Err(immutable(rt, a));
    }
    if let Some(new) = &rq.tags {
        let (set, removed) = tag_diff(&old.tags, new);
        if !set.is_empty() {
            be.call(
                IAM,
                "TagInstanceProfile",
                id,
                iam.tag_instance_profile()
                    .instance_profile_name(id)
                    .set_tags(Some(tag_list(&set)?))
                    .send(),
            )
            .await?;
        }
        if !removed.is_empty() {
            be.call(
                IAM,
                "UntagInstanceProfile",
                id,
                iam.untag_instance_profile()
                    .instance_profile_name(id)
                    .set_tag_keys(Some(removed))
                    .send(),
            )
            .await?;
        }
    }
    Ok(())
}

/// Applies the changed attributes `a` to one `IamOidcProvider`.
async fn update_iam_oidc_provider(
    be: &AwsBackend,
    rt: ResourceType,
    id: &str,
    old: &Resource,
    a: &mut Attrs,
) -> Result<()> {
    let iam = &be.inner.iam;
    if a.contains_key("thumbprint_list") {
        be.call(
            IAM,
            "UpdateOpenIDConnectProviderThumbprint",
            id,
            iam.update_open_id_connect_provider_thumbprint()
                .open_id_connect_provider_arn(id)
                .set_thumbprint_list(Some(strs(a, "thumbprint_list")))
                .send(),
        )
        .await?;
        a.remove("thumbprint_list");
    }
    if a.contains_key("client_id_list") {
        let want = strs(a, "client_id_list");
        let have = strs_of(old.attrs.get("client_id_list"));
        for c in want.iter().filter(|c| !have.contains(c)) {
            be.call(
                IAM,
                "AddClientIDToOpenIDConnectProvider",
                id,
                iam.add_client_id_to_open_id_connect_provider()
                    .open_id_connect_provider_arn(id)
                    .client_id(c)
                    .send(),
            )
            .await?;
        }
        for c in have.iter().filter(|c| !want.contains(c)) {
            be.call(
                IAM,
                "RemoveClientIDFromOpenIDConnectProvider",
                id,
                iam.remove_client_id_from_open_id_connect_provider()
                    .open_id_connect_provider_arn(id)
                    .client_id(c)
                    .send(),
            )
            .await?;
        }
        a.remove("client_id_list");
    }
    if !a.is_empty() {
        return Err(immutable(rt, a));
    }
    Ok(())
}

pub(crate) async fn delete(be: &AwsBackend, rt: ResourceType, id: &str) -> Result<()> {
    let iam = &be.inner.iam;
    match rt {
        R::IamRole => {
            // Detach everything that holds the role first, as IAM requires.
            let mut children = Vec::new();
            role_policies(be, id, &mut children).await?;
            role_attachments(be, id, &mut children).await?;
            for c in children {
                Box::pin(delete(be, c.resource_type, &c.id)).await?;
            }
            let profiles = be
                .call_opt(
                    IAM,
                    "ListInstanceProfilesForRole",
                    id,
                    iam.list_instance_profiles_for_role().role_name(id).send(),
                )
                .await?;
            for p in profiles.iter().flat_map(|p| p.instance_profiles()) {
                be.call(
                    IAM,
                    "RemoveRoleFromInstanceProfile",
                    id,
                    iam.remove_role_from_instance_profile()
                        .instance_profile_name(p.instance_profile_name())
                        .role_name(id)
                        .send(),
                )
                .await?;
            }
            be.call(
                IAM,
                "DeleteRole",
                id,
                iam.delete_role().role_name(id).send(),
            )
            .await?;
        }
        R::IamRolePolicy => {
            let (role, policy) = id
                .split_once(':')
                .ok_or_else(|| Error::invalid(format!("{rt} {id}"), "IDs are <role>:<policy>"))?;
            be.call(
                IAM,
                "DeleteRolePolicy",
                id,
                iam.delete_role_policy()
                    .role_name(role)
                    .policy_name(policy)
                    .send(),
            )
            .await?;
        }
        R::IamRolePolicyAttachment => {
            let (role, arn) = id.split_once(':').ok_or_else(|| {
                Error::invalid(format!("{rt} {id}"), "IDs are <role>:<policy arn>")
            })?;
            be.call(
                IAM,
                "DetachRolePolicy",
                id,
                iam.detach_role_policy()
                    .role_name(role)
                    .policy_arn(arn)
                    .send(),
            )
            .await?;
        }
        R::IamInstanceProfile => {
            if let Some(p) = profile(be, id).await?
                && let Some(r) = p.attr_str("role")
            {
                be.call(
                    IAM,
                    "RemoveRoleFromInstanceProfile",
                    id,
                    iam.remove_role_from_instance_profile()
                        .instance_profile_name(id)
                        .role_name(r)
                        .send(),
                )
                .await?;
            }
            be.call(
                IAM,
                "DeleteInstanceProfile",
                id,
                iam.delete_instance_profile()
                    .instance_profile_name(id)
                    .send(),
            )
            .await?;
        }
        R::IamOidcProvider => {
            be.call(
                IAM,
                "DeleteOpenIDConnectProvider",
                id,
                iam.delete_open_id_connect_provider()
                    .open_id_connect_provider_arn(id)
                    .send(),
            )
            .await?;
        }
        other => {
            return Err(Error::NotImplemented {
                operation: format!("delete {other}"),
                implementer: "kops-cloud-aws".into(),
            });
        }
    }
    Ok(())
}
