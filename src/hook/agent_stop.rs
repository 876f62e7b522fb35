//! The agent's stop: the pause (`handoff.on_critical`, its rule in [`super::pause`])
//! carried out at each tool call, the calls refused after it on a host stopped before its
//! next call, the handoff written again when the turn ends or the host sends the
//! session's messages, and the refusals lifted by a new prompt.

use super::call::Call;
use super::handoffs::{refresh_handoff_at_stop, rewrite_critical_handoff};
use super::pause;
use crate::config::OnCritical;
use crate::host::{Envelope, PauseStop};
use crate::monitor::{self, Cadence, SavedHandoff};
use crate::session_state::WarnState;
use crate::{metrics, run_record, session_state};

/// A tool call is about to run (Codex's PreToolUse, Gemini CLI's BeforeTool): see
/// [`refuse_after_pause`].
pub(super) fn before_tool_call(call: &Call) -> Option<Envelope> {
    refuse_after_pause(call)
}

/// The turn ends without an answer the host takes (Codex's and Qwen Code's Stop, Gemini
/// CLI's AfterAgent): see [`rewrite_at_turn_end`]. Silent.
pub(super) fn turn_end(call: &Call) -> Option<Envelope> {
    rewrite_at_turn_end(call);
    None
}

/// baton's plugin sent the session's messages (`HandoffFacts`): see
/// [`rewrite_with_messages`]. Silent.
pub(super) fn handoff_facts(call: &Call) -> Option<Envelope> {
    rewrite_with_messages(call);
    None
}

/// What the pause did on this tool call.
pub(super) enum PauseOutcome {
    None,
    /// Armed: these words go after the CRITICAL message, once.
    Armed(String),
    /// Stop the agent, with this reason for the user.
    Stop(String),
    /// The agent was told its last grace call is used, and its next call is stopped or
    /// refused (a host stopped before its next call): the words for the agent, the reason
    /// for the user.
    Paused {
        words: String,
        reason: String,
    },
}

/// The pause (`handoff.on_critical`, [`pause::decide`]): reads the session's
/// state only when a pause may be armed or counting, changes it under the session's lock.
///
/// Only a tool call uses a grace call (and so only a tool call is stopped): a CRITICAL
/// handoff refreshed at another cadence (Claude Code's PostToolBatch, a turn's start) can
/// arm the pause, but once it is armed it leaves it alone. (On Claude Code 2.1.332 a
/// refreshed handoff at PostToolBatch used to take the last grace call, and the stop it
/// decided was never sent: the agent ran on into auto-compaction.)
pub(super) fn pause(
    call: &Call,
    session: &str,
    cadence: Cadence,
    warning: Option<&monitor::Warning>,
    saved: Option<&SavedHandoff>,
) -> PauseOutcome {
    let mode = call.config.on_critical();
    // A host that goes on after `continue: false` cannot be paused outside `baton run`:
    // baton only advises there, and promises no stop it cannot make.
    if mode == OnCritical::Advise || !pause::can_stop(call.host.pause_stop(), call.env.run.is_some()) {
        return PauseOutcome::None;
    }
    let may_pause = warning.is_some_and(|w| pause::may_pause(&w.figure, w.critical_action_allowed));
    let stored = || session_state::load(session);
    let counting = || stored().is_some_and(|s| s.pause_armed_at.is_some() && s.paused_at.is_none());
    let arming = saved.is_some() && may_pause;
    if cadence != Cadence::ToolCall && (!arming || stored().is_some_and(|s| s.pause_armed_at.is_some())) {
        return PauseOutcome::None;
    }
    if !arming && !counting() {
        return PauseOutcome::None;
    }
    let now = metrics::now_unix();
    let grace_calls = call.config.pause_grace_calls();
    let pause_call = pause::PauseCall {
        mode,
        grace_calls,
        handoff_saved_now: saved.is_some(),
        may_pause,
        stop: call.host.pause_stop(),
        now,
    };
    let handoff = saved.map(|s| s.json.as_str());
    let Some((step, stored_handoff)) = session_state::update_pause(
        session,
        |state| {
            let (next, step) = pause::decide(state, &pause_call);
            (next, step)
        },
        handoff.filter(|_| saved.is_some() && may_pause),
    )
    .map(|step| (step, session_state::load(session).and_then(|s| s.pause_handoff))) else {
        return PauseOutcome::None;
    };
    let under_run = pause::under_baton_run(call.env.run.as_ref().map(|(_, leg)| *leg));
    let used = warning.map(|w| w.figure.used_pct());
    call.note_in_run(session, |note| {
        if let Some(used) = used {
            note.peak_used_pct = Some(note.peak_used_pct.map_or(used, |p| p.max(used)));
        }
        note.pause_armed |= step != pause::PauseStep::Nothing;
    });
    match step {
        pause::PauseStep::Arm => PauseOutcome::Armed(pause::armed_words(grace_calls, mode, under_run)),
        pause::PauseStep::Stop => {
            let figure = warning.map(|w| w.figure.clone()).or_else(|| call.current_figure(now));
            let used = used.or_else(|| figure.as_ref().map(metrics::Figure::used_pct));
            // The grace calls did work the CRITICAL handoff does not hold: the handoff the
            // next context is briefed from is written again now, as the agent stops. On a
            // host whose session baton cannot read (OpenCode, Kilo CLI) the stop asks for
            // the messages instead ([`handoff_facts`] writes it again with them): a rewrite
            // here would only drop the facts the CRITICAL handoff got from them.
            if saved.is_none() && !call.host.sends_messages() {
                refresh_handoff_at_stop(call, session, figure);
            }
            // Only now is the stop noted for `baton run`: on a host that goes on after it
            // (Codex), the relay ends the leg as soon as it reads the note, and the host
            // then kills the hook it is running, mid-rewrite if the note came first (a
            // leg 2 that redid the grace calls, on a loaded machine).
            if let Some((run_id, leg)) = &call.env.run {
                run_record::note(run_id, *leg, |note| note.stopped = true);
            }
            // A host that goes on after the stop ignores it (Codex) or puts it in place of
            // the call's output, which the agent then takes for a failure and runs again
            // (Gemini CLI): there `baton run` ends the leg instead. This call is noted as
            // the stop in its record, the host is held here until the relay has ended it
            // (nothing more runs), and the output is left as it was.
            if !call.host.honours_stop() {
                if let Some((run_id, leg)) = &call.env.run {
                    run_record::hold_until_leg_ends(run_id, *leg);
                    return PauseOutcome::None;
                }
            }
            let reason = pause::stop_reason(used, stored_handoff.as_deref(), under_run);
            // Gemini CLI and Codex: the agent is told, and its next call is stopped or refused
            // ([`refuse_after_pause`]); this call keeps its output.
            let stop = call.host.pause_stop();
            if pause::stops_before_the_next_call(stop) {
                return PauseOutcome::Paused { words: pause::paused_words(stop), reason };
            }
            PauseOutcome::Stop(reason)
        }
        pause::PauseStep::Grace | pause::PauseStep::Nothing => PauseOutcome::None,
    }
}

/// A tool call is about to run (Codex's PreToolUse, Gemini CLI's BeforeTool): once the
/// pause has stopped the agent on a host stopped before its next call, every call of that
/// turn is stopped there (Gemini CLI: `continue: false`, the turn ends before the call
/// runs) or refused (Codex: `permissionDecision: "deny"`, the agent reads why). The first
/// one writes the handoff again, now that the last grace call's output is in the
/// transcript. Silent otherwise, after one read of the session's state.
fn refuse_after_pause(call: &Call) -> Option<Envelope> {
    let stop = call.host.pause_stop();
    if !pause::stops_before_the_next_call(stop) {
        return None;
    }
    let session = call.session()?;
    session_state::load(session)?.pause_refusals?;
    let refused_before = session_state::update_pause(session, pause::refuse, None)??;
    let figure = call.current_figure(metrics::now_unix());
    let used = figure.as_ref().map(metrics::Figure::used_pct);
    // Gemini CLI's turn ends here, and its recording holds the last grace call's output.
    // Codex's goes on to the agent's answer: its handoff is written at the turn's end, once
    // the refused calls are in the rollout as such ([`rewrite_at_turn_end`]).
    if refused_before == 0 && stop == PauseStop::BeforeTheNextCall {
        refresh_handoff_at_stop(call, session, figure);
    }
    let handoff = session_state::load(session).and_then(|s| s.pause_handoff);
    let reason = pause::stop_reason(used, handoff.as_deref(), call.env.run.is_some());
    Some(refusal(stop, reason, refused_before == 0 && call.notices()))
}

/// The answer to a call after the pause stopped the agent (pure): the host's stop where
/// it ends the turn before the call runs (Gemini CLI), else the refusal with its reason
/// for the agent, and the user's notice with the first one (`notice`).
fn refusal(stop: PauseStop, reason: String, notice: bool) -> Envelope {
    match stop {
        PauseStop::BeforeTheNextCall => Envelope::stop(&reason),
        _ => Envelope::refuse(&pause::refusal_reason(&reason), Some(reason).filter(|_| notice)),
    }
}

/// The turn ends (Codex's and Qwen Code's Stop, Gemini CLI's AfterAgent) after the pause told the agent its
/// last grace call was used: the handoff written at that call lacks the call's own output
/// (the host records it after the hook), so it is written again now; on Codex and Qwen
/// Code also after refused calls (none ran), and under `baton run` on every such host when
/// the agent ended the turn after the CRITICAL handoff, before baton stopped it. Silent,
/// after one read of the session's state.
fn rewrite_at_turn_end(call: &Call) {
    let stop = call.host.pause_stop();
    if !pause::stops_before_the_next_call(stop) {
        return;
    }
    let Some(session) = call.session() else { return };
    let Some(state) = session_state::load(session) else { return };
    if rewrites_at_turn_end(&state, call.env.run.is_some(), stop) {
        refresh_handoff_at_stop(call, session, call.current_figure(metrics::now_unix()));
    }
}

/// Whether the turn's end writes the CRITICAL handoff again (pure over the session's
/// state): after the stop (the first refused call, or every refused call's turn on a host
/// that refuses them), or under `baton run` when the agent ended its turn after the
/// CRITICAL handoff, before baton stopped it (within its grace calls, or with no pause
/// armed: it did as the warning asked), where the relay starts the next leg at once,
/// briefed from the handoff, which lacks what the calls since did (Gemini CLI records
/// the call it was written at only after the hook).
fn rewrites_at_turn_end(state: &WarnState, under_run: bool, stop: PauseStop) -> bool {
    let refusals = state.pause_refusals;
    let in_grace =
        under_run && (state.pause_armed_at.is_some() || state.critical_recorded) && state.paused_at.is_none();
    in_grace || refusals == Some(0) || (refusals.is_some() && stop == PauseStop::RefuseTheNextCalls)
}

/// The user's next prompt (a new turn): the pause no longer refuses calls.
pub(super) fn lift_refusals(call: &Call) {
    if !pause::stops_before_the_next_call(call.host.pause_stop()) {
        return;
    }
    let Some(session) = call.session() else { return };
    if session_state::load(session).is_some_and(|s| s.pause_refusals.is_some()) {
        let _ = session_state::update_pause(session, |s| (pause::turn_started(s), ()), None);
    }
}

/// baton's OpenCode plugin sent the session's messages (`HandoffFacts`), as baton asked
/// when it wrote the session's CRITICAL handoff: the handoff is written again with the
/// facts they hold (the commands run, the requests, the agent's last words), checkpointed
/// as configured. Only on OpenCode and Kilo CLI, only for the session's own context, and
/// only while that session's CRITICAL handoff is recorded and the session has not ended:
/// a forged or late event writes nothing. Prints nothing.
fn rewrite_with_messages(call: &Call) {
    if !call.host.sends_messages() || call.input.agent_id.is_some() {
        return;
    }
    let (Some(session), Some(digest)) = (call.session(), call.input.opencode_messages.as_ref()) else {
        return;
    };
    if !session_state::load(session).is_some_and(|s| s.critical_recorded && s.ended_at.is_none()) {
        return;
    }
    let facts = crate::transcript::opencode::facts_from_digest(digest, Some(session));
    rewrite_critical_handoff(call, session, call.current_figure(metrics::now_unix()), Some(facts));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::hook::HookEnv;
    use crate::host::{HookInput, HostKind};

    fn state(armed: bool, paused: bool, recorded: bool, refusals: Option<u32>) -> WarnState {
        WarnState {
            pause_armed_at: armed.then_some(10),
            paused_at: paused.then_some(20),
            critical_recorded: recorded,
            pause_refusals: refusals,
            ..WarnState::default()
        }
    }

    #[test]
    fn the_turns_end_rewrites_after_the_stop_or_when_the_agent_stopped_itself_under_baton_run() {
        let refuse = PauseStop::RefuseTheNextCalls;
        let before = PauseStop::BeforeTheNextCall;
        // Stopped, the first call refused yet to come: the last grace call's output is in.
        assert!(rewrites_at_turn_end(&state(true, true, true, Some(0)), false, before));
        // Calls refused on a host that refuses them: their turn's end writes it again.
        assert!(rewrites_at_turn_end(&state(true, true, true, Some(2)), false, refuse));
        assert!(!rewrites_at_turn_end(&state(true, true, true, Some(2)), false, before));
        // Within the grace calls: only under `baton run`, which starts the next leg now.
        assert!(rewrites_at_turn_end(&state(true, false, true, None), true, refuse));
        assert!(!rewrites_at_turn_end(&state(true, false, true, None), false, refuse));
        // The CRITICAL handoff with no pause armed (advise), under `baton run`.
        assert!(rewrites_at_turn_end(&state(false, false, true, None), true, before));
        assert!(!rewrites_at_turn_end(&state(false, false, false, None), true, before));
    }

    #[test]
    fn a_refused_call_is_the_hosts_stop_or_its_denial() {
        let stop = refusal(PauseStop::BeforeTheNextCall, "paused".into(), true).to_json();
        assert_eq!(stop, Envelope::stop("paused").to_json());
        let first = refusal(PauseStop::RefuseTheNextCalls, "paused".into(), true).to_json();
        assert!(
            first.contains("\"permissionDecision\":\"deny\"") && first.contains("systemMessage"),
            "{first}"
        );
        assert!(first.contains("baton refused this call: it did not run."), "{first}");
        let later = refusal(PauseStop::RefuseTheNextCalls, "paused".into(), false).to_json();
        assert!(!later.contains("systemMessage"), "the user is told once: {later}");
    }

    #[test]
    fn hosts_stopped_at_the_call_refuse_nothing_and_rewrite_nothing() {
        let input: HookInput =
            serde_json::from_str(r#"{"hook_event_name": "PreToolUse", "session_id": "s"}"#).unwrap();
        let env = HookEnv::default();
        for host in [HostKind::Claude, HostKind::Droid] {
            let call = Call::for_test(&input, &env, host, Config::defaults());
            assert!(before_tool_call(&call).is_none(), "{host}");
            assert!(turn_end(&call).is_none(), "{host}");
        }
    }

    #[test]
    fn only_a_host_that_sends_messages_and_only_for_the_session_rewrite_with_them() {
        let env = HookEnv::default();
        let claude: HookInput =
            serde_json::from_str(r#"{"hook_event_name": "HandoffFacts", "session_id": "s"}"#).unwrap();
        assert!(
            handoff_facts(&Call::for_test(&claude, &env, HostKind::Claude, Config::defaults())).is_none()
        );
        let subagent: HookInput = serde_json::from_str(
            r#"{"hook_event_name": "HandoffFacts", "session_id": "s", "agent_id": "a"}"#,
        )
        .unwrap();
        assert!(
            handoff_facts(&Call::for_test(&subagent, &env, HostKind::OpenCode, Config::defaults())).is_none()
        );
    }
}
