//! The context monitor: after each tool call, decide whether the agent is told how full
//! its context is, and with which words.
//!
//! [`decide`] is the whole rule (GSD's contract) as a pure function over the level and
//! the previous [`WarnState`]; [`message`] words every level, in this one place. [`check`]
//! is the thin I/O around them: the session's newest figure from the figure source
//! ([`metrics::session_figure`]), then the decision inside the session state's one
//! locked update ([`session_state::update`]).

use std::path::Path;

use crate::config::Config;
use crate::gitx::Mode;
use crate::host::{FigureSource, HostKind, PluginReport};
use crate::metrics::{self, Basis, Figure, FigureQuery, Headroom, Level, Origin, Stakes, StakesLookup, Want};
use crate::session_state::{self, Kept, WarnState};
use crate::{fsx, transcript};

/// What the monitor decided for one tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The level to warn at, if a warning fires.
    pub fire: Option<Level>,
    /// The state to store.
    pub state: WarnState,
    /// The warning fired at a level the agent was not told before (the first of the
    /// session or since a compaction, or an escalation): the user is told too.
    pub new_level: bool,
}

/// Which kind of event the decision is for: every one of them can carry context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Cadence {
    /// After a tool call (PostToolUse, AfterTool).
    #[default]
    ToolCall,
    /// After the tool calls of one reply (PostToolBatch).
    Batch,
    /// A turn starts (UserPromptSubmit, BeforeAgent).
    TurnStart,
    /// The agent is about to stop (Claude Code's Stop): an answer costs one more model
    /// call, so only a level not told yet is answered, once.
    Stop,
}

/// The event a decision is about.
#[derive(Debug, Clone, Copy, Default)]
pub struct Moment<'a> {
    pub cadence: Cadence,
    /// The turn the event belongs to (Claude Code's `prompt_id`, Codex's `turn_id`).
    pub turn: Option<&'a str>,
    /// The figure's tokens: with the turn, they tell the events of one reply apart.
    pub tokens: Option<u64>,
    /// Stop: the host is already continuing because of a Stop hook.
    pub stop_hook_active: bool,
}

/// The debounce rule, one state per context across every event that can carry context.
/// `level` is Warning or Critical (nothing is decided at Normal). The first warning fires
/// at once (no state yet, or a state reset by a compaction); after a warning, given at
/// whichever event, the `debounce`-th call fires again; WARNING→CRITICAL fires at once.
/// What counts: each tool call, and a turn's start (a turn without tool calls is still
/// warned at its start); a batch counts nothing, its calls were counted at their own
/// events (Claude Code 2.1.332 sends PostToolBatch after every reply that used tools, one
/// call included: counted too, a call counted twice and the agent was told twice as
/// often); a Stop counts nothing. Never twice for one reply: the events of one reply (its
/// tool calls and their batch) share a figure and a turn, and once one of them warned the
/// others are silent, so a batch of parallel calls is warned once. A Stop is answered only
/// for a level not told yet, at most once per level, never while the host is already
/// continuing for a Stop hook (an answer makes the agent take another step: answering
/// every Stop loops).
pub fn decide(level: Level, previous: Option<WarnState>, debounce: u32, moment: &Moment) -> Decision {
    let first = previous.as_ref().is_none_or(|p| p.last_level.is_none());
    let mut state = previous.unwrap_or_default();
    let escalated = level == Level::Critical && state.last_level.as_deref() == Level::Warning.state_name();
    if moment.cadence == Cadence::Stop {
        let answered =
            state.stop_answered_level.is_some() && state.stop_answered_level.as_deref() == level.state_name();
        if moment.stop_hook_active || answered || !(first || escalated) {
            return Decision { fire: None, state, new_level: false };
        }
        state.stop_answered_level = level.state_name().map(str::to_string);
        return warned(level, state, moment);
    }
    if moment.cadence != Cadence::Batch {
        state.calls_since_warn = state.calls_since_warn.saturating_add(1);
    }
    let same_reply = moment.turn.is_some()
        && moment.tokens.is_some()
        && state.warned_turn.as_deref() == moment.turn
        && state.warned_tokens == moment.tokens;
    if !first && !escalated && (state.calls_since_warn < debounce || same_reply) {
        return Decision { fire: None, state, new_level: false };
    }
    warned(level, state, moment)
}

/// What the answer to an event hangs on, for the wait for the newest reply (pure): which
/// levels [`decide`] would say at this event from the stored state, and the context's
/// measured pace. A debounced call between two warnings says nothing at the level it is
/// at: no wait for a figure that cannot change that.
pub fn stakes(previous: Option<&WarnState>, debounce: u32, moment: &Moment) -> Stakes {
    // Without the figure's tokens no event counts as one reply with the last warning's:
    // the safe side (a wait that was not needed).
    let moment = Moment { tokens: None, ..*moment };
    let said = |level| decide(level, previous.cloned(), debounce, &moment).fire.is_some();
    Stakes::Said {
        warning: said(Level::Warning),
        critical: said(Level::Critical),
        tokens_per_call: previous.and_then(|p| p.tokens_per_call).filter(|p| *p > 0.0),
    }
}

fn warned(level: Level, mut state: WarnState, moment: &Moment) -> Decision {
    let new_level = state.last_level.as_deref() != level.state_name();
    state.calls_since_warn = 0;
    state.last_level = level.state_name().map(str::to_string);
    state.warned_turn = moment.turn.map(str::to_string);
    state.warned_tokens = moment.tokens;
    Decision { fire: Some(level), state, new_level }
}

/// Whose context a warning is about, and what baton could keep of it, as far as the
/// words need it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextNotes {
    /// A subagent's own context: finish and report back, no handoff.
    pub subagent: bool,
    /// baton could not keep the context's state (why, and the fix): said once.
    pub unkept_state: Option<String>,
}

/// How the figure was read, as far as the words need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FigureNotes {
    pub host: HostKind,
    /// A fresh status line figure was there, but the transcript was newer.
    pub newer_than_bridge: bool,
}

impl Default for FigureNotes {
    fn default() -> Self {
        FigureNotes { host: HostKind::DEFAULT, newer_than_bridge: false }
    }
}

/// The checkpoint taken with a handoff, as the message tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckpointWords {
    /// A wip commit on the user's branch.
    Branch {
        branch: String,
        short: String,
    },
    /// A private ref, branch and index untouched.
    Ref {
        reference: String,
        short: String,
    },
    /// Why there is none.
    Note(String),
    None,
}

/// The handoff baton wrote for a CRITICAL warning, as the message names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedHandoff {
    /// HANDOFF.json, relative to the project root (or the full path, out of the project).
    pub json: String,
    /// .continue-here.md, relative to the project root (or the full path).
    pub markdown: String,
    pub checkpoint: CheckpointWords,
    /// Why the files are in baton's private folder and not the project (another user
    /// could read, swap or plant them there).
    pub private: Option<String>,
}

/// What happened to the CRITICAL handoff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandoffWords {
    /// None was attempted (automatic handoffs off, or not CRITICAL).
    NotAttempted,
    /// Written.
    Saved(SavedHandoff),
    /// Writing it failed.
    Failed(String),
    /// Not written: the window is assumed, so the figure may be far too high.
    HeldBack,
}

/// The words the agent is given, for every level: the figure, the window when it is not
/// a fact, the headroom, what baton did, and where the figure came from. Advisory: they
/// inform, they never override the user.
pub fn message(
    level: Level,
    figure: &Figure,
    headroom: Option<&Headroom>,
    notes: &FigureNotes,
    context: &ContextNotes,
    handoff: &HandoffWords,
) -> String {
    let used = figure.used_pct();
    let remaining = figure.remaining_display();
    let estimate = if figure.estimate { " (estimated)" } else { "" };
    let window = match (figure.window_source, metrics::describe_window(figure)) {
        (source, Some(window)) if source.is_assumed() => format!(
            " This is of {window}: baton does not know this model's context window, so the real figure may be much lower (set `models.<id>.window` in baton's config)."
        ),
        (metrics::WindowSource::Likely, Some(window)) => format!(
            " This is of {window} from baton's table: this model's family has both 200k and 1M windows, so it is likely, not proven (the status line, once it renders, gives the real one)."
        ),
        _ => String::new(),
    };
    // GSD's contract: the levels are of the full window. The host's own meter may not be.
    let full = match (notes.host.spec().own_meter, figure.window_tokens) {
        (Some(own_meter), Some(w)) => format!(
            " (baton's percentages are of the full {}-token window; {own_meter}.)",
            metrics::short_tokens(w)
        ),
        _ => String::new(),
    };
    let room = headroom.map(|h| format!(" {}.", capitalise(&h.describe()))).unwrap_or_default();
    let mut source = String::new();
    if figure.estimate {
        source.push_str(
            " (This figure is an estimate: the transcript did not yet hold the reply that made this tool call, so baton added what was written since the last reply it holds.)",
        );
    }
    if figure.origin == Origin::Transcript {
        source.push_str(match (notes.host.figure_source(), notes.newer_than_bridge) {
            (FigureSource::Statusline, true) => {
                " (This figure was read from the session's transcript: it is newer than the status line's.)"
            }
            (FigureSource::Statusline, false) => {
                " (This figure was read from the session's transcript: no status line figure was available.)"
            }
            (FigureSource::Record, _) => notes.host.spec().figure_words,
        });
    }
    if let Some(why) = &context.unkept_state {
        source.push_str(&format!(
            " (baton cannot keep its state ({why}), so it cannot space its warnings out: this may be repeated after every call until that is fixed.)"
        ));
    }
    let head = |name: &str| {
        format!("CONTEXT {name}: Usage at {used}%{estimate}. Remaining: {remaining}%.{room}{window}")
    };
    if context.subagent {
        return match level {
            Level::Critical => format!(
                "{} Context is nearly exhausted. This is your own context as a subagent, not your parent session's: start nothing new, finish the current step and report back to the parent now with what you found and what is left. baton writes no handoff for a subagent: your report is the handoff.{source}",
                head("CRITICAL")
            ),
            _ => format!(
                "{} Context is getting limited. This is your own context as a subagent, not your parent session's: keep to the task you were given, avoid broad exploration, and work towards finishing and reporting back to the parent with what you found. No handoff is needed: the parent keeps its own.{source}",
                head("WARNING")
            ),
        };
    }
    match level {
        Level::Critical => {
            let action = match handoff {
                HandoffWords::Saved(saved) => saved_handoff_words(saved),
                HandoffWords::Failed(why) => format!(
                    " baton could not write a handoff ({why}). It would be wise to finish the current step, avoid starting anything new, and let the user know so they can decide how to continue (for example by pausing with a handoff: `baton pause` or /gsd:pause-work)."
                ),
                HandoffWords::HeldBack => " baton has not written a handoff, since the window is not known. If the context does feel long, it would be wise to finish the current step and let the user know (`baton pause` or /gsd:pause-work saves a handoff).".to_string(),
                HandoffWords::NotAttempted => " It would be wise to finish the current step, avoid starting anything new, and let the user know so they can decide how to continue (for example by pausing with a handoff: `baton pause` or /gsd:pause-work).".to_string(),
            };
            format!("{} Context is nearly exhausted.{action}{full}{source}", head("CRITICAL"))
        }
        _ => format!(
            "{} Context is getting limited. Consider avoiding new complex work or broad exploration, and keep the current task moving towards a natural stopping point.{full}{source}",
            head("WARNING")
        ),
    }
}

fn saved_handoff_words(saved: &SavedHandoff) -> String {
    let checkpoint = match &saved.checkpoint {
        CheckpointWords::Branch { branch, short } => {
            format!(" and committed them on branch {branch} ({short})")
        }
        CheckpointWords::Ref { reference, short } => format!(
            "; your uncommitted work and the handoff are checkpointed at {reference} (commit {short}; `git diff HEAD {reference}` shows it), without touching your branch or index"
        ),
        CheckpointWords::Note(note) => format!(" ({note})"),
        CheckpointWords::None => String::new(),
    };
    let private = saved
        .private
        .as_deref()
        .map(|why| format!(" They are in baton's private folder, not the project, because {why}."))
        .unwrap_or_default();
    format!(
        " baton has saved a handoff from what it could check (git, .planning, the transcript) to {json} and {md}{checkpoint}.{private} It would help the next session if you filled in `next_action`, `decisions` and `context_notes` in {json} with what only you know (intent, approach, what you were about to try), then finished the current step and let the user know the context is nearly exhausted.",
        json = saved.json,
        md = saved.markdown,
    )
}

/// The one line the user is shown when a warning reaches the agent at a new level (the
/// host's `systemMessage`): what baton told the agent and, at CRITICAL, what it saved,
/// where, and how the work is picked up again.
pub fn notice(level: Level, figure: &Figure, handoff: &HandoffWords) -> String {
    let used = figure.used_pct();
    let estimate = if figure.estimate { " (estimated)" } else { "" };
    let head = format!("baton: context {used} %{estimate}");
    if level != Level::Critical {
        return format!("{head} — the agent was told to wrap up");
    }
    match handoff {
        HandoffWords::Saved(saved) => {
            let checkpoint = match &saved.checkpoint {
                CheckpointWords::Branch { branch, short } => format!(", committed on {branch} ({short})"),
                CheckpointWords::Ref { reference, short } => format!(", checkpoint {reference} ({short})"),
                CheckpointWords::Note(_) | CheckpointWords::None => String::new(),
            };
            let private = saved
                .private
                .as_deref()
                .map(|why| format!(" (not in the project: {why})"))
                .unwrap_or_default();
            format!(
                "{head} — handoff saved to {}{private}{checkpoint}; a new session here is briefed from it (`baton resume` shows it)",
                saved.json
            )
        }
        HandoffWords::Failed(why) => {
            format!("{head} — the agent was told to stop soon; no handoff could be written ({why})")
        }
        HandoffWords::HeldBack => {
            format!("{head} of an assumed window — the agent was told to stop soon; no handoff written")
        }
        HandoffWords::NotAttempted => {
            format!("{head} — the agent was told to stop soon (`baton pause` saves a handoff)")
        }
    }
}

/// The line the user is shown when a session starts with a handoff's brief: whose it
/// is and from when.
pub fn briefed_notice(session: &str, written: Option<&str>) -> String {
    let session: String = session.chars().take(8).collect();
    let when = written.map(|w| format!(", written {w}")).unwrap_or_default();
    format!(
        "baton: this session was briefed from the handoff of session {session}{when} (`baton resume` shows it, `baton resume --done` once picked up)"
    )
}

/// A desktop notification for `text` (OSC 9, which Claude Code emits for the hook; its
/// body may not start with a digit, and carries no control character).
pub fn desktop_notification(text: &str) -> String {
    let body: String = text.chars().filter(|c| !c.is_control()).collect();
    format!("\u{1b}]9;{body}\u{7}")
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// Whether a CRITICAL action (handoff, checkpoint) may rest on a figure: see
/// [`metrics::critical_action_allowed`].
pub use crate::metrics::critical_action_allowed;

/// The result of a monitor check, for callers that build on it (the handoff).
#[derive(Debug, Clone)]
pub struct Warning {
    pub level: Level,
    pub figure: Figure,
    pub headroom: Option<Headroom>,
    pub notes: FigureNotes,
    /// A CRITICAL handoff was already recorded for this session (`criticalRecorded`).
    pub critical_recorded: bool,
    /// A CRITICAL action may rest on this figure ([`critical_action_allowed`]).
    pub critical_action_allowed: bool,
    /// Whose context, and what baton could keep of it.
    pub context: ContextNotes,
    /// The agent was not told this level before ([`Decision::new_level`]).
    pub new_level: bool,
}

/// What the hook does beside giving the warning (decided by [`Warning::step`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Only the warning.
    Warn,
    /// No handoff: the window is assumed, so the figure may be far too high.
    HoldBack,
    /// Write the CRITICAL handoff, checkpointed this way.
    Handoff(Mode),
}

impl Warning {
    /// What to do beside the warning (pure): a CRITICAL warning with automatic handoffs
    /// on writes one, unless the figure may not carry it; in `branch` mode only the
    /// session's first handoff commits, later ones refresh the files.
    pub fn step(&self, handoff_auto: bool, checkpoint: Mode) -> Step {
        // A subagent's handoff is its report: the session's handoff is the parent's.
        if self.level != Level::Critical || !handoff_auto || self.context.subagent {
            Step::Warn
        } else if !self.critical_action_allowed {
            Step::HoldBack
        } else if checkpoint == Mode::Branch && self.critical_recorded {
            Step::Handoff(Mode::Off)
        } else {
            Step::Handoff(checkpoint)
        }
    }

    /// The message, given what became of the handoff.
    pub fn text(&self, handoff: &HandoffWords) -> String {
        message(self.level, &self.figure, self.headroom.as_ref(), &self.notes, &self.context, handoff)
    }

    /// The line for the user, when this warning is one they are told of ([`notice`]).
    pub fn notice(&self, handoff: &HandoffWords) -> Option<String> {
        self.new_level.then(|| notice(self.level, &self.figure, handoff))
    }
}

/// The session a tool call belongs to, as the hook event tells it.
#[derive(Debug, Clone)]
pub struct SessionRef<'a> {
    pub id: &'a str,
    pub host: HostKind,
    pub transcript: Option<&'a Path>,
    pub model: Option<&'a str>,
    pub tool_use_id: Option<&'a str>,
    pub in_subagent: bool,
    /// The event follows a tool call (it names a tool): the reply that issued the call
    /// may still be on its way to the host's record.
    pub after_tool_call: bool,
    /// The subagent the event came from (Claude Code's `agent_id`): its own context.
    pub agent: Option<&'a str>,
    /// The project folder (resolved once by the caller).
    pub project: Option<&'a Path>,
    /// The figure the event itself reports (OpenCode's plugin).
    pub reported: Option<&'a PluginReport>,
    /// The event, for the debounce across events.
    pub moment: Moment<'a>,
    /// What the answer hangs on ([`stakes`]): [`check`] looks it up in the context's state.
    pub stakes: Option<StakesLookup<'a>>,
}

impl<'a> SessionRef<'a> {
    /// A session of `host` known by id and transcript only (`baton pause`, `baton
    /// status`).
    pub fn known(host: HostKind, id: &'a str, transcript: Option<&'a Path>) -> SessionRef<'a> {
        SessionRef {
            id,
            host,
            transcript,
            model: None,
            tool_use_id: None,
            in_subagent: false,
            after_tool_call: false,
            agent: None,
            project: None,
            reported: None,
            moment: Moment::default(),
            stakes: None,
        }
    }
}

/// The session's newest figure (see [`metrics::session_figure`]), with the notes the
/// message needs. `stale_seconds` bounds the age of a bridge.
pub fn current_figure(
    session: &SessionRef,
    config: &Config,
    stale_seconds: u64,
    now: i64,
) -> Option<(metrics::SessionFigure, FigureNotes)> {
    let windows = config.configured_windows();
    let query = FigureQuery {
        session_id: session.id,
        host: session.host,
        transcript: session.transcript,
        model: session.model,
        tool_use_id: session.tool_use_id,
        in_subagent: session.in_subagent,
        after_tool_call: session.after_tool_call,
        agent: session.agent,
        reported: session.reported,
        stale_seconds,
        default_window: crate::metrics::Limits::from_settings(config.settings()).default_window,
        configured_windows: &windows,
        thresholds_used: config.thresholds_used(),
        stakes: session.stakes,
        now,
    };
    let found = metrics::session_figure(&query)?;
    let newer_than_bridge = session.host.figure_source() == FigureSource::Statusline
        && found.figure.origin == Origin::Transcript
        && metrics::read_bridge(session.id, now, stale_seconds).is_some();
    Some((found, FigureNotes { host: session.host, newer_than_bridge }))
}

/// Runs the monitor for one event: finds the context's figure, applies the debounce
/// under the context's lock, and returns the warning to inject, if any. A context is a
/// session or one of its subagents ([`session_state::context_id`]). When the state
/// cannot be kept the warning still comes (undebounced, and said once). Returns `None`
/// for every other failure: the hook path is silent rather than wrong.
pub fn check(session: &SessionRef, config: &Config, now: i64) -> Option<Warning> {
    if !fsx::valid_session_id(session.id) || !config.context_warnings() {
        return None;
    }
    let context_id = session_state::context_id(session.id, session.agent)?;
    let debounce = config.debounce_calls();
    // Only after a tool call can the figure wait for a reply, and only near a threshold is
    // the state read for what hangs on it.
    let lookup = || stakes(session_state::load(&context_id).as_ref(), debounce, &session.moment);
    let session =
        &SessionRef { stakes: session.after_tool_call.then_some(StakesLookup(&lookup)), ..session.clone() };
    let (found, notes) = current_figure(session, config, config.stale_seconds(), now)?;
    let figure = found.figure;
    let basis = Basis {
        limits: crate::metrics::Limits::from_settings(config.settings()),
        host: session.host,
        model: found.model.as_deref(),
        project: session.project,
    };
    let level = metrics::assess(&figure, &basis, Want::Level).level;
    if level == Level::Normal {
        return None;
    }
    let moment = Moment { tokens: figure.used_tokens, ..session.moment };
    // The pace is measured in the statusline host's transcript (Claude Code's format).
    let measure_pace = session.agent.is_none() && session.host.figure_source() == FigureSource::Statusline;
    let kept = session_state::update_kept(&context_id, |previous| {
        // A figure from before the session's last compaction is history.
        if previous.as_ref().and_then(|p| p.compacted_at).is_some_and(|at| figure.taken_at <= at) {
            return (None, None);
        }
        let mut decision = decide(level, previous, debounce, &moment);
        // Only a warning that is given pays for measuring the pace (Claude's transcript).
        let pace = match (decision.fire, session.transcript, measure_pace) {
            (Some(_), Some(path), true) => transcript::tokens_per_tool_call(path).ok().flatten(),
            _ => None,
        };
        if let Some(pace) = pace {
            decision.state.tokens_per_call = Some(pace.tokens_per_call.round());
        }
        (Some(decision.state.clone()), Some((decision, pace)))
    })?;
    let unkept_state = match &kept {
        Kept::NotStored(_, why) => session_state::first_notice_of_unkept(&context_id).then(|| why.clone()),
        Kept::Stored(_) => None,
    };
    let (decision, pace) = kept.value()?;
    let level = decision.fire?;
    let want = Want::Headroom { tokens_per_call: pace.map(|p| p.tokens_per_call) };
    let headroom = metrics::assess(&figure, &basis, want).headroom;
    let critical_used = 100.0 - basis.limits.thresholds.critical_remaining;
    Some(Warning {
        level,
        critical_action_allowed: critical_action_allowed(&figure, session.host.windows(), critical_used),
        figure,
        headroom,
        notes,
        critical_recorded: decision.state.critical_recorded,
        context: ContextNotes { subagent: session.agent.is_some(), unkept_state },
        new_level: decision.new_level,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(levels: &[Level], debounce: u32) -> Vec<Option<Level>> {
        let mut state = None;
        levels
            .iter()
            .map(|level| {
                let decision = decide(*level, state.take(), debounce, &Moment::default());
                state = Some(decision.state);
                decision.fire
            })
            .collect()
    }

    #[test]
    fn warnings_fire_on_calls_1_6_11() {
        let fired = run(&[Level::Warning; 11], 5);
        let calls: Vec<usize> =
            fired.iter().enumerate().filter(|(_, f)| f.is_some()).map(|(i, _)| i + 1).collect();
        assert_eq!(calls, vec![1, 6, 11]);
    }

    /// One tool call per reply, as `claude -p` sends it: PostToolUse, then PostToolBatch
    /// with the same turn and figure. Returns the calls warned (1-based) and at which event.
    fn one_call_per_reply(levels: &[(Option<Level>, Level)]) -> Vec<(usize, Cadence, Level)> {
        let mut state = None;
        let mut told = vec![];
        for (i, (at_call, at_batch)) in levels.iter().enumerate() {
            let tokens = Some(100_000 + i as u64 * 1000);
            for (cadence, level) in [(Cadence::ToolCall, *at_call), (Cadence::Batch, Some(*at_batch))] {
                // At Normal the monitor decides nothing (the state is left as it is).
                let Some(level) = level.filter(|l| *l != Level::Normal) else { continue };
                let moment = Moment { cadence, turn: Some("p1"), tokens, stop_hook_active: false };
                let decision = decide(level, state.take(), 5, &moment);
                state = Some(decision.state);
                if let Some(fired) = decision.fire {
                    told.push((i + 1, cadence, fired));
                }
            }
        }
        told
    }

    #[test]
    fn a_call_and_the_batch_that_holds_it_count_once() {
        // Calls 1-12 at WARNING, 13-22 at CRITICAL: GSD's cadence is 1, 6, 11, 13, 18.
        let mut levels = vec![(Some(Level::Warning), Level::Warning); 12];
        levels.extend(vec![(Some(Level::Critical), Level::Critical); 10]);
        let told = one_call_per_reply(&levels);
        let calls: Vec<usize> = told.iter().map(|(call, _, _)| *call).collect();
        assert_eq!(calls, vec![1, 6, 11, 13, 18], "{told:?}");
        assert!(told.iter().all(|(_, cadence, _)| *cadence == Cadence::ToolCall), "{told:?}");
        assert_eq!(told[3].2, Level::Critical);
    }

    #[test]
    fn a_crossing_first_seen_at_the_batch_is_warned_there_and_counted_from() {
        // The call's hook read the figure before its reply (Normal), the batch's after it.
        let mut levels = vec![(Some(Level::Normal), Level::Warning)];
        levels.extend(vec![(Some(Level::Warning), Level::Warning); 10]);
        let told = one_call_per_reply(&levels);
        assert_eq!(
            told,
            vec![
                (1, Cadence::Batch, Level::Warning),
                (6, Cadence::ToolCall, Level::Warning),
                (11, Cadence::ToolCall, Level::Warning)
            ]
        );
    }

    #[test]
    fn what_a_call_can_be_told_decides_the_wait() {
        let moment = Moment { turn: Some("p1"), ..Moment::default() };
        let paced = |calls, level: &str| WarnState {
            calls_since_warn: calls,
            last_level: Some(level.into()),
            tokens_per_call: Some(1500.0),
            ..WarnState::default()
        };
        let unpaced = Stakes::Said { warning: true, critical: true, tokens_per_call: None };
        assert_eq!(stakes(None, 5, &moment), unpaced, "no state: the first warning is due");
        let between = Stakes::Said { warning: false, critical: true, tokens_per_call: Some(1500.0) };
        assert_eq!(stakes(Some(&paced(1, "warning")), 5, &moment), between, "only an escalation");
        let due = Stakes::Said { warning: true, critical: true, tokens_per_call: Some(1500.0) };
        assert_eq!(stakes(Some(&paced(4, "warning")), 5, &moment), due, "the fifth call refires");
        let told = Stakes::Said { warning: false, critical: false, tokens_per_call: Some(1500.0) };
        assert_eq!(stakes(Some(&paced(2, "critical")), 5, &moment), told);
        // A batch counts nothing: the refire due at a call is not due at its batch.
        let batch = Moment { cadence: Cadence::Batch, ..moment };
        assert_eq!(stakes(Some(&paced(4, "critical")), 5, &batch), told);
    }

    #[test]
    fn escalation_to_critical_fires_at_once() {
        let fired = run(&[Level::Warning, Level::Warning, Level::Critical, Level::Critical], 5);
        assert_eq!(fired, vec![Some(Level::Warning), None, Some(Level::Critical), None]);
    }

    #[test]
    fn critical_then_warning_is_debounced() {
        let fired = run(&[Level::Critical, Level::Warning, Level::Warning], 5);
        assert_eq!(fired, vec![Some(Level::Critical), None, None]);
    }

    #[test]
    fn the_user_is_told_of_each_new_level_once() {
        let mut state = None;
        let told: Vec<bool> = [
            Level::Warning,
            Level::Warning,
            Level::Warning,
            Level::Warning,
            Level::Warning,
            Level::Warning,
            Level::Critical,
            Level::Critical,
        ]
        .iter()
        .map(|level| {
            let decision = decide(*level, state.take(), 5, &Moment::default());
            state = Some(decision.state);
            decision.new_level
        })
        .collect();
        assert_eq!(told, vec![true, false, false, false, false, false, true, false]);
    }

    #[test]
    fn notices_are_one_short_line() {
        let figure = Figure { remaining_pct: 34.0, ..Figure::default() };
        assert_eq!(
            notice(Level::Warning, &figure, &HandoffWords::NotAttempted),
            "baton: context 66 % — the agent was told to wrap up"
        );
        let saved = HandoffWords::Saved(SavedHandoff {
            json: ".planning/HANDOFF.json".into(),
            markdown: ".planning/.continue-here.md".into(),
            checkpoint: CheckpointWords::Ref {
                reference: "refs/baton/wip/s".into(),
                short: "abc1234".into(),
            },
            private: None,
        });
        let critical = notice(Level::Critical, &Figure { remaining_pct: 20.0, ..figure }, &saved);
        assert!(critical.starts_with("baton: context 80 % — handoff saved to .planning/HANDOFF.json, checkpoint refs/baton/wip/s (abc1234);"), "{critical}");
        assert!(!critical.contains('\n'));
        let private = HandoffWords::Saved(SavedHandoff {
            json: "/home/u/.local/state/baton/handoffs/0a/s/.planning/HANDOFF.json".into(),
            markdown: "/home/u/.local/state/baton/handoffs/0a/s/.planning/.continue-here.md".into(),
            checkpoint: CheckpointWords::Note("no checkpoint".into()),
            private: Some("/tmp is writable by every user".into()),
        });
        let critical = notice(Level::Critical, &Figure { remaining_pct: 20.0, ..figure }, &private);
        assert!(critical.starts_with("baton: context 80 % — handoff saved to /home/u/.local/state/baton/handoffs/0a/s/.planning/HANDOFF.json (not in the project: /tmp is writable by every user);"), "{critical}");
        assert!(!critical.contains('\n'));
        let told = words(Level::Critical, &Figure { remaining_pct: 20.0, ..figure }, None, &private);
        assert!(
            told.contains(
                "They are in baton's private folder, not the project, because /tmp is writable by every user."
            ),
            "{told}"
        );
        assert_eq!(desktop_notification("a\nb"), "\u{1b}]9;ab\u{7}");
    }

    #[test]
    fn a_reset_state_fires_at_once() {
        let reset =
            WarnState { calls_since_warn: 0, last_level: None, compacted_at: Some(5), ..Default::default() };
        assert_eq!(decide(Level::Warning, Some(reset), 5, &Moment::default()).fire, Some(Level::Warning));
    }

    #[test]
    fn existing_state_means_not_first() {
        let previous =
            WarnState { calls_since_warn: 1, last_level: Some("warning".into()), ..Default::default() };
        assert_eq!(decide(Level::Warning, Some(previous), 5, &Moment::default()).fire, None);
    }

    #[test]
    fn what_to_do_beside_the_warning() {
        let warning = |level, allowed, recorded| Warning {
            level,
            figure: Figure::default(),
            headroom: None,
            notes: FigureNotes::default(),
            critical_recorded: recorded,
            critical_action_allowed: allowed,
            context: ContextNotes::default(),
            new_level: true,
        };
        assert_eq!(warning(Level::Warning, true, false).step(true, Mode::Ref), Step::Warn);
        assert_eq!(warning(Level::Critical, true, false).step(false, Mode::Ref), Step::Warn);
        assert_eq!(warning(Level::Critical, false, false).step(true, Mode::Ref), Step::HoldBack);
        assert_eq!(warning(Level::Critical, true, false).step(true, Mode::Ref), Step::Handoff(Mode::Ref));
        assert_eq!(
            warning(Level::Critical, true, false).step(true, Mode::Branch),
            Step::Handoff(Mode::Branch)
        );
        assert_eq!(warning(Level::Critical, true, true).step(true, Mode::Branch), Step::Handoff(Mode::Off));
        assert_eq!(warning(Level::Critical, true, true).step(true, Mode::Ref), Step::Handoff(Mode::Ref));
    }

    fn words(level: Level, figure: &Figure, headroom: Option<&Headroom>, handoff: &HandoffWords) -> String {
        message(level, figure, headroom, &FigureNotes::default(), &ContextNotes::default(), handoff)
    }

    #[test]
    fn messages_start_with_the_gsd_prefixes() {
        let figure = Figure {
            remaining_pct: 28.0,
            origin: metrics::Origin::Bridge,
            window_source: metrics::WindowSource::Statusline,
            ..Figure::default()
        };
        let none = HandoffWords::NotAttempted;
        assert!(
            words(Level::Warning, &figure, None, &none)
                .starts_with("CONTEXT WARNING: Usage at 72%. Remaining: 28%. Context")
        );
        assert!(
            words(Level::Critical, &figure, None, &none)
                .starts_with("CONTEXT CRITICAL: Usage at 72%. Remaining: 28%.")
        );
        let rule = metrics::CompactionRule { buffer: 33_000, ..Default::default() };
        let room = metrics::headroom(144_012, 200_000, &rule, Some(2500.0));
        let text = words(
            Level::Warning,
            &Figure { origin: Origin::Transcript, ..figure.clone() },
            Some(&room),
            &none,
        );
        assert!(
            text.starts_with("CONTEXT WARNING: Usage at 72%. Remaining: 28%. About 23k tokens, about 9 tool calls before auto-compaction. Context"),
            "{text}"
        );
        assert!(text.ends_with("no status line figure was available.)"), "{text}");
    }

    #[test]
    fn critical_keeps_the_source_and_the_headroom_with_a_handoff() {
        let figure = Figure {
            remaining_pct: 20.0,
            used_tokens: Some(160_000),
            window_tokens: Some(200_000),
            origin: Origin::Transcript,
            window_source: metrics::WindowSource::Table,
            ..Figure::default()
        };
        let rule = metrics::CompactionRule { buffer: 33_000, ..Default::default() };
        let room = metrics::headroom(160_000, 200_000, &rule, None);
        let saved = HandoffWords::Saved(SavedHandoff {
            json: ".planning/HANDOFF.json".into(),
            markdown: ".planning/.continue-here.md".into(),
            checkpoint: CheckpointWords::Ref { reference: "refs/baton/x".into(), short: "abc1234".into() },
            private: None,
        });
        let text = words(Level::Critical, &figure, Some(&room), &saved);
        assert!(text.starts_with("CONTEXT CRITICAL: Usage at 80%. Remaining: 20%. About 7.0k tokens before auto-compaction. Context is nearly exhausted. baton has saved a handoff"), "{text}");
        assert!(text.contains("checkpointed at refs/baton/x (commit abc1234"), "{text}");
        assert!(text.contains("read from the session's transcript"), "{text}");
    }

    #[test]
    fn an_assumed_window_is_said_and_holds_back_the_critical_action() {
        let figure = Figure {
            remaining_pct: 24.0,
            used_tokens: Some(152_000),
            window_tokens: Some(200_000),
            origin: Origin::Transcript,
            window_source: metrics::WindowSource::Default,
            ..Figure::default()
        };
        assert!(!critical_action_allowed(&figure, &[200_000, 1_000_000], 75.0));
        assert!(critical_action_allowed(
            &Figure { used_tokens: Some(760_000), ..figure.clone() },
            &[200_000, 1_000_000],
            75.0
        ));
        assert!(critical_action_allowed(
            &Figure { window_source: metrics::WindowSource::Statusline, ..figure.clone() },
            &[200_000, 1_000_000],
            75.0
        ));
        let text = words(Level::Critical, &figure, None, &HandoffWords::HeldBack);
        assert!(text.contains("an assumed 200k-token window"), "{text}");
        let likely = Figure { window_source: metrics::WindowSource::Likely, ..figure.clone() };
        assert!(critical_action_allowed(&likely, &[200_000, 1_000_000], 75.0), "150k proves 200k's CRITICAL");
        assert!(!critical_action_allowed(
            &Figure { used_tokens: Some(140_000), ..likely.clone() },
            &[200_000, 1_000_000],
            75.0
        ));
        let said = words(Level::Critical, &likely, None, &HandoffWords::NotAttempted);
        assert!(said.contains("from baton's table"), "{said}");
        assert!(said.contains("of the full 200k-token window"), "{said}");
        assert!(text.contains("has not written a handoff"), "{text}");
        let estimate =
            words(Level::Warning, &Figure { estimate: true, ..figure }, None, &HandoffWords::NotAttempted);
        assert!(estimate.starts_with("CONTEXT WARNING: Usage at 76% (estimated)."), "{estimate}");
        assert!(estimate.contains("This figure is an estimate"), "{estimate}");
    }
}
