//! Codex: no hook payload carries a figure; the rollout at `transcript_path` does
//! (`transcript::codex`): each model response is followed by a `token_usage_record` whose
//! `usage.input_tokens` is the whole prompt, and `token_count` events carry the window.
//! Codex compacts at 90 % of the model's raw window, or at
//! `model_auto_compact_token_limit` from `$CODEX_HOME/config.toml` (default `~/.codex`)
//! when that is lower. It runs a hook only once the user trusted it ([`codex_trust`]).
//!
//! [`codex_trust`]: super::codex_trust

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::codex_trust::{self, ConfigError, HookState, Trust};
use super::spec::{
    Compaction, CompactionBrief, CompactionEnd, EventSpec, FigureSource, Grammar, Install, InstallFacts,
    PauseStop, RecordQuery, Recorded, Spec, TrustFacts, TrustFinding,
};
use super::{HookInput, Host, HostKind, Places, Scope, show_path};
use crate::fsx;
use crate::transcript::Format;

/// Codex.
pub struct Codex;

pub const SPEC: Spec = Spec {
    id: "codex",
    name: "Codex",
    flag_help: "Codex",
    // Codex 0.171.0 has no PostToolUseFailure event (it ignores unknown event names).
    // UserPromptSubmit starts a turn; Stop accepts no context (only `decision: "block"`,
    // which would force the agent on): baton never answers it, and uses it only where the
    // pause stopped the agent, to write the handoff again once the last grace call's
    // output is in the rollout.
    events: &[
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
    ],
    // Seconds.
    hook_timeout: 10,
    install: Install::Settings,
    project_folder: ".codex",
    project_folder_is_common: false,
    settings_file: "hooks.json",
    local_settings_file: None,
    statusline: None,
    subagent_statusline: false,
    enabled_plugins: false,
    disable_all_hooks: None,
    env_marks: &[],
    // The usable 95 % of its models' 272k, 372k, 500k and 872k windows, as its rollout
    // reports them (`model_context_window`).
    windows: &[258_400, 353_400, 475_000, 828_400],
    figure_source: FigureSource::Record,
    figure_words: " (This figure was read from the session's transcript: Codex's rollout.)",
    reply_wait: None,
    own_meter: None,
    transcript: Format::CodexRollout,
    sends_messages: false,
    // Not in 0.171.0: a PostToolUse `continue: false` is logged ("hook: PostToolUse
    // Stopped") and its reason put in place of the call's output, and the turn goes on;
    // PreToolUse rejects `continue: false` as unsupported; PreModelRequest and
    // PostModelResponse outputs cannot stop anything (seen on the real CLI; read in its
    // source, `codex-rs/hooks`).
    honours_stop: false,
    // What a hook can do: refuse a call (PreToolUse `permissionDecision: "deny"` with a
    // reason, which the model reads in place of the call's output). The pause refuses
    // every call of the turn after the grace calls, so the agent can only end its turn.
    pause_stop: PauseStop::RefuseTheNextCalls,
    answers_stop: false,
    // The output schemas of PostToolUse and SessionStart (0.171.0) accept `systemMessage`.
    shows_system_message: true,
    // No `terminalSequence` in its schemas, which reject unknown fields.
    emits_terminal_sequence: false,
    context_at_top_level: false,
    brief_on_first_prompt: false,
    compaction_brief: CompactionBrief::WithTheTurn,
    pre_compact_blocks: false,
    headless: Grammar {
        subcommands: &["exec", "e"],
        switches: &[],
        prompt_options: &[],
        positional_headless_unless: None,
        positional_joined: false,
        values: &[
            "--model",
            "-m",
            "-s",
            "--sandbox",
            "-c",
            "--config",
            "-C",
            "--cd",
            "-p",
            "--profile",
            "-i",
            "--image",
            "-a",
            "--ask-for-approval",
            "-o",
            "--output-last-message",
            "--output-schema",
            "--color",
        ],
        arrays: &[],
    },
    interactive_relay: false,
};

impl Host for Codex {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }

    /// Codex's events carry a `turn_id` (surer than Gemini's `timestamp`, less than its
    /// event names); its SessionStart has none, but names the rollout (`rollout-*.jsonl`).
    fn detect(&self, input: &HookInput, _gemini_key_set: bool) -> u8 {
        let rollout = input
            .transcript_path
            .as_deref()
            .and_then(|p| Path::new(p).file_name())
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"));
        if input.turn_id.is_some() || rollout { 2 } else { 0 }
    }

    /// `$CODEX_HOME` (a relative one is relative to the current folder, as Codex reads
    /// it), else `~/.codex`.
    fn home(&self, places: &Places) -> Option<PathBuf> {
        places.codex_home.clone().or_else(|| places.home.as_ref().map(|h| h.join(SPEC.project_folder)))
    }

    /// The rollout's figure; its window from the rollout, else from `config.toml`. The
    /// model is the one the event names (the rollout's lines do not).
    fn record(&self, query: &RecordQuery) -> Option<Recorded> {
        let reading = crate::transcript::read_figure(SPEC.transcript, query.transcript?, query.mark)?;
        Some(Recorded {
            tokens: reading.tokens,
            model: query.model.map(str::to_string),
            window: reading.window.or_else(|| settings().context_window),
            written_at: reading.written_at,
            current: true,
        })
    }

    /// At 90 % of the raw window (the settings' `model_context_window`, else the one the
    /// figure is of), or at the settings' limit when lower.
    fn compaction(
        &self,
        window: Option<u64>,
        _project: Option<&Path>,
        _model_key: Option<&str>,
    ) -> Compaction {
        let settings = settings();
        let raw = settings.context_window.or_else(|| window.map(raw_window));
        match compaction_point(raw, settings.auto_compact_limit) {
            Some(point) => Compaction::At(point, CompactionEnd::AutoCompaction),
            None => Compaction::Unknown,
        }
    }

    fn install_notes(&self, facts: &InstallFacts) -> Vec<String> {
        facts.files.iter().map(|file| trust_note(file, facts.places, facts.is_baton_hook)).collect()
    }

    fn trust_findings(&self, facts: &TrustFacts) -> Vec<TrustFinding> {
        let Ok(home) = facts.places.host_dir(HostKind::Codex, Scope::User) else { return Vec::new() };
        let config = codex_trust::config_path(&home);
        let states = codex_trust::load_states(&config);
        let shown = show_path(&config, facts.places.home.as_deref());
        trust_check(facts, &states, &shown, &codex_trust::key_path).into_iter().collect()
    }
}

/// Bytes read of a settings file at most.
const SETTINGS_LIMIT: u64 = 16 * 1024 * 1024;
const CONFIG_LIMIT: u64 = 1024 * 1024;

/// The settings of Codex's `config.toml` that decide the figure, and how much of
/// AGENTS.md it reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct CodexSettings {
    auto_compact_limit: Option<u64>,
    context_window: Option<u64>,
    project_doc_max_bytes: Option<u64>,
}

/// Reads `model_auto_compact_token_limit`, `model_context_window` and
/// `project_doc_max_bytes` (pure).
fn parse_settings(text: &str) -> CodexSettings {
    let Ok(table) = text.parse::<toml::Table>() else { return CodexSettings::default() };
    let positive =
        |key: &str| table.get(key).and_then(toml::Value::as_integer).filter(|v| *v > 0).map(|v| v as u64);
    CodexSettings {
        auto_compact_limit: positive("model_auto_compact_token_limit"),
        context_window: positive("model_context_window"),
        project_doc_max_bytes: table
            .get("project_doc_max_bytes")
            .and_then(toml::Value::as_integer)
            .and_then(|v| u64::try_from(v).ok()),
    }
}

/// What Codex reads of a project's AGENTS.md by default (Codex 0.171.0 warns "Loaded only
/// 32768 of N bytes" and drops the rest).
const PROJECT_DOC_DEFAULT: u64 = 32 * 1024;

/// The most bytes of a project's AGENTS.md Codex reads into a context: the user's
/// `project_doc_max_bytes` in `$CODEX_HOME/config.toml`, else [`PROJECT_DOC_DEFAULT`].
pub fn project_doc_max_bytes() -> u64 {
    settings().project_doc_max_bytes.unwrap_or(PROJECT_DOC_DEFAULT)
}

/// Codex's settings as its `config.toml` has them now.
fn settings() -> CodexSettings {
    Codex
        .home(&Places::from_env())
        .and_then(|home| fsx::read_limited(&home.join("config.toml"), CONFIG_LIMIT).ok())
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .map(|text| parse_settings(&text))
        .unwrap_or_default()
}

/// Codex's usable share of a model's window (`effective_context_window_percent`).
pub const USABLE_PCT: u64 = 95;

/// The model's raw window from the usable one Codex reports (`model_context_window` in
/// the rollout is already 95 % of it) (pure).
fn raw_window(usable: u64) -> u64 {
    (usable * 100).div_ceil(USABLE_PCT)
}

/// Where Codex compacts (pure): at 90 % of the raw window, or at
/// `model_auto_compact_token_limit` when that is lower (it can only lower it).
fn compaction_point(raw_window: Option<u64>, limit: Option<u64>) -> Option<u64> {
    let by_window = raw_window.filter(|w| *w > 0).map(|w| w * 9 / 10);
    match (by_window, limit) {
        (Some(w), Some(l)) => Some(w.min(l)),
        (w, l) => w.or(l),
    }
}

/// What the user still has to do in Codex for the hooks in `hooks_file` to run: Codex
/// skips every hook until the user trusts it, and again after its command changes.
fn trust_note(hooks_file: &Path, places: &Places, is_baton_hook: &dyn Fn(&str) -> bool) -> String {
    let settings: Option<serde_json::Value> = fsx::read_through_symlink(hooks_file, SETTINGS_LIMIT)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    let hooks = settings
        .map(|s| codex_trust::baton_hooks(&s, &codex_trust::key_path(hooks_file), is_baton_hook))
        .unwrap_or_default();
    let states = places
        .host_dir(HostKind::Codex, Scope::User)
        .ok()
        .and_then(|home| codex_trust::load_states(&codex_trust::config_path(&home)).ok())
        .unwrap_or_default();
    let waiting = hooks.iter().filter(|h| codex_trust::trust(h, &states) != Trust::Trusted).count();
    if !hooks.is_empty() && waiting == 0 {
        return "Codex: baton's hooks are trusted; nothing more to do.".to_string();
    }
    format!(
        "Codex runs a hook only once you trust it, and again after its command changes: {waiting} of \
         baton's {} are not trusted for their current command. One time: {}.",
        hooks.len(),
        codex_trust::TRUST_STEP
    )
}

/// Whether Codex runs baton's hooks: each hook in the Codex settings files against the
/// trust Codex keeps in its config.toml (`states`, read from the file shown as `config`).
/// `key_path` names a hooks file as Codex does in its trust keys. None when no Codex file
/// registers baton (the hooks check says so) (pure over what was read).
fn trust_check(
    facts: &TrustFacts,
    states: &Result<BTreeMap<String, HookState>, ConfigError>,
    config: &str,
    key_path: &dyn Fn(&Path) -> String,
) -> Option<TrustFinding> {
    let name = "hook trust (Codex)";
    let mut verdicts: Vec<(Trust, String, &str)> = Vec::new();
    for file in facts.files {
        for hook in codex_trust::baton_hooks(file.settings, &key_path(file.path), facts.is_baton_hook) {
            let trust = match states {
                Ok(states) => codex_trust::trust(&hook, states),
                Err(_) => Trust::Untrusted,
            };
            verdicts.push((trust, hook.event, file.shown));
        }
    }
    if verdicts.is_empty() {
        return None;
    }
    let mut shown: Vec<&str> = verdicts.iter().map(|v| v.2).collect();
    shown.dedup();
    let shown = shown.join(", ");
    if let Err(e) = states {
        return Some(TrustFinding::warn(
            name,
            format!("cannot tell whether Codex trusts baton's hooks ({shown}): {config} {e}"),
            format!("fix {config} (Codex cannot read it either)"),
        ));
    }
    let events = |wanted: Trust| -> Vec<&str> {
        verdicts.iter().filter(|v| v.0 == wanted).map(|v| v.1.as_str()).collect()
    };
    let (untrusted, outdated, disabled) =
        (events(Trust::Untrusted), events(Trust::Outdated), events(Trust::Disabled));
    if untrusted.is_empty() && outdated.is_empty() && disabled.is_empty() {
        return Some(TrustFinding::ok(
            name,
            format!("Codex trusts {} for its current command ({shown})", events(Trust::Trusted).join(", ")),
        ));
    }
    let mut problems = Vec::new();
    if !untrusted.is_empty() {
        problems.push(format!("{} not trusted yet", untrusted.join(", ")));
    }
    if !outdated.is_empty() {
        problems.push(format!("{} trusted for an older command (re-trust)", outdated.join(", ")));
    }
    if !disabled.is_empty() {
        problems.push(format!("{} turned off in Codex", disabled.join(", ")));
    }
    let fix = if untrusted.is_empty() && outdated.is_empty() {
        "turn baton's hooks on again in `/hooks` in a Codex session".to_string()
    } else {
        codex_trust::TRUST_STEP.to_string()
    };
    Some(TrustFinding::warn(
        name,
        format!("{}: Codex skips these until you trust them ({shown})", problems.join("; ")),
        fix,
    ))
}

#[cfg(test)]
mod tests {
    use super::super::SettingsSeen;
    use super::*;
    use crate::install::merge::{self, Plan, Record};
    use serde_json::{Value, json};

    #[test]
    fn a_session_start_without_turn_id_is_told_by_its_rollout() {
        let input: HookInput = serde_json::from_slice(include_bytes!(
            "../../tests/fixtures/real/codex/SessionStart-compact.json"
        ))
        .unwrap();
        assert_eq!(input.turn_id, None);
        assert_eq!(HostKind::detect(&input, false), HostKind::Codex);
        let claude: HookInput = serde_json::from_slice(include_bytes!(
            "../../tests/fixtures/real/claude/SessionStart-compact.json"
        ))
        .unwrap();
        assert_eq!(HostKind::detect(&claude, false), HostKind::Claude);
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
        assert_eq!(s.project_doc_max_bytes, None);
        assert_eq!(parse_settings("not toml [").auto_compact_limit, None);
        assert_eq!(parse_settings("project_doc_max_bytes = 500000\n").project_doc_max_bytes, Some(500_000));
    }

    const THIS: &str = "/opt/bin/baton";

    fn installed(binary: &str) -> Value {
        let plan = Plan {
            host: HostKind::Codex,
            binary: binary.into(),
            hooks: true,
            statusline: true,
            replace_statusline: false,
            replace_other_monitors: false,
            subagent_rows: false,
        };
        merge::install(&json!({}), &plan, &Record::default()).unwrap().settings
    }

    fn check(
        settings: &Value,
        states: &Result<BTreeMap<String, HookState>, ConfigError>,
    ) -> Option<TrustFinding> {
        let path = PathBuf::from("/codex-user");
        let files = [SettingsSeen {
            scope: Scope::User,
            path: &path,
            shown: "codex-user",
            settings,
            registers_baton: true,
        }];
        let places = Places::default();
        let facts = TrustFacts { places: &places, files: &files, is_baton_hook: &codex_trust::is_baton_hook };
        trust_check(&facts, states, "~/.codex/config.toml", &|p: &Path| p.display().to_string())
    }

    fn codex_check(settings: Value, config: &str) -> TrustFinding {
        check(&settings, &codex_trust::parse_states(config)).expect("a check")
    }

    #[test]
    fn codex_trust_is_reported_with_its_fix() {
        let settings = installed(THIS);
        let hooks = codex_trust::baton_hooks(&settings, "/codex-user", &codex_trust::is_baton_hook);
        assert_eq!(hooks.len(), 8);
        let trusted: String = hooks
            .iter()
            .map(|h| format!("[hooks.state.\"{}\"]\ntrusted_hash = \"{}\"\n", h.key, h.hash))
            .collect();
        let found = codex_check(settings.clone(), &trusted);
        assert!(!found.warn, "{found:?}");
        assert!(
            found.message.contains(
                "PostToolUse, PreToolUse, UserPromptSubmit, Stop, SessionStart, PreCompact, SessionEnd, PostCompact"
            ),
            "{found:?}"
        );

        let found = codex_check(settings.clone(), "");
        assert!(found.warn);
        assert!(found.message.contains("not trusted yet"), "{found:?}");
        assert!(found.fix.as_deref().unwrap().contains("Hooks need review"));

        // baton moved: the stored hash is for the old command.
        let found = codex_check(installed("/old/baton"), &trusted);
        assert!(found.warn);
        assert!(found.message.contains("trusted for an older command (re-trust)"), "{found:?}");

        let off = trusted.replacen("trusted_hash", "enabled = false\ntrusted_hash", 1);
        let found = codex_check(settings.clone(), &off);
        assert!(found.message.contains("PostToolUse turned off in Codex"), "{found:?}");
        assert!(found.fix.as_deref().unwrap().contains("/hooks"));

        let found = check(&settings, &codex_trust::parse_states("[oops"));
        assert!(found.unwrap().message.contains("cannot tell"));
        // No baton hook in Codex: nothing to say here (the hooks check fails instead).
        assert!(check(&json!({}), &Ok(BTreeMap::new())).is_none());
    }
}
