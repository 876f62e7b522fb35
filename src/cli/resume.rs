//! `baton resume`: the resume path for a person. Shows the brief a new session would be
//! given (colour on a terminal, `--json` for machines), and closes (`--done`,
//! `--discard`), gates (`--check`) or trusts (`--accept`) the handoff.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{Value, json};

use super::{ExitStatus, folder};
use crate::config::Config;
use crate::resume::{self, Found};
use crate::util::text::{outside, outside_path, paint};

#[derive(Args)]
pub(super) struct ResumeArgs {
    /// The work is picked up: archive the handoff to .planning/handoffs/ and remove
    /// HANDOFF.json and its .continue-here.md (GSD's one-shot lifecycle).
    #[arg(long, group = "action")]
    done: bool,
    /// The handoff is abandoned: archive and remove it the same way.
    #[arg(long, group = "action")]
    discard: bool,
    /// Exit 1 and list them when .continue-here.md holds unchecked `- [ ] CONSTRAINT:`
    /// lines or `blocking` anti-patterns (the gate before any work); else exit 0. A handoff
    /// written elsewhere and not accepted is not read: exit 1, saying so.
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
}

/// What was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Show,
    Done,
    Discard,
    Check,
    Accept,
}

pub(super) fn run(args: ResumeArgs) -> ExitStatus {
    let action = if args.done {
        Action::Done
    } else if args.discard {
        Action::Discard
    } else if args.check {
        Action::Check
    } else if args.accept {
        Action::Accept
    } else {
        Action::Show
    };
    let Some(cwd) = folder(args.cwd) else {
        errln!("baton resume: no current folder; pass --cwd");
        return ExitStatus::Usage;
    };
    act(action, &cwd, args.json)
}

fn emit(json_out: bool, value: Value, text: &str) {
    if json_out {
        super::print_json(&value);
    } else {
        out!("{text}");
    }
}

/// What an untrusted handoff gets from every action but `--accept`, `--done` and
/// `--discard`: where it is and that it is untrusted, none of its fields.
fn untrusted(found: &Found, json_out: bool) {
    emit(
        json_out,
        json!({"found": true, "trusted": false, "path": found.json_path}),
        &format!(
            "Untrusted handoff at {}: written elsewhere (not by baton on this machine for this folder). Nothing of it is shown until you trust it: read the file itself, then `baton resume --accept`.\n",
            found.json_rel()
        ),
    );
}

fn show(found: &Found, json_out: bool) -> ExitStatus {
    if !found.trusted {
        untrusted(found, json_out);
        return ExitStatus::Success;
    }
    let colour = !json_out
        && std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let handoff = match &found.handoff {
        Ok(handoff) => handoff,
        Err(why) => {
            let why = why.to_string();
            let line = resume::unreadable_line(found, &why);
            emit(
                json_out,
                json!({"found": true, "readable": false, "path": found.json_path, "error": why}),
                &format!("{line}\n"),
            );
            return ExitStatus::Failure;
        }
    };
    let config = Config::load(Some(&found.project));
    let today = resume::today(found, handoff, None, &config);
    let brief = resume::brief(found, handoff, &today);
    let mut text = String::new();
    if !handoff.is_paused() {
        text.push_str(&format!(
            "(status {}, not paused: it is not given to new sessions)\n\n",
            handoff
                .status()
                .map(|s| format!("{:?}", resume::quote(s, 40)))
                .unwrap_or_else(|| "missing".into())
        ));
    }
    for problem in handoff.problems() {
        text.push_str(&paint(&format!("Ignored: {}\n", outside(problem)), "33", colour));
    }
    if !handoff.problems().is_empty() {
        text.push('\n');
    }
    for line in brief.lines() {
        let styled = if line.starts_with("baton resume brief") {
            paint(line, "1", colour)
        } else if line.starts_with("Doubts:") {
            paint(line, "33", colour)
        } else if line.starts_with("Before any work")
            || line.starts_with("Blocker")
            || line.starts_with("Human action")
        {
            paint(line, "31", colour)
        } else {
            line.to_string()
        };
        text.push_str(&styled);
        text.push('\n');
    }
    let value = json!({
        "found": true,
        "readable": true,
        "path": found.json_path,
        "continue_here": found.markdown_rel,
        "trusted": found.trusted,
        "status": handoff.status(),
        "session_id": handoff.baton().session_id(),
        "version": handoff.version_value(),
        "problems": handoff.problems(),
        "blocking": found.markdown.as_deref().map(resume::blocking_items).unwrap_or_default(),
        "brief": brief,
    });
    emit(json_out, value, &text);
    ExitStatus::Success
}

fn act(action: Action, cwd: &Path, json_out: bool) -> ExitStatus {
    let root = crate::gitx::project_dir(cwd);
    let config = Config::load(Some(&root));
    let Some(found) = resume::find(&root, &config) else {
        let loose = resume::loose_continue_here(&root);
        let mut text = format!(
            "No handoff at {}.\n",
            outside_path(&root.join(config.handoff_dir()).join("HANDOFF.json"))
        );
        if !loose.is_empty() {
            text.push_str(
                "Found .continue-here.md notes (GSD's mid-plan checkpoints, without a HANDOFF.json):\n",
            );
            for path in &loose {
                text.push_str(&format!("  {}\n", outside_path(path)));
            }
        }
        if action == Action::Check {
            // No handoff, nothing to gate on.
            emit(json_out, json!({"found": false, "blocking": []}), &text);
            return ExitStatus::Success;
        }
        emit(json_out, json!({"found": false, "continue_here": loose}), &text);
        return ExitStatus::Failure;
    };
    match action {
        Action::Show => show(&found, json_out),
        // An untrusted handoff's constraints are its words: the gate holds (exit 1) and
        // says why, without them.
        Action::Check if !found.trusted => {
            untrusted(&found, json_out);
            ExitStatus::Failure
        }
        Action::Check => {
            let blocking = found.markdown.as_deref().map(resume::blocking_items).unwrap_or_default();
            let mut text = String::new();
            if blocking.is_empty() {
                text.push_str("No blocking constraints: work may start.\n");
            } else {
                text.push_str(&format!(
                    "{} blocking item(s) must be acknowledged before any work:\n",
                    blocking.len()
                ));
                for item in &blocking {
                    text.push_str(&format!("  - {}\n", outside(item)));
                }
                text.push_str("For each: what is it, how did it show, which structural step prevents it.\n");
            }
            emit(json_out, json!({"found": true, "blocking": blocking}), &text);
            if blocking.is_empty() { ExitStatus::Success } else { ExitStatus::Failure }
        }
        Action::Done | Action::Discard => {
            let how = if action == Action::Done { "done" } else { "discarded" };
            match resume::close(&found, how) {
                Ok(archived) => {
                    let rel: Vec<String> = archived
                        .iter()
                        .map(|p| outside_path(p.strip_prefix(&found.project).unwrap_or(p)).to_string())
                        .collect();
                    let text = format!("Handoff {how}: archived to {} and removed.\n", rel.join(" and "));
                    emit(json_out, json!({"closed": how, "archived": archived}), &text);
                    ExitStatus::Success
                }
                Err(why) => {
                    errln!("baton resume: {why}");
                    ExitStatus::Failure
                }
            }
        }
        Action::Accept => match resume::accept(&found) {
            Ok(id) => {
                let text = format!(
                    "Trusted: handoff {} at {} will be given to new sessions in this folder (recorded in {}).\n",
                    outside(&id),
                    found.json_rel(),
                    resume::registry_hint()
                );
                emit(json_out, json!({"accepted": id, "path": found.json_path}), &text);
                ExitStatus::Success
            }
            Err(why) => {
                errln!("baton resume --accept: {why}");
                ExitStatus::Failure
            }
        },
    }
}
