//! Gemini CLI: no hook payload carries a figure; the chat recording at `transcript_path`
//! (JSONL, `transcript::gemini`) does, one `{"type": "gemini", "tokens": {"input": N, …},
//! "model": …}` line per reply, where `input` is the whole prompt. Its models have
//! 1,048,576-token windows. It compresses the history once the prompt reaches
//! `model.compressionThreshold` (settings: `~/.gemini/settings.json`, then the project's
//! `.gemini/settings.json`; default 0.5) of the window. It fires `PreCompress` before
//! every model call, compressing or not: only a PreCompress at or past that point is a
//! compaction.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::spec::{
    Compaction, CompactionBrief, CompactionEnd, EventSpec, FigureSource, Grammar, Install, InstallFacts,
    PauseStop, RecordQuery, Recorded, Spec, TrustFacts, TrustFinding,
};
use super::{HookInput, Host, Places, Scope};
use crate::fsx;
use crate::transcript::Format;

/// Gemini CLI.
pub struct GeminiCli;

pub const SPEC: Spec = Spec {
    id: "gemini",
    name: "Gemini CLI",
    flag_help: "Gemini CLI",
    events: &[
        EventSpec::new("AfterTool", None),
        // Answered only while the pause stops the agent (its stop comes before the call).
        EventSpec::new("BeforeTool", None),
        EventSpec::new("BeforeAgent", None),
        // Silent: where the pause stopped the agent, the handoff is written again at the
        // turn's end, once the last grace call's output is in the chat recording.
        EventSpec::new("AfterAgent", None),
        EventSpec::new("SessionStart", None),
        EventSpec::new("PreCompress", None),
        EventSpec::new("SessionEnd", None),
    ],
    // Milliseconds (Gemini's unit).
    hook_timeout: 10_000,
    install: Install::Settings,
    project_folder: ".gemini",
    project_folder_is_common: false,
    settings_file: "settings.json",
    local_settings_file: None,
    statusline: None,
    subagent_statusline: false,
    enabled_plugins: false,
    disable_all_hooks: None,
    env_marks: &[],
    windows: &[256_000, 1_048_576],
    figure_source: FigureSource::Record,
    figure_words: " (This figure was read from the session's transcript: Gemini CLI's chat recording.)",
    reply_wait: None,
    own_meter: None,
    transcript: Format::GeminiChat,
    sends_messages: false,
    // It does in 0.61.0, at BeforeTool and AfterTool alike (the call ends with
    // `stop_execution`; `gemini -p` prints "Agent execution stopped: <reason>" and exits
    // 0, the interactive UI shows that line and stops responding; seen on the real CLI,
    // read in its bundle).
    honours_stop: true,
    // At an AfterTool the stop takes the place of the call's output in the history (and
    // the model's next request), so the next context would not know the call ran; at the
    // next call's BeforeTool the turn ends before that call runs.
    pause_stop: PauseStop::BeforeTheNextCall,
    answers_stop: false,
    // Every hook's `systemMessage` is shown in the interactive UI (0.61.0).
    shows_system_message: true,
    emits_terminal_sequence: false,
    context_at_top_level: false,
    brief_on_first_prompt: false,
    compaction_brief: CompactionBrief::AtSessionStart,
    pre_compact_blocks: false,
    headless: Grammar {
        subcommands: &[],
        switches: &[],
        prompt_options: &["-p", "--prompt"],
        positional_headless_unless: None,
        positional_joined: false,
        values: &[
            "--model",
            "-m",
            "--output-format",
            "-o",
            "--approval-mode",
            "--allowed-tools",
            "--include-directories",
            "-e",
            "--extensions",
            "--allowed-mcp-server-names",
        ],
        arrays: &[],
    },
    interactive_relay: false,
};

impl Host for GeminiCli {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }

    /// Gemini's own event names, or no name with `GEMINI_API_KEY` set (GSD's fallback for
    /// old versions), are sure; a `timestamp` field alone is a hint.
    fn detect(&self, input: &HookInput, gemini_key_set: bool) -> u8 {
        match input.hook_event_name.as_deref() {
            Some("AfterTool" | "BeforeTool" | "PreCompress" | "BeforeAgent" | "AfterAgent") => 3,
            None if gemini_key_set => 3,
            _ if input.timestamp.is_some() => 1,
            _ => 0,
        }
    }

    fn record(&self, query: &RecordQuery) -> Option<Recorded> {
        let reading = crate::transcript::read_figure(SPEC.transcript, query.transcript?, query.mark)?;
        Some(Recorded {
            tokens: reading.tokens,
            model: reading.model.or_else(|| query.model.map(str::to_string)),
            window: None,
            written_at: reading.written_at,
            current: true,
        })
    }

    /// At the compression threshold of the window (the project's settings over the user's).
    fn compaction(
        &self,
        window: Option<u64>,
        project: Option<&Path>,
        _model_key: Option<&str>,
    ) -> Compaction {
        match window {
            Some(window) => Compaction::At(
                compression_point(window, compression_threshold(project)),
                CompactionEnd::Compression,
            ),
            None => Compaction::Unknown,
        }
    }

    /// Gemini CLI fires PreCompress before every model call: only a manual one, or one
    /// with the prompt at or past the compression point, is a compaction.
    fn is_real_compaction(
        &self,
        trigger: Option<&str>,
        used_tokens: Option<u64>,
        window: Option<u64>,
        project: Option<&Path>,
    ) -> bool {
        let point = window.map(|w| compression_point(w, compression_threshold(project))).unwrap_or(u64::MAX);
        is_real_compression(trigger, used_tokens, point)
    }

    fn install_notes(&self, facts: &InstallFacts) -> Vec<String> {
        let project = facts.places.project.as_deref().filter(|_| facts.scope == Scope::Project);
        project
            .and_then(|project| untrusted_project_note(project, facts.places))
            .map(|note| format!("! {note}"))
            .into_iter()
            .collect()
    }

    /// Folder trust, when baton's hooks are in this project's `.gemini/settings.json`:
    /// they run only in a folder Gemini CLI trusts.
    fn trust_findings(&self, facts: &TrustFacts) -> Vec<TrustFinding> {
        let in_project = facts.files.iter().any(|f| f.scope == Scope::Project && f.registers_baton);
        let Some(project) = facts.places.project.as_deref().filter(|_| in_project) else { return Vec::new() };
        let name = "folder trust (Gemini CLI)";
        vec![match untrusted_project_note(project, facts.places) {
            Some(note) => TrustFinding::warn(
                name,
                note,
                "trust the folder in Gemini CLI (it asks at start; /permissions later)",
            ),
            None => TrustFinding::ok(
                name,
                "Gemini CLI runs this project's hooks (a trusted folder, or folder trust off)",
            ),
        }]
    }
}

/// Gemini CLI compresses at this fraction of the window unless its settings say otherwise.
const DEFAULT_COMPRESSION_THRESHOLD: f64 = 0.5;
const SETTINGS_LIMIT: u64 = 1024 * 1024;

/// `model.compressionThreshold` from a settings file's text, when valid (pure).
fn threshold_from_settings(bytes: &[u8]) -> Option<f64> {
    let value = serde_json::from_slice::<Value>(bytes).ok()?;
    value.pointer("/model/compressionThreshold").and_then(Value::as_f64).filter(|t| *t > 0.0 && *t <= 1.0)
}

/// The compression threshold in force: the project's settings over the user's, else the
/// default.
fn compression_threshold(project: Option<&Path>) -> f64 {
    let read =
        |path: &Path| fsx::read_limited(path, SETTINGS_LIMIT).ok().and_then(|b| threshold_from_settings(&b));
    let project = project.and_then(|p| read(&p.join(SPEC.project_folder).join(SPEC.settings_file)));
    let places = Places::home_only();
    let user = || GeminiCli.home(&places).and_then(|h| read(&h.join(SPEC.settings_file)));
    project.or_else(user).unwrap_or(DEFAULT_COMPRESSION_THRESHOLD)
}

/// Whether Gemini CLI trusts the folder `location` by the rules of its
/// `trustedFolders.json` (pure): the longest matching rule wins; `TRUST_FOLDER` covers the
/// folder and everything below it, `TRUST_PARENT` its parent's, `DO_NOT_TRUST` distrusts.
/// `None` when no rule matches (untrusted while folder trust is on).
fn folder_trusted(rules: &Value, location: &Path) -> Option<bool> {
    let rules = rules.as_object()?;
    let mut best: Option<(usize, &str)> = None;
    for (rule_path, level) in rules {
        let Some(level) = level.as_str() else { continue };
        let rule = Path::new(rule_path);
        let effective = if level == "TRUST_PARENT" { rule.parent().unwrap_or(rule) } else { rule };
        if location.starts_with(effective) && best.is_none_or(|(len, _)| rule_path.len() > len) {
            best = Some((rule_path.len(), level));
        }
    }
    match best?.1 {
        "DO_NOT_TRUST" => Some(false),
        "TRUST_FOLDER" | "TRUST_PARENT" => Some(true),
        _ => None,
    }
}

/// What `install --scope project` and `doctor` say when Gemini CLI will not run the
/// project's hooks: folder trust is on (`security.folderTrust.enabled`, on by default) and
/// `project` is not a trusted folder. `None` when the hooks will run.
fn untrusted_project_note(project: &Path, places: &Places) -> Option<String> {
    let read = |path: &Path| {
        fsx::read_through_symlink(path, SETTINGS_LIMIT)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
    };
    let gemini_home = GeminiCli.home(places)?;
    let enabled = read(&gemini_home.join(SPEC.settings_file))
        .and_then(|s| s.pointer("/security/folderTrust/enabled").and_then(Value::as_bool))
        .unwrap_or(true);
    if !enabled {
        return None;
    }
    let rules_path = std::env::var_os("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| gemini_home.join("trustedFolders.json"));
    let location = crate::platform::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
    let trusted = read(&rules_path).and_then(|rules| folder_trusted(&rules, &location));
    (trusted != Some(true)).then(|| {
        format!(
            "Gemini CLI runs a project's hooks (.gemini/settings.json) only in a folder you trust, and {} is not trusted: start `gemini` there and trust the folder when it asks (or later with /permissions), or install in user scope (`baton install --host gemini`).",
            location.display()
        )
    })
}

/// The token count where Gemini CLI compresses a `window`-token conversation.
fn compression_point(window: u64, threshold: f64) -> u64 {
    (window as f64 * threshold).round() as u64
}

/// Whether a PreCompress is a real compression (pure): a manual `/compress` always is;
/// an automatic one only when the prompt has reached the compression point. With no
/// figure there is nothing to compress.
fn is_real_compression(trigger: Option<&str>, tokens: Option<u64>, point: u64) -> bool {
    trigger == Some("manual") || tokens.is_some_and(|t| t >= point)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_trust_follows_gemini_clis_longest_rule() {
        let rules = serde_json::json!({
            "/work": "TRUST_FOLDER",
            "/work/secret": "DO_NOT_TRUST",
            "/home/u/repos/app": "TRUST_PARENT",
        });
        assert_eq!(folder_trusted(&rules, Path::new("/work/app")), Some(true));
        assert_eq!(folder_trusted(&rules, Path::new("/work/secret/x")), Some(false));
        assert_eq!(folder_trusted(&rules, Path::new("/home/u/repos/other")), Some(true), "the parent's");
        assert_eq!(folder_trusted(&rules, Path::new("/home/u")), None);
        assert_eq!(folder_trusted(&rules, Path::new("/workbench")), None, "a path, not a prefix");
    }

    #[test]
    fn thresholds_and_points() {
        assert_eq!(threshold_from_settings(br#"{"model": {"compressionThreshold": 0.7}}"#), Some(0.7));
        assert_eq!(threshold_from_settings(br#"{"model": {"compressionThreshold": 7}}"#), None);
        assert_eq!(threshold_from_settings(b"{}"), None);
        assert_eq!(compression_point(1_048_576, 0.5), 524_288);
    }

    #[test]
    fn only_a_prompt_at_the_point_is_compressed() {
        assert!(!is_real_compression(Some("auto"), Some(100_000), 524_288));
        assert!(!is_real_compression(Some("auto"), None, 524_288));
        assert!(is_real_compression(Some("auto"), Some(524_288), 524_288));
        assert!(is_real_compression(Some("manual"), Some(10), 524_288));
    }
}
