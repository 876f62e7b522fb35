//! The context meter: a 10-cell bar and the used %, coloured by level.

use super::{Context, Segment, Style};
use crate::metrics::Level;

const CELLS: usize = 10;

pub fn segment(ctx: &Context) -> Option<Segment> {
    let Some(figure) = &ctx.figure else {
        return Some(Segment { text: format!("{} --", "░".repeat(CELLS)), style: Style::Dim });
    };
    let used = figure.used_pct();
    let filled = (used as usize * CELLS / 100).min(CELLS);
    let text = format!("{}{} {used}%", "█".repeat(filled), "░".repeat(CELLS - filled));
    let style = match ctx.level {
        Level::Normal => Style::Normal,
        Level::Warning => Style::Warning,
        Level::Critical => Style::Critical,
    };
    Some(Segment { text, style })
}
