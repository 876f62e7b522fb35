//! OpenCode, black-box: the events baton's plugin sends (its report is the figure, the
//! model's limit the window), and the plugin file install writes, uninstall removes
//! exactly, and doctor checks.

use std::fs;

use serde_json::{Value, json};

use crate::common::{Sandbox, ok, stdout};

fn event(name: &str, input: u64, window: u64) -> Vec<u8> {
    json!({
        "hook_event_name": name, "session_id": "ses_dcd65f71fffeIBHGD8RrQIOkSf", "cwd": "/nonexistent/project",
        "prompt_id": "msg_1", "tool_name": "bash", "tool_use_id": "call_02",
        "opencode": {"input": input, "cache_read": 0, "cache_write": 0, "output": 20, "model": "standin/standin-model",
                     "context_limit": window, "output_limit": 8192, "completed_at": 1_796_144_511_907u64}
    })
    .to_string()
    .into_bytes()
}

fn told(output: &std::process::Output) -> Option<String> {
    let text = stdout(output);
    if text.trim().is_empty() {
        return None;
    }
    let value: Value = serde_json::from_str(&text).expect("one JSON envelope");
    value.pointer("/hookSpecificOutput/additionalContext").and_then(Value::as_str).map(str::to_string)
}

#[test]
fn the_plugins_report_is_the_figure_and_its_limit_the_window() {
    let sb = Sandbox::new();
    // 135k of a 200k window: past 65 %.
    let out = sb.run(&["hook"], &event("PostToolUse", 135_000, 200_000));
    assert!(out.status.success());
    let text = told(&out).expect("a warning");
    assert!(text.starts_with("CONTEXT WARNING: Usage at 68%"), "{text}");
    assert!(text.contains("reported by OpenCode to baton's plugin"), "{text}");
    assert!(!text.contains("assumed"), "the window is OpenCode's own: {text}");
    // The same tokens in a 1M window are far below the thresholds.
    let sb = Sandbox::new();
    let out = sb.run(&["hook"], &event("PostToolUse", 135_000, 1_000_000));
    assert!(out.status.success() && told(&out).is_none(), "{}", stdout(&out));
    // Before the first reply (all zero) there is no figure.
    let sb = Sandbox::new();
    let out = sb.run(&["hook"], &event("UserPromptSubmit", 0, 200_000));
    assert!(out.status.success() && stdout(&out).trim().is_empty(), "{}", stdout(&out));
}

#[test]
fn install_writes_the_plugin_uninstall_removes_it_and_doctor_checks_it() {
    let sb = Sandbox::new();
    // XDG_CONFIG_HOME is <root>/config in the sandbox: OpenCode's user folder is there.
    let dir = sb.root().join("config").join("opencode");
    let plugin = dir.join("plugins").join("baton.js");
    let out = ok(&sb.run(&["install", "--host", "opencode"], b""));
    assert!(out.contains("OpenCode, user plugin"), "{out}");
    let text = fs::read_to_string(&plugin).unwrap();
    assert!(text.starts_with("// baton-plugin: "), "{text}");
    assert!(text.contains("experimental.chat.messages.transform") && text.contains("\"hook\""), "{text}");
    let again = ok(&sb.run(&["install", "--host", "opencode"], b""));
    assert!(again.contains("already installed"), "{again}");
    let doctor = ok(&sb.run(&["doctor"], b""));
    assert!(doctor.contains("plugin (OpenCode)") && doctor.contains("binary (OpenCode)"), "{doctor}");
    ok(&sb.run(&["uninstall", "--host", "opencode"], b""));
    assert!(!plugin.exists() && !plugin.parent().unwrap().exists());
    let doctor = sb.run(&["doctor", "--host", "opencode"], b"");
    assert!(!doctor.status.success() && stdout(&doctor).contains("baton's plugin is not installed"));
}

#[test]
fn a_plugin_file_baton_did_not_write_is_left_alone() {
    let sb = Sandbox::new();
    let plugin = sb.root().join("config").join("opencode").join("plugins").join("baton.js");
    crate::common::write(&plugin, "export const Mine = async () => ({});\n");
    let out = sb.run(&["install", "--host", "opencode"], b"");
    assert!(!out.status.success());
    assert!(crate::common::stderr(&out).contains("not baton's plugin"), "{}", crate::common::stderr(&out));
    ok(&sb.run(&["uninstall", "--host", "opencode"], b""));
    assert_eq!(fs::read_to_string(&plugin).unwrap(), "export const Mine = async () => ({});\n");
}

#[test]
fn all_takes_opencode_where_its_folders_exist() {
    let sb = Sandbox::new();
    let out = ok(&sb.run(&["install", "--host", "all"], b""));
    assert!(out.contains("OpenCode:") && out.contains("does not exist"), "{out}");
    fs::create_dir_all(sb.root().join("config").join("opencode")).unwrap();
    let out = ok(&sb.run(&["install", "--host", "all"], b""));
    assert!(out.contains("OpenCode, user plugin"), "{out}");
    // The project scope: where the project's .opencode exists.
    fs::create_dir_all(sb.project().join(".opencode")).unwrap();
    let out = ok(&sb.run(&["install", "--host", "all", "--scope", "project"], b""));
    assert!(out.contains("OpenCode, project plugin"), "{out}");
    assert!(sb.project().join(".opencode/plugins/baton.js").is_file());
    let doctor = stdout(&sb.run(&["doctor"], b""));
    assert!(doctor.contains("installed in both scopes"), "{doctor}");
}

#[test]
fn kilo_cli_takes_the_same_plugin_in_its_own_folder() {
    let sb = Sandbox::new();
    let plugin = sb.root().join("config").join("kilo").join("plugins").join("baton.js");
    let out = ok(&sb.run(&["install", "--host", "kilo"], b""));
    assert!(out.contains("Kilo CLI, user plugin"), "{out}");
    let text = fs::read_to_string(&plugin).unwrap();
    assert!(text.contains("const HOST = \"kilo\";"), "{text}");
    // The plugin names its host in the report: the words name Kilo CLI.
    let mut event: Value = serde_json::from_slice(&event("PostToolUse", 135_000, 200_000)).unwrap();
    event["opencode"]["host"] = json!("kilo");
    let out = sb.run(&["hook"], event.to_string().as_bytes());
    let text = told(&out).expect("a warning");
    assert!(text.contains("reported by Kilo CLI to baton's plugin"), "{text}");
    let doctor = ok(&sb.run(&["doctor"], b""));
    assert!(doctor.contains("plugin (Kilo CLI)") && !doctor.contains("plugin (OpenCode)"), "{doctor}");
    ok(&sb.run(&["uninstall", "--host", "kilo"], b""));
    assert!(!plugin.exists());
}
