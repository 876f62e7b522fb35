//! `baton pause`: write the handoff now and print its confirmation.

use std::path::PathBuf;

use clap::Args;

use super::{ExitStatus, folder, print_json};
use crate::config::Config;
use crate::{gitx, manual_handoff, run_record};

#[derive(Args)]
pub(super) struct PauseArgs {
    /// branch: a `wip:` commit of the two handoff files on the current branch (GSD's
    /// way; your staged changes stay staged); ref: a private ref that also saves your
    /// uncommitted work and moves nothing; off: files only. Default from
    /// `handoff.pause_checkpoint` (branch).
    #[arg(long, value_name = "MODE", value_parser = ["branch", "ref", "off"])]
    checkpoint: Option<String>,
    /// Also write .planning/reports/SESSION_REPORT.md with the session's exact token use.
    #[arg(long)]
    report: bool,
    /// The project folder (default: the current folder).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// The session id (default: the transcript's, else a new one).
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// The session's transcript (default: the newest one of this project in
    /// $CLAUDE_CONFIG_DIR or ~/.claude, under projects/).
    #[arg(long, value_name = "PATH")]
    transcript: Option<PathBuf>,
    /// Print JSON for machines.
    #[arg(long)]
    json: bool,
}

pub(super) fn run(args: PauseArgs) -> ExitStatus {
    let Some(cwd) = folder(args.cwd) else {
        errln!("baton pause: no current folder; pass --cwd");
        return ExitStatus::Usage;
    };
    let config = Config::load(Some(&cwd));
    let options = manual_handoff::Options {
        checkpoint: args.checkpoint.as_deref().and_then(gitx::Mode::parse),
        report: args.report,
        cwd,
        session: args.session,
        transcript: args.transcript,
    };
    match manual_handoff::run(&options, &config) {
        Ok(paused) => {
            // Run by the agent under `baton run`: the leg is paused while this is pending.
            if let Some((run_id, leg)) = run_record::leg_of_process() {
                let outcome = &paused.outcome;
                let json = outcome.json_path.strip_prefix(&outcome.root).unwrap_or(&outcome.json_path);
                run_record::note_handoff(
                    &run_id,
                    leg,
                    &run_record::WrittenHandoff {
                        session: paused.session_id.clone(),
                        json: json.display().to_string(),
                        project: outcome.root.clone(),
                        checkpoint: outcome.checkpoint.as_ref().and_then(|c| c.reference.clone()),
                    },
                );
            }
            if args.json {
                print_json(&manual_handoff::confirmation_json(&paused));
            } else {
                out!("{}", manual_handoff::confirmation(&paused));
            }
            ExitStatus::Success
        }
        Err(why) => {
            errln!("baton pause: {why}");
            ExitStatus::Failure
        }
    }
}
