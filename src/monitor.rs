//! The context monitor: after each tool call, decide whether the agent is told how full
//! its context is, and with which words.
//!
//! [`decide`] is the whole rule (GSD's contract) as a pure function over the level and
//! the previous debounce state; [`message`] words every level, in this one place. [`check`]
//! is the I/O around them: ask for the session's newest figure
//! ([`metrics::session_figure`]), then read-modify-write the state file (private,
//! versioned: [`crate::state`]) under an exclusive lock so parallel tool calls in one
//! session never lose a count. The lock is waited for at most [`DEBOUNCE_LOCK_WAIT`];
//! past it the monitor goes on unlocked (a count may be lost, a warning is not).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use std::path::Path;
use std::time::Duration;

use crate::config::Config;
use crate::fsx::{self, FileLock};
use crate::gitx::Mode;
use crate::host::Dialect;
use crate::metrics::{self, Figure, FigureQuery, Headroom, Level, Limits, Origin, learned};
use crate::state::{Loaded, VersionedFile};
use crate::{handoff, places, transcript};

/// The debounce state, GSD's `claude-ctx-<sid>-warned.json`. Unknown fields are kept so
/// a session can switch between GSD's hook and baton's mid-way.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WarnState {
    #[serde(rename = "callsSinceWarn", default)]
    pub calls_since_warn: u32,
    #[serde(rename = "lastLevel", default)]
    pub last_level: Option<String>,
    #[serde(rename = "criticalRecorded", default)]
    pub critical_recorded: bool,
    /// When the session last compacted (Unix seconds): figures taken before it are
    /// history and never raise a warning. baton's addition; GSD keeps unknown fields.
    #[serde(rename = "compactedAt", default, skip_serializing_if = "Option::is_none")]
    pub compacted_at: Option<i64>,
    /// When the host said the session ended (Unix seconds). baton's addition.
    #[serde(rename = "endedAt", default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<i64>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl WarnState {
    /// Reads a state file leniently; anything that is not an object with sane fields is
    /// "no state" (the next warning fires at once, as in GSD).
    pub fn parse(bytes: &[u8]) -> Option<WarnState> {
        let Value::Object(object) = serde_json::from_slice::<Value>(bytes).ok()? else {
            return None;
        };
        Some(WarnState::from_object(object))
    }

    /// The state from a file's object (its `version` stays among the unknown fields and
    /// is set again on write).
    pub fn from_object(mut object: Map<String, Value>) -> WarnState {
        let calls = object.remove("callsSinceWarn").and_then(|v| v.as_u64()).unwrap_or(0);
        let last_level = object.remove("lastLevel").and_then(|v| v.as_str().map(str::to_string));
        let critical_recorded = object.remove("criticalRecorded").and_then(|v| v.as_bool()).unwrap_or(false);
        let compacted_at = object.remove("compactedAt").and_then(|v| v.as_i64());
        let ended_at = object.remove("endedAt").and_then(|v| v.as_i64());
        WarnState {
            calls_since_warn: calls.min(u32::MAX as u64) as u32,
            last_level,
            critical_recorded,
            compacted_at,
            ended_at,
            extra: object,
        }
    }
}

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
    pub dialect: Dialect,
    /// A fresh status line figure was there, but the transcript was newer.
    pub newer_than_bridge: bool,
}

impl Default for FigureNotes {
    fn default() -> Self {
        FigureNotes { dialect: Dialect::Claude, newer_than_bridge: false }
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

impl SavedHandoff {
    pub fn from_outcome(outcome: &handoff::Outcome) -> SavedHandoff {
        let rel = |p: &Path| p.strip_prefix(&outcome.root).unwrap_or(p).display().to_string();
        let text = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
        let checkpoint = match &outcome.checkpoint {
            Some(c) if c.used == Mode::Branch => {
                CheckpointWords::Branch { branch: text(&c.branch), short: text(&c.short) }
            }
            Some(c) => CheckpointWords::Ref { reference: text(&c.reference), short: text(&c.short) },
            None => {
                outcome.checkpoint_note.clone().map(CheckpointWords::Note).unwrap_or(CheckpointWords::None)
            }
        };
        SavedHandoff { json: rel(&outcome.json_path), markdown: rel(&outcome.markdown_path), checkpoint }
    }
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
        source.push_str(match (notes.dialect, notes.newer_than_bridge) {
            (Dialect::Claude, true) => {
                " (This figure was read from the session's transcript: it is newer than the status line's.)"
            }
            (Dialect::Claude, false) => {
                " (This figure was read from the session's transcript: no status line figure was available.)"
            }
            (Dialect::Codex, _) => " (This figure was read from the session's transcript: Codex's rollout.)",
            (Dialect::Gemini, _) => {
                " (This figure was read from the session's transcript: Gemini CLI's chat recording.)"
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

impl Warning {
    /// The message, given what became of the handoff.
    pub fn text(&self, handoff: &HandoffWords) -> String {
        message(self.level, &self.figure, self.headroom.as_ref(), &self.notes, handoff)
    }
}

/// The session a tool call belongs to, as the hook event tells it.
#[derive(Debug, Clone)]
pub struct SessionRef<'a> {
    pub id: &'a str,
    pub dialect: Dialect,
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
            dialect: Dialect::Claude,
            transcript,
            model: None,
            tool_use_id: None,
            in_subagent: false,
            project: None,
        }
    }
}

const STATE_LIMIT: u64 = 64 * 1024;

/// The debounce state's format version (1: GSD's fields, baton's `compactedAt` and
/// `tokensPerCall`, in the private session folder).
pub const WARN_STATE_VERSION: u64 = 1;

/// How long the hook waits for the debounce lock: well under the 2 s stdin deadline.
pub const DEBOUNCE_LOCK_WAIT: Duration = Duration::from_millis(300);

/// Session state files untouched this long are pruned (sessions long gone).
const SESSION_STATE_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);

/// The session's debounce state file, `None` without a home (then no state is kept).
pub fn warn_state_file(session_id: &str) -> Option<VersionedFile> {
    places::warn_state_path(session_id).map(|path| VersionedFile::new(path, WARN_STATE_VERSION, STATE_LIMIT))
}

/// The session's debounce lock, taken within [`DEBOUNCE_LOCK_WAIT`]. `None` when it
/// cannot be had in time: the caller goes on unlocked rather than hang or fall silent.
fn debounce_lock(session_id: &str) -> Option<FileLock> {
    let path = places::warn_lock_path(session_id)?;
    fsx::ensure_dir(path.parent()?, true).ok()?;
    FileLock::acquire_within(&path, DEBOUNCE_LOCK_WAIT).ok()
}

/// GSD's state for the session, when GSD's hook ran before baton's: read only when this
/// user owns it (anyone can plant a file in the temp dir), never written.
fn gsd_state(session_id: &str) -> Option<WarnState> {
    let bytes = fsx::read_owned(&places::gsd_warn_state_path(session_id), STATE_LIMIT).ok()?;
    WarnState::parse(&bytes)
}

fn store_state(file: &VersionedFile, state: &WarnState) -> Option<()> {
    let Value::Object(object) = serde_json::to_value(state).ok()? else { return None };
    file.store(object, false).ok()
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
        dialect: session.dialect,
        transcript: session.transcript,
        model: session.model,
        tool_use_id: session.tool_use_id,
        in_subagent: session.in_subagent,
        stale_seconds,
        default_window: config.limits().default_window,
        configured_windows: &windows,
        thresholds_used: config.thresholds_used(),
        now,
    };
    let found = metrics::session_figure(&query)?;
    let newer_than_bridge = session.dialect == Dialect::Claude
        && found.figure.origin == Origin::Transcript
        && metrics::read_bridge(session.id, now, stale_seconds).is_some();
    Some((found, FigureNotes { dialect: session.dialect, newer_than_bridge }))
}

/// Runs the monitor for one tool call: finds the figure, applies the debounce under the
/// session's lock, and returns the warning to inject, if any. Returns `None` for every
/// failure: the hook path is silent rather than wrong.
pub fn check(session: &SessionRef, config: &Config, now: i64) -> Option<Warning> {
    if !fsx::valid_session_id(session.id) || !config.context_warnings() {
        return None;
    }
    let mut limits: Limits = config.limits();
    let (found, notes) = current_figure(session, config, config.stale_seconds(), now)?;
    let figure = found.figure;
    let model = found.model;
    let headroom_mode = limits.warn_headroom.is_some();
    if headroom_mode {
        set_compaction(&mut limits, session, &figure, model.as_deref());
    }
    let level = metrics::assess(&figure, &limits, model.as_deref(), None).level;
    if level == Level::Normal {
        return None;
    }
    let (decision, pace) = {
        let state_file = warn_state_file(session.id)?;
        let _lock = debounce_lock(session.id);
        let loaded = state_file.load();
        // A newer baton's state is left alone (doctor says so).
        if !loaded.replaceable() {
            return None;
        }
        let previous = if loaded == Loaded::Missing {
            if let Some(dir) = places::session_dir() {
                crate::state::prune_older_than(&dir, SESSION_STATE_MAX_AGE);
            }
            gsd_state(session.id)
        } else {
            loaded.object().map(WarnState::from_object)
        };
        // A figure from before the session's last compaction is history.
        if previous.as_ref().and_then(|p| p.compacted_at).is_some_and(|at| figure.taken_at <= at) {
            return None;
        }
        let mut decision = decide(level, previous, config.debounce_calls());
        // Only a warning that is given pays for measuring the pace (Claude's transcript).
        let pace = match (decision.fire, session.transcript, session.dialect) {
            (Some(_), Some(path), Dialect::Claude) => transcript::tokens_per_tool_call(path).ok().flatten(),
            _ => None,
        };
        if let Some(pace) = pace {
            decision.state.extra.insert("tokensPerCall".into(), Value::from(pace.tokens_per_call.round()));
        }
        store_state(&state_file, &decision.state)?;
        (decision, pace)
    };
    let level = decision.fire?;
    if !headroom_mode {
        set_compaction(&mut limits, session, &figure, model.as_deref());
    }
    let headroom =
        metrics::assess(&figure, &limits, model.as_deref(), pace.map(|p| p.tokens_per_call)).headroom;
    let critical_used = 100.0 - limits.thresholds.critical_remaining;
    Some(Warning {
        level,
        critical_action_allowed: critical_action_allowed(&figure, session.dialect.windows(), critical_used),
        figure,
        headroom,
        notes,
        critical_recorded: decision.state.critical_recorded,
    })
}

/// Where the session's host compacts, into `limits`: only when a level or a message needs it.
fn set_compaction(limits: &mut Limits, session: &SessionRef, figure: &Figure, model: Option<&str>) {
    limits.compaction = metrics::compaction_for(session.dialect, figure, session.project);
    if session.dialect == Dialect::Claude {
        limits.rule.learned = model.and_then(learned::learned_point);
    }
}

/// The recent tokens per tool call the monitor last measured for a session, if any.
pub fn tokens_per_call(session_id: &str) -> Option<f64> {
    if !fsx::valid_session_id(session_id) {
        return None;
    }
    let state = WarnState::from_object(warn_state_file(session_id)?.load().object()?);
    state.extra.get("tokensPerCall")?.as_f64().filter(|p| *p > 0.0)
}

/// Records a compaction in the session's state, under the lock: the debounce starts
/// over (the next warning fires at once, escalation works again, the next CRITICAL
/// writes a fresh handoff) and figures taken up to `now` are ignored from then on.
pub fn note_compaction(session_id: &str, now: i64) {
    update_state(session_id, |state| {
        state.calls_since_warn = 0;
        state.last_level = None;
        state.critical_recorded = false;
        state.compacted_at = Some(now);
        let count = state.extra.get("compactions").and_then(Value::as_u64).unwrap_or(0);
        state.extra.insert("compactions".into(), Value::from(count + 1));
    });
}

/// How many compactions the hook has counted for a session (the statusline's segment).
pub fn compactions(session_id: &str) -> Option<u64> {
    if !fsx::valid_session_id(session_id) {
        return None;
    }
    WarnState::from_object(warn_state_file(session_id)?.load().object()?).extra.get("compactions")?.as_u64()
}

/// Read-modify-write of the session's state under its lock; silent on any failure.
fn update_state(session_id: &str, change: impl FnOnce(&mut WarnState)) {
    if !fsx::valid_session_id(session_id) {
        return;
    }
    let Some(state_file) = warn_state_file(session_id) else { return };
    let _lock = debounce_lock(session_id);
    let loaded = state_file.load();
    if !loaded.replaceable() {
        return;
    }
    let mut state = loaded.object().map(WarnState::from_object).unwrap_or_default();
    change(&mut state);
    let _ = store_state(&state_file, &state);
}

/// Notes that the host ended the session, so no resume brief calls it active.
pub fn mark_ended(session_id: &str, now: i64) {
    update_state(session_id, |state| state.ended_at = Some(now));
}

/// When the host said the session ended, if it did.
pub fn session_ended(session_id: &str) -> Option<i64> {
    if !fsx::valid_session_id(session_id) {
        return None;
    }
    WarnState::from_object(warn_state_file(session_id)?.load().object()?).ended_at
}

/// Notes in the session's state that the CRITICAL handoff was written, under the lock.
pub fn mark_critical_recorded(session_id: &str) {
    update_state(session_id, |state| state.critical_recorded = true);
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
    fn state_keeps_gsd_names_and_unknown_fields() {
        let state = WarnState::parse(
            br#"{"callsSinceWarn": 3, "lastLevel": "warning", "criticalRecorded": true, "other": 1}"#,
        )
        .unwrap();
        assert_eq!(state.calls_since_warn, 3);
        assert!(state.critical_recorded);
        let json = serde_json::to_value(&state).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"callsSinceWarn": 3, "lastLevel": "warning", "criticalRecorded": true, "other": 1})
        );
        assert!(WarnState::parse(b"[]").is_none());
        assert!(WarnState::parse(b"garbage").is_none());
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
