//! `baton hook`: one hook event in, at most one envelope out.
//!
//! Dispatches on the event:
//! - PostToolUse (Claude Code's PostToolUseFailure, Gemini's AfterTool) runs the context
//!   monitor; when a CRITICAL warning fires it writes the handoff first, so the message
//!   can name it (never on an assumed window);
//! - SessionStart injects the resume brief of a paused, trusted handoff (after a
//!   compaction: what the summary tends to lose, from the PreCompact snapshot);
//! - PreCompact (Gemini: PreCompress) refreshes the handoff, restarts the debounce and
//!   marks older figures as history; it prints nothing (the host accepts no context).
//!   Gemini CLI fires PreCompress before every model call: only one at or past its
//!   compression point counts;
//! - SessionEnd notes that the session is over, so no resume brief calls it active.
//!
//! Every other event is silent. The project folder is resolved once per call. The caller
//! guarantees the rest of the hook contract: exit 0, panics caught, stdin read under a
//! deadline.

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::gitx::Mode;
use crate::handoff::{self, Trigger};
use crate::host::{Envelope, Event, HookInput, HostKind, gemini, qwen};
use crate::monitor::{CheckpointWords, HandoffWords, SavedHandoff, SessionRef, Step};
use crate::{metrics, monitor, resume, session_state};

/// The facts of the process the hook runs in, gathered once at the edge.
#[derive(Debug, Clone, Default)]
pub struct HookEnv {
    /// `GEMINI_API_KEY` is set: a nameless event is Gemini's AfterTool.
    pub gemini_key_set: bool,
    /// `CLAUDE_PROJECT_DIR`.
    pub project_dir: Option<PathBuf>,
    /// The host the environment names ([`HostKind::from_env`]), over what the event says.
    pub host: Option<HostKind>,
}

impl HookEnv {
    pub fn from_process() -> HookEnv {
        let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        HookEnv {
            gemini_key_set: non_empty("GEMINI_API_KEY").is_some(),
            project_dir: non_empty("CLAUDE_PROJECT_DIR").map(PathBuf::from).filter(|p| p.is_absolute()),
            host: HostKind::from_env(&|name| non_empty(name).is_some()),
        }
    }
}

/// The project folder for an event: `CLAUDE_PROJECT_DIR`, else the event's `cwd`.
pub fn project_dir(input: &HookInput, env: &HookEnv) -> Option<PathBuf> {
    env.project_dir.clone().or_else(|| input.cwd.as_deref().map(PathBuf::from).filter(|p| p.is_absolute()))
}

/// What one call of the hook works with, resolved once.
struct Call<'a> {
    input: &'a HookInput,
    env: &'a HookEnv,
    host: HostKind,
    /// `CLAUDE_PROJECT_DIR`, else the event's `cwd`.
    project: Option<PathBuf>,
    /// The event's `cwd`, else the project.
    cwd: Option<PathBuf>,
    config: Config,
}

impl<'a> Call<'a> {
    fn new(input: &'a HookInput, env: &'a HookEnv) -> Call<'a> {
        let project = project_dir(input, env);
        let cwd =
            input.cwd.as_deref().map(PathBuf::from).filter(|p| p.is_absolute()).or_else(|| project.clone());
        let config = Config::load(project.as_deref());
        let host = env.host.unwrap_or_else(|| input.host(env.gemini_key_set));
        Call { input, env, host, project, cwd, config }
    }

    fn session(&self) -> Option<&'a str> {
        self.input.session_id.as_deref().filter(|s| crate::fsx::valid_session_id(s))
    }

    fn session_ref(&self) -> Option<SessionRef<'_>> {
        Some(SessionRef {
            id: self.session()?,
            host: self.host,
            transcript: self.input.transcript_path.as_deref().map(Path::new),
            model: self.input.model.as_deref(),
            tool_use_id: self.input.tool_use_id.as_deref(),
            in_subagent: self.input.agent_id.is_some(),
            project: self.project.as_deref(),
        })
    }

    /// The format the host writes its transcript in.
    fn transcript_format(&self) -> crate::transcript::Format {
        self.host.transcript_format()
    }

    fn envelope(&self, text: &str) -> Envelope {
        Envelope::new(&self.input.envelope_event_name(self.env.gemini_key_set), text)
    }
}

/// Handles one event and returns the envelope to print, if any.
pub fn handle(input: &HookInput, env: &HookEnv) -> Option<Envelope> {
    let event = input.event(env.gemini_key_set);
    if is_first_prompt_brief(input, env, &event) {
        let call = Call::new(input, env);
        if call.config.disabled() {
            return None;
        }
        let text = resume::first_prompt(call.cwd.as_deref()?, call.session()?, &call.config)?;
        return Some(call.envelope(&text));
    }
    if matches!(event, Event::Other(_) | Event::Missing) {
        return None;
    }
    let call = Call::new(input, env);
    if call.config.disabled() {
        return None;
    }
    match event {
        Event::PostToolUse => {
            let session = call.session_ref()?;
            let warning = monitor::check(&session, &call.config, metrics::now_unix())?;
            let handoff = match warning.step(call.config.handoff_auto(), call.config.auto_checkpoint()) {
                Step::Warn => HandoffWords::NotAttempted,
                Step::HoldBack => HandoffWords::HeldBack,
                Step::Handoff(mode) => critical_handoff(&call, &warning, mode),
            };
            Some(call.envelope(&warning.text(&handoff)))
        }
        // Its context would be dropped, and recording the resumption would keep the brief
        // from the first prompt.
        Event::SessionStart if call.host.brief_on_first_prompt() => None,
        Event::SessionStart => {
            let session = call.session()?;
            let cwd = call.cwd.as_deref()?;
            let text = resume::session_start(cwd, session, input.source.as_deref(), &call.config)?;
            Some(call.envelope(&text))
        }
        Event::PreCompact => {
            pre_compact(&call);
            None
        }
        Event::SessionEnd => {
            if let Some(session) = call.session() {
                session_state::mark_ended(session, metrics::now_unix());
            }
            None
        }
        Event::Other(_) | Event::Missing => None,
    }
}

/// Whether the event carries the resume brief in place of SessionStart (pure): Qwen
/// Code drops SessionStart's context, so its first real prompt carries it.
fn is_first_prompt_brief(input: &HookInput, env: &HookEnv, event: &Event) -> bool {
    env.host.is_some_and(HostKind::brief_on_first_prompt)
        && matches!(event, Event::Other(name) if name == "UserPromptSubmit")
        && qwen::is_real_prompt(input.prompt.as_deref())
}

/// Whether a PreCompact is a real compaction (pure over what was read). Gemini CLI fires
/// PreCompress before every model call: only a manual one, or one with the prompt at or
/// past the compression point, is. Every other host fires it only when it compacts.
fn is_real_compaction(call: &Call, figure: Option<&metrics::Figure>) -> bool {
    if call.host != HostKind::Gemini {
        return true;
    }
    let point = figure
        .and_then(|f| f.window_tokens)
        .map(|w| gemini::compression_point(w, gemini::compression_threshold(call.project.as_deref())))
        .unwrap_or(u64::MAX);
    gemini::is_real_compression(call.input.trigger.as_deref(), figure.and_then(|f| f.used_tokens), point)
}

/// Before a compaction: refresh the handoff (the summary loses detail), then restart
/// the session's debounce and mark every figure up to now as history.
fn pre_compact(call: &Call) {
    let (Some(session), Some(session_ref)) = (call.session(), call.session_ref()) else { return };
    let now = metrics::now_unix();
    let figure = monitor::current_figure(&session_ref, &call.config, call.config.stale_seconds(), now)
        .map(|(found, _)| found.figure);
    if !is_real_compaction(call, figure.as_ref()) {
        return;
    }
    if let (Some(cwd), true) = (call.cwd.clone(), call.config.handoff_auto()) {
        let request = handoff::Request {
            trigger: Trigger::PreCompact,
            session_id: session.to_string(),
            cwd,
            transcript_path: call.input.transcript_path.as_deref().map(PathBuf::from),
            transcript_format: call.transcript_format(),
            figure,
            checkpoint: Mode::Ref,
            dir: call.config.handoff_dir(),
            now: chrono::Utc::now(),
        };
        if let Ok(outcome) = handoff::write(&request) {
            push_to_github(&call.config, &outcome.root);
        }
    }
    session_state::note_compaction(session, metrics::now_unix());
}

/// With `checkpoint.github.auto`, pushes the new handoff to its GitHub issue in a
/// detached process, so the hook returns at once; failures land in the handoff.
fn push_to_github(config: &Config, root: &std::path::Path) {
    if config.checkpoint_github_auto() {
        let _ = crate::checkpoint_github::spawn_auto_push(root);
    }
}

/// Writes the automatic handoff for a CRITICAL warning, checkpointed as the monitor
/// decided ([`monitor::Warning::step`]), and says what became of it.
fn critical_handoff(call: &Call, warning: &monitor::Warning, mode: Mode) -> HandoffWords {
    let (Some(session), Some(cwd)) = (call.session(), call.cwd.clone()) else {
        return HandoffWords::NotAttempted;
    };
    let request = handoff::Request {
        trigger: Trigger::CriticalContext,
        session_id: session.to_string(),
        cwd,
        transcript_path: call.input.transcript_path.as_deref().map(PathBuf::from),
        transcript_format: call.transcript_format(),
        figure: Some(warning.figure.clone()),
        checkpoint: mode,
        dir: call.config.handoff_dir(),
        now: chrono::Utc::now(),
    };
    match handoff::write(&request) {
        Ok(outcome) => {
            session_state::mark_critical_recorded(session);
            push_to_github(&call.config, &outcome.root);
            HandoffWords::Saved(saved_handoff(&outcome))
        }
        Err(why) => HandoffWords::Failed(why.to_string()),
    }
}

/// The handoff written, as the monitor's message names it: paths relative to the root.
fn saved_handoff(outcome: &handoff::Outcome) -> SavedHandoff {
    let rel = |p: &Path| p.strip_prefix(&outcome.root).unwrap_or(p).display().to_string();
    let text = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
    let checkpoint = match &outcome.checkpoint {
        Some(c) if c.used == Mode::Branch => {
            CheckpointWords::Branch { branch: text(&c.branch), short: text(&c.short) }
        }
        Some(c) => CheckpointWords::Ref { reference: text(&c.reference), short: text(&c.short) },
        None => outcome.checkpoint_note.clone().map(CheckpointWords::Note).unwrap_or(CheckpointWords::None),
    };
    SavedHandoff { json: rel(&outcome.json_path), markdown: rel(&outcome.markdown_path), checkpoint }
}
