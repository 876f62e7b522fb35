//! Claude Code's figure at the end of its transcript, read from a known point on (where
//! the statusline's bridge says the transcript ended): the newest main-chain reply's
//! tokens, whether the tool call's own reply is written yet, and what came after it; a
//! subagent's from its own transcript beside the session's.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::context::{COMPACTION_LOOKBACK, CONTEXT_BUDGET, ContextReading, ContextScanner, ReadingSource};
use crate::transcript::file::open_transcript;
use crate::transcript::line::unix_seconds;
use crate::transcript::resume::{FileStamp, Mark, Plan, mark_after, plan_for};
use crate::transcript::tail::{TailReader, TailStats};

/// What the end of the transcript says, read from a known point on.
#[derive(Debug, Clone, PartialEq)]
pub struct TranscriptTail {
    /// The newest main-chain figure in the part read (None: nothing newer there).
    pub reading: Option<ContextReading>,
    /// The tool call's `tool_use_id` appears in the part read, at or after the figure.
    pub tool_use_seen: bool,
    /// Bytes of tool results written after the figure's line: what the next reply reads.
    pub bytes_after_figure: u64,
    /// The file's size when it was read.
    pub len: u64,
    /// The stretch from the figure's line to where an earlier read stopped, when the
    /// figure is that read's ([`read_resuming`]): this read did not look there for the
    /// tool call ([`seen_between`] does, when it matters).
    pub unread_after_figure: Option<(u64, u64)>,
}

/// What a read of Claude Code's transcript leaves for the next one ([`read_resuming`]):
/// the newest figure, where its line starts and what was written after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureState {
    /// The file is a subagent's own transcript (its sidechain replies count).
    pub sidechain: bool,
    pub figure: Option<KeptFigure>,
    /// A compaction without a size came after every figure: no figure until a newer one.
    pub blocked: bool,
}

/// The figure a read found, as kept for the next read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeptFigure {
    pub tokens: u64,
    pub source: ReadingSource,
    pub model: Option<String>,
    pub timestamp: Option<String>,
    /// Where the figure's line starts.
    pub line_at: u64,
    /// Bytes of tool results written after it.
    pub bytes_after: u64,
}

/// The kept figure as a reading of a read that found no newer one.
fn kept_reading(kept: &KeptFigure, stats: TailStats) -> ContextReading {
    ContextReading {
        tokens: kept.tokens,
        source: kept.source,
        model: kept.model.clone(),
        timestamp: kept.timestamp.clone(),
        compactions_seen: 0,
        last_compaction_at: None,
        last_compaction: None,
        stats,
    }
}

/// Claude Code's mark: where the last read of a context's transcript stopped.
pub type FigureMark = Mark<FigureState>;

/// Reads the transcript backwards from its end down to byte `from` at most (and never
/// more than the context budget): the newest figure, whether `tool_use_id` is written,
/// and how much came after the figure.
pub fn read_since(path: &Path, from: u64, tool_use_id: Option<&str>) -> io::Result<TranscriptTail> {
    read_with(path, from, tool_use_id, COMPACTION_LOOKBACK)
}

/// [`read_since`], looking `lookback` bytes past the figure for earlier compactions (to
/// learn where the host compacts); 0 when only the figure matters.
pub fn read_with(
    path: &Path,
    from: u64,
    tool_use_id: Option<&str>,
    lookback: u64,
) -> io::Result<TranscriptTail> {
    read_scanning(path, from, tool_use_id, ContextScanner::new(lookback))
}

fn read_scanning(
    path: &Path,
    from: u64,
    tool_use_id: Option<&str>,
    scanner: ContextScanner,
) -> io::Result<TranscriptTail> {
    let file = open_transcript(path)?;
    let len = file.metadata()?.len();
    Ok(scan(&file, len, from, tool_use_id, scanner)?.tail)
}

/// What one backward scan found.
struct Scan {
    tail: TranscriptTail,
    /// The scan settled (a figure, or a compaction that hides older ones).
    settled: bool,
    /// Where the figure's line starts.
    figure_at: u64,
    stats: TailStats,
}

/// Scans `file` (of `len` bytes) backwards down to byte `from` at most.
fn scan(
    file: &std::fs::File,
    len: u64,
    from: u64,
    tool_use_id: Option<&str>,
    mut scanner: ContextScanner,
) -> io::Result<Scan> {
    // One byte more than what came after `from`: the newline before it, which tells the
    // reader that the first line after `from` is whole.
    let budget = (len.saturating_sub(from) + u64::from(from > 0 && from <= len)).min(CONTEXT_BUDGET);
    let mut tail = TailReader::new(file, budget)?;
    let needle = tool_use_id.filter(|id| !id.is_empty()).map(str::as_bytes);
    let mut tool_use_seen = false;
    let mut bytes_after_figure = 0u64;
    let mut figure_at = 0;
    while let Some(line) = tail.next_line()? {
        let before = scanner.settled();
        if !before && needle.is_some_and(|n| memchr::memmem::find(&line, n).is_some()) {
            tool_use_seen = true;
        }
        if !scanner.feed(&line) {
            break;
        }
        if !before {
            if scanner.settled() {
                figure_at = tail.line_start();
            } else {
                bytes_after_figure += tool_result_bytes(&line);
            }
        }
    }
    let settled = scanner.settled();
    let stats = tail.stats();
    let tail = TranscriptTail {
        reading: scanner.finish(stats),
        tool_use_seen,
        bytes_after_figure,
        len,
        unread_after_figure: None,
    };
    Ok(Scan { tail, settled, figure_at, stats })
}

/// The newest figure of the transcript at `path`, read from where the last read of this
/// context stopped (`kept`, its [`FigureMark`]): an unchanged file is not read at all, an
/// appended one only from the last complete line read on; a replaced, truncated or
/// rewritten one, or none kept, from its end within the context budget. Returns the tail
/// and the mark to keep, when it changed.
pub fn read_resuming(
    path: &Path,
    tool_use_id: Option<&str>,
    sidechain: bool,
    kept: Option<&FigureMark>,
) -> io::Result<(TranscriptTail, Option<FigureMark>)> {
    let file = open_transcript(path)?;
    let now = FileStamp::of(&file)?;
    let kept = kept.filter(|m| m.state.sidechain == sidechain);
    let scanner = || {
        if sidechain { ContextScanner::for_subagent(0) } else { ContextScanner::new(COMPACTION_LOOKBACK) }
    };
    let from = match plan_for(&file, &now, kept, CONTEXT_BUDGET) {
        Plan::Unchanged => {
            // A blocked state keeps no figure.
            let figure = kept.and_then(|m| m.state.figure.as_ref());
            let stats = TailStats { source_len: now.len, ..TailStats::default() };
            let tail = TranscriptTail {
                reading: figure.map(|f| kept_reading(f, stats)),
                tool_use_seen: false,
                bytes_after_figure: figure.map_or(0, |f| f.bytes_after),
                len: now.len,
                unread_after_figure: figure.zip(kept).map(|(f, m)| (f.line_at, m.resume_at)),
            };
            return Ok((tail, None));
        }
        Plan::From(at) => Some(at),
        Plan::Whole => None,
    };
    let scan = scan(&file, now.len, from.unwrap_or(0), tool_use_id, scanner())?;
    let mut tail = scan.tail;
    let state = if scan.settled || from.is_none() {
        let figure = tail.reading.as_ref().map(|r| KeptFigure {
            tokens: r.tokens,
            source: r.source,
            model: r.model.clone(),
            timestamp: r.timestamp.clone(),
            line_at: scan.figure_at,
            bytes_after: tail.bytes_after_figure,
        });
        FigureState { sidechain, blocked: scan.settled && figure.is_none(), figure }
    } else {
        // Nothing newer was appended: the kept figure stands, with what came after it.
        let mut state =
            kept.map(|m| m.state.clone()).unwrap_or(FigureState { sidechain, figure: None, blocked: false });
        if let Some(figure) = state.figure.as_mut() {
            figure.bytes_after += tail.bytes_after_figure;
            tail.bytes_after_figure = figure.bytes_after;
            tail.reading = Some(kept_reading(figure, scan.stats));
            tail.unread_after_figure = from.map(|at| (figure.line_at, at));
        }
        state
    };
    let complete_end = match from {
        Some(at) => scan.stats.complete_end.or(Some(at)),
        None => scan.stats.complete_end.or(scan.stats.reached_start.then_some(0)),
    };
    Ok((tail, mark_after(&file, now, complete_end, state)))
}

/// Whether `tool_use_id` is written in the stretch `[start, end)` of the transcript (its
/// last [`SEEN_BEFORE_BUDGET`] bytes at most).
pub fn seen_between(path: &Path, (start, end): (u64, u64), tool_use_id: &str) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    if tool_use_id.is_empty() || end <= start {
        return false;
    }
    let start = start.max(end.saturating_sub(SEEN_BEFORE_BUDGET));
    let Ok(mut file) = open_transcript(path) else { return false };
    if file.seek(SeekFrom::Start(start)).is_err() {
        return false;
    }
    let mut bytes = Vec::new();
    if file.take(end - start).read_to_end(&mut bytes).is_err() {
        return false;
    }
    memchr::memmem::rfind(&bytes, tool_use_id.as_bytes()).is_some()
}

/// The bytes of the tool results a transcript line carries (text and image data as sent).
fn tool_result_bytes(line: &[u8]) -> u64 {
    if memchr::memmem::find(line, b"tool_result").is_none() {
        return 0;
    }
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(line.trim_ascii()) else { return 0 };
    let Some(blocks) = value.pointer("/message/content").and_then(|c| c.as_array()) else { return 0 };
    let text_len = |v: &serde_json::Value| v.as_str().map_or(0, str::len) as u64;
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(|t| t.as_str()) == Some("tool_result"))
        .map(|b| match b.get("content") {
            Some(serde_json::Value::Array(parts)) => parts
                .iter()
                .map(|p| {
                    text_len(p.get("text").unwrap_or(&serde_json::Value::Null))
                        + p.pointer("/source/data").map_or(0, text_len)
                })
                .sum(),
            Some(other) => text_len(other),
            None => 0,
        })
        .sum()
}

/// The whole-tail reading (no bridge to start from).
#[cfg(test)]
pub fn read(path: &Path, tool_use_id: Option<&str>) -> io::Result<TranscriptTail> {
    read_since(path, 0, tool_use_id)
}

/// The transcript's size now.
pub fn transcript_len(path: &Path) -> Option<u64> {
    open_transcript(path).and_then(|f| f.metadata()).map(|m| m.len()).ok()
}

/// When the transcript was last written (Unix seconds).
pub fn modified_at(path: &Path) -> Option<i64> {
    let modified = open_transcript(path).and_then(|f| f.metadata()).and_then(|m| m.modified()).ok()?;
    modified.duration_since(std::time::UNIX_EPOCH).ok().map(|d| d.as_secs() as i64)
}

/// Where Claude Code writes a subagent's own transcript: beside the parent's, in
/// `<session>/subagents/agent-<agent_id>.jsonl`. `None` for ids that could leave it.
pub fn subagent_transcript(parent: &Path, session_id: &str, agent_id: &str) -> Option<PathBuf> {
    let ok = |id: &str| crate::fsx::valid_session_id(id);
    if !ok(session_id) || !ok(agent_id) {
        return None;
    }
    let dir = parent.parent()?;
    Some(dir.join(session_id).join("subagents").join(format!("agent-{agent_id}.jsonl")))
}

/// The newest figure of a subagent's own transcript (its sidechain replies).
pub fn read_subagent(path: &Path, tool_use_id: Option<&str>) -> io::Result<TranscriptTail> {
    read_scanning(path, 0, tool_use_id, ContextScanner::for_subagent(0))
}

/// How far back before a bridge's offset [`seen_before`] looks for the tool call.
const SEEN_BEFORE_BUDGET: u64 = 1024 * 1024;

/// Whether `tool_use_id` is written in the last stretch of the transcript before byte
/// `offset` (at most [`SEEN_BEFORE_BUDGET`] bytes): the statusline rendered after the
/// reply that issued the tool call, so the bridge already counts it.
pub fn seen_before(path: &Path, offset: u64, tool_use_id: &str) -> bool {
    offset > 0 && seen_between(path, (0, offset), tool_use_id)
}

/// Reads a reading's time as Unix seconds.
pub fn written_at(reading: &ContextReading) -> Option<i64> {
    reading.timestamp.as_deref().and_then(unix_seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_subagent_transcript_sits_beside_the_parent() {
        let parent = Path::new("/c/projects/-p/s1.jsonl");
        assert_eq!(
            subagent_transcript(parent, "s1", "a9").unwrap(),
            PathBuf::from("/c/projects/-p/s1/subagents/agent-a9.jsonl")
        );
        assert_eq!(subagent_transcript(parent, "s1", "../x"), None);
    }

    fn line(id: &str, tokens: u64, tool: Option<&str>) -> String {
        let content = match tool {
            Some(t) => serde_json::json!([{"type": "tool_use", "id": t, "name": "Bash", "input": {}}]),
            None => serde_json::json!([{"type": "text", "text": "ok"}]),
        };
        serde_json::json!({"type": "assistant", "timestamp": "2026-11-30T10:00:00.000Z",
            "message": {"id": id, "model": "claude-sonnet-4-5-20250929", "content": content,
                "usage": {"input_tokens": tokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}}})
        .to_string()
    }

    #[test]
    fn reads_only_what_came_after_the_offset() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let first = format!("{}\n", line("m1", 100_000, Some("toolu_1")));
        let result = "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_1\",\"content\":\"xxxxxxxx\"}]}}\n";
        std::fs::write(&path, format!("{first}{result}")).unwrap();
        let offset = first.len() as u64;
        let after = read_since(&path, offset, Some("toolu_2")).unwrap();
        assert!(after.reading.is_none(), "nothing newer than the offset");
        let whole = read(&path, Some("toolu_2")).unwrap();
        assert_eq!(whole.reading.as_ref().unwrap().tokens, 100_000);
        assert!(!whole.tool_use_seen);
        assert_eq!(whole.bytes_after_figure, 8, "the tool result's text");
        let seen = read(&path, Some("toolu_1")).unwrap();
        assert!(seen.tool_use_seen);
        std::fs::write(&path, format!("{first}{result}{}\n", line("m2", 140_000, Some("toolu_2")))).unwrap();
        let newer = read_since(&path, offset, Some("toolu_2")).unwrap();
        assert_eq!(newer.reading.unwrap().tokens, 140_000);
        assert!(newer.tool_use_seen);
        // A reply right at the offset is whole, and is read.
        let at = (first.len() + result.len()) as u64;
        let right_after = read_since(&path, at, None).unwrap();
        assert_eq!(right_after.reading.unwrap().tokens, 140_000);
    }

    const FIXTURE: &[u8] = include_bytes!("../../../tests/fixtures/transcript.jsonl");

    /// The figure, where it came from, and what was written after it.
    fn essence(tail: &TranscriptTail) -> (Option<(u64, ReadingSource, Option<String>)>, u64) {
        let reading = tail.reading.as_ref().map(|r| (r.tokens, r.source, r.model.clone()));
        (reading, tail.bytes_after_figure)
    }

    #[test]
    fn a_read_from_the_mark_gives_what_a_fresh_read_gives_and_reads_only_what_is_new() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, FIXTURE).unwrap();
        let whole = essence(&read_resuming(&path, None, false, None).unwrap().0);
        assert_eq!(whole.0.as_ref().unwrap().0, 144_012);
        for cut in (1..FIXTURE.len()).filter(|i| FIXTURE[i - 1] == b'\n' || i % 101 == 0) {
            std::fs::write(&path, &FIXTURE[..cut]).unwrap();
            crate::transcript::testing::written_a_minute_ago(&path);
            let (first, mark) = read_resuming(&path, None, false, None).unwrap();
            let mark = mark.expect("a mark");
            let (again, none) = read_resuming(&path, None, false, Some(&mark)).unwrap();
            assert_eq!(essence(&again), essence(&first), "unchanged at {cut}");
            assert!(none.is_none(), "nothing to write when nothing changed");
            let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
            std::io::Write::write_all(&mut file, &FIXTURE[cut..]).unwrap();
            let (resumed, next) = read_resuming(&path, None, false, Some(&mark)).unwrap();
            assert_eq!(essence(&resumed), whole, "cut at {cut}");
            // What is read: the bytes appended, the part of a line cut at the first read,
            // and the newline before it.
            let read = resumed.reading.as_ref().unwrap().stats.bytes_read;
            assert!(read <= (FIXTURE.len() as u64 - mark.resume_at) + 1, "cut at {cut}: read {read}");
            assert_eq!(next.unwrap().resume_at, FIXTURE.len() as u64);
        }
    }

    #[test]
    fn an_unchanged_transcript_is_not_read_and_the_tool_call_is_looked_for_behind_the_mark() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let reply = format!("{}\n", line("m1", 100_000, Some("toolu_1")));
        let result = "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_1\",\"content\":\"xxxxxxxx\"}]}}\n";
        std::fs::write(&path, &reply).unwrap();
        crate::transcript::testing::written_a_minute_ago(&path);
        let (first, mark) = read_resuming(&path, Some("toolu_1"), false, None).unwrap();
        assert!(first.tool_use_seen);
        let mark = mark.unwrap();
        let (same, none) = read_resuming(&path, Some("toolu_1"), false, Some(&mark)).unwrap();
        assert!(none.is_none());
        assert_eq!(same.reading.as_ref().unwrap().stats.bytes_read, 0, "nothing read");
        assert_eq!(same.reading.unwrap().tokens, 100_000);
        // A second call of the same reply: its id is behind the mark, found there.
        assert!(!same.tool_use_seen);
        assert!(seen_between(&path, same.unread_after_figure.unwrap(), "toolu_1"));
        assert!(!seen_between(&path, same.unread_after_figure.unwrap(), "toolu_2"));
        // A tool result appended: the kept figure stands, what follows it is counted.
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        std::io::Write::write_all(&mut file, result.as_bytes()).unwrap();
        let (after, mark) = read_resuming(&path, Some("toolu_2"), false, Some(&mark)).unwrap();
        assert_eq!(after.reading.as_ref().unwrap().tokens, 100_000);
        assert_eq!(after.bytes_after_figure, 8);
        assert_eq!(after.reading.unwrap().stats.bytes_read, result.len() as u64 + 1);
        assert_eq!(mark.as_ref().unwrap().state.figure.as_ref().unwrap().bytes_after, 8);
        // A subagent's reader does not take the session's mark.
        let (sub, _) = read_resuming(&path, None, true, mark.as_ref()).unwrap();
        assert!(sub.reading.is_none(), "no sidechain reply in the session's transcript");
    }

    #[test]
    fn a_compaction_without_a_size_after_the_kept_figure_hides_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, format!("{}\n", line("m1", 150_000, None))).unwrap();
        let mark = read_resuming(&path, None, false, None).unwrap().1.unwrap();
        let boundary = "{\"type\":\"system\",\"subtype\":\"compact_boundary\",\"compactMetadata\":{\"trigger\":\"manual\"}}\n";
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        std::io::Write::write_all(&mut file, boundary.as_bytes()).unwrap();
        let (tail, mark) = read_resuming(&path, None, false, Some(&mark)).unwrap();
        assert!(tail.reading.is_none());
        let mark = mark.unwrap();
        assert!(mark.state.blocked);
        std::io::Write::write_all(&mut file, b"{\"type\":\"user\"}\n").unwrap();
        assert!(read_resuming(&path, None, false, Some(&mark)).unwrap().0.reading.is_none(), "still hidden");
        std::io::Write::write_all(&mut file, format!("{}\n", line("m2", 40_000, None)).as_bytes()).unwrap();
        assert_eq!(read_resuming(&path, None, false, Some(&mark)).unwrap().0.reading.unwrap().tokens, 40_000);
    }
}
