//! The CRITICAL handoff's facts on Qwen Code, Factory Droid and GitHub Copilot CLI, read
//! from each host's own transcript: the agent's todos or stated progress, the file it
//! wrote, the last request, the last failing command, and the brief in the next session's
//! first request. The same checks as the Codex and Gemini CLI facts sessions.

use super::*;
use real_hosts_support::chat_hosts::{DROID, DROID_WINDOW, QWEN, QWEN_WINDOW, with_cli};

/// The facts session's script: a todo update (where the host has a todo tool), the file
/// written, the failing command, then the statement of progress at CRITICAL (77 %: below
/// Copilot CLI's compaction at 80 %) and one more call (Copilot CLI's log has the call's
/// figure only after it).
fn facts_script(window: u64, todo_call: Option<(&str, serde_json::Value)>, write: Step) -> Vec<Step> {
    let at = |pct: f64| (window as f64 * pct / 100.0) as u64;
    let progress = format!("{FACTS_PROGRESS} (`{FACTS_FAILING}`: no such folder). Next: fix the path.");
    let mut steps = Vec::new();
    if let Some((name, args)) = todo_call {
        steps.push(Step::call(at(20.0), name, args));
    }
    steps.push(write.saying("I will write the limits file first, then run the tests."));
    steps.push(Step::tool(at(40.0), FACTS_FAILING));
    steps.push(Step::tool(at(77.0), "echo step 4").saying(&progress));
    steps.push(Step::tool(at(77.5), "echo step 5"));
    steps.push(Step::text(at(78.0)));
    steps
}

#[test]
fn qwen_code_handoff_facts() {
    with_cli("qwen facts", &QWEN, |hosts, qwen| {
        let mut checks = Checks::new("qwen facts");
        let world = World::new(hosts);
        let todos = |statuses: [&str; 3]| {
            serde_json::json!({"todos": [
                {"id": "1", "content": "Write the limits file", "status": statuses[0]},
                {"id": "2", "content": "Run the limit tests", "status": statuses[1]},
                {"id": "3", "content": "Fix what the tests find", "status": statuses[2]},
            ]})
        };
        let file = world.project().join(FACTS_FILE).display().to_string();
        let mut script = facts_script(
            QWEN_WINDOW,
            Some(("todo_write", todos(["in_progress", "pending", "pending"]))),
            Step::call(
                QWEN_WINDOW * 3 / 10,
                "write_file",
                serde_json::json!({"file_path": file, "content": "free=100\n"}),
            ),
        );
        script.insert(
            3,
            Step::call(QWEN_WINDOW * 35 / 100, "todo_write", todos(["completed", "in_progress", "pending"])),
        );
        let server = Server::start(script, SERVER_LIFETIME);
        world.qwen_setup(&server);
        let path = world.qwen_settings_path();
        let mut settings: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        settings["model"]["chatCompression"] = serde_json::json!({"contextPercentageThreshold": 0.9});
        std::fs::write(&path, format!("{settings:#}\n")).unwrap();
        let run = world.qwen_print(qwen, FACTS_PROMPT);
        world.save_requests(&server, "01-qwen_facts");
        checks.check("qwen -p succeeded", run.status.is_some_and(|s| s.success()), || run.describe());
        check_handoff_facts(&mut checks, &world, true);
        drop(server);

        let server = Server::start(vec![Step::text(20_000)], SERVER_LIFETIME);
        world.qwen_repoint(&server);
        let _run = world.qwen_print(qwen, "Carry on.");
        world.save_requests(&server, "02-qwen_facts");
        check_brief_facts(&mut checks, &server, true);
        checks.finish();
    });
}

#[test]
fn factory_droid_handoff_facts() {
    with_cli("droid facts", &DROID, |hosts, droid| {
        let mut checks = Checks::new("droid facts");
        let world = World::new(hosts);
        let file = world.project().join(FACTS_FILE).display().to_string();
        let write = Step::call(
            DROID_WINDOW * 3 / 10,
            "Create",
            serde_json::json!({"file_path": file, "content": "free=100\n"}),
        );
        let server = Server::start(facts_script(DROID_WINDOW, None, write), SERVER_LIFETIME);
        world.droid_setup(&server);
        let run = world.droid_exec(droid, FACTS_PROMPT);
        world.save_requests(&server, "01-droid_facts");
        checks.check("droid exec succeeded", run.status.is_some_and(|s| s.success()), || run.describe());
        check_handoff_facts(&mut checks, &world, false);
        drop(server);

        let server = Server::start(vec![Step::text(20_000)], SERVER_LIFETIME);
        world.droid_repoint(&server);
        let _run = world.droid_exec(droid, "Carry on.");
        world.save_requests(&server, "02-droid_facts");
        check_brief_facts(&mut checks, &server, false);
        checks.finish();
    });
}

#[test]
fn copilot_cli_handoff_facts() {
    use super::copilot::{COPILOT, WINDOW, copilot_print};
    with_cli("copilot facts", &COPILOT, |hosts, copilot| {
        let mut checks = Checks::new("copilot facts");
        let world = World::new(hosts);
        world.baton_install("copilot");
        // Copilot CLI's `create` needs the folder to exist.
        std::fs::create_dir_all(world.project().join("notes")).unwrap();
        let file = world.project().join(FACTS_FILE).display().to_string();
        let write = Step::call(
            WINDOW * 3 / 10,
            "create",
            serde_json::json!({"path": file, "file_text": "free=100\n"}),
        );
        let server = Server::start(facts_script(WINDOW, None, write), SERVER_LIFETIME);
        let run = copilot_print(&world, copilot, &server, FACTS_PROMPT);
        world.save_requests(&server, "01-copilot_facts");
        checks.check("copilot -p succeeded", run.status.is_some_and(|s| s.success()), || run.describe());
        check_handoff_facts(&mut checks, &world, false);
        drop(server);

        let server = Server::start(vec![Step::text(20_000)], SERVER_LIFETIME);
        let _run = copilot_print(&world, copilot, &server, "Carry on.");
        world.save_requests(&server, "02-copilot_facts");
        check_brief_facts(&mut checks, &server, false);
        checks.finish();
    });
}
