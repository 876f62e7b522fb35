//! The relay on the real hosts (issue 19): the stand-in agent
//! ([`real_hosts_support::agent`]) works through a 20-step task list, deciding each move
//! only from the request it is sent, while baton pauses it at CRITICAL; under `baton run`
//! each paused leg is followed by a fresh, briefed one. Every step must run exactly once,
//! in order (`steps.log`, which each step's command appends to, and the commands the
//! agent issued), with the permissions a user gives (`--allowedTools`), and no
//! auto-compaction.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::{BRIEF, CRITICAL, Checks, SERVER_LIFETIME};
use crate::common;
use crate::real_hosts_support::agent::{Agent, Move, Obeys, TaskAgent};
use crate::real_hosts_support::server::{Recorded, Server};
use crate::real_hosts_support::{World, with_hosts};

pub(super) const STEPS: u32 = 20;
pub(super) const TASK: &str =
    "Work through the 20-step task list: one shell command per step, then mark the step's task completed.";
/// The tools a user allows for this task (no permission check is skipped).
pub(super) const ALLOWED: &str = "Bash,ToolSearch,TaskCreate,TaskUpdate";
/// The default model of Claude Code 2.1.332, a 1,000,000-token window.
pub(super) const CLAUDE_DEFAULT_MODEL: &str = "claude-opus-5-5";

/// 250k at the start of a context, 85k more per shell result: 675k (warning) after 5
/// steps, 760k (CRITICAL) after 6; the grace calls reach at most 930k, short of Claude
/// Code's auto-compaction (about 33k short of the window).
pub(super) fn new_agent(obeys: Obeys) -> Arc<Agent> {
    Arc::new(Agent::new(TaskAgent { steps: STEPS, base_tokens: 250_000, per_step_tokens: 85_000, obeys }))
}

/// The user's configuration: the window of the model as a fact (in `claude -p` there is no
/// status line to tell it, and a table's window never carries a pause) and `on_critical`.
pub(super) fn user_config(world: &World, on_critical: &str) {
    let config = json!({
        "handoff": {"on_critical": on_critical},
        "models": {CLAUDE_DEFAULT_MODEL: {"window": 1_000_000}},
    });
    common::write(&world.sandbox.user_config(), &config.to_string());
}

pub(super) fn steps_log(world: &World) -> Vec<String> {
    std::fs::read_to_string(world.project().join("steps.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

pub(super) fn expected_log(to: u32) -> Vec<String> {
    (1..=to).map(|n| format!("step-{n:02}")).collect()
}

/// The main requests that open a context (no tool result yet), with their index.
pub(super) fn context_starts(requests: &[Recorded]) -> Vec<usize> {
    requests.iter().enumerate().filter(|(_, r)| r.turn == 0).map(|(i, _)| i).collect()
}

/// Every transcript Claude Code and rollout Codex wrote, as one text (for compaction markers).
pub(super) fn transcripts(world: &World) -> String {
    let mut text = String::new();
    let mut stack = vec![
        world.sandbox.claude_dir().join("projects"),
        world.codex_home().join("sessions"),
        world.sandbox.home().join(".gemini").join("tmp"),
        world.sandbox.home().join(".qwen").join("projects"),
        world.sandbox.home().join(".factory").join("sessions"),
        world.sandbox.home().join(".copilot").join("session-state"),
    ];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                text.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
            }
        }
    }
    text
}

pub(super) fn check_no_compaction_and_permissions(checks: &mut Checks, world: &World, server: &Server) {
    let text = transcripts(world);
    checks.check(
        "no auto-compaction (no compact boundary in any transcript)",
        !text.is_empty()
            && !text.contains("compact_boundary")
            && !text.contains("isCompactSummary\":true")
            && !text.contains("\"type\":\"compacted\"")
            && !text.contains("\"subtype\":\"chat_compression\"")
            && !text.contains("\"type\":\"compaction_state\"")
            && !text.contains("\"type\":\"session.compaction_start\""),
        || format!("transcripts: {} bytes", text.len()),
    );
    // Whatever the host's own marker, a compaction fires its PreCompact (Gemini CLI:
    // PreCompress) and baton's snapshot; a brief from it says "before a compaction".
    let snapshot_briefs =
        server.main_requests().iter().filter(|r| r.text().contains("before a compaction")).count();
    checks.check("no compaction snapshot was briefed", snapshot_briefs == 0, || {
        format!("{snapshot_briefs} requests carry a brief written before a compaction")
    });
    let denied: Vec<String> = server
        .main_requests()
        .iter()
        .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result" && b["is_error"] == json!(true))
        .map(|b| b["content"].to_string())
        .collect();
    checks.check(
        "no tool call was refused or failed (the allowed tools sufficed)",
        denied.is_empty(),
        || format!("{denied:?}"),
    );
}

/// What every relay must show: the task done across at least 3 contexts, every step run
/// once in order, every later leg briefed as leg N in its first request, the summary, no
/// compaction, no refused call; prints the time per hand-over.
/// How the host stops the agent after its grace calls (the requests it makes from the
/// CRITICAL one on, at most).
#[derive(Clone, Copy)]
pub(super) enum StopsBy {
    /// `continue: false` at the last grace call ends the turn (Claude Code): the CRITICAL
    /// request and one per grace call but the last.
    TheLastGraceCall,
    /// `continue: false` at the next call's BeforeTool (Gemini CLI): one more request, whose
    /// call never runs.
    TheNextCall,
    /// The next calls are refused (Codex): one more request per refused call, and the one
    /// that ends the turn.
    RefusingTheNextCalls,
}

impl StopsBy {
    fn most_requests(self) -> usize {
        match self {
            StopsBy::TheLastGraceCall => 3,
            StopsBy::TheNextCall => 4,
            StopsBy::RefusingTheNextCalls => 5,
        }
    }
}

/// What every pause without `baton run` must show: CRITICAL reached the agent; at most 3
/// step commands ran after the one the CRITICAL request answers (the grace calls); the
/// agent was stopped without finishing the task, within the requests the host's way of
/// stopping takes ([`StopsBy`]); and steps.log holds steps 1..N in order, at least
/// `min_steps` of them. Returns N.
pub(super) fn check_stopped_within_grace(
    checks: &mut Checks,
    world: &World,
    agent: &Agent,
    server: &Server,
    run: &crate::real_hosts_support::Run,
    min_steps: u32,
    stops: StopsBy,
) -> u32 {
    let requests = server.main_requests();
    let decisions = agent.decisions();
    let moves = || decisions.iter().map(|d| format!("{}:{:?}", d.done, d.made)).collect::<Vec<_>>().join(" ");
    let critical_at = requests.iter().position(|r| r.text().contains(CRITICAL));
    checks.check("CRITICAL reached the agent", critical_at.is_some(), || {
        format!("{}\n{}", moves(), run.describe())
    });
    let after = critical_at.map(|at| requests.len() - at);
    checks.check(
        "stopped within the requests the host's stop takes after CRITICAL",
        after.is_some_and(|n| n <= stops.most_requests()),
        || format!("{after:?} requests from the CRITICAL one on; {}\n{}", moves(), run.describe()),
    );
    let done_at_critical = critical_at.map(|at| steps_done_in(&requests[at].text()));
    let ran = steps_log(world).len() as u32;
    checks.check(
        "at most the 3 grace calls' steps ran after CRITICAL",
        done_at_critical.is_some_and(|done| ran <= done + 3),
        || format!("{ran} steps ran, {done_at_critical:?} done at CRITICAL; {}", moves()),
    );
    checks.check(
        "the agent did not complete the task (it was stopped)",
        !decisions.iter().any(|d| d.made == Move::Finish(format!("All {STEPS} steps done."))),
        moves,
    );
    eprintln!(
        "real hosts: relay: stopped: exit {:?}; stdout {:?}; stderr {:?}",
        run.status.map(|s| s.code()),
        common_tail(&run.stdout),
        common_tail(&run.stderr)
    );
    let done = steps_log(world).len() as u32;
    checks.check(
        "steps.log so far is steps 1..N in order",
        steps_log(world) == expected_log(done) && done >= min_steps,
        || format!("{:?}", steps_log(world)),
    );
    done
}

/// The highest step a request shows done: the `DONE step-NN` a step's command prints (not
/// the command itself, which a result may quote).
pub(super) fn steps_done_in(text: &str) -> u32 {
    let text = text.replace("echo DONE step-", "");
    text.match_indices("DONE step-")
        .filter_map(|(at, m)| {
            let digits: String = text[at + m.len()..].chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .max()
        .unwrap_or(0)
}

/// How a leg of the relay ends.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum LegEnds {
    /// The host honours the hook's stop and ends the turn (Claude Code).
    ByTheHost,
    /// The host goes on after the stop; `baton run` interrupts it (Codex). A command the
    /// agent issued as the interrupt came may not have run: the next leg issues it again.
    ByTheRelay,
    /// The host ends the turn at the next call, which never runs (Gemini CLI's BeforeTool
    /// stop): the next leg issues that command again.
    BeforeTheNextCall,
}

/// Checks a relay (see above) and returns its hand-overs (seconds).
pub(super) fn check_relay(
    checks: &mut Checks,
    world: &World,
    agent: &Agent,
    server: &Server,
    run: &crate::real_hosts_support::Run,
    ends: LegEnds,
) -> Vec<f64> {
    let requests = server.main_requests();
    let starts = context_starts(&requests);
    let decisions = agent.decisions();
    let moves = || decisions.iter().map(|d| format!("{}:{:?}", d.done, d.made)).collect::<Vec<_>>().join(" ");
    checks.check(
        "baton run exited 0 (the last leg's status)",
        run.status.is_some_and(|s| s.success()),
        || run.describe(),
    );
    checks.check(
        "the task completed",
        decisions.last().is_some_and(|d| d.made == Move::Finish(format!("All {STEPS} steps done."))),
        moves,
    );
    checks.check("at least 3 contexts", starts.len() >= 3, || {
        format!("contexts start at {starts:?}; {}", moves())
    });
    let expected: Vec<u32> = (1..=STEPS).collect();
    let mut issued = agent.bash_steps();
    let issued_twice = if ends != LegEnds::ByTheHost {
        let before = issued.len();
        issued.dedup();
        before - issued.len()
    } else {
        0
    };
    checks.check(
        "every step's command was issued once, in order (one the leg's end kept from running again in the next leg)",
        issued == expected && issued_twice < starts.len(),
        || format!("{:?}\n{}", agent.bash_steps(), moves()),
    );
    let log = steps_log(world);
    checks.check("steps.log: every step ran exactly once, in order", log == expected_log(STEPS), || {
        format!("{log:?}")
    });
    for (leg, at) in starts.iter().enumerate().skip(1) {
        let text = requests[*at].text();
        let leg = leg + 1;
        checks.check(
            &format!("leg {leg} started with the brief in its first request"),
            text.contains(BRIEF) && text.contains(&format!("This is leg {leg} of a relay")),
            || {
                text.find(BRIEF)
                    .map(|i| text[i..].chars().take(1500).collect())
                    .unwrap_or_else(|| "no brief".into())
            },
        );
    }
    let summary = run.stderr.lines().rev().find(|l| l.starts_with("baton run: ") && l.contains(" legs;"));
    checks.check(
        "the summary names the legs and ends unpaused",
        summary.is_some_and(|s| {
            s.contains(&format!("{} legs", starts.len()))
                && s.ends_with("the last leg ended without a pause.")
        }),
        || run.stderr.clone(),
    );
    check_no_compaction_and_permissions(checks, world, server);
    super::relay_report::check_relay_report(checks, world, starts.len());
    // Time per hand-over: the last request of a leg to the first of the next.
    let gaps: Vec<f64> = starts
        .iter()
        .skip(1)
        .map(|at| (requests[*at].millis - requests[at - 1].millis) as f64 / 1000.0)
        .collect();
    eprintln!(
        "real hosts: relay: {} legs, {} main requests in {:.1} s; hand-over (last request of a leg to the first of the next): {:?} s",
        starts.len(),
        requests.len(),
        run.seconds,
        gaps
    );
    gaps
}

#[test]
fn baton_run_claude_print_relays_twenty_steps_across_contexts() {
    with_hosts("relay: baton run claude -p", |hosts| {
        let mut checks = Checks::new("relay: baton run claude -p");
        let world = World::new(hosts);
        world.claude_setup();
        user_config(&world, "relay");
        let agent = new_agent(Obeys::EvenLegs);
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        let claude = hosts.claude.display().to_string();
        let args =
            ["run", "--", claude.as_str(), "-p", "--allowedTools", ALLOWED, "--output-format", "json", TASK];
        let run =
            world.run(Path::new(common::BATON), &args, &world.claude_env(&server), Duration::from_secs(240));
        world.save_requests(&server, "relay-claude-print");
        eprintln!("real hosts: relay: baton run stderr:\n{}", run.stderr.trim_end());
        check_relay(&mut checks, &world, &agent, &server, &run, LegEnds::ByTheHost);
        checks.finish();
    });
}

#[test]
fn claude_print_is_stopped_within_the_grace_calls_and_continue_resumes() {
    with_hosts("relay: claude -p pause", |hosts| {
        let mut checks = Checks::new("relay: claude -p pause");
        let world = World::new(hosts);
        world.claude_setup();
        user_config(&world, "pause");
        let agent = new_agent(Obeys::Never);
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        let run = world.run(
            &hosts.claude,
            &["-p", "--allowedTools", ALLOWED, "--output-format", "json", TASK],
            &world.claude_env(&server),
            Duration::from_secs(120),
        );
        world.save_requests(&server, "pause-claude-print");
        let stopped_after = check_stopped_within_grace(
            &mut checks,
            &world,
            &agent,
            &server,
            &run,
            5,
            StopsBy::TheLastGraceCall,
        );
        let result: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap_or_default();
        checks.check(
            "claude -p exited 0, ended by the hook",
            run.status.is_some_and(|s| s.success()) && result["terminal_reason"] == "hook_stopped",
            || run.describe(),
        );
        let state_dir = world.sandbox.state_dir();
        let paused = sessions_paused(&state_dir);
        checks.check("the session state records the pause", paused, || format!("{}", state_dir.display()));
        drop(server);

        // "continue" in a fresh session (what `/clear` + continue does): briefed, it carries on.
        let agent2 = new_agent(Obeys::Never);
        let server = Server::with_agent(Arc::clone(&agent2), SERVER_LIFETIME);
        let _run = world.run(
            &hosts.claude,
            &["-p", "--allowedTools", ALLOWED, "--output-format", "json", "continue"],
            &world.claude_env(&server),
            Duration::from_secs(120),
        );
        world.save_requests(&server, "pause-claude-print-continue");
        let first = server.main_requests().first().map(|r| r.text()).unwrap_or_default();
        checks.check("the next session's first request has the brief", first.contains(BRIEF), || {
            first.chars().take(600).collect()
        });
        let next = agent2.bash_steps();
        checks.check(
            "it carries on from the first step not done",
            next.first() == Some(&(stopped_after + 1)),
            || format!("{next:?} after {stopped_after}"),
        );
        checks.finish();
    });
}

fn sessions_paused(dir: &Path) -> bool {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if std::fs::read_to_string(&p).is_ok_and(|t| t.contains("pausedAt")) {
                return true;
            }
        }
    }
    false
}

pub(super) fn common_tail(text: &str) -> String {
    crate::real_hosts_support::tail(text, 400).to_string()
}

// ---- Codex ----

/// Codex works with 190,000 of the configured 200,000 tokens and compacted at 187k in a
/// first run (not at 173k): 110k at the start of a context, 7k per shell result: 124k
/// (warning) after 2 steps, 145k (CRITICAL) after 5; the 3 grace calls reach at most 166k.
fn codex_agent(obeys: Obeys) -> Arc<Agent> {
    Arc::new(Agent::new(TaskAgent { steps: STEPS, base_tokens: 110_000, per_step_tokens: 7_000, obeys }))
}

/// A `codex` on PATH for `baton run` (it names the host by the program's name): the
/// pinned CLI through node.
pub(super) fn codex_command(world: &World) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = world.root().join("bin").join("codex");
    let node = world.hosts.node_dir.join("node");
    common::write(
        &path,
        &format!("#!/bin/sh\nexec {} {} \"$@\"\n", node.display(), world.hosts.codex.display()),
    );
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod codex");
    path
}

/// What the user allows Codex: the workspace (its sandbox), hooks trusted (in real use
/// once by the user; the flag stands in for that here).
pub(super) const CODEX_ARGS: [&str; 5] =
    ["exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", "-s", "workspace-write"];

pub(super) fn codex_env() -> Vec<(&'static str, String)> {
    vec![("STANDIN_API_KEY", "stand-in".to_string())]
}

/// The next session after a pause (what `/clear` + "continue" does): its first request
/// carries the brief, and the agent carries on from the first step not done.
pub(super) fn check_continue_resumes(
    checks: &mut Checks,
    server: &Server,
    agent: &Agent,
    stopped_after: u32,
) {
    let first = server.main_requests().first().map(|r| r.text()).unwrap_or_default();
    checks.check("the next session's first request has the brief", first.contains(BRIEF), || {
        first.chars().take(600).collect()
    });
    let next = agent.bash_steps();
    checks.check(
        "it carries on from the first step not done",
        next.first() == Some(&(stopped_after + 1)),
        || format!("{next:?} after {stopped_after}"),
    );
}

/// Codex 0.171.0 has no hook output that ends a turn: after the grace calls baton refuses
/// every call of the turn (PreToolUse deny), and the agent, refused, ends it.
#[test]
fn codex_exec_is_stopped_within_the_grace_calls() {
    with_hosts("relay: codex exec pause", |hosts| {
        let mut checks = Checks::new("relay: codex exec pause");
        let world = World::new(hosts);
        // Far from Codex's compaction: CRITICAL at 35 % used (72k), the grace calls up to 93k.
        let agent = Arc::new(Agent::new(TaskAgent {
            steps: STEPS,
            base_tokens: 30_000,
            per_step_tokens: 7_000,
            obeys: Obeys::Never,
        }));
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        world.codex_setup(&server);
        common::write(
            &world.sandbox.user_config(),
            r#"{"handoff": {"on_critical": "pause"}, "warn_remaining": 75, "critical_remaining": 65}"#,
        );
        let codex = codex_command(&world);
        let mut args: Vec<&str> = CODEX_ARGS.to_vec();
        args.push(TASK);
        let run = world.run(&codex, &args, &codex_env(), Duration::from_secs(120));
        world.save_requests(&server, "pause-codex-exec");
        let stopped_after = check_stopped_within_grace(
            &mut checks,
            &world,
            &agent,
            &server,
            &run,
            4,
            StopsBy::RefusingTheNextCalls,
        );
        let last = server.main_requests().last().map(|r| r.text()).unwrap_or_default();
        checks.check("the agent read baton's refusal", last.contains("baton refused this call"), || {
            common_tail(&last)
        });
        checks.check(
            "codex exec exited 0 and told the user why and what next",
            run.status.is_some_and(|s| s.success())
                && run.stderr.contains("baton: context")
                && run.stderr.contains("/clear"),
            || run.describe(),
        );
        let old_url = server.base_url();
        drop(server);

        // "continue" in a fresh session, against a fresh stand-in.
        let agent2 = Arc::new(Agent::new(agent.settings.clone()));
        let server = Server::with_agent(Arc::clone(&agent2), SERVER_LIFETIME);
        let config = world.codex_home().join("config.toml");
        let text = std::fs::read_to_string(&config).unwrap_or_default().replace(&old_url, &server.base_url());
        common::write(&config, &text);
        let mut args: Vec<&str> = CODEX_ARGS.to_vec();
        args.push("continue");
        let _run = world.run(&codex, &args, &codex_env(), Duration::from_secs(120));
        world.save_requests(&server, "pause-codex-exec-continue");
        check_continue_resumes(&mut checks, &server, &agent2, stopped_after);
        checks.finish();
    });
}

#[test]
fn baton_run_codex_exec_relays_twenty_steps_across_contexts() {
    with_hosts("relay: baton run codex exec", |hosts| {
        let mut checks = Checks::new("relay: baton run codex exec");
        let world = World::new(hosts);
        let agent = codex_agent(Obeys::EvenLegs);
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        world.codex_setup(&server);
        common::write(&world.sandbox.user_config(), r#"{"handoff": {"on_critical": "relay"}}"#);
        let codex = codex_command(&world).display().to_string();
        let mut args: Vec<&str> = vec!["run", "--", codex.as_str()];
        args.extend(CODEX_ARGS);
        args.push(TASK);
        let run = world.run(Path::new(common::BATON), &args, &codex_env(), Duration::from_secs(240));
        world.save_requests(&server, "relay-codex-exec");
        eprintln!("real hosts: relay: baton run codex stderr (tail):\n{}", common_tail(&run.stderr));
        check_relay(&mut checks, &world, &agent, &server, &run, LegEnds::ByTheRelay);
        checks.finish();
    });
}

// ---- Gemini CLI ----

/// Gemini CLI's window is baton's table's (1,048,576): the user states it as a fact. Its
/// compression point is moved to 0.9 of the window (943k) by the world's settings: 520k at
/// the start, 45k per shell result: 790k (CRITICAL) after 6 steps, at most 925k.
fn gemini_agent(obeys: Obeys) -> Arc<Agent> {
    Arc::new(Agent::new(TaskAgent { steps: STEPS, base_tokens: 520_000, per_step_tokens: 45_000, obeys }))
}

/// The user's configuration: `on_critical`, and with `window_stated` the model's window as a
/// fact (baton's table's alone carries no pause).
pub(super) fn gemini_config(world: &World, on_critical: &str, window_stated: bool) {
    let mut config = json!({"handoff": {"on_critical": on_critical}});
    if window_stated {
        config["models"] = json!({crate::real_hosts_support::GEMINI_MODEL: {"window": crate::real_hosts_support::GEMINI_WINDOW}});
    }
    common::write(&world.sandbox.user_config(), &config.to_string());
    // The user's permission for the task's commands (`echo … >> steps.log && echo …`):
    // `--allowed-tools run_shell_command(echo)` alone allows no redirection, and Gemini CLI
    // 0.61.0 refuses what would need a confirmation in `-p`. A user policy rule says so.
    common::write(
        &world.sandbox.home().join(".gemini/policies/baton-relay-task.toml"),
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"echo\"\ndecision = \"allow\"\npriority = 500\nallowRedirection = true\n",
    );
}

/// A `gemini` on PATH for `baton run`: the pinned CLI through node.
pub(super) fn gemini_command(world: &World) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = world.root().join("bin").join("gemini");
    let node = world.hosts.node_dir.join("node");
    common::write(
        &path,
        &format!("#!/bin/sh\nexec {} {} \"$@\"\n", node.display(), world.hosts.gemini.display()),
    );
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod gemini");
    path
}

/// The user's permissions: `echo` through the shell tool allowed, no `--yolo`.
pub(super) const GEMINI_ARGS: [&str; 5] = [
    "-m",
    crate::real_hosts_support::GEMINI_MODEL,
    "--allowed-tools",
    "run_shell_command(echo)",
    "--skip-trust",
];

pub(super) fn gemini_env(server: &Server) -> Vec<(&'static str, String)> {
    vec![
        ("GOOGLE_GEMINI_BASE_URL", server.base_url()),
        ("GEMINI_API_KEY", "stand-in".to_string()),
        ("GEMINI_CLI_TRUST_WORKSPACE", "true".to_string()),
    ]
}

/// Gemini CLI 0.61.0 ends the turn on a BeforeTool `continue: false`, before the call runs.
#[test]
fn gemini_print_is_stopped_within_the_grace_calls() {
    with_hosts("relay: gemini -p pause", |hosts| {
        let mut checks = Checks::new("relay: gemini -p pause");
        let world = World::new(hosts);
        world.gemini_setup();
        gemini_config(&world, "pause", true);
        let agent = gemini_agent(Obeys::Never);
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        let gemini = gemini_command(&world);
        let mut args: Vec<&str> = GEMINI_ARGS.to_vec();
        args.extend(["-p", TASK]);
        let run = world.run(&gemini, &args, &gemini_env(&server), Duration::from_secs(120));
        world.save_requests(&server, "pause-gemini-print");
        let stopped_after =
            check_stopped_within_grace(&mut checks, &world, &agent, &server, &run, 4, StopsBy::TheNextCall);
        checks.check(
            "gemini -p exited 0 and told the user why and what next",
            run.status.is_some_and(|s| s.success())
                && run.stderr.contains("Agent execution stopped")
                && run.stderr.contains("baton: context")
                && run.stderr.contains("/clear"),
            || run.describe(),
        );
        drop(server);

        let agent2 = gemini_agent(Obeys::Never);
        let server = Server::with_agent(Arc::clone(&agent2), SERVER_LIFETIME);
        let mut args: Vec<&str> = GEMINI_ARGS.to_vec();
        args.extend(["-p", "continue"]);
        let _run = world.run(&gemini, &args, &gemini_env(&server), Duration::from_secs(120));
        world.save_requests(&server, "pause-gemini-print-continue");
        check_continue_resumes(&mut checks, &server, &agent2, stopped_after);
        checks.finish();
    });
}

/// Each leg ends as in `gemini -p` alone: the BeforeTool stop after the grace calls.
#[test]
fn baton_run_gemini_print_relays_twenty_steps_across_contexts() {
    with_hosts("relay: baton run gemini -p", |hosts| {
        let mut checks = Checks::new("relay: baton run gemini -p");
        let world = World::new(hosts);
        world.gemini_setup();
        gemini_config(&world, "relay", true);
        let agent = gemini_agent(Obeys::EvenLegs);
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        let gemini = gemini_command(&world).display().to_string();
        let mut args: Vec<&str> = vec!["run", "--", gemini.as_str()];
        args.extend(GEMINI_ARGS);
        args.extend(["-p", TASK]);
        let run = world.run(Path::new(common::BATON), &args, &gemini_env(&server), Duration::from_secs(240));
        world.save_requests(&server, "relay-gemini-print");
        eprintln!("real hosts: relay: baton run gemini stderr (tail):\n{}", common_tail(&run.stderr));
        check_relay(&mut checks, &world, &agent, &server, &run, LegEnds::BeforeTheNextCall);
        checks.finish();
    });
}

// ---- An agent that stops by itself (issue 31) ----

/// `baton run` with an agent that does as the CRITICAL warning asks: it ends its turn by
/// itself and never reaches baton's stop. With the user's defaults nothing states the
/// model's window as a fact (no status line in `-p`; baton's table for Gemini's), so no
/// pause is armed: each leg is paused by its CRITICAL handoff, still pending when it ends.
fn relay_an_agent_that_stops_by_itself(
    name: &'static str,
    hosts: &crate::real_hosts_support::Hosts,
    gemini: bool,
) {
    let mut checks = Checks::new(name);
    let world = World::new(hosts);
    let (agent, program, mut args, env) = if gemini {
        world.gemini_setup();
        gemini_config(&world, "pause", false);
        let agent = gemini_agent(Obeys::Always);
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        let mut args: Vec<String> = GEMINI_ARGS.iter().map(|a| a.to_string()).collect();
        args.extend(["-p".to_string(), TASK.to_string()]);
        (agent, gemini_command(&world), args, (gemini_env(&server), server))
    } else {
        world.claude_setup();
        let agent = new_agent(Obeys::Always);
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        let args =
            ["-p", "--allowedTools", ALLOWED, "--output-format", "json", TASK].map(str::to_string).to_vec();
        (agent, hosts.claude.clone(), args, (world.claude_env(&server), server))
    };
    let (env, server) = env;
    let mut all = vec!["run".to_string(), "--".to_string(), program.display().to_string()];
    all.append(&mut args);
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let run = world.run(Path::new(common::BATON), &all, &env, Duration::from_secs(240));
    world.save_requests(&server, "relay-stops-by-itself");
    eprintln!("real hosts: relay: {name} stderr (tail):\n{}", common_tail(&run.stderr));
    let requests = server.main_requests();
    let told_critical = requests.iter().filter(|r| r.text().contains(CRITICAL)).count();
    checks.check("CRITICAL reached the agent", told_critical > 0, || run.describe());
    checks.check(
        "no leg was stopped by baton (the agent ended each turn itself)",
        !run.stderr.contains("stopped by the pause") && !run.stderr.contains(", paused,"),
        || run.stderr.clone(),
    );
    check_relay(&mut checks, &world, &agent, &server, &run, LegEnds::ByTheHost);
    checks.finish();
}

#[test]
fn baton_run_claude_print_continues_after_an_agent_that_stopped_by_itself() {
    with_hosts("relay: baton run claude -p, an agent that stops by itself", |hosts| {
        relay_an_agent_that_stops_by_itself(
            "relay: baton run claude -p, an agent that stops by itself",
            hosts,
            false,
        );
    });
}

#[test]
fn baton_run_gemini_print_continues_after_an_agent_that_stopped_by_itself() {
    with_hosts("relay: baton run gemini -p, an agent that stops by itself", |hosts| {
        relay_an_agent_that_stops_by_itself(
            "relay: baton run gemini -p, an agent that stops by itself",
            hosts,
            true,
        );
    });
}
