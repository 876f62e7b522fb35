//! The relay report for people: one block per leg (when, why it ended, its peak, what it
//! completed, the hand-over), then what the legs repeated. Text from transcripts and the
//! record is escaped ([`outside`]).

use std::fmt::Write as _;

use super::repeats::{Effect, Repeat};
use super::{LegRow, RelayReport};
use crate::report::sparkline;
use crate::util::text::{one_line, outside, paint, short_tokens, thousands};

/// Widest context sparkline, in characters.
const SPARKLINE_MAX: usize = 60;
/// Most repeats listed one by one.
const REPEATS_LISTED: usize = 20;

/// `HH:MM:SS` of an RFC 3339 time, else the time as written.
fn clock(at: Option<&str>) -> String {
    at.map_or("?".to_string(), super::clock_of)
}

/// A duration for people: `2.5 s`, `1 min 4 s`, `1 h 2 min`.
pub fn duration(seconds: f64) -> String {
    let whole = seconds.round() as i64;
    if seconds < 10.0 {
        format!("{seconds:.1} s")
    } else if whole < 60 {
        format!("{whole} s")
    } else if whole < 3600 {
        format!("{} min {} s", whole / 60, whole % 60)
    } else {
        format!("{} h {} min", whole / 3600, whole % 3600 / 60)
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn completed_line(row: &LegRow) -> String {
    let done = &row.completed;
    let mut parts = vec![];
    if let Some(todos) = done.todos {
        let total = done.todos_total.map(|t| format!(" (of {t})")).unwrap_or_default();
        parts.push(format!("{}{total}", plural(todos, "todo", "todos")));
    }
    parts.push(plural(done.steps, "step", "steps"));
    parts.push(plural(done.commits, "commit", "commits"));
    if done.files_written.is_empty() {
        parts.push("no file written".into());
    } else {
        let shown: Vec<String> = done.files_written.iter().take(5).map(|f| outside(f).to_string()).collect();
        let more = done.files_written.len().saturating_sub(5);
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        parts.push(format!("wrote {}{more}", shown.join(", ")));
    }
    if let Some(changed) = done.files_changed {
        parts.push(format!("{} changed in the work tree", plural(changed as usize, "file", "files")));
    }
    parts.join(", ")
}

fn leg_block(out: &mut String, row: &LegRow, next: Option<u32>, scale: u64, colour: bool) {
    let span = row.seconds.map(|s| format!(" ({})", duration(s))).unwrap_or_default();
    let head = format!("Leg {}", row.leg);
    let _ = writeln!(
        out,
        "{}  {} → {}{span}  {}",
        paint(&head, "1", colour),
        clock(row.started_at.as_deref()),
        clock(row.ended_at.as_deref()),
        outside(&row.ended_because)
    );
    if let Some(from) = &row.briefed_from {
        let _ = writeln!(out, "  briefed from: {}", outside(from));
    }
    let peak = match (row.peak_used_pct, row.peak_tokens) {
        (Some(p), Some(t)) => format!("{p} % ({} tokens)", thousands(t)),
        (Some(p), None) => format!("{p} %"),
        (None, Some(t)) => format!("{} tokens", thousands(t)),
        (None, None) => "not measured".into(),
    };
    let start = row.first_used_pct.map(|p| format!(", {p} % at its first request")).unwrap_or_default();
    let _ = writeln!(out, "  peak context: {peak}{start}");
    let _ = writeln!(out, "  completed: {}", completed_line(row));
    if row.tool_calls_not_run > 0 {
        let _ = writeln!(out, "  calls that did not run: {} (refused or cancelled)", row.tool_calls_not_run);
    }
    if let Some(handoff) = &row.handoff {
        let checkpoint =
            row.checkpoint.as_deref().map(|c| format!(", checkpoint {}", outside(c))).unwrap_or_default();
        let _ = writeln!(out, "  handoff: {}{checkpoint}", outside(handoff));
    }
    for wait in &row.waits {
        let _ = writeln!(out, "  waited {} {}", duration(wait.seconds), outside(&wait.describe));
    }
    if let Some(next) = next {
        let gap = row.hand_over_seconds.map_or("not measured".to_string(), duration);
        let _ = writeln!(out, "  hand-over to leg {next}: {gap}");
    }
    if !row.context.is_empty() {
        let values: Vec<u64> = row.context.iter().map(|p| p.tokens).collect();
        let max = values.iter().copied().max().unwrap_or(0);
        let (line, _) = sparkline(&values, scale.max(max), SPARKLINE_MAX);
        let _ = writeln!(out, "  context: {line} {} replies, up to {}", values.len(), short_tokens(max));
    }
    for session in &row.sessions {
        let _ = writeln!(out, "  session: {}", outside(session));
    }
    for problem in &row.problems {
        let _ = writeln!(out, "  {}", paint(&format!("note: {}", outside(problem)), "33", colour));
    }
}

fn list_repeats(out: &mut String, repeats: &[&Repeat]) {
    for repeat in repeats.iter().take(REPEATS_LISTED) {
        let mark = if repeat.is_failure() { "  side effect" } else { "" };
        let _ = writeln!(
            out,
            "  leg {} again (first in leg {}): {} {}{mark}",
            repeat.leg,
            repeat.of_leg,
            outside(&repeat.tool),
            outside(&one_line(&repeat.what, 100))
        );
    }
    if repeats.len() > REPEATS_LISTED {
        let _ = writeln!(out, "  … and {} more", repeats.len() - REPEATS_LISTED);
    }
}

/// Renders the report.
pub fn render(report: &RelayReport, colour: bool) -> String {
    let mut out = String::new();
    let legs = plural(report.legs.len(), "leg", "legs");
    let total = report.seconds.map(|s| format!(" in {}", duration(s))).unwrap_or_default();
    let host =
        report.legs.iter().find_map(|l| l.host.as_deref()).map(|h| format!(", on {h}")).unwrap_or_default();
    let _ = writeln!(out, "{}", paint(&format!("Relay {}: {legs}{total}{host}", report.run), "1", colour));
    if let Some(end) = &report.end_describe {
        let code = report.exit_code.map(|c| format!(", exit {c}")).unwrap_or_default();
        let runs = if report.invocations > 1 {
            format!(", over {} baton runs", report.invocations)
        } else {
            String::new()
        };
        let _ = writeln!(out, "ended: {}{code}{runs}", outside(end));
    }
    if let Some(project) = &report.project {
        let _ = writeln!(out, "project: {}", outside(project));
    }
    if let Some(record) = &report.record {
        let _ = writeln!(out, "record: {}", outside(record));
    }
    let _ = writeln!(out);
    // One scale for every leg's sparkline, so the legs compare.
    let scale = report.legs.iter().filter_map(|l| l.peak_tokens).max().unwrap_or(0);
    for (i, row) in report.legs.iter().enumerate() {
        leg_block(&mut out, row, report.legs.get(i + 1).map(|n| n.leg), scale, colour);
        let _ = writeln!(out);
    }
    let steps: Vec<&Repeat> = report.repeated.iter().filter(|r| r.effect != Effect::ReadOnly).collect();
    let reads: Vec<&Repeat> = report.repeated.iter().filter(|r| r.effect == Effect::ReadOnly).collect();
    if steps.is_empty() {
        let _ = writeln!(out, "Repeated steps: 0 (no leg ran again a step an earlier leg had run)");
    } else {
        let _ = writeln!(
            out,
            "Repeated steps: {} ({} with a side effect)",
            report.repeated_steps, report.repeated_side_effects
        );
        list_repeats(&mut out, &steps);
    }
    if !reads.is_empty() {
        let _ =
            writeln!(out, "Read again by a later leg: {} (a fresh context's cost, not a step)", reads.len());
        list_repeats(&mut out, &reads);
    }
    if let Some(failure) = report.failure() {
        let _ = writeln!(
            out,
            "{}",
            paint(&format!("The relay's own failure: {}.", outside(&failure)), "31", colour)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_clocks() {
        assert_eq!(duration(2.54), "2.5 s");
        assert_eq!(duration(64.0), "1 min 4 s");
        assert_eq!(duration(3720.0), "1 h 2 min");
        assert_eq!(clock(Some("2026-01-01T10:02:03.456Z")), "10:02:03");
        assert_eq!(clock(None), "?");
    }
}
