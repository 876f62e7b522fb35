//! The Claude Code plugin: its manifest and hooks file, and the launcher that finds
//! `baton` (on PATH, or the plugin's own build) or says what to do when there is none.

use crate::common;

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::*;
use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn launcher_run(sb: &Sandbox, plugin_root: &Path, path: &str, event: &str, payload: &str) -> Output {
    let mut child = Command::new(Path::new(ROOT).join("hooks/baton-hook"))
        .arg(event)
        .env_clear()
        .env("PATH", path)
        .env("HOME", sb.home())
        .env("TMPDIR", sb.tmp())
        .env("CLAUDE_PLUGIN_ROOT", plugin_root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A launcher with no baton to run exits without reading stdin: the broken pipe is
    // its answer, not a failure (its output is checked by the caller).
    let _ = std::io::Write::write_all(&mut child.stdin.take().unwrap(), payload.as_bytes());
    child.wait_with_output().unwrap()
}

/// A payload that makes baton warn: a bridge at 30% remaining.
fn warning_payload(sb: &Sandbox) -> String {
    let session = "plugin-test-session";
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    write(
        &sb.tmp().join(format!("claude-ctx-{session}.json")),
        &format!(r#"{{"session_id":"{session}","remaining_percentage":30,"used_pct":70,"timestamp":{now}}}"#),
    );
    format!(
        r#"{{"session_id":"{session}","hook_event_name":"PostToolUse","tool_name":"Read","cwd":"{}"}}"#,
        sb.project().display()
    )
}

#[test]
fn manifest_and_hooks_register_the_events_install_does() {
    let manifest: Value = serde_json::from_str(
        &fs::read_to_string(Path::new(ROOT).join(".claude-plugin/plugin.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["name"], "baton");
    let hooks: Value =
        serde_json::from_str(&fs::read_to_string(Path::new(ROOT).join("hooks/hooks.json")).unwrap()).unwrap();
    let events: Vec<&String> = hooks["hooks"].as_object().unwrap().keys().collect();
    assert_eq!(
        events,
        [
            "PostToolUse",
            "PostToolUseFailure",
            "PostToolBatch",
            "UserPromptSubmit",
            "Stop",
            "SubagentStop",
            "SessionStart",
            "PreCompact",
            "SessionEnd",
            "PostCompact"
        ]
    );
    // The same events, matchers and timeouts `baton install` writes into settings.json.
    let example: Value = serde_json::from_str(include_str!("../settings.example.json")).unwrap();
    let installed: Vec<&String> = example["hooks"].as_object().unwrap().keys().collect();
    assert_eq!(events, installed);
    for (event, groups) in hooks["hooks"].as_object().unwrap() {
        assert_eq!(groups[0].get("matcher"), example["hooks"][event][0].get("matcher"), "{event}");
        let command = groups[0]["hooks"][0]["command"].as_str().unwrap();
        assert_eq!(command, format!("\"${{CLAUDE_PLUGIN_ROOT}}/hooks/baton-hook\" {event}"));
        assert_eq!(groups[0]["hooks"][0]["timeout"], 10);
    }
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &fs::metadata(Path::new(ROOT).join("hooks/baton-hook")).unwrap().permissions(),
    );
    assert!(mode & 0o111 != 0, "the launcher is executable");
}

#[test]
fn the_launcher_runs_baton_from_path() {
    let sb = Sandbox::plain();
    let bin = sb.root().join("bin");
    fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(BATON, bin.join("baton")).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let output =
        launcher_run(&sb, &sb.root().join("no-plugin-build"), &path, "PostToolUse", &warning_payload(&sb));
    let out = ok(&output);
    assert!(out.contains("CONTEXT WARNING"), "{out}");
}

#[test]
fn the_launcher_runs_the_plugins_own_build() {
    let sb = Sandbox::plain();
    let plugin = sb.root().join("plugin");
    fs::create_dir_all(plugin.join("target/release")).unwrap();
    std::os::unix::fs::symlink(BATON, plugin.join("target/release/baton")).unwrap();
    let output = launcher_run(&sb, &plugin, "/usr/bin:/bin", "PostToolUse", &warning_payload(&sb));
    assert!(ok(&output).contains("CONTEXT WARNING"));
}

#[test]
fn without_a_binary_the_launcher_says_what_to_do_once() {
    let sb = Sandbox::plain();
    let plugin = sb.root().join("plugin");
    let output = launcher_run(&sb, &plugin, "/usr/bin:/bin", "SessionStart", "{}");
    let out = ok(&output);
    let message: Value = serde_json::from_str(&out).unwrap();
    let text = message["systemMessage"].as_str().unwrap();
    assert!(
        text.contains("cargo install --path") && text.contains("baton install --statusline-only"),
        "{text}"
    );
    // After every tool call: exit 0, nothing on stdout (no "hook error", no noise).
    let output = launcher_run(&sb, &plugin, "/usr/bin:/bin", "PostToolUse", "{}");
    assert_eq!(ok(&output), "");
    assert!(stderr(&output).contains("no baton binary"));
}
