//! What the relay does after a leg that did not simply pause or finish (pure): why the
//! leg ended ([`classify`], from what the runner read after it), what comes next
//! ([`decide`]: another leg, after a wait or not, or the end of the run), the backoff
//! after API errors ([`backoff`]) and the exit status of a run ([`exit_code`]).
//!
//! The facts come from the edges ([`super::host_faults`] reads the host's own signal of a
//! usage limit or an API error; the runner measures what a leg changed); nothing here
//! reads a file or the clock.

use std::time::Duration;

use crate::run_record::{EndReason, Progress, RunEnd, WaitReason};

/// The most restarts after crashes in a row (the third crash in a row ends the run).
pub const MAX_CRASH_RESTARTS: u32 = 2;
/// The most futile legs in a row (the second ends the run).
pub const MAX_FUTILE_IN_A_ROW: u32 = 2;
/// The most usage-limit waits in a row: a limit still there after its reset, twice.
pub const MAX_LIMIT_WAITS_IN_A_ROW: u32 = 3;
/// The first backoff after an API error; it doubles with each retry in a row.
pub const BACKOFF_BASE: Duration = Duration::from_secs(2);
/// The longest backoff.
pub const BACKOFF_MAX: Duration = Duration::from_secs(300);
/// The default `--wait-limit`: the longest wait for a usage limit's reset.
pub const DEFAULT_WAIT_LIMIT: Duration = Duration::from_secs(6 * 3600);
/// Waited past a stated reset: the hosts state it to the second, or floored to the minute.
pub const AFTER_RESET: Duration = Duration::from_secs(2);

/// The exit statuses of `baton run` (besides 0, done, and the host's own).
pub mod exit {
    /// The last leg's handoff is pending: `--max-legs` reached, or an interactive host that
    /// exited paused.
    pub const PAUSED: u8 = 3;
    /// A usage limit whose reset is further than `--wait-limit` (or not stated).
    pub const LIMIT_NOT_WAITED: u8 = 4;
    /// API errors in `--retries` + 1 legs in a row.
    pub const RETRIES_SPENT: u8 = 5;
    /// The host crashed again after [`super::MAX_CRASH_RESTARTS`] restarts in a row.
    pub const CRASHED: u8 = 6;
    /// Legs in a row that completed nothing and paused at CRITICAL again.
    pub const FUTILE: u8 = 7;
}

/// The host's own signal of why it stopped, read from its transcript, rollout or stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostFault {
    UsageLimit {
        resets_at_ms: Option<u64>,
        message: String,
    },
    ApiError {
        message: String,
        status: Option<u16>,
    },
    /// The host records that its turn was interrupted (Ctrl-C, SIGINT to the host alone),
    /// whatever its exit status: Claude Code exits 0 on it, Codex 1.
    Interrupted,
}

/// What the runner saw of a leg, for [`classify`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LegFacts {
    /// A handoff of the leg's own is pending.
    pub paused: bool,
    /// The host's exit status (128 + N for signal N).
    pub code: i32,
    /// `baton run` got this signal (Ctrl-C, SIGTERM) during the leg.
    pub interrupted_by: Option<i32>,
    /// The relay itself ended the leg after baton's stop (a host that goes on after it).
    pub ended_by_relay: bool,
    pub fault: Option<HostFault>,
    pub peak_used_pct: Option<u32>,
    pub progress: Option<Progress>,
    /// How full the leg's first reply was ([`start_of_leg`]), when measured.
    pub start: Option<StartOfLeg>,
}

/// How full a leg's context was at its first reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartOfLeg {
    /// The first reply's context, used %.
    pub used_pct: u32,
    /// The first reply was already at (or past) the figure of the leg's CRITICAL handoff:
    /// the leg was past CRITICAL from its first request, whatever it then did.
    pub past_critical: bool,
}

/// The leg's first reply (`first_tokens`, from its transcript) against the figure its
/// CRITICAL handoff was written at (`critical_tokens`, `critical_pct`, from the hook).
/// The hooks measure in %, the transcript in tokens: the first reply's % is scaled from
/// the CRITICAL figure's.
pub fn start_of_leg(first_tokens: u64, critical_tokens: u64, critical_pct: u32) -> Option<StartOfLeg> {
    if critical_tokens == 0 || first_tokens == 0 {
        return None;
    }
    let scaled = u128::from(first_tokens) * u128::from(critical_pct) / u128::from(critical_tokens);
    Some(StartOfLeg {
        used_pct: u32::try_from(scaled).unwrap_or(u32::MAX),
        past_critical: first_tokens >= critical_tokens,
    })
}

/// Why a leg ended. The user's interruption first (whatever the host made of it: Claude
/// Code exits 0 on Ctrl-C), then the host's own fault signal, then the pause (futile when
/// the leg completed nothing, or was past CRITICAL from its first request: a fresh leg
/// starts as full, so the relay gains nothing by another), then the exit status.
pub fn classify(facts: &LegFacts) -> EndReason {
    if let Some(signal) = facts.interrupted_by {
        return EndReason::Interrupted { signal };
    }
    match &facts.fault {
        // Someone interrupted the host itself (not the relay ending a leg after baton's
        // stop, which interrupts Codex too): the task is not done, the user wants it
        // stopped.
        Some(HostFault::Interrupted) if !facts.ended_by_relay => {
            return EndReason::Interrupted { signal: crate::platform::SIGINT };
        }
        Some(HostFault::UsageLimit { resets_at_ms, message }) => {
            return EndReason::UsageLimit { resets_at_ms: *resets_at_ms, message: message.clone() };
        }
        Some(HostFault::ApiError { message, status }) if !facts.paused || facts.code != 0 => {
            return EndReason::ApiError { message: message.clone(), status: *status };
        }
        _ => {}
    }
    if facts.paused {
        let nothing = facts
            .progress
            .as_ref()
            .is_some_and(|p| p.commits == 0 && p.files_changed == 0 && p.steps_done.unwrap_or(0) == 0);
        let full_from_the_start = facts.start.is_some_and(|start| start.past_critical);
        if nothing || full_from_the_start {
            return EndReason::Futile {
                used_pct: facts.peak_used_pct,
                first_used_pct: facts.start.map(|start| start.used_pct),
                filled_by: None,
            };
        }
        return EndReason::Paused { used_pct: facts.peak_used_pct };
    }
    match facts.code {
        0 => EndReason::Done,
        // The relay's own signal after baton's stop, with no handoff pending: the host
        // went its way; read as a crash so the work is carried on from facts.
        code if code > 128 => EndReason::Crashed { code: None, signal: Some(code - 128) },
        code => EndReason::Crashed { code: Some(code), signal: None },
    }
}

/// The run's bounds, from the flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// `--max-legs`: the most legs started after a pause (context hand-overs), counting the
    /// first.
    pub max_legs: u32,
    /// `--retries`: the most fresh legs after API errors in a row.
    pub retries: u32,
    /// `--wait-limit`: the longest wait for a usage limit's reset (zero: none).
    pub wait_limit: Duration,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy { max_legs: 5, retries: 3, wait_limit: DEFAULT_WAIT_LIMIT }
    }
}

/// The faults in a row so far, and the context legs (for `--max-legs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Streaks {
    pub crashes: u32,
    pub api_errors: u32,
    pub futile: u32,
    pub limits: u32,
    /// Legs that ended paused (or futile), the hand-overs `--max-legs` bounds.
    pub paused_legs: u32,
}

/// A wait before the next leg, as planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedWait {
    /// Unix ms.
    pub until_ms: u64,
    pub why: WaitReason,
}

/// What comes after a leg.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Another leg, after `wait` when there is one. `handoff_from_facts`: the leg left no
    /// handoff of its own, so the runner writes one from its transcript first.
    Next { wait: Option<PlannedWait>, handoff_from_facts: bool },
    /// The run ends so.
    End(RunEnd),
}

/// The backoff before retry `attempt` (1 the first) after an API error: [`BACKOFF_BASE`]
/// doubled per retry in a row, at most [`BACKOFF_MAX`].
pub fn backoff(attempt: u32) -> Duration {
    let factor = 1u32.checked_shl(attempt.saturating_sub(1).min(16)).unwrap_or(u32::MAX);
    BACKOFF_BASE.saturating_mul(factor).min(BACKOFF_MAX)
}

/// What comes after a leg that ended for `reason` (the streaks updated), at `now_ms`.
pub fn decide(reason: &EndReason, streaks: &mut Streaks, policy: &Policy, now_ms: u64) -> Decision {
    let fault_free = |streaks: &mut Streaks| {
        streaks.crashes = 0;
        streaks.api_errors = 0;
        streaks.limits = 0;
    };
    match reason {
        EndReason::Done => Decision::End(RunEnd::Done),
        EndReason::Interrupted { signal } => Decision::End(RunEnd::Interrupted { signal: *signal }),
        EndReason::Paused { .. } => {
            fault_free(streaks);
            streaks.futile = 0;
            streaks.paused_legs += 1;
            if streaks.paused_legs >= policy.max_legs.max(1) {
                return Decision::End(RunEnd::MaxLegs);
            }
            Decision::Next { wait: None, handoff_from_facts: false }
        }
        EndReason::Futile { filled_by, .. } => {
            fault_free(streaks);
            streaks.futile += 1;
            streaks.paused_legs += 1;
            if streaks.futile >= MAX_FUTILE_IN_A_ROW {
                return Decision::End(RunEnd::Futile { filled_by: filled_by.clone() });
            }
            if streaks.paused_legs >= policy.max_legs.max(1) {
                return Decision::End(RunEnd::MaxLegs);
            }
            Decision::Next { wait: None, handoff_from_facts: false }
        }
        EndReason::Crashed { code, signal } => {
            streaks.crashes += 1;
            if streaks.crashes > MAX_CRASH_RESTARTS {
                return Decision::End(RunEnd::Crashed { code: *code, signal: *signal });
            }
            Decision::Next { wait: None, handoff_from_facts: true }
        }
        EndReason::ApiError { message, .. } => {
            streaks.api_errors += 1;
            if streaks.api_errors > policy.retries {
                return Decision::End(RunEnd::RetriesSpent { message: message.clone() });
            }
            let attempt = streaks.api_errors;
            let pause = u64::try_from(backoff(attempt).as_millis()).unwrap_or(u64::MAX);
            Decision::Next {
                wait: Some(PlannedWait {
                    until_ms: now_ms.saturating_add(pause),
                    why: WaitReason::Backoff { attempt, after: message.clone() },
                }),
                handoff_from_facts: true,
            }
        }
        EndReason::UsageLimit { resets_at_ms, .. } => {
            streaks.limits += 1;
            let limit_ms = u64::try_from(policy.wait_limit.as_millis()).unwrap_or(u64::MAX);
            let after = u64::try_from(AFTER_RESET.as_millis()).unwrap_or(0);
            let wait_ms = resets_at_ms.map(|reset| reset.saturating_sub(now_ms).saturating_add(after));
            match wait_ms {
                Some(wait)
                    if limit_ms > 0 && wait <= limit_ms && streaks.limits <= MAX_LIMIT_WAITS_IN_A_ROW =>
                {
                    Decision::Next {
                        wait: Some(PlannedWait {
                            until_ms: now_ms.saturating_add(wait),
                            why: WaitReason::UsageLimit { until_ms: *resets_at_ms },
                        }),
                        handoff_from_facts: true,
                    }
                }
                _ => Decision::End(RunEnd::LimitNotWaited { resets_at_ms: *resets_at_ms }),
            }
        }
        EndReason::Other => Decision::End(RunEnd::Other),
    }
}

/// The exit status of a run that ended so, the last leg's status `last_code` (the
/// host's own when it ended done).
pub fn exit_code(end: &RunEnd, last_code: i32) -> u8 {
    match end {
        // Headless, a leg is done only on exit 0; the interactive host's own status.
        RunEnd::Done => u8::try_from(last_code).unwrap_or(1),
        RunEnd::MaxLegs | RunEnd::LeftPaused => exit::PAUSED,
        RunEnd::Interrupted { signal } => u8::try_from(128 + signal).unwrap_or(130),
        RunEnd::LimitNotWaited { .. } => exit::LIMIT_NOT_WAITED,
        RunEnd::RetriesSpent { .. } => exit::RETRIES_SPENT,
        RunEnd::Crashed { .. } => exit::CRASHED,
        RunEnd::Futile { .. } => exit::FUTILE,
        RunEnd::Other => u8::try_from(last_code).ok().filter(|c| *c != 0).unwrap_or(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(code: i32) -> LegFacts {
        LegFacts { code, ..LegFacts::default() }
    }

    #[test]
    fn an_interruption_wins_over_the_hosts_exit_0() {
        let f = LegFacts { interrupted_by: Some(2), paused: true, ..facts(0) };
        assert_eq!(classify(&f), EndReason::Interrupted { signal: 2 });
    }

    #[test]
    fn the_hosts_fault_signal_names_the_end() {
        let limit = HostFault::UsageLimit { resets_at_ms: Some(9_000), message: "limit".into() };
        let f = LegFacts { fault: Some(limit), ..facts(1) };
        assert!(matches!(classify(&f), EndReason::UsageLimit { resets_at_ms: Some(9_000), .. }));
        let error = HostFault::ApiError { message: "529".into(), status: Some(529) };
        let f = LegFacts { fault: Some(error.clone()), ..facts(1) };
        assert!(matches!(classify(&f), EndReason::ApiError { status: Some(529), .. }));
        // An error the host rode out on a leg that then paused and exited 0 is a pause.
        let f = LegFacts { fault: Some(error), paused: true, ..facts(0) };
        assert!(matches!(classify(&f), EndReason::Paused { .. }));
    }

    #[test]
    fn the_host_interrupted_alone_is_an_interruption_not_a_done_leg() {
        // `kill -INT <claude pid>`: claude -p exits 0, its transcript says it was interrupted.
        let f = LegFacts { fault: Some(HostFault::Interrupted), ..facts(0) };
        assert_eq!(classify(&f), EndReason::Interrupted { signal: 2 });
        // Codex exits 1 on it.
        let f = LegFacts { fault: Some(HostFault::Interrupted), ..facts(1) };
        assert_eq!(classify(&f), EndReason::Interrupted { signal: 2 });
        assert_eq!(exit_code(&RunEnd::Interrupted { signal: 2 }, 0), 130);
        // The relay's own SIGINT after baton's stop (Codex goes on after it) is the pause.
        let f =
            LegFacts { fault: Some(HostFault::Interrupted), ended_by_relay: true, paused: true, ..facts(1) };
        assert!(matches!(classify(&f), EndReason::Paused { .. }));
    }

    #[test]
    fn a_pause_that_completed_nothing_is_futile() {
        let nothing = Some(Progress::default());
        let f = LegFacts { paused: true, progress: nothing, peak_used_pct: Some(93), ..facts(0) };
        assert!(matches!(classify(&f), EndReason::Futile { used_pct: Some(93), .. }));
        let some = Some(Progress { files_changed: 1, ..Progress::default() });
        let f = LegFacts { paused: true, progress: some, ..facts(0) };
        assert!(matches!(classify(&f), EndReason::Paused { .. }));
        let f = LegFacts { paused: true, progress: None, ..facts(0) };
        assert!(matches!(classify(&f), EndReason::Paused { .. }), "not measured is not nothing");
    }

    #[test]
    fn a_leg_past_critical_from_its_first_reply_is_futile_whatever_it_did() {
        // Codex and Gemini CLI: the agent's first call is a step, CRITICAL comes after it.
        let one_step = Some(Progress { files_changed: 1, steps_done: Some(1), ..Progress::default() });
        let start = start_of_leg(165_000, 165_000, 82);
        assert_eq!(start, Some(StartOfLeg { used_pct: 82, past_critical: true }));
        let f =
            LegFacts { paused: true, progress: one_step.clone(), start, peak_used_pct: Some(83), ..facts(0) };
        assert_eq!(
            classify(&f),
            EndReason::Futile { used_pct: Some(83), first_used_pct: Some(82), filled_by: None }
        );
        // A leg that started with room and worked up to CRITICAL is a plain pause.
        let start = start_of_leg(110_000, 145_000, 76);
        assert_eq!(start, Some(StartOfLeg { used_pct: 57, past_critical: false }));
        let f = LegFacts { paused: true, progress: one_step, start, ..facts(0) };
        assert!(matches!(classify(&f), EndReason::Paused { .. }));
        assert_eq!(start_of_leg(0, 145_000, 76), None, "no figure in the transcript");
        assert_eq!(start_of_leg(1, 0, 76), None);
    }

    #[test]
    fn exit_statuses_without_a_pause() {
        assert_eq!(classify(&facts(0)), EndReason::Done);
        assert_eq!(classify(&facts(137)), EndReason::Crashed { code: None, signal: Some(9) });
        assert_eq!(classify(&facts(1)), EndReason::Crashed { code: Some(1), signal: None });
    }

    #[test]
    fn crashes_restart_twice_in_a_row_then_end() {
        let crash = EndReason::Crashed { code: None, signal: Some(9) };
        let policy = Policy::default();
        let mut streaks = Streaks::default();
        for _ in 0..MAX_CRASH_RESTARTS {
            assert_eq!(
                decide(&crash, &mut streaks, &policy, 0),
                Decision::Next { wait: None, handoff_from_facts: true }
            );
        }
        assert!(matches!(decide(&crash, &mut streaks, &policy, 0), Decision::End(RunEnd::Crashed { .. })));
        // A leg that paused in between starts the count again.
        let mut streaks = Streaks::default();
        decide(&crash, &mut streaks, &policy, 0);
        decide(&crash, &mut streaks, &policy, 0);
        decide(&EndReason::Paused { used_pct: Some(80) }, &mut streaks, &policy, 0);
        assert!(matches!(decide(&crash, &mut streaks, &policy, 0), Decision::Next { .. }));
    }

    #[test]
    fn api_errors_back_off_exponentially_within_the_retries() {
        let error = EndReason::ApiError { message: "API Error: 529 Overloaded".into(), status: Some(529) };
        let policy = Policy { retries: 3, ..Policy::default() };
        let mut streaks = Streaks::default();
        let mut waits = vec![];
        for _ in 0..3 {
            match decide(&error, &mut streaks, &policy, 1_000) {
                Decision::Next { wait: Some(wait), handoff_from_facts: true } => {
                    waits.push(wait.until_ms - 1_000)
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(waits, [2_000, 4_000, 8_000]);
        assert_eq!(
            decide(&error, &mut streaks, &policy, 1_000),
            Decision::End(RunEnd::RetriesSpent { message: "API Error: 529 Overloaded".into() })
        );
        let none = Policy { retries: 0, ..Policy::default() };
        assert!(matches!(decide(&error, &mut Streaks::default(), &none, 0), Decision::End(_)));
        assert_eq!(backoff(40), BACKOFF_MAX);
    }

    #[test]
    fn a_usage_limit_is_waited_for_up_to_the_wait_limit() {
        let reset = |at| EndReason::UsageLimit { resets_at_ms: at, message: "limit".into() };
        let policy = Policy { wait_limit: Duration::from_secs(60), ..Policy::default() };
        match decide(&reset(Some(31_000)), &mut Streaks::default(), &policy, 1_000) {
            Decision::Next { wait: Some(wait), handoff_from_facts: true } => {
                assert_eq!(wait.until_ms, 31_000 + 2_000, "past the reset");
                assert_eq!(wait.why, WaitReason::UsageLimit { until_ms: Some(31_000) });
            }
            other => panic!("{other:?}"),
        }
        let far = decide(&reset(Some(120_000)), &mut Streaks::default(), &policy, 1_000);
        assert_eq!(far, Decision::End(RunEnd::LimitNotWaited { resets_at_ms: Some(120_000) }));
        let unknown = decide(&reset(None), &mut Streaks::default(), &policy, 1_000);
        assert!(matches!(unknown, Decision::End(RunEnd::LimitNotWaited { resets_at_ms: None })));
        let never = Policy { wait_limit: Duration::ZERO, ..policy };
        assert!(matches!(
            decide(&reset(Some(2_000)), &mut Streaks::default(), &never, 1_000),
            Decision::End(_)
        ));
        // A limit still there after its reset, again and again: the run ends.
        let mut streaks = Streaks::default();
        for _ in 0..MAX_LIMIT_WAITS_IN_A_ROW {
            assert!(matches!(
                decide(&reset(Some(2_000)), &mut streaks, &policy, 1_000),
                Decision::Next { .. }
            ));
        }
        assert!(matches!(decide(&reset(Some(2_000)), &mut streaks, &policy, 1_000), Decision::End(_)));
    }

    #[test]
    fn futile_legs_end_the_run_at_the_second_in_a_row() {
        let futile = EndReason::Futile { used_pct: Some(95), first_used_pct: Some(95), filled_by: None };
        let policy = Policy::default();
        let mut streaks = Streaks::default();
        assert!(matches!(decide(&futile, &mut streaks, &policy, 0), Decision::Next { .. }));
        assert!(matches!(decide(&futile, &mut streaks, &policy, 0), Decision::End(RunEnd::Futile { .. })));
    }

    #[test]
    fn max_legs_counts_the_pauses() {
        let paused = EndReason::Paused { used_pct: Some(80) };
        let policy = Policy { max_legs: 2, ..Policy::default() };
        let mut streaks = Streaks::default();
        assert!(matches!(decide(&paused, &mut streaks, &policy, 0), Decision::Next { .. }));
        // A crash between does not count against --max-legs.
        let crash = EndReason::Crashed { code: Some(1), signal: None };
        assert!(matches!(decide(&crash, &mut streaks, &policy, 0), Decision::Next { .. }));
        assert_eq!(decide(&paused, &mut streaks, &policy, 0), Decision::End(RunEnd::MaxLegs));
    }

    #[test]
    fn each_end_has_its_exit_status() {
        assert_eq!(exit_code(&RunEnd::Done, 0), 0);
        assert_eq!(exit_code(&RunEnd::Interrupted { signal: 2 }, 0), 130);
        assert_eq!(exit_code(&RunEnd::Interrupted { signal: 15 }, 1), 143);
        assert_eq!(exit_code(&RunEnd::MaxLegs, 0), exit::PAUSED);
        assert_eq!(exit_code(&RunEnd::RetriesSpent { message: String::new() }, 1), exit::RETRIES_SPENT);
        assert_eq!(exit_code(&RunEnd::Futile { filled_by: None }, 0), exit::FUTILE);
        assert_eq!(exit_code(&RunEnd::Other, 0), 1, "never 0 for an end this build does not know");
    }
}
