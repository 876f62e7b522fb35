//! The git layer: what the repository looks like now ([`facts`]), how a handoff is
//! saved in it ([`checkpoint`](mod@checkpoint)), and the status line's file counts under
//! a time budget ([`quick`]).
//!
//! Everything goes through libgit2 (the `git2` crate): no `git` subprocess, so no user
//! hook, pager, credential helper or editor can run or hang the host's hook. A [`Repo`] is
//! opened once per hook call and scans the working tree at most once: the facts for the
//! handoff and the automatic checkpoint share that scan.
//!
//! ```ignore
//! # fn main() -> Result<(), crate::gitx::GitError> {
//! use crate::gitx::{CheckpointRequest, Mode, Repo};
//! let cwd = std::path::Path::new(".");
//! if let Some(repo) = Repo::discover(cwd)? {
//!     let facts = repo.facts(None)?;
//!     let extra = vec![(".planning/HANDOFF.json".to_string(), b"{}".to_vec())];
//!     let request = CheckpointRequest {
//!         mode: Mode::Ref,
//!         session_id: "7f3c2a10",
//!         message: "baton: checkpoint (critical-context) at 76% used",
//!         extra_files: &extra,
//!     };
//!     let result = repo.checkpoint(&request)?;
//!     println!("{} files uncommitted, saved as {:?}", facts.uncommitted.len(), result.commit);
//! }
//! # Ok(())
//! # }
//! ```

pub mod checkpoint;
mod deadline;
pub mod facts;
mod locks;
pub mod quick;
pub mod refs;
pub mod signals;
mod untracked;

#[cfg(test)]
mod testutil;

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use git2::{ErrorCode, Oid, Repository, Signature};

pub use checkpoint::{Checkpoint, CheckpointRequest, Mode};
pub use facts::{GitFacts, Scan, SessionCommit};
pub use quick::{Counts, quick_status};

/// An open repository for one hook call, with the working-tree scan cached so it is made
/// at most once. Not `Sync` (libgit2 handles are not), which suits a one-shot process.
pub struct Repo {
    git: Repository,
    root: PathBuf,
    scan: OnceCell<Scan>,
}

impl Repo {
    /// Opens the repository whose work tree contains `cwd`. `Ok(None)` when there is none
    /// (or only a bare repository, which has no work tree to save).
    pub fn discover(cwd: &Path) -> Result<Option<Repo>, GitError> {
        let git = match Repository::discover(cwd) {
            Ok(git) => git,
            Err(e) if e.code() == ErrorCode::NotFound => return Ok(None),
            Err(e) => {
                return Err(
                    format!("cannot open the git repository at {}: {}", cwd.display(), e.message()).into()
                );
            }
        };
        let Some(workdir) = git.workdir() else { return Ok(None) };
        // libgit2 reports the work tree with a trailing slash; components() drops it.
        let root: PathBuf = workdir.components().collect();
        Ok(Some(Repo { git, root, scan: OnceCell::new() }))
    }

    /// The top of the work tree.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The libgit2 handle, for callers that need something this module does not offer.
    pub fn git(&self) -> &Repository {
        &self.git
    }

    /// The working-tree status, scanned on first use and then reused.
    pub fn scan(&self) -> Result<&Scan, GitError> {
        if let Some(scan) = self.scan.get() {
            return Ok(scan);
        }
        let scan = Scan::run(&self.git)?;
        Ok(self.scan.get_or_init(|| scan))
    }

    /// The facts a handoff records. `since` is the session start: commits reachable from
    /// HEAD made at or after it are listed (none when `since` is `None`).
    pub fn facts(&self, since: Option<DateTime<Utc>>) -> Result<GitFacts, GitError> {
        facts::gather_from(self, since)
    }

    /// Saves a checkpoint; see [`checkpoint`](mod@checkpoint) for the modes.
    pub fn checkpoint(&self, request: &CheckpointRequest<'_>) -> Result<Checkpoint, GitError> {
        checkpoint::run(self, request)
    }

    /// Clears (or finishes) what a baton process killed while holding git's locks left
    /// behind, and never a lock anyone else holds ([`locks`]). What was done, in words.
    pub fn recover_locks(&self) -> Vec<String> {
        locks::recover(&self.git)
    }
}

/// The project root for a folder: the work tree of the repository containing it, else
/// the folder itself.
pub fn project_root(cwd: &Path) -> PathBuf {
    Repo::discover(cwd).ok().flatten().map(|r| r.root().to_path_buf()).unwrap_or_else(|| cwd.to_path_buf())
}

/// The project a folder belongs to, as the handoff, the brief and the archive see it: the
/// nearest folder holding a `.planning/` folder between `cwd` and the top of its work
/// tree (a worktree's root counts as a top), else that top; outside a repository, the
/// folder itself. A monorepo package with its own GSD project is its own project.
pub fn project_dir(cwd: &Path) -> PathBuf {
    match Repo::discover(cwd).ok().flatten() {
        Some(repo) => nearest_planning(cwd, repo.root()),
        None => cwd.to_path_buf(),
    }
}

/// The nearest folder from `cwd` up to `top` (both included) that holds a real
/// `.planning/` folder (not a symlink), else `top`. The result is `top` joined with the
/// part below it, so it compares equal to other paths built from `top`.
pub fn nearest_planning(cwd: &Path, top: &Path) -> PathBuf {
    let canon = |p: &Path| crate::platform::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (start, top_c) = (canon(cwd), canon(top));
    for dir in start.ancestors() {
        let Ok(below) = dir.strip_prefix(&top_c) else { break };
        if std::fs::symlink_metadata(dir.join(".planning")).is_ok_and(|m| m.is_dir()) {
            return if below.as_os_str().is_empty() { top.to_path_buf() } else { top.join(below) };
        }
    }
    top.to_path_buf()
}

/// The facts for the repository containing `cwd`; `Ok(None)` outside a repository.
#[cfg(test)]
pub fn gather(cwd: &Path, since: Option<DateTime<Utc>>) -> Result<Option<GitFacts>, GitError> {
    match Repo::discover(cwd)? {
        Some(repo) => repo.facts(since).map(Some),
        None => Ok(None),
    }
}

/// A checkpoint of the repository containing `cwd`; `Ok(None)` outside a repository.
/// To share the status scan with [`gather`], open a [`Repo`] and call both on it.
#[cfg(test)]
pub fn checkpoint(cwd: &Path, request: &CheckpointRequest<'_>) -> Result<Option<Checkpoint>, GitError> {
    match Repo::discover(cwd)? {
        Some(repo) => repo.checkpoint(request).map(Some),
        None => Ok(None),
    }
}

/// The 7-character abbreviation used in messages and handoffs.
pub fn short_id(id: Oid) -> String {
    let mut text = id.to_string();
    text.truncate(7);
    text
}

/// Where HEAD points: (branch short name, is detached, HEAD commit if born).
struct HeadInfo {
    pub branch: Option<String>,
    /// The full ref HEAD points to (`refs/heads/main`), also when unborn.
    pub branch_ref: Option<String>,
    pub detached: bool,
    pub commit: Option<git2::Oid>,
}

fn head_info(git: &Repository) -> Result<HeadInfo, GitError> {
    let head = git.find_reference("HEAD").map_err(git_err("reading HEAD"))?;
    let branch_ref = head.symbolic_target_bytes().map(|t| String::from_utf8_lossy(t).into_owned());
    let detached = branch_ref.is_none();
    let branch = branch_ref.as_deref().map(|r| r.strip_prefix("refs/heads/").unwrap_or(r).to_string());
    let commit = match head.resolve() {
        Ok(resolved) => resolved.target(),
        Err(e) if e.code() == git2::ErrorCode::NotFound => None,
        Err(e) => return Err(git_err("resolving HEAD")(e)),
    };
    Ok(HeadInfo { branch, branch_ref, detached, commit })
}

/// The identity from the repository's (and the user's) git config, else baton's own.
fn signature(git: &Repository) -> Result<Signature<'static>, GitError> {
    git.signature()
        .or_else(|_| Signature::now("baton", "baton@localhost"))
        .map_err(git_err("making the commit signature"))
}

/// Turns a libgit2 error into the module's error text, with what was being done.
fn git_err(doing: &'static str) -> impl Fn(git2::Error) -> GitError {
    move |source| GitError::Git { doing, source }
}

/// Why a git operation failed: libgit2's own error with what baton was doing, or a
/// refusal or failure baton words itself (a budget, a path it will not store, a branch
/// that moved). The message is what the user or the handoff's notes are shown.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("git: {doing}: {}", .source.message())]
    Git {
        doing: &'static str,
        #[source]
        source: git2::Error,
    },
    #[error("{0}")]
    Other(String),
}

impl From<String> for GitError {
    fn from(message: String) -> GitError {
        GitError::Other(message)
    }
}

/// A repository-relative path as git stores it (bytes, `/`-separated) as a filesystem path.
fn rel_path(bytes: &[u8]) -> std::path::PathBuf {
    crate::platform::path_from_bytes(bytes)
}

/// A path for people and JSON: invalid UTF-8 is replaced rather than refused.
fn display_path(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn serialize_path<S: serde::Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&path.to_string_lossy())
}

#[cfg(test)]
mod tests {
    use super::testutil::*;
    use super::*;
    use std::time::Instant;

    #[test]
    fn outside_a_repository_there_are_no_facts_and_no_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        assert!(gather(dir.path(), None).unwrap().is_none());
        let request = CheckpointRequest {
            mode: Mode::Ref,
            session_id: "s1",
            message: "baton: checkpoint",
            extra_files: &[],
        };
        assert!(checkpoint(dir.path(), &request).unwrap().is_none());
    }

    #[test]
    fn discovers_the_root_from_a_subfolder() {
        let t = TestRepo::new();
        t.write("src/deep/a.rs", "fn main() {}\n");
        t.commit_all("init");
        let repo = Repo::discover(&t.root().join("src/deep")).unwrap().unwrap();
        assert_eq!(repo.root(), t.root().canonicalize().unwrap().as_path());
    }

    #[test]
    fn facts_and_checkpoint_share_one_scan() {
        let t = TestRepo::new();
        t.write("a.txt", "a\n");
        t.commit_all("init");
        t.write("b.txt", "b\n");
        let repo = Repo::discover(t.root()).unwrap().unwrap();
        let first = repo.scan().unwrap() as *const Scan;
        repo.facts(None).unwrap();
        let request = CheckpointRequest { mode: Mode::Ref, session_id: "s1", message: "m", extra_files: &[] };
        repo.checkpoint(&request).unwrap();
        assert_eq!(repo.scan().unwrap() as *const Scan, first);
    }

    /// Times discover + facts + Ref checkpoint on a 10,000-file repository with a few
    /// changes. Slow in debug builds: `cargo test --release --lib -- --ignored gitx_timing --nocapture`.
    #[test]
    #[ignore]
    fn gitx_timing_10k_files() {
        let t = TestRepo::new();
        for d in 0..100 {
            for f in 0..100 {
                t.write(&format!("src/m{d:03}/f{f:03}.rs"), &format!("// file {d} {f}\npub fn f() {{}}\n"));
            }
        }
        t.commit_all("10k files");
        t.write("src/m000/f000.rs", "changed\n");
        t.write("src/m050/f050.rs", "changed too\n");
        std::fs::remove_file(t.root().join("src/m099/f099.rs")).unwrap();
        t.write("new/untracked.rs", "new\n");
        t.stage("src/m050/f050.rs");
        let extra = vec![
            (".planning/HANDOFF.json".to_string(), b"{\"version\":\"1.0\"}".to_vec()),
            (".planning/.continue-here.md".to_string(), b"---\nstatus: paused\n---\n".to_vec()),
        ];
        let mut scan_times = Vec::new();
        let mut gather_times = Vec::new();
        let mut total_times = Vec::new();
        for _ in 0..7 {
            let start = Instant::now();
            let repo = Repo::discover(t.root()).unwrap().unwrap();
            repo.scan().unwrap();
            scan_times.push(start.elapsed());
            let facts = repo.facts(Some(Utc::now() - chrono::Duration::hours(1))).unwrap();
            let gathered = start.elapsed();
            let request = CheckpointRequest {
                mode: Mode::Ref,
                session_id: "timing",
                message: "baton: checkpoint (critical-context) at 76% used",
                extra_files: &extra,
            };
            let result = repo.checkpoint(&request).unwrap();
            let total = start.elapsed();
            assert_eq!(facts.uncommitted.len(), 4);
            assert_eq!(result.files_included, 5);
            gather_times.push(gathered);
            total_times.push(total);
        }
        for times in [&mut scan_times, &mut gather_times, &mut total_times] {
            times.sort();
        }
        println!(
            "10k files, min/median of 7: open + status scan {:?}/{:?}; gather {:?}/{:?}; \
             gather + ref checkpoint {:?}/{:?}",
            scan_times[0], scan_times[3], gather_times[0], gather_times[3], total_times[0], total_times[3]
        );
    }
}
