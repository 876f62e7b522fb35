//! `baton pause`, the manual handoff: the handoff written by hand, the `/gsd:pause-work`
//! way (a `wip:` commit on the branch by default), with a confirmation like GSD's and,
//! with `--report`, a session report with the session's exact token use. (The pause that
//! stops an agent at critical context is the hook's, `hook::pause`.)

use std::path::{Path, PathBuf};

use chrono::Utc;
use serde_json::json;

use crate::config::Config;
use crate::fsx;
use crate::gitx::Mode;
use crate::handoff::{self, Outcome, Trigger};
use crate::host::HostKind;
use crate::metrics::{self, Figure};
use crate::report::markdown as session_report;
use crate::util::text::{outside, outside_path};

/// What `baton pause` was asked.
#[derive(Debug, Clone)]
pub struct Options {
    pub checkpoint: Option<Mode>,
    pub report: bool,
    pub cwd: PathBuf,
    pub session: Option<String>,
    pub transcript: Option<PathBuf>,
}

/// What `baton pause` did.
#[derive(Debug, Clone)]
pub struct ManualHandoff {
    pub outcome: Outcome,
    pub session_id: String,
    pub transcript: Option<PathBuf>,
    pub figure: Option<Figure>,
    pub report: Option<PathBuf>,
}

/// Why `baton pause` wrote nothing (or no report).
#[derive(Debug, thiserror::Error)]
pub enum ManualHandoffError {
    #[error("{}: {source}", outside_path(path))]
    Folder { path: PathBuf, source: std::io::Error },
    #[error("invalid session id {0:?}: it must not contain `/`, `\\` or `..`")]
    SessionId(String),
    #[error(transparent)]
    Handoff(#[from] handoff::WriteError),
    #[error(transparent)]
    Report(#[from] session_report::ReportError),
}

/// Writes the handoff by hand.
pub fn run(options: &Options, config: &Config) -> Result<ManualHandoff, ManualHandoffError> {
    let cwd = crate::platform::canonicalize(&options.cwd)
        .map_err(|source| ManualHandoffError::Folder { path: options.cwd.clone(), source })?;
    let root = crate::gitx::project_dir(&cwd);
    let transcript = match &options.transcript {
        Some(path) => Some(path.clone()),
        None => HostKind::DEFAULT.host().newest_transcript(&root, &cwd),
    };
    let session_id = options
        .session
        .clone()
        .or_else(|| {
            transcript
                .as_ref()
                .and_then(|t| t.file_stem())
                .map(|s| s.to_string_lossy().into_owned())
                .filter(|s| fsx::valid_session_id(s))
        })
        .unwrap_or_else(|| format!("manual-{}", Utc::now().format("%Y%m%dT%H%M%SZ")));
    if !fsx::valid_session_id(&session_id) {
        return Err(ManualHandoffError::SessionId(session_id));
    }
    // A bridge from the last ten minutes, else the transcript: the monitor's own rule.
    let session = crate::monitor::SessionRef::known(HostKind::DEFAULT, &session_id, transcript.as_deref());
    let figure = crate::monitor::current_figure(&session, config, 600, metrics::now_unix())
        .map(|(found, _)| found.figure);
    let request = handoff::Request {
        trigger: Trigger::Manual,
        session_id: session_id.clone(),
        cwd,
        transcript_path: transcript.clone(),
        // Read from the file's own shape: a path given by hand may be any host's.
        transcript_format: crate::transcript::Format::ClaudeCode,
        facts: None,
        figure: figure.clone(),
        checkpoint: checkpoint_mode(options, config, &root),
        dir: config.handoff_dir(),
        now: Utc::now(),
    };
    let outcome = handoff::write(&request)?;
    let report = if options.report {
        Some(session_report::write(&outcome, transcript.as_deref(), &config.handoff_dir())?)
    } else {
        None
    };
    Ok(ManualHandoff { outcome, session_id, transcript, figure, report })
}

/// The checkpoint asked for (`--checkpoint`, else `handoff.pause_checkpoint` when set);
/// left at its default, GSD's `wip:` commit on the branch only in a GSD project. Without
/// GSD nobody asked for commits on their branch: the side ref saves the same and moves
/// nothing, and the confirmation says so.
fn checkpoint_mode(options: &Options, config: &Config, root: &Path) -> Mode {
    if let Some(asked) = options.checkpoint {
        return asked;
    }
    if config.is_set("handoff.pause_checkpoint") || crate::planning::detect(root).gsd {
        return config.pause_checkpoint();
    }
    Mode::Ref
}

/// A path under the project (its folders' names are the repository's), for display.
fn relative(path: &Path, root: &Path) -> String {
    outside_path(path.strip_prefix(root).unwrap_or(path)).to_string()
}

/// The checkpoint in words.
pub fn describe_checkpoint(outcome: &Outcome) -> String {
    match &outcome.checkpoint {
        Some(c) if c.used == Mode::Branch => format!(
            "wip commit {} on {}",
            c.short.as_deref().unwrap_or("?"),
            outside(c.branch.as_deref().unwrap_or("the branch"))
        ),
        Some(c) => {
            let reference = outside(c.reference.as_deref().unwrap_or("?"));
            let fallback = c
                .fallback_reason
                .as_deref()
                .map(|r| format!(" (not on the branch: {})", outside(r)))
                .unwrap_or_default();
            format!(
                "{} at {reference}{fallback}; inspect with `git diff HEAD {reference}`",
                c.short.as_deref().unwrap_or("?")
            )
        }
        None => outcome
            .checkpoint_note
            .as_deref()
            .map(|note| outside(note).to_string())
            .unwrap_or_else(|| "none (checkpoint off)".into()),
    }
}

/// The confirmation for people, GSD's layout.
pub fn confirmation(paused: &ManualHandoff) -> String {
    let outcome = &paused.outcome;
    let summary = &outcome.summary;
    let root = &outcome.root;
    let task = match (summary.task, summary.total_tasks) {
        (Some(x), Some(y)) => format!("{x} of {y}"),
        (None, Some(y)) => format!("? of {y}"),
        _ => "unknown".into(),
    };
    let mut text = format!(
        "✓ Handoff created:\n  - {} (structured, machine-readable)\n  - {} (human-readable)\n",
        relative(&outcome.json_path, root),
        relative(&outcome.markdown_path, root)
    );
    if let Some(report) = &paused.report {
        text.push_str(&format!("  - {} (session report)\n", relative(report, root)));
    }
    for words in &outcome.recovered {
        text.push_str(&format!("  ({})\n", outside(words)));
    }
    if let Some(why) = &outcome.private {
        text.push_str(&format!("  (in baton's private folder, not the project: {why})\n"));
    }
    for archived in &outcome.archived {
        text.push_str(&format!("  (the previous handoff was archived to {})\n", relative(archived, root)));
    }
    if let Some(moved) = &outcome.displaced {
        text.push_str(&format!(
            "  (another session's pending handoff was moved, not archived: it waits at {})\n",
            relative(moved, root)
        ));
    }
    if outcome.pending {
        text.push_str(
            "  (HANDOFF.json holds another session's pending handoff, so this one waits beside it)\n",
        );
    }
    for problem in &outcome.problems {
        text.push_str(&format!("  (in the previous HANDOFF.json: {})\n", outside(problem)));
    }
    text.push_str(&format!(
        "\nCurrent state:\n\n- Context: {}\n- Location: {}\n- Task: {task}\n- Status: {}\n- Blockers: {} ({} need human action)\n- Checkpoint: {}\n- Next: {}\n",
        summary.context_word(),
        outside(&summary.location),
        outside(&summary.status),
        summary.blockers,
        summary.human_actions,
        describe_checkpoint(outcome),
        outside(&summary.next_action),
    ));
    let on_side_ref =
        outcome.checkpoint.as_ref().is_some_and(|c| c.used == Mode::Ref && c.fallback_reason.is_none());
    if on_side_ref && !summary.gsd {
        text.push_str(
            "\n(no GSD project here: the checkpoint is a side ref and your branch is untouched; `--checkpoint branch` commits the handoff on the branch instead)\n",
        );
    }
    if paused.transcript.is_none() {
        text.push_str(
            "\n(no transcript found for this project: the handoff has no todos or session facts)\n",
        );
    }
    text.push_str("\nTo resume: start a new session here (baton injects the brief), or run `baton resume`");
    text.push_str(if summary.gsd { "; with GSD: /gsd:resume-work\n" } else { "\n" });
    text
}

/// The same for machines.
pub fn confirmation_json(paused: &ManualHandoff) -> serde_json::Value {
    let outcome = &paused.outcome;
    let summary = &outcome.summary;
    json!({
        "handoff": outcome.json_path,
        "continue_here": outcome.markdown_path,
        "private": outcome.private,
        "problems": outcome.problems,
        "report": paused.report,
        "archived": outcome.archived,
        "session_id": paused.session_id,
        "transcript": paused.transcript,
        "context": summary.context_word(),
        "location": summary.location,
        "task": summary.task,
        "total_tasks": summary.total_tasks,
        "status": summary.status,
        "blockers": summary.blockers,
        "human_actions": summary.human_actions,
        "next_action": summary.next_action,
        "checkpoint": outcome.checkpoint,
        "checkpoint_note": outcome.checkpoint_note,
        "figure": paused.figure.as_ref().map(|f| json!({"used_pct": f.used_pct(), "remaining_pct": f.remaining_pct, "used_tokens": f.used_tokens})),
    })
}
