//! The `- **Label:** value` lines that both the Task Summary and a Persistence Record are
//! made of: rendered so that GitHub shows them as written and no value can fake one of
//! baton's markers, and parsed back tolerantly (other people write in the same thread).
//!
//! A value is one line. Text is escaped with backslashes (`\`, `` ` ``, `*`, `<`, `!`), which
//! GitHub's Markdown removes when it renders; paths go in code spans. A list field has no
//! value on its line and one indented `  - item` line per item. An empty value renders as
//! `—` and reads back as empty.

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

/// Fields read from a block of lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    /// (label in lower case, value, list items), in order of appearance.
    pub fields: Vec<(String, String, Vec<String>)>,
}

impl Parsed {
    fn find(&self, label: &str) -> Option<&(String, String, Vec<String>)> {
        let label = label.to_ascii_lowercase();
        // The last one wins when a label appears twice.
        self.fields.iter().rev().find(|(l, _, _)| *l == label)
    }

    /// A text field's value; `None` when the field is absent.
    pub fn text(&self, label: &str) -> Option<String> {
        self.find(label).map(|(_, value, _)| value.clone())
    }

    /// A text field's value, `None` when absent or empty.
    pub fn nonempty(&self, label: &str) -> Option<String> {
        self.text(label).filter(|v| !v.trim().is_empty())
    }

    /// A list field's items (empty when absent).
    pub fn items(&self, label: &str) -> Vec<String> {
        self.find(label).map(|(_, _, items)| items.clone()).unwrap_or_default()
    }

    pub fn has(&self, label: &str) -> bool {
        self.find(label).is_some()
    }
}

/// `- **Label:** rest` or `**Label:** rest` at the start of a line.
fn field_line(line: &str) -> Option<(String, &str)> {
    let rest = line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")).unwrap_or(line);
    let rest = rest.strip_prefix("**")?;
    let end = rest.find(":**")?;
    let label = &rest[..end];
    let plausible = !label.is_empty()
        && label.len() <= 40
        && label.chars().all(|c| c.is_alphanumeric() || c == ' ' || c == '#' || c == '-');
    plausible.then(|| (label.trim().to_ascii_lowercase(), rest[end + 3..].trim()))
}

/// Parses the fields out of lines. Lines that are neither a field nor an item of a list
/// field are skipped; an unindented line of other text ends the current field's list.
pub fn parse<'a>(lines: impl IntoIterator<Item = &'a str>) -> Parsed {
    let mut parsed = Parsed::default();
    let mut open = false;
    for line in lines {
        let line = line.trim_end();
        if line.trim().is_empty() {
            continue;
        }
        let indented = line.starts_with(' ') || line.starts_with('\t');
        if !indented {
            if let Some((label, value)) = field_line(line) {
                parsed.fields.push((label, decode(value), vec![]));
                open = true;
            } else {
                open = false;
            }
            continue;
        }
        let trimmed = line.trim_start();
        let item = trimmed.strip_prefix("- ").or_else(|| trimmed.strip_prefix("* "));
        if let (true, Some(item), Some(field)) = (open, item, parsed.fields.last_mut()) {
            field.2.push(decode(item));
        }
    }
    parsed
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
}
