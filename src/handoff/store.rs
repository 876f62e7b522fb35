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

use crate::{fsx, places};

/// How many archived handoffs are kept.
pub const ARCHIVE_KEEP: usize = 10;
const HANDOFF_LIMIT: u64 = 16 * 1024 * 1024;

/// The handoff found on disk before a write.
#[derive(Debug, Clone, Default)]
pub struct Existing {
    /// HANDOFF.json's bytes, when the file exists.
    pub raw: Option<Vec<u8>>,
    /// Its content, when it parses as a JSON object.
    pub json: Option<Value>,
    /// Its `.continue-here.md` (as recorded in it, else the place now detected).
    pub markdown_path: Option<PathBuf>,
    pub markdown: Option<String>,
}

impl Existing {
    /// The session that wrote it, when baton did.
    pub fn session(&self) -> Option<&str> {
        self.json.as_ref()?.pointer("/baton/session_id")?.as_str()
    }
}

/// What to do with the existing handoff before writing a new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// None there.
    Fresh,
    /// The same session's: refresh it, keeping what someone wrote into it.
    Refresh,
    /// Someone else's, or unreadable: archive it first.
    Archive,
}

/// Decides what happens to the existing handoff. Pure.
pub fn disposition(existing: &Existing, session_id: &str) -> Disposition {
    match (&existing.raw, existing.session()) {
        (None, _) if existing.markdown.is_none() => Disposition::Fresh,
        (Some(_), Some(owner)) if owner == session_id => Disposition::Refresh,
        _ => Disposition::Archive,
    }
}

/// Reads the handoff files under `root`. `detected_md` is where `.continue-here.md`
/// would go now, used when HANDOFF.json does not name its own.
pub fn read_existing(root: &Path, dir: &Path, detected_md: &Path) -> Existing {
    let json_path = root.join(dir).join("HANDOFF.json");
    let raw = fsx::read_limited(&json_path, HANDOFF_LIMIT).ok();
    let json = raw.as_ref().and_then(|b| serde_json::from_slice::<Value>(b).ok()).filter(Value::is_object);
    let recorded_md = json
        .as_ref()
        .and_then(|j| j.pointer("/baton/continue_here"))
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .filter(|p| p.is_relative() && !p.components().any(|c| matches!(c, std::path::Component::ParentDir)));
    let markdown_path = recorded_md.unwrap_or_else(|| detected_md.to_path_buf());
    let markdown = fsx::read_limited(&root.join(&markdown_path), HANDOFF_LIMIT)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    let markdown_path = markdown.as_ref().map(|_| markdown_path);
    Existing { raw, json, markdown_path, markdown }
}

fn archive_dir(root: &Path, dir: &Path) -> PathBuf {
    root.join(dir).join("handoffs")
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

/// Moves the existing handoff into the archive and prunes it to the newest ten. Returns
/// the archived paths.
pub fn archive(
    root: &Path,
    dir: &Path,
    existing: &Existing,
    now: DateTime<Utc>,
) -> Result<Vec<PathBuf>, String> {
    let folder = archive_dir(root, dir);
    fsx::ensure_dir(&folder, false).map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    let session = existing
        .session()
        .map(str::to_string)
        .or_else(|| existing.raw.as_ref().map(|_| "unparsed".to_string()))
        .unwrap_or_else(|| "orphan".into());
    let base = format!("{}-{}", stamp(now), safe_name(&session));
    let mut archived = vec![];
    let mut name = base.clone();
    for n in 1.. {
        if !folder.join(format!("{name}.json")).exists() && !folder.join(format!("{name}.md")).exists() {
            break;
        }
        name = format!("{base}-{n}");
    }
    if let Some(raw) = &existing.raw {
        let target = folder.join(format!("{name}.json"));
        fsx::write_atomic(&target, raw, fsx::WriteOptions::USER)
            .map_err(|e| format!("cannot archive HANDOFF.json: {e}"))?;
        archived.push(target);
    }
    if let (Some(text), Some(rel)) = (&existing.markdown, &existing.markdown_path) {
        let target = folder.join(format!("{name}.md"));
        fsx::write_atomic(&target, text.as_bytes(), fsx::WriteOptions::USER)
            .map_err(|e| format!("cannot archive {}: {e}", rel.display()))?;
        archived.push(target);
        let _ = std::fs::remove_file(root.join(rel));
    }
    prune(&folder);
    Ok(archived)
}

/// Keeps the newest [`ARCHIVE_KEEP`] archived handoffs (a .json and its .md count as one).
fn prune(folder: &Path) {
    let mut stems: Vec<String> = std::fs::read_dir(folder)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.strip_suffix(".json").or_else(|| name.strip_suffix(".md")).map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    stems.sort();
    stems.dedup();
    let excess = stems.len().saturating_sub(ARCHIVE_KEEP);
    for stem in &stems[..excess] {
        let _ = std::fs::remove_file(folder.join(format!("{stem}.json")));
        let _ = std::fs::remove_file(folder.join(format!("{stem}.md")));
    }
}

/// The newest archived handoff of `session_id` (when another session's handoff took the
/// place of this one's, a refresh still keeps what was written into it).
pub fn newest_archived(root: &Path, dir: &Path, session_id: &str) -> Option<Existing> {
    let folder = archive_dir(root, dir);
    let suffix = format!("-{}.json", safe_name(session_id));
    let mut names: Vec<String> = std::fs::read_dir(&folder)
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(&suffix))
        .collect();
    names.sort();
    let name = names.pop()?;
    let raw = fsx::read_limited(&folder.join(&name), HANDOFF_LIMIT).ok()?;
    let json = serde_json::from_slice::<Value>(&raw).ok().filter(Value::is_object)?;
    if json.pointer("/baton/session_id").and_then(Value::as_str) != Some(session_id) {
        return None;
    }
    let md_path = folder.join(name.replace(".json", ".md"));
    let markdown =
        fsx::read_limited(&md_path, HANDOFF_LIMIT).ok().map(|b| String::from_utf8_lossy(&b).into_owned());
    Some(Existing { raw: Some(raw), json: Some(json), markdown_path: None, markdown })
}

/// Writes HANDOFF.json and `.continue-here.md`, creating folders as needed.
pub fn write_files(
    root: &Path,
    dir: &Path,
    json: &Value,
    md_rel: &Path,
    markdown: &str,
) -> Result<(PathBuf, PathBuf), String> {
    let folder = root.join(dir);
    fsx::ensure_dir(&folder, false).map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    let json_path = folder.join("HANDOFF.json");
    rewrite_json(&json_path, json)?;
    let md_path = root.join(md_rel);
    if let Some(parent) = md_path.parent() {
        fsx::ensure_dir(parent, false).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    fsx::write_atomic(&md_path, markdown.as_bytes(), fsx::WriteOptions::USER)
        .map_err(|e| format!("cannot write {}: {e}", md_path.display()))?;
    Ok((json_path, md_path))
}

/// Writes HANDOFF.json alone (also after a checkpoint, to record its commit).
pub fn rewrite_json(path: &Path, json: &Value) -> Result<(), String> {
    let mut bytes = serde_json::to_vec_pretty(json).map_err(|e| e.to_string())?;
    bytes.push(b'\n');
    fsx::write_atomic(path, &bytes, fsx::WriteOptions::USER)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The registry's format version (1: `projects` → list of `{id, session_id, written}`).
pub const REGISTRY_VERSION: u64 = 1;

fn registry_path() -> Option<PathBuf> {
    places::state_dir().map(|d| d.join("handoffs.json"))
}

/// The handoff registry as a versioned state file (doctor checks it).
pub fn registry_file() -> Option<crate::state::VersionedFile> {
    registry_path().map(|path| crate::state::VersionedFile::new(path, REGISTRY_VERSION, HANDOFF_LIMIT))
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
    let mut hash: u64 = 0xcbf29ce484222325;
    for byte in root.as_os_str().as_encoded_bytes() {
        hash ^= *byte as u64;
        hash = hash.wrapping_mul(0x100000001b3);
    }
    fsx::FileLock::acquire_within(&dir.join(format!("project-{hash:016x}.lock")), wait)
}

/// Records that this machine wrote handoff `id` for the project at `root`.
pub fn register(root: &Path, id: &str, session_id: &str, now: DateTime<Utc>) -> Result<(), String> {
    let file = registry_file().ok_or("no home folder for baton's state")?;
    let dir = file.path.parent().ok_or("bad state dir")?;
    fsx::ensure_dir(dir, true).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    // Within the hook's budget, like the project lock.
    let _lock = fsx::FileLock::acquire_within(&dir.join("handoffs.lock"), PROJECT_LOCK_WAIT)
        .map_err(|e| e.to_string())?;
    let loaded = file.load();
    if let crate::state::Loaded::Newer { .. } = loaded {
        return Err(file.problem().unwrap_or_default());
    }
    let mut registry = loaded.object().map(Value::Object).unwrap_or_else(|| json!({"projects": {}}));
    let key = root.to_string_lossy().into_owned();
    let projects = registry
        .as_object_mut()
        .and_then(|o| {
            if !o.get("projects").is_some_and(Value::is_object) {
                o.insert("projects".into(), json!({}));
            }
            o.get_mut("projects")
        })
        .and_then(Value::as_object_mut)
        .ok_or("registry is not an object")?;
    let list = projects.entry(key).or_insert_with(|| json!([]));
    if !list.is_array() {
        *list = json!([]);
    }
    let entries = list.as_array_mut().ok_or("registry entry is not a list")?;
    if !entries.iter().any(|e| e.get("id").and_then(Value::as_str) == Some(id)) {
        entries.push(json!({"id": id, "session_id": session_id, "written": now.to_rfc3339()}));
    }
    let excess = entries.len().saturating_sub(50);
    entries.drain(..excess);
    let Value::Object(object) = registry else { return Err("registry is not an object".into()) };
    file.store(object, true).map_err(|e| e.to_string())
}

/// Whether this machine wrote handoff `id` for the project at `root`.
pub fn is_registered(root: &Path, id: &str) -> bool {
    // A newer baton's registry is not read: its handoffs are not trusted by this one.
    let Some(registry) = registry_file().and_then(|file| file.load().object()) else { return false };
    registry
        .get("projects")
        .and_then(|p| p.get(root.to_string_lossy().as_ref()))
        .and_then(Value::as_array)
        .is_some_and(|ids| ids.iter().any(|e| e.get("id").and_then(Value::as_str) == Some(id)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn existing(json: Option<Value>) -> Existing {
        Existing {
            raw: json.as_ref().map(|j| j.to_string().into_bytes()),
            json,
            markdown_path: None,
            markdown: None,
        }
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
}
