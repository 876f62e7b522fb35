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

use crate::host::HostKind;
use crate::places;
use crate::util::text::outside;

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
    /// baton's table, for a model whose family has both 200k and 1M members: likely, not
    /// proven (no CRITICAL action below what the smaller window could hold at CRITICAL).
    Likely,
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

    /// The window is a fact about this session's model: the status line (now or
    /// remembered), the host's record or the user's configuration. Not the table, not a
    /// default, not a lower bound. Pausing a session (relay) rests only on these.
    pub fn is_fact(self) -> bool {
        matches!(
            self,
            WindowSource::Statusline | WindowSource::Remembered | WindowSource::Host | WindowSource::Config
        )
    }

    /// For `baton doctor` and `baton config`.
    pub fn describe(self) -> &'static str {
        match self {
            WindowSource::Statusline => "the status line",
            WindowSource::Remembered => "remembered from the status line",
            WindowSource::Host => "the host's record",
            WindowSource::Config => "configuration",
            WindowSource::Table => "baton's table",
            WindowSource::Likely => "baton's table (likely: this family has 200k and 1M models)",
            WindowSource::Proven => "at least, as the tokens in the context show",
            WindowSource::Default => "assumed (default_window_tokens)",
        }
    }
}

/// One model baton's table knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelRow {
    /// The canonical id, matched exactly after [`normalise`].
    pub id: &'static str,
    pub window: u64,
    /// The host's default max output tokens (Claude Code reserves min(this, 20,000)).
    pub max_output: u64,
    /// Claude Code does not compact this model at a threshold by default: it waits for
    /// the API's prompt-too-long (source "auto", not enforced).
    pub reactive: bool,
    /// A `[1m]` suffix gives it 1,000,000 (Claude Code).
    pub suffix_1m: bool,
}

const fn row(id: &'static str, window: u64, max_output: u64, reactive: bool, suffix_1m: bool) -> ModelRow {
    ModelRow { id, window, max_output, reactive, suffix_1m }
}

const M: u64 = 1_000_000;
const K200: u64 = 200_000;

/// Claude Code 2.1.332's baked-in model catalog (and its run-time report of each id's
/// `contextWindow`/`maxOutputTokens`): every row checked against the pinned CLI.
pub const CLAUDE_TABLE: &[ModelRow] = &[
    row("claude-opus-5-5", M, 128_000, false, false),
    row("claude-opus-5", M, 64_000, false, false),
    row("claude-opus-4-8", M, 64_000, false, false),
    row("claude-opus-4-7", M, 64_000, false, false),
    row("claude-opus-4-6", K200, 64_000, false, true),
    row("claude-opus-4-5", K200, 32_000, true, true),
    // Claude Code remaps these to claude-opus-5-5 unless CLAUDE_CODE_DISABLE_LEGACY_MODEL_REMAP
    // is set; an id baton sees in a transcript is already the remapped one.
    row("claude-opus-4-1", K200, 32_000, true, true),
    row("claude-opus-4-0", K200, 32_000, true, true),
    row("claude-sonnet-5-5", M, 128_000, false, false),
    row("claude-sonnet-5", M, 64_000, false, false),
    row("claude-sonnet-4-6", K200, 32_000, false, true),
    row("claude-sonnet-4-5", K200, 32_000, true, true),
    row("claude-sonnet-4-0", K200, 32_000, true, true),
    row("claude-haiku-5-5", M, 128_000, false, false),
    row("claude-haiku-4-5", K200, 32_000, true, true),
    row("claude-fable-5-2", M, 128_000, false, false),
    row("claude-fable-5-1", M, 64_000, false, false),
    row("claude-fable-5", M, 64_000, false, false),
    row("claude-mythos-5-2", M, 128_000, false, false),
    row("claude-mythos-5-1", M, 64_000, false, false),
    row("claude-mythos-5", M, 64_000, false, false),
    row("claude-mythos-preview", M, 32_000, false, false),
    row("claude-3-7-sonnet", K200, 32_000, true, false),
    row("claude-3-5-sonnet", K200, 8_192, true, false),
    row("claude-3-5-haiku", K200, 8_192, true, false),
];

/// First-party ids that name a row under another spelling (Claude Code's `first_party` ids).
const CLAUDE_ALIASES: &[(&str, &str)] =
    &[("claude-opus-4", "claude-opus-4-0"), ("claude-sonnet-4", "claude-sonnet-4-0")];

/// Codex 0.171.0's embedded model list (`context_window`). The window baton uses is
/// Codex's usable one, 95 % of it, as Codex itself reports in its rollout
/// (`model_context_window`).
pub const CODEX_TABLE: &[(&str, u64)] = &[
    ("gpt-6.2-sol", 500_000),
    ("gpt-6.1-sol", 500_000),
    ("gpt-6.1-terra", 500_000),
    ("gpt-6.2-astra", 272_000),
    ("gpt-6-astra", 272_000),
    ("gpt-6-sol", 272_000),
    ("gpt-6-luna", 272_000),
    ("gpt-5.6-sol", 272_000),
    ("gpt-5.6-terra", 272_000),
    ("gpt-5.6-luna", 272_000),
    ("gpt-5.5", 272_000),
    ("gpt-daybreak-blue-latest", 272_000),
    ("gpt-daybreak-red-latest", 372_000),
    ("codex-auto-review", 272_000),
];

/// Codex's usable share of a model's window (`effective_context_window_percent`).
pub const CODEX_USABLE_PCT: u64 = crate::host::CODEX_USABLE_PCT;

/// Gemini CLI 0.61.0's `tokenLimit()`: these two, else 1,048,576 for every model.
pub const GEMINI_TABLE: &[(&str, u64)] = &[("gemma-4-31b-it", 256_000), ("gemma-4-26b-a4b-it", 256_000)];
/// Gemini CLI's window for every model it does not list.
pub const GEMINI_DEFAULT_WINDOW: u64 = 1_048_576;

/// A model id as Claude Code matches it: lower case, no provider path or
/// `<region>.anthropic.` prefix, dots between version digits as dashes, no `[1m]`, and
/// no date stamp or version trailer (`-20250929`, `@20250929`, `-v1@…`, `-v2:0`,
/// `-fast`, `-latest`). Returns the id and whether it had `[1m]` (pure).
pub fn normalise(model: &str) -> (String, bool) {
    let mut id = model.trim().to_ascii_lowercase();
    let mut one_m = false;
    for suffix in ["[1m]", "[2m]"] {
        if let Some(stripped) = id.strip_suffix(suffix) {
            one_m |= suffix == "[1m]";
            id = stripped.to_string();
        }
    }
    if let Some(slash) = id.rfind('/') {
        id = id[slash + 1..].to_string();
    }
    if let Some(at) = id.find("anthropic.") {
        let region = &id[..at];
        if region.is_empty()
            || region.trim_end_matches('.').chars().all(|c| c.is_ascii_lowercase() || c == '-')
        {
            id = id[at + "anthropic.".len()..].to_string();
        }
    }
    if !id.starts_with("claude") {
        return (id, one_m);
    }
    // claude-opus-4.7 → claude-opus-4-7
    let bytes: Vec<char> = id.chars().collect();
    id = bytes
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let digit = |j: usize| bytes.get(j).is_some_and(char::is_ascii_digit);
            if *c == '.' && i > 0 && digit(i - 1) && digit(i + 1) { '-' } else { *c }
        })
        .collect();
    (strip_trailer(&id).to_string(), one_m)
}

/// Drops a trailing `-vN[:M]`, a date stamp (`-YYYYMMDD`, `@YYYYMMDD`, `-vN@YYYYMMDD`), then
/// `-latest` / `-fast`.
fn strip_trailer(id: &str) -> &str {
    let mut id = id;
    let is_version = |s: &str| {
        let s = s.strip_prefix('v').unwrap_or("");
        let (major, minor) = s.split_once(':').unwrap_or((s, "0"));
        (1..=3).contains(&major.len())
            && major.chars().all(|c| c.is_ascii_digit())
            && (1..=3).contains(&minor.len())
            && minor.chars().all(|c| c.is_ascii_digit())
    };
    if let Some(i) = id.rfind('-') {
        if is_version(&id[i + 1..]) {
            id = &id[..i];
        }
    }
    let is_date = |s: &str| s.len() == 8 && s.chars().all(|c| c.is_ascii_digit());
    if let Some(i) = id.rfind(['-', '@']) {
        if is_date(&id[i + 1..]) {
            let vertex = id.as_bytes()[i] == b'@';
            id = &id[..i];
            // Bedrock's `-v1@20250101`.
            if let Some(j) = id.rfind('-').filter(|_| vertex) {
                if is_version(&id[j + 1..]) {
                    id = &id[..j];
                }
            }
        }
    }
    for tail in ["-latest", "-fast"] {
        if let Some(stripped) = id.strip_suffix(tail) {
            id = stripped;
        }
    }
    id
}

/// What the table says about a model id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableEntry {
    pub window: u64,
    /// Claude Code's row, when the id is one of its models.
    pub row: Option<ModelRow>,
    /// The id's family has both 200k and 1M members (every Claude model: a `[1m]`
    /// suffix, `CLAUDE_CODE_DISABLE_1M_CONTEXT` or the API's served capabilities decide
    /// which), so the table's window is likely, not proven.
    pub likely: bool,
}

/// The table's entry for a model id: Claude ids exactly after [`normalise`] (with `[1m]`
/// and `disable_1m`, Claude Code's `CLAUDE_CODE_DISABLE_1M_CONTEXT`), Codex slugs and
/// Gemma ids exactly, and Gemini CLI's own rule for every `gemini-` id (pure).
pub fn table_entry(model: &str, disable_1m: bool) -> Option<TableEntry> {
    let (id, one_m) = normalise(model);
    if id.starts_with("claude") {
        let canonical =
            CLAUDE_ALIASES.iter().find(|(alias, _)| *alias == id).map_or(id.as_str(), |(_, to)| to);
        let row = CLAUDE_TABLE.iter().find(|r| r.id == canonical).copied();
        let window = match row {
            _ if disable_1m => K200,
            Some(r) if one_m && r.suffix_1m => M,
            Some(r) => r.window,
            // An id Claude Code does not know gets 1M there; with `[1m]` that is what the
            // user asked for, without it baton does not guess.
            None if one_m => M,
            None => return None,
        };
        // `[1m]` on a model that takes it is the user's own choice of window: a fact.
        let asked_for_1m = one_m && !disable_1m && row.is_none_or(|r| r.suffix_1m);
        return Some(TableEntry { window, row, likely: !asked_for_1m });
    }
    if let Some((_, raw)) = CODEX_TABLE.iter().find(|(slug, _)| *slug == id) {
        return Some(TableEntry { window: raw * CODEX_USABLE_PCT / 100, row: None, likely: false });
    }
    if let Some((_, window)) = GEMINI_TABLE.iter().find(|(gemma, _)| *gemma == id) {
        return Some(TableEntry { window: *window, row: None, likely: false });
    }
    if id.starts_with("gemini-") {
        return Some(TableEntry { window: GEMINI_DEFAULT_WINDOW, row: None, likely: false });
    }
    None
}

/// The id Claude Code keys a model's settings by (`modelSettings.<id>`): normalised,
/// aliases resolved to the catalog's id (pure).
pub fn canonical_id(model: &str) -> String {
    let (id, _) = normalise(model);
    CLAUDE_ALIASES.iter().find(|(alias, _)| *alias == id).map_or(id, |(_, to)| to.to_string())
}

/// The window the table gives a model id (no `CLAUDE_CODE_DISABLE_1M_CONTEXT`).
#[cfg(test)]
pub fn table_window(model: &str) -> Option<u64> {
    table_entry(model, false).map(|e| e.window)
}

/// Claude Code's row for a model id, when it has one.
pub fn claude_row(model: &str) -> Option<ModelRow> {
    table_entry(model, false).and_then(|e| e.row)
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
    /// Claude Code's `CLAUDE_CODE_DISABLE_1M_CONTEXT`: its table windows are 200k.
    pub disable_1m: bool,
}

/// Chooses the window (pure). When the tokens already exceed it, the window is at least
/// the next larger known size.
pub fn choose_window(facts: &WindowFacts, tokens: Option<u64>) -> (u64, WindowSource) {
    let known = [
        (facts.statusline, WindowSource::Statusline),
        (facts.remembered, WindowSource::Remembered),
        (facts.host, WindowSource::Host),
        (facts.configured, WindowSource::Config),
        facts.model.and_then(|m| table_entry(m, facts.disable_1m)).map_or((None, WindowSource::Table), |e| {
            (Some(e.window), if e.likely { WindowSource::Likely } else { WindowSource::Table })
        }),
    ];
    let (window, source) = known
        .into_iter()
        .find_map(|(w, s)| w.filter(|w| *w > 0).map(|w| (w, s)))
        .unwrap_or((facts.default.max(1), WindowSource::Default));
    match tokens {
        Some(tokens) if tokens > window => {
            // With no host's windows, the default host's: what tokens beyond an assumed
            // window prove.
            let candidates =
                if facts.host_windows.is_empty() { HostKind::DEFAULT.windows() } else { facts.host_windows };
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
#[cfg(test)]
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
    /// Where the host compacts in this window (Claude Code's formula for a Claude model;
    /// see [`crate::metrics::with_compaction_points`]), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compacts_at: Option<u64>,
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
            compacts_at: None,
        })
        .collect();
    known.extend(configured.iter().map(|(model, tokens)| KnownWindow {
        model: model.clone(),
        tokens: *tokens,
        source: WindowSource::Config,
        compacts_at: None,
    }));
    known
}

/// The windows known, for people (`baton config`).
pub fn describe_known(known: &[KnownWindow], default: u64) -> String {
    let mut out = String::from(
        "model windows (status line > remembered > host record > models.<id>.window > table > default):\n",
    );
    // Model ids come from transcripts and configuration files: shown, never raw.
    let models: Vec<String> = known.iter().map(|k| outside(&k.model).to_string()).collect();
    let width = models.iter().map(|m| m.len()).max().unwrap_or(0);
    for (k, model) in known.iter().zip(&models) {
        let compacts = k.compacts_at.map(|p| format!(", compacts at {p}")).unwrap_or_default();
        out.push_str(&format!("  {model:<width$}  {:>9}  {}{compacts}\n", k.tokens, k.source.describe()));
    }
    let mut table: Vec<String> =
        CLAUDE_TABLE.iter().map(|r| format!("{} {}", r.id, super::short_tokens(r.window))).collect();
    table.extend(
        CODEX_TABLE
            .iter()
            .map(|(slug, raw)| format!("{slug} {}", super::short_tokens(raw * CODEX_USABLE_PCT / 100))),
    );
    table.extend(GEMINI_TABLE.iter().map(|(id, w)| format!("{id} {}", super::short_tokens(*w))));
    table.push(format!("gemini-* {}", super::short_tokens(GEMINI_DEFAULT_WINDOW)));
    out.push_str(&format!(
        "  table (exact ids; Claude ids after dropping [1m] and date stamps): {}\n",
        table.join(", ")
    ));
    out.push_str(&format!("  otherwise: {default} tokens, assumed (no CRITICAL handoff rests on it)\n"));
    out
}

/// How many ids the table knows.
pub fn table_len() -> usize {
    CLAUDE_TABLE.len() + CODEX_TABLE.len() + GEMINI_TABLE.len()
}

/// One line for `baton doctor`: the windows known.
pub fn doctor_line(known: &[KnownWindow], default: u64) -> String {
    let listed: Vec<String> = known
        .iter()
        .map(|k| {
            let compacts = k
                .compacts_at
                .map(|p| format!(", compacts at {}", super::short_tokens(p)))
                .unwrap_or_default();
            format!("{} {} ({}{compacts})", k.model, super::short_tokens(k.tokens), k.source.describe())
        })
        .collect();
    let listed =
        if listed.is_empty() { "none remembered or configured".to_string() } else { listed.join(", ") };
    format!("{listed}; {} ids in the table; otherwise {} assumed", table_len(), super::short_tokens(default))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_in_the_table_matches_itself_exactly() {
        for row in CLAUDE_TABLE {
            let entry = table_entry(row.id, false).unwrap();
            assert_eq!((entry.window, entry.row), (row.window, Some(*row)), "{}", row.id);
            assert!(entry.likely, "{}: Claude's family has 200k and 1M members", row.id);
            let one_m = table_window(&format!("{}[1m]", row.id)).unwrap();
            assert_eq!(one_m, if row.suffix_1m { M } else { row.window }, "{}[1m]", row.id);
            let asked = table_entry(&format!("{}[1m]", row.id), false).unwrap();
            assert_eq!(asked.likely, !row.suffix_1m, "{}[1m]: the user's own choice is a fact", row.id);
            assert_eq!(table_entry(row.id, true).unwrap().window, K200, "{} with DISABLE_1M", row.id);
        }
        for (slug, raw) in CODEX_TABLE {
            assert_eq!(table_window(slug), Some(raw * 95 / 100), "{slug}");
        }
        for (id, window) in GEMINI_TABLE {
            assert_eq!(table_window(id), Some(*window), "{id}");
        }
    }

    #[test]
    fn the_ids_the_hosts_send() {
        // Native 1M without a suffix (Claude Code 2.1.332's catalog).
        for id in [
            "claude-opus-4-7",
            "claude-opus-4-8",
            "claude-opus-5",
            "claude-opus-5-5",
            "claude-sonnet-5",
            "claude-sonnet-5-5",
            "claude-fable-5",
            "claude-fable-5-2",
            "claude-haiku-5-5",
            "claude-mythos-preview",
        ] {
            assert_eq!(table_window(id), Some(1_000_000), "{id}");
        }
        // Date stamps, Vertex/Bedrock forms, dots, case.
        assert_eq!(table_window("claude-opus-4-7-20260416"), Some(1_000_000));
        assert_eq!(table_window("claude-opus-4-7@20260416"), Some(1_000_000));
        assert_eq!(table_window("us.anthropic.claude-opus-4-7"), Some(1_000_000));
        assert_eq!(table_window("Claude-Opus-4.7"), Some(1_000_000));
        assert_eq!(table_window("anthropic.claude-sonnet-4-5-20250929-v1:0"), Some(200_000));
        assert_eq!(table_window("claude-sonnet-4-5-v1@20250929"), Some(200_000));
        assert_eq!(table_window("claude-sonnet-4-5-20250929"), Some(200_000));
        assert_eq!(table_window("claude-sonnet-4-20250514"), Some(200_000));
        assert_eq!(table_window("claude-opus-4-5-20251101"), Some(200_000));
        assert_eq!(table_window("claude-haiku-4-5-20251001"), Some(200_000));
        assert_eq!(table_window("claude-3-5-haiku-20241022"), Some(200_000));
        assert_eq!(table_window("claude-sonnet-4-6"), Some(200_000));
        assert_eq!(table_window("claude-opus-4-6[1m]"), Some(1_000_000));
        assert_eq!(table_window("claude-sonnet-4-5[1m]"), Some(1_000_000));
        assert_eq!(table_window("claude-opus-4-7[1m]"), Some(1_000_000));
        // No prefix swallows a new model.
        assert_eq!(table_window("claude-opus-4-9"), None);
        assert_eq!(table_window("claude-sonnet-4-7"), None);
        assert_eq!(table_window("claude-future-9"), None);
        assert_eq!(table_window("claude-opus-4-7-turbo"), None);
        assert_eq!(table_window("claude-future-9[1m]"), Some(1_000_000));
        assert_eq!(table_window("mock-model"), None);
        // Codex and Gemini.
        assert_eq!(table_window("gpt-5.5"), Some(258_400));
        assert_eq!(table_window("gpt-6.2-sol"), Some(475_000));
        assert_eq!(table_window("gpt-5-codex"), None);
        assert_eq!(table_window("gemini-2.5-flash"), Some(1_048_576));
        assert_eq!(table_window("gemini-3-pro-preview"), Some(1_048_576));
        assert_eq!(table_window("gemma-4-31b-it"), Some(256_000));
        assert_eq!(table_entry("gemini-2.5-flash", false).map(|e| e.likely), Some(false));
        assert_eq!(canonical_id("claude-sonnet-4-5-20250929"), "claude-sonnet-4-5");
        assert_eq!(canonical_id("claude-opus-4-6[1m]"), "claude-opus-4-6");
        assert_eq!(canonical_id("claude-sonnet-4-20250514"), "claude-sonnet-4-0");
    }

    #[test]
    fn facts_come_before_the_table_and_the_default_is_last() {
        let base = WindowFacts { model: Some("claude-opus-5-5"), default: 200_000, ..Default::default() };
        assert_eq!(choose_window(&base, Some(132_000)), (1_000_000, WindowSource::Likely));
        let disabled = WindowFacts { disable_1m: true, ..base.clone() };
        assert_eq!(choose_window(&disabled, Some(132_000)), (200_000, WindowSource::Likely));
        let gemini = WindowFacts { model: Some("gemini-2.5-flash"), ..base.clone() };
        assert_eq!(choose_window(&gemini, None), (1_048_576, WindowSource::Table));
        assert!(!WindowSource::Table.is_fact() && !WindowSource::Likely.is_fact());
        assert!(WindowSource::Remembered.is_fact() && WindowSource::Host.is_fact());
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
        let codex = WindowFacts { host_windows: HostKind::Codex.windows(), ..unknown.clone() };
        assert_eq!(choose_window(&codex, Some(250_000)), (258_400, WindowSource::Proven));
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
