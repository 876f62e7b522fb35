//! The value that describes a host ([`Spec`]) and the types its parts and its
//! [`super::Host`] methods are made of.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{Places, Scope, StatuslineInput};
use crate::transcript::Format;

/// One host, as data: everything baton knows about it that is not behaviour.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// The name on the command line (`--host`), in baton's state and as its program.
    pub id: &'static str,
    /// The name people know it by.
    pub name: &'static str,
    /// What `--host` says of it.
    pub flag_help: &'static str,

    /// The events `baton hook` is registered for, their matchers and timeouts.
    pub events: &'static [EventSpec],
    /// The hook `timeout` baton asks for, in the host's unit.
    pub hook_timeout: u64,
    /// How baton registers with it.
    pub install: Install,
    /// The host's folder inside a project (`.claude`, `.gemini` …); the user's is
    /// [`super::Host::home`].
    pub project_folder: &'static str,
    /// Its project folder is one every repository may have (Copilot CLI's `.github`):
    /// whether the user uses the host is told by their own folder.
    pub project_folder_is_common: bool,
    /// The settings file (or plugin file) baton edits, in the host's folder of each scope.
    pub settings_file: &'static str,
    /// The project's private settings file, for a host that has one (Claude Code's
    /// `settings.local.json`): its `local` scope.
    pub local_settings_file: Option<&'static str>,
    /// Its statusline command, when it runs one.
    pub statusline: Option<Statusline>,
    /// It runs a command for each subagent's row of its agent panel (Claude Code's
    /// `subagentStatusLine`).
    pub subagent_statusline: bool,
    /// baton may be loaded as the host's own plugin, found in its settings'
    /// `enabledPlugins` (Claude Code).
    pub enabled_plugins: bool,
    /// A settings key that turns every hook off (Claude Code's `disableAllHooks`).
    pub disable_all_hooks: Option<&'static str>,
    /// The environment variables only this host sets for its hooks: they tell it apart
    /// where its events do not.
    pub env_marks: &'static [&'static str],

    /// The windows its models use, smallest first.
    pub windows: &'static [u64],
    /// Where its context figure comes from.
    pub figure_source: FigureSource,
    /// How the agent is told where a figure from the host's record came from.
    pub figure_words: &'static str,
    /// The bounded wait for a tool call's own reply to reach the host's record, for a
    /// host that records it after the hook may run.
    pub reply_wait: Option<ReplyWait>,
    /// Its own meter counts against another base than baton's, and how: said beside a
    /// warning (Claude Code's footer).
    pub own_meter: Option<&'static str>,
    /// The format of the transcript it names (`transcript_path`).
    pub transcript: Format,
    /// The host's sessions are not files baton reads: baton's plugin sends the session's
    /// messages when asked (OpenCode, Kilo CLI).
    pub sends_messages: bool,

    /// A hook's `continue: false` ends the agent's turn.
    pub honours_stop: bool,
    /// How the pause stops the agent.
    pub pause_stop: PauseStop,
    /// Its Stop takes context, which makes the agent take one more step (Claude Code's):
    /// the monitor answers it; elsewhere Stop only marks the turn's end.
    pub answers_stop: bool,
    /// It shows a hook's `systemMessage` to the user.
    pub shows_system_message: bool,
    /// It emits a hook's `terminalSequence` (a desktop notification, OSC 9).
    pub emits_terminal_sequence: bool,
    /// It reads the envelope's `additionalContext` at the top level too (Copilot CLI).
    pub context_at_top_level: bool,
    /// It drops SessionStart's context: the resume brief goes with the first prompt.
    pub brief_on_first_prompt: bool,
    /// When the brief after a compaction is given.
    pub compaction_brief: CompactionBrief,
    /// Its PreCompact may answer `decision: block`, which holds the compaction (Claude
    /// Code's: baton holds an automatic one once when its snapshot is missing).
    pub pre_compact_blocks: bool,

    /// Its headless command line, as `baton run` reads it.
    pub headless: Grammar,
    /// `baton run` relays its interactive command on a pty.
    pub interactive_relay: bool,
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

/// How baton registers with a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Install {
    /// Its hooks (and statusline) in the host's settings file.
    Settings,
    /// baton's plugin file in the host's plugin folder, which runs `baton hook` (OpenCode,
    /// Kilo CLI).
    Plugin,
}

/// A host's statusline command.
#[derive(Debug, Clone, Copy)]
pub struct Statusline {
    /// Where the statusline object sits in the settings (a JSON pointer).
    pub pointer: &'static str,
    /// The file of the user's folder it is in, when not the one holding baton's hooks
    /// (Copilot CLI's `settings.json`; a project's may not set one).
    pub file: Option<&'static str>,
    /// Its payload's reader.
    pub payload: Payload,
}

/// A statusline payload of the host's own shape, read into baton's one shape.
pub trait PayloadShape: DeserializeOwned {
    fn into_input(self) -> StatuslineInput;
}

impl PayloadShape for StatuslineInput {
    fn into_input(self) -> StatuslineInput {
        self
    }
}

/// The reader of a host's statusline payload: from bytes, or from stdin within a deadline.
#[derive(Debug, Clone, Copy)]
pub struct Payload {
    pub parse: fn(&[u8]) -> Option<StatuslineInput>,
    pub read: fn(Duration) -> Option<StatuslineInput>,
}

impl Payload {
    /// The reader of Claude Code's payload, which is baton's shape.
    pub const CLAUDE_SHAPED: Payload = Payload::of::<StatuslineInput>();

    /// The reader of payloads of shape `T`.
    pub const fn of<T: PayloadShape>() -> Payload {
        Payload { parse: parse::<T>, read: read::<T> }
    }
}

fn parse<T: PayloadShape>(bytes: &[u8]) -> Option<StatuslineInput> {
    serde_json::from_slice::<T>(bytes).ok().map(T::into_input)
}

fn read<T: PayloadShape>(deadline: Duration) -> Option<StatuslineInput> {
    crate::stdin::read_json::<T>(deadline).ok().map(T::into_input)
}

/// Where a host's context figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FigureSource {
    /// Its statusline: the payload carries the host's own figure and a window that is a
    /// fact; the bridge the statusline writes (with where the transcript ended) is read
    /// first, then the transcript's replies after it; a subagent's from its own
    /// transcript (Claude Code).
    Statusline,
    /// The host's own record of the session ([`super::Host::record`]), or a fresh bridge
    /// when that is newer.
    Record,
}

/// The bounded wait for a tool call's own reply to reach the host's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplyWait {
    /// The longest wait.
    pub max: Duration,
    /// How often the record is looked at.
    pub step: Duration,
}

impl ReplyWait {
    /// No wait at all.
    pub const NONE: ReplyWait = ReplyWait { max: Duration::ZERO, step: Duration::ZERO };
}

/// Where and how the pause stops the agent once its grace calls are used, as the host's
/// own code allows.
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

/// When the resume brief after a compaction is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionBrief {
    /// At the SessionStart (`source: compact`) that follows the compaction.
    AtSessionStart,
    /// After the audit: PostCompact carries the summary, which is compared with the
    /// snapshot; SessionStart(compact)'s brief waits for the next context point, where
    /// the audit's note replaces it; an automatic compaction whose snapshot is missing is
    /// held once (Claude Code).
    AfterTheAudit,
    /// With the turn it fired in: PostCompact names the turn (no summary), and the brief
    /// rides that turn's next PostToolUse; SessionStart(compact)'s context goes with the
    /// turn's very next request, so it is not given again (Codex).
    WithTheTurn,
}

/// Where a host compacts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compaction {
    /// Some tokens short of the window, by Claude Code's formula (`metrics::headroom`),
    /// with what the host's environment and settings files set.
    Formula(CompactionSettings),
    /// At this many tokens.
    At(u64, CompactionEnd),
    /// Not known.
    Unknown,
}

/// What happens at a host's compaction point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionEnd {
    /// The host compacts the context.
    AutoCompaction,
    /// The host compresses the conversation (Gemini CLI, Qwen Code).
    Compression,
}

/// What a host's environment and settings files set about the compaction formula.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompactionSettings {
    /// The window the environment sets (Claude Code's `CLAUDE_CODE_AUTO_COMPACT_WINDOW`).
    pub env_window: Option<u64>,
    /// The window a settings file sets (`autoCompactWindow`).
    pub settings_window: Option<u64>,
    /// Automatic compaction is off.
    pub disabled: bool,
}

/// How a host's headless command line reads (from each pinned CLI's `--help`).
#[derive(Debug, Clone, Copy)]
pub struct Grammar {
    /// The first word that makes the command headless (`codex exec`, `droid exec`,
    /// `opencode run`), when the host has one.
    pub subcommands: &'static [&'static str],
    /// Switches that make the command headless (Claude's `-p`).
    pub switches: &'static [&'static str],
    /// Options whose value is the prompt (Gemini's, Qwen's and Copilot's `-p`).
    pub prompt_options: &'static [&'static str],
    /// A positional prompt also makes the command headless (Qwen's one-shot query),
    /// unless one of these options is given (`-i`: interactive after the prompt).
    pub positional_headless_unless: Option<&'static [&'static str]>,
    /// Every positional word is the prompt (yargs' `[message..]`), not only the last.
    pub positional_joined: bool,
    /// Options that take one value.
    pub values: &'static [&'static str],
    /// Options that take every following word up to the next option (yargs' arrays).
    pub arrays: &'static [&'static str],
}

impl Grammar {
    /// The headless form as messages name it (`codex exec …`, `gemini -p …`).
    pub fn form(&self, program: &str) -> String {
        let word = self.subcommands.first().or(self.switches.first()).or(self.prompt_options.first());
        match word {
            Some(word) => format!("`{program} {word} …`"),
            None => format!("`{program} …`"),
        }
    }
}

/// What a host's own record of a session asks ([`super::Host::record`]).
#[derive(Debug, Clone, Copy)]
pub struct RecordQuery<'a> {
    pub session_id: &'a str,
    /// The transcript the event named.
    pub transcript: Option<&'a Path>,
    /// The model the event named.
    pub model: Option<&'a str>,
    /// The figure the event itself reports (baton's plugin).
    pub reported: Option<&'a super::PluginReport>,
    /// Where the last read of the context's record stopped: the read starts there, and
    /// leaves its own mark in it.
    pub mark: Option<&'a crate::transcript::MarkSlot>,
}

/// What a host's own record says of a session's context.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The newest reply's prompt tokens.
    pub tokens: u64,
    /// The model it is about, when known.
    pub model: Option<String>,
    /// The window the record or the host's settings give, a fact.
    pub window: Option<u64>,
    /// When it was written (Unix seconds).
    pub written_at: Option<i64>,
    /// It holds the newest model call (Copilot CLI records a call's usage after its
    /// PostToolUse may run: `false` when the newest call is not in yet).
    pub current: bool,
}

/// What `baton install` wrote for a host, as its notes need it.
pub struct InstallFacts<'a> {
    pub places: &'a Places,
    pub scope: Scope,
    /// The files written for the host.
    pub files: &'a [PathBuf],
    /// Whether a hook command is baton's.
    pub is_baton_hook: &'a dyn Fn(&str) -> bool,
}

/// One of a host's settings files that parses, as doctor read it.
pub struct SettingsSeen<'a> {
    pub scope: Scope,
    pub path: &'a Path,
    /// The path as shown to the user.
    pub shown: &'a str,
    pub settings: &'a Value,
    /// It registers baton (a hook, the statusline, the plugin).
    pub registers_baton: bool,
}

/// What a host's trust rules look at ([`super::Host::trust_findings`]).
pub struct TrustFacts<'a> {
    pub places: &'a Places,
    /// The host's settings files that parse.
    pub files: &'a [SettingsSeen<'a>],
    /// Whether a hook command is baton's.
    pub is_baton_hook: &'a dyn Fn(&str) -> bool,
}

/// A line of doctor's report about a host's own approval step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustFinding {
    /// A warning (else all is well).
    pub warn: bool,
    pub check: String,
    pub message: String,
    pub fix: Option<String>,
}

impl TrustFinding {
    pub fn ok(check: &str, message: impl Into<String>) -> TrustFinding {
        TrustFinding { warn: false, check: check.to_string(), message: message.into(), fix: None }
    }

    pub fn warn(check: &str, message: impl Into<String>, fix: impl Into<String>) -> TrustFinding {
        TrustFinding { warn: true, check: check.to_string(), message: message.into(), fix: Some(fix.into()) }
    }
}
