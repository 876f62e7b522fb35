//! The figure carried by a statusline payload.

use super::{Figure, Origin, WindowSource};
use crate::host::StatuslineInput;

/// Reads the figure from a statusLine payload: `remaining_percentage` (else
/// `used_percentage`), else `current_usage` over `context_window_size`. Never from
/// `total_input_tokens`, which older hosts filled with session totals. `None` before the
/// first reply and right after `/compact`, when the host sends `null`s (older versions)
/// or zeros (2.1.332): a context is never empty once a reply was made.
pub fn figure_from_statusline(input: &StatuslineInput, now: i64) -> Option<Figure> {
    let window = input.context_window.as_ref()?;
    let window_tokens = window.context_window_size.filter(|w| *w >= 1.0).map(|w| w.round() as u64);
    let used_tokens = window.current_usage.as_ref().and_then(|usage| {
        let parts = [usage.input_tokens, usage.cache_creation_input_tokens, usage.cache_read_input_tokens];
        if parts.iter().all(Option::is_none) {
            return None;
        }
        Some(parts.iter().map(|p| p.unwrap_or(0.0).max(0.0)).sum::<f64>().round() as u64)
    });
    let says_empty = used_tokens == Some(0) || (used_tokens.is_none() && window.used_percentage == Some(0.0));
    if says_empty {
        return None;
    }
    let remaining = window
        .remaining_percentage
        .or_else(|| window.used_percentage.map(|used| 100.0 - used))
        .or_else(|| {
        let (used, size) = (used_tokens?, window_tokens?);
        Some(100.0 - used as f64 * 100.0 / size as f64)
    })?;
    Some(Figure {
        remaining_pct: remaining.clamp(0.0, 100.0),
        used_tokens,
        window_tokens,
        origin: Origin::Statusline,
        taken_at: now,
        window_source: WindowSource::Statusline,
        estimate: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> StatuslineInput {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn percentages_win() {
        let f = figure_from_statusline(
            &parse(r#"{"context_window": {"used_percentage": 72, "remaining_percentage": 28, "context_window_size": 200000, "current_usage": {"input_tokens": 1}}}"#),
            5,
        )
        .unwrap();
        assert_eq!(f.remaining_pct, 28.0);
        assert_eq!(f.used_pct(), 72);
        assert_eq!(f.window_tokens, Some(200_000));
    }

    #[test]
    fn usage_is_the_fallback_and_output_is_excluded() {
        let f = figure_from_statusline(
            &parse(r#"{"context_window": {"context_window_size": 200000, "total_input_tokens": 999999, "current_usage": {"input_tokens": 12, "output_tokens": 512, "cache_creation_input_tokens": 3000, "cache_read_input_tokens": 141000}}}"#),
            5,
        )
        .unwrap();
        assert_eq!(f.used_tokens, Some(144_012));
        assert_eq!(f.used_pct(), 72);
    }

    #[test]
    fn nulls_after_compact_give_no_figure() {
        let input = parse(
            r#"{"context_window": {"total_input_tokens": 0, "context_window_size": 200000, "used_percentage": null, "remaining_percentage": null, "current_usage": null}}"#,
        );
        assert!(figure_from_statusline(&input, 5).is_none());
        assert!(figure_from_statusline(&parse("{}"), 5).is_none());
    }

    #[test]
    fn zeros_after_compact_give_no_figure() {
        let input = parse(
            r#"{"context_window": {"context_window_size": 200000, "used_percentage": 0, "remaining_percentage": 100, "current_usage": {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}"#,
        );
        assert!(figure_from_statusline(&input, 5).is_none());
        let percent_only =
            parse(r#"{"context_window": {"used_percentage": 0, "remaining_percentage": 100}}"#);
        assert!(figure_from_statusline(&percent_only, 5).is_none());
        let small = parse(
            r#"{"context_window": {"used_percentage": 0, "remaining_percentage": 100, "current_usage": {"input_tokens": 300}}}"#,
        );
        assert!(figure_from_statusline(&small, 5).is_some(), "a real reading that rounds to 0% stays");
    }
}
