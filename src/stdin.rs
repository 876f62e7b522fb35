//! A deadline-guarded read of one JSON value from stdin.
//!
//! Hosts normally write the event and close the pipe, but not always: a pipe left open
//! must not keep a hook alive until the host kills it and reports "hook error". The value
//! is parsed as it streams in, so the hook goes on as soon as one complete JSON value has
//! arrived (even if stdin stays open), and every read waits for no longer than what is
//! left of the deadline ([`crate::platform::StdinReader`]: `poll` on Unix, a reader thread
//! on Windows). A payload that arrives whole in the first
//! [`HEAD_LIMIT`] bytes (nearly all of them) is parsed from that one buffer, read into
//! memory the kernel fills without baton zeroing it first; a larger one (a tool's whole
//! output) streams through the parser without being held in memory: fields baton does not
//! keep are skipped. On Unix no thread is started: on this path a thread costs more than
//! all the rest.

use std::io::{self, BufReader, Read};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;

use crate::platform::StdinReader;

/// The deadline when `BATON_STDIN_TIMEOUT_MS` does not set one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(2000);

/// Why no value was read.
#[derive(Debug)]
pub enum StdinError {
    /// No complete value arrived before the deadline.
    Timeout,
    /// The bytes were not one JSON value of the expected shape (or not UTF-8).
    Invalid(String),
}

impl std::fmt::Display for StdinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StdinError::Timeout => write!(f, "no complete JSON value on stdin before the deadline"),
            StdinError::Invalid(why) => write!(f, "stdin is not a usable JSON value: {why}"),
        }
    }
}

/// The stdin deadline: `BATON_STDIN_TIMEOUT_MS` (100 to 60000) or 2 s.
pub fn timeout_from_env() -> Duration {
    std::env::var("BATON_STDIN_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ms| (100..=60_000).contains(ms))
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_TIMEOUT)
}

/// How much of a payload is held in memory and parsed in one piece; a payload that is
/// not complete within it streams through the parser.
pub const HEAD_LIMIT: usize = 64 * 1024;

/// How many reads into the head are parsed before the rest is streamed.
const HEAD_ATTEMPTS: u32 = 8;

/// Reads one JSON value of type `T` from stdin within `deadline`.
pub fn read_json<T: DeserializeOwned>(deadline: Duration) -> Result<T, StdinError> {
    read_json_with(StdinReader::new(Instant::now() + deadline), StdinReader::read_spare)
}

/// [`read_json`] over any reader: `fill` appends the next bytes to the head buffer.
fn read_json_with<T: DeserializeOwned, R: Read>(
    mut reader: R,
    fill: impl Fn(&mut R, &mut Vec<u8>) -> io::Result<usize>,
) -> Result<T, StdinError> {
    let mut head = Vec::with_capacity(HEAD_LIMIT);
    // A payload written in many small pieces is parsed a few times at most, then streamed.
    let mut attempts = 0;
    while head.len() < HEAD_LIMIT && attempts < HEAD_ATTEMPTS {
        attempts += 1;
        let n = match fill(&mut reader, &mut head) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::TimedOut => return Err(StdinError::Timeout),
            Err(e) => return Err(StdinError::Invalid(e.to_string())),
        };
        let mut deserializer = serde_json::Deserializer::from_slice(&head);
        match T::deserialize(&mut deserializer) {
            Ok(value) => return Ok(value),
            // Cut short: the rest is still to come, unless the input ended.
            Err(e) if e.is_eof() && n > 0 => continue,
            Err(e) => return Err(StdinError::Invalid(e.to_string())),
        }
    }
    // A large payload: parse it again from the start as it streams in, so that what is
    // not kept is never held.
    let rest = io::Cursor::new(head).chain(reader);
    let mut deserializer = serde_json::Deserializer::from_reader(BufReader::with_capacity(HEAD_LIMIT, rest));
    T::deserialize(&mut deserializer).map_err(|e| {
        if e.io_error_kind() == Some(io::ErrorKind::TimedOut) {
            StdinError::Timeout
        } else {
            StdinError::Invalid(e.to_string())
        }
    })
}

/// Reads the raw bytes of one JSON value from stdin within `deadline`, for a caller that
/// must pass the payload on unchanged (`baton statusline --wrap`). Stops at end of input,
/// or as soon as the bytes hold one complete JSON value (stdin may stay open), or at
/// `limit` bytes. Bytes that are not JSON are returned as they are, at end of input.
pub fn read_bytes(deadline: Duration, limit: usize) -> Result<Vec<u8>, StdinError> {
    read_bytes_from(&mut StdinReader::new(Instant::now() + deadline), limit)
}

fn read_bytes_from(reader: &mut impl Read, limit: usize) -> Result<Vec<u8>, StdinError> {
    let mut bytes = Vec::with_capacity(16 * 1024);
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == io::ErrorKind::TimedOut => return Err(StdinError::Timeout),
            Err(e) => return Err(StdinError::Invalid(e.to_string())),
        };
        if n == 0 {
            return Ok(bytes);
        }
        bytes.extend_from_slice(&chunk[..n]);
        if bytes.len() >= limit {
            bytes.truncate(limit);
            return Ok(bytes);
        }
        if holds_complete_value(&bytes) {
            return Ok(bytes);
        }
    }
}

/// True when `bytes` start with one complete JSON value (a payload whose writer keeps
/// the pipe open is complete here, without waiting for the end of input).
fn holds_complete_value(bytes: &[u8]) -> bool {
    let mut values = serde_json::Deserializer::from_slice(bytes).into_iter::<serde::de::IgnoredAny>();
    matches!(values.next(), Some(Ok(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out its chunks one by one, then reports a timeout (a pipe
    /// left open).
    struct Chunks(Vec<&'static [u8]>);

    impl Read for Chunks {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "deadline"));
            }
            let chunk = self.0.remove(0);
            buf[..chunk.len()].copy_from_slice(chunk);
            Ok(chunk.len())
        }
    }

    #[test]
    fn a_complete_value_ends_the_read_even_with_stdin_open() {
        let bytes = read_bytes_from(&mut Chunks(vec![b"{\"a\": ", b"[1, 2]}"]), 1024).unwrap();
        assert_eq!(bytes, b"{\"a\": [1, 2]}");
    }

    #[test]
    fn an_open_pipe_without_a_value_times_out() {
        assert!(matches!(read_bytes_from(&mut Chunks(vec![b"{\"a\": "]), 1024), Err(StdinError::Timeout)));
    }

    #[test]
    fn end_of_input_returns_what_came() {
        let mut reader: &[u8] = b"not json";
        assert_eq!(read_bytes_from(&mut reader, 1024).unwrap(), b"not json");
        let mut reader: &[u8] = b"0123456789";
        assert_eq!(read_bytes_from(&mut reader, 4).unwrap(), b"0123");
    }

    /// Pieces handed out one read at a time, then end of input (`eof`) or a timeout.
    struct Pieces {
        pieces: std::collections::VecDeque<Vec<u8>>,
        eof: bool,
    }

    impl Pieces {
        fn new(pieces: Vec<Vec<u8>>, eof: bool) -> Pieces {
            Pieces { pieces: pieces.into(), eof }
        }
    }

    impl Read for Pieces {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let Some(mut piece) = self.pieces.pop_front() else {
                return if self.eof {
                    Ok(0)
                } else {
                    Err(io::Error::new(io::ErrorKind::TimedOut, "deadline"))
                };
            };
            let n = piece.len().min(buf.len());
            buf[..n].copy_from_slice(&piece[..n]);
            if n < piece.len() {
                self.pieces.push_front(piece.split_off(n));
            }
            Ok(n)
        }
    }

    /// What `read_spare` does, over any reader.
    fn fill(reader: &mut Pieces, head: &mut Vec<u8>) -> io::Result<usize> {
        let mut buf = vec![0; head.capacity() - head.len()];
        let n = reader.read(&mut buf)?;
        head.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Event {
        name: String,
        #[serde(default)]
        n: u64,
    }

    fn parse(pieces: Vec<Vec<u8>>, eof: bool) -> Result<Event, StdinError> {
        read_json_with(Pieces::new(pieces, eof), fill)
    }

    #[test]
    fn a_value_in_one_read_is_parsed_from_the_head() {
        let event = parse(vec![br#"{"name":"PostToolUse","n":3}"#.to_vec()], false).unwrap();
        assert_eq!(event, Event { name: "PostToolUse".into(), n: 3 });
    }

    #[test]
    fn a_value_in_pieces_is_parsed_once_whole_even_with_stdin_open() {
        let pieces = vec![br#"{"name":"Post"#.to_vec(), br#"ToolUse","n""#.to_vec(), b":4} ".to_vec()];
        assert_eq!(parse(pieces, false).unwrap(), Event { name: "PostToolUse".into(), n: 4 });
    }

    #[test]
    fn a_value_in_many_small_pieces_is_streamed_after_a_few_parses() {
        let text = br#"{"name":"SessionStart","n":12345678}"#;
        let pieces = text.iter().map(|b| vec![*b]).collect();
        assert_eq!(parse(pieces, false).unwrap(), Event { name: "SessionStart".into(), n: 12_345_678 });
    }

    #[test]
    fn a_value_larger_than_the_head_streams_through() {
        let filler = "x".repeat(3 * HEAD_LIMIT);
        let text = format!(r#"{{"skipped":"{filler}","name":"big","n":1}}"#).into_bytes();
        let pieces = text.chunks(10_000).map(<[u8]>::to_vec).collect();
        assert_eq!(parse(pieces, true).unwrap(), Event { name: "big".into(), n: 1 });
    }

    #[test]
    fn a_cut_value_is_invalid_at_end_of_input_and_a_timeout_with_stdin_open() {
        assert!(matches!(parse(vec![br#"{"name":"Po"#.to_vec()], true), Err(StdinError::Invalid(_))));
        assert!(matches!(parse(vec![br#"{"name":"Po"#.to_vec()], false), Err(StdinError::Timeout)));
        assert!(matches!(parse(vec![], true), Err(StdinError::Invalid(_))));
        assert!(matches!(parse(vec![b"[1,2]".to_vec()], true), Err(StdinError::Invalid(_))));
        assert!(matches!(parse(vec![b"{\"name\": }".to_vec()], false), Err(StdinError::Invalid(_))));
    }
}
