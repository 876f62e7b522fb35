//! The hook never makes the host show "hook error": whatever arrives on stdin (or
//! doesn't), it exits 0 in time with nothing or one envelope on stdout.

use crate::common;

use std::io::Write;
use std::time::{Duration, Instant};

use common::{SESSION, Sandbox, told};

#[test]
fn stdin_left_open_ends_silently_in_time() {
    let sandbox = Sandbox::new();
    sandbox.write_bridge(SESSION, 10.0, 0);
    for partial in
        [&b""[..], br#"{"session_id": "7f3c2a10-5b1e-4c2d-9a8f-0d6e4b2c1a99", "hook_event_name": "PostTo"#]
    {
        let start = Instant::now();
        let mut child = sandbox.command(&["hook"]).spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(partial).unwrap();
        // Keep the pipe open until the child is gone.
        let output = child.wait_with_output().unwrap();
        drop(stdin);
        assert!(start.elapsed() < Duration::from_secs(3), "took {:?}", start.elapsed());
        assert!(output.status.success());
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn a_complete_event_is_handled_even_if_stdin_stays_open() {
    let sandbox = Sandbox::new();
    sandbox.write_bridge(SESSION, 30.0, 0);
    let start = Instant::now();
    let mut child = sandbox.command(&["hook"]).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(sandbox.post_tool_use(SESSION).to_string().as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    drop(stdin);
    assert!(start.elapsed() < Duration::from_secs(1), "waited for EOF: {:?}", start.elapsed());
    assert!(told(&output).is_some());
}

#[test]
fn the_deadline_can_be_shortened() {
    let sandbox = Sandbox::new();
    let start = Instant::now();
    let mut command = sandbox.command(&["hook"]);
    command.env("BATON_STDIN_TIMEOUT_MS", "200");
    let mut child = command.spawn().unwrap();
    let stdin = child.stdin.take().unwrap();
    let output = child.wait_with_output().unwrap();
    drop(stdin);
    assert!(output.status.success() && output.stdout.is_empty());
    assert!(start.elapsed() < Duration::from_millis(1500), "{:?}", start.elapsed());
}

/// A panic in the hook or the status line ends it at once with exit 0 and nothing said:
/// the panic hook exits, before any unwinding, so the shipped build (which aborts on a
/// panic) behaves the same. Elsewhere a panic is a bug, reported, with a failing exit.
#[test]
fn a_panic_in_a_host_facing_mode_exits_0_silently() {
    let sandbox = Sandbox::new();
    sandbox.write_bridge(SESSION, 10.0, 0);
    let event =
        format!(r#"{{"session_id": "{SESSION}", "hook_event_name": "PostToolUse", "tool_name": "Bash"}}"#);
    let statusline = format!(r#"{{"session_id": "{SESSION}", "context_window": {{"used_percentage": 40}}}}"#);
    for (mode, input) in [("hook", &event), ("statusline", &statusline)] {
        let output = sandbox.run_with(&[mode], input.as_bytes(), &[("BATON_DEBUG_PANIC", "1")]);
        assert_eq!(output.status.code(), Some(0), "{mode}");
        assert!(output.stdout.is_empty(), "{mode}: {}", String::from_utf8_lossy(&output.stdout));
        assert!(output.stderr.is_empty(), "{mode}: {}", String::from_utf8_lossy(&output.stderr));
    }
    // The variable is read only where the guard is: without it the modes still answer.
    let output = sandbox.run_with(&["statusline"], statusline.as_bytes(), &[]);
    assert!(!output.stdout.is_empty(), "the status line renders without the variable");
}

#[test]
fn garbage_on_stdin_is_silent() {
    let sandbox = Sandbox::new();
    sandbox.write_bridge(SESSION, 10.0, 0);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("not JSON", b"hello there".to_vec()),
        ("not UTF-8", vec![0xff, 0xfe, b'{', 0x80, 0x81, b'}']),
        (
            "UTF-8 broken inside a string",
            b"{\"session_id\": \"\xff\xfe\", \"hook_event_name\": \"PostToolUse\"}".to_vec(),
        ),
        ("null", b"null".to_vec()),
        ("array", b"[1, 2, 3]".to_vec()),
        ("number", b"42".to_vec()),
        ("string", b"\"PostToolUse\"".to_vec()),
        ("empty", vec![]),
        (
            "wrong types",
            br#"{"session_id": 12, "hook_event_name": ["PostToolUse"], "cwd": {"a": 1}}"#.to_vec(),
        ),
        (
            "event name of the wrong type",
            br#"{"session_id": "7f3c2a10-5b1e-4c2d-9a8f-0d6e4b2c1a99", "hook_event_name": 7}"#.to_vec(),
        ),
        ("deeply nested", format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)).into_bytes()),
    ];
    for (name, bytes) in cases {
        let output = sandbox.run(&["hook"], &bytes);
        assert!(output.status.success(), "{name}: exit {:?}", output.status);
        assert!(output.stdout.is_empty(), "{name}: {}", String::from_utf8_lossy(&output.stdout));
    }
}

#[test]
fn a_64_mib_payload_is_handled() {
    let sandbox = Sandbox::new();
    sandbox.write_bridge(SESSION, 30.0, 0);
    let big = "x".repeat(64 * 1024 * 1024);
    let mut event = sandbox.post_tool_use(SESSION);
    event["tool_response"] = serde_json::json!({"stdout": big});
    let event = event.to_string();
    // The warning shows the whole payload was streamed through and read. The stdin
    // deadline is raised: this is the unoptimised test build, where serde_json's parser
    // is compiled into baton's own code at opt-level 0 (the release build reads these
    // 64 MiB in well under its 2 s, see the bench); the wall clock only catches a hang.
    let start = Instant::now();
    let output = sandbox.run_with(&["hook"], event.as_bytes(), &[("BATON_STDIN_TIMEOUT_MS", "60000")]);
    assert!(told(&output).unwrap().starts_with("CONTEXT WARNING:"));
    assert!(start.elapsed() < Duration::from_secs(60), "{:?}", start.elapsed());

    // 64 MiB of garbage is silent too.
    let output = sandbox.run(&["hook"], &vec![b'{'; 64 * 1024 * 1024]);
    assert!(output.status.success() && output.stdout.is_empty());
}

#[test]
fn extra_arguments_never_become_usage_errors() {
    let sandbox = Sandbox::new();
    sandbox.write_bridge(SESSION, 30.0, 0);
    let output =
        sandbox.run(&["hook", "--unknown-flag", "x"], sandbox.post_tool_use(SESSION).to_string().as_bytes());
    assert!(told(&output).is_some());
}

/// Runs `baton <mode>` on a terminal (a pty from `script`), as a person trying it by hand.
fn on_a_terminal(mode: &str) -> Option<std::process::Output> {
    let script = ["/usr/bin/script", "/bin/script"].into_iter().find(|p| std::path::Path::new(p).exists())?;
    let command = format!("{} {mode}", common::baton_path());
    std::process::Command::new(script)
        .args(["-qec", &command, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .ok()
}

#[test]
fn on_a_terminal_the_hook_and_the_statusline_say_at_once_what_they_expect() {
    for (mode, expects) in
        [("hook", "reads a hook event (JSON)"), ("statusline", "reads Claude Code's statusLine JSON")]
    {
        let start = Instant::now();
        let output = on_a_terminal(mode).expect("util-linux `script` gives the pty (Debian's bsdutils)");
        // The 2 s stdin deadline would pass first without the check.
        assert!(start.elapsed() < Duration::from_millis(1500), "{mode} waited {:?}", start.elapsed());
        assert!(output.status.success(), "{mode}");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(text.contains(expects) && text.contains("baton demo"), "{mode}: {text}");
    }
}
