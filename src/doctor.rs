//! `baton doctor`: checks that baton is set up and working, one line per check (ok,
//! warn or fail), each problem with the command or edit that fixes it. Exit 1 when any
//! check fails; `--json` for machines.
//!
//! Only the hosts baton is installed for are checked, or those `--host` names
//! ([`hosts_to_check`]). What their settings files say is analysed by pure functions
//! ([`analyse_settings`]; each host's own trust rules, `crate::host::Host::trust_findings`);
//! the rest looks at the machine: the newest bridge, baton's config files, the state
//! and temp dirs, and two self-tests that run this binary's hook the way a host does
//! (in a private throwaway folder, so nothing of the user's is read or written).

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};

use crate::config::Config;
use crate::host::{FigureSource, HostChoice, Install, SettingsSeen, TrustFacts};
use crate::install::commands::{self, BatonCommand};
use crate::install::hosts::{Host, Places, Scope, show_path};
use crate::util::proc;
use crate::util::text::outside_path;
use crate::{fsx, install, metrics, places};

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    pub status: Status,
    pub check: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    fn new(status: Status, check: &str, message: impl Into<String>, fix: Option<String>) -> Check {
        Check { status, check: check.to_string(), message: message.into(), fix }
    }
}

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

fn flags(host: Host, scope: Scope) -> String {
    let mut out = String::new();
    if host != Host::DEFAULT {
        out.push_str(&format!(" --host {}", host.id()));
    }
    if scope != Scope::User {
        out.push_str(&format!(" --scope {scope}"));
    }
    out
}

fn hook_entries(settings: &Value) -> impl Iterator<Item = (&str, &str)> {
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

/// What to check and how to print it.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Print JSON for machines.
    pub json: bool,
    /// Check these hosts instead of those baton is installed for.
    pub hosts: Vec<HostChoice>,
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
pub fn hosts_to_check(asked: &[HostChoice], files: &[SettingsFile], recorded: &[Host]) -> Vec<Host> {
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
fn read_settings(places: &Places) -> Vec<SettingsFile> {
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

/// The newest bridge in the temp dir, and whether it is fresh.
fn bridge_check(stale_seconds: u64) -> Check {
    let tmp = places::temp_dir();
    let newest = fs::read_dir(&tmp)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("claude-ctx-") && name.ends_with(".json") && !name.ends_with("-warned.json")
        })
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            (meta.is_file() && meta.uid() == fsx::euid()).then(|| (meta.mtime(), e.path()))
        })
        .max();
    let Some((_, path)) = newest else {
        return Check::new(
            Status::Ok,
            "bridge",
            format!(
                "no session has run yet (no claude-ctx-*.json in {}); the statusline writes one at the first render",
                tmp.display()
            ),
            None,
        );
    };
    let bridge = fsx::read_owned(&path, 64 * 1024).ok().and_then(|b| metrics::Bridge::parse(&b));
    let Some(bridge) = bridge else {
        return Check::new(
            Status::Warn,
            "bridge",
            format!("{} is not a valid bridge file", path.display()),
            Some(format!("rm {} (the statusline writes a new one)", path.display())),
        );
    };
    let age = metrics::now_unix() - bridge.timestamp;
    let session = &bridge.session_id;
    if age.unsigned_abs() <= stale_seconds {
        Check::new(
            Status::Ok,
            "bridge",
            format!("session {session}: {}% used, written {age} s ago", bridge.used_pct),
            None,
        )
    } else {
        Check::new(
            Status::Warn,
            "bridge",
            format!(
                "the newest bridge (session {session}) is {} old: fine if no session is open now; \
                 if one is, its statusline is not running baton",
                human_age(age)
            ),
            Some("open a session and check that the status line shows baton's meter; else run `baton install --statusline-only`".into()),
        )
    }
}

fn human_age(seconds: i64) -> String {
    match seconds.unsigned_abs() {
        s if s < 120 => format!("{s} s"),
        s if s < 7200 => format!("{} min", s / 60),
        s if s < 172_800 => format!("{} h", s / 3600),
        s => format!("{} days", s / 86_400),
    }
}

fn config_check(project: Option<&Path>) -> Check {
    let config = Config::load(project);
    let read: Vec<String> =
        config.files.iter().filter(|(_, e)| *e).map(|(p, _)| outside_path(p).to_string()).collect();
    if !config.errors.is_empty() {
        Check::new(
            Status::Fail,
            "config",
            config.errors.join("; "),
            Some("edit the file named (`baton config` shows every value and where it comes from)".into()),
        )
    } else if !config.ignored.is_empty() {
        Check::new(
            Status::Warn,
            "config",
            config.ignored.join("; "),
            Some("a repository file may make baton quieter or stricter, never looser: set such keys in ~/.config/baton/config.json or the environment, or remove them from the repository file".into()),
        )
    } else if let Some(unread) = crate::config::unread_files(project).first() {
        Check::new(
            Status::Warn,
            "config",
            format!("{} is not read: baton reads JSON only", outside_path(unread)),
            Some(format!(
                "move its settings into {} (`baton config` lists the keys)",
                outside_path(&unread.with_extension("json"))
            )),
        )
    } else {
        let message = if read.is_empty() {
            "no config files; defaults apply".to_string()
        } else {
            format!("{} parse", read.join(", "))
        };
        Check::new(Status::Ok, "config", message, None)
    }
}

/// Why files named `prefix…` in `dir` would not be read, for those that are not plain
/// files (a FIFO, a symlink, a device: planted, not written by baton). At most three
/// are named.
fn planted(dir: Option<&Path>, prefix: &str) -> Vec<String> {
    let Some(dir) = dir else { return vec![] };
    let mut reasons: Vec<String> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_file()))
        .filter_map(|e| fsx::refusal(&e.path(), 1024 * 1024, false))
        .collect();
    reasons.sort();
    let more = reasons.len().saturating_sub(3);
    reasons.truncate(3);
    if more > 0 {
        reasons.push(format!("and {more} more"));
    }
    reasons
}

/// Files in the shared temp dir under baton's (GSD's) names that are not plain files:
/// baton ignores them (they cannot hang or redirect it), but someone put them there.
fn temp_dir_planted_check() -> Option<Check> {
    let reasons = planted(Some(&places::temp_dir()), "claude-ctx-");
    (!reasons.is_empty()).then(|| {
        Check::new(
            Status::Warn,
            "temp dir files",
            format!("ignored: {}", reasons.join("; ")),
            Some(
                "remove them if they are yours; if another user planted them, baton already ignores them"
                    .into(),
            ),
        )
    })
}

/// baton's versioned state files: one written by a newer baton is left alone (and
/// said here), as is one that cannot be read (a FIFO, a symlink, too large, broken).
fn state_files_check() -> Check {
    let files = [crate::handoff::store::registry_file(), metrics::learned::file(), metrics::windows::file()];
    let mut problems: Vec<String> = files.iter().flatten().filter_map(|file| file.problem()).collect();
    problems.extend(planted(places::session_dir().as_deref(), "claude-ctx-"));
    if problems.is_empty() {
        Check::new(Status::Ok, "state files", "baton's state files are readable and of a known version", None)
    } else {
        Check::new(
            Status::Warn,
            "state files",
            problems.join("; "),
            Some("upgrade baton, or remove the file named (baton starts it afresh)".into()),
        )
    }
}

/// The context windows baton knows (remembered, configured, its table): informational.
fn windows_check(project: Option<&Path>) -> Check {
    let config = crate::config::Config::load(project);
    let known = crate::metrics::windows::known_windows(
        &crate::metrics::windows::remembered_windows(),
        &config.configured_windows(),
    );
    let limits = crate::metrics::Limits::from_settings(config.settings());
    let known = crate::metrics::with_compaction_points(known, &limits, project);
    Check::new(
        Status::Ok,
        "windows",
        crate::metrics::windows::doctor_line(&known, config.settings().default_window_tokens),
        None,
    )
}

fn state_dir_check() -> Check {
    let Some(dir) = places::state_dir() else {
        return Check::new(
            Status::Fail,
            "state dir",
            "no state dir: HOME is not set",
            Some("set HOME (or XDG_STATE_HOME to an absolute path)".into()),
        );
    };
    // Doctor changes nothing: a state dir that does not exist yet is not created, its
    // nearest existing parent is checked instead.
    let written = if fs::symlink_metadata(&dir).is_ok_and(|m| !m.is_dir()) {
        Err(std::io::Error::other("something else than a folder is in its place"))
    } else if dir.is_dir() {
        let probe = dir.join(format!(".doctor-probe-{}", fsx::random_hex(6)));
        let written = fsx::write_atomic(&probe, b"ok", fsx::WriteOptions::STATE);
        let _ = fs::remove_file(&probe);
        written.map(|_| format!("{} is writable", dir.display()))
    } else {
        let parent = dir.ancestors().skip(1).find(|a| a.is_dir()).unwrap_or(Path::new("/"));
        if fsx::writable(parent) {
            Ok(format!(
                "{} does not exist yet; install creates it (in {}, writable)",
                dir.display(),
                parent.display()
            ))
        } else {
            Err(std::io::Error::other(format!("{} is not writable", parent.display())))
        }
    };
    match written {
        Ok(message) => Check::new(Status::Ok, "state dir", message, None),
        Err(e) => Check::new(
            Status::Fail,
            "state dir",
            format!("{} is not writable ({e})", dir.display()),
            Some(format!(
                "make {} yours and writable, or set XDG_STATE_HOME to another folder",
                dir.display()
            )),
        ),
    }
}

fn temp_dir_check() -> Check {
    let tmp = places::temp_dir();
    match fs::metadata(&tmp) {
        Err(e) => Check::new(
            Status::Fail,
            "temp dir",
            format!("{} cannot be read ({e})", tmp.display()),
            Some("set TMPDIR to a folder that exists".into()),
        ),
        Ok(meta) => {
            let mode = meta.mode();
            let sticky = mode & 0o1000 != 0;
            let others_write = mode & 0o022 != 0;
            let probe = tmp.join(format!(".baton-doctor-{}", fsx::random_hex(6)));
            let writable = fsx::write_atomic(&probe, b"", fsx::WriteOptions::STATE).is_ok();
            let _ = fs::remove_file(&probe);
            if !writable {
                Check::new(
                    Status::Fail,
                    "temp dir",
                    format!("{} is not writable: the statusline cannot write the bridge", tmp.display()),
                    Some("set TMPDIR to a folder of yours (mkdir -m 700 ~/.cache/tmp; export TMPDIR=~/.cache/tmp)".into()),
                )
            } else if !others_write {
                Check::new(Status::Ok, "temp dir", format!("{} is private", tmp.display()), None)
            } else if sticky {
                Check::new(
                    Status::Ok,
                    "temp dir",
                    format!("{} is sticky (others cannot replace your files)", tmp.display()),
                    None,
                )
            } else {
                Check::new(
                    Status::Fail,
                    "temp dir",
                    format!(
                        "{} is writable by others without the sticky bit: they could replace baton's files",
                        tmp.display()
                    ),
                    Some("set TMPDIR to a folder of yours (mkdir -m 700 ~/.cache/tmp; export TMPDIR=~/.cache/tmp)".into()),
                )
            }
        }
    }
}

/// A private throwaway folder (removed on drop) with a home, a temp dir and a project,
/// so the self-tests read no config of the user's and write nothing of theirs.
struct Sandbox {
    root: PathBuf,
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

impl Sandbox {
    fn create() -> std::io::Result<Sandbox> {
        let root = places::temp_dir().join(format!("baton-doctor-{}", fsx::random_hex(8)));
        let mut builder = fs::DirBuilder::new();
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&root)?;
        let sandbox = Sandbox { root };
        for sub in ["home", "tmp", "project"] {
            fsx::ensure_dir(&sandbox.root.join(sub), true)?;
        }
        Ok(sandbox)
    }

    fn command(&self, exe: &Path) -> Command {
        let mut command = Command::new(exe);
        command
            .arg("hook")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root.join("home"))
            .env("TMPDIR", self.root.join("tmp"))
            .env("CLAUDE_PROJECT_DIR", self.root.join("project"))
            .current_dir(self.root.join("project"));
        // The hook keeps its state where the user's hook will: the self-test then meets
        // the same state folder (an unwritable one included) and reports what the hook
        // will really do. A folder not made yet is left unmade: doctor changes nothing.
        let existing = places::state_dir().filter(|dir| dir.symlink_metadata().is_ok());
        if let Some(base) = existing.as_deref().and_then(Path::parent) {
            command.env("XDG_STATE_HOME", base);
        }
        command
    }
}

/// A finished run of the hook.
struct HookRun {
    ok: bool,
    stdout: String,
    elapsed: Duration,
}

/// Why the self-test could not see the hook finish.
#[derive(Debug, thiserror::Error)]
enum HookRunError {
    #[error("cannot run the hook ({0})")]
    Spawn(std::io::Error),
    #[error("still running after {} s; killed", .0.as_secs())]
    Killed(Duration),
    #[error("cannot write the hook's stdin ({0})")]
    Stdin(std::io::Error),
}

/// Runs `command`, writing `stdin` and closing it (or, with `None`, leaving it open),
/// killed past `limit`.
fn run_hook(command: Command, stdin: Option<&[u8]>, limit: Duration) -> Result<HookRun, HookRunError> {
    let options = proc::Options {
        input: stdin.map_or(proc::Input::HeldOpen, |bytes| proc::Input::Bytes(bytes.to_vec())),
        stderr: false,
        output_limit: u64::MAX,
        timeout: limit,
        kill: proc::Kill::Child,
    };
    let done = proc::run(command, &options).map_err(|e| match e {
        proc::RunError::Spawn(e) => HookRunError::Spawn(e),
        proc::RunError::TimedOut | proc::RunError::Wait(_) => HookRunError::Killed(limit),
    })?;
    if let Some(e) = done.stdin_error {
        return Err(HookRunError::Stdin(e));
    }
    let stdout = String::from_utf8(done.stdout).unwrap_or_default();
    Ok(HookRun { ok: done.status.success(), stdout, elapsed: done.elapsed })
}

const SELF_TEST_RUNS: usize = 20;

fn hook_self_test(exe: &Path) -> Check {
    let name = "hook self-test";
    let sandbox = match Sandbox::create() {
        Ok(sandbox) => sandbox,
        Err(e) => {
            return Check::new(Status::Fail, name, format!("cannot make a private test folder ({e})"), None);
        }
    };
    let session = format!("baton-doctor-{}", fsx::random_hex(6));
    // A figure at 30% remaining: the first call must warn.
    let bridge = json!({"session_id": session, "remaining_percentage": 30, "used_pct": 70, "timestamp": metrics::now_unix()});
    let bridge_path = sandbox.root.join("tmp").join(format!("claude-ctx-{session}.json"));
    if let Err(e) = fsx::write_atomic(&bridge_path, bridge.to_string().as_bytes(), fsx::WriteOptions::STATE) {
        return Check::new(Status::Fail, name, format!("cannot write a test bridge ({e})"), None);
    }
    let payload = json!({
        "session_id": session,
        "transcript_path": null,
        "cwd": sandbox.root.join("project"),
        "hook_event_name": "PostToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": sandbox.root.join("project/README.md")},
        "tool_response": {"success": true}
    })
    .to_string();
    let mut times = Vec::with_capacity(SELF_TEST_RUNS);
    let mut unkept = None;
    // The self-test's state lives in the user's state folder: gone when the test is.
    struct Forget<'a>(&'a str);
    impl Drop for Forget<'_> {
        fn drop(&mut self) {
            crate::session_state::forget(self.0);
        }
    }
    let _forget = Forget(&session);
    for i in 0..SELF_TEST_RUNS {
        let run = match run_hook(sandbox.command(exe), Some(payload.as_bytes()), Duration::from_secs(10)) {
            Ok(run) => run,
            Err(e) => return Check::new(Status::Fail, name, format!("run {}: {e}", i + 1), None),
        };
        if !run.ok {
            return Check::new(Status::Fail, name, format!("run {}: the hook exited non-zero", i + 1), None);
        }
        let stdout = run.stdout.trim();
        if !stdout.is_empty() && serde_json::from_str::<Value>(stdout).is_err() {
            return Check::new(
                Status::Fail,
                name,
                format!("run {}: stdout is not one JSON value: {stdout}", i + 1),
                None,
            );
        }
        if i == 0 && stdout.contains("cannot keep its state") {
            unkept = Some(stdout.to_string());
        }
        if i == 0 && !stdout.contains("CONTEXT WARNING") {
            return Check::new(
                Status::Fail,
                name,
                format!("at 30% remaining the first call did not warn (stdout: {stdout:?})"),
                Some("check `baton config` for thresholds, or report a bug".into()),
            );
        }
        times.push(run.elapsed);
    }
    times.sort();
    let median = times[times.len() / 2];
    let ms = median.as_secs_f64() * 1000.0;
    let message = format!("median {ms:.1} ms over {SELF_TEST_RUNS} runs; warns at 30% remaining");
    if unkept.is_some() {
        let dir = places::state_dir()
            .map_or_else(|| "baton's state folder".to_string(), |d| d.display().to_string());
        return Check::new(
            Status::Warn,
            name,
            format!(
                "{message}, but the hook cannot keep its state in {dir}: every call past a threshold will warn (no debounce), and the session's count and levels are not kept"
            ),
            Some(format!(
                "make {dir} a folder you can write (remove whatever file is there, then mkdir -p -m 700 {dir}), or set XDG_STATE_HOME to a writable folder"
            )),
        );
    }
    if median > Duration::from_millis(250) {
        Check::new(
            Status::Warn,
            name,
            format!("{message}: slow for a hook that runs after every tool call"),
            Some("build with --release (cargo install --path .)".into()),
        )
    } else {
        Check::new(Status::Ok, name, message, None)
    }
}

fn stdin_open_test(exe: &Path) -> Check {
    let name = "stdin self-test";
    let sandbox = match Sandbox::create() {
        Ok(sandbox) => sandbox,
        Err(e) => {
            return Check::new(Status::Fail, name, format!("cannot make a private test folder ({e})"), None);
        }
    };
    let mut command = sandbox.command(exe);
    command.env("BATON_STDIN_TIMEOUT_MS", "500");
    match run_hook(command, None, Duration::from_secs(3)) {
        Ok(run) if run.ok && run.stdout.is_empty() => Check::new(
            Status::Ok,
            name,
            format!("with stdin left open the hook exits 0, silent, in {} ms", run.elapsed.as_millis()),
            None,
        ),
        Ok(run) => Check::new(
            Status::Fail,
            name,
            format!(
                "with stdin left open the hook exited {} with stdout {:?}",
                if run.ok { "0" } else { "non-zero" },
                run.stdout
            ),
            None,
        ),
        Err(e) => Check::new(Status::Fail, name, format!("with stdin left open the hook was {e}"), None),
    }
}

/// `baton` when the first `baton` on PATH is this binary, else its full path.
fn how_to_call(this: &str) -> String {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join("baton")).find(|c| c.is_file()))
        .and_then(|found| found.and_then(|f| fs::canonicalize(f).ok()));
    if on_path.is_some_and(|p| p == Path::new(this)) { "baton".to_string() } else { commands::quote(this) }
}

/// The hosts install has a record for, in baton's state dir.
fn recorded_hosts() -> Vec<Host> {
    let Some(dir) = places::state_dir() else { return Vec::new() };
    let installs = install::state::load(&install::state::path(&dir)).unwrap_or_default();
    installs.installs.values().filter_map(|entry| Host::from_id(&entry.host)).collect()
}

/// What the host's own trust rules say ([`crate::host::Host::trust_findings`]), over its
/// settings files that parse.
fn trust_checks(host: Host, files: &[SettingsFile], places: &Places) -> Vec<Check> {
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

/// A host of baton's plugin (OpenCode, Kilo CLI): baton's plugin file in one scope (both:
/// every event runs baton twice), naming a binary that exists, preferably this one, in
/// this build's text (pure over what was read).
pub fn plugin_checks(
    host: Host,
    plugins: &[install::opencode_plugin::PluginFile],
    facts: &Facts,
) -> Vec<Check> {
    use install::opencode_plugin::PluginState;
    let name = &format!("plugin ({})", host.name());
    let mine: Vec<_> = plugins.iter().filter(|p| matches!(p.state, PluginState::Baton { .. })).collect();
    let mut checks = Vec::new();
    let mut problems: Vec<String> = plugins
        .iter()
        .filter_map(|p| match &p.state {
            PluginState::Foreign => Some(format!("{} is not baton's plugin", p.shown)),
            PluginState::Unreadable(why) => Some(format!("{} cannot be read ({why})", p.shown)),
            _ => None,
        })
        .collect();
    let Some(first) = mine.first() else {
        problems.insert(
            0,
            "baton's plugin is not installed: no context warnings, handoff or resume brief".into(),
        );
        checks.push(Check::new(
            Status::Fail,
            name,
            problems.join("; "),
            Some(format!("{} install{}", facts.me, flags(host, Scope::User))),
        ));
        return checks;
    };
    let mut status = if problems.is_empty() { Status::Ok } else { Status::Warn };
    let mut fix = None;
    if mine.len() > 1 {
        status = Status::Warn;
        problems
            .push("installed in both scopes: OpenCode loads both, so every event runs baton twice".into());
        fix = Some(format!("{} uninstall{}", facts.me, flags(host, Scope::Project)));
    }
    for plugin in &mine {
        if matches!(plugin.state, PluginState::Baton { current: false, .. }) {
            status = Status::Warn;
            problems.push(format!("{} was written by another baton version", plugin.shown));
            fix = fix.or_else(|| Some(format!("{} install{}", facts.me, flags(host, plugin.scope))));
        }
    }
    let events: Vec<&str> = host.events().iter().map(|s| s.name).collect();
    let shown: Vec<&str> = mine.iter().map(|p| p.shown.as_str()).collect();
    let message = if problems.is_empty() {
        format!("baton's plugin in {} ({})", shown.join(", "), events.join(", "))
    } else {
        format!("{} ({})", problems.join("; "), shown.join(", "))
    };
    checks.push(Check::new(status, name, message, fix));
    let mut status = Status::Ok;
    let mut problems = Vec::new();
    for plugin in &mine {
        let PluginState::Baton { binary, .. } = &plugin.state else { continue };
        let program = binary.clone().unwrap_or_default();
        match (facts.resolve)(&program) {
            None => {
                status = Status::Fail;
                problems.push(format!("{} runs {program}, which does not exist", plugin.shown));
            }
            Some(real) if real != facts.this => {
                status = status.max(Status::Warn);
                problems.push(format!("{} runs {program}, not this baton ({})", plugin.shown, facts.this));
            }
            Some(_) => {}
        }
    }
    let name = &format!("binary ({})", host.name());
    checks.push(if problems.is_empty() {
        Check::new(Status::Ok, name, format!("the plugin runs {}", facts.this), None)
    } else {
        let fix =
            format!("{} install{} (writes the plugin for this binary)", facts.me, flags(host, first.scope));
        Check::new(status, name, problems.join("; "), Some(fix))
    });
    checks
}

/// Every check, in order, for `hosts` (empty: those baton is installed for); and the
/// hosts checked.
pub fn checks(asked: &[HostChoice]) -> (Vec<Host>, Vec<Check>) {
    let mut checks = Vec::new();
    let this = match install::current_binary() {
        Ok(this) => this,
        Err(e) => {
            checks.push(Check::new(Status::Fail, "binary", e.to_string(), None));
            return (Vec::new(), checks);
        }
    };
    checks.push(Check::new(
        Status::Ok,
        "binary",
        format!("{this} (baton {})", env!("CARGO_PKG_VERSION")),
        None,
    ));
    let places = Places::from_env();
    let me = how_to_call(&this);
    let home = places.home.as_ref().and_then(|h| h.to_str()).map(str::to_string);
    let resolve = |program: &str| -> Option<String> {
        let path = Path::new(program);
        let found = if path.is_absolute() {
            path.is_file().then(|| path.to_path_buf())
        } else {
            std::env::var_os("PATH")
                .and_then(|p| std::env::split_paths(&p).map(|d| d.join(program)).find(|c| c.is_file()))
        }?;
        fs::canonicalize(found).ok().and_then(|p| p.to_str().map(str::to_string))
    };
    let facts = Facts { this: &this, me: &me, home: home.as_deref(), resolve: &resolve };
    let files = read_settings(&places);
    let plugins: Vec<(Host, Vec<install::opencode_plugin::PluginFile>)> = Host::ALL
        .iter()
        .copied()
        .filter(|host| host.install() == Install::Plugin)
        .map(|host| (host, install::opencode_plugin::plugin_files(&places, host)))
        .collect();
    let mut recorded = recorded_hosts();
    for (host, files) in &plugins {
        if files.iter().any(|p| matches!(p.state, install::opencode_plugin::PluginState::Baton { .. })) {
            recorded.push(*host);
        }
    }
    let hosts = hosts_to_check(asked, &files, &recorded);
    let names: Vec<&str> = hosts.iter().map(|h| h.name()).collect();
    let why = if asked.is_empty() { "where baton is installed; --host picks others" } else { "--host" };
    checks.push(Check::new(Status::Ok, "hosts", format!("{} ({why})", names.join(", ")), None));
    checks.extend(analyse_settings(&files, &hosts, &facts));
    // Each host's plugin, then its own approval step, in the hosts' order.
    for host in hosts.iter().copied() {
        if let Some((_, files)) = plugins.iter().find(|(h, _)| *h == host) {
            checks.extend(plugin_checks(host, files, &facts));
        }
        checks.extend(trust_checks(host, &files, &places));
    }
    let project = places.project.clone();
    let config = Config::load(project.as_deref());
    if hosts.iter().any(|h| h.figure_source() == FigureSource::Statusline) {
        checks.push(bridge_check(config.stale_seconds()));
    }
    checks.push(config_check(project.as_deref()));
    checks.push(windows_check(project.as_deref()));
    checks.push(state_dir_check());
    checks.push(state_files_check());
    checks.extend(temp_dir_planted_check());
    checks.push(temp_dir_check());
    let exe = PathBuf::from(&this);
    checks.push(hook_self_test(&exe));
    checks.push(stdin_open_test(&exe));
    (hosts, checks)
}

/// The report for people.
pub fn render(checks: &[Check]) -> String {
    let width = checks.iter().map(|c| c.check.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    for check in checks {
        let status = match check.status {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        };
        out.push_str(&format!("{status:<4}  {:<width$}  {}\n", check.check, check.message));
        if let Some(fix) = &check.fix {
            out.push_str(&format!("      {:<width$}  fix: {fix}\n", ""));
        }
    }
    let fails = checks.iter().filter(|c| c.status == Status::Fail).count();
    let warns = checks.iter().filter(|c| c.status == Status::Warn).count();
    out.push_str(&match (fails, warns) {
        (0, 0) => "\nall checks passed\n".to_string(),
        (0, w) => format!("\nno failures, {w} warning(s)\n"),
        (f, w) => format!("\n{f} failure(s), {w} warning(s)\n"),
    });
    out
}

/// Runs doctor, printing on `out`; true when every check passed or only warned.
pub fn run(options: &Options, out: &mut dyn Write) -> bool {
    let (hosts, checks) = checks(&options.hosts);
    let failed = checks.iter().any(|c| c.status == Status::Fail);
    if options.json {
        let hosts: Vec<&str> = hosts.iter().map(|h| h.id()).collect();
        let report = json!({"ok": !failed, "hosts": hosts, "checks": checks});
        let _ = writeln!(out, "{}", serde_json::to_string_pretty(&report).unwrap_or_default());
    } else {
        let _ = write!(out, "{}", render(&checks));
    }
    !failed
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

    #[test]
    fn renders_fixes_under_their_line() {
        let text = render(&[
            Check::new(Status::Ok, "a", "fine", None),
            Check::new(Status::Fail, "longer", "broken", Some("do this".into())),
        ]);
        assert_eq!(
            text,
            "ok    a       fine\nFAIL  longer  broken\n              fix: do this\n\n1 failure(s), 0 warning(s)\n"
        );
    }
}
