//! The newest trustworthy figure for a session, with its source and age: the one
//! question the monitor (and `baton pause`) asks.
//!
//! - Claude Code: the bridge the statusline wrote and the transcript's latest main-chain
//!   usage, whichever was written last. The bridge records where the transcript ended
//!   when it rendered, so only what came after is read; an unchanged transcript costs a
//!   `stat`. In `claude -p`, when the tool call's own reply is not written yet and the
//!   newest figure can change what is said ([`Stakes`]), the hook waits a little for it,
//!   else projects it.
//! - Codex: the rollout (newest `token_usage_record`, window from `token_count`).
//! - Gemini CLI: the chat recording (newest `gemini` reply).
//!
//! The window comes from facts first ([`super::windows`]); an assumed one is marked.

use std::collections::BTreeMap;
use std::path::Path;

use super::windows::{self, WindowFacts, WindowSource, choose_window};
use super::{
    Bridge, CompactionAt, Figure, HeadroomEnd, Origin, figure_from_tokens, is_fresh, read_any_bridge,
};
use crate::host::{HostKind, claude, codex, copilot, droid, gemini, opencode, qwen};
use crate::transcript::claude::figure as tail;

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
    pub reported: Option<&'a opencode::Report>,
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
const REACH_POINTS: f64 = claude::WAIT_NEAR_POINTS;

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
        return claude::worth_waiting(used_pct, thresholds_used);
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
    match query.host {
        HostKind::Claude => claude_figure(query),
        HostKind::Codex => codex_figure(query),
        HostKind::Gemini => gemini_figure(query),
        HostKind::Qwen => qwen_figure(query),
        HostKind::Droid => droid_figure(query),
        HostKind::Copilot => copilot_figure(query),
        HostKind::OpenCode | HostKind::Kilo => opencode_figure(query),
    }
}

fn facts<'a>(query: &'a FigureQuery, model: Option<&'a str>) -> WindowFacts<'a> {
    WindowFacts {
        model,
        configured: model.and_then(|m| query.configured_windows.get(m).copied()),
        default: query.default_window,
        host_windows: query.host.windows(),
        disable_1m: query.host == HostKind::Claude && claude::one_m_disabled(),
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
    let path = tail::subagent_transcript(query.transcript?, query.session_id, agent)?;
    let mut tail = tail::read_subagent(&path, query.tool_use_id).ok()?;
    let id = query.tool_use_id.filter(|id| !id.is_empty());
    if tail.reading.is_none() {
        // A first call with no figure yet: waited for only where the transcript alone
        // could be near a threshold (as for a session).
        let id = id?;
        if !claude::large_enough_to_wait(tail.len, &query.thresholds_used) || !anything_said(query) {
            return None;
        }
        tail = claude::wait_for_subagent_tool_use(&path, id, tail.len).filter(|t| t.reading.is_some())?;
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
    let worth = worth_the_wait(query, used_pct, size, claude::project_tokens(0, tail.bytes_after_figure));
    let wait = claude::plan_wait(id.is_some(), tail.tool_use_seen, worth);
    let waited = (wait == claude::WaitPlan::Wait)
        .then(|| claude::wait_for_subagent_tool_use(&path, id.unwrap_or_default(), tail.len));
    let figure = figure_after_wait(tail, waited, window, query.now)?;
    Some(SessionFigure { figure, model })
}

/// The figure from a transcript tail once the wait for the tool call's own reply is over
/// (`waited`: `None` when there was no wait): the newer tail's when the reply came, else
/// the last figure plus what was written after it, marked as an estimate taken now.
fn figure_after_wait(
    tail: tail::TranscriptTail,
    waited: Option<Option<tail::TranscriptTail>>,
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
        let tokens = claude::project_tokens(reading.tokens, tail.bytes_after_figure);
        return Some(Figure { estimate: true, ..figure_from_tokens(tokens, window(tokens), now) });
    }
    let taken_at = tail::written_at(reading).unwrap_or(now);
    Some(figure_from_tokens(reading.tokens, window(reading.tokens), taken_at))
}

fn claude_figure(query: &FigureQuery) -> Option<SessionFigure> {
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
                let len = tail::transcript_len(transcript);
                let tail = len
                    .filter(|len| *len > offset)
                    .and_then(|_| tail::read_since(transcript, offset, query.tool_use_id).ok());
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
            None if tail::modified_at(transcript).is_none_or(|at| at < b.timestamp) => {
                return Some(from_bridge(b));
            }
            None => (0, tail::read_with(transcript, 0, query.tool_use_id, 0).ok()),
        },
        None => (0, tail::read(transcript, query.tool_use_id).ok()),
    };
    let Some(mut tail) = tail else { return fresh.map(from_bridge) };
    if tail.reading.is_none() && fresh.is_none() {
        // A first call with no figure yet: on a transcript large enough to be near a
        // threshold, the reply that issued the call is worth the same bounded wait.
        let id = query.tool_use_id.filter(|id| !id.is_empty() && !query.in_subagent)?;
        if !claude::large_enough_to_wait(tail.len, &query.thresholds_used) || !anything_said(query) {
            return None;
        }
        tail = claude::wait_for_tool_use(transcript, from, id, tail.len).filter(|t| t.reading.is_some())?;
    }
    let Some(reading) = tail.reading.as_ref() else { return fresh.map(from_bridge) };
    // The figure source, not the host's reader, learns where the host compacts.
    if let (Some(model), Some(compaction)) = (reading.model.as_deref(), reading.last_compaction.as_ref()) {
        super::learned::record(model, compaction);
    }
    let written_at = tail::written_at(reading);
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
    let worth = worth_the_wait(query, used_pct, size, claude::project_tokens(0, tail.bytes_after_figure));
    let wait = claude::plan_wait(
        query.tool_use_id.is_some_and(|id| !id.is_empty()) && !query.in_subagent,
        tail.tool_use_seen,
        worth,
    );
    let waited = (wait == claude::WaitPlan::Wait).then(|| {
        claude::wait_for_tool_use(transcript, from, query.tool_use_id.unwrap_or_default(), tail.len)
    });
    let figure = figure_after_wait(tail, waited, window, query.now)?;
    Some(SessionFigure { figure, model })
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
    claude::worth_waiting(used_pct, &query.thresholds_used)
        && wait_can_change_answer(stakes_of(query), used_pct, window, written_since, &query.thresholds_used)
}

fn stakes_of(query: &FigureQuery) -> Stakes {
    query.stakes.map_or(Stakes::Unknown, |lookup| (lookup.0)())
}

/// Whether the bridge is behind the tool call ([`reply_behind_bridge`]).
enum Behind {
    /// Not behind, or nothing hangs on it: the bridge's figure stands.
    No,
    /// The reply came within the wait: this tail holds it.
    Caught(Box<tail::TranscriptTail>),
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
    if !worth_the_wait(query, used_pct, window, 0) || tail::seen_before(transcript, offset, id) {
        return Behind::No;
    }
    match claude::wait_for_tool_use(transcript, offset, id, len).filter(|tail| tail.reading.is_some()) {
        Some(tail) => Behind::Caught(Box::new(tail)),
        None => Behind::Missing,
    }
}

/// The bridge's figure plus what was written after its render (the tool results the
/// missing reply reads), marked as an estimate.
fn projected_from_bridge(bridge: &Bridge, transcript: &Path, offset: u64, now: i64) -> SessionFigure {
    let mut figure = bridge.figure();
    let appended = tail::read_since(transcript, offset, None).map_or(0, |t| t.bytes_after_figure);
    if let (Some(tokens), Some(window)) = (figure.used_tokens, figure.window_tokens) {
        let projected = claude::project_tokens(tokens, appended);
        figure = Figure {
            origin: Origin::Bridge,
            ..figure_from_tokens(projected, (window, figure.window_source), now)
        };
    }
    figure.estimate = true;
    figure.taken_at = now;
    SessionFigure { figure, model: bridge.model_id.clone() }
}

fn codex_figure(query: &FigureQuery) -> Option<SessionFigure> {
    let recorded = query.transcript.and_then(|path| crate::transcript::codex::read(path).ok().flatten()).map(
        |reading| {
            let mut facts = facts(query, query.model);
            facts.host = reading.window.or_else(|| codex::settings().context_window);
            let window = choose_window(&facts, Some(reading.tokens));
            let figure = figure_from_tokens(reading.tokens, window, reading.written_at.unwrap_or(query.now));
            SessionFigure { figure, model: query.model.map(str::to_string) }
        },
    );
    newest(recorded, query)
}

fn gemini_figure(query: &FigureQuery) -> Option<SessionFigure> {
    let recorded = query
        .transcript
        .and_then(|path| crate::transcript::gemini::read(path).ok().flatten())
        .map(|reading| {
            let model = reading.model.clone().or_else(|| query.model.map(str::to_string));
            let facts = facts(query, model.as_deref());
            let window = choose_window(&facts, Some(reading.tokens));
            let figure = figure_from_tokens(reading.tokens, window, reading.written_at.unwrap_or(query.now));
            SessionFigure { figure, model }
        });
    newest(recorded, query)
}

fn qwen_figure(query: &FigureQuery) -> Option<SessionFigure> {
    let recording = query.transcript.and_then(|path| crate::transcript::qwen::read(path).ok().flatten());
    let recorded = recording.map(|reading| {
        let model = reading.model.clone().or_else(|| query.model.map(str::to_string));
        let mut facts = facts(query, model.as_deref());
        facts.host = model.as_deref().and_then(qwen::model_window);
        let window = choose_window(&facts, Some(reading.tokens));
        let figure = figure_from_tokens(reading.tokens, window, reading.written_at.unwrap_or(query.now));
        SessionFigure { figure, model }
    });
    newest(recorded, query)
}

fn droid_figure(query: &FigureQuery) -> Option<SessionFigure> {
    let recorded = query.transcript.and_then(crate::transcript::droid::read).map(|reading| {
        let model = reading.model.clone().or_else(|| query.model.map(str::to_string));
        let mut facts = facts(query, model.as_deref());
        facts.host = droid::compaction_limit(model.as_deref());
        let window = choose_window(&facts, Some(reading.tokens));
        let figure = figure_from_tokens(reading.tokens, window, reading.written_at.unwrap_or(query.now));
        SessionFigure { figure, model }
    });
    newest(recorded, query)
}

/// Copilot CLI names no transcript on PostToolUse: its event log is found by session id.
fn copilot_figure(query: &FigureQuery) -> Option<SessionFigure> {
    let path = query.transcript.map(Path::to_path_buf).or_else(|| copilot::events_path(query.session_id));
    let read = |p: &Path| crate::transcript::copilot::read(p, copilot::EVENTS_BUDGET).ok().flatten();
    let mut reading = path.as_deref().and_then(read);
    // The newest call's record is often flushed after PostToolUse starts: near or past a
    // threshold, it is waited for (bounded). Other events follow no new call.
    let stale = reading.as_ref().filter(|r| !r.current && query.after_tool_call);
    if let (Some(path), Some(stale)) = (path.as_deref(), stale) {
        let window = stale.window.unwrap_or(query.default_window).max(1);
        let used_pct = stale.tokens as f64 * 100.0 / window as f64;
        if worth_the_wait(query, used_pct, window, 0) {
            let started = std::time::Instant::now();
            while started.elapsed() < copilot::WAIT_MAX {
                std::thread::sleep(copilot::WAIT_STEP);
                let again = read(path);
                if again.as_ref().is_some_and(|r| r.current) {
                    reading = again;
                    break;
                }
            }
        }
    }
    let recorded = reading.map(|reading| {
        let model = reading.model.clone().or_else(|| query.model.map(str::to_string));
        let mut facts = facts(query, model.as_deref());
        facts.host = reading.window;
        let window = choose_window(&facts, Some(reading.tokens));
        let figure = figure_from_tokens(reading.tokens, window, reading.written_at.unwrap_or(query.now));
        SessionFigure { figure, model }
    });
    newest(recorded, query)
}

/// OpenCode's plugin reports the newest reply's tokens and the model's window with the event.
fn opencode_figure(query: &FigureQuery) -> Option<SessionFigure> {
    let recorded = query.reported.and_then(|report| {
        let tokens = report.prompt_tokens()?;
        let model = report.model().map(str::to_string).or_else(|| query.model.map(str::to_string));
        let mut facts = facts(query, model.as_deref());
        facts.host = report.window();
        let window = choose_window(&facts, Some(tokens));
        let figure = figure_from_tokens(tokens, window, report.written_at().unwrap_or(query.now));
        Some(SessionFigure { figure, model })
    });
    newest(recorded, query)
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

/// Where the session's host compacts, for headroom. Claude Code's rule needs no read;
/// Codex's limit and Gemini CLI's threshold come from their settings files, read only
/// when a headroom is worded.
pub fn compaction_for(host: HostKind, figure: &Figure, project: Option<&Path>) -> CompactionAt {
    match host {
        HostKind::Claude => CompactionAt::ClaudeRule,
        HostKind::Codex => {
            let settings = codex::settings();
            let raw = settings.context_window.or_else(|| figure.window_tokens.map(codex::raw_window));
            match codex::compaction_point(raw, settings.auto_compact_limit) {
                Some(point) => CompactionAt::Tokens(point, HeadroomEnd::AutoCompaction),
                None => CompactionAt::Unknown,
            }
        }
        HostKind::Gemini => match figure.window_tokens {
            Some(window) => CompactionAt::Tokens(
                gemini::compression_point(window, gemini::compression_threshold(project)),
                HeadroomEnd::Compression,
            ),
            None => CompactionAt::Unknown,
        },
        // Its window is its compaction limit, when known: headroom runs to the window's end.
        HostKind::Droid => match droid::compaction_limit(None) {
            Some(limit) => CompactionAt::Tokens(limit, HeadroomEnd::AutoCompaction),
            None => CompactionAt::Unknown,
        },
        HostKind::Copilot => match figure.window_tokens {
            Some(window) => {
                CompactionAt::Tokens(copilot::compaction_point(window), HeadroomEnd::AutoCompaction)
            }
            None => CompactionAt::Unknown,
        },
        // The model's output limit is not in the figure: OpenCode's largest reserve is assumed.
        HostKind::OpenCode | HostKind::Kilo => match figure.window_tokens {
            Some(window) => CompactionAt::Tokens(
                opencode::compaction_point(window, None, None),
                HeadroomEnd::AutoCompaction,
            ),
            None => CompactionAt::Unknown,
        },
        HostKind::Qwen => match figure.window_tokens {
            Some(window) => CompactionAt::Tokens(
                qwen::compression_point(window, qwen::compression_threshold(project)),
                HeadroomEnd::Compression,
            ),
            None => CompactionAt::Unknown,
        },
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
