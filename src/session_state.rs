//! Per-session state: what baton keeps about one session between hook calls (the
//! debounce counts, the last level, when it compacted or ended, the measured pace), in
//! baton's private session folder under GSD's file name and field names. Typed as
//! [`WarnState`]; every change goes through one locked load-edit-store
//! ([`crate::state::VersionedFile::update`]), so parallel tool calls never lose a count.
//! The lock is waited for at most [`crate::state::lock_wait`]; past it the change goes
//! on unlocked (a count may be lost, a warning is not).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::state::{Edit, Guard, Loaded, VersionedFile};
use crate::{fsx, places, transcript};

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
    /// The recent tokens per tool call, measured when a warning was given. baton's.
    #[serde(rename = "tokensPerCall", default, skip_serializing_if = "Option::is_none")]
    pub tokens_per_call: Option<f64>,
    /// The turn (Claude Code's `prompt_id`, Codex's `turn_id`) the last warning was
    /// given in, with the figure's tokens: the events of one reply share one warning.
    /// baton's (cadence across events).
    #[serde(rename = "warnedTurn", default, skip_serializing_if = "Option::is_none")]
    pub warned_turn: Option<String>,
    #[serde(rename = "warnedTokens", default, skip_serializing_if = "Option::is_none")]
    pub warned_tokens: Option<u64>,
    /// The level a Stop was last answered at: Stop is answered at most once per level.
    /// baton's (cadence across events).
    #[serde(rename = "stopAnsweredLevel", default, skip_serializing_if = "Option::is_none")]
    pub stop_answered_level: Option<String>,
    /// The pause (`handoff.on_critical` pause/relay, see `hook::pause`): when
    /// the CRITICAL handoff armed it (Unix seconds). baton's addition.
    #[serde(rename = "pauseArmedAt", default, skip_serializing_if = "Option::is_none")]
    pub pause_armed_at: Option<i64>,
    /// Tool calls counted since the pause was armed (the grace calls used). baton's.
    #[serde(rename = "pauseGraceCallsUsed", default, skip_serializing_if = "is_zero")]
    pub pause_grace_calls_used: u32,
    /// When baton stopped the agent through the host's own stop. baton's.
    #[serde(rename = "pausedAt", default, skip_serializing_if = "Option::is_none")]
    pub paused_at: Option<i64>,
    /// The HANDOFF.json the pause saved (relative to the project root). baton's.
    #[serde(rename = "pauseHandoff", default, skip_serializing_if = "Option::is_none")]
    pub pause_handoff: Option<String>,
    /// Calls refused since the pause stopped the agent, while it refuses them. baton's.
    #[serde(rename = "pauseRefusals", default, skip_serializing_if = "Option::is_none")]
    pub pause_refusals: Option<u32>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
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
        let tokens_per_call = object.remove("tokensPerCall").and_then(|v| v.as_f64());
        let text = |v: Value| v.as_str().map(str::to_string);
        let warned_turn = object.remove("warnedTurn").and_then(text);
        let warned_tokens = object.remove("warnedTokens").and_then(|v| v.as_u64());
        let stop_answered_level = object.remove("stopAnsweredLevel").and_then(text);
        let pause_armed_at = object.remove("pauseArmedAt").and_then(|v| v.as_i64());
        let pause_grace_calls_used =
            object.remove("pauseGraceCallsUsed").and_then(|v| v.as_u64()).unwrap_or(0).min(u32::MAX as u64)
                as u32;
        let paused_at = object.remove("pausedAt").and_then(|v| v.as_i64());
        let pause_handoff = object.remove("pauseHandoff").and_then(|v| v.as_str().map(str::to_string));
        let pause_refusals =
            object.remove("pauseRefusals").and_then(|v| v.as_u64()).map(|n| n.min(u32::MAX as u64) as u32);
        WarnState {
            calls_since_warn: calls.min(u32::MAX as u64) as u32,
            last_level,
            critical_recorded,
            compacted_at,
            ended_at,
            tokens_per_call,
            warned_turn,
            warned_tokens,
            stop_answered_level,
            pause_armed_at,
            pause_grace_calls_used,
            paused_at,
            pause_handoff,
            pause_refusals,
            extra: object,
        }
    }

    /// The state as a file's object.
    pub fn to_object(&self) -> Option<Map<String, Value>> {
        match serde_json::to_value(self).ok()? {
            Value::Object(object) => Some(object),
            _ => None,
        }
    }
}

const STATE_LIMIT: u64 = 64 * 1024;

/// The debounce state's format version (1: GSD's fields, baton's `compactedAt` and
/// `tokensPerCall`, in the private session folder).
pub const WARN_STATE_VERSION: u64 = 1;

/// Session state files untouched this long are pruned (sessions long gone).
const SESSION_STATE_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);

/// The id a context's state is kept under: the session's own, or for a subagent
/// (Claude Code's `agent_id`) `<session>.agent-<agent_id>`, so a subagent never shares
/// its parent's count. `None` for ids that could leave the folder.
pub fn context_id(session_id: &str, agent_id: Option<&str>) -> Option<String> {
    let id = match agent_id {
        Some(agent) if fsx::valid_session_id(agent) => format!("{session_id}.agent-{agent}"),
        Some(_) => return None,
        None => session_id.to_string(),
    };
    Some(id).filter(|id| fsx::valid_session_id(id))
}

/// The session's debounce state file, `None` without a home (then no state is kept).
pub fn warn_state_file(session_id: &str) -> Option<VersionedFile> {
    places::warn_state_path(session_id).map(|path| VersionedFile::new(path, WARN_STATE_VERSION, STATE_LIMIT))
}

/// The session's lock: the hook goes on unlocked rather than hang or fall silent.
fn guard(session_id: &str) -> Option<Guard> {
    Some(Guard { or_unlocked: true, ..Guard::new(places::warn_lock_path(session_id)?) })
}

/// GSD's state for the session, when GSD's hook ran before baton's: read only when this
/// user owns it (anyone can plant a file in the temp dir), never written.
fn gsd_state(session_id: &str) -> Option<WarnState> {
    let bytes = fsx::read_owned(&places::gsd_warn_state_path(session_id), STATE_LIMIT).ok()?;
    WarnState::parse(&bytes)
}

/// The session's state as stored (no lock: a reader only).
pub fn load(session_id: &str) -> Option<WarnState> {
    if !fsx::valid_session_id(session_id) {
        return None;
    }
    Some(WarnState::from_object(warn_state_file(session_id)?.load().object()?))
}

/// What became of a state change ([`update_kept`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Kept<T> {
    /// Stored (or nothing to store).
    Stored(T),
    /// Decided, but the state could not be kept (why): the caller goes on with the value
    /// and without a memory of it.
    NotStored(T, String),
}

impl<T> Kept<T> {
    pub fn value(self) -> T {
        match self {
            Kept::Stored(value) | Kept::NotStored(value, _) => value,
        }
    }
}

/// [`update`], but a state that cannot be kept (no home, an unwritable or blocked state
/// folder, a newer baton's file) still gets its decision: `change` runs (from no state
/// when the stored one cannot be read) and the value comes back as
/// [`Kept::NotStored`] with why. `None` only for an id that could leave the folder.
pub fn update_kept<T>(
    session_id: &str,
    change: impl FnOnce(Option<WarnState>) -> (Option<WarnState>, T),
) -> Option<Kept<T>> {
    if !fsx::valid_session_id(session_id) {
        return None;
    }
    let Some(file) = warn_state_file(session_id) else {
        return Some(Kept::NotStored(change(None).1, "no home folder is set".into()));
    };
    let mut change = Some(change);
    let mut decided = None;
    let edit = |loaded: Loaded| {
        let previous = if loaded == Loaded::Missing {
            if let Some(dir) = places::session_dir() {
                crate::state::prune_older_than(&dir, SESSION_STATE_MAX_AGE);
            }
            gsd_state(session_id)
        } else {
            loaded.object().map(WarnState::from_object)
        };
        let Some(change) = change.take() else { return Edit::Keep(()) };
        let (state, value) = change(previous);
        decided = Some(value);
        match state.and_then(|s| s.to_object()) {
            Some(object) => Edit::Store(object, ()),
            None => Edit::Keep(()),
        }
    };
    let guard = guard(session_id)?;
    let result = file.update(&guard, false, edit);
    match (result, decided) {
        (Ok(()), Some(value)) => Some(Kept::Stored(value)),
        (Err(why), Some(value)) => Some(Kept::NotStored(value, why.to_string())),
        (result, None) => {
            let why = result.err().map_or_else(|| "the state was not read".to_string(), |e| e.to_string());
            let change = change.take()?;
            Some(Kept::NotStored(change(None).1, why))
        }
    }
}

/// The read mark's format version (1: `reader`, the file's stamp, `resume_at`,
/// `anchor` and the reader's state).
pub const READ_MARK_VERSION: u64 = 1;
/// A read mark is a few hundred bytes: anything larger is not baton's.
const READ_MARK_LIMIT: u64 = 16 * 1024;

#[derive(Serialize, Deserialize)]
struct StoredMark {
    version: u64,
    #[serde(flatten)]
    mark: transcript::KeptMark,
}

/// Where the last read of a context's transcript stopped, and what it found (see
/// `transcript::resume`): `None` when none was kept, or it is not this build's.
pub fn load_mark(context_id: &str) -> Option<transcript::KeptMark> {
    if !fsx::valid_session_id(context_id) {
        return None;
    }
    let bytes = fsx::read_limited(&places::read_mark_path(context_id)?, READ_MARK_LIMIT).ok()?;
    let stored: StoredMark = serde_json::from_slice(&bytes).ok()?;
    (stored.version == READ_MARK_VERSION).then_some(stored.mark)
}

/// Keeps a context's read mark (private, replaced atomically, not made durable: a lost
/// mark costs one bounded read from the end). No lock: two calls that race each keep a
/// whole mark, and the next call goes on from either.
pub fn keep_mark(context_id: &str, mark: transcript::KeptMark) {
    let Some(path) = places::read_mark_path(context_id).filter(|_| fsx::valid_session_id(context_id)) else {
        return;
    };
    let Ok(bytes) = serde_json::to_vec(&StoredMark { version: READ_MARK_VERSION, mark }) else { return };
    let written = fsx::write_atomic(&path, &bytes, fsx::WriteOptions::STATE);
    if written.as_ref().is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        if let Some(dir) = path.parent() {
            if fsx::ensure_dir(dir, true).is_ok() {
                let _ = fsx::write_atomic(&path, &bytes, fsx::WriteOptions::STATE);
            }
        }
    }
}

/// Whether this is the first time a context is told that its state cannot be kept: a
/// private marker in the temp dir (outside the state folder that failed) remembers it.
/// When even that cannot be made, every warning says so.
pub fn first_notice_of_unkept(context_id: &str) -> bool {
    if !fsx::valid_session_id(context_id) {
        return true;
    }
    let marker = places::temp_dir().join(format!("baton-unkept-{context_id}"));
    let made = crate::platform::create_new(&marker, 0o600);
    !matches!(made, Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists)
}

/// Forgets a context's state (a subagent that finished).
pub fn forget(context_id: &str) {
    if !fsx::valid_session_id(context_id) {
        return;
    }
    if let Some(path) = places::warn_state_path(context_id) {
        let _ = std::fs::remove_file(path);
    }
    if let Some(path) = places::warn_lock_path(context_id) {
        let _ = std::fs::remove_file(path);
    }
    if let Some(path) = places::read_mark_path(context_id) {
        let _ = std::fs::remove_file(path);
    }
}

/// A change to baton's own fields, from the state there (GSD's is not read for it).
fn change(session_id: &str, edit: impl FnOnce(&mut WarnState)) {
    let Some(file) = warn_state_file(session_id).filter(|_| fsx::valid_session_id(session_id)) else {
        return;
    };
    let Some(guard) = guard(session_id) else { return };
    let _ = file.update(&guard, false, |loaded| {
        let mut state = loaded.object().map(WarnState::from_object).unwrap_or_default();
        edit(&mut state);
        state.to_object().map_or(Edit::Keep(()), |object| Edit::Store(object, ()))
    });
}

/// The recent tokens per tool call the monitor last measured for a session, if any.
pub fn tokens_per_call(session_id: &str) -> Option<f64> {
    load(session_id)?.tokens_per_call.filter(|p| *p > 0.0)
}

/// Records a compaction in the session's state: the debounce starts over (the next
/// warning fires at once, escalation works again, the next CRITICAL writes a fresh
/// handoff) and figures taken up to `now` are ignored from then on.
pub fn note_compaction(session_id: &str, now: i64) {
    change(session_id, |state| {
        state.calls_since_warn = 0;
        state.last_level = None;
        state.critical_recorded = false;
        state.compacted_at = Some(now);
        // A compacted context is no longer the one the pause was armed for.
        state.pause_armed_at = None;
        state.pause_grace_calls_used = 0;
        state.pause_refusals = None;
        let count = state.extra.get("compactions").and_then(Value::as_u64).unwrap_or(0);
        state.extra.insert("compactions".into(), Value::from(count + 1));
    });
}

/// How many compactions the hook has counted for a session (the statusline's segment).
pub fn compactions(session_id: &str) -> Option<u64> {
    load(session_id)?.extra.get("compactions")?.as_u64()
}

/// Notes that the host ended the session, so no resume brief calls it active.
pub fn mark_ended(session_id: &str, now: i64) {
    change(session_id, |state| state.ended_at = Some(now));
}

/// When the host said the session ended, if it did.
pub fn session_ended(session_id: &str) -> Option<i64> {
    load(session_id)?.ended_at
}

/// Notes in the session's state that the CRITICAL handoff was written.
pub fn mark_critical_recorded(session_id: &str) {
    change(session_id, |state| state.critical_recorded = true);
}

/// The pause's part of a session's state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PauseState {
    /// When the CRITICAL handoff armed the pause.
    pub armed_at: Option<i64>,
    /// Tool calls since it was armed.
    pub grace_calls_used: u32,
    /// When baton stopped the agent.
    pub paused_at: Option<i64>,
    /// On a host stopped before its next call (`PauseStop::BeforeTheNextCall`,
    /// `PauseStop::RefuseTheNextCalls`): the calls refused so far in the turn the agent
    /// was stopped in; `None` when no call is to be refused.
    pub refusals: Option<u32>,
}

/// The pause's part of a session's state, as the hook's pause rule reads it.
pub fn pause_of(state: &WarnState) -> PauseState {
    PauseState {
        armed_at: state.pause_armed_at,
        grace_calls_used: state.pause_grace_calls_used,
        paused_at: state.paused_at,
        refusals: state.pause_refusals,
    }
}

/// The one locked change of the pause's fields: `change` gets the pause state stored and
/// returns the one to store with a value; `None` on any failure (the hook stays silent).
pub fn update_pause<T>(
    session_id: &str,
    change: impl FnOnce(PauseState) -> (PauseState, T),
    handoff: Option<&str>,
) -> Option<T> {
    let file = warn_state_file(session_id).filter(|_| fsx::valid_session_id(session_id))?;
    let guard = guard(session_id)?;
    file.update(&guard, false, |loaded| {
        let mut state = loaded.object().map(WarnState::from_object).unwrap_or_default();
        let (pause, value) = change(pause_of(&state));
        state.pause_armed_at = pause.armed_at;
        state.pause_grace_calls_used = pause.grace_calls_used;
        state.paused_at = pause.paused_at;
        state.pause_refusals = pause.refusals;
        if let Some(handoff) = handoff {
            state.pause_handoff = Some(handoff.to_string());
        }
        state.to_object().map_or(Edit::Keep(None), |object| Edit::Store(object, Some(value)))
    })
    .ok()
    .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let paced = WarnState::parse(br#"{"tokensPerCall": 2500.0}"#).unwrap();
        assert_eq!(paced.tokens_per_call, Some(2500.0));
        assert!(paced.extra.is_empty());
    }
}
