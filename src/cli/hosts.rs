//! `--host`: its values come from the one list of hosts ([`HostKind::ALL`]), each with its
//! help, so `--help`, the completions and the man pages list every host baton knows and
//! nothing else.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

use crate::host::{HostChoice, HostKind};

/// `--host` of install, uninstall and doctor: a host's id, or `all` (with `all_help`).
pub(super) fn choice(all_help: impl Into<String>) -> impl TypedValueParser<Value = HostChoice> {
    let hosts = HostKind::ALL.iter().map(|host| PossibleValue::new(host.id()).help(host.spec().flag_help));
    let all = PossibleValue::new(HostChoice::ALL_ID).help(all_help.into());
    PossibleValuesParser::new(hosts.chain([all])).try_map(|id: String| {
        HostChoice::from_id(&id).ok_or_else(|| format!("`{id}` is not a host baton knows"))
    })
}

/// `statusline --host`: the ids of the hosts that run a command status line.
pub(super) fn with_statusline() -> PossibleValuesParser {
    PossibleValuesParser::new(HostKind::ALL.iter().filter(|host| host.has_statusline()).map(|host| host.id()))
}

/// `install --host all`'s help: the default host, plus the others where they are set up.
pub(super) fn install_all_help() -> String {
    let others: Vec<&str> =
        HostKind::ALL.iter().filter(|host| **host != HostKind::DEFAULT).map(|host| host.name()).collect();
    let listed = match others.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    };
    format!("{}, plus {listed} where their folders exist", HostKind::DEFAULT.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_host_and_all_are_values() {
        let parser = choice("every host");
        let values: Vec<String> =
            parser.possible_values().unwrap().map(|v| v.get_name().to_string()).collect();
        assert_eq!(values.len(), HostKind::ALL.len() + 1);
        assert_eq!(values.first().map(String::as_str), Some("claude"));
        assert_eq!(values.last().map(String::as_str), Some("all"));
        assert!(install_all_help().starts_with("Claude Code, plus Gemini CLI, Codex, Qwen Code"));
    }
}
