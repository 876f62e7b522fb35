//! The current context size, read from the end of a transcript: the fallback figure
//! when no statusline bridge is there. Cheap enough for every tool call: it reads
//! backwards until it has the answer, within a fixed budget.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::transcript::line::{self, Entry, SHORT_TEXT_MAX, clip, parse_line};
use crate::transcript::tail::TailStats;
// The whole-file readers below are the tests' way in; the hook and the statusline feed
// a `ContextScanner` from their own tail read.
#[cfg(test)]
use {
    crate::transcript::{file::open_transcript, tail::TailReader},
    std::{io, path::Path},
};

/// Most bytes read from the end to find the figure. A reply's line can carry a large
/// tool input (a whole file being written), so this is well above one line's usual size.
pub const CONTEXT_BUDGET: u64 = 16 * 1024 * 1024;

/// Once the figure is found, how much further back to look for an earlier compaction.
pub const COMPACTION_LOOKBACK: u64 = 256 * 1024;

/// Where a reading comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadingSource {
    /// The usage of the last main-chain reply.
    AssistantUsage,
    /// A compaction with no reply after it: its `postTokens`.
    CompactBoundary,
}

/// The context size the transcript shows now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContextReading {
    /// Tokens in the context: input + cache creation + cache read (output excluded).
    pub tokens: u64,
    pub source: ReadingSource,
    /// The model of the reply the figure comes from (none for a compaction).
    pub model: Option<String>,
    /// The time of the line the figure comes from.
    pub timestamp: Option<String>,
    /// Compact boundaries met in the part of the file that was scanned (up to the
    /// figure and [`COMPACTION_LOOKBACK`] before it).
    pub compactions_seen: u32,
    /// The time of the latest of those boundaries.
    pub last_compaction_at: Option<String>,
    /// The latest of those boundaries (trigger, sizes), for learning where the host
    /// compacts.
    pub last_compaction: Option<line::Compaction>,
    /// What was read to get here.
    pub stats: TailStats,
}

/// Limits for [`current_context_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg(test)]
pub struct ContextOptions {
    pub budget: u64,
    pub compaction_lookback: u64,
}

#[cfg(test)]
impl Default for ContextOptions {
    fn default() -> Self {
        ContextOptions { budget: CONTEXT_BUDGET, compaction_lookback: COMPACTION_LOOKBACK }
    }
}

/// The pure part of [`current_context`]: fed lines newest first, it keeps the first
/// figure it meets and counts compactions.
#[derive(Debug, Clone)]
pub struct ContextScanner {
    found: Option<(u64, ReadingSource, Option<String>, Option<String>)>,
    /// A compaction with no usable size came first: older usage is history, no figure.
    blocked: bool,
    compactions_seen: u32,
    last_compaction: Option<line::Compaction>,
    bytes_since_found: u64,
    lookback: u64,
    /// The file is a subagent's own transcript: its replies are sidechain lines.
    sidechain: bool,
}

impl ContextScanner {
    pub fn new(compaction_lookback: u64) -> Self {
        ContextScanner {
            found: None,
            blocked: false,
            compactions_seen: 0,
            last_compaction: None,
            bytes_since_found: 0,
            lookback: compaction_lookback,
            sidechain: false,
        }
    }

    /// A scanner for a subagent's own transcript (Claude Code's
    /// `subagents/agent-<id>.jsonl`), whose replies all carry `isSidechain: true`.
    pub fn for_subagent(compaction_lookback: u64) -> Self {
        ContextScanner { sidechain: true, ..ContextScanner::new(compaction_lookback) }
    }

    /// Takes the next line towards the start of the file. Returns false once no earlier
    /// line can change the result.
    pub fn feed(&mut self, line: &[u8]) -> bool {
        let settled = self.found.is_some() || self.blocked;
        if settled {
            self.bytes_since_found = self.bytes_since_found.saturating_add(line.len() as u64 + 1);
            if self.bytes_since_found > self.lookback {
                return false;
            }
        }
        // Most lines are tool results: skip the parse for lines that cannot matter.
        let boundary = line::contains(line, b"compact_boundary");
        if !boundary && (settled || !line::contains(line, b"assistant")) {
            return true;
        }
        let Some(value) = parse_line(line) else { return true };
        let entry = Entry(&value);
        if let Some(compaction) = entry.compaction() {
            self.compactions_seen += 1;
            if self.compactions_seen == 1 {
                self.last_compaction = Some(compaction.clone());
            }
            if !settled {
                match compaction.post_tokens {
                    Some(tokens) => {
                        self.found = Some((tokens, ReadingSource::CompactBoundary, None, compaction.at));
                    }
                    None => self.blocked = true,
                }
            }
            return true;
        }
        if !settled {
            self.take_usage(&value);
        }
        true
    }

    fn take_usage(&mut self, value: &Value) {
        let entry = Entry(value);
        let counts = if self.sidechain {
            entry.kind() == Some("assistant")
                && entry.is_sidechain()
                && !entry.is_api_error()
                && !entry.is_synthetic()
        } else {
            entry.is_main_assistant()
        };
        if !counts {
            return;
        }
        // Streamed lines of one reply share an id; read backwards, the first one met is
        // the final one. A reply without any context tokens is no reading.
        let Some(tokens) = entry.usage().map(|u| u.context_tokens()).filter(|t| *t > 0) else { return };
        self.found = Some((
            tokens,
            ReadingSource::AssistantUsage,
            entry.model().map(|m| clip(m, SHORT_TEXT_MAX)),
            entry.timestamp().map(|t| clip(t, SHORT_TEXT_MAX)),
        ));
    }

    /// A figure was found (or a compaction with no size blocks older ones).
    pub fn settled(&self) -> bool {
        self.found.is_some() || self.blocked
    }

    pub fn finish(self, stats: TailStats) -> Option<ContextReading> {
        let (tokens, source, model, timestamp) = self.found?;
        Some(ContextReading {
            tokens,
            source,
            model,
            timestamp,
            compactions_seen: self.compactions_seen,
            last_compaction_at: self.last_compaction.as_ref().and_then(|c| c.at.clone()),
            last_compaction: self.last_compaction,
            stats,
        })
    }
}

/// The current context from lines given newest first (no I/O).
#[cfg(test)]
pub fn context_from_lines<'a>(
    lines_newest_first: impl IntoIterator<Item = &'a [u8]>,
    compaction_lookback: u64,
) -> Option<ContextReading> {
    let mut scanner = ContextScanner::new(compaction_lookback);
    for line in lines_newest_first {
        if !scanner.feed(line) {
            break;
        }
    }
    scanner.finish(TailStats::default())
}

/// The current context of the transcript at `path`, with the default limits.
/// `Ok(None)`: no figure in the part read (no reply with usage, no compaction). An error
/// (a missing file, say) means "no transcript".
#[cfg(test)]
pub fn current_context(path: &Path) -> io::Result<Option<ContextReading>> {
    current_context_with(path, ContextOptions::default())
}

/// [`current_context`] with explicit limits.
#[cfg(test)]
pub fn current_context_with(path: &Path, options: ContextOptions) -> io::Result<Option<ContextReading>> {
    context_from_source(&open_transcript(path)?, options)
}

/// [`current_context_with`] over any seekable source (a file, or a test's stand-in).
#[cfg(test)]
pub fn context_from_source(
    source: impl io::Read + io::Seek,
    options: ContextOptions,
) -> io::Result<Option<ContextReading>> {
    let mut tail = TailReader::new(source, options.budget)?;
    let mut scanner = ContextScanner::new(options.compaction_lookback);
    while let Some(line) = tail.next_line()? {
        if !scanner.feed(&line) {
            break;
        }
    }
    Ok(scanner.finish(tail.stats()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const FIXTURE: &[u8] = include_bytes!("../../../tests/fixtures/transcript.jsonl");

    fn newest_first(bytes: &[u8]) -> Vec<&[u8]> {
        let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        lines.reverse();
        lines
    }

    fn reading(bytes: &[u8]) -> Option<ContextReading> {
        context_from_lines(newest_first(bytes), COMPACTION_LOOKBACK)
    }

    fn assistant(id: &str, tokens: (u64, u64, u64), extra: &str) -> String {
        format!(
            r#"{{"type":"assistant","timestamp":"2026-01-01T00:00:00Z"{extra},"message":{{"id":"{id}","model":"claude-x","usage":{{"input_tokens":{},"cache_creation_input_tokens":{},"cache_read_input_tokens":{},"output_tokens":7}}}}}}"#,
            tokens.0, tokens.1, tokens.2
        )
    }

    fn boundary(post: u64, at: &str) -> String {
        format!(
            r#"{{"type":"system","subtype":"compact_boundary","timestamp":"{at}","compactMetadata":{{"trigger":"auto","preTokens":160000,"postTokens":{post}}}}}"#
        )
    }

    #[test]
    fn fixture_gives_the_last_main_chain_reply() {
        let reading = reading(FIXTURE).unwrap();
        assert_eq!(reading.tokens, 144_012);
        assert_eq!(reading.source, ReadingSource::AssistantUsage);
        assert_eq!(reading.model.as_deref(), Some("claude-opus-4-5-20251101"));
        assert_eq!(reading.timestamp.as_deref(), Some("2026-11-28T10:00:22.000Z"));
        assert_eq!(reading.compactions_seen, 1);
        assert_eq!(reading.last_compaction_at.as_deref(), Some("2026-11-28T10:00:14.000Z"));
    }

    #[test]
    fn fixture_from_a_file_reads_only_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, FIXTURE).unwrap();
        let reading = current_context(&path).unwrap().unwrap();
        assert_eq!(reading.tokens, 144_012);
        assert_eq!(reading.stats.bytes_read, FIXTURE.len() as u64);
    }

    #[test]
    fn sidechain_and_error_lines_are_not_the_context() {
        let text = [
            assistant("m1", (1, 2, 3), ""),
            assistant("m2", (10, 30_000, 150_000), r#","isSidechain":true"#),
            assistant("m3", (0, 0, 0), r#","isApiErrorMessage":true"#),
        ]
        .join("\n");
        assert_eq!(reading(text.as_bytes()).unwrap().tokens, 6);
    }

    #[test]
    fn only_sidechain_lines_give_no_figure() {
        let text = assistant("m2", (10, 30_000, 150_000), r#","isSidechain":true"#);
        assert_eq!(reading(text.as_bytes()), None);
    }

    #[test]
    fn a_subagent_transcript_is_read_from_its_sidechain_lines() {
        let text = [
            assistant("m1", (1, 2, 3), ""),
            assistant("m2", (10, 30_000, 150_000), r#","isSidechain":true"#),
        ]
        .join("\n");
        let mut scanner = ContextScanner::for_subagent(0);
        for line in newest_first(text.as_bytes()) {
            if !scanner.feed(line) {
                break;
            }
        }
        assert_eq!(scanner.finish(TailStats::default()).unwrap().tokens, 180_010);
    }

    #[test]
    fn no_usage_anywhere_gives_no_figure() {
        let text = r#"{"type":"user","message":{"role":"user","content":"hi"}}
{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"hello"}]}}"#;
        assert_eq!(reading(text.as_bytes()), None);
        assert_eq!(reading(b""), None);
    }

    #[test]
    fn a_compaction_as_the_last_line_gives_its_post_tokens() {
        let text =
            [assistant("m1", (5, 5_000, 150_000), ""), boundary(41_800, "2026-01-01T00:01:00Z")].join("\n");
        let reading = reading(text.as_bytes()).unwrap();
        assert_eq!(reading.tokens, 41_800);
        assert_eq!(reading.source, ReadingSource::CompactBoundary);
        assert_eq!(reading.timestamp.as_deref(), Some("2026-01-01T00:01:00Z"));
        assert_eq!(reading.compactions_seen, 1);
    }

    #[test]
    fn a_compaction_without_a_size_hides_older_usage() {
        let text = [
            assistant("m1", (5, 5_000, 150_000), ""),
            r#"{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"manual"}}"#.into(),
        ]
        .join("\n");
        assert_eq!(reading(text.as_bytes()), None);
    }

    #[test]
    fn several_compactions_are_counted_and_the_latest_time_kept() {
        let text = [
            boundary(30_000, "2026-01-01T00:01:00Z"),
            assistant("m1", (5, 5_000, 100_000), ""),
            boundary(40_000, "2026-01-01T00:02:00Z"),
            assistant("m2", (5, 1_000, 40_000), ""),
        ]
        .join("\n");
        let reading = reading(text.as_bytes()).unwrap();
        assert_eq!(reading.tokens, 41_005);
        assert_eq!(reading.compactions_seen, 2);
        assert_eq!(reading.last_compaction_at.as_deref(), Some("2026-01-01T00:02:00Z"));
    }

    #[test]
    fn streamed_lines_of_one_reply_count_once_and_the_last_wins() {
        let text = [assistant("m1", (1, 1, 1), ""), assistant("m1", (2, 2, 2), "")].join("\n");
        assert_eq!(reading(text.as_bytes()).unwrap().tokens, 6);
    }

    #[test]
    fn a_cut_off_last_line_and_invalid_utf8_are_skipped() {
        let mut bytes = assistant("m1", (1, 2, 3), "").into_bytes();
        bytes.extend_from_slice(b"\n{\"type\":\"assistant\",\"x\":\"\xff\xfe\",\"message\":{}}\n");
        bytes.extend_from_slice(br#"{"type":"assistant","message":{"id":"m2","usage":{"input_tokens":9"#);
        assert_eq!(reading(&bytes).unwrap().tokens, 6);
    }

    #[test]
    fn a_ten_megabyte_line_is_read_within_the_budget() {
        let huge = "x".repeat(10 * 1024 * 1024);
        let text =
            [assistant("m1", (1, 2, 3), ""), assistant("m2", (4, 5, 6), &format!(r#","padding":"{huge}""#))]
                .join("\n");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, &text).unwrap();
        assert_eq!(current_context(&path).unwrap().unwrap().tokens, 15);
        // With a budget smaller than the line, the line is never loaded.
        let small = ContextOptions { budget: 1024 * 1024, compaction_lookback: 0 };
        let reading = current_context_with(&path, small).unwrap();
        assert_eq!(reading, None);
    }

    #[test]
    fn empty_and_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.jsonl");
        std::fs::write(&path, b"").unwrap();
        assert_eq!(current_context(&path).unwrap(), None);
        let missing = current_context(&dir.path().join("missing.jsonl")).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn a_large_transcript_is_read_only_at_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl");
        let mut file = io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let padding = format!(
            "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"content\":\"{}\"}}]}}}}\n",
            "p".repeat(4000)
        );
        let mut written = 0u64;
        while written < 64 * 1024 * 1024 {
            file.write_all(padding.as_bytes()).unwrap();
            written += padding.len() as u64;
        }
        let older_reply = format!("{}\n", assistant("old", (1, 1, 1), ""));
        file.write_all(older_reply.as_bytes()).unwrap();
        file.write_all(FIXTURE).unwrap();
        file.flush().unwrap();
        drop(file);

        let reading = current_context(&path).unwrap().unwrap();
        assert_eq!(reading.tokens, 144_012);
        assert_eq!(reading.stats.source_len, written + older_reply.len() as u64 + FIXTURE.len() as u64);
        assert!(
            reading.stats.bytes_read
                <= FIXTURE.len() as u64 + COMPACTION_LOOKBACK + 2 * crate::transcript::tail::CHUNK_SIZE,
            "read {} bytes",
            reading.stats.bytes_read
        );
    }

    /// A transcript of `len` bytes that exists only as arithmetic (tool-result lines, then
    /// one reply at the very end), counting every byte read from it: what the reader
    /// costs, measured outside the reader.
    struct Synthetic {
        len: u64,
        pos: u64,
        filler: Vec<u8>,
        reply: Vec<u8>,
        bytes_read: std::rc::Rc<std::cell::Cell<u64>>,
        seeks: std::rc::Rc<std::cell::Cell<u64>>,
    }

    impl Synthetic {
        fn byte_at(&self, at: u64) -> u8 {
            let reply_start = self.len - self.reply.len() as u64;
            if at >= reply_start {
                self.reply[(at - reply_start) as usize]
            } else if at + 1 == reply_start {
                b'\n'
            } else {
                self.filler[(at % self.filler.len() as u64) as usize]
            }
        }
    }

    impl io::Read for Synthetic {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = (self.len.saturating_sub(self.pos)).min(buf.len() as u64) as usize;
            for (i, byte) in buf[..n].iter_mut().enumerate() {
                *byte = self.byte_at(self.pos + i as u64);
            }
            self.pos += n as u64;
            self.bytes_read.set(self.bytes_read.get() + n as u64);
            Ok(n)
        }
    }

    impl io::Seek for Synthetic {
        fn seek(&mut self, to: io::SeekFrom) -> io::Result<u64> {
            self.seeks.set(self.seeks.get() + 1);
            self.pos = match to {
                io::SeekFrom::Start(at) => at,
                io::SeekFrom::End(back) => self.len.saturating_add_signed(back),
                io::SeekFrom::Current(by) => self.pos.saturating_add_signed(by),
            };
            Ok(self.pos)
        }
    }

    /// Reads the figure from a synthetic transcript of `len` bytes: (tokens, bytes read,
    /// seeks).
    fn read_synthetic(len: u64) -> (u64, u64, u64) {
        let filler = format!(
            "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"content\":\"{}\"}}]}}}}\n",
            "output line of a tool ".repeat(40)
        );
        let bytes_read = std::rc::Rc::new(std::cell::Cell::new(0));
        let seeks = std::rc::Rc::new(std::cell::Cell::new(0));
        let source = Synthetic {
            len,
            pos: 0,
            filler: filler.into_bytes(),
            reply: format!("{}\n", assistant("last", (10, 1_000, 79_000), "")).into_bytes(),
            bytes_read: bytes_read.clone(),
            seeks: seeks.clone(),
        };
        let reading = context_from_source(source, ContextOptions::default()).unwrap().unwrap();
        assert_eq!(reading.stats.bytes_read, bytes_read.get(), "the reader's own count agrees");
        (reading.tokens, bytes_read.get(), seeks.get())
    }

    #[test]
    fn the_bytes_read_do_not_grow_with_the_transcript() {
        let (tokens, small, small_seeks) = read_synthetic(1 << 20);
        assert_eq!(tokens, 80_010);
        // The figure is in the last line; what is read is that line's chunk and the
        // lookback for an earlier compaction, whatever the size of the file.
        assert!(small <= COMPACTION_LOOKBACK + 2 * crate::transcript::tail::CHUNK_SIZE, "read {small} bytes");
        for len in [1 << 30, 1 << 40, u64::MAX / 2] {
            let (tokens, read, seeks) = read_synthetic(len);
            assert_eq!(tokens, 80_010);
            assert_eq!(
                (read, seeks),
                (small, small_seeks),
                "a {len}-byte transcript costs what a 1 MiB one does"
            );
        }
    }
}
