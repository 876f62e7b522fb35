//! Snapshot tests (insta) of the long texts baton says: the WARNING and CRITICAL
//! context the agent is given, the SessionStart brief, `baton doctor` and `baton report`.
//! The other tests check what these texts must contain; a snapshot shows, in review, any
//! change to the rest of the wording. Sandbox paths, the version and clock-dependent
//! figures are replaced by placeholders so a snapshot is the same on every machine.
//! Update with `INSTA_UPDATE=always cargo test --test it snapshots::` (or `cargo insta
//! review`); under `CI=true` a missing or changed snapshot fails.

use crate::common;

use common::{SESSION, Sandbox, TestRepo, gsd_planning, stderr, stdout, told, transcript_for};
use serde_json::json;

/// `text` with the sandbox's paths, the binary's path and the version replaced.
fn normalise(sandbox: &Sandbox, text: &str) -> String {
    let mut text = text.to_string();
    let mut paths = vec![(common::baton_path(), "[BATON]".to_string())];
    let root = sandbox.root();
    if let Ok(real) = root.canonicalize() {
        paths.push((real.to_string_lossy().into_owned(), "[SANDBOX]".to_string()));
    }
    paths.push((root.to_string_lossy().into_owned(), "[SANDBOX]".to_string()));
    for (from, to) in paths {
        text = text.replace(&from, &to);
    }
    let text = text.replace(env!("CARGO_PKG_VERSION"), "[VERSION]");
    mask_durations(&mask_short_hashes(&text))
}

/// Seven-hex-digit words (short commit ids, which change with the commit's time) as
/// `[SHA]`.
fn mask_short_hashes(text: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.len() == 7 && word.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()) {
            out.push_str("[SHA]");
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Measured times (`6.3 ms`, `506 ms`) as `[N] ms`.
fn mask_durations(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(" ms") {
        let (before, after) = rest.split_at(at);
        let number_len = before.chars().rev().take_while(|c| c.is_ascii_digit() || *c == '.').count();
        if number_len > 0 {
            out.push_str(&before[..before.len() - number_len]);
            out.push_str("[N]");
        } else {
            out.push_str(before);
        }
        out.push_str(" ms");
        rest = &after[3..];
    }
    out.push_str(rest);
    out
}

fn project_at_critical(sandbox: &Sandbox) -> (TestRepo, serde_json::Value) {
    let repo =
        TestRepo::init(&sandbox.project(), &[("src/app.ts", "app\n"), ("src/limiter.ts", "limiter\n")]);
    gsd_planning(&sandbox.project());
    repo.commit_all("plan");
    repo.write("src/limiter.ts", "limiter, half done\n");
    let transcript = transcript_for(&sandbox.project(), &sandbox.home().join("t.jsonl"));
    let mut event = sandbox.post_tool_use(SESSION);
    event["transcript_path"] = json!(transcript);
    (repo, event)
}

#[test]
fn the_warning() {
    let sandbox = Sandbox::new();
    sandbox.write_bridge(SESSION, 30.0, 0);
    let text = told(&sandbox.hook(&sandbox.post_tool_use(SESSION))).expect("warned");
    insta::assert_snapshot!(normalise(&sandbox, &text));
}

#[test]
fn the_critical_warning_with_the_handoff_written() {
    let sandbox = Sandbox::new();
    let (_repo, event) = project_at_critical(&sandbox);
    sandbox.write_bridge(SESSION, 20.0, 0);
    let text = told(&sandbox.hook(&event)).expect("warned");
    insta::assert_snapshot!(normalise(&sandbox, &text));
}

#[test]
fn the_critical_warning_outside_a_repository() {
    let sandbox = Sandbox::new();
    sandbox.write_bridge(SESSION, 20.0, 0);
    let text = told(&sandbox.hook(&sandbox.post_tool_use(SESSION))).expect("warned");
    insta::assert_snapshot!(normalise(&sandbox, &text));
}

#[test]
fn the_session_start_brief() {
    let sandbox = Sandbox::new();
    let (_repo, event) = project_at_critical(&sandbox);
    sandbox.write_bridge(SESSION, 20.0, 0);
    told(&sandbox.hook(&event)).expect("the handoff is written at CRITICAL");
    let next = "0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6";
    let brief = told(&sandbox.hook(&json!({
        "session_id": next,
        "transcript_path": sandbox.home().join(format!("{next}.jsonl")),
        "cwd": sandbox.project(),
        "hook_event_name": "SessionStart",
        "source": "startup",
    })))
    .expect("the brief");
    insta::assert_snapshot!(normalise(&sandbox, &brief));
}

#[test]
fn doctor_after_install() {
    let sandbox = Sandbox::new();
    let installed = sandbox.run(&["install"], b"");
    assert!(installed.status.success(), "{}", stderr(&installed));
    let output = sandbox.run(&["doctor"], b"");
    insta::assert_snapshot!(normalise(&sandbox, &stdout(&output)));
}

#[test]
fn the_text_report() {
    let sandbox = Sandbox::new();
    let path = sandbox.home().join("sample.jsonl");
    std::fs::write(&path, common::fixture("transcript.jsonl")).unwrap();
    let output = sandbox.run(&["report", "--transcript", path.to_str().unwrap()], b"");
    assert!(output.status.success(), "{}", stderr(&output));
    insta::assert_snapshot!(normalise(&sandbox, &stdout(&output)));
}
