//! A session's start and end: the resume brief at SessionStart (after a compaction, when
//! the host's brief timing says), or with the first prompt on a host that drops
//! SessionStart's context (Qwen Code); the end of a session noted; a subagent's context
//! forgotten when it stops.

use super::HookEnv;
use super::agent_stop;
use super::call::Call;
use crate::handoff::audit;
use crate::host::{CompactionBrief, Envelope, Event, HookInput};
use crate::{metrics, monitor, resume, session_state};

/// The first real prompt of a session on a host that drops SessionStart's context: a new
/// turn (the pause no longer refuses calls), with the resume brief.
pub(super) fn first_prompt(call: &Call) -> Option<Envelope> {
    agent_stop::lift_refusals(call);
    if let Some(session) = call.session() {
        call.note_in_run(session, |_| {});
    }
    let start = resume::first_prompt(call.cwd.as_deref()?, call.session()?, &call.config)?;
    let text = resume::with_relay_leg(start.text, call.env.run.as_ref().map(|(_, leg)| *leg));
    Some(call.envelope(&text))
}

/// SessionStart: the resume brief of a paused, trusted handoff; after a compaction, what
/// the summary tends to lose, when the host's brief timing gives it here.
pub(super) fn session_start(call: &Call) -> Option<Envelope> {
    // Its context would be dropped, and recording the resumption would keep the brief
    // from the first prompt.
    if call.host.brief_on_first_prompt() {
        return None;
    }
    let input = call.input;
    let session = call.session()?;
    let cwd = call.cwd.as_deref()?;
    call.note_in_run(session, |_| {});
    let start = resume::session_start(cwd, session, input.source.as_deref(), &call.config)?;
    if input.source.as_deref() == Some("compact") {
        match call.host.spec().compaction_brief {
            // The audit at PostCompact says what the summary dropped; the brief waits in
            // case it never comes.
            CompactionBrief::AfterTheAudit => {
                audit::leave_brief(session, &start.text);
                return None;
            }
            // Codex 0.171.0 passes this context on with the very next request of the turn
            // that compacted (seen in `codex exec`: PreCompact, PostCompact, SessionStart,
            // then that request), so the copy PostCompact left for the turn's next
            // PostToolUse would be a second one.
            CompactionBrief::WithTheTurn => audit::brief_given_in_turn(session),
            CompactionBrief::AtSessionStart => {}
        }
    }
    let text = resume::with_relay_leg(start.text, call.env.run.as_ref().map(|(_, leg)| *leg));
    let envelope = call.envelope(&text);
    Some(match start.briefed_from.filter(|_| call.notices()) {
        Some(from) => {
            envelope.with_system_message(monitor::briefed_notice(&from.session, from.written.as_deref()))
        }
        None => envelope,
    })
}

/// SessionEnd: the session is over, so no resume brief calls it active. Silent.
pub(super) fn session_end(call: &Call) -> Option<Envelope> {
    if let Some(session) = call.session() {
        session_state::mark_ended(session, metrics::now_unix());
    }
    None
}

/// SubagentStop: the subagent's context is forgotten. Silent.
pub(super) fn subagent_stop(call: &Call) -> Option<Envelope> {
    let (Some(session), Some(agent)) = (call.session(), call.input.agent_id.as_deref()) else {
        return None;
    };
    if let Some(context) = session_state::context_id(session, Some(agent)) {
        session_state::forget(&context);
    }
    None
}

/// Whether the event carries the resume brief in place of SessionStart (pure): a host
/// that drops SessionStart's context (Qwen Code) has its first real prompt carry it.
pub(super) fn is_first_prompt_brief(input: &HookInput, env: &HookEnv, event: &Event) -> bool {
    env.host.is_some_and(|host| host.brief_on_first_prompt() && host.host().starts_turn(input))
        && matches!(event, Event::TurnStart)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::host::HostKind;

    fn input(json: &str) -> HookInput {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn the_first_real_prompt_carries_the_brief_where_sessionstart_is_dropped() {
        let qwen = HookEnv { host: Some(HostKind::Qwen), ..HookEnv::default() };
        let claude = HookEnv { host: Some(HostKind::Claude), ..HookEnv::default() };
        let prompt = input(r#"{"hook_event_name": "UserPromptSubmit", "prompt": "go on"}"#);
        let continuation = input(r#"{"hook_event_name": "UserPromptSubmit", "prompt": ""}"#);
        assert!(is_first_prompt_brief(&prompt, &qwen, &Event::TurnStart));
        assert!(!is_first_prompt_brief(&continuation, &qwen, &Event::TurnStart), "not a prompt");
        assert!(!is_first_prompt_brief(&prompt, &claude, &Event::TurnStart), "its SessionStart briefs");
        assert!(!is_first_prompt_brief(&prompt, &HookEnv::default(), &Event::TurnStart), "no host named");
        assert!(!is_first_prompt_brief(&prompt, &qwen, &Event::SessionStart));
    }

    #[test]
    fn sessionstart_is_silent_where_its_context_is_dropped() {
        let env = HookEnv::default();
        let start = input(r#"{"hook_event_name": "SessionStart", "session_id": "s", "cwd": "/nonexistent"}"#);
        assert!(session_start(&Call::for_test(&start, &env, HostKind::Qwen, Config::defaults())).is_none());
        let sessionless = input(r#"{"hook_event_name": "SessionStart", "cwd": "/nonexistent"}"#);
        assert!(
            session_start(&Call::for_test(&sessionless, &env, HostKind::Claude, Config::defaults()))
                .is_none()
        );
    }

    #[test]
    fn a_subagent_stop_without_its_agent_forgets_nothing() {
        let env = HookEnv::default();
        let stop = input(r#"{"hook_event_name": "SubagentStop", "session_id": "s"}"#);
        assert!(subagent_stop(&Call::for_test(&stop, &env, HostKind::Claude, Config::defaults())).is_none());
        let sessionless = input(r#"{"hook_event_name": "SessionEnd"}"#);
        assert!(
            session_end(&Call::for_test(&sessionless, &env, HostKind::Claude, Config::defaults())).is_none()
        );
    }
}
