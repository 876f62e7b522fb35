//! The transcript reader: what Claude Code's JSONL transcript says about a session.
//!
//! Three readers share the line format (`line`) and two ways of reading a file:
//!
//! - [`current_context`]: the context size now, from the end of the file (`tail`), for
//!   the monitor when no statusline bridge is there. Bounded: its cost does not grow
//!   with the file.
//! - [`gather_facts`]: todos, files touched, background processes, the last failure,
//!   the first and last requests … for the automatic handoff. Reads a bounded head and
//!   a bounded tail. [`gather_facts_as`] reads the same facts from the host's own format:
//!   Codex's rollout (`codex`), Gemini CLI's chat recording (`gemini`) and Qwen Code's
//!   (`qwen`, through Gemini CLI's reader), Factory Droid's transcript (`droid`) and
//!   Copilot CLI's event log (`copilot`), both put in Claude Code's line shape; OpenCode's
//!   and Kilo CLI's messages, sent by baton's plugin (`opencode`), the same way.
//! - [`session_usage`]: exact token use of the whole session, for `baton report`.
//!   Streams the whole file (`forward`).
//! - [`current_todos`]: the todo list as of now, for the status line: a small tail
//!   read that stops at the latest `TodoWrite`.
//!
//! Each has a pure counterpart over bytes or lines for tests and other sources. Nothing
//! here panics on input: a line that does not parse, or a field of the wrong type, is
//! skipped or read as absent.

pub mod codex;
mod context;
pub mod copilot;
pub mod droid;
mod facts;
mod forward;
pub mod gemini;
mod line;
pub mod opencode;
mod pace;
pub mod qwen;
mod tail;
mod todo_tail;
mod todos;
mod usage;

use std::fs::File;
use std::io;
use std::path::Path;

pub use context::{COMPACTION_LOOKBACK, CONTEXT_BUDGET, ContextReading, ContextScanner};
pub use facts::{FactsBudget, Format, SessionFacts, gather_facts_as, relative_path};
pub use line::{Compaction, Usage, clip, unix_seconds};
pub use pace::tokens_per_tool_call;
pub use tail::TailReader;
pub use todo_tail::{TODO_TAIL_BUDGET, current_todos};
pub use todos::TodoItem;
#[cfg(test)]
pub use todos::TodoSource;
#[cfg(test)]
pub use usage::usage_from_bytes;
pub use usage::{SessionUsage, ToolResultSize, session_usage};

/// Opens a transcript for reading. A symlink at the path itself is refused (like every
/// file baton reads), and so is anything but a regular file: opening a FIFO must not
/// hang a hook.
pub fn open_transcript(path: &Path) -> io::Result<File> {
    crate::fsx::open_regular(path)
}

#[cfg(test)]
mod tests {
    use super::context::current_context;
    use super::*;

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
