//! The fields that both the Task Summary and a Persistence Record are made of.
//!
//! baton writes them one way, `- **Label:** value`, so that GitHub shows them as written
//! and no value can fake one of baton's markers. It reads them in every form people and
//! their agents write: `- Label: value`, `- **Label**: value`, `**Label:** value`,
//! `Label: value`, two-column Markdown tables, labels in any case; lists as bulleted
//! lines under the label or inline (`a; b`, `a<br>b`). Headings of any level, bold lines
//! and underlined titles open the sections records and summaries live in. Everything
//! here is a pure function over text that anyone can write: no panics, work linear in
//! the input.
//!
//! A value is one line. Text is escaped with backslashes (`\`, `` ` ``, `*`, `<`, `!`), which
//! GitHub's Markdown removes when it renders; paths go in code spans. A list field has no
//! value on its line and one indented `  - item` line per item. An empty value renders as
//! `—` and reads back as empty.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};

/// A value to render.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldValue {
    Text(String),
    Path(String),
    /// Items, whether they are paths, and how many more were left out (shown as a note
    /// line the parser skips).
    List {
        items: Vec<String>,
        paths: bool,
        more: usize,
    },
}

const EMPTY: &str = "—";

/// Escapes text so it renders as written and never forms a marker or a code span: `\`,
/// `` ` ``, `*` and `<` get a backslash, and so does a `!` after `<` (so `<!--` cannot
/// appear, escaped or not).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut previous = ' ';
    for c in text.chars() {
        if matches!(c, '\\' | '`' | '*' | '<') || (c == '!' && previous == '<') {
            out.push('\\');
        }
        out.push(c);
        previous = c;
    }
    out
}

/// Undoes [`escape`] (and any other backslash escape of ASCII punctuation, as Markdown does).
pub fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(&next) = chars.peek() {
                if next.is_ascii_punctuation() {
                    out.push(next);
                    chars.next();
                    continue;
                }
            }
        }
        out.push(c);
    }
    out
}

/// A path in a code span, or escaped text when a code span could not hold it.
fn encode_path(path: &str) -> String {
    let awkward = path.is_empty()
        || path.contains('`')
        || path.contains("<!--")
        || path.starts_with(' ')
        || path.ends_with(' ');
    if awkward { escape(path) } else { format!("`{path}`") }
}

fn encode_text(text: &str) -> String {
    if text.is_empty() { EMPTY.to_string() } else { escape(text) }
}

/// Reads a value back: a whole code span is taken literally, anything else unescaped.
pub fn decode(raw: &str) -> String {
    let raw = raw.trim();
    if raw == EMPTY {
        return String::new();
    }
    let ticks = raw.chars().take_while(|c| *c == '`').count();
    if ticks > 0 && raw.len() > 2 * ticks {
        let fence = &raw[..ticks];
        let inner = &raw[ticks..raw.len() - ticks];
        if raw.ends_with(fence) && !inner.starts_with('`') && !inner.ends_with('`') {
            return inner.to_string();
        }
    }
    unescape(raw)
}

/// The lines of one field.
pub fn render(label: &str, value: &FieldValue) -> Vec<String> {
    match value {
        FieldValue::Text(text) => vec![format!("- **{label}:** {}", encode_text(text))],
        FieldValue::Path(path) => vec![format!("- **{label}:** {}", encode_path(path))],
        FieldValue::List { items, paths, more } => {
            let mut lines = vec![format!("- **{label}:**")];
            for item in items {
                let encoded = if *paths { encode_path(item) } else { encode_text(item) };
                lines.push(format!("  - {encoded}"));
            }
            if *more > 0 {
                lines.push(format!("  (and {more} more not shown)"));
            }
            lines
        }
    }
}

/// One field read from a block of lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Field {
    /// The label, normalised ([`normalize_label`]).
    pub label: String,
    /// The value as written on the field's line (a table cell, or the text after the colon).
    pub raw: String,
    /// The items of a list written under the field, decoded.
    pub items: Vec<String>,
}

/// Fields read from a block of lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    /// In order of appearance.
    pub fields: Vec<Field>,
}

/// Words that mean "nothing" in a hand-written field (`Blocker: none`).
pub fn means_nothing(value: &str) -> bool {
    let v = value.trim().trim_end_matches('.').to_ascii_lowercase();
    matches!(v.as_str(), "" | "none" | "n/a" | "na" | "-" | "—" | "null" | "(none)" | "nothing" | "tbd")
}

impl Parsed {
    fn find(&self, label: &str) -> Option<&Field> {
        let label = normalize_label(label);
        // The last one wins when a label appears twice.
        self.fields.iter().rev().find(|f| f.label == label)
    }

    /// A text field's value; `None` when the field is absent.
    pub fn text(&self, label: &str) -> Option<String> {
        self.find(label).map(|f| decode(&f.raw))
    }

    /// A text field's value, `None` when absent or empty.
    pub fn nonempty(&self, label: &str) -> Option<String> {
        self.text(label).filter(|v| !v.trim().is_empty())
    }

    /// A list field's items (empty when absent): the items written under it, else its
    /// value split on `;` and `<br>` (and `,` for paths), each piece decoded.
    pub fn items(&self, label: &str) -> Vec<String> {
        let Some(field) = self.find(label) else { return vec![] };
        if !field.items.is_empty() {
            return field.items.clone();
        }
        split_inline(&field.raw, label.to_ascii_lowercase().contains("path"))
    }

    pub fn has(&self, label: &str) -> bool {
        self.find(label).is_some()
    }
}

fn split_inline(raw: &str, paths: bool) -> Vec<String> {
    let mut text = raw.to_string();
    for br in ["<br />", "<br/>", "<br>", "<BR>", "<BR/>", "<BR />"] {
        text = text.replace(br, ";");
    }
    // Separators inside a code span are part of the item.
    let mut pieces = vec![];
    let mut piece = String::new();
    let mut in_code = false;
    for c in text.chars() {
        if c == '`' {
            in_code = !in_code;
        }
        if !in_code && (c == ';' || (paths && c == ',')) {
            pieces.push(std::mem::take(&mut piece));
        } else {
            piece.push(c);
        }
    }
    pieces.push(piece);
    pieces.iter().map(|p| decode(p)).filter(|item| !item.trim().is_empty()).collect()
}

/// A label as compared: lower case, `_` and `-` as spaces, spaces collapsed, no
/// surrounding emphasis, code ticks or colon.
pub fn normalize_label(raw: &str) -> String {
    let mut text = raw.trim();
    loop {
        let before = text;
        text = text.trim_end_matches(':').trim();
        for mark in ["**", "__", "*", "_", "`"] {
            if text.len() >= 2 * mark.len() && text.starts_with(mark) && text.ends_with(mark) {
                text = text[mark.len()..text.len() - mark.len()].trim();
            }
        }
        if text == before {
            break;
        }
    }
    let spaced: String =
        text.chars().map(|c| if c == '_' || c == '-' { ' ' } else { c.to_ascii_lowercase() }).collect();
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A label people would write: short, letters, digits, spaces and `#`.
fn plausible_label(label: &str) -> bool {
    !label.is_empty()
        && label.chars().count() <= 40
        && label.chars().any(char::is_alphabetic)
        && label.chars().all(|c| c.is_alphanumeric() || c == ' ' || c == '#')
}

/// The line without a list bullet (`- `, `* `, `+ `, `1. `, `1) `), and whether it had one.
fn strip_bullet(line: &str) -> (&str, bool) {
    for bullet in ["- ", "* ", "+ "] {
        if let Some(rest) = line.strip_prefix(bullet) {
            return (rest.trim_start(), true);
        }
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if (1..=3).contains(&digits) {
        let rest = &line[digits..];
        if let Some(rest) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return (rest.trim_start(), true);
        }
    }
    (line, false)
}

/// A field on one line, in any of the forms people write: `- **Label:** value`,
/// `- **Label**: value`, `**Label:** value`, `- Label: value`, `Label: value` (the
/// bullet, and `__` for `**`, optional). Returns the normalised label and the raw value.
fn field_line(line: &str) -> Option<(String, String)> {
    let (rest, _) = strip_bullet(line);
    let (label, value) = if let Some(mark) = ["**", "__"].into_iter().find(|m| rest.starts_with(m)) {
        let inner_end = rest[2..].find(mark)? + 2;
        let inner = &rest[2..inner_end];
        let after = &rest[inner_end + 2..];
        if let Some(label) = inner.trim_end().strip_suffix(':') {
            (label, after)
        } else {
            (inner, after.trim_start().strip_prefix(':')?)
        }
    } else {
        let colon = rest.find(':')?;
        (&rest[..colon], &rest[colon + 1..])
    };
    let label = normalize_label(label);
    plausible_label(&label).then(|| (label, value.trim().to_string()))
}

/// The cells of a Markdown table row (`| a | b |`), split on unescaped pipes.
fn table_cells(line: &str) -> Vec<String> {
    let line = line.trim();
    let mut cells = vec![];
    let mut cell = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cell.push('|');
                chars.next();
            }
            '|' => cells.push(std::mem::take(&mut cell)),
            other => cell.push(other),
        }
    }
    cells.push(cell);
    if line.starts_with('|') {
        cells.remove(0);
    }
    if line.ends_with('|') && !line.ends_with("\\|") {
        cells.pop();
    }
    cells.into_iter().map(|c| c.trim().to_string()).collect()
}

fn is_table_separator(cells: &[String]) -> bool {
    !cells.is_empty()
        && cells.iter().all(|c| {
            let inner = c.trim().trim_start_matches(':').trim_end_matches(':');
            !inner.is_empty() && inner.chars().all(|ch| ch == '-')
        })
}

/// A heading: `#`…`######` (level 1–6) or a line that is all bold (`**Text**`, level 7).
#[derive(Debug, Clone, PartialEq)]
pub struct Heading {
    pub level: u8,
    pub text: String,
}

/// The heading on a line, if it is one. A bold line whose text ends with a colon is a
/// field with an empty value (`**Completed:**`), not a heading.
pub fn heading(line: &str) -> Option<Heading> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let line = line.trim();
    let hashes = line.chars().take_while(|c| *c == '#').count();
    if (1..=6).contains(&hashes) {
        let rest = &line[hashes..];
        if rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t') {
            let text = rest.trim().trim_end_matches('#').trim();
            return Some(Heading { level: hashes as u8, text: normalize_label(text) });
        }
        return None;
    }
    for mark in ["**", "__"] {
        if line.len() > 4 && line.starts_with(mark) && line.ends_with(mark) {
            let inner = line[2..line.len() - 2].trim();
            if inner.contains(mark) || inner.ends_with(':') || inner.is_empty() {
                return None;
            }
            return Some(Heading { level: 7, text: normalize_label(inner) });
        }
    }
    None
}

/// Whether a heading's text names `title` (`Persistence Record`, `Task Summary`): it
/// starts with it, after any leading symbols, and the next character is not a letter.
pub fn names(heading: &Heading, title: &str) -> bool {
    let title = normalize_label(title);
    let text = heading.text.trim_start_matches(|c: char| !c.is_alphanumeric());
    text.strip_prefix(title.as_str()).is_some_and(|rest| !rest.starts_with(char::is_alphanumeric))
}

/// The lines of a text that are outside fenced code blocks (the fences dropped too):
/// a template pasted in a code block is an example, not a record.
pub fn outside_fences(text: &str) -> Vec<&str> {
    let mut out = vec![];
    let mut fence: Option<(char, usize)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let mark = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = mark.map(|m| trimmed.chars().take_while(|c| *c == m).count()).unwrap_or(0);
        match (fence, mark) {
            (None, Some(m)) if run >= 3 && line.len() - trimmed.len() <= 3 => fence = Some((m, run)),
            (Some((m, n)), Some(c)) if c == m && run >= n && trimmed.trim_end().chars().all(|x| x == m) => {
                fence = None
            }
            (Some(_), _) => {}
            (None, _) => out.push(line),
        }
    }
    out
}

/// The sections of `lines` under a heading that names `title` (see [`names`]), each
/// without its heading. A section ends at the next heading of the same or a higher
/// level (a bold heading ends at any heading) or at another heading naming `title` or
/// any of `stops`. A title underlined with `===` or `---` counts as a heading too.
pub fn sections<'a>(lines: &[&'a str], title: &str, stops: &[&str]) -> Vec<Vec<&'a str>> {
    let mut found: Vec<Vec<&'a str>> = vec![];
    let mut open: Option<u8> = None;
    let mut skip_underline = false;
    for (i, line) in lines.iter().enumerate() {
        if std::mem::take(&mut skip_underline) {
            continue;
        }
        let setext = lines.get(i + 1).and_then(|next| {
            let next = next.trim();
            let underline =
                next.len() >= 2 && (next.chars().all(|c| c == '=') || next.chars().all(|c| c == '-'));
            let text = line.trim();
            (underline && !text.is_empty() && strip_bullet(text).0 == text && !text.contains(':')).then(
                || Heading { level: if next.starts_with('=') { 1 } else { 2 }, text: normalize_label(text) },
            )
        });
        let found_heading = heading(line).or_else(|| setext.clone());
        if let Some(h) = found_heading {
            if setext.is_some() && heading(line).is_none() {
                skip_underline = true;
            }
            if names(&h, title) {
                open = Some(h.level);
                found.push(vec![]);
                continue;
            }
            let ends = match open {
                Some(level) => h.level <= level || stops.iter().any(|s| names(&h, s)),
                None => false,
            };
            if ends {
                open = None;
            }
        }
        if open.is_some() {
            if let Some(section) = found.last_mut() {
                section.push(line);
            }
        }
    }
    found
}

/// Parses the fields out of lines, in every form [`field_line`] knows and in two-column
/// Markdown tables (`| Label | value |`). Lines that are neither a field nor an item of
/// a list field are skipped. A list field's items are the bulleted lines under it:
/// indented, or unindented when the field has no value on its own line. Any other
/// unindented line ends the list.
pub fn parse<'a>(lines: impl IntoIterator<Item = &'a str>) -> Parsed {
    let mut parsed = Parsed::default();
    // The field items go to, and whether its own line had no value.
    let mut open: Option<bool> = None;
    let mut in_table = false;
    let lines: Vec<&str> = lines.into_iter().collect();
    for (i, line) in lines.iter().enumerate() {
        let line = line.trim_end();
        if line.trim().is_empty() {
            in_table = false;
            continue;
        }
        let trimmed = line.trim_start();
        // A table without outer pipes is known by the separator row under its first row.
        let starts_table = || {
            trimmed.contains('|')
                && lines
                    .get(i + 1)
                    .is_some_and(|next| next.contains('|') && is_table_separator(&table_cells(next)))
        };
        if trimmed.starts_with('|') || (in_table && trimmed.contains('|')) || starts_table() {
            let cells = table_cells(trimmed);
            in_table = true;
            open = None;
            if is_table_separator(&cells) || cells.len() < 2 {
                continue;
            }
            let label = normalize_label(&cells[0]);
            if plausible_label(&label) {
                parsed.fields.push(Field { label, raw: cells[1].clone(), items: vec![] });
            }
            continue;
        }
        in_table = false;
        let indented = line.starts_with(' ') || line.starts_with('\t');
        let (item, bulleted) = strip_bullet(trimmed);
        if !indented {
            if let Some((label, raw)) = field_line(line) {
                open = Some(raw.is_empty());
                parsed.fields.push(Field { label, raw, items: vec![] });
                continue;
            }
            if !(bulleted && open == Some(true)) {
                open = None;
                continue;
            }
        }
        if let (true, Some(_), Some(field)) = (bulleted, open, parsed.fields.last_mut()) {
            field.items.push(decode(item));
        }
    }
    parsed
}

/// A time as people and agents write it: RFC 3339, or `YYYY-MM-DD[ T]HH:MM[:SS]` (UTC,
/// with an optional `Z` or ` UTC`), or a date alone (its midnight, UTC).
pub fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    let text = text.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(t.with_timezone(&Utc));
    }
    let bare = text.trim_end_matches(" UTC").trim_end_matches('Z').trim();
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"] {
        if let Ok(t) = NaiveDateTime::parse_from_str(bare, format) {
            return Some(t.and_utc());
        }
    }
    NaiveDate::parse_from_str(bare, "%Y-%m-%d").ok().and_then(|d| d.and_hms_opt(0, 0, 0)).map(|t| t.and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips_through_escaping() {
        for text in [
            "plain",
            "Vec<u8> and `code` and *stars* and back\\slash",
            "<!-- baton:summary:end -->",
            "ends with a backslash \\",
            "snake_case_is_left_alone",
        ] {
            let lines = render("Next", &FieldValue::Text(text.into()));
            assert_eq!(lines.len(), 1);
            assert!(!lines[0].contains("<!--"), "{}", lines[0]);
            assert_eq!(parse(lines.iter().map(String::as_str)).text("next").as_deref(), Some(text));
        }
    }

    #[test]
    fn paths_and_lists_round_trip() {
        let items = vec!["src/a.rs".to_string(), "odd `name`.md".into(), "a <!-- b".into()];
        let mut lines = render("Plan Path", &FieldValue::Path("docs/PLAN.md".into()));
        lines.extend(render("Key Paths", &FieldValue::List { items: items.clone(), paths: true, more: 2 }));
        lines.extend(render("Next", &FieldValue::Text(String::new())));
        assert_eq!(lines[0], "- **Plan Path:** `docs/PLAN.md`");
        let parsed = parse(lines.iter().map(String::as_str));
        assert_eq!(parsed.text("plan path").as_deref(), Some("docs/PLAN.md"));
        assert_eq!(parsed.items("Key Paths"), items);
        assert_eq!(parsed.text("next").as_deref(), Some(""));
        assert_eq!(parsed.nonempty("next"), None);
    }

    #[test]
    fn parsing_tolerates_other_text() {
        let text = "Some intro with **bold:** words inside.\n\n**Status:** paused\n* **Next:** ship it\n  - stray item after a field with a value\nA paragraph.\n  - not an item of anything\n- **Completed:**\n\n  - one\n  * two\n";
        let parsed = parse(text.lines());
        assert_eq!(parsed.text("status").as_deref(), Some("paused"));
        assert_eq!(parsed.text("next").as_deref(), Some("ship it"));
        assert_eq!(parsed.items("completed"), vec!["one", "two"]);
        assert!(!parsed.has("some intro with"));
    }

    fn record_fields(text: &str) -> Parsed {
        parse(text.lines())
    }

    #[test]
    fn every_field_form_people_write_is_read() {
        for text in [
            "- Status: blocked\n- Next: Ask for the staging key",
            "- **Status**: blocked\n- **Next**: Ask for the staging key",
            "**Status:** blocked\n**Next:** Ask for the staging key",
            "Status: blocked\nNext: Ask for the staging key",
            "* __Status__: blocked\n+ NEXT: Ask for the staging key",
            "1. status: blocked\n2. Next:   Ask for the staging key  ",
            "| Field | Value |\n|---|---|\n| Status | blocked |\n| **Next** | Ask for the staging key |",
            "| Status | blocked |\n| :--- | ---: |\n| next | Ask for the staging key |",
            "Status | blocked\n--- | ---\nNext | Ask for the staging key",
        ] {
            let parsed = record_fields(text);
            assert_eq!(parsed.text("Status").as_deref(), Some("blocked"), "{text}");
            assert_eq!(parsed.text("next").as_deref(), Some("Ask for the staging key"), "{text}");
        }
    }

    #[test]
    fn labels_are_compared_in_any_case_and_spelling() {
        let parsed =
            record_fields("PLAN_PATH: `docs/plan.md`\n- **key-paths:** `a.rs`, `b, c.rs`\nIssue #: #12");
        assert_eq!(parsed.text("Plan Path").as_deref(), Some("docs/plan.md"));
        assert_eq!(parsed.items("Key Paths"), vec!["a.rs", "b, c.rs"]);
        assert_eq!(parsed.text("issue #").as_deref(), Some("#12"));
        assert_eq!(normalize_label("**Updated_At:**"), "updated at");
    }

    #[test]
    fn lists_are_read_under_a_field_or_inline() {
        let parsed = record_fields(
            "Completed:\n- Read the router\n- Add the limiter\nNext: ship\n| Key Paths | `a.rs`<br>`b.rs` |\n- Blocker:\nNot an item.\n- stray",
        );
        assert_eq!(parsed.items("completed"), vec!["Read the router", "Add the limiter"]);
        assert_eq!(parsed.items("key paths"), vec!["a.rs", "b.rs"]);
        assert_eq!(parsed.items("blocker"), Vec::<String>::new());
        let inline = record_fields("- Completed: one; two;  three");
        assert_eq!(inline.items("completed"), vec!["one", "two", "three"]);
    }

    #[test]
    fn headings_any_level_bold_or_underlined_open_sections() {
        let text = "Intro\n## Persistence Record · handoff\n- Kind: handoff\n### Details\nStatus: x\n## Other\nNext: no\n**Persistence Record**\nNext: yes\n# Top\nPersistence Record\n---\nStage: 3\n";
        let lines: Vec<&str> = text.lines().collect();
        let found = sections(&lines, "Persistence Record", &[]);
        assert_eq!(found.len(), 3);
        assert_eq!(parse(found[0].iter().copied()).text("status").as_deref(), Some("x"));
        assert!(!parse(found[0].iter().copied()).has("next"));
        assert_eq!(parse(found[1].iter().copied()).text("next").as_deref(), Some("yes"));
        assert_eq!(parse(found[2].iter().copied()).text("stage").as_deref(), Some("3"));
        assert_eq!(heading("**Completed:**"), None);
        assert_eq!(heading("#hashtag"), None);
        assert!(names(&heading("### 📌 Persistence Record").unwrap(), "persistence record"));
        assert!(!names(&heading("## Persistence Records").unwrap(), "persistence record"));
    }

    #[test]
    fn fenced_code_is_not_read() {
        let text = "```md\n## Persistence Record\n- Status: example\n```\n~~~\nStatus: no\n~~~\nStatus: yes";
        let lines = outside_fences(text);
        assert_eq!(lines, vec!["Status: yes"]);
    }

    /// A small seeded generator of Markdown-ish noise: the parser must never panic on it.
    #[test]
    fn odd_markdown_never_panics() {
        let pieces = [
            "#",
            "##",
            "**",
            "__",
            "|",
            "\\",
            "`",
            "```",
            "~~~",
            ":",
            "- ",
            "* ",
            "1. ",
            "\n",
            "  ",
            "é",
            "—",
            "🙂",
            "Persistence Record",
            "Status",
            "Next",
            "Key Paths",
            "<br>",
            "---",
            "===",
            "<!--",
            "-->",
            " ",
            "a",
        ];
        let mut seed: u64 = 0x9e3779b97f4a7c15;
        for _ in 0..3000 {
            let mut text = String::new();
            for _ in 0..(seed % 40) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push_str(pieces[(seed % pieces.len() as u64) as usize]);
            }
            let lines = outside_fences(&text);
            for section in sections(&lines, "Persistence Record", &["Task Summary"]) {
                let parsed = parse(section.iter().copied());
                let _ = (parsed.items("key paths"), parsed.text("status"));
            }
            let _ = parse(text.lines()).items("completed");
            seed = seed.wrapping_add(1);
        }
    }
}
