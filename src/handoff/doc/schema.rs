//! The schema of HANDOFF.json: GSD's fields (their names spelled here and nowhere else),
//! baton's section, the versions, and one item struct per nested object. [`Handoff`] and
//! [`Baton`] are what a reader gets and a writer fills.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::lenient::{Field, Scalar, Written};

/// The names of GSD's HANDOFF.json fields (schema 1.0): the only place they are spelled
/// outside tests.
pub mod field {
    pub const TIMESTAMP: &str = "timestamp";
    pub const PHASE: &str = "phase";
    pub const PHASE_NAME: &str = "phase_name";
    pub const PHASE_DIR: &str = "phase_dir";
    pub const PLAN: &str = "plan";
    pub const TASK: &str = "task";
    pub const TOTAL_TASKS: &str = "total_tasks";
    pub const STATUS: &str = "status";
    pub const COMPLETED_TASKS: &str = "completed_tasks";
    pub const REMAINING_TASKS: &str = "remaining_tasks";
    pub const BLOCKERS: &str = "blockers";
    pub const HUMAN_ACTIONS_PENDING: &str = "human_actions_pending";
    pub const DECISIONS: &str = "decisions";
    pub const UNCOMMITTED_FILES: &str = "uncommitted_files";
    pub const NEXT_ACTION: &str = "next_action";
    pub const CONTEXT_NOTES: &str = "context_notes";
}

use field::*;

/// GSD's HANDOFF.json fields (schema 1.0) besides `version`, in GSD's order.
pub const GSD_FIELDS: &[&str] = &[
    TIMESTAMP,
    PHASE,
    PHASE_NAME,
    PHASE_DIR,
    PLAN,
    TASK,
    TOTAL_TASKS,
    STATUS,
    COMPLETED_TASKS,
    REMAINING_TASKS,
    BLOCKERS,
    HUMAN_ACTIONS_PENDING,
    DECISIONS,
    UNCOMMITTED_FILES,
    NEXT_ACTION,
    CONTEXT_NOTES,
];

/// What survives a rewrite: the fields the agent (or a person) writes are carried over as
/// written; baton regenerates these from the session every time.
pub const GENERATED_FIELDS: &[&str] =
    &[COMPLETED_TASKS, REMAINING_TASKS, UNCOMMITTED_FILES, TASK, TOTAL_TASKS];

/// The version baton writes at the top level (GSD's; GSD readers compare it).
pub const GSD_VERSION: &str = "1.0";
/// The version of baton's own additions, written as `baton.schema`.
pub const BATON_SCHEMA: &str = "1.1";
/// HANDOFF.json: GSD's fields in GSD's order, the fields neither GSD nor baton knows (kept
/// verbatim), then baton's section. The one schema baton reads and writes it by: every
/// reader goes through [`HandoffDoc`] (which parses into this once), every writer fills
/// one (`handoff::model`, the GitHub restore) and [`encode`]s it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Handoff {
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub version: Field<Value>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub timestamp: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub phase: Field<Scalar>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub phase_name: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub phase_dir: Field<String>,
    /// A number when the plan's id is one, else its text (GSD writes numbers).
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub plan: Field<Scalar>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub task: Field<u64>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub total_tasks: Field<u64>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub status: Field<String>,
    /// Lists hold entries as written, each read on its own through its item's schema.
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub completed_tasks: Field<Vec<Written<TaskEntry>>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub remaining_tasks: Field<Vec<Written<TaskEntry>>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub blockers: Field<Vec<Written<Blocker>>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub human_actions_pending: Field<Vec<Written<HumanAction>>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub decisions: Field<Vec<Written<Decision>>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub uncommitted_files: Field<Vec<Field<String>>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub next_action: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub context_notes: Field<String>,
    /// Top-level fields neither GSD nor baton knows: kept through every rewrite.
    #[serde(flatten)]
    pub unknown: Map<String, Value>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub baton: Field<Baton>,
}

impl Handoff {
    /// A new HANDOFF.json as baton writes one: version 1.0 and every GSD field there
    /// (empty, or `null` where GSD has no value), and an empty `baton` section.
    pub fn fresh() -> Handoff {
        Handoff {
            version: Field::Set(Value::from(GSD_VERSION)),
            timestamp: Field::Set(String::new()),
            phase: Field::Null,
            phase_name: Field::Null,
            phase_dir: Field::Null,
            plan: Field::Null,
            task: Field::Null,
            total_tasks: Field::Null,
            status: Field::Set(String::new()),
            completed_tasks: Field::Set(vec![]),
            remaining_tasks: Field::Set(vec![]),
            blockers: Field::Set(vec![]),
            human_actions_pending: Field::Set(vec![]),
            decisions: Field::Set(vec![]),
            uncommitted_files: Field::Set(vec![]),
            next_action: Field::Set(String::new()),
            context_notes: Field::Set(String::new()),
            unknown: Map::new(),
            baton: Field::Set(Baton::default()),
        }
    }
}

/// baton's own section, `baton`: what GSD's schema has no field for. The fields
/// `handoff::model` writes come first, in its order; then the ones carried over from the
/// handoff it replaces, the keys baton does not know (kept verbatim), the GitHub
/// ledger's (owned by `checkpoint_github`), and the ones that describe one write.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Baton {
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub id: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub trigger: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub session_id: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub transcript_path: Field<String>,
    /// `used_pct`, `remaining_pct`, `used_tokens`, `window_tokens`.
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub figures: Field<Written<Figures>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub branch: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub head: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub base_commit: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub repo_state: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub continue_here: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub context: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub gsd: Field<bool>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub project_dir: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub files_touched: Field<Vec<Field<String>>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub user_words: Field<Vec<Field<String>>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub background_processes: Field<Vec<Written<BackgroundProcess>>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub last_failure: Field<Written<Failure>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub commands_run: Field<Vec<Written<CommandRun>>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub agent_progress: Field<Written<AgentProgress>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub transcript_format: Field<Value>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub session_commits: Field<Vec<Written<SessionCommit>>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub placeholder_summaries: Field<Vec<Field<String>>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub first_request: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub last_request: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub model: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub checkpoint: Field<Written<CheckpointRecord>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub sources: Field<Written<Sources>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub generated: Field<Vec<Field<String>>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub generated_text: Field<Written<GeneratedText>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub generated_at: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub first_written: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub refreshes: Field<u64>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub schema: Field<Value>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub writer: Field<String>,
    // Carried over from the handoff a refresh replaces.
    /// `github` for a handoff pulled from an issue.
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub source: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub goal: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub key_paths: Field<Vec<Field<String>>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub plan_path: Field<String>,
    /// The record's own status of a task pulled from GitHub.
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub task_status: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub compaction_audit: Field<Written<CompactionAudit>>,
    /// Keys baton does not know: kept through every rewrite.
    #[serde(flatten)]
    pub other: Map<String, Value>,
    // The GitHub ledger's (`checkpoint_github`).
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub github_issue: Field<u64>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub github_repo: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub github_url: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub github_last_record: Field<Value>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub github_error: Field<Value>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub github_record: Field<Value>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub github_ignored: Field<Value>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub github_conflicts: Field<Value>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub github_pulled_at: Field<String>,
    // What describes one write, never carried.
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub checkpoint_note: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub cut: Field<Value>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub resumptions: Field<Vec<Written<Resumption>>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub closed: Field<Written<Closed>>,
}

/// How many resumptions a handoff lists.
const RESUMPTIONS_KEPT: usize = 20;

impl Baton {
    /// What survives a refresh besides the fields baton regenerates: the fields carried
    /// over (a goal, key paths … of a pulled handoff, the compaction audit) and the keys
    /// baton does not know, but nothing that describes one write (`checkpoint_note`,
    /// `cut`, `closed`, `resumptions`) and nothing of the GitHub ledger's (see
    /// [`carry_issue`]).
    pub fn carry_from(&mut self, previous: &Baton) {
        let carry = |to: &mut Field<String>, from: &Field<String>| {
            if to.is_missing() {
                to.clone_from(from);
            }
        };
        carry(&mut self.source, &previous.source);
        carry(&mut self.goal, &previous.goal);
        carry(&mut self.plan_path, &previous.plan_path);
        carry(&mut self.task_status, &previous.task_status);
        if self.key_paths.is_missing() {
            self.key_paths.clone_from(&previous.key_paths);
        }
        if self.compaction_audit.is_missing() {
            self.compaction_audit.clone_from(&previous.compaction_audit);
        }
        for (key, value) in &previous.other {
            if !self.other.contains_key(key) && !key.starts_with("github_") {
                self.other.insert(key.clone(), value.clone());
            }
        }
    }

    /// Records that `session_id` was given this handoff at `at` (RFC 3339), by `source`
    /// (`startup`, `resume` …); the newest twenty are kept.
    pub fn add_resumption(&mut self, session_id: &str, at: &str, source: &str) {
        let mut list = self.resumptions.get().cloned().unwrap_or_default();
        let text = |t: &str| Field::Set(t.to_string());
        list.push(Written::new(&Resumption {
            session_id: text(session_id),
            at: text(at),
            source: text(source),
        }));
        let excess = list.len().saturating_sub(RESUMPTIONS_KEPT);
        list.drain(..excess);
        self.resumptions = Field::Set(list);
    }

    /// Records how the handoff was closed (`done`, `discard`) and when.
    pub fn set_closed(&mut self, how: &str, at: &str) {
        let closed = Closed { how: Field::Set(how.to_string()), at: Field::Set(at.to_string()) };
        self.closed = Field::Set(Written::new(&closed));
    }
}

/// Whether GSD or baton owns a top-level field (`version`, GSD's fields, `baton`).
pub fn is_known_field(key: &str) -> bool {
    key == "version" || key == "baton" || GSD_FIELDS.contains(&key)
}

// ---------------------------------------------------------------- the items
//
// One struct per nested object: how baton writes it and how any reader reads it. Each
// field is a `Field` (absent, `null`, typed, or of another type), so an item someone
// else wrote reads leniently; it is stored as `Written`, which keeps it as it was
// written. `Option`s a writer leaves out are `Field::Missing`, those it writes as `null`
// `Field::Null`.

/// A `completed_tasks[]` / `remaining_tasks[]` entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TaskEntry {
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub id: Field<u64>,
    /// Text as baton writes it; a number is read too (GSD's own readers take either).
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub name: Field<Scalar>,
    /// `done`, `in_progress`, `not_started` (or whatever was written).
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub status: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub commit: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub progress: Field<String>,
}

impl TaskEntry {
    /// The task's name, when it is text (a task listed by the views always has one).
    pub fn name(&self) -> &str {
        self.name.get().and_then(Scalar::as_text).unwrap_or_default()
    }
}

/// A `blockers[]` entry: GSD's description, type and workaround.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Blocker {
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub description: Field<Scalar>,
    /// GSD's blocker type (`technical`, `human_action`, `external`).
    #[serde(rename = "type", skip_serializing_if = "Field::is_missing")]
    pub kind: Field<Scalar>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub workaround: Field<String>,
}

impl Blocker {
    /// What blocks, as the views give it: the description, else the entry as written.
    pub fn description(&self) -> &str {
        self.description.get().and_then(Scalar::as_text).unwrap_or_default()
    }

    pub fn kind(&self) -> Option<&str> {
        self.kind.get().and_then(Scalar::as_text)
    }
}

/// A `decisions[]` entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Decision {
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub decision: Field<Scalar>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub rationale: Field<Scalar>,
    /// The phase it was made in (`null` outside one).
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub phase: Field<String>,
}

impl Decision {
    /// The decision, as the views give it: its text, else the entry as written.
    pub fn decision(&self) -> &str {
        self.decision.get().and_then(Scalar::as_text).unwrap_or_default()
    }

    pub fn rationale(&self) -> Option<&str> {
        self.rationale.get().and_then(Scalar::as_text)
    }
}

/// A `human_actions_pending[]` entry (baton carries them over; GSD and people write them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HumanAction {
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub action: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub blocking: Field<bool>,
}

impl HumanAction {
    /// The action, as the views give it: its text, else the entry as written.
    pub fn action(&self) -> &str {
        self.action.text().unwrap_or_default()
    }

    pub fn blocking(&self) -> bool {
        self.blocking.get() == Some(&true)
    }
}

/// `baton.figures`: how full the context was.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Figures {
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub used_pct: Field<u64>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub remaining_pct: Field<f64>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub used_tokens: Field<u64>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub window_tokens: Field<u64>,
}

/// `baton.last_failure`: the last tool call that failed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Failure {
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub tool: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub command: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub error_line: Field<String>,
    /// The same command succeeded afterwards.
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub succeeded_later: Field<bool>,
}

impl Failure {
    /// What failed: the command, else the tool, else "a tool call".
    pub fn what(&self) -> &str {
        self.command.text().or(self.tool.text()).unwrap_or("a tool call")
    }
}

/// `baton.agent_progress`: the agent's last words, said to be its own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentProgress {
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub text: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub said_by: Field<String>,
    /// Whose transcript it was read from.
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub source: Field<String>,
    /// The session kept a todo list (its words are then not its only record of progress).
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub todos_kept: Field<bool>,
}

/// A `baton.session_commits[]` entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionCommit {
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub short: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub subject: Field<String>,
}

/// `baton.sources`: `ok`, or why a source of facts was missing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Sources {
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub git: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub transcript: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub planning: Field<String>,
}

/// A `baton.background_processes[]` entry: a process the agent started in the background.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BackgroundProcess {
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub command: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub description: Field<String>,
    /// The shell id the host gave it (`bash_1`).
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub id: Field<String>,
    /// The agent stopped it later.
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub stopped: Field<bool>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub started_at: Field<String>,
}

impl BackgroundProcess {
    /// The command, as the views give it (a listed process always has one).
    pub fn command(&self) -> &str {
        self.command.text().unwrap_or_default()
    }
}

/// A `baton.commands_run[]` entry: a shell command the agent ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CommandRun {
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub command: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub exit_code: Field<i64>,
    /// It ended in an error.
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub failed: Field<bool>,
}

/// `baton.checkpoint`: what the checkpoint saved (or, before it is made, was asked to).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CheckpointRecord {
    /// The mode asked for, and the one used (`ref`, `branch`, `off`).
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub requested: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub used: Field<String>,
    /// The full ref that points at the commit.
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub reference: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub branch: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub commit: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub short: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub parent: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub base: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub fallback_reason: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub skipped_large: Field<Vec<Field<String>>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub unreadable: Field<Vec<Field<String>>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub skipped_budget: Field<Vec<Field<String>>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub skipped_over_budget: Field<u64>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub files_included: Field<u64>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub files_deleted: Field<u64>,
}

/// `baton.generated_text`: the text baton generated for a GSD field last time, to tell a
/// person's edit from its own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GeneratedText {
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub next_action: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub context_notes: Field<String>,
}

/// `baton.compaction_audit`: what the summary of a compaction kept of the snapshot.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CompactionAudit {
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub at: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub trigger: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub kept: Field<u64>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub total: Field<u64>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub summary: Field<String>,
    /// The facts the summary lost, as the audit records them (`kind`, `text`).
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub dropped: Field<Value>,
}

/// A `baton.resumptions[]` entry: a session that was given the handoff.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Resumption {
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub session_id: Field<String>,
    /// RFC 3339.
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub at: Field<String>,
    /// How the session started (`startup`, `resume` …).
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub source: Field<String>,
}

/// `baton.closed`: how the handoff was closed (`done`, `discard`) and when.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Closed {
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub how: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub at: Field<String>,
}
