//! Quiet in projects that do not track `.planning/`: baton's own handoff files are added
//! to the repository's `info/exclude` (the common dir's, in a worktree), never to the
//! user's `.gitignore`, so they never show as untracked or get committed by accident.
//! A repository that tracks anything under the project's `.planning/` is left as it is.

use std::path::Path;

use crate::fsx;
use crate::gitx::Repo;

/// The marker line above baton's patterns in `info/exclude`.
const MARKER: &str = "# baton: its own handoff files (this repository does not track .planning/)";
const EXCLUDE_LIMIT: u64 = 1024 * 1024;

/// The `info/exclude` patterns for baton's files under `<project_rel>/<dir>`. Pure.
pub fn patterns(project_rel: &Path, dir: &Path) -> Vec<String> {
    let prefix = project_rel
        .join(dir)
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    vec![
        format!("/{prefix}/HANDOFF.json"),
        format!("/{prefix}/handoffs/"),
        format!("/{prefix}/**/.continue-here.md"),
    ]
}

/// `text` with the missing `patterns` added under the marker; `None` when all are there.
pub fn with_patterns(text: &str, patterns: &[String]) -> Option<String> {
    let have: Vec<&str> = text.lines().map(str::trim).collect();
    let missing: Vec<&String> = patterns.iter().filter(|p| !have.contains(&p.as_str())).collect();
    if missing.is_empty() {
        return None;
    }
    let mut out = text.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if !have.contains(&MARKER) {
        out.push_str(MARKER);
        out.push('\n');
    }
    for pattern in missing {
        out.push_str(pattern);
        out.push('\n');
    }
    Some(out)
}

/// Whether the index holds any file under `prefix/` (slash-separated, relative).
fn tracks_under(repo: &Repo, prefix: &str) -> bool {
    let Ok(index) = repo.git().index() else { return true };
    let start = format!("{prefix}/");
    index.iter().any(|entry| entry.path.starts_with(start.as_bytes()))
}

/// Adds baton's patterns to `info/exclude` when the repository tracks nothing under the
/// project's handoff folder. Best effort: a failure only means the files may show.
pub fn exclude_untracked_planning(repo: &Repo, project_rel: &Path, dir: &Path) {
    let prefix = project_rel
        .join(dir)
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    if prefix.is_empty() || tracks_under(repo, &prefix) {
        return;
    }
    let info = repo.git().commondir().join("info");
    let path = info.join("exclude");
    let text = match fsx::read_limited(&path, EXCLUDE_LIMIT) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(_) => return,
    };
    if let Some(updated) = with_patterns(&text, &patterns(project_rel, dir)) {
        if fsx::ensure_dir(&info, false).is_ok() {
            let _ = fsx::write_atomic(&path, updated.as_bytes(), fsx::WriteOptions::USER);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_added_once_under_the_marker() {
        let p = patterns(Path::new("packages/web"), Path::new(".planning"));
        assert_eq!(p[0], "/packages/web/.planning/HANDOFF.json");
        let once = with_patterns("# git's own\n*.log", &p).unwrap();
        assert!(once.starts_with("# git's own\n*.log\n# baton:"), "{once}");
        assert!(with_patterns(&once, &p).is_none());
        let top = patterns(Path::new(""), Path::new(".planning"));
        assert_eq!(top[1], "/.planning/handoffs/");
    }
}
