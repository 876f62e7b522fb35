//! What a leg completed, measured around it: the project's files (size and modification
//! time, baton's own handoff files left out) before and after, and its repository's
//! commits; and what fills a fresh context at its start (the instruction files, the
//! brief), for the line that ends a futile relay.
//!
//! Bounded: at most [`MAX_FILES`] files are looked at, a few folders that are never the
//! work are skipped, nothing is read but metadata.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::config::Config;
use crate::host::HostKind;
use crate::run_record::Progress;

/// The most files a snapshot looks at; a larger project is not measured.
pub const MAX_FILES: usize = 20_000;
/// Folders that are never the work a leg did.
const SKIPPED: [&str; 4] = [".git", "node_modules", "target", ".venv"];

/// The project's files and commits at one time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    files: BTreeMap<PathBuf, (u64, Option<SystemTime>)>,
    head: Option<String>,
}

/// Whether `relative` is one of baton's own files: in the handoff folder (the handoff, its
/// archive, pending ones, reports), or a handoff's `.continue-here.md` wherever GSD keeps it.
fn batons_own(relative: &Path, handoff_dir: &Path) -> bool {
    if relative.file_name().is_some_and(|n| n == ".continue-here.md") {
        return true;
    }
    let Ok(inside) = relative.strip_prefix(handoff_dir) else { return false };
    let first = inside.components().next().map(|c| c.as_os_str().to_string_lossy().into_owned());
    first.is_some_and(|name| name.starts_with("HANDOFF") || name == "handoffs" || name == "reports")
}

/// The project's files now; `None` when it has more than [`MAX_FILES`].
pub fn snapshot(project: &Path, config: &Config) -> Option<Snapshot> {
    let handoff_dir = config.handoff_dir();
    let mut files = BTreeMap::new();
    let mut stack = vec![project.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else { continue };
            let relative = path.strip_prefix(project).unwrap_or(&path).to_path_buf();
            if kind.is_dir() {
                let name = entry.file_name();
                if !SKIPPED.iter().any(|s| name == *s) && !batons_own(&relative, &handoff_dir) {
                    stack.push(path);
                }
            } else if kind.is_file() && !batons_own(&relative, &handoff_dir) {
                let meta = entry.metadata().ok();
                let size = meta.as_ref().map_or(0, |m| m.len());
                files.insert(relative, (size, meta.and_then(|m| m.modified().ok())));
                if files.len() > MAX_FILES {
                    return None;
                }
            }
        }
    }
    Some(Snapshot { files, head: head_commit(project) })
}

fn head_commit(project: &Path) -> Option<String> {
    let repo = git2::Repository::discover(project).ok()?;
    let head = repo.head().ok()?.peel_to_commit().ok()?;
    Some(head.id().to_string())
}

/// What changed since `before` (pure over two snapshots).
pub fn compare(before: &Snapshot, after: &Snapshot, commits: u32) -> Progress {
    let changed = after.files.iter().filter(|(path, now)| before.files.get(*path) != Some(*now)).count();
    let removed = before.files.keys().filter(|path| !after.files.contains_key(*path)).count();
    Progress {
        commits,
        files_changed: u32::try_from(changed + removed).unwrap_or(u32::MAX),
        steps_done: None,
    }
}

/// What the leg changed from `before` to `after` (its end's snapshot, which the next leg
/// can start from: one walk of the project between two legs, not two): files, and commits
/// made on top of its HEAD that are not baton's own checkpoints. `None` for `after` is a
/// project grown past [`MAX_FILES`].
pub fn between(before: &Snapshot, after: Option<&Snapshot>, project: &Path) -> Progress {
    let Some(after) = after else {
        return Progress { files_changed: 1, ..Progress::default() };
    };
    let commits = match (&before.head, &after.head) {
        (old, Some(new)) if old.as_ref() != Some(new) => count_commits(project, old.as_deref(), new),
        _ => 0,
    };
    compare(before, after, commits)
}

/// Commits from `old` (exclusive) to `new`, baton's `wip:` checkpoints left out, at most 100.
fn count_commits(project: &Path, old: Option<&str>, new: &str) -> u32 {
    let Ok(repo) = git2::Repository::discover(project) else { return 0 };
    let Ok(mut walk) = repo.revwalk() else { return 0 };
    let pushed = git2::Oid::from_str(new).ok().and_then(|oid| walk.push(oid).ok());
    if pushed.is_none() {
        return 0;
    }
    if let Some(oid) = old.and_then(|o| git2::Oid::from_str(o).ok()) {
        let _ = walk.hide(oid);
    }
    let count = walk
        .take(100)
        .flatten()
        .filter_map(|oid| repo.find_commit(oid).ok())
        .filter(|c| !c.summary().ok().flatten().is_some_and(|s| s.starts_with("wip:")))
        .count();
    u32::try_from(count).unwrap_or(u32::MAX)
}

/// The instruction files a host reads into every fresh context, as named in the project.
const INSTRUCTION_FILES: [&str; 5] = ["CLAUDE.md", "AGENTS.md", "GEMINI.md", ".claude/CLAUDE.md", "QWEN.md"];

/// What fills a fresh context at its start, in words: the instruction files in the
/// project and the brief (the handoff the leg was briefed from), with their sizes.
pub fn what_fills_the_start(host: HostKind, project: &Path, brief: Option<&str>) -> String {
    let size = |path: &Path| std::fs::symlink_metadata(path).ok().filter(|m| m.is_file()).map(|m| m.len());
    let mut parts: Vec<(String, u64)> = INSTRUCTION_FILES
        .iter()
        .filter_map(|name| size(&project.join(name)).map(|len| (name.to_string(), len)))
        .collect();
    if let Some(brief) = brief {
        // The brief is the handoff's Markdown beside its JSON.
        let json = project.join(brief);
        let markdown = json.with_extension("md");
        if let Some(len) = size(&markdown).or_else(|| size(&json)) {
            parts.push((format!("the brief ({brief})"), len));
        }
    }
    let codex_doc_max = if host == HostKind::Codex { crate::host::codex_project_doc_max_bytes() } else { 0 };
    describe_fill_on(host, &parts, codex_doc_max)
}

/// The parts in words ([`describe_fill`]), and what `host` makes of them: Codex reads only
/// the first `codex_doc_max` bytes of a larger AGENTS.md (its `project_doc_max_bytes`)
/// (pure).
pub fn describe_fill_on(host: HostKind, parts: &[(String, u64)], codex_doc_max: u64) -> String {
    let fill = describe_fill(parts);
    match parts.iter().find(|(name, _)| name == "AGENTS.md") {
        Some((_, len)) if host == HostKind::Codex && *len > codex_doc_max => format!(
            "{fill}. Codex reads {} KB of AGENTS.md (`project_doc_max_bytes` in its config.toml)",
            codex_doc_max.div_ceil(1024)
        ),
        _ => fill,
    }
}

/// The parts in words, largest first (pure).
pub fn describe_fill(parts: &[(String, u64)]) -> String {
    if parts.is_empty() {
        return "nothing baton can name in the project (the host's own system prompt and tools, or the model's window smaller than configured)".to_string();
    }
    let mut parts = parts.to_vec();
    parts.sort_by_key(|(_, len)| std::cmp::Reverse(*len));
    let words: Vec<String> = parts
        .iter()
        .map(|(name, len)| format!("{} ({} KB)", crate::util::text::outside(name), len.div_ceil(1024)))
        .collect();
    format!("{}; the rest is the host's own (its system prompt, tools, MCP servers)", words.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(files: &[(&str, u64, u64)]) -> Snapshot {
        Snapshot {
            files: files
                .iter()
                .map(|(p, size, secs)| {
                    (
                        PathBuf::from(p),
                        (*size, Some(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(*secs))),
                    )
                })
                .collect(),
            head: None,
        }
    }

    #[test]
    fn changed_new_and_removed_files_count() {
        let before = snap(&[("a.rs", 10, 1), ("b.rs", 5, 1), ("gone.rs", 1, 1)]);
        let after = snap(&[("a.rs", 10, 1), ("b.rs", 6, 2), ("new.rs", 1, 2)]);
        assert_eq!(compare(&before, &after, 0).files_changed, 3);
        assert_eq!(compare(&before, &before, 0), Progress::default());
    }

    #[test]
    fn batons_handoff_files_are_not_the_work() {
        let dir = Path::new(".planning");
        assert!(batons_own(Path::new(".planning/HANDOFF.json"), dir));
        assert!(batons_own(Path::new(".planning/handoffs/archive/x.json"), dir));
        assert!(!batons_own(Path::new(".planning/STATE.md"), dir));
        assert!(!batons_own(Path::new("src/HANDOFF.rs"), dir));
        assert!(batons_own(Path::new(".planning/phases/01-x/.continue-here.md"), dir));
    }

    #[test]
    fn the_fill_names_the_largest_first() {
        let text = describe_fill(&[
            ("CLAUDE.md".into(), 2048),
            ("the brief (.planning/HANDOFF.json)".into(), 400_000),
        ]);
        assert!(
            text.starts_with("the brief (.planning/HANDOFF.json) (391 KB), CLAUDE.md (2 KB); the rest"),
            "{text}"
        );
        assert!(describe_fill(&[]).starts_with("nothing baton can name"));
    }

    #[test]
    fn codexs_agents_md_is_named_with_what_codex_reads_of_it() {
        let big = [("AGENTS.md".to_string(), 400_000)];
        let default = 32 * 1024; // Codex's own default
        let codex = describe_fill_on(HostKind::Codex, &big, default);
        assert!(
            codex.starts_with("AGENTS.md (391 KB); the rest") && codex.contains("Codex reads 32 KB"),
            "{codex}"
        );
        assert!(!describe_fill_on(HostKind::Claude, &big, default).contains("Codex reads"));
        let small = [("AGENTS.md".to_string(), 1_000)];
        assert!(!describe_fill_on(HostKind::Codex, &small, default).contains("Codex reads"));
        // The user raised `project_doc_max_bytes`: Codex reads it whole, or that much.
        assert!(!describe_fill_on(HostKind::Codex, &big, 500_000).contains("Codex reads"));
        assert!(describe_fill_on(HostKind::Codex, &big, 128 * 1024).contains("Codex reads 128 KB"));
    }
}
