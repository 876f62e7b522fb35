//! The automatic handoff at CRITICAL and `baton pause`: the two files (GSD's formats),
//! the git checkpoint that never disturbs the user, and every fault the issue lists.

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{SESSION, Sandbox, TestRepo, fixture, gsd_planning, read_json, told, transcript_for};
use serde_json::{Value, json};

/// A PostToolUse at CRITICAL for `session` in the sandbox's project.
fn critical(sandbox: &Sandbox, session: &str, transcript: Option<&Path>) -> String {
    sandbox.write_bridge(session, 20.0, 0);
    let mut event = sandbox.post_tool_use(session);
    event["transcript_path"] = json!(transcript.map(|t| t.to_string_lossy().into_owned()));
    told(&sandbox.hook(&event)).expect("CRITICAL fires")
}

fn project_repo(sandbox: &Sandbox) -> TestRepo {
    TestRepo::init(
        &sandbox.project(),
        &[("src/app.ts", "app\n"), ("src/limiter.ts", "limiter\n"), ("README.md", "readme\n")],
    )
}

#[test]
fn critical_writes_a_gsd_handoff_and_a_private_checkpoint() {
    let sandbox = Sandbox::new();
    let repo = project_repo(&sandbox);
    gsd_planning(&sandbox.project());
    repo.commit_all("plan phase 3");
    // Uncommitted work: a modified file, a staged new file, an untracked file.
    repo.write("src/app.ts", "app changed\n");
    repo.write("src/tiers.ts", "tiers\n");
    repo.stage("src/tiers.ts");
    repo.write("notes.txt", "scratch\n");
    let transcript = transcript_for(&sandbox.project(), &sandbox.home().join("t.jsonl"));

    let status_before = repo.status();
    let index_before = std::fs::read(sandbox.project().join(".git/index")).unwrap();
    let head_before = std::fs::read(sandbox.project().join(".git/HEAD")).unwrap();
    let refs_before = repo.refs();

    let start = Instant::now();
    let text = critical(&sandbox, SESSION, Some(&transcript));
    let took = start.elapsed();
    assert!(text.starts_with("CONTEXT CRITICAL: Usage at 80%. Remaining: 20%."), "{text}");
    for needle in [
        ".planning/HANDOFF.json",
        ".planning/phases/03-rate-limiting/.continue-here.md",
        "refs/baton/wip/",
        "next_action",
    ] {
        assert!(text.contains(needle), "message lacks {needle}: {text}");
    }
    assert!(took < Duration::from_secs(3), "{took:?}");

    // The user's repository is exactly as it was, apart from the two new handoff files.
    let mut expected = status_before.clone();
    expected.push((".planning/HANDOFF.json".into(), git2::Status::WT_NEW.bits()));
    expected
        .push((".planning/phases/03-rate-limiting/.continue-here.md".into(), git2::Status::WT_NEW.bits()));
    expected.sort();
    assert_eq!(repo.status(), expected);
    assert_eq!(
        std::fs::read(sandbox.project().join(".git/index")).unwrap(),
        index_before,
        "index file changed"
    );
    assert_eq!(std::fs::read(sandbox.project().join(".git/HEAD")).unwrap(), head_before);
    assert_eq!(repo.refs(), refs_before, "a branch or tag moved");

    // HANDOFF.json: GSD's schema 1.0, which GSD's resume reads.
    let handoff = read_json(&sandbox.project().join(".planning/HANDOFF.json"));
    assert_eq!(handoff["version"], "1.0");
    assert_eq!(handoff["status"], "paused");
    assert_eq!(handoff["phase"], "03");
    assert_eq!(handoff["phase_name"], "rate-limiting");
    assert_eq!(handoff["phase_dir"], ".planning/phases/03-rate-limiting");
    assert_eq!(handoff["plan"], 2);
    assert_eq!(handoff["task"], 3);
    assert_eq!(handoff["total_tasks"], 4);
    for key in [
        "blockers",
        "human_actions_pending",
        "decisions",
        "completed_tasks",
        "remaining_tasks",
        "uncommitted_files",
    ] {
        assert!(handoff[key].is_array(), "{key}");
    }
    let completed = handoff["completed_tasks"].as_array().unwrap();
    assert_eq!(completed.len(), 3);
    assert_eq!(
        completed[2],
        json!({"id": 3, "name": "Wire the limiter into the orders routes", "status": "in_progress", "progress": "Wiring the limiter into the orders routes"})
    );
    assert_eq!(
        handoff["remaining_tasks"],
        json!([{"id": 4, "name": "Write tests for limits and reset", "status": "not_started"}])
    );
    assert_eq!(handoff["next_action"], "Continue: Wire the limiter into the orders routes");
    let notes = handoff["context_notes"].as_str().unwrap();
    assert!(notes.contains("Also make the limit configurable per client tier"), "{notes}");
    assert!(notes.contains("`npm test -- limiter`: expected 429, got 200"), "{notes}");
    let mut uncommitted: Vec<&str> =
        handoff["uncommitted_files"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    uncommitted.sort();
    assert_eq!(uncommitted, vec!["notes.txt", "src/app.ts", "src/tiers.ts"]);
    let baton = &handoff["baton"];
    assert_eq!(baton["trigger"], "critical-context");
    assert_eq!(baton["session_id"], SESSION);
    assert_eq!(baton["files_touched"], json!(["src/limiter.ts", "src/routes/orders.ts", "src/app.ts"]));
    assert_eq!(baton["background_processes"][0]["command"], "npm run dev");
    assert_eq!(baton["background_processes"][0]["id"], "bash_1");
    assert_eq!(baton["figures"]["used_pct"], 80);
    assert_eq!(baton["model"], "claude-opus-4-5-20251101");
    assert_eq!(baton["id"].as_str().unwrap().len(), 24);
    assert!(baton["generated"].as_array().unwrap().contains(&json!("next_action")));

    // The checkpoint: HEAD's tree + the working tree + the handoff files, parent HEAD.
    let checkpoint = &baton["checkpoint"];
    assert_eq!(checkpoint["used"], "ref");
    let reference = format!("refs/baton/wip/{SESSION}");
    assert_eq!(checkpoint["reference"], reference.as_str());
    let commit = repo.repo.find_reference(&reference).unwrap().peel_to_commit().unwrap();
    assert_eq!(checkpoint["commit"], commit.id().to_string().as_str());
    assert_eq!(commit.parent_id(0).unwrap(), repo.head_commit().id());
    assert_eq!(
        repo.changed_paths(&commit),
        vec![
            ".planning/HANDOFF.json",
            ".planning/phases/03-rate-limiting/.continue-here.md",
            "notes.txt",
            "src/app.ts",
            "src/tiers.ts"
        ]
    );

    // .continue-here.md in the phase folder, GSD's sections in order.
    let md = std::fs::read_to_string(
        sandbox.project().join(".planning/phases/03-rate-limiting/.continue-here.md"),
    )
    .unwrap();
    assert!(md.starts_with("---\ncontext: phase\nphase: 03-rate-limiting\ntask: 3\ntotal_tasks: 4\nstatus: in_progress\nlast_updated: "), "{md}");
    let order = [
        "<current_state>",
        "<completed_work>",
        "<remaining_work>",
        "## Required Reading",
        "## Infrastructure State",
        "<context>",
        "<next_action>",
    ];
    let positions: Vec<usize> =
        order.iter().map(|s| md.find(s).unwrap_or_else(|| panic!("missing {s}:\n{md}"))).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "sections out of order:\n{md}");
    assert!(md.contains("`npm run dev` (bash_1)"));
    assert!(md.contains(".planning/phases/03-rate-limiting/03-02-PLAN.md"));
    assert!(!md.contains("<decisions_made>"), "empty sections are left out");
    assert!(md.contains("Start with: Continue: Wire the limiter into the orders routes"));
}

#[test]
fn later_critical_warnings_refresh_and_keep_what_the_agent_wrote() {
    let sandbox = Sandbox::new();
    let repo = project_repo(&sandbox);
    // The agent goes on after CRITICAL here: advise, so the pause does not stop it.
    common::write(&sandbox.user_config(), r#"{"handoff": {"on_critical": "advise"}}"#);
    gsd_planning(&sandbox.project());
    repo.commit_all("plan");
    let transcript = transcript_for(&sandbox.project(), &sandbox.home().join("t.jsonl"));
    critical(&sandbox, SESSION, Some(&transcript));

    let path = sandbox.project().join(".planning/HANDOFF.json");
    let mut handoff = read_json(&path);
    let id = handoff["baton"]["id"].clone();
    handoff["next_action"] = json!("Run the tier tests first; the 429 bug is in the bucket refill");
    handoff["decisions"] =
        json!([{"decision": "Tiers live in config", "rationale": "ops edits them", "phase": "03"}]);
    handoff["blockers"] =
        json!([{"description": "Staging API key missing", "type": "human_action", "workaround": ""}]);
    std::fs::write(&path, serde_json::to_vec_pretty(&handoff).unwrap()).unwrap();
    let md_path = sandbox.project().join(".planning/phases/03-rate-limiting/.continue-here.md");
    let md = std::fs::read_to_string(&md_path).unwrap();
    std::fs::write(&md_path, md.replace("<current_state>", "# BLOCKING CONSTRAINTS — Read Before Anything Else\n\n- [ ] CONSTRAINT: real-redis — mocks hid the refill bug — run limiter tests against redis\n\n<current_state>")).unwrap();

    // Debounce: the 5th call after the first CRITICAL fires again and refreshes.
    let event = sandbox.post_tool_use(SESSION);
    let mut event = event;
    event["transcript_path"] = json!(transcript);
    let mut fired = 0;
    for _ in 0..5 {
        sandbox.write_bridge(SESSION, 18.0, 0);
        if told(&sandbox.hook(&event)).is_some() {
            fired += 1;
        }
    }
    assert_eq!(fired, 1);
    let refreshed = read_json(&path);
    assert_eq!(refreshed["baton"]["refreshes"], 1);
    assert_eq!(refreshed["baton"]["figures"]["used_pct"], 82);
    assert_eq!(refreshed["baton"]["id"], id, "one id per session");
    assert_eq!(refreshed["next_action"], "Run the tier tests first; the 429 bug is in the bucket refill");
    assert_eq!(refreshed["decisions"][0]["decision"], "Tiers live in config");
    assert_eq!(refreshed["blockers"][0]["description"], "Staging API key missing");
    assert!(!refreshed["baton"]["generated"].as_array().unwrap().contains(&json!("next_action")));
    let md = std::fs::read_to_string(&md_path).unwrap();
    assert!(md.contains("- [ ] CONSTRAINT: real-redis"), "{md}");
    assert!(
        md.contains("<decisions_made>") && md.contains("Tiers live in config because ops edits them"),
        "{md}"
    );
    assert!(md.contains("status: blocked"), "{md}");
    // Two checkpoints on the session's ref, the second on top of the first.
    let commit =
        repo.repo.find_reference(&format!("refs/baton/wip/{SESSION}")).unwrap().peel_to_commit().unwrap();
    assert_eq!(commit.parent(0).unwrap().parent_id(0).unwrap(), repo.head_commit().id());
}

#[test]
fn two_sessions_in_one_repository_keep_both_handoffs() {
    let sandbox = Sandbox::new();
    project_repo(&sandbox);
    let other = "0a1b2c3d-0000-4000-8000-000000000001";
    critical(&sandbox, SESSION, None);
    let path = sandbox.project().join(".planning/HANDOFF.json");
    let mut first = read_json(&path);
    first["next_action"] = json!("first session's own next step");
    std::fs::write(&path, serde_json::to_vec_pretty(&first).unwrap()).unwrap();

    critical(&sandbox, other, None);
    assert_eq!(read_json(&path)["baton"]["session_id"], other);
    // The first session's pending handoff moved beside it, not into the archive.
    let pending = sandbox.project().join(format!(".planning/handoffs/pending/{SESSION}"));
    let moved = read_json(&pending.join("HANDOFF.json"));
    assert_eq!(moved["baton"]["session_id"], SESSION);
    assert_eq!(moved["next_action"], "first session's own next step");
    assert!(pending.join(".continue-here.md").is_file());
    let archive = sandbox.project().join(".planning/handoffs");
    let files = |dir: &std::path::Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter(|e| e.path().is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
    };
    assert!(files(&archive).is_empty(), "{:?}", files(&archive));

    // The first session comes back: its own handoff is refreshed where it is, the
    // second's stays in HANDOFF.json, nothing is archived.
    for _ in 0..4 {
        sandbox.write_bridge(SESSION, 20.0, 0);
        sandbox.hook(&sandbox.post_tool_use(SESSION));
    }
    critical(&sandbox, SESSION, None);
    assert_eq!(read_json(&path)["baton"]["session_id"], other);
    let refreshed = read_json(&pending.join("HANDOFF.json"));
    assert_eq!(refreshed["baton"]["session_id"], SESSION);
    assert_eq!(refreshed["next_action"], "first session's own next step");
    assert!(refreshed["baton"]["refreshes"].as_u64().unwrap() >= 1, "{refreshed}");
    assert!(files(&archive).is_empty(), "{:?}", files(&archive));
}

#[test]
fn an_unparsable_handoff_is_archived_not_overwritten() {
    let sandbox = Sandbox::new();
    project_repo(&sandbox);
    let planning = sandbox.project().join(".planning");
    std::fs::create_dir_all(&planning).unwrap();
    std::fs::write(planning.join("HANDOFF.json"), "{ written by hand, broken").unwrap();
    critical(&sandbox, SESSION, None);
    assert_eq!(read_json(&planning.join("HANDOFF.json"))["baton"]["session_id"], SESSION);
    let archived: Vec<_> =
        std::fs::read_dir(planning.join("handoffs")).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(archived.len(), 1);
    assert_eq!(std::fs::read_to_string(&archived[0]).unwrap(), "{ written by hand, broken");
}

#[test]
fn outside_git_only_the_files_are_written() {
    let sandbox = Sandbox::new();
    let text = critical(&sandbox, SESSION, None);
    assert!(text.contains("not a git repository"), "{text}");
    let handoff = read_json(&sandbox.project().join(".planning/HANDOFF.json"));
    assert_eq!(handoff["baton"]["sources"]["git"], "not a git repository");
    assert!(handoff["baton"]["checkpoint"].is_null());
    assert!(handoff["baton"]["checkpoint_note"].as_str().unwrap().contains("not a git repository"));
    // No .planning before: created, default context.
    let md = std::fs::read_to_string(sandbox.project().join(".planning/.continue-here.md")).unwrap();
    assert!(md.contains("context: none"), "{md}");
    assert!(md.contains("no GSD phase"), "{md}");
    assert!(md.contains("Git: not a git repository; only the files were written."), "{md}");
}

#[test]
fn unborn_branch_gets_a_root_checkpoint() {
    let sandbox = Sandbox::new();
    let repo = TestRepo::init(&sandbox.project(), &[]);
    repo.write("src/first.rs", "fn main() {}\n");
    critical(&sandbox, SESSION, None);
    let commit =
        repo.repo.find_reference(&format!("refs/baton/wip/{SESSION}")).unwrap().peel_to_commit().unwrap();
    assert_eq!(commit.parent_count(), 0);
    assert!(commit.tree().unwrap().get_path(Path::new("src/first.rs")).is_ok());
    assert!(repo.repo.head().is_err(), "HEAD is still unborn");
}

#[test]
fn an_unwritable_planning_folder_still_warns() {
    let sandbox = Sandbox::new();
    project_repo(&sandbox);
    // A file where the folder should be: nothing can be written under it, as root too.
    std::fs::write(sandbox.project().join(".planning"), "not a folder").unwrap();
    let text = critical(&sandbox, SESSION, None);
    assert!(text.starts_with("CONTEXT CRITICAL:"), "{text}");
    assert!(text.contains("could not write a handoff"), "{text}");
    assert_eq!(std::fs::read_to_string(sandbox.project().join(".planning")).unwrap(), "not a folder");
}

#[cfg(unix)]
#[test]
fn a_read_only_planning_folder_still_warns() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::new();
    project_repo(&sandbox);
    let planning = sandbox.project().join(".planning");
    std::fs::create_dir_all(&planning).unwrap();
    std::fs::set_permissions(&planning, std::fs::Permissions::from_mode(0o555)).unwrap();
    let probe = planning.join("probe");
    let writable_anyway = std::fs::write(&probe, "x").is_ok(); // root ignores the mode
    let _ = std::fs::remove_file(&probe);
    let text = critical(&sandbox, SESSION, None);
    std::fs::set_permissions(&planning, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(text.starts_with("CONTEXT CRITICAL:"));
    if !writable_anyway {
        assert!(text.contains("could not write a handoff"), "{text}");
        let left: Vec<_> = std::fs::read_dir(&planning).unwrap().collect();
        assert!(left.is_empty(), "nothing half-written: {left:?}");
    }
}

#[test]
fn damaged_or_missing_transcripts_do_not_stop_the_handoff() {
    let sandbox = Sandbox::new();
    project_repo(&sandbox);
    let good = String::from_utf8(common::fixture("transcript.jsonl")).unwrap();
    let cut = format!("{}{{\"type\": \"assistant\", \"message\": {{\"usa", good);
    let mut bad_utf8 = good.clone().into_bytes();
    bad_utf8.extend_from_slice(b"{\"type\": \"user\", \"message\": {\"content\": \"\xff\xfe\"}}\n");
    let cases: Vec<(&str, Option<Vec<u8>>)> =
        vec![("missing", None), ("cut off", Some(cut.into_bytes())), ("invalid UTF-8", Some(bad_utf8))];
    for (n, (name, bytes)) in cases.into_iter().enumerate() {
        let session = format!("5e551000-0000-4000-8000-00000000000{n}");
        let path = sandbox.home().join(format!("t{n}.jsonl"));
        if let Some(bytes) = &bytes {
            std::fs::write(&path, bytes).unwrap();
        }
        critical(&sandbox, &session, Some(&path));
        let handoff = read_json(&sandbox.project().join(".planning/HANDOFF.json"));
        assert_eq!(handoff["baton"]["session_id"], session.as_str(), "{name}");
        if bytes.is_some() {
            assert_eq!(handoff["next_action"], "Continue: Wire the limiter into the orders routes", "{name}");
        } else {
            assert!(
                handoff["baton"]["sources"]["transcript"].as_str().unwrap().contains("unreadable"),
                "{name}"
            );
        }
    }
}

/// An assistant line running `command` in Bash and writing `file`, in the sample's shape.
fn tool_calls_line(command: &str, file: &str) -> String {
    json!({
        "type": "assistant", "isSidechain": false, "timestamp": "2026-11-28T09:00:00.000Z",
        "message": {"role": "assistant", "model": "claude-opus-4-5-20251101", "content": [
            {"type": "tool_use", "id": "toolu_middle_1", "name": "Bash", "input": {"command": command}},
            {"type": "tool_use", "id": "toolu_middle_2", "name": "Write", "input": {"file_path": file, "content": "x"}}
        ]}
    })
    .to_string()
        + "\n"
}

#[test]
fn a_200_mib_transcript_is_read_from_its_end_only() {
    let sandbox = Sandbox::new();
    project_repo(&sandbox);
    let path = sandbox.home().join("big.jsonl");
    {
        use std::io::Write;
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let filler = format!("{{\"type\":\"progress\",\"data\":\"{}\"}}\n", "x".repeat(1000));
        for n in 0..(200 * 1024) {
            // 100 MiB in, far from both ends: a reader of the whole file would list these.
            if n == 100 * 1024 {
                file.write_all(tool_calls_line("echo from-the-middle", "src/middle.ts").as_bytes()).unwrap();
            }
            file.write_all(filler.as_bytes()).unwrap();
        }
        file.write_all(&common::fixture("transcript.jsonl")).unwrap();
    }
    let start = Instant::now();
    critical(&sandbox, SESSION, Some(&path));
    // Alone it takes half a second in the test build, beside the suite's other tests on a
    // loaded 2-core machine up to 2.3 s, once over 5 s. The handoff's content (below) is
    // what shows the middle was not read; this bound only catches a reader gone wrong.
    assert!(start.elapsed() < Duration::from_secs(15), "{:?}", start.elapsed());
    let text = std::fs::read_to_string(sandbox.project().join(".planning/HANDOFF.json")).unwrap();
    assert!(!text.contains("from-the-middle") && !text.contains("middle.ts"), "{text}");
    let handoff = read_json(&sandbox.project().join(".planning/HANDOFF.json"));
    assert_eq!(handoff["next_action"], "Continue: Wire the limiter into the orders routes");
}

fn pause(sandbox: &Sandbox, args: &[&str]) -> (Value, std::process::Output) {
    let project = sandbox.project();
    let mut all = vec!["pause", "--json", "--cwd", project.to_str().unwrap()];
    all.extend_from_slice(args);
    let output = sandbox.run(&all, b"");
    let value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    (value, output)
}

#[test]
fn pause_commits_wip_on_the_branch_and_leaves_staged_work_staged() {
    let sandbox = Sandbox::new();
    let repo = project_repo(&sandbox);
    gsd_planning(&sandbox.project());
    repo.commit_all("plan");
    repo.write("src/staged.ts", "staged\n");
    repo.stage("src/staged.ts");
    repo.write("src/app.ts", "modified, not staged\n");
    let transcript = transcript_for(&sandbox.project(), &sandbox.home().join("t.jsonl"));
    let before = repo.head_commit().id();

    let (result, output) =
        pause(&sandbox, &["--transcript", transcript.to_str().unwrap(), "--session", SESSION]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(result["checkpoint"]["used"], "branch");
    let head = repo.head_commit();
    assert_eq!(head.parent_id(0).unwrap(), before);
    assert_eq!(head.summary().unwrap(), Some("wip: 03-rate-limiting paused at 3/4"));
    assert_eq!(
        repo.changed_paths(&head),
        vec![".planning/HANDOFF.json", ".planning/phases/03-rate-limiting/.continue-here.md"]
    );
    let status = repo.status();
    assert!(status.contains(&("src/staged.ts".into(), git2::Status::INDEX_NEW.bits())), "{status:?}");
    assert!(status.contains(&("src/app.ts".into(), git2::Status::WT_MODIFIED.bits())), "{status:?}");
    assert!(!status.iter().any(|(p, _)| p.starts_with(".planning/")), "handoff files clean: {status:?}");
    let handoff = read_json(&sandbox.project().join(".planning/HANDOFF.json"));
    assert_eq!(handoff["baton"]["trigger"], "manual");

    // The human-readable confirmation.
    let project = sandbox.project();
    let output = sandbox.run(
        &["pause", "--cwd", project.to_str().unwrap(), "--session", SESSION, "--checkpoint", "off"],
        b"",
    );
    let text = String::from_utf8(output.stdout).unwrap();
    for needle in [
        "✓ Handoff created:",
        ".planning/HANDOFF.json",
        "- Context: phase",
        "- Location: 03-rate-limiting",
        "- Blockers: 0 (0 need human action)",
        "To resume:",
    ] {
        assert!(text.contains(needle), "missing {needle}:\n{text}");
    }
}

#[test]
fn pause_falls_back_to_a_ref_when_the_branch_cannot_take_a_commit() {
    type Setup = Box<dyn Fn(&TestRepo)>;
    let cases: Vec<(&str, Setup)> = vec![
        (
            "detached HEAD",
            Box::new(|repo: &TestRepo| {
                let id = repo.head_commit().id();
                repo.repo.set_head_detached(id).unwrap();
            }),
        ),
        (
            "index.lock",
            Box::new(|repo: &TestRepo| std::fs::write(repo.root.join(".git/index.lock"), "").unwrap()),
        ),
        (
            "merge in progress",
            Box::new(|repo: &TestRepo| {
                let id = repo.head_commit().id();
                std::fs::write(repo.root.join(".git/MERGE_HEAD"), format!("{id}\n")).unwrap();
            }),
        ),
        ("unborn branch", Box::new(|_: &TestRepo| {})),
    ];
    for (name, setup) in cases {
        let sandbox = Sandbox::new();
        let repo = if name == "unborn branch" {
            TestRepo::init(&sandbox.project(), &[])
        } else {
            project_repo(&sandbox)
        };
        setup(&repo);
        let refs_before = repo.refs();
        let (result, output) = pause(&sandbox, &["--session", SESSION, "--checkpoint", "branch"]);
        assert!(output.status.success(), "{name}: {}", String::from_utf8_lossy(&output.stderr));
        assert_eq!(result["checkpoint"]["requested"], "branch", "{name}");
        assert_eq!(result["checkpoint"]["used"], "ref", "{name}");
        assert!(
            result["checkpoint"]["fallback_reason"].as_str().is_some_and(|r| !r.is_empty()),
            "{name}: {result}"
        );
        assert_eq!(repo.refs(), refs_before, "{name}: a branch moved");
    }
}

#[test]
fn pause_report_has_the_exact_token_use() {
    let sandbox = Sandbox::new();
    project_repo(&sandbox);
    let transcript = transcript_for(&sandbox.project(), &sandbox.home().join("t.jsonl"));
    let (result, output) =
        pause(&sandbox, &["--report", "--checkpoint", "off", "--transcript", transcript.to_str().unwrap()]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report = std::fs::read_to_string(result["report"].as_str().unwrap()).unwrap();
    assert!(result["report"].as_str().unwrap().ends_with(".planning/reports/SESSION_REPORT.md"));
    for needle in [
        "## What was done",
        "## Files changed",
        "`src/limiter.ts`",
        "## Blockers and open items",
        "Wire the limiter into the orders routes (in progress)",
        "| claude-opus-4-5-20251101 |",
        "Compactions: 1",
        "167,400 → 41,800",
    ] {
        assert!(report.contains(needle), "missing {needle}:\n{report}");
    }
    // A second report does not overwrite the first.
    let (second, _) =
        pause(&sandbox, &["--report", "--checkpoint", "off", "--transcript", transcript.to_str().unwrap()]);
    assert!(second["report"].as_str().unwrap().ends_with("-session-report.md"), "{second}");
}

#[test]
fn pause_finds_the_newest_transcript_of_the_project() {
    let sandbox = Sandbox::new();
    project_repo(&sandbox);
    let project = std::fs::canonicalize(sandbox.project()).unwrap();
    let encoded: String =
        project.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let folder = sandbox.claude_dir().join("projects").join(encoded);
    std::fs::create_dir_all(&folder).unwrap();
    transcript_for(&project, &folder.join(format!("{SESSION}.jsonl")));
    let (result, output) = pause(&sandbox, &["--checkpoint", "off"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(result["session_id"], SESSION);
    assert_eq!(result["next_action"], "Continue: Wire the limiter into the orders routes");
}

// ---- the pause that pauses (issue 19) ----

/// The hook's stdout as JSON (the hook contract: exit 0, nothing or one object).
fn hook_json(sandbox: &Sandbox, event: &Value) -> Option<Value> {
    let output = sandbox.hook(event);
    assert!(output.status.success(), "hook exit {:?}", output.status);
    (!output.stdout.is_empty()).then(|| serde_json::from_slice(&output.stdout).expect("one JSON object"))
}

#[test]
fn the_pause_stops_the_agent_within_the_grace_calls_after_critical() {
    let sandbox = Sandbox::new();
    let _repo = project_repo(&sandbox);
    let text = critical(&sandbox, SESSION, None);
    assert!(text.contains("end your turn") && text.contains("after 3 more"), "told once: {text}");
    let mut seen = vec![];
    for call in 1..=5 {
        sandbox.write_bridge(SESSION, 19.0, 0);
        let out = hook_json(&sandbox, &sandbox.post_tool_use(SESSION));
        let stopped = out.as_ref().is_some_and(|v| v["continue"] == json!(false));
        if let Some(v) = &out {
            if stopped {
                assert_eq!(v.as_object().unwrap().len(), 2, "only continue and stopReason: {v}");
                let reason = v["stopReason"].as_str().unwrap();
                assert!(
                    reason.contains("81 %") && reason.contains("handoff saved in .planning/HANDOFF.json"),
                    "{reason}"
                );
                assert!(reason.contains("/clear") && reason.contains("baton run"), "{reason}");
            } else {
                let told = v["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
                assert!(!told.contains("end your turn"), "the pause is told once: {told}");
            }
        }
        seen.push((call, stopped));
    }
    // Stopped on the 3rd call after CRITICAL, and only once.
    assert_eq!(seen, vec![(1, false), (2, false), (3, true), (4, false), (5, false)]);
    let state = read_json(&sandbox.state_path(SESSION));
    assert!(state["pausedAt"].is_i64() && state["pauseArmedAt"].is_i64(), "{state}");
}

#[test]
fn advise_never_stops_and_the_grace_calls_are_configurable() {
    let sandbox = Sandbox::new();
    let _repo = project_repo(&sandbox);
    // A repository may make it quieter (advise): never a stop.
    common::write(&sandbox.project().join(".claude/baton.json"), r#"{"handoff": {"on_critical": "advise"}}"#);
    let text = critical(&sandbox, SESSION, None);
    assert!(!text.contains("end your turn"), "{text}");
    for _ in 0..6 {
        sandbox.write_bridge(SESSION, 19.0, 0);
        let out = hook_json(&sandbox, &sandbox.post_tool_use(SESSION));
        assert!(out.is_none_or(|v| v.get("continue").is_none()), "advise stopped the agent");
    }
    // One grace call: the next call stops it.
    let other = "3f3c2a10-5b1e-4c2d-9a8f-0d6e4b2c1a98";
    common::write(&sandbox.project().join(".claude/baton.json"), r#"{"handoff": {"pause_grace_calls": 1}}"#);
    let text = critical(&sandbox, other, None);
    assert!(text.contains("after 1 more"), "{text}");
    sandbox.write_bridge(other, 19.0, 0);
    let out = hook_json(&sandbox, &sandbox.post_tool_use(other)).expect("a stop");
    assert_eq!(out["continue"], json!(false), "{out}");
}

// ---- `baton run`, headless (issue 19) ----

/// A stand-in `claude -p`: one session per leg; it sends SessionStart (keeping the brief),
/// then tool calls at `remaining` % (19 for the first FAKE_PAUSE_LEGS legs, else 60),
/// and ends its run when a hook answers with the host's stop, as Claude Code does. With
/// FAKE_OBEYS its agent does as the CRITICAL warning asks and ends its turn at once; on
/// leg FAKE_MANUAL_LEG it runs `baton pause` after its first call and ends its turn. Each
/// call is work done (a line in work.log): no leg is futile.
const FAKE_CLAUDE: &str = r#"#!/bin/sh
leg="$BATON_RUN_LEG"
sid="aaaaaaaa-0000-4000-8000-00000000000$leg"
last=""; for a in "$@"; do last="$a"; done
echo "leg $leg prompt: $last"
printf '{"session_id":"%s","cwd":"%s","hook_event_name":"SessionStart","source":"startup"}' "$sid" "$PWD" | "$BATON_BIN" hook > "$FAKE_OUT/brief-$leg.json"
if [ "$leg" -le "${FAKE_PAUSE_LEGS:-2}" ]; then remaining=19; else remaining=60; fi
i=0
while [ $i -lt 6 ]; do
  i=$((i+1))
  printf '{"session_id":"%s","remaining_percentage":%s,"used_pct":%s,"timestamp":%s}' "$sid" $remaining $((100-remaining)) "$(date +%s)" > "$TMPDIR/claude-ctx-$sid.json"
  out=$(printf '{"session_id":"%s","cwd":"%s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{},"tool_response":{},"tool_use_id":"t%s"}' "$sid" "$PWD" $i | "$BATON_BIN" hook)
  echo "leg $leg call $i"
  echo "leg $leg call $i" >> "$PWD/work.log"
  case "$out" in *'"continue":false'*) echo "leg $leg stopped"; exit 0;; esac
  case "$out" in *'CONTEXT CRITICAL'*) if [ -n "$FAKE_OBEYS" ]; then echo "leg $leg ended its turn"; exit 0; fi;; esac
  if [ "$leg" = "${FAKE_MANUAL_LEG:-0}" ]; then "$BATON_BIN" pause --session "$sid" > /dev/null; echo "leg $leg paused by hand"; exit 0; fi
done
echo "leg $leg done"
exit "${FAKE_EXIT:-0}"
"#;

fn fake_claude(sandbox: &Sandbox) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = sandbox.root().join("bin").join("claude");
    common::write(&path, FAKE_CLAUDE);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn baton_run(sandbox: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut command = sandbox.command(args);
    command.env("BATON_BIN", common::BATON).env("FAKE_OUT", sandbox.root());
    for (k, v) in env {
        command.env(k, v);
    }
    command.stdin(std::process::Stdio::null());
    command.output().expect("baton run")
}

#[test]
fn baton_run_restarts_a_crashing_host_twice_then_names_the_crash() {
    let sandbox = Sandbox::new();
    let _repo = project_repo(&sandbox);
    let fake = fake_claude(&sandbox);
    let fake = fake.to_str().unwrap();
    // Never paused, every leg exits 7 after its calls.
    let env = [("FAKE_EXIT", "7"), ("FAKE_PAUSE_LEGS", "0")];
    let out = baton_run(&sandbox, &["run", "--", fake, "-p", "do the 20 steps"], &env);
    let stdout = common::stdout(&out);
    let stderr = common::stderr(&out);
    assert_eq!(out.status.code(), Some(6), "the crash's status\n{stdout}\n{stderr}");
    let prompts: Vec<&str> = stdout.lines().filter(|l| l.contains("prompt")).collect();
    assert_eq!(
        prompts,
        ["leg 1 prompt: do the 20 steps", "leg 2 prompt: continue", "leg 3 prompt: continue"],
        "two restarts, each briefed from the handoff written from facts\n{stderr}"
    );
    assert!(
        stderr.contains("baton run: leg 1 ended: the host exited with status 7 and no handoff"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "baton run: leg 1 left no handoff; wrote .planning/HANDOFF.json from its transcript's facts"
        ),
        "{stderr}"
    );
    let brief = std::fs::read_to_string(sandbox.root().join("brief-2.json")).unwrap();
    assert!(brief.contains("This is leg 2 of a relay"), "{brief}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.contains("exited with status 7 and no handoff 3 times in a row; not restarting it again"),
        "{last}"
    );
}

#[test]
fn baton_run_carries_a_paused_leg_into_a_fresh_one_until_a_leg_ends_unpaused() {
    let sandbox = Sandbox::new();
    let _repo = project_repo(&sandbox);
    let fake = fake_claude(&sandbox);
    let fake = fake.to_str().unwrap();
    let out = baton_run(&sandbox, &["run", "--", fake, "-p", "do the 20 steps"], &[]);
    let stdout = common::stdout(&out);
    let stderr = common::stderr(&out);
    assert_eq!(out.status.code(), Some(0), "done: no handoff pending\n{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("prompt") || l.contains("stopped") || l.contains("done"))
        .collect();
    assert_eq!(
        lines,
        vec![
            "leg 1 prompt: do the 20 steps",
            "leg 1 stopped",
            "leg 2 prompt: continue",
            "leg 2 stopped",
            "leg 3 prompt: continue",
            "leg 3 done",
        ],
        "{stdout}"
    );
    // Stopped on the 3rd grace call after CRITICAL (call 1), in every paused leg.
    assert!(stdout.contains("leg 1 call 4\nleg 1 stopped") && !stdout.contains("leg 1 call 5"), "{stdout}");
    let brief = |leg: u32| std::fs::read_to_string(sandbox.root().join(format!("brief-{leg}.json"))).unwrap();
    assert!(!brief(1).contains("of a relay"), "{}", brief(1));
    assert!(brief(2).contains("This is leg 2 of a relay"), "{}", brief(2));
    assert!(brief(3).contains("This is leg 3 of a relay"), "{}", brief(3));
    assert!(
        stderr.contains("baton run: leg 1 paused at 81 %, handoff .planning/HANDOFF.json; leg 2 starts"),
        "{stderr}"
    );
    let summary = stderr.lines().last().unwrap();
    assert!(summary.starts_with("baton run: 3 legs; leg 1: peak 81 %, stopped by the pause, handoff .planning/HANDOFF.json, checkpoint refs/baton/"), "{summary}");
    assert!(summary.ends_with("the last leg ended without a pause."), "{summary}");
}

/// A stand-in `codex exec` that, like Codex 0.171.0, goes on after a hook's stop: its
/// first leg's rollout is at CRITICAL, a later leg's is calm and ends after 3 calls. Like
/// the real one (node), it exits on SIGINT while a hook runs: the hook is waited for with
/// `wait`, which a trapped signal interrupts (a plain `$(…)` would defer the signal).
const FAKE_CODEX: &str = r#"#!/bin/sh
trap 'echo "leg $leg interrupted"; exit 130' INT
leg="$BATON_RUN_LEG"
sid="01a22d40-1c67-7fa3-8ae4-31b70000000$leg"
last=""; for a in "$@"; do last="$a"; done
echo "leg $leg prompt: $last"
if [ "$leg" -le 1 ]; then rollout="$FAKE_ROLLOUTS/critical.jsonl"; else rollout="$FAKE_ROLLOUTS/calm.jsonl"; fi
i=0
while [ $i -lt 100 ]; do
  i=$((i+1))
  printf '{"session_id":"%s","turn_id":"turn-%s","transcript_path":"%s","cwd":"%s","hook_event_name":"PostToolUse","model":"mock-model","tool_name":"Bash","tool_input":{"command":"echo %s"},"tool_response":"ok","tool_use_id":"call_%s"}' "$sid" "$leg" "$rollout" "$PWD" $i $i > "$FAKE_ROLLOUTS/event.json"
  "$BATON_BIN" hook < "$FAKE_ROLLOUTS/event.json" > "$FAKE_ROLLOUTS/out.json" &
  wait $!
  out=$(cat "$FAKE_ROLLOUTS/out.json")
  echo "leg $leg call $i"
  case "$out" in *'"continue":false'*) echo "leg $leg told to stop";; esac
  if [ "$leg" -gt 1 ] && [ $i -ge 3 ]; then echo "leg $leg done"; exit 0; fi
  sleep 0.1
done
echo "leg $leg ran to its end"
"#;

/// A stand-in `codex` on the sandbox's PATH running `script`, and its rollouts: leg 1's
/// at CRITICAL (`critical`), a later leg's calm. Returns `baton run`'s output.
fn baton_run_fake_codex(sandbox: &Sandbox, script: &str, critical: &str) -> std::process::Output {
    use std::os::unix::fs::PermissionsExt;
    let codex = sandbox.root().join("bin").join("codex");
    common::write(&codex, script);
    std::fs::set_permissions(&codex, std::fs::Permissions::from_mode(0o755)).unwrap();
    let rollouts = sandbox.root().join("rollouts");
    common::write(&rollouts.join("critical.jsonl"), critical);
    common::write(
        &rollouts.join("calm.jsonl"),
        &String::from_utf8(fixture("real/codex/rollout-at-PostToolUse-3.jsonl")).unwrap(),
    );
    let (codex, rollouts) = (codex.to_str().unwrap(), rollouts.to_str().unwrap());
    baton_run(sandbox, &["run", "--", codex, "exec", "do the steps"], &[("FAKE_ROLLOUTS", rollouts)])
}

#[test]
fn baton_run_ends_a_leg_whose_host_goes_on_after_the_stop() {
    let sandbox = Sandbox::new();
    let _repo = project_repo(&sandbox);
    let critical = String::from_utf8(fixture("real/codex/rollout-at-critical.jsonl")).unwrap();
    let out = baton_run_fake_codex(&sandbox, FAKE_CODEX, &critical);
    let stdout = common::stdout(&out);
    let stderr = common::stderr(&out);
    assert_eq!(out.status.code(), Some(0), "the last leg's exit status\n{stdout}\n{stderr}");
    // CRITICAL on call 1, the stop on the 3rd grace call (call 4): a host that would go on
    // is not sent the stop, it is held in that call's hook until the relay has ended it, so
    // it makes no further call; long before it would have ended by itself.
    assert!(stdout.contains("leg 1 call 3\nleg 1 interrupted"), "{stdout}");
    assert!(!stdout.contains("leg 1 call 4"), "{stdout}");
    assert!(!stdout.contains("told to stop"), "{stdout}");
    assert!(!stdout.contains("leg 1 ran to its end"), "{stdout}");
    assert!(stderr.contains("baton run: leg 1 went on after baton's stop (Codex does not end its turn on a hook's stop); ended it with Ctrl-C's signal"), "{stderr}");
    assert!(stdout.contains("leg 2 prompt: continue") && stdout.contains("leg 2 done"), "{stdout}");
    let summary = stderr.lines().last().unwrap();
    assert!(summary.starts_with("baton run: 2 legs; leg 1: peak "), "{summary}");
    assert!(summary.contains("stopped by the pause"), "{summary}");
    assert!(summary.ends_with("the last leg ended without a pause."), "{summary}");
}

/// A stand-in `codex exec` for the hand-over's order: at every call its rollout grows by a
/// command and its output (`echo grace-N`), and on SIGINT it kills the hook it is running
/// before it exits, as Codex does when its turn is interrupted.
const FAKE_CODEX_KILLS_ITS_HOOK: &str = r#"#!/bin/sh
trap 'kill $hook 2>/dev/null; echo "leg $leg interrupted"; exit 130' INT
leg="$BATON_RUN_LEG"
sid="01a22d40-1c67-7fa3-8ae4-31b70000000$leg"
rollout="$FAKE_ROLLOUTS/live-$leg.jsonl"
if [ "$leg" -le 1 ]; then cp "$FAKE_ROLLOUTS/critical.jsonl" "$rollout"; else cp "$FAKE_ROLLOUTS/calm.jsonl" "$rollout"; fi
i=0
while [ $i -lt 100 ]; do
  i=$((i+1))
  printf '{"timestamp":"2026-12-01T09:00:0%s.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\\"cmd\\":\\"echo grace-%s >> grace.log\\"}","call_id":"call_grace_%s"}}\n' $((i % 10)) $i $i >> "$rollout"
  printf '{"timestamp":"2026-12-01T09:00:0%s.500Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_grace_%s","output":"Process exited with code 0\\nOutput:\\n"}}\n' $((i % 10)) $i >> "$rollout"
  printf '{"session_id":"%s","turn_id":"turn-%s","transcript_path":"%s","cwd":"%s","hook_event_name":"PostToolUse","model":"mock-model","tool_name":"Bash","tool_input":{"command":"echo grace-%s >> grace.log"},"tool_response":"ok","tool_use_id":"call_grace_%s"}' "$sid" "$leg" "$rollout" "$PWD" $i $i > "$FAKE_ROLLOUTS/event.json"
  "$BATON_BIN" hook < "$FAKE_ROLLOUTS/event.json" > /dev/null &
  hook=$!
  wait $hook
  echo "leg $leg call $i"
  if [ "$leg" -gt 1 ] && [ $i -ge 1 ]; then echo "leg $leg done"; exit 0; fi
done
"#;

/// On a host that goes on after the stop (Codex), `baton run` ends the leg as soon as the
/// stop is noted, and the host kills the hook it is running. So the stop is noted only
/// once the handoff holds the grace calls: the next leg is briefed from it.
#[test]
fn the_handoff_holds_the_grace_calls_before_the_relay_ends_a_leg() {
    let sandbox = Sandbox::new();
    let _repo = project_repo(&sandbox);
    // 8 MiB of streamed output in the middle of the rollout: the rewrite reads it (the
    // facts' tail budget), which outlasts the relay's poll (50 ms) many times over.
    let critical = String::from_utf8(fixture("real/codex/rollout-at-critical.jsonl")).unwrap();
    let (opening, rest) = critical.split_at(critical.match_indices('\n').nth(10).unwrap().0 + 1);
    let filler = format!(
        "{{\"timestamp\":\"2026-12-01T08:57:28.000Z\",\"type\":\"event_msg\",\"payload\":{{\"type\":\"exec_command_output_delta\",\"chunk\":\"{}\"}}}}\n",
        "output of a long build ".repeat(170)
    );
    let critical = format!("{opening}{}{rest}", filler.repeat(2_100));
    let out = baton_run_fake_codex(&sandbox, FAKE_CODEX_KILLS_ITS_HOOK, &critical);
    let stdout = common::stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", common::stderr(&out));
    // CRITICAL at call 1, the stop at the 3rd grace call (call 4), where leg 1 was ended.
    assert!(stdout.contains("leg 1 call 3\nleg 1 interrupted") && stdout.contains("leg 2 done"), "{stdout}");
    let handoff = std::fs::read_to_string(sandbox.project().join(".planning/HANDOFF.json")).unwrap();
    for grace in ["grace-1", "grace-2", "grace-3", "grace-4"] {
        assert!(handoff.contains(&format!("echo {grace} >> grace.log")), "{grace} missing:\n{handoff}");
    }
}

/// An agent that does as the CRITICAL warning asks ends its turn by itself: no pause of
/// baton's stops it (here `advise`: none is armed; likewise on a window that is not a
/// fact), and its leg is paused all the same, its CRITICAL handoff pending.
#[test]
fn baton_run_continues_after_an_agent_that_stopped_by_itself() {
    let sandbox = Sandbox::new();
    let _repo = project_repo(&sandbox);
    let fake = fake_claude(&sandbox);
    let fake = fake.to_str().unwrap();
    let env = [("FAKE_OBEYS", "1"), ("BATON_HANDOFF_ON_CRITICAL", "advise")];
    let out = baton_run(&sandbox, &["run", "--", fake, "-p", "do the 20 steps"], &env);
    let stdout = common::stdout(&out);
    let stderr = common::stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let ends: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("prompt") || l.contains("ended") || l.contains("done"))
        .collect();
    assert_eq!(
        ends,
        vec![
            "leg 1 prompt: do the 20 steps",
            "leg 1 ended its turn",
            "leg 2 prompt: continue",
            "leg 2 ended its turn",
            "leg 3 prompt: continue",
            "leg 3 done",
        ],
        "{stdout}"
    );
    let brief = |leg: u32| std::fs::read_to_string(sandbox.root().join(format!("brief-{leg}.json"))).unwrap();
    assert!(brief(2).contains("This is leg 2 of a relay"), "{}", brief(2));
    assert!(stderr.contains("baton run: leg 1 paused at 81 %, handoff .planning/"), "{stderr}");
    let summary = stderr.lines().last().unwrap();
    assert!(
        summary.starts_with(
            "baton run: 3 legs; leg 1: peak 81 %, ended with its handoff pending, handoff .planning/"
        ),
        "{summary}"
    );
    assert!(summary.ends_with("the last leg ended without a pause."), "{summary}");

    // A handoff the agent wrote by hand (`baton pause`) pauses its leg too.
    let sandbox = Sandbox::new();
    let _repo = project_repo(&sandbox);
    let fake = fake_claude(&sandbox);
    let fake = fake.to_str().unwrap();
    let env = [("FAKE_PAUSE_LEGS", "0"), ("FAKE_MANUAL_LEG", "1")];
    let out = baton_run(&sandbox, &["run", "--", fake, "-p", "go"], &env);
    let stdout = common::stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", common::stderr(&out));
    assert!(stdout.contains("leg 1 paused by hand\nleg 2 prompt: continue"), "{stdout}");
    assert!(stdout.contains("leg 2 done") && !stdout.contains("leg 3"), "{stdout}");
}

#[test]
fn baton_run_honours_max_legs_and_refuses_what_it_cannot_run() {
    let sandbox = Sandbox::new();
    let _repo = project_repo(&sandbox);
    let fake = fake_claude(&sandbox);
    let fake = fake.to_str().unwrap();
    let out =
        baton_run(&sandbox, &["run", "--max-legs", "2", "--", fake, "-p", "go"], &[("FAKE_PAUSE_LEGS", "9")]);
    let stdout = common::stdout(&out);
    let stderr = common::stderr(&out);
    // The host exited 0, but the task is not done: the last leg's handoff is pending.
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stdout.contains("leg 2 stopped") && !stdout.contains("leg 3"), "{stdout}");
    assert!(stderr.contains("--max-legs 2 reached"), "{stderr}");
    let summary = stderr.lines().find(|l| l.starts_with("baton run: 2 legs;")).unwrap_or_default();
    assert!(summary.ends_with("the last one paused (its handoff waits for the next session)."), "{stderr}");
    let last = stderr.lines().last().unwrap();
    assert!(
        last.starts_with("baton run: the task is not done: the last leg's handoff (.planning/HANDOFF.json) is pending. To go on, run `baton run` again: the same command continues from the handoff as a fresh leg"),
        "{stderr}"
    );
    // The same command again continues the relay: leg 3, briefed, with the continue prompt.
    let out =
        baton_run(&sandbox, &["run", "--max-legs", "2", "--", fake, "-p", "go"], &[("FAKE_PAUSE_LEGS", "2")]);
    let (stdout, stderr) = (common::stdout(&out), common::stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("leg 3 prompt: continue") && !stdout.contains("leg 1 prompt"), "{stdout}");
    assert!(stderr.contains("continuing the relay this command started"), "{stderr}");
    let brief = std::fs::read_to_string(sandbox.root().join("brief-3.json")).unwrap();
    assert!(brief.contains("This is leg 3 of a relay"), "{brief}");
    // Interactive and unknown commands are refused with a usage error, nothing run.
    let out = baton_run(&sandbox, &["run", "--", fake, "hello"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(common::stdout(&out).is_empty() && common::stderr(&out).contains("not headless"));
    let out = baton_run(&sandbox, &["run", "--", "vim", "-p", "x"], &[]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn pause_without_gsd_checkpoints_on_a_side_ref_and_says_so() {
    let sandbox = Sandbox::new();
    let repo = TestRepo::init(&sandbox.project(), &[("a.txt", "a\n")]);
    let head = repo.head_commit().id();
    let (result, output) = pause(&sandbox, &["--session", SESSION]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(result["checkpoint"]["used"], "ref", "{result}");
    assert_eq!(repo.head_commit().id(), head, "nothing committed on the user's branch");
    let text = sandbox.run(&["pause", "--session", SESSION], b"");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("no GSD project here: the checkpoint is a side ref"), "{text}");
    // Asked for, the branch is tried; baton keeps its files out of `git status` in a
    // project without GSD (.git/info/exclude), so it falls back to the ref and says why.
    let (result, _) = pause(&sandbox, &["--session", SESSION, "--checkpoint", "branch"]);
    assert_eq!(result["checkpoint"]["requested"], "branch", "{result}");
    assert!(result["checkpoint"]["fallback_reason"].as_str().unwrap().contains("ignored by git"), "{result}");
}
