//! Headroom: how many tokens are left before the host compacts the conversation (or,
//! with auto-compaction off, before the window is full), and how many tool calls that
//! is at the recent pace.
//!
//! Each host compacts at its own point ([`CompactionAt`]): Codex at its
//! `model_auto_compact_token_limit`, Gemini CLI at its compression threshold, Claude Code
//! by the rule below. When the point cannot be known, no headroom is claimed.
//!
//! Claude Code's compaction point is the window less a buffer (33,000 tokens by default), where
//! `CLAUDE_CODE_AUTO_COMPACT_WINDOW` replaces the window, `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`
//! lowers the trigger and `DISABLE_AUTO_COMPACT` removes it; a point observed in earlier
//! transcripts (`learned`) takes the buffer's place.

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
/// window; `None` when auto-compaction is off.
pub fn compaction_point(window: u64, rule: &CompactionRule) -> Option<u64> {
    if rule.disabled {
        return None;
    }
    let window = rule.window_override.filter(|w| *w > 0).unwrap_or(window);
    let mut point = rule.learned.filter(|p| *p > 0).unwrap_or_else(|| window.saturating_sub(rule.buffer));
    if let Some(pct) = rule.pct_override.filter(|p| (1..=100).contains(p)) {
        point = point.min(window * pct / 100);
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
        assert_eq!(compaction_point(200_000, &r), Some(100_000));
        let r = CompactionRule { pct_override: Some(95), ..rule() };
        assert_eq!(compaction_point(200_000, &r), Some(167_000), "the override only lowers");
        let r = CompactionRule { learned: Some(167_400), ..rule() };
        assert_eq!(compaction_point(200_000, &r), Some(167_400));
        let r = CompactionRule { disabled: true, ..rule() };
        assert_eq!(compaction_point(200_000, &r), None);
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
