//! The relay's hand-over per host beside the host's own cold start (issue 36), for
//! `bench/handover.sh` only: with `BATON_HANDOVER_BENCH=1` each host's scenario runs
//! `baton run` over the real CLI against the stand-in server, with a task agent whose
//! contexts reach CRITICAL after one step (more, shorter legs than the relay scenarios:
//! at least [`HANDOVERS`] hand-overs), then starts the leg's command with a one-line
//! prompt [`COLD_STARTS`] times in the same world, each from its spawn to its first model
//! request. Without the variable each scenario returns at once (the CI suite's time does
//! not grow; the relay scenarios check the relay's promises there).
//!
//! Each hand-over (from a leg's last reply, the stand-in's answer to its last request, to
//! the next leg's first request) is split with the run's record: the host's exit after it (the turn's end, baton's
//! turn-end hooks, the process's exit), baton's runner between the host's exit and the
//! next leg's spawn, and the next host's start to its first request (its SessionStart
//! brief included). The scenario prints one `real hosts: hand-over | …` line and one
//! `real hosts: hand-over parts | …` line that the bench reads.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::opencode_kilo::config_setup;
use super::relay::{
    ALLOWED, CODEX_ARGS, GEMINI_ARGS, codex_command, codex_env, common_tail, context_starts, gemini_command,
    gemini_config, gemini_env, steps_log, user_config,
};
use super::relay_chat_hosts::{
    COPILOT_TAIL, DROID_ARGS, QWEN_ARGS, baton_config, copilot_env, droid_env, named_command, qwen_env,
    qwen_world,
};
use super::relay_opencode::{Host, KILO_HOST, OPENCODE_HOST};
use super::{BRIEF, Checks};
use crate::common;
use crate::real_hosts_support::agent::{Agent, Move, Obeys, TaskAgent};
use crate::real_hosts_support::chat_hosts::{DROID, QWEN, with_cli};
use crate::real_hosts_support::server::{REPLY_DELAY, Server};
use crate::real_hosts_support::{Tmux, World, with_hosts};

/// The hand-overs a scenario must give (the issue's median of 5).
const HANDOVERS: usize = 5;
/// How many times the host's own cold start is measured.
const COLD_STARTS: usize = 5;
/// The task's steps: legs of 1 step (the agent obeys in even legs) and 2 or 3 (stopped
/// after its one grace call in odd ones; a host the relay ends may issue one more) give 6
/// legs or more.
const STEPS: u32 = 12;
const TASK: &str =
    "Work through the 12-step task list: one shell command per step, then mark the step's task completed.";
/// The stand-in outlives the relay and the cold starts after it (a slow host's relay
/// outlasted the suite's 180 s).
const LIFETIME: Duration = Duration::from_secs(1800);

/// A hand-over starts at the leg's last reply (the pause: the agent's end of turn, or
/// the stop at its last call, which comes after that reply): the stand-in's time to answer
/// the leg's last request is the model's, not the relay's.
const REPLY: f64 = REPLY_DELAY.as_millis() as f64 / 1000.0;

fn enabled() -> bool {
    std::env::var_os("BATON_HANDOVER_BENCH").is_some_and(|v| v == "1")
}

/// The task agent with the relay scenario's figures, its base raised by `to_critical - 1`
/// steps: the context reaches CRITICAL after one shell result, and its highest figure (the
/// grace calls) stays what the scenario's was, short of the host's compaction.
fn agent(base_tokens: u64, per_step_tokens: u64, to_critical: u64) -> Arc<Agent> {
    Arc::new(Agent::new(TaskAgent {
        steps: STEPS,
        base_tokens: base_tokens + per_step_tokens * (to_critical - 1),
        per_step_tokens,
        obeys: Obeys::EvenLegs,
    }))
}

/// One host's bench: the world set up, the leg's command (`program`, its arguments with
/// [`TASK`] as the prompt) and its environment.
struct Bench<'a> {
    name: &'static str,
    world: &'a World,
    server: &'a Server,
    agent: &'a Agent,
    program: PathBuf,
    args: Vec<String>,
    env: Vec<(&'static str, String)>,
}

#[test]
fn handover_bench_claude_print() {
    if !enabled() {
        return;
    }
    with_hosts("hand-over bench: claude -p", |hosts| {
        let world = World::new(hosts);
        world.claude_setup();
        user_config(&world, "relay");
        let agent = agent(250_000, 85_000, 6);
        let server = Server::with_agent(Arc::clone(&agent), LIFETIME);
        let args = ["-p", "--allowedTools", ALLOWED, "--output-format", "json", TASK];
        let env = world.claude_env(&server);
        bench(Bench {
            name: "claude (`claude -p`)",
            world: &world,
            server: &server,
            agent: &agent,
            program: hosts.claude.clone(),
            args: args.map(str::to_string).to_vec(),
            env,
        });
    });
}

#[test]
fn handover_bench_codex_exec() {
    if !enabled() {
        return;
    }
    with_hosts("hand-over bench: codex exec", |hosts| {
        let world = World::new(hosts);
        let agent = agent(110_000, 7_000, 5);
        let server = Server::with_agent(Arc::clone(&agent), LIFETIME);
        world.codex_setup(&server);
        common::write(&world.sandbox.user_config(), r#"{"handoff": {"on_critical": "relay"}}"#);
        let mut args: Vec<String> = CODEX_ARGS.map(str::to_string).to_vec();
        args.push(TASK.to_string());
        bench(Bench {
            name: "codex (`codex exec`)",
            world: &world,
            server: &server,
            agent: &agent,
            program: codex_command(&world),
            args,
            env: codex_env(),
        });
    });
}

#[test]
fn handover_bench_gemini_print() {
    if !enabled() {
        return;
    }
    with_hosts("hand-over bench: gemini -p", |hosts| {
        let world = World::new(hosts);
        world.gemini_setup();
        gemini_config(&world, "relay", true);
        let agent = agent(520_000, 45_000, 6);
        let server = Server::with_agent(Arc::clone(&agent), LIFETIME);
        let mut args: Vec<String> = GEMINI_ARGS.map(str::to_string).to_vec();
        args.extend(["-p".to_string(), TASK.to_string()]);
        bench(Bench {
            name: "gemini (`gemini -p`)",
            world: &world,
            server: &server,
            agent: &agent,
            program: gemini_command(&world),
            args,
            env: gemini_env(&server),
        });
    });
}

#[test]
fn handover_bench_qwen_print() {
    if !enabled() {
        return;
    }
    with_cli("hand-over bench: qwen -p", &QWEN, |hosts, entry| {
        let world = World::new(hosts);
        let agent = agent(500_000, 40_000, 7);
        let server = Server::with_agent(Arc::clone(&agent), LIFETIME);
        qwen_world(&world, &server, "relay");
        let mut args: Vec<String> = QWEN_ARGS.map(str::to_string).to_vec();
        args.extend(["-p".to_string(), TASK.to_string()]);
        bench(Bench {
            name: "qwen (`qwen -p`)",
            world: &world,
            server: &server,
            agent: &agent,
            program: named_command(&world, "qwen", entry),
            args,
            env: qwen_env(),
        });
    });
}

#[test]
fn handover_bench_droid_exec() {
    if !enabled() {
        return;
    }
    with_cli("hand-over bench: droid exec", &DROID, |hosts, entry| {
        let world = World::new(hosts);
        let agent = agent(110_000, 7_000, 6);
        let server = Server::with_agent(Arc::clone(&agent), LIFETIME);
        world.droid_setup(&server);
        baton_config(&world, "relay");
        let mut args: Vec<String> = DROID_ARGS.map(str::to_string).to_vec();
        args.push(TASK.to_string());
        bench(Bench {
            name: "droid (`droid exec`)",
            world: &world,
            server: &server,
            agent: &agent,
            program: named_command(&world, "droid", entry),
            args,
            env: droid_env(),
        });
    });
}

#[test]
fn handover_bench_copilot_print() {
    if !enabled() {
        return;
    }
    with_cli("hand-over bench: copilot -p", &super::copilot::COPILOT, |hosts, entry| {
        let world = World::new(hosts);
        world.baton_install("copilot");
        baton_config(&world, "relay");
        let agent = agent(118_000, 1_500, 6);
        let server = Server::with_agent(Arc::clone(&agent), LIFETIME);
        let mut args = vec!["-p".to_string(), TASK.to_string()];
        args.extend(COPILOT_TAIL.map(str::to_string));
        bench(Bench {
            name: "copilot (`copilot -p`)",
            world: &world,
            server: &server,
            agent: &agent,
            program: named_command(&world, "copilot", entry),
            args,
            env: copilot_env(&server),
        });
    });
}

/// OpenCode and Kilo: the plugin's figure is one result behind, so CRITICAL comes one
/// result later than the agent's figure says.
fn opencode_like(host: &Host, title: &str, name: &'static str) {
    with_cli(title, host.cli, |hosts, entry| {
        let world = World::new(hosts);
        world.baton_install(host.name);
        baton_config(&world, "relay");
        let agent = agent(120_000, 6_000, 5);
        let server = Server::with_agent(Arc::clone(&agent), LIFETIME);
        let config = config_setup(&world, &server, host.folder, host.file, host.package.0, host.package.1);
        if host.snapshots_off {
            let mut value: Value =
                serde_json::from_slice(&std::fs::read(&config).expect("config")).expect("config json");
            value["snapshot"] = json!(false);
            std::fs::write(&config, format!("{value:#}\n")).expect("config");
        }
        bench(Bench {
            name,
            world: &world,
            server: &server,
            agent: &agent,
            program: entry.to_path_buf(),
            args: vec!["run".to_string(), TASK.to_string()],
            env: host.env.iter().map(|(k, v)| (*k, v.to_string())).collect(),
        });
    });
}

#[test]
fn handover_bench_opencode_run() {
    if !enabled() {
        return;
    }
    opencode_like(&OPENCODE_HOST, "hand-over bench: opencode run", "opencode (`opencode run`)");
}

#[test]
fn handover_bench_kilo_run() {
    if !enabled() {
        return;
    }
    opencode_like(&KILO_HOST, "hand-over bench: kilo run", "kilo (`kilo run`)");
}

/// Runs the relay, checks it relayed the task (every step once, in order, each later leg
/// briefed), splits its hand-overs, measures the cold starts, and prints the lines.
fn bench(b: Bench) {
    let title = format!("hand-over bench: {}", b.name);
    // One grace call after CRITICAL (the default is 3): shorter legs, more hand-overs; a
    // leg's end and the next start are the same whatever the grace.
    let config = b.world.sandbox.user_config();
    let mut value: Value =
        serde_json::from_slice(&std::fs::read(&config).expect("config")).expect("config json");
    value["handoff"]["pause_grace_calls"] = json!(1);
    std::fs::write(&config, value.to_string()).expect("config");
    let hook_log = time_hooks(b.world);
    let mut checks = Checks::new("hand-over bench");
    let program = b.program.display().to_string();
    let mut words: Vec<&str> = vec!["run", "--max-legs", "20", "--", program.as_str()];
    words.extend(b.args.iter().map(String::as_str));
    let run = b.world.run(Path::new(common::BATON), &words, &b.env, Duration::from_secs(600));
    b.world.save_requests(b.server, "handover-bench");
    eprintln!("real hosts: {title}: baton run stderr (tail):\n{}", common_tail(&run.stderr));
    let requests = b.server.main_requests();
    let starts = context_starts(&requests);
    let moves = || b.agent.decisions().iter().map(|d| format!("{}:{:?}", d.done, d.made)).collect::<Vec<_>>();
    checks.check("baton run exited 0", run.status.is_some_and(|s| s.success()), || run.describe());
    checks.check(
        "the task completed",
        b.agent
            .decisions()
            .last()
            .is_some_and(|d| d.made == Move::Finish(format!("All {STEPS} steps done."))),
        || moves().join(" "),
    );
    let expected: Vec<String> = (1..=STEPS).map(|n| format!("step-{n:02}")).collect();
    let log = steps_log(b.world);
    checks.check("steps.log: every step ran exactly once, in order", log == expected, || {
        let briefs: Vec<String> = starts
            .iter()
            .skip(1)
            .map(|at| {
                let text = requests[*at].text();
                text.find(BRIEF).map(|i| text[i..].chars().take(2500).collect()).unwrap_or_default()
            })
            .collect();
        format!("{log:?}\n{}\nthe briefs:\n{}", moves().join(" "), briefs.join("\n----\n"))
    });
    checks.check(&format!("at least {HANDOVERS} hand-overs"), starts.len() > HANDOVERS, || {
        format!("contexts start at {starts:?}; {}", moves().join(" "))
    });
    for (leg, at) in starts.iter().enumerate().skip(1) {
        let text = requests[*at].text();
        checks.check(
            &format!("leg {} started with the brief in its first request", leg + 1),
            text.contains(BRIEF) && text.contains(&format!("This is leg {} of a relay", leg + 1)),
            || text.chars().take(1500).collect(),
        );
    }
    // The server's clock (ms since it started) on the run record's (unix ms).
    let server_epoch_ms = unix_ms(SystemTime::now()) - b.server.started().elapsed().as_millis() as f64;
    let at = |index: usize| server_epoch_ms + requests[index].millis as f64;
    let legs = super::relay_chat_hosts::run_legs(b.world);
    let leg_note = |leg: usize| legs.iter().find(|n| n["leg"] == json!(leg)).cloned();
    let hooks = hook_log.as_deref().map(read_hook_times).unwrap_or_default();
    // The seconds of baton's hooks (the wrapper's start to end, merged) within a window.
    let hooks_within = |from: f64, to: f64| -> f64 {
        let mut busy = 0.0;
        let mut reached = from;
        for (start, end) in &hooks {
            let (start, end) = (start.max(reached), end.min(to));
            if end > start {
                busy += end - start;
                reached = end;
            }
        }
        busy / 1000.0
    };
    let mut gaps = vec![];
    let mut parts: Vec<[f64; 3]> = vec![];
    let mut hook_parts: Vec<[f64; 2]> = vec![];
    for (k, first) in starts.iter().enumerate().skip(1) {
        let last = first - 1;
        gaps.push((requests[*first].millis - requests[last].millis) as f64 / 1000.0 - REPLY);
        let (Some(ended), Some(next)) = (leg_note(k), leg_note(k + 1)) else { continue };
        let (Some(ended_ms), Some(started_ms)) = (ended["ended_ms"].as_f64(), next["started_ms"].as_f64())
        else {
            continue;
        };
        let replied = at(last) + REPLY * 1000.0;
        hook_parts.push([hooks_within(replied, ended_ms), hooks_within(started_ms, at(*first))]);
        parts.push([
            (ended_ms - replied) / 1000.0,
            (started_ms - ended_ms) / 1000.0,
            (at(*first) - started_ms) / 1000.0,
        ]);
    }
    eprintln!(
        "real hosts: {title}: {} legs; hand-overs {gaps:?} s; parts (exit, runner, start) {parts:?}",
        starts.len()
    );

    // The host's own cold start, in the same world: the leg's command, a one-line prompt.
    let args: Vec<&str> =
        b.args.iter().map(|a| if a == TASK { "Say hi in one line." } else { a.as_str() }).collect();
    let cold: Vec<f64> =
        (0..COLD_STARTS).filter_map(|_| cold_start(b.world, b.server, &b.program, &args, &b.env)).collect();
    checks.check(&format!("{COLD_STARTS} cold starts reached the server"), cold.len() == COLD_STARTS, || {
        format!("{cold:?}")
    });
    let column = |i: usize| median(&parts.iter().map(|p| p[i]).collect::<Vec<_>>()).unwrap_or(f64::NAN);
    print_row(b.name, &gaps, &cold);
    let hook_column = |i: usize| {
        median(&hook_parts.iter().map(|p| p[i]).collect::<Vec<_>>())
            .filter(|_| hook_log.is_some())
            .map_or("—".to_string(), |v| format!("{v:.2}"))
    };
    eprintln!(
        "real hosts: hand-over parts | {} | {:.2} | {} | {:.2} | {:.2} | {} |",
        b.name,
        column(0),
        hook_column(0),
        column(1),
        column(2),
        hook_column(1),
    );
    checks.finish();
}

/// The bench's line for one row: the hand-overs and the cold starts, their medians and
/// the difference.
fn print_row(name: &str, gaps: &[f64], cold: &[f64]) {
    let (hand_over, start) = (median(gaps), median(cold));
    let beyond = hand_over.zip(start).map(|(h, c)| format!("{:+.2}", h - c)).unwrap_or_else(|| "?".into());
    eprintln!(
        "real hosts: hand-over | {name} | {} | {:.2} | {} | {:.2} | {beyond} |",
        round(gaps),
        hand_over.unwrap_or(f64::NAN),
        round(cold),
        start.unwrap_or(f64::NAN),
    );
}

fn unix_ms(time: SystemTime) -> f64 {
    time.duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64() * 1000.0).unwrap_or(0.0)
}

fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => None,
        n if n % 2 == 1 => Some(sorted[n / 2]),
        n => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

fn round(values: &[f64]) -> String {
    values.iter().map(|v| format!("{v:.2}")).collect::<Vec<_>>().join(", ")
}

/// One cold start of `program args` in `world`: seconds from its spawn to its first main
/// request at `server`; the host is ended then (its whole process group, by SIGINT, as a
/// user's Ctrl-C: one killed outright may leave a lock that the next start waits out).
fn cold_start(
    world: &World,
    server: &Server,
    program: &Path,
    args: &[&str],
    env: &[(&str, String)],
) -> Option<f64> {
    use std::process::{Command, Stdio};
    let before = server.main_requests().len();
    let seen = server.main_counter();
    let seen_before = seen();
    let mut command = Command::new(program);
    command.args(args).env_clear().current_dir(world.project());
    for (key, value) in world.env() {
        command.env(key, value);
    }
    for (key, value) in env {
        command.env(key, value);
    }
    command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    let spawned = Instant::now();
    let mut child = crate::real_hosts_support::own_group(&mut command).spawn().ok()?;
    let first = first_request_after(server, before, seen_before, &seen);
    // The next start must not run beside this one's end: the whole group is waited for
    // (a host's workers outlive its first process), killed if it lingers.
    let group = -(child.id() as libc::pid_t);
    // SAFETY: kill() on the process group of our own child.
    unsafe { libc::kill(group, libc::SIGINT) };
    let _ = crate::real_hosts_support::wait_bounded(&mut child, Duration::from_secs(10));
    let ended = Instant::now();
    // SAFETY: signal 0 only asks whether the group still has a process.
    while unsafe { libc::kill(group, 0) } == 0 {
        if ended.elapsed() > Duration::from_secs(10) {
            // SAFETY: as above.
            unsafe { libc::kill(group, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(20));
        let _ = child.try_wait();
        if ended.elapsed() > Duration::from_secs(15) {
            break;
        }
    }
    let _ = child.wait();
    let arrived = server.started() + Duration::from_millis(u64::try_from(first?).ok()?);
    Some(arrived.saturating_duration_since(spawned).as_secs_f64())
}

/// The interactive relay (`baton run claude …` on a terminal, in tmux): one process through
/// every leg, baton typing `/clear` and "continue" after its countdown. Its hand-over
/// (the leg's last request to the next leg's first) holds the wait for the host to be
/// quiet, the countdown a user can cancel with a key, and the typing; beside it the host's
/// own cold start: `claude "<one-line prompt>" …` started in tmux, to its first request.
/// (Named to run last: the headless hosts' figures come first.)
#[test]
fn handover_bench_tmux_claude_interactive() {
    if !enabled() {
        return;
    }
    with_hosts("hand-over bench: claude (interactive, tmux)", |hosts| {
        let mut checks = Checks::new("hand-over bench: claude interactive");
        let world = World::new(hosts);
        world.claude_setup();
        user_config(&world, "relay");
        let agent = agent(250_000, 85_000, 6);
        let server = Server::with_agent(Arc::clone(&agent), LIFETIME);
        let config = world.sandbox.user_config();
        let mut value: Value =
            serde_json::from_slice(&std::fs::read(&config).expect("config")).expect("config");
        value["handoff"]["pause_grace_calls"] = json!(1);
        std::fs::write(&config, value.to_string()).expect("config");
        let mut env = world.env();
        env.extend(world.claude_env(&server).into_iter().map(|(k, v)| (k.to_string(), v)));
        let status = world.root().join("baton-run.status");
        // BATON_HANDOVER_COUNTDOWN=N: `--countdown N` (seconds; 5, baton's default, if unset).
        let countdown: u64 =
            std::env::var("BATON_HANDOVER_COUNTDOWN").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
        let script = format!(
            "'{}' run --max-legs 20 --countdown {countdown} -- '{}' --allowedTools {ALLOWED} 2>'{}'; echo $? >'{}'",
            common::BATON,
            hosts.claude.display(),
            world.root().join("baton-run.stderr").display(),
            status.display()
        );
        let tmux = Tmux::start(&world, &env, Path::new("/bin/sh"), &["-c", &script]).expect("tmux");
        let ready = tmux.wait_for(Duration::from_secs(60), |pane| {
            pane.contains("for shortcuts") || pane.contains("\u{276f}")
        });
        checks.check("claude started under baton run (prompt shown)", ready, || tmux.pane());
        std::thread::sleep(Duration::from_secs(2));
        let sent = tmux.type_line(TASK, || !server.main_requests().is_empty());
        checks.check("first prompt submitted", sent, || tmux.pane());
        let done = || {
            agent
                .decisions()
                .last()
                .is_some_and(|d| d.made == Move::Finish(format!("All {STEPS} steps done.")))
        };
        let mut seen = (0, Instant::now());
        tmux.wait_for(Duration::from_secs(400), |_| {
            let count = server.main_requests().len();
            if count != seen.0 {
                seen = (count, Instant::now());
            }
            done() || status.exists() || seen.1.elapsed() > Duration::from_secs(60)
        });
        checks.check("the task completed", done(), || tmux.pane());
        // A last leg that finished within its grace call hands over once more; the user
        // types `/exit` once nothing has come for 12 s.
        let mut settled = (server.main_requests().len(), Instant::now());
        tmux.wait_for(Duration::from_secs(120), |_| {
            let count = server.main_requests().len();
            if count != settled.0 {
                settled = (count, Instant::now());
            }
            status.exists() || settled.1.elapsed() > Duration::from_secs(12)
        });
        tmux.type_line("/exit", || status.exists());
        tmux.wait_for(Duration::from_secs(20), |_| status.exists());
        drop(tmux);
        world.save_requests(&server, "handover-bench-interactive");
        let requests = server.main_requests();
        let starts = context_starts(&requests);
        let expected: Vec<String> = (1..=STEPS).map(|n| format!("step-{n:02}")).collect();
        let log = steps_log(&world);
        checks.check("steps.log: every step ran exactly once, in order", log == expected, || {
            format!("{log:?}")
        });
        checks.check(&format!("at least {HANDOVERS} hand-overs"), starts.len() > HANDOVERS, || {
            format!("contexts start at {starts:?}")
        });
        let gaps: Vec<f64> = starts
            .iter()
            .skip(1)
            .map(|at| (requests[*at].millis - requests[at - 1].millis) as f64 / 1000.0 - REPLY)
            .collect();

        let server_ref = &server;
        // The host's own cold start: `claude "Say hi in one line." --allowedTools …` in tmux
        // (the prompt first: `--allowedTools` takes every word after it).
        let mut cold = vec![];
        for _ in 0..COLD_STARTS {
            let before = server.main_requests().len();
            let seen = server.main_counter();
            let seen_before = seen();
            let spawned = Instant::now();
            let Ok(tmux) =
                Tmux::start(&world, &env, &hosts.claude, &["Say hi in one line.", "--allowedTools", ALLOWED])
            else {
                continue;
            };
            let first = first_request_after(server_ref, before, seen_before, &seen);
            drop(tmux);
            std::thread::sleep(Duration::from_secs(1));
            if let Some(first) = first {
                let arrived = server.started() + Duration::from_millis(first as u64);
                cold.push(arrived.saturating_duration_since(spawned).as_secs_f64());
            }
        }
        checks.check(
            &format!("{COLD_STARTS} cold starts reached the server"),
            cold.len() == COLD_STARTS,
            || format!("{cold:?}"),
        );
        let name = format!("claude (interactive, `baton run --countdown {countdown} -- claude`)");
        print_row(&name, &gaps, &cold);
        // The countdown is the user's: what baton adds beside it.
        if countdown > 0 {
            let less: Vec<f64> = gaps.iter().map(|g| g - countdown as f64).collect();
            print_row(&format!("{name}, less its countdown"), &less, &cold);
        }
        checks.finish();
    });
}

/// With `BATON_HANDOVER_HOOK_TIMES=1`: every hook command the world's hosts were given
/// (baton's binary, by its path) goes through a bash wrapper that notes when baton started
/// and ended (`$EPOCHREALTIME`, no process of its own), so a hand-over's parts show how
/// much of them was baton's hooks. Off by default: the wrapper's own start (a bash) is in
/// every hook call then. Returns the wrapper's log.
fn time_hooks(world: &World) -> Option<PathBuf> {
    if std::env::var_os("BATON_HANDOVER_HOOK_TIMES").is_none_or(|v| v != "1") {
        return None;
    }
    let baton = common::baton_path();
    let log = world.root().join("hook-times.log");
    let wrapper = world.root().join("bin").join("baton-timed");
    common::write(
        &wrapper,
        &format!(
            "#!/bin/bash\nstart=$EPOCHREALTIME\n'{baton}' \"$@\"\nstatus=$?\necho \"$start $EPOCHREALTIME\" >>'{}'\nexit $status\n",
            log.display()
        ),
    );
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    // The hosts' settings, hooks files and plugins that name baton's binary.
    let mut stack = vec![world.root().to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() && entry.file_name() != "node_modules" && entry.file_name() != "project" {
                stack.push(path);
            } else if kind.is_file() && entry.metadata().is_ok_and(|m| m.len() < 1 << 20) {
                let Ok(text) = std::fs::read_to_string(&path) else { continue };
                if text.contains(&baton) && path != wrapper {
                    std::fs::write(&path, text.replace(&baton, &wrapper.display().to_string()))
                        .expect("rewrite");
                }
            }
        }
    }
    Some(log)
}

/// The hook wrapper's log: (start, end) in unix ms, by start.
fn read_hook_times(log: &Path) -> Vec<(f64, f64)> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut times: Vec<(f64, f64)> = text
        .lines()
        .filter_map(|line| {
            let (start, end) = line.split_once(' ')?;
            Some((start.parse::<f64>().ok()? * 1000.0, end.trim().parse::<f64>().ok()? * 1000.0))
        })
        .collect();
    times.sort_by(|a, b| a.0.total_cmp(&b.0));
    times
}

/// The time (ms on the server's clock) of the first main request after `before` of them,
/// waited for up to 90 s. The wait reads the server's counter, not its requests (a copy of
/// every body so far): a busy wait beside the starting host would slow its start on a
/// 2-core machine.
fn first_request_after(
    server: &Server,
    before: usize,
    seen_before: usize,
    seen: &dyn Fn() -> usize,
) -> Option<u128> {
    let waiting = Instant::now();
    while seen() <= seen_before {
        if waiting.elapsed() > Duration::from_secs(90) {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // Recorded as it is answered: a moment after it was counted.
    while waiting.elapsed() < Duration::from_secs(95) {
        if let Some(request) = server.main_requests().get(before) {
            return Some(request.millis);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}
