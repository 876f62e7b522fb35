//! The agent's todo list as of now, for the status line: a small read from the end of the
//! transcript that stops at the latest main-chain `TodoWrite` (which carries the whole
//! list). The statusline runs after every reply, so this must cost the same on a 200 MB
//! transcript as on a small one: it reads at most its budget, and only lines that can
//! matter (found by a plain byte search, no JSON parse) are parsed.

use std::io;
use std::path::Path;

use memchr::memmem;

use super::facts::facts_from_lines;
use crate::transcript::file::open_transcript;
use crate::transcript::line::{Entry, block_type, parse_line, text};
use crate::transcript::tail::{TailReader, TailStats};
use crate::transcript::todos::TodoList;

/// How much of the end of the transcript [`current_todos`] reads at most.
pub const TODO_TAIL_BUDGET: u64 = 1024 * 1024;

/// What [`current_todos`] found, and what it read to find it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TodoTail {
    pub todos: Option<TodoList>,
    pub stats: TailStats,
}

impl TodoTail {
    /// The first item in progress: its "-ing" form when it has one, else its text.
    pub fn in_progress(&self) -> Option<&str> {
        let item = self.todos.as_ref()?.in_progress.first()?;
        Some(item.active_form.as_deref().unwrap_or(&item.content))
    }
}

/// Byte patterns of the lines that can change the list: todo and task tool calls, and
/// the results that give new tasks their ids or list them.
struct Needles {
    todo_write: memmem::Finder<'static>,
    task: memmem::Finder<'static>,
    tasks: memmem::Finder<'static>,
}

impl Needles {
    fn new() -> Needles {
        Needles {
            todo_write: memmem::Finder::new(b"TodoWrite"),
            task: memmem::Finder::new(b"Task"),
            tasks: memmem::Finder::new(b"\"tasks\""),
        }
    }
}

/// The todo list from the last `budget` bytes of the transcript at `path`.
pub fn current_todos(path: &Path, budget: u64) -> io::Result<TodoTail> {
    let file = open_transcript(path)?;
    let mut tail = TailReader::new(&file, budget)?;
    let needles = Needles::new();
    let mut kept: Vec<Vec<u8>> = Vec::new();
    let mut task_tools_later = false;
    while let Some(line) = tail.next_line()? {
        if needles.todo_write.find(&line).is_some() {
            // The latest TodoWrite holds the whole list: nothing older matters, unless
            // the task tools were used after it (they then win, and need their history).
            let stop = !task_tools_later && is_main_todo_write(&line);
            kept.push(line);
            if stop {
                break;
            }
        } else if needles.task.find(&line).is_some() || needles.tasks.find(&line).is_some() {
            task_tools_later = true;
            kept.push(line);
        }
    }
    kept.reverse();
    let facts = facts_from_lines(std::iter::empty(), kept.iter().map(Vec::as_slice), false);
    Ok(TodoTail { todos: facts.todos, stats: tail.stats() })
}

/// A main-chain reply that calls TodoWrite with a list.
fn is_main_todo_write(line: &[u8]) -> bool {
    let Some(value) = parse_line(line) else { return false };
    let entry = Entry(&value);
    entry.is_main_assistant()
        && entry.blocks().any(|b| {
            block_type(b) == Some("tool_use")
                && text(b.get("name")) == Some("TodoWrite")
                && b.get("input").and_then(|i| i.get("todos")).is_some_and(|t| t.is_array())
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::io::Write;

    const FIXTURE: &[u8] = include_bytes!("../../../tests/fixtures/transcript.jsonl");

    fn write(bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, bytes).unwrap();
        (dir, path)
    }

    #[test]
    fn fixture_task_in_progress() {
        let (_dir, path) = write(FIXTURE);
        let tail = current_todos(&path, TODO_TAIL_BUDGET).unwrap();
        let todos = tail.todos.as_ref().unwrap();
        assert_eq!((todos.completed.len(), todos.in_progress.len(), todos.pending.len()), (2, 1, 1));
        assert_eq!(todos.in_progress[0].content, "Wire the limiter into the orders routes");
        assert!(tail.in_progress().is_some());
        // It stopped at the latest TodoWrite, before reaching the start.
        assert!(!tail.stats.reached_start);
    }

    #[test]
    fn a_sidechain_todo_write_does_not_stop_the_search() {
        let main = json!({"type": "assistant", "message": {"id": "m1", "model": "m", "content": [
            {"type": "tool_use", "id": "t1", "name": "TodoWrite", "input": {"todos": [
                {"content": "Main work", "status": "in_progress", "activeForm": "Doing main work"}]}}]}});
        let side = json!({"type": "assistant", "isSidechain": true, "message": {"id": "m2", "model": "m", "content": [
            {"type": "tool_use", "id": "t2", "name": "TodoWrite", "input": {"todos": [
                {"content": "Side work", "status": "in_progress"}]}}]}});
        let text = format!("{main}\n{side}\n");
        let (_dir, path) = write(text.as_bytes());
        let tail = current_todos(&path, TODO_TAIL_BUDGET).unwrap();
        assert_eq!(tail.in_progress(), Some("Doing main work"));
    }

    #[test]
    fn task_tools_after_a_todo_write_win() {
        let lines = [
            json!({"type": "assistant", "message": {"id": "m1", "content": [
                {"type": "tool_use", "id": "t1", "name": "TodoWrite", "input": {"todos": [
                    {"content": "Old", "status": "in_progress"}]}}]}}),
            json!({"type": "assistant", "message": {"id": "m2", "content": [
                {"type": "tool_use", "id": "c1", "name": "TaskCreate", "input": {"subject": "Parse", "activeForm": "Parsing"}}]}}),
            json!({"type": "user", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "Task #1 created successfully: Parse"}]}}),
            json!({"type": "assistant", "message": {"id": "m3", "content": [
                {"type": "tool_use", "id": "u1", "name": "TaskUpdate", "input": {"taskId": "1", "status": "in_progress"}}]}}),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let (_dir, path) = write(text.as_bytes());
        assert_eq!(current_todos(&path, TODO_TAIL_BUDGET).unwrap().in_progress(), Some("Parsing"));
    }

    #[test]
    fn the_read_stays_within_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl");
        let mut file = std::fs::File::create(&path).unwrap();
        let filler = json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "x", "content": "y".repeat(4000)}]}})
        .to_string();
        for _ in 0..2_000 {
            writeln!(file, "{filler}").unwrap();
        }
        drop(file);
        let tail = current_todos(&path, 64 * 1024).unwrap();
        assert!(tail.todos.is_none());
        assert!(tail.stats.bytes_read <= 64 * 1024);
        assert!(current_todos(&dir.path().join("missing.jsonl"), 1024).is_err());
    }

    /// A 200 MB transcript whose latest todo is near the end, and one with no todo at
    /// all (the worst case: the whole budget is read). Run with
    /// `cargo test --release --lib -- --ignored todo_tail_timing --nocapture`.
    #[test]
    #[ignore]
    fn todo_tail_timing_200mb() {
        let dir = tempfile::tempdir().unwrap();
        let reply = |i: usize| {
            json!({"type": "assistant", "message": {"id": format!("m{i}"), "model": "claude-opus-4-5-20251101",
                "content": [{"type": "tool_use", "id": format!("t{i}"), "name": "Read", "input": {"file_path": "/src/a.rs"}}],
                "usage": {"input_tokens": 1, "cache_read_input_tokens": 100000, "output_tokens": 10}}})
            .to_string()
        };
        let result = json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t", "content": "fn main() {}\n".repeat(300)}]}})
        .to_string();
        let todo = json!({"type": "assistant", "message": {"id": "todo", "content": [
            {"type": "tool_use", "id": "tw", "name": "TodoWrite", "input": {"todos": [
                {"content": "Ship it", "status": "in_progress", "activeForm": "Shipping it"}]}}]}})
        .to_string();
        for (name, with_todo) in [("with-todo.jsonl", true), ("no-todo.jsonl", false)] {
            let path = dir.path().join(name);
            let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
            let mut written = 0usize;
            let mut i = 0;
            while written < 200 * 1024 * 1024 {
                let a = reply(i);
                writeln!(file, "{a}\n{result}").unwrap();
                written += a.len() + result.len() + 2;
                i += 1;
            }
            if with_todo {
                writeln!(file, "{todo}").unwrap();
                for j in 0..20 {
                    writeln!(file, "{}\n{result}", reply(i + j)).unwrap();
                }
            }
            drop(file);
            let mut times = Vec::new();
            for _ in 0..20 {
                let start = std::time::Instant::now();
                let tail = current_todos(&path, TODO_TAIL_BUDGET).unwrap();
                times.push(start.elapsed());
                assert_eq!(tail.in_progress().is_some(), with_todo);
            }
            times.sort();
            let size = std::fs::metadata(&path).unwrap().len();
            println!(
                "{name}: {} MB, min {:?}, median {:?}, max {:?}",
                size / 1_000_000,
                times[0],
                times[10],
                times[19]
            );
        }
    }
}
