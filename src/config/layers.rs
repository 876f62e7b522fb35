//! The layers a configuration is read from (built-in defaults < user file < GSD's
//! `.planning/config.json` opt-out < project file < environment), how a layer's raw values
//! are checked against the declaration, and the pure resolution over them that honours
//! each key's trust.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde_json::{Map, Value};

use super::keys::{KEYS, KeySpec, Kind, Settings, describe, spec};
use crate::util::text::{outside, outside_path};

/// Why a config file's bytes give no layer.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("not valid JSON ({0})")]
    Json(#[from] serde_json::Error),
    #[error("not a JSON object")]
    NotAnObject,
}

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
                write!(f, "{}", outside_path(p))
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

    pub(super) fn kind_name(&self) -> &'static str {
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

/// A resolved key: its value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub value: Value,
    pub source: Source,
}

/// Checks one raw value against its key's kind.
pub(super) fn validate(kind: Kind, raw: &RawValue) -> Option<Value> {
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

/// A value as a file or the environment gave it, for a message: its control characters
/// shown (JSON leaves DEL and C1 as they are).
fn show_raw(raw: &RawValue) -> String {
    match raw {
        RawValue::Json(v) => outside(&v.to_string()).to_string(),
        RawValue::Text(t) => format!("{t:?}"),
    }
}

/// Puts keys back to their built-in defaults (after a bad combination of values).
fn reset_to_defaults(settings: &mut BTreeMap<&'static str, Entry>, keys: &[&str]) {
    for spec in keys.iter().filter_map(|key| spec(key)) {
        settings.insert(spec.key, Entry { value: (spec.default)(), source: Source::Default });
    }
}

/// Resolves every key from `layers` (lowest precedence first). Pure.
#[cfg(test)]
pub fn resolve(layers: &[Layer]) -> (BTreeMap<&'static str, Entry>, Vec<String>) {
    let resolved = resolve_all(layers);
    (resolved.settings, resolved.errors)
}

/// Every key resolved, with the problems found and the repository values ignored.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub settings: BTreeMap<&'static str, Entry>,
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
                errors.push(format!("{}: unknown key `{}`", layer.source, outside(key)));
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
                        errors.push(format!(
                            "{source}: `{}` has an unknown name `{}`; skipped",
                            spec.key,
                            outside(&word)
                        ));
                    }
                    chosen = Some(Entry { value, source });
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
        let setting = chosen.unwrap_or(Entry { value: (spec.default)(), source: Source::Default });
        settings.insert(spec.key, setting);
    }
    let typed = Settings::from_values(|key| settings.get(key).map(|e: &Entry| e.value.clone()));
    // The two thresholds only make sense in order.
    let (warn, critical) = (typed.warn_remaining, typed.critical_remaining);
    if critical >= warn {
        errors.push(format!(
            "critical_remaining ({critical}) must be below warn_remaining ({warn}); both use their defaults"
        ));
        reset_to_defaults(&mut settings, &["warn_remaining", "critical_remaining"]);
    }
    // Headroom thresholds: both, in order, or neither.
    let (warn, critical) = (typed.warn_headroom_tokens, typed.critical_headroom_tokens);
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
pub fn parse_file(text: &[u8]) -> Result<BTreeMap<String, RawValue>, FileError> {
    let Value::Object(object) = serde_json::from_slice(text)? else {
        return Err(FileError::NotAnObject);
    };
    let mut out = BTreeMap::new();
    flatten("", &object, &mut out);
    Ok(out)
}

/// Reads GSD's opt-out out of `.planning/config.json`: only `hooks.context_warnings`.
pub fn parse_gsd_planning(text: &[u8]) -> Result<BTreeMap<String, RawValue>, FileError> {
    let value: Value = serde_json::from_slice(text)?;
    let mut out = BTreeMap::new();
    if let Some(flag) = value.pointer("/hooks/context_warnings") {
        out.insert("context_warnings".to_string(), RawValue::Json(flag.clone()));
    }
    Ok(out)
}

/// A value as people write it: `35`, not `35.0`; `ref`, not `"ref"`.
/// A value for people (`baton config`, the messages): a string as it reads, its control
/// characters shown.
pub(super) fn show_value(value: &Value) -> String {
    match value {
        Value::String(s) => outside(s).to_string(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        other => outside(&other.to_string()).to_string(),
    }
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
