//! `baton doctor`: exit 1 when a check fails.

use clap::Args;

use super::ExitStatus;
use crate::doctor;
use crate::host::HostChoice;

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
    #[arg(long, value_parser = super::hosts::doctor_choice(), value_delimiter = ',', value_name = "HOST")]
    host: Vec<HostChoice>,
}

pub(super) fn run(args: &DoctorArgs) -> ExitStatus {
    let options = doctor::Options { json: args.json, hosts: args.host.clone() };
    if doctor::run(&options, &mut super::screen::Screen::stdout()) {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    }
}
