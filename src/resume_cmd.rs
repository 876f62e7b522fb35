//! `baton resume`: the resume path for a person. Shows the brief a new session would be
//! given (colour on a terminal, `--json` for machines), and closes (`--done`,
//! `--discard`), gates (`--check`) or trusts (`--accept`) the handoff.

use std::io::IsTerminal;
use std::path::Path;

use serde_json::{Value, json};

use crate::config::Config;
use crate::resume::{self, Found};

/// What was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Show,
    Done,
    Discard,
    Check,
    Accept,
}

fn paint(text: &str, code: &str, colour: bool) -> String {
    if colour { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_string() }
}

fn emit(json_out: bool, value: Value, text: &str) {
    if json_out {
        println!("{}", serde_json::to_string_pretty(&value).unwrap_or_default());
    } else {
        print!("{text}");
    }
}

fn show(found: &Found, json_out: bool) -> u8 {
    let colour = !json_out
        && std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let handoff = match &found.handoff {
        Ok(handoff) => handoff,
        Err(why) => {
            let line = resume::unreadable_line(found, why);
            emit(
                json_out,
                json!({"found": true, "readable": false, "path": found.json_path, "error": why}),
                &format!("{line}\n"),
            );
            return 1;
        }
    };
    let config = Config::load(Some(&found.root));
    let today = resume::today(found, handoff, None, &config);
    let brief = resume::brief(found, handoff, &today);
    let mut text = String::new();
    if !found.trusted {
        text.push_str(&paint(
            "Written elsewhere: new sessions here get only a one-line notice about it. Read it as untrusted data; `baton resume --accept` trusts it.\n\n",
            "33",
            colour,
        ));
    }
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
        text.push_str(&paint(&format!("Ignored: {problem}\n"), "33", colour));
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
        "version": handoff.object().get("version"),
        "problems": handoff.problems(),
        "blocking": found.markdown.as_deref().map(resume::blocking_items).unwrap_or_default(),
        "brief": brief,
    });
    emit(json_out, value, &text);
    0
}

/// Runs `baton resume`; returns the exit code.
pub fn run(action: Action, cwd: &Path, json_out: bool) -> u8 {
    let root = crate::gitx::project_root(cwd);
    let config = Config::load(Some(&root));
    let Some(found) = resume::find(&root, &config) else {
        let loose = resume::loose_continue_here(&root);
        let mut text =
            format!("No handoff at {}.\n", root.join(config.handoff_dir()).join("HANDOFF.json").display());
        if !loose.is_empty() {
            text.push_str(
                "Found .continue-here.md notes (GSD's mid-plan checkpoints, without a HANDOFF.json):\n",
            );
            for path in &loose {
                text.push_str(&format!("  {}\n", path.display()));
            }
        }
        if action == Action::Check {
            // No handoff, nothing to gate on.
            emit(json_out, json!({"found": false, "blocking": []}), &text);
            return 0;
        }
        emit(json_out, json!({"found": false, "continue_here": loose}), &text);
        return 1;
    };
    match action {
        Action::Show => show(&found, json_out),
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
                    text.push_str(&format!("  - {item}\n"));
                }
                text.push_str("For each: what is it, how did it show, which structural step prevents it.\n");
            }
            emit(json_out, json!({"found": true, "blocking": blocking}), &text);
            if blocking.is_empty() { 0 } else { 1 }
        }
        Action::Done | Action::Discard => {
            let how = if action == Action::Done { "done" } else { "discarded" };
            match resume::close(&found, how) {
                Ok(archived) => {
                    let rel: Vec<String> = archived
                        .iter()
                        .map(|p| p.strip_prefix(&found.root).unwrap_or(p).display().to_string())
                        .collect();
                    let text = format!("Handoff {how}: archived to {} and removed.\n", rel.join(" and "));
                    emit(json_out, json!({"closed": how, "archived": archived}), &text);
                    0
                }
                Err(why) => {
                    eprintln!("baton resume: {why}");
                    1
                }
            }
        }
        Action::Accept => match resume::accept(&found) {
            Ok(id) => {
                let text = format!(
                    "Trusted: handoff {id} at {} will be given to new sessions in this folder (recorded in {}).\n",
                    found.json_rel(),
                    resume::registry_hint()
                );
                emit(json_out, json!({"accepted": id, "path": found.json_path}), &text);
                0
            }
            Err(why) => {
                eprintln!("baton resume --accept: {why}");
                1
            }
        },
    }
}
