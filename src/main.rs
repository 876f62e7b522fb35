//! The `baton` command line: argument parsing and dispatch only. Each mode maps to its
//! exit-code policy here: the hook and the statusline always exit 0 (a non-zero exit
//! makes the host show "hook error" or blank the line); the person-facing commands exit
//! non-zero when something is wrong.
//!
//! The process starts in [`main`] below, a C entry point (`no_main`): `baton hook` and a
//! bare `baton statusline` run from there without std's runtime set-up and without clap;
//! every other command goes through [`cli_main`].
// The bin's test harness has its own entry point: the C one is the real binary's only.
#![cfg_attr(not(test), no_main)]
#![cfg_attr(test, allow(dead_code, unused_imports))]

use std::ffi::{OsString, c_char, c_int};
use std::io::Write;
use std::panic;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use baton::config::Config;
use baton::host::{HookInput, StatuslineInput};
use baton::{demo, doctor, hook, install, metrics, stdin};

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
    /// meter, cost. When COLUMNS is set, the least important segments are shortened or
    /// dropped until the line fits. Always exits 0.
    Statusline {
        /// Run this other statusline command on the same stdin and print its output
        /// instead (baton's own line when it fails, prints nothing or takes longer than
        /// `statusline.wrap_timeout_ms`). `baton install` sets this up.
        #[arg(long, value_name = "COMMAND")]
        wrap: Option<String>,
    },
    /// Handle one hook event from stdin (PostToolUse, AfterTool, SessionStart,
    /// PreCompact …). Prints nothing or one JSON envelope; always exits 0.
    Hook,
    /// Write the handoff now (.planning/HANDOFF.json and .continue-here.md, GSD's formats)
    /// from git, .planning/ and the session's transcript, and checkpoint it in git.
    Pause {
        /// branch: a `wip:` commit of the two handoff files on the current branch (GSD's
        /// way; your staged changes stay staged); ref: a private ref that also saves your
        /// uncommitted work and moves nothing; off: files only. Default from
        /// `handoff.pause_checkpoint` (branch).
        #[arg(long, value_name = "MODE", value_parser = ["branch", "ref", "off"])]
        checkpoint: Option<String>,
        /// Also write .planning/reports/SESSION_REPORT.md with the session's exact token use.
        #[arg(long)]
        report: bool,
        /// The project folder (default: the current folder).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// The session id (default: the transcript's, else a new one).
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// The session's transcript (default: the newest one of this project in
        /// $CLAUDE_CONFIG_DIR or ~/.claude, under projects/).
        #[arg(long, value_name = "PATH")]
        transcript: Option<PathBuf>,
        /// Print JSON for machines.
        #[arg(long)]
        json: bool,
    },
    /// Show the paused handoff's resume brief (what a new session is given), and close
    /// or check it.
    Resume {
        /// The work is picked up: archive the handoff to .planning/handoffs/ and remove
        /// HANDOFF.json and its .continue-here.md (GSD's one-shot lifecycle).
        #[arg(long, group = "action")]
        done: bool,
        /// The handoff is abandoned: archive and remove it the same way.
        #[arg(long, group = "action")]
        discard: bool,
        /// Exit 1 and list them when .continue-here.md holds unchecked `- [ ] CONSTRAINT:`
        /// lines or `blocking` anti-patterns (the gate before any work); else exit 0.
        #[arg(long, group = "action")]
        check: bool,
        /// Trust a handoff written elsewhere (cloned, copied, pulled from GitHub, GSD's):
        /// from now on its brief is given to new sessions here.
        #[arg(long, group = "action")]
        accept: bool,
        /// The project folder (default: the current folder).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// Print JSON for machines.
        #[arg(long)]
        json: bool,
    },
    /// Show one session's exact token use per model, its compactions, the context size
    /// turn by turn and the tool results that filled it.
    ///
    /// Reads the transcript given with --transcript, else the session given with
    /// --session, else the newest transcript of the current project (Claude Code keeps
    /// them under $CLAUDE_CONFIG_DIR or ~/.claude, in projects/).
    Report {
        /// The session id: its transcript is looked up as projects/*/<ID>.jsonl.
        #[arg(long, value_name = "ID", conflicts_with = "transcript")]
        session: Option<String>,
        /// The transcript to read (a Claude Code .jsonl file).
        #[arg(long, value_name = "PATH")]
        transcript: Option<PathBuf>,
        /// The project folder whose newest transcript is read (default: the current folder).
        #[arg(long, value_name = "DIR", conflicts_with_all = ["session", "transcript"])]
        cwd: Option<PathBuf>,
        /// Print one JSON object for machines instead of the text report.
        #[arg(long)]
        json: bool,
        /// Also draw the context over time as a standalone SVG file.
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
    },
    /// Share checkpoints through a GitHub issue (gh CLI), so a handoff can cross machines
    /// and people: `checkpoint push` and `checkpoint pull`.
    Checkpoint {
        #[command(subcommand)]
        action: CheckpointAction,
    },
    /// Show the effective configuration, where each value comes from, and any errors
    /// (exit 1 when there are errors).
    Config {
        /// The project folder whose `.claude/baton.json` and `.planning/config.json` apply.
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// Print JSON for machines.
        #[arg(long)]
        json: bool,
    },
    /// Play a short session in a temporary folder and show, step by step, the status line
    /// and what the agent is told. Writes nothing outside that folder.
    Demo,
    /// Print the shell completion script for SHELL (bash, zsh, fish, elvish, powershell).
    #[command(after_help = "\
Examples:
  baton completions bash > ~/.local/share/bash-completion/completions/baton
  baton completions zsh > \"${fpath[1]}/_baton\"
  baton completions fish > ~/.config/fish/completions/baton.fish")]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print baton's man page (roff), or write it and one page per command into a folder.
    #[command(after_help = "\
Examples:
  baton man | man -l -                    read it now
  baton man --dir ~/.local/share/man/man1 baton.1, baton-install.1, baton-hook.1 ...")]
    Man {
        /// Write baton.1 and a page per command (baton-install.1 ...) into DIR instead.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum CheckpointAction {
    /// Publish the handoff to a GitHub issue: Task Summary in the body, a Persistence Record comment.
    #[command(
        long_about = "Publish .planning/HANDOFF.json to a GitHub issue: rewrite the Task Summary in the issue \
            body (between <!-- baton:summary:start --> and <!-- baton:summary:end -->; the rest of the body is kept) \
            and add a Persistence Record comment. Writes nothing when nothing changed since the last record.\n\n\
            The issue: --issue, else the one recorded in HANDOFF.json, else the open issue labelled \
            baton-checkpoint (one is created when there is none; with several, choose with --issue).\n\n\
            Exit codes: 0 pushed or nothing new; 1 GitHub or network error (the handoff stays local); \
            2 gh missing, not logged in, several candidate issues, or a body to fix by hand."
    )]
    Push {
        /// The issue number (default: the one in HANDOFF.json, else the open issue
        /// labelled baton-checkpoint).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        issue: Option<u64>,
        /// The repository (default: the `origin` remote). HOST/OWNER/NAME for GitHub Enterprise.
        #[arg(long, value_name = "OWNER/NAME")]
        repo: Option<String>,
        /// What the record marks: checkpoint (default), decision, milestone, blocker, done …
        #[arg(long, value_name = "KIND", value_parser = baton::checkpoint_github::parse_kind)]
        kind: Option<String>,
        /// Write a record even when nothing changed since the last one.
        #[arg(long)]
        force: bool,
        /// The project folder (default: the current folder).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// Unattended (after an automatic handoff): print nothing, record failures in
        /// HANDOFF.json as baton.github_error.
        #[arg(long, hide = true)]
        auto: bool,
    },
    /// Restore the task's state from a GitHub issue; --write makes a HANDOFF.json of it.
    #[command(
        long_about = "Read the task's state back from a GitHub issue: Status, Stage, Next, Key Paths, Plan Path, \
            the latest blocker and decision, and the newest record's summary. When the body's Task Summary and the \
            newest Persistence Record disagree, the record wins and the differing fields are listed.\n\n\
            With --write, .planning/HANDOFF.json is written from it (an existing one is archived first), marked as \
            coming from GitHub: it is not injected into a session until you accept it with `baton resume --accept`."
    )]
    Pull {
        /// The issue number (default: the one in HANDOFF.json, else the open issue
        /// labelled baton-checkpoint).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        issue: Option<u64>,
        /// The repository (default: the `origin` remote). HOST/OWNER/NAME for GitHub Enterprise.
        #[arg(long, value_name = "OWNER/NAME")]
        repo: Option<String>,
        /// Write .planning/HANDOFF.json from the issue (archiving the one there).
        #[arg(long)]
        write: bool,
        /// The project folder (default: the current folder).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// Print JSON for machines.
        #[arg(long)]
        json: bool,
    },
}

fn cli_main(args: Vec<OsString>) -> ExitCode {
    let cli = Cli::parse_from(args);
    match cli.command {
        Command::Hook => {
            run_guarded(run_hook);
            ExitCode::SUCCESS
        }
        Command::Statusline { wrap: None } => {
            run_guarded(run_statusline);
            ExitCode::SUCCESS
        }
        Command::Statusline { wrap: Some(old) } => {
            run_guarded(move || print_out(&baton::statusline::wrap::run(&old, metrics::now_unix())));
            ExitCode::SUCCESS
        }
        Command::Install(args) => ExitCode::from(install::run(
            install::Mode::Install,
            &install::Options::from(&args),
            &mut std::io::stdout(),
            &mut std::io::stderr(),
        )),
        Command::Uninstall(args) => ExitCode::from(install::run(
            install::Mode::Uninstall,
            &install::Options::from(&args),
            &mut std::io::stdout(),
            &mut std::io::stderr(),
        )),
        Command::Doctor(args) => ExitCode::from(doctor::run(&args, &mut std::io::stdout())),
        Command::Config { cwd, json } => run_config(cwd, json),
        Command::Resume { done, discard, check, accept, cwd, json } => {
            let action = if done {
                baton::resume_cmd::Action::Done
            } else if discard {
                baton::resume_cmd::Action::Discard
            } else if check {
                baton::resume_cmd::Action::Check
            } else if accept {
                baton::resume_cmd::Action::Accept
            } else {
                baton::resume_cmd::Action::Show
            };
            let Some(cwd) = cwd.or_else(|| std::env::current_dir().ok()) else {
                eprintln!("baton resume: no current folder; pass --cwd");
                return ExitCode::from(2);
            };
            ExitCode::from(baton::resume_cmd::run(action, &cwd, json))
        }
        Command::Pause { checkpoint, report, cwd, session, transcript, json } => {
            run_pause(checkpoint, report, cwd, session, transcript, json)
        }
        Command::Checkpoint { action } => run_checkpoint(action),
        Command::Report { session, transcript, cwd, json, svg } => {
            run_report(session, transcript, cwd, json, svg)
        }
        Command::Completions { shell } => print_generated(|out| {
            clap_complete::generate(shell, &mut Cli::command(), "baton", out);
            Ok(())
        }),
        Command::Man { dir: None } => print_generated(|out| clap_mangen::Man::new(man_command()).render(out)),
        Command::Man { dir: Some(dir) } => {
            match std::fs::create_dir_all(&dir).and_then(|()| clap_mangen::generate_to(man_command(), &dir)) {
                Ok(()) => {
                    println!("man pages written to {}", dir.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("baton man: cannot write into {}: {e}", dir.display());
                    ExitCode::FAILURE
                }
            }
        }
        Command::Demo => match demo::run(&mut std::io::stdout()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("baton demo: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

/// The command tree the man pages describe: `help` is a flag there, not a page.
fn man_command() -> clap::Command {
    Cli::command().disable_help_subcommand(true)
}

/// Writes a generated script or page to stdout; a closed pipe or full disk is an error
/// the person sees, not a panic.
fn print_generated(write: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> ExitCode {
    let mut text = Vec::new();
    let written = write(&mut text).and_then(|()| {
        let mut out = std::io::stdout().lock();
        out.write_all(&text)?;
        out.flush()
    });
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("baton: cannot write the output: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs a host-facing mode with panics silenced and swallowed.
fn run_guarded(mode: impl FnOnce() + panic::UnwindSafe) {
    panic::set_hook(Box::new(|_| {}));
    let _ = panic::catch_unwind(mode);
}

fn print_out(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

fn run_hook() {
    let Ok(input) = stdin::read_json::<HookInput>(stdin::timeout_from_env()) else {
        return;
    };
    let env = hook::HookEnv::from_process();
    if let Some(envelope) = hook::handle(&input, &env) {
        print_out(&envelope.to_json());
    }
}

fn run_statusline() {
    let input = match stdin::read_json::<StatuslineInput>(stdin::timeout_from_env()) {
        Ok(input) => input,
        Err(_) => {
            print_out("baton: no statusline input\n");
            return;
        }
    };
    let project = input.project_dir().map(PathBuf::from).filter(|p| p.is_absolute());
    let config = Config::load(project.as_deref());
    let line = baton::statusline::run(&input, &config, metrics::now_unix());
    print_out(&format!("{line}\n"));
}

fn run_config(cwd: Option<PathBuf>, json: bool) -> ExitCode {
    let project = cwd.or_else(|| std::env::current_dir().ok());
    let config = Config::load(project.as_deref());
    let known = baton::metrics::windows::known_windows(
        &baton::metrics::windows::remembered_windows(),
        &config.configured_windows(),
    );
    let default_window = config.limits().default_window;
    if json {
        let mut value = config.to_json();
        value["windows"] = serde_json::json!({"known": known, "default": default_window});
        println!("{}", serde_json::to_string_pretty(&value).unwrap_or_default());
    } else {
        print!("{}", baton::config::describe_config(&config));
        print!("\n{}", baton::metrics::windows::describe_known(&known, default_window));
    }
    if config.errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

fn run_pause(
    checkpoint: Option<String>,
    report: bool,
    cwd: Option<PathBuf>,
    session: Option<String>,
    transcript: Option<PathBuf>,
    json: bool,
) -> ExitCode {
    let Some(cwd) = cwd.or_else(|| std::env::current_dir().ok()) else {
        eprintln!("baton pause: no current folder; pass --cwd");
        return ExitCode::from(2);
    };
    let config = Config::load(Some(&cwd));
    let options = baton::pause::Options {
        checkpoint: checkpoint.as_deref().and_then(baton::gitx::Mode::parse),
        report,
        cwd,
        session,
        transcript,
    };
    match baton::pause::run(&options, &config) {
        Ok(paused) => {
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&baton::pause::confirmation_json(&paused))
                        .unwrap_or_default()
                );
            } else {
                print!("{}", baton::pause::confirmation(&paused));
            }
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("baton pause: {why}");
            ExitCode::FAILURE
        }
    }
}

fn run_checkpoint(action: CheckpointAction) -> ExitCode {
    use baton::checkpoint_github::{self as github, PullOptions, PushOptions};
    let current = |cwd: Option<PathBuf>| cwd.or_else(|| std::env::current_dir().ok());
    match action {
        CheckpointAction::Push { issue, repo, kind, force, cwd, auto } => {
            let Some(cwd) = current(cwd) else {
                if !auto {
                    eprintln!("baton checkpoint push: no current folder; pass --cwd");
                }
                return ExitCode::from(github::EXIT_USAGE);
            };
            let config = Config::load(Some(&cwd));
            let options = PushOptions { cwd, issue, repo, kind, force, auto };
            match github::push(&options, &config) {
                Ok(pushed) => {
                    if !auto {
                        print!("{}", github::push_receipt(&pushed));
                    }
                    ExitCode::SUCCESS
                }
                Err(failure) => {
                    if !auto {
                        eprintln!("baton checkpoint push: {}", failure.message);
                    }
                    ExitCode::from(failure.code)
                }
            }
        }
        CheckpointAction::Pull { issue, repo, write, cwd, json } => {
            let Some(cwd) = current(cwd) else {
                eprintln!("baton checkpoint pull: no current folder; pass --cwd");
                return ExitCode::from(github::EXIT_USAGE);
            };
            let config = Config::load(Some(&cwd));
            let options = PullOptions { cwd: cwd.clone(), issue, repo, write };
            match github::pull(&options, &config) {
                Ok(pulled) => {
                    if json {
                        println!(
                            "{}",
                            serde_json::to_string_pretty(&github::pull_json(&pulled)).unwrap_or_default()
                        );
                    } else {
                        print!("{}", github::pull_receipt(&pulled));
                    }
                    ExitCode::SUCCESS
                }
                Err(failure) => {
                    eprintln!("baton checkpoint pull: {}", failure.message);
                    ExitCode::from(failure.code)
                }
            }
        }
    }
}

fn run_report(
    session: Option<String>,
    transcript: Option<PathBuf>,
    cwd: Option<PathBuf>,
    json: bool,
    svg: Option<PathBuf>,
) -> ExitCode {
    use baton::report::{self, LocateError, Lookup, Report};
    use std::io::IsTerminal;

    let folder = cwd.or_else(|| std::env::current_dir().ok());
    let lookup = match (transcript, &session, &folder) {
        (Some(path), _, _) => Lookup::Transcript(path),
        (None, Some(id), _) => Lookup::Session(id.clone()),
        (None, None, Some(dir)) => Lookup::Newest(dir.clone()),
        (None, None, None) => {
            eprintln!("baton report: no current folder; pass --cwd, --session or --transcript");
            return ExitCode::from(2);
        }
    };
    let path = match report::locate(&lookup) {
        Ok(path) => path,
        Err(e @ LocateError::Usage(_)) => {
            eprintln!("baton report: {e}");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("baton report: {e}");
            return ExitCode::FAILURE;
        }
    };
    let usage = match baton::transcript::session_usage(&path) {
        Ok(usage) => usage,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("baton report: no transcript at {}", path.display());
            return ExitCode::FAILURE;
        }
        Err(e) => {
            eprintln!("baton report: cannot read {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    };
    let config = Config::load(folder.as_deref());
    let session_id = session.or_else(|| usage.session_id.clone()).or_else(|| report::session_id_of(&path));
    let report = Report::build(&usage, &path.display().to_string(), session_id, config.levels());
    if let Some(file) = &svg {
        let chart = report::svg::render(&report);
        if let Err(e) = baton::fsx::write_atomic(file, chart.as_bytes(), baton::fsx::WriteOptions::USER) {
            eprintln!("baton report: cannot write {}: {e}", file.display());
            return ExitCode::FAILURE;
        }
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&report).unwrap_or_default());
    } else {
        let stdout = std::io::stdout();
        let colour = stdout.is_terminal() && baton::statusline::colour_wanted();
        let columns = baton::statusline::columns_from_env().unwrap_or(80);
        print!("{}", report::text::render(&report, colour, columns));
        if let Some(file) = &svg {
            println!("\nChart written to {}", file.display());
        }
    }
    ExitCode::SUCCESS
}

/// The process entry, called by the C runtime in place of std's (`#![no_main]`).
///
/// std's own entry sets up a guard against stack overflow before `main`, and on glibc
/// that reads and parses `/proc/self/maps`: about 40,000 instructions and 15 system
/// calls, as much as the whole hook below its thresholds. The hook and the statusline run
/// after every tool call and message, so they start here with only what they need (the
/// standard descriptors checked, `SIGPIPE` ignored, as std does) and without building
/// clap's command tree. The hook skips argument parsing altogether: no flag a host passes
/// may turn into a usage error and a non-zero exit.
#[cfg(not(test))]
#[unsafe(no_mangle)]
extern "C" fn main(argc: c_int, argv: *const *const c_char) -> c_int {
    // SAFETY: the C runtime passes argc strings in argv, each NUL-terminated.
    let args = unsafe { args_from(argc, argv) };
    start_like_std();
    let mode = args.get(1).and_then(|a| a.to_str());
    if mode == Some("hook") && !args.iter().any(|a| a == "-h" || a == "--help") {
        run_guarded(run_hook);
        return 0;
    }
    if mode == Some("statusline") && args.len() == 2 {
        run_guarded(run_statusline);
        return 0;
    }
    // A panic here is a bug: reported as std reports it (the default hook), exit 101.
    let code = panic::catch_unwind(move || cli_main(args));
    let _ = std::io::stdout().flush();
    match code {
        Ok(code) => (0..=255u8).find(|c| ExitCode::from(*c) == code).map_or(1, c_int::from),
        Err(_) => 101,
    }
}

#[cfg(not(test))]
/// The arguments as std would give them (std cannot on every C library without its
/// own entry point).
///
/// # Safety
/// `argv` holds `argc` pointers to NUL-terminated strings.
unsafe fn args_from(argc: c_int, argv: *const *const c_char) -> Vec<OsString> {
    use std::os::unix::ffi::OsStrExt;
    (0..usize::try_from(argc).unwrap_or(0))
        .filter_map(|i| {
            // SAFETY: i < argc, so argv[i] is one of the strings the caller vouches for.
            let arg = unsafe { *argv.add(i) };
            // SAFETY: as above, NUL-terminated.
            (!arg.is_null()).then(|| {
                std::ffi::OsStr::from_bytes(unsafe { std::ffi::CStr::from_ptr(arg) }.to_bytes())
                    .to_os_string()
            })
        })
        .collect()
}

#[cfg(not(test))]
/// What std's entry does before `main` that baton relies on: the standard descriptors
/// are open (a closed stdout must not become the next file opened, which the envelope
/// would then be written into), and a write to a closed pipe is an error, not a kill
/// signal (the hook's exit code stays 0).
fn start_like_std() {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd { fd, events: 0, revents: 0 });
    // SAFETY: three valid pollfd entries; a zero timeout only reports.
    if unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) } >= 0 {
        for fd in fds.iter().filter(|p| p.revents & libc::POLLNVAL != 0) {
            // SAFETY: a plain open of a constant path; the lowest free descriptor, which
            // is the closed one, is taken.
            let opened = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR, 0) };
            if opened != fd.fd {
                // Not the descriptor it was meant to fill: better no baton than a wrong one.
                // SAFETY: aborting has no preconditions.
                unsafe { libc::abort() };
            }
        }
    }
    // SAFETY: setting a signal's disposition to ignore has no preconditions.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
}
