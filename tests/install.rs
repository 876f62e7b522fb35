//! `baton install` and `baton uninstall` against real files, through the built binary:
//! the faults and bad input the issue lists, each host, and the promise that uninstall
//! gives back the settings install found.

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;

use common::*;
use serde_json::{Value, json};

/// The events `baton install` registers for Claude Code.
const CLAUDE_EVENTS: [&str; 9] = [
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "PreCompact",
    "SessionEnd",
];

fn hook_commands(settings: &Value, event: &str) -> Vec<String> {
    settings["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
        .filter_map(|h| h["command"].as_str().map(str::to_string))
        .collect()
}

fn baton_hooks(settings: &Value, event: &str) -> usize {
    let ours = format!("{} hook", baton_path());
    hook_commands(settings, event).iter().filter(|c| **c == ours).count()
}

fn backups(dir: &std::path::Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".baton-backup-"))
        .collect()
}

fn leftovers(dir: &std::path::Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".baton-tmp"))
        .collect()
}

#[test]
fn no_settings_file_and_no_folder() {
    let sb = Sandbox::plain();
    fs::remove_dir(sb.root().join("claude-config")).unwrap();
    let out = ok(&sb.run(&["install"], b""));
    assert!(out.contains("+ PostToolUse"), "{out}");
    let settings = read_json(&sb.claude_settings());
    for event in CLAUDE_EVENTS {
        assert_eq!(baton_hooks(&settings, event), 1, "{event}");
    }
    assert_eq!(settings["statusLine"]["command"], json!(format!("{} statusline", baton_path())));
    // Uninstall takes away the file install created: as before, there is none.
    ok(&sb.run(&["uninstall"], b""));
    assert!(!sb.claude_settings().exists());
}

#[test]
fn an_empty_file() {
    let sb = Sandbox::plain();
    write(&sb.claude_settings(), "");
    ok(&sb.run(&["install"], b""));
    assert_eq!(baton_hooks(&read_json(&sb.claude_settings()), "PostToolUse"), 1);
    ok(&sb.run(&["uninstall"], b""));
    assert_eq!(fs::read(sb.claude_settings()).unwrap(), b"", "put back as it was: empty");
}

#[test]
fn other_hooks_on_the_same_events_are_kept_in_order() {
    let sb = Sandbox::plain();
    write(&sb.claude_settings(), GSD_SETTINGS);
    ok(&sb.run(&["install"], b""));
    let settings = read_json(&sb.claude_settings());
    let keys: Vec<&String> = settings.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["$schema", "model", "permissions", "hooks", "statusLine", "enableAllProjectMcpServers"]
    );
    let post = hook_commands(&settings, "PostToolUse");
    assert_eq!(post.len(), 3);
    assert!(post[0].starts_with("npx prettier"));
    assert!(post[1].contains("gsd-context-monitor"));
    assert_eq!(post[2], format!("{} hook", baton_path()));
    assert_eq!(
        hook_commands(&settings, "Stop"),
        ["/home/u/bin/notify-done".to_string(), format!("{} hook", baton_path())]
    );
    ok(&sb.run(&["uninstall"], b""));
    // Byte for byte: the file was already in baton's formatting.
    assert_eq!(fs::read_to_string(sb.claude_settings()).unwrap(), GSD_SETTINGS);
}

#[test]
fn a_gsd_statusline_and_monitor() {
    let sb = Sandbox::plain();
    write(&sb.claude_settings(), GSD_SETTINGS);
    let out = ok(&sb.run(&["install"], b""));
    assert!(out.contains("GSD's context monitor"), "{out}");
    assert!(out.contains("--replace-other-monitors"), "{out}");
    let settings = read_json(&sb.claude_settings());
    let line = settings["statusLine"]["command"].as_str().unwrap();
    assert_eq!(
        line,
        format!("{} statusline --wrap 'node \"/home/u/.claude/hooks/gsd-statusline.js\"'", baton_path())
    );
    assert_eq!(settings["statusLine"]["padding"], json!(1));

    // Now take GSD's monitor out; uninstall puts it back where it was.
    let out = ok(&sb.run(&["install", "--replace-other-monitors"], b""));
    assert!(out.contains("- PostToolUse: GSD's context monitor"), "{out}");
    let settings = read_json(&sb.claude_settings());
    assert!(!settings.to_string().contains("gsd-context-monitor"));
    assert!(settings.to_string().contains("gsd-check-update"), "only the monitor goes");
    let out = ok(&sb.run(&["uninstall"], b""));
    assert!(out.contains("restored"), "{out}");
    assert_eq!(fs::read_to_string(sb.claude_settings()).unwrap(), GSD_SETTINGS);
}

#[test]
fn replace_statusline_and_restore() {
    let sb = Sandbox::plain();
    write(&sb.claude_settings(), GSD_SETTINGS);
    ok(&sb.run(&["install", "--replace-statusline"], b""));
    let settings = read_json(&sb.claude_settings());
    assert_eq!(settings["statusLine"]["command"], json!(format!("{} statusline", baton_path())));
    ok(&sb.run(&["uninstall"], b""));
    assert_eq!(fs::read_to_string(sb.claude_settings()).unwrap(), GSD_SETTINGS);
}

#[test]
fn install_twice() {
    let sb = Sandbox::plain();
    write(&sb.claude_settings(), GSD_SETTINGS);
    ok(&sb.run(&["install"], b""));
    let first = fs::read(sb.claude_settings()).unwrap();
    let out = ok(&sb.run(&["install"], b""));
    assert!(out.contains("already installed"), "{out}");
    assert_eq!(fs::read(sb.claude_settings()).unwrap(), first);
    assert_eq!(backups(&sb.root().join("claude-config")).len(), 1, "one backup, of the file as it was");
    let backup = sb.root().join("claude-config").join(&backups(&sb.root().join("claude-config"))[0]);
    assert_eq!(fs::read_to_string(&backup).unwrap(), GSD_SETTINGS);
    assert_eq!(fs::metadata(&backup).unwrap().permissions().mode() & 0o777, 0o600);
}

#[test]
fn uninstall_without_install() {
    let sb = Sandbox::plain();
    let out = ok(&sb.run(&["uninstall"], b""));
    assert!(out.contains("nothing to remove"), "{out}");
    assert!(!sb.claude_settings().exists(), "no file is created");
    write(&sb.claude_settings(), GSD_SETTINGS);
    let out = ok(&sb.run(&["uninstall"], b""));
    assert!(out.contains("nothing of baton's"), "{out}");
    assert_eq!(fs::read_to_string(sb.claude_settings()).unwrap(), GSD_SETTINGS);
    assert!(backups(&sb.root().join("claude-config")).is_empty());
}

#[test]
fn uninstall_twice() {
    let sb = Sandbox::plain();
    write(&sb.claude_settings(), GSD_SETTINGS);
    ok(&sb.run(&["install", "--replace-other-monitors"], b""));
    ok(&sb.run(&["uninstall"], b""));
    let out = ok(&sb.run(&["uninstall"], b""));
    assert!(out.contains("nothing of baton's"), "{out}");
    assert_eq!(fs::read_to_string(sb.claude_settings()).unwrap(), GSD_SETTINGS);
}

#[test]
fn invalid_json_is_refused_and_left_byte_identical() {
    let sb = Sandbox::plain();
    let broken = "{\n  \"model\": \"opus\",\n  // a comment\n  \"hooks\": {\n}\n";
    write(&sb.claude_settings(), broken);
    for args in [&["install"][..], &["uninstall"], &["install", "--dry-run"]] {
        let output = sb.run(args, b"");
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let err = stderr(&output);
        assert!(err.contains("settings.json") && err.contains("not valid JSON"), "{err}");
        assert!(err.contains("left untouched"), "{err}");
        assert_eq!(fs::read_to_string(sb.claude_settings()).unwrap(), broken);
    }
    assert!(backups(&sb.root().join("claude-config")).is_empty());
}

#[test]
fn a_read_only_settings_file() {
    let sb = Sandbox::plain();
    write(&sb.claude_settings(), GSD_SETTINGS);
    fs::set_permissions(sb.claude_settings(), fs::Permissions::from_mode(0o444)).unwrap();
    let output = sb.run(&["install"], b"");
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(err.contains("read-only") && err.contains("chmod u+w"), "{err}");
    assert_eq!(fs::read_to_string(sb.claude_settings()).unwrap(), GSD_SETTINGS);
    assert!(leftovers(&sb.root().join("claude-config")).is_empty());
    assert_eq!(fs::metadata(sb.claude_settings()).unwrap().permissions().mode() & 0o777, 0o444);
}

#[test]
fn two_installs_at_the_same_moment() {
    let sb = Sandbox::plain();
    write(&sb.claude_settings(), GSD_SETTINGS);
    // Different parts at once: without the lock, a writer that read the file before
    // another's write would drop that write's part.
    let parts: [&[&str]; 3] = [
        &["install", "--hooks-only"],
        &["install", "--statusline-only"],
        &["install", "--replace-other-monitors"],
    ];
    let children: Vec<_> = (0..9)
        .map(|i| {
            let mut command = sb.command(parts[i % 3]);
            command.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let settings = read_json(&sb.claude_settings());
    for event in CLAUDE_EVENTS {
        assert_eq!(baton_hooks(&settings, event), 1, "{event}");
    }
    assert!(settings["statusLine"]["command"].as_str().unwrap().contains("--wrap 'node"));
    assert_eq!(settings["statusLine"]["command"].as_str().unwrap().matches("--wrap").count(), 1);
    assert!(!settings.to_string().contains("gsd-context-monitor"));
    assert_eq!(backups(&sb.root().join("claude-config")).len(), 1);
    ok(&sb.run(&["uninstall"], b""));
    assert_eq!(fs::read_to_string(sb.claude_settings()).unwrap(), GSD_SETTINGS);
}

#[test]
fn claude_config_dir_is_honoured_and_home_is_the_default() {
    let sb = Sandbox::plain();
    ok(&sb.run(&["install"], b""));
    assert!(sb.root().join("claude-config/settings.json").exists());
    assert!(!sb.home().join(".claude").exists());

    let mut sb = Sandbox::plain();
    sb.claude_config_dir = false;
    ok(&sb.run(&["install"], b""));
    assert!(sb.home().join(".claude/settings.json").exists());
    ok(&sb.run(&["uninstall"], b""));
    assert!(!sb.home().join(".claude/settings.json").exists());
}

#[test]
fn dry_run_writes_nothing() {
    let sb = Sandbox::plain();
    write(&sb.claude_settings(), GSD_SETTINGS);
    let out = ok(&sb.run(&["install", "--dry-run", "--host", "all", "--replace-other-monitors"], b""));
    assert!(out.contains("--- ") && out.contains("+++ "), "{out}");
    assert!(out.contains(&format!("+            \"command\": \"{} hook\",", baton_path())), "{out}");
    assert!(out.contains("dry run: nothing was written"), "{out}");
    assert_eq!(fs::read_to_string(sb.claude_settings()).unwrap(), GSD_SETTINGS);
    assert!(backups(&sb.root().join("claude-config")).is_empty());
    assert!(!sb.state_dir().exists(), "no state written either");
    // A missing file is shown as created, and still not created.
    let sb = Sandbox::plain();
    let out = ok(&sb.run(&["install", "--dry-run"], b""));
    assert!(out.contains("--- /dev/null"), "{out}");
    assert!(!sb.claude_settings().exists());
    // Uninstall too.
    write(&sb.claude_settings(), GSD_SETTINGS);
    ok(&sb.run(&["install"], b""));
    let installed = fs::read(sb.claude_settings()).unwrap();
    let out = ok(&sb.run(&["uninstall", "--dry-run"], b""));
    assert!(out.contains("-            \"command\""), "{out}");
    assert_eq!(fs::read(sb.claude_settings()).unwrap(), installed);
}

#[test]
fn gemini_cli_round_trip() {
    let sb = Sandbox::plain();
    let path = sb.home().join(".gemini/settings.json");
    let before = r#"{
  "theme": "GitHub",
  "hooks": {
    "AfterTool": [
      {
        "matcher": "write_file|replace",
        "hooks": [
          {
            "name": "fmt",
            "type": "command",
            "command": "./scripts/fmt.sh",
            "timeout": 5000
          }
        ]
      }
    ]
  },
  "general": {
    "vimMode": true
  }
}
"#;
    write(&path, before);
    let out = ok(&sb.run(&["install", "--host", "gemini"], b""));
    assert!(out.contains("Gemini CLI, user settings: ~/.gemini/settings.json"), "{out}");
    let settings = read_json(&path);
    for event in ["AfterTool", "BeforeAgent", "SessionStart", "PreCompress", "SessionEnd"] {
        assert_eq!(baton_hooks(&settings, event), 1, "{event}");
    }
    assert_eq!(settings["hooks"]["AfterTool"][1]["hooks"][0]["timeout"], json!(10_000));
    assert!(settings.get("statusLine").is_none());
    assert!(!sb.claude_settings().exists(), "only the host asked for");
    ok(&sb.run(&["uninstall", "--host", "gemini"], b""));
    assert_eq!(fs::read_to_string(&path).unwrap(), before);
}

#[test]
fn codex_round_trip_with_codex_home() {
    let sb = Sandbox::plain();
    let before = r#"{
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "python3 ~/.codex/hooks/audit.py",
            "timeout": 30
          }
        ]
      }
    ]
  }
}
"#;
    let path = sb.home().join(".codex/hooks.json");
    write(&path, before);
    let out = ok(&sb.run(&["install", "--host", "codex"], b""));
    let settings = read_json(&path);
    for event in ["PostToolUse", "UserPromptSubmit", "SessionStart", "PreCompact", "SessionEnd"] {
        assert_eq!(baton_hooks(&settings, event), 1, "{event}");
    }
    assert_eq!(baton_hooks(&settings, "PostToolUseFailure"), 0, "Codex has no such event");
    assert_eq!(settings["hooks"]["SessionStart"][0]["hooks"][0]["timeout"], json!(10));
    assert_eq!(settings["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"], json!(3));
    // The hooks run only once the user trusts them in Codex: install says how.
    assert!(out.contains("Hooks need review") && out.contains("/hooks"), "{out}");
    ok(&sb.run(&["uninstall", "--host", "codex"], b""));
    assert_eq!(fs::read_to_string(&path).unwrap(), before);

    // CODEX_HOME moves the user file.
    let other = sb.root().join("codex-home");
    let output = sb.command(&["install", "--host", "codex"]).env("CODEX_HOME", &other).output().unwrap();
    ok(&output);
    assert!(other.join("hooks.json").exists());
}

#[test]
fn host_all_takes_the_hosts_that_are_set_up() {
    let sb = Sandbox::plain();
    fs::create_dir_all(sb.home().join(".gemini")).unwrap();
    let out = ok(&sb.run(&["install", "--host", "all"], b""));
    assert!(out.contains("Codex: ~/.codex does not exist"), "{out}");
    assert!(sb.claude_settings().exists());
    assert!(sb.home().join(".gemini/settings.json").exists());
    assert!(!sb.home().join(".codex").exists());
    ok(&sb.run(&["uninstall", "--host", "all"], b""));
    assert!(!sb.claude_settings().exists());
    assert!(!sb.home().join(".gemini/settings.json").exists());
}

#[test]
fn copilot_is_picked_in_a_project_only_for_a_copilot_user_and_its_hooks_folder_goes_with_it() {
    let sb = Sandbox::plain();
    fs::create_dir_all(sb.project().join(".github/workflows")).unwrap();
    // Every GitHub repository has .github: without ~/.copilot, Copilot CLI is not set up.
    let out = ok(&sb.run(&["install", "--host", "all", "--scope", "project", "--hooks-only"], b""));
    assert!(out.contains("Copilot CLI: ~/.copilot does not exist"), "{out}");
    assert!(!sb.project().join(".github/hooks").exists(), "{out}");
    fs::create_dir_all(sb.home().join(".copilot")).unwrap();
    ok(&sb.run(&["install", "--host", "all", "--scope", "project", "--hooks-only"], b""));
    assert!(sb.project().join(".github/hooks/baton.json").is_file());
    let out = ok(&sb.run(&["uninstall", "--host", "copilot", "--scope", "project"], b""));
    assert!(!sb.project().join(".github/hooks").exists(), "the folder install made goes: {out}");
    assert!(sb.project().join(".github/workflows").is_dir(), "the rest of .github stays");
    // A hooks folder that was there before install stays, and what else is in it.
    fs::create_dir_all(sb.home().join(".copilot/hooks")).unwrap();
    ok(&sb.run(&["install", "--host", "copilot"], b""));
    ok(&sb.run(&["uninstall", "--host", "copilot"], b""));
    assert!(sb.home().join(".copilot/hooks").is_dir());
    assert!(!sb.home().join(".copilot/hooks/baton.json").exists());
}

#[test]
fn project_and_local_scopes() {
    let sb = Sandbox::plain();
    ok(&sb.run(&["install", "--scope", "project", "--hooks-only"], b""));
    let project = read_json(&sb.project().join(".claude/settings.json"));
    assert_eq!(baton_hooks(&project, "PreCompact"), 1);
    assert!(project.get("statusLine").is_none(), "--hooks-only");
    ok(&sb.run(&["install", "--scope", "local", "--statusline-only"], b""));
    let local = read_json(&sb.project().join(".claude/settings.local.json"));
    assert!(local.get("hooks").is_none(), "--statusline-only");
    assert!(local["statusLine"]["command"].as_str().unwrap().ends_with("baton statusline"));
    assert!(!sb.claude_settings().exists(), "the user file is not touched");
    ok(&sb.run(&["uninstall", "--scope", "project"], b""));
    ok(&sb.run(&["uninstall", "--scope", "local"], b""));
    assert!(!sb.project().join(".claude/settings.json").exists());
    assert!(!sb.project().join(".claude/settings.local.json").exists());
}

#[test]
fn a_symlinked_settings_file_is_updated_where_it_points() {
    let sb = Sandbox::plain();
    let real = sb.root().join("dotfiles/claude-settings.json");
    write(&real, GSD_SETTINGS);
    std::os::unix::fs::symlink(&real, sb.claude_settings()).unwrap();
    ok(&sb.run(&["install"], b""));
    assert!(fs::symlink_metadata(sb.claude_settings()).unwrap().file_type().is_symlink());
    assert_eq!(baton_hooks(&read_json(&real), "PostToolUse"), 1);
    ok(&sb.run(&["uninstall"], b""));
    assert_eq!(fs::read_to_string(&real).unwrap(), GSD_SETTINGS);
}

#[test]
fn usage_errors_exit_2() {
    let sb = Sandbox::plain();
    for args in [
        &["install", "--host", "gemini", "--scope", "local"][..],
        &["install", "--host", "nope"],
        &["install", "--statusline-only", "--hooks-only"],
    ] {
        let output = sb.run(args, b"");
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
    }
    let err = stderr(&sb.run(&["install", "--host", "gemini", "--scope", "local"], b""));
    assert!(err.contains("--scope project"), "{err}");
}

#[test]
fn a_mistyped_command_suggests_the_closest_first() {
    let sb = Sandbox::plain();
    let output = sb.run(&["instal"], b"");
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(err.contains("'install', 'uninstall'"), "{err}");
    let err = stderr(&sb.run(&["stauts"], b""));
    assert!(err.contains("'status', 'statusline'"), "{err}");
}

#[test]
fn help_reads_well() {
    let sb = Sandbox::plain();
    let help = ok(&sb.run(&["install", "--help"], b""));
    for needle in
        ["--dry-run", "--replace-statusline", "--replace-other-monitors", "--statusline-only", "Examples:"]
    {
        assert!(help.contains(needle), "{needle} in\n{help}");
    }
    let help = ok(&sb.run(&["uninstall", "--help"], b""));
    assert!(!help.contains("--replace-statusline"), "hidden for uninstall:\n{help}");
    ok(&sb.run(&["doctor", "--help"], b""));
    let help = ok(&sb.run(&["statusline", "--help"], b""));
    assert!(help.contains("--wrap"), "{help}");
}

#[test]
fn an_older_install_is_upgraded_with_the_new_events_once() {
    let sb = Sandbox::plain();
    ok(&sb.run(&["install"], b""));
    // What an install from before PostToolUseFailure and SessionEnd left behind.
    let mut settings = read_json(&sb.claude_settings());
    let hooks = settings["hooks"].as_object_mut().unwrap();
    hooks.shift_remove("PostToolUseFailure");
    hooks.shift_remove("SessionEnd");
    write(&sb.claude_settings(), &serde_json::to_string_pretty(&settings).unwrap());
    let out = ok(&sb.run(&["install"], b""));
    assert!(out.contains("+ PostToolUseFailure") && out.contains("+ SessionEnd"), "{out}");
    assert!(!out.contains("+ PostToolUse:") && !out.contains("+ SessionStart"), "{out}");
    let settings = read_json(&sb.claude_settings());
    for event in CLAUDE_EVENTS {
        assert_eq!(baton_hooks(&settings, event), 1, "{event}");
    }
    assert!(ok(&sb.run(&["install"], b"")).contains("already installed"));
    // Uninstall takes every event away, the new ones included.
    ok(&sb.run(&["uninstall"], b""));
    assert!(!sb.claude_settings().exists());
}

#[test]
fn settings_example_is_what_install_writes() {
    let sb = Sandbox::plain();
    ok(&sb.run(&["install"], b""));
    let written = fs::read_to_string(sb.claude_settings()).unwrap();
    let example = include_str!("../settings.example.json");
    assert_eq!(
        written.replace(&baton_path(), "/home/you/.cargo/bin/baton"),
        example,
        "settings.example.json is out of date: regenerate it from `baton install` into an empty file"
    );
}

/// Uninstall puts back the very bytes install found (one-line objects stay one line, key
/// order and spacing kept), then removes its backup; when something else changed the
/// file since, it removes baton's entries structurally and keeps the rest.
#[test]
fn uninstall_restores_the_settings_byte_for_byte() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut originals: Vec<(String, Vec<u8>)> = vec![
        ("one-line".into(), br#"{"theme":"dark","model":"opus","hooks":{}}"#.to_vec()),
        ("gsd".into(), GSD_SETTINGS.as_bytes().to_vec()),
        ("crlf and tabs".into(), b"{\r\n\t\"env\": {\"A\": \"1\"},   \"z\": [1,2]\r\n}\r\n".to_vec()),
    ];
    for entry in walk(&fixtures) {
        let name = entry.file_name().unwrap().to_string_lossy().into_owned();
        if name.contains("settings") && name.ends_with(".json") {
            originals.push((name, fs::read(&entry).unwrap()));
        }
    }
    assert!(originals.len() >= 4, "the fixtures hold a settings file");
    for (name, bytes) in originals {
        let sb = Sandbox::plain();
        fs::create_dir_all(sb.claude_dir()).unwrap();
        fs::write(sb.claude_settings(), &bytes).unwrap();
        ok(&sb.run(&["install"], b""));
        assert_ne!(fs::read(sb.claude_settings()).unwrap(), bytes, "{name}: installed");
        let out = ok(&sb.run(&["uninstall"], b""));
        assert!(out.contains("byte for byte"), "{name}: {out}");
        assert_eq!(fs::read(sb.claude_settings()).unwrap(), bytes, "{name}: the same bytes");
        assert!(backups(&sb.claude_dir()).is_empty(), "{name}: the backup is removed");
    }
    // Changed by someone else since: the structural removal, the other change kept.
    let sb = Sandbox::plain();
    write(&sb.claude_settings(), r#"{"theme":"dark"}"#);
    ok(&sb.run(&["install"], b""));
    let mut settings = read_json(&sb.claude_settings());
    settings["added_later"] = json!(true);
    write(&sb.claude_settings(), &settings.to_string());
    let out = ok(&sb.run(&["uninstall"], b""));
    assert!(!out.contains("byte for byte"), "{out}");
    assert_eq!(read_json(&sb.claude_settings()), json!({"theme": "dark", "added_later": true}));
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = vec![];
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() { files.extend(walk(&path)) } else { files.push(path) }
    }
    files
}

/// GitHub Copilot CLI: the hooks in baton's own hook file, the statusline in the user's
/// `~/.copilot/settings.json` (created for it, removed with it); a settings file of the
/// user's keeps its keys and gets its statusline back.
#[test]
fn copilot_cli_statusline_goes_in_its_user_settings() {
    let sandbox = Sandbox::new();
    let home = sandbox.home().join(".copilot");
    let ok = |args: &[&str]| {
        let output = sandbox.run(args, b"");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    };
    ok(&["install", "--host", "copilot"]);
    let settings: Value = serde_json::from_slice(&fs::read(home.join("settings.json")).unwrap()).unwrap();
    assert_eq!(
        settings,
        json!({"statusLine": {"type": "command", "command": format!("{} statusline --host copilot", baton_path())}})
    );
    let hooks: Value = serde_json::from_slice(&fs::read(home.join("hooks/baton.json")).unwrap()).unwrap();
    assert!(hooks.get("statusLine").is_none(), "{hooks}");
    ok(&["uninstall", "--host", "copilot"]);
    assert!(!home.join("settings.json").exists() && !home.join("hooks/baton.json").exists());

    let mine = json!({"model": "gpt-5", "statusLine": {"type": "command", "command": "~/bin/line.sh", "padding": 1}});
    fs::create_dir_all(&home).unwrap();
    fs::write(home.join("settings.json"), format!("{mine:#}\n")).unwrap();
    ok(&["install", "--host", "copilot", "--statusline-only"]);
    let settings: Value = serde_json::from_slice(&fs::read(home.join("settings.json")).unwrap()).unwrap();
    let command = settings["statusLine"]["command"].as_str().unwrap();
    assert!(command.contains("statusline --host copilot --wrap"), "{command}");
    assert_eq!(settings["statusLine"]["padding"], json!(1));
    assert!(!home.join("hooks").exists(), "--statusline-only writes no hook file");
    ok(&["uninstall", "--host", "copilot"]);
    let back: Value = serde_json::from_slice(&fs::read(home.join("settings.json")).unwrap()).unwrap();
    assert_eq!(back, mine);
}
