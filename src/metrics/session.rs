//! The newest trustworthy figure for a session, with its source and age: the one
//! question the monitor (and `baton pause`) asks.
//!
//! Each host says where its figure comes from ([`FigureSource`]):
//!
//! - its statusline (Claude Code): the bridge the statusline wrote and the transcript's
//!   latest main-chain usage, whichever was written last. The bridge records where the
//!   transcript ended when it rendered, so only what came after is read; an unchanged
//!   transcript costs a `stat`. In `claude -p`, when the tool call's own reply is not
//!   written yet and the newest figure can change what is said ([`Stakes`]), the hook
//!   waits a little for it ([`super::wait`]), else projects it.
//! - its own record ([`crate::host::Host::record`]: Codex's rollout, Gemini CLI's and
//!   Qwen Code's chat recordings, Factory Droid's sidecar, Copilot CLI's event log,
//!   OpenCode's plugin report), or a fresh bridge when that is newer; a host that records
//!   a call after its PostToolUse is waited for the same way.
//!
//! The window comes from facts first ([`super::windows`]); an assumed one is marked.

use std::collections::BTreeMap;
use std::path::Path;

use super::wait::{self, WaitPlan};
use super::windows::{self, WindowFacts, WindowSource, choose_window};
use super::{
    Bridge, CompactionAt, Figure, HeadroomEnd, Origin, figure_from_tokens, is_fresh, read_any_bridge,
};
use crate::host::{Compaction, CompactionEnd, FigureSource, HostKind, PluginReport, RecordQuery, Recorded};
use crate::session_state;
use crate::transcript::claude::figure as transcript_tail;
use crate::transcript::{Format, KeptMark, MarkSlot};

/// What the caller knows about the session.
#[derive(Debug, Clone)]
pub struct FigureQuery<'a> {
    pub session_id: &'a str,
    pub host: HostKind,
    /// The host's record of the session (`transcript_path`).
    pub transcript: Option<&'a Path>,
    /// The model id the event named (Codex sends one).
    pub model: Option<&'a str>,
    /// The tool call the event is about.
    pub tool_use_id: Option<&'a str>,
    /// The event came from a subagent: its replies are not in the main transcript.
    pub in_subagent: bool,
    /// The event follows a tool call: the reply that issued it may not be recorded yet.
    pub after_tool_call: bool,
    /// The subagent's id (Claude Code's `agent_id`): its figure is read from its own
    /// transcript beside the parent's, never from the parent's bridge or transcript.
    pub agent: Option<&'a str>,
    /// The figure the event itself reports (OpenCode's plugin).
    pub reported: Option<&'a PluginReport>,
    pub stale_seconds: u64,
    pub default_window: u64,
    /// `models.<id>.window` from the configuration.
    pub configured_windows: &'a BTreeMap<String, u64>,
    /// The used % at which a level starts (WARNING, CRITICAL): a figure just below one
    /// is worth waiting for.
    pub thresholds_used: [f64; 2],
    /// What the answer hangs on, looked up only when a wait is in question (`None`:
    /// [`Stakes::Unknown`]).
    pub stakes: Option<StakesLookup<'a>>,
    pub now: i64,
}

/// How the caller finds what its answer hangs on ([`Stakes`]): called only for a figure
/// near or past a threshold, so a call far below them reads nothing more.
#[derive(Clone, Copy)]
pub struct StakesLookup<'a>(pub &'a dyn Fn() -> Stakes);

impl std::fmt::Debug for StakesLookup<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StakesLookup")
    }
}

/// What the caller would say at each level, for the wait for the tool call's own reply
/// (Claude Code's transcript, Copilot CLI's event log): the wait is taken only when the
/// newest figure can change what is said.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Stakes {
    /// Not known (a stop's words, a handoff's figure): a figure near or past a threshold
    /// is worth the wait.
    #[default]
    Unknown,
    /// The monitor's debounce state: whether a WARNING figure and a CRITICAL figure
    /// would be said at this event, and how fast the context grows per tool call (tokens,
    /// when measured).
    Said { warning: bool, critical: bool, tokens_per_call: Option<f64> },
}

/// How far (points of used %) one tool call's reply can move a figure at most, and when
/// the pace is not measured yet: the wait's old reach.
const REACH_POINTS: f64 = wait::WAIT_NEAR_POINTS;

/// Whether the newest reply can change what is said at this event (pure): some level the
/// figure can reach within one call's growth is said. One call's growth is twice the
/// measured tokens per call plus what was written since the figure in hand (the tool
/// results the reply reads), at most [`REACH_POINTS`], and that unmeasured. Without known
/// stakes, the old rule: near a threshold or past the last.
pub fn wait_can_change_answer(
    stakes: Stakes,
    used_pct: f64,
    window: u64,
    written_since: u64,
    thresholds_used: &[f64; 2],
) -> bool {
    let Stakes::Said { warning, critical, tokens_per_call } = stakes else {
        return wait::worth_waiting(used_pct, thresholds_used);
    };
    let reach = match tokens_per_call.filter(|p| *p > 0.0) {
        Some(pace) => ((2.0 * pace + written_since as f64) * 100.0 / window.max(1) as f64).min(REACH_POINTS),
        None => REACH_POINTS,
    };
    let top = used_pct + reach;
    let [warn_at, critical_at] = *thresholds_used;
    let warning_in_reach = top >= warn_at && used_pct < critical_at;
    let critical_in_reach = top >= critical_at;
    (warning && warning_in_reach) || (critical && critical_in_reach)
}

/// A figure and what it is about.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionFigure {
    pub figure: Figure,
    /// The model the figure is about, when known.
    pub model: Option<String>,
}

impl SessionFigure {
    /// Seconds since the figure was taken.
    pub fn age(&self, now: i64) -> i64 {
        (now - self.figure.taken_at).max(0)
    }
}

/// The newest trustworthy figure for the session, or `None` when nothing says.
pub fn session_figure(query: &FigureQuery) -> Option<SessionFigure> {
    match query.host.figure_source() {
        FigureSource::Statusline => statusline_figure(query),
        FigureSource::Record => newest(record_figure(query), query),
    }
}

fn facts<'a>(query: &'a FigureQuery, model: Option<&'a str>) -> WindowFacts<'a> {
    WindowFacts {
        model,
        configured: model.and_then(|m| query.configured_windows.get(m).copied()),
        default: query.default_window,
        host_windows: query.host.windows(),
        disable_1m: query.host.host().one_m_disabled(),
        ..WindowFacts::default()
    }
}

/// A Claude Code subagent's own figure: its transcript's newest sidechain reply, its
/// own model's window (the parent's status line says nothing about it).
/// A subagent's figure, from its own transcript, under the same wait contract as the
/// session's: its tool calls' ids are written there (never in the parent's transcript),
/// so the reply that issued the call is waited for on that file. Found on Claude Code
/// 2.1.332: the subagent's reply is often not flushed yet when its PostToolUse runs.
fn subagent_figure(query: &FigureQuery, agent: &str) -> Option<SessionFigure> {
    let path = transcript_tail::subagent_transcript(query.transcript?, query.session_id, agent)?;
    let mut tail = resumed_tail(query, &path, true)?;
    let id = query.tool_use_id.filter(|id| !id.is_empty());
    if tail.reading.is_none() {
        // A first call with no figure yet: waited for only where the transcript alone
        // could be near a threshold (as for a session).
        let id = id?;
        if !wait::large_enough_to_wait(tail.len, &query.thresholds_used, query.host.windows())
            || !anything_said(query)
        {
            return None;
        }
        tail = wait::wait_for_subagent_tool_use(&path, id, tail.len, reply_wait(query))
            .filter(|t| t.reading.is_some())?;
    }
    let reading = tail.reading.as_ref()?;
    let model = reading.model.clone();
    let window = |tokens: u64| {
        let mut facts = facts(query, model.as_deref());
        facts.remembered = model.as_deref().and_then(windows::remembered_window);
        choose_window(&facts, Some(tokens))
    };
    let size = window(reading.tokens).0.max(1);
    let used_pct = reading.tokens as f64 * 100.0 / size as f64;
    let worth = worth_the_wait(query, used_pct, size, wait::project_tokens(0, tail.bytes_after_figure));
    let plan = wait::plan_wait(id.is_some(), seen(&tail, &path, id, worth), worth);
    let waited = (plan == WaitPlan::Wait).then(|| {
        wait::wait_for_subagent_tool_use(&path, id.unwrap_or_default(), tail.len, reply_wait(query))
    });
    let figure = figure_after_wait(tail, waited, window, query.now)?;
    Some(SessionFigure { figure, model })
}

/// The figure from a transcript tail once the wait for the tool call's own reply is over
/// (`waited`: `None` when there was no wait): the newer tail's when the reply came, else
/// the last figure plus what was written after it, marked as an estimate taken now.
fn figure_after_wait(
    tail: transcript_tail::TranscriptTail,
    waited: Option<Option<transcript_tail::TranscriptTail>>,
    window: impl Fn(u64) -> (u64, WindowSource),
    now: i64,
) -> Option<Figure> {
    let newer = waited.as_ref().map(|w| w.as_ref().filter(|t| t.reading.is_some()));
    let (tail, estimate) = match newer {
        Some(Some(newer)) => (newer, false),
        Some(None) => (&tail, true),
        None => (&tail, false),
    };
    let reading = tail.reading.as_ref()?;
    if estimate {
        let tokens = wait::project_tokens(reading.tokens, tail.bytes_after_figure);
        return Some(Figure { estimate: true, ..figure_from_tokens(tokens, window(tokens), now) });
    }
    let taken_at = transcript_tail::written_at(reading).unwrap_or(now);
    Some(figure_from_tokens(reading.tokens, window(reading.tokens), taken_at))
}

fn statusline_figure(query: &FigureQuery) -> Option<SessionFigure> {
    if let Some(agent) = query.agent {
        return subagent_figure(query, agent);
    }
    let bridge = read_any_bridge(query.session_id);
    let fresh = bridge.as_ref().filter(|b| is_fresh(b, query.now, query.stale_seconds));
    let from_bridge = |b: &Bridge| SessionFigure { figure: b.figure(), model: b.model_id.clone() };
    let Some(transcript) = query.transcript else {
        return fresh.map(from_bridge);
    };
    let (from, tail) = match fresh {
        Some(b) => match b.transcript_offset {
            Some(offset) => {
                let len = transcript_tail::transcript_len(transcript);
                let tail = len
                    .filter(|len| *len > offset)
                    .and_then(|_| transcript_tail::read_since(transcript, offset, query.tool_use_id).ok());
                if tail.as_ref().is_some_and(|t| t.reading.is_some()) {
                    (offset, tail)
                } else {
                    // Nothing newer than the render: the bridge is the newest figure,
                    // unless the reply that issued this tool call is still on its way.
                    match reply_behind_bridge(query, transcript, b, offset, len.unwrap_or(offset)) {
                        Behind::Caught(newer) => (offset, Some(*newer)),
                        Behind::Missing => {
                            return Some(projected_from_bridge(b, transcript, offset, query.now));
                        }
                        Behind::No => return Some(from_bridge(b)),
                    }
                }
            }
            // A bridge without an offset (GSD's statusline): the transcript is read only
            // when it was written after the bridge, and only up to its newest figure.
            None if transcript_tail::modified_at(transcript).is_none_or(|at| at < b.timestamp) => {
                return Some(from_bridge(b));
            }
            None => (0, transcript_tail::read_with(transcript, 0, query.tool_use_id, 0).ok()),
        },
        None => (0, resumed_tail(query, transcript, false)),
    };
    let Some(mut tail) = tail else { return fresh.map(from_bridge) };
    if tail.reading.is_none() && fresh.is_none() {
        // A first call with no figure yet: on a transcript large enough to be near a
        // threshold, the reply that issued the call is worth the same bounded wait.
        let id = query.tool_use_id.filter(|id| !id.is_empty() && !query.in_subagent)?;
        if !wait::large_enough_to_wait(tail.len, &query.thresholds_used, query.host.windows())
            || !anything_said(query)
        {
            return None;
        }
        tail = wait::wait_for_tool_use(transcript, from, id, tail.len, reply_wait(query))
            .filter(|t| t.reading.is_some())?;
    }
    let Some(reading) = tail.reading.as_ref() else { return fresh.map(from_bridge) };
    // The figure source, not the host's reader, learns where the host compacts.
    if let (Some(model), Some(compaction)) = (reading.model.as_deref(), reading.last_compaction.as_ref()) {
        super::learned::record(model, compaction);
    }
    let written_at = transcript_tail::written_at(reading);
    // Without an offset (GSD's bridge) the two are compared by when each was written.
    if let Some(b) = fresh.filter(|b| b.transcript_offset.is_none()) {
        if written_at.is_none_or(|at| at <= b.timestamp) {
            return Some(from_bridge(b));
        }
    }
    let model = reading.model.clone().or_else(|| bridge.as_ref().and_then(|b| b.model_id.clone()));
    let window = |tokens: u64| {
        let mut facts = facts(query, model.as_deref());
        facts.statusline = bridge.as_ref().and_then(|b| b.context_window_size);
        if facts.statusline.is_none() {
            facts.remembered = model.as_deref().and_then(windows::remembered_window);
        }
        choose_window(&facts, Some(tokens))
    };
    let size = window(reading.tokens).0.max(1);
    let used_pct = reading.tokens as f64 * 100.0 / size as f64;
    let worth = worth_the_wait(query, used_pct, size, wait::project_tokens(0, tail.bytes_after_figure));
    let id = query.tool_use_id.filter(|id| !id.is_empty() && !query.in_subagent);
    let plan = wait::plan_wait(id.is_some(), seen(&tail, transcript, id, worth), worth);
    let waited = (plan == WaitPlan::Wait).then(|| {
        let id = query.tool_use_id.unwrap_or_default();
        wait::wait_for_tool_use(transcript, from, id, tail.len, reply_wait(query))
    });
    let figure = figure_after_wait(tail, waited, window, query.now)?;
    Some(SessionFigure { figure, model })
}

/// The transcript's tail for the figure, read from where the last read of this context
/// (session or subagent) stopped ([`transcript_tail::read_resuming`]); the mark it leaves
/// is kept for the next call, written only when it changed.
fn resumed_tail(
    query: &FigureQuery,
    path: &Path,
    sidechain: bool,
) -> Option<transcript_tail::TranscriptTail> {
    let context = session_state::context_id(query.session_id, query.agent);
    let kept = match context.as_deref().and_then(session_state::load_mark) {
        Some(KeptMark::Claude(mark)) => Some(mark),
        _ => None,
    };
    let (tail, mark) =
        transcript_tail::read_resuming(path, query.tool_use_id, sidechain, kept.as_ref()).ok()?;
    if let (Some(context), Some(mark)) = (context, mark) {
        session_state::keep_mark(&context, KeptMark::Claude(mark));
    }
    Some(tail)
}

/// Whether the tool call `id` is written at or after the figure: in the part this read
/// looked at, or (looked up only when the answer hangs on it) in the stretch an earlier
/// read of the context looked at.
fn seen(tail: &transcript_tail::TranscriptTail, path: &Path, id: Option<&str>, worth: bool) -> bool {
    tail.tool_use_seen
        || match (id, tail.unread_after_figure, worth) {
            (Some(id), Some(stretch), true) => transcript_tail::seen_between(path, stretch, id),
            _ => false,
        }
}

/// Whether any level is said at this event: a first call with no figure yet is waited
/// for only then.
fn anything_said(query: &FigureQuery) -> bool {
    !matches!(stakes_of(query), Stakes::Said { warning: false, critical: false, .. })
}

/// [`wait_can_change_answer`] for the query: its stakes looked up only when the old
/// rule's horizon (near a threshold or past the last, [`REACH_POINTS`]) holds the figure,
/// which contains every figure a known stake can make worth the wait.
fn worth_the_wait(query: &FigureQuery, used_pct: f64, window: u64, written_since: u64) -> bool {
    wait::worth_waiting(used_pct, &query.thresholds_used)
        && wait_can_change_answer(stakes_of(query), used_pct, window, written_since, &query.thresholds_used)
}

/// The host's wait for a tool call's own reply (none: no wait).
fn reply_wait(query: &FigureQuery) -> crate::host::ReplyWait {
    query.host.spec().reply_wait.unwrap_or(crate::host::ReplyWait::NONE)
}

fn stakes_of(query: &FigureQuery) -> Stakes {
    query.stakes.map_or(Stakes::Unknown, |lookup| (lookup.0)())
}

/// Whether the bridge is behind the tool call ([`reply_behind_bridge`]).
enum Behind {
    /// Not behind, or nothing hangs on it: the bridge's figure stands.
    No,
    /// The reply came within the wait: this tail holds it.
    Caught(Box<transcript_tail::TranscriptTail>),
    /// It did not come in time: the figure is to be projected.
    Missing,
}

/// The bridge is one reply behind when the statusline rendered before the reply that
/// issued this tool call was written (Claude Code does not redraw between a reply and a
/// fast tool's PostToolUse, and writes the transcript through a 100 ms queue). When the
/// bridge's figure is near or past a threshold and the tool call is not in the transcript
/// before the render, waits (bounded) for its reply.
fn reply_behind_bridge(
    query: &FigureQuery,
    transcript: &Path,
    bridge: &Bridge,
    offset: u64,
    len: u64,
) -> Behind {
    let Some(id) = query.tool_use_id.filter(|id| !id.is_empty() && !query.in_subagent) else {
        return Behind::No;
    };
    let figure = bridge.figure();
    let used_pct = 100.0 - figure.remaining_pct;
    let window = figure.window_tokens.unwrap_or(query.default_window);
    if !worth_the_wait(query, used_pct, window, 0) || transcript_tail::seen_before(transcript, offset, id) {
        return Behind::No;
    }
    match wait::wait_for_tool_use(transcript, offset, id, len, reply_wait(query))
        .filter(|tail| tail.reading.is_some())
    {
        Some(tail) => Behind::Caught(Box::new(tail)),
        None => Behind::Missing,
    }
}

/// The bridge's figure plus what was written after its render (the tool results the
/// missing reply reads), marked as an estimate.
fn projected_from_bridge(bridge: &Bridge, transcript: &Path, offset: u64, now: i64) -> SessionFigure {
    let mut figure = bridge.figure();
    let appended = transcript_tail::read_since(transcript, offset, None).map_or(0, |t| t.bytes_after_figure);
    if let (Some(tokens), Some(window)) = (figure.used_tokens, figure.window_tokens) {
        let projected = wait::project_tokens(tokens, appended);
        figure = Figure {
            origin: Origin::Bridge,
            ..figure_from_tokens(projected, (window, figure.window_source), now)
        };
    }
    figure.estimate = true;
    figure.taken_at = now;
    SessionFigure { figure, model: bridge.model_id.clone() }
}

/// The host's own record of the session ([`crate::host::Host::record`]), its window
/// from the facts; a record that may lag behind the tool call (Copilot CLI's) is waited
/// for when the newest figure can change what is said.
fn record_figure(query: &FigureQuery) -> Option<SessionFigure> {
    let host = query.host.host();
    // The record is read from where the last read of this context stopped.
    let context = session_state::context_id(query.session_id, query.agent);
    let reads_a_file = matches!(
        query.host.spec().transcript,
        Format::CodexRollout | Format::GeminiChat | Format::QwenChat | Format::CopilotEvents
    );
    let kept = match context.as_deref().filter(|_| reads_a_file).and_then(session_state::load_mark) {
        Some(KeptMark::Record(mark)) => Some(mark),
        _ => None,
    };
    let slot = MarkSlot::new(kept);
    let record = RecordQuery {
        session_id: query.session_id,
        transcript: query.transcript,
        model: query.model,
        reported: query.reported,
        mark: reads_a_file.then_some(&slot),
    };
    let mut recorded = host.record(&record);
    let stale = recorded.as_ref().filter(|r| !r.current && query.after_tool_call);
    if let (Some(stale), Some(wait)) = (stale, host.spec().reply_wait) {
        let window = stale.window.unwrap_or(query.default_window).max(1);
        let used_pct = stale.tokens as f64 * 100.0 / window as f64;
        if worth_the_wait(query, used_pct, window, 0) {
            let started = std::time::Instant::now();
            while started.elapsed() < wait.max {
                std::thread::sleep(wait.step);
                let again = host.record(&record);
                if again.as_ref().is_some_and(|r| r.current) {
                    recorded = again;
                    break;
                }
            }
        }
    }
    if let (Some(context), Some(mark)) = (context, slot.changed()) {
        session_state::keep_mark(&context, KeptMark::Record(mark));
    }
    recorded.map(|Recorded { tokens, model, window, written_at, .. }| {
        let mut facts = facts(query, model.as_deref());
        facts.host = window;
        let window = choose_window(&facts, Some(tokens));
        let figure = figure_from_tokens(tokens, window, written_at.unwrap_or(query.now));
        SessionFigure { figure, model }
    })
}

/// The host's record, or a fresh bridge (a GSD-style setup may write one) when that is
/// newer: whichever was written last.
fn newest(recorded: Option<SessionFigure>, query: &FigureQuery) -> Option<SessionFigure> {
    let bridge = read_any_bridge(query.session_id)
        .filter(|b| is_fresh(b, query.now, query.stale_seconds))
        .map(|b| SessionFigure { figure: b.figure(), model: b.model_id.clone() });
    match (recorded, bridge) {
        (Some(r), Some(b)) if b.figure.taken_at > r.figure.taken_at => Some(b),
        (Some(r), _) => Some(r),
        (None, b) => b,
    }
}

/// Where the host compacts ([`crate::host::Host::compaction`]), as the headroom reckons
/// with it: the formula (completed by [`super::formula_rule`]), a point its settings or
/// the window give, or not known.
pub fn compaction_at(compaction: Compaction) -> CompactionAt {
    match compaction {
        Compaction::Formula(_) => CompactionAt::ClaudeRule,
        Compaction::At(point, CompactionEnd::AutoCompaction) => {
            CompactionAt::Tokens(point, HeadroomEnd::AutoCompaction)
        }
        Compaction::At(point, CompactionEnd::Compression) => {
            CompactionAt::Tokens(point, HeadroomEnd::Compression)
        }
        Compaction::Unknown => CompactionAt::Unknown,
    }
}

/// A figure's origin in words, for `baton pause` and the handoff.
pub fn describe_origin(figure: &Figure) -> &'static str {
    match figure.origin {
        Origin::Statusline => "the status line",
        Origin::Bridge => "the status line's bridge",
        Origin::Transcript => "the session's transcript",
    }
}

/// The window in words: "a 200k-token window (assumed: this model's window is not known)".
pub fn describe_window(figure: &Figure) -> Option<String> {
    let window = figure.window_tokens?;
    let size = super::short_tokens(window);
    Some(match figure.window_source {
        WindowSource::Default => format!("an assumed {size}-token window"),
        WindowSource::Proven => format!("a window of at least {size} tokens"),
        _ => format!("a {size}-token window"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const THRESHOLDS: [f64; 2] = [65.0, 75.0];

    fn said(warning: bool, critical: bool, tokens_per_call: Option<f64>) -> Stakes {
        Stakes::Said { warning, critical, tokens_per_call }
    }

    #[test]
    fn the_wait_is_taken_only_when_the_reply_can_change_what_is_said() {
        let changes = |stakes, used| wait_can_change_answer(stakes, used, 200_000, 0, &THRESHOLDS);
        // The first warning is due at any level: a crossing within reach is waited for.
        assert!(changes(said(true, true, Some(2000.0)), 63.5), "2 calls' growth (2 points) reach 65 %");
        assert!(!changes(said(true, true, Some(2000.0)), 60.0), "65 % is out of one call's reach");
        assert!(changes(said(true, true, None), 55.0), "the pace unmeasured: 10 points");
        // Between two warnings nothing is said at WARNING: only an escalation in reach.
        assert!(!changes(said(false, true, Some(2000.0)), 70.0));
        assert!(changes(said(false, true, Some(2000.0)), 73.5));
        // Told CRITICAL, no refire due: nothing the newest figure says changes the answer.
        assert!(!changes(said(false, false, Some(2000.0)), 90.0));
        assert!(!changes(said(false, false, None), 74.0));
        // A refire due on this call: waited for, for its words.
        assert!(changes(said(true, true, Some(2000.0)), 90.0));
        assert!(changes(said(true, false, Some(2000.0)), 70.0));
        // Known stakes at WARNING only: a figure past CRITICAL already says CRITICAL.
        assert!(!changes(said(true, false, Some(2000.0)), 80.0));
        // What was written since the figure (the tool results the reply reads) is reach too.
        assert!(wait_can_change_answer(said(false, true, Some(1000.0)), 70.0, 200_000, 8_000, &THRESHOLDS));
        // One call's growth is at most the old horizon, 10 points.
        assert!(!changes(said(true, true, Some(50_000.0)), 50.0));
        assert!(changes(said(true, true, Some(50_000.0)), 56.0));
        // Unknown stakes: the old rule, near a threshold or past the last.
        assert!(changes(Stakes::Unknown, 60.0) && changes(Stakes::Unknown, 90.0));
        assert!(!changes(Stakes::Unknown, 40.0));
    }
}
