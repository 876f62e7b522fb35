//! The Task Summary in the issue body: a block between `<!-- baton:summary:start -->` and
//! `<!-- baton:summary:end -->` that each push replaces; the rest of the body is never
//! touched.
//!
//! Markers missing: the block is appended. Markers duplicated, unpaired or out of order
//! (someone edited the body by hand): an error, never a repair. Guessing which of two
//! blocks is baton's could delete text a person wrote, so the person fixes the body and
//! pushes again.

use super::fields::{self, FieldValue};

pub const START: &str = "<!-- baton:summary:start -->";
pub const END: &str = "<!-- baton:summary:end -->";

/// How many key paths the body shows (the records carry them all).
const BODY_PATHS: usize = 30;

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
    /// What is wrong with them, in words.
    Broken(String),
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
        ([_], [_]) => Markers::Broken("the end marker comes before the start marker".into()),
        _ => Markers::Broken(format!(
            "{} start marker(s) `{START}` and {} end marker(s) `{END}` (there must be one of each, or none)",
            starts.len(),
            ends.len()
        )),
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
pub fn splice(body: &str, block: &str) -> Result<String, String> {
    match markers(body) {
        Markers::Block(range) => Ok(format!("{}{block}{}", &body[..range.start], &body[range.end..])),
        Markers::Missing if body.trim().is_empty() => Ok(format!("{block}\n")),
        Markers::Missing => Ok(format!("{}\n\n{block}\n", body.trim_end())),
        Markers::Broken(why) => Err(why),
    }
}

/// The summary in a body: `Ok(None)` when there is no block.
pub fn parse(body: &str) -> Result<Option<Summary>, String> {
    let range = match markers(body) {
        Markers::Missing => return Ok(None),
        Markers::Broken(why) => return Err(why),
        Markers::Block(range) => range,
    };
    let parsed = fields::parse(body[range].lines());
    Ok(Some(Summary {
        goal: parsed.text("goal").unwrap_or_default(),
        status: parsed.text("status").unwrap_or_default(),
        stage: parsed.text("stage").unwrap_or_default(),
        next: parsed.text("next").unwrap_or_default(),
        updated_at: parsed.text("updated at").unwrap_or_default(),
        issue: parsed.text("issue #").and_then(|i| i.trim().trim_start_matches('#').parse().ok()),
        key_paths: parsed.items("key paths"),
    }))
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
        assert!(splice(&twice, &block).unwrap_err().contains("2 start marker(s)"));
        assert!(parse(&twice).is_err());
        let reversed = format!("{END}\n{START}");
        assert!(splice(&reversed, &block).unwrap_err().contains("before the start"));
        assert!(splice(&format!("x {START} y"), &block).is_err());
        // Spacing inside a marker is tolerated.
        let spaced = block.replace(START, "<!--baton:summary:start   -->");
        assert_eq!(parse(&spaced).unwrap(), Some(summary()));
    }
}
