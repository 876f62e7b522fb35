//! Facts from Gemini CLI's chat recording (the JSONL at `transcript_path`), the same
//! [`SessionFacts`] Claude Code's transcript gives: the `user` turns (the requests), the
//! `gemini` turns (the agent's words, its model) and their `toolCalls` with result and
//! status: `write_todos` (the todo list), `write_file` / `replace` (files written),
//! `run_shell_command` (commands and their exit codes).
//!
//! The first line holds the session's metadata (`sessionId`, `startTime`); a message is
//! one line (`id`, `timestamp`, `type`, `content`, `toolCalls`), written again under the
//! same id when it changes (the last one wins); `$set` lines update metadata and are
//! skipped. Fields are read leniently: a line of another shape is skipped.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

#[cfg(test)]
use std::io;
#[cfg(test)]
use std::path::Path;

use super::facts::{
    ASSISTANT_TEXT_MAX, COMMAND_MAX, CommandRun, FILES_MAX, FailedCommand, PATH_MAX, REQUEST_TEXT_MAX,
    SessionFacts, first_error_line, push_command,
};
#[cfg(test)]
use super::file::open_transcript;
use super::format::Format;
use super::line::{SHORT_TEXT_MAX, clip, parse_line, text, unix_seconds};
#[cfg(test)]
use super::tail::TailReader;
use super::todos::{self, TodoItem, TodoSource, TodoStatus};

/// How many tool calls are remembered for replacement by a later version of their line.
const CALLS_MAX: usize = 5000;

/// The facts from a chat recording's lines (no I/O): `head` is the start of the file,
/// oldest first (empty when the tail reached the start), `tail` its end, oldest first.
pub fn facts_from_lines<'a, 'b>(
    head: impl IntoIterator<Item = &'a [u8]>,
    tail: impl IntoIterator<Item = &'b [u8]>,
    tail_reached_start: bool,
) -> SessionFacts {
    let mut reader = Recording::default();
    for line in head {
        if let Some(value) = parse_line(line) {
            reader.opening_line(&value);
        }
    }
    for line in tail {
        if let Some(value) = parse_line(line) {
            if tail_reached_start {
                reader.opening_line(&value);
            }
            reader.line(&value);
        }
    }
    reader.finish(tail_reached_start, Format::GeminiChat)
}

/// The facts of a whole chat recording held in memory.
#[cfg(test)]
pub fn facts_from_bytes(bytes: &[u8]) -> SessionFacts {
    facts_from_lines(std::iter::empty(), super::forward::complete_lines(bytes, true), true)
}

/// One tool call, as its latest line shows it.
#[derive(Debug, Clone)]
pub(super) struct ToolCall {
    pub name: String,
    pub args: Value,
    /// `success`, `error`, `cancelled` …; `None` while the call has no result.
    pub status: Option<String>,
    pub output: String,
    pub at: Option<String>,
}

/// The facts of a Gemini-family recording as its messages are fed in. Gemini CLI's own
/// lines come through [`Recording::line`]; Qwen Code, a fork that writes another line
/// shape with the same tools, feeds the same steps from `super::qwen`.
#[derive(Default)]
pub(super) struct Recording {
    facts: SessionFacts,
    /// Tool calls in first-seen order; a later line with the same id replaces the entry.
    calls: Vec<ToolCall>,
    call_index: HashMap<String, usize>,
}

/// The text of a message's `content`: a string, or the `text` of its parts.
fn content_text(content: Option<&Value>) -> Option<String> {
    match content? {
        Value::String(s) => Some(s.clone()).filter(|s| !s.trim().is_empty()),
        Value::Array(parts) => {
            let parts: Vec<&str> = parts.iter().filter_map(|p| text(p.get("text"))).collect();
            (!parts.is_empty()).then(|| parts.join("\n"))
        }
        _ => None,
    }
}

/// A person's request in a `user` message: not the context a hook or the CLI put there.
fn request(value: &Value) -> Option<String> {
    if text(value.get("type")) != Some("user") {
        return None;
    }
    request_from(&content_text(value.get("content"))?)
}

/// The person's words in the text of a user message, clipped: `None` when it is only
/// what a hook or the CLI put there.
pub(super) fn request_from(said: &str) -> Option<String> {
    // A SessionStart or BeforeAgent hook's context comes first, in `<hook_context>`.
    let mut said = said.trim();
    while let Some(rest) = said.strip_prefix("<hook_context>") {
        said = rest
            .find("</hook_context>")
            .map(|end| rest[end + "</hook_context>".len()..].trim())
            .unwrap_or("");
    }
    if said.is_empty() || said.starts_with('<') {
        return None;
    }
    Some(clip(said, REQUEST_TEXT_MAX))
}

/// What a tool call returned, as text: the `functionResponse.response.output` (or
/// `.error`) of its `result` parts, else its `resultDisplay`.
pub(super) fn result_text(call: &Value) -> String {
    let mut parts = vec![];
    if let Some(results) = call.get("result").and_then(Value::as_array) {
        for result in results {
            let response = result.get("functionResponse").and_then(|r| r.get("response"));
            for key in ["output", "error"] {
                if let Some(t) = response.and_then(|r| text(r.get(key))) {
                    parts.push(t.to_string());
                }
            }
        }
    }
    if parts.is_empty() {
        if let Some(display) = text(call.get("resultDisplay")) {
            parts.push(display.to_string());
        }
    }
    parts.join("\n")
}

/// The exit code `run_shell_command` states in its output (`Exit Code: N`).
fn exit_code(output: &str) -> Option<i64> {
    let at = output.find("Exit Code: ")? + "Exit Code: ".len();
    let digits: String = output[at..].chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
    digits.parse().ok()
}

/// What the command printed (`Output: …`), without the fields around it.
fn printed(output: &str) -> &str {
    let Some(at) = output.find("Output: ") else { return output };
    let rest = &output[at + "Output: ".len()..];
    let end = ["\nError: ", "\nExit Code: ", "\nSignal: ", "\nBackground PIDs: ", "\nProcess Group PGID: "]
        .iter()
        .filter_map(|m| rest.find(m))
        .min()
        .unwrap_or(rest.len());
    rest[..end].trim_end_matches("</untrusted_context>")
}

/// `write_todos`'s `todos[]` of `{description, status}` (Qwen Code's `todo_write`:
/// `{content, status, id}`); cancelled items are dropped.
fn todo_items(args: &Value) -> Option<Vec<TodoItem>> {
    let list = args.get("todos")?.as_array()?;
    Some(
        list.iter()
            .filter_map(|todo| {
                let content = text(todo.get("description")).or_else(|| text(todo.get("content")))?;
                let status = match text(todo.get("status")).map(str::trim) {
                    Some("completed") => TodoStatus::Completed,
                    Some("in_progress") => TodoStatus::InProgress,
                    Some("cancelled") => return None,
                    _ => TodoStatus::Pending,
                };
                Some(TodoItem {
                    id: None,
                    content: clip(content.trim(), todos::TODO_TEXT_MAX),
                    status,
                    active_form: None,
                })
            })
            .take(todos::TODO_ITEMS_MAX)
            .collect(),
    )
}

impl Recording {
    fn opening_line(&mut self, value: &Value) {
        self.opening(text(value.get("startTime")).or_else(|| text(value.get("timestamp"))), request(value));
    }

    /// What the start of the file tells: when the session started, its first request.
    pub(super) fn opening(&mut self, started_at: Option<&str>, request: Option<String>) {
        if self.facts.started_at.is_none() {
            self.facts.started_at = started_at.map(|t| clip(t, SHORT_TEXT_MAX));
        }
        if self.facts.first_request.is_none() {
            self.facts.first_request = request;
        }
    }

    fn line(&mut self, value: &Value) {
        if value.get("$set").is_some() {
            return;
        }
        self.seen(text(value.get("sessionId")), text(value.get("timestamp")));
        match text(value.get("type")) {
            Some("user") => {
                if let Some(request) = request(value) {
                    self.request(request);
                }
            }
            Some("gemini") => {
                self.agent_said(text(value.get("model")), content_text(value.get("content")));
                if let Some(calls) = value.get("toolCalls").and_then(Value::as_array) {
                    for call in calls {
                        self.tool_call(call, text(value.get("timestamp")));
                    }
                }
            }
            _ => {}
        }
    }

    /// A line of the session `id`, written at `at`.
    pub(super) fn seen(&mut self, id: Option<&str>, at: Option<&str>) {
        if let Some(id) = id {
            self.facts.session_id = Some(clip(id, SHORT_TEXT_MAX));
        }
        if let Some(at) = at {
            self.facts.last_activity_at = Some(clip(at, SHORT_TEXT_MAX));
        }
    }

    /// Where the session runs: its folder and git branch, as a line says them.
    pub(super) fn place(&mut self, cwd: Option<&str>, branch: Option<&str>) {
        if let Some(cwd) = cwd {
            self.facts.cwd = Some(clip(cwd, super::facts::PATH_MAX));
        }
        if let Some(branch) = branch {
            self.facts.git_branch = Some(clip(branch, SHORT_TEXT_MAX));
        }
    }

    /// A request the person made.
    pub(super) fn request(&mut self, request: String) {
        super::facts::push_user_words(&mut self.facts.user_words, &request);
        self.facts.last_request = Some(request);
    }

    /// A reply of the agent: its model, and what it said (if it said anything).
    pub(super) fn agent_said(&mut self, model: Option<&str>, said: Option<String>) {
        if let Some(model) = model {
            self.facts.model = Some(clip(model, SHORT_TEXT_MAX));
        }
        if let Some(said) = said.filter(|s| !s.trim().is_empty()) {
            self.facts.last_assistant_text = Some(clip(said.trim(), ASSISTANT_TEXT_MAX));
        }
    }

    fn tool_call(&mut self, call: &Value, at: Option<&str>) {
        let Some(name) = text(call.get("name")) else { return };
        let entry = ToolCall {
            name: clip(name, SHORT_TEXT_MAX),
            args: call.get("args").cloned().unwrap_or(Value::Null),
            status: text(call.get("status")).map(|s| clip(s, SHORT_TEXT_MAX)),
            output: result_text(call),
            at: text(call.get("timestamp")).or(at).map(|t| clip(t, SHORT_TEXT_MAX)),
        };
        self.call(text(call.get("id")), entry);
    }

    /// A tool call the agent made; a later call under the same `id` replaces it.
    pub(super) fn call(&mut self, id: Option<&str>, entry: ToolCall) {
        match id.map(|id| clip(id, SHORT_TEXT_MAX)) {
            Some(id) => match self.call_index.get(&id) {
                Some(&index) => self.calls[index] = entry,
                None if self.calls.len() < CALLS_MAX => {
                    self.call_index.insert(id, self.calls.len());
                    self.calls.push(entry);
                }
                None => {}
            },
            None if self.calls.len() < CALLS_MAX => self.calls.push(entry),
            None => {}
        }
    }

    /// The result of the call `id`, when it came on a line of its own (Qwen Code).
    pub(super) fn call_result(&mut self, id: &str, status: Option<&str>, output: String) {
        let Some(&index) = self.call_index.get(&clip(id, SHORT_TEXT_MAX)) else { return };
        let call = &mut self.calls[index];
        call.status = status.map(|s| clip(s, SHORT_TEXT_MAX));
        call.output = output;
    }

    pub(super) fn finish(mut self, reached_start: bool, format: Format) -> SessionFacts {
        let mut files_seen = HashSet::new();
        let mut todo_items_latest = None;
        for call in &self.calls {
            let failed_status = matches!(call.status.as_deref(), Some("error"));
            match call.name.as_str() {
                "write_todos" | "todo_write" => {
                    if let Some(items) = todo_items(&call.args) {
                        let source = if call.name == "write_todos" {
                            TodoSource::WriteTodos
                        } else {
                            TodoSource::QwenTodoWrite
                        };
                        todo_items_latest = Some((source, items));
                    }
                }
                "write_file" | "replace" | "edit" => {
                    if let Some(path) =
                        text(call.args.get("file_path")).or_else(|| text(call.args.get("absolute_path")))
                    {
                        let path = clip(path, PATH_MAX);
                        if !failed_status
                            && self.facts.files_touched.len() < FILES_MAX
                            && files_seen.insert(path.clone())
                        {
                            self.facts.files_touched.push(path);
                        }
                    }
                }
                _ => {}
            }
            let command = (call.name == "run_shell_command")
                .then(|| text(call.args.get("command")).map(|c| clip(c.trim(), COMMAND_MAX)))
                .flatten();
            let code = command.as_ref().and_then(|_| exit_code(&call.output));
            let failed = failed_status || code.is_some_and(|c| c != 0);
            if let Some(command) = &command {
                push_command(
                    &mut self.facts.commands_run,
                    CommandRun { command: command.clone(), exit_code: code, failed },
                );
            }
            if failed {
                let shown = if command.is_some() { printed(&call.output) } else { call.output.as_str() };
                self.facts.last_failure = Some(FailedCommand {
                    tool: Some(call.name.clone()),
                    command: command.clone(),
                    error_line: first_error_line(shown).or_else(|| code.map(|c| format!("exit code {c}"))),
                    at: call.at.clone(),
                    succeeded_later: false,
                });
            } else if let (Some(failure), Some(command)) = (self.facts.last_failure.as_mut(), &command) {
                if failure.command.as_ref() == Some(command) && call.status.as_deref() == Some("success") {
                    failure.succeeded_later = true;
                }
            }
        }
        self.facts.todos = todo_items_latest.map(|(source, items)| todos::list_from(source, items));
        self.facts.format = format;
        self.facts.reached_start = reached_start;
        self.facts
    }
}

// The figure: the newest reply's prompt, read from the recording's end.

/// Most bytes read from the end of a chat recording.
pub const RECORDING_BUDGET: u64 = 8 * 1024 * 1024;
/// What the chat recording says about the context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordingReading {
    pub tokens: u64,
    pub model: Option<String>,
    pub written_at: Option<i64>,
}

/// The newest reply's figure from one recording line, if it has one (pure).
pub fn reading_from_line(line: &[u8]) -> Option<RecordingReading> {
    // Most lines are not replies: skip the parse where the word is not.
    memchr::memmem::find(line, b"\"gemini\"")?;
    let value = serde_json::from_slice::<Value>(line.trim_ascii()).ok()?;
    if value.get("type").and_then(Value::as_str) != Some("gemini") {
        return None;
    }
    let tokens = value.pointer("/tokens/input").and_then(Value::as_u64).filter(|t| *t > 0)?;
    let model = value.get("model").and_then(Value::as_str).map(|m| clip(m, 200));
    let written_at = value.get("timestamp").and_then(Value::as_str).and_then(unix_seconds);
    Some(RecordingReading { tokens, model, written_at })
}

/// Reads the chat recording at `path` from its end, within [`RECORDING_BUDGET`].
#[cfg(test)]
pub fn read(path: &Path) -> io::Result<Option<RecordingReading>> {
    let file = open_transcript(path)?;
    let mut tail = TailReader::new(&file, RECORDING_BUDGET)?;
    while let Some(line) = tail.next_line()? {
        if let Some(reading) = reading_from_line(&line) {
            return Ok(Some(reading));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORDING: &[u8] = include_bytes!("../../tests/fixtures/real/gemini/chat-at-AfterTool-1.jsonl");

    #[test]
    fn the_newest_reply_gives_the_figure() {
        let reading = RECORDING.split(|b| *b == b'\n').rev().find_map(reading_from_line).unwrap();
        assert_eq!(reading.tokens, 100_000);
        assert_eq!(reading.model.as_deref(), Some("gemini-2.5-flash"));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chat.jsonl");
        std::fs::write(&path, RECORDING).unwrap();
        assert_eq!(read(&path).unwrap(), Some(reading));
    }
    use crate::transcript::{FactsBudget, gather_facts_as};
    use serde_json::json;
    use std::path::Path;

    /// Captured from Gemini CLI 0.61.0 against the stand-in server (see
    /// tests/fixtures/real/README.md): cut where the CRITICAL hook ran.
    const FIXTURE: &[u8] = include_bytes!("../../tests/fixtures/real/gemini/chat-at-critical.jsonl");

    fn jsonl(lines: &[Value]) -> Vec<u8> {
        lines.iter().map(|l| format!("{l}\n")).collect::<String>().into_bytes()
    }

    #[test]
    fn real_chat_recording_facts() {
        let facts = facts_from_bytes(FIXTURE);
        assert_eq!(facts.format, Format::GeminiChat);
        assert_eq!(facts.session_id.as_deref(), Some("83ef233d-040f-4230-a508-f02904041a75"));
        assert_eq!(facts.model.as_deref(), Some("gemini-2.5-flash"));
        assert_eq!(facts.started_at.as_deref(), Some("2026-12-01T08:57:40.261Z"));
        let request = "Add the client limits file, then run the limit tests.";
        assert_eq!(facts.first_request.as_deref(), Some(request));
        assert_eq!(facts.last_request.as_deref(), Some(request));
        let todos = facts.todos.as_ref().unwrap();
        assert_eq!(todos.source, TodoSource::WriteTodos);
        let names = |items: &[TodoItem]| items.iter().map(|i| i.content.clone()).collect::<Vec<_>>();
        assert_eq!(names(&todos.completed), vec!["Write the limits file"]);
        assert_eq!(names(&todos.in_progress), vec!["Run the limit tests"]);
        assert_eq!(names(&todos.pending), vec!["Fix what the tests find"]);
        assert_eq!(facts.files_relative_to(Path::new("/home/dev/shop-api")), vec!["notes/limits.md"]);
        let failure = facts.last_failure.as_ref().unwrap();
        assert_eq!(failure.tool.as_deref(), Some("run_shell_command"));
        assert_eq!(failure.command.as_deref(), Some("ls /baton-e2e-missing-folder"));
        assert_eq!(
            failure.error_line.as_deref(),
            Some("ls: cannot access '/baton-e2e-missing-folder': No such file or directory")
        );
        assert_eq!(facts.commands_run.len(), 1);
        assert_eq!(facts.commands_run[0].exit_code, Some(2));
        assert!(facts.commands_run[0].failed);
        assert!(
            facts.last_assistant_text.as_deref().unwrap().starts_with("Progress: notes/limits.md is written")
        );
        assert!(facts.reached_start);
    }

    #[test]
    fn hook_context_is_not_the_request_and_later_lines_win() {
        let call = |status: &str, output: &str| {
            json!({"id": "m1", "type": "gemini", "content": "", "toolCalls": [{"id": "c1", "name": "run_shell_command",
                "args": {"command": "npm test"}, "status": status,
                "result": [{"functionResponse": {"response": {"output": output}}}]}]})
        };
        let bytes = jsonl(&[
            json!({"sessionId": "s", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z", "kind": "main"}),
            json!({"$set": {"messages": [{"type": "user", "content": [{"text": "<session_context>x</session_context>"}]}]}}),
            json!({"type": "user", "content": [{"text": "<hook_context>baton resume brief: …</hook_context>\n\nCarry on."}]}),
            json!({"type": "user", "content": [{"text": "<hook_context>only context</hook_context>"}]}),
            call("executing", ""),
            call("error", "Error: spawn failed"),
            json!({"type": "gemini", "toolCalls": [{"id": "c2", "name": "replace", "status": "error", "args": {"file_path": "/x"}}]}),
            json!({"type": "info", "content": "ignored"}),
        ]);
        let facts = facts_from_bytes(&bytes);
        assert_eq!(facts.first_request.as_deref(), Some("Carry on."));
        assert_eq!(facts.last_request.as_deref(), Some("Carry on."));
        assert_eq!(facts.commands_run.len(), 1);
        // The failed replace is the last failure; it wrote no file.
        assert_eq!(facts.last_failure.as_ref().unwrap().tool.as_deref(), Some("replace"));
        assert!(facts.files_touched.is_empty());
        assert_eq!(
            Format::sniff(&bytes[..bytes.iter().position(|b| *b == b'\n').unwrap()]),
            Format::GeminiChat
        );
    }

    /// A 1 GiB chat recording (sparse) with the real one at its end: read within the budget.
    #[test]
    fn a_1_gib_recording_is_read_within_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session-big.jsonl");
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(1 << 30).unwrap();
        drop(file);
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        std::io::Write::write_all(&mut file, b"\n").unwrap();
        std::io::Write::write_all(&mut file, FIXTURE).unwrap();
        drop(file);
        let budget = FactsBudget::default();
        let facts = gather_facts_as(Format::GeminiChat, &path, budget).unwrap();
        assert!(facts.bytes_read <= budget.head + budget.tail, "read {} bytes", facts.bytes_read);
        assert_eq!(facts.todos.unwrap().in_progress[0].content, "Run the limit tests");
        assert_eq!(facts.files_touched.len(), 1);
    }
}
