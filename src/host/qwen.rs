//! Qwen Code (a Gemini CLI fork with Claude Code's hook contract; tested: 0.15.10).
//!
//! - Hooks: Claude-style groups in `~/.qwen/settings.json` (user) and
//!   `<project>/.qwen/settings.json` (project), command `timeout` in **milliseconds**.
//!   Project hooks need a trusted folder only when the user turned `security.folderTrust`
//!   on (it is off by default).
//! - Detection: its events carry Claude Code's names and a Gemini-style `timestamp`, and the
//!   hook's environment has `CLAUDE_PROJECT_DIR` too; only `QWEN_PROJECT_DIR` tells it apart.
//! - Envelope: `hookSpecificOutput.additionalContext`, appended to the tool result
//!   (PostToolUse) or to the prompt (UserPromptSubmit). SessionStart's context is dropped
//!   (0.15.10) and SessionStart does not fire in `qwen -p`: the resume brief goes with the
//!   first prompt. UserPromptSubmit fires again with `prompt: ""` on every tool-result
//!   continuation: those are not prompts.
//! - Figure: the chat recording at `transcript_path` ([`crate::transcript::qwen`]); the
//!   statusline payload's `context_window_size` is 0 unless the model is declared in
//!   `modelProviders`.
//! - Windows: its token-limit table (qwen3-coder-plus and qwen3.x: 1,000,000; qwen3-max and
//!   other qwen3-coder models: 262,144; unknown models: 131,072).
//! - Compaction: at `model.chatCompression.contextPercentageThreshold` (default 0.7) of the
//!   window; it fires PreCompact (`trigger: "auto"`) first.

use std::path::{Path, PathBuf};

use serde_json::Value;

use serde::Deserialize;

use super::input::{ContextWindow, CurrentUsage, Model, Workspace};
use super::lenient::{lenient, number, text};
use super::{EventSpec, HookInput, HostKind, PauseStop, Places, Scope, StatuslineInput};
use crate::fsx;

pub const NAME: &str = "Qwen Code";
pub const ID: &str = "qwen";
/// The hook timeout, in milliseconds (Qwen Code's unit for command hooks).
pub const HOOK_TIMEOUT: u64 = 10_000;
/// `ui.statusLine` (`{"type": "command", "command": …}`): run 300 ms after the prompt's
/// token count, the model, the branch or the tool calls change; the payload is read by
/// [`StatuslinePayload`].
pub const HAS_STATUSLINE: bool = true;

/// Whether a hook's `continue: false` ends the agent's turn: no. Qwen Code 0.15.10 turns a
/// PreToolUse or PostToolUse `continue: false` into an error result of that one call
/// (`execution_denied`) and the turn goes on with the next model request.
pub const HONOURS_STOP: bool = false;

/// How the pause stops the agent: a PreToolUse `permissionDecision: "deny"` refuses the
/// call (the agent reads the reason as the call's result), so every call after the grace
/// calls is refused until the agent ends its turn (as on Codex). Under `baton run` the
/// relay ends the leg at the last grace call instead.
pub const PAUSE_STOP: PauseStop = PauseStop::RefuseTheNextCalls;

/// Whether Qwen Code shows a hook's `systemMessage` was not checked on its real CLI: baton
/// does not count on it, so no notice is sent there.
pub const SHOWS_SYSTEM_MESSAGE: bool = false;

/// Qwen Code is not known to emit a hook's `terminalSequence`.
pub const EMITS_TERMINAL_SEQUENCE: bool = false;
pub const SCOPES: &[Scope] = &[Scope::User, Scope::Project];
pub const PROJECT_FOLDER: &str = ".qwen";
/// The environment variable only Qwen Code sets for its hooks.
pub const ENV_MARK: &str = "QWEN_PROJECT_DIR";

/// PostToolUseFailure for failed calls; UserPromptSubmit carries the resume brief;
/// PreToolUse refuses calls once the pause has stopped the agent ([`PAUSE_STOP`]), and
/// Stop writes the handoff again at the end of that turn (the last grace call's output is
/// in the chat recording by then).
pub const EVENTS: &[EventSpec] = &[
    EventSpec::new("PreToolUse", Some("*")),
    EventSpec::new("Stop", None),
    EventSpec::new("PostToolUse", Some("*")),
    EventSpec::new("PostToolUseFailure", Some("*")),
    EventSpec::new("UserPromptSubmit", None),
    EventSpec::new("SessionStart", None),
    EventSpec::new("PreCompact", None),
    EventSpec::new("SessionEnd", None),
];

/// Nothing in the event itself is Qwen's own: see [`detect_env`].
pub fn detect(_input: &HookInput, _gemini_key_set: bool) -> u8 {
    0
}

/// Whether the hook's environment is Qwen Code's (`QWEN_PROJECT_DIR` set).
pub fn detect_env(var: &dyn Fn(&str) -> bool) -> bool {
    var(ENV_MARK)
}

/// `~/.qwen`.
pub fn home(places: &Places) -> Option<PathBuf> {
    places.home.as_ref().map(|h| h.join(PROJECT_FOLDER))
}

/// The settings file of a scope.
pub fn settings_file(_scope: Scope) -> &'static str {
    "settings.json"
}

/// Windows of Qwen Code's models, smallest first.
pub const WINDOWS: &[u64] = &[131_072, 262_144, 1_000_000];
/// Qwen Code compresses at this fraction of the window unless its settings say otherwise.
pub const DEFAULT_COMPRESSION_THRESHOLD: f64 = 0.7;
const SETTINGS_LIMIT: u64 = 1024 * 1024;

/// The window Qwen Code gives a model id, from its token-limit table (pure). Unknown
/// ids get `None`: Qwen Code itself assumes 131,072 for them, which baton does not claim.
pub fn model_window(model: &str) -> Option<u64> {
    let id = model.trim().to_ascii_lowercase();
    let id = id.rsplit('/').next().unwrap_or(&id);
    if id.starts_with("qwen3-coder-plus")
        || id.starts_with("qwen3-coder-flash")
        || id.starts_with("coder-model")
    {
        return Some(1_000_000);
    }
    if id.starts_with("qwen3-max") || id.starts_with("qwen3-coder") {
        return Some(262_144);
    }
    if id.starts_with("qwen3.") {
        return Some(1_000_000);
    }
    None
}

/// `model.chatCompression.contextPercentageThreshold` from a settings file's text (pure).
pub fn threshold_from_settings(bytes: &[u8]) -> Option<f64> {
    let value = serde_json::from_slice::<Value>(bytes).ok()?;
    value
        .pointer("/model/chatCompression/contextPercentageThreshold")
        .and_then(Value::as_f64)
        .filter(|t| *t > 0.0 && *t <= 1.0)
}

/// The compression threshold in force: the project's settings over the user's, else the
/// default.
pub fn compression_threshold(project: Option<&Path>) -> f64 {
    let read =
        |path: &Path| fsx::read_limited(path, SETTINGS_LIMIT).ok().and_then(|b| threshold_from_settings(&b));
    let project = project.and_then(|p| read(&p.join(PROJECT_FOLDER).join(settings_file(Scope::Project))));
    let places = Places { home: crate::places::home_dir(), ..Places::default() };
    let user = || home(&places).and_then(|h| read(&h.join(settings_file(Scope::User))));
    project.or_else(user).unwrap_or(DEFAULT_COMPRESSION_THRESHOLD)
}

/// The token count where Qwen Code compresses a `window`-token conversation.
pub fn compression_point(window: u64, threshold: f64) -> u64 {
    (window as f64 * threshold).round() as u64
}

/// Whether a UserPromptSubmit is a prompt the user typed (pure): Qwen Code sends one
/// with an empty `prompt` on every tool-result continuation.
pub fn is_real_prompt(prompt: Option<&str>) -> bool {
    prompt.is_some_and(|p| !p.trim().is_empty())
}

/// What install and doctor say about the host's approval step.
pub const TRUST_NOTE: &str = "Qwen Code runs these hooks without asking; with `security.folderTrust` on, \
project hooks (.qwen/settings.json) run only in a folder you trusted";

/// Where the statusline lives in Qwen Code's settings: `ui.statusLine`.
pub const STATUSLINE_POINTER: &str = "/ui/statusLine";

/// Qwen Code's statusline payload (0.15.10, `useStatusLine.ts`): `session_id`,
/// `model.display_name` (the model id), `workspace.current_dir`, and `context_window`
/// with `current_usage` a **number** (the last prompt's token count), not Claude Code's
/// object, and `context_window_size` 0 when Qwen Code has no window for the model (its
/// percentages are then 0 and 100, and mean nothing). Only the fields baton uses are kept.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct StatuslinePayload {
    #[serde(deserialize_with = "text")]
    pub session_id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub model: Option<PayloadModel>,
    #[serde(deserialize_with = "lenient")]
    pub workspace: Option<Workspace>,
    #[serde(deserialize_with = "lenient")]
    pub context_window: Option<PayloadWindow>,
}

/// `model` of the payload.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct PayloadModel {
    #[serde(deserialize_with = "text")]
    pub display_name: Option<String>,
}

/// `context_window` of the payload.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct PayloadWindow {
    #[serde(deserialize_with = "number")]
    pub context_window_size: Option<f64>,
    #[serde(deserialize_with = "number")]
    pub used_percentage: Option<f64>,
    /// The last prompt's tokens.
    #[serde(deserialize_with = "number")]
    pub current_usage: Option<f64>,
}

impl StatuslinePayload {
    /// baton's statusline input (pure): the prompt's tokens, and the window and used %
    /// only when Qwen Code gave a window (else the window is baton's to choose).
    pub fn into_input(self) -> StatuslineInput {
        let window = self.context_window.unwrap_or_default();
        let size = window.context_window_size.filter(|w| *w >= 1.0);
        let tokens = window.current_usage.filter(|t| *t >= 0.0);
        let model = self.model.and_then(|m| m.display_name);
        StatuslineInput {
            host: Some(HostKind::Qwen),
            session_id: self.session_id,
            model: model.map(|name| Model { id: Some(name.clone()), display_name: Some(name) }),
            workspace: self.workspace,
            context_window: Some(ContextWindow {
                context_window_size: size,
                used_percentage: size.and(window.used_percentage),
                remaining_percentage: size.and(window.used_percentage).map(|u| 100.0 - u),
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
    fn the_captured_payload_is_read() {
        // Qwen Code 0.15.10: 10,036 prompt tokens of qwen3-coder-plus, `context_window_size` 0.
        let payload: StatuslinePayload =
            serde_json::from_slice(include_bytes!("../../tests/fixtures/real/qwen/statusline.json")).unwrap();
        let input = payload.into_input();
        assert_eq!(input.host(), HostKind::Qwen);
        assert_eq!(input.session_id.as_deref(), Some("f0d10dbf-1e99-49a9-a993-3b918c091d96"));
        assert_eq!(input.model_id(), Some("qwen3-coder-plus"));
        assert_eq!(input.current_dir(), Some("/home/dev/proj"));
        let window = input.context_window.unwrap();
        assert_eq!(window.context_window_size, None, "0 means no window");
        assert_eq!(window.used_percentage, None, "its 0 % means nothing without a window");
        assert_eq!(window.current_usage.and_then(|u| u.input_tokens), Some(10_036.0));
    }

    #[test]
    fn the_captured_payload_with_a_window_is_read() {
        // Qwen Code 0.15.10 with qwen3-coder-plus declared: 760,020 prompt tokens of 1M.
        let bytes = include_bytes!("../../tests/fixtures/real/qwen/statusline-with-window.json");
        let input = serde_json::from_slice::<StatuslinePayload>(bytes).unwrap().into_input();
        assert_eq!(input.session_id.as_deref(), Some("30dab63e-f57a-4271-a735-3e510d093132"));
        let window = input.context_window.unwrap();
        assert_eq!(window.context_window_size, Some(1_000_000.0));
        assert_eq!(window.used_percentage, Some(76.0));
        assert_eq!(window.current_usage.and_then(|u| u.input_tokens), Some(760_020.0));
    }

    #[test]
    fn a_window_qwen_code_gives_is_kept() {
        let payload: StatuslinePayload = serde_json::from_str(
            r#"{"session_id": "s", "model": {"display_name": "m"}, "context_window": {"context_window_size": 131072, "used_percentage": 50.3, "current_usage": 65900}}"#,
        )
        .unwrap();
        let window = payload.into_input().context_window.unwrap();
        assert_eq!(window.context_window_size, Some(131_072.0));
        assert_eq!(window.used_percentage, Some(50.3));
        let junk: StatuslinePayload = serde_json::from_str(
            r#"{"session_id": 7, "context_window": {"current_usage": {"input_tokens": 5}}}"#,
        )
        .unwrap();
        let input = junk.into_input();
        assert_eq!(input.session_id, None);
        assert!(input.context_window.unwrap().current_usage.is_none());
    }

    #[test]
    fn windows_follow_qwen_codes_table() {
        assert_eq!(model_window("qwen3-coder-plus"), Some(1_000_000));
        assert_eq!(model_window("qwen3-coder-30b-a3b-instruct"), Some(262_144));
        assert_eq!(model_window("qwen3-max-preview"), Some(262_144));
        assert_eq!(model_window("qwen3.5-plus"), Some(1_000_000));
        assert_eq!(model_window("llama-3"), None);
    }

    #[test]
    fn thresholds_points_and_prompts() {
        let settings = br#"{"model": {"chatCompression": {"contextPercentageThreshold": 0.9}}}"#;
        assert_eq!(threshold_from_settings(settings), Some(0.9));
        assert_eq!(threshold_from_settings(b"{}"), None);
        assert_eq!(compression_point(1_000_000, 0.7), 700_000);
        assert!(is_real_prompt(Some("go")));
        assert!(!is_real_prompt(Some("")));
        assert!(!is_real_prompt(None));
    }
}
