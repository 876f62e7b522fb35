//! baton's versioned JSON state files (debounce state, handoff registry, learned
//! compactions, windows): one reader and one writer for all of them.
//!
//! Each file is a JSON object with a whole-number `version`. A file without one is
//! version 0 (written before versions existed) and is read like an older version. A file
//! from a newer baton (a version above the one this build writes) is left alone: it is
//! never rewritten or migrated, its content is not used, and `baton doctor` says so.
//! Reads go through [`fsx::read_limited`] (no-follow, non-blocking, regular, capped);
//! writes are atomic and private. Every load-edit-store of one goes through
//! [`VersionedFile::update`], under the file's lock.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::fsx;

/// One versioned state file: where it is, the version this build writes, its size cap.
#[derive(Debug, Clone)]
pub struct VersionedFile {
    pub path: PathBuf,
    pub version: u64,
    pub limit: u64,
}

/// What reading a versioned file found.
#[derive(Debug, Clone, PartialEq)]
pub enum Loaded {
    /// No file there.
    Missing,
    /// This build's version, or an older one (`version` says which): usable.
    Read { version: u64, object: Map<String, Value> },
    /// Written by a newer baton: left alone.
    Newer { version: u64 },
    /// Refused or malformed (a FIFO, too large, not a JSON object), with the reason.
    Unreadable(String),
}

impl Loaded {
    /// The object to work with: the file's when usable, else `None`.
    pub fn object(self) -> Option<Map<String, Value>> {
        match self {
            Loaded::Read { object, .. } => Some(object),
            _ => None,
        }
    }
}

/// The `version` of a state file's object: 0 when absent; `None` when present but not
/// a whole number (the file is then malformed).
pub fn version_of(object: &Map<String, Value>) -> Option<u64> {
    match object.get("version") {
        None => Some(0),
        Some(value) => value.as_u64(),
    }
}

/// How long the hook waits for a state file's lock: well under the 2 s stdin deadline.
pub const LOCK_WAIT: Duration = Duration::from_millis(300);

/// The lock that guards a state file's load-edit-store, and what to do without it.
#[derive(Debug, Clone)]
pub struct Guard {
    pub lock: PathBuf,
    /// The longest wait for the lock.
    pub wait: Duration,
    /// Go on unlocked when the lock cannot be had in time (a count may be lost, the
    /// caller is not held up); else the update is given up.
    pub or_unlocked: bool,
}

impl Guard {
    /// A lock waited for at most [`lock_wait`]; the update is given up without it.
    pub fn new(lock: impl Into<PathBuf>) -> Guard {
        Guard { lock: lock.into(), wait: lock_wait(), or_unlocked: false }
    }
}

/// [`LOCK_WAIT`], or `BATON_STATE_LOCK_WAIT_MS` (100 to 10000) from the environment: a
/// machine so loaded that forty hooks at once wait longer for each other than that
/// would otherwise lose counts.
pub fn lock_wait() -> Duration {
    std::env::var("BATON_STATE_LOCK_WAIT_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ms| (100..=10_000).contains(ms))
        .map_or(LOCK_WAIT, Duration::from_millis)
}

/// What the edit of [`VersionedFile::update`] decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Edit<T> {
    /// Store this object (with this build's `version`), then return the value.
    Store(Map<String, Value>, T),
    /// Leave the file as it is and return the value.
    Keep(T),
}

impl VersionedFile {
    /// The one locked load-edit-store: takes `guard`'s lock, loads the file, lets `edit`
    /// decide from what was found, and stores what it returns. A newer baton's file is
    /// never given to `edit` nor replaced (an error, with doctor's words).
    pub fn update<T>(
        &self,
        guard: &Guard,
        durable: bool,
        edit: impl FnOnce(Loaded) -> Edit<T>,
    ) -> io::Result<T> {
        let lock = guard
            .lock
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or(Ok(()), |dir| fsx::ensure_dir(dir, true))
            .and_then(|()| fsx::FileLock::acquire_within(&guard.lock, guard.wait));
        let _lock = match lock {
            Ok(lock) => Some(lock),
            Err(_) if guard.or_unlocked => None,
            Err(e) => return Err(e),
        };
        let loaded = self.load();
        if let Loaded::Newer { version } = loaded {
            return Err(io::Error::other(newer_message(&self.path, version, self.version)));
        }
        match edit(loaded) {
            Edit::Keep(value) => Ok(value),
            Edit::Store(object, value) => self.store(object, durable).map(|()| value),
        }
    }

    pub fn new(path: impl Into<PathBuf>, version: u64, limit: u64) -> VersionedFile {
        VersionedFile { path: path.into(), version, limit }
    }

    /// Reads and classifies the file. Pure apart from the one bounded read.
    pub fn load(&self) -> Loaded {
        match fsx::read_limited(&self.path, self.limit) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Loaded::Missing,
            Err(e) => Loaded::Unreadable(e.to_string()),
            Ok(bytes) => self.classify(&bytes),
        }
    }

    /// Classifies a file's bytes against this build's version. Pure.
    pub fn classify(&self, bytes: &[u8]) -> Loaded {
        let object = match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(object)) => object,
            Ok(_) => return Loaded::Unreadable(format!("{} is not a JSON object", self.path.display())),
            Err(e) => return Loaded::Unreadable(format!("{} is not valid JSON ({e})", self.path.display())),
        };
        match version_of(&object) {
            None => Loaded::Unreadable(format!(
                "{} has a `version` that is not a whole number",
                self.path.display()
            )),
            Some(version) if version > self.version => Loaded::Newer { version },
            Some(version) => Loaded::Read { version, object },
        }
    }

    /// Writes `object` with this build's `version`, atomically and private (0600), unless
    /// the file there now is a newer baton's: that one is left alone (an error).
    pub fn store(&self, mut object: Map<String, Value>, durable: bool) -> io::Result<()> {
        if let Loaded::Newer { version } = self.load() {
            return Err(io::Error::other(newer_message(&self.path, version, self.version)));
        }
        object.insert("version".into(), Value::from(self.version));
        let mut bytes = serde_json::to_vec_pretty(&Value::Object(object)).map_err(io::Error::other)?;
        bytes.push(b'\n');
        if let Some(dir) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fsx::ensure_dir(dir, true)?;
        }
        let options = if durable { fsx::WriteOptions::PRIVATE_DURABLE } else { fsx::WriteOptions::STATE };
        fsx::write_atomic(&self.path, &bytes, options)
    }

    /// What `baton doctor` says about the file: `None` when it is absent or usable.
    pub fn problem(&self) -> Option<String> {
        match self.load() {
            Loaded::Missing | Loaded::Read { .. } => None,
            Loaded::Newer { version } => Some(newer_message(&self.path, version, self.version)),
            Loaded::Unreadable(why) => Some(why),
        }
    }
}

fn newer_message(path: &Path, found: u64, known: u64) -> String {
    format!(
        "{} was written by a newer baton (version {found}; this one knows up to {known}); left alone and not used: upgrade baton, or delete the file to start it afresh",
        path.display()
    )
}

impl fmt::Display for Loaded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Loaded::Missing => write!(f, "absent"),
            Loaded::Read { version, .. } => write!(f, "version {version}"),
            Loaded::Newer { version } => write!(f, "version {version} (newer)"),
            Loaded::Unreadable(why) => write!(f, "unreadable: {why}"),
        }
    }
}

/// Removes files in `dir` last modified more than `max_age` ago (the per-session state
/// of sessions long gone). Only regular files, never through a symlink; best effort.
pub fn prune_older_than(dir: &Path, max_age: std::time::Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let now = std::time::SystemTime::now();
    for entry in entries.flatten() {
        let Ok(meta) = entry.path().symlink_metadata() else { continue };
        let old =
            meta.modified().ok().and_then(|at| now.duration_since(at).ok()).is_some_and(|age| age > max_age);
        if meta.is_file() && old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    #[test]
    fn versions_are_classified() {
        let file = VersionedFile::new("/x/state.json", 2, 1024);
        assert!(matches!(file.classify(br#"{"a": 1}"#), Loaded::Read { version: 0, .. }));
        assert!(matches!(file.classify(br#"{"version": 1}"#), Loaded::Read { version: 1, .. }));
        assert!(matches!(file.classify(br#"{"version": 2}"#), Loaded::Read { version: 2, .. }));
        assert_eq!(file.classify(br#"{"version": 3}"#), Loaded::Newer { version: 3 });
        for bad in [&br#"{"version": "2"}"#[..], b"[]", b"nope"] {
            assert!(matches!(file.classify(bad), Loaded::Unreadable(_)), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn only_old_regular_files_are_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.json");
        let fresh = dir.path().join("fresh.json");
        std::fs::write(&old, b"{}").unwrap();
        std::fs::write(&fresh, b"{}").unwrap();
        let week_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(8 * 24 * 3600);
        std::fs::File::options().write(true).open(&old).unwrap().set_modified(week_ago).unwrap();
        let folder = dir.path().join("folder");
        std::fs::create_dir(&folder).unwrap();
        prune_older_than(dir.path(), std::time::Duration::from_secs(7 * 24 * 3600));
        assert!(!old.exists());
        assert!(fresh.exists() && folder.exists());
    }

    #[test]
    fn updates_are_locked_and_leave_a_newer_file_alone() {
        let dir = tempfile::tempdir().unwrap();
        let file = VersionedFile::new(dir.path().join("s/state.json"), 1, 1024);
        let guard = Guard::new(dir.path().join("s/state.lock"));
        let count = |loaded: Loaded| {
            let n = loaded.object().and_then(|o| o.get("n").and_then(Value::as_u64)).unwrap_or(0) + 1;
            Edit::Store(object(json!({"n": n})), n)
        };
        assert_eq!(file.update(&guard, false, count).unwrap(), 1);
        assert_eq!(file.update(&guard, false, count).unwrap(), 2);
        assert_eq!(file.update(&guard, false, |_| Edit::Keep(7)).unwrap(), 7);
        assert_eq!(file.load().object().unwrap()["n"], json!(2));
        let held = fsx::FileLock::acquire_within(&guard.lock, Duration::from_millis(10)).unwrap();
        let quick = Guard { wait: Duration::from_millis(20), ..guard.clone() };
        assert!(file.update(&quick, false, count).is_err(), "no lock, no update");
        let unlocked = Guard { or_unlocked: true, ..quick };
        assert_eq!(file.update(&unlocked, false, count).unwrap(), 3, "or unlocked when asked");
        drop(held);
        std::fs::write(&file.path, br#"{"version": 9}"#).unwrap();
        assert!(file.update(&guard, false, count).unwrap_err().to_string().contains("newer baton"));
        assert_eq!(std::fs::read(&file.path).unwrap(), br#"{"version": 9}"#);
    }

    #[cfg(unix)]
    #[test]
    fn a_newer_file_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let file = VersionedFile::new(dir.path().join("s/state.json"), 1, 1024);
        assert_eq!(file.load(), Loaded::Missing);
        file.store(object(json!({"n": 1})), false).unwrap();
        assert_eq!(file.load().object().unwrap()["version"], json!(1));
        std::fs::write(&file.path, br#"{"version": 9, "n": 2}"#).unwrap();
        assert!(file.store(object(json!({"n": 3})), false).is_err());
        assert_eq!(std::fs::read(&file.path).unwrap(), br#"{"version": 9, "n": 2}"#);
        assert!(file.problem().is_some_and(|p| p.contains("newer baton")));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("s")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}
