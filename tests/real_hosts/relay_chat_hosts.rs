//! The relay on the chat-completions hosts (issue 21): `baton run` over Qwen Code's
//! `qwen -p`, with the stand-in task agent ([`real_hosts_support::agent`]) working
//! through the 20-step task list and deciding each move only from the request; and the
//! pause alone, stopping the host's headless run within the grace calls.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::relay::{
    LegEnds, STEPS, StopsBy, TASK, check_continue_resumes, check_relay, check_stopped_within_grace,
    common_tail,
};
use super::{Checks, SERVER_LIFETIME};
use crate::common;
use crate::real_hosts_support::World;
use crate::real_hosts_support::agent::{Agent, Obeys, TaskAgent};
use crate::real_hosts_support::chat_hosts::{DROID, DROID_MODEL, QWEN, QWEN_MODEL, with_cli};
use crate::real_hosts_support::server::Server;

/// A program named as the host (`baton run` knows the host by the program's name) that
/// runs `entry` with the pinned node, or the CLI's own binary.
pub(super) fn named_command(world: &World, name: &str, entry: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = world.root().join("bin").join(name);
    let script = if entry.extension().is_some_and(|e| e == "js") {
        let node = world.hosts.node_dir.join("node");
        format!("#!/bin/sh\nexec {} {} \"$@\"\n", node.display(), entry.display())
    } else {
        format!("#!/bin/sh\nexec {} \"$@\"\n", entry.display())
    };
    common::write(&path, &script);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

pub(super) fn baton_config(world: &World, on_critical: &str) {
    common::write(
        &world.sandbox.user_config(),
        &json!({"handoff": {"on_critical": on_critical}}).to_string(),
    );
}

// ---- Qwen Code ----

/// qwen3-coder-plus, 1,000,000 tokens (Qwen Code's table and baton's): 500k at the start
/// of a context, 40k per shell result: the warning at the call of step 5 (660k), CRITICAL
/// at step 8 (780k); the 3 grace calls reach 900k and a refused call 940k, short of the
/// compression point, moved to 0.98 of the window (Qwen Code's default, 0.7, is below
/// baton's CRITICAL).
fn qwen_agent(obeys: Obeys) -> Arc<Agent> {
    Arc::new(Agent::new(TaskAgent { steps: STEPS, base_tokens: 500_000, per_step_tokens: 40_000, obeys }))
}

pub(super) fn qwen_world(world: &World, server: &Server, on_critical: &str) {
    world.qwen_setup(server);
    let path = world.qwen_settings_path();
    let mut settings: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("qwen settings")).expect("qwen settings json");
    settings["model"]["chatCompression"] = json!({"contextPercentageThreshold": 0.98});
    // After a turn ends with text, Qwen Code 0.15.10 runs its memory extraction: a second
    // agent's conversation, with tools, on the same model (the stand-in would answer it as
    // a context of the task). The user's setting turns it off.
    settings["memory"] = json!({"enableManagedAutoMemory": false});
    std::fs::write(&path, format!("{settings:#}\n")).expect("qwen settings");
    baton_config(world, on_critical);
}

/// `--yolo`: the user lets Qwen Code run the task's shell commands without asking (in
/// `qwen -p` a call that needs a confirmation is refused).
pub(super) const QWEN_ARGS: [&str; 3] = ["--yolo", "-m", QWEN_MODEL];

pub(super) fn qwen_env() -> Vec<(&'static str, String)> {
    vec![("STANDIN_KEY", "sk-standin".to_string()), ("QWEN_CODE_NO_RELAUNCH", "true".to_string())]
}

/// Qwen Code 0.15.10 ends no turn on a hook's `continue: false` (it becomes the call's
/// error result): after the grace calls baton refuses every call at PreToolUse, and the
/// agent, refused, ends its turn.
#[test]
fn qwen_print_is_stopped_within_the_grace_calls() {
    with_cli("relay: qwen -p pause", &QWEN, |hosts, entry| {
        let mut checks = Checks::new("relay: qwen -p pause");
        let world = World::new(hosts);
        let agent = qwen_agent(Obeys::Never);
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        qwen_world(&world, &server, "pause");
        let qwen = named_command(&world, "qwen", entry);
        let mut args: Vec<&str> = QWEN_ARGS.to_vec();
        args.extend(["-p", TASK]);
        let run = world.run(&qwen, &args, &qwen_env(), Duration::from_secs(120));
        world.save_requests(&server, "pause-qwen-print");
        let stopped_after = check_stopped_within_grace(
            &mut checks,
            &world,
            &agent,
            &server,
            &run,
            7,
            StopsBy::RefusingTheNextCalls,
        );
        let last = server.main_requests().last().map(|r| r.text()).unwrap_or_default();
        checks.check("the agent read baton's refusal", last.contains("baton refused this call"), || {
            common_tail(&last)
        });
        checks.check("qwen -p exited 0", run.status.is_some_and(|s| s.success()), || run.describe());
        drop(server);

        // "continue" in a fresh session: briefed with its first prompt, it carries on.
        let agent2 = qwen_agent(Obeys::Never);
        let server = Server::with_agent(Arc::clone(&agent2), SERVER_LIFETIME);
        world.qwen_repoint(&server);
        let mut args: Vec<&str> = QWEN_ARGS.to_vec();
        args.extend(["-p", "continue"]);
        let _run = world.run(&qwen, &args, &qwen_env(), Duration::from_secs(120));
        world.save_requests(&server, "pause-qwen-print-continue");
        check_continue_resumes(&mut checks, &server, &agent2, stopped_after);
        checks.finish();
    });
}

/// Under `baton run` the relay ends each leg at the last grace call (the hook holds Qwen
/// Code there), and the next leg's first prompt carries the brief.
#[test]
fn baton_run_qwen_print_relays_twenty_steps_across_contexts() {
    with_cli("relay: baton run qwen -p", &QWEN, |hosts, entry| {
        let mut checks = Checks::new("relay: baton run qwen -p");
        let world = World::new(hosts);
        let agent = qwen_agent(Obeys::EvenLegs);
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        qwen_world(&world, &server, "relay");
        let qwen = named_command(&world, "qwen", entry).display().to_string();
        let mut args: Vec<&str> = vec!["run", "--", qwen.as_str()];
        args.extend(QWEN_ARGS);
        args.extend(["-p", TASK]);
        let run = world.run(Path::new(common::BATON), &args, &qwen_env(), Duration::from_secs(240));
        world.save_requests(&server, "relay-qwen-print");
        eprintln!("real hosts: relay: baton run qwen stderr (tail):\n{}", common_tail(&run.stderr));
        check_relay(&mut checks, &world, &agent, &server, &run, LegEnds::ByTheRelay);
        // The legs baton stopped: the hook holding `qwen -p` at the stop lets go once the
        // relay has sent SIGINT, so qwen reads it as an abort and exits by itself (130),
        // well before the relay's SIGTERM 2 s later. Held until qwen's exit, it outlasted
        // both signals and the SIGKILL ended it (137) 4 s after the stop.
        let stopped: Vec<(i64, i64)> = run_legs(&world)
            .iter()
            .filter(|n| n["stopped"] == true)
            .map(|n| {
                let after = n["ended_ms"].as_i64().zip(n["paused_ms"].as_i64()).map_or(-1, |(e, p)| e - p);
                (n["exit_code"].as_i64().unwrap_or(-1), after)
            })
            .collect();
        checks.check(
            "each leg baton stopped: qwen ended on the relay's SIGINT (exit 130) within 2 s of the pause",
            !stopped.is_empty()
                && stopped.iter().all(|(code, after)| *code == 130 && (0..2000).contains(after)),
            || format!("(exit code, ms from the pause to the exit): {stopped:?}"),
        );
        checks.finish();
    });
}

// ---- Factory Droid ----

/// Droid works with its compaction limit, 200,000 tokens here: 110k at the start of a
/// context, 7k per shell result: the warning at the call of step 4 (131k), CRITICAL at
/// step 7 (152k); the 3 grace calls reach at most 173k.
fn droid_agent(obeys: Obeys) -> Arc<Agent> {
    Arc::new(Agent::new(TaskAgent { steps: STEPS, base_tokens: 110_000, per_step_tokens: 7_000, obeys }))
}

/// `--auto high`: the user lets Droid run the task's commands (`droid exec` is read-only
/// otherwise).
pub(super) const DROID_ARGS: [&str; 5] = ["exec", "--auto", "high", "-m", DROID_MODEL];

pub(super) fn droid_env() -> Vec<(&'static str, String)> {
    vec![
        ("FACTORY_AIRGAP_ENABLED", "true".to_string()),
        ("FACTORY_DROID_AUTO_UPDATE_ENABLED", "false".to_string()),
    ]
}

/// Droid 0.225.2 ends the run on a PostToolUse `continue: false` (its hook-stop error),
/// as Claude Code does: stopped at the last grace call.
#[test]
fn droid_exec_is_stopped_within_the_grace_calls() {
    with_cli("relay: droid exec pause", &DROID, |hosts, entry| {
        let mut checks = Checks::new("relay: droid exec pause");
        let world = World::new(hosts);
        let agent = droid_agent(Obeys::Never);
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        world.droid_setup(&server);
        baton_config(&world, "pause");
        let droid = named_command(&world, "droid", entry);
        let mut args: Vec<&str> = DROID_ARGS.to_vec();
        args.push(TASK);
        let run = world.run(&droid, &args, &droid_env(), Duration::from_secs(120));
        world.save_requests(&server, "pause-droid-exec");
        let stopped_after = check_stopped_within_grace(
            &mut checks,
            &world,
            &agent,
            &server,
            &run,
            6,
            StopsBy::TheLastGraceCall,
        );
        checks.check("droid exec exited 0", run.status.is_some_and(|s| s.success()), || run.describe());
        drop(server);

        let agent2 = droid_agent(Obeys::Never);
        let server = Server::with_agent(Arc::clone(&agent2), SERVER_LIFETIME);
        world.droid_repoint(&server);
        let mut args: Vec<&str> = DROID_ARGS.to_vec();
        args.push("continue");
        let _run = world.run(&droid, &args, &droid_env(), Duration::from_secs(120));
        world.save_requests(&server, "pause-droid-exec-continue");
        check_continue_resumes(&mut checks, &server, &agent2, stopped_after);
        checks.finish();
    });
}

/// Each leg ends as in `droid exec` alone: Droid's own stop at the last grace call.
#[test]
fn baton_run_droid_exec_relays_twenty_steps_across_contexts() {
    with_cli("relay: baton run droid exec", &DROID, |hosts, entry| {
        let mut checks = Checks::new("relay: baton run droid exec");
        let world = World::new(hosts);
        let agent = droid_agent(Obeys::EvenLegs);
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        world.droid_setup(&server);
        baton_config(&world, "relay");
        let droid = named_command(&world, "droid", entry).display().to_string();
        let mut args: Vec<&str> = vec!["run", "--", droid.as_str()];
        args.extend(DROID_ARGS);
        args.push(TASK);
        let run = world.run(Path::new(common::BATON), &args, &droid_env(), Duration::from_secs(240));
        world.save_requests(&server, "relay-droid-exec");
        eprintln!("real hosts: relay: baton run droid stderr (tail):\n{}", common_tail(&run.stderr));
        check_relay(&mut checks, &world, &agent, &server, &run, LegEnds::ByTheHost);
        checks.finish();
    });
}

// ---- GitHub Copilot CLI ----

/// claude-sonnet-4.5 in Copilot CLI's table: 168,000 prompt tokens, compacted at 80 %
/// (134,400). 118k at the start of a context, 1.5k per shell result: CRITICAL (75 %,
/// 126k) at the call of step 7 (127k); the 3 grace calls reach at most 131.5k and two
/// refused calls 134.5k... short of the compaction only if the stop comes in time.
fn copilot_agent(obeys: Obeys) -> Arc<Agent> {
    Arc::new(Agent::new(TaskAgent { steps: STEPS, base_tokens: 118_000, per_step_tokens: 1_500, obeys }))
}

pub(super) fn copilot_env(server: &Server) -> Vec<(&'static str, String)> {
    vec![
        ("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", server.base_url())),
        ("COPILOT_PROVIDER_API_KEY", "sk-standin".to_string()),
        ("COPILOT_OFFLINE", "true".to_string()),
        ("COPILOT_MODEL", "claude-sonnet-4.5".to_string()),
        ("COPILOT_AUTO_UPDATE", "false".to_string()),
    ]
}

/// The user's permissions: every tool allowed (`copilot -p` asks for no confirmation).
pub(super) const COPILOT_TAIL: [&str; 2] = ["--allow-all-tools", "--no-auto-update"];

#[test]
fn copilot_print_is_stopped_within_the_grace_calls() {
    with_cli("relay: copilot -p pause", &super::copilot::COPILOT, |hosts, entry| {
        let mut checks = Checks::new("relay: copilot -p pause");
        let world = World::new(hosts);
        world.baton_install("copilot");
        baton_config(&world, "pause");
        let agent = copilot_agent(Obeys::Never);
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        let copilot = named_command(&world, "copilot", entry);
        let mut args: Vec<&str> = vec!["-p", TASK];
        args.extend(COPILOT_TAIL);
        let run = world.run(&copilot, &args, &copilot_env(&server), Duration::from_secs(120));
        world.save_requests(&server, "pause-copilot-print");
        let stopped_after = check_stopped_within_grace(
            &mut checks,
            &world,
            &agent,
            &server,
            &run,
            6,
            StopsBy::RefusingTheNextCalls,
        );
        let last = server.main_requests().last().map(|r| r.text()).unwrap_or_default();
        checks.check("the agent read baton's refusal", last.contains("baton refused this call"), || {
            common_tail(&last)
        });
        checks.check("copilot -p exited 0", run.status.is_some_and(|s| s.success()), || run.describe());
        drop(server);

        let agent2 = copilot_agent(Obeys::Never);
        let server = Server::with_agent(Arc::clone(&agent2), SERVER_LIFETIME);
        let mut args: Vec<&str> = vec!["-p", "continue"];
        args.extend(COPILOT_TAIL);
        let _run = world.run(&copilot, &args, &copilot_env(&server), Duration::from_secs(120));
        world.save_requests(&server, "pause-copilot-print-continue");
        check_continue_resumes(&mut checks, &server, &agent2, stopped_after);
        checks.finish();
    });
}

#[test]
fn baton_run_copilot_print_relays_twenty_steps_across_contexts() {
    with_cli("relay: baton run copilot -p", &super::copilot::COPILOT, |hosts, entry| {
        let mut checks = Checks::new("relay: baton run copilot -p");
        let world = World::new(hosts);
        world.baton_install("copilot");
        baton_config(&world, "relay");
        let agent = copilot_agent(Obeys::EvenLegs);
        let server = Server::with_agent(Arc::clone(&agent), SERVER_LIFETIME);
        let copilot = named_command(&world, "copilot", entry).display().to_string();
        let mut args: Vec<&str> = vec!["run", "--", copilot.as_str(), "-p", TASK];
        args.extend(COPILOT_TAIL);
        let run = world.run(Path::new(common::BATON), &args, &copilot_env(&server), Duration::from_secs(240));
        world.save_requests(&server, "relay-copilot-print");
        eprintln!("real hosts: relay: baton run copilot stderr (tail):\n{}", common_tail(&run.stderr));
        check_relay(&mut checks, &world, &agent, &server, &run, LegEnds::ByTheRelay);
        checks.finish();
    });
}

/// The legs of the one `baton run` in `world`, from its run record.
pub(super) fn run_legs(world: &World) -> Vec<serde_json::Value> {
    let dir = world.sandbox.state_dir().join("runs");
    let record = std::fs::read_dir(&dir).into_iter().flatten().flatten().find_map(|entry| {
        let value: serde_json::Value = serde_json::from_slice(&std::fs::read(entry.path()).ok()?).ok()?;
        Some(if value["legs"].is_array() { value } else { value["data"].clone() })
    });
    record.and_then(|r| r["legs"].as_array().cloned()).unwrap_or_default()
}
