//! The right figure everywhere: with no statusline bridge the monitor reads the
//! transcript; headroom to auto-compaction (configured, overridden by Claude Code's
//! variables, learned from observed compactions); windows of 1M tokens; damaged
//! transcripts.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{SESSION, Sandbox, fixture, told};
use serde_json::json;

/// The PostToolUse of the transcript's last tool call, as Claude Code sends it: the
/// reply that issued the call is already in the transcript.
fn hook_with(sandbox: &Sandbox, transcript: &Path, env: &[(&str, &str)]) -> Option<String> {
    let mut event = sandbox.post_tool_use(SESSION);
    event["transcript_path"] = json!(transcript);
    event["tool_use_id"] = json!(last_tool_use_id(transcript));
    told(&sandbox.run_with(&["hook"], event.to_string().as_bytes(), env))
}

/// The id of the newest `tool_use` block in a transcript (read from its last MiB).
fn last_tool_use_id(transcript: &Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let mut bytes = Vec::new();
    if let Ok(mut file) = std::fs::File::open(transcript) {
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        let _ = file.seek(SeekFrom::Start(len.saturating_sub(1 << 20)));
        let _ = file.read_to_end(&mut bytes);
    }
    let text = String::from_utf8_lossy(&bytes);
    let ids = text.lines().rev().filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok());
    for entry in ids {
        let blocks = entry["message"]["content"].as_array().cloned().unwrap_or_default();
        if let Some(id) = blocks.iter().rev().find(|b| b["type"] == "tool_use").and_then(|b| b["id"].as_str())
        {
            return id.to_string();
        }
    }
    String::new()
}

fn sample(sandbox: &Sandbox) -> PathBuf {
    let path = sandbox.home().join("t.jsonl");
    std::fs::write(&path, fixture("transcript.jsonl")).unwrap();
    path
}

/// A transcript of one main-chain reply with `tokens` in its context.
fn one_reply(sandbox: &Sandbox, name: &str, model: &str, tokens: u64) -> PathBuf {
    let path = sandbox.home().join(name);
    let line = json!({"type": "assistant", "isSidechain": false, "timestamp": "2026-11-30T10:00:00.000Z",
        "message": {"id": "msg_1", "model": model, "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}],
                    "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": tokens - 10, "output_tokens": 5}}});
    std::fs::write(&path, format!("{line}\n")).unwrap();
    path
}

#[test]
fn without_a_bridge_the_transcript_gives_the_figure_and_is_named() {
    let sandbox = Sandbox::new();
    let transcript = sample(&sandbox);
    let text = hook_with(&sandbox, &transcript, &[]).expect("72% used warns");
    assert!(
        text.starts_with(
            "CONTEXT WARNING: Usage at 72%. Remaining: 28%. About 23k tokens before auto-compaction."
        ),
        "{text}"
    );
    assert!(text.contains("read from the session's transcript"), "{text}");
    // The auto compaction in the transcript (167,400 tokens) is learned for the model.
    let learned: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sandbox.state_dir().join("compactions.json")).unwrap())
            .unwrap();
    assert_eq!(learned["models"]["claude-opus-4-5-20251101"]["points"][0]["pre_tokens"], 167_400);
}

#[test]
fn a_stale_bridge_falls_back_to_the_transcript_and_a_fresh_one_wins() {
    let sandbox = Sandbox::new();
    let transcript = sample(&sandbox);
    sandbox.write_bridge(SESSION, 60.0, 120);
    assert!(hook_with(&sandbox, &transcript, &[]).unwrap().contains("transcript"));
    let other = Sandbox::new();
    let transcript = sample(&other);
    other.write_bridge(SESSION, 60.0, 0);
    assert_eq!(hook_with(&other, &transcript, &[]), None, "the fresh bridge says 40% used");
}

#[test]
fn a_learned_compaction_point_replaces_the_buffer() {
    let sandbox = Sandbox::new();
    let transcript = sample(&sandbox);
    // With a 100,000-token buffer the point would be 100,000 (already passed); the
    // transcript shows this model compacting at 167,400.
    let text = hook_with(&sandbox, &transcript, &[("BATON_COMPACT_BUFFER_TOKENS", "100000")]).unwrap();
    assert!(text.contains("About 23k tokens before auto-compaction"), "{text}");
}

#[test]
fn claude_code_variables_move_the_compaction_point() {
    let sandbox = Sandbox::new();
    let transcript = one_reply(&sandbox, "t.jsonl", "claude-opus-4-5-20251101", 144_012);
    let off = hook_with(&sandbox, &transcript, &[("DISABLE_AUTO_COMPACT", "1")]).unwrap();
    assert!(
        off.contains("About 56k tokens before the context window is full (auto-compaction is off)"),
        "{off}"
    );
    let other = Sandbox::new();
    let transcript = one_reply(&other, "t.jsonl", "claude-opus-4-5-20251101", 144_012);
    // Claude Code takes the percentage of the window less its 20k output reserve, and
    // never compacts later than without it: min(180,000 × 90 %, 167,000) = 162,000.
    let lowered = hook_with(&other, &transcript, &[("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "90")]).unwrap();
    assert!(lowered.contains("About 18k tokens before auto-compaction"), "{lowered}");
}

#[test]
fn headroom_thresholds_in_tokens() {
    let sandbox = Sandbox::new();
    let transcript = sample(&sandbox);
    let env = [("BATON_WARN_HEADROOM_TOKENS", "60000"), ("BATON_CRITICAL_HEADROOM_TOKENS", "30000")];
    let text = hook_with(&sandbox, &transcript, &env).unwrap();
    assert!(text.starts_with("CONTEXT CRITICAL: Usage at 72%."), "{text}");
    let project = sandbox.project();
    let output = sandbox.run_with(&["config", "--cwd", project.to_str().unwrap()], b"", &env);
    let shown = String::from_utf8(output.stdout).unwrap();
    assert!(shown.contains("thresholds in force: headroom tokens: WARNING at 60000"), "{shown}");
}

#[test]
fn one_million_windows_are_not_read_as_200k() {
    let sandbox = Sandbox::new();
    // 300k tokens on a [1m] model: 30% used, no warning (not "150% used").
    let transcript = one_reply(&sandbox, "big.jsonl", "claude-sonnet-4-5-20250929[1m]", 300_000);
    assert_eq!(hook_with(&sandbox, &transcript, &[]), None);
    // 250k tokens without the marker: more than 200k, so the window must be the next one.
    let transcript = one_reply(&sandbox, "bigger.jsonl", "claude-sonnet-4-5-20250929", 250_000);
    assert_eq!(hook_with(&sandbox, &transcript, &[]), None);
    // 700k on a 1M window: 70% used is a WARNING by %, with 267k to compaction.
    let transcript = one_reply(&sandbox, "late.jsonl", "claude-sonnet-4-5-20250929[1m]", 700_000);
    let text = hook_with(&sandbox, &transcript, &[]).unwrap();
    assert!(text.starts_with("CONTEXT WARNING: Usage at 70%. Remaining: 30%. About 267k tokens"), "{text}");
}

#[test]
fn bad_claude_code_variables_are_ignored_and_reported() {
    let sandbox = Sandbox::new();
    let transcript = sample(&sandbox);
    let env = [
        ("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "lots"),
        ("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "-5"),
        ("DISABLE_AUTO_COMPACT", "maybe"),
    ];
    let text = hook_with(&sandbox, &transcript, &env).unwrap();
    assert!(text.contains("About 23k tokens before auto-compaction"), "{text}");
    let project = sandbox.project();
    let output = sandbox.run_with(&["config", "--json", "--cwd", project.to_str().unwrap()], b"", &env);
    assert_eq!(output.status.code(), Some(1));
    let config: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let errors = config["errors"].to_string();
    for var in ["CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "CLAUDE_CODE_AUTO_COMPACT_WINDOW", "DISABLE_AUTO_COMPACT"]
    {
        assert!(errors.contains(var), "{var} not reported: {errors}");
    }
}

#[test]
fn damaged_transcripts_give_no_figure_or_the_right_one() {
    let sandbox = Sandbox::new();
    let good = String::from_utf8(fixture("transcript.jsonl")).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    let sidechain =
        lines.iter().filter(|l| l.contains("\"isSidechain\": true")).cloned().collect::<Vec<_>>().join("\n");
    let big_line =
        format!("{{\"type\":\"user\",\"message\":{{\"content\":\"{}\"}}}}", "z".repeat(10 * 1024 * 1024));
    let cases: Vec<(&str, Vec<u8>, Option<&str>)> = vec![
        ("missing", vec![], None),
        ("empty", b"".to_vec(), None),
        ("one line", format!("{}\n", lines[1]).into_bytes(), None),
        (
            "cut-off last line",
            format!("{good}{{\"type\":\"assistant\",\"message\":{{\"usage\":{{\"input_tok").into_bytes(),
            Some("Usage at 72%"),
        ),
        ("invalid UTF-8", [good.as_bytes(), b"\xff\xfe\n"].concat(), Some("Usage at 72%")),
        ("a 10 MB line", format!("{good}{big_line}\n").into_bytes(), Some("Usage at 72%")),
        // Past the 16 MiB read budget the reader gives up rather than read on: no figure.
        ("10 MB lines past the budget", format!("{good}{big_line}\n{big_line}\n").into_bytes(), None),
        ("no usage anywhere", b"{\"type\":\"user\",\"message\":{\"content\":\"hi\"}}\n".to_vec(), None),
        ("only sidechain", format!("{sidechain}\n").into_bytes(), None),
        (
            "compaction as the last line",
            format!("{good}{}\n", lines.iter().find(|l| l.contains("compact_boundary")).unwrap())
                .into_bytes(),
            None,
        ),
        (
            "several compactions",
            format!(
                "{good}{}\n{}\n",
                lines.iter().find(|l| l.contains("compact_boundary")).unwrap(),
                lines[lines.len() - 1]
            )
            .into_bytes(),
            Some("Usage at 72%"),
        ),
    ];
    for (n, (name, bytes, expected)) in cases.into_iter().enumerate() {
        let session = format!("0000000{n}-aaaa-4000-8000-000000000000");
        let path = sandbox.home().join(format!("case{n}.jsonl"));
        if name != "missing" {
            std::fs::write(&path, &bytes).unwrap();
        }
        let mut event = sandbox.post_tool_use(&session);
        event["transcript_path"] = json!(path);
        let output = sandbox.hook(&event);
        let text = told(&output);
        match expected {
            None => assert_eq!(text, None, "{name}"),
            Some(needle) => assert!(text.as_deref().is_some_and(|t| t.contains(needle)), "{name}: {text:?}"),
        }
    }
}

#[test]
fn a_1_tib_transcript_is_read_from_its_end_only() {
    let sandbox = Sandbox::new();
    let path = sandbox.home().join("huge.jsonl");
    let tail = fixture("transcript.jsonl");
    {
        // A sparse file: 1 TiB of history, then the sample session at the end. Reading it
        // all would take many minutes; read from the end, it costs what a small one does
        // (the unit test in transcript::context counts the bytes).
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(1 << 40).unwrap();
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"\n").unwrap();
        file.write_all(&tail).unwrap();
    }
    let start = Instant::now();
    let text = hook_with(&sandbox, &path, &[]).expect("warns");
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    assert!(text.starts_with("CONTEXT WARNING: Usage at 72%."), "{text}");
}

/// A main-chain reply at `tokens` that issues the tool call `toolu_<n>`, as one line.
fn reply_line(n: u32, tokens: u64) -> String {
    let line = json!({"type": "assistant", "isSidechain": false, "timestamp": "2026-11-30T10:00:00.000Z",
        "message": {"id": format!("msg_{n}"), "model": "claude-opus-4-5-20251101",
            "content": [{"type": "tool_use", "id": format!("toolu_{n}"), "name": "Bash", "input": {"command": "ls"}}],
            "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": tokens - 10, "output_tokens": 5}}});
    format!("{line}\n")
}

fn result_line(n: u32) -> String {
    let line = json!({"type": "user", "isSidechain": false, "message": {"role": "user",
        "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{n}"), "content": "output of the tool"}]}});
    format!("{line}\n")
}

fn append(path: &Path, text: &str) {
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(text.as_bytes()).unwrap();
}

/// The figure the hook gives after tool call `toolu_<n>` of `transcript` ("Usage at N%").
fn figure_at_call(sandbox: &Sandbox, transcript: &Path, n: u32) -> String {
    let mut event = sandbox.post_tool_use(SESSION);
    event["transcript_path"] = json!(transcript);
    event["tool_use_id"] = json!(format!("toolu_{n}"));
    let text =
        told(&sandbox.run_with(&["hook"], event.to_string().as_bytes(), &[("BATON_DEBOUNCE_CALLS", "1")]))
            .expect("a figure past WARNING is told at every call");
    let at = text.find("Usage at ").expect("the figure");
    text[at..].split('.').next().unwrap().to_string()
}

/// Each call reads the transcript from where the session's last call stopped: the figure
/// stays right as replies are appended, a line is half written, and the file is
/// truncated, replaced, rewritten in place, or another file for the same (resumed)
/// session.
#[test]
fn the_figure_stays_right_as_the_transcript_is_read_from_the_last_call_on() {
    let sandbox = Sandbox::new();
    let transcript = sandbox.home().join("t.jsonl");
    std::fs::write(&transcript, format!("{}{}", reply_line(1, 140_000), result_line(1))).unwrap();
    // Written a while before the call (a read just after a write cannot tell a rewrite of
    // the same size by the file's time, and reads again).
    let file = std::fs::OpenOptions::new().append(true).open(&transcript).unwrap();
    file.set_modified(std::time::SystemTime::now() - Duration::from_secs(60)).unwrap();
    assert_eq!(figure_at_call(&sandbox, &transcript, 1), "Usage at 70%");
    let mark = sandbox.state_dir().join(format!("sessions/claude-ctx-{SESSION}-read.json"));
    let kept = std::fs::read(&mark).expect("the read's mark is kept");
    let modified = std::fs::metadata(&mark).unwrap().modified().unwrap();
    // Nothing appended: the same figure, and the mark is not written again.
    assert_eq!(figure_at_call(&sandbox, &transcript, 1), "Usage at 70%");
    assert_eq!(std::fs::read(&mark).unwrap(), kept);
    assert_eq!(std::fs::metadata(&mark).unwrap().modified().unwrap(), modified);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&mark).unwrap().permissions().mode() & 0o777, 0o600);
    }
    // One reply appended.
    append(&transcript, &reply_line(2, 144_000));
    assert_eq!(figure_at_call(&sandbox, &transcript, 2), "Usage at 72%");
    // A reply half written: the figure before it, then the whole reply once written.
    let third = reply_line(3, 152_000);
    append(&transcript, &format!("{}{}", result_line(2), &third[..third.len() / 2]));
    assert_eq!(figure_at_call(&sandbox, &transcript, 2), "Usage at 72%");
    append(&transcript, &third[third.len() / 2..]);
    assert_eq!(figure_at_call(&sandbox, &transcript, 3), "Usage at 76%");
    // Truncated: read afresh.
    std::fs::write(&transcript, reply_line(4, 132_000)).unwrap();
    assert_eq!(figure_at_call(&sandbox, &transcript, 4), "Usage at 66%");
    // Rewritten in place, longer, with other bytes before the old end.
    let rewritten = format!("{}{}{}", reply_line(5, 136_000), result_line(5), reply_line(6, 138_000));
    std::fs::write(&transcript, &rewritten).unwrap();
    assert_eq!(figure_at_call(&sandbox, &transcript, 6), "Usage at 69%");
    // Replaced by another file (rotated): a new inode.
    let other = sandbox.home().join("t.jsonl.new");
    std::fs::write(&other, format!("{rewritten}{}", reply_line(7, 160_000))).unwrap();
    std::fs::rename(&other, &transcript).unwrap();
    assert_eq!(figure_at_call(&sandbox, &transcript, 7), "Usage at 80%");
    // The same session resumed into another transcript file.
    let resumed = sandbox.home().join("resumed.jsonl");
    std::fs::write(&resumed, format!("{}{}", reply_line(8, 134_000), result_line(8))).unwrap();
    assert_eq!(figure_at_call(&sandbox, &resumed, 8), "Usage at 67%");
    append(&resumed, &reply_line(9, 142_000));
    assert_eq!(figure_at_call(&sandbox, &resumed, 9), "Usage at 71%");
}
