//! The git markers: `+staged ~modified ?untracked ↑ahead ↓behind`, from a status scan
//! that runs under a time budget and is cached per repository (see `git_cache`).
//!
//! A render never waits for a scan it can do without: a fresh record is used as it is,
//! and one that has only grown old (the same `HEAD`, the same index) is shown while a
//! detached `baton statusline --refresh-git` scans again for the next render, under a
//! longer budget ([`BACKGROUND_BUDGET`]). Only a repository with no record yet, or whose
//! `HEAD` or index changed (a commit, a checkout, a `git add`), is scanned on the render
//! path, within `statusline.git_budget_ms`. A scan over budget shows no markers (the
//! branch segment still shows the branch) and is tried again when the cache expires
//! (later and later while it keeps running over).

use std::path::Path;
use std::time::Duration;

use super::branch::GitPlace;
use super::git_cache::{self, Record, Stamp};
use super::{Context, Segment, Style};
use crate::gitx::{self, Counts};

pub fn segment(ctx: &Context) -> Option<Segment> {
    let record = ctx.git_status()?;
    let text = markers(record.counts, record.ahead, record.behind)?;
    Some(Segment::new(text, Style::Git))
}

/// The markers for a scan; `None` when there is nothing to show.
pub fn markers(counts: Option<Counts>, ahead: Option<u32>, behind: Option<u32>) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(c) = counts {
        for (sign, n) in [('+', c.staged), ('~', c.modified), ('?', c.untracked)] {
            if n > 0 {
                parts.push(format!("{sign}{n}"));
            }
        }
    }
    for (sign, n) in [('↑', ahead), ('↓', behind)] {
        if let Some(n) = n.filter(|n| *n > 0) {
            parts.push(format!("{sign}{n}"));
        }
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// How the markers are looked up.
#[derive(Debug, Clone)]
pub struct GitSettings {
    /// Where the cache files go; `None` turns caching off.
    pub cache_dir: Option<std::path::PathBuf>,
    pub max_age: Duration,
    pub budget: Duration,
}

/// What a background scan may spend: no render waits for it, so it can finish where the
/// render path's budget gives up.
pub const BACKGROUND_BUDGET: Duration = Duration::from_secs(2);

/// What the cache holds for a render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cached {
    /// Good as it is.
    Fresh(Record),
    /// Taken against the same `HEAD` and index, but old: shown, and scanned again in the
    /// background.
    Old(Record),
    /// Nothing usable (none, another repository's, or `HEAD` or the index changed): the
    /// render scans.
    Missing,
}

/// The cache's answer for `repo` as `stamp` finds it at `now_ms`.
pub fn cached(previous: Option<Record>, repo: &str, stamp: &Stamp, now_ms: u64, max_age: Duration) -> Cached {
    match previous {
        Some(record) if record.is_fresh(repo, stamp, now_ms, max_age) => Cached::Fresh(record),
        Some(record)
            if record.repo == repo
                && record.head == stamp.head
                && record.index_mtime_ns == stamp.index_mtime_ns =>
        {
            Cached::Old(record)
        }
        _ => Cached::Missing,
    }
}

/// The markers' record for the work tree at `place` whose `HEAD` reads `head`: from the
/// cache when it is fresh; the old record when only its age expired, with a scan
/// started in the background; else from a new scan (which is then cached).
pub fn status(place: &GitPlace, head: &str, settings: &GitSettings, now_ms: u64) -> Record {
    let stamp = Stamp { head: head.to_string(), index_mtime_ns: git_cache::index_mtime_ns(&place.git_dir) };
    let repo = place.root.to_string_lossy().into_owned();
    let caching = !settings.max_age.is_zero();
    let path =
        settings.cache_dir.as_deref().filter(|_| caching).map(|dir| git_cache::cache_path(dir, &place.root));
    let previous = path.as_deref().and_then(git_cache::load).filter(|r| r.repo == repo);
    match cached(previous.clone(), &repo, &stamp, now_ms, settings.max_age) {
        Cached::Fresh(record) => record,
        Cached::Old(record) => {
            if let Some(path) = &path {
                refresh_in_background(&place.root, path);
            }
            record
        }
        Cached::Missing => {
            scan_and_store(place, repo, stamp, settings.budget, previous, path.as_deref(), now_ms)
        }
    }
}

/// Scans, counts the scans over budget in a row, and caches the record at `path`.
fn scan_and_store(
    place: &GitPlace,
    repo: String,
    stamp: Stamp,
    budget: Duration,
    previous: Option<Record>,
    path: Option<&Path>,
    now_ms: u64,
) -> Record {
    let record = scan_and_count(place, repo, stamp, budget, previous, now_ms);
    if let Some(path) = path {
        // A status line never fails because its cache could not be written.
        let _ = git_cache::store(path, &record);
    }
    record
}

/// A scan, with the scans over budget in a row counted from `previous`.
fn scan_and_count(
    place: &GitPlace,
    repo: String,
    stamp: Stamp,
    budget: Duration,
    previous: Option<Record>,
    now_ms: u64,
) -> Record {
    let mut record = scan(&place.root, repo, stamp, budget, now_ms);
    if record.over_budget() {
        let streak = previous.filter(Record::over_budget).map_or(0, |r| r.over_budget_streak);
        record.over_budget_streak = streak.saturating_add(1);
    }
    record
}

/// Starts `baton statusline --refresh-git <root>` detached (its own process group, no
/// stdin, stdout or stderr: the host's pipe closes when the render exits), unless a
/// refresh of this repository holds its lock already.
fn refresh_in_background(root: &Path, cache_path: &Path) {
    let lock = git_cache::lock_path(cache_path);
    match crate::fsx::FileLock::acquire_within(&lock, Duration::ZERO) {
        Ok(held) => drop(held),
        Err(_) => return,
    }
    let Ok(exe) = std::env::current_exe() else { return };
    let mut command = std::process::Command::new(exe);
    command
        .args(["statusline", "--refresh-git"])
        .arg(root)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    crate::platform::detach(&mut command);
    let _ = command.spawn();
}

/// The background scan `refresh_in_background` starts: the work tree at `root` (which
/// must be the top of one) scanned under [`BACKGROUND_BUDGET`] and cached, one refresh
/// per repository at a time. Silent: nothing waits for it.
pub fn refresh(root: &Path, settings: &GitSettings, now_ms: u64) {
    let Some(place) = super::branch::find_git(root).filter(|place| place.root == root) else { return };
    let Some(dir) = settings.cache_dir.as_deref().filter(|_| !settings.max_age.is_zero()) else { return };
    let path = git_cache::cache_path(dir, &place.root);
    // The render that started this stored a record there: a folder gone since was
    // removed on purpose (a throwaway home, `baton demo`'s), and is not made again.
    let Ok(_held) = crate::fsx::FileLock::acquire_within(&git_cache::lock_path(&path), Duration::ZERO) else {
        return;
    };
    let Some(head) = super::branch::read_head(&place.git_dir) else { return };
    let stamp = Stamp { head, index_mtime_ns: git_cache::index_mtime_ns(&place.git_dir) };
    let repo = place.root.to_string_lossy().into_owned();
    let previous = git_cache::load(&path).filter(|r| r.repo == repo);
    let budget = settings.budget.max(BACKGROUND_BUDGET);
    let record = scan_and_count(&place, repo, stamp, budget, previous, now_ms);
    let _ = git_cache::replace(&path, &record);
}

fn scan(root: &Path, repo: String, stamp: Stamp, budget: Duration, now_ms: u64) -> Record {
    let started = std::time::Instant::now();
    let (counts, ahead_behind, error) = match gitx::quick_status(root, budget) {
        Ok(status) => (status.counts, status.ahead_behind, None),
        Err(why) => (None, None, Some(why)),
    };
    Record {
        repo,
        head: stamp.head,
        index_mtime_ns: stamp.index_mtime_ns,
        checked_at_ms: now_ms,
        scan_ms: started.elapsed().as_millis().min(u128::from(u64::MAX)) as u64,
        counts,
        ahead: ahead_behind.map(|(a, _)| a),
        behind: ahead_behind.map(|(_, b)| b),
        error: error.map(|e| e.to_string()),
        over_budget_streak: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(checked_at_ms: u64) -> Record {
        Record {
            repo: "/work/app".into(),
            head: "ref: refs/heads/main".into(),
            index_mtime_ns: Some(42),
            checked_at_ms,
            scan_ms: 3,
            counts: Some(Counts { staged: 0, modified: 1, untracked: 0 }),
            ahead: None,
            behind: None,
            error: None,
            over_budget_streak: 0,
        }
    }

    #[test]
    fn an_old_record_is_shown_and_a_changed_one_is_not() {
        let stamp = Stamp { head: "ref: refs/heads/main".into(), index_mtime_ns: Some(42) };
        let five = Duration::from_secs(5);
        let at = |now| cached(Some(record(10_000)), "/work/app", &stamp, now, five);
        assert_eq!(at(12_000), Cached::Fresh(record(10_000)));
        assert_eq!(at(20_000), Cached::Old(record(10_000)), "only older");
        let committed = Stamp { head: "ref: refs/heads/main".into(), index_mtime_ns: Some(43) };
        assert_eq!(cached(Some(record(10_000)), "/work/app", &committed, 12_000, five), Cached::Missing);
        let switched = Stamp { head: "ref: refs/heads/feat".into(), index_mtime_ns: Some(42) };
        assert_eq!(cached(Some(record(10_000)), "/work/app", &switched, 20_000, five), Cached::Missing);
        assert_eq!(cached(Some(record(10_000)), "/work/other", &stamp, 12_000, five), Cached::Missing);
        assert_eq!(cached(None, "/work/app", &stamp, 12_000, five), Cached::Missing);
    }

    #[test]
    fn marker_text() {
        let counts = Counts { staged: 1, modified: 2, untracked: 3 };
        assert_eq!(markers(Some(counts), Some(4), Some(5)).as_deref(), Some("+1 ~2 ?3 ↑4 ↓5"));
        assert_eq!(markers(Some(Counts::default()), Some(0), None), None);
        assert_eq!(markers(None, Some(2), None).as_deref(), Some("↑2"));
        let only_untracked = Counts { untracked: 7, ..Counts::default() };
        assert_eq!(markers(Some(only_untracked), None, None).as_deref(), Some("?7"));
    }
}
