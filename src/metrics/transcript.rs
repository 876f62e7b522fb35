//! The figure made from a token count a host recorded (Claude Code's transcript, Codex's
//! rollout, Gemini CLI's chat recording), for when no statusline bridge is there or the
//! record is newer than the bridge.

use super::windows::{WindowFacts, WindowSource, choose_window};
use super::{Figure, Origin};

/// The window assumed when nothing says otherwise.
#[cfg(test)]
pub const DEFAULT_WINDOW: u64 = 200_000;

/// The window for `tokens` of `model` when only a hint and the table are known (for
/// `baton report`): the hint, else the table, else `default`; if the tokens already
/// exceed it, the next larger known one.
pub fn window_for(tokens: u64, model: Option<&str>, hint: Option<u64>, default: u64) -> u64 {
    let facts = WindowFacts { model, statusline: hint, default, ..WindowFacts::default() };
    choose_window(&facts, Some(tokens)).0
}

/// A figure of `tokens` in a `window`-token window.
pub fn figure_from_tokens(tokens: u64, window: (u64, WindowSource), taken_at: i64) -> Figure {
    let (window, window_source) = window;
    let window = window.max(1);
    let remaining = 100.0 - tokens as f64 * 100.0 / window as f64;
    Figure {
        remaining_pct: remaining.clamp(0.0, 100.0),
        used_tokens: Some(tokens),
        window_tokens: Some(window),
        origin: Origin::Transcript,
        taken_at,
        window_source,
        estimate: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows() {
        assert_eq!(window_for(144_012, Some("claude-opus-4-5-20251101"), None, DEFAULT_WINDOW), 200_000);
        assert_eq!(window_for(10, Some("claude-sonnet-4-5[1m]"), None, DEFAULT_WINDOW), 1_000_000);
        assert_eq!(window_for(250_000, None, None, DEFAULT_WINDOW), 1_000_000);
        assert_eq!(window_for(10, None, Some(500_000), DEFAULT_WINDOW), 500_000);
        assert_eq!(window_for(10, None, None, 400_000), 400_000);
        assert_eq!(window_for(132_000, Some("claude-opus-5-5"), None, DEFAULT_WINDOW), 1_000_000);
    }

    #[test]
    fn figures_from_tokens() {
        let f = figure_from_tokens(135_000, (190_000, WindowSource::Host), 7);
        assert_eq!(f.used_pct(), 71);
        assert_eq!(f.window_source, WindowSource::Host);
    }
}
