//! Reads a file from its end: complete lines, last to first, in fixed chunks, within a
//! byte budget. The cost of a read depends on the budget and on where the wanted lines
//! are, never on the size of the file, so the hook path can look at the end of a
//! transcript of any size.

use std::io::{self, Read, Seek, SeekFrom};

use serde::Serialize;

/// How much is read from the source at a time.
pub const CHUNK_SIZE: u64 = 64 * 1024;

/// What a backward read did, for callers that must prove it stayed bounded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TailStats {
    /// Size of the source when reading started; bytes appended later are not read.
    pub source_len: u64,
    /// Bytes actually read from the source.
    pub bytes_read: u64,
    /// Lines handed out.
    pub lines: u64,
    /// Lines longer than the line limit, passed over without being kept.
    pub oversized_lines: u64,
    /// The first byte of the source was reached: nothing before the lines handed out.
    pub reached_start: bool,
    /// Reading stopped because the budget ran out before the start of the source.
    pub budget_exhausted: bool,
    /// Where the source's last complete line ends (just after its newline), when the
    /// part read holds a newline: a later read can start there without cutting a line.
    pub complete_end: Option<u64>,
}

/// Complete lines of a source, last to first.
///
/// The bytes after the last newline are handed out first, like any other line: a line
/// cut off mid-write is not valid JSON and every caller skips what does not parse.
/// Empty lines are skipped; a trailing `\r` is removed. A line longer than the line limit
/// (by default the whole budget) is passed over without being held in memory. When the
/// budget runs out inside a line, that line and everything before it are never seen:
/// reading stops and [`TailStats::budget_exhausted`] is set.
pub struct TailReader<R> {
    source: R,
    /// Bytes `[0, unread_end)` of the source have not been read yet.
    unread_end: u64,
    budget_left: u64,
    max_line: u64,
    /// The part of the last chunk read that has not been handed out yet.
    chunk: Vec<u8>,
    /// Pieces of a line whose start has not been read yet, latest piece first.
    later_pieces: Vec<Vec<u8>>,
    later_len: u64,
    /// The line being read is longer than `max_line`: its bytes are dropped.
    skipping: bool,
    finished: bool,
    stats: TailStats,
    /// Where the last line handed out starts in the source.
    line_start: u64,
}

impl<R: Read + Seek> TailReader<R> {
    /// Reads `source` backwards from its current end, reading at most `budget` bytes.
    pub fn new(mut source: R, budget: u64) -> io::Result<Self> {
        let len = source.seek(SeekFrom::End(0))?;
        Ok(TailReader {
            source,
            unread_end: len,
            budget_left: budget,
            max_line: budget,
            chunk: Vec::new(),
            later_pieces: Vec::new(),
            later_len: 0,
            skipping: false,
            finished: false,
            stats: TailStats { source_len: len, ..TailStats::default() },
            line_start: len,
        })
    }

    /// Lines longer than `max_line` bytes are skipped instead of kept.
    #[cfg(test)]
    pub fn with_max_line(mut self, max_line: u64) -> Self {
        self.max_line = max_line;
        self
    }

    pub fn stats(&self) -> TailStats {
        self.stats
    }

    /// Where the last line handed out starts in the source (its first byte's offset).
    pub fn line_start(&self) -> u64 {
        self.line_start
    }

    /// The next line towards the start of the source, or `None` at the start or when the
    /// budget is spent.
    pub fn next_line(&mut self) -> io::Result<Option<Vec<u8>>> {
        while !self.finished {
            if let Some(newline) = self.chunk.iter().rposition(|&b| b == b'\n') {
                let line = self.complete_line(newline + 1);
                self.chunk.truncate(newline);
                if let Some(line) = line {
                    return Ok(Some(line));
                }
                continue;
            }
            if self.unread_end == 0 {
                // The first line of the source has no newline before it.
                self.finished = true;
                self.stats.reached_start = true;
                let line = self.complete_line(0);
                self.chunk.clear();
                return Ok(line);
            }
            self.keep_chunk_as_piece();
            if self.budget_left == 0 {
                self.finished = true;
                self.stats.budget_exhausted = true;
                self.later_pieces.clear();
                return Ok(None);
            }
            if let Err(e) = self.read_previous_chunk() {
                self.finished = true;
                return Err(e);
            }
        }
        Ok(None)
    }

    /// Ends the line that starts at `chunk[start..]` and continues in `later_pieces`.
    fn complete_line(&mut self, start: usize) -> Option<Vec<u8>> {
        self.line_start = self.unread_end + start as u64;
        let head = &self.chunk[start..];
        let too_long = self.skipping || head.len() as u64 + self.later_len > self.max_line;
        let line = if too_long {
            self.stats.oversized_lines += 1;
            None
        } else {
            let mut line = Vec::with_capacity(head.len() + self.later_len as usize);
            line.extend_from_slice(head);
            for piece in self.later_pieces.iter().rev() {
                line.extend_from_slice(piece);
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            Some(line).filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        };
        self.skipping = false;
        self.later_pieces.clear();
        self.later_len = 0;
        if line.is_some() {
            self.stats.lines += 1;
        }
        line
    }

    /// The chunk holds no newline: all of it belongs to a line that started earlier.
    fn keep_chunk_as_piece(&mut self) {
        if self.chunk.is_empty() {
            return;
        }
        let piece = std::mem::take(&mut self.chunk);
        if self.skipping {
            return;
        }
        self.later_len += piece.len() as u64;
        if self.later_len > self.max_line {
            self.skipping = true;
            self.later_pieces.clear();
            self.later_len = 0;
        } else {
            self.later_pieces.push(piece);
        }
    }

    fn read_previous_chunk(&mut self) -> io::Result<()> {
        let size = CHUNK_SIZE.min(self.unread_end).min(self.budget_left);
        let start = self.unread_end - size;
        let mut chunk = vec![0; size as usize];
        self.source.seek(SeekFrom::Start(start))?;
        self.source.read_exact(&mut chunk)?;
        self.unread_end = start;
        self.budget_left -= size;
        self.stats.bytes_read += size;
        if self.stats.complete_end.is_none() {
            self.stats.complete_end = chunk.iter().rposition(|&b| b == b'\n').map(|at| start + at as u64 + 1);
        }
        self.chunk = chunk;
        Ok(())
    }
}

impl<R: Read + Seek> Iterator for TailReader<R> {
    type Item = io::Result<Vec<u8>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_line().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn lines(bytes: &[u8], budget: u64) -> (Vec<Vec<u8>>, TailStats) {
        let mut reader = TailReader::new(Cursor::new(bytes.to_vec()), budget).unwrap();
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            out.push(line);
        }
        (out, reader.stats())
    }

    #[test]
    fn lines_come_last_to_first() {
        let (out, stats) = lines(b"a\nbb\r\n\nccc\n", 1 << 20);
        assert_eq!(out, vec![b"ccc".to_vec(), b"bb".to_vec(), b"a".to_vec()]);
        assert!(stats.reached_start);
        assert!(!stats.budget_exhausted);
        assert_eq!(stats.lines, 3);
    }

    #[test]
    fn an_unterminated_last_line_is_handed_out_first() {
        let (out, _) = lines(b"{\"a\":1}\n{\"b\":", 1 << 20);
        assert_eq!(out, vec![b"{\"b\":".to_vec(), b"{\"a\":1}".to_vec()]);
    }

    #[test]
    fn empty_source_has_no_lines() {
        let (out, stats) = lines(b"", 1 << 20);
        assert!(out.is_empty());
        assert!(stats.reached_start);
        assert_eq!(stats.bytes_read, 0);
    }

    #[test]
    fn lines_span_chunks() {
        let long = vec![b'x'; 3 * CHUNK_SIZE as usize + 17];
        let mut bytes = b"first\n".to_vec();
        bytes.extend_from_slice(&long);
        bytes.extend_from_slice(b"\nlast\n");
        let (out, stats) = lines(&bytes, 1 << 30);
        assert_eq!(out.len(), 3);
        assert_eq!(out[1], long);
        assert_eq!(out[2], b"first");
        assert_eq!(stats.bytes_read, bytes.len() as u64);
    }

    #[test]
    fn a_line_longer_than_the_limit_is_skipped_and_reading_goes_on() {
        let mut bytes = b"before\n".to_vec();
        bytes.extend(vec![b'x'; 10 * 1024 * 1024]);
        bytes.extend_from_slice(b"\nafter\n");
        let mut reader =
            TailReader::new(Cursor::new(bytes.clone()), 1 << 30).unwrap().with_max_line(1024 * 1024);
        let out: Vec<Vec<u8>> = reader.by_ref().map(|l| l.unwrap()).collect();
        assert_eq!(out, vec![b"after".to_vec(), b"before".to_vec()]);
        assert_eq!(reader.stats().oversized_lines, 1);
    }

    #[test]
    fn the_budget_bounds_what_is_read() {
        let mut bytes = Vec::new();
        for i in 0..100_000 {
            bytes.extend_from_slice(format!("line {i}\n").as_bytes());
        }
        let (out, stats) = lines(&bytes, 100_000);
        assert_eq!(stats.bytes_read, 100_000);
        assert!(stats.budget_exhausted);
        assert!(!stats.reached_start);
        assert_eq!(out[0], b"line 99999");
        // The line cut by the budget is not handed out half.
        assert!(out.iter().all(|l| l.starts_with(b"line ")));
    }

    #[test]
    fn a_line_bigger_than_the_budget_ends_the_read() {
        let mut bytes = b"early\n".to_vec();
        bytes.extend(vec![b'x'; 10 * 1024 * 1024]);
        bytes.extend_from_slice(b"\nlate\n");
        let (out, stats) = lines(&bytes, 1024 * 1024);
        assert_eq!(out, vec![b"late".to_vec()]);
        assert!(stats.budget_exhausted);
        assert!(stats.bytes_read <= 1024 * 1024);
    }

    #[test]
    fn the_reader_says_where_lines_start_and_the_last_complete_one_ends() {
        let bytes = b"ab\ncde\nf";
        let mut reader = TailReader::new(Cursor::new(bytes.to_vec()), 1 << 20).unwrap();
        assert_eq!(reader.next_line().unwrap().unwrap(), b"f");
        assert_eq!(reader.line_start(), 7);
        assert_eq!(reader.next_line().unwrap().unwrap(), b"cde");
        assert_eq!(reader.line_start(), 3);
        assert_eq!(reader.next_line().unwrap().unwrap(), b"ab");
        assert_eq!(reader.line_start(), 0);
        assert_eq!(reader.stats().complete_end, Some(7));
        let (_, stats) = lines(b"no newline", 1 << 20);
        assert_eq!(stats.complete_end, None);
    }

    #[test]
    fn invalid_utf8_is_just_bytes() {
        let (out, _) = lines(b"ok\n\xff\xfe\xfd\n", 1 << 20);
        assert_eq!(out, vec![b"\xff\xfe\xfd".to_vec(), b"ok".to_vec()]);
    }
}
