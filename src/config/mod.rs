//! Configuration: built-in defaults < user file < GSD's `.planning/config.json` opt-out <
//! project file < environment, read once per process.
//!
//! Every key is declared once in [`keys`] (name, type, default, environment variable,
//! trust, meaning); [`layers`] resolves the layers as a pure function over plain data, so
//! layering and bad values are tested without files; [`Config::load`] only gathers them.
//! A bad value never breaks a hook: it is reported, and that key takes its value from the
//! next layer down (ultimately the default).

pub mod keys;
pub mod layers;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::{fsx, places};

pub use keys::{KEYS, KeySpec, OnCritical, Settings};
pub use layers::{
    Entry, FileError, Layer, ModelWindow, RawValue, Resolved, Source, env_layer, parse_file,
    parse_gsd_planning, resolve_all, resolve_model_windows,
};

use layers::show_value;

/// The effective configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Every key with its value and source. Left empty until asked for when nothing was
    /// set (no file, no variable): then every key is its default, and the hook, which
    /// reads only `typed`, does not pay for building it.
    entries: std::sync::OnceLock<BTreeMap<&'static str, Entry>>,
    typed: Settings,
    /// Problems found: unparsable files, bad values, unknown keys.
    pub errors: Vec<String>,
    /// Values a repository file set that loosen safety, ignored, with where to set them.
    pub ignored: Vec<String>,
    /// The files that were looked at, and whether they existed.
    pub files: Vec<(PathBuf, bool)>,
    /// `models.<id>.window`, by model id.
    pub model_windows: BTreeMap<String, ModelWindow>,
}

/// Turns a file's bytes into a layer's values.
type LayerParser = fn(&[u8]) -> Result<BTreeMap<String, RawValue>, FileError>;

const CONFIG_FILE_LIMIT: u64 = 1024 * 1024;

/// The project's config file.
pub fn project_config_path(project: &Path) -> PathBuf {
    project.join(".claude").join("baton.json")
}

/// Files beside baton's configuration files that look like configuration baton does not
/// read (`config.toml` next to `config.json`, `.claude/baton.yaml` …): said by `baton
/// config` and `doctor` (never looked for on the hook's path).
pub fn unread_files(project: Option<&Path>) -> Vec<PathBuf> {
    const OTHER_FORMATS: &[&str] = &["toml", "yaml", "yml", "jsonc", "json5"];
    let read = places::user_config_path().into_iter().chain(project.map(project_config_path));
    read.flat_map(|path| OTHER_FORMATS.iter().map(move |ext| path.with_extension(ext)))
        .filter(|other| other.symlink_metadata().is_ok())
        .collect()
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
        let names: Vec<&'static str> = KEYS.iter().filter_map(|spec| spec.env).collect();
        let set = crate::util::env::vars_named(&names);
        layers.push(env_layer(|name| set.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone())));
        Config::load_from(layers, errors, files)
    }

    /// Resolves the layers gathered (lowest precedence first) with the problems found
    /// reading them.
    fn load_from(layers: Vec<Layer>, mut errors: Vec<String>, files: Vec<(PathBuf, bool)>) -> Config {
        if errors.is_empty() && layers.iter().all(|layer| layer.values.is_empty()) {
            return Config {
                entries: std::sync::OnceLock::new(),
                typed: Settings::default(),
                errors,
                ignored: vec![],
                files,
                model_windows: BTreeMap::new(),
            };
        }
        let mut resolved = resolve_all(&layers);
        errors.append(&mut resolved.errors);
        let (model_windows, mut window_errors) = resolve_model_windows(&layers);
        errors.append(&mut window_errors);
        resolved.errors = errors;
        Config::from_resolved(resolved, files, model_windows)
    }

    /// Defaults only, with no file or environment read (the demo, tests).
    #[cfg(test)]
    pub fn defaults() -> Config {
        Config::from_resolved(resolve_all(&[]), vec![], BTreeMap::new())
    }

    fn from_resolved(
        resolved: Resolved,
        files: Vec<(PathBuf, bool)>,
        windows: BTreeMap<String, ModelWindow>,
    ) -> Config {
        let typed = Settings::from_values(|key| resolved.settings.get(key).map(|e| e.value.clone()));
        Config {
            entries: std::sync::OnceLock::from(resolved.settings),
            typed,
            errors: resolved.errors,
            ignored: resolved.ignored,
            files,
            model_windows: windows,
        }
    }

    /// Whether `key` was set by a file or the environment (not left at its default).
    pub fn is_set(&self, key: &str) -> bool {
        self.entry_map().get(key).is_some_and(|entry| !matches!(entry.source, Source::Default))
    }

    fn entry_map(&self) -> &BTreeMap<&'static str, Entry> {
        self.entries.get_or_init(|| resolve_all(&[]).settings)
    }

    /// Every key with its value and source, in declaration order.
    pub fn entries(&self) -> impl Iterator<Item = (&'static KeySpec, &Entry)> {
        let entries = self.entry_map();
        KEYS.iter().filter_map(|spec| entries.get(spec.key).map(|s| (spec, s)))
    }

    /// Every key's effective value, typed.
    pub fn settings(&self) -> &Settings {
        &self.typed
    }

    /// `models.<id>.window`, tokens by model id.
    pub fn configured_windows(&self) -> BTreeMap<String, u64> {
        self.model_windows.iter().map(|(id, w)| (id.clone(), w.tokens)).collect()
    }

    /// The used % at which WARNING and CRITICAL start.
    pub fn thresholds_used(&self) -> [f64; 2] {
        [100.0 - self.typed.warn_remaining, 100.0 - self.typed.critical_remaining]
    }

    /// Which thresholds are in force, in words.
    pub fn threshold_mode(&self) -> String {
        let s = &self.typed;
        match (s.warn_headroom_tokens, s.critical_headroom_tokens) {
            (warn, critical) if warn > 0 && critical > 0 => format!(
                "headroom tokens: WARNING at {warn} or fewer tokens before auto-compaction, CRITICAL at {critical} (remaining % when the token count is unknown)"
            ),
            _ => format!(
                "remaining %: WARNING at {}% or less, CRITICAL at {}% or less",
                format_pct(s.warn_remaining),
                format_pct(s.critical_remaining)
            ),
        }
    }

    pub fn debounce_calls(&self) -> u32 {
        self.typed.debounce_calls as u32
    }

    pub fn stale_seconds(&self) -> u64 {
        self.typed.stale_seconds
    }

    /// `disable`: every hook stays silent.
    pub fn disabled(&self) -> bool {
        self.typed.disable
    }

    /// `context_warnings`: the monitor may inject warnings.
    pub fn context_warnings(&self) -> bool {
        self.typed.context_warnings
    }

    /// `handoff.auto`: write the handoff at CRITICAL.
    pub fn handoff_auto(&self) -> bool {
        self.typed.handoff_auto
    }

    /// `handoff.on_critical`: what follows the CRITICAL handoff.
    pub fn on_critical(&self) -> keys::OnCritical {
        self.typed.handoff_on_critical
    }

    /// `handoff.pause_grace_calls`.
    pub fn pause_grace_calls(&self) -> u32 {
        self.typed.handoff_pause_grace_calls.min(u32::MAX as u64) as u32
    }

    /// `notices.show`: a line for the user beside what the agent is told.
    pub fn notices(&self) -> bool {
        self.typed.notices_show
    }

    /// `notices.desktop`: a desktop notification at the CRITICAL handoff.
    pub fn desktop_notices(&self) -> bool {
        self.typed.notices_show && self.typed.notices_desktop
    }

    /// `handoff.auto_checkpoint`.
    pub fn auto_checkpoint(&self) -> crate::gitx::Mode {
        self.typed.handoff_auto_checkpoint
    }

    /// `handoff.pause_checkpoint`.
    pub fn pause_checkpoint(&self) -> crate::gitx::Mode {
        self.typed.handoff_pause_checkpoint
    }

    /// `checkpoint.github.auto`: push the automatic handoff to its GitHub issue.
    pub fn checkpoint_github_auto(&self) -> bool {
        self.typed.checkpoint_github_auto
    }

    /// `statusline.segments`: the segment names, in order, known names only.
    pub fn statusline_segments(&self) -> Vec<String> {
        self.typed.statusline_segments.clone()
    }

    /// `statusline.second_line`.
    pub fn statusline_second_line(&self) -> Vec<String> {
        self.typed.statusline_second_line.clone()
    }

    /// `statusline.git_cache_seconds`.
    pub fn git_cache_seconds(&self) -> u64 {
        self.typed.statusline_git_cache_seconds
    }

    /// `statusline.git_budget_ms`.
    pub fn git_budget_ms(&self) -> u64 {
        self.typed.statusline_git_budget_ms
    }

    /// `handoff.dir`, relative to the project root.
    pub fn handoff_dir(&self) -> PathBuf {
        self.typed.handoff_dir.clone()
    }

    /// `resume.trust_foreign`.
    pub fn trust_foreign(&self) -> bool {
        self.typed.resume_trust_foreign
    }

    /// `resume.stale_days`.
    pub fn stale_days(&self) -> u64 {
        self.typed.resume_stale_days
    }

    /// `statusline.wrap_timeout_ms`: how long a wrapped statusline command may run.
    pub fn wrap_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.typed.statusline_wrap_timeout_ms)
    }

    /// `statusline.wrap_append`: baton's meter follows a wrapped statusline's output.
    pub fn wrap_append(&self) -> bool {
        self.typed.statusline_wrap_append
    }

    /// The configuration as JSON for `baton config --json`.
    pub fn to_json(&self) -> Value {
        let mut values = Map::new();
        for (spec, setting) in self.entries() {
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

/// The configuration as a table for people (`baton config`).
pub fn describe_config(config: &Config) -> String {
    let mut out = String::from(
        "baton configuration (environment > project file > GSD opt-out > user file > default)\n\n",
    );
    let rows: Vec<(String, String, String)> = config
        .entries()
        .map(|(spec, setting)| (spec.key.to_string(), show_value(&setting.value), setting.source.to_string()))
        .collect();
    let key_width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    // A long value (a segment list) runs past the column instead of widening it for all.
    let value_width = rows.iter().map(|r| r.1.len()).filter(|w| *w <= 24).max().unwrap_or(0);
    for ((key, value, source), (spec, _)) in rows.iter().zip(config.entries()) {
        out.push_str(&format!("  {key:<key_width$}  {value:<value_width$}  {source}\n"));
        let env = spec.env.map(|e| format!(" (env {e})")).unwrap_or_default();
        out.push_str(&format!("  {:<key_width$}  {}{env}\n", "", spec.about));
    }
    out.push_str(&format!("\nthresholds in force: {}\n", config.threshold_mode()));
    out.push_str("\nfiles:\n");
    for (path, exists) in &config.files {
        let state = if *exists { "read" } else { "not present" };
        out.push_str(&format!("  {}  ({state})\n", crate::util::text::outside_path(path)));
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

/// A percentage as people write it: one decimal at most, none when whole.
// The same rounding as `metrics::format_pct`; both belong in util/text.
fn format_pct(pct: f64) -> String {
    let rounded = (pct * 10.0).round() / 10.0;
    if rounded.fract() == 0.0 { format!("{}", rounded as i64) } else { format!("{rounded:.1}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::keys::DEFAULT_SEGMENTS;
    use crate::config::layers::{model_window_key, resolve};

    fn file_layer(source: Source, json: &str) -> Layer {
        Layer { source, values: parse_file(json.as_bytes()).unwrap() }
    }

    /// The load that finds nothing set skips resolving: its typed settings must be what
    /// resolving no layer gives, and its entries every key at its default.
    #[test]
    fn nothing_set_is_every_default() {
        let resolved = resolve_all(&[]);
        let from_layers = Settings::from_values(|key| resolved.settings.get(key).map(|e| e.value.clone()));
        assert_eq!(Settings::default(), from_layers);
        let config = Config::load_from(vec![], vec![], vec![]);
        assert_eq!(config.settings(), &from_layers);
        assert_eq!(config.entries().count(), KEYS.len());
        assert!(config.entries().all(|(_, entry)| entry.source == Source::Default));
        assert!(!config.is_set("warn_remaining"));
    }

    #[test]
    fn defaults_match_gsd() {
        let config = Config::defaults();
        assert_eq!(config.settings().warn_remaining, 35.0);
        assert_eq!(config.settings().critical_remaining, 25.0);
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
        assert_eq!(config.statusline_segments(), DEFAULT_SEGMENTS);
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
    fn env_booleans() {
        for (text, expected) in [("1", true), ("true", true), ("0", false), ("off", false)] {
            let env = env_layer(|v| (v == "BATON_DISABLE").then(|| text.to_string()));
            let (settings, _) = resolve(&[env]);
            assert_eq!(settings["disable"].value, Value::from(expected), "{text}");
        }
    }
}
