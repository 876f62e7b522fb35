//! `baton hook`: one hook event in, at most one envelope out.
//!
//! Dispatches on the event:
//! - PostToolUse (Claude Code's PostToolUseFailure, Gemini's AfterTool), PostToolBatch,
//!   the turn's start (UserPromptSubmit, Gemini's BeforeAgent) and Claude Code's Stop run
//!   the context monitor, one debounce across them; when a CRITICAL warning fires it
//!   writes the handoff first, so the message can name it (never on an assumed window,
//!   never for a subagent). A context is a session or one of its subagents;
//! - SubagentStop forgets the subagent's context;
//! - SessionStart injects the resume brief of a paused, trusted handoff (after a
//!   compaction: what the summary tends to lose, from the PreCompact snapshot);
//! - PreCompact (Gemini: PreCompress) refreshes the handoff, restarts the debounce and
//!   marks older figures as history; it prints nothing (the host accepts no context).
//!   Gemini CLI fires PreCompress before every model call: only one at or past its
//!   compression point counts;
//!   On Claude Code an automatic compaction whose snapshot could not be written is held
//!   once (`{"decision":"block"}`, `handoff::audit::decide_hold`);
//! - PostCompact audits the summary against the snapshot (`handoff::audit`); what it dropped is
//!   given at the next UserPromptSubmit or PostToolUse of the session (the compact brief
//!   of Claude Code's SessionStart(compact) waits there too, replaced by the audit's note;
//!   on Codex the brief also rides the next PostToolUse of a turn a compaction fired in);
//! - SessionEnd notes that the session is over, so no resume brief calls it active;
//! - HandoffFacts (baton's own, from its OpenCode plugin, which baton asks for it when it
//!   writes a CRITICAL handoff on OpenCode or Kilo CLI) rewrites that handoff with the
//!   facts of the session's messages; it prints nothing.
//!
//! Every other event is silent. [`handle`] is the dispatcher, one line per event; each
//! concern is a file: the call resolved once (`call`: the project folder, the host, the
//! configuration), the monitor step (`tool_call`), the session's start and end
//! (`session`), compaction (`compaction`), the agent's stop (`agent_stop`, its pure rule
//! in `pause`), and the handoffs written (`handoffs`). The caller guarantees the rest of
//! the hook contract: exit 0, panics caught, stdin read under a deadline.

mod agent_stop;
mod call;
mod compaction;
mod handoffs;
mod pause;
mod session;
mod tool_call;

use crate::host::{Envelope, Event, HookInput};
use call::Call;
pub use call::HookEnv;

/// Handles one event and returns the envelope to print, if any.
pub fn handle(input: &HookInput, env: &HookEnv) -> Option<Envelope> {
    let event = input.event(env.gemini_key_set);
    if session::is_first_prompt_brief(input, env, &event) {
        return Call::enabled(input, env).and_then(|call| session::first_prompt(&call));
    }
    if matches!(event, Event::Other(_) | Event::Missing) {
        return None;
    }
    let call = Call::enabled(input, env)?;
    match event {
        Event::PostToolUse => tool_call::after_tool_call(&call),
        Event::ToolBatch => tool_call::after_batch(&call),
        Event::PreToolUse => agent_stop::before_tool_call(&call),
        Event::TurnStart => tool_call::turn_start(&call),
        Event::Stop if call.host.spec().answers_stop => tool_call::stop(&call),
        Event::Stop => agent_stop::turn_end(&call),
        Event::SubagentStop => session::subagent_stop(&call),
        Event::SessionStart => session::session_start(&call),
        Event::PreCompact => compaction::pre_compact(&call),
        Event::PostCompact => compaction::post_compact(&call),
        Event::SessionEnd => session::session_end(&call),
        Event::HandoffFacts => agent_stop::handoff_facts(&call),
        Event::Other(_) | Event::Missing => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_baton_does_not_answer_are_silent_before_anything_is_read() {
        let env = HookEnv::default();
        for json in [r#"{"hook_event_name": "Notification", "session_id": "s"}"#, r#"{"session_id": "s"}"#] {
            let input: HookInput = serde_json::from_str(json).unwrap();
            assert!(matches!(input.event(false), Event::Other(_) | Event::Missing));
            assert!(handle(&input, &env).is_none(), "{json}");
        }
    }
}
