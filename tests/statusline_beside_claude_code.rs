//! `baton statusline` beside Claude Code's own figures (issues 18 and 20): the meter names
//! its base while Claude Code's footer shows a figure of another base, and the subagent
//! rows (`baton statusline --subagents`, Claude Code's `subagentStatusLine`).

use crate::common;

use common::{Sandbox, fixture_json};
use serde_json::{Value, json};

fn render(sandbox: &Sandbox, args: &[&str], payload: &Value, env: &[(&str, &str)]) -> String {
    let mut env = env.to_vec();
    env.push(("NO_COLOR", "1"));
    let output = sandbox.run_with(args, payload.to_string().as_bytes(), &env);
    assert!(output.status.success(), "{}", common::stderr(&output));
    String::from_utf8(output.stdout).unwrap()
}

/// The mid-session payload at `tokens` of a 200k window, for `model`.
fn at_tokens(model: &str, tokens: u64) -> Value {
    let mut payload = fixture_json("statusline.json");
    payload["model"]["id"] = json!(model);
    let used = (tokens as f64 * 100.0 / 200_000.0).round();
    payload["context_window"]["used_percentage"] = json!(used);
    payload["context_window"]["remaining_percentage"] = json!(100.0 - used);
    payload["context_window"]["current_usage"] = json!({"input_tokens": tokens, "output_tokens": 20,
        "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
    payload
}

#[test]
fn the_meter_names_its_base_while_claude_codes_footer_is_shown() {
    let sandbox = Sandbox::new();
    let statusline = ["statusline"];
    // 158k of 200k: Claude Code's footer says "88% context used" (of 180k); baton 79 % of 200k.
    let line = render(&sandbox, &statusline, &at_tokens("claude-sonnet-4-5-20250929", 158_000), &[]);
    assert!(line.contains("███████░░░ 79% of 200k │"), "{line}");
    // 140k: below 147k Claude Code shows no footer, and the meter needs no base.
    let line = render(&sandbox, &statusline, &at_tokens("claude-sonnet-4-5-20250929", 140_000), &[]);
    assert!(line.contains("███████░░░ 70% │"), "{line}");
    // A compaction window of 100k: Claude Code counts "N% until auto-compact" from 47k on.
    let env = [("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "100000")];
    let line = render(&sandbox, &statusline, &at_tokens("claude-sonnet-4-5-20250929", 60_000), &env);
    assert!(line.contains("███░░░░░░░ 30% of 200k │"), "{line}");
    let line = render(&sandbox, &statusline, &at_tokens("claude-sonnet-4-5-20250929", 40_000), &env);
    assert!(line.contains("██░░░░░░░░ 20% │"), "{line}");
    // So does the same window from Claude Code's own settings.
    common::write(&sandbox.claude_settings(), r#"{"autoCompactWindow": 100000}"#);
    let line = render(&sandbox, &statusline, &at_tokens("claude-sonnet-4-5-20250929", 60_000), &[]);
    assert!(line.contains("30% of 200k"), "{line}");
}

#[test]
fn a_narrow_terminal_drops_the_base_first() {
    let sandbox = Sandbox::new();
    let line = render(
        &sandbox,
        &["statusline"],
        &at_tokens("claude-sonnet-4-5-20250929", 158_000),
        &[("COLUMNS", "10")],
    );
    assert_eq!(line.trim_end(), "79%");
}

/// The row context Claude Code 2.1.332 sends its `subagentStatusLine` command (the fields
/// it fills, as read in its bundle), for two subagents.
fn rows_payload() -> Value {
    json!({
        "session_id": common::SESSION, "transcript_path": "/nonexistent/t.jsonl", "cwd": "/nonexistent",
        "permission_mode": "default", "agent_type": "main", "columns": 120,
        "tasks": [
            {"id": "a1b2", "name": null, "type": "local_agent", "agentType": "Explore", "status": "running",
             "description": "Find the limiter", "label": "Find the limiter", "startTime": 1764576000000_u64,
             "model": "claude-sonnet-4-5-20250929", "contextWindowSize": 200000, "tokenCount": 135000,
             "tokenSamples": [90000, 135000], "cwd": "/nonexistent"},
            {"id": "c3d4", "type": "local_agent", "agentType": "general-purpose", "status": "running",
             "description": "Run the tests", "model": "claude-opus-4-7", "contextWindowSize": 1000000,
             "tokenCount": 0, "tokenSamples": []}
        ]
    })
}

#[test]
fn subagent_rows_one_json_line_each() {
    let sandbox = Sandbox::new();
    let out = render(&sandbox, &["statusline", "--subagents"], &rows_payload(), &[]);
    let rows: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(
        rows,
        [
            json!({"id": "a1b2", "content": "Explore  Find the limiter │ ██████░░░░ 68% · 135k/200k"}),
            json!({"id": "c3d4", "content": "general-purpose  Run the tests │ ░░░░░░░░░░ --"}),
        ]
    );
    // In colour: the level baton judges the subagent on (68 % is a WARNING).
    let output = sandbox.run_with(&["statusline", "--subagents"], rows_payload().to_string().as_bytes(), &[]);
    let first: Value =
        serde_json::from_str(String::from_utf8_lossy(&output.stdout).lines().next().unwrap()).unwrap();
    assert!(first["content"].as_str().unwrap().starts_with("\u{1b}[33m"), "{first}");
    // Nothing is written: no bridge for the parent session.
    assert!(!sandbox.bridge_path(common::SESSION).exists());
}

#[test]
fn subagent_rows_on_bad_input_print_nothing_and_exit_zero() {
    let sandbox = Sandbox::new();
    for input in [&b"not json"[..], b"{}", br#"{"tasks": "x"}"#, b""] {
        let output = sandbox.run_with(&["statusline", "--subagents"], input, &[("NO_COLOR", "1")]);
        assert!(output.status.success());
        assert_eq!(common::stdout(&output), "", "{}", String::from_utf8_lossy(input));
    }
    assert!(!sandbox.run(&["statusline", "--subagents", "--wrap", "x"], b"{}").status.success());
}

#[test]
fn install_registers_the_subagent_rows_and_uninstall_removes_exactly_them() {
    let sandbox = Sandbox::plain();
    let before =
        "{\"model\": \"opus\", \"subagentStatusLine\": {\"type\": \"command\", \"command\": \"rows.sh\"}}\n";
    // Another tool's rows stay, and install says so.
    common::write(&sandbox.claude_settings(), before);
    let out = common::ok(&sandbox.run(&["install", "--subagent-rows"], b""));
    assert!(out.contains("subagentStatusLine is `rows.sh`, not baton's; left as it is"), "{out}");
    let settings = common::read_json(&sandbox.claude_settings());
    assert_eq!(settings["subagentStatusLine"]["command"], "rows.sh");
    common::ok(&sandbox.run(&["uninstall"], b""));
    assert_eq!(std::fs::read_to_string(sandbox.claude_settings()).unwrap(), before);

    // None before: asked for, baton's is added, doctor checks it, uninstall takes it away.
    common::write(&sandbox.claude_settings(), "{\"model\": \"opus\"}\n");
    let out = common::ok(&sandbox.run(&["install", "--subagent-rows"], b""));
    assert!(out.contains("+ subagentStatusLine: "), "{out}");
    let settings = common::read_json(&sandbox.claude_settings());
    let command = settings["subagentStatusLine"]["command"].as_str().unwrap();
    assert!(command.ends_with(" statusline --subagents"), "{command}");
    assert_eq!(settings["subagentStatusLine"]["type"], "command");
    let check = doctor_check(&sandbox, "subagentStatusLine");
    assert_eq!(check["status"], "ok", "{check}");
    common::ok(&sandbox.run(&["uninstall"], b""));
    assert_eq!(std::fs::read_to_string(sandbox.claude_settings()).unwrap(), "{\"model\": \"opus\"}\n");

    // The rows are opt-in (Claude Code calls the setting deprecated and says so at every
    // start): a plain install adds none, and doctor says how to have them.
    let out = common::ok(&sandbox.run(&["install"], b""));
    assert!(!out.contains("subagentStatusLine"), "{out}");
    let check = doctor_check(&sandbox, "subagentStatusLine");
    assert_eq!(check["status"], "ok", "{check}");
    assert!(check["message"].as_str().unwrap_or_default().contains("--subagent-rows"), "{check}");
    let out = common::ok(&sandbox.run(&["install", "--statusline-only", "--subagent-rows"], b""));
    assert!(out.contains("+ subagentStatusLine"), "{out}");
}

fn doctor_check(sandbox: &Sandbox, name: &str) -> Value {
    let output = sandbox.run(&["doctor", "--json"], b"");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    report["checks"].as_array().unwrap().iter().find(|c| c["check"] == name).cloned().unwrap_or(Value::Null)
}
