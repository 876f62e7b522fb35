//! `baton statusline [--wrap COMMAND]`: the line under the prompt; `baton statusline
//! --subagents`: the rows of Claude Code's agent panel (`subagentStatusLine`). Always
//! exits 0; a panic prints nothing rather than an error the host would show.

use std::path::PathBuf;

use clap::Args;

use super::{ExitStatus, print_out, run_guarded};
use crate::config::Config;
use crate::host::{StatuslineInput, SubagentRowsInput};
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
}

/// `baton statusline` with no argument: the host's own call.
pub(super) fn run_own_line() -> ExitStatus {
    if super::stdin_is_a_terminal("statusline", "Claude Code's statusLine JSON") {
        return ExitStatus::Success;
    }
    run_guarded(own_line);
    ExitStatus::Success
}

pub(super) fn run(args: StatuslineArgs) -> ExitStatus {
    if args.subagents {
        if super::stdin_is_a_terminal("statusline --subagents", "Claude Code's subagentStatusLine JSON") {
            return ExitStatus::Success;
        }
        run_guarded(subagent_rows);
        return ExitStatus::Success;
    }
    match args.wrap {
        None => return run_own_line(),
        Some(old) => run_guarded(move || print_out(&statusline::wrap::run(&old, metrics::now_unix()))),
    }
    ExitStatus::Success
}

fn own_line() {
    let input = match stdin::read_json::<StatuslineInput>(stdin::timeout_from_env()) {
        Ok(input) => input,
        Err(_) => {
            print_out("baton: no statusline input\n");
            return;
        }
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
