//! `baton hook`: one hook event in, at most one envelope out.
//!
//! Dispatches on the event:
//! - PostToolUse (Claude Code's PostToolUseFailure, Gemini's AfterTool), PostToolBatch,
//!   the turn's start (UserPromptSubmit, Gemini's BeforeAgent) and Claude Code's Stop run
//!   the context monitor, one debounce across them; when a CRITICAL warning fires it
//!   writes the handoff first, so the message can name it (never on an assumed window,
//!   never for a subagent). A context is a session or one of its subagents;
//! - SubagentStop forgets the subagent's context;
//! - SessionStart injects the resume brief of a paused, trusted handoff (after a
//!   compaction: what the summary tends to lose, from the PreCompact snapshot);
//! - PreCompact (Gemini: PreCompress) refreshes the handoff, restarts the debounce and
//!   marks older figures as history; it prints nothing (the host accepts no context).
//!   Gemini CLI fires PreCompress before every model call: only one at or past its
//!   compression point counts;
//!   On Claude Code an automatic compaction whose snapshot could not be written is held
//!   once (`{"decision":"block"}`, [`audit::decide_hold`]);
//! - PostCompact audits the summary against the snapshot ([`audit`]); what it dropped is
//!   given at the next UserPromptSubmit or PostToolUse of the session (the compact brief
//!   of Claude Code's SessionStart(compact) waits there too, replaced by the audit's note;
//!   on Codex the brief also rides the next PostToolUse of a turn a compaction fired in);
//! - SessionEnd notes that the session is over, so no resume brief calls it active;
//! - HandoffFacts (baton's own, from its OpenCode plugin, which baton asks for it when it
//!   writes a CRITICAL handoff on OpenCode or Kilo CLI) rewrites that handoff with the
//!   facts of the session's messages ([`handoff_facts`]); it prints nothing.
//!
//! Every other event is silent. The project folder is resolved once per call. The caller
//! guarantees the rest of the hook contract: exit 0, panics caught, stdin read under a
//! deadline.

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::config::OnCritical;
use crate::gitx::Mode;
use crate::handoff::audit::{self, Point, SnapshotState};
use crate::handoff::{self, Trigger};
use crate::host::{CompactionBrief, Envelope, Event, HookInput, HostKind, PauseStop};
use crate::monitor::{Cadence, CheckpointWords, HandoffWords, Moment, SavedHandoff, SessionRef, Step};
use crate::{critical_pause, metrics, monitor, relay, resume, session_state};

/// The facts of the process the hook runs in, gathered once at the edge.
#[derive(Debug, Clone, Default)]
pub struct HookEnv {
    /// `GEMINI_API_KEY` is set: a nameless event is Gemini's AfterTool.
    pub gemini_key_set: bool,
    /// `CLAUDE_PROJECT_DIR`.
    pub project_dir: Option<PathBuf>,
    /// Under `baton run`: the run's record and this leg's number (`BATON_RUN_ID`,
    /// `BATON_RUN_LEG`).
    pub run: Option<(String, u32)>,
    /// The host the environment names ([`HostKind::from_env`]), over what the event says.
    pub host: Option<HostKind>,
}

impl HookEnv {
    pub fn from_process() -> HookEnv {
        let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        HookEnv {
            gemini_key_set: non_empty("GEMINI_API_KEY").is_some(),
            project_dir: non_empty("CLAUDE_PROJECT_DIR").map(PathBuf::from).filter(|p| p.is_absolute()),
            run: relay::leg_of_process(),
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
        self.context_ref(Cadence::ToolCall)
    }

    /// The context the event is about (the session, or its subagent), at this cadence.
    fn context_ref(&self, cadence: Cadence) -> Option<SessionRef<'_>> {
        Some(SessionRef {
            id: self.session()?,
            host: self.host,
            transcript: self.input.transcript_path.as_deref().map(Path::new),
            model: self.input.model.as_deref(),
            tool_use_id: self.input.tool_use_id.as_deref(),
            in_subagent: self.input.agent_id.is_some(),
            after_tool_call: self.input.tool_name.is_some(),
            agent: self.input.agent_id.as_deref(),
            project: self.project.as_deref(),
            reported: self.input.opencode.as_ref(),
            moment: Moment {
                cadence,
                turn: self.input.turn(),
                tokens: None,
                stop_hook_active: self.input.stop_hook_active == Some(true),
            },
            stakes: None,
        })
    }

    /// The transcript of the session `session`, which the handoff's facts come from.
    fn transcript_path(&self, session: &str) -> Option<PathBuf> {
        self.host.transcript_path(self.input.transcript_path.as_deref(), session)
    }

    /// The format the host writes its transcript in.
    fn transcript_format(&self) -> crate::transcript::Format {
        self.host.transcript_format()
    }

    /// The user is shown baton's notices on this host (`notices.show`).
    fn notices(&self) -> bool {
        self.config.notices() && self.host.shows_system_message()
    }

    fn envelope(&self, text: &str) -> Envelope {
        let envelope = Envelope::new(&self.input.envelope_event_name(self.env.gemini_key_set), text);
        if self.host.spec().context_at_top_level { envelope.with_top_level_context() } else { envelope }
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
        // A new prompt is a new turn: the pause no longer refuses calls (Qwen Code).
        lift_refusals(&call);
        let start = resume::first_prompt(call.cwd.as_deref()?, call.session()?, &call.config)?;
        let text = resume::with_relay_leg(start.text, env.run.as_ref().map(|(_, leg)| *leg));
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
            let note = audit_note(&call, Point::ToolUse { turn_id: input.turn_id.as_deref() });
            let mut said = monitor_step(&call, Cadence::ToolCall);
            if let Some(stop) = said.stop.take() {
                return Some(stop);
            }
            let text = with_note(said.text.take(), note)?;
            Some(said.envelope(&call, text))
        }
        Event::ToolBatch => {
            let mut said = monitor_step(&call, Cadence::Batch);
            if let Some(stop) = said.stop.take() {
                return Some(stop);
            }
            let text = said.text.take()?;
            Some(said.envelope(&call, text))
        }
        Event::PreToolUse => refuse_after_pause(&call),
        Event::TurnStart => {
            // A host may fire it again within the turn (Qwen Code, on every tool-result
            // continuation): the same turn, whose refusals stay.
            if call.host.host().starts_turn(input) {
                lift_refusals(&call);
            }
            let note = audit_note(&call, Point::UserPrompt);
            let mut said = monitor_step(&call, Cadence::TurnStart);
            if let Some(stop) = said.stop.take() {
                return Some(stop);
            }
            let text = with_note(said.text.take(), note)?;
            Some(said.envelope(&call, text))
        }
        // A Stop that takes context (Claude Code's) is answered; Codex's accepts none (only
        // `decision: "block"`): never answered there.
        Event::Stop if call.host.spec().answers_stop => {
            let mut said = monitor_step(&call, Cadence::Stop);
            // Under `baton run`: idle at the prompt, the interactive relay's cue.
            if let Some((run_id, leg)) = &env.run {
                relay::note_idle(run_id, *leg);
            }
            let text = said.text.take()?;
            Some(said.envelope(&call, text))
        }
        Event::Stop => {
            handoff_at_turn_end(&call);
            None
        }
        Event::SubagentStop => {
            let (Some(session), Some(agent)) = (call.session(), input.agent_id.as_deref()) else {
                return None;
            };
            if let Some(context) = session_state::context_id(session, Some(agent)) {
                session_state::forget(&context);
            }
            None
        }
        // Its context would be dropped, and recording the resumption would keep the brief
        // from the first prompt.
        Event::SessionStart if call.host.brief_on_first_prompt() => None,
        Event::SessionStart => {
            let session = call.session()?;
            let cwd = call.cwd.as_deref()?;
            if let Some((run_id, leg)) = &env.run {
                relay::note(run_id, *leg, |note| {
                    if !note.sessions.iter().any(|s| s == session) {
                        note.sessions.push(session.to_string());
                    }
                });
            }
            let start = resume::session_start(cwd, session, input.source.as_deref(), &call.config)?;
            if input.source.as_deref() == Some("compact") {
                match call.host.spec().compaction_brief {
                    // The audit at PostCompact says what the summary dropped; the brief
                    // waits in case it never comes.
                    CompactionBrief::AfterTheAudit => {
                        audit::leave_brief(session, &start.text);
                        return None;
                    }
                    // Codex 0.171.0 passes this context on with the very next request of
                    // the turn that compacted (seen in `codex exec`: PreCompact, PostCompact,
                    // SessionStart, then that request), so the copy PostCompact left for
                    // the turn's next PostToolUse would be a second one.
                    CompactionBrief::WithTheTurn => audit::brief_given_in_turn(session),
                    CompactionBrief::AtSessionStart => {}
                }
            }
            let text = resume::with_relay_leg(start.text, env.run.as_ref().map(|(_, leg)| *leg));
            let envelope = call.envelope(&text);
            Some(match start.briefed_from.filter(|_| call.notices()) {
                Some(from) => envelope
                    .with_system_message(monitor::briefed_notice(&from.session, from.written.as_deref())),
                None => envelope,
            })
        }
        Event::PreCompact => pre_compact(&call),
        Event::PostCompact => {
            post_compact(&call);
            None
        }
        Event::SessionEnd => {
            if let Some(session) = call.session() {
                session_state::mark_ended(session, metrics::now_unix());
            }
            None
        }
        Event::HandoffFacts => {
            handoff_facts(&call);
            None
        }
        Event::Other(_) | Event::Missing => None,
    }
}

/// What the monitor said at one event: the words for the agent and the line for the
/// user, or the host's stop.
#[derive(Default)]
struct Said {
    text: Option<String>,
    notice: Option<Notice>,
    stop: Option<Envelope>,
    /// baton has just written the CRITICAL handoff on a host whose session baton cannot
    /// read (OpenCode, Kilo CLI): its plugin is asked for the messages ([`handoff_facts`]).
    ask_messages: bool,
}

/// The line the user is shown beside a warning ([`monitor::Warning::notice`]).
struct Notice {
    line: String,
    /// At CRITICAL, also a desktop notification where asked for and possible.
    desktop: bool,
}

impl Said {
    /// The envelope for `text` (the warning, with anything riding along), with the notice.
    fn envelope(self, call: &Call, text: String) -> Envelope {
        let mut envelope = call.envelope(&text);
        if let Some(notice) = self.notice {
            if notice.desktop {
                envelope = envelope.with_terminal_sequence(monitor::desktop_notification(&notice.line));
            }
            envelope = envelope.with_system_message(notice.line);
        }
        if self.ask_messages { envelope.asking_for_messages() } else { envelope }
    }
}

/// Runs the monitor for an event that can carry context, carries out its step (the
/// CRITICAL handoff) and the pause ([`pause`]), and returns what the agent is told.
fn monitor_step(call: &Call, cadence: Cadence) -> Said {
    let Some(context) = call.context_ref(cadence) else { return Said::default() };
    let warning = monitor::check(&context, &call.config, metrics::now_unix());
    let mut saved = None;
    let mut notice = None;
    let mut text = warning.as_ref().map(|warning| {
        let handoff = match warning.step(call.config.handoff_auto(), call.config.auto_checkpoint()) {
            Step::Warn => HandoffWords::NotAttempted,
            Step::HoldBack => HandoffWords::HeldBack,
            Step::Handoff(mode) => critical_handoff(call, warning, mode),
        };
        if let HandoffWords::Saved(words) = &handoff {
            saved = Some(words.clone());
        }
        // The user hears of the session's own context, not of each subagent's.
        notice = warning.notice(&handoff).filter(|_| call.notices() && context.agent.is_none()).map(|line| {
            let desktop = warning.level == metrics::Level::Critical
                && call.config.desktop_notices()
                && call.host.emits_terminal_sequence();
            Notice { line, desktop }
        });
        warning.text(&handoff)
    });
    // The pause is the session's: a subagent's calls neither arm it nor use its grace
    // calls. Tool calls count grace calls; another cadence can only arm it.
    // Only the session's own CRITICAL handoff is written (never a subagent's).
    let asks_messages = call.host.sends_messages() && call.config.handoff_auto();
    let ask_messages = asks_messages && saved.is_some();
    let Some(session) = call.session().filter(|_| call.input.agent_id.is_none()) else {
        return Said { text, notice, stop: None, ask_messages };
    };
    if cadence != Cadence::ToolCall && saved.is_none() {
        return Said { text, notice, stop: None, ask_messages };
    }
    match pause(call, session, cadence, warning.as_ref(), saved.as_ref()) {
        PauseOutcome::Stop(reason) => {
            // The stop rewrote the handoff (or this call wrote it): the messages again.
            let stop = Envelope::stop(&reason);
            let stop = if asks_messages { stop.asking_for_messages() } else { stop };
            return Said { stop: Some(stop), ..Said::default() };
        }
        PauseOutcome::Armed(words) => {
            if let Some(text) = text.as_mut() {
                text.push_str(&words);
            }
        }
        PauseOutcome::Paused { words, reason } => {
            text = Some(match text {
                Some(text) => format!("{text}\n\n{words}"),
                None => words,
            });
            if call.notices() {
                notice = Some(Notice { line: reason, desktop: false });
            }
        }
        PauseOutcome::None => {}
    }
    Said { text, notice, stop: None, ask_messages }
}

/// The warning and the audit's note in one context: the warning first.
fn with_note(warning: Option<String>, note: Option<String>) -> Option<String> {
    match (warning, note) {
        (Some(warning), Some(note)) => Some(format!("{warning}\n\n{note}")),
        (warning, note) => warning.or(note),
    }
}

/// The compaction audit's note waiting for this context point, if any: never in a
/// subagent's context (its events carry the parent's session).
fn audit_note(call: &Call, point: Point) -> Option<String> {
    if call.input.agent_id.is_some() {
        return None;
    }
    audit::take_pending(call.session()?, point)
}

/// After a compaction. Claude Code: compares its summary with the PreCompact snapshot,
/// leaves what it dropped for the next context point and records "kept N of M" (state,
/// handoff). Codex sends no summary and accepts no context: its PostCompact names the
/// turn an automatic compaction fired in, so the compact brief rides that turn.
fn post_compact(call: &Call) {
    let Some(session) = call.session() else { return };
    if call.host.spec().compaction_brief == CompactionBrief::WithTheTurn {
        if let (Some("auto"), Some(turn)) = (call.input.trigger.as_deref(), call.input.turn_id.as_deref()) {
            audit::note_compacted_in_turn(session, turn);
            if let Some(brief) = call
                .cwd
                .as_deref()
                .and_then(|cwd| resume::session_start(cwd, session, Some("compact"), &call.config))
            {
                audit::leave_turn_brief(session, &brief.text);
            }
        }
        return;
    }
    let (Some(summary), Some(cwd)) = (call.input.compact_summary.as_deref(), call.cwd.as_deref()) else {
        return;
    };
    let root = crate::gitx::project_root(cwd);
    let dir = call.config.handoff_dir();
    let Some(snapshot) = audit::own_snapshot(&root, &dir, session) else { return };
    let result = audit::audit(&audit::snapshot_facts(&snapshot), summary);
    let record = audit::AuditRecord {
        at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        trigger: call.input.trigger.clone(),
        kept: result.kept.len(),
        total: result.total(),
        dropped: result.dropped.clone(),
    };
    let _ = audit::record_in_handoff(&root, &dir, session, &record);
    audit::record(session, record, audit::dropped_note(&result));
}

/// What the pause did on this tool call.
enum PauseOutcome {
    None,
    /// Armed: these words go after the CRITICAL message, once.
    Armed(String),
    /// Stop the agent, with this reason for the user.
    Stop(String),
    /// The agent was told its last grace call is used, and its next call is stopped or
    /// refused (a host stopped before its next call): the words for the agent, the reason
    /// for the user.
    Paused {
        words: String,
        reason: String,
    },
}

/// The pause (`handoff.on_critical`, [`critical_pause::decide`]): reads the session's
/// state only when a pause may be armed or counting, changes it under the session's lock.
///
/// Only a tool call uses a grace call (and so only a tool call is stopped): a CRITICAL
/// handoff refreshed at another cadence (Claude Code's PostToolBatch, a turn's start) can
/// arm the pause, but once it is armed it leaves it alone. (On Claude Code 2.1.332 a
/// refreshed handoff at PostToolBatch used to take the last grace call, and the stop it
/// decided was never sent: the agent ran on into auto-compaction.)
fn pause(
    call: &Call,
    session: &str,
    cadence: Cadence,
    warning: Option<&monitor::Warning>,
    saved: Option<&SavedHandoff>,
) -> PauseOutcome {
    let mode = call.config.on_critical();
    // A host that goes on after `continue: false` cannot be paused outside `baton run`:
    // baton only advises there, and promises no stop it cannot make.
    if mode == OnCritical::Advise || !critical_pause::can_stop(call.host.pause_stop(), call.env.run.is_some())
    {
        return PauseOutcome::None;
    }
    let may_pause = warning.is_some_and(|w| critical_pause::may_pause(&w.figure, w.critical_action_allowed));
    let stored = || session_state::load(session);
    let counting = || stored().is_some_and(|s| s.pause_armed_at.is_some() && s.paused_at.is_none());
    let arming = saved.is_some() && may_pause;
    if cadence != Cadence::ToolCall && (!arming || stored().is_some_and(|s| s.pause_armed_at.is_some())) {
        return PauseOutcome::None;
    }
    if !arming && !counting() {
        return PauseOutcome::None;
    }
    let now = metrics::now_unix();
    let grace_calls = call.config.pause_grace_calls();
    let pause_call = critical_pause::PauseCall {
        mode,
        grace_calls,
        handoff_saved_now: saved.is_some(),
        may_pause,
        stop: call.host.pause_stop(),
        now,
    };
    let handoff = saved.map(|s| s.json.as_str());
    let Some((step, stored_handoff)) = session_state::update_pause(
        session,
        |state| {
            let (next, step) = critical_pause::decide(state, &pause_call);
            (next, step)
        },
        handoff.filter(|_| saved.is_some() && may_pause),
    )
    .map(|step| (step, session_state::load(session).and_then(|s| s.pause_handoff))) else {
        return PauseOutcome::None;
    };
    let under_run = critical_pause::under_baton_run(call.env.run.as_ref().map(|(_, leg)| *leg));
    let used = warning.map(|w| w.figure.used_pct());
    if let Some((run_id, leg)) = &call.env.run {
        relay::note(run_id, *leg, |note| {
            if !note.sessions.iter().any(|s| s == session) {
                note.sessions.push(session.to_string());
            }
            if let Some(used) = used {
                note.peak_used_pct = Some(note.peak_used_pct.map_or(used, |p| p.max(used)));
            }
            note.pause_armed |= step != critical_pause::PauseStep::Nothing;
        });
    }
    match step {
        critical_pause::PauseStep::Arm => {
            PauseOutcome::Armed(critical_pause::armed_words(grace_calls, mode, under_run))
        }
        critical_pause::PauseStep::Stop => {
            let figure = warning.map(|w| w.figure.clone()).or_else(|| {
                let session_ref = call.session_ref()?;
                monitor::current_figure(&session_ref, &call.config, call.config.stale_seconds(), now)
                    .map(|(found, _)| found.figure)
            });
            let used = used.or_else(|| figure.as_ref().map(metrics::Figure::used_pct));
            // The grace calls did work the CRITICAL handoff does not hold: the handoff the
            // next context is briefed from is written again now, as the agent stops. On a
            // host whose session baton cannot read (OpenCode, Kilo CLI) the stop asks for
            // the messages instead ([`handoff_facts`] writes it again with them): a rewrite
            // here would only drop the facts the CRITICAL handoff got from them.
            if saved.is_none() && !call.host.sends_messages() {
                refresh_handoff_at_stop(call, session, figure);
            }
            // Only now is the stop noted for `baton run`: on a host that goes on after it
            // (Codex), the relay ends the leg as soon as it reads the note, and the host
            // then kills the hook it is running, mid-rewrite if the note came first (a
            // leg 2 that redid the grace calls, on a loaded machine).
            if let Some((run_id, leg)) = &call.env.run {
                relay::note(run_id, *leg, |note| note.stopped = true);
            }
            // A host that goes on after the stop ignores it (Codex) or puts it in place of
            // the call's output, which the agent then takes for a failure and runs again
            // (Gemini CLI): there `baton run` ends the leg instead. This call is noted as
            // the stop in its record, the host is held here until the relay has ended it
            // (nothing more runs), and the output is left as it was.
            if !call.host.honours_stop() {
                if let Some((run_id, leg)) = &call.env.run {
                    relay::hold_until_leg_ends(run_id, *leg);
                    return PauseOutcome::None;
                }
            }
            let reason = critical_pause::stop_reason(used, stored_handoff.as_deref(), under_run);
            // Gemini CLI and Codex: the agent is told, and its next call is stopped or refused
            // ([`refuse_after_pause`]); this call keeps its output.
            let stop = call.host.pause_stop();
            if critical_pause::stops_before_the_next_call(stop) {
                return PauseOutcome::Paused { words: critical_pause::paused_words(stop), reason };
            }
            PauseOutcome::Stop(reason)
        }
        critical_pause::PauseStep::Grace | critical_pause::PauseStep::Nothing => PauseOutcome::None,
    }
}

/// A tool call is about to run (Codex's PreToolUse, Gemini CLI's BeforeTool): once the
/// pause has stopped the agent on a host stopped before its next call, every call of that
/// turn is stopped there (Gemini CLI: `continue: false`, the turn ends before the call
/// runs) or refused (Codex: `permissionDecision: "deny"`, the agent reads why). The first
/// one writes the handoff again, now that the last grace call's output is in the
/// transcript. Silent otherwise, after one read of the session's state.
fn refuse_after_pause(call: &Call) -> Option<Envelope> {
    let stop = call.host.pause_stop();
    if !critical_pause::stops_before_the_next_call(stop) {
        return None;
    }
    let session = call.session()?;
    session_state::load(session)?.pause_refusals?;
    let refused_before = session_state::update_pause(session, critical_pause::refuse, None)??;
    let now = metrics::now_unix();
    let figure = call.session_ref().and_then(|session_ref| {
        monitor::current_figure(&session_ref, &call.config, call.config.stale_seconds(), now)
            .map(|(found, _)| found.figure)
    });
    let used = figure.as_ref().map(metrics::Figure::used_pct);
    // Gemini CLI's turn ends here, and its recording holds the last grace call's output.
    // Codex's goes on to the agent's answer: its handoff is written at the turn's end, once
    // the refused calls are in the rollout as such ([`handoff_at_turn_end`]).
    if refused_before == 0 && stop == PauseStop::BeforeTheNextCall {
        refresh_handoff_at_stop(call, session, figure);
    }
    let handoff = session_state::load(session).and_then(|s| s.pause_handoff);
    let reason = critical_pause::stop_reason(used, handoff.as_deref(), call.env.run.is_some());
    Some(match stop {
        PauseStop::BeforeTheNextCall => Envelope::stop(&reason),
        _ => Envelope::refuse(
            &critical_pause::refusal_reason(&reason),
            Some(reason).filter(|_| refused_before == 0 && call.notices()),
        ),
    })
}

/// The turn ends (Codex's and Qwen Code's Stop, Gemini CLI's AfterAgent) after the pause told the agent its
/// last grace call was used: the handoff written at that call lacks the call's own output
/// (the host records it after the hook), so it is written again now; on Codex and Qwen
/// Code also after refused calls (none ran), and under `baton run` on every such host when
/// the agent ended the turn after the CRITICAL handoff, before baton stopped it. Silent,
/// after one read of the session's state.
fn handoff_at_turn_end(call: &Call) {
    let stop = call.host.pause_stop();
    if !critical_pause::stops_before_the_next_call(stop) {
        return;
    }
    let Some(session) = call.session() else { return };
    let Some(state) = session_state::load(session) else { return };
    let refusals = state.pause_refusals;
    // Under `baton run`, the agent ended its turn after the CRITICAL handoff, before baton
    // stopped it (within its grace calls, or with no pause armed: it did as the warning
    // asked): the relay starts the next leg at once, briefed from the handoff, and the
    // CRITICAL one lacks what the calls since did (Gemini CLI records the call it was
    // written at only after the hook).
    let in_grace = call.env.run.is_some()
        && (state.pause_armed_at.is_some() || state.critical_recorded)
        && state.paused_at.is_none();
    if in_grace || refusals == Some(0) || (refusals.is_some() && stop == PauseStop::RefuseTheNextCalls) {
        let figure = call.session_ref().and_then(|session_ref| {
            monitor::current_figure(
                &session_ref,
                &call.config,
                call.config.stale_seconds(),
                metrics::now_unix(),
            )
            .map(|(found, _)| found.figure)
        });
        refresh_handoff_at_stop(call, session, figure);
    }
}

/// The user's next prompt (a new turn): the pause no longer refuses calls.
fn lift_refusals(call: &Call) {
    if !critical_pause::stops_before_the_next_call(call.host.pause_stop()) {
        return;
    }
    let Some(session) = call.session() else { return };
    if session_state::load(session).is_some_and(|s| s.pause_refusals.is_some()) {
        let _ = session_state::update_pause(session, |s| (critical_pause::turn_started(s), ()), None);
    }
}

/// Rewrites the session's CRITICAL handoff when the pause stops the agent, so it holds
/// what the grace calls did (the commands they ran, the todos they ticked off); its
/// checkpoint as configured. Silent on failure: the stop goes out regardless.
fn refresh_handoff_at_stop(call: &Call, session: &str, figure: Option<metrics::Figure>) {
    rewrite_critical_handoff(call, session, figure, None);
}

/// Rewrites the session's CRITICAL handoff, its facts read from the transcript or, when
/// given, as the host sent them; its checkpoint as configured. Silent on failure.
fn rewrite_critical_handoff(
    call: &Call,
    session: &str,
    figure: Option<metrics::Figure>,
    facts: Option<crate::transcript::SessionFacts>,
) {
    let Some(cwd) = call.cwd.clone().filter(|_| call.config.handoff_auto()) else { return };
    let checkpoint = match call.config.auto_checkpoint() {
        Mode::Branch => Mode::Off,
        mode => mode,
    };
    let request = handoff::Request {
        trigger: Trigger::CriticalContext,
        session_id: session.to_string(),
        cwd,
        transcript_path: call.transcript_path(session),
        transcript_format: call.transcript_format(),
        facts,
        figure,
        checkpoint,
        dir: call.config.handoff_dir(),
        now: chrono::Utc::now(),
    };
    if let Ok(outcome) = handoff::write(&request) {
        push_to_github(&call.config, &outcome.root);
    }
}

/// baton's OpenCode plugin sent the session's messages (`HandoffFacts`), as baton asked
/// when it wrote the session's CRITICAL handoff: the handoff is written again with the
/// facts they hold (the commands run, the requests, the agent's last words), checkpointed
/// as configured. Only on OpenCode and Kilo CLI, only for the session's own context, and
/// only while that session's CRITICAL handoff is recorded and the session has not ended:
/// a forged or late event writes nothing. Prints nothing.
fn handoff_facts(call: &Call) {
    if !call.host.sends_messages() || call.input.agent_id.is_some() {
        return;
    }
    let (Some(session), Some(digest)) = (call.session(), call.input.opencode_messages.as_ref()) else {
        return;
    };
    if !session_state::load(session).is_some_and(|s| s.critical_recorded && s.ended_at.is_none()) {
        return;
    }
    let facts = crate::transcript::opencode::facts_from_digest(digest, Some(session));
    let figure = call.session_ref().and_then(|session_ref| {
        monitor::current_figure(&session_ref, &call.config, call.config.stale_seconds(), metrics::now_unix())
            .map(|(found, _)| found.figure)
    });
    rewrite_critical_handoff(call, session, figure, Some(facts));
}

/// Whether the event carries the resume brief in place of SessionStart (pure): a host
/// that drops SessionStart's context (Qwen Code) has its first real prompt carry it.
fn is_first_prompt_brief(input: &HookInput, env: &HookEnv, event: &Event) -> bool {
    env.host.is_some_and(|host| host.brief_on_first_prompt() && host.host().starts_turn(input))
        && matches!(event, Event::TurnStart)
}

/// Whether a PreCompact is a real compaction ([`crate::host::Host::is_real_compaction`]):
/// Gemini CLI fires PreCompress before every model call, the other hosts only when they
/// compact.
fn is_real_compaction(call: &Call, figure: Option<&metrics::Figure>) -> bool {
    call.host.host().is_real_compaction(
        call.input.trigger.as_deref(),
        figure.and_then(|f| f.used_tokens),
        figure.and_then(|f| f.window_tokens),
        call.project.as_deref(),
    )
}

/// Before a compaction: refresh the handoff (the summary loses detail), then restart
/// the session's debounce and mark every figure up to now as history. On Claude Code a
/// compaction whose snapshot could not be written is held once ([`audit::decide_hold`]).
fn pre_compact(call: &Call) -> Option<Envelope> {
    // A subagent's compaction is not the session's: its handoff is the parent's to write.
    if call.input.agent_id.is_some() {
        return None;
    }
    let (Some(session), Some(session_ref)) = (call.session(), call.session_ref()) else { return None };
    let now = metrics::now_unix();
    let figure = monitor::current_figure(&session_ref, &call.config, call.config.stale_seconds(), now)
        .map(|(found, _)| found.figure);
    if !is_real_compaction(call, figure.as_ref()) {
        return None;
    }
    let mut snapshot = SnapshotState::NotWanted;
    if let (Some(cwd), true) = (call.cwd.clone(), call.config.handoff_auto()) {
        let request = handoff::Request {
            trigger: Trigger::PreCompact,
            session_id: session.to_string(),
            cwd,
            transcript_path: call.transcript_path(session),
            transcript_format: call.transcript_format(),
            facts: None,
            figure: figure.clone(),
            checkpoint: Mode::Ref,
            dir: call.config.handoff_dir(),
            now: chrono::Utc::now(),
        };
        snapshot = match handoff::write(&request) {
            Ok(outcome) => {
                push_to_github(&call.config, &outcome.root);
                SnapshotState::Written
            }
            Err(handoff::WriteError::Busy(_)) => SnapshotState::CriticalBusy,
            Err(handoff::WriteError::Files(_)) => SnapshotState::Missing,
        };
    }
    let window = figure.as_ref().and_then(|f| f.window_tokens);
    let used = figure.as_ref().and_then(|f| {
        f.used_tokens
            .or_else(|| window.map(|w| ((100.0 - f.remaining_pct) / 100.0 * w as f64).round() as u64))
    });
    let hold = audit::decide_hold(&audit::HoldFacts {
        host: call.host,
        trigger: call.input.trigger.as_deref(),
        snapshot,
        held_before: audit::held_before(session),
        used_tokens: used,
        window_tokens: window,
    });
    if let audit::Hold::Hold(reason) = hold {
        audit::note_held(session);
        return Some(Envelope::block(&reason));
    }
    let turn = call.input.turn_id.as_deref().filter(|_| call.input.trigger.as_deref() == Some("auto"));
    audit::note_let_go(
        session,
        turn.filter(|_| call.host.spec().compaction_brief == CompactionBrief::WithTheTurn),
    );
    session_state::note_compaction(session, metrics::now_unix());
    None
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
        transcript_path: call.transcript_path(session),
        transcript_format: call.transcript_format(),
        facts: None,
        figure: Some(warning.figure.clone()),
        checkpoint: mode,
        dir: call.config.handoff_dir(),
        now: chrono::Utc::now(),
    };
    match handoff::write(&request) {
        Ok(outcome) => {
            session_state::mark_critical_recorded(session);
            push_to_github(&call.config, &outcome.root);
            let saved = saved_handoff(&outcome);
            // Under `baton run` the leg is paused while this handoff is pending, whoever
            // stops the agent (baton's pause, or the agent ending its turn as asked).
            if let Some((run_id, leg)) = &call.env.run {
                relay::note_handoff(
                    run_id,
                    *leg,
                    &relay::WrittenHandoff {
                        session: session.to_string(),
                        json: saved.json.clone(),
                        project: outcome.root.clone(),
                        checkpoint: checkpoint_words(&saved.checkpoint),
                    },
                );
                let used = warning.figure.used_pct();
                relay::note(run_id, *leg, |note| {
                    note.peak_used_pct = Some(note.peak_used_pct.map_or(used, |p| p.max(used)));
                });
            }
            HandoffWords::Saved(saved)
        }
        Err(why) => HandoffWords::Failed(why.to_string()),
    }
}

/// A checkpoint as the run's record names it: the ref, or the branch and commit.
fn checkpoint_words(checkpoint: &CheckpointWords) -> Option<String> {
    match checkpoint {
        CheckpointWords::Ref { reference, .. } => Some(reference.clone()),
        CheckpointWords::Branch { branch, short } => Some(format!("{branch} ({short})")),
        CheckpointWords::Note(_) | CheckpointWords::None => None,
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
    SavedHandoff {
        json: rel(&outcome.json_path),
        markdown: rel(&outcome.markdown_path),
        checkpoint,
        private: outcome.private.clone(),
    }
}
