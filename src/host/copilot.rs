//! GitHub Copilot CLI (tested: 1.0.102, offline against a chat-completions provider).
//!
//! - Hooks: baton owns one hook file per scope, `~/.copilot/hooks/baton.json` (user;
//!   `$COPILOT_HOME/hooks` when set) and `<project>/.github/hooks/baton.json` (project).
//!   Copilot CLI loads every `*.json` there. Written with Claude Code's event names and
//!   groups (`{"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [{"type": "command",
//!   "command": …, "timeout": 10}]}]}}`): for those, Copilot CLI sends Claude-style
//!   payloads (`hook_event_name`, `session_id`, `cwd`, `tool_name`, an ISO `timestamp`; no
//!   `transcript_path` on PostToolUse). Its own camelCase events (`postToolUse` …) get
//!   camelCase payloads instead; baton does not register those.
//! - Detection: the hook's environment has `COPILOT_PROJECT_DIR` (and `COPILOT_HOOK_DIR`).
//! - Envelope: `additionalContext` (top level or in `hookSpecificOutput`) is appended to
//!   the tool result (PostToolUse); SessionStart's goes before the first prompt, also in
//!   `copilot -p`.
//! - Figure: the session's event log `~/.copilot/session-state/<session>/events.jsonl`
//!   ([`crate::transcript::copilot`]): each `session.usage_record` holds the call's
//!   `inputTokens` and the model's `maxPromptTokens`, the window Copilot CLI works with.
//! - Windows: its own model table (e.g. claude-sonnet-4.5: 168,000 prompt tokens;
//!   gpt-4.1: 64,000); `COPILOT_PROVIDER_MAX_PROMPT_TOKENS` overrides it.
//! - Compaction: in the background once the context reaches 80 % of `maxPromptTokens`
//!   (`session.compaction_start`, trigger `threshold`), firing PreCompact.
//! - Trust: user hooks run everywhere; a project's `.github/hooks` run only in a folder
//!   the user trusted (or with `--trust-folder` / `COPILOT_ALLOW_ALL=true`).

use std::path::PathBuf;

use serde::Deserialize;

use super::input::{ContextWindow, CurrentUsage, Model, Workspace};
use super::lenient::{lenient, number, text};
use super::{EventSpec, HookInput, HostKind, PauseStop, Places, Scope, StatuslineInput};

pub const NAME: &str = "GitHub Copilot CLI";
pub const ID: &str = "copilot";
/// The hook timeout, in seconds.
pub const HOOK_TIMEOUT: u64 = 10;
/// `statusLine` (`{"type": "command", "command": …}`) in the user's
/// `~/.copilot/settings.json` only (a repository's `.github/copilot/settings.json` may not
/// set it, and `copilot config` refuses to); the payload is read by [`StatuslinePayload`].
pub const HAS_STATUSLINE: bool = true;
/// The user settings file holding `statusLine`, in Copilot CLI's home.
pub const STATUSLINE_FILE: &str = "settings.json";

/// Whether a hook's `continue: false` ends the agent's turn: no (seen on 1.0.102: a
/// PostToolUse `continue: false` is ignored and the turn goes on).
pub const HONOURS_STOP: bool = false;

/// How the pause stops the agent: every call after the grace calls is refused at
/// PreToolUse (`permissionDecision: "deny"`, the agent reads the reason), as on Codex.
pub const PAUSE_STOP: PauseStop = PauseStop::RefuseTheNextCalls;

/// Whether Copilot CLI shows a hook's `systemMessage` was not checked: no notice is sent.
pub const SHOWS_SYSTEM_MESSAGE: bool = false;

/// Copilot CLI is not known to emit a hook's `terminalSequence`.
pub const EMITS_TERMINAL_SEQUENCE: bool = false;
pub const SCOPES: &[Scope] = &[Scope::User, Scope::Project];
/// The user's folder under the home.
pub const USER_FOLDER: &str = ".copilot";
/// The project's folder holding `hooks/`.
pub const PROJECT_FOLDER: &str = ".github";
/// The file baton owns in each `hooks/` folder.
pub const HOOK_FILE: &str = "hooks/baton.json";
/// The environment variables Copilot CLI sets for its hooks.
pub const ENV_MARKS: &[&str] = &["COPILOT_PROJECT_DIR", "COPILOT_HOOK_DIR"];

/// PreToolUse refuses calls once the pause has stopped the agent ([`PAUSE_STOP`]).
pub const EVENTS: &[EventSpec] = &[
    EventSpec::new("PreToolUse", Some("*")),
    EventSpec::new("PostToolUse", Some("*")),
    EventSpec::new("SessionStart", None),
    EventSpec::new("PreCompact", None),
    EventSpec::new("SessionEnd", None),
];

/// Prompt windows of Copilot CLI's models, smallest first.
pub const WINDOWS: &[u64] = &[64_000, 128_000, 136_000, 168_000];
/// Copilot CLI compacts at this fraction of `maxPromptTokens`.
pub const COMPACTION_FRACTION: f64 = 0.8;
/// Most bytes of a session's event log read from its end.
pub const EVENTS_BUDGET: u64 = 8 * 1024 * 1024;

/// How long the hook waits for the newest call's record to be flushed, and how often it looks.
pub const WAIT_MAX: std::time::Duration = std::time::Duration::from_millis(1500);
pub const WAIT_STEP: std::time::Duration = std::time::Duration::from_millis(25);

/// Nothing in the event itself is Copilot CLI's own: see [`detect_env`].
pub fn detect(_input: &HookInput, _gemini_key_set: bool) -> u8 {
    0
}

/// Whether the hook's environment is Copilot CLI's.
pub fn detect_env(var: &dyn Fn(&str) -> bool) -> bool {
    ENV_MARKS.iter().any(|name| var(name))
}

/// `$COPILOT_HOME`, else `~/.copilot`.
pub fn home(places: &Places) -> Option<PathBuf> {
    copilot_home_var().or_else(|| places.home.as_ref().map(|h| h.join(USER_FOLDER)))
}

fn copilot_home_var() -> Option<PathBuf> {
    std::env::var_os("COPILOT_HOME").filter(|v| !v.is_empty()).map(PathBuf::from).filter(|p| p.is_absolute())
}

/// The hook file of a scope, inside the scope's folder.
pub fn settings_file(_scope: Scope) -> &'static str {
    HOOK_FILE
}

/// Whether `id` can name a session folder (letters, digits, `-`, `_`; no path).
pub fn valid_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The event log of session `id`.
pub fn events_path(id: &str) -> Option<PathBuf> {
    if !valid_session_id(id) {
        return None;
    }
    let places = Places { home: crate::places::home_dir(), ..Places::default() };
    Some(home(&places)?.join("session-state").join(id).join("events.jsonl"))
}

/// The token count where Copilot CLI compacts a `window`-token prompt.
pub fn compaction_point(window: u64) -> u64 {
    (window as f64 * COMPACTION_FRACTION).round() as u64
}

/// What install and doctor say about the host's approval step.
pub const TRUST_NOTE: &str = "Copilot CLI runs user hooks (~/.copilot/hooks) everywhere; project hooks \
(.github/hooks) run only in a folder you trusted";

/// Copilot CLI's statusline payload (1.0.102, captured): Claude Code's `session_id`,
/// `transcript_path` (the session's folder), `cwd`, `model.{id, display_name}`,
/// `workspace.current_dir`, and a `context_window` of its own: `last_call_input_tokens`
/// (the last model call's prompt, what its hook-side event log records) over
/// `context_window_size` (the prompt window it works with, `maxPromptTokens`: 168,000 for
/// claude-sonnet-4.5), with `used_percentage` (of the two, the call's output counted).
/// Not `current_usage`, which holds the session's totals, nor `current_context_tokens`
/// (its own estimate of the conversation's text). Only the fields baton uses are kept.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct StatuslinePayload {
    #[serde(deserialize_with = "text")]
    pub session_id: Option<String>,
    #[serde(deserialize_with = "text")]
    pub cwd: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub model: Option<Model>,
    #[serde(deserialize_with = "lenient")]
    pub workspace: Option<Workspace>,
    #[serde(deserialize_with = "lenient")]
    pub context_window: Option<PayloadWindow>,
}

/// `context_window` of the payload.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct PayloadWindow {
    #[serde(deserialize_with = "number")]
    pub last_call_input_tokens: Option<f64>,
    #[serde(deserialize_with = "number")]
    pub context_window_size: Option<f64>,
    #[serde(deserialize_with = "number")]
    pub used_percentage: Option<f64>,
}

impl StatuslinePayload {
    /// baton's statusline input (pure): the last call's prompt over the prompt window.
    /// Before the first call there are no tokens: no figure.
    pub fn into_input(self) -> StatuslineInput {
        let window = self.context_window.unwrap_or_default();
        let size = window.context_window_size.filter(|w| *w >= 1.0);
        let tokens = window.last_call_input_tokens.filter(|t| *t >= 1.0);
        let used = size.and(tokens).and(window.used_percentage).filter(|u| (0.0..=100.0).contains(u));
        StatuslineInput {
            host: Some(HostKind::Copilot),
            session_id: self.session_id,
            cwd: self.cwd,
            model: self.model,
            workspace: self.workspace,
            context_window: Some(ContextWindow {
                context_window_size: size,
                used_percentage: used,
                remaining_percentage: used.map(|u| 100.0 - u),
                current_usage: tokens
                    .map(|t| CurrentUsage { input_tokens: Some(t), ..CurrentUsage::default() }),
            }),
            ..StatuslineInput::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_captured_statusline_payload_is_read() {
        // Copilot CLI 1.0.102 after a reply at 127,680 prompt tokens of claude-sonnet-4.5.
        let payload: StatuslinePayload =
            serde_json::from_slice(include_bytes!("../../tests/fixtures/real/copilot/statusline.json"))
                .unwrap();
        let input = payload.into_input();
        assert_eq!(input.host(), HostKind::Copilot);
        assert_eq!(input.session_id.as_deref(), Some("fffa8644-3f4b-4b93-b1ee-8deff680b0e8"));
        assert_eq!(input.model_id(), Some("claude-sonnet-4.5"));
        assert_eq!(input.current_dir(), Some("/home/dev/shop-api"));
        assert_eq!(input.transcript_path, None, "it names the session's folder, not a transcript");
        let window = input.context_window.unwrap();
        assert_eq!(window.context_window_size, Some(168_000.0));
        assert_eq!(window.used_percentage, Some(76.0));
        assert_eq!(
            window.current_usage.and_then(|u| u.input_tokens),
            Some(127_680.0),
            "not the session's totals"
        );
    }

    #[test]
    fn session_ids_name_no_path() {
        assert!(valid_session_id("76d27542-4fb9-4a6e-8c26-3c9d80df2a07"));
        assert!(!valid_session_id("../x"));
        assert!(!valid_session_id(""));
        assert!(!valid_session_id("a/b"));
        assert_eq!(compaction_point(168_000), 134_400);
    }
}
