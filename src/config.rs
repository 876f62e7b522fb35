//! Configuration: built-in defaults < user file < GSD's `.planning/config.json` opt-out <
//! project file < environment, read once per process.
//!
//! Every key is declared once in [`KEYS`] with its type, default and environment
//! variable. Resolution is a pure function over plain data ([`resolve`]), so layering
//! and bad values are tested without files; [`Config::load`] only gathers the layers. A
//! bad value never breaks a hook: it is reported, and that key takes its value from the
//! next layer down (ultimately the default).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::{fsx, places};

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

/// A key's built-in default.
#[derive(Debug, Clone, Copy)]
pub enum Default {
    Number(f64),
    Integer(u64),
    Bool(bool),
    Word(&'static str),
    Words(&'static [&'static str]),
}

impl Default {
    fn to_value(self) -> Value {
        match self {
            Default::Number(n) => Value::from(n),
            Default::Integer(n) => Value::from(n),
            Default::Bool(b) => Value::from(b),
            Default::Word(w) => Value::from(w),
            Default::Words(words) => Value::from(words.to_vec()),
        }
    }
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

fn leaves_planning_folders(value: &Value) -> bool {
    let Some(text) = value.as_str() else { return true };
    let path = Path::new(text.trim());
    let mut parts = path.components().filter(|c| !matches!(c, std::path::Component::CurDir));
    let first_allowed = parts
        .next()
        .and_then(|c| c.as_os_str().to_str())
        .is_some_and(|first| REPOSITORY_HANDOFF_DIRS.contains(&first));
    let names_git = path.components().any(|c| c.as_os_str().to_string_lossy().eq_ignore_ascii_case(".git"));
    !first_allowed || names_git
}

/// One configuration key.
#[derive(Debug, Clone, Copy)]
pub struct KeySpec {
    /// Dotted name: `handoff.auto` is `{"handoff": {"auto": …}}` in a file.
    pub key: &'static str,
    pub env: Option<&'static str>,
    pub kind: Kind,
    pub default: Default,
    /// Which layers may set which values.
    pub trust: Trust,
    pub about: &'static str,
}

/// Every key baton reads.
pub const KEYS: &[KeySpec] = &[
    KeySpec {
        key: "warn_remaining",
        env: Some("BATON_WARN_REMAINING"),
        kind: Kind::Percent,
        default: Default::Number(35.0),
        trust: Trust::Anyone,
        about: "WARNING when remaining context is at or below this %",
    },
    KeySpec {
        key: "critical_remaining",
        env: Some("BATON_CRITICAL_REMAINING"),
        kind: Kind::Percent,
        default: Default::Number(25.0),
        trust: Trust::Anyone,
        about: "CRITICAL when remaining context is at or below this %",
    },
    KeySpec {
        key: "warn_headroom_tokens",
        env: Some("BATON_WARN_HEADROOM_TOKENS"),
        kind: Kind::Integer { min: 0, max: 100_000_000 },
        default: Default::Integer(0),
        trust: Trust::Anyone,
        about: "WARNING when this many tokens or fewer are left before auto-compaction (0: use %)",
    },
    KeySpec {
        key: "critical_headroom_tokens",
        env: Some("BATON_CRITICAL_HEADROOM_TOKENS"),
        kind: Kind::Integer { min: 0, max: 100_000_000 },
        default: Default::Integer(0),
        trust: Trust::Anyone,
        about: "CRITICAL when this many tokens or fewer are left before auto-compaction",
    },
    KeySpec {
        key: "default_window_tokens",
        env: Some("BATON_DEFAULT_WINDOW_TOKENS"),
        kind: Kind::Integer { min: 1000, max: 100_000_000 },
        default: Default::Integer(200_000),
        trust: Trust::Anyone,
        about: "context window assumed when neither the statusline nor the model id tells",
    },
    KeySpec {
        key: "compact_buffer_tokens",
        env: Some("BATON_COMPACT_BUFFER_TOKENS"),
        kind: Kind::Integer { min: 0, max: 100_000_000 },
        default: Default::Integer(33_000),
        trust: Trust::Anyone,
        about: "auto-compaction fires this many tokens short of the window (until one is observed)",
    },
    KeySpec {
        key: "auto_compact_window",
        env: Some("CLAUDE_CODE_AUTO_COMPACT_WINDOW"),
        kind: Kind::Integer { min: 0, max: 100_000_000 },
        default: Default::Integer(0),
        trust: Trust::Anyone,
        about: "Claude Code's window for auto-compaction, when set (0: the model's window)",
    },
    KeySpec {
        key: "auto_compact_pct",
        env: Some("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"),
        kind: Kind::Integer { min: 0, max: 100 },
        default: Default::Integer(0),
        trust: Trust::Anyone,
        about: "Claude Code compacts at this % of the window when lower (0: not set)",
    },
    KeySpec {
        key: "auto_compact_disabled",
        env: Some("DISABLE_AUTO_COMPACT"),
        kind: Kind::Bool,
        default: Default::Bool(false),
        trust: Trust::Anyone,
        about: "Claude Code's auto-compaction is off: headroom runs to the window's end",
    },
    KeySpec {
        key: "debounce_calls",
        env: Some("BATON_DEBOUNCE_CALLS"),
        kind: Kind::Integer { min: 1, max: 1000 },
        default: Default::Integer(5),
        trust: Trust::Anyone,
        about: "tool calls between repeated warnings of the same level",
    },
    KeySpec {
        key: "stale_seconds",
        env: Some("BATON_STALE_SECONDS"),
        kind: Kind::Integer { min: 1, max: 86_400 },
        default: Default::Integer(60),
        trust: Trust::Anyone,
        about: "a context figure older than this is ignored",
    },
    KeySpec {
        key: "disable",
        env: Some("BATON_DISABLE"),
        kind: Kind::Bool,
        default: Default::Bool(false),
        trust: Trust::Anyone,
        about: "turn every hook off (the statusline still renders)",
    },
    KeySpec {
        key: "context_warnings",
        env: None,
        kind: Kind::Bool,
        default: Default::Bool(true),
        trust: Trust::Anyone,
        about: "inject context warnings (GSD: .planning/config.json hooks.context_warnings)",
    },
    KeySpec {
        key: "handoff.auto",
        env: Some("BATON_HANDOFF_AUTO"),
        kind: Kind::Bool,
        default: Default::Bool(true),
        trust: Trust::Anyone,
        about: "write the handoff automatically when a CRITICAL warning fires",
    },
    KeySpec {
        key: "handoff.auto_checkpoint",
        env: Some("BATON_HANDOFF_AUTO_CHECKPOINT"),
        kind: Kind::Choice(CHECKPOINT_MODES),
        default: Default::Word("ref"),
        trust: Trust::UserOnlyWhen(commits_on_the_branch),
        about: "checkpoint of the automatic handoff: ref (private ref), branch (wip commit), off",
    },
    KeySpec {
        key: "handoff.pause_checkpoint",
        env: Some("BATON_HANDOFF_PAUSE_CHECKPOINT"),
        kind: Kind::Choice(CHECKPOINT_MODES),
        default: Default::Word("branch"),
        trust: Trust::Anyone,
        about: "checkpoint of `baton pause`: branch (GSD's wip commit), ref, off",
    },
    KeySpec {
        key: "handoff.dir",
        env: Some("BATON_HANDOFF_DIR"),
        kind: Kind::Folder,
        default: Default::Word(".planning"),
        trust: Trust::UserOnlyWhen(leaves_planning_folders),
        about: "folder of HANDOFF.json and its archive, relative to the project root",
    },
    KeySpec {
        key: "resume.trust_foreign",
        env: Some("BATON_RESUME_TRUST_FOREIGN"),
        kind: Kind::Bool,
        default: Default::Bool(false),
        trust: Trust::UserOnlyWhen(is_true),
        about: "inject handoffs this machine did not write (cloned, copied, GSD's) as if trusted",
    },
    KeySpec {
        key: "resume.stale_days",
        env: Some("BATON_RESUME_STALE_DAYS"),
        kind: Kind::Integer { min: 1, max: 3650 },
        default: Default::Integer(7),
        trust: Trust::Anyone,
        about: "a handoff older than this many days is flagged as doubtful in the brief",
    },
    KeySpec {
        key: "statusline.wrap_timeout_ms",
        env: Some("BATON_WRAP_TIMEOUT_MS"),
        kind: Kind::Integer { min: 100, max: 10_000 },
        default: Default::Integer(1000),
        trust: Trust::Anyone,
        about: "a wrapped statusline command taking longer is killed; baton's own line shows",
    },
    KeySpec {
        key: "statusline.wrap_append",
        env: Some("BATON_WRAP_APPEND"),
        kind: Kind::Bool,
        default: Default::Bool(false),
        trust: Trust::Anyone,
        about: "append baton's context meter to a wrapped statusline's output",
    },
    KeySpec {
        key: "checkpoint.github.auto",
        env: Some("BATON_CHECKPOINT_GITHUB_AUTO"),
        kind: Kind::Bool,
        default: Default::Bool(false),
        trust: Trust::UserOnlyWhen(is_true),
        about: "after an automatic handoff, push it to the GitHub issue (`baton checkpoint push`) in the background",
    },
    KeySpec {
        key: "statusline.segments",
        env: Some("BATON_STATUSLINE_SEGMENTS"),
        kind: Kind::Words(crate::statusline::SEGMENT_NAMES),
        default: Default::Words(crate::statusline::DEFAULT_SEGMENTS),
        trust: Trust::Anyone,
        about: "the status line's segments, in order (unknown names are skipped)",
    },
    KeySpec {
        key: "statusline.second_line",
        env: Some("BATON_STATUSLINE_SECOND_LINE"),
        kind: Kind::Words(crate::statusline::SEGMENT_NAMES),
        default: Default::Words(&[]),
        trust: Trust::Anyone,
        about: "segments drawn on a second row under the line, in order (none: one row)",
    },
    KeySpec {
        key: "statusline.git_cache_seconds",
        env: Some("BATON_STATUSLINE_GIT_CACHE_SECONDS"),
        kind: Kind::Integer { min: 0, max: 3600 },
        default: Default::Integer(5),
        trust: Trust::Anyone,
        about: "how long the git markers of a repository are reused before a new status scan",
    },
    KeySpec {
        key: "statusline.git_budget_ms",
        env: Some("BATON_STATUSLINE_GIT_BUDGET_MS"),
        kind: Kind::Integer { min: 1, max: 60_000 },
        default: Default::Integer(100),
        trust: Trust::Anyone,
        about: "a status scan that takes longer is given up: the branch is shown without markers",
    },
];

/// The checkpoint modes a handoff can use.
pub const CHECKPOINT_MODES: &[&str] = &["ref", "branch", "off"];

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Default,
    UserFile(PathBuf),
    GsdPlanning(PathBuf),
    ProjectFile(PathBuf),
    Env(&'static str),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => write!(f, "default"),
            Source::UserFile(p) | Source::ProjectFile(p) | Source::GsdPlanning(p) => {
                write!(f, "{}", p.display())
            }
            Source::Env(var) => write!(f, "env {var}"),
        }
    }
}

impl Source {
    /// A file in the repository (anyone who can push wrote it).
    pub fn is_repository(&self) -> bool {
        matches!(self, Source::ProjectFile(_) | Source::GsdPlanning(_))
    }

    fn kind_name(&self) -> &'static str {
        match self {
            Source::Default => "default",
            Source::UserFile(_) => "user",
            Source::GsdPlanning(_) => "gsd",
            Source::ProjectFile(_) => "project",
            Source::Env(_) => "env",
        }
    }
}

/// One layer's raw values, by dotted key.
#[derive(Debug, Clone)]
pub struct Layer {
    pub source: Source,
    pub values: BTreeMap<String, RawValue>,
}

/// A value as a layer holds it: JSON from a file, text from the environment.
#[derive(Debug, Clone, PartialEq)]
pub enum RawValue {
    Json(Value),
    Text(String),
}

/// A resolved key.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    pub value: Value,
    pub source: Source,
}

/// The effective configuration.
#[derive(Debug, Clone)]
pub struct Config {
    settings: BTreeMap<&'static str, Setting>,
    /// Problems found: unparsable files, bad values, unknown keys.
    pub errors: Vec<String>,
    /// Values a repository file set that loosen safety, ignored, with where to set them.
    pub ignored: Vec<String>,
    /// The files that were looked at, and whether they existed.
    pub files: Vec<(PathBuf, bool)>,
    /// `models.<id>.window`, by model id.
    pub model_windows: BTreeMap<String, ModelWindow>,
}

fn spec(key: &str) -> Option<&'static KeySpec> {
    KEYS.iter().find(|s| s.key == key)
}

fn describe(kind: Kind) -> String {
    match kind {
        Kind::Percent => "a number above 0 and below 100".into(),
        Kind::Integer { min, max } => format!("a whole number from {min} to {max}"),
        Kind::Bool => "true or false".into(),
        Kind::Choice(words) => format!("one of {}", words.join(", ")),
        Kind::Folder => "a relative folder inside the project (no `..`)".into(),
        Kind::Words(words) => format!("a list of names from {}", words.join(", ")),
    }
}

/// Checks one raw value against its key's kind.
fn validate(kind: Kind, raw: &RawValue) -> Option<Value> {
    match (kind, raw) {
        (Kind::Percent, RawValue::Json(v)) => v.as_f64().filter(|n| *n > 0.0 && *n < 100.0).map(Value::from),
        (Kind::Percent, RawValue::Text(t)) => {
            t.trim().parse::<f64>().ok().filter(|n| *n > 0.0 && *n < 100.0).map(Value::from)
        }
        (Kind::Integer { min, max }, RawValue::Json(v)) => {
            v.as_u64().filter(|n| (min..=max).contains(n)).map(Value::from)
        }
        (Kind::Integer { min, max }, RawValue::Text(t)) => {
            t.trim().parse::<u64>().ok().filter(|n| (min..=max).contains(n)).map(Value::from)
        }
        (Kind::Bool, RawValue::Json(Value::Bool(b))) => Some(Value::from(*b)),
        (Kind::Bool, RawValue::Json(_)) => None,
        (Kind::Bool, RawValue::Text(t)) => match t.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Some(Value::from(true)),
            "0" | "false" | "no" | "off" | "" => Some(Value::from(false)),
            _ => None,
        },
        (Kind::Choice(words), RawValue::Json(Value::String(s))) => {
            words.contains(&s.as_str()).then(|| Value::from(s.as_str()))
        }
        (Kind::Choice(_), RawValue::Json(_)) => None,
        (Kind::Choice(words), RawValue::Text(t)) => words.contains(&t.trim()).then(|| Value::from(t.trim())),
        (Kind::Folder, RawValue::Json(Value::String(s))) | (Kind::Folder, RawValue::Text(s)) => {
            let path = std::path::Path::new(s.trim());
            let inside = !s.trim().is_empty()
                && path.is_relative()
                && path
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir));
            inside.then(|| Value::from(s.trim()))
        }
        (Kind::Folder, RawValue::Json(_)) => None,
        (Kind::Words(known), raw) => {
            let words: Vec<&str> = raw_words(raw)?.into_iter().filter(|w| known.contains(w)).collect();
            let mut unique: Vec<&str> = Vec::new();
            for word in words {
                if !unique.contains(&word) {
                    unique.push(word);
                }
            }
            (!unique.is_empty()).then(|| Value::from(unique))
        }
    }
}

/// The words of a list value: a JSON array of strings, or text split at commas and
/// spaces. `None` when it is neither.
fn raw_words(raw: &RawValue) -> Option<Vec<&str>> {
    match raw {
        RawValue::Json(Value::Array(items)) => {
            items.iter().map(|item| item.as_str().map(str::trim)).collect::<Option<Vec<&str>>>()
        }
        RawValue::Json(_) => None,
        RawValue::Text(text) => {
            Some(text.split([',', ' ']).map(str::trim).filter(|w| !w.is_empty()).collect())
        }
    }
}

/// Words of a list value that are not in the key's set (reported, then skipped).
fn unknown_words(kind: Kind, raw: &RawValue) -> Vec<String> {
    match kind {
        Kind::Words(known) => raw_words(raw)
            .unwrap_or_default()
            .into_iter()
            .filter(|w| !known.contains(w))
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

fn show_raw(raw: &RawValue) -> String {
    match raw {
        RawValue::Json(v) => v.to_string(),
        RawValue::Text(t) => format!("{t:?}"),
    }
}

/// Puts keys back to their built-in defaults (after a bad combination of values).
fn reset_to_defaults(settings: &mut BTreeMap<&'static str, Setting>, keys: &[&str]) {
    for spec in keys.iter().filter_map(|key| spec(key)) {
        settings.insert(spec.key, Setting { value: spec.default.to_value(), source: Source::Default });
    }
}

/// Resolves every key from `layers` (lowest precedence first). Pure.
pub fn resolve(layers: &[Layer]) -> (BTreeMap<&'static str, Setting>, Vec<String>) {
    let resolved = resolve_all(layers);
    (resolved.settings, resolved.errors)
}

/// Every key resolved, with the problems found and the repository values ignored.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub settings: BTreeMap<&'static str, Setting>,
    pub errors: Vec<String>,
    pub ignored: Vec<String>,
}

/// Why a repository file's value was ignored, and where it may be set instead.
fn ignored_message(source: &Source, spec: &KeySpec, value: &Value) -> String {
    let env = spec.env.map(|var| format!(" or the environment ({var})")).unwrap_or_default();
    format!(
        "{source}: `{}`: {} loosens safety and is ignored in a repository file; if you mean it, set it in your user config (~/.config/baton/config.json){env}",
        spec.key,
        show_value(value)
    )
}

/// Resolves every key from `layers` (lowest precedence first), honouring each key's
/// [`Trust`]: a loosening value from a repository file is skipped (the layer below
/// decides) and reported. Pure.
pub fn resolve_all(layers: &[Layer]) -> Resolved {
    let mut settings = BTreeMap::new();
    let mut errors = Vec::new();
    let mut ignored = Vec::new();
    for layer in layers {
        for key in layer.values.keys() {
            if spec(key).is_none() && model_window_key(key).is_none() {
                errors.push(format!("{}: unknown key `{key}`", layer.source));
            }
        }
    }
    for spec in KEYS {
        let mut chosen = None;
        for layer in layers.iter().rev() {
            let Some(raw) = layer.values.get(spec.key) else { continue };
            // The environment layer is one layer, but each value names its own variable.
            let source = match (&layer.source, spec.env) {
                (Source::Env(_), Some(var)) => Source::Env(var),
                (other, _) => other.clone(),
            };
            match validate(spec.kind, raw) {
                Some(value) if source.is_repository() && !spec.trust.allows_repository(&value) => {
                    ignored.push(ignored_message(&source, spec, &value));
                }
                Some(value) => {
                    for word in unknown_words(spec.kind, raw) {
                        errors
                            .push(format!("{source}: `{}` has an unknown name `{word}`; skipped", spec.key));
                    }
                    chosen = Some(Setting { value, source });
                    break;
                }
                None => errors.push(format!(
                    "{}: `{}` must be {}, not {}; ignored",
                    source,
                    spec.key,
                    describe(spec.kind),
                    show_raw(raw)
                )),
            }
        }
        let setting = chosen.unwrap_or(Setting { value: spec.default.to_value(), source: Source::Default });
        settings.insert(spec.key, setting);
    }
    // The two thresholds only make sense in order.
    let warn = settings["warn_remaining"].value.as_f64().unwrap_or(35.0);
    let critical = settings["critical_remaining"].value.as_f64().unwrap_or(25.0);
    if critical >= warn {
        errors.push(format!(
            "critical_remaining ({critical}) must be below warn_remaining ({warn}); both use their defaults"
        ));
        reset_to_defaults(&mut settings, &["warn_remaining", "critical_remaining"]);
    }
    // Headroom thresholds: both, in order, or neither.
    let warn = settings["warn_headroom_tokens"].value.as_u64().unwrap_or(0);
    let critical = settings["critical_headroom_tokens"].value.as_u64().unwrap_or(0);
    if (warn > 0 || critical > 0) && (warn == 0 || critical == 0 || critical >= warn) {
        errors.push(format!(
            "critical_headroom_tokens ({critical}) must be set and below warn_headroom_tokens ({warn}); thresholds use remaining % instead"
        ));
        reset_to_defaults(&mut settings, &["warn_headroom_tokens", "critical_headroom_tokens"]);
    }
    Resolved { settings, errors, ignored }
}

/// The model id of a `models.<id>.window` key (ids may hold dots: `gemini-2.5-flash`).
pub fn model_window_key(key: &str) -> Option<&str> {
    key.strip_prefix("models.")?.strip_suffix(".window").filter(|id| !id.is_empty())
}

/// A model's window set in the configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelWindow {
    pub tokens: u64,
    pub source: Source,
}

/// Resolves every `models.<id>.window` from `layers` (lowest precedence first). Pure.
pub fn resolve_model_windows(layers: &[Layer]) -> (BTreeMap<String, ModelWindow>, Vec<String>) {
    let kind = Kind::Integer { min: 1000, max: 100_000_000 };
    let mut windows = BTreeMap::new();
    let mut errors = Vec::new();
    for layer in layers {
        for (key, raw) in &layer.values {
            let Some(id) = model_window_key(key) else { continue };
            match validate(kind, raw).and_then(|v| v.as_u64()) {
                Some(tokens) => {
                    windows.insert(id.to_string(), ModelWindow { tokens, source: layer.source.clone() });
                }
                None => errors.push(format!(
                    "{}: `{key}` must be {}, not {}; ignored",
                    layer.source,
                    describe(kind),
                    show_raw(raw)
                )),
            }
        }
    }
    (windows, errors)
}

/// Flattens a JSON object into dotted keys (`{"a": {"b": 1}}` → `a.b`). Objects under a
/// name that is itself a key are kept whole.
fn flatten(prefix: &str, object: &Map<String, Value>, out: &mut BTreeMap<String, RawValue>) {
    for (name, value) in object {
        let key = if prefix.is_empty() { name.clone() } else { format!("{prefix}.{name}") };
        match value {
            Value::Object(inner) if spec(&key).is_none() => flatten(&key, inner, out),
            _ => {
                out.insert(key, RawValue::Json(value.clone()));
            }
        }
    }
}

/// Parses a config file's text into a layer's values.
pub fn parse_file(text: &[u8]) -> Result<BTreeMap<String, RawValue>, String> {
    let value: Value = serde_json::from_slice(text).map_err(|e| format!("not valid JSON ({e})"))?;
    let Value::Object(object) = value else {
        return Err("not a JSON object".into());
    };
    let mut out = BTreeMap::new();
    flatten("", &object, &mut out);
    Ok(out)
}

/// Reads GSD's opt-out out of `.planning/config.json`: only `hooks.context_warnings`.
pub fn parse_gsd_planning(text: &[u8]) -> Result<BTreeMap<String, RawValue>, String> {
    let value: Value = serde_json::from_slice(text).map_err(|e| format!("not valid JSON ({e})"))?;
    let mut out = BTreeMap::new();
    if let Some(flag) = value.pointer("/hooks/context_warnings") {
        out.insert("context_warnings".to_string(), RawValue::Json(flag.clone()));
    }
    Ok(out)
}

/// Turns a file's bytes into a layer's values.
type LayerParser = fn(&[u8]) -> Result<BTreeMap<String, RawValue>, String>;

const CONFIG_FILE_LIMIT: u64 = 1024 * 1024;

/// The project's config file.
pub fn project_config_path(project: &Path) -> PathBuf {
    project.join(".claude").join("baton.json")
}

impl Config {
    /// Gathers the layers from disk and the environment and resolves them. `project` is
    /// the session's project folder, when there is one.
    pub fn load(project: Option<&Path>) -> Config {
        let mut layers = vec![];
        let mut errors = vec![];
        let mut files = vec![];
        // The user's own file may be a link into a dotfiles repository; a repository's
        // files are never followed out of it. Either way: regular, non-blocking, capped.
        let mut read_layer = |path: PathBuf, source: Source, parse: LayerParser| {
            let read = if matches!(source, Source::UserFile(_)) {
                fsx::read_through_symlink
            } else {
                fsx::read_limited
            };
            match read(&path, CONFIG_FILE_LIMIT) {
                Ok(bytes) => {
                    files.push((path.clone(), true));
                    match parse(&bytes) {
                        Ok(values) => layers.push(Layer { source, values }),
                        Err(why) => errors.push(format!("{}: {why}; file ignored", path.display())),
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => files.push((path, false)),
                Err(e) => {
                    files.push((path.clone(), true));
                    errors.push(format!("{}: cannot be read ({e}); file ignored", path.display()))
                }
            }
        };
        if let Some(path) = places::user_config_path() {
            read_layer(path.clone(), Source::UserFile(path), parse_file);
        }
        if let Some(project) = project {
            let gsd = project.join(".planning").join("config.json");
            read_layer(gsd.clone(), Source::GsdPlanning(gsd), parse_gsd_planning);
            let path = project_config_path(project);
            read_layer(path.clone(), Source::ProjectFile(path), parse_file);
        }
        layers.push(env_layer(|name| std::env::var(name).ok()));
        let resolved = resolve_all(&layers);
        errors.extend(resolved.errors);
        let (model_windows, mut window_errors) = resolve_model_windows(&layers);
        errors.append(&mut window_errors);
        Config { settings: resolved.settings, errors, ignored: resolved.ignored, files, model_windows }
    }

    /// Defaults only, with no file or environment read (the demo, tests).
    pub fn defaults() -> Config {
        let (settings, errors) = resolve(&[]);
        Config { settings, errors, ignored: vec![], files: vec![], model_windows: BTreeMap::new() }
    }

    /// Every key with its value and source, in declaration order.
    pub fn settings(&self) -> impl Iterator<Item = (&'static KeySpec, &Setting)> {
        KEYS.iter().filter_map(|spec| self.settings.get(spec.key).map(|s| (spec, s)))
    }

    fn value(&self, key: &str) -> Option<&Value> {
        self.settings.get(key).map(|s| &s.value)
    }

    fn number(&self, key: &str, fallback: f64) -> f64 {
        self.value(key).and_then(Value::as_f64).unwrap_or(fallback)
    }

    fn integer(&self, key: &str, fallback: u64) -> u64 {
        self.value(key).and_then(Value::as_u64).unwrap_or(fallback)
    }

    fn flag(&self, key: &str, fallback: bool) -> bool {
        self.value(key).and_then(Value::as_bool).unwrap_or(fallback)
    }

    /// The thresholds and debounce the monitor and the statusline share.
    pub fn levels(&self) -> crate::metrics::Thresholds {
        crate::metrics::Thresholds {
            warn_remaining: self.number("warn_remaining", 35.0),
            critical_remaining: self.number("critical_remaining", 25.0),
        }
    }

    /// Everything that decides a figure's level and headroom.
    pub fn limits(&self) -> crate::metrics::Limits {
        let optional = |key: &str| Some(self.integer(key, 0)).filter(|v| *v > 0);
        crate::metrics::Limits {
            thresholds: self.levels(),
            warn_headroom: optional("warn_headroom_tokens"),
            critical_headroom: optional("critical_headroom_tokens"),
            default_window: self.integer("default_window_tokens", 200_000),
            rule: crate::metrics::CompactionRule {
                buffer: self.integer("compact_buffer_tokens", 33_000),
                window_override: optional("auto_compact_window"),
                pct_override: optional("auto_compact_pct"),
                disabled: self.flag("auto_compact_disabled", false),
                learned: None,
            },
            compaction: crate::metrics::CompactionAt::ClaudeRule,
        }
    }

    /// `models.<id>.window`, tokens by model id.
    pub fn configured_windows(&self) -> BTreeMap<String, u64> {
        self.model_windows.iter().map(|(id, w)| (id.clone(), w.tokens)).collect()
    }

    /// The used % at which WARNING and CRITICAL start.
    pub fn thresholds_used(&self) -> [f64; 2] {
        let levels = self.levels();
        [100.0 - levels.warn_remaining, 100.0 - levels.critical_remaining]
    }

    /// Which thresholds are in force, in words.
    pub fn threshold_mode(&self) -> String {
        let limits = self.limits();
        match (limits.warn_headroom, limits.critical_headroom) {
            (Some(warn), Some(critical)) => format!(
                "headroom tokens: WARNING at {warn} or fewer tokens before auto-compaction, CRITICAL at {critical} (remaining % when the token count is unknown)"
            ),
            _ => format!(
                "remaining %: WARNING at {}% or less, CRITICAL at {}% or less",
                crate::metrics::format_pct(limits.thresholds.warn_remaining),
                crate::metrics::format_pct(limits.thresholds.critical_remaining)
            ),
        }
    }

    pub fn debounce_calls(&self) -> u32 {
        self.integer("debounce_calls", 5) as u32
    }

    pub fn stale_seconds(&self) -> u64 {
        self.integer("stale_seconds", 60)
    }

    /// `disable`: every hook stays silent.
    pub fn disabled(&self) -> bool {
        self.flag("disable", false)
    }

    /// `context_warnings`: the monitor may inject warnings.
    pub fn context_warnings(&self) -> bool {
        self.flag("context_warnings", true)
    }

    fn word(&self, key: &str, fallback: &'static str) -> String {
        self.value(key).and_then(Value::as_str).unwrap_or(fallback).to_string()
    }

    /// `handoff.auto`: write the handoff at CRITICAL.
    pub fn handoff_auto(&self) -> bool {
        self.flag("handoff.auto", true)
    }

    /// `handoff.auto_checkpoint`.
    pub fn auto_checkpoint(&self) -> crate::gitx::Mode {
        crate::gitx::Mode::parse(&self.word("handoff.auto_checkpoint", "ref"))
            .unwrap_or(crate::gitx::Mode::Ref)
    }

    /// `handoff.pause_checkpoint`.
    pub fn pause_checkpoint(&self) -> crate::gitx::Mode {
        crate::gitx::Mode::parse(&self.word("handoff.pause_checkpoint", "branch"))
            .unwrap_or(crate::gitx::Mode::Branch)
    }

    /// `checkpoint.github.auto`: push the automatic handoff to its GitHub issue.
    pub fn checkpoint_github_auto(&self) -> bool {
        self.flag("checkpoint.github.auto", false)
    }

    /// `statusline.segments`: the segment names, in order, known names only.
    pub fn statusline_segments(&self) -> Vec<String> {
        self.value("statusline.segments")
            .and_then(Value::as_array)
            .map(|items| items.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default()
    }

    /// `statusline.second_line`.
    pub fn statusline_second_line(&self) -> Vec<String> {
        self.value("statusline.second_line")
            .and_then(Value::as_array)
            .map(|items| items.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default()
    }

    /// `statusline.git_cache_seconds`.
    pub fn git_cache_seconds(&self) -> u64 {
        self.integer("statusline.git_cache_seconds", 5)
    }

    /// `statusline.git_budget_ms`.
    pub fn git_budget_ms(&self) -> u64 {
        self.integer("statusline.git_budget_ms", 100)
    }

    /// `handoff.dir`, relative to the project root.
    pub fn handoff_dir(&self) -> PathBuf {
        PathBuf::from(self.word("handoff.dir", ".planning"))
    }

    /// `resume.trust_foreign`.
    pub fn trust_foreign(&self) -> bool {
        self.flag("resume.trust_foreign", false)
    }

    /// `resume.stale_days`.
    pub fn stale_days(&self) -> u64 {
        self.integer("resume.stale_days", 7)
    }

    /// `statusline.wrap_timeout_ms`: how long a wrapped statusline command may run.
    pub fn wrap_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.integer("statusline.wrap_timeout_ms", 1000))
    }

    /// `statusline.wrap_append`: baton's meter follows a wrapped statusline's output.
    pub fn wrap_append(&self) -> bool {
        self.flag("statusline.wrap_append", false)
    }

    /// The configuration as JSON for `baton config --json`.
    pub fn to_json(&self) -> Value {
        let mut values = Map::new();
        for (spec, setting) in self.settings() {
            let mut entry = Map::new();
            entry.insert("value".into(), setting.value.clone());
            entry.insert("source".into(), Value::from(setting.source.kind_name()));
            match &setting.source {
                Source::UserFile(p) | Source::ProjectFile(p) | Source::GsdPlanning(p) => {
                    entry.insert("path".into(), Value::from(p.display().to_string()));
                }
                Source::Env(var) => {
                    entry.insert("env".into(), Value::from(*var));
                }
                Source::Default => {}
            }
            if let Some(env) = spec.env {
                entry.insert("env_var".into(), Value::from(env));
            }
            values.insert(spec.key.into(), Value::Object(entry));
        }
        let files: Vec<Value> = self
            .files
            .iter()
            .map(|(p, exists)| serde_json::json!({"path": p.display().to_string(), "exists": exists}))
            .collect();
        let models: Map<String, Value> = self
            .model_windows
            .iter()
            .map(|(id, w)| {
                (id.clone(), serde_json::json!({"window": w.tokens, "source": w.source.kind_name()}))
            })
            .collect();
        serde_json::json!({
            "values": values,
            "models": models,
            "thresholds": self.threshold_mode(),
            "files": files,
            "errors": self.errors,
            "ignored": self.ignored,
        })
    }
}

/// A value as people write it: `35`, not `35.0`; `ref`, not `"ref"`.
fn show_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// The configuration as a table for people (`baton config`).
pub fn describe_config(config: &Config) -> String {
    let mut out = String::from(
        "baton configuration (environment > project file > GSD opt-out > user file > default)\n\n",
    );
    let rows: Vec<(String, String, String)> = config
        .settings()
        .map(|(spec, setting)| (spec.key.to_string(), show_value(&setting.value), setting.source.to_string()))
        .collect();
    let key_width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    // A long value (a segment list) runs past the column instead of widening it for all.
    let value_width = rows.iter().map(|r| r.1.len()).filter(|w| *w <= 24).max().unwrap_or(0);
    for ((key, value, source), (spec, _)) in rows.iter().zip(config.settings()) {
        out.push_str(&format!("  {key:<key_width$}  {value:<value_width$}  {source}\n"));
        let env = spec.env.map(|e| format!(" (env {e})")).unwrap_or_default();
        out.push_str(&format!("  {:<key_width$}  {}{env}\n", "", spec.about));
    }
    out.push_str(&format!("\nthresholds in force: {}\n", config.threshold_mode()));
    out.push_str("\nfiles:\n");
    for (path, exists) in &config.files {
        let state = if *exists { "read" } else { "not present" };
        out.push_str(&format!("  {}  ({state})\n", path.display()));
    }
    if config.files.is_empty() {
        out.push_str("  (none)\n");
    }
    if !config.ignored.is_empty() {
        out.push_str(&format!(
            "\n{} value(s) ignored (a repository file may make baton quieter or stricter, never looser):\n",
            config.ignored.len()
        ));
        for ignored in &config.ignored {
            out.push_str(&format!("  {ignored}\n"));
        }
    }
    if config.errors.is_empty() {
        out.push_str("\nno errors\n");
    } else {
        out.push_str(&format!("\n{} error(s):\n", config.errors.len()));
        for error in &config.errors {
            out.push_str(&format!("  {error}\n"));
        }
    }
    out
}

/// The environment layer, from a lookup function (pure for tests).
pub fn env_layer(lookup: impl Fn(&str) -> Option<String>) -> Layer {
    let mut values = BTreeMap::new();
    for spec in KEYS {
        if let Some(var) = spec.env {
            if let Some(text) = lookup(var) {
                values.insert(spec.key.to_string(), RawValue::Text(text));
            }
        }
    }
    Layer { source: Source::Env("environment"), values }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_layer(source: Source, json: &str) -> Layer {
        Layer { source, values: parse_file(json.as_bytes()).unwrap() }
    }

    #[test]
    fn defaults_match_gsd() {
        let config = Config::defaults();
        assert_eq!(config.levels().warn_remaining, 35.0);
        assert_eq!(config.levels().critical_remaining, 25.0);
        assert_eq!(config.debounce_calls(), 5);
        assert_eq!(config.stale_seconds(), 60);
        assert!(!config.disabled());
        assert!(config.context_warnings());
        assert_eq!(config.wrap_timeout(), std::time::Duration::from_millis(1000));
        assert!(!config.wrap_append());
        assert!(config.errors.is_empty());
    }

    #[test]
    fn later_layers_win() {
        let user = file_layer(Source::UserFile("u".into()), r#"{"warn_remaining": 40, "debounce_calls": 3}"#);
        let project = file_layer(Source::ProjectFile("p".into()), r#"{"warn_remaining": 45}"#);
        let env = env_layer(|v| (v == "BATON_DEBOUNCE_CALLS").then(|| "7".to_string()));
        let (settings, errors) = resolve(&[user, project, env]);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(settings["warn_remaining"].value, Value::from(45.0));
        assert_eq!(settings["warn_remaining"].source, Source::ProjectFile("p".into()));
        assert_eq!(settings["debounce_calls"].value, Value::from(7));
        assert_eq!(settings["critical_remaining"].source, Source::Default);
    }

    #[test]
    fn a_bad_value_falls_back_and_is_reported() {
        let user = file_layer(Source::UserFile("u".into()), r#"{"debounce_calls": 3}"#);
        let project = file_layer(
            Source::ProjectFile("p".into()),
            r#"{"debounce_calls": "many", "stale_seconds": -1, "nope": 1}"#,
        );
        let (settings, errors) = resolve(&[user, project]);
        assert_eq!(settings["debounce_calls"].value, Value::from(3));
        assert_eq!(settings["stale_seconds"].value, Value::from(60));
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors.iter().any(|e| e.contains("unknown key `nope`")));
    }

    #[test]
    fn thresholds_out_of_order_use_defaults() {
        let env = env_layer(|v| match v {
            "BATON_WARN_REMAINING" => Some("20".into()),
            "BATON_CRITICAL_REMAINING" => Some("30".into()),
            _ => None,
        });
        let (settings, errors) = resolve(&[env]);
        assert_eq!(settings["warn_remaining"].value, Value::from(35.0));
        assert_eq!(settings["critical_remaining"].value, Value::from(25.0));
        assert_eq!(errors.len(), 1);
    }

    #[test]
    fn model_windows_are_read_per_id() {
        let user = file_layer(
            Source::UserFile("/u".into()),
            r#"{"models": {"gemini-2.5-flash": {"window": 2000000}, "mock-model": {"window": "big"}}}"#,
        );
        let project = file_layer(
            Source::ProjectFile("/p".into()),
            r#"{"models": {"gemini-2.5-flash": {"window": 900000}}}"#,
        );
        let (settings_errors_free, errors) = resolve(&[user.clone(), project.clone()]);
        assert!(!settings_errors_free.is_empty());
        assert!(errors.is_empty(), "model keys are known keys: {errors:?}");
        let (windows, errors) = resolve_model_windows(&[user, project]);
        assert_eq!(windows["gemini-2.5-flash"].tokens, 900_000);
        assert_eq!(windows["gemini-2.5-flash"].source, Source::ProjectFile("/p".into()));
        assert!(!windows.contains_key("mock-model"));
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(model_window_key("models.gpt-5.window"), Some("gpt-5"));
        assert_eq!(model_window_key("models.window"), None);
    }

    #[test]
    fn gsd_opt_out_is_read() {
        let values =
            parse_gsd_planning(br#"{"hooks": {"context_warnings": false}, "mode": "yolo"}"#).unwrap();
        let (settings, errors) = resolve(&[Layer { source: Source::GsdPlanning("g".into()), values }]);
        assert!(errors.is_empty());
        assert_eq!(settings["context_warnings"].value, Value::from(false));
    }

    #[test]
    fn nested_statusline_keys_are_read() {
        let user = file_layer(
            Source::UserFile("u".into()),
            r#"{"statusline": {"wrap_timeout_ms": 500, "wrap_append": true}}"#,
        );
        let (settings, errors) = resolve(&[user]);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(settings["statusline.wrap_timeout_ms"].value, Value::from(500));
        assert_eq!(settings["statusline.wrap_append"].value, Value::from(true));
    }

    #[test]
    fn segment_lists_keep_known_names_and_report_the_rest() {
        let project = file_layer(
            Source::ProjectFile("p".into()),
            r#"{"statusline": {"segments": ["meter", "sparkle", "model", "meter"]}}"#,
        );
        let (settings, errors) = resolve(&[project]);
        assert_eq!(settings["statusline.segments"].value, serde_json::json!(["meter", "model"]));
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains("unknown name `sparkle`"), "{errors:?}");

        let env = env_layer(|v| (v == "BATON_STATUSLINE_SEGMENTS").then(|| "cost, meter".to_string()));
        let (settings, errors) = resolve(&[env]);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(settings["statusline.segments"].value, serde_json::json!(["cost", "meter"]));

        // Nothing known, or not a list: the layer below (here the default) applies.
        for bad in [r#"{"statusline": {"segments": ["nope"]}}"#, r#"{"statusline": {"segments": "meter"}}"#] {
            let (settings, errors) = resolve(&[file_layer(Source::UserFile("u".into()), bad)]);
            assert_eq!(settings["statusline.segments"].source, Source::Default, "{bad}");
            assert_eq!(errors.len(), 1, "{bad}: {errors:?}");
        }
        let config = Config::defaults();
        assert_eq!(config.statusline_segments(), crate::statusline::DEFAULT_SEGMENTS);
        assert_eq!(config.git_cache_seconds(), 5);
        assert_eq!(config.git_budget_ms(), 100);
    }

    #[test]
    fn repository_files_cannot_loosen_safety() {
        let loosening = r#"{"resume": {"trust_foreign": true}, "checkpoint": {"github": {"auto": true}},
            "handoff": {"auto_checkpoint": "branch", "dir": ".git/hooks"}, "warn_remaining": 50}"#;
        let project = file_layer(Source::ProjectFile("p".into()), loosening);
        let resolved = resolve_all(&[project]);
        assert!(resolved.errors.is_empty(), "{:?}", resolved.errors);
        for key in
            ["resume.trust_foreign", "checkpoint.github.auto", "handoff.auto_checkpoint", "handoff.dir"]
        {
            assert_eq!(resolved.settings[key].source, Source::Default, "{key}");
            assert!(
                resolved.ignored.iter().any(|i| i.contains(&format!("`{key}`"))),
                "{key}: {:?}",
                resolved.ignored
            );
        }
        assert_eq!(resolved.ignored.len(), 4);
        assert!(resolved.ignored[0].contains("user config"), "{:?}", resolved.ignored);
        // Stricter or quieter values from the repository still apply.
        assert_eq!(resolved.settings["warn_remaining"].value, Value::from(50.0));

        // The same values from the user's file or the environment are honoured.
        let user = file_layer(Source::UserFile("u".into()), loosening);
        let resolved = resolve_all(&[user]);
        assert!(resolved.ignored.is_empty());
        assert_eq!(resolved.settings["resume.trust_foreign"].value, Value::from(true));
        assert_eq!(resolved.settings["handoff.dir"].value, Value::from(".git/hooks"));
        let env = env_layer(|v| (v == "BATON_CHECKPOINT_GITHUB_AUTO").then(|| "1".to_string()));
        assert_eq!(resolve_all(&[env]).settings["checkpoint.github.auto"].value, Value::from(true));

        // A repository value below the user's does not override it either way.
        let user = file_layer(Source::UserFile("u".into()), r#"{"handoff": {"auto_checkpoint": "branch"}}"#);
        let project =
            file_layer(Source::ProjectFile("p".into()), r#"{"handoff": {"auto_checkpoint": "off"}}"#);
        let resolved = resolve_all(&[user.clone(), project]);
        assert_eq!(resolved.settings["handoff.auto_checkpoint"].value, Value::from("off"), "stricter wins");
        let project = file_layer(Source::ProjectFile("p".into()), r#"{"resume": {"trust_foreign": false}}"#);
        assert!(resolve_all(&[user, project]).ignored.is_empty());
    }

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
    fn env_booleans() {
        for (text, expected) in [("1", true), ("true", true), ("0", false), ("off", false)] {
            let env = env_layer(|v| (v == "BATON_DISABLE").then(|| text.to_string()));
            let (settings, _) = resolve(&[env]);
            assert_eq!(settings["disable"].value, Value::from(expected), "{text}");
        }
    }
}
