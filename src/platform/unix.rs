//! The Unix side of [`crate::platform`]: libc and `std::os::unix`.

use std::ffi::{CStr, OsStr, c_char};
use std::fs::{self, DirBuilder, File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Instant;

use super::StatIdentity;

/// Opens `path` for reading without blocking (a FIFO or a device cannot hang the open)
/// and, unless `follow`, never through a symlink at the last component.
pub fn open_read(path: &Path, follow: bool) -> io::Result<File> {
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if !follow {
        flags |= libc::O_NOFOLLOW;
    }
    OpenOptions::new().read(true).custom_flags(flags).open(path)
}

/// Whether an open failed because the path is a symlink a no-follow open refused.
pub fn is_symlink_refusal(error: &io::Error) -> bool {
    error.raw_os_error() == Some(libc::ELOOP)
}

/// Creates a new file for writing (fails when anything is at `path`, a symlink
/// included), with `mode` less the umask.
pub fn create_new(path: &Path, mode: u32) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Opens a file to append to, created if missing, never through a symlink.
pub fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new().append(true).create(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(path)
}

/// Opens (creating it 0600) a lock file, never through a symlink, without blocking.
pub fn open_lock(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
}

/// Sets an open file's mode exactly, whatever the umask.
pub fn set_mode(file: &File, mode: u32) -> io::Result<()> {
    file.set_permissions(fs::Permissions::from_mode(mode))
}

/// Creates one folder: mode 0700 set exactly when `private`, else the umask's.
pub fn create_dir(path: &Path, private: bool) -> io::Result<()> {
    let mut builder = DirBuilder::new();
    if private {
        builder.mode(0o700);
    }
    builder.create(path)?;
    if private {
        fs::set_permissions(path, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// The file's mode bits (type included), as `stat` gives them.
pub fn mode_of(meta: &Metadata) -> u32 {
    meta.mode()
}

/// 0666 less the umask: the mode a new user file gets.
pub fn default_file_mode() -> u32 {
    // SAFETY: umask cannot fail; it is set back at once. Only called on user-file writes,
    // never concurrently with file creation elsewhere in this process.
    let mask = unsafe {
        let old = libc::umask(0o022);
        libc::umask(old);
        old
    };
    0o666 & !(mask as u32)
}

/// The process's effective user id.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Whether the file belongs to this user (its uid is the effective uid).
pub fn is_mine(meta: &Metadata) -> bool {
    meta.uid() == euid()
}

/// The folder's owner and mode, for the exposure rule.
pub fn owner_and_mode(meta: &Metadata) -> Option<(u32, u32)> {
    Some((meta.uid(), meta.mode()))
}

/// The kernel's answer to "may this process write `path`" (`access(W_OK)`).
pub fn writable(path: &Path) -> bool {
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return false };
    // SAFETY: a valid NUL-terminated path; access has no other preconditions.
    unsafe { libc::access(c_path.as_ptr(), libc::W_OK) == 0 }
}

/// Whether `a` and `b` are the same file (a hard link of each other), not following a
/// symlink at either.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::symlink_metadata(a), fs::symlink_metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The stat data git keeps in an index entry.
pub fn stat_identity(meta: &Metadata) -> Option<StatIdentity> {
    Some(StatIdentity {
        ctime: (meta.ctime(), meta.ctime_nsec() as u32),
        mtime: (meta.mtime(), meta.mtime_nsec() as u32),
        dev: meta.dev(),
        ino: meta.ino(),
        uid: meta.uid(),
        gid: meta.gid(),
    })
}

/// Whether process `pid` is gone (a pid in use by anyone, even a process baton may not
/// signal, counts as alive).
pub fn pid_gone(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    // SAFETY: signal 0 only checks whether the process exists.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    !alive && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// Fills `buf` from the kernel's random source.
pub fn random_bytes(buf: &mut [u8]) -> io::Result<()> {
    File::open("/dev/urandom").and_then(|mut f| f.read_exact(buf))
}

/// A path from the bytes git stores (any bytes are a Unix path).
pub fn path_from_bytes(bytes: &[u8]) -> PathBuf {
    PathBuf::from(OsStr::from_bytes(bytes))
}

/// Ends the process at once with `code`, running nothing more of it (no flush, no
/// destructors).
pub fn end_process_now(code: i32) -> ! {
    // SAFETY: `_exit` has no preconditions.
    unsafe { libc::_exit(code) }
}

/// Ends the process as `kill -9` would (test builds' crash points).
#[cfg(debug_assertions)]
pub fn exit_test_kill() {
    // SAFETY: raising a signal has no memory preconditions; SIGKILL ends the process.
    unsafe { libc::raise(libc::SIGKILL) };
}

/// Starts `command` detached from baton: its own process group, so a signal to the
/// host's group does not reach it.
pub fn detach(command: &mut Command) {
    command.process_group(0);
}

/// A child and every process it starts, ended together: the child leads a process group
/// of its own ([`ProcessTree::prepare`] before the spawn).
#[derive(Debug)]
pub struct ProcessTree {
    group: libc::pid_t,
}

impl ProcessTree {
    /// Makes the child a process group leader.
    pub fn prepare(command: &mut Command) {
        command.process_group(0);
    }

    /// The group of a child spawned from a prepared command.
    pub fn of(child: &Child) -> ProcessTree {
        ProcessTree { group: child.id() as libc::pid_t }
    }

    /// Kills every process of the group.
    pub fn kill(&self) {
        // SAFETY: kill has no memory preconditions; the group is the one spawned here.
        unsafe {
            libc::kill(-self.group, libc::SIGKILL);
        }
    }
}

const DEFERRED: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

static PENDING: AtomicI32 = AtomicI32::new(0);

extern "C" fn remember(signal: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    PENDING.store(signal, Ordering::SeqCst);
}

/// Defers SIGINT, SIGTERM and SIGHUP while it lives (see `gitx::signals`): a handler (not
/// a signal mask, which covers only the calling thread) remembers them; when dropped,
/// the previous handlers come back and a remembered signal is raised again.
pub struct DeferInterrupts {
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

impl DeferInterrupts {
    pub fn new() -> DeferInterrupts {
        let mut previous = Vec::with_capacity(DEFERRED.len());
        for signal in DEFERRED {
            // SAFETY: zeroed sigaction structs are valid to fill; `remember` only stores to
            // an atomic, which is async-signal-safe; the old action is kept to restore it.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = remember as *const () as libc::sighandler_t;
                libc::sigemptyset(&mut action.sa_mask);
                action.sa_flags = libc::SA_RESTART;
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, &action, &mut old) == 0 {
                    previous.push((signal, old));
                }
            }
        }
        DeferInterrupts { previous }
    }
}

impl Default for DeferInterrupts {
    fn default() -> DeferInterrupts {
        DeferInterrupts::new()
    }
}

impl Drop for DeferInterrupts {
    fn drop(&mut self) {
        for (signal, old) in &self.previous {
            // SAFETY: restores exactly the action `sigaction` returned for this signal.
            unsafe {
                libc::sigaction(*signal, old, std::ptr::null_mut());
            }
        }
        let pending = PENDING.swap(0, Ordering::SeqCst);
        if pending != 0 {
            // SAFETY: raising a signal with its original disposition back in place.
            unsafe {
                libc::raise(pending);
            }
        }
    }
}

/// stdin, every read of which waits at most until a deadline: `poll` first, for no
/// longer than what is left. No thread is started: on the hook's path a thread costs
/// more than all the rest.
pub struct StdinReader {
    file: ManuallyDrop<File>,
    deadline: Instant,
}

impl StdinReader {
    pub fn new(deadline: Instant) -> StdinReader {
        // SAFETY: fd 0 stays open for the life of the process; ManuallyDrop never closes it.
        let file = ManuallyDrop::new(unsafe { File::from_raw_fd(0) });
        StdinReader { file, deadline }
    }

    /// Waits (within the deadline) until stdin is readable, hung up or in error.
    fn wait_readable(&self) -> io::Result<()> {
        loop {
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "stdin deadline"));
            }
            let mut pollfd = libc::pollfd { fd: 0, events: libc::POLLIN, revents: 0 };
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
            // Readable, hung up or in error: the read tells which.
            return Ok(());
        }
    }

    /// Reads into the spare capacity of `buf` (which must have some) and returns how many
    /// bytes came (0 at end of input). The spare capacity is handed to the kernel as it
    /// is: no page of it is touched before the kernel writes there.
    pub fn read_spare(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        loop {
            self.wait_readable()?;
            let spare = buf.spare_capacity_mut();
            // SAFETY: `spare` is writable memory of `spare.len()` bytes owned by `buf`;
            // read(2) writes at most that many bytes into it.
            let n = unsafe { libc::read(0, spare.as_mut_ptr().cast(), spare.len()) };
            if n < 0 {
                let err = io::Error::last_os_error();
                if err.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(err);
            }
            let n = n as usize;
            // SAFETY: the kernel initialised the first `n` bytes of the spare capacity.
            unsafe { buf.set_len(buf.len() + n) };
            return Ok(n);
        }
    }
}

impl Read for StdinReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.wait_readable()?;
        self.file.read(buf)
    }
}

unsafe extern "C" {
    /// The C library's environment: a NULL-terminated array of `NAME=value` strings.
    static environ: *const *const c_char;
}

/// The value of each variable in `names` that is set and valid UTF-8, in the order the
/// environment lists them (a name set twice: the first, as `getenv` gives it), found by
/// walking the C library's environment once.
pub fn vars_named(names: &[&'static str]) -> Vec<(&'static str, String)> {
    let mut found: Vec<(&'static str, String)> = Vec::new();
    // Most of an environment is other programs' variables: only an entry whose first
    // byte starts one of the names is compared with them.
    let mut first_bytes = [false; 256];
    for name in names {
        if let Some(&first) = name.as_bytes().first() {
            first_bytes[usize::from(first)] = true;
        }
    }
    // SAFETY: baton never changes its own environment (no `set_var` anywhere), so the
    // array and its strings stay valid and unchanged while they are read. Each entry is a
    // NUL-terminated string; the array ends with a null pointer.
    unsafe {
        let mut entry = environ;
        while !entry.is_null() && !(*entry).is_null() {
            let start = *entry;
            entry = entry.add(1);
            if !first_bytes[usize::from(*start as u8)] {
                continue;
            }
            let bytes = CStr::from_ptr(start).to_bytes();
            let Some(equals) = bytes.iter().position(|&b| b == b'=') else { continue };
            let (name, value) = (&bytes[..equals], &bytes[equals + 1..]);
            let Some(&wanted) = names.iter().find(|n| n.as_bytes() == name) else { continue };
            if found.iter().any(|(n, _)| *n == wanted) {
                continue;
            }
            if let Some(value) = OsStr::from_bytes(value).to_str() {
                found.push((wanted, value.to_string()));
            }
        }
    }
    found
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
/// (`util::proc::run_in_foreground`).
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

/// Whether an interrupt a process sent to baton alone is still to be passed on to the
/// foreground child (asked once: the answer is cleared).
pub fn take_interrupt_to_forward() -> bool {
    INTERRUPT_TO_FORWARD.swap(false, Ordering::SeqCst)
}

/// baton's side of a foreground child (`baton run`'s legs): while it lives, SIGQUIT is
/// ignored in baton, as a shell does for a foreground job, and SIGINT too unless
/// [`catch_interrupts`] was called; the child gets SIGINT, SIGQUIT and SIGTERM back at
/// their defaults.
pub struct ForegroundChild {
    quit: libc::sighandler_t,
    int: Option<libc::sighandler_t>,
}

impl ForegroundChild {
    /// The steps that end a child asked to end: SIGINT, SIGTERM, SIGKILL.
    pub const END_STEPS: usize = 3;

    /// Ignores the interrupts in baton until dropped; the child restores their defaults.
    pub fn prepare(command: &mut Command) -> ForegroundChild {
        let caught = INTERRUPTS_CAUGHT.load(Ordering::SeqCst);
        // SAFETY: signal() with SIG_IGN only swaps dispositions.
        let quit = unsafe { libc::signal(libc::SIGQUIT, libc::SIG_IGN) };
        // SAFETY: as above.
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
        ForegroundChild { quit, int }
    }

    /// Passes an interrupt baton got on to the child.
    pub fn forward(child: &Child, signal: i32) {
        // SAFETY: kill() on our own child's pid, seen running by the caller.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    }

    /// Sends the child the `step`th of SIGINT, SIGTERM, SIGKILL.
    pub fn end(child: &Child, step: usize) {
        let signal = [libc::SIGINT, libc::SIGTERM, libc::SIGKILL][step.min(2)];
        // SAFETY: kill() on our own child's pid (not yet reaped: the caller saw it running).
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    }

    /// The exit status as a shell says it: 128 + the signal when a signal killed it.
    pub fn exit_code(status: std::process::ExitStatus) -> i32 {
        use std::os::unix::process::ExitStatusExt;
        status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
    }
}

impl Drop for ForegroundChild {
    fn drop(&mut self) {
        // SAFETY: restoring what was there before.
        unsafe {
            libc::signal(libc::SIGQUIT, self.quit);
            if let Some(int) = self.int {
                libc::signal(libc::SIGINT, int);
            }
        }
    }
}

/// Wakes the foreground loop as soon as the child exits, not at the next poll: the
/// relay's next leg starts without waiting out its poll (a pidfd, Linux 5.3 and later;
/// elsewhere, or when the kernel has none, the poll's sleep).
pub struct ExitNotice {
    #[cfg(target_os = "linux")]
    pidfd: Option<std::os::fd::OwnedFd>,
}

impl ExitNotice {
    pub fn of(child: &Child) -> ExitNotice {
        #[cfg(target_os = "linux")]
        {
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

    /// Whether the exit wakes the wait at once (a pidfd was had).
    #[cfg(test)]
    pub fn immediate(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self.pidfd.is_some();
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// Sleeps `limit` at most, less when the child exits meanwhile.
    pub fn wait(&self, limit: std::time::Duration) {
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

/// A command line run the way hosts run theirs: `/bin/sh -c <line>`.
pub fn shell(line: &str) -> Command {
    let mut sh = Command::new("/bin/sh");
    sh.arg("-c").arg(line);
    sh
}

/// SIGINT's number (what an interrupted run's exit code is made of: 128 + it).
pub const SIGINT: i32 = libc::SIGINT;

/// An open file's identity, length and age, from one `fstat`: (device, inode, length,
/// modification in nanoseconds since the epoch).
pub fn file_identity(file: &File) -> io::Result<(u64, u64, u64, i64)> {
    let meta = file.metadata()?;
    let modified = meta.mtime().saturating_mul(1_000_000_000).saturating_add(meta.mtime_nsec());
    Ok((meta.dev(), meta.ino(), meta.len(), modified))
}

/// Reads exactly `buf.len()` bytes at `offset`, without moving the file's position.
pub fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

/// From now on the processes this one's children leave behind (a host's workers, when
/// the host itself was killed) become its children rather than init's, so
/// [`end_leftovers`] can find them (Linux; elsewhere nothing).
pub fn adopt_orphans() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag on this process.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// This process's children now (from /proc; none where there is no /proc).
fn own_children() -> Vec<libc::pid_t> {
    let me = std::process::id().to_string();
    let mut found = vec![];
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<libc::pid_t>().ok()) else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // pid (comm) state ppid …: the comm may hold spaces and parentheses.
        let parent =
            stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1).map(str::to_string));
        if parent.as_deref() == Some(me.as_str()) {
            found.push(pid);
        }
    }
    found
}

/// Ends the processes a finished foreground child left behind ([`adopt_orphans`]): SIGTERM,
/// then SIGKILL after `escalation`, and reaps them. Only between legs: no child of
/// this process may be running that it still waits for. The number ended.
pub fn end_leftovers(escalation: std::time::Duration, poll: std::time::Duration) -> usize {
    let left = own_children();
    for pid in &left {
        // SAFETY: kill() of our own children (adopted orphans).
        unsafe { libc::kill(*pid, libc::SIGTERM) };
    }
    let until = Instant::now() + escalation;
    while Instant::now() < until && !own_living(&left).is_empty() {
        std::thread::sleep(poll);
    }
    for pid in own_living(&left) {
        // SAFETY: as above.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    reap_adopted();
    left.len()
}

/// Of `pids`, those still running (reaping those that exited).
fn own_living(pids: &[libc::pid_t]) -> Vec<libc::pid_t> {
    pids.iter()
        .copied()
        .filter(|pid| {
            let mut status = 0;
            // SAFETY: waitpid on our own child, without blocking.
            unsafe { libc::waitpid(*pid, &mut status, libc::WNOHANG) == 0 }
        })
        .collect()
}

/// Reaps adopted children that have exited (no zombies between legs). Only between legs.
pub fn reap_adopted() {
    let mut status = 0;
    // SAFETY: waitpid for any child, without blocking: between legs only adopted ones exist.
    while unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) } > 0 {}
}

/// A FIFO, a socket or a device, in words (`None` for anything else).
pub fn special_kind(meta: &Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_fifo() {
        Some("a FIFO")
    } else if kind.is_socket() {
        Some("a socket")
    } else if kind.is_char_device() || kind.is_block_device() {
        Some("a device")
    } else {
        None
    }
}
