//! IAM: roles with inline and attached policies, instance profiles, OIDC providers.

use std::collections::{BTreeMap, BTreeSet};

use crate::MockAws;
use crate::error::{Error, Result};
use crate::filter::Tags;
use crate::state::State;

/// Parameters of `CreateRole`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CreateRole {
    /// Name.
    pub name: String,
    /// Path (default `/`).
    pub path: String,
    /// Trust policy (JSON).
    pub assume_role_policy_document: String,
    /// Description.
    pub description: Option<String>,
    /// Maximum session duration in seconds.
    pub max_session_duration: Option<i32>,
    /// Permissions boundary policy ARN.
    pub permissions_boundary: Option<String>,
    /// Tags.
    pub tags: Tags,
}

/// A role.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Role {
    /// Name.
    pub name: String,
    /// `AROA...` id.
    pub id: String,
    /// ARN.
    pub arn: String,
    /// Path.
    pub path: String,
    /// Trust policy.
    pub assume_role_policy_document: String,
    /// Description.
    pub description: Option<String>,
    /// Maximum session duration.
    pub max_session_duration: Option<i32>,
    /// Permissions boundary.
    pub permissions_boundary: Option<String>,
    /// Tags.
    pub tags: Tags,
}

/// An instance profile.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InstanceProfile {
    /// Name.
    pub name: String,
    /// `AIPA...` id.
    pub id: String,
    /// ARN.
    pub arn: String,
    /// Path.
    pub path: String,
    /// Role names (at most one).
    pub roles: Vec<String>,
    /// Tags.
    pub tags: Tags,
}

/// An OIDC identity provider.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OidcProvider {
    /// ARN (`arn:aws:iam::<account>:oidc-provider/<host/path>`).
    pub arn: String,
    /// Issuer URL.
    pub url: String,
    /// Audiences.
    pub client_ids: Vec<String>,
    /// Certificate thumbprints.
    pub thumbprints: Vec<String>,
    /// Tags.
    pub tags: Tags,
}

#[derive(Debug, Default)]
pub(crate) struct IamState {
    pub(crate) roles: BTreeMap<String, Role>,
    policies: BTreeMap<(String, String), String>,
    attached: BTreeMap<String, BTreeSet<String>>,
    pub(crate) profiles: BTreeMap<String, InstanceProfile>,
    oidc: BTreeMap<String, OidcProvider>,
}

impl IamState {
    pub(crate) fn collect_ids(&self, out: &mut BTreeSet<String>) {
        out.extend(self.roles.keys().map(|n| format!("role/{n}")));
        out.extend(
            self.policies
                .keys()
                .map(|(r, p)| format!("role-policy/{r}/{p}")),
        );
        out.extend(
            self.profiles
                .keys()
                .map(|n| format!("instance-profile/{n}")),
        );
        out.extend(self.oidc.keys().cloned());
    }
}

fn check_path(op: &str, path: &str) -> Result<String> {
    let path = if path.is_empty() { "/" } else { path };
    if !path.starts_with('/') || !path.ends_with('/') {
        return Err(Error::invalid(
            op,
            "Path",
            format!("{path:?} must start and end with '/'"),
        ));
    }
    Ok(path.to_owned())
}

fn check_name(op: &str, name: &str, max: usize) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= max
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+=,.@_-".contains(c));
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(
            op,
            "Name",
            format!("{name:?}: 1..{max} characters of letters, digits and +=,.@_-"),
        ))
    }
}

fn role_mut<'a>(st: &'a mut State, op: &str, name: &str) -> Result<&'a mut Role> {
    st.iam
        .roles
        .get_mut(name)
        .ok_or_else(|| Error::not_found(op, "role", name))
}

fn profile_mut<'a>(st: &'a mut State, op: &str, name: &str) -> Result<&'a mut InstanceProfile> {
    st.iam
        .profiles
        .get_mut(name)
        .ok_or_else(|| Error::not_found(op, "instance-profile", name))
}

fn oidc_mut<'a>(st: &'a mut State, op: &str, arn: &str) -> Result<&'a mut OidcProvider> {
    st.iam
        .oidc
        .get_mut(arn)
        .ok_or_else(|| Error::not_found(op, "oidc-provider", arn))
}

pub(crate) fn new_role(
    st: &mut State,
    partition: &str,
    account: &str,
    req: CreateRole,
    path: String,
) -> Role {
    let n = st.ids.next_number("iam-role");
    Role {
        id: format!("AROAMOCK{n:012}"),
        arn: format!("arn:{partition}:iam::{account}:role{path}{}", req.name),
        name: req.name,
        path,
        assume_role_policy_document: req.assume_role_policy_document,
        description: req.description,
        max_session_duration: req.max_session_duration,
        permissions_boundary: req.permissions_boundary,
        tags: req.tags,
    }
}

pub(crate) fn new_profile(
    st: &mut State,
    partition: &str,
    account: &str,
    name: &str,
    path: String,
    tags: Tags,
) -> InstanceProfile {
    let n = st.ids.next_number("iam-profile");
    InstanceProfile {
        id: format!("AIPAMOCK{n:012}"),
        arn: format!("arn:{partition}:iam::{account}:instance-profile{path}{name}"),
        name: name.to_owned(),
        path,
        roles: Vec::new(),
        tags,
    }
}

impl MockAws {
    /// `CreateRole`.
    pub fn create_role(&self, req: CreateRole) -> Result<Role> {
        let (partition, account) = (
            self.options().partition.clone(),
            self.options().account_id.clone(),
        );
        self.call("iam:CreateRole", |st, op| {
            check_name(op, &req.name, 64)?;
            let path = check_path(op, &req.path)?;
            if st.iam.roles.contains_key(&req.name) {
                return Err(Error::exists(op, "role", req.name.clone()));
            }
            if req.assume_role_policy_document.trim().is_empty() {
                return Err(Error::invalid(
                    op,
                    "AssumeRolePolicyDocument",
                    "is required",
                ));
            }
            let role = new_role(st, &partition, &account, req, path);
            st.iam.roles.insert(role.name.clone(), role.clone());
            Ok(role)
        })
    }

    /// `GetRole`.
    pub fn get_role(&self, name: &str) -> Result<Role> {
        self.call("iam:GetRole", |st, op| {
            role_mut(st, op, name).map(|r| r.clone())
        })
    }

    /// `ListRoles` under a path prefix (`/` = all).
    pub fn list_roles(&self, path_prefix: &str) -> Result<Vec<Role>> {
        self.call("iam:ListRoles", |st, _| {
            Ok(st
                .iam
                .roles
                .values()
                .filter(|r| r.path.starts_with(path_prefix))
                .cloned()
                .collect())
        })
    }

    /// `UpdateAssumeRolePolicy`.
    pub fn update_assume_role_policy(&self, name: &str, document: &str) -> Result<()> {
        self.call("iam:UpdateAssumeRolePolicy", |st, op| {
            role_mut(st, op, name)?.assume_role_policy_document = document.to_owned();
            Ok(())
        })
    }

    /// `UpdateRole`: description and maximum session duration.
    pub fn update_role(
        &self,
        name: &str,
        description: Option<String>,
        max_session_duration: Option<i32>,
    ) -> Result<()> {
        self.call("iam:UpdateRole", |st, op| {
            let r = role_mut(st, op, name)?;
            if description.is_some() {
                r.description = description;
            }
            if max_session_duration.is_some() {
                r.max_session_duration = max_session_duration;
            }
            Ok(())
        })
    }

    /// `PutRolePermissionsBoundary` (`Some`) or `DeleteRolePermissionsBoundary` (`None`).
    pub fn set_role_permissions_boundary(
        &self,
        name: &str,
        boundary: Option<String>,
    ) -> Result<()> {
        let op = if boundary.is_some() {
            "iam:PutRolePermissionsBoundary"
        } else {
            "iam:DeleteRolePermissionsBoundary"
        };
        self.call(op, |st, op| {
            role_mut(st, op, name)?.permissions_boundary = boundary;
            Ok(())
        })
    }

    /// `TagRole`.
    pub fn tag_role(&self, name: &str, tags: &Tags) -> Result<()> {
        self.call("iam:TagRole", |st, op| {
            role_mut(st, op, name)?
                .tags
                .extend(tags.iter().map(|(k, v)| (k.clone(), v.clone())));
            Ok(())
        })
    }

    /// `UntagRole`.
    pub fn untag_role(&self, name: &str, keys: &[String]) -> Result<()> {
        self.call("iam:UntagRole", |st, op| {
            let r = role_mut(st, op, name)?;
            for k in keys {
                r.tags.remove(k);
            }
            Ok(())
        })
    }

    /// `DeleteRole`: fails while it has inline or attached policies or is in an instance
    /// profile.
    pub fn delete_role(&self, name: &str) -> Result<()> {
        self.call("iam:DeleteRole", |st, op| {
            role_mut(st, op, name)?;
            let mut deps: Vec<String> = st
                .iam
                .policies
                .keys()
                .filter(|(r, _)| r == name)
                .map(|(_, p)| format!("inline policy {p}"))
                .collect();
            deps.extend(
                st.iam
                    .attached
                    .get(name)
                    .into_iter()
                    .flatten()
                    .map(|a| format!("attached policy {a}")),
            );
            deps.extend(
                st.iam
                    .profiles
                    .values()
                    .filter(|p| p.roles.iter().any(|r| r == name))
                    .map(|p| format!("instance profile {}", p.name)),
            );
            if !deps.is_empty() {
                return Err(Error::conflict(
                    op,
                    "role",
                    name,
                    format!("still has {}", deps.join(", ")),
                ));
            }
            st.iam.roles.remove(name);
            st.iam.attached.remove(name);
            Ok(())
        })
    }

    /// `PutRolePolicy` (create or replace an inline policy).
    pub fn put_role_policy(&self, role: &str, policy_name: &str, document: &str) -> Result<()> {
        self.call("iam:PutRolePolicy", |st, op| {
            role_mut(st, op, role)?;
            check_name(op, policy_name, 128)?;
            if document.trim().is_empty() {
                return Err(Error::invalid(op, "PolicyDocument", "is required"));
            }
            st.iam.policies.insert(
                (role.to_owned(), policy_name.to_owned()),
                document.to_owned(),
            );
            Ok(())
        })
    }

    /// `GetRolePolicy`: the document.
    pub fn get_role_policy(&self, role: &str, policy_name: &str) -> Result<String> {
        self.call("iam:GetRolePolicy", |st, op| {
            role_mut(st, op, role)?;
            st.iam
                .policies
                .get(&(role.to_owned(), policy_name.to_owned()))
                .cloned()
                .ok_or_else(|| Error::not_found(op, "role-policy", format!("{role}/{policy_name}")))
        })
    }

    /// `ListRolePolicies`: inline policy names.
    pub fn list_role_policies(&self, role: &str) -> Result<Vec<String>> {
        self.call("iam:ListRolePolicies", |st, op| {
            role_mut(st, op, role)?;
            Ok(st
                .iam
                .policies
                .keys()
                .filter(|(r, _)| r == role)
                .map(|(_, p)| p.clone())
                .collect())
        })
    }

    /// `DeleteRolePolicy`.
    pub fn delete_role_policy(&self, role: &str, policy_name: &str) -> Result<()> {
        self.call("iam:DeleteRolePolicy", |st, op| {
            role_mut(st, op, role)?;
            st.iam
                .policies
                .remove(&(role.to_owned(), policy_name.to_owned()))
                .map(|_| ())
                .ok_or_else(|| Error::not_found(op, "role-policy", format!("{role}/{policy_name}")))
        })
    }

    /// `AttachRolePolicy` (managed policy ARN).
    pub fn attach_role_policy(&self, role: &str, policy_arn: &str) -> Result<()> {
        self.call("iam:AttachRolePolicy", |st, op| {
            role_mut(st, op, role)?;
            if !policy_arn.starts_with("arn:") {
                return Err(Error::invalid(
                    op,
                    "PolicyArn",
                    format!("{policy_arn:?} is not an ARN"),
                ));
            }
            st.iam
                .attached
                .entry(role.to_owned())
                .or_default()
                .insert(policy_arn.to_owned());
            Ok(())
        })
    }

    /// `DetachRolePolicy`.
    pub fn detach_role_policy(&self, role: &str, policy_arn: &str) -> Result<()> {
        self.call("iam:DetachRolePolicy", |st, op| {
            role_mut(st, op, role)?;
            let removed = st
                .iam
                .attached
                .get_mut(role)
                .is_some_and(|s| s.remove(policy_arn));
            if removed {
                Ok(())
            } else {
                Err(Error::not_found(op, "policy", policy_arn))
            }
        })
    }

    /// `ListAttachedRolePolicies`: policy ARNs.
    pub fn list_attached_role_policies(&self, role: &str) -> Result<Vec<String>> {
        self.call("iam:ListAttachedRolePolicies", |st, op| {
            role_mut(st, op, role)?;
            Ok(st
                .iam
                .attached
                .get(role)
                .into_iter()
                .flatten()
                .cloned()
                .collect())
        })
    }

    /// `CreateInstanceProfile`.
    pub fn create_instance_profile(
        &self,
        name: &str,
        path: &str,
        tags: Tags,
    ) -> Result<InstanceProfile> {
        let (partition, account) = (
            self.options().partition.clone(),
            self.options().account_id.clone(),
        );
        self.call("iam:CreateInstanceProfile", |st, op| {
            check_name(op, name, 128)?;
            let path = check_path(op, path)?;
            if st.iam.profiles.contains_key(name) {
                return Err(Error::exists(op, "instance-profile", name));
            }
            let p = new_profile(st, &partition, &account, name, path, tags);
            st.iam.profiles.insert(name.to_owned(), p.clone());
            Ok(p)
        })
    }

    /// `GetInstanceProfile`.
    pub fn get_instance_profile(&self, name: &str) -> Result<InstanceProfile> {
        self.call("iam:GetInstanceProfile", |st, op| {
            profile_mut(st, op, name).map(|p| p.clone())
        })
    }

    /// `ListInstanceProfiles` under a path prefix.
    pub fn list_instance_profiles(&self, path_prefix: &str) -> Result<Vec<InstanceProfile>> {
        self.call("iam:ListInstanceProfiles", |st, _| {
            Ok(st
                .iam
                .profiles
                .values()
                .filter(|p| p.path.starts_with(path_prefix))
                .cloned()
                .collect())
        })
    }

    /// `AddRoleToInstanceProfile`: a profile holds at most one role.
    pub fn add_role_to_instance_profile(&self, profile: &str, role: &str) -> Result<()> {
        self.call("iam:AddRoleToInstanceProfile", |st, op| {
            role_mut(st, op, role)?;
            let p = profile_mut(st, op, profile)?;
            if !p.roles.is_empty() {
                return Err(Error::conflict(
                    op,
                    "instance-profile-role",
                    profile,
                    format!("already holds role {}", p.roles.join(", ")),
                ));
            }
            p.roles.push(role.to_owned());
            Ok(())
        })
    }

    /// `RemoveRoleFromInstanceProfile`.
    pub fn remove_role_from_instance_profile(&self, profile: &str, role: &str) -> Result<()> {
        self.call("iam:RemoveRoleFromInstanceProfile", |st, op| {
            let p = profile_mut(st, op, profile)?;
            let before = p.roles.len();
            p.roles.retain(|r| r != role);
            if p.roles.len() == before {
                return Err(Error::not_found(op, "role", format!("{role} in {profile}")));
            }
            Ok(())
        })
    }

    /// `TagInstanceProfile`.
    pub fn tag_instance_profile(&self, name: &str, tags: &Tags) -> Result<()> {
        self.call("iam:TagInstanceProfile", |st, op| {
            profile_mut(st, op, name)?
                .tags
                .extend(tags.iter().map(|(k, v)| (k.clone(), v.clone())));
            Ok(())
        })
    }

    /// `UntagInstanceProfile`.
    pub fn untag_instance_profile(&self, name: &str, keys: &[String]) -> Result<()> {
        self.call("iam:UntagInstanceProfile", |st, op| {
            let p = profile_mut(st, op, name)?;
            for k in keys {
                p.tags.remove(k);
            }
            Ok(())
        })
    }

    /// `DeleteInstanceProfile`: fails while it holds a role.
    pub fn delete_instance_profile(&self, name: &str) -> Result<()> {
        self.call("iam:DeleteInstanceProfile", |st, op| {
            let p = profile_mut(st, op, name)?;
            if !p.roles.is_empty() {
                return Err(Error::conflict(
                    op,
                    "instance-profile",
                    name,
                    format!("still holds role {}", p.roles.join(", ")),
                ));
            }
            st.iam.profiles.remove(name);
            Ok(())
        })
    }

    /// `CreateOpenIDConnectProvider`: one provider per issuer URL.
    pub fn create_oidc_provider(
        &self,
        url: &str,
        client_ids: Vec<String>,
        thumbprints: Vec<String>,
        tags: Tags,
    ) -> Result<OidcProvider> {
        let (partition, account) = (
            self.options().partition.clone(),
            self.options().account_id.clone(),
        );
        self.call("iam:CreateOpenIDConnectProvider", |st, op| {
            let host = url.strip_prefix("https://").ok_or_else(|| {
                Error::invalid(op, "Url", format!("{url:?} must start with https://"))
            })?;
            let arn = format!("arn:{partition}:iam::{account}:oidc-provider/{host}");
            if st.iam.oidc.contains_key(&arn) {
                return Err(Error::exists(op, "oidc-provider", arn));
            }
            let p = OidcProvider {
                arn: arn.clone(),
                url: url.to_owned(),
                client_ids,
                thumbprints,
                tags,
            };
            st.iam.oidc.insert(arn, p.clone());
            Ok(p)
        })
    }

    /// `GetOpenIDConnectProvider`.
    pub fn get_oidc_provider(&self, arn: &str) -> Result<OidcProvider> {
        self.call("iam:GetOpenIDConnectProvider", |st, op| {
            oidc_mut(st, op, arn).map(|p| p.clone())
        })
    }

    /// `ListOpenIDConnectProviders`: ARNs.
    pub fn list_oidc_providers(&self) -> Result<Vec<String>> {
        self.call("iam:ListOpenIDConnectProviders", |st, _| {
            Ok(st.iam.oidc.keys().cloned().collect())
        })
    }

    /// `UpdateOpenIDConnectProviderThumbprint`.
    pub fn update_oidc_thumbprints(&self, arn: &str, thumbprints: Vec<String>) -> Result<()> {
        self.call("iam:UpdateOpenIDConnectProviderThumbprint", |st, op| {
            oidc_mut(st, op, arn)?.thumbprints = thumbprints;
            Ok(())
        })
    }

    /// `AddClientIDToOpenIDConnectProvider`.
    pub fn add_oidc_client_id(&self, arn: &str, client_id: &str) -> Result<()> {
        self.call("iam:AddClientIDToOpenIDConnectProvider", |st, op| {
            let p = oidc_mut(st, op, arn)?;
            if !p.client_ids.iter().any(|c| c == client_id) {
                p.client_ids.push(client_id.to_owned());
            }
            Ok(())
        })
    }

    /// `RemoveClientIDFromOpenIDConnectProvider`.
    pub fn remove_oidc_client_id(&self, arn: &str, client_id: &str) -> Result<()> {
        self.call("iam:RemoveClientIDFromOpenIDConnectProvider", |st, op| {
            oidc_mut(st, op, arn)?.client_ids.retain(|c| c != client_id);
            Ok(())
        })
    }

    /// `TagOpenIDConnectProvider`.
    pub fn tag_oidc_provider(&self, arn: &str, tags: &Tags) -> Result<()> {
        self.call("iam:TagOpenIDConnectProvider", |st, op| {
            oidc_mut(st, op, arn)?
                .tags
                .extend(tags.iter().map(|(k, v)| (k.clone(), v.clone())));
            Ok(())
        })
    }

    /// `DeleteOpenIDConnectProvider`.
    pub fn delete_oidc_provider(&self, arn: &str) -> Result<()> {
        self.call("iam:DeleteOpenIDConnectProvider", |st, op| {
            st.iam
                .oidc
                .remove(arn)
                .map(|_| ())
                .ok_or_else(|| Error::not_found(op, "oidc-provider", arn))
        })
    }
}
