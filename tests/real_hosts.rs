//! End-to-end against the real hosts: Claude Code, Codex and Gemini CLI (pinned versions
//! from npm, see `real_hosts_support`) run scripted sessions against the stand-in model
//! server, with baton registered by `baton install`; the assertions are on what the model
//! received (the requests the server recorded), on `.planning/HANDOFF.json` and on baton's
//! refs. Skipped with a printed reason when the CLIs are not available, unless
//! `BATON_REAL_HOSTS=required` (then missing CLIs are installed, and failures fail).

use crate::common;
use crate::real_hosts_support;

use std::time::Duration;

use real_hosts_support::server::{Recorded, Server, Step};
use real_hosts_support::{CLAUDE_200K_MODEL, CODEX_EFFECTIVE_WINDOW, GEMINI_WINDOW, World, with_hosts};

const WARNING: &str = "CONTEXT WARNING";
const CRITICAL: &str = "CONTEXT CRITICAL";
const BRIEF: &str = "baton resume brief";
const SERVER_LIFETIME: Duration = Duration::from_secs(180);

/// Collects the outcome of every assertion of a scenario, so one failure does not hide
/// the others; fails the test at the end with all of them.
struct Checks {
    scenario: &'static str,
    failed: Vec<String>,
    passed: Vec<String>,
}

impl Checks {
    fn new(scenario: &'static str) -> Checks {
        Checks { scenario, failed: vec![], passed: vec![] }
    }

    fn check(&mut self, name: &str, ok: bool, detail: impl FnOnce() -> String) {
        if ok {
            self.passed.push(name.to_string());
        } else {
            self.failed.push(format!("{name}: {}", detail()));
        }
    }

    fn finish(self) {
        for name in &self.passed {
            eprintln!("real hosts: {}: PASS {name}", self.scenario);
        }
        for failure in &self.failed {
            eprintln!("real hosts: {}: FAIL {failure}", self.scenario);
        }
        assert!(
            self.failed.is_empty(),
            "{}: {} check(s) failed:\n{}",
            self.scenario,
            self.failed.len(),
            self.failed.join("\n\n")
        );
    }
}

/// The turns (indexes into the main requests) whose request mentions `needle`.
fn turns_with(requests: &[Recorded], needle: &str) -> Vec<usize> {
    requests.iter().filter(|r| r.text().contains(needle)).map(|r| r.turn).collect()
}

/// The first main request of each turn (a host may retry a turn; the first is what counts).
fn first_per_turn(requests: Vec<Recorded>) -> Vec<Recorded> {
    let mut out: Vec<Recorded> = vec![];
    for request in requests {
        if !out.iter().any(|r| r.turn == request.turn) {
            out.push(request);
        }
    }
    out
}

/// The script of a session that crosses 65 % on turn `warn_turn`'s reply and 75 % on
/// `critical_turn`'s, for a window of `window` tokens.
fn crossing_script(window: u64) -> Vec<Step> {
    let at = |pct: f64| (window as f64 * pct / 100.0) as u64;
    vec![
        Step::tool(at(20.0), "echo step 0"),
        Step::tool(at(60.0), "echo step 1"), // within 10 points of 65 %: a late transcript line is waited for
        Step::tool(at(67.5), "echo step 2"), // crosses 65 %: the warning belongs in turn 3's request
        Step::tool(at(70.0), "echo step 3"),
        Step::tool(at(80.0), "echo step 4"), // crosses 75 %: CRITICAL in turn 5's request
        Step::tool(at(81.0), "echo step 5"),
        Step::text(at(81.5)),
    ]
}

const PROMPT: &str = "Run the scripted steps, one shell command at a time.";

/// The checks every host shares on a crossing session: the warning first reaches the
/// model in the request right after the crossing call (`late_ok`: or the one after), not
/// before; CRITICAL likewise; the handoff and the ref exist afterwards.
fn check_crossing(
    checks: &mut Checks,
    world: &World,
    server: &Server,
    window: u64,
    late_ok: bool,
    refs_before: &[String],
) {
    let requests = first_per_turn(server.main_requests());
    let script = crossing_script(window);
    check_stated_figure(checks, &requests, WARNING, &script, window);
    check_stated_figure(checks, &requests, CRITICAL, &script, window);
    let warned = turns_with(&requests, WARNING);
    let critical = turns_with(&requests, CRITICAL);
    let summary =
        || format!("warning in turns {warned:?}, critical in {critical:?}; requests:\n{}", server.summary());
    checks.check("session ran all turns", requests.len() >= 7, summary);
    let first_warning = warned.first().copied();
    let expected_warning =
        if late_ok { first_warning == Some(3) || first_warning == Some(4) } else { first_warning == Some(3) };
    checks.check("warning first in the request right after the crossing call", expected_warning, summary);
    let first_critical = critical.first().copied();
    let expected_critical = if late_ok {
        first_critical == Some(5) || first_critical == Some(6)
    } else {
        first_critical == Some(5)
    };
    checks.check("critical first in the request right after its crossing call", expected_critical, summary);
    let handoff: serde_json::Value = std::fs::read(world.handoff_path())
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let trigger = handoff["baton"]["trigger"].as_str().unwrap_or_default().to_string();
    checks.check(
        "CRITICAL wrote the handoff (.planning/HANDOFF.json, trigger critical-context)",
        trigger == "critical-context",
        || format!("{}: trigger {trigger:?}", world.handoff_path().display()),
    );
    let refs = world.baton_refs();
    let new_refs: Vec<&String> = refs.iter().filter(|r| !refs_before.contains(r)).collect();
    checks.check("CRITICAL wrote a checkpoint ref (refs/baton/...)", !new_refs.is_empty(), || {
        format!("refs before: {refs_before:?}, after: {refs:?}")
    });
}

/// The figure a warning states (where `level` first reaches the model) is the newest
/// reply's, the one the model really had when the hook ran, or says it is an estimate.
fn check_stated_figure(
    checks: &mut Checks,
    requests: &[Recorded],
    level: &str,
    script: &[Step],
    window: u64,
) {
    let first = requests.iter().find_map(|r| {
        let text = r.text();
        text.find(level).map(|at| (r.turn, text[at..].chars().take(700).collect::<String>()))
    });
    let Some((turn, text)) = first else { return };
    let newest = script
        .get(turn.saturating_sub(1))
        .map(|s| (s.prompt_tokens as f64 * 100.0 / window as f64).round() as u64);
    let stated = usage_percent(&text);
    let exact = matches!((stated, newest), (Some(a), Some(b)) if a.abs_diff(b) <= 1);
    let estimate = text.to_lowercase().contains("estimate");
    checks.check(
        &format!("{level}: states the newest reply's figure, or says it is an estimate"),
        exact || estimate,
        || format!("turn {turn}: stated {stated:?}, newest reply {newest:?}: {text}"),
    );
}

/// The `N` of "Usage at N%" in a warning.
fn usage_percent(text: &str) -> Option<u64> {
    let rest = &text[text.find("Usage at ")? + "Usage at ".len()..];
    rest[..rest.find('%')?].trim().parse().ok()
}

/// The next session's first request carries the resume brief.
fn check_brief_in_first(checks: &mut Checks, label: &str, server: &Server, expected: bool) {
    let requests = server.main_requests();
    let first = requests.first().map(|r| r.text().contains(BRIEF));
    let name = if expected {
        "next session's first request has the resume brief"
    } else {
        "next session's first request has no resume brief"
    };
    checks.check(&format!("{label}{name}"), first == Some(expected), || {
        format!("first request has the brief: {first:?}; requests:\n{}", server.summary())
    });
}

#[test]
fn claude_code_print_mode() {
    with_hosts("claude -p", |hosts| {
        let mut checks = Checks::new("claude -p");
        let world = World::new(hosts);
        world.claude_setup();

        // 1. The default model (1M window) at 13-15 %: nothing to warn about.
        let server = Server::start(
            vec![
                Step::tool(40_000, "echo step 0"),
                Step::tool(132_000, "echo step 1"),
                Step::tool(152_000, "echo step 2"),
                Step::text(155_000),
            ],
            SERVER_LIFETIME,
        );
        let run = world.claude_print(&server, None, PROMPT);
        world.save_requests(&server, "01-claude_print");
        let requests = server.main_requests();
        checks.check("default model: session ran", requests.len() >= 4, || {
            format!("{}\n{}", run.describe(), server.summary())
        });
        let models: Vec<String> =
            requests.iter().filter_map(|r| r.body["model"].as_str().map(str::to_string)).collect();
        checks.check(
            "default model: is claude-opus-5-5",
            models.iter().all(|m| m.starts_with("claude-opus-5-5")),
            || format!("{models:?}"),
        );
        checks.check(
            "default model: no warning at 13-15 % of 1M",
            turns_with(&requests, "CONTEXT ").is_empty(),
            || format!("warned in turns {:?}", turns_with(&requests, "CONTEXT ")),
        );
        checks.check("default model: no handoff", !world.handoff_path().exists(), || {
            "HANDOFF.json written".into()
        });
        drop(server);

        // 2. A 200k model crossing 65 % and 75 %.
        let server = Server::start(crossing_script(200_000), SERVER_LIFETIME);
        let refs_before = world.baton_refs();
        let run = world.claude_print(&server, Some(CLAUDE_200K_MODEL), PROMPT);
        world.save_requests(&server, "02-claude_print");
        check_brief_in_first(&mut checks, "", &server, false);
        check_crossing(&mut checks, &world, &server, 200_000, true, &refs_before);
        checks.check("claude -p succeeded", run.status.is_some_and(|s| s.success()), || run.describe());
        drop(server);

        // 3. The next session starts with the brief.
        let server = Server::start(vec![Step::text(20_000)], SERVER_LIFETIME);
        let _run = world.claude_print(&server, Some(CLAUDE_200K_MODEL), "Carry on.");
        world.save_requests(&server, "03-claude_print");
        check_brief_in_first(&mut checks, "", &server, true);
        // The session that wrote the handoff has ended (SessionEnd): the brief must not call it active.
        let first = server.main_requests().first().map(|r| r.text()).unwrap_or_default();
        checks.check(
            "the brief does not call the ended session active",
            !first.contains("seems active"),
            || first.find(BRIEF).map(|at| first[at..].chars().take(900).collect()).unwrap_or_default(),
        );
        checks.finish();
    });
}

#[test]
fn claude_code_failed_tool_call_is_warned() {
    with_hosts("claude -p failure", |hosts| {
        let mut checks = Checks::new("claude -p failure");
        let world = World::new(hosts);
        world.claude_setup();
        let server = Server::start(
            vec![
                Step::tool(40_000, "echo step 0"),
                Step::tool(135_000, "ls /baton-e2e-missing-folder"),
                Step::tool(136_000, "ls /baton-e2e-missing-folder-too"),
                Step::text(137_000),
            ],
            SERVER_LIFETIME,
        );
        let run = world.claude_print(&server, Some(CLAUDE_200K_MODEL), PROMPT);
        world.save_requests(&server, "04-claude_print");
        let requests = first_per_turn(server.main_requests());
        checks.check("session ran", requests.len() >= 4, || {
            format!("{}\n{}", run.describe(), server.summary())
        });
        let failed = requests.get(2).map(|r| r.text().contains("is_error\":true")).unwrap_or(false);
        checks.check("the host saw the tool call fail", failed, || server.summary());
        let warned = turns_with(&requests, WARNING);
        checks.check(
            "a failed tool call crossing 65 % is warned (PostToolUseFailure)",
            warned.first().is_some_and(|t| *t == 2 || *t == 3),
            || format!("warning in turns {warned:?}\n{}", server.summary()),
        );
        checks.finish();
    });
}

#[test]
fn codex_exec() {
    with_hosts("codex exec", |hosts| {
        let mut checks = Checks::new("codex exec");
        let world = World::new(hosts);
        // Codex works with 95 % of the configured window (it reports 190,000 of 200,000).
        let server = Server::start(crossing_script(CODEX_EFFECTIVE_WINDOW), SERVER_LIFETIME);
        world.codex_setup(&server);
        let refs_before = world.baton_refs();
        let run = world.codex_exec(PROMPT);
        world.save_requests(&server, "05-codex_exec");
        check_brief_in_first(&mut checks, "", &server, false);
        check_crossing(&mut checks, &world, &server, CODEX_EFFECTIVE_WINDOW, false, &refs_before);
        checks.check("codex exec succeeded", run.status.is_some_and(|s| s.success()), || run.describe());
        drop(server);

        // Control: a handoff written by `baton pause` reaches Codex's next session (so a
        // missing brief above means no handoff was written, not a lost SessionStart).
        let control = World::new(hosts);
        let env = control.env();
        let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let paused = control.sandbox.run_with(&["pause", "--checkpoint", "off"], b"", &pairs);
        checks.check("control: baton pause wrote a handoff", control.handoff_path().is_file(), || {
            format!("{}\n{}", common::stdout(&paused), common::stderr(&paused))
        });
        let server = Server::start(vec![Step::text(20_000)], SERVER_LIFETIME);
        control.codex_setup(&server);
        let _run = control.codex_exec("Carry on.");
        control.save_requests(&server, "control-codex_exec");
        check_brief_in_first(&mut checks, "control: ", &server, true);
        drop(server);

        let server = Server::start(vec![Step::text(20_000)], SERVER_LIFETIME);
        // The provider's port changed: rewrite the config for the new server.
        std::fs::remove_file(world.codex_home().join("config.toml")).ok();
        world.codex_setup(&server);
        let _run = world.codex_exec("Carry on.");
        world.save_requests(&server, "06-codex_exec");
        check_brief_in_first(&mut checks, "", &server, true);
        checks.finish();
    });
}

#[test]
fn gemini_cli() {
    with_hosts("gemini", |hosts| {
        let mut checks = Checks::new("gemini");
        let world = World::new(hosts);
        world.gemini_setup();

        // 1. Low usage: PreCompress fires before every model call; nothing calls for a handoff.
        let server = Server::start(
            vec![Step::tool(50_000, "echo step 0"), Step::tool(60_000, "echo step 1"), Step::text(70_000)],
            SERVER_LIFETIME,
        );
        let run = world.gemini_print(&server, PROMPT);
        world.save_requests(&server, "07-gemini_print");
        let requests = first_per_turn(server.main_requests());
        checks.check("low usage: session ran", requests.len() >= 3, || {
            format!("{}\n{}", run.describe(), server.summary())
        });
        checks.check("low usage: no warning", turns_with(&requests, "CONTEXT ").is_empty(), || {
            server.summary()
        });
        checks.check(
            "low usage: no handoff after every-turn PreCompress",
            !world.handoff_path().exists(),
            || std::fs::read_to_string(world.handoff_path()).unwrap_or_default().chars().take(600).collect(),
        );
        let refs = world.baton_refs();
        checks.check("low usage: no baton ref", refs.is_empty(), || format!("refs: {refs:?}"));
        drop(server);

        // 2. Crossing 65 % and 75 % of the 1M window; its first request must have no brief.
        let server = Server::start(crossing_script(GEMINI_WINDOW), SERVER_LIFETIME);
        let refs_before = world.baton_refs();
        let run = world.gemini_print(&server, PROMPT);
        world.save_requests(&server, "08-gemini_print");
        check_brief_in_first(&mut checks, "", &server, false);
        check_crossing(&mut checks, &world, &server, GEMINI_WINDOW, false, &refs_before);
        checks.check("gemini succeeded", run.status.is_some_and(|s| s.success()), || run.describe());
        drop(server);

        // 3. The next session starts with the brief.
        let server = Server::start(vec![Step::text(20_000)], SERVER_LIFETIME);
        let _run = world.gemini_print(&server, "Carry on.");
        world.save_requests(&server, "09-gemini_print");
        check_brief_in_first(&mut checks, "", &server, true);
        checks.finish();
    });
}

/// What a correct CRITICAL handoff holds after a facts session, and the brief after it.
const FACTS_PROMPT: &str = "Add the client limits file, then run the limit tests.";
const FACTS_FILE: &str = "notes/limits.md";
const FACTS_FAILING: &str = "ls /baton-e2e-missing-folder";
const FACTS_PROGRESS: &str = "Progress: notes/limits.md is written; the limit test run failed";

/// The checks every host shares on a facts session: HANDOFF.json (markdown beside it) has
/// the todos or the agent's stated progress, the file written, the last request and the
/// last failing command; the next session's first request carries them in its brief.
fn check_handoff_facts(checks: &mut Checks, world: &World, todos_expected: bool) {
    let handoff: serde_json::Value = std::fs::read(world.handoff_path())
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let shown = || format!("{handoff:#}").chars().take(4000).collect::<String>();
    checks.check("CRITICAL handoff written", handoff["baton"]["trigger"] == "critical-context", shown);
    let tasks: Vec<String> = ["completed_tasks", "remaining_tasks"]
        .iter()
        .flat_map(|k| handoff[k].as_array().cloned().unwrap_or_default())
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    if todos_expected {
        checks.check(
            "handoff lists the agent's todos",
            tasks.iter().any(|t| t.contains("Write the limits file"))
                && tasks.iter().any(|t| t.contains("Run the limit tests")),
            || format!("tasks {tasks:?}\n{}", shown()),
        );
    }
    let progress = handoff["baton"]["agent_progress"]["text"].as_str().unwrap_or_default().to_string();
    checks.check(
        "handoff carries the agent's latest statement of progress, marked as its words",
        progress.contains(FACTS_PROGRESS)
            && handoff["context_notes"].as_str().is_some_and(|n| n.contains("agent's own words")),
        shown,
    );
    let files: Vec<String> = handoff["baton"]["files_touched"]
        .as_array()
        .map(|a| a.iter().filter_map(|f| f.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    checks.check("handoff lists the file written", files.iter().any(|f| f == FACTS_FILE), || {
        format!("files {files:?}\n{}", shown())
    });
    let notes = handoff["context_notes"].as_str().unwrap_or_default().to_string();
    checks.check("handoff has the last request", notes.contains(FACTS_PROMPT), shown);
    checks.check(
        "handoff has the last failing command",
        handoff["baton"]["last_failure"]["command"].as_str().is_some_and(|c| c.contains(FACTS_FAILING)),
        shown,
    );
    let commands: Vec<String> = handoff["baton"]["commands_run"]
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["command"].as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    checks.check(
        "handoff lists the commands the agent ran",
        commands.iter().any(|c| c == FACTS_FAILING),
        || format!("commands {commands:?}"),
    );
    let continue_here = handoff["baton"]["continue_here"].as_str().unwrap_or(".planning/.continue-here.md");
    let markdown = std::fs::read_to_string(world.project().join(continue_here)).unwrap_or_default();
    checks.check(
        ".continue-here.md shows the file, the failure and the agent's words",
        markdown.contains(FACTS_FILE)
            && markdown.contains(FACTS_FAILING)
            && markdown.contains(FACTS_PROGRESS),
        || markdown.chars().take(4000).collect(),
    );
}

/// The next session's first request carries the facts in its brief.
fn check_brief_facts(checks: &mut Checks, server: &Server, todos_expected: bool) {
    let first = server.main_requests().first().map(|r| r.text()).unwrap_or_default();
    let brief =
        first.find(BRIEF).map(|at| first[at..].chars().take(6000).collect::<String>()).unwrap_or_default();
    let mut wanted = vec![FACTS_FILE, FACTS_FAILING, FACTS_PROMPT, FACTS_PROGRESS];
    if todos_expected {
        wanted.push("Run the limit tests");
    }
    let missing: Vec<&&str> = wanted.iter().filter(|w| !brief.contains(**w)).collect();
    checks.check(
        "next session's first request: the brief carries the todos or progress, the file, the last request and failure",
        !brief.is_empty() && missing.is_empty(),
        || format!("missing {missing:?} in brief:\n{brief}"),
    );
}

#[test]
fn codex_exec_handoff_facts() {
    with_hosts("codex exec facts", |hosts| {
        let mut checks = Checks::new("codex exec facts");
        let world = World::new(hosts);
        let at = |pct: f64| (CODEX_EFFECTIVE_WINDOW as f64 * pct / 100.0) as u64;
        let progress = format!(
            "{FACTS_PROGRESS} (`{FACTS_FAILING}`: no such folder). Next: create the folder and run the tests again."
        );
        let server = Server::start(
            vec![
                Step::tool(at(20.0), &format!("mkdir -p notes && printf 'free=100\\n' > {FACTS_FILE}"))
                    .saying("I will write the limits file first, then run the tests."),
                Step::tool(at(40.0), FACTS_FAILING),
                Step::tool(at(80.0), "echo step 2").saying(&progress),
                Step::text(at(81.0)),
            ],
            SERVER_LIFETIME,
        );
        world.codex_setup(&server);
        let run = world.codex_exec(FACTS_PROMPT);
        world.save_requests(&server, "10-codex_exec_facts");
        checks.check("codex exec succeeded", run.status.is_some_and(|s| s.success()), || run.describe());
        check_handoff_facts(&mut checks, &world, false);
        drop(server);

        let server = Server::start(vec![Step::text(20_000)], SERVER_LIFETIME);
        std::fs::remove_file(world.codex_home().join("config.toml")).ok();
        world.codex_setup(&server);
        let _run = world.codex_exec("Carry on.");
        world.save_requests(&server, "11-codex_exec_facts");
        check_brief_facts(&mut checks, &server, false);
        checks.finish();
    });
}

#[test]
fn gemini_cli_handoff_facts() {
    with_hosts("gemini facts", |hosts| {
        let mut checks = Checks::new("gemini facts");
        let world = World::new(hosts);
        world.gemini_setup();
        let at = |pct: f64| (GEMINI_WINDOW as f64 * pct / 100.0) as u64;
        let todos = |statuses: [&str; 3]| {
            serde_json::json!({"todos": [
                {"description": "Write the limits file", "status": statuses[0]},
                {"description": "Run the limit tests", "status": statuses[1]},
                {"description": "Fix what the tests find", "status": statuses[2]},
            ]})
        };
        let file = world.project().join(FACTS_FILE).display().to_string();
        let progress = format!("{FACTS_PROGRESS} (`{FACTS_FAILING}`: no such folder). Next: fix the path.");
        let server = Server::start(
            vec![
                Step::call(at(20.0), "write_todos", todos(["in_progress", "pending", "pending"])),
                Step::call(
                    at(30.0),
                    "write_file",
                    serde_json::json!({"file_path": file, "content": "free=100\n"}),
                ),
                Step::call(at(40.0), "write_todos", todos(["completed", "in_progress", "pending"])),
                Step::tool(at(50.0), FACTS_FAILING),
                Step::tool(at(80.0), "echo step 4").saying(&progress),
                Step::text(at(81.0)),
            ],
            SERVER_LIFETIME,
        );
        let run = world.gemini_print(&server, FACTS_PROMPT);
        world.save_requests(&server, "12-gemini_facts");
        checks.check("gemini succeeded", run.status.is_some_and(|s| s.success()), || run.describe());
        check_handoff_facts(&mut checks, &world, true);
        drop(server);

        let server = Server::start(vec![Step::text(20_000)], SERVER_LIFETIME);
        let _run = world.gemini_print(&server, "Carry on.");
        world.save_requests(&server, "13-gemini_facts");
        check_brief_facts(&mut checks, &server, true);
        checks.finish();
    });
}

#[test]
fn claude_code_interactive() {
    with_hosts("claude interactive", |hosts| {
        let mut checks = Checks::new("claude interactive");
        let world = World::new(hosts);
        world.claude_setup();
        let at = |pct: f64| (200_000.0 * pct / 100.0) as u64;
        let script = vec![
            Step::tool(at(20.0), "echo step 0"),
            Step::tool(at(60.0), "echo step 1"), // within 10 points of 65 %: a late transcript line is waited for
            Step::tool(at(67.5), "echo step 2"), // crosses 65 %: the warning belongs in turn 3's request
            Step::tool(at(69.0), "echo step 3"),
            Step::text(at(70.0)),
        ];
        let server = Server::start(script.clone(), SERVER_LIFETIME);
        let mut env = world.env();
        env.extend(world.claude_env(&server).into_iter().map(|(k, v)| (k.to_string(), v)));
        let claude = world.hosts.claude.clone();
        if !real_hosts_support::tmux_available()
            && real_hosts_support::mode() != real_hosts_support::Mode::Required
        {
            real_hosts_support::skipped("claude interactive", "tmux is not on PATH");
            return;
        }
        let tmux = match real_hosts_support::Tmux::start(
            &world,
            &env,
            &claude,
            &["--model", CLAUDE_200K_MODEL, "--allowedTools", "Bash,Read"],
        ) {
            Ok(tmux) => tmux,
            Err(reason) => panic!("claude interactive: {reason}"),
        };
        let ready = tmux.wait_for(Duration::from_secs(30), |pane| {
            pane.contains("for shortcuts") || pane.contains("\u{276f}")
        });
        checks.check("claude started (prompt shown)", ready, || tmux.pane());
        std::thread::sleep(Duration::from_secs(2));
        let sent = tmux.type_line(PROMPT, || !server.main_requests().is_empty());
        checks.check("prompt submitted", sent, || tmux.pane());
        let finished = tmux
            .wait_for(Duration::from_secs(60), |pane| pane.contains(real_hosts_support::server::FINAL_TEXT));
        checks.check("session ran all turns", finished, || format!("{}\n{}", tmux.pane(), server.summary()));
        let statusline_row = |pane: &str| {
            pane.lines()
                .find(|l| l.contains('\u{2502}') && (l.contains('\u{2591}') || l.contains('\u{2588}')))
                .map(str::to_string)
        };
        let shown = tmux.wait_for(Duration::from_secs(10), |pane| {
            statusline_row(pane).is_some_and(|row| row.contains("70%"))
        });
        checks.check("statusline shows 70% after the last reply", shown, || tmux.pane());
        world.save_requests(&server, "01-claude_interactive");
        let requests = first_per_turn(server.main_requests());
        let warned = turns_with(&requests, WARNING);
        check_stated_figure(&mut checks, &requests, WARNING, &script, 200_000);
        checks.check(
            "warning first in the request right after the crossing call",
            warned.first() == Some(&3),
            || format!("warning in turns {warned:?}; requests:\n{}", server.summary()),
        );

        let before = server.recorded().len();
        let compacted = tmux.type_line("/compact", || server.recorded().len() > before)
            && tmux.wait_for(Duration::from_secs(20), |pane| {
                statusline_row(pane).is_some_and(|row| !row.contains("70%"))
            });
        checks.check("/compact ran", compacted, || format!("{}\n{}", tmux.pane(), server.summary()));
        let after = tmux.wait_for(Duration::from_secs(10), |pane| {
            statusline_row(pane).is_some_and(|row| row.contains(" -- ") || row.ends_with(" --"))
        });
        checks.check("after /compact the statusline shows -- (no figure), not 0%", after, || {
            format!("statusline row: {:?}", statusline_row(&tmux.pane()))
        });
        world.save_requests(&server, "02-claude_interactive-compact");
        drop(tmux);
        checks.finish();
    });
}

/// The stand-in server itself (runs everywhere, no host needed): the turn comes from the
/// tool results in the request, side requests get text, every body is recorded.
#[test]
fn stand_in_server_scripts_turns_by_tool_results() {
    use std::io::{Read, Write};
    let server =
        Server::start(vec![Step::tool(1_000, "echo step 0"), Step::text(2_000)], Duration::from_secs(20));
    let post = |path: &str, body: serde_json::Value| {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
        let body = body.to_string();
        let request = format!(
            "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).expect("write");
        let mut reply = String::new();
        let mut buffer = [0u8; 4096];
        // content-length bounded: read until the server has sent the whole body.
        for _ in 0..100 {
            match stream.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => reply.push_str(&String::from_utf8_lossy(&buffer[..n])),
            }
            let (head, payload) = reply.split_once("\r\n\r\n").unwrap_or((&reply, ""));
            let length =
                head.lines().find_map(|l| l.strip_prefix("content-length: ")).and_then(|v| v.parse().ok());
            if length.is_some_and(|n: usize| payload.len() >= n) {
                break;
            }
        }
        reply
    };
    let tools = serde_json::json!([{"name": "Bash"}]);
    let first = post(
        "/v1/messages",
        serde_json::json!({"stream": true, "tools": tools, "messages": [{"role": "user", "content": "go"}]}),
    );
    assert!(
        first.contains("\"tool_use\"")
            && first.contains("echo step 0")
            && first.contains("\"input_tokens\":1000"),
        "{first}"
    );
    let second = post(
        "/v1/messages",
        serde_json::json!({"stream": true, "tools": tools, "messages": [
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "step 0"}]}]}),
    );
    assert!(
        second.contains(real_hosts_support::server::FINAL_TEXT) && second.contains("\"input_tokens\":2000"),
        "{second}"
    );
    let side = post("/v1/messages", serde_json::json!({"messages": [{"role": "user", "content": "title?"}]}));
    assert!(!side.contains("tool_use"), "{side}");
    let codex = post("/v1/responses", serde_json::json!({"tools": [{"name": "exec_command"}], "input": []}));
    assert!(codex.contains("exec_command") && codex.contains("echo step 0"), "{codex}");
    let gemini = post(
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        serde_json::json!({"tools": [{}], "contents": [{"role": "user", "parts": [{"functionResponse": {}}]}]}),
    );
    assert!(gemini.contains("promptTokenCount\":2000") && gemini.starts_with("HTTP/1.1 200"), "{gemini}");
    let recorded = server.recorded();
    assert_eq!(recorded.len(), 5);
    assert_eq!(
        recorded.iter().map(|r| (r.main, r.turn)).collect::<Vec<_>>(),
        [(true, 0), (true, 1), (false, 0), (true, 0), (true, 1)]
    );
}

/// Qwen Code (`qwen -p`, its 1M-token qwen3-coder-plus) against the chat-completions
/// stand-in: no alarm at 14-16 % (which would be past CRITICAL on a 200k window), the
/// crossing session, the brief with the next session's first prompt (Qwen Code drops
/// SessionStart's context), and the install / doctor / uninstall round trip.
#[test]
fn qwen_code_print_mode() {
    use real_hosts_support::chat_hosts::{QWEN, QWEN_WINDOW, with_cli};
    with_cli("qwen -p", &QWEN, |hosts, qwen| {
        let mut checks = Checks::new("qwen -p");
        let world = World::new(hosts);
        let server = Server::start(
            vec![Step::tool(140_000, "echo step 0"), Step::tool(155_000, "echo step 1"), Step::text(160_000)],
            SERVER_LIFETIME,
        );
        world.qwen_setup(&server);
        // The scripts reach 81.5 %: Qwen Code's compression point (0.7) is moved past them.
        let path = world.qwen_settings_path();
        let mut settings: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        settings["model"]["chatCompression"] = serde_json::json!({"contextPercentageThreshold": 0.9});
        std::fs::write(&path, format!("{settings:#}\n")).unwrap();
        let doctor = world.baton(&["doctor"]);
        let doctor_text = common::stdout(&doctor);
        checks.check(
            "doctor after install: passes and checks Qwen Code's hooks and trust",
            doctor.status.success()
                && doctor_text.contains("hooks (Qwen Code)")
                && doctor_text.contains("trust (Qwen Code)"),
            || doctor_text.clone(),
        );

        // 1. Low usage of the 1M window.
        let run = world.qwen_print(qwen, PROMPT);
        world.save_requests(&server, "01-qwen_print");
        let requests = first_per_turn(server.main_requests());
        checks.check("low usage: session ran", requests.len() >= 3, || {
            format!("{}\n{}", run.describe(), server.summary())
        });
        let models: Vec<String> =
            requests.iter().filter_map(|r| r.body["model"].as_str().map(str::to_string)).collect();
        checks.check(
            "low usage: the model is qwen3-coder-plus",
            models.iter().all(|m| m == "qwen3-coder-plus"),
            || format!("{models:?}"),
        );
        checks.check(
            "low usage: no warning at 14-16 % of 1M",
            turns_with(&requests, "CONTEXT ").is_empty(),
            || server.summary(),
        );
        checks
            .check("low usage: no handoff", !world.handoff_path().exists(), || "HANDOFF.json written".into());
        drop(server);

        // 2. Crossing 65 % and 75 % of the 1M window.
        let server = Server::start(crossing_script(QWEN_WINDOW), SERVER_LIFETIME);
        world.qwen_repoint(&server);
        let refs_before = world.baton_refs();
        let run = world.qwen_print(qwen, PROMPT);
        world.save_requests(&server, "02-qwen_print");
        check_brief_in_first(&mut checks, "", &server, false);
        check_crossing(&mut checks, &world, &server, QWEN_WINDOW, false, &refs_before);
        let warning = server.main_requests().iter().map(|r| r.text()).find(|t| t.contains(WARNING));
        checks.check(
            "the warning names Qwen Code's chat recording as the figure's source",
            warning.as_ref().is_some_and(|t| t.contains("Qwen Code's chat recording")),
            || warning.clone().unwrap_or_default().chars().take(2000).collect(),
        );
        checks.check("qwen -p succeeded", run.status.is_some_and(|s| s.success()), || run.describe());
        drop(server);

        // 3. The next session's first prompt carries the brief.
        let server = Server::start(vec![Step::text(20_000)], SERVER_LIFETIME);
        world.qwen_repoint(&server);
        let _run = world.qwen_print(qwen, "Carry on.");
        world.save_requests(&server, "03-qwen_print");
        check_brief_in_first(&mut checks, "", &server, true);
        drop(server);

        // 4. Uninstall takes out exactly baton's hooks and statusline (`ui`, which install
        // made for it); Qwen Code's own keys stay.
        let before: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let uninstall = world.baton(&["uninstall", "--host", "qwen"]);
        let after: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let mut expected = before.clone();
        if let Some(object) = expected.as_object_mut() {
            object.remove("hooks");
            object.remove("ui");
        }
        let mut left = after.clone();
        let hooks_left = left.as_object_mut().and_then(|o| o.remove("hooks"));
        checks.check(
            "uninstall removes exactly baton's hooks",
            uninstall.status.success()
                && left == expected
                && hooks_left.is_none_or(|h| h.as_object().is_some_and(|o| o.is_empty())),
            || format!("{}\nbefore: {before:#}\nafter: {after:#}", common::stdout(&uninstall)),
        );
        checks.finish();
    });
}

/// Factory Droid (`droid exec`, a custom chat-completions model with a 200k compaction
/// limit): the crossing session, the brief in the next session, and the round trip.
#[test]
fn factory_droid_exec() {
    use real_hosts_support::chat_hosts::{DROID, DROID_WINDOW, with_cli};
    with_cli("droid exec", &DROID, |hosts, droid| {
        let mut checks = Checks::new("droid exec");
        let world = World::new(hosts);
        let server = Server::start(crossing_script(DROID_WINDOW), SERVER_LIFETIME);
        world.droid_setup(&server);
        let doctor = world.baton(&["doctor"]);
        let doctor_text = common::stdout(&doctor);
        checks.check(
            "doctor after install: passes and checks Factory Droid's hooks",
            doctor.status.success() && doctor_text.contains("hooks (Factory Droid)"),
            || doctor_text.clone(),
        );
        drop(server);
        // Below the thresholds of the 200k window: 55-60 %.
        let server = Server::start(
            vec![Step::tool(110_000, "echo step 0"), Step::tool(120_000, "echo step 1"), Step::text(121_000)],
            SERVER_LIFETIME,
        );
        world.droid_repoint(&server);
        let _run = world.droid_exec(droid, PROMPT);
        world.save_requests(&server, "00-droid_exec");
        let low = first_per_turn(server.main_requests());
        checks.check(
            "low usage: session ran, no warning, no handoff",
            low.len() >= 3 && turns_with(&low, "CONTEXT ").is_empty() && !world.handoff_path().exists(),
            || server.summary(),
        );
        drop(server);
        let server = Server::start(crossing_script(DROID_WINDOW), SERVER_LIFETIME);
        world.droid_repoint(&server);
        let refs_before = world.baton_refs();
        let run = world.droid_exec(droid, PROMPT);
        world.save_requests(&server, "01-droid_exec");
        check_brief_in_first(&mut checks, "", &server, false);
        check_crossing(&mut checks, &world, &server, DROID_WINDOW, false, &refs_before);
        checks.check("droid exec succeeded", run.status.is_some_and(|s| s.success()), || run.describe());
        drop(server);

        let server = Server::start(vec![Step::text(20_000)], SERVER_LIFETIME);
        world.droid_repoint(&server);
        let _run = world.droid_exec(droid, "Carry on.");
        world.save_requests(&server, "02-droid_exec");
        check_brief_in_first(&mut checks, "", &server, true);
        drop(server);

        let path = world.droid_settings_path();
        let uninstall = world.baton(&["uninstall", "--host", "droid"]);
        let after: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let hooks = after.get("hooks").map(|h| h.to_string()).unwrap_or_default();
        checks.check(
            "uninstall removes baton's hooks, Droid's own keys stay",
            uninstall.status.success() && !hooks.contains(" hook") && after.get("customModels").is_some(),
            || format!("{}\nafter: {after:#}", common::stdout(&uninstall)),
        );
        checks.finish();
    });
}
mod claude_code_screen;
mod command_statuslines;
mod contexts;
mod contexts_edge_cases;
mod copilot;
mod handoff_facts;
mod handover_bench;
mod opencode_kilo;
mod relay;
mod relay_chat_hosts;
mod relay_faults;
mod relay_interactive;
mod relay_opencode;
mod relay_report;
