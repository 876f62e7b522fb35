//! The `baton` binary: everything is in the library's command line, [`baton::main_with`].
//!
//! On Unix the process starts in [`main`] below, a C entry point (`no_main`): std's own
//! entry does work before `main` that the hook, run after every tool call, does not need.
//! On Windows std's entry is kept (its set-up there is cheap, and the C runtime's
//! arguments are not Windows' Unicode ones).
// No unwrap/expect outside tests: the hook path must never panic on bad input.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
// The bin's test harness has its own entry point: the C one is the real binary's only.
#![cfg_attr(all(not(test), unix), no_main)]
#![cfg_attr(test, allow(dead_code, unused_imports))]

#[cfg(unix)]
use std::ffi::{OsString, c_char, c_int};
use std::io::Write;
use std::panic;
use std::process::ExitCode;

/// The process entry, called by the C runtime in place of std's (`#![no_main]`).
///
/// std's own entry sets up a guard against stack overflow before `main`, and on glibc
/// that reads and parses `/proc/self/maps`: about 40,000 instructions and 15 system
/// calls, as much as the whole hook below its thresholds. The hook and the statusline run
/// after every tool call and message, so they start here with only what they need (the
/// standard descriptors checked, `SIGPIPE` ignored, as std does) and without building
/// clap's command tree. The hook skips argument parsing altogether: no flag a host passes
/// may turn into a usage error and a non-zero exit.
#[cfg(all(not(test), unix))]
#[unsafe(no_mangle)]
extern "C" fn main(argc: c_int, argv: *const *const c_char) -> c_int {
    // SAFETY: the C runtime passes argc strings in argv, each NUL-terminated.
    let args = unsafe { args_from(argc, argv) };
    start_like_std();
    // A panic here is a bug: reported as std reports it (the default hook), exit 101 (the
    // shipped build aborts on a panic: the same report, then SIGABRT). The hook and the
    // status line end their own with exit 0 (`cli::run_guarded`).
    let code = panic::catch_unwind(move || baton::main_with(args));
    let _ = std::io::stdout().flush();
    match code {
        Ok(code) => (0..=255u8).find(|c| ExitCode::from(*c) == code).map_or(1, c_int::from),
        Err(_) => 101,
    }
}

#[cfg(all(not(test), unix))]
/// The arguments as std would give them (std cannot on every C library without its
/// own entry point).
///
/// # Safety
/// `argv` holds `argc` pointers to NUL-terminated strings.
unsafe fn args_from(argc: c_int, argv: *const *const c_char) -> Vec<OsString> {
    use std::os::unix::ffi::OsStrExt;
    (0..usize::try_from(argc).unwrap_or(0))
        .filter_map(|i| {
            // SAFETY: i < argc, so argv[i] is one of the strings the caller vouches for.
            let arg = unsafe { *argv.add(i) };
            // SAFETY: as above, NUL-terminated.
            (!arg.is_null()).then(|| {
                std::ffi::OsStr::from_bytes(unsafe { std::ffi::CStr::from_ptr(arg) }.to_bytes())
                    .to_os_string()
            })
        })
        .collect()
}

#[cfg(all(not(test), unix))]
/// What std's entry does before `main` that baton relies on: the standard descriptors
/// are open (a closed stdout must not become the next file opened, which the envelope
/// would then be written into), and a write to a closed pipe is an error, not a kill
/// signal (the hook's exit code stays 0).
fn start_like_std() {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd { fd, events: 0, revents: 0 });
    // SAFETY: three valid pollfd entries; a zero timeout only reports.
    if unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) } >= 0 {
        for fd in fds.iter().filter(|p| p.revents & libc::POLLNVAL != 0) {
            // SAFETY: a plain open of a constant path; the lowest free descriptor, which
            // is the closed one, is taken.
            let opened = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR, 0) };
            if opened != fd.fd {
                // Not the descriptor it was meant to fill: better no baton than a wrong one.
                // SAFETY: aborting has no preconditions.
                unsafe { libc::abort() };
            }
        }
    }
    // SAFETY: setting a signal's disposition to ignore has no preconditions.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
}

/// The process entry on Windows: std's, with the same panic handling as the Unix one.
#[cfg(all(not(test), windows))]
fn main() -> ExitCode {
    let args = std::env::args_os().collect();
    let code = panic::catch_unwind(move || baton::main_with(args));
    let _ = std::io::stdout().flush();
    code.unwrap_or(ExitCode::from(101))
}
