//! The hosts: what Claude Code, Gemini CLI and Codex send on stdin, the one envelope they
//! accept back, and [`HostKind`], the one host model. Each host's file ([`claude`],
//! [`codex`], [`gemini`]) owns everything baton knows about it: how its events are told
//! apart, the events baton registers and their matchers, where its context figure lives,
//! its models' windows, where it compacts, its homes and settings paths. A new host is
//! one file, one variant, and its arms in the `match`es below.
//!
//! Input is read leniently: every field may be missing, `null` or of the wrong type in
//! some host version, and each of those means "not given" rather than a failed parse.
//! Fields baton never looks at (a tool's whole output, say) are skipped, not kept.
//!
//! This is an edge: it returns facts, and learns or stores nothing.

pub mod claude;
pub mod codex;
pub mod copilot;
pub mod droid;
mod envelope;
pub mod gemini;
mod input;
pub mod kilo;
mod lenient;
pub mod opencode;
pub mod qwen;

use std::fmt;
use std::path::PathBuf;

pub use envelope::Envelope;
pub use input::{Event, HookInput, RateWindow, StatuslineInput, SubagentRowsInput, SubagentTask};

/// A host that runs hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HostKind {
    Claude,
    Gemini,
    Codex,
    Qwen,
    Droid,
    Copilot,
    OpenCode,
    Kilo,
}

/// Where and how the pause stops the agent once its grace calls are used, as the host's
/// own code allows ([`HostKind::pause_stop`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PauseStop {
    /// `continue: false` at the last grace call's PostToolUse ends the turn (Claude Code).
    AtTheCall,
    /// `continue: false` at the next call's PreToolUse (BeforeTool) ends the turn before
    /// that call runs, so every call that ran keeps its output (Gemini CLI).
    BeforeTheNextCall,
    /// No hook output ends a turn: every later call of the turn is refused at PreToolUse
    /// with the reason, so the agent can only end it (Codex).
    RefuseTheNextCalls,
    /// Not checked on this host: the pause only advises.
    None,
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
    pub const fn new(name: &'static str, matcher: Option<&'static str>) -> EventSpec {
        EventSpec { name, matcher, timeout: None }
    }
}

impl HostKind {
    pub const ALL: [HostKind; 8] = [
        HostKind::Claude,
        HostKind::Gemini,
        HostKind::Codex,
        HostKind::Qwen,
        HostKind::Droid,
        HostKind::Copilot,
        HostKind::OpenCode,
        HostKind::Kilo,
    ];

    /// Which host sent a hook event. Each host says how sure its own signs make it
    /// ([`claude::detect`] …); the surest wins, Claude Code when none claims it.
    pub fn detect(input: &HookInput, gemini_key_set: bool) -> HostKind {
        let claims = [
            (HostKind::Claude, claude::detect(input, gemini_key_set)),
            (HostKind::Gemini, gemini::detect(input, gemini_key_set)),
            (HostKind::Codex, codex::detect(input, gemini_key_set)),
            (HostKind::Qwen, qwen::detect(input, gemini_key_set)),
            (HostKind::Droid, droid::detect(input, gemini_key_set)),
            (HostKind::Copilot, copilot::detect(input, gemini_key_set)),
            (HostKind::OpenCode, opencode::detect(input, gemini_key_set)),
            (HostKind::Kilo, kilo::detect(input, gemini_key_set)),
        ];
        claims
            .into_iter()
            .filter(|(_, strength)| *strength > 0)
            .max_by_key(|(_, strength)| *strength)
            .map_or(HostKind::Claude, |(host, _)| host)
    }

    /// The host the hook's environment names, where only that tells it apart (Qwen Code
    /// sends Claude Code's event names, and `CLAUDE_PROJECT_DIR` as well).
    pub fn from_env(var: &dyn Fn(&str) -> bool) -> Option<HostKind> {
        if qwen::detect_env(var) {
            Some(HostKind::Qwen)
        } else if droid::detect_env(var) {
            Some(HostKind::Droid)
        } else if copilot::detect_env(var) {
            Some(HostKind::Copilot)
        } else {
            None
        }
    }

    /// The format of the transcript this host names in `transcript_path`, which the
    /// handoff's facts are read from.
    pub fn transcript_format(self) -> crate::transcript::Format {
        match self {
            HostKind::Claude => crate::transcript::Format::ClaudeCode,
            HostKind::Gemini => crate::transcript::Format::GeminiChat,
            HostKind::Codex => crate::transcript::Format::CodexRollout,
            HostKind::Qwen => crate::transcript::Format::QwenChat,
            HostKind::Droid => crate::transcript::Format::DroidSession,
            HostKind::Copilot => crate::transcript::Format::CopilotEvents,
            // OpenCode keeps its sessions in a database: no transcript is read.
            HostKind::OpenCode | HostKind::Kilo => crate::transcript::Format::ClaudeCode,
        }
    }

    /// The transcript the handoff's facts are read from: the one the hook names, else,
    /// for Copilot CLI (which names none on PostToolUse), its session's event log.
    pub fn transcript_path(self, named: Option<&str>, session_id: &str) -> Option<std::path::PathBuf> {
        match (named, self) {
            (Some(path), _) => Some(std::path::PathBuf::from(path)),
            (None, HostKind::Copilot) => copilot::events_path(session_id),
            (None, _) => None,
        }
    }

    /// The name people know it by.
    pub fn name(self) -> &'static str {
        match self {
            HostKind::Claude => claude::NAME,
            HostKind::Gemini => gemini::NAME,
            HostKind::Codex => codex::NAME,
            HostKind::Qwen => qwen::NAME,
            HostKind::Droid => droid::NAME,
            HostKind::Copilot => copilot::NAME,
            HostKind::OpenCode => opencode::NAME,
            HostKind::Kilo => kilo::NAME,
        }
    }

    /// The name on the command line (`--host`) and in baton's state.
    pub fn id(self) -> &'static str {
        match self {
            HostKind::Claude => claude::ID,
            HostKind::Gemini => gemini::ID,
            HostKind::Codex => codex::ID,
            HostKind::Qwen => qwen::ID,
            HostKind::Droid => droid::ID,
            HostKind::Copilot => copilot::ID,
            HostKind::OpenCode => opencode::ID,
            HostKind::Kilo => kilo::ID,
        }
    }

    pub fn from_id(id: &str) -> Option<HostKind> {
        HostKind::ALL.into_iter().find(|h| h.id() == id)
    }

    /// The events `baton hook` is registered for.
    pub fn events(self) -> &'static [EventSpec] {
        match self {
            HostKind::Claude => claude::EVENTS,
            HostKind::Gemini => gemini::EVENTS,
            HostKind::Codex => codex::EVENTS,
            HostKind::Qwen => qwen::EVENTS,
            HostKind::Droid => droid::EVENTS,
            HostKind::Copilot => copilot::EVENTS,
            HostKind::OpenCode | HostKind::Kilo => opencode::EVENTS,
        }
    }

    /// The hook `timeout` baton asks for, in the host's unit (Gemini: milliseconds,
    /// the others: seconds). Ten seconds: far above the hook's own 2 s stdin deadline,
    /// far below the hosts' defaults (Claude Code: 600 s).
    pub fn timeout(self) -> u64 {
        match self {
            HostKind::Claude => claude::HOOK_TIMEOUT,
            HostKind::Gemini => gemini::HOOK_TIMEOUT,
            HostKind::Codex => codex::HOOK_TIMEOUT,
            HostKind::Qwen => qwen::HOOK_TIMEOUT,
            HostKind::Droid => droid::HOOK_TIMEOUT,
            HostKind::Copilot => copilot::HOOK_TIMEOUT,
            HostKind::OpenCode | HostKind::Kilo => opencode::HOOK_TIMEOUT,
        }
    }

    /// The hook `timeout` baton asks for on one of its events.
    pub fn timeout_for(self, spec: &EventSpec) -> u64 {
        spec.timeout.unwrap_or_else(|| self.timeout())
    }

    /// The host's sessions are not files baton reads: baton's plugin sends the session's
    /// messages when baton asks for them (OpenCode, Kilo CLI: `HandoffFacts`).
    pub fn sends_messages(self) -> bool {
        matches!(self, HostKind::OpenCode | HostKind::Kilo)
    }

    /// The host drops SessionStart's context: the resume brief goes with the session's
    /// first prompt (UserPromptSubmit) instead.
    pub fn brief_on_first_prompt(self) -> bool {
        matches!(self, HostKind::Qwen)
    }

    /// Only Claude Code has rows per subagent (its `subagentStatusLine`).
    pub fn has_subagent_statusline(self) -> bool {
        matches!(self, HostKind::Claude) && claude::HAS_SUBAGENT_STATUSLINE
    }

    /// The host runs a command status line (Claude Code, Qwen Code, Factory Droid, GitHub
    /// Copilot CLI).
    pub fn has_statusline(self) -> bool {
        match self {
            HostKind::Claude => claude::HAS_STATUSLINE,
            HostKind::Gemini => gemini::HAS_STATUSLINE,
            HostKind::Codex => codex::HAS_STATUSLINE,
            HostKind::Qwen => qwen::HAS_STATUSLINE,
            HostKind::Droid => droid::HAS_STATUSLINE,
            HostKind::Copilot => copilot::HAS_STATUSLINE,
            HostKind::OpenCode | HostKind::Kilo => opencode::HAS_STATUSLINE,
        }
    }

    /// Where the statusline object sits in the host's settings (a JSON pointer): Qwen
    /// Code's under `ui`, the others' at the top.
    pub fn statusline_pointer(self) -> &'static str {
        match self {
            HostKind::Qwen => qwen::STATUSLINE_POINTER,
            _ => "/statusLine",
        }
    }

    /// The host's statusline payload, read into baton's one shape by the host's own reader
    /// (Claude Code's is that shape). `None` when it is not a JSON object.
    pub fn statusline_input(self, bytes: &[u8]) -> Option<StatuslineInput> {
        let input = match self {
            HostKind::Qwen => serde_json::from_slice::<qwen::StatuslinePayload>(bytes).ok()?.into_input(),
            HostKind::Droid => serde_json::from_slice::<droid::StatuslinePayload>(bytes).ok()?.into_input(),
            HostKind::Copilot => {
                serde_json::from_slice::<copilot::StatuslinePayload>(bytes).ok()?.into_input()
            }
            _ => serde_json::from_slice::<StatuslineInput>(bytes).ok()?,
        };
        Some(input)
    }

    /// A hook's `continue: false` ends the agent's turn on this host (the pause's stop).
    pub fn honours_stop(self) -> bool {
        match self {
            HostKind::Claude => claude::HONOURS_STOP,
            HostKind::Gemini => gemini::HONOURS_STOP,
            HostKind::Codex => codex::HONOURS_STOP,
            HostKind::Qwen => qwen::HONOURS_STOP,
            HostKind::Droid => droid::HONOURS_STOP,
            HostKind::Copilot => copilot::HONOURS_STOP,
            HostKind::OpenCode | HostKind::Kilo => opencode::HONOURS_STOP,
        }
    }

    /// How the pause stops the agent on this host ([`PauseStop`]).
    pub fn pause_stop(self) -> PauseStop {
        match self {
            HostKind::Gemini => gemini::PAUSE_STOP,
            HostKind::Codex => codex::PAUSE_STOP,
            HostKind::Qwen => qwen::PAUSE_STOP,
            HostKind::Copilot => copilot::PAUSE_STOP,
            _ if self.honours_stop() => PauseStop::AtTheCall,
            _ => PauseStop::None,
        }
    }

    /// The host shows a hook's `systemMessage` to the user (one line in its pane).
    pub fn shows_system_message(self) -> bool {
        match self {
            HostKind::Claude => claude::SHOWS_SYSTEM_MESSAGE,
            HostKind::Gemini => gemini::SHOWS_SYSTEM_MESSAGE,
            HostKind::Codex => codex::SHOWS_SYSTEM_MESSAGE,
            HostKind::Qwen => qwen::SHOWS_SYSTEM_MESSAGE,
            HostKind::Droid => droid::SHOWS_SYSTEM_MESSAGE,
            HostKind::Copilot => copilot::SHOWS_SYSTEM_MESSAGE,
            HostKind::OpenCode | HostKind::Kilo => opencode::SHOWS_SYSTEM_MESSAGE,
        }
    }

    /// The host emits a hook's `terminalSequence` (a desktop notification, OSC 9).
    pub fn emits_terminal_sequence(self) -> bool {
        match self {
            HostKind::Claude => claude::EMITS_TERMINAL_SEQUENCE,
            HostKind::Gemini => gemini::EMITS_TERMINAL_SEQUENCE,
            HostKind::Codex => codex::EMITS_TERMINAL_SEQUENCE,
            HostKind::Qwen => qwen::EMITS_TERMINAL_SEQUENCE,
            HostKind::Droid => droid::EMITS_TERMINAL_SEQUENCE,
            HostKind::Copilot => copilot::EMITS_TERMINAL_SEQUENCE,
            HostKind::OpenCode | HostKind::Kilo => opencode::EMITS_TERMINAL_SEQUENCE,
        }
    }

    /// The scopes the host has a settings file for.
    pub fn scopes(self) -> &'static [Scope] {
        match self {
            HostKind::Claude => claude::SCOPES,
            HostKind::Gemini => gemini::SCOPES,
            HostKind::Codex => codex::SCOPES,
            HostKind::Qwen => qwen::SCOPES,
            HostKind::Droid => droid::SCOPES,
            HostKind::Copilot => copilot::SCOPES,
            HostKind::OpenCode | HostKind::Kilo => opencode::SCOPES,
        }
    }

    /// The windows this host's models use, smallest first: what tokens beyond an assumed
    /// window prove.
    pub fn windows(self) -> &'static [u64] {
        match self {
            HostKind::Claude => claude::WINDOWS,
            HostKind::Gemini => gemini::WINDOWS,
            HostKind::Codex => codex::WINDOWS,
            HostKind::Qwen => qwen::WINDOWS,
            HostKind::Droid => droid::WINDOWS,
            HostKind::Copilot => copilot::WINDOWS,
            HostKind::OpenCode | HostKind::Kilo => opencode::WINDOWS,
        }
    }
}

impl fmt::Display for HostKind {
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

/// The folders the hosts' homes and settings paths are built from, gathered once from
/// the environment. Every reader of a host's home (install, doctor, the hook) goes
/// through [`Places::home_of`], so they all agree on one place.
#[derive(Debug, Clone, Default)]
pub struct Places {
    pub home: Option<PathBuf>,
    /// `$CLAUDE_CONFIG_DIR`.
    pub claude_config_dir: Option<PathBuf>,
    /// `$CODEX_HOME`, as given (a relative one is relative to the current folder).
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

    /// The host's own folder for the user (`$CLAUDE_CONFIG_DIR` or `~/.claude`,
    /// `~/.gemini`, `$CODEX_HOME` or `~/.codex`).
    pub fn home_of(&self, host: HostKind) -> Option<PathBuf> {
        match host {
            HostKind::Claude => claude::home(self),
            HostKind::Gemini => gemini::home(self),
            HostKind::Codex => codex::home(self),
            HostKind::Qwen => qwen::home(self),
            HostKind::Droid => droid::home(self),
            HostKind::Copilot => copilot::home(self),
            HostKind::OpenCode => opencode::home(self),
            HostKind::Kilo => kilo::home(self),
        }
    }

    /// The host's own folder for the scope (`~/.claude`, `<project>/.gemini` …).
    pub fn host_dir(&self, host: HostKind, scope: Scope) -> Result<PathBuf, PlaceError> {
        match scope {
            Scope::User => self.home_of(host).ok_or(PlaceError::Home),
            Scope::Project | Scope::Local if host.scopes().contains(&scope) => {
                let project = self.project.clone().ok_or(PlaceError::Project)?;
                Ok(project.join(project_folder(host)))
            }
            _ => Err(PlaceError::Scope { host: host.name(), scope }),
        }
    }

    /// The folder whose existence says the host is set up for the scope (what
    /// `install --host all` looks for): its own folder, except Copilot CLI's project
    /// folder `.github`, which every GitHub repository has: there the user's Copilot home
    /// (`~/.copilot`) tells whether they use Copilot CLI at all.
    pub fn presence_dir(&self, host: HostKind, scope: Scope) -> Result<PathBuf, PlaceError> {
        match (host, scope) {
            (HostKind::Copilot, Scope::Project) => {
                self.host_dir(host, scope)?;
                self.host_dir(host, Scope::User)
            }
            _ => self.host_dir(host, scope),
        }
    }

    /// The settings file baton edits for the host and scope.
    pub fn settings_path(&self, host: HostKind, scope: Scope) -> Result<PathBuf, PlaceError> {
        let dir = self.host_dir(host, scope)?;
        let name = match host {
            HostKind::Claude => claude::settings_file(scope),
            HostKind::Gemini => gemini::settings_file(scope),
            HostKind::Codex => codex::settings_file(scope),
            HostKind::Qwen => qwen::settings_file(scope),
            HostKind::Droid => droid::settings_file(scope),
            HostKind::Copilot => copilot::settings_file(scope),
            HostKind::OpenCode => opencode::settings_file(scope),
            HostKind::Kilo => kilo::settings_file(scope),
        };
        Ok(dir.join(name))
    }
}

/// Why a host's folder or settings file has no place for the scope asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlaceError {
    #[error("HOME is not set")]
    Home,
    #[error("the current folder cannot be read")]
    Project,
    #[error("{host} has no {scope} scope (only Claude Code has settings.local.json); use --scope project")]
    Scope { host: &'static str, scope: Scope },
}

/// The host's folder inside a project (`.claude`, `.gemini`, `.codex`).
fn project_folder(host: HostKind) -> &'static str {
    match host {
        HostKind::Claude => claude::PROJECT_FOLDER,
        HostKind::Gemini => gemini::PROJECT_FOLDER,
        HostKind::Codex => codex::PROJECT_FOLDER,
        HostKind::Qwen => qwen::PROJECT_FOLDER,
        HostKind::Droid => droid::PROJECT_FOLDER,
        HostKind::Copilot => copilot::PROJECT_FOLDER,
        HostKind::OpenCode => opencode::PROJECT_FOLDER,
        HostKind::Kilo => kilo::PROJECT_FOLDER,
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
        assert_eq!(path(HostKind::Claude, Scope::User), PathBuf::from("/h/.claude/settings.json"));
        assert_eq!(path(HostKind::Claude, Scope::Project), PathBuf::from("/p/.claude/settings.json"));
        assert_eq!(path(HostKind::Claude, Scope::Local), PathBuf::from("/p/.claude/settings.local.json"));
        assert_eq!(path(HostKind::Gemini, Scope::User), PathBuf::from("/h/.gemini/settings.json"));
        assert_eq!(path(HostKind::Gemini, Scope::Project), PathBuf::from("/p/.gemini/settings.json"));
        assert_eq!(path(HostKind::Codex, Scope::User), PathBuf::from("/h/.codex/hooks.json"));
        assert_eq!(path(HostKind::Codex, Scope::Project), PathBuf::from("/p/.codex/hooks.json"));
        assert_eq!(path(HostKind::Qwen, Scope::User), PathBuf::from("/h/.qwen/settings.json"));
        assert_eq!(path(HostKind::Qwen, Scope::Project), PathBuf::from("/p/.qwen/settings.json"));
        assert!(
            p.settings_path(HostKind::Gemini, Scope::Local)
                .unwrap_err()
                .to_string()
                .contains("--scope project")
        );
    }

    #[test]
    fn config_dir_variables_win() {
        let p = Places { claude_config_dir: Some("/c".into()), codex_home: Some("/x".into()), ..places() };
        assert_eq!(
            p.settings_path(HostKind::Claude, Scope::User).unwrap(),
            PathBuf::from("/c/settings.json")
        );
        assert_eq!(p.settings_path(HostKind::Codex, Scope::User).unwrap(), PathBuf::from("/x/hooks.json"));
        // The project scopes do not move.
        assert_eq!(
            p.settings_path(HostKind::Claude, Scope::Project).unwrap(),
            PathBuf::from("/p/.claude/settings.json")
        );
        // A relative CODEX_HOME is kept as given: relative to the current folder.
        let relative = Places { codex_home: Some("rel/codex".into()), ..places() };
        assert_eq!(relative.home_of(HostKind::Codex), Some(PathBuf::from("rel/codex")));
    }

    #[test]
    fn ids_round_trip() {
        for host in HostKind::ALL {
            assert_eq!(HostKind::from_id(host.id()), Some(host));
            assert!(!host.events().is_empty());
            assert!(host.scopes().contains(&Scope::User));
        }
    }
}
