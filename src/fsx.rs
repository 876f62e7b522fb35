//! Safe file operations: every file baton writes goes through here.
//!
//! The rules, from the project's promises: state files are replaced atomically (a
//! temporary file in the same folder, then a rename), created private, never written or
//! read through a symlink someone planted, and counters change under an exclusive lock.
//! Files in the shared temp dir that another user owns are never trusted.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use fs2::FileExt;

/// How a file is created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visibility {
    /// Mode 0600: state, bridge, locks, anything in the temp dir or the state dir.
    Private,
    /// The user's usual permissions (0666 less the umask), or those of the file being
    /// replaced: handoff files and settings the user owns and may commit.
    UserFile,
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
    /// A user's file (handoff, settings): durable, usual permissions.
    pub const USER: WriteOptions = WriteOptions { visibility: Visibility::UserFile, durable: true };
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

/// The process's effective user id.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

fn symlink_refused(path: &Path) -> io::Error {
    io::Error::other(format!("refusing to follow the symlink at {}", path.display()))
}

/// The kernel's answer to "may this process write `path`" (`access(W_OK)`). Root may
/// write files without a write bit: callers that must respect a read-only mode check the
/// mode too.
pub fn writable(path: &Path) -> bool {
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else { return false };
    // SAFETY: a valid NUL-terminated path; access has no other preconditions.
    unsafe { libc::access(c_path.as_ptr(), libc::W_OK) == 0 }
}

/// True when `path` exists and is a symbolic link (not followed).
pub fn is_symlink(path: &Path) -> bool {
    fs::symlink_metadata(path).map(|m| m.file_type().is_symlink()).unwrap_or(false)
}

/// Opens `path` for reading without following a symlink at its last component.
fn open_nofollow(path: &Path) -> io::Result<File> {
    OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(path)
}

/// Reads at most `limit` bytes of a file, never through a symlink. A file that is longer
/// than the limit is an error (callers treat it as malformed).
pub fn read_limited(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = open_nofollow(path)?;
    read_open_file(file, limit)
}

/// Like [`read_limited`], for files in a shared folder (the temp dir): a file owned by
/// another user is refused, since anyone can plant one there.
pub fn read_owned(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = open_nofollow(path)?;
    let meta = file.metadata()?;
    if meta.uid() != euid() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} belongs to another user", path.display()),
        ));
    }
    read_open_file(file, limit)
}

fn read_open_file(file: File, limit: u64) -> io::Result<Vec<u8>> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(limit) as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::other(format!("file larger than {limit} bytes")));
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

fn umask_default_mode() -> u32 {
    // SAFETY: umask cannot fail; it is set back at once. Only called on user-file writes,
    // never concurrently with file creation elsewhere in this process.
    let mask = unsafe {
        let old = libc::umask(0o022);
        libc::umask(old);
        old
    };
    0o666 & !(mask as u32)
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
            Visibility::UserFile => meta.mode() & 0o7777,
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => match options.visibility {
            Visibility::Private => 0o600,
            Visibility::UserFile => umask_default_mode(),
        },
        Err(e) => return Err(e),
    };
    let temp = temp_sibling(path)?;
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&temp)?;
        if options.visibility == Visibility::UserFile {
            // create_new applies the umask; a replaced file keeps its exact mode.
            file.set_permissions(fs::Permissions::from_mode(mode))?;
        }
        file.write_all(contents)?;
        if options.durable {
            file.sync_all()?;
        }
        drop(file);
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
/// `private`. An existing symlink in place of the folder is refused.
pub fn ensure_dir(path: &Path, private: bool) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(symlink_refused(path)),
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(io::Error::other(format!("{} is not a folder", path.display()))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let mut builder = fs::DirBuilder::new();
            builder.recursive(true);
            if private {
                std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            }
            builder.create(path)
        }
        Err(e) => Err(e),
    }
}

/// An exclusive advisory lock on a lock file; released when dropped.
#[derive(Debug)]
pub struct FileLock {
    file: File,
}

impl FileLock {
    /// Opens (creating private, never through a symlink) and locks `path`, waiting for
    /// other holders. In a shared folder a lock file owned by another user is refused.
    pub fn acquire(path: &Path) -> io::Result<FileLock> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)?;
        if file.metadata()?.uid() != euid() {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{} belongs to another user", path.display()),
            ));
        }
        file.lock_exclusive()?;
        Ok(FileLock { file })
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = FileExt::unlock(&self.file);
    }
}

/// Random bytes from the kernel, as lowercase hex (for handoff ids). Falls back to time
/// and pid when /dev/urandom cannot be read.
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    let read = File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut buf));
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

/// A path from raw bytes (for paths read out of JSON that may not be UTF-8 clean).
pub fn path_from_bytes(bytes: Vec<u8>) -> PathBuf {
    PathBuf::from(OsString::from_vec(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_that_escape_are_refused() {
        assert!(valid_session_id("7f3c2a10-5b1e-4c2d-9a8f-0d6e4b2c1a99"));
        for bad in ["", "../x", "a/b", "a\\b", "..", "a..b", "a\nb", &"x".repeat(201)] {
            assert!(!valid_session_id(bad), "{bad:?} should be refused");
        }
    }

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

    #[test]
    fn random_hex_has_the_requested_length() {
        let a = random_hex(8);
        assert_eq!(a.len(), 16);
        assert_ne!(a, random_hex(8));
    }
}
