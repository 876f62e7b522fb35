//! Where baton's files live.
//!
//! Only the bridge sits in the shared temp dir, under GSD's name so the two tools can
//! stand in for each other (`claude-ctx-<sid>.json`); it is read only when this user owns
//! it. Everything else of baton's lives in its private state dir under the user's home
//! (0700): the debounce state and its lock (`sessions/`), the handoff registry, learned
//! compaction points, locks. Nothing planted in `/tmp` by another user can hang, redirect
//! or silence the monitor. Nothing here touches the disk.

use std::env;
use std::path::PathBuf;

/// The OS temp dir as Node's `os.tmpdir()` finds it for GSD, so both name the same
/// bridge: `TMPDIR` (else `/tmp`) on Unix; `TEMP`, then `TMP`, then `%SystemRoot%\temp`
/// on Windows, without a trailing separator (Windows' own `GetTempPath` reads `TMP`
/// first, and would miss GSD's bridge when the two differ).
pub fn temp_dir() -> PathBuf {
    #[cfg(windows)]
    {
        let set = |name: &str| env::var_os(name).filter(|v| !v.is_empty());
        let found = set("TEMP").or_else(|| set("TMP")).map(PathBuf::from).unwrap_or_else(|| {
            let root = set("SystemRoot").or_else(|| set("windir")).unwrap_or_else(|| "C:\\Windows".into());
            PathBuf::from(root).join("temp")
        });
        let text = found.to_string_lossy();
        let trimmed = text.trim_end_matches(['\\', '/']);
        // `C:\` keeps its separator (`C:` alone is the drive's current folder).
        if trimmed.len() < text.len() && !trimmed.ends_with(':') {
            return PathBuf::from(trimmed);
        }
        found
    }
    #[cfg(not(windows))]
    env::temp_dir()
}

/// The variable a user sets to move the temp dir (for hints).
pub const TEMP_VARIABLE: &str = if cfg!(windows) { "TEMP" } else { "TMPDIR" };

/// The bridge file the statusline writes and the monitor reads.
pub fn bridge_path(session_id: &str) -> PathBuf {
    temp_dir().join(format!("claude-ctx-{session_id}.json"))
}

/// baton's private per-session folder, `<state dir>/sessions` (created 0700): the
/// monitor's debounce state and its lock. Files older than a week are pruned.
pub fn session_dir() -> Option<PathBuf> {
    state_dir().map(|dir| dir.join("sessions"))
}

/// The monitor's debounce state (GSD's file name and fields, plus `version`), in the
/// private session folder. `None` without a home: then the monitor keeps no state.
pub fn warn_state_path(session_id: &str) -> Option<PathBuf> {
    session_dir().map(|dir| dir.join(format!("claude-ctx-{session_id}-warned.json")))
}

/// Where the last read of a context's transcript stopped, and what it found
/// (`session_state::load_mark`), in the private session folder.
pub fn read_mark_path(context_id: &str) -> Option<PathBuf> {
    session_dir().map(|dir| dir.join(format!("claude-ctx-{context_id}-read.json")))
}

/// GSD's own debounce state in the temp dir: read once (when this user owns it) to seed
/// a session that switches from GSD's hook to baton's; never written.
pub fn gsd_warn_state_path(session_id: &str) -> PathBuf {
    temp_dir().join(format!("claude-ctx-{session_id}-warned.json"))
}

/// The lock file that serialises updates of the debounce state. A separate file, since
/// the state file itself is replaced by rename and a lock on it would not hold.
pub fn warn_lock_path(session_id: &str) -> Option<PathBuf> {
    session_dir().map(|dir| dir.join(format!("claude-ctx-{session_id}-warned.lock")))
}

/// The user's home: `HOME` on Unix, `USERPROFILE` on Windows (where hosts started from
/// PowerShell or cmd have no `HOME`; Node's `os.homedir()`, and so the hosts, use it too).
pub fn home_dir() -> Option<PathBuf> {
    env::var_os(HOME_VARIABLE).filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// The variable that names the user's home.
pub const HOME_VARIABLE: &str = if cfg!(windows) { "USERPROFILE" } else { "HOME" };

/// The variables that give a child baton (doctor's self-test, the demo) a home and a
/// temp dir of its own, for an environment cleared before: `HOME` and `TMPDIR` on Unix;
/// `USERPROFILE`, `TEMP` and `TMP` on Windows, with the system's `SystemRoot` passed on
/// (a Windows program without it cannot load some of the system's libraries).
pub fn sandbox_env(
    home: &std::path::Path,
    temp: &std::path::Path,
) -> Vec<(&'static str, std::ffi::OsString)> {
    let mut vars = vec![(HOME_VARIABLE, home.as_os_str().to_owned())];
    if cfg!(windows) {
        vars.push(("TEMP", temp.as_os_str().to_owned()));
        vars.push(("TMP", temp.as_os_str().to_owned()));
        vars.extend(env::var_os("SystemRoot").map(|root| ("SystemRoot", root)));
    } else {
        vars.push(("TMPDIR", temp.as_os_str().to_owned()));
    }
    vars
}

/// `$XDG_CONFIG_HOME/baton/config.json`, else `~/.config/baton/config.json`.
pub fn user_config_path() -> Option<PathBuf> {
    let base = env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home_dir().map(|h| h.join(".config")))?;
    Some(base.join("baton").join("config.json"))
}

/// baton's own state dir: `$XDG_STATE_HOME/baton`, else `~/.local/state/baton`.
pub fn state_dir() -> Option<PathBuf> {
    let base = env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home_dir().map(|h| h.join(".local").join("state")))?;
    Some(base.join("baton"))
}

/// The one spelling of a project folder that baton keys its records by (the handoff
/// registry, the project lock): the path as given on Unix, where names are
/// case-sensitive; on Windows its real path (no verbatim prefix, `\` separators) in
/// lower case, so `c:\users\ME\proj` and `C:\Users\me\proj` are one project.
pub fn project_key(root: &std::path::Path) -> String {
    if cfg!(windows) {
        let real = crate::platform::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        windows_key(&real.to_string_lossy())
    } else {
        root.to_string_lossy().into_owned()
    }
}

/// A Windows path's key: `\` separators, lower case (Windows compares names so).
fn windows_key(text: &str) -> String {
    text.replace('/', "\\").to_lowercase()
}

#[cfg(test)]
mod tests {
    #[test]
    fn windows_keys_ignore_case_and_separators() {
        assert_eq!(super::windows_key(r"c:\users\ME\proj"), super::windows_key("C:/Users/me/proj"));
        assert_ne!(super::windows_key(r"C:\Users\me\proj"), super::windows_key(r"C:\Users\me\proj2"));
    }
}
