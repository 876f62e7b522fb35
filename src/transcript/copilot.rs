//! GitHub Copilot CLI's event log (`~/.copilot/session-state/<session>/events.jsonl`): the
//! context figure. Each model call of the agent writes a `session.usage_record` line with
//! `data.usage.inputTokens` (the prompt), `maxPromptTokens` (the model's prompt window as
//! Copilot CLI sees it) and `model`; a `session.compaction_complete` with `success: true`
//! marks a finished compaction, after which no call's figure is known until the next one.
//!
//! The log is flushed after the hook starts: at a PostToolUse, the call's own
//! `session.usage_record` is often not on disk yet (1.0.102). A reading is `current` when
//! no finished call (`tool.execution_complete`, `assistant.turn_end`) follows the newest
//! record, i.e. the record is the one of the call in flight.
//!
//! Read from the end, within a budget; a line that does not parse is skipped.
//!
//! The handoff's facts come from the same log: [`claude_shaped`] puts its events in
//! Claude Code's line shape for the one facts reader (`user.message` is the request,
//! `assistant.message` the agent's words and its `toolRequests`, and
//! `tool.execution_complete` a call's result, failed when `success` is false or the
//! shell's `exitCode` is not 0). Copilot CLI's tools: `bash`, `create` and `edit`.

#[cfg(test)]
use std::io;
#[cfg(test)]
use std::path::Path;

use serde_json::{Value, json};

#[cfg(test)]
use super::file::open_transcript;
use super::line::{clip, unix_seconds};
#[cfg(test)]
use super::tail::TailReader;

/// An event in Claude Code's line shape (pure), or `None` for an event the facts do not
/// use.
pub fn claude_shaped(value: &Value) -> Option<Value> {
    let data = value.get("data")?;
    let at = value.get("timestamp");
    match value.get("type")?.as_str()? {
        "session.start" => Some(json!({
            "type": "session_start",
            "timestamp": data.get("startTime").or(at),
            "sessionId": data.get("sessionId"),
            "cwd": data.pointer("/context/cwd"),
            "gitBranch": data.pointer("/context/branch"),
        })),
        "user.message" => Some(json!({
            "type": "user",
            "timestamp": at,
            "message": {"role": "user", "content": data.get("content")},
        })),
        "assistant.message" => {
            let mut blocks = vec![];
            if let Some(said) = data.get("content").filter(|c| c.is_string()) {
                blocks.push(json!({"type": "text", "text": said}));
            }
            for request in data.get("toolRequests").and_then(Value::as_array).into_iter().flatten() {
                blocks.push(json!({
                    "type": "tool_use",
                    "id": request.get("toolCallId"),
                    "name": request.get("name"),
                    "input": request.get("arguments"),
                }));
            }
            Some(json!({
                "type": "assistant",
                "timestamp": at,
                "message": {"id": data.get("messageId"), "role": "assistant", "model": data.get("model"), "content": blocks},
            }))
        }
        "tool.execution_complete" => {
            let exit_code = data.pointer("/shellExecution/exitCode").and_then(Value::as_i64);
            let succeeded = data.get("success").and_then(Value::as_bool) != Some(false);
            let output = data
                .pointer("/result/content")
                .or_else(|| data.pointer("/error/message"))
                .cloned()
                .unwrap_or(Value::Null);
            Some(json!({
                "type": "user",
                "timestamp": at,
                "message": {"role": "user", "content": [{
                    "type": "tool_result",
                    "tool_use_id": data.get("toolCallId"),
                    "is_error": !succeeded || exit_code.is_some_and(|c| c != 0),
                    "content": output,
                }]},
            }))
        }
        "session.compaction_complete" if data.get("success").and_then(Value::as_bool) == Some(true) => {
            Some(json!({
                "type": "system",
                "subtype": "compact_boundary",
                "timestamp": at,
                "compactMetadata": {"trigger": data.get("trigger"), "preTokens": data.pointer("/compactionTokensUsed/inputTokens")},
            }))
        }
        _ => None,
    }
}

/// Most bytes of a session's event log read from its end.
pub const EVENTS_BUDGET: u64 = 8 * 1024 * 1024;

/// What the event log says about the context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopilotReading {
    pub tokens: u64,
    /// `maxPromptTokens`: the window Copilot CLI works with for the model.
    pub window: Option<u64>,
    pub model: Option<String>,
    pub written_at: Option<i64>,
    /// No finished call follows the record: it is the newest call's.
    pub current: bool,
}

/// What one line says (pure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineFact {
    Usage(CopilotReading),
    Compacted,
    /// A call or a turn ended (`tool.execution_complete`, `assistant.turn_end`).
    Finished,
}

/// The fact one line gives, if any (pure).
pub fn fact_from_line(line: &[u8]) -> Option<LineFact> {
    // Copilot CLI writes `type` first; these lines are not parsed (a tool's whole output).
    if line.starts_with(br#"{"type":"tool.execution_complete""#)
        || line.starts_with(br#"{"type":"assistant.turn_end""#)
    {
        return Some(LineFact::Finished);
    }
    let usage = memchr::memmem::find(line, b"session.usage_record").is_some();
    let compaction = memchr::memmem::find(line, b"session.compaction_complete").is_some();
    if !usage && !compaction {
        return None;
    }
    let value = serde_json::from_slice::<Value>(line.trim_ascii()).ok()?;
    match value.get("type").and_then(Value::as_str) {
        Some("session.usage_record") => {
            let usage = value.pointer("/data/usage")?;
            // Side calls (a title, a compaction summary) are not the agent's conversation.
            let kind = usage.get("interactionType").and_then(Value::as_str);
            if kind.is_some_and(|k| k != "conversation-agent") {
                return None;
            }
            let tokens = usage.get("inputTokens").and_then(Value::as_u64).filter(|t| *t > 0)?;
            let window = usage.get("maxPromptTokens").and_then(Value::as_u64).filter(|w| *w > 0);
            let model = usage.get("model").and_then(Value::as_str).map(|m| clip(m, 200));
            let written_at = value.get("timestamp").and_then(Value::as_str).and_then(unix_seconds);
            Some(LineFact::Usage(CopilotReading { tokens, window, model, written_at, current: true }))
        }
        Some("session.compaction_complete") => (value.pointer("/data/success").and_then(Value::as_bool)
            == Some(true))
        .then_some(LineFact::Compacted),
        _ => None,
    }
}

/// Reads the event log at `path` from its end, within `budget`: the newest call's figure,
/// or `None` when a compaction finished after it.
#[cfg(test)]
pub fn read(path: &Path, budget: u64) -> io::Result<Option<CopilotReading>> {
    let file = open_transcript(path)?;
    let mut tail = TailReader::new(&file, budget)?;
    let mut finished = false;
    while let Some(line) = tail.next_line()? {
        match fact_from_line(&line) {
            Some(LineFact::Usage(reading)) => {
                return Ok(Some(CopilotReading { current: !finished, ..reading }));
            }
            Some(LineFact::Compacted) => return Ok(None),
            Some(LineFact::Finished) => finished = true,
            None => {}
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Format;

    /// Captured from the real CLI against the stand-in server by the facts session in
    /// tests/real_hosts/handoff_facts.rs (see tests/fixtures/real/README.md), cut where the
    /// CRITICAL hook ran.
    const AT_CRITICAL: &[u8] = include_bytes!("../../tests/fixtures/real/copilot/events-at-critical.jsonl");

    #[test]
    fn facts_at_critical() {
        for facts in crate::transcript::testing::check_facts_session_at_critical(
            Format::CopilotEvents,
            AT_CRITICAL,
            "claude-sonnet-4.5",
        ) {
            assert!(facts.todos.is_none());
        }
    }

    const LOG: &[u8] = include_bytes!("../../tests/fixtures/real/copilot/events.jsonl");

    #[test]
    fn the_newest_usage_record_gives_the_figure() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        std::fs::write(&path, LOG).unwrap();
        let reading = read(&path, 1 << 20).unwrap().unwrap();
        assert_eq!(reading.tokens, 121_000);
        assert_eq!(reading.window, Some(168_000));
        assert_eq!(reading.model.as_deref(), Some("claude-sonnet-4.5"));
        assert!(reading.written_at.is_some());
        // The session ended: its last call finished after the record.
        assert!(!reading.current);
        let cut = memchr::memmem::find(LOG, b"\"inputTokens\":121000").unwrap();
        let end = cut + LOG[cut..].iter().position(|b| *b == b'\n').unwrap();
        std::fs::write(&path, &LOG[..=end]).unwrap();
        assert!(read(&path, 1 << 20).unwrap().unwrap().current);
    }

    #[test]
    fn other_lines_and_compactions() {
        assert_eq!(
            fact_from_line(br#"{"type":"user.message","data":{"content":"session.usage_record"}}"#),
            None
        );
        assert_eq!(fact_from_line(b"not json session.usage_record"), None);
        let done = br#"{"type":"session.compaction_complete","data":{"success":true}}"#;
        assert_eq!(fact_from_line(done), Some(LineFact::Compacted));
        let cancelled = br#"{"type":"session.compaction_complete","data":{"success":false}}"#;
        assert_eq!(fact_from_line(cancelled), None);
        let side = br#"{"type":"session.usage_record","data":{"usage":{"inputTokens":5,"interactionType":"title"}}}"#;
        assert_eq!(fact_from_line(side), None);
    }
}
