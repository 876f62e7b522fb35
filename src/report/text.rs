//! The report for people: a few aligned sections, numbers with thousands separators,
//! the context as a sparkline. Colour only when asked (the caller checks the terminal
//! and `NO_COLOR`).

use std::fmt::Write as _;

use super::{PointKind, Report, UsageRow, sparkline};
use crate::util::text::thousands;
use crate::util::text::{cut, outside, width};

/// Widest sparkline drawn, in characters.
pub const SPARKLINE_MAX: usize = 100;
/// Longest tool input shown, in columns.
const INPUT_MAX: usize = 72;

struct Painter {
    colour: bool,
}

impl Painter {
    fn paint(&self, text: &str, code: &str) -> String {
        crate::util::text::paint(text, code, self.colour)
    }

    fn heading(&self, text: &str) -> String {
        self.paint(text, "1")
    }

    fn dim(&self, text: &str) -> String {
        self.paint(text, "2")
    }
}

fn percent(share: f64) -> String {
    format!("{:.1} %", share * 100.0)
}

/// A table with the first column left-aligned and the others right-aligned.
fn table(rows: &[Vec<String>], indent: &str) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| width(s)).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::from(indent);
        for (c, cell) in row.iter().enumerate() {
            let pad = " ".repeat(widths[c].saturating_sub(width(cell)));
            if c == 0 {
                line.push_str(cell);
                line.push_str(&pad);
            } else {
                line.push_str("  ");
                line.push_str(&pad);
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn usage_cells(name: String, row: &UsageRow) -> Vec<String> {
    vec![
        name,
        thousands(row.replies),
        thousands(row.input),
        thousands(row.cache_creation),
        thousands(row.cache_read),
        thousands(row.output),
        thousands(row.total),
    ]
}

/// Renders the report. `columns` bounds the sparkline's width.
pub fn render(report: &Report, colour: bool, columns: usize) -> String {
    let p = Painter { colour };
    let mut out = String::new();
    // Every name below comes from the transcript: shown with its control characters
    // escaped, before any width is measured.
    let session = outside(report.session_id.as_deref().unwrap_or("(unknown session)"));
    let _ = writeln!(out, "{}", p.heading(&format!("Session {session}")));
    let mut facts: Vec<(&str, String)> = vec![(
        "transcript",
        format!(
            "{} ({} lines, {} bytes)",
            outside(&report.transcript),
            thousands(report.read.lines),
            thousands(report.read.bytes)
        ),
    )];
    facts.push(("model", outside(report.model.as_deref().unwrap_or("unknown")).to_string()));
    let context = match &report.context {
        Some(c) => {
            let code = match c.level {
                "critical" => "1;31",
                "warning" => "33",
                _ => "32",
            };
            let level =
                if c.level == "normal" { String::new() } else { format!(", {}", c.level.to_uppercase()) };
            p.paint(
                &format!(
                    "{} tokens ({:.1} % of {}{level})",
                    thousands(c.tokens),
                    c.percent_of_window,
                    thousands(report.window_tokens)
                ),
                code,
            )
        }
        None => "unknown (no reply yet)".into(),
    };
    facts.push(("context now", context));
    facts.push((
        "levels",
        format!(
            "warning at {} ({} % used), critical at {} ({} % used)",
            thousands(report.thresholds.warning_tokens),
            crate::metrics::format_pct(report.thresholds.warning_used_percent),
            thousands(report.thresholds.critical_tokens),
            crate::metrics::format_pct(report.thresholds.critical_used_percent)
        ),
    ));
    let label_width = facts.iter().map(|(label, _)| label.len()).max().unwrap_or(0);
    for (label, value) in &facts {
        let _ = writeln!(out, "  {}  {value}", p.dim(&format!("{label:<label_width$}")));
    }

    let _ = writeln!(out, "\n{}", p.heading("Tokens (each reply counted once)"));
    let tokens = &report.tokens;
    if tokens.models.is_empty() {
        out.push_str("  no replies with usage\n");
    } else {
        let mut rows = vec![
            ["model", "replies", "input", "cache write", "cache read", "output", "total"]
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>(),
        ];
        for model in &tokens.models {
            rows.push(usage_cells(outside(&model.model).to_string(), &model.main));
            if model.sidechain.replies > 0 {
                rows.push(usage_cells("  subagents".into(), &model.sidechain));
            }
        }
        if tokens.models.len() > 1 || tokens.sidechain.replies > 0 {
            rows.push(usage_cells("all".into(), &tokens.total));
        }
        let text = table(&rows, "  ");
        let mut lines = text.lines();
        if let Some(header) = lines.next() {
            let _ = writeln!(out, "{}", p.dim(header));
        }
        for line in lines {
            let _ = writeln!(out, "{line}");
        }
        let shares: Vec<String> =
            [("main chain", &tokens.main), ("subagents", &tokens.sidechain), ("all", &tokens.total)]
                .iter()
                .filter(|(_, row)| row.replies > 0)
                .filter_map(|(name, row)| row.cache_read_share.map(|s| format!("{name} {}", percent(s))))
                .collect();
        if !shares.is_empty() {
            let _ = writeln!(out, "  cache reads / input tokens: {}", shares.join(", "));
        }
    }

    let _ = writeln!(out, "\n{}", p.heading(&format!("Compactions: {}", report.compactions.len())));
    for (i, c) in report.compactions.iter().enumerate() {
        let size = |t: Option<u64>| t.map(thousands).unwrap_or_else(|| "?".into());
        let at = c.at.as_deref().map(|t| format!(", {}", outside(t))).unwrap_or_default();
        let predicted = match (c.predicted_at, c.prediction_error_pct) {
            (Some(p), Some(e)) => format!("; predicted at {} ({e:+.1} % of the window)", thousands(p)),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  {}. {} {} → {} tokens (after turn {}{at}){predicted}",
            i + 1,
            outside(c.trigger.as_deref().unwrap_or("?")),
            size(c.pre_tokens),
            size(c.post_tokens),
            c.after_turn
        );
    }
    for audit in &report.compaction_audits {
        let dropped: Vec<String> = audit.dropped.iter().map(|f| format!("“{}”", outside(&f.text))).collect();
        let dropped =
            if dropped.is_empty() { String::new() } else { format!("; dropped {}", dropped.join(", ")) };
        let _ = writeln!(out, "  audit {}: {}{dropped}", outside(&audit.at), audit.words());
    }

    let series = report.series();
    let _ = writeln!(
        out,
        "\n{}",
        p.heading(&format!(
            "Context per turn ({} turns; scale 0 to {}{})",
            thousands(report.timeline.len() as u64),
            thousands(report.window_tokens),
            if report.compactions.is_empty() { "" } else { "; ^ compaction" }
        ))
    );
    if series.is_empty() {
        out.push_str("  no turns yet\n");
    } else {
        let values: Vec<u64> = series.iter().map(|point| point.tokens).collect();
        let (line, ranges) =
            sparkline(&values, report.window_tokens, columns.saturating_sub(4).clamp(10, SPARKLINE_MAX));
        let _ = writeln!(out, "  {line}");
        let marks: String = ranges
            .iter()
            .map(|range| {
                let compaction = series[range.clone()]
                    .iter()
                    .any(|point| matches!(point.kind, PointKind::Compaction { before: true, .. }));
                if compaction { '^' } else { ' ' }
            })
            .collect();
        if marks.contains('^') {
            let _ = writeln!(out, "  {}", marks.trim_end());
        }
        let peak = values.iter().copied().max().unwrap_or(0);
        let _ = writeln!(out, "  {}", p.dim(&format!("peak {} tokens", thousands(peak))));
    }

    let _ = writeln!(out, "\n{}", p.heading("Largest tool results (tokens estimated as bytes / 4)"));
    if report.largest_tool_results.is_empty() {
        out.push_str("  none\n");
    } else {
        let mut rows = vec![vec!["tokens".to_string(), "tool".to_string(), "input".to_string()]];
        for result in &report.largest_tool_results {
            let mut tool = outside(result.tool.as_deref().unwrap_or("?")).to_string();
            if result.sidechain {
                tool.push_str(" (subagent)");
            }
            rows.push(vec![
                thousands(result.estimated_tokens),
                tool,
                cut(&outside(result.input.as_deref().unwrap_or("")).to_string(), INPUT_MAX),
            ]);
        }
        // Tokens right-aligned, tool and input left-aligned.
        let token_width = rows.iter().map(|r| width(&r[0])).max().unwrap_or(0);
        let tool_width = rows.iter().map(|r| width(&r[1])).max().unwrap_or(0);
        for (i, row) in rows.iter().enumerate() {
            let line = format!(
                "  {}{}  {}{}  {}",
                " ".repeat(token_width - width(&row[0])),
                row[0],
                row[1],
                " ".repeat(tool_width - width(&row[1])),
                row[2]
            );
            let line = line.trim_end();
            let _ = writeln!(out, "{}", if i == 0 { p.dim(line) } else { line.to_string() });
        }
    }
    let read = &report.read;
    if read.unreadable + read.oversized > 0 {
        let _ = writeln!(
            out,
            "\n{}",
            p.dim(&format!(
                "({} unreadable and {} oversized lines were skipped)",
                thousands(read.unreadable),
                thousands(read.oversized)
            ))
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::usage_from_bytes;

    fn fixture_text(colour: bool) -> String {
        let usage = usage_from_bytes(include_bytes!("../../tests/fixtures/transcript.jsonl"));
        let report =
            Report::build(&usage, "t.jsonl", Some("7f3c2a10".into()), &crate::report::Sizing::default());
        render(&report, colour, 80)
    }

    #[test]
    fn fixture_text_has_the_figures() {
        let text = fixture_text(false);
        for needle in [
            "Session 7f3c2a10",
            "claude-opus-4-5-20251101",
            "144,012 tokens (72.0 % of 200,000, WARNING)",
            "warning at 130,000 (65 % used), critical at 150,000 (75 % used)",
            "Compactions: 1",
            "1. auto 167,400 → 41,800 tokens (after turn 5, 2026-11-28T10:00:14.000Z)",
            "▁▁▁▂▂▇▂▂▅▆",
            "       ^",
            "cache reads / input tokens: main chain 96.2 %, subagents 83.3 %, all 92.4 %",
            "  16  Edit       /home/dev/shop-api/src/routes/orders.ts",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in\n{text}");
        }
        assert!(!text.contains('\x1b'));
        // The token table's columns line up: every row is as wide as the header.
        let rows: Vec<&str> = text.lines().skip_while(|l| !l.contains("replies")).take(4).collect();
        assert_eq!(rows.len(), 4, "{text}");
        assert!(rows[1].ends_with("438,004"), "{rows:?}");
        assert!(rows[2].starts_with("    subagents") && rows[2].ends_with("180,910"), "{rows:?}");
        assert!(rows[3].starts_with("  all") && rows[3].ends_with("618,914"), "{rows:?}");
        let widths: Vec<usize> = rows.iter().map(|r| width(r)).collect();
        assert!(widths.iter().all(|w| *w == widths[0]), "{rows:#?}");
    }

    #[test]
    fn colour_is_optional() {
        assert!(fixture_text(true).contains("\x1b[33m144,012 tokens"));
    }

    #[test]
    fn an_empty_session_still_reads() {
        let report = Report::build(&Default::default(), "t", None, &crate::report::Sizing::default());
        let text = render(&report, false, 80);
        assert!(text.contains("context now  unknown"), "{text}");
        assert!(text.contains("no turns yet"), "{text}");
    }
}
