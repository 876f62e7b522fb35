//! The `baton` command line: the only place with clap, with printing for commands and
//! with exit codes. One file per command; each parses its flags into the service's plain
//! options, calls the service, prints what it returns and maps the outcome to an
//! [`ExitStatus`]. The hook and the statusline always exit 0 (a non-zero exit makes the
//! host show "hook error" or blank the line); the person-facing commands exit non-zero
//! when something is wrong. Every byte a command prints goes out through [`screen`], the
//! one way out to the terminal: the macros below and [`screen::Screen`].

/// `print!` through [`screen::out`]: escaped for the terminal.
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::screen::out(&format!($($arg)*)) };
}

/// `println!` through [`screen::out`].
macro_rules! outln {
    () => { $crate::cli::screen::out("\n") };
    ($($arg:tt)*) => {{
        let mut line = format!($($arg)*);
        line.push('\n');
        $crate::cli::screen::out(&line)
    }};
}

/// `eprintln!` through [`screen::err`].
macro_rules! errln {
    ($($arg:tt)*) => {{
        let mut line = format!($($arg)*);
        line.push('\n');
        $crate::cli::screen::err(&line)
    }};
}

mod checkpoint;
mod completions;
mod config;
mod demo;
mod doctor;
mod hook;
mod hosts;
mod install;
mod pause;
mod report;
mod resume;
mod run;
mod screen;
mod status;
mod statusline;

use std::ffi::OsString;
use std::panic;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// How a command ended, as the shell sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// It did what was asked (0).
    Success,
    /// Something is wrong: a check failed, a file could not be written, GitHub failed (1).
    Failure,
    /// It could not start as asked: a usage problem or a precondition a person must fix
    /// (2).
    Usage,
    /// A child's exit status, passed through (`baton run`: the last leg's).
    Code(u8),
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> ExitCode {
        match status {
            ExitStatus::Success => ExitCode::SUCCESS,
            ExitStatus::Failure => ExitCode::FAILURE,
            ExitStatus::Usage => ExitCode::from(2),
            ExitStatus::Code(code) => ExitCode::from(code),
        }
    }
}

#[derive(Parser)]
#[command(
    name = "baton",
    version,
    about = "Keeps AI coding agents from running out of context with their work unsaved.",
    long_about = "Keeps AI coding agents from running out of context with their work unsaved.\n\n\
        Claude Code runs `baton statusline` to draw the line under the prompt and `baton hook` \
        after each tool call and at session start and compaction: baton tells the agent when its \
        context runs low, writes the handoff (.planning/HANDOFF.json, GSD's format) at the critical \
        level, and gives the next session a resume brief. `baton install` sets it up; \
        `baton demo` shows it working."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Register baton's statusline and hooks in Claude Code's settings (or Gemini CLI's,
    /// Codex's), keeping everything else; another statusline is wrapped, not replaced.
    Install(install::InstallArgs),
    /// Remove what `baton install` added and put back what it wrapped or replaced.
    Uninstall(install::UninstallArgs),
    /// Check the setup of the hosts baton is installed for (or --host): registrations,
    /// Codex's hook trust, binary, statusline, bridge, config, folders, and a self-test of
    /// the hook. Exit 1 when a check fails.
    Doctor(doctor::DoctorArgs),
    /// Render the status line from Claude Code's statusLine JSON on stdin, and write the
    /// context figure to the bridge file the hook reads.
    ///
    /// Segments, in the order `statusline.segments` gives (see `baton config`): model,
    /// project, branch, git (+staged ~modified ?untracked ↑ahead ↓behind), task, handoff,
    /// meter (of the full window; it names that window while Claude Code's own footer
    /// shows a figure of a smaller base), headroom, cost, rate_limits (5-hour and 7-day,
    /// when the payload has them); and on request cache (the prompt cache's time left),
    /// compactions (so far). A second row
    /// comes from `statusline.second_line`. When COLUMNS is set, the least important
    /// segments are shortened or dropped until each row fits. Always exits 0.
    Statusline(statusline::StatuslineArgs),
    /// Handle one hook event from stdin (PostToolUse, AfterTool, SessionStart,
    /// PreCompact …). Prints nothing or one JSON envelope; always exits 0.
    Hook,
    /// Write the handoff now (.planning/HANDOFF.json and .continue-here.md, GSD's formats)
    /// from git, .planning/ and the session's transcript, and checkpoint it in git.
    Pause(pause::PauseArgs),
    /// Show the paused handoff's resume brief (what a new session is given), and close
    /// or check it.
    Resume(resume::ResumeArgs),
    /// How full the session's context is: the figure, its source and age, the window,
    /// the headroom to compaction, the level and any pending handoff. As cheap as the
    /// hook: an agent may run it from Bash at any time.
    Status(status::StatusArgs),
    /// Show one session's exact token use per model, its compactions, the context size
    /// turn by turn and the tool results that filled it.
    ///
    /// Reads the transcript given with --transcript, else the session given with
    /// --session, else the newest transcript of the current project (Claude Code keeps
    /// them under $CLAUDE_CONFIG_DIR or ~/.claude, in projects/).
    ///
    /// With --relay, reports a `baton run` instead: each leg's start, end and why it
    /// ended, its peak context, what it completed, the hand-over and the waits, and any
    /// step a leg ran again of an earlier leg (a side effect done twice is the relay's
    /// own failure).
    #[command(after_help = "\
Examples:
  baton report                         # this project's paused (else newest) session
  baton report --relay                 # the newest relay of this project
  baton report --relay run-19a3f2 --json
  baton report --relay --svg relay.svg")]
    Report(report::ReportArgs),
    /// baton's checkpoints: list and prune its git refs (`checkpoint list`, `checkpoint
    /// prune`), or share them through a GitHub issue (gh CLI), so a handoff can cross
    /// machines and people (`checkpoint push`, `checkpoint pull`).
    Checkpoint {
        #[command(subcommand)]
        action: checkpoint::CheckpointAction,
    },
    /// Run a headless host command (`claude -p …`, `codex exec …`, `gemini -p …`) as a
    /// relay: when a leg ends with its own handoff pending (baton paused it at critical
    /// context, or the agent ended its turn as the warning asked), the next leg starts in a
    /// fresh context with the continue prompt and is briefed from the handoff, up to
    /// --max-legs.
    /// A host that goes on after baton's stop (Codex) is ended with Ctrl-C's signal.
    /// From a terminal, `claude …` (interactive) runs on a pty baton owns: when its context
    /// is paused and it is idle, a countdown (5 s, --countdown; any key cancels), then `/clear` and
    /// "continue" are typed for it.
    /// Each leg's output goes through as the host prints it (with `--output-format json`,
    /// one result object per leg, one after the other); exit status: the last leg's, or 3
    /// when the last leg ended paused (the task is not done; a line says how to go on).
    #[command(after_help = "\
Examples:
  baton run -- claude -p --allowedTools Bash Read \"work through TODO.md\"
  baton run --max-legs 3 -- codex exec -s workspace-write \"finish the migration\"
  baton run -- gemini -p \"fix the failing tests\" --yolo
  baton run -- claude --allowedTools Bash")]
    Run(run::RunArgs),
    /// Show the effective configuration, where each value comes from, and any errors
    /// (exit 1 when there are errors).
    Config(config::ConfigArgs),
    /// Play a short session in a temporary folder and show, step by step, the status line
    /// and what the agent is told. Writes nothing outside that folder.
    Demo,
    /// Print the shell completion script for SHELL (bash, zsh, fish, elvish, powershell).
    #[command(after_help = "\
Examples:
  baton completions bash > ~/.local/share/bash-completion/completions/baton
  baton completions zsh > \"${fpath[1]}/_baton\"
  baton completions fish > ~/.config/fish/completions/baton.fish")]
    Completions(completions::CompletionsArgs),
    /// Print baton's man page (roff), or write it and one page per command into a folder.
    #[command(after_help = "\
Examples:
  baton man | man -l -                    read it now
  baton man --dir ~/.local/share/man/man1 baton.1, baton-install.1, baton-hook.1 ...")]
    Man(completions::ManArgs),
}

/// The whole program: what the binary's entry returns for `args` (the program name
/// first). The hook and a bare `baton statusline` start without clap: they run after
/// every tool call and message, and building clap's command tree costs more than they
/// do. The hook skips argument parsing altogether: no flag a host passes may turn into
/// a usage error and a non-zero exit.
pub fn main_with(args: Vec<OsString>) -> ExitCode {
    let mode = args.get(1).and_then(|a| a.to_str());
    if mode == Some("hook") && !args.iter().any(|a| a == "-h" || a == "--help") {
        return hook::run().into();
    }
    if mode == Some("statusline") && args.len() == 2 {
        return statusline::run_own_line().into();
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => best_suggestion_first(error).exit(),
    };
    // Test builds only: how the black-box tests make a command that is not host-facing
    // panic (the panic is reported and unwound to `main`, which exits 101).
    #[cfg(debug_assertions)]
    if std::env::var_os("BATON_DEBUG_PANIC").is_some()
        && !matches!(cli.command, Command::Hook | Command::Statusline(_))
    {
        panic!("BATON_DEBUG_PANIC is set");
    }
    let status = match cli.command {
        Command::Hook => hook::run(),
        Command::Statusline(args) => statusline::run(args),
        Command::Install(args) => install::install(&args),
        Command::Uninstall(args) => install::uninstall(&args),
        Command::Doctor(args) => doctor::run(&args),
        Command::Config(args) => config::run(args),
        Command::Run(args) => run::run(args),
        Command::Resume(args) => resume::run(args),
        Command::Pause(args) => pause::run(args),
        Command::Checkpoint { action } => checkpoint::run(action),
        Command::Status(args) => status::run(args),
        Command::Report(args) => report::run(args),
        Command::Completions(args) => completions::completions(&args),
        Command::Man(args) => completions::man(&args),
        Command::Demo => demo::run(),
    };
    status.into()
}

/// clap lists the subcommands like a mistyped one from the least to the most alike
/// ("uninstall, install" for `instal`); the closest goes first.
fn best_suggestion_first(mut error: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue};
    if let Some(ContextValue::Strings(names)) = error.get(ContextKind::SuggestedSubcommand) {
        let closest_first = names.iter().rev().cloned().collect();
        error.insert(ContextKind::SuggestedSubcommand, ContextValue::Strings(closest_first));
    }
    error
}

/// Runs a host-facing mode (the hook, the status line): a panic ends the process at once
/// with exit 0, saying nothing, so the host sees a quiet hook or an empty line, never an
/// error. The panic hook does it before any unwinding, so this holds whatever the build's
/// panic strategy: the shipped build aborts on a panic (`panic = "abort"`: no unwinding
/// tables, a smaller binary that starts with fewer pages). What stdout already holds is
/// dropped: a mode writes it last, in one piece.
fn run_guarded(mode: impl FnOnce()) {
    panic::set_hook(Box::new(|_| {
        // Ends the process without running anything more of it (`_exit`).
        crate::platform::end_process_now(0)
    }));
    // Test builds only: how the black-box tests make a guarded mode panic.
    #[cfg(debug_assertions)]
    if std::env::var_os("BATON_DEBUG_PANIC").is_some() {
        panic!("BATON_DEBUG_PANIC is set");
    }
    mode();
}

/// Run by hand on a terminal, a host-facing mode would wait for input in silence: says
/// at once what it expects, on stderr (a host never gives it a terminal), and exits 0.
fn stdin_is_a_terminal(mode: &str, expects: &str) -> bool {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() {
        return false;
    }
    errln!(
        "baton {mode} reads {expects} on stdin; the host runs it for you (`baton install` sets that up). To see what it does, run `baton demo`."
    );
    true
}

/// Prints `text` in one piece, escaped for the terminal; a closed stdout is not an error
/// a host should see.
fn print_out(text: &str) {
    screen::out(text);
}

/// Pretty JSON on stdout, one object (DEL and C1 characters in its strings in JSON's own
/// escaped form, which reads back the same).
fn print_json(value: &impl serde::Serialize) {
    outln!("{}", serde_json::to_string_pretty(value).unwrap_or_default());
}

/// `--cwd`, else the current folder.
fn folder(cwd: Option<PathBuf>) -> Option<PathBuf> {
    cwd.or_else(|| std::env::current_dir().ok())
}
