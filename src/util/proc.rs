//! The one way baton runs a child process: with a deadline, its output read by threads
//! (a full pipe never blocks the child), its stdin fed from a thread (a child that never
//! reads never blocks baton), and killed past the deadline: only the child, or its whole
//! process group when it is a shell whose children must go too (the wrapped statusline).
//!
//! Used by `statusline --wrap`, the GitHub ledger's `gh` calls and doctor's hook
//! self-test; [`run_in_foreground`] runs `baton run`'s legs.

use std::io::{self, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

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
    /// The child's process group: the child runs in a group of its own, and a shell's
    /// children die with it.
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
    kill: Kill,
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

/// The signal a [`catch_interrupts`] handler got (0: none yet).
static INTERRUPT: AtomicI32 = AtomicI32::new(0);
/// It was sent by a process (`kill`), not by the terminal to the whole foreground group:
/// the foreground child has not got it yet.
static INTERRUPT_TO_FORWARD: AtomicBool = AtomicBool::new(false);
/// [`catch_interrupts`] was called.
static INTERRUPTS_CAUGHT: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(signal: libc::c_int, info: *mut libc::siginfo_t, _context: *mut libc::c_void) {
    // Only atomics here (async-signal-safe). A signal from the terminal's line discipline
    // has a positive si_code (SI_KERNEL); kill(2) and sigqueue(3) give SI_USER (0) or less.
    // SAFETY: the kernel passes a valid siginfo_t with SA_SIGINFO.
    let sent_by_a_process = info.is_null() || unsafe { (*info).si_code } <= 0;
    INTERRUPT.store(signal, Ordering::SeqCst);
    if sent_by_a_process {
        INTERRUPT_TO_FORWARD.store(true, Ordering::SeqCst);
    }
}

/// From now on SIGINT and SIGTERM to baton are noted, not fatal ([`interrupted`]):
/// `baton run` ends its run itself, after the leg it forwards them to
/// ([`run_in_foreground`]).
pub fn catch_interrupts() {
    INTERRUPTS_CAUGHT.store(true, Ordering::SeqCst);
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction with a handler that only stores atomics.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_interrupt as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// The SIGINT or SIGTERM baton got since [`catch_interrupts`], if any.
pub fn interrupted() -> Option<i32> {
    Some(INTERRUPT.load(Ordering::SeqCst)).filter(|s| *s != 0)
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
/// Ctrl-C sends), then SIGTERM and at last SIGKILL, [`END_ESCALATION`] apart.
pub fn run_in_foreground(
    mut command: Command,
    mut end_requested: impl FnMut() -> Option<Duration>,
) -> Result<Foreground, RunError> {
    use std::os::unix::process::ExitStatusExt;
    command.stdin(Stdio::inherit()).stdout(Stdio::inherit()).stderr(Stdio::piped());
    let caught = INTERRUPTS_CAUGHT.load(Ordering::SeqCst);
    // SAFETY: signal() with SIG_IGN / a previous disposition only swaps dispositions.
    let quit = unsafe { libc::signal(libc::SIGQUIT, libc::SIG_IGN) };
    let int = (!caught).then(|| unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) });
    // SAFETY: the child restores the default dispositions before exec (async-signal-safe).
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut tail = None;
    let waited = command.spawn().map_err(RunError::Spawn).and_then(|mut child| {
        tail = child.stderr.take().map(tee_stderr);
        let exit = ExitNotice::of(&child);
        let mut ending: Option<(Instant, Duration)> = None;
        let mut signals = [libc::SIGINT, libc::SIGTERM, libc::SIGKILL].into_iter().peekable();
        loop {
            if let Some(status) = child.try_wait().map_err(RunError::Wait)? {
                return Ok((status, ending.is_some() && signals.peek() != Some(&libc::SIGINT)));
            }
            if INTERRUPT_TO_FORWARD.swap(false, Ordering::SeqCst) {
                if let Some(signal) = interrupted() {
                    // SAFETY: kill() on our own child's pid, seen running just above.
                    unsafe { libc::kill(child.id() as libc::pid_t, signal) };
                }
            }
            match ending {
                None => ending = end_requested().map(|grace| (Instant::now(), grace)),
                Some((since, grace)) if since.elapsed() >= grace => {
                    if let Some(signal) = signals.next() {
                        // SAFETY: kill() on our own child's pid (not yet reaped: try_wait
                        // above saw it running).
                        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
                    }
                    ending = Some((Instant::now(), END_ESCALATION));
                }
                Some(_) => {}
            }
            exit.wait(END_POLL);
        }
    });
    // SAFETY: as above, restoring what was there before.
    unsafe {
        libc::signal(libc::SIGQUIT, quit);
        if let Some(int) = int {
            libc::signal(libc::SIGINT, int);
        }
    }
    let (status, interrupted) = waited?;
    // The child's stderr closes with it (or with the last of its children).
    let stderr_tail = tail.and_then(|t| t.recv_timeout(END_ESCALATION).ok()).unwrap_or_default();
    Ok(Foreground {
        code: status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
        interrupted,
        stderr_tail,
    })
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

/// Wakes the foreground loop as soon as the child exits, not at the next poll: the
/// relay's next leg starts without waiting out [`END_POLL`] (a pidfd, Linux 5.3 and
/// later; elsewhere, or when the kernel has none, the poll's sleep).
struct ExitNotice {
    #[cfg(target_os = "linux")]
    pidfd: Option<std::os::fd::OwnedFd>,
}

impl ExitNotice {
    fn of(child: &Child) -> ExitNotice {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::FromRawFd;
            // SAFETY: pidfd_open on our own child's pid (not yet reaped), no flags; a
            // descriptor it returns is ours alone.
            let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, child.id() as libc::pid_t, 0) };
            let pidfd = i32::try_from(fd).ok().filter(|fd| *fd >= 0).map(|fd| {
                // SAFETY: a fresh descriptor from the kernel, owned from here on.
                unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }
            });
            ExitNotice { pidfd }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = child;
            ExitNotice {}
        }
    }

    /// Sleeps `limit` at most, less when the child exits meanwhile.
    fn wait(&self, limit: Duration) {
        #[cfg(target_os = "linux")]
        if let Some(pidfd) = &self.pidfd {
            use std::os::fd::AsRawFd;
            let mut poll = libc::pollfd { fd: pidfd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            let millis = i32::try_from(limit.as_millis()).unwrap_or(i32::MAX);
            // SAFETY: one valid pollfd, for the call's duration.
            if unsafe { libc::poll(&mut poll, 1, millis) } >= 0 {
                return;
            }
        }
        std::thread::sleep(limit);
    }
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
}

/// Starts `command` as `options` say; the deadline runs from now.
pub fn start(mut command: Command, options: &Options) -> Result<Running, RunError> {
    command
        .stdin(if options.input == Input::Null { Stdio::null() } else { Stdio::piped() })
        .stdout(Stdio::piped())
        .stderr(if options.stderr { Stdio::piped() } else { Stdio::null() });
    if options.kill == Kill::Group {
        command.process_group(0);
    }
    let start = Instant::now();
    let mut child = command.spawn().map_err(RunError::Spawn)?;
    let (writer, held) = match (&options.input, child.stdin.take()) {
        (Input::Bytes(bytes), Some(pipe)) => (Some(feed(pipe, bytes.clone())), None),
        (Input::HeldOpen, Some(pipe)) => (None, Some(pipe)),
        _ => (None, None),
    };
    let stdout = child.stdout.take().map(|pipe| collect(pipe, options.output_limit));
    let stderr = child.stderr.take().map(|pipe| collect(pipe, options.output_limit));
    Ok(Running {
        child,
        start,
        deadline: start + options.timeout,
        kill: options.kill,
        writer,
        held,
        stdout,
        stderr,
    })
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
                    kill(&mut self.child, self.kill);
                    return Err(RunError::Wait(e));
                }
            }
            let now = Instant::now();
            if now >= self.deadline {
                kill(&mut self.child, self.kill);
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
                kill(&mut self.child, self.kill);
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

/// Kills the child (or its group) and reaps it.
fn kill(child: &mut Child, how: Kill) {
    match how {
        Kill::Child => {
            let _ = child.kill();
        }
        Kill::Group => {
            let pgid = child.id() as libc::pid_t;
            // SAFETY: kill has no memory preconditions; the group is the one spawned here.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn the_wait_ends_when_the_child_exits() {
        let mut child = Command::new("sh").args(["-c", "sleep 0.2"]).spawn().unwrap();
        let exit = ExitNotice::of(&child);
        assert!(exit.pidfd.is_some(), "the kernel gives a pidfd (Linux 5.3 and later)");
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
