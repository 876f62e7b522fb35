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

use std::path::PathBuf;

use serde_json::Value;

use super::{EventSpec, HookInput, Places, Scope};
use crate::fsx;

pub const NAME: &str = "Factory Droid";
pub const ID: &str = "droid";
/// The hook timeout, in seconds.
pub const HOOK_TIMEOUT: u64 = 10;
pub const HAS_STATUSLINE: bool = false;

/// Whether a hook's `continue: false` stops the agent (the pause): yes. Droid 0.225.2
/// throws its hook-stop error on a PostToolUse `continue: false`, which ends the run
/// ("Execution stopped by hook"; `droid exec` exits), as Claude Code does.
pub const HONOURS_STOP: bool = true;

/// Whether Factory Droid shows a hook's `systemMessage` was not checked on its real CLI: baton
/// does not count on it, so no notice is sent there.
pub const SHOWS_SYSTEM_MESSAGE: bool = false;

/// Factory Droid is not known to emit a hook's `terminalSequence`.
pub const EMITS_TERMINAL_SEQUENCE: bool = false;
pub const SCOPES: &[Scope] = &[Scope::User, Scope::Project];
pub const PROJECT_FOLDER: &str = ".factory";
/// The environment variables only Factory Droid sets for its hooks.
pub const ENV_MARKS: &[&str] = &["FACTORY_PROJECT_DIR", "DROID_PROJECT_DIR"];

pub const EVENTS: &[EventSpec] = &[
    EventSpec::new("PostToolUse", Some("*")),
    EventSpec::new("PostToolUseFailure", Some("*")),
    EventSpec::new("SessionStart", None),
    EventSpec::new("PreCompact", None),
    EventSpec::new("SessionEnd", None),
];

/// Windows Droid's models use, smallest first.
pub const WINDOWS: &[u64] = &[200_000, 1_000_000];
const SETTINGS_LIMIT: u64 = 4 * 1024 * 1024;

/// Nothing in the event itself is Droid's own: see [`detect_env`].
pub fn detect(_input: &HookInput, _gemini_key_set: bool) -> u8 {
    0
}

/// Whether the hook's environment is Factory Droid's.
pub fn detect_env(var: &dyn Fn(&str) -> bool) -> bool {
    ENV_MARKS.iter().any(|name| var(name))
}

/// `~/.factory`.
pub fn home(places: &Places) -> Option<PathBuf> {
    places.home.as_ref().map(|h| h.join(PROJECT_FOLDER))
}

/// The settings file of a scope.
pub fn settings_file(_scope: Scope) -> &'static str {
    "settings.json"
}

/// The compaction limit a settings file's text gives `model` (pure).
pub fn compaction_limit_from_settings(bytes: &[u8], model: Option<&str>) -> Option<u64> {
    let value = serde_json::from_slice::<Value>(bytes).ok()?;
    let per_model = model.and_then(|m| value.pointer("/compactionTokenLimitPerModel")?.get(m)?.as_u64());
    per_model.or_else(|| value.get("compactionTokenLimit")?.as_u64()).filter(|l| *l > 0)
}

/// The compaction limit in the user's settings, for `model`.
pub fn compaction_limit(model: Option<&str>) -> Option<u64> {
    let places = Places { home: crate::places::home_dir(), ..Places::default() };
    let path = home(&places)?.join(settings_file(Scope::User));
    let bytes = fsx::read_limited(&path, SETTINGS_LIMIT).ok()?;
    compaction_limit_from_settings(&bytes, model)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compaction_limit_per_model_wins() {
        let settings =
            br#"{"compactionTokenLimit": 200000, "compactionTokenLimitPerModel": {"custom:A-0": 120000}}"#;
        assert_eq!(compaction_limit_from_settings(settings, Some("custom:A-0")), Some(120_000));
        assert_eq!(compaction_limit_from_settings(settings, Some("other")), Some(200_000));
        assert_eq!(compaction_limit_from_settings(b"{}", None), None);
    }
}
