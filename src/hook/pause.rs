//! The pause that pauses (`handoff.on_critical` = `pause` or `relay`): after the CRITICAL
//! handoff the agent is told, once, to finish its step and end its turn; if it is still
//! making tool calls after `handoff.pause_grace_calls` more, baton stops it through the
//! host's own means ([`PauseStop`], read from each host's code) and says why and what to
//! do next:
//! - Claude Code: `continue: false` at the last grace call's PostToolUse ends the turn;
//! - Gemini CLI 0.61.0: `continue: false` at an AfterTool would put the stop in place of
//!   the call's output (the next context would not know the call ran), so the agent is
//!   told at the last grace call and the stop goes out at the next call's BeforeTool,
//!   which ends the turn before that call runs;
//! - Codex 0.171.0: no hook output ends a turn (a PostToolUse `continue: false` only
//!   replaces the call's output; a PreToolUse one is rejected), so every further call of
//!   the turn is refused at PreToolUse with the reason, and the agent can only end it;
//! - Factory Droid 0.225.2: as Claude Code (its PostToolUse `continue: false` ends the run);
//! - Qwen Code 0.15.10 and Copilot CLI 1.0.102: as Codex (Qwen Code makes a `continue:
//!   false` the call's error result, Copilot CLI ignores it at PostToolUse; both honour a
//!   PreToolUse deny).
//!
//! Under `baton run` a host whose agent goes on is ended by the relay. Elsewhere the
//! pause acts as `advise` ([`can_stop`]).
//!
//! [`decide`] is the whole rule, a pure function over the pause's part of the session
//! state; [`refuse`] and [`turn_started`] the refusal's; [`may_pause`] is the one place
//! that says which figures may carry a pause; [`armed_words`], [`paused_words`],
//! [`stop_reason`] and [`refusal_reason`] word what the agent and the user are told.

use crate::config::keys::OnCritical;
use crate::host::PauseStop;
use crate::metrics::Figure;
use crate::session_state::PauseState;

/// What this tool call does about the pause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PauseStep {
    /// Nothing (advise mode, no pause armed, or the pause already stopped the agent once).
    Nothing,
    /// The CRITICAL handoff was just written: tell the agent, once, to end its turn.
    Arm,
    /// A grace call: the agent may go on.
    Grace,
    /// Out of grace calls: stop the agent through the host.
    Stop,
}

/// What the hook knows about this tool call, as far as the pause needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PauseCall {
    pub mode: OnCritical,
    pub grace_calls: u32,
    /// The CRITICAL handoff was written on this call.
    pub handoff_saved_now: bool,
    /// The figure may carry a pause ([`may_pause`]).
    pub may_pause: bool,
    /// How the host is stopped.
    pub stop: PauseStop,
    pub now: i64,
}

/// Whether the pause can stop the agent (pure): the host has a way ([`PauseStop`]), or the
/// session runs under `baton run`, which ends a leg whose host goes on.
pub fn can_stop(stop: PauseStop, under_baton_run: bool) -> bool {
    stop != PauseStop::None || under_baton_run
}

/// Whether the stop goes out at the next call rather than at the last grace call (pure).
pub fn stops_before_the_next_call(stop: PauseStop) -> bool {
    matches!(stop, PauseStop::BeforeTheNextCall | PauseStop::RefuseTheNextCalls)
}

/// The rule (pure). The pause is armed by a CRITICAL handoff on a figure that may carry
/// it; each later tool call uses one grace call; the call that uses the last one stops
/// the agent (so it makes at most `grace_calls` calls after the CRITICAL one). The agent
/// is stopped once: if the user goes on in the same context, baton does not stop it again.
pub fn decide(state: PauseState, call: &PauseCall) -> (PauseState, PauseStep) {
    if call.mode == OnCritical::Advise || state.paused_at.is_some() {
        return (state, PauseStep::Nothing);
    }
    let stop = |mut s: PauseState| {
        s.paused_at = Some(call.now);
        s.refusals = stops_before_the_next_call(call.stop).then_some(0);
        (s, PauseStep::Stop)
    };
    match state.armed_at {
        None if call.handoff_saved_now && call.may_pause => {
            let armed =
                PauseState { armed_at: Some(call.now), grace_calls_used: 0, paused_at: None, refusals: None };
            if call.grace_calls == 0 { stop(armed) } else { (armed, PauseStep::Arm) }
        }
        None => (state, PauseStep::Nothing),
        Some(_) => {
            let next = PauseState { grace_calls_used: state.grace_calls_used.saturating_add(1), ..state };
            if next.grace_calls_used >= call.grace_calls { stop(next) } else { (next, PauseStep::Grace) }
        }
    }
}

/// A tool call is about to run (pure): refused while the turn the agent was stopped in
/// goes on. Returns the state to store and, when this call is refused, how many were
/// refused before it (0: the first, when the handoff is written again).
pub fn refuse(state: PauseState) -> (PauseState, Option<u32>) {
    match state.refusals {
        Some(n) => (PauseState { refusals: Some(n.saturating_add(1)), ..state }, Some(n)),
        None => (state, None),
    }
}

/// A new turn starts (the user's prompt): calls are no longer refused, and the agent is
/// not stopped again in this context (pure).
pub fn turn_started(state: PauseState) -> PauseState {
    PauseState { refusals: None, ..state }
}

/// Whether a figure may carry a pause or a relay: only on a window that is a fact about
/// the session's model (the status line, now or remembered, the host's record or the
/// user's `models.<id>.window`), never one that is assumed or only from baton's table
/// (issue 19, DESIGN.md). The one place that says so.
pub fn may_pause(figure: &Figure, critical_action_allowed: bool) -> bool {
    critical_action_allowed && figure.window_source.is_fact()
}

/// Whether a relay may follow the pause in this process: only under `baton run` (the
/// runner says so in the environment it gives the host).
pub fn under_baton_run(leg: Option<u32>) -> bool {
    leg.is_some()
}

/// The sentence added, once, to the CRITICAL message when the pause is armed.
pub fn armed_words(grace_calls: u32, mode: OnCritical, under_run: bool) -> String {
    let after = match (mode, under_run) {
        (OnCritical::Relay, false) => {
            " (`relay` is set, but this session does not run under `baton run`: baton pauses it instead.)"
        }
        (_, true) => " `baton run` then continues the work in a fresh context, from the handoff.",
        _ => "",
    };
    format!(
        " baton is pausing this session to protect the work: please finish the step you are in, do not start a new one, and end your turn now. If tool calls go on, baton stops the session after {grace_calls} more.{after}"
    )
}

/// What the agent is told at its last grace call on a host stopped before its next call.
pub fn paused_words(stop: PauseStop) -> String {
    let next = match stop {
        PauseStop::RefuseTheNextCalls => "baton refuses every further tool call in this turn",
        _ => "baton stops the session at the next tool call",
    };
    format!(
        "baton has paused this session (critical context; the handoff is saved): that was the last tool call. End your turn now; {next}."
    )
}

/// Why a tool call is refused (Codex's `permissionDecisionReason`: the agent reads it, and
/// `codex exec` prints it, where it prints no hook's `systemMessage`): the call did not
/// run, the agent is to end its turn, then the stop's words for the user ([`stop_reason`]).
pub fn refusal_reason(stop_reason: &str) -> String {
    format!("baton refused this call: it did not run. Do not retry it: end your turn now. {stop_reason}")
}

/// What the user is shown when baton stops the agent (the host's `stopReason`).
pub fn stop_reason(used_pct: Option<u32>, handoff: Option<&str>, under_run: bool) -> String {
    let used = used_pct.map(|p| format!("context {p} % — ")).unwrap_or_default();
    let saved = handoff.map(|h| format!("handoff saved in {h}")).unwrap_or_else(|| "handoff saved".into());
    if under_run {
        format!("baton: {used}paused; {saved}; `baton run` continues in a fresh context.")
    } else {
        format!(
            "baton: {used}paused; {saved}. `/clear` and say \"continue\" to pick it up, or run the session under `baton run`."
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::WindowSource;

    #[test]
    fn a_stop_is_promised_only_where_it_ends_the_agent() {
        assert!(can_stop(PauseStop::AtTheCall, false), "the host ends its turn");
        assert!(can_stop(PauseStop::RefuseTheNextCalls, false), "the host refuses the calls");
        assert!(can_stop(PauseStop::None, true), "baton run ends the leg");
        assert!(!can_stop(PauseStop::None, false), "nothing would end it: advise");
    }

    fn call(mode: OnCritical, saved: bool) -> PauseCall {
        PauseCall {
            mode,
            grace_calls: 3,
            handoff_saved_now: saved,
            may_pause: true,
            stop: PauseStop::AtTheCall,
            now: 100,
        }
    }

    fn steps(mode: OnCritical, saved_on: &[bool]) -> Vec<PauseStep> {
        let mut state = PauseState::default();
        saved_on
            .iter()
            .map(|saved| {
                let (next, step) = decide(state, &call(mode, *saved));
                state = next;
                step
            })
            .collect()
    }

    #[test]
    fn armed_by_the_critical_handoff_then_stopped_on_the_last_grace_call() {
        use PauseStep::*;
        let got = steps(OnCritical::Pause, &[false, true, false, false, false, false]);
        assert_eq!(got, vec![Nothing, Arm, Grace, Grace, Stop, Nothing]);
        assert_eq!(steps(OnCritical::Relay, &[true, true, true, true]), vec![Arm, Grace, Grace, Stop]);
    }

    #[test]
    fn advise_never_pauses_and_no_grace_stops_at_once() {
        assert!(
            steps(OnCritical::Advise, &[true, true, true, true]).iter().all(|s| *s == PauseStep::Nothing)
        );
        let none = PauseCall { grace_calls: 0, ..call(OnCritical::Pause, true) };
        let (state, step) = decide(PauseState::default(), &none);
        assert_eq!(step, PauseStep::Stop);
        assert_eq!(state.paused_at, Some(100));
    }

    #[test]
    fn a_host_stopped_before_its_next_call_refuses_the_calls_of_that_turn_only() {
        let refusing = PauseCall { stop: PauseStop::RefuseTheNextCalls, ..call(OnCritical::Pause, true) };
        let mut state = PauseState::default();
        for _ in 0..4 {
            state = decide(state, &refusing).0;
        }
        assert_eq!((state.paused_at, state.refusals), (Some(100), Some(0)));
        let (state, first) = refuse(state);
        let (state, second) = refuse(state);
        assert_eq!((first, second), (Some(0), Some(1)), "every call refused, the first known");
        let state = turn_started(state);
        assert_eq!(refuse(state).1, None, "the user's next turn runs");
        assert_eq!(decide(state, &refusing).1, PauseStep::Nothing, "and is not stopped again");
        let at_the_call = steps(OnCritical::Pause, &[true, false, false, false]);
        assert_eq!(at_the_call.last(), Some(&PauseStep::Stop));
        assert_eq!(refuse(PauseState { paused_at: Some(1), ..PauseState::default() }).1, None);
    }

    #[test]
    fn a_figure_that_may_not_carry_it_never_arms() {
        let no = PauseCall { may_pause: false, ..call(OnCritical::Pause, true) };
        assert_eq!(decide(PauseState::default(), &no).1, PauseStep::Nothing);
        let mut figure = Figure { window_source: WindowSource::Default, ..Figure::default() };
        assert!(!may_pause(&figure, true));
        figure.window_source = WindowSource::Proven;
        assert!(!may_pause(&figure, true));
        figure.window_source = WindowSource::Table;
        assert!(!may_pause(&figure, true), "a table's window is not a fact");
        figure.window_source = WindowSource::Config;
        assert!(may_pause(&figure, true));
        figure.window_source = WindowSource::Statusline;
        assert!(may_pause(&figure, true));
        assert!(!may_pause(&figure, false));
    }

    #[test]
    fn the_user_is_told_why_and_what_next() {
        let text = stop_reason(Some(78), Some(".planning/HANDOFF.json"), false);
        assert!(text.contains("78 %") && text.contains(".planning/HANDOFF.json"), "{text}");
        assert!(text.contains("/clear") && text.contains("baton run"), "{text}");
        assert!(armed_words(3, OnCritical::Relay, false).contains("pauses it instead"));
        let refused = refusal_reason(&text);
        assert!(
            refused.contains("did not run")
                && refused.contains("end your turn")
                && refused.contains("/clear")
        );
    }
}
