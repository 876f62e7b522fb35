//! The one integration-test binary: each area of baton's black-box tests is a module
//! here (its file beside this one), so `cargo test` links the crate once instead of once
//! per file. Every test runs the built binary in its own sandbox and shares nothing with
//! the others in this process: no environment changes, no current directory, no global
//! state beyond the real-host suite's own serialising lock.
//!
//! Run one area with a name filter: `cargo test --test it hosts::`. The real-host suite
//! (`real_hosts::`) and the config fuzz test (`fuzz_config::`) are run that way by `.ci/run`.
//!
//! The binary runs on Unix: the tests drive the Linux build with `sh`, `git`, pipes and
//! ptys. The Windows build is tested from here too, under wine (`windows_wine::`, which
//! runs `baton.exe` the way a Windows host would); built for Windows itself, this test
//! binary is empty.
#![cfg(unix)]

mod common;
mod real_hosts_support;

mod architecture;
mod checkpoint_github;
mod completions;
mod config_and_demo;
mod crate_package;
mod doctor;
mod fuzz_config;
mod handoff;
mod handoff_attacks;
mod hook_monitor;
mod hook_robustness;
mod hosts;
mod install;
mod install_sh;
mod killed_pause;
mod linking;
mod npm_package;
mod opencode;
mod opencode_facts;
mod plugin;
mod plugin_listing;
mod real_hosts;
mod relay_pty;
mod relay_report;
mod report;
mod resume;
mod safe_folders;
mod snapshots;
mod statusline;
mod statusline_beside_claude_code;
mod statusline_segments;
mod terminal_escapes;
mod transcript_fallback;
mod untrusted;
mod windows_wine;
mod wrap;
