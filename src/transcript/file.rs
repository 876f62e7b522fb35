//! Opening a transcript, and the bounded read of one: its end as complete lines and,
//! unless that reaches the start, its beginning.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use super::facts::FactsBudget;
use super::forward::complete_lines;
use super::tail::{TailReader, TailStats};

/// Opens a transcript for reading. A symlink at the path itself is refused (like every
/// file baton reads), and so is anything but a regular file: opening a FIFO must not
/// hang a hook.
pub fn open_transcript(path: &Path) -> io::Result<File> {
    crate::fsx::open_regular(path)
}

/// A bounded read of a transcript: its last `budget.tail` bytes as complete lines and,
/// unless those reach the start, its first `budget.head` bytes.
pub(crate) struct BoundedRead {
    head: Vec<u8>,
    head_is_whole_file: bool,
    tail: Vec<Vec<u8>>,
    stats: TailStats,
}

impl BoundedRead {
    pub(crate) fn of(path: &Path, budget: FactsBudget) -> io::Result<BoundedRead> {
        let mut file = open_transcript(path)?;
        let mut tail = TailReader::new(&file, budget.tail)?;
        let mut tail_lines = Vec::new();
        while let Some(line) = tail.next_line()? {
            tail_lines.push(line);
        }
        tail_lines.reverse();
        let stats = tail.stats();
        let mut head = Vec::new();
        if !stats.reached_start {
            file.seek(SeekFrom::Start(0))?;
            (&mut file).take(budget.head).read_to_end(&mut head)?;
        }
        let head_is_whole_file = head.len() as u64 >= stats.source_len;
        Ok(BoundedRead { head, head_is_whole_file, tail: tail_lines, stats })
    }

    pub(crate) fn head_lines(&self) -> impl Iterator<Item = &[u8]> {
        complete_lines(&self.head, self.head_is_whole_file)
    }

    pub(crate) fn tail_lines(&self) -> impl Iterator<Item = &[u8]> {
        self.tail.iter().map(Vec::as_slice)
    }

    pub(crate) fn reached_start(&self) -> bool {
        self.stats.reached_start
    }

    /// The file's first line, when it was read (from the head, or the tail reaching it).
    pub(crate) fn first_line(&self) -> &[u8] {
        if self.stats.reached_start {
            self.tail.first().map(Vec::as_slice).unwrap_or_default()
        } else {
            self.head_lines().next().unwrap_or_default()
        }
    }

    pub(crate) fn bytes_read(&self) -> u64 {
        self.stats.bytes_read + self.head.len() as u64
    }
}
