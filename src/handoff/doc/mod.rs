//! The typed, versioned HANDOFF.json: GSD's schema 1.0 with baton's `baton` section, read
//! and written here and nowhere else.
//!
//! A HANDOFF.json may come from anywhere (a clone, GSD, a person, an attacker), so
//! [`HandoffDoc::parse`] checks it once: the `version` (GSD's "1.0" and any 1.x minor are
//! read; a newer major is never rewritten), every value by type (a wrong type counts as
//! absent), and every path baton could act on (`baton.continue_here`, `phase_dir`): only a
//! `.continue-here.md` inside `.planning/`, relative, without `..`, outside `.git`, and not
//! through a symlink out of the project is kept ([`paths`]). What is rejected is listed in
//! [`HandoffDoc::problems`].
//!
//! The schema is [`Handoff`] ([`schema`]: GSD's fields, then the unknown ones, then
//! [`Baton`], baton's section): each field a [`Field`] ([`lenient`]), parsed once and by
//! type, so a value of another type reads as absent yet is written back as it was; unknown
//! fields, at the top and inside `baton`, are kept through `#[serde(flatten)]` maps. Each
//! nested object (a list entry, an object of baton's section) has one item struct in the
//! schema, of [`Field`]s too, by which baton writes it and every reader reads it; it is
//! stored as [`Written`], as it was found, so a rewrite keeps another writer's entries
//! byte for byte. Readers use the typed views ([`HandoffDoc`]'s and [`BatonSection`]'s,
//! which give the items), writers fill a [`Handoff`]; no other file spells a field's name.
//!
//! [`encode`] ([`cut`]) is the one writer: pretty JSON, at most [`SIZE_LIMIT`] bytes, long
//! lists cut with an "and N more" entry, and the cuts recorded under `baton.cut`.

mod cut;
mod lenient;
mod paths;
mod schema;

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::fsx;

pub use cut::{SIZE_LIMIT, encode};
use field::STATUS;
pub use lenient::{Field, Scalar, Written};
pub use paths::{CONTINUE_HERE, check_continue_here, check_continue_here_in};
pub use schema::field;
pub use schema::{
    AgentProgress, BATON_SCHEMA, BackgroundProcess, Baton, Blocker, CheckpointRecord, CommandRun,
    CompactionAudit, Decision, Failure, Figures, GENERATED_FIELDS, GSD_FIELDS, GeneratedText, Handoff,
    HumanAction, SessionCommit, Sources, TaskEntry,
};

/// The largest HANDOFF.json baton reads (one an older baton wrote may exceed
/// [`SIZE_LIMIT`]; anything bigger is not a handoff).
pub const READ_LIMIT: u64 = 4 * 1024 * 1024;
/// The largest `.continue-here.md` baton reads.
pub const MARKDOWN_LIMIT: u64 = 512 * 1024;

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
    pub fn from_object(object: serde_json::Map<String, Value>, root: &Path) -> HandoffDoc {
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

    /// The blockers (object entries): an entry without a text description is described
    /// by the entry as written.
    pub fn blockers(&self) -> Vec<Blocker> {
        objects(&self.handoff.blockers)
            .map(|(written, mut blocker)| {
                if blocker.description.get().and_then(Scalar::as_text).is_none() {
                    blocker.description = Field::Set(Scalar::Text(written.to_string()));
                }
                blocker
            })
            .collect()
    }

    /// The latest blocker as (description, GSD type): a text entry is its description.
    pub fn last_blocker(&self) -> Option<(String, Option<String>)> {
        let last = self.handoff.blockers.entries().last()?;
        if let Value::String(s) = last.value() {
            return Some((s.clone(), None));
        }
        let blocker = last.read()?;
        Some((blocker.description.get()?.text()?, blocker.kind.get().and_then(Scalar::text)))
    }

    /// The decisions, every entry: one that is not an object with a text decision is the
    /// decision as written.
    pub fn decisions(&self) -> Vec<Decision> {
        self.handoff
            .decisions
            .entries()
            .iter()
            .map(|written| {
                let read = written
                    .read()
                    .filter(|d: &Decision| d.decision.get().and_then(Scalar::as_text).is_some());
                read.unwrap_or_else(|| Decision {
                    decision: Field::Set(Scalar::Text(written.value().to_string())),
                    ..Decision::default()
                })
            })
            .collect()
    }

    /// The latest decision as (decision, rationale): a text entry is the decision.
    pub fn last_decision(&self) -> Option<(String, Option<String>)> {
        let last = self.handoff.decisions.entries().last()?;
        if let Value::String(s) = last.value() {
            return Some((s.clone(), None));
        }
        let decision = last.read()?;
        Some((decision.decision.get()?.text()?, decision.rationale.get().and_then(Scalar::text)))
    }

    /// The human actions pending (object entries): one without a text action is the entry
    /// as written.
    pub fn human_actions(&self) -> Vec<HumanAction> {
        objects(&self.handoff.human_actions_pending)
            .map(|(written, mut action)| {
                if action.action.text().is_none() {
                    action.action = Field::Set(written.to_string());
                }
                action
            })
            .collect()
    }

    /// `completed_tasks` (which also holds the task in progress, as GSD does).
    pub fn completed_tasks(&self) -> Vec<TaskEntry> {
        tasks(&self.handoff.completed_tasks)
    }

    /// The names of the tasks done: text entries, and entries whose status is done
    /// (`done`, `completed`, `complete`, or none) and whose name is text or a number.
    pub fn done_task_names(&self) -> Vec<String> {
        self.handoff
            .completed_tasks
            .entries()
            .iter()
            .filter_map(|written| {
                if let Value::String(s) = written.value() {
                    return Some(s.clone());
                }
                let task = written.read()?;
                let status = task.status.get().map(String::as_str).unwrap_or("done");
                matches!(status, "done" | "completed" | "complete").then(|| task.name.get()?.text()).flatten()
            })
            .collect()
    }

    pub fn remaining_tasks(&self) -> Vec<TaskEntry> {
        tasks(&self.handoff.remaining_tasks)
    }

    pub fn uncommitted_files(&self) -> Vec<String> {
        self.handoff.uncommitted_files.strings()
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

    /// An object of the section, read through its schema.
    fn read<T: DeserializeOwned + 'a>(
        &self,
        field: impl Fn(&'a Baton) -> &'a Field<Written<T>>,
    ) -> Option<T> {
        self.baton.map(field)?.read()
    }

    /// The object entries of one of the section's lists, read through their schema.
    fn objects<T: DeserializeOwned + 'a>(
        &self,
        field: impl Fn(&'a Baton) -> &'a Field<Vec<Written<T>>>,
    ) -> Vec<(&'a Value, T)> {
        self.baton.map(|b| objects(field(b)).collect()).unwrap_or_default()
    }

    fn strings(&self, field: impl Fn(&'a Baton) -> &'a Field<Vec<Field<String>>>) -> Vec<String> {
        self.baton.map(|b| field(b).strings()).unwrap_or_default()
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
        let list = &self.baton?.key_paths;
        list.get().is_some().then(|| list.strings())
    }

    /// The GitHub issue the handoff was pushed to, and the repository it is in.
    pub fn github_issue(&self) -> Option<(u64, Option<&'a str>)> {
        let baton = self.baton?;
        Some((*baton.github_issue.get()?, baton.github_repo.get().map(String::as_str)))
    }

    /// Commits made in the session: (short id, subject); the subject of an entry without
    /// a text one is the entry as written.
    pub fn session_commits(&self) -> Vec<(String, String)> {
        self.objects(|b| &b.session_commits)
            .into_iter()
            .map(|(written, commit)| {
                (
                    commit.short.text().unwrap_or("?").to_string(),
                    commit.subject.text().map(str::to_string).unwrap_or_else(|| written.to_string()),
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
        self.read(|b| &b.figures)?.used_pct.get().copied()
    }

    pub fn refreshes(&self) -> Option<u64> {
        self.baton?.refreshes.get().copied()
    }

    pub fn first_written(&self) -> Option<&'a str> {
        self.text(|b| &b.first_written)
    }

    /// The text baton generated for the GSD fields last time (to tell an edit from its own).
    pub fn generated_text(&self) -> GeneratedText {
        self.read(|b| &b.generated_text).unwrap_or_default()
    }

    pub fn files_touched(&self) -> Vec<String> {
        self.strings(|b| &b.files_touched)
    }

    /// The user's corrections and constraints, quoted from the transcript (data).
    pub fn user_words(&self) -> Vec<String> {
        self.strings(|b| &b.user_words)
    }

    /// The agent's last message before the pause (its words, data to check).
    pub fn agent_progress(&self) -> Option<String> {
        self.read(|b| &b.agent_progress)?.text.text().map(str::to_string)
    }

    /// The latest shell commands, as `(command, exit code, failed)`.
    pub fn commands_run(&self) -> Vec<(String, Option<i64>, bool)> {
        self.objects(|b| &b.commands_run)
            .into_iter()
            .filter_map(|(_, run)| {
                Some((
                    run.command.text()?.to_string(),
                    run.exit_code.get().copied(),
                    run.failed.get() == Some(&true),
                ))
            })
            .collect()
    }

    /// The last request of the session.
    pub fn last_request(&self) -> Option<&'a str> {
        self.text(|b| &b.last_request)
    }

    /// Background processes that were still running (with a command).
    pub fn background_processes(&self) -> Vec<BackgroundProcess> {
        self.objects(|b| &b.background_processes)
            .into_iter()
            .map(|(_, process)| process)
            .filter(|p| p.stopped.get() != Some(&true) && p.command.text().is_some())
            .collect()
    }

    /// The last failure, when it did not succeed later.
    pub fn last_failure(&self) -> Option<Failure> {
        self.read(|b| &b.last_failure).filter(|f| f.succeeded_later.get() != Some(&true))
    }

    /// The checkpoint as recorded (empty when there is none).
    pub fn checkpoint(&self) -> CheckpointRecord {
        self.read(|b| &b.checkpoint).unwrap_or_default()
    }

    /// Sessions that were given this handoff: (session, RFC 3339 time).
    pub fn resumptions(&self) -> Vec<(String, String)> {
        self.objects(|b| &b.resumptions)
            .into_iter()
            .filter_map(|(_, r)| Some((r.session_id.text()?.to_string(), r.at.text()?.to_string())))
            .collect()
    }
}

/// The object entries of a list, each with its reading.
fn objects<T: DeserializeOwned>(list: &Field<Vec<Written<T>>>) -> impl Iterator<Item = (&Value, T)> {
    list.entries().iter().filter_map(|written| Some((written.value(), written.read()?)))
}

/// The tasks of a list: its object entries whose name is text.
fn tasks(list: &Field<Vec<Written<TaskEntry>>>) -> Vec<TaskEntry> {
    objects(list).map(|(_, task)| task).filter(|t| t.name.get().and_then(Scalar::as_text).is_some()).collect()
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
    fn nested_objects_someone_else_wrote_are_read_typed_and_rewritten_byte_for_byte() {
        let text = r#"{
  "version": "1.0",
  "blockers": [
    {
      "type": "external",
      "note": "kept",
      "description": "the API key"
    },
    "a blocker in words"
  ],
  "baton": {
    "figures": {
      "remaining_pct": 20.5,
      "used_pct": 80
    },
    "last_failure": [
      "cargo test"
    ],
    "checkpoint": {
      "short": "abc1234",
      "reference": "refs/baton/wip/s1"
    }
  }
}
"#;
        let doc = HandoffDoc::parse(text.as_bytes(), Path::new("/")).unwrap();
        let blockers = doc.blockers();
        assert_eq!((blockers[0].description(), blockers[0].kind()), ("the API key", Some("external")));
        assert_eq!(doc.last_blocker(), Some(("a blocker in words".into(), None)));
        assert_eq!(doc.baton().used_pct(), Some(80));
        assert_eq!(doc.baton().checkpoint().reference.text(), Some("refs/baton/wip/s1"));
        // An item is an object: a list in its place reads as none.
        assert_eq!(doc.baton().last_failure(), None);
        assert_eq!(String::from_utf8(encode(&doc.to_value()).unwrap()).unwrap(), text);
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
