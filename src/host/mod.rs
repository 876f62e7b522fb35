//! The hosts: what Claude Code, Gemini CLI, Codex and the others send on stdin, the one
//! envelope they accept back, and [`HostKind`], the one list of them.
//!
//! Each host is one file ([`claude`], [`codex`], [`gemini`] …) holding one value that
//! describes it ([`Spec`]: its id and name, its events and their timeouts, its scopes and
//! settings paths, its windows, how the pause stops it, its statusline, its headless
//! command grammar for the relay, its wording) and implementing [`Host`] for what is
//! more than data (how its events are told apart, its homes, where its figure comes
//! from, its compaction point, whether a prompt starts a turn, its trust rules). The rest
//! of baton asks the host ([`HostKind::spec`], [`HostKind::host`]) and never matches on
//! it: a new host is one file, one variant and its row in [`HostKind::host`]
//! (`test_host.rs`, compiled for the tests only, is one).
//!
//! Input is read leniently: every field may be missing, `null` or of the wrong type in
//! some host version, and each of those means "not given" rather than a failed parse.
//! Fields baton never looks at (a tool's whole output, say) are skipped, not kept.
//!
//! This is an edge: it returns facts, and learns or stores nothing.

mod claude;
mod codex;
pub mod codex_trust;
mod copilot;
mod droid;
mod envelope;
mod gemini;
mod input;
mod kilo;
mod lenient;
mod opencode;
mod qwen;
mod spec;
#[cfg(test)]
mod test_host;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use codex::USABLE_PCT as CODEX_USABLE_PCT;
pub use codex::project_doc_max_bytes as codex_project_doc_max_bytes;
pub use envelope::Envelope;
pub use input::{
    Event, HookInput, PluginReport, RateWindow, StatuslineInput, SubagentRowsInput, SubagentTask,
};
pub use opencode::{is_baton_plugin, plugin_binary, plugin_text};
pub use spec::{
    Compaction, CompactionBrief, CompactionEnd, CompactionSettings, EventSpec, FigureSource, Grammar,
    Install, InstallFacts, PauseStop, Payload, RecordQuery, Recorded, ReplyWait, SettingsSeen, Spec,
    TrustFacts, TrustFinding,
};

/// A host that runs hooks: the one list of them. Each variant's file is named in
/// [`HostKind::host`].
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
    /// A host defined in a test only (`test_host.rs`): proof that a new host needs
    /// nothing outside this folder.
    #[cfg(test)]
    Test,
}

/// What baton knows about a host beyond the data of its [`Spec`]: each host's file
/// implements it, for the behaviour that is its own; the defaults are what most hosts do.
pub trait Host: Sync {
    /// The value describing the host.
    fn spec(&self) -> &'static Spec;

    /// How sure the event's own signs make this host that it sent it: 0 when they say
    /// nothing. The surest claim wins ([`HostKind::detect`]).
    fn detect(&self, _input: &HookInput, _gemini_key_set: bool) -> u8 {
        0
    }

    /// The host's own folder for the user (`~/.claude`, `$CODEX_HOME` …).
    fn home(&self, places: &Places) -> Option<PathBuf> {
        places.home.as_ref().map(|h| h.join(self.spec().project_folder))
    }

    /// The host's own record of a session's context ([`FigureSource::Record`]): its
    /// transcript's newest figure, the window its settings or record give.
    fn record(&self, _query: &RecordQuery) -> Option<Recorded> {
        None
    }

    /// Where the host compacts a context of `window` tokens (the project's settings and
    /// the model's, `model_key` as Claude Code names models, where it reads them).
    fn compaction(
        &self,
        _window: Option<u64>,
        _project: Option<&Path>,
        _model_key: Option<&str>,
    ) -> Compaction {
        Compaction::Unknown
    }

    /// Whether a PreCompact (Gemini CLI's PreCompress) is a compaction: `used_tokens` of a
    /// `window`, `trigger` as the host sent it. Most hosts fire it only when they compact.
    fn is_real_compaction(
        &self,
        _trigger: Option<&str>,
        _used_tokens: Option<u64>,
        _window: Option<u64>,
        _project: Option<&Path>,
    ) -> bool {
        true
    }

    /// Whether a turn's start (UserPromptSubmit) is a new turn, a prompt the user typed.
    fn starts_turn(&self, _input: &HookInput) -> bool {
        true
    }

    /// The window the host gives `model` by its own table, when it has one.
    fn model_window(&self, _model: &str) -> Option<u64> {
        None
    }

    /// The host holds every model to its smaller window (Claude Code's switch for 1M).
    fn one_m_disabled(&self) -> bool {
        false
    }

    /// The transcript the handoff's facts are read from when the event names none.
    fn transcript_when_unnamed(&self, _session_id: &str) -> Option<PathBuf> {
        None
    }

    /// The folder holding the host's transcripts, by project, which `baton status`,
    /// `report` and `pause` search.
    fn transcripts_dir(&self) -> Option<PathBuf> {
        None
    }

    /// The transcript of session `id` (the newest when several projects hold one).
    fn transcript_of(&self, _id: &str) -> Option<PathBuf> {
        None
    }

    /// The newest transcript of the project at `root` (or `cwd`).
    fn newest_transcript(&self, _root: &Path, _cwd: &Path) -> Option<PathBuf> {
        None
    }

    /// The name of a project's folder of transcripts inside [`Host::transcripts_dir`].
    fn transcripts_folder_name(&self, _project: &Path) -> Option<String> {
        None
    }

    /// What `baton install` tells the user of the host's own approval step, once it wrote
    /// baton's hooks into `facts.files`.
    fn install_notes(&self, _facts: &InstallFacts) -> Vec<String> {
        Vec::new()
    }

    /// What `baton doctor` says of the host's own approval step (its trust rules).
    fn trust_findings(&self, _facts: &TrustFacts) -> Vec<TrustFinding> {
        Vec::new()
    }
}

impl HostKind {
    /// Every host, in the order baton lists them.
    pub const ALL: &'static [HostKind] = &[
        HostKind::Claude,
        HostKind::Gemini,
        HostKind::Codex,
        HostKind::Qwen,
        HostKind::Droid,
        HostKind::Copilot,
        HostKind::OpenCode,
        HostKind::Kilo,
        #[cfg(test)]
        HostKind::Test,
    ];

    /// The host baton assumes when nothing names one: Claude Code, whose hook contract
    /// the others copy. An event no host claims is its, `--host` defaults to it, and
    /// `baton status`, `report` and `pause` find its sessions by themselves.
    pub const DEFAULT: HostKind = HostKind::Claude;

    /// The host's file: the one place a variant is tied to its implementation. Never
    /// inlined: each copy would carry its own table of the hosts' functions, for the loader
    /// to relocate at every start.
    #[inline(never)]
    pub fn host(self) -> &'static dyn Host {
        match self {
            HostKind::Claude => &claude::ClaudeCode,
            HostKind::Gemini => &gemini::GeminiCli,
            HostKind::Codex => &codex::Codex,
            HostKind::Qwen => &qwen::QwenCode,
            HostKind::Droid => &droid::FactoryDroid,
            HostKind::Copilot => &copilot::CopilotCli,
            HostKind::OpenCode => &opencode::OpenCode,
            HostKind::Kilo => &kilo::KiloCli,
            #[cfg(test)]
            HostKind::Test => &test_host::TestHost,
        }
    }

    /// The value describing the host.
    pub fn spec(self) -> &'static Spec {
        self.host().spec()
    }

    /// Which host sent a hook event. Each host says how sure its own signs make it
    /// ([`Host::detect`]); the surest wins, [`HostKind::DEFAULT`] when none claims it.
    pub fn detect(input: &HookInput, gemini_key_set: bool) -> HostKind {
        let mut best = (HostKind::DEFAULT, 0);
        for host in HostKind::ALL.iter().copied() {
            let strength = host.host().detect(input, gemini_key_set);
            if strength > 0 && strength >= best.1 {
                best = (host, strength);
            }
        }
        best.0
    }

    /// The host the hook's environment names, where only that tells it apart (Qwen Code
    /// sends Claude Code's event names, and `CLAUDE_PROJECT_DIR` as well).
    pub fn from_env(var: &dyn Fn(&str) -> bool) -> Option<HostKind> {
        HostKind::ALL.iter().copied().find(|host| host.spec().env_marks.iter().any(|name| var(name)))
    }

    /// The name people know it by.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The name on the command line (`--host`) and in baton's state.
    pub fn id(self) -> &'static str {
        self.spec().id
    }

    pub fn from_id(id: &str) -> Option<HostKind> {
        HostKind::ALL.iter().copied().find(|h| h.id() == id)
    }

    /// The format of the transcript this host names in `transcript_path`, which the
    /// handoff's facts are read from.
    pub fn transcript_format(self) -> crate::transcript::Format {
        self.spec().transcript
    }

    /// The transcript the handoff's facts are read from: the one the hook names, else
    /// the one the host keeps for the session where it names none ([`Host::transcript_when_unnamed`]).
    pub fn transcript_path(self, named: Option<&str>, session_id: &str) -> Option<PathBuf> {
        match named {
            Some(path) => Some(PathBuf::from(path)),
            None => self.host().transcript_when_unnamed(session_id),
        }
    }

    /// The events `baton hook` is registered for.
    pub fn events(self) -> &'static [EventSpec] {
        self.spec().events
    }

    /// The hook `timeout` baton asks for, in the host's unit (Gemini: milliseconds,
    /// the others: seconds). Ten seconds: far above the hook's own 2 s stdin deadline,
    /// far below the hosts' defaults (Claude Code: 600 s).
    pub fn timeout(self) -> u64 {
        self.spec().hook_timeout
    }

    /// The hook `timeout` baton asks for on one of its events.
    pub fn timeout_for(self, spec: &EventSpec) -> u64 {
        spec.timeout.unwrap_or_else(|| self.timeout())
    }

    /// The host's sessions are not files baton reads: baton's plugin sends the session's
    /// messages when baton asks for them (OpenCode, Kilo CLI: `HandoffFacts`).
    pub fn sends_messages(self) -> bool {
        self.spec().sends_messages
    }

    /// The host drops SessionStart's context: the resume brief goes with the session's
    /// first prompt (UserPromptSubmit) instead.
    pub fn brief_on_first_prompt(self) -> bool {
        self.spec().brief_on_first_prompt
    }

    /// The host runs a command for each subagent's row (Claude Code's
    /// `subagentStatusLine`).
    pub fn has_subagent_statusline(self) -> bool {
        self.spec().subagent_statusline
    }

    /// The host runs a command status line (Claude Code, Qwen Code, Factory Droid, GitHub
    /// Copilot CLI).
    pub fn has_statusline(self) -> bool {
        self.spec().statusline.is_some()
    }

    /// Where the statusline object sits in the host's settings (a JSON pointer): Qwen
    /// Code's under `ui`, the others' at the top.
    pub fn statusline_pointer(self) -> &'static str {
        self.spec().statusline.map_or("/statusLine", |s| s.pointer)
    }

    /// The host's statusline payload, read into baton's one shape by the host's own reader
    /// (Claude Code's is that shape). `None` when it is not a JSON object.
    pub fn statusline_input(self, bytes: &[u8]) -> Option<StatuslineInput> {
        (self.payload().parse)(bytes)
    }

    /// The host's statusline payload from stdin, read within `deadline` by its own reader
    /// (fields baton does not use are skipped as they stream by, whatever their size).
    pub fn read_statusline(self, deadline: Duration) -> Option<StatuslineInput> {
        (self.payload().read)(deadline)
    }

    fn payload(self) -> Payload {
        self.spec().statusline.map_or(Payload::CLAUDE_SHAPED, |s| s.payload)
    }

    /// Where the host's figure comes from ([`FigureSource`]).
    pub fn figure_source(self) -> FigureSource {
        self.spec().figure_source
    }

    /// A hook's `continue: false` ends the agent's turn on this host (the pause's stop).
    pub fn honours_stop(self) -> bool {
        self.spec().honours_stop
    }

    /// How the pause stops the agent on this host ([`PauseStop`]).
    pub fn pause_stop(self) -> PauseStop {
        self.spec().pause_stop
    }

    /// The host shows a hook's `systemMessage` to the user (one line in its pane).
    pub fn shows_system_message(self) -> bool {
        self.spec().shows_system_message
    }

    /// The host emits a hook's `terminalSequence` (a desktop notification, OSC 9).
    pub fn emits_terminal_sequence(self) -> bool {
        self.spec().emits_terminal_sequence
    }

    /// The scopes the host has a settings file for.
    pub fn scopes(self) -> &'static [Scope] {
        match self.spec().local_settings_file {
            Some(_) => &[Scope::User, Scope::Project, Scope::Local],
            None => &[Scope::User, Scope::Project],
        }
    }

    /// The windows this host's models use, smallest first: what tokens beyond an assumed
    /// window prove.
    pub fn windows(self) -> &'static [u64] {
        self.spec().windows
    }

    /// How baton registers with the host: hooks in a settings file, or a plugin file.
    pub fn install(self) -> Install {
        self.spec().install
    }
}

impl fmt::Display for HostKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What `--host` names: one host, or every host (`all`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostChoice {
    One(HostKind),
    All,
}

impl HostChoice {
    /// The word `--host` takes for every host.
    pub const ALL_ID: &'static str = "all";

    /// The choice a `--host` word names.
    pub fn from_id(id: &str) -> Option<HostChoice> {
        if id == HostChoice::ALL_ID {
            Some(HostChoice::All)
        } else {
            HostKind::from_id(id).map(HostChoice::One)
        }
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

    /// The home folder alone, as the environment has it now.
    pub fn home_only() -> Places {
        Places { home: crate::places::home_dir(), ..Places::default() }
    }

    /// The host's own folder for the user (`$CLAUDE_CONFIG_DIR` or `~/.claude`,
    /// `~/.gemini`, `$CODEX_HOME` or `~/.codex` …).
    pub fn home_of(&self, host: HostKind) -> Option<PathBuf> {
        host.host().home(self)
    }

    /// The host's own folder for the scope (`~/.claude`, `<project>/.gemini` …).
    pub fn host_dir(&self, host: HostKind, scope: Scope) -> Result<PathBuf, PlaceError> {
        match scope {
            Scope::User => self.home_of(host).ok_or(PlaceError::Home),
            Scope::Project | Scope::Local if host.scopes().contains(&scope) => {
                let project = self.project.clone().ok_or(PlaceError::Project)?;
                Ok(project.join(host.spec().project_folder))
            }
            _ => Err(PlaceError::Scope { host: host.name(), scope }),
        }
    }

    /// The folder whose existence says the host is set up for the scope (what
    /// `install --host all` looks for): its own folder, except a project folder every
    /// repository may have (Copilot CLI's `.github`): there the user's own folder tells
    /// whether they use the host at all.
    pub fn presence_dir(&self, host: HostKind, scope: Scope) -> Result<PathBuf, PlaceError> {
        if scope == Scope::Project && host.spec().project_folder_is_common {
            self.host_dir(host, scope)?;
            return self.host_dir(host, Scope::User);
        }
        self.host_dir(host, scope)
    }

    /// The settings file baton edits for the host and scope.
    pub fn settings_path(&self, host: HostKind, scope: Scope) -> Result<PathBuf, PlaceError> {
        let dir = self.host_dir(host, scope)?;
        let spec = host.spec();
        let name = match (scope, spec.local_settings_file) {
            (Scope::Local, Some(local)) => local,
            _ => spec.settings_file,
        };
        Ok(dir.join(name))
    }

    /// The file holding the host's statusline when it is not the settings file baton's
    /// hooks are in (GitHub Copilot CLI's user `settings.json`): only in the user's scope.
    pub fn statusline_file(&self, host: HostKind, scope: Scope) -> Option<PathBuf> {
        let file = host.spec().statusline?.file?;
        (scope == Scope::User).then(|| self.home_of(host).map(|home| home.join(file)))?
    }
}

/// `path` with the home shown as `~` (`~/…`, `~\…` on Windows), for messages.
pub fn show_path(path: &Path, home: Option<&Path>) -> String {
    use crate::util::text::outside_path;
    match home.and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) if !rest.as_os_str().is_empty() => {
            format!("~{}{}", std::path::MAIN_SEPARATOR, outside_path(rest))
        }
        _ => outside_path(path).to_string(),
    }
}

/// Why a host's folder or settings file has no place for the scope asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlaceError {
    #[error("{} is not set", crate::places::HOME_VARIABLE)]
    Home,
    #[error("the current folder cannot be read")]
    Project,
    #[error("{host} has no {scope} scope (only Claude Code has settings.local.json); use --scope project")]
    Scope { host: &'static str, scope: Scope },
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
        for host in HostKind::ALL.iter().copied() {
            assert_eq!(HostKind::from_id(host.id()), Some(host));
            assert!(!host.events().is_empty());
            assert!(host.scopes().contains(&Scope::User));
        }
        assert_eq!(HostChoice::from_id("all"), Some(HostChoice::All));
        assert_eq!(HostChoice::from_id("nothing"), None);
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
