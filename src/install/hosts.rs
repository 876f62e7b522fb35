//! The hosts baton registers with, where each keeps its settings, and what baton puts
//! there: which events, with which matcher and timeout, and whether a status line exists.
//! Path resolution is pure over [`Places`], gathered once from the environment.

use std::fmt;
use std::path::{Path, PathBuf};

/// A host that runs hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Host {
    Claude,
    Gemini,
    Codex,
}

/// One event baton registers for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventSpec {
    pub name: &'static str,
    /// The group's `matcher`, when one is written. Gemini and Codex read matchers as
    /// regular expressions (`*` alone is not one), and an absent matcher means "all".
    pub matcher: Option<&'static str>,
    /// A `timeout` for this event in place of the host's usual one, where the host
    /// allows less (Codex clamps SessionEnd hooks to 1-3 s and warns about more).
    pub timeout: Option<u64>,
}

impl EventSpec {
    const fn new(name: &'static str, matcher: Option<&'static str>) -> EventSpec {
        EventSpec { name, matcher, timeout: None }
    }
}

/// Claude Code: a failed tool call fires PostToolUseFailure instead of PostToolUse (same
/// handler); SessionEnd lets baton mark the session ended.
const CLAUDE_EVENTS: &[EventSpec] = &[
    EventSpec::new("PostToolUse", Some("*")),
    EventSpec::new("PostToolUseFailure", Some("*")),
    EventSpec::new("SessionStart", None),
    EventSpec::new("PreCompact", None),
    EventSpec::new("SessionEnd", None),
];

const GEMINI_EVENTS: &[EventSpec] = &[
    EventSpec::new("AfterTool", None),
    EventSpec::new("SessionStart", None),
    EventSpec::new("PreCompress", None),
    EventSpec::new("SessionEnd", None),
];

/// Codex 0.171.0 has no PostToolUseFailure event (it ignores unknown event names).
const CODEX_EVENTS: &[EventSpec] = &[
    EventSpec::new("PostToolUse", None),
    EventSpec::new("SessionStart", None),
    EventSpec::new("PreCompact", None),
    EventSpec { name: "SessionEnd", matcher: None, timeout: Some(3) },
];

impl Host {
    pub const ALL: [Host; 3] = [Host::Claude, Host::Gemini, Host::Codex];

    /// The name people know it by.
    pub fn name(self) -> &'static str {
        match self {
            Host::Claude => "Claude Code",
            Host::Gemini => "Gemini CLI",
            Host::Codex => "Codex",
        }
    }

    /// The name on the command line (`--host`) and in baton's state.
    pub fn id(self) -> &'static str {
        match self {
            Host::Claude => "claude",
            Host::Gemini => "gemini",
            Host::Codex => "codex",
        }
    }

    pub fn from_id(id: &str) -> Option<Host> {
        Host::ALL.into_iter().find(|h| h.id() == id)
    }

    /// The events `baton hook` is registered for.
    pub fn events(self) -> &'static [EventSpec] {
        match self {
            Host::Claude => CLAUDE_EVENTS,
            Host::Gemini => GEMINI_EVENTS,
            Host::Codex => CODEX_EVENTS,
        }
    }

    /// The hook `timeout` baton asks for, in the host's unit (Gemini: milliseconds,
    /// the others: seconds). Ten seconds: far above the hook's own 2 s stdin deadline,
    /// far below the hosts' defaults (Claude Code: 600 s).
    pub fn timeout(self) -> u64 {
        match self {
            Host::Gemini => 10_000,
            Host::Claude | Host::Codex => 10,
        }
    }

    /// The hook `timeout` baton asks for on one of its events.
    pub fn timeout_for(self, spec: &EventSpec) -> u64 {
        spec.timeout.unwrap_or_else(|| self.timeout())
    }

    /// Only Claude Code has a command status line.
    pub fn has_statusline(self) -> bool {
        self == Host::Claude
    }

    /// The scopes the host has a settings file for.
    pub fn scopes(self) -> &'static [Scope] {
        match self {
            Host::Claude => &[Scope::User, Scope::Project, Scope::Local],
            Host::Gemini | Host::Codex => &[Scope::User, Scope::Project],
        }
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which of a host's settings files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// The user's own settings, for every project.
    User,
    /// The project's shared settings (committed with it).
    Project,
    /// The project's private settings (Claude Code's `settings.local.json`).
    Local,
}

impl Scope {
    pub fn id(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// The folders settings paths are built from, gathered once from the environment.
#[derive(Debug, Clone, Default)]
pub struct Places {
    pub home: Option<PathBuf>,
    /// `$CLAUDE_CONFIG_DIR`.
    pub claude_config_dir: Option<PathBuf>,
    /// `$CODEX_HOME`.
    pub codex_home: Option<PathBuf>,
    /// The project folder (the current directory).
    pub project: Option<PathBuf>,
}

impl Places {
    pub fn from_env() -> Places {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        Places {
            home: crate::places::home_dir(),
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            codex_home: var("CODEX_HOME"),
            project: std::env::current_dir().ok(),
        }
    }

    /// The host's own folder for the scope (`~/.claude`, `<project>/.gemini` …).
    pub fn host_dir(&self, host: Host, scope: Scope) -> Result<PathBuf, String> {
        let home = || self.home.clone().ok_or_else(|| "HOME is not set".to_string());
        let project = || self.project.clone().ok_or_else(|| "the current folder cannot be read".to_string());
        Ok(match (host, scope) {
            (Host::Claude, Scope::User) => match &self.claude_config_dir {
                Some(dir) => dir.clone(),
                None => home()?.join(".claude"),
            },
            (Host::Claude, Scope::Project | Scope::Local) => project()?.join(".claude"),
            (Host::Gemini, Scope::User) => home()?.join(".gemini"),
            (Host::Gemini, Scope::Project) => project()?.join(".gemini"),
            (Host::Codex, Scope::User) => match &self.codex_home {
                Some(dir) => dir.clone(),
                None => home()?.join(".codex"),
            },
            (Host::Codex, Scope::Project) => project()?.join(".codex"),
            (Host::Gemini | Host::Codex, Scope::Local) => {
                return Err(format!(
                    "{} has no local scope (only Claude Code has settings.local.json); use --scope project",
                    host.name()
                ));
            }
        })
    }

    /// The settings file baton edits for the host and scope.
    pub fn settings_path(&self, host: Host, scope: Scope) -> Result<PathBuf, String> {
        let dir = self.host_dir(host, scope)?;
        let name = match (host, scope) {
            (Host::Claude, Scope::Local) => "settings.local.json",
            (Host::Codex, _) => "hooks.json",
            _ => "settings.json",
        };
        Ok(dir.join(name))
    }
}

/// `path` with `$HOME` shown as `~`, for messages.
pub fn show_path(path: &Path, home: Option<&Path>) -> String {
    match home.and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) if !rest.as_os_str().is_empty() => format!("~/{}", rest.display()),
        _ => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places() -> Places {
        Places {
            home: Some("/h".into()),
            claude_config_dir: None,
            codex_home: None,
            project: Some("/p".into()),
        }
    }

    #[test]
    fn settings_paths() {
        let p = places();
        let path = |host, scope| p.settings_path(host, scope).unwrap();
        assert_eq!(path(Host::Claude, Scope::User), PathBuf::from("/h/.claude/settings.json"));
        assert_eq!(path(Host::Claude, Scope::Project), PathBuf::from("/p/.claude/settings.json"));
        assert_eq!(path(Host::Claude, Scope::Local), PathBuf::from("/p/.claude/settings.local.json"));
        assert_eq!(path(Host::Gemini, Scope::User), PathBuf::from("/h/.gemini/settings.json"));
        assert_eq!(path(Host::Gemini, Scope::Project), PathBuf::from("/p/.gemini/settings.json"));
        assert_eq!(path(Host::Codex, Scope::User), PathBuf::from("/h/.codex/hooks.json"));
        assert_eq!(path(Host::Codex, Scope::Project), PathBuf::from("/p/.codex/hooks.json"));
        assert!(p.settings_path(Host::Gemini, Scope::Local).unwrap_err().contains("--scope project"));
    }

    #[test]
    fn config_dir_variables_win() {
        let p = Places { claude_config_dir: Some("/c".into()), codex_home: Some("/x".into()), ..places() };
        assert_eq!(p.settings_path(Host::Claude, Scope::User).unwrap(), PathBuf::from("/c/settings.json"));
        assert_eq!(p.settings_path(Host::Codex, Scope::User).unwrap(), PathBuf::from("/x/hooks.json"));
        // The project scopes do not move.
        assert_eq!(
            p.settings_path(Host::Claude, Scope::Project).unwrap(),
            PathBuf::from("/p/.claude/settings.json")
        );
    }

    #[test]
    fn paths_under_home_are_shortened() {
        assert_eq!(
            show_path(Path::new("/h/.claude/settings.json"), Some(Path::new("/h"))),
            "~/.claude/settings.json"
        );
        assert_eq!(show_path(Path::new("/p/x"), Some(Path::new("/h"))), "/p/x");
    }
}
