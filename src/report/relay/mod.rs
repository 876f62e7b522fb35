//! `baton report --relay`: what each leg of a `baton run` did. Its start and end, why it
//! ended, its peak context, what it completed, the hand-over to the next leg and the
//! waits; and what a leg repeated of an earlier one ([`repeats`]): a side effect done
//! twice is the relay's own failure, and the report says so.
//!
//! [`RelayReport::build`] is pure: the run's record and what was read of each leg's
//! transcripts ([`LegRead`]) in, the report out. [`read`] finds the run and reads the
//! transcripts; `text` renders for people, serde for machines (`--json`), `svg` a chart.

pub mod read;
pub mod repeats;
pub mod svg;
pub mod text;

use serde::Serialize;

use crate::run_record::{EndReason, LegNote, RunEnd, RunRecord, WaitReason};
use crate::transcript::{Action, Trace, TraceCall};
pub use read::{RelayError, RelayRequest, RunLookup, generate};
pub use repeats::Repeat;

/// The `format` field of the JSON report; bumped when a field changes meaning.
pub const FORMAT: &str = "baton-relay-report/1";

/// What was read of one session of a leg.
#[derive(Debug, Clone, Default)]
pub struct SessionRead {
    pub session: String,
    pub host: Option<String>,
    pub transcript: Option<String>,
    pub trace: Option<Trace>,
    /// Todos completed in the session's latest list, and all of them.
    pub todos_completed: Option<usize>,
    pub todos_total: Option<usize>,
    /// Files the session wrote or edited, relative to the project where inside it.
    pub files_written: Vec<String>,
    /// Why the transcript could not be read, when it could not.
    pub problem: Option<String>,
    /// The project the session worked in, which files are named relative to.
    pub project: Option<std::path::PathBuf>,
}

/// What was read of one leg: its note in the record and its sessions.
#[derive(Debug, Clone, Default)]
pub struct LegRead {
    pub note: LegNote,
    pub sessions: Vec<SessionRead>,
}

/// For people: why a leg ended ("paused at 81 %", "usage limit until 06:04:00 UTC" …).
pub fn describe_end(end: &EndReason) -> String {
    let one = |text: &str| crate::util::text::one_line(text, 120);
    match end {
        EndReason::Paused { used_pct: Some(p) } => format!("paused at {p} %"),
        EndReason::Paused { used_pct: None } => "paused".into(),
        EndReason::UsageLimit { resets_at_ms, message } => {
            let until = resets_at_ms.and_then(rfc3339_of_ms).map(|t| format!(" until {} UTC", clock_of(&t)));
            let words = if message.is_empty() { String::new() } else { format!(" ({})", one(message)) };
            format!("usage limit{}{words}", until.unwrap_or_default())
        }
        EndReason::ApiError { message, status } => {
            let status = status.map(|s| format!(" {s}")).unwrap_or_default();
            let words = if message.is_empty() { String::new() } else { format!(": {}", one(message)) };
            format!("API error{status}{words}")
        }
        EndReason::Crashed { signal: Some(signal), .. } => format!("crashed (signal {signal})"),
        EndReason::Crashed { code: Some(code), .. } => format!("crashed (exit {code})"),
        EndReason::Crashed { .. } => "crashed".into(),
        EndReason::Interrupted { signal } => format!("interrupted (signal {signal})"),
        EndReason::Done => "done".into(),
        EndReason::Futile { used_pct, first_used_pct, filled_by } => {
            let at = used_pct.map(|p| format!(" at {p} %")).unwrap_or_default();
            let by = filled_by.as_deref().map(|b| format!(" ({})", one(b))).unwrap_or_default();
            match first_used_pct {
                Some(first) => {
                    format!("futile: past CRITICAL from its first request ({first} % full), paused{at}{by}")
                }
                None => format!("futile: paused{at} having completed nothing{by}"),
            }
        }
        EndReason::Other => "not recorded".into(),
    }
}

/// For people: how the run ended.
pub fn describe_run_end(end: &RunEnd) -> String {
    match end {
        RunEnd::Done => "done".into(),
        RunEnd::MaxLegs => "stopped at --max-legs, the last leg paused".into(),
        RunEnd::Interrupted { signal } => format!("interrupted (signal {signal}); the handoff waits"),
        RunEnd::LimitNotWaited { resets_at_ms } => {
            let until =
                resets_at_ms.and_then(rfc3339_of_ms).map(|t| format!(" (resets {t})")).unwrap_or_default();
            format!("usage limit not waited for{until}")
        }
        RunEnd::RetriesSpent { message } => {
            format!("retries spent: {}", crate::util::text::one_line(message, 120))
        }
        RunEnd::Crashed { signal: Some(signal), .. } => format!("the host crashed again (signal {signal})"),
        RunEnd::Crashed { code, .. } => {
            format!("the host crashed again{}", code.map(|c| format!(" (exit {c})")).unwrap_or_default())
        }
        RunEnd::Futile { filled_by } => format!(
            "futile legs in a row{}",
            filled_by
                .as_deref()
                .map(|b| format!(": {}", crate::util::text::one_line(b, 120)))
                .unwrap_or_default()
        ),
        RunEnd::LeftPaused => "the host exited paused".into(),
        RunEnd::Other => "not recorded".into(),
    }
}

/// An RFC 3339 time (UTC, milliseconds) of unix milliseconds.
pub fn rfc3339_of_ms(ms: u64) -> Option<String> {
    let ms = i64::try_from(ms).ok()?;
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

/// `HH:MM:SS` of an RFC 3339 time, else the time as written.
pub fn clock_of(at: &str) -> String {
    if at.len() >= 19 && at.as_bytes().get(10) == Some(&b'T') {
        at[11..19].to_string()
    } else {
        crate::util::text::outside(at).to_string()
    }
}

/// One wait of the relay between two legs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WaitRow {
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    pub seconds: f64,
    /// `usage_limit` or `backoff`.
    pub why: &'static str,
    /// For people.
    pub describe: String,
}

fn wait_row(wait: &crate::run_record::Wait) -> WaitRow {
    let seconds = wait.end_ms.saturating_sub(wait.start_ms) as f64 / 1000.0;
    let (why, describe) = match &wait.why {
        WaitReason::UsageLimit { until_ms } => (
            "usage_limit",
            format!(
                "for the usage limit's reset{}",
                until_ms
                    .and_then(rfc3339_of_ms)
                    .map(|t| format!(" at {} UTC", clock_of(&t)))
                    .unwrap_or_default()
            ),
        ),
        WaitReason::Backoff { attempt, after } => (
            "backoff",
            format!(
                "backing off before retry {attempt}{}",
                if after.is_empty() {
                    String::new()
                } else {
                    format!(" after {}", crate::util::text::one_line(after, 80))
                }
            ),
        ),
        WaitReason::Other => ("other", "waiting".into()),
    };
    WaitRow {
        started_at: rfc3339_of_ms(wait.start_ms),
        ended_at: rfc3339_of_ms(wait.end_ms),
        seconds,
        why,
        describe,
    }
}

/// What a leg completed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Completed {
    /// Todos (or plan steps) newly completed in this leg: its latest list's completed
    /// ones, less the previous leg's.
    pub todos: Option<usize>,
    /// The todo list's length at the leg's end.
    pub todos_total: Option<usize>,
    /// Tool calls that ran and succeeded (the plan's restatements left out).
    pub steps: usize,
    /// Commits made in the leg: the runner's count from the repository, else the
    /// `git commit` commands that ran and succeeded.
    pub commits: usize,
    /// Files whose content changed in the work tree during the leg (the runner's count).
    pub files_changed: Option<u32>,
    /// Files the leg's calls wrote (a write, an edit, a patch, a shell redirection).
    pub files_written: Vec<String>,
}

/// The context at a moment of a leg.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextAt {
    pub at: Option<String>,
    pub tokens: u64,
}

/// One leg.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LegRow {
    pub leg: u32,
    pub sessions: Vec<String>,
    pub host: Option<String>,
    pub transcripts: Vec<String>,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    pub seconds: Option<f64>,
    /// Why it ended (the runner's finding; for an older record, read from its notes).
    pub ended: EndReason,
    /// For people.
    pub ended_because: String,
    /// The host's exit status.
    pub exit_code: Option<i32>,
    /// The context at the leg's first measured request (used %).
    pub first_used_pct: Option<u32>,
    /// The handoff the leg was briefed from.
    pub briefed_from: Option<String>,
    /// The highest context figure the hook saw (used %).
    pub peak_used_pct: Option<u32>,
    /// The highest context size in the transcripts.
    pub peak_tokens: Option<u64>,
    pub completed: Completed,
    pub handoff: Option<String>,
    pub checkpoint: Option<String>,
    /// From this leg's pause (else its end) to the next leg's start, less the waits, in
    /// seconds: what the relay itself cost between two legs.
    pub hand_over_seconds: Option<f64>,
    /// The waits after this leg, before the next (usage limit, backoff).
    pub waits: Vec<WaitRow>,
    /// The context after each reply.
    pub context: Vec<ContextAt>,
    /// Tool calls read, and those that never ran (refused, cancelled).
    pub tool_calls: usize,
    pub tool_calls_not_run: usize,
    /// What could not be read.
    pub problems: Vec<String>,
}

/// Everything `baton report --relay` shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RelayReport {
    pub format: &'static str,
    pub run: String,
    pub record: Option<String>,
    /// The host's id, the command and the project, as `baton run` was given them.
    pub host: Option<String>,
    pub command: Vec<String>,
    pub project: Option<String>,
    /// How the latest `baton run` of the relay ended, and its exit status.
    pub end: Option<RunEnd>,
    pub end_describe: Option<String>,
    pub exit_code: Option<i32>,
    /// How many `baton run`s ran the relay (more than 1 after an interruption).
    pub invocations: u32,
    pub legs: Vec<LegRow>,
    /// Calls a leg ran again, in order: steps, and reads (which a fresh context makes).
    pub repeated: Vec<Repeat>,
    /// Steps a leg ran again (every repeat but a read), and how many of them side
    /// effects (the relay's own failure).
    pub repeated_steps: usize,
    pub repeated_side_effects: usize,
    /// Reads a leg made again (a file, a search, the tools loaded): a fresh context's
    /// cost, not a step.
    pub repeated_reads: usize,
    /// Seconds from the first leg's start to the last leg's end.
    pub seconds: Option<f64>,
}

/// Seconds between two RFC 3339 times (pure; `None` when either does not parse).
pub fn seconds_between(from: Option<&str>, to: Option<&str>) -> Option<f64> {
    let parse = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
    let (from, to) = (parse(from?)?, parse(to?)?);
    Some((to - from).num_milliseconds() as f64 / 1000.0)
}

/// The earlier (or later) of two RFC 3339 times, either possibly missing.
fn pick(a: Option<String>, b: Option<&String>, later: bool) -> Option<String> {
    match (a, b) {
        (None, b) => b.cloned(),
        (a, None) => a,
        (Some(a), Some(b)) => {
            let after = seconds_between(Some(&a), Some(b)).is_some_and(|s| s > 0.0);
            Some(if after == later { b.clone() } else { a })
        }
    }
}

/// `file` relative to `project` when inside it.
fn relative_to(file: &str, project: Option<&std::path::Path>) -> String {
    match project {
        Some(root) => crate::transcript::relative_path(file, root),
        None => file.to_string(),
    }
}

fn is_commit(call: &TraceCall) -> bool {
    matches!(&call.action, Action::Shell { command } if command.contains("git commit") || command.contains("git -c") && command.contains(" commit"))
}

/// Why leg `note` ended: the runner's finding, else (a record from an older baton)
/// what its notes say (pure).
fn leg_end(note: &LegNote, is_last: bool) -> EndReason {
    if let Some(end) = &note.end_reason {
        return end.clone();
    }
    if note.handoff_pending || note.stopped || (note.pause_armed && note.handoff.is_some()) {
        EndReason::Paused { used_pct: note.peak_used_pct }
    } else if note.ended && is_last {
        EndReason::Done
    } else {
        EndReason::Other
    }
}

impl RelayReport {
    /// The report of run `run` from its record and what was read of its legs (pure).
    pub fn build(
        run: &str,
        record_path: Option<String>,
        record: &RunRecord,
        legs: Vec<LegRead>,
    ) -> RelayReport {
        let last_leg = record.legs.iter().map(|l| l.leg).max().unwrap_or(0);
        let mut rows: Vec<LegRow> = vec![];
        let mut calls_by_leg: Vec<Vec<TraceCall>> = vec![];
        let mut numbers = vec![];
        let mut todos_before: usize = 0;
        for read in &legs {
            let note = &read.note;
            let ended = leg_end(note, note.leg == last_leg);
            let mut row = LegRow {
                leg: note.leg,
                sessions: note.sessions.clone(),
                host: record.host.clone().or_else(|| read.sessions.iter().find_map(|s| s.host.clone())),
                transcripts: read.sessions.iter().filter_map(|s| s.transcript.clone()).collect(),
                started_at: note.started_ms.and_then(rfc3339_of_ms),
                ended_at: note.ended_ms.and_then(rfc3339_of_ms),
                seconds: None,
                ended_because: describe_end(&ended),
                ended,
                exit_code: note.exit_code,
                first_used_pct: note.first_used_pct,
                briefed_from: note.briefed_from.clone(),
                peak_used_pct: note.peak_used_pct,
                peak_tokens: None,
                completed: Completed::default(),
                handoff: note.handoff.clone(),
                checkpoint: note.checkpoint.clone(),
                hand_over_seconds: note.handover_ms.map(|ms| ms as f64 / 1000.0),
                waits: note.waits.iter().map(wait_row).collect(),
                context: vec![],
                tool_calls: 0,
                tool_calls_not_run: 0,
                problems: read.sessions.iter().filter_map(|s| s.problem.clone()).collect(),
            };
            let mut calls = vec![];
            let project = read.sessions.iter().find_map(|s| s.project.clone());
            for session in &read.sessions {
                if let Some(trace) = &session.trace {
                    if note.started_ms.is_none() {
                        row.started_at = pick(row.started_at.take(), trace.started_at.as_ref(), false);
                    }
                    if note.ended_ms.is_none() {
                        row.ended_at = pick(row.ended_at.take(), trace.ended_at.as_ref(), true);
                    }
                    row.context.extend(
                        trace.figures.iter().map(|p| ContextAt { at: p.at.clone(), tokens: p.tokens }),
                    );
                    calls.extend(trace.calls.iter().cloned());
                    if trace.cut {
                        row.problems.push(format!("{}: read in part (too large)", session.session));
                    }
                }
                row.completed.files_written.extend(
                    session
                        .files_written
                        .iter()
                        .filter(|f| !row.completed.files_written.contains(f))
                        .cloned()
                        .collect::<Vec<_>>(),
                );
                if let Some(done) = session.todos_completed {
                    row.completed.todos = Some(row.completed.todos.unwrap_or(0).max(done));
                }
                if let Some(total) = session.todos_total {
                    row.completed.todos_total = Some(row.completed.todos_total.unwrap_or(0).max(total));
                }
            }
            // The list at the leg's end holds the earlier legs' completed todos too.
            if let Some(done) = row.completed.todos {
                row.completed.todos = Some(done.saturating_sub(todos_before));
                todos_before = todos_before.max(done);
            }
            row.peak_tokens = row.context.iter().map(|p| p.tokens).max();
            row.seconds = seconds_between(row.started_at.as_deref(), row.ended_at.as_deref());
            row.tool_calls = calls.len();
            row.tool_calls_not_run =
                calls.iter().filter(|c| c.outcome == crate::transcript::Outcome::NotRun).count();
            for file in calls.iter().flat_map(repeats::files_written) {
                let file = relative_to(&file, project.as_deref());
                if !row.completed.files_written.contains(&file) {
                    row.completed.files_written.push(file);
                }
            }
            row.completed.steps = calls.iter().filter(|c| repeats::is_step(c)).count();
            row.completed.commits = calls.iter().filter(|c| repeats::is_step(c) && is_commit(c)).count();
            if let Some(progress) = &note.progress {
                row.completed.commits = progress.commits as usize;
                row.completed.files_changed = Some(progress.files_changed);
                if row.completed.todos.is_none() {
                    row.completed.todos = progress.steps_done.map(|n| n as usize);
                }
            }
            numbers.push(note.leg);
            calls_by_leg.push(calls);
            rows.push(row);
        }
        // An older record has no hand-over: the gap between the transcripts.
        for i in 1..rows.len() {
            if rows[i - 1].hand_over_seconds.is_none() {
                let gap = seconds_between(rows[i - 1].ended_at.as_deref(), rows[i].started_at.as_deref());
                rows[i - 1].hand_over_seconds = gap;
            }
        }
        let repeated = repeats::repeated_steps(&numbers, &calls_by_leg);
        let side_effects = repeated.iter().filter(|r| r.is_failure()).count();
        let seconds = seconds_between(
            rows.first().and_then(|r| r.started_at.as_deref()),
            rows.last().and_then(|r| r.ended_at.as_deref()),
        );
        RelayReport {
            format: FORMAT,
            run: run.to_string(),
            record: record_path,
            host: record.host.clone(),
            command: record.command.clone(),
            project: record.project.as_ref().map(|p| p.display().to_string()),
            end_describe: record.end.as_ref().map(describe_run_end),
            end: record.end.clone(),
            exit_code: record.exit_code,
            invocations: record.invocations,
            legs: rows,
            repeated_steps: repeated.iter().filter(|r| r.effect != repeats::Effect::ReadOnly).count(),
            repeated_side_effects: side_effects,
            repeated_reads: repeated.iter().filter(|r| r.effect == repeats::Effect::ReadOnly).count(),
            repeated,
            seconds,
        }
    }

    /// The relay's own failure, in one line, when a leg did a side effect again.
    pub fn failure(&self) -> Option<String> {
        let first = self.repeated.iter().find(|r| r.is_failure())?;
        Some(format!(
            "the relay repeated {} side-effecting step{}: leg {} ran again what leg {} had done ({})",
            self.repeated_side_effects,
            if self.repeated_side_effects == 1 { "" } else { "s" },
            first.leg,
            first.of_leg,
            crate::util::text::one_line(&first.what, 80)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Outcome;
    use crate::transcript::trace::TracePoint;

    fn shell(command: &str, at: &str) -> TraceCall {
        TraceCall {
            tool: "Bash".into(),
            action: Action::Shell { command: command.into() },
            at: Some(at.into()),
            outcome: Outcome::Ran,
        }
    }

    fn leg(n: u32, start: &str, end: &str, calls: Vec<TraceCall>, todos: usize, note: LegNote) -> LegRead {
        LegRead {
            note: LegNote { leg: n, sessions: vec![format!("s{n}")], ..note },
            sessions: vec![SessionRead {
                session: format!("s{n}"),
                host: Some("claude".into()),
                transcript: Some(format!("/t/s{n}.jsonl")),
                trace: Some(Trace {
                    started_at: Some(start.into()),
                    ended_at: Some(end.into()),
                    figures: vec![TracePoint { at: Some(end.into()), tokens: 1000 * u64::from(n) }],
                    calls,
                    ..Trace::default()
                }),
                todos_completed: Some(todos),
                todos_total: Some(20),
                files_written: vec!["steps.log".into()],
                problem: None,
                project: None,
            }],
        }
    }

    #[test]
    fn two_legs_hand_over_and_the_second_repeats_a_step() {
        let paused = LegNote {
            peak_used_pct: Some(81),
            stopped: true,
            handoff_pending: true,
            ended: true,
            ..LegNote::default()
        };
        let done = LegNote { ended: true, ..LegNote::default() };
        let legs = vec![
            leg(
                1,
                "2026-01-01T10:00:00Z",
                "2026-01-01T10:01:00Z",
                vec![
                    shell("echo step-01 >> steps.log", "2026-01-01T10:00:10Z"),
                    shell("git commit -m one", "2026-01-01T10:00:20Z"),
                ],
                1,
                paused.clone(),
            ),
            leg(
                2,
                "2026-01-01T10:01:02.500Z",
                "2026-01-01T10:02:00Z",
                vec![
                    shell("echo step-01 >> steps.log", "2026-01-01T10:01:10Z"),
                    shell("echo step-02 >> steps.log", "2026-01-01T10:01:20Z"),
                ],
                2,
                done.clone(),
            ),
        ];
        let record =
            RunRecord { legs: legs.iter().map(|l| l.note.clone()).collect(), ..RunRecord::default() };
        let report = RelayReport::build("run-1", None, &record, legs);
        assert_eq!(report.legs.len(), 2);
        assert_eq!(report.legs[0].ended, EndReason::Paused { used_pct: Some(81) });
        assert_eq!(report.legs[1].ended, EndReason::Done);
        assert_eq!(report.legs[0].hand_over_seconds, Some(2.5));
        assert_eq!(report.legs[0].completed.commits, 1);
        assert_eq!(report.legs[0].completed.todos, Some(1));
        assert_eq!(report.legs[1].completed.todos, Some(1), "2 done at its end, 1 of them before it");
        assert_eq!(report.legs[1].peak_tokens, Some(2000));
        assert_eq!(report.seconds, Some(120.0));
        assert_eq!((report.repeated_steps, report.repeated_side_effects), (1, 1));
        assert!(
            report
                .failure()
                .unwrap()
                .contains("leg 2 ran again what leg 1 had done (echo step-01 >> steps.log)")
        );
    }

    #[test]
    fn a_read_made_again_by_a_fresh_context_is_no_repeated_step() {
        let search = || TraceCall {
            tool: "ToolSearch".into(),
            action: Action::Read { target: "select:TaskCreate".into() },
            at: None,
            outcome: Outcome::Ran,
        };
        let legs = vec![
            leg(1, "2026-01-01T10:00:00Z", "2026-01-01T10:01:00Z", vec![search()], 1, LegNote::default()),
            leg(2, "2026-01-01T10:01:02Z", "2026-01-01T10:02:00Z", vec![search()], 2, LegNote::default()),
        ];
        let record =
            RunRecord { legs: legs.iter().map(|l| l.note.clone()).collect(), ..RunRecord::default() };
        let report = RelayReport::build("run-1", None, &record, legs);
        assert_eq!((report.repeated_steps, report.repeated_side_effects, report.repeated_reads), (0, 0, 1));
        assert!(report.failure().is_none());
        let text = text::render(&report, false);
        assert!(text.contains("Repeated steps: 0"), "{text}");
        assert!(text.contains("Read again by a later leg: 1"), "{text}");
    }

    #[test]
    fn a_leg_without_a_readable_transcript_is_still_listed() {
        let legs = vec![LegRead {
            note: LegNote { leg: 1, sessions: vec!["s".into()], ended: true, ..LegNote::default() },
            sessions: vec![SessionRead {
                session: "s".into(),
                problem: Some("no transcript".into()),
                ..SessionRead::default()
            }],
        }];
        let record =
            RunRecord { legs: legs.iter().map(|l| l.note.clone()).collect(), ..RunRecord::default() };
        let report = RelayReport::build("run-1", None, &record, legs);
        assert_eq!(report.legs[0].problems, ["no transcript"]);
        assert_eq!(report.legs[0].ended, EndReason::Done);
        assert!(report.failure().is_none() && report.repeated_steps == 0);
    }
}
