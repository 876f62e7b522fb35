//! Issue 32, finding 3: `baton pause` killed with SIGKILL at any moment of its run, in each
//! checkpoint mode, leaves git usable: every lock left is one baton recognises as its own
//! (the same file as a scratch file named with the dead process's pid), the next baton
//! run clears it (or finishes the branch's move it stood for), and the user's `git commit`
//! then commits exactly what they had staged.

use crate::common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{SESSION, Sandbox, TestRepo};

/// `git` itself (the user's next command), with nothing of the machine's configuration.
fn git(sandbox: &Sandbox, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args(args)
        .current_dir(sandbox.project())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", sandbox.home())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs")
}

fn git_ok(sandbox: &Sandbox, args: &[&str]) -> String {
    let output = git(sandbox, args);
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// Every file under `dir`.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// git's lock files in `.git` (the index's, the refs').
fn git_locks(project: &Path) -> Vec<PathBuf> {
    let git_dir = project.join(".git");
    let mut all =
        vec![git_dir.join("index.lock"), git_dir.join("HEAD.lock"), git_dir.join("packed-refs.lock")];
    walk(&git_dir.join("refs"), &mut all);
    all.into_iter().filter(|p| p.exists() && p.to_string_lossy().ends_with(".lock")).collect()
}

/// baton's scratch files in `.git`.
fn scratch_files(project: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(project.join(".git"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("baton-"))
        .collect()
}

/// Whether `lock` is the same file as one of baton's scratch files (baton's own lock).
fn batons(lock: &Path, scratch: &[PathBuf]) -> bool {
    let lock = std::fs::metadata(lock).unwrap();
    scratch
        .iter()
        .filter_map(|s| std::fs::metadata(s).ok())
        .any(|s| s.ino() == lock.ino() && s.dev() == lock.dev())
}

/// A GSD project (so `pause` commits on the branch by default) with enough tracked files
/// that a pause takes a while.
fn project(sandbox: &Sandbox) -> TestRepo {
    let repo = TestRepo::init(&sandbox.project(), &[("src/app.ts", "app\n")]);
    common::gsd_planning(&sandbox.project());
    for i in 0..1_500 {
        repo.write(&format!("src/gen/f{i:04}.ts"), &format!("export const f{i} = {i};\n"));
    }
    repo.commit_all("many files");
    repo
}

fn pause_args(sandbox: &Sandbox, mode: &str) -> Vec<String> {
    let project = sandbox.project().to_string_lossy().into_owned();
    ["pause", "--checkpoint", mode, "--cwd", &project, "--session", SESSION]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// The user stages a change, as they would between two pauses.
fn stage(sandbox: &Sandbox, content: &str) {
    std::fs::write(sandbox.project().join("src/staged.ts"), content).unwrap();
    git_ok(sandbox, &["add", "src/staged.ts"]);
}

/// After a killed pause: whatever lock is left is baton's; the next baton run clears it;
/// then the staged change alone is staged, and `git commit` commits exactly it.
#[track_caller]
fn git_as_it_was(sandbox: &Sandbox, staged: &str, what: &str) {
    let project = sandbox.project();
    let scratch = scratch_files(&project);
    for lock in git_locks(&project) {
        assert!(batons(&lock, &scratch), "{what}: {} is not baton's (scratch: {scratch:?})", lock.display());
    }
    // The next baton run (here a pause that checkpoints nothing).
    let later = sandbox.run(&pause_args(sandbox, "off").iter().map(String::as_str).collect::<Vec<_>>(), b"");
    assert!(later.status.success(), "{what}: {}", String::from_utf8_lossy(&later.stderr));
    assert_eq!(git_locks(&project), Vec::<PathBuf>::new(), "{what}: locks left after the next run");
    assert_eq!(scratch_files(&project), Vec::<PathBuf>::new(), "{what}: scratch files left");
    assert_eq!(
        git_ok(sandbox, &["diff", "--cached", "--name-only"]),
        "src/staged.ts\n",
        "{what}: what is staged"
    );
    assert_eq!(git_ok(sandbox, &["show", ":src/staged.ts"]), staged, "{what}: the staged content");
    let commit = git(sandbox, &["commit", "-q", "-m", &format!("user: {what}")]);
    assert!(commit.status.success(), "{what}: git commit: {}", String::from_utf8_lossy(&commit.stderr));
    assert_eq!(git_ok(sandbox, &["show", "--name-only", "--format=", "HEAD"]), "src/staged.ts\n", "{what}");
    git_ok(sandbox, &["fsck", "--no-progress", "--connectivity-only"]);
}

#[test]
fn kill_9_at_each_step_of_the_branch_commit_then_git_commit() {
    let sandbox = Sandbox::new();
    project(&sandbox);
    let args = pause_args(&sandbox, "branch");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    for step in ["index-locked", "branch-locked", "index-replaced", "branch-moved"] {
        let staged = format!("staged before the kill at {step}\n");
        stage(&sandbox, &staged);
        let head = git_ok(&sandbox, &["rev-parse", "HEAD"]);
        let output = sandbox.run_with(&args, b"", &[("BATON_DEBUG_KILL_AT", step)]);
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&output.status),
            Some(libc::SIGKILL),
            "{step}"
        );
        if step != "branch-moved" {
            assert!(!git_locks(&sandbox.project()).is_empty(), "{step}: killed holding a lock");
        }
        git_as_it_was(&sandbox, &staged, step);
        // Killed once the index held the WIP commit: the next run moved the branch to it.
        let wip = git_ok(&sandbox, &["log", "-1", "--format=%s", "HEAD~1"]);
        let moved = matches!(step, "index-replaced" | "branch-moved");
        assert_eq!(wip.starts_with("wip:"), moved, "{step}: {wip}");
        if !moved {
            assert_eq!(git_ok(&sandbox, &["rev-parse", "HEAD~1"]), head, "{step}: the branch did not move");
        }
    }
}

#[test]
fn kill_9_swept_through_pause_in_each_checkpoint_mode_then_git_commit() {
    for mode in ["branch", "ref", "off"] {
        let sandbox = Sandbox::new();
        project(&sandbox);
        let args = pause_args(&sandbox, mode);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        stage(&sandbox, "first\n");
        let start = Instant::now();
        let output = sandbox.run(&args, b"");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let full = start.elapsed().max(Duration::from_millis(20));
        git_as_it_was(&sandbox, "first\n", &format!("{mode}: a whole pause"));
        let rounds = 10u32;
        for round in 0..rounds {
            let staged = format!("{mode} round {round}\n");
            stage(&sandbox, &staged);
            let delay = full * (round + 1) / (rounds + 1);
            let mut child = sandbox.command(&args).spawn().unwrap();
            std::thread::sleep(delay);
            // SAFETY: signalling our own child process by its pid.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
            let _ = child.wait();
            git_as_it_was(&sandbox, &staged, &format!("{mode}: killed after {delay:?} of {full:?}"));
        }
    }
}
