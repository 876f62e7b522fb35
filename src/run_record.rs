//! The record of a `baton run`: what the hook, running inside the host, notes about each
//! leg (its sessions, the handoff it wrote, what the pause did, that the host is idle)
//! and the runner reads after the leg ([`crate::relay`]). The runner gives each leg
//! [`RUN_ID_ENV`] (the record, in baton's state dir) and [`RUN_LEG_ENV`] (its number);
//! an interactive host's hooks get [`LIVE_LEG`] and read the current leg from the record.
//! Apart from the runner, so the hook writes its notes without importing it.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::places;
use crate::state::{Edit, Guard, VersionedFile};

/// The environment variable naming the run's record.
pub const RUN_ID_ENV: &str = "BATON_RUN_ID";
/// The environment variable with the leg's number (1 for the first), or [`LIVE_LEG`].
pub const RUN_LEG_ENV: &str = "BATON_RUN_LEG";
/// [`RUN_LEG_ENV`] of an interactive host: one process through every leg, so the leg is
/// the record's [`RunRecord::current_leg`], which the runner moves on at each hand-over.
pub const LIVE_LEG: &str = "live";

const RECORD_VERSION: u64 = 1;
const RECORD_LIMIT: u64 = 256 * 1024;

/// What the hook noted about one leg.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LegNote {
    pub leg: u32,
    /// The host's session ids seen in this leg (a leg is usually one).
    #[serde(default)]
    pub sessions: Vec<String>,
    /// The highest context figure the hook saw (used %).
    #[serde(default)]
    pub peak_used_pct: Option<u32>,
    /// HANDOFF.json the CRITICAL handoff wrote (relative to the project root).
    #[serde(default)]
    pub handoff: Option<String>,
    /// The checkpoint ref (or branch) of that handoff.
    #[serde(default)]
    pub checkpoint: Option<String>,
    /// The project root that handoff was written in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<PathBuf>,
    /// The leg ended with a handoff of its own pending (the runner's finding, for the
    /// summary).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub handoff_pending: bool,
    /// The pause was armed in this leg.
    #[serde(default)]
    pub pause_armed: bool,
    /// baton stopped the agent through the host in this leg.
    #[serde(default)]
    pub stopped: bool,
    /// The leg's host process has exited (a hook holding it at the stop may let go).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ended: bool,
    /// The host's Stop hook fired this many times after the pause was armed: the host is
    /// idle at its prompt (the interactive relay's cue to hand over).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub idle_stops: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The longest a hook holds its host at the stop for `baton run` to end the leg: below
/// the 10 s hook timeout baton registers with Codex and Gemini CLI.
pub const STOP_HOLD: Duration = Duration::from_secs(8);

/// Holds the calling hook, and with it the host that waits for its answer, until
/// `baton run` has ended leg `leg` (at most [`STOP_HOLD`]). A host that goes on after a
/// hook's stop makes no further call while it waits, so nothing runs between baton's stop
/// and the relay's signal.
pub fn hold_until_leg_ends(run_id: &str, leg: u32) {
    let start = std::time::Instant::now();
    while start.elapsed() < STOP_HOLD {
        if load(run_id).leg(leg).is_some_and(|note| note.ended) {
            return;
        }
        std::thread::sleep(crate::util::proc::END_POLL);
    }
}

/// A run's record: the legs so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    #[serde(default)]
    pub legs: Vec<LegNote>,
    /// The leg an interactive host is in ([`LIVE_LEG`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_leg: Option<u32>,
}

impl RunRecord {
    pub fn leg(&self, leg: u32) -> Option<&LegNote> {
        self.legs.iter().find(|l| l.leg == leg)
    }

    fn leg_mut(&mut self, leg: u32) -> &mut LegNote {
        if let Some(i) = self.legs.iter().position(|l| l.leg == leg) {
            return &mut self.legs[i];
        }
        self.legs.push(LegNote { leg, ..LegNote::default() });
        self.legs.sort_by_key(|l| l.leg);
        let i = self.legs.iter().position(|l| l.leg == leg).unwrap_or(0);
        &mut self.legs[i]
    }
}

/// A run id is baton's own word: letters, digits and `-` only (it names a file).
pub fn valid_run_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

fn record_file(run_id: &str) -> Option<(VersionedFile, Guard)> {
    if !valid_run_id(run_id) {
        return None;
    }
    let dir = places::state_dir()?.join("runs");
    let file = VersionedFile::new(dir.join(format!("{run_id}.json")), RECORD_VERSION, RECORD_LIMIT);
    let guard = Guard {
        or_unlocked: true,
        wait: Duration::from_millis(300),
        ..Guard::new(dir.join(format!("{run_id}.lock")))
    };
    Some((file, guard))
}

/// The run's record as stored.
pub fn load(run_id: &str) -> RunRecord {
    record_file(run_id)
        .and_then(|(file, _)| file.load().object())
        .and_then(|object| serde_json::from_value(Value::Object(object)).ok())
        .unwrap_or_default()
}

/// A change to one leg's note, under the record's lock (silent on failure: the hook path).
pub fn note(run_id: &str, leg: u32, edit: impl FnOnce(&mut LegNote)) {
    update(run_id, |record| edit(record.leg_mut(leg)));
}

/// The interactive host's leg is now `leg` ([`LIVE_LEG`]).
#[cfg(unix)]
pub fn set_current_leg(run_id: &str, leg: u32) {
    update(run_id, |record| {
        record.current_leg = Some(leg);
        record.leg_mut(leg);
    });
}

/// The leg a hook is in: [`RUN_LEG_ENV`]'s number, or the record's current leg for
/// [`LIVE_LEG`]. None when neither is a leg.
pub fn leg_from_env(run_id: &str, value: &str) -> Option<u32> {
    let leg = if value == LIVE_LEG { load(run_id).current_leg? } else { value.parse::<u32>().ok()? };
    (leg >= 1).then_some(leg)
}

/// The host's Stop hook fired: after the pause was armed or a handoff written in this
/// leg, the host is idle at its prompt. Reads the record only otherwise (the hook path).
pub fn note_idle(run_id: &str, leg: u32) {
    if load(run_id).leg(leg).is_some_and(|n| n.pause_armed || n.handoff.is_some()) {
        note(run_id, leg, |n| n.idle_stops += 1);
    }
}

/// A handoff one of the leg's sessions wrote (the CRITICAL one, or `baton pause`): its
/// session, where it is (relative to `project`) and its checkpoint. Silent on failure.
pub fn note_handoff(run_id: &str, leg: u32, written: &WrittenHandoff) {
    note(run_id, leg, |note| {
        if !note.sessions.iter().any(|s| s == &written.session) {
            note.sessions.push(written.session.clone());
        }
        note.handoff = Some(written.json.clone());
        note.project = Some(written.project.clone());
        if written.checkpoint.is_some() {
            note.checkpoint = written.checkpoint.clone();
        }
    });
}

/// A handoff written in a leg, as [`note_handoff`] records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenHandoff {
    pub session: String,
    /// HANDOFF.json, relative to the project root.
    pub json: String,
    pub project: PathBuf,
    pub checkpoint: Option<String>,
}

/// The run and leg this process is in, when `baton run` started it (or its host, whose
/// hooks and tools inherit `BATON_RUN_ID` and `BATON_RUN_LEG`) and both are valid.
pub fn leg_of_process() -> Option<(String, u32)> {
    let id = std::env::var(RUN_ID_ENV).ok().filter(|id| valid_run_id(id))?;
    let leg = leg_from_env(&id, std::env::var(RUN_LEG_ENV).ok()?.trim())?;
    Some((id, leg))
}

fn update(run_id: &str, edit: impl FnOnce(&mut RunRecord)) {
    let Some((file, guard)) = record_file(run_id) else { return };
    let _ = file.update(&guard, false, |loaded| {
        let mut record: RunRecord = loaded
            .object()
            .and_then(|object| serde_json::from_value(Value::Object(object)).ok())
            .unwrap_or_default();
        edit(&mut record);
        match serde_json::to_value(&record) {
            Ok(Value::Object(object)) => Edit::Store(object, ()),
            _ => Edit::Keep(()),
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_name_no_path() {
        assert!(valid_run_id("run-1f-2a") && !valid_run_id("../x") && !valid_run_id(""));
    }

    #[test]
    fn a_leg_note_is_made_where_it_belongs() {
        let mut record = RunRecord::default();
        record.leg_mut(2).stopped = true;
        record.leg_mut(1).pause_armed = true;
        let legs: Vec<u32> = record.legs.iter().map(|l| l.leg).collect();
        assert_eq!(legs, [1, 2]);
        assert!(record.leg(2).is_some_and(|n| n.stopped) && record.leg(3).is_none());
    }
}
