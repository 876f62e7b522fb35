//! The interactive relay: `baton run claude …` on a terminal. The host runs on a pty
//! baton owns ([`crate::util::pty`]), one process through every leg. When the pause is
//! armed in the current leg and the host is idle at its prompt, baton shows one line with
//! a countdown, then types the host's clear command and the continue prompt; the
//! SessionStart(clear) brief carries the handoff.
//!
//! Idle is: the host's Stop hook fired after the pause (the agent ended its turn as told),
//! or baton stopped the agent through the host (Claude Code 2.1.332 ends the turn on a
//! PostToolUse `continue: false` and runs no Stop hook after it), and in either case the
//! host has printed nothing for [`IDLE_QUIET`] (it has drawn its prompt).
//!
//! A usage limit: Claude Code ends the turn on it and records the exact reset in its
//! transcript (`apiErrorParams.rate_limit_info.resetsAt`, docs/HOSTS.md, "Faults"). baton
//! writes the handoff from facts when none is pending, shows until when it waits, sends
//! nothing until the reset (within `--wait-limit`), then types the clear command and the
//! continue prompt as after a pause: a fresh context briefed from the handoff, the leg
//! recorded as ended at the usage limit with its wait.
//!
//! The decisions are [`HandOver`]'s, a plain state machine over [`LegView`] (what the
//! record and the transcript say) and the times of the user's keys; [`run_interactive`]
//! is the edge that reads the record, moves the leg on and drives the pty.

use std::time::{Duration, Instant};

use super::faults::{self, Decision, HostFault, Policy, Streaks};
use super::{CONTINUE_PROMPT, Handoffs, InteractiveCommand, NextStep, RelayError, RunOutcome, next_step};
use crate::run_record::{
    self, EndReason, LIVE_LEG, RUN_ID_ENV, RUN_LEG_ENV, RunEnd, RunRecord, Wait, WaitReason, load, note,
    set_current_leg,
};
use crate::util::pty::{self, Action};

/// The countdown before baton types into the host, unless `--countdown` says otherwise.
pub const COUNTDOWN: Duration = Duration::from_secs(5);
/// A key pressed this long before the countdown would start cancels it: the user is
/// at the keyboard.
pub const KEY_QUIET: Duration = Duration::from_secs(2);
/// The longest wait between typing a line and pressing Enter (a TUI takes a burst of keys
/// and an Enter right after it as a paste with a newline): Enter goes sooner once the host
/// has drawn what was typed ([`ECHO_QUIET`]).
pub const ENTER_AFTER: Duration = Duration::from_millis(1000);
/// The host drew something after baton typed, then nothing for this long: it has taken
/// the typed line in, and an Enter now is a key of its own.
pub const ECHO_QUIET: Duration = Duration::from_millis(100);
/// Between Enters when the clear command has not started a fresh context yet.
pub const CLEAR_RETRY: Duration = Duration::from_secs(5);
/// The most Enters pressed for the clear command.
const CLEAR_ENTERS: u32 = 3;
/// The host printed nothing this long after a pause's cue (a stop or a Stop hook noted):
/// it has ended its turn and drawn its prompt (Claude Code's spinner redraws every
/// 50–120 ms while it works).
pub const IDLE_QUIET: Duration = Duration::from_millis(300);
/// The host printed nothing this long: it is done drawing, its status line included
/// (Claude Code redraws it 300 ms after a reply), so a line baton shows once stays.
pub const OUTPUT_QUIET: Duration = Duration::from_millis(500);
/// The host's command that clears its context.
pub const CLEAR_COMMAND: &str = "/clear";

/// What the run's record says of the current leg.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LegView {
    /// The leg is paused: a handoff of its own is pending ([`Handoffs::leg_paused`]).
    pub paused: bool,
    /// Stop hooks fired after the pause ([`crate::run_record::LegNote::idle_stops`]).
    pub idle_stops: u32,
    /// baton stopped the agent through the host ([`crate::run_record::LegNote::stopped`]).
    pub stopped: bool,
    /// The leg's peak context figure.
    pub used_pct: Option<u32>,
    /// A session of this leg has started (its SessionStart was noted).
    pub started: bool,
    /// The leg's turn ended on the host's usage limit (its transcript's newest reply).
    pub limit: Option<LimitSeen>,
    /// The wall clock when this was read (unix ms), for the reset the host states.
    pub now_ms: u64,
}

/// The host's usage limit, as its transcript records it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LimitSeen {
    /// The exact reset (unix ms), when the host states one.
    pub resets_at_ms: Option<u64>,
    /// The host's words (bounded, one line; shown only through `Outside`).
    pub message: String,
}

/// Where a hand-over is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Watching,
    Counting {
        since: Instant,
    },
    /// The clear command typed; Enter pressed `enters` times.
    Clearing {
        since: Instant,
        enters: u32,
    },
    /// The continue prompt typed; Enter due.
    Prompting {
        since: Instant,
    },
    /// Waiting for a usage limit's reset, sending nothing; the hand-over starts `until`.
    Waiting {
        until: Instant,
        start_ms: u64,
        until_ms: u64,
        resets_at_ms: Option<u64>,
    },
}

/// What the runner does at a tick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Show this line to the user (in place of baton's last one).
    Line(String),
    /// Type this into the host.
    Type(String),
    /// Leg `n - 1` is over and leg `n` starts: noted in the record before anything is typed.
    NextLeg(u32),
    /// The leg's turn ended on the usage limit: noted in the record (why the leg ended),
    /// and the handoff written from facts when none of the leg's own is pending.
    LimitReached { leg: u32, reason: EndReason },
    /// A wait for the usage limit's reset, from `start_ms` (unix ms), is over now (or the
    /// user took the session back): noted in the record.
    Waited { leg: u32, start_ms: u64, resets_at_ms: Option<u64> },
    /// The conversation went on after a usage limit baton did not hand over from (not
    /// waited for, or the user took the session back; Claude Code resumes by itself after
    /// the reset): the leg did not end there, and the handoff written from facts at the
    /// limit is stale: closed, so no hand-over is briefed from it.
    WentOn { leg: u32 },
}

/// The hand-over's decisions, fed with the record's view and the user's keys.
#[derive(Debug, Clone)]
pub struct HandOver {
    leg: u32,
    max_legs: u32,
    /// `--countdown`: how long the countdown line shows before baton types (zero: none).
    countdown: Duration,
    phase: Phase,
    /// Idle cues of this leg already answered (by a countdown, a cancel or a refusal).
    handled: u32,
    last_key: Option<Instant>,
    last_output: Option<Instant>,
    /// The seconds last shown in the countdown.
    shown: u64,
    /// When the countdown line was last shown (the host's drawing after it may cover it).
    line_at: Option<Instant>,
    pending: Vec<Step>,
    /// When each hand-over's countdown ended, and when its continue prompt went in.
    pub handovers: Vec<(Instant, Option<Instant>)>,
    /// `--wait-limit` and the rest of the run's bounds ([`faults::decide`]).
    policy: Policy,
    streaks: Streaks,
    /// The current leg's usage limit was answered.
    limit_handled: bool,
    /// ... and baton left the session at it (not waited for, or the user took it back).
    limit_left: bool,
    /// The run's end when a usage limit was not waited for (its reset past `--wait-limit`,
    /// or not stated), and the leg it ended.
    pub limit_not_waited: Option<(u32, RunEnd)>,
}

impl HandOver {
    #[cfg(test)]
    pub fn new(max_legs: u32) -> HandOver {
        HandOver::with_policy(Policy { max_legs, ..Policy::default() }, COUNTDOWN)
    }

    /// A hand-over within the run's bounds (`--max-legs`, `--wait-limit`) after a
    /// countdown of `countdown`.
    pub fn with_policy(policy: Policy, countdown: Duration) -> HandOver {
        HandOver {
            leg: 1,
            max_legs: policy.max_legs.max(1),
            countdown,
            phase: Phase::Watching,
            handled: 0,
            last_key: None,
            last_output: None,
            shown: 0,
            line_at: None,
            pending: vec![],
            handovers: vec![],
            policy,
            streaks: Streaks::default(),
            limit_handled: false,
            limit_left: false,
            limit_not_waited: None,
        }
    }

    /// Whether baton is watching the host (no hand-over or wait under way): the edge reads
    /// the transcript for a usage limit only then.
    pub fn watching(&self) -> bool {
        matches!(self.phase, Phase::Watching)
    }

    /// The wait under way (its start, unix ms, and the reset), when the host exits in it.
    pub fn waiting(&self) -> Option<(u64, Option<u64>)> {
        match self.phase {
            Phase::Waiting { start_ms, resets_at_ms, .. } => Some((start_ms, resets_at_ms)),
            _ => None,
        }
    }

    /// The leg the host is in.
    pub fn leg(&self) -> u32 {
        self.leg
    }

    /// Whether a countdown is on.
    pub fn counting(&self) -> bool {
        matches!(self.phase, Phase::Counting { .. })
    }

    /// The host printed something.
    pub fn output(&mut self, now: Instant) {
        self.last_output = Some(now);
    }

    /// The user's terminal sent `bytes`: whether they go on to the host. A key during the
    /// countdown cancels it and is kept from the host (it was meant for baton); what the
    /// terminal sends by itself ([`is_key`]) neither cancels nor is kept.
    pub fn input(&mut self, bytes: &[u8], now: Instant) -> bool {
        if !is_key(bytes) {
            return true;
        }
        self.key(now)
    }

    /// The user pressed a key: whether it goes on to the host (see [`HandOver::input`]).
    pub fn key(&mut self, now: Instant) -> bool {
        self.last_key = Some(now);
        if self.counting() {
            self.phase = Phase::Watching;
            self.pending.push(Step::Line(cancelled_line(Cancel::KeyDuringCountdown)));
            return false;
        }
        // A key during a wait for the reset: the user takes the session back (the key is
        // theirs, for the host); baton types nothing after the reset.
        if let Some((start_ms, resets_at_ms)) = self.waiting() {
            self.phase = Phase::Watching;
            self.limit_left = true;
            self.pending.push(Step::Waited { leg: self.leg, start_ms, resets_at_ms });
            self.pending.push(Step::Line(cancelled_line(Cancel::KeyDuringWait)));
        }
        true
    }

    /// The steps due at `now`, given what the record says of the current leg (after a
    /// [`Step::NextLeg`], of the new one).
    pub fn tick(&mut self, view: &LegView, now: Instant) -> Vec<Step> {
        let mut steps = std::mem::take(&mut self.pending);
        match self.phase {
            Phase::Watching => {
                let cues = view.idle_stops + u32::from(view.stopped);
                let quiet_for =
                    |d: Duration| self.last_output.is_none_or(|o| now.saturating_duration_since(o) >= d);
                if let Some(limit) =
                    view.limit.as_ref().filter(|_| !self.limit_handled && quiet_for(OUTPUT_QUIET))
                {
                    self.limit_handled = true;
                    self.usage_limit(limit, view, now, &mut steps);
                    return steps;
                }
                if self.limit_left && view.limit.is_none() {
                    self.limit_left = false;
                    self.limit_handled = false;
                    self.limit_not_waited = None;
                    steps.push(Step::WentOn { leg: self.leg });
                }
                if !(view.paused && cues > self.handled && quiet_for(IDLE_QUIET)) {
                    return steps;
                }
                self.handled = cues;
                if next_step(true, self.leg, self.max_legs) == NextStep::MaxLegs {
                    steps.push(Step::Line(max_legs_line(view.used_pct, self.max_legs)));
                } else if self.last_key.is_some_and(|k| now.saturating_duration_since(k) < KEY_QUIET) {
                    steps.push(Step::Line(cancelled_line(Cancel::RecentKey)));
                } else if self.countdown.is_zero() {
                    self.hand_over(now, &mut steps);
                } else {
                    self.phase = Phase::Counting { since: now };
                    self.shown = self.countdown.as_secs_f64().ceil() as u64;
                    self.line_at = Some(now);
                    steps.push(Step::Line(countdown_line(view.used_pct, self.shown)));
                }
            }
            Phase::Counting { since } => {
                let elapsed = now.saturating_duration_since(since);
                if elapsed >= self.countdown {
                    self.hand_over(now, &mut steps);
                } else {
                    let left = (self.countdown - elapsed).as_secs_f64().ceil() as u64;
                    // A new second, or the host drew over the line (its status line) and
                    // is done: the line again.
                    let covered = self.line_at.is_some_and(|at| {
                        self.last_output
                            .is_some_and(|o| o > at && now.saturating_duration_since(o) >= ECHO_QUIET)
                    });
                    if left != self.shown || covered {
                        self.shown = left;
                        self.line_at = Some(now);
                        steps.push(Step::Line(countdown_line(view.used_pct, left)));
                    }
                }
            }
            Phase::Clearing { since, enters } => {
                let elapsed = now.saturating_duration_since(since);
                if view.started && enters > 0 {
                    steps.push(Step::Type(CONTINUE_PROMPT.to_string()));
                    self.phase = Phase::Prompting { since: now };
                } else if enters == 0 && self.typed_in(since, now) {
                    steps.push(Step::Type("\r".to_string()));
                    self.phase = Phase::Clearing { since: now, enters: 1 };
                } else if enters > 0 && elapsed >= CLEAR_RETRY {
                    if enters < CLEAR_ENTERS {
                        steps.push(Step::Type("\r".to_string()));
                        self.phase = Phase::Clearing { since: now, enters: enters + 1 };
                    } else {
                        steps.push(Step::Line(format!(
                            "baton: `{CLEAR_COMMAND}` started no fresh context; the hand-over stopped (the handoff waits for the next session)"
                        )));
                        self.phase = Phase::Watching;
                    }
                }
            }
            Phase::Prompting { since } => {
                if self.typed_in(since, now) {
                    steps.push(Step::Type("\r".to_string()));
                    if let Some(last) = self.handovers.last_mut() {
                        last.1 = Some(now);
                    }
                    self.phase = Phase::Watching;
                }
            }
            Phase::Waiting { until, start_ms, until_ms, resets_at_ms } => {
                if now >= until {
                    steps.push(Step::Waited { leg: self.leg, start_ms, resets_at_ms });
                    self.hand_over(now, &mut steps);
                } else {
                    let left = (until - now).as_secs_f64().ceil() as u64;
                    if left != self.shown {
                        self.shown = left;
                        steps.push(Step::Line(waiting_line(until_ms, left)));
                    }
                }
            }
        }
        steps
    }

    /// Whether what baton typed at `typed` has been taken in by `now`, so Enter is due: the
    /// host drew since and has been quiet for [`ECHO_QUIET`], or [`ENTER_AFTER`] passed.
    fn typed_in(&self, typed: Instant, now: Instant) -> bool {
        let echoed =
            self.last_output.is_some_and(|o| o > typed && now.saturating_duration_since(o) >= ECHO_QUIET);
        echoed || now.saturating_duration_since(typed) >= ENTER_AFTER
    }

    /// The countdown (or the wait) is over: the next leg, and the clear command typed.
    fn hand_over(&mut self, now: Instant, steps: &mut Vec<Step>) {
        self.leg += 1;
        self.handled = 0;
        self.limit_handled = false;
        self.limit_left = false;
        self.handovers.push((now, None));
        steps.push(Step::Line(handing_over_line(self.leg)));
        steps.push(Step::NextLeg(self.leg));
        steps.push(Step::Type(CLEAR_COMMAND.to_string()));
        self.phase = Phase::Clearing { since: now, enters: 0 };
    }

    /// The leg's turn ended on the usage limit: what [`faults::decide`] says of it (the
    /// same rule as between headless legs): wait until the reset, then hand over; or, past
    /// `--wait-limit` (or with no reset stated), say so and leave the session to the user.
    fn usage_limit(&mut self, limit: &LimitSeen, view: &LegView, now: Instant, steps: &mut Vec<Step>) {
        let reason =
            EndReason::UsageLimit { resets_at_ms: limit.resets_at_ms, message: limit.message.clone() };
        let decision = faults::decide(&reason, &mut self.streaks, &self.policy, view.now_ms);
        steps.push(Step::LimitReached { leg: self.leg, reason });
        match decision {
            Decision::Next { wait: Some(wait), .. } => {
                let left = Duration::from_millis(wait.until_ms.saturating_sub(view.now_ms));
                self.phase = Phase::Waiting {
                    until: now + left,
                    start_ms: view.now_ms,
                    until_ms: wait.until_ms,
                    resets_at_ms: limit.resets_at_ms,
                };
                self.shown = left.as_secs_f64().ceil() as u64;
                steps.push(Step::Line(waiting_line(wait.until_ms, self.shown)));
            }
            Decision::Next { wait: None, .. } => self.hand_over(now, steps),
            Decision::End(end) => {
                steps.push(Step::Line(limit_not_waited_line(limit.resets_at_ms)));
                self.limit_not_waited = Some((self.leg, end));
                self.limit_left = true;
            }
        }
    }
}

/// Whether input from the terminal holds a key the user pressed, rather than what the
/// terminal sends by itself: focus in/out (`ESC [ I`, `ESC [ O`), mouse reports
/// (`ESC [ < … M/m`, `ESC [ M` + 3 bytes), replies to the host's queries (cursor position
/// `ESC [ n ; m R`, device attributes `ESC [ ? … c`, OSC and DCS strings). Pure.
pub fn is_key(bytes: &[u8]) -> bool {
    let mut rest = bytes;
    while !rest.is_empty() {
        match report_len(rest) {
            Some(n) => rest = &rest[n..],
            None => return true,
        }
    }
    false
}

/// The length of the terminal report `bytes` starts with, if it starts with one.
fn report_len(bytes: &[u8]) -> Option<usize> {
    match bytes {
        [0x1b, b'[', b'I' | b'O', ..] => Some(3),
        [0x1b, b'[', b'M', _, _, _, ..] => Some(6),
        [0x1b, b']' | b'P', body @ ..] => {
            // Up to BEL or ST (ESC \).
            let end = body.iter().enumerate().find_map(|(i, b)| match b {
                0x07 => Some(i + 1),
                0x1b if body.get(i + 1) == Some(&b'\\') => Some(i + 2),
                _ => None,
            })?;
            Some(2 + end)
        }
        [0x1b, b'[', body @ ..] => {
            let end = body.iter().position(|b| (0x40..=0x7e).contains(b))?;
            let (params, last) = (&body[..end], body[end]);
            let report = match (params.first(), last) {
                (Some(b'<'), b'M' | b'm') => true,
                (Some(b'?' | b'>'), b'c') => true,
                (_, b'R') => {
                    params.iter().all(|b| b.is_ascii_digit() || *b == b';') && params.contains(&b';')
                }
                _ => false,
            };
            report.then_some(2 + end + 1)
        }
        _ => None,
    }
}

/// Why a hand-over did not happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cancel {
    KeyDuringCountdown,
    RecentKey,
    KeyDuringWait,
}

fn used_words(used_pct: Option<u32>) -> String {
    used_pct.map(|p| format!("context {p} %")).unwrap_or_else(|| "context paused".to_string())
}

/// The countdown line (pure).
pub fn countdown_line(used_pct: Option<u32>, seconds: u64) -> String {
    format!(
        "baton: {} — handoff saved, continuing in a fresh context in {seconds} s; any key cancels",
        used_words(used_pct)
    )
}

/// The line when a key cancelled the hand-over (pure).
pub fn cancelled_line(why: Cancel) -> String {
    let why = match why {
        Cancel::KeyDuringCountdown => "a key was pressed",
        Cancel::RecentKey => "you were typing",
        Cancel::KeyDuringWait => {
            return "baton: the wait for the usage limit's reset is yours now (a key was pressed): baton types nothing; the handoff is saved: `/clear` and say \"continue\" to pick it up".to_string();
        }
    };
    format!(
        "baton: hand-over cancelled ({why}); the context stays paused: `/clear` and say \"continue\" to pick it up"
    )
}

fn max_legs_line(used_pct: Option<u32>, max_legs: u32) -> String {
    format!(
        "baton: {} — handoff saved; --max-legs {max_legs} reached, not continuing: `/clear` and say \"continue\" to pick it up",
        used_words(used_pct)
    )
}

/// A duration left, as people read it (pure): `42 s`, `3 min 20 s`, `5 h 59 min`.
pub fn time_left(seconds: u64) -> String {
    match seconds {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min {} s", s / 60, s % 60),
        s => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// The line while baton waits for a usage limit's reset (pure but for the local clock).
pub fn waiting_line(until_ms: u64, seconds_left: u64) -> String {
    format!(
        "baton: usage limit, handoff saved — waiting for the reset until {} ({}), sending nothing; a key hands it back",
        super::clock(until_ms),
        time_left(seconds_left)
    )
}

/// The line when the usage limit is not waited for (pure but for the local clock).
fn limit_not_waited_line(resets_at_ms: Option<u64>) -> String {
    let when = match resets_at_ms {
        Some(at) => format!("resets at {}, later than --wait-limit allows", super::clock(at)),
        None => "states no reset time".to_string(),
    };
    format!(
        "baton: usage limit — it {when}: not waiting; the handoff is saved: after the reset, `{CLEAR_COMMAND}` and say \"{CONTINUE_PROMPT}\" to pick it up"
    )
}

fn handing_over_line(leg: u32) -> String {
    format!(
        "baton: continuing in a fresh context (leg {leg}): typing `{CLEAR_COMMAND}` and \"{CONTINUE_PROMPT}\""
    )
}

/// The bytes that show `line` on the terminal's last row, the cursor left where the host
/// had it (pure). Whatever the line holds, none of its characters moves the cursor or
/// starts a sequence of its own (every control character is shown escaped).
pub fn status_bytes(line: &str, rows: u16) -> Vec<u8> {
    let line = crate::util::text::escape_controls(line);
    format!("\x1b7\x1b[{rows};1H\x1b[2K\x1b[7m{line}\x1b[0m\x1b8").into_bytes()
}

/// The most bytes read from the end of a leg's transcript for its newest reply, and the
/// lines looked at.
const LIMIT_TAIL_BUDGET: u64 = 64 * 1024;
const LIMIT_TAIL_LINES: usize = 60;

/// The usage limit a transcript's newest reply records (the host's synthetic message),
/// read again only when the file has grown: `cache` holds the last reading.
fn limit_in(
    path: &std::path::Path,
    cache: &mut Option<(std::path::PathBuf, u64, Option<LimitSeen>)>,
) -> Option<LimitSeen> {
    let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if let Some((seen, seen_len, limit)) = cache.as_ref() {
        if seen == path && *seen_len == len {
            return limit.clone();
        }
    }
    let Ok(lines) = crate::transcript::last_json_lines(path, LIMIT_TAIL_BUDGET, LIMIT_TAIL_LINES) else {
        return cache.as_ref().and_then(|(_, _, limit)| limit.clone());
    };
    let limit = match super::host_faults::from_claude_lines(&lines) {
        Some(HostFault::UsageLimit { resets_at_ms, message }) => Some(LimitSeen { resets_at_ms, message }),
        _ => None,
    };
    *cache = Some((path.to_path_buf(), len, limit.clone()));
    limit
}

/// What the record says of `leg` (the project's handoffs are read only once the leg has
/// idled after a pause or a handoff; the leg's transcript, for a usage limit, only when
/// `watching`).
fn view(
    run_id: &str,
    leg: u32,
    handoffs: &Handoffs,
    watching: bool,
    cache: &mut Option<(std::path::PathBuf, u64, Option<LimitSeen>)>,
) -> LegView {
    let record = load(run_id);
    let note = record.leg(leg);
    let idle_stops = note.map_or(0, |n| n.idle_stops);
    let stopped = note.is_some_and(|n| n.stopped);
    let transcript = note.and_then(|n| n.transcripts.last()).filter(|_| watching);
    LegView {
        paused: (idle_stops > 0 || stopped) && handoffs.leg_paused(note),
        idle_stops,
        stopped,
        used_pct: note.and_then(|n| n.peak_used_pct),
        started: note.is_some_and(|n| !n.sessions.is_empty()),
        limit: transcript.and_then(|path| limit_in(path, cache)),
        now_ms: run_record::now_ms(),
    }
}

/// The pty's driver: keys and ticks to the [`HandOver`], its steps to the pty.
struct Driver<'a> {
    run_id: &'a str,
    handoffs: &'a Handoffs,
    host: crate::host::HostKind,
    hand_over: HandOver,
    /// The last reading of the current leg's transcript ([`limit_in`]).
    limit_cache: Option<(std::path::PathBuf, u64, Option<LimitSeen>)>,
}

impl Driver<'_> {
    /// The leg's turn ended on the usage limit: why it ended, in the record; the handoff
    /// from facts when none of its own is pending (the work stays saved through the wait).
    fn limit_reached(&self, leg: u32, reason: EndReason) {
        note(self.run_id, leg, |n| {
            n.end_reason = Some(reason);
            n.ended_ms = Some(run_record::now_ms());
        });
        if !self.handoffs.leg_paused(load(self.run_id).leg(leg)) {
            super::handoff_from_facts(self.host, self.handoffs, self.run_id, leg);
        }
    }
    /// The conversation went on after the usage limit ([`Step::WentOn`]): the leg goes on
    /// too, and its own handoff written at the limit is closed.
    fn went_on(&self, leg: u32) {
        let Some(note) = load(self.run_id).leg(leg).cloned() else { return };
        note_went_on(self.run_id, leg);
        let from_facts = |found: &crate::resume::Found| {
            let trigger = found.handoff.as_ref().ok().and_then(|h| h.baton().trigger());
            trigger == Some("manual")
                && super::is_own_pause(found.session(), found.paused(), trigger, &note.sessions)
        };
        let all = crate::resume::find_all(&self.handoffs.project, &self.handoffs.config);
        for found in all.iter().filter(|f| from_facts(f)) {
            let _ = crate::resume::close(found, "the conversation went on after the usage limit");
        }
    }
}

/// The leg did not end at the usage limit after all: the conversation went on.
fn note_went_on(run_id: &str, leg: u32) {
    note(run_id, leg, |n| {
        n.end_reason = None;
        n.ended_ms = None;
        n.handoff = None;
        n.checkpoint = None;
        n.paused_ms = None;
    });
}

impl pty::Driver for Driver<'_> {
    fn keys(&mut self, bytes: &[u8], now: Instant) -> bool {
        self.hand_over.input(bytes, now)
    }

    fn output(&mut self, now: Instant) {
        self.hand_over.output(now);
    }

    fn tick(&mut self, now: Instant, rows: u16) -> Vec<Action> {
        let watching = self.hand_over.watching();
        let view = view(self.run_id, self.hand_over.leg(), self.handoffs, watching, &mut self.limit_cache);
        let mut actions = vec![];
        for step in self.hand_over.tick(&view, now) {
            match step {
                Step::Line(line) => actions.push(Action::Show(status_bytes(&line, rows))),
                Step::Type(text) => actions.push(Action::Type(text.into_bytes())),
                Step::NextLeg(leg) => {
                    note(self.run_id, leg - 1, |n| n.ended = true);
                    set_current_leg(self.run_id, leg);
                }
                Step::LimitReached { leg, reason } => self.limit_reached(leg, reason),
                Step::Waited { leg, start_ms, resets_at_ms } => {
                    note_wait(self.run_id, leg, start_ms, resets_at_ms)
                }
                Step::WentOn { leg } => self.went_on(leg),
            }
        }
        actions
    }
}

/// The hand-over after each leg that ended at a usage limit, in the record: from the
/// limit to its wait, and from the wait's end to the continue prompt (`handovers[i]` is
/// leg `i + 1`'s: when its countdown or wait ended, when the prompt went in).
fn note_limit_handovers(run_id: &str, handovers: &[(Instant, Option<Instant>)]) {
    for (leg, (ended, typed)) in (1u32..).zip(handovers) {
        let Some(typed) = typed else { continue };
        note(run_id, leg, |n| {
            let before_wait = match (n.ended_ms, n.waits.first()) {
                (Some(ended_ms), Some(wait)) if n.end_reason.is_some() => {
                    wait.start_ms.saturating_sub(ended_ms)
                }
                _ => return,
            };
            let after_wait = u64::try_from(typed.saturating_duration_since(*ended).as_millis()).unwrap_or(0);
            n.handover_ms = Some(before_wait + after_wait);
        });
    }
}

/// A wait for the usage limit's reset, from `start_ms` to now, in the record.
fn note_wait(run_id: &str, leg: u32, start_ms: u64, resets_at_ms: Option<u64>) {
    let why = WaitReason::UsageLimit { until_ms: resets_at_ms };
    note(run_id, leg, |n| n.waits.push(Wait { start_ms, end_ms: run_record::now_ms(), why }));
}

/// Runs the interactive host on a pty until it exits, handing over to a fresh context
/// each time its context is paused and it is idle (after a countdown of `countdown`), up
/// to `policy.max_legs` legs, and after
/// a usage limit's reset (within `policy.wait_limit`). The outcome's `elapsed` holds each
/// hand-over's time from the countdown's (or the wait's) end to the continue prompt.
pub fn run_interactive(
    command: &InteractiveCommand,
    policy: Policy,
    countdown: Duration,
    run_id: &str,
    handoffs: &Handoffs,
) -> Result<RunOutcome, RelayError> {
    set_current_leg(run_id, 1);
    let mut child = std::process::Command::new(&command.program);
    child.args(&command.args).env(RUN_ID_ENV, run_id).env(RUN_LEG_ENV, LIVE_LEG);
    let mut driver = Driver {
        run_id,
        handoffs,
        host: command.host,
        hand_over: HandOver::with_policy(policy, countdown),
        limit_cache: None,
    };
    let code = pty::run(child, &mut driver)
        .map_err(|source| RelayError::Spawn { program: command.program.clone(), source })?;
    let legs = driver.hand_over.leg();
    // The host exited during a wait: the wait ends here.
    if let Some((start_ms, resets_at_ms)) = driver.hand_over.waiting() {
        note_wait(run_id, legs, start_ms, resets_at_ms);
    }
    note_limit_handovers(run_id, &driver.hand_over.handovers);
    let paused = handoffs.leg_paused(load(run_id).leg(legs));
    note(run_id, legs, |n| {
        n.ended = true;
        n.handoff_pending = paused;
    });
    // A limit not waited for ends the run so while the leg is still at it (the host may
    // have gone on by itself: Claude Code resumes after a reset of its own accord).
    let still_limited = |leg: u32| {
        let note = load(run_id).leg(leg).cloned().unwrap_or_default();
        note.transcripts.last().is_some_and(|path| limit_in(path, &mut None).is_some())
    };
    let not_waited =
        driver.hand_over.limit_not_waited.clone().filter(|(leg, _)| *leg == legs && still_limited(legs));
    let end = match (not_waited, next_step(paused, legs, policy.max_legs.max(1))) {
        (Some((_, end)), _) => end,
        (None, NextStep::Done) => RunEnd::Done,
        (None, NextStep::MaxLegs) => RunEnd::MaxLegs,
        (None, NextStep::Continue) => RunEnd::LeftPaused,
    };
    run_record::update(run_id, |record| {
        record.end = Some(end.clone());
        record.exit_code = Some(code);
        record.ended_ms = Some(crate::run_record::now_ms());
    });
    let record: RunRecord = load(run_id);
    let elapsed = driver
        .hand_over
        .handovers
        .iter()
        .filter_map(|(start, typed)| typed.map(|t| t.saturating_duration_since(*start)))
        .collect();
    Ok(RunOutcome { legs: 1..=legs, code, end, record, elapsed })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paused(idle_stops: u32) -> LegView {
        LegView {
            paused: true,
            idle_stops,
            stopped: false,
            used_pct: Some(78),
            started: true,
            ..LegView::default()
        }
    }

    fn lines(steps: &[Step]) -> Vec<&str> {
        steps.iter().filter_map(|s| if let Step::Line(l) = s { Some(l.as_str()) } else { None }).collect()
    }

    #[test]
    fn no_countdown_before_the_host_is_idle_after_a_pause() {
        let t = Instant::now();
        let mut h = HandOver::new(5);
        assert!(h.tick(&LegView::default(), t).is_empty());
        // Paused, but the Stop hook has not fired since: the agent is still in its turn.
        assert!(h.tick(&LegView { idle_stops: 0, ..paused(0) }, t).is_empty());
        // A Stop without a pause is an ordinary end of turn.
        assert!(h.tick(&LegView { paused: false, ..paused(1) }, t).is_empty());
        // Idle, but the host is still drawing: not yet.
        h.output(t);
        assert!(h.tick(&paused(1), t + IDLE_QUIET / 2).is_empty());
        let t = t + IDLE_QUIET;
        let steps = h.tick(&paused(1), t);
        assert_eq!(
            lines(&steps),
            vec![
                "baton: context 78 % — handoff saved, continuing in a fresh context in 5 s; any key cancels"
            ]
        );
        assert!(h.counting());
    }

    #[test]
    fn the_countdown_ends_in_clear_and_the_continue_prompt() {
        let t = Instant::now();
        let at = |ms: u64| t + Duration::from_millis(ms);
        let mut h = HandOver::new(5);
        h.tick(&paused(1), t);
        assert_eq!(lines(&h.tick(&paused(1), at(1100))), vec![countdown_line(Some(78), 4)]);
        assert!(h.tick(&paused(1), at(1200)).is_empty(), "each second shown once");
        let steps = h.tick(&paused(1), at(5000));
        assert_eq!(steps[1..], [Step::NextLeg(2), Step::Type("/clear".into())]);
        assert_eq!(h.leg(), 2);
        // The new leg's view: nothing started yet. Enter after a pause.
        let fresh = LegView::default();
        assert!(h.tick(&fresh, at(5500)).is_empty());
        assert_eq!(h.tick(&fresh, at(6000)), vec![Step::Type("\r".into())]);
        // Its SessionStart(clear) noted: the continue prompt, then Enter.
        let started = LegView { started: true, ..LegView::default() };
        assert_eq!(h.tick(&started, at(6200)), vec![Step::Type("continue".into())]);
        assert!(h.tick(&started, at(6500)).is_empty());
        assert_eq!(h.tick(&started, at(7200)), vec![Step::Type("\r".into())]);
        assert_eq!(h.handovers.len(), 1);
        assert_eq!(h.handovers[0].1.map(|e| e - h.handovers[0].0), Some(Duration::from_millis(2200)));
        // The new leg pauses in its turn: a countdown again.
        assert!(h.tick(&LegView { paused: true, idle_stops: 1, ..started }, at(30_000)).len() == 1);
        assert!(h.counting());
    }

    #[test]
    fn enter_goes_once_the_host_has_drawn_what_was_typed() {
        let t = Instant::now();
        let at = |ms: u64| t + Duration::from_millis(ms);
        let mut h = HandOver::with_policy(Policy::default(), Duration::ZERO);
        // No countdown: the clear command is typed as soon as the host is idle.
        let steps = h.tick(&paused(1), t);
        assert_eq!(steps[1..], [Step::NextLeg(2), Step::Type("/clear".into())]);
        assert!(!h.counting());
        // The host echoes it; Enter once it has been quiet for ECHO_QUIET, not ENTER_AFTER.
        h.output(at(40));
        let fresh = LegView::default();
        assert!(h.tick(&fresh, at(120)).is_empty(), "still drawing");
        assert_eq!(h.tick(&fresh, at(40) + ECHO_QUIET), vec![Step::Type("\r".into())]);
        let started = LegView { started: true, ..LegView::default() };
        assert_eq!(h.tick(&started, at(400)), vec![Step::Type("continue".into())]);
        // Output from before the prompt was typed is not its echo.
        assert!(h.tick(&started, at(400) + ECHO_QUIET).is_empty());
        h.output(at(450));
        assert_eq!(h.tick(&started, at(450) + ECHO_QUIET), vec![Step::Type("\r".into())]);
        assert!(h.handovers[0].1.is_some());
    }

    #[test]
    fn the_countdown_line_is_shown_again_after_the_host_drew_over_it() {
        let t = Instant::now();
        let at = |ms: u64| t + Duration::from_millis(ms);
        let mut h = HandOver::new(5);
        assert_eq!(lines(&h.tick(&paused(1), t)), vec![countdown_line(Some(78), 5)]);
        assert!(h.tick(&paused(1), at(200)).is_empty());
        // The host's status line is redrawn on the last row, then it is quiet.
        h.output(at(250));
        assert!(h.tick(&paused(1), at(300)).is_empty(), "not while it draws");
        assert_eq!(lines(&h.tick(&paused(1), at(250) + ECHO_QUIET)), vec![countdown_line(Some(78), 5)]);
        assert!(h.tick(&paused(1), at(600)).is_empty(), "once");
    }

    #[test]
    fn a_stop_through_the_host_is_a_cue_too() {
        let t = Instant::now();
        let mut h = HandOver::new(5);
        let stopped = LegView { stopped: true, ..paused(0) };
        assert_eq!(lines(&h.tick(&stopped, t)), vec![countdown_line(Some(78), 5)]);
    }

    #[test]
    fn an_unanswered_clear_is_pressed_again_then_given_up() {
        let t = Instant::now();
        let at = |s: u64| t + Duration::from_secs(s);
        let mut h = HandOver::new(5);
        h.tick(&paused(1), t);
        h.tick(&paused(1), at(5));
        let fresh = LegView::default();
        assert_eq!(h.tick(&fresh, at(6)), vec![Step::Type("\r".into())]);
        assert_eq!(h.tick(&fresh, at(11)), vec![Step::Type("\r".into())]);
        assert_eq!(h.tick(&fresh, at(16)), vec![Step::Type("\r".into())]);
        let gave_up = h.tick(&fresh, at(21));
        assert!(lines(&gave_up)[0].contains("started no fresh context"), "{gave_up:?}");
        assert!(h.tick(&fresh, at(40)).is_empty());
    }

    #[test]
    fn a_key_during_the_countdown_or_just_before_cancels() {
        let t = Instant::now();
        let at = |ms: u64| t + Duration::from_millis(ms);
        let mut h = HandOver::new(5);
        assert!(h.key(t), "keys go to the host");
        // A key 1.5 s before the pause is seen idle: the user is typing.
        let steps = h.tick(&paused(1), at(1500));
        assert_eq!(lines(&steps), vec![cancelled_line(Cancel::RecentKey)]);
        assert!(!h.counting());
        // The same idle stop is not answered twice.
        assert!(h.tick(&paused(1), at(9000)).is_empty());
        // The next idle stop, keys long ago: a countdown; a key cancels it and is kept.
        h.tick(&paused(2), at(10_000));
        assert!(h.counting());
        assert!(!h.key(at(12_000)), "the cancelling key is baton's");
        let steps = h.tick(&paused(2), at(12_100));
        assert_eq!(lines(&steps), vec![cancelled_line(Cancel::KeyDuringCountdown)]);
        assert!(h.tick(&paused(2), at(20_000)).is_empty(), "nothing typed after a cancel");
        assert_eq!(h.leg(), 1);
        // A key 2 s or more before: no cancel.
        h.key(at(30_000));
        h.tick(&paused(3), at(32_000));
        assert!(h.counting());
    }

    #[test]
    fn what_the_terminal_sends_by_itself_is_no_key() {
        for report in [
            &b"\x1b[I"[..],
            b"\x1b[O",
            b"\x1b[<0;12;5M\x1b[<0;12;5m",
            b"\x1b[M !!",
            b"\x1b[24;80R",
            b"\x1b[?62;22c",
            b"\x1b]11;rgb:0000/0000/0000\x1b\\",
            b"\x1b]10;rgb:ffff/ffff/ffff\x07",
        ] {
            assert!(!is_key(report), "{report:?}");
        }
        for key in [&b"x"[..], b"\r", b"\x1b", b"\x1b[A", b"\x03", b"\x1b[I\x1b[A", "é".as_bytes()] {
            assert!(is_key(key), "{key:?}");
        }
        let t = Instant::now();
        let mut h = HandOver::new(5);
        h.tick(&paused(1), t);
        assert!(h.input(b"\x1b[O", t) && h.counting(), "a focus change is no key");
        assert!(!h.input(b"q", t) && !h.counting());
    }

    fn at_limit(resets_at_ms: u64) -> LegView {
        LegView {
            started: true,
            limit: Some(LimitSeen {
                resets_at_ms: Some(resets_at_ms),
                message: "You've hit your 5-hour limit".into(),
            }),
            now_ms: 1_000_000,
            ..LegView::default()
        }
    }

    fn typed(steps: &[Step]) -> Vec<&str> {
        steps.iter().filter_map(|s| if let Step::Type(t) = s { Some(t.as_str()) } else { None }).collect()
    }

    #[test]
    fn a_usage_limit_is_waited_out_then_handed_over() {
        let t = Instant::now();
        let at = |ms: u64| t + Duration::from_millis(ms);
        let mut h = HandOver::new(5);
        // Reset 20 s ahead: the wait lasts until 2 s after it.
        let view = at_limit(1_020_000);
        let steps = h.tick(&view, t);
        assert!(
            matches!(
                &steps[0],
                Step::LimitReached {
                    leg: 1,
                    reason: EndReason::UsageLimit { resets_at_ms: Some(1_020_000), .. }
                }
            ),
            "{steps:?}"
        );
        let line = lines(&steps)[0].to_string();
        assert!(
            line.starts_with("baton: usage limit, handoff saved — waiting for the reset until ")
                && line.contains("(22 s)"),
            "{line}"
        );
        assert!(h.waiting().is_some() && !h.watching());
        // Nothing is typed during the wait; the line counts down.
        let mut all = vec![];
        for ms in (100..22_000).step_by(100) {
            all.extend(h.tick(&view, at(ms)));
        }
        assert!(typed(&all).is_empty(), "{all:?}");
        assert!(lines(&all).iter().any(|l| l.contains("(1 s)")), "{all:?}");
        // At the end of the wait: noted, the next leg, the clear command.
        let steps = h.tick(&view, at(22_000));
        assert!(
            matches!(steps[0], Step::Waited { leg: 1, start_ms: 1_000_000, resets_at_ms: Some(1_020_000) }),
            "{steps:?}"
        );
        assert_eq!(steps[2..], [Step::NextLeg(2), Step::Type("/clear".into())]);
        assert_eq!(h.leg(), 2);
        // The fresh leg goes on as after a pause; its own limit is answered again.
        let fresh = LegView::default();
        assert_eq!(h.tick(&fresh, at(23_000)), vec![Step::Type("\r".into())]);
        let started = LegView { started: true, ..LegView::default() };
        assert_eq!(h.tick(&started, at(23_100)), vec![Step::Type("continue".into())]);
        assert_eq!(h.tick(&started, at(24_100)), vec![Step::Type("\r".into())]);
        assert!(matches!(h.tick(&at_limit(1_050_000), at(30_000))[0], Step::LimitReached { leg: 2, .. }));
    }

    #[test]
    fn a_limit_seen_while_the_host_draws_waits_for_it_to_settle() {
        let t = Instant::now();
        let mut h = HandOver::new(5);
        h.output(t);
        assert!(h.tick(&at_limit(1_020_000), t + OUTPUT_QUIET / 2).is_empty());
        assert!(!h.tick(&at_limit(1_020_000), t + OUTPUT_QUIET).is_empty());
    }

    #[test]
    fn a_limit_past_wait_limit_is_not_waited_for_and_the_host_may_go_on() {
        let t = Instant::now();
        let mut h =
            HandOver::with_policy(Policy { wait_limit: Duration::ZERO, ..Policy::default() }, COUNTDOWN);
        let steps = h.tick(&at_limit(1_020_000), t);
        assert!(matches!(steps[0], Step::LimitReached { .. }));
        assert!(lines(&steps)[0].contains("later than --wait-limit allows: not waiting"), "{steps:?}");
        assert_eq!(h.limit_not_waited, Some((1, RunEnd::LimitNotWaited { resets_at_ms: Some(1_020_000) })));
        assert!(h.tick(&at_limit(1_020_000), t + Duration::from_secs(60)).is_empty(), "nothing typed");
        // No reset stated: the same.
        let mut h = HandOver::new(5);
        let view = LegView { limit: Some(LimitSeen::default()), ..at_limit(0) };
        assert!(lines(&h.tick(&view, t))[0].contains("states no reset time"));
        // Claude Code resumed by itself: the leg goes on, the limit no longer ends the run.
        let on = LegView { started: true, ..LegView::default() };
        assert_eq!(h.tick(&on, t + Duration::from_secs(90)), vec![Step::WentOn { leg: 1 }]);
        assert_eq!(h.limit_not_waited, None);
        assert!(h.tick(&on, t + Duration::from_secs(91)).is_empty());
    }

    #[test]
    fn a_key_during_the_wait_hands_the_session_back() {
        let t = Instant::now();
        let mut h = HandOver::new(5);
        h.tick(&at_limit(1_600_000), t);
        assert!(h.key(t + Duration::from_secs(5)), "the key goes on to the host");
        let steps = h.tick(&at_limit(1_600_000), t + Duration::from_secs(5));
        assert!(matches!(steps[0], Step::Waited { leg: 1, .. }), "{steps:?}");
        assert!(lines(&steps)[0].contains("is yours now"), "{steps:?}");
        assert!(typed(&h.tick(&at_limit(1_600_000), t + Duration::from_secs(700))).is_empty());
        let on = LegView { started: true, ..LegView::default() };
        assert_eq!(h.tick(&on, t + Duration::from_secs(701)), vec![Step::WentOn { leg: 1 }]);
    }

    #[test]
    fn time_left_reads_as_people_say_it() {
        assert_eq!(time_left(42), "42 s");
        assert_eq!(time_left(200), "3 min 20 s");
        assert_eq!(time_left(6 * 3600 - 60), "5 h 59 min");
    }

    #[test]
    fn max_legs_is_honoured() {
        let t = Instant::now();
        let mut h = HandOver::new(1);
        let steps = h.tick(&paused(1), t);
        assert!(lines(&steps)[0].contains("--max-legs 1 reached, not continuing"), "{steps:?}");
        assert!(!h.counting() && h.tick(&paused(1), t + COUNTDOWN * 2).is_empty());
    }

    #[test]
    fn the_status_line_goes_to_the_last_row_and_back() {
        let bytes = String::from_utf8(status_bytes("baton: x", 40)).unwrap();
        assert!(bytes.starts_with("\x1b7\x1b[40;1H\x1b[2K") && bytes.ends_with("\x1b8"), "{bytes:?}");
        let planted = String::from_utf8(status_bytes("a\x1b]52;c;eA==\x07\u{9b}2J\r\n", 40)).unwrap();
        assert!(planted.contains("a\\u001b]52;c;eA==\\u0007\\u009b2J\\u000d\\u000a"), "{planted:?}");
    }
}
