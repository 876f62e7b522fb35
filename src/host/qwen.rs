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

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::input::{ContextWindow, CurrentUsage, Model, Workspace};
use super::lenient::{lenient, number, text};
use super::spec::{
    Compaction, CompactionBrief, CompactionEnd, EventSpec, FigureSource, Grammar, Install, InstallFacts,
    PauseStop, Payload, PayloadShape, RecordQuery, Recorded, Spec, Statusline, TrustFacts, TrustFinding,
};
use super::{HookInput, Host, HostKind, Places, Scope, StatuslineInput};
use crate::fsx;
use crate::transcript::Format;

/// Qwen Code.
pub struct QwenCode;

pub const SPEC: Spec = Spec {
    id: "qwen",
    name: "Qwen Code",
    flag_help: "Qwen Code",
    // PostToolUseFailure for failed calls; UserPromptSubmit carries the resume brief;
    // PreToolUse refuses calls once the pause has stopped the agent (`pause_stop`), and
    // Stop writes the handoff again at the end of that turn (the last grace call's output
    // is in the chat recording by then).
    events: &[
        EventSpec::new("PreToolUse", Some("*")),
        EventSpec::new("Stop", None),
        EventSpec::new("PostToolUse", Some("*")),
        EventSpec::new("PostToolUseFailure", Some("*")),
        EventSpec::new("UserPromptSubmit", None),
        EventSpec::new("SessionStart", None),
        EventSpec::new("PreCompact", None),
        EventSpec::new("SessionEnd", None),
    ],
    // Milliseconds (Qwen Code's unit for command hooks).
    hook_timeout: 10_000,
    install: Install::Settings,
    project_folder: ".qwen",
    project_folder_is_common: false,
    settings_file: "settings.json",
    local_settings_file: None,
    // `ui.statusLine` (`{"type": "command", "command": …}`): run 300 ms after the
    // prompt's token count, the model, the branch or the tool calls change; the payload is
    // read by [`StatuslinePayload`].
    statusline: Some(Statusline {
        pointer: "/ui/statusLine",
        file: None,
        payload: Payload::of::<StatuslinePayload>(),
    }),
    subagent_statusline: false,
    enabled_plugins: false,
    disable_all_hooks: None,
    // The environment variable only Qwen Code sets for its hooks.
    env_marks: &["QWEN_PROJECT_DIR"],
    windows: &[131_072, 262_144, 1_000_000],
    figure_source: FigureSource::Record,
    figure_words: " (This figure was read from the session's transcript: Qwen Code's chat recording.)",
    reply_wait: None,
    own_meter: None,
    transcript: Format::QwenChat,
    sends_messages: false,
    // No: Qwen Code 0.15.10 turns a PreToolUse or PostToolUse `continue: false` into an
    // error result of that one call (`execution_denied`) and the turn goes on with the
    // next model request.
    honours_stop: false,
    // A PreToolUse `permissionDecision: "deny"` refuses the call (the agent reads the
    // reason as the call's result), so every call after the grace calls is refused until
    // the agent ends its turn (as on Codex). Under `baton run` the relay ends the leg at
    // the last grace call instead.
    pause_stop: PauseStop::RefuseTheNextCalls,
    answers_stop: false,
    // Whether Qwen Code shows a hook's `systemMessage` was not checked on its real CLI:
    // baton does not count on it, so no notice is sent there.
    shows_system_message: false,
    // Qwen Code is not known to emit a hook's `terminalSequence`.
    emits_terminal_sequence: false,
    context_at_top_level: false,
    brief_on_first_prompt: true,
    compaction_brief: CompactionBrief::AtSessionStart,
    pre_compact_blocks: false,
    // Qwen Code 0.15.10 (`qwen --help`): yargs; `[array]` options are greedy.
    headless: Grammar {
        subcommands: &[],
        switches: &[],
        prompt_options: &["-p", "--prompt"],
        positional_headless_unless: Some(&["-i", "--prompt-interactive", "--acp"]),
        positional_joined: true,
        values: &[
            "--telemetry-target",
            "--telemetry-otlp-endpoint",
            "--telemetry-otlp-protocol",
            "--telemetry-outfile",
            "--proxy",
            "-m",
            "--model",
            "-i",
            "--prompt-interactive",
            "--system-prompt",
            "--append-system-prompt",
            "--sandbox-image",
            "--approval-mode",
            "--channel",
            "--mcp-config",
            "--openai-logging-dir",
            "--openai-api-key",
            "--openai-base-url",
            "--input-format",
            "-o",
            "--output-format",
            "--json-fd",
            "--json-file",
            "--json-schema",
            "--input-file",
            "-r",
            "--resume",
            "--session-id",
            "--max-session-turns",
            "--auth-type",
        ],
        arrays: &[
            "--allowed-mcp-server-names",
            "--allowed-tools",
            "-e",
            "--extensions",
            "--include-directories",
            "--add-dir",
            "--core-tools",
            "--exclude-tools",
            "--disabled-slash-commands",
        ],
    },
    interactive_relay: false,
};

/// What install and doctor say about the host's approval step.
const TRUST_NOTE: &str = "Qwen Code runs these hooks without asking; with `security.folderTrust` on, \
project hooks (.qwen/settings.json) run only in a folder you trusted";

impl Host for QwenCode {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }

    fn record(&self, query: &RecordQuery) -> Option<Recorded> {
        let reading = crate::transcript::read_figure(SPEC.transcript, query.transcript?, query.mark)?;
        let model = reading.model.or_else(|| query.model.map(str::to_string));
        let window = model.as_deref().and_then(model_window);
        Some(Recorded {
            tokens: reading.tokens,
            model,
            window,
            written_at: reading.written_at,
            current: true,
        })
    }

    fn compaction(
        &self,
        window: Option<u64>,
        project: Option<&Path>,
        _model_key: Option<&str>,
    ) -> Compaction {
        match window {
            Some(window) => Compaction::At(
                compression_point(window, compression_threshold(project)),
                CompactionEnd::Compression,
            ),
            None => Compaction::Unknown,
        }
    }

    /// Qwen Code fires UserPromptSubmit with an empty prompt on every tool-result
    /// continuation: the same turn.
    fn starts_turn(&self, input: &HookInput) -> bool {
        is_real_prompt(input.prompt.as_deref())
    }

    fn model_window(&self, model: &str) -> Option<u64> {
        model_window(model)
    }

    fn install_notes(&self, _facts: &InstallFacts) -> Vec<String> {
        vec![format!("{TRUST_NOTE}.")]
    }

    /// None by default; with `security.folderTrust.enabled` in the user's settings,
    /// project hooks run only in a trusted folder (pure over what was read).
    fn trust_findings(&self, facts: &TrustFacts) -> Vec<TrustFinding> {
        let parsed = |scope: Scope| facts.files.iter().find(|f| f.scope == scope);
        let trust_on = parsed(Scope::User)
            .and_then(|f| f.settings.pointer("/security/folderTrust/enabled"))
            .is_some_and(|on| on == &Value::Bool(true));
        let project_hooks = parsed(Scope::Project).is_some_and(|f| f.registers_baton);
        let name = "trust (Qwen Code)";
        vec![if trust_on && project_hooks {
            TrustFinding::warn(
                name,
                "security.folderTrust is on: the project's hooks (.qwen/settings.json) run only once this folder is trusted",
                "start `qwen` here once and trust the folder, or install with --scope user",
            )
        } else {
            TrustFinding::ok(name, format!("{TRUST_NOTE}; nothing to do"))
        }]
    }
}

/// Qwen Code compresses at this fraction of the window unless its settings say otherwise.
const DEFAULT_COMPRESSION_THRESHOLD: f64 = 0.7;
const SETTINGS_LIMIT: u64 = 1024 * 1024;

/// The window Qwen Code gives a model id, from its token-limit table (pure). Unknown
/// ids get `None`: Qwen Code itself assumes 131,072 for them, which baton does not claim.
fn model_window(model: &str) -> Option<u64> {
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
fn threshold_from_settings(bytes: &[u8]) -> Option<f64> {
    let value = serde_json::from_slice::<Value>(bytes).ok()?;
    value
        .pointer("/model/chatCompression/contextPercentageThreshold")
        .and_then(Value::as_f64)
        .filter(|t| *t > 0.0 && *t <= 1.0)
}

/// The compression threshold in force: the project's settings over the user's, else the
/// default.
fn compression_threshold(project: Option<&Path>) -> f64 {
    let read =
        |path: &Path| fsx::read_limited(path, SETTINGS_LIMIT).ok().and_then(|b| threshold_from_settings(&b));
    let project = project.and_then(|p| read(&p.join(SPEC.project_folder).join(SPEC.settings_file)));
    let places = Places::home_only();
    let user = || QwenCode.home(&places).and_then(|h| read(&h.join(SPEC.settings_file)));
    project.or_else(user).unwrap_or(DEFAULT_COMPRESSION_THRESHOLD)
}

/// The token count where Qwen Code compresses a `window`-token conversation.
fn compression_point(window: u64, threshold: f64) -> u64 {
    (window as f64 * threshold).round() as u64
}

/// Whether a UserPromptSubmit is a prompt the user typed (pure): Qwen Code sends one
/// with an empty `prompt` on every tool-result continuation.
fn is_real_prompt(prompt: Option<&str>) -> bool {
    prompt.is_some_and(|p| !p.trim().is_empty())
}

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

impl PayloadShape for StatuslinePayload {
    /// baton's statusline input (pure): the prompt's tokens, and the window and used %
    /// only when Qwen Code gave a window (else the window is baton's to choose).
    fn into_input(self) -> StatuslineInput {
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
