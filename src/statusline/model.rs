//! The model's display name.

use super::{Context, Segment, Style};

pub fn segment(ctx: &Context) -> Option<Segment> {
    let name = ctx.input.model_name()?;
    Some(Segment::new(clean(name), Style::Dim))
}

/// Control characters out: a payload must not be able to move the cursor.
pub fn clean(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}
