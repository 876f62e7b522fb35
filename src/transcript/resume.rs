//! Reading a transcript from where the last read stopped. A host's record only grows
//! between two hook calls: what a read found (the figure, and what its reader needs to go
//! on) is kept with where it stopped ([`Mark`]), and the next read looks at what was
//! appended since, nothing else. [`plan`] decides, without files, whether a kept mark
//! still holds for the file as it is now: the same file (device and inode), not shorter,
//! the bytes just before the resume point unchanged ([`anchor_of`]); otherwise the
//! caller reads the bounded tail from the end, as without a mark.

use std::fs::File;
use std::io;

use serde::{Deserialize, Serialize};

/// How many bytes before the resume point are checked to be what they were: a file
/// rewritten in place (truncated, then written longer) is read afresh.
pub const ANCHOR_LEN: u64 = 32;

/// What identifies a file and its state at one moment, from one `fstat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStamp {
    pub dev: u64,
    pub ino: u64,
    pub len: u64,
    /// Last modification, nanoseconds since the epoch.
    pub modified: i64,
}

impl FileStamp {
    pub fn of(file: &File) -> io::Result<FileStamp> {
        let (dev, ino, len, modified) = crate::platform::file_identity(file)?;
        Ok(FileStamp { dev, ino, len, modified })
    }
}

/// Where a read of a transcript stopped, and what it found there (`state`, the format
/// reader's own).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mark<S> {
    /// The file as it was read.
    pub file: FileStamp,
    /// Where the last complete line read ends: the next read starts here (a line still
    /// being written is read again once it is whole).
    pub resume_at: u64,
    /// [`anchor_of`] the bytes just before `resume_at`.
    pub anchor: u64,
    /// The file was written less than [`RACY_NANOS`] before it was read: a rewrite of the
    /// same size could share its modification time (file systems keep it coarsely), so
    /// the same size and time do not prove it unchanged.
    #[serde(default)]
    pub racy: bool,
    pub state: S,
}

/// How recent a write makes a read's stamp unsure ([`Mark::racy`]): the coarsest
/// modification times kept (2 s, FAT; the kernel's clock tick elsewhere).
pub const RACY_NANOS: i64 = 2_000_000_000;

/// How to read the file given the mark kept from the last read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// Nothing changed since: the kept state is the answer, nothing is read.
    Unchanged,
    /// Read what came from this offset on, and go on from the kept state (once the
    /// anchor before it is checked).
    From(u64),
    /// Read the bounded tail from the end, as without a mark.
    Whole,
}

/// The plan for a file stamped `now`, given the last read's mark (its stamp, where it
/// stopped, whether the stamp was racy) (pure). A different file (replaced, rotated), a
/// shorter one (truncated), more appended than `budget` (the reader's own bound: the
/// part in between would be skipped), or one of the same size written since (or maybe
/// since: a racy stamp), is read whole.
pub fn plan(kept: Option<(&FileStamp, u64, bool)>, now: &FileStamp, budget: u64) -> Plan {
    let Some((then, resume_at, racy)) = kept else { return Plan::Whole };
    if then.dev != now.dev || then.ino != now.ino || now.len < then.len || resume_at > then.len {
        return Plan::Whole;
    }
    if now.len == then.len {
        // Nothing appended: unchanged, or written over in place.
        return if now.modified == then.modified && !racy { Plan::Unchanged } else { Plan::Whole };
    }
    if now.len - resume_at >= budget {
        return Plan::Whole;
    }
    Plan::From(resume_at)
}

/// The hash of the [`ANCHOR_LEN`] bytes before `at` (fewer at the start of the file).
pub fn anchor_of(bytes_before: &[u8]) -> u64 {
    crate::util::hash::fnv1a(bytes_before)
}

/// Reads the bytes the anchor of offset `at` is made of.
pub fn anchor_at(file: &File, at: u64) -> io::Result<u64> {
    let start = at.saturating_sub(ANCHOR_LEN);
    let mut bytes = vec![0; (at - start) as usize];
    crate::platform::read_exact_at(file, &mut bytes, start)?;
    Ok(anchor_of(&bytes))
}

/// The plan for `file`, the kept mark's anchor checked: a [`Plan::From`] whose anchor
/// no longer matches is [`Plan::Whole`].
pub fn plan_for<S>(file: &File, now: &FileStamp, kept: Option<&Mark<S>>, budget: u64) -> Plan {
    let stored = kept.map(|m| (&m.file, m.resume_at, m.racy));
    match plan(stored, now, budget) {
        Plan::From(at) if kept.is_some_and(|m| anchor_at(file, at).ok() == Some(m.anchor)) => Plan::From(at),
        Plan::From(_) => Plan::Whole,
        other => other,
    }
}

/// The mark for a read that ended with the file's last complete line at `complete_end`
/// (`None`: the part read held no newline, and no mark can be made).
pub fn mark_after<S>(file: &File, now: FileStamp, complete_end: Option<u64>, state: S) -> Option<Mark<S>> {
    let resume_at = complete_end?;
    let anchor = anchor_at(file, resume_at).ok()?;
    let read_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(i64::MAX, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
    let racy = now.modified.saturating_add(RACY_NANOS) > read_at;
    Some(Mark { file: now, resume_at, anchor, racy, state })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(ino: u64, len: u64, modified: i64) -> FileStamp {
        FileStamp { dev: 1, ino, len, modified }
    }

    #[test]
    fn an_unchanged_file_is_not_read() {
        let then = stamp(7, 1000, 5);
        assert_eq!(plan(Some((&then, 990, false)), &stamp(7, 1000, 5), 1 << 20), Plan::Unchanged);
        // Read just after a write: the same size and time may be a rewrite.
        assert_eq!(plan(Some((&then, 990, true)), &stamp(7, 1000, 5), 1 << 20), Plan::Whole);
        assert_eq!(plan(Some((&then, 990, true)), &stamp(7, 1200, 5), 1 << 20), Plan::From(990));
    }

    #[test]
    fn an_appended_file_is_read_from_the_last_complete_line() {
        let then = stamp(7, 1000, 5);
        assert_eq!(plan(Some((&then, 990, false)), &stamp(7, 1500, 6), 1 << 20), Plan::From(990));
        // Written over in place to the same size: read whole.
        assert_eq!(plan(Some((&then, 990, false)), &stamp(7, 1000, 9), 1 << 20), Plan::Whole);
    }

    #[test]
    fn a_replaced_truncated_or_far_grown_file_is_read_whole() {
        let then = stamp(7, 1000, 5);
        assert_eq!(plan(None, &stamp(7, 1000, 5), 1 << 20), Plan::Whole, "no mark");
        assert_eq!(
            plan(Some((&then, 990, false)), &stamp(8, 1500, 6), 1 << 20),
            Plan::Whole,
            "another inode"
        );
        let other_disk = FileStamp { dev: 2, ..stamp(7, 1500, 6) };
        assert_eq!(plan(Some((&then, 990, false)), &other_disk, 1 << 20), Plan::Whole, "another device");
        assert_eq!(plan(Some((&then, 990, false)), &stamp(7, 500, 6), 1 << 20), Plan::Whole, "truncated");
        assert_eq!(
            plan(Some((&then, 990, false)), &stamp(7, 5000, 6), 1000),
            Plan::Whole,
            "more than the budget"
        );
        assert_eq!(
            plan(Some((&then, 2000, false)), &stamp(7, 5000, 6), 1 << 20),
            Plan::Whole,
            "a broken mark"
        );
    }

    #[test]
    fn the_anchor_catches_a_file_rewritten_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, b"{\"a\":1}\n{\"b\":2}\n").unwrap();
        let file = File::open(&path).unwrap();
        let now = FileStamp::of(&file).unwrap();
        let mark = mark_after(&file, now, Some(16), ()).unwrap();
        std::fs::write(&path, b"{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n").unwrap();
        let grown = FileStamp::of(&file).unwrap();
        assert_eq!(plan_for(&file, &grown, Some(&mark), 1 << 20), Plan::From(16));
        std::fs::write(&path, b"{\"x\":1}\n{\"y\":2}\n{\"c\":3}\n").unwrap();
        let rewritten = FileStamp::of(&file).unwrap();
        assert_eq!(rewritten.ino, now.ino, "the same file, rewritten in place");
        assert_eq!(plan_for(&file, &rewritten, Some(&mark), 1 << 20), Plan::Whole);
        assert!(mark_after(&file, rewritten, None, ()).is_none(), "no newline read: no mark");
    }
}
