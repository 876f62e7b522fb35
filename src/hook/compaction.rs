//! Compaction: before it (PreCompact, Gemini CLI's PreCompress) the handoff is written
//! as a snapshot, the debounce restarts and older figures become history, and on Claude
//! Code an automatic compaction whose snapshot is missing is held once; after it
//! (PostCompact) the summary is audited against the snapshot, or (Codex) the compact
//! brief is left for the turn it fired in; the audit's note waits for the next context
//! point ([`audit_note`]).

use super::call::Call;
use super::handoffs::push_to_github;
use crate::gitx::Mode;
use crate::handoff::audit::{self, Point, SnapshotState};
use crate::handoff::{self, Trigger};
use crate::host::{CompactionBrief, Envelope};
use crate::{metrics, resume, session_state};

/// Before a compaction: refresh the handoff (the summary loses detail), then restart
/// the session's debounce and mark every figure up to now as history. On Claude Code a
/// compaction whose snapshot could not be written is held once ([`audit::decide_hold`]).
pub(super) fn pre_compact(call: &Call) -> Option<Envelope> {
    // A subagent's compaction is not the session's: its handoff is the parent's to write.
    if call.input.agent_id.is_some() {
        return None;
    }
    let session = call.session()?;
    let figure = call.current_figure(metrics::now_unix());
    if !is_real_compaction(call, figure.as_ref()) {
        return None;
    }
    let mut snapshot = SnapshotState::NotWanted;
    if let (Some(cwd), true) = (call.cwd.clone(), call.config.handoff_auto()) {
        let request = handoff::Request {
            trigger: Trigger::PreCompact,
            session_id: session.to_string(),
            cwd,
            transcript_path: call.transcript_path(session),
            transcript_format: call.transcript_format(),
            facts: None,
            figure: figure.clone(),
            checkpoint: Mode::Ref,
            dir: call.config.handoff_dir(),
            now: chrono::Utc::now(),
        };
        snapshot = match handoff::write(&request) {
            Ok(outcome) => {
                push_to_github(&call.config, &outcome);
                SnapshotState::Written
            }
            Err(handoff::WriteError::Busy(_)) => SnapshotState::CriticalBusy,
            Err(handoff::WriteError::Files(_)) => SnapshotState::Missing,
        };
    }
    let (used, window) = used_and_window(figure.as_ref());
    let hold = audit::decide_hold(&audit::HoldFacts {
        host: call.host,
        trigger: call.input.trigger.as_deref(),
        snapshot,
        held_before: audit::held_before(session),
        used_tokens: used,
        window_tokens: window,
    });
    if let audit::Hold::Hold(reason) = hold {
        audit::note_held(session);
        return Some(Envelope::block(&reason));
    }
    let turn = call.input.turn_id.as_deref().filter(|_| call.input.trigger.as_deref() == Some("auto"));
    audit::note_let_go(
        session,
        turn.filter(|_| call.host.spec().compaction_brief == CompactionBrief::WithTheTurn),
    );
    session_state::note_compaction(session, metrics::now_unix());
    None
}

/// The tokens in the context and the window, as far as the figure tells them (pure): its
/// tokens, else its used share of its window.
fn used_and_window(figure: Option<&metrics::Figure>) -> (Option<u64>, Option<u64>) {
    let window = figure.and_then(|f| f.window_tokens);
    let used = figure.and_then(|f| {
        f.used_tokens
            .or_else(|| window.map(|w| ((100.0 - f.remaining_pct) / 100.0 * w as f64).round() as u64))
    });
    (used, window)
}

/// Whether a PreCompact is a real compaction ([`crate::host::Host::is_real_compaction`]):
/// Gemini CLI fires PreCompress before every model call, the other hosts only when they
/// compact.
fn is_real_compaction(call: &Call, figure: Option<&metrics::Figure>) -> bool {
    call.host.host().is_real_compaction(
        call.input.trigger.as_deref(),
        figure.and_then(|f| f.used_tokens),
        figure.and_then(|f| f.window_tokens),
        call.project.as_deref(),
    )
}

/// After a compaction: see [`audit_summary`]. Silent (the host takes no context).
pub(super) fn post_compact(call: &Call) -> Option<Envelope> {
    audit_summary(call);
    None
}

/// After a compaction. Claude Code: compares its summary with the PreCompact snapshot,
/// leaves what it dropped for the next context point and records "kept N of M" (state,
/// handoff). Codex sends no summary and accepts no context: its PostCompact names the
/// turn an automatic compaction fired in, so the compact brief rides that turn.
fn audit_summary(call: &Call) {
    let Some(session) = call.session() else { return };
    if call.host.spec().compaction_brief == CompactionBrief::WithTheTurn {
        if let (Some("auto"), Some(turn)) = (call.input.trigger.as_deref(), call.input.turn_id.as_deref()) {
            audit::note_compacted_in_turn(session, turn);
            if let Some(brief) = call
                .cwd
                .as_deref()
                .and_then(|cwd| resume::session_start(cwd, session, Some("compact"), &call.config))
            {
                audit::leave_turn_brief(session, &brief.text);
            }
        }
        return;
    }
    let (Some(summary), Some(cwd)) = (call.input.compact_summary.as_deref(), call.cwd.as_deref()) else {
        return;
    };
    let root = crate::gitx::project_root(cwd);
    let dir = call.config.handoff_dir();
    let Some(snapshot) = audit::own_snapshot(&root, &dir, session) else { return };
    let result = audit::audit(&audit::snapshot_facts(&snapshot), summary);
    let record = audit::AuditRecord {
        at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        trigger: call.input.trigger.clone(),
        kept: result.kept.len(),
        total: result.total(),
        dropped: result.dropped.clone(),
    };
    let _ = audit::record_in_handoff(&root, &dir, session, &record);
    audit::record(session, record, audit::dropped_note(&result));
}

/// The compaction audit's note waiting for this context point, if any: never in a
/// subagent's context (its events carry the parent's session).
pub(super) fn audit_note(call: &Call, point: Point) -> Option<String> {
    if call.input.agent_id.is_some() {
        return None;
    }
    audit::take_pending(call.session()?, point)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::hook::HookEnv;
    use crate::host::{HookInput, HostKind};
    use crate::metrics::Figure;

    fn input(json: &str) -> HookInput {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn the_context_is_the_figures_tokens_else_its_share_of_the_window() {
        let tokens = Figure { used_tokens: Some(150_000), window_tokens: Some(200_000), ..Figure::default() };
        assert_eq!(used_and_window(Some(&tokens)), (Some(150_000), Some(200_000)));
        let share = Figure { remaining_pct: 25.0, window_tokens: Some(200_000), ..Figure::default() };
        assert_eq!(used_and_window(Some(&share)), (Some(150_000), Some(200_000)));
        let neither = Figure { remaining_pct: 25.0, ..Figure::default() };
        assert_eq!(used_and_window(Some(&neither)), (None, None));
        assert_eq!(used_and_window(None), (None, None));
    }

    #[test]
    fn only_geminis_precompress_may_not_be_a_compaction() {
        let env = HookEnv::default();
        let auto = input(r#"{"hook_event_name": "PreCompress", "trigger": "auto"}"#);
        let manual = input(r#"{"hook_event_name": "PreCompress", "trigger": "manual"}"#);
        let figure = Figure { used_tokens: Some(100_000), ..Figure::default() };
        // No window: no compression point, so only a manual one compresses.
        let gemini = Call::for_test(&auto, &env, HostKind::Gemini, Config::defaults());
        assert!(!is_real_compaction(&gemini, Some(&figure)));
        assert!(is_real_compaction(
            &Call::for_test(&manual, &env, HostKind::Gemini, Config::defaults()),
            None
        ));
        assert!(is_real_compaction(&Call::for_test(&auto, &env, HostKind::Claude, Config::defaults()), None));
    }

    #[test]
    fn a_subagents_compaction_and_a_sessionless_one_are_left_alone() {
        let env = HookEnv::default();
        let subagent = input(r#"{"hook_event_name": "PreCompact", "session_id": "s", "agent_id": "a"}"#);
        assert!(
            pre_compact(&Call::for_test(&subagent, &env, HostKind::Claude, Config::defaults())).is_none()
        );
        let sessionless = input(r#"{"hook_event_name": "PostCompact", "compact_summary": "x"}"#);
        assert!(
            post_compact(&Call::for_test(&sessionless, &env, HostKind::Claude, Config::defaults())).is_none()
        );
        assert!(
            audit_note(
                &Call::for_test(&subagent, &env, HostKind::Claude, Config::defaults()),
                Point::UserPrompt
            )
            .is_none()
        );
    }
}
