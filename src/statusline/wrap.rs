//! `baton statusline --wrap '<command>'`: another tool's statusline, kept as it was.
//!
//! `baton install` wraps a statusLine that is not baton's instead of replacing it. The
//! old command gets the same stdin bytes and its output is printed unchanged (with
//! baton's context meter after it when `statusline.wrap_append` is set), while baton
//! writes the bridge its monitor reads, in every case. When the old command is slow
//! (past `statusline.wrap_timeout_ms`, 1 s by default: its whole process group is
//! killed), fails, prints nothing or is not found, baton's own line is printed instead,
//! so the status line never goes blank because of the wrapped tool.

use std::path::PathBuf;
use std::time::Duration;

use crate::config::Config;
use crate::host::HostKind;
use crate::stdin;
use crate::util::proc;

/// The most stdin passed on, and the most output kept, in bytes.
const PAYLOAD_LIMIT: usize = 4 * 1024 * 1024;
const OUTPUT_LIMIT: usize = 256 * 1024;

/// Why the wrapped command's output is not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// `sh` itself could not be started.
    Spawn(String),
    /// Still running at the deadline; killed.
    Timeout,
    /// Exited non-zero (127: not found).
    Exit(Option<i32>),
    /// Printed nothing but white space.
    Empty,
}

/// Starts `sh -c <command>` (Git Bash or cmd on Windows: [`crate::platform::shell`]) in
/// its own process group (killed whole past `timeout`), its
/// stdin fed `payload`, its stderr dropped.
fn spawn(command: &str, payload: Vec<u8>, timeout: Duration) -> Result<proc::Running, Failure> {
    let sh = crate::platform::shell(command);
    let options = proc::Options {
        input: proc::Input::Bytes(payload),
        stderr: false,
        output_limit: OUTPUT_LIMIT as u64,
        timeout,
        kill: proc::Kill::Group,
    };
    proc::start(sh, &options).map_err(failure)
}

fn failure(e: proc::RunError) -> Failure {
    match e {
        proc::RunError::Spawn(e) => Failure::Spawn(e.to_string()),
        proc::RunError::TimedOut | proc::RunError::Wait(_) => Failure::Timeout,
    }
}

/// The command's output, if it ends well before its deadline.
fn finish(running: proc::Running) -> Result<String, Failure> {
    let done = running.finish().map_err(failure)?;
    if !done.status.success() {
        return Err(Failure::Exit(done.status.code()));
    }
    let text = String::from_utf8_lossy(&done.stdout).into_owned();
    if text.trim().is_empty() {
        return Err(Failure::Empty);
    }
    Ok(text)
}

/// Runs `command` with `payload` on stdin and returns its output, or why not.
#[cfg(test)]
pub fn run_command(command: &str, payload: &[u8], timeout: Duration) -> Result<String, Failure> {
    finish(spawn(command, payload.to_vec(), timeout)?)
}

/// What `--wrap` prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// The wrapped command's output as it wrote it (the user's own program: its colours
    /// and links are its own), with baton's meter after it when asked.
    Wrapped(String),
    /// baton's own line, when the wrapped command gave nothing usable.
    Own(String),
}

/// What is printed: the wrapped output (the meter after its last line when `append`),
/// or baton's own line when the wrapped command gave nothing usable.
pub fn compose(wrapped: Result<String, Failure>, own_line: &str, meter: Option<&str>, append: bool) -> Shown {
    match wrapped {
        Ok(text) => Shown::Wrapped(match meter.filter(|_| append) {
            Some(meter) => format!("{}{}{meter}\n", text.trim_end_matches(['\n', '\r']), super::SEPARATOR),
            None => text,
        }),
        Err(_) => Shown::Own(format!("{own_line}\n")),
    }
}

/// The whole `--wrap` mode: read stdin, start the wrapped command, render baton's line
/// and write the bridge while it runs, then choose what to print.
pub fn run(command: &str, host: HostKind, now: i64) -> Shown {
    let payload = stdin::read_bytes(stdin::timeout_from_env(), PAYLOAD_LIMIT).unwrap_or_default();
    let input = host.statusline_input(&payload);
    let project = input.as_ref().and_then(|i| i.project_dir()).map(PathBuf::from).filter(|p| p.is_absolute());
    let config = Config::load(project.as_deref());
    let running = spawn(command, payload, config.wrap_timeout());
    let (own_line, meter) = match &input {
        Some(input) => super::run_parts(input, &config, now),
        None => ("baton: no statusline input".to_string(), None),
    };
    let wrapped = running.and_then(finish);
    compose(wrapped, &own_line, meter.as_deref(), config.wrap_append())
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    #[test]
    fn passes_stdin_and_output_through() {
        let out = run_command("tr a-z A-Z", b"{\"x\": \"abc\"}", Duration::from_secs(5));
        assert_eq!(out, Ok("{\"X\": \"ABC\"}".to_string()));
    }

    #[test]
    fn failures_are_told_apart() {
        let t = Duration::from_secs(5);
        assert_eq!(run_command("exit 3", b"", t), Err(Failure::Exit(Some(3))));
        assert_eq!(run_command("printf '  \\n'", b"", t), Err(Failure::Empty));
        assert_eq!(run_command("/nonexistent/statusline-tool", b"", t), Err(Failure::Exit(Some(127))));
    }

    #[test]
    fn a_slow_command_is_killed_at_the_deadline() {
        let start = Instant::now();
        // The child holds stdout open too: the group kill must reach it.
        let out = run_command("echo early; sleep 5 & sleep 5", b"", Duration::from_millis(300));
        assert_eq!(out, Err(Failure::Timeout));
        assert!(start.elapsed() < Duration::from_millis(1500), "{:?}", start.elapsed());
    }

    #[test]
    fn a_command_that_ignores_a_large_stdin_does_not_block() {
        let payload = vec![b' '; 1024 * 1024];
        assert_eq!(run_command("echo ok", &payload, Duration::from_secs(5)), Ok("ok\n".to_string()));
    }

    #[test]
    fn composes_the_line() {
        let wrapped = |text: &str| Shown::Wrapped(text.to_string());
        assert_eq!(compose(Ok("gsd │ 40%\n".into()), "own", Some("██ 20%"), false), wrapped("gsd │ 40%\n"));
        assert_eq!(compose(Ok("gsd\n".into()), "own", Some("██ 20%"), true), wrapped("gsd │ ██ 20%\n"));
        assert_eq!(compose(Ok("a\nb".into()), "own", Some("m"), true), wrapped("a\nb │ m\n"));
        assert_eq!(compose(Err(Failure::Timeout), "own", Some("m"), true), Shown::Own("own\n".into()));
        assert_eq!(compose(Ok("gsd\n".into()), "own", None, true), wrapped("gsd\n"));
    }
}
