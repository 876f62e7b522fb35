//! baton: keeps AI coding agents from running out of context with their work unsaved.
//!
//! The binary (`src/main.rs`) is a thin command line over these modules. The hook path
//! (`hook`, `monitor`, `metrics`) reads stdin, the bridge, the config and one state file;
//! everything heavier sits behind the level that calls for it.

pub mod config;
pub mod demo;
pub mod doctor;
pub mod fsx;
pub mod hook;
pub mod host;
pub mod install;
pub mod metrics;
pub mod monitor;
pub mod places;
pub mod statusline;
pub mod stdin;
