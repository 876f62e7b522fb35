//! Claude Code: its figure lives in the statusline payload (and the bridge the statusline
//! writes) and in the transcript at `transcript_path`; its windows are 200,000 or
//! 1,000,000 tokens; it compacts some tokens short of the window (the rule in
//! `metrics::headroom`); a failed tool call is `PostToolUseFailure`, answered with an
//! envelope of that name.
//!
//! The transcript is written through a queue flushed every 100 ms (Claude Code 2.1.332's
//! session storage: `FLUSH_INTERVAL_MS=100`), so at PostToolUse time in `claude -p` the
//! assistant line that issued the tool call is often not in the file yet. Observed with
//! the real 2.1.332 against a stand-in server (a probe hook polling every 10 ms, 16 tool
//! calls): the line was there at the probe's first look in 13, and arrived at most
//! 91 ms after the hook started in all 16. So a wait of at most 250 ms catches it;
//! [`plan_wait`] decides whether the wait is worth it, [`read_since`] is the bounded read,
//! and [`project_tokens`] is the estimate when the wait runs out.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{EventSpec, HookInput, Places, Scope};
use crate::transcript::claude::figure::{TranscriptTail, read_since, read_subagent, transcript_len};

pub const NAME: &str = "Claude Code";
pub const ID: &str = "claude";
/// The hook timeout, in seconds.
pub const HOOK_TIMEOUT: u64 = 10;
pub const HAS_STATUSLINE: bool = true;
/// `subagentStatusLine`: a command per agent-panel refresh, one `{"id", "content"}` line
/// per subagent back (marked deprecated in 2.1.332's settings schema, still run).
pub const HAS_SUBAGENT_STATUSLINE: bool = true;

/// Whether a hook's `continue: false` stops the agent (the pause). Claude Code 2.1.332 ends the turn on a PostToolUse `continue: false` (seen on the real CLI).
pub const HONOURS_STOP: bool = true;
/// A hook's `systemMessage` is shown as "⎿ <Event> says: …" in the interactive pane (not
/// in `claude -p`).
pub const SHOWS_SYSTEM_MESSAGE: bool = true;
/// 2.1.332 accepts `terminalSequence` (OSC 0/1/2/9/99/777 and BEL; an OSC 9 body may not
/// start with a digit) and emits it for the hook.
pub const EMITS_TERMINAL_SEQUENCE: bool = true;
pub const SCOPES: &[Scope] = &[Scope::User, Scope::Project, Scope::Local];
pub const PROJECT_FOLDER: &str = ".claude";

/// A failed tool call fires PostToolUseFailure instead of PostToolUse (same handler);
/// PostToolBatch follows the PostToolUse calls of one reply, UserPromptSubmit starts a
/// turn, Stop ends one (its context makes the agent take one more step: answered at
/// most once per level); SubagentStop lets baton forget a subagent's context;
/// SessionEnd lets baton mark the session ended.
pub const EVENTS: &[EventSpec] = &[
    EventSpec::new("PostToolUse", Some("*")),
    EventSpec::new("PostToolUseFailure", Some("*")),
    EventSpec::new("PostToolBatch", None),
    EventSpec::new("UserPromptSubmit", None),
    EventSpec::new("Stop", None),
    EventSpec::new("SubagentStop", None),
    EventSpec::new("SessionStart", None),
    EventSpec::new("PreCompact", None),
    EventSpec::new("SessionEnd", None),
    // The compaction audit: PostCompact reads the summary, the next UserPromptSubmit (or
    // PostToolUse) carries what it dropped.
    EventSpec::new("PostCompact", None),
];

/// The windows Claude Code's models use, smallest first (2.1.332's catalog: 200,000, or
/// 1,000,000 natively or with `[1m]`; see `metrics::windows::CLAUDE_TABLE`).
pub const WINDOWS: &[u64] = &[200_000, 1_000_000];

/// Claude Code sends nothing of its own: it is the host when no other claims the event.
pub fn detect(_input: &HookInput, _gemini_key_set: bool) -> u8 {
    0
}

/// `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub fn home(places: &Places) -> Option<PathBuf> {
    places.claude_config_dir.clone().or_else(|| places.home.as_ref().map(|h| h.join(PROJECT_FOLDER)))
}

/// Claude Code's config folder as the environment has it now.
pub fn config_dir() -> Option<PathBuf> {
    home(&Places::from_env())
}

/// The transcript of session `id` in any project of the Claude config folder (the newest
/// when several projects hold one), never through a symlink.
pub fn transcript_of(id: &str) -> Option<PathBuf> {
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
pub fn encode_project_dir(path: &Path) -> String {
    path.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

/// The newest transcript of the project at `root` (or `cwd`) in the Claude config folder.
pub fn newest_transcript(root: &Path, cwd: &Path) -> Option<PathBuf> {
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

/// The settings file of a scope.
pub fn settings_file(scope: Scope) -> &'static str {
    match scope {
        Scope::Local => "settings.local.json",
        Scope::User | Scope::Project => "settings.json",
    }
}

/// What Claude Code's environment and settings files set about compaction and windows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompactionSettings {
    /// `CLAUDE_CODE_AUTO_COMPACT_WINDOW` (tokens; `150k`, `1m` allowed).
    pub env_window: Option<u64>,
    /// `autoCompactWindow`: `modelSettings.<model>.autoCompactWindow` over the top level,
    /// a later file (user, project, local) over an earlier one.
    pub settings_window: Option<u64>,
    /// `DISABLE_AUTO_COMPACT`, or `autoCompactEnabled: false` in a settings file.
    pub disabled: bool,
}

/// Bytes read of one settings file at most.
const SETTINGS_LIMIT: u64 = 1024 * 1024;

/// A token count as Claude Code reads it: an integer, or one with a `k`/`m` suffix (pure).
pub fn parse_tokens(text: &str) -> Option<u64> {
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
pub fn truthy(value: Option<&str>) -> bool {
    value.is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"))
}

/// `CLAUDE_CODE_DISABLE_1M_CONTEXT` is on: Claude Code holds every model to 200,000.
pub fn one_m_disabled() -> bool {
    truthy(std::env::var("CLAUDE_CODE_DISABLE_1M_CONTEXT").ok().as_deref())
}

/// The compaction settings of settings files' texts in precedence order, earliest
/// first, for `model_key` (Claude Code's canonical id, no `[1m]`) (pure).
pub fn settings_from(texts: &[&[u8]], model_key: Option<&str>) -> CompactionSettings {
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
pub fn compaction_settings(project: Option<&Path>, model_key: Option<&str>) -> CompactionSettings {
    let read = |path: PathBuf| crate::fsx::read_limited(&path, SETTINGS_LIMIT).ok();
    let mut texts: Vec<Vec<u8>> = Vec::new();
    texts.extend(config_dir().and_then(|d| read(d.join(settings_file(Scope::User)))));
    if let Some(project) = project {
        let folder = project.join(PROJECT_FOLDER);
        texts.extend(read(folder.join(settings_file(Scope::Project))));
        texts.extend(read(folder.join(settings_file(Scope::Local))));
    }
    let slices: Vec<&[u8]> = texts.iter().map(Vec::as_slice).collect();
    let mut settings = settings_from(&slices, model_key);
    settings.env_window =
        std::env::var("CLAUDE_CODE_AUTO_COMPACT_WINDOW").ok().and_then(|v| parse_tokens(&v));
    settings.disabled |= truthy(std::env::var("DISABLE_AUTO_COMPACT").ok().as_deref());
    settings
}

/// The longest the hook waits for the transcript to catch up with the tool call.
pub const WAIT_MAX: Duration = Duration::from_millis(250);
/// How often the transcript is looked at while waiting.
pub const WAIT_STEP: Duration = Duration::from_millis(25);
/// Only a figure this close (in points of used %) below a threshold is worth a wait.
pub const WAIT_NEAR_POINTS: f64 = 10.0;

/// What to do when the tool call's own reply may not be in the transcript yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitPlan {
    /// The figure is current, or nothing hangs on it: use it as it is.
    UseAsIs,
    /// Wait (at most [`WAIT_MAX`]) for the reply to be written.
    Wait,
}

/// Decides whether to wait for the transcript (pure). Only when the tool call's
/// `tool_use_id` is known and missing from the transcript, and the reply can change what
/// is said (`worth`: the caller's stakes, see `metrics::wait_can_change_answer`; a
/// CRITICAL figure one call old can be 5-10 % low). What else the transcript holds does
/// not matter: with replies faster than the 100 ms flush, neither the reply nor the
/// previous tool result may be written yet.
pub fn plan_wait(tool_use_id_known: bool, tool_use_seen: bool, worth: bool) -> WaitPlan {
    if tool_use_id_known && !tool_use_seen && worth { WaitPlan::Wait } else { WaitPlan::UseAsIs }
}

/// A figure within [`WAIT_NEAR_POINTS`] below one of the thresholds (pure): one more
/// reply could cross it.
pub fn near_threshold(used_pct: f64, thresholds_used: &[f64]) -> bool {
    thresholds_used.iter().any(|t| *t > used_pct && *t - used_pct <= WAIT_NEAR_POINTS)
}

/// Near a threshold, or past the last one (pure): where the tool call's own reply is
/// worth a wait.
pub fn worth_waiting(used_pct: f64, thresholds_used: &[f64]) -> bool {
    near_threshold(used_pct, thresholds_used)
        || thresholds_used.iter().copied().reduce(f64::max).is_some_and(|last| used_pct >= last)
}

/// A first call with no figure yet (pure): the transcript alone, at about four bytes a
/// token, could already be near a threshold of the smallest window, so the reply that
/// issued the call is worth a wait.
pub fn large_enough_to_wait(transcript_len: u64, thresholds_used: &[f64]) -> bool {
    let smallest = WINDOWS.iter().copied().min().unwrap_or(200_000) as f64;
    let tokens = (transcript_len / 4) as f64;
    thresholds_used.iter().any(|t| tokens * 100.0 / smallest >= t - WAIT_NEAR_POINTS)
}

/// The tokens a missing reply will hold, projected (pure): the last figure plus what was
/// written after it (the tool results it will read), at about four bytes a token.
pub fn project_tokens(last_tokens: u64, bytes_after_figure: u64) -> u64 {
    last_tokens.saturating_add(bytes_after_figure / 4)
}

/// Waits (at most [`WAIT_MAX`]) for `tool_use_id` to be written after `from`, looking
/// again only when the file grew. Returns the tail that holds it, if it came in time.
pub fn wait_for_tool_use(path: &Path, from: u64, tool_use_id: &str, len: u64) -> Option<TranscriptTail> {
    wait_reading(path, tool_use_id, len, || read_since(path, from, Some(tool_use_id)).ok())
}

/// [`wait_for_tool_use`] on a subagent's own transcript (its sidechain replies).
pub fn wait_for_subagent_tool_use(path: &Path, tool_use_id: &str, len: u64) -> Option<TranscriptTail> {
    wait_reading(path, tool_use_id, len, || read_subagent(path, Some(tool_use_id)).ok())
}

fn wait_reading(
    path: &Path,
    tool_use_id: &str,
    mut len: u64,
    read: impl Fn() -> Option<TranscriptTail>,
) -> Option<TranscriptTail> {
    if tool_use_id.is_empty() {
        return None;
    }
    let start = Instant::now();
    while start.elapsed() + WAIT_STEP <= WAIT_MAX {
        std::thread::sleep(WAIT_STEP);
        let now_len = transcript_len(path)?;
        if now_len == len {
            continue;
        }
        len = now_len;
        let tail = read()?;
        if tail.tool_use_seen {
            return Some(tail);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn project_folders_are_encoded_like_claude_code() {
        assert_eq!(encode_project_dir(Path::new("/home/dev/shop-api")), "-home-dev-shop-api");
        assert_eq!(encode_project_dir(Path::new("/a/b.c_d")), "-a-b-c-d");
    }

    use super::*;

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

    #[test]
    fn waits_only_when_missing_and_worth_it() {
        assert_eq!(plan_wait(true, false, true), WaitPlan::Wait);
        assert_eq!(plan_wait(true, true, true), WaitPlan::UseAsIs, "the reply is written");
        assert_eq!(plan_wait(false, false, true), WaitPlan::UseAsIs, "no id to look for");
        assert_eq!(plan_wait(true, false, false), WaitPlan::UseAsIs, "nothing hangs on it");
    }

    #[test]
    fn worth_waiting_near_or_past_a_threshold() {
        let thresholds = [65.0, 75.0];
        assert!(worth_waiting(60.0, &thresholds));
        assert!(worth_waiting(70.0, &thresholds), "10 points below CRITICAL");
        assert!(!worth_waiting(40.0, &thresholds), "far from any threshold");
        assert!(worth_waiting(80.0, &thresholds), "past the last threshold");
        assert!(worth_waiting(55.0, &thresholds), "exactly 10 points");
    }

    #[test]
    fn a_first_call_waits_only_on_a_large_transcript() {
        let thresholds = [65.0, 75.0];
        assert!(!large_enough_to_wait(100_000, &thresholds));
        assert!(large_enough_to_wait(440_000, &thresholds), "110k tokens: 55 % of 200k");
    }

    #[test]
    fn projection_adds_what_was_written_since() {
        assert_eq!(project_tokens(120_000, 40_000), 130_000);
        assert_eq!(project_tokens(u64::MAX, 8), u64::MAX);
    }
}
