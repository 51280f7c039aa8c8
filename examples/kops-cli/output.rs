//! Terminal output: plan colours (only on a terminal, never with `NO_COLOR`) and
//! progress bars driven by executor events.

use std::io::IsTerminal as _;

use anstyle::{AnsiColor, Style};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kops_tasks::Event;

/// Whether stdout gets colours.
pub fn stdout_colours() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

fn paint(text: &str, style: Style) -> String {
    format!("{}{text}{}", style.render(), style.render_reset())
}

/// The plan's text, coloured by section when `colour` is set.
pub fn plan_text(text: &str, colour: bool) -> String {
    if !colour {
        return text.to_string();
    }
    let green = Style::new().fg_color(Some(AnsiColor::Green.into()));
    let yellow = Style::new().fg_color(Some(AnsiColor::Yellow.into()));
    let red = Style::new().fg_color(Some(AnsiColor::Red.into()));
    let bold = Style::new().bold();
    let mut current = None;
    let mut out = String::new();
    for line in text.lines() {
        if !line.starts_with(' ') && !line.is_empty() {
            current = if line.starts_with("Will create") {
                Some(green)
            } else if line.starts_with("Will modify") {
                Some(yellow)
            } else if line.starts_with("Will delete") {
                Some(red)
            } else {
                None
            };
            out.push_str(&paint(line, bold));
        } else if let Some(style) =
            current.filter(|_| line.starts_with("  ") && !line.starts_with("   "))
        {
            out.push_str(&paint(line, style));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    if !text.ends_with('\n') {
        out.pop();
    }
    out
}

/// A progress bar on stderr (hidden when stderr is not a terminal).
pub fn progress_bar(total: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    let style = ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {wide_msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar.set_prefix(what.to_string());
    bar
}

/// Moves `bar` along with the executor's events.
pub fn follow(bar: &ProgressBar, event: &Event) {
    match event {
        Event::Started { key, total, .. } => {
            bar.set_length(*total as u64);
            bar.set_message(key.to_string());
        }
        Event::Finished {
            key,
            ok,
            done,
            total,
            ..
        } => {
            bar.set_length(*total as u64);
            bar.set_position(*done as u64);
            if !ok {
                bar.println(format!("failed: {key}"));
            }
        }
        Event::Skipped {
            key,
            blocked_by,
            done,
            total,
            ..
        } => {
            bar.set_length(*total as u64);
            bar.set_position(*done as u64);
            bar.println(format!("skipped: {key} (blocked by {blocked_by})"));
        }
        Event::Retrying {
            key,
            attempt,
            error,
            ..
        } => {
            bar.set_message(format!("{key}: retrying after attempt {attempt}: {error}"));
        }
        _ => {}
    }
}
