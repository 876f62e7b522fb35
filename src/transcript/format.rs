//! Whose transcript format a file is in: each host writes its own.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::line;

/// Whose transcript format a file is in: each host writes its own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Claude Code's JSONL transcript.
    #[default]
    ClaudeCode,
    /// Codex's rollout (`rollout-*.jsonl`).
    CodexRollout,
    /// Gemini CLI's chat recording.
    GeminiChat,
    /// Qwen Code's chat recording (`~/.qwen/projects/<slug>/chats/<session>.jsonl`).
    QwenChat,
    /// Factory Droid's session transcript (`~/.factory/sessions/<slug>/<session>.jsonl`).
    DroidSession,
    /// GitHub Copilot CLI's session event log (`session-state/<session>/events.jsonl`).
    CopilotEvents,
    /// OpenCode's (and Kilo CLI's) session messages, sent by baton's plugin
    /// (`super::opencode`): never a file.
    #[serde(rename = "opencode_messages")]
    OpenCodeMessages,
}

impl Format {
    /// The format of a file read from its first line, for callers that do not know the
    /// host (`baton pause` given a path): Codex opens with `session_meta`, Gemini CLI
    /// with the recording's `projectHash`, Factory Droid with `session_start`, Copilot
    /// CLI with `session.start`, Qwen Code with a line whose message has `parts`;
    /// anything else is read as Claude Code's.
    pub fn sniff(first_line: &[u8]) -> Format {
        let Some(value) = line::parse_line(first_line) else { return Format::ClaudeCode };
        let kind = value.get("type").and_then(Value::as_str);
        if kind == Some("session_meta") {
            Format::CodexRollout
        } else if kind == Some("session_start") {
            Format::DroidSession
        } else if kind == Some("session.start") {
            Format::CopilotEvents
        } else if value.pointer("/message/parts").is_some_and(Value::is_array) {
            Format::QwenChat
        } else if value.get("projectHash").is_some()
            || value.get("kind").is_some() && value.get("sessionId").is_some()
        {
            Format::GeminiChat
        } else {
            Format::ClaudeCode
        }
    }

    /// The host's name for the transcript, as the handoff names its source.
    pub fn describe(self) -> &'static str {
        match self {
            Format::ClaudeCode => "Claude Code's transcript",
            Format::CodexRollout => "Codex's rollout",
            Format::GeminiChat => "Gemini CLI's chat recording",
            Format::QwenChat => "Qwen Code's chat recording",
            Format::DroidSession => "Factory Droid's session transcript",
            Format::CopilotEvents => "GitHub Copilot CLI's session events",
            Format::OpenCodeMessages => "the session's messages, sent by baton's plugin",
        }
    }
}
