//! The model's display name.

use super::{Context, Segment, Style};

pub fn segment(ctx: &Context) -> Option<Segment> {
    let name = ctx.input.model_name()?;
    Some(Segment::new(shown(name), Style::Dim))
}

/// Text of the payload, the repository or the transcript as a segment shows it: its
/// control characters in their visible form (a payload must not be able to move the
/// cursor or start a sequence of its own).
pub fn shown(text: &str) -> String {
    crate::util::text::escape_controls(text).into_owned()
}
