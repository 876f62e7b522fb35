//! The subscription's rate limits, `5h 42% ↻1h20m │ 7d 18%`: read from the statusline
//! payload (`rate_limits.{five_hour,seven_day}`) and nothing else, never from credentials
//! or an API. Claude Code sends them for subscription logins only; without them the
//! segment is absent.

use super::{Context, Segment, Style};
use crate::host::RateWindow;

/// At or above this used %, the segment turns to warning, then critical colours.
const WARN_USED: f64 = 75.0;
const CRITICAL_USED: f64 = 90.0;

pub fn segment(ctx: &Context) -> Option<Segment> {
    let limits = ctx.input.rate_limits.as_ref()?;
    let now = (ctx.now_ms / 1000) as i64;
    let windows = [("5h", limits.five_hour.as_ref()), ("7d", limits.seven_day.as_ref())];
    let shown: Vec<(&str, f64, Option<i64>)> = windows
        .iter()
        .filter_map(|(label, window)| {
            let RateWindow { used_percentage, resets_at } = (*window)?;
            let used = used_percentage.filter(|u| u.is_finite() && *u >= 0.0)?;
            let left = resets_at.filter(|r| r.is_finite()).map(|r| r as i64 - now).filter(|s| *s > 0);
            Some((*label, used.min(100.0), left))
        })
        .collect();
    if shown.is_empty() {
        return None;
    }
    let text = |with_reset: bool| {
        shown
            .iter()
            .map(|(label, used, left)| {
                let reset = left.filter(|_| with_reset).map(|s| format!(" ↻{}", short_duration(s)));
                format!("{label} {}%{}", used.round(), reset.unwrap_or_default())
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let highest = shown.iter().map(|(_, used, _)| *used).fold(0.0, f64::max);
    let style = if highest >= CRITICAL_USED {
        Style::Critical
    } else if highest >= WARN_USED {
        Style::Warning
    } else {
        Style::Dim
    };
    Some(Segment::new(text(true), style).with_short(text(false)))
}

/// `45s`, `12m`, `1h20m`, `3d4h`.
pub fn short_duration(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => match (s % 3600) / 60 {
            0 => format!("{}h", s / 3600),
            m => format!("{}h{m:02}m", s / 3600),
        },
        s => match (s % 86_400) / 3600 {
            0 => format!("{}d", s / 86_400),
            h => format!("{}d{h}h", s / 86_400),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_short() {
        assert_eq!(short_duration(45), "45s");
        assert_eq!(short_duration(12 * 60 + 5), "12m");
        assert_eq!(short_duration(3600), "1h");
        assert_eq!(short_duration(4800), "1h20m");
        assert_eq!(short_duration(3 * 86_400 + 4 * 3600), "3d4h");
    }
}
