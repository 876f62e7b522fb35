//! Issue 21: baton's status line on the hosts that run a command one (Qwen Code, Factory
//! Droid, GitHub Copilot CLI), each interactive in tmux against the stand-in: the user's
//! own statusline is kept (wrapped: here it only saves the payload and prints nothing,
//! so baton's own line is shown), the pane shows baton's line with the figure of the
//! session's last reply, the bridge holds that figure under the session's id (the one
//! the host's hooks use), and a hook with nothing but that id takes its figure from the
//! bridge; then the install / doctor / uninstall round trip of the statusline entry.
//! Also Kilo CLI's brief in the next session's first request and the pause's stop.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::claude_code_screen::{meter_used, save_pane};
use super::opencode_kilo::kilo_run;
use super::*;
use real_hosts_support::chat_hosts::{QWEN, with_cli};

/// baton's line in the pane: the lowest row with `│` separators and a meter (a TUI's
/// banner may be drawn in block characters too).
fn statusline_row(pane: &str) -> Option<String> {
    pane.lines()
        .rev()
        .find(|l| l.contains(" \u{2502} ") && meter_used(l).is_some())
        .map(|l| l.trim().to_string())
}
use real_hosts_support::server::FINAL_TEXT;
use real_hosts_support::{Tmux, tmux_available};

const PANE_PROMPT: &str = "Run the scripted steps, one shell command at a time.";

/// The steps of a session ending at `last_pct` % of `window`, its last tool call at
/// 66 % (WARNING) so the hooks run for it.
fn script(window: u64, last_pct: u64) -> Vec<Step> {
    let at = |pct: u64| window * pct / 100;
    vec![
        Step::tool(at(10), "echo step 0"),
        Step::tool(at(30), "echo step 1"),
        Step::tool(at(66), "echo step 2"),
        Step::text(at(last_pct)),
    ]
}

/// The JSON file at `path`, or `Value::Null`.
fn read_json(path: &Path) -> Value {
    std::fs::read(path).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or(Value::Null)
}

fn write_json(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("folder");
    std::fs::write(path, format!("{value:#}\n")).expect("write settings");
}

/// The user's own statusline before baton: it saves the payload and prints nothing.
fn capture_command(world: &World, host: &str) -> (String, PathBuf) {
    let path = world.root().join("logs").join(format!("{host}-statusline-payload.json"));
    std::fs::create_dir_all(path.parent().expect("logs")).expect("logs");
    (format!("cat > {}", path.display()), path)
}

/// The bridge baton's statusline wrote for `session`.
fn bridge(world: &World, session: &str) -> Value {
    read_json(&world.sandbox.tmp().join(format!("claude-ctx-{session}.json")))
}

/// `baton hook` with a PostToolUse naming only the session (no transcript), in the host's
/// hook environment (`mark` set): its answer.
fn bare_hook(world: &World, session: &str, mark: &str) -> String {
    let project = world.project().display().to_string();
    let mut env = world.env();
    env.push((mark.to_string(), project.clone()));
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let payload = json!({"hook_event_name": "PostToolUse", "session_id": session, "cwd": project,
                         "tool_name": "run_shell_command", "tool_input": {"command": "echo x"}});
    let output = world.sandbox.run_with(&["hook"], payload.to_string().as_bytes(), &pairs);
    common::stdout(&output)
}

/// What one host's statusline scenario needs to know of it.
struct PaneHost {
    name: &'static str,
    /// As doctor names it.
    display: &'static str,
    id: &'static str,
    /// The environment variable its hooks get (how baton tells it apart).
    mark: &'static str,
    window: u64,
    /// What the pane shows once the TUI waits for a prompt.
    ready: &'static [&'static str],
    /// Its hooks warn at the session's 66 % call. Not Copilot CLI's interactive ones: at
    /// PostToolUse the call's usage record is not in its event log yet, nor the line
    /// re-rendered (1.0.102), so the hook still has the previous call's 30 %.
    hooks_warn: bool,
}

/// The shared part: start `program args` in tmux, run the script, read the pane; check the
/// line, the bridge, the hook and the session's state. Returns the captured payload.
#[allow(clippy::too_many_arguments)]
fn pane_session(
    checks: &mut Checks,
    world: &World,
    server: &Server,
    host: &PaneHost,
    program: &Path,
    args: &[&str],
    extra_env: &[(&str, String)],
    payload_path: &Path,
    last_pct: u64,
) -> Option<Value> {
    if !tmux_available() && real_hosts_support::mode() != real_hosts_support::Mode::Required {
        real_hosts_support::skipped(host.name, "tmux is not on PATH");
        return None;
    }
    let mut env = world.env();
    env.extend(extra_env.iter().map(|(k, v)| (k.to_string(), v.clone())));
    let tmux = Tmux::start(world, &env, program, args).unwrap_or_else(|e| panic!("{}: {e}", host.name));
    let ready = tmux.wait_for(Duration::from_secs(45), |pane| host.ready.iter().any(|r| pane.contains(r)));
    checks.check(&format!("{} started (prompt shown)", host.name), ready, || tmux.pane());
    std::thread::sleep(Duration::from_secs(2));
    let sent = tmux.type_line(PANE_PROMPT, || !server.main_requests().is_empty());
    checks.check("prompt submitted", sent, || tmux.pane());
    let finished = tmux.wait_for(Duration::from_secs(60), |pane| pane.contains(FINAL_TEXT));
    checks.check("session ran all turns", finished, || format!("{}\n{}", tmux.pane(), server.summary()));
    let shown = tmux.wait_for(Duration::from_secs(15), |pane| {
        statusline_row(pane).is_some_and(|row| meter_used(&row) == Some(last_pct as u32))
    });
    let pane = save_pane(world, &tmux, &format!("{}-statusline", host.id));
    world.save_requests(server, &format!("{}-statusline", host.id));
    drop(tmux);
    let row = statusline_row(&pane).unwrap_or_default();
    checks.check(
        &format!("the pane shows baton's line with the last reply's figure ({last_pct} %)"),
        shown,
        || pane.clone(),
    );
    let payload = read_json(payload_path);
    checks.check(
        "the user's own statusline (kept, wrapped) got the host's payload",
        payload.is_object(),
        || format!("{}: {payload}", payload_path.display()),
    );
    let session = payload["session_id"].as_str().unwrap_or_default().to_string();
    let bridged = bridge(world, &session);
    checks.check(
        &format!(
            "the bridge holds the line's figure ({last_pct} % of {}) under the session's id",
            host.window
        ),
        bridged["used_pct"].as_u64() == Some(last_pct)
            && bridged["context_window_size"].as_u64() == Some(host.window),
        || format!("session {session:?}: {bridged}\nrow: {row}"),
    );
    let warned = world.sandbox.state_dir().join("sessions").join(format!("claude-ctx-{session}-warned.json"));
    if host.hooks_warn {
        checks.check(
            "the host's hooks counted the same session id (their WARNING state is under it)",
            !session.is_empty() && warned.is_file(),
            || format!("{} missing", warned.display()),
        );
    } else {
        // The hook reads the event log of its session id: the folder the payload names.
        let folder = world.sandbox.home().join(".copilot").join("session-state").join(&session);
        checks.check(
            "the payload's session is the one whose event log the hooks read",
            !session.is_empty()
                && folder.join("events.jsonl").is_file()
                && payload["transcript_path"].as_str() == Some(folder.to_string_lossy().as_ref()),
            || format!("{}: {}", folder.display(), payload["transcript_path"]),
        );
    }
    let answer = bare_hook(world, &session, host.mark);
    checks.check(
        "a hook naming only the session takes its figure from the bridge (CRITICAL at the line's figure)",
        answer.contains(&format!("CONTEXT CRITICAL: Usage at {last_pct}%")),
        || answer.clone(),
    );
    Some(payload)
}

/// The install / doctor / uninstall round trip of the statusline entry at `pointer` of
/// `settings`: doctor says baton's line wraps the user's; uninstall puts the user's back.
fn round_trip(
    checks: &mut Checks,
    world: &World,
    host: &PaneHost,
    settings: &Path,
    pointer: &str,
    user: &str,
) {
    let doctor = world.baton(&["doctor", "--host", host.id]);
    let text = common::stdout(&doctor);
    let name = format!("statusLine ({})", host.display);
    checks.check(
        "doctor checks baton's statusline, wrapping the user's",
        text.lines().any(|l| l.contains(&name) && l.contains("wrapping") && l.contains(user)),
        || text.clone(),
    );
    let uninstall = world.baton(&["uninstall", "--host", host.id]);
    let after = read_json(settings);
    checks.check(
        "uninstall puts the user's own statusline back exactly",
        uninstall.status.success()
            && after.pointer(pointer) == Some(&json!({"type": "command", "command": user})),
        || format!("{}\n{after:#}", common::stdout(&uninstall)),
    );
    let doctor = world.baton(&["doctor", "--host", host.id]);
    let text = common::stdout(&doctor);
    checks.check(
        "doctor then says the statusline is not baton's",
        text.lines().any(|l| l.contains(&name) && l.contains("is not baton")),
        || text.clone(),
    );
    let install = world.baton(&["install", "--host", host.id, "--statusline-only"]);
    let line = read_json(settings).pointer(&format!("{pointer}/command")).cloned().unwrap_or_default();
    checks.check(
        "install --statusline-only wraps it again",
        install.status.success()
            && line.as_str().is_some_and(|c| c.contains(&format!("statusline --host {} --wrap", host.id))),
        || format!("{}\n{line}", common::stdout(&install)),
    );
}

const QWEN_HOST: PaneHost = PaneHost {
    name: "qwen interactive: statusline",
    display: "Qwen Code",
    id: "qwen",
    mark: "QWEN_PROJECT_DIR",
    window: real_hosts_support::chat_hosts::QWEN_WINDOW,
    ready: &["Type your message", "for shortcuts"],
    hooks_warn: true,
};

/// Qwen Code 0.15.10 interactive: `ui.statusLine`, its payload's `current_usage` (the
/// prompt's tokens) over qwen3-coder-plus's 1M window (the payload's own window is 0).
#[test]
fn qwen_code_pane_shows_batons_line() {
    with_cli(QWEN_HOST.name, &QWEN, |hosts, qwen| {
        let mut checks = Checks::new("qwen interactive: statusline");
        let world = World::new(hosts);
        let server = Server::start(script(QWEN_HOST.window, 76), SERVER_LIFETIME);
        world.qwen_setup(&server);
        let path = world.qwen_settings_path();
        let (user, payload_path) = capture_command(&world, "qwen");
        let mut settings = read_json(&path);
        settings["ui"]["statusLine"] = json!({"type": "command", "command": user});
        // The script reaches 76 %: Qwen Code's compression point (0.7) is moved past it.
        settings["model"]["chatCompression"] = json!({"contextPercentageThreshold": 0.9});
        write_json(&path, &settings);
        world.baton_install("qwen");
        let node = world.hosts.node_dir.join("node");
        let entry = qwen.display().to_string();
        let env = [("STANDIN_KEY", "sk-standin".to_string()), ("QWEN_CODE_NO_RELAUNCH", "true".to_string())];
        let started = Instant::now();
        pane_session(
            &mut checks,
            &world,
            &server,
            &QWEN_HOST,
            &node,
            &[&entry, "--yolo"],
            &env,
            &payload_path,
            76,
        );
        eprintln!("real hosts: qwen pane session took {:.1} s", started.elapsed().as_secs_f64());
        round_trip(&mut checks, &world, &QWEN_HOST, &path, "/ui/statusLine", &user);
        checks.finish();
    });
}

const DROID_HOST: PaneHost = PaneHost {
    name: "droid interactive: statusline",
    display: "Factory Droid",
    id: "droid",
    mark: "FACTORY_PROJECT_DIR",
    window: real_hosts_support::chat_hosts::DROID_WINDOW,
    ready: &["for help", "shortcuts", "Ask Droid", ">"],
    hooks_warn: true,
};

/// Factory Droid 0.225.2 interactive: `statusLine` at the top of its settings, its
/// payload's `context.last_call_compaction_tokens` over `context.token_limit` (its
/// compaction limit, 200k here).
#[test]
fn factory_droid_pane_shows_batons_line() {
    use real_hosts_support::chat_hosts::DROID;
    with_cli(DROID_HOST.name, &DROID, |hosts, droid| {
        let mut checks = Checks::new("droid interactive: statusline");
        let world = World::new(hosts);
        let server = Server::start(script(DROID_HOST.window, 76), SERVER_LIFETIME);
        world.droid_setup(&server);
        let path = world.droid_settings_path();
        let (user, payload_path) = capture_command(&world, "droid");
        let mut settings = read_json(&path);
        settings["statusLine"] = json!({"type": "command", "command": user});
        settings["model"] = json!("custom:Standin-0");
        write_json(&path, &settings);
        world.baton_install("droid");
        let env = [
            ("FACTORY_AIRGAP_ENABLED", "true".to_string()),
            ("FACTORY_DROID_AUTO_UPDATE_ENABLED", "false".to_string()),
        ];
        let started = Instant::now();
        pane_session(
            &mut checks,
            &world,
            &server,
            &DROID_HOST,
            droid,
            &["--auto", "high"],
            &env,
            &payload_path,
            76,
        );
        eprintln!("real hosts: droid pane session took {:.1} s", started.elapsed().as_secs_f64());
        round_trip(&mut checks, &world, &DROID_HOST, &path, "/statusLine", &user);
        checks.finish();
    });
}

const COPILOT_HOST: PaneHost = PaneHost {
    name: "copilot interactive: statusline",
    display: "GitHub Copilot CLI",
    id: "copilot",
    mark: "COPILOT_PROJECT_DIR",
    window: super::copilot::WINDOW,
    ready: &["for shortcuts", "Type @", "Ask Copilot", "\u{276f}"],
    hooks_warn: false,
};

/// GitHub Copilot CLI 1.0.102 interactive, offline: `statusLine` in the user's
/// `~/.copilot/settings.json`, its payload's `current_context_tokens` over
/// `displayed_context_limit` (claude-sonnet-4.5's 168,000 prompt tokens).
#[test]
fn copilot_cli_pane_shows_batons_line() {
    with_cli(COPILOT_HOST.name, &super::copilot::COPILOT, |hosts, copilot| {
        let mut checks = Checks::new("copilot interactive: statusline");
        let world = World::new(hosts);
        let server = Server::start(script(COPILOT_HOST.window, 76), SERVER_LIFETIME);
        let path = world.sandbox.home().join(".copilot").join("settings.json");
        let (user, payload_path) = capture_command(&world, "copilot");
        write_json(&path, &json!({"statusLine": {"type": "command", "command": user}}));
        world.baton_install("copilot");
        let project = world.project().display().to_string();
        let config = world.sandbox.home().join(".copilot").join("config.json");
        let mut trusted = read_json(&config);
        if !trusted.is_object() {
            trusted = json!({});
        }
        trusted["trusted_folders"] = json!([project]);
        write_json(&config, &trusted);
        let env = [
            ("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", server.base_url())),
            ("COPILOT_PROVIDER_API_KEY", "sk-standin".to_string()),
            ("COPILOT_OFFLINE", "true".to_string()),
            ("COPILOT_MODEL", "claude-sonnet-4.5".to_string()),
            ("COPILOT_AUTO_UPDATE", "false".to_string()),
        ];
        let args = ["--allow-all-tools", "--no-auto-update"];
        let started = Instant::now();
        pane_session(&mut checks, &world, &server, &COPILOT_HOST, copilot, &args, &env, &payload_path, 76);
        eprintln!("real hosts: copilot pane session took {:.1} s", started.elapsed().as_secs_f64());
        round_trip(&mut checks, &world, &COPILOT_HOST, &path, "/statusLine", &user);
        checks.finish();
    });
}

/// Kilo CLI 7.7.7 with baton's plugin: the pause's stop (`session.abort`) within the grace
/// calls after CRITICAL, before the session's end (what `opencode_kilo.rs` shows for
/// OpenCode, on Kilo CLI's own CLI).
#[test]
fn kilo_run_is_stopped_by_the_pause() {
    use super::opencode_kilo::KILO;
    with_cli("kilo run: the pause's stop", &KILO, |hosts, kilo| {
        let mut checks = Checks::new("kilo run: the pause's stop");
        let world = World::new(hosts);
        world.baton_install("kilo");
        // CRITICAL (75 % of 200k) at the first call, then more calls than the pause's 3
        // grace calls (few turns: each costs Kilo CLI about 2 s here, its start some 25 s).
        let mut steps: Vec<Step> =
            (0..6).map(|n| Step::tool(150_000 + n * 1_000, &format!("echo step {n}"))).collect();
        steps.push(Step::text(157_000));
        let server = Server::start(steps, SERVER_LIFETIME);
        let run = kilo_run(&world, kilo, &server, PROMPT);
        world.save_requests(&server, "01-kilo_run");
        let requests = first_per_turn(server.main_requests());
        let critical_turn = turns_with(&requests, CRITICAL).first().copied();
        let last_turn = requests.last().map(|r| r.turn);
        checks.check(
            "CRITICAL reached the model, and the handoff was written",
            critical_turn.is_some() && world.handoff_path().is_file(),
            || server.summary(),
        );
        checks.check(
            "the pause stopped the session within the 3 grace calls after CRITICAL, before its end",
            matches!((critical_turn, last_turn), (Some(c), Some(l)) if l >= c && l - c <= 3)
                && last_turn.is_some_and(|l| l < 6),
            || {
                format!(
                    "critical in turn {critical_turn:?}, last request turn {last_turn:?}\n{}",
                    server.summary()
                )
            },
        );
        checks.check("kilo run exited", run.status.is_some(), || run.describe());
        checks.finish();
    });
}

/// Kilo CLI 7.7.7: the brief of a handoff written on this machine (by a Claude Code
/// session at CRITICAL, through its bridge) in the next Kilo session's first request.
#[test]
fn kilo_run_briefs_the_next_session() {
    use super::opencode_kilo::KILO;
    with_cli("kilo run: the brief", &KILO, |hosts, kilo| {
        let mut checks = Checks::new("kilo run: the brief");
        let world = World::new(hosts);
        world.baton_install("kilo");
        // A session at 80 % of its window: its bridge, then one tool call's hook.
        let session = "kilo-brief-0001";
        let now = common::now();
        let bridge = json!({"session_id": session, "remaining_percentage": 20, "used_pct": 80,
                            "timestamp": now, "used_tokens": 160_000, "context_window_size": 200_000});
        std::fs::write(world.sandbox.tmp().join(format!("claude-ctx-{session}.json")), bridge.to_string())
            .expect("bridge");
        let project = world.project().display().to_string();
        let env = world.env();
        let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let payload = json!({"hook_event_name": "PostToolUse", "session_id": session, "cwd": project,
                             "tool_name": "Bash", "tool_input": {"command": "echo x"}});
        let answer =
            common::stdout(&world.sandbox.run_with(&["hook"], payload.to_string().as_bytes(), &pairs));
        checks.check(
            "the earlier session was told CRITICAL and its handoff written",
            answer.contains(CRITICAL) && world.handoff_path().is_file(),
            || answer.clone(),
        );
        let server = Server::start(vec![Step::text(20_000)], SERVER_LIFETIME);
        let _run = kilo_run(&world, kilo, &server, "Carry on.");
        world.save_requests(&server, "01-kilo_run");
        check_brief_in_first(&mut checks, "", &server, true);
        drop(server);
        checks.finish();
    });
}
