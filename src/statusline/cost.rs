//! The session's cost, when the host gives it.

use super::{Context, Segment, Style};

pub fn segment(ctx: &Context) -> Option<Segment> {
    let cost = ctx.input.cost.as_ref()?.total_cost_usd?;
    (cost >= 0.0).then(|| Segment::new(format!("${cost:.2}"), Style::Dim))
}
