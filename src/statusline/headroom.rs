//! Headroom: tokens (and, once the monitor has measured the pace, tool calls) left
//! before auto-compaction, from the same computation the monitor's messages use.

use super::{Context, Segment, Style};
use crate::metrics::{self, HeadroomEnd, Level, Want};

pub fn segment(ctx: &Context) -> Option<Segment> {
    let figure = ctx.figure.as_ref()?;
    let pace = ctx.input.session_id.as_deref().and_then(crate::session_state::tokens_per_call);
    let headroom = metrics::assess(figure, &ctx.basis(), Want::Headroom { tokens_per_call: pace }).headroom?;
    // The same count, and the same words, as the warning's ("about 1 tool call").
    let calls = headroom
        .calls
        .map(|c| match c {
            0 => " <1 call".to_string(),
            1 => " ~1 call".to_string(),
            c => format!(" ~{c} calls"),
        })
        .unwrap_or_default();
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
