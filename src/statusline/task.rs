//! The current task: the todo the agent has in progress, from a small read of the end of
//! the transcript; else the phase GSD's `.planning/STATE.md` names.

use std::path::{Path, PathBuf};

use super::layout;
use super::model::shown;
use super::{Context, Segment, Style};
use crate::planning::{self, StateFile};
use crate::transcript;

/// The longest task shown, in columns (a narrow terminal cuts it further).
pub const TASK_MAX_WIDTH: usize = 48;

pub fn segment(ctx: &Context) -> Option<Segment> {
    let task = ctx.task()?;
    Some(Segment::new(layout::cut(&shown(task), TASK_MAX_WIDTH), Style::Task))
}

/// The task for a session whose transcript is `transcript` in a project at `roots`.
pub fn current_task(transcript: Option<&Path>, roots: &[PathBuf]) -> Option<String> {
    if let Some(path) = transcript {
        if let Ok(tail) = transcript::current_todos(path, transcript::TODO_TAIL_BUDGET) {
            if let Some(task) = tail.in_progress() {
                return Some(task.to_string());
            }
        }
    }
    roots.iter().find_map(|root| {
        let bytes = crate::fsx::read_limited(&root.join(".planning").join("STATE.md"), 256 * 1024).ok()?;
        describe_state(&planning::parse_state(&String::from_utf8_lossy(&bytes)))
    })
}

/// `Phase 3/5: Rate limiting` from STATE.md's position lines.
pub fn describe_state(state: &StateFile) -> Option<String> {
    let (x, y) = state.phase?;
    Some(match &state.phase_name {
        Some(name) => format!("Phase {x}/{y}: {name}"),
        None => format!("Phase {x}/{y}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phase_from_state() {
        let state = planning::parse_state("Phase: 3 of 5 (Rate limiting)\nPlan: 2 of 2 in current phase\n");
        assert_eq!(describe_state(&state).as_deref(), Some("Phase 3/5: Rate limiting"));
        assert_eq!(describe_state(&planning::parse_state("Phase: 1 of 2\n")).as_deref(), Some("Phase 1/2"));
        assert_eq!(describe_state(&planning::parse_state("nothing here\n")), None);
    }

    #[test]
    fn the_transcript_wins_over_state_md() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".planning")).unwrap();
        std::fs::write(dir.path().join(".planning/STATE.md"), "Phase: 3 of 5 (Rate limiting)\n").unwrap();
        let transcript = dir.path().join("t.jsonl");
        std::fs::write(&transcript, include_bytes!("../../tests/fixtures/transcript.jsonl")).unwrap();
        let roots = vec![dir.path().to_path_buf()];
        let task = current_task(Some(&transcript), &roots).unwrap();
        assert!(task.contains("limiter into the orders routes"), "{task}");
        let missing = dir.path().join("missing.jsonl");
        assert_eq!(current_task(Some(&missing), &roots).as_deref(), Some("Phase 3/5: Rate limiting"));
        assert_eq!(current_task(None, &[]), None);
    }
}
