//! The interactive relay on the real Claude Code (issue 19): `baton run claude …` in tmux,
//! the first prompt typed as a user would, the stand-in playing the 20-step task agent of
//! `relay.rs`. baton pauses each context at CRITICAL; once Claude Code is idle at its
//! prompt, baton's countdown line shows on the pane and baton types `/clear` and
//! "continue" into the pty. Every step must run exactly once, in order, across at least 3
//! contexts, each later one briefed as leg N in its first request, with no compaction
//! and only the tools the user allowed.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::relay::{ALLOWED, STEPS, TASK, context_starts, new_agent, steps_log, transcripts, user_config};
use super::{BRIEF, Checks, SERVER_LIFETIME};
use crate::common;
use crate::real_hosts_support::agent::{Agent, Move, Obeys, TaskAgent};
use crate::real_hosts_support::server::{Fault, FaultPlan, Server};
use crate::real_hosts_support::{self, Tmux, World, with_hosts};

/// The countdown line's words (the figure and the seconds vary).
const COUNTDOWN: &str = "continuing in a fresh context in";

/// `baton run -- claude --allowedTools …` in tmux, the task typed once its prompt shows.
/// baton's stderr (the summary) and exit status go to files, kept after the pane is gone.
struct Session {
    tmux: Tmux,
    err: std::path::PathBuf,
    status: std::path::PathBuf,
}

fn start(checks: &mut Checks, world: &World, server: &Server) -> Option<Session> {
    start_with(checks, world, server, &[], |_| {})
}

/// [`start`] with `flags` before the host command and the host's environment changed by
/// `env_of` (a subscription login in place of the API key).
fn start_with(
    checks: &mut Checks,
    world: &World,
    server: &Server,
    flags: &[&str],
    env_of: impl FnOnce(&mut Vec<(&'static str, String)>),
) -> Option<Session> {
    if !real_hosts_support::tmux_available()
        && real_hosts_support::mode() != real_hosts_support::Mode::Required
    {
        real_hosts_support::skipped("relay: baton run claude interactive", "tmux is not on PATH");
        return None;
    }
    world.claude_setup();
    user_config(world, "relay");
    let mut env = world.env();
    let mut host_env = world.claude_env(server);
    env_of(&mut host_env);
    env.extend(host_env.into_iter().map(|(k, v)| (k.to_string(), v)));
    let err = world.root().join("baton-run.stderr");
    let status = world.root().join("baton-run.status");
    let script = format!(
        "'{}' run {} -- '{}' --allowedTools {ALLOWED} 2>'{}'; echo $? >'{}'",
        common::BATON,
        flags.join(" "),
        world.hosts.claude.display(),
        err.display(),
        status.display()
    );
    let tmux = match Tmux::start(world, &env, Path::new("/bin/sh"), &["-c", &script]) {
        Ok(tmux) => tmux,
        Err(reason) => panic!("tmux: {reason}"),
    };
    let ready = tmux.wait_for(Duration::from_secs(40), |pane| {
        pane.contains("for shortcuts") || pane.contains("\u{276f}")
    });
    checks.check("claude started under baton run (prompt shown)", ready, || tmux.pane());
    std::thread::sleep(Duration::from_secs(2));
    let sent = tmux.type_line(TASK, || !server.main_requests().is_empty());
    checks.check("first prompt submitted", sent, || tmux.pane());
    Some(Session { tmux, err, status })
}

#[test]
fn baton_run_claude_interactive_relays_twenty_steps_across_contexts() {
    with_hosts("relay: baton run claude (interactive, tmux)", |hosts| {
        let mut checks = Checks::new("relay: baton run claude interactive");
        let world = World::new(hosts);
        let agent = new_agent(Obeys::EvenLegs);
        let server = Server::with_agent(Arc::clone(&agent), Duration::from_secs(400));
        let Some(Session { tmux, err, status }) = start(&mut checks, &world, &server) else { return };
        // From the first prompt on.
        let started = Instant::now();
        // Until the agent finishes: the countdown lines seen on the pane.
        let mut countdowns: Vec<String> = vec![];
        let done = || {
            agent
                .decisions()
                .last()
                .is_some_and(|d| matches!(d.made, Move::Finish(ref t) if t.contains("All 20")))
        };
        // Stalled: no request for 60 s (the hand-over never came), or baton is gone.
        let mut seen = (0, Instant::now());
        tmux.wait_for(Duration::from_secs(300), |pane| {
            for line in pane.lines().filter(|l| l.contains(COUNTDOWN)) {
                let line = line.trim().to_string();
                if !countdowns.contains(&line) {
                    countdowns.push(line);
                }
            }
            let count = server.main_requests().len();
            if count != seen.0 {
                seen = (count, Instant::now());
            }
            done() || status.exists() || seen.1.elapsed() > Duration::from_secs(60)
        });
        let finished = done();
        let seconds = started.elapsed().as_secs_f64();
        let pane = tmux.pane();
        let _ = std::fs::write(world.root().join("logs-pane.txt"), &pane);
        world.save_requests(&server, "relay-claude-interactive");
        checks.check("the task completed", finished, || {
            let moves: Vec<String> =
                agent.decisions().iter().map(|d| format!("{}:{:?}", d.done, d.made)).collect();
            format!("{}\n{pane}", moves.join(" "))
        });
        // A leg that crossed CRITICAL and finished the task within its grace calls still has
        // its handoff pending: baton hands over once more (countdown, a fresh leg that finds
        // nothing left and says so). The user types `/exit` only once that has settled: no new
        // request for 12 s after the last finish.
        if finished {
            let mut settled = (server.main_requests().len(), Instant::now());
            tmux.wait_for(Duration::from_secs(120), |_| {
                let count = server.main_requests().len();
                if count != settled.0 {
                    settled = (count, Instant::now());
                }
                status.exists() || (done() && settled.1.elapsed() > Duration::from_secs(12))
            });
        }
        // The user ends the session; baton prints its summary and exits with the host's status.
        std::thread::sleep(Duration::from_secs(2));
        tmux.type_line("/exit", || status.exists());
        let exited = tmux.wait_for(Duration::from_secs(20), |_| status.exists());
        let stderr = std::fs::read_to_string(&err).unwrap_or_default();
        let code = std::fs::read_to_string(&status).unwrap_or_default();
        drop(tmux);
        checks.check("baton run exited 0 after /exit", exited && code.trim() == "0", || {
            format!("status {code:?}\n{stderr}")
        });

        let requests = server.main_requests();
        let starts = context_starts(&requests);
        checks.check("at least 3 contexts", starts.len() >= 3, || format!("contexts start at {starts:?}"));
        checks.check(
            "the countdown line was shown on the pane",
            countdowns.iter().any(|l| l.contains("any key cancels") && l.starts_with("baton: context ")),
            || format!("{countdowns:?}"),
        );
        let expected: Vec<u32> = (1..=STEPS).collect();
        checks.check(
            "every step's command was issued once, in order",
            agent.bash_steps() == expected,
            || format!("{:?}", agent.bash_steps()),
        );
        let log = steps_log(&world);
        let want: Vec<String> = (1..=STEPS).map(|n| format!("step-{n:02}")).collect();
        checks.check("steps.log: every step ran exactly once, in order", log == want, || format!("{log:?}"));
        for (leg, at) in starts.iter().enumerate().skip(1) {
            let text = requests[*at].text();
            let leg = leg + 1;
            checks.check(
                &format!("leg {leg} started with the brief in its first request"),
                text.contains(BRIEF) && text.contains(&format!("This is leg {leg} of a relay")),
                || text.chars().take(1500).collect(),
            );
        }
        let summary = stderr.lines().rev().find(|l| l.starts_with("baton run: ") && l.contains(" legs;"));
        checks.check(
            "the summary names the legs and ends unpaused",
            summary.is_some_and(|s| {
                s.contains(&format!("{} legs", starts.len()))
                    && s.ends_with("the last leg ended without a pause.")
            }),
            || stderr.clone(),
        );
        let text = transcripts(&world);
        checks.check(
            "no auto-compaction (no compact boundary in any transcript)",
            !text.is_empty()
                && !text.contains("compact_boundary")
                && !text.contains("isCompactSummary\":true"),
            || format!("transcripts: {} bytes", text.len()),
        );
        let snapshot_briefs = requests.iter().filter(|r| r.text().contains("before a compaction")).count();
        checks.check("no compaction snapshot was briefed", snapshot_briefs == 0, || {
            format!("{snapshot_briefs}")
        });
        let denied: Vec<String> = requests
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
        let gaps: Vec<f64> = starts
            .iter()
            .skip(1)
            .map(|at| (requests[*at].millis - requests[at - 1].millis) as f64 / 1000.0)
            .collect();
        eprintln!(
            "real hosts: relay interactive: {} legs, {} main requests in {seconds:.1} s; hand-over (last request of a leg to the first of the next, countdown included): {gaps:?} s; countdown lines seen: {countdowns:?}; summary: {summary:?}",
            starts.len(),
            requests.len(),
        );
        checks.finish();
    });
}

/// A key pressed during the countdown, on the real Claude Code: the hand-over is
/// cancelled (the pane says so), nothing is typed, no fresh context starts, and the key
/// does not reach Claude Code's prompt.
#[test]
fn a_key_during_the_countdown_cancels_on_claude_code() {
    with_hosts("relay: countdown cancelled (interactive, tmux)", |hosts| {
        let mut checks = Checks::new("relay: countdown cancelled");
        let world = World::new(hosts);
        let agent = new_agent(Obeys::Never);
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        let Some(Session { tmux, err, status }) = start(&mut checks, &world, &server) else { return };
        let counting = tmux.wait_for(Duration::from_secs(120), |pane| pane.contains("any key cancels"));
        checks.check("the countdown line showed", counting, || tmux.pane());
        let _ = std::process::Command::new("tmux")
            .arg("-S")
            .arg(world.root().join("tmux.sock"))
            .args(["send-keys", "-t", "0", "-l", "q"])
            .status();
        let cancelled = tmux.wait_for(Duration::from_secs(10), |pane| {
            pane.contains("hand-over cancelled (a key was pressed)")
        });
        checks.check("the pane says the hand-over is cancelled", cancelled, || tmux.pane());
        std::thread::sleep(Duration::from_secs(8));
        let pane = tmux.pane();
        let requests = server.main_requests();
        checks.check("no fresh context started", context_starts(&requests).len() == 1, || {
            format!("contexts start at {:?}", context_starts(&requests))
        });
        checks.check(
            "the cancelling key did not reach Claude Code's prompt",
            !pane.lines().any(|l| l.trim_start().starts_with("\u{276f} q")),
            || pane.clone(),
        );
        tmux.type_line("/exit", || status.exists());
        let exited = tmux.wait_for(Duration::from_secs(20), |_| status.exists());
        let stderr = std::fs::read_to_string(&err).unwrap_or_default();
        drop(tmux);
        checks.check(
            "the summary: 1 leg, the host exited with its context paused",
            exited
                && stderr.lines().any(|l| {
                    l.starts_with("baton run: 1 leg;") && l.contains("exited with its context paused")
                }),
            || stderr.clone(),
        );
        checks.finish();
    });
}

/// A context that never nears CRITICAL: 30k at the start, 2k per shell result.
fn small_agent() -> Arc<Agent> {
    Arc::new(Agent::new(TaskAgent {
        steps: STEPS,
        base_tokens: 30_000,
        per_step_tokens: 2_000,
        obeys: Obeys::Never,
    }))
}

/// A usage limit mid-task on the real Claude Code (issue 34), on a subscription login:
/// Claude Code ends the turn on the 429 and records the exact reset; baton writes the
/// handoff from facts, shows on the pane that it waits and until when, sends nothing until
/// the reset, then types `/clear` and "continue": a fresh context briefed from the handoff
/// completes the task, every step once. `baton report --relay` lists the first leg as
/// ended at the usage limit, with its wait.
#[test]
fn baton_run_claude_interactive_waits_for_a_usage_limits_reset() {
    with_hosts("relay: usage limit (interactive, tmux)", |hosts| {
        let mut checks = Checks::new("relay: usage limit interactive");
        let world = World::new(hosts);
        let agent = small_agent();
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        // The 12th request (step 5's result) refused for 20 s.
        server.plan_fault(FaultPlan {
            fault: Fault::UsageLimit,
            at_main: 12,
            lasting: Some(Duration::from_secs(20)),
        });
        // A subscription login: Claude Code stops at a usage limit at once (with an API key
        // it retries a 429 for minutes by itself).
        let Some(Session { tmux, err, status }) = start_with(&mut checks, &world, &server, &[], |env| {
            env.retain(|(k, _)| *k != "ANTHROPIC_API_KEY");
            env.push(("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-stand-in".to_string()));
        }) else {
            return;
        };
        let done = || {
            agent
                .decisions()
                .last()
                .is_some_and(|d| matches!(d.made, Move::Finish(ref t) if t.contains("All 20")))
        };
        let mut waiting_lines: Vec<String> = vec![];
        let mut panes = String::new();
        let mut seen = (0, Instant::now());
        tmux.wait_for(Duration::from_secs(240), |pane| {
            for line in pane.lines().filter(|l| l.contains("waiting for the reset until")) {
                let line = line.trim().to_string();
                if !waiting_lines.contains(&line) {
                    waiting_lines.push(line);
                    panes.push_str(pane);
                }
            }
            let count = server.main_requests().len();
            if count != seen.0 {
                seen = (count, Instant::now());
            }
            done() || status.exists() || seen.1.elapsed() > Duration::from_secs(60)
        });
        let finished = done();
        // Settled: no request for 12 s (Claude Code's own resume, 30 to 90 s after the reset,
        // did not come into the fresh context in a run watched until 100 s after it).
        let mut settled = (server.main_requests().len(), Instant::now());
        tmux.wait_for(Duration::from_secs(60), |_| {
            let count = server.main_requests().len();
            if count != settled.0 {
                settled = (count, Instant::now());
            }
            status.exists() || settled.1.elapsed() > Duration::from_secs(12)
        });
        let pane = tmux.pane();
        let _ = std::fs::write(world.root().join("logs-pane.txt"), format!("{panes}\n=====\n{pane}"));
        world.save_requests(&server, "relay-claude-interactive-usage-limit");
        std::thread::sleep(Duration::from_secs(2));
        tmux.type_line("/exit", || status.exists());
        let exited = tmux.wait_for(Duration::from_secs(20), |_| status.exists());
        let stderr = std::fs::read_to_string(&err).unwrap_or_default();
        let code = std::fs::read_to_string(&status).unwrap_or_default();
        drop(tmux);
        eprintln!(
            "real hosts: relay usage limit interactive: pane lines {waiting_lines:?}\nstderr: {stderr}\n{}",
            server.summary()
        );
        checks.check("the task completed", finished, || format!("{:?}\n{pane}", agent.bash_steps()));
        checks.check("baton run exited 0 after /exit", exited && code.trim() == "0", || {
            format!("status {code:?}\n{stderr}")
        });
        let expected: Vec<u32> = (1..=STEPS).collect();
        checks.check(
            "every step's command was issued once, in order",
            agent.bash_steps() == expected,
            || format!("{:?}", agent.bash_steps()),
        );
        let log = steps_log(&world);
        let want: Vec<String> = (1..=STEPS).map(|n| format!("step-{n:02}")).collect();
        checks.check("steps.log: every step ran exactly once, in order", log == want, || format!("{log:?}"));
        let played = server.faults_played();
        let requests = server.main_requests();
        let refused = requests.iter().filter(|r| r.refused).count();
        checks.check("the usage limit refused one request (the host's own)", refused == 1, || {
            format!("{refused} refused; {played:?}\n{}", server.summary())
        });
        let (start_ms, reset_ms) = played.first().map_or((0, 0), |p| (p.start_ms, p.end_ms.unwrap_or(0)));
        let early =
            requests.iter().filter(|r| !r.refused && r.millis > start_ms && r.millis < reset_ms).count();
        checks.check("no request before the reset", early == 0, || server.summary());
        checks.check(
            "the pane said baton waits for the reset, and until when",
            waiting_lines.iter().any(|l| l.starts_with("baton: usage limit") && l.contains("until ")),
            || format!("{waiting_lines:?}\n{pane}"),
        );
        let starts = context_starts(&requests.iter().filter(|r| !r.refused).cloned().collect::<Vec<_>>());
        let answered: Vec<_> = requests.iter().filter(|r| !r.refused).cloned().collect();
        checks.check("a second context continued the task", starts.len() == 2, || server.summary());
        for at in starts.iter().skip(1) {
            let text = answered[*at].text();
            checks.check(
                "leg 2 started with the brief in its first request",
                text.contains(BRIEF) && text.contains("This is leg 2 of a relay"),
                || text.chars().take(1500).collect(),
            );
        }
        let resumed_by_host = requests.iter().filter(|r| r.text().contains("usage limit has reset")).count();
        checks.check(
            "Claude Code's own resume did not continue the task a second time",
            resumed_by_host == 0,
            || server.summary(),
        );
        super::relay_report::check_report_after_fault(&mut checks, &world, "usage_limit", 0);
        let report = world.run(
            Path::new(common::BATON),
            &["report", "--relay", "--json"],
            &[],
            Duration::from_secs(60),
        );
        let report: serde_json::Value = serde_json::from_str(&report.stdout).unwrap_or_default();
        let waits: Vec<f64> = report["legs"][0]["waits"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|w| w["seconds"].as_f64())
            .collect();
        checks.check(
            "baton report --relay: leg 1's wait for the reset",
            waits.len() == 1 && waits[0] >= 5.0,
            || format!("{}", report["legs"]),
        );
        checks.finish();
    });
}

/// `--wait-limit 0` in the interactive pane: at the usage limit the pane says baton does
/// not wait, nothing is typed, and the user's `/exit` ends the run with exit 4 and the line
/// saying how to go on.
#[test]
fn baton_run_claude_interactive_does_not_wait_with_wait_limit_0() {
    with_hosts("relay: usage limit not waited for (interactive, tmux)", |hosts| {
        let mut checks = Checks::new("relay: usage limit not waited for, interactive");
        let world = World::new(hosts);
        let agent = small_agent();
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        server.plan_fault(FaultPlan {
            fault: Fault::UsageLimit,
            at_main: 12,
            lasting: Some(Duration::from_secs(20)),
        });
        let Some(Session { tmux, err, status }) =
            start_with(&mut checks, &world, &server, &["--wait-limit", "0"], |env| {
                env.retain(|(k, _)| *k != "ANTHROPIC_API_KEY");
                env.push(("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-stand-in".to_string()));
            })
        else {
            return;
        };
        let said = tmux.wait_for(Duration::from_secs(120), |pane| {
            pane.lines()
                .any(|l| l.starts_with("baton: usage limit — it resets at ") && l.contains("not waiting"))
        });
        checks.check("the pane said baton does not wait", said, || tmux.pane());
        std::thread::sleep(Duration::from_secs(3));
        tmux.type_line("/exit", || status.exists());
        let exited = tmux.wait_for(Duration::from_secs(20), |_| status.exists());
        let stderr = std::fs::read_to_string(&err).unwrap_or_default();
        let code = std::fs::read_to_string(&status).unwrap_or_default();
        let pane = tmux.pane();
        drop(tmux);
        let requests = server.main_requests();
        checks.check("nothing typed: one context", context_starts(&requests).len() == 1, || server.summary());
        checks.check(
            "baton run exited 4 (a usage limit not waited for)",
            exited && code.trim() == "4",
            || format!("status {code:?}\n{stderr}\n{pane}"),
        );
        checks.check(
            "one line says why it stopped and how to go on",
            stderr.lines().any(|l| {
                l.starts_with("baton run: stopped at the host's usage limit (it resets at ")
                    && l.contains("the handoff (.planning/HANDOFF.json) stays")
            }),
            || stderr.clone(),
        );
        checks.finish();
    });
}
