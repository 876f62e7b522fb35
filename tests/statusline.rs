//! `baton statusline` on each fixture, the bridge it writes, and the round trip from the
//! statusline through the bridge to the hook.

use crate::common;

use common::{SESSION, Sandbox, fixture, fixture_json};
use serde_json::{Value, json};

fn render(sandbox: &Sandbox, payload: &[u8], env: &[(&str, &str)]) -> String {
    let output = sandbox.run_with(&["statusline"], payload, env);
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn mid_session_fixture() {
    let sandbox = Sandbox::new();
    let line = render(&sandbox, &fixture("statusline.json"), &[("NO_COLOR", "1")]);
    assert_eq!(line, "Opus 4.5 │ shop-api │ ███████░░░ 72% │ 23k to compact │ $1.83\n");
    let bridge: Value =
        serde_json::from_slice(&std::fs::read(sandbox.bridge_path(SESSION)).unwrap()).unwrap();
    assert_eq!(bridge["session_id"], SESSION);
    assert_eq!(bridge["remaining_percentage"], 28);
    assert_eq!(bridge["used_pct"], 72);
    assert!((bridge["timestamp"].as_i64().unwrap() - common::now()).abs() <= 2);
    assert_eq!(bridge["used_tokens"], 144_012);
    assert_eq!(bridge["context_window_size"], 200_000);
}

#[test]
fn colour_follows_the_monitor_levels_and_no_color() {
    let sandbox = Sandbox::new();
    let coloured = render(&sandbox, &fixture("statusline.json"), &[]);
    // 28% remaining is a WARNING for the monitor: yellow here.
    assert!(coloured.contains("\x1b[33m███████░░░ 72%\x1b[0m"), "{coloured:?}");
    let mut critical = fixture_json("statusline.json");
    critical["context_window"]["remaining_percentage"] = json!(25);
    critical["context_window"]["used_percentage"] = json!(75);
    let line = render(&sandbox, critical.to_string().as_bytes(), &[]);
    assert!(line.contains("\x1b[1;31m███████░░░ 75%"), "{line:?}");
    let mut normal = fixture_json("statusline.json");
    normal["context_window"]["remaining_percentage"] = json!(36);
    let line = render(&sandbox, normal.to_string().as_bytes(), &[]);
    assert!(line.contains("\x1b[32m"), "{line:?}");
    let plain = render(&sandbox, &fixture("statusline.json"), &[("NO_COLOR", "1")]);
    assert!(!plain.contains('\x1b'));
    // Configured thresholds move the colour too: one computation for both.
    let line = render(&sandbox, &fixture("statusline.json"), &[("BATON_CRITICAL_REMAINING", "30")]);
    assert!(line.contains("\x1b[1;31m"), "{line:?}");
}

#[test]
fn after_compact_nulls_show_dashes_and_keep_the_bridge() {
    let sandbox = Sandbox::new();
    sandbox.write_bridge(SESSION, 40.0, 0);
    let before = std::fs::read(sandbox.bridge_path(SESSION)).unwrap();
    let line = render(&sandbox, &fixture("statusline-after-compact.json"), &[("NO_COLOR", "1")]);
    assert_eq!(line, "Opus 4.5 │ shop-api │ ░░░░░░░░░░ -- \n".replace(" \n", "\n"));
    assert!(!line.contains("0%"), "nulls must not read as 0% used");
    assert_eq!(std::fs::read(sandbox.bridge_path(SESSION)).unwrap(), before, "bridge untouched");

    let fresh = Sandbox::new();
    render(&fresh, &fixture("statusline-after-compact.json"), &[]);
    assert!(!fresh.bridge_path(SESSION).exists(), "no bridge written from nulls");
}

#[test]
fn one_million_window() {
    let sandbox = Sandbox::new();
    let line = render(&sandbox, &fixture("statusline-1m.json"), &[("NO_COLOR", "1")]);
    assert!(line.contains("██████░░░░ 61%"), "{line}");
    assert!(line.starts_with("Sonnet 4.5 (1M context) │ shop-api"), "{line}");
    let bridge: Value =
        serde_json::from_slice(&std::fs::read(sandbox.bridge_path(SESSION)).unwrap()).unwrap();
    assert_eq!(bridge["remaining_percentage"], 39);
    assert_eq!(bridge["context_window_size"], 1_000_000);
    assert_eq!(bridge["used_tokens"], 610_020);
}

#[test]
fn older_hosts_without_percentages_use_current_usage() {
    let sandbox = Sandbox::new();
    let mut payload = fixture_json("statusline.json");
    let window = payload["context_window"].as_object_mut().unwrap();
    window.remove("used_percentage");
    window.remove("remaining_percentage");
    window.insert("total_input_tokens".into(), json!(5_000_000));
    let line = render(&sandbox, payload.to_string().as_bytes(), &[("NO_COLOR", "1")]);
    assert!(line.contains("███████░░░ 72%"), "{line}");
}

#[test]
fn branch_is_shown_from_git_head() {
    let sandbox = Sandbox::new();
    let project = sandbox.project().join("shop-api");
    std::fs::create_dir_all(&project).unwrap();
    git2::Repository::init(&project).unwrap();
    std::fs::write(project.join(".git/HEAD"), "ref: refs/heads/feat/rate-limit\n").unwrap();
    let mut payload = fixture_json("statusline.json");
    payload["workspace"]["current_dir"] = json!(project);
    let line = render(&sandbox, payload.to_string().as_bytes(), &[("NO_COLOR", "1")]);
    assert_eq!(line, "Opus 4.5 │ shop-api │ feat/rate-limit │ ███████░░░ 72% │ 23k to compact │ $1.83\n");
}

#[test]
fn garbage_still_prints_a_line_and_exits_zero() {
    let sandbox = Sandbox::new();
    for bytes in [&b"nope"[..], b"", b"[]", b"{\"model\": 3, \"context_window\": \"x\"}"] {
        let output = sandbox.run(&["statusline"], bytes);
        assert!(output.status.success());
        assert!(!output.stdout.is_empty());
    }
}

#[test]
fn control_characters_in_the_payload_are_not_printed() {
    let sandbox = Sandbox::new();
    let mut payload = fixture_json("statusline.json");
    payload["model"]["display_name"] = json!("Opus\x1b[2J\x07 4.5");
    let line = render(&sandbox, payload.to_string().as_bytes(), &[("NO_COLOR", "1")]);
    assert!(line.starts_with("Opus[2J 4.5 │"), "{line:?}");
}

#[test]
fn statusline_to_bridge_to_hook_round_trip() {
    let sandbox = Sandbox::new();
    render(&sandbox, &fixture("statusline.json"), &[]);
    let mut event = fixture_json("hook-posttooluse.json");
    event["cwd"] = json!(sandbox.project());
    let text = sandbox.hook_told(&event).expect("28% remaining warns");
    assert!(text.starts_with("CONTEXT WARNING: Usage at 72%. Remaining: 28%."), "{text}");
}
