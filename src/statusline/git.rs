//! The git markers: `+staged ~modified ?untracked ↑ahead ↓behind`, from a status scan
//! that runs under a time budget and is cached per repository (see `git_cache`). A scan
//! over budget shows no markers (the branch segment still shows the branch) and is tried
//! again when the cache expires (later and later while it keeps running over).

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

/// The markers' record for the work tree at `place` whose `HEAD` reads `head`: from the
/// cache when it is fresh, else from a new scan (which is then cached).
pub fn status(place: &GitPlace, head: &str, settings: &GitSettings, now_ms: u64) -> Record {
    let stamp = Stamp { head: head.to_string(), index_mtime_ns: git_cache::index_mtime_ns(&place.git_dir) };
    let repo = place.root.to_string_lossy().into_owned();
    let path = settings.cache_dir.as_deref().map(|dir| git_cache::cache_path(dir, &place.root));
    let previous = path.as_deref().and_then(git_cache::load).filter(|r| r.repo == repo);
    if let Some(record) = &previous {
        if record.is_fresh(&repo, &stamp, now_ms, settings.max_age) {
            return record.clone();
        }
    }
    let mut record = scan(&place.root, repo, stamp, settings.budget, now_ms);
    if record.over_budget() {
        let streak = previous.filter(Record::over_budget).map_or(0, |r| r.over_budget_streak);
        record.over_budget_streak = streak.saturating_add(1);
    }
    if let Some(path) = path.filter(|_| !settings.max_age.is_zero()) {
        // A status line never fails because its cache could not be written.
        let _ = git_cache::store(&path, &record);
    }
    record
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
