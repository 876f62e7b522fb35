//! The facts a handoff is built from, whatever host wrote the transcript: what was
//! asked, what the agent was doing, which files it changed, what is still running, what
//! last failed, and the caps on every text copied out, so a hostile transcript cannot
//! blow up a handoff. Each format's reader fills them (`claude`, `codex`, `gemini` …);
//! this model imports none of them.

use std::path::Path;

use serde::Serialize;

use super::format::Format;
use super::line::{Compaction, clean_line, clip};
use super::todos::TodoList;

/// How much of the start of the file is read for the first request and time.
pub const HEAD_BUDGET: u64 = 256 * 1024;
/// How much of the end of the file is read for everything else.
pub const TAIL_BUDGET: u64 = 8 * 1024 * 1024;

/// Caps on what is copied out of the transcript.
pub const REQUEST_TEXT_MAX: usize = 4000;
pub const ASSISTANT_TEXT_MAX: usize = 4000;
pub const ERROR_LINE_MAX: usize = 500;
pub const COMMAND_MAX: usize = 1000;
pub const PATH_MAX: usize = 4096;
pub const FILES_MAX: usize = 1000;
pub const BACKGROUND_MAX: usize = 100;
pub const COMPACTIONS_MAX: usize = 1000;
/// How many of the latest shell commands are kept.
pub const COMMANDS_MAX: usize = 20;

/// A shell command the agent ran, with how it ended when the part read shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandRun {
    pub command: String,
    /// The exit code, when the host recorded one.
    pub exit_code: Option<i64>,
    /// It ended in an error (a non-zero exit, or the host marked the call failed).
    pub failed: bool,
}

/// Keeps the latest [`COMMANDS_MAX`] commands; true when the oldest was dropped.
pub(crate) fn push_command(commands: &mut Vec<CommandRun>, run: CommandRun) -> bool {
    commands.push(run);
    if commands.len() > COMMANDS_MAX {
        commands.remove(0);
        return true;
    }
    false
}

/// How much of the transcript [`gather_facts`] may read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FactsBudget {
    pub head: u64,
    pub tail: u64,
}

impl Default for FactsBudget {
    fn default() -> Self {
        FactsBudget { head: HEAD_BUDGET, tail: TAIL_BUDGET }
    }
}

/// A process the agent started in the background (Bash with `run_in_background`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BackgroundProcess {
    pub command: String,
    pub description: Option<String>,
    /// The shell id Claude Code gave it (`bash_1`), from the tool's result.
    pub id: Option<String>,
    /// The agent stopped it later (KillShell and its older names).
    pub stopped: bool,
    pub started_at: Option<String>,
}

/// The last tool call that returned an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailedCommand {
    /// The tool's name, when its call is in the part read.
    pub tool: Option<String>,
    /// The command, for Bash.
    pub command: Option<String>,
    /// The line of the output that looks most like the error.
    pub error_line: Option<String>,
    pub at: Option<String>,
    /// The same Bash command succeeded afterwards.
    pub succeeded_later: bool,
}

/// What the handoff needs to know about a session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SessionFacts {
    pub session_id: Option<String>,
    /// The working folder on the latest line that has one.
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    /// The model of the latest main-chain reply.
    pub model: Option<String>,
    /// The time of the session's first line.
    pub started_at: Option<String>,
    /// The time of the latest line.
    pub last_activity_at: Option<String>,
    pub first_request: Option<String>,
    /// The latest request in the tail.
    pub last_request: Option<String>,
    /// The user's corrections and constraints in the tail ([`is_user_constraint`]), as
    /// written (clipped), oldest first, at most [`USER_WORDS_MAX`].
    pub user_words: Vec<String>,
    pub last_assistant_text: Option<String>,
    pub todos: Option<TodoList>,
    /// Files written or edited by the main chain, in first-touch order, as written in the
    /// transcript (usually absolute; see [`SessionFacts::files_relative_to`]).
    pub files_touched: Vec<String>,
    pub background_processes: Vec<BackgroundProcess>,
    pub last_failure: Option<FailedCommand>,
    /// The latest shell commands the agent ran (at most [`COMMANDS_MAX`]), oldest first.
    pub commands_run: Vec<CommandRun>,
    /// Whose format the transcript was read as.
    pub format: Format,
    /// Compactions in the tail, oldest first.
    pub compactions: Vec<Compaction>,
    /// The tail covers the whole file: nothing is missing from the facts.
    pub reached_start: bool,
    pub bytes_read: u64,
}

impl SessionFacts {
    /// [`SessionFacts::files_touched`] relative to `root` where they are inside it.
    pub fn files_relative_to(&self, root: &Path) -> Vec<String> {
        self.files_touched.iter().map(|file| relative_path(file, root)).collect()
    }
}

/// `file` relative to `root` when it is inside it, else unchanged.
pub fn relative_path(file: &str, root: &Path) -> String {
    if cfg!(windows) {
        return windows_relative_path(file, &root.to_string_lossy());
    }
    match Path::new(file).strip_prefix(root) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative.to_string_lossy().into_owned(),
        _ => file.to_string(),
    }
}

/// [`relative_path`] on Windows: names compared without case, either separator taken,
/// and a relative path given with `/` (as HANDOFF.json and GSD spell it). Pure.
fn windows_relative_path(file: &str, root: &str) -> String {
    let slashed = file.replace('\\', "/");
    let root = root.replace('\\', "/");
    let root = root.trim_end_matches('/');
    let inside = slashed
        .get(..root.len())
        .filter(|head| !root.is_empty() && head.eq_ignore_ascii_case(root))
        .and_then(|_| slashed[root.len()..].strip_prefix('/'))
        .filter(|rest| !rest.is_empty());
    let absolute = slashed.starts_with('/') || slashed.as_bytes().get(1) == Some(&b':');
    match inside {
        Some(rest) => rest.to_string(),
        None if !absolute => slashed,
        None => file.to_string(),
    }
}

/// How many of the user's corrections and constraints are kept, and how long each.
pub const USER_WORDS_MAX: usize = 8;
pub const USER_WORDS_CHARS: usize = 500;

/// Words that make a request a correction or a constraint the agent must keep to.
const CONSTRAINT_MARKS: &[&str] = &[
    "don't",
    "do not",
    "dont",
    "never",
    "always",
    "must",
    "instead",
    "no,",
    "not ",
    "stop",
    "only",
    "keep",
    "avoid",
    "without",
    "make sure",
    "remember",
    "wrong",
    "rather",
];

/// A request that corrects the agent or sets a rule (pure): it has one of
/// [`CONSTRAINT_MARKS`] as a word start, and is short enough to be a rule, not a task text.
pub fn is_user_constraint(request: &str) -> bool {
    let lower = request.to_lowercase();
    lower.chars().count() <= 2 * USER_WORDS_CHARS
        && CONSTRAINT_MARKS.iter().any(|mark| {
            lower.match_indices(mark).any(|(i, _)| i == 0 || !lower[..i].ends_with(char::is_alphanumeric))
        })
}

/// Adds a request to the user's words when it is a correction or constraint.
pub(crate) fn push_user_words(words: &mut Vec<String>, request: &str) {
    if is_user_constraint(request) {
        words.retain(|w| w != request);
        words.push(clip(request, USER_WORDS_CHARS));
        let excess = words.len().saturating_sub(USER_WORDS_MAX);
        words.drain(..excess);
    }
}

const ERROR_WORDS: &[&str] = &["error", "expected", "assert", "panic", "exception", "failed"];

/// The line of a failed tool's output worth showing: the first that reads like an error,
/// else the first non-empty one.
pub fn first_error_line(content: &str) -> Option<String> {
    let mut first = None;
    for raw in content.lines().take(10_000) {
        let raw = raw.replace("<tool_use_error>", "").replace("</tool_use_error>", "");
        let cleaned = clean_line(&raw, ERROR_LINE_MAX);
        if cleaned.is_empty() {
            continue;
        }
        let lower = cleaned.to_ascii_lowercase();
        if ERROR_WORDS.iter().any(|word| lower.contains(word)) {
            return Some(cleaned);
        }
        first.get_or_insert(cleaned);
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_paths_are_made_relative_without_case_and_with_slashes() {
        let root = r"C:\Users\me\proj";
        assert_eq!(windows_relative_path(r"C:\Users\me\proj\src\app.ts", root), "src/app.ts");
        assert_eq!(windows_relative_path(r"c:\users\ME\proj\src\app.ts", root), "src/app.ts");
        assert_eq!(windows_relative_path("C:/Users/me/proj/docs/a.md", root), "docs/a.md");
        assert_eq!(windows_relative_path(r"src\lib.rs", root), "src/lib.rs");
        assert_eq!(windows_relative_path(r"C:\Users\me\proj2\x.ts", root), r"C:\Users\me\proj2\x.ts");
        assert_eq!(windows_relative_path(r"D:\other\x.ts", root), r"D:\other\x.ts");
    }

    #[test]
    fn relative_paths() {
        let root = Path::new("/home/dev/shop-api/");
        assert_eq!(relative_path("/home/dev/shop-api/src/a.ts", root), "src/a.ts");
        assert_eq!(relative_path("/home/dev/shop-apix/a.ts", root), "/home/dev/shop-apix/a.ts");
        assert_eq!(relative_path("/home/dev/shop-api", root), "/home/dev/shop-api");
        assert_eq!(relative_path("rel/b.ts", root), "rel/b.ts");
    }
}
