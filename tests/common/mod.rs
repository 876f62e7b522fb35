//! A sandbox for black-box tests: the built binary run with HOME, TMPDIR, the XDG dirs
//! and CLAUDE_CONFIG_DIR in a temporary folder and every other variable cleared, so
//! nothing is read from or written to the machine running the tests.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

pub const BATON: &str = env!("CARGO_BIN_EXE_baton");

/// The path baton registers for itself: the binary, resolved.
pub fn baton_path() -> String {
    std::fs::canonicalize(BATON).unwrap().to_str().unwrap().to_string()
}

pub struct Sandbox {
    pub dir: tempfile::TempDir,
    /// Whether CLAUDE_CONFIG_DIR is set (to `<root>/claude-config`).
    pub claude_config_dir: bool,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "tmp", "project", "claude-config"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        Sandbox { dir, claude_config_dir: true }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn home(&self) -> PathBuf {
        self.root().join("home")
    }

    pub fn tmp(&self) -> PathBuf {
        self.root().join("tmp")
    }

    pub fn project(&self) -> PathBuf {
        self.root().join("project")
    }

    pub fn state_dir(&self) -> PathBuf {
        self.root().join("state").join("baton")
    }

    /// Claude Code's user settings file, as baton should find it.
    pub fn claude_settings(&self) -> PathBuf {
        if self.claude_config_dir {
            self.root().join("claude-config").join("settings.json")
        } else {
            self.home().join(".claude").join("settings.json")
        }
    }

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
            .env("NO_COLOR", "1")
            .current_dir(self.project())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if self.claude_config_dir {
            command.env("CLAUDE_CONFIG_DIR", self.root().join("claude-config"));
        }
        command
    }

    /// Runs baton with `args` and `stdin` (closed after writing).
    pub fn run_with(&self, args: &[&str], stdin: &[u8]) -> Output {
        let mut command = self.command(args);
        command.stdin(Stdio::piped());
        let mut child = command.spawn().unwrap();
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        child.wait_with_output().unwrap()
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
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
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
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
