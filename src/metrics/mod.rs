//! The context figure: how full the window is, where the number came from, and the level
//! it means. The monitor, the statusline and `baton report` all go through [`Figure`] and
//! the one [`assess`] (window, its source, compaction point, headroom, level), so the bar
//! the user sees, the report and the warning the agent gets can never disagree.

mod bridge;
mod headroom;
pub mod learned;
mod payload;
mod session;
mod transcript;
mod wait;
pub mod windows;

use crate::config::Settings;

pub use bridge::{Bridge, is_fresh, read_any_bridge, read_bridge, write_bridge};
pub use headroom::{
    AUTO_COMPACT_WINDOW_MIN, COMPACT_MARGIN, CompactionAt, CompactionRule, Headroom, HeadroomEnd,
    OUTPUT_RESERVE_MAX, claude_footer, compaction_point, headroom, headroom_to, short_tokens,
};
pub use payload::figure_from_statusline;
pub use session::{
    FigureQuery, SessionFigure, Stakes, StakesLookup, compaction_at, describe_origin, describe_window,
    session_figure,
};
pub use transcript::{figure_from_tokens, window_for};
pub use windows::{WindowFacts, WindowSource, choose_window};

use std::path::Path;

use crate::host::{Compaction, CompactionSettings, HostKind};

/// Where a figure was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Origin {
    /// The statusline payload itself (inside `baton statusline`).
    #[default]
    Statusline,
    /// The bridge file the statusline wrote.
    Bridge,
    /// The session's transcript, or the host's own record of the session (Codex's
    /// rollout, Gemini CLI's chat recording): no statusline figure was available, or the
    /// transcript was newer.
    Transcript,
}

/// One reading of the context window.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Figure {
    /// Remaining context, 0 to 100, as the host reports it (no buffer adjustment).
    pub remaining_pct: f64,
    /// Tokens in the context, when known.
    pub used_tokens: Option<u64>,
    /// The window size in tokens, when known.
    pub window_tokens: Option<u64>,
    pub origin: Origin,
    /// When the figure was taken (Unix seconds).
    pub taken_at: i64,
    /// Where the window size came from; an assumed window is said in the message.
    pub window_source: WindowSource,
    /// Projected from an older figure and what was written since, not read.
    pub estimate: bool,
}

impl Figure {
    /// Used %, rounded: `round(100 − remaining)`, GSD's `used_pct`.
    pub fn used_pct(&self) -> u32 {
        (100.0 - self.remaining_pct).round().clamp(0.0, 100.0) as u32
    }

    /// Remaining % for messages: whole when it is whole, else one decimal.
    pub fn remaining_display(&self) -> String {
        format_pct(self.remaining_pct)
    }
}

/// A percentage as text: `28`, `27.5`.
pub fn format_pct(pct: f64) -> String {
    let rounded = (pct * 10.0).round() / 10.0;
    if rounded.fract() == 0.0 { format!("{}", rounded as i64) } else { format!("{rounded:.1}") }
}

/// How urgent a figure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Normal,
    Warning,
    Critical,
}

impl Level {
    /// The name kept in the debounce state (`lastLevel`).
    pub fn state_name(self) -> Option<&'static str> {
        match self {
            Level::Normal => None,
            Level::Warning => Some("warning"),
            Level::Critical => Some("critical"),
        }
    }
}

/// The level boundaries, as remaining % (inclusive: remaining ≤ warn is a WARNING).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    pub warn_remaining: f64,
    pub critical_remaining: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds::from_settings(&Settings::default())
    }
}

impl Thresholds {
    /// The thresholds the configuration sets.
    pub fn from_settings(settings: &Settings) -> Thresholds {
        Thresholds {
            warn_remaining: settings.warn_remaining,
            critical_remaining: settings.critical_remaining,
        }
    }

    /// The level of a figure.
    pub fn level(&self, figure: &Figure) -> Level {
        if figure.remaining_pct <= self.critical_remaining {
            Level::Critical
        } else if figure.remaining_pct <= self.warn_remaining {
            Level::Warning
        } else {
            Level::Normal
        }
    }
}

/// Everything that decides a figure's level and headroom (from the configuration).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub thresholds: Thresholds,
    /// Headroom thresholds in tokens; in force when both are set.
    pub warn_headroom: Option<u64>,
    pub critical_headroom: Option<u64>,
    pub default_window: u64,
    /// Claude Code's compaction rule.
    pub rule: CompactionRule,
    /// Where the host compacts: Claude Code's rule, or a point the host's settings give.
    pub compaction: CompactionAt,
}

impl Default for Limits {
    fn default() -> Self {
        Limits::from_settings(&Settings::default())
    }
}

impl Limits {
    /// Everything the configuration says about levels and headroom (0 is "not set").
    pub fn from_settings(settings: &Settings) -> Limits {
        let optional = |value: u64| Some(value).filter(|v| *v > 0);
        Limits {
            thresholds: Thresholds::from_settings(settings),
            warn_headroom: optional(settings.warn_headroom_tokens),
            critical_headroom: optional(settings.critical_headroom_tokens),
            default_window: settings.default_window_tokens,
            rule: CompactionRule {
                buffer: settings.compact_buffer_tokens,
                window_override: optional(settings.auto_compact_window),
                pct_override: optional(settings.auto_compact_pct),
                disabled: settings.auto_compact_disabled,
                learned: None,
                settings_window: None,
                reactive: false,
            },
            compaction: CompactionAt::ClaudeRule,
        }
    }
}

/// A figure's level and headroom: the one computation the monitor, the statusline and
/// `baton report` share.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Assessment {
    pub level: Level,
    pub headroom: Option<Headroom>,
    /// The window the figure is of, and where that size came from.
    pub window: Option<u64>,
    pub window_source: WindowSource,
}

/// What a figure's level and headroom rest on besides the figure itself.
#[derive(Debug, Clone, Copy)]
pub struct Basis<'a> {
    /// From the configuration ([`crate::config::Config::limits`]).
    pub limits: Limits,
    pub host: HostKind,
    /// The model the figure is about.
    pub model: Option<&'a str>,
    /// The project folder (Gemini CLI's project settings are there).
    pub project: Option<&'a Path>,
}

/// How much of an assessment the caller needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Want {
    /// The level: where the host compacts is read only when headroom thresholds decide
    /// the level.
    Level,
    /// The level and the headroom, in tool calls at this pace when it is known.
    Headroom { tokens_per_call: Option<f64> },
}

/// The one assessment of a session's figure: where the host compacts (its settings, the
/// compaction point learned for the model), the headroom before it, and the level by
/// the configured thresholds (headroom tokens when set, else remaining %).
pub fn assess(figure: &Figure, basis: &Basis, want: Want) -> Assessment {
    let mut limits = basis.limits;
    if want != Want::Level || limits.warn_headroom.is_some() {
        let key = basis.model.map(windows::canonical_id);
        let compaction = basis.host.host().compaction(figure.window_tokens, basis.project, key.as_deref());
        limits.compaction = compaction_at(compaction);
        if let Compaction::Formula(settings) = compaction {
            limits.rule = with_formula_settings(limits.rule, basis.model, &settings);
            limits.rule.learned = basis.model.and_then(learned::learned_point);
        }
    }
    let pace = match want {
        Want::Level => None,
        Want::Headroom { tokens_per_call } => tokens_per_call,
    };
    assess_with(figure, &limits, basis.model, pace)
}

/// The compaction point of each known Claude model's window, by the formula of the host
/// that runs them ([`HostKind::DEFAULT`], Claude Code) with its settings and environment
/// as they are now (`baton config`, `baton doctor`). Reads its settings files once per
/// model.
pub fn with_compaction_points(
    mut known: Vec<windows::KnownWindow>,
    limits: &Limits,
    project: Option<&Path>,
) -> Vec<windows::KnownWindow> {
    for k in known.iter_mut().filter(|k| k.model.starts_with("claude")) {
        let rule = formula_rule(HostKind::DEFAULT, limits.rule, Some(&k.model), project);
        k.compacts_at = compaction_point(k.tokens, &rule);
    }
    known
}

/// The compaction formula completed for a model of `host`: its row (reactive or not, its
/// output reserve) and what the host's settings files and environment set, when the host
/// compacts by the formula. Reads the settings files: call it only where the compaction
/// point is needed.
pub fn formula_rule(
    host: HostKind,
    rule: CompactionRule,
    model: Option<&str>,
    project: Option<&Path>,
) -> CompactionRule {
    let key = model.map(windows::canonical_id);
    match host.host().compaction(None, project, key.as_deref()) {
        Compaction::Formula(settings) => with_formula_settings(rule, model, &settings),
        _ => rule,
    }
}

/// [`formula_rule`] over settings already read (pure).
pub fn with_formula_settings(
    mut rule: CompactionRule,
    model: Option<&str>,
    settings: &CompactionSettings,
) -> CompactionRule {
    let row = model.and_then(windows::claude_row);
    rule.reactive = row.is_some_and(|r| r.reactive);
    // The 3.5 models reserve their 8,192 output tokens, not 20,000.
    if let Some(row) = row.filter(|r| r.max_output < headroom::OUTPUT_RESERVE_MAX) {
        if rule.buffer == headroom::OUTPUT_RESERVE_MAX + headroom::COMPACT_MARGIN {
            rule.buffer = row.max_output + headroom::COMPACT_MARGIN;
        }
    }
    rule.window_override = settings.env_window.or(rule.window_override);
    rule.settings_window = settings.settings_window;
    rule.disabled |= settings.disabled;
    rule
}

/// [`assess`] over limits already complete (pure). `model` helps guess the window when
/// the figure does not carry it; `tokens_per_call` turns the headroom into tool calls.
pub fn assess_with(
    figure: &Figure,
    limits: &Limits,
    model: Option<&str>,
    tokens_per_call: Option<f64>,
) -> Assessment {
    let window = figure
        .window_tokens
        .filter(|w| *w > 0)
        .or_else(|| figure.used_tokens.map(|used| window_for(used, model, None, limits.default_window)));
    let used = figure
        .used_tokens
        .or_else(|| window.map(|w| ((100.0 - figure.remaining_pct) * w as f64 / 100.0).round() as u64));
    let headroom = match (used, window, limits.compaction) {
        (Some(used), Some(window), CompactionAt::ClaudeRule) => {
            Some(headroom(used, window, &limits.rule, tokens_per_call))
        }
        (Some(used), _, CompactionAt::Tokens(at, end)) => Some(headroom_to(used, at, end, tokens_per_call)),
        _ => None,
    };
    let level = match (limits.warn_headroom, limits.critical_headroom, headroom) {
        (Some(warn), Some(critical), Some(h)) => {
            if h.tokens <= critical {
                Level::Critical
            } else if h.tokens <= warn {
                Level::Warning
            } else {
                Level::Normal
            }
        }
        _ => limits.thresholds.level(figure),
    };
    Assessment { level, headroom, window, window_source: figure.window_source }
}

impl Assessment {}

/// Whether a CRITICAL action (handoff, checkpoint, pause) may rest on a figure (pure).
/// A window that is a fact (or a table row for a family with one size) carries it. A
/// likely table window ([`WindowSource::Likely`]) carries it once the tokens reach
/// CRITICAL of the host's smallest window; an assumed one (default, or a lower bound)
/// only once they reach CRITICAL of the largest, whichever window is the real one.
pub fn critical_action_allowed(figure: &Figure, host_windows: &[u64], critical_used_pct: f64) -> bool {
    let proves = |window: Option<u64>| {
        figure.used_tokens.is_some_and(|t| {
            window.is_some_and(|w| w > 0 && t as f64 >= w as f64 * critical_used_pct / 100.0)
        })
    };
    match figure.window_source {
        source if source.is_assumed() => proves(host_windows.iter().copied().max()),
        WindowSource::Likely => proves(host_windows.iter().copied().min()),
        _ => true,
    }
}

/// Seconds since the Unix epoch.
pub fn now_unix() -> i64 {
    chrono::Utc::now().timestamp()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(remaining: f64) -> Figure {
        Figure { remaining_pct: remaining, origin: Origin::Bridge, ..Figure::default() }
    }

    #[test]
    fn boundaries_are_inclusive() {
        let t = Thresholds::default();
        assert_eq!(t.level(&figure(36.0)), Level::Normal);
        assert_eq!(t.level(&figure(35.0)), Level::Warning);
        assert_eq!(t.level(&figure(26.0)), Level::Warning);
        assert_eq!(t.level(&figure(25.0)), Level::Critical);
        assert_eq!(t.level(&figure(0.0)), Level::Critical);
        assert_eq!(t.level(&figure(35.1)), Level::Normal);
    }

    #[test]
    fn assessment_in_percent_and_in_headroom_tokens() {
        let mut f = figure(28.0);
        f.used_tokens = Some(144_012);
        f.window_tokens = Some(200_000);
        let limits = Limits::default();
        let a = assess_with(&f, &limits, None, None);
        assert_eq!(a.level, Level::Warning);
        assert_eq!(a.headroom.unwrap().tokens, 22_988);
        let by_tokens = Limits { warn_headroom: Some(60_000), critical_headroom: Some(25_000), ..limits };
        assert_eq!(assess_with(&f, &by_tokens, None, None).level, Level::Critical);
        // A 1M window at 61% used is far from compaction: normal by headroom, not by %.
        let mut big = figure(39.0);
        big.used_tokens = Some(610_020);
        big.window_tokens = Some(1_000_000);
        assert_eq!(assess_with(&big, &by_tokens, None, None).level, Level::Normal);
        assert_eq!(assess_with(&big, &limits, None, None).level, Level::Normal);
    }

    #[test]
    fn used_pct_is_rounded_from_remaining() {
        assert_eq!(figure(28.0).used_pct(), 72);
        assert_eq!(figure(27.6).used_pct(), 72);
        assert_eq!(figure(27.4).used_pct(), 73);
        assert_eq!(figure(27.5).remaining_display(), "27.5");
        assert_eq!(figure(28.0).remaining_display(), "28");
    }
}
