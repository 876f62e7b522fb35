//! OpenCode's and Kilo CLI's handoff facts, black-box: when baton writes the CRITICAL
//! handoff its answer asks baton's plugin for the session's messages (`baton.
//! send_messages`, nowhere else), and the plugin's `HandoffFacts` event rewrites that
//! handoff with the commands run, the requests and the agent's last words; it prints
//! nothing, and writes nothing without a recorded CRITICAL handoff or in a subagent.

use serde_json::{Value, json};

use crate::common::{Sandbox, TestRepo, read_json, stdout};

const SESSION: &str = "ses_dcd65f71fffeIBHGD8RrQIOkSf";

fn project(sb: &Sandbox) -> std::path::PathBuf {
    let root = sb.project();
    TestRepo::init(&root, &[("README.md", "shop api\n")]);
    root
}

fn report(host: &str, input: u64) -> Value {
    json!({"input": input, "cache_read": 0, "cache_write": 0, "output": 20, "model": "standin/standin-model",
           "context_limit": 200_000, "output_limit": 8192, "completed_at": 1_796_144_511_907u64, "host": host})
}

fn tool_call(sb: &Sandbox, host: &str, input: u64, agent: Option<&str>) -> std::process::Output {
    call_n(sb, host, input, agent, 2)
}

fn call_n(sb: &Sandbox, host: &str, input: u64, agent: Option<&str>, n: u32) -> std::process::Output {
    let mut event = json!({
        "hook_event_name": "PostToolUse", "session_id": SESSION, "cwd": sb.project(),
        "prompt_id": "msg_1", "tool_name": "bash", "tool_use_id": format!("call_{n:02}"), "opencode": report(host, input),
    });
    if let Some(agent) = agent {
        event["agent_id"] = json!(agent);
    }
    sb.hook(&event)
}

fn messages() -> Value {
    json!([
        {"role": "user", "id": "msg_1", "time": 1_796_144_500_000u64,
         "parts": [{"type": "text", "text": "Add the client limits file, then run the limit tests."},
                   {"type": "text", "synthetic": true, "text": "CONTEXT CRITICAL: not the user's words"}]},
        {"role": "assistant", "id": "msg_2", "time": 1_796_144_501_000u64, "model": "standin/standin-model",
         "parts": [{"type": "text", "text": "Progress: notes/limits.md is written; step 4 next."},
                   {"type": "tool", "tool": "bash", "callID": "call_01", "status": "completed",
                    "input": {"command": "echo step-04 >> steps.log", "description": "Run step 04"},
                    "output": "DONE step-04", "exit": 0},
                   {"type": "tool", "tool": "bash", "callID": "call_02", "status": "completed",
                    "input": {"command": "ls /baton-e2e-missing-folder"}, "output": "ls: cannot access", "exit": 2}]}
    ])
}

fn handoff_facts(sb: &Sandbox, host: &str, agent: Option<&str>) -> std::process::Output {
    let mut event = json!({
        "hook_event_name": "HandoffFacts", "session_id": SESSION, "cwd": sb.project(),
        "opencode": report(host, 160_000), "opencode_messages": messages(),
    });
    if let Some(agent) = agent {
        event["agent_id"] = json!(agent);
    }
    sb.hook(&event)
}

fn answer(output: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(output)).expect("one JSON envelope")
}

#[test]
fn the_critical_answer_asks_for_the_messages_and_they_rewrite_the_handoff() {
    for host in ["opencode", "kilo"] {
        let sb = Sandbox::new();
        let root = project(&sb);
        // Below CRITICAL the answer asks for nothing.
        let warned = answer(&tool_call(&sb, host, 135_000, None));
        assert!(warned.get("baton").is_none(), "{warned}");
        // 160k of 200k: CRITICAL, the handoff written, the messages asked for.
        let critical = answer(&tool_call(&sb, host, 160_000, None));
        let context = critical.pointer("/hookSpecificOutput/additionalContext").and_then(Value::as_str);
        assert!(context.is_some_and(|c| c.starts_with("CONTEXT CRITICAL")), "{critical}");
        assert_eq!(critical["baton"], json!({"send_messages": true}), "{critical}");
        let path = root.join(".planning").join("HANDOFF.json");
        let before = read_json(&path);
        assert!(!before["baton"]["commands_run"].to_string().contains("steps.log"), "{before}");

        let out = handoff_facts(&sb, host, None);
        assert!(out.status.success());
        assert_eq!(stdout(&out), "", "HandoffFacts prints nothing");
        let after = read_json(&path);
        let baton = &after["baton"];
        let commands = baton["commands_run"].to_string();
        assert!(commands.contains("echo step-04 >> steps.log"), "{after}");
        assert!(commands.contains("ls /baton-e2e-missing-folder"), "{after}");
        assert_eq!(baton["last_request"], "Add the client limits file, then run the limit tests.", "{after}");
        assert_eq!(baton["transcript_format"], "opencode_messages", "{after}");
        assert_eq!(baton["session_id"], SESSION);
        let markdown = std::fs::read_to_string(root.join(".planning").join(".continue-here.md")).unwrap();
        assert!(markdown.contains("`echo step-04 ›› steps.log` (exit 0)"), "{markdown}");
        assert!(!markdown.contains("not the user's words"), "a synthetic part is baton's own: {markdown}");
    }
}

#[test]
fn the_pauses_stop_asks_again_and_keeps_the_facts_it_has() {
    let sb = Sandbox::new();
    let root = project(&sb);
    let _ = tool_call(&sb, "opencode", 160_000, None);
    let _ = handoff_facts(&sb, "opencode", None);
    let path = root.join(".planning").join("HANDOFF.json");
    // The grace calls, then the stop (`continue: false`), which asks for the messages again.
    let stop = (3..8)
        .map(|n| stdout(&call_n(&sb, "opencode", 160_000 + u64::from(n) * 500, None, n)))
        .find_map(|text| serde_json::from_str::<Value>(&text).ok().filter(|a| a["continue"] == json!(false)));
    let stop = stop.expect("the pause's stop within the grace calls");
    assert_eq!(stop["baton"], json!({"send_messages": true}), "{stop}");
    // Until they come, the handoff keeps the facts the CRITICAL one got from them.
    let handoff = read_json(&path);
    assert!(handoff["baton"]["commands_run"].to_string().contains("echo step-04 >> steps.log"), "{handoff}");
}

#[test]
fn messages_without_a_recorded_critical_handoff_write_nothing() {
    let sb = Sandbox::new();
    let root = project(&sb);
    let out = handoff_facts(&sb, "opencode", None);
    assert!(out.status.success() && stdout(&out).is_empty(), "{}", stdout(&out));
    assert!(!root.join(".planning").exists(), "a forged event wrote a handoff");
    // After the session ended (a late event), the recorded handoff is not rewritten.
    let sb2 = Sandbox::new();
    let root2 = project(&sb2);
    let _ = tool_call(&sb2, "opencode", 160_000, None);
    let path = root2.join(".planning").join("HANDOFF.json");
    let before = std::fs::read(&path).unwrap();
    let end =
        json!({"hook_event_name": "SessionEnd", "session_id": SESSION, "cwd": root2, "reason": "deleted"});
    assert!(stdout(&sb2.hook(&end)).is_empty());
    let out = handoff_facts(&sb2, "opencode", None);
    assert!(stdout(&out).is_empty());
    assert_eq!(std::fs::read(&path).unwrap(), before, "a late event rewrote the handoff");
    // Below the thresholds nothing is recorded either.
    let _ = tool_call(&sb, "opencode", 100_000, None);
    let out = handoff_facts(&sb, "opencode", None);
    assert!(stdout(&out).is_empty() && !root.join(".planning").exists());
}

#[test]
fn a_subagents_messages_and_other_hosts_events_write_nothing() {
    let sb = Sandbox::new();
    let root = project(&sb);
    // A subagent's CRITICAL writes no handoff and asks for nothing.
    let out = tool_call(&sb, "opencode", 160_000, Some("ses_child"));
    let text = stdout(&out);
    assert!(!text.contains("send_messages"), "{text}");
    let out = handoff_facts(&sb, "opencode", Some("ses_child"));
    assert!(stdout(&out).is_empty() && !root.join(".planning").exists());
    // The session's own CRITICAL, then a subagent's messages: the handoff is not rewritten.
    let _ = tool_call(&sb, "opencode", 160_000, None);
    let path = root.join(".planning").join("HANDOFF.json");
    let before = std::fs::read(&path).unwrap();
    let out = handoff_facts(&sb, "opencode", Some("ses_child"));
    assert!(stdout(&out).is_empty());
    assert_eq!(std::fs::read(&path).unwrap(), before, "a subagent's messages rewrote the handoff");
    // Claude Code's CRITICAL answer carries no `baton` field, and its event named so is ignored.
    let sb = Sandbox::new();
    let root = project(&sb);
    let session = "claude-session-1";
    sb.write_bridge(session, 18.0, 0);
    let mut event = sb.post_tool_use(session);
    event["cwd"] = json!(root);
    let out = sb.hook(&event);
    let text = stdout(&out);
    assert!(text.contains("CONTEXT CRITICAL") && !text.contains("\"baton\""), "{text}");
    let before = std::fs::read(root.join(".planning").join("HANDOFF.json")).unwrap();
    let forged = json!({"hook_event_name": "HandoffFacts", "session_id": session, "cwd": root,
                        "opencode_messages": messages()});
    let out = sb.hook(&forged);
    assert!(stdout(&out).is_empty());
    assert_eq!(std::fs::read(root.join(".planning").join("HANDOFF.json")).unwrap(), before);
}
