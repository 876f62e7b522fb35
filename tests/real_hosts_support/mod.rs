//! Support for the real-host suite: the pinned host CLIs (installed from npm into a cache
//! folder), a throwaway world per scenario (HOME, config dirs, TMPDIR, a git repository with
//! a `.planning/` tree, baton registered by `baton install`), and bounded runs of each CLI
//! against the stand-in model server.
//!
//! `BATON_REAL_HOSTS`: unset → run when the pinned CLIs are already in the cache, else skip
//! with the reason; `required` → install them if missing and fail when anything is
//! unavailable; `0`/`skip` → skip.

#![allow(dead_code)]

pub mod agent;
pub mod chat_hosts;
pub mod rate_limits;
pub mod runner_and_responses;
pub mod scripted;
pub mod server;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Sandbox, TestRepo, gsd_planning, stdout};

pub const CLAUDE_PACKAGE: &str = "@anthropic-ai/claude-code";
pub const CLAUDE_VERSION: &str = "2.1.332";
pub const CODEX_PACKAGE: &str = "@openai/codex";
pub const CODEX_VERSION: &str = "0.171.0";
pub const GEMINI_PACKAGE: &str = "@google/gemini-cli";
pub const GEMINI_VERSION: &str = "0.61.0";

/// A 200,000-token Claude model (the default model has 1,000,000).
pub const CLAUDE_200K_MODEL: &str = "claude-sonnet-4-5-20250929";
pub const GEMINI_MODEL: &str = "gemini-2.5-flash";
pub const GEMINI_WINDOW: u64 = 1_048_576;
pub const CODEX_MODEL: &str = "gpt-5-codex";
/// The window configured for Codex (`model_context_window`)...
pub const CODEX_WINDOW: u64 = 200_000;
/// ...and the one Codex works with and reports (`token_count.info.model_context_window`): 95 %.
pub const CODEX_EFFECTIVE_WINDOW: u64 = 190_000;

pub const API_KEY: &str = "sk-ant-api03-baton-e2e-stand-in-key-0123456789abcdefghij";
const NPM_TIMEOUT: Duration = Duration::from_secs(300);

/// What the environment asks of the suite.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// Run if the CLIs are there; skip (with the reason) if not.
    IfAvailable,
    /// Install what is missing; fail when anything is unavailable.
    Required,
    Skip,
}

pub fn mode() -> Mode {
    match std::env::var("BATON_REAL_HOSTS").unwrap_or_default().as_str() {
        "required" | "1" | "install" => Mode::Required,
        "0" | "skip" | "off" => Mode::Skip,
        _ => Mode::IfAvailable,
    }
}

/// Where the pinned CLIs live.
pub fn cache_dir() -> PathBuf {
    match std::env::var_os("BATON_REAL_HOSTS_CACHE") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("target").join("real-hosts"),
    }
}

/// The installed CLIs.
#[derive(Clone, Debug)]
pub struct Hosts {
    pub claude: PathBuf,
    pub codex: PathBuf,
    pub gemini: PathBuf,
    /// The folder holding `node` (Codex and Gemini CLI start through it).
    pub node_dir: PathBuf,
}

fn installed_version(cache: &Path, package: &str) -> Option<String> {
    let text = std::fs::read(cache.join("node_modules").join(package).join("package.json")).ok()?;
    let value: Value = serde_json::from_slice(&text).ok()?;
    value["version"].as_str().map(str::to_string)
}

fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|candidate| candidate.is_file())
}

fn hosts_in(cache: &Path, node: &Path) -> Result<Hosts, String> {
    let pinned =
        [(CLAUDE_PACKAGE, CLAUDE_VERSION), (CODEX_PACKAGE, CODEX_VERSION), (GEMINI_PACKAGE, GEMINI_VERSION)];
    for (package, version) in pinned {
        match installed_version(cache, package) {
            Some(found) if found == version => {}
            Some(found) => return Err(format!("{package} {found} is in {}, not {version}", cache.display())),
            None => return Err(format!("{package}@{version} is not installed in {}", cache.display())),
        }
    }
    let modules = cache.join("node_modules");
    let hosts = Hosts {
        claude: claude_binary(&modules),
        codex: modules.join(CODEX_PACKAGE).join("bin").join("codex.js"),
        gemini: modules.join(GEMINI_PACKAGE).join("bundle").join("gemini.js"),
        node_dir: node.parent().map(Path::to_path_buf).unwrap_or_default(),
    };
    for binary in [&hosts.claude, &hosts.codex, &hosts.gemini] {
        if !binary.is_file() {
            return Err(format!("{} is missing (an incomplete install?)", binary.display()));
        }
    }
    Ok(hosts)
}

/// Claude Code's native binary: the package's `bin/claude.exe`, which its postinstall puts
/// in place, else (install scripts blocked) the per-platform package's own `claude`.
fn claude_binary(modules: &Path) -> PathBuf {
    let placed = modules.join(CLAUDE_PACKAGE).join("bin").join("claude.exe");
    let big_enough = |path: &Path| std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() > 1_000_000);
    if big_enough(&placed) {
        return placed;
    }
    let scope = modules.join("@anthropic-ai");
    let platform = std::fs::read_dir(&scope).into_iter().flatten().flatten().find_map(|entry| {
        let name = entry.file_name().to_string_lossy().into_owned();
        let binary = entry.path().join("claude");
        (name.starts_with("claude-code-") && big_enough(&binary)).then_some(binary)
    });
    platform.unwrap_or(placed)
}

/// Installs the pinned versions into the cache (quick when they are there already).
fn install(cache: &Path) -> Result<(), String> {
    let npm = which("npm").ok_or("npm is not on PATH")?;
    std::fs::create_dir_all(cache).map_err(|e| format!("{}: {e}", cache.display()))?;
    let manifest = json!({
        "name": "baton-real-hosts", "private": true,
        "dependencies": {CLAUDE_PACKAGE: CLAUDE_VERSION, CODEX_PACKAGE: CODEX_VERSION, GEMINI_PACKAGE: GEMINI_VERSION}
    });
    std::fs::write(cache.join("package.json"), format!("{manifest:#}\n")).map_err(|e| e.to_string())?;
    eprintln!("real hosts: installing the pinned CLIs into {} (npm)", cache.display());
    let started = Instant::now();
    let log = std::fs::File::create(cache.join("install.log")).map_err(|e| e.to_string())?;
    let mut child = Command::new(npm)
        .args(["install", "--no-audit", "--no-fund", "--loglevel=warn"])
        .current_dir(cache)
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .spawn()
        .map_err(|e| format!("npm install: {e}"))?;
    let status = wait_bounded(&mut child, NPM_TIMEOUT).ok_or("npm install took over 300 s")?;
    let log_text = std::fs::read_to_string(cache.join("install.log")).unwrap_or_default();
    if !status.success() {
        return Err(format!("npm install failed ({status}):\n{log_text}"));
    }
    eprintln!("real hosts: installed in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The CLIs to test, or the reason they cannot be (Err); `required` installs what is missing.
pub fn hosts() -> Result<Hosts, String> {
    static HOSTS: std::sync::OnceLock<Result<Hosts, String>> = std::sync::OnceLock::new();
    HOSTS
        .get_or_init(|| {
            let cache = cache_dir();
            let node = which("node").ok_or("node is not on PATH")?;
            match hosts_in(&cache, &node) {
                Ok(hosts) => Ok(hosts),
                Err(_) if mode() == Mode::Required => {
                    install(&cache)?;
                    hosts_in(&cache, &node)
                }
                Err(reason) => {
                    Err(format!("{reason}; run with BATON_REAL_HOSTS=required to install them from npm"))
                }
            }
        })
        .clone()
}

/// Runs `scenario` with the hosts, or prints why it is skipped (failing under `required`).
pub fn with_hosts(name: &str, scenario: impl FnOnce(&Hosts)) {
    if mode() == Mode::Skip {
        skipped(name, &format!("BATON_REAL_HOSTS={}", std::env::var("BATON_REAL_HOSTS").unwrap_or_default()));
        return;
    }
    match hosts() {
        Ok(hosts) => {
            let _slot = scenario_slot();
            let _timer = Timer { name: name.to_string(), started: Instant::now() };
            scenario(&hosts);
        }
        Err(reason) if mode() == Mode::Required => panic!("real hosts required but unavailable: {reason}"),
        Err(reason) => skipped(name, &reason),
    }
}

/// Says why a scenario is skipped, on the real stderr (the test harness captures
/// `eprintln!` of passing tests, and a skip must be seen in a plain `cargo test`).
pub fn skipped(name: &str, reason: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "real hosts: {name} SKIPPED: {reason}");
}

/// Prints how long a scenario took, also when it fails.
struct Timer {
    name: String,
    started: Instant,
}

impl Drop for Timer {
    fn drop(&mut self) {
        eprintln!("real hosts: {} took {:.1} s", self.name, self.started.elapsed().as_secs_f64());
    }
}

/// How many scenarios run at once: `BATON_REAL_HOSTS_PARALLEL` (default 1; `.ci/run` runs
/// two, with `--test-threads=2`). Each world has its own HOME, folders, tmux socket and
/// stand-in server port, so scenarios share nothing but the installed CLIs, which they
/// only read; the limit is the small box.
fn parallel() -> usize {
    std::env::var("BATON_REAL_HOSTS_PARALLEL")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(1)
}

/// A place among the scenarios allowed to run at once, held until dropped.
pub struct Slot;

impl Drop for Slot {
    fn drop(&mut self) {
        let (count, freed) = &SLOTS;
        *count.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) -= 1;
        freed.notify_one();
    }
}

static SLOTS: (std::sync::Mutex<usize>, std::sync::Condvar) =
    (std::sync::Mutex::new(0), std::sync::Condvar::new());

/// Waits for a free slot: at most [`parallel`] scenarios at a time.
fn scenario_slot() -> Slot {
    let (count, freed) = &SLOTS;
    let mut taken = count.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    while *taken >= parallel() {
        taken = freed.wait(taken).unwrap_or_else(|poisoned| poisoned.into_inner());
    }
    *taken += 1;
    Slot
}

pub fn wait_bounded(child: &mut std::process::Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let started = Instant::now();
    while started.elapsed() < limit {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(_) => return None,
        }
    }
    // A child spawned in a process group of its own ([`own_group`]) is ended with all it
    // started: `baton run`'s host CLI, a CLI's own workers. Killing the leader alone left
    // them running past the scenario.
    let pid = child.id() as libc::pid_t;
    // SAFETY: getpgid and kill on our own child's pid, not yet reaped (try_wait saw it run).
    if unsafe { libc::getpgid(pid) } == pid {
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// Spawns `command`'s process in a process group of its own, which [`wait_bounded`] ends
/// whole on a timeout.
pub fn own_group(command: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    command.process_group(0)
}

/// The outcome of one host run.
#[derive(Debug)]
pub struct Run {
    pub status: Option<std::process::ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    pub seconds: f64,
}

impl Run {
    pub fn describe(&self) -> String {
        format!(
            "exit {:?} after {:.1} s\nstdout (tail):\n{}\nstderr (tail):\n{}",
            self.status.map(|s| s.code()),
            self.seconds,
            tail(&self.stdout, 3000),
            tail(&self.stderr, 3000)
        )
    }
}

pub fn tail(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

impl Drop for World {
    /// With `BATON_REAL_HOSTS_KEEP=<dir>`, a copy of the world is kept there for a look.
    fn drop(&mut self) {
        if let Some(keep) = std::env::var_os("BATON_REAL_HOSTS_KEEP").filter(|k| !k.is_empty()) {
            let _ = std::fs::create_dir_all(&keep);
            let _ = Command::new("cp").arg("-a").arg(self.root()).arg(&keep).status();
            eprintln!("real hosts: world kept in {}", Path::new(&keep).display());
        }
    }
}

/// A throwaway world: the sandbox (HOME, TMPDIR, XDG dirs, Claude's config dir) plus
/// Codex's home, with a git repository holding a `.planning/` tree as the project.
pub struct World {
    pub sandbox: Sandbox,
    pub repo: TestRepo,
    pub hosts: Hosts,
}

impl World {
    pub fn new(hosts: &Hosts) -> World {
        let sandbox = Sandbox::new();
        let project = sandbox.project();
        gsd_planning(&project);
        std::fs::write(project.join("README.md"), "# e2e project\n").expect("readme");
        let repo = TestRepo::init(&project, &[]);
        repo.commit_all("initial commit");
        std::fs::create_dir_all(sandbox.root().join("codex-home")).expect("codex home");
        World { sandbox, repo, hosts: hosts.clone() }
    }

    /// Writes what the server received into the world's `logs/` (kept for a look when
    /// `BATON_REAL_HOSTS_KEEP` is set).
    pub fn save_requests(&self, server: &server::Server, name: &str) {
        let logs = self.root().join("logs");
        let _ = std::fs::create_dir_all(&logs);
        let lines: Vec<String> = server
            .recorded()
            .iter()
            .map(|r| {
                json!({"path": r.path, "main": r.main, "turn": r.turn, "millis": r.millis, "body": r.body})
                    .to_string()
            })
            .collect();
        let _ = std::fs::write(logs.join(format!("{name}-requests.jsonl")), lines.join("\n"));
    }

    pub fn root(&self) -> &Path {
        self.sandbox.root()
    }

    pub fn project(&self) -> PathBuf {
        self.sandbox.project()
    }

    pub fn codex_home(&self) -> PathBuf {
        self.root().join("codex-home")
    }

    /// The environment every host (and baton, through the hooks) runs with.
    pub fn env(&self) -> Vec<(String, String)> {
        let path = format!("{}:/usr/local/bin:/usr/bin:/bin", self.hosts.node_dir.display());
        let s = &self.sandbox;
        let mut env = vec![
            ("PATH".to_string(), path),
            ("HOME".to_string(), s.home().display().to_string()),
            ("TMPDIR".to_string(), s.tmp().display().to_string()),
            ("XDG_CONFIG_HOME".to_string(), s.root().join("config").display().to_string()),
            ("XDG_STATE_HOME".to_string(), s.root().join("state").display().to_string()),
            ("XDG_CACHE_HOME".to_string(), s.root().join("cache").display().to_string()),
            ("XDG_DATA_HOME".to_string(), s.root().join("data").display().to_string()),
            ("CLAUDE_CONFIG_DIR".to_string(), s.claude_dir().display().to_string()),
            ("CODEX_HOME".to_string(), self.codex_home().display().to_string()),
            ("LANG".to_string(), "C.UTF-8".to_string()),
            ("NO_COLOR".to_string(), "1".to_string()),
            ("GIT_AUTHOR_NAME".to_string(), "E2E".to_string()),
            ("GIT_AUTHOR_EMAIL".to_string(), "e2e@example.com".to_string()),
            ("GIT_COMMITTER_NAME".to_string(), "E2E".to_string()),
            ("GIT_COMMITTER_EMAIL".to_string(), "e2e@example.com".to_string()),
        ];
        if let Ok(term) = std::env::var("TERM") {
            env.push(("TERM".to_string(), term));
        }
        env
    }

    /// `baton install --host <host>` in this world, asserting it succeeds.
    pub fn baton_install(&self, host: &str) {
        let env: Vec<(String, String)> = self.env();
        let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let output = self.sandbox.run_with(&["install", "--host", host], b"", &pairs);
        assert!(
            output.status.success(),
            "baton install --host {host} failed:\n{}\n{}",
            stdout(&output),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// Runs a host command with the world's environment (plus `extra`), bounded by `limit`.
    pub fn run(&self, program: &Path, args: &[&str], extra: &[(&str, String)], limit: Duration) -> Run {
        self.run_watched(program, args, extra, limit, |_| {})
    }

    /// [`World::run`], with `during` run on a thread of its own, given the process id, while
    /// the process runs (to signal it, or its children, mid-run).
    pub fn run_watched(
        &self,
        program: &Path,
        args: &[&str],
        extra: &[(&str, String)],
        limit: Duration,
        during: impl FnOnce(u32) + Send + 'static,
    ) -> Run {
        let mut command = Command::new(program);
        command.args(args).env_clear().current_dir(self.project());
        for (key, value) in self.env() {
            command.env(key, value);
        }
        for (key, value) in extra {
            command.env(key, value);
        }
        let logs = self.root().join("logs");
        std::fs::create_dir_all(&logs).expect("logs");
        let n = std::fs::read_dir(&logs)
            .map(|d| d.flatten().filter(|e| e.file_name().to_string_lossy().ends_with("-stdout")).count())
            .unwrap_or(0);
        let out_path = logs.join(format!("{n:02}-stdout"));
        let err_path = logs.join(format!("{n:02}-stderr"));
        command
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out_path).expect("stdout file"))
            .stderr(std::fs::File::create(&err_path).expect("stderr file"));
        let started = Instant::now();
        let mut child =
            own_group(&mut command).spawn().unwrap_or_else(|e| panic!("spawn {}: {e}", program.display()));
        let pid = child.id();
        let watcher = std::thread::spawn(move || during(pid));
        let status = wait_bounded(&mut child, limit);
        let _ = watcher.join();
        let read = |path: &Path| {
            let mut text = String::new();
            let _ = std::fs::File::open(path).and_then(|mut f| f.read_to_string(&mut text));
            text
        };
        Run {
            status,
            stdout: read(&out_path),
            stderr: read(&err_path),
            seconds: started.elapsed().as_secs_f64(),
        }
    }

    pub fn handoff_path(&self) -> PathBuf {
        self.project().join(".planning").join("HANDOFF.json")
    }

    /// baton's refs (`refs/baton/...`) in the project's repository, as `name target`.
    pub fn baton_refs(&self) -> Vec<String> {
        let repo = git2::Repository::open(self.project()).expect("open repo");
        let Ok(refs) = repo.references_glob("refs/baton/*") else {
            return vec![];
        };
        refs.flatten()
            .filter_map(|r| {
                let target = r.target().map(|t| t.to_string()).unwrap_or_default();
                r.name().ok().map(|name| format!("{name} {target}"))
            })
            .collect()
    }

    // --- Claude Code ---

    /// Claude Code's own state: onboarding done, the key approved, the project trusted.
    pub fn claude_setup(&self) {
        self.baton_install("claude");
        let path = self.sandbox.claude_dir().join(".claude.json");
        let key_tail: String = API_KEY.chars().skip(API_KEY.chars().count() - 20).collect();
        let project = self.project().display().to_string();
        let state = json!({
            "hasCompletedOnboarding": true,
            "lastOnboardingVersion": CLAUDE_VERSION,
            "customApiKeyResponses": {"approved": [key_tail], "rejected": []},
            "bypassPermissionsModeAccepted": true,
            "projects": {project: {"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true, "allowedTools": []}}
        });
        std::fs::write(path, format!("{state:#}")).expect("write .claude.json");
    }

    pub fn claude_env(&self, server: &server::Server) -> Vec<(&'static str, String)> {
        vec![
            ("ANTHROPIC_BASE_URL", server.base_url()),
            ("ANTHROPIC_API_KEY", API_KEY.to_string()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_string()),
            ("DISABLE_AUTOUPDATER", "1".to_string()),
            ("DISABLE_TELEMETRY", "1".to_string()),
            ("DISABLE_ERROR_REPORTING", "1".to_string()),
            ("CLAUDE_CODE_ENABLE_TELEMETRY", "0".to_string()),
        ]
    }

    /// `claude -p <prompt>` (with `--model` when given).
    pub fn claude_print(&self, server: &server::Server, model: Option<&str>, prompt: &str) -> Run {
        let mut args = vec!["--allowedTools", "Bash,Read", "--output-format", "json"];
        if let Some(model) = model {
            args.extend(["--model", model]);
        }
        args.extend(["-p", prompt]);
        self.run(&self.hosts.claude, &args, &self.claude_env(server), Duration::from_secs(120))
    }

    // --- Codex ---

    pub fn codex_setup(&self, server: &server::Server) {
        self.baton_install("codex");
        let config = format!(
            "model = \"{CODEX_MODEL}\"\nmodel_provider = \"standin\"\nmodel_context_window = {CODEX_WINDOW}\n\
             model_auto_compact_token_limit = 190000\n\
             [model_providers.standin]\nname = \"stand-in\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\n\
             env_key = \"STANDIN_API_KEY\"\nrequest_max_retries = 0\nstream_max_retries = 0\n",
            server.base_url()
        );
        let path = self.codex_home().join("config.toml");
        let existing = std::fs::read_to_string(&path).unwrap_or_default();
        std::fs::write(path, format!("{config}\n{existing}")).expect("write config.toml");
    }

    pub fn codex_exec(&self, prompt: &str) -> Run {
        let node = self.hosts.node_dir.join("node");
        let codex = self.hosts.codex.display().to_string();
        let args = [
            codex.as_str(),
            "exec",
            "--skip-git-repo-check",
            "--dangerously-bypass-hook-trust",
            "-s",
            "danger-full-access",
            prompt,
        ];
        self.run(&node, &args, &[("STANDIN_API_KEY", "stand-in".to_string())], Duration::from_secs(120))
    }

    // --- Gemini CLI ---

    pub fn gemini_setup(&self) {
        let dir = self.sandbox.home().join(".gemini");
        std::fs::create_dir_all(&dir).expect("gemini dir");
        let settings = json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            // Gemini CLI compresses at 0.5 of the window by default; the scripts cross 65 % and
            // 75 %, so the point is moved past them (a real compression is not scripted).
            "model": {"compressionThreshold": 0.9},
            "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false}
        });
        std::fs::write(dir.join("settings.json"), format!("{settings:#}")).expect("gemini settings");
        self.baton_install("gemini");
    }

    pub fn gemini_print(&self, server: &server::Server, prompt: &str) -> Run {
        let node = self.hosts.node_dir.join("node");
        let gemini = self.hosts.gemini.display().to_string();
        let args = [gemini.as_str(), "-m", GEMINI_MODEL, "--yolo", "--skip-trust", "-p", prompt];
        let env = vec![
            ("GOOGLE_GEMINI_BASE_URL", server.base_url()),
            ("GEMINI_API_KEY", "stand-in".to_string()),
            ("GEMINI_CLI_TRUST_WORKSPACE", "true".to_string()),
        ];
        self.run(&node, &args, &env, Duration::from_secs(120))
    }
}

/// The child processes of `pid` (from /proc).
pub fn children_of(pid: u32) -> Vec<u32> {
    let mut found = vec![];
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(child) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // pid (comm) state ppid …: the comm may hold spaces and parentheses.
        let parent =
            stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
        if parent == Some(pid) {
            found.push(child);
        }
    }
    found
}

/// Waits until `count()` reaches `n` (at most `limit`): whether it did.
pub fn wait_until(count: &dyn Fn() -> usize, n: usize, limit: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if count() >= n {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

pub fn tmux_available() -> bool {
    which("tmux").is_some()
}

/// An interactive host in a private tmux server (its own socket), read with capture-pane.
pub struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    /// Starts `program args` in a detached 160×45 session in `cwd` with exactly `env`.
    pub fn start(
        world: &World,
        env: &[(String, String)],
        program: &Path,
        args: &[&str],
    ) -> Result<Tmux, String> {
        let tmux = which("tmux").ok_or("tmux is not on PATH")?;
        let socket = world.root().join("tmux.sock");
        let mut command = Command::new(tmux);
        command
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env("TERM", "xterm-256color");
        command.arg("-S").arg(&socket).args(["new-session", "-d", "-x", "160", "-y", "45", "-c"]);
        command.arg(world.project()).arg(program).args(args);
        let status = command.status().map_err(|e| format!("tmux: {e}"))?;
        if !status.success() {
            return Err(format!("tmux new-session failed: {status}"));
        }
        Ok(Tmux { socket })
    }

    fn tmux(&self, args: &[&str]) -> Option<String> {
        let output = Command::new("tmux").arg("-S").arg(&self.socket).args(args).output().ok()?;
        output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// The visible pane, as text.
    pub fn pane(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "0"]).unwrap_or_default()
    }

    /// Types `text` literally, then presses Enter until `sent` holds (a TUI may take keys
    /// typed in a burst as a paste and an Enter right after as a newline): at most 3 times.
    pub fn type_line(&self, text: &str, sent: impl Fn() -> bool) -> bool {
        self.tmux(&["send-keys", "-t", "0", "-l", text]);
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(1000));
            self.tmux(&["send-keys", "-t", "0", "Enter"]);
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(5) {
                if sent() {
                    return true;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        false
    }

    /// Polls the pane until `done` holds (true) or `limit` passes (false).
    pub fn wait_for(&self, limit: Duration, mut done: impl FnMut(&str) -> bool) -> bool {
        let started = Instant::now();
        while started.elapsed() < limit {
            if done(&self.pane()) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        false
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
    }
}
