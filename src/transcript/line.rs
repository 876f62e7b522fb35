//! Lenient views of one transcript line. Every field may be missing, `null` or of the
//! wrong type in some Claude Code version; each of those reads as "absent", never as an
//! error. Also the text helpers that keep what is copied out of a transcript small and
//! printable.

use serde::Serialize;
use serde_json::Value;

/// The model name Claude Code gives messages it made up itself (no API call, no usage).
const SYNTHETIC_MODEL: &str = "<synthetic>";

/// Parses one line as a JSON object; anything else (cut off, invalid UTF-8, an array)
/// is `None`.
pub(crate) fn parse_line(bytes: &[u8]) -> Option<Value> {
    let trimmed = bytes.trim_ascii();
    if trimmed.first() != Some(&b'{') {
        return None;
    }
    match serde_json::from_slice::<Value>(trimmed) {
        Ok(value @ Value::Object(_)) => Some(value),
        _ => None,
    }
}

/// True when `needle` occurs in `haystack`: a cheap test that lets lines which cannot
/// matter skip the JSON parse.
pub(crate) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else { return true };
    let mut from = 0;
    while let Some(offset) = haystack[from..].iter().position(|&b| b == first) {
        let at = from + offset;
        if haystack[at + 1..].starts_with(rest) {
            return true;
        }
        from = at + 1;
    }
    false
}

/// A non-empty string.
pub(crate) fn text(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str).filter(|s| !s.trim().is_empty())
}

/// A token count: a non-negative integer, or a non-negative finite float (floored).
pub(crate) fn count(value: Option<&Value>) -> Option<u64> {
    let value = value?;
    value.as_u64().or_else(|| value.as_f64().filter(|n| n.is_finite() && *n >= 0.0).map(|n| n as u64))
}

/// An id that may be written as a string or a number.
pub(crate) fn id(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Token counts of one API response (or a sum of them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub input: u64,
    pub cache_creation: u64,
    pub cache_read: u64,
    pub output: u64,
}

impl Usage {
    /// Reads `message.usage`; `None` when none of the four counts is there.
    pub(crate) fn from_value(usage: &Value) -> Option<Usage> {
        let input = count(usage.get("input_tokens"));
        let cache_creation = count(usage.get("cache_creation_input_tokens"));
        let cache_read = count(usage.get("cache_read_input_tokens"));
        let output = count(usage.get("output_tokens"));
        if input.is_none() && cache_creation.is_none() && cache_read.is_none() && output.is_none() {
            return None;
        }
        Some(Usage {
            input: input.unwrap_or(0),
            cache_creation: cache_creation.unwrap_or(0),
            cache_read: cache_read.unwrap_or(0),
            output: output.unwrap_or(0),
        })
    }

    /// What the request put in the context window: every input kind, output excluded.
    pub fn context_tokens(&self) -> u64 {
        self.input.saturating_add(self.cache_creation).saturating_add(self.cache_read)
    }

    pub fn total(&self) -> u64 {
        self.context_tokens().saturating_add(self.output)
    }

    pub fn add(&mut self, other: &Usage) {
        self.input = self.input.saturating_add(other.input);
        self.cache_creation = self.cache_creation.saturating_add(other.cache_creation);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.output = self.output.saturating_add(other.output);
    }
}

/// One compaction, from a `compact_boundary` line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Compaction {
    /// `auto` or `manual`.
    pub trigger: Option<String>,
    pub pre_tokens: Option<u64>,
    pub post_tokens: Option<u64>,
    pub at: Option<String>,
}

/// One parsed line, read through accessors that never fail.
#[derive(Clone, Copy)]
pub(crate) struct Entry<'a>(pub &'a Value);

impl<'a> Entry<'a> {
    pub fn kind(self) -> Option<&'a str> {
        text(self.0.get("type"))
    }

    fn flag(self, key: &str) -> bool {
        self.0.get(key).and_then(Value::as_bool) == Some(true)
    }

    /// A subagent's line.
    pub fn is_sidechain(self) -> bool {
        self.flag("isSidechain")
    }

    /// A synthetic error message with no real usage.
    pub fn is_api_error(self) -> bool {
        self.flag("isApiErrorMessage")
    }

    pub fn is_meta(self) -> bool {
        self.flag("isMeta")
    }

    /// The summary Claude Code writes after a compaction, in a user line.
    pub fn is_compact_summary(self) -> bool {
        self.flag("isCompactSummary")
    }

    pub fn timestamp(self) -> Option<&'a str> {
        text(self.0.get("timestamp"))
    }

    pub fn str_field(self, key: &str) -> Option<&'a str> {
        text(self.0.get(key))
    }

    pub fn message(self) -> Option<&'a Value> {
        self.0.get("message").filter(|m| m.is_object())
    }

    pub fn message_id(self) -> Option<&'a str> {
        text(self.message()?.get("id"))
    }

    /// The model that answered; `None` for Claude Code's synthetic messages.
    pub fn model(self) -> Option<&'a str> {
        text(self.message()?.get("model")).filter(|m| *m != SYNTHETIC_MODEL)
    }

    pub fn is_synthetic(self) -> bool {
        self.message().and_then(|m| text(m.get("model"))) == Some(SYNTHETIC_MODEL)
    }

    pub fn usage(self) -> Option<Usage> {
        Usage::from_value(self.message()?.get("usage")?)
    }

    /// `message.content`, a string or an array of blocks.
    pub fn content(self) -> Option<&'a Value> {
        self.message()?.get("content")
    }

    /// The content blocks that are objects (none when the content is a string).
    pub fn blocks(self) -> impl Iterator<Item = &'a Value> {
        self.content().and_then(Value::as_array).into_iter().flatten().filter(|b| b.is_object())
    }

    /// An assistant line of the main conversation with a real API response.
    pub fn is_main_assistant(self) -> bool {
        self.kind() == Some("assistant")
            && !self.is_sidechain()
            && !self.is_api_error()
            && !self.is_synthetic()
    }

    pub fn is_compact_boundary(self) -> bool {
        self.kind() == Some("system") && text(self.0.get("subtype")) == Some("compact_boundary")
    }

    /// The compaction this line records, if it is a compact boundary.
    pub fn compaction(self) -> Option<Compaction> {
        if !self.is_compact_boundary() {
            return None;
        }
        let metadata = self.0.get("compactMetadata");
        let field = |key: &str| metadata.and_then(|m| m.get(key));
        Some(Compaction {
            trigger: text(field("trigger")).map(|t| clip(t, SHORT_TEXT_MAX)),
            pre_tokens: count(field("preTokens")),
            post_tokens: count(field("postTokens")),
            at: self.timestamp().map(|t| clip(t, SHORT_TEXT_MAX)),
        })
    }
}

/// The type of a content block.
pub(crate) fn block_type(block: &Value) -> Option<&str> {
    text(block.get("type"))
}

/// The text of a tool result's `content`: a string, or the text blocks of an array.
pub(crate) fn tool_result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| block_type(b) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Cap for ids, model names, timestamps and other short fields.
pub(crate) const SHORT_TEXT_MAX: usize = 200;

/// `text` cut to at most `max` bytes on a character boundary, with `…` when cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// One line for display: terminal escape sequences and control characters removed,
/// whitespace trimmed, then clipped to `max` bytes.
pub fn clean_line(line: &str, max: usize) -> String {
    let mut out = String::with_capacity(line.len().min(max + 8));
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI sequences (colours) run to a letter; other escapes are one character.
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            } else {
                chars.next();
            }
        } else if c == '\t' {
            out.push(' ');
        } else if !c.is_control() {
            out.push(c);
        }
        if out.len() > max * 2 {
            break;
        }
    }
    clip(out.trim(), max)
}

/// A transcript timestamp (RFC 3339) as Unix seconds.
pub fn unix_seconds(timestamp: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(timestamp.trim()).ok().map(|t| t.timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wrong_types_read_as_absent() {
        let value = json!({"type": 3, "isSidechain": "yes", "message": {"model": null, "usage": {
            "input_tokens": "12", "cache_read_input_tokens": -4, "output_tokens": 2.0}}});
        let entry = Entry(&value);
        assert_eq!(entry.kind(), None);
        assert!(!entry.is_sidechain());
        assert_eq!(entry.model(), None);
        assert_eq!(entry.usage(), Some(Usage { output: 2, ..Usage::default() }));
        assert!(parse_line(b"[1,2]").is_none());
        assert!(parse_line(b"{\"a\":").is_none());
        assert!(parse_line(b"{\"a\":\"\xff\"}").is_none());
    }

    #[test]
    fn contains_finds_needles() {
        assert!(contains(b"xx\"type\":\"assistant\"", b"\"assistant\""));
        assert!(!contains(b"assistan", b"assistant"));
        assert!(contains(b"aab", b"ab"));
    }

    #[test]
    fn clipping_respects_characters() {
        assert_eq!(clip("héllo", 10), "héllo");
        let clipped = clip(&"é".repeat(100), 11);
        assert!(clipped.len() <= 11 && clipped.ends_with('…'));
        assert_eq!(clean_line("  \u{1b}[31mexpected 429\u{1b}[39m\tgot 200\r ", 100), "expected 429 got 200");
    }

    #[test]
    fn timestamps_become_unix_seconds() {
        assert_eq!(unix_seconds("2026-11-28T10:00:14.000Z"), Some(1_795_860_014));
        assert_eq!(unix_seconds("yesterday"), None);
    }
}
