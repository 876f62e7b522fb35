//! Kilo CLI (tested: 7.7.7, `kilo run` against a custom OpenAI-compatible provider), built
//! on OpenCode: the same plugin API, so baton's OpenCode plugin ([`super::opencode`]) runs
//! there unchanged, from Kilo's own folders: `$XDG_CONFIG_HOME/kilo`, else
//! `~/.config/kilo` (user), and `<project>/.kilo` (project). The plugin names the host it
//! was written for in its report (`opencode.host`); everything else (events, figure,
//! window, envelope, stop, compaction) is OpenCode's.

use std::path::PathBuf;

use super::{HookInput, Places, Scope};

pub const NAME: &str = "Kilo CLI";
pub const ID: &str = "kilo";
pub const PROJECT_FOLDER: &str = ".kilo";

/// The plugin's report names Kilo CLI.
pub fn detect(input: &HookInput, _gemini_key_set: bool) -> u8 {
    if input.opencode.as_ref().is_some_and(|r| r.host.as_deref() == Some(ID)) { 5 } else { 0 }
}

/// `$XDG_CONFIG_HOME/kilo`, else `~/.config/kilo`.
pub fn home(places: &Places) -> Option<PathBuf> {
    super::opencode::config_home(places, "kilo")
}

/// The plugin file of a scope, inside the scope's config folder.
pub fn settings_file(scope: Scope) -> &'static str {
    super::opencode::settings_file(scope)
}
