//! The context monitor: after each tool call, decide whether the agent is told how full
//! its context is, and with which words.
//!
//! [`decide`] is the whole rule (GSD's contract) as a pure function over the level and
//! the previous debounce state. [`check`] is the I/O around it: read the bridge, then
//! read-modify-write the state file (private, versioned: [`crate::state`]) under an
//! exclusive lock so parallel tool calls in one session never lose a count. The lock is
//! waited for at most [`DEBOUNCE_LOCK_WAIT`]; past it the monitor goes on unlocked (a
//! count may be lost, a warning is not).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use std::path::Path;
use std::time::Duration;

use crate::config::Config;
use crate::fsx::{self, FileLock};
use crate::metrics::{self, Figure, Headroom, Level, Limits, Origin, learned};
use crate::state::{Loaded, VersionedFile};
use crate::{places, transcript};

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
        WarnState {
            calls_since_warn: calls.min(u32::MAX as u64) as u32,
            last_level,
            critical_recorded,
            compacted_at,
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

/// The words the agent is given. Advisory: they inform, they never override the user.
pub fn message(level: Level, figure: &Figure, headroom: Option<&Headroom>) -> String {
    let used = figure.used_pct();
    let remaining = figure.remaining_display();
    let room = headroom.map(|h| format!(" {}.", capitalise(&h.describe()))).unwrap_or_default();
    let source = match figure.origin {
        Origin::Transcript => {
            " (This figure was read from the session's transcript: no status line figure was available.)"
        }
        _ => "",
    };
    match level {
        Level::Critical => format!(
            "CONTEXT CRITICAL: Usage at {used}%. Remaining: {remaining}%.{room} Context is nearly \
             exhausted. It would be wise to finish the current step, avoid starting anything \
             new, and let the user know so they can decide how to continue (for example by \
             pausing with a handoff: `baton pause` or /gsd:pause-work).{source}"
        ),
        _ => format!(
            "CONTEXT WARNING: Usage at {used}%. Remaining: {remaining}%.{room} Context is getting \
             limited. Consider avoiding new complex work or broad exploration, and keep the \
             current task moving towards a natural stopping point.{source}"
        ),
    }
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// The result of a monitor check, for callers that build on it (the handoff).
#[derive(Debug, Clone)]
pub struct Warning {
    pub level: Level,
    pub figure: Figure,
    pub headroom: Option<Headroom>,
    pub text: String,
    /// A CRITICAL handoff was already recorded for this session (`criticalRecorded`).
    pub critical_recorded: bool,
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

/// Where the session's figure comes from: a fresh bridge, else its transcript (so the
/// monitor works with any statusline, with none, and in headless runs), else nowhere.
/// Returns the figure and the model id, when known.
pub fn current_figure(
    session_id: &str,
    transcript: Option<&Path>,
    limits: &Limits,
    stale_seconds: u64,
    now: i64,
) -> Option<(Figure, Option<String>)> {
    let bridge = metrics::read_any_bridge(session_id);
    if let Some(bridge) = bridge.as_ref().filter(|b| metrics::is_fresh(b, now, stale_seconds)) {
        return Some((bridge.figure(), bridge.model_id.clone()));
    }
    let reading = transcript::current_context(transcript?).ok()??;
    if let (Some(model), Some(compaction)) = (reading.model.as_deref(), reading.last_compaction.as_ref()) {
        learned::record(model, compaction);
    }
    let hint = bridge.and_then(|b| b.context_window_size);
    let mut figure = metrics::figure_from_reading(&reading, hint, limits.default_window, now);
    if let Some(at) = reading.timestamp.as_deref().and_then(transcript::unix_seconds) {
        figure.taken_at = at;
    }
    Some((figure, reading.model.clone()))
}

/// Runs the monitor for one tool call of `session_id`: finds the figure, applies the
/// debounce under the session's lock, and returns the warning to inject, if any.
/// Returns `None` for every failure: the hook path is silent rather than wrong.
pub fn check(session_id: &str, transcript_path: Option<&Path>, config: &Config, now: i64) -> Option<Warning> {
    if !fsx::valid_session_id(session_id) || !config.context_warnings() {
        return None;
    }
    let mut limits = config.limits();
    let (figure, model) = current_figure(session_id, transcript_path, &limits, config.stale_seconds(), now)?;
    let headroom_mode = limits.warn_headroom.is_some();
    if headroom_mode {
        limits.rule.learned = model.as_deref().and_then(learned::learned_point);
    }
    let level = metrics::assess(&figure, &limits, model.as_deref(), None).level;
    if level == Level::Normal {
        return None;
    }
    let (decision, pace) = {
        let state_file = warn_state_file(session_id)?;
        let _lock = debounce_lock(session_id);
        let loaded = state_file.load();
        // A newer baton's state is left alone (doctor says so).
        if !loaded.replaceable() {
            return None;
        }
        let previous = if loaded == Loaded::Missing {
            if let Some(dir) = places::session_dir() {
                crate::state::prune_older_than(&dir, SESSION_STATE_MAX_AGE);
            }
            gsd_state(session_id)
        } else {
            loaded.object().map(WarnState::from_object)
        };
        // A figure from before the session's last compaction is history.
        if previous.as_ref().and_then(|p| p.compacted_at).is_some_and(|at| figure.taken_at <= at) {
            return None;
        }
        let mut decision = decide(level, previous, config.debounce_calls());
        // Only a warning that is given pays for measuring the pace.
        let pace = match (decision.fire, transcript_path) {
            (Some(_), Some(path)) => transcript::tokens_per_tool_call(path).ok().flatten(),
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
        limits.rule.learned = model.as_deref().and_then(learned::learned_point);
    }
    let headroom =
        metrics::assess(&figure, &limits, model.as_deref(), pace.map(|p| p.tokens_per_call)).headroom;
    let critical_recorded = decision.state.critical_recorded;
    Some(Warning {
        level,
        text: message(level, &figure, headroom.as_ref()),
        figure,
        headroom,
        critical_recorded,
    })
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
    });
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

    #[test]
    fn messages_start_with_the_gsd_prefixes() {
        let figure = Figure {
            remaining_pct: 28.0,
            used_tokens: None,
            window_tokens: None,
            origin: metrics::Origin::Bridge,
            taken_at: 0,
        };
        assert!(
            message(Level::Warning, &figure, None)
                .starts_with("CONTEXT WARNING: Usage at 72%. Remaining: 28%. Context")
        );
        assert!(
            message(Level::Critical, &figure, None)
                .starts_with("CONTEXT CRITICAL: Usage at 72%. Remaining: 28%.")
        );
        let rule = metrics::CompactionRule { buffer: 33_000, ..Default::default() };
        let room = metrics::headroom(144_012, 200_000, &rule, Some(2500.0));
        let text = message(Level::Warning, &Figure { origin: Origin::Transcript, ..figure }, Some(&room));
        assert!(
            text.starts_with("CONTEXT WARNING: Usage at 72%. Remaining: 28%. About 23k tokens, about 9 tool calls before auto-compaction. Context"),
            "{text}"
        );
        assert!(text.ends_with("no status line figure was available.)"), "{text}");
    }
}
