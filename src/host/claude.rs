//! Claude Code: its figure lives in the statusline payload (and the bridge the statusline
//! writes) and in the transcript at `transcript_path` (`transcript::claude`); its windows
//! are 200,000 or 1,000,000 tokens; it compacts some tokens short of the window (the
//! formula in `metrics::headroom`, with what its environment and settings files set); a
//! failed tool call is `PostToolUseFailure`, answered with an envelope of that name. It
//! is the host baton assumes when nothing names one ([`super::HostKind::DEFAULT`]).
//!
//! The transcript is written through a queue flushed every 100 ms (Claude Code 2.1.332's
//! session storage: `FLUSH_INTERVAL_MS=100`), so at PostToolUse time in `claude -p` the
//! assistant line that issued the tool call is often not in the file yet. Observed with
//! the real 2.1.332 against a stand-in server (a probe hook polling every 10 ms, 16 tool
//! calls): the line was there at the probe's first look in 13, and arrived at most
//! 91 ms after the hook started in all 16. So a wait of at most 250 ms catches it
//! ([`SPEC`]'s `reply_wait`; the wait itself is the figure source's, `metrics::wait`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::spec::{
    Compaction, CompactionBrief, CompactionSettings, EventSpec, FigureSource, Grammar, Install, PauseStop,
    Payload, ReplyWait, Spec, Statusline,
};
use super::{Host, Places};
use crate::transcript::Format;

/// Claude Code.
pub struct ClaudeCode;

/// Claude Code's project-private settings file (its `local` scope).
const LOCAL_SETTINGS: &str = "settings.local.json";

pub const SPEC: Spec = Spec {
    id: "claude",
    name: "Claude Code",
    flag_help: "Claude Code",
    // A failed tool call fires PostToolUseFailure instead of PostToolUse (same handler);
    // PostToolBatch follows the PostToolUse calls of one reply, UserPromptSubmit starts a
    // turn, Stop ends one (its context makes the agent take one more step: answered at
    // most once per level); SubagentStop lets baton forget a subagent's context;
    // SessionEnd lets baton mark the session ended.
    events: &[
        EventSpec::new("PostToolUse", Some("*")),
        EventSpec::new("PostToolUseFailure", Some("*")),
        EventSpec::new("PostToolBatch", None),
        EventSpec::new("UserPromptSubmit", None),
        EventSpec::new("Stop", None),
        EventSpec::new("SubagentStop", None),
        EventSpec::new("SessionStart", None),
        EventSpec::new("PreCompact", None),
        EventSpec::new("SessionEnd", None),
        // The compaction audit: PostCompact reads the summary, the next UserPromptSubmit
        // (or PostToolUse) carries what it dropped.
        EventSpec::new("PostCompact", None),
    ],
    // Seconds.
    hook_timeout: 10,
    install: Install::Settings,
    project_folder: ".claude",
    project_folder_is_common: false,
    settings_file: "settings.json",
    local_settings_file: Some(LOCAL_SETTINGS),
    statusline: Some(Statusline { pointer: "/statusLine", file: None, payload: Payload::CLAUDE_SHAPED }),
    // `subagentStatusLine`: a command per agent-panel refresh, one `{"id", "content"}`
    // line per subagent back (marked deprecated in 2.1.332's settings schema, still run).
    subagent_statusline: true,
    enabled_plugins: true,
    disable_all_hooks: Some("disableAllHooks"),
    env_marks: &[],
    // 2.1.332's catalog: 200,000, or 1,000,000 natively or with `[1m]`; see
    // `metrics::windows::CLAUDE_TABLE`.
    windows: &[200_000, 1_000_000],
    figure_source: FigureSource::Statusline,
    figure_words: "",
    reply_wait: Some(ReplyWait { max: Duration::from_millis(250), step: Duration::from_millis(25) }),
    own_meter: Some(
        "Claude Code's own footer counts against the window less its output reserve, so it reads higher",
    ),
    transcript: Format::ClaudeCode,
    sends_messages: false,
    // 2.1.332 ends the turn on a PostToolUse `continue: false` (seen on the real CLI).
    honours_stop: true,
    pause_stop: PauseStop::AtTheCall,
    answers_stop: true,
    // A hook's `systemMessage` is shown as "⎿ <Event> says: …" in the interactive pane
    // (not in `claude -p`).
    shows_system_message: true,
    // 2.1.332 accepts `terminalSequence` (OSC 0/1/2/9/99/777 and BEL; an OSC 9 body may
    // not start with a digit) and emits it for the hook.
    emits_terminal_sequence: true,
    context_at_top_level: false,
    brief_on_first_prompt: false,
    compaction_brief: CompactionBrief::AfterTheAudit,
    pre_compact_blocks: true,
    headless: Grammar {
        subcommands: &[],
        switches: &["-p", "--print"],
        prompt_options: &[],
        positional_headless_unless: None,
        positional_joined: false,
        values: &[
            "--model",
            "-m",
            "--output-format",
            "--append-system-prompt",
            "--system-prompt",
            "--allowedTools",
            "--allowed-tools",
            "--disallowedTools",
            "--disallowed-tools",
            "--permission-mode",
            "--max-turns",
            "--settings",
            "--add-dir",
            "--mcp-config",
            "--input-format",
            "--fallback-model",
            "--session-id",
            "--agents",
        ],
        arrays: &[],
    },
    interactive_relay: true,
};

impl Host for ClaudeCode {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }

    /// Claude Code sends nothing of its own: it is the host when no other claims the
    /// event.
    fn detect(&self, _input: &super::HookInput, _gemini_key_set: bool) -> u8 {
        0
    }

    /// `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
    fn home(&self, places: &Places) -> Option<PathBuf> {
        places.claude_config_dir.clone().or_else(|| places.home.as_ref().map(|h| h.join(SPEC.project_folder)))
    }

    fn compaction(
        &self,
        _window: Option<u64>,
        project: Option<&Path>,
        model_key: Option<&str>,
    ) -> Compaction {
        Compaction::Formula(compaction_settings(project, model_key))
    }

    /// `CLAUDE_CODE_DISABLE_1M_CONTEXT` is on: Claude Code holds every model to 200,000.
    fn one_m_disabled(&self) -> bool {
        truthy(std::env::var("CLAUDE_CODE_DISABLE_1M_CONTEXT").ok().as_deref())
    }

    fn transcripts_dir(&self) -> Option<PathBuf> {
        config_dir().map(|dir| dir.join("projects"))
    }

    fn transcript_of(&self, id: &str) -> Option<PathBuf> {
        transcript_of(id)
    }

    fn newest_transcript(&self, root: &Path, cwd: &Path) -> Option<PathBuf> {
        newest_transcript(root, cwd)
    }

    fn transcripts_folder_name(&self, project: &Path) -> Option<String> {
        Some(encode_project_dir(project))
    }
}

/// Claude Code's config folder as the environment has it now.
fn config_dir() -> Option<PathBuf> {
    ClaudeCode.home(&Places::from_env())
}

/// The transcript of session `id` in any project of the Claude config folder (the newest
/// when several projects hold one), never through a symlink.
fn transcript_of(id: &str) -> Option<PathBuf> {
    let file_name = format!("{id}.jsonl");
    std::fs::read_dir(config_dir()?.join("projects"))
        .ok()?
        .flatten()
        .map(|entry| entry.path().join(&file_name))
        .filter(|path| !crate::fsx::is_symlink(path))
        .filter_map(|path| {
            let meta = std::fs::metadata(&path).ok().filter(|m| m.is_file())?;
            Some((meta.modified().ok(), path))
        })
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, path)| path)
}

/// Claude Code's name for a project's transcript folder: every character that is not a
/// letter or digit becomes `-` (`/home/dev/shop-api` → `-home-dev-shop-api`).
fn encode_project_dir(path: &Path) -> String {
    path.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

/// The newest transcript of the project at `root` (or `cwd`) in the Claude config folder.
fn newest_transcript(root: &Path, cwd: &Path) -> Option<PathBuf> {
    let projects = config_dir()?.join("projects");
    [root, cwd]
        .iter()
        .filter_map(|dir| std::fs::read_dir(projects.join(encode_project_dir(dir))).ok())
        .flat_map(|entries| entries.flatten())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl") && !crate::fsx::is_symlink(p))
        .filter_map(|p| std::fs::metadata(&p).and_then(|m| m.modified()).ok().map(|t| (t, p)))
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, p)| p)
}

/// Bytes read of one settings file at most.
const SETTINGS_LIMIT: u64 = 1024 * 1024;

/// A token count as Claude Code reads it: an integer, or one with a `k`/`m` suffix (pure).
fn parse_tokens(text: &str) -> Option<u64> {
    let t = text.trim().to_ascii_lowercase();
    let (digits, unit) = match t.strip_suffix('k') {
        Some(d) => (d, 1_000.0),
        None => match t.strip_suffix('m') {
            Some(d) => (d, 1_000_000.0),
            None => (t.as_str(), 1.0),
        },
    };
    let value = digits.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0)?;
    Some((value * unit).round() as u64)
}

/// An environment flag Claude Code treats as on (`1`, `true`, `yes`, `on`) (pure).
fn truthy(value: Option<&str>) -> bool {
    value.is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"))
}

/// The compaction settings of settings files' texts in precedence order, earliest
/// first, for `model_key` (Claude Code's canonical id, no `[1m]`) (pure).
fn settings_from(texts: &[&[u8]], model_key: Option<&str>) -> CompactionSettings {
    let window = |v: &serde_json::Value| match v {
        serde_json::Value::Number(n) => n.as_u64().filter(|n| *n > 0),
        serde_json::Value::String(s) => parse_tokens(s),
        _ => None,
    };
    let (mut per_model, mut top, mut disabled) = (None, None, false);
    for text in texts {
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(text) else { continue };
        if let Some(w) = value.get("autoCompactWindow").and_then(window) {
            top = Some(w);
        }
        if let Some(w) = model_key
            .and_then(|key| value.get("modelSettings")?.get(key)?.get("autoCompactWindow"))
            .and_then(window)
        {
            per_model = Some(w);
        }
        if let Some(enabled) = value.get("autoCompactEnabled").and_then(serde_json::Value::as_bool) {
            disabled = !enabled;
        }
    }
    CompactionSettings { env_window: None, settings_window: per_model.or(top), disabled }
}

/// The compaction settings as the environment and the settings files have them now:
/// the user's settings, then the project's `.claude/settings.json` and
/// `.claude/settings.local.json`.
fn compaction_settings(project: Option<&Path>, model_key: Option<&str>) -> CompactionSettings {
    let read = |path: PathBuf| crate::fsx::read_limited(&path, SETTINGS_LIMIT).ok();
    let mut texts: Vec<Vec<u8>> = Vec::new();
    texts.extend(config_dir().and_then(|d| read(d.join(SPEC.settings_file))));
    if let Some(project) = project {
        let folder = project.join(SPEC.project_folder);
        texts.extend(read(folder.join(SPEC.settings_file)));
        texts.extend(read(folder.join(LOCAL_SETTINGS)));
    }
    let slices: Vec<&[u8]> = texts.iter().map(Vec::as_slice).collect();
    let mut settings = settings_from(&slices, model_key);
    settings.env_window =
        std::env::var("CLAUDE_CODE_AUTO_COMPACT_WINDOW").ok().and_then(|v| parse_tokens(&v));
    settings.disabled |= truthy(std::env::var("DISABLE_AUTO_COMPACT").ok().as_deref());
    settings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_folders_are_encoded_like_claude_code() {
        assert_eq!(encode_project_dir(Path::new("/home/dev/shop-api")), "-home-dev-shop-api");
        assert_eq!(encode_project_dir(Path::new("/a/b.c_d")), "-a-b-c-d");
    }

    #[test]
    fn compaction_settings_in_their_order() {
        assert_eq!(parse_tokens("150k"), Some(150_000));
        assert_eq!(parse_tokens("1m"), Some(1_000_000));
        assert_eq!(parse_tokens("200000"), Some(200_000));
        assert_eq!(parse_tokens("auto"), None);
        let user = br#"{"autoCompactWindow": 500000, "modelSettings": {"claude-opus-4-7": {"autoCompactWindow": 300000}}}"#;
        let s = settings_from(&[user], Some("claude-opus-4-7"));
        assert_eq!(s.settings_window, Some(300_000), "per model beats the top level");
        assert_eq!(settings_from(&[user], Some("claude-sonnet-4-5")).settings_window, Some(500_000));
        let project = br#"{"autoCompactWindow": 250000}"#;
        assert_eq!(settings_from(&[user, project], Some("claude-sonnet-4-5")).settings_window, Some(250_000));
        assert_eq!(settings_from(&[br#"{"autoCompactWindow": "auto"}"#], None).settings_window, None);
        assert!(settings_from(&[br#"{"autoCompactEnabled": false}"#], None).disabled);
        assert_eq!(settings_from(&[b"not json"], None), CompactionSettings::default());
        assert!(truthy(Some("1")) && truthy(Some("true")) && !truthy(Some("0")) && !truthy(None));
    }
}
