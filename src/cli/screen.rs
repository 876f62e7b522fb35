//! The one way out to the terminal: everything a command prints on stdout or stderr goes
//! through here, and through [`for_terminal`] on the way, so no control character of
//! text baton did not write (a repository's, a transcript's, a path's) reaches the
//! terminal, whichever command printed it and whether or not it was wrapped in
//! [`Outside`](crate::util::text::Outside) first. The newlines of the layout and baton's
//! own colours stay. `tests/architecture.rs` checks that nothing else in `src/` prints.
//!
//! Two things pass as they are: the scripts and pages baton generates itself
//! (completions, man), and the output of the user's own statusline command that
//! `--wrap` runs (the user chose that program; its colours and links are its own).

use std::io::{self, Write};

use crate::util::text::for_terminal;

/// `text` on stdout, escaped for the terminal; a closed stdout is not an error (a host or
/// a pipe that stopped reading).
pub(super) fn out(text: &str) {
    let mut stdout = io::stdout().lock();
    let _ = stdout.write_all(for_terminal(text).as_bytes());
    let _ = stdout.flush();
}

/// `text` on stderr, escaped for the terminal.
pub(super) fn err(text: &str) {
    let _ = io::stderr().lock().write_all(for_terminal(text).as_bytes());
}

/// Bytes baton generated itself (a completion script, a man page), as they are.
pub(super) fn own_bytes(bytes: &[u8]) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    stdout.write_all(bytes)?;
    stdout.flush()
}

/// The output of the user's own statusline command (`--wrap`), as that program wrote it.
pub(super) fn users_program_output(text: &str) {
    let mut stdout = io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// A writer for the services that print as they go (`doctor`, `install`, `demo`): each
/// line is escaped for the terminal once it is complete (a line is never cut inside a
/// character or a colour), the rest when flushed or dropped.
pub(super) struct Screen<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl Screen<io::Stdout> {
    pub(super) fn stdout() -> Screen<io::Stdout> {
        Screen { inner: io::stdout(), pending: Vec::new() }
    }
}

impl Screen<io::Stderr> {
    pub(super) fn stderr() -> Screen<io::Stderr> {
        Screen { inner: io::stderr(), pending: Vec::new() }
    }
}

impl<W: Write> Screen<W> {
    fn write_lines(&mut self, upto: usize) -> io::Result<()> {
        let lines: Vec<u8> = self.pending.drain(..upto).collect();
        self.inner.write_all(for_terminal(&String::from_utf8_lossy(&lines)).as_bytes())
    }
}

impl<W: Write> Write for Screen<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(bytes);
        if let Some(last) = self.pending.iter().rposition(|b| *b == b'\n') {
            self.write_lines(last + 1)?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let all = self.pending.len();
        self.write_lines(all)?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for Screen<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_escaped_whole_and_the_rest_on_flush() {
        let mut screen = Screen { inner: Vec::new(), pending: Vec::new() };
        write!(screen, "ok \x1b[1m").unwrap();
        assert!(screen.inner.is_empty(), "nothing before the line is complete");
        writeln!(screen, "bold\x1b[0m \x1b]52;c;eA==\x07").unwrap();
        write!(screen, "tail \u{9b}").unwrap();
        screen.flush().unwrap();
        let text = String::from_utf8(std::mem::take(&mut screen.inner)).unwrap();
        assert_eq!(text, "ok \x1b[1mbold\x1b[0m \\u001b]52;c;eA==\\u0007\ntail \\u009b");
    }
}
