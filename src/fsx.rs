//! Safe file operations: every file baton writes, and every file it reads that someone
//! else may have placed, goes through here.
//!
//! The rules, from the project's promises (TRUST.md): state files are replaced
//! atomically (a temporary file in the same folder, then a rename), created with exact
//! modes whatever the umask, never written or read through a symlink someone planted.
//! Every read opens no-follow and non-blocking, checks the open file is a regular file
//! (and, in the shared temp dir, this user's) and caps its size: a FIFO, a device or a
//! folder counts as absent, with a reason. Every lock has a deadline.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::platform;

/// How a file is created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visibility {
    /// Mode 0600: state, bridge, locks, anything in the temp dir or the state dir.
    Private,
    /// The user's usual permissions (0666 less the umask), or those of the file being
    /// replaced: handoff files and project settings the user owns and may commit.
    UserFile,
    /// A file of the user's under the home (a host's user settings): created 0600
    /// whatever the umask, while a replaced file keeps its exact mode.
    HomeFile,
}

/// Options for [`write_atomic`].
#[derive(Clone, Copy, Debug)]
pub struct WriteOptions {
    pub visibility: Visibility,
    /// `fsync` the data before the rename and the folder after it. Worth it for user
    /// files; not for a bridge that is rewritten every few seconds.
    pub durable: bool,
}

impl WriteOptions {
    /// A private, non-durable state file (temp dir).
    pub const STATE: WriteOptions = WriteOptions { visibility: Visibility::Private, durable: false };
    /// A private file that should survive a crash (the state dir under the home).
    pub const PRIVATE_DURABLE: WriteOptions = WriteOptions { visibility: Visibility::Private, durable: true };
    /// A user's file (handoff, project settings): durable, usual permissions.
    pub const USER: WriteOptions = WriteOptions { visibility: Visibility::UserFile, durable: true };
    /// A user's file under the home (user settings): durable, 0600 when new, mode kept.
    pub const HOME: WriteOptions = WriteOptions { visibility: Visibility::HomeFile, durable: true };
}

/// A session id is used to build file names: refuse anything that could leave the folder
/// or make an odd name. GSD rejects `/`, `\` and `..`; baton also refuses empty ids,
/// control characters and absurd lengths.
pub fn valid_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 200
        && !id.contains('/')
        && !id.contains('\\')
        && !id.contains("..")
        && !id.chars().any(char::is_control)
}

/// The process's effective user id (0 on Windows, where nothing compares it).
pub fn euid() -> u32 {
    platform::euid()
}

/// Whether a file belongs to this user: its uid on Unix; always on Windows, where the
/// shared places baton reads (the profile, the per-user temp folder) are private by ACL.
pub fn is_mine(meta: &fs::Metadata) -> bool {
    platform::is_mine(meta)
}

fn symlink_refused(path: &Path) -> io::Error {
    io::Error::other(format!("refusing to follow the symlink at {}", path.display()))
}

/// The kernel's answer to "may this process write `path`" (`access(W_OK)`). Root may
/// write files without a write bit: callers that must respect a read-only mode check the
/// mode too.
pub fn writable(path: &Path) -> bool {
    platform::writable(path)
}

/// True when `path` exists and is a symbolic link (not followed).
pub fn is_symlink(path: &Path) -> bool {
    fs::symlink_metadata(path).map(|m| m.file_type().is_symlink()).unwrap_or(false)
}

/// Opens a file someone else may have placed, the one way baton does it: never through
/// a symlink at the last component (unless `follow`), non-blocking (a FIFO or a device
/// cannot hang the open), then `fstat`ed on the open descriptor to be a regular file
/// and, when `owned`, to belong to this user. Anything else is refused with an error that
/// says why (callers treat it as absent; `baton doctor` and `baton config` show it).
fn open_checked(path: &Path, follow: bool, owned: bool) -> io::Result<File> {
    open_checked_with_meta(path, follow, owned).map(|(file, _)| file)
}

/// [`open_checked`], with the metadata it checked (one `fstat` per read, not two).
fn open_checked_with_meta(path: &Path, follow: bool, owned: bool) -> io::Result<(File, fs::Metadata)> {
    let file = platform::open_read(path, follow).map_err(|e| {
        if !follow && platform::is_symlink_refusal(&e) {
            refused(path, "is a symlink, which baton does not follow here")
        } else {
            e
        }
    })?;
    let meta = file.metadata()?;
    check_regular(path, &meta)?;
    if owned && !is_mine(&meta) {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} belongs to another user", path.display()),
        ));
    }
    Ok((file, meta))
}

fn refused(path: &Path, why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("{} {why}", path.display()))
}

/// What kind of thing a non-regular file is, in words.
fn file_kind(meta: &fs::Metadata) -> &'static str {
    let kind = meta.file_type();
    if let Some(special) = platform::special_kind(meta) {
        return special;
    }
    if kind.is_dir() {
        "a folder"
    } else if kind.is_symlink() {
        "a symlink"
    } else {
        "not a regular file"
    }
}

fn check_regular(path: &Path, meta: &fs::Metadata) -> io::Result<()> {
    if meta.is_file() {
        return Ok(());
    }
    let kind = file_kind(meta);
    Err(refused(path, &format!("is {kind}, not a regular file")))
}

/// Opens a regular file for streaming reads (a transcript): no-follow, non-blocking,
/// regular, as [`read_limited`] does, without reading it.
pub fn open_regular(path: &Path) -> io::Result<File> {
    open_checked(path, false, false)
}

/// Reads at most `limit` bytes of a file that is not in a shared folder (config files,
/// handoffs, STATE.md, plans, baton's state): never through a symlink, never anything
/// but a regular file (a FIFO or a device is refused at once, without blocking). A file
/// longer than the limit is an error (callers treat it as malformed).
pub fn read_limited(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let (file, meta) = open_checked_with_meta(path, false, false)?;
    read_open_file(path, file, &meta, limit)
}

/// Like [`read_limited`], for files in a shared folder (the temp dir): a file owned by
/// another user is refused too, since anyone can plant one there.
pub fn read_owned(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let (file, meta) = open_checked_with_meta(path, false, true)?;
    read_open_file(path, file, &meta, limit)
}

/// Like [`read_limited`] but a symlink at `path` is followed, for the user's own files
/// that are often links into a dotfiles repository (hosts' settings files). The target
/// must still be a regular file, opened without blocking, and within the limit.
pub fn read_through_symlink(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let (file, meta) = open_checked_with_meta(path, true, false)?;
    read_open_file(path, file, &meta, limit)
}

/// Why a file would not be read, in words, or `None` when it is readable or absent
/// (doctor's lines for refused files).
pub fn refusal(path: &Path, limit: u64, owned: bool) -> Option<String> {
    let result = if owned { read_owned(path, limit) } else { read_limited(path, limit) };
    match result {
        Ok(_) => None,
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => Some(e.to_string()),
    }
}

fn read_open_file(path: &Path, file: File, meta: &fs::Metadata, limit: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(meta.len().min(limit) as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is larger than {limit} bytes", path.display()),
        ));
    }
    Ok(bytes)
}

static TEMP_COUNTER: AtomicU32 = AtomicU32::new(0);

fn temp_sibling(path: &Path) -> io::Result<PathBuf> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name =
        path.file_name().ok_or_else(|| io::Error::other(format!("{} has no file name", path.display())))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut temp = OsString::from(".");
    temp.push(name);
    temp.push(format!(
        ".{}.{}.{}.baton-tmp",
        std::process::id(),
        nanos,
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    Ok(parent.join(temp))
}

/// Replaces `path` with `contents` atomically: a new file beside it (created exclusively,
/// never through a symlink), written, then renamed over the target. A symlink at `path`
/// itself is refused. Readers see the old content or the new, never a mix.
pub fn write_atomic(path: &Path, contents: &[u8], options: WriteOptions) -> io::Result<()> {
    let mode = match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => return Err(symlink_refused(path)),
        Ok(meta) if !meta.is_file() => {
            return Err(io::Error::other(format!("{} is not a regular file", path.display())));
        }
        Ok(meta) => match options.visibility {
            Visibility::Private => 0o600,
            Visibility::UserFile | Visibility::HomeFile => platform::mode_of(&meta) & 0o7777,
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => match options.visibility {
            Visibility::Private | Visibility::HomeFile => 0o600,
            Visibility::UserFile => platform::default_file_mode(),
        },
        Err(e) => return Err(e),
    };
    let temp = temp_sibling(path)?;
    let result = (|| {
        let mut file = platform::create_new(&temp, mode)?;
        // create_new applies the umask: the mode is set exactly, whatever the umask (a
        // private file stays 0600 under umask 000 or 077, a replaced file keeps its mode).
        platform::set_mode(&file, mode)?;
        file.write_all(contents)?;
        if options.durable {
            file.sync_all()?;
        }
        drop(file);
        // rename(2) on Unix; MoveFileExW with MOVEFILE_REPLACE_EXISTING on Windows.
        fs::rename(&temp, path)?;
        if options.durable {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                if let Ok(dir) = File::open(parent) {
                    let _ = dir.sync_all();
                }
            }
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Creates a folder (and its parents) if missing. New folders get mode 0700 when
/// `private`, set exactly whatever the umask (folders under the home, baton's state);
/// otherwise the umask's. An existing symlink in place of the folder is refused.
pub fn ensure_dir(path: &Path, private: bool) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(symlink_refused(path)),
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(io::Error::other(format!("{} is not a folder", path.display()))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                if fs::symlink_metadata(parent).is_err() {
                    ensure_dir(parent, private)?;
                }
            }
            match platform::create_dir(path, private) {
                Ok(()) => {}
                // Another process made it meanwhile: fine if it is a folder.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return ensure_dir(path, false),
                Err(e) => return Err(e),
            }
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// How long [`FileLock::acquire`] waits for another holder before giving up. Commands a
/// person runs may wait this long; the hook uses shorter deadlines of its own.
pub const LOCK_WAIT: Duration = Duration::from_secs(5);

/// An exclusive advisory lock on a lock file; released when dropped.
#[derive(Debug)]
pub struct FileLock {
    file: File,
}

impl FileLock {
    /// [`FileLock::acquire_within`] with the default deadline, [`LOCK_WAIT`].
    pub fn acquire(path: &Path) -> io::Result<FileLock> {
        FileLock::acquire_within(path, LOCK_WAIT)
    }

    /// Opens (creating private, never through a symlink, without blocking) and locks
    /// `path`, retrying with a growing pause while another process holds it, for at most
    /// `wait`; then gives up with an error of kind `TimedOut`. A lock file that is not a
    /// regular file of this user's is refused at once.
    pub fn acquire_within(path: &Path, wait: Duration) -> io::Result<FileLock> {
        let file = platform::open_lock(path)
            .map_err(|e| if platform::is_symlink_refusal(&e) { symlink_refused(path) } else { e })?;
        let meta = file.metadata()?;
        check_regular(path, &meta)?;
        if !is_mine(&meta) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{} belongs to another user", path.display()),
            ));
        }
        let deadline = Instant::now() + wait;
        let mut pause = Duration::from_millis(1);
        loop {
            // fs4's flock, named in full: newer std has inherent methods of these names.
            match fs4::FileExt::try_lock(&file) {
                Ok(()) => return Ok(FileLock { file }),
                Err(fs4::TryLockError::WouldBlock) => {}
                Err(fs4::TryLockError::Error(e)) => return Err(e),
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "{} is held by another process; gave up after {} ms",
                        path.display(),
                        wait.as_millis()
                    ),
                ));
            }
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(Duration::from_millis(25));
        }
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = fs4::FileExt::unlock(&self.file);
    }
}

/// Why another local user could read, swap or plant what baton writes in a folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exposure {
    /// Owned by another user (who may change it at will).
    Owner(u32),
    /// Writable by every user.
    WorldWritable,
    /// Writable by its group, and not the user's own.
    GroupWritable,
    /// A shared folder (sticky and writable by others): anyone may put a file there.
    Shared,
}

impl std::fmt::Display for Exposure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exposure::Owner(uid) => write!(f, "belongs to another user (uid {uid})"),
            Exposure::WorldWritable => f.write_str("is writable by every user"),
            Exposure::GroupWritable => f.write_str("is writable by other users (its group)"),
            Exposure::Shared => f.write_str("is a shared folder (sticky, writable by others)"),
        }
    }
}

/// The rule for one folder on the way to a file baton writes for the user (a handoff, its
/// archive, a snapshot), given its owner and mode. `in_project`: the project's folder or
/// one below it, where baton writes or creates; else a folder above the project. Pure.
///
/// In the project every folder must be the user's and writable by no one else, but its
/// group when it is the user's own sticky-free folder (a umask of 002). Above it, a
/// folder may also be root's, and writable by others only when sticky (like `/tmp`: no
/// one can move the project away).
pub fn exposure(uid: u32, mode: u32, in_project: bool, me: u32) -> Option<Exposure> {
    let sticky = mode & 0o1000 != 0;
    let world = mode & 0o002 != 0;
    let group = mode & 0o020 != 0;
    if uid != me && (in_project || uid != 0) {
        return Some(Exposure::Owner(uid));
    }
    if in_project {
        if world {
            return Some(Exposure::WorldWritable);
        }
        if sticky && group {
            return Some(Exposure::Shared);
        }
        return None;
    }
    match (sticky, world, group) {
        (true, _, _) => None,
        (false, true, _) => Some(Exposure::WorldWritable),
        (false, false, true) if uid != me => Some(Exposure::GroupWritable),
        _ => None,
    }
}

/// Why baton must not write under `root` at the folders `below` (relative; those that
/// exist are checked, each folder on the way included), or `None` when no one else can
/// read, swap or plant what it writes there: every folder from `/` down, by
/// [`exposure`]. The project folder is taken at its real path. What is not a folder, or
/// cannot be looked at, is left to the write to report.
pub fn write_exposure(root: &Path, below: &[&Path]) -> Option<String> {
    let me = euid();
    let real = fs::canonicalize(root).ok()?;
    let check = |path: &Path, meta: io::Result<fs::Metadata>, in_project: bool| match meta {
        Ok(meta) if meta.is_dir() => {
            let (uid, mode) = platform::owner_and_mode(&meta)?;
            exposure(uid, mode, in_project, me)
                .map(|why| format!("{} {why}", crate::util::text::outside_path(path)))
        }
        _ => None,
    };
    for above in real.ancestors().skip(1) {
        if let Some(why) = check(above, fs::symlink_metadata(above), false) {
            return Some(why);
        }
    }
    if let Some(why) = check(&real, fs::symlink_metadata(&real), true) {
        return Some(why);
    }
    for path in below {
        let mut at = real.clone();
        for part in path.components() {
            at.push(part);
            // A folder that does not exist yet is made by baton, in one that was checked.
            match fs::metadata(&at) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                meta => {
                    if let Some(why) = check(&at, meta, true) {
                        return Some(why);
                    }
                }
            }
        }
    }
    None
}

/// Random bytes from the system, as lowercase hex (for handoff ids). Falls back to time
/// and pid when the system's source cannot be read.
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    let read = platform::random_bytes(&mut buf);
    if read.is_err() {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
            ^ ((std::process::id() as u128) << 64);
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (seed >> ((i % 16) * 8)) as u8 ^ (i as u8).wrapping_mul(151);
        }
    }
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(unix)]
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    #[test]
    fn session_ids_that_escape_are_refused() {
        assert!(valid_session_id("7f3c2a10-5b1e-4c2d-9a8f-0d6e4b2c1a99"));
        for bad in ["", "../x", "a/b", "a\\b", "..", "a..b", "a\nb", &"x".repeat(201)] {
            assert!(!valid_session_id(bad), "{bad:?} should be refused");
        }
    }

    #[cfg(unix)]
    #[test]
    fn atomic_write_creates_private_files_and_refuses_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("state.json");
        write_atomic(&target, b"{}", WriteOptions::STATE).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"{}");
        assert_eq!(fs::metadata(&target).unwrap().mode() & 0o777, 0o600);

        let victim = dir.path().join("victim");
        fs::write(&victim, b"keep").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(write_atomic(&link, b"evil", WriteOptions::STATE).is_err());
        assert!(read_limited(&link, 100).is_err());
        assert_eq!(fs::read(&victim).unwrap(), b"keep");
        // No temporary file is left behind.
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".baton-tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn user_files_keep_their_mode_when_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("settings.json");
        fs::write(&target, b"{}").unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&target, b"{\"a\":1}", WriteOptions::USER).unwrap();
        assert_eq!(fs::metadata(&target).unwrap().mode() & 0o777, 0o640);
    }

    #[test]
    fn reads_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("big");
        fs::write(&target, vec![b'x'; 100]).unwrap();
        assert!(read_limited(&target, 99).is_err());
        assert_eq!(read_limited(&target, 100).unwrap().len(), 100);
    }

    #[cfg(unix)]
    fn fifo(path: &Path) {
        let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    }

    #[cfg(unix)]
    #[test]
    fn fifos_folders_and_symlinks_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let pipe = dir.path().join("pipe");
        fifo(&pipe);
        let started = std::time::Instant::now();
        let error = read_limited(&pipe, 100).unwrap_err();
        assert!(error.to_string().contains("FIFO"), "{error}");
        assert!(read_owned(&pipe, 100).is_err());
        assert!(read_through_symlink(&pipe, 100).is_err());
        assert!(open_regular(&pipe).is_err());
        assert!(FileLock::acquire_within(&pipe, Duration::from_millis(10)).is_err());
        assert!(started.elapsed() < Duration::from_secs(1));
        assert!(read_limited(dir.path(), 100).unwrap_err().to_string().contains("folder"));

        let target = dir.path().join("real");
        fs::write(&target, b"data").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(read_limited(&link, 100).unwrap_err().to_string().contains("symlink"));
        assert_eq!(read_through_symlink(&link, 100).unwrap(), b"data");
        let pipe_link = dir.path().join("pipe-link");
        std::os::unix::fs::symlink(&pipe, &pipe_link).unwrap();
        assert!(read_through_symlink(&pipe_link, 100).is_err());
        assert!(refusal(&pipe, 100, false).is_some_and(|why| why.contains("FIFO")));
        assert_eq!(refusal(&target, 100, false), None);
        assert_eq!(refusal(&dir.path().join("absent"), 100, false), None);
    }

    #[cfg(unix)]
    #[test]
    fn files_of_another_user_are_refused_in_shared_folders() {
        let dir = tempfile::tempdir().unwrap();
        let planted = dir.path().join("planted");
        fs::write(&planted, b"{}").unwrap();
        // Only root can give a file away; elsewhere this test has nothing to check.
        if std::os::unix::fs::chown(&planted, Some(65534), Some(65534)).is_err() {
            return;
        }
        assert_eq!(read_owned(&planted, 100).unwrap_err().kind(), io::ErrorKind::PermissionDenied);
        assert!(read_limited(&planted, 100).is_ok());
        assert!(FileLock::acquire_within(&planted, Duration::from_millis(10)).is_err());
    }

    #[test]
    fn a_held_lock_is_given_up_at_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let held = FileLock::acquire(&path).unwrap();
        let started = std::time::Instant::now();
        let error = FileLock::acquire_within(&path, Duration::from_millis(80)).unwrap_err();
        let waited = started.elapsed();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert!(waited >= Duration::from_millis(80) && waited < Duration::from_millis(500), "{waited:?}");
        drop(held);
        assert!(FileLock::acquire_within(&path, Duration::from_millis(80)).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn modes_are_exact() {
        // (Under umask 000 and 077 this is checked black-box, in a child process, by
        // tests/untrusted.rs: changing the umask here would race other tests.)
        let dir = tempfile::tempdir().unwrap();
        let private = dir.path().join("a/b");
        ensure_dir(&private, true).unwrap();
        let state = dir.path().join("a/b/state.json");
        write_atomic(&state, b"{}", WriteOptions::STATE).unwrap();
        let home_file = dir.path().join("a/settings.json");
        write_atomic(&home_file, b"{}", WriteOptions::HOME).unwrap();
        for folder in [dir.path().join("a"), private] {
            assert_eq!(fs::metadata(&folder).unwrap().mode() & 0o777, 0o700, "{}", folder.display());
        }
        assert_eq!(fs::metadata(&state).unwrap().mode() & 0o777, 0o600);
        assert_eq!(fs::metadata(&home_file).unwrap().mode() & 0o777, 0o600);
        fs::set_permissions(&home_file, fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&home_file, b"{\"a\":1}", WriteOptions::HOME).unwrap();
        assert_eq!(fs::metadata(&home_file).unwrap().mode() & 0o777, 0o640);
    }

    #[test]
    fn a_folder_others_can_change_is_exposed() {
        let me = 1000;
        // The project and below: the user's, writable by them (and their own group).
        assert_eq!(exposure(me, 0o40755, true, me), None);
        assert_eq!(exposure(me, 0o40775, true, me), None, "umask 002: the user's own group");
        assert_eq!(exposure(me, 0o40777, true, me), Some(Exposure::WorldWritable));
        assert_eq!(exposure(me, 0o41777, true, me), Some(Exposure::WorldWritable));
        assert_eq!(exposure(me, 0o41775, true, me), Some(Exposure::Shared));
        assert_eq!(exposure(1001, 0o40755, true, me), Some(Exposure::Owner(1001)));
        assert_eq!(exposure(0, 0o41777, true, me), Some(Exposure::Owner(0)), "/tmp itself");
        // Above it: root's or the user's; writable by others only when sticky.
        assert_eq!(exposure(0, 0o41777, false, me), None, "/tmp above a project");
        assert_eq!(exposure(0, 0o40755, false, me), None);
        assert_eq!(exposure(me, 0o40775, false, me), None);
        assert_eq!(exposure(0, 0o40775, false, me), Some(Exposure::GroupWritable));
        assert_eq!(exposure(me, 0o40777, false, me), Some(Exposure::WorldWritable));
        assert_eq!(exposure(1001, 0o40755, false, me), Some(Exposure::Owner(1001)));
        // Root's own files: root is the user.
        assert_eq!(exposure(0, 0o40755, true, 0), None);
        assert_eq!(exposure(1001, 0o40700, true, 0), Some(Exposure::Owner(1001)));
    }

    #[cfg(unix)]
    #[test]
    fn write_exposure_names_the_folder_and_why() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        fs::create_dir_all(project.join(".planning")).unwrap();
        fs::set_permissions(&project, fs::Permissions::from_mode(0o755)).unwrap();
        fs::set_permissions(project.join(".planning"), fs::Permissions::from_mode(0o755)).unwrap();
        let below = [Path::new(".planning/handoffs/pending/s")];
        assert_eq!(write_exposure(&project, &below), None);
        fs::set_permissions(project.join(".planning"), fs::Permissions::from_mode(0o777)).unwrap();
        let why = write_exposure(&project, &below).unwrap();
        assert!(why.ends_with("/p/.planning is writable by every user"), "{why}");
        fs::set_permissions(project.join(".planning"), fs::Permissions::from_mode(0o755)).unwrap();
        fs::set_permissions(&project, fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(write_exposure(&project, &below).unwrap().ends_with("/p is writable by every user"));
    }

    #[test]
    fn random_hex_has_the_requested_length() {
        let a = random_hex(8);
        assert_eq!(a.len(), 16);
        assert_ne!(a, random_hex(8));
    }
}
