//! git's own lock files, taken so that a process killed while holding one (`kill -9`, a
//! crash, a power cut) leaves nothing a later baton cannot recognise and clear.
//!
//! git's protocol is the lock's existence: `index.lock` beside the index, `<ref>.lock`
//! beside a ref, created exclusively, then renamed over the file they replace. baton
//! writes the new content first into a scratch file whose name carries its pid
//! (`baton-index.<pid>.<random>` in the git dir, `baton-ref.<pid>.<ref name in hex>` in
//! the common dir), then takes the lock by hard-linking the scratch file to the lock's
//! name (as exclusive as git's own create). So a lock baton left behind is the same file
//! (the same inode) as a scratch file of a process that is gone: [`recover`] finds those
//! and finishes or undoes what the dead process was doing. A lock that is not such a
//! file (git's, another tool's, a live baton's) is never touched.
//!
//! The branch's WIP commit replaces the index first and moves the branch second. Killed
//! between the two, the index holds the WIP commit's handoff files and the branch does
//! not: [`recover`] moves the branch (the lock holds the commit), so the next `git commit`
//! neither fails on a lock nor takes back the handoff files.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use git2::{Oid, Repository, Signature};

const INDEX_SCRATCH: &str = "baton-index.";
const REF_SCRATCH: &str = "baton-ref.";

/// The scratch file for the new index of this process: `<git dir>/baton-index.<pid>.<hex>`.
pub(super) fn index_scratch(git_dir: &Path) -> PathBuf {
    git_dir.join(format!("{INDEX_SCRATCH}{}.{}", std::process::id(), crate::fsx::random_hex(6)))
}

fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<String> {
    let bytes: Option<Vec<u8>> = (0..text.len())
        .step_by(2)
        .map(|i| text.get(i..i + 2).and_then(|pair| u8::from_str_radix(pair, 16).ok()))
        .collect();
    String::from_utf8(bytes?).ok()
}

/// Whether `a` and `b` are the same file (a hard link of each other).
fn same_file(a: &Path, b: &Path) -> bool {
    crate::platform::same_file(a, b)
}

/// Removes `lock` only if it is still the scratch file's link (never a lock someone
/// else took since).
fn remove_if_ours(lock: &Path, scratch: &Path) {
    if same_file(lock, scratch) {
        let _ = fs::remove_file(lock);
    }
}

/// Takes `lock` as a link to `scratch`: `AlreadyExists` when someone holds it.
fn link_lock(scratch: &Path, lock: &Path) -> io::Result<()> {
    fs::hard_link(scratch, lock)
}

/// The index lock, taken as a link to the scratch index holding the new index.
pub(super) struct IndexLock {
    lock: PathBuf,
    index: PathBuf,
    scratch: PathBuf,
    committed: bool,
}

impl IndexLock {
    /// Takes `<git dir>/index.lock` for the new index in `scratch` (see the module doc).
    pub(super) fn take(git_dir: &Path, scratch: &Path) -> io::Result<IndexLock> {
        let lock = git_dir.join("index.lock");
        link_lock(scratch, &lock)?;
        Ok(IndexLock { lock, index: git_dir.join("index"), scratch: scratch.to_path_buf(), committed: false })
    }

    /// Puts the new index in place (git's rename of the lock over the index).
    pub(super) fn commit(mut self) -> io::Result<()> {
        fs::rename(&self.lock, &self.index)?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for IndexLock {
    fn drop(&mut self) {
        if !self.committed {
            remove_if_ours(&self.lock, &self.scratch);
        }
    }
}

/// A ref's lock, holding its new value, taken as a link to a scratch file.
pub(super) struct RefLock {
    name: String,
    lock: PathBuf,
    scratch: PathBuf,
    new: Oid,
    committed: bool,
}

impl RefLock {
    /// Takes `<common dir>/<name>.lock` holding `new` (see the module doc):
    /// `AlreadyExists` when someone holds it.
    pub(super) fn take(git: &Repository, name: &str, new: Oid) -> io::Result<RefLock> {
        let common = git.commondir();
        let scratch = common.join(format!("{REF_SCRATCH}{}.{}", std::process::id(), hex(name)));
        let lock = common.join(format!("{name}.lock"));
        if let Some(parent) = lock.parent() {
            fs::create_dir_all(parent)?;
        }
        let mut file = crate::platform::create_new(&scratch, 0o666)?;
        let taken = file.write_all(format!("{new}\n").as_bytes()).and_then(|()| link_lock(&scratch, &lock));
        if let Err(e) = taken {
            let _ = fs::remove_file(&scratch);
            return Err(e);
        }
        Ok(RefLock { name: name.to_string(), lock, scratch, new, committed: false })
    }

    /// The ref's value now (loose or packed), read while holding its lock.
    pub(super) fn current(&self, git: &Repository) -> Result<Option<Oid>, git2::Error> {
        current(git, &self.name)
    }

    /// Moves the ref (git's rename of the lock over it) and writes its reflog entry, as
    /// git would, from `old`.
    pub(super) fn commit(
        mut self,
        git: &Repository,
        old: Option<Oid>,
        who: &Signature<'_>,
        message: &str,
    ) -> io::Result<()> {
        fs::rename(&self.lock, git.commondir().join(&self.name))?;
        self.committed = true;
        let _ = fs::remove_file(&self.scratch);
        log_update(git, &self.name, old, self.new, who, message);
        Ok(())
    }
}

impl Drop for RefLock {
    fn drop(&mut self) {
        if !self.committed {
            remove_if_ours(&self.lock, &self.scratch);
        }
        let _ = fs::remove_file(&self.scratch);
    }
}

fn current(git: &Repository, name: &str) -> Result<Option<Oid>, git2::Error> {
    match git.find_reference(name) {
        Ok(reference) => Ok(reference.target()),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether git would log an update of `name` (`core.logAllRefUpdates`), or its log is
/// there already.
fn logged(git: &Repository, name: &str, log: &Path) -> bool {
    let setting = git.config().ok().and_then(|c| c.get_string("core.logAllRefUpdates").ok());
    let all = match setting.as_deref().map(str::to_ascii_lowercase).as_deref() {
        Some("always") => return true,
        Some("false" | "no" | "off" | "0") => false,
        Some(_) => true,
        None => !git.is_bare(),
    };
    log.exists()
        || (all
            && (name == "HEAD"
                || ["refs/heads/", "refs/remotes/", "refs/notes/"].iter().any(|p| name.starts_with(p))))
}

/// One reflog line, git's format.
fn log_line(old: Option<Oid>, new: Oid, who: &Signature<'_>, message: &str) -> Vec<u8> {
    let when = who.when();
    let offset = when.offset_minutes();
    let sign = if offset < 0 { '-' } else { '+' };
    let mut line = format!("{} {} ", old.unwrap_or(Oid::ZERO_SHA1), new).into_bytes();
    line.extend_from_slice(who.name_bytes());
    line.extend_from_slice(b" <");
    line.extend_from_slice(who.email_bytes());
    let message: String =
        message.lines().next().unwrap_or_default().chars().filter(|c| !c.is_control()).collect();
    line.extend_from_slice(
        format!(
            "> {} {sign}{:02}{:02}\t{message}\n",
            when.seconds(),
            offset.unsigned_abs() / 60,
            offset.unsigned_abs() % 60
        )
        .as_bytes(),
    );
    line
}

fn append(path: &Path, line: &[u8]) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    crate::platform::open_append(path)?.write_all(line)
}

/// The reflog entries of a ref update: the ref's, and HEAD's when HEAD points to it.
fn log_update(git: &Repository, name: &str, old: Option<Oid>, new: Oid, who: &Signature<'_>, message: &str) {
    let line = log_line(old, new, who, message);
    let log = git.commondir().join("logs").join(name);
    if logged(git, name, &log) {
        let _ = append(&log, &line);
    }
    let head_points_here =
        git.find_reference("HEAD").ok().and_then(|h| h.symbolic_target_bytes().map(|t| t.to_vec()));
    let head_log = git.path().join("logs").join("HEAD");
    if head_points_here.as_deref() == Some(name.as_bytes()) && logged(git, "HEAD", &head_log) {
        let _ = append(&head_log, &line);
    }
}

/// Whether process `pid` is gone (a pid in use by anyone, even a process baton may not
/// signal, counts as alive).
fn gone(pid: u32) -> bool {
    crate::platform::pid_gone(pid)
}

/// A scratch file of baton's: its kind, pid and the rest of its name.
fn parse_scratch(name: &str) -> Option<(&'static str, u32, &str)> {
    let (kind, rest) = [INDEX_SCRATCH, REF_SCRATCH].iter().find_map(|k| Some((*k, name.strip_prefix(k)?)))?;
    let (pid, rest) = rest.split_once('.')?;
    Some((kind, pid.parse().ok()?, rest))
}

/// Whether the WIP commit `commit` is in effect in the index: each file it changed
/// against its parent has the commit's blob there.
fn index_has(git: &Repository, commit: Oid) -> bool {
    let check = || -> Result<bool, git2::Error> {
        let commit = git.find_commit(commit)?;
        let parent = commit.parent(0)?;
        let diff = git.diff_tree_to_tree(Some(&parent.tree()?), Some(&commit.tree()?), None)?;
        let index = git.index()?;
        Ok(diff.deltas().all(|delta| {
            let file = delta.new_file();
            file.path().is_some_and(|path| index.get_path(path, 0).is_some_and(|e| e.id == file.id()))
        }))
    };
    check().unwrap_or(false)
}

/// Finishes or undoes what a baton process that is gone was doing with git's locks, and
/// removes its scratch files. A lock is only ever removed or renamed when it is the very
/// file such a process made (see the module doc). Returns what was done, in words.
pub fn recover(git: &Repository) -> Vec<String> {
    let mut done = Vec::new();
    let me = std::process::id();
    let mut dirs = vec![git.path().to_path_buf()];
    if git.commondir() != git.path() {
        dirs.push(git.commondir().to_path_buf());
    }
    // Refs first: whether the branch moves is read from the index as it is now, before
    // a stale index lock is removed (it never is the index).
    for pass in [REF_SCRATCH, INDEX_SCRATCH] {
        for dir in &dirs {
            let Ok(entries) = fs::read_dir(dir) else { continue };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let Some((kind, pid, rest)) = parse_scratch(&name) else { continue };
                // Our own pid on a scratch file before we made any: a dead process's. Only
                // this user's files (a baton of theirs made them).
                let ours = entry.metadata().is_ok_and(|m| crate::fsx::is_mine(&m));
                if kind != pass || !ours || !(pid == me || gone(pid)) {
                    continue;
                }
                let scratch = entry.path();
                if kind == REF_SCRATCH {
                    if let Some(words) = recover_ref(git, &scratch, rest) {
                        done.push(words);
                    }
                } else {
                    let lock = git.path().join("index.lock");
                    if same_file(&lock, &scratch) {
                        let _ = fs::remove_file(&lock);
                        done.push(format!(
                            "removed {} (left by baton process {pid}, which is gone)",
                            lock.display()
                        ));
                    }
                }
                let _ = fs::remove_file(&scratch);
            }
        }
    }
    done
}

/// A dead process's ref lock: the branch moved when the index already holds its commit
/// (the process was killed between the two renames), else the lock removed.
fn recover_ref(git: &Repository, scratch: &Path, hex_name: &str) -> Option<String> {
    let name = unhex(hex_name)?;
    if !git2::Reference::is_valid_name(&name) {
        return None;
    }
    let lock = git.commondir().join(format!("{name}.lock"));
    if !same_file(&lock, scratch) {
        return None;
    }
    let commit = fs::read_to_string(scratch).ok().and_then(|text| Oid::from_str(text.trim()).ok())?;
    let parent = git.find_commit(commit).ok().and_then(|c| c.parent_id(0).ok());
    let now = current(git, &name).ok()?;
    let finish =
        name.starts_with("refs/heads/") && parent.is_some() && now == parent && index_has(git, commit);
    if finish && fs::rename(&lock, git.commondir().join(&name)).is_ok() {
        if let (Ok(who), Ok(found)) = (super::signature(git), git.find_commit(commit)) {
            let subject = String::from_utf8_lossy(found.summary_bytes().unwrap_or_default()).into_owned();
            log_update(git, &name, now, commit, &who, &format!("commit: {subject}"));
        }
        return Some(format!(
            "moved {name} to {commit} (a baton pause was killed between the index and the branch)"
        ));
    }
    let _ = fs::remove_file(&lock);
    Some(format!("removed {} (left by a baton process that is gone)", lock.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_names_carry_the_pid_and_the_ref() {
        let name = format!("{REF_SCRATCH}42.{}", hex("refs/heads/feat/x"));
        let (kind, pid, rest) = parse_scratch(&name).unwrap();
        assert_eq!((kind, pid), (REF_SCRATCH, 42));
        assert_eq!(unhex(rest).as_deref(), Some("refs/heads/feat/x"));
        assert_eq!(parse_scratch("baton-index.7.a1b2c3").map(|(k, p, _)| (k, p)), Some((INDEX_SCRATCH, 7)));
        assert_eq!(parse_scratch("index.lock"), None);
        assert_eq!(parse_scratch("baton-index.x.1"), None);
    }

    #[test]
    fn a_live_pid_is_never_gone() {
        assert!(!gone(std::process::id()));
        assert!(!gone(1), "init, which baton may not signal, is alive");
    }

    #[test]
    fn only_a_lock_that_is_the_scratch_file_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let scratch = dir.path().join("baton-index.1.aa");
        let lock = dir.path().join("index.lock");
        fs::write(&scratch, b"new").unwrap();
        fs::write(&lock, b"someone else's").unwrap();
        assert_eq!(link_lock(&scratch, &lock).unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        remove_if_ours(&lock, &scratch);
        assert!(lock.exists(), "a lock baton did not make stays");
        fs::remove_file(&lock).unwrap();
        link_lock(&scratch, &lock).unwrap();
        remove_if_ours(&lock, &scratch);
        assert!(!lock.exists());
    }
}
