//! The command strings in hosts' settings files: building baton's own (with the binary's
//! absolute path quoted for `sh`), splitting one back into words, and telling baton's
//! commands and other tools' context monitors apart from everything else.
//!
//! Hosts run these strings with `sh -c`, so a path with a space or a quote must be
//! quoted, and a wrapped statusline command must survive a round trip through
//! `--wrap '<old>'` byte for byte: uninstall restores it from there.

/// Quotes one word for `sh`: as it is when it holds only safe characters, else in single
/// quotes (a single quote inside becomes `'\''`).
pub fn quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-./,:+=@%".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Splits a command into words the way `sh` does for quoting (single quotes, double
/// quotes with their backslash escapes, backslashes outside quotes). Expansions such as
/// `$HOME` are kept as text. `None` when a quote is left open.
pub fn split(command: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        other => word.push(other),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            escaped @ ('"' | '\\' | '$' | '`') => word.push(escaped),
                            '\n' => {}
                            other => {
                                word.push('\\');
                                word.push(other);
                            }
                        },
                        other => word.push(other),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') | None => {}
                    Some(other) => word.push(other),
                }
            }
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// `<binary> hook`.
pub fn hook_command(binary: &str) -> String {
    format!("{} hook", quote(binary))
}

/// `<binary> statusline`, or `<binary> statusline --wrap '<old>'`; another host than
/// the default (Claude Code) is named with `--host <id>` (its payload has its own shape).
pub fn statusline_command(binary: &str, host: crate::host::HostKind, wrap: Option<&str>) -> String {
    let host = match host {
        crate::host::HostKind::DEFAULT => String::new(),
        other => format!(" --host {}", other.id()),
    };
    match wrap {
        Some(old) => format!("{} statusline{host} --wrap {}", quote(binary), quote(old)),
        None => format!("{} statusline{host}", quote(binary)),
    }
}

/// `<binary> statusline --subagents` (Claude Code's `subagentStatusLine`).
pub fn subagent_statusline_command(binary: &str) -> String {
    format!("{} statusline --subagents", quote(binary))
}

/// One of baton's own commands, as found in a settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatonCommand {
    /// `<program> hook …`
    Hook { program: String },
    /// `<program> statusline [--host <id>] [--wrap <old>]`
    Statusline { program: String, wrap: Option<String>, host: Option<String> },
    /// `<program> statusline --subagents`
    SubagentStatusline { program: String },
}

impl BatonCommand {
    /// The program word (the binary's path as written, `$HOME` and all).
    pub fn program(&self) -> &str {
        match self {
            BatonCommand::Hook { program }
            | BatonCommand::Statusline { program, .. }
            | BatonCommand::SubagentStatusline { program } => program,
        }
    }
}

/// Whether a program word names baton: its file name is `baton`, or `baton.exe` in any
/// case (Windows), in a folder given with `/` or `\`.
fn names_baton(program: &str) -> bool {
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    name == "baton" || name.eq_ignore_ascii_case("baton.exe")
}

/// A command's words: split as `sh` does; but a first word with a Windows path in it
/// (`C:\…\baton.exe hook`, written by hand or by another tool, which `sh` would
/// unescape into one run of letters) is taken up to the first blank, as cmd and
/// PowerShell read it.
fn command_words(command: &str) -> Option<Vec<String>> {
    let words = split(command)?;
    match words.first() {
        Some(first)
            if !names_baton(first) && command.trim_start().starts_with(|c: char| c.is_ascii_alphabetic()) =>
        {
            let raw: Vec<&str> = command.split_whitespace().collect();
            match raw.first() {
                Some(program) if program.contains('\\') && names_baton(program) => {
                    let mut words = split(&command[command.find(program)? + program.len()..])?;
                    words.insert(0, (*program).to_string());
                    Some(words)
                }
                _ => Some(words),
            }
        }
        _ => Some(words),
    }
}

/// Recognises baton's commands: the program's file name is `baton` (`baton.exe` on
/// Windows) and the first argument is `hook` or `statusline`, whatever folder the binary
/// is in (so a moved binary is still recognised, and updated in place rather than
/// registered twice).
pub fn recognise(command: &str) -> Option<BatonCommand> {
    let words = command_words(command)?;
    let (program, args) = words.split_first()?;
    if !names_baton(program) {
        return None;
    }
    match args.first().map(String::as_str) {
        Some("hook") => Some(BatonCommand::Hook { program: program.clone() }),
        Some("statusline") if args[1..].iter().any(|a| a == "--subagents") => {
            Some(BatonCommand::SubagentStatusline { program: program.clone() })
        }
        Some("statusline") => {
            let (mut wrap, mut host) = (None, None);
            let mut rest = args[1..].iter();
            while let Some(arg) = rest.next() {
                if arg == "--wrap" {
                    wrap = rest.next().cloned();
                } else if let Some(value) = arg.strip_prefix("--wrap=") {
                    wrap = Some(value.to_string());
                } else if arg == "--host" {
                    host = rest.next().cloned();
                } else if let Some(value) = arg.strip_prefix("--host=") {
                    host = Some(value.to_string());
                }
            }
            Some(BatonCommand::Statusline { program: program.clone(), wrap, host })
        }
        _ => None,
    }
}

/// Context monitors of other tools that would warn the agent a second time.
const OTHER_MONITORS: &[(&str, &str)] = &[("gsd-context-monitor", "GSD's context monitor")];

/// The name of the other tool's context monitor `command` runs, if it is one.
pub fn other_monitor(command: &str) -> Option<&'static str> {
    OTHER_MONITORS.iter().find(|(needle, _)| command.contains(needle)).map(|(_, name)| *name)
}

/// The program word with `~/`, `$HOME` and `${HOME}` expanded, for checking that the
/// file exists. `None` when it still holds an expansion baton cannot resolve.
pub fn expand_program(program: &str, home: Option<&str>) -> Option<String> {
    let expanded = match home {
        Some(home) => {
            let program = match program.strip_prefix("~/") {
                Some(rest) => format!("{home}/{rest}"),
                None => program.to_string(),
            };
            program.replace("${HOME}", home).replace("$HOME", home)
        }
        None => program.to_string(),
    };
    (!expanded.contains('$') && !expanded.starts_with('~')).then_some(expanded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_round_trips() {
        for word in [
            "/usr/local/bin/baton",
            "/home/a b/baton",
            "it's",
            "",
            r#"node "$HOME/.claude/hooks/gsd-statusline.js""#,
            "bash -c 'echo \"hi\" | tr a-z A-Z'",
            "back\\slash and\ttab",
        ] {
            let quoted = quote(word);
            assert_eq!(split(&quoted), Some(vec![word.to_string()]), "{quoted}");
        }
        assert_eq!(quote("/usr/bin/baton"), "/usr/bin/baton");
        assert_eq!(quote("/a b"), "'/a b'");
    }

    #[test]
    fn splits_like_sh() {
        assert_eq!(
            split(r#"node "$HOME/.claude/hooks/gsd statusline.js" --x 'a b' c\ d"#).unwrap(),
            vec!["node", "$HOME/.claude/hooks/gsd statusline.js", "--x", "a b", "c d"]
        );
        assert_eq!(split(r#""a\"b\\c\n""#).unwrap(), vec![r#"a"b\c\n"#]);
        assert_eq!(split("  ").unwrap(), Vec::<String>::new());
        assert_eq!(split("''").unwrap(), vec![""]);
        assert!(split("'open").is_none());
        assert!(split("\"open").is_none());
    }

    #[test]
    fn recognises_baton_commands() {
        assert_eq!(
            recognise("/opt/bin/baton hook"),
            Some(BatonCommand::Hook { program: "/opt/bin/baton".into() })
        );
        assert_eq!(
            recognise(r#""$HOME/.cargo/bin/baton" hook --extra"#),
            Some(BatonCommand::Hook { program: "$HOME/.cargo/bin/baton".into() })
        );
        let old = r#"node "$HOME/.claude/hooks/gsd-statusline.js""#;
        let wrapped = statusline_command("/x y/baton", crate::host::HostKind::Claude, Some(old));
        assert_eq!(
            recognise(&wrapped),
            Some(BatonCommand::Statusline {
                program: "/x y/baton".into(),
                wrap: Some(old.into()),
                host: None
            })
        );
        assert_eq!(
            recognise("baton statusline --wrap=true"),
            Some(BatonCommand::Statusline { program: "baton".into(), wrap: Some("true".into()), host: None })
        );
        let qwen = statusline_command("/b/baton", crate::host::HostKind::Qwen, Some("echo 'a b'"));
        assert!(qwen.starts_with("/b/baton statusline --host qwen --wrap "), "{qwen}");
        assert_eq!(
            recognise(&qwen),
            Some(BatonCommand::Statusline {
                program: "/b/baton".into(),
                wrap: Some("echo 'a b'".into()),
                host: Some("qwen".into())
            })
        );
        for other in ["/usr/bin/batonx hook", "baton demo", "baton", "node baton.js hook", "", "'open"] {
            assert_eq!(recognise(other), None, "{other}");
        }
    }

    #[test]
    fn recognises_windows_commands() {
        // What install writes on Windows: forward slashes, `baton.exe`.
        assert_eq!(
            recognise("C:/Users/me/.cargo/bin/baton.exe hook"),
            Some(BatonCommand::Hook { program: "C:/Users/me/.cargo/bin/baton.exe".into() })
        );
        assert_eq!(
            recognise("'C:/Program Files/baton/BATON.EXE' statusline"),
            Some(BatonCommand::Statusline {
                program: "C:/Program Files/baton/BATON.EXE".into(),
                wrap: None,
                host: None
            })
        );
        // Backslashes, as a person or another tool writes them.
        assert_eq!(
            recognise(r"C:\Users\me\bin\baton.exe hook"),
            Some(BatonCommand::Hook { program: r"C:\Users\me\bin\baton.exe".into() })
        );
        assert_eq!(
            recognise(r#""C:\Users\me\bin\baton.exe" statusline --subagents"#),
            Some(BatonCommand::SubagentStatusline { program: r"C:\Users\me\bin\baton.exe".into() })
        );
        for other in [r"C:\tools\batonx.exe hook", "C:/x/baton.exe demo", r"C:\x\baton.exe.bak hook"] {
            assert_eq!(recognise(other), None, "{other}");
        }
    }

    #[test]
    fn finds_other_monitors() {
        assert!(other_monitor(r#"node "/home/u/.claude/hooks/gsd-context-monitor.js""#).is_some());
        assert!(other_monitor("node /home/u/.claude/hooks/gsd-statusline.js").is_none());
    }

    #[test]
    fn expands_home() {
        assert_eq!(expand_program("$HOME/bin/baton", Some("/h")).as_deref(), Some("/h/bin/baton"));
        assert_eq!(expand_program("~/bin/baton", Some("/h")).as_deref(), Some("/h/bin/baton"));
        assert_eq!(expand_program("${CLAUDE_PLUGIN_ROOT}/baton", Some("/h")), None);
        assert_eq!(expand_program("/abs/baton", None).as_deref(), Some("/abs/baton"));
    }
}
