//! `baton report` through the built binary: the text report, `--json` and `--svg` on the
//! sample transcript, finding transcripts by session and by project, and the errors.

use crate::common;

use std::path::{Path, PathBuf};

use common::{SESSION, Sandbox, fixture, stderr, stdout};
use serde_json::Value;

/// The sample transcript, saved in the sandbox's home.
fn sample(sandbox: &Sandbox) -> PathBuf {
    let path = sandbox.home().join("sample.jsonl");
    std::fs::write(&path, fixture("transcript.jsonl")).unwrap();
    path
}

/// Puts the sample transcript where Claude Code keeps the transcripts of `project`.
fn install_transcript(sandbox: &Sandbox, project: &Path, session: &str) -> PathBuf {
    let encoded: String = project
        .canonicalize()
        .unwrap()
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let dir = sandbox.claude_dir().join("projects").join(encoded);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{session}.jsonl"));
    std::fs::write(&path, fixture("transcript.jsonl")).unwrap();
    path
}

#[test]
fn text_report_of_the_sample_transcript() {
    let sandbox = Sandbox::new();
    let path = sample(&sandbox);
    let output = sandbox.run(&["report", "--transcript", path.to_str().unwrap()], b"");
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.starts_with(&format!("Session {SESSION}\n")), "{text}");
    for needle in [
        "model        claude-opus-4-5-20251101",
        "144,012 tokens (72.0 % of 200,000, WARNING)",
        "Compactions: 1",
        "1. auto 167,400 → 41,800 tokens",
        "claude-opus-4-5-20251101        8     42       16,510     418,140   3,312  438,004",
        "subagents                     1     10       30,000     150,000     900  180,910",
        "▁▁▁▂▂▇▂▂▅▆",
        "Largest tool results",
        "/home/dev/shop-api/src/routes/orders.ts",
        "npm test -- limiter",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    assert!(!text.contains('\x1b'), "no colour when stdout is not a terminal");
    assert!(stderr(&output).is_empty());
}

#[test]
fn json_report_has_stable_fields() {
    let sandbox = Sandbox::new();
    let path = sample(&sandbox);
    let output = sandbox.run(&["report", "--json", "--transcript", path.to_str().unwrap()], b"");
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_slice(&output.stdout).expect("one JSON object");
    assert_eq!(report["format"], "baton-report/1");
    assert_eq!(report["model"], "claude-opus-4-5-20251101");
    assert_eq!(report["window_tokens"], 200_000);
    assert_eq!(report["context"]["tokens"], 144_012);
    assert_eq!(report["context"]["percent_of_window"], 72.0);
    assert_eq!(report["context"]["level"], "warning");
    assert_eq!(report["thresholds"]["warning_tokens"], 130_000);
    assert_eq!(report["thresholds"]["critical_tokens"], 150_000);
    let opus = &report["tokens"]["models"][0];
    assert_eq!(opus["model"], "claude-opus-4-5-20251101");
    for (key, value) in
        [("input", 42), ("cache_creation", 16_510), ("cache_read", 418_140), ("output", 3_312)]
    {
        assert_eq!(opus["main"][key], value, "{key}");
    }
    assert_eq!(opus["main"]["replies"], 8);
    assert_eq!(opus["sidechain"]["cache_read"], 150_000);
    assert_eq!(report["tokens"]["total"]["total"], 618_914);
    assert_eq!(report["compactions"][0]["pre_tokens"], 167_400);
    assert_eq!(report["compactions"][0]["post_tokens"], 41_800);
    assert_eq!(report["compactions"][0]["trigger"], "auto");
    assert_eq!(report["compactions"][0]["after_turn"], 5);
    assert_eq!(report["timeline"].as_array().unwrap().len(), 8);
    assert_eq!(report["timeline"][7]["tokens"], 144_012);
    assert_eq!(report["largest_tool_results"][0]["tool"], "Edit");
    assert_eq!(report["read"]["api_errors"], 1);
}

/// Checks that tags open and close in order and attribute quotes pair up; returns the
/// start tags with their attributes.
fn parse_tags(svg: &str) -> Vec<String> {
    let mut stack: Vec<String> = Vec::new();
    let mut tags = Vec::new();
    let mut rest = svg;
    while let Some(open) = rest.find('<') {
        let after = &rest[open + 1..];
        let close = after.find('>').expect("an unclosed tag");
        let tag = &after[..close];
        assert_eq!(tag.matches('"').count() % 2, 0, "unbalanced quotes in <{tag}>");
        assert!(!tag.contains('<'), "a `<` inside <{tag}>");
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name.trim()), "mismatched </{name}>");
        } else {
            let name = tag.split_whitespace().next().unwrap_or("").trim_end_matches('/').to_string();
            if !tag.ends_with('/') {
                stack.push(name);
            }
            tags.push(tag.to_string());
        }
        rest = &after[close + 1..];
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
    tags
}

#[test]
fn svg_chart_has_thresholds_and_the_compaction() {
    let sandbox = Sandbox::new();
    let path = sample(&sandbox);
    let chart = sandbox.dir.path().join("chart.svg");
    let output = sandbox
        .run(&["report", "--transcript", path.to_str().unwrap(), "--svg", chart.to_str().unwrap()], b"");
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains(&format!("Chart written to {}", chart.display())));
    let svg = std::fs::read_to_string(&chart).unwrap();
    let tags = parse_tags(&svg);
    assert!(tags[0].starts_with("svg xmlns=\"http://www.w3.org/2000/svg\""), "{}", tags[0]);
    let with_class = |class: &str| tags.iter().filter(|t| t.contains(&format!("class=\"{class}\""))).count();
    assert_eq!(with_class("threshold warning"), 1);
    assert_eq!(with_class("threshold critical"), 1);
    assert_eq!(with_class("compaction"), 1);
    assert_eq!(with_class("context-line"), 1);
    assert!(svg.contains("auto 167,400 → 41,800"));
    assert!(svg.contains("<title>"));
    for forbidden in ["<script", "href=", "<image", "@import", "url("] {
        assert!(!svg.contains(forbidden), "{forbidden}");
    }

    // The JSON report can write the chart too.
    let json_chart = sandbox.dir.path().join("chart2.svg");
    let output = sandbox.run(
        &["report", "--json", "--transcript", path.to_str().unwrap(), "--svg", json_chart.to_str().unwrap()],
        b"",
    );
    assert!(output.status.success());
    serde_json::from_slice::<Value>(&output.stdout).expect("stdout stays one JSON object");
    assert_eq!(std::fs::read_to_string(&json_chart).unwrap(), svg);
}

#[test]
fn a_missing_or_unreadable_transcript_is_a_clear_error() {
    let sandbox = Sandbox::new();
    let missing = sandbox.home().join("nope.jsonl");
    let output = sandbox.run(&["report", "--transcript", missing.to_str().unwrap()], b"");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stderr(&output), format!("baton report: no transcript at {}\n", missing.display()));
    assert!(stdout(&output).is_empty());

    let folder = sandbox.home();
    let output = sandbox.run(&["report", "--transcript", folder.to_str().unwrap()], b"");
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("cannot read"), "{}", stderr(&output));
    assert!(stderr(&output).contains("not a regular file"), "{}", stderr(&output));
}

#[test]
fn session_lookup() {
    let sandbox = Sandbox::new();
    let elsewhere = sandbox.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let installed = install_transcript(&sandbox, &elsewhere, SESSION);
    let output = sandbox.run(&["report", "--json", "--session", SESSION], b"");
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["session_id"], SESSION);
    assert_eq!(report["transcript"], installed.to_string_lossy().as_ref());

    // The 8 characters the brief and the notices show are enough.
    let output = sandbox.run(&["report", "--json", "--session", &SESSION[..8]], b"");
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["transcript"], installed.to_string_lossy().as_ref());

    let output = sandbox.run(&["report", "--session", "0000-unknown"], b"");
    assert_eq!(output.status.code(), Some(1));
    let expected = sandbox.claude_dir().join("projects/*/0000-unknown.jsonl");
    assert!(stderr(&output).contains(&expected.display().to_string()), "{}", stderr(&output));

    let output = sandbox.run(&["report", "--session", "../etc"], b"");
    assert_eq!(output.status.code(), Some(2), "a bad id is a usage error");
    let output = sandbox.run(&["report", "--session", SESSION, "--transcript", "x.jsonl"], b"");
    assert_eq!(output.status.code(), Some(2), "--session and --transcript exclude each other");
}

#[test]
fn the_newest_transcript_of_the_current_project_by_default() {
    let sandbox = Sandbox::new();
    let output = sandbox.run(&["report"], b"");
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(message.contains("no transcript found for"), "{message}");
    assert!(message.contains(&sandbox.claude_dir().join("projects").display().to_string()), "{message}");
    assert!(message.contains("--transcript PATH or --session ID"), "{message}");

    let older = install_transcript(&sandbox, &sandbox.project(), "older-session");
    let old_time = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options().write(true).open(&older).unwrap().set_modified(old_time).unwrap();
    install_transcript(&sandbox, &sandbox.project(), "newer-session");
    let output = sandbox.run(&["report", "--json"], b"");
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(report["transcript"].as_str().unwrap().ends_with("/newer-session.jsonl"), "{report}");
    assert_eq!(report["session_id"], SESSION, "the id the transcript records");

    let project = sandbox.project();
    let output = sandbox.run(&["report", "--json", "--cwd", project.to_str().unwrap()], b"");
    assert!(output.status.success(), "{}", stderr(&output));
}

#[test]
fn the_session_of_the_pending_handoff_before_the_newest() {
    let sandbox = Sandbox::new();
    let paused = install_transcript(&sandbox, &sandbox.project(), "paused-session");
    let old_time = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options().write(true).open(&paused).unwrap().set_modified(old_time).unwrap();
    install_transcript(&sandbox, &sandbox.project(), "later-session");
    let planning = sandbox.project().join(".planning");
    std::fs::create_dir_all(&planning).unwrap();
    std::fs::write(
        planning.join("HANDOFF.json"),
        serde_json::json!({"version": "1.0", "status": "paused", "timestamp": "2026-12-01T08:00:00Z",
            "baton": {"session_id": "paused-session"}})
        .to_string(),
    )
    .unwrap();
    let output = sandbox.run(&["report", "--json"], b"");
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(report["transcript"].as_str().unwrap().ends_with("/paused-session.jsonl"), "{report}");
    // Once the handoff is picked up (no longer paused), the newest again.
    std::fs::write(
        planning.join("HANDOFF.json"),
        serde_json::json!({"version": "1.0", "status": "resumed", "baton": {"session_id": "paused-session"}})
            .to_string(),
    )
    .unwrap();
    let report: Value = serde_json::from_slice(&sandbox.run(&["report", "--json"], b"").stdout).unwrap();
    assert!(report["transcript"].as_str().unwrap().ends_with("/later-session.jsonl"), "{report}");
}

#[test]
fn help_reads_well() {
    let sandbox = Sandbox::new();
    let output = sandbox.run(&["report", "--help"], b"");
    assert!(output.status.success());
    let help = stdout(&output);
    for needle in [
        "--session <ID>",
        "--transcript <PATH>",
        "--json",
        "--svg <FILE>",
        "pending handoff",
        "newest transcript",
    ] {
        assert!(help.contains(needle), "missing {needle} in\n{help}");
    }
}

/// The `--json` report of `transcript`.
fn json_report(sandbox: &Sandbox, transcript: &Path) -> Value {
    let output = sandbox.run(&["report", "--json", "--transcript", transcript.to_str().unwrap()], b"");
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_str(&stdout(&output)).unwrap()
}

/// What the hook tells the agent after a tool call in the session of `transcript`.
fn hook_on(sandbox: &Sandbox, transcript: &Path) -> Option<String> {
    let mut event = sandbox.post_tool_use(SESSION);
    event["transcript_path"] = serde_json::json!(transcript);
    sandbox.hook_told(&event)
}

#[test]
fn the_report_shows_the_window_and_level_the_hook_uses() {
    // `models.<id>.window` sizes the session for the hook: 144,012 of 400,000 is normal.
    let sandbox = Sandbox::new();
    let path = sample(&sandbox);
    common::write(&sandbox.user_config(), r#"{"models": {"claude-opus-4-5-20251101": {"window": 400000}}}"#);
    let report = json_report(&sandbox, &path);
    assert_eq!(report["window_tokens"], 400_000, "{report}");
    assert_eq!(report["context"]["level"], "normal", "{report}");
    assert_eq!(hook_on(&sandbox, &path), None, "the hook sees the same 400k window");

    // Headroom thresholds decide the level: 22,988 tokens before compaction is CRITICAL.
    let sandbox = Sandbox::new();
    let path = sample(&sandbox);
    common::write(
        &sandbox.user_config(),
        r#"{"warn_headroom_tokens": 60000, "critical_headroom_tokens": 25000}"#,
    );
    let report = json_report(&sandbox, &path);
    assert_eq!(report["window_tokens"], 200_000, "{report}");
    assert_eq!(report["context"]["level"], "critical", "{report}");
    let told = hook_on(&sandbox, &path).expect("the hook warns");
    assert!(told.starts_with("CONTEXT CRITICAL:"), "{told}");

    // A window the status line gave for the model (windows.json) is the hook's too.
    let sandbox = Sandbox::new();
    let path = sample(&sandbox);
    common::write(
        &sandbox.state_dir().join("windows.json"),
        r#"{"version": 1, "models": {"claude-opus-4-5-20251101": 1000000}}"#,
    );
    let report = json_report(&sandbox, &path);
    assert_eq!(report["window_tokens"], 1_000_000, "{report}");
    assert_eq!(report["context"]["level"], "normal", "{report}");
    assert_eq!(hook_on(&sandbox, &path), None, "the hook sees the same 1M window");
}

// `baton status`: the figure, its source, the level and the pending handoff, by the
// session of the folder or by id prefix.

fn status_json(sandbox: &Sandbox, args: &[&str]) -> Value {
    let mut all = vec!["status", "--json"];
    all.extend_from_slice(args);
    let output = sandbox.run(&all, b"");
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_str(&stdout(&output)).unwrap()
}

#[test]
fn status_reads_the_bridge_at_each_level() {
    let sandbox = Sandbox::new();
    install_transcript(&sandbox, &sandbox.project(), SESSION);
    for (remaining, level) in [(60.0, "normal"), (30.0, "warning"), (20.0, "critical")] {
        sandbox.write_bridge(SESSION, remaining, 3);
        let json = status_json(&sandbox, &[]);
        assert_eq!(json["version"], 1);
        assert_eq!(json["session_id"], SESSION);
        assert_eq!(json["level"], level, "{json}");
        assert_eq!(json["figure"]["source"], "bridge", "{json}");
        assert_eq!(json["figure"]["used_pct"], (100.0 - remaining) as i64);
        assert!(json["figure"]["age_seconds"].as_i64().unwrap() >= 3, "{json}");
        assert_eq!(json["handoffs"], serde_json::json!([]));
    }
    let text = stdout(&sandbox.run(&["status"], b""));
    assert!(text.contains("Level: CRITICAL"), "{text}");
    assert!(text.contains("80% used, 20% left"), "{text}");
}

#[test]
fn status_without_a_bridge_reads_the_transcript() {
    let sandbox = Sandbox::new();
    install_transcript(&sandbox, &sandbox.project(), SESSION);
    // A stale bridge says nothing.
    sandbox.write_bridge(SESSION, 90.0, 3600);
    let json = status_json(&sandbox, &[]);
    assert_eq!(json["figure"]["source"], "transcript", "{json}");
    assert_eq!(json["figure"]["used_tokens"], 144_012);
    assert_eq!(json["level"], "warning");
    assert_eq!(json["window"]["tokens"], 200_000);
    assert!(json["headroom"]["tokens"].as_u64().unwrap() > 0, "{json}");
}

#[test]
fn status_takes_an_id_prefix_and_names_an_unknown_session() {
    let sandbox = Sandbox::new();
    sandbox.write_bridge(SESSION, 30.0, 1);
    let json = status_json(&sandbox, &["--session", &SESSION[..8]]);
    assert_eq!(json["session_id"], SESSION);
    assert_eq!(json["level"], "warning");
    assert_eq!(json["transcript"], Value::Null);
    let output = sandbox.run(&["status", "--session", "zzzzzzzz"], b"");
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("unknown session zzzzzzzz"), "{}", stderr(&output));
    let output = sandbox.run(&["status", "--session", "../x"], b"");
    assert_eq!(output.status.code(), Some(2));
    // No session in this folder at all: said, not guessed.
    let empty = Sandbox::new();
    let output = empty.run(&["status"], b"");
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("pass --session"), "{}", stderr(&output));
}

#[test]
fn status_lists_the_pending_handoff() {
    let sandbox = Sandbox::new();
    install_transcript(&sandbox, &sandbox.project(), SESSION);
    sandbox.write_bridge(SESSION, 20.0, 1);
    let planning = sandbox.project().join(".planning");
    std::fs::create_dir_all(&planning).unwrap();
    std::fs::write(
        planning.join("HANDOFF.json"),
        serde_json::json!({"version": "1.0", "status": "paused", "timestamp": "2026-12-01T08:00:00Z",
            "next_action": "finish the limiter", "baton": {"session_id": SESSION}})
        .to_string(),
    )
    .unwrap();
    // Written by hand, not by baton here: its place alone (issue 32).
    let json = status_json(&sandbox, &[]);
    let handoff = &json["handoffs"][0];
    assert_eq!(handoff["trusted"], false, "{json}");
    assert_eq!(handoff["status"], Value::Null, "{json}");
    assert_eq!(handoff["next_action"], Value::Null, "{json}");
    // Trusted (the user trusts every handoff here), its fields are read.
    let output = sandbox.run_with(&["status", "--json"], b"", &[("BATON_RESUME_TRUST_FOREIGN", "1")]);
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    let handoff = &json["handoffs"][0];
    assert_eq!(handoff["status"], "paused", "{json}");
    assert_eq!(handoff["this_session"], true, "{json}");
    assert_eq!(handoff["next_action"], "finish the limiter");
}

#[test]
fn each_automatic_compaction_is_set_against_claude_codes_formula() {
    let sandbox = Sandbox::new();
    let transcript = sample(&sandbox);
    let path = transcript.to_string_lossy().into_owned();
    let report: Value =
        serde_json::from_slice(&sandbox.run(&["report", "--json", "--transcript", &path], b"").stdout)
            .unwrap();
    let compaction = &report["compactions"][0];
    // 200,000 − 20,000 reserved for the reply − 13,000 = 167,000; the sample compacted at 167,400.
    assert_eq!(compaction["predicted_at"], 167_000, "{compaction}");
    assert_eq!(compaction["prediction_error_pct"], 0.2, "{compaction}");
    // Claude Code's own variable moves the prediction as it moves the compaction.
    let output = sandbox.run_with(
        &["report", "--json", "--transcript", &path],
        b"",
        &[("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "150000")],
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["compactions"][0]["predicted_at"], 117_000, "{report}");
}
