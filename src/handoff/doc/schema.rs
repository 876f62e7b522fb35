//! The schema of HANDOFF.json: GSD's fields (their names spelled here and nowhere else),
//! baton's section, and the versions. [`Handoff`] and [`Baton`] are what a reader gets and
//! a writer fills.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::lenient::{Field, Scalar};

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
    /// Lists hold entries as written (each entry is read on its own, see the views).
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub completed_tasks: Field<Vec<Value>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub remaining_tasks: Field<Vec<Value>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub blockers: Field<Vec<Value>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub human_actions_pending: Field<Vec<Value>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub decisions: Field<Vec<Value>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub uncommitted_files: Field<Vec<Value>>,
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
    pub figures: Field<Value>,
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
    pub files_touched: Field<Vec<Value>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub user_words: Field<Vec<Value>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub background_processes: Field<Vec<Value>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub last_failure: Field<Value>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub commands_run: Field<Vec<Value>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub agent_progress: Field<Value>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub transcript_format: Field<Value>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub session_commits: Field<Vec<Value>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub placeholder_summaries: Field<Vec<Value>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub first_request: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub last_request: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub model: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub checkpoint: Field<Value>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub sources: Field<Value>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub generated: Field<Vec<Value>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub generated_text: Field<Map<String, Value>>,
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
    pub key_paths: Field<Vec<Value>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub plan_path: Field<String>,
    /// The record's own status of a task pulled from GitHub.
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub task_status: Field<String>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub compaction_audit: Field<Value>,
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
    pub resumptions: Field<Vec<Value>>,
    #[serde(skip_serializing_if = "Field::is_missing")]
    pub closed: Field<Value>,
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
        list.push(serde_json::json!({"session_id": session_id, "at": at, "source": source}));
        let excess = list.len().saturating_sub(RESUMPTIONS_KEPT);
        list.drain(..excess);
        self.resumptions = Field::Set(list);
    }

    /// Records how the handoff was closed (`done`, `discard`) and when.
    pub fn set_closed(&mut self, how: &str, at: &str) {
        self.closed = Field::Set(serde_json::json!({"how": how, "at": at}));
    }
}

/// Whether GSD or baton owns a top-level field (`version`, GSD's fields, `baton`).
pub fn is_known_field(key: &str) -> bool {
    key == "version" || key == "baton" || GSD_FIELDS.contains(&key)
}

/// `baton.figures` as baton writes it.
#[derive(Debug, Clone, Serialize)]
pub struct FiguresOut {
    pub used_pct: u32,
    pub remaining_pct: f64,
    pub used_tokens: Option<u64>,
    pub window_tokens: Option<u64>,
}

/// `baton.last_failure` as baton writes it.
#[derive(Debug, Clone, Serialize)]
pub struct FailureOut<'a> {
    pub tool: Option<&'a str>,
    pub command: Option<&'a str>,
    pub error_line: Option<&'a str>,
    pub succeeded_later: bool,
}

/// `baton.agent_progress` as baton writes it: the agent's last words, said to be its own.
#[derive(Debug, Clone, Serialize)]
pub struct ProgressOut {
    pub text: String,
    pub said_by: &'static str,
    pub source: Option<&'static str>,
    pub todos_kept: bool,
}

/// A `baton.session_commits[]` entry as baton writes it.
#[derive(Debug, Clone, Serialize)]
pub struct CommitOut<'a> {
    pub short: &'a str,
    pub subject: &'a str,
}

/// `baton.sources` as baton writes it: `ok`, or why a source of facts was missing.
#[derive(Debug, Clone, Serialize)]
pub struct SourcesOut {
    pub git: String,
    pub transcript: String,
    pub planning: &'static str,
}

/// A `completed_tasks[]` / `remaining_tasks[]` entry as baton writes it.
#[derive(Debug, Clone, Serialize)]
pub struct TaskOut {
    pub id: usize,
    pub name: String,
    /// `done`, `in_progress` or `not_started`.
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<String>,
}

/// A `blockers[]` entry as baton writes it.
#[derive(Debug, Clone, Serialize)]
pub struct BlockerOut {
    pub description: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub workaround: String,
}

/// A `decisions[]` entry as baton writes it.
#[derive(Debug, Clone, Serialize)]
pub struct DecisionOut {
    pub decision: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
    pub phase: Option<String>,
}

/// A list entry of HANDOFF.json, from one of the `…Out` types.
pub fn entry(value: impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
