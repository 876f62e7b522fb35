//! `baton report`: one session's exact token use, its compactions, the context size turn
//! by turn and the tool results that filled it.
//!
//! [`Report::build`] turns the transcript reader's [`SessionUsage`] into a plain struct
//! (pure, no I/O); `text` renders it for people, serde for machines (`--json`), `svg`
//! as a chart. Finding the transcript ([`locate`]) is the only part that looks at disk
//! besides reading the transcript itself; [`generate`] puts the steps together for the
//! command. `markdown` is the Markdown session report of `baton pause --report`;
//! [`relay`] is the report of a whole `baton run` (`baton report --relay`).

mod generate;
mod locate;
pub mod markdown;
pub mod relay;
pub mod svg;
pub mod text;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::config::Config;
use crate::metrics::{self, Basis, Level, Limits, Want, WindowFacts, WindowSource};
use crate::transcript::{SessionUsage, ToolResultSize, Usage};

pub use generate::{ReportError, Request, generate};
pub use locate::{LocateError, Lookup, locate, session_id_of};

/// The `format` field of the JSON report; bumped when a field changes meaning.
pub const FORMAT: &str = "baton-report/1";

/// Token counts of one row, with the derived figures people ask for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UsageRow {
    pub replies: u64,
    pub input: u64,
    pub cache_creation: u64,
    pub cache_read: u64,
    pub output: u64,
    /// All four kinds.
    pub total: u64,
    /// Cache reads over all input kinds (input + cache creation + cache read), 0 to 1;
    /// `None` without input.
    pub cache_read_share: Option<f64>,
}

impl UsageRow {
    pub fn new(usage: &Usage, replies: u64) -> UsageRow {
        let input_kinds = usage.context_tokens();
        UsageRow {
            replies,
            input: usage.input,
            cache_creation: usage.cache_creation,
            cache_read: usage.cache_read,
            output: usage.output,
            total: usage.total(),
            cache_read_share: (input_kinds > 0).then(|| usage.cache_read as f64 / input_kinds as f64),
        }
    }
}

/// One model's tokens: the main conversation and its subagents apart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelRow {
    pub model: String,
    pub main: UsageRow,
    pub sidechain: UsageRow,
}

/// Token use of the whole session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tokens {
    /// Per model, the biggest spender first.
    pub models: Vec<ModelRow>,
    /// Every model, main conversation.
    pub main: UsageRow,
    /// Every model, subagents.
    pub sidechain: UsageRow,
    /// Everything.
    pub total: UsageRow,
}

/// The context size now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContextNow {
    pub tokens: u64,
    /// Of the window, 0 to 100.
    pub percent_of_window: f64,
    /// `normal`, `warning` or `critical`, by the configured thresholds.
    pub level: &'static str,
    /// `reply` (the last main-chain reply's usage) or `compaction` (no reply since the
    /// last compaction: its size after).
    pub source: &'static str,
}

/// Where the warning levels start, in tokens of this session's window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThresholdTokens {
    pub warning_tokens: u64,
    pub critical_tokens: u64,
    /// Used % at which WARNING starts (100 − `warn_remaining`).
    pub warning_used_percent: f64,
    pub critical_used_percent: f64,
}

/// One compaction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompactionRow {
    /// `auto` or `manual`.
    pub trigger: Option<String>,
    pub pre_tokens: Option<u64>,
    pub post_tokens: Option<u64>,
    pub at: Option<String>,
    /// The number of turns before it (it sits between turn `after_turn` and the next).
    pub after_turn: usize,
    /// Where Claude Code's formula puts an automatic compaction for this model and
    /// window (its settings and environment as they are now), and how far the real one
    /// was from it, in % of the window (positive: later than predicted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted_at: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prediction_error_pct: Option<f64>,
}

/// The context size after one main-chain reply.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Turn {
    /// 1 for the first reply.
    pub turn: usize,
    pub at: Option<String>,
    pub tokens: u64,
}

/// What was read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LineCounts {
    pub lines: u64,
    pub unreadable: u64,
    pub oversized: u64,
    /// Synthetic API-error replies, left out of every count.
    pub api_errors: u64,
    pub bytes: u64,
}

/// Everything `baton report` shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub format: &'static str,
    pub session_id: Option<String>,
    pub transcript: String,
    /// The model of the latest main-chain reply.
    pub model: Option<String>,
    pub window_tokens: u64,
    pub context: Option<ContextNow>,
    pub thresholds: ThresholdTokens,
    pub tokens: Tokens,
    pub compactions: Vec<CompactionRow>,
    /// What each compaction's summary kept of baton's snapshot (the compaction audit),
    /// oldest first; empty when the hook audited none for this session.
    pub compaction_audits: Vec<crate::handoff::audit::AuditRecord>,
    pub timeline: Vec<Turn>,
    /// The largest tool results, largest first (tokens estimated as bytes / 4).
    pub largest_tool_results: Vec<ToolResultSize>,
    pub read: LineCounts,
}

/// What the report's window and level rest on: the hook's own inputs, so the report
/// shows the window and level the hook would for the same session.
#[derive(Debug, Clone, Default)]
pub struct Sizing {
    /// The thresholds, headroom thresholds and compaction rule of the configuration.
    pub limits: Limits,
    /// `models.<id>.window`.
    pub configured: BTreeMap<String, u64>,
    /// The windows the status line gave for model ids (`windows.json`).
    pub remembered: BTreeMap<String, u64>,
}

impl Sizing {
    /// The configuration's and baton's state as they are now.
    pub fn from_config(config: &Config) -> Sizing {
        Sizing {
            limits: crate::metrics::Limits::from_settings(config.settings()),
            configured: config.configured_windows(),
            remembered: metrics::windows::remembered_windows(),
        }
    }
}

/// The window the session ran in, chosen as the hook chooses it for a session with no
/// status line figure (remembered, configured, baton's table, the default); a session
/// that went past it was in the next larger window.
pub fn window(usage: &SessionUsage, sizing: &Sizing) -> (u64, WindowSource) {
    let peak = usage
        .context_timeline
        .iter()
        .map(|p| p.tokens)
        .chain(usage.compactions.iter().filter_map(|c| c.pre_tokens))
        .max()
        .unwrap_or(0);
    let model = usage.model.as_deref();
    let facts = WindowFacts {
        model,
        remembered: model.and_then(|m| sizing.remembered.get(m).copied()),
        configured: model.and_then(|m| sizing.configured.get(m).copied()),
        default: sizing.limits.default_window,
        host_windows: locate::HOST.windows(),
        ..WindowFacts::default()
    };
    metrics::choose_window(&facts, Some(peak))
}

/// The context size now: the last main-chain reply, unless a compaction came after it.
fn current(usage: &SessionUsage) -> Option<(u64, &'static str)> {
    let last_turn = usage.context_timeline.last();
    let compaction_last =
        usage.compaction_positions.last().is_some_and(|&p| p >= usage.context_timeline.len());
    match (compaction_last, usage.compactions.last()) {
        (true, Some(compaction)) => compaction.post_tokens.map(|t| (t, "compaction")),
        _ => last_turn.map(|p| (p.tokens, "reply")),
    }
}

fn level_name(level: Level) -> &'static str {
    match level {
        Level::Normal => "normal",
        Level::Warning => "warning",
        Level::Critical => "critical",
    }
}

/// Tokens at `used_percent` of `window`, rounded.
fn at_percent(window: u64, used_percent: f64) -> u64 {
    (window as f64 * used_percent / 100.0).round() as u64
}

impl Report {
    /// The report for a session read from `transcript`, sized by the configuration and
    /// baton's state as the hook sizes it.
    pub fn for_session(
        usage: &SessionUsage,
        transcript: &str,
        session_id: Option<String>,
        config: &Config,
    ) -> Report {
        let audits = session_id.as_deref().map(|s| crate::handoff::audit::load(s).audits).unwrap_or_default();
        let sizing = Sizing::from_config(config);
        let mut report =
            Report { compaction_audits: audits, ..Report::build(usage, transcript, session_id, &sizing) };
        // The formula alone (nothing learned), with the host's settings read once.
        let rule = metrics::CompactionRule { learned: None, ..sizing.limits.rule };
        let rule = metrics::formula_rule(locate::HOST, rule, report.model.as_deref(), None);
        report.predict_compactions(&rule);
        report
    }

    /// Each automatic compaction's predicted point and the prediction's error (pure).
    pub fn predict_compactions(&mut self, rule: &metrics::CompactionRule) {
        let window = self.window_tokens;
        if window == 0 || rule.disabled {
            return;
        }
        let predicted = rule.claude(window).threshold;
        for c in self.compactions.iter_mut().filter(|c| c.trigger.as_deref() == Some("auto")) {
            c.predicted_at = Some(predicted);
            c.prediction_error_pct = c
                .pre_tokens
                .map(|pre| ((pre as f64 - predicted as f64) * 1000.0 / window as f64).round() / 10.0);
        }
    }

    /// The report for a session read from `transcript`. Pure, but for the compaction
    /// point learned for the model when headroom thresholds decide the level.
    pub fn build(
        usage: &SessionUsage,
        transcript: &str,
        session_id: Option<String>,
        sizing: &Sizing,
    ) -> Report {
        let (window, window_source) = window(usage, sizing);
        let thresholds = sizing.limits.thresholds;
        let model = usage.model.clone().or_else(|| usage.models.first().map(|m| m.model.clone()));
        let context = current(usage).map(|(tokens, source)| {
            let percent = tokens as f64 * 100.0 / window as f64;
            let figure = metrics::figure_from_tokens(tokens, (window, window_source), 0);
            let basis =
                Basis { limits: sizing.limits, host: locate::HOST, model: model.as_deref(), project: None };
            ContextNow {
                tokens,
                percent_of_window: (percent * 10.0).round() / 10.0,
                level: level_name(metrics::assess(&figure, &basis, Want::Level).level),
                source,
            }
        });
        let warning_used = 100.0 - thresholds.warn_remaining;
        let critical_used = 100.0 - thresholds.critical_remaining;
        let models: Vec<ModelRow> = usage
            .models
            .iter()
            .map(|m| ModelRow {
                model: m.model.clone(),
                main: UsageRow::new(&m.main, m.main_replies),
                sidechain: UsageRow::new(&m.sidechain, m.sidechain_replies),
            })
            .collect();
        let main_replies = usage.models.iter().map(|m| m.main_replies).sum();
        let side_replies = usage.models.iter().map(|m| m.sidechain_replies).sum();
        let mut all = usage.main;
        all.add(&usage.sidechain);
        let compactions = usage
            .compactions
            .iter()
            .enumerate()
            .map(|(i, c)| CompactionRow {
                trigger: c.trigger.clone(),
                pre_tokens: c.pre_tokens,
                post_tokens: c.post_tokens,
                at: c.at.clone(),
                after_turn: usage.compaction_positions.get(i).copied().unwrap_or(0),
                predicted_at: None,
                prediction_error_pct: None,
            })
            .collect();
        Report {
            format: FORMAT,
            session_id,
            transcript: transcript.to_string(),
            model,
            window_tokens: window,
            context,
            thresholds: ThresholdTokens {
                warning_tokens: at_percent(window, warning_used),
                critical_tokens: at_percent(window, critical_used),
                warning_used_percent: warning_used,
                critical_used_percent: critical_used,
            },
            tokens: Tokens {
                models,
                main: UsageRow::new(&usage.main, main_replies),
                sidechain: UsageRow::new(&usage.sidechain, side_replies),
                total: UsageRow::new(&all, main_replies + side_replies),
            },
            compactions,
            compaction_audits: Vec::new(),
            timeline: usage
                .context_timeline
                .iter()
                .enumerate()
                .map(|(i, p)| Turn { turn: i + 1, at: p.at.clone(), tokens: p.tokens })
                .collect(),
            largest_tool_results: usage.largest_tool_results.clone(),
            read: LineCounts {
                lines: usage.lines,
                unreadable: usage.unreadable_lines,
                oversized: usage.oversized_lines,
                api_errors: usage.api_error_lines,
                bytes: usage.bytes_read,
            },
        }
    }

    /// The context series the charts draw: each turn, and at each compaction its size
    /// before and after (a drop at the compaction).
    pub fn series(&self) -> Vec<Point> {
        let mut points = Vec::with_capacity(self.timeline.len() + 2 * self.compactions.len());
        let mut compactions = self.compactions.iter().enumerate().peekable();
        for position in 0..=self.timeline.len() {
            while let Some((index, c)) = compactions.next_if(|(_, c)| c.after_turn <= position) {
                for (tokens, before) in [(c.pre_tokens, true), (c.post_tokens, false)] {
                    if let Some(tokens) = tokens {
                        points.push(Point { tokens, kind: PointKind::Compaction { index, before } });
                    }
                }
            }
            if let Some(turn) = self.timeline.get(position) {
                points.push(Point { tokens: turn.tokens, kind: PointKind::Turn(position) });
            }
        }
        points
    }
}

/// One point of [`Report::series`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point {
    pub tokens: u64,
    pub kind: PointKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointKind {
    /// The turn at this index of the timeline (0-based).
    Turn(usize),
    /// A compaction's size `before` or after it.
    Compaction { index: usize, before: bool },
}

/// Block characters from empty to full.
const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// A sparkline of `values` scaled to `max` (full block at `max` and above), at most
/// `width` characters: when there are more values, each character shows the largest
/// of the values it covers. Returns the line and, for each character, the range of
/// values it covers.
pub fn sparkline(values: &[u64], max: u64, width: usize) -> (String, Vec<std::ops::Range<usize>>) {
    let n = values.len();
    if n == 0 || width == 0 {
        return (String::new(), Vec::new());
    }
    let columns = n.min(width);
    let mut line = String::with_capacity(columns * 3);
    let mut ranges = Vec::with_capacity(columns);
    for c in 0..columns {
        let range = (c * n / columns)..((c + 1) * n / columns).max(c * n / columns + 1);
        let value = values[range.clone()].iter().copied().max().unwrap_or(0);
        let level = if max == 0 { 0 } else { ((value as f64 / max as f64) * 8.0).floor() as usize };
        line.push(BLOCKS[level.min(7)]);
        ranges.push(range);
    }
    (line, ranges)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::usage_from_bytes;

    const FIXTURE: &[u8] = include_bytes!("../../tests/fixtures/transcript.jsonl");

    fn fixture_report() -> Report {
        Report::build(&usage_from_bytes(FIXTURE), "t.jsonl", Some("s".into()), &Sizing::default())
    }

    #[test]
    fn fixture_figures() {
        let report = fixture_report();
        assert_eq!(report.model.as_deref(), Some("claude-opus-4-5-20251101"));
        assert_eq!(report.window_tokens, 200_000);
        let context = report.context.as_ref().unwrap();
        assert_eq!(context.tokens, 144_012);
        assert_eq!(context.percent_of_window, 72.0);
        assert_eq!(context.level, "warning");
        assert_eq!(context.source, "reply");
        assert_eq!(report.thresholds.warning_tokens, 130_000);
        assert_eq!(report.thresholds.critical_tokens, 150_000);
        assert_eq!(report.compactions.len(), 1);
        let compaction = &report.compactions[0];
        assert_eq!(compaction.trigger.as_deref(), Some("auto"));
        assert_eq!((compaction.pre_tokens, compaction.post_tokens), (Some(167_400), Some(41_800)));
        assert_eq!(compaction.after_turn, 5);
        assert_eq!(report.timeline.len(), 8);
    }

    /// The sums checked by hand against the fixture's lines: the main chain's replies
    /// a1, a2, a3, a4, a6, a7, a8 and a9 (streamed twice under one id: the second
    /// line, with 512 output tokens, is final); the sidechain s1 apart; the API-error
    /// line a5 left out.
    #[test]
    fn fixture_token_sums_by_hand() {
        let report = fixture_report();
        let main = &report.tokens.models[0].main;
        assert_eq!(main.replies, 8);
        assert_eq!(main.input, 3 + 4 + 4 + 4 + 4 + 6 + 5 + 12);
        assert_eq!(main.input, 42);
        assert_eq!(main.cache_creation, 16_510);
        assert_eq!(main.cache_read, 418_140);
        assert_eq!(main.output, 420 + 610 + 300 + 120 + 200 + 350 + 800 + 512);
        assert_eq!(main.output, 3_312);
        assert_eq!(main.total, 438_004);
        let side = &report.tokens.models[0].sidechain;
        assert_eq!(
            (side.replies, side.input, side.cache_creation, side.cache_read, side.output),
            (1, 10, 30_000, 150_000, 900)
        );
        assert_eq!(side.total, 180_910);
        assert_eq!(report.tokens.total.total, 618_914);
        assert_eq!(report.tokens.total.replies, 9);
        let share = main.cache_read_share.unwrap();
        assert!((share - 418_140.0 / 434_692.0).abs() < 1e-12);
        assert_eq!(report.read.api_errors, 1);
    }

    #[test]
    fn the_series_drops_at_the_compaction() {
        let report = fixture_report();
        let tokens: Vec<u64> = report.series().iter().map(|p| p.tokens).collect();
        assert_eq!(
            tokens,
            vec![23_213, 24_114, 24_814, 25_214, 26_414, 167_400, 41_800, 43_906, 123_005, 144_012]
        );
        let (line, ranges) = sparkline(&tokens, report.window_tokens, 80);
        assert_eq!(line, "▁▁▁▂▂▇▂▂▅▆");
        assert_eq!(ranges.len(), 10);
    }

    #[test]
    fn sparklines_scale_and_bucket() {
        assert_eq!(sparkline(&[0, 100, 200], 200, 10).0, "▁▅█");
        assert_eq!(sparkline(&[500], 200, 10).0, "█");
        let (line, ranges) = sparkline(&[1, 2, 3, 4, 200, 6], 200, 3);
        assert_eq!(line, "▁▁█");
        assert_eq!(ranges, vec![0..2, 2..4, 4..6]);
        assert_eq!(sparkline(&[], 200, 10).0, "");
    }

    #[test]
    fn a_compaction_with_no_reply_after_it_is_the_current_size() {
        let mut usage = usage_from_bytes(FIXTURE);
        usage.compaction_positions = vec![usage.context_timeline.len()];
        let report = Report::build(&usage, "t", None, &Sizing::default());
        assert_eq!(report.context.as_ref().unwrap().tokens, 41_800);
        assert_eq!(report.context.as_ref().unwrap().source, "compaction");
    }

    #[test]
    fn the_configured_window_and_headroom_thresholds_size_the_report() {
        let usage = usage_from_bytes(FIXTURE);
        let configured = BTreeMap::from([("claude-opus-4-5-20251101".to_string(), 400_000)]);
        let report = Report::build(&usage, "t", None, &Sizing { configured, ..Sizing::default() });
        assert_eq!(report.window_tokens, 400_000);
        assert_eq!(report.context.as_ref().unwrap().level, "normal");
        let limits =
            Limits { warn_headroom: Some(60_000), critical_headroom: Some(25_000), ..Limits::default() };
        let report = Report::build(&usage, "t", None, &Sizing { limits, ..Sizing::default() });
        assert_eq!(report.context.as_ref().unwrap().level, "critical", "22,988 tokens before compaction");
    }

    #[test]
    fn a_large_session_is_in_the_million_window() {
        let mut usage = usage_from_bytes(FIXTURE);
        usage.context_timeline[7].tokens = 250_000;
        let report = Report::build(&usage, "t", None, &Sizing::default());
        assert_eq!(report.window_tokens, 1_000_000);
        assert_eq!(report.context.as_ref().unwrap().percent_of_window, 25.0);
        assert_eq!(report.context.as_ref().unwrap().level, "normal");
        let empty = Report::build(&SessionUsage::default(), "t", None, &Sizing::default());
        assert_eq!(empty.window_tokens, 200_000);
        assert!(empty.context.is_none());
        assert!(empty.series().is_empty());
    }
}
