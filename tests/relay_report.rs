//! `baton report --relay` through the built binary: a run's record and its legs'
//! transcripts in a sandboxed state dir, the hook noting each leg's transcript, a second
//! leg that runs a step of the first again (reported as repeated, the relay's failure)
//! and one that does not (0 repeated), the newest run of the project, `--json`, `--svg`,
//! and the errors.

use crate::common;

use std::path::{Path, PathBuf};

use common::{Sandbox, stderr, stdout};
use serde_json::{Value, json};

/// One step of the task, as the agent's shell command.
fn step(n: u32) -> String {
    format!("echo step-{n:02} >> steps.log && echo DONE step-{n:02}")
}

/// A Claude Code transcript of one leg: the steps' commands, each with its result, the
/// context growing by 20k per reply from `base`, and the todo list marking `done_to` of
/// 6 steps completed; starting at `start` seconds past 10:00.
fn leg_transcript(
    session: &str,
    project: &Path,
    steps: &[u32],
    done_to: u32,
    start: u32,
    base: u64,
) -> Vec<u8> {
    let at = |s: u32| format!("2026-03-01T10:{:02}:{:02}.000Z", s / 60, s % 60);
    let cwd = project.display().to_string();
    let mut lines = vec![json!({"type": "user", "sessionId": session, "cwd": cwd, "timestamp": at(start),
        "message": {"role": "user", "content": "Work through the task list."}})];
    let mut second = start;
    for (i, n) in steps.iter().enumerate() {
        second += 2;
        let id = format!("{session}-t{i}");
        let tokens = base + 20_000 * i as u64;
        lines.push(json!({"type": "assistant", "sessionId": session, "cwd": cwd, "timestamp": at(second),
            "message": {"id": format!("{session}-m{i}"), "role": "assistant", "model": "claude-sonnet-4-5",
                "usage": {"input_tokens": 10, "cache_read_input_tokens": tokens - 10, "output_tokens": 50},
                "content": [{"type": "tool_use", "id": id, "name": "Bash", "input": {"command": step(*n), "description": format!("step {n}")}}]}}));
        second += 1;
        lines.push(json!({"type": "user", "sessionId": session, "cwd": cwd, "timestamp": at(second),
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": format!("DONE step-{n:02}")}]}}));
    }
    let todos: Vec<Value> = (1..=6)
        .map(|n| {
            json!({"content": format!("Step {n}"), "activeForm": format!("Doing step {n}"),
            "status": if n <= done_to { "completed" } else { "pending" }})
        })
        .collect();
    second += 2;
    lines.push(json!({"type": "assistant", "sessionId": session, "cwd": cwd, "timestamp": at(second),
        "message": {"id": format!("{session}-todo"), "role": "assistant", "model": "claude-sonnet-4-5",
            "usage": {"input_tokens": 10, "cache_read_input_tokens": base + 20_000 * steps.len() as u64 - 10, "output_tokens": 50},
            "content": [{"type": "tool_use", "id": format!("{session}-todo"), "name": "TodoWrite", "input": {"todos": todos}}]}}));
    lines.push(json!({"type": "user", "sessionId": session, "cwd": cwd, "timestamp": at(second + 1),
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("{session}-todo"), "content": "ok"}]}}));
    lines.iter().map(|l| format!("{l}\n")).collect::<String>().into_bytes()
}

/// Saves a leg's transcript where Claude Code keeps the project's.
fn save_transcript(sandbox: &Sandbox, session: &str, bytes: &[u8]) -> PathBuf {
    let encoded: String = sandbox
        .project()
        .canonicalize()
        .unwrap()
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let dir = sandbox.claude_dir().join("projects").join(encoded);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{session}.jsonl"));
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The hook, inside leg `leg` of run `run`, at the session's start: notes the session and
/// its transcript in the run's record, as under `baton run`.
fn session_start_in_leg(sandbox: &Sandbox, run: &str, leg: u32, session: &str, transcript: &Path) {
    let event = json!({"hook_event_name": "SessionStart", "session_id": session, "source": "startup",
        "transcript_path": transcript, "cwd": sandbox.project().canonicalize().unwrap()});
    let leg = leg.to_string();
    let output = sandbox.run_with(
        &["hook"],
        event.to_string().as_bytes(),
        &[("BATON_RUN_ID", run), ("BATON_RUN_LEG", leg.as_str())],
    );
    assert!(output.status.success(), "{}", stderr(&output));
}

fn record_path(sandbox: &Sandbox, run: &str) -> PathBuf {
    sandbox.state_dir().join("runs").join(format!("{run}.json"))
}

/// What the runner notes after each leg: ended, the first paused at `peak` % with its
/// handoff pending, the last done.
fn end_legs(sandbox: &Sandbox, run: &str, peak: u32) {
    let path = record_path(sandbox, run);
    let mut record: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let legs = record["legs"].as_array_mut().unwrap();
    let last = legs.len() - 1;
    for (i, leg) in legs.iter_mut().enumerate() {
        leg["ended"] = json!(true);
        if i < last {
            leg["peak_used_pct"] = json!(peak);
            leg["pause_armed"] = json!(true);
            leg["stopped"] = json!(true);
            leg["handoff_pending"] = json!(true);
            leg["handoff"] = json!(".planning/HANDOFF.json");
        }
    }
    std::fs::write(&path, serde_json::to_vec(&record).unwrap()).unwrap();
}

/// 2026-03-01T10:00:00Z, unix ms: the transcripts' clock.
const TEN: u64 = 1_772_359_200_000;

/// What `baton run` itself records of a run and its legs: the host, the project, each
/// leg's start and end and why it ended; here leg 1 met the usage limit and the relay
/// waited 10 s for its reset, then handed over.
fn record_as_the_runner(sandbox: &Sandbox, run: &str) {
    let path = record_path(sandbox, run);
    let mut record: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    record["host"] = json!("claude");
    record["project"] = json!(sandbox.project().canonicalize().unwrap());
    record["command"] = json!(["claude", "-p", "work"]);
    record["invocations"] = json!(1);
    record["end"] = json!({"kind": "done"});
    record["exit_code"] = json!(0);
    let legs = record["legs"].as_array_mut().unwrap();
    legs[0]["started_ms"] = json!(TEN - 1_000);
    legs[0]["ended_ms"] = json!(TEN + 13_000);
    legs[0]["exit_code"] = json!(1);
    legs[0]["end_reason"] = json!({"kind": "usage_limit", "resets_at_ms": TEN + 25_000, "message": "You've hit your 5-hour limit"});
    legs[0]["waits"] = json!([{"start_ms": TEN + 14_000, "end_ms": TEN + 25_000, "why": {"kind": "usage_limit", "until_ms": TEN + 25_000}}]);
    legs[0]["handover_ms"] = json!(4_000);
    legs[0]["progress"] = json!({"commits": 2, "files_changed": 1});
    legs[1]["started_ms"] = json!(TEN + 29_000);
    legs[1]["ended_ms"] = json!(TEN + 43_000);
    legs[1]["exit_code"] = json!(0);
    legs[1]["first_used_pct"] = json!(21);
    legs[1]["briefed_from"] = json!(".planning/HANDOFF.json");
    legs[1]["end_reason"] = json!({"kind": "done"});
    std::fs::write(&path, serde_json::to_vec(&record).unwrap()).unwrap();
}

/// A two-leg relay of run `run`: leg 1 runs `first`, leg 2 runs `second`.
fn two_leg_run(sandbox: &Sandbox, run: &str, first: &[u32], second: &[u32]) {
    let project = sandbox.project().canonicalize().unwrap();
    let s1 = format!("{run}-s1");
    let s2 = format!("{run}-s2");
    let t1 = save_transcript(sandbox, &s1, &leg_transcript(&s1, &project, first, 3, 0, 100_000));
    let t2 = save_transcript(sandbox, &s2, &leg_transcript(&s2, &project, second, 6, 30, 40_000));
    // What `baton run` notes before its first leg.
    let runs = sandbox.state_dir().join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    let start = json!({"version": 2, "host": "claude", "project": project, "invocations": 1});
    std::fs::write(record_path(sandbox, run), start.to_string()).unwrap();
    session_start_in_leg(sandbox, run, 1, &s1, &t1);
    session_start_in_leg(sandbox, run, 2, &s2, &t2);
    end_legs(sandbox, run, 82);
}

fn report_json(sandbox: &Sandbox, args: &[&str]) -> Value {
    let mut all = vec!["report", "--relay"];
    all.extend(args);
    all.push("--json");
    let output = sandbox.run(&all, b"");
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).expect("one JSON object")
}

#[test]
fn the_hook_notes_each_legs_transcript_in_the_runs_record() {
    let sandbox = Sandbox::new();
    two_leg_run(&sandbox, "run-1a-1", &[1, 2, 3], &[4, 5, 6]);
    let record = common::read_json(&record_path(&sandbox, "run-1a-1"));
    assert_eq!(record["legs"][1]["sessions"], json!(["run-1a-1-s2"]));
    let noted = &record["legs"][1]["transcripts"][0];
    assert!(noted.as_str().unwrap().ends_with("run-1a-1-s2.jsonl"), "{record}");
}

#[test]
fn a_relay_that_repeats_nothing_reports_its_legs_and_0_repeated() {
    let sandbox = Sandbox::plain();
    two_leg_run(&sandbox, "run-1b-1", &[1, 2, 3], &[4, 5, 6]);
    let report = report_json(&sandbox, &["run-1b-1"]);
    assert_eq!(report["format"], "baton-relay-report/1");
    assert_eq!(report["run"], "run-1b-1");
    let legs = report["legs"].as_array().unwrap();
    assert_eq!(legs.len(), 2);
    assert_eq!(legs[0]["ended"], json!({"kind": "paused", "used_pct": 82}));
    assert_eq!(legs[1]["ended"], json!({"kind": "done"}));
    assert_eq!(legs[0]["started_at"], "2026-03-01T10:00:00.000Z");
    assert_eq!(legs[0]["ended_at"], "2026-03-01T10:00:12.000Z");
    assert_eq!(legs[1]["started_at"], "2026-03-01T10:00:30.000Z");
    assert_eq!(legs[0]["hand_over_seconds"], 18.0);
    assert_eq!(legs[0]["peak_tokens"], 160_000);
    assert_eq!(legs[0]["completed"]["todos"], 3);
    assert_eq!(legs[1]["completed"]["todos"], 3, "6 done at its end, 3 of them by leg 1");
    assert_eq!(legs[0]["completed"]["steps"], 3);
    assert_eq!(legs[0]["completed"]["files_written"], json!(["steps.log"]));
    assert_eq!(legs[0]["context"].as_array().unwrap().len(), 4);
    assert_eq!(report["repeated_steps"], 0);
    assert_eq!(report["repeated_side_effects"], 0);

    let output = sandbox.run(&["report", "--relay", "run-1b-1"], b"");
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for needle in [
        "Relay run-1b-1: 2 legs in 42 s, on claude",
        "Leg 1  10:00:00 → 10:00:12 (12 s)  paused at 82 %",
        "peak context: 82 % (160,000 tokens)",
        "completed: 3 todos (of 6), 3 steps, 0 commits, wrote steps.log",
        "hand-over to leg 2: 18 s",
        "Leg 2  10:00:30 → 10:00:42 (12 s)  done",
        "Repeated steps: 0",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    assert!(!text.contains("failure"), "{text}");
}

#[test]
fn the_runners_record_gives_why_each_leg_ended_its_times_the_waits_and_the_hand_over() {
    let sandbox = Sandbox::plain();
    two_leg_run(&sandbox, "run-1f-1", &[1, 2, 3], &[4, 5, 6]);
    record_as_the_runner(&sandbox, "run-1f-1");
    let report = report_json(&sandbox, &[]);
    assert_eq!(report["run"], "run-1f-1");
    assert_eq!(report["host"], "claude");
    assert_eq!(report["end"], json!({"kind": "done"}));
    let legs = report["legs"].as_array().unwrap();
    assert_eq!(legs[0]["ended"]["kind"], "usage_limit");
    assert_eq!(legs[0]["ended_because"], "usage limit until 10:00:25 UTC (You've hit your 5-hour limit)");
    assert_eq!(legs[0]["started_at"], "2026-03-01T09:59:59.000Z");
    assert_eq!(legs[0]["ended_at"], "2026-03-01T10:00:13.000Z");
    assert_eq!(legs[0]["hand_over_seconds"], 4.0);
    assert_eq!(legs[0]["waits"][0]["seconds"], 11.0);
    assert_eq!(legs[0]["waits"][0]["why"], "usage_limit");
    assert_eq!(legs[0]["completed"]["commits"], 2, "the runner's count from the repository");
    assert_eq!(legs[1]["ended"]["kind"], "done");
    assert_eq!(report["repeated_steps"], 0);

    let text = stdout(&sandbox.run(&["report", "--relay"], b""));
    for needle in [
        "ended: done, exit 0",
        "Leg 1  09:59:59 → 10:00:13 (14 s)  usage limit until 10:00:25 UTC (You've hit your 5-hour limit)",
        "waited 11 s for the usage limit's reset at 10:00:25 UTC",
        "hand-over to leg 2: 4.0 s",
        "Leg 2  10:00:29 → 10:00:43 (14 s)  done",
        "briefed from: .planning/HANDOFF.json",
        ", 21 % at its first request",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    let chart = sandbox.root().join("relay.svg");
    let output = sandbox.run(&["report", "--relay", "--svg", chart.to_str().unwrap()], b"");
    assert!(output.status.success(), "{}", stderr(&output));
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.contains("class=\"wait\"") && svg.contains(">wait 11 s (usage limit)<"), "{svg}");
}

#[test]
fn a_second_leg_that_reruns_a_step_of_the_first_is_the_relays_failure() {
    let sandbox = Sandbox::plain();
    two_leg_run(&sandbox, "run-1c-1", &[1, 2, 3], &[3, 4, 5, 6]);
    let report = report_json(&sandbox, &["run-1c-1"]);
    assert_eq!(report["repeated_steps"], 1);
    assert_eq!(report["repeated_side_effects"], 1);
    let repeat = &report["repeated"][0];
    assert_eq!((repeat["leg"].as_u64(), repeat["of_leg"].as_u64()), (Some(2), Some(1)));
    assert_eq!(repeat["tool"], "Bash");
    assert_eq!(repeat["what"], step(3));
    assert_eq!(repeat["effect"], "side_effect");

    let output = sandbox.run(&["report", "--relay", "run-1c-1"], b"");
    let text = stdout(&output);
    assert!(text.contains("Repeated steps: 1 (1 with a side effect)"), "{text}");
    assert!(text.contains(&format!("leg 2 again (first in leg 1): Bash {}  side effect", step(3))), "{text}");
    assert!(
        text.contains("The relay's own failure: the relay repeated 1 side-effecting step: leg 2 ran again what leg 1 had done"),
        "{text}"
    );
}

#[test]
fn without_a_run_the_newest_run_of_the_project_is_reported() {
    let sandbox = Sandbox::plain();
    two_leg_run(&sandbox, "run-10-1", &[1, 2, 3], &[3, 4, 5, 6]);
    two_leg_run(&sandbox, "run-20-1", &[1, 2, 3], &[4, 5, 6]);
    // A newer run of another project is not this one's.
    let other = sandbox.root().join("elsewhere");
    std::fs::create_dir_all(&other).unwrap();
    let runs = sandbox.state_dir().join("runs");
    std::fs::write(
        runs.join("run-30-1.json"),
        json!({"version": 2, "host": "claude", "project": other, "legs": [{"leg": 1, "sessions": ["x"]}]})
            .to_string(),
    )
    .unwrap();
    let report = report_json(&sandbox, &[]);
    assert_eq!(report["run"], "run-20-1");
    assert_eq!(report["repeated_steps"], 0);
    // A start of the id is enough when it names one run.
    assert_eq!(report_json(&sandbox, &["run-10"])["run"], "run-10-1");
}

#[test]
fn the_chart_shows_the_legs_and_the_hand_over() {
    let sandbox = Sandbox::plain();
    two_leg_run(&sandbox, "run-1d-1", &[1, 2, 3], &[4, 5, 6]);
    let chart = sandbox.root().join("relay.svg");
    let output = sandbox.run(&["report", "--relay", "run-1d-1", "--svg", chart.to_str().unwrap()], b"");
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("Chart written to"), "{}", stdout(&output));
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""), "{svg}");
    assert_eq!(svg.matches("class=\"leg\"").count(), 2);
    assert_eq!(svg.matches("class=\"context\"").count(), 2);
    assert!(svg.contains(">hand-over 18 s<"), "{svg}");
    assert!(svg.contains(">paused at 82 %<") && svg.contains(">done<"), "{svg}");
    assert!(svg.trim_end().ends_with("</svg>") && !svg.contains("<script"));
}

#[test]
fn unknown_runs_and_bad_ids_are_clear_errors() {
    let sandbox = Sandbox::plain();
    let output = sandbox.run(&["report", "--relay"], b"");
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("baton report --relay: no relay has run here yet"),
        "{}",
        stderr(&output)
    );

    two_leg_run(&sandbox, "run-1e-1", &[1], &[2]);
    let output = sandbox.run(&["report", "--relay", "run-ffff-9"], b"");
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("no run run-ffff-9: looked for "), "{}", stderr(&output));

    let output = sandbox.run(&["report", "--relay", "../etc/passwd"], b"");
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("is not a run id"), "{}", stderr(&output));

    let elsewhere = sandbox.root().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let output = sandbox.run(&["report", "--relay", "--cwd", elsewhere.to_str().unwrap()], b"");
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(
        err.contains("no relay of ")
            && err.contains("name one: baton report --relay RUN (the newest is run-1e-1)"),
        "{err}"
    );

    let output = sandbox.run(&["report", "--relay", "run-1e-1", "--session", "x"], b"");
    assert_eq!(output.status.code(), Some(2), "--relay and --session do not go together");

    let help = stdout(&sandbox.run(&["report", "--help"], b""));
    assert!(help.contains("--relay [<RUN>]") && help.contains("newest run"), "{help}");
}
