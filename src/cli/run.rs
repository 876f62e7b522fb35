//! `baton run [--max-legs N] [--retries N] [--wait-limit DURATION] [--countdown DURATION]
//! [--] <host command…>`:
//! the relay's runner. Headless host commands ([`relay::headless_forms`]): each leg runs
//! in the foreground with its output passed through as the host prints it; a leg that
//! baton paused (its own CRITICAL or manual handoff pending, whoever stopped the agent) is
//! followed by a fresh one with the continue prompt, whose SessionStart brief carries the
//! handoff. A leg that ends on the host's usage limit, an API error or a crash is followed
//! by a fresh one too, briefed from a handoff written from its facts, after waiting for
//! the limit's reset or backing off ([`relay::faults`]); Ctrl-C or SIGTERM ends the run
//! after the leg it is passed on to, the handoff kept, and the same command run again
//! continues the relay. One line per hand-over and wait and a one-paragraph summary go to
//! stderr; the exit status says how the run ended ([`relay::faults::exit`]). On a
//! terminal, `claude …` (interactive) runs on a pty baton owns ([`relay::interactive`]):
//! the countdown and hand-over lines are on the host's screen, the summary on stderr once
//! it exits.

use std::time::Duration;

use clap::Args;

use super::ExitStatus;
use crate::relay::faults;
use crate::relay::{self, Event};
use crate::run_record::{EndReason, RunEnd, WaitReason};
use crate::util::text::outside;

#[derive(Args)]
pub(super) struct RunArgs {
    /// The most legs (contexts) the relay runs after a pause, the first one included
    /// (legs restarted after a usage limit, an API error or a crash are bounded apart).
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
    max_legs: u32,
    /// The most fresh legs after API errors in a row (overloaded, 5xx, network: after the
    /// host's own retries), with exponential backoff from 2 s; then the run ends.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=20))]
    retries: u32,
    /// The longest wait for a usage limit's reset (`90s`, `20m`, `6h`; `0`: do not wait).
    /// The relay waits until the reset the host states, sending nothing, then goes on.
    #[arg(long, value_name = "DURATION", default_value = "6h", value_parser = parse_duration)]
    wait_limit: Duration,
    /// Interactive `claude …` only: how long the countdown line shows before baton types
    /// `/clear` and `continue` into the host (`0`: hand over at once; 5s when not given).
    /// A key cancels it.
    #[arg(long, value_name = "DURATION", value_parser = parse_countdown)]
    countdown: Option<Duration>,
    /// The host command: `claude -p …`, `codex exec …`, `gemini -p …`, `qwen -p …`,
    /// `droid exec …` or `copilot -p …`, the prompt last (or `-p`'s value); or `claude …`
    /// (interactive) from a terminal. The same command run again continues a relay that
    /// was interrupted or stopped with its handoff pending.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true, value_name = "HOST COMMAND")]
    command: Vec<String>,
}

/// A duration: a whole number with `s`, `m` or `h` (seconds without one).
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => text.split_at(at),
        None => (text, "s"),
    };
    let n: u64 = number.parse().map_err(|_| format!("`{text}` is not a duration such as 90s, 20m or 6h"))?;
    let seconds = match unit {
        "s" => n,
        "m" => n.saturating_mul(60),
        "h" => n.saturating_mul(3600),
        _ => return Err(format!("`{text}`: the unit is s, m or h")),
    };
    Ok(Duration::from_secs(seconds))
}

/// A countdown: a duration of at most a minute (a longer one is a pause the user takes,
/// not a chance to cancel).
fn parse_countdown(text: &str) -> Result<Duration, String> {
    let countdown = parse_duration(text)?;
    if countdown > Duration::from_secs(60) {
        return Err(format!("`{text}`: the countdown is at most 60s"));
    }
    Ok(countdown)
}

pub(super) fn run(args: RunArgs) -> ExitStatus {
    let Some(cwd) = super::folder(None) else {
        errln!("baton run: no current folder");
        return ExitStatus::Usage;
    };
    let handoffs = relay::Handoffs::for_dir(&cwd);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let new_id = relay::new_run_id(now, std::process::id());
    let policy =
        faults::Policy { max_legs: args.max_legs, retries: args.retries, wait_limit: args.wait_limit };
    #[cfg(unix)]
    if crate::util::pty::stdin_is_terminal() {
        if let Ok(command) = relay::interactive(&args.command) {
            let countdown = args.countdown.unwrap_or(relay::interactive::COUNTDOWN);
            let outcome =
                relay::interactive::run_interactive(&command, policy, countdown, &new_id, &handoffs);
            return finish(outcome, &args.command, args.max_legs);
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
    if args.countdown.is_some() {
        errln!(
            "baton run: --countdown is for interactive `claude` on a terminal; a headless leg hands over with none"
        );
    }
    let (run_id, first_leg) = relay::find_continuable(&command.words(), &handoffs).unwrap_or((new_id, 1));
    let run = relay::HeadlessRun { command: &command, policy, handoffs: &handoffs };
    let host = command.host.name();
    let outcome = relay::run_headless(&run, &run_id, first_leg, |event, record| match event {
        Event::Continuing { leg, .. } => {
            let handoff = record
                .legs
                .iter()
                .rev()
                .find_map(|n| n.handoff.as_deref())
                .map(|h| format!(" ({h})"))
                .unwrap_or_default();
            errln!(
                "baton run: continuing the relay this command started: its handoff{handoff} is pending; leg {leg} starts in a fresh context, briefed from it"
            );
        }
        Event::LegEnded(end) => {
            if end.interrupted {
                errln!(
                    "baton run: leg {} went on after baton's stop ({host} does not end its turn on a hook's stop); ended it with Ctrl-C's signal",
                    end.leg
                );
            }
            let note = record.leg(end.leg);
            let handoff =
                note.and_then(|n| n.handoff.as_deref()).map(|h| format!(", handoff {h}")).unwrap_or_default();
            match &end.reason {
                // Said with what comes next (the next leg, or --max-legs reached).
                EndReason::Done | EndReason::Paused { .. } => {}
                reason => {
                    errln!("baton run: leg {} ended: {}{handoff}", end.leg, relay::describe_end(reason))
                }
            }
        }
        Event::HandoffFromFacts { leg, handoff: Some(handoff) } => {
            errln!("baton run: leg {leg} left no handoff; wrote {handoff} from its transcript's facts")
        }
        Event::HandoffFromFacts { leg, handoff: None } => errln!(
            "baton run: leg {leg} left no handoff and none could be written from its facts (no session recorded); the next leg is briefed from what is pending"
        ),
        Event::BriefKept { leg, handoff } => errln!(
            "baton run: leg {leg} completed nothing before it ended; {handoff}, which briefed it, stays the brief"
        ),
        Event::Waiting { until_ms, why } => {
            let left = until_ms.saturating_sub(crate::run_record::now_ms()).div_ceil(1000);
            match why {
                WaitReason::UsageLimit { .. } => errln!(
                    "baton run: waiting for the usage limit's reset: until {} ({left} s), sending nothing; Ctrl-C stops (the handoff stays)",
                    relay::clock(*until_ms)
                ),
                WaitReason::Backoff { attempt, .. } => {
                    errln!("baton run: retry {attempt} of {} after the API error in {left} s", args.retries)
                }
                WaitReason::Other => {}
            }
        }
        Event::NextLeg { leg, fresh_after: EndReason::Paused { used_pct } } => {
            let at = used_pct.map(|p| format!(" at {p} %")).unwrap_or_default();
            let handoff = record
                .leg(leg - 1)
                .and_then(|n| n.handoff.as_deref())
                .map(|h| format!(", handoff {h}"))
                .unwrap_or_default();
            errln!("baton run: leg {} paused{at}{handoff}; leg {leg} starts in a fresh context", leg - 1)
        }
        Event::NextLeg { leg, .. } => errln!("baton run: leg {leg} starts in a fresh context"),
    });
    finish(outcome, &args.command, args.max_legs)
}

/// The summary and the exit status ([`faults::exit_code`]), with one line saying why the
/// run stopped and how to go on when the work is not done.
fn finish(
    outcome: Result<relay::RunOutcome, relay::RelayError>,
    command: &[String],
    max_legs: u32,
) -> ExitStatus {
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(why) => {
            errln!("baton run: {why}");
            return ExitStatus::Failure;
        }
    };
    let last = *outcome.legs.end();
    if outcome.end == RunEnd::MaxLegs {
        let note = outcome.record.leg(last);
        let at = note.and_then(|n| n.peak_used_pct).map(|p| format!(" at {p} %")).unwrap_or_default();
        let handoff =
            note.and_then(|n| n.handoff.as_deref()).map(|h| format!(", handoff {h}")).unwrap_or_default();
        errln!("baton run: leg {last} paused{at}{handoff}; --max-legs {max_legs} reached, not continuing");
    }
    errln!("{}", relay::summary(&outcome.record, outcome.legs.clone(), &outcome.end));
    let handoff = outcome
        .record
        .leg(last)
        .and_then(|n| n.handoff.as_deref())
        .map(|h| format!(" ({h})"))
        .unwrap_or_default();
    let again = "run the same `baton run` command again: it continues from the handoff as a fresh leg";
    let host = command.first().map(String::as_str).unwrap_or("the host");
    match &outcome.end {
        RunEnd::Done => {}
        RunEnd::MaxLegs | RunEnd::LeftPaused => errln!(
            "baton run: the task is not done: the last leg's handoff{handoff} is pending. To go on, run `baton run` again: the same command continues from the handoff as a fresh leg (`--max-legs` for more legs); or start `{host}` here and say \"continue\": the new session is briefed from it (`baton resume` shows it)."
        ),
        RunEnd::Interrupted { signal } => errln!(
            "baton run: interrupted ({}); no new leg started, the handoff{handoff} stays. To go on, {again}.",
            relay::signal_name(*signal)
        ),
        RunEnd::LimitNotWaited { resets_at_ms } => {
            let when = resets_at_ms.map(|t| format!(" at {}", relay::clock(t))).unwrap_or_default();
            errln!(
                "baton run: stopped at the host's usage limit (it resets{when}); the handoff{handoff} stays. After the reset, {again} (or raise --wait-limit)."
            )
        }
        RunEnd::RetriesSpent { message } => errln!(
            "baton run: the model server kept failing: {} ({} legs in a row); the handoff{handoff} stays. When it answers again, {again}.",
            outside(message),
            outcome
                .record
                .legs
                .iter()
                .rev()
                .take_while(|n| matches!(n.end_reason, Some(EndReason::ApiError { .. })))
                .count()
        ),
        RunEnd::Crashed { code, signal } => {
            let how = match (signal, code) {
                (Some(s), _) => format!("was killed by signal {s}"),
                (None, Some(c)) => format!("exited with status {c} and no handoff"),
                (None, None) => "crashed".to_string(),
            };
            errln!(
                "baton run: {host} {how} {} times in a row; not restarting it again. The handoff{handoff} stays; {again}.",
                faults::MAX_CRASH_RESTARTS + 1
            )
        }
        RunEnd::Futile { filled_by } => {
            let note = outcome.record.leg(last);
            let at = note.and_then(|n| n.peak_used_pct).map(|p| format!(" (at {p} %)")).unwrap_or_default();
            // Past CRITICAL from the first reply (measured), or nothing done (all else).
            let legs = match note.and_then(|n| n.first_used_pct) {
                Some(first) => {
                    format!("were past CRITICAL from their first request ({first} % full at the start)")
                }
                None => format!("completed nothing and paused at CRITICAL again{at}"),
            };
            errln!(
                "baton run: {} legs in a row {legs}: the context is nearly full from its first request. What fills it at the start: {}. Make that smaller (or use a model with a larger window), then {again}.",
                faults::MAX_FUTILE_IN_A_ROW,
                filled_by.as_deref().unwrap_or("not measured")
            )
        }
        RunEnd::Other => {}
    }
    ExitStatus::Code(outcome.exit_code())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_users_write_them() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("20m"), Ok(Duration::from_secs(1200)));
        assert_eq!(parse_duration("6h"), Ok(Duration::from_secs(21_600)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert!(parse_duration("soon").is_err() && parse_duration("5d").is_err());
    }
}
