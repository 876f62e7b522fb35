//! The monitor step, at every event that can carry context: after a tool call
//! (PostToolUse, AfterTool) and the batch of one reply (PostToolBatch), at a turn's start
//! (UserPromptSubmit, BeforeAgent) and at a Stop that takes context (Claude Code's). The
//! monitor decides; this carries out its step (the CRITICAL handoff) and the pause
//! ([`super::agent_stop`]), and words the envelope with the user's notice beside it.

use super::agent_stop::{self, PauseOutcome};
use super::call::Call;
use super::compaction::audit_note;
use super::handoffs::critical_handoff;
use crate::handoff::audit::Point;
use crate::host::Envelope;
use crate::monitor::{self, Cadence, HandoffWords, Step};
use crate::{metrics, run_record};

/// After a tool call: the warning, and the compaction audit's note waiting for it.
pub(super) fn after_tool_call(call: &Call) -> Option<Envelope> {
    let note = audit_note(call, Point::ToolUse { turn_id: call.input.turn_id.as_deref() });
    let mut said = monitor_step(call, Cadence::ToolCall);
    if let Some(stop) = said.stop.take() {
        return Some(stop);
    }
    let text = with_note(said.text.take(), note)?;
    Some(said.envelope(call, text))
}

/// After the tool calls of one reply.
pub(super) fn after_batch(call: &Call) -> Option<Envelope> {
    let mut said = monitor_step(call, Cadence::Batch);
    if let Some(stop) = said.stop.take() {
        return Some(stop);
    }
    let text = said.text.take()?;
    Some(said.envelope(call, text))
}

/// A turn starts: the refusals of the last turn are lifted, then the warning and the
/// audit's note.
pub(super) fn turn_start(call: &Call) -> Option<Envelope> {
    // A host may fire it again within the turn (Qwen Code, on every tool-result
    // continuation): the same turn, whose refusals stay.
    if call.host.host().starts_turn(call.input) {
        agent_stop::lift_refusals(call);
    }
    let note = audit_note(call, Point::UserPrompt);
    let mut said = monitor_step(call, Cadence::TurnStart);
    if let Some(stop) = said.stop.take() {
        return Some(stop);
    }
    let text = with_note(said.text.take(), note)?;
    Some(said.envelope(call, text))
}

/// A Stop that takes context (Claude Code's): answered at most once per level.
pub(super) fn stop(call: &Call) -> Option<Envelope> {
    let mut said = monitor_step(call, Cadence::Stop);
    // Under `baton run`: idle at the prompt, the interactive relay's cue.
    if let Some((run_id, leg)) = &call.env.run {
        run_record::note_idle(run_id, *leg);
    }
    let text = said.text.take()?;
    Some(said.envelope(call, text))
}

/// What the monitor said at one event: the words for the agent and the line for the
/// user, or the host's stop.
#[derive(Default)]
struct Said {
    text: Option<String>,
    notice: Option<Notice>,
    stop: Option<Envelope>,
    /// baton has just written the CRITICAL handoff on a host whose session baton cannot
    /// read (OpenCode, Kilo CLI): its plugin is asked for the messages ([`agent_stop::handoff_facts`]).
    ask_messages: bool,
}

/// The line the user is shown beside a warning ([`monitor::Warning::notice`]).
struct Notice {
    line: String,
    /// At CRITICAL, also a desktop notification where asked for and possible.
    desktop: bool,
}

impl Said {
    /// The envelope for `text` (the warning, with anything riding along), with the notice.
    fn envelope(self, call: &Call, text: String) -> Envelope {
        let mut envelope = call.envelope(&text);
        if let Some(notice) = self.notice {
            if notice.desktop {
                envelope = envelope.with_terminal_sequence(monitor::desktop_notification(&notice.line));
            }
            envelope = envelope.with_system_message(notice.line);
        }
        if self.ask_messages { envelope.asking_for_messages() } else { envelope }
    }
}

/// Runs the monitor for an event that can carry context, carries out its step (the
/// CRITICAL handoff) and the pause ([`agent_stop::pause`]), and returns what the agent is told.
fn monitor_step(call: &Call, cadence: Cadence) -> Said {
    let Some(context) = call.context_ref(cadence) else { return Said::default() };
    let warning = monitor::check(&context, &call.config, metrics::now_unix());
    let mut saved = None;
    let mut notice = None;
    let text = warning.as_ref().map(|warning| {
        let handoff = match warning.step(call.config.handoff_auto(), call.config.auto_checkpoint()) {
            Step::Warn => HandoffWords::NotAttempted,
            Step::HoldBack => HandoffWords::HeldBack,
            Step::Handoff(mode) => critical_handoff(call, warning, mode),
        };
        if let HandoffWords::Saved(words) = &handoff {
            saved = Some(words.clone());
        }
        // The user hears of the session's own context, not of each subagent's.
        notice = warning.notice(&handoff).filter(|_| call.notices() && context.agent.is_none()).map(|line| {
            let desktop = warning.level == metrics::Level::Critical
                && call.config.desktop_notices()
                && call.host.emits_terminal_sequence();
            Notice { line, desktop }
        });
        warning.text(&handoff)
    });
    // The pause is the session's: a subagent's calls neither arm it nor use its grace
    // calls. Tool calls count grace calls; another cadence can only arm it.
    // Only the session's own CRITICAL handoff is written (never a subagent's).
    let asks_messages = call.host.sends_messages() && call.config.handoff_auto();
    let ask_messages = asks_messages && saved.is_some();
    let Some(session) = call.session().filter(|_| call.input.agent_id.is_none()) else {
        return Said { text, notice, stop: None, ask_messages };
    };
    if cadence != Cadence::ToolCall && saved.is_none() {
        return Said { text, notice, stop: None, ask_messages };
    }
    let outcome = agent_stop::pause(call, session, cadence, warning.as_ref(), saved.as_ref());
    with_pause(Said { text, notice, stop: None, ask_messages }, outcome, call.notices(), asks_messages)
}

/// What is said once the pause did what it did (pure): its stop alone (asking the plugin
/// for the messages again, where it is asked for them: the stop rewrote the handoff), its
/// words after the warning, or the words of the last grace call with the reason for the
/// user (`notices`: the host shows baton's notices).
fn with_pause(mut said: Said, outcome: PauseOutcome, notices: bool, asks_messages: bool) -> Said {
    match outcome {
        PauseOutcome::Stop(reason) => {
            let stop = Envelope::stop(&reason);
            let stop = if asks_messages { stop.asking_for_messages() } else { stop };
            return Said { stop: Some(stop), ..Said::default() };
        }
        PauseOutcome::Armed(words) => {
            if let Some(text) = said.text.as_mut() {
                text.push_str(&words);
            }
        }
        PauseOutcome::Paused { words, reason } => {
            said.text = Some(match said.text {
                Some(text) => format!("{text}\n\n{words}"),
                None => words,
            });
            if notices {
                said.notice = Some(Notice { line: reason, desktop: false });
            }
        }
        PauseOutcome::None => {}
    }
    said
}

/// The warning and the audit's note in one context: the warning first.
fn with_note(warning: Option<String>, note: Option<String>) -> Option<String> {
    match (warning, note) {
        (Some(warning), Some(note)) => Some(format!("{warning}\n\n{note}")),
        (warning, note) => warning.or(note),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::hook::HookEnv;
    use crate::host::{HookInput, HostKind};

    fn said(text: Option<&str>) -> Said {
        Said { text: text.map(str::to_string), ..Said::default() }
    }

    #[test]
    fn the_warning_comes_before_the_audits_note() {
        let (w, n) = (Some("warning".to_string()), Some("note".to_string()));
        assert_eq!(with_note(w.clone(), n.clone()).as_deref(), Some("warning\n\nnote"));
        assert_eq!(with_note(w, None).as_deref(), Some("warning"));
        assert_eq!(with_note(None, n).as_deref(), Some("note"));
        assert_eq!(with_note(None, None), None);
    }

    #[test]
    fn the_pauses_stop_replaces_everything_else() {
        let stopped = with_pause(said(Some("warning")), PauseOutcome::Stop("why".into()), true, false);
        assert!(stopped.text.is_none() && stopped.notice.is_none());
        assert_eq!(stopped.stop.unwrap().to_json(), Envelope::stop("why").to_json());
        let asking = with_pause(said(None), PauseOutcome::Stop("why".into()), true, true);
        assert!(asking.stop.unwrap().to_json().contains("send_messages"), "the plugin is asked again");
    }

    #[test]
    fn the_pauses_words_follow_the_warning() {
        let armed =
            with_pause(said(Some("CRITICAL.")), PauseOutcome::Armed(" End your turn.".into()), true, false);
        assert_eq!(armed.text.as_deref(), Some("CRITICAL. End your turn."));
        let paused = PauseOutcome::Paused { words: "last call".into(), reason: "paused".into() };
        let with_text = with_pause(said(Some("CRITICAL.")), paused, true, false);
        assert_eq!(with_text.text.as_deref(), Some("CRITICAL.\n\nlast call"));
        assert_eq!(with_text.notice.map(|n| n.line).as_deref(), Some("paused"));
        let paused = PauseOutcome::Paused { words: "last call".into(), reason: "paused".into() };
        let alone = with_pause(said(None), paused, false, false);
        assert_eq!(alone.text.as_deref(), Some("last call"));
        assert!(alone.notice.is_none(), "the host shows no notice");
        assert_eq!(with_pause(said(Some("w")), PauseOutcome::None, true, false).text.as_deref(), Some("w"));
    }

    #[test]
    fn the_envelope_carries_the_notice_the_desktop_line_and_the_plugins_ask() {
        let input: HookInput = serde_json::from_str(r#"{"hook_event_name": "PostToolUse"}"#).unwrap();
        let env = HookEnv::default();
        let call = Call::for_test(&input, &env, HostKind::Claude, Config::defaults());
        let said = Said {
            notice: Some(Notice { line: "baton: context 80 %".into(), desktop: true }),
            ask_messages: true,
            ..Said::default()
        };
        let json = said.envelope(&call, "CRITICAL".into()).to_json();
        assert!(json.contains("\"systemMessage\":\"baton: context 80 %\""), "{json}");
        assert!(json.contains("terminalSequence"), "{json}");
        assert!(json.contains("send_messages"), "{json}");
        assert!(json.contains("\"hookEventName\":\"PostToolUse\""), "{json}");
    }

    #[test]
    fn a_call_without_a_session_says_nothing() {
        let input: HookInput =
            serde_json::from_str(r#"{"hook_event_name": "PostToolUse", "session_id": "../x"}"#).unwrap();
        let env = HookEnv::default();
        let call = Call::for_test(&input, &env, HostKind::Claude, Config::defaults());
        assert!(after_tool_call(&call).is_none());
        assert!(after_batch(&call).is_none());
        assert!(stop(&call).is_none());
    }
}
