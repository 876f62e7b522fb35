//! `baton statusline [--host HOST] [--wrap COMMAND]`: the line under the prompt (Claude
//! Code's payload, or with `--host` Qwen Code's, Factory Droid's or GitHub Copilot CLI's);
//! `baton statusline --subagents`: the rows of Claude Code's agent panel
//! (`subagentStatusLine`). Always exits 0; a panic prints nothing rather than an error the
//! host would show.

use std::path::PathBuf;

use clap::Args;

use super::{ExitStatus, print_out, run_guarded};
use crate::config::Config;
use crate::host::{HostKind, SubagentRowsInput};
use crate::{metrics, statusline, stdin};

#[derive(Args)]
pub(super) struct StatuslineArgs {
    /// Run this other statusline command on the same stdin and print its output
    /// instead (baton's own line when it fails, prints nothing or takes longer than
    /// `statusline.wrap_timeout_ms`). `baton install` sets this up.
    #[arg(long, value_name = "COMMAND", conflicts_with = "subagents")]
    wrap: Option<String>,
    /// Answer Claude Code's `subagentStatusLine` instead: one `{"id", "content"}` line per
    /// subagent of its agent panel, with that subagent's own context meter. `baton
    /// install` sets this up.
    #[arg(long)]
    subagents: bool,
    /// The host whose statusline payload is on stdin (default: Claude Code). `baton
    /// install --host <host>` sets this up.
    #[arg(long, value_name = "HOST", value_parser = super::hosts::with_statusline(), conflicts_with = "subagents")]
    host: Option<String>,
    /// Scan the git work tree at DIR and cache its markers, then exit (what a render
    /// starts in the background when its cached markers have grown old).
    #[arg(long, value_name = "DIR", hide = true, conflicts_with_all = ["wrap", "subagents", "host"])]
    refresh_git: Option<PathBuf>,
}

/// `baton statusline` with no argument: the host's own call.
pub(super) fn run_own_line() -> ExitStatus {
    run_host_line(HostKind::DEFAULT)
}

fn run_host_line(host: HostKind) -> ExitStatus {
    if super::stdin_is_a_terminal("statusline", &format!("{host}'s statusLine JSON")) {
        return ExitStatus::Success;
    }
    run_guarded(move || own_line(host));
    ExitStatus::Success
}

pub(super) fn run(args: StatuslineArgs) -> ExitStatus {
    if let Some(root) = args.refresh_git {
        // Only ever started by baton itself, with the work tree's absolute path.
        if root.is_absolute() {
            run_guarded(move || {
                let config = Config::load(Some(&root));
                statusline::refresh_git(&root, &config, metrics::now_unix());
            });
        }
        return ExitStatus::Success;
    }
    if args.subagents {
        if super::stdin_is_a_terminal("statusline --subagents", "Claude Code's subagentStatusLine JSON") {
            return ExitStatus::Success;
        }
        run_guarded(subagent_rows);
        return ExitStatus::Success;
    }
    let host = args.host.as_deref().and_then(HostKind::from_id).unwrap_or(HostKind::DEFAULT);
    match args.wrap {
        None => return run_host_line(host),
        Some(old) => run_guarded(move || match statusline::wrap::run(&old, host, metrics::now_unix()) {
            statusline::wrap::Shown::Wrapped(text) => super::screen::users_program_output(&text),
            statusline::wrap::Shown::Own(text) => print_out(&text),
        }),
    }
    ExitStatus::Success
}

fn own_line(host: HostKind) {
    // The host's payload, read by its own typed reader (fields baton does not use are
    // skipped as they stream by, whatever their size).
    let Some(input) = host.read_statusline(stdin::timeout_from_env()) else {
        print_out("baton: no statusline input\n");
        return;
    };
    let project = input.project_dir().map(PathBuf::from).filter(|p| p.is_absolute());
    let config = Config::load(project.as_deref());
    let line = statusline::run(&input, &config, metrics::now_unix());
    print_out(&format!("{line}\n"));
}

fn subagent_rows() {
    // Malformed input: no rows (Claude Code keeps its own text for each).
    let Ok(input) = stdin::read_json::<SubagentRowsInput>(stdin::timeout_from_env()) else { return };
    let project = input.cwd.as_deref().map(PathBuf::from).filter(|p| p.is_absolute());
    let config = Config::load(project.as_deref());
    print_out(&statusline::subagent_rows(&input, &config, metrics::now_unix(), statusline::colour_wanted()));
}
