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

/// 2: the legs' times, why each ended, the waits and hand-overs, the run's end (a record
/// of version 1 reads with those absent).
const RECORD_VERSION: u64 = 2;
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
    /// The runner has signalled the leg's host to end (after baton's stop, on a host that
    /// goes on after it): a hook holding the host at the stop lets go, as the host, told to
    /// end, starts nothing more (Qwen Code waits for its hook before it reads the signal).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub host_signalled: bool,
    /// The host's Stop hook fired this many times after the pause was armed: the host is
    /// idle at its prompt (the interactive relay's cue to hand over).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub idle_stops: u32,
    /// When the runner started the leg's host (unix ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_ms: Option<u64>,
    /// When the leg's host exited (unix ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_ms: Option<u64>,
    /// When the leg's handoff was written (unix ms): the pause, where the hand-over starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_ms: Option<u64>,
    /// The host's exit status (128 + the signal when a signal ended it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Why the leg ended (the runner's finding, after the leg).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_reason: Option<EndReason>,
    /// The waits after this leg, before the next one started (usage limit, backoff).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waits: Vec<Wait>,
    /// From this leg's pause ([`LegNote::paused_ms`], or its end when that came first: a
    /// handoff written from facts after a fault) to the next leg's start, less
    /// [`LegNote::waits`]: what the relay itself cost between two legs (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handover_ms: Option<u64>,
    /// The context figure of the leg's first measured request (used %): what the leg
    /// started with (instructions, brief).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_used_pct: Option<u32>,
    /// The context (tokens) and its figure (used %) when the leg's first CRITICAL handoff
    /// was written: the runner compares the leg's first reply with it (a leg that started
    /// past CRITICAL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critical_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critical_used_pct: Option<u32>,
    /// The transcripts (or rollouts) of the leg's sessions, as the host named them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transcripts: Vec<PathBuf>,
    /// The handoff that briefed this leg (relative to the project root), when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub briefed_from: Option<String>,
    /// Which `baton run` of this relay ran the leg (1 the first; the same command run
    /// again after an interruption continues the relay as 2 …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocation: Option<u32>,
    /// What the leg completed, as the runner measured it after the leg.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<Progress>,
}

/// Why a leg ended: the runner's classification after the leg (see
/// [`crate::relay::classify`]). Tagged by `kind`; a kind this build does not know reads
/// as [`EndReason::Other`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EndReason {
    /// Paused (its own handoff pending) at `used_pct` of its context.
    Paused {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        used_pct: Option<u32>,
    },
    /// The host's usage limit (subscription window, daily quota): the host stopped, and
    /// says the limit resets at `resets_at_ms` (unix ms) when it says so.
    UsageLimit {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resets_at_ms: Option<u64>,
        /// The host's own words (bounded, one line).
        #[serde(default)]
        message: String,
    },
    /// The model server's error after the host's own retries (overloaded, 5xx, network).
    ApiError {
        /// The host's own words (bounded, one line).
        #[serde(default)]
        message: String,
        /// The HTTP status when the host names one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
    },
    /// The host ended abnormally without any of the above: a non-zero status, or a
    /// signal from outside.
    Crashed {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<i32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signal: Option<i32>,
    },
    /// `baton run` was interrupted (Ctrl-C, SIGTERM): the host got the signal.
    Interrupted { signal: i32 },
    /// The leg ended with no handoff of the relay pending: the task is done.
    Done,
    /// Paused at CRITICAL again without completing anything (no step, commit or file).
    Futile {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        used_pct: Option<u32>,
        /// The context at the leg's first request.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        first_used_pct: Option<u32>,
        /// What filled the context at the leg's start, as the runner found it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        filled_by: Option<String>,
    },
    /// A kind written by a newer baton.
    #[serde(other)]
    Other,
}

/// A wait of the relay between two legs, sending nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wait {
    /// Unix ms.
    pub start_ms: u64,
    /// Unix ms (the wait's planned end while it runs; its real end after).
    pub end_ms: u64,
    pub why: WaitReason,
}

/// Why the relay waited. Tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WaitReason {
    /// For the usage limit's reset (`until_ms`, unix ms, as the host stated it).
    UsageLimit {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        until_ms: Option<u64>,
    },
    /// Backing off after an API error or a crash, before retry `attempt` (1 the first).
    Backoff {
        attempt: u32,
        #[serde(default)]
        after: String,
    },
    #[serde(other)]
    Other,
}

/// What a leg completed, measured by the runner around the leg.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// Commits made in the project's repository during the leg.
    #[serde(default)]
    pub commits: u32,
    /// Files whose content changed in the project's work tree during the leg.
    #[serde(default)]
    pub files_changed: u32,
    /// Todos or plan steps marked done in the leg (from its handoff), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps_done: Option<u32>,
}

/// How a run (one `baton run`) ended. Tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RunEnd {
    /// The last leg ended with no handoff of the relay pending (exit 0).
    Done,
    /// `--max-legs` legs ran, the last one paused.
    MaxLegs,
    /// Ctrl-C or SIGTERM: the handoff stays for the same command run again.
    Interrupted { signal: i32 },
    /// The usage limit's reset is further than `--wait-limit`.
    LimitNotWaited {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resets_at_ms: Option<u64>,
    },
    /// `--retries` fresh legs after API errors in a row, all failed.
    RetriesSpent { message: String },
    /// Two restarts after crashes in a row, and the host crashed again.
    Crashed {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<i32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signal: Option<i32>,
    },
    /// Legs in a row that completed nothing and paused at CRITICAL again.
    Futile {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        filled_by: Option<String>,
    },
    /// The host exited with its context paused (the interactive relay).
    LeftPaused,
    #[serde(other)]
    Other,
}

/// The time now, unix ms.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The longest a hook holds its host at the stop for `baton run` to end the leg: below
/// the 10 s hook timeout baton registers with Codex and Gemini CLI.
pub const STOP_HOLD: Duration = Duration::from_secs(8);

/// Holds the calling hook, and with it the host that waits for its answer, until
/// `baton run` has signalled leg `leg`'s host to end or seen it exit (at most
/// [`STOP_HOLD`]). A host that goes on after a hook's stop makes no further call while it
/// waits, so nothing runs between baton's stop and the relay's signal; letting go once the
/// signal is sent matters for a host that reads its signals only between two steps (Qwen
/// Code: held, it would wait out the relay's escalation to SIGKILL).
pub fn hold_until_leg_ends(run_id: &str, leg: u32) {
    let start = std::time::Instant::now();
    while start.elapsed() < STOP_HOLD {
        if load(run_id).leg(leg).is_some_and(|note| note.ended || note.host_signalled) {
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
    /// The host's id (`claude`, `codex` …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The host command as `baton run` was given it (the same command again continues
    /// this relay).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// The project the relay runs in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<PathBuf>,
    /// When the first `baton run` of the relay started (unix ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_ms: Option<u64>,
    /// How many `baton run`s ran this relay.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub invocations: u32,
    /// How the latest `baton run` of the relay ended, and its exit status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<RunEnd>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// When it ended (unix ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_ms: Option<u64>,
}

impl RunRecord {
    pub fn leg(&self, leg: u32) -> Option<&LegNote> {
        self.legs.iter().find(|l| l.leg == leg)
    }

    /// The note of leg `leg`, made when there is none.
    pub fn leg_mut(&mut self, leg: u32) -> &mut LegNote {
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

/// The most records [`all_records`] reads (the newest, by file time).
const RECORDS_READ: usize = 200;

/// The runs' records in baton's state dir, with their ids: the newest [`RECORDS_READ`].
pub fn all_records() -> Vec<(String, RunRecord)> {
    let Some(dir) = places::state_dir().map(|d| d.join("runs")) else { return vec![] };
    let mut files: Vec<(std::time::SystemTime, String)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let id = name.strip_suffix(".json")?.to_string();
            let modified = entry.metadata().ok()?.modified().ok()?;
            valid_run_id(&id).then_some((modified, id))
        })
        .collect();
    files.sort_by_key(|(at, _)| std::cmp::Reverse(*at));
    files.into_iter().take(RECORDS_READ).map(|(_, id)| (id.clone(), load(&id))).collect()
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
        note.paused_ms = Some(now_ms());
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

/// A change to the run's record, under its lock (silent on failure: the hook path).
pub fn update(run_id: &str, edit: impl FnOnce(&mut RunRecord)) {
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

    #[test]
    fn a_version_1_record_reads_with_the_new_facts_absent() {
        let old = r#"{"version": 1, "legs": [{"leg": 1, "sessions": ["s1"], "peak_used_pct": 81,
            "handoff": ".planning/HANDOFF.json", "pause_armed": true, "stopped": true}]}"#;
        let record: RunRecord = serde_json::from_str(old).unwrap();
        let leg = record.leg(1).unwrap();
        assert_eq!(leg.peak_used_pct, Some(81));
        assert!(leg.end_reason.is_none() && leg.waits.is_empty() && leg.started_ms.is_none());
        assert!(record.end.is_none() && record.command.is_empty());
    }

    #[test]
    fn why_a_leg_ended_is_tagged_json() {
        let leg = LegNote {
            leg: 2,
            started_ms: Some(1_000),
            ended_ms: Some(5_000),
            end_reason: Some(EndReason::UsageLimit { resets_at_ms: Some(9_000), message: "limit".into() }),
            waits: vec![Wait {
                start_ms: 5_100,
                end_ms: 9_000,
                why: WaitReason::UsageLimit { until_ms: Some(9_000) },
            }],
            ..LegNote::default()
        };
        let json = serde_json::to_value(&leg).unwrap();
        assert_eq!(
            json["end_reason"],
            serde_json::json!({"kind": "usage_limit", "resets_at_ms": 9000, "message": "limit"})
        );
        assert_eq!(json["waits"][0]["why"]["kind"], "usage_limit");
        assert_eq!(serde_json::from_value::<LegNote>(json).unwrap(), leg);
        let done: EndReason = serde_json::from_str(r#"{"kind": "done"}"#).unwrap();
        assert_eq!(done, EndReason::Done);
        let newer: EndReason = serde_json::from_str(r#"{"kind": "eaten_by_a_grue"}"#).unwrap();
        assert_eq!(newer, EndReason::Other, "a newer baton's kind still reads");
        let end = serde_json::to_value(RunEnd::RetriesSpent { message: "529 overloaded".into() }).unwrap();
        assert_eq!(end, serde_json::json!({"kind": "retries_spent", "message": "529 overloaded"}));
    }
}
