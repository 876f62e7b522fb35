//! The readers of the hosts' transcripts, one file per format: Claude Code's JSONL
//! ([`claude`], a folder: its figure, its facts, its exact usage, its pace and its todo
//! list), Codex's rollout ([`codex`]), Gemini CLI's chat recording ([`gemini`]) and Qwen
//! Code's ([`qwen`], through Gemini CLI's reader), Factory Droid's session and its sidecar
//! ([`droid`]), Copilot CLI's event log ([`copilot`]), and OpenCode's and Kilo CLI's
//! messages, sent by baton's plugin ([`opencode`]). Each reads its host's figure and the
//! facts a handoff is built from.
//!
//! Below them: the facts model ([`facts`], [`todos`]), which imports no format; the line
//! reader (`line`), the reader from the end (`tail`), the forward one (`forward`) and the
//! bounded read of a file (`file`). This file is the dispatch by format, in one place
//! ([`gather_facts_as`]).
//!
//! Every read is bounded, and nothing here panics on input: a line that does not parse,
//! or a field of the wrong type, is skipped or read as absent.

pub mod claude;
pub mod codex;
pub mod copilot;
pub mod droid;
pub mod facts;
mod file;
mod format;
mod forward;
pub mod gemini;
mod line;
pub mod opencode;
pub mod qwen;
mod record;
pub(crate) mod resume;
mod tail;
#[cfg(test)]
mod testing;
mod todos;
pub mod trace;

use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use claude::pace::tokens_per_tool_call;
pub use claude::todo_tail::{TODO_TAIL_BUDGET, current_todos};
#[cfg(test)]
pub use claude::usage::usage_from_bytes;
pub use claude::usage::{SessionUsage, ToolResultSize, session_usage};
pub use facts::{FactsBudget, SessionFacts, relative_path};
use file::BoundedRead;
pub use format::Format;
use line::parse_line;
pub use line::{Compaction, Usage};
pub use record::MarkSlot;
pub use todos::TodoItem;
#[cfg(test)]
pub use todos::TodoSource;
pub use trace::{Action, Outcome, Trace, TraceCall, read_trace};

/// The last lines of the record at `path` that parse as JSON, newest first: at most
/// `max_lines`, within `budget` bytes read from its end (the relay's look at how a leg
/// ended).
pub fn last_json_lines(path: &Path, budget: u64, max_lines: usize) -> io::Result<Vec<Value>> {
    let file = file::open_transcript(path)?;
    let mut tail = tail::TailReader::new(&file, budget)?;
    let mut lines = vec![];
    while lines.len() < max_lines {
        let Some(line) = tail.next_line()? else { break };
        if let Ok(value) = serde_json::from_slice::<Value>(&line) {
            lines.push(value);
        }
    }
    Ok(lines)
}

/// What a host's own record says of its context: the newest reply's prompt tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    pub tokens: u64,
    /// The model, when the record names it.
    pub model: Option<String>,
    /// The window the record gives, when it does (Codex's rollout, Copilot CLI's log).
    pub window: Option<u64>,
    /// When it was written (Unix seconds).
    pub written_at: Option<i64>,
    /// It is the newest model call's (Copilot CLI records a call's usage after the
    /// call's own PostToolUse may run: `false` when a later call has finished).
    pub current: bool,
}

/// The newest figure of the record at `path`, read as `format`, within each format's
/// budget, from where the last read of the context stopped when `slot` holds its mark
/// ([`record::read_record`]). Claude Code's figure is read with its statusline's bridge
/// (`claude::figure`), and the plugin's messages are never a file: `None` for those.
pub fn read_figure(format: Format, path: &Path, slot: Option<&MarkSlot>) -> Option<Reading> {
    match format {
        Format::ClaudeCode | Format::OpenCodeMessages => None,
        _ => record::read_record(format, path, slot),
    }
}

/// Where the last read of a context's transcript stopped, and what it found, by reader:
/// what the figure source keeps per context between two hook calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reader", rename_all = "snake_case")]
pub enum KeptMark {
    Claude(claude::figure::FigureMark),
    Record(record::RecordMark),
}

/// The facts of the transcript at `path`, read as `format` (the host that wrote it).
/// Every reader reads the same bounded head and tail.
pub fn gather_facts_as(format: Format, path: &Path, budget: FactsBudget) -> io::Result<SessionFacts> {
    let read = BoundedRead::of(path, budget)?;
    let format = match format {
        // A Claude Code session may be handed a path by hand: trust the file's own shape.
        Format::ClaudeCode => Format::sniff(read.first_line()),
        known => known,
    };
    let mut facts = match format {
        // The plugin's digest is sent on stdin, never named by a path: a file is read as
        // Claude Code's.
        Format::ClaudeCode | Format::OpenCodeMessages => {
            claude::facts::facts_from_lines(read.head_lines(), read.tail_lines(), read.reached_start())
        }
        Format::CodexRollout => {
            codex::facts_from_lines(read.head_lines(), read.tail_lines(), read.reached_start())
        }
        Format::GeminiChat => {
            gemini::facts_from_lines(read.head_lines(), read.tail_lines(), read.reached_start())
        }
        Format::QwenChat => {
            qwen::facts_from_lines(read.head_lines(), read.tail_lines(), read.reached_start())
        }
        Format::DroidSession => claude_shaped_facts(&read, droid::claude_shaped),
        Format::CopilotEvents => claude_shaped_facts(&read, copilot::claude_shaped),
    };
    facts.format = format;
    facts.bytes_read = read.bytes_read();
    Ok(facts)
}

/// The facts of a host's transcript whose lines `shape` puts in Claude Code's shape
/// (a line it returns `None` for is skipped).
fn claude_shaped_facts(read: &BoundedRead, shape: fn(&Value) -> Option<Value>) -> SessionFacts {
    let as_claude = |line: &[u8]| parse_line(line).and_then(|value| shape(&value));
    claude::facts::facts_from_values(
        read.head_lines().filter_map(as_claude),
        read.tail_lines().filter_map(as_claude),
        read.reached_start(),
    )
}

#[cfg(all(test, unix))]
mod tests {
    use super::claude::context::current_context;
    use super::file::open_transcript;

    #[test]
    fn only_regular_files_are_opened() {
        let dir = tempfile::tempdir().unwrap();
        assert!(open_transcript(dir.path()).is_err());
        let target = dir.path().join("t.jsonl");
        std::fs::write(&target, b"{}\n").unwrap();
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(open_transcript(&target).is_ok());
        assert!(open_transcript(&link).is_err());
        assert!(current_context(&link).is_err());
    }
}
