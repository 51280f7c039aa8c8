//! `toolbox check-state-store`: the state store's bucket settings that keep the state
//! safe, checked and (with `--fix`) turned on.
//!
//! `toolbox restore-state`: a cluster's objects put back as they were at a time, from the
//! bucket's object versions.
//!
//! `toolbox etcd list-backups` / `restore-backup`: etcd-manager's backups in the cluster's
//! config base, and the restore request etcd-manager-ctl writes.
//!
//! `toolbox recover cluster`: a lost store's cluster read back from the cloud objects it
//! owns, stored as `kops create cluster` would store it with the options found.
//!
//! `toolbox dump`: the cluster's stored spec, instance groups, SSH key ids and (on AWS
//! and GCE) the cloud resources it owns, as one YAML or JSON document. On GCE, whose
//! instances are no resources of the model, `instances` lists each managed instance
//! group's.

use anyhow::Context as _;
use kops_cloud_gce::{GceCloud as _, GceResourceType};
use kops_model::aws::cloud::AwsCloud;
use kops_model::aws::find_cluster_resources;
use serde_json::json;

use crate::cli::{
    CheckFormat, CheckStateStoreArgs, DumpArgs, EtcdListArgs, EtcdRestoreArgs, Global,
    ManifestFormat, RecoverClusterArgs, RestoreStateArgs,
};
use crate::cloud::Cloud;
use crate::state::{self, State};
use crate::update;

/// `kops toolbox dump`.
pub async fn dump(global: &Global, args: &DumpArgs) -> anyhow::Result<()> {
    let name = state::cluster_name(args.cluster_name.as_deref(), global)?;
    let st = State::open(global).await?;
    let cluster = st.cluster(&name).await?.value;
    let groups = st.groups(&name).await?;
    let keys: Vec<String> = st
        .registry
        .list_ssh_public_keys(&name)
        .await
        .with_context(|| format!("listing SSH keys of cluster {name}"))?
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let listing =
        |description: &str| format!("listing the resources of cluster {name} in {description}");
    let mut instances = Vec::new();
    let resources = match cluster.spec.cloud_provider.as_deref() {
        Some("aws") => {
            let cloud = Cloud::open(&st, global.mock_cloud, &update::region(&cluster)?).await?;
            let api: &dyn AwsCloud = cloud.api.as_ref();
            let found = find_cluster_resources(api, &name)
                .await
                .with_context(|| listing(&cloud.description))?;
            serde_json::to_value(found)?
        }
        Some("gce") => {
            let cloud = crate::gce::open(global, &st, &cluster).await?;
            let found = kops_model::gce::find_cluster_resources(cloud.api.as_ref(), &name)
                .await
                .with_context(|| listing(&cloud.description))?;
            // A GCE instance is no resource of the model: each managed instance group's.
            for mig in found
                .iter()
                .filter(|r| r.resource_type == GceResourceType::InstanceGroupManager)
            {
                let members = cloud
                    .api
                    .managed_instances(&mig.id)
                    .await
                    .with_context(|| {
                        format!(
                            "listing the instances of {} in {}",
                            mig.id, cloud.description
                        )
                    })?;
                instances.extend(members.into_iter().map(|m| {
                    json!({
                        "name": m.name,
                        "zone": m.zone,
                        "group": mig.id,
                        "instanceTemplate": m.instance_template,
                        "status": m.status,
                        "currentAction": m.current_action,
                    })
                }));
            }
            serde_json::to_value(found)?
        }
        _ => json!([]),
    };
    let mut doc = json!({
        "cluster": cluster,
        "instanceGroups": groups,
        "sshPublicKeys": keys,
        "resources": resources,
    });
    if cluster.spec.cloud_provider.as_deref() == Some("gce") {
        doc["instances"] = json!(instances);
    }
    match args.output {
        ManifestFormat::Json => println!("{}", serde_json::to_string_pretty(&doc)?),
        ManifestFormat::Yaml => print!(
            "{}",
            serde_saphyr::to_string(&doc).context("writing the dump as YAML")?
        ),
    }
    Ok(())
}

/// One line per check, for the table and for `create cluster`'s warnings.
fn check_row(check: &kops_statestore::SafetyCheck) -> (&'static str, String) {
    use kops_statestore::CheckStatus;
    match &check.status {
        CheckStatus::Passed => ("ok", String::new()),
        CheckStatus::Failed { fix } => ("FAILED", fix.clone()),
        CheckStatus::Unknown { permission } => (
            "unknown",
            format!("these credentials may not read it: grant {permission}"),
        ),
        _ => ("unknown", String::new()),
    }
}

/// `kops toolbox check-state-store`: exit 1 when a check fails (after `--fix`, when the
/// fix did not take).
pub async fn check_state_store(global: &Global, args: &CheckStateStoreArgs) -> anyhow::Result<u8> {
    let st = State::open(global).await?;
    let store = st.store();
    let mut changed = Vec::new();
    if args.fix {
        changed = store
            .fix_safety()
            .await
            .with_context(|| format!("fixing state store {}", st.url))?;
    }
    let checks = store
        .safety_checks()
        .await
        .with_context(|| format!("checking state store {}", st.url))?;
    let failed = checks
        .iter()
        .any(|c| matches!(c.status, kops_statestore::CheckStatus::Failed { .. }));
    match args.output {
        CheckFormat::Json => {
            let rows: Vec<serde_json::Value> = checks
                .iter()
                .map(|c| {
                    let (status, detail) = check_row(c);
                    json!({"check": c.name, "status": status, "detail": detail})
                })
                .collect();
            let doc = json!({"store": st.url, "checks": rows, "changed": changed});
            println!("{}", serde_json::to_string_pretty(&doc)?);
        }
        CheckFormat::Table => {
            for line in &changed {
                println!("changed: {line}");
            }
            if checks.is_empty() {
                println!(
                    "{}: nothing to check (a local or in-memory store has no bucket settings)",
                    st.url
                );
            }
            let rows: Vec<Vec<String>> = checks
                .iter()
                .map(|c| {
                    let (status, detail) = check_row(c);
                    vec![c.name.clone(), status.to_owned(), detail]
                })
                .collect();
            crate::get::print_table(&["CHECK", "STATUS", "FIX"], &rows);
        }
    }
    Ok(u8::from(failed))
}

/// The warnings `create cluster` prints for a state store whose bucket lacks a safety
/// setting (each naming its fix). Reading the settings is best-effort: a store that
/// cannot be checked is not a reason to refuse the command.
pub async fn warn_unsafe_store(st: &State) {
    let Ok(checks) = st.store().safety_checks().await else {
        return;
    };
    for c in checks {
        if let kops_statestore::CheckStatus::Failed { fix } = &c.status {
            eprintln!("warning: state store {}: {} is off; {fix}", st.url, c.name);
        }
    }
}

/// `kops toolbox restore-state`: `--list` prints the times there are; otherwise the plan,
/// carried out under the cluster's lock with `--yes`. Exit 0, or 2 for a dry run that
/// would change something.
pub async fn restore_state(global: &Global, args: &RestoreStateArgs) -> anyhow::Result<u8> {
    use kops_statestore::restore::{RestoreAction, format_ms, restore_points};
    let name = state::cluster_name(args.cluster_name.as_deref(), global)?;
    let st = State::open(global).await?;
    let versions = || async {
        st.registry.cluster_versions(&name).await.with_context(|| {
            format!(
                "reading the object versions of cluster {name} in {}",
                st.url
            )
        })
    };
    if args.list {
        let points = restore_points(&versions().await?);
        if points.is_empty() {
            anyhow::bail!(
                "cluster {name}: {} keeps no object versions under {name}/",
                st.url
            );
        }
        for (ms, paths) in points {
            println!("{}  {}", format_ms(ms), paths.join(", "));
        }
        return Ok(0);
    }
    let to = args.to.as_deref().unwrap_or_default();
    let at = kops_statestore::lock::parse_rfc3339(to).ok_or_else(|| {
        anyhow::anyhow!("--to {to:?}: not an RFC 3339 time (e.g. 2026-12-07T10:00:00Z)")
    })?;
    let plan = match st.registry.restore_plan(&name, at).await {
        Ok(plan) => plan,
        // No such time in the bucket, or no versions: the user's to fix, in one line.
        Err(e @ kops_statestore::Error::Invalid { .. }) => {
            return Err(crate::errors::user(format!("cluster {name}: {e}")));
        }
        Err(e) => {
            return Err(anyhow::Error::new(e)
                .context(format!("cluster {name}: planning the restore to {to}")));
        }
    };
    for a in &plan.actions {
        match a {
            RestoreAction::Put {
                path, modified_ms, ..
            } => {
                println!("restore  {path}  (as written {})", format_ms(*modified_ms));
            }
            RestoreAction::Delete { path } => println!("delete   {path}  (created since)"),
            _ => {}
        }
    }
    println!(
        "{} object(s) to restore or delete, {} as they were at {}",
        plan.actions.len(),
        plan.unchanged,
        format_ms(plan.at_ms)
    );
    if plan.actions.is_empty() {
        return Ok(0);
    }
    if !args.yes {
        println!("\nMust specify --yes to restore");
        return Ok(2);
    }
    let changed = st
        .locked(&name, "restore-state", async || {
            st.registry
                .apply_restore(&plan)
                .await
                .with_context(|| format!("cluster {name}: restoring its state to {to}"))
        })
        .await?;
    println!(
        "Restored {changed} object(s) of cluster {name} to {}; each change is a new version, so this too can be undone with restore-state",
        format_ms(plan.at_ms)
    );
    Ok(0)
}

/// The cluster's config base (`spec.configBase`, else `<state>/<cluster>`), opened, and
/// its etcd clusters' names.
async fn config_base(
    global: &Global,
    name: &str,
) -> anyhow::Result<(
    String,
    std::sync::Arc<dyn kops_statestore::Store>,
    Vec<String>,
)> {
    let st = State::open(global).await?;
    let stored = st.cluster(name).await?.value;
    let base = stored
        .spec
        .config_base
        .clone()
        .unwrap_or_else(|| format!("{}/{name}", st.url));
    let options = state::store_options(&base)
        .await
        .with_context(|| format!("opening config base {base}"))?;
    let store = kops_statestore::open(&base, &options)
        .with_context(|| format!("opening config base {base}"))?;
    let etcds = stored
        .spec
        .etcd_clusters
        .iter()
        .flatten()
        .filter_map(|e| e.name.clone())
        .collect();
    Ok((base, store, etcds))
}

/// `kops toolbox etcd list-backups`.
pub async fn etcd_list_backups(global: &Global, args: &EtcdListArgs) -> anyhow::Result<u8> {
    let name = state::cluster_name(args.cluster_name.as_deref(), global)?;
    let (base, store, etcds) = config_base(global, &name).await?;
    let wanted: Vec<String> = match &args.etcd {
        Some(e) if !etcds.contains(e) => {
            return Err(crate::errors::user(format!(
                "cluster {name} has no etcd cluster {e:?} (it has {})",
                etcds.join(", ")
            )));
        }
        Some(e) => vec![e.clone()],
        None => etcds,
    };
    let mut rows = Vec::new();
    for etcd in &wanted {
        let backups = kops_statestore::etcd_backups::list_backups(store.as_ref(), etcd)
            .await
            .with_context(|| format!("listing the backups of etcd cluster {etcd} in {base}"))?;
        for b in backups {
            rows.push(vec![
                etcd.clone(),
                b.name,
                b.etcd_version.unwrap_or_default(),
                b.size.to_string(),
            ]);
        }
    }
    if rows.is_empty() {
        println!(
            "No etcd backups in {base}/backups/etcd/ (etcd-manager writes them every 15 minutes once the control plane runs)"
        );
        return Ok(0);
    }
    crate::get::print_table(&["ETCD", "BACKUP", "ETCD VERSION", "BYTES"], &rows);
    Ok(0)
}

/// `kops toolbox etcd restore-backup`: the request etcd-manager-ctl writes, shown, and
/// written with `--yes` (exit 2 for the dry run).
pub async fn etcd_restore_backup(global: &Global, args: &EtcdRestoreArgs) -> anyhow::Result<u8> {
    use kops_statestore::etcd_backups::{plan_restore_backup, write_restore_request};
    let name = state::cluster_name(args.cluster_name.as_deref(), global)?;
    let (base, store, etcds) = config_base(global, &name).await?;
    if !etcds.contains(&args.etcd) {
        return Err(crate::errors::user(format!(
            "cluster {name} has no etcd cluster {:?} (it has {})",
            args.etcd,
            etcds.join(", ")
        )));
    }
    let request = match plan_restore_backup(
        store.as_ref(),
        &args.etcd,
        &args.backup,
        std::time::SystemTime::now(),
    )
    .await
    {
        Ok(r) => r,
        Err(e @ kops_statestore::Error::Invalid { .. }) => {
            return Err(crate::errors::user(format!("cluster {name}: {e}")));
        }
        Err(e) => return Err(anyhow::Error::new(e).context(format!("cluster {name}"))),
    };
    println!("{base}/{}:\n{}", request.path, request.content);
    if !args.yes {
        println!("\nMust specify --yes to write the restore request");
        return Ok(2);
    }
    write_restore_request(store.as_ref(), &request)
        .await
        .with_context(|| format!("writing {base}/{}", request.path))?;
    println!(
        "\nRestore of {} requested for etcd cluster {}. etcd-manager on each control-plane node picks it up; then restart etcd-manager on every control-plane node (or roll them: kops rolling-update cluster --instance-group-roles ControlPlane --force --cloudonly --yes) so that the members rejoin from the restored data",
        args.backup, args.etcd
    );
    Ok(0)
}

/// The `kops create cluster` command line that makes the cluster `found` describes.
fn create_flags(name: &str, found: &kops_model::aws::recover::Recovered) -> Vec<String> {
    let mut a: Vec<String> = vec!["create".into(), "cluster".into(), name.into()];
    let mut flag = |k: &str, v: String| {
        a.push(format!("--{k}"));
        a.push(v);
    };
    flag("zones", found.zones.join(","));
    let cp: Vec<&kops_model::aws::recover::ObservedGroup> =
        found.groups_of("ControlPlane").collect();
    let cp_zones: Vec<String> = cp.iter().flat_map(|g| g.zones.clone()).collect();
    if !cp_zones.is_empty() {
        flag("control-plane-zones", cp_zones.join(","));
    }
    flag("topology", found.topology.clone());
    let nodes: Vec<&kops_model::aws::recover::ObservedGroup> = found.groups_of("Node").collect();
    if !nodes.is_empty() {
        flag(
            "node-count",
            nodes.iter().map(|g| g.max_size).sum::<i64>().to_string(),
        );
    }
    if let Some(t) = nodes.first().and_then(|g| g.machine_type.clone()) {
        flag("node-size", t);
    }
    if let Some(t) = cp.first().and_then(|g| g.machine_type.clone()) {
        flag("control-plane-size", t);
    }
    if let Some(i) = found.groups.first().and_then(|g| g.image.clone()) {
        flag("image", i);
    }
    if let Some(c) = &found.network_cidr {
        flag("network-cidr", c.clone());
    }
    if let Some(id) = &found.network_id {
        flag("network-id", id.clone());
    }
    if let Some(t) = &found.api_load_balancer_type {
        flag("api-loadbalancer-type", t.to_lowercase());
    }
    if let Some(z) = &found.dns_zone {
        flag("dns-zone", z.clone());
    }
    if found.groups_of("Bastion").next().is_some() {
        a.push("--bastion".into());
    }
    a
}

/// `kops toolbox recover cluster`: what was found and where, the equivalent `create
/// cluster`, what the cloud cannot tell; then the specs stored in `--state` (unless
/// `--dry-run`), each group set to its autoscaling group's sizes and its template's
/// machine type and image.
pub async fn recover_cluster(global: &Global, args: &RecoverClusterArgs) -> anyhow::Result<u8> {
    use clap::Parser as _;
    let name = state::cluster_name(args.cluster_name.as_deref(), global)?;
    let st = State::open(global).await?;
    if st.cluster(&name).await.is_ok() {
        return Err(crate::errors::user(format!(
            "cluster {name} already exists in {}: recover into another store (--state)",
            st.url
        )));
    }
    let cloud = Cloud::open(&st, global.mock_cloud, &args.region).await?;
    let found = match kops_model::aws::recover::recover(cloud.api.as_ref(), &name, &args.region)
        .await
    {
        Ok(f) => f,
        Err(e @ kops_model::Error::Invalid { .. }) => {
            return Err(crate::errors::user(e.to_string()));
        }
        Err(e) => return Err(anyhow::Error::new(e).context(format!("recovering cluster {name}"))),
    };
    println!("Found in the cloud (region {}):", args.region);
    for (what, from) in &found.sources {
        println!("  {what}: {from}");
    }
    let flags = create_flags(&name, &found);
    println!(
        "The same cluster as kops creates it:\n  kops {}",
        flags.join(" ")
    );
    println!("Not in the cloud (kOps' defaults are used):");
    for (what, why) in &found.unknown {
        println!("  {what}: {why}");
    }
    let mut argv = vec!["kops".to_owned()];
    if let Some(s) = &global.state {
        argv.extend(["--state".to_owned(), s.clone()]);
    }
    if global.mock_cloud {
        argv.push("--mock-cloud".into());
    }
    argv.extend(flags);
    if args.dry_run {
        argv.push("--dry-run".into());
        argv.extend(["-o".into(), "yaml".into()]);
    }
    let parsed = crate::cli::Cli::try_parse_from(&argv)
        .map_err(|e| anyhow::anyhow!("the recovered options do not parse: {e}"))?;
    let crate::cli::Command::Create(create) = parsed.command else {
        anyhow::bail!("the recovered options are not a create command");
    };
    let Some(crate::cli::CreateCommand::Cluster(c)) = create.command else {
        anyhow::bail!("the recovered options are not a create cluster command");
    };
    let code = crate::create::create_cluster(global, &c).await?;
    if code != 0 || args.dry_run {
        return Ok(code);
    }
    // Each group as it runs.
    for g in &found.groups {
        let Ok(mut stored) = st.registry.get_instance_group(&name, &g.name).await else {
            println!(
                "  instance group {} is not one `create cluster` makes: add it with `kops create instancegroup {}`",
                g.name, g.name
            );
            continue;
        };
        let spec = &mut stored.value.spec;
        spec.min_size = i32::try_from(g.min_size).ok();
        spec.max_size = i32::try_from(g.max_size).ok();
        if g.machine_type.is_some() {
            spec.machine_type = g.machine_type.clone();
        }
        if g.image.is_some() {
            spec.image = g.image.clone();
        }
        st.registry
            .update_instance_group(&name, &stored.value, &stored.version)
            .await
            .with_context(|| format!("storing instance group {}", g.name))?;
    }
    println!(
        "Recovered cluster {name} into {}: check it with `kops get cluster {name} -o yaml`, then `kops update cluster {name}` shows what differs from the cloud",
        st.url
    );
    Ok(0)
}

/// `toolbox iam-policy`: the operator's least-privilege AWS policy for the commands named,
/// scoped to `--name` and to an `s3://` `--state` when given.
pub fn iam_policy(global: &Global, args: &crate::cli::IamPolicyArgs) -> anyhow::Result<()> {
    use kops_cloud_aws::permissions::{
        MAX_POLICY_CHARS, OperatorCommand, PolicyOptions, operator_calls, operator_policies,
        operator_policy,
    };
    let mut options = PolicyOptions::new();
    let mut commands = Vec::new();
    for c in &args.commands {
        commands.push(OperatorCommand::parse(c).ok_or_else(|| {
            anyhow::anyhow!(
                "--for: unknown command {c:?}; one of create, update, delete, rolling-update, validate"
            )
        })?);
    }
    options = options.with_commands(commands);
    if let Some(name) = &global.name {
        options = options.with_cluster(name.clone());
    }
    if let Some(url) = &global.state
        && let kops_statestore::StoreUrl::S3 { bucket, prefix } =
            kops_statestore::StoreUrl::parse(url).with_context(|| format!("--state {url}"))?
    {
        options = options.with_state_store(bucket, prefix);
    }
    match args.output {
        crate::cli::PolicyFormat::Json => {
            let policy = operator_policy(&options);
            println!("{}", serde_json::to_string_pretty(&policy)?);
            let parts = operator_policies(&options).len();
            if parts > 1 {
                eprintln!(
                    "note: the policy exceeds what one managed policy holds ({MAX_POLICY_CHARS} characters); attach it as {parts} policies (-o terraform writes them so)"
                );
            }
        }
        crate::cli::PolicyFormat::Terraform => {
            let base = global
                .name
                .as_deref()
                .map_or("kops-operator".to_owned(), |n| {
                    format!("kops-operator-{}", n.replace('.', "-"))
                });
            let docs = operator_policies(&options);
            let several = docs.len() > 1;
            for (i, doc) in docs.iter().enumerate() {
                let name = if several {
                    format!("{base}-{}", i + 1)
                } else {
                    base.clone()
                };
                // HCL's object syntax as `terraform fmt` writes it: `"key" : value`.
                let body = serde_json::to_string_pretty(doc)?
                    .replace("\": ", "\" : ")
                    .replace('\n', "\n  ");
                if i > 0 {
                    println!();
                }
                println!(
                    "resource \"aws_iam_policy\" \"{}\" {{\n  name        = \"{name}\"\n  description = \"What kops-rs needs to manage Kubernetes clusters\"\n  policy = jsonencode({body})\n}}",
                    kops_tasks::terraform::sanitize_name(&name)
                );
            }
        }
        crate::cli::PolicyFormat::Table => {
            for (operation, actions) in operator_calls(&options) {
                println!("{operation:<44} {}", actions.join(" "));
            }
        }
    }
    Ok(())
}
