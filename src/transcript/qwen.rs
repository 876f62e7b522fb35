//! Qwen Code's chat recording (`~/.qwen/projects/<slug>/chats/<session>.jsonl`): the
//! context figure. Each reply is an `assistant` line with `usageMetadata.promptTokenCount`
//! (the whole prompt) and `model`; a `system` line of subtype `chat_compression` marks a
//! compression, with `systemPayload.info.newTokenCount`, the size after it. The figure is
//! the newest reply's prompt after the last compression, else that compression's size.
//!
//! Read from the end, within a budget; a line that does not parse is skipped.

use std::io;
use std::path::Path;

use serde_json::Value;

use super::{TailReader, clip, open_transcript, unix_seconds};

/// Most bytes read from the end of a recording.
pub const RECORDING_BUDGET: u64 = 8 * 1024 * 1024;

/// What the recording says about the context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QwenReading {
    pub tokens: u64,
    pub model: Option<String>,
    pub written_at: Option<i64>,
    /// The figure is a compression's size, not a reply's.
    pub after_compression: bool,
}

/// The figure one line gives, if any (pure): a reply's prompt tokens, or a compression's
/// new size.
pub fn reading_from_line(line: &[u8]) -> Option<QwenReading> {
    let reply = memchr::memmem::find(line, b"promptTokenCount").is_some();
    let compression = memchr::memmem::find(line, b"chat_compression").is_some();
    if !reply && !compression {
        return None;
    }
    let value = serde_json::from_slice::<Value>(line.trim_ascii()).ok()?;
    let written_at = value.get("timestamp").and_then(Value::as_str).and_then(unix_seconds);
    match value.get("type").and_then(Value::as_str) {
        Some("assistant") => {
            let tokens = value
                .pointer("/usageMetadata/promptTokenCount")
                .and_then(Value::as_u64)
                .filter(|t| *t > 0)?;
            let model = value.get("model").and_then(Value::as_str).map(|m| clip(m, 200));
            Some(QwenReading { tokens, model, written_at, after_compression: false })
        }
        Some("system") if value.get("subtype").and_then(Value::as_str) == Some("chat_compression") => {
            let tokens = value.pointer("/systemPayload/info/newTokenCount").and_then(Value::as_u64)?;
            Some(QwenReading { tokens, model: None, written_at, after_compression: true })
        }
        _ => None,
    }
}

/// Reads the recording at `path` from its end, within [`RECORDING_BUDGET`].
pub fn read(path: &Path) -> io::Result<Option<QwenReading>> {
    let file = open_transcript(path)?;
    let mut tail = TailReader::new(&file, RECORDING_BUDGET)?;
    while let Some(line) = tail.next_line()? {
        if let Some(reading) = reading_from_line(&line) {
            return Ok(Some(reading));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORDING: &[u8] = include_bytes!("../../tests/fixtures/real/qwen/transcript-with-compress.jsonl");

    #[test]
    fn the_newest_reply_or_compression_gives_the_figure() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chat.jsonl");
        std::fs::write(&path, RECORDING).unwrap();
        // The recording ends with a /compress: its new size is the figure.
        let reading = read(&path).unwrap().unwrap();
        assert_eq!(reading.tokens, 9_949);
        assert!(reading.after_compression);
        // Before it, the last reply's prompt.
        let cut = memchr::memmem::find(RECORDING, b"\"subtype\":\"chat_compression\"").unwrap();
        let start = RECORDING[..cut].iter().rposition(|b| *b == b'\n').unwrap();
        std::fs::write(&path, &RECORDING[..=start]).unwrap();
        let reading = read(&path).unwrap().unwrap();
        assert_eq!(reading.tokens, 10_024);
        assert_eq!(reading.model.as_deref(), Some("qwen3-coder-plus"));
        assert!(!reading.after_compression);
    }

    #[test]
    fn other_lines_give_nothing() {
        assert_eq!(
            reading_from_line(br#"{"type":"user","message":{"parts":[{"text":"promptTokenCount"}]}}"#),
            None
        );
        assert_eq!(reading_from_line(b"not json promptTokenCount"), None);
        let zero = br#"{"type":"assistant","usageMetadata":{"promptTokenCount":0}}"#;
        assert_eq!(reading_from_line(zero), None);
    }
}
