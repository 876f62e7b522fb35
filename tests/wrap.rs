//! `baton statusline --wrap '<command>'` through the built binary: the wrapped command's
//! output as it was, baton's own line whenever that command is of no use, and the
//! bridge written in every case.

use crate::common;

use std::time::{Duration, Instant};

use common::*;

const PAYLOAD: &[u8] = include_bytes!("fixtures/statusline.json");
const SESSION: &str = "7f3c2a10-5b1e-4c2d-9a8f-0d6e4b2c1a99";
const OWN_LINE: &str = "Opus 4.5 │ shop-api │ ███████░░░ 72% │ 23k to compact │ $1.83\n";

/// Runs the wrap with the fixture payload; returns stdout and how long it took, and
/// checks the exit code and the bridge.
fn wrap(sb: &Sandbox, command: &str) -> (String, Duration) {
    let bridge = sb.tmp().join(format!("claude-ctx-{SESSION}.json"));
    let _ = std::fs::remove_file(&bridge);
    let start = Instant::now();
    let output = sb.run(&["statusline", "--wrap", command], PAYLOAD);
    let took = start.elapsed();
    let out = ok(&output);
    let written = read_json(&bridge);
    assert_eq!(written["remaining_percentage"], serde_json::json!(28), "bridge written for {command:?}");
    (out, took)
}

#[test]
fn the_wrapped_output_is_printed_as_it_was() {
    let sb = Sandbox::plain();
    let (out, _) = wrap(&sb, "printf '\\033[32mgsd\\033[0m line\\nsecond row\\n'");
    assert_eq!(out, "\u{1b}[32mgsd\u{1b}[0m line\nsecond row\n");
}

#[test]
fn the_wrapped_command_gets_the_same_stdin() {
    let sb = Sandbox::plain();
    let (out, _) = wrap(&sb, "cat");
    assert_eq!(out.as_bytes(), PAYLOAD);
}

#[test]
fn a_statusline_that_sleeps_5_s() {
    let sb = Sandbox::plain();
    let (out, took) = wrap(&sb, "sleep 5; echo late");
    assert_eq!(out, OWN_LINE);
    // Ended at the 1 s deadline, not after the sleep: the bound leaves room for a loaded
    // machine's slow start and still fails a wrap that waits the 5 s out.
    assert!(took < Duration::from_secs(3), "took {took:?}");
}

#[test]
fn a_statusline_that_exits_non_zero() {
    let sb = Sandbox::plain();
    let (out, _) = wrap(&sb, "echo partial; exit 1");
    assert_eq!(out, OWN_LINE);
}

#[test]
fn a_statusline_that_prints_nothing() {
    let sb = Sandbox::plain();
    assert_eq!(wrap(&sb, "cat > /dev/null").0, OWN_LINE);
}

#[test]
fn a_statusline_that_is_not_found() {
    let sb = Sandbox::plain();
    assert_eq!(wrap(&sb, "/nonexistent/gsd-statusline.js").0, OWN_LINE);
    assert_eq!(wrap(&sb, "node-that-is-not-installed statusline.js").0, OWN_LINE);
}

#[test]
fn the_deadline_and_the_meter_come_from_config() {
    let sb = Sandbox::plain();
    write(
        &sb.root().join("config/baton/config.json"),
        r#"{"statusline": {"wrap_timeout_ms": 200, "wrap_append": true}}"#,
    );
    // Past the configured 200 ms but well within the default 1 s: killed, so the key is
    // read (with the default the late line would be printed).
    let (out, _) = wrap(&sb, "sleep 0.6; echo late");
    assert_eq!(out, OWN_LINE);
    assert_eq!(wrap(&sb, "echo gsd").0, "gsd │ ███████░░░ 72%\n");
    // And a longer deadline than the default lets a slow statusline finish.
    write(&sb.root().join("config/baton/config.json"), r#"{"statusline": {"wrap_timeout_ms": 6000}}"#);
    assert_eq!(wrap(&sb, "sleep 1.5; echo late").0, "late\n");
}

#[test]
fn no_payload_still_runs_and_exits_0() {
    let sb = Sandbox::plain();
    let output = sb.run(&["statusline", "--wrap", "echo fine"], b"");
    assert_eq!(ok(&output), "fine\n");
    let output = sb.run(&["statusline", "--wrap", "exit 1"], b"not json");
    assert_eq!(ok(&output), "baton: no statusline input\n");
}
