//! `baton statusline`: the line under the prompt, and the bridge file for the monitor.
//!
//! One file per segment, each a function from the shared [`Context`] to an optional
//! [`Segment`]; [`render`] joins them. The context meter and its colour come from the
//! same [`Figure`] and the same [`assess`](crate::metrics::assess) the monitor uses.

mod branch;
mod cost;
mod meter;
mod model;
mod project;
mod style;
pub mod wrap;

use std::path::PathBuf;

use once_cell::unsync::OnceCell;

use crate::config::Config;
use crate::host::StatuslineInput;
use crate::metrics::{self, Figure, Level, Limits};

pub use style::Style;

/// Everything a segment may look at. Expensive facts are computed once, on first use.
pub struct Context<'a> {
    pub input: &'a StatuslineInput,
    pub figure: Option<Figure>,
    pub level: Level,
    /// The thresholds and compaction rule from the configuration.
    pub limits: Limits,
    pub colour: bool,
    branch: OnceCell<Option<String>>,
}

impl<'a> Context<'a> {
    pub fn new(input: &'a StatuslineInput, config: &Config, now: i64, colour: bool) -> Context<'a> {
        let figure = metrics::figure_from_statusline(input, now);
        let mut limits = config.limits();
        if limits.warn_headroom.is_some() {
            limits.rule.learned = input.model_id().and_then(metrics::learned::learned_point);
        }
        let level = figure
            .as_ref()
            .map(|f| metrics::assess(f, &limits, input.model_id(), None).level)
            .unwrap_or(Level::Normal);
        Context { input, figure, level, limits, colour, branch: OnceCell::new() }
    }

    /// The folder the session works in.
    pub fn current_dir(&self) -> Option<PathBuf> {
        self.input.current_dir().map(PathBuf::from)
    }

    /// The git branch (read from `HEAD`, no status scan).
    pub fn branch(&self) -> Option<&str> {
        self.branch.get_or_init(|| self.current_dir().and_then(|dir| branch::head_name(&dir))).as_deref()
    }
}

/// One piece of the line.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub text: String,
    pub style: Style,
}

type SegmentFn = fn(&Context) -> Option<Segment>;

/// The segments, in order.
const SEGMENTS: &[SegmentFn] =
    &[model::segment, project::segment, branch::segment, meter::segment, cost::segment];

/// Between segments (and between a wrapped statusline's output and baton's meter).
pub const SEPARATOR: &str = " │ ";

/// Renders the line.
pub fn render(ctx: &Context) -> String {
    let parts: Vec<String> = SEGMENTS
        .iter()
        .filter_map(|segment| segment(ctx))
        .map(|s| style::paint(&s.text, s.style, ctx.colour))
        .collect();
    parts.join(SEPARATOR)
}

/// Colour unless `NO_COLOR` is set to anything non-empty.
pub fn colour_wanted() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The statusline command: render, and write the bridge when the payload has a figure.
pub fn run(input: &StatuslineInput, config: &Config, now: i64) -> String {
    run_parts(input, config, now).0
}

/// Like [`run`], and also returns the context meter alone (painted), which a wrapped
/// statusline may append to the other tool's output.
pub fn run_parts(input: &StatuslineInput, config: &Config, now: i64) -> (String, Option<String>) {
    let ctx = Context::new(input, config, now, colour_wanted());
    if let (Some(figure), Some(session)) = (&ctx.figure, input.session_id.as_deref()) {
        let bridge = metrics::Bridge::from_figure(session, figure, input.model_id());
        // A statusline never fails because the bridge could not be written.
        let _ = metrics::write_bridge(&bridge);
    }
    let meter = meter::segment(&ctx).map(|s| style::paint(&s.text, s.style, ctx.colour));
    (render(&ctx), meter)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(json: &str) -> String {
        let input: StatuslineInput = serde_json::from_str(json).unwrap();
        let ctx = Context::new(&input, &Config::defaults(), 0, false);
        render(&ctx)
    }

    #[test]
    fn renders_every_segment() {
        let out = line(
            r#"{"model": {"display_name": "Opus 4.5"}, "workspace": {"current_dir": "/nonexistent/shop-api"}, "cost": {"total_cost_usd": 1.8342}, "context_window": {"remaining_percentage": 28, "used_percentage": 72}}"#,
        );
        assert_eq!(out, "Opus 4.5 │ shop-api │ ███████░░░ 72% │ $1.83");
    }

    #[test]
    fn no_figure_shows_dashes() {
        let out = line(
            r#"{"model": {"display_name": "Opus 4.5"}, "context_window": {"remaining_percentage": null}}"#,
        );
        assert_eq!(out, "Opus 4.5 │ ░░░░░░░░░░ --");
    }
}
