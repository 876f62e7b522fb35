//! Fitting the line into the terminal's width (`COLUMNS`): the lowest-priority segments
//! are shortened or dropped first. Works on the plain text of each segment, before any
//! colour is added, so a cut can never land inside an ANSI escape.

use super::Style;

/// The separator between segments and its display width.
pub const SEPARATOR: &str = " │ ";
const SEPARATOR_WIDTH: usize = 3;

/// One segment as laid out.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub text: String,
    pub style: Style,
    /// Lower goes first when the line is too wide.
    pub priority: u8,
    /// The segment may be cut (with `…`) down to this width before it is dropped.
    pub min_width: Option<usize>,
    /// A shorter form to use before dropping it (the meter's bare percentage).
    pub short: Option<String>,
}

pub use crate::util::text::{cut, width};

fn line_width(parts: &[Part], kept: &[bool]) -> usize {
    let widths: Vec<usize> =
        parts.iter().zip(kept).filter(|(_, k)| **k).map(|(p, _)| width(&p.text)).collect();
    widths.iter().sum::<usize>() + SEPARATOR_WIDTH * widths.len().saturating_sub(1)
}

/// Shortens or drops parts, lowest priority first (the rightmost of equal priority
/// first), until the line fits in `columns`. The last part standing is never dropped:
/// it is cut to fit instead.
pub fn fit(parts: &mut Vec<Part>, columns: usize) {
    let mut kept = vec![true; parts.len()];
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&i| (parts[i].priority, std::cmp::Reverse(i)));
    for i in order {
        let total = line_width(parts, &kept);
        if total <= columns {
            break;
        }
        let excess = total - columns;
        let part = &mut parts[i];
        let current = width(&part.text);
        if let Some(min) = part.min_width {
            if current >= excess + min {
                part.text = cut(&part.text, current - excess);
                break;
            }
        }
        if let Some(short) = &part.short {
            if current >= excess + width(short) {
                part.text = short.clone();
                break;
            }
        }
        if kept.iter().filter(|k| **k).count() > 1 {
            kept[i] = false;
            continue;
        }
        if let Some(short) = part.short.take() {
            part.text = short;
        }
        part.text = cut(&part.text, columns);
    }
    let mut flags = kept.into_iter();
    parts.retain(|_| flags.next().unwrap_or(false));
}

/// The plain width of the joined line.
#[cfg(test)]
fn joined_width(parts: &[Part]) -> usize {
    line_width(parts, &vec![true; parts.len()])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(text: &str, priority: u8, min_width: Option<usize>) -> Part {
        Part { text: text.into(), style: Style::Dim, priority, min_width, short: None }
    }

    fn texts(parts: &[Part]) -> Vec<&str> {
        parts.iter().map(|p| p.text.as_str()).collect()
    }

    #[test]
    fn lowest_priority_goes_first() {
        let mut parts = vec![
            part("Opus 4.5", 70, None),
            part("shop-api", 50, Some(8)),
            part("feat/rate-limit", 60, Some(10)),
            part("+1 ~1 ?1", 40, None),
            part("Wiring the limiter into the orders routes", 20, Some(12)),
            Part { short: Some("72%".into()), ..part("███████░░░ 72%", 100, None) },
            part("$1.83", 30, None),
        ];
        fit(&mut parts, 40);
        assert_eq!(texts(&parts), vec!["Opus 4.5", "feat/rate-l…", "███████░░░ 72%"]);
        assert_eq!(joined_width(&parts), 40);
    }

    #[test]
    fn a_shrinkable_part_is_cut_when_that_is_enough() {
        let mut parts = vec![part("Opus 4.5", 70, None), part("Writing the parser for tiers", 20, Some(12))];
        fit(&mut parts, 30);
        assert_eq!(texts(&parts), vec!["Opus 4.5", "Writing the parser…"]);
        assert_eq!(joined_width(&parts), 30);
    }

    #[test]
    fn the_last_part_is_shortened_never_dropped() {
        let mut parts = vec![
            part("Opus 4.5", 70, None),
            Part { short: Some("72%".into()), ..part("███████░░░ 72%", 100, None) },
        ];
        fit(&mut parts, 5);
        assert_eq!(texts(&parts), vec!["72%"]);
        let mut parts = vec![part("a very long only part", 10, None)];
        fit(&mut parts, 6);
        assert_eq!(texts(&parts), vec!["a ver…"]);
    }

    #[test]
    fn a_line_that_fits_is_left_alone() {
        let mut parts = vec![part("Opus 4.5", 70, None), part("$1.83", 30, None)];
        let before = parts.clone();
        fit(&mut parts, 16);
        assert_eq!(parts, before);
    }
}
