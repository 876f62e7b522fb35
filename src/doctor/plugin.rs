//! A host of baton's plugin (OpenCode, Kilo CLI): its plugin files checked.

use super::report::{Check, Status};
use super::settings::{Facts, flags};
use crate::install;
use crate::install::hosts::{Host, Scope};

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
