//! A Persistence Record: one issue comment per checkpoint, a Markdown list of fields
//! under a header comment, `<!-- baton:record v1 digest=… part=1/1 -->`.
//!
//! The digest covers what the record says about the task (not its kind, time or handoff
//! id), so "nothing new since the last record" is a comparison of two short strings. A
//! record stays under [`COMMENT_LIMIT`] characters per comment: when the full rendering is
//! too long its texts and lists are shortened, and when that is still too long it is split
//! into at most [`MAX_PARTS`] comments (`part=2/3`), which the parser joins again.
//! Comments without the header (people talking in the thread) are ignored.

use std::fmt::Write as _;

use super::fields::{self, FieldValue};
use super::state::State;
use crate::handoff::model::one_line;

/// GitHub refuses comments over 65,536 characters; this leaves room.
pub const COMMENT_LIMIT: usize = 60_000;
/// The most comments one record may take.
pub const MAX_PARTS: usize = 3;

const HEADER: &str = "baton:record";

/// One record, as written or as read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub kind: String,
    pub timestamp: String,
    /// Which handoff it came from: `.planning/HANDOFF.json (id …, written …)`.
    pub handoff: Option<String>,
    pub state: State,
    pub digest: String,
    /// The comment it was read from.
    pub url: Option<String>,
    /// False when a split record was read with parts missing (a push that failed half-way).
    pub complete: bool,
}

/// A comment of the thread, as gh reports it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comment {
    pub body: String,
    pub created_at: Option<String>,
    pub url: Option<String>,
}

/// FNV-1a, 64 bits: a change detector, not a security measure.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf29ce484222325;
    for byte in bytes {
        hash ^= *byte as u64;
        hash = hash.wrapping_mul(0x100000001b3);
    }
    hash
}

/// The digest of what a state says.
pub fn digest(state: &State) -> String {
    let mut text = String::new();
    let mut add = |label: &str, value: &str| {
        text.push_str(label);
        text.push('\u{1f}');
        text.push_str(value);
        text.push('\u{1e}');
    };
    add("status", &state.status);
    add("stage", &state.stage);
    add("next", &state.next);
    add("completed", &state.completed.join("\u{1d}"));
    add("decision", state.decision.as_deref().unwrap_or_default());
    add("blocker", state.blocker.as_deref().unwrap_or_default());
    add("plan", state.plan_path.as_deref().unwrap_or_default());
    add("paths", &state.key_paths.join("\u{1d}"));
    add("reply", state.reply_summary.as_deref().unwrap_or_default());
    format!("{:016x}", fnv1a(text.as_bytes()))
}

impl Record {
    pub fn new(kind: &str, timestamp: &str, handoff: Option<String>, state: State) -> Record {
        let digest = digest(&state);
        Record {
            kind: kind.to_string(),
            timestamp: timestamp.to_string(),
            handoff,
            state,
            digest,
            url: None,
            complete: true,
        }
    }
}

/// How hard the record's texts and lists are cut.
#[derive(Clone, Copy)]
struct Cut {
    text: usize,
    item: usize,
    items: usize,
}

const FULL: Cut = Cut { text: usize::MAX, item: usize::MAX, items: usize::MAX };
const COMPACT: Cut = Cut { text: 500, item: 200, items: 200 };

fn list(items: &[String], paths: bool, cut: Cut) -> FieldValue {
    let shown: Vec<String> = items.iter().take(cut.items).map(|i| one_line(i, cut.item)).collect();
    FieldValue::List { more: items.len() - shown.len(), items: shown, paths }
}

fn body_lines(record: &Record, cut: Cut) -> Vec<String> {
    let state = &record.state;
    let short = |t: &str| one_line(t, cut.text);
    let mut fields: Vec<(&str, FieldValue)> = vec![
        ("Kind", FieldValue::Text(record.kind.clone())),
        ("Timestamp", FieldValue::Text(record.timestamp.clone())),
        ("Stage", FieldValue::Text(state.stage.clone())),
        ("Status", FieldValue::Text(state.status.clone())),
        ("Next", FieldValue::Text(short(&state.next))),
    ];
    if !state.completed.is_empty() {
        fields.push(("Completed", list(&state.completed, false, cut)));
    }
    if let Some(decision) = &state.decision {
        fields.push(("Decision", FieldValue::Text(short(decision))));
    }
    if let Some(blocker) = &state.blocker {
        fields.push(("Blocker", FieldValue::Text(short(blocker))));
    }
    if let Some(handoff) = &record.handoff {
        fields.push(("Handoff", FieldValue::Text(short(handoff))));
    }
    if let Some(plan) = &state.plan_path {
        fields.push(("Plan Path", FieldValue::Path(plan.clone())));
    }
    if !state.key_paths.is_empty() {
        fields.push(("Key Paths", list(&state.key_paths, true, cut)));
    }
    if let Some(reply) = &state.reply_summary {
        fields.push(("Reply Summary", FieldValue::Text(short(reply))));
    }
    fields.iter().flat_map(|(label, value)| fields::render(label, value)).collect()
}

const FOOTER: &str =
    "<sub>Written by `baton checkpoint push`; `baton checkpoint pull` restores the newest record.</sub>";

fn head(record: &Record, part: usize, parts: usize) -> String {
    let mut out = format!("<!-- {HEADER} v1 digest={} part={part}/{parts} -->\n", record.digest);
    let kind = fields::escape(&record.kind);
    if part == 1 {
        let _ = writeln!(out, "### Persistence Record · {kind}\n");
    } else {
        let _ = writeln!(out, "### Persistence Record · {kind} (continued, {part}/{parts})\n");
    }
    out
}

fn chars(text: &str) -> usize {
    text.chars().count()
}

/// Packs lines into parts of at most `limit` characters each (headers and footer
/// included). `None` when more than `max_parts` would be needed.
fn pack(record: &Record, lines: &[String], limit: usize, max_parts: usize) -> Option<Vec<String>> {
    // Headers are the same length for any part number below 10.
    let overhead = chars(&head(record, 2, max_parts)) + chars(FOOTER) + 2;
    let mut groups: Vec<Vec<&String>> = vec![vec![]];
    let mut size = 0;
    for line in lines {
        let len = chars(line) + 1;
        if size + len + overhead > limit && !groups.last().is_some_and(Vec::is_empty) {
            groups.push(vec![]);
            size = 0;
        }
        if len + overhead > limit || groups.len() > max_parts {
            return None;
        }
        size += len;
        if let Some(group) = groups.last_mut() {
            group.push(line);
        }
    }
    let parts = groups.len();
    Some(
        groups
            .iter()
            .enumerate()
            .map(|(n, group)| {
                let mut text = head(record, n + 1, parts);
                for line in group {
                    text.push_str(line);
                    text.push('\n');
                }
                if n + 1 == parts {
                    text.push('\n');
                    text.push_str(FOOTER);
                    text.push('\n');
                }
                text
            })
            .collect(),
    )
}

/// Renders a record as comment bodies, each under `limit` characters, at most
/// `max_parts` of them: full, else compacted in one comment, else compacted and split,
/// else cut to what fits (with a note saying so).
pub fn render_within(record: &Record, limit: usize, max_parts: usize) -> Vec<String> {
    let full = body_lines(record, FULL);
    if let Some(parts) = pack(record, &full, limit, 1) {
        return parts;
    }
    let compact = body_lines(record, COMPACT);
    if let Some(parts) = pack(record, &compact, limit, 1) {
        return parts;
    }
    if let Some(parts) = pack(record, &compact, limit, max_parts) {
        return parts;
    }
    // Still too long: keep the head of the record (its fields come first, lists last).
    let total = compact.len();
    let mut lines = compact;
    while !lines.is_empty() {
        lines.truncate(lines.len() * 9 / 10);
        let mut shown = lines.clone();
        shown.push(format!("  (record cut: {} more lines not shown)", total - lines.len()));
        if let Some(parts) = pack(record, &shown, limit, max_parts) {
            return parts;
        }
    }
    pack(record, &[], limit, max_parts).unwrap_or_default()
}

/// Renders a record for GitHub: see [`render_within`].
pub fn render(record: &Record) -> Vec<String> {
    render_within(record, COMMENT_LIMIT, MAX_PARTS)
}

/// The header's attributes: digest, part, parts; the lines are left empty.
fn parse_header<'a>(line: &str, first: &'a Comment) -> Option<Open<'a>> {
    let inner = line.trim().strip_prefix("<!--")?.strip_suffix("-->")?.trim();
    let rest = inner.strip_prefix(HEADER)?;
    let mut digest = None;
    let (mut part, mut parts) = (1, 1);
    for word in rest.split_whitespace() {
        if let Some(d) = word.strip_prefix("digest=") {
            digest = Some(d.to_string()).filter(|d| !d.is_empty());
        } else if let Some(p) = word.strip_prefix("part=") {
            let (a, b) = p.split_once('/').unwrap_or((p, "1"));
            part = a.parse().unwrap_or(1);
            parts = b.parse().unwrap_or(1);
        }
    }
    Some(Open { digest, part: part.max(1), parts: parts.max(1), lines: vec![], first })
}

/// The part of a comment from its header on, when it has one.
fn record_part(comment: &Comment) -> Option<Open<'_>> {
    let mut lines = comment.body.lines();
    let mut open = lines.by_ref().find_map(|line| parse_header(line, comment))?;
    // The title line would end a list that continues from the previous part.
    open.lines = lines.filter(|l| !l.starts_with("### Persistence Record")).collect();
    Some(open)
}

fn finish(open: Open<'_>) -> Record {
    let Open { digest: header_digest, part, parts, lines, first } = open;
    let parsed = fields::parse(lines);
    let state = State {
        status: parsed.text("status").unwrap_or_default(),
        stage: parsed.text("stage").unwrap_or_default(),
        next: parsed.text("next").unwrap_or_default(),
        completed: parsed.items("completed"),
        decision: parsed.nonempty("decision"),
        blocker: parsed.nonempty("blocker"),
        plan_path: parsed.nonempty("plan path"),
        key_paths: parsed.items("key paths"),
        reply_summary: parsed.nonempty("reply summary"),
    };
    Record {
        kind: parsed.nonempty("kind").unwrap_or_else(|| "checkpoint".into()),
        timestamp: parsed.nonempty("timestamp").or_else(|| first.created_at.clone()).unwrap_or_default(),
        handoff: parsed.nonempty("handoff"),
        digest: header_digest.unwrap_or_else(|| digest(&state)),
        state,
        url: first.url.clone(),
        complete: part >= parts,
    }
}

/// A record being read, part by part.
struct Open<'a> {
    digest: Option<String>,
    part: usize,
    parts: usize,
    lines: Vec<&'a str>,
    first: &'a Comment,
}

/// The records in a thread, oldest first. The parts of a split record are joined when
/// they follow each other with the same digest; a part whose first part is missing is
/// skipped.
pub fn parse_thread(comments: &[Comment]) -> Vec<Record> {
    let mut records = vec![];
    let mut open: Option<Open> = None;
    for comment in comments {
        let Some(next) = record_part(comment) else { continue };
        if next.part > 1 {
            if let Some(current) =
                open.as_mut().filter(|o| o.digest == next.digest && o.part + 1 == next.part)
            {
                current.part = next.part;
                current.lines.extend(next.lines);
                continue;
            }
        }
        // A new record, or a continuation with no start (skipped): close the open one.
        if let Some(done) = open.take() {
            records.push(finish(done));
        }
        if next.part == 1 {
            open = Some(next);
        }
    }
    if let Some(done) = open.take() {
        records.push(finish(done));
    }
    records
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> State {
        State {
            status: "paused".into(),
            stage: "phase 03 (rate-limiting), plan 2, task 3/4".into(),
            next: "Continue: wire <Limiter> into `orders`".into(),
            completed: vec!["Read the router".into(), "Add *the* limiter".into()],
            decision: Some("Tiers live in config — ops edits them".into()),
            blocker: Some("Staging key missing [human_action]".into()),
            plan_path: Some(".planning/phases/03-rate-limiting/03-02-PLAN.md".into()),
            key_paths: vec!["src/limiter.ts".into(), "src/app.ts".into()],
            reply_summary: Some("Last request: add tiers".into()),
        }
    }

    fn comment(body: &str) -> Comment {
        Comment { body: body.into(), created_at: Some("2026-01-01T00:00:00Z".into()), url: Some("u".into()) }
    }

    #[test]
    fn a_record_round_trips() {
        let record = Record::new("checkpoint", "2026-11-30T05:00:00Z", Some("h (id x)".into()), state());
        let parts = render(&record);
        assert_eq!(parts.len(), 1);
        assert!(parts[0].starts_with("<!-- baton:record v1 digest="), "{}", parts[0]);
        let back = parse_thread(&[comment(&parts[0])]);
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].state, record.state);
        assert_eq!(back[0].kind, "checkpoint");
        assert_eq!(back[0].timestamp, "2026-11-30T05:00:00Z");
        assert_eq!(back[0].digest, record.digest);
        assert_eq!(digest(&back[0].state), record.digest);
    }

    #[test]
    fn the_digest_ignores_kind_and_time_but_not_content() {
        let a = Record::new("checkpoint", "t1", None, state());
        let b = Record::new("auto", "t2", Some("other".into()), state());
        assert_eq!(a.digest, b.digest);
        let mut changed = state();
        changed.next = "something else".into();
        assert_ne!(Record::new("checkpoint", "t1", None, changed).digest, a.digest);
    }

    #[test]
    fn other_comments_are_ignored_and_the_order_is_kept() {
        let first = render(&Record::new("checkpoint", "t1", None, state()));
        let mut later = state();
        later.status = "blocked".into();
        let second = render(&Record::new("auto", "t2", None, later));
        let thread = vec![
            comment("LGTM, carry on"),
            comment(&first[0]),
            comment("> <!-- baton:record v1 digest=quoted -->\n> - **Status:** quoted"),
            comment(&second[0]),
        ];
        let records = parse_thread(&thread);
        assert_eq!(records.len(), 2);
        assert_eq!(records[1].state.status, "blocked");
        assert_eq!(records[1].kind, "auto");
    }

    #[test]
    fn a_big_record_is_compacted_then_split_and_stays_bounded() {
        let mut big = state();
        big.key_paths = (0..3000).map(|n| format!("src/module_{n:04}/{}.rs", "x".repeat(150))).collect();
        big.completed = (0..150).map(|n| format!("Task {n}: {}", "y".repeat(250))).collect();
        big.reply_summary = Some("z".repeat(2000));
        let record = Record::new("checkpoint", "t", None, big);
        let parts = render(&record);
        assert!(parts.len() > 1 && parts.len() <= MAX_PARTS, "{}", parts.len());
        for part in &parts {
            assert!(part.chars().count() < COMMENT_LIMIT, "{}", part.chars().count());
        }
        let back = parse_thread(&parts.iter().map(|p| comment(p)).collect::<Vec<_>>());
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].digest, record.digest);
        assert_eq!(back[0].state.completed.len(), 150);
        assert_eq!(back[0].state.key_paths.len(), 200, "compacted to 200 paths");
        assert_eq!(back[0].state.reply_summary.as_ref().map(|r| r.chars().count()), Some(500));
    }

    #[test]
    fn a_record_too_big_for_three_comments_is_cut_with_a_note() {
        let mut big = state();
        big.key_paths = (0..200).map(|n| format!("p{n}")).collect();
        big.completed = (0..200).map(|n| format!("t{n}")).collect();
        let record = Record::new("checkpoint", "t", None, big);
        let parts = render_within(&record, 1000, 3);
        assert_eq!(parts.len(), 3);
        assert!(parts.iter().all(|p| p.chars().count() <= 1000));
        assert!(parts[2].contains("record cut:"), "{}", parts[2]);
        let back = parse_thread(&parts.iter().map(|p| comment(p)).collect::<Vec<_>>());
        assert_eq!(back[0].state.status, "paused");
    }

    #[test]
    fn a_record_with_parts_missing_is_incomplete() {
        let mut big = state();
        big.key_paths = (0..200).map(|n| format!("p{n}")).collect();
        let record = Record::new("checkpoint", "t", None, big);
        let parts = render_within(&record, 1000, 3);
        assert!(parts.len() > 1);
        let back = parse_thread(&[comment(&parts[0])]);
        assert!(!back[0].complete);
        let all = parse_thread(&parts.iter().map(|p| comment(p)).collect::<Vec<_>>());
        assert!(all[0].complete);
        // A stray continuation alone is no record.
        assert!(parse_thread(&[comment(&parts[1])]).is_empty());
    }
}
