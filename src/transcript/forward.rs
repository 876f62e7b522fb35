//! Reads lines front to back: the bounded head of a transcript (the session's first
//! request and time) and the whole-file stream behind `baton report`, where memory stays
//! bounded by the longest line kept, not by the file.

use std::io::{self, BufRead};

/// The complete lines of `bytes`, a prefix of a file. The bytes after the last newline
/// count as a line only when `at_eof` (the prefix is the whole file); otherwise they are
/// the start of a line cut by the prefix's limit.
pub fn complete_lines(bytes: &[u8], at_eof: bool) -> impl Iterator<Item = &[u8]> {
    let end = if at_eof { bytes.len() } else { bytes.iter().rposition(|&b| b == b'\n').unwrap_or(0) };
    bytes[..end]
        .split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
}

/// Lines of a stream, front to back, each at most `max_line` bytes; longer lines are
/// read through without being kept and counted in [`ForwardLines::oversized_lines`].
pub struct ForwardLines<R> {
    reader: R,
    max_line: usize,
    line: Vec<u8>,
    skipping: bool,
    oversized_lines: u64,
    bytes_read: u64,
}

impl<R: BufRead> ForwardLines<R> {
    pub fn new(reader: R, max_line: usize) -> Self {
        ForwardLines {
            reader,
            max_line,
            line: Vec::new(),
            skipping: false,
            oversized_lines: 0,
            bytes_read: 0,
        }
    }

    pub fn oversized_lines(&self) -> u64 {
        self.oversized_lines
    }

    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// The next non-empty line, without its newline, or `None` at the end of the stream.
    pub fn next_line(&mut self) -> io::Result<Option<&[u8]>> {
        loop {
            self.line.clear();
            if !self.fill_line()? {
                return Ok(None);
            }
            if self.line.last() == Some(&b'\r') {
                self.line.pop();
            }
            if !self.line.iter().all(u8::is_ascii_whitespace) {
                return Ok(Some(&self.line));
            }
        }
    }

    /// Reads one line into `self.line`; false at the end of the stream. An oversized line
    /// leaves `self.line` empty.
    fn fill_line(&mut self) -> io::Result<bool> {
        let mut saw_any = false;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                let had_line = saw_any;
                if self.skipping {
                    self.skipping = false;
                    self.oversized_lines += 1;
                }
                return Ok(had_line);
            }
            saw_any = true;
            let (piece, consumed, ends_line) = match available.iter().position(|&b| b == b'\n') {
                Some(newline) => (&available[..newline], newline + 1, true),
                None => (available, available.len(), false),
            };
            if !self.skipping {
                if self.line.len() + piece.len() > self.max_line {
                    self.skipping = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(piece);
                }
            }
            self.reader.consume(consumed);
            self.bytes_read += consumed as u64;
            if ends_line {
                if self.skipping {
                    self.skipping = false;
                    self.oversized_lines += 1;
                }
                return Ok(true);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Cursor};

    #[test]
    fn a_cut_prefix_drops_its_last_piece() {
        let lines: Vec<&[u8]> = complete_lines(b"a\r\n\nb\nc", false).collect();
        assert_eq!(lines, vec![&b"a"[..], &b"b"[..]]);
        let lines: Vec<&[u8]> = complete_lines(b"a\nb\nc", true).collect();
        assert_eq!(lines, vec![&b"a"[..], &b"b"[..], &b"c"[..]]);
        assert_eq!(complete_lines(b"no newline yet", false).count(), 0);
    }

    #[test]
    fn long_lines_are_skipped_without_being_kept() {
        let mut bytes = b"one\n".to_vec();
        bytes.extend(vec![b'x'; 100_000]);
        bytes.extend_from_slice(b"\ntwo\r\n\n");
        bytes.extend(vec![b'y'; 100_000]);
        let mut reader = ForwardLines::new(BufReader::with_capacity(4096, Cursor::new(bytes.clone())), 1000);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            out.push(line.to_vec());
        }
        assert_eq!(out, vec![b"one".to_vec(), b"two".to_vec()]);
        assert_eq!(reader.oversized_lines(), 2);
        assert_eq!(reader.bytes_read(), bytes.len() as u64);
    }
}
