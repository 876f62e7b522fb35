//! Claude Code's transcript (JSONL, one line per message; a subagent's in its own
//! sidechain file beside the session's), the format the richest readers are written for:
//!
//! - `context`: the context size now, from the end of the file, for the monitor when no
//!   statusline bridge is there. Bounded: its cost does not grow with the file.
//! - `facts`: todos, files touched, background processes, the last failure, the first and
//!   last requests … for the automatic handoff, from a bounded head and tail; Factory
//!   Droid's, Copilot CLI's and OpenCode's lines are read by it once put in its shape.
//! - `usage`: exact token use of the whole session, for `baton report` (streams the file).
//! - `pace`: tokens per tool call, for the headroom in tool calls.
//! - `todo_tail`: the todo list as of now, for the status line: a small tail read that
//!   stops at the latest `TodoWrite`.

pub mod context;
pub mod facts;
pub mod figure;
pub mod pace;
pub mod todo_tail;
pub mod usage;
