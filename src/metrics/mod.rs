//! The context figure: how full the window is, where the number came from, and the level
//! it means. The statusline and the monitor both go through [`Figure`] and
//! [`Thresholds::level`], so the bar the user sees and the warning the agent gets can
//! never disagree.

mod bridge;
mod payload;
mod transcript;

pub use bridge::{Bridge, read_bridge, write_bridge};
pub use payload::figure_from_statusline;
pub use transcript::{DEFAULT_WINDOW, KNOWN_WINDOWS, figure_from_reading, window_for};

/// Where a figure was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The statusline payload itself (inside `baton statusline`).
    Statusline,
    /// The bridge file the statusline wrote.
    Bridge,
    /// The session's transcript (no statusline figure was available).
    Transcript,
}

/// One reading of the context window.
#[derive(Debug, Clone, PartialEq)]
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
        Thresholds { warn_remaining: 35.0, critical_remaining: 25.0 }
    }
}

impl Thresholds {
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

/// Seconds since the Unix epoch.
pub fn now_unix() -> i64 {
    chrono::Utc::now().timestamp()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(remaining: f64) -> Figure {
        Figure {
            remaining_pct: remaining,
            used_tokens: None,
            window_tokens: None,
            origin: Origin::Bridge,
            taken_at: 0,
        }
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
    fn used_pct_is_rounded_from_remaining() {
        assert_eq!(figure(28.0).used_pct(), 72);
        assert_eq!(figure(27.6).used_pct(), 72);
        assert_eq!(figure(27.4).used_pct(), 73);
        assert_eq!(figure(27.5).remaining_display(), "27.5");
        assert_eq!(figure(28.0).remaining_display(), "28");
    }
}
