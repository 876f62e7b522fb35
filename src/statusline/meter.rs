//! The context meter: a 10-cell bar and the used %, coloured by level. On a narrow
//! terminal it falls back to the bare percentage.
//!
//! The % is of the full window: the figure the statusline payload itself gives
//! (`context_window.used_percentage`), Claude Code's `/context`, baton's levels and its
//! warnings and notices (GSD's contract). Claude Code's own footer ("N% context used",
//! "N% until auto-compact") counts against a smaller base, the window less its output
//! reserve or its compaction point; while that footer is on screen (from 20,000 tokens
//! before its base on, by its formula: [`metrics::claude_footer`]) the meter names its
//! base, `79% of 200k`, so the two numbers side by side say why they differ.

use super::{Context, Segment, Style};
use crate::metrics::{self, Figure, Level};

const CELLS: usize = 10;

/// Below this many tokens Claude Code's footer cannot be on screen, whatever its
/// settings: its smallest base is a 100,000-token compaction window less 33,000, and it
/// shows from 20,000 before that.
const FOOTER_FLOOR: u64 =
    metrics::AUTO_COMPACT_WINDOW_MIN - metrics::OUTPUT_RESERVE_MAX - metrics::COMPACT_MARGIN - 20_000;

pub fn segment(ctx: &Context) -> Option<Segment> {
    let Some(figure) = &ctx.figure else {
        return Some(Segment::new(format!("{} --", "░".repeat(CELLS)), Style::Dim).with_short("--"));
    };
    let used = figure.used_pct();
    let base =
        footer_base(ctx, figure).map(|w| format!(" of {}", metrics::short_tokens(w))).unwrap_or_default();
    let text = format!("{} {used}%{base}", bar(used));
    let style = match ctx.level {
        Level::Normal => Style::Normal,
        Level::Warning => Style::Warning,
        Level::Critical => Style::Critical,
    };
    Some(Segment::new(text, style).with_short(format!("{used}%")))
}

/// The 10-cell bar of `used` %.
pub(super) fn bar(used: u32) -> String {
    let filled = (used as usize * CELLS / 100).min(CELLS);
    format!("{}{}", "█".repeat(filled), "░".repeat(CELLS - filled))
}

/// The window the meter is of, when the host's own meter (Claude Code's footer), which
/// counts against another base, is on screen beside it.
fn footer_base(ctx: &Context, figure: &Figure) -> Option<u64> {
    ctx.input.host().spec().own_meter?;
    let (tokens, window) = (figure.used_tokens?, figure.window_tokens.filter(|w| *w > 0)?);
    if tokens < FOOTER_FLOOR {
        return None;
    }
    metrics::claude_footer(tokens, window, &ctx.formula_rule()).shown.then_some(window)
}
