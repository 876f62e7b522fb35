//! The typed, versioned HANDOFF.json: GSD's schema 1.0 with baton's `baton` section, read
//! and written here and nowhere else.
//!
//! A HANDOFF.json may come from anywhere (a clone, GSD, a person, an attacker), so
//! [`HandoffDoc::parse`] checks it once: the `version` (GSD's "1.0" and any 1.x minor are
//! read; a newer major is never rewritten), every value by type (a wrong type counts as
//! absent), and every path baton could act on (`baton.continue_here`, `phase_dir`): only a
//! `.continue-here.md` inside `.planning/`, relative, without `..`, outside `.git`, and not
//! through a symlink out of the project is kept. What is rejected is listed in
//! [`HandoffDoc::problems`]. The readers use the typed accessors; the object itself is
//! kept whole, so a rewrite preserves the agent's fields and fields baton does not know.
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

use serde::Serialize;
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

/// A HANDOFF.json as baton writes it: GSD's fields in GSD's order, then the fields neither
/// GSD nor baton knows (kept from the file it replaces, see [`unknown_fields`]), then
/// baton's section. Every writer builds one (`handoff::model`, the GitHub restore).
#[derive(Debug, Clone, Serialize)]
pub struct GsdHandoff {
    /// Always [`GSD_VERSION`] (set by `Default`).
    pub version: &'static str,
    pub timestamp: String,
    pub phase: Option<String>,
    pub phase_name: Option<String>,
    pub phase_dir: Option<String>,
    /// A number when the plan's id is one, else its text (GSD writes numbers).
    pub plan: Value,
    pub task: Option<u64>,
    pub total_tasks: Option<u64>,
    pub status: String,
    pub completed_tasks: Vec<Value>,
    pub remaining_tasks: Vec<Value>,
    pub blockers: Vec<Value>,
    pub human_actions_pending: Vec<Value>,
    pub decisions: Vec<Value>,
    pub uncommitted_files: Vec<Value>,
    pub next_action: String,
    pub context_notes: String,
    #[serde(flatten)]
    pub unknown: Map<String, Value>,
    pub baton: Map<String, Value>,
}

impl Default for GsdHandoff {
    fn default() -> Self {
        GsdHandoff {
            version: GSD_VERSION,
            timestamp: String::new(),
            phase: None,
            phase_name: None,
            phase_dir: None,
            plan: Value::Null,
            task: None,
            total_tasks: None,
            status: String::new(),
            completed_tasks: vec![],
            remaining_tasks: vec![],
            blockers: vec![],
            human_actions_pending: vec![],
            decisions: vec![],
            uncommitted_files: vec![],
            next_action: String::new(),
            context_notes: String::new(),
            unknown: Map::new(),
            baton: Map::new(),
        }
    }
}

impl GsdHandoff {
    /// The JSON object, in the order above.
    pub fn into_object(self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(object)) => object,
            // Strings, numbers and JSON values only: serialising cannot fail.
            _ => Map::new(),
        }
    }
}

/// Whether GSD or baton owns a top-level field (`version`, GSD's fields, `baton`).
pub fn is_known_field(key: &str) -> bool {
    key == "version" || key == "baton" || GSD_FIELDS.contains(&key)
}

/// The top-level fields of `object` that neither GSD nor baton knows: a rewrite keeps them.
pub fn unknown_fields(object: &Map<String, Value>) -> Map<String, Value> {
    object.iter().filter(|(key, _)| !is_known_field(key)).map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// A parsed HANDOFF.json.
#[derive(Debug, Clone)]
pub struct HandoffDoc {
    object: Map<String, Value>,
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

/// The object in bytes, parsed once, or why they are not a HANDOFF.json.
fn parse_object(bytes: &[u8]) -> Result<Map<String, Value>, HandoffError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(HandoffError::Empty);
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(HandoffError::NotAnObject),
        Err(e) => Err(HandoffError::Json(e)),
    }
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
        Ok(HandoffDoc::from_object_in(parse_object(bytes)?, root, dir))
    }

    /// Validates a JSON object (one baton built, or one read).
    pub fn from_object(object: Map<String, Value>, root: &Path) -> HandoffDoc {
        HandoffDoc::from_object_in(object, root, None)
    }

    fn from_object_in(object: Map<String, Value>, root: &Path, dir: Option<&Path>) -> HandoffDoc {
        let mut problems = vec![];
        let version = Version::parse(object.get("version"));
        match &version {
            Version::Newer(v) => problems.push(format!(
                "version {v} is newer than this baton reads (1.x): it is shown, never rewritten"
            )),
            Version::Invalid(v) => problems.push(format!("version {v:?} is not a version; read as 1.0")),
            _ => {}
        }
        let baton = object.get("baton").and_then(Value::as_object);
        if object.get("baton").is_some_and(|b| !b.is_object() && !b.is_null()) {
            problems.push("`baton` is not an object; ignored".into());
        }
        let baton_version = Version::parse(baton.and_then(|b| b.get("schema")));
        if let Version::Newer(v) = &baton_version {
            problems.push(format!("baton section schema {v} is newer than this baton: never rewritten"));
        }
        let continue_here = match baton.and_then(|b| b.get("continue_here")) {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => match check_continue_here_in(text, root, dir) {
                Ok(path) => Some(path),
                Err(why) => {
                    problems.push(format!("baton.continue_here {:?} ignored: {why}", short(text, 120)));
                    None
                }
            },
            Some(_) => {
                problems.push("baton.continue_here is not a string; ignored".into());
                None
            }
        };
        let phase_dir = match object.get("phase_dir") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => {
                match check_continue_here(&format!("{}/{CONTINUE_HERE}", text.trim_end_matches('/')), root) {
                    Ok(_) => Some(PathBuf::from(text.trim_end_matches('/'))),
                    Err(why) => {
                        problems.push(format!("phase_dir {:?} ignored: {why}", short(text, 120)));
                        None
                    }
                }
            }
            Some(_) => {
                problems.push("phase_dir is not a string; ignored".into());
                None
            }
        };
        HandoffDoc { object, version, baton_version, continue_here, phase_dir, problems }
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

    /// The whole object, as read (unknown fields included).
    pub fn object(&self) -> &Map<String, Value> {
        &self.object
    }

    pub fn into_value(self) -> Value {
        Value::Object(self.object)
    }

    pub fn to_value(&self) -> Value {
        Value::Object(self.object.clone())
    }

    /// The `.continue-here.md` this handoff names (validated), else the one its
    /// `phase_dir` implies (validated).
    pub fn continue_here(&self) -> Option<PathBuf> {
        self.continue_here.clone().or_else(|| self.phase_dir.as_ref().map(|d| d.join(CONTINUE_HERE)))
    }

    fn text(&self, key: &str) -> Option<&str> {
        text_in(self.object.get(key))
    }

    /// A top-level field as text: strings as they are, numbers written out.
    fn scalar(&self, key: &str) -> Option<String> {
        scalar_in(self.object.get(key))
    }

    pub fn status(&self) -> Option<&str> {
        self.text("status")
    }

    pub fn is_paused(&self) -> bool {
        self.status() == Some("paused")
    }

    pub fn timestamp(&self) -> Option<&str> {
        self.text("timestamp")
    }

    pub fn phase(&self) -> Option<String> {
        self.scalar("phase")
    }

    pub fn phase_name(&self) -> Option<&str> {
        self.text("phase_name")
    }

    pub fn plan(&self) -> Option<String> {
        self.scalar("plan")
    }

    pub fn task(&self) -> Option<u64> {
        self.object.get("task").and_then(Value::as_u64)
    }

    pub fn total_tasks(&self) -> Option<u64> {
        self.object.get("total_tasks").and_then(Value::as_u64)
    }

    pub fn next_action(&self) -> Option<&str> {
        self.text("next_action")
    }

    pub fn context_notes(&self) -> Option<&str> {
        self.text("context_notes")
    }

    pub fn blockers(&self) -> Vec<Blocker> {
        objects(self.object.get("blockers"))
            .map(|b| Blocker {
                description: text_in(b.get("description"))
                    .map(str::to_string)
                    .unwrap_or_else(|| b.to_string()),
                kind: text_in(b.get("type")).map(str::to_string),
                workaround: text_in(b.get("workaround")).map(str::to_string),
            })
            .collect()
    }

    pub fn decisions(&self) -> Vec<Decision> {
        self.list("decisions")
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

    pub fn human_actions(&self) -> Vec<HumanAction> {
        objects(self.object.get("human_actions_pending"))
            .map(|a| HumanAction {
                action: text_in(a.get("action")).map(str::to_string).unwrap_or_else(|| a.to_string()),
                blocking: a.get("blocking") == Some(&Value::Bool(true)),
            })
            .collect()
    }

    /// `completed_tasks` (which also holds the task in progress, as GSD does).
    pub fn completed_tasks(&self) -> Vec<TaskEntry> {
        tasks(self.object.get("completed_tasks"))
    }

    pub fn remaining_tasks(&self) -> Vec<TaskEntry> {
        tasks(self.object.get("remaining_tasks"))
    }

    pub fn uncommitted_files(&self) -> Vec<String> {
        strings(self.object.get("uncommitted_files"))
    }

    /// A raw top-level list (for fields a refresh carries over as written).
    pub fn list(&self, key: &str) -> Vec<Value> {
        self.object.get(key).and_then(Value::as_array).cloned().unwrap_or_default()
    }

    /// The `baton` section, typed.
    pub fn baton(&self) -> BatonSection<'_> {
        BatonSection { object: self.object.get("baton").and_then(Value::as_object) }
    }

    /// Changes the `baton` section (created when missing or not an object).
    pub fn edit_baton(&mut self, edit: impl FnOnce(&mut Map<String, Value>)) {
        let baton = self.object.entry("baton").or_insert_with(|| Value::Object(Map::new()));
        if !baton.is_object() {
            *baton = Value::Object(Map::new());
        }
        if let Some(baton) = baton.as_object_mut() {
            edit(baton);
        }
    }
}

/// The typed view of the `baton` section.
#[derive(Debug, Clone, Copy)]
pub struct BatonSection<'a> {
    object: Option<&'a Map<String, Value>>,
}

impl<'a> BatonSection<'a> {
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.object?.get(key)
    }

    fn text(&self, key: &str) -> Option<&'a str> {
        text_in(self.get(key))
    }

    pub fn exists(&self) -> bool {
        self.object.is_some()
    }

    pub fn id(&self) -> Option<&'a str> {
        self.text("id")
    }

    pub fn session_id(&self) -> Option<&'a str> {
        self.text("session_id")
    }

    pub fn trigger(&self) -> Option<&'a str> {
        self.text("trigger")
    }

    pub fn branch(&self) -> Option<&'a str> {
        self.text("branch")
    }

    pub fn first_request(&self) -> Option<&'a str> {
        self.text("first_request")
    }

    pub fn model(&self) -> Option<&'a str> {
        self.text("model")
    }

    pub fn head(&self) -> Option<&'a str> {
        self.text("head")
    }

    /// Commits made in the session: (short id, subject).
    pub fn session_commits(&self) -> Vec<(String, String)> {
        objects(self.get("session_commits"))
            .map(|c| {
                (
                    text_in(c.get("short")).unwrap_or("?").to_string(),
                    text_in(c.get("subject")).map(str::to_string).unwrap_or_else(|| c.to_string()),
                )
            })
            .collect()
    }

    pub fn base_commit(&self) -> Option<&'a str> {
        self.text("base_commit")
    }

    pub fn context(&self) -> Option<&'a str> {
        self.text("context")
    }

    pub fn used_pct(&self) -> Option<u64> {
        self.get("figures")?.get("used_pct")?.as_u64()
    }

    pub fn refreshes(&self) -> Option<u64> {
        self.get("refreshes")?.as_u64()
    }

    pub fn first_written(&self) -> Option<&'a str> {
        self.text("first_written")
    }

    /// The text baton generated for a field last time (to tell an edit from its own).
    pub fn generated_text(&self, key: &str) -> Option<&'a str> {
        self.get("generated_text")?.get(key)?.as_str()
    }

    pub fn files_touched(&self) -> Vec<String> {
        strings(self.get("files_touched"))
    }

    /// The user's corrections and constraints, quoted from the transcript (data).
    pub fn user_words(&self) -> Vec<String> {
        strings(self.get("user_words"))
    }

    /// The agent's last message before the pause (its words, data to check).
    pub fn agent_progress(&self) -> Option<&'a str> {
        self.get("agent_progress").and_then(|p| text_in(p.get("text")))
    }

    /// The latest shell commands, as `(command, exit code, failed)`.
    pub fn commands_run(&self) -> Vec<(String, Option<i64>, bool)> {
        objects(self.get("commands_run"))
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
        self.text("last_request")
    }

    /// Background processes that were still running.
    pub fn background_processes(&self) -> Vec<BackgroundProcess> {
        objects(self.get("background_processes"))
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
        let f = self.get("last_failure").filter(|f| f.is_object())?;
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
        let c = self.get("checkpoint");
        CheckpointInfo {
            reference: text_in(c.and_then(|c| c.get("reference"))).map(str::to_string),
            short: text_in(c.and_then(|c| c.get("short"))).map(str::to_string),
            branch: text_in(c.and_then(|c| c.get("branch"))).map(str::to_string),
            commit: text_in(c.and_then(|c| c.get("commit"))).map(str::to_string),
        }
    }

    /// Sessions that were given this handoff: (session, RFC 3339 time).
    pub fn resumptions(&self) -> Vec<(String, String)> {
        objects(self.get("resumptions"))
            .filter_map(|r| {
                Some((text_in(r.get("session_id"))?.to_string(), text_in(r.get("at"))?.to_string()))
            })
            .collect()
    }
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

fn scalar_in(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn objects(value: Option<&Value>) -> impl Iterator<Item = &Value> {
    value.and_then(Value::as_array).into_iter().flatten().filter(|v| v.is_object())
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

fn tasks(value: Option<&Value>) -> Vec<TaskEntry> {
    objects(value)
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
pub fn write(path: &Path, value: &Value) -> Result<(), HandoffError> {
    let bytes = encode(value)?;
    fsx::write_atomic(path, &bytes, fsx::WriteOptions::USER)
        .map_err(|source| HandoffError::Write { path: path.to_path_buf(), source })
}

/// One line of text out of free text: control characters out, whitespace folded, cut.
pub fn one_line(text: &str, max: usize) -> String {
    let folded: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if folded.chars().count() > max {
        let mut cut: String = folded.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    } else {
        folded
    }
}

/// What survives a rewrite besides the agent's fields: the GitHub issue a handoff was
/// pushed to is carried into the handoff that replaces it, so the next push goes to the
/// same issue. `previous` is the old HANDOFF.json, `json` the new.
pub fn carry_issue(previous: Option<&Value>, json: &mut Value) {
    let Some(old) = previous.and_then(|p| p.get("baton")) else { return };
    let Some(baton) = json.get_mut("baton").and_then(Value::as_object_mut) else { return };
    for key in ["github_issue", "github_repo", "github_url"] {
        if let (Some(value), false) = (old.get(key).filter(|v| !v.is_null()), baton.contains_key(key)) {
            baton.insert(key.into(), value.clone());
        }
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
        let old = json!({"baton": {"github_issue": 7, "github_repo": "acme/shop", "source": "github"}});
        let mut new = json!({"baton": {"id": "n"}});
        carry_issue(Some(&old), &mut new);
        assert_eq!(new["baton"], json!({"id": "n", "github_issue": 7, "github_repo": "acme/shop"}));
        let mut untouched = json!({"baton": {"github_issue": 9}});
        carry_issue(Some(&old), &mut untouched);
        assert_eq!(untouched["baton"]["github_issue"], 9);
    }
}
