//! Configuration layering as the hook and `baton config` see it, and `baton demo`.

use crate::common;

use common::{SESSION, Sandbox, write};
use serde_json::Value;

fn config_json(sandbox: &Sandbox, env: &[(&str, &str)]) -> (Value, bool) {
    let project = sandbox.project();
    let output = sandbox.run_with(&["config", "--json", "--cwd", project.to_str().unwrap()], b"", env);
    (serde_json::from_slice(&output.stdout).expect("config --json"), output.status.success())
}

#[test]
fn layers_user_then_project_then_environment() {
    let sandbox = Sandbox::new();
    write(&sandbox.user_config(), r#"{"warn_remaining": 50, "debounce_calls": 2, "stale_seconds": 30}"#);
    write(&sandbox.project().join(".claude/baton.json"), r#"{"warn_remaining": 45}"#);
    let (config, ok) = config_json(&sandbox, &[("BATON_STALE_SECONDS", "90")]);
    assert!(ok, "{config}");
    assert_eq!(config["values"]["warn_remaining"]["value"], 45.0);
    assert_eq!(config["values"]["warn_remaining"]["source"], "project");
    assert_eq!(config["values"]["debounce_calls"]["value"], 2);
    assert_eq!(config["values"]["debounce_calls"]["source"], "user");
    assert_eq!(config["values"]["stale_seconds"]["value"], 90);
    assert_eq!(config["values"]["stale_seconds"]["env"], "BATON_STALE_SECONDS");
    assert_eq!(config["values"]["critical_remaining"]["source"], "default");

    // The hook uses the same layers: 40% remaining warns at warn_remaining = 45.
    sandbox.write_bridge(SESSION, 40.0, 0);
    assert!(sandbox.hook_told(&sandbox.post_tool_use(SESSION)).is_some());
}

#[test]
fn bad_config_is_reported_and_never_breaks_the_hook() {
    let sandbox = Sandbox::new();
    write(&sandbox.user_config(), "{ this is not json");
    write(
        &sandbox.project().join(".claude/baton.json"),
        r#"{"debounce_calls": "lots", "warn_remaining": 140, "typo_key": true}"#,
    );
    let (config, ok) = config_json(&sandbox, &[("BATON_CRITICAL_REMAINING", "abc")]);
    assert!(!ok, "exit 1 with errors");
    let errors: Vec<String> =
        config["errors"].as_array().unwrap().iter().map(|e| e.as_str().unwrap().to_string()).collect();
    assert_eq!(errors.len(), 5, "{errors:#?}");
    assert!(errors.iter().any(|e| e.contains("not valid JSON")));
    assert!(errors.iter().any(|e| e.contains("typo_key")));
    assert!(errors.iter().any(|e| e.contains("BATON_CRITICAL_REMAINING")));
    assert_eq!(config["values"]["debounce_calls"]["value"], 5);
    assert_eq!(config["values"]["warn_remaining"]["value"], 35.0);

    // The hook still works on the defaults.
    sandbox.write_bridge(SESSION, 30.0, 0);
    let output = sandbox.run_with(
        &["hook"],
        sandbox.post_tool_use(SESSION).to_string().as_bytes(),
        &[("BATON_CRITICAL_REMAINING", "abc")],
    );
    assert!(common::told(&output).unwrap().starts_with("CONTEXT WARNING:"));
}

#[test]
fn config_prints_a_readable_table() {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    let output = sandbox.run(&["config", "--cwd", project.to_str().unwrap()], b"");
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    for needle in ["warn_remaining", "35", "default", "BATON_WARN_REMAINING", "no errors", "not present"] {
        assert!(text.contains(needle), "missing {needle}:\n{text}");
    }
}

#[test]
fn debounce_and_staleness_are_configurable() {
    let sandbox = Sandbox::new();
    let event = sandbox.post_tool_use(SESSION).to_string();
    let env = [("BATON_DEBOUNCE_CALLS", "2"), ("BATON_STALE_SECONDS", "5")];
    let mut fired = vec![];
    for call in 1..=5 {
        sandbox.write_bridge(SESSION, 30.0, 0);
        if common::told(&sandbox.run_with(&["hook"], event.as_bytes(), &env)).is_some() {
            fired.push(call);
        }
    }
    assert_eq!(fired, vec![1, 3, 5]);
    sandbox.write_bridge(SESSION, 30.0, 10);
    assert!(common::told(&sandbox.run_with(&["hook"], event.as_bytes(), &env)).is_none());
}

#[test]
fn demo_plays_the_session_and_cleans_up() {
    let sandbox = Sandbox::new();
    let output = sandbox.run(&["demo"], b"");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).unwrap();
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("GSD (github.com/open-gsd/gsd-core), a spec-driven workflow"), "{text}");
    assert!(text.lines().count() <= 50, "fits a screen or two: {} lines\n{text}", text.lines().count());
    assert!(text.lines().all(|l| l.chars().count() <= 80), "80 columns:\n{text}");
    assert!(text.contains("CONTEXT WARNING: Usage at 65%. Remaining: 35%."), "{text}");
    assert!(text.contains("CONTEXT CRITICAL: Usage at 75%. Remaining: 25%."), "{text}");
    assert!(text.contains("4 warnings over 33 tool calls"), "{text}");
    assert!(!text.contains('\x1b'), "no colour when stdout is not a terminal");
    // At CRITICAL: the handoff and its checkpoint, in the demo's own repository.
    for needle in [
        ".planning/HANDOFF.json: phase 03 (rate-limiting), task 3 of 4, 2 uncommitted file(s)",
        "next_action: Continue: Wire the limiter into the orders routes",
        ".planning/phases/03-rate-limiting/.continue-here.md:",
        "<current_state>",
        "checkpoint refs/baton/wip/demo-session-0001 → ",
        "src/limiter.ts, src/routes/orders.ts",
        "the branch main, its index and the working tree were not touched",
    ] {
        assert!(words.contains(needle), "missing {needle}:\n{text}");
    }
    // Narrower when COLUMNS says so.
    let narrow = sandbox.run_with(&["demo"], b"", &[("COLUMNS", "60")]);
    let narrow = String::from_utf8(narrow.stdout).unwrap();
    assert!(narrow.lines().all(|l| l.chars().count() <= 60), "60 columns:\n{narrow}");
    assert!(narrow.contains("CONTEXT CRITICAL: Usage at 75%."), "{narrow}");
    // Nothing is left in the temp dir, and nothing was written to the home.
    let left: Vec<_> = std::fs::read_dir(sandbox.tmp()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    let home: Vec<_> = std::fs::read_dir(sandbox.home()).unwrap().collect();
    assert!(home.is_empty(), "{home:?}");
}

#[test]
fn a_config_toml_beside_config_json_is_reported_as_not_read() {
    let sandbox = Sandbox::new();
    let user = sandbox.root().join("config/baton");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(user.join("config.toml"), "debounce_calls = 2\n").unwrap();
    let project = sandbox.project();
    let output = sandbox.run(&["config", "--cwd", project.to_str().unwrap()], b"");
    let text = String::from_utf8_lossy(&output.stdout);
    let toml = user.join("config.toml");
    assert!(text.contains(&format!("not read: {} (baton reads JSON only", toml.display())), "{text}");
    let (json, _) = config_json(&sandbox, &[]);
    assert_eq!(json["unread"], serde_json::json!([toml.display().to_string()]), "{json}");
    // The hook does not look for it: nothing changes there.
    let output = sandbox.run(&["doctor", "--json"], b"");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["check"] == "config").unwrap().clone();
    assert_eq!(check["status"], "warn", "{check}");
    assert!(check["message"].as_str().unwrap().contains("is not read"), "{check}");
}

#[test]
fn config_and_doctor_show_each_seen_models_window_source_and_compaction_point() {
    let sandbox = Sandbox::new();
    common::write(
        &sandbox.state_dir().join("windows.json"),
        r#"{"version": 1, "models": {"claude-opus-4-7": 1000000, "claude-sonnet-4-6": 200000}}"#,
    );
    let (json, _) = config_json(&sandbox, &[]);
    let known = json["windows"]["known"].as_array().unwrap();
    let point = |id: &str| known.iter().find(|k| k["model"] == id).map(|k| k["compacts_at"].clone());
    // Claude Code's formula: window − 20,000 reserved for the reply − 13,000.
    assert_eq!(point("claude-opus-4-7"), Some(serde_json::json!(967_000)), "{json}");
    assert_eq!(point("claude-sonnet-4-6"), Some(serde_json::json!(167_000)), "{json}");
    let text = String::from_utf8_lossy(&sandbox.run(&["config"], b"").stdout).into_owned();
    assert!(text.contains("compacts at 967000"), "{text}");
    // Claude Code's own variable moves it as it moves the compaction.
    let (moved, _) = config_json(&sandbox, &[("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "150000")]);
    let sonnet = moved["windows"]["known"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["model"] == "claude-sonnet-4-6")
        .unwrap()
        .clone();
    assert_eq!(sonnet["compacts_at"], 117_000, "{moved}");
    let output = sandbox.run(&["doctor", "--json"], b"");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let windows =
        report["checks"].as_array().unwrap().iter().find(|c| c["check"] == "windows").unwrap().clone();
    assert!(
        windows["message"]
            .as_str()
            .unwrap()
            .contains("claude-opus-4-7 1.0M (remembered from the status line, compacts at 967k)"),
        "{windows}"
    );
}
