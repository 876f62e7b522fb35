//! A pseudo-terminal baton owns, for `baton run`'s interactive host: the host runs on
//! the pty's slave side as its controlling terminal, the user's terminal is in raw mode
//! (restored by a guard on every way out, panics included), the host's output goes to
//! baton's stdout byte for byte, the user's keys to the host, window-size changes
//! (SIGWINCH) to the pty, SIGTERM, SIGHUP, SIGINT and SIGQUIT sent to baton to the host,
//! a stopped host (SIGSTOP) stops baton too, until the user's shell continues it, and the
//! host's exit status comes back. (A host's own Ctrl-Z does not suspend it here: its
//! process group on baton's pty is orphaned, and Linux drops SIGTSTP sent to one.)
//!
//! What baton itself shows and types is a [`Driver`]'s: it sees every key first and is
//! asked every [`TICK`] for its [`Action`]s. Only libc (already a dependency): the POSIX
//! pty calls and one poll loop are smaller than a pty crate and its threads.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the driver is asked for its actions (and the child's exit looked for): each
/// of the relay's waits (quiet, echo) ends up to a tick late.
pub const TICK: Duration = Duration::from_millis(50);

/// What a driver asks the loop to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Write these bytes to the user's terminal (baton's stdout).
    Show(Vec<u8>),
    /// Type these bytes into the host, as if the user had.
    Type(Vec<u8>),
}

/// What baton does beside passing bytes through.
pub trait Driver {
    /// The user typed `bytes`: whether they go on to the host.
    fn keys(&mut self, bytes: &[u8], now: Instant) -> bool;
    /// The host printed something (passed through already).
    fn output(&mut self, now: Instant);
    /// Asked every [`TICK`]; `rows` is the terminal's height.
    fn tick(&mut self, now: Instant, rows: u16) -> Vec<Action>;
}

/// Whether baton's stdin is a terminal.
pub fn stdin_is_terminal() -> bool {
    // SAFETY: isatty has no memory preconditions.
    unsafe { libc::isatty(libc::STDIN_FILENO) == 1 }
}

fn last_error() -> io::Error {
    io::Error::last_os_error()
}

/// A new pty pair: (master, slave), both close-on-exec.
fn open_pty() -> io::Result<(OwnedFd, OwnedFd)> {
    // SAFETY: plain POSIX calls; every fd returned is owned at once, the name buffer is
    // large enough and NUL-terminated by the call.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        if master < 0 {
            return Err(last_error());
        }
        let master = OwnedFd::from_raw_fd(master);
        let fd = master.as_raw_fd();
        if libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) != 0
            || libc::grantpt(fd) != 0
            || libc::unlockpt(fd) != 0
        {
            return Err(last_error());
        }
        let name = slave_name(fd)?;
        let slave = libc::open(name.as_ptr(), libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        if slave < 0 {
            return Err(last_error());
        }
        Ok((master, OwnedFd::from_raw_fd(slave)))
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn slave_name(master: RawFd) -> io::Result<std::ffi::CString> {
    let mut buf = vec![0 as libc::c_char; 256];
    // SAFETY: the buffer is as long as said.
    if unsafe { libc::ptsname_r(master, buf.as_mut_ptr(), buf.len()) } != 0 {
        return Err(last_error());
    }
    // SAFETY: ptsname_r wrote a NUL-terminated name into the buffer.
    Ok(unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_owned())
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn slave_name(master: RawFd) -> io::Result<std::ffi::CString> {
    // SAFETY: ptsname returns a static NUL-terminated name or NULL; it is copied at once
    // (baton opens one pty, from one thread).
    let name = unsafe { libc::ptsname(master) };
    if name.is_null() {
        return Err(last_error());
    }
    Ok(unsafe { std::ffi::CStr::from_ptr(name) }.to_owned())
}

/// The user's terminal in raw mode while this lives; restored when it is dropped (a
/// panic unwinds through it too).
struct RawMode {
    saved: libc::termios,
}

impl RawMode {
    fn enter(fd: RawFd) -> Option<RawMode> {
        // SAFETY: termios is plain data; tcgetattr fills it or fails.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        if unsafe { libc::tcgetattr(fd, &mut saved) } != 0 {
            return None;
        }
        let mut raw = saved;
        // SAFETY: cfmakeraw only edits the struct it is given.
        unsafe { libc::cfmakeraw(&mut raw) };
        // SAFETY: as above.
        if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &raw) } != 0 {
            return None;
        }
        Some(RawMode { saved })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        // SAFETY: restores the settings read in `enter`.
        unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &self.saved) };
    }
}

fn window_size(fd: RawFd) -> Option<libc::winsize> {
    // SAFETY: winsize is plain data; the ioctl fills it or fails.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    (unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut size) } == 0 && size.ws_row > 0).then_some(size)
}

fn set_window_size(fd: RawFd, size: &libc::winsize) {
    // SAFETY: as above; the kernel sends SIGWINCH to the pty's foreground group.
    unsafe { libc::ioctl(fd, libc::TIOCSWINSZ, size) };
}

/// The signals baton passes on, and the flags their handler raises.
const FORWARDED: [libc::c_int; 4] = [libc::SIGTERM, libc::SIGHUP, libc::SIGINT, libc::SIGQUIT];
static RAISED: [AtomicBool; 5] = [
    AtomicBool::new(false),
    AtomicBool::new(false),
    AtomicBool::new(false),
    AtomicBool::new(false),
    AtomicBool::new(false),
];

fn flag_of(signal: libc::c_int) -> Option<usize> {
    if signal == libc::SIGWINCH {
        return Some(4);
    }
    FORWARDED.iter().position(|s| *s == signal)
}

extern "C" fn on_signal(signal: libc::c_int) {
    if let Some(i) = flag_of(signal) {
        RAISED[i].store(true, Ordering::SeqCst);
    }
}

/// baton's own dispositions of the handled signals while the pty runs; the old ones come
/// back on drop.
struct Handlers {
    old: Vec<(libc::c_int, libc::sigaction)>,
}

impl Handlers {
    fn install() -> Handlers {
        let mut old = vec![];
        for signal in FORWARDED.iter().copied().chain([libc::SIGWINCH]) {
            // SAFETY: a handler that only stores to an atomic is async-signal-safe; no
            // SA_RESTART, so poll() returns at once with EINTR.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
                libc::sigemptyset(&mut action.sa_mask);
                let mut previous: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, &action, &mut previous) == 0 {
                    old.push((signal, previous));
                }
            }
        }
        Handlers { old }
    }
}

impl Drop for Handlers {
    fn drop(&mut self) {
        for (signal, previous) in &self.old {
            // SAFETY: puts back what sigaction returned.
            unsafe { libc::sigaction(*signal, previous, std::ptr::null_mut()) };
        }
    }
}

fn write_all(fd: RawFd, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        // SAFETY: writes from a live slice.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            let e = last_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            if e.kind() == io::ErrorKind::WouldBlock {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            }
            return Err(e);
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}

/// One read: Some(n) bytes (0 at the end), None when it would block or was interrupted.
fn read_some(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: reads into a live buffer of the given length.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n >= 0 {
        return Ok(Some(n as usize));
    }
    let e = last_error();
    match e.kind() {
        io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock => Ok(None),
        _ => Err(e),
    }
}

/// Runs `command` on a pty of its own until it exits, with `driver` beside it; its exit
/// status (128 + the signal when a signal ended it). An error: the pty or the child
/// could not be made.
pub fn run(mut command: Command, driver: &mut impl Driver) -> io::Result<i32> {
    let (master, slave) = open_pty()?;
    let m = master.as_raw_fd();
    let user = libc::STDIN_FILENO;
    // The host starts with the user's terminal's settings and size.
    // SAFETY: termios is plain data; copied from the user's terminal to the slave.
    unsafe {
        let mut settings: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(user, &mut settings) == 0 {
            libc::tcsetattr(slave.as_raw_fd(), libc::TCSANOW, &settings);
        }
    }
    let mut size = window_size(user);
    if let Some(size) = &size {
        set_window_size(m, size);
    }
    command
        .stdin(Stdio::from(slave.try_clone()?))
        .stdout(Stdio::from(slave.try_clone()?))
        .stderr(Stdio::from(slave));
    // SAFETY: setsid and ioctl are async-signal-safe: the child leads a new session whose
    // controlling terminal is the slave (its stdin by now).
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let handlers = Handlers::install();
    let child = command.spawn()?;
    // The slave's copies in `command` close here: the master sees the end when the host's
    // side is gone.
    drop(command);
    let mut raw = RawMode::enter(user);
    let pid = child.id() as libc::pid_t;
    let mut user_open = true;
    let mut host_open = true;
    let mut buf = vec![0u8; 64 * 1024];
    let mut last_tick = Instant::now();
    let status = loop {
        for (i, signal) in FORWARDED.iter().enumerate() {
            if RAISED[i].swap(false, Ordering::SeqCst) {
                // SAFETY: our own child, not yet reaped.
                unsafe { libc::kill(pid, *signal) };
            }
        }
        if RAISED[4].swap(false, Ordering::SeqCst) {
            size = window_size(user).or(size);
            if let Some(size) = &size {
                set_window_size(m, size);
            }
        }
        match wait(pid)? {
            Waited::Running => {}
            Waited::Exited(code) => break code,
            // The host was stopped: so is baton, the terminal as it was, and both go on
            // together when the user's shell continues baton.
            Waited::Stopped => {
                drop(raw.take());
                // SAFETY: stops this process; SIGSTOP cannot be caught.
                unsafe { libc::kill(libc::getpid(), libc::SIGSTOP) };
                raw = RawMode::enter(user);
                size = window_size(user).or(size);
                if let Some(size) = &size {
                    set_window_size(m, size);
                }
                // SAFETY: the host's process group (it leads its session).
                unsafe { libc::kill(-pid, libc::SIGCONT) };
            }
        }
        let mut fds = [
            libc::pollfd { fd: if user_open { user } else { -1 }, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: if host_open { m } else { -1 }, events: libc::POLLIN, revents: 0 },
        ];
        // SAFETY: two live pollfds.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), 2, TICK.as_millis() as libc::c_int) };
        let now = Instant::now();
        if ready > 0 {
            if fds[0].revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                match read_some(user, &mut buf) {
                    Ok(Some(0)) | Err(_) => user_open = false,
                    Ok(Some(n)) => {
                        if driver.keys(&buf[..n], now) {
                            let _ = write_all(m, &buf[..n]);
                        }
                    }
                    Ok(None) => {}
                }
            }
            if fds[1].revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                match read_some(m, &mut buf) {
                    // EIO: every slave fd closed (the host is going).
                    Ok(Some(0)) | Err(_) => host_open = false,
                    Ok(Some(n)) => {
                        let _ = write_all(libc::STDOUT_FILENO, &buf[..n]);
                        driver.output(now);
                    }
                    Ok(None) => {}
                }
            }
        }
        if now.duration_since(last_tick) >= TICK {
            last_tick = now;
            let rows = size.map_or(24, |s| s.ws_row);
            for action in driver.tick(now, rows) {
                match action {
                    Action::Show(bytes) => {
                        let _ = write_all(libc::STDOUT_FILENO, &bytes);
                    }
                    Action::Type(bytes) => {
                        let _ = write_all(m, &bytes);
                    }
                }
            }
        }
    };
    // What the host printed last, while the master still has it (a grandchild holding
    // the slave open does not keep baton waiting).
    // SAFETY: makes our own master fd non-blocking.
    unsafe {
        let flags = libc::fcntl(m, libc::F_GETFL);
        libc::fcntl(m, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
    while host_open {
        match read_some(m, &mut buf) {
            Ok(Some(n)) if n > 0 => {
                let _ = write_all(libc::STDOUT_FILENO, &buf[..n]);
            }
            _ => host_open = false,
        }
    }
    drop(raw);
    drop(handlers);
    drop(child);
    Ok(status)
}

/// What `waitpid` says of the host.
enum Waited {
    Running,
    /// Its exit status (128 + the signal when a signal ended it).
    Exited(i32),
    Stopped,
}

/// The host's state, reaping it once it has exited (`std::process::Child` cannot see a
/// stop).
fn wait(pid: libc::pid_t) -> io::Result<Waited> {
    let mut status = 0;
    // SAFETY: waitpid on our own child, into a local.
    let got = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG | libc::WUNTRACED) };
    if got == 0 {
        return Ok(Waited::Running);
    }
    if got < 0 {
        let e = last_error();
        return if e.kind() == io::ErrorKind::Interrupted { Ok(Waited::Running) } else { Err(e) };
    }
    Ok(if libc::WIFSTOPPED(status) {
        Waited::Stopped
    } else if libc::WIFEXITED(status) {
        Waited::Exited(libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        Waited::Exited(128 + libc::WTERMSIG(status))
    } else {
        Waited::Running
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo {
        typed: bool,
    }

    impl Driver for Echo {
        fn keys(&mut self, _: &[u8], _: Instant) -> bool {
            true
        }
        fn output(&mut self, _: Instant) {}
        fn tick(&mut self, _: Instant, _: u16) -> Vec<Action> {
            if std::mem::replace(&mut self.typed, true) {
                return vec![];
            }
            vec![Action::Type(b"hello\n".to_vec())]
        }
    }

    #[test]
    fn the_host_runs_on_a_terminal_and_its_status_comes_back() {
        // The child's stdin is a terminal (the pty), and what is typed reaches it.
        let mut command = Command::new("/bin/sh");
        command.arg("-c").arg("[ -t 0 ] || exit 9; read line; [ \"$line\" = hello ] || exit 8; exit 5");
        assert_eq!(run(command, &mut Echo { typed: false }).unwrap(), 5);
    }
}
