//! OpenCode (tested: 1.18.33, `opencode run` against a custom OpenAI-compatible provider).
//!
//! - No command hooks: OpenCode loads JavaScript plugins from `plugin/` and `plugins/`
//!   inside each of its config folders (`$XDG_CONFIG_HOME/opencode`, else
//!   `~/.config/opencode`, for the user; `<project>/.opencode` for the project). baton
//!   owns one file there, `plugins/baton.js` ([`plugin_text`]), which runs `baton hook`
//!   with a Claude-style event on stdin and applies the answer. It does nothing else: no
//!   file, no figure of its own.
//! - Events, as the plugin sends them: before each model request of the agent's loop
//!   (`experimental.chat.messages.transform`) a `PostToolUse` when the request follows
//!   tool calls, a `UserPromptSubmit` when it follows the user's prompt; on the first user
//!   message of a session in this process (`chat.message`) a `SessionStart` (`startup`, or
//!   `resume` for a session made earlier); before a compaction
//!   (`experimental.session.compacting`) a `PreCompact`; `session.deleted` a `SessionEnd`.
//!   A subagent (a child session) is sent as `agent_id` under its parent's `session_id`.
//!   The hook runs before the request, not after the tool (`tool.execute.after`): the
//!   reply that issued a call records its tokens only after every call of that reply has
//!   finished, so at the tool's own hook the figure would be one reply behind.
//! - Figure: the `opencode` object of the event ([`super::PluginReport`]), taken by the plugin from the
//!   newest assistant message of the request (its `tokens`, not a compaction summary's)
//!   and the model's `limit` (`chat.params`): the window OpenCode itself works with.
//! - Envelope: `hookSpecificOutput.additionalContext` is appended to the output of the
//!   request's last tool call (after a prompt: a synthetic text part of the prompt), and
//!   again in every later request of the process; SessionStart's is a synthetic text part
//!   of the first prompt (stored with it). `continue: false` aborts the session's run
//!   (`session.abort`): nothing more is sent to the model.
//! - Compaction: once a reply's tokens (input, output and cache) reach the model's
//!   `limit.input` less a reserve, else `limit.context` less the model's output limit
//!   (at most 32,000).
//! - Handoff facts: OpenCode keeps its sessions in a database (SQLite) baton does not
//!   read. When baton has just written the session's CRITICAL handoff, and when the
//!   pause stops the agent (the handoff is then written again only from the messages),
//!   its answer carries `"baton": {"send_messages": true}`, which only the plugin reads; the plugin then runs `baton hook` once more with
//!   baton's own `HandoffFacts` event and a bounded digest of the messages of that request
//!   ([`crate::transcript::opencode`]), before it applies the answer (or aborts). No other
//!   call pays for it.
//! - `baton run`: `opencode run [message..]` ends when the plugin aborts the session (seen
//!   on 1.18.33 and Kilo CLI 7.7.7: exit status 0, a few seconds after the stop), so each
//!   paused leg ends by itself and the next one starts briefed from the handoff.
//! - Trust: OpenCode loads every plugin in those folders without asking.

use std::path::{Path, PathBuf};

use super::spec::{
    Compaction, CompactionBrief, CompactionEnd, EventSpec, FigureSource, Grammar, Install, InstallFacts,
    PauseStop, RecordQuery, Recorded, Spec, TrustFacts, TrustFinding,
};
use super::{HookInput, Host, Places};
use crate::transcript::Format;

/// OpenCode.
pub struct OpenCode;

pub const SPEC: Spec = Spec {
    id: "opencode",
    name: "OpenCode",
    flag_help: "OpenCode (baton's plugin file)",
    // The events the plugin sends (doctor and install list them).
    events: &[
        EventSpec::new("PostToolUse", None),
        EventSpec::new("UserPromptSubmit", None),
        EventSpec::new("SessionStart", None),
        EventSpec::new("PreCompact", None),
        EventSpec::new("SessionEnd", None),
    ],
    // How long the plugin lets `baton hook` run, in seconds.
    hook_timeout: 10,
    install: Install::Plugin,
    // The project's config folder.
    project_folder: ".opencode",
    project_folder_is_common: false,
    // The plugin file baton owns inside a config folder.
    settings_file: "plugins/baton.js",
    local_settings_file: None,
    statusline: None,
    subagent_statusline: false,
    enabled_plugins: false,
    disable_all_hooks: None,
    env_marks: &[],
    // Context windows of the models OpenCode serves, smallest first.
    windows: &[128_000, 200_000, 256_000, 400_000, 1_000_000],
    figure_source: FigureSource::Record,
    figure_words: " (This figure was reported by OpenCode to baton's plugin: its last model reply.)",
    reply_wait: None,
    own_meter: None,
    // OpenCode keeps its sessions in a database: no transcript is read.
    transcript: Format::ClaudeCode,
    sends_messages: true,
    // The plugin aborts the session's run on `continue: false` (seen on 1.18.33: no
    // further request reaches the model, `opencode run` exits).
    honours_stop: true,
    pause_stop: PauseStop::AtTheCall,
    answers_stop: false,
    // The plugin shows no `systemMessage` (only the stop's reason, as a TUI toast).
    shows_system_message: false,
    emits_terminal_sequence: false,
    context_at_top_level: false,
    brief_on_first_prompt: false,
    compaction_brief: CompactionBrief::AtSessionStart,
    pre_compact_blocks: false,
    // OpenCode 1.18.33 (`run --help`): yargs, `run [message..]`.
    headless: Grammar {
        subcommands: &["run"],
        switches: &[],
        prompt_options: &[],
        positional_headless_unless: None,
        positional_joined: true,
        values: &[
            "--log-level",
            "--command",
            "-s",
            "--session",
            "-m",
            "--model",
            "--agent",
            "--format",
            "--title",
            "--attach",
            "-p",
            "--password",
            "-u",
            "--username",
            "--dir",
            "--port",
            "--variant",
        ],
        arrays: &["-f", "--file"],
    },
    interactive_relay: false,
};

/// The line that marks the plugin file as baton's (install replaces and uninstall removes
/// only a file that carries it).
const PLUGIN_MARK: &str = "// baton-plugin: an OpenCode plugin written by `baton install`";

/// What install and doctor say about the host's approval step.
pub(super) const TRUST_NOTE: &str = "OpenCode (and Kilo CLI) loads every plugin in its plugin folders without \
asking, when it starts: restart a running one";

impl Host for OpenCode {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }

    /// The plugin's report is OpenCode's own sign (a host built on OpenCode that the
    /// report names, Kilo CLI, claims it more surely).
    fn detect(&self, input: &HookInput, _gemini_key_set: bool) -> u8 {
        if input.opencode.is_some() { 4 } else { 0 }
    }

    /// `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`.
    fn home(&self, places: &Places) -> Option<PathBuf> {
        config_home(places, "opencode")
    }

    fn record(&self, query: &RecordQuery) -> Option<Recorded> {
        record(query)
    }

    fn compaction(&self, window: Option<u64>, project: Option<&Path>, model_key: Option<&str>) -> Compaction {
        compaction(window, project, model_key)
    }

    fn install_notes(&self, _facts: &InstallFacts) -> Vec<String> {
        vec![format!("{TRUST_NOTE}.")]
    }

    fn trust_findings(&self, _facts: &TrustFacts) -> Vec<TrustFinding> {
        trust_findings(&SPEC)
    }
}

/// The figure the plugin reports with the event: the newest reply's tokens and the
/// model's window.
pub(super) fn record(query: &RecordQuery) -> Option<Recorded> {
    let report = query.reported?;
    let tokens = report.prompt_tokens()?;
    let model = report.model().map(str::to_string).or_else(|| query.model.map(str::to_string));
    Some(Recorded { tokens, model, window: report.window(), written_at: report.written_at(), current: true })
}

/// The model's output limit is not in the figure: OpenCode's largest reserve is assumed.
pub(super) fn compaction(
    window: Option<u64>,
    _project: Option<&Path>,
    _model_key: Option<&str>,
) -> Compaction {
    match window {
        Some(window) => Compaction::At(compaction_point(window, None, None), CompactionEnd::AutoCompaction),
        None => Compaction::Unknown,
    }
}

/// The plugin's approval step: none (doctor's line for a host of this plugin).
pub(super) fn trust_findings(spec: &Spec) -> Vec<TrustFinding> {
    vec![TrustFinding::ok(&format!("trust ({})", spec.name), format!("{TRUST_NOTE}; nothing to do"))]
}

/// OpenCode keeps this much for the reply, at most (its `OUTPUT_TOKEN_MAX`).
const OUTPUT_RESERVE_MAX: u64 = 32_000;
/// The reserve under `limit.input` (its default `compaction.reserved`).
const INPUT_RESERVE: u64 = 20_000;

/// The token count where OpenCode compacts (pure): `limit.input` less its reserve when
/// the model has one, else the window less the model's output limit (at most 32,000;
/// unknown: 32,000).
fn compaction_point(window: u64, input_limit: Option<u64>, output_limit: Option<u64>) -> u64 {
    let output = output_limit.filter(|o| *o > 0).unwrap_or(OUTPUT_RESERVE_MAX).min(OUTPUT_RESERVE_MAX);
    match input_limit.filter(|i| *i > 0) {
        Some(input) => input.saturating_sub(INPUT_RESERVE.min(output)),
        None => window.saturating_sub(output),
    }
}

/// `$XDG_CONFIG_HOME/<name>`, else `~/.config/<name>`.
pub(super) fn config_home(places: &Places, name: &str) -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()).map(PathBuf::from);
    match xdg.filter(|p| p.is_absolute()) {
        Some(config) => Some(config.join(name)),
        None => places.home.as_ref().map(|h| h.join(".config").join(name)),
    }
}

/// The plugin's source for the host `host_id` (`opencode`, `kilo`), running `binary` (an
/// absolute path).
pub fn plugin_text(binary: &str, host_id: &str) -> String {
    let quoted = serde_json::to_string(binary).unwrap_or_else(|_| "\"baton\"".to_string());
    let host = serde_json::to_string(host_id).unwrap_or_else(|_| "\"opencode\"".to_string());
    include_str!("opencode_plugin.js")
        .replace("__BATON_MARK__", PLUGIN_MARK)
        .replace("\"__BATON_BINARY__\"", &quoted)
        .replace("\"__BATON_HOST__\"", &host)
        .replace("__BATON_TIMEOUT_MS__", &(SPEC.hook_timeout * 1000).to_string())
}

/// Whether a plugin file's text is baton's (it carries [`PLUGIN_MARK`] on its first line).
pub fn is_baton_plugin(text: &str) -> bool {
    text.lines().next().is_some_and(|line| line.trim() == PLUGIN_MARK)
}

/// The binary a plugin file of baton's runs (pure), as written by [`plugin_text`].
pub fn plugin_binary(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.trim_start().starts_with("const BATON = "))?;
    let value = line.trim_start().strip_prefix("const BATON = ")?.trim_end().trim_end_matches(';');
    serde_json::from_str::<String>(value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_are_read_leniently() {
        let input: HookInput = serde_json::from_str(
            r#"{"hook_event_name": "PostToolUse", "session_id": "ses_1",
                "opencode": {"input": 120000, "cache_read": 10000, "cache_write": "x", "output": 20,
                             "model": "standin/m", "context_limit": 200000, "output_limit": 8192,
                             "completed_at": 1796144511907}}"#,
        )
        .unwrap();
        assert_eq!(input.host(false), super::super::HostKind::OpenCode);
        let report = input.opencode.unwrap();
        assert_eq!(report.prompt_tokens(), Some(130_000));
        assert_eq!(report.window(), Some(200_000));
        assert_eq!(report.written_at(), Some(1_796_144_511));
        let zero: super::super::PluginReport =
            serde_json::from_str(r#"{"input": 0, "context_limit": 0}"#).unwrap();
        assert_eq!(zero.prompt_tokens(), None);
        assert_eq!(zero.window(), None);
    }

    #[test]
    fn compaction_follows_opencodes_rule() {
        assert_eq!(compaction_point(200_000, None, Some(8192)), 191_808);
        assert_eq!(compaction_point(200_000, None, Some(64_000)), 168_000);
        assert_eq!(compaction_point(400_000, Some(272_000), Some(128_000)), 252_000);
        assert_eq!(compaction_point(200_000, None, None), 168_000);
    }

    #[test]
    fn the_plugin_names_its_binary_and_is_recognised() {
        let text = plugin_text("/opt/my \"bin\"/baton", SPEC.id);
        assert!(is_baton_plugin(&text));
        assert_eq!(plugin_binary(&text).as_deref(), Some("/opt/my \"bin\"/baton"));
        assert!(!text.contains("__BATON"));
        assert!(!is_baton_plugin("export const Other = async () => ({})\n"));
    }
}
