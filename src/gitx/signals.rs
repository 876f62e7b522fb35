//! Deferring SIGINT, SIGTERM and SIGHUP while baton holds something of git's that must
//! not be left behind (the index lock, a scratch index).
//!
//! While a [`DeferSignals`] lives, those signals are only remembered; when it is dropped
//! (after every cleanup declared after it has run) the previous handlers come back and a
//! remembered signal is raised again, so the process ends as it would have, only a few
//! milliseconds later and with nothing left over. A handler (not a signal mask) is used
//! because a mask covers only the calling thread.

use std::sync::atomic::{AtomicI32, Ordering};

const DEFERRED: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

static PENDING: AtomicI32 = AtomicI32::new(0);

extern "C" fn remember(signal: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    PENDING.store(signal, Ordering::SeqCst);
}

/// Defers the signals until dropped; see the module comment.
pub struct DeferSignals {
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

impl DeferSignals {
    pub fn new() -> DeferSignals {
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
        DeferSignals { previous }
    }
}

impl Default for DeferSignals {
    fn default() -> DeferSignals {
        DeferSignals::new()
    }
}

impl Drop for DeferSignals {
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
