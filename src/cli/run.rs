//! `baton run [--max-legs N] [--] <host command…>`: the relay's runner. Headless host
//! commands ([`relay::headless_forms`]): each leg runs in the
//! foreground with its output passed through as the host prints it; a leg that baton
//! paused (its own CRITICAL or manual handoff pending, whoever stopped the agent) is
//! followed by a fresh one with the continue prompt, whose SessionStart brief carries the
//! handoff. One line per hand-over and a one-paragraph summary go to stderr; the exit
//! status is the last leg's, or [`PAUSED_EXIT`] when the last leg ended paused (the work
//! is not done: the line says how to go on). On a terminal, `claude …`
//! (interactive) runs on a pty baton owns ([`relay::interactive`]): the countdown and
//! hand-over lines are on the host's screen, the summary on stderr once it exits.

use clap::Args;

use super::ExitStatus;
use crate::relay::{self, NextStep};

/// The exit status when the last leg ended with its handoff pending (`--max-legs`
/// reached, or an interactive host that exited paused): the task is not done.
pub(super) const PAUSED_EXIT: u8 = 3;

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
    let Some(cwd) = super::folder(None) else {
        errln!("baton run: no current folder");
        return ExitStatus::Usage;
    };
    let handoffs = relay::Handoffs::for_dir(&cwd);
    #[cfg(unix)]
    if crate::util::pty::stdin_is_terminal() {
        if let Ok(command) = relay::interactive(&args.command) {
            let outcome = relay::interactive::run_interactive(&command, args.max_legs, &run_id, &handoffs);
            return finish(outcome, &args.command);
        }
    }
    #[cfg(windows)]
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) && relay::interactive(&args.command).is_ok() {
        errln!(
            "baton run: the interactive relay is Unix-only for now (it needs a pseudo-terminal); run the host headless on Windows, e.g. `baton run claude -p \"…\"`"
        );
        return ExitStatus::Usage;
    }
    let command = match relay::headless(&args.command) {
        Ok(command) => command,
        Err(why) => {
            errln!("baton run: {why}");
            return ExitStatus::Usage;
        }
    };
    let outcome = relay::run_headless(&command, args.max_legs, &run_id, &handoffs, |end, record| {
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
    finish(outcome, &args.command)
}

/// The summary and the exit status: the last leg's, or [`PAUSED_EXIT`] with how to go on
/// when it ended paused.
fn finish(outcome: Result<relay::RunOutcome, relay::RelayError>, command: &[String]) -> ExitStatus {
    match outcome {
        Ok(outcome) => {
            errln!("{}", relay::summary(&outcome.record, outcome.legs, outcome.end));
            if outcome.end.left_paused() {
                let handoff = outcome
                    .record
                    .leg(outcome.legs)
                    .and_then(|n| n.handoff.as_deref())
                    .map(|h| format!(" ({h})"))
                    .unwrap_or_default();
                let host = command.first().map(String::as_str).unwrap_or("the host");
                errln!(
                    "baton run: the task is not done: the last leg's handoff{handoff} is pending. To go on, run `baton run` again with `continue` as the prompt (`--max-legs` for more legs), or start `{host}` here and say \"continue\": the new session is briefed from it (`baton resume` shows it)."
                );
                return ExitStatus::Code(PAUSED_EXIT);
            }
            ExitStatus::Code(outcome.code.clamp(0, 255) as u8)
        }
        Err(why) => {
            errln!("baton run: {why}");
            ExitStatus::Failure
        }
    }
}
