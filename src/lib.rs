//! baton: keeps AI coding agents from running out of context with their work unsaved.
//!
//! The binary (`src/main.rs`) only calls [`main_with`]; `cli` is the command line
//! (clap, printing, exit codes) over the other modules, which are private: nothing outside
//! the crate builds on them, and the compiler reports any item nothing calls. The hook path
//! (`hook`, `monitor`, `metrics`) reads stdin, the bridge, the config and one state file;
//! everything heavier (`handoff`, `gitx`, `transcript`, `planning`) sits behind the level
//! that calls for it.
// No unwrap/expect outside tests: the hook path must never panic on bad input.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod checkpoint_github;
mod cli;
mod config;
mod demo;
mod doctor;
mod fsx;
mod gitx;
mod handoff;
mod hook;
mod host;
mod install;
mod manual_handoff;
mod metrics;
mod monitor;
mod places;
mod planning;
mod platform;
mod relay;
mod report;
mod resume;
mod run_record;
mod session_state;
mod state;
mod status;
mod statusline;
mod stdin;
mod transcript;
mod util;

pub use cli::main_with;

/// GSD's HANDOFF.json field names, for the hostile-input tests (tests/handoff_attacks.rs).
pub use handoff::doc::GSD_FIELDS;
