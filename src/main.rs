//! The `baton` command line: argument parsing and dispatch only. Each mode maps to its
//! exit-code policy here: the hook and the statusline always exit 0 (a non-zero exit
//! makes the host show "hook error" or blank the line); the person-facing commands exit
//! non-zero when something is wrong.

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
    /// meter, headroom, cost; and on request rate_limits (5-hour and 7-day, from the
    /// payload), cache (the prompt cache's time left), compactions (so far). A second row
    /// comes from `statusline.second_line`. When COLUMNS is set, the least important
    /// segments are shortened or dropped until each row fits. Always exits 0.
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
    /// How full the session's context is: the figure, its source and age, the window,
    /// the headroom to compaction, the level and any pending handoff. As cheap as the
    /// hook: an agent may run it from Bash at any time.
    Status {
        /// The session id, or an unambiguous prefix of one (default: the newest session
        /// of the project in the current folder).
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// The project folder (default: the current folder).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// Print one JSON object (format version 1) for machines.
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
    /// baton's checkpoints: list and prune its git refs (`checkpoint list`, `checkpoint
    /// prune`), or share them through a GitHub issue (gh CLI), so a handoff can cross
    /// machines and people (`checkpoint push`, `checkpoint pull`).
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
    /// List baton's git refs (refs/baton/…: the automatic checkpoints), newest first.
    List {
        /// The project folder (default: the current folder).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// Print JSON for machines.
        #[arg(long)]
        json: bool,
    },
    /// Delete baton's git refs (refs/baton/… only; never another ref), all of them or
    /// those older than --older-than. The checkpoint a pending handoff names is kept.
    Prune {
        /// Only refs whose commit is older than this: 90s, 30m, 12h, 7d, 2w.
        #[arg(long, value_name = "AGE", value_parser = baton::gitx::refs::parse_age)]
        older_than: Option<std::time::Duration>,
        /// The project folder (default: the current folder).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
    },
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

fn main() -> ExitCode {
    // The hook path skips argument parsing altogether: no flag a host passes may turn
    // into a usage error and a non-zero exit.
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("hook") && !args.iter().any(|a| a == "-h" || a == "--help") {
        run_guarded(run_hook);
        return ExitCode::SUCCESS;
    }
    let cli = Cli::parse();
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
        Command::Status { session, cwd, json } => run_status(session, cwd, json),
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

fn run_status(session: Option<String>, cwd: Option<PathBuf>, json: bool) -> ExitCode {
    use baton::status::{self, StatusError};
    let Some(cwd) = cwd.or_else(|| std::env::current_dir().ok()) else {
        eprintln!("baton status: no current folder; pass --cwd");
        return ExitCode::from(2);
    };
    let config = Config::load(Some(&cwd));
    match status::status(&cwd, session.as_deref(), &config, metrics::now_unix()) {
        Ok(found) if json => {
            println!("{}", serde_json::to_string_pretty(&found.to_json()).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Ok(found) => {
            print!("{}", found.to_text());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("baton status: {e}");
            ExitCode::from(if matches!(e, StatusError::Usage(_)) { 2 } else { 1 })
        }
    }
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
        CheckpointAction::List { cwd, json } => {
            let Some(cwd) = current(cwd) else {
                eprintln!("baton checkpoint list: no current folder; pass --cwd");
                return ExitCode::from(2);
            };
            checkpoint_list(&cwd, json)
        }
        CheckpointAction::Prune { older_than, cwd } => {
            let Some(cwd) = current(cwd) else {
                eprintln!("baton checkpoint prune: no current folder; pass --cwd");
                return ExitCode::from(2);
            };
            checkpoint_prune(&cwd, older_than)
        }
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

fn checkpoint_list(cwd: &std::path::Path, json: bool) -> ExitCode {
    let refs = match baton::gitx::refs::list(cwd) {
        Ok(refs) => refs,
        Err(e) => {
            eprintln!("baton checkpoint list: {e}");
            return ExitCode::FAILURE;
        }
    };
    let now = metrics::now_unix();
    if json {
        let items: Vec<serde_json::Value> = refs
            .iter()
            .map(|r| {
                serde_json::json!({"name": r.name, "commit": r.commit, "time": r.time,
                    "age_seconds": (now - r.time).max(0), "summary": r.summary})
            })
            .collect();
        let value = serde_json::json!({"version": 1, "refs": items});
        println!("{}", serde_json::to_string_pretty(&value).unwrap_or_default());
    } else if refs.is_empty() {
        println!("no baton refs (refs/baton/…) in this repository");
    } else {
        for r in &refs {
            let age = chrono::DateTime::from_timestamp(r.time, 0)
                .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
                .unwrap_or_default();
            println!("{}  {}  {age}  {}", r.name, &r.commit[..r.commit.len().min(7)], r.summary);
        }
        println!("\n{} ref(s); `baton checkpoint prune --older-than 7d` removes old ones.", refs.len());
    }
    ExitCode::SUCCESS
}

fn checkpoint_prune(cwd: &std::path::Path, older_than: Option<std::time::Duration>) -> ExitCode {
    let config = Config::load(Some(cwd));
    let root = baton::gitx::project_root(cwd);
    let keep: Vec<String> = baton::handoff::doc::HandoffDoc::read(&root, &config.handoff_dir())
        .and_then(Result::ok)
        .and_then(|doc| doc.baton().checkpoint().reference)
        .into_iter()
        .collect();
    match baton::gitx::refs::prune(cwd, older_than, &keep, metrics::now_unix()) {
        Ok(pruned) => {
            for r in &pruned.removed {
                println!("deleted {} (was {})", r.name, &r.commit[..r.commit.len().min(7)]);
            }
            for r in &pruned.kept {
                println!("kept {}: the pending handoff's checkpoint", r.name);
            }
            if pruned.removed.is_empty() {
                println!("nothing to prune");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("baton checkpoint prune: {e}");
            ExitCode::FAILURE
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
