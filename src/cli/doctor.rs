//! `baton doctor`: exit 1 when a check fails.

use clap::{Args, ValueEnum};

use super::ExitStatus;
use crate::doctor::{self, HostChoice};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum HostFlag {
    /// Claude Code.
    Claude,
    /// Codex.
    Codex,
    /// Gemini CLI.
    Gemini,
    /// Qwen Code.
    Qwen,
    /// Factory Droid.
    Droid,
    /// GitHub Copilot CLI.
    Copilot,
    /// OpenCode (baton's plugin file).
    #[value(name = "opencode")]
    OpenCode,
    /// Kilo CLI (baton's OpenCode plugin).
    Kilo,
    /// Every host, installed or not.
    All,
}

#[derive(Args)]
#[command(after_help = "\
Checks the hosts baton is installed for (found in their settings files and in baton's record of \
its installs; Claude Code when there is none), or those given with --host. Exit 0 when every \
check passes or only warns, 1 when one fails.")]
pub(super) struct DoctorArgs {
    /// Print JSON for machines.
    #[arg(long)]
    json: bool,
    /// Check these hosts instead of those baton is installed for (comma-separate or repeat).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "HOST")]
    host: Vec<HostFlag>,
}

pub(super) fn run(args: &DoctorArgs) -> ExitStatus {
    let hosts = args
        .host
        .iter()
        .map(|flag| match flag {
            HostFlag::Claude => HostChoice::Claude,
            HostFlag::Codex => HostChoice::Codex,
            HostFlag::Gemini => HostChoice::Gemini,
            HostFlag::Qwen => HostChoice::Qwen,
            HostFlag::Droid => HostChoice::Droid,
            HostFlag::Copilot => HostChoice::Copilot,
            HostFlag::OpenCode => HostChoice::OpenCode,
            HostFlag::Kilo => HostChoice::Kilo,
            HostFlag::All => HostChoice::All,
        })
        .collect();
    let options = doctor::Options { json: args.json, hosts };
    if doctor::run(&options, &mut super::screen::Screen::stdout()) {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    }
}
