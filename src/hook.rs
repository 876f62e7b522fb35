//! `baton hook`: one hook event in, at most one envelope out.
//!
//! Dispatches on the event:
//! - PostToolUse (Gemini: AfterTool) runs the context monitor; when a CRITICAL warning
//!   fires it writes the handoff first, so the message can name it;
//! - SessionStart injects the resume brief of a paused, trusted handoff (after a
//!   compaction: what the summary tends to lose, from the PreCompact snapshot);
//! - PreCompact (Gemini: PreCompress) refreshes the handoff, restarts the debounce and
//!   marks older figures as history; it prints nothing (the host accepts no context).
//!
//! Every other event is silent. The caller guarantees the rest of the hook contract:
//! exit 0, panics caught, stdin read under a deadline.

use std::path::PathBuf;

use crate::config::Config;
use crate::gitx::Mode;
use crate::handoff::{self, Trigger};
use crate::host::{Envelope, Event, HookInput};
use crate::metrics::Level;
use crate::{metrics, monitor, resume};

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
            let transcript = input.transcript_path.as_deref().map(std::path::Path::new);
            let warning = monitor::check(session, transcript, &config, metrics::now_unix())?;
            let mut text = warning.text.clone();
            if warning.level == Level::Critical && config.handoff_auto() {
                text = critical_handoff(input, env, &config, session, &warning);
            }
            Some(Envelope::new(&input.envelope_event_name(env.gemini_key_set), &text))
        }
        Event::SessionStart => {
            let project = project_dir(input, env)?;
            let config = Config::load(Some(&project));
            if config.disabled() {
                return None;
            }
            let session = input.session_id.as_deref().filter(|s| crate::fsx::valid_session_id(s))?;
            let cwd = input.cwd.as_deref().map(PathBuf::from).filter(|p| p.is_absolute()).unwrap_or(project);
            let text = resume::session_start(&cwd, session, input.source.as_deref(), &config)?;
            Some(Envelope::new(&input.envelope_event_name(env.gemini_key_set), &text))
        }
        Event::PreCompact => {
            pre_compact(input, env);
            None
        }
        Event::Other(_) | Event::Missing => None,
    }
}

/// Before a compaction: refresh the handoff (the summary loses detail), then restart
/// the session's debounce and mark every figure up to now as history.
fn pre_compact(input: &HookInput, env: &HookEnv) {
    let Some(session) = input.session_id.as_deref().filter(|s| crate::fsx::valid_session_id(s)) else {
        return;
    };
    let project = project_dir(input, env);
    let config = Config::load(project.as_deref());
    if config.disabled() {
        return;
    }
    let cwd = input.cwd.as_deref().map(PathBuf::from).filter(|p| p.is_absolute()).or(project);
    if let (Some(cwd), true) = (cwd, config.handoff_auto()) {
        let now = metrics::now_unix();
        let figure = metrics::read_bridge(session, now, config.stale_seconds()).map(|b| b.figure());
        let request = handoff::Request {
            trigger: Trigger::PreCompact,
            session_id: session.to_string(),
            cwd,
            transcript_path: input.transcript_path.as_deref().map(PathBuf::from),
            figure,
            checkpoint: Mode::Ref,
            dir: config.handoff_dir(),
            now: chrono::Utc::now(),
        };
        if let Ok(outcome) = handoff::write(&request) {
            push_to_github(&config, &outcome.root);
        }
    }
    monitor::note_compaction(session, metrics::now_unix());
}

/// With `checkpoint.github.auto`, pushes the new handoff to its GitHub issue in a
/// detached process, so the hook returns at once; failures land in the handoff.
fn push_to_github(config: &Config, root: &std::path::Path) {
    if config.checkpoint_github_auto() {
        let _ = crate::checkpoint_github::spawn_auto_push(root);
    }
}

/// Writes the automatic handoff for a CRITICAL warning and returns the message that
/// names it. In `branch` mode only the session's first handoff commits; later ones
/// refresh the files.
fn critical_handoff(
    input: &HookInput,
    env: &HookEnv,
    config: &Config,
    session: &str,
    warning: &monitor::Warning,
) -> String {
    let Some(cwd) = input
        .cwd
        .as_deref()
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| env.project_dir.clone())
    else {
        return warning.text.clone();
    };
    let mut mode = config.auto_checkpoint();
    if mode == Mode::Branch && warning.critical_recorded {
        mode = Mode::Off;
    }
    let request = handoff::Request {
        trigger: Trigger::CriticalContext,
        session_id: session.to_string(),
        cwd,
        transcript_path: input.transcript_path.as_deref().map(PathBuf::from),
        figure: Some(warning.figure.clone()),
        checkpoint: mode,
        dir: config.handoff_dir(),
        now: chrono::Utc::now(),
    };
    match handoff::write(&request) {
        Ok(outcome) => {
            monitor::mark_critical_recorded(session);
            push_to_github(config, &outcome.root);
            critical_message(&warning.figure, &outcome)
        }
        Err(why) => format!("{} (baton could not write a handoff: {why})", warning.text),
    }
}

/// The CRITICAL message once the handoff is written: what was saved, where, and what
/// only the agent can add. Advisory words.
pub fn critical_message(figure: &metrics::Figure, outcome: &handoff::Outcome) -> String {
    let rel = |p: &std::path::Path| p.strip_prefix(&outcome.root).unwrap_or(p).display().to_string();
    let checkpoint = match &outcome.checkpoint {
        Some(c) if c.used == Mode::Branch => {
            format!(
                " and committed them on branch {} ({})",
                c.branch.as_deref().unwrap_or("?"),
                c.short.as_deref().unwrap_or("?")
            )
        }
        Some(c) => format!(
            "; your uncommitted work and the handoff are checkpointed at {} (commit {}; `git diff HEAD {}` shows it), without touching your branch or index",
            c.reference.as_deref().unwrap_or("?"),
            c.short.as_deref().unwrap_or("?"),
            c.reference.as_deref().unwrap_or("?"),
        ),
        None => outcome.checkpoint_note.as_deref().map(|n| format!(" ({n})")).unwrap_or_default(),
    };
    format!(
        "CONTEXT CRITICAL: Usage at {used}%. Remaining: {remaining}%. Context is nearly exhausted. \
         baton has saved a handoff from what it could check (git, .planning, the transcript) to \
         {json} and {md}{checkpoint}. It would help the next session if you filled in \
         `next_action`, `decisions` and `context_notes` in {json} with what only you know \
         (intent, approach, what you were about to try), then finished the current step and \
         let the user know the context is nearly exhausted.",
        used = figure.used_pct(),
        remaining = figure.remaining_display(),
        json = rel(&outcome.json_path),
        md = rel(&outcome.markdown_path),
    )
}
