//! Where handoffs live on disk, and how they are replaced without losing one.
//!
//! `.planning/HANDOFF.json` (or `<handoff.dir>/HANDOFF.json`) plus its
//! `.continue-here.md`. Before a handoff of another session (or one that does not parse)
//! is replaced, both files move to `<dir>/handoffs/<time>-<session>.json|.md`; the newest
//! ten are kept. Every write is atomic. The ids of the handoffs this machine wrote are
//! recorded in baton's state dir (the trust registry the resume path checks).

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::doc::{self, HandoffDoc};
use crate::{fsx, places};

/// Why a handoff could not be moved, archived, written or registered.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the handoff names no session")]
    NoSession,
    #[error("the handoff does not parse")]
    Unparsed,
    #[error("cannot create {}: {source}", path.display())]
    CreateDir { path: PathBuf, source: std::io::Error },
    #[error("cannot move {}: {source}", path.display())]
    Move { path: PathBuf, source: std::io::Error },
    #[error("cannot archive HANDOFF.json: {0}")]
    ArchiveJson(std::io::Error),
    #[error("cannot archive {}: {source}", path.display())]
    ArchiveMarkdown { path: PathBuf, source: std::io::Error },
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Handoff(#[from] doc::HandoffError),
    #[error("no home folder for baton's state")]
    NoStateDir,
    #[error("bad state dir")]
    BadStateDir,
    #[error("{0}")]
    Registry(std::io::Error),
}

/// [`fsx::ensure_dir`], saying which folder could not be made.
fn create_dir(path: &Path, private: bool) -> Result<(), StoreError> {
    fsx::ensure_dir(path, private)
        .map_err(|source| StoreError::CreateDir { path: path.to_path_buf(), source })
}

/// How many archived handoffs are kept.
pub const ARCHIVE_KEEP: usize = 10;
const REGISTRY_LIMIT: u64 = 4 * 1024 * 1024;

/// The handoff found on disk before a write.
#[derive(Debug, Clone, Default)]
pub struct Existing {
    /// HANDOFF.json's bytes, when the file exists.
    pub raw: Option<Vec<u8>>,
    /// Its content, when it parses as a JSON object (paths validated).
    pub doc: Option<HandoffDoc>,
    /// Its `.continue-here.md` (as recorded in it and valid, else the place now detected).
    pub markdown_path: Option<PathBuf>,
    pub markdown: Option<String>,
    /// baton wrote it on this machine for this project (its id is in the registry): only
    /// then may its `.continue-here.md` be moved away rather than copied.
    pub owned: bool,
}

impl Existing {
    /// The session that wrote it, when baton did.
    pub fn session(&self) -> Option<&str> {
        self.doc.as_ref()?.baton().session_id()
    }

    /// Whether baton may rewrite it in place (not a newer major version).
    pub fn writable(&self) -> bool {
        self.doc.as_ref().is_none_or(HandoffDoc::writable)
    }
}

/// What to do with the existing handoff before writing a new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// None there.
    Fresh,
    /// The same session's: refresh it, keeping what someone wrote into it.
    Refresh,
    /// Someone else's, unreadable, or of a newer version: archive it first.
    Archive,
}

/// Decides what happens to the existing handoff. Pure.
pub fn disposition(existing: &Existing, session_id: &str) -> Disposition {
    match (&existing.raw, existing.session()) {
        (None, _) if existing.markdown.is_none() => Disposition::Fresh,
        (Some(_), Some(owner)) if owner == session_id && existing.writable() => Disposition::Refresh,
        _ => Disposition::Archive,
    }
}

/// Whether `path` (relative) may be a `.continue-here.md` baton reads or writes: the
/// name, relative, no `..`, no `.git`, no symlinked folder. `handoff.dir` may put it
/// outside `.planning/`, so only the name and shape are checked here.
fn plausible_markdown(root: &Path, path: &Path) -> bool {
    let text = path.to_string_lossy();
    path.is_relative()
        && path.file_name().is_some_and(|n| n == doc::CONTINUE_HERE)
        && path.components().all(|c| matches!(c, std::path::Component::Normal(_)))
        && !path.components().any(|c| c.as_os_str().eq_ignore_ascii_case(".git"))
        && !text.contains('\\')
        && {
            let mut at = root.to_path_buf();
            path.components().all(|c| {
                at.push(c);
                !fsx::is_symlink(&at)
            })
        }
}

fn read_markdown(root: &Path, rel: &Path) -> Option<String> {
    if !plausible_markdown(root, rel) {
        return None;
    }
    fsx::read_limited(&root.join(rel), doc::MARKDOWN_LIMIT)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Reads the handoff files under `root`. `detected_md` is where `.continue-here.md`
/// would go now, used when HANDOFF.json does not name a valid one of its own.
pub fn read_existing(root: &Path, dir: &Path, detected_md: &Path) -> Existing {
    let json_path = root.join(dir).join("HANDOFF.json");
    let raw = fsx::read_limited(&json_path, doc::READ_LIMIT).ok();
    let doc = raw.as_ref().and_then(|b| HandoffDoc::parse_in(b, root, Some(dir)).ok());
    let owned = doc.as_ref().and_then(|d| d.baton().id()).is_some_and(|id| is_registered(root, id));
    let markdown_path =
        doc.as_ref().and_then(HandoffDoc::continue_here).unwrap_or_else(|| detected_md.to_path_buf());
    let markdown = read_markdown(root, &markdown_path);
    let markdown_path = markdown.as_ref().map(|_| markdown_path);
    Existing { raw, doc, markdown_path, markdown, owned }
}

/// The archive folder of the handoffs in `<root>/<dir>`: `<main dir>/handoffs`.
pub fn archive_dir(root: &Path, dir: &Path) -> PathBuf {
    root.join(main_dir_of(dir)).join("handoffs")
}

/// The project's handoff folder a folder belongs to: `dir` itself, or for a pending
/// folder (`<dir>/handoffs/pending/<session>`) the `<dir>` above it.
pub fn main_dir_of(dir: &Path) -> PathBuf {
    let parts: Vec<_> = dir.components().map(|c| c.as_os_str().to_owned()).collect();
    let n = parts.len();
    if n >= 4 && parts[n - 3] == "handoffs" && parts[n - 2] == "pending" {
        return parts[..n - 3].iter().collect();
    }
    dir.to_path_buf()
}

/// Where session `session_id`'s handoff sits while GSD's `<dir>/HANDOFF.json` holds
/// another session's pending one: `<dir>/handoffs/pending/<session>/HANDOFF.json`
/// (and its `.continue-here.md` beside it). Relative to the project folder.
pub fn pending_dir(dir: &Path, session_id: &str) -> PathBuf {
    dir.join("handoffs").join("pending").join(safe_name(session_id))
}

/// The pending folders under `<root>/<dir>` (relative to the root), by name. Only real
/// folders whose name baton could have made.
pub fn pending_dirs(root: &Path, dir: &Path) -> Vec<PathBuf> {
    let base = dir.join("handoffs").join("pending");
    let mut out: Vec<PathBuf> = std::fs::read_dir(root.join(&base))
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| safe_name(name) == *name)
                .map(|name| base.join(name))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Where a new handoff of a session goes. Pure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// GSD's `<dir>/HANDOFF.json`, with what happens to the one there.
    Main(Disposition),
    /// Move the other session's pending handoff from `<dir>/HANDOFF.json` to its own
    /// pending folder, then write this one there (a critical or manual pause).
    DisplaceThenMain,
    /// This session's pending folder (refreshing what is there, if anything).
    OwnPending,
}

impl Existing {
    /// A handoff baton wrote for another session that has not been closed: it must not
    /// be buried under a different session's handoff.
    pub fn pending_of_other(&self, session_id: &str) -> bool {
        self.doc.as_ref().is_some_and(|d| d.writable() && d.is_paused())
            && self.session().is_some_and(|s| s != session_id && fsx::valid_session_id(s))
    }
}

/// Decides where session `session_id`'s new handoff goes. `takes_main`: a critical or
/// manual pause (GSD's HANDOFF.json is the newest of those); a compaction snapshot
/// never takes the place of another session's pending handoff. A session's handoff
/// stays where it is when refreshed, so refreshing never moves or archives another's.
pub fn placement(main: &Existing, own_pending: &Existing, session_id: &str, takes_main: bool) -> Placement {
    let main_disposition = disposition(main, session_id);
    if main_disposition == Disposition::Refresh {
        return Placement::Main(Disposition::Refresh);
    }
    if own_pending.session() == Some(session_id) && own_pending.writable() {
        return Placement::OwnPending;
    }
    match main_disposition {
        Disposition::Fresh => Placement::Main(Disposition::Fresh),
        _ if main.pending_of_other(session_id) => {
            if takes_main {
                Placement::DisplaceThenMain
            } else {
                Placement::OwnPending
            }
        }
        other => Placement::Main(other),
    }
}

/// Moves another session's pending handoff out of `<dir>/HANDOFF.json` into its pending
/// folder (its `.continue-here.md` beside it: moved when baton wrote it, else copied).
/// Returns the new HANDOFF.json path.
pub fn displace(root: &Path, dir: &Path, existing: &Existing) -> Result<PathBuf, StoreError> {
    let session = existing.session().ok_or(StoreError::NoSession)?;
    let mut handoff = existing.doc.clone().ok_or(StoreError::Unparsed)?;
    let target = pending_dir(dir, session);
    let folder = root.join(&target);
    create_dir(&folder, false)?;
    let md_rel = target.join(doc::CONTINUE_HERE);
    if let (Some(text), Some(rel)) = (&existing.markdown, &existing.markdown_path) {
        fsx::write_atomic(&root.join(&md_rel), text.as_bytes(), fsx::WriteOptions::USER)
            .map_err(|source| StoreError::Move { path: rel.clone(), source })?;
        if existing.owned && plausible_markdown(root, rel) {
            let _ = std::fs::remove_file(root.join(rel));
        }
        handoff.baton_mut().continue_here = doc::Field::Set(crate::util::text::slash_path(&md_rel));
    }
    let json_path = folder.join("HANDOFF.json");
    rewrite_json(&json_path, &handoff)?;
    Ok(json_path)
}

/// A file-name-safe stamp: `20261130T054012Z`.
fn stamp(time: DateTime<Utc>) -> String {
    time.format("%Y%m%dT%H%M%SZ").to_string()
}

fn safe_name(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .take(80)
        .collect();
    if cleaned.is_empty() { "unknown".into() } else { cleaned }
}

/// An archive file name baton made: `<stamp>-<seq>-<session>.json|.md` (this version),
/// or `<stamp>-<session>.json|.md` (earlier ones, sequence 0).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ArchiveName {
    pub stamp: String,
    pub seq: u32,
    /// The name without its extension.
    pub stem: String,
    /// Named the way earlier versions did (no sequence): counted only beside its `.json`.
    pub legacy: bool,
}

/// Parses an archive file name; `None` for any file baton did not name.
pub fn parse_archive_name(name: &str) -> Option<ArchiveName> {
    let stem = name.strip_suffix(".json").or_else(|| name.strip_suffix(".md"))?;
    let bytes = stem.as_bytes();
    let stamp_ok = bytes.len() > 17
        && bytes[..8].iter().all(u8::is_ascii_digit)
        && bytes[8] == b'T'
        && bytes[9..15].iter().all(u8::is_ascii_digit)
        && bytes[15] == b'Z'
        && bytes[16] == b'-';
    if !stamp_ok {
        return None;
    }
    let rest = &stem[17..];
    if rest.is_empty() || !rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return None;
    }
    // `s<seq>-` marks this version's sequence.
    let seq: Option<u32> = rest
        .strip_prefix('s')
        .and_then(|r| r.split_once('-'))
        .filter(|(n, session)| n.len() == 4 && n.bytes().all(|b| b.is_ascii_digit()) && !session.is_empty())
        .and_then(|(n, _)| n.parse().ok());
    Some(ArchiveName {
        stamp: stem[..16].to_string(),
        seq: seq.unwrap_or(0),
        stem: stem.to_string(),
        legacy: seq.is_none(),
    })
}

/// baton's archives in `folder`, oldest first (by their own stamp and sequence).
fn archives(folder: &Path) -> Vec<ArchiveName> {
    let mut names: Vec<ArchiveName> = std::fs::read_dir(folder)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .filter_map(|e| parse_archive_name(&e.file_name().to_string_lossy()))
                .filter(|a| !a.legacy || folder.join(format!("{}.json", a.stem)).is_file())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names.dedup_by(|a, b| a.stem == b.stem);
    names
}

/// Moves the existing handoff into the archive and prunes it to the newest ten. Returns
/// the archived paths. HANDOFF.json's bytes are copied as they were; `.continue-here.md`
/// is copied, and removed only when baton wrote it (the handoff's id is registered).
pub fn archive(
    root: &Path,
    dir: &Path,
    existing: &Existing,
    now: DateTime<Utc>,
) -> Result<Vec<PathBuf>, StoreError> {
    archive_in(&archive_dir(root, dir), root, existing, now)
}

/// [`archive`] into `folder` (the existing handoff's files are under `root`).
pub fn archive_in(
    folder: &Path,
    root: &Path,
    existing: &Existing,
    now: DateTime<Utc>,
) -> Result<Vec<PathBuf>, StoreError> {
    let folder = folder.to_path_buf();
    create_dir(&folder, false)?;
    let session = existing
        .session()
        .map(str::to_string)
        .or_else(|| existing.raw.as_ref().map(|_| "unparsed".to_string()))
        .unwrap_or_else(|| "orphan".into());
    let stamp = stamp(now);
    let existing_names = archives(&folder);
    let mut seq = existing_names.iter().filter(|a| a.stamp == stamp).map(|a| a.seq + 1).max().unwrap_or(0);
    let name = loop {
        let name = format!("{stamp}-s{seq:04}-{}", safe_name(&session));
        if !folder.join(format!("{name}.json")).exists() && !folder.join(format!("{name}.md")).exists() {
            break name;
        }
        seq += 1;
    };
    let mut archived = vec![];
    if let Some(raw) = &existing.raw {
        let target = folder.join(format!("{name}.json"));
        fsx::write_atomic(&target, raw, fsx::WriteOptions::USER).map_err(StoreError::ArchiveJson)?;
        archived.push(target);
    }
    if let (Some(text), Some(rel)) = (&existing.markdown, &existing.markdown_path) {
        let target = folder.join(format!("{name}.md"));
        fsx::write_atomic(&target, text.as_bytes(), fsx::WriteOptions::USER)
            .map_err(|source| StoreError::ArchiveMarkdown { path: rel.clone(), source })?;
        archived.push(target);
        if existing.owned && plausible_markdown(root, rel) {
            let _ = std::fs::remove_file(root.join(rel));
        }
    }
    prune(&folder);
    Ok(archived)
}

/// Keeps the newest [`ARCHIVE_KEEP`] of baton's archived handoffs (a .json and its .md
/// count as one), by their own stamp and sequence. Other files are neither counted nor
/// touched.
fn prune(folder: &Path) {
    let names = archives(folder);
    let excess = names.len().saturating_sub(ARCHIVE_KEEP);
    for name in &names[..excess] {
        for ext in ["json", "md"] {
            let path = folder.join(format!("{}.{ext}", name.stem));
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// The newest archived handoff of `session_id` (when another session's handoff took the
/// place of this one's, a refresh still keeps what was written into it).
pub fn newest_archived(root: &Path, dir: &Path, session_id: &str) -> Option<Existing> {
    let folder = archive_dir(root, dir);
    let suffix = format!("-{}", safe_name(session_id));
    let name = archives(&folder).into_iter().rev().find(|a| a.stem.ends_with(&suffix))?;
    let raw = fsx::read_limited(&folder.join(format!("{}.json", name.stem)), doc::READ_LIMIT).ok()?;
    let parsed = HandoffDoc::parse_in(&raw, root, Some(dir)).ok()?;
    if parsed.baton().session_id() != Some(session_id) || !parsed.writable() {
        return None;
    }
    let md_path = folder.join(format!("{}.md", name.stem));
    let markdown = fsx::read_limited(&md_path, doc::MARKDOWN_LIMIT)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    Some(Existing { raw: Some(raw), doc: Some(parsed), markdown_path: None, markdown, owned: false })
}

/// Writes HANDOFF.json and `.continue-here.md`, creating folders as needed.
pub fn write_files(
    root: &Path,
    dir: &Path,
    json: &HandoffDoc,
    md_rel: &Path,
    markdown: &str,
) -> Result<(PathBuf, PathBuf), StoreError> {
    let folder = root.join(dir);
    create_dir(&folder, false)?;
    let json_path = folder.join("HANDOFF.json");
    rewrite_json(&json_path, json)?;
    let md_path = root.join(md_rel);
    if let Some(parent) = md_path.parent() {
        create_dir(parent, false)?;
    }
    fsx::write_atomic(&md_path, markdown.as_bytes(), fsx::WriteOptions::USER)
        .map_err(|source| StoreError::Write { path: md_path.clone(), source })?;
    Ok((json_path, md_path))
}

/// Writes HANDOFF.json alone (also after a checkpoint, to record its commit).
pub fn rewrite_json(path: &Path, json: &HandoffDoc) -> Result<(), StoreError> {
    Ok(doc::write(path, json)?)
}

/// A short, stable name for the project at `root`: FNV-1a of its path as given on Unix,
/// of its [`places::project_key`] on Windows (one spelling whatever the case).
fn project_hash(root: &Path) -> u64 {
    if cfg!(windows) {
        crate::util::hash::fnv1a(places::project_key(root).as_bytes())
    } else {
        crate::util::hash::fnv1a(root.as_os_str().as_encoded_bytes())
    }
}

/// baton's private folder for the handoffs of the project at `root` that could not be
/// written in the project (another user could read, swap or plant them there):
/// `<state dir>/handoffs/<hash of the project's real path>`. `None` without a home.
pub fn private_dir(root: &Path) -> Option<PathBuf> {
    let real = crate::platform::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let hash = project_hash(&real);
    Some(places::state_dir()?.join("handoffs").join(format!("{hash:016x}")))
}

/// Session `session_id`'s folder in [`private_dir`]: it stands in for the project folder
/// (its handoff at `<dir>/HANDOFF.json` below it), made private (0700) on the way.
pub fn private_root(root: &Path, session_id: &str) -> Result<PathBuf, StoreError> {
    let folder = private_dir(root).ok_or(StoreError::NoStateDir)?.join(safe_name(session_id));
    create_dir(&folder, true)?;
    Ok(folder)
}

/// The session folders of [`private_dir`] (each one stands in for the project folder).
pub fn private_roots(root: &Path) -> Vec<PathBuf> {
    let Some(dir) = private_dir(root) else { return vec![] };
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()).collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The registry's format version (1: `projects` → list of `{id, session_id, written}`).
pub const REGISTRY_VERSION: u64 = 1;

fn registry_path() -> Option<PathBuf> {
    places::state_dir().map(|d| d.join("handoffs.json"))
}

/// The handoff registry as a versioned state file (doctor checks it).
pub fn registry_file() -> Option<crate::state::VersionedFile> {
    registry_path().map(|path| crate::state::VersionedFile::new(path, REGISTRY_VERSION, REGISTRY_LIMIT))
}

/// How long a handoff waits for another writer of the same project: within the hook's
/// budget. Past it the hook writes no handoff and says why.
pub const PROJECT_LOCK_WAIT: std::time::Duration = std::time::Duration::from_millis(1500);

/// A lock in baton's state dir, one per project, around writing its handoff, taken
/// within [`PROJECT_LOCK_WAIT`]; `None` when it cannot be had.
pub fn project_lock(root: &Path) -> Option<fsx::FileLock> {
    project_lock_within(root, PROJECT_LOCK_WAIT).ok()
}

/// [`project_lock`] with the reason when it cannot be had (a `TimedOut` error when
/// another process held it past `wait`).
pub fn project_lock_within(root: &Path, wait: std::time::Duration) -> std::io::Result<fsx::FileLock> {
    let dir = places::state_dir()
        .ok_or_else(|| std::io::Error::other("no home folder for baton's state"))?
        .join("locks");
    fsx::ensure_dir(&dir, true)?;
    // FNV-1a of the path: a short, stable file name.
    let hash = project_hash(root);
    fsx::FileLock::acquire_within(&dir.join(format!("project-{hash:016x}.lock")), wait)
}

/// Records that this machine wrote handoff `id` for the project at `root`.
pub fn register(root: &Path, id: &str, session_id: &str, now: DateTime<Utc>) -> Result<(), StoreError> {
    let file = registry_file().ok_or(StoreError::NoStateDir)?;
    let dir = file.path.parent().ok_or(StoreError::BadStateDir)?;
    create_dir(dir, true)?;
    // Within the hook's budget, like the project lock.
    let guard = crate::state::Guard {
        wait: PROJECT_LOCK_WAIT,
        ..crate::state::Guard::new(dir.join("handoffs.lock"))
    };
    let edit = |loaded: crate::state::Loaded| {
        let mut registry = loaded.object().unwrap_or_default();
        if !registry.get("projects").is_some_and(Value::is_object) {
            registry.insert("projects".into(), json!({}));
        }
        if let Some(projects) = registry.get_mut("projects").and_then(Value::as_object_mut) {
            let list = projects.entry(places::project_key(root)).or_insert_with(|| json!([]));
            if !list.is_array() {
                *list = json!([]);
            }
            if let Some(entries) = list.as_array_mut() {
                if !entries.iter().any(|e| e.get("id").and_then(Value::as_str) == Some(id)) {
                    entries.push(json!({"id": id, "session_id": session_id, "written": now.to_rfc3339()}));
                }
                let excess = entries.len().saturating_sub(50);
                entries.drain(..excess);
            }
        }
        crate::state::Edit::Store(registry, ())
    };
    file.update(&guard, true, edit).map_err(StoreError::Registry)
}

/// Whether this machine wrote handoff `id` for the project at `root`.
pub fn is_registered(root: &Path, id: &str) -> bool {
    // A newer baton's registry is not read: its handoffs are not trusted by this one.
    let Some(registry) = registry_file().and_then(|file| file.load().object()) else { return false };
    registry
        .get("projects")
        .and_then(|p| p.get(places::project_key(root).as_str()))
        .and_then(Value::as_array)
        .is_some_and(|ids| ids.iter().any(|e| e.get("id").and_then(Value::as_str) == Some(id)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn existing(json: Option<Value>) -> Existing {
        let raw = json.as_ref().map(|j| j.to_string().into_bytes());
        let doc = raw.as_ref().and_then(|r| HandoffDoc::parse(r, Path::new("/")).ok());
        Existing { raw, doc, markdown_path: None, markdown: None, owned: false }
    }

    #[test]
    fn disposition_by_owner() {
        assert_eq!(disposition(&Existing::default(), "s"), Disposition::Fresh);
        assert_eq!(
            disposition(&existing(Some(json!({"baton": {"session_id": "s"}}))), "s"),
            Disposition::Refresh
        );
        assert_eq!(
            disposition(&existing(Some(json!({"baton": {"session_id": "t"}}))), "s"),
            Disposition::Archive
        );
        assert_eq!(disposition(&existing(Some(json!({"status": "paused"}))), "s"), Disposition::Archive);
        let unparsed = Existing { raw: Some(b"{nope".to_vec()), ..Default::default() };
        assert_eq!(disposition(&unparsed, "s"), Disposition::Archive);
        let orphan_md =
            Existing { markdown: Some("x".into()), markdown_path: Some("a.md".into()), ..Default::default() };
        assert_eq!(disposition(&orphan_md, "s"), Disposition::Archive);
    }

    #[test]
    fn placement_never_buries_another_sessions_pending_handoff() {
        let paused = |s: &str| existing(Some(json!({"status": "paused", "baton": {"session_id": s}})));
        let none = Existing::default();
        assert_eq!(placement(&none, &none, "a", true), Placement::Main(Disposition::Fresh));
        assert_eq!(placement(&paused("a"), &none, "a", false), Placement::Main(Disposition::Refresh));
        assert_eq!(placement(&paused("b"), &none, "a", true), Placement::DisplaceThenMain);
        assert_eq!(placement(&paused("b"), &none, "a", false), Placement::OwnPending);
        // A session's own pending handoff is refreshed where it is.
        assert_eq!(placement(&paused("b"), &paused("a"), "a", true), Placement::OwnPending);
        assert_eq!(placement(&none, &paused("a"), "a", true), Placement::OwnPending);
        // What baton did not write (no session) is archived as before.
        let gsd = existing(Some(json!({"status": "paused"})));
        assert_eq!(placement(&gsd, &none, "a", true), Placement::Main(Disposition::Archive));
        assert_eq!(main_dir_of(&pending_dir(Path::new(".planning"), "a")), Path::new(".planning"));
        assert_eq!(main_dir_of(Path::new(".planning")), Path::new(".planning"));
    }

    #[test]
    fn archive_keeps_the_newest_ten() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let planning = Path::new(".planning");
        for n in 0..12 {
            let time = DateTime::parse_from_rfc3339(&format!("2026-11-{:02}T10:00:00Z", n + 1))
                .unwrap()
                .with_timezone(&Utc);
            let e = existing(Some(json!({"baton": {"session_id": format!("s{n}")}})));
            archive(root, planning, &e, time).unwrap();
        }
        let mut names: Vec<String> = std::fs::read_dir(root.join(".planning/handoffs"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names.len(), 10);
        assert!(names[0].starts_with("20261103T"), "{names:?}");
    }

    #[test]
    fn thirteen_in_one_second_keep_the_newest_ten_and_ignore_other_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let planning = Path::new(".planning");
        let folder = root.join(".planning/handoffs");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("00000000T000000Z-notes.md"), "mine").unwrap();
        std::fs::write(folder.join("README.md"), "mine").unwrap();
        let time = DateTime::parse_from_rfc3339("2026-11-30T10:00:00Z").unwrap().with_timezone(&Utc);
        for n in 0..13 {
            let e = existing(Some(json!({"baton": {"session_id": format!("z{n}")}})));
            archive(root, planning, &e, time).unwrap();
        }
        let mut sessions: Vec<String> =
            archives(&folder).iter().map(|a| a.stem.rsplit('-').next().unwrap().to_string()).collect();
        sessions.sort();
        let mut want: Vec<String> = (3..13).map(|n| format!("z{n}")).collect();
        want.sort();
        assert_eq!(sessions, want);
        assert!(folder.join("00000000T000000Z-notes.md").exists());
        assert!(folder.join("README.md").exists());
    }

    #[test]
    fn archive_names() {
        let a = parse_archive_name("20261130T100000Z-s0012-abc.json").unwrap();
        assert_eq!((a.stamp.as_str(), a.seq), ("20261130T100000Z", 12));
        let old = parse_archive_name("20261130T100000Z-abc-1.md").unwrap();
        assert_eq!((old.seq, old.legacy), (0, true));
        assert!(parse_archive_name("notes.md").is_none());
        assert!(parse_archive_name("20261130T100000Z-.json").is_none());
        assert!(parse_archive_name("20261130T100000Z-a b.json").is_none());
        assert!(parse_archive_name("20261130T100000Z-abc.txt").is_none());
    }

    #[test]
    fn a_foreign_continue_here_is_copied_not_moved() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".planning")).unwrap();
        std::fs::write(root.join(".planning/.continue-here.md"), "notes").unwrap();
        let e = read_existing(root, Path::new(".planning"), Path::new(".planning/.continue-here.md"));
        assert!(!e.owned);
        archive(root, Path::new(".planning"), &e, Utc::now()).unwrap();
        assert!(root.join(".planning/.continue-here.md").exists());
    }
}
