//! The relay through what stops long runs in practice (issue 34), on the real hosts with
//! the stand-in model server's fault modes ([`Fault`]) and the 20-step agent that knows
//! only what it is sent: a usage limit with a reset a few tens of seconds ahead, server
//! errors for longer than the host's own retries and for ever, the host killed from
//! outside, Ctrl-C to `baton run` and the same command run again, a SIGINT to the host
//! alone, and a futile relay (every leg full from its first request, a huge instruction
//! file in the project). The agent's context stays small here (one
//! leg would do the task), so each leg after the first is the relay's answer to a fault.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::relay::{ALLOWED, STEPS, TASK, common_tail, expected_log, steps_log};
use super::{BRIEF, Checks, SERVER_LIFETIME};
use crate::common;
use crate::real_hosts_support::agent::{Agent, Move, Obeys, TaskAgent};
use crate::real_hosts_support::server::{Fault, FaultPlan, Server};
use crate::real_hosts_support::{Run, World, children_of, wait_until, with_hosts};

/// A context that never nears CRITICAL: 30k at the start, 2k per shell result.
fn small_agent() -> Arc<Agent> {
    Arc::new(Agent::new(TaskAgent {
        steps: STEPS,
        base_tokens: 30_000,
        per_step_tokens: 2_000,
        obeys: Obeys::Never,
    }))
}

fn run_baton(
    world: &World,
    args: &[String],
    env: &[(&str, String)],
    during: impl FnOnce(u32) + Send + 'static,
) -> Run {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    world.run_watched(Path::new(common::BATON), &args, env, Duration::from_secs(240), during)
}

/// steps.log holds every step in order, each once, but for at most `redone` steps run
/// twice (one in progress when the leg was killed or interrupted).
fn check_steps_once(checks: &mut Checks, world: &World, redone: usize) {
    let log = steps_log(world);
    let mut unique = log.clone();
    unique.dedup();
    let twice = log.len() - unique.len();
    checks.check(
        &format!("steps.log: every step ran, in order, at most {redone} of them twice"),
        unique == expected_log(STEPS) && twice <= redone,
        || format!("{log:?}"),
    );
}

fn check_completed(checks: &mut Checks, agent: &Agent, run: &Run) {
    checks.check("baton run exited 0", run.status.is_some_and(|s| s.success()), || run.describe());
    let done = Move::Finish(format!("All {STEPS} steps done."));
    checks.check("the task completed", agent.decisions().last().is_some_and(|d| d.made == done), || {
        format!("{:?}", agent.bash_steps())
    });
}

/// Every leg after the first started briefed, as leg N of the relay.
fn check_later_legs_briefed(checks: &mut Checks, server: &Server) {
    let requests: Vec<_> = server.main_requests().into_iter().filter(|r| !r.refused).collect();
    let starts: Vec<usize> =
        requests.iter().enumerate().filter(|(_, r)| r.turn == 0).map(|(i, _)| i).collect();
    checks.check("more than one leg ran", starts.len() >= 2, || server.summary());
    for at in starts.iter().skip(1) {
        let text = requests[*at].text();
        checks.check(
            "a later leg started with the brief in its first request",
            text.contains(BRIEF) && text.contains("of a relay"),
            || text.chars().take(800).collect(),
        );
    }
}

/// The record's legs as `why` words, for the report line and the checks.
fn record_reasons(world: &World) -> Vec<String> {
    let runs = world.sandbox.root().join("state").join("baton").join("runs");
    let mut reasons = vec![];
    let mut stack = vec![world.sandbox.root().to_path_buf()];
    // The state dir is under the sandbox's XDG state home; find the runs folder.
    let mut runs_dir = runs.is_dir().then_some(runs);
    while runs_dir.is_none() {
        let Some(dir) = stack.pop() else { break };
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n == "runs") {
                    runs_dir = Some(path);
                    break;
                }
                stack.push(path);
            }
        }
    }
    for entry in runs_dir.iter().flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten()) {
        if entry.path().extension().is_some_and(|e| e == "json") {
            let record: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(entry.path()).unwrap_or_default())
                    .unwrap_or_default();
            for leg in record["legs"].as_array().into_iter().flatten() {
                reasons.push(leg["end_reason"]["kind"].as_str().unwrap_or("-").to_string());
            }
        }
    }
    reasons
}

/// The headless hosts the fault scenarios run.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Host {
    Claude,
    Codex,
    Gemini,
}

/// A world set up for `host` against `server` (baton installed, the relay on), and
/// `baton run [flags] -- <host command>` with its environment.
fn set_up(
    world: &World,
    server: &Server,
    host: Host,
    flags: &[&str],
) -> (Vec<String>, Vec<(&'static str, String)>) {
    let mut args: Vec<String> = vec!["run".into()];
    args.extend(flags.iter().map(|f| f.to_string()));
    args.push("--".into());
    match host {
        Host::Claude => {
            world.claude_setup();
            // The model's window as a fact (no status line in `-p`), the relay on.
            super::relay::user_config(world, "relay");
            args.push(world.hosts.claude.display().to_string());
            args.extend(
                ["-p", "--allowedTools", ALLOWED, "--output-format", "json", TASK].map(str::to_string),
            );
            (args, world.claude_env(server))
        }
        Host::Codex => {
            world.codex_setup(server);
            common::write(&world.sandbox.user_config(), r#"{"handoff": {"on_critical": "relay"}}"#);
            args.push(super::relay::codex_command(world).display().to_string());
            args.extend(super::relay::CODEX_ARGS.map(str::to_string));
            args.push(TASK.to_string());
            (args, super::relay::codex_env())
        }
        Host::Gemini => {
            world.gemini_setup();
            // The user's bound on Gemini CLI's own retries (10 attempts over ~3.5 min by
            // default): two.
            let settings = world.sandbox.home().join(".gemini/settings.json");
            let mut value: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&settings).unwrap_or_default())
                    .unwrap_or_default();
            value["general"]["maxAttempts"] = serde_json::json!(2);
            common::write(&settings, &value.to_string());
            super::relay::gemini_config(world, "relay", true);
            args.push(super::relay::gemini_command(world).display().to_string());
            args.extend(super::relay::GEMINI_ARGS.map(str::to_string));
            args.extend(["-p".to_string(), TASK.to_string()]);
            (args, super::relay::gemini_env(server))
        }
    }
}

#[test]
fn baton_run_claude_print_waits_for_a_usage_limits_reset() {
    with_hosts("relay faults: claude -p usage limit", |hosts| {
        let mut checks = Checks::new("relay faults: claude -p usage limit");
        let world = World::new(hosts);
        let agent = small_agent();
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        server.plan_fault(FaultPlan {
            fault: Fault::UsageLimit,
            at_main: 12,
            lasting: Some(Duration::from_secs(20)),
        });
        // A subscription login: Claude Code stops at a usage limit at once (with an API key
        // it retries a 429 for minutes by itself).
        let (args, mut env) = set_up(&world, &server, Host::Claude, &[]);
        env.retain(|(k, _)| *k != "ANTHROPIC_API_KEY");
        env.push(("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-stand-in".to_string()));
        let run = run_baton(&world, &args, &env, |_| {});
        world.save_requests(&server, "relay-faults-claude-usage-limit");
        eprintln!("real hosts: relay faults: usage limit stderr (tail):\n{}", common_tail(&run.stderr));
        check_completed(&mut checks, &agent, &run);
        super::relay_report::check_report_after_fault(&mut checks, &world, "usage_limit", 0);
        check_steps_once(&mut checks, &world, 0);
        let played = server.faults_played();
        let requests = server.main_requests();
        let refused = requests.iter().filter(|r| r.refused).count();
        checks.check(
            "the usage limit was played and refused one request (the host's own)",
            refused == 1,
            || format!("{refused} refused; {played:?}\n{}", server.summary()),
        );
        let reset_ms = played.first().and_then(|p| p.end_ms).unwrap_or(0);
        let early = requests
            .iter()
            .filter(|r| {
                !r.refused && r.millis > played.first().map_or(0, |p| p.start_ms) && r.millis < reset_ms
            })
            .count();
        checks.check("no request before the reset", early == 0, || server.summary());
        checks.check(
            "stderr says the relay waits for the reset, and until when",
            run.stderr.contains("waiting for the usage limit's reset: until "),
            || run.stderr.clone(),
        );
        check_later_legs_briefed(&mut checks, &server);
        let reasons = record_reasons(&world);
        checks.check(
            "the record says the first leg ended at the usage limit",
            reasons.first().is_some_and(|r| r == "usage_limit"),
            || format!("{reasons:?}"),
        );
        checks.finish();
    });
}

#[test]
fn baton_run_claude_print_retries_server_errors_with_backoff() {
    with_hosts("relay faults: claude -p server errors", |hosts| {
        let mut checks = Checks::new("relay faults: claude -p server errors");
        let world = World::new(hosts);
        let agent = small_agent();
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        // 529 for 6 s: the host's own 2 retries (1.6 s) and the relay's first backoff (2 s)
        // are not enough, the second one is.
        server.plan_fault(FaultPlan {
            fault: Fault::Overloaded,
            at_main: 12,
            lasting: Some(Duration::from_secs(6)),
        });
        let (args, mut env) = set_up(&world, &server, Host::Claude, &[]);
        env.push(("CLAUDE_CODE_MAX_RETRIES", "2".to_string()));
        let run = run_baton(&world, &args, &env, |_| {});
        world.save_requests(&server, "relay-faults-claude-529");
        eprintln!("real hosts: relay faults: 529 stderr (tail):\n{}", common_tail(&run.stderr));
        check_completed(&mut checks, &agent, &run);
        super::relay_report::check_report_after_fault(&mut checks, &world, "api_error", 0);
        check_steps_once(&mut checks, &world, 0);
        checks.check(
            "stderr names the retries",
            run.stderr.contains("retry 1 of 3 after the API error"),
            || run.stderr.clone(),
        );
        check_later_legs_briefed(&mut checks, &server);
        let reasons = record_reasons(&world);
        checks.check("the record has the API errors", reasons.iter().any(|r| r == "api_error"), || {
            format!("{reasons:?}")
        });

        // Errors that never stop: within the retry bound, one clear line, non-zero.
        let world = World::new(hosts);
        let agent = small_agent();
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        server.plan_fault(FaultPlan { fault: Fault::Overloaded, at_main: 4, lasting: None });
        let (args, mut env) = set_up(&world, &server, Host::Claude, &["--retries", "1"]);
        env.push(("CLAUDE_CODE_MAX_RETRIES", "0".to_string()));
        let run = run_baton(&world, &args, &env, |_| {});
        eprintln!("real hosts: relay faults: 529 for ever stderr (tail):\n{}", common_tail(&run.stderr));
        checks.check("errors for ever: exit 5", run.status.and_then(|s| s.code()) == Some(5), || {
            run.describe()
        });
        let line = run.stderr.lines().find(|l| l.starts_with("baton run: the model server kept failing: "));
        checks.check(
            "one line names the API error and how to go on",
            line.is_some_and(|l| l.contains("529") && l.contains("run the same `baton run` command again")),
            || run.stderr.clone(),
        );
        let legs = server.main_requests().iter().filter(|r| r.refused && r.turn == 0).count();
        checks.check("at most --retries + 1 legs", legs <= 2, || server.summary());
        checks.finish();
    });
}

#[test]
fn baton_run_claude_print_restarts_a_killed_host() {
    with_hosts("relay faults: claude -p killed", |hosts| {
        let mut checks = Checks::new("relay faults: claude -p killed");
        let world = World::new(hosts);
        let agent = small_agent();
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        let count = server.main_counter();
        let (args, env) = set_up(&world, &server, Host::Claude, &[]);
        let run = run_baton(&world, &args, &env, move |baton| {
            if wait_until(&count, 14, Duration::from_secs(120)) {
                for host in children_of(baton) {
                    // SAFETY: kill() of a process of this test's own run.
                    unsafe { libc::kill(host as libc::pid_t, libc::SIGKILL) };
                }
            }
        });
        world.save_requests(&server, "relay-faults-claude-killed");
        eprintln!("real hosts: relay faults: killed stderr (tail):\n{}", common_tail(&run.stderr));
        check_completed(&mut checks, &agent, &run);
        super::relay_report::check_report_after_fault(&mut checks, &world, "crashed", 1);
        check_steps_once(&mut checks, &world, 1);
        checks.check(
            "stderr says the host was killed and the handoff written from facts",
            run.stderr.contains("the host was killed (signal 9)")
                && run.stderr.contains("from its transcript's facts"),
            || run.stderr.clone(),
        );
        check_later_legs_briefed(&mut checks, &server);
        checks.finish();
    });
}

#[test]
fn baton_run_claude_print_interrupted_then_continued() {
    with_hosts("relay faults: claude -p Ctrl-C", |hosts| {
        let mut checks = Checks::new("relay faults: claude -p Ctrl-C");
        let world = World::new(hosts);
        let agent = small_agent();
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        let count = server.main_counter();
        let (args, env) = set_up(&world, &server, Host::Claude, &[]);
        let run = run_baton(&world, &args, &env, move |baton| {
            if wait_until(&count, 14, Duration::from_secs(120)) {
                // Ctrl-C: the terminal's SIGINT to the whole foreground group.
                // SAFETY: kill() of this test's own process group.
                unsafe { libc::kill(-(baton as libc::pid_t), libc::SIGINT) };
            }
        });
        let at_interrupt = server.main_requests().len();
        eprintln!("real hosts: relay faults: Ctrl-C stderr (tail):\n{}", common_tail(&run.stderr));
        checks.check("exit 130", run.status.and_then(|s| s.code()) == Some(130), || run.describe());
        checks.check(
            "no new leg after the interruption",
            server.main_requests().iter().filter(|r| r.turn == 0).count() == 1,
            || server.summary(),
        );
        checks.check(
            "a line says how to continue",
            run.stderr.contains("interrupted (SIGINT, Ctrl-C); no new leg started")
                && run.stderr.contains("run the same `baton run` command again"),
            || run.stderr.clone(),
        );
        let run = run_baton(&world, &args, &env, |_| {});
        world.save_requests(&server, "relay-faults-claude-ctrl-c");
        eprintln!("real hosts: relay faults: continued stderr (tail):\n{}", common_tail(&run.stderr));
        check_completed(&mut checks, &agent, &run);
        checks.check(
            "the same command continued the relay",
            run.stderr.contains("continuing the relay this command started"),
            || run.stderr.clone(),
        );
        let first = server.main_requests().get(at_interrupt).map(|r| r.text()).unwrap_or_default();
        checks.check(
            "the continued leg was briefed as a later leg",
            first.contains(BRIEF) && first.contains("leg 2 of a relay"),
            || first.chars().take(800).collect(),
        );
        check_steps_once(&mut checks, &world, 1);
        super::relay_report::check_report_after_fault(&mut checks, &world, "interrupted", 1);
        checks.finish();
    });
}

#[test]
fn baton_run_claude_print_ends_a_futile_relay() {
    with_hosts("relay faults: claude -p futile", |hosts| {
        futile_on(Host::Claude, "relay faults: claude -p futile", hosts);
    });
}

// ---- Codex and Gemini CLI ----

fn usage_limit_on(host: Host, name: &'static str, hosts: &crate::real_hosts_support::Hosts) {
    let mut checks = Checks::new(name);
    let world = World::new(hosts);
    let agent = small_agent();
    let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
    server.plan_fault(FaultPlan {
        fault: Fault::UsageLimit,
        at_main: 8,
        lasting: Some(Duration::from_secs(20)),
    });
    let (args, env) = set_up(&world, &server, host, &[]);
    let run = run_baton(&world, &args, &env, |_| {});
    world.save_requests(&server, &format!("relay-faults-{host:?}-usage-limit"));
    eprintln!("real hosts: {name} stderr (tail):\n{}", common_tail(&run.stderr));
    check_completed(&mut checks, &agent, &run);
    super::relay_report::check_report_after_fault(&mut checks, &world, "usage_limit", 1);
    check_steps_once(&mut checks, &world, 1);
    let played = server.faults_played();
    let requests = server.main_requests();
    let refused = requests.iter().filter(|r| r.refused).count();
    checks.check(
        "the usage limit refused the host's request(s) only until the reset",
        (1..=2).contains(&refused),
        || format!("{refused} refused; {played:?}\n{}", server.summary()),
    );
    let (start, reset) = played.first().map_or((0, 0), |p| (p.start_ms, p.end_ms.unwrap_or(0)));
    let early = requests.iter().filter(|r| !r.refused && r.millis > start && r.millis < reset).count();
    checks.check("no request before the reset", early == 0, || server.summary());
    checks.check(
        "stderr says the relay waits for the reset, and until when",
        run.stderr.contains("waiting for the usage limit's reset: until "),
        || run.stderr.clone(),
    );
    check_later_legs_briefed(&mut checks, &server);
    checks.finish();
}

fn server_errors_on(host: Host, name: &'static str, hosts: &crate::real_hosts_support::Hosts) {
    let mut checks = Checks::new(name);
    let world = World::new(hosts);
    let agent = small_agent();
    let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
    // Longer than the host's own retries: Codex's provider has none here; Gemini CLI's
    // second attempt comes 5-7 s after the first (more on a loaded machine).
    let lasting = Duration::from_secs(if host == Host::Gemini { 15 } else { 6 });
    server.plan_fault(FaultPlan { fault: Fault::Overloaded, at_main: 8, lasting: Some(lasting) });
    let (args, env) = set_up(&world, &server, host, &[]);
    let run = run_baton(&world, &args, &env, |_| {});
    world.save_requests(&server, &format!("relay-faults-{host:?}-errors"));
    eprintln!("real hosts: {name} stderr (tail):\n{}", common_tail(&run.stderr));
    check_completed(&mut checks, &agent, &run);
    super::relay_report::check_report_after_fault(&mut checks, &world, "api_error", 1);
    check_steps_once(&mut checks, &world, 1);
    checks
        .check("stderr names the retries", run.stderr.contains("after the API error"), || run.stderr.clone());
    check_later_legs_briefed(&mut checks, &server);

    let world = World::new(hosts);
    let agent = small_agent();
    let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
    server.plan_fault(FaultPlan { fault: Fault::Overloaded, at_main: 3, lasting: None });
    let (args, env) = set_up(&world, &server, host, &["--retries", "1"]);
    let run = run_baton(&world, &args, &env, |_| {});
    eprintln!("real hosts: {name} for ever stderr (tail):\n{}", common_tail(&run.stderr));
    checks.check("errors for ever: exit 5", run.status.and_then(|s| s.code()) == Some(5), || run.describe());
    checks.check(
        "one line names the API error",
        run.stderr.lines().any(|l| l.starts_with("baton run: the model server kept failing: ")),
        || run.stderr.clone(),
    );
    checks.finish();
}

#[test]
fn baton_run_codex_exec_waits_for_a_usage_limits_reset() {
    with_hosts("relay faults: codex exec usage limit", |hosts| {
        usage_limit_on(Host::Codex, "relay faults: codex exec usage limit", hosts);
    });
}

#[test]
fn baton_run_codex_exec_retries_server_errors() {
    with_hosts("relay faults: codex exec server errors", |hosts| {
        server_errors_on(Host::Codex, "relay faults: codex exec server errors", hosts);
    });
}

#[test]
fn baton_run_gemini_print_waits_for_a_usage_limits_reset() {
    with_hosts("relay faults: gemini -p usage limit", |hosts| {
        usage_limit_on(Host::Gemini, "relay faults: gemini -p usage limit", hosts);
    });
}

#[test]
fn baton_run_gemini_print_retries_server_errors() {
    with_hosts("relay faults: gemini -p server errors", |hosts| {
        server_errors_on(Host::Gemini, "relay faults: gemini -p server errors", hosts);
    });
}

/// Ctrl-C mid-leg (exit 130, no new leg), then the same command again, whose leg the host
/// killed from outside mid-way: the relay continues, restarts, and completes the task.
fn interrupted_then_killed_on(host: Host, name: &'static str, hosts: &crate::real_hosts_support::Hosts) {
    let mut checks = Checks::new(name);
    let world = World::new(hosts);
    let agent = small_agent();
    let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
    let (args, env) = set_up(&world, &server, host, &[]);
    let count = server.main_counter();
    let run = run_baton(&world, &args, &env, move |baton| {
        if wait_until(&count, 6, Duration::from_secs(120)) {
            // SAFETY: kill() of this test's own process group (the terminal's Ctrl-C).
            unsafe { libc::kill(-(baton as libc::pid_t), libc::SIGINT) };
        }
    });
    eprintln!("real hosts: {name} Ctrl-C stderr (tail):\n{}", common_tail(&run.stderr));
    checks.check("Ctrl-C: exit 130", run.status.and_then(|s| s.code()) == Some(130), || run.describe());
    checks.check(
        "Ctrl-C: no new leg",
        server.main_requests().iter().filter(|r| r.turn == 0).count() == 1,
        || server.summary(),
    );
    let count = server.main_counter();
    let from = count();
    let run = run_baton(&world, &args, &env, move |baton| {
        if wait_until(&count, from + 6, Duration::from_secs(120)) {
            for child in children_of(baton) {
                // SAFETY: kill() of a process of this test's own run.
                unsafe { libc::kill(child as libc::pid_t, libc::SIGKILL) };
            }
        }
    });
    world.save_requests(&server, &format!("relay-faults-{host:?}-interrupted-killed"));
    eprintln!("real hosts: {name} continued stderr (tail):\n{}", common_tail(&run.stderr));
    checks.check(
        "the same command continued the relay",
        run.stderr.contains("continuing the relay this command started"),
        || run.stderr.clone(),
    );
    checks.check(
        "the killed host was restarted",
        run.stderr.contains("the host was killed (signal 9)"),
        || run.stderr.clone(),
    );
    check_completed(&mut checks, &agent, &run);
    // At most one step redone after the Ctrl-C and one after the kill.
    check_steps_once(&mut checks, &world, 2);
    super::relay_report::check_report_after_fault(&mut checks, &world, "interrupted", 2);
    super::relay_report::check_report_after_fault(&mut checks, &world, "crashed", 2);
    check_later_legs_briefed(&mut checks, &server);
    checks.finish();
}

#[test]
fn baton_run_codex_exec_interrupted_continued_and_killed() {
    with_hosts("relay faults: codex exec Ctrl-C and kill", |hosts| {
        interrupted_then_killed_on(Host::Codex, "relay faults: codex exec Ctrl-C and kill", hosts);
    });
}

#[test]
fn baton_run_gemini_print_interrupted_continued_and_killed() {
    with_hosts("relay faults: gemini -p Ctrl-C and kill", |hosts| {
        interrupted_then_killed_on(Host::Gemini, "relay faults: gemini -p Ctrl-C and kill", hosts);
    });
}

/// Every context past CRITICAL from its first request: an agent that does as baton asks,
/// with a huge instruction file in the project (the host's own: CLAUDE.md, AGENTS.md,
/// GEMINI.md). Claude Code's first call is a ToolSearch, Codex's and Gemini CLI's a step:
/// either way the leg is futile, and the second ends the relay.
fn futile_on(host: Host, name: &'static str, hosts: &crate::real_hosts_support::Hosts) {
    let mut checks = Checks::new(name);
    let world = World::new(hosts);
    // Claude Code: a window of 1M stated, CRITICAL at 75 %; Codex: CRITICAL at 145k, its
    // compaction at 187k; Gemini CLI: CRITICAL at 790k, its compression at 943k.
    let (base_tokens, instructions) = match host {
        Host::Claude => (800_000, "CLAUDE.md"),
        Host::Codex => (165_000, "AGENTS.md"),
        Host::Gemini => (850_000, "GEMINI.md"),
    };
    let agent = Arc::new(Agent::new(TaskAgent {
        steps: STEPS,
        base_tokens,
        per_step_tokens: 2_000,
        obeys: Obeys::Always,
    }));
    let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
    let line = "Follow the house style in every file you touch; never skip a test.\n";
    common::write(&world.project().join(instructions), &line.repeat(400_000 / line.len()));
    let (args, env) = set_up(&world, &server, host, &[]);
    if host == Host::Codex {
        // Codex reads 32 KiB of AGENTS.md unless the user raises its budget (a top-level key).
        let config = world.codex_home().join("config.toml");
        let text = std::fs::read_to_string(&config).unwrap_or_default();
        common::write(&config, &format!("project_doc_max_bytes = 1048576\n{text}"));
    }
    let run = run_baton(&world, &args, &env, |_| {});
    world.save_requests(&server, &format!("relay-faults-{host:?}-futile"));
    eprintln!("real hosts: {name} stderr (tail):\n{}", common_tail(&run.stderr));
    let requests = server.main_requests();
    let first_bytes = requests.first().map_or(0, |r| r.body.to_string().len());
    checks.check(
        "the host sent the whole instruction file in the leg's first request",
        first_bytes > 400_000,
        || format!("{first_bytes} bytes"),
    );
    checks.check("exit 7 (futile)", run.status.and_then(|s| s.code()) == Some(7), || run.describe());
    let legs = requests.iter().filter(|r| r.turn == 0).count();
    checks.check("at most two futile legs", (1..=2).contains(&legs), || server.summary());
    checks.check(
        "the line names the instruction file that filled the context at the start",
        run.stderr.contains("were past CRITICAL from their first request")
            && run.stderr.contains(&format!("What fills it at the start: {instructions}")),
        || run.stderr.clone(),
    );
    if host == Host::Codex {
        checks.check(
            "no note that Codex reads only part of AGENTS.md (its project_doc_max_bytes is raised past it)",
            !run.stderr.contains("Codex reads"),
            || run.stderr.clone(),
        );
    }
    super::relay_report::check_report_after_futile(&mut checks, &world);
    checks.finish();
}

#[test]
fn baton_run_codex_exec_ends_a_futile_relay() {
    with_hosts("relay faults: codex exec futile", |hosts| {
        futile_on(Host::Codex, "relay faults: codex exec futile", hosts);
    });
}

#[test]
fn baton_run_gemini_print_ends_a_futile_relay() {
    with_hosts("relay faults: gemini -p futile", |hosts| {
        futile_on(Host::Gemini, "relay faults: gemini -p futile", hosts);
    });
}

/// Ctrl-C to the host alone, by someone other than baton (`kill -INT <host pid>`):
/// `claude -p` exits 0 on it, `codex exec` 1; each records the interrupted turn (Claude
/// Code's "[Request interrupted by user]", Codex's `turn_aborted`), which the relay reads
/// as the interruption it is: exit 130, no new leg. The same command again completes the
/// task. (`gemini -p` goes on with its turn after a SIGINT to it alone and finishes the
/// task: its exit 0 is a done leg; docs/HOSTS.md.)
fn host_interrupted_on(host: Host, name: &'static str, hosts: &crate::real_hosts_support::Hosts) {
    let mut checks = Checks::new(name);
    let world = World::new(hosts);
    let agent = small_agent();
    let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
    let (args, env) = set_up(&world, &server, host, &[]);
    let count = server.main_counter();
    let run = run_baton(&world, &args, &env, move |baton| {
        if wait_until(&count, 10, Duration::from_secs(120)) {
            for child in children_of(baton) {
                // SAFETY: kill() of a process of this test's own run.
                unsafe { libc::kill(child as libc::pid_t, libc::SIGINT) };
            }
        }
    });
    eprintln!("real hosts: {name} stderr (tail):\n{}", common_tail(&run.stderr));
    checks.check("exit 130", run.status.and_then(|s| s.code()) == Some(130), || run.describe());
    checks.check(
        "no new leg after the interruption",
        server.main_requests().iter().filter(|r| r.turn == 0).count() == 1,
        || server.summary(),
    );
    checks.check(
        "a line says how to continue",
        run.stderr.contains("interrupted (SIGINT, Ctrl-C); no new leg started")
            && run.stderr.contains("run the same `baton run` command again"),
        || run.stderr.clone(),
    );
    let run = run_baton(&world, &args, &env, |_| {});
    world.save_requests(&server, &format!("relay-faults-{host:?}-host-interrupted"));
    eprintln!("real hosts: {name} continued stderr (tail):\n{}", common_tail(&run.stderr));
    check_completed(&mut checks, &agent, &run);
    checks.check(
        "the same command continued the relay",
        run.stderr.contains("continuing the relay this command started"),
        || run.stderr.clone(),
    );
    check_steps_once(&mut checks, &world, 1);
    super::relay_report::check_report_after_fault(&mut checks, &world, "interrupted", 1);
    checks.finish();
}

#[test]
fn baton_run_claude_print_host_interrupted_alone() {
    with_hosts("relay faults: claude -p host interrupted", |hosts| {
        host_interrupted_on(Host::Claude, "relay faults: claude -p host interrupted", hosts);
    });
}

#[test]
fn baton_run_codex_exec_host_interrupted_alone() {
    with_hosts("relay faults: codex exec host interrupted", |hosts| {
        host_interrupted_on(Host::Codex, "relay faults: codex exec host interrupted", hosts);
    });
}
