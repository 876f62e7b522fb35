//! `baton checkpoint list|prune|push|pull`: baton's git refs, and the GitHub ledger, from
//! the command line.

use std::path::PathBuf;

use clap::Subcommand;

use super::{ExitStatus, folder, print_json};
use crate::checkpoint_github::{self as github, Fault, PullOptions, PushOptions};
use crate::config::Config;
use crate::util::text::outside;

#[derive(Subcommand)]
pub(super) enum CheckpointAction {
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
        #[arg(long, value_name = "AGE", value_parser = crate::gitx::refs::parse_age)]
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
        #[arg(long, value_name = "KIND", value_parser = github::parse_kind)]
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

fn status(fault: Fault) -> ExitStatus {
    match fault {
        Fault::Failed => ExitStatus::Failure,
        Fault::Usage => ExitStatus::Usage,
    }
}

pub(super) fn run(action: CheckpointAction) -> ExitStatus {
    match action {
        CheckpointAction::List { cwd, json } => {
            let Some(cwd) = folder(cwd) else {
                errln!("baton checkpoint list: no current folder; pass --cwd");
                return ExitStatus::Usage;
            };
            list(&cwd, json)
        }
        CheckpointAction::Prune { older_than, cwd } => {
            let Some(cwd) = folder(cwd) else {
                errln!("baton checkpoint prune: no current folder; pass --cwd");
                return ExitStatus::Usage;
            };
            prune(&cwd, older_than)
        }
        CheckpointAction::Push { issue, repo, kind, force, cwd, auto } => {
            let Some(cwd) = folder(cwd) else {
                if !auto {
                    errln!("baton checkpoint push: no current folder; pass --cwd");
                }
                return ExitStatus::Usage;
            };
            let config = Config::load(Some(&cwd));
            let options = PushOptions { cwd, issue, repo, kind, force, auto };
            match github::push(&options, &config) {
                Ok(pushed) => {
                    if !auto {
                        out!("{}", github::push_receipt(&pushed));
                    }
                    ExitStatus::Success
                }
                Err(failure) => {
                    if !auto {
                        errln!("baton checkpoint push: {}", failure.message);
                    }
                    status(failure.fault)
                }
            }
        }
        CheckpointAction::Pull { issue, repo, write, cwd, json } => {
            let Some(cwd) = folder(cwd) else {
                errln!("baton checkpoint pull: no current folder; pass --cwd");
                return ExitStatus::Usage;
            };
            let config = Config::load(Some(&cwd));
            let options = PullOptions { cwd: cwd.clone(), issue, repo, write };
            match github::pull(&options, &config) {
                Ok(pulled) => {
                    if json {
                        print_json(&github::pull_json(&pulled));
                    } else {
                        out!("{}", github::pull_receipt(&pulled));
                    }
                    ExitStatus::Success
                }
                Err(failure) => {
                    errln!("baton checkpoint pull: {}", failure.message);
                    status(failure.fault)
                }
            }
        }
    }
}

fn list(cwd: &std::path::Path, json: bool) -> ExitStatus {
    let refs = match crate::gitx::refs::list(cwd) {
        Ok(refs) => refs,
        Err(e) => {
            errln!("baton checkpoint list: {e}");
            return ExitStatus::Failure;
        }
    };
    let now = crate::metrics::now_unix();
    if json {
        let items: Vec<serde_json::Value> = refs
            .iter()
            .map(|r| {
                serde_json::json!({"name": r.name, "commit": r.commit, "time": r.time,
                    "age_seconds": (now - r.time).max(0), "summary": r.summary})
            })
            .collect();
        print_json(&serde_json::json!({"version": 1, "refs": items}));
    } else if refs.is_empty() {
        outln!("no baton refs (refs/baton/…) in this repository");
    } else {
        for r in &refs {
            let when = chrono::DateTime::from_timestamp(r.time, 0)
                .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
                .unwrap_or_default();
            // The commit's subject is git's text: whatever the repository holds.
            outln!(
                "{}  {}  {when}  {}",
                outside(&r.name),
                &r.commit[..r.commit.len().min(7)],
                outside(&r.summary)
            );
        }
        let noun = if refs.len() == 1 { "ref" } else { "refs" };
        outln!("\n{} {noun}; `baton checkpoint prune --older-than 7d` removes old ones.", refs.len());
    }
    ExitStatus::Success
}

fn prune(cwd: &std::path::Path, older_than: Option<std::time::Duration>) -> ExitStatus {
    let config = Config::load(Some(cwd));
    let root = crate::gitx::project_dir(cwd);
    let keep: Vec<String> = crate::handoff::doc::HandoffDoc::read(&root, &config.handoff_dir())
        .and_then(Result::ok)
        .and_then(|doc| doc.baton().checkpoint().reference.text().map(str::to_string))
        .into_iter()
        .collect();
    match crate::gitx::refs::prune(cwd, older_than, &keep, crate::metrics::now_unix()) {
        Ok(pruned) => {
            for r in &pruned.removed {
                outln!("deleted {} (was {})", outside(&r.name), &r.commit[..r.commit.len().min(7)]);
            }
            for r in &pruned.kept {
                outln!("kept {}: the pending handoff's checkpoint", outside(&r.name));
            }
            if pruned.removed.is_empty() {
                outln!("nothing to prune");
            }
            ExitStatus::Success
        }
        Err(e) => {
            errln!("baton checkpoint prune: {e}");
            ExitStatus::Failure
        }
    }
}
