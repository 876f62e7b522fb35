//! `baton demo`: a short session played against the real binary in a throwaway folder.
//!
//! The folder holds the project (a git repository with a GSD `.planning/` phase and some
//! uncommitted work), a temp dir (the bridge and state files land there, not in the
//! system temp dir), a home (so no user config is read and none is written) and the
//! session's transcript (the sample one, embedded in the binary). Each step runs
//! `baton statusline` or `baton hook` as the host would, with stdin and environment set
//! up like Claude Code's, and prints what the user sees and what the agent is told; at
//! CRITICAL it shows the handoff baton wrote and its checkpoint. The story is told in
//! `COLUMNS` columns (80 when unset) and fits about two screens. The folder is removed at
//! the end, whatever happens.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::json;

use crate::fsx;
use crate::handoff::doc::{self, HandoffDoc};

const SESSION: &str = "demo-session-0001";
/// The transcript the demo session "ran" (`transcript.jsonl` beside this file; the tests
/// keep their own copy as `tests/fixtures/transcript.jsonl`); its project folder is
/// rewritten to the demo's.
const TRANSCRIPT: &str = include_str!("transcript.jsonl");
const TRANSCRIPT_PROJECT: &str = "/home/dev/shop-api";
const TOOLS: &[&str] = &["Read", "Edit", "Bash", "Grep", "Write", "Glob"];
const CALLS_PER_FRAME: usize = 3;
/// How many lines of the next session's brief are shown.
const BRIEF_LINES: usize = 6;

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
    /// The width the story is told in; the status line is drawn to fit beside its frame number.
    columns: usize,
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
            .envs(crate::places::sandbox_env(&self.home(), &self.tmp()))
            .env("XDG_CONFIG_HOME", self.home().join(".config"))
            .env("XDG_STATE_HOME", self.home().join(".local/state"))
            .env("CLAUDE_CONFIG_DIR", self.home().join(".claude"))
            .env("COLUMNS", self.columns.saturating_sub(3).to_string())
            // The status line's git scan may take its time: the demo shows the same
            // lines on every machine, a slow one (or wine) included.
            .env("BATON_STATUSLINE_GIT_BUDGET_MS", "2000")
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

    /// A PostToolUse without `tool_use_id`: the played transcript never gets the replies
    /// of the demo's calls, so baton must not wait for them or estimate past the bridge.
    fn hook_payload(&self, tool: &str) -> serde_json::Value {
        json!({
            "session_id": SESSION,
            "transcript_path": self.transcript(),
            "cwd": self.project(),
            "hook_event_name": "PostToolUse",
            "tool_name": tool,
            "tool_input": {"file_path": self.project().join("src/app.ts")},
            "tool_response": {"success": true}
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
fn create_project(demo: &Demo) -> io::Result<()> {
    let project = demo.project();
    let write = |path: &str, text: &str| -> io::Result<()> {
        let full = project.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&full, text).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", full.display())))
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
    let repo = git2::Repository::init_opts(&project, &options).map_err(io::Error::other)?;
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
    commit().map_err(io::Error::other)?;
    // The agent's work in progress, not committed yet.
    write("src/limiter.ts", "export class TokenBucket {\n  constructor(readonly perMinute: number) {}\n}\n")?;
    write(
        "src/routes/orders.ts",
        "export const router = express.Router();\nrouter.post('/orders', limit, create);\n",
    )?;
    // The path goes inside the transcript's JSON strings: escaped as JSON (a Windows
    // path's `\` would otherwise end the transcript's validity).
    let escaped = serde_json::Value::from(project.to_string_lossy()).to_string();
    let escaped = escaped.strip_prefix('"').and_then(|e| e.strip_suffix('"')).unwrap_or(&escaped);
    let transcript = TRANSCRIPT.replace(TRANSCRIPT_PROJECT, escaped);
    std::fs::write(demo.transcript(), transcript)
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

/// The demo's width: `COLUMNS` (40 at least), else 80.
fn columns() -> usize {
    crate::statusline::columns_from_env().unwrap_or(80).max(40)
}

/// The first sentences of a warning, up to its remaining %, then `…`.
fn headline(text: &str) -> String {
    match text.find("Remaining: ").and_then(|at| text[at..].find('.').map(|dot| at + dot + 1)) {
        Some(end) if end < text.len() => format!("{} …", &text[..end]),
        _ => text.to_string(),
    }
}

/// Plays the demo session, writing the story to `out` in `COLUMNS` columns.
pub fn run(out: &mut impl Write) -> io::Result<()> {
    let exe = std::env::current_exe()?;
    let colour = io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let demo = Demo { sandbox: create_sandbox()?, exe, colour, columns: columns() };
    let width = demo.columns;
    create_project(&demo)?;
    writeln!(
        out,
        "{}",
        wrap(
            "baton demo: a Claude Code session filling its context, played in a throwaway \
             folder. The project uses GSD (github.com/open-gsd/gsd-core), a spec-driven workflow \
             for Claude Code whose handoff files baton writes, so either can resume the other's work.",
            width,
            ""
        )
    )?;
    let legend = "Each frame: the status line, then what `baton hook` told the agent after its tool calls.";
    writeln!(out, "\n{}", wrap(legend, width, ""))?;

    let mut call = 0;
    let mut warnings = 0;
    let mut cost = 0.0;
    for (frame, remaining) in (20..=70).rev().step_by(5).enumerate() {
        cost += 0.17;
        let line = demo.run("statusline", &demo.statusline_payload(remaining, cost))?;
        writeln!(out, "{:>2} {line}", frame + 1)?;
        for _ in 0..CALLS_PER_FRAME {
            call += 1;
            let tool = TOOLS[call % TOOLS.len()];
            let output = demo.run("hook", &demo.hook_payload(tool))?;
            if let Some(text) = told(&output) {
                warnings += 1;
                let lead = format!("   #{call} {tool} → ");
                let indent = " ".repeat(lead.chars().count());
                writeln!(
                    out,
                    "{lead}{}",
                    wrap(&headline(&text), width.saturating_sub(indent.len()), &indent)
                )?;
            }
        }
    }
    writeln!(
        out,
        "{}",
        wrap(
            &format!(
                "{warnings} warnings over {call} tool calls: the first at 35% remaining, the next \
                 after 5 more calls, CRITICAL at once at 25%."
            ),
            width,
            ""
        )
    )?;
    print_handoff(out, &demo)?;
    print_next_session(out, &demo)?;
    let setup = "Set it up with `baton install`; `baton status` tells how full a session is.";
    writeln!(out, "\n{}", wrap(setup, width, ""))?;
    Ok(())
}

/// A new session starts in the same repository: the start of the brief it is given.
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
    let width = demo.columns;
    writeln!(
        out,
        "\n{}",
        wrap(
            &format!(
                "A new session starts here (SessionStart) and, with no command typed, is briefed \
                 ({} characters); it begins:",
                brief.chars().count()
            ),
            width,
            ""
        )
    )?;
    let lines: Vec<&str> = brief.lines().filter(|l| !l.trim().is_empty()).collect();
    for line in lines.iter().take(BRIEF_LINES) {
        writeln!(out, "  │ {}", crate::statusline::cut(line, width.saturating_sub(4)))?;
    }
    if lines.len() > BRIEF_LINES {
        writeln!(out, "  │ … ({} more lines)", lines.len() - BRIEF_LINES)?;
    }
    let done = "`baton resume --done` archives the handoff once the work is picked up.";
    writeln!(out, "{}", wrap(done, width, ""))?;
    Ok(())
}

/// Shows what the CRITICAL warning left behind: the two files and the checkpoint.
fn print_handoff(out: &mut impl Write, demo: &Demo) -> io::Result<()> {
    let project = demo.project();
    let width = demo.columns;
    let Some(Ok(handoff)) = HandoffDoc::read(&project, Path::new(".planning")) else {
        writeln!(out, "\n(no handoff was written)")?;
        return Ok(());
    };
    let md_rel = crate::util::text::slash_path(
        &handoff.continue_here().unwrap_or_else(|| PathBuf::from(".planning/.continue-here.md")),
    );
    let intro = "At CRITICAL baton wrote the handoff from git, .planning/ and the transcript:";
    writeln!(out, "\n{}", wrap(intro, width, ""))?;
    let or_unknown = |v: Option<u64>| v.map(|n| n.to_string()).unwrap_or_else(|| "?".into());
    let summary = format!(
        ".planning/HANDOFF.json: phase {} ({}), task {} of {}, {} uncommitted file(s)",
        handoff.phase().unwrap_or_else(|| "?".into()),
        handoff.phase_name().unwrap_or("?"),
        or_unknown(handoff.task()),
        or_unknown(handoff.total_tasks()),
        handoff.uncommitted_files().len(),
    );
    writeln!(out, "  {}", wrap(&summary, width.saturating_sub(2), "    "))?;
    let next = format!("next_action: {}", handoff.next_action().unwrap_or("?"));
    writeln!(out, "    {}", wrap(&next, width.saturating_sub(4), "      "))?;
    let markdown = fsx::read_limited(&project.join(&md_rel), doc::MARKDOWN_LIMIT)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let sections: Vec<&str> = markdown
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with('<') && !l.starts_with("</") && l.ends_with('>') || l.starts_with("# "))
        .collect();
    let sections = format!("{md_rel}: {}", sections.join(" "));
    writeln!(out, "  {}", wrap(&sections, width.saturating_sub(2), "    "))?;
    let checkpoint = handoff.baton().checkpoint();
    if let (Some(reference), Ok(repo)) = (checkpoint.reference.text(), git2::Repository::open(&project)) {
        let commit = repo.find_reference(reference).and_then(|r| r.peel_to_commit());
        if let Ok(commit) = commit {
            let files = changed_files(&repo, &commit);
            writeln!(out, "  checkpoint {reference} → {}", &commit.id().to_string()[..7])?;
            writeln!(
                out,
                "    {}",
                wrap(&format!("saved: {}", files.join(", ")), width.saturating_sub(4), "      ")
            )?;
        }
        let head = repo.head().ok().and_then(|h| h.shorthand().ok().map(str::to_string)).unwrap_or_default();
        let untouched = format!("the branch {head}, its index and the working tree were not touched");
        writeln!(out, "    {}", wrap(&untouched, width.saturating_sub(4), "    "))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_breaks_on_words() {
        assert_eq!(wrap("aaa bbb ccc", 7, ">"), "aaa bbb\n>ccc");
    }

    #[test]
    fn headline_keeps_the_figures() {
        assert_eq!(
            headline("CONTEXT WARNING: Usage at 65%. Remaining: 35%. More words."),
            "CONTEXT WARNING: Usage at 65%. Remaining: 35%. …"
        );
        assert_eq!(headline("short"), "short");
    }

    #[test]
    fn told_reads_envelopes_only() {
        assert_eq!(told(""), None);
        assert_eq!(told("{\"hookSpecificOutput\":{\"additionalContext\":\"x\"}}").as_deref(), Some("x"));
    }
}
