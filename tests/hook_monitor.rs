//! The context monitor through `baton hook`: levels, debounce, escalation, the GSD
//! contract (file names, opt-out, session id checks, envelopes), and its promises under
//! parallel calls and planted symlinks.

use crate::common;

use common::{SESSION, Sandbox, envelope_event, fixture_json, notice, told};
use serde_json::{Value, json};

#[test]
fn thresholds_are_inclusive_at_35_and_25() {
    for (remaining, expected) in [
        (36.0, None),
        (35.0, Some("CONTEXT WARNING:")),
        (26.0, Some("CONTEXT WARNING:")),
        (25.0, Some("CONTEXT CRITICAL:")),
    ] {
        let sandbox = Sandbox::new();
        sandbox.write_bridge(SESSION, remaining, 0);
        let text = sandbox.hook_told(&sandbox.post_tool_use(SESSION));
        match expected {
            None => assert_eq!(text, None, "{remaining}% remaining must be silent"),
            Some(prefix) => {
                let text = text.unwrap_or_else(|| panic!("{remaining}% remaining must warn"));
                assert!(text.starts_with(prefix), "{remaining}: {text}");
                let used = 100 - remaining as i64;
                assert!(text.contains(&format!("Usage at {used}%")), "{text}");
                assert!(text.contains(&format!("Remaining: {remaining}%")), "{text}");
            }
        }
    }
}

#[test]
fn below_threshold_leaves_no_state() {
    let sandbox = Sandbox::new();
    sandbox.write_bridge(SESSION, 60.0, 0);
    assert_eq!(sandbox.hook_told(&sandbox.post_tool_use(SESSION)), None);
    assert!(!sandbox.state_path(SESSION).exists());
}

#[test]
fn debounce_warns_on_calls_1_6_and_11() {
    let sandbox = Sandbox::new();
    let mut fired = vec![];
    for call in 1..=11 {
        sandbox.write_bridge(SESSION, 30.0, 0);
        if sandbox.hook_told(&sandbox.post_tool_use(SESSION)).is_some() {
            fired.push(call);
        }
    }
    assert_eq!(fired, vec![1, 6, 11]);
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sandbox.state_path(SESSION)).unwrap()).unwrap();
    assert_eq!(state["callsSinceWarn"], 0);
    assert_eq!(state["lastLevel"], "warning");
}

#[test]
fn warning_to_critical_fires_at_once_then_debounces() {
    let sandbox = Sandbox::new();
    let event = sandbox.post_tool_use(SESSION);
    sandbox.write_bridge(SESSION, 30.0, 0);
    assert!(sandbox.hook_told(&event).unwrap().starts_with("CONTEXT WARNING:"));
    assert_eq!(sandbox.hook_told(&event), None);
    sandbox.write_bridge(SESSION, 24.0, 0);
    assert!(sandbox.hook_told(&event).unwrap().starts_with("CONTEXT CRITICAL:"));
    assert_eq!(sandbox.hook_told(&event), None);
}

#[test]
fn switching_from_gsd_state_mid_session_keeps_the_count() {
    let sandbox = Sandbox::new();
    // GSD's hook wrote this (in the temp dir, GSD's place) after its 3rd silent call.
    let gsd_state = sandbox.tmp().join(format!("claude-ctx-{SESSION}-warned.json"));
    std::fs::write(&gsd_state, r#"{"callsSinceWarn":3,"lastLevel":"warning"}"#).unwrap();
    sandbox.write_bridge(SESSION, 30.0, 0);
    let event = sandbox.post_tool_use(SESSION);
    assert_eq!(sandbox.hook_told(&event), None, "4th call after a warning");
    assert!(sandbox.hook_told(&event).is_some(), "5th call after a warning fires");
    // baton keeps its own state in its private folder and never writes GSD's.
    assert!(sandbox.state_path(SESSION).exists());
    assert_eq!(std::fs::read_to_string(&gsd_state).unwrap(), r#"{"callsSinceWarn":3,"lastLevel":"warning"}"#);
}

#[test]
fn stale_missing_and_malformed_bridges_are_silent() {
    let sandbox = Sandbox::new();
    let event = sandbox.post_tool_use(SESSION);
    assert_eq!(sandbox.hook_told(&event), None, "no bridge");
    sandbox.write_bridge(SESSION, 10.0, 61);
    assert_eq!(sandbox.hook_told(&event), None, "61 s old");
    sandbox.write_bridge(SESSION, 10.0, 59);
    assert!(sandbox.hook_told(&event).is_some(), "59 s old is fresh");

    let sandbox = Sandbox::new();
    for bad in [
        "not json",
        "",
        "[]",
        "null",
        r#"{"remaining_percentage":"10","timestamp":1}"#,
        r#"{"remaining_percentage":10}"#,
        r#"{"remaining_percentage":-5,"timestamp":9999999999}"#,
    ] {
        std::fs::write(sandbox.bridge_path(SESSION), bad).unwrap();
        assert_eq!(sandbox.hook_told(&event), None, "bridge {bad:?}");
    }
    assert!(!sandbox.state_path(SESSION).exists());
}

#[test]
fn session_ids_with_traversal_touch_no_file() {
    let sandbox = Sandbox::new();
    for bad in ["../evil", "a/b", "a\\b", "..", ""] {
        // A bridge a naive join would find.
        let planted = sandbox.tmp().join(format!("claude-ctx-{bad}.json"));
        if let Some(parent) = planted.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = std::fs::write(
            &planted,
            json!({"remaining_percentage": 10, "used_pct": 90, "timestamp": common::now()}).to_string(),
        );
        let mut event = sandbox.post_tool_use(SESSION);
        event["session_id"] = json!(bad);
        assert_eq!(sandbox.hook_told(&event), None, "{bad:?}");
    }
    let state_files: Vec<_> = walk(&sandbox.dir.path().to_path_buf())
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("warned"))
        .collect();
    assert!(state_files.is_empty(), "{state_files:?}");
}

fn walk(dir: &std::path::PathBuf) -> Vec<std::path::PathBuf> {
    let mut out = vec![];
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
    }
    out
}

#[test]
fn non_injection_events_are_silent() {
    let sandbox = Sandbox::new();
    sandbox.write_bridge(SESSION, 10.0, 0);
    // Stop and UserPromptSubmit can carry a warning: see their own tests below.
    for name in ["hook-sessionstart.json", "hook-sessionstart-compact.json", "hook-precompact.json"] {
        let mut event = fixture_json(name);
        event["session_id"] = json!(SESSION);
        event["cwd"] = json!(sandbox.project());
        let output = sandbox.hook(&event);
        assert!(output.status.success());
        assert!(output.stdout.is_empty(), "{name} printed {}", String::from_utf8_lossy(&output.stdout));
    }
    for name in ["SessionEnd", "SubagentStop", "PostCompact", "BeforeTool", "Notification"] {
        let mut event = sandbox.post_tool_use(SESSION);
        event["hook_event_name"] = json!(name);
        let output = sandbox.hook(&event);
        assert!(output.status.success() && output.stdout.is_empty(), "{name}");
    }
    // A missing event name is silent without GEMINI_API_KEY, and does not count a call
    // (the state PreCompact left is unchanged).
    let state_before = std::fs::read(sandbox.state_path(SESSION)).unwrap();
    let mut event = sandbox.post_tool_use(SESSION);
    event.as_object_mut().unwrap().remove("hook_event_name");
    let output = sandbox.hook(&event);
    assert!(output.status.success() && output.stdout.is_empty());
    assert_eq!(std::fs::read(sandbox.state_path(SESSION)).unwrap(), state_before);
}

#[test]
fn gemini_after_tool_gets_its_own_event_name() {
    let sandbox = Sandbox::new();
    let mut event = fixture_json("gemini-aftertool.json");
    event["cwd"] = json!(sandbox.project());
    sandbox.write_bridge("gem-0b7e", 30.0, 0);
    let output = sandbox.hook(&event);
    assert!(told(&output).unwrap().starts_with("CONTEXT WARNING:"));
    assert_eq!(envelope_event(&output).as_deref(), Some("AfterTool"));
}

#[test]
fn gemini_fallback_for_a_missing_event_name() {
    let sandbox = Sandbox::new();
    sandbox.write_bridge(SESSION, 30.0, 0);
    let mut event = sandbox.post_tool_use(SESSION);
    event.as_object_mut().unwrap().remove("hook_event_name");
    let output = sandbox.run_with(&["hook"], event.to_string().as_bytes(), &[("GEMINI_API_KEY", "k")]);
    assert!(told(&output).is_some());
    assert_eq!(envelope_event(&output).as_deref(), Some("AfterTool"));
}

#[test]
fn codex_gets_exactly_the_envelope() {
    let sandbox = Sandbox::new();
    let mut event = fixture_json("codex-posttooluse.json");
    event["cwd"] = json!(sandbox.project());
    sandbox.write_bridge("cdx-44a1", 20.0, 0);
    let output = sandbox.hook(&event);
    // `told` asserts the envelope has no field but hookEventName and additionalContext.
    assert!(told(&output).unwrap().starts_with("CONTEXT CRITICAL:"));
    assert_eq!(envelope_event(&output).as_deref(), Some("PostToolUse"));
}

/// A Claude Code reply line: `tokens` in the context, tool calls `tools`.
fn reply(id: &str, tokens: u64, tools: &[&str], sidechain: bool) -> String {
    let content: Vec<Value> =
        tools.iter().map(|t| json!({"type": "tool_use", "id": t, "name": "Bash", "input": {}})).collect();
    let mut line = json!({"type": "assistant", "timestamp": "2026-11-30T10:00:00.000Z",
        "message": {"id": id, "model": "claude-sonnet-4-5-20250929", "content": content,
            "usage": {"input_tokens": tokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}}});
    if sidechain {
        line["isSidechain"] = json!(true);
        line["agentId"] = json!("def456");
    }
    format!("{line}\n")
}

/// The parent's transcript at `tokens` and its subagent's (`agent-def456`) at `sub_tokens`,
/// laid out as Claude Code does; returns the parent's path.
fn parent_and_subagent(sandbox: &Sandbox, tokens: u64, sub_tokens: u64) -> std::path::PathBuf {
    let dir = sandbox.home().join("projects").join("-p");
    let sub = dir.join(SESSION).join("subagents");
    std::fs::create_dir_all(&sub).unwrap();
    let parent = dir.join(format!("{SESSION}.jsonl"));
    std::fs::write(&parent, reply("m1", tokens, &["toolu_p1"], false)).unwrap();
    std::fs::write(sub.join("agent-def456.jsonl"), reply("s1", sub_tokens, &["toolu_s1"], true)).unwrap();
    parent
}

fn subagent_call(sandbox: &Sandbox, parent: &std::path::Path) -> Value {
    let mut call = fixture_json("hook-posttooluse-subagent.json");
    call["cwd"] = json!(sandbox.project());
    call["transcript_path"] = json!(parent);
    call["tool_use_id"] = json!("toolu_s1");
    call
}

#[test]
fn a_subagent_at_10_under_a_parent_at_80_is_not_warned_and_writes_nothing() {
    let sandbox = Sandbox::new();
    let parent = parent_and_subagent(&sandbox, 160_000, 20_000);
    let sub = subagent_call(&sandbox, &parent);
    assert_eq!(sandbox.hook_told(&sub), None, "the subagent's own context is at 10 %");
    assert!(!sandbox.state_path(SESSION).exists(), "the parent's count is untouched");
    assert!(!sandbox.project().join(".planning").exists(), "no handoff for the parent");
    let mut main_call = sandbox.post_tool_use(SESSION);
    main_call["transcript_path"] = json!(parent);
    main_call["tool_use_id"] = json!("toolu_p1");
    let told = sandbox.hook_told(&main_call).expect("the parent is warned on its own next call");
    assert!(told.starts_with("CONTEXT CRITICAL: Usage at 80%"), "{told}");
}

#[test]
fn a_subagent_at_80_under_a_parent_at_20_is_warned_as_a_subagent() {
    let sandbox = Sandbox::new();
    let parent = parent_and_subagent(&sandbox, 40_000, 160_000);
    let sub = subagent_call(&sandbox, &parent);
    let told = sandbox.hook_told(&sub).expect("the subagent is warned");
    assert!(told.starts_with("CONTEXT CRITICAL: Usage at 80%"), "{told}");
    assert!(told.contains("as a subagent") && told.contains("report back"), "{told}");
    assert!(!told.contains("HANDOFF.json") && !told.contains("baton pause"), "{told}");
    assert!(!sandbox.project().join(".planning").exists(), "a subagent writes no handoff");
    assert!(!sandbox.state_path(SESSION).exists(), "the subagent has its own count");
    let mut main_call = sandbox.post_tool_use(SESSION);
    main_call["transcript_path"] = json!(parent);
    main_call["tool_use_id"] = json!("toolu_p1");
    assert_eq!(sandbox.hook_told(&main_call), None, "the parent at 20 % is not warned");
    // A finished subagent's context is forgotten.
    let mut stop = sub.clone();
    stop["hook_event_name"] = json!("SubagentStop");
    assert!(sandbox.hook(&stop).stdout.is_empty());
    let states: Vec<_> = std::fs::read_dir(sandbox.state_dir().join("sessions"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("agent-def456-warned.json"))
        .collect();
    assert!(states.is_empty(), "{states:?}");
}

/// Found on Claude Code 2.1.332: a subagent's reply is often not in its transcript yet when
/// its PostToolUse runs. Near a threshold, the subagent's own transcript is waited on.
#[test]
fn a_subagent_near_a_threshold_waits_for_its_own_late_reply() {
    let sandbox = Sandbox::new();
    let parent = parent_and_subagent(&sandbox, 40_000, 140_000);
    let path = parent.parent().unwrap().join(SESSION).join("subagents").join("agent-def456.jsonl");
    let mut sub = subagent_call(&sandbox, &parent);
    sub["tool_use_id"] = json!("toolu_s2");
    let late = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(80));
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        std::io::Write::write_all(&mut file, reply("s2", 160_000, &["toolu_s2"], true).as_bytes()).unwrap();
    });
    let told = sandbox.hook_told(&sub).expect("the subagent is warned");
    late.join().unwrap();
    assert!(told.starts_with("CONTEXT CRITICAL: Usage at 80%"), "the late reply's figure: {told}");
    assert!(told.contains("as a subagent") && !told.contains("(estimated)"), "{told}");
}

#[test]
fn a_subagent_without_its_transcript_is_silent() {
    let sandbox = Sandbox::new();
    sandbox.write_bridge(SESSION, 20.0, 0);
    let mut sub_call = fixture_json("hook-posttooluse-subagent.json");
    sub_call["cwd"] = json!(sandbox.project());
    assert_eq!(sandbox.hook_told(&sub_call), None, "the parent's figure is never the subagent's");
    assert!(!sandbox.state_path(SESSION).exists());
}

#[test]
fn a_user_prompt_past_65_is_warned_at_the_turns_start() {
    let sandbox = Sandbox::new();
    sandbox.write_bridge(SESSION, 30.0, 0);
    let event = json!({"session_id": SESSION, "transcript_path": sandbox.home().join("t.jsonl"),
        "cwd": sandbox.project(), "hook_event_name": "UserPromptSubmit", "prompt": "go on", "prompt_id": "p1"});
    let output = sandbox.hook(&event);
    assert!(told(&output).unwrap().starts_with("CONTEXT WARNING: Usage at 70%"));
    assert_eq!(envelope_event(&output).as_deref(), Some("UserPromptSubmit"));
    // The first tool call of that turn is debounced with it: one state for every event.
    assert_eq!(sandbox.hook_told(&sandbox.post_tool_use(SESSION)), None);
    // Gemini CLI's BeforeAgent and Codex's UserPromptSubmit warn the same way.
    let gemini = json!({"session_id": "gem-1", "cwd": sandbox.project(), "hook_event_name": "BeforeAgent",
        "prompt": "go on", "timestamp": "2026-11-30T10:00:00Z"});
    sandbox.write_bridge("gem-1", 30.0, 0);
    let output = sandbox.hook(&gemini);
    assert!(told(&output).is_some());
    assert_eq!(envelope_event(&output).as_deref(), Some("BeforeAgent"));
}

#[test]
fn a_parallel_batch_crossing_65_gets_one_warning() {
    let sandbox = Sandbox::new();
    let transcript = sandbox.home().join("t.jsonl");
    std::fs::write(&transcript, reply("m1", 140_000, &["toolu_a", "toolu_b", "toolu_c"], false)).unwrap();
    let event = |name: &str, id: Option<&str>| {
        let mut event = json!({"session_id": SESSION, "transcript_path": transcript, "cwd": sandbox.project(),
            "hook_event_name": name, "prompt_id": "p1"});
        if let Some(id) = id {
            event["tool_use_id"] = json!(id);
            event["tool_name"] = json!("Bash");
        }
        event
    };
    // Every event may warn (debounce 1): only the reply's first event does.
    let env = [("BATON_DEBOUNCE_CALLS", "1")];
    let run = |e: Value| told(&sandbox.run_with(&["hook"], e.to_string().as_bytes(), &env));
    let warnings: Vec<Option<String>> = vec![
        run(event("PostToolUse", Some("toolu_a"))),
        run(event("PostToolUse", Some("toolu_b"))),
        run(event("PostToolUse", Some("toolu_c"))),
        run(event("PostToolBatch", None)),
    ];
    let given = warnings.iter().flatten().count();
    assert_eq!(given, 1, "{warnings:?}");
    assert!(warnings[0].as_deref().unwrap().starts_with("CONTEXT WARNING: Usage at 70%"));
    // The next reply warns again.
    std::fs::write(&transcript, reply("m2", 142_000, &["toolu_d"], false)).unwrap();
    assert!(run(event("PostToolUse", Some("toolu_d"))).is_some());
}

#[test]
fn one_call_per_reply_is_counted_once_with_its_batch() {
    // Claude Code 2.1.332 sends PostToolBatch after every reply that used tools, one call
    // included: GSD's cadence over 12 calls at 70 % is calls 1, 6 and 11.
    let sandbox = Sandbox::new();
    sandbox.write_bridge(SESSION, 30.0, 0);
    let mut warned = vec![];
    for call in 1..=12 {
        let mut tool = sandbox.post_tool_use(SESSION);
        tool["prompt_id"] = json!("p1");
        tool["tool_use_id"] = json!(format!("toolu_{call}"));
        let batch = json!({"session_id": SESSION, "cwd": sandbox.project(), "prompt_id": "p1",
            "hook_event_name": "PostToolBatch", "tool_calls": [{"tool_name": "Bash", "tool_use_id": format!("toolu_{call}")}]});
        for (name, event) in [("PostToolUse", tool), ("PostToolBatch", batch)] {
            if sandbox.hook_told(&event).is_some() {
                warned.push((call, name));
            }
        }
    }
    assert_eq!(warned, vec![(1, "PostToolUse"), (6, "PostToolUse"), (11, "PostToolUse")]);
}

#[test]
fn stop_is_answered_once_and_never_while_continuing() {
    let sandbox = Sandbox::new();
    sandbox.write_bridge(SESSION, 30.0, 0);
    let stop = |active: bool| {
        let mut event = fixture_json("hook-stop.json");
        event["cwd"] = json!(sandbox.project());
        event["stop_hook_active"] = json!(active);
        event
    };
    assert_eq!(sandbox.hook_told(&stop(true)), None, "never while the host continues for a Stop hook");
    let output = sandbox.hook(&stop(false));
    assert!(told(&output).unwrap().starts_with("CONTEXT WARNING:"));
    assert_eq!(envelope_event(&output).as_deref(), Some("Stop"));
    assert_eq!(sandbox.hook_told(&stop(true)), None);
    assert_eq!(sandbox.hook_told(&stop(false)), None, "once per level");
    // Escalation is a new level: answered once more.
    sandbox.write_bridge(SESSION, 20.0, 0);
    assert!(sandbox.hook_told(&stop(false)).unwrap().starts_with("CONTEXT CRITICAL:"));
    assert_eq!(sandbox.hook_told(&stop(false)), None);
    // Codex's Stop accepts no context: never answered.
    sandbox.write_bridge("cdx-9", 20.0, 0);
    let codex = json!({"session_id": "cdx-9", "cwd": sandbox.project(), "hook_event_name": "Stop",
        "turn_id": "t1", "stop_hook_active": false, "model": "gpt-5"});
    assert_eq!(sandbox.hook_told(&codex), None);
}

#[test]
fn an_unwritable_state_folder_still_warns_and_says_so_once() {
    let sandbox = Sandbox::new();
    // A file where the folder should be: unwritable even for root.
    std::fs::create_dir_all(sandbox.root().join("state")).unwrap();
    std::fs::write(sandbox.state_dir(), b"not a folder").unwrap();
    sandbox.write_bridge(SESSION, 30.0, 0);
    let first = sandbox.hook_told(&sandbox.post_tool_use(SESSION)).expect("warned");
    assert!(first.starts_with("CONTEXT WARNING: Usage at 70%"), "{first}");
    assert!(first.contains("cannot keep its state"), "{first}");
    let second = sandbox.hook_told(&sandbox.post_tool_use(SESSION)).expect("warned every time");
    assert!(!second.contains("cannot keep its state"), "said once: {second}");
    // CRITICAL still attempts the handoff.
    sandbox.write_bridge(SESSION, 20.0, 0);
    let critical = sandbox.hook_told(&sandbox.post_tool_use(SESSION)).expect("warned");
    assert!(critical.starts_with("CONTEXT CRITICAL:"), "{critical}");
    assert!(
        critical.contains("baton has saved a handoff") || critical.contains("could not write a handoff"),
        "the handoff is attempted: {critical}"
    );
}

#[test]
fn a_first_call_that_crosses_waits_for_its_reply() {
    let sandbox = Sandbox::new();
    let transcript = sandbox.home().join("t.jsonl");
    // A large first prompt (a pasted log), no reply yet: near a threshold by its size.
    let prompt = json!({"type": "user", "message": {"role": "user", "content": "x".repeat(600_000)}});
    std::fs::write(&transcript, format!("{prompt}\n")).unwrap();
    let mut event = sandbox.post_tool_use(SESSION);
    event["tool_use_id"] = json!("toolu_first");
    let mut child = sandbox.command(&["hook"]).spawn().expect("spawn");
    {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(event.to_string().as_bytes()).unwrap();
    }
    // The reply that issued the call lands as Claude Code's 100 ms flush would.
    std::thread::sleep(std::time::Duration::from_millis(80));
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new().append(true).open(&transcript).unwrap();
    file.write_all(reply("m1", 140_000, &["toolu_first"], false).as_bytes()).unwrap();
    drop(file);
    let output = child.wait_with_output().unwrap();
    let told = told(&output).expect("the first call's crossing is warned");
    assert!(told.starts_with("CONTEXT WARNING: Usage at 70%."), "{told}");
}

#[test]
fn a_call_whose_answer_cannot_change_does_not_wait_for_its_reply() {
    // Past CRITICAL and told so, with no refire due for a long while: whatever the call's
    // own reply says, the answer is silence. The reply is never written here (`claude -p`
    // with no status line, the transcript behind), so each call that waited for it would
    // spend the whole bounded wait (250 ms) in vain.
    let sandbox = Sandbox::new();
    let transcript = sandbox.home().join("t.jsonl");
    let ids: Vec<String> = (0..9).map(|i| format!("toolu_{i}")).collect();
    let written: Vec<&str> = ids.iter().map(String::as_str).collect();
    std::fs::write(&transcript, reply("m1", 160_000, &written, false)).unwrap();
    let env = [("BATON_DEBOUNCE_CALLS", "100"), ("BATON_HANDOFF_AUTO", "false")];
    let call = |id: &str| {
        let mut event = sandbox.post_tool_use(SESSION);
        event["transcript_path"] = json!(transcript);
        event["tool_use_id"] = json!(id);
        let started = std::time::Instant::now();
        let output = sandbox.run_with(&["hook"], event.to_string().as_bytes(), &env);
        (told(&output), started.elapsed())
    };
    let (first, _) = call("toolu_0");
    assert!(first.unwrap().starts_with("CONTEXT CRITICAL: Usage at 80%"));
    // Eight calls whose replies are written (no wait, whatever the rule), then eight whose
    // replies never come: the second eight must not take the waits' 2 s more.
    let mut written_time = std::time::Duration::ZERO;
    let mut missing_time = std::time::Duration::ZERO;
    for (i, id) in ids.iter().enumerate().skip(1) {
        let (said, took) = call(id);
        assert_eq!(said, None);
        written_time += took;
        let (said, took) = call(&format!("toolu_missing_{i}"));
        assert_eq!(said, None);
        missing_time += took;
    }
    let extra = missing_time.saturating_sub(written_time);
    assert!(
        extra < std::time::Duration::from_millis(1200),
        "the calls whose reply was missing took {extra:?} more than the others ({missing_time:?} against {written_time:?}): they waited"
    );
}

/// baton's state folder cannot be written: a file sits where the folder goes (so even
/// root, as CI runs, cannot create files in it), or, for any other user, the folder is
/// read-only.
fn unwritable_state_dirs() -> Vec<&'static str> {
    if running_as_root() { vec!["a file"] } else { vec!["a file", "read-only"] }
}

fn running_as_root() -> bool {
    std::process::Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

#[test]
fn an_unwritable_state_folder_still_warns_and_doctor_says_why() {
    use std::os::unix::fs::PermissionsExt;
    for kind in unwritable_state_dirs() {
        let sandbox = Sandbox::new();
        let state = sandbox.state_dir();
        std::fs::create_dir_all(state.parent().unwrap()).unwrap();
        if kind == "a file" {
            std::fs::write(&state, "not a folder").unwrap();
        } else {
            std::fs::create_dir_all(&state).unwrap();
            std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o500)).unwrap();
        }
        sandbox.write_bridge(SESSION, 30.0, 0);
        let output = sandbox.hook(&sandbox.post_tool_use(SESSION));
        assert!(output.status.success(), "{kind}");
        let text = told(&output).unwrap_or_else(|| panic!("{kind}: the warning still arrives"));
        assert!(text.starts_with("CONTEXT WARNING: Usage at 70%."), "{kind}: {text}");
        let doctor = sandbox.run(&["doctor"], b"");
        let report = format!("{}{}", common::stdout(&doctor), common::stderr(&doctor));
        assert!(!doctor.status.success(), "{kind}: doctor fails\n{report}");
        assert!(
            report.lines().any(|l| l.contains("state dir") && l.contains("is not writable")),
            "{kind}: doctor says why\n{report}"
        );
        assert!(report.contains("set XDG_STATE_HOME to another folder"), "{kind}: and the fix\n{report}");
        let _ = std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700));
    }
}

#[test]
fn gsd_opt_out_silences_warnings() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.project().join(".planning")).unwrap();
    std::fs::write(
        sandbox.project().join(".planning/config.json"),
        r#"{"hooks": {"context_warnings": false}}"#,
    )
    .unwrap();
    sandbox.write_bridge(SESSION, 10.0, 0);
    assert_eq!(sandbox.hook_told(&sandbox.post_tool_use(SESSION)), None);
}

#[test]
fn baton_disable_silences_everything() {
    let sandbox = Sandbox::new();
    sandbox.write_bridge(SESSION, 10.0, 0);
    let event = sandbox.post_tool_use(SESSION).to_string();
    let output = sandbox.run_with(&["hook"], event.as_bytes(), &[("BATON_DISABLE", "1")]);
    assert!(output.status.success() && output.stdout.is_empty());
}

#[test]
fn forty_parallel_calls_give_exactly_eight_warnings() {
    let sandbox = Sandbox::new();
    sandbox.write_bridge(SESSION, 30.0, 0);
    let event = sandbox.post_tool_use(SESSION).to_string();
    let children: Vec<_> = (0..40)
        .map(|_| {
            // Forty at once on a loaded 2-core machine can wait longer than the default
            // 300 ms for each other's lock (the update is then given up, by design).
            let mut child =
                sandbox.command(&["hook"]).env("BATON_STATE_LOCK_WAIT_MS", "10000").spawn().expect("spawn");
            use std::io::Write;
            child.stdin.take().unwrap().write_all(event.as_bytes()).unwrap();
            child
        })
        .collect();
    let warnings = children
        .into_iter()
        .map(|child| child.wait_with_output().expect("wait"))
        .filter(|output| told(output).is_some())
        .count();
    assert_eq!(warnings, 8, "calls 1, 6, 11, …, 36 warn");
}

#[cfg(unix)]
#[test]
fn planted_symlinks_are_never_followed() {
    use std::os::unix::fs::symlink;
    let sandbox = Sandbox::new();
    let victim = sandbox.home().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();

    // At the state path: the state cannot be kept, so the warning comes undebounced and
    // says so; the victim is untouched.
    sandbox.write_bridge(SESSION, 30.0, 0);
    std::fs::create_dir_all(sandbox.state_path(SESSION).parent().unwrap()).unwrap();
    symlink(&victim, sandbox.state_path(SESSION)).unwrap();
    let told = sandbox.hook_told(&sandbox.post_tool_use(SESSION)).expect("still warned");
    assert!(told.contains("cannot keep its state"), "{told}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");

    // At the bridge path: the statusline does not write through it, the hook does not read it.
    let other = "0b1d0c55-2f6a-4e0b-8c3d-7a5e1f2b3c44";
    let decoy = sandbox.home().join("decoy.json");
    std::fs::write(
        &decoy,
        json!({"remaining_percentage": 5, "used_pct": 95, "timestamp": common::now()}).to_string(),
    )
    .unwrap();
    symlink(&decoy, sandbox.bridge_path(other)).unwrap();
    assert_eq!(sandbox.hook_told(&sandbox.post_tool_use(other)), None, "bridge read through a symlink");
    let mut payload = fixture_json("statusline.json");
    payload["session_id"] = json!(other);
    let output = sandbox.run(&["statusline"], payload.to_string().as_bytes());
    assert!(output.status.success());
    assert!(!output.stdout.is_empty(), "the line is still printed");
    let decoy_text = std::fs::read_to_string(&decoy).unwrap();
    assert!(decoy_text.contains("\"remaining_percentage\":5"), "decoy overwritten: {decoy_text}");
    assert!(std::fs::symlink_metadata(sandbox.bridge_path(other)).unwrap().file_type().is_symlink());

    // At the lock path (in the private session folder): the lock is not taken through
    // it; the hook goes on unlocked and the victim is untouched.
    let third = "1c2d0c55-2f6a-4e0b-8c3d-7a5e1f2b3c44";
    sandbox.write_bridge(third, 30.0, 0);
    let lock = sandbox.state_path(third).with_extension("lock");
    symlink(&victim, &lock).unwrap();
    sandbox.hook(&sandbox.post_tool_use(third));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(std::fs::symlink_metadata(&lock).unwrap().file_type().is_symlink());
}

#[cfg(unix)]
#[test]
fn files_in_the_temp_dir_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::new();
    let output = sandbox.run(&["statusline"], &common::fixture("statusline.json"));
    assert!(output.status.success());
    sandbox.write_bridge(SESSION, 30.0, 0);
    assert!(sandbox.hook_told(&sandbox.post_tool_use(SESSION)).is_some());
    for entry in std::fs::read_dir(sandbox.tmp()).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if name == format!("claude-ctx-{SESSION}.json") {
            continue; // rewritten by the test itself with std::fs::write
        }
        let mode = entry.metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{name} has mode {mode:o}");
    }
}

#[test]
fn the_user_is_told_of_the_first_warning_and_the_escalation_once() {
    let sandbox = Sandbox::new();
    let event = sandbox.post_tool_use(SESSION);
    sandbox.write_bridge(SESSION, 34.0, 0);
    let first = sandbox.hook(&event);
    assert!(told(&first).is_some());
    assert_eq!(notice(&first).as_deref(), Some("baton: context 66 % — the agent was told to wrap up"));
    for _ in 0..5 {
        let later = sandbox.hook(&event);
        assert_eq!(notice(&later), None, "a repeated warning is for the agent only");
    }
    sandbox.write_bridge(SESSION, 24.0, 0);
    let critical = sandbox.hook(&event);
    assert!(told(&critical).unwrap().starts_with("CONTEXT CRITICAL:"));
    let line = notice(&critical).expect("the CRITICAL notice");
    assert!(line.starts_with("baton: context 76 % — "), "{line}");
    assert!(!line.contains('\n'), "{line}");
    let value: serde_json::Value = serde_json::from_slice(&critical.stdout).unwrap();
    assert!(value.get("terminalSequence").is_none(), "no desktop notification unless asked for");
}

#[test]
fn notices_turned_off_leave_only_the_agents_words() {
    let sandbox = Sandbox::new();
    let event = sandbox.post_tool_use(SESSION).to_string();
    sandbox.write_bridge(SESSION, 20.0, 0);
    let output = sandbox.run_with(&["hook"], event.as_bytes(), &[("BATON_NOTICES", "false")]);
    assert!(told(&output).unwrap().starts_with("CONTEXT CRITICAL:"));
    assert_eq!(notice(&output), None);
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(value.as_object().unwrap().len(), 1, "{value}");
}

#[test]
fn a_desktop_notification_at_critical_when_asked_for_on_claude_code_only() {
    let sandbox = Sandbox::new();
    let event = sandbox.post_tool_use(SESSION).to_string();
    sandbox.write_bridge(SESSION, 20.0, 0);
    let output = sandbox.run_with(&["hook"], event.as_bytes(), &[("BATON_NOTICES_DESKTOP", "true")]);
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let sequence = value["terminalSequence"].as_str().expect("a terminalSequence");
    assert!(
        sequence.starts_with("\u{1b}]9;baton: context 80 %") && sequence.ends_with('\u{7}'),
        "{sequence:?}"
    );

    let codex = Sandbox::new();
    let mut event = fixture_json("codex-posttooluse.json");
    event["cwd"] = json!(codex.project());
    codex.write_bridge("cdx-44a1", 20.0, 0);
    let output =
        codex.run_with(&["hook"], event.to_string().as_bytes(), &[("BATON_NOTICES_DESKTOP", "true")]);
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(value.get("terminalSequence").is_none(), "Codex's schema has no terminalSequence: {value}");
    assert!(value["systemMessage"].as_str().is_some_and(|m| m.starts_with("baton: context 80 %")), "{value}");
}
