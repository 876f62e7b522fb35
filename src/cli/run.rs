//! `baton run [--max-legs N] [--] <host command…>`: the relay's runner. Headless host
//! commands ([`relay::HEADLESS_FORMS`]): each leg runs in the
//! foreground with its output passed through as the host prints it; a leg that baton
//! paused at critical context is followed by a fresh one with the continue prompt, whose
//! SessionStart brief carries the handoff. One line per hand-over and a one-paragraph
//! summary go to stderr; the exit status is the last leg's. On a terminal, `claude …`
//! (interactive) runs on a pty baton owns ([`relay::interactive`]): the countdown and
//! hand-over lines are on the host's screen, the summary on stderr once it exits.

use clap::Args;

use super::ExitStatus;
use crate::relay::{self, NextStep};

#[derive(Args)]
pub(super) struct RunArgs {
    /// The most legs (contexts) the relay runs.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
    max_legs: u32,
    /// The host command: `claude -p …`, `codex exec …`, `gemini -p …`, `qwen -p …`,
    /// `droid exec …` or `copilot -p …`, the prompt last (or `-p`'s value); or `claude …`
    /// (interactive) from a terminal.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true, value_name = "HOST COMMAND")]
    command: Vec<String>,
}

pub(super) fn run(args: RunArgs) -> ExitStatus {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let run_id = relay::new_run_id(now, std::process::id());
    if crate::util::pty::stdin_is_terminal() {
        if let Ok(command) = relay::interactive(&args.command) {
            return finish(relay::interactive::run_interactive(&command, args.max_legs, &run_id));
        }
    }
    let command = match relay::headless(&args.command) {
        Ok(command) => command,
        Err(why) => {
            errln!("baton run: {why}");
            return ExitStatus::Usage;
        }
    };
    let outcome = relay::run_headless(&command, args.max_legs, &run_id, |end, record| {
        let note = record.leg(end.leg);
        let at = note.and_then(|n| n.peak_used_pct).map(|p| format!(" at {p} %")).unwrap_or_default();
        let handoff =
            note.and_then(|n| n.handoff.as_deref()).map(|h| format!(", handoff {h}")).unwrap_or_default();
        if end.interrupted {
            errln!(
                "baton run: leg {} went on after baton's stop ({} does not end its turn on a hook's stop); ended it with Ctrl-C's signal",
                end.leg,
                command.host.name()
            );
        }
        match end.next {
            NextStep::Continue => errln!(
                "baton run: leg {} paused{at}{handoff}; leg {} starts in a fresh context",
                end.leg,
                end.leg + 1
            ),
            NextStep::MaxLegs => errln!(
                "baton run: leg {} paused{at}{handoff}; --max-legs {} reached, not continuing",
                end.leg,
                args.max_legs
            ),
            NextStep::Done => {}
        }
    });
    finish(outcome)
}

/// The summary and the exit status (the last leg's).
fn finish(outcome: Result<relay::RunOutcome, relay::RelayError>) -> ExitStatus {
    match outcome {
        Ok(outcome) => {
            errln!("{}", relay::summary(&outcome.record, outcome.legs, outcome.end));
            ExitStatus::Code(outcome.code.clamp(0, 255) as u8)
        }
        Err(why) => {
            errln!("baton run: {why}");
            ExitStatus::Failure
        }
    }
}
