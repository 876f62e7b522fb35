//! The hosts that speak OpenAI chat-completions to the stand-in (Qwen Code first): each
//! pinned CLI lives in its own folder of the cache (`<cache>/<id>/node_modules`), so adding
//! one does not re-resolve the others, and is installed from npm only under
//! `BATON_REAL_HOSTS=required`. Their worlds need only `node` from the main suite.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Hosts, Mode, Run, World, cache_dir, mode, scenario_slot, skipped, wait_bounded, which};

/// A pinned CLI: its npm packages and the script to run with `node`.
pub struct Cli {
    pub id: &'static str,
    pub packages: &'static [(&'static str, &'static str)],
    /// The entry script, relative to the CLI's `node_modules`.
    pub entry: &'static str,
}

pub const QWEN: Cli = Cli {
    id: "qwen",
    // 0.24.x needs Node 22; 0.15.10 is the newest that runs on Node 20.
    packages: &[("@qwen-code/qwen-code", "0.15.10")],
    entry: "@qwen-code/qwen-code/cli.js",
};
pub const QWEN_VERSION: &str = "0.15.10";
/// Qwen Code's model with a 1,000,000-token window (its own token-limit table).
pub const QWEN_MODEL: &str = "qwen3-coder-plus";
pub const QWEN_WINDOW: u64 = 1_000_000;

const NPM_TIMEOUT: Duration = Duration::from_secs(300);

fn folder(cli: &Cli) -> PathBuf {
    cache_dir().join(cli.id)
}

fn installed(cli: &Cli) -> Result<PathBuf, String> {
    let modules = folder(cli).join("node_modules");
    for (package, version) in cli.packages {
        let manifest = modules.join(package).join("package.json");
        let found = std::fs::read(&manifest)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .and_then(|v| v["version"].as_str().map(str::to_string));
        match found {
            Some(found) if found == *version => {}
            Some(found) => {
                return Err(format!("{package} {found} is in {}, not {version}", modules.display()));
            }
            None => return Err(format!("{package}@{version} is not installed in {}", modules.display())),
        }
    }
    let entry = modules.join(cli.entry);
    if entry.is_file() { Ok(entry) } else { Err(format!("{} is missing", entry.display())) }
}

fn install(cli: &Cli) -> Result<(), String> {
    let npm = which("npm").ok_or("npm is not on PATH")?;
    let dir = folder(cli);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let dependencies: serde_json::Map<String, Value> =
        cli.packages.iter().map(|(p, v)| (p.to_string(), json!(v))).collect();
    let manifest = json!({"name": format!("baton-real-hosts-{}", cli.id), "private": true, "dependencies": dependencies});
    std::fs::write(dir.join("package.json"), format!("{manifest:#}\n")).map_err(|e| e.to_string())?;
    eprintln!("real hosts: installing {} into {} (npm)", cli.id, dir.display());
    let started = Instant::now();
    let log = std::fs::File::create(dir.join("install.log")).map_err(|e| e.to_string())?;
    let mut child = Command::new(npm)
        // --ignore-scripts: no postinstall may reach outside the cache.
        .args(["install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=warn"])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .spawn()
        .map_err(|e| format!("npm install: {e}"))?;
    let status = wait_bounded(&mut child, NPM_TIMEOUT).ok_or("npm install took over 300 s")?;
    if !status.success() {
        let log = std::fs::read_to_string(dir.join("install.log")).unwrap_or_default();
        return Err(format!("npm install failed ({status}):\n{log}"));
    }
    eprintln!("real hosts: installed {} in {:.1} s", cli.id, started.elapsed().as_secs_f64());
    Ok(())
}

/// The CLI's entry script, or why it cannot be run (Err); `required` installs it.
pub fn cli_entry(cli: &Cli) -> Result<PathBuf, String> {
    // Scenarios run two at a time: two of the same CLI must not both npm-install it.
    static INSTALLING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = INSTALLING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    match installed(cli) {
        Ok(entry) => Ok(entry),
        Err(_) if mode() == Mode::Required => {
            install(cli)?;
            installed(cli)
        }
        Err(reason) => Err(format!("{reason}; run with BATON_REAL_HOSTS=required to install it from npm")),
    }
}

/// Runs `scenario` with a world's hosts (only `node` is needed) and the CLI's entry
/// script, or says why it is skipped (failing under `required`).
pub fn with_cli(name: &str, cli: &Cli, scenario: impl FnOnce(&Hosts, &Path)) {
    if mode() == Mode::Skip {
        skipped(name, "BATON_REAL_HOSTS=skip");
        return;
    }
    let found = which("node").ok_or_else(|| "node is not on PATH".to_string()).and_then(|node| {
        let entry = cli_entry(cli)?;
        let node_dir = node.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok((Hosts { claude: PathBuf::new(), codex: PathBuf::new(), gemini: PathBuf::new(), node_dir }, entry))
    });
    match found {
        Ok((hosts, entry)) => {
            let _slot = scenario_slot();
            let started = Instant::now();
            scenario(&hosts, &entry);
            eprintln!("real hosts: {name} took {:.1} s", started.elapsed().as_secs_f64());
        }
        Err(reason) if mode() == Mode::Required => panic!("real hosts required but unavailable: {reason}"),
        Err(reason) => skipped(name, &reason),
    }
}

impl World {
    /// Runs baton with the world's environment (`install`, `doctor`, `uninstall` …).
    pub fn baton(&self, args: &[&str]) -> std::process::Output {
        let env = self.env();
        let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        self.sandbox.run_with(args, b"", &pairs)
    }

    pub fn qwen_settings_path(&self) -> PathBuf {
        self.sandbox.home().join(".qwen").join("settings.json")
    }

    /// Qwen Code's user settings pointing at the stand-in (auto-update off: interactive
    /// Qwen Code installs its newest version globally through npm otherwise), then
    /// `baton install --host qwen`.
    pub fn qwen_setup(&self, server: &super::server::Server) {
        let dir = self.sandbox.home().join(".qwen");
        std::fs::create_dir_all(&dir).expect("qwen dir");
        let settings = json!({
            "security": {"auth": {"selectedType": "openai"}},
            "general": {"enableAutoUpdate": false, "disableAutoUpdate": true, "disableUpdateNag": true},
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false},
            "model": {"name": QWEN_MODEL},
            "modelProviders": {"openai": [{"id": QWEN_MODEL, "name": "Standin",
                "baseUrl": format!("{}/v1", server.base_url()), "envKey": "STANDIN_KEY"}]}
        });
        std::fs::write(self.qwen_settings_path(), format!("{settings:#}\n")).expect("qwen settings");
        self.baton_install("qwen");
    }

    /// Points Qwen Code's settings at another stand-in (Qwen Code rewrites the file on
    /// start; only the base URL is changed).
    pub fn qwen_repoint(&self, server: &super::server::Server) {
        let path = self.qwen_settings_path();
        let mut settings: Value = serde_json::from_slice(&std::fs::read(&path).expect("qwen settings"))
            .expect("qwen settings json");
        settings["modelProviders"]["openai"][0]["baseUrl"] = json!(format!("{}/v1", server.base_url()));
        std::fs::write(&path, format!("{settings:#}\n")).expect("qwen settings");
    }

    /// `qwen -p <prompt> --yolo` (headless; each run a new session).
    pub fn qwen_print(&self, entry: &Path, prompt: &str) -> Run {
        let node = self.hosts.node_dir.join("node");
        let entry = entry.display().to_string();
        let args = [entry.as_str(), "--yolo", "-p", prompt];
        let env =
            vec![("STANDIN_KEY", "sk-standin".to_string()), ("QWEN_CODE_NO_RELAUNCH", "true".to_string())];
        self.run(&node, &args, &env, Duration::from_secs(180))
    }
}

pub const DROID: Cli = Cli {
    id: "droid",
    // The 0.225.1 wrapper's own platform package is missing on npm; 0.225.2's binary is the CLI.
    packages: &[("@factory/cli", "0.225.1"), ("@factory/cli-linux-x64", "0.225.2")],
    entry: "@factory/cli-linux-x64/bin/droid",
};
pub const DROID_MODEL: &str = "standin-model";
/// The compaction limit the test sets: the window Droid works with.
pub const DROID_WINDOW: u64 = 200_000;

impl World {
    pub fn droid_settings_path(&self) -> PathBuf {
        self.sandbox.home().join(".factory").join("settings.json")
    }

    /// Droid's user settings with the stand-in as a custom model, then `baton install --host droid`.
    pub fn droid_setup(&self, server: &super::server::Server) {
        let dir = self.sandbox.home().join(".factory");
        std::fs::create_dir_all(&dir).expect("factory dir");
        let project = self.project().display().to_string();
        let settings = json!({
            "customModels": [{"model": DROID_MODEL, "displayName": "Standin",
                "baseUrl": format!("{}/v1", server.base_url()), "apiKey": "sk-standin",
                "provider": "generic-chat-completion-api", "maxOutputTokens": 8192}],
            "compactionTokenLimit": DROID_WINDOW,
            "trustedFolders": {project: {"trustedAt": "2026-01-01T00:00:00.000Z"}}
        });
        std::fs::write(self.droid_settings_path(), format!("{settings:#}\n")).expect("droid settings");
        self.baton_install("droid");
    }

    pub fn droid_repoint(&self, server: &super::server::Server) {
        let path = self.droid_settings_path();
        let mut settings: Value = serde_json::from_slice(&std::fs::read(&path).expect("droid settings"))
            .expect("droid settings json");
        settings["customModels"][0]["baseUrl"] = json!(format!("{}/v1", server.base_url()));
        std::fs::write(&path, format!("{settings:#}\n")).expect("droid settings");
    }

    /// `droid exec --auto high -m <model> <prompt>`.
    pub fn droid_exec(&self, droid: &Path, prompt: &str) -> Run {
        let args = ["exec", "--auto", "high", "-m", DROID_MODEL, prompt];
        let env = vec![
            ("FACTORY_AIRGAP_ENABLED", "true".to_string()),
            ("FACTORY_DROID_AUTO_UPDATE_ENABLED", "false".to_string()),
        ];
        self.run(droid, &args, &env, Duration::from_secs(120))
    }
}
