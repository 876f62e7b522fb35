//! The context window of a session's model, from facts rather than guesses.
//!
//! In order: the statusline payload's `context_window_size` (remembered per model id in
//! baton's state dir, `windows.json`, so a headless run and the hook before the first
//! render know it too), the host's own record (Codex's `model_context_window`), the
//! configuration (`models.<id>.window`), a built-in table of known model ids, and last the
//! configured default. Only the last one is an assumption, and the monitor says so.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

use crate::places;

/// Where a window size came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowSource {
    /// The statusline payload of this session (`context_window_size`).
    Statusline,
    /// A statusline payload of an earlier render for the same model id.
    Remembered,
    /// The host's own record (Codex's rollout).
    Host,
    /// `models.<id>.window` in the configuration.
    Config,
    /// baton's table of known model ids.
    Table,
    /// The tokens in the context exceed the assumed window: the next larger known one.
    Proven,
    /// Nothing said: `default_window_tokens` is assumed.
    #[default]
    Default,
}

impl WindowSource {
    /// The window is an assumption, not a fact: no CRITICAL action may rest on it.
    /// A proven window is only a lower bound: the real one may be larger.
    pub fn is_assumed(self) -> bool {
        matches!(self, WindowSource::Default | WindowSource::Proven)
    }

    /// For `baton doctor` and `baton config`.
    pub fn describe(self) -> &'static str {
        match self {
            WindowSource::Statusline => "the status line",
            WindowSource::Remembered => "remembered from the status line",
            WindowSource::Host => "the host's record",
            WindowSource::Config => "configuration",
            WindowSource::Table => "baton's table",
            WindowSource::Proven => "at least, as the tokens in the context show",
            WindowSource::Default => "assumed (default_window_tokens)",
        }
    }
}

/// Known model ids: a prefix and its window. The longest matching prefix wins; `[1m]` in
/// a Claude id means 1,000,000 whatever the prefix says.
pub const MODEL_TABLE: &[(&str, u64)] = &[
    // Claude Code: the default model of 2.1.332 has 1M with no `[1m]` in its id.
    ("claude-opus-5-5", 1_000_000),
    ("claude-opus-4", 200_000),
    ("claude-sonnet-4", 200_000),
    ("claude-haiku-4", 200_000),
    ("claude-3-7-sonnet", 200_000),
    ("claude-3-5-sonnet", 200_000),
    ("claude-3-5-haiku", 200_000),
    ("claude-3-opus", 200_000),
    ("claude-3-haiku", 200_000),
    // Gemini CLI.
    ("gemini-3", 1_048_576),
    ("gemini-2.5-", 1_048_576),
    ("gemini-2.0-flash", 1_048_576),
    ("gemini-1.5-flash", 1_048_576),
    ("gemini-1.5-pro", 2_097_152),
    // OpenAI models as Codex knows them.
    ("gpt-5", 272_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("codex-mini", 200_000),
    ("gpt-oss-", 96_000),
];

/// The window the table gives a model id.
pub fn table_window(model: &str) -> Option<u64> {
    let id = model.trim().to_ascii_lowercase();
    if id.starts_with("claude") && id.contains("[1m]") {
        return Some(1_000_000);
    }
    let id = id.trim_end_matches("[1m]");
    MODEL_TABLE
        .iter()
        .filter(|(prefix, _)| id.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, window)| *window)
}

/// What is known about a session's window, before choosing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WindowFacts<'a> {
    pub model: Option<&'a str>,
    /// This session's statusline payload (or its bridge).
    pub statusline: Option<u64>,
    /// `windows.json`, for this model id.
    pub remembered: Option<u64>,
    /// The host's own record.
    pub host: Option<u64>,
    /// `models.<id>.window`.
    pub configured: Option<u64>,
    pub default: u64,
    /// The windows the host uses, smallest first (empty: Claude Code's).
    pub host_windows: &'a [u64],
}

/// Windows any host is known to use, smallest first.
pub const KNOWN_WINDOWS: &[u64] = &[128_000, 200_000, 272_000, 1_000_000, 1_047_576, 1_048_576, 2_097_152];
/// Claude Code's windows: what tokens beyond an assumed window prove.
pub const CLAUDE_WINDOWS: &[u64] = crate::host::claude::WINDOWS;

/// Chooses the window (pure). When the tokens already exceed it, the window is at least
/// the next larger known size.
pub fn choose_window(facts: &WindowFacts, tokens: Option<u64>) -> (u64, WindowSource) {
    let known = [
        (facts.statusline, WindowSource::Statusline),
        (facts.remembered, WindowSource::Remembered),
        (facts.host, WindowSource::Host),
        (facts.configured, WindowSource::Config),
        (facts.model.and_then(table_window), WindowSource::Table),
    ];
    let (window, source) = known
        .into_iter()
        .find_map(|(w, s)| w.filter(|w| *w > 0).map(|w| (w, s)))
        .unwrap_or((facts.default.max(1), WindowSource::Default));
    match tokens {
        Some(tokens) if tokens > window => {
            let candidates = if facts.host_windows.is_empty() { CLAUDE_WINDOWS } else { facts.host_windows };
            let larger = candidates.iter().copied().find(|w| *w >= tokens).unwrap_or(tokens);
            (larger, WindowSource::Proven)
        }
        _ => (window, source),
    }
}

/// The remembered windows file: `{"version": 1, "models": {"<id>": <window>}}`.
const FILE: &str = "windows.json";
const VERSION: u64 = 1;
const LIMIT: u64 = 256 * 1024;
/// Ids kept; beyond this, new ones are not remembered.
const MODELS_MAX: usize = 200;
const MODEL_ID_MAX: usize = 200;

/// The remembered windows file, versioned like baton's other state files.
pub fn file() -> Option<crate::state::VersionedFile> {
    places::state_dir().map(|d| crate::state::VersionedFile::new(d.join(FILE), VERSION, LIMIT))
}

/// Every remembered window, by model id. An unreadable file, or one a newer baton wrote,
/// is empty.
pub fn remembered_windows() -> BTreeMap<String, u64> {
    file().and_then(|f| f.load().object()).map(|object| models_of(&object)).unwrap_or_default()
}

/// The remembered window of one model id.
pub fn remembered_window(model: &str) -> Option<u64> {
    remembered_windows().get(model).copied()
}

/// Parses the file (pure): its windows when it is of a version this build reads.
pub fn parse(bytes: &[u8]) -> BTreeMap<String, u64> {
    let reader = crate::state::VersionedFile::new(FILE, VERSION, LIMIT);
    reader.classify(bytes).object().map(|object| models_of(&object)).unwrap_or_default()
}

fn models_of(object: &serde_json::Map<String, Value>) -> BTreeMap<String, u64> {
    object
        .get("models")
        .and_then(Value::as_object)
        .map(|models| {
            models.iter().filter_map(|(id, w)| Some((id.clone(), w.as_u64().filter(|w| *w > 0)?))).collect()
        })
        .unwrap_or_default()
}

/// Remembers the window a statusline payload gave for `model`, writing the file only
/// when it changes (atomically, under a lock, never over a newer baton's file). Returns
/// whether it was written.
pub fn remember(model: &str, window: u64) -> bool {
    if window == 0 || model.is_empty() || model.len() > MODEL_ID_MAX || model.chars().any(char::is_control) {
        return false;
    }
    if remembered_window(model) == Some(window) {
        return false;
    }
    let Some(file) = file() else { return false };
    let Some(dir) = file.path.parent() else { return false };
    let guard = crate::state::Guard::new(dir.join("windows.lock"));
    let edit = |loaded: crate::state::Loaded| {
        let mut models = loaded.object().map(|object| models_of(&object)).unwrap_or_default();
        if models.get(model) == Some(&window) || (models.len() >= MODELS_MAX && !models.contains_key(model)) {
            return crate::state::Edit::Keep(false);
        }
        models.insert(model.to_string(), window);
        let mut object = serde_json::Map::new();
        object.insert("models".into(), json!(models));
        crate::state::Edit::Store(object, true)
    };
    file.update(&guard, true, edit).unwrap_or(false)
}

/// One window baton knows for a model id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KnownWindow {
    pub model: String,
    pub tokens: u64,
    pub source: WindowSource,
}

/// The windows known for model ids, in the order they are consulted: remembered from the
/// status line, then configured (pure). The table and the default are listed apart.
pub fn known_windows(
    remembered: &BTreeMap<String, u64>,
    configured: &BTreeMap<String, u64>,
) -> Vec<KnownWindow> {
    let mut known: Vec<KnownWindow> = remembered
        .iter()
        .map(|(model, tokens)| KnownWindow {
            model: model.clone(),
            tokens: *tokens,
            source: WindowSource::Remembered,
        })
        .collect();
    known.extend(configured.iter().map(|(model, tokens)| KnownWindow {
        model: model.clone(),
        tokens: *tokens,
        source: WindowSource::Config,
    }));
    known
}

/// The windows known, for people (`baton config`).
pub fn describe_known(known: &[KnownWindow], default: u64) -> String {
    let mut out = String::from(
        "model windows (status line > remembered > host record > models.<id>.window > table > default):\n",
    );
    let width = known.iter().map(|k| k.model.len()).max().unwrap_or(0);
    for k in known {
        out.push_str(&format!("  {:<width$}  {:>9}  {}\n", k.model, k.tokens, k.source.describe()));
    }
    let table: Vec<String> =
        MODEL_TABLE.iter().map(|(prefix, w)| format!("{prefix}* {}", super::short_tokens(*w))).collect();
    out.push_str(&format!("  table: {}\n", table.join(", ")));
    out.push_str(&format!("  otherwise: {default} tokens, assumed (no CRITICAL handoff rests on it)\n"));
    out
}

/// One line for `baton doctor`: the windows known.
pub fn doctor_line(known: &[KnownWindow], default: u64) -> String {
    let listed: Vec<String> = known
        .iter()
        .map(|k| format!("{} {} ({})", k.model, super::short_tokens(k.tokens), k.source.describe()))
        .collect();
    let listed =
        if listed.is_empty() { "none remembered or configured".to_string() } else { listed.join(", ") };
    format!(
        "{listed}; {} ids in the table; otherwise {} assumed",
        MODEL_TABLE.len(),
        super::short_tokens(default)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_knows_the_hosts_models() {
        assert_eq!(table_window("claude-opus-5-5"), Some(1_000_000));
        assert_eq!(table_window("claude-sonnet-4-5-20250929"), Some(200_000));
        assert_eq!(table_window("claude-sonnet-4-5[1m]"), Some(1_000_000));
        assert_eq!(table_window("claude-opus-4-5-20251101"), Some(200_000));
        assert_eq!(table_window("gemini-2.5-flash"), Some(1_048_576));
        assert_eq!(table_window("gemini-3-pro-preview"), Some(1_048_576));
        assert_eq!(table_window("gpt-5-codex"), Some(272_000));
        assert_eq!(table_window("mock-model"), None);
        assert_eq!(table_window("claude-future-9"), None);
    }

    #[test]
    fn facts_come_before_the_table_and_the_default_is_last() {
        let base = WindowFacts { model: Some("claude-opus-5-5"), default: 200_000, ..Default::default() };
        assert_eq!(choose_window(&base, Some(132_000)), (1_000_000, WindowSource::Table));
        let remembered = WindowFacts { remembered: Some(500_000), ..base.clone() };
        assert_eq!(choose_window(&remembered, None), (500_000, WindowSource::Remembered));
        let live = WindowFacts { statusline: Some(200_000), ..remembered.clone() };
        assert_eq!(choose_window(&live, None), (200_000, WindowSource::Statusline));
        let configured = WindowFacts { configured: Some(300_000), ..base.clone() };
        assert_eq!(choose_window(&configured, None), (300_000, WindowSource::Config));
        let host = WindowFacts { host: Some(190_000), model: Some("mock-model"), ..base.clone() };
        assert_eq!(choose_window(&host, None), (190_000, WindowSource::Host));
        let unknown = WindowFacts { model: Some("mock-model"), ..base.clone() };
        assert_eq!(choose_window(&unknown, Some(10)), (200_000, WindowSource::Default));
        assert!(choose_window(&unknown, Some(10)).1.is_assumed());
        assert_eq!(choose_window(&unknown, Some(250_000)), (1_000_000, WindowSource::Proven));
        let codex = WindowFacts { host_windows: &[128_000, 272_000], ..unknown.clone() };
        assert_eq!(choose_window(&codex, Some(250_000)), (272_000, WindowSource::Proven));
    }

    #[test]
    fn known_windows_are_listed() {
        let remembered = BTreeMap::from([("claude-opus-5-5".to_string(), 1_000_000)]);
        let configured = BTreeMap::from([("mock-model".to_string(), 190_000)]);
        let known = known_windows(&remembered, &configured);
        assert_eq!(known.len(), 2);
        let line = doctor_line(&known, 200_000);
        assert!(
            line.starts_with(
                "claude-opus-5-5 1.0M (remembered from the status line), mock-model 190k (configuration)"
            ),
            "{line}"
        );
        assert!(describe_known(&known, 200_000).contains("otherwise: 200000 tokens, assumed"));
    }

    #[test]
    fn the_file_is_versioned() {
        assert_eq!(parse(br#"{"version": 1, "models": {"a": 5, "b": "x"}}"#).get("a"), Some(&5));
        assert!(parse(br#"{"version": 2, "models": {"a": 5}}"#).is_empty());
        assert!(parse(b"garbage").is_empty());
    }
}
