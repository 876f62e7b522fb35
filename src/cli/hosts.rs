//! `--host`: its values come from the one list of hosts ([`HostKind::ALL`]), each with its
//! help, so `--help`, the completions and the man pages list every host baton knows and
//! nothing else. The values are made only when asked for (a `--host` given, `--help`):
//! clap builds every command's arguments at each start, `baton status` included.

use std::ffi::OsStr;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

use crate::host::{HostChoice, HostKind};

/// A value parser over values made when needed: parsing goes through clap's own
/// [`PossibleValuesParser`], so a wrong value is told as for any other flag.
#[derive(Clone, Copy)]
pub(super) struct Values(fn() -> Vec<PossibleValue>);

impl TypedValueParser for Values {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<String, clap::Error> {
        PossibleValuesParser::new((self.0)()).parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new((self.0)().into_iter()))
    }
}

/// `--host` of install and uninstall: a host's id, or `all` (the default host, plus the
/// others where they are set up).
pub(super) fn install_choice() -> impl TypedValueParser<Value = HostChoice> {
    Values(|| choices(install_all_help())).try_map(choice_of)
}

/// `--host` of doctor: a host's id, or `all` (every host, installed or not).
pub(super) fn doctor_choice() -> impl TypedValueParser<Value = HostChoice> {
    Values(|| choices("Every host, installed or not".to_string())).try_map(choice_of)
}

/// `statusline --host`: the ids of the hosts that run a command status line.
pub(super) fn with_statusline() -> Values {
    Values(|| {
        HostKind::ALL
            .iter()
            .filter(|host| host.has_statusline())
            .map(|host| PossibleValue::new(host.id()))
            .collect()
    })
}

/// Every host's id with its help, then `all` with `all_help`.
fn choices(all_help: String) -> Vec<PossibleValue> {
    let hosts = HostKind::ALL.iter().map(|host| PossibleValue::new(host.id()).help(host.spec().flag_help));
    hosts.chain([PossibleValue::new(HostChoice::ALL_ID).help(all_help)]).collect()
}

fn choice_of(id: String) -> Result<HostChoice, String> {
    HostChoice::from_id(&id).ok_or_else(|| format!("`{id}` is not a host baton knows"))
}

/// `install --host all`'s help: the default host, plus the others where they are set up.
fn install_all_help() -> String {
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
        let values: Vec<String> =
            doctor_choice().possible_values().unwrap().map(|v| v.get_name().to_string()).collect();
        assert_eq!(values.len(), HostKind::ALL.len() + 1);
        assert_eq!(values.first().map(String::as_str), Some("claude"));
        assert_eq!(values.last().map(String::as_str), Some("all"));
        assert!(install_all_help().starts_with("Claude Code, plus Gemini CLI, Codex, Qwen Code"));
        let statuslines: Vec<String> =
            with_statusline().possible_values().unwrap().map(|v| v.get_name().to_string()).collect();
        assert!(statuslines.iter().any(|v| v == "qwen") && !statuslines.iter().any(|v| v == "codex"));
    }
}
