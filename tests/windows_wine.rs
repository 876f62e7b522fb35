//! The Windows build, black-box, under wine: `baton.exe` run the way a Windows host runs
//! it (`ci/windows/run.sh`: `USERPROFILE`, `TEMP`, `TMP` and `SystemRoot` set, no `HOME`,
//! no `TMPDIR`), in a Windows-style home and project (`C:\Users\<name>\proj`, inside the
//! wine prefix), through the whole flow: install twice, doctor, the warnings, the CRITICAL
//! handoff and its checkpoint, the next session's brief, the status line, uninstall; and
//! the demo beside the Linux one.
//!
//! They run when `BATON_WINDOWS_EXE` names a `baton.exe` built for
//! `x86_64-pc-windows-gnu` and `ci/windows/setup.sh` has made the prefix (`.ci/run` does
//! both); otherwise each test returns at once, saying so, unless `BATON_WINDOWS=required`,
//! which makes that a failure. Each wine process costs about half a second: the tests run
//! few of them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::{self, TestRepo};

const SESSION: &str = "5e1f0a2b-7c3d-4e5f-8a9b-0c1d2e3f4a5b";

/// A Windows user's world inside the wine prefix: `C:\Users\<name>` (its profile, with
/// `.claude\settings.json`, `AppData\Local\Temp` and a copy of `baton.exe` in `bin`) and
/// the project `C:\Users\<name>\proj`. Removed when dropped.
struct WindowsWorld {
    name: String,
    /// The profile folder as Linux sees it.
    profile: PathBuf,
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The wine prefix `ci/windows/env.sh` names.
fn wine_prefix() -> PathBuf {
    let output = Command::new("bash")
        .arg("-c")
        .arg(r#". ci/windows/env.sh && printf %s "$WINEPREFIX""#)
        .current_dir(repo_root())
        .output()
        .expect("bash");
    PathBuf::from(String::from_utf8_lossy(&output.stdout).into_owned())
}

impl WindowsWorld {
    /// A new world, or `None` (said on stderr) when the Windows build is not there.
    fn new(test: &str) -> Option<WindowsWorld> {
        let required = std::env::var("BATON_WINDOWS").is_ok_and(|v| v == "required");
        let exe = std::env::var_os("BATON_WINDOWS_EXE").map(PathBuf::from).filter(|p| p.is_file());
        let prefix = wine_prefix();
        let ready = prefix.join("system.reg").is_file();
        let Some(exe) = exe.filter(|_| ready) else {
            assert!(!required, "BATON_WINDOWS=required, but BATON_WINDOWS_EXE or the wine prefix is missing");
            eprintln!("{test}: skipped (set BATON_WINDOWS_EXE to a baton.exe and run ci/windows/setup.sh)");
            return None;
        };
        // A name of its own per test run (the profile folder is made by hand: wine needs
        // no account for it), in `C:\Users`.
        let name = format!("bt{}{}", std::process::id(), &test[..test.len().min(6)]);
        let profile = prefix.join("drive_c/users").join(&name);
        let _ = std::fs::remove_dir_all(&profile);
        for sub in ["bin", "proj", "AppData/Local/Temp", "AppData/Roaming", ".claude"] {
            std::fs::create_dir_all(profile.join(sub)).expect("mkdir");
        }
        std::fs::copy(&exe, profile.join("bin/baton.exe")).expect("copy baton.exe");
        Some(WindowsWorld { name, profile })
    }

    /// `C:\Users\<name>\<rel>` (`rel` with `\`).
    fn win(&self, rel: &str) -> String {
        if rel.is_empty() {
            format!(r"C:\Users\{}", self.name)
        } else {
            format!(r"C:\Users\{}\{rel}", self.name)
        }
    }

    fn project(&self) -> PathBuf {
        self.profile.join("proj")
    }

    fn temp(&self) -> PathBuf {
        self.profile.join("AppData/Local/Temp")
    }

    fn settings(&self) -> PathBuf {
        self.profile.join(".claude/settings.json")
    }

    /// `baton.exe <args>` in the project, as a host on Windows starts it, with `stdin`.
    fn run(&self, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
        let mut command = Command::new(repo_root().join("ci/windows/run.sh"));
        command.arg("--env").arg(format!("USERPROFILE={}", self.win("")));
        for (name, value) in env {
            command.arg("--env").arg(format!("{name}={value}"));
        }
        command
            .arg("--cd")
            .arg(self.win("proj"))
            .arg("--")
            .arg(self.profile.join("bin/baton.exe"))
            .args(args);
        common_run(command, stdin)
    }

    /// A command line run with cmd, as a host without Git Bash or PowerShell would.
    fn cmd(&self, line: &str, stdin: &[u8]) -> Output {
        let mut command = Command::new(repo_root().join("ci/windows/run.sh"));
        command.arg("--env").arg(format!("USERPROFILE={}", self.win("")));
        command.arg("--cd").arg(self.win("proj")).arg("--");
        // wine's cmd.exe, named by its Linux path in the prefix.
        command.arg(wine_prefix().join("drive_c/windows/system32/cmd.exe")).arg("/d").arg("/c").arg(line);
        common_run(command, stdin)
    }

    /// GSD's bridge in the Windows temp folder, as the status line writes it.
    fn write_bridge(&self, remaining: u64) {
        let bridge = json!({
            "session_id": SESSION,
            "remaining_percentage": remaining,
            "used_pct": 100 - remaining,
            "timestamp": common::now(),
        });
        std::fs::write(self.temp().join(format!("claude-ctx-{SESSION}.json")), bridge.to_string())
            .expect("bridge");
    }

    /// A PostToolUse event whose cwd is spelled in another case than the folder's.
    fn post_tool_use(&self) -> Vec<u8> {
        json!({
            "session_id": SESSION,
            "cwd": self.win("proj").to_lowercase(),
            "hook_event_name": "PostToolUse",
            "tool_name": "Edit",
            "tool_input": {"file_path": self.win(r"proj\src\app.ts")},
            "tool_response": {"success": true},
            "tool_use_id": "toolu_1"
        })
        .to_string()
        .into_bytes()
    }
}

impl Drop for WindowsWorld {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

fn common_run(mut command: Command, stdin: &[u8]) -> Output {
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().expect("run.sh");
    let mut pipe = child.stdin.take().expect("stdin");
    let bytes = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = pipe.write_all(&bytes);
    });
    let output = child.wait_with_output().expect("wait");
    let _ = writer.join();
    output
}

fn ok(output: &Output, what: &str) -> String {
    assert!(
        output.status.success(),
        "{what}: exit {:?}\nstdout: {}\nstderr: {}",
        output.status.code(),
        common::stdout(output),
        common::stderr(output)
    );
    common::stdout(output)
}

/// What the hook told the agent (`additionalContext`), if anything.
fn told(output: &Output) -> Option<String> {
    let text = ok(output, "hook");
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let envelope: Value = serde_json::from_str(text).expect("one JSON envelope");
    envelope["hookSpecificOutput"]["additionalContext"].as_str().map(str::to_string)
}

/// A GSD project with a git history and work in progress, in the world's `proj`.
fn gsd_project(world: &WindowsWorld) -> TestRepo {
    let repo = TestRepo::init(&world.project(), &[("src/app.ts", "app\n")]);
    common::gsd_planning(&world.project());
    repo.commit_all("plan phase 3");
    repo.write("src/app.ts", "app, edited\n");
    repo.write("src/limiter.ts", "new module\n");
    repo
}

#[test]
fn windows_install_doctor_warnings_handoff_brief_statusline_uninstall() {
    let Some(world) = WindowsWorld::new("flow") else { return };
    let repo = gsd_project(&world);
    let branch = repo.repo.head().unwrap().shorthand().unwrap().to_string();
    let before = "{\n  \"model\": \"opus\",\n  \"permissions\": {\"allow\": [\"Bash(npm test:*)\"]}\n}\n";
    std::fs::write(world.settings(), before).unwrap();

    // Install twice: the second changes nothing. The commands name baton.exe with `/`
    // and no `\\?\`, and run under cmd.
    let first = ok(&world.run(&["install"], b"", &[]), "install");
    assert!(first.contains("PostToolUse"), "{first}");
    let installed = std::fs::read(world.settings()).unwrap();
    let settings: Value = serde_json::from_slice(&installed).unwrap();
    let hook = settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"].as_str().unwrap().to_string();
    let program = hook.strip_suffix(" hook").expect("<program> hook");
    assert!(program.ends_with("/bin/baton.exe") && program.contains(":/"), "{hook}");
    assert!(!hook.contains('\\'), "no backslash, no verbatim prefix: {hook}");
    assert_eq!(settings["statusLine"]["command"], format!("{program} statusline"));
    let second = ok(&world.run(&["install"], b"", &[]), "install again");
    assert!(second.contains("nothing to change"), "{second}");
    assert_eq!(std::fs::read(world.settings()).unwrap(), installed, "install twice = install once");

    // Doctor passes (its self-test runs the hook the way the host will).
    let doctor = world.run(&["doctor"], b"", &[]);
    let report = ok(&doctor, "doctor");
    // "all checks passed", or "no failures" beside a warning (a slow debug-build self-test).
    assert!(report.contains("all checks passed") || report.contains("no failures"), "{report}");
    assert!(report.contains("registered once each"), "{report}");

    // The registered command runs under cmd (no shell quoting it cannot read).
    let version = ok(&world.cmd(&format!("{program} --version"), b""), "cmd /c <program>");
    assert!(version.starts_with("baton "), "{version}");

    // The warnings, from GSD's bridge in TEMP, with the cwd in another case.
    world.write_bridge(35);
    let warning = told(&world.run(&["hook"], &world.post_tool_use(), &[])).expect("35 % warns");
    assert!(warning.starts_with("CONTEXT WARNING:"), "{warning}");
    world.write_bridge(25);
    let critical = told(&world.run(&["hook"], &world.post_tool_use(), &[])).expect("25 % is critical");
    assert!(critical.starts_with("CONTEXT CRITICAL:"), "{critical}");
    assert!(critical.contains(".planning/HANDOFF.json"), "paths with / in the message: {critical}");

    // The handoff: GSD's paths with `/`, the checkpoint ref, the branch and index untouched.
    let handoff = common::read_json(&world.project().join(".planning/HANDOFF.json"));
    assert_eq!(handoff["phase_dir"], ".planning/phases/03-rate-limiting", "{handoff}");
    assert_eq!(handoff["baton"]["continue_here"], ".planning/phases/03-rate-limiting/.continue-here.md");
    assert_eq!(handoff["uncommitted_files"], json!(["src/app.ts", "src/limiter.ts"]), "{handoff}");
    let reference = handoff["baton"]["checkpoint"]["reference"].as_str().expect("checkpoint ref");
    assert_eq!(reference, format!("refs/baton/wip/{SESSION}"));
    let checkpoint = repo.repo.find_reference(reference).unwrap().peel_to_commit().unwrap();
    let tree = checkpoint.tree().unwrap();
    let blob = |path: &str| repo.repo.find_blob(tree.get_path(Path::new(path)).unwrap().id()).unwrap();
    assert_eq!(blob("src/app.ts").content(), b"app, edited\n");
    assert_eq!(blob("src/limiter.ts").content(), b"new module\n");
    assert_eq!(repo.repo.head().unwrap().shorthand().unwrap(), branch);
    assert_eq!(repo.head_commit().message().unwrap(), "plan phase 3");
    assert!(repo.status().iter().any(|(path, _)| path == "src/app.ts"), "the edit is still uncommitted");
    let fsck = Command::new("git").args(["fsck", "--strict"]).current_dir(world.project()).output().unwrap();
    assert!(fsck.status.success(), "{}", common::stderr(&fsck));

    // The next session here is briefed (the cwd as the folder is spelled).
    let start = json!({"session_id": "next-session", "cwd": world.win("proj"), "hook_event_name": "SessionStart", "source": "startup"});
    let brief = told(&world.run(&["hook"], start.to_string().as_bytes(), &[])).expect("a brief");
    assert!(brief.starts_with("baton resume brief:"), "{brief}");
    assert!(brief.contains("phase 03"), "{brief}");

    // The status line: model, branch, git counts (the scan under libgit2), the GSD task.
    let payload = json!({
        "session_id": SESSION,
        "cwd": world.win("proj"),
        "workspace": {"current_dir": world.win("proj")},
        "model": {"display_name": "Opus"},
        "context_window": {"used_percentage": 40, "context_window_size": 200000}
    });
    let env = [("COLUMNS", "200"), ("NO_COLOR", "1"), ("BATON_STATUSLINE_GIT_BUDGET_MS", "5000")];
    let line = ok(&world.run(&["statusline"], payload.to_string().as_bytes(), &env), "statusline");
    for part in ["Opus", "proj", branch.as_str(), "~1 ?", "40%"] {
        assert!(line.contains(part), "{part:?} in {line}");
    }

    // Uninstall: the settings file byte for byte as it was.
    ok(&world.run(&["uninstall"], b"", &[]), "uninstall");
    assert_eq!(std::fs::read_to_string(world.settings()).unwrap(), before);
}

/// Commit hashes and the sandbox's paths, which differ from run to run and system to
/// system, as `#` and `<path>`.
fn normalise(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let words: Vec<String> = line
            .split(' ')
            .map(|word| {
                let hex = word.trim_matches(|c: char| !c.is_ascii_alphanumeric());
                if hex.len() >= 7
                    && hex.chars().all(|c| c.is_ascii_hexdigit())
                    && hex.chars().any(|c| c.is_ascii_digit())
                {
                    word.replace(hex, "#")
                } else {
                    word.to_string()
                }
            })
            .collect();
        out.push_str(&words.join(" "));
        out.push('\n');
    }
    out
}

#[test]
fn windows_demo_matches_the_linux_demo_but_for_hashes_and_paths() {
    let Some(world) = WindowsWorld::new("demo") else { return };
    let windows = ok(&world.run(&["demo"], b"", &[("NO_COLOR", "1"), ("COLUMNS", "100")]), "demo under wine");
    let linux =
        Command::new(common::BATON).arg("demo").env("NO_COLOR", "1").env("COLUMNS", "100").output().unwrap();
    let linux = ok(&linux, "demo on Linux");
    assert_eq!(normalise(&windows), normalise(&linux), "windows:\n{windows}\nlinux:\n{linux}");
}
