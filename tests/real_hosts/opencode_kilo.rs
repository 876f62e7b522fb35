//! OpenCode (`opencode run`, pinned from npm, against the stand-in as a custom
//! OpenAI-compatible provider with a 200k `limit.context`): baton's plugin written by
//! `baton install --host opencode`; the low-usage session, the crossing session (the
//! warning and CRITICAL in the request right after their crossing replies, the handoff and
//! its ref, then the pause's stop within the grace calls), the brief in the next session's
//! first request, and the install / doctor / uninstall round trip.

use std::path::Path;

use super::*;
use real_hosts_support::chat_hosts::{Cli, with_cli};
use serde_json::json;

pub const OPENCODE: Cli = Cli {
    id: "opencode",
    // The npm package is a loader; the platform package holds the CLI itself.
    packages: &[("opencode-ai", "1.18.33"), ("opencode-linux-x64", "1.18.33")],
    entry: "opencode-linux-x64/bin/opencode",
};
const MODEL: &str = "standin-model";
/// The model's `limit.context` in the provider's settings: the window OpenCode works with.
const WINDOW: u64 = 200_000;

/// OpenCode's user config (`$XDG_CONFIG_HOME/opencode/opencode.json`): the stand-in as
/// the only provider and model, tools allowed, no update, no sharing.
fn opencode_setup(world: &World, server: &Server) -> std::path::PathBuf {
    config_setup(world, server, "opencode", "opencode.json", "@opencode-ai/plugin", "1.18.33")
}

/// A config folder of OpenCode's kind (`$XDG_CONFIG_HOME/<folder>/<file>`) pointing at the
/// stand-in, its plugin dependency (`package`) marked as installed.
pub(super) fn config_setup(
    world: &World,
    server: &Server,
    folder: &str,
    file: &str,
    package: &str,
    version: &str,
) -> std::path::PathBuf {
    let dir = world.root().join("config").join(folder);
    std::fs::create_dir_all(&dir).expect("opencode config dir");
    let config = json!({
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": false,
        "share": "disabled",
        "model": format!("standin/{MODEL}"),
        "small_model": format!("standin/{MODEL}"),
        "provider": {"standin": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Standin",
            "options": {"baseURL": format!("{}/v1", server.base_url()), "apiKey": "sk-standin"},
            "models": {MODEL: {"name": "Standin", "limit": {"context": WINDOW, "output": 8192}}}
        }},
        "permission": {"bash": "allow", "edit": "allow"}
    });
    let path = dir.join(file);
    std::fs::write(&path, format!("{config:#}\n")).expect("config file");
    // OpenCode installs `@opencode-ai/plugin` into each config folder from npm when the
    // folder has no `node_modules` or its lock lacks it (for plugins that import it;
    // baton's does not): a lock naming it keeps the runs offline and quick. (Kilo CLI 7.7.7
    // asks for `@kilocode/plugin@7.7.7`, which npm does not have: 30 s lost on every run.)
    std::fs::create_dir_all(dir.join("node_modules")).expect("node_modules");
    let lock = json!({"lockfileVersion": 3, "packages": {"": {"dependencies": {package: version}}}});
    std::fs::write(dir.join("package-lock.json"), format!("{lock:#}\n")).expect("package-lock.json");
    path
}

fn opencode_run(
    world: &World,
    opencode: &std::path::Path,
    server: &Server,
    prompt: &str,
) -> real_hosts_support::Run {
    opencode_setup(world, server);
    let env = vec![
        ("OPENCODE_DISABLE_MODELS_FETCH", "1".to_string()),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1".to_string()),
        ("OPENCODE_DISABLE_SHARE", "1".to_string()),
        ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1".to_string()),
    ];
    let run = world.run(opencode, &["run", prompt], &env, Duration::from_secs(120));
    eprintln!("real hosts: opencode run {prompt:?} took {:.1} s", run.seconds);
    run
}

#[test]
fn opencode_run_with_batons_plugin() {
    with_cli("opencode run", &OPENCODE, |hosts, opencode| {
        let mut checks = Checks::new("opencode run");
        let world = World::new(hosts);
        world.baton_install("opencode");
        let plugin = world.root().join("config").join("opencode").join("plugins").join("baton.js");
        let doctor = world.baton(&["doctor"]);
        let doctor_text = common::stdout(&doctor);
        checks.check(
            "install wrote baton's plugin; doctor passes and checks it",
            plugin.is_file()
                && doctor.status.success()
                && doctor_text.contains("plugin (OpenCode)")
                && doctor_text.contains("binary (OpenCode)"),
            || doctor_text.clone(),
        );

        // 1. Below the thresholds of the 200k window: 55-60 %.
        let server = Server::start(
            vec![Step::tool(110_000, "echo step 0"), Step::tool(120_000, "echo step 1"), Step::text(121_000)],
            SERVER_LIFETIME,
        );
        let run = opencode_run(&world, opencode, &server, PROMPT);
        world.save_requests(&server, "01-opencode_run");
        let low = first_per_turn(server.main_requests());
        checks.check("low usage: session ran", low.len() >= 3, || {
            format!("{}\n{}", run.describe(), server.summary())
        });
        checks.check(
            "low usage: the model is the stand-in's",
            low.iter().all(|r| r.body["model"].as_str() == Some(MODEL)),
            || server.summary(),
        );
        checks.check(
            "low usage: no warning, no handoff",
            turns_with(&low, "CONTEXT ").is_empty() && !world.handoff_path().exists(),
            || server.summary(),
        );
        drop(server);

        // 2. Crossing 65 % and 75 %, then more calls than the pause's 3 grace calls.
        let mut script = crossing_script(WINDOW);
        let last = script.pop().expect("final step");
        for n in 6..10 {
            script.push(Step::tool(163_000 + n * 500, &format!("echo step {n}")));
        }
        script.push(last);
        let server = Server::start(script, SERVER_LIFETIME);
        let refs_before = world.baton_refs();
        let run = opencode_run(&world, opencode, &server, PROMPT);
        world.save_requests(&server, "02-opencode_run");
        check_brief_in_first(&mut checks, "", &server, false);
        check_crossing(&mut checks, &world, &server, WINDOW, false, &refs_before);
        let requests = first_per_turn(server.main_requests());
        let warning = requests.iter().map(|r| r.text()).find(|t| t.contains(WARNING));
        checks.check(
            "the warning says OpenCode reported the figure to baton's plugin",
            warning.as_ref().is_some_and(|t| t.contains("reported by OpenCode to baton's plugin")),
            || warning.clone().unwrap_or_default().chars().take(2000).collect(),
        );
        let critical_turn = turns_with(&requests, CRITICAL).first().copied();
        let last_turn = requests.last().map(|r| r.turn);
        checks.check(
            "the pause stopped the session within the 3 grace calls after CRITICAL, before its end",
            matches!((critical_turn, last_turn), (Some(c), Some(l)) if l >= c && l - c <= 3)
                && last_turn.is_some_and(|l| l < 10),
            || {
                format!(
                    "critical in turn {critical_turn:?}, last request turn {last_turn:?}\n{}",
                    server.summary()
                )
            },
        );
        checks.check("opencode run exited", run.status.is_some(), || run.describe());
        drop(server);

        // 3. The next session's first request carries the brief.
        let server = Server::start(vec![Step::text(20_000)], SERVER_LIFETIME);
        let _run = opencode_run(&world, opencode, &server, "Carry on.");
        world.save_requests(&server, "03-opencode_run");
        check_brief_in_first(&mut checks, "", &server, true);
        drop(server);

        // 4. Uninstall removes the plugin file and the folder install made for it.
        let uninstall = world.baton(&["uninstall", "--host", "opencode"]);
        let doctor = world.baton(&["doctor", "--host", "opencode"]);
        checks.check(
            "uninstall removes baton's plugin and its folder; doctor then says it is missing",
            uninstall.status.success()
                && !plugin.exists()
                && !plugin.parent().is_some_and(|d| d.exists())
                && !doctor.status.success()
                && common::stdout(&doctor).contains("baton's plugin is not installed"),
            || format!("{}\n{}", common::stdout(&uninstall), common::stdout(&doctor)),
        );
        checks.finish();
    });
}

pub const KILO: Cli = Cli {
    id: "kilo",
    packages: &[("@kilocode/cli", "7.7.7"), ("@kilocode/cli-linux-x64", "7.7.7")],
    entry: "@kilocode/cli-linux-x64/bin/kilo",
};

/// `kilo run <prompt>` against `server`, Kilo CLI's config pointing at it (no model list
/// fetched, no update, no telemetry).
pub(super) fn kilo_run(
    world: &World,
    kilo: &Path,
    server: &Server,
    prompt: &str,
) -> crate::real_hosts_support::Run {
    config_setup(world, server, "kilo", "kilo.json", "@kilocode/plugin", "7.7.7");
    let env = vec![
        ("KILO_DISABLE_MODELS_FETCH", "1".to_string()),
        ("KILO_DISABLE_AUTOUPDATE", "1".to_string()),
        ("KILO_TELEMETRY_LEVEL", "off".to_string()),
        // A snapshot slower than this (10 s by default) makes Kilo CLI ask whether to go on
        // with snapshots, and `kilo run` waits for the answer for ever (docs/HOSTS.md).
        ("KILO_SNAPSHOT_TRACK_TIMEOUT_MS", "120000".to_string()),
    ];
    let run = world.run(kilo, &["run", prompt], &env, Duration::from_secs(150));
    eprintln!("real hosts: kilo run {prompt:?} took {:.1} s", run.seconds);
    run
}

/// Kilo CLI below the thresholds of the 200k window (55-60 %): no warning and no handoff
/// (OpenCode's scenario checks the same on OpenCode; this is Kilo CLI's own run).
#[test]
fn kilo_run_below_the_thresholds_is_not_warned() {
    with_cli("kilo run, low usage", &KILO, |hosts, kilo| {
        let mut checks = Checks::new("kilo run, low usage");
        let world = World::new(hosts);
        world.baton_install("kilo");
        let server = Server::start(
            vec![Step::tool(110_000, "echo step 0"), Step::tool(120_000, "echo step 1"), Step::text(121_000)],
            SERVER_LIFETIME,
        );
        let run = kilo_run(&world, kilo, &server, PROMPT);
        world.save_requests(&server, "01-kilo_run_low_usage");
        let low = first_per_turn(server.main_requests());
        checks.check("low usage: session ran", low.len() >= 3, || {
            format!("{}\n{}", run.describe(), server.summary())
        });
        checks.check(
            "low usage: no warning, no handoff",
            turns_with(&low, "CONTEXT ").is_empty() && !world.handoff_path().exists(),
            || server.summary(),
        );
        checks.finish();
    });
}

/// Kilo CLI (`kilo run`, built on OpenCode) with baton's plugin from `baton install --host
/// kilo`: the crossing session (warning, CRITICAL, handoff, ref) and the round trip. One
/// session only: Kilo CLI 7.7.7 spends some 15 s starting each run here (the low-usage
/// session is the scenario above; the stop and the brief are in command_statuslines.rs).
#[test]
fn kilo_run_with_batons_plugin() {
    with_cli("kilo run", &KILO, |hosts, kilo| {
        let mut checks = Checks::new("kilo run");
        let world = World::new(hosts);
        world.baton_install("kilo");
        let plugin = world.root().join("config").join("kilo").join("plugins").join("baton.js");
        let doctor = world.baton(&["doctor"]);
        let doctor_text = common::stdout(&doctor);
        checks.check(
            "install wrote baton's plugin for Kilo CLI; doctor passes and checks it",
            plugin.is_file() && doctor.status.success() && doctor_text.contains("plugin (Kilo CLI)"),
            || doctor_text.clone(),
        );
        let server = Server::start(crossing_script(WINDOW), SERVER_LIFETIME);
        let refs_before = world.baton_refs();
        let _run = kilo_run(&world, kilo, &server, PROMPT);
        world.save_requests(&server, "01-kilo_run");
        check_crossing(&mut checks, &world, &server, WINDOW, false, &refs_before);
        let warning = server.main_requests().iter().map(|r| r.text()).find(|t| t.contains(WARNING));
        checks.check(
            "the warning says Kilo CLI reported the figure to baton's plugin",
            warning.as_ref().is_some_and(|t| t.contains("reported by Kilo CLI to baton's plugin")),
            || warning.clone().unwrap_or_default().chars().take(2000).collect(),
        );
        drop(server);
        let uninstall = world.baton(&["uninstall", "--host", "kilo"]);
        checks.check(
            "uninstall removes baton's plugin and its folder",
            uninstall.status.success() && !plugin.exists() && !plugin.parent().is_some_and(|d| d.exists()),
            || common::stdout(&uninstall),
        );
        checks.finish();
    });
}
