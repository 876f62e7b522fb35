//! A deadline-guarded read of one JSON value from stdin.
//!
//! Hosts normally write the event and close the pipe, but not always: a pipe left open
//! must not keep a hook alive until the host kills it and reports "hook error". The value
//! is parsed as it streams in, so the hook goes on as soon as one complete JSON value has
//! arrived (even if stdin stays open), and every read first waits in `poll` for no longer
//! than what is left of the deadline. Large payloads (a tool's whole output) stream
//! through the parser without being held in memory: fields baton does not keep are
//! skipped. No thread is started: on this path a thread costs more than all the rest.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;

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

/// A reader over a file descriptor whose every read waits at most until `deadline`.
struct DeadlineReader {
    file: ManuallyDrop<File>,
    fd: i32,
    deadline: Instant,
}

impl Read for DeadlineReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "stdin deadline"));
            }
            let mut pollfd = libc::pollfd { fd: self.fd, events: libc::POLLIN, revents: 0 };
            let millis = left.as_millis().clamp(1, i32::MAX as u128) as i32;
            // SAFETY: one valid pollfd, count 1.
            let ready = unsafe { libc::poll(&mut pollfd, 1, millis) };
            if ready < 0 {
                let err = io::Error::last_os_error();
                if err.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(err);
            }
            if ready == 0 {
                continue; // the loop head reports the timeout
            }
            // Readable, hung up or in error: read tells which.
            return self.file.read(buf);
        }
    }
}

/// Reads one JSON value of type `T` from stdin within `deadline`.
pub fn read_json<T: DeserializeOwned>(deadline: Duration) -> Result<T, StdinError> {
    // SAFETY: fd 0 stays open for the life of the process; ManuallyDrop never closes it.
    let file = ManuallyDrop::new(unsafe { File::from_raw_fd(0) });
    let reader = DeadlineReader { file, fd: 0, deadline: Instant::now() + deadline };
    let mut deserializer = serde_json::Deserializer::from_reader(BufReader::with_capacity(64 * 1024, reader));
    T::deserialize(&mut deserializer).map_err(|e| {
        if e.io_error_kind() == Some(io::ErrorKind::TimedOut) {
            StdinError::Timeout
        } else {
            StdinError::Invalid(e.to_string())
        }
    })
}
