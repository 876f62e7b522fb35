//! `baton doctor` through the built binary, on sandboxed settings.

use crate::common;

use std::fs;

use common::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

fn doctor_json(sb: &Sandbox) -> (i32, Value) {
    doctor_json_with(sb, &[], &[])
}

fn doctor_json_with(sb: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> (i32, Value) {
    let output = sb.run_with(&[&["doctor", "--json"], args].concat(), b"", env);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    (output.status.code().unwrap(), report)
}

fn check_names(report: &Value) -> Vec<String> {
    report["checks"].as_array().unwrap().iter().map(|c| c["check"].as_str().unwrap().to_string()).collect()
}

/// The `trusted_hash` Codex 0.171.0 stores for a hook without matcher: SHA-256 of the
/// hook's identity as compact JSON with sorted keys (written out here by hand).
fn codex_hash(event: &str, command: &str, timeout: u64) -> String {
    let identity = format!(
        r#"{{"event_name":"{event}","hooks":[{{"async":false,"command":{},"timeout":{timeout},"type":"command"}}]}}"#,
        serde_json::to_string(command).unwrap()
    );
    let digest = Sha256::digest(identity.as_bytes());
    format!("sha256:{}", digest.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// config.toml as Codex writes it after the user trusts baton's four hooks (group 0,
/// hook 0 of each event in `hooks_json`) for `command`.
fn codex_trust_config(hooks_json: &std::path::Path, command: &str) -> String {
    let path = fs::canonicalize(hooks_json).unwrap();
    let mut text = String::from("model = \"gpt-5.5\"\n\n[hooks.state]\n");
    for (event, timeout) in [
        ("post_tool_use", 10),
        ("pre_tool_use", 10),
        ("user_prompt_submit", 10),
        ("stop", 10),
        ("session_start", 10),
        ("pre_compact", 10),
        ("session_end", 3),
        ("post_compact", 10),
    ] {
        text.push_str(&format!(
            "\n[hooks.state.\"{}:{event}:0:0\"]\ntrusted_hash = \"{}\"\n",
            path.display(),
            codex_hash(event, command, timeout)
        ));
    }
    text
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
    assert_eq!(report["hosts"], json!(["claude"]));
    for name in ["hook self-test", "stdin self-test", "state dir", "temp dir", "config", "statusLine"] {
        assert_eq!(check(&report, name)["status"], "ok", "{name}");
    }
    assert!(check(&report, "hook self-test")["message"].as_str().unwrap().contains("median"));
}

#[test]
fn an_unwritable_state_folder_is_what_the_self_test_reports() {
    let sb = Sandbox::plain();
    ok(&sb.run(&["install"], b""));
    // A file where the folder should be: unwritable even for root.
    fs::remove_dir_all(sb.state_dir()).ok();
    fs::create_dir_all(sb.state_dir().parent().unwrap()).unwrap();
    fs::write(sb.state_dir(), b"not a folder").unwrap();
    let (_, report) = doctor_json(&sb);
    let hook = check(&report, "hook self-test");
    assert_eq!(hook["status"], "warn", "{hook:#}");
    let message = hook["message"].as_str().unwrap();
    assert!(message.contains("cannot keep its state") && message.contains("every call"), "{message}");
    assert!(hook["fix"].as_str().unwrap().contains("mkdir -p"), "{hook:#}");
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

#[test]
fn codex_alone_is_checked_alone_with_its_hook_trust() {
    let sb = Sandbox::plain();
    // CODEX_HOME not in its resolved form: Codex names the resolved path in trust keys.
    let real = sb.root().join("codex-real");
    fs::create_dir_all(&real).unwrap();
    let given = sb.root().join("project/../codex-real").to_str().unwrap().to_string();
    let env = [("CODEX_HOME", given.as_str())];
    let out = ok(&sb.run_with(&["install", "--host", "codex"], b"", &env));
    assert!(out.contains("8 of baton's 8 are not trusted") && out.contains("Hooks need review"), "{out}");

    let (code, report) = doctor_json_with(&sb, &[], &env);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["hosts"], json!(["codex"]));
    let names = check_names(&report);
    assert!(names.iter().all(|n| !n.contains("Claude") && n != "statusLine" && n != "bridge"), "{names:?}");
    assert_eq!(check(&report, "hooks (Codex)")["status"], "ok");
    let trust = check(&report, "hook trust (Codex)");
    assert_eq!(trust["status"], "warn");
    assert!(trust["message"].as_str().unwrap().contains("not trusted yet"), "{trust}");
    assert!(trust["fix"].as_str().unwrap().contains("Hooks need review"), "{trust}");

    // The user trusted the hooks in Codex.
    let hooks_json = real.join("hooks.json");
    let command = format!("{} hook", baton_path());
    write(&real.join("config.toml"), &codex_trust_config(&hooks_json, &command));
    let (code, report) = doctor_json_with(&sb, &[], &env);
    assert_eq!(code, 0);
    let trust = check(&report, "hook trust (Codex)");
    assert_eq!(trust["status"], "ok", "{trust}");
    assert!(trust["message"].as_str().unwrap().contains(
        "PostToolUse, PreToolUse, UserPromptSubmit, Stop, SessionStart, PreCompact, SessionEnd, PostCompact"
    ));
    assert!(ok(&sb.run_with(&["install", "--host", "codex"], b"", &env)).contains("hooks are trusted"));

    // Trusted for the command of a baton that has moved since: Codex skips them.
    write(&real.join("config.toml"), &codex_trust_config(&hooks_json, "/old/place/baton hook"));
    let trust = check(&doctor_json_with(&sb, &[], &env).1, "hook trust (Codex)").clone();
    assert_eq!(trust["status"], "warn");
    assert!(
        trust["message"].as_str().unwrap().contains("trusted for an older command (re-trust)"),
        "{trust}"
    );
    let text = ok(&sb.run_with(&["doctor"], b"", &env));
    assert!(text.contains("fix: run `codex`"), "{text}");
}

#[test]
fn gemini_alone_is_checked_alone() {
    let sb = Sandbox::plain();
    ok(&sb.run(&["install", "--host", "gemini"], b""));
    let (code, report) = doctor_json(&sb);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["hosts"], json!(["gemini"]));
    assert_eq!(check(&report, "hooks (Gemini CLI)")["status"], "ok");
    let names = check_names(&report);
    assert!(
        names.iter().all(|n| !n.contains("Claude") && !n.contains("Codex") && n != "statusLine"),
        "{names:?}"
    );
}

#[test]
fn host_picks_the_hosts_checked() {
    let sb = Sandbox::plain();
    ok(&sb.run(&["install", "--host", "gemini"], b""));
    // Claude Code asked for but not set up: its checks fail.
    let (code, report) = doctor_json_with(&sb, &["--host", "claude"], &[]);
    assert_eq!(code, 1);
    assert_eq!(report["hosts"], json!(["claude"]));
    assert_eq!(check(&report, "hooks (Claude Code)")["status"], "fail");
    let (_, report) = doctor_json_with(&sb, &["--host", "all"], &[]);
    assert_eq!(
        report["hosts"],
        json!(["claude", "gemini", "codex", "qwen", "droid", "copilot", "opencode", "kilo"])
    );
    let codex = check(&report, "hooks (Codex)");
    assert_eq!(codex["status"], "fail");
    assert_eq!(codex["fix"].as_str().unwrap(), format!("{} install --host codex", baton_path()));
    let (code, _) = doctor_json_with(&sb, &["--host", "gemini,codex"], &[]);
    assert_eq!(code, 1);
    let output = sb.run(&["doctor", "--host", "emacs"], b"");
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn a_gemini_project_install_in_an_untrusted_folder_is_warned_about() {
    let sb = Sandbox::plain();
    fs::create_dir_all(sb.home().join(".gemini")).unwrap();
    let out = ok(&sb.run(&["install", "--host", "gemini", "--scope", "project"], b""));
    assert!(
        out.contains("Gemini CLI runs a project's hooks (.gemini/settings.json) only in a folder you trust"),
        "{out}"
    );
    let (_, report) = doctor_json_with(&sb, &["--host", "gemini"], &[]);
    let trust = check(&report, "folder trust (Gemini CLI)");
    assert_eq!(trust["status"], "warn", "{trust}");
    // Trusted the way Gemini CLI records it: no word about it.
    let project = fs::canonicalize(sb.project()).unwrap();
    write(
        &sb.home().join(".gemini/trustedFolders.json"),
        &json!({project.to_str().unwrap(): "TRUST_FOLDER"}).to_string(),
    );
    let out = ok(&sb.run(&["install", "--host", "gemini", "--scope", "project"], b""));
    assert!(!out.contains("only in a folder you trust"), "{out}");
    let (_, report) = doctor_json_with(&sb, &["--host", "gemini"], &[]);
    assert_eq!(check(&report, "folder trust (Gemini CLI)")["status"], "ok");
    // Folder trust turned off in Gemini CLI's settings: nothing to trust.
    fs::remove_file(sb.home().join(".gemini/trustedFolders.json")).unwrap();
    write(&sb.home().join(".gemini/settings.json"), r#"{"security": {"folderTrust": {"enabled": false}}}"#);
    let (_, report) = doctor_json_with(&sb, &["--host", "gemini"], &[]);
    assert_eq!(check(&report, "folder trust (Gemini CLI)")["status"], "ok");
}
