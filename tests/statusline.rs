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
    // Shown, not acted on (issue 32): each control character in its visible form.
    assert!(line.starts_with("Opus\\u001b[2J\\u0007 4.5 │"), "{line:?}");
}

/// A render of the figure the bridge already holds (the same second) leaves the file as
/// it is; a new figure replaces it.
#[test]
fn the_bridge_is_replaced_only_when_its_bytes_change() {
    use std::os::unix::fs::MetadataExt;
    let sandbox = Sandbox::new();
    let inode = || std::fs::metadata(sandbox.bridge_path(SESSION)).unwrap().ino();
    let stamp = || {
        let bridge: Value =
            serde_json::from_slice(&std::fs::read(sandbox.bridge_path(SESSION)).unwrap()).unwrap();
        bridge["timestamp"].as_i64().unwrap()
    };
    let same_second = (0..5).find_map(|_| {
        render(&sandbox, &fixture("statusline.json"), &[]);
        let (first, at) = (inode(), stamp());
        render(&sandbox, &fixture("statusline.json"), &[]);
        (stamp() == at).then(|| (first, inode()))
    });
    let (first, second) = same_second.expect("two renders within one second");
    assert_eq!(first, second, "an unchanged bridge was replaced");
    let mut later = fixture_json("statusline.json");
    later["context_window"]["remaining_percentage"] = json!(26);
    later["context_window"]["used_percentage"] = json!(74);
    render(&sandbox, later.to_string().as_bytes(), &[]);
    assert_ne!(inode(), second, "a new figure must replace the bridge");
    let bridge: Value =
        serde_json::from_slice(&std::fs::read(sandbox.bridge_path(SESSION)).unwrap()).unwrap();
    assert_eq!(bridge["remaining_percentage"], 26);
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

/// A payload captured from another host's CLI (`tests/fixtures/real/<host>/`).
fn real(host: &str, file: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real").join(host).join(file),
    )
    .unwrap()
}

/// `baton statusline --host <host>` on the payload each host's real CLI sent: the meter
/// reads the host's own figure, and the bridge holds it under the payload's session id.
#[test]
fn other_hosts_payloads_render_and_bridge() {
    let cases = [
        (
            "qwen",
            "statusline-with-window.json",
            "30dab63e-f57a-4271-a735-3e510d093132",
            76,
            1_000_000,
            760_020,
        ),
        ("droid", "statusline.json", "7f0b177d-0df7-48ff-8343-86e0ee888abc", 76, 200_000, 152_020),
        ("copilot", "statusline.json", "fffa8644-3f4b-4b93-b1ee-8deff680b0e8", 76, 168_000, 127_680),
    ];
    for (host, file, session, used, window, tokens) in cases {
        let sandbox = Sandbox::new();
        let output =
            sandbox.run_with(&["statusline", "--host", host], &real(host, file), &[("NO_COLOR", "1")]);
        assert!(output.status.success());
        let line = String::from_utf8(output.stdout).unwrap();
        assert!(line.contains(&format!("░░░ {used}%")), "{host}: {line}");
        let bridge: Value =
            serde_json::from_slice(&std::fs::read(sandbox.bridge_path(session)).unwrap()).unwrap();
        assert_eq!(bridge["used_pct"], used, "{host}");
        assert_eq!(bridge["context_window_size"], window, "{host}");
        assert_eq!(bridge["used_tokens"], tokens, "{host}");
        assert!(bridge.get("transcript_offset").is_none(), "{host}: only Claude Code's transcript is offset");
    }
}

/// Qwen Code's payload with `context_window_size` 0: the window is baton's (its table for
/// qwen3-coder-plus: 1M, so 10,036 tokens is 1 %, not Qwen Code's meaningless 0 %); for a
/// model nobody knows the window is assumed, shown, and no bridge is written.
#[test]
fn a_qwen_payload_without_a_window_uses_batons() {
    let sandbox = Sandbox::new();
    let line = sandbox.run_with(
        &["statusline", "--host", "qwen"],
        &real("qwen", "statusline.json"),
        &[("NO_COLOR", "1")],
    );
    let line = String::from_utf8(line.stdout).unwrap();
    assert!(line.starts_with("qwen3-coder-plus │ proj │ ░░░░░░░░░░ 1%"), "{line}");
    let bridge: Value = serde_json::from_slice(
        &std::fs::read(sandbox.bridge_path("f0d10dbf-1e99-49a9-a993-3b918c091d96")).unwrap(),
    )
    .unwrap();
    assert_eq!(bridge["context_window_size"], 1_000_000);
    let mut unknown: Value = serde_json::from_slice(&real("qwen", "statusline.json")).unwrap();
    unknown["model"]["display_name"] = json!("llama-local");
    unknown["session_id"] = json!("unknown-model-session");
    let line = sandbox.run_with(
        &["statusline", "--host", "qwen"],
        unknown.to_string().as_bytes(),
        &[("NO_COLOR", "1")],
    );
    let line = String::from_utf8(line.stdout).unwrap();
    assert!(line.contains("5%"), "10,036 of the assumed 200k: {line}");
    assert!(!sandbox.bridge_path("unknown-model-session").exists(), "an assumed window is no bridge");
}
