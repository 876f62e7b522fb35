//! Issue 32, finding 1: terminal escape sequences planted in text baton did not write (a
//! repository's files and folder names, a transcript, a host's payload, git) never reach
//! the terminal raw. Each test plants OSC 52 (the clipboard), OSC 8 (a link), `ESC [ 2J`,
//! OSC 0 (the title) and U+009B (C1 CSI) in every field a command prints, then checks
//! that its stdout and stderr hold no control character but newlines and baton's own
//! colours, and that the planted text was shown (in its visible form, `\u001b` …), so no
//! test passes by printing nothing.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{SESSION, Sandbox, TestRepo, gsd_planning, told};
use serde_json::{Value, json};

/// The sequences of the issue, one after the other, and a bidirectional override.
const PLANT: &str = "\u{1b}]52;c;ZXZpbA==\u{7}\u{1b}]8;;mailto:x@evil.invalid\u{1b}\\click\u{1b}]8;;\u{1b}\\\u{1b}[2J\u{1b}]0;pwned\u{7}\u{9b}31m\u{202e}gnp.exe";

/// How the start of [`PLANT`] reads once shown.
const SHOWN: &str = "\\u001b]52;c;ZXZpbA==\\u0007";

/// Where in `text` a control character other than a newline, or an ESC that does not
/// start a colour (`ESC [` digits `m`), is: `None` when there is none.
fn raw_control(text: &str) -> Option<(usize, char)> {
    text.char_indices().find(|(at, c)| match c {
        '\n' => false,
        '\u{1b}' => {
            let rest = &text[at + 1..];
            let params = rest
                .strip_prefix('[')
                .map(|r| r.bytes().take_while(|b| b.is_ascii_digit() || *b == b';').count());
            params.is_none_or(|n| rest.as_bytes().get(1 + n) != Some(&b'm'))
        }
        c => c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'),
    })
}

/// Asserts that `text` holds no raw control character but newlines and colours.
#[track_caller]
fn assert_no_raw_control(what: &str, text: &str) {
    if let Some((at, c)) = raw_control(text) {
        let before: String =
            text[..at].chars().rev().take(60).collect::<Vec<_>>().into_iter().rev().collect();
        let after: String = text[at..].chars().take(20).collect();
        panic!("{what}: raw {c:?} at byte {at}: …{before:?}{after:?}…");
    }
}

/// Asserts both streams are clean, and that the planted text was shown on one of them.
#[track_caller]
fn assert_shown_escaped(what: &str, output: &Output) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_no_raw_control(&format!("{what} (stdout)"), &stdout);
    assert_no_raw_control(&format!("{what} (stderr)"), &stderr);
    // In JSON, the visible form's backslash is escaped in its turn.
    let in_json = SHOWN.replace('\\', "\\\\");
    assert!(
        [SHOWN, in_json.as_str()].iter().any(|shown| stdout.contains(shown) || stderr.contains(shown)),
        "{what}: the planted text is not shown at all:\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
}

/// A folder whose name holds the sequences, inside the sandbox.
fn planted_folder(sandbox: &Sandbox) -> PathBuf {
    let dir = sandbox.root().join(format!("proj{PLANT}"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// [`PLANT`] as it sits inside a JSON string.
fn json_escaped(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap();
    quoted[1..quoted.len() - 1].to_string()
}

/// The sample transcript with its project folder moved to `project` (whose name needs
/// escaping inside JSON).
fn transcript_in(project: &Path, dest: &Path) -> PathBuf {
    let text = String::from_utf8(common::fixture("transcript.jsonl")).unwrap();
    std::fs::write(dest, text.replace("/home/dev/shop-api", &json_escaped(&project.to_string_lossy())))
        .unwrap();
    dest.to_path_buf()
}

fn run_in(sandbox: &Sandbox, dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut command = sandbox.command(args);
    command.current_dir(dir);
    let mut child = command.spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn statusline_subagent_rows_show_a_planted_description_escaped() {
    let sandbox = Sandbox::new();
    for colour in [true, false] {
        let payload = json!({"columns": 400, "tasks": [
            {"id": "a1", "agentType": PLANT, "label": PLANT, "model": "claude-sonnet-4-5", "contextWindowSize": 200000, "tokenCount": 46000},
            {"id": "a2", "agentType": "Explore", "description": PLANT, "contextWindowSize": 200000, "tokenCount": 160000},
        ]});
        let env: &[(&str, &str)] = if colour { &[] } else { &[("NO_COLOR", "1")] };
        let output = sandbox.run_with(&["statusline", "--subagents"], payload.to_string().as_bytes(), env);
        let stdout = String::from_utf8(output.stdout.clone()).unwrap();
        assert!(!stdout.contains('\u{9b}'), "no raw C1 even inside the JSON: {stdout:?}");
        let rows: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(rows.len(), 2, "{stdout}");
        for row in &rows {
            let content = row["content"].as_str().unwrap();
            assert_no_raw_control("a subagent row as the host shows it", content);
            assert!(content.contains(SHOWN), "{content:?}");
        }
    }
}

#[test]
fn statusline_shows_a_planted_model_folder_branch_and_task_escaped() {
    let sandbox = Sandbox::new();
    let project = planted_folder(&sandbox);
    TestRepo::init(&project, &[("a.txt", "a\n")]);
    std::fs::write(project.join(".git/HEAD"), format!("ref: refs/heads/x{PLANT}\n")).unwrap();
    let transcript = transcript_in(&project, &sandbox.home().join("t.jsonl"));
    let text = std::fs::read_to_string(&transcript).unwrap();
    std::fs::write(
        &transcript,
        text.replace("Wiring the limiter into the orders routes", &json_escaped(PLANT)),
    )
    .unwrap();
    let payload = json!({
        "session_id": SESSION, "transcript_path": transcript, "cwd": project,
        "model": {"id": "claude-opus-4-5", "display_name": format!("Opus{PLANT}")},
        "workspace": {"current_dir": project, "project_dir": project},
        "context_window": {"context_window_size": 200000, "used_percentage": 40, "remaining_percentage": 60},
    });
    let segments = ("BATON_STATUSLINE_SEGMENTS", "model,project,branch,task,meter");
    for env in [&[segments][..], &[segments, ("NO_COLOR", "1")][..], &[segments, ("COLUMNS", "60")][..]] {
        let output = sandbox.run_with(&["statusline"], payload.to_string().as_bytes(), env);
        let line = String::from_utf8_lossy(&output.stdout).into_owned();
        assert_no_raw_control(&format!("the status line with {env:?}"), &line);
        if env.len() == 1 {
            // Each of the four fields, shown: the model, the folder, the branch, the task.
            assert!(line.matches("\\u001b]52").count() >= 4, "{line}");
        }
    }
}

/// A repository with a GSD phase where session SESSION hit CRITICAL and left a handoff
/// (trusted: this machine wrote it), in `project`.
fn paused_project(sandbox: &Sandbox, project: &Path) -> TestRepo {
    let repo = TestRepo::init(project, &[("src/app.ts", "app\n")]);
    gsd_planning(project);
    repo.commit_all("plan");
    sandbox.write_bridge(SESSION, 20.0, 0);
    let event = json!({
        "session_id": SESSION, "transcript_path": Value::Null, "cwd": project,
        "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {}, "tool_response": {},
    });
    let output = sandbox.hook(&event);
    let context = told(&output).unwrap();
    assert!(context.starts_with("CONTEXT CRITICAL"));
    assert_no_raw_control("the CRITICAL context", &context);
    // The user's notice names the handoff's path, which holds the folder's name.
    let notice: Value = serde_json::from_slice(&output.stdout).unwrap();
    let notice = notice["systemMessage"].as_str().unwrap();
    assert_no_raw_control("the CRITICAL notice", notice);
    repo
}

#[test]
fn resume_check_and_resume_show_planted_constraints_and_paths_escaped() {
    let sandbox = Sandbox::new();
    let project = planted_folder(&sandbox);
    paused_project(&sandbox, &project);
    let md = project.join(".planning/phases/03-rate-limiting/.continue-here.md");
    let text = std::fs::read_to_string(&md).unwrap();
    std::fs::write(&md, format!("{text}\n## Critical Anti-Patterns\n\n| Pattern | Description | Severity | Prevention Mechanism |\n|---|---|---|---|\n| M{PLANT} | d{PLANT} | blocking | p{PLANT} |\n\n- [ ] CONSTRAINT: real-redis{PLANT} — mocks hid it\n")).unwrap();
    let cwd = project.to_str().unwrap();
    let check = sandbox.run(&["resume", "--check", "--cwd", cwd], b"");
    assert_eq!(check.status.code(), Some(1));
    assert_shown_escaped("baton resume --check", &check);
    assert_shown_escaped(
        "baton resume --check --json",
        &sandbox.run(&["resume", "--check", "--json", "--cwd", cwd], b""),
    );

    // The brief quotes the handoff as one line of data; its file names hold the folder.
    let shown = sandbox.run(&["resume", "--cwd", cwd], b"");
    assert_no_raw_control("baton resume", &String::from_utf8_lossy(&shown.stdout));
    let json_out = sandbox.run(&["resume", "--json", "--cwd", cwd], b"");
    assert_shown_escaped("baton resume --json", &json_out);
    let done = sandbox.run(&["resume", "--done", "--cwd", cwd], b"");
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    assert_no_raw_control("baton resume --done", &String::from_utf8_lossy(&done.stdout));

    // No handoff any more: the folder is named, and loose notes in a planted phase folder.
    let loose = project.join(format!(".planning/phases/04{PLANT}/.continue-here.md"));
    std::fs::create_dir_all(loose.parent().unwrap()).unwrap();
    std::fs::write(&loose, "notes").unwrap();
    assert_shown_escaped("baton resume without a handoff", &sandbox.run(&["resume", "--cwd", cwd], b""));
}

#[test]
fn doctor_and_config_show_planted_keys_segments_values_and_paths_escaped() {
    let sandbox = Sandbox::new();
    let project = planted_folder(&sandbox);
    common::write(
        &project.join(".claude/baton.json"),
        &json!({
            format!("k{PLANT}"): 1,
            "statusline": {"segments": ["meter", format!("s{PLANT}")], "second_line": [format!("t{PLANT}")]},
            "warn_remaining": format!("v{PLANT}"),
            "handoff": {"dir": format!("d{PLANT}")},
        })
        .to_string(),
    );
    common::write(
        &project.join(".planning/config.json"),
        &json!({format!("g{PLANT}"): true, "hooks": {"context_warnings": format!("w{PLANT}")}}).to_string(),
    );
    std::fs::write(project.join(".claude/baton.yaml"), "x: 1").unwrap();
    let cwd = project.to_str().unwrap();
    for args in [&["config", "--cwd", cwd][..], &["config", "--json", "--cwd", cwd][..]] {
        let output = sandbox.run(args, b"");
        assert_shown_escaped(&format!("baton {args:?}"), &output);
        if args.contains(&"--json") {
            let value: Value = serde_json::from_slice(&output.stdout).expect("still JSON");
            assert!(value["errors"].as_array().is_some_and(|e| !e.is_empty()), "{value}");
        }
    }
    for args in [&["doctor"][..], &["doctor", "--json"][..]] {
        let output = run_in(&sandbox, &project, args, b"");
        assert_shown_escaped(&format!("baton {args:?}"), &output);
    }
}

#[test]
fn pause_shows_a_planted_phase_folder_and_project_folder_escaped() {
    let sandbox = Sandbox::new();
    let project = planted_folder(&sandbox);
    let repo = TestRepo::init(&project, &[("src/app.ts", "app\n")]);
    gsd_planning(&project);
    let phases = project.join(".planning/phases");
    std::fs::rename(phases.join("03-rate-limiting"), phases.join(format!("03-rate{PLANT}"))).unwrap();
    repo.commit_all("plan");
    let cwd = project.to_str().unwrap();
    for mode in ["branch", "ref", "off"] {
        let output = sandbox.run(&["pause", "--checkpoint", mode, "--cwd", cwd, "--session", SESSION], b"");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        assert_shown_escaped(&format!("baton pause --checkpoint {mode}"), &output);
    }
    let output = sandbox.run(&["pause", "--json", "--cwd", cwd, "--session", SESSION], b"");
    assert_shown_escaped("baton pause --json", &output);
    // `checkpoint list` shows git's text: a baton ref whose commit says anything.
    let head = repo.head_commit();
    let sig = repo.repo.signature().unwrap();
    let commit =
        repo.repo.commit(None, &sig, &sig, &format!("wip{PLANT}"), &head.tree().unwrap(), &[&head]).unwrap();
    repo.repo.reference("refs/baton/wip/planted", commit, true, "test").unwrap();
    assert_shown_escaped("baton checkpoint list", &sandbox.run(&["checkpoint", "list", "--cwd", cwd], b""));
    let refs = sandbox.run(&["checkpoint", "list", "--json", "--cwd", cwd], b"");
    assert_no_raw_control("baton checkpoint list --json", &String::from_utf8_lossy(&refs.stdout));
}

#[test]
fn status_and_report_show_a_planted_project_folder_and_transcript_escaped() {
    let sandbox = Sandbox::new();
    let project = planted_folder(&sandbox);
    let cwd = project.to_str().unwrap();
    // No session yet: the error names the folder.
    let output = sandbox.run(&["status", "--cwd", cwd], b"");
    assert_eq!(output.status.code(), Some(1));
    assert_shown_escaped("baton status without a session", &output);
    let output = sandbox.run(&["report", "--cwd", cwd], b"");
    assert_shown_escaped("baton report without a session", &output);

    // A session of this folder, with a transcript whose model and tools say anything.
    let encoded: String =
        project.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let claude_project = sandbox.claude_dir().join("projects").join(encoded);
    std::fs::create_dir_all(&claude_project).unwrap();
    let transcript = transcript_in(&project, &claude_project.join(format!("{SESSION}.jsonl")));
    let text = std::fs::read_to_string(&transcript)
        .unwrap()
        .replace("claude-opus-4-5-20251101", &format!("claude-opus{}", json_escaped(PLANT)))
        .replace("npm test -- limiter", &format!("npm test{}", json_escaped(PLANT)));
    std::fs::write(&transcript, text).unwrap();
    // A handoff the repository holds, with a planted status and time stamp.
    common::write(
        &project.join(".planning/HANDOFF.json"),
        &json!({"version": "1.0", "status": format!("paused{PLANT}"), "timestamp": format!("t{PLANT}"), "baton": {"session_id": format!("s{PLANT}")}}).to_string(),
    );
    sandbox.write_bridge(SESSION, 60.0, 0);
    for args in [
        &["status", "--cwd", cwd][..],
        &["status", "--session", SESSION, "--cwd", cwd][..],
        &["status", "--json", "--cwd", cwd][..],
        &["report", "--transcript", transcript.to_str().unwrap()][..],
        &["report", "--json", "--transcript", transcript.to_str().unwrap()][..],
    ] {
        let output = sandbox.run(args, b"");
        assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        assert_no_raw_control(&format!("baton {args:?}"), &String::from_utf8_lossy(&output.stdout));
        assert_no_raw_control(&format!("baton {args:?}"), &String::from_utf8_lossy(&output.stderr));
    }
    let status = sandbox.run(&["status", "--cwd", cwd], b"");
    assert_shown_escaped("baton status", &status);
    let report = sandbox.run(&["report", "--transcript", transcript.to_str().unwrap()], b"");
    assert_shown_escaped("baton report", &report);
}

#[test]
fn install_shows_a_planted_settings_path_escaped() {
    let sandbox = Sandbox::new();
    let config_dir = planted_folder(&sandbox);
    let output = sandbox.run_with(&["install"], b"", &[("CLAUDE_CONFIG_DIR", config_dir.to_str().unwrap())]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_shown_escaped("baton install", &output);
}

#[test]
fn hook_envelopes_show_a_planted_folder_escaped() {
    // A planted folder where no handoff can be written (`.planning` is a file): the agent
    // and the user are told why, the folder's full path in the words.
    let sandbox = Sandbox::new();
    let folder = planted_folder(&sandbox);
    std::fs::write(folder.join(".planning"), "not a folder").unwrap();
    sandbox.write_bridge(SESSION, 20.0, 0);
    let output = sandbox.hook(&json!({
        "session_id": SESSION, "transcript_path": Value::Null, "cwd": folder,
        "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {}, "tool_response": {},
    }));
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    assert!(!stdout.contains('\u{9b}'), "no raw C1 in the envelope: {stdout:?}");
    let envelope: Value = serde_json::from_str(&stdout).unwrap();
    for (what, text) in [
        ("the context", envelope["hookSpecificOutput"]["additionalContext"].as_str().unwrap()),
        ("the notice", envelope["systemMessage"].as_str().unwrap()),
    ] {
        assert_no_raw_control(what, text);
        assert!(text.contains(SHOWN), "{what}: {text}");
    }
}
