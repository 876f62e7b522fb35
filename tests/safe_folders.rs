//! Issue 32, finding 2: a handoff is written only where no other local user can read,
//! swap or plant it. In a world-writable folder (sticky like `/tmp`, or 0777), one owned
//! by another user, or a repository whose `.planning/` another user made, the CRITICAL
//! hook and `baton pause` write to baton's private folder instead, say where and why in
//! one line, and the next session there is briefed from it.
//!
//! Giving a folder to another user needs root; where the tests do not run as root, those
//! cases are skipped with the reason printed.

use crate::common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use common::{SESSION, Sandbox, TestRepo, notice, read_json, told};
use serde_json::{Value, json};

const NEXT: &str = "9b1d0c55-2f6a-4e0b-8c3d-7a5e1f2b3c44";

/// Another user's id: `nobody`'s.
const OTHER_UID: u32 = 65534;

/// Gives `path` to another user, or says why it cannot (only root can).
fn give_away(path: &Path) -> bool {
    match std::os::unix::fs::chown(path, Some(OTHER_UID), Some(OTHER_UID)) {
        Ok(()) => true,
        Err(e) => {
            println!(
                "skipped: cannot give {} to uid {OTHER_UID} ({e}); run the tests as root",
                path.display()
            );
            false
        }
    }
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The handoff of `session` in baton's private folder, if there is one.
fn private_handoff(sandbox: &Sandbox, session: &str) -> Option<PathBuf> {
    let folder = sandbox.state_dir().join("handoffs");
    std::fs::read_dir(folder)
        .ok()?
        .flatten()
        .map(|project| project.path().join(session).join(".planning/HANDOFF.json"))
        .find(|path| path.is_file())
}

/// Every file under `dir` (none when it does not exist).
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() && !path.ends_with(".git") {
            out.extend(files_under(&path));
        } else if path.is_file() {
            out.push(path);
        }
    }
    out
}

/// The CRITICAL hook in `cwd`: what the agent and the user are told.
fn critical_in(sandbox: &Sandbox, session: &str, cwd: &Path) -> (String, String) {
    sandbox.write_bridge(session, 20.0, 0);
    let output = sandbox.hook(&json!({
        "session_id": session, "transcript_path": Value::Null, "cwd": cwd,
        "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {}, "tool_response": {},
    }));
    let told = told(&output).expect("CRITICAL fires");
    (told, notice(&output).unwrap_or_default())
}

fn start_in(sandbox: &Sandbox, session: &str, cwd: &Path) -> String {
    let output = sandbox.hook(&json!({
        "session_id": session, "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup",
    }));
    told(&output).unwrap_or_default()
}

/// The status line rendered for a session in `cwd`, without colour.
fn statusline_in(sandbox: &Sandbox, cwd: &Path) -> String {
    let mut payload = common::fixture_json("statusline.json");
    payload["cwd"] = json!(cwd);
    payload["workspace"]["current_dir"] = json!(cwd);
    payload["workspace"]["project_dir"] = json!(cwd);
    payload["transcript_path"] = Value::Null;
    let output = sandbox.run_with(&["statusline"], payload.to_string().as_bytes(), &[("NO_COLOR", "1")]);
    assert!(output.status.success());
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The CRITICAL handoff of a session in `cwd` goes to baton's private folder, says where
/// and why (`why` in the reason), and briefs the next session there. Nothing is written
/// under `watched`.
#[track_caller]
fn goes_private(sandbox: &Sandbox, cwd: &Path, watched: &Path, why: &str) {
    let before = files_under(watched);
    let (agent, user) = critical_in(sandbox, SESSION, cwd);
    assert_eq!(files_under(watched), before, "nothing written under {}", watched.display());
    let private = private_handoff(sandbox, SESSION).expect("the handoff is in baton's private folder");
    let shown = private.to_string_lossy();
    assert!(
        agent.contains(&*shown) && agent.contains("baton's private folder, not the project, because"),
        "{agent}"
    );
    assert!(agent.contains(why), "the agent is told why ({why}): {agent}");
    assert!(
        user.contains(&format!("handoff saved to {shown} (not in the project: ")) && user.contains(why),
        "{user}"
    );
    assert!(!user.contains('\n'), "one line: {user}");
    // Private: the folders on the way are the user's alone.
    let folder = private.parent().unwrap().parent().unwrap();
    assert_eq!(std::fs::metadata(folder).unwrap().mode() & 0o777, 0o700);
    assert_eq!(read_json(&private)["baton"]["session_id"], SESSION);
    assert!(private.with_file_name(".continue-here.md").is_file());
    // The status line there marks it as waiting, as it would one in the project.
    assert!(statusline_in(sandbox, cwd).contains("⏸ handoff"), "{}", statusline_in(sandbox, cwd));
    // The next session in that folder is briefed from it.
    let brief = start_in(sandbox, NEXT, cwd);
    assert!(brief.starts_with("baton resume brief: a paused handoff from session 7f3c2a10"), "{brief}");
    assert!(brief.contains(&format!("Files: {shown}")), "{brief}");
}

#[test]
fn a_sticky_world_writable_folder_without_a_repository_gets_no_handoff() {
    let sandbox = Sandbox::new();
    let shared = sandbox.root().join("shared");
    std::fs::create_dir(&shared).unwrap();
    chmod(&shared, 0o1777);
    goes_private(&sandbox, &shared, &shared, "is writable by every user");
}

#[test]
fn a_world_writable_folder_gets_no_handoff() {
    let sandbox = Sandbox::new();
    let open = sandbox.root().join("open");
    std::fs::create_dir(&open).unwrap();
    chmod(&open, 0o777);
    goes_private(&sandbox, &open, &open, "is writable by every user");
}

#[test]
fn a_folder_of_another_user_gets_no_handoff() {
    let sandbox = Sandbox::new();
    let theirs = sandbox.root().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    chmod(&theirs, 0o755);
    if !give_away(&theirs) {
        return;
    }
    goes_private(&sandbox, &theirs, &theirs, &format!("belongs to another user (uid {OTHER_UID})"));
}

/// A repository of the user's whose `.planning/` another user made (`mode`).
fn repository_with_foreign_planning(sandbox: &Sandbox, mode: u32) -> Option<TestRepo> {
    let repo = TestRepo::init(&sandbox.project(), &[("src/app.ts", "app\n")]);
    common::gsd_planning(&sandbox.project());
    repo.commit_all("plan");
    let planning = sandbox.project().join(".planning");
    chmod(&planning, mode);
    for entry in files_under(&planning).iter().map(|f| f.as_path()).chain([planning.as_path()]) {
        if !give_away(entry) {
            return None;
        }
    }
    if !give_away(&planning.join("phases")) || !give_away(&planning.join("phases/03-rate-limiting")) {
        return None;
    }
    Some(repo)
}

#[test]
fn a_planning_folder_another_user_made_gets_no_handoff() {
    for mode in [0o755, 0o777] {
        let sandbox = Sandbox::new();
        let Some(repo) = repository_with_foreign_planning(&sandbox, mode) else { return };
        let head = repo.head_commit().id();
        let project = sandbox.project();
        goes_private(&sandbox, &project, &project.join(".planning"), "belongs to another user (uid 65534)");
        // Nothing went into the project's git either.
        assert_eq!(repo.head_commit().id(), head);
        assert!(repo.refs().iter().all(|(name, _)| !name.starts_with("refs/baton")));
    }
}

#[test]
fn baton_pause_in_an_unsafe_project_writes_to_the_private_folder_and_says_why() {
    let sandbox = Sandbox::new();
    let Some(repo) = repository_with_foreign_planning(&sandbox, 0o755) else { return };
    let head = repo.head_commit().id();
    let project = sandbox.project();
    let planning_before = files_under(&project.join(".planning"));
    for mode in ["branch", "ref", "off"] {
        let output = sandbox.run(
            &[
                "pause",
                "--checkpoint",
                mode,
                "--report",
                "--cwd",
                project.to_str().unwrap(),
                "--session",
                SESSION,
            ],
            b"",
        );
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let text = String::from_utf8(output.stdout).unwrap();
        let private = private_handoff(&sandbox, SESSION).expect("in the private folder");
        assert!(text.contains(&format!("  - {} (structured", private.display())), "{text}");
        assert!(
            text.contains("(in baton's private folder, not the project: ")
                && text.contains(".planning belongs to another user (uid 65534))"),
            "{text}"
        );
        assert!(text.contains("session report"), "{text}");
        assert_eq!(files_under(&project.join(".planning")), planning_before, "--checkpoint {mode}");
        assert_eq!(repo.head_commit().id(), head, "--checkpoint {mode}: no commit");
    }
    assert!(repo.refs().iter().all(|(name, _)| !name.starts_with("refs/baton")));
    // baton resume finds it, and --done archives it in the private folder.
    let cwd = project.to_str().unwrap();
    let shown = String::from_utf8(sandbox.run(&["resume", "--cwd", cwd], b"").stdout).unwrap();
    assert!(shown.starts_with("baton resume brief"), "{shown}");
    let done = sandbox.run(&["resume", "--done", "--cwd", cwd], b"");
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    assert!(private_handoff(&sandbox, SESSION).is_none());
    assert_eq!(files_under(&project.join(".planning")), planning_before);
}

#[test]
fn a_handoff_left_in_a_folder_that_became_another_users_is_no_longer_trusted() {
    let sandbox = Sandbox::new();
    let repo = TestRepo::init(&sandbox.project(), &[("src/app.ts", "app\n")]);
    common::gsd_planning(&sandbox.project());
    repo.commit_all("plan");
    let project = sandbox.project();
    critical_in(&sandbox, SESSION, &project);
    let handoff = project.join(".planning/HANDOFF.json");
    assert!(handoff.is_file(), "a safe project gets its handoff");
    assert!(start_in(&sandbox, NEXT, &project).starts_with("baton resume brief"));
    // Another user now owns the folder: they could have rewritten the handoff, id and all.
    if !give_away(&project.join(".planning")) {
        return;
    }
    let line = start_in(&sandbox, "aaaa0000-0000-4000-8000-000000000001", &project);
    assert!(line.starts_with("A handoff exists at .planning/HANDOFF.json, written elsewhere"), "{line}");
    let accept = sandbox.run(&["resume", "--accept", "--cwd", project.to_str().unwrap()], b"");
    assert_eq!(accept.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&accept.stderr).contains("another user could change the handoff there"));
}

#[test]
fn a_projects_own_group_writable_folder_is_still_the_project() {
    // A umask of 002: the user's own folders are group-writable, and still theirs.
    let sandbox = Sandbox::new();
    let repo = TestRepo::init(&sandbox.project(), &[("src/app.ts", "app\n")]);
    common::gsd_planning(&sandbox.project());
    repo.commit_all("plan");
    chmod(&sandbox.project(), 0o775);
    chmod(&sandbox.project().join(".planning"), 0o775);
    critical_in(&sandbox, SESSION, &sandbox.project());
    assert!(sandbox.project().join(".planning/HANDOFF.json").is_file());
    assert!(private_handoff(&sandbox, SESSION).is_none());
}
