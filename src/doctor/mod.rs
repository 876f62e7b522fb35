//! `baton doctor`: checks that baton is set up and working, one line per check (ok,
//! warn or fail), each problem with the command or edit that fixes it. Exit 1 when any
//! check fails; `--json` for machines.
//!
//! Only the hosts baton is installed for are checked, or those `--host` names
//! (`settings::hosts_to_check`). What their settings files say is analysed by pure
//! functions (`settings`; each host's own trust rules, `crate::host::Host::trust_findings`;
//! the plugin hosts' files, `plugin`); the rest looks at the machine (`machine`: the
//! newest bridge, baton's config files, the state and temp dirs) and runs two self-tests
//! of this binary's hook the way a host does (`self_test`, in a private throwaway folder,
//! so nothing of the user's is read or written). [`checks`] is their order;
//! `report` words them.

mod machine;
mod plugin;
mod report;
mod self_test;
mod settings;

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::host::{FigureSource, HostChoice, Install};
use crate::install::commands;
use crate::install::hosts::{Host, Places};
use crate::{install, places};
use machine::{
    bridge_check, config_check, state_dir_check, state_files_check, temp_dir_check, temp_dir_planted_check,
    windows_check,
};
use plugin::plugin_checks;
pub use report::{Check, Status, render};
use self_test::{hook_self_test, stdin_open_test};
pub use settings::{Facts, analyse_settings};
#[cfg(test)]
pub use settings::{FileState, SettingsFile};
use settings::{hosts_to_check, read_settings, trust_checks};

/// What to check and how to print it.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Print JSON for machines.
    pub json: bool,
    /// Check these hosts instead of those baton is installed for.
    pub hosts: Vec<HostChoice>,
}

/// `baton` when the first `baton` on PATH is this binary, else its full path.
fn how_to_call(this: &str) -> String {
    let on_path = std::env::var_os("PATH")
        .map(|p| {
            let name = format!("baton{}", std::env::consts::EXE_SUFFIX);
            std::env::split_paths(&p).map(|d| d.join(&name)).find(|c| c.is_file())
        })
        .and_then(|found| found.and_then(|f| crate::platform::canonicalize(&f).ok()))
        .and_then(|p| crate::platform::command_path(&p));
    if on_path.is_some_and(|p| p == this) { "baton".to_string() } else { commands::quote(this) }
}

/// The hosts install has a record for, in baton's state dir.
fn recorded_hosts() -> Vec<Host> {
    let Some(dir) = places::state_dir() else { return Vec::new() };
    let installs = install::state::load(&install::state::path(&dir)).unwrap_or_default();
    installs.installs.values().filter_map(|entry| Host::from_id(&entry.host)).collect()
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
        crate::platform::canonicalize(&found).ok().and_then(|p| crate::platform::command_path(&p))
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

/// Runs doctor, printing on `out`; true when every check passed or only warned.
pub fn run(options: &Options, out: &mut dyn Write) -> bool {
    let (hosts, checks) = checks(&options.hosts);
    let failed = checks.iter().any(|c| c.status == Status::Fail);
    if options.json {
        let _ = writeln!(out, "{}", report::to_json(&hosts, &checks));
    } else {
        let _ = write!(out, "{}", render(&checks));
    }
    !failed
}
