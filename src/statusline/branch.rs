//! The git branch, read straight from `HEAD`: no repository scan, no status. Also where
//! the work tree and its git data are, which the git markers and the project-level
//! segments share.

use std::path::{Path, PathBuf};

use super::model::shown;
use super::{Context, Segment, Style};
use crate::fsx;

pub fn segment(ctx: &Context) -> Option<Segment> {
    let name = ctx.branch()?;
    Some(Segment::new(shown(name), Style::Branch))
}

/// A work tree and its git data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitPlace {
    /// The top of the work tree (the folder holding `.git`).
    pub root: PathBuf,
    /// The `.git` folder, or the folder a linked worktree's `.git` file points to.
    pub git_dir: PathBuf,
}

/// The work tree at or above `start`: a `.git` folder, or the `gitdir:` a `.git` file of
/// a linked worktree points to.
pub fn find_git(start: &Path) -> Option<GitPlace> {
    for dir in start.ancestors().take(64) {
        let dot_git = dir.join(".git");
        let Ok(meta) = std::fs::metadata(&dot_git) else { continue };
        if meta.is_dir() {
            return Some(GitPlace { root: dir.to_path_buf(), git_dir: dot_git });
        }
        let text = fsx::read_limited(&dot_git, 4096).ok()?;
        let text = String::from_utf8(text).ok()?;
        let target = text.trim().strip_prefix("gitdir:")?.trim();
        let target = Path::new(target);
        let git_dir = if target.is_absolute() { target.to_path_buf() } else { dir.join(target) };
        return Some(GitPlace { root: dir.to_path_buf(), git_dir });
    }
    None
}

/// The content of `HEAD`, trimmed: `ref: refs/heads/main` or a commit id.
pub fn read_head(git_dir: &Path) -> Option<String> {
    let head = fsx::read_limited(&git_dir.join("HEAD"), 4096).ok()?;
    Some(String::from_utf8(head).ok()?.trim().to_string())
}

/// The branch name in `HEAD`'s content, or the short commit id for a detached HEAD.
pub fn branch_name(head: &str) -> Option<String> {
    if let Some(reference) = head.strip_prefix("ref:") {
        let reference = reference.trim();
        return Some(reference.strip_prefix("refs/heads/").unwrap_or(reference).to_string());
    }
    (head.len() >= 7 && head.chars().all(|c| c.is_ascii_hexdigit())).then(|| format!("@{}", &head[..7]))
}

/// The branch name of the work tree at or above `start`.
#[cfg(test)]
fn head_name(start: &Path) -> Option<String> {
    branch_name(&read_head(&find_git(start)?.git_dir)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_branch_and_detached_head() {
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path().join(".git");
        std::fs::create_dir(&git).unwrap();
        std::fs::write(git.join("HEAD"), "ref: refs/heads/feat/rate-limit\n").unwrap();
        let sub = dir.path().join("src");
        std::fs::create_dir(&sub).unwrap();
        assert_eq!(head_name(&sub).as_deref(), Some("feat/rate-limit"));
        assert_eq!(find_git(&sub).unwrap().root, dir.path());
        std::fs::write(git.join("HEAD"), "0123456789abcdef0123456789abcdef01234567\n").unwrap();
        assert_eq!(head_name(dir.path()).as_deref(), Some("@0123456"));
    }

    #[test]
    fn follows_a_worktree_gitdir_file() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::fs::write(real.join("HEAD"), "ref: refs/heads/wt\n").unwrap();
        let tree = dir.path().join("tree");
        std::fs::create_dir(&tree).unwrap();
        std::fs::write(tree.join(".git"), "gitdir: ../real\n").unwrap();
        assert_eq!(head_name(&tree).as_deref(), Some("wt"));
        let place = find_git(&tree).unwrap();
        assert_eq!(place.root, tree);
        assert_eq!(place.git_dir, tree.join("../real"));
    }
}
