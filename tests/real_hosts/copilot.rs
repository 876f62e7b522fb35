//! GitHub Copilot CLI (`copilot -p`, pinned from npm, offline against the stand-in as a
//! chat-completions provider: `COPILOT_PROVIDER_BASE_URL` + `COPILOT_OFFLINE=true`, no
//! GitHub account): the low-usage session, the crossing session, the brief in the next
//! session, and the install / doctor / uninstall round trip.

use super::*;
use real_hosts_support::chat_hosts::{Cli, with_cli};

pub const COPILOT: Cli = Cli {
    id: "copilot",
    // The npm package is a loader; the platform package holds the CLI itself.
    packages: &[("@github/copilot", "1.0.102"), ("@github/copilot-linux-x64", "1.0.102")],
    entry: "@github/copilot-linux-x64/copilot",
};
/// A model Copilot CLI's own table knows: 168,000 prompt tokens (`maxPromptTokens`).
const MODEL: &str = "claude-sonnet-4.5";
pub(super) const WINDOW: u64 = 168_000;

pub(super) fn copilot_print(
    world: &World,
    copilot: &std::path::Path,
    server: &Server,
    prompt: &str,
) -> real_hosts_support::Run {
    let env = vec![
        ("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", server.base_url())),
        ("COPILOT_PROVIDER_API_KEY", "sk-standin".to_string()),
        ("COPILOT_OFFLINE", "true".to_string()),
        ("COPILOT_MODEL", MODEL.to_string()),
        ("COPILOT_AUTO_UPDATE", "false".to_string()),
    ];
    world.run(
        copilot,
        &["-p", prompt, "--allow-all-tools", "--no-auto-update"],
        &env,
        Duration::from_secs(120),
    )
}

#[test]
fn copilot_cli_print_mode() {
    with_cli("copilot -p", &COPILOT, |hosts, copilot| {
        let mut checks = Checks::new("copilot -p");
        let world = World::new(hosts);
        let hooks_dir = world.sandbox.home().join(".copilot").join("hooks");
        world.baton_install("copilot");
        let hook_file = hooks_dir.join("baton.json");
        let doctor = world.baton(&["doctor"]);
        let doctor_text = common::stdout(&doctor);
        checks.check(
            "doctor after install: passes and checks Copilot CLI's hooks and trust",
            doctor.status.success()
                && doctor_text.contains("hooks (GitHub Copilot CLI)")
                && doctor_text.contains("trust (GitHub Copilot CLI)"),
            || doctor_text.clone(),
        );

        // 1. Below the thresholds of the 168k window: 54-62 %.
        let server = Server::start(
            vec![Step::tool(90_000, "echo step 0"), Step::tool(100_000, "echo step 1"), Step::text(105_000)],
            SERVER_LIFETIME,
        );
        let run = copilot_print(&world, copilot, &server, PROMPT);
        world.save_requests(&server, "01-copilot_print");
        let low = first_per_turn(server.main_requests());
        checks.check("low usage: session ran", low.len() >= 3, || {
            format!("{}\n{}", run.describe(), server.summary())
        });
        checks.check(
            "low usage: the model is claude-sonnet-4.5",
            low.iter().all(|r| r.body["model"].as_str() == Some(MODEL)),
            || server.summary(),
        );
        checks.check(
            "low usage: no warning, no handoff",
            turns_with(&low, "CONTEXT ").is_empty() && !world.handoff_path().exists(),
            || server.summary(),
        );
        drop(server);

        // 2. Crossing 65 % and 75 % of the 168k window.
        let server = Server::start(crossing_script(WINDOW), SERVER_LIFETIME);
        let refs_before = world.baton_refs();
        let run = copilot_print(&world, copilot, &server, PROMPT);
        world.save_requests(&server, "02-copilot_print");
        check_brief_in_first(&mut checks, "", &server, false);
        // The script's 80 % call is also Copilot CLI's own compaction point: its PreCompact
        // writes the handoff again (trigger pre-compact) right after CRITICAL's. So the
        // CRITICAL handoff is proven by what the model was told at CRITICAL (it names the
        // handoff, with its trigger) and by the ref; the rest of the shared checks stand.
        let mut crossing = Checks::new("copilot -p");
        check_crossing(&mut crossing, &world, &server, WINDOW, false, &refs_before);
        checks.passed.extend(crossing.passed);
        checks
            .failed
            .extend(crossing.failed.into_iter().filter(|f| !f.starts_with("CRITICAL wrote the handoff")));
        let critical = server.main_requests().iter().map(|r| r.text()).find(|t| t.contains(CRITICAL));
        let told = critical
            .as_deref()
            .and_then(|t| t.find(CRITICAL).map(|at| t[at..].chars().take(1500).collect::<String>()));
        let handoff: serde_json::Value = std::fs::read(world.handoff_path())
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let trigger = handoff["baton"]["trigger"].as_str().unwrap_or_default().to_string();
        checks.check(
            "CRITICAL wrote the handoff: the model is told of .planning/HANDOFF.json at CRITICAL; PreCompact rewrote it after",
            told.as_deref().is_some_and(|t| t.contains(".planning/HANDOFF.json"))
                && (trigger == "critical-context" || trigger == "pre-compact"),
            || format!("trigger {trigger:?}; told: {told:?}"),
        );
        let warning = server.main_requests().iter().map(|r| r.text()).find(|t| t.contains(WARNING));
        checks.check(
            "the warning names Copilot CLI's session events as the figure's source",
            warning.as_ref().is_some_and(|t| t.contains("GitHub Copilot CLI's session events")),
            || warning.clone().unwrap_or_default().chars().take(2000).collect(),
        );
        checks.check("copilot -p succeeded", run.status.is_some_and(|s| s.success()), || run.describe());
        drop(server);

        // 3. The next session's first request carries the brief.
        let server = Server::start(vec![Step::text(20_000)], SERVER_LIFETIME);
        let _run = copilot_print(&world, copilot, &server, "Carry on.");
        world.save_requests(&server, "03-copilot_print");
        check_brief_in_first(&mut checks, "", &server, true);
        drop(server);

        // 4. Uninstall removes the hook file install created; nothing else is left there.
        let uninstall = world.baton(&["uninstall", "--host", "copilot"]);
        let left: Vec<String> = std::fs::read_dir(&hooks_dir)
            .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        checks.check(
            "uninstall removes baton's hook file; no hook file is left",
            uninstall.status.success() && !hook_file.exists() && !left.iter().any(|n| n.ends_with(".json")),
            || format!("{}\nleft: {left:?}", common::stdout(&uninstall)),
        );
        checks.finish();
    });
}
