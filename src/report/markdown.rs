//! The session report of `baton pause --report`: what was done, files changed, what is
//! still open, and the session's **exact** token use read from the transcript (each
//! message counted once by its id), where GSD's report can only estimate.
//!
//! Written to `.planning/reports/SESSION_REPORT.md`, or a dated
//! `YYYYMMDD-session-report.md` when that file already exists.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::fsx;
use crate::handoff::Outcome;
use crate::handoff::doc::{HandoffDoc, TaskEntry};
use crate::transcript::{self, SessionUsage, Usage};
use crate::util::text::thousands;

fn usage_row(name: &str, usage: &Usage, replies: u64) -> String {
    format!(
        "| {name} | {} | {} | {} | {} | {} | {} |\n",
        replies,
        thousands(usage.input),
        thousands(usage.cache_creation),
        thousands(usage.cache_read),
        thousands(usage.output),
        thousands(usage.input + usage.cache_creation + usage.cache_read + usage.output)
    )
}

fn one_line(text: &str) -> String {
    crate::handoff::model::one_line(text, 300)
}

/// Renders the report from the handoff (one source of truth) and the usage.
pub fn render(handoff: &HandoffDoc, usage: Option<&SessionUsage>, generated_at: &str) -> String {
    let baton = handoff.baton();
    let mut out = String::from("# Session Report\n\n");
    let _ = writeln!(out, "- Generated: {generated_at} by baton");
    if let Some(session) = baton.session_id() {
        let _ = writeln!(out, "- Session: `{}`", one_line(session));
    }
    if let Some(model) = baton.model() {
        let _ = writeln!(out, "- Model: {}", one_line(model));
    }
    if let Some(branch) = baton.branch() {
        let _ =
            writeln!(out, "- Branch: `{}` at {}", one_line(branch), one_line(baton.head().unwrap_or("?")));
    }

    out.push_str("\n## What was done\n\n");
    let done: Vec<TaskEntry> =
        handoff.completed_tasks().into_iter().filter(|t| t.status.text() == Some("done")).collect();
    let commits = baton.session_commits();
    if done.is_empty() && commits.is_empty() {
        out.push_str("Nothing recorded as done (no completed todos, no commits this session).\n");
    }
    for task in &done {
        let commit = task.commit.text().map(|c| format!(" ({})", one_line(c))).unwrap_or_default();
        let _ = writeln!(out, "- {}{commit}", one_line(task.name()));
    }
    if !commits.is_empty() {
        out.push_str("\nCommits this session:\n\n");
        for (short, subject) in &commits {
            let _ = writeln!(out, "- {} {}", one_line(short), one_line(subject));
        }
    }

    out.push_str("\n## Files changed\n\n");
    let touched = baton.files_touched();
    let uncommitted = handoff.uncommitted_files();
    if touched.is_empty() && uncommitted.is_empty() {
        out.push_str("None recorded.\n");
    }
    for path in &touched {
        let state = if uncommitted.contains(path) { " (uncommitted)" } else { "" };
        let _ = writeln!(out, "- `{}`{state}", one_line(path));
    }
    for file in uncommitted.iter().filter(|u| !touched.contains(u)) {
        let _ = writeln!(out, "- `{}` (uncommitted, not touched by the agent)", one_line(file));
    }

    out.push_str("\n## Blockers and open items\n\n");
    let in_progress = |t: &TaskEntry| t.status.text() == Some("in_progress");
    let open: Vec<TaskEntry> =
        handoff.completed_tasks().into_iter().filter(in_progress).chain(handoff.remaining_tasks()).collect();
    let blockers = handoff.blockers();
    let human = handoff.human_actions();
    if open.is_empty() && blockers.is_empty() && human.is_empty() {
        out.push_str("None recorded.\n");
    }
    for task in &open {
        let state = if in_progress(task) { "in progress" } else { "not started" };
        let _ = writeln!(out, "- {} ({state})", one_line(task.name()));
    }
    for blocker in &blockers {
        let _ = writeln!(out, "- Blocker: {}", one_line(blocker.description()));
    }
    for action in &human {
        let _ = writeln!(out, "- Human action: {}", one_line(action.action()));
    }
    if let Some(next) = handoff.next_action() {
        let _ = writeln!(out, "\nNext action: {}", crate::handoff::model::one_line(next, 600));
    }

    out.push_str("\n## Token use (exact, from the transcript)\n\n");
    match usage {
        None => out.push_str("No transcript was available: token use unknown.\n"),
        Some(usage) => {
            out.push_str("Each reply is counted once by its message id (streamed lines share an id).\n\n");
            out.push_str("| model | replies | input | cache creation | cache read | output | total |\n");
            out.push_str("|---|---:|---:|---:|---:|---:|---:|\n");
            for model in &usage.models {
                out.push_str(&usage_row(&model.model, &model.main, model.main_replies));
                if model.sidechain_replies > 0 {
                    out.push_str(&usage_row(
                        &format!("{} (subagents)", model.model),
                        &model.sidechain,
                        model.sidechain_replies,
                    ));
                }
            }
            let main_replies: u64 = usage.models.iter().map(|m| m.main_replies).sum();
            out.push_str(&usage_row("**all, main chain**", &usage.main, main_replies));
            let total_in = usage.main.input + usage.main.cache_creation + usage.main.cache_read;
            if total_in > 0 {
                let _ = writeln!(
                    out,
                    "\nCache reads were {:.1}% of input tokens.",
                    usage.main.cache_read as f64 * 100.0 / total_in as f64
                );
            }
            if !usage.compactions.is_empty() {
                let _ = writeln!(out, "\nCompactions: {}", usage.compactions.len());
                for c in &usage.compactions {
                    let _ = writeln!(
                        out,
                        "- {} {} → {} tokens",
                        c.trigger.as_deref().unwrap_or("?"),
                        c.pre_tokens.map(thousands).unwrap_or_else(|| "?".into()),
                        c.post_tokens.map(thousands).unwrap_or_else(|| "?".into())
                    );
                }
            }
        }
    }
    out
}

/// Why the session report was not written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("the handoff just written cannot be read back")]
    HandoffUnreadable,
    #[error("cannot create {}: {source}", path.display())]
    CreateDir { path: PathBuf, source: std::io::Error },
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

/// Writes the report beside the handoff and returns its path.
pub fn write(outcome: &Outcome, transcript: Option<&Path>, dir: &Path) -> Result<PathBuf, ReportError> {
    // Beside the handoff: in the project, or in baton's private folder with it.
    let handoff = HandoffDoc::read(&outcome.files_root, dir)
        .and_then(Result::ok)
        .ok_or(ReportError::HandoffUnreadable)?;
    let usage = transcript.and_then(|t| transcript::session_usage(t).ok());
    let now = chrono::Utc::now();
    let text = render(&handoff, usage.as_ref(), &now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
    let folder = outcome.files_root.join(dir).join("reports");
    fsx::ensure_dir(&folder, false)
        .map_err(|source| ReportError::CreateDir { path: folder.clone(), source })?;
    let plain = folder.join("SESSION_REPORT.md");
    let path = if plain.exists() {
        folder.join(format!("{}-session-report.md", now.format("%Y%m%d")))
    } else {
        plain
    };
    match fsx::write_atomic(&path, text.as_bytes(), fsx::WriteOptions::USER) {
        Ok(()) => Ok(path),
        Err(source) => Err(ReportError::Write { path, source }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(144_012), "144,012");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn report_has_exact_usage_from_the_fixture() {
        let usage = transcript::usage_from_bytes(include_bytes!("../../tests/fixtures/transcript.jsonl"));
        let handoff = HandoffDoc::from_object(
            serde_json::json!({"completed_tasks": [], "remaining_tasks": [], "baton": {"session_id": "s"}})
                .as_object()
                .cloned()
                .unwrap(),
            Path::new("/"),
        );
        let text = render(&handoff, Some(&usage), "now");
        assert!(text.contains("| claude-opus-4-5-20251101 |"), "{text}");
        assert!(text.contains("Compactions: 1"), "{text}");
        assert!(text.contains("167,400 → 41,800"), "{text}");
    }
}
