//! Deferring the interrupts that would end baton while it holds something of git's that
//! must not be left behind (the index lock, a scratch index): SIGINT, SIGTERM and SIGHUP
//! on Unix, Ctrl-C, Ctrl-Break and a console's close on Windows.
//!
//! While a [`DeferSignals`] lives, those interrupts are only remembered; when it is
//! dropped (after every cleanup declared after it has run) the previous handling comes
//! back and a remembered interrupt ends the process as it would have, only a few
//! milliseconds later and with nothing left over. How, per system:
//! [`crate::platform::DeferInterrupts`].

/// Defers the interrupts until dropped; see the module comment.
pub type DeferSignals = crate::platform::DeferInterrupts;
