//! What the hosts' settings files say, analysed by pure functions: which hosts to check
//! ([`hosts_to_check`]), baton's hooks and the binary they run, a second context
//! monitor, each host's statusline, and hooks turned off ([`analyse_settings`]); the
//! files read ([`read_settings`]) and each host's own trust rules over them
//! ([`trust_checks`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::report::{Check, Status};
use crate::host::{FigureSource, HostChoice, SettingsSeen, TrustFacts};
use crate::install::commands::{self, BatonCommand};
use crate::install::hosts::{Host, Places, Scope, show_path};
use crate::{fsx, install};

/// A settings file as doctor found it.
#[derive(Debug, Clone)]
pub enum FileState {
    Missing,
    Unreadable(String),
    Invalid(String),
    Parsed(Value),
}

/// One host settings file.
#[derive(Debug, Clone)]
pub struct SettingsFile {
    pub host: Host,
    pub scope: Scope,
    pub path: PathBuf,
    /// The path as shown to the user (`~/.claude/settings.json`).
    pub shown: String,
    pub state: FileState,
}

/// What the analysis needs to know about the machine.
pub struct Facts<'a> {
    /// This binary's resolved path.
    pub this: &'a str,
    /// How to call this binary in a fix (`baton` when that is this one on PATH).
    pub me: &'a str,
    pub home: Option<&'a str>,
    /// Resolves a program path to the file it names, if it exists.
    pub resolve: &'a dyn Fn(&str) -> Option<String>,
}

pub(super) fn flags(host: Host, scope: Scope) -> String {
    let mut out = String::new();
    if host != Host::DEFAULT {
        out.push_str(&format!(" --host {}", host.id()));
    }
    if scope != Scope::User {
        out.push_str(&format!(" --scope {scope}"));
    }
    out
}

pub(super) fn hook_entries(settings: &Value) -> impl Iterator<Item = (&str, &str)> {
    settings.get("hooks").and_then(Value::as_object).into_iter().flatten().flat_map(|(event, groups)| {
        groups.as_array().into_iter().flatten().flat_map(move |group| {
            group
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(move |h| h.get("command").and_then(Value::as_str).map(|c| (event.as_str(), c)))
        })
    })
}

fn plugin_enabled(settings: &Value) -> bool {
    settings.get("enabledPlugins").and_then(Value::as_object).is_some_and(|plugins| {
        plugins.iter().any(|(name, on)| name.starts_with("baton@") && on == &Value::Bool(true))
    })
}

/// True when `settings` registers baton in any way: a hook, the statusline, the plugin.
fn has_baton(host: Host, settings: &Value) -> bool {
    let hook = hook_entries(settings)
        .any(|(_, c)| matches!(commands::recognise(c), Some(BatonCommand::Hook { .. })));
    let line = host.has_statusline()
        && settings
            .pointer(&format!("{}/command", host.statusline_pointer()))
            .and_then(Value::as_str)
            .is_some_and(|c| commands::recognise(c).is_some());
    hook || line || (host.spec().enabled_plugins && plugin_enabled(settings))
}

/// The hosts to check: those asked for, else those baton is installed for (a settings
/// file registers it, or `recorded`, baton's record of its installs, names the host),
/// else Claude Code (so a machine with nothing installed is told how to start).
pub(super) fn hosts_to_check(asked: &[HostChoice], files: &[SettingsFile], recorded: &[Host]) -> Vec<Host> {
    let mut hosts: Vec<Host> = if asked.contains(&HostChoice::All) {
        Host::ALL.to_vec()
    } else if !asked.is_empty() {
        asked
            .iter()
            .map(|choice| match choice {
                HostChoice::One(host) => *host,
                HostChoice::All => Host::DEFAULT,
            })
            .collect()
    } else {
        Host::ALL
            .iter()
            .copied()
            .filter(|host| {
                recorded.contains(host)
                    || files.iter().any(|f| {
                        f.host == *host && matches!(&f.state, FileState::Parsed(v) if has_baton(*host, v))
                    })
            })
            .collect()
    };
    if hosts.is_empty() {
        hosts.push(Host::DEFAULT);
    }
    hosts.sort();
    hosts.dedup();
    hosts
}

/// The checks that come from the settings files of `hosts` alone.
pub fn analyse_settings(files: &[SettingsFile], hosts: &[Host], facts: &Facts) -> Vec<Check> {
    let mut checks = Vec::new();
    let files: Vec<&SettingsFile> = files.iter().filter(|f| hosts.contains(&f.host)).collect();
    // A host of baton's plugin (OpenCode, Kilo CLI) has a plugin file, not settings:
    // [`plugin_checks`].
    let hosts: Vec<Host> =
        hosts.iter().copied().filter(|h| !install::opencode_plugin::takes_plugin(*h)).collect();
    let hosts = hosts.as_slice();
    let parsed: Vec<(&SettingsFile, &Value)> = files
        .iter()
        .copied()
        .filter_map(|f| match &f.state {
            FileState::Parsed(v) => Some((f, v)),
            _ => None,
        })
        .collect();

    for file in &files {
        match &file.state {
            FileState::Missing => {}
            FileState::Parsed(_) => {
                checks.push(Check::new(Status::Ok, "settings", format!("{} parses", file.shown), None))
            }
            FileState::Invalid(why) | FileState::Unreadable(why) => checks.push(Check::new(
                Status::Fail,
                "settings",
                format!("{}: {why}; {} ignores it", file.shown, file.host),
                Some(format!(
                    "fix the JSON in {} by hand (a *.baton-backup-* beside it holds an earlier copy)",
                    file.shown
                )),
            )),
        }
    }

    for host in hosts.iter().copied() {
        let mine: Vec<&(&SettingsFile, &Value)> = parsed.iter().filter(|(f, _)| f.host == host).collect();
        // (scope, shown, event, command) of every baton hook.
        let mut hooks = Vec::new();
        for (file, settings) in &mine {
            for (event, command) in hook_entries(settings) {
                if matches!(commands::recognise(command), Some(BatonCommand::Hook { .. })) {
                    hooks.push((file.scope, file.shown.as_str(), event, command));
                }
            }
        }
        let plugin = host.spec().enabled_plugins && mine.iter().any(|(_, v)| plugin_enabled(v));
        let scope = hooks.first().map(|h| h.0).unwrap_or(Scope::User);
        let name = format!("hooks ({})", host.name());
        if hooks.is_empty() && !plugin {
            checks.push(Check::new(
                Status::Fail,
                &name,
                "baton hook is not registered: no context warnings, handoff or resume brief",
                Some(format!("{} install{}", facts.me, flags(host, Scope::User))),
            ));
            continue;
        }
        let mut problems = Vec::new();
        let mut status = Status::Ok;
        if !plugin {
            let missing: Vec<&str> =
                host.events().iter().map(|s| s.name).filter(|e| !hooks.iter().any(|h| h.2 == *e)).collect();
            if !missing.is_empty() {
                status = Status::Fail;
                problems.push(format!("not registered for {}", missing.join(", ")));
            }
        } else if !hooks.is_empty() {
            status = status.max(Status::Warn);
            problems.push(
                "registered both by the baton plugin and in settings: each event runs baton twice".into(),
            );
        }
        let mut per_event: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
        for (_, shown, event, command) in &hooks {
            per_event.entry(event).or_default().push((shown, command));
        }
        for (event, entries) in &per_event {
            // The same command in two files runs once (Claude Code merges identical ones);
            // twice in one file, or two different commands, runs twice.
            let mut pairs = entries.clone();
            pairs.sort();
            let twice_in_a_file = pairs.windows(2).any(|w| w[0] == w[1]);
            let mut distinct: Vec<&str> = entries.iter().map(|e| e.1).collect();
            distinct.sort();
            distinct.dedup();
            if twice_in_a_file || distinct.len() > 1 {
                status = status.max(Status::Warn);
                problems.push(format!("{event} is registered {} times", entries.len()));
            }
        }
        let where_: Vec<&str> = {
            let mut shown: Vec<&str> = hooks.iter().map(|h| h.1).collect();
            shown.dedup();
            shown
        };
        let message = if problems.is_empty() {
            let events: Vec<&str> = host.events().iter().map(|s| s.name).collect();
            if plugin && hooks.is_empty() {
                "registered by the baton plugin".to_string()
            } else {
                format!("{} registered once each ({})", events.join(", "), where_.join(", "))
            }
        } else {
            format!("{} ({})", problems.join("; "), where_.join(", "))
        };
        let fix = match status {
            Status::Ok => None,
            _ if plugin && !hooks.is_empty() => {
                Some(format!("{} uninstall --hooks-only{}", facts.me, flags(host, scope)))
            }
            _ => Some(format!(
                "{} install{} (it adds what is missing and keeps one of each)",
                facts.me,
                flags(host, scope)
            )),
        };
        checks.push(Check::new(status, &name, message, fix));

        // Every baton command must point at a binary that exists, preferably this one.
        let mut programs: Vec<(Scope, &str, &str)> = hooks.iter().map(|h| (h.0, h.1, h.3)).collect();
        if host.has_statusline() {
            let pointer = format!("{}/command", host.statusline_pointer());
            for (file, settings) in &mine {
                if let Some(command) = settings.pointer(&pointer).and_then(Value::as_str) {
                    if commands::recognise(command).is_some() {
                        programs.push((file.scope, file.shown.as_str(), command));
                    }
                }
            }
        }
        let mut status = Status::Ok;
        let mut problems = Vec::new();
        let mut fix_scope = Scope::User;
        for (scope, shown, command) in &programs {
            let Some(program) = commands::recognise(command).map(|c| c.program().to_string()) else {
                continue;
            };
            let Some(expanded) = commands::expand_program(&program, facts.home) else { continue };
            match (facts.resolve)(&expanded) {
                None => {
                    status = Status::Fail;
                    fix_scope = *scope;
                    problems.push(format!("{shown} runs {program}, which does not exist"));
                }
                Some(real) if real != facts.this => {
                    if status == Status::Ok {
                        fix_scope = *scope;
                    }
                    status = status.max(Status::Warn);
                    problems.push(format!("{shown} runs {program}, not this baton ({})", facts.this));
                }
                Some(_) => {}
            }
        }
        problems.dedup();
        if !programs.is_empty() {
            let name = format!("binary ({})", host.name());
            if problems.is_empty() {
                checks.push(Check::new(
                    Status::Ok,
                    &name,
                    format!("every command runs {}", facts.this),
                    None,
                ));
            } else {
                let fix = format!(
                    "{} install{} (registers this binary in place of the other)",
                    facts.me,
                    flags(host, fix_scope)
                );
                checks.push(Check::new(status, &name, problems.join("; "), Some(fix)));
            }
        }
    }

    // A second context monitor.
    let mut others = Vec::new();
    for (file, settings) in &parsed {
        for (event, command) in hook_entries(settings) {
            if let Some(name) = commands::other_monitor(command) {
                others.push((file.host, file.scope, format!("{name} on {event} in {}", file.shown)));
            }
        }
    }
    match others.first() {
        None => checks.push(Check::new(Status::Ok, "monitors", "no other context monitor registered", None)),
        Some((host, scope, _)) => {
            let list: Vec<&str> = others.iter().map(|o| o.2.as_str()).collect();
            checks.push(Check::new(
                Status::Warn,
                "monitors",
                format!("{}: the agent gets two sets of warnings", list.join("; ")),
                Some(format!(
                    "{} install --replace-other-monitors{} (uninstall restores it)",
                    facts.me,
                    flags(*host, *scope)
                )),
            ));
        }
    }

    for host in hosts.iter().copied().filter(|h| h.has_statusline()) {
        checks.push(statusline_check(host, &parsed, facts));
        if host.has_subagent_statusline() {
            checks.extend(subagent_statusline_check(host, &parsed, facts));
        }
    }

    for (file, settings) in &parsed {
        let Some(key) = file.host.spec().disable_all_hooks else { continue };
        if settings.get(key) == Some(&Value::Bool(true)) {
            checks.push(Check::new(
                Status::Fail,
                "hooks enabled",
                format!("{} sets {key}: no hook runs, baton's included", file.shown),
                Some(format!("remove \"{key}\": true from {}", file.shown)),
            ));
        }
    }
    checks
}

/// The host's effective statusline: the most specific settings file that has one (the
/// default host's check is named `statusLine`, another host's `statusLine (<host>)`).
fn statusline_check(host: Host, parsed: &[(&SettingsFile, &Value)], facts: &Facts) -> Check {
    let name = match host {
        Host::DEFAULT => "statusLine".to_string(),
        other => format!("statusLine ({})", other.name()),
    };
    let pointer = host.statusline_pointer();
    let mut files: Vec<&(&SettingsFile, &Value)> = parsed.iter().filter(|(f, _)| f.host == host).collect();
    files.sort_by_key(|(f, _)| std::cmp::Reverse(f.scope));
    let Some((file, settings)) = files.iter().find(|(_, v)| v.pointer(pointer).is_some()) else {
        // A host whose figure the statusline gives needs it; the others' hooks read the
        // host's record.
        let (status, what) = match host.figure_source() {
            FigureSource::Statusline => (
                Status::Fail,
                format!("no statusLine in {host}'s settings: the monitor has no fresh context figure"),
            ),
            FigureSource::Record => (
                Status::Warn,
                format!(
                    "no statusline in {host}'s settings: its line shows no context meter and GSD's monitor gets no bridge file"
                ),
            ),
        };
        let fix = format!("{} install --statusline-only{}", facts.me, flags(host, Scope::User));
        return Check::new(status, &name, what, Some(fix));
    };
    let command = settings.pointer(&format!("{pointer}/command")).and_then(Value::as_str).unwrap_or_default();
    let wanted = (host != Host::DEFAULT).then(|| host.id());
    match commands::recognise(command) {
        Some(BatonCommand::Statusline { host: named, .. }) if named.as_deref() != wanted => Check::new(
            Status::Fail,
            &name,
            format!(
                "`{command}` ({}) reads {}'s payload, not {host}'s: its figure would be wrong",
                file.shown,
                named.as_deref().and_then(Host::from_id).unwrap_or(Host::DEFAULT)
            ),
            Some(format!("{} install --statusline-only{}", facts.me, flags(host, file.scope))),
        ),
        Some(BatonCommand::Statusline { wrap: None, .. }) => {
            Check::new(Status::Ok, &name, format!("baton statusline ({})", file.shown), None)
        }
        Some(BatonCommand::Statusline { wrap: Some(old), .. }) => {
            Check::new(Status::Ok, &name, format!("baton statusline wrapping `{old}` ({})", file.shown), None)
        }
        _ => Check::new(
            Status::Warn,
            &name,
            format!(
                "`{command}` ({}) is not baton: baton's monitor only sees a context figure if it writes \
                 GSD's bridge file",
                file.shown
            ),
            Some(format!(
                "{} install --statusline-only{} (wraps it: its output stays as it is)",
                facts.me,
                flags(host, file.scope)
            )),
        ),
    }
}

/// The host's effective `subagentStatusLine` (Claude Code's agent panel's row per
/// subagent), once baton's statusLine is registered: baton's, another tool's (left
/// alone), or none.
fn subagent_statusline_check(host: Host, parsed: &[(&SettingsFile, &Value)], facts: &Facts) -> Option<Check> {
    const NAME: &str = "subagentStatusLine";
    let mut mine: Vec<&(&SettingsFile, &Value)> = parsed.iter().filter(|(f, _)| f.host == host).collect();
    mine.sort_by_key(|(f, _)| std::cmp::Reverse(f.scope));
    let line = mine.iter().find(|(_, v)| v.get("statusLine").is_some())?;
    let ours = |pointer: &str, v: &Value| v.pointer(pointer).and_then(Value::as_str).map(commands::recognise);
    if !matches!(ours("/statusLine/command", line.1), Some(Some(BatonCommand::Statusline { .. }))) {
        return None;
    }
    let Some((file, settings)) = mine.iter().find(|(_, v)| v.get(NAME).is_some()) else {
        return Some(Check::new(
            Status::Ok,
            NAME,
            format!(
                "not set (opt-in, since Claude Code calls it deprecated): `{} install --statusline-only --subagent-rows{}` adds a context meter per subagent to the agent panel",
                facts.me,
                flags(host, line.0.scope)
            ),
            None,
        ));
    };
    let check = match ours("/subagentStatusLine/command", settings) {
        Some(Some(BatonCommand::SubagentStatusline { .. })) => {
            Check::new(Status::Ok, NAME, format!("baton statusline --subagents ({})", file.shown), None)
        }
        _ => {
            let command = settings.pointer("/subagentStatusLine/command").and_then(Value::as_str);
            let shown = command.map_or_else(|| settings[NAME].to_string(), |c| format!("`{c}`"));
            Check::new(
                Status::Ok,
                NAME,
                format!("{shown} ({}), another tool's: baton leaves it", file.shown),
                None,
            )
        }
    };
    Some(check)
}

/// One settings file read (it may be a symlink into a dotfiles repository).
fn file_state(path: &Path) -> FileState {
    match fsx::read_through_symlink(path, 16 * 1024 * 1024) {
        Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => FileState::Parsed(json!({})),
        Ok(bytes) => match serde_json::from_slice(&bytes) {
            Ok(value) => FileState::Parsed(value),
            Err(e) => FileState::Invalid(format!("not valid JSON ({e})")),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => FileState::Missing,
        Err(e) => FileState::Unreadable(format!("cannot be read ({e})")),
    }
}

/// Reads every host settings file there is, for each scope.
pub(super) fn read_settings(places: &Places) -> Vec<SettingsFile> {
    let mut seen = Vec::new();
    let mut files = Vec::new();
    for host in Host::ALL.iter().copied().filter(|h| !install::opencode_plugin::takes_plugin(*h)) {
        for scope in host.scopes() {
            let Ok(path) = places.settings_path(host, *scope) else { continue };
            let key = install::state::key(&path);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let state = file_state(&path);
            files.push(SettingsFile {
                host,
                scope: *scope,
                shown: show_path(&path, places.home.as_deref()),
                path,
                state,
            });
        }
    }
    // A statusline in a file of its own (GitHub Copilot CLI's user settings.json, apart
    // from the hooks).
    for host in Host::ALL.iter().copied() {
        if let Some(path) = places.statusline_file(host, Scope::User) {
            let state = file_state(&path);
            let shown = show_path(&path, places.home.as_deref());
            files.push(SettingsFile { host, scope: Scope::User, shown, path, state });
        }
    }
    files
}

/// What the host's own trust rules say ([`crate::host::Host::trust_findings`]), over its
/// settings files that parse.
pub(super) fn trust_checks(host: Host, files: &[SettingsFile], places: &Places) -> Vec<Check> {
    let seen: Vec<SettingsSeen> = files
        .iter()
        .filter(|f| f.host == host)
        .filter_map(|f| match &f.state {
            FileState::Parsed(settings) => Some(SettingsSeen {
                scope: f.scope,
                path: &f.path,
                shown: &f.shown,
                settings,
                registers_baton: has_baton(host, settings),
            }),
            _ => None,
        })
        .collect();
    let is_baton_hook =
        |command: &str| matches!(commands::recognise(command), Some(BatonCommand::Hook { .. }));
    let facts = TrustFacts { places, files: &seen, is_baton_hook: &is_baton_hook };
    host.host()
        .trust_findings(&facts)
        .into_iter()
        .map(|f| Check::new(if f.warn { Status::Warn } else { Status::Ok }, &f.check, f.message, f.fix))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::merge::{self, Plan, Record};

    const THIS: &str = "/opt/bin/baton";

    fn file(host: Host, scope: Scope, value: Value) -> SettingsFile {
        let shown = format!("{}-{scope}", host.id());
        SettingsFile {
            host,
            scope,
            path: PathBuf::from(format!("/{shown}")),
            shown,
            state: FileState::Parsed(value),
        }
    }

    fn installed(host: Host, before: Value, binary: &str) -> Value {
        let plan = Plan {
            host,
            binary: binary.into(),
            hooks: true,
            statusline: true,
            replace_statusline: false,
            replace_other_monitors: false,
            subagent_rows: false,
        };
        merge::install(&before, &plan, &Record::default()).unwrap().settings
    }

    fn analyse(files: &[SettingsFile]) -> Vec<Check> {
        analyse_for(files, &hosts_to_check(&[], files, &[]))
    }

    fn analyse_for(files: &[SettingsFile], hosts: &[Host]) -> Vec<Check> {
        let resolve = |p: &str| (p == THIS || p == "/old/baton").then(|| p.to_string());
        let facts = Facts { this: THIS, me: "baton", home: Some("/h"), resolve: &resolve };
        analyse_settings(files, hosts, &facts)
    }

    fn status_of<'a>(checks: &'a [Check], name: &str) -> &'a Check {
        checks.iter().find(|c| c.check == name).unwrap_or_else(|| panic!("no {name} in {checks:#?}"))
    }

    #[test]
    fn a_fresh_install_is_all_green() {
        let checks = analyse(&[file(Host::Claude, Scope::User, installed(Host::Claude, json!({}), THIS))]);
        assert!(checks.iter().all(|c| c.status == Status::Ok), "{checks:#?}");
        assert!(status_of(&checks, "hooks (Claude Code)").message.contains("registered once each"));
    }

    #[test]
    fn nothing_installed_fails_with_the_fix() {
        let checks = analyse(&[file(Host::Claude, Scope::User, json!({}))]);
        let hooks = status_of(&checks, "hooks (Claude Code)");
        assert_eq!(hooks.status, Status::Fail);
        assert_eq!(hooks.fix.as_deref(), Some("baton install"));
        assert_eq!(status_of(&checks, "statusLine").status, Status::Fail);
    }

    #[test]
    fn a_missing_event_and_a_foreign_binary_are_reported() {
        let mut settings = installed(Host::Claude, json!({}), "/old/baton");
        settings["hooks"].as_object_mut().unwrap().shift_remove("PreCompact");
        let checks = analyse(&[file(Host::Claude, Scope::User, settings)]);
        let hooks = status_of(&checks, "hooks (Claude Code)");
        assert_eq!(hooks.status, Status::Fail);
        assert!(hooks.message.contains("PreCompact"), "{}", hooks.message);
        let binary = status_of(&checks, "binary (Claude Code)");
        assert_eq!(binary.status, Status::Warn);
        let gone = installed(Host::Claude, json!({}), "/gone/baton");
        let checks = analyse(&[file(Host::Claude, Scope::User, gone)]);
        assert_eq!(status_of(&checks, "binary (Claude Code)").status, Status::Fail);
    }

    #[test]
    fn duplicates_across_scopes_with_different_commands_warn() {
        let user = installed(Host::Claude, json!({}), THIS);
        let project = installed(Host::Claude, json!({}), "/old/baton");
        let checks = analyse(&[
            file(Host::Claude, Scope::User, user.clone()),
            file(Host::Claude, Scope::Project, project),
        ]);
        assert_eq!(status_of(&checks, "hooks (Claude Code)").status, Status::Warn);
        // The same command in two files runs once.
        let checks = analyse(&[
            file(Host::Claude, Scope::User, user.clone()),
            file(Host::Claude, Scope::Project, user),
        ]);
        assert_eq!(status_of(&checks, "hooks (Claude Code)").status, Status::Ok);
    }

    #[test]
    fn other_hosts_statuslines_are_checked_where_each_host_reads_them() {
        let qwen = installed(Host::Qwen, json!({}), THIS);
        let checks = analyse(&[file(Host::Qwen, Scope::User, qwen.clone())]);
        let line = status_of(&checks, "statusLine (Qwen Code)");
        assert_eq!(line.status, Status::Ok, "{}", line.message);
        assert!(checks.iter().all(|c| c.check != "statusLine"), "Claude Code's is not checked");
        // Installed before baton had its statusline: a warning with the fix, not a failure.
        let mut hooks_only = qwen.clone();
        hooks_only.as_object_mut().unwrap().remove("ui");
        let checks = analyse(&[file(Host::Qwen, Scope::User, hooks_only)]);
        let line = status_of(&checks, "statusLine (Qwen Code)");
        assert_eq!(line.status, Status::Warn);
        assert!(line.fix.as_deref().unwrap().contains("--statusline-only --host qwen"));
        // Claude Code's command in Qwen Code's settings would misread the payload.
        let mut wrong = qwen;
        wrong["ui"]["statusLine"]["command"] = json!(format!("{THIS} statusline"));
        let checks = analyse(&[file(Host::Qwen, Scope::User, wrong)]);
        assert_eq!(status_of(&checks, "statusLine (Qwen Code)").status, Status::Fail);
    }

    #[test]
    fn gsd_monitor_and_statusline_are_reported() {
        let before = json!({
            "hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": "node /h/.claude/hooks/gsd-context-monitor.js"}]}]},
            "statusLine": {"type": "command", "command": "node /h/.claude/hooks/gsd-statusline.js"}
        });
        let checks = analyse(&[file(Host::Claude, Scope::User, before.clone())]);
        assert_eq!(status_of(&checks, "monitors").status, Status::Warn);
        assert_eq!(status_of(&checks, "statusLine").status, Status::Warn);
        let after = installed(Host::Claude, before, THIS);
        let checks = analyse(&[file(Host::Claude, Scope::User, after)]);
        let line = status_of(&checks, "statusLine");
        assert_eq!(line.status, Status::Ok);
        assert!(line.message.contains("wrapping"));
        assert!(status_of(&checks, "monitors").fix.as_deref().unwrap().contains("--replace-other-monitors"));
    }

    #[test]
    fn the_most_specific_statusline_wins() {
        let user = installed(Host::Claude, json!({}), THIS);
        let local = json!({"statusLine": {"type": "command", "command": "echo hi"}});
        let checks =
            analyse(&[file(Host::Claude, Scope::User, user), file(Host::Claude, Scope::Local, local)]);
        let line = status_of(&checks, "statusLine");
        assert_eq!(line.status, Status::Warn);
        assert!(line.fix.as_deref().unwrap().contains("--scope local"));
    }

    #[test]
    fn the_plugin_counts_as_registration() {
        let settings = json!({"enabledPlugins": {"baton@baton": true}});
        let with_line = installed(Host::Claude, settings.clone(), THIS);
        let checks = analyse(&[file(Host::Claude, Scope::User, with_line.clone())]);
        // Installed fully on top of the plugin: twice.
        assert_eq!(status_of(&checks, "hooks (Claude Code)").status, Status::Warn);
        let mut line_only = with_line;
        line_only.as_object_mut().unwrap().shift_remove("hooks");
        let checks = analyse(&[file(Host::Claude, Scope::User, line_only)]);
        let hooks = status_of(&checks, "hooks (Claude Code)");
        assert_eq!(hooks.status, Status::Ok);
        assert!(hooks.message.contains("plugin"));
    }

    #[test]
    fn other_hosts_are_checked_once_installed() {
        let gemini = installed(Host::Gemini, json!({}), THIS);
        let claude = installed(Host::Claude, json!({}), THIS);
        let checks = analyse(&[
            file(Host::Claude, Scope::User, claude.clone()),
            file(Host::Gemini, Scope::User, gemini),
        ]);
        assert_eq!(status_of(&checks, "hooks (Gemini CLI)").status, Status::Ok);
        assert!(checks.iter().all(|c| !c.check.contains("Codex")));
        // A broken Codex file counts once install's record says baton went there.
        let files = [
            file(Host::Claude, Scope::User, claude),
            SettingsFile {
                host: Host::Codex,
                scope: Scope::User,
                path: "/c".into(),
                shown: "c".into(),
                state: FileState::Invalid("x".into()),
            },
        ];
        let checks = analyse(&files);
        assert!(checks.iter().all(|c| c.status == Status::Ok), "{checks:#?}");
        let hosts = hosts_to_check(&[], &files, &[Host::Codex]);
        assert_eq!(hosts, [Host::Claude, Host::Codex]);
        let checks = analyse_for(&files, &hosts);
        assert_eq!(status_of(&checks, "settings").status, Status::Ok);
        assert!(checks.iter().any(|c| c.check == "settings" && c.status == Status::Fail));
        assert_eq!(status_of(&checks, "hooks (Codex)").fix.as_deref(), Some("baton install --host codex"));
    }

    #[test]
    fn only_the_hosts_baton_is_installed_for_are_checked() {
        let codex = file(Host::Codex, Scope::User, installed(Host::Codex, json!({}), THIS));
        let empty_claude = file(Host::Claude, Scope::User, json!({"model": "opus"}));
        let files = [empty_claude, codex];
        assert_eq!(hosts_to_check(&[], &files, &[]), [Host::Codex]);
        let checks = analyse(&files);
        assert!(checks.iter().all(|c| c.status == Status::Ok), "{checks:#?}");
        assert!(checks.iter().all(|c| !c.check.contains("Claude") && c.check != "statusLine"), "{checks:#?}");
        // Nothing installed anywhere: Claude Code, to say how to start.
        assert_eq!(hosts_to_check(&[], &files[..1], &[]), [Host::Claude]);
        // Asked for: checked whether installed or not.
        assert_eq!(hosts_to_check(&[HostChoice::One(Host::Gemini)], &files, &[]), [Host::Gemini]);
        assert_eq!(hosts_to_check(&[HostChoice::All], &[], &[]), Host::ALL);
        let checks = analyse_for(&files, &[Host::Gemini]);
        let gemini = status_of(&checks, "hooks (Gemini CLI)");
        assert_eq!(gemini.status, Status::Fail);
        assert_eq!(gemini.fix.as_deref(), Some("baton install --host gemini"));
        // The plugin or a statusline alone counts as installed for Claude Code.
        let plugin = file(Host::Claude, Scope::User, json!({"enabledPlugins": {"baton@baton": true}}));
        assert_eq!(hosts_to_check(&[], &[plugin], &[]), [Host::Claude]);
    }

    #[test]
    fn disabled_hooks_fail() {
        let mut settings = installed(Host::Claude, json!({}), THIS);
        settings["disableAllHooks"] = json!(true);
        let checks = analyse(&[file(Host::Claude, Scope::User, settings)]);
        assert_eq!(status_of(&checks, "hooks enabled").status, Status::Fail);
    }
}
