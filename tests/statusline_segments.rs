//! The statusline's optional segments through the built binary: git markers and their
//! cache, the current task, the handoff marker, the configured order, and fitting the
//! line into `COLUMNS`.

use crate::common;

use std::path::{Path, PathBuf};

use common::{Sandbox, TestRepo, fixture_json, read_json};
use serde_json::{Value, json};

/// The mid-session payload, pointed at `dir`.
fn payload_in(dir: &Path) -> Value {
    let mut payload = fixture_json("statusline.json");
    payload["cwd"] = json!(dir);
    payload["workspace"]["current_dir"] = json!(dir);
    payload["workspace"]["project_dir"] = json!(dir);
    payload["transcript_path"] = Value::Null;
    payload
}

fn render(sandbox: &Sandbox, payload: &Value, env: &[(&str, &str)]) -> String {
    let mut env = env.to_vec();
    env.push(("NO_COLOR", "1"));
    let output = sandbox.run_with(&["statusline"], payload.to_string().as_bytes(), &env);
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap().trim_end_matches('\n').to_string()
}

/// A repository on `main` in the sandbox's project folder: a.ts staged, b.ts modified,
/// c.ts untracked.
fn repo_with_changes(sandbox: &Sandbox) -> TestRepo {
    let root = sandbox.project().join("shop-api");
    let repo = TestRepo::init(&root, &[]);
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    repo.write("a.ts", "a\n");
    repo.write("b.ts", "b\n");
    repo.commit_all("initial commit");
    repo.write("a.ts", "a staged\n");
    repo.stage("a.ts");
    repo.write("b.ts", "b modified\n");
    repo.write("c.ts", "c\n");
    repo
}

/// The git cache files in the sandbox's state dir.
fn cache_files(sandbox: &Sandbox) -> Vec<PathBuf> {
    let dir = sandbox.state_dir().join("statusline");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn git_markers_show_staged_modified_and_untracked() {
    let sandbox = Sandbox::new();
    let repo = repo_with_changes(&sandbox);
    let line = render(&sandbox, &payload_in(&repo.root), &[]);
    assert_eq!(line, "Opus 4.5 │ shop-api │ main │ +1 ~1 ?1 │ ███████░░░ 72% │ 23k to compact │ $1.83");
    let coloured = sandbox.run(&["statusline"], payload_in(&repo.root).to_string().as_bytes());
    assert!(String::from_utf8_lossy(&coloured.stdout).contains("\x1b[36m+1 ~1 ?1\x1b[0m"));
}

#[test]
fn the_second_render_uses_the_cache() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::new();
    let repo = repo_with_changes(&sandbox);
    let payload = payload_in(&repo.root);
    assert!(render(&sandbox, &payload, &[]).contains("│ +1 ~1 ?1 │"));
    let files = cache_files(&sandbox);
    assert_eq!(files.len(), 1, "one cache file per repository");
    let first = read_json(&files[0]);
    assert_eq!(first["repo"], json!(repo.root));
    assert_eq!(first["counts"], json!({"staged": 1, "modified": 1, "untracked": 1}));
    assert_eq!(std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777, 0o600);
    let modified = std::fs::metadata(&files[0]).unwrap().modified().unwrap();

    // A new untracked file does not show yet: the second render did not scan again.
    repo.write("d.ts", "d\n");
    assert!(render(&sandbox, &payload, &[]).contains("│ +1 ~1 ?1 │"));
    assert_eq!(read_json(&files[0])["checked_at_ms"], first["checked_at_ms"]);
    assert_eq!(std::fs::metadata(&files[0]).unwrap().modified().unwrap(), modified);

    // Staging rewrites the index: the record is stale at once.
    repo.stage("d.ts");
    assert!(render(&sandbox, &payload, &[]).contains("│ +2 ~1 ?1 │"));
    assert_ne!(read_json(&files[0])["checked_at_ms"], Value::Null);

    // With caching off every render scans, and nothing is written.
    repo.write("e.ts", "e\n");
    let line = render(&sandbox, &payload, &[("BATON_STATUSLINE_GIT_CACHE_SECONDS", "0")]);
    assert!(line.contains("│ +2 ~1 ?2 │"), "{line}");
}

/// A repository of 3,000 committed files on `main` in the sandbox's project folder, one
/// of them modified: more than a 1 ms scan budget can cover.
fn big_repo(sandbox: &Sandbox) -> PathBuf {
    let root = sandbox.project().join("big");
    let repo = TestRepo::init(&root, &[]);
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    for i in 0..3000 {
        repo.write(&format!("src/d{}/f{i}.ts", i % 30), "x\n");
    }
    repo.commit_all("many files");
    repo.write("src/d0/f0.ts", "changed\n");
    root
}

/// Waits (up to 20 s) until the cache record at `path` satisfies `done`.
fn wait_for_record(path: &Path, done: impl Fn(&Value) -> bool) -> Value {
    let start = std::time::Instant::now();
    loop {
        let record = read_json(path);
        if done(&record) || start.elapsed() > std::time::Duration::from_secs(20) {
            return record;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn an_old_record_is_shown_while_the_background_scans_again() {
    let sandbox = Sandbox::new();
    let repo = repo_with_changes(&sandbox);
    let payload = payload_in(&repo.root);
    let cache = [("BATON_STATUSLINE_GIT_CACHE_SECONDS", "1")];
    assert!(render(&sandbox, &payload, &cache).contains("│ +1 ~1 ?1 │"));
    let file = cache_files(&sandbox).remove(0);
    let first = read_json(&file);

    // The record grows old (HEAD and the index unchanged) while a file appears: the next
    // render shows the old markers at once, and a detached refresh caches the new ones.
    repo.write("d.ts", "d\n");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert!(render(&sandbox, &payload, &cache).contains("│ +1 ~1 ?1 │"));
    let record = wait_for_record(&file, |r| r["checked_at_ms"] != first["checked_at_ms"]);
    assert_eq!(record["counts"], json!({"staged": 1, "modified": 1, "untracked": 2}), "{record}");
    assert!(render(&sandbox, &payload, &cache).contains("│ +1 ~1 ?2 │"));
    // The refresh leaves its lock file beside the record, private, and nothing else.
    let files: Vec<String> =
        cache_files(&sandbox).iter().map(|p| p.extension().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(files, ["json", "lock"]);
}

#[test]
fn the_background_scan_gives_markers_the_render_budget_could_not() {
    let sandbox = Sandbox::new();
    let root = big_repo(&sandbox);
    let env = [("BATON_STATUSLINE_GIT_BUDGET_MS", "1"), ("BATON_STATUSLINE_GIT_CACHE_SECONDS", "1")];
    let line = render(&sandbox, &payload_in(&root), &env);
    assert!(!line.contains("~1"), "{line}");
    let file = cache_files(&sandbox).remove(0);
    assert_eq!(read_json(&file)["over_budget_streak"], 1);
    // Past the cache period (and its back-off of one period after one scan over
    // budget), a render starts the background scan, which has the time.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    render(&sandbox, &payload_in(&root), &env);
    let record = wait_for_record(&file, |r| r["counts"] != Value::Null);
    assert_eq!(record["counts"], json!({"staged": 0, "modified": 1, "untracked": 0}), "{record}");
    assert_eq!(record["over_budget_streak"], 0);
    assert!(render(&sandbox, &payload_in(&root), &env).contains("│ main │ ~1 │"));
}

#[test]
fn a_refresh_never_makes_a_removed_cache_folder_again() {
    let sandbox = Sandbox::new();
    let repo = repo_with_changes(&sandbox);
    let root = repo.root.to_string_lossy().into_owned();
    // No render stored a record: the state folder is not there.
    let output = sandbox.run(&["statusline", "--refresh-git", &root], b"");
    assert!(output.status.success() && output.stdout.is_empty());
    assert!(!sandbox.state_dir().join("statusline").exists());
    // With the folder there, the refresh caches the markers.
    std::fs::create_dir_all(sandbox.state_dir().join("statusline")).unwrap();
    sandbox.run(&["statusline", "--refresh-git", &root], b"");
    let record = read_json(&cache_files(&sandbox)[0]);
    assert_eq!(record["counts"], json!({"staged": 1, "modified": 1, "untracked": 1}));
}

#[test]
fn a_refresh_of_a_folder_that_is_not_a_work_tree_top_does_nothing() {
    let sandbox = Sandbox::new();
    let repo = repo_with_changes(&sandbox);
    let inside = repo.root.join("sub");
    std::fs::create_dir_all(&inside).unwrap();
    for dir in [inside.as_path(), Path::new("relative/path"), sandbox.home().as_path()] {
        let output = sandbox.run(&["statusline", "--refresh-git", &dir.to_string_lossy()], b"");
        assert!(output.status.success() && output.stdout.is_empty() && output.stderr.is_empty());
    }
    assert!(cache_files(&sandbox).is_empty());
}

#[test]
fn a_scan_over_budget_shows_the_branch_alone() {
    let sandbox = Sandbox::new();
    let root = big_repo(&sandbox);
    let line = render(&sandbox, &payload_in(&root), &[("BATON_STATUSLINE_GIT_BUDGET_MS", "1")]);
    assert_eq!(line, "Opus 4.5 │ big │ main │ ███████░░░ 72% │ 23k to compact │ $1.83");
    let record = read_json(&cache_files(&sandbox)[0]);
    assert_eq!(record["counts"], Value::Null);
    assert_eq!(record["error"], Value::Null);
    assert_eq!(record["over_budget_streak"], 1);
    // Given time, the same repository shows its markers.
    let line = render(
        &sandbox,
        &payload_in(&root),
        &[("BATON_STATUSLINE_GIT_BUDGET_MS", "60000"), ("BATON_STATUSLINE_GIT_CACHE_SECONDS", "0")],
    );
    assert!(line.contains("│ main │ ~1 │"), "{line}");
}

#[test]
fn the_task_in_progress_comes_from_the_transcript() {
    let sandbox = Sandbox::new();
    let project = sandbox.project().join("shop-api");
    std::fs::create_dir_all(&project).unwrap();
    let transcript = common::transcript_for(&project, &sandbox.home().join("t.jsonl"));
    let mut payload = payload_in(&project);
    payload["transcript_path"] = json!(transcript);
    let line = render(&sandbox, &payload, &[]);
    assert_eq!(
        line,
        "Opus 4.5 │ shop-api │ Wiring the limiter into the orders routes │ ███████░░░ 72% │ 23k to compact │ $1.83"
    );
}

#[test]
fn without_a_todo_the_gsd_phase_is_the_task() {
    let sandbox = Sandbox::new();
    let project = sandbox.project().join("shop-api");
    common::gsd_planning(&project);
    let mut payload = payload_in(&project);
    payload["transcript_path"] = json!(sandbox.home().join("missing.jsonl"));
    let line = render(&sandbox, &payload, &[]);
    assert_eq!(
        line,
        "Opus 4.5 │ shop-api │ Phase 3/5: Rate limiting │ ███████░░░ 72% │ 23k to compact │ $1.83"
    );
}

#[test]
fn a_paused_handoff_is_marked() {
    let sandbox = Sandbox::new();
    let project = sandbox.project().join("shop-api");
    std::fs::create_dir_all(project.join(".planning")).unwrap();
    let handoff = project.join(".planning/HANDOFF.json");
    std::fs::write(&handoff, r#"{"version": "1.0", "status": "paused", "next_action": "x"}"#).unwrap();
    let line = render(&sandbox, &payload_in(&project), &[]);
    assert_eq!(line, "Opus 4.5 │ shop-api │ ⏸ handoff │ ███████░░░ 72% │ 23k to compact │ $1.83");
    std::fs::remove_file(&handoff).unwrap();
    assert!(!render(&sandbox, &payload_in(&project), &[]).contains("handoff"));
}

#[test]
fn columns_40_drops_the_least_important_first() {
    let sandbox = Sandbox::new();
    let repo = repo_with_changes(&sandbox);
    std::fs::write(repo.root.join(".git/HEAD"), "ref: refs/heads/feat/rate-limit\n").unwrap();
    let transcript = common::transcript_for(&repo.root, &sandbox.home().join("t.jsonl"));
    std::fs::create_dir_all(repo.root.join(".planning")).unwrap();
    std::fs::write(repo.root.join(".planning/HANDOFF.json"), r#"{"status": "paused"}"#).unwrap();
    let mut payload = payload_in(&repo.root);
    payload["transcript_path"] = json!(transcript);

    let wide = render(&sandbox, &payload, &[]);
    assert!(wide.contains("Wiring the limiter") && wide.contains("$1.83"), "{wide}");
    let line = render(&sandbox, &payload, &[("COLUMNS", "40")]);
    assert_eq!(line, "Opus 4.5 │ ⏸ handoff │ ███████░░░ 72%");
    assert!(line.chars().count() <= 40);

    // With colour on, the fit is the same and every escape is whole.
    let output = sandbox.run_with(&["statusline"], payload.to_string().as_bytes(), &[("COLUMNS", "40")]);
    let coloured = String::from_utf8(output.stdout).unwrap();
    let plain = strip_ansi(&coloured);
    assert_eq!(plain.trim_end(), line);
    assert_eq!(coloured.matches("\x1b[").count(), coloured.matches('m').count() - plain.matches('m').count());

    let tiny = render(&sandbox, &payload, &[("COLUMNS", "12")]);
    assert_eq!(tiny, "72%");
}

/// Removes `ESC [ … m` sequences; panics on a cut one.
fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            assert_eq!(chars.next(), Some('['), "a cut escape in {text:?}");
            loop {
                match chars.next() {
                    Some('m') => break,
                    Some(c) if c.is_ascii_digit() || c == ';' => {}
                    other => panic!("a cut escape ({other:?}) in {text:?}"),
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn segments_follow_the_configured_order_and_unknown_names_are_reported() {
    let sandbox = Sandbox::new();
    let project = sandbox.project().join("shop-api");
    let config = project.join(".claude/baton.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, r#"{"statusline": {"segments": ["meter", "cost", "sparkles", "model"]}}"#)
        .unwrap();
    let line = render(&sandbox, &payload_in(&project), &[]);
    assert_eq!(line, "███████░░░ 72% │ $1.83 │ Opus 4.5");

    let output = sandbox.run(&["config", "--cwd", project.to_str().unwrap()], b"");
    assert_eq!(output.status.code(), Some(1), "an unknown name is an error for `baton config`");
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("statusline.segments"), "{text}");
    assert!(text.contains("unknown name `sparkles`"), "{text}");

    let env = [("BATON_STATUSLINE_SEGMENTS", "project,meter")];
    assert_eq!(render(&sandbox, &payload_in(&project), &env), "shop-api │ ███████░░░ 72%");
}

/// Builds a 100,000-file repository and times renders: the first one scans (or gives
/// up at the budget), the later ones hit the cache. Run with
/// `cargo test --release --test it statusline_segments:: -- --ignored --nocapture`.
#[test]
#[ignore]
fn timing_in_a_100k_file_repository() {
    use std::time::{Duration, Instant};
    let sandbox = Sandbox::new();
    let root = sandbox.project().join("huge");
    let repo = TestRepo::init(&root, &[]);
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let start = Instant::now();
    for d in 0..100 {
        for f in 0..1000 {
            repo.write(&format!("src/m{d:03}/f{f:04}.rs"), "// x\n");
        }
    }
    repo.commit_all("100k files");
    repo.write("src/m000/f0000.rs", "changed\n");
    repo.write("new.rs", "new\n");
    println!("built the repository in {:?}", start.elapsed());
    let payload = payload_in(&root);
    let time = |env: &[(&str, &str)]| {
        let start = Instant::now();
        let line = render(&sandbox, &payload, env);
        (start.elapsed(), line)
    };
    let median = |mut times: Vec<Duration>| {
        times.sort();
        times[times.len() / 2]
    };
    let outside = {
        let other = sandbox.project().join("plain");
        std::fs::create_dir_all(&other).unwrap();
        let payload = payload_in(&other);
        let times: Vec<Duration> = (0..30)
            .map(|_| {
                let start = Instant::now();
                render(&sandbox, &payload, &[]);
                start.elapsed()
            })
            .collect();
        median(times)
    };
    for (label, budget) in [("default budget 100 ms", "100"), ("budget 10 s", "10000")] {
        for file in cache_files(&sandbox) {
            std::fs::remove_file(file).unwrap();
        }
        let env = [("BATON_STATUSLINE_GIT_BUDGET_MS", budget), ("BATON_STATUSLINE_GIT_CACHE_SECONDS", "60")];
        let (first, line) = time(&env);
        let record = read_json(&cache_files(&sandbox)[0]);
        let later: Vec<Duration> = (0..30).map(|_| time(&env).0).collect();
        println!(
            "{label}: first render {first:?} (scan {} ms, counts {}), later renders median {:?}; line: {line}",
            record["scan_ms"],
            record["counts"],
            median(later)
        );
    }
    println!("same binary outside any repository: median {outside:?}");
}

// Rate limits, the prompt cache, compactions and the second row: fed through stdin.

/// Claude Code 2.1.332's own payload (60 % used, `prompt_cache` included), pointed at `dir`.
fn real_payload_in(dir: &Path) -> Value {
    let mut payload = fixture_json("real/claude/statusline.json");
    payload["cwd"] = json!(dir);
    payload["workspace"]["current_dir"] = json!(dir);
    payload["workspace"]["project_dir"] = json!(dir);
    payload["transcript_path"] = Value::Null;
    payload
}

fn with_segments(sandbox: &Sandbox, segments: &str, payload: &Value) -> String {
    render(sandbox, payload, &[("BATON_STATUSLINE_SEGMENTS", segments)])
}

#[test]
fn rate_limits_come_from_the_payload_only() {
    let sandbox = Sandbox::new();
    let mut payload = real_payload_in(&sandbox.project());
    assert_eq!(
        with_segments(&sandbox, "rate_limits,meter", &payload),
        "██████░░░░ 60%",
        "absent: no segment"
    );
    let now = common::now();
    payload["rate_limits"] = json!({
        "five_hour": {"used_percentage": 42.4, "resets_at": now + 4830},
        "seven_day": {"used_percentage": 18, "resets_at": now + 3 * 86_400 + 7300}
    });
    let line = with_segments(&sandbox, "rate_limits,meter", &payload);
    assert!(line.starts_with("5h 42% ↻1h20m 7d 18% ↻3d2h │ "), "{line}");
    // Only one window, a reset in the past, junk types: what is known is shown.
    payload["rate_limits"] =
        json!({"five_hour": {"used_percentage": 91, "resets_at": now - 5}, "seven_day": "x"});
    assert_eq!(with_segments(&sandbox, "rate_limits", &payload), "5h 91%");
    // Coloured as a warning near the limit.
    let output = sandbox.run_with(
        &["statusline"],
        payload.to_string().as_bytes(),
        &[("BATON_STATUSLINE_SEGMENTS", "rate_limits")],
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains('\x1b'), "painted");
}

#[test]
fn the_prompt_cache_counts_down() {
    let sandbox = Sandbox::new();
    // The real payload (Claude Code 2.1.332) carries `prompt_cache`.
    let mut payload = real_payload_in(&sandbox.project());
    assert!(payload["prompt_cache"]["expires_at"].is_number());
    let now = common::now();
    payload["prompt_cache"]["expires_at"] = json!(now + 252);
    let line = with_segments(&sandbox, "cache", &payload);
    assert!(line == "cache 4:12" || line == "cache 4:11", "{line}");
    payload["prompt_cache"]["expires_at"] = json!(now - 1);
    assert_eq!(with_segments(&sandbox, "cache", &payload), "cache cold");
    payload["prompt_cache"] = json!({"warm": false, "expires_at": now + 100});
    assert_eq!(with_segments(&sandbox, "cache", &payload), "cache cold");
    payload.as_object_mut().unwrap().remove("prompt_cache");
    assert_eq!(with_segments(&sandbox, "cache,meter", &payload), "██████░░░░ 60%");
}

#[test]
fn compactions_are_counted_by_the_hook() {
    let sandbox = Sandbox::new();
    let mut payload = real_payload_in(&sandbox.project());
    let session = payload["session_id"].as_str().unwrap().to_string();
    assert_eq!(with_segments(&sandbox, "compactions,meter", &payload), "██████░░░░ 60%", "none yet");
    let pre_compact = json!({"session_id": session, "cwd": sandbox.project(), "hook_event_name": "PreCompact",
        "trigger": "auto", "transcript_path": null});
    for expected in ["⟳ 1 compaction", "⟳ 2 compactions"] {
        let output = sandbox.hook(&pre_compact);
        assert!(output.status.success());
        assert_eq!(with_segments(&sandbox, "compactions", &payload), expected);
    }
    payload["session_id"] = json!("another-session");
    assert_eq!(with_segments(&sandbox, "compactions,meter", &payload), "██████░░░░ 60%");
}

#[test]
fn a_second_row_when_configured() {
    let sandbox = Sandbox::new();
    let mut payload = real_payload_in(&sandbox.project());
    payload["rate_limits"] = json!({"five_hour": {"used_percentage": 10}});
    let line = render(
        &sandbox,
        &payload,
        &[("BATON_STATUSLINE_SEGMENTS", "meter"), ("BATON_STATUSLINE_SECOND_LINE", "rate_limits,cost")],
    );
    assert_eq!(line, "██████░░░░ 60%\n5h 10% │ $0.04");
    // Nothing to show on it: no empty row.
    payload.as_object_mut().unwrap().remove("rate_limits");
    payload.as_object_mut().unwrap().remove("cost");
    let line = render(
        &sandbox,
        &payload,
        &[("BATON_STATUSLINE_SEGMENTS", "meter"), ("BATON_STATUSLINE_SECOND_LINE", "rate_limits,cost")],
    );
    assert_eq!(line, "██████░░░░ 60%");
}
