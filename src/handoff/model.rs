//! The handoff as one model, built from the facts by a pure function: HANDOFF.json, the
//! task lines and the summary. `markdown.rs` renders `.continue-here.md` from the same
//! [`Built`], so the two never disagree.
//!
//! The JSON keeps GSD's schema 1.0 field for field, in GSD's order; what that schema has
//! no field for goes under a `baton` object. Fields the agent or a person wrote in the
//! same session's previous handoff (decisions, blockers, human actions, and
//! `next_action` / `context_notes` once they differ from what baton generated) survive a
//! refresh.

use std::path::Path;

use chrono::{DateTime, SecondsFormat, Utc};

use crate::gitx::{Checkpoint, GitFacts, SessionCommit};
use crate::metrics::Figure;
use crate::planning::{ContextKind, Planning};
use crate::transcript::{SessionFacts, TodoItem};

use super::doc::{
    self, AgentProgress, Baton, CheckpointRecord, Failure, Field, Figures, GeneratedText, Handoff,
    HandoffDoc, Scalar, Sources, TaskEntry, Written, field,
};
pub use crate::util::text::one_line;

/// What made baton write the handoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    CriticalContext,
    PreCompact,
    Manual,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::CriticalContext => "critical-context",
            Trigger::PreCompact => "pre-compact",
            Trigger::Manual => "manual",
        }
    }
}

/// A source of facts that may be missing; the reason is recorded, never fatal.
#[derive(Debug, Clone)]
pub enum Sourced<T> {
    Found(T),
    Missing(String),
}

impl<T> Sourced<T> {
    pub fn found(&self) -> Option<&T> {
        match self {
            Sourced::Found(value) => Some(value),
            Sourced::Missing(_) => None,
        }
    }

    fn status(&self) -> String {
        match self {
            Sourced::Found(_) => "ok".to_string(),
            Sourced::Missing(why) => why.clone(),
        }
    }
}

/// Everything the handoff is made from: one snapshot of facts.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub trigger: Trigger,
    pub session_id: String,
    pub transcript_path: Option<String>,
    pub now: DateTime<Utc>,
    pub figure: Option<Figure>,
    pub git: Sourced<GitFacts>,
    pub planning: Planning,
    pub transcript: Sourced<SessionFacts>,
    /// The handoff id (random, kept across one session's refreshes).
    pub id: String,
    /// The folder of HANDOFF.json, relative to the root (`.planning`, or a session's
    /// pending folder `.planning/handoffs/pending/<session>`).
    pub handoff_dir: std::path::PathBuf,
    /// The project's own handoff folder (`handoff.dir`, `.planning`), relative to the root.
    pub main_dir: std::path::PathBuf,
    /// The project folder relative to the top of the work tree (empty when it is the top;
    /// `packages/web` for a GSD project in a monorepo package).
    pub project_rel: std::path::PathBuf,
}

impl Snapshot {
    /// Whether `path` (relative to the root) is one of the handoff's own files, which
    /// are not the user's uncommitted work.
    /// `path` is relative to the top of the work tree (as git names it).
    pub fn is_handoff_file(&self, path: &str) -> bool {
        let path = Path::new(path);
        let path = path.strip_prefix(&self.project_rel).unwrap_or(path);
        path == self.handoff_dir.join("HANDOFF.json")
            || path == self.main_dir.join("HANDOFF.json")
            || path == self.planning.continue_here
            || path.starts_with(self.handoff_dir.join("handoffs"))
            || path.starts_with(self.main_dir.join("handoffs"))
            || path.file_name().is_some_and(|n| n == ".continue-here.md")
    }

    /// Which folder the handoff belongs to, in words: the top of the repository, or a
    /// folder in it with its own GSD project.
    pub fn project_words(&self) -> String {
        if self.project_rel.as_os_str().is_empty() {
            "the top of the repository".to_string()
        } else {
            format!("`{}` (its own .planning/ in this repository)", self.project_rel.display())
        }
    }
}

/// A task line of the handoff, in the order todos are listed.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskLine {
    pub id: usize,
    pub name: String,
    pub state: TaskState,
    pub commit: Option<String>,
    pub progress: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskState {
    Done,
    InProgress,
    NotStarted,
}

/// The built handoff.
#[derive(Debug, Clone)]
pub struct Built {
    pub json: HandoffDoc,
    /// The todo list as task lines.
    pub tasks: Vec<TaskLine>,
    /// Where `.continue-here.md` goes, relative to the project root.
    pub continue_here: std::path::PathBuf,
    pub summary: Summary,
}

/// What the confirmation and the messages say about a handoff.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub kind: ContextKind,
    pub location: String,
    pub task: Option<usize>,
    pub total_tasks: Option<usize>,
    pub status: String,
    pub blockers: usize,
    pub human_actions: usize,
    pub next_action: String,
    /// GSD is in use in the project (its words and commands apply).
    pub gsd: bool,
}

impl Summary {
    /// The kind of work, as a handoff names it: GSD's word, or `none` without GSD.
    pub fn context_word(&self) -> &'static str {
        if self.gsd { self.kind.as_str() } else { "none" }
    }
}

/// Significant words of a text, for matching todos to commit subjects.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|w| !matches!(w.as_str(), "the" | "and" | "for" | "with" | "into" | "from" | "add" | "adds"))
        .collect()
}

/// The session commit whose subject best matches a task, if any matches well enough
/// (at least two shared words and half of the task's words).
pub fn matching_commit<'a>(task: &str, commits: &'a [SessionCommit]) -> Option<&'a SessionCommit> {
    let task_words = words(task);
    if task_words.is_empty() {
        return None;
    }
    commits
        .iter()
        .filter_map(|commit| {
            let subject = words(&commit.subject);
            let shared = task_words.iter().filter(|w| subject.contains(w)).count();
            (shared >= 2 && shared * 2 >= task_words.len()).then_some((shared, commit))
        })
        .max_by_key(|(shared, _)| *shared)
        .map(|(_, commit)| commit)
}

/// The todo list as numbered task lines: completed, in progress, pending.
pub fn task_lines(facts: Option<&SessionFacts>, commits: &[SessionCommit]) -> Vec<TaskLine> {
    let Some(todos) = facts.and_then(|f| f.todos.as_ref()) else { return vec![] };
    let line = |item: &TodoItem, state| TaskLine {
        id: 0,
        name: item.content.clone(),
        state,
        commit: (state == TaskState::Done)
            .then(|| matching_commit(&item.content, commits).map(|c| c.short.clone()))
            .flatten(),
        progress: (state == TaskState::InProgress)
            .then(|| item.active_form.clone().unwrap_or_else(|| "in progress".into())),
    };
    let mut lines: Vec<TaskLine> = todos
        .completed
        .iter()
        .map(|i| line(i, TaskState::Done))
        .chain(todos.in_progress.iter().map(|i| line(i, TaskState::InProgress)))
        .chain(todos.pending.iter().map(|i| line(i, TaskState::NotStarted)))
        .collect();
    for (n, task) in lines.iter_mut().enumerate() {
        task.id = n + 1;
    }
    lines
}

/// Files the agent touched, relative to the project root; paths outside it are made
/// relative to the folder the session ran in (the project may have moved since).
fn touched_files(facts: &SessionFacts, root: &Path) -> Vec<String> {
    let session_dir = facts.cwd.as_deref().map(Path::new);
    facts
        .files_relative_to(root)
        .into_iter()
        .map(|file| match session_dir {
            Some(dir) if Path::new(&file).is_absolute() => crate::transcript::relative_path(&file, dir),
            _ => file,
        })
        .collect()
}

fn generated_next_action(tasks: &[TaskLine], facts: Option<&SessionFacts>, planning: &Planning) -> String {
    if let Some(task) = tasks.iter().find(|t| t.state == TaskState::InProgress) {
        return format!("Continue: {}", one_line(&task.name, 300));
    }
    if let Some(request) = facts.and_then(|f| f.last_request.as_deref()) {
        return format!("Continue the last request: {}", one_line(request, 300));
    }
    if let Some(plan) = planning.phase.as_ref().and_then(|p| p.current()) {
        return format!("Continue plan {} of phase {}", plan.file, planning.location);
    }
    "Review this handoff with the user and agree on the next step".to_string()
}

fn generated_context_notes(facts: Option<&SessionFacts>) -> String {
    let Some(facts) = facts else { return String::new() };
    let mut notes = vec![];
    if let Some(request) = &facts.last_request {
        notes.push(format!("Last request: {}", one_line(request, 600)));
    }
    if let Some(text) = &facts.last_assistant_text {
        // Transcript text is data: quoted, and said to be the agent's words.
        notes.push(format!(
            "Last assistant message (the agent's own words before the pause, quoted as data): “{}”",
            one_line(text, 600)
        ));
    }
    if let Some(failure) = &facts.last_failure {
        if !failure.succeeded_later {
            let what = failure.command.as_deref().or(failure.tool.as_deref()).unwrap_or("a tool call");
            let error =
                failure.error_line.as_deref().map(|e| format!(": {}", one_line(e, 300))).unwrap_or_default();
            notes.push(format!("Last failure: `{}`{error}", one_line(what, 200)));
        }
    }
    notes.join("\n")
}

/// A list someone wrote into the previous handoff, carried over as written.
fn carried_list<T>(list: Option<&Field<Vec<Written<T>>>>) -> Vec<Written<T>> {
    list.and_then(Field::get).cloned().unwrap_or_default()
}

/// A field someone edited: its text differs from the text baton generated for it last
/// time.
fn edited(current: Option<&str>, generated: &Field<String>) -> Option<String> {
    let current = current?;
    (generated.get().map(String::as_str) != Some(current)).then(|| current.to_string())
}

fn plan_number(planning: &Planning) -> Field<Scalar> {
    let number = planning.phase.as_ref().and_then(|p| p.current()).and_then(|p| p.number.clone());
    match number {
        // A number when it is one (`02` too, as GSD writes it), else the text.
        Some(n) => Field::Set(n.parse::<u64>().map(|v| Scalar::Number(v.into())).unwrap_or(Scalar::Text(n))),
        None => Field::Null,
    }
}

/// Where the task stands: (task, total) from the todos, else the plan's task count.
fn position(tasks: &[TaskLine], planning: &Planning) -> (Option<usize>, Option<usize>) {
    if !tasks.is_empty() {
        let current = tasks
            .iter()
            .find(|t| t.state == TaskState::InProgress)
            .or_else(|| tasks.iter().find(|t| t.state == TaskState::NotStarted))
            .map(|t| t.id)
            .unwrap_or(tasks.len());
        return (Some(current), Some(tasks.len()));
    }
    let total = planning.phase.as_ref().and_then(|p| p.current()).map(|p| p.tasks.len()).filter(|n| *n > 0);
    (None, total)
}

fn task_entry(task: &TaskLine) -> Written<TaskEntry> {
    let (status, commit, progress) = match task.state {
        TaskState::Done => ("done", task.commit.clone(), None),
        TaskState::InProgress => ("in_progress", None, Some(task.progress.clone().unwrap_or_default())),
        TaskState::NotStarted => ("not_started", None, None),
    };
    Written::new(&TaskEntry {
        id: Field::Set(task.id as u64),
        name: Field::Set(Scalar::Text(task.name.clone())),
        status: Field::Set(status.to_string()),
        commit: Field::or_missing(commit),
        progress: Field::or_missing(progress),
    })
}

/// `baton.checkpoint` of a checkpoint made or planned.
pub fn checkpoint_record(checkpoint: &Checkpoint) -> Written<CheckpointRecord> {
    let text = |t: &Option<String>| Field::from(t.clone());
    let list = |l: &[String]| Field::Set(l.iter().cloned().map(Field::Set).collect());
    Written::new(&CheckpointRecord {
        requested: Field::Set(checkpoint.requested.word().to_string()),
        used: Field::Set(checkpoint.used.word().to_string()),
        reference: text(&checkpoint.reference),
        branch: text(&checkpoint.branch),
        commit: text(&checkpoint.commit),
        short: text(&checkpoint.short),
        parent: text(&checkpoint.parent),
        base: text(&checkpoint.base),
        fallback_reason: text(&checkpoint.fallback_reason),
        skipped_large: list(&checkpoint.skipped_large),
        unreadable: list(&checkpoint.unreadable),
        skipped_budget: list(&checkpoint.skipped_budget),
        skipped_over_budget: Field::Set(checkpoint.skipped_over_budget as u64),
        files_included: Field::Set(checkpoint.files_included as u64),
        files_deleted: Field::Set(checkpoint.files_deleted as u64),
    })
}

/// Builds the handoff from a snapshot. `previous` is this session's previous HANDOFF.json
/// (for what someone wrote into it), and `checkpoint` what the checkpoint did or will do.
pub fn build(
    snapshot: &Snapshot,
    previous: Option<&HandoffDoc>,
    checkpoint: Option<&Checkpoint>,
    root: &Path,
) -> Built {
    let facts = snapshot.transcript.found();
    let git = snapshot.git.found();
    let commits: &[SessionCommit] = git.map(|g| g.session_commits.as_slice()).unwrap_or(&[]);
    let tasks = task_lines(facts, commits);
    let planning = &snapshot.planning;
    let (task, total_tasks) = position(&tasks, planning);

    let generated_next = generated_next_action(&tasks, facts, planning);
    let generated_notes = generated_context_notes(facts);
    let generated_before = previous.map(|p| p.baton().generated_text()).unwrap_or_default();
    let kept_next = edited(previous.and_then(HandoffDoc::next_action), &generated_before.next_action);
    let kept_notes = edited(previous.and_then(HandoffDoc::context_notes), &generated_before.context_notes);
    let next_action = kept_next.clone().unwrap_or_else(|| generated_next.clone());
    let context_notes = kept_notes.clone().unwrap_or_else(|| generated_notes.clone());

    let before = previous.map(HandoffDoc::handoff);
    let blockers = carried_list(before.map(|b| &b.blockers));
    let human_actions = carried_list(before.map(|b| &b.human_actions_pending));
    let decisions = carried_list(before.map(|b| &b.decisions));
    let uncommitted: Vec<Field<String>> = git
        .map(|g| {
            g.uncommitted
                .iter()
                .filter(|c| !snapshot.is_handoff_file(&c.path))
                .map(|c| Field::Set(c.path.clone()))
                .collect()
        })
        .unwrap_or_default();

    let mut generated = doc::GENERATED_FIELDS.to_vec();
    let mut generated_text = GeneratedText::default();
    if kept_next.is_none() {
        generated.push(field::NEXT_ACTION);
        generated_text.next_action = Field::Set(generated_next);
    }
    if kept_notes.is_none() {
        generated.push(field::CONTEXT_NOTES);
        generated_text.context_notes = Field::Set(generated_notes);
    }

    let phase = planning.phase.as_ref();
    let timestamp = snapshot.now.to_rfc3339_opts(SecondsFormat::Secs, true);
    let previous_baton = previous.map(HandoffDoc::baton);
    let refreshes = previous_baton.and_then(|b| b.refreshes()).map(|n| n + 1).unwrap_or(0);
    let first_written = previous_baton
        .and_then(|b| b.first_written())
        .map(str::to_string)
        .unwrap_or_else(|| timestamp.clone());
    let files_touched = facts.map(|f| touched_files(f, root)).unwrap_or_default();
    let last_failure = facts.and_then(|f| f.last_failure.as_ref()).map(|f| {
        Written::new(&Failure {
            tool: Field::from(f.tool.clone()),
            command: Field::from(f.command.clone()),
            error_line: Field::from(f.error_line.clone()),
            succeeded_later: Field::Set(f.succeeded_later),
        })
    });
    let figures = snapshot.figure.as_ref().map(|f| {
        Written::new(&Figures {
            used_pct: Field::Set(u64::from(f.used_pct())),
            remaining_pct: Field::Set(f.remaining_pct),
            used_tokens: Field::from(f.used_tokens),
            window_tokens: Field::from(f.window_tokens),
        })
    });
    let completed: Vec<Written<TaskEntry>> =
        tasks.iter().filter(|t| t.state != TaskState::NotStarted).map(task_entry).collect();
    let remaining: Vec<Written<TaskEntry>> =
        tasks.iter().filter(|t| t.state == TaskState::NotStarted).map(task_entry).collect();

    let text = |t: Option<&str>| Field::from(t.map(str::to_string));
    let texts = |list: &[String]| Field::Set(list.iter().cloned().map(Field::Set).collect());
    let mut baton = Baton {
        id: Field::Set(snapshot.id.clone()),
        trigger: Field::Set(snapshot.trigger.as_str().to_string()),
        session_id: Field::Set(snapshot.session_id.clone()),
        transcript_path: text(snapshot.transcript_path.as_deref()),
        figures: Field::from(figures),
        branch: text(git.and_then(|g| g.branch.as_deref())),
        head: text(git.and_then(|g| g.head.as_deref())),
        base_commit: text(git.and_then(|g| g.head_full.as_deref())),
        repo_state: text(git.map(|g| g.state.word())),
        continue_here: Field::Set(crate::util::text::slash_path(&planning.continue_here)),
        context: Field::Set(if planning.gsd { planning.kind.as_str() } else { "none" }.to_string()),
        gsd: Field::Set(planning.gsd),
        // Which folder this handoff belongs to, relative to the top of the work tree.
        project_dir: Field::Set(if snapshot.project_rel.as_os_str().is_empty() {
            ".".to_string()
        } else {
            crate::util::text::slash_path(&snapshot.project_rel)
        }),
        files_touched: texts(&files_touched),
        user_words: texts(facts.map(|f| f.user_words.as_slice()).unwrap_or_default()),
        background_processes: Field::Set(
            facts
                .map(|f| {
                    let running = f.background_processes.iter().filter(|p| !p.stopped);
                    running
                        .map(|p| {
                            Written::new(&doc::BackgroundProcess {
                                command: Field::Set(p.command.clone()),
                                description: Field::from(p.description.clone()),
                                id: Field::from(p.id.clone()),
                                stopped: Field::Set(p.stopped),
                                started_at: Field::from(p.started_at.clone()),
                            })
                        })
                        .collect()
                })
                .unwrap_or_default(),
        ),
        last_failure: Field::from(last_failure),
        commands_run: Field::Set(
            facts
                .map(|f| {
                    f.commands_run
                        .iter()
                        .map(|c| {
                            Written::new(&doc::CommandRun {
                                command: Field::Set(c.command.clone()),
                                exit_code: Field::from(c.exit_code),
                                failed: Field::Set(c.failed),
                            })
                        })
                        .collect()
                })
                .unwrap_or_default(),
        ),
        // What the agent last said: on a host that keeps no todo list, its own statement
        // of progress. Quoted as its words, never as instructions.
        agent_progress: Field::from(facts.and_then(|f| f.last_assistant_text.as_deref()).map(|t| {
            Written::new(&AgentProgress {
                text: Field::Set(one_line(t, 1500)),
                said_by: Field::Set("the agent (its last message before the pause)".to_string()),
                source: Field::from(facts.map(|f| f.format.describe().to_string())),
                todos_kept: Field::Set(facts.is_some_and(|f| f.todos.is_some())),
            })
        })),
        transcript_format: Field::json(facts.map(|f| f.format)),
        session_commits: Field::Set(
            commits
                .iter()
                .map(|c| {
                    Written::new(&doc::SessionCommit {
                        short: Field::Set(c.short.clone()),
                        subject: Field::Set(c.subject.clone()),
                    })
                })
                .collect(),
        ),
        placeholder_summaries: Field::Set(
            phase
                .map(|p| p.placeholder_summaries().iter().map(|s| Field::Set(s.file.clone())).collect())
                .unwrap_or_default(),
        ),
        first_request: Field::from(facts.and_then(|f| f.first_request.as_deref()).map(|r| one_line(r, 600))),
        last_request: Field::from(facts.and_then(|f| f.last_request.as_deref()).map(|r| one_line(r, 600))),
        model: text(facts.and_then(|f| f.model.as_deref())),
        checkpoint: Field::from(checkpoint.map(checkpoint_record)),
        sources: Field::Set(Written::new(&Sources {
            git: Field::Set(snapshot.git.status()),
            transcript: Field::Set(snapshot.transcript.status()),
            planning: Field::Set(if planning.exists { "ok" } else { ".planning/ did not exist" }.to_string()),
        })),
        generated: Field::Set(generated.into_iter().map(|name| Field::Set(name.to_string())).collect()),
        generated_text: Field::Set(Written::new(&generated_text)),
        generated_at: Field::Set(timestamp.clone()),
        first_written: Field::Set(first_written),
        refreshes: Field::Set(refreshes),
        schema: Field::Set(serde_json::Value::from(doc::BATON_SCHEMA)),
        writer: Field::Set(concat!("baton ", env!("CARGO_PKG_VERSION")).to_string()),
        ..Baton::default()
    };
    // What someone added, and what a pulled handoff carries, survives the refresh.
    if let Some(previous) = previous.and_then(|prev| prev.baton().section()) {
        baton.carry_from(previous);
    }

    let (phase_number, phase_name) = planning.phase_position();
    let out = Handoff {
        timestamp: Field::Set(timestamp.clone()),
        phase: Field::from(phase_number.map(Scalar::Text)),
        phase_name: Field::from(phase_name),
        phase_dir: Field::from(phase.map(|p| crate::util::text::slash_path(&p.dir))),
        plan: plan_number(planning),
        task: Field::from(task.map(|t| t as u64)),
        total_tasks: Field::from(total_tasks.map(|t| t as u64)),
        status: Field::Set("paused".into()),
        completed_tasks: Field::Set(completed),
        remaining_tasks: Field::Set(remaining),
        blockers: Field::Set(blockers.clone()),
        human_actions_pending: Field::Set(human_actions.clone()),
        decisions: Field::Set(decisions),
        uncommitted_files: Field::Set(uncommitted),
        next_action: Field::Set(next_action.clone()),
        context_notes: Field::Set(context_notes),
        // Fields someone added that neither GSD nor baton know are kept.
        unknown: before.map(|b| b.unknown.clone()).unwrap_or_default(),
        baton: Field::Set(baton),
        ..Handoff::fresh()
    };

    let status = if blockers.is_empty() { "in_progress" } else { "blocked" }.to_string();
    let summary = Summary {
        kind: planning.kind,
        location: planning.location.clone(),
        task,
        total_tasks,
        status: status.clone(),
        blockers: blockers.len(),
        human_actions: human_actions.len(),
        next_action,
        gsd: planning.gsd,
    };
    let json = HandoffDoc::from_handoff(out, root);
    Built { json, tasks, continue_here: planning.continue_here.clone(), summary }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(short: &str, subject: &str) -> SessionCommit {
        SessionCommit { id: format!("{short}000"), short: short.into(), subject: subject.into(), time: 0 }
    }

    #[test]
    fn commits_match_tasks_by_shared_words() {
        let commits = vec![
            commit("aaa1111", "Add token-bucket limiter module"),
            commit("bbb2222", "Fix typo in README"),
        ];
        assert_eq!(
            matching_commit("Add a token-bucket limiter module", &commits).map(|c| c.short.as_str()),
            Some("aaa1111")
        );
        assert_eq!(matching_commit("Write tests for limits and reset", &commits), None);
        assert_eq!(matching_commit("", &commits), None);
    }
}
