//! `baton completions <shell>` and `baton man`: generated from the clap definitions, so
//! every command is in them; bash's script is loaded into a real bash.

use crate::common;

use std::fs;
use std::process::Command;

use common::*;

/// Commands a person types; each must be completed and have a page.
const COMMANDS: [&str; 6] = ["install", "uninstall", "doctor", "statusline", "pause", "completions"];

#[test]
fn every_shell_gets_a_script_that_names_the_commands() {
    let sb = Sandbox::plain();
    for (shell, marker) in [
        ("bash", "complete -F _baton"),
        ("zsh", "#compdef baton"),
        ("fish", "complete -c baton"),
        ("elvish", "edit:completion:arg-completer[baton]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let script = ok(&sb.run(&["completions", shell], b""));
        assert!(script.contains(marker), "{shell}: no {marker:?}");
        for command in COMMANDS {
            assert!(script.contains(command), "{shell}: {command} missing");
        }
        assert!(script.contains("statusline-only"), "{shell}: install's flags are completed");
    }
}

#[test]
fn bash_loads_the_script_and_registers_it() {
    let sb = Sandbox::plain();
    let script = sb.root().join("baton.bash");
    fs::write(&script, ok(&sb.run(&["completions", "bash"], b""))).unwrap();
    let output = Command::new("bash")
        .arg("-c")
        .arg(format!("source '{}' && complete -p baton", script.display()))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .expect("bash");
    assert!(stdout(&output).contains("-F _baton baton"), "{}{}", stdout(&output), stderr(&output));
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let sb = Sandbox::plain();
    let output = sb.run(&["completions", "tcsh"], b"");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("possible values: bash, elvish, fish, powershell, zsh"),
        "{}",
        stderr(&output)
    );
    assert!(stdout(&output).is_empty());
}

#[test]
fn man_prints_the_page_and_writes_one_per_command() {
    let sb = Sandbox::plain();
    let page = ok(&sb.run(&["man"], b""));
    assert!(page.contains(".TH baton 1"), "{page}");
    assert!(page.contains("SUBCOMMANDS"), "{page}");
    for command in COMMANDS {
        assert!(page.contains(&format!("baton\\-{command}(1)")), "{command} is listed");
    }
    assert!(!page.contains("baton\\-help(1)"), "help is a flag, not a page");

    let dir = sb.root().join("man1");
    let out = ok(&sb.run(&["man", "--dir", dir.to_str().unwrap()], b""));
    assert!(out.contains("man pages written to"), "{out}");
    assert_eq!(fs::read_to_string(dir.join("baton.1")).unwrap(), page, "the same page as printed");
    for command in COMMANDS {
        let sub = fs::read_to_string(dir.join(format!("baton-{command}.1"))).unwrap();
        assert!(sub.contains(&format!(".TH baton-{command} 1")), "{command}: {sub}");
    }
    assert!(fs::read_to_string(dir.join("baton-install.1")).unwrap().contains("statusline\\-only"));
    assert!(!dir.join("baton-help.1").exists());
}

#[test]
fn man_reports_a_folder_it_cannot_write() {
    let sb = Sandbox::plain();
    let file = sb.root().join("a-file");
    fs::write(&file, "").unwrap();
    let output = sb.run(&["man", "--dir", file.to_str().unwrap()], b"");
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("baton man: cannot write into"), "{}", stderr(&output));
}
