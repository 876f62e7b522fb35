//! `baton demo`: a short session played against the real binary in a throwaway folder.
//!
//! The folder holds the project (a git repository with a GSD `.planning/` phase and some
//! uncommitted work), a temp dir (the bridge and state files land there, not in the
//! system temp dir), a home (so no user config is read and none is written) and the
//! session's transcript (the sample one, embedded in the binary). Each step runs
//! `baton statusline` or `baton hook` as the host would, with stdin and environment set
//! up like Claude Code's, and prints what the user sees and what the agent is told; at
//! CRITICAL it shows the handoff baton wrote and its checkpoint. The folder is removed at
//! the end, whatever happens.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::json;

use crate::fsx;
use crate::handoff::doc::{self, HandoffDoc};

const SESSION: &str = "demo-session-0001";
/// The sample transcript the demo session "ran"; its project folder is rewritten to the
/// demo's.
const TRANSCRIPT: &str = include_str!("../tests/fixtures/transcript.jsonl");
const TRANSCRIPT_PROJECT: &str = "/home/dev/shop-api";
const TOOLS: &[&str] = &["Read", "Edit", "Bash", "Grep", "Write", "Glob"];
const CALLS_PER_FRAME: usize = 3;

/// The throwaway folder; removed on drop.
struct Sandbox {
    root: PathBuf,
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

struct Demo {
    sandbox: Sandbox,
    exe: PathBuf,
    colour: bool,
}

impl Demo {
    fn project(&self) -> PathBuf {
        self.sandbox.root.join("shop-api")
    }

    fn tmp(&self) -> PathBuf {
        self.sandbox.root.join("tmp")
    }

    fn home(&self) -> PathBuf {
        self.sandbox.root.join("home")
    }

    fn transcript(&self) -> PathBuf {
        self.home().join(".claude/projects/demo.jsonl")
    }

    /// Runs `baton <mode>` with `payload` on stdin in the sandbox's environment.
    fn run(&self, mode: &str, payload: &serde_json::Value) -> io::Result<String> {
        let mut command = Command::new(&self.exe);
        command
            .arg(mode)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("TMPDIR", self.tmp())
            .env("XDG_CONFIG_HOME", self.home().join(".config"))
            .env("XDG_STATE_HOME", self.home().join(".local/state"))
            .env("CLAUDE_CONFIG_DIR", self.home().join(".claude"))
            .current_dir(self.project())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if !self.colour {
            command.env("NO_COLOR", "1");
        }
        let mut child = command.spawn()?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(payload.to_string().as_bytes())?;
        }
        let output = child.wait_with_output()?;
        Ok(String::from_utf8_lossy(&output.stdout).trim_end().to_string())
    }

    fn statusline_payload(&self, remaining: u32, cost: f64) -> serde_json::Value {
        let window = 200_000u64;
        let used_tokens = window * (100 - remaining as u64) / 100;
        json!({
            "session_id": SESSION,
            "transcript_path": self.transcript(),
            "cwd": self.project(),
            "model": {"id": "claude-opus-4-5-20251101", "display_name": "Opus 4.5"},
            "workspace": {"current_dir": self.project(), "project_dir": self.project()},
            "cost": {"total_cost_usd": cost},
            "context_window": {
                "context_window_size": window,
                "used_percentage": 100 - remaining,
                "remaining_percentage": remaining,
                "current_usage": {"input_tokens": 8, "output_tokens": 300, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": used_tokens.saturating_sub(2008)}
            }
        })
    }

    fn hook_payload(&self, tool: &str, call: usize) -> serde_json::Value {
        json!({
            "session_id": SESSION,
            "transcript_path": self.transcript(),
            "cwd": self.project(),
            "hook_event_name": "PostToolUse",
            "tool_name": tool,
            "tool_input": {"file_path": self.project().join("src/app.ts")},
            "tool_response": {"success": true},
            "tool_use_id": format!("toolu_{call:02}")
        })
    }
}

fn create_sandbox() -> io::Result<Sandbox> {
    let root = std::env::temp_dir().join(format!("baton-demo-{}", fsx::random_hex(6)));
    fsx::ensure_dir(&root, true)?;
    let sandbox = Sandbox { root };
    for sub in ["shop-api/src", "tmp", "home/.claude/projects"] {
        fsx::ensure_dir(&sandbox.root.join(sub), true)?;
    }
    Ok(sandbox)
}

const PLAN: &str = "---\nphase: 03-rate-limiting\nplan: 01\n---\n<objective>Per-client rate limiting for the orders API</objective>\n<tasks>\n<task type=\"auto\"><name>Task 1: Read the orders router</name></task>\n<task type=\"auto\"><name>Task 2: Add a token-bucket limiter</name></task>\n<task type=\"auto\"><name>Task 3: Wire the limiter into the routes</name></task>\n<task type=\"auto\"><name>Task 4: Tests for limits and reset</name></task>\n</tasks>\n";

/// The demo project: a repository with one commit, a GSD phase, and uncommitted work
/// (the files the transcript says the agent wrote).
fn create_project(demo: &Demo) -> Result<(), String> {
    let project = demo.project();
    let write = |path: &str, text: &str| -> Result<(), String> {
        let full = project.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        std::fs::write(&full, text).map_err(|e| format!("{}: {e}", full.display()))
    };
    write("src/app.ts", "import express from 'express';\nexport const app = express();\n")?;
    write(
        "src/routes/orders.ts",
        "export const router = express.Router();\nrouter.post('/orders', create);\n",
    )?;
    write(
        ".planning/STATE.md",
        "---\nstatus: executing\n---\nPhase: 3 of 5 (Rate limiting)\nPlan: 1 of 1 in current phase\nStatus: In progress\n",
    )?;
    write(".planning/phases/03-rate-limiting/03-01-PLAN.md", PLAN)?;
    let mut options = git2::RepositoryInitOptions::new();
    options.initial_head("main");
    let repo = git2::Repository::init_opts(&project, &options).map_err(|e| e.message().to_string())?;
    let commit = || -> Result<(), git2::Error> {
        let mut config = repo.config()?;
        config.set_str("user.name", "Demo User")?;
        config.set_str("user.email", "demo@example.invalid")?;
        let mut index = repo.index()?;
        index.add_all(["*"].iter(), git2::IndexAddOption::DEFAULT, None)?;
        index.write()?;
        let tree = repo.find_tree(index.write_tree()?)?;
        let signature = repo.signature()?;
        repo.commit(
            Some("HEAD"),
            &signature,
            &signature,
            "Orders API and the rate-limiting plan",
            &tree,
            &[],
        )?;
        Ok(())
    };
    commit().map_err(|e| e.message().to_string())?;
    // The agent's work in progress, not committed yet.
    write("src/limiter.ts", "export class TokenBucket {\n  constructor(readonly perMinute: number) {}\n}\n")?;
    write(
        "src/routes/orders.ts",
        "export const router = express.Router();\nrouter.post('/orders', limit, create);\n",
    )?;
    let transcript = TRANSCRIPT.replace(TRANSCRIPT_PROJECT, &project.to_string_lossy());
    std::fs::write(demo.transcript(), transcript).map_err(|e| e.to_string())
}

/// Wraps `text` to `width` columns, each line after the first indented by `indent`.
fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut lines: Vec<String> = vec![];
    let mut current = String::new();
    for word in text.split_whitespace() {
        if !current.is_empty() && current.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
    }
    lines.push(current);
    lines.join(&format!("\n{indent}"))
}

/// The text an envelope carries, or the raw output when it is not one.
fn told(output: &str) -> Option<String> {
    if output.is_empty() {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(output).ok()?;
    value.pointer("/hookSpecificOutput/additionalContext").and_then(|v| v.as_str()).map(str::to_string)
}

/// Plays the demo session, writing the story to `out`.
pub fn run(out: &mut impl Write) -> io::Result<()> {
    let exe = std::env::current_exe()?;
    let colour = io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let demo = Demo { sandbox: create_sandbox()?, exe, colour };
    create_project(&demo).map_err(io::Error::other)?;
    writeln!(out, "baton demo: a Claude Code session in a throwaway folder")?;
    writeln!(out, "  project {}", demo.project().display())?;
    writeln!(out, "  bridge and state files in {} (removed at the end)\n", demo.tmp().display())?;
    writeln!(
        out,
        "Each frame is the status line the user sees; after it come the agent's tool calls and\n\
         what `baton hook` tells the agent after each one.\n"
    )?;

    let mut call = 0;
    let mut warnings = 0;
    let mut cost = 0.0;
    for (frame, remaining) in (20..=70).rev().step_by(5).enumerate() {
        cost += 0.17;
        let line = demo.run("statusline", &demo.statusline_payload(remaining, cost))?;
        writeln!(out, "frame {:>2}  {line}", frame + 1)?;
        let mut quiet: Vec<String> = vec![];
        for _ in 0..CALLS_PER_FRAME {
            call += 1;
            let tool = TOOLS[call % TOOLS.len()];
            let output = demo.run("hook", &demo.hook_payload(tool, call))?;
            match told(&output) {
                Some(text) => {
                    if !quiet.is_empty() {
                        writeln!(out, "          {} → nothing said", quiet.join(", "))?;
                        quiet.clear();
                    }
                    warnings += 1;
                    let indent = " ".repeat(14 + tool.len() + 5);
                    writeln!(
                        out,
                        "          #{call:<2} {tool} → {}",
                        wrap(&text, 96 - indent.len(), &indent)
                    )?;
                }
                None => quiet.push(format!("#{call} {tool}")),
            }
        }
        if !quiet.is_empty() {
            writeln!(out, "          {} → nothing said", quiet.join(", "))?;
        }
    }
    writeln!(
        out,
        "\n{warnings} warnings over {call} tool calls: the first at 35% remaining, the next after \
         5 more calls, CRITICAL at once at 25%.\nIn a real session the hook runs after every tool \
         call; see README.md for setting it up."
    )?;
    print_state(out, &demo.tmp(), &demo.home().join(".local/state/baton/sessions"))?;
    print_handoff(out, &demo)?;
    print_next_session(out, &demo)?;
    Ok(())
}

/// A new session starts in the same repository: the brief it is given.
fn print_next_session(out: &mut impl Write, demo: &Demo) -> io::Result<()> {
    let event = json!({
        "session_id": "demo-session-0002",
        "transcript_path": demo.home().join(".claude/projects/demo-2.jsonl"),
        "cwd": demo.project(),
        "hook_event_name": "SessionStart",
        "source": "startup",
    });
    let output = demo.run("hook", &event)?;
    let Some(brief) = told(&output) else { return Ok(()) };
    writeln!(
        out,
        "\nA new session starts in the project (SessionStart). Without anyone typing a command, it"
    )?;
    writeln!(out, "is given this brief ({} characters):\n", brief.chars().count())?;
    for line in brief.lines() {
        let indent = "    ";
        writeln!(out, "{indent}{}", wrap(line, 92, &format!("{indent}  ")))?;
    }
    writeln!(out, "\nWhen the work is picked up, `baton resume --done` archives the handoff.")?;
    Ok(())
}

fn indent(text: &str, prefix: &str) -> String {
    text.lines().map(|l| format!("{prefix}{l}")).collect::<Vec<_>>().join("\n")
}

/// Shows what the CRITICAL warning left behind: the two files and the checkpoint.
fn print_handoff(out: &mut impl Write, demo: &Demo) -> io::Result<()> {
    let project = demo.project();
    let Some(Ok(handoff)) = HandoffDoc::read(&project, Path::new(".planning")) else {
        writeln!(out, "\n(no handoff was written)")?;
        return Ok(());
    };
    let md_rel = handoff
        .continue_here()
        .unwrap_or_else(|| PathBuf::from(".planning/.continue-here.md"))
        .display()
        .to_string();
    writeln!(
        out,
        "\nAt CRITICAL baton wrote the handoff itself (and refreshed it at the next CRITICAL warning),"
    )?;
    writeln!(out, "from facts it checked (git, .planning/, the transcript), in GSD's formats:\n")?;
    let or_unknown = |v: Option<u64>| v.map(|n| n.to_string()).unwrap_or_else(|| "?".into());
    writeln!(
        out,
        "  .planning/HANDOFF.json: phase {} ({}), task {} of {}, {} uncommitted file(s)\n    next_action: {}",
        handoff.phase().unwrap_or_else(|| "?".into()),
        handoff.phase_name().unwrap_or("?"),
        or_unknown(handoff.task()),
        or_unknown(handoff.total_tasks()),
        handoff.uncommitted_files().len(),
        handoff.next_action().unwrap_or("?"),
    )?;
    let markdown = fsx::read_limited(&project.join(&md_rel), doc::MARKDOWN_LIMIT)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    writeln!(out, "\n  {md_rel}:\n{}", indent(&markdown, "    │ "))?;
    let checkpoint = handoff.baton().checkpoint();
    if let (Some(reference), Ok(repo)) = (checkpoint.reference.as_deref(), git2::Repository::open(&project)) {
        let commit = repo.find_reference(reference).and_then(|r| r.peel_to_commit());
        if let Ok(commit) = commit {
            let files = changed_files(&repo, &commit);
            writeln!(
                out,
                "\n  checkpoint {reference} → {} \"{}\"\n    saved: {}",
                &commit.id().to_string()[..7],
                commit.summary().ok().flatten().unwrap_or_default(),
                files.join(", ")
            )?;
        }
        let head = repo.head().ok().and_then(|h| h.shorthand().ok().map(str::to_string)).unwrap_or_default();
        writeln!(out, "    the branch {head}, its index and the working tree were not touched")?;
    }
    Ok(())
}

/// What a checkpoint holds beyond HEAD.
fn changed_files(repo: &git2::Repository, commit: &git2::Commit) -> Vec<String> {
    let tree = commit.tree().ok();
    let head = repo.head().ok().and_then(|h| h.peel_to_tree().ok());
    repo.diff_tree_to_tree(head.as_ref(), tree.as_ref(), None)
        .map(|diff| {
            diff.deltas().filter_map(|d| d.new_file().path().map(|p| p.display().to_string())).collect()
        })
        .unwrap_or_default()
}

fn print_state(out: &mut impl Write, tmp: &Path, sessions: &Path) -> io::Result<()> {
    let read = |path: PathBuf| {
        fsx::read_limited(&path, 64 * 1024)
            .map(|b| String::from_utf8_lossy(&b).trim().to_string())
            .unwrap_or_default()
    };
    // The state is pretty-printed JSON: one line reads better here.
    let state = read(sessions.join(format!("claude-ctx-{SESSION}-warned.json")));
    let state = serde_json::from_str::<serde_json::Value>(&state).map(|v| v.to_string()).unwrap_or(state);
    let bridge = read(tmp.join(format!("claude-ctx-{SESSION}.json")));
    writeln!(out, "\nbridge file (GSD format): {bridge}")?;
    writeln!(out, "debounce state:           {state}")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_breaks_on_words() {
        assert_eq!(wrap("aaa bbb ccc", 7, ">"), "aaa bbb\n>ccc");
    }

    #[test]
    fn told_reads_envelopes_only() {
        assert_eq!(told(""), None);
        assert_eq!(told("{\"hookSpecificOutput\":{\"additionalContext\":\"x\"}}").as_deref(), Some("x"));
    }
}
