//! What a leg of a relay did again: a tool call of an earlier leg run again with the same
//! input (the same command, the same file written the same way). Pure: typed calls in,
//! the repeats out; whether a repeat had a side effect is read from the action.

use serde::Serialize;

use crate::transcript::{Action, Outcome, TraceCall};

/// What a repeated call does to the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// It only reads (a file read, `cat`, `git status` …): repeating it costs context only.
    ReadOnly,
    /// A check that may run any number of times (tests, a build, a lint).
    Check,
    /// It changes something (a file written, a command that writes, commits, sends …):
    /// doing it twice is the relay's own failure.
    #[serde(rename = "side_effect")]
    Changes,
}

/// One call of a leg that repeats a call an earlier leg ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Repeat {
    /// The leg that ran it again.
    pub leg: u32,
    /// The leg that ran it first.
    pub of_leg: u32,
    pub tool: String,
    /// The command, or the file, as the call names it.
    pub what: String,
    pub effect: Effect,
    pub at: Option<String>,
}

impl Repeat {
    /// A side effect done twice: the relay lost the record of a step.
    pub fn is_failure(&self) -> bool {
        self.effect == Effect::Changes
    }
}

/// Programs that only read (their first word), whatever their arguments, unless the
/// command also redirects into a file.
const READ_ONLY: &[&str] = &[
    "cat", "ls", "head", "tail", "wc", "grep", "rg", "egrep", "fgrep", "pwd", "echo", "printf", "true",
    "false", "test", "[", "stat", "file", "diff", "which", "type", "sort", "uniq", "cut", "tr", "date",
    "env", "jq", "tree", "du", "df", "whoami", "uname", "less", "more", "nl", "basename", "dirname",
    "realpath", "readlink", "sleep", "cd",
];

/// `git` subcommands that only read.
const GIT_READ_ONLY: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "rev-parse",
    "ls-files",
    "blame",
    "grep",
    "describe",
    "shortlog",
    "cat-file",
    "remote",
    "config",
];

/// Commands that check and may run again (tests, builds, linters): their first two words.
const CHECKS: &[&str] = &[
    "cargo test",
    "cargo check",
    "cargo build",
    "cargo clippy",
    "cargo fmt --check",
    "npm test",
    "npm run test",
    "npm run lint",
    "npm run build",
    "pnpm test",
    "yarn test",
    "pytest",
    "go test",
    "go build",
    "go vet",
    "make test",
    "make check",
    "tsc",
    "npx tsc",
    "ruff",
    "mypy",
    "python -m pytest",
];

/// What a call does to the world (pure, by its action).
pub fn effect_of(action: &Action) -> Effect {
    match action {
        Action::Shell { command } => shell_effect(command),
        Action::Read { .. } | Action::Plan => Effect::ReadOnly,
        Action::WriteFile { .. } | Action::EditFile { .. } | Action::Patch { .. } | Action::Other { .. } => {
            Effect::Changes
        }
    }
}

/// A shell command's effect: read-only when every part of it (split at `&&`, `||`, `;`,
/// `|`) starts with a reading program and nothing is redirected into a file; a check
/// when it is one of [`CHECKS`]; else a side effect.
pub fn shell_effect(command: &str) -> Effect {
    let command = command.trim();
    if writes_by_redirection(command) {
        return Effect::Changes;
    }
    let parts = command_parts(command);
    if parts.is_empty() {
        return Effect::ReadOnly;
    }
    let mut effect = Effect::ReadOnly;
    for part in &parts {
        let part = part.as_str();
        let words: Vec<&str> = part.split_whitespace().collect();
        let first = words.first().copied().unwrap_or("");
        let second = words.get(1).copied().unwrap_or("");
        let reads = READ_ONLY.contains(&first)
            || (first == "git" && GIT_READ_ONLY.contains(&second))
            || (first == "find" && !part.contains("-delete") && !part.contains("-exec"))
            || (first == "sed" && second == "-n");
        if reads {
            continue;
        }
        if CHECKS.iter().any(|check| part == *check || part.starts_with(&format!("{check} "))) {
            effect = Effect::Check;
            continue;
        }
        return Effect::Changes;
    }
    effect
}

/// The parts of a command line: split at `;`, newlines, `|`, `||`, `&&` and a lone `&`,
/// but not at the `&` of a redirection (`2>&1`, `&>`).
fn command_parts(command: &str) -> Vec<String> {
    let mut parts = vec![];
    let mut part = String::new();
    let mut chars = command.chars().peekable();
    let mut previous = ' ';
    while let Some(c) = chars.next() {
        let redirection_amp = c == '&' && (previous == '>' || chars.peek() == Some(&'>'));
        if matches!(c, ';' | '\n' | '|') || (c == '&' && !redirection_amp) {
            parts.push(std::mem::take(&mut part));
        } else {
            part.push(c);
        }
        previous = c;
    }
    parts.push(part);
    parts.into_iter().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect()
}

/// The command sends output into a file (`>`, `>>`, `tee`), not a descriptor or
/// `/dev/null`.
fn writes_by_redirection(command: &str) -> bool {
    let mut rest = command;
    while let Some(at) = rest.find('>') {
        let after = rest[at..].trim_start_matches('>').trim_start();
        let harmless =
            after.starts_with('&') || after.starts_with("/dev/null") || after.starts_with("/dev/std");
        if !harmless {
            return true;
        }
        rest = &rest[at + 1..];
    }
    command_parts(command).iter().any(|part| part.split_whitespace().next() == Some("tee"))
}

/// The files a call that ran wrote: the file of a write or an edit, a patch's files,
/// a shell command's redirection targets (`> f`, `>> f`, `tee f`).
pub fn files_written(call: &TraceCall) -> Vec<String> {
    if !call.outcome.ran() {
        return vec![];
    }
    match &call.action {
        Action::WriteFile { path, .. } | Action::EditFile { path, .. } => vec![path.clone()],
        Action::Patch { files, .. } => files.clone(),
        Action::Shell { command } => redirection_targets(command),
        _ => vec![],
    }
}

fn redirection_targets(command: &str) -> Vec<String> {
    let mut targets = vec![];
    for part in command_parts(command) {
        let words: Vec<&str> = part.split_whitespace().collect();
        let mut i = 0;
        while i < words.len() {
            let word = words[i];
            let target = if let Some(at) = word.find('>') {
                let rest = word[at..].trim_start_matches('>');
                if rest.is_empty() {
                    i += 1;
                    words.get(i).copied()
                } else {
                    Some(rest)
                }
            } else if words.first() == Some(&"tee") && i > 0 && !word.starts_with('-') {
                Some(word)
            } else {
                None
            };
            i += 1;
            let Some(target) = target.map(|t| t.trim_matches(['"', '\''])) else { continue };
            let is_file = !target.is_empty()
                && !target.starts_with('&')
                && !target.starts_with("/dev/")
                && !target.contains(['$', '*', '?', '`', '(', ')']);
            if is_file && !targets.iter().any(|t| t == target) {
                targets.push(target.to_string());
            }
        }
    }
    targets
}

/// What a call names, for people: its command, its file(s), else its tool.
pub fn describe(call: &TraceCall) -> String {
    match &call.action {
        Action::Shell { command } => command.clone(),
        Action::WriteFile { path, .. } | Action::EditFile { path, .. } => path.clone(),
        Action::Patch { files, .. } => files.join(", "),
        Action::Read { target } if !target.is_empty() => target.clone(),
        _ => call.tool.clone(),
    }
}

/// The calls of each leg (`legs[i]` is leg `numbers[i]`'s) that repeat a call an earlier
/// leg ran, with the same tool and the same action. A call that never ran (refused,
/// cancelled) repeats nothing and is repeated by nothing; a restated plan is no step.
/// Repeats within one leg are the agent's own business, not the relay's. Each repeating
/// call counts once, against the latest earlier leg that ran it.
pub fn repeated_steps(numbers: &[u32], legs: &[Vec<TraceCall>]) -> Vec<Repeat> {
    let mut repeats = vec![];
    for (index, calls) in legs.iter().enumerate().skip(1) {
        for call in calls.iter().filter(|c| c.outcome.ran() && c.action != Action::Plan) {
            let earlier = (0..index).rev().find(|&e| {
                legs[e].iter().any(|first| {
                    first.outcome.ran() && first.tool == call.tool && first.action == call.action
                })
            });
            if let Some(earlier) = earlier {
                repeats.push(Repeat {
                    leg: numbers.get(index).copied().unwrap_or(index as u32 + 1),
                    of_leg: numbers.get(earlier).copied().unwrap_or(earlier as u32 + 1),
                    tool: call.tool.clone(),
                    what: describe(call),
                    effect: effect_of(&call.action),
                    at: call.at.clone(),
                });
            }
        }
    }
    repeats
}

/// Whether a call counts as a step done: it ran and succeeded, and it is not a plan.
pub fn is_step(call: &TraceCall) -> bool {
    call.outcome == Outcome::Ran && call.action != Action::Plan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(command: &str, outcome: Outcome) -> TraceCall {
        TraceCall {
            tool: "Bash".into(),
            action: Action::Shell { command: command.into() },
            at: None,
            outcome,
        }
    }

    fn write(path: &str, hash: u64) -> TraceCall {
        TraceCall {
            tool: "Write".into(),
            action: Action::WriteFile { path: path.into(), content_hash: hash },
            at: None,
            outcome: Outcome::Ran,
        }
    }

    #[test]
    fn a_command_of_the_previous_leg_run_again_is_a_repeated_side_effect() {
        let leg1 = vec![
            shell("echo step-01 >> steps.log", Outcome::Ran),
            shell("echo step-02 >> steps.log", Outcome::Ran),
        ];
        let leg2 = vec![
            shell("echo step-02 >> steps.log", Outcome::Ran),
            shell("echo step-03 >> steps.log", Outcome::Ran),
        ];
        let repeats = repeated_steps(&[1, 2], &[leg1, leg2]);
        assert_eq!(repeats.len(), 1);
        assert_eq!((repeats[0].leg, repeats[0].of_leg), (2, 1));
        assert_eq!(repeats[0].what, "echo step-02 >> steps.log");
        assert!(repeats[0].is_failure());
    }

    #[test]
    fn nothing_repeated_is_no_repeat() {
        let leg1 = vec![shell("echo step-01 >> steps.log", Outcome::Ran)];
        let leg2 = vec![shell("echo step-02 >> steps.log", Outcome::Ran)];
        assert!(repeated_steps(&[1, 2], &[leg1, leg2]).is_empty());
    }

    #[test]
    fn a_call_that_never_ran_is_no_repeat_either_way() {
        // Refused by the pause in leg 1, run in leg 2: done once.
        let leg1 = vec![shell("echo step-05 >> steps.log", Outcome::NotRun)];
        let leg2 = vec![shell("echo step-05 >> steps.log", Outcome::Ran)];
        assert!(repeated_steps(&[1, 2], &[leg1.clone(), leg2.clone()]).is_empty());
        // Run in leg 1, refused in leg 2.
        let leg2_refused = vec![shell("echo step-05 >> steps.log", Outcome::NotRun)];
        let leg1_ran = vec![shell("echo step-05 >> steps.log", Outcome::Ran)];
        assert!(repeated_steps(&[1, 2], &[leg1_ran, leg2_refused]).is_empty());
    }

    #[test]
    fn the_same_file_written_the_same_way_repeats_and_another_content_does_not() {
        let leg1 = vec![write("/p/a.txt", 1), write("/p/b.txt", 2)];
        let leg2 = vec![write("/p/a.txt", 1), write("/p/b.txt", 3)];
        let repeats = repeated_steps(&[1, 2], &[leg1, leg2]);
        assert_eq!(repeats.iter().map(|r| r.what.as_str()).collect::<Vec<_>>(), ["/p/a.txt"]);
    }

    #[test]
    fn reads_and_checks_repeat_without_failing_and_plans_are_no_steps() {
        let leg1 = vec![shell("cat TODO.md", Outcome::Ran), shell("cargo test", Outcome::Failed)];
        let plan =
            TraceCall { tool: "TodoWrite".into(), action: Action::Plan, at: None, outcome: Outcome::Ran };
        let leg2 = vec![shell("cat TODO.md", Outcome::Ran), shell("cargo test", Outcome::Ran), plan.clone()];
        let leg0 = [plan];
        let repeats = repeated_steps(&[1, 2], &[leg0.iter().chain(&leg1).cloned().collect(), leg2]);
        assert_eq!(repeats.len(), 2);
        assert_eq!(repeats[0].effect, Effect::ReadOnly);
        assert_eq!(repeats[1].effect, Effect::Check);
        assert!(!repeats.iter().any(Repeat::is_failure));
    }

    #[test]
    fn a_repeat_within_a_leg_is_not_the_relays_and_leg_3_may_repeat_leg_1() {
        let leg1 = vec![shell("git commit -m x", Outcome::Ran), shell("git commit -m x", Outcome::Ran)];
        let leg2 = vec![shell("ls", Outcome::Ran)];
        let leg3 = vec![shell("git commit -m x", Outcome::Ran)];
        let repeats = repeated_steps(&[1, 2, 3], &[leg1, leg2, leg3]);
        assert_eq!(repeats.len(), 1);
        assert_eq!((repeats[0].leg, repeats[0].of_leg), (3, 1));
    }

    #[test]
    fn files_a_call_wrote() {
        assert_eq!(
            files_written(&shell("echo a >> steps.log && echo b > 'out.txt' 2>&1", Outcome::Ran)),
            ["steps.log", "out.txt"]
        );
        assert_eq!(files_written(&shell("cat x | tee -a log.txt >/dev/null", Outcome::Ran)), ["log.txt"]);
        assert!(files_written(&shell("echo a >> steps.log", Outcome::NotRun)).is_empty());
        assert_eq!(files_written(&write("/p/a.txt", 1)), ["/p/a.txt"]);
    }

    #[test]
    fn shell_effects() {
        assert_eq!(shell_effect("cat a | grep b && git status"), Effect::ReadOnly);
        assert_eq!(shell_effect("ls > files.txt"), Effect::Changes);
        assert_eq!(shell_effect("echo DONE step-01"), Effect::ReadOnly);
        assert_eq!(shell_effect("echo step-01 >> steps.log && echo DONE"), Effect::Changes);
        assert_eq!(shell_effect("cargo test 2>&1 | tail -5"), Effect::Check);
        assert_eq!(shell_effect("grep x f 2>/dev/null"), Effect::ReadOnly);
        assert_eq!(shell_effect("git commit -am 'step'"), Effect::Changes);
        assert_eq!(shell_effect("rm -rf build"), Effect::Changes);
        assert_eq!(shell_effect("find . -name '*.o' -delete"), Effect::Changes);
        assert_eq!(shell_effect("echo x | tee out.txt"), Effect::Changes);
    }
}
