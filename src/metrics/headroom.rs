//! Headroom: how many tokens are left before the host compacts the conversation (or,
//! with auto-compaction off, before the window is full), and how many tool calls that
//! is at the recent pace.
//!
//! Each host compacts at its own point ([`CompactionAt`]): Codex at its
//! `model_auto_compact_token_limit`, Gemini CLI at its compression threshold, Claude Code
//! by the rule below. When the point cannot be known, no headroom is claimed.
//!
//! Claude Code's compaction point (2.1.332, read in its bundle and checked by runs):
//! `point = (ac_window − min(max_output, 20,000)) − 13,000`, where `ac_window` is the
//! model's window unless `CLAUDE_CODE_AUTO_COMPACT_WINDOW` (env) or `autoCompactWindow`
//! (settings: per model in `modelSettings`, else top level) names a smaller one (below
//! 100,000 counts as 100,000); `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=p` makes it
//! `min(floor(effective × p / 100), point)` with `effective = ac_window − reserve`;
//! `DISABLE_AUTO_COMPACT` removes it. Some models (the 200k ones without a larger API
//! window: Sonnet 4.5, Opus 4.5, Haiku 4.5 …) are not compacted at a threshold unless a
//! window is set: Claude Code waits for the API's prompt-too-long ("reactive"). A point
//! observed in earlier transcripts (`learned`) takes the default formula's place; a set
//! window beats it.

use serde::Serialize;

/// What decides where the host compacts.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CompactionRule {
    /// Tokens short of the window where compaction fires.
    pub buffer: u64,
    /// `CLAUDE_CODE_AUTO_COMPACT_WINDOW`: the window used for compaction.
    pub window_override: Option<u64>,
    /// `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`: compaction at this % of the window, if lower.
    pub pct_override: Option<u64>,
    /// `DISABLE_AUTO_COMPACT`.
    pub disabled: bool,
    /// The point observed in this model's earlier compactions.
    pub learned: Option<u64>,
    /// `autoCompactWindow` from Claude Code's settings (per model, else top level).
    pub settings_window: Option<u64>,
    /// Claude Code waits for the API's prompt-too-long for this model unless a window is
    /// set ([`crate::metrics::windows::ModelRow::reactive`]).
    pub reactive: bool,
}

/// Claude Code reserves the model's max output, up to this, for the reply.
pub const OUTPUT_RESERVE_MAX: u64 = 20_000;
/// And compacts this many tokens before that.
pub const COMPACT_MARGIN: u64 = 13_000;
/// A set auto-compaction window below this counts as this.
pub const AUTO_COMPACT_WINDOW_MIN: u64 = 100_000;

/// Claude Code's compaction figures for one window (pure).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaudeCompaction {
    /// The window compaction is measured in (`autoCompactWindow` or the model's).
    pub ac_window: u64,
    /// `ac_window` less the output reserve.
    pub effective: u64,
    /// The formula's threshold (ignores what was learned).
    pub threshold: u64,
    /// Claude Code compacts at the threshold (not waiting for the API's error).
    pub enforced: bool,
}

impl CompactionRule {
    /// The window set for compaction, env first, then the settings.
    fn set_window(&self) -> Option<u64> {
        self.window_override.or(self.settings_window).filter(|w| *w > 0)
    }

    /// The output reserve: the buffer less the margin (33,000 = 20,000 + 13,000).
    fn reserve(&self) -> u64 {
        self.buffer.saturating_sub(COMPACT_MARGIN)
    }

    /// Claude Code's figures for a `window`-token model (pure).
    pub fn claude(&self, window: u64) -> ClaudeCompaction {
        let set = self.set_window();
        let ac_window = set.map_or(window, |w| w.max(AUTO_COMPACT_WINDOW_MIN).min(window));
        let effective = ac_window.saturating_sub(self.reserve());
        let mut threshold = ac_window.saturating_sub(self.buffer);
        if let Some(pct) = self.pct_override.filter(|p| (1..=100).contains(p)) {
            threshold = threshold.min(effective * pct / 100);
        }
        ClaudeCompaction { ac_window, effective, threshold, enforced: set.is_some() || !self.reactive }
    }
}

/// Where a host compacts, as far as baton can know.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum CompactionAt {
    /// Claude Code: the window less a buffer, with its environment overrides.
    #[default]
    ClaudeRule,
    /// A token count the host's own settings give (Codex's auto-compaction limit, Gemini
    /// CLI's compression threshold), and what happens there.
    Tokens(u64, HeadroomEnd),
    /// Not known: no headroom is claimed.
    Unknown,
}

/// Where the headroom runs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HeadroomEnd {
    AutoCompaction,
    WindowEnd,
    /// Gemini CLI compresses the chat history.
    Compression,
}

/// Tokens (and tool calls) left.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Headroom {
    pub tokens: u64,
    pub end: HeadroomEnd,
    /// The token count where it ends.
    pub at: u64,
    /// Tool calls left at the recent pace, when known.
    pub calls: Option<u64>,
}

/// The token count at which the host compacts a conversation in a `window`-token
/// window; `None` when auto-compaction is off, or when Claude Code waits for the API's
/// error and no compaction was observed.
pub fn compaction_point(window: u64, rule: &CompactionRule) -> Option<u64> {
    if rule.disabled {
        return None;
    }
    let claude = rule.claude(window);
    if rule.set_window().is_some() {
        return Some(claude.threshold);
    }
    // A reactive model (Claude Code waits for the API's error, as offline runs show) is
    // counted to the same threshold: a first-party login may enforce it (server
    // settings), and the earlier point is the safe one to warn before.
    let mut point = rule.learned.filter(|p| *p > 0).unwrap_or(claude.threshold);
    if let Some(pct) = rule.pct_override.filter(|p| (1..=100).contains(p)) {
        point = point.min(claude.effective * pct / 100);
    }
    Some(point.min(window))
}

/// The headroom of `used` tokens in a `window`-token window.
pub fn headroom(used: u64, window: u64, rule: &CompactionRule, tokens_per_call: Option<f64>) -> Headroom {
    let (at, end) = match compaction_point(window, rule) {
        Some(point) => (point, HeadroomEnd::AutoCompaction),
        None => (window, HeadroomEnd::WindowEnd),
    };
    let tokens = at.saturating_sub(used);
    let calls = tokens_per_call.filter(|p| *p >= 1.0).map(|p| (tokens as f64 / p).floor() as u64);
    Headroom { tokens, end, at, calls }
}

/// What Claude Code's own footer says (bottom right), by its formula.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FooterKind {
    /// "N% context used": of the window less the output reserve (the model waits for
    /// the API's error).
    ContextUsed,
    /// "N% until auto-compact": left of the compaction threshold.
    UntilCompact,
    /// "Context low (N% remaining)": auto-compaction off.
    ContextLow,
}

/// Claude Code's footer figure for `tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Footer {
    pub kind: FooterKind,
    /// The number it shows.
    pub pct: u32,
    /// The base it is measured against, in tokens.
    pub base: u64,
    /// Claude Code shows it (from 20,000 tokens short of its base on).
    pub shown: bool,
    /// The share used of that base, rounded the way Claude Code rounds (100 − left).
    pub used_pct: u32,
}

/// Claude Code's footer for `tokens` in a `window`-token model (pure; 2.1.332's formula).
pub fn claude_footer(tokens: u64, window: u64, rule: &CompactionRule) -> Footer {
    let c = rule.claude(window);
    let left = |base: u64| {
        if base == 0 {
            0
        } else {
            ((base.saturating_sub(tokens)) as f64 * 100.0 / base as f64).round().clamp(0.0, 100.0) as u32
        }
    };
    let k = if rule.disabled { c.effective } else { c.threshold };
    let shown = tokens + 20_000 >= k;
    let (kind, base) = match (rule.disabled, c.enforced) {
        (true, _) => (FooterKind::ContextLow, c.effective),
        (false, true) => (FooterKind::UntilCompact, c.threshold),
        (false, false) => (FooterKind::ContextUsed, c.effective),
    };
    let remaining = left(base);
    let pct = if kind == FooterKind::ContextUsed { 100 - remaining } else { remaining };
    Footer { kind, pct, base, shown, used_pct: 100 - remaining }
}

/// The headroom of `used` tokens before a known point `at` (Codex, Gemini CLI).
pub fn headroom_to(used: u64, at: u64, end: HeadroomEnd, tokens_per_call: Option<f64>) -> Headroom {
    let tokens = at.saturating_sub(used);
    let calls = tokens_per_call.filter(|p| *p >= 1.0).map(|p| (tokens as f64 / p).floor() as u64);
    Headroom { tokens, end, at, calls }
}

pub use crate::util::text::short_tokens;

impl Headroom {
    /// "about 38k tokens, about 9 tool calls, before auto-compaction".
    pub fn describe(&self) -> String {
        let calls = self
            .calls
            .map(|c| match c {
                0 => ", less than one tool call".to_string(),
                1 => ", about 1 tool call".to_string(),
                c => format!(", about {c} tool calls"),
            })
            .unwrap_or_default();
        let end = match self.end {
            HeadroomEnd::AutoCompaction => "auto-compaction",
            HeadroomEnd::WindowEnd => "the context window is full (auto-compaction is off)",
            HeadroomEnd::Compression => "the host compresses the conversation",
        };
        format!("about {} tokens{calls} before {end}", short_tokens(self.tokens))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule() -> CompactionRule {
        CompactionRule { buffer: 33_000, ..Default::default() }
    }

    #[test]
    fn default_point_is_the_window_less_the_buffer() {
        assert_eq!(compaction_point(200_000, &rule()), Some(167_000));
        assert_eq!(compaction_point(1_000_000, &rule()), Some(967_000));
    }

    #[test]
    fn overrides_and_learning() {
        let r = CompactionRule { window_override: Some(100_000), ..rule() };
        assert_eq!(compaction_point(200_000, &r), Some(67_000));
        let r = CompactionRule { pct_override: Some(50), ..rule() };
        assert_eq!(compaction_point(200_000, &r), Some(90_000), "floor(180,000 × 0.5)");
        let r = CompactionRule { pct_override: Some(95), ..rule() };
        assert_eq!(compaction_point(200_000, &r), Some(167_000), "the override only lowers");
        let r = CompactionRule { learned: Some(167_400), ..rule() };
        assert_eq!(compaction_point(200_000, &r), Some(167_400));
        let r = CompactionRule { disabled: true, ..rule() };
        assert_eq!(compaction_point(200_000, &r), None);
    }

    /// Every case the findings ran on Claude Code 2.1.332 (`thresh*.txt`).
    #[test]
    fn claude_codes_own_thresholds() {
        let reactive = CompactionRule { reactive: true, ..rule() };
        // sonnet-4-5: reactive; counted to the threshold Claude Code would enforce.
        assert_eq!(compaction_point(200_000, &reactive), Some(167_000));
        // env 200000 → 167,000; settings 200000 → the same.
        let env = CompactionRule { window_override: Some(200_000), ..reactive };
        assert_eq!(compaction_point(200_000, &env), Some(167_000));
        let settings = CompactionRule { settings_window: Some(200_000), ..reactive };
        assert_eq!(compaction_point(200_000, &settings), Some(167_000));
        // per-model 150000 → 117,000; opus-4-7 with 300000 → 267,000.
        let s150 = CompactionRule { settings_window: Some(150_000), ..reactive };
        assert_eq!(compaction_point(200_000, &s150), Some(117_000));
        assert_eq!(
            compaction_point(1_000_000, &CompactionRule { settings_window: Some(300_000), ..rule() }),
            Some(267_000)
        );
        // env beats settings: 250000 + 300000 → 217,000.
        let both =
            CompactionRule { window_override: Some(250_000), settings_window: Some(300_000), ..rule() };
        assert_eq!(compaction_point(1_000_000, &both), Some(217_000));
        // env 200000 + PCT 50 → 90,000; opus-4-7 + PCT 50 → 490,000.
        let pct = CompactionRule { pct_override: Some(50), ..env };
        assert_eq!(compaction_point(200_000, &pct), Some(90_000));
        assert_eq!(
            compaction_point(1_000_000, &CompactionRule { pct_override: Some(50), ..rule() }),
            Some(490_000)
        );
        assert!(!reactive.claude(200_000).enforced && env.claude(200_000).enforced);
        assert!(
            !CompactionRule { pct_override: Some(50), ..reactive }.claude(200_000).enforced,
            "PCT alone does not enforce"
        );
        // below 100k counts as 100k: 50000 → 67,000; a window never exceeds the model's.
        assert_eq!(
            compaction_point(200_000, &CompactionRule { window_override: Some(50_000), ..rule() }),
            Some(67_000)
        );
        assert_eq!(
            compaction_point(200_000, &CompactionRule { window_override: Some(500_000), ..rule() }),
            Some(167_000)
        );
        // native 1M and enforced 200k models.
        assert_eq!(compaction_point(1_000_000, &rule()), Some(967_000));
        assert_eq!(compaction_point(200_000, &rule()), Some(167_000));
        // a learned point replaces the default formula, not a set window.
        assert_eq!(
            compaction_point(200_000, &CompactionRule { learned: Some(170_000), ..reactive }),
            Some(170_000)
        );
        assert_eq!(
            compaction_point(200_000, &CompactionRule { learned: Some(170_000), ..env }),
            Some(167_000)
        );
    }

    /// The footer as the findings read it in the interactive pane.
    #[test]
    fn claude_codes_own_footer() {
        let reactive = CompactionRule { reactive: true, ..rule() };
        let f = claude_footer(158_000, 200_000, &reactive);
        assert_eq!((f.kind, f.pct, f.shown), (FooterKind::ContextUsed, 88, true));
        assert_eq!(claude_footer(150_000, 200_000, &reactive).pct, 83);
        assert_eq!(claude_footer(152_000, 200_000, &reactive).pct, 84);
        let f = claude_footer(158_000, 200_000, &rule());
        assert_eq!((f.kind, f.pct, f.used_pct), (FooterKind::UntilCompact, 5, 95));
        assert!(!claude_footer(900_000, 1_000_000, &rule()).shown);
        let f = claude_footer(950_000, 1_000_000, &rule());
        assert_eq!((f.kind, f.pct, f.shown), (FooterKind::UntilCompact, 2, true));
        let env = CompactionRule { window_override: Some(180_000), ..reactive };
        assert_eq!(claude_footer(158_000, 200_000, &env).pct, 0, "auto-compact next");
        let off = CompactionRule { disabled: true, ..reactive };
        assert!(!claude_footer(158_000, 200_000, &off).shown);
        let f = claude_footer(165_000, 200_000, &off);
        assert_eq!((f.kind, f.pct, f.shown), (FooterKind::ContextLow, 8, true));
    }

    #[test]
    fn headroom_in_tokens_and_calls() {
        let h = headroom(144_012, 200_000, &rule(), Some(2_500.0));
        assert_eq!(h.tokens, 22_988);
        assert_eq!(h.calls, Some(9));
        assert_eq!(h.describe(), "about 23k tokens, about 9 tool calls before auto-compaction");
        let off = headroom(144_012, 200_000, &CompactionRule { disabled: true, ..rule() }, None);
        assert_eq!(off.tokens, 55_988);
        assert_eq!(off.end, HeadroomEnd::WindowEnd);
        assert_eq!(headroom(190_000, 200_000, &rule(), None).tokens, 0);
    }

    #[test]
    fn short_token_counts() {
        assert_eq!(short_tokens(850), "850");
        assert_eq!(short_tokens(1_234), "1.2k");
        assert_eq!(short_tokens(38_400), "38k");
        assert_eq!(short_tokens(1_200_000), "1.2M");
    }
}
