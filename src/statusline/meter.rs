//! The context meter: a 10-cell bar and the used %, coloured by level. On a narrow
//! terminal it falls back to the bare percentage.

use super::{Context, Segment, Style};
use crate::metrics::Level;

const CELLS: usize = 10;

pub fn segment(ctx: &Context) -> Option<Segment> {
    let Some(figure) = &ctx.figure else {
        return Some(Segment::new(format!("{} --", "░".repeat(CELLS)), Style::Dim).with_short("--"));
    };
    let used = figure.used_pct();
    let filled = (used as usize * CELLS / 100).min(CELLS);
    let text = format!("{}{} {used}%", "█".repeat(filled), "░".repeat(CELLS - filled));
    let style = match ctx.level {
        Level::Normal => Style::Normal,
        Level::Warning => Style::Warning,
        Level::Critical => Style::Critical,
    };
    Some(Segment::new(text, style).with_short(format!("{used}%")))
}
