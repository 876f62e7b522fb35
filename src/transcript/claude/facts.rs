//! Claude Code's transcript read for a handoff's facts (and the lines other hosts put in
//! its shape: Factory Droid's, Copilot CLI's, OpenCode's messages): read from a bounded
//! head and a bounded tail, never the whole file; every fact is optional.

use std::collections::{HashMap, HashSet};
#[cfg(test)]
use std::io;
#[cfg(test)]
use std::path::Path;

use serde_json::Value;

#[cfg(test)]
use crate::transcript::facts::FactsBudget;
use crate::transcript::facts::{
    ASSISTANT_TEXT_MAX, BACKGROUND_MAX, BackgroundProcess, COMMAND_MAX, COMPACTIONS_MAX, CommandRun,
    FILES_MAX, FailedCommand, PATH_MAX, REQUEST_TEXT_MAX, SessionFacts, first_error_line, push_command,
    push_user_words,
};
#[cfg(test)]
use crate::transcript::file::BoundedRead;
#[cfg(test)]
use crate::transcript::forward::complete_lines;
use crate::transcript::line::{self, Entry, SHORT_TEXT_MAX, block_type, clip, parse_line, text};
use crate::transcript::todos::{self, TaskBoard, TodoItem};

/// Reads the facts of the transcript at `path`: the tail backwards within
/// `budget.tail`, then, unless the tail reached the start, the first `budget.head` bytes.
#[cfg(test)]
pub fn gather_facts(path: &Path, budget: FactsBudget) -> io::Result<SessionFacts> {
    let read = BoundedRead::of(path, budget)?;
    let mut facts = facts_from_lines(read.head_lines(), read.tail_lines(), read.reached_start());
    facts.bytes_read = read.bytes_read();
    Ok(facts)
}

/// The facts from lines (no I/O): `head` is the start of the file, oldest first (empty
/// when the tail reached the start), `tail` its end, oldest first.
pub fn facts_from_lines<'a, 'b>(
    head: impl IntoIterator<Item = &'a [u8]>,
    tail: impl IntoIterator<Item = &'b [u8]>,
    tail_reached_start: bool,
) -> SessionFacts {
    facts_from_values(
        head.into_iter().filter_map(parse_line),
        tail.into_iter().filter_map(parse_line),
        tail_reached_start,
    )
}

/// The facts from parsed lines in Claude Code's shape: its own transcript's, or another
/// host's lines put in that shape (Factory Droid, Copilot CLI).
pub(crate) fn facts_from_values(
    head: impl IntoIterator<Item = Value>,
    tail: impl IntoIterator<Item = Value>,
    tail_reached_start: bool,
) -> SessionFacts {
    let mut builder = FactsBuilder::default();
    for value in head {
        builder.opening_line(Entry(&value));
    }
    for value in tail {
        if tail_reached_start {
            builder.opening_line(Entry(&value));
        }
        builder.tail_line(Entry(&value));
    }
    builder.finish(tail_reached_start)
}

/// The facts of a whole transcript held in memory.
#[cfg(test)]
pub fn facts_from_bytes(bytes: &[u8]) -> SessionFacts {
    facts_from_lines(std::iter::empty(), complete_lines(bytes, true), true)
}

#[derive(Debug)]
struct ToolCall {
    name: String,
    command: Option<String>,
}

#[derive(Default)]
struct FactsBuilder {
    facts: SessionFacts,
    line_number: u64,
    tool_calls: HashMap<String, ToolCall>,
    files_seen: HashSet<String>,
    background: Vec<Option<BackgroundProcess>>,
    background_by_tool_use: HashMap<String, usize>,
    latest_todo_write: Option<(u64, Vec<TodoItem>)>,
    tasks: TaskBoard,
    last_task_call: u64,
    last_text_message_id: Option<String>,
}

impl FactsBuilder {
    /// What only the start of the file can tell.
    fn opening_line(&mut self, entry: Entry) {
        if self.facts.started_at.is_none() {
            self.facts.started_at = entry.timestamp().map(|t| clip(t, SHORT_TEXT_MAX));
        }
        if self.facts.first_request.is_none() {
            self.facts.first_request = request_text(entry);
        }
    }

    fn tail_line(&mut self, entry: Entry) {
        self.line_number += 1;
        let short = |key: &str| entry.str_field(key).map(|v| clip(v, SHORT_TEXT_MAX));
        if let Some(at) = short("timestamp") {
            self.facts.last_activity_at = Some(at);
        }
        for (key, slot) in [
            ("sessionId", &mut self.facts.session_id),
            ("cwd", &mut self.facts.cwd),
            ("gitBranch", &mut self.facts.git_branch),
        ] {
            if let Some(value) = entry.str_field(key) {
                *slot = Some(clip(value, if key == "cwd" { PATH_MAX } else { SHORT_TEXT_MAX }));
            }
        }
        if let Some(compaction) = entry.compaction() {
            if self.facts.compactions.len() < COMPACTIONS_MAX {
                self.facts.compactions.push(compaction);
            }
            return;
        }
        if entry.is_sidechain() {
            return;
        }
        match entry.kind() {
            Some("assistant") if entry.is_main_assistant() => self.assistant_line(entry),
            Some("user") => self.user_line(entry),
            _ => {}
        }
    }

    fn assistant_line(&mut self, entry: Entry) {
        if let Some(model) = entry.model() {
            self.facts.model = Some(clip(model, SHORT_TEXT_MAX));
        }
        let reply: Vec<&str> = entry
            .blocks()
            .filter(|b| block_type(b) == Some("text"))
            .filter_map(|b| text(b.get("text")))
            .collect();
        if !reply.is_empty() {
            let reply = reply.join("\n");
            let message_id = entry.message_id().map(str::to_string);
            // A reply streamed as several lines: its text blocks are one answer.
            let text = match (&self.facts.last_assistant_text, &message_id) {
                (Some(earlier), Some(id)) if self.last_text_message_id.as_ref() == Some(id) => {
                    if earlier.contains(reply.trim()) {
                        earlier.clone()
                    } else {
                        format!("{earlier}\n{reply}")
                    }
                }
                _ => reply,
            };
            self.facts.last_assistant_text = Some(clip(text.trim(), ASSISTANT_TEXT_MAX));
            self.last_text_message_id = message_id;
        }
        for block in entry.blocks().filter(|b| block_type(b) == Some("tool_use")) {
            self.tool_use(block, entry.timestamp());
        }
    }

    fn tool_use(&mut self, block: &Value, at: Option<&str>) {
        let Some(name) = text(block.get("name")) else { return };
        let tool_use_id = text(block.get("id"));
        if let Some(id) = tool_use_id {
            // A streamed reply may repeat a block on a later line.
            if self.tool_calls.contains_key(id) {
                return;
            }
        }
        let empty = Value::Null;
        let input = block.get("input").unwrap_or(&empty);
        let command = is_shell_tool(name)
            .then(|| text(input.get("command")).map(|c| clip(c.trim(), COMMAND_MAX)))
            .flatten();
        match name {
            "TodoWrite" => {
                if let Some(items) = todos::todo_write_items(input) {
                    self.latest_todo_write = Some((self.line_number, items));
                }
            }
            "TaskCreate" => {
                self.tasks.create(tool_use_id, input);
                self.last_task_call = self.line_number;
            }
            "TaskUpdate" => {
                self.tasks.update(tool_use_id, input);
                self.last_task_call = self.line_number;
            }
            "Write" | "Edit" | "MultiEdit" | "NotebookEdit" | "Create" | "create" | "edit" => {
                let path = text(input.get("file_path"))
                    .or_else(|| text(input.get("notebook_path")))
                    .or_else(|| text(input.get("path")));
                if let Some(path) = path {
                    self.touch_file(path);
                }
            }
            "Bash" if input.get("run_in_background").and_then(Value::as_bool) == Some(true) => {
                if let Some(command) = &command {
                    self.start_background(tool_use_id, command.clone(), input, at);
                }
            }
            "KillShell" | "KillBash" | "TaskStop" => {
                let shell = line::id(input.get("shell_id")).or_else(|| line::id(input.get("task_id")));
                if let Some(shell) = shell {
                    for process in self.background.iter_mut().flatten() {
                        if process.id.as_deref() == Some(shell.as_str()) {
                            process.stopped = true;
                        }
                    }
                }
            }
            _ => {}
        }
        // A shell command counts as run once it is issued: at PostToolUse time in print
        // mode its result is often not yet written (a failed result marks it later).
        if let Some(command) = command.clone() {
            push_command(
                &mut self.facts.commands_run,
                CommandRun { command, exit_code: None, failed: false },
            );
        }
        if let Some(id) = tool_use_id {
            self.tool_calls.insert(id.to_string(), ToolCall { name: clip(name, SHORT_TEXT_MAX), command });
        }
    }

    fn touch_file(&mut self, path: &str) {
        let path = clip(path.trim(), PATH_MAX);
        if self.files_seen.len() < FILES_MAX && self.files_seen.insert(path.clone()) {
            self.facts.files_touched.push(path);
        }
    }

    fn start_background(
        &mut self,
        tool_use_id: Option<&str>,
        command: String,
        input: &Value,
        at: Option<&str>,
    ) {
        if self.background.len() >= BACKGROUND_MAX {
            return;
        }
        self.background.push(Some(BackgroundProcess {
            command,
            description: text(input.get("description")).map(|d| clip(d.trim(), COMMAND_MAX)),
            id: None,
            stopped: false,
            started_at: at.map(|t| clip(t, SHORT_TEXT_MAX)),
        }));
        if let Some(id) = tool_use_id {
            self.background_by_tool_use.insert(id.to_string(), self.background.len() - 1);
        }
    }

    fn user_line(&mut self, entry: Entry) {
        if let Some(request) = request_text(entry) {
            push_user_words(&mut self.facts.user_words, &request);
            self.facts.last_request = Some(request);
            return;
        }
        let structured = entry.0.get("toolUseResult");
        for block in entry.blocks().filter(|b| block_type(b) == Some("tool_result")) {
            let Some(tool_use_id) = text(block.get("tool_use_id")) else { continue };
            let is_error = block.get("is_error").and_then(Value::as_bool) == Some(true);
            let content = line::tool_result_text(block.get("content"));
            self.tool_result(tool_use_id, is_error, &content, structured, entry.timestamp());
        }
    }

    fn tool_result(
        &mut self,
        tool_use_id: &str,
        is_error: bool,
        content: &str,
        structured: Option<&Value>,
        at: Option<&str>,
    ) {
        let call = self.tool_calls.get(tool_use_id);
        if let Some(command) =
            call.filter(|c| is_error && is_shell_tool(&c.name)).and_then(|c| c.command.as_deref())
        {
            if let Some(run) = self.facts.commands_run.iter_mut().rev().find(|r| r.command == command) {
                run.failed = true;
            }
        }
        match call.map(|c| c.name.as_str()) {
            Some("TaskCreate" | "TaskUpdate") => {
                self.tasks.result(tool_use_id, is_error, content, structured)
            }
            Some("TaskList") if !is_error => {
                if let Some(structured) = structured {
                    self.tasks.snapshot(structured);
                    if self.tasks.is_used() {
                        self.last_task_call = self.line_number;
                    }
                }
            }
            _ => {}
        }
        if let Some(&index) = self.background_by_tool_use.get(tool_use_id) {
            if is_error {
                self.background[index] = None;
            } else if let Some(process) = self.background[index].as_mut() {
                process.id = structured
                    .and_then(|r| line::id(r.get("backgroundTaskId")))
                    .or_else(|| background_id(content))
                    .map(|id| clip(&id, SHORT_TEXT_MAX));
            }
        }
        if is_error {
            if is_user_refusal(content) {
                return;
            }
            self.facts.last_failure = Some(FailedCommand {
                tool: call.map(|c| c.name.clone()),
                command: call.and_then(|c| c.command.clone()),
                error_line: first_error_line(content),
                at: at.map(|t| clip(t, SHORT_TEXT_MAX)),
                succeeded_later: false,
            });
        } else if let (Some(failure), Some(command)) =
            (self.facts.last_failure.as_mut(), call.and_then(|c| c.command.as_ref()))
        {
            if failure.command.as_ref() == Some(command) {
                failure.succeeded_later = true;
            }
        }
    }

    fn finish(mut self, reached_start: bool) -> SessionFacts {
        let from_tasks = self.tasks.is_used()
            && self.latest_todo_write.as_ref().is_none_or(|(n, _)| self.last_task_call >= *n);
        self.facts.todos = if from_tasks {
            Some(self.tasks.into_list())
        } else {
            self.latest_todo_write.map(|(_, items)| todos::todo_write_list(items))
        };
        self.facts.background_processes = self.background.into_iter().flatten().collect();
        self.facts.reached_start = reached_start;
        self.facts
    }
}

/// The shell tool by each Claude-shaped host's name: Claude Code's `Bash`, Factory
/// Droid's `Execute`, Copilot CLI's `bash`.
fn is_shell_tool(name: &str) -> bool {
    matches!(name, "Bash" | "Execute" | "bash")
}

/// Wrappers Claude Code puts in user lines that are not something the person asked.
const NOT_A_REQUEST: &[&str] = &[
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<task-notification>",
    "<system-reminder>",
    "[Request interrupted by user",
    "Caveat: The messages below were generated by the user",
];

/// The text of a user line that is a person's request, clipped.
fn request_text(entry: Entry) -> Option<String> {
    if entry.kind() != Some("user") || entry.is_sidechain() || entry.is_meta() || entry.is_compact_summary() {
        return None;
    }
    let joined;
    let text = match entry.content()? {
        Value::String(s) => s.as_str(),
        Value::Array(blocks) => {
            if blocks.iter().any(|b| block_type(b) == Some("tool_result")) {
                return None;
            }
            let parts: Vec<&str> = blocks
                .iter()
                .filter(|b| block_type(b) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .map(str::trim)
                .filter(|t| !t.is_empty() && !t.starts_with("<system-reminder>"))
                .collect();
            joined = parts.join("\n");
            joined.as_str()
        }
        _ => return None,
    };
    let text = text.trim();
    if text.is_empty() || NOT_A_REQUEST.iter().any(|prefix| text.starts_with(prefix)) {
        return None;
    }
    Some(clip(text, REQUEST_TEXT_MAX))
}

/// A tool result that only says the person declined the call.
fn is_user_refusal(content: &str) -> bool {
    let content = content.trim_start();
    content.starts_with("The user doesn't want to")
        || content.starts_with("[Request interrupted by user")
        || content.starts_with("User rejected")
}

/// The id in a background Bash result: `Command running in background with ID: bash_1`.
fn background_id(content: &str) -> Option<String> {
    let rest = &content[content.find("with ID: ")? + "with ID: ".len()..];
    let id: String =
        rest.chars().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')).collect();
    (!id.is_empty()).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::facts::ERROR_LINE_MAX;
    use crate::transcript::line::Compaction;
    use crate::transcript::todos::{TodoSource, TodoStatus};

    const FIXTURE: &[u8] = include_bytes!("../../../tests/fixtures/transcript.jsonl");

    fn jsonl(lines: &[serde_json::Value]) -> Vec<u8> {
        lines.iter().map(|l| l.to_string()).collect::<Vec<_>>().join("\n").into_bytes()
    }

    #[test]
    fn fixture_facts() {
        let facts = facts_from_bytes(FIXTURE);
        let todos = facts.todos.as_ref().unwrap();
        assert_eq!(todos.source, TodoSource::TodoWrite);
        assert_eq!(todos.completed.len(), 2);
        assert_eq!(todos.in_progress.len(), 1);
        assert_eq!(todos.in_progress[0].content, "Wire the limiter into the orders routes");
        assert_eq!(todos.pending.len(), 1);
        assert_eq!(
            facts.files_relative_to(Path::new("/home/dev/shop-api")),
            vec!["src/limiter.ts", "src/routes/orders.ts", "src/app.ts"]
        );
        assert_eq!(facts.background_processes.len(), 1);
        let background = &facts.background_processes[0];
        assert_eq!(background.command, "npm run dev");
        assert_eq!(background.id.as_deref(), Some("bash_1"));
        assert_eq!(background.description.as_deref(), Some("Start the dev server"));
        let failure = facts.last_failure.as_ref().unwrap();
        assert_eq!(failure.tool.as_deref(), Some("Bash"));
        assert_eq!(failure.command.as_deref(), Some("npm test -- limiter"));
        assert_eq!(failure.error_line.as_deref(), Some("expected 429, got 200"));
        assert!(!failure.succeeded_later);
        assert!(
            facts
                .first_request
                .as_deref()
                .unwrap()
                .starts_with("Add per-client rate limiting to the orders API")
        );
        assert!(
            facts
                .last_request
                .as_deref()
                .unwrap()
                .starts_with("Also make the limit configurable per client tier")
        );
        assert!(
            facts
                .last_assistant_text
                .as_deref()
                .unwrap()
                .starts_with("Understood: tiers free=100/min and pro=1000/min.")
        );
        assert_eq!(facts.model.as_deref(), Some("claude-opus-4-5-20251101"));
        assert_eq!(facts.started_at.as_deref(), Some("2026-11-28T10:00:01.000Z"));
        assert_eq!(facts.last_activity_at.as_deref(), Some("2026-11-28T10:00:22.000Z"));
        assert_eq!(facts.session_id.as_deref(), Some("7f3c2a10-5b1e-4c2d-9a8f-0d6e4b2c1a99"));
        assert_eq!(facts.cwd.as_deref(), Some("/home/dev/shop-api"));
        assert_eq!(
            facts.compactions,
            vec![Compaction {
                trigger: Some("auto".into()),
                pre_tokens: Some(167_400),
                post_tokens: Some(41_800),
                at: Some("2026-11-28T10:00:14.000Z".into()),
            }]
        );
        assert!(facts.reached_start);
    }

    #[test]
    fn fixture_from_a_file_with_a_small_tail_uses_the_head() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, FIXTURE).unwrap();
        let whole = gather_facts(&path, FactsBudget::default()).unwrap();
        let mut expected = facts_from_bytes(FIXTURE);
        expected.bytes_read = FIXTURE.len() as u64;
        assert_eq!(whole, expected);

        let small = gather_facts(&path, FactsBudget { head: 4096, tail: 4096 }).unwrap();
        assert!(!small.reached_start);
        assert!(small.bytes_read <= 8192);
        assert!(small.first_request.as_deref().unwrap().starts_with("Add per-client"));
        assert_eq!(small.started_at.as_deref(), Some("2026-11-28T10:00:01.000Z"));
        assert!(small.last_request.as_deref().unwrap().starts_with("Also make the limit"));
        // Only what the tail shows: the MultiEdit and the final Edit, not the early Write.
        assert_eq!(
            small.files_relative_to(Path::new("/home/dev/shop-api")),
            vec!["src/app.ts", "src/limiter.ts"]
        );
        assert_eq!(small.compactions, vec![]);
    }

    #[test]
    fn missing_and_empty_files() {
        let dir = tempfile::tempdir().unwrap();
        let missing = gather_facts(&dir.path().join("none.jsonl"), FactsBudget::default()).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        let path = dir.path().join("empty.jsonl");
        std::fs::write(&path, b"").unwrap();
        let facts = gather_facts(&path, FactsBudget::default()).unwrap();
        assert_eq!(facts, SessionFacts { reached_start: true, ..SessionFacts::default() });
    }

    #[test]
    fn garbage_is_skipped_and_nothing_panics() {
        let mut bytes =
            b"\xff\xfe\n[1]\n{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\"}]}}\n"
                .to_vec();
        bytes.extend_from_slice(br#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Write","input":{"file_path":7}},{"type":"tool_use","name":"TodoWrite","input":{"todos":[null,{"content":"x"}]}}]}}"#);
        bytes.extend_from_slice(b"\n{\"type\":\"user\",\"message\":{\"content\":\"cut off");
        let facts = facts_from_bytes(&bytes);
        assert!(facts.files_touched.is_empty());
        assert_eq!(facts.todos.unwrap().pending[0].content, "x");
        assert_eq!(facts.last_request, None);
    }

    #[test]
    fn requests_exclude_summaries_commands_and_tool_results() {
        use serde_json::json;
        let bytes = jsonl(&[
            json!({"type": "user", "isMeta": true, "message": {"content": "Caveat: meta"}}),
            json!({"type": "user", "message": {"content": "<command-name>/clear</command-name>"}}),
            json!({"type": "user", "message": {"content": [{"type": "text", "text": "<system-reminder>x</system-reminder>"}, {"type": "text", "text": "Real ask"}]}}),
            json!({"type": "user", "isCompactSummary": true, "message": {"content": "Summary"}}),
            json!({"type": "user", "isSidechain": true, "message": {"content": "Subagent prompt"}}),
            json!({"type": "user", "message": {"content": [{"type": "text", "text": "[Request interrupted by user]"}]}}),
            json!({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}}),
        ]);
        let facts = facts_from_bytes(&bytes);
        assert_eq!(facts.first_request.as_deref(), Some("Real ask"));
        assert_eq!(facts.last_request.as_deref(), Some("Real ask"));
    }

    #[test]
    fn texts_are_capped() {
        use serde_json::json;
        let huge = "é".repeat(100_000);
        let bytes = jsonl(&[
            json!({"type": "user", "message": {"content": huge}}),
            json!({"type": "assistant", "message": {"id": "m", "content": [
                {"type": "text", "text": huge},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": huge}}]}}),
            json!({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": format!("error: {huge}")}]}}),
        ]);
        let facts = facts_from_bytes(&bytes);
        assert!(facts.first_request.unwrap().len() <= REQUEST_TEXT_MAX);
        assert!(facts.last_assistant_text.unwrap().len() <= ASSISTANT_TEXT_MAX);
        let failure = facts.last_failure.unwrap();
        assert!(failure.command.unwrap().len() <= COMMAND_MAX);
        assert!(failure.error_line.unwrap().len() <= ERROR_LINE_MAX);
    }

    #[test]
    fn failures_refusals_and_later_success() {
        use serde_json::json;
        let call = |id: &str, command: &str| json!({"type": "assistant", "message": {"id": id, "content": [{"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}}]}});
        let result = |id: &str, is_error: bool, content: &str| json!({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": id, "is_error": is_error, "content": content}]}});
        let bytes = jsonl(&[
            call("a", "cargo test"),
            result("a", true, "running 3 tests\n\u{1b}[31mthread 'x' panicked at src/lib.rs:3\u{1b}[0m"),
            call("b", "rm -rf /"),
            result("b", true, "The user doesn't want to proceed with this tool use."),
            call("c", "cargo test"),
            result("c", false, "ok"),
        ]);
        let failure = facts_from_bytes(&bytes).last_failure.unwrap();
        assert_eq!(failure.command.as_deref(), Some("cargo test"));
        assert_eq!(failure.error_line.as_deref(), Some("thread 'x' panicked at src/lib.rs:3"));
        assert!(failure.succeeded_later);

        let unmatched = jsonl(&[result("zz", true, "\n\n  Exit code 2\n")]);
        let failure = facts_from_bytes(&unmatched).last_failure.unwrap();
        assert_eq!(failure.tool, None);
        assert_eq!(failure.error_line.as_deref(), Some("Exit code 2"));
    }

    #[test]
    fn background_ids_from_text_and_stopped_shells() {
        use serde_json::json;
        let bytes = jsonl(&[
            json!({"type": "assistant", "message": {"content": [
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "npm run dev", "run_in_background": true}},
                {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "bad", "run_in_background": true}}]}}),
            json!({"type": "user", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "Command running in background with ID: shell_7"}]},
                {"type": "tool_result", "tool_use_id": "t2", "is_error": true, "content": "no"}]}}),
            json!({"type": "assistant", "message": {"content": [
                {"type": "tool_use", "id": "t3", "name": "KillShell", "input": {"shell_id": "shell_7"}}]}}),
        ]);
        let facts = facts_from_bytes(&bytes);
        assert_eq!(facts.background_processes.len(), 1);
        assert_eq!(facts.background_processes[0].id.as_deref(), Some("shell_7"));
        assert!(facts.background_processes[0].stopped);
    }

    #[test]
    fn task_tools_replace_an_older_todo_write() {
        use serde_json::json;
        let bytes = jsonl(&[
            json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "w", "name": "TodoWrite", "input": {"todos": [{"content": "old", "status": "pending"}]}}]}}),
            json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "c1", "name": "TaskCreate", "input": {"subject": "Parse", "description": "d", "activeForm": "Parsing"}}]}}),
            json!({"type": "user", "toolUseResult": {"task": {"id": "1", "subject": "Parse"}}, "message": {"content": [{"type": "tool_result", "tool_use_id": "c1", "content": "Task #1 created successfully: Parse"}]}}),
            json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "u1", "name": "TaskUpdate", "input": {"taskId": "1", "status": "in_progress"}}]}}),
            json!({"type": "user", "toolUseResult": {"success": true, "taskId": "1", "updatedFields": ["status"]}, "message": {"content": [{"type": "tool_result", "tool_use_id": "u1", "content": "Updated task #1 status"}]}}),
        ]);
        let todos = facts_from_bytes(&bytes).todos.unwrap();
        assert_eq!(todos.source, TodoSource::Tasks);
        assert_eq!(todos.in_progress.len(), 1);
        assert_eq!(todos.in_progress[0].status, TodoStatus::InProgress);
        assert_eq!(todos.in_progress[0].active_form.as_deref(), Some("Parsing"));
        assert!(todos.pending.is_empty());
    }

    #[test]
    fn a_reply_streamed_over_lines_keeps_all_its_text() {
        use serde_json::json;
        let reply = |id: &str, text: &str| json!({"type": "assistant", "message": {"id": id, "content": [{"type": "text", "text": text}]}});
        let bytes =
            jsonl(&[reply("m1", "Old answer."), reply("m2", "First part."), reply("m2", "Second part.")]);
        assert_eq!(
            facts_from_bytes(&bytes).last_assistant_text.as_deref(),
            Some("First part.\nSecond part.")
        );
    }

    #[test]
    fn sidechain_work_is_not_the_sessions() {
        use serde_json::json;
        let bytes =
            jsonl(&[json!({"type": "assistant", "isSidechain": true, "message": {"model": "m", "content": [
            {"type": "text", "text": "sub"},
            {"type": "tool_use", "id": "t", "name": "Write", "input": {"file_path": "/x"}}]}})]);
        let facts = facts_from_bytes(&bytes);
        assert!(facts.files_touched.is_empty());
        assert_eq!(facts.last_assistant_text, None);
        assert_eq!(facts.model, None);
    }
}
