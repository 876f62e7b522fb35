//! Gemini CLI: no hook payload carries a figure; the chat recording at `transcript_path`
//! (JSONL) does, one `{"type": "gemini", "tokens": {"input": N, …}, "model": …}` line per
//! reply, where `input` is the whole prompt. Its models have 1,048,576-token windows. It
//! compresses the history once the prompt reaches `model.compressionThreshold` (settings:
//! `~/.gemini/settings.json`, then the project's `.gemini/settings.json`; default 0.5) of
//! the window. It fires `PreCompress` before every model call, compressing or not: only a
//! PreCompress at or past that point is a compaction.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{EventSpec, HookInput, PauseStop, Places, Scope};
use crate::fsx;

pub const NAME: &str = "Gemini CLI";
pub const ID: &str = "gemini";
/// The hook timeout, in milliseconds (Gemini's unit).
pub const HOOK_TIMEOUT: u64 = 10_000;
pub const HAS_STATUSLINE: bool = false;

/// Whether a hook's `continue: false` stops the agent (the pause). It does in 0.61.0, at
/// BeforeTool and AfterTool alike (the call ends with `stop_execution`; `gemini -p` prints
/// "Agent execution stopped: <reason>" and exits 0, the interactive UI shows that line
/// and stops responding; seen on the real CLI, read in its bundle).
pub const HONOURS_STOP: bool = true;
/// Where the pause stops it: at an AfterTool the stop takes the place of the call's output
/// in the history (and the model's next request), so the next context would not know the
/// call ran; at the next call's BeforeTool the turn ends before that call runs.
pub const PAUSE_STOP: PauseStop = PauseStop::BeforeTheNextCall;
/// Every hook's `systemMessage` is shown in the interactive UI (0.61.0).
pub const SHOWS_SYSTEM_MESSAGE: bool = true;
pub const EMITS_TERMINAL_SEQUENCE: bool = false;
pub const SCOPES: &[Scope] = &[Scope::User, Scope::Project];
pub const PROJECT_FOLDER: &str = ".gemini";

pub const EVENTS: &[EventSpec] = &[
    EventSpec::new("AfterTool", None),
    // Answered only while the pause stops the agent (its stop comes before the call).
    EventSpec::new("BeforeTool", None),
    EventSpec::new("BeforeAgent", None),
    // Silent: where the pause stopped the agent, the handoff is written again at the turn's
    // end, once the last grace call's output is in the chat recording.
    EventSpec::new("AfterAgent", None),
    EventSpec::new("SessionStart", None),
    EventSpec::new("PreCompress", None),
    EventSpec::new("SessionEnd", None),
];

/// Gemini's own event names, or no name with `GEMINI_API_KEY` set (GSD's fallback for
/// old versions), are sure; a `timestamp` field alone is a hint.
pub fn detect(input: &HookInput, gemini_key_set: bool) -> u8 {
    match input.hook_event_name.as_deref() {
        Some("AfterTool" | "BeforeTool" | "PreCompress" | "BeforeAgent" | "AfterAgent") => 3,
        None if gemini_key_set => 3,
        _ if input.timestamp.is_some() => 1,
        _ => 0,
    }
}

/// `~/.gemini`.
pub fn home(places: &Places) -> Option<PathBuf> {
    places.home.as_ref().map(|h| h.join(PROJECT_FOLDER))
}

/// The settings file of a scope.
pub fn settings_file(_scope: Scope) -> &'static str {
    "settings.json"
}

/// Windows of Gemini models, smallest first.
pub const WINDOWS: &[u64] = &[256_000, 1_048_576];
/// Gemini CLI compresses at this fraction of the window unless its settings say otherwise.
pub const DEFAULT_COMPRESSION_THRESHOLD: f64 = 0.5;
const SETTINGS_LIMIT: u64 = 1024 * 1024;

/// `model.compressionThreshold` from a settings file's text, when valid (pure).
pub fn threshold_from_settings(bytes: &[u8]) -> Option<f64> {
    let value = serde_json::from_slice::<Value>(bytes).ok()?;
    value.pointer("/model/compressionThreshold").and_then(Value::as_f64).filter(|t| *t > 0.0 && *t <= 1.0)
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

/// Whether Gemini CLI trusts the folder `location` by the rules of its
/// `trustedFolders.json` (pure): the longest matching rule wins; `TRUST_FOLDER` covers the
/// folder and everything below it, `TRUST_PARENT` its parent's, `DO_NOT_TRUST` distrusts.
/// `None` when no rule matches (untrusted while folder trust is on).
pub fn folder_trusted(rules: &Value, location: &Path) -> Option<bool> {
    let rules = rules.as_object()?;
    let mut best: Option<(usize, &str)> = None;
    for (rule_path, level) in rules {
        let Some(level) = level.as_str() else { continue };
        let rule = Path::new(rule_path);
        let effective = if level == "TRUST_PARENT" { rule.parent().unwrap_or(rule) } else { rule };
        if location.starts_with(effective) && best.is_none_or(|(len, _)| rule_path.len() > len) {
            best = Some((rule_path.len(), level));
        }
    }
    match best?.1 {
        "DO_NOT_TRUST" => Some(false),
        "TRUST_FOLDER" | "TRUST_PARENT" => Some(true),
        _ => None,
    }
}

/// What `install --scope project` and `doctor` say when Gemini CLI will not run the
/// project's hooks: folder trust is on (`security.folderTrust.enabled`, on by default) and
/// `project` is not a trusted folder. `None` when the hooks will run.
pub fn untrusted_project_note(project: &Path, places: &Places) -> Option<String> {
    let read = |path: &Path| {
        fsx::read_through_symlink(path, SETTINGS_LIMIT)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
    };
    let gemini_home = home(places)?;
    let enabled = read(&gemini_home.join(settings_file(Scope::User)))
        .and_then(|s| s.pointer("/security/folderTrust/enabled").and_then(Value::as_bool))
        .unwrap_or(true);
    if !enabled {
        return None;
    }
    let rules_path = std::env::var_os("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| gemini_home.join("trustedFolders.json"));
    let location = project.canonicalize().unwrap_or_else(|_| project.to_path_buf());
    let trusted = read(&rules_path).and_then(|rules| folder_trusted(&rules, &location));
    (trusted != Some(true)).then(|| {
        format!(
            "Gemini CLI runs a project's hooks (.gemini/settings.json) only in a folder you trust, and {} is not trusted: start `gemini` there and trust the folder when it asks (or later with /permissions), or install in user scope (`baton install --host gemini`).",
            location.display()
        )
    })
}

/// The token count where Gemini CLI compresses a `window`-token conversation.
pub fn compression_point(window: u64, threshold: f64) -> u64 {
    (window as f64 * threshold).round() as u64
}

/// Whether a PreCompress is a real compression (pure): a manual `/compress` always is;
/// an automatic one only when the prompt has reached the compression point. With no
/// figure there is nothing to compress.
pub fn is_real_compression(trigger: Option<&str>, tokens: Option<u64>, point: u64) -> bool {
    trigger == Some("manual") || tokens.is_some_and(|t| t >= point)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_trust_follows_gemini_clis_longest_rule() {
        let rules = serde_json::json!({
            "/work": "TRUST_FOLDER",
            "/work/secret": "DO_NOT_TRUST",
            "/home/u/repos/app": "TRUST_PARENT",
        });
        assert_eq!(folder_trusted(&rules, Path::new("/work/app")), Some(true));
        assert_eq!(folder_trusted(&rules, Path::new("/work/secret/x")), Some(false));
        assert_eq!(folder_trusted(&rules, Path::new("/home/u/repos/other")), Some(true), "the parent's");
        assert_eq!(folder_trusted(&rules, Path::new("/home/u")), None);
        assert_eq!(folder_trusted(&rules, Path::new("/workbench")), None, "a path, not a prefix");
    }

    #[test]
    fn thresholds_and_points() {
        assert_eq!(threshold_from_settings(br#"{"model": {"compressionThreshold": 0.7}}"#), Some(0.7));
        assert_eq!(threshold_from_settings(br#"{"model": {"compressionThreshold": 7}}"#), None);
        assert_eq!(threshold_from_settings(b"{}"), None);
        assert_eq!(compression_point(1_048_576, 0.5), 524_288);
    }

    #[test]
    fn only_a_prompt_at_the_point_is_compressed() {
        assert!(!is_real_compression(Some("auto"), Some(100_000), 524_288));
        assert!(!is_real_compression(Some("auto"), None, 524_288));
        assert!(is_real_compression(Some("auto"), Some(524_288), 524_288));
        assert!(is_real_compression(Some("manual"), Some(10), 524_288));
    }
}
