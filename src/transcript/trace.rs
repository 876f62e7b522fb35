//! A session's course, read whole for `baton report --relay`: every tool call with what it
//! was asked to do and whether it ran, and the context figure after each reply, with their
//! times. Claude Code's transcript (and the hosts whose lines are put in its shape:
//! Factory Droid, Copilot CLI), Codex's rollout, Gemini CLI's and Qwen Code's chat
//! recordings are read; OpenCode's messages are no file (baton's plugin sends them).
//!
//! The file is read front to back, one line at a time, at most [`TRACE_BUDGET`] bytes;
//! what is kept of each call is bounded (a command clipped, a file's content hashed).

use std::collections::HashMap;
use std::io::{self, BufReader, Read};
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::facts::COMMAND_MAX;
use super::file::open_transcript;
use super::format::Format;
use super::forward::ForwardLines;
use super::line::{Entry, SHORT_TEXT_MAX, block_type, clip, parse_line, text, tool_result_text};
use crate::util::hash::fnv1a;

/// Most bytes read of one transcript.
pub const TRACE_BUDGET: u64 = 256 * 1024 * 1024;
/// Lines longer than this are passed over.
const LINE_MAX: usize = 64 * 1024 * 1024;
/// Most tool calls kept of one session; later ones are counted, not kept.
pub const CALLS_MAX: usize = 20_000;
/// Most figures kept of one session.
pub const FIGURES_MAX: usize = 20_000;
/// Cap on the paths and short descriptions kept.
const PATH_MAX: usize = 1000;

/// What a tool call was asked to do, as far as a repeat of it matters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    /// A shell command (whitespace as written; clipped).
    Shell { command: String },
    /// A whole file written, with a hash of what was written.
    WriteFile { path: String, content_hash: u64 },
    /// A file edited in place: a hash of the whole change.
    EditFile { path: String, change_hash: u64 },
    /// A patch (Codex's `apply_patch`): the files it names and a hash of it.
    Patch { files: Vec<String>, patch_hash: u64 },
    /// The todo list or plan restated.
    Plan,
    /// A tool that only reads (a file, a search, a listing).
    Read { target: String },
    /// Any other tool: a hash of its whole input.
    Other { input_hash: u64 },
}

/// Whether a call ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// It ran and succeeded.
    Ran,
    /// It ran and failed (a non-zero exit, an error result).
    Failed,
    /// It never ran: refused by a hook (baton's pause), declined, cancelled.
    NotRun,
    /// No result was recorded (the session ended during it).
    NoResult,
}

impl Outcome {
    /// It ran, whatever came of it.
    pub fn ran(self) -> bool {
        matches!(self, Outcome::Ran | Outcome::Failed)
    }
}

/// One tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TraceCall {
    /// The tool's name as the host gave it.
    pub tool: String,
    pub action: Action,
    pub at: Option<String>,
    pub outcome: Outcome,
}

/// The context after one reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TracePoint {
    pub at: Option<String>,
    pub tokens: u64,
}

/// A session's course.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Trace {
    pub format: Format,
    /// The time of the first line that has one.
    pub started_at: Option<String>,
    /// The time of the last line that has one.
    pub ended_at: Option<String>,
    pub model: Option<String>,
    /// The main conversation's tool calls, in order.
    pub calls: Vec<TraceCall>,
    /// Calls past [`CALLS_MAX`], not kept.
    pub calls_dropped: u64,
    /// The context after each main-conversation reply, in order.
    pub figures: Vec<TracePoint>,
    pub bytes_read: u64,
    /// The file was longer than [`TRACE_BUDGET`]: its end is not read.
    pub cut: bool,
}

/// Reads the trace of the transcript at `path`, written by a host of `format`.
pub fn read_trace(format: Format, path: &Path) -> io::Result<Trace> {
    let file = open_transcript(path)?;
    let limited = BufReader::new(file.take(TRACE_BUDGET));
    let mut lines = ForwardLines::new(limited, LINE_MAX);
    let builder = build(format, &mut lines, |_| false)?;
    let mut trace = builder.finish();
    trace.bytes_read = lines.bytes_read();
    trace.cut = trace.bytes_read >= TRACE_BUDGET;
    Ok(trace)
}

/// The context after the first main-conversation reply of the transcript at `path`, read
/// from its start only as far as the reply after it (a reply streamed over several lines
/// is whole by then), at most [`TRACE_BUDGET`]: the relay's look at how full a leg
/// started, without reading a long session whole.
pub fn first_figure(format: Format, path: &Path) -> io::Result<Option<u64>> {
    let file = open_transcript(path)?;
    first_figure_of(format, BufReader::new(file.take(TRACE_BUDGET)))
}

fn first_figure_of(format: Format, reader: impl std::io::BufRead) -> io::Result<Option<u64>> {
    let mut lines = ForwardLines::new(reader, LINE_MAX);
    let builder = build(format, &mut lines, |builder| builder.trace.figures.len() >= 2)?;
    Ok(builder.trace.figures.first().map(|point| point.tokens))
}

/// Feeds `lines` to a trace builder (a Claude Code file's format told by its first line)
/// until they end or `enough` says so.
fn build<R: std::io::BufRead>(
    format: Format,
    lines: &mut ForwardLines<R>,
    enough: impl Fn(&TraceBuilder) -> bool,
) -> io::Result<TraceBuilder> {
    let mut builder = TraceBuilder::new(format);
    let mut first = true;
    while let Some(line) = lines.next_line()? {
        if first {
            first = false;
            if format == Format::ClaudeCode {
                builder.format = Format::sniff(line);
            }
        }
        builder.line(line);
        if enough(&builder) {
            break;
        }
    }
    Ok(builder)
}

/// The trace of a whole transcript held in memory (pure).
#[cfg(test)]
pub fn trace_from_bytes(format: Format, bytes: &[u8]) -> Trace {
    let mut builder = TraceBuilder::new(format);
    for line in super::forward::complete_lines(bytes, true) {
        builder.line(line);
    }
    builder.finish()
}

struct TraceBuilder {
    format: Format,
    trace: Trace,
    /// Call id → index in `trace.calls`.
    pending: HashMap<String, usize>,
    /// The message id of the newest figure (a reply streamed over several lines).
    last_message: Option<String>,
}

/// Texts a result starts with (or holds) when the call never ran: baton's refusal (every
/// host that shows it), Codex's and Qwen Code's / Copilot CLI's words for a PreToolUse
/// denial, Gemini CLI 0.61.0's for a BeforeTool stop (the call's own error, seen in the
/// real-host relay), a person's refusal.
const NOT_RUN_MARKS: &[&str] = &[
    "baton refused this call",
    "Command blocked by PreToolUse hook",
    "Denied by preToolUse hook",
    "Agent execution stopped by hook",
    "The user doesn't want to",
    "[Request interrupted by user",
    "User rejected",
];

fn not_run(output: &str) -> bool {
    let head: String = output.trim_start().chars().take(400).collect();
    NOT_RUN_MARKS.iter().any(|mark| head.contains(mark))
}

fn hash_value(value: &Value) -> u64 {
    fnv1a(value.to_string().as_bytes())
}

fn hash_text(text: &str) -> u64 {
    fnv1a(text.as_bytes())
}

fn path_of(input: &Value, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| text(input.get(*k))).map(|p| clip(p, PATH_MAX))
}

/// The action of a call of `tool` with `input`, by the tool names the hosts use:
/// Claude Code's (`Bash`, `Write`, `Edit` …), Factory Droid's and Copilot CLI's in that
/// shape, Gemini CLI's (`run_shell_command`, `write_file`, `replace` …), Codex's
/// (`shell`, `exec_command`, `apply_patch`, `update_plan`).
pub fn action_of(tool: &str, input: &Value) -> Action {
    let lower = tool.to_ascii_lowercase();
    let shell = match lower.as_str() {
        "bash" | "execute" | "run_shell_command" | "shell_command" => {
            text(input.get("command")).map(str::to_string)
        }
        "exec_command" => text(input.get("cmd")).map(str::to_string),
        "shell" | "local_shell" | "container.exec" => match input.get("command") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Array(argv)) => {
                let argv: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
                Some(match argv.as_slice() {
                    [sh, flag, script]
                        if sh.contains("sh") && flag.starts_with('-') && flag.contains('c') =>
                    {
                        script.to_string()
                    }
                    _ => argv.join(" "),
                })
            }
            _ => None,
        },
        _ => None,
    };
    if let Some(command) = shell {
        return Action::Shell { command: clip(command.trim(), COMMAND_MAX) };
    }
    let file = || path_of(input, &["file_path", "path", "absolute_path", "filePath"]);
    match lower.as_str() {
        "write" | "write_file" | "create" => {
            let content = text(input.get("content")).or_else(|| text(input.get("file_text")));
            match (file(), content) {
                (Some(path), Some(content)) => Action::WriteFile { path, content_hash: hash_text(content) },
                _ => Action::Other { input_hash: hash_value(input) },
            }
        }
        "edit" | "multiedit" | "replace" | "str_replace" | "notebookedit" | "edit_file" => match file() {
            Some(path) => {
                let mut change = input.clone();
                if let Some(object) = change.as_object_mut() {
                    for key in ["file_path", "path", "absolute_path", "filePath", "description"] {
                        object.remove(key);
                    }
                }
                Action::EditFile { path, change_hash: hash_value(&change) }
            }
            None => Action::Other { input_hash: hash_value(input) },
        },
        "apply_patch" => {
            let patch = text(input.get("input")).or_else(|| text(input.get("patch"))).unwrap_or_default();
            Action::Patch { files: patch_files(patch), patch_hash: hash_text(patch) }
        }
        "todowrite" | "taskcreate" | "taskupdate" | "tasklist" | "update_plan" | "write_todos"
        | "todo_write" | "todoread" => Action::Plan,
        "read"
        | "read_file"
        | "read_many_files"
        | "view"
        | "glob"
        | "grep"
        | "ls"
        | "list_directory"
        | "search_file_content"
        | "web_fetch"
        | "webfetch"
        | "websearch"
        | "google_web_search"
        | "toolsearch"
        | "bashoutput"
        | "taskoutput"
        | "taskget"
        | "notebookread"
        | "view_image" => {
            let keys = ["file_path", "path", "absolute_path", "pattern", "url", "query", "taskId", "bash_id"];
            let target = path_of(input, &keys).unwrap_or_default();
            Action::Read { target }
        }
        _ => Action::Other { input_hash: hash_value(input) },
    }
}

/// The files a patch names (`*** Add File: p`, `*** Update File: p` …).
fn patch_files(patch: &str) -> Vec<String> {
    patch
        .lines()
        .take(100_000)
        .filter_map(|line| {
            ["*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "]
                .iter()
                .find_map(|marker| line.strip_prefix(marker))
                .map(|p| clip(p.trim(), PATH_MAX))
        })
        .take(100)
        .collect()
}

/// A function call's `arguments`: a JSON object written as a string, or the object.
fn arguments(payload: &Value) -> Value {
    match payload.get("arguments") {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
        Some(object @ Value::Object(_)) => object.clone(),
        _ => Value::Null,
    }
}

/// The exit code a shell's output states (`Exit code: N`, `Process exited with code N`,
/// `Exit Code: N`).
fn stated_exit_code(output: &str) -> Option<i64> {
    for marker in ["Process exited with code ", "Exit code: ", "Exit Code: "] {
        if let Some(at) = output.find(marker) {
            let digits: String =
                output[at + marker.len()..].chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
            if let Ok(code) = digits.parse() {
                return Some(code);
            }
        }
    }
    None
}

impl TraceBuilder {
    fn new(format: Format) -> TraceBuilder {
        TraceBuilder { format, trace: Trace::default(), pending: HashMap::new(), last_message: None }
    }

    fn line(&mut self, line: &[u8]) {
        let Some(value) = parse_line(line) else { return };
        let at = text(value.get("timestamp")).map(|t| clip(t, SHORT_TEXT_MAX));
        if let Some(at) = &at {
            if self.trace.started_at.is_none() {
                self.trace.started_at = Some(at.clone());
            }
            self.trace.ended_at = Some(at.clone());
        } else if let Some(start) = text(value.get("startTime")) {
            self.trace.started_at.get_or_insert_with(|| clip(start, SHORT_TEXT_MAX));
        }
        match self.format {
            Format::ClaudeCode | Format::OpenCodeMessages => self.claude_line(&value, at),
            Format::DroidSession => {
                if let Some(shaped) = super::droid::claude_shaped(&value) {
                    self.claude_line(&shaped, at);
                }
            }
            Format::CopilotEvents => {
                // The figure is a usage record of its own, not on the reply's line.
                if let Some(super::copilot::LineFact::Usage(usage)) = super::copilot::fact_from_line(line) {
                    self.figure(None, usage.tokens, at.clone());
                }
                if let Some(shaped) = super::copilot::claude_shaped(&value) {
                    self.claude_line(&shaped, at);
                }
            }
            Format::CodexRollout => self.codex_line(&value, at),
            Format::GeminiChat => self.gemini_line(&value, at),
            Format::QwenChat => self.qwen_line(&value, at),
        }
    }

    fn call(&mut self, id: Option<&str>, tool: &str, input: &Value, at: Option<String>) {
        let call = TraceCall {
            tool: clip(tool, SHORT_TEXT_MAX),
            action: action_of(tool, input),
            at,
            outcome: Outcome::NoResult,
        };
        if let Some(index) = id.and_then(|id| self.pending.get(id)) {
            // The same call seen again (a line rewritten): the newest wins.
            self.trace.calls[*index] = TraceCall { outcome: self.trace.calls[*index].outcome, ..call };
            return;
        }
        if self.trace.calls.len() >= CALLS_MAX {
            self.trace.calls_dropped += 1;
            return;
        }
        self.trace.calls.push(call);
        if let Some(id) = id {
            self.pending.insert(clip(id, SHORT_TEXT_MAX), self.trace.calls.len() - 1);
        }
    }

    fn result(&mut self, id: &str, failed: bool, output: &str) {
        let Some(&index) = self.pending.get(id) else { return };
        let failed = failed || stated_exit_code(output).is_some_and(|code| code != 0);
        self.trace.calls[index].outcome = if not_run(output) {
            Outcome::NotRun
        } else if failed {
            Outcome::Failed
        } else {
            Outcome::Ran
        };
    }

    fn figure(&mut self, message: Option<&str>, tokens: u64, at: Option<String>) {
        if tokens == 0 {
            return;
        }
        let point = TracePoint { at, tokens };
        if message.is_some() && message == self.last_message.as_deref() {
            if let Some(last) = self.trace.figures.last_mut() {
                *last = point;
                return;
            }
        }
        self.last_message = message.map(str::to_string);
        if self.trace.figures.len() < FIGURES_MAX {
            self.trace.figures.push(point);
        }
    }

    fn claude_line(&mut self, value: &Value, at: Option<String>) {
        let entry = Entry(value);
        if entry.is_sidechain() {
            return;
        }
        match entry.kind() {
            Some("assistant") if entry.is_main_assistant() => {
                if let Some(model) = entry.model() {
                    self.trace.model = Some(clip(model, SHORT_TEXT_MAX));
                }
                if let Some(usage) = entry.usage() {
                    self.figure(entry.message_id(), usage.context_tokens(), at.clone());
                }
                for block in entry.blocks().filter(|b| block_type(b) == Some("tool_use")) {
                    let Some(name) = text(block.get("name")) else { continue };
                    let empty = Value::Null;
                    let input = block.get("input").unwrap_or(&empty);
                    self.call(text(block.get("id")), name, input, at.clone());
                }
            }
            Some("user") => {
                for block in entry.blocks().filter(|b| block_type(b) == Some("tool_result")) {
                    let Some(id) = text(block.get("tool_use_id")) else { continue };
                    let failed = block.get("is_error").and_then(Value::as_bool) == Some(true);
                    let output = tool_result_text(block.get("content"));
                    self.result(id, failed, &output);
                }
            }
            _ => {}
        }
    }

    fn codex_line(&mut self, value: &Value, at: Option<String>) {
        let Some(payload) = value.get("payload").filter(|p| p.is_object()) else { return };
        let kind = text(payload.get("type"));
        match (text(value.get("type")), kind) {
            (Some("turn_context"), _) => {
                if let Some(model) = text(payload.get("model")) {
                    self.trace.model = Some(clip(model, SHORT_TEXT_MAX));
                }
            }
            (Some("response_item"), Some("function_call")) => {
                let Some(name) = text(payload.get("name")) else { return };
                let id = text(payload.get("call_id")).or_else(|| text(payload.get("id")));
                self.call(id, name, &arguments(payload), at);
            }
            (Some("response_item"), Some("custom_tool_call")) => {
                let Some(name) = text(payload.get("name")) else { return };
                let id = text(payload.get("call_id")).or_else(|| text(payload.get("id")));
                let input = serde_json::json!({ "input": text(payload.get("input")).unwrap_or_default() });
                self.call(id, name, &input, at);
            }
            (Some("response_item"), Some("local_shell_call")) => {
                let id = text(payload.get("call_id")).or_else(|| text(payload.get("id")));
                let action = payload.get("action").cloned().unwrap_or(Value::Null);
                self.call(id, "local_shell", &action, at);
            }
            (Some("response_item"), Some("function_call_output" | "custom_tool_call_output")) => {
                let Some(id) = text(payload.get("call_id")) else { return };
                let output = codex_output_text(payload.get("output"));
                self.result(id, false, &output);
            }
            (Some("token_usage_record"), _) => {
                let tokens = payload.pointer("/usage/input_tokens").and_then(Value::as_u64).unwrap_or(0);
                self.figure(None, tokens, at);
            }
            (Some("event_msg"), Some("token_count")) => {
                let tokens = payload
                    .pointer("/info/last_token_usage/input_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                // The same reply's usage may come as a record and as this event.
                if self.trace.figures.last().is_some_and(|p| p.tokens == tokens) {
                    return;
                }
                self.figure(None, tokens, at);
            }
            _ => {}
        }
    }

    fn gemini_line(&mut self, value: &Value, at: Option<String>) {
        if text(value.get("type")) != Some("gemini") {
            return;
        }
        if let Some(model) = text(value.get("model")) {
            self.trace.model = Some(clip(model, SHORT_TEXT_MAX));
        }
        if let Some(tokens) = value.pointer("/tokens/input").and_then(Value::as_u64) {
            self.figure(text(value.get("id")), tokens, at.clone());
        }
        for call in value.get("toolCalls").and_then(Value::as_array).into_iter().flatten() {
            let Some(name) = text(call.get("name")) else { continue };
            let id = text(call.get("id"));
            let empty = Value::Null;
            let args = call.get("args").unwrap_or(&empty);
            let call_at = text(call.get("timestamp")).map(|t| clip(t, SHORT_TEXT_MAX)).or_else(|| at.clone());
            self.call(id, name, args, call_at);
            let (Some(id), Some(status)) = (id, text(call.get("status"))) else { continue };
            let output = super::gemini::result_text(call);
            match status {
                "cancelled" => self.result(id, false, "[Request interrupted by user]"),
                "error" => self.result(id, true, &output),
                "success" => self.result(id, false, &output),
                _ => {}
            }
        }
    }

    /// Qwen Code's recording: `assistant` lines with `functionCall` parts and the prompt's
    /// size, `tool_result` lines with `functionResponse` parts and the call's status.
    fn qwen_line(&mut self, value: &Value, at: Option<String>) {
        let parts = || {
            value
                .pointer("/message/parts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|p| p.is_object())
        };
        match text(value.get("type")) {
            Some("assistant") => {
                if let Some(model) = text(value.get("model")) {
                    self.trace.model = Some(clip(model, SHORT_TEXT_MAX));
                }
                if let Some(tokens) = value.pointer("/usageMetadata/promptTokenCount").and_then(Value::as_u64)
                {
                    self.figure(text(value.get("uuid")), tokens, at.clone());
                }
                for call in parts().filter_map(|p| p.get("functionCall")) {
                    let Some(name) = text(call.get("name")) else { continue };
                    let empty = Value::Null;
                    self.call(text(call.get("id")), name, call.get("args").unwrap_or(&empty), at.clone());
                }
            }
            Some("tool_result") => {
                let status = value.pointer("/toolCallResult/status").and_then(Value::as_str);
                for response in parts().filter_map(|p| p.get("functionResponse")) {
                    let Some(id) = text(response.get("id")) else { continue };
                    let output: Vec<&str> = ["output", "error"]
                        .iter()
                        .filter_map(|key| text(response.get("response").and_then(|r| r.get(*key))))
                        .collect();
                    let output = output.join("\n");
                    match status {
                        Some("cancelled") => self.result(id, false, "[Request interrupted by user]"),
                        Some("error") => self.result(id, true, &output),
                        _ => self.result(id, false, &output),
                    }
                }
            }
            _ => {}
        }
    }

    fn finish(mut self) -> Trace {
        self.trace.format = self.format;
        self.trace
    }
}

/// The text of a Codex call's output: a string, `{content}` / `{output}`, or items.
fn codex_output_text(output: Option<&Value>) -> String {
    match output {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(o)) => codex_output_text(o.get("content").or_else(|| o.get("output"))),
        Some(Value::Array(items)) => {
            items.iter().filter_map(|i| text(i.get("text"))).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn jsonl(lines: &[Value]) -> Vec<u8> {
        lines.iter().map(|l| format!("{l}\n")).collect::<String>().into_bytes()
    }

    #[test]
    fn claude_calls_with_their_outcomes_and_the_figure_per_reply() {
        let bytes = jsonl(&[
            json!({"type": "user", "timestamp": "2026-01-01T10:00:00Z", "message": {"content": "go"}}),
            json!({"type": "assistant", "timestamp": "2026-01-01T10:00:05Z", "message": {"id": "m1", "model": "claude-x",
                "usage": {"input_tokens": 10, "cache_read_input_tokens": 990, "output_tokens": 5},
                "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "echo a >> log", "description": "one"}}]}}),
            json!({"type": "assistant", "timestamp": "2026-01-01T10:00:06Z", "message": {"id": "m1", "model": "claude-x",
                "usage": {"input_tokens": 10, "cache_read_input_tokens": 990, "output_tokens": 9},
                "content": [{"type": "tool_use", "id": "t2", "name": "Write", "input": {"file_path": "/p/a.txt", "content": "x"}}]}}),
            json!({"type": "user", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
                {"type": "tool_result", "tool_use_id": "t2", "is_error": true, "content": "baton refused this call: it did not run."}]}}),
            json!({"type": "assistant", "isSidechain": true, "message": {"id": "s", "usage": {"input_tokens": 5000},
                "content": [{"type": "tool_use", "id": "t3", "name": "Bash", "input": {"command": "ls"}}]}}),
            json!({"type": "assistant", "timestamp": "2026-01-01T10:01:00Z", "message": {"id": "m2", "model": "claude-x",
                "usage": {"input_tokens": 2000},
                "content": [{"type": "tool_use", "id": "t4", "name": "Read", "input": {"file_path": "/p/a.txt"}}]}}),
        ]);
        let trace = trace_from_bytes(Format::ClaudeCode, &bytes);
        assert_eq!(trace.started_at.as_deref(), Some("2026-01-01T10:00:00Z"));
        assert_eq!(trace.ended_at.as_deref(), Some("2026-01-01T10:01:00Z"));
        assert_eq!(trace.figures.iter().map(|p| p.tokens).collect::<Vec<_>>(), [1000, 2000], "one per reply");
        assert_eq!(trace.calls.len(), 3, "the subagent's call is not the session's");
        assert_eq!(trace.calls[0].action, Action::Shell { command: "echo a >> log".into() });
        assert_eq!(trace.calls[0].outcome, Outcome::Ran);
        assert!(matches!(&trace.calls[1].action, Action::WriteFile { path, .. } if path == "/p/a.txt"));
        assert_eq!(trace.calls[1].outcome, Outcome::NotRun);
        assert_eq!(trace.calls[2].action, Action::Read { target: "/p/a.txt".into() });
        assert_eq!(trace.calls[2].outcome, Outcome::NoResult);
        assert_eq!(trace.model.as_deref(), Some("claude-x"));
    }

    #[test]
    fn codex_calls_outputs_and_usage() {
        let bytes = jsonl(&[
            json!({"type": "session_meta", "timestamp": "2026-01-01T10:00:00Z", "payload": {"id": "x"}}),
            json!({"type": "response_item", "timestamp": "2026-01-01T10:00:01Z", "payload": {"type": "function_call",
                "name": "exec_command", "call_id": "c1", "arguments": "{\"cmd\": \"echo step-01 >> steps.log\"}"}}),
            json!({"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1",
                "output": "Process exited with code 1\nOutput:\nno"}}),
            json!({"type": "response_item", "payload": {"type": "custom_tool_call", "name": "apply_patch", "call_id": "c2",
                "input": "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch"}}),
            json!({"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c2",
                "output": "Command blocked by PreToolUse hook: baton"}}),
            json!({"type": "event_msg", "timestamp": "2026-01-01T10:00:02Z", "payload": {"type": "token_count",
                "info": {"last_token_usage": {"input_tokens": 120000}}}}),
        ]);
        let trace = trace_from_bytes(Format::CodexRollout, &bytes);
        assert_eq!(trace.calls[0].action, Action::Shell { command: "echo step-01 >> steps.log".into() });
        assert_eq!(trace.calls[0].outcome, Outcome::Failed);
        assert!(matches!(&trace.calls[1].action, Action::Patch { files, .. } if files == &["a.txt"]));
        assert_eq!(trace.calls[1].outcome, Outcome::NotRun);
        assert_eq!(trace.figures, [TracePoint { at: Some("2026-01-01T10:00:02Z".into()), tokens: 120_000 }]);
    }

    #[test]
    fn the_first_figure_is_the_first_replys_read_no_further_than_the_next() {
        let reply = |id: &str, tokens: u64| {
            json!({"type": "assistant", "message": {"id": id, "role": "assistant", "model": "m",
                "content": [{"type": "text", "text": "x"}],
                "usage": {"input_tokens": tokens, "output_tokens": 1}}})
        };
        let mut bytes = jsonl(&[reply("m1", 100_000), reply("m1", 120_000), reply("m2", 130_000)]);
        let whole = trace_from_bytes(Format::ClaudeCode, &bytes);
        let first = first_figure_of(Format::ClaudeCode, std::io::Cursor::new(&bytes)).unwrap();
        assert_eq!(first, whole.figures.first().map(|p| p.tokens));
        assert!(first.is_some());
        // What comes after the second reply is not read (here: not even valid).
        bytes.extend_from_slice(&vec![b'{'; 1024]);
        assert_eq!(first_figure_of(Format::ClaudeCode, std::io::Cursor::new(&bytes)).unwrap(), first);
        assert_eq!(first_figure_of(Format::ClaudeCode, std::io::Cursor::new(b"")).unwrap(), None);
    }

    #[test]
    fn gemini_calls_and_figures() {
        let bytes = jsonl(&[
            json!({"sessionId": "g", "projectHash": "h", "startTime": "2026-01-01T10:00:00Z", "kind": "main"}),
            json!({"id": "r1", "type": "gemini", "timestamp": "2026-01-01T10:00:03Z", "model": "gemini-2.5-flash",
                "tokens": {"input": 50000},
                "toolCalls": [
                    {"id": "g1", "name": "run_shell_command", "args": {"command": "echo step-02 >> steps.log"}, "status": "success",
                     "result": [{"functionResponse": {"response": {"output": "Output: DONE\nExit Code: 0"}}}]},
                    {"id": "g2", "name": "write_file", "args": {"file_path": "b.txt", "content": "y"}, "status": "cancelled"},
                    {"id": "g3", "name": "run_shell_command", "args": {"command": "echo step-03 >> steps.log"}, "status": "error",
                     "result": [{"functionResponse": {"response": {"error": "Agent execution stopped by hook: baton: context 93 % — paused"}}}]},
                    {"id": "g4", "name": "run_shell_command", "args": {"command": "false"}, "status": "error",
                     "result": [{"functionResponse": {"response": {"output": "Exit Code: 1"}}}]}]}),
        ]);
        let trace = trace_from_bytes(Format::GeminiChat, &bytes);
        assert_eq!(trace.started_at.as_deref(), Some("2026-01-01T10:00:00Z"));
        assert_eq!(trace.figures.len(), 1);
        assert_eq!(trace.calls[0].outcome, Outcome::Ran);
        assert_eq!(trace.calls[1].outcome, Outcome::NotRun);
        assert_eq!(trace.calls[2].outcome, Outcome::NotRun, "stopped at BeforeTool: it never ran");
        assert_eq!(trace.calls[3].outcome, Outcome::Failed);
    }

    #[test]
    fn the_same_edit_is_the_same_action_whatever_its_description() {
        let a = action_of("Edit", &json!({"file_path": "f", "old_string": "a", "new_string": "b"}));
        let b = action_of(
            "Edit",
            &json!({"file_path": "f", "old_string": "a", "new_string": "b", "description": "x"}),
        );
        let c = action_of("Edit", &json!({"file_path": "f", "old_string": "a", "new_string": "c"}));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(action_of("TodoWrite", &json!({"todos": []})), Action::Plan);
        let search = action_of("ToolSearch", &json!({"query": "select:TaskCreate", "max_results": 5}));
        assert_eq!(search, Action::Read { target: "select:TaskCreate".into() }, "it only loads tools");
        let argv = action_of("shell", &json!({"command": ["bash", "-lc", "make test"]}));
        assert_eq!(argv, Action::Shell { command: "make test".into() });
    }

    /// Captured from the real Qwen Code against the stand-in server (see
    /// tests/fixtures/real/README.md).
    #[test]
    fn qwen_codes_recording_gives_its_calls_and_figures() {
        let bytes = include_bytes!("../../tests/fixtures/real/qwen/chat-at-critical.jsonl");
        let trace = trace_from_bytes(Format::QwenChat, bytes);
        assert!(!trace.figures.is_empty(), "{trace:?}");
        assert!(
            trace.calls.iter().any(|c| matches!(c.action, Action::Shell { .. }) && c.outcome.ran()),
            "{trace:?}"
        );
        assert!(trace.started_at.is_some() && trace.model.is_some());
    }

    /// Captured from the real Copilot CLI and Factory Droid (tests/fixtures/real/README.md):
    /// their lines are read in Claude Code's shape; Copilot CLI's usage records give the
    /// figure per call, Factory Droid keeps none per reply.
    #[test]
    fn copilots_and_droids_calls_in_claude_codes_shape() {
        let copilot = trace_from_bytes(
            Format::CopilotEvents,
            include_bytes!("../../tests/fixtures/real/copilot/events-at-critical.jsonl"),
        );
        assert!(!copilot.figures.is_empty() && copilot.calls.iter().any(|c| c.outcome.ran()), "{copilot:?}");
        let droid = trace_from_bytes(
            Format::DroidSession,
            include_bytes!("../../tests/fixtures/real/droid/session-at-critical.jsonl"),
        );
        assert!(
            droid.calls.iter().any(|c| matches!(c.action, Action::Shell { .. }) && c.outcome.ran()),
            "{droid:?}"
        );
    }

    #[test]
    fn garbage_is_skipped() {
        let trace = trace_from_bytes(Format::ClaudeCode, b"not json\n{\"type\": 7}\n{\"message\": []}\n");
        assert!(trace.calls.is_empty() && trace.figures.is_empty());
    }
}
