//! Codex: no hook payload carries a figure; the rollout at `transcript_path` does. Each
//! model response is followed by a `token_usage_record` whose `usage.input_tokens` is the
//! whole prompt (cached part included); `event_msg` lines of type `token_count` (one
//! step behind) carry the window as `info.model_context_window`. Codex compacts at
//! `model_auto_compact_token_limit` from `$CODEX_HOME/config.toml` (default `~/.codex`)
//! when that is set; otherwise baton does not claim to know where.
//!
//! Rollouts grow large: they are read from the end, within a budget.

use std::path::PathBuf;

use super::{EventSpec, HookInput, PauseStop, Places, Scope};
use crate::fsx;

pub const NAME: &str = "Codex";
pub const ID: &str = "codex";
/// The hook timeout, in seconds.
pub const HOOK_TIMEOUT: u64 = 10;
pub const HAS_STATUSLINE: bool = false;

/// Whether a hook's `continue: false` stops the agent (the pause). Not in 0.171.0: a
/// PostToolUse `continue: false` is logged ("hook: PostToolUse Stopped") and its reason put
/// in place of the call's output, and the turn goes on; PreToolUse rejects `continue:
/// false` as unsupported; PreModelRequest and PostModelResponse outputs cannot stop
/// anything (seen on the real CLI; read in its source, `codex-rs/hooks`).
pub const HONOURS_STOP: bool = false;
/// What a hook can do: refuse a call (PreToolUse `permissionDecision: "deny"` with a
/// reason, which the model reads in place of the call's output). The pause refuses every
/// call of the turn after the grace calls, so the agent can only end its turn.
pub const PAUSE_STOP: PauseStop = PauseStop::RefuseTheNextCalls;
/// The output schemas of PostToolUse and SessionStart (0.171.0) accept `systemMessage`.
pub const SHOWS_SYSTEM_MESSAGE: bool = true;
/// No `terminalSequence` in its schemas, which reject unknown fields.
pub const EMITS_TERMINAL_SEQUENCE: bool = false;
pub const SCOPES: &[Scope] = &[Scope::User, Scope::Project];
pub const PROJECT_FOLDER: &str = ".codex";

/// Codex 0.171.0 has no PostToolUseFailure event (it ignores unknown event names).
/// UserPromptSubmit starts a turn; Stop accepts no context (only `decision: "block"`,
/// which would force the agent on): baton never answers it, and uses it only where the
/// pause stopped the agent, to write the handoff again once the last grace call's output
/// is in the rollout.
pub const EVENTS: &[EventSpec] = &[
    EventSpec::new("PostToolUse", None),
    // Answered only while the pause refuses the agent's calls.
    EventSpec::new("PreToolUse", None),
    EventSpec::new("UserPromptSubmit", None),
    EventSpec::new("Stop", None),
    EventSpec::new("SessionStart", None),
    EventSpec::new("PreCompact", None),
    EventSpec { name: "SessionEnd", matcher: None, timeout: Some(3) },
    // The compaction audit: a mid-turn compaction's brief rides the next PostToolUse.
    EventSpec::new("PostCompact", None),
];

/// Windows of the models Codex runs, smallest first: the usable 95 % of its models' 272k, 372k,
/// 500k and 872k windows, as its rollout reports them (`model_context_window`).
pub const WINDOWS: &[u64] = &[258_400, 353_400, 475_000, 828_400];

/// Codex's events carry a `turn_id` (surer than Gemini's `timestamp`, less than its
/// event names); its SessionStart has none, but names the rollout (`rollout-*.jsonl`).
pub fn detect(input: &HookInput, _gemini_key_set: bool) -> u8 {
    let rollout = input
        .transcript_path
        .as_deref()
        .and_then(|p| std::path::Path::new(p).file_name())
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"));
    if input.turn_id.is_some() || rollout { 2 } else { 0 }
}

/// The settings file of a scope.
pub fn settings_file(_scope: Scope) -> &'static str {
    "hooks.json"
}

const CONFIG_LIMIT: u64 = 1024 * 1024;

/// `$CODEX_HOME` (a relative one is relative to the current folder, as Codex reads it),
/// else `~/.codex`.
pub fn home(places: &Places) -> Option<PathBuf> {
    places.codex_home.clone().or_else(|| places.home.as_ref().map(|h| h.join(PROJECT_FOLDER)))
}

/// The settings of Codex's `config.toml` that decide the figure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CodexSettings {
    pub auto_compact_limit: Option<u64>,
    pub context_window: Option<u64>,
}

/// Reads `model_auto_compact_token_limit` and `model_context_window` (pure).
pub fn parse_settings(text: &str) -> CodexSettings {
    let Ok(table) = text.parse::<toml::Table>() else { return CodexSettings::default() };
    let positive =
        |key: &str| table.get(key).and_then(toml::Value::as_integer).filter(|v| *v > 0).map(|v| v as u64);
    CodexSettings {
        auto_compact_limit: positive("model_auto_compact_token_limit"),
        context_window: positive("model_context_window"),
    }
}

/// Codex's settings as its `config.toml` has them now.
pub fn settings() -> CodexSettings {
    home(&Places::from_env())
        .and_then(|home| fsx::read_limited(&home.join("config.toml"), CONFIG_LIMIT).ok())
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .map(|text| parse_settings(&text))
        .unwrap_or_default()
}

/// Codex's usable share of a model's window (`effective_context_window_percent`).
pub const USABLE_PCT: u64 = 95;

/// The model's raw window from the usable one Codex reports (`model_context_window` in
/// the rollout is already 95 % of it) (pure).
pub fn raw_window(usable: u64) -> u64 {
    (usable * 100).div_ceil(USABLE_PCT)
}

/// Where Codex compacts (pure): at 90 % of the raw window, or at
/// `model_auto_compact_token_limit` when that is lower (it can only lower it).
pub fn compaction_point(raw_window: Option<u64>, limit: Option<u64>) -> Option<u64> {
    let by_window = raw_window.filter(|w| *w > 0).map(|w| w * 9 / 10);
    match (by_window, limit) {
        (Some(w), Some(l)) => Some(w.min(l)),
        (w, l) => w.or(l),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_start_without_turn_id_is_told_by_its_rollout() {
        let input: HookInput = serde_json::from_slice(include_bytes!(
            "../../tests/fixtures/real/codex/SessionStart-compact.json"
        ))
        .unwrap();
        assert_eq!(input.turn_id, None);
        assert_eq!(crate::host::HostKind::detect(&input, false), crate::host::HostKind::Codex);
        let claude: HookInput = serde_json::from_slice(include_bytes!(
            "../../tests/fixtures/real/claude/SessionStart-compact.json"
        ))
        .unwrap();
        assert_eq!(crate::host::HostKind::detect(&claude, false), crate::host::HostKind::Claude);
    }

    #[test]
    fn compaction_points() {
        // gpt-5.5: 272,000 raw, 258,400 usable, compacts at 244,800.
        assert_eq!(raw_window(258_400), 272_000);
        assert_eq!(compaction_point(Some(272_000), None), Some(244_800));
        assert_eq!(compaction_point(Some(272_000), Some(150_000)), Some(150_000));
        assert_eq!(compaction_point(Some(272_000), Some(900_000)), Some(244_800), "only lowers");
        assert_eq!(compaction_point(Some(raw_window(190_000)), None), Some(180_000));
        assert_eq!(compaction_point(None, None), None);
    }

    #[test]
    fn settings_from_config_toml() {
        let s =
            parse_settings("model = \"gpt-5\"\nmodel_auto_compact_token_limit = 150000\n[hooks]\nx = 1\n");
        assert_eq!(s.auto_compact_limit, Some(150_000));
        assert_eq!(parse_settings("not toml [").auto_compact_limit, None);
    }
}
