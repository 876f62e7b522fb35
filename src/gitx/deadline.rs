//! Deadlines for libgit2's diffs: libgit2 calls a progress callback before each file, and
//! a callback that answers an error makes it give up. The status line's quick status
//! ([`super::quick`]) and the walk inside untracked folders ([`super::untracked`]) both
//! run their diffs this way, so neither grows with the size of the work tree.

use super::GitError;
use std::ffi::{c_char, c_int, c_void};
use std::time::Instant;

use libgit2_sys as raw;

/// The deadline a diff's progress callback checks.
pub(super) struct Deadline {
    at: Instant,
    calls: u32,
    pub(super) expired: bool,
}

/// How often (in files) the callback looks at the clock.
const CLOCK_EVERY: u32 = 32;

impl Deadline {
    pub(super) fn new(at: Instant) -> Deadline {
        Deadline { at, calls: 0, expired: false }
    }

    /// The deadline has come (reads the clock).
    pub(super) fn reached(&self) -> bool {
        Instant::now() >= self.at
    }

    /// One more file: whether the deadline has passed (the clock is read every
    /// [`CLOCK_EVERY`] files, and the first).
    pub(super) fn passed(&mut self) -> bool {
        self.calls = self.calls.wrapping_add(1);
        if self.calls % CLOCK_EVERY == 1 && Instant::now() >= self.at {
            self.expired = true;
        }
        self.expired
    }
}

/// The progress callback of a diff whose payload is a [`Deadline`]: stops libgit2 once
/// it has passed.
pub(super) extern "C" fn progress(
    _diff: *const raw::git_diff,
    _old_path: *const c_char,
    _new_path: *const c_char,
    payload: *mut c_void,
) -> c_int {
    // SAFETY: `payload` is the `Deadline` its caller passes in the options;
    // it outlives the libgit2 call that invokes this callback, and nothing else touches
    // it meanwhile. Nothing here can panic, so no unwinding crosses the C frames.
    let deadline = unsafe { &mut *payload.cast::<Deadline>() };
    if deadline.passed() { raw::GIT_EUSER } else { 0 }
}

/// Diff options as `git_diff_init_options` fills them, with `flags` and submodules
/// ignored.
pub(super) fn diff_options(flags: u32, doing: &'static str) -> Result<raw::git_diff_options, GitError> {
    // SAFETY: a zeroed git_diff_options is what git_diff_init_options expects to fill.
    let mut options: raw::git_diff_options = unsafe { std::mem::zeroed() };
    // SAFETY: `options` is a valid, writable git_diff_options; version 1 is the only one.
    let rc = unsafe { raw::git_diff_init_options(&mut options, 1) };
    if rc < 0 {
        return Err(GitError::Git { doing, source: git2::Error::last_error(rc) });
    }
    options.flags = flags;
    options.ignore_submodules = raw::GIT_SUBMODULE_IGNORE_ALL;
    Ok(options)
}
