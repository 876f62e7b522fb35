//! `baton hook`: one hook event in, at most one envelope out.
//!
//! Dispatches on the event. PostToolUse (Gemini: AfterTool) runs the context monitor;
//! every other event is silent for now. The caller guarantees the rest of the hook
//! contract: exit 0, panics caught, stdin read under a deadline.

use std::path::PathBuf;

use crate::config::Config;
use crate::host::{Envelope, Event, HookInput};
use crate::{metrics, monitor};

/// The facts of the process the hook runs in, gathered once at the edge.
#[derive(Debug, Clone, Default)]
pub struct HookEnv {
    /// `GEMINI_API_KEY` is set: a nameless event is Gemini's AfterTool.
    pub gemini_key_set: bool,
    /// `CLAUDE_PROJECT_DIR`.
    pub project_dir: Option<PathBuf>,
}

impl HookEnv {
    pub fn from_process() -> HookEnv {
        let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        HookEnv {
            gemini_key_set: non_empty("GEMINI_API_KEY").is_some(),
            project_dir: non_empty("CLAUDE_PROJECT_DIR").map(PathBuf::from).filter(|p| p.is_absolute()),
        }
    }
}

/// The project folder for an event: `CLAUDE_PROJECT_DIR`, else the event's `cwd`.
pub fn project_dir(input: &HookInput, env: &HookEnv) -> Option<PathBuf> {
    env.project_dir.clone().or_else(|| input.cwd.as_deref().map(PathBuf::from).filter(|p| p.is_absolute()))
}

/// Handles one event and returns the envelope to print, if any.
pub fn handle(input: &HookInput, env: &HookEnv) -> Option<Envelope> {
    let event = input.event(env.gemini_key_set);
    match event {
        Event::PostToolUse => {
            let config = Config::load(project_dir(input, env).as_deref());
            if config.disabled() {
                return None;
            }
            let session = input.session_id.as_deref()?;
            let warning = monitor::check(session, &config, metrics::now_unix())?;
            Some(Envelope::new(&input.envelope_event_name(env.gemini_key_set), &warning.text))
        }
        Event::SessionStart | Event::PreCompact | Event::Other(_) | Event::Missing => None,
    }
}
