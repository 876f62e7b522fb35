//! baton: keeps AI coding agents from running out of context with their work unsaved.
//!
//! The binary (`src/main.rs`) only calls [`cli::main`]; `cli` is the command line (clap,
//! printing, exit codes) over the other modules. The hook path
//! (`hook`, `monitor`, `metrics`) reads stdin, the bridge, the config and one state file;
//! everything heavier (`handoff`, `gitx`, `transcript`, `planning`) sits behind the level
//! that calls for it.
// No unwrap/expect outside tests: the hook path must never panic on bad input.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod checkpoint_github;
pub mod cli;
pub mod config;
pub mod critical_pause;
pub mod demo;
pub mod doctor;
pub mod fsx;
pub mod gitx;
pub mod handoff;
pub mod hook;
pub mod host;
pub mod install;
pub mod metrics;
pub mod monitor;
pub mod pause;
pub mod places;
pub mod planning;
pub mod relay;
pub mod report;
pub mod resume;
pub mod session_state;
pub mod state;
pub mod status;
pub mod statusline;
pub mod stdin;
pub mod transcript;
pub mod util;
