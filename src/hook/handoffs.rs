//! The handoffs the hook writes: the CRITICAL one (checkpointed as the monitor decided),
//! its rewrites when the pause stops the agent or the host sends the session's messages,
//! and the push of each to its GitHub issue.

use std::path::Path;

use super::call::Call;
use crate::config::Config;
use crate::gitx::Mode;
use crate::handoff::{self, Trigger};
use crate::monitor::{self, CheckpointWords, HandoffWords, SavedHandoff};
use crate::{metrics, run_record, session_state};

/// Writes the automatic handoff for a CRITICAL warning, checkpointed as the monitor
/// decided ([`monitor::Warning::step`]), and says what became of it.
pub(super) fn critical_handoff(call: &Call, warning: &monitor::Warning, mode: Mode) -> HandoffWords {
    let (Some(session), Some(cwd)) = (call.session(), call.cwd.clone()) else {
        return HandoffWords::NotAttempted;
    };
    let request = handoff::Request {
        trigger: Trigger::CriticalContext,
        session_id: session.to_string(),
        cwd,
        transcript_path: call.transcript_path(session),
        transcript_format: call.transcript_format(),
        facts: None,
        figure: Some(warning.figure.clone()),
        checkpoint: mode,
        dir: call.config.handoff_dir(),
        now: chrono::Utc::now(),
    };
    match handoff::write(&request) {
        Ok(outcome) => {
            session_state::mark_critical_recorded(session);
            push_to_github(&call.config, &outcome);
            let saved = saved_handoff(&outcome);
            // Under `baton run` the leg is paused while this handoff is pending, whoever
            // stops the agent (baton's pause, or the agent ending its turn as asked).
            if let Some((run_id, leg)) = &call.env.run {
                run_record::note_handoff(
                    run_id,
                    *leg,
                    &run_record::WrittenHandoff {
                        session: session.to_string(),
                        json: saved.json.clone(),
                        project: outcome.root.clone(),
                        checkpoint: checkpoint_words(&saved.checkpoint),
                    },
                );
                let used = warning.figure.used_pct();
                let tokens = warning.figure.used_tokens;
                run_record::note(run_id, *leg, |note| {
                    note.peak_used_pct = Some(note.peak_used_pct.map_or(used, |p| p.max(used)));
                    if note.critical_tokens.is_none() && tokens.is_some() {
                        note.critical_tokens = tokens;
                        note.critical_used_pct = Some(used);
                    }
                });
            }
            HandoffWords::Saved(saved)
        }
        Err(why) => HandoffWords::Failed(why.to_string()),
    }
}

/// A checkpoint as the run's record names it: the ref, or the branch and commit.
fn checkpoint_words(checkpoint: &CheckpointWords) -> Option<String> {
    match checkpoint {
        CheckpointWords::Ref { reference, .. } => Some(reference.clone()),
        CheckpointWords::Branch { branch, short } => Some(format!("{branch} ({short})")),
        CheckpointWords::Note(_) | CheckpointWords::None => None,
    }
}

/// The handoff written, as the monitor's message names it: paths relative to the root.
fn saved_handoff(outcome: &handoff::Outcome) -> SavedHandoff {
    // Relative paths with `/` (on Windows too: the agent writes to them, GSD reads them).
    let rel = |p: &Path| match p.strip_prefix(&outcome.root) {
        Ok(relative) => crate::util::text::slash_path(relative),
        Err(_) => p.display().to_string(),
    };
    let text = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
    let checkpoint = match &outcome.checkpoint {
        Some(c) if c.used == Mode::Branch => {
            CheckpointWords::Branch { branch: text(&c.branch), short: text(&c.short) }
        }
        Some(c) => CheckpointWords::Ref { reference: text(&c.reference), short: text(&c.short) },
        None => outcome.checkpoint_note.clone().map(CheckpointWords::Note).unwrap_or(CheckpointWords::None),
    };
    SavedHandoff {
        json: rel(&outcome.json_path),
        markdown: rel(&outcome.markdown_path),
        checkpoint,
        private: outcome.private.clone(),
    }
}

/// Rewrites the session's CRITICAL handoff when the pause stops the agent, so it holds
/// what the grace calls did (the commands they ran, the todos they ticked off); its
/// checkpoint as configured. Silent on failure: the stop goes out regardless.
pub(super) fn refresh_handoff_at_stop(call: &Call, session: &str, figure: Option<metrics::Figure>) {
    rewrite_critical_handoff(call, session, figure, None);
}

/// Rewrites the session's CRITICAL handoff, its facts read from the transcript or, when
/// given, as the host sent them; its checkpoint as configured. Silent on failure.
pub(super) fn rewrite_critical_handoff(
    call: &Call,
    session: &str,
    figure: Option<metrics::Figure>,
    facts: Option<crate::transcript::SessionFacts>,
) {
    let Some(cwd) = call.cwd.clone().filter(|_| call.config.handoff_auto()) else { return };
    let checkpoint = match call.config.auto_checkpoint() {
        Mode::Branch => Mode::Off,
        mode => mode,
    };
    let request = handoff::Request {
        trigger: Trigger::CriticalContext,
        session_id: session.to_string(),
        cwd,
        transcript_path: call.transcript_path(session),
        transcript_format: call.transcript_format(),
        facts,
        figure,
        checkpoint,
        dir: call.config.handoff_dir(),
        now: chrono::Utc::now(),
    };
    if let Ok(outcome) = handoff::write(&request) {
        push_to_github(&call.config, &outcome);
    }
}

/// With `checkpoint.github.auto`, pushes the new handoff to its GitHub issue in a
/// detached process, so the hook returns at once; failures land in the handoff.
/// Not when the handoff went to baton's private folder: the push reads the project's
/// HANDOFF.json, and in a folder another user can reach that file may be anyone's.
pub(super) fn push_to_github(config: &Config, outcome: &handoff::Outcome) {
    if config.checkpoint_github_auto() && outcome.private.is_none() {
        let _ = crate::checkpoint_github::spawn_auto_push(&outcome.root);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runs_record_names_the_checkpoint_by_its_ref_or_branch() {
        let reference =
            CheckpointWords::Ref { reference: "refs/baton/wip/s".into(), short: "abc1234".into() };
        assert_eq!(checkpoint_words(&reference).as_deref(), Some("refs/baton/wip/s"));
        let branch = CheckpointWords::Branch { branch: "main".into(), short: "abc1234".into() };
        assert_eq!(checkpoint_words(&branch).as_deref(), Some("main (abc1234)"));
        assert_eq!(checkpoint_words(&CheckpointWords::Note("none: not a repository".into())), None);
        assert_eq!(checkpoint_words(&CheckpointWords::None), None);
    }
}
