//! The Task Summary in the issue body: a block between `<!-- baton:summary:start -->` and
//! `<!-- baton:summary:end -->` that each push replaces; the rest of the body is never
//! touched.
//!
//! A Task Summary written by a person or an agent without baton's markers (a "Task
//! Summary" heading, any level or bold, followed by Goal, Status, Stage, Next, Updated At,
//! Issue #, Key Paths in any form [`fields`] reads) is read too, but never rewritten:
//! baton's block is added beside it and the person's text stays as it is.
//!
//! Markers missing: the block is appended. Markers duplicated, unpaired or out of order
//! (someone edited the body by hand): an error, never a repair. Guessing which of two
//! blocks is baton's could delete text a person wrote, so the person fixes the body and
//! pushes again.

use serde::Serialize;

use super::fields::{self, FieldValue, parse_time};
use super::record::BODY_LIMIT;
use super::state::{GOAL_MAX, ITEM_MAX, NEXT_MAX, STAGE_MAX, STATUS_MAX};
use crate::util::text::one_line;

pub const START: &str = "<!-- baton:summary:start -->";
pub const END: &str = "<!-- baton:summary:end -->";

/// How many key paths the body shows (the records carry them all).
pub const BODY_PATHS: usize = 30;

/// What the summary block says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    pub goal: String,
    pub status: String,
    pub stage: String,
    pub next: String,
    pub updated_at: String,
    pub issue: Option<u64>,
    pub key_paths: Vec<String>,
}

/// Where the markers are.
#[derive(Debug, Clone, PartialEq)]
pub enum Markers {
    Missing,
    /// Byte range of the whole block, markers included.
    Block(std::ops::Range<usize>),
    /// What is wrong with them.
    Broken(BrokenMarkers),
}

/// What is wrong with the markers of a body's block.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BrokenMarkers {
    #[error("the end marker comes before the start marker")]
    EndFirst,
    #[error(
        "{starts} start marker(s) `{START}` and {ends} end marker(s) `{END}` (there must be one of each, or none)"
    )]
    Count { starts: usize, ends: usize },
}

/// Byte ranges of the HTML comments whose text is `name` (spacing tolerated).
fn comments_named(body: &str, name: &str) -> Vec<std::ops::Range<usize>> {
    let mut found = vec![];
    let mut from = 0;
    while let Some(open) = body[from..].find("<!--").map(|i| i + from) {
        let Some(close) = body[open + 4..].find("-->").map(|i| i + open + 4) else { break };
        if body[open + 4..close].trim() == name {
            found.push(open..close + 3);
        }
        from = close + 3;
    }
    found
}

/// Finds the block.
pub fn markers(body: &str) -> Markers {
    let starts = comments_named(body, "baton:summary:start");
    let ends = comments_named(body, "baton:summary:end");
    match (starts.as_slice(), ends.as_slice()) {
        ([], []) => Markers::Missing,
        ([start], [end]) if start.end <= end.start => Markers::Block(start.start..end.end),
        ([_], [_]) => Markers::Broken(BrokenMarkers::EndFirst),
        _ => Markers::Broken(BrokenMarkers::Count { starts: starts.len(), ends: ends.len() }),
    }
}

/// The block, markers included.
pub fn render(summary: &Summary) -> String {
    let mut fields = vec![
        ("Goal", FieldValue::Text(summary.goal.clone())),
        ("Status", FieldValue::Text(summary.status.clone())),
        ("Stage", FieldValue::Text(summary.stage.clone())),
        ("Next", FieldValue::Text(summary.next.clone())),
        ("Updated At", FieldValue::Text(summary.updated_at.clone())),
    ];
    if let Some(issue) = summary.issue {
        fields.push(("Issue #", FieldValue::Text(format!("#{issue}"))));
    }
    if !summary.key_paths.is_empty() {
        let shown: Vec<String> = summary.key_paths.iter().take(BODY_PATHS).cloned().collect();
        let more = summary.key_paths.len() - shown.len();
        fields.push(("Key Paths", FieldValue::List { items: shown, paths: true, more }));
    }
    let mut out = format!("{START}\n## Task Summary\n\n");
    for (label, value) in &fields {
        for line in fields::render(label, value) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out.push_str("\n<sub>Kept by `baton checkpoint push`: this block is replaced on each push; text outside the markers is yours.</sub>\n");
    out.push_str(END);
    out
}

/// The body with the block put in place of the old one, or appended.
pub fn splice(body: &str, block: &str) -> Result<String, BrokenMarkers> {
    match markers(body) {
        Markers::Block(range) => Ok(format!("{}{block}{}", &body[..range.start], &body[range.end..])),
        Markers::Missing if body.trim().is_empty() => Ok(format!("{block}\n")),
        Markers::Missing => Ok(format!("{}\n\n{block}\n", body.trim_end())),
        Markers::Broken(why) => Err(why),
    }
}

/// The summary in a body: `Ok(None)` when there is no block.
pub fn parse(body: &str) -> Result<Option<Summary>, BrokenMarkers> {
    let range = match markers(body) {
        Markers::Missing => return Ok(None),
        Markers::Broken(why) => return Err(why),
        Markers::Block(range) => range,
    };
    let parsed = fields::parse(body[range].lines());
    Ok(Some(from_fields(&parsed)))
}

/// Which Task Summary of the body was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SummaryForm {
    /// baton's block, between its markers.
    Baton,
    /// The body's own, written without baton's markers.
    Person,
}

/// The fields of a summary, bounded like everything read from GitHub.
fn from_fields(parsed: &fields::Parsed) -> Summary {
    let text = |label: &str, max: usize| one_line(&parsed.text(label).unwrap_or_default(), max);
    let issue =
        parsed.text("issue #").or_else(|| parsed.text("issue")).or_else(|| parsed.text("issue number"));
    Summary {
        goal: text("goal", GOAL_MAX),
        status: text("status", STATUS_MAX),
        stage: text("stage", STAGE_MAX),
        next: text("next", NEXT_MAX),
        updated_at: text("updated at", 64),
        issue: issue.and_then(|i| i.trim().trim_start_matches('#').parse().ok()),
        key_paths: parsed
            .items("key paths")
            .into_iter()
            .map(|p| one_line(&p, ITEM_MAX))
            .filter(|p| !p.is_empty() && !fields::means_nothing(p))
            .collect(),
    }
}

/// The Task Summary a person or agent wrote outside baton's block: the first "Task
/// Summary" section with at least two of its fields. `None` when there is none (or the
/// markers are broken: then nothing outside them can be told apart from baton's block).
pub fn parse_unmarked(body: &str) -> Option<Summary> {
    let body = match body.char_indices().nth(BODY_LIMIT) {
        Some((at, _)) => &body[..at],
        None => body,
    };
    let outside = match markers(body) {
        Markers::Missing => body.to_string(),
        Markers::Block(range) => format!("{}\n{}", &body[..range.start], &body[range.end..]),
        Markers::Broken(_) => return None,
    };
    let lines = fields::outside_fences(&outside);
    fields::sections(&lines, "Task Summary", &["Persistence Record"]).iter().find_map(|section| {
        let parsed = fields::parse(section.iter().copied());
        let known = ["goal", "status", "stage", "next", "updated at", "key paths"];
        (known.iter().filter(|l| parsed.has(l)).count() >= 2).then(|| from_fields(&parsed))
    })
}

/// The summary `pull` reads: baton's block or the body's own, whichever was updated
/// last by its Updated At (baton's when that does not tell), and why baton's block was
/// not usable, when it was not.
pub fn read(body: &str) -> (Option<(Summary, SummaryForm)>, Option<String>) {
    let (marked, problem) = match parse(body) {
        Ok(summary) => (summary, None),
        Err(why) => (None, Some(why.to_string())),
    };
    let unmarked = parse_unmarked(body);
    let chosen = match (marked, unmarked) {
        (Some(ours), Some(theirs)) => {
            let newer = matches!(
                (parse_time(&theirs.updated_at), parse_time(&ours.updated_at)),
                (Some(t), Some(o)) if t > o
            );
            if newer { Some((theirs, SummaryForm::Person)) } else { Some((ours, SummaryForm::Baton)) }
        }
        (Some(ours), None) => Some((ours, SummaryForm::Baton)),
        (None, Some(theirs)) => Some((theirs, SummaryForm::Person)),
        (None, None) => None,
    };
    (chosen, problem)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary() -> Summary {
        Summary {
            goal: "Add rate limiting".into(),
            status: "paused".into(),
            stage: "phase 03 (rate-limiting), plan 2, task 3/4".into(),
            next: "Continue: wire the limiter".into(),
            updated_at: "2026-11-30T05:00:00Z".into(),
            issue: Some(12),
            key_paths: vec!["src/limiter.ts".into()],
        }
    }

    #[test]
    fn the_block_round_trips() {
        let block = render(&summary());
        assert!(block.starts_with(START) && block.ends_with(END));
        assert_eq!(parse(&block).unwrap(), Some(summary()));
    }

    #[test]
    fn splicing_keeps_the_text_around_the_block() {
        let old = render(&Summary { next: "old".into(), ..summary() });
        let body = format!("Intro by a person.\r\n\r\n{old}\r\n\r\n## Notes\r\nkept\r\n");
        let new = render(&summary());
        let spliced = splice(&body, &new).unwrap();
        assert_eq!(spliced, format!("Intro by a person.\r\n\r\n{new}\r\n\r\n## Notes\r\nkept\r\n"));
        assert_eq!(parse(&spliced).unwrap().unwrap().next, "Continue: wire the limiter");
    }

    #[test]
    fn missing_markers_append_the_block() {
        let block = render(&summary());
        assert_eq!(splice("Some text.\n\n", &block).unwrap(), format!("Some text.\n\n{block}\n"));
        assert_eq!(splice("", &block).unwrap(), format!("{block}\n"));
        assert_eq!(parse("no block here").unwrap(), None);
    }

    #[test]
    fn broken_markers_are_an_error() {
        let block = render(&summary());
        let twice = format!("{block}\n\n{block}");
        assert!(splice(&twice, &block).unwrap_err().to_string().contains("2 start marker(s)"));
        assert!(parse(&twice).is_err());
        let reversed = format!("{END}\n{START}");
        assert!(splice(&reversed, &block).unwrap_err().to_string().contains("before the start"));
        assert!(splice(&format!("x {START} y"), &block).is_err());
        // Spacing inside a marker is tolerated.
        let spaced = block.replace(START, "<!--baton:summary:start   -->");
        assert_eq!(parse(&spaced).unwrap(), Some(summary()));
    }

    #[test]
    fn a_summary_without_markers_is_read_in_any_form() {
        for body in [
            "Intro.\n\n## Task Summary\n- Goal: Ship tiers\n- Status: blocked\n- Stage: 03\n- Next: Ask for the key\n- Updated At: 2026-11-30T08:00:00Z\n- Issue #: 12\n- Key Paths: `src/a.rs`, `src/b.rs`\n\n## Notes\nStatus: not this",
            "**Task Summary**\n\n| Field | Value |\n|---|---|\n| GOAL | Ship tiers |\n| status | blocked |\n| Stage | 03 |\n| Next | Ask for the key |\n| Updated at | 2026-11-30 08:00 |\n| Issue # | #12 |\n| Key paths | `src/a.rs`<br>`src/b.rs` |",
        ] {
            let summary = parse_unmarked(body).unwrap();
            assert_eq!(summary.goal, "Ship tiers", "{body}");
            assert_eq!(summary.status, "blocked");
            assert_eq!(summary.next, "Ask for the key");
            assert_eq!(summary.issue, Some(12));
            assert_eq!(summary.key_paths, vec!["src/a.rs", "src/b.rs"]);
            assert_eq!(parse_time(&summary.updated_at), parse_time("2026-11-30T08:00:00Z"));
            let (read, problem) = read(body);
            assert_eq!(read.map(|(_, form)| form), Some(SummaryForm::Person));
            assert_eq!(problem, None);
        }
        assert_eq!(parse_unmarked("## Task Summary\nJust prose, no fields."), None);
    }

    #[test]
    fn the_newer_of_the_two_summaries_is_read_and_baton_never_reads_its_own_as_the_person_s() {
        let ours = render(&summary());
        let theirs = "## Task Summary\n- Status: blocked\n- Next: Ask\n- Updated At: 2026-12-01T00:00:00Z\n";
        let body = format!("{theirs}\n{ours}\n");
        let (read_now, _) = read(&body);
        let (chosen, form) = read_now.unwrap();
        assert_eq!((chosen.status.as_str(), form), ("blocked", SummaryForm::Person));
        let older = body.replace("2026-12-01", "2026-01-01");
        assert_eq!(read(&older).0.unwrap().1, SummaryForm::Baton);
        // baton's own block alone is never taken for a person's summary.
        assert_eq!(parse_unmarked(&ours), None);
        assert_eq!(read(&ours).0.unwrap().1, SummaryForm::Baton);
    }
}
