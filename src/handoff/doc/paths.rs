//! The paths a HANDOFF.json names that baton may act on: only a `.continue-here.md`
//! inside `.planning/` (or the configured handoff folder), relative, without `..`, outside
//! `.git`, and not through a symlink.

use std::path::{Component, Path, PathBuf};

/// The name of the only file a handoff may point baton at.
pub const CONTINUE_HERE: &str = ".continue-here.md";

/// Why a path in a handoff is not one baton may act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathRefused {
    #[error("empty or too long")]
    Length,
    #[error("holds control characters or backslashes")]
    Characters,
    #[error("is absolute")]
    Absolute,
    #[error("climbs out with `..`")]
    ClimbsOut,
    #[error("is inside .git")]
    InsideGit,
    #[error("is not inside .planning/")]
    OutsidePlanning,
    #[error("is not a {CONTINUE_HERE}")]
    NotContinueHere,
    #[error("goes through a symlink")]
    Symlink,
}

/// Whether `text` names a `.continue-here.md` baton may read, move or delete: relative,
/// inside `.planning/`, no `..` or `.`, no `.git` part, no control characters, and no
/// part of it (under `root`) a symlink. Returns the path.
pub fn check_continue_here(text: &str, root: &Path) -> Result<PathBuf, PathRefused> {
    check_continue_here_in(text, root, None)
}

/// [`check_continue_here`], also accepting one directly in `dir` (the configured
/// `handoff.dir`, itself relative and outside `.git`).
pub fn check_continue_here_in(text: &str, root: &Path, dir: Option<&Path>) -> Result<PathBuf, PathRefused> {
    if text.is_empty() || text.len() > 1024 {
        return Err(PathRefused::Length);
    }
    if text.chars().any(|c| c.is_control()) || text.contains('\\') {
        return Err(PathRefused::Characters);
    }
    let path = Path::new(text);
    if !path.is_relative() {
        return Err(PathRefused::Absolute);
    }
    let mut parts = vec![];
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::CurDir => {}
            _ => return Err(PathRefused::ClimbsOut),
        }
    }
    if parts.iter().any(|p| p.eq_ignore_ascii_case(".git")) {
        return Err(PathRefused::InsideGit);
    }
    let in_handoff_dir = dir.is_some_and(|d| {
        d.is_relative()
            && d.components().all(|c| matches!(c, Component::Normal(_)))
            && !d.components().any(|c| c.as_os_str().eq_ignore_ascii_case(".git"))
            && parts.iter().collect::<PathBuf>() == d.join(CONTINUE_HERE)
    });
    if parts.first().map(String::as_str) != Some(".planning") && !in_handoff_dir {
        return Err(PathRefused::OutsidePlanning);
    }
    if parts.last().map(String::as_str) != Some(CONTINUE_HERE) {
        return Err(PathRefused::NotContinueHere);
    }
    // No part of it may be a symlink (it could lead out of the project).
    let mut at = root.to_path_buf();
    for part in &parts {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => return Err(PathRefused::Symlink),
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Ok(parts.iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configured_handoff_dir_holds_its_own_continue_here() {
        let root = Path::new("/nonexistent-root");
        let dir = Some(Path::new("notes/handoff"));
        assert!(check_continue_here_in("notes/handoff/.continue-here.md", root, dir).is_ok());
        assert!(check_continue_here_in("notes/other/.continue-here.md", root, dir).is_err());
        assert!(check_continue_here_in(".git/.continue-here.md", root, Some(Path::new(".git"))).is_err());
        assert!(check_continue_here("notes/handoff/.continue-here.md", root).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".planning")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join(".planning/phases")).unwrap();
        assert!(check_continue_here(".planning/phases/.continue-here.md", dir.path()).is_err());
        assert!(check_continue_here(".planning/.continue-here.md", dir.path()).is_ok());
    }
}
