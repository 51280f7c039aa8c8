//! `kops`: the kops-rs command line, a reference embedding of the kops-rs crates.
//!
//! It manages kOps clusters kept in a kOps state store (`--state` or
//! `KOPS_STATE_STORE`: `memfs://`, `file://`, `s3://`, `gs://`), plans and
//! applies them against AWS, or against the in-memory mock cloud with
//! `--mock-cloud` (`KOPS_MOCK_CLOUD=1`), and writes Terraform.
//!
//! Credentials come from the environment as for kOps: the AWS SDK's chain
//! (`AWS_PROFILE`, `AWS_ACCESS_KEY_ID`, SSO, instance roles; `AWS_ENDPOINT_URL`), kOps'
//! `S3_ENDPOINT`, `S3_REGION`, `S3_ACCESS_KEY_ID`, `S3_SECRET_ACCESS_KEY` for an
//! S3-compatible state store, Google's application-default credentials
//! (`GOOGLE_APPLICATION_CREDENTIALS`, gcloud's ADC file, the metadata server) or
//! `STORAGE_EMULATOR_HOST` for `gs://`.
//!
//! Exit codes: 0 success (for a dry run: nothing to change), 2 changes are
//! pending (dry run), 1 error. Errors print one line saying what failed and
//! where, then the chain of causes.
//!
//! Module map: [`cli`] (flags), [`state`] (store, registry, lock),
//! [`create`] (`create`, `replace`), [`get`], [`edit`], [`update`],
//! [`delete`], [`unlock`], [`history`] (`get history`, `rollback`), [`cloud`] (mock or
//! AWS, mock persistence), [`toolbox`], [`template`] (`toolbox template`),
//! [`output`] (colour, progress bars), [`errors`] (one-line errors for the user).

mod cli;
mod clidocs;
mod cloud;
mod create;
mod delete;
mod edit;
mod errors;
mod gce;
mod get;
mod helpers;
mod hetzner;
mod history;
mod instances;
mod keypair;
mod kubeconfig;
mod output;
mod reconcile;
mod rolling;
mod secret;
mod spec;
mod state;
mod template;
mod toolbox;
mod unlock;
mod update;
mod upgrade;
mod validate;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command, CreateCommand, DeleteCommand, EditCommand, GetCommand};

/// mimalloc rather than the system allocator: a plan allocates and frees a few small
/// objects per task, and on glibc that is half of building the task graph
/// (benches/README.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // A panic is a bug, but the user still gets one line and exit 1, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown".into());
        eprintln!("error: internal error{location}: {message}");
    }));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with exit 0; usage errors exit 1.
            let code = if e.use_stderr() { 1 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    // IO and timers: the AWS backend and the s3:// and gs:// stores open sockets.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: starting the async runtime\n  caused by: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The commands run on a thread of their own with a large stack: an unoptimised
    // build keeps every nested future's locals apart, and a command that runs others
    // (`reconcile cluster`: updates and rolls in turn) needs more than the main
    // thread's 8 MiB. The stack is reserved, not committed: pages are touched as used.
    let worker = std::thread::Builder::new()
        .name("kops".into())
        .stack_size(COMMAND_STACK)
        .spawn(move || runtime.block_on(Box::pin(run(cli))));
    let joined = match worker {
        Ok(handle) => handle.join(),
        Err(e) => {
            eprintln!("error: starting the command's thread\n  caused by: {e}");
            return ExitCode::FAILURE;
        }
    };
    match joined {
        Ok(Ok(code)) => ExitCode::from(code),
        Ok(Err(e)) => {
            print_error(&e);
            ExitCode::FAILURE
        }
        // The panic hook has printed the one line.
        Err(_) => ExitCode::FAILURE,
    }
}

/// The stack of the thread that runs a command (see `main`).
const COMMAND_STACK: usize = 256 << 20;

/// Prints `error: <what failed>` and then each cause on its own line; a problem the
/// user fixes (credentials, a missing bucket, an unknown image or zone) is one line.
fn print_error(e: &anyhow::Error) {
    if let Some(line) = errors::user_line(e) {
        eprintln!("error: {line}");
        return;
    }
    eprintln!("error: {e}");
    for cause in e.chain().skip(1) {
        eprintln!("  caused by: {cause}");
    }
}

async fn run(cli: Cli) -> anyhow::Result<u8> {
    let global = cli.global;
    match cli.command {
        Command::Completion(args) => {
            cli::completion(args.shell);
            Ok(0)
        }
        Command::GenCliDocs(args) => {
            let pages = clidocs::write(&args)?;
            println!(
                "wrote {pages} pages to {} and {}",
                args.out.display(),
                args.man.display()
            );
            Ok(0)
        }
        Command::Version(args) => {
            let version = env!("CARGO_PKG_VERSION");
            if args.short {
                println!("{version}");
            } else {
                println!("Client version: {version} (kops-rs)");
                println!(
                    "kOps release: {} (the nodeup and kOps images of the clusters it builds)",
                    kops_model::DEFAULT_KOPS_RELEASE
                );
            }
            Ok(0)
        }
        Command::Create(args) => match (args.command, args.filename.clone()) {
            (Some(CreateCommand::Cluster(c)), _) => create::create_cluster(&global, &c).await,
            (Some(CreateCommand::Instancegroup(g)), _) => {
                create::create_instance_group(&global, &g).await?;
                Ok(0)
            }
            (Some(CreateCommand::Sshpublickey(k)), _) => {
                create::create_ssh_public_key(&global, &k).await?;
                Ok(0)
            }
            (Some(CreateCommand::Keypair(k)), _) => {
                keypair::create_keypair(&global, &k).await?;
                Ok(0)
            }
            (Some(CreateCommand::Secret(s)), _) => {
                secret::create_secret(&global, &s).await?;
                Ok(0)
            }
            (None, Some(file)) => {
                create::create_from_file(&global, &file).await?;
                Ok(0)
            }
            (None, None) => anyhow::bail!(
                "create: name what to create (cluster, sshpublickey) or give a manifest with -f FILE"
            ),
        },
        Command::Replace(args) => {
            create::replace_from_file(&global, &args.filename, args.force).await?;
            Ok(0)
        }
        Command::Get(args) => {
            match args.command {
                GetCommand::Clusters(a) => get::get_clusters(&global, &a).await?,
                GetCommand::Instancegroups(a) => get::get_instance_groups(&global, &a).await?,
                GetCommand::Keypairs(a) => keypair::get_keypairs(&global, &a).await?,
                GetCommand::History(a) => history::get_history(&global, &a).await?,
                GetCommand::Instances(a) => instances::get_instances(&global, &a).await?,
                GetCommand::All(a) => get::get_all(&global, &a).await?,
                GetCommand::Secrets(a) => secret::get_secrets(&global, &a).await?,
                GetCommand::Sshpublickeys(a) => secret::get_ssh_public_keys(&global, &a).await?,
                GetCommand::Assets(a) => update::get_assets(&global, &a).await?,
            }
            Ok(0)
        }
        Command::Edit(args) => {
            match args.command {
                EditCommand::Cluster(a) => edit::edit_cluster(&global, &a).await?,
                EditCommand::Instancegroup(a) => edit::edit_instance_group(&global, &a).await?,
            }
            Ok(0)
        }
        Command::Update(args) => match args.command {
            cli::UpdateCommand::Cluster(a) => update::update_cluster(&global, &a).await,
        },
        Command::Delete(args) => match (args.command, args.filename) {
            (Some(DeleteCommand::Cluster(a)), _) => delete::delete_cluster(&global, &a).await,
            (Some(DeleteCommand::Instancegroup(a)), _) => {
                delete::delete_instance_group(&global, &a).await
            }
            (Some(DeleteCommand::Instance(a)), _) => rolling::delete_instance(&global, &a).await,
            (Some(DeleteCommand::Secret(a)), _) => {
                secret::delete_secrets(&global, &a).await.map(|_| 0)
            }
            (Some(DeleteCommand::Sshpublickey), _) => {
                secret::delete_ssh_public_keys(&global).await.map(|_| 0)
            }
            (None, Some(file)) => delete::delete_from_file(&global, &file, args.yes).await,
            (None, None) => anyhow::bail!(
                "delete: name what to delete (cluster, instancegroup, instance, secret, sshpublickey) or give a manifest with -f FILE"
            ),
        },
        Command::Unlock(args) => match args.command {
            unlock::UnlockCommand::Cluster(a) => unlock::unlock_cluster(&global, &a).await,
        },
        Command::Helpers(args) => match args.command {
            helpers::HelpersCommand::KubectlAuth(a) => {
                helpers::kubectl_auth(&global, &a).await.map(|()| 0)
            }
        },
        Command::Reconcile(args) => match args.command {
            reconcile::ReconcileCommand::Cluster(a) => {
                reconcile::reconcile_cluster(&global, &a).await
            }
        },
        Command::Upgrade(args) => match args.command {
            upgrade::UpgradeCommand::Cluster(a) => upgrade::upgrade_cluster(&global, &a).await,
        },
        Command::Rollback(args) => match args.command {
            cli::RollbackCommand::Cluster(a) => {
                history::rollback_cluster(&global, &a).await.map(|_| 0)
            }
        },
        Command::Promote(args) => match args.command {
            keypair::PromoteCommand::Keypair(a) => {
                keypair::promote_keypair(&global, &a).await.map(|_| 0)
            }
        },
        Command::Distrust(args) => match args.command {
            keypair::DistrustCommand::Keypair(a) => {
                keypair::distrust_keypair(&global, &a).await.map(|_| 0)
            }
        },
        Command::Trust(args) => match args.command {
            keypair::TrustCommand::Keypair(a) => {
                keypair::trust_keypair(&global, &a).await.map(|_| 0)
            }
        },
        Command::Export(args) => match args.command {
            cli::ExportCommand::Kubeconfig(a) => {
                kubeconfig::export_kubeconfig(&global, &a).await.map(|_| 0)
            }
        },
        Command::Validate(args) => match args.command {
            cli::ValidateCommand::Cluster(a) => validate::validate_cluster(&global, &a).await,
        },
        Command::RollingUpdate(args) => match args.command {
            cli::RollingUpdateCommand::Cluster(a) => {
                rolling::rolling_update_cluster(&global, &a).await
            }
        },
        Command::Toolbox(args) => match args.command {
            cli::ToolboxCommand::Dump(a) => {
                toolbox::dump(&global, &a).await?;
                Ok(0)
            }
            cli::ToolboxCommand::Template(a) => template::toolbox_template(&global, &a).map(|()| 0),
            cli::ToolboxCommand::CheckStateStore(a) => {
                toolbox::check_state_store(&global, &a).await
            }
            cli::ToolboxCommand::RestoreState(a) => toolbox::restore_state(&global, &a).await,
            cli::ToolboxCommand::IamPolicy(a) => toolbox::iam_policy(&global, &a).map(|()| 0),
            cli::ToolboxCommand::Recover(a) => match a.command {
                cli::RecoverCommand::Cluster(r) => toolbox::recover_cluster(&global, &r).await,
            },
            cli::ToolboxCommand::Etcd(a) => match a.command {
                cli::EtcdCommand::ListBackups(l) => toolbox::etcd_list_backups(&global, &l).await,
                cli::EtcdCommand::RestoreBackup(r) => {
                    toolbox::etcd_restore_backup(&global, &r).await
                }
            },
        },
    }
}
