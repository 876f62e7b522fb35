//! The relay as a standalone SVG, beside the session chart (`report::svg`): the context
//! over time, one band per leg with why it ended, the hand-overs between legs and the
//! waits shaded. No scripts, no external fonts or images; every piece of text is escaped.

use std::fmt::Write as _;

use super::{RelayReport, seconds_between};
use crate::report::svg::escape;
use crate::util::text::short_tokens;

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 480.0;
const LEFT: f64 = 84.0;
const RIGHT: f64 = 28.0;
const TOP: f64 = 70.0;
const BOTTOM: f64 = 70.0;

/// One point of the chart: seconds from the relay's start (or the reply's position when
/// the transcripts give no times), tokens.
struct Plot {
    leg: usize,
    x: f64,
    tokens: u64,
}

/// A step of 1, 2 or 5 × 10^k giving at most `most` ticks over `span`.
fn nice_step(span: f64, most: f64) -> f64 {
    let raw = (span / most).max(1e-9);
    let mut magnitude = 1.0;
    while magnitude * 10.0 <= raw {
        magnitude *= 10.0;
    }
    while magnitude > raw {
        magnitude /= 10.0;
    }
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * magnitude).find(|step| *step >= raw).unwrap_or(10.0 * magnitude)
}

/// Renders the chart.
pub fn render(report: &RelayReport) -> String {
    let origin = report.legs.iter().find_map(|l| l.started_at.clone());
    let timed = origin.is_some()
        && report
            .legs
            .iter()
            .all(|l| l.context.iter().all(|p| seconds_between(origin.as_deref(), p.at.as_deref()).is_some()));
    let mut points = vec![];
    let mut spans = vec![];
    let mut position = 0.0;
    for (index, leg) in report.legs.iter().enumerate() {
        let at = |t: Option<&str>| seconds_between(origin.as_deref(), t);
        let start = if timed { at(leg.started_at.as_deref()).unwrap_or(position) } else { position };
        for p in &leg.context {
            let x = if timed { at(p.at.as_deref()).unwrap_or(position) } else { position + 1.0 };
            position = x;
            points.push(Plot { leg: index, x, tokens: p.tokens });
        }
        let end = if timed { at(leg.ended_at.as_deref()).unwrap_or(position) } else { position };
        position = position.max(end);
        spans.push((start, end.max(start)));
        if !timed {
            position += 1.0;
        }
    }
    let x_max = spans.iter().map(|s| s.1).chain(points.iter().map(|p| p.x)).fold(1.0_f64, f64::max);
    let peak = points.iter().map(|p| p.tokens).max().unwrap_or(0);
    // The window, where the hook's % and the transcript's tokens of one leg give it.
    let window = report
        .legs
        .iter()
        .filter_map(|l| {
            Some((l.peak_tokens? as f64) * 100.0 / f64::from(l.peak_used_pct.filter(|p| *p > 0)?))
        })
        .fold(0.0_f64, f64::max);
    let y_max = (peak as f64).max(window).max(1.0);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let x = |v: f64| LEFT + plot_w * (v / x_max).clamp(0.0, 1.0);
    let y = |t: f64| TOP + plot_h * (1.0 - (t / y_max).min(1.0));

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, "<title>{}</title>", escape(&format!("Relay {}: context over time", report.run)));
    let _ = writeln!(
        svg,
        r##"<rect class="background" x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>"##
    );
    let _ = writeln!(
        svg,
        r##"<text class="title" x="{LEFT}" y="28" font-size="18" font-weight="600" fill="#1f2328">{}</text>"##,
        escape(&format!("Relay {}: context over time", report.run))
    );
    let subtitle = format!(
        "{} leg{} · {} repeated step{} ({} with a side effect){}",
        report.legs.len(),
        if report.legs.len() == 1 { "" } else { "s" },
        report.repeated_steps,
        if report.repeated_steps == 1 { "" } else { "s" },
        report.repeated_side_effects,
        report.seconds.map(|s| format!(" · {}", super::text::duration(s))).unwrap_or_default()
    );
    let _ = writeln!(
        svg,
        r##"<text class="subtitle" x="{LEFT}" y="48" fill="#57606a">{}</text>"##,
        escape(&subtitle)
    );

    // Leg bands and their labels; the hand-overs between them.
    for (index, (leg, (start, end))) in report.legs.iter().zip(&spans).enumerate() {
        let fill = if index % 2 == 0 { "#f6f8fa" } else { "#eef2f7" };
        let (x0, x1) = (x(*start), x(*end).max(x(*start) + 1.0));
        let _ = writeln!(
            svg,
            r##"<rect class="leg" data-leg="{}" x="{x0:.1}" y="{TOP}" width="{:.1}" height="{plot_h}" fill="{fill}"/>"##,
            leg.leg,
            x1 - x0
        );
        let _ = writeln!(
            svg,
            r##"<text class="leg-label" x="{:.1}" y="{:.1}" fill="#1f2328" font-weight="600">{}</text>"##,
            x0 + 4.0,
            TOP + 14.0,
            escape(&format!("leg {}", leg.leg))
        );
        let _ = writeln!(
            svg,
            r##"<text class="leg-end" x="{:.1}" y="{:.1}" fill="#57606a" font-size="11">{}</text>"##,
            x0 + 4.0,
            TOP + 28.0,
            escape(&leg.ended_because)
        );
        if let (Some(next), Some(gap)) = (spans.get(index + 1), leg.hand_over_seconds) {
            let (g0, g1) = (x(*end), x(next.0));
            let _ = writeln!(
                svg,
                r##"<rect class="hand-over" x="{g0:.1}" y="{TOP}" width="{:.1}" height="{plot_h}" fill="#fff1c2"/>"##,
                (g1 - g0).max(1.0)
            );
            let _ = writeln!(
                svg,
                r##"<text class="hand-over-label" x="{g0:.1}" y="{:.1}" fill="#7d4e00" font-size="11">{}</text>"##,
                HEIGHT - BOTTOM + 32.0,
                escape(&format!("hand-over {}", super::text::duration(gap)))
            );
        }
    }

    // The waits between legs (usage limit, backoff), over the hand-overs.
    if timed {
        for wait in report.legs.iter().flat_map(|l| &l.waits) {
            let from = seconds_between(origin.as_deref(), wait.started_at.as_deref());
            let to = seconds_between(origin.as_deref(), wait.ended_at.as_deref());
            let (Some(from), Some(to)) = (from, to) else { continue };
            let (w0, w1) = (x(from), x(to));
            let _ = writeln!(
                svg,
                r##"<rect class="wait" x="{w0:.1}" y="{TOP}" width="{:.1}" height="{plot_h}" fill="#ffd8d3"/>"##,
                (w1 - w0).max(1.0)
            );
            let _ = writeln!(
                svg,
                r##"<text class="wait-label" x="{w0:.1}" y="{:.1}" fill="#a40e26" font-size="11">{}</text>"##,
                HEIGHT - BOTTOM + 46.0,
                escape(&format!(
                    "wait {} ({})",
                    super::text::duration(wait.seconds),
                    wait.why.replace('_', " ")
                ))
            );
        }
    }

    // Y grid.
    let step = nice_step(y_max, 6.0);
    let mut tick = 0.0;
    while tick <= y_max + 0.5 {
        let ty = y(tick);
        let _ = writeln!(
            svg,
            r##"<line class="grid" x1="{LEFT}" y1="{ty:.1}" x2="{:.1}" y2="{ty:.1}" stroke="#d0d7de" stroke-width="1"/>"##,
            WIDTH - RIGHT
        );
        let _ = writeln!(
            svg,
            r##"<text class="y-tick" x="{:.1}" y="{:.1}" text-anchor="end" fill="#57606a">{}</text>"##,
            LEFT - 8.0,
            ty + 4.0,
            escape(&short_tokens(tick as u64))
        );
        tick += step;
    }
    let _ = writeln!(
        svg,
        r##"<text class="y-label" x="20" y="{:.1}" transform="rotate(-90 20 {:.1})" text-anchor="middle" fill="#57606a">context (tokens)</text>"##,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0
    );
    let x_label = if timed { "seconds since the relay started" } else { "replies" };
    let _ = writeln!(
        svg,
        r##"<text class="x-label" x="{:.1}" y="{:.1}" text-anchor="middle" fill="#57606a">{x_label}</text>"##,
        LEFT + plot_w / 2.0,
        HEIGHT - 12.0
    );
    let xstep = nice_step(x_max, 8.0).max(1.0);
    let mut xt = 0.0;
    while xt <= x_max + 1e-9 {
        let _ = writeln!(
            svg,
            r##"<text class="x-tick" x="{:.1}" y="{:.1}" text-anchor="middle" fill="#57606a">{}</text>"##,
            x(xt),
            HEIGHT - BOTTOM + 16.0,
            xt.round()
        );
        xt += xstep;
    }

    // The context line of each leg.
    for index in 0..report.legs.len() {
        let leg_points: Vec<&Plot> = points.iter().filter(|p| p.leg == index).collect();
        if leg_points.is_empty() {
            continue;
        }
        let path: Vec<String> =
            leg_points.iter().map(|p| format!("{:.1},{:.1}", x(p.x), y(p.tokens as f64))).collect();
        let _ = writeln!(
            svg,
            r##"<polyline class="context" data-leg="{}" points="{}" fill="none" stroke="#0969da" stroke-width="2"/>"##,
            report.legs[index].leg,
            path.join(" ")
        );
        for p in leg_points {
            let _ = writeln!(
                svg,
                r##"<circle class="reply" cx="{:.1}" cy="{:.1}" r="2.5" fill="#0969da"/>"##,
                x(p.x),
                y(p.tokens as f64)
            );
        }
    }
    let _ = writeln!(svg, "</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_nice() {
        assert_eq!(nice_step(100.0, 5.0), 20.0);
        assert_eq!(nice_step(1_000_000.0, 6.0), 200_000.0);
        assert_eq!(nice_step(3.0, 8.0), 0.5);
    }
}
