//! IAM roles, inline and attached policies, instance profiles, OIDC providers.

use kops_cloud_aws::cloud::{CloudResult, ListQuery, Resource, ResourceType};
use kops_tasks::resource::Tags as ResourceTags;

use super::{Create, Kind, Update, removed_tags};
use crate::cloud::{
    IntoCloud, a_i32, a_list, a_str, gone, list_of, new_res, put, put_opt, split2, to_cloud_error,
};
use crate::iam::CreateRole;
use crate::{MockAws, Tags};

/// [`ResourceType::IamRole`].
pub(super) struct IamRole;

impl Kind for IamRole {
    fn kind(&self) -> ResourceType {
        ResourceType::IamRole
    }

    fn native(&self) -> &'static [&'static str] {
        &[
            "assume_role_policy",
            "permissions_boundary",
            "description",
            "max_session_duration",
            "path",
            "unique_id",
        ]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        for role in m.list_roles("/").into_cloud()? {
            let mut r = new_res(rt, &role.name, &role.tags)
                .with_name(&role.name)
                .with_arn(&role.arn);
            put(
                &mut r.attrs,
                "assume_role_policy",
                role.assume_role_policy_document,
            );
            put_opt(
                &mut r.attrs,
                "permissions_boundary",
                role.permissions_boundary,
            );
            put_opt(&mut r.attrs, "description", role.description);
            put_opt(
                &mut r.attrs,
                "max_session_duration",
                role.max_session_duration,
            );
            put(&mut r.attrs, "path", role.path);
            put(&mut r.attrs, "unique_id", role.id);
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let tags = c.tags();
        Ok(m.create_role(CreateRole {
            name: c.name()?,
            path: a_str(a, "path").unwrap_or_default(),
            assume_role_policy_document: c.need("assume_role_policy")?,
            description: a_str(a, "description"),
            max_session_duration: a_i32(a, "max_session_duration"),
            permissions_boundary: a_str(a, "permissions_boundary"),
            tags,
        })
        .into_cloud()?
        .name)
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let id = u.id;
        let a = u.a;
        if let Some(d) = a_str(a, "assume_role_policy") {
            m.update_assume_role_policy(id, &d).into_cloud()?;
        }
        if a.contains_key("permissions_boundary") {
            m.set_role_permissions_boundary(id, a_str(a, "permissions_boundary"))
                .into_cloud()?;
        }
        if a.contains_key("description") || a.contains_key("max_session_duration") {
            m.update_role(
                id,
                a_str(a, "description"),
                a_i32(a, "max_session_duration"),
            )
            .into_cloud()?;
        }
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        match m.get_role(id) {
            Ok(_) => {}
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(to_cloud_error(e)),
        }
        for p in m.list_role_policies(id).into_cloud()? {
            gone(m.delete_role_policy(id, &p))?;
        }
        for arn in m.list_attached_role_policies(id).into_cloud()? {
            gone(m.detach_role_policy(id, &arn))?;
        }
        for p in m.list_instance_profiles("/").into_cloud()? {
            if p.roles.iter().any(|r| r == id) {
                gone(m.remove_role_from_instance_profile(&p.name, id))?;
            }
        }
        gone(m.delete_role(id))
    }

    fn retag(&self, m: &MockAws, id: &str, old: &ResourceTags, new: &Tags) -> CloudResult<()> {
        let removed = removed_tags(old, new);
        if !removed.is_empty() {
            m.untag_role(id, &removed).into_cloud()?;
        }
        m.tag_role(id, new).into_cloud()
    }
}

/// [`ResourceType::IamRolePolicy`].
pub(super) struct IamRolePolicy;

impl Kind for IamRolePolicy {
    fn kind(&self) -> ResourceType {
        ResourceType::IamRolePolicy
    }

    fn native(&self) -> &'static [&'static str] {
        &["role", "policy", "name"]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        let roles = queried_roles(m, q)?;
        for role in roles {
            for p in m.list_role_policies(&role).into_cloud()? {
                let doc = m.get_role_policy(&role, &p).into_cloud()?;
                let mut r = Resource::new(rt, format!("{role}:{p}"))
                    .with_name(&p)
                    .with_parent(&role);
                put(&mut r.attrs, "role", role.clone());
                put(&mut r.attrs, "policy", doc);
                put(&mut r.attrs, "name", p);
                out.push(r);
            }
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let role = c.parent_or("role")?;
        let policy = c.name()?;
        m.put_role_policy(&role, &policy, &c.need("policy")?)
            .into_cloud()?;
        Ok(format!("{role}:{policy}"))
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let rt = u.rt;
        let id = u.id;
        let a = u.a;
        let (role, policy) = split2(rt, id, ':')?;
        if let Some(d) = a_str(a, "policy") {
            m.put_role_policy(role, policy, &d).into_cloud()?;
        }
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        let rt = self.kind();
        let (role, policy) = split2(rt, id, ':')?;
        gone(m.delete_role_policy(role, policy))
    }
}

/// [`ResourceType::IamRolePolicyAttachment`].
pub(super) struct IamRolePolicyAttachment;

impl Kind for IamRolePolicyAttachment {
    fn kind(&self) -> ResourceType {
        ResourceType::IamRolePolicyAttachment
    }

    fn native(&self) -> &'static [&'static str] {
        &["role", "policy_arn"]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        let roles = queried_roles(m, q)?;
        for role in roles {
            for arn in m.list_attached_role_policies(&role).into_cloud()? {
                let mut r = Resource::new(rt, format!("{role}:{arn}")).with_parent(&role);
                put(&mut r.attrs, "role", role.clone());
                put(&mut r.attrs, "policy_arn", arn);
                out.push(r);
            }
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let role = c.parent_or("role")?;
        let arn = c.need("policy_arn")?;
        m.attach_role_policy(&role, &arn).into_cloud()?;
        Ok(format!("{role}:{arn}"))
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        let rt = self.kind();
        let (role, arn) = split2(rt, id, ':')?;
        gone(m.detach_role_policy(role, arn))
    }
}

/// [`ResourceType::IamInstanceProfile`].
pub(super) struct IamInstanceProfile;

impl Kind for IamInstanceProfile {
    fn kind(&self) -> ResourceType {
        ResourceType::IamInstanceProfile
    }

    fn native(&self) -> &'static [&'static str] {
        &["role", "path"]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        for p in m.list_instance_profiles("/").into_cloud()? {
            let mut r = new_res(rt, &p.name, &p.tags)
                .with_name(&p.name)
                .with_arn(&p.arn);
            put_opt(&mut r.attrs, "role", p.roles.first().cloned());
            put(&mut r.attrs, "path", p.path);
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let tags = c.tags();
        let n = c.name()?;
        m.create_instance_profile(&n, &a_str(a, "path").unwrap_or_default(), tags)
            .into_cloud()?;
        if let Some(role) = a_str(a, "role") {
            m.add_role_to_instance_profile(&n, &role).into_cloud()?;
        }
        Ok(n)
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let id = u.id;
        let a = u.a;
        let current = &u.current;
        if u.changed("role") {
            if let Some(old) = current.attr_str("role") {
                m.remove_role_from_instance_profile(id, old).into_cloud()?;
            }
            if let Some(new) = a_str(a, "role") {
                m.add_role_to_instance_profile(id, &new).into_cloud()?;
            }
        }
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        let p = match m.get_instance_profile(id) {
            Ok(p) => p,
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(to_cloud_error(e)),
        };
        for r in &p.roles {
            gone(m.remove_role_from_instance_profile(id, r))?;
        }
        gone(m.delete_instance_profile(id))
    }

    fn retag(&self, m: &MockAws, id: &str, old: &ResourceTags, new: &Tags) -> CloudResult<()> {
        let removed = removed_tags(old, new);
        if !removed.is_empty() {
            m.untag_instance_profile(id, &removed).into_cloud()?;
        }
        m.tag_instance_profile(id, new).into_cloud()
    }
}

/// [`ResourceType::IamOidcProvider`].
pub(super) struct IamOidcProvider;

impl Kind for IamOidcProvider {
    fn kind(&self) -> ResourceType {
        ResourceType::IamOidcProvider
    }

    fn native(&self) -> &'static [&'static str] {
        &["url", "client_id_list", "thumbprint_list"]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        for arn in m.list_oidc_providers().into_cloud()? {
            let p = m.get_oidc_provider(&arn).into_cloud()?;
            let mut r = new_res(rt, &p.arn, &p.tags).with_arn(&p.arn);
            put(&mut r.attrs, "url", p.url);
            put(&mut r.attrs, "client_id_list", p.client_ids);
            put(&mut r.attrs, "thumbprint_list", p.thumbprints);
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let tags = c.tags();
        Ok(m.create_oidc_provider(
            &c.need("url")?,
            a_list(a, "client_id_list"),
            a_list(a, "thumbprint_list"),
            tags,
        )
        .into_cloud()?
        .arn)
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let id = u.id;
        let a = u.a;
        let current = &u.current;
        if a.contains_key("thumbprint_list") {
            m.update_oidc_thumbprints(id, a_list(a, "thumbprint_list"))
                .into_cloud()?;
        }
        if a.contains_key("client_id_list") {
            let want = a_list(a, "client_id_list");
            let have = list_of(current.attrs.get("client_id_list"));
            for c in want.iter().filter(|c| !have.contains(c)) {
                m.add_oidc_client_id(id, c).into_cloud()?;
            }
            for c in have.iter().filter(|c| !want.contains(c)) {
                m.remove_oidc_client_id(id, c).into_cloud()?;
            }
        }
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.delete_oidc_provider(id))
    }

    fn retag(&self, m: &MockAws, id: &str, _old: &ResourceTags, new: &Tags) -> CloudResult<()> {
        m.tag_oidc_provider(id, new).into_cloud()
    }
}

/// The roles whose policies a query lists: its parent (none when that role is gone), or
/// all.
fn queried_roles(m: &MockAws, q: &ListQuery) -> CloudResult<Vec<String>> {
    Ok(match &q.parent {
        Some(p) => match m.get_role(p) {
            Ok(r) => vec![r.name],
            Err(e) if e.is_not_found() => Vec::new(),
            Err(e) => return Err(to_cloud_error(e)),
        },
        None => m
            .list_roles("/")
            .into_cloud()?
            .into_iter()
            .map(|r| r.name)
            .collect(),
    })
}
