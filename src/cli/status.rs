//! `baton status [--json]`: how full the session's context is, for a person or an agent
//! (cheap enough to run from Bash at any time).

use std::path::PathBuf;

use clap::Args;

use super::{ExitStatus, folder, print_json};
use crate::config::Config;
use crate::status::{self, StatusError};

#[derive(Args)]
pub(super) struct StatusArgs {
    /// The session id, or an unambiguous prefix of one (default: the newest session of the
    /// project in the current folder).
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// The project folder (default: the current folder).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Print one JSON object (format version 1) for machines.
    #[arg(long)]
    json: bool,
}

pub(super) fn run(args: StatusArgs) -> ExitStatus {
    let Some(cwd) = folder(args.cwd) else {
        errln!("baton status: no current folder; pass --cwd");
        return ExitStatus::Usage;
    };
    let config = Config::load(Some(&cwd));
    match status::status(&cwd, args.session.as_deref(), &config, crate::metrics::now_unix()) {
        Ok(found) if args.json => {
            print_json(&found.to_json());
            ExitStatus::Success
        }
        Ok(found) => {
            out!("{}", found.to_text());
            ExitStatus::Success
        }
        Err(e) => {
            errln!("baton status: {e}");
            if matches!(e, StatusError::Usage(_)) { ExitStatus::Usage } else { ExitStatus::Failure }
        }
    }
}
