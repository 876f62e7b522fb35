//! Input structs for hook events and statusline payloads.

use serde::Deserialize;

use super::HostKind;
use super::lenient::{lenient, number, text};

/// The event, normalised across hosts (Gemini's `AfterTool` and Claude Code's
/// `PostToolUseFailure` are a PostToolUse, Gemini's `PreCompress` a PreCompact).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    PostToolUse,
    /// A tool call is about to run (Codex's PreToolUse, Gemini CLI's BeforeTool): baton
    /// answers only while the pause refuses calls.
    PreToolUse,
    SessionStart,
    PreCompact,
    /// After a compaction (Claude Code: with `compact_summary`; Codex: nothing to read).
    PostCompact,
    /// The session is over (Claude Code, Gemini CLI).
    SessionEnd,
    /// A turn starts: the user's prompt is about to reach the model (Claude Code's and
    /// Codex's UserPromptSubmit, Gemini CLI's BeforeAgent).
    TurnStart,
    /// After the PostToolUse calls of one reply (Claude Code's PostToolBatch).
    ToolBatch,
    /// The agent is about to end its turn (Claude Code's and Codex's Stop, Gemini CLI's
    /// AfterAgent; answering Claude Code's makes the agent take one more step).
    Stop,
    /// A subagent finished (Claude Code).
    SubagentStop,
    /// baton's own event, from baton's OpenCode plugin only: the session's messages, sent
    /// once after baton wrote a CRITICAL handoff ([`HookInput::opencode_messages`]).
    HandoffFacts,
    /// Any other named event: baton prints nothing for it.
    Other(String),
    /// No event name at all.
    Missing,
}

/// One hook event on stdin. Only the fields baton uses are kept.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct HookInput {
    #[serde(deserialize_with = "text")]
    pub session_id: Option<String>,
    #[serde(deserialize_with = "text")]
    pub transcript_path: Option<String>,
    #[serde(deserialize_with = "text")]
    pub cwd: Option<String>,
    #[serde(deserialize_with = "text")]
    pub hook_event_name: Option<String>,
    /// SessionStart: startup / resume / clear / compact / fork.
    #[serde(deserialize_with = "text")]
    pub source: Option<String>,
    /// PreCompact: manual / auto.
    #[serde(deserialize_with = "text")]
    pub trigger: Option<String>,
    /// Set inside a subagent (Claude Code, Codex): the `session_id` is the parent's.
    #[serde(deserialize_with = "text")]
    pub agent_id: Option<String>,
    #[serde(deserialize_with = "text")]
    pub agent_type: Option<String>,
    /// The user prompt the event belongs to (Claude Code): one per turn.
    #[serde(deserialize_with = "text")]
    pub prompt_id: Option<String>,
    /// Stop, SubagentStop: the host is already continuing because of a Stop hook.
    #[serde(deserialize_with = "lenient")]
    pub stop_hook_active: Option<bool>,
    #[serde(deserialize_with = "text")]
    pub tool_name: Option<String>,
    /// Codex only.
    #[serde(deserialize_with = "text")]
    pub turn_id: Option<String>,
    /// PostCompact (Claude Code): the summary as the host wrote it.
    #[serde(deserialize_with = "text")]
    pub compact_summary: Option<String>,
    /// Gemini only (an ISO time).
    #[serde(deserialize_with = "text")]
    pub timestamp: Option<String>,
    /// A model id, when the host gives it as a string (SessionStart, Codex).
    #[serde(deserialize_with = "text")]
    pub model: Option<String>,
    /// The tool call (PostToolUse, PostToolUseFailure): its reply in the transcript
    /// carries the same id.
    #[serde(deserialize_with = "text")]
    pub tool_use_id: Option<String>,
    /// UserPromptSubmit: what the user typed.
    #[serde(deserialize_with = "text")]
    pub prompt: Option<String>,
    /// OpenCode's plugin: the newest reply's tokens and the model's limits.
    #[serde(deserialize_with = "lenient")]
    pub opencode: Option<PluginReport>,
    /// HandoffFacts (baton's OpenCode plugin): a digest of the session's messages, read
    /// within bounds as it streams in.
    pub opencode_messages: Option<crate::transcript::opencode::Digest>,
}

impl HookInput {
    /// The normalised event. A missing name with `GEMINI_API_KEY` set is Gemini's
    /// AfterTool (GSD's fallback for old Gemini versions).
    pub fn event(&self, gemini_key_set: bool) -> Event {
        match self.hook_event_name.as_deref() {
            Some("PostToolUse" | "PostToolUseFailure" | "AfterTool") => Event::PostToolUse,
            Some("PreToolUse" | "BeforeTool") => Event::PreToolUse,
            Some("SessionStart") => Event::SessionStart,
            Some("SessionEnd") => Event::SessionEnd,
            Some("PreCompact") | Some("PreCompress") => Event::PreCompact,
            Some("UserPromptSubmit" | "BeforeAgent") => Event::TurnStart,
            Some("PostToolBatch") => Event::ToolBatch,
            Some("Stop" | "AfterAgent") => Event::Stop,
            Some("SubagentStop") => Event::SubagentStop,
            Some("PostCompact") => Event::PostCompact,
            Some("HandoffFacts") => Event::HandoffFacts,
            Some(other) => Event::Other(other.to_string()),
            None if gemini_key_set => Event::PostToolUse,
            None => Event::Missing,
        }
    }

    /// The turn the event belongs to, when the host names one (Claude Code's
    /// `prompt_id`, Codex's `turn_id`).
    pub fn turn(&self) -> Option<&str> {
        self.prompt_id.as_deref().or(self.turn_id.as_deref())
    }

    /// Which host sent this ([`HostKind::detect`]).
    pub fn host(&self, gemini_key_set: bool) -> HostKind {
        HostKind::detect(self, gemini_key_set)
    }

    /// The event name to put in the envelope: the one the host sent.
    pub fn envelope_event_name(&self, gemini_key_set: bool) -> String {
        match self.hook_event_name.as_deref() {
            Some(name) => name.to_string(),
            None if gemini_key_set => "AfterTool".to_string(),
            None => String::new(),
        }
    }
}

/// What baton's plugin (OpenCode, Kilo CLI) reports of the newest reply of the request
/// (`opencode` on stdin): the figure the event carries.
#[derive(Debug, Default, Clone, PartialEq, Deserialize)]
#[serde(default)]
pub struct PluginReport {
    /// `tokens.input`: the prompt less its cached part.
    #[serde(deserialize_with = "number")]
    pub input: Option<f64>,
    #[serde(deserialize_with = "number")]
    pub cache_read: Option<f64>,
    #[serde(deserialize_with = "number")]
    pub cache_write: Option<f64>,
    #[serde(deserialize_with = "number")]
    pub output: Option<f64>,
    /// `providerID/modelID` of the reply.
    #[serde(deserialize_with = "text")]
    pub model: Option<String>,
    /// The model's `limit.context`, `limit.input` and `limit.output`.
    #[serde(deserialize_with = "number")]
    pub context_limit: Option<f64>,
    #[serde(deserialize_with = "number")]
    pub input_limit: Option<f64>,
    #[serde(deserialize_with = "number")]
    pub output_limit: Option<f64>,
    /// When the reply was completed, in Unix milliseconds.
    #[serde(deserialize_with = "number")]
    pub completed_at: Option<f64>,
    /// The host the plugin was written for (`opencode`, `kilo`).
    #[serde(deserialize_with = "text")]
    pub host: Option<String>,
}

fn count(value: Option<f64>) -> Option<u64> {
    value.filter(|v| *v >= 0.0 && *v < 1e12).map(|v| v.round() as u64)
}

impl PluginReport {
    /// The reply's prompt: input plus both cache counts (output excluded, as on every
    /// host). `None` before the first reply (all zero).
    pub fn prompt_tokens(&self) -> Option<u64> {
        let input = count(self.input)?;
        let total = input + count(self.cache_read).unwrap_or(0) + count(self.cache_write).unwrap_or(0);
        (total > 0).then_some(total)
    }

    /// The window OpenCode gives the model (`limit.context`; 0 means unknown).
    pub fn window(&self) -> Option<u64> {
        count(self.context_limit).filter(|w| *w > 0)
    }

    /// When the reply was written, in Unix seconds.
    pub fn written_at(&self) -> Option<i64> {
        self.completed_at.filter(|ms| *ms > 0.0 && *ms < 1e15).map(|ms| (ms / 1000.0) as i64)
    }

    /// The model id without its provider (`standin/m` → `m`) is not used: baton's tables
    /// and configuration name models as OpenCode does, `provider/model`.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }
}

/// The statusLine payload: Claude Code's as it comes, another host's as its reader in
/// the host's file ([`super::qwen::StatuslinePayload`] …) turns it into this shape.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct StatuslineInput {
    /// The host that ran the statusline (`baton statusline --host`); `None`: Claude Code.
    #[serde(skip)]
    pub host: Option<HostKind>,
    #[serde(deserialize_with = "text")]
    pub session_id: Option<String>,
    #[serde(deserialize_with = "text")]
    pub transcript_path: Option<String>,
    #[serde(deserialize_with = "text")]
    pub cwd: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub model: Option<Model>,
    #[serde(deserialize_with = "lenient")]
    pub workspace: Option<Workspace>,
    #[serde(deserialize_with = "lenient")]
    pub cost: Option<Cost>,
    #[serde(deserialize_with = "lenient")]
    pub context_window: Option<ContextWindow>,
    /// Subscription rate limits (Claude Code, subscription logins only).
    #[serde(deserialize_with = "lenient")]
    pub rate_limits: Option<RateLimits>,
    #[serde(deserialize_with = "lenient")]
    pub prompt_cache: Option<PromptCache>,
}

/// `rate_limits` of the statusline payload.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct RateLimits {
    #[serde(deserialize_with = "lenient")]
    pub five_hour: Option<RateWindow>,
    #[serde(deserialize_with = "lenient")]
    pub seven_day: Option<RateWindow>,
}

/// One rate-limit window: how much of it is used and when it resets (Unix seconds).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct RateWindow {
    #[serde(deserialize_with = "number")]
    pub used_percentage: Option<f64>,
    #[serde(deserialize_with = "number")]
    pub resets_at: Option<f64>,
}

/// `prompt_cache` of the statusline payload (Claude Code 2.1.332: `warm`, `ttl`,
/// `expires_at` in Unix seconds, `hit_ratio` …; only the first and the third are read).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct PromptCache {
    #[serde(deserialize_with = "lenient")]
    pub warm: Option<bool>,
    #[serde(deserialize_with = "number")]
    pub expires_at: Option<f64>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct Model {
    #[serde(deserialize_with = "text")]
    pub id: Option<String>,
    #[serde(deserialize_with = "text")]
    pub display_name: Option<String>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct Workspace {
    #[serde(deserialize_with = "text")]
    pub current_dir: Option<String>,
    #[serde(deserialize_with = "text")]
    pub project_dir: Option<String>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct Cost {
    #[serde(deserialize_with = "number")]
    pub total_cost_usd: Option<f64>,
}

/// `context_window`: the figures the context meter is made of.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct ContextWindow {
    #[serde(deserialize_with = "number")]
    pub context_window_size: Option<f64>,
    #[serde(deserialize_with = "number")]
    pub used_percentage: Option<f64>,
    #[serde(deserialize_with = "number")]
    pub remaining_percentage: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub current_usage: Option<CurrentUsage>,
}

/// The last response's token counts. Output tokens do not count towards the context.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct CurrentUsage {
    #[serde(deserialize_with = "number")]
    pub input_tokens: Option<f64>,
    #[serde(deserialize_with = "number")]
    pub cache_creation_input_tokens: Option<f64>,
    #[serde(deserialize_with = "number")]
    pub cache_read_input_tokens: Option<f64>,
}

/// The row context Claude Code's `subagentStatusLine` command gets on stdin (2.1.332, read
/// in its bundle): the session's fields, the columns a row may take, and one entry per
/// subagent in the agent panel. Only the fields baton uses are kept.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct SubagentRowsInput {
    #[serde(deserialize_with = "text")]
    pub session_id: Option<String>,
    #[serde(deserialize_with = "text")]
    pub cwd: Option<String>,
    /// The width a row may take.
    #[serde(deserialize_with = "number")]
    pub columns: Option<f64>,
    /// Each subagent; an entry without the shape of one is skipped.
    #[serde(deserialize_with = "tasks")]
    pub tasks: Vec<SubagentTask>,
}

/// One subagent of the agent panel.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct SubagentTask {
    /// The key of the row baton answers (`{"id", "content"}`).
    #[serde(deserialize_with = "text")]
    pub id: Option<String>,
    #[serde(deserialize_with = "text", rename = "agentType")]
    pub agent_type: Option<String>,
    #[serde(deserialize_with = "text")]
    pub status: Option<String>,
    /// What the row says of the task (its progress summary, else its description).
    #[serde(deserialize_with = "text")]
    pub label: Option<String>,
    #[serde(deserialize_with = "text")]
    pub description: Option<String>,
    #[serde(deserialize_with = "text")]
    pub model: Option<String>,
    /// The window of the subagent's model, as Claude Code counts it.
    #[serde(deserialize_with = "number", rename = "contextWindowSize")]
    pub context_window_size: Option<f64>,
    /// The subagent's latest prompt plus output tokens: its context now (0 before its
    /// first reply).
    #[serde(deserialize_with = "number", rename = "tokenCount")]
    pub token_count: Option<f64>,
}

impl SubagentRowsInput {
    /// The host whose agent panel sends the rows: Claude Code's `subagentStatusLine`.
    pub const HOST: HostKind = HostKind::Claude;
}

/// At most this many subagent rows are answered.
pub const SUBAGENT_ROWS_MAX: usize = 64;

fn tasks<'de, D>(deserializer: D) -> Result<Vec<SubagentTask>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let value = serde_json::Value::deserialize(deserializer)?;
    let entries = value.as_array().map(Vec::as_slice).unwrap_or_default();
    Ok(entries
        .iter()
        .filter(|entry| entry.is_object())
        .filter_map(|entry| SubagentTask::deserialize(entry).ok())
        .filter(|task| task.id.is_some())
        .take(SUBAGENT_ROWS_MAX)
        .collect())
}

impl StatuslineInput {
    /// The folder the session works in.
    pub fn current_dir(&self) -> Option<&str> {
        self.workspace.as_ref().and_then(|w| w.current_dir.as_deref()).or(self.cwd.as_deref())
    }

    /// The folder the session started in (the project).
    pub fn project_dir(&self) -> Option<&str> {
        self.workspace.as_ref().and_then(|w| w.project_dir.as_deref()).or(self.current_dir())
    }

    pub fn model_id(&self) -> Option<&str> {
        self.model.as_ref().and_then(|m| m.id.as_deref())
    }

    pub fn model_name(&self) -> Option<&str> {
        self.model.as_ref().and_then(|m| m.display_name.as_deref().or(m.id.as_deref()))
    }

    /// The host that ran the statusline.
    pub fn host(&self) -> HostKind {
        self.host.unwrap_or(HostKind::DEFAULT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subagent_rows_are_read_leniently() {
        let input: SubagentRowsInput = serde_json::from_str(
            r#"{"session_id": "s", "columns": 120, "tasks": [
                {"id": "a1", "agentType": "Explore", "status": "running", "model": "claude-sonnet-4-5", "contextWindowSize": 200000, "tokenCount": 46000, "tokenSamples": [1, 2]},
                {"id": 7}, "junk", {"name": "no id"},
                {"id": "a2", "tokenCount": "many"}
            ]}"#,
        )
        .unwrap();
        assert_eq!(input.columns, Some(120.0));
        let ids: Vec<_> = input.tasks.iter().map(|t| t.id.as_deref().unwrap()).collect();
        assert_eq!(ids, ["a1", "a2"]);
        assert_eq!(input.tasks[0].token_count, Some(46_000.0));
        assert_eq!(input.tasks[0].context_window_size, Some(200_000.0));
        assert_eq!(input.tasks[1].token_count, None);
        let none: SubagentRowsInput = serde_json::from_str(r#"{"tasks": {"a": 1}}"#).unwrap();
        assert!(none.tasks.is_empty());
    }

    #[test]
    fn wrong_types_mean_absent() {
        let input: HookInput = serde_json::from_str(
            r#"{"session_id": 42, "cwd": ["x"], "hook_event_name": "PostToolUse", "tool_response": {"huge": [1,2,3]}}"#,
        )
        .unwrap();
        assert_eq!(input.session_id, None);
        assert_eq!(input.cwd, None);
        assert_eq!(input.event(false), Event::PostToolUse);
    }

    #[test]
    fn gemini_names_are_normalised() {
        let input: HookInput =
            serde_json::from_str(r#"{"hook_event_name": "AfterTool", "session_id": "g"}"#).unwrap();
        assert_eq!(input.event(false), Event::PostToolUse);
        assert_eq!(input.host(false), HostKind::Gemini);
        assert_eq!(input.envelope_event_name(false), "AfterTool");

        let missing: HookInput = serde_json::from_str(r#"{"session_id": "g"}"#).unwrap();
        assert_eq!(missing.event(false), Event::Missing);
        assert_eq!(missing.event(true), Event::PostToolUse);
        assert_eq!(missing.envelope_event_name(true), "AfterTool");
    }

    #[test]
    fn a_failed_tool_call_is_a_post_tool_use_named_as_sent() {
        let input: HookInput = serde_json::from_slice(include_bytes!(
            "../../tests/fixtures/real/claude/PostToolUseFailure.json"
        ))
        .unwrap();
        assert_eq!(input.event(false), Event::PostToolUse);
        assert_eq!(input.host(false), HostKind::Claude);
        assert_eq!(input.envelope_event_name(false), "PostToolUseFailure");
        assert_eq!(input.tool_use_id.as_deref(), Some("toolu_mock_fail_49125"));
        let end: HookInput = serde_json::from_str(r#"{"hook_event_name": "SessionEnd"}"#).unwrap();
        assert_eq!(end.event(false), Event::SessionEnd);
    }

    #[test]
    fn real_codex_and_gemini_events_are_recognised() {
        let codex: HookInput =
            serde_json::from_slice(include_bytes!("../../tests/fixtures/real/codex/PostToolUse.json"))
                .unwrap();
        assert_eq!(codex.host(false), HostKind::Codex);
        assert_eq!(codex.model.as_deref(), Some("mock-model"));
        let gemini: HookInput = serde_json::from_slice(include_bytes!(
            "../../tests/fixtures/real/gemini/PreCompress-auto-every-turn.json"
        ))
        .unwrap();
        assert_eq!(gemini.host(false), HostKind::Gemini);
        assert_eq!(gemini.event(false), Event::PreCompact);
    }

    #[test]
    fn null_figures_are_absent() {
        let input: StatuslineInput = serde_json::from_str(
            r#"{"context_window": {"used_percentage": null, "remaining_percentage": null, "current_usage": null, "context_window_size": 200000}}"#,
        )
        .unwrap();
        let cw = input.context_window.unwrap();
        assert_eq!(cw.used_percentage, None);
        assert!(cw.current_usage.is_none());
        assert_eq!(cw.context_window_size, Some(200000.0));
    }
}
