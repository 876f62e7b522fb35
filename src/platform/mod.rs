//! The operating system's part: everything baton does differently on Unix and on Windows,
//! behind one set of functions, so no other module names `std::os::unix`, `libc` or
//! `windows_sys` (the pseudo-terminal of `baton run`, `util::pty`, is Unix-only and the
//! relay says so on Windows).
//!
//! What each concept is on each side:
//!
//! | concept | Unix | Windows |
//! | --- | --- | --- |
//! | no-follow open | `O_NOFOLLOW` (a symlink fails with `ELOOP`), `O_NONBLOCK` | `FILE_FLAG_OPEN_REPARSE_POINT`, then the open handle must not be a reparse point |
//! | modes | exact modes, the umask for user files | the read-only attribute only (ACLs are inherited from the folder) |
//! | owner | the file's uid against the effective uid | always the user's: the per-user profile and temp folder are private by ACL |
//! | atomic replace | `rename(2)` | `MoveFileExW(MOVEFILE_REPLACE_EXISTING)` (std's `fs::rename`) |
//! | locks | `flock` | `LockFileEx` (both through fs4) |
//! | stdin deadline | `poll` before each `read` | a reader thread and a channel waited on with a timeout |
//! | a child and its children | a process group, `kill(-pgid)` | a Job object, `TerminateJobObject` |
//! | a detached child | its own process group | a new process group, no console, and baton's standard handles kept from it |
//! | deferred interrupts | `SIGINT`, `SIGTERM`, `SIGHUP` handlers | a console control handler (Ctrl-C, Ctrl-Break, close) |
//! | random bytes | `/dev/urandom` | `BCryptGenRandom` |
//!
//! Leaves: nothing here imports the rest of baton.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as os;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as os;

pub use os::{
    DeferInterrupts, ExitNotice, ForegroundChild, ProcessTree, SIGINT, StdinReader, adopt_orphans,
    catch_interrupts, create_dir, create_new, default_file_mode, detach, end_leftovers, end_process_now,
    file_identity, interrupted, is_mine, is_symlink_refusal, mode_of, open_append, open_lock, open_read,
    path_from_bytes, pid_gone, random_bytes, read_exact_at, reap_adopted, same_file, set_mode, shell,
    special_kind, stat_identity, take_interrupt_to_forward, vars_named, writable,
};
// Test builds' crash points only (the release build has none).
#[cfg(debug_assertions)]
pub use os::exit_test_kill;

/// The stat data git keeps in an index entry for a file (`None` on Windows, where git
/// compares content instead).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatIdentity {
    pub ctime: (i64, u32),
    pub mtime: (i64, u32),
    pub dev: u64,
    pub ino: u64,
    pub uid: u32,
    pub gid: u32,
}

/// Who may change a folder, for the exposure checks on the way to a file baton writes:
/// its owner's uid and its mode (`None` on Windows, where the user's folders are private
/// by ACL and the Unix rule has nothing to check).
pub fn owner_and_mode(meta: &std::fs::Metadata) -> Option<(u32, u32)> {
    os::owner_and_mode(meta)
}

/// The effective user id (Unix); 0 on Windows, where nothing compares it.
pub fn euid() -> u32 {
    os::euid()
}

/// A Windows path's text without the verbatim prefix `canonicalize` gives it
/// (`\\?\C:\x` → `C:\x`, `\\?\UNC\server\share` → `\\server\share`): the spelling people,
/// shells and other programs use. Pure (tested on every system).
pub fn strip_verbatim(text: &str) -> String {
    if let Some(rest) = text.strip_prefix(r"\\?\UNC\") {
        format!(r"\\{rest}")
    } else if let Some(rest) = text.strip_prefix(r"\\?\").filter(|rest| rest.as_bytes().get(1) == Some(&b':'))
    {
        rest.to_string()
    } else {
        text.to_string()
    }
}

/// The real, absolute path of `path` (`fs::canonicalize`), spelled as people spell it:
/// on Windows without the verbatim prefix, each name in its case on disk, so one folder
/// has one spelling whatever case it was given in.
pub fn canonicalize(path: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
    let real = std::fs::canonicalize(path)?;
    if cfg!(windows) {
        if let Some(text) = real.to_str() {
            return Ok(std::path::PathBuf::from(strip_verbatim(text)));
        }
    }
    Ok(real)
}

/// A path as a word of a command a host runs: as it is on Unix; on Windows without the
/// verbatim prefix and with `/` separators, which Git Bash (where `\` is an escape), cmd
/// and PowerShell all take. `None` when it is not Unicode.
pub fn command_path(path: &std::path::Path) -> Option<String> {
    let text = path.to_str()?;
    Some(if cfg!(windows) { strip_verbatim(text).replace('\\', "/") } else { text.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbatim_prefixes_are_taken_off() {
        assert_eq!(
            strip_verbatim(r"\\?\C:\Program Files\baton\baton.exe"),
            r"C:\Program Files\baton\baton.exe"
        );
        assert_eq!(strip_verbatim(r"\\?\UNC\server\share\baton.exe"), r"\\server\share\baton.exe");
        assert_eq!(strip_verbatim(r"C:\Users\me"), r"C:\Users\me");
        assert_eq!(strip_verbatim("/usr/bin/baton"), "/usr/bin/baton");
        // A verbatim path that is not a drive's (a volume GUID) is left as it is.
        assert_eq!(strip_verbatim(r"\\?\Volume{1234}\x"), r"\\?\Volume{1234}\x");
    }
}
