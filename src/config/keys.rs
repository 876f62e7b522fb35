//! The declaration of every configuration key, once: its dotted name, its Rust type and
//! default, its environment variable, which values it accepts, who may set it (trust) and
//! what it means.
//!
//! [`declare_keys!`] turns that one table into [`KEYS`] (what resolution, `baton config`,
//! the README check and the fuzz test walk) and into the typed [`Settings`] with its
//! `Default`, so no default is written twice.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use crate::gitx::Mode;

/// What a key holds and which values are valid.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A percentage strictly between 0 and 100.
    Percent,
    /// A whole number in a range.
    Integer {
        min: u64,
        max: u64,
    },
    Bool,
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
    /// A folder relative to the project root that stays inside it.
    Folder,
    /// A list of words from a fixed set, in order (a JSON array, or comma-separated text
    /// in the environment). Unknown words are reported and skipped, not fatal; a list
    /// with no known word at all is a bad value.
    Words(&'static [&'static str]),
}

/// Who may set a key's value (TRUST.md): a repository file (`.claude/baton.json`,
/// `.planning/config.json`) is written by whoever can push, or by the author of a
/// repository the user cloned, so it may make baton quieter or stricter, never looser.
#[derive(Debug, Clone, Copy)]
pub enum Trust {
    /// Every layer may set every value.
    Anyone,
    /// A value for which the test holds loosens safety: it is honoured only from the
    /// user's config file and the environment; from a repository file it is ignored and
    /// reported, with where to set it instead.
    UserOnlyWhen(fn(&Value) -> bool),
}

impl Trust {
    /// Whether `value` of this key may come from a repository file.
    pub fn allows_repository(self, value: &Value) -> bool {
        match self {
            Trust::Anyone => true,
            Trust::UserOnlyWhen(loosens) => !loosens(value),
        }
    }
}

fn is_true(value: &Value) -> bool {
    value.as_bool() == Some(true)
}

fn commits_on_the_branch(value: &Value) -> bool {
    value.as_str() == Some("branch")
}

/// The folders a repository file may send the handoff to: `.planning` and folders
/// under it (GSD's), or `.baton`. Anything else (the project's sources, `.git`, a host's
/// config folder) loosens safety.
pub const REPOSITORY_HANDOFF_DIRS: &[&str] = &[".planning", ".baton"];

pub(super) fn leaves_planning_folders(value: &Value) -> bool {
    let Some(text) = value.as_str() else { return true };
    let path = Path::new(text.trim());
    let mut parts = path.components().filter(|c| !matches!(c, Component::CurDir));
    let first_allowed = parts
        .next()
        .and_then(|c| c.as_os_str().to_str())
        .is_some_and(|first| REPOSITORY_HANDOFF_DIRS.contains(&first));
    let names_git = path.components().any(|c| c.as_os_str().to_string_lossy().eq_ignore_ascii_case(".git"));
    !first_allowed || names_git
}

/// The checkpoint modes a handoff can use.
pub const CHECKPOINT_MODES: &[&str] = &["ref", "branch", "off"];

/// Every segment name `statusline.segments` accepts (the statusline's registry is
/// checked against this list by a test there).
pub const SEGMENT_NAMES: &[&str] = &[
    "model",
    "project",
    "branch",
    "git",
    "task",
    "handoff",
    "meter",
    "cost",
    "headroom",
    "rate_limits",
    "cache",
    "compactions",
];

/// The segments shown when the configuration does not say.
pub const DEFAULT_SEGMENTS: &[&str] =
    &["model", "project", "branch", "git", "task", "handoff", "meter", "headroom", "cost", "rate_limits"];

/// One configuration key.
#[derive(Debug, Clone, Copy)]
pub struct KeySpec {
    /// Dotted name: `handoff.auto` is `{"handoff": {"auto": …}}` in a file.
    pub key: &'static str,
    pub env: Option<&'static str>,
    pub kind: Kind,
    /// The built-in default as JSON (from the typed default in the declaration).
    pub default: fn() -> Value,
    /// Which layers may set which values.
    pub trust: Trust,
    pub about: &'static str,
}

/// A Rust type a key's value is read into, and how it is written as JSON.
pub trait KeyValue: Sized {
    /// The typed value of a JSON value that [`Kind`] validation accepted.
    fn from_json(value: &Value) -> Option<Self>;
    fn to_json(&self) -> Value;
}

impl KeyValue for f64 {
    fn from_json(value: &Value) -> Option<Self> {
        value.as_f64()
    }
    fn to_json(&self) -> Value {
        Value::from(*self)
    }
}

impl KeyValue for u64 {
    fn from_json(value: &Value) -> Option<Self> {
        value.as_u64()
    }
    fn to_json(&self) -> Value {
        Value::from(*self)
    }
}

impl KeyValue for bool {
    fn from_json(value: &Value) -> Option<Self> {
        value.as_bool()
    }
    fn to_json(&self) -> Value {
        Value::from(*self)
    }
}

impl KeyValue for PathBuf {
    fn from_json(value: &Value) -> Option<Self> {
        value.as_str().map(PathBuf::from)
    }
    fn to_json(&self) -> Value {
        Value::from(self.to_string_lossy().into_owned())
    }
}

impl KeyValue for Vec<String> {
    fn from_json(value: &Value) -> Option<Self> {
        value.as_array().map(|items| items.iter().filter_map(Value::as_str).map(str::to_string).collect())
    }
    fn to_json(&self) -> Value {
        Value::from(self.clone())
    }
}

impl KeyValue for Mode {
    fn from_json(value: &Value) -> Option<Self> {
        value.as_str().and_then(Mode::parse)
    }
    fn to_json(&self) -> Value {
        Value::from(self.word())
    }
}

/// What baton does after the CRITICAL handoff (`handoff.on_critical`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnCritical {
    /// Tell the agent, nothing more (the behaviour before the pause).
    Advise,
    /// Tell the agent to end its turn, and stop it through the host after the grace calls.
    Pause,
    /// As `Pause`, then carry the work into a fresh context (under `baton run`).
    Relay,
}

/// The words `handoff.on_critical` accepts.
pub const ON_CRITICAL_MODES: &[&str] = &["advise", "pause", "relay"];

impl OnCritical {
    pub fn parse(word: &str) -> Option<OnCritical> {
        match word {
            "advise" => Some(OnCritical::Advise),
            "pause" => Some(OnCritical::Pause),
            "relay" => Some(OnCritical::Relay),
            _ => None,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            OnCritical::Advise => "advise",
            OnCritical::Pause => "pause",
            OnCritical::Relay => "relay",
        }
    }
}

impl KeyValue for OnCritical {
    fn from_json(value: &Value) -> Option<Self> {
        value.as_str().and_then(OnCritical::parse)
    }
    fn to_json(&self) -> Value {
        Value::from(self.word())
    }
}

/// The relay types into the user's terminal: only the user may turn it on (TRUST.md).
/// `advise` and `pause` are quieter or stricter, so a repository may choose them.
fn turns_on_the_relay(value: &Value) -> bool {
    value.as_str() == Some("relay")
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|w| w.to_string()).collect()
}

/// Declares the keys: for each, `field: Type = default` (the typed default), then its
/// dotted key, environment variable, kind, trust and meaning.
macro_rules! declare_keys {
    ($(
        $field:ident : $ty:ty = $default:expr,
            key $key:literal, env $env:expr, kind $kind:expr, trust $trust:expr,
            about $about:literal;
    )*) => {
        /// Every key baton reads, in the order `baton config` lists them.
        pub const KEYS: &[KeySpec] = &[$(
            KeySpec {
                key: $key,
                env: $env,
                kind: $kind,
                default: || <$ty as KeyValue>::to_json(&$default),
                trust: $trust,
                about: $about,
            },
        )*];

        /// The effective value of every key, typed.
        #[derive(Debug, Clone, PartialEq)]
        pub struct Settings {$(
            #[doc = $about]
            pub $field: $ty,
        )*}

        impl Default for Settings {
            fn default() -> Self {
                Settings { $($field: $default,)* }
            }
        }

        impl Settings {
            /// The typed view of resolved values by dotted key (a key missing or of
            /// another type keeps its default).
            pub fn from_values(value: impl Fn(&str) -> Option<Value>) -> Settings {
                let defaults = Settings::default();
                Settings {$(
                    $field: value($key)
                        .and_then(|v| <$ty as KeyValue>::from_json(&v))
                        .unwrap_or(defaults.$field),
                )*}
            }
        }
    };
}

declare_keys! {
    warn_remaining: f64 = 35.0,
        key "warn_remaining", env Some("BATON_WARN_REMAINING"), kind Kind::Percent, trust Trust::Anyone,
        about "WARNING when remaining context is at or below this %";
    critical_remaining: f64 = 25.0,
        key "critical_remaining", env Some("BATON_CRITICAL_REMAINING"), kind Kind::Percent,
        trust Trust::Anyone,
        about "CRITICAL when remaining context is at or below this %";
    warn_headroom_tokens: u64 = 0,
        key "warn_headroom_tokens", env Some("BATON_WARN_HEADROOM_TOKENS"),
        kind Kind::Integer { min: 0, max: 100_000_000 }, trust Trust::Anyone,
        about "WARNING when this many tokens or fewer are left before auto-compaction (0: use %)";
    critical_headroom_tokens: u64 = 0,
        key "critical_headroom_tokens", env Some("BATON_CRITICAL_HEADROOM_TOKENS"),
        kind Kind::Integer { min: 0, max: 100_000_000 }, trust Trust::Anyone,
        about "CRITICAL when this many tokens or fewer are left before auto-compaction";
    default_window_tokens: u64 = 200_000,
        key "default_window_tokens", env Some("BATON_DEFAULT_WINDOW_TOKENS"),
        kind Kind::Integer { min: 1000, max: 100_000_000 }, trust Trust::Anyone,
        about "context window assumed when neither the statusline nor the model id tells";
    compact_buffer_tokens: u64 = 33_000,
        key "compact_buffer_tokens", env Some("BATON_COMPACT_BUFFER_TOKENS"),
        kind Kind::Integer { min: 0, max: 100_000_000 }, trust Trust::Anyone,
        about "auto-compaction fires this many tokens short of the window (until one is observed)";
    auto_compact_window: u64 = 0,
        key "auto_compact_window", env Some("CLAUDE_CODE_AUTO_COMPACT_WINDOW"),
        kind Kind::Integer { min: 0, max: 100_000_000 }, trust Trust::Anyone,
        about "Claude Code's window for auto-compaction, when set (0: the model's window)";
    auto_compact_pct: u64 = 0,
        key "auto_compact_pct", env Some("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"),
        kind Kind::Integer { min: 0, max: 100 }, trust Trust::Anyone,
        about "Claude Code compacts at this % of the window when lower (0: not set)";
    auto_compact_disabled: bool = false,
        key "auto_compact_disabled", env Some("DISABLE_AUTO_COMPACT"), kind Kind::Bool,
        trust Trust::Anyone,
        about "Claude Code's auto-compaction is off: headroom runs to the window's end";
    debounce_calls: u64 = 5,
        key "debounce_calls", env Some("BATON_DEBOUNCE_CALLS"), kind Kind::Integer { min: 1, max: 1000 },
        trust Trust::Anyone,
        about "tool calls between repeated warnings of the same level";
    stale_seconds: u64 = 60,
        key "stale_seconds", env Some("BATON_STALE_SECONDS"), kind Kind::Integer { min: 1, max: 86_400 },
        trust Trust::Anyone,
        about "a context figure older than this is ignored";
    disable: bool = false,
        key "disable", env Some("BATON_DISABLE"), kind Kind::Bool, trust Trust::Anyone,
        about "turn every hook off (the statusline still renders)";
    context_warnings: bool = true,
        key "context_warnings", env None, kind Kind::Bool, trust Trust::Anyone,
        about "inject context warnings (GSD: .planning/config.json hooks.context_warnings)";
    handoff_auto: bool = true,
        key "handoff.auto", env Some("BATON_HANDOFF_AUTO"), kind Kind::Bool, trust Trust::Anyone,
        about "write the handoff automatically when a CRITICAL warning fires";
    handoff_auto_checkpoint: Mode = Mode::Ref,
        key "handoff.auto_checkpoint", env Some("BATON_HANDOFF_AUTO_CHECKPOINT"),
        kind Kind::Choice(CHECKPOINT_MODES), trust Trust::UserOnlyWhen(commits_on_the_branch),
        about "checkpoint of the automatic handoff: ref (private ref), branch (wip commit), off";
    handoff_pause_checkpoint: Mode = Mode::Branch,
        key "handoff.pause_checkpoint", env Some("BATON_HANDOFF_PAUSE_CHECKPOINT"),
        kind Kind::Choice(CHECKPOINT_MODES), trust Trust::Anyone,
        about "checkpoint of `baton pause`: branch (GSD's wip commit), ref, off";
    handoff_dir: PathBuf = PathBuf::from(".planning"),
        key "handoff.dir", env Some("BATON_HANDOFF_DIR"), kind Kind::Folder,
        trust Trust::UserOnlyWhen(leaves_planning_folders),
        about "folder of HANDOFF.json and its archive, relative to the project root";
    handoff_on_critical: OnCritical = OnCritical::Pause,
        key "handoff.on_critical", env Some("BATON_HANDOFF_ON_CRITICAL"),
        kind Kind::Choice(ON_CRITICAL_MODES), trust Trust::UserOnlyWhen(turns_on_the_relay),
        about "after the CRITICAL handoff: advise (tell the agent), pause (stop it after the grace calls), relay (pause, then continue in a fresh context under `baton run`)";
    handoff_pause_grace_calls: u64 = 3,
        key "handoff.pause_grace_calls", env Some("BATON_HANDOFF_PAUSE_GRACE_CALLS"),
        kind Kind::Integer { min: 0, max: 1000 }, trust Trust::Anyone,
        about "tool calls the agent may still make after the CRITICAL handoff before a pause stops it";
    notices_show: bool = true,
        key "notices.show", env Some("BATON_NOTICES"), kind Kind::Bool, trust Trust::Anyone,
        about "show you one line when baton warns the agent, writes the CRITICAL handoff or briefs a session";
    notices_desktop: bool = false,
        key "notices.desktop", env Some("BATON_NOTICES_DESKTOP"), kind Kind::Bool, trust Trust::Anyone,
        about "also a desktop notification when the CRITICAL handoff is written (Claude Code)";
    resume_trust_foreign: bool = false,
        key "resume.trust_foreign", env Some("BATON_RESUME_TRUST_FOREIGN"), kind Kind::Bool,
        trust Trust::UserOnlyWhen(is_true),
        about "inject handoffs this machine did not write (cloned, copied, GSD's) as if trusted";
    resume_stale_days: u64 = 7,
        key "resume.stale_days", env Some("BATON_RESUME_STALE_DAYS"),
        kind Kind::Integer { min: 1, max: 3650 }, trust Trust::Anyone,
        about "a handoff older than this many days is flagged as doubtful in the brief";
    statusline_wrap_timeout_ms: u64 = 1000,
        key "statusline.wrap_timeout_ms", env Some("BATON_WRAP_TIMEOUT_MS"),
        kind Kind::Integer { min: 100, max: 10_000 }, trust Trust::Anyone,
        about "a wrapped statusline command taking longer is killed; baton's own line shows";
    statusline_wrap_append: bool = false,
        key "statusline.wrap_append", env Some("BATON_WRAP_APPEND"), kind Kind::Bool, trust Trust::Anyone,
        about "append baton's context meter to a wrapped statusline's output";
    checkpoint_github_auto: bool = false,
        key "checkpoint.github.auto", env Some("BATON_CHECKPOINT_GITHUB_AUTO"), kind Kind::Bool,
        trust Trust::UserOnlyWhen(is_true),
        about "after an automatic handoff, push it to the GitHub issue (`baton checkpoint push`) in the background";
    statusline_segments: Vec<String> = words(DEFAULT_SEGMENTS),
        key "statusline.segments", env Some("BATON_STATUSLINE_SEGMENTS"), kind Kind::Words(SEGMENT_NAMES),
        trust Trust::Anyone,
        about "the status line's segments, in order (unknown names are skipped)";
    statusline_second_line: Vec<String> = words(&[]),
        key "statusline.second_line", env Some("BATON_STATUSLINE_SECOND_LINE"), kind Kind::Words(SEGMENT_NAMES),
        trust Trust::Anyone,
        about "segments drawn on a second row under the line, in order (none: one row)";
    statusline_git_cache_seconds: u64 = 5,
        key "statusline.git_cache_seconds", env Some("BATON_STATUSLINE_GIT_CACHE_SECONDS"),
        kind Kind::Integer { min: 0, max: 3600 }, trust Trust::Anyone,
        about "how long the git markers of a repository are reused before a new status scan";
    statusline_git_budget_ms: u64 = 100,
        key "statusline.git_budget_ms", env Some("BATON_STATUSLINE_GIT_BUDGET_MS"),
        kind Kind::Integer { min: 1, max: 60_000 }, trust Trust::Anyone,
        about "a status scan that takes longer is given up: the branch is shown without markers";
}

/// The declaration of a key.
pub fn spec(key: &str) -> Option<&'static KeySpec> {
    KEYS.iter().find(|s| s.key == key)
}

/// The valid values of a kind, in words.
pub fn describe(kind: Kind) -> String {
    match kind {
        Kind::Percent => "a number above 0 and below 100".into(),
        Kind::Integer { min, max } => format!("a whole number from {min} to {max}"),
        Kind::Bool => "true or false".into(),
        Kind::Choice(words) => format!("one of {}", words.join(", ")),
        Kind::Folder => "a relative folder inside the project (no `..`)".into(),
        Kind::Words(words) => format!("a list of names from {}", words.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::layers::{RawValue, show_value, validate};

    #[test]
    fn handoff_folders_a_repository_may_choose() {
        for ok in [".planning", ".planning/handoffs", "./.planning", ".baton"] {
            assert!(!leaves_planning_folders(&Value::from(ok)), "{ok}");
        }
        for loose in
            ["src", ".git", ".git/hooks", ".planning/.git", ".GIT/x", ".claude", "docs/.planning", "."]
        {
            assert!(leaves_planning_folders(&Value::from(loose)), "{loose}");
        }
    }

    #[test]
    fn every_default_is_a_valid_value_of_its_kind() {
        for spec in KEYS {
            let default = (spec.default)();
            // An empty list is "not set" to the validator, which then means the default: fine
            // for a key whose default is the empty list (statusline.second_line).
            let expected =
                if default.as_array().is_some_and(Vec::is_empty) { None } else { Some(default.clone()) };
            assert_eq!(validate(spec.kind, &RawValue::Json(default)), expected, "{}", spec.key);
        }
        let names: Vec<&str> = KEYS.iter().map(|s| s.key).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "a key is declared twice");
    }

    /// The README's configuration table lists every key with its default, its environment
    /// variable and its trust mark (†), and no key that is not declared.
    #[test]
    fn the_readme_table_matches_the_declaration() {
        let readme = include_str!("../../docs/GUIDE.md");
        let section = readme.split("## Configuration").nth(1).expect("a Configuration section");
        let rows: Vec<Vec<&str>> = section
            .lines()
            .skip_while(|l| !l.starts_with("| key |"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
            .collect();
        let mut seen = vec![];
        for row in &rows {
            let [name, default, env, _meaning] = row[..] else { panic!("a row of four cells: {row:?}") };
            let marked = name.ends_with('†');
            let key = name.trim_end_matches('†').trim().trim_matches('`');
            if key == "models.<id>.window" {
                continue;
            }
            let spec = spec(key).unwrap_or_else(|| panic!("README lists `{key}`, which is not declared"));
            seen.push(key);
            let shown = match (spec.default)() {
                Value::Array(items) => items.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "),
                other => show_value(&other),
            };
            assert!(default.starts_with(&shown), "`{key}`: README default {default:?}, declared {shown:?}");
            match spec.env {
                Some(var) => {
                    assert!(env.contains(&format!("`{var}")), "`{key}`: README env {env:?}, declared {var}")
                }
                None => assert!(!env.contains("BATON_"), "`{key}`: README env {env:?}, declared none"),
            }
            assert_eq!(marked, matches!(spec.trust, Trust::UserOnlyWhen(_)), "`{key}`: the † mark");
        }
        for spec in KEYS {
            assert!(seen.contains(&spec.key), "README does not list `{}`", spec.key);
        }
    }
}
