//! The Windows side of [`crate::platform`]: `std::os::windows` and windows-sys.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::windows::fs::{MetadataExt as _, OpenOptionsExt};
use std::os::windows::io::AsRawHandle;
use std::os::windows::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use windows_sys::Win32::Foundation::{
    CloseHandle, ERROR_INVALID_PARAMETER, ERROR_STOPPED_ON_SYMLINK, HANDLE, HANDLE_FLAG_INHERIT,
    STATUS_CONTROL_C_EXIT, STILL_ACTIVE, SetHandleInformation,
};
use windows_sys::Win32::Security::Cryptography::{BCRYPT_USE_SYSTEM_PREFERRED_RNG, BCryptGenRandom};
use windows_sys::Win32::Storage::FileSystem::{
    BY_HANDLE_FILE_INFORMATION, FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT,
    GetFileInformationByHandle,
};
use windows_sys::Win32::System::Console::{
    GetStdHandle, STD_ERROR_HANDLE, STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, SetConsoleCtrlHandler,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{
    CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW, GetCurrentProcess, GetExitCodeProcess, OpenProcess,
    PROCESS_QUERY_LIMITED_INFORMATION, TerminateProcess, WaitForSingleObject,
};

use super::StatIdentity;

/// An open handle that is a symlink or a junction (a name surrogate) is refused with
/// this error, as `O_NOFOLLOW`'s `ELOOP` is on Unix.
fn symlink_error() -> io::Error {
    io::Error::from_raw_os_error(ERROR_STOPPED_ON_SYMLINK as i32)
}

/// Opens with `options`, not following a reparse point at the last component: a symlink
/// or a junction is refused; another kind of reparse point (a cloud placeholder, say) is
/// opened again the ordinary way, as Windows' own tools do.
fn open_no_follow(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    let file = options.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT).open(path)?;
    let meta = file.metadata()?;
    if meta.file_type().is_symlink() {
        return Err(symlink_error());
    }
    if meta.file_attributes() & windows_sys::Win32::Storage::FileSystem::FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        drop(file);
        return options.custom_flags(0).open(path);
    }
    Ok(file)
}

/// Opens `path` for reading; unless `follow`, never through a symlink or junction at
/// the last component. (Opens on Windows do not block on a pipe: a busy one fails.)
pub fn open_read(path: &Path, follow: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    if follow { options.open(path) } else { open_no_follow(path, &mut options) }
}

/// Whether an open failed because the path is a symlink a no-follow open refused.
pub fn is_symlink_refusal(error: &io::Error) -> bool {
    error.raw_os_error() == Some(ERROR_STOPPED_ON_SYMLINK as i32)
}

/// Creates a new file for writing (fails when anything is at `path`, a symlink
/// included). The mode has no Windows meaning but its write bits ([`set_mode`]).
pub fn create_new(path: &Path, _mode: u32) -> io::Result<File> {
    OpenOptions::new().write(true).create_new(true).custom_flags(FILE_FLAG_OPEN_REPARSE_POINT).open(path)
}

/// Opens a file to append to, created if missing, never through a symlink.
pub fn open_append(path: &Path) -> io::Result<File> {
    open_no_follow(path, OpenOptions::new().append(true).create(true))
}

/// Opens (creating it) a lock file, never through a symlink.
pub fn open_lock(path: &Path) -> io::Result<File> {
    open_no_follow(path, OpenOptions::new().read(true).write(true).create(true).truncate(false))
}

/// The read-only attribute from a mode: set when no write bit is.
pub fn set_mode(file: &File, mode: u32) -> io::Result<()> {
    let mut permissions = file.metadata()?.permissions();
    let read_only = mode & 0o222 == 0;
    if permissions.readonly() != read_only {
        permissions.set_readonly(read_only);
        file.set_permissions(permissions)?;
    }
    Ok(())
}

/// Creates one folder. Private or not, it takes the ACL of the folder it is made in
/// (under the user's profile: the user's alone).
pub fn create_dir(path: &Path, _private: bool) -> io::Result<()> {
    fs::create_dir(path)
}

/// A Unix-like mode for a file: 0444 when read-only, else 0666 (no execute bit: git on
/// Windows keeps none either).
pub fn mode_of(meta: &Metadata) -> u32 {
    let kind = if meta.is_dir() { 0o040000 } else { 0o100000 };
    let bits = if meta.permissions().readonly() { 0o444 } else { 0o666 };
    kind | bits
}

/// New user files are writable by the user.
pub fn default_file_mode() -> u32 {
    0o666
}

/// No uid on Windows.
pub fn euid() -> u32 {
    0
}

/// Always: the files baton checks for ownership are in the user's profile and temp
/// folder, which are the user's alone by their ACLs.
pub fn is_mine(_meta: &Metadata) -> bool {
    true
}

/// No Unix owner or mode to judge a folder by on Windows.
pub fn owner_and_mode(_meta: &Metadata) -> Option<(u32, u32)> {
    None
}

/// Whether `path` exists and is not read-only.
pub fn writable(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| !m.permissions().readonly())
}

/// The volume and file index of `path` (the reparse point itself, never followed).
fn file_id(path: &Path) -> Option<(u32, u32, u32)> {
    let file = OpenOptions::new()
        .access_mode(0)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)
        .ok()?;
    // SAFETY: an all-zero BY_HANDLE_FILE_INFORMATION is a valid value to be filled.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: a valid open handle and a pointer to a struct of the right type.
    let ok = unsafe { GetFileInformationByHandle(file.as_raw_handle() as HANDLE, &mut info) };
    (ok != 0).then_some((info.dwVolumeSerialNumber, info.nFileIndexHigh, info.nFileIndexLow))
}

/// Whether `a` and `b` are the same file (a hard link of each other).
pub fn same_file(a: &Path, b: &Path) -> bool {
    matches!((file_id(a), file_id(b)), (Some(a), Some(b)) if a == b)
}

/// None: git for Windows compares content where the index has no stat data.
pub fn stat_identity(_meta: &Metadata) -> Option<StatIdentity> {
    None
}

/// Whether process `pid` is gone: no such process, or one that has exited (a process
/// baton may not look at counts as alive).
pub fn pid_gone(pid: u32) -> bool {
    // SAFETY: OpenProcess has no memory preconditions; the handle is closed below.
    let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if process.is_null() {
        return io::Error::last_os_error().raw_os_error() == Some(ERROR_INVALID_PARAMETER as i32);
    }
    let mut code = 0u32;
    // SAFETY: a valid process handle and a pointer to a u32.
    let ok = unsafe { GetExitCodeProcess(process, &mut code) };
    // SAFETY: the handle was opened above and is closed once.
    unsafe { CloseHandle(process) };
    ok != 0 && code != STILL_ACTIVE as u32
}

/// Fills `buf` from the system's preferred random number generator.
pub fn random_bytes(buf: &mut [u8]) -> io::Result<()> {
    for chunk in buf.chunks_mut(u32::MAX as usize) {
        // SAFETY: the buffer is writable for its whole length; no algorithm handle is
        // needed with BCRYPT_USE_SYSTEM_PREFERRED_RNG.
        let status = unsafe {
            BCryptGenRandom(
                std::ptr::null_mut(),
                chunk.as_mut_ptr(),
                chunk.len() as u32,
                BCRYPT_USE_SYSTEM_PREFERRED_RNG,
            )
        };
        if status != 0 {
            return Err(io::Error::other(format!("BCryptGenRandom failed: {status:#x}")));
        }
    }
    Ok(())
}

/// A path from the bytes git stores (UTF-8 on Windows).
pub fn path_from_bytes(bytes: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

/// Ends the process at once with `code`, running nothing more of it.
pub fn end_process_now(code: i32) -> ! {
    // SAFETY: terminating the current process has no memory preconditions.
    unsafe { TerminateProcess(GetCurrentProcess(), code as u32) };
    std::process::abort()
}

/// Ends the process at once, as a crash would (test builds' crash points).
#[cfg(debug_assertions)]
pub fn exit_test_kill() {
    end_process_now(1)
}

/// Keeps baton's own standard handles from being inherited by a child: std starts
/// every child with all inheritable handles, and a detached child holding the host's
/// stdout pipe would keep the host waiting for the hook's output until it exits. A
/// child's own stdio (null, piped, inherited) is made separately and is unaffected.
fn keep_standard_handles() {
    for which in [STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE] {
        // SAFETY: GetStdHandle has no preconditions; SetHandleInformation on a null or
        // invalid handle only fails.
        unsafe {
            let handle = GetStdHandle(which);
            if !handle.is_null() {
                SetHandleInformation(handle, HANDLE_FLAG_INHERIT, 0);
            }
        }
    }
}

/// Starts `command` detached from baton: a process group of its own (Ctrl-C to the
/// host's console does not reach it), no console window, and none of baton's standard
/// handles.
pub fn detach(command: &mut Command) {
    keep_standard_handles();
    command.creation_flags(CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW);
}

/// A child and every process it starts, ended together: a Job object the child is put
/// in at once after the spawn (a process it starts before that instant escapes; the
/// shells baton runs start theirs later).
#[derive(Debug)]
pub struct ProcessTree {
    job: Option<isize>,
}

impl ProcessTree {
    /// A process group of its own, so the child's Ctrl-C is its own.
    pub fn prepare(command: &mut Command) {
        command.creation_flags(CREATE_NEW_PROCESS_GROUP);
    }

    /// A new Job object holding the child.
    pub fn of(child: &Child) -> ProcessTree {
        // SAFETY: no security attributes and no name: an anonymous job of this process.
        let job = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if job.is_null() {
            return ProcessTree { job: None };
        }
        // SAFETY: both handles are valid; the child's is owned by `child`.
        if unsafe { AssignProcessToJobObject(job, child.as_raw_handle() as HANDLE) } == 0 {
            // SAFETY: the job was made above and is closed once.
            unsafe { CloseHandle(job) };
            return ProcessTree { job: None };
        }
        ProcessTree { job: Some(job as isize) }
    }

    /// Ends every process of the job (the caller kills the child itself too, for the
    /// case the job could not be made).
    pub fn kill(&self) {
        if let Some(job) = self.job {
            // SAFETY: the job handle is open until drop.
            unsafe { TerminateJobObject(job as HANDLE, 1) };
        }
    }
}

impl Drop for ProcessTree {
    fn drop(&mut self) {
        if let Some(job) = self.job.take() {
            // SAFETY: the job handle is open and closed once (the processes stay).
            unsafe { CloseHandle(job as HANDLE) };
        }
    }
}

/// The console event seen while deferred, plus one (0: none).
static PENDING: AtomicU32 = AtomicU32::new(0);

unsafe extern "system" fn remember(event: u32) -> windows_sys::core::BOOL {
    PENDING.store(event + 1, Ordering::SeqCst);
    1
}

/// Defers Ctrl-C, Ctrl-Break and a console's close while it lives: a console control
/// handler remembers the event; when dropped, the handler goes and a remembered event
/// ends the process as Ctrl-C would have (exit `STATUS_CONTROL_C_EXIT`).
pub struct DeferInterrupts {
    installed: bool,
}

impl DeferInterrupts {
    pub fn new() -> DeferInterrupts {
        // SAFETY: `remember` only stores to an atomic.
        let installed = unsafe { SetConsoleCtrlHandler(Some(remember), 1) } != 0;
        DeferInterrupts { installed }
    }
}

impl Default for DeferInterrupts {
    fn default() -> DeferInterrupts {
        DeferInterrupts::new()
    }
}

impl Drop for DeferInterrupts {
    fn drop(&mut self) {
        if self.installed {
            // SAFETY: removes the handler added in `new`.
            unsafe { SetConsoleCtrlHandler(Some(remember), 0) };
        }
        if PENDING.swap(0, Ordering::SeqCst) != 0 {
            end_process_now(STATUS_CONTROL_C_EXIT);
        }
    }
}

/// What the stdin thread sends: a chunk (empty at end of input) or the read's error.
type Chunk = io::Result<Vec<u8>>;

/// The one thread that reads stdin, started at the first read: `PeekNamedPipe` cannot
/// wait with a timeout (and fails on some pipes), so a blocking read runs in a thread and
/// the deadline is a channel's timeout. The thread ends with the process.
fn stdin_chunks() -> &'static Mutex<Receiver<Chunk>> {
    static CHUNKS: OnceLock<Mutex<Receiver<Chunk>>> = OnceLock::new();
    CHUNKS.get_or_init(|| {
        let (send, receive) = mpsc::channel();
        std::thread::spawn(move || {
            let mut stdin = io::stdin().lock();
            loop {
                let mut chunk = vec![0; 64 * 1024];
                match stdin.read(&mut chunk) {
                    Ok(n) => {
                        chunk.truncate(n);
                        if send.send(Ok(chunk)).is_err() || n == 0 {
                            return;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        let _ = send.send(Err(e));
                        return;
                    }
                }
            }
        });
        Mutex::new(receive)
    })
}

/// stdin, every read of which waits at most until a deadline.
pub struct StdinReader {
    pending: Vec<u8>,
    at: usize,
    ended: bool,
    deadline: Instant,
}

impl StdinReader {
    pub fn new(deadline: Instant) -> StdinReader {
        StdinReader { pending: Vec::new(), at: 0, ended: false, deadline }
    }

    /// The bytes not handed out yet, waiting for the next chunk (within the deadline)
    /// when there are none; empty at end of input.
    fn available(&mut self) -> io::Result<&[u8]> {
        if self.at == self.pending.len() && !self.ended {
            let left = self.deadline.saturating_duration_since(Instant::now());
            let chunks = stdin_chunks().lock().map_err(|_| io::Error::other("stdin reader poisoned"))?;
            match chunks.recv_timeout(left) {
                Ok(Ok(chunk)) => {
                    self.ended = chunk.is_empty();
                    self.pending = chunk;
                    self.at = 0;
                }
                Ok(Err(e)) => return Err(e),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "stdin deadline"));
                }
                Err(RecvTimeoutError::Disconnected) => self.ended = true,
            }
        }
        Ok(&self.pending[self.at..])
    }

    /// Appends what comes next (at most the spare capacity of `buf`, which must have
    /// some) and returns how many bytes came (0 at end of input).
    pub fn read_spare(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        let spare = buf.capacity() - buf.len();
        let bytes = self.available()?;
        let n = bytes.len().min(spare);
        buf.extend_from_slice(&bytes[..n]);
        self.at += n;
        Ok(n)
    }
}

impl Read for StdinReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let bytes = self.available()?;
        let n = bytes.len().min(buf.len());
        buf[..n].copy_from_slice(&bytes[..n]);
        self.at += n;
        Ok(n)
    }
}

/// The value of each variable in `names` that is set and valid Unicode (names compared
/// as Windows does, without case).
pub fn vars_named(names: &[&'static str]) -> Vec<(&'static str, String)> {
    let mut found: Vec<(&'static str, String)> = Vec::new();
    for (name, value) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        let Some(&wanted) = names.iter().find(|n| n.eq_ignore_ascii_case(name)) else { continue };
        if found.iter().any(|(n, _)| *n == wanted) {
            continue;
        }
        if let Some(value) = value.to_str() {
            found.push((wanted, value.to_string()));
        }
    }
    found
}

/// The console event a [`catch_interrupts`] handler got, as the Unix signal it stands
/// for (2: Ctrl-C or Ctrl-Break; 15: the console closed, logoff, shutdown; 0: none yet).
static INTERRUPT: AtomicI32 = AtomicI32::new(0);

unsafe extern "system" fn note_interrupt(event: u32) -> windows_sys::core::BOOL {
    let signal = if event <= 1 { 2 } else { 15 };
    INTERRUPT.store(signal, Ordering::SeqCst);
    1
}

/// From now on Ctrl-C, Ctrl-Break and the console's close are noted, not fatal
/// ([`interrupted`]): `baton run` ends its run itself, after the leg.
pub fn catch_interrupts() {
    // SAFETY: the handler only stores to an atomic.
    unsafe { SetConsoleCtrlHandler(Some(note_interrupt), 1) };
}

/// The interrupt baton got since [`catch_interrupts`], as a signal number, if any.
pub fn interrupted() -> Option<i32> {
    Some(INTERRUPT.load(Ordering::SeqCst)).filter(|s| *s != 0)
}

/// Never: the console sends its events to every process attached to it, the
/// foreground child included.
pub fn take_interrupt_to_forward() -> bool {
    false
}

unsafe extern "system" fn leave_to_the_child(_event: u32) -> windows_sys::core::BOOL {
    1
}

/// baton's side of a foreground child (`baton run`'s legs): while it lives, Ctrl-C and
/// Ctrl-Break are left to the child (the console sends them to both), as a shell does.
/// (A handler, not `SetConsoleCtrlHandler(NULL)`, whose "ignore" a child would inherit.)
pub struct ForegroundChild {
    installed: bool,
}

impl ForegroundChild {
    /// The steps that end a child asked to end: no signal reaches one process on
    /// Windows, so it is terminated.
    pub const END_STEPS: usize = 1;

    /// Leaves the console's interrupts to the child until dropped.
    pub fn prepare(_command: &mut Command) -> ForegroundChild {
        // SAFETY: the handler only returns TRUE.
        let installed = unsafe { SetConsoleCtrlHandler(Some(leave_to_the_child), 1) } != 0;
        ForegroundChild { installed }
    }

    /// Nothing to pass on: the console reached the child itself.
    pub fn forward(_child: &Child, _signal: i32) {}

    /// Terminates the child.
    pub fn end(child: &Child, _step: usize) {
        // SAFETY: the child's handle is valid while `child` lives.
        unsafe { TerminateProcess(child.as_raw_handle() as HANDLE, 1) };
    }

    /// The exit status.
    pub fn exit_code(status: std::process::ExitStatus) -> i32 {
        status.code().unwrap_or(1)
    }
}

impl Drop for ForegroundChild {
    fn drop(&mut self) {
        if self.installed {
            // SAFETY: removes the handler added in `prepare`.
            unsafe { SetConsoleCtrlHandler(Some(leave_to_the_child), 0) };
        }
    }
}

/// Wakes the foreground loop as soon as the child exits: a wait on its process handle.
pub struct ExitNotice {
    process: isize,
}

impl ExitNotice {
    /// For `child`, which must outlive the notice.
    pub fn of(child: &Child) -> ExitNotice {
        ExitNotice { process: child.as_raw_handle() as isize }
    }

    /// Sleeps `limit` at most, less when the child exits meanwhile.
    pub fn wait(&self, limit: std::time::Duration) {
        let millis = u32::try_from(limit.as_millis()).unwrap_or(u32::MAX - 1);
        // SAFETY: the child's handle is open while the child lives (see `of`).
        unsafe { WaitForSingleObject(self.process as HANDLE, millis) };
    }
}

/// A command line run the way Claude Code runs a status line on Windows: with Git Bash
/// (`CLAUDE_CODE_GIT_BASH_PATH`, else `bash.exe` on `PATH`) as `bash -c <line>`; without
/// it, with cmd (`%ComSpec% /d /s /c <line>`, the line passed as it is).
pub fn shell(line: &str) -> Command {
    let bash = std::env::var_os("CLAUDE_CODE_GIT_BASH_PATH")
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .or_else(|| {
            std::env::var_os("PATH").and_then(|path| {
                std::env::split_paths(&path).map(|dir| dir.join("bash.exe")).find(|p| p.is_file())
            })
        });
    match bash {
        Some(bash) => {
            let mut command = Command::new(bash);
            command.arg("-c").arg(line);
            command
        }
        None => {
            let cmd = std::env::var_os("ComSpec").unwrap_or_else(|| "cmd.exe".into());
            let mut command = Command::new(cmd);
            command.raw_arg("/d /s /c \"").raw_arg(line).raw_arg("\"");
            command
        }
    }
}

/// SIGINT's number on Unix, for the exit code of an interrupted run (128 + it), as the
/// C runtime's `SIGINT` is on Windows too.
pub const SIGINT: i32 = 2;

/// An open file's identity, length and age: (volume serial number, file index, length,
/// modification in nanoseconds since the Unix epoch).
pub fn file_identity(file: &File) -> io::Result<(u64, u64, u64, i64)> {
    // SAFETY: an all-zero BY_HANDLE_FILE_INFORMATION is a valid value to be filled.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: a valid open handle and a pointer to a struct of the right type.
    if unsafe { GetFileInformationByHandle(file.as_raw_handle() as HANDLE, &mut info) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let index = (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow);
    let meta = file.metadata()?;
    let modified = meta
        .modified()?
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
    Ok((u64::from(info.dwVolumeSerialNumber), index, meta.len(), modified))
}

/// Reads exactly `buf.len()` bytes at `offset` (`seek_read` may read fewer: looped).
pub fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "failed to fill whole buffer")),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Nothing: Windows has no subreaper; a killed host's workers are not adopted.
pub fn adopt_orphans() {}

/// Nothing was adopted ([`adopt_orphans`]): none to end.
pub fn end_leftovers(_escalation: std::time::Duration, _poll: std::time::Duration) -> usize {
    0
}

/// Nothing was adopted: none to reap.
pub fn reap_adopted() {}

/// None: a pipe or a device is not opened as a file on Windows (the open fails).
pub fn special_kind(_meta: &Metadata) -> Option<&'static str> {
    None
}
