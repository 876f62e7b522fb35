//! The prompt cache's time left, `cache 4:12`: from the statusline payload's
//! `prompt_cache` (`warm`, `expires_at` in Unix seconds). Past its expiry, or when the
//! host says it is not warm, `cache cold`: the next request pays to rebuild it. The line
//! is drawn at each reply (or on `refreshInterval`), so the countdown is as of that draw.

use super::{Context, Segment, Style};

pub fn segment(ctx: &Context) -> Option<Segment> {
    let cache = ctx.input.prompt_cache.as_ref()?;
    let now = (ctx.now_ms / 1000) as i64;
    let left = cache.expires_at.filter(|e| e.is_finite()).map(|e| e as i64 - now);
    match (cache.warm, left) {
        (Some(false), _) => Some(cold()),
        (_, Some(left)) if left <= 0 => Some(cold()),
        (_, Some(left)) => {
            let style = if left < 60 { Style::Warning } else { Style::Dim };
            let text = if left >= 3600 {
                format!("cache {}", super::rate_limits::short_duration(left))
            } else {
                format!("cache {}:{:02}", left / 60, left % 60)
            };
            Some(Segment::new(text, style))
        }
        (Some(true), None) => Some(Segment::new("cache warm", Style::Dim)),
        (None, None) => None,
    }
}

fn cold() -> Segment {
    Segment::new("cache cold", Style::Warning)
}
