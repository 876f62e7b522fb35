//! The one way baton runs a child process: with a deadline, its output read by threads
//! (a full pipe never blocks the child), its stdin fed from a thread (a child that never
//! reads never blocks baton), and killed past the deadline: only the child, or its whole
//! process group when it is a shell whose children must go too (the wrapped statusline).
//!
//! Used by `statusline --wrap`, the GitHub ledger's `gh` calls and doctor's hook
//! self-test; [`run_in_foreground`] runs `baton run`'s legs.

use std::io::{self, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime};

use crate::platform::{self, ExitNotice, ForegroundChild, ProcessTree};
pub use crate::platform::{catch_interrupts, interrupted};

/// What the child's stdin gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// `/dev/null`.
    Null,
    /// These bytes, then end of file.
    Bytes(Vec<u8>),
    /// A pipe that stays open, with nothing written, until the child exits (to see
    /// that it does not wait for its input forever).
    HeldOpen,
}

/// What is killed past the deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kill {
    /// The child alone.
    Child,
    /// The child and what it starts: its own process group on Unix (a shell's children die
    /// with it), a Job object on Windows.
    Group,
}

/// How to run the child.
#[derive(Debug, Clone)]
pub struct Options {
    pub input: Input,
    /// Keep stderr (else it goes to `/dev/null`).
    pub stderr: bool,
    /// The most bytes kept of stdout and of stderr each; the rest is read and dropped.
    pub output_limit: u64,
    /// From the start, for the child to exit and close its output.
    pub timeout: Duration,
    pub kill: Kill,
}

/// A child that exited in time.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    /// Empty unless [`Options::stderr`].
    pub stderr: Vec<u8>,
    /// From just before the start to the exit.
    pub elapsed: Duration,
    /// Writing [`Input::Bytes`] failed (the child exited before it read them all).
    pub stdin_error: Option<io::Error>,
}

/// Why there is no [`Finished`].
#[derive(Debug)]
pub enum RunError {
    /// The program could not be started (`NotFound` when it does not exist).
    Spawn(io::Error),
    /// Still running, or its output still open, at the deadline; killed.
    TimedOut,
    /// Its state could not be read; killed.
    Wait(io::Error),
}

/// A started child, to [`Running::finish`] (the caller may do other work meanwhile).
pub struct Running {
    child: Child,
    start: Instant,
    deadline: Instant,
    /// What is killed with the child past the deadline ([`Kill::Group`]).
    tree: Option<ProcessTree>,
    writer: Option<Receiver<io::Result<()>>>,
    /// Dropped (closed) only once the child has exited.
    held: Option<ChildStdin>,
    stdout: Option<Receiver<Vec<u8>>>,
    stderr: Option<Receiver<Vec<u8>>>,
}

/// Runs `command` as `options` say and waits for it. Its stdin, stdout and stderr are
/// set here.
pub fn run(command: Command, options: &Options) -> Result<Finished, RunError> {
    start(command, options)?.finish()
}

/// Sleeps until `deadline`, or until an interruption ([`interrupted`]): `false` then.
pub fn sleep_unless_interrupted(duration: Duration) -> bool {
    let until = Instant::now() + duration;
    while Instant::now() < until {
        if interrupted().is_some() {
            return false;
        }
        std::thread::sleep(END_POLL.min(until.saturating_duration_since(Instant::now())));
    }
    interrupted().is_none()
}

/// From now on the processes this one's children leave behind (a host's workers, when
/// the host itself was killed) become its children rather than init's, so
/// [`end_leftovers`] can find them (Linux; elsewhere nothing).
pub fn adopt_orphans() {
    platform::adopt_orphans();
}

/// Ends the processes a finished foreground child left behind ([`adopt_orphans`]): SIGTERM,
/// then SIGKILL after [`END_ESCALATION`], and reaps them. Only between legs: no child of
/// this process may be running that it still waits for. The number ended (0 on Windows,
/// where nothing is adopted).
pub fn end_leftovers() -> usize {
    platform::end_leftovers(END_ESCALATION, END_POLL)
}

/// Reaps adopted children that have exited (no zombies between legs). Only between legs.
pub fn reap_adopted() {
    platform::reap_adopted();
}

/// The most bytes of a foreground child's stderr kept ([`Foreground::stderr_tail`]).
pub const STDERR_TAIL: usize = 64 * 1024;

/// Runs `command` in the foreground with baton's own stdin and stdout (the output goes
/// through as the child prints it) and no deadline: `baton run`'s legs. Its stderr goes
/// through a pipe to baton's, its last [`STDERR_TAIL`] bytes kept (what the host said of
/// an error). While it runs, baton ignores SIGQUIT, as a shell does for a foreground job;
/// SIGINT and SIGTERM are noted when [`catch_interrupts`] was called (else SIGINT is
/// ignored too), and passed on to the child when a process sent them to baton alone (the
/// terminal sends Ctrl-C to the child itself). The child's exit status comes back; a child
/// killed by a signal gives 128 + the signal, as shells say.
///
/// `end_requested` is asked every [`END_POLL`] while the child runs: once it returns a
/// grace period, the child gets that long to exit by itself, then SIGINT (what a user's
/// Ctrl-C sends), then SIGTERM and at last SIGKILL, [`END_ESCALATION`] apart;
/// `signalled` is told after the first of them was sent.
pub fn run_in_foreground(
    mut command: Command,
    mut end_requested: impl FnMut() -> Option<Duration>,
    mut signalled: impl FnMut(),
) -> Result<Foreground, RunError> {
    command.stdin(Stdio::inherit()).stdout(Stdio::inherit()).stderr(Stdio::piped());
    let foreground = ForegroundChild::prepare(&mut command);
    let mut tail = None;
    let waited = command.spawn().map_err(RunError::Spawn).and_then(|mut child| {
        tail = child.stderr.take().map(tee_stderr);
        let exit = ExitNotice::of(&child);
        let mut ending: Option<(Instant, Duration)> = None;
        let mut steps_sent = 0;
        loop {
            if let Some(status) = child.try_wait().map_err(RunError::Wait)? {
                return Ok((status, ending.is_some() && steps_sent > 0, SystemTime::now()));
            }
            if platform::take_interrupt_to_forward() {
                if let Some(signal) = interrupted() {
                    ForegroundChild::forward(&child, signal);
                }
            }
            if ending.is_none() {
                ending = end_requested().map(|grace| (Instant::now(), grace));
            }
            // With no grace, the first signal goes at once, not a poll later.
            if ending.is_some_and(|(since, grace)| since.elapsed() >= grace) {
                if steps_sent < ForegroundChild::END_STEPS {
                    ForegroundChild::end(&child, steps_sent);
                    steps_sent += 1;
                    if steps_sent == 1 {
                        signalled();
                    }
                }
                ending = Some((Instant::now(), END_ESCALATION));
            }
            exit.wait(END_POLL);
        }
    });
    drop(foreground);
    let (status, interrupted, exited) = waited?;
    // The child's stderr closes with it (or with the last of its children).
    let stderr_tail = tail.and_then(|t| t.recv_timeout(END_ESCALATION).ok()).unwrap_or_default();
    Ok(Foreground { code: ForegroundChild::exit_code(status), interrupted, stderr_tail, exited })
}

/// Copies a child's stderr to baton's as it comes, keeping its last [`STDERR_TAIL`] bytes.
fn tee_stderr(mut pipe: std::process::ChildStderr) -> Receiver<Vec<u8>> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut kept: Vec<u8> = vec![];
        let mut buffer = [0u8; 8192];
        let mut stderr = io::stderr();
        loop {
            match pipe.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let _ = stderr.write_all(&buffer[..n]);
                    let _ = stderr.flush();
                    kept.extend_from_slice(&buffer[..n]);
                    if kept.len() > STDERR_TAIL {
                        kept.drain(..kept.len() - STDERR_TAIL);
                    }
                }
            }
        }
        let _ = sender.send(kept);
    });
    receiver
}

/// How often a foreground child's end is asked about.
pub const END_POLL: Duration = Duration::from_millis(50);
/// Between the signals that end a foreground child that was asked to end.
pub const END_ESCALATION: Duration = Duration::from_secs(2);

/// How a foreground child ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Foreground {
    /// Its exit status (128 + the signal when a signal killed it).
    pub code: i32,
    /// baton signalled it (its end was requested and it did not exit in the grace).
    pub interrupted: bool,
    /// The last bytes of its stderr.
    pub stderr_tail: Vec<u8>,
    /// When its exit was seen (before the rest of its stderr was waited for).
    pub exited: SystemTime,
}

/// Starts `command` as `options` say; the deadline runs from now.
pub fn start(mut command: Command, options: &Options) -> Result<Running, RunError> {
    command
        .stdin(if options.input == Input::Null { Stdio::null() } else { Stdio::piped() })
        .stdout(Stdio::piped())
        .stderr(if options.stderr { Stdio::piped() } else { Stdio::null() });
    if options.kill == Kill::Group {
        ProcessTree::prepare(&mut command);
    }
    let start = Instant::now();
    let mut child = command.spawn().map_err(RunError::Spawn)?;
    let tree = (options.kill == Kill::Group).then(|| ProcessTree::of(&child));
    let (writer, held) = match (&options.input, child.stdin.take()) {
        (Input::Bytes(bytes), Some(pipe)) => (Some(feed(pipe, bytes.clone())), None),
        (Input::HeldOpen, Some(pipe)) => (None, Some(pipe)),
        _ => (None, None),
    };
    let stdout = child.stdout.take().map(|pipe| collect(pipe, options.output_limit));
    let stderr = child.stderr.take().map(|pipe| collect(pipe, options.output_limit));
    Ok(Running { child, start, deadline: start + options.timeout, tree, writer, held, stdout, stderr })
}

impl Running {
    /// Waits for the child to exit and close its output, until the deadline.
    pub fn finish(mut self) -> Result<Finished, RunError> {
        let mut pause = Duration::from_millis(1);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => {}
                Err(e) => {
                    kill(&mut self.child, self.tree.as_ref());
                    return Err(RunError::Wait(e));
                }
            }
            let now = Instant::now();
            if now >= self.deadline {
                kill(&mut self.child, self.tree.as_ref());
                return Err(RunError::TimedOut);
            }
            std::thread::sleep(pause.min(self.deadline - now));
            // Quick children are seen at once; slow ones are not polled hot.
            if self.start.elapsed() > Duration::from_millis(100) {
                pause = Duration::from_millis(10);
            }
        };
        let elapsed = self.start.elapsed();
        drop(self.held.take());
        let (out, err) = (self.stdout.take(), self.stderr.take());
        let stdout = self.output(out)?;
        let stderr = self.output(err)?;
        let stdin_error = self.writer.take().and_then(|w| w.try_recv().ok()).and_then(Result::err);
        Ok(Finished { status, stdout, stderr, elapsed, stdin_error })
    }

    /// What a reader thread collected. A child's child may still hold the pipe open: it
    /// is waited for only until the deadline, then the child (or group) is killed.
    fn output(&mut self, pipe: Option<Receiver<Vec<u8>>>) -> Result<Vec<u8>, RunError> {
        let Some(pipe) = pipe else { return Ok(Vec::new()) };
        match pipe.recv_timeout(self.deadline.saturating_duration_since(Instant::now())) {
            Ok(bytes) => Ok(bytes),
            Err(RecvTimeoutError::Disconnected) => Ok(Vec::new()),
            Err(RecvTimeoutError::Timeout) => {
                kill(&mut self.child, self.tree.as_ref());
                Err(RunError::TimedOut)
            }
        }
    }
}

/// Writes `bytes` to the child from a thread, never joined: if the child does not read,
/// the write ends when it exits. The result comes on the channel.
fn feed(mut pipe: ChildStdin, bytes: Vec<u8>) -> Receiver<io::Result<()>> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(pipe.write_all(&bytes));
    });
    receive
}

/// Reads `pipe` to its end from a thread, keeping at most `limit` bytes (the rest is
/// drained so the child is never blocked on a full pipe).
fn collect(pipe: impl Read + Send + 'static, limit: u64) -> Receiver<Vec<u8>> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let mut limited = pipe.take(limit);
        let _ = limited.read_to_end(&mut bytes);
        let _ = io::copy(&mut limited.into_inner(), &mut io::sink());
        let _ = send.send(bytes);
    });
    receive
}

/// Kills the child (and its tree) and reaps it.
fn kill(child: &mut Child, tree: Option<&ProcessTree>) {
    if let Some(tree) = tree {
        tree.kill();
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn the_wait_ends_when_the_child_exits() {
        let mut child = Command::new("sh").args(["-c", "sleep 0.2"]).spawn().unwrap();
        let exit = ExitNotice::of(&child);
        assert!(exit.immediate(), "the kernel gives a pidfd (Linux 5.3 and later)");
        let start = Instant::now();
        exit.wait(Duration::from_secs(60));
        assert!(start.elapsed() < Duration::from_secs(30), "woken by the exit, not the limit");
        assert!(child.wait().unwrap().success());
    }

    fn sh(script: &str) -> Command {
        let mut command = Command::new("/bin/sh");
        command.arg("-c").arg(script);
        command
    }

    fn options(input: Input, timeout_ms: u64, kill: Kill) -> Options {
        Options { input, stderr: true, output_limit: 8, timeout: Duration::from_millis(timeout_ms), kill }
    }

    #[test]
    fn output_status_and_limit() {
        let done = run(
            sh("cat; echo oops >&2; exit 3"),
            &options(Input::Bytes(b"0123456789".to_vec()), 5000, Kill::Child),
        )
        .unwrap();
        assert_eq!(done.status.code(), Some(3));
        assert_eq!(done.stdout, b"01234567");
        assert_eq!(done.stderr, b"oops\n");
    }

    #[test]
    fn a_slow_group_is_killed_at_the_deadline() {
        let start = Instant::now();
        // The shell's child keeps stdout open: the whole group must go.
        let result = run(sh("sleep 30 & sleep 30"), &options(Input::Null, 200, Kill::Group));
        assert!(matches!(result, Err(RunError::TimedOut)), "{result:?}");
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn output_held_open_by_a_grandchild_is_a_timeout() {
        let result = run(sh("sleep 30 &"), &options(Input::Null, 300, Kill::Group));
        assert!(matches!(result, Err(RunError::TimedOut)), "{result:?}");
    }

    #[test]
    fn held_open_stdin_and_missing_programs() {
        let done = run(sh("echo ok"), &options(Input::HeldOpen, 5000, Kill::Child)).unwrap();
        assert_eq!(done.stdout, b"ok\n");
        let missing = run(Command::new("/nonexistent/baton-test"), &options(Input::Null, 1000, Kill::Child));
        assert!(matches!(missing, Err(RunError::Spawn(e)) if e.kind() == io::ErrorKind::NotFound));
    }
}
