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
use crate::host::HostKind;
use crate::metrics::{self, Basis, Figure, FigureQuery, Headroom, Level, Origin, Want};
use crate::session_state::{self, WarnState};
use crate::{fsx, transcript};

/// What the monitor decided for one tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The level to warn at, if a warning fires.
    pub fire: Option<Level>,
    /// The state to store.
    pub state: WarnState,
}

/// The debounce rule. `level` is Warning or Critical (nothing is decided at Normal).
/// The first warning fires at once (no state yet, or a state reset by a compaction);
/// after a warning, the `debounce`-th call fires again; WARNING→CRITICAL fires at once.
pub fn decide(level: Level, previous: Option<WarnState>, debounce: u32) -> Decision {
    let first = previous.as_ref().is_none_or(|p| p.last_level.is_none());
    let mut state = previous.unwrap_or_default();
    state.calls_since_warn = state.calls_since_warn.saturating_add(1);
    let escalated = level == Level::Critical && state.last_level.as_deref() == Level::Warning.state_name();
    if !first && state.calls_since_warn < debounce && !escalated {
        return Decision { fire: None, state };
    }
    state.calls_since_warn = 0;
    state.last_level = level.state_name().map(str::to_string);
    Decision { fire: Some(level), state }
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
        FigureNotes { host: HostKind::Claude, newer_than_bridge: false }
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
    /// HANDOFF.json, relative to the project root.
    pub json: String,
    /// .continue-here.md, relative to the project root.
    pub markdown: String,
    pub checkpoint: CheckpointWords,
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
    handoff: &HandoffWords,
) -> String {
    let used = figure.used_pct();
    let remaining = figure.remaining_display();
    let estimate = if figure.estimate { " (estimated)" } else { "" };
    let window = match (figure.window_source.is_assumed(), metrics::describe_window(figure)) {
        (true, Some(window)) => format!(
            " This is of {window}: baton does not know this model's context window, so the real figure may be much lower (set `models.<id>.window` in baton's config)."
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
        source.push_str(match (notes.host, notes.newer_than_bridge) {
            (HostKind::Claude, true) => {
                " (This figure was read from the session's transcript: it is newer than the status line's.)"
            }
            (HostKind::Claude, false) => {
                " (This figure was read from the session's transcript: no status line figure was available.)"
            }
            (HostKind::Codex, _) => " (This figure was read from the session's transcript: Codex's rollout.)",
            (HostKind::Gemini, _) => {
                " (This figure was read from the session's transcript: Gemini CLI's chat recording.)"
            }
            (HostKind::Qwen, _) => {
                " (This figure was read from the session's transcript: Qwen Code's chat recording.)"
            }
            (HostKind::Droid, _) => {
                " (This figure was read from Factory Droid's session record: its last model call.)"
            }
        });
    }
    let head = |name: &str| {
        format!("CONTEXT {name}: Usage at {used}%{estimate}. Remaining: {remaining}%.{window}{room}")
    };
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
            format!("{} Context is nearly exhausted.{action}{source}", head("CRITICAL"))
        }
        _ => format!(
            "{} Context is getting limited. Consider avoiding new complex work or broad exploration, and keep the current task moving towards a natural stopping point.{source}",
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
    format!(
        " baton has saved a handoff from what it could check (git, .planning, the transcript) to {json} and {md}{checkpoint}. It would help the next session if you filled in `next_action`, `decisions` and `context_notes` in {json} with what only you know (intent, approach, what you were about to try), then finished the current step and let the user know the context is nearly exhausted.",
        json = saved.json,
        md = saved.markdown,
    )
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// Whether a CRITICAL action (handoff, checkpoint) may rest on a figure (pure): its
/// window is a fact, or the tokens alone prove the context that full, whichever of the
/// host's windows is the real one.
pub fn critical_action_allowed(figure: &Figure, host_windows: &[u64], critical_used_pct: f64) -> bool {
    if !figure.window_source.is_assumed() {
        return true;
    }
    let largest = host_windows.iter().copied().max().unwrap_or(0);
    figure.used_tokens.is_some_and(|t| largest > 0 && t as f64 >= largest as f64 * critical_used_pct / 100.0)
}

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
        if self.level != Level::Critical || !handoff_auto {
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
        message(self.level, &self.figure, self.headroom.as_ref(), &self.notes, handoff)
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
    /// The project folder (resolved once by the caller).
    pub project: Option<&'a Path>,
}

impl<'a> SessionRef<'a> {
    /// A Claude Code session known by id and transcript only (`baton pause`).
    pub fn claude(id: &'a str, transcript: Option<&'a Path>) -> SessionRef<'a> {
        SessionRef {
            id,
            host: HostKind::Claude,
            transcript,
            model: None,
            tool_use_id: None,
            in_subagent: false,
            project: None,
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
        stale_seconds,
        default_window: crate::metrics::Limits::from_settings(config.settings()).default_window,
        configured_windows: &windows,
        thresholds_used: config.thresholds_used(),
        now,
    };
    let found = metrics::session_figure(&query)?;
    let newer_than_bridge = session.host == HostKind::Claude
        && found.figure.origin == Origin::Transcript
        && metrics::read_bridge(session.id, now, stale_seconds).is_some();
    Some((found, FigureNotes { host: session.host, newer_than_bridge }))
}

/// Runs the monitor for one tool call: finds the figure, applies the debounce under the
/// session's lock, and returns the warning to inject, if any. Returns `None` for every
/// failure: the hook path is silent rather than wrong.
pub fn check(session: &SessionRef, config: &Config, now: i64) -> Option<Warning> {
    if !fsx::valid_session_id(session.id) || !config.context_warnings() {
        return None;
    }
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
    let debounce = config.debounce_calls();
    let (decision, pace) = session_state::update(session.id, |previous| {
        // A figure from before the session's last compaction is history.
        if previous.as_ref().and_then(|p| p.compacted_at).is_some_and(|at| figure.taken_at <= at) {
            return (None, None);
        }
        let mut decision = decide(level, previous, debounce);
        // Only a warning that is given pays for measuring the pace (Claude's transcript).
        let pace = match (decision.fire, session.transcript, session.host) {
            (Some(_), Some(path), HostKind::Claude) => transcript::tokens_per_tool_call(path).ok().flatten(),
            _ => None,
        };
        if let Some(pace) = pace {
            decision.state.tokens_per_call = Some(pace.tokens_per_call.round());
        }
        (Some(decision.state.clone()), Some((decision, pace)))
    })??;
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
                let decision = decide(*level, state.take(), debounce);
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
    fn a_reset_state_fires_at_once() {
        let reset =
            WarnState { calls_since_warn: 0, last_level: None, compacted_at: Some(5), ..Default::default() };
        assert_eq!(decide(Level::Warning, Some(reset), 5).fire, Some(Level::Warning));
    }

    #[test]
    fn existing_state_means_not_first() {
        let previous =
            WarnState { calls_since_warn: 1, last_level: Some("warning".into()), ..Default::default() };
        assert_eq!(decide(Level::Warning, Some(previous), 5).fire, None);
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
        message(level, figure, headroom, &FigureNotes::default(), handoff)
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
        assert!(text.contains("has not written a handoff"), "{text}");
        let estimate =
            words(Level::Warning, &Figure { estimate: true, ..figure }, None, &HandoffWords::NotAttempted);
        assert!(estimate.starts_with("CONTEXT WARNING: Usage at 76% (estimated)."), "{estimate}");
        assert!(estimate.contains("This figure is an estimate"), "{estimate}");
    }
}
