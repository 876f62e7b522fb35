//! A working-tree status under a time budget, for the status line: how many files are
//! staged, modified and untracked, and how far the branch is ahead of and behind its
//! upstream.
//!
//! git2's status call cannot be interrupted, and a status scan grows with the size of the
//! work tree. So the two diffs a status is made of (HEAD → index, index → work tree) are
//! run through libgit2 directly, with the progress callback libgit2 calls before each
//! file: once the deadline has passed it makes libgit2 give up, and the caller shows the
//! branch without markers. The index is only read, never refreshed or written.

use super::GitError;
use super::deadline::{Deadline, diff_options, progress};
use std::ffi::c_void;
use std::path::Path;
use std::ptr;
use std::time::{Duration, Instant};

use git2::{Binding, Delta, Diff, Index, Repository, Tree};
use libgit2_sys as raw;
use serde::{Deserialize, Serialize};

/// File counts, as `git status --short` lists them: an untracked folder is one entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Changes in the index (added, modified, deleted, renamed …).
    pub staged: u32,
    /// Work-tree changes not staged (modified, deleted, type changes, conflicts).
    pub modified: u32,
    pub untracked: u32,
}

/// What one bounded scan found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuickStatus {
    /// `None` when the budget ran out before the scan finished.
    pub counts: Option<Counts>,
    /// Commits ahead of and behind the upstream; `None` without an upstream.
    pub ahead_behind: Option<(u32, u32)>,
    pub elapsed: Duration,
}

enum Sides<'a> {
    /// HEAD's tree (none on an unborn branch) against the index.
    TreeToIndex(Option<&'a Tree<'a>>),
    IndexToWorkdir,
}

/// One diff with the deadline's callback; `Ok(None)` when the deadline stopped it.
fn diff_with_deadline<'r>(
    repo: &'r Repository,
    index: &Index,
    sides: Sides<'_>,
    flags: u32,
    deadline: &mut Deadline,
) -> Result<Option<Diff<'r>>, GitError> {
    let mut options = diff_options(flags, "preparing the status diff")?;
    options.progress_cb = Some(progress);
    options.payload = ptr::from_mut(deadline).cast::<c_void>();
    let mut out: *mut raw::git_diff = ptr::null_mut();
    // SAFETY: the repository, index and tree handles come from live git2 objects borrowed
    // for the whole call; `options` and the `Deadline` it points to live until it returns.
    let rc = unsafe {
        match sides {
            Sides::TreeToIndex(tree) => raw::git_diff_tree_to_index(
                &mut out,
                repo.raw(),
                tree.map_or(ptr::null_mut(), |t| t.raw()),
                index.raw(),
                &options,
            ),
            Sides::IndexToWorkdir => {
                raw::git_diff_index_to_workdir(&mut out, repo.raw(), index.raw(), &options)
            }
        }
    };
    if rc == raw::GIT_EUSER && deadline.expired {
        if !out.is_null() {
            // SAFETY: a diff libgit2 handed out, freed once.
            unsafe { raw::git_diff_free(out) };
        }
        return Ok(None);
    }
    if rc < 0 || out.is_null() {
        return Err(GitError::Git { doing: "diffing for the status", source: git2::Error::last_error(rc) });
    }
    // SAFETY: `out` is a diff libgit2 just created; git2's Diff owns and frees it.
    Ok(Some(unsafe { Diff::from_raw(out) }))
}

/// Commits ahead of and behind the checked-out branch's upstream.
fn ahead_behind(repo: &Repository) -> Option<(u32, u32)> {
    let head = repo.head().ok()?;
    if !head.is_branch() {
        return None;
    }
    let local = head.target()?;
    let upstream = git2::Branch::wrap(head).upstream().ok()?;
    let remote = upstream.get().target()?;
    let (ahead, behind) = repo.graph_ahead_behind(local, remote).ok()?;
    Some((ahead.min(u32::MAX as usize) as u32, behind.min(u32::MAX as usize) as u32))
}

fn count(diff: &Diff<'_>, wanted: impl Fn(Delta) -> bool) -> u32 {
    diff.deltas().filter(|d| wanted(d.status())).count().min(u32::MAX as usize) as u32
}

/// Scans the repository whose work tree is `root`, giving up on the file counts once
/// `budget` has passed since the call began.
pub fn quick_status(root: &Path, budget: Duration) -> Result<QuickStatus, GitError> {
    let start = Instant::now();
    let repo =
        Repository::open(root).map_err(|e| format!("cannot open {}: {}", root.display(), e.message()))?;
    if repo.is_bare() {
        return Err(format!("{} is a bare repository", root.display()).into());
    }
    let ahead_behind = ahead_behind(&repo);
    let mut deadline = Deadline::new(start + budget);
    let counts = if deadline.reached() { None } else { count_files(&repo, &mut deadline)? };
    Ok(QuickStatus { counts, ahead_behind, elapsed: start.elapsed() })
}

fn count_files(repo: &Repository, deadline: &mut Deadline) -> Result<Option<Counts>, GitError> {
    let index = repo.index().map_err(|e| format!("cannot read the index: {}", e.message()))?;
    let tree = match repo.head() {
        Ok(head) => Some(head.peel_to_tree().map_err(|e| format!("cannot read HEAD: {}", e.message()))?),
        // An unborn branch: everything in the index is staged.
        Err(e) if e.code() == git2::ErrorCode::UnbornBranch || e.code() == git2::ErrorCode::NotFound => None,
        Err(e) => return Err(format!("cannot read HEAD: {}", e.message()).into()),
    };
    let common = raw::GIT_DIFF_IGNORE_SUBMODULES | raw::GIT_DIFF_SKIP_BINARY_CHECK;
    let Some(staged) = diff_with_deadline(repo, &index, Sides::TreeToIndex(tree.as_ref()), common, deadline)?
    else {
        return Ok(None);
    };
    let workdir_flags = common | raw::GIT_DIFF_INCLUDE_UNTRACKED;
    let Some(workdir) = diff_with_deadline(repo, &index, Sides::IndexToWorkdir, workdir_flags, deadline)?
    else {
        return Ok(None);
    };
    Ok(Some(Counts {
        staged: count(&staged, |d| !matches!(d, Delta::Unmodified | Delta::Ignored | Delta::Untracked)),
        modified: count(&workdir, |d| {
            matches!(
                d,
                Delta::Modified | Delta::Deleted | Delta::Typechange | Delta::Renamed | Delta::Conflicted
            )
        }),
        untracked: count(&workdir, |d| d == Delta::Untracked),
    }))
}

/// What a bounded look at the repository found for the resume brief: the branch, HEAD,
/// and the uncommitted paths as `git status --short` lists them (an untracked folder is
/// one entry ending in `/`); `paths` is `None` when the budget ran out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuickPaths {
    pub branch: Option<String>,
    pub head: Option<git2::Oid>,
    pub paths: Option<Vec<String>>,
}

/// The uncommitted paths of the repository at `root` within `budget`.
pub fn quick_paths(root: &Path, budget: Duration) -> Result<QuickPaths, GitError> {
    let start = Instant::now();
    let repo =
        Repository::open(root).map_err(|e| format!("cannot open {}: {}", root.display(), e.message()))?;
    if repo.is_bare() {
        return Err(format!("{} is a bare repository", root.display()).into());
    }
    let head = super::head_info(&repo)?;
    let mut deadline = Deadline::new(start + budget);
    let index = repo.index().map_err(|e| format!("cannot read the index: {}", e.message()))?;
    let tree = match head.commit {
        Some(id) => Some(
            repo.find_commit(id)
                .and_then(|c| c.tree())
                .map_err(|e| format!("cannot read HEAD: {}", e.message()))?,
        ),
        None => None,
    };
    let common = raw::GIT_DIFF_IGNORE_SUBMODULES | raw::GIT_DIFF_SKIP_BINARY_CHECK;
    let mut paths = std::collections::BTreeSet::new();
    let diffs = [
        (Sides::TreeToIndex(tree.as_ref()), common),
        (Sides::IndexToWorkdir, common | raw::GIT_DIFF_INCLUDE_UNTRACKED),
    ];
    for (sides, flags) in diffs {
        let Some(diff) = diff_with_deadline(&repo, &index, sides, flags, &mut deadline)? else {
            return Ok(QuickPaths { branch: head.branch, head: head.commit, paths: None });
        };
        for delta in diff.deltas() {
            if matches!(delta.status(), Delta::Unmodified | Delta::Ignored) {
                continue;
            }
            if let Some(path) = delta.new_file().path_bytes().or(delta.old_file().path_bytes()) {
                paths.insert(String::from_utf8_lossy(path).into_owned());
            }
        }
    }
    Ok(QuickPaths { branch: head.branch, head: head.commit, paths: Some(paths.into_iter().collect()) })
}

#[cfg(test)]
mod tests {
    use super::super::testutil::TestRepo;
    use super::*;

    const PLENTY: Duration = Duration::from_secs(60);

    #[test]
    fn counts_staged_modified_and_untracked() {
        let t = TestRepo::new();
        t.write("a.txt", "a\n");
        t.write("b.txt", "b\n");
        t.write("c.txt", "c\n");
        t.commit_all("init");
        t.write("a.txt", "a changed\n");
        t.stage("a.txt");
        t.write("b.txt", "b changed\n");
        std::fs::remove_file(t.root().join("c.txt")).unwrap();
        t.write("new/one.txt", "1\n");
        t.write("new/two.txt", "2\n");
        t.write("loose.txt", "x\n");
        let status = quick_status(t.root(), PLENTY).unwrap();
        // Two modified (b changed, c deleted); the new folder counts once, as git status
        // --short shows it.
        assert_eq!(status.counts, Some(Counts { staged: 1, modified: 2, untracked: 2 }));
        assert_eq!(status.ahead_behind, None);
    }

    #[test]
    fn an_unborn_branch_has_everything_staged() {
        let t = TestRepo::new();
        t.write("a.txt", "a\n");
        t.stage("a.txt");
        let status = quick_status(t.root(), PLENTY).unwrap();
        assert_eq!(status.counts, Some(Counts { staged: 1, modified: 0, untracked: 0 }));
    }

    #[test]
    fn a_spent_budget_gives_no_counts() {
        let t = TestRepo::new();
        for i in 0..200 {
            t.write(&format!("f{i}.txt"), "x\n");
        }
        t.commit_all("init");
        let status = quick_status(t.root(), Duration::ZERO).unwrap();
        assert_eq!(status.counts, None);
    }

    #[test]
    fn ahead_and_behind_the_upstream() {
        let t = TestRepo::new();
        t.write("a.txt", "a\n");
        let base = t.commit_all("base");
        // A remote-tracking branch two commits ahead of base, and main one commit ahead.
        let git = &t.git;
        let sig = git.signature().unwrap();
        let base_commit = git.find_commit(base).unwrap();
        let tree = base_commit.tree().unwrap();
        let r1 = git.commit(None, &sig, &sig, "remote 1", &tree, &[&base_commit]).unwrap();
        let r1c = git.find_commit(r1).unwrap();
        let r2 = git.commit(None, &sig, &sig, "remote 2", &tree, &[&r1c]).unwrap();
        git.reference("refs/remotes/origin/main", r2, true, "test").unwrap();
        git.remote("origin", "https://example.invalid/repo.git").unwrap();
        let mut config = git.config().unwrap();
        config.set_str("branch.main.remote", "origin").unwrap();
        config.set_str("branch.main.merge", "refs/heads/main").unwrap();
        t.write("b.txt", "b\n");
        t.commit_all("local");
        let status = quick_status(t.root(), PLENTY).unwrap();
        assert_eq!(status.ahead_behind, Some((1, 2)));
        assert_eq!(status.counts, Some(Counts::default()));
    }

    #[test]
    fn paths_list_an_untracked_folder_once_and_give_up_past_the_budget() {
        let t = TestRepo::new();
        t.write("a.txt", "a\n");
        t.commit_all("init");
        t.write("a.txt", "changed\n");
        t.write("new/one.txt", "1\n");
        t.write("new/two.txt", "2\n");
        let found = quick_paths(t.root(), PLENTY).unwrap();
        assert_eq!(found.paths, Some(vec!["a.txt".to_string(), "new/".to_string()]));
        for i in 0..200 {
            t.write(&format!("f{i}.txt"), "x\n");
        }
        assert_eq!(quick_paths(t.root(), Duration::ZERO).unwrap().paths, None);
    }

    #[test]
    fn not_a_repository_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(quick_status(dir.path(), PLENTY).is_err());
    }
}
