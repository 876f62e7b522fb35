//! Leaves: helpers that import nothing else of baton's (but the system's calls,
//! [`crate::platform`]), so every layer may use them.
//!
//! `proc` runs a child process with a deadline, `pty` runs one on a pseudo-terminal baton
//! owns (`baton run`'s interactive host; Unix only), `text` holds the small text rules (display
//! width, token counts, ages, ANSI colour), `hash` the stable hash behind file names and
//! `env` the one-pass read of the variables the configuration names.

pub mod env;
pub mod hash;
pub mod proc;
#[cfg(unix)]
pub mod pty;
pub mod text;
