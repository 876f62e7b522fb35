//! How many times the session was compacted so far, `⟳ 2 compactions`: counted by the
//! hook at each real PreCompact (baton's own session state, one small file), so nothing
//! is read from the transcript here. Absent before the first compaction.

use super::{Context, Segment, Style};

pub fn segment(ctx: &Context) -> Option<Segment> {
    let session = ctx.input.session_id.as_deref()?;
    let count = crate::session_state::compactions(session).filter(|n| *n > 0)?;
    let noun = if count == 1 { "compaction" } else { "compactions" };
    Some(Segment::new(format!("⟳ {count} {noun}"), Style::Dim).with_short(format!("⟳{count}")))
}
