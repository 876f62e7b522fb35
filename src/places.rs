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

/// The OS temp dir (`TMPDIR` honoured, as Node's `os.tmpdir()` does for GSD).
pub fn temp_dir() -> PathBuf {
    env::temp_dir()
}

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

/// The user's home, from `HOME`.
pub fn home_dir() -> Option<PathBuf> {
    env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
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
