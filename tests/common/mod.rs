//! Shared helpers for the black-box tests: a sandbox with its own temp dir, home, XDG
//! dirs, Claude config folder and project folder, and a way to run the built binary
//! inside it with every other variable cleared (nothing leaks onto the machine, nothing
//! from the machine leaks in); git repositories built with git2; fixtures.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

pub const SESSION: &str = "7f3c2a10-5b1e-4c2d-9a8f-0d6e4b2c1a99";

pub const BATON: &str = env!("CARGO_BIN_EXE_baton");

/// The path baton registers for itself: the binary, resolved.
pub fn baton_path() -> String {
    std::fs::canonicalize(BATON).expect("binary").to_string_lossy().into_owned()
}

/// A throwaway world for one test.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
    /// `CLAUDE_CONFIG_DIR` is set (to `<root>/claude-config`); else Claude's folder is
    /// the default `~/.claude`.
    pub claude_config_dir: bool,
    /// `NO_COLOR=1` is set.
    pub no_color: bool,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::tempdir().expect("tempdir");
        for sub in ["tmp", "home", "project", "claude-config"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
        }
        Sandbox { dir, claude_config_dir: true, no_color: false }
    }

    /// A sandbox with `NO_COLOR=1`, for tests that compare plain text.
    pub fn plain() -> Sandbox {
        Sandbox { no_color: true, ..Sandbox::new() }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// baton's state dir (`$XDG_STATE_HOME/baton`).
    pub fn state_dir(&self) -> PathBuf {
        self.root().join("state").join("baton")
    }

    /// baton's user config file (`$XDG_CONFIG_HOME/baton/config.json`).
    pub fn user_config(&self) -> PathBuf {
        self.root().join("config").join("baton").join("config.json")
    }

    /// Claude Code's config folder as baton finds it.
    pub fn claude_dir(&self) -> PathBuf {
        if self.claude_config_dir { self.root().join("claude-config") } else { self.home().join(".claude") }
    }

    /// Claude Code's user settings file.
    pub fn claude_settings(&self) -> PathBuf {
        self.claude_dir().join("settings.json")
    }

    pub fn tmp(&self) -> PathBuf {
        self.dir.path().join("tmp")
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    /// `baton <args>` with the sandbox's environment.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(BATON);
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("TMPDIR", self.tmp())
            .env("XDG_CONFIG_HOME", self.root().join("config"))
            .env("XDG_STATE_HOME", self.root().join("state"))
            .current_dir(self.project())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if self.claude_config_dir {
            command.env("CLAUDE_CONFIG_DIR", self.claude_dir());
        }
        if self.no_color {
            command.env("NO_COLOR", "1");
        }
        command
    }

    /// Runs `baton <args>` with `stdin` and extra environment, and waits for it.
    pub fn run_with(&self, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
        let mut command = self.command(args);
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("spawn baton");
        let mut pipe = child.stdin.take().expect("stdin");
        let bytes = stdin.to_vec();
        // A writer thread, so a large payload cannot deadlock against a full stdout pipe.
        let writer = std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
        let output = child.wait_with_output().expect("wait");
        let _ = writer.join();
        output
    }

    /// Like [`Sandbox::run_with`], but gives up after `limit`: the child is killed and
    /// `None` returned (a hang is a test failure, not a stuck test run).
    pub fn run_bounded(
        &self,
        args: &[&str],
        stdin: &[u8],
        env: &[(&str, &str)],
        limit: Duration,
    ) -> Option<Output> {
        let mut command = self.command(args);
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("spawn baton");
        let mut pipe = child.stdin.take().expect("stdin");
        let bytes = stdin.to_vec();
        let writer = std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
        let started = std::time::Instant::now();
        loop {
            if child.try_wait().expect("try_wait").is_some() {
                let output = child.wait_with_output().expect("wait");
                let _ = writer.join();
                return Some(output);
            }
            if started.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn run(&self, args: &[&str], stdin: &[u8]) -> Output {
        self.run_with(args, stdin, &[])
    }

    /// Runs `baton hook` on an event.
    pub fn hook(&self, event: &Value) -> Output {
        self.run(&["hook"], event.to_string().as_bytes())
    }

    /// Runs `baton hook` and returns the text injected for the agent, if any; asserts the
    /// hook contract (exit 0, stdout empty or exactly one envelope).
    pub fn hook_told(&self, event: &Value) -> Option<String> {
        told(&self.hook(event))
    }

    pub fn bridge_path(&self, session: &str) -> PathBuf {
        self.tmp().join(format!("claude-ctx-{session}.json"))
    }

    /// The monitor's debounce state, in baton's private session folder.
    pub fn state_path(&self, session: &str) -> PathBuf {
        self.state_dir().join("sessions").join(format!("claude-ctx-{session}-warned.json"))
    }

    /// Writes a GSD-format bridge `age` seconds old.
    pub fn write_bridge(&self, session: &str, remaining: f64, age: i64) {
        let json = json!({
            "session_id": session,
            "remaining_percentage": remaining,
            "used_pct": (100.0 - remaining).round() as i64,
            "timestamp": now() - age,
        });
        std::fs::write(self.bridge_path(session), json.to_string()).expect("write bridge");
    }

    /// A PostToolUse event for `session` in the sandbox's project.
    pub fn post_tool_use(&self, session: &str) -> Value {
        json!({
            "session_id": session,
            "transcript_path": self.home().join("t.jsonl"),
            "cwd": self.project(),
            "hook_event_name": "PostToolUse",
            "tool_name": "Edit",
            "tool_input": {"file_path": "src/app.ts"},
            "tool_response": {"success": true},
            "tool_use_id": "toolu_1"
        })
    }
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts success and returns stdout.
#[track_caller]
pub fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        stdout(output),
        stderr(output)
    );
    stdout(output)
}

pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .expect("JSON")
}

pub fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_secs() as i64
}

/// Checks the hook contract on an output and returns the injected text, if any.
pub fn told(output: &Output) -> Option<String> {
    assert!(
        output.status.success(),
        "hook exited {:?}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8");
    if stdout.is_empty() {
        return None;
    }
    let value: Value = serde_json::from_str(&stdout).expect("stdout is exactly one JSON value");
    let object = value.as_object().expect("envelope is an object");
    for key in object.keys() {
        assert!(
            ["hookSpecificOutput", "systemMessage", "terminalSequence"].contains(&key.as_str()),
            "envelope has only hookSpecificOutput and the user's notice: {stdout}"
        );
    }
    let inner = value["hookSpecificOutput"].as_object().expect("hookSpecificOutput");
    assert_eq!(inner.len(), 2, "only hookEventName and additionalContext: {stdout}");
    Some(inner["additionalContext"].as_str().expect("additionalContext").to_string())
}

/// The line for the user (`systemMessage`) in an envelope on stdout.
pub fn notice(output: &Output) -> Option<String> {
    let value: Value = serde_json::from_slice(&output.stdout).ok()?;
    value["systemMessage"].as_str().map(str::to_string)
}

/// The event name inside an envelope on stdout.
pub fn envelope_event(output: &Output) -> Option<String> {
    let value: Value = serde_json::from_slice(&output.stdout).ok()?;
    value["hookSpecificOutput"]["hookEventName"].as_str().map(str::to_string)
}

/// A fixture file's bytes.
pub fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)).expect("fixture")
}

/// A fixture parsed as JSON.
pub fn fixture_json(name: &str) -> Value {
    serde_json::from_slice(&fixture(name)).expect("fixture JSON")
}

pub fn elapsed_under(start: std::time::Instant, limit: Duration) -> bool {
    start.elapsed() < limit
}

/// A git repository for a test, built with git2 (no `git` subprocess).
pub struct TestRepo {
    pub root: PathBuf,
    pub repo: git2::Repository,
}

impl TestRepo {
    /// A repository at `root` with an identity; `commit` files go into a first commit.
    pub fn init(root: &Path, files: &[(&str, &str)]) -> TestRepo {
        std::fs::create_dir_all(root).expect("mkdir");
        let repo = git2::Repository::init(root).expect("init");
        {
            let mut config = repo.config().expect("config");
            config.set_str("user.name", "Test User").expect("name");
            config.set_str("user.email", "test@example.com").expect("email");
        }
        let test = TestRepo { root: root.to_path_buf(), repo };
        if !files.is_empty() {
            for (path, text) in files {
                test.write(path, text);
            }
            test.commit_all("initial commit");
        }
        test
    }

    pub fn write(&self, path: &str, text: &str) {
        let full = self.root.join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, text).expect("write");
    }

    /// Stages everything and commits it on HEAD.
    pub fn commit_all(&self, message: &str) -> git2::Oid {
        let mut index = self.repo.index().expect("index");
        index.add_all(["*"].iter(), git2::IndexAddOption::DEFAULT, None).expect("add");
        index.write().expect("write index");
        let tree = self.repo.find_tree(index.write_tree().expect("tree")).expect("find tree");
        let sig = self.repo.signature().expect("sig");
        let parents: Vec<git2::Commit> =
            self.repo.head().ok().and_then(|h| h.peel_to_commit().ok()).into_iter().collect();
        let parent_refs: Vec<&git2::Commit> = parents.iter().collect();
        self.repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parent_refs).expect("commit")
    }

    /// Stages one path.
    pub fn stage(&self, path: &str) {
        let mut index = self.repo.index().expect("index");
        index.add_path(Path::new(path)).expect("add");
        index.write().expect("write");
    }

    /// `git status` as (path, flags) pairs, untracked included.
    pub fn status(&self) -> Vec<(String, u32)> {
        let mut options = git2::StatusOptions::new();
        options.include_untracked(true).recurse_untracked_dirs(true);
        let statuses = self.repo.statuses(Some(&mut options)).expect("status");
        let mut out: Vec<(String, u32)> =
            statuses.iter().map(|e| (e.path().unwrap_or_default().to_string(), e.status().bits())).collect();
        out.sort();
        out
    }

    /// Every ref (name → target), except baton's own.
    pub fn refs(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = self
            .repo
            .references()
            .expect("refs")
            .flatten()
            .filter_map(|r| {
                let name = r.name().ok()?.to_string();
                (!name.starts_with("refs/baton/"))
                    .then(|| (name, r.target().map(|t| t.to_string()).unwrap_or_default()))
            })
            .collect();
        out.sort();
        out
    }

    pub fn head_commit(&self) -> git2::Commit<'_> {
        self.repo.head().expect("head").peel_to_commit().expect("commit")
    }

    /// The paths a commit changed against its first parent (or all, for a root commit).
    pub fn changed_paths(&self, commit: &git2::Commit) -> Vec<String> {
        let tree = commit.tree().expect("tree");
        let parent_tree = commit.parent(0).ok().map(|p| p.tree().expect("parent tree"));
        let diff = self.repo.diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), None).expect("diff");
        let mut paths: Vec<String> = diff
            .deltas()
            .filter_map(|d| d.new_file().path().map(|p| p.to_string_lossy().into_owned()))
            .collect();
        paths.sort();
        paths
    }
}

/// The sample transcript with its project folder moved to `project` (so files it
/// touched are inside the test's repository).
pub fn transcript_for(project: &Path, dest: &Path) -> PathBuf {
    let text = String::from_utf8(fixture("transcript.jsonl")).expect("utf8");
    let text = text.replace("/home/dev/shop-api", &project.to_string_lossy());
    std::fs::write(dest, text).expect("write transcript");
    dest.to_path_buf()
}

/// A GSD `.planning/` tree with phase 03 and a plan of four tasks.
pub fn gsd_planning(root: &Path) {
    let plan = "---\nphase: 03-rate-limiting\nplan: 02\n---\n<tasks>\n<task type=\"auto\"><name>Task 1: Read the router</name></task>\n<task type=\"auto\"><name>Task 2: Add the limiter</name></task>\n<task type=\"auto\"><name>Task 3: Wire it</name></task>\n<task type=\"auto\"><name>Task 4: Test it</name></task>\n</tasks>\n";
    let files = [
        (
            ".planning/STATE.md",
            "---\nstatus: executing\n---\nPhase: 3 of 5 (Rate limiting)\nPlan: 2 of 2 in current phase\nStatus: In progress\n",
        ),
        (".planning/phases/03-rate-limiting/03-01-PLAN.md", plan),
        (".planning/phases/03-rate-limiting/03-01-SUMMARY.md", "All done."),
        (".planning/phases/03-rate-limiting/03-02-PLAN.md", plan),
    ];
    for (path, text) in files {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, text).expect("write");
    }
}
/// Settings as a user with GSD installed has them: other hooks on baton's events, GSD's
/// context monitor and statusline, and keys of their own.
pub const GSD_SETTINGS: &str = r#"{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(npm test:*)"
    ]
  },
  "hooks": {
    "SessionStart": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "node \"/home/u/.claude/hooks/gsd-check-update.js\""
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [
          {
            "type": "command",
            "command": "npx prettier --write \"$CLAUDE_FILE_PATHS\"",
            "timeout": 30
          }
        ]
      },
      {
        "hooks": [
          {
            "type": "command",
            "command": "node \"/home/u/.claude/hooks/gsd-context-monitor.js\"",
            "timeout": 10
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/home/u/bin/notify-done"
          }
        ]
      }
    ]
  },
  "statusLine": {
    "type": "command",
    "command": "node \"/home/u/.claude/hooks/gsd-statusline.js\"",
    "padding": 1
  },
  "enableAllProjectMcpServers": false
}
"#;
