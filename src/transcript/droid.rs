//! Factory Droid's figure: its transcript (`~/.factory/sessions/<slug>/<session>.jsonl`)
//! holds no usage; the sidecar beside it, `<session>.settings.json`, does:
//! `lastCallTokenUsage{inputTokens, outputTokens, cacheReadTokens}` is the last model
//! call's, and its prompt (input and cache reads) is the context figure; `model` names the
//! model (`custom:<name>-<index>` for a custom one). The sidecar is small and rewritten
//! whole; it is read within a limit.
//!
//! The handoff's facts come from the transcript itself, whose `message` lines carry
//! Claude Code's content blocks (`text`, `tool_use`, `tool_result` with `is_error`)
//! under another envelope: [`claude_shaped`] puts each line in Claude Code's shape for
//! the one facts reader. Droid's tools: `Execute` (the shell), `Create` and `Edit`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::line::clip;

const SIDECAR_LIMIT: u64 = 1024 * 1024;

/// What the sidecar says about the context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroidReading {
    pub tokens: u64,
    pub model: Option<String>,
    /// When the sidecar was written (Unix seconds).
    pub written_at: Option<i64>,
}

/// A transcript line in Claude Code's shape (pure): a `message` line becomes a `user` or
/// `assistant` line (the line's `id` as the message id, `modelId` as the model); the
/// `session_start` line gives the session id and folder; anything else is `None`.
pub fn claude_shaped(value: &Value) -> Option<Value> {
    match value.get("type")?.as_str()? {
        "session_start" => Some(json!({
            "type": "session_start",
            "sessionId": value.get("id"),
            "cwd": value.get("cwd"),
        })),
        "message" => {
            let message = value.get("message")?;
            let role = message.get("role")?.as_str()?;
            if role != "user" && role != "assistant" {
                return None;
            }
            Some(json!({
                "type": role,
                "timestamp": value.get("timestamp"),
                "message": {
                    "id": value.get("id"),
                    "role": role,
                    "model": message.get("modelId"),
                    "content": message.get("content"),
                },
            }))
        }
        _ => None,
    }
}

/// The sidecar of a transcript: `<session>.jsonl` → `<session>.settings.json`.
pub fn sidecar_path(transcript: &Path) -> Option<PathBuf> {
    let name = transcript.file_name()?.to_str()?;
    let stem = name.strip_suffix(".jsonl")?;
    Some(transcript.with_file_name(format!("{stem}.settings.json")))
}

/// The figure in a sidecar's text (pure).
pub fn reading_from_sidecar(bytes: &[u8]) -> Option<(u64, Option<String>)> {
    let value = serde_json::from_slice::<Value>(bytes).ok()?;
    let last = value.get("lastCallTokenUsage")?;
    let count = |key: &str| last.get(key).and_then(Value::as_u64).unwrap_or(0);
    let tokens = count("inputTokens") + count("cacheReadTokens") + count("cacheCreationTokens");
    let model = value.get("model").and_then(Value::as_str).map(|m| clip(m, 200));
    (tokens > 0).then_some((tokens, model))
}

/// Reads the sidecar beside `transcript`.
pub fn read(transcript: &Path) -> Option<DroidReading> {
    let path = sidecar_path(transcript)?;
    let file = crate::fsx::open_regular(&path).ok()?;
    let written_at = file
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs() as i64);
    let bytes = crate::fsx::read_limited(&path, SIDECAR_LIMIT).ok()?;
    let (tokens, model) = reading_from_sidecar(&bytes)?;
    Some(DroidReading { tokens, model, written_at })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Format;

    /// Captured from the real CLI against the stand-in server by the facts session in
    /// tests/real_hosts/handoff_facts.rs (see tests/fixtures/real/README.md), cut where the
    /// CRITICAL hook ran.
    const AT_CRITICAL: &[u8] = include_bytes!("../../tests/fixtures/real/droid/session-at-critical.jsonl");

    #[test]
    fn facts_at_critical() {
        for facts in crate::transcript::testing::check_facts_session_at_critical(
            Format::DroidSession,
            AT_CRITICAL,
            "custom:Standin-0",
        ) {
            assert!(facts.todos.is_none());
        }
    }

    #[test]
    fn the_last_call_is_the_figure() {
        let bytes = include_bytes!("../../tests/fixtures/real/droid/session.settings.json");
        assert_eq!(reading_from_sidecar(bytes), Some((833, Some("custom:Standin-0".to_string()))));
        assert_eq!(reading_from_sidecar(br#"{"tokenUsage": {"inputTokens": 5}}"#), None);
        assert_eq!(
            sidecar_path(Path::new("/h/.factory/sessions/-p/abc.jsonl")),
            Some(PathBuf::from("/h/.factory/sessions/-p/abc.settings.json"))
        );
        assert_eq!(sidecar_path(Path::new("/h/abc.txt")), None);
    }
}
