//! Kilo CLI (tested: 7.7.7, `kilo run` against a custom OpenAI-compatible provider), built
//! on OpenCode: the same plugin API, so baton's OpenCode plugin ([`super::opencode`]) runs
//! there unchanged, from Kilo's own folders: `$XDG_CONFIG_HOME/kilo`, else
//! `~/.config/kilo` (user), and `<project>/.kilo` (project). The plugin names the host it
//! was written for in its report (`opencode.host`); everything else (events, figure,
//! window, envelope, stop, compaction) is OpenCode's.

use std::path::{Path, PathBuf};

use super::spec::{Compaction, InstallFacts, RecordQuery, Recorded, Spec, TrustFacts, TrustFinding};
use super::{HookInput, Host, Places, opencode};

/// Kilo CLI.
pub struct KiloCli;

/// OpenCode's, but for its name and folders.
pub const SPEC: Spec = Spec {
    id: "kilo",
    name: "Kilo CLI",
    flag_help: "Kilo CLI (baton's OpenCode plugin)",
    figure_words: " (This figure was reported by Kilo CLI to baton's plugin: its last model reply.)",
    project_folder: ".kilo",
    ..opencode::SPEC
};

impl Host for KiloCli {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }

    /// The plugin's report names Kilo CLI.
    fn detect(&self, input: &HookInput, _gemini_key_set: bool) -> u8 {
        if input.opencode.as_ref().is_some_and(|r| r.host.as_deref() == Some(SPEC.id)) { 5 } else { 0 }
    }

    /// `$XDG_CONFIG_HOME/kilo`, else `~/.config/kilo`.
    fn home(&self, places: &Places) -> Option<PathBuf> {
        opencode::config_home(places, "kilo")
    }

    fn record(&self, query: &RecordQuery) -> Option<Recorded> {
        opencode::record(query)
    }

    fn compaction(&self, window: Option<u64>, project: Option<&Path>, model_key: Option<&str>) -> Compaction {
        opencode::compaction(window, project, model_key)
    }

    fn install_notes(&self, _facts: &InstallFacts) -> Vec<String> {
        vec![format!("{}.", opencode::TRUST_NOTE)]
    }

    fn trust_findings(&self, _facts: &TrustFacts) -> Vec<TrustFinding> {
        opencode::trust_findings(&SPEC)
    }
}
