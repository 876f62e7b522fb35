//! `.continue-here.md`: the person-readable rendering of the handoff, in GSD's layout
//! (front matter, then its sections in its order; a section with nothing to say is left
//! out, except `<current_state>` and `<next_action>`).
//!
//! Constraints, anti-patterns and a critique someone wrote into the previous file are
//! read back ([`parse_carried`]) and written again, so a refresh never drops them.

use std::fmt::Write as _;

use super::doc::HandoffDoc;
use super::model::{Built, Snapshot, Summary, TaskLine, TaskState, one_line};

/// Constraints and anti-patterns someone wrote into the previous `.continue-here.md`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Carried {
    /// `- [ ] CONSTRAINT: …` lines, as written (checked or not).
    pub constraints: Vec<String>,
    /// Rows of the Critical Anti-Patterns table: pattern, description, severity, prevention.
    pub anti_patterns: Vec<[String; 4]>,
    /// The Pre-Execution Critique section's lines.
    pub critique: Vec<String>,
}

/// Text from the transcript inside a tagged section: one line, and no `<` that could
/// close the section early.
fn quoted(text: &str, max: usize) -> String {
    one_line(text, max).replace('<', "‹").replace('>', "›")
}

/// The latest shell commands, oldest first, each with how it ended.
fn commands_line(commands: &[(String, Option<i64>, bool)], keep: usize, max: usize) -> Option<String> {
    if commands.is_empty() {
        return None;
    }
    let shown: Vec<String> = commands[commands.len().saturating_sub(keep)..]
        .iter()
        .map(|(command, code, failed)| {
            let end = match (code, failed) {
                (Some(code), true) => format!(" (exit {code}, failed)"),
                (None, true) => " (failed)".to_string(),
                (Some(code), false) => format!(" (exit {code})"),
                (None, false) => String::new(),
            };
            format!("`{}`{end}", quoted(command, max).replace('`', "'"))
        })
        .collect();
    Some(format!("Commands the agent ran (latest last): {}", shown.join(", ")))
}

/// Renders the file of the handoff built from `snapshot`, with what the previous one
/// carried.
pub fn render(built: &Built, snapshot: &Snapshot, carried: &Carried) -> String {
    let Built { json, tasks, summary, .. } = built;
    let planning = &snapshot.planning;
    let baton = json.baton();
    let mut out = String::new();

    // Front matter.
    out.push_str("---\n");
    let _ = writeln!(out, "context: {}", if planning.gsd { planning.kind.as_str() } else { "none" });
    let _ = writeln!(out, "phase: {}", planning.location);
    let _ = writeln!(out, "task: {}", summary.task.map(|t| t.to_string()).unwrap_or_else(|| "null".into()));
    let _ = writeln!(
        out,
        "total_tasks: {}",
        summary.total_tasks.map(|t| t.to_string()).unwrap_or_else(|| "null".into())
    );
    let _ = writeln!(out, "status: {}", summary.status);
    let _ = writeln!(out, "last_updated: {}", json.timestamp().unwrap_or_default());
    out.push_str("---\n\n");

    if !carried.constraints.is_empty() {
        out.push_str("# BLOCKING CONSTRAINTS — Read Before Anything Else\n\n");
        out.push_str("> These are not suggestions. Each constraint below was discovered through failure.\n");
        out.push_str("> Acknowledge each one explicitly before proceeding.\n\n");
        for line in &carried.constraints {
            let _ = writeln!(out, "{line}");
        }
        out.push_str("\n**Do not proceed until all boxes are checked.**\n\n");
    }
    if !carried.anti_patterns.is_empty() {
        out.push_str("## Critical Anti-Patterns\n\n");
        out.push_str("| Pattern | Description | Severity | Prevention Mechanism |\n");
        out.push_str("|---------|-------------|----------|---------------------|\n");
        for row in &carried.anti_patterns {
            let _ = writeln!(out, "| {} | {} | {} | {} |", row[0], row[1], row[2], row[3]);
        }
        out.push('\n');
    }

    out.push_str("<current_state>\n");
    out.push_str(&current_state(json, snapshot, summary));
    out.push_str("</current_state>\n\n");

    let done_or_doing: Vec<&TaskLine> = tasks.iter().filter(|t| t.state != TaskState::NotStarted).collect();
    if !done_or_doing.is_empty() {
        out.push_str("<completed_work>\n\nCompleted Tasks:\n");
        for task in done_or_doing {
            let name = quoted(&task.name, 300);
            match task.state {
                TaskState::Done => {
                    let commit = task.commit.as_deref().map(|c| format!(" ({c})")).unwrap_or_default();
                    let _ = writeln!(out, "- Task {}: {name} - Done{commit}", task.id);
                }
                _ => {
                    let progress = task.progress.as_deref().map(|p| quoted(p, 200)).unwrap_or_default();
                    let _ = writeln!(out, "- Task {}: {name} - In progress, {progress}", task.id);
                }
            }
        }
        out.push_str("</completed_work>\n\n");
    }
    let left: Vec<&TaskLine> = tasks.iter().filter(|t| t.state != TaskState::Done).collect();
    if !left.is_empty() {
        out.push_str("<remaining_work>\n\n");
        for task in left {
            let state = if task.state == TaskState::InProgress { "In progress" } else { "Not started" };
            let _ = writeln!(out, "- Task {}: {} - {state}", task.id, quoted(&task.name, 300));
        }
        out.push_str("</remaining_work>\n\n");
    }

    let decisions = json.decisions();
    if !decisions.is_empty() {
        out.push_str("<decisions_made>\n\n");
        for decision in &decisions {
            match decision.rationale() {
                Some(why) => {
                    let _ = writeln!(
                        out,
                        "- {} because {}",
                        one_line(decision.decision(), 400),
                        one_line(why, 400)
                    );
                }
                None => {
                    let _ = writeln!(out, "- {}", one_line(decision.decision(), 400));
                }
            }
        }
        out.push_str("</decisions_made>\n\n");
    }

    let blockers = json.blockers();
    let human = json.human_actions();
    if !blockers.is_empty() || !human.is_empty() {
        out.push_str("<blockers>\n");
        for blocker in &blockers {
            let text = one_line(blocker.description(), 400);
            let kind = blocker.kind().map(|t| format!(" ({})", one_line(t, 40))).unwrap_or_default();
            let workaround = blocker
                .workaround
                .text()
                .map(|w| format!(": workaround {}", one_line(w, 300)))
                .unwrap_or_default();
            let _ = writeln!(out, "- {text}{kind}{workaround}");
        }
        for action in &human {
            let blocking = if action.blocking() { " (blocking)" } else { "" };
            let _ = writeln!(out, "- Human action pending{blocking}: {}", one_line(action.action(), 400));
        }
        out.push_str("</blockers>\n\n");
    }

    let reading = required_reading(snapshot);
    if !reading.is_empty() {
        out.push_str("## Required Reading (in order)\n");
        for (n, (path, why)) in reading.iter().enumerate() {
            let _ = writeln!(out, "{}. `{path}` — {why}", n + 1);
        }
        out.push('\n');
    }

    let background = baton.background_processes();
    if !background.is_empty() {
        out.push_str("## Infrastructure State\n");
        for process in &background {
            let command = quoted(process.command(), 200);
            let id = process.id.text().map(|i| format!(" ({})", quoted(i, 40))).unwrap_or_default();
            let _ = writeln!(
                out,
                "- `{command}`{id}: started in the background by the paused session; check whether it still runs, restart if needed"
            );
        }
        out.push('\n');
    }

    if !carried.critique.is_empty() {
        out.push_str("## Pre-Execution Critique Required\n");
        for line in &carried.critique {
            let _ = writeln!(out, "{line}");
        }
        out.push('\n');
    }

    let context_notes = json.context_notes().unwrap_or_default();
    let mut context = vec![];
    if let Some(first) = baton.first_request() {
        context.push(format!("First request: {}", quoted(first, 600)));
    }
    for line in context_notes.lines().filter(|l| !l.trim().is_empty()) {
        context.push(quoted(line, 700));
    }
    let touched = baton.files_touched();
    if !touched.is_empty() {
        let list: Vec<String> = touched.iter().take(30).map(|f| format!("`{}`", quoted(f, 200))).collect();
        let more = touched.len().saturating_sub(30);
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        context.push(format!("Files touched this session: {}{more}", list.join(", ")));
    }
    if let Some(line) = commands_line(&baton.commands_run(), 10, 200) {
        context.push(line);
    }
    if !context.is_empty() {
        out.push_str("<context>\n");
        for line in context {
            let _ = writeln!(out, "{line}");
        }
        out.push_str("</context>\n\n");
    }

    out.push_str("<next_action>\n");
    let _ = writeln!(out, "Start with: {}", quoted(&summary.next_action, 600));
    out.push_str("</next_action>\n");
    out
}

fn current_state(json: &HandoffDoc, snapshot: &Snapshot, summary: &Summary) -> String {
    let baton = json.baton();
    let mut lines = vec![];
    let mut first = format!("Paused by baton ({})", snapshot.trigger.as_str());
    if let Some(figure) = &snapshot.figure {
        let _ = write!(
            first,
            " at {}% context used ({}% remaining)",
            figure.used_pct(),
            figure.remaining_display()
        );
    }
    match (baton.branch(), baton.head()) {
        (Some(branch), Some(head)) => {
            let _ = write!(first, ", on branch `{branch}` at {head}");
        }
        (None, Some(head)) => {
            let _ = write!(first, ", detached at {head}");
        }
        _ => {}
    }
    lines.push(format!("{first}."));
    lines.push(format!("Project: {}.", snapshot.project_words()));
    if let Some(why) = match &snapshot.git {
        super::model::Sourced::Missing(why) => Some(why),
        _ => None,
    } {
        lines.push(format!("Git: {why}; only the files were written."));
    }
    let planning = &snapshot.planning;
    match &planning.phase {
        Some(phase) => {
            let mut where_ = format!("Phase {} ({})", phase.number, phase.name);
            if let Some(plan) = phase.current() {
                let _ = write!(where_, ", plan {}", plan.file);
            }
            if let (Some(task), Some(total)) = (summary.task, summary.total_tasks) {
                let _ = write!(where_, ", task {task} of {total}");
            }
            lines.push(format!("{where_}."));
            let placeholders = phase.placeholder_summaries();
            if !placeholders.is_empty() {
                let names: Vec<&str> = placeholders.iter().map(|p| p.file.as_str()).collect();
                lines.push(format!(
                    "Summaries still holding placeholder text (not really done): {}.",
                    names.join(", ").replace("PLAN.md", "SUMMARY.md")
                ));
            }
        }
        None if !planning.gsd => {
            lines.push("This project does not use GSD: no GSD phase.".into());
        }
        None if planning.kind == crate::planning::ContextKind::Default => {
            lines.push("No active phase, spike, sketch or deliberation was found in .planning/.".into());
        }
        None => lines.push(format!("Context: {} ({}).", planning.kind.as_str(), planning.location)),
    }
    if let Some(state) = &planning.state {
        if let (Some((x, y)), Some(status)) = (state.phase, state.status.as_deref()) {
            lines.push(format!("STATE.md: phase {x} of {y}, status {}.", one_line(status, 100)));
        }
    }
    let uncommitted = json.uncommitted_files().len();
    if uncommitted > 0 {
        lines.push(format!("{uncommitted} uncommitted file(s); see HANDOFF.json `uncommitted_files`."));
    }
    let checkpoint = baton.checkpoint();
    if let Some(reference) = checkpoint.reference.text() {
        lines.push(format!("Checkpoint: `{reference}` (inspect with `git diff HEAD {reference}`)."));
    } else if let Some(branch) = checkpoint.branch.text() {
        lines.push(format!("Checkpoint: a wip commit on `{branch}`."));
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

fn required_reading(snapshot: &Snapshot) -> Vec<(String, &'static str)> {
    let planning = &snapshot.planning;
    let mut reading = vec![];
    if planning.state.is_some() {
        reading.push((".planning/STATE.md".to_string(), "where the project stands"));
    }
    if let Some(phase) = &planning.phase {
        if let Some(plan) = phase.current() {
            reading
                .push((phase.dir.join(&plan.file).to_string_lossy().into_owned(), "the plan being executed"));
        }
    }
    if planning.methodology {
        reading.push((
            ".planning/METHODOLOGY.md".to_string(),
            "project analytical lenses; apply before any assumption analysis",
        ));
    }
    reading
}

/// Reads back what someone wrote into a previous `.continue-here.md`: constraint lines,
/// anti-pattern rows (GSD's placeholder rows left out) and the critique section.
pub fn parse_carried(text: &str) -> Carried {
    let mut carried = Carried::default();
    let mut section = "";
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') {
            section = if trimmed.starts_with("## Critical Anti-Patterns") {
                "anti"
            } else if trimmed.starts_with("## Pre-Execution Critique") {
                "critique"
            } else {
                ""
            };
            continue;
        }
        if trimmed.starts_with('<') && trimmed.ends_with('>') {
            section = "";
            continue;
        }
        let lower = trimmed.to_ascii_lowercase();
        if (lower.starts_with("- [ ] constraint:") || lower.starts_with("- [x] constraint:"))
            && !trimmed.contains("[name]")
        {
            carried.constraints.push(trimmed.to_string());
            continue;
        }
        match section {
            "anti" if trimmed.starts_with('|') => {
                let cells: Vec<String> =
                    trimmed.trim_matches('|').split('|').map(|c| c.trim().to_string()).collect();
                let is_header = cells.first().is_some_and(|c| c == "Pattern");
                let is_rule = cells.iter().all(|c| c.chars().all(|ch| ch == '-' || ch == ':'));
                let is_template = cells.first().is_some_and(|c| c.starts_with('['));
                if cells.len() >= 4 && !is_header && !is_rule && !is_template {
                    carried.anti_patterns.push([
                        cells[0].clone(),
                        cells[1].clone(),
                        cells[2].clone(),
                        cells[3].clone(),
                    ]);
                }
            }
            "critique" if !trimmed.is_empty() && !trimmed.starts_with("<!--") => {
                carried.critique.push(trimmed.to_string());
            }
            _ => {}
        }
    }
    carried
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carried_sections_are_read_back() {
        let text = "---\ncontext: phase\n---\n\n# BLOCKING CONSTRAINTS — Read Before Anything Else\n\n- [ ] CONSTRAINT: no-mocks — mocks hid the bug — run against the real db\n- [ ] CONSTRAINT: [name] — [what it is] — [structural mitigation required]\n\n## Critical Anti-Patterns\n\n| Pattern | Description | Severity | Prevention Mechanism |\n|---------|-------------|----------|---------------------|\n| Guessing limits | tests passed on guessed values | blocking | read the spec table first |\n| [pattern name] | [what] | advisory | [guidance] |\n\n<current_state>\nx\n</current_state>\n\n## Pre-Execution Critique Required\n- Design artifact: spikes/x/DESIGN.md\n";
        let carried = parse_carried(text);
        assert_eq!(
            carried.constraints,
            vec!["- [ ] CONSTRAINT: no-mocks — mocks hid the bug — run against the real db"]
        );
        assert_eq!(carried.anti_patterns.len(), 1);
        assert_eq!(carried.anti_patterns[0][2], "blocking");
        assert_eq!(carried.critique, vec!["- Design artifact: spikes/x/DESIGN.md"]);
    }

    #[test]
    fn quoted_text_cannot_close_a_section() {
        assert_eq!(quoted("done </next_action> now", 100), "done ‹/next_action› now");
    }
}
