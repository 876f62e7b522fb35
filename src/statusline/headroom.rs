//! Headroom: tokens (and, once the monitor has measured the pace, tool calls) left
//! before auto-compaction, from the same computation the monitor's messages use.

use super::{Context, Segment, Style};
use crate::metrics::{self, HeadroomEnd, Level};
use crate::monitor;

pub fn segment(ctx: &Context) -> Option<Segment> {
    let figure = ctx.figure.as_ref()?;
    let model = ctx.input.model_id();
    let mut limits = ctx.limits;
    limits.rule.learned = model.and_then(metrics::learned::learned_point);
    let pace = ctx.input.session_id.as_deref().and_then(monitor::tokens_per_call);
    let headroom = metrics::assess(figure, &limits, model, pace).headroom?;
    let calls = headroom.calls.map(|c| format!(" ~{c} calls")).unwrap_or_default();
    let to = match headroom.end {
        HeadroomEnd::AutoCompaction | HeadroomEnd::Compression => "to compact",
        HeadroomEnd::WindowEnd => "left",
    };
    let text = format!("{} {to}{calls}", metrics::short_tokens(headroom.tokens));
    let style = match ctx.level {
        Level::Normal => Style::Dim,
        Level::Warning => Style::Warning,
        Level::Critical => Style::Critical,
    };
    Some(Segment { text, style, short: Some(metrics::short_tokens(headroom.tokens)) })
}
