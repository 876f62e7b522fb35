//! The npm packages, end to end and offline: the binary (the one the other tests run, or
//! `BATON_NPM_TEST_BINARY`) is assembled into the main package and the linux x64 package
//! (npm/assemble.mjs), both are packed with `npm pack` and installed globally from the
//! tarballs into a temporary prefix, with `--offline` and the registry pointing at a
//! closed port. Through the installed package `baton --version` runs, `baton install`
//! registers the native binary (not the Node launcher), the registered hook answers with
//! Node unable to start, the plugin's launcher runs the same native binary, `npx
//! baton-context install` registers the native binary too, and a missing platform
//! package gets a clear message.
//!
//! Skipped, with the reason printed, where Node or npm is missing or the machine is not
//! linux x64, unless `BATON_NPM_TEST=required` (then those are failures).

use crate::common;

use std::ffi::OsString;
use std::fs;
use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const VERSION: &str = env!("CARGO_PKG_VERSION");
const MAIN_PACKAGE: &str = "baton-context";
const PLATFORM_PACKAGE: &str = "baton-context-linux-x64-gnu";

fn required() -> bool {
    std::env::var("BATON_NPM_TEST").is_ok_and(|v| v == "required")
}

/// Why this test cannot run here, if it cannot.
fn missing_prerequisite() -> Option<String> {
    if !(cfg!(target_os = "linux") && cfg!(target_arch = "x86_64")) {
        return Some("the test packs the linux x64 binary and this is not linux x64".into());
    }
    for tool in ["node", "npm"] {
        match Command::new(tool).arg("--version").output() {
            Ok(output) if output.status.success() => {}
            _ => return Some(format!("`{tool} --version` does not run")),
        }
    }
    None
}

/// The binary to package: `BATON_NPM_TEST_BINARY` when set (the release workflow's
/// static build; `.ci/run`'s release build), else the one the other tests run. What is
/// tested here is the packaging, the registration and the launcher, which do not depend
/// on the profile; building a release binary from inside `cargo test` would cost a clean
/// clone a second full build of every dependency.
fn release_binary() -> PathBuf {
    match std::env::var_os("BATON_NPM_TEST_BINARY") {
        Some(binary) if !binary.is_empty() => PathBuf::from(binary),
        _ => PathBuf::from(BATON),
    }
}

/// The folder `node` is in, so the sandbox's PATH can reach it and little else.
fn node_dir() -> PathBuf {
    let output = Command::new("sh").args(["-c", "command -v node"]).output().expect("sh");
    let node = fs::canonicalize(stdout(&output).trim()).expect("node on PATH");
    node.parent().expect("node's folder").to_path_buf()
}

/// A registry address where nothing listens: any request npm makes fails at once.
fn closed_registry() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    format!("http://127.0.0.1:{port}/")
}

struct World {
    sb: Sandbox,
    path: OsString,
    registry: String,
}

impl World {
    fn prefix(&self) -> PathBuf {
        self.sb.root().join("prefix")
    }

    /// `program` with the sandbox's environment (as the `baton` helpers set it) and npm
    /// kept offline, its cache and config inside the sandbox.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new(program);
        command
            .env_clear()
            .env("PATH", &self.path)
            .env("HOME", self.sb.home())
            .env("TMPDIR", self.sb.tmp())
            .env("XDG_CONFIG_HOME", self.sb.root().join("config"))
            .env("XDG_STATE_HOME", self.sb.root().join("state"))
            .env("CLAUDE_CONFIG_DIR", self.sb.claude_dir())
            .env("NO_COLOR", "1")
            .env("npm_config_registry", &self.registry)
            .env("npm_config_cache", self.sb.root().join("npm-cache"))
            .env("npm_config_userconfig", self.sb.root().join("npmrc"))
            .env("npm_config_offline", "true")
            .env("npm_config_fetch_retries", "0")
            .env("npm_config_audit", "false")
            .env("npm_config_fund", "false")
            .env("npm_config_update_notifier", "false")
            .current_dir(self.sb.project())
            .stdin(Stdio::null());
        command
    }

    fn run(&self, command: &mut Command) -> Output {
        command.output().expect("spawn")
    }
}

fn is_elf(path: &Path) -> bool {
    fs::read(path).is_ok_and(|bytes| bytes.starts_with(b"\x7fELF"))
}

/// Runs a program with `stdin` and waits.
fn run_with_stdin(mut command: Command, stdin: &[u8]) -> (Output, Duration) {
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = command.spawn().expect("spawn");
    child.stdin.take().expect("stdin").write_all(stdin).expect("write stdin");
    let output = child.wait_with_output().expect("wait");
    (output, start.elapsed())
}

#[test]
fn npm_packages_install_offline_and_register_the_native_binary() {
    if let Some(reason) = missing_prerequisite() {
        assert!(!required(), "BATON_NPM_TEST=required but {reason}");
        eprintln!("skipped: {reason}");
        return;
    }
    let binary = release_binary();
    let sb = Sandbox::plain();
    let path =
        std::env::join_paths([sb.root().join("prefix/bin"), node_dir(), "/usr/bin".into(), "/bin".into()])
            .expect("PATH");
    let world = World { sb, path, registry: closed_registry() };

    // Assemble and pack.
    let packages = world.sb.root().join("packages");
    let tarballs = world.sb.root().join("tarballs");
    fs::create_dir_all(&tarballs).unwrap();
    let assembled = world.run(
        world
            .command("node")
            .arg(Path::new(ROOT).join("npm/assemble.mjs"))
            .arg("--out")
            .arg(&packages)
            .arg(format!("--binary=x86_64-unknown-linux-musl={}", binary.display())),
    );
    ok(&assembled);
    for package in [MAIN_PACKAGE, PLATFORM_PACKAGE] {
        let packed = world.run(
            world
                .command("npm")
                .arg("pack")
                .arg(packages.join(package))
                .arg("--pack-destination")
                .arg(&tarballs),
        );
        assert!(ok(&packed).contains(&format!("{package}-{VERSION}.tgz")), "{}", stdout(&packed));
    }
    let manifest = read_json(&packages.join(MAIN_PACKAGE).join("package.json"));
    assert_eq!(manifest["version"], VERSION);
    assert_eq!(manifest["bin"]["baton"], "bin/baton.js");
    assert_eq!(manifest["optionalDependencies"].as_object().unwrap().len(), 6, "{manifest}");
    let platform_manifest = read_json(&packages.join(PLATFORM_PACKAGE).join("package.json"));
    assert_eq!(platform_manifest["os"][0], "linux");
    assert_eq!(platform_manifest["cpu"][0], "x64");
    assert_eq!(platform_manifest["libc"][0], "glibc");
    // The musl build is for both C libraries' packages (static, it runs on glibc too).
    let musl_manifest = read_json(&packages.join("baton-context-linux-x64-musl").join("package.json"));
    assert_eq!(musl_manifest["libc"][0], "musl");

    // Install globally into the prefix, offline.
    let installed = world.run(
        world
            .command("npm")
            .args(["install", "--global", "--prefix"])
            .arg(world.prefix())
            .arg(tarballs.join(format!("{MAIN_PACKAGE}-{VERSION}.tgz")))
            .arg(tarballs.join(format!("{PLATFORM_PACKAGE}-{VERSION}.tgz"))),
    );
    ok(&installed);
    let on_path = world.prefix().join("bin/baton");
    let launcher = fs::canonicalize(&on_path).expect("npm linked bin/baton");
    assert!(launcher.ends_with(format!("{MAIN_PACKAGE}/bin/baton.js")), "{}", launcher.display());
    let native =
        fs::canonicalize(world.prefix().join("lib/node_modules").join(PLATFORM_PACKAGE).join("bin/baton"))
            .expect("the platform package's binary");
    assert!(is_elf(&native), "{} is the native binary", native.display());

    // `baton --version` through the installed package (the launcher runs the binary).
    let version = world.run(world.command(&on_path).arg("--version"));
    assert_eq!(ok(&version).trim(), format!("baton {VERSION}"));

    // `baton install` through the launcher registers the native binary's path.
    ok(&world.run(world.command(&on_path).arg("install")));
    let settings = read_json(&world.sb.claude_settings());
    let hook_command =
        settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"].as_str().expect("hook").to_string();
    assert_eq!(hook_command, format!("{} hook", native.display()), "{settings}");
    assert_eq!(settings["statusLine"]["command"], format!("{} statusline", native.display()));
    for event in ["PostToolUse", "SessionStart", "PreCompact"] {
        let command = settings["hooks"][event][0]["hooks"][0]["command"].as_str().expect("command");
        assert!(command.starts_with(&native.display().to_string()), "{event}: {command}");
    }
    assert!(!settings.to_string().contains("baton.js"), "the launcher is not registered: {settings}");

    // The registered hook, as the host runs it, with Node made unable to start: the native
    // binary answers (the first run warns), the everyday calls after it are quiet. (How
    // fast it answers is the benchmark's business, not a test's.)
    world.sb.write_bridge(SESSION, 30.0, 0);
    let event = world.sb.post_tool_use(SESSION).to_string();
    let (program, argument) = hook_command.rsplit_once(' ').expect("program and argument");
    for run in 0..3 {
        let mut command = world.command(program);
        command.arg(argument).env("NODE_OPTIONS", "--require=/nonexistent/node-must-not-start.js");
        let (output, _) = run_with_stdin(command, event.as_bytes());
        assert!(output.status.success(), "run {run}: {}", stderr(&output));
        let said = told(&output);
        if run == 0 {
            assert!(said.is_some_and(|s| s.contains("CONTEXT WARNING")), "{}", stdout(&output));
        } else {
            assert!(output.stdout.is_empty(), "run {run}: {}", stdout(&output));
        }
    }

    // The plugin's launcher finds npm's `baton` on PATH and runs the native binary: with
    // Node made unable to start, the hook still answers.
    // A second session, so the warning is not held back as already given.
    let plugin_session = "0b5e9c3e-2f41-4d6a-8c7e-5a9d1f0e3b72";
    world.sb.write_bridge(plugin_session, 30.0, 0);
    let event = world.sb.post_tool_use(plugin_session).to_string();
    let mut plugin_hook = world.command(Path::new(ROOT).join("hooks/baton-hook"));
    plugin_hook.arg("PostToolUse").env("CLAUDE_PLUGIN_ROOT", world.sb.root().join("no-plugin-build"));
    plugin_hook.env("NODE_OPTIONS", "--require=/nonexistent/node-must-not-start.js");
    let (output, _) = run_with_stdin(plugin_hook, event.as_bytes());
    let said = told(&output);
    assert!(said.is_some_and(|s| s.contains("CONTEXT WARNING")), "{} {}", stdout(&output), stderr(&output));
    let broken_node = world
        .run(world.command(&on_path).arg("--version").env("NODE_OPTIONS", "--require=/nonexistent/x.js"));
    assert!(!broken_node.status.success(), "the check above would catch a Node start");

    // `npx baton-context install` (from the tarballs, offline) registers the native
    // binary npx unpacked into its cache, not the launcher either.
    let npx_claude = world.sb.root().join("npx-claude-config");
    let npx = world.run(
        world
            .command("npx")
            .args(["--yes", "--offline"])
            .arg(format!("--package={}", tarballs.join(format!("{MAIN_PACKAGE}-{VERSION}.tgz")).display()))
            .arg(format!(
                "--package={}",
                tarballs.join(format!("{PLATFORM_PACKAGE}-{VERSION}.tgz")).display()
            ))
            .args(["--", "baton", "install"])
            .env("CLAUDE_CONFIG_DIR", &npx_claude),
    );
    ok(&npx);
    let npx_settings = read_json(&npx_claude.join("settings.json"));
    let npx_hook = npx_settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"].as_str().expect("hook");
    let npx_native = npx_hook.strip_suffix(" hook").expect("<binary> hook");
    assert!(
        npx_native.contains("/_npx/") && npx_native.ends_with(&format!("{PLATFORM_PACKAGE}/bin/baton")),
        "{npx_hook}"
    );
    assert!(is_elf(Path::new(npx_native)), "{npx_native} is the native binary");

    // Without the platform package: a clear message and how to build from source.
    let platform_dir = world.prefix().join("lib/node_modules").join(PLATFORM_PACKAGE);
    fs::rename(&platform_dir, world.sb.root().join("moved-away")).unwrap();
    let missing = world.run(world.command(&on_path).arg("--version"));
    assert_eq!(missing.status.code(), Some(1));
    let message = stderr(&missing);
    assert!(message.contains("no prebuilt baton binary"), "{message}");
    assert!(
        message.contains(PLATFORM_PACKAGE) && message.contains("cargo install baton-context"),
        "{message}"
    );
}
