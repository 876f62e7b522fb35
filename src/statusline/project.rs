//! The project folder's name.

use std::path::Path;

use super::model::shown;
use super::{Context, Segment, Style};

pub fn segment(ctx: &Context) -> Option<Segment> {
    let dir = ctx.input.current_dir()?;
    let name = Path::new(dir).file_name()?.to_string_lossy();
    Some(Segment::new(shown(&name), Style::Bold))
}
