//! `kops gen-cli-docs`: the command reference, generated from the clap definitions.
//!
//! One Markdown page per command (`docs/cli/kops_create_cluster.md`, the names kOps'
//! own reference uses) and one man page per command (`docs/man/kops-create-cluster.1`,
//! written by clap_mangen). `examples/tests/cli_docs.rs` regenerates both and fails when
//! the checked-in copies differ, so the reference cannot go stale.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Arg, Args, Command, CommandFactory};

use crate::cli::Cli;

#[derive(Debug, Args)]
pub struct GenCliDocsArgs {
    /// Directory for the Markdown pages
    #[arg(long, value_name = "DIR", default_value = "docs/cli")]
    pub out: PathBuf,
    /// Directory for the man pages
    #[arg(long, value_name = "DIR", default_value = "docs/man")]
    pub man: PathBuf,
}

/// Writes every command's Markdown and man page, replacing the pages of the two
/// directories (a removed command's page goes too).
pub fn write(args: &GenCliDocsArgs) -> anyhow::Result<usize> {
    let mut root = Cli::command();
    root.build();
    let mut pages = Vec::new();
    collect(&root, &mut pages);
    clear(&args.out, "md")?;
    clear(&args.man, "1")?;
    for cmd in &pages {
        let name = bin_name(cmd);
        let md = args.out.join(format!("{}.md", name.replace(' ', "_")));
        std::fs::write(&md, markdown(cmd)).with_context(|| format!("writing {}", md.display()))?;
        let man = args.man.join(format!("{}.1", name.replace(' ', "-")));
        let mut roff = Vec::new();
        clap_mangen::Man::new(man_command(cmd, &name))
            .render(&mut roff)
            .with_context(|| format!("rendering the man page of {name}"))?;
        std::fs::write(&man, roff).with_context(|| format!("writing {}", man.display()))?;
    }
    Ok(pages.len())
}

/// The commands of the tree, parents before children, hidden ones left out.
fn collect<'a>(cmd: &'a Command, out: &mut Vec<&'a Command>) {
    out.push(cmd);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        if sub.get_name() != "help" {
            collect(sub, out);
        }
    }
}

fn clear(dir: &Path, extension: &str) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == extension) {
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        }
    }
    Ok(())
}

fn bin_name(cmd: &Command) -> String {
    cmd.get_bin_name().unwrap_or(cmd.get_name()).to_string()
}

/// The page's file name for a command's full name.
fn page(name: &str) -> String {
    format!("{}.md", name.replace(' ', "_"))
}

/// A command for clap_mangen: the full name as the page's title, its own flags only
/// (the root page lists the global ones).
fn man_command(cmd: &Command, name: &str) -> Command {
    let mut c = cmd
        .clone()
        .name(name.replace(' ', "-"))
        .bin_name(name.to_string());
    if cmd.get_bin_name() != Some("kops") {
        let globals: Vec<_> = cmd
            .get_arguments()
            .filter(|a| a.is_global_set())
            .map(|a| a.get_id().clone())
            .collect();
        for id in globals {
            c = c.mut_arg(id, |a| a.hide(true));
        }
    }
    c
}

fn markdown(cmd: &Command) -> String {
    let name = bin_name(cmd);
    let mut s = format!("# {name}\n\n");
    let about = cmd
        .get_long_about()
        .or(cmd.get_about())
        .map(|a| a.to_string())
        .unwrap_or_default();
    if !about.is_empty() {
        s.push_str(about.trim_end());
        s.push_str("\n\n");
    }
    let usage = cmd.clone().render_usage().to_string();
    let usage = usage.strip_prefix("Usage: ").unwrap_or(&usage);
    let _ = write!(s, "```\n{}\n```\n", usage.trim_end());
    let subs: Vec<&Command> = cmd
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
        .collect();
    if !subs.is_empty() {
        s.push_str("\n## Commands\n\n| command | what it does |\n|---|---|\n");
        for sub in subs {
            let full = bin_name(sub);
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            let _ = writeln!(s, "| [`{full}`]({}) | {} |", page(&full), cell(&about));
        }
    }
    let root = cmd.get_bin_name() == Some("kops");
    let positional: Vec<&Arg> = cmd.get_positionals().filter(|a| !a.is_hide_set()).collect();
    if !positional.is_empty() {
        s.push_str("\n## Arguments\n\n");
        for a in positional {
            arg_entry(&mut s, a);
        }
    }
    let own: Vec<&Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_positional() && !a.is_hide_set() && (root || !a.is_global_set()))
        .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
        .collect();
    if !own.is_empty() {
        s.push_str(if root {
            "\n## Options (every command takes these)\n\n"
        } else {
            "\n## Options\n\n"
        });
        for a in own {
            arg_entry(&mut s, a);
        }
    }
    if !root {
        let parent = name.rsplit_once(' ').map_or("kops", |(p, _)| p);
        let _ = write!(
            s,
            "\n## See also\n\n- [`{parent}`]({}){}\n",
            page(parent),
            if parent == "kops" {
                ""
            } else {
                "\n- [`kops`](kops.md): the options every command takes"
            }
        );
    }
    s
}

/// One argument as a list entry: its spelling, then help, default, environment
/// variable and accepted values.
fn arg_entry(s: &mut String, a: &Arg) {
    let mut spelling = match (a.get_short(), a.get_long()) {
        (Some(c), Some(l)) => format!("-{c}, --{l}"),
        (None, Some(l)) => format!("--{l}"),
        (Some(c), None) => format!("-{c}"),
        (None, None) => String::new(),
    };
    let takes_value = a.get_action().takes_values();
    if takes_value {
        let names = a
            .get_value_names()
            .map(|n| {
                n.iter()
                    .map(|n| format!("<{n}>"))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_else(|| format!("<{}>", a.get_id().as_str().to_uppercase()));
        spelling = if spelling.is_empty() {
            names
        } else {
            format!("{spelling} {names}")
        };
    }
    let help = a
        .get_long_help()
        .or(a.get_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    let mut extras = Vec::new();
    if takes_value && !a.get_default_values().is_empty() {
        let d: Vec<_> = a
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        extras.push(format!("default: `{}`", d.join(",")));
    }
    if let Some(env) = a.get_env() {
        extras.push(format!("env: `{}`", env.to_string_lossy()));
    }
    let possible: Vec<String> = a
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| format!("`{}`", v.get_name()))
        .collect();
    if takes_value && !possible.is_empty() {
        extras.push(format!("one of {}", possible.join(", ")));
    }
    if a.is_required_set() {
        extras.push("required".into());
    }
    let _ = write!(s, "- `{spelling}`");
    if !help.is_empty() {
        let _ = write!(s, ": {}", help.trim_end().replace('\n', "\n  "));
    }
    if !extras.is_empty() {
        let _ = write!(s, " ({})", extras.join("; "));
    }
    s.push('\n');
}

/// Text fit for one table cell: one line, pipes escaped.
fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}
