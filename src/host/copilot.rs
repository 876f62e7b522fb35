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

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::input::{ContextWindow, CurrentUsage, Model, Workspace};
use super::lenient::{lenient, number, text};
use super::spec::{
    Compaction, CompactionBrief, CompactionEnd, EventSpec, FigureSource, Grammar, Install, InstallFacts,
    PauseStop, Payload, PayloadShape, RecordQuery, Recorded, ReplyWait, Spec, Statusline, TrustFacts,
    TrustFinding,
};
use super::{Host, HostKind, Places, Scope, StatuslineInput};
use crate::transcript::Format;

/// GitHub Copilot CLI.
pub struct CopilotCli;

pub const SPEC: Spec = Spec {
    id: "copilot",
    name: "GitHub Copilot CLI",
    flag_help: "GitHub Copilot CLI",
    // PreToolUse refuses calls once the pause has stopped the agent (`pause_stop`).
    events: &[
        EventSpec::new("PreToolUse", Some("*")),
        EventSpec::new("PostToolUse", Some("*")),
        EventSpec::new("SessionStart", None),
        EventSpec::new("PreCompact", None),
        EventSpec::new("SessionEnd", None),
    ],
    // Seconds.
    hook_timeout: 10,
    install: Install::Settings,
    // The project's folder holding `hooks/` (the user's is `~/.copilot`).
    project_folder: ".github",
    project_folder_is_common: true,
    // The file baton owns in each `hooks/` folder.
    settings_file: "hooks/baton.json",
    local_settings_file: None,
    // `statusLine` (`{"type": "command", "command": …}`) in the user's
    // `~/.copilot/settings.json` only (a repository's `.github/copilot/settings.json` may
    // not set it, and `copilot config` refuses to); the payload is read by
    // [`StatuslinePayload`].
    statusline: Some(Statusline {
        pointer: "/statusLine",
        file: Some("settings.json"),
        payload: Payload::of::<StatuslinePayload>(),
    }),
    subagent_statusline: false,
    enabled_plugins: false,
    disable_all_hooks: None,
    // The environment variables Copilot CLI sets for its hooks.
    env_marks: &["COPILOT_PROJECT_DIR", "COPILOT_HOOK_DIR"],
    // Prompt windows of Copilot CLI's models, smallest first.
    windows: &[64_000, 128_000, 136_000, 168_000],
    figure_source: FigureSource::Record,
    figure_words: " (This figure was read from GitHub Copilot CLI's session events: its last model call.)",
    // The newest call's record is often flushed after PostToolUse starts.
    reply_wait: Some(ReplyWait { max: Duration::from_millis(1500), step: Duration::from_millis(25) }),
    own_meter: None,
    transcript: Format::CopilotEvents,
    sends_messages: false,
    // No (seen on 1.0.102: a PostToolUse `continue: false` is ignored and the turn goes
    // on).
    honours_stop: false,
    // Every call after the grace calls is refused at PreToolUse (`permissionDecision:
    // "deny"`, the agent reads the reason), as on Codex.
    pause_stop: PauseStop::RefuseTheNextCalls,
    answers_stop: false,
    // Whether Copilot CLI shows a hook's `systemMessage` was not checked: no notice is
    // sent.
    shows_system_message: false,
    // Copilot CLI is not known to emit a hook's `terminalSequence`.
    emits_terminal_sequence: false,
    context_at_top_level: true,
    brief_on_first_prompt: false,
    compaction_brief: CompactionBrief::AtSessionStart,
    pre_compact_blocks: false,
    // GitHub Copilot CLI 1.0.102 (`copilot --help`): the prompt is `-p`'s value.
    headless: Grammar {
        subcommands: &[],
        switches: &[],
        prompt_options: &["-p", "--prompt"],
        positional_headless_unless: None,
        positional_joined: false,
        values: &[
            "-i",
            "--interactive",
            "--model",
            "--reasoning-effort",
            "--context",
            "--auto-tier",
            "--agent",
            "-n",
            "--name",
            "--session-id",
            "-C",
            "--log-dir",
            "--extension-sdk-path",
            "--log-level",
            "--stream",
            "--output-format",
            "--add-dir",
            "--attachment",
            "--disable-mcp-server",
            "--add-github-mcp-toolset",
            "--add-github-mcp-tool",
            "--plugin-dir",
            "--additional-mcp-config",
            "--mcp-github-auth",
            "--max-autopilot-continues",
            "--mode",
            "--environment-host",
            "--environment-compute-id",
            "--dynamic-retrieval",
            "--enable-mcp-server",
            "--max-ai-credits",
            "--usage-output-file",
        ],
        arrays: &[
            "--allow-tool",
            "--deny-tool",
            "--available-tools",
            "--excluded-tools",
            "--secret-env-vars",
            "--allow-url",
            "--deny-url",
        ],
    },
    interactive_relay: false,
};

/// Copilot CLI compacts at this fraction of `maxPromptTokens`.
const COMPACTION_FRACTION: f64 = 0.8;

/// What install and doctor say about the host's approval step.
const TRUST_NOTE: &str = "Copilot CLI runs user hooks (~/.copilot/hooks) everywhere; project hooks \
(.github/hooks) run only in a folder you trusted";

impl Host for CopilotCli {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }

    /// `$COPILOT_HOME`, else `~/.copilot`.
    fn home(&self, places: &Places) -> Option<PathBuf> {
        copilot_home_var().or_else(|| places.home.as_ref().map(|h| h.join(".copilot")))
    }

    /// The event log's newest call: the one the event names, else the session's
    /// (Copilot CLI names none on PostToolUse); its window is `maxPromptTokens`.
    fn record(&self, query: &RecordQuery) -> Option<Recorded> {
        let path = query.transcript.map(Path::to_path_buf).or_else(|| events_path(query.session_id))?;
        let reading = crate::transcript::read_figure(SPEC.transcript, &path, query.mark)?;
        Some(Recorded {
            tokens: reading.tokens,
            model: reading.model.or_else(|| query.model.map(str::to_string)),
            window: reading.window,
            written_at: reading.written_at,
            current: reading.current,
        })
    }

    fn compaction(
        &self,
        window: Option<u64>,
        _project: Option<&Path>,
        _model_key: Option<&str>,
    ) -> Compaction {
        match window {
            Some(window) => Compaction::At(compaction_point(window), CompactionEnd::AutoCompaction),
            None => Compaction::Unknown,
        }
    }

    /// Copilot CLI names no transcript on PostToolUse: its session's event log.
    fn transcript_when_unnamed(&self, session_id: &str) -> Option<PathBuf> {
        events_path(session_id)
    }

    fn install_notes(&self, _facts: &InstallFacts) -> Vec<String> {
        vec![format!("{TRUST_NOTE}.")]
    }

    /// User hooks run everywhere; project hooks (`.github/hooks`) only in a folder the
    /// user trusted (pure over what was read).
    fn trust_findings(&self, facts: &TrustFacts) -> Vec<TrustFinding> {
        let project_hooks = facts.files.iter().any(|f| f.scope == Scope::Project && f.registers_baton);
        let name = "trust (GitHub Copilot CLI)";
        vec![if project_hooks {
            TrustFinding::warn(
                name,
                "the project's hooks (.github/hooks/baton.json) run only once this folder is trusted",
                "start `copilot` here once and trust the folder, or install with --scope user",
            )
        } else {
            TrustFinding::ok(name, format!("{TRUST_NOTE}; nothing to do"))
        }]
    }
}

fn copilot_home_var() -> Option<PathBuf> {
    std::env::var_os("COPILOT_HOME").filter(|v| !v.is_empty()).map(PathBuf::from).filter(|p| p.is_absolute())
}

/// Whether `id` can name a session folder (letters, digits, `-`, `_`; no path).
fn valid_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The event log of session `id`.
fn events_path(id: &str) -> Option<PathBuf> {
    if !valid_session_id(id) {
        return None;
    }
    Some(CopilotCli.home(&Places::home_only())?.join("session-state").join(id).join("events.jsonl"))
}

/// The token count where Copilot CLI compacts a `window`-token prompt.
fn compaction_point(window: u64) -> u64 {
    (window as f64 * COMPACTION_FRACTION).round() as u64
}

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

impl PayloadShape for StatuslinePayload {
    /// baton's statusline input (pure): the last call's prompt over the prompt window.
    /// Before the first call there are no tokens: no figure.
    fn into_input(self) -> StatuslineInput {
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
