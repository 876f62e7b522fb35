//! Which transcript `baton report` reads: the one given, the session asked for (under
//! Claude Code's `projects/*/<id>.jsonl`), or the newest of the current project.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::host::HostKind;
use crate::{fsx, gitx};

/// The host whose transcripts `baton report` finds by itself (their format is the one
/// `transcript::session_usage` reads).
pub const HOST: HostKind = HostKind::DEFAULT;

/// What the person asked for.
#[derive(Debug, Clone)]
pub enum Lookup {
    Transcript(PathBuf),
    Session(String),
    /// The newest transcript of the project at this folder.
    Newest(PathBuf),
}

/// Why no transcript was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocateError {
    /// The request itself is wrong (exit 2).
    Usage(String),
    /// Nothing there (exit 1).
    NotFound(String),
}

impl fmt::Display for LocateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LocateError::Usage(why) | LocateError::NotFound(why) => f.write_str(why),
        }
    }
}

/// Finds the transcript for `lookup`.
pub fn locate(lookup: &Lookup) -> Result<PathBuf, LocateError> {
    match lookup {
        Lookup::Transcript(path) => Ok(path.clone()),
        Lookup::Session(id) => by_session(id),
        Lookup::Newest(cwd) => newest(cwd),
    }
}

/// The session id a transcript's file name carries, when it is a valid one.
pub fn session_id_of(path: &Path) -> Option<String> {
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).filter(|s| fsx::valid_session_id(s))
}

fn projects_dir() -> Result<PathBuf, LocateError> {
    HOST.host().transcripts_dir().ok_or_else(|| {
        LocateError::NotFound(
            "cannot tell where Claude Code keeps transcripts: set CLAUDE_CONFIG_DIR or HOME".into(),
        )
    })
}

/// The transcript of the session `asked` names: its id, or an unambiguous prefix of one
/// (the 8 characters the brief and the notices show), resolved as `baton status` does.
fn by_session(asked: &str) -> Result<PathBuf, LocateError> {
    let projects = projects_dir()?;
    let not_found = |id: &str| {
        LocateError::NotFound(format!(
            "no transcript for session {id}: looked for {}",
            projects.join("*").join(format!("{id}.jsonl")).display()
        ))
    };
    let id = crate::status::resolve_session(asked).map_err(|e| match e {
        crate::status::StatusError::Usage(why) => LocateError::Usage(why),
        crate::status::StatusError::NotFound(_) => not_found(asked),
    })?;
    HOST.host().transcript_of(&id).ok_or_else(|| not_found(&id))
}

fn newest(cwd: &Path) -> Result<PathBuf, LocateError> {
    let cwd = crate::platform::canonicalize(cwd)
        .map_err(|e| LocateError::NotFound(format!("cannot use the folder {}: {e}", cwd.display())))?;
    let root = gitx::project_root(&cwd);
    if let Some(path) = HOST.host().newest_transcript(&root, &cwd) {
        return Ok(path);
    }
    let projects = projects_dir()?;
    let mut looked: Vec<String> = [&root, &cwd]
        .iter()
        .map(|dir| {
            projects.join(HOST.host().transcripts_folder_name(dir).unwrap_or_default()).display().to_string()
        })
        .collect();
    looked.dedup();
    Err(LocateError::NotFound(format!(
        "no transcript found for {}: looked in {}; pass --transcript PATH or --session ID",
        cwd.display(),
        looked.join(" and ")
    )))
}
