//! The git markers' cache: one small private file per repository in baton's state dir,
//! so that a status scan runs at most once per `statusline.git_cache_seconds` for a
//! repository, however often the line is drawn and however many sessions draw it.
//!
//! A record is reused while it is young enough and nothing it depends on has visibly
//! changed: the same `HEAD` and the same index file (a commit, a checkout or a `git add`
//! rewrites one of them). Edits in the work tree show up when the record expires.
//!
//! A repository whose scans keep running out of budget is scanned less and less often
//! (the cache period, then twice it, four times … up to [`OVER_BUDGET_BACKOFF_MAX`]
//! times it): reading a very large index costs time before the deadline can act, and
//! paying that every few seconds for markers that never arrive would be waste.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::fsx;
use crate::gitx::Counts;

/// What a record was taken against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// `HEAD`'s content.
    pub head: String,
    /// The index file's modification time, nanoseconds since the epoch.
    pub index_mtime_ns: Option<u64>,
}

/// One repository's markers as last scanned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// The work tree's root (the cache file's name is a hash of it).
    pub repo: String,
    pub head: String,
    pub index_mtime_ns: Option<u64>,
    /// When the scan ran, Unix milliseconds.
    pub checked_at_ms: u64,
    /// How long it took.
    pub scan_ms: u64,
    /// `None` when the scan ran out of budget (or failed): the branch is shown alone.
    pub counts: Option<Counts>,
    pub ahead: Option<u32>,
    pub behind: Option<u32>,
    /// Why there are no counts, when the scan failed.
    pub error: Option<String>,
    /// Scans in a row, this one included, that ran out of budget (0: this one did not).
    #[serde(default)]
    pub over_budget_streak: u32,
}

/// The longest wait between scans of a repository that keeps running out of budget, in
/// cache periods.
pub const OVER_BUDGET_BACKOFF_MAX: u32 = 12;

impl Record {
    /// Still good for `repo` as it is now, with records kept for `max_age` (longer
    /// after scans over budget).
    pub fn is_fresh(&self, repo: &str, stamp: &Stamp, now_ms: u64, max_age: Duration) -> bool {
        let backoff = match self.over_budget_streak {
            0 => 1,
            n => 1u32.checked_shl(n - 1).unwrap_or(u32::MAX).min(OVER_BUDGET_BACKOFF_MAX),
        };
        self.repo == repo
            && self.head == stamp.head
            && self.index_mtime_ns == stamp.index_mtime_ns
            && now_ms >= self.checked_at_ms
            && u128::from(now_ms - self.checked_at_ms) < max_age.as_millis() * u128::from(backoff)
    }

    /// The scan ran out of budget.
    pub fn over_budget(&self) -> bool {
        self.counts.is_none() && self.error.is_none()
    }
}

/// The cache file for the repository at `root`, in `dir`.
pub fn cache_path(dir: &Path, root: &Path) -> PathBuf {
    dir.join(format!("git-{:016x}.json", crate::util::hash::fnv1a(root.as_os_str().as_encoded_bytes())))
}

/// The lock a background refresh of the repository cached at `cache_path` holds.
pub fn lock_path(cache_path: &Path) -> PathBuf {
    cache_path.with_extension("lock")
}

/// The folder of the cache files inside baton's state dir.
pub fn cache_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("statusline")
}

/// The record in `path`, if it is there and readable.
pub fn load(path: &Path) -> Option<Record> {
    let bytes = fsx::read_limited(path, 64 * 1024).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Replaces the record in `path` (a private file, written atomically).
pub fn store(path: &Path, record: &Record) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        fsx::ensure_dir(dir, true)?;
    }
    let bytes = serde_json::to_vec(record).map_err(std::io::Error::other)?;
    fsx::write_atomic(path, &bytes, fsx::WriteOptions::STATE)
}

/// Replaces the record in `path` only if its folder is still there (the background
/// refresh: a cache folder removed meanwhile is not made again).
pub fn replace(path: &Path, record: &Record) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(record).map_err(std::io::Error::other)?;
    fsx::write_atomic(path, &bytes, fsx::WriteOptions::STATE)
}

/// The modification time of the index in `git_dir`, if there is one.
pub fn index_mtime_ns(git_dir: &Path) -> Option<u64> {
    let modified = std::fs::metadata(git_dir.join("index")).and_then(|m| m.modified()).ok()?;
    let since = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
    u64::try_from(since.as_nanos()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Record {
        Record {
            repo: "/work/app".into(),
            head: "ref: refs/heads/main".into(),
            index_mtime_ns: Some(42),
            checked_at_ms: 10_000,
            scan_ms: 3,
            counts: Some(Counts { staged: 1, modified: 2, untracked: 3 }),
            ahead: Some(1),
            behind: None,
            error: None,
            over_budget_streak: 0,
        }
    }

    #[test]
    fn freshness() {
        let r = record();
        let stamp = Stamp { head: "ref: refs/heads/main".into(), index_mtime_ns: Some(42) };
        let five = Duration::from_secs(5);
        assert!(r.is_fresh("/work/app", &stamp, 10_000, five));
        assert!(r.is_fresh("/work/app", &stamp, 14_999, five));
        assert!(!r.is_fresh("/work/app", &stamp, 15_000, five), "expired");
        assert!(!r.is_fresh("/work/app", &stamp, 9_000, five), "clock went back");
        assert!(!r.is_fresh("/work/other", &stamp, 10_000, five), "another repository");
        let moved = Stamp { head: "ref: refs/heads/feat".into(), ..stamp.clone() };
        assert!(!r.is_fresh("/work/app", &moved, 10_000, five), "checkout");
        let staged = Stamp { index_mtime_ns: Some(43), ..stamp.clone() };
        assert!(!r.is_fresh("/work/app", &staged, 10_000, five), "index rewritten");
        assert!(!r.is_fresh("/work/app", &stamp, 10_000, Duration::ZERO), "caching off");
    }

    #[test]
    fn scans_over_budget_back_off() {
        let stamp = Stamp { head: "ref: refs/heads/main".into(), index_mtime_ns: Some(42) };
        let five = Duration::from_secs(5);
        let waits: Vec<u64> = [0, 1, 2, 3, 4, 5, 40]
            .iter()
            .map(|&streak| {
                let r = Record { counts: None, over_budget_streak: streak, ..record() };
                (0..=120_000)
                    .step_by(1000)
                    .find(|t| !r.is_fresh("/work/app", &stamp, 10_000 + t, five))
                    .unwrap()
            })
            .collect();
        assert_eq!(waits, vec![5_000, 5_000, 10_000, 20_000, 40_000, 60_000, 60_000]);
    }

    #[cfg(unix)]
    #[test]
    fn round_trip_in_a_private_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = cache_path(&cache_dir(dir.path()), Path::new("/work/app"));
        assert_eq!(path, cache_path(&cache_dir(dir.path()), Path::new("/work/app")));
        assert_ne!(path, cache_path(&cache_dir(dir.path()), Path::new("/work/app2")));
        assert!(load(&path).is_none());
        store(&path, &record()).unwrap();
        assert_eq!(load(&path), Some(record()));
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        std::fs::write(&path, b"garbage").unwrap();
        assert!(load(&path).is_none());
    }
}
