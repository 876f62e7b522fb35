//! The context over time as a standalone SVG: the size per turn as a line over a filled
//! area, the warning and critical thresholds as horizontal lines, each compaction as a
//! vertical line with its size before → after, labelled axes and a title. No scripts,
//! no external fonts or images; every piece of text is escaped.

use std::fmt::Write as _;

use super::{PointKind, Report};
use crate::util::text::short_tokens_exact;
use crate::util::text::thousands;

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 480.0;
const LEFT: f64 = 84.0;
const RIGHT: f64 = 28.0;
const TOP: f64 = 70.0;
const BOTTOM: f64 = 64.0;

/// Text made safe for SVG content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // XML 1.0 has no place for most control characters, escaped or not.
            c if c.is_control() && !matches!(c, '\t' | '\n') => {}
            c => out.push(c),
        }
    }
    out
}

/// A step of 1, 2 or 5 × 10^k that gives at most `most` ticks over `span`.
fn nice_step(span: f64, most: f64) -> f64 {
    let raw = (span / most).max(1.0);
    // A loop rather than log10/powf: those would make the binary load libm, a cost
    // every `baton statusline` process would pay at start for a chart it never draws.
    let mut magnitude = 1.0;
    while magnitude * 10.0 <= raw {
        magnitude *= 10.0;
    }
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * magnitude).find(|step| *step >= raw).unwrap_or(10.0 * magnitude)
}

struct Frame {
    turns: usize,
    max: f64,
}

impl Frame {
    fn plot_width(&self) -> f64 {
        WIDTH - LEFT - RIGHT
    }

    fn plot_height(&self) -> f64 {
        HEIGHT - TOP - BOTTOM
    }

    /// The x of a turn (0-based), in the middle of its slot.
    fn turn_x(&self, turn: usize) -> f64 {
        LEFT + self.plot_width() * (turn as f64 + 0.5) / self.turns.max(1) as f64
    }

    /// The x of a compaction after `turns` turns: the boundary between two slots.
    fn boundary_x(&self, turns: usize) -> f64 {
        LEFT + self.plot_width() * turns.min(self.turns) as f64 / self.turns.max(1) as f64
    }

    fn y(&self, tokens: f64) -> f64 {
        TOP + self.plot_height() * (1.0 - (tokens / self.max).min(1.0))
    }

    fn base(&self) -> f64 {
        TOP + self.plot_height()
    }
}

/// Renders the chart.
pub fn render(report: &Report) -> String {
    let series = report.series();
    let peak = series.iter().map(|p| p.tokens).max().unwrap_or(0);
    let frame = Frame { turns: report.timeline.len(), max: report.window_tokens.max(peak).max(1) as f64 };
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="12">"#
    );
    let session = report.session_id.as_deref().unwrap_or("unknown session");
    let _ = writeln!(svg, "<title>{}</title>", escape(&format!("Context over time, session {session}")));
    let _ = writeln!(
        svg,
        r##"<rect class="background" x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>"##
    );
    let _ = writeln!(
        svg,
        r##"<text class="title" x="{LEFT}" y="28" font-size="18" font-weight="600" fill="#1f2328">{}</text>"##,
        escape(&format!("Context per turn: session {session}"))
    );
    let subtitle = format!(
        "{} · window {} tokens · {} turns · {} compaction{}",
        report.model.as_deref().unwrap_or("unknown model"),
        thousands(report.window_tokens),
        thousands(report.timeline.len() as u64),
        report.compactions.len(),
        if report.compactions.len() == 1 { "" } else { "s" }
    );
    let _ = writeln!(
        svg,
        r##"<text class="subtitle" x="{LEFT}" y="48" fill="#57606a">{}</text>"##,
        escape(&subtitle)
    );

    // Y grid and labels.
    let step = nice_step(frame.max, 6.0);
    let mut tick = 0.0;
    while tick <= frame.max + 0.5 {
        let y = frame.y(tick);
        let _ = writeln!(
            svg,
            r##"<line class="grid" x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#eaeef2"/>"##,
            LEFT + frame.plot_width()
        );
        let _ = writeln!(
            svg,
            r##"<text class="y-label" x="{:.1}" y="{:.1}" text-anchor="end" fill="#57606a">{}</text>"##,
            LEFT - 8.0,
            y + 4.0,
            escape(&short_tokens_exact(tick as u64))
        );
        tick += step;
    }

    // The context as an area under a line.
    let mut points: Vec<(f64, f64)> = Vec::with_capacity(series.len());
    for point in &series {
        let x = match point.kind {
            PointKind::Turn(turn) => frame.turn_x(turn),
            PointKind::Compaction { index, .. } => frame.boundary_x(report.compactions[index].after_turn),
        };
        points.push((x, frame.y(point.tokens as f64)));
    }
    if let (Some(first), Some(last)) = (points.first(), points.last()) {
        let line: Vec<String> = points.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ = writeln!(
            svg,
            r##"<path class="context-area" d="M{:.1},{:.1} L{} L{:.1},{:.1} Z" fill="#0969da" fill-opacity="0.12"/>"##,
            first.0,
            frame.base(),
            line.join(" L"),
            last.0,
            frame.base()
        );
        let _ = writeln!(
            svg,
            r##"<polyline class="context-line" points="{}" fill="none" stroke="#0969da" stroke-width="2" stroke-linejoin="round"/>"##,
            line.join(" ")
        );
        if report.timeline.len() <= 80 {
            for (point, (x, y)) in series.iter().zip(&points) {
                if let PointKind::Turn(turn) = point.kind {
                    let _ = writeln!(
                        svg,
                        r##"<circle class="turn" cx="{x:.1}" cy="{y:.1}" r="2.5" fill="#0969da"><title>{}</title></circle>"##,
                        escape(&format!("turn {}: {} tokens", turn + 1, thousands(point.tokens)))
                    );
                }
            }
        }
    } else {
        let _ = writeln!(
            svg,
            r##"<text class="empty" x="{:.1}" y="{:.1}" text-anchor="middle" fill="#57606a">no replies in this transcript</text>"##,
            LEFT + frame.plot_width() / 2.0,
            TOP + frame.plot_height() / 2.0
        );
    }

    // Thresholds.
    let thresholds = &report.thresholds;
    for (class, tokens, used, colour) in [
        ("warning", thresholds.warning_tokens, thresholds.warning_used_percent, "#bf8700"),
        ("critical", thresholds.critical_tokens, thresholds.critical_used_percent, "#cf222e"),
    ] {
        let y = frame.y(tokens as f64);
        let _ = writeln!(
            svg,
            r#"<line class="threshold {class}" x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{colour}" stroke-width="1.5" stroke-dasharray="6 4"/>"#,
            LEFT + frame.plot_width()
        );
        // On the left, where a session's context is usually still low.
        let _ = writeln!(
            svg,
            r#"<text class="threshold-label {class}" x="{:.1}" y="{:.1}" fill="{colour}">{}</text>"#,
            LEFT + 6.0,
            y - 5.0,
            escape(&format!(
                "{class} at {} % used ({})",
                crate::metrics::format_pct(used),
                thousands(tokens)
            ))
        );
    }

    // Compactions.
    for (i, c) in report.compactions.iter().enumerate() {
        let x = frame.boundary_x(c.after_turn);
        let size = |t: Option<u64>| t.map(thousands).unwrap_or_else(|| "?".into());
        let label = format!(
            "{} {} → {}",
            c.trigger.as_deref().unwrap_or("compaction"),
            size(c.pre_tokens),
            size(c.post_tokens)
        );
        let _ = writeln!(
            svg,
            r##"<line class="compaction" x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#8250df" stroke-width="1.5"/>"##,
            frame.base()
        );
        // Labels alternate in height so neighbours do not overlap.
        let y = TOP + 14.0 + (i % 3) as f64 * 14.0;
        let anchor = if x > LEFT + frame.plot_width() * 0.75 { "end" } else { "start" };
        let dx = if anchor == "end" { -4.0 } else { 4.0 };
        let _ = writeln!(
            svg,
            r##"<text class="compaction-label" x="{:.1}" y="{y:.1}" text-anchor="{anchor}" fill="#8250df">{}</text>"##,
            x + dx,
            escape(&label)
        );
    }

    // Axes, ticks and titles.
    let _ = writeln!(
        svg,
        r##"<line class="axis x-axis" x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#57606a"/>"##,
        frame.base(),
        LEFT + frame.plot_width(),
        frame.base()
    );
    let _ = writeln!(
        svg,
        r##"<line class="axis y-axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{:.1}" stroke="#57606a"/>"##,
        frame.base()
    );
    if frame.turns > 0 {
        let step = nice_step(frame.turns as f64, 12.0) as usize;
        let mut turn = 1;
        while turn <= frame.turns {
            let x = frame.turn_x(turn - 1);
            let _ = writeln!(
                svg,
                r##"<text class="x-label" x="{x:.1}" y="{:.1}" text-anchor="middle" fill="#57606a">{turn}</text>"##,
                frame.base() + 18.0
            );
            turn = if turn == 1 && step > 1 { step } else { turn + step.max(1) };
        }
    }
    let _ = writeln!(
        svg,
        r##"<text class="axis-title" x="{:.1}" y="{:.1}" text-anchor="middle" fill="#1f2328">turn (main-conversation reply)</text>"##,
        LEFT + frame.plot_width() / 2.0,
        HEIGHT - 18.0
    );
    let _ = writeln!(
        svg,
        r##"<text class="axis-title" x="20" y="{:.1}" text-anchor="middle" fill="#1f2328" transform="rotate(-90 20 {:.1})">tokens in context</text>"##,
        TOP + frame.plot_height() / 2.0,
        TOP + frame.plot_height() / 2.0
    );
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::usage_from_bytes;

    #[test]
    fn escaping() {
        assert_eq!(escape(r#"<a href="x">'&'</a>"#), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
        assert_eq!(escape("a\u{1b}[31mb"), "a[31mb");
    }

    #[test]
    fn tick_steps() {
        assert_eq!(nice_step(200_000.0, 6.0), 50_000.0);
        assert_eq!(nice_step(8.0, 12.0), 1.0);
        assert_eq!(nice_step(130.0, 12.0), 20.0);
    }

    #[test]
    fn fixture_chart() {
        let usage = usage_from_bytes(include_bytes!("../../tests/fixtures/transcript.jsonl"));
        let report = Report::build(
            &usage,
            "t",
            Some("<script>alert(1)</script>".into()),
            &crate::report::Sizing::default(),
        );
        let svg = render(&report);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.contains(r#"class="threshold warning""#));
        assert!(svg.contains(r#"class="threshold critical""#));
        assert!(svg.contains(r#"class="compaction""#));
        assert!(svg.contains("auto 167,400 → 41,800"));
        assert!(svg.contains("warning at 65 % used (130,000)"));
        assert!(!svg.contains("<script"), "text is escaped");
        assert_eq!(svg.matches("<circle").count(), 8);
        // y = 130,000 of 200,000 in a 346-pixel plot starting at 70.
        let warning_y = 70.0 + 346.0 * (1.0 - 0.65);
        assert!(svg.contains(&format!(r#"y1="{warning_y:.1}""#)), "{svg}");
    }

    #[test]
    fn an_empty_session_draws_axes_and_a_note() {
        let report = Report::build(&Default::default(), "t", None, &crate::report::Sizing::default());
        let svg = render(&report);
        assert!(svg.contains("no replies in this transcript"));
        assert!(svg.contains(r#"class="threshold critical""#));
        assert!(svg.ends_with("</svg>\n"));
    }
}
