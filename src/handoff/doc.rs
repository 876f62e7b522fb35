//! The typed, versioned HANDOFF.json: GSD's schema 1.0 with baton's `baton` section, read
//! and written here and nowhere else.
//!
//! A HANDOFF.json may come from anywhere (a clone, GSD, a person, an attacker), so
//! [`HandoffDoc::parse`] checks it once: the `version` (GSD's "1.0" and any 1.x minor are
//! read; a newer major is never rewritten), every value by type (a wrong type counts as
//! absent), and every path baton could act on (`baton.continue_here`, `phase_dir`): only a
//! `.continue-here.md` inside `.planning/`, relative, without `..`, outside `.git`, and not
//! through a symlink out of the project is kept. What is rejected is listed in
//! [`HandoffDoc::problems`].
//!
//! The schema is [`Handoff`] (GSD's fields, then the unknown ones, then [`Baton`], baton's
//! section): each field a [`Field`], parsed once and by type, so a value of another type
//! reads as absent yet is written back as it was; unknown fields, at the top and inside
//! `baton`, are kept through `#[serde(flatten)]` maps. Readers use the typed views
//! ([`HandoffDoc`]'s and [`BatonSection`]'s), writers fill a [`Handoff`]; no other file
//! spells a field's name.
//!
//! [`encode`] is the one writer: pretty JSON, at most [`SIZE_LIMIT`] bytes, long lists cut
//! with an "and N more" entry, and the cuts recorded under `baton.cut`.

use std::path::{Component, Path, PathBuf};

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

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::fsx;

/// The version baton writes at the top level (GSD's; GSD readers compare it).
pub const GSD_VERSION: &str = "1.0";
/// The version of baton's own additions, written as `baton.schema`.
pub const BATON_SCHEMA: &str = "1.1";
/// The largest HANDOFF.json baton writes.
pub const SIZE_LIMIT: usize = 64 * 1024;
/// The largest HANDOFF.json baton reads (one an older baton wrote may exceed
/// [`SIZE_LIMIT`]; anything bigger is not a handoff).
pub const READ_LIMIT: u64 = 4 * 1024 * 1024;
/// The largest `.continue-here.md` baton reads.
pub const MARKDOWN_LIMIT: u64 = 512 * 1024;
/// The name of the only file a handoff may point baton at.
pub const CONTINUE_HERE: &str = ".continue-here.md";

/// What the `version` field says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Version {
    /// No `version`: read as GSD's 1.0.
    Missing,
    /// Major 1, any minor: read and rewritten.
    Known { minor: u32 },
    /// A newer major: read for display only, never rewritten or migrated.
    Newer(String),
    /// Not a version at all: read as 1.0, and reported.
    Invalid(String),
}

impl Version {
    fn parse(value: Option<&Value>) -> Version {
        let text = match value {
            None | Some(Value::Null) => return Version::Missing,
            Some(Value::String(s)) => s.trim().to_string(),
            Some(Value::Number(n)) => n.to_string(),
            Some(other) => return Version::Invalid(short(&other.to_string(), 40)),
        };
        let mut parts = text.splitn(2, '.');
        let major = parts.next().and_then(|m| m.parse::<u64>().ok());
        let minor = parts.next().map(|m| m.split('.').next().unwrap_or("").parse::<u32>().ok());
        match (major, minor) {
            (Some(1), None) => Version::Known { minor: 0 },
            (Some(1), Some(Some(minor))) => Version::Known { minor },
            (Some(m), Some(Some(_)) | None) if m > 1 => Version::Newer(short(&text, 40)),
            _ => Version::Invalid(short(&text, 40)),
        }
    }

    /// Whether baton may rewrite a file of this version.
    pub fn writable(&self) -> bool {
        !matches!(self, Version::Newer(_))
    }
}

fn short(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// One field of HANDOFF.json as found: absent, `null`, a value of the type the schema
/// gives it, or a value of another type (read as absent, and written back as it was, so
/// a rewrite never loses what someone wrote).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Field<T> {
    #[default]
    Missing,
    Null,
    Set(T),
    Other(Value),
}

impl<T> Field<T> {
    /// The value, when it has the schema's type.
    pub fn get(&self) -> Option<&T> {
        match self {
            Field::Set(value) => Some(value),
            _ => None,
        }
    }

    pub fn is_missing(&self) -> bool {
        matches!(self, Field::Missing)
    }

    /// Present with a value (of any type), not absent and not `null`.
    fn is_present(&self) -> bool {
        matches!(self, Field::Set(_) | Field::Other(_))
    }
}

impl<T> From<Option<T>> for Field<T> {
    /// `None` is written as `null`.
    fn from(value: Option<T>) -> Self {
        value.map_or(Field::Null, Field::Set)
    }
}

impl Field<String> {
    /// The text, unless it is blank.
    pub fn text(&self) -> Option<&str> {
        self.get().map(String::as_str).filter(|s| !s.trim().is_empty())
    }
}

impl Field<Value> {
    /// Any serialisable value (`null` for `None`).
    pub fn json(value: impl Serialize) -> Field<Value> {
        match serde_json::to_value(value) {
            Ok(Value::Null) | Err(_) => Field::Null,
            Ok(value) => Field::Set(value),
        }
    }
}

impl Field<Vec<Value>> {
    fn items(&self) -> &[Value] {
        self.get().map(Vec::as_slice).unwrap_or_default()
    }
}

impl<T: Serialize> Serialize for Field<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Missing | Field::Null => serializer.serialize_unit(),
            Field::Set(value) => value.serialize(serializer),
            Field::Other(value) => value.serialize(serializer),
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Field<T> {
    /// Never fails: a value of another type is kept as [`Field::Other`].
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if value.is_null() {
            return Ok(Field::Null);
        }
        Ok(match T::deserialize(&value) {
            Ok(typed) => Field::Set(typed),
            Err(_) => Field::Other(value),
        })
    }
}

/// `phase` and `plan`: GSD writes numbers or text (`"03"`); both read as text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    Number(serde_json::Number),
    Text(String),
}

impl Scalar {
    /// A number when the text is one written plainly (`2`, not `"02"`), else the text.
    pub fn number_or_text(text: &str) -> Scalar {
        match text.parse::<u64>() {
            Ok(n) if n.to_string() == text => Scalar::Number(n.into()),
            _ => Scalar::Text(text.to_string()),
        }
    }

    fn text(&self) -> Option<String> {
        match self {
            Scalar::Text(s) if !s.trim().is_empty() => Some(s.clone()),
            Scalar::Text(_) => None,
            Scalar::Number(n) => Some(n.to_string()),
        }
    }
}

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

/// A parsed HANDOFF.json: the [`Handoff`] (parsed once, each field by type) with what
/// was checked about it.
#[derive(Debug, Clone)]
pub struct HandoffDoc {
    handoff: Handoff,
    version: Version,
    baton_version: Version,
    continue_here: Option<PathBuf>,
    phase_dir: Option<PathBuf>,
    problems: Vec<String>,
}

/// Why a HANDOFF.json cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum HandoffError {
    #[error("is empty")]
    Empty,
    #[error("is not a JSON object")]
    NotAnObject,
    #[error("is not valid JSON ({0})")]
    Json(serde_json::Error),
    #[error("cannot be read ({0})")]
    Read(std::io::Error),
    #[error("{0}")]
    Encode(serde_json::Error),
    #[error("the handoff is {0} bytes even after cutting (limit {SIZE_LIMIT})")]
    TooBig(usize),
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

/// The handoff in bytes, parsed once, or why they are not a HANDOFF.json.
fn parse_handoff(bytes: &[u8]) -> Result<Handoff, HandoffError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(HandoffError::Empty);
    }
    // One pass, straight into the schema (every field reads leniently, so any object
    // makes a handoff) ...
    if let Ok(handoff) = serde_json::from_slice::<Handoff>(bytes) {
        return Ok(handoff);
    }
    // ... else why not: not JSON, not an object, or an object with one of the schema's
    // fields twice, which serde refuses and JSON readers read as the last one.
    match serde_json::from_slice::<Value>(bytes) {
        Ok(object @ Value::Object(_)) => serde_json::from_value(object).map_err(HandoffError::Json),
        Ok(_) => Err(HandoffError::NotAnObject),
        Err(e) => Err(HandoffError::Json(e)),
    }
}

/// Whether the bytes are a HANDOFF.json whose `status` is `paused`: the statusline's
/// check, which reads that one field and skips the rest without building it.
pub fn is_paused(bytes: &[u8]) -> bool {
    struct Paused(bool);
    impl<'de> Deserialize<'de> for Paused {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct Look;
            impl<'de> serde::de::Visitor<'de> for Look {
                type Value = Paused;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("a JSON object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Paused, A::Error> {
                    let mut paused = false;
                    while let Some(key) = map.next_key::<String>()? {
                        if key == STATUS {
                            paused = map.next_value::<Value>()? == "paused";
                        } else {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                    Ok(Paused(paused))
                }
            }
            deserializer.deserialize_map(Look)
        }
    }
    serde_json::from_slice::<Paused>(bytes).is_ok_and(|p| p.0)
}

impl HandoffDoc {
    /// Parses and validates. `root` is the project root, used to check that paths do not
    /// leave it through a symlink. `Err` says why the bytes are not a handoff at all.
    pub fn parse(bytes: &[u8], root: &Path) -> Result<HandoffDoc, HandoffError> {
        HandoffDoc::parse_in(bytes, root, None)
    }

    /// [`HandoffDoc::parse`] for a handoff kept in `dir` (`handoff.dir`), whose own
    /// `.continue-here.md` may sit there too.
    pub fn parse_in(bytes: &[u8], root: &Path, dir: Option<&Path>) -> Result<HandoffDoc, HandoffError> {
        Ok(HandoffDoc::check_in(parse_handoff(bytes)?, root, dir))
    }

    /// Validates a JSON object (tests).
    #[cfg(test)]
    pub fn from_object(object: Map<String, Value>, root: &Path) -> HandoffDoc {
        let handoff = serde_json::from_value(Value::Object(object)).unwrap_or_default();
        HandoffDoc::check_in(handoff, root, None)
    }

    /// Validates a handoff baton built.
    pub fn from_handoff(handoff: Handoff, root: &Path) -> HandoffDoc {
        HandoffDoc::check_in(handoff, root, None)
    }

    fn check_in(handoff: Handoff, root: &Path, dir: Option<&Path>) -> HandoffDoc {
        let mut problems = vec![];
        let version = Version::parse(handoff.version.get());
        match &version {
            Version::Newer(v) => problems.push(format!(
                "version {v} is newer than this baton reads (1.x): it is shown, never rewritten"
            )),
            Version::Invalid(v) => problems.push(format!("version {v:?} is not a version; read as 1.0")),
            _ => {}
        }
        if matches!(handoff.baton, Field::Other(_)) {
            problems.push("`baton` is not an object; ignored".into());
        }
        let baton = handoff.baton.get();
        let baton_version = Version::parse(baton.and_then(|b| b.schema.get()));
        if let Version::Newer(v) = &baton_version {
            problems.push(format!("baton section schema {v} is newer than this baton: never rewritten"));
        }
        let continue_here = match baton.map(|b| &b.continue_here) {
            None | Some(Field::Missing | Field::Null) => None,
            Some(Field::Set(text)) => match check_continue_here_in(text, root, dir) {
                Ok(path) => Some(path),
                Err(why) => {
                    problems.push(format!("baton.continue_here {:?} ignored: {why}", short(text, 120)));
                    None
                }
            },
            Some(Field::Other(_)) => {
                problems.push("baton.continue_here is not a string; ignored".into());
                None
            }
        };
        let phase_dir = match &handoff.phase_dir {
            Field::Missing | Field::Null => None,
            Field::Set(text) => {
                match check_continue_here(&format!("{}/{CONTINUE_HERE}", text.trim_end_matches('/')), root) {
                    Ok(_) => Some(PathBuf::from(text.trim_end_matches('/'))),
                    Err(why) => {
                        problems.push(format!("phase_dir {:?} ignored: {why}", short(text, 120)));
                        None
                    }
                }
            }
            Field::Other(_) => {
                problems.push("phase_dir is not a string; ignored".into());
                None
            }
        };
        HandoffDoc { handoff, version, baton_version, continue_here, phase_dir, problems }
    }

    /// Reads `<root>/<dir>/HANDOFF.json`: `None` when there is none, `Some(Err)` when it
    /// is there but not a handoff.
    pub fn read(root: &Path, dir: &Path) -> Option<Result<HandoffDoc, HandoffError>> {
        let path = root.join(dir).join("HANDOFF.json");
        if std::fs::symlink_metadata(&path).is_err() {
            return None;
        }
        Some(match fsx::read_limited(&path, READ_LIMIT) {
            Err(e) => Err(HandoffError::Read(e)),
            Ok(bytes) => HandoffDoc::parse_in(&bytes, root, Some(dir)),
        })
    }

    /// Whether baton may rewrite this file (neither its version nor its baton section's
    /// is a newer major).
    pub fn writable(&self) -> bool {
        self.version.writable() && self.baton_version.writable()
    }

    /// What was out of bounds, reported and ignored.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// The handoff, field by field, as read (unknown fields included).
    pub fn handoff(&self) -> &Handoff {
        &self.handoff
    }

    /// The `version` field as written.
    pub fn version_value(&self) -> Option<&Value> {
        self.handoff.version.get()
    }

    /// The JSON baton writes of it.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(&self.handoff).unwrap_or(Value::Null)
    }

    /// The `.continue-here.md` this handoff names (validated), else the one its
    /// `phase_dir` implies (validated).
    pub fn continue_here(&self) -> Option<PathBuf> {
        self.continue_here.clone().or_else(|| self.phase_dir.as_ref().map(|d| d.join(CONTINUE_HERE)))
    }

    pub fn status(&self) -> Option<&str> {
        self.handoff.status.text()
    }

    pub fn is_paused(&self) -> bool {
        self.status() == Some("paused")
    }

    pub fn timestamp(&self) -> Option<&str> {
        self.handoff.timestamp.text()
    }

    pub fn phase(&self) -> Option<String> {
        self.handoff.phase.get().and_then(Scalar::text)
    }

    pub fn phase_name(&self) -> Option<&str> {
        self.handoff.phase_name.text()
    }

    /// `phase_dir` as written (when it is text).
    pub fn phase_dir_text(&self) -> Option<&str> {
        self.handoff.phase_dir.get().map(String::as_str)
    }

    pub fn plan(&self) -> Option<String> {
        self.handoff.plan.get().and_then(Scalar::text)
    }

    pub fn task(&self) -> Option<u64> {
        self.handoff.task.get().copied()
    }

    pub fn total_tasks(&self) -> Option<u64> {
        self.handoff.total_tasks.get().copied()
    }

    pub fn next_action(&self) -> Option<&str> {
        self.handoff.next_action.text()
    }

    /// `next_action` as written, blank or not.
    pub fn next_action_raw(&self) -> Option<&str> {
        self.handoff.next_action.get().map(String::as_str)
    }

    pub fn context_notes(&self) -> Option<&str> {
        self.handoff.context_notes.text()
    }

    /// `context_notes` as written, blank or not.
    pub fn context_notes_raw(&self) -> Option<&str> {
        self.handoff.context_notes.get().map(String::as_str)
    }

    pub fn blockers(&self) -> Vec<Blocker> {
        objects(self.handoff.blockers.items())
            .map(|b| Blocker {
                description: text_in(b.get("description"))
                    .map(str::to_string)
                    .unwrap_or_else(|| b.to_string()),
                kind: text_in(b.get("type")).map(str::to_string),
                workaround: text_in(b.get("workaround")).map(str::to_string),
            })
            .collect()
    }

    /// The latest blocker as (description, GSD type): a text entry is its description.
    pub fn last_blocker(&self) -> Option<(String, Option<String>)> {
        match self.handoff.blockers.items().last()? {
            Value::String(s) => Some((s.clone(), None)),
            other => Some((scalar_in(other.get("description"))?, scalar_in(other.get("type")))),
        }
    }

    pub fn decisions(&self) -> Vec<Decision> {
        self.handoff
            .decisions
            .items()
            .iter()
            .map(|d| match text_in(d.get("decision")) {
                Some(what) => Decision {
                    decision: what.to_string(),
                    rationale: text_in(d.get("rationale")).map(str::to_string),
                },
                None => Decision { decision: d.to_string(), rationale: None },
            })
            .collect()
    }

    /// The latest decision as (decision, rationale): a text entry is the decision.
    pub fn last_decision(&self) -> Option<(String, Option<String>)> {
        match self.handoff.decisions.items().last()? {
            Value::String(s) => Some((s.clone(), None)),
            other => Some((scalar_in(other.get("decision"))?, scalar_in(other.get("rationale")))),
        }
    }

    pub fn human_actions(&self) -> Vec<HumanAction> {
        objects(self.handoff.human_actions_pending.items())
            .map(|a| HumanAction {
                action: text_in(a.get("action")).map(str::to_string).unwrap_or_else(|| a.to_string()),
                blocking: a.get("blocking") == Some(&Value::Bool(true)),
            })
            .collect()
    }

    /// `completed_tasks` (which also holds the task in progress, as GSD does).
    pub fn completed_tasks(&self) -> Vec<TaskEntry> {
        tasks(self.handoff.completed_tasks.items())
    }

    /// The names of the tasks done: text entries, and entries whose status is done
    /// (`done`, `completed`, `complete`, or none).
    pub fn done_task_names(&self) -> Vec<String> {
        self.handoff
            .completed_tasks
            .items()
            .iter()
            .filter_map(|task| match task {
                Value::String(s) => Some(s.clone()),
                other => {
                    let status = other.get("status").and_then(Value::as_str).unwrap_or("done");
                    matches!(status, "done" | "completed" | "complete")
                        .then(|| scalar_in(other.get("name")))
                        .flatten()
                }
            })
            .collect()
    }

    pub fn remaining_tasks(&self) -> Vec<TaskEntry> {
        tasks(self.handoff.remaining_tasks.items())
    }

    pub fn uncommitted_files(&self) -> Vec<String> {
        strings(self.handoff.uncommitted_files.items())
    }

    /// The `baton` section, typed.
    pub fn baton(&self) -> BatonSection<'_> {
        BatonSection { baton: self.handoff.baton.get() }
    }

    /// The `baton` section to change (created when missing or not an object).
    pub fn baton_mut(&mut self) -> &mut Baton {
        match &mut self.handoff.baton {
            Field::Set(baton) => baton,
            other => {
                *other = Field::Set(Baton::default());
                match other {
                    Field::Set(baton) => baton,
                    _ => unreachable!("the baton section was just set"),
                }
            }
        }
    }
}

/// The typed view of the `baton` section: what readers need, read leniently.
#[derive(Debug, Clone, Copy)]
pub struct BatonSection<'a> {
    baton: Option<&'a Baton>,
}

impl<'a> BatonSection<'a> {
    fn text(&self, field: impl Fn(&'a Baton) -> &'a Field<String>) -> Option<&'a str> {
        self.baton.map(field)?.text()
    }

    fn list(&self, field: impl Fn(&'a Baton) -> &'a Field<Vec<Value>>) -> &'a [Value] {
        self.baton.map(|b| field(b).items()).unwrap_or_default()
    }

    fn value(&self, field: impl Fn(&'a Baton) -> &'a Field<Value>) -> Option<&'a Value> {
        self.baton.map(field)?.get()
    }

    /// The section itself, when the handoff has one.
    pub fn section(&self) -> Option<&'a Baton> {
        self.baton
    }

    pub fn exists(&self) -> bool {
        self.baton.is_some()
    }

    pub fn id(&self) -> Option<&'a str> {
        self.text(|b| &b.id)
    }

    pub fn session_id(&self) -> Option<&'a str> {
        self.text(|b| &b.session_id)
    }

    pub fn trigger(&self) -> Option<&'a str> {
        self.text(|b| &b.trigger)
    }

    pub fn branch(&self) -> Option<&'a str> {
        self.text(|b| &b.branch)
    }

    pub fn first_request(&self) -> Option<&'a str> {
        self.text(|b| &b.first_request)
    }

    pub fn model(&self) -> Option<&'a str> {
        self.text(|b| &b.model)
    }

    pub fn head(&self) -> Option<&'a str> {
        self.text(|b| &b.head)
    }

    pub fn goal(&self) -> Option<&'a str> {
        self.text(|b| &b.goal)
    }

    pub fn plan_path(&self) -> Option<&'a str> {
        self.text(|b| &b.plan_path)
    }

    pub fn task_status(&self) -> Option<&'a str> {
        self.text(|b| &b.task_status)
    }

    /// `key_paths` (a pulled handoff's), when it is a list.
    pub fn key_paths(&self) -> Option<Vec<String>> {
        self.baton?.key_paths.get().map(|list| strings(list))
    }

    /// The GitHub issue the handoff was pushed to, and the repository it is in.
    pub fn github_issue(&self) -> Option<(u64, Option<&'a str>)> {
        let baton = self.baton?;
        Some((*baton.github_issue.get()?, baton.github_repo.get().map(String::as_str)))
    }

    /// Commits made in the session: (short id, subject).
    pub fn session_commits(&self) -> Vec<(String, String)> {
        objects(self.list(|b| &b.session_commits))
            .map(|c| {
                (
                    text_in(c.get("short")).unwrap_or("?").to_string(),
                    text_in(c.get("subject")).map(str::to_string).unwrap_or_else(|| c.to_string()),
                )
            })
            .collect()
    }

    pub fn base_commit(&self) -> Option<&'a str> {
        self.text(|b| &b.base_commit)
    }

    pub fn context(&self) -> Option<&'a str> {
        self.text(|b| &b.context)
    }

    pub fn used_pct(&self) -> Option<u64> {
        self.value(|b| &b.figures)?.get("used_pct")?.as_u64()
    }

    pub fn refreshes(&self) -> Option<u64> {
        self.baton?.refreshes.get().copied()
    }

    pub fn first_written(&self) -> Option<&'a str> {
        self.text(|b| &b.first_written)
    }

    /// The text baton generated for a field last time (to tell an edit from its own).
    pub fn generated_text(&self, key: &str) -> Option<&'a str> {
        self.baton?.generated_text.get()?.get(key)?.as_str()
    }

    pub fn files_touched(&self) -> Vec<String> {
        strings(self.list(|b| &b.files_touched))
    }

    /// The user's corrections and constraints, quoted from the transcript (data).
    pub fn user_words(&self) -> Vec<String> {
        strings(self.list(|b| &b.user_words))
    }

    /// The agent's last message before the pause (its words, data to check).
    pub fn agent_progress(&self) -> Option<&'a str> {
        self.value(|b| &b.agent_progress).and_then(|p| text_in(p.get("text")))
    }

    /// The latest shell commands, as `(command, exit code, failed)`.
    pub fn commands_run(&self) -> Vec<(String, Option<i64>, bool)> {
        objects(self.list(|b| &b.commands_run))
            .filter_map(|c| {
                Some((
                    text_in(c.get("command"))?.to_string(),
                    c.get("exit_code").and_then(Value::as_i64),
                    c.get("failed") == Some(&Value::Bool(true)),
                ))
            })
            .collect()
    }

    /// The last request of the session.
    pub fn last_request(&self) -> Option<&'a str> {
        self.text(|b| &b.last_request)
    }

    /// Background processes that were still running.
    pub fn background_processes(&self) -> Vec<BackgroundProcess> {
        objects(self.list(|b| &b.background_processes))
            .filter(|p| p.get("stopped") != Some(&Value::Bool(true)))
            .filter_map(|p| {
                Some(BackgroundProcess {
                    command: text_in(p.get("command"))?.to_string(),
                    id: text_in(p.get("id")).map(str::to_string),
                })
            })
            .collect()
    }

    /// The last failure, when it did not succeed later.
    pub fn last_failure(&self) -> Option<Failure> {
        let f = self.value(|b| &b.last_failure).filter(|f| f.is_object())?;
        if f.get("succeeded_later") == Some(&Value::Bool(true)) {
            return None;
        }
        Some(Failure {
            what: text_in(f.get("command")).or(text_in(f.get("tool"))).unwrap_or("a tool call").to_string(),
            error_line: text_in(f.get("error_line")).map(str::to_string),
        })
    }

    /// The checkpoint as recorded.
    pub fn checkpoint(&self) -> CheckpointInfo {
        let c = self.value(|b| &b.checkpoint);
        CheckpointInfo {
            reference: text_in(c.and_then(|c| c.get("reference"))).map(str::to_string),
            short: text_in(c.and_then(|c| c.get("short"))).map(str::to_string),
            branch: text_in(c.and_then(|c| c.get("branch"))).map(str::to_string),
            commit: text_in(c.and_then(|c| c.get("commit"))).map(str::to_string),
        }
    }

    /// Sessions that were given this handoff: (session, RFC 3339 time).
    pub fn resumptions(&self) -> Vec<(String, String)> {
        objects(self.list(|b| &b.resumptions))
            .filter_map(|r| {
                Some((text_in(r.get("session_id"))?.to_string(), text_in(r.get("at"))?.to_string()))
            })
            .collect()
    }
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

/// A `blockers[]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Blocker {
    pub description: String,
    pub kind: Option<String>,
    pub workaround: Option<String>,
}

/// A `decisions[]` entry: the decision and its rationale, or the entry as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub decision: String,
    pub rationale: Option<String>,
}

/// A `human_actions_pending[]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct HumanAction {
    pub action: String,
    pub blocking: bool,
}

/// A `completed_tasks[]` / `remaining_tasks[]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskEntry {
    pub name: String,
    /// `done`, `in_progress`, `not_started` (or whatever was written).
    pub status: Option<String>,
    pub commit: Option<String>,
}

/// A background process recorded as running.
#[derive(Debug, Clone, PartialEq)]
pub struct BackgroundProcess {
    pub command: String,
    pub id: Option<String>,
}

/// The last failed tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub what: String,
    pub error_line: Option<String>,
}

/// `baton.checkpoint`, as far as readers need it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckpointInfo {
    pub reference: Option<String>,
    pub short: Option<String>,
    pub branch: Option<String>,
    pub commit: Option<String>,
}

fn text_in(value: Option<&Value>) -> Option<&str> {
    value?.as_str().filter(|s| !s.trim().is_empty())
}

/// Text or a number, written out; blank text is none.
fn scalar_in(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn objects(list: &[Value]) -> impl Iterator<Item = &Value> {
    list.iter().filter(|v| v.is_object())
}

fn strings(list: &[Value]) -> Vec<String> {
    list.iter().filter_map(Value::as_str).map(str::to_string).collect()
}

fn tasks(list: &[Value]) -> Vec<TaskEntry> {
    objects(list)
        .filter_map(|t| {
            Some(TaskEntry {
                name: text_in(t.get("name"))?.to_string(),
                status: text_in(t.get("status")).map(str::to_string),
                commit: text_in(t.get("commit")).map(str::to_string),
            })
        })
        .collect()
}

/// Why a path in a handoff is not one baton may act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathRefused {
    #[error("empty or too long")]
    Length,
    #[error("holds control characters or backslashes")]
    Characters,
    #[error("is absolute")]
    Absolute,
    #[error("climbs out with `..`")]
    ClimbsOut,
    #[error("is inside .git")]
    InsideGit,
    #[error("is not inside .planning/")]
    OutsidePlanning,
    #[error("is not a {CONTINUE_HERE}")]
    NotContinueHere,
    #[error("goes through a symlink")]
    Symlink,
}

/// Whether `text` names a `.continue-here.md` baton may read, move or delete: relative,
/// inside `.planning/`, no `..` or `.`, no `.git` part, no control characters, and no
/// part of it (under `root`) a symlink. Returns the path.
pub fn check_continue_here(text: &str, root: &Path) -> Result<PathBuf, PathRefused> {
    check_continue_here_in(text, root, None)
}

/// [`check_continue_here`], also accepting one directly in `dir` (the configured
/// `handoff.dir`, itself relative and outside `.git`).
pub fn check_continue_here_in(text: &str, root: &Path, dir: Option<&Path>) -> Result<PathBuf, PathRefused> {
    if text.is_empty() || text.len() > 1024 {
        return Err(PathRefused::Length);
    }
    if text.chars().any(|c| c.is_control()) || text.contains('\\') {
        return Err(PathRefused::Characters);
    }
    let path = Path::new(text);
    if !path.is_relative() {
        return Err(PathRefused::Absolute);
    }
    let mut parts = vec![];
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::CurDir => {}
            _ => return Err(PathRefused::ClimbsOut),
        }
    }
    if parts.iter().any(|p| p.eq_ignore_ascii_case(".git")) {
        return Err(PathRefused::InsideGit);
    }
    let in_handoff_dir = dir.is_some_and(|d| {
        d.is_relative()
            && d.components().all(|c| matches!(c, Component::Normal(_)))
            && !d.components().any(|c| c.as_os_str().eq_ignore_ascii_case(".git"))
            && parts.iter().collect::<PathBuf>() == d.join(CONTINUE_HERE)
    });
    if parts.first().map(String::as_str) != Some(".planning") && !in_handoff_dir {
        return Err(PathRefused::OutsidePlanning);
    }
    if parts.last().map(String::as_str) != Some(CONTINUE_HERE) {
        return Err(PathRefused::NotContinueHere);
    }
    // No part of it may be a symlink (it could lead out of the project).
    let mut at = root.to_path_buf();
    for part in &parts {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => return Err(PathRefused::Symlink),
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Ok(parts.iter().collect())
}

/// Lists baton cuts when the file would exceed [`SIZE_LIMIT`], longest first.
const CUTTABLE: &[&str] = &[
    "uncommitted_files",
    "completed_tasks",
    "remaining_tasks",
    "decisions",
    "blockers",
    "human_actions_pending",
];
const CUTTABLE_BATON: &[&str] = &[
    "files_touched",
    "commands_run",
    "session_commits",
    "background_processes",
    "placeholder_summaries",
    "resumptions",
];

fn pretty(value: &Value) -> Result<Vec<u8>, HandoffError> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(HandoffError::Encode)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Cuts a list to `keep` entries and appends an "and N more" entry (a string for a list
/// of strings, an object with `name`/`description` for a list of objects). Returns N.
fn cut_list(list: &mut Vec<Value>, keep: usize) -> usize {
    // A previous cut's marker is not an entry.
    let marker = |v: &Value| {
        v.get("cut") == Some(&Value::Bool(true))
            || v.as_str().is_some_and(|s| s.starts_with("… and ") && s.ends_with(" more"))
    };
    list.retain(|v| !marker(v));
    if list.len() <= keep {
        return 0;
    }
    let more = list.len() - keep;
    let strings = list.iter().all(Value::is_string);
    list.truncate(keep);
    let text = format!("… and {more} more");
    list.push(if strings {
        Value::from(text)
    } else {
        serde_json::json!({"name": text, "description": text, "cut": true})
    });
    more
}

/// Adds `more` entries left out of `key` to the record of cuts.
fn add_cut(cuts: &mut Map<String, Value>, key: &str, more: usize) {
    if more > 0 {
        let before = cuts.get(key).and_then(Value::as_u64).unwrap_or(0);
        cuts.insert(key.into(), Value::from(before + more as u64));
    }
}

/// Cuts a string to at most `max` characters.
fn cut_text(value: &mut Value, max: usize) -> bool {
    if let Value::String(s) = value {
        if s.chars().count() > max {
            let mut cut: String = s.chars().take(max).collect();
            cut.push_str("… (cut)");
            *s = cut;
            return true;
        }
    }
    false
}

/// The bytes of a HANDOFF.json baton writes: at most [`SIZE_LIMIT`]. Long lists are cut
/// (halved until it fits, each cut recorded in `baton.cut` as field → entries left out),
/// then long texts; fields of unknown purpose go last, named in `baton.cut`.
pub fn encode(value: &Value) -> Result<Vec<u8>, HandoffError> {
    let bytes = pretty(value)?;
    if bytes.len() <= SIZE_LIMIT {
        return Ok(bytes);
    }
    let mut value = value.clone();
    let Some(object) = value.as_object_mut() else { return Ok(bytes) };
    let mut cuts = Map::new();
    let mut keep = 200usize;
    loop {
        for key in CUTTABLE {
            if let Some(Value::Array(list)) = object.get_mut(*key) {
                add_cut(&mut cuts, key, cut_list(list, keep));
            }
        }
        if let Some(Value::Object(baton)) = object.get_mut("baton") {
            for key in CUTTABLE_BATON {
                if let Some(Value::Array(list)) = baton.get_mut(*key) {
                    add_cut(&mut cuts, &format!("baton.{key}"), cut_list(list, keep));
                }
            }
        }
        let size = pretty(&Value::Object(object.clone()))?.len();
        if size <= SIZE_LIMIT - 1024 || keep <= 5 {
            break;
        }
        keep /= 2;
    }
    // Long texts anywhere (including inside list entries).
    if pretty(&Value::Object(object.clone()))?.len() > SIZE_LIMIT - 1024 {
        for (key, field) in object.iter_mut() {
            let mut cut = false;
            walk_strings(field, &mut |s| cut |= cut_text(s, 2000));
            if cut {
                cuts.insert(format!("{key} (texts)"), Value::from("cut to 2000 characters"));
            }
        }
    }
    // Still too big: drop fields nobody reads, biggest first.
    let known = is_known_field;
    loop {
        if pretty(&Value::Object(object.clone()))?.len() <= SIZE_LIMIT - 1024 {
            break;
        }
        let biggest = object
            .iter()
            .filter(|(k, _)| !known(k.as_str()))
            .map(|(k, v)| (k.clone(), v.to_string().len()))
            .max_by_key(|(_, n)| *n);
        let Some((key, _)) = biggest else { break };
        object.remove(&key);
        cuts.insert(key, Value::from("dropped: too large"));
    }
    if !cuts.is_empty() {
        if let Some(Value::Object(baton)) = object.get_mut("baton") {
            baton.insert("cut".into(), Value::Object(cuts));
        } else {
            object.insert("baton".into(), serde_json::json!({"cut": cuts}));
        }
    }
    let bytes = pretty(&value)?;
    if bytes.len() > SIZE_LIMIT {
        return Err(HandoffError::TooBig(bytes.len()));
    }
    Ok(bytes)
}

fn walk_strings(value: &mut Value, f: &mut impl FnMut(&mut Value)) {
    match value {
        Value::String(_) => f(value),
        Value::Array(list) => list.iter_mut().for_each(|v| walk_strings(v, f)),
        Value::Object(map) => map.values_mut().for_each(|v| walk_strings(v, f)),
        _ => {}
    }
}

/// Writes HANDOFF.json atomically (through [`encode`]).
pub fn write(path: &Path, handoff: &HandoffDoc) -> Result<(), HandoffError> {
    let bytes = encode(&handoff.to_value())?;
    fsx::write_atomic(path, &bytes, fsx::WriteOptions::USER)
        .map_err(|source| HandoffError::Write { path: path.to_path_buf(), source })
}

/// What survives a rewrite besides the agent's fields: the GitHub issue a handoff was
/// pushed to is carried into the handoff that replaces it, so the next push goes to the
/// same issue. `previous` is the old HANDOFF.json, `into` the new.
pub fn carry_issue(previous: Option<&HandoffDoc>, into: &mut HandoffDoc) {
    let Some(old) = previous.and_then(|p| p.handoff.baton.get()) else { return };
    let Field::Set(baton) = &mut into.handoff.baton else { return };
    if baton.github_issue.is_missing() && old.github_issue.is_present() {
        baton.github_issue.clone_from(&old.github_issue);
    }
    if baton.github_repo.is_missing() && old.github_repo.is_present() {
        baton.github_repo.clone_from(&old.github_repo);
    }
    if baton.github_url.is_missing() && old.github_url.is_present() {
        baton.github_url.clone_from(&old.github_url);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(value: Value) -> HandoffDoc {
        HandoffDoc::parse(value.to_string().as_bytes(), Path::new("/nonexistent-root")).unwrap()
    }

    #[test]
    fn versions() {
        assert_eq!(Version::parse(Some(&json!("1.0"))), Version::Known { minor: 0 });
        assert_eq!(Version::parse(Some(&json!("1.3"))), Version::Known { minor: 3 });
        assert_eq!(Version::parse(Some(&json!(1))), Version::Known { minor: 0 });
        assert_eq!(Version::parse(None), Version::Missing);
        assert_eq!(Version::parse(Some(&json!("2.0"))), Version::Newer("2.0".into()));
        assert!(matches!(Version::parse(Some(&json!("x"))), Version::Invalid(_)));
        assert!(matches!(Version::parse(Some(&json!([1]))), Version::Invalid(_)));
        assert!(!parse(json!({"version": "2.0"})).writable());
        assert!(!parse(json!({"version": "1.0", "baton": {"schema": "7.1"}})).writable());
        assert!(parse(json!({"version": "1.2"})).writable());
    }

    #[test]
    fn only_continue_here_inside_planning_is_kept() {
        let root = Path::new("/nonexistent-root");
        assert!(check_continue_here(".planning/.continue-here.md", root).is_ok());
        assert!(check_continue_here(".planning/phases/03-x/.continue-here.md", root).is_ok());
        for bad in [
            ".git/HEAD",
            ".git/index",
            "src/main.rs",
            "/etc/passwd",
            ".planning/../src/.continue-here.md",
            ".planning/.git/.continue-here.md",
            ".planning/phases/x/PLAN.md",
            "",
            ".planning\\.continue-here.md",
        ] {
            assert!(check_continue_here(bad, root).is_err(), "{bad}");
        }
        let doc = parse(json!({"phase_dir": "/etc", "baton": {"continue_here": ".git/HEAD"}}));
        assert_eq!(doc.continue_here(), None);
        assert_eq!(doc.problems().len(), 2);
        let doc = parse(json!({"phase_dir": ".planning/phases/01-a/"}));
        assert_eq!(doc.continue_here(), Some(PathBuf::from(".planning/phases/01-a/.continue-here.md")));
    }

    #[test]
    fn the_configured_handoff_dir_holds_its_own_continue_here() {
        let root = Path::new("/nonexistent-root");
        let dir = Some(Path::new("notes/handoff"));
        assert!(check_continue_here_in("notes/handoff/.continue-here.md", root, dir).is_ok());
        assert!(check_continue_here_in("notes/other/.continue-here.md", root, dir).is_err());
        assert!(check_continue_here_in(".git/.continue-here.md", root, Some(Path::new(".git"))).is_err());
        assert!(check_continue_here("notes/handoff/.continue-here.md", root).is_err());
    }

    #[test]
    fn symlinked_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".planning")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join(".planning/phases")).unwrap();
        assert!(check_continue_here(".planning/phases/.continue-here.md", dir.path()).is_err());
        assert!(check_continue_here(".planning/.continue-here.md", dir.path()).is_ok());
    }

    #[test]
    fn wrong_types_read_as_absent() {
        let doc = parse(json!({
            "status": 3, "phase": 4, "task": "x", "blockers": "no", "uncommitted_files": [1, "a"],
            "completed_tasks": [{"name": 5}, {"name": "t", "status": "done"}], "baton": "x"
        }));
        assert_eq!(doc.status(), None);
        assert_eq!(doc.phase().as_deref(), Some("4"));
        assert_eq!(doc.task(), None);
        assert!(doc.blockers().is_empty());
        assert_eq!(doc.uncommitted_files(), ["a"]);
        assert_eq!(doc.completed_tasks().len(), 1);
        assert_eq!(doc.baton().id(), None);
    }

    #[test]
    fn encode_stays_under_the_limit_and_says_what_was_cut() {
        let files: Vec<String> = (0..50_000).map(|i| format!("src/generated/file-{i:05}.rs")).collect();
        let value = json!({"version": "1.0", "uncommitted_files": files, "next_action": "x".repeat(100_000),
            "agent_notes": "y".repeat(200_000), "baton": {"id": "a"}});
        let bytes = encode(&value).unwrap();
        assert!(bytes.len() <= SIZE_LIMIT, "{}", bytes.len());
        let back: Value = serde_json::from_slice(&bytes).unwrap();
        let list = back["uncommitted_files"].as_array().unwrap();
        assert!(list.last().unwrap().as_str().unwrap().starts_with("… and "), "{:?}", list.last());
        assert!(back["baton"]["cut"]["uncommitted_files"].as_u64().unwrap() > 49_000);
        assert_eq!(back["baton"]["id"], "a");
        // Small ones are untouched.
        let small = json!({"version": "1.0", "x": 1});
        assert_eq!(encode(&small).unwrap(), pretty(&small).unwrap());
    }

    #[test]
    fn the_issue_is_carried_into_the_next_handoff() {
        let old =
            parse(json!({"baton": {"github_issue": 7, "github_repo": "acme/shop", "source": "github"}}));
        let mut new = parse(json!({"baton": {"id": "n"}}));
        carry_issue(Some(&old), &mut new);
        assert_eq!(
            new.to_value()["baton"],
            json!({"id": "n", "github_issue": 7, "github_repo": "acme/shop"})
        );
        let mut untouched = parse(json!({"baton": {"github_issue": 9}}));
        carry_issue(Some(&old), &mut untouched);
        assert_eq!(untouched.to_value()["baton"]["github_issue"], 9);
    }

    #[test]
    fn a_rewrite_keeps_unknown_and_mistyped_fields_as_written() {
        let text = json!({
            "version": "1.2", "status": "paused", "task": "three", "phase": 4, "plan": "02",
            "agent_notes": {"free": [1, "x"]}, "blockers": "none",
            "baton": {"id": "a", "refreshes": "many", "x_custom": [1, 2], "figures": {"used_pct": 80}},
            "after": true
        });
        let doc = parse(text.clone());
        assert_eq!(
            (doc.task(), doc.phase().as_deref(), doc.plan().as_deref()),
            (None, Some("4"), Some("02"))
        );
        assert_eq!(doc.baton().refreshes(), None);
        assert_eq!(doc.baton().used_pct(), Some(80));
        assert!(doc.blockers().is_empty());
        assert_eq!(doc.to_value(), text, "every field back as it was");
        // GSD's order first, then the unknown fields, then baton's section.
        let keys: Vec<String> = doc.to_value().as_object().unwrap().keys().cloned().collect();
        assert_eq!(
            keys,
            ["version", "phase", "plan", "task", "status", "blockers", "agent_notes", "after", "baton"]
        );
        // A baton section that is not an object is kept too, and read as none.
        let odd = parse(json!({"baton": ["x"]}));
        assert!(!odd.baton().exists());
        assert_eq!(odd.to_value(), json!({"baton": ["x"]}));
        assert_eq!(odd.problems().len(), 1);
    }

    #[test]
    fn a_fresh_handoff_has_every_gsd_field() {
        let value = HandoffDoc::from_handoff(Handoff::fresh(), Path::new("/")).to_value();
        let keys: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
        let mut want = vec!["version"];
        want.extend_from_slice(GSD_FIELDS);
        want.push("baton");
        assert_eq!(keys, want);
        assert_eq!(value["phase"], Value::Null);
        assert_eq!(value["remaining_tasks"], json!([]));
    }

    #[test]
    fn a_field_written_twice_reads_as_the_last() {
        let doc =
            HandoffDoc::parse(br#"{"status": "done", "status": "paused", "x": 1, "x": 2}"#, Path::new("/"));
        let doc = doc.unwrap();
        assert!(doc.is_paused());
        assert_eq!(doc.to_value(), json!({"status": "paused", "x": 2}));
        for (bad, why) in
            [(&b" "[..], "is empty"), (b"[1]", "is not a JSON object"), (b"{", "is not valid JSON")]
        {
            let error = HandoffDoc::parse(bad, Path::new("/")).unwrap_err().to_string();
            assert!(error.starts_with(why), "{error}");
        }
    }

    #[test]
    fn the_statusline_reads_status_alone() {
        assert!(is_paused(br#"{"x": [1, {"y": 2}], "status": "paused"}"#));
        assert!(!is_paused(br#"{"status": "paused", "status": "resumed"}"#));
        assert!(!is_paused(br#"["paused"]"#));
        assert!(!is_paused(br#"{"status": "paused"} x"#));
        assert!(!is_paused(b""));
    }
}
