//! The figure read from a transcript, for when no statusline bridge is there.

use super::{Figure, Origin};
use crate::transcript::ContextReading;

/// Window sizes hosts use, smallest first.
pub const KNOWN_WINDOWS: &[u64] = &[200_000, 1_000_000];
/// The window assumed when nothing says otherwise.
pub const DEFAULT_WINDOW: u64 = 200_000;

/// The window for a reading: the hint (the statusline's figure), else `[1m]` in the
/// model id, else `default`; if the tokens already exceed it, the next larger one.
pub fn window_for(tokens: u64, model: Option<&str>, hint: Option<u64>, default: u64) -> u64 {
    let base = hint
        .filter(|w| *w > 0)
        .or_else(|| model.filter(|m| m.to_ascii_lowercase().contains("[1m]")).map(|_| 1_000_000))
        .unwrap_or(default);
    if tokens <= base {
        return base;
    }
    KNOWN_WINDOWS.iter().copied().find(|w| *w >= tokens).unwrap_or(tokens)
}

/// A figure from a transcript reading taken at `now`.
pub fn figure_from_reading(
    reading: &ContextReading,
    window_hint: Option<u64>,
    default_window: u64,
    now: i64,
) -> Figure {
    let window = window_for(reading.tokens, reading.model.as_deref(), window_hint, default_window);
    let remaining = 100.0 - reading.tokens as f64 * 100.0 / window as f64;
    Figure {
        remaining_pct: remaining.clamp(0.0, 100.0),
        used_tokens: Some(reading.tokens),
        window_tokens: Some(window),
        origin: Origin::Transcript,
        taken_at: now,
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
    }
}
