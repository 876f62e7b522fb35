//! What the repository looks like now: root, branch, HEAD, state, uncommitted files, and
//! the commits made during the session. The working-tree scan ([`Scan`]) is kept so the
//! checkpoint can reuse it.

use super::GitError;
use std::collections::BTreeSet;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use git2::{Repository, RepositoryState, Sort, Status, StatusOptions};
use serde::Serialize;

use super::{Repo, display_path, git_err, head_info, serialize_path, short_id};

/// At most this many session commits are listed.
pub const MAX_SESSION_COMMITS: usize = 50;

/// A snapshot of the repository for the handoff.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GitFacts {
    /// The top of the work tree containing the session's folder.
    #[serde(serialize_with = "serialize_path")]
    pub root: PathBuf,
    /// The checked-out branch (short name); `None` when HEAD is detached.
    pub branch: Option<String>,
    /// HEAD's commit, abbreviated to 7 characters; `None` on an unborn branch.
    pub head: Option<String>,
    /// HEAD's full commit id.
    pub head_full: Option<String>,
    pub detached: bool,
    /// The branch has no commit yet.
    pub unborn: bool,
    /// An operation in progress (merge, rebase ...).
    pub state: RepoState,
    /// Changed, staged and conflicted files in path order, then untracked (not ignored)
    /// ones; an untracked folder the scan's budget did not let it open is one entry
    /// ending in `/`.
    pub uncommitted: Vec<FileChange>,
    /// Commits reachable from HEAD made at or after the session start, newest first.
    pub session_commits: Vec<SessionCommit>,
    /// More session commits exist than the [`MAX_SESSION_COMMITS`] listed.
    pub session_commits_truncated: bool,
}

/// An operation git has in progress, from `Repository::state()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RepoState {
    None,
    Merge,
    Rebase,
    CherryPick,
    Revert,
    Bisect,
    /// `git am` is applying patches.
    Am,
}

impl RepoState {
    pub fn from_git(state: RepositoryState) -> RepoState {
        match state {
            RepositoryState::Clean => RepoState::None,
            RepositoryState::Merge => RepoState::Merge,
            RepositoryState::Revert | RepositoryState::RevertSequence => RepoState::Revert,
            RepositoryState::CherryPick | RepositoryState::CherryPickSequence => RepoState::CherryPick,
            RepositoryState::Bisect => RepoState::Bisect,
            RepositoryState::Rebase
            | RepositoryState::RebaseInteractive
            | RepositoryState::RebaseMerge
            | RepositoryState::ApplyMailboxOrRebase => RepoState::Rebase,
            RepositoryState::ApplyMailbox => RepoState::Am,
        }
    }

    /// The word used in messages and JSON.
    pub fn word(self) -> &'static str {
        match self {
            RepoState::None => "none",
            RepoState::Merge => "merge",
            RepoState::Rebase => "rebase",
            RepoState::CherryPick => "cherry-pick",
            RepoState::Revert => "revert",
            RepoState::Bisect => "bisect",
            RepoState::Am => "am",
        }
    }
}

/// How an uncommitted file differs, one word per file. When a file has several kinds of
/// change, the first that applies wins: conflicted, renamed, deleted, modified, staged,
/// untracked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileState {
    Conflicted,
    /// Renamed in the index (`git mv`); the old path is in `from`.
    Renamed,
    Deleted,
    /// The working copy differs from the index (it may also have staged changes).
    Modified,
    /// Added or changed in the index, the working copy matching it.
    Staged,
    Untracked,
}

impl FileState {
    #[cfg(test)]
    pub fn word(self) -> &'static str {
        match self {
            FileState::Conflicted => "conflicted",
            FileState::Renamed => "renamed",
            FileState::Deleted => "deleted",
            FileState::Modified => "modified",
            FileState::Staged => "staged",
            FileState::Untracked => "untracked",
        }
    }
}

/// One uncommitted file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileChange {
    /// Relative to the root, `/`-separated (invalid UTF-8 replaced).
    pub path: String,
    pub state: FileState,
    /// Some of the change is in the index.
    pub staged: bool,
    /// The old path of a rename.
    pub from: Option<String>,
}

/// A commit made during the session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionCommit {
    pub id: String,
    pub short: String,
    pub subject: String,
    /// Commit time, Unix seconds.
    pub time: i64,
}

/// What a Ref checkpoint may spend on working-tree files: past any of these the rest
/// are left out, counted and (the first [`super::checkpoint::SKIPPED_LISTED`]) named. Tracked files the
/// agent changed go first, then untracked ones, in path order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotBudget {
    pub max_files: usize,
    pub max_bytes: u64,
    pub max_time: std::time::Duration,
}

impl Default for SnapshotBudget {
    fn default() -> SnapshotBudget {
        SnapshotBudget {
            max_files: 2_000,
            max_bytes: 64 * 1024 * 1024,
            max_time: std::time::Duration::from_millis(250),
        }
    }
}

/// The snapshot budget: the default, or `BATON_SNAPSHOT_MAX_FILES` (for tests and for
/// people who want more or less of the working tree in a checkpoint).
pub(super) fn snapshot_budget() -> SnapshotBudget {
    let mut budget = SnapshotBudget::default();
    if let Some(n) = std::env::var("BATON_SNAPSHOT_MAX_FILES").ok().and_then(|v| v.trim().parse().ok()) {
        budget.max_files = n;
    }
    budget
}

/// One working-tree status scan. Holds the changes for the facts and every path a
/// checkpoint has to look at (both sides of a rename).
#[derive(Debug, Clone, Default)]
pub struct Scan {
    changes: Vec<FileChange>,
    touched: Vec<Vec<u8>>,
    unopened: Vec<Vec<u8>>,
}

impl Scan {
    /// Runs the status scan: tracked changes, untracked files, and untracked folders as
    /// one entry each (as `git status` shows them), then the files inside those folders
    /// within a budget, small folders first ([`super::untracked`]); no ignored files, no submodules, renames
    /// only within the index (cheap: only staged additions and deletions are compared).
    /// A folder whose files were all found is listed by its files; one the budget cut
    /// short stays one entry ending in `/`, and its files found so far are still
    /// touched. Tracked changes are listed first, then untracked ones, each in path
    /// order: a folder of generated files cannot push the agent's edits out of a list
    /// that is cut at its length.
    pub fn run(git: &Repository) -> Result<Scan, GitError> {
        let started = std::time::Instant::now();
        let mut options = StatusOptions::new();
        options
            .include_untracked(true)
            .recurse_untracked_dirs(false)
            .include_ignored(false)
            .include_unmodified(false)
            .exclude_submodules(true)
            .renames_head_to_index(true)
            .renames_index_to_workdir(false);
        let statuses = git.statuses(Some(&mut options)).map_err(git_err("reading the status"))?;
        let mut changes = Vec::with_capacity(statuses.len());
        let mut touched = BTreeSet::new();
        let mut folders = Vec::new();
        for entry in statuses.iter() {
            let status = entry.status();
            if status.is_empty() || status.contains(Status::IGNORED) {
                continue;
            }
            let mut path = entry.path_bytes().to_vec();
            if status == Status::WT_NEW && path.ends_with(b"/") {
                folders.push(path);
                continue;
            }
            let mut from = None;
            for delta in [entry.head_to_index(), entry.index_to_workdir()].into_iter().flatten() {
                for side in [delta.old_file(), delta.new_file()] {
                    if let Some(p) = side.path_bytes() {
                        touched.insert(p.to_vec());
                    }
                }
            }
            if status.intersects(Status::INDEX_RENAMED) {
                if let Some(delta) = entry.head_to_index() {
                    if let (Some(old), Some(new)) =
                        (delta.old_file().path_bytes(), delta.new_file().path_bytes())
                    {
                        from = Some(display_path(old));
                        path = new.to_vec();
                    }
                }
            }
            touched.insert(path.clone());
            changes.push(FileChange {
                path: display_path(&path),
                state: state_of(status),
                staged: status.intersects(
                    Status::INDEX_NEW
                        | Status::INDEX_MODIFIED
                        | Status::INDEX_DELETED
                        | Status::INDEX_RENAMED
                        | Status::INDEX_TYPECHANGE,
                ),
                from,
            });
        }
        // The checkpoint's own budget: it stores no more files than that.
        let budget = snapshot_budget();
        let opened =
            super::untracked::open_small_first(git, folders, budget.max_files, started + budget.max_time)?;
        let mut unopened = Vec::new();
        for folder in opened {
            if folder.whole {
                changes.extend(folder.files.iter().map(|file| FileChange::untracked(file)));
            } else {
                changes.push(FileChange::untracked(&folder.path));
                unopened.push(folder.path);
            }
            touched.extend(folder.files);
        }
        changes.sort_by(|a, b| {
            (a.state == FileState::Untracked, &a.path).cmp(&(b.state == FileState::Untracked, &b.path))
        });
        Ok(Scan { changes, touched: touched.into_iter().collect(), unopened })
    }

    /// The uncommitted files: tracked ones in path order, then untracked ones.
    pub fn changes(&self) -> &[FileChange] {
        &self.changes
    }

    /// Every path whose working copy may differ from HEAD, as git stores it.
    pub fn touched(&self) -> &[Vec<u8>] {
        &self.touched
    }

    /// Untracked folders (ending in `/`) whose files the budget did not let the scan
    /// find them all: [`Scan::touched`] has those it found.
    pub fn unopened(&self) -> &[Vec<u8>] {
        &self.unopened
    }
}

impl FileChange {
    fn untracked(path: &[u8]) -> FileChange {
        FileChange { path: display_path(path), state: FileState::Untracked, staged: false, from: None }
    }
}

fn state_of(status: Status) -> FileState {
    if status.contains(Status::CONFLICTED) {
        FileState::Conflicted
    } else if status.intersects(Status::INDEX_RENAMED | Status::WT_RENAMED) {
        FileState::Renamed
    } else if status.intersects(Status::WT_DELETED | Status::INDEX_DELETED) {
        FileState::Deleted
    } else if status.intersects(Status::WT_MODIFIED | Status::WT_TYPECHANGE | Status::WT_UNREADABLE) {
        FileState::Modified
    } else if status.intersects(Status::INDEX_NEW | Status::INDEX_MODIFIED | Status::INDEX_TYPECHANGE) {
        FileState::Staged
    } else {
        FileState::Untracked
    }
}

pub(super) fn gather_from(repo: &Repo, since: Option<DateTime<Utc>>) -> Result<GitFacts, GitError> {
    let git = repo.git();
    let head = head_info(git)?;
    let state = RepoState::from_git(git.state());
    let uncommitted = repo.scan()?.changes().to_vec();
    let (session_commits, session_commits_truncated) = match (head.commit, since) {
        (Some(tip), Some(since)) => session_commits(git, tip, since.timestamp())?,
        _ => (Vec::new(), false),
    };
    Ok(GitFacts {
        root: repo.root().to_path_buf(),
        branch: head.branch,
        head: head.commit.map(short_id),
        head_full: head.commit.map(|id| id.to_string()),
        detached: head.detached,
        unborn: head.commit.is_none(),
        state,
        uncommitted,
        session_commits,
        session_commits_truncated,
    })
}

/// Walks from `tip` newest first (commit time) and stops at the first commit older than
/// `since`, so only the session's stretch of history is read.
fn session_commits(
    git: &Repository,
    tip: git2::Oid,
    since: i64,
) -> Result<(Vec<SessionCommit>, bool), GitError> {
    let mut walk = git.revwalk().map_err(git_err("walking the history"))?;
    walk.set_sorting(Sort::TIME).map_err(git_err("walking the history"))?;
    walk.push(tip).map_err(git_err("walking the history"))?;
    let mut commits = Vec::new();
    for id in walk {
        let id = id.map_err(git_err("walking the history"))?;
        let commit = git.find_commit(id).map_err(git_err("reading a commit"))?;
        let time = commit.time().seconds();
        if time < since {
            break;
        }
        if commits.len() == MAX_SESSION_COMMITS {
            return Ok((commits, true));
        }
        commits.push(SessionCommit {
            id: id.to_string(),
            short: short_id(id),
            subject: String::from_utf8_lossy(commit.summary_bytes().unwrap_or_default()).into_owned(),
            time,
        });
    }
    Ok((commits, false))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::{Repo, gather};
    use super::*;
    use chrono::TimeZone;

    fn change<'a>(facts: &'a GitFacts, path: &str) -> Option<&'a FileChange> {
        facts.uncommitted.iter().find(|c| c.path == path)
    }

    #[test]
    fn unborn_branch() {
        let t = TestRepo::new();
        t.write("a.txt", "a\n");
        let facts = gather(t.root(), None).unwrap().unwrap();
        assert!(facts.unborn);
        assert!(!facts.detached);
        assert_eq!(facts.branch.as_deref(), Some("main"));
        assert_eq!(facts.head, None);
        assert_eq!(facts.state, RepoState::None);
        assert_eq!(change(&facts, "a.txt").unwrap().state, FileState::Untracked);
    }

    #[test]
    fn branch_head_and_changes() {
        let t = TestRepo::new();
        t.write("keep.txt", "k\n");
        t.write("edit.txt", "e\n");
        t.write("gone.txt", "g\n");
        t.write("stage.txt", "s\n");
        t.write(".gitignore", "*.log\nbuild/\n");
        let id = t.commit_all("init");
        t.write("edit.txt", "e2\n");
        std::fs::remove_file(t.root().join("gone.txt")).unwrap();
        t.write("stage.txt", "s2\n");
        t.stage("stage.txt");
        t.write("newdir/sub/one.txt", "1\n");
        t.write("newdir/two.txt", "2\n");
        t.write("debug.log", "ignored\n");
        t.write("build/out.bin", "ignored\n");

        let facts = gather(&t.root().join("newdir"), None).unwrap().unwrap();
        assert_eq!(facts.branch.as_deref(), Some("main"));
        assert_eq!(facts.head_full, Some(id.to_string()));
        assert_eq!(facts.head.as_deref(), Some(&id.to_string()[..7]));
        assert!(!facts.unborn && !facts.detached);
        let words: Vec<(&str, &str)> =
            facts.uncommitted.iter().map(|c| (c.path.as_str(), c.state.word())).collect();
        assert_eq!(
            words,
            [
                ("edit.txt", "modified"),
                ("gone.txt", "deleted"),
                ("stage.txt", "staged"),
                ("newdir/sub/one.txt", "untracked"),
                ("newdir/two.txt", "untracked"),
            ]
        );
        assert!(change(&facts, "stage.txt").unwrap().staged);
        assert!(!change(&facts, "edit.txt").unwrap().staged);
        assert!(facts.session_commits.is_empty());
    }

    #[test]
    fn a_folder_too_big_to_open_is_one_entry_after_the_edits() {
        let t = TestRepo::new();
        t.write("src/lib.rs", "pub fn f() {}\n");
        t.commit_all("init");
        t.write("src/lib.rs", "pub fn g() {}\n");
        for i in 0..SnapshotBudget::default().max_files + 5 {
            t.write(&format!("gen/d{:02}/f{i:05}.txt", i / 100), "x\n");
        }
        t.write("notes/plan.md", "new\n");
        t.write("zz.txt", "new\n");
        let repo = Repo::discover(t.root()).unwrap().unwrap();
        let scan = repo.scan().unwrap();
        let words: Vec<(&str, &str)> =
            scan.changes().iter().map(|c| (c.path.as_str(), c.state.word())).collect();
        // `gen/` sorts first but cannot push the edit out, nor keep the small new folder
        // after it from being listed by its files; a loose untracked file is listed.
        assert_eq!(
            words,
            [
                ("src/lib.rs", "modified"),
                ("gen/", "untracked"),
                ("notes/plan.md", "untracked"),
                ("zz.txt", "untracked")
            ]
        );
        assert_eq!(scan.unopened(), [b"gen/".to_vec()]);
        // The files found within the budget are still there for the checkpoint.
        let found = scan.touched().iter().filter(|p| p.starts_with(b"gen/")).count();
        assert!(found > 0 && found <= 2_000, "{found}");
        assert!(scan.touched().contains(&b"notes/plan.md".to_vec()));
        assert!(scan.touched().contains(&b"zz.txt".to_vec()));
    }

    #[test]
    fn staged_rename_has_both_paths() {
        let t = TestRepo::new();
        t.write("old.txt", "same content, long enough to match\n");
        t.commit_all("init");
        std::fs::rename(t.root().join("old.txt"), t.root().join("new.txt")).unwrap();
        t.unstage("old.txt");
        t.stage("new.txt");
        let repo = Repo::discover(t.root()).unwrap().unwrap();
        let facts = repo.facts(None).unwrap();
        let renamed = change(&facts, "new.txt").unwrap();
        assert_eq!(renamed.state, FileState::Renamed);
        assert_eq!(renamed.from.as_deref(), Some("old.txt"));
        let touched = repo.scan().unwrap().touched();
        assert!(touched.contains(&b"old.txt".to_vec()) && touched.contains(&b"new.txt".to_vec()));
    }

    #[test]
    fn detached_head() {
        let t = TestRepo::new();
        t.write("a.txt", "a\n");
        let id = t.commit_all("init");
        t.git.set_head_detached(id).unwrap();
        let facts = gather(t.root(), None).unwrap().unwrap();
        assert!(facts.detached);
        assert_eq!(facts.branch, None);
        assert_eq!(facts.head_full, Some(id.to_string()));
    }

    #[test]
    fn merge_in_progress_is_reported() {
        let t = TestRepo::new();
        t.write("a.txt", "a\n");
        let id = t.commit_all("init");
        std::fs::write(t.git.path().join("MERGE_HEAD"), format!("{id}\n")).unwrap();
        assert_eq!(t.git.state(), RepositoryState::Merge);
        let facts = gather(t.root(), None).unwrap().unwrap();
        assert_eq!(facts.state, RepoState::Merge);
        assert_eq!(facts.state.word(), "merge");
    }

    #[test]
    fn commits_since_the_session_start_newest_first() {
        let t = TestRepo::new();
        let base = Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap();
        let mut ids = Vec::new();
        for (i, minutes) in [0i64, 10, 20, 30].iter().enumerate() {
            t.write("a.txt", &format!("{i}\n"));
            ids.push(t.commit_all_at(&format!("step {i}\n\nbody"), base.timestamp() + minutes * 60));
        }
        let since = base + chrono::Duration::minutes(10);
        let facts = gather(t.root(), Some(since)).unwrap().unwrap();
        let subjects: Vec<&str> = facts.session_commits.iter().map(|c| c.subject.as_str()).collect();
        assert_eq!(subjects, ["step 3", "step 2", "step 1"]);
        assert_eq!(facts.session_commits[0].id, ids[3].to_string());
        assert_eq!(facts.session_commits[0].short, ids[3].to_string()[..7]);
        assert!(!facts.session_commits_truncated);

        let later = base + chrono::Duration::hours(1);
        assert!(gather(t.root(), Some(later)).unwrap().unwrap().session_commits.is_empty());
    }

    #[test]
    fn session_commits_are_bounded() {
        let t = TestRepo::new();
        let base = Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap();
        for i in 0..(MAX_SESSION_COMMITS as i64 + 3) {
            t.write("a.txt", &format!("{i}\n"));
            t.commit_all_at(&format!("c{i}"), base.timestamp() + i);
        }
        let facts = gather(t.root(), Some(base)).unwrap().unwrap();
        assert_eq!(facts.session_commits.len(), MAX_SESSION_COMMITS);
        assert!(facts.session_commits_truncated);
        assert_eq!(facts.session_commits[0].subject, format!("c{}", MAX_SESSION_COMMITS + 2));
    }

    #[test]
    fn facts_serialize_with_words() {
        let t = TestRepo::new();
        t.write("a.txt", "a\n");
        let facts = gather(t.root(), None).unwrap().unwrap();
        let json = serde_json::to_value(&facts).unwrap();
        assert_eq!(json["state"], "none");
        assert_eq!(json["uncommitted"][0]["state"], "untracked");
        assert!(json["root"].as_str().is_some());
    }
}
