//! Two self-tests that run this binary's hook the way a host does, in a private
//! throwaway folder, so nothing of the user's is read or written: the hook's answer and
//! time, and a stdin left open.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use super::report::{Check, Status};
use crate::util::proc;
use crate::{fsx, metrics, places};

/// A private throwaway folder (removed on drop) with a home, a temp dir and a project,
/// so the self-tests read no config of the user's and write nothing of theirs.
struct Sandbox {
    root: PathBuf,
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

impl Sandbox {
    fn create() -> std::io::Result<Sandbox> {
        let root = places::temp_dir().join(format!("baton-doctor-{}", fsx::random_hex(8)));
        crate::platform::create_dir(&root, true)?;
        let sandbox = Sandbox { root };
        for sub in ["home", "tmp", "project"] {
            fsx::ensure_dir(&sandbox.root.join(sub), true)?;
        }
        Ok(sandbox)
    }

    fn command(&self, exe: &Path) -> Command {
        let mut command = Command::new(exe);
        command
            .arg("hook")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(places::sandbox_env(&self.root.join("home"), &self.root.join("tmp")))
            .env("CLAUDE_PROJECT_DIR", self.root.join("project"))
            .current_dir(self.root.join("project"));
        // The hook keeps its state where the user's hook will: the self-test then meets
        // the same state folder (an unwritable one included) and reports what the hook
        // will really do. A folder not made yet is left unmade: doctor changes nothing.
        let existing = places::state_dir().filter(|dir| dir.symlink_metadata().is_ok());
        if let Some(base) = existing.as_deref().and_then(Path::parent) {
            command.env("XDG_STATE_HOME", base);
        }
        command
    }
}

/// A finished run of the hook.
struct HookRun {
    ok: bool,
    stdout: String,
    elapsed: Duration,
}

/// Why the self-test could not see the hook finish.
#[derive(Debug, thiserror::Error)]
enum HookRunError {
    #[error("cannot run the hook ({0})")]
    Spawn(std::io::Error),
    #[error("still running after {} s; killed", .0.as_secs())]
    Killed(Duration),
    #[error("cannot write the hook's stdin ({0})")]
    Stdin(std::io::Error),
}

/// Runs `command`, writing `stdin` and closing it (or, with `None`, leaving it open),
/// killed past `limit`.
fn run_hook(command: Command, stdin: Option<&[u8]>, limit: Duration) -> Result<HookRun, HookRunError> {
    let options = proc::Options {
        input: stdin.map_or(proc::Input::HeldOpen, |bytes| proc::Input::Bytes(bytes.to_vec())),
        stderr: false,
        output_limit: u64::MAX,
        timeout: limit,
        kill: proc::Kill::Child,
    };
    let done = proc::run(command, &options).map_err(|e| match e {
        proc::RunError::Spawn(e) => HookRunError::Spawn(e),
        proc::RunError::TimedOut | proc::RunError::Wait(_) => HookRunError::Killed(limit),
    })?;
    if let Some(e) = done.stdin_error {
        return Err(HookRunError::Stdin(e));
    }
    let stdout = String::from_utf8(done.stdout).unwrap_or_default();
    Ok(HookRun { ok: done.status.success(), stdout, elapsed: done.elapsed })
}

const SELF_TEST_RUNS: usize = 20;

pub(super) fn hook_self_test(exe: &Path) -> Check {
    let name = "hook self-test";
    let sandbox = match Sandbox::create() {
        Ok(sandbox) => sandbox,
        Err(e) => {
            return Check::new(Status::Fail, name, format!("cannot make a private test folder ({e})"), None);
        }
    };
    let session = format!("baton-doctor-{}", fsx::random_hex(6));
    // A figure at 30% remaining: the first call must warn.
    let bridge = json!({"session_id": session, "remaining_percentage": 30, "used_pct": 70, "timestamp": metrics::now_unix()});
    let bridge_path = sandbox.root.join("tmp").join(format!("claude-ctx-{session}.json"));
    if let Err(e) = fsx::write_atomic(&bridge_path, bridge.to_string().as_bytes(), fsx::WriteOptions::STATE) {
        return Check::new(Status::Fail, name, format!("cannot write a test bridge ({e})"), None);
    }
    let payload = json!({
        "session_id": session,
        "transcript_path": null,
        "cwd": sandbox.root.join("project"),
        "hook_event_name": "PostToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": sandbox.root.join("project/README.md")},
        "tool_response": {"success": true}
    })
    .to_string();
    let mut times = Vec::with_capacity(SELF_TEST_RUNS);
    let mut unkept = None;
    // The self-test's state lives in the user's state folder: gone when the test is.
    struct Forget<'a>(&'a str);
    impl Drop for Forget<'_> {
        fn drop(&mut self) {
            crate::session_state::forget(self.0);
        }
    }
    let _forget = Forget(&session);
    for i in 0..SELF_TEST_RUNS {
        let run = match run_hook(sandbox.command(exe), Some(payload.as_bytes()), Duration::from_secs(10)) {
            Ok(run) => run,
            Err(e) => return Check::new(Status::Fail, name, format!("run {}: {e}", i + 1), None),
        };
        if !run.ok {
            return Check::new(Status::Fail, name, format!("run {}: the hook exited non-zero", i + 1), None);
        }
        let stdout = run.stdout.trim();
        if !stdout.is_empty() && serde_json::from_str::<Value>(stdout).is_err() {
            return Check::new(
                Status::Fail,
                name,
                format!("run {}: stdout is not one JSON value: {stdout}", i + 1),
                None,
            );
        }
        if i == 0 && stdout.contains("cannot keep its state") {
            unkept = Some(stdout.to_string());
        }
        if i == 0 && !stdout.contains("CONTEXT WARNING") {
            return Check::new(
                Status::Fail,
                name,
                format!("at 30% remaining the first call did not warn (stdout: {stdout:?})"),
                Some("check `baton config` for thresholds, or report a bug".into()),
            );
        }
        times.push(run.elapsed);
    }
    times.sort();
    let median = times[times.len() / 2];
    let ms = median.as_secs_f64() * 1000.0;
    let message = format!("median {ms:.1} ms over {SELF_TEST_RUNS} runs; warns at 30% remaining");
    if unkept.is_some() {
        let dir = places::state_dir()
            .map_or_else(|| "baton's state folder".to_string(), |d| d.display().to_string());
        return Check::new(
            Status::Warn,
            name,
            format!(
                "{message}, but the hook cannot keep its state in {dir}: every call past a threshold will warn (no debounce), and the session's count and levels are not kept"
            ),
            Some(format!(
                "make {dir} a folder you can write (remove whatever file is there, then mkdir -p -m 700 {dir}), or set XDG_STATE_HOME to a writable folder"
            )),
        );
    }
    if median > Duration::from_millis(250) {
        Check::new(
            Status::Warn,
            name,
            format!("{message}: slow for a hook that runs after every tool call"),
            Some("build with --release (cargo install --path .)".into()),
        )
    } else {
        Check::new(Status::Ok, name, message, None)
    }
}

pub(super) fn stdin_open_test(exe: &Path) -> Check {
    let name = "stdin self-test";
    let sandbox = match Sandbox::create() {
        Ok(sandbox) => sandbox,
        Err(e) => {
            return Check::new(Status::Fail, name, format!("cannot make a private test folder ({e})"), None);
        }
    };
    let mut command = sandbox.command(exe);
    command.env("BATON_STDIN_TIMEOUT_MS", "500");
    match run_hook(command, None, Duration::from_secs(3)) {
        Ok(run) if run.ok && run.stdout.is_empty() => Check::new(
            Status::Ok,
            name,
            format!("with stdin left open the hook exits 0, silent, in {} ms", run.elapsed.as_millis()),
            None,
        ),
        Ok(run) => Check::new(
            Status::Fail,
            name,
            format!(
                "with stdin left open the hook exited {} with stdout {:?}",
                if run.ok { "0" } else { "non-zero" },
                run.stdout
            ),
            None,
        ),
        Err(e) => Check::new(Status::Fail, name, format!("with stdin left open the hook was {e}"), None),
    }
}
