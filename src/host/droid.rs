//! Factory Droid (tested: 0.225.2): Claude Code's hook contract.
//!
//! - Hooks: Claude-style groups in `~/.factory/settings.json` (user) and
//!   `<project>/.factory/settings.json` (project), `timeout` in seconds. Droid rewrites its
//!   user settings on start (keys added, `${VAR}` expanded); the hooks survive.
//! - Detection: the environment has `FACTORY_PROJECT_DIR` (and `DROID_PROJECT_DIR`) beside
//!   `CLAUDE_PROJECT_DIR`; the event names are Claude Code's.
//! - Envelope: `hookSpecificOutput.additionalContext` (a user message right after the tool
//!   result; SessionStart's before the prompt, also in `droid exec`).
//! - Figure: the session's sidecar `<session>.settings.json` beside `transcript_path`
//!   ([`crate::transcript::droid`]).
//! - Window and compaction: Droid compacts at its compaction limit
//!   (`compactionTokenLimitPerModel[<model>]`, else `compactionTokenLimit`, in its user
//!   settings); baton takes that limit as the window it works with. Without it, the model's
//!   window comes from baton's table or configuration.
//! - Trust: `droid exec` runs project hooks in any folder; interactive `droid` asks to trust
//!   the folder first.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::input::{ContextWindow, CurrentUsage, Model, Workspace};
use super::lenient::{lenient, number, text};
use super::spec::{
    Compaction, CompactionBrief, CompactionEnd, EventSpec, FigureSource, Grammar, Install, PauseStop,
    Payload, PayloadShape, RecordQuery, Recorded, Spec, Statusline,
};
use super::{Host, HostKind, Places, StatuslineInput};
use crate::fsx;
use crate::transcript::Format;

/// Factory Droid.
pub struct FactoryDroid;

pub const SPEC: Spec = Spec {
    id: "droid",
    name: "Factory Droid",
    flag_help: "Factory Droid",
    events: &[
        EventSpec::new("PostToolUse", Some("*")),
        EventSpec::new("PostToolUseFailure", Some("*")),
        EventSpec::new("SessionStart", None),
        EventSpec::new("PreCompact", None),
        EventSpec::new("SessionEnd", None),
    ],
    // Seconds.
    hook_timeout: 10,
    install: Install::Settings,
    project_folder: ".factory",
    project_folder_is_common: false,
    settings_file: "settings.json",
    local_settings_file: None,
    // `statusLine` (`{"type": "command", "command": …}`) in its settings, user or project
    // (a project's runs only in a folder the user trusted); the payload is read by
    // [`StatuslinePayload`].
    statusline: Some(Statusline {
        pointer: "/statusLine",
        file: None,
        payload: Payload::of::<StatuslinePayload>(),
    }),
    subagent_statusline: false,
    enabled_plugins: false,
    disable_all_hooks: None,
    // The environment variables only Factory Droid sets for its hooks.
    env_marks: &["FACTORY_PROJECT_DIR", "DROID_PROJECT_DIR"],
    windows: &[200_000, 1_000_000],
    figure_source: FigureSource::Record,
    figure_words: " (This figure was read from Factory Droid's session record: its last model call.)",
    reply_wait: None,
    own_meter: None,
    transcript: Format::DroidSession,
    sends_messages: false,
    // Yes: Droid 0.225.2 throws its hook-stop error on a PostToolUse `continue: false`,
    // which ends the run ("Execution stopped by hook"; `droid exec` exits), as Claude
    // Code does.
    honours_stop: true,
    pause_stop: PauseStop::AtTheCall,
    answers_stop: false,
    // Whether Factory Droid shows a hook's `systemMessage` was not checked on its real
    // CLI: baton does not count on it, so no notice is sent there.
    shows_system_message: false,
    // Factory Droid is not known to emit a hook's `terminalSequence`.
    emits_terminal_sequence: false,
    context_at_top_level: false,
    brief_on_first_prompt: false,
    compaction_brief: CompactionBrief::AtSessionStart,
    pre_compact_blocks: false,
    // Factory Droid 0.225.2 (`droid exec --help`): commander, `exec [prompt]`.
    headless: Grammar {
        subcommands: &["exec"],
        switches: &[],
        prompt_options: &[],
        positional_headless_unless: None,
        positional_joined: false,
        values: &[
            "-o",
            "--output-format",
            "--input-format",
            "-f",
            "--file",
            "--auto",
            "-s",
            "--session-id",
            "--fork",
            "-m",
            "--model",
            "-r",
            "--reasoning-effort",
            "--spec-model",
            "--spec-reasoning-effort",
            "--only-tools",
            "--add-tools",
            "--remove-tools",
            "--cwd",
            "--settings",
            "-w",
            "--worktree",
            "--worktree-dir",
            "--tag",
            "--log-group-id",
            "--worker-model",
            "--worker-reasoning-effort",
            "--validator-model",
            "--validator-reasoning-effort",
            "--append-system-prompt",
            "--append-system-prompt-file",
        ],
        arrays: &[],
    },
    interactive_relay: false,
};

impl Host for FactoryDroid {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }

    /// The sidecar's figure; its window is Droid's compaction limit for the model, from
    /// the user's settings, when set.
    fn record(&self, query: &RecordQuery) -> Option<Recorded> {
        let reading = crate::transcript::read_figure(SPEC.transcript, query.transcript?, query.mark)?;
        let model = reading.model.or_else(|| query.model.map(str::to_string));
        let window = compaction_limit(model.as_deref());
        Some(Recorded {
            tokens: reading.tokens,
            model,
            window,
            written_at: reading.written_at,
            current: true,
        })
    }

    /// Its window is its compaction limit, when known: headroom runs to the window's end.
    fn compaction(
        &self,
        _window: Option<u64>,
        _project: Option<&Path>,
        _model_key: Option<&str>,
    ) -> Compaction {
        match compaction_limit(None) {
            Some(limit) => Compaction::At(limit, CompactionEnd::AutoCompaction),
            None => Compaction::Unknown,
        }
    }
}

const SETTINGS_LIMIT: u64 = 4 * 1024 * 1024;

/// The compaction limit a settings file's text gives `model` (pure).
fn compaction_limit_from_settings(bytes: &[u8], model: Option<&str>) -> Option<u64> {
    let value = serde_json::from_slice::<Value>(bytes).ok()?;
    let per_model = model.and_then(|m| value.pointer("/compactionTokenLimitPerModel")?.get(m)?.as_u64());
    per_model.or_else(|| value.get("compactionTokenLimit")?.as_u64()).filter(|l| *l > 0)
}

/// The compaction limit in the user's settings, for `model`.
fn compaction_limit(model: Option<&str>) -> Option<u64> {
    let path = FactoryDroid.home(&Places::home_only())?.join(SPEC.settings_file);
    let bytes = fsx::read_limited(&path, SETTINGS_LIMIT).ok()?;
    compaction_limit_from_settings(&bytes, model)
}

/// Factory Droid's statusline payload (0.225.2): Claude Code's `session_id`,
/// `transcript_path`, `cwd`, `workspace.current_dir` and `model.{id, display_name}`, and
/// its own `context` (`null` before the first call): `last_call_compaction_tokens` (the
/// last call's prompt, what it compacts on), `token_limit` (its compaction limit),
/// `percentage` and `display` (its meter, of the limit less a fixed system-prompt
/// baseline). baton's figure is the first over the second, as its hook counts. Only the
/// fields baton uses are kept.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct StatuslinePayload {
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
    pub context: Option<PayloadContext>,
}

/// `context` of the payload.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct PayloadContext {
    #[serde(deserialize_with = "number")]
    pub last_call_compaction_tokens: Option<f64>,
    #[serde(deserialize_with = "number")]
    pub token_limit: Option<f64>,
}

impl PayloadShape for StatuslinePayload {
    /// baton's statusline input (pure): the last call's prompt over the compaction limit.
    fn into_input(self) -> StatuslineInput {
        let context = self.context.unwrap_or_default();
        let tokens = context.last_call_compaction_tokens.filter(|t| *t >= 0.0);
        StatuslineInput {
            host: Some(HostKind::Droid),
            session_id: self.session_id,
            transcript_path: self.transcript_path,
            cwd: self.cwd,
            model: self.model,
            workspace: self.workspace,
            context_window: Some(ContextWindow {
                context_window_size: context.token_limit.filter(|w| *w >= 1.0),
                used_percentage: None,
                remaining_percentage: None,
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
        // Droid 0.225.2 after a reply at 152,020 prompt tokens, its compaction limit 200k.
        let payload: StatuslinePayload =
            serde_json::from_slice(include_bytes!("../../tests/fixtures/real/droid/statusline.json"))
                .unwrap();
        let input = payload.into_input();
        assert_eq!(input.host(), HostKind::Droid);
        assert_eq!(input.session_id.as_deref(), Some("7f0b177d-0df7-48ff-8343-86e0ee888abc"));
        assert_eq!(input.model_id(), Some("custom:Standin-0"));
        assert_eq!(input.model_name(), Some("Standin"));
        assert_eq!(input.current_dir(), Some("/home/dev/shop-api"));
        assert!(
            input
                .transcript_path
                .as_deref()
                .is_some_and(|p| p.ends_with("7f0b177d-0df7-48ff-8343-86e0ee888abc.jsonl"))
        );
        let window = input.context_window.unwrap();
        assert_eq!(window.context_window_size, Some(200_000.0), "its compaction limit");
        assert_eq!(window.used_percentage, None, "its own 75 % is of the limit less a baseline");
        assert_eq!(window.current_usage.and_then(|u| u.input_tokens), Some(152_020.0));
        let before: StatuslinePayload =
            serde_json::from_str(r#"{"session_id": "s", "context": null}"#).unwrap();
        assert!(before.into_input().context_window.unwrap().current_usage.is_none());
    }

    #[test]
    fn the_compaction_limit_per_model_wins() {
        let settings =
            br#"{"compactionTokenLimit": 200000, "compactionTokenLimitPerModel": {"custom:A-0": 120000}}"#;
        assert_eq!(compaction_limit_from_settings(settings, Some("custom:A-0")), Some(120_000));
        assert_eq!(compaction_limit_from_settings(settings, Some("other")), Some(200_000));
        assert_eq!(compaction_limit_from_settings(b"{}", None), None);
    }
}
