//! Qwen Code's chat recording (`~/.qwen/projects/<slug>/chats/<session>.jsonl`): the
//! context figure. Each reply is an `assistant` line with `usageMetadata.promptTokenCount`
//! (the whole prompt) and `model`; a `system` line of subtype `chat_compression` marks a
//! compression, with `systemPayload.info.newTokenCount`, the size after it. The figure is
//! the newest reply's prompt after the last compression, else that compression's size.
//!
//! Read from the end, within a budget; a line that does not parse is skipped.
//!
//! The handoff's facts come from the same recording ([`facts_from_lines`]). Qwen Code is a
//! fork of Gemini CLI with the same tools (`run_shell_command`, `write_file`, `edit`, and
//! `todo_write` for its todo list) but Claude-like lines: `user` (the request in the
//! first text part; a hook's context follows in later parts), `assistant` (text parts and
//! `functionCall` parts) and `tool_result` (`functionResponse` parts, with
//! `toolCallResult.status`). They feed the Gemini CLI reader's steps.

#[cfg(test)]
use std::io;
#[cfg(test)]
use std::path::Path;

use serde_json::Value;

#[cfg(test)]
use super::file::open_transcript;
use super::gemini::{self, Recording, ToolCall};
use super::line::{SHORT_TEXT_MAX, text};
use super::line::{clip, unix_seconds};
#[cfg(test)]
use super::tail::TailReader;

/// Most bytes read from the end of a recording.
pub const RECORDING_BUDGET: u64 = 8 * 1024 * 1024;

/// What the recording says about the context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QwenReading {
    pub tokens: u64,
    pub model: Option<String>,
    pub written_at: Option<i64>,
    /// The figure is a compression's size, not a reply's.
    pub after_compression: bool,
}

/// The figure one line gives, if any (pure): a reply's prompt tokens, or a compression's
/// new size.
pub fn reading_from_line(line: &[u8]) -> Option<QwenReading> {
    let reply = memchr::memmem::find(line, b"promptTokenCount").is_some();
    let compression = memchr::memmem::find(line, b"chat_compression").is_some();
    if !reply && !compression {
        return None;
    }
    let value = serde_json::from_slice::<Value>(line.trim_ascii()).ok()?;
    let written_at = value.get("timestamp").and_then(Value::as_str).and_then(unix_seconds);
    match value.get("type").and_then(Value::as_str) {
        Some("assistant") => {
            let tokens = value
                .pointer("/usageMetadata/promptTokenCount")
                .and_then(Value::as_u64)
                .filter(|t| *t > 0)?;
            let model = value.get("model").and_then(Value::as_str).map(|m| clip(m, 200));
            Some(QwenReading { tokens, model, written_at, after_compression: false })
        }
        Some("system") if value.get("subtype").and_then(Value::as_str) == Some("chat_compression") => {
            let tokens = value.pointer("/systemPayload/info/newTokenCount").and_then(Value::as_u64)?;
            Some(QwenReading { tokens, model: None, written_at, after_compression: true })
        }
        _ => None,
    }
}

/// Reads the recording at `path` from its end, within [`RECORDING_BUDGET`].
#[cfg(test)]
pub fn read(path: &Path) -> io::Result<Option<QwenReading>> {
    let file = open_transcript(path)?;
    let mut tail = TailReader::new(&file, RECORDING_BUDGET)?;
    while let Some(line) = tail.next_line()? {
        if let Some(reading) = reading_from_line(&line) {
            return Ok(Some(reading));
        }
    }
    Ok(None)
}

/// The facts from a recording's lines (no I/O): `head` is the start of the file, oldest
/// first (empty when the tail reached the start), `tail` its end, oldest first.
pub fn facts_from_lines<'a, 'b>(
    head: impl IntoIterator<Item = &'a [u8]>,
    tail: impl IntoIterator<Item = &'b [u8]>,
    tail_reached_start: bool,
) -> super::facts::SessionFacts {
    let mut recording = Recording::default();
    for line in head {
        if let Some(value) = super::line::parse_line(line) {
            opening_line(&mut recording, &value);
        }
    }
    for line in tail {
        if let Some(value) = super::line::parse_line(line) {
            if tail_reached_start {
                opening_line(&mut recording, &value);
            }
            fact_line(&mut recording, &value);
        }
    }
    recording.finish(tail_reached_start, super::format::Format::QwenChat)
}

/// The parts of a line's message that are objects.
fn parts(value: &Value) -> impl Iterator<Item = &Value> {
    value.pointer("/message/parts").and_then(Value::as_array).into_iter().flatten().filter(|p| p.is_object())
}

/// The person's words in a `user` line: its first text part.
fn request(value: &Value) -> Option<String> {
    if value.get("type").and_then(Value::as_str) != Some("user") {
        return None;
    }
    let first = parts(value).find_map(|p| text(p.get("text")))?;
    gemini::request_from(first)
}

fn opening_line(recording: &mut Recording, value: &Value) {
    recording.opening(text(value.get("timestamp")), request(value));
}

fn fact_line(recording: &mut Recording, value: &Value) {
    recording.seen(text(value.get("sessionId")), text(value.get("timestamp")));
    recording.place(text(value.get("cwd")), text(value.get("gitBranch")));
    let at = text(value.get("timestamp"));
    match value.get("type").and_then(Value::as_str) {
        Some("user") => {
            if let Some(request) = request(value) {
                recording.request(request);
            }
        }
        Some("assistant") => {
            let said: Vec<&str> = parts(value)
                .filter(|p| p.get("thought").and_then(Value::as_bool) != Some(true))
                .filter_map(|p| text(p.get("text")))
                .collect();
            recording.agent_said(text(value.get("model")), (!said.is_empty()).then(|| said.join("\n")));
            for call in parts(value).filter_map(|p| p.get("functionCall")) {
                let Some(name) = text(call.get("name")) else { continue };
                let entry = ToolCall {
                    name: clip(name, SHORT_TEXT_MAX),
                    args: call.get("args").cloned().unwrap_or(Value::Null),
                    status: None,
                    output: String::new(),
                    at: at.map(|t| clip(t, SHORT_TEXT_MAX)),
                };
                recording.call(text(call.get("id")), entry);
            }
        }
        Some("tool_result") => {
            let status = value.pointer("/toolCallResult/status").and_then(Value::as_str);
            for response in parts(value).filter_map(|p| p.get("functionResponse")) {
                let Some(id) = text(response.get("id")) else { continue };
                let output: Vec<&str> = ["output", "error"]
                    .iter()
                    .filter_map(|key| text(response.get("response").and_then(|r| r.get(*key))))
                    .collect();
                recording.call_result(id, status, output.join("\n"));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Format;

    /// Captured from the real CLI against the stand-in server by the facts session in
    /// tests/real_hosts/handoff_facts.rs (see tests/fixtures/real/README.md), cut where the
    /// CRITICAL hook ran.
    const AT_CRITICAL: &[u8] = include_bytes!("../../tests/fixtures/real/qwen/chat-at-critical.jsonl");

    #[test]
    fn facts_at_critical() {
        for facts in crate::transcript::testing::check_facts_session_at_critical(
            Format::QwenChat,
            AT_CRITICAL,
            "qwen3-coder-plus",
        ) {
            let todos = facts.todos.as_ref().unwrap();
            assert_eq!(todos.source, crate::transcript::TodoSource::QwenTodoWrite);
            let names = |items: &[crate::transcript::TodoItem]| {
                items.iter().map(|i| i.content.clone()).collect::<Vec<_>>()
            };
            assert_eq!(names(&todos.completed), vec!["Write the limits file"]);
            assert_eq!(names(&todos.in_progress), vec!["Run the limit tests"]);
            assert_eq!(names(&todos.pending), vec!["Fix what the tests find"]);
        }
    }

    const RECORDING: &[u8] = include_bytes!("../../tests/fixtures/real/qwen/transcript-with-compress.jsonl");

    #[test]
    fn the_newest_reply_or_compression_gives_the_figure() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chat.jsonl");
        std::fs::write(&path, RECORDING).unwrap();
        // The recording ends with a /compress: its new size is the figure.
        let reading = read(&path).unwrap().unwrap();
        assert_eq!(reading.tokens, 9_949);
        assert!(reading.after_compression);
        // Before it, the last reply's prompt.
        let cut = memchr::memmem::find(RECORDING, b"\"subtype\":\"chat_compression\"").unwrap();
        let start = RECORDING[..cut].iter().rposition(|b| *b == b'\n').unwrap();
        std::fs::write(&path, &RECORDING[..=start]).unwrap();
        let reading = read(&path).unwrap().unwrap();
        assert_eq!(reading.tokens, 10_024);
        assert_eq!(reading.model.as_deref(), Some("qwen3-coder-plus"));
        assert!(!reading.after_compression);
    }

    #[test]
    fn other_lines_give_nothing() {
        assert_eq!(
            reading_from_line(br#"{"type":"user","message":{"parts":[{"text":"promptTokenCount"}]}}"#),
            None
        );
        assert_eq!(reading_from_line(b"not json promptTokenCount"), None);
        let zero = br#"{"type":"assistant","usageMetadata":{"promptTokenCount":0}}"#;
        assert_eq!(reading_from_line(zero), None);
    }
}
