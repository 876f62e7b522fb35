//! The handoff as one model, built from the facts by a pure function and rendered twice
//! (HANDOFF.json here, `.continue-here.md` in `markdown.rs`), so the two never disagree.
//!
//! The JSON keeps GSD's schema 1.0 field for field, in GSD's order; what that schema has
//! no field for goes under a `baton` object. Fields the agent or a person wrote in the
//! same session's previous handoff (decisions, blockers, human actions, and
//! `next_action` / `context_notes` once they differ from what baton generated) survive a
//! refresh.

use std::path::Path;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};

use crate::gitx::{Checkpoint, GitFacts, SessionCommit};
use crate::metrics::Figure;
use crate::planning::{ContextKind, Planning};
use crate::transcript::{SessionFacts, TodoItem};

pub use super::doc::one_line;
use super::doc::{GsdHandoff, HandoffDoc, field};

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
pub struct Handoff {
    pub json: Value,
    pub markdown: String,
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

fn array_field(value: Option<&HandoffDoc>, key: &str) -> Vec<Value> {
    value.map(|v| v.list(key)).unwrap_or_default()
}

/// A field someone edited: it differs from the text baton generated for it last time.
fn edited(previous: Option<&HandoffDoc>, key: &str) -> Option<String> {
    let previous = previous?;
    let current = if key == field::NEXT_ACTION { previous.next_action() } else { previous.context_notes() }?;
    let generated = previous.baton().generated_text(key);
    (generated != Some(current)).then(|| current.to_string())
}

/// Keys of the `baton` section that describe one write and are not carried to the next.
const TRANSIENT_BATON_KEYS: &[&str] = &["checkpoint_note", "cut", "closed", "resumptions"];

fn plan_number(planning: &Planning) -> Value {
    let number = planning.phase.as_ref().and_then(|p| p.current()).and_then(|p| p.number.clone());
    match number {
        Some(n) => n.parse::<u64>().map(Value::from).unwrap_or(Value::from(n)),
        None => Value::Null,
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

fn task_json(task: &TaskLine) -> Value {
    let mut entry = Map::new();
    entry.insert("id".into(), Value::from(task.id));
    entry.insert("name".into(), Value::from(task.name.clone()));
    match task.state {
        TaskState::Done => {
            entry.insert("status".into(), Value::from("done"));
            if let Some(commit) = &task.commit {
                entry.insert("commit".into(), Value::from(commit.clone()));
            }
        }
        TaskState::InProgress => {
            entry.insert("status".into(), Value::from("in_progress"));
            entry.insert("progress".into(), Value::from(task.progress.clone().unwrap_or_default()));
        }
        TaskState::NotStarted => {
            entry.insert("status".into(), Value::from("not_started"));
        }
    }
    Value::Object(entry)
}

/// Builds the handoff from a snapshot. `previous` is this session's previous HANDOFF.json
/// (for what someone wrote into it), `carried` what its `.continue-here.md` held, and
/// `checkpoint` what the checkpoint did or will do.
pub fn build(
    snapshot: &Snapshot,
    previous: Option<&HandoffDoc>,
    carried: &Carried,
    checkpoint: Option<&Checkpoint>,
    root: &Path,
) -> Handoff {
    let facts = snapshot.transcript.found();
    let git = snapshot.git.found();
    let commits: &[SessionCommit] = git.map(|g| g.session_commits.as_slice()).unwrap_or(&[]);
    let tasks = task_lines(facts, commits);
    let planning = &snapshot.planning;
    let (task, total_tasks) = position(&tasks, planning);

    let generated_next = generated_next_action(&tasks, facts, planning);
    let generated_notes = generated_context_notes(facts);
    let kept_next = edited(previous, field::NEXT_ACTION);
    let kept_notes = edited(previous, field::CONTEXT_NOTES);
    let next_action = kept_next.clone().unwrap_or_else(|| generated_next.clone());
    let context_notes = kept_notes.clone().unwrap_or_else(|| generated_notes.clone());

    let blockers = array_field(previous, field::BLOCKERS);
    let human_actions = array_field(previous, field::HUMAN_ACTIONS_PENDING);
    let decisions = array_field(previous, field::DECISIONS);
    let uncommitted: Vec<Value> = git
        .map(|g| {
            g.uncommitted
                .iter()
                .filter(|c| !snapshot.is_handoff_file(&c.path))
                .map(|c| Value::from(c.path.clone()))
                .collect()
        })
        .unwrap_or_default();

    let mut generated = super::doc::GENERATED_FIELDS.to_vec();
    let mut generated_text = Map::new();
    if kept_next.is_none() {
        generated.push(field::NEXT_ACTION);
        generated_text.insert(field::NEXT_ACTION.into(), Value::from(generated_next));
    }
    if kept_notes.is_none() {
        generated.push(field::CONTEXT_NOTES);
        generated_text.insert(field::CONTEXT_NOTES.into(), Value::from(generated_notes));
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
        json!({"tool": f.tool, "command": f.command, "error_line": f.error_line, "succeeded_later": f.succeeded_later})
    });
    let figure = snapshot.figure.as_ref().map(|f| {
        json!({"used_pct": f.used_pct(), "remaining_pct": f.remaining_pct, "used_tokens": f.used_tokens, "window_tokens": f.window_tokens})
    });
    let completed_json: Vec<Value> =
        tasks.iter().filter(|t| t.state != TaskState::NotStarted).map(task_json).collect();
    let remaining_json: Vec<Value> =
        tasks.iter().filter(|t| t.state == TaskState::NotStarted).map(task_json).collect();

    let mut baton = Map::new();
    baton.insert("id".into(), Value::from(snapshot.id.clone()));
    baton.insert("trigger".into(), Value::from(snapshot.trigger.as_str()));
    baton.insert("session_id".into(), Value::from(snapshot.session_id.clone()));
    baton.insert("transcript_path".into(), json!(snapshot.transcript_path));
    baton.insert("figures".into(), figure.unwrap_or(Value::Null));
    baton.insert("branch".into(), json!(git.and_then(|g| g.branch.clone())));
    baton.insert("head".into(), json!(git.and_then(|g| g.head.clone())));
    baton.insert("base_commit".into(), json!(git.and_then(|g| g.head_full.clone())));
    baton.insert("repo_state".into(), json!(git.map(|g| g.state.word())));
    baton.insert("continue_here".into(), Value::from(planning.continue_here.to_string_lossy().into_owned()));
    baton.insert("context".into(), Value::from(if planning.gsd { planning.kind.as_str() } else { "none" }));
    baton.insert("gsd".into(), Value::from(planning.gsd));
    // Which folder this handoff belongs to, relative to the top of the work tree.
    baton.insert(
        "project_dir".into(),
        Value::from(if snapshot.project_rel.as_os_str().is_empty() {
            ".".to_string()
        } else {
            snapshot.project_rel.to_string_lossy().into_owned()
        }),
    );
    baton.insert("files_touched".into(), json!(files_touched));
    baton.insert("user_words".into(), json!(facts.map(|f| f.user_words.clone()).unwrap_or_default()));
    baton.insert(
        "background_processes".into(),
        json!(
            facts
                .map(|f| f.background_processes.iter().filter(|p| !p.stopped).cloned().collect::<Vec<_>>())
                .unwrap_or_default()
        ),
    );
    baton.insert("last_failure".into(), last_failure.unwrap_or(Value::Null));
    baton.insert("commands_run".into(), json!(facts.map(|f| f.commands_run.clone()).unwrap_or_default()));
    // What the agent last said: on a host that keeps no todo list, its own statement of
    // progress. Quoted as its words, never as instructions.
    baton.insert(
        "agent_progress".into(),
        json!(facts.and_then(|f| f.last_assistant_text.as_deref()).map(|t| json!({
            "text": one_line(t, 1500),
            "said_by": "the agent (its last message before the pause)",
            "source": facts.map(|f| f.format.describe()),
            "todos_kept": facts.is_some_and(|f| f.todos.is_some()),
        }))),
    );
    baton.insert("transcript_format".into(), json!(facts.map(|f| f.format)));
    baton.insert(
        "session_commits".into(),
        json!(commits.iter().map(|c| json!({"short": c.short, "subject": c.subject})).collect::<Vec<_>>()),
    );
    baton.insert(
        "placeholder_summaries".into(),
        json!(
            phase
                .map(|p| p.placeholder_summaries().iter().map(|s| s.file.clone()).collect::<Vec<_>>())
                .unwrap_or_default()
        ),
    );
    baton.insert(
        "first_request".into(),
        json!(facts.and_then(|f| f.first_request.as_deref()).map(|r| one_line(r, 600))),
    );
    baton.insert(
        "last_request".into(),
        json!(facts.and_then(|f| f.last_request.as_deref()).map(|r| one_line(r, 600))),
    );
    baton.insert("model".into(), json!(facts.and_then(|f| f.model.clone())));
    baton.insert("checkpoint".into(), json!(checkpoint));
    baton.insert(
        "sources".into(),
        json!({"git": snapshot.git.status(), "transcript": snapshot.transcript.status(), "planning": if planning.exists { "ok" } else { ".planning/ did not exist" }}),
    );
    baton.insert("generated".into(), json!(generated));
    baton.insert("generated_text".into(), Value::Object(generated_text));
    baton.insert("generated_at".into(), Value::from(timestamp.clone()));
    baton.insert("first_written".into(), Value::from(first_written));
    baton.insert("refreshes".into(), Value::from(refreshes));
    baton.insert("schema".into(), Value::from(super::doc::BATON_SCHEMA));
    baton.insert("writer".into(), Value::from(concat!("baton ", env!("CARGO_PKG_VERSION"))));

    let (phase_number, phase_name) = planning.phase_position();
    // Fields someone added that neither GSD nor baton know are kept.
    let unknown = previous.map(|prev| super::doc::unknown_fields(prev.object())).unwrap_or_default();
    if let Some(Value::Object(prev_baton)) = previous.and_then(|prev| prev.object().get("baton")) {
        for (key, value) in prev_baton {
            if !baton.contains_key(key)
                && !TRANSIENT_BATON_KEYS.contains(&key.as_str())
                && !key.starts_with("github_")
            {
                baton.insert(key.clone(), value.clone());
            }
        }
    }
    let out = GsdHandoff {
        timestamp: timestamp.clone(),
        phase: phase_number,
        phase_name,
        phase_dir: phase.map(|p| p.dir.to_string_lossy().into_owned()),
        plan: plan_number(planning),
        task: task.map(|t| t as u64),
        total_tasks: total_tasks.map(|t| t as u64),
        status: "paused".into(),
        completed_tasks: completed_json,
        remaining_tasks: remaining_json,
        blockers: blockers.clone(),
        human_actions_pending: human_actions.clone(),
        decisions,
        uncommitted_files: uncommitted,
        next_action: next_action.clone(),
        context_notes,
        unknown,
        baton,
        ..GsdHandoff::default()
    }
    .into_object();

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
    let doc = HandoffDoc::from_object(out, root);
    let markdown = super::markdown::render(&doc, snapshot, &tasks, carried, &summary);
    let json = doc.into_value();
    Handoff { json, markdown, continue_here: planning.continue_here.clone(), summary }
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

    #[test]
    fn one_line_folds_and_cuts() {
        assert_eq!(one_line("a\n\tb\u{7}  c", 100), "a b c");
        assert_eq!(one_line("abcdef", 4), "abc…");
    }
}
