//! The figure of a host's own record (Codex's rollout, Gemini CLI's and Qwen Code's chat
//! recordings, Copilot CLI's event log), read from where the last read of the context
//! stopped ([`super::resume`]): each format's reader scans the lines appended since,
//! newest first, and what it finds there ([`Newest`]) goes over what the last read kept
//! ([`RecordState`]). Factory Droid's figure is its sidecar, a small file read whole.

use std::cell::RefCell;
use std::fs::File;
use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::file::open_transcript;
use super::format::Format;
use super::resume::{FileStamp, Mark, Plan, mark_after, plan_for};
use super::tail::{TailReader, TailStats};
use super::{Reading, codex, copilot, droid, gemini, qwen};

/// What the last read of a record found: its newest figure, and the newest window
/// (Codex writes it apart from the usage).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordState {
    pub format: Format,
    pub reading: Option<KeptReading>,
    pub window: Option<u64>,
}

/// A [`Reading`] as kept between two reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeptReading {
    pub tokens: u64,
    pub model: Option<String>,
    pub window: Option<u64>,
    pub written_at: Option<i64>,
    pub current: bool,
}

impl From<&KeptReading> for Reading {
    fn from(kept: &KeptReading) -> Reading {
        Reading {
            tokens: kept.tokens,
            model: kept.model.clone(),
            window: kept.window,
            written_at: kept.written_at,
            current: kept.current,
        }
    }
}

/// What the lines of one read say, newest first (pure result of [`scan`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Newest {
    /// The newest figure among them.
    pub reading: Option<KeptReading>,
    /// The newest window among them (Codex).
    pub window: Option<u64>,
    /// A call finished after every figure among them (Copilot CLI): an older figure is
    /// not the newest call's.
    pub finished: bool,
    /// A compaction finished after every figure among them (Copilot CLI): no older
    /// figure holds.
    pub cleared: bool,
}

impl Newest {
    /// What the newer lines say, over what was kept from the older ones (pure).
    pub fn over(self, kept: Option<&RecordState>) -> (Option<KeptReading>, Option<u64>) {
        let window = self.window.or(kept.and_then(|k| k.window));
        let reading = match self.reading {
            Some(reading) => Some(reading),
            None if self.cleared => None,
            None => kept
                .and_then(|k| k.reading.clone())
                .map(|older| KeptReading { current: older.current && !self.finished, ..older }),
        };
        // Codex's window belongs with the newest figure, wherever each was read (the
        // other formats keep none apart: their figure's own window stands).
        let reading = reading.map(|r| KeptReading { window: window.or(r.window), ..r });
        (reading, window)
    }
}

/// The newest figure of lines given newest first, as `format`'s reader reads them (pure).
pub fn scan(format: Format, lines: impl Iterator<Item = Vec<u8>>) -> Newest {
    let mut newest = Newest::default();
    match format {
        Format::CodexRollout => {
            let mut rollout = codex::RolloutScan::default();
            for line in lines {
                if !rollout.feed(&line) {
                    break;
                }
            }
            let (found, window) = rollout.parts();
            newest.window = window;
            newest.reading = found.map(|r| KeptReading {
                tokens: r.tokens,
                model: None,
                window: None,
                written_at: r.written_at,
                current: true,
            });
        }
        Format::GeminiChat => {
            newest.reading =
                lines.map(|l| gemini::reading_from_line(&l)).find_map(|r| r).map(|r| KeptReading {
                    tokens: r.tokens,
                    model: r.model,
                    window: None,
                    written_at: r.written_at,
                    current: true,
                });
        }
        Format::QwenChat => {
            newest.reading =
                lines.map(|l| qwen::reading_from_line(&l)).find_map(|r| r).map(|r| KeptReading {
                    tokens: r.tokens,
                    model: r.model,
                    window: None,
                    written_at: r.written_at,
                    current: true,
                });
        }
        Format::CopilotEvents => {
            for line in lines {
                match copilot::fact_from_line(&line) {
                    Some(copilot::LineFact::Usage(r)) => {
                        newest.reading = Some(KeptReading {
                            tokens: r.tokens,
                            model: r.model,
                            window: r.window,
                            written_at: r.written_at,
                            current: !newest.finished,
                        });
                        break;
                    }
                    Some(copilot::LineFact::Compacted) => {
                        newest.cleared = true;
                        break;
                    }
                    Some(copilot::LineFact::Finished) => newest.finished = true,
                    None => {}
                }
            }
        }
        Format::ClaudeCode | Format::DroidSession | Format::OpenCodeMessages => {}
    }
    newest
}

/// Most bytes read from the end of a record (each format's own budget).
fn budget(format: Format) -> u64 {
    match format {
        Format::CodexRollout => codex::ROLLOUT_BUDGET,
        Format::GeminiChat => gemini::RECORDING_BUDGET,
        Format::QwenChat => qwen::RECORDING_BUDGET,
        _ => copilot::EVENTS_BUDGET,
    }
}

/// A mark kept for a host's record.
pub type RecordMark = Mark<RecordState>;

/// The mark a figure read starts from and then the one it leaves, carried through a
/// host's record (`Host::record`) by the figure source, which keeps it per context.
#[derive(Debug, Default)]
pub struct MarkSlot {
    mark: RefCell<Option<RecordMark>>,
    changed: std::cell::Cell<bool>,
}

impl MarkSlot {
    pub fn new(kept: Option<RecordMark>) -> MarkSlot {
        MarkSlot { mark: RefCell::new(kept), changed: std::cell::Cell::new(false) }
    }

    /// The mark to keep, when a read left a new one.
    pub fn changed(self) -> Option<RecordMark> {
        if self.changed.get() { self.mark.into_inner() } else { None }
    }
}

/// The newest figure of the record at `path`, read as `format`, from where the slot's
/// mark says the last read stopped (a fresh bounded read from the end without one).
pub fn read_record(format: Format, path: &Path, slot: Option<&MarkSlot>) -> Option<Reading> {
    if format == Format::DroidSession {
        let r = droid::read(path)?;
        return Some(Reading {
            tokens: r.tokens,
            model: r.model,
            window: None,
            written_at: r.written_at,
            current: true,
        });
    }
    let kept = slot.and_then(|s| s.mark.borrow().clone()).filter(|m| m.state.format == format);
    let (reading, mark) = read_from(format, path, kept.as_ref()).ok()?;
    if let (Some(slot), Some(mark)) = (slot, mark) {
        *slot.mark.borrow_mut() = Some(mark);
        slot.changed.set(true);
    }
    reading.as_ref().map(Reading::from)
}

/// [`read_record`]'s read: the figure, and the mark to keep when it changed.
pub fn read_from(
    format: Format,
    path: &Path,
    kept: Option<&RecordMark>,
) -> io::Result<(Option<KeptReading>, Option<RecordMark>)> {
    let file = open_transcript(path)?;
    let now = FileStamp::of(&file)?;
    let budget = budget(format);
    let from = match plan_for(&file, &now, kept, budget) {
        Plan::Unchanged => return Ok((kept.and_then(|m| m.state.reading.clone()), None)),
        Plan::From(at) => Some(at),
        Plan::Whole => None,
    };
    let (newest, stats) = scan_file(format, &file, now.len, from, budget)?;
    let kept_state = from.and(kept.map(|m| &m.state));
    let (reading, window) = newest.over(kept_state);
    let complete_end = match from {
        Some(at) => stats.complete_end.or(Some(at)),
        None => stats.complete_end.or(stats.reached_start.then_some(0)),
    };
    let state = RecordState { format, reading: reading.clone(), window };
    Ok((reading, mark_after(&file, now, complete_end, state)))
}

fn scan_file(
    format: Format,
    file: &File,
    len: u64,
    from: Option<u64>,
    budget: u64,
) -> io::Result<(Newest, TailStats)> {
    let budget = match from {
        Some(at) => len - at + u64::from(at > 0),
        None => budget,
    };
    let mut tail = TailReader::new(file, budget)?;
    let mut failed = None;
    let lines = std::iter::from_fn(|| match tail.next_line() {
        Ok(line) => line,
        Err(e) => {
            failed = Some(e);
            None
        }
    });
    let newest = scan(format, lines);
    if let Some(e) = failed {
        return Err(e);
    }
    Ok((newest, tail.stats()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURES: &[(Format, &[u8])] = &[
        (
            Format::CodexRollout,
            include_bytes!("../../tests/fixtures/real/codex/rollout-at-PostToolUse-3.jsonl"),
        ),
        (Format::CodexRollout, include_bytes!("../../tests/fixtures/real/codex/rollout-at-critical.jsonl")),
        (Format::GeminiChat, include_bytes!("../../tests/fixtures/real/gemini/chat-at-AfterTool-1.jsonl")),
        (Format::QwenChat, include_bytes!("../../tests/fixtures/real/qwen/transcript-with-compress.jsonl")),
        (Format::QwenChat, include_bytes!("../../tests/fixtures/real/qwen/chat-at-critical.jsonl")),
        (Format::CopilotEvents, include_bytes!("../../tests/fixtures/real/copilot/events.jsonl")),
        (Format::CopilotEvents, include_bytes!("../../tests/fixtures/real/copilot/events-at-critical.jsonl")),
    ];

    /// For every line boundary (and mid-line cut) of each real record: read the first
    /// part, append the rest, read again from the mark. The figure must be the one a
    /// fresh read of the whole file gives, and the second read must read only the part
    /// appended (and the cut line again).
    #[test]
    fn a_read_from_the_mark_gives_what_a_fresh_read_gives() {
        let dir = tempfile::tempdir().unwrap();
        for (format, bytes) in FIXTURES {
            let path = dir.path().join("record.jsonl");
            let whole = {
                std::fs::write(&path, bytes).unwrap();
                read_from(*format, &path, None).unwrap().0
            };
            assert!(whole.is_some(), "{format:?}: the fixture has a figure");
            let cuts = (1..bytes.len()).filter(|i| bytes[i - 1] == b'\n' || i % 97 == 0);
            for cut in cuts {
                std::fs::write(&path, &bytes[..cut]).unwrap();
                crate::transcript::testing::written_a_minute_ago(&path);
                let (first, mark) = read_from(*format, &path, None).unwrap();
                let mark = mark.expect("a mark");
                assert_eq!(first, read_from(*format, &path, Some(&mark)).unwrap().0, "unchanged");
                assert!(read_from(*format, &path, Some(&mark)).unwrap().1.is_none(), "no new mark");
                let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
                std::io::Write::write_all(&mut file, &bytes[cut..]).unwrap();
                let (resumed, next) = read_from(*format, &path, Some(&mark)).unwrap();
                assert_eq!(resumed, whole, "{format:?} cut at {cut}");
                let next = next.expect("a new mark");
                assert_eq!(next.resume_at, bytes.len() as u64 - u64::from(bytes.last() != Some(&b'\n')));
            }
        }
    }

    #[test]
    fn a_replaced_or_truncated_record_is_read_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("record.jsonl");
        let (format, bytes) = FIXTURES[0];
        std::fs::write(&path, bytes).unwrap();
        let (whole, mark) = read_from(format, &path, None).unwrap();
        let mark = mark.unwrap();
        // Truncated to its first line: no figure there.
        let first_line = bytes.iter().position(|b| *b == b'\n').unwrap() + 1;
        std::fs::write(&path, &bytes[..first_line]).unwrap();
        assert_eq!(read_from(format, &path, Some(&mark)).unwrap().0, None);
        // Replaced by another file (a new inode) that has the figure again.
        let other = dir.path().join("other.jsonl");
        std::fs::write(&other, bytes).unwrap();
        std::fs::rename(&other, &path).unwrap();
        assert_eq!(read_from(format, &path, Some(&mark)).unwrap().0, whole);
    }

    #[test]
    fn newer_lines_go_over_the_kept_figure() {
        let reading =
            |tokens| KeptReading { tokens, model: None, window: None, written_at: None, current: true };
        let kept = RecordState { format: Format::CopilotEvents, reading: Some(reading(5)), window: None };
        let nothing = Newest::default();
        assert_eq!(nothing.over(Some(&kept)), (Some(reading(5)), None));
        let finished = Newest { finished: true, ..Newest::default() };
        assert_eq!(finished.over(Some(&kept)).0, Some(KeptReading { current: false, ..reading(5) }));
        let cleared = Newest { cleared: true, ..Newest::default() };
        assert_eq!(cleared.over(Some(&kept)).0, None);
        let newer = Newest { reading: Some(reading(9)), ..Newest::default() };
        assert_eq!(newer.clone().over(Some(&kept)).0, Some(reading(9)));
        // Codex: the newest window goes with the newest figure, wherever each was read.
        let codex =
            RecordState { format: Format::CodexRollout, reading: Some(reading(5)), window: Some(100) };
        let window = Newest { window: Some(200), ..Newest::default() };
        assert_eq!(
            window.over(Some(&codex)),
            (Some(KeptReading { window: Some(200), ..reading(5) }), Some(200))
        );
        assert_eq!(newer.over(Some(&codex)).0, Some(KeptReading { window: Some(100), ..reading(9) }));
    }
}
