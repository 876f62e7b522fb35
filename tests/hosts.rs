//! The true figure on each real host, black-box: Claude Code's default 1M model, a bridge
//! one reply behind the transcript, failed tool calls, zeros after /compact, an assumed
//! window, the session's end; Codex's rollout; Gemini CLI's chat recording and its
//! every-turn PreCompress. Events and records are the ones the real hosts sent
//! (tests/fixtures/real/), pointed at the sandbox.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{Sandbox, TestRepo, envelope_event, fixture, fixture_json, read_json, told};
use serde_json::{Value, json};

const CLAUDE_SESSION: &str = "b766a0e1-f5f8-4318-884c-1cffbaf17511";

/// One main-chain reply of `model` with `tokens` in its context, issuing `tool_use_id`.
fn reply(id: &str, model: &str, tokens: u64, tool_use_id: &str) -> String {
    json!({"type": "assistant", "isSidechain": false, "timestamp": chrono_now(),
        "message": {"id": id, "model": model, "content": [{"type": "tool_use", "id": tool_use_id, "name": "Bash", "input": {"command": "echo"}}],
            "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": tokens - 10, "output_tokens": 5}}})
    .to_string()
}

fn tool_result(tool_use_id: &str, bytes: usize) -> String {
    json!({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": tool_use_id, "content": "x".repeat(bytes)}]}})
        .to_string()
}

fn chrono_now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn write_lines(path: &Path, lines: &[String]) {
    std::fs::write(path, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
}

fn append(path: &Path, line: &str) {
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    writeln!(file, "{line}").unwrap();
}

/// The real PostToolUse (Bash) event, in the sandbox, on `transcript`.
fn claude_event(sandbox: &Sandbox, name: &str, transcript: &Path) -> Value {
    let mut event = fixture_json(&format!("real/claude/{name}"));
    event["cwd"] = json!(sandbox.project());
    event["transcript_path"] = json!(transcript);
    event
}

fn handoff_json(sandbox: &Sandbox) -> PathBuf {
    sandbox.project().join(".planning").join("HANDOFF.json")
}

#[test]
fn the_default_1m_model_is_not_warned_at_13_percent_nor_handed_off_at_15() {
    let sandbox = Sandbox::new();
    let transcript = sandbox.home().join("t.jsonl");
    write_lines(&transcript, &[reply("m1", "claude-opus-5-5", 132_000, "toolu_mock_01_33539")]);
    let event = claude_event(&sandbox, "PostToolUse-Bash.json", &transcript);
    assert_eq!(told(&sandbox.hook(&event)), None, "13% of 1,000,000 is no warning");
    write_lines(&transcript, &[reply("m2", "claude-opus-5-5", 152_000, "toolu_mock_01_33539")]);
    assert_eq!(told(&sandbox.hook(&event)), None);
    assert!(!handoff_json(&sandbox).exists(), "no CRITICAL handoff at 15%");
}

#[test]
fn a_window_the_statusline_gave_is_remembered_for_the_hook() {
    let sandbox = Sandbox::new();
    // A model id baton's table does not know, with a 1M window in the payload.
    let mut payload = fixture_json("real/claude/statusline.json");
    payload["model"]["id"] = json!("claude-next-9");
    payload["context_window"]["context_window_size"] = json!(1_000_000);
    payload["session_id"] = json!("11111111-2222-4333-8444-555555555555");
    assert!(sandbox.run(&["statusline"], payload.to_string().as_bytes()).status.success());
    let remembered = read_json(&sandbox.state_dir().join("windows.json"));
    assert_eq!(remembered, json!({"version": 1, "models": {"claude-next-9": 1_000_000}}));
    // A `claude -p` session of that model (no statusline): 700k of 1M is 70%, not 350%.
    let transcript = sandbox.home().join("t.jsonl");
    write_lines(&transcript, &[reply("m1", "claude-next-9", 700_000, "toolu_mock_01_33539")]);
    let text = told(&sandbox.hook(&claude_event(&sandbox, "PostToolUse-Bash.json", &transcript))).unwrap();
    assert!(text.starts_with("CONTEXT WARNING: Usage at 70%. Remaining: 30%."), "{text}");
    assert!(!text.contains("assumed"), "{text}");
    let config = sandbox.run(&["config"], b"");
    let shown = String::from_utf8_lossy(&config.stdout);
    assert!(shown.contains("claude-next-9") && shown.contains("remembered from the status line"), "{shown}");
}

#[test]
fn a_windows_file_from_a_newer_baton_is_left_alone_and_reported() {
    let sandbox = Sandbox::new();
    let windows = sandbox.state_dir().join("windows.json");
    common::write(&windows, r#"{"version": 99, "models": {"claude-next-9": 1000000}}"#);
    let before = std::fs::read(&windows).unwrap();
    let mut payload = fixture_json("real/claude/statusline.json");
    payload["model"]["id"] = json!("claude-next-9");
    payload["context_window"]["context_window_size"] = json!(1_000_000);
    payload["session_id"] = json!("11111111-2222-4333-8444-555555555555");
    assert!(sandbox.run(&["statusline"], payload.to_string().as_bytes()).status.success());
    payload["context_window"]["context_window_size"] = json!(200_000);
    assert!(sandbox.run(&["statusline"], payload.to_string().as_bytes()).status.success());
    assert_eq!(std::fs::read(&windows).unwrap(), before, "never rewritten");
    let doctor = sandbox.run(&["doctor"], b"");
    let shown = String::from_utf8_lossy(&doctor.stdout);
    assert!(shown.contains("windows.json was written by a newer baton"), "{shown}");
}

/// A session whose last reply (tool call `toolu_a`) is at 60 % of a 200k window, its tool
/// result written, and the statusline rendered after both (the bridge records where the
/// transcript ended).
fn rendered_at_60_percent() -> (Sandbox, PathBuf) {
    let sandbox = Sandbox::new();
    let transcript = sandbox.home().join("t.jsonl");
    let model = "claude-sonnet-4-5-20250929";
    write_lines(&transcript, &[reply("m1", model, 120_000, "toolu_a"), tool_result("toolu_a", 100)]);
    let mut payload = fixture_json("real/claude/statusline.json");
    payload["session_id"] = json!(CLAUDE_SESSION);
    payload["transcript_path"] = json!(transcript);
    assert!(sandbox.run(&["statusline"], payload.to_string().as_bytes()).status.success());
    (sandbox, transcript)
}

#[test]
fn a_bridge_one_reply_behind_the_transcript_does_not_hide_the_crossing() {
    let (sandbox, transcript) = rendered_at_60_percent();
    let model = "claude-sonnet-4-5-20250929";
    let bridge = read_json(&sandbox.bridge_path(CLAUDE_SESSION));
    assert_eq!(bridge["used_pct"], 60);
    assert_eq!(bridge["transcript_offset"], std::fs::metadata(&transcript).unwrap().len());
    let mut event = claude_event(&sandbox, "PostToolUse-Bash.json", &transcript);
    event["tool_use_id"] = json!("toolu_a");
    assert_eq!(told(&sandbox.hook(&event)), None, "60 %: nothing to say");
    // A reply is written, the statusline is not redrawn, a fast tool call follows.
    append(&transcript, &reply("m2", model, 140_000, "toolu_b"));
    event["tool_use_id"] = json!("toolu_b");
    let text = told(&sandbox.hook(&event)).expect("the crossing call is warned");
    assert!(text.starts_with("CONTEXT WARNING: Usage at 70%. Remaining: 30%."), "{text}");
    assert!(text.contains("newer than the status line's"), "{text}");
}

#[test]
fn a_fresh_bridge_waits_for_the_reply_still_in_the_hosts_write_queue() {
    let (sandbox, transcript) = rendered_at_60_percent();
    let mut event = claude_event(&sandbox, "PostToolUse-Bash.json", &transcript);
    // A tool call whose reply never comes: the hook waits its whole bound for it (a
    // lower bound, the yardstick below), then says nothing at 60 %.
    event["tool_use_id"] = json!("toolu_never");
    let start = Instant::now();
    assert_eq!(told(&sandbox.hook(&event)), None, "60 %: nothing to say");
    let waited = start.elapsed();
    assert!(waited >= Duration::from_millis(200), "{waited:?}");
    // The tool call the statusline already counted: no wait, nothing to say. Compared
    // with the call above rather than a clock (the fastest of three, so one slow start
    // on a busy machine does not count).
    event["tool_use_id"] = json!("toolu_a");
    let mut fastest = Duration::MAX;
    for _ in 0..3 {
        let start = Instant::now();
        assert_eq!(told(&sandbox.hook(&event)), None, "60 %: nothing to say");
        fastest = fastest.min(start.elapsed());
    }
    assert!(fastest < waited, "no wait: {fastest:?}, a wait: {waited:?}");
    // The reply that issued this call reaches the file 60 ms after the hook started
    // (Claude Code flushes its transcript every 100 ms): the hook waits for it.
    event["tool_use_id"] = json!("toolu_b");
    let late = transcript.clone();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(60));
        append(&late, &reply("m2", "claude-sonnet-4-5-20250929", 140_000, "toolu_b"));
    });
    let text = told(&sandbox.hook(&event)).expect("the crossing call is warned");
    writer.join().unwrap();
    assert!(text.starts_with("CONTEXT WARNING: Usage at 70%. Remaining: 30%."), "{text}");
}

#[test]
fn a_failed_tool_call_is_warned_with_its_own_event_name() {
    let sandbox = Sandbox::new();
    let transcript = sandbox.home().join("t.jsonl");
    write_lines(&transcript, &[reply("m1", "claude-sonnet-4-5-20250929", 140_000, "toolu_mock_fail_49125")]);
    let event = claude_event(&sandbox, "PostToolUseFailure.json", &transcript);
    let output = sandbox.hook(&event);
    let text = told(&output).expect("warned");
    assert!(text.starts_with("CONTEXT WARNING: Usage at 70%."), "{text}");
    assert_eq!(envelope_event(&output).as_deref(), Some("PostToolUseFailure"));
}

#[test]
fn zeros_after_compact_are_no_figure_and_leave_the_bridge_alone() {
    let sandbox = Sandbox::plain();
    let session = "61889f96-ee4e-418c-9a50-870b22d48bc9";
    sandbox.write_bridge(session, 40.0, 0);
    let before = std::fs::read(sandbox.bridge_path(session)).unwrap();
    let mut payload = fixture_json("real/claude/statusline-after-compact.json");
    payload["cwd"] = json!(sandbox.project());
    payload["workspace"] = json!({"current_dir": sandbox.project(), "project_dir": sandbox.project()});
    let output = sandbox.run(&["statusline"], payload.to_string().as_bytes());
    let line = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(line.contains("--") && !line.contains("0%"), "{line}");
    assert_eq!(std::fs::read(sandbox.bridge_path(session)).unwrap(), before, "bridge untouched");
}

#[test]
fn an_assumed_window_is_said_and_takes_no_critical_action() {
    let sandbox = Sandbox::new();
    let _repo = TestRepo::init(&sandbox.project(), &[("a.txt", "a")]);
    let transcript = sandbox.home().join("t.jsonl");
    write_lines(&transcript, &[reply("m1", "mock-model", 160_000, "toolu_mock_01_33539")]);
    let text = told(&sandbox.hook(&claude_event(&sandbox, "PostToolUse-Bash.json", &transcript))).unwrap();
    assert!(text.starts_with("CONTEXT CRITICAL: Usage at 80%."), "{text}");
    assert!(text.contains("an assumed 200k-token window"), "{text}");
    assert!(text.contains("has not written a handoff"), "{text}");
    assert!(!handoff_json(&sandbox).exists());
    assert!(_repo.refs().iter().all(|(name, _)| !name.starts_with("refs/baton")), "no checkpoint");
    // Configured, the same window is a fact: the handoff is written.
    common::write(&sandbox.user_config(), r#"{"models": {"mock-model": {"window": 200000}}}"#);
    let state = sandbox.state_path(CLAUDE_SESSION);
    let _ = std::fs::remove_file(state);
    let text = told(&sandbox.hook(&claude_event(&sandbox, "PostToolUse-Bash.json", &transcript))).unwrap();
    assert!(!text.contains("assumed"), "{text}");
    assert!(handoff_json(&sandbox).exists(), "{text}");
}

#[test]
fn claude_p_waits_for_the_reply_or_marks_an_estimate() {
    let sandbox = Sandbox::new();
    let transcript = sandbox.home().join("t.jsonl");
    let model = "claude-sonnet-4-5-20250929";
    // The last reply written is at 60 %; its tool result follows; the reply that issued
    // this tool call is not written yet.
    write_lines(&transcript, &[reply("m1", model, 120_000, "toolu_a"), tool_result("toolu_a", 40_000)]);
    let mut event = claude_event(&sandbox, "PostToolUse-Bash.json", &transcript);
    event["tool_use_id"] = json!("toolu_b");
    // It never comes: the figure is projected (120,000 + 40,000 / 4 = 130,000: 65 %).
    let start = Instant::now();
    let text = told(&sandbox.hook(&event)).expect("the projection crosses 65 %");
    assert!(start.elapsed() >= Duration::from_millis(200), "{:?}", start.elapsed());
    assert!(text.starts_with("CONTEXT WARNING: Usage at 65% (estimated)."), "{text}");
    assert!(text.contains("This figure is an estimate"), "{text}");

    // It comes 60 ms after the hook started: the hook waits for it and reads it.
    let other = "22222222-2222-4333-8444-555555555555";
    let transcript = sandbox.home().join("t2.jsonl");
    write_lines(&transcript, &[reply("m1", model, 120_000, "toolu_a"), tool_result("toolu_a", 100)]);
    let mut event = claude_event(&sandbox, "PostToolUse-Bash.json", &transcript);
    event["session_id"] = json!(other);
    event["tool_use_id"] = json!("toolu_b");
    let late = transcript.clone();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(60));
        append(&late, &reply("m2", "claude-sonnet-4-5-20250929", 142_000, "toolu_b"));
    });
    let text = told(&sandbox.hook(&event)).expect("the reply that came in time crosses 65 %");
    writer.join().unwrap();
    assert!(text.starts_with("CONTEXT WARNING: Usage at 71%. Remaining: 29%."), "{text}");
    assert!(!text.contains("estimate"), "{text}");
}

#[test]
fn session_end_marks_the_session_ended() {
    let sandbox = Sandbox::new();
    let event = json!({"session_id": CLAUDE_SESSION, "cwd": sandbox.project(), "hook_event_name": "SessionEnd", "reason": "other"});
    let output = sandbox.hook(&event);
    assert!(output.status.success() && output.stdout.is_empty());
    let state = read_json(&sandbox.state_path(CLAUDE_SESSION));
    assert!(state["endedAt"].as_i64().is_some(), "{state}");
}

fn codex_event(sandbox: &Sandbox, rollout: &Path) -> Value {
    let mut event = fixture_json("real/codex/PostToolUse.json");
    event["cwd"] = json!(sandbox.project());
    event["transcript_path"] = json!(rollout);
    event
}

#[test]
fn codex_is_warned_from_its_rollout() {
    let sandbox = Sandbox::new();
    let rollout = sandbox.home().join("rollout.jsonl");
    std::fs::write(&rollout, fixture("real/codex/rollout-at-PostToolUse-3.jsonl")).unwrap();
    let output = sandbox.hook(&codex_event(&sandbox, &rollout));
    let text = told(&output).expect("135,000 of 190,000 warns");
    // Codex compacts at 90 % of the raw window: 190,000 usable is 200,000 raw, so 180,000.
    assert!(
        text.starts_with("CONTEXT WARNING: Usage at 71%. Remaining: 28.9%. About 45k tokens before auto-compaction. Context"),
        "{text}"
    );
    assert!(text.contains("Codex's rollout"), "{text}");
    assert_eq!(envelope_event(&output).as_deref(), Some("PostToolUse"));
}

#[test]
fn codex_headroom_runs_to_its_own_auto_compaction_limit() {
    let sandbox = Sandbox::new();
    let codex_home = sandbox.root().join("codex-home");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(codex_home.join("config.toml"), "model_auto_compact_token_limit = 170000\n").unwrap();
    let rollout = sandbox.home().join("rollout.jsonl");
    std::fs::write(&rollout, fixture("real/codex/rollout-at-PostToolUse-3.jsonl")).unwrap();
    let event = codex_event(&sandbox, &rollout);
    let output = sandbox.run_with(
        &["hook"],
        event.to_string().as_bytes(),
        &[("CODEX_HOME", codex_home.to_str().unwrap())],
    );
    let text = told(&output).unwrap();
    assert!(text.contains("About 35k tokens before auto-compaction."), "{text}");
}

fn gemini_recording(sandbox: &Sandbox, tokens: u64) -> PathBuf {
    let path = sandbox.home().join("chat.jsonl");
    let text = String::from_utf8(fixture("real/gemini/chat-at-AfterTool-1.jsonl")).unwrap();
    std::fs::write(&path, text.replace("\"input\":100000", &format!("\"input\":{tokens}"))).unwrap();
    path
}

fn gemini_event(sandbox: &Sandbox, name: &str, recording: &Path) -> Value {
    let mut event = fixture_json(&format!("real/gemini/{name}"));
    event["cwd"] = json!(sandbox.project());
    event["transcript_path"] = json!(recording);
    event
}

#[test]
fn gemini_is_read_from_its_chat_recording() {
    let sandbox = Sandbox::new();
    let recording = gemini_recording(&sandbox, 100_000);
    assert_eq!(told(&sandbox.hook(&gemini_event(&sandbox, "AfterTool.json", &recording))), None, "9.5 %");
    let recording = gemini_recording(&sandbox, 700_000);
    common::write(
        &sandbox.project().join(".gemini").join("settings.json"),
        r#"{"model": {"compressionThreshold": 0.9}}"#,
    );
    let output = sandbox.hook(&gemini_event(&sandbox, "AfterTool.json", &recording));
    let text = told(&output).expect("700,000 of 1,048,576 warns");
    assert!(text.starts_with("CONTEXT WARNING: Usage at 67%."), "{text}");
    assert!(text.contains("About 244k tokens before the host compresses the conversation."), "{text}");
    assert!(text.contains("Gemini CLI's chat recording"), "{text}");
    assert_eq!(envelope_event(&output).as_deref(), Some("AfterTool"));
}

/// Gemini CLI's recording is read from where the session's last call stopped: a reply
/// appended after it gives the new figure, a call with nothing new the kept one.
#[test]
fn gemini_recording_is_read_from_the_last_call_on() {
    let sandbox = Sandbox::new();
    common::write(&sandbox.user_config(), r#"{"debounce_calls": 1}"#);
    common::write(
        &sandbox.project().join(".gemini").join("settings.json"),
        r#"{"model": {"compressionThreshold": 0.9}}"#,
    );
    let recording = gemini_recording(&sandbox, 100_000);
    let event = gemini_event(&sandbox, "AfterTool.json", &recording);
    assert_eq!(told(&sandbox.hook(&event)), None, "9.5 %");
    let reply = |tokens: u64| {
        json!({"id": format!("r{tokens}"), "timestamp": "2026-11-30T16:18:09.824Z", "type": "gemini", "content": "",
            "thoughts": [], "tokens": {"input": tokens, "output": 20, "cached": 0, "thoughts": 0, "tool": 0, "total": tokens + 20},
            "model": "gemini-2.5-flash"})
    };
    let append = |line: &Value| {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new().append(true).open(&recording).unwrap();
        writeln!(file, "{line}").unwrap();
    };
    append(&reply(700_000));
    let text = told(&sandbox.hook(&event)).expect("700,000 of 1,048,576 warns");
    assert!(text.starts_with("CONTEXT WARNING: Usage at 67%."), "{text}");
    let text = told(&sandbox.hook(&event)).expect("nothing new: the same figure");
    assert!(text.starts_with("CONTEXT WARNING: Usage at 67%."), "{text}");
    append(&json!({"$set": {"lastUpdated": "2026-11-30T16:18:10.000Z"}}));
    append(&reply(720_000));
    let text = told(&sandbox.hook(&event)).expect("720,000 warns");
    assert!(text.starts_with("CONTEXT WARNING: Usage at 69%."), "{text}");
}

#[test]
fn gemini_is_stopped_at_the_next_calls_before_tool_so_every_call_that_ran_keeps_its_output() {
    // Gemini CLI 0.61.0 ends the turn on `continue: false`, but at AfterTool the stop takes
    // the place of the call's output: baton tells the agent at the last grace call and
    // stops it at the next call's BeforeTool, once per turn.
    let sandbox = Sandbox::new();
    let _repo = TestRepo::init(&sandbox.project(), &[("a.txt", "a")]);
    common::write(&sandbox.user_config(), r#"{"models": {"gemini-2.5-flash": {"window": 1048576}}}"#);
    common::write(
        &sandbox.project().join(".gemini").join("settings.json"),
        r#"{"model": {"compressionThreshold": 0.9}}"#,
    );
    let recording = gemini_recording(&sandbox, 800_000);
    let after_tool = gemini_event(&sandbox, "AfterTool.json", &recording);
    let named = |name: &str| {
        let mut e = after_tool.clone();
        e["hook_event_name"] = json!(name);
        e
    };
    let stdout = |e: &Value| String::from_utf8(sandbox.hook(e).stdout).unwrap();
    assert_eq!(stdout(&named("BeforeTool")), "", "nothing to stop yet");
    for call in 0..4 {
        let out = stdout(&after_tool);
        assert!(!out.contains("\"continue\""), "call {call}: the output stays the call's: {out}");
        if call == 3 {
            assert!(out.contains("that was the last tool call") && out.contains("/clear"), "{out}");
        }
    }
    let stop: Value = serde_json::from_str(&stdout(&named("BeforeTool"))).expect("the stop");
    assert_eq!(stop["continue"], false, "{stop}");
    assert!(stop["stopReason"].as_str().is_some_and(|r| r.contains("/clear") && r.contains("HANDOFF.json")));
    assert_eq!(stdout(&named("AfterAgent")), "", "AfterAgent is never answered");
    assert!(sandbox.hook(&named("BeforeAgent")).status.success());
    assert_eq!(stdout(&named("BeforeTool")), "", "the user's next turn runs");
}

#[test]
fn gemini_every_turn_precompress_is_not_a_compaction() {
    let sandbox = Sandbox::new();
    let repo = TestRepo::init(&sandbox.project(), &[("a.txt", "a")]);
    common::write(
        &sandbox.project().join(".gemini").join("settings.json"),
        r#"{"model": {"compressionThreshold": 0.9}}"#,
    );
    let recording = gemini_recording(&sandbox, 700_000);
    let session = "cf62ddc3-a417-4ffd-a702-32fb2f83c3b4";
    let after_tool = gemini_event(&sandbox, "AfterTool.json", &recording);
    assert!(told(&sandbox.hook(&after_tool)).is_some(), "first warning");
    let state = std::fs::read(sandbox.state_path(session)).unwrap();
    let output = sandbox.hook(&gemini_event(&sandbox, "PreCompress-auto-every-turn.json", &recording));
    assert!(output.status.success() && output.stdout.is_empty());
    assert!(!handoff_json(&sandbox).exists(), "no handoff");
    assert!(repo.refs().iter().all(|(name, _)| !name.starts_with("refs/baton")), "no ref");
    assert_eq!(std::fs::read(sandbox.state_path(session)).unwrap(), state, "debounce not reset");
    assert_eq!(told(&sandbox.hook(&after_tool)), None, "still debounced");
    // At the compression point the same event is a compaction.
    let recording = gemini_recording(&sandbox, 950_000);
    let output = sandbox.hook(&gemini_event(&sandbox, "PreCompress-auto-every-turn.json", &recording));
    assert!(output.status.success() && output.stdout.is_empty());
    assert!(handoff_json(&sandbox).exists(), "a real compression refreshes the handoff");
    assert!(read_json(&sandbox.state_path(session))["compactedAt"].as_i64().is_some());
}

#[test]
fn a_gsd_bridge_without_an_offset_is_compared_by_time() {
    let sandbox = Sandbox::new();
    let transcript = sandbox.home().join("t.jsonl");
    let model = "claude-sonnet-4-5-20250929";
    // GSD's statusline wrote 60 % five seconds ago; a reply at 70 % came after it.
    sandbox.write_bridge(CLAUDE_SESSION, 40.0, 5);
    write_lines(&transcript, &[reply("m2", model, 140_000, "toolu_mock_01_33539")]);
    let text = told(&sandbox.hook(&claude_event(&sandbox, "PostToolUse-Bash.json", &transcript))).unwrap();
    assert!(text.starts_with("CONTEXT WARNING: Usage at 70%."), "{text}");
    // A bridge newer than the transcript's last write wins without a read: the
    // transcript is dated two seconds back, the bridge written now.
    let other = "33333333-2222-4333-8444-555555555555";
    let mut event = claude_event(&sandbox, "PostToolUse-Bash.json", &transcript);
    event["session_id"] = json!(other);
    let two_seconds_ago = std::time::SystemTime::now() - Duration::from_secs(2);
    std::fs::File::options().write(true).open(&transcript).unwrap().set_modified(two_seconds_ago).unwrap();
    sandbox.write_bridge(other, 40.0, 0);
    assert_eq!(told(&sandbox.hook(&event)), None);
}

#[test]
fn a_relative_codex_home_is_the_same_place_for_install_and_the_hook() {
    let sandbox = Sandbox::new();
    // Relative to the current folder (the project, where baton runs here), as Codex reads it.
    let codex_home = sandbox.project().join("codex-home");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(codex_home.join("config.toml"), "model_auto_compact_token_limit = 170000\n").unwrap();
    let install =
        sandbox.command(&["install", "--host", "codex"]).env("CODEX_HOME", "codex-home").output().unwrap();
    assert!(install.status.success(), "{}", String::from_utf8_lossy(&install.stderr));
    assert!(codex_home.join("hooks.json").is_file(), "install writes into the relative CODEX_HOME");
    let rollout = sandbox.home().join("rollout.jsonl");
    std::fs::write(&rollout, fixture("real/codex/rollout-at-PostToolUse-3.jsonl")).unwrap();
    let event = codex_event(&sandbox, &rollout);
    let output = sandbox.run_with(&["hook"], event.to_string().as_bytes(), &[("CODEX_HOME", "codex-home")]);
    let text = told(&output).unwrap();
    assert!(
        text.contains("About 35k tokens before auto-compaction."),
        "the hook reads the same config.toml: {text}"
    );
}

#[test]
fn an_assumed_window_never_pauses() {
    // An unknown model with 800k tokens: the tokens prove the context full enough for the
    // CRITICAL handoff, but the window is only assumed: the pause is never armed.
    let sandbox = Sandbox::new();
    let _repo = TestRepo::init(&sandbox.project(), &[("a.txt", "a")]);
    let transcript = sandbox.home().join("t.jsonl");
    write_lines(&transcript, &[reply("m1", "mock-model", 800_000, "toolu_mock_01_33539")]);
    let text = told(&sandbox.hook(&claude_event(&sandbox, "PostToolUse-Bash.json", &transcript))).unwrap();
    assert!(text.starts_with("CONTEXT CRITICAL:"), "{text}");
    assert!(!text.contains("end your turn"), "{text}");
    for i in 0..6 {
        append(
            &transcript,
            &reply(&format!("m{}", i + 2), "mock-model", 800_000 + i * 1000, "toolu_mock_01_33539"),
        );
        let out = sandbox.hook(&claude_event(&sandbox, "PostToolUse-Bash.json", &transcript));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!stdout.contains("\"continue\""), "an assumed window paused: {stdout}");
    }
    let state: Value = read_json(&sandbox.state_path(CLAUDE_SESSION));
    assert!(state.get("pauseArmedAt").is_none(), "{state}");
}

/// Qwen Code's recording with the newest reply at `tokens` (the real 0.15.10 lines).
fn qwen_recording(sandbox: &Sandbox, tokens: u64) -> PathBuf {
    let path = sandbox.home().join("qwen-chat.jsonl");
    let text = String::from_utf8(fixture("real/qwen/transcript-with-compress.jsonl")).unwrap();
    // Up to the /compress: the last line is the reply at 10,024.
    let cut = text.find("\"subtype\":\"chat_compression\"").unwrap();
    let head = &text[..text[..cut].rfind('\n').unwrap() + 1];
    std::fs::write(
        &path,
        head.replace("\"promptTokenCount\":10024", &format!("\"promptTokenCount\":{tokens}")),
    )
    .unwrap();
    path
}

fn qwen_event(sandbox: &Sandbox, name: &str, recording: &Path) -> Value {
    let mut event = fixture_json(&format!("real/qwen/{name}"));
    event["cwd"] = json!(sandbox.project());
    event["transcript_path"] = json!(recording);
    event
}

/// The environment Qwen Code gives its hooks: its own mark, and Claude Code's variable too.
fn qwen_hook(sandbox: &Sandbox, event: &Value) -> std::process::Output {
    let project = sandbox.project().display().to_string();
    sandbox.run_with(
        &["hook"],
        event.to_string().as_bytes(),
        &[("QWEN_PROJECT_DIR", project.as_str()), ("CLAUDE_PROJECT_DIR", project.as_str())],
    )
}

#[test]
fn qwen_code_is_read_from_its_chat_recording_with_its_window() {
    let sandbox = Sandbox::new();
    // 160,000 tokens: past CRITICAL on a 200k window, 16 % of qwen3-coder-plus's 1M.
    let recording = qwen_recording(&sandbox, 160_000);
    assert_eq!(told(&qwen_hook(&sandbox, &qwen_event(&sandbox, "PostToolUse.json", &recording))), None);
    let recording = qwen_recording(&sandbox, 660_000);
    let output = qwen_hook(&sandbox, &qwen_event(&sandbox, "PostToolUse.json", &recording));
    let text = told(&output).expect("660,000 of 1,000,000 warns");
    assert!(text.starts_with("CONTEXT WARNING: Usage at 66%."), "{text}");
    // Qwen Code compresses at 0.7 of the window by default.
    assert!(text.contains("About 40k tokens before the host compresses the conversation."), "{text}");
    assert!(text.contains("Qwen Code's chat recording"), "{text}");
    assert_eq!(envelope_event(&output).as_deref(), Some("PostToolUse"));
    // Without Qwen Code's mark the same event is read as Claude Code's (no figure there).
    let plain = sandbox.hook(&qwen_event(&sandbox, "PostToolUse.json", &recording));
    assert_eq!(told(&plain), None);
}

#[test]
fn qwen_code_gets_the_brief_with_its_first_prompt_only() {
    let sandbox = Sandbox::new();
    let repo = TestRepo::init(&sandbox.project(), &[("a.txt", "a")]);
    drop(repo);
    let paused = sandbox.run(&["pause", "--checkpoint", "off"], b"");
    assert!(paused.status.success(), "{}", common::stderr(&paused));
    let recording = qwen_recording(&sandbox, 20_000);
    // SessionStart's context is dropped by Qwen Code: nothing is printed or recorded.
    assert_eq!(told(&qwen_hook(&sandbox, &qwen_event(&sandbox, "SessionStart.json", &recording))), None);
    // A continuation's empty prompt is not a prompt.
    let mut empty = qwen_event(&sandbox, "UserPromptSubmit.json", &recording);
    empty["prompt"] = json!("");
    assert_eq!(told(&qwen_hook(&sandbox, &empty)), None);
    let prompt = qwen_event(&sandbox, "UserPromptSubmit.json", &recording);
    let output = qwen_hook(&sandbox, &prompt);
    let text = told(&output).expect("the first prompt carries the brief");
    assert!(text.contains("baton resume brief"), "{text}");
    assert_eq!(envelope_event(&output).as_deref(), Some("UserPromptSubmit"));
    // The same session's next prompt does not get it again.
    assert_eq!(told(&qwen_hook(&sandbox, &prompt)), None);
}

/// GitHub Copilot CLI's event log for the session of the real fixtures, with the newest
/// call at `tokens` (the real 1.0.102 lines; claude-sonnet-4.5, `maxPromptTokens` 168,000).
fn copilot_log(sandbox: &Sandbox, tokens: u64) {
    let session = fixture_json("real/copilot/post-tool-use.json")["session_id"].as_str().unwrap().to_string();
    let dir = sandbox.home().join(".copilot").join("session-state").join(session);
    std::fs::create_dir_all(&dir).unwrap();
    let text = String::from_utf8(fixture("real/copilot/events.jsonl")).unwrap();
    // Cut after that call's record: the log as a PostToolUse of the call in flight sees it.
    let at = text.find("\"inputTokens\":121000").unwrap();
    let end = at + text[at..].find('\n').unwrap() + 1;
    let log = text[..end].replace("\"inputTokens\":121000", &format!("\"inputTokens\":{tokens}"));
    std::fs::write(dir.join("events.jsonl"), log).unwrap();
}

/// What Copilot CLI's envelope tells the model: `additionalContext` at the top level (the
/// only place Copilot CLI reads it), the same text as in `hookSpecificOutput`.
fn copilot_told(output: &std::process::Output) -> Option<String> {
    assert!(output.status.success(), "hook exited {:?}", output.status);
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    if stdout.is_empty() {
        return None;
    }
    let value: Value = serde_json::from_str(&stdout).expect("one JSON value");
    for key in value.as_object().expect("an object").keys() {
        assert!(
            ["hookSpecificOutput", "systemMessage", "additionalContext"].contains(&key.as_str()),
            "{stdout}"
        );
    }
    let top = value["additionalContext"].as_str().expect("top-level additionalContext");
    assert_eq!(value["hookSpecificOutput"]["additionalContext"].as_str(), Some(top), "{stdout}");
    Some(top.to_string())
}

/// The environment Copilot CLI gives its hooks: its own marks, and Claude Code's variable too.
fn copilot_hook(sandbox: &Sandbox, name: &str) -> std::process::Output {
    let mut event = fixture_json(&format!("real/copilot/{name}"));
    event["cwd"] = json!(sandbox.project());
    let project = sandbox.project().display().to_string();
    let hooks = sandbox.home().join(".copilot").join("hooks").display().to_string();
    sandbox.run_with(
        &["hook"],
        event.to_string().as_bytes(),
        &[
            ("COPILOT_PROJECT_DIR", project.as_str()),
            ("COPILOT_HOOK_DIR", hooks.as_str()),
            ("CLAUDE_PROJECT_DIR", project.as_str()),
        ],
    )
}

#[test]
fn copilot_cli_is_read_from_its_event_log_with_its_window() {
    let sandbox = Sandbox::new();
    // 121,000 tokens: 72 % of a 168k window would warn; 60.5 % of 200k would not. Below
    // WARNING on neither: 100,000 is 59.5 % of 168,000.
    copilot_log(&sandbox, 100_000);
    assert_eq!(copilot_told(&copilot_hook(&sandbox, "post-tool-use.json")), None);
    // 113,400 of 168,000 is 67.5 %: past WARNING on Copilot CLI's window, not on 200k.
    copilot_log(&sandbox, 113_400);
    let output = copilot_hook(&sandbox, "post-tool-use.json");
    let text = copilot_told(&output).expect("113,400 of 168,000 warns");
    assert!(text.starts_with("CONTEXT WARNING: Usage at 68%."), "{text}");
    assert!(text.contains("GitHub Copilot CLI's session events"), "{text}");
    assert_eq!(envelope_event(&output).as_deref(), Some("PostToolUse"));
    // Without Copilot CLI's marks the same event is read as Claude Code's (no figure there).
    let mut event = fixture_json("real/copilot/post-tool-use.json");
    event["cwd"] = json!(sandbox.project());
    assert_eq!(copilot_told(&sandbox.hook(&event)), None);
}

#[test]
fn copilot_cli_session_start_carries_the_brief() {
    let sandbox = Sandbox::new();
    let repo = TestRepo::init(&sandbox.project(), &[("a.txt", "a")]);
    drop(repo);
    let paused = sandbox.run(&["pause", "--checkpoint", "off"], b"");
    assert!(paused.status.success(), "{}", common::stderr(&paused));
    copilot_log(&sandbox, 20_000);
    let output = copilot_hook(&sandbox, "session-start.json");
    let text = copilot_told(&output).expect("SessionStart carries the brief");
    assert!(text.contains("baton resume brief"), "{text}");
    assert_eq!(envelope_event(&output).as_deref(), Some("SessionStart"));
}

#[test]
fn copilot_cli_waits_for_the_record_it_flushes_after_the_hook_starts() {
    let sandbox = Sandbox::new();
    let session = fixture_json("real/copilot/post-tool-use.json")["session_id"].as_str().unwrap().to_string();
    let dir = sandbox.home().join(".copilot").join("session-state").join(session);
    std::fs::create_dir_all(&dir).unwrap();
    let text = String::from_utf8(fixture("real/copilot/events.jsonl")).unwrap();
    let at = text.find("\"inputTokens\":121000").unwrap();
    let start = text[..at].rfind('\n').unwrap() + 1;
    let end = at + text[at..].find('\n').unwrap() + 1;
    let record = &text[start..end];
    // The previous call's record at 100,800 (60 % of 168k), then that call finished: the
    // record of the call in flight is not on disk yet.
    let stale = format!(
        "{}{}{{\"type\":\"tool.execution_complete\",\"data\":{{}}}}\n{{\"type\":\"assistant.turn_end\",\"data\":{{}}}}\n",
        &text[..start],
        record.replace("\"inputTokens\":121000", "\"inputTokens\":100800")
    );
    let path = dir.join("events.jsonl");
    std::fs::write(&path, stale).unwrap();
    let late = record.replace("\"inputTokens\":121000", "\"inputTokens\":113400");
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        append(&path, late.trim_end());
    });
    let output = copilot_hook(&sandbox, "post-tool-use.json");
    writer.join().unwrap();
    let text = copilot_told(&output).expect("the record flushed during the wait warns");
    assert!(text.starts_with("CONTEXT WARNING: Usage at 68%."), "{text}");
}

#[test]
fn a_window_only_from_the_table_never_pauses_and_a_configured_one_does() {
    // issue 19: a pause rests only on a window that is a fact (status line, host record,
    // `models.<id>.window`), never on baton's table of model ids alone.
    for (configured, pauses) in [(false, false), (true, true)] {
        let sandbox = Sandbox::new();
        let _repo = TestRepo::init(&sandbox.project(), &[("a.txt", "a")]);
        if configured {
            common::write(
                &sandbox.user_config(),
                r#"{"models": {"claude-sonnet-4-5-20250929": {"window": 200000}}}"#,
            );
        }
        let transcript = sandbox.home().join("t.jsonl");
        write_lines(
            &transcript,
            &[reply("m1", "claude-sonnet-4-5-20250929", 160_000, "toolu_mock_01_33539")],
        );
        let text =
            told(&sandbox.hook(&claude_event(&sandbox, "PostToolUse-Bash.json", &transcript))).unwrap();
        assert!(text.starts_with("CONTEXT CRITICAL:"), "{text}");
        assert_eq!(text.contains("end your turn"), pauses, "configured {configured}: {text}");
        let state: Value = read_json(&sandbox.state_path(CLAUDE_SESSION));
        assert_eq!(state.get("pauseArmedAt").is_some(), pauses, "configured {configured}: {state}");
    }
}

#[test]
fn codex_is_paused_by_refusing_the_calls_of_the_turn_since_no_hook_ends_it() {
    // Codex 0.171.0 ends no turn on a hook's output (its PostToolUse `continue: false` only
    // replaces the call's output): after the grace calls baton refuses every call of the
    // turn at PreToolUse, and never sends `continue`; the user's next prompt lifts it.
    let sandbox = Sandbox::new();
    let _repo = TestRepo::init(&sandbox.project(), &[("a.txt", "a")]);
    let rollout = sandbox.home().join("rollout.jsonl");
    std::fs::write(&rollout, fixture("real/codex/rollout-at-PostToolUse-3.jsonl")).unwrap();
    let env = [("BATON_CRITICAL_REMAINING", "30")];
    let event = codex_event(&sandbox, &rollout);
    let named = |name: &str| {
        let mut e = event.clone();
        e["hook_event_name"] = json!(name);
        e
    };
    let run = |e: &Value| sandbox.run_with(&["hook"], e.to_string().as_bytes(), &env);
    let before = run(&named("PreToolUse"));
    assert!(before.status.success() && before.stdout.is_empty(), "nothing to refuse yet");
    for call in 0..4 {
        let output = run(&event);
        let stdout = String::from_utf8_lossy(&output.stdout).to_string();
        assert!(!stdout.contains("\"continue\""), "call {call}: {stdout}");
        let text = told(&output).unwrap_or_default();
        match call {
            0 => assert!(text.starts_with("CONTEXT CRITICAL:") && text.contains("end your turn"), "{text}"),
            3 => {
                assert!(text.contains("that was the last tool call"), "{text}");
                let value: Value = serde_json::from_str(&stdout).unwrap();
                assert!(value["systemMessage"].as_str().is_some_and(|m| m.contains("/clear")), "{stdout}");
            }
            _ => assert!(!text.contains("last tool call"), "grace call {call}: {text}"),
        }
    }
    let refused: Vec<Value> = (0..2)
        .map(|_| serde_json::from_slice(&run(&named("PreToolUse")).stdout).expect("a refusal"))
        .collect();
    for value in &refused {
        assert_eq!(value["hookSpecificOutput"]["permissionDecision"], "deny", "{value}");
        let reason = value["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.contains("did not run") && reason.contains("/clear"), "{reason}");
        assert!(value.get("continue").is_none(), "{value}");
    }
    assert!(refused[0].get("systemMessage").is_some() && refused[1].get("systemMessage").is_none());
    let stop = run(&named("Stop"));
    assert!(stop.status.success() && stop.stdout.is_empty(), "Stop is never answered");
    let mut prompt = named("UserPromptSubmit");
    prompt["prompt"] = json!("go on");
    assert!(run(&prompt).status.success());
    let after = run(&named("PreToolUse"));
    assert!(after.status.success() && after.stdout.is_empty(), "the next turn's calls run");
}
