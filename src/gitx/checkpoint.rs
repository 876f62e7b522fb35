//! Saving the handoff (and the agent's unsaved work) in git, three ways:
//!
//! - [`Mode::Ref`]: a commit on `refs/baton/wip/<session_id>` holding HEAD's tree plus the
//!   working tree as it is now plus the handoff files. HEAD, the branches, the index file
//!   and the working tree are left exactly as they were; the tree is built in an in-memory
//!   index, never the repository's.
//! - [`Mode::Branch`]: GSD's `/gsd:pause-work` WIP commit on the current branch holding only
//!   the handoff files on top of HEAD; the user's staged changes stay staged and out of
//!   it. When that cannot be done safely it falls back to `Ref` and says why.
//! - [`Mode::Off`] saves nothing.
//!
//! libgit2 runs no git hooks, so neither mode triggers the user's `pre-commit` and friends.
//!
//! git's own locks (`index.lock`, a ref's `.lock`) are taken the way [`super::locks`]
//! describes: a process killed while holding one leaves a lock the next baton run clears
//! (or finishes), never one that breaks the user's next `git commit` for good.

use super::GitError;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use git2::{
    Commit, ErrorCode, Index, IndexEntry, IndexTime, ObjectType, Oid, Repository, RepositoryState, Signature,
    Tree,
};
use serde::{Deserialize, Serialize};

use super::facts::{RepoState, snapshot_budget};
use super::{Repo, display_path, git_err, head_info, rel_path, short_id, signature};
use crate::fsx;

/// Working-tree files larger than this are left out of a Ref checkpoint (and listed).
pub const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// How many skipped paths a checkpoint names (the count covers the rest).
pub const SKIPPED_LISTED: usize = 20;

/// Where Ref checkpoints live; the session id completes the name.
pub const WIP_REF_PREFIX: &str = "refs/baton/wip/";

const MODE_FILE: u32 = 0o100644;
const MODE_EXEC: u32 = 0o100755;
const MODE_LINK: u32 = 0o120000;

/// How a checkpoint is saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// A private ref per session; nothing the user sees changes.
    #[default]
    Ref,
    /// A WIP commit on the current branch with only the handoff files.
    Branch,
    /// No checkpoint.
    Off,
}

impl Mode {
    /// Reads a config value (`ref`, `branch`, `off`; case-insensitive).
    pub fn parse(text: &str) -> Option<Mode> {
        match text.trim().to_ascii_lowercase().as_str() {
            "ref" => Some(Mode::Ref),
            "branch" => Some(Mode::Branch),
            "off" | "none" | "false" => Some(Mode::Off),
            _ => None,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Mode::Ref => "ref",
            Mode::Branch => "branch",
            Mode::Off => "off",
        }
    }
}

/// What to save.
#[derive(Debug, Clone, Copy)]
pub struct CheckpointRequest<'a> {
    pub mode: Mode,
    /// Names the Ref checkpoint; checked like every session id (no `/`, `\`, `..`,
    /// control characters) and then as part of a ref name.
    pub session_id: &'a str,
    /// The commit message, e.g. `baton: checkpoint (critical-context) at 76% used` or
    /// GSD's `wip: phase-03 paused at 2/4`.
    pub message: &'a str,
    /// Files to put in the commit whatever is on disk: (path relative to the root,
    /// `/`-separated; content). The handoff files, written or about to be.
    pub extra_files: &'a [(String, Vec<u8>)],
}

/// What was saved, recorded in the handoff under `baton.checkpoint`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Checkpoint {
    pub requested: Mode,
    pub used: Mode,
    /// The full ref that now points at the commit: `refs/baton/wip/<sid>` or
    /// `refs/heads/<branch>`.
    pub reference: Option<String>,
    /// The branch committed on (Branch mode).
    pub branch: Option<String>,
    pub commit: Option<String>,
    pub short: Option<String>,
    pub parent: Option<String>,
    /// The HEAD commit the saved tree was built on (the parent's tree may be an older
    /// checkpoint's); `None` on an unborn branch.
    pub base: Option<String>,
    /// Why Branch mode was not possible and Ref was used instead.
    pub fallback_reason: Option<String>,
    /// Working-tree files over [`MAX_FILE_BYTES`] that were left out (their HEAD version,
    /// if any, stays in the tree).
    pub skipped_large: Vec<String>,
    /// Working-tree files that could not be read (left as in HEAD).
    pub unreadable: Vec<String>,
    /// Working-tree files left out because the snapshot budget ran out, and untracked
    /// folders the budget left unopened (ending in `/`) (the first [`SKIPPED_LISTED`]);
    /// `skipped_over_budget` counts them all.
    pub skipped_budget: Vec<String>,
    pub skipped_over_budget: usize,
    /// Files written into the tree on top of HEAD: changed and untracked working-tree
    /// files plus the extra files.
    pub files_included: usize,
    /// Tracked files removed from the tree because they are gone from the working tree.
    pub files_deleted: usize,
}

impl Checkpoint {
    /// What a handoff records about a checkpoint before it is made: the mode asked for.
    pub fn planned(mode: Mode) -> Checkpoint {
        Checkpoint::new(mode, mode)
    }

    fn new(requested: Mode, used: Mode) -> Checkpoint {
        Checkpoint {
            requested,
            used,
            reference: None,
            branch: None,
            commit: None,
            short: None,
            parent: None,
            base: None,
            fallback_reason: None,
            skipped_large: Vec::new(),
            unreadable: Vec::new(),
            skipped_budget: Vec::new(),
            skipped_over_budget: 0,
            files_included: 0,
            files_deleted: 0,
        }
    }

    fn set_commit(&mut self, id: Oid, parent: Option<Oid>) {
        self.commit = Some(id.to_string());
        self.short = Some(short_id(id));
        self.parent = parent.map(|p| p.to_string());
    }
}

/// The ref a session's Ref checkpoints go to, or why the session id cannot name one.
pub fn wip_ref_name(session_id: &str) -> Result<String, GitError> {
    if !fsx::valid_session_id(session_id) {
        return Err(format!("refusing the session id {session_id:?} in a ref name").into());
    }
    let name = format!("{WIP_REF_PREFIX}{session_id}");
    if !git2::Reference::is_valid_name(&name) {
        return Err(format!("the session id {session_id:?} does not make a valid git ref name").into());
    }
    Ok(name)
}

/// A validated extra file: git path bytes and content.
struct Extra<'a> {
    path: Vec<u8>,
    bytes: &'a [u8],
}

fn validate_extras<'a>(files: &'a [(String, Vec<u8>)]) -> Result<Vec<Extra<'a>>, GitError> {
    let mut out: Vec<Extra<'a>> = Vec::with_capacity(files.len());
    for (path, bytes) in files {
        let bad = path.is_empty()
            || path.starts_with('/')
            || path.contains('\0')
            || path.contains('\\')
            || path.split('/').any(|part| {
                part.is_empty() || part == "." || part == ".." || part.eq_ignore_ascii_case(".git")
            });
        if bad {
            return Err(format!("refusing the checkpoint file path {path:?}").into());
        }
        // The last one given for a path wins.
        out.retain(|e| e.path != path.as_bytes());
        out.push(Extra { path: path.as_bytes().to_vec(), bytes });
    }
    Ok(out)
}

pub(super) fn run(repo: &Repo, request: &CheckpointRequest<'_>) -> Result<Checkpoint, GitError> {
    if request.mode == Mode::Off {
        return Ok(Checkpoint::new(Mode::Off, Mode::Off));
    }
    let wip_ref = wip_ref_name(request.session_id)?;
    let extras = validate_extras(request.extra_files)?;
    let mut fallback_reason = None;
    if request.mode == Mode::Branch {
        match branch_checkpoint(repo, request.message, &extras) {
            Ok(done) => return Ok(done),
            Err(reason) => fallback_reason = Some(reason.to_string()),
        }
    }
    let mut result = ref_checkpoint(repo, &wip_ref, request.message, &extras)?;
    result.requested = request.mode;
    result.fallback_reason = fallback_reason;
    Ok(result)
}

fn with_newline(message: &str) -> String {
    let mut text = message.trim_end().to_string();
    text.push('\n');
    text
}

/// A bare index entry: only path, mode and blob matter for building a tree.
fn tree_entry(path: &[u8], mode: u32, id: Oid, size: u64) -> IndexEntry {
    IndexEntry {
        ctime: IndexTime::new(0, 0),
        mtime: IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode,
        uid: 0,
        gid: 0,
        file_size: size.min(u32::MAX as u64) as u32,
        id,
        flags: 0,
        flags_extended: 0,
        path: path.to_vec(),
    }
}

/// The mode an extra file gets: the one it has in the tree if it is a regular file there
/// (keeps an executable bit), else a plain file.
fn extra_mode(index: &Index, path: &[u8]) -> u32 {
    match index.get_path(&rel_path(path), 0) {
        Some(entry) if entry.mode == MODE_EXEC => MODE_EXEC,
        _ => MODE_FILE,
    }
}

/// An in-memory index holding `tree` (empty for an unborn branch).
fn index_of(tree: Option<&Tree<'_>>) -> Result<Index, GitError> {
    let mut index = Index::new().map_err(git_err("creating an in-memory index"))?;
    if let Some(tree) = tree {
        index.read_tree(tree).map_err(git_err("reading HEAD's tree"))?;
    }
    Ok(index)
}

/// True when adding a file at `path` would make libgit2 drop other entries: a folder of
/// that name exists, or a file (or symlink) where one of its parent folders should be.
fn collides(index: &Index, path: &[u8]) -> bool {
    let mut as_dir = path.to_vec();
    as_dir.push(b'/');
    index.find_prefix(as_dir).is_ok()
        || path
            .iter()
            .enumerate()
            .any(|(i, byte)| *byte == b'/' && index.get_path(&rel_path(&path[..i]), 0).is_some())
}

fn collision_error(path: &[u8]) -> String {
    format!("the checkpoint file {} collides with a folder or file in the tree", display_path(path))
}

/// Adds the extra files to an in-memory index; returns their blob ids and modes.
fn add_extras(
    git: &Repository,
    index: &mut Index,
    extras: &[Extra<'_>],
) -> Result<Vec<(Oid, u32)>, GitError> {
    let mut out = Vec::with_capacity(extras.len());
    for extra in extras {
        if collides(index, &extra.path) {
            return Err(collision_error(&extra.path).into());
        }
        let id = git.blob(extra.bytes).map_err(git_err("storing a handoff file"))?;
        let mode = extra_mode(index, &extra.path);
        index
            .add(&tree_entry(&extra.path, mode, id, extra.bytes.len() as u64))
            .map_err(git_err("adding a handoff file to the checkpoint tree"))?;
        out.push((id, mode));
    }
    Ok(out)
}

fn ref_checkpoint(
    repo: &Repo,
    wip_ref: &str,
    message: &str,
    extras: &[Extra<'_>],
) -> Result<Checkpoint, GitError> {
    let git = repo.git();
    let head = head_info(git)?;
    let head_commit = match head.commit {
        Some(id) => Some(git.find_commit(id).map_err(git_err("reading HEAD's commit"))?),
        None => None,
    };
    let head_tree = match &head_commit {
        Some(commit) => Some(commit.tree().map_err(git_err("reading HEAD's tree"))?),
        None => None,
    };
    let mut index = index_of(head_tree.as_ref())?;
    let mut result = Checkpoint::new(Mode::Ref, Mode::Ref);
    add_worktree(repo, &mut index, extras, &mut result)?;
    add_extras(git, &mut index, extras)?;
    result.files_included += extras.len();
    let tree_id = index.write_tree_to(git).map_err(git_err("writing the checkpoint tree"))?;
    let tree = git.find_tree(tree_id).map_err(git_err("reading the checkpoint tree"))?;

    let mut text = with_newline(message);
    if let Some(base) = head.commit {
        text.push_str(&format!("\nBaton-Head: {base}\n"));
    }
    let signature = signature(git)?;
    // Two checkpoints of one session racing: retry on the newer parent.
    for attempt in 0..3 {
        let previous = match git.find_reference(wip_ref) {
            Ok(reference) => {
                Some(reference.peel_to_commit().map_err(git_err("reading the previous checkpoint"))?)
            }
            Err(e) if e.code() == ErrorCode::NotFound => None,
            Err(e) => return Err(git_err("reading the checkpoint ref")(e)),
        };
        let parent: Option<&Commit<'_>> = previous.as_ref().or(head_commit.as_ref());
        let parents: Vec<&Commit<'_>> = parent.into_iter().collect();
        let id = git
            .commit(None, &signature, &signature, &text, &tree, &parents)
            .map_err(git_err("writing the checkpoint commit"))?;
        let moved = move_ref(git, wip_ref, id, previous.as_ref().map(Commit::id), &signature);
        match moved {
            Ok(_) => {
                result.set_commit(id, parent.map(Commit::id));
                result.reference = Some(wip_ref.to_string());
                result.base = head.commit.map(|c| c.to_string());
                return Ok(result);
            }
            Err(e)
                if attempt < 2
                    && matches!(e.code(), ErrorCode::Modified | ErrorCode::Exists | ErrorCode::Locked) =>
            {
                continue;
            }
            Err(e) => return Err(git_err("updating the checkpoint ref")(e)),
        }
    }
    Err("git: updating the checkpoint ref: it kept changing under baton".to_string().into())
}

/// Puts the working copy of every path the scan found changed into `index`: files and
/// symlinks as they are now, missing ones removed. Extra files are left to the caller.
fn add_worktree(
    repo: &Repo,
    index: &mut Index,
    extras: &[Extra<'_>],
    result: &mut Checkpoint,
) -> Result<(), GitError> {
    let git = repo.git();
    let scan = repo.scan()?;
    let budget = snapshot_budget();
    let started = std::time::Instant::now();
    // Without core.fileMode the executable bit on disk means nothing: keep the tree's.
    let trust_mode = git.config().and_then(|c| c.get_bool("core.filemode")).unwrap_or(true);
    let mut additions = Vec::new();
    // Tracked paths first (the agent's edits), then untracked ones, each in path order;
    // the files of a folder too big to open whole (generated, most likely) go last.
    let (tracked, untracked): (Vec<&Vec<u8>>, Vec<&Vec<u8>>) =
        scan.touched().iter().partition(|p| index.get_path(&rel_path(p), 0).is_some());
    let unopened = scan.unopened();
    let in_unopened = |path: &[u8]| {
        let at = unopened.partition_point(|f| f.as_slice() <= path);
        at > 0 && path.starts_with(&unopened[at - 1])
    };
    let (mut untracked, in_big_folders): (Vec<&Vec<u8>>, Vec<&Vec<u8>>) =
        untracked.into_iter().partition(|p| !in_unopened(p));
    untracked.extend(in_big_folders);
    let mut spent_bytes: u64 = 0;
    let skip = |path: &[u8], result: &mut Checkpoint| {
        if result.skipped_budget.len() < SKIPPED_LISTED {
            result.skipped_budget.push(display_path(path));
        }
        result.skipped_over_budget += 1;
    };
    let tracked_count = tracked.len();
    for (n, path) in tracked.into_iter().chain(untracked).enumerate() {
        // A trailing slash is a nested repository or an unreadable folder, not a file.
        if path.ends_with(b"/") || extras.iter().any(|e| e.path == *path) {
            continue;
        }
        // Past the budget an untracked file is only counted (no need to look at it:
        // it cannot be a removal).
        if n >= tracked_count && (additions.len() >= budget.max_files || started.elapsed() > budget.max_time)
        {
            skip(path, result);
            continue;
        }
        let abs = repo.root().join(rel_path(path));
        if behind_symlink(repo.root(), path) {
            // The file's folder is now a symlink (or a file): the path as git sees it is
            // gone, and reading through the link could reach outside the work tree.
            remove_entry(index, path, result);
            continue;
        }
        match fs::symlink_metadata(&abs) {
            Ok(meta) if meta.file_type().is_symlink() || meta.is_file() => {
                if meta.is_file() && meta.len() > MAX_FILE_BYTES {
                    result.skipped_large.push(display_path(path));
                } else if additions.len() >= budget.max_files
                    || spent_bytes + meta.len() > budget.max_bytes
                    || started.elapsed() > budget.max_time
                {
                    skip(path, result);
                } else {
                    spent_bytes += meta.len();
                    additions.push((path, abs, meta));
                }
            }
            // Other kinds (fifo, socket, device) cannot be stored; leave the path alone.
            Ok(meta) if !meta.is_dir() => {}
            Ok(_) => remove_entry(index, path, result),
            Err(e) if matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => {
                remove_entry(index, path, result)
            }
            Err(_) => result.unreadable.push(display_path(path)),
        }
    }
    // Untracked folders the scan's budget left unopened: whatever else is in them.
    for folder in scan.unopened() {
        skip(folder, result);
    }
    // Removals first, so a file that replaced a folder (or the reverse) does not collide.
    for (path, abs, meta) in additions {
        // Storing blobs is the cost that grows: the time budget holds here too.
        if started.elapsed() > budget.max_time {
            skip(path, result);
            continue;
        }
        let (id, mode) = if meta.file_type().is_symlink() {
            match fs::read_link(&abs) {
                Ok(target) => {
                    let id = git
                        .blob(target.as_os_str().as_encoded_bytes())
                        .map_err(git_err("storing a symlink"))?;
                    (id, MODE_LINK)
                }
                Err(_) => {
                    result.unreadable.push(display_path(path));
                    continue;
                }
            }
        } else {
            // blob_path applies the repository's filters (line endings), as `git add` would.
            match git.blob_path(&abs) {
                Ok(id) => {
                    let exec = crate::platform::mode_of(&meta) & 0o111 != 0;
                    let mode = match index.get_path(&rel_path(path), 0) {
                        Some(old) if !trust_mode && (old.mode == MODE_FILE || old.mode == MODE_EXEC) => {
                            old.mode
                        }
                        _ if exec => MODE_EXEC,
                        _ => MODE_FILE,
                    };
                    (id, mode)
                }
                Err(_) if fs::symlink_metadata(&abs).is_err() => {
                    remove_entry(index, path, result);
                    continue;
                }
                Err(_) => {
                    result.unreadable.push(display_path(path));
                    continue;
                }
            }
        };
        index
            .add(&tree_entry(path, mode, id, meta.len()))
            .map_err(git_err("adding a working-tree file to the checkpoint tree"))?;
        result.files_included += 1;
    }
    Ok(())
}

/// True when a parent folder of `path` is not a real folder (a symlink, a file, missing).
fn behind_symlink(root: &Path, path: &[u8]) -> bool {
    path.iter()
        .enumerate()
        .filter(|(_, byte)| **byte == b'/')
        .any(|(i, _)| !fs::symlink_metadata(root.join(rel_path(&path[..i]))).is_ok_and(|meta| meta.is_dir()))
}

fn remove_entry(index: &mut Index, path: &[u8], result: &mut Checkpoint) {
    if index.get_path(&rel_path(path), 0).is_some() && index.remove(&rel_path(path), 0).is_ok() {
        result.files_deleted += 1;
    }
}

/// Moves `name` to `new` if it is still at `expected` (`None`: it must not exist), under
/// its lock ([`super::locks::RefLock`]); where the file system has no hard links, through
/// libgit2's own compare-and-swap. `Err` with code `Modified` when it moved meanwhile,
/// `Locked` when another process holds it.
fn move_ref(
    git: &Repository,
    name: &str,
    new: Oid,
    expected: Option<Oid>,
    who: &Signature<'_>,
) -> Result<(), git2::Error> {
    let locked = |why: String| git2::Error::new(ErrorCode::Locked, git2::ErrorClass::Reference, why);
    let lock = match super::locks::RefLock::take(git, name, new) {
        Ok(lock) => lock,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            return Err(locked(format!("{name} is locked")));
        }
        Err(_) => {
            return match expected {
                Some(old) => git.reference_matching(name, new, true, old, "baton: checkpoint").map(|_| ()),
                None => git.reference(name, new, false, "baton: checkpoint").map(|_| ()),
            };
        }
    };
    if lock.current(git)? != expected {
        return Err(git2::Error::new(
            ErrorCode::Modified,
            git2::ErrorClass::Reference,
            format!("{name} moved"),
        ));
    }
    lock.commit(git, expected, who, "baton: checkpoint").map_err(|e| locked(e.to_string()))
}

/// Test builds only: ends the process at once, as `kill -9` would, at the named step of a
/// checkpoint (`BATON_DEBUG_KILL_AT`), so the tests can stop a pause exactly there.
fn killed_at(step: &str) {
    #[cfg(debug_assertions)]
    if std::env::var("BATON_DEBUG_KILL_AT").is_ok_and(|at| at == step) {
        crate::platform::exit_test_kill();
    }
    let _ = step;
}

/// A scratch copy of the index, removed when dropped unless it was renamed into place.
struct Scratch {
    path: PathBuf,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
        let mut lock = self.path.clone().into_os_string();
        lock.push(".lock");
        let _ = fs::remove_file(lock);
    }
}

/// The WIP commit on the branch. `Err` is the reason it could not be made (nothing has
/// changed then); the caller falls back to a Ref checkpoint.
///
/// The index is read into a scratch copy and updated there, the commit written; only then
/// are git's locks taken (the index's, the branch's: links to scratch files holding the
/// new index and the new commit, see [`super::locks`]) for the final check and the two
/// renames, the index first. SIGINT/SIGTERM/SIGHUP are deferred until the locks and the
/// scratch copy are gone; a `kill -9` in between leaves locks the next baton run
/// recognises and clears or finishes. The user's staged changes stay staged throughout.
fn branch_checkpoint(repo: &Repo, message: &str, extras: &[Extra<'_>]) -> Result<Checkpoint, GitError> {
    // Declared first, so dropped last: after the lock and the scratch index are removed.
    let _signals = super::signals::DeferSignals::new();
    let git = repo.git();
    let head = head_info(git)?;
    if head.detached {
        return Err("HEAD is detached, so there is no branch to commit on".to_string().into());
    }
    let branch_ref = match head.branch_ref {
        Some(name) if name.starts_with("refs/heads/") => name,
        _ => return Err("HEAD does not point at a local branch".to_string().into()),
    };
    let branch = head.branch.unwrap_or_default();
    let Some(tip) = head.commit else {
        return Err(format!("the branch {branch} has no commit yet").into());
    };
    let state = git.state();
    if state != RepositoryState::Clean {
        return Err(format!("a {} is in progress", RepoState::from_git(state).word()).into());
    }
    if git.config().and_then(|c| c.get_bool("commit.gpgsign")).unwrap_or(false) {
        return Err("commit.gpgSign is set and baton cannot sign a commit".to_string().into());
    }
    let git_dir = git.path();
    let index_path = git_dir.join("index");
    let locked = "the index is locked (index.lock exists): another git command is running, or one crashed";
    if fs::symlink_metadata(git_dir.join("index.lock")).is_ok() {
        return Err(locked.to_string().into());
    }
    let head_commit = git.find_commit(tip).map_err(git_err("reading HEAD's commit"))?;
    let head_tree = head_commit.tree().map_err(git_err("reading HEAD's tree"))?;
    for extra in extras {
        let path = &rel_path(&extra.path);
        if head_tree.get_path(path).is_err() && git.is_path_ignored(path).unwrap_or(false) {
            return Err(format!(
                "{} is ignored by git, so it is not committed on the branch",
                display_path(&extra.path)
            )
            .into());
        }
    }

    let index_meta = match fs::symlink_metadata(&index_path) {
        Ok(meta) if meta.is_file() => meta,
        Ok(_) => return Err("the index is not a regular file".to_string().into()),
        Err(_) => return Err("the repository has no index file".to_string().into()),
    };
    // libgit2 writes an index through `<path>.lock`, which is the lock baton holds, so the
    // new index is written as a scratch copy and renamed over the real one.
    let scratch = Scratch { path: super::locks::index_scratch(git_dir) };
    let bytes = fsx::read_limited(&index_path, 1 << 32).map_err(|e| format!("cannot read the index: {e}"))?;
    write_new(&scratch.path, &bytes, crate::platform::mode_of(&index_meta) & 0o777)
        .map_err(|e| format!("cannot copy the index: {e}"))?;
    let mut real = Index::open(&scratch.path).map_err(git_err("reading the index"))?;
    if real.has_conflicts() {
        return Err("the index has unresolved conflicts".to_string().into());
    }
    if let Some(extra) = extras.iter().find(|e| collides(&real, &e.path)) {
        return Err(collision_error(&extra.path).into());
    }

    let mut tree_index = index_of(Some(&head_tree))?;
    let blobs = add_extras(git, &mut tree_index, extras)?;
    let tree_id = tree_index.write_tree_to(git).map_err(git_err("writing the commit tree"))?;
    let tree = git.find_tree(tree_id).map_err(git_err("reading the commit tree"))?;
    let signature = signature(git)?;
    let text = with_newline(message);
    let commit_id = git
        .commit(None, &signature, &signature, &text, &tree, &[&head_commit])
        .map_err(git_err("writing the WIP commit"))?;

    smudge_racily_clean(repo.root(), &mut real, &index_meta, extras)?;
    for (extra, (id, mode)) in extras.iter().zip(blobs) {
        let _ = real.remove(&rel_path(&extra.path), 0);
        real.add(&index_entry_for(repo.root(), extra, id, mode))
            .map_err(git_err("updating the index for a handoff file"))?;
    }
    real.write().map_err(git_err("writing the index"))?;

    // The real locks, only for the final step. A concurrent `git add` since the index was
    // read, or a checkout, would be lost or mismatched: then nothing is replaced.
    let index_lock = match super::locks::IndexLock::take(git_dir, &scratch.path) {
        Ok(lock) => lock,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Err(locked.to_string().into()),
        Err(e) => return Err(format!("cannot lock the index: {e}").into()),
    };
    killed_at("index-locked");
    let branch_lock = match super::locks::RefLock::take(git, &branch_ref, commit_id) {
        Ok(lock) => lock,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            return Err(format!("the branch {branch} is locked ({branch_ref}.lock exists)").into());
        }
        Err(e) => return Err(format!("cannot lock the branch {branch}: {e}").into()),
    };
    killed_at("branch-locked");
    let now = head_info(git)?;
    let branch_now = branch_lock.current(git).map_err(git_err("reading the branch"))?;
    if now.branch_ref.as_deref() != Some(branch_ref.as_str()) || branch_now != Some(tip) {
        return Err("HEAD moved while the checkpoint was being prepared".to_string().into());
    }
    match fsx::read_limited(&index_path, 1 << 32) {
        Ok(again) if again == bytes => {}
        _ => return Err("the index changed while the checkpoint was being prepared".to_string().into()),
    }
    // The index first: from here the commit is decided (a process killed before the branch
    // moves leaves its lock holding the commit, and the next run moves it).
    index_lock.commit().map_err(|e| format!("cannot replace the index: {e}"))?;
    killed_at("index-replaced");
    let subject = text.lines().next().unwrap_or_default();
    if let Err(e) = branch_lock.commit(git, Some(tip), &signature, &format!("commit: {subject}")) {
        // Put the old index back so HEAD and the index agree again.
        let restored = Scratch { path: super::locks::index_scratch(git_dir) };
        let _ = write_new(&restored.path, &bytes, crate::platform::mode_of(&index_meta) & 0o777)
            .and_then(|()| super::locks::IndexLock::take(git_dir, &restored.path))
            .and_then(super::locks::IndexLock::commit);
        return Err(format!("the branch {branch} could not be moved ({e})").into());
    }
    killed_at("branch-moved");

    let mut result = Checkpoint::new(Mode::Branch, Mode::Branch);
    result.set_commit(commit_id, Some(tip));
    result.reference = Some(branch_ref);
    result.branch = Some(branch);
    result.base = Some(tip.to_string());
    result.files_included = extras.len();
    Ok(result)
}

fn write_new(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    use std::io::Write;
    let mut file = crate::platform::create_new(path, mode)?;
    file.write_all(bytes)
}

/// The index entry for a handoff file now committed: HEAD's blob, and the file's stat
/// data only when the file on disk holds exactly those bytes (so git sees it clean
/// without rehashing). Otherwise the stat data is zero and git compares content.
fn index_entry_for(root: &Path, extra: &Extra<'_>, id: Oid, mode: u32) -> IndexEntry {
    let mut entry = tree_entry(&extra.path, mode, id, extra.bytes.len() as u64);
    let abs = root.join(rel_path(&extra.path));
    if behind_symlink(root, &extra.path) {
        return entry;
    }
    let Ok(meta) = fs::symlink_metadata(&abs) else { return entry };
    if !meta.is_file() || meta.len() != extra.bytes.len() as u64 {
        return entry;
    }
    match fsx::read_limited(&abs, meta.len()) {
        Ok(on_disk) if on_disk == extra.bytes => {}
        _ => return entry,
    }
    // (None on Windows: the entry keeps zero stat data and git compares content.)
    let Some(stat) = crate::platform::stat_identity(&meta) else { return entry };
    entry.ctime = IndexTime::new(stat.ctime.0 as i32, stat.ctime.1);
    entry.mtime = IndexTime::new(stat.mtime.0 as i32, stat.mtime.1);
    entry.dev = stat.dev as u32;
    entry.ino = stat.ino as u32;
    entry.uid = stat.uid;
    entry.gid = stat.gid;
    entry
}

/// Git's racy-clean rule, which libgit2 applies only to an index it owns: an entry whose
/// file changed in the same second the old index was written still has matching stat
/// data, and once the rewritten (newer) index exists git would trust it. Such entries
/// whose content no longer matches get size 0, which makes git compare content.
fn smudge_racily_clean(
    root: &Path,
    index: &mut Index,
    old: &fs::Metadata,
    extras: &[Extra<'_>],
) -> Result<(), GitError> {
    let index_second = old
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs() as i64);
    let mut smudge = Vec::new();
    for entry in index.iter() {
        let stage = (entry.flags >> 12) & 0x3;
        if stage != 0
            || entry.file_size == 0
            || i64::from(entry.mtime.seconds()) < index_second
            || (entry.mode != MODE_FILE && entry.mode != MODE_EXEC)
            || extras.iter().any(|e| e.path == entry.path)
        {
            continue;
        }
        let same =
            Oid::hash_file(ObjectType::Blob, root.join(rel_path(&entry.path))).is_ok_and(|id| id == entry.id);
        if !same {
            smudge.push(entry);
        }
    }
    for mut entry in smudge {
        entry.file_size = 0;
        index.add(&entry).map_err(git_err("updating the index"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::facts::FileState;
    use super::super::testutil::*;
    use super::super::{Repo, checkpoint};
    use super::*;

    const HANDOFF: &str = ".planning/HANDOFF.json";
    const CONTINUE: &str = ".planning/phases/03-api/.continue-here.md";

    fn extras() -> Vec<(String, Vec<u8>)> {
        vec![
            (HANDOFF.to_string(), b"{\"version\":\"1.0\",\"status\":\"paused\"}\n".to_vec()),
            (CONTINUE.to_string(), b"---\nstatus: paused\n---\n".to_vec()),
        ]
    }

    fn request<'a>(mode: Mode, files: &'a [(String, Vec<u8>)]) -> CheckpointRequest<'a> {
        CheckpointRequest {
            mode,
            session_id: "7f3c2a10-5b1e-4c2d-9a8f-0d6e4b2c1a99",
            message: "baton: checkpoint (critical-context) at 76% used",
            extra_files: files,
        }
    }

    fn run_on(t: &TestRepo, mode: Mode, files: &[(String, Vec<u8>)]) -> Checkpoint {
        checkpoint(t.root(), &request(mode, files)).unwrap().unwrap()
    }

    /// A repository with history, a staged change, an unstaged change, a deletion, an
    /// untracked file in a new folder, an ignored file and a symlink.
    fn busy_repo() -> TestRepo {
        let t = TestRepo::new();
        t.write(".gitignore", "*.log\n");
        t.write("src/lib.rs", "pub fn a() {}\n");
        t.write("src/staged.rs", "old\n");
        t.write("README.md", "readme\n");
        t.write("gone.txt", "bye\n");
        t.commit_all("init");
        t.write("src/lib.rs", "pub fn a() { changed }\n");
        t.write("src/staged.rs", "staged\n");
        t.stage("src/staged.rs");
        std::fs::remove_file(t.root().join("gone.txt")).unwrap();
        t.write("notes/new/idea.md", "idea\n");
        t.write("trace.log", "ignored\n");
        #[cfg(unix)]
        std::os::unix::fs::symlink("README.md", t.root().join("link")).unwrap();
        t
    }

    #[test]
    fn ref_checkpoint_saves_the_working_tree_and_changes_nothing() {
        let t = busy_repo();
        let files = extras();
        let index_before = t.index_bytes();
        let refs_before = t.refs();
        let tree_before = t.worktree();

        let result = run_on(&t, Mode::Ref, &files);

        assert_eq!(t.index_bytes(), index_before, "index file must be byte-identical");
        let wip = format!("{WIP_REF_PREFIX}7f3c2a10-5b1e-4c2d-9a8f-0d6e4b2c1a99");
        let refs_after: Vec<_> = t.refs().into_iter().filter(|(name, _)| *name != wip).collect();
        assert_eq!(refs_after, refs_before, "HEAD and every other ref must be unchanged");
        assert_eq!(t.worktree(), tree_before, "working tree must be unchanged");
        assert!(!t.git.path().join("index.lock").exists());

        assert_eq!(result.used, Mode::Ref);
        assert_eq!(result.reference.as_deref(), Some(wip.as_str()));
        let head = t.git.head().unwrap().target().unwrap();
        assert_eq!(result.parent, Some(head.to_string()));
        assert_eq!(result.base, Some(head.to_string()));
        let commit = result.commit.clone().unwrap();
        assert_eq!(t.git.refname_to_id(&wip).unwrap().to_string(), commit);
        assert_eq!(result.short.as_deref(), Some(&commit[..7]));

        assert_eq!(t.blob_at(&commit, "src/lib.rs").unwrap(), b"pub fn a() { changed }\n");
        assert_eq!(t.blob_at(&commit, "src/staged.rs").unwrap(), b"staged\n");
        assert_eq!(t.blob_at(&commit, "notes/new/idea.md").unwrap(), b"idea\n");
        assert_eq!(t.blob_at(&commit, HANDOFF).unwrap(), files[0].1);
        assert_eq!(t.blob_at(&commit, CONTINUE).unwrap(), files[1].1);
        assert_eq!(t.blob_at(&commit, "link").unwrap(), b"README.md");
        assert_eq!(
            t.tree_paths(&commit),
            [
                ".gitignore",
                HANDOFF,
                CONTINUE,
                "README.md",
                "link",
                "notes/new/idea.md",
                "src/lib.rs",
                "src/staged.rs"
            ]
        );
        // Deleted file gone, ignored file absent.
        assert!(t.blob_at(&commit, "gone.txt").is_none());
        assert!(t.blob_at(&commit, "trace.log").is_none());
        // lib.rs, staged.rs, idea.md, link + 2 extras; gone.txt deleted.
        assert_eq!(result.files_included, 6);
        assert_eq!(result.files_deleted, 1);
        let message =
            t.git.find_commit(Oid::from_str(&commit).unwrap()).unwrap().message().unwrap().to_string();
        assert!(message.starts_with("baton: checkpoint (critical-context) at 76% used\n"));
        assert!(message.contains(&format!("Baton-Head: {head}")));
        let author =
            t.git.find_commit(Oid::from_str(&commit).unwrap()).unwrap().author().name().unwrap().to_string();
        assert_eq!(author, "Test User");
    }

    #[test]
    fn second_ref_checkpoint_has_the_first_as_parent() {
        let t = busy_repo();
        let first = run_on(&t, Mode::Ref, &extras());
        t.write("src/lib.rs", "pub fn a() { again }\n");
        let second = run_on(&t, Mode::Ref, &extras());
        assert_eq!(second.parent, first.commit);
        assert_ne!(second.commit, first.commit);
        assert_eq!(
            t.blob_at(second.commit.as_ref().unwrap(), "src/lib.rs").unwrap(),
            b"pub fn a() { again }\n"
        );
    }

    #[test]
    fn unborn_branch_checkpoint_has_no_parent() {
        let t = TestRepo::new();
        t.write("first.txt", "first\n");
        let result = run_on(&t, Mode::Ref, &extras());
        assert_eq!(result.parent, None);
        assert_eq!(result.base, None);
        let commit = t.git.find_commit(Oid::from_str(result.commit.as_ref().unwrap()).unwrap()).unwrap();
        assert_eq!(commit.parent_count(), 0);
        assert_eq!(t.tree_paths(result.commit.as_ref().unwrap()), [HANDOFF, CONTINUE, "first.txt"]);
        // HEAD is still unborn; no index file appeared.
        assert!(t.git.head().is_err());
        assert!(!t.git.path().join("index").exists());

        let branch = run_on(&t, Mode::Branch, &extras());
        assert_eq!(branch.used, Mode::Ref);
        assert_eq!(branch.fallback_reason.as_deref(), Some("the branch main has no commit yet"));
    }

    #[test]
    fn large_files_are_skipped_and_listed() {
        let t = TestRepo::new();
        t.write("small.txt", "s\n");
        t.commit_all("init");
        t.write_bytes("big.bin", &vec![0u8; MAX_FILE_BYTES as usize + 1]);
        t.write_bytes("exact.bin", &vec![1u8; 1024]);
        let result = run_on(&t, Mode::Ref, &[]);
        assert_eq!(result.skipped_large, ["big.bin"]);
        let commit = result.commit.unwrap();
        assert!(t.blob_at(&commit, "big.bin").is_none());
        assert!(t.blob_at(&commit, "exact.bin").is_some());
    }

    #[test]
    fn bad_session_ids_are_refused_before_anything_is_written() {
        let t = busy_repo();
        let refs = t.refs();
        for bad in ["../x", "a/b", "a\\b", "..", "", "a\nb", "ends.lock", "sp ace", "a@{b", "col:on"] {
            let mut req = request(Mode::Ref, &[]);
            req.session_id = bad;
            assert!(checkpoint(t.root(), &req).is_err(), "{bad:?} should be refused");
        }
        assert_eq!(t.refs(), refs);
        for bad in ["/abs", "../up", "a/../b", ".git/config", "a//b", ""] {
            let files = vec![(bad.to_string(), b"x".to_vec())];
            assert!(checkpoint(t.root(), &request(Mode::Ref, &files)).is_err(), "{bad:?} should be refused");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_folder_replaced_by_a_symlink_is_not_read_through() {
        let t = TestRepo::new();
        t.write("dir/secret.txt", "in repo\n");
        t.commit_all("init");
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "outside\n").unwrap();
        std::fs::remove_dir_all(t.root().join("dir")).unwrap();
        std::os::unix::fs::symlink(outside.path(), t.root().join("dir")).unwrap();
        let result = run_on(&t, Mode::Ref, &[]);
        let commit = result.commit.unwrap();
        assert_eq!(t.tree_paths(&commit), ["dir"]);
        assert_eq!(t.blob_at(&commit, "dir").unwrap(), outside.path().as_os_str().as_encoded_bytes());
    }

    #[test]
    fn extra_files_that_would_replace_a_folder_are_refused() {
        let t = busy_repo();
        let files = vec![("src".to_string(), b"x".to_vec())];
        let err = checkpoint(t.root(), &request(Mode::Ref, &files)).unwrap_err();
        assert!(err.to_string().contains("collides"), "{err}");
        let files = vec![("README.md/inner".to_string(), b"x".to_vec())];
        assert!(checkpoint(t.root(), &request(Mode::Ref, &files)).is_err());
        // Branch mode refuses it, and so does the Ref fallback: nothing moves.
        let head = t.git.head().unwrap().target();
        let files = vec![("src".to_string(), b"x".to_vec())];
        assert!(checkpoint(t.root(), &request(Mode::Branch, &files)).is_err());
        assert_eq!(t.git.head().unwrap().target(), head);
        assert!(!t.git.path().join("index.lock").exists());
    }

    #[test]
    fn linked_worktree_uses_its_own_head_and_index() {
        let t = busy_repo();
        let main_index = t.index_bytes();
        let holder = tempfile::tempdir().unwrap();
        let wt_path = holder.path().join("wt");
        let head = t.git.head().unwrap().peel_to_commit().unwrap();
        let branch = t.git.branch("feature", &head, false).unwrap();
        let mut options = git2::WorktreeAddOptions::new();
        options.reference(Some(branch.get()));
        t.git.worktree("feature", &wt_path, Some(&options)).unwrap();
        std::fs::write(wt_path.join("wt-only.txt"), "w\n").unwrap();

        let facts = super::super::gather(&wt_path, None).unwrap().unwrap();
        assert_eq!(facts.branch.as_deref(), Some("feature"));
        assert_eq!(facts.root, wt_path.canonicalize().unwrap());
        let paths: Vec<&str> = facts.uncommitted.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["wt-only.txt"]);

        let files = extras();
        for (path, bytes) in &files {
            std::fs::create_dir_all(wt_path.join(path).parent().unwrap()).unwrap();
            std::fs::write(wt_path.join(path), bytes).unwrap();
        }
        let result = checkpoint(&wt_path, &request(Mode::Branch, &files)).unwrap().unwrap();
        assert_eq!(result.used, Mode::Branch, "{:?}", result.fallback_reason);
        assert_eq!(result.branch.as_deref(), Some("feature"));
        assert_eq!(t.git.head().unwrap().target(), Some(head.id()), "main is untouched");
        assert_eq!(t.index_bytes(), main_index, "main's index is untouched");
        let facts = super::super::gather(&wt_path, None).unwrap().unwrap();
        let paths: Vec<&str> = facts.uncommitted.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["wt-only.txt"]);
    }

    #[test]
    fn off_does_nothing() {
        let t = busy_repo();
        let refs = t.refs();
        let result = run_on(&t, Mode::Off, &extras());
        assert_eq!(result.used, Mode::Off);
        assert!(result.commit.is_none());
        assert_eq!(t.refs(), refs);
    }

    #[test]
    fn branch_commit_holds_only_the_handoff_and_keeps_staged_work_staged() {
        let t = busy_repo();
        let files = extras();
        for (path, bytes) in &files {
            t.write_bytes(path, bytes);
        }
        let head_before = t.git.head().unwrap().target().unwrap();
        let tree_before = t.worktree();
        let staged_before = t.git.index().unwrap().get_path(Path::new("src/staged.rs"), 0).unwrap().id;

        let mut req = request(Mode::Branch, &files);
        req.message = "wip: phase-03 paused at 2/4";
        let result = checkpoint(t.root(), &req).unwrap().unwrap();

        assert_eq!(result.used, Mode::Branch, "{:?}", result.fallback_reason);
        assert_eq!(result.branch.as_deref(), Some("main"));
        assert_eq!(result.reference.as_deref(), Some("refs/heads/main"));
        assert_eq!(result.parent, Some(head_before.to_string()));
        let commit = result.commit.clone().unwrap();
        let head_after = t.git.head().unwrap();
        assert_eq!(head_after.name().unwrap(), "refs/heads/main");
        assert_eq!(head_after.target().unwrap().to_string(), commit);
        let c = t.git.find_commit(Oid::from_str(&commit).unwrap()).unwrap();
        assert_eq!(c.message().unwrap(), "wip: phase-03 paused at 2/4\n");

        // The commit is HEAD plus exactly the two handoff files.
        let parent_tree = t.git.find_commit(head_before).unwrap().tree().unwrap();
        let diff = t.git.diff_tree_to_tree(Some(&parent_tree), Some(&c.tree().unwrap()), None).unwrap();
        let mut changed: Vec<String> =
            diff.deltas().map(|d| d.new_file().path().unwrap().to_string_lossy().into_owned()).collect();
        changed.sort();
        assert_eq!(changed, [HANDOFF, CONTINUE]);
        assert_eq!(t.blob_at(&commit, "src/staged.rs").unwrap(), b"old\n");

        // The staged change is still staged, nothing else is, the working tree is as it was.
        assert_eq!(t.worktree(), tree_before);
        let index = t.git.index().unwrap();
        assert_eq!(index.get_path(Path::new("src/staged.rs"), 0).unwrap().id, staged_before);
        let repo = Repo::discover(t.root()).unwrap().unwrap();
        let states: Vec<(String, &str, bool)> = repo
            .scan()
            .unwrap()
            .changes()
            .iter()
            .map(|c| (c.path.clone(), c.state.word(), c.staged))
            .collect();
        assert_eq!(
            states,
            [
                ("gone.txt".to_string(), "deleted", false),
                ("src/lib.rs".to_string(), "modified", false),
                ("src/staged.rs".to_string(), "staged", true),
                ("link".to_string(), "untracked", false),
                ("notes/new/idea.md".to_string(), "untracked", false),
            ]
        );
        assert!(!t.git.path().join("index.lock").exists());
        let leftovers: Vec<_> = std::fs::read_dir(t.git.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("baton-index"))
            .collect();
        assert!(leftovers.is_empty());
        if let Some(porcelain) = t.porcelain() {
            assert_eq!(
                porcelain,
                " D gone.txt\n M src/lib.rs\nM  src/staged.rs\n?? link\n?? notes/new/idea.md\n"
            );
        }
    }

    #[test]
    fn branch_mode_keeps_a_racily_clean_change_visible() {
        let t = TestRepo::new();
        t.git.config().unwrap().set_bool("core.trustctime", false).unwrap();
        t.write("r.txt", "aaaa");
        t.commit_all("init");
        let past = std::time::SystemTime::now() - std::time::Duration::from_secs(100);
        let set_mtime = |path: &Path| {
            let file = fs::OpenOptions::new().write(true).open(path).unwrap();
            file.set_modified(past).unwrap();
        };
        t.write("r.txt", "bbbb");
        set_mtime(&t.root().join("r.txt"));
        t.stage("r.txt");
        // The index was written in the same second the file last changed, and the file
        // changes again without its size or mtime changing: only content tells.
        set_mtime(&t.git.path().join("index"));
        t.write("r.txt", "cccc");
        set_mtime(&t.root().join("r.txt"));

        let result = run_on(&t, Mode::Branch, &extras());
        assert_eq!(result.used, Mode::Branch);
        let repo = Repo::discover(t.root()).unwrap().unwrap();
        let r = repo.scan().unwrap().changes().iter().find(|c| c.path == "r.txt").cloned().unwrap();
        assert_eq!((r.state, r.staged), (FileState::Modified, true));
        if let Some(porcelain) = t.porcelain() {
            assert!(porcelain.contains("MM r.txt"), "{porcelain}");
        }
    }

    #[test]
    fn branch_mode_with_handoff_files_not_on_disk_stages_nothing() {
        let t = busy_repo();
        let result = run_on(&t, Mode::Branch, &extras());
        assert_eq!(result.used, Mode::Branch);
        let repo = Repo::discover(t.root()).unwrap().unwrap();
        let handoff = repo.scan().unwrap().changes().iter().find(|c| c.path == HANDOFF).cloned().unwrap();
        // Committed but absent from the working tree: a working-tree deletion, not staged.
        assert_eq!(handoff.state, FileState::Deleted);
        assert!(!handoff.staged);
    }

    #[test]
    fn detached_head_falls_back_to_ref() {
        let t = busy_repo();
        let head = t.git.head().unwrap().target().unwrap();
        t.git.set_head_detached(head).unwrap();
        let refs = t.refs();
        let result = run_on(&t, Mode::Branch, &extras());
        assert_eq!(result.requested, Mode::Branch);
        assert_eq!(result.used, Mode::Ref);
        assert!(result.fallback_reason.as_deref().unwrap().contains("detached"));
        assert_eq!(result.parent, Some(head.to_string()));
        assert_eq!(t.git.head().unwrap().target(), Some(head));
        assert!(t.git.head_detached().unwrap());
        assert!(t.refs().iter().all(|r| refs.contains(r) || r.0.starts_with(WIP_REF_PREFIX)));
    }

    #[test]
    fn index_lock_makes_branch_fall_back_and_ref_still_works() {
        let t = busy_repo();
        let lock = t.git.path().join("index.lock");
        std::fs::write(&lock, b"someone else's").unwrap();
        let index_before = t.index_bytes();
        let head = t.git.head().unwrap().target().unwrap();

        let result = run_on(&t, Mode::Branch, &extras());
        assert_eq!(result.used, Mode::Ref);
        assert!(result.fallback_reason.as_deref().unwrap().contains("index.lock"));
        assert_eq!(std::fs::read(&lock).unwrap(), b"someone else's", "the lock must not be broken");
        assert_eq!(t.git.head().unwrap().target(), Some(head));
        assert_eq!(t.index_bytes(), index_before);

        let plain = run_on(&t, Mode::Ref, &extras());
        assert_eq!(plain.used, Mode::Ref);
        assert_eq!(plain.parent, result.commit);
        assert!(lock.exists());
    }

    #[test]
    fn merge_in_progress_falls_back_to_ref() {
        let t = busy_repo();
        let head = t.git.head().unwrap().target().unwrap();
        std::fs::write(t.git.path().join("MERGE_HEAD"), format!("{head}\n")).unwrap();
        assert_eq!(t.git.state(), RepositoryState::Merge);
        let result = run_on(&t, Mode::Branch, &extras());
        assert_eq!(result.used, Mode::Ref);
        assert_eq!(result.fallback_reason.as_deref(), Some("a merge is in progress"));
        assert_eq!(t.git.head().unwrap().target(), Some(head));
    }

    #[test]
    fn ignored_handoff_files_are_not_committed_on_the_branch() {
        let t = busy_repo();
        t.write(".gitignore", "*.log\n.planning/\n");
        t.commit_all("ignore planning");
        let result = run_on(&t, Mode::Branch, &extras());
        assert_eq!(result.used, Mode::Ref);
        assert!(result.fallback_reason.as_deref().unwrap().contains("ignored"));
        // The private ref still keeps them.
        assert!(t.blob_at(result.commit.as_ref().unwrap(), HANDOFF).is_some());
    }

    #[test]
    fn checkpoint_result_serializes_for_the_handoff() {
        let t = busy_repo();
        let result = run_on(&t, Mode::Ref, &extras());
        let json = serde_json::to_value(&result).unwrap();
        assert_eq!(json["requested"], "ref");
        assert_eq!(json["used"], "ref");
        assert_eq!(json["fallback_reason"], serde_json::Value::Null);
        assert_eq!(json["files_included"], 6);
        assert_eq!(Mode::parse(" Branch "), Some(Mode::Branch));
        assert_eq!(Mode::parse("nope"), None);
    }

    #[test]
    fn signature_falls_back_to_baton() {
        let t = TestRepo::new();
        assert_eq!(signature(&t.git).unwrap().name().unwrap(), "Test User");
        // An empty local identity hides any global one and makes git2 refuse it.
        t.git.config().unwrap().set_str("user.name", "").unwrap();
        let sig = signature(&t.git).unwrap();
        assert_eq!((sig.name().unwrap(), sig.email().unwrap()), ("baton", "baton@localhost"));
    }
}
