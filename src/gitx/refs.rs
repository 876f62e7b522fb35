//! baton's own refs (`refs/baton/…`; today the automatic checkpoints,
//! `refs/baton/wip/<session>`): listed and pruned by `baton checkpoint list|prune`.
//! Nothing outside `refs/baton/` is ever read for deletion or deleted.

use super::GitError;
use std::path::Path;
use std::time::Duration;

use git2::Repository;

/// Every ref baton writes lives under this prefix.
pub const BATON_REF_PREFIX: &str = "refs/baton/";

/// One of baton's refs and the commit it points to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatonRef {
    pub name: String,
    pub commit: String,
    /// The commit's time (Unix seconds).
    pub time: i64,
    pub summary: String,
}

fn open(cwd: &Path) -> Result<Repository, GitError> {
    Repository::discover(cwd)
        .map_err(|e| format!("{} is not in a git repository ({})", cwd.display(), e.message()).into())
}

/// baton's refs in the repository holding `cwd`, newest first.
pub fn list(cwd: &Path) -> Result<Vec<BatonRef>, GitError> {
    let repo = open(cwd)?;
    list_in(&repo)
}

fn list_in(repo: &Repository) -> Result<Vec<BatonRef>, GitError> {
    let glob = format!("{BATON_REF_PREFIX}*");
    let references = repo.references_glob(&glob).map_err(|e| e.message().to_string())?;
    let mut refs: Vec<BatonRef> = references
        .flatten()
        .filter_map(|reference| {
            let name = reference.name().ok()?.to_string();
            if !name.starts_with(BATON_REF_PREFIX) {
                return None;
            }
            let commit = reference.peel_to_commit().ok()?;
            Some(BatonRef {
                name,
                commit: commit.id().to_string(),
                time: commit.time().seconds(),
                summary: commit.summary().ok().flatten().unwrap_or_default().to_string(),
            })
        })
        .collect();
    refs.sort_by(|a, b| b.time.cmp(&a.time).then_with(|| a.name.cmp(&b.name)));
    Ok(refs)
}

/// What a prune did.
#[derive(Debug, Clone, Default)]
pub struct Pruned {
    pub removed: Vec<BatonRef>,
    /// Kept because a pending handoff names it.
    pub kept: Vec<BatonRef>,
}

/// Deletes baton's refs whose commit is older than `older_than` (all of them when
/// `None`), except those in `keep` (the checkpoint a pending handoff points to).
pub fn prune(
    cwd: &Path,
    older_than: Option<Duration>,
    keep: &[String],
    now: i64,
) -> Result<Pruned, GitError> {
    let repo = open(cwd)?;
    let cutoff = older_than.map(|d| now.saturating_sub(i64::try_from(d.as_secs()).unwrap_or(i64::MAX)));
    let mut pruned = Pruned::default();
    for found in list_in(&repo)? {
        if cutoff.is_some_and(|cutoff| found.time > cutoff) {
            continue;
        }
        if keep.contains(&found.name) {
            pruned.kept.push(found);
            continue;
        }
        let mut reference = repo.find_reference(&found.name).map_err(|e| e.message().to_string())?;
        reference.delete().map_err(|e| format!("cannot delete {}: {}", found.name, e.message()))?;
        pruned.removed.push(found);
    }
    Ok(pruned)
}

/// An age on the command line that is not one (`--older-than`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadAge(String);

/// `90s`, `30m`, `12h`, `7d`, `2w` as a duration.
pub fn parse_age(text: &str) -> Result<Duration, BadAge> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 =
        number.parse().map_err(|_| BadAge(format!("{text:?} is not a duration like 7d, 12h, 30m")))?;
    let unit_seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" | "" => 86_400,
        "w" => 7 * 86_400,
        _ => return Err(BadAge(format!("{text:?}: the unit must be s, m, h, d or w"))),
    };
    Ok(Duration::from_secs(n.saturating_mul(unit_seconds)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_parse() {
        assert_eq!(parse_age("7d").unwrap(), Duration::from_secs(7 * 86_400));
        assert_eq!(parse_age("12h").unwrap(), Duration::from_secs(12 * 3600));
        assert_eq!(parse_age("2w").unwrap(), Duration::from_secs(14 * 86_400));
        assert!(parse_age("soon").is_err());
        assert!(parse_age("3y").is_err());
    }
}
