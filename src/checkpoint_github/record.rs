//! A Persistence Record: one issue comment per checkpoint, a Markdown list of fields
//! under a header comment, `<!-- baton:record v1 digest=… part=1/1 -->`.
//!
//! The digest covers what the record says about the task (not its kind, time or handoff
//! id), so "nothing new since the last record" is a comparison of two short strings. A
//! record stays under [`COMMENT_LIMIT`] characters per comment: when the full rendering is
//! too long its texts and lists are shortened, and when that is still too long it is split
//! into at most [`MAX_PARTS`] comments (`part=2/3`), which the parser joins again.
//!
//! Records written by hand or by an agent following the checkpoint-persistence skill's
//! template have no header: a comment is such a record when it has a "Persistence
//! Record" heading (any level, or bold) followed by at least two of the record's core
//! fields (Kind, Timestamp, Stage, Status, Next), in any form [`fields`] reads. Other
//! comments (people talking in the thread) are ignored.
//!
//! A baton record carries the digest of what it says; when its content no longer matches
//! (someone edited the comment), it is marked [`Record::edited`]. A record cut to fit
//! also carries `shown=`, the digest of what it shows, which is what is checked then.
//! Comments are untrusted input: each is read up to [`BODY_LIMIT`] characters, at most
//! [`THREAD_LIMIT`] comments of a thread are read (the last ones), and every value is
//! bounded as [`State::bounded`] says. Who wrote a record is kept, not judged, here.

use std::fmt::Write as _;

use serde::Serialize;

use super::fields::{self, FieldValue};
use super::state::State;
use crate::util::hash::fnv1a;
use crate::util::text::one_line;

/// GitHub refuses comments over 65,536 characters; this leaves room.
pub const COMMENT_LIMIT: usize = 60_000;
/// The most comments one record may take.
pub const MAX_PARTS: usize = 3;

const HEADER: &str = "baton:record";

/// GitHub refuses comments longer than this; a longer body is read up to here.
pub const BODY_LIMIT: usize = 65_536;
/// The most comments of a thread that are read (the newest ones).
pub const THREAD_LIMIT: usize = 3_000;
/// The most hand-written records read from one comment.
const SECTIONS_LIMIT: usize = 10;

/// Who wrote a comment, as gh reports it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Author {
    /// `author.login`.
    pub login: Option<String>,
    /// `authorAssociation`: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE …
    pub association: Option<String>,
    /// `viewerDidAuthor`: GitHub's own word that the logged-in user wrote it.
    #[serde(skip)]
    pub viewer: Option<bool>,
}

/// How a record was written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    /// By `baton checkpoint push`, with its header and digest.
    #[default]
    Baton,
    /// By hand or by an agent, after the skill's template: no header, no digest.
    Skill,
}

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
    pub form: Form,
    /// A baton record whose content no longer matches its digest: edited after posting.
    pub edited: bool,
    /// Who posted the comment.
    pub author: Author,
    /// When the comment was created (GitHub's clock).
    pub posted_at: Option<String>,
    /// The comment's place in the thread (0 = first).
    pub position: usize,
}

/// A comment of the issue's thread, as gh reports it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comment {
    pub body: String,
    pub created_at: Option<String>,
    pub url: Option<String>,
    pub author: Author,
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
            form: Form::Baton,
            edited: false,
            author: Author::default(),
            posted_at: None,
            position: 0,
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

/// The placeholder a cut record's `shown=` digest has until it is known.
const SHOWN_PENDING: &str = "shown=????????????????";

fn head(record: &Record, cut: bool, part: usize, parts: usize) -> String {
    let shown = if cut { format!(" {SHOWN_PENDING}") } else { String::new() };
    let mut out = format!("<!-- {HEADER} v1 digest={}{shown} part={part}/{parts} -->\n", record.digest);
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
fn pack(record: &Record, lines: &[String], limit: usize, max_parts: usize, cut: bool) -> Option<Vec<String>> {
    // Headers are the same length for any part number below 10.
    let overhead = chars(&head(record, cut, 2, max_parts)) + chars(FOOTER) + 2;
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
                let mut text = head(record, cut, n + 1, parts);
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
/// else cut to what fits (with a note saying so). A record that is not shown in full
/// carries `shown=`, the digest of what it shows, so that a reader can tell a record
/// cut by baton from one edited by someone.
pub fn render_within(record: &Record, limit: usize, max_parts: usize) -> Vec<String> {
    let full = body_lines(record, FULL);
    if let Some(parts) = pack(record, &full, limit, 1, false) {
        return parts;
    }
    let compact = body_lines(record, COMPACT);
    if let Some(parts) = pack(record, &compact, limit, 1, true) {
        return with_shown(parts);
    }
    if let Some(parts) = pack(record, &compact, limit, max_parts, true) {
        return with_shown(parts);
    }
    // Still too long: keep the head of the record (its fields come first, lists last).
    let total = compact.len();
    let mut lines = compact;
    while !lines.is_empty() {
        lines.truncate(lines.len() * 9 / 10);
        let mut shown = lines.clone();
        shown.push(format!("  (record cut: {} more lines not shown)", total - lines.len()));
        if let Some(parts) = pack(record, &shown, limit, max_parts, true) {
            return with_shown(parts);
        }
    }
    with_shown(pack(record, &[], limit, max_parts, true).unwrap_or_default())
}

/// Fills in the `shown=` digest: that of the state the parts read back as.
fn with_shown(parts: Vec<String>) -> Vec<String> {
    let comments: Vec<Comment> =
        parts.iter().map(|p| Comment { body: p.clone(), ..Comment::default() }).collect();
    let shown = parse_thread(&comments).first().map(|r| digest(&r.state)).unwrap_or_default();
    parts.into_iter().map(|p| p.replacen(SHOWN_PENDING, &format!("shown={shown}"), 1)).collect()
}

/// Renders a record for GitHub: see [`render_within`].
pub fn render(record: &Record) -> Vec<String> {
    render_within(record, COMMENT_LIMIT, MAX_PARTS)
}

/// The header's attributes: digest, shown, part, parts; the lines are left empty.
fn parse_header<'a>(line: &str, first: &'a Comment, position: usize) -> Option<Open<'a>> {
    let inner = line.trim().strip_prefix("<!--")?.strip_suffix("-->")?.trim();
    let rest = inner.strip_prefix(HEADER)?;
    let (mut digest, mut shown) = (None, None);
    let (mut part, mut parts) = (1, 1);
    for word in rest.split_whitespace() {
        if let Some(d) = word.strip_prefix("digest=") {
            digest = Some(one_line(d, 64)).filter(|d| !d.is_empty());
        } else if let Some(d) = word.strip_prefix("shown=") {
            shown = Some(one_line(d, 64)).filter(|d| !d.is_empty());
        } else if let Some(p) = word.strip_prefix("part=") {
            let (a, b) = p.split_once('/').unwrap_or((p, "1"));
            part = a.parse().unwrap_or(1);
            parts = b.parse().unwrap_or(1);
        }
    }
    Some(Open { digest, shown, part: part.max(1), parts: parts.max(1), lines: vec![], first, position })
}

/// A comment's body up to [`BODY_LIMIT`] characters.
fn bounded_body(comment: &Comment) -> &str {
    match comment.body.char_indices().nth(BODY_LIMIT) {
        Some((at, _)) => &comment.body[..at],
        None => &comment.body,
    }
}

/// The part of a comment from its baton header on, when it has one.
fn record_part(comment: &Comment, position: usize) -> Option<Open<'_>> {
    let mut lines = bounded_body(comment).lines();
    let mut open = lines.by_ref().find_map(|line| parse_header(line, comment, position))?;
    // The title line would end a list that continues from the previous part.
    open.lines = lines.filter(|l| !l.starts_with("### Persistence Record")).collect();
    Some(open)
}

fn finish(open: Open<'_>) -> Record {
    let Open { digest: header_digest, shown, part, parts, lines, first, position } = open;
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
    }
    .bounded();
    let complete = part >= parts;
    // What the content must hash to: what was shown when baton cut it, else all of it.
    let expected = shown.as_ref().or(header_digest.as_ref());
    let edited = complete && expected.is_none_or(|d| *d != digest(&state));
    Record {
        kind: parsed.nonempty("kind").map(|k| one_line(&k, 40)).unwrap_or_else(|| "checkpoint".into()),
        timestamp: parsed
            .nonempty("timestamp")
            .or_else(|| first.created_at.clone())
            .map(|t| one_line(&t, 64))
            .unwrap_or_default(),
        handoff: parsed.nonempty("handoff").map(|h| one_line(&h, super::state::NOTE_MAX)),
        digest: header_digest.unwrap_or_else(|| digest(&state)),
        state,
        url: first.url.clone(),
        complete,
        form: Form::Baton,
        edited,
        author: first.author.clone(),
        posted_at: first.created_at.clone(),
        position,
    }
}

/// The record's core fields: a section needs two of them to be a record.
const CORE: [&str; 5] = ["kind", "timestamp", "stage", "status", "next"];

/// A record written after the skill's template, from the lines of its section.
fn skill_record(lines: &[&str], comment: &Comment, position: usize) -> Option<Record> {
    let parsed = fields::parse(lines.iter().copied());
    if CORE.iter().filter(|label| parsed.has(label)).count() < 2 {
        return None;
    }
    let optional = |label: &str| parsed.nonempty(label).filter(|v| !fields::means_nothing(v));
    let list = |label: &str| -> Vec<String> {
        parsed.items(label).into_iter().filter(|i| !fields::means_nothing(i)).collect()
    };
    let state = State {
        status: parsed.text("status").unwrap_or_default(),
        stage: parsed.text("stage").unwrap_or_default(),
        next: parsed.text("next").unwrap_or_default(),
        completed: list("completed"),
        decision: optional("decision"),
        blocker: optional("blocker"),
        plan_path: optional("plan path"),
        key_paths: list("key paths"),
        reply_summary: optional("reply summary"),
    }
    .bounded();
    let digest = digest(&state);
    Some(Record {
        kind: optional("kind")
            .map(|k| one_line(&k, 40).to_lowercase())
            .unwrap_or_else(|| "checkpoint".into()),
        timestamp: optional("timestamp")
            .or_else(|| comment.created_at.clone())
            .map(|t| one_line(&t, 64))
            .unwrap_or_default(),
        handoff: optional("handoff").map(|h| one_line(&h, super::state::NOTE_MAX)),
        state,
        digest,
        url: comment.url.clone(),
        complete: true,
        form: Form::Skill,
        edited: false,
        author: comment.author.clone(),
        posted_at: comment.created_at.clone(),
        position,
    })
}

/// The hand-written records in a comment without baton's header.
fn skill_records(comment: &Comment, position: usize) -> Vec<Record> {
    let lines = fields::outside_fences(bounded_body(comment));
    fields::sections(&lines, "Persistence Record", &["Task Summary"])
        .iter()
        .take(SECTIONS_LIMIT)
        .filter_map(|section| skill_record(section, comment, position))
        .collect()
}

/// A record being read, part by part.
struct Open<'a> {
    digest: Option<String>,
    shown: Option<String>,
    part: usize,
    parts: usize,
    lines: Vec<&'a str>,
    first: &'a Comment,
    position: usize,
}

/// The records in a thread, in thread order, baton's and hand-written ones alike. The
/// parts of a split baton record are joined when they follow each other with the same
/// digest; a part whose first part is missing is skipped.
pub fn parse_thread(comments: &[Comment]) -> Vec<Record> {
    let mut records = vec![];
    let mut open: Option<Open> = None;
    let skip = comments.len().saturating_sub(THREAD_LIMIT);
    for (position, comment) in comments.iter().enumerate().skip(skip) {
        let Some(next) = record_part(comment, position) else {
            records.extend(skill_records(comment, position));
            continue;
        };
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
    records.sort_by_key(|r| r.position);
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
        Comment {
            body: body.into(),
            created_at: Some("2026-01-01T00:00:00Z".into()),
            url: Some("u".into()),
            author: Author { login: Some("dev".into()), association: Some("OWNER".into()), viewer: None },
        }
    }

    const SKILL: &str = "## Persistence Record\n- Kind: handoff\n- Timestamp: 2099-01-01T00:00:00Z\n- Stage: 03\n- Status: blocked\n- Next: Ask for the staging key\n";

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
        assert!(!back[0].edited);
        assert_eq!(back[0].form, Form::Baton);
        assert_eq!(back[0].author.login.as_deref(), Some("dev"));
    }

    #[test]
    fn a_skill_record_is_read_in_every_form() {
        let forms = [
            SKILL.to_string(),
            "### Persistence Record\n- **Kind**: handoff\n- **Timestamp**: 2099-01-01T00:00:00Z\n- **Stage**: 03\n- **Status**: blocked\n- **Next**: Ask for the staging key".into(),
            "**Persistence Record**\n\n**Kind:** handoff\n**Timestamp:** 2099-01-01T00:00:00Z\n**Stage:** 03\n**Status:** blocked\n**Next:** Ask for the staging key".into(),
            "# Persistence Record — handoff\nkind: handoff\nTIMESTAMP: 2099-01-01T00:00:00Z\nstage: 03\nstatus: blocked\nnext: Ask for the staging key".into(),
            "Checkpoint.\n\n## Persistence Record\n\n| Field | Value |\n| --- | --- |\n| Kind | handoff |\n| Timestamp | 2099-01-01T00:00:00Z |\n| Stage | 03 |\n| Status | blocked |\n| Next | Ask for the staging key |".into(),
        ];
        for body in forms {
            let records = parse_thread(&[comment(&body)]);
            assert_eq!(records.len(), 1, "{body}");
            let r = &records[0];
            assert_eq!(r.form, Form::Skill);
            assert_eq!(r.kind, "handoff");
            assert_eq!(r.timestamp, "2099-01-01T00:00:00Z");
            assert_eq!((r.state.stage.as_str(), r.state.status.as_str()), ("03", "blocked"));
            assert_eq!(r.state.next, "Ask for the staging key");
            assert!(!r.edited && r.complete);
        }
    }

    #[test]
    fn a_skill_record_reads_its_optional_fields_and_falls_back_to_the_comment_time() {
        let body = "## Persistence Record\n- Status: in progress\n- Next: Wire the limiter\n- Completed:\n  - Read the router\n  - Added tiers\n- Decision: Tiers in config\n- Blocker: none\n- Handoff: .planning/HANDOFF.json\n- Plan Path: `.planning/phases/03-x/03-02-PLAN.md`\n- Reply Summary: Done with 2\n- Key Paths: `src/a.rs`, `src/b.rs`\n";
        let r = &parse_thread(&[comment(body)])[0];
        assert_eq!(r.timestamp, "2026-01-01T00:00:00Z");
        assert_eq!(r.kind, "checkpoint");
        assert_eq!(r.state.completed, vec!["Read the router", "Added tiers"]);
        assert_eq!(r.state.decision.as_deref(), Some("Tiers in config"));
        assert_eq!(r.state.blocker, None, "none means none");
        assert_eq!(r.state.plan_path.as_deref(), Some(".planning/phases/03-x/03-02-PLAN.md"));
        assert_eq!(r.state.key_paths, vec!["src/a.rs", "src/b.rs"]);
        assert_eq!(r.handoff.as_deref(), Some(".planning/HANDOFF.json"));
        assert_eq!(r.digest, digest(&r.state));
    }

    #[test]
    fn things_that_are_not_records_are_not_read_as_records() {
        for body in [
            "## Persistence Record\nWe should write one soon. Status: unclear",
            "```\n## Persistence Record\n- Status: example\n- Next: example\n```",
            "> ## Persistence Record\n> - Status: quoted\n> - Next: quoted",
            "## Persistence Records\n- Status: a\n- Next: b",
            "- Status: blocked\n- Next: no heading",
        ] {
            assert!(parse_thread(&[comment(body)]).is_empty(), "{body}");
        }
        // Two records in one comment are two records; values are bounded.
        let long = format!("{SKILL}\n**Persistence Record**\nStatus: later\nNext: {}", "x".repeat(5000));
        let records = parse_thread(&[comment(&long)]);
        assert_eq!(records.len(), 2);
        assert_eq!(records[1].state.next.chars().count(), crate::checkpoint_github::state::NEXT_MAX);
        // A huge comment is read only up to GitHub's limit.
        let huge = format!("{SKILL}{}", "- Completed: y\n".repeat(20_000));
        assert!(parse_thread(&[comment(&huge)])[0].state.completed.len() < 5_000);
    }

    #[test]
    fn a_baton_record_edited_after_posting_is_marked() {
        let record = Record::new("checkpoint", "2026-11-30T05:00:00Z", None, state());
        let posted = render(&record).remove(0);
        let edited = posted.replace("- **Status:** paused", "- **Status:** done");
        assert_ne!(posted, edited);
        let back = parse_thread(&[comment(&edited)]);
        assert!(back[0].edited);
        assert_eq!(back[0].state.status, "done");
        let header_gone = posted.replace(&format!("digest={}", record.digest), "digest=");
        assert!(parse_thread(&[comment(&header_gone)])[0].edited);
        // Whitespace GitHub's editor may add changes nothing that is read.
        let reflowed = posted.replace("\n- **Next:**", "\n\n- **Next:**");
        assert!(!parse_thread(&[comment(&reflowed)])[0].edited);
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
        // Cut by baton is not edited: the `shown=` digest matches what is shown.
        assert!(parts[0].contains(" shown="), "{}", &parts[0][..120]);
        assert!(!back[0].edited);
        let tampered: Vec<Comment> = parts
            .iter()
            .map(|p| comment(&p.replacen("  - `src/module_0000", "  - `src/evil_0000", 1)))
            .collect();
        assert!(parse_thread(&tampered)[0].edited);
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

    /// Seeded noise built from the pieces records are made of: reading a thread and a
    /// body of it never panics, and every value stays bounded.
    #[test]
    fn a_noisy_thread_never_panics() {
        let pieces = [
            "## Persistence Record\n",
            "**Persistence Record**\n",
            "## Task Summary\n",
            "- Status: ",
            "| Next | ",
            " |\n",
            "|---|---|\n",
            "Timestamp: 2099-01-01\n",
            "- **Kind:** ",
            "<!-- baton:record v1 digest=",
            " part=2/3 -->\n",
            "<!-- baton:summary:start -->",
            "<!-- baton:summary:end -->",
            "```\n",
            "  - ",
            "\\",
            "`",
            "é🙂",
            "\n",
            ": ",
            "x",
        ];
        let mut seed: u64 = 0x2545f4914f6cdd1d;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..400 {
            let thread: Vec<Comment> = (0..(next() % 6))
                .map(|_| {
                    let body: String =
                        (0..(next() % 60)).map(|_| pieces[(next() % pieces.len() as u64) as usize]).collect();
                    comment(&body)
                })
                .collect();
            for record in parse_thread(&thread) {
                assert!(record.state.next.chars().count() <= super::super::state::NEXT_MAX);
                assert!(record.kind.chars().count() <= 40);
            }
            if let Some(first) = thread.first() {
                let _ = super::super::summary::read(&first.body);
            }
        }
    }
}
