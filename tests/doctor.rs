//! `baton doctor` through the built binary, on sandboxed settings.

mod common;

use common::*;
use serde_json::Value;

fn doctor_json(sb: &Sandbox) -> (i32, Value) {
    let output = sb.run(&["doctor", "--json"], b"");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    (output.status.code().unwrap(), report)
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == name)
        .unwrap_or_else(|| panic!("{name}: {report:#}"))
}

#[test]
fn after_install_every_check_is_green() {
    let sb = Sandbox::plain();
    ok(&sb.run(&["install"], b""));
    let output = sb.run(&["doctor"], b"");
    let text = ok(&output);
    assert!(text.contains("all checks passed"), "{text}");
    assert!(text.contains("no session has run yet"), "{text}");
    let (code, report) = doctor_json(&sb);
    assert_eq!(code, 0);
    assert_eq!(report["ok"], true);
    for name in ["hook self-test", "stdin self-test", "state dir", "temp dir", "config", "statusLine"] {
        assert_eq!(check(&report, name)["status"], "ok", "{name}");
    }
    assert!(check(&report, "hook self-test")["message"].as_str().unwrap().contains("median"));
}

#[test]
fn other_hooks_and_another_statusline_stay_and_doctor_is_green() {
    let sb = Sandbox::plain();
    let before = r#"{
  "hooks": {
    "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "npx prettier --write ."}]}],
    "SessionStart": [{"hooks": [{"type": "command", "command": "echo hello"}]}]
  },
  "statusLine": {"type": "command", "command": "~/bin/my-statusline.sh"}
}"#;
    write(&sb.claude_settings(), before);
    ok(&sb.run(&["install"], b""));
    let text = ok(&sb.run(&["doctor"], b""));
    assert!(text.contains("all checks passed"), "{text}");
    ok(&sb.run(&["uninstall"], b""));
    assert_eq!(read_json(&sb.claude_settings()), serde_json::from_str::<Value>(before).unwrap());
}

#[test]
fn nothing_installed_fails_with_fixes() {
    let sb = Sandbox::plain();
    let (code, report) = doctor_json(&sb);
    assert_eq!(code, 1);
    assert_eq!(report["ok"], false);
    let hooks = check(&report, "hooks (Claude Code)");
    assert_eq!(hooks["status"], "fail");
    assert!(hooks["fix"].as_str().unwrap().ends_with("install"), "{hooks}");
    assert_eq!(check(&report, "statusLine")["status"], "fail");
    // Doctor changes nothing: no state dir, no settings, nothing left in the temp dir.
    assert!(!sb.root().join("state").exists());
    assert!(!sb.claude_settings().exists());
    assert_eq!(std::fs::read_dir(sb.tmp()).unwrap().count(), 0);
}

#[test]
fn gsd_alongside_is_a_warning_with_its_fix() {
    let sb = Sandbox::plain();
    write(&sb.claude_settings(), GSD_SETTINGS);
    ok(&sb.run(&["install"], b""));
    let (code, report) = doctor_json(&sb);
    assert_eq!(code, 0, "warnings do not fail");
    let monitors = check(&report, "monitors");
    assert_eq!(monitors["status"], "warn");
    assert!(monitors["fix"].as_str().unwrap().contains("--replace-other-monitors"));
    assert!(check(&report, "statusLine")["message"].as_str().unwrap().contains("wrapping"));
    ok(&sb.run(&["install", "--replace-other-monitors"], b""));
    assert_eq!(check(&doctor_json(&sb).1, "monitors")["status"], "ok");
}

#[test]
fn a_broken_settings_file_and_a_missing_binary_fail() {
    let sb = Sandbox::plain();
    write(&sb.claude_settings(), "{ not json");
    let (code, report) = doctor_json(&sb);
    assert_eq!(code, 1);
    let bad = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "settings" && c["status"] == "fail");
    assert!(bad.is_some(), "{report:#}");

    let sb = Sandbox::plain();
    write(&sb.claude_settings(), include_str!("../settings.example.json"));
    let (code, report) = doctor_json(&sb);
    assert_eq!(code, 1);
    let binary = check(&report, "binary (Claude Code)");
    assert_eq!(binary["status"], "fail");
    assert!(binary["message"].as_str().unwrap().contains("does not exist"), "{binary}");
}

#[test]
fn a_fresh_and_a_stale_bridge() {
    let sb = Sandbox::plain();
    ok(&sb.run(&["install"], b""));
    let payload = include_bytes!("fixtures/statusline.json");
    ok(&sb.run(&["statusline"], payload));
    let bridge = check(&doctor_json(&sb).1, "bridge").clone();
    assert_eq!(bridge["status"], "ok");
    assert!(bridge["message"].as_str().unwrap().contains("72% used"), "{bridge}");
    let path = sb.tmp().join("claude-ctx-7f3c2a10-5b1e-4c2d-9a8f-0d6e4b2c1a99.json");
    write(
        &path,
        r#"{"session_id":"7f3c2a10-5b1e-4c2d-9a8f-0d6e4b2c1a99","remaining_percentage":28,"used_pct":72,"timestamp":1700000000}"#,
    );
    let bridge = check(&doctor_json(&sb).1, "bridge").clone();
    assert_eq!(bridge["status"], "warn");
    assert!(bridge["message"].as_str().unwrap().contains("days old"), "{bridge}");
}

#[test]
fn a_bad_config_file_fails() {
    let sb = Sandbox::plain();
    ok(&sb.run(&["install"], b""));
    write(&sb.root().join("config/baton/config.json"), r#"{"warn_remaining": "lots"}"#);
    let (code, report) = doctor_json(&sb);
    assert_eq!(code, 1);
    assert_eq!(check(&report, "config")["status"], "fail");
}
