//! A host defined for the tests only, as a new host would be: this file, its variant
//! (`HostKind::Test`) and its row in `HostKind::host`. Its tests drive what the rest of
//! baton does with a host (detection, the hook's envelope, install's files, the relay's
//! command line, doctor's checks) and need nothing outside this folder.

use std::path::PathBuf;

use super::spec::{
    CompactionBrief, EventSpec, FigureSource, Grammar, Install, InstallFacts, PauseStop, Payload,
    RecordQuery, Recorded, Spec, Statusline, TrustFacts, TrustFinding,
};
use super::{HookInput, Host, Places};
use crate::transcript::Format;

/// A host that exists only in the tests.
pub struct TestHost;

pub const SPEC: Spec = Spec {
    id: "testhost",
    name: "Test Host",
    flag_help: "Test Host",
    events: &[
        EventSpec::new("PostToolUse", Some("*")),
        EventSpec::new("SessionStart", None),
        EventSpec::new("PreCompact", None),
    ],
    hook_timeout: 7,
    install: Install::Settings,
    project_folder: ".testhost",
    project_folder_is_common: false,
    settings_file: "hooks.json",
    local_settings_file: None,
    statusline: Some(Statusline {
        pointer: "/testhost/statusLine",
        file: None,
        payload: Payload::CLAUDE_SHAPED,
    }),
    subagent_statusline: false,
    enabled_plugins: false,
    disable_all_hooks: None,
    env_marks: &["TESTHOST_PROJECT_DIR"],
    windows: &[100_000],
    figure_source: FigureSource::Record,
    figure_words: " (This figure was reported by the test host.)",
    reply_wait: None,
    own_meter: None,
    transcript: Format::ClaudeCode,
    sends_messages: false,
    honours_stop: true,
    pause_stop: PauseStop::AtTheCall,
    answers_stop: false,
    shows_system_message: true,
    emits_terminal_sequence: false,
    context_at_top_level: false,
    brief_on_first_prompt: false,
    compaction_brief: CompactionBrief::AtSessionStart,
    pre_compact_blocks: false,
    headless: Grammar {
        subcommands: &["go"],
        switches: &[],
        prompt_options: &[],
        positional_headless_unless: None,
        positional_joined: false,
        values: &["--model"],
        arrays: &[],
    },
    interactive_relay: false,
};

impl Host for TestHost {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }

    /// Its events say nothing of their own: its environment mark tells it apart, as Qwen
    /// Code's does.
    fn detect(&self, _input: &HookInput, _gemini_key_set: bool) -> u8 {
        0
    }

    fn home(&self, places: &Places) -> Option<PathBuf> {
        places.home.as_ref().map(|h| h.join(".testhost-home"))
    }

    /// Its figure is the event's model field read as tokens ("120000"): a record only a
    /// test host keeps.
    fn record(&self, query: &RecordQuery) -> Option<Recorded> {
        let tokens = query.model?.parse().ok()?;
        Some(Recorded { tokens, model: None, window: Some(100_000), written_at: None, current: true })
    }

    fn install_notes(&self, _facts: &InstallFacts) -> Vec<String> {
        vec!["Test Host runs every hook.".to_string()]
    }

    fn trust_findings(&self, _facts: &TrustFacts) -> Vec<TrustFinding> {
        vec![TrustFinding::ok("trust (Test Host)", "Test Host runs every hook; nothing to do")]
    }
}

/// Each test asks a part of baton that deals with hosts to deal with this one. None of
/// them names it outside this folder: and since `HostKind::Test` compiles for the tests
/// with no `match` arm anywhere else, nothing outside `host/` matches on hosts at all.
#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use serde_json::{Value, json};

    use crate::host::{HookInput, HostChoice, HostKind, Places, Scope};
    use crate::metrics::{self, Level, Origin};

    const SESSION: &str = "testhost-session-never-bridged-0001";

    #[test]
    fn it_is_told_apart_by_its_environment_and_named_by_its_id() {
        assert_eq!(HostKind::from_env(&|name| name == "TESTHOST_PROJECT_DIR"), Some(HostKind::Test));
        assert_eq!(HostKind::from_id("testhost"), Some(HostKind::Test));
        assert_eq!(HostChoice::from_id("testhost"), Some(HostChoice::One(HostKind::Test)));
        assert!(HostKind::ALL.contains(&HostKind::Test));
        let input: HookInput = serde_json::from_str(r#"{"hook_event_name": "PostToolUse"}"#).unwrap();
        assert_eq!(HostKind::detect(&input, false), HostKind::DEFAULT, "its events claim nothing");
    }

    #[test]
    fn its_settings_live_where_its_value_says() {
        let places = Places { home: Some("/h".into()), project: Some("/p".into()), ..Places::default() };
        assert_eq!(
            places.settings_path(HostKind::Test, Scope::User).unwrap(),
            PathBuf::from("/h/.testhost-home/hooks.json")
        );
        assert_eq!(
            places.settings_path(HostKind::Test, Scope::Project).unwrap(),
            PathBuf::from("/p/.testhost/hooks.json")
        );
        assert!(places.settings_path(HostKind::Test, Scope::Local).is_err());
        assert_eq!(HostKind::Test.scopes(), [Scope::User, Scope::Project]);
    }

    fn installed() -> Value {
        use crate::install::merge::{self, Plan, Record};
        let plan = Plan {
            host: HostKind::Test,
            binary: "/opt/bin/baton".into(),
            hooks: true,
            statusline: true,
            replace_statusline: false,
            replace_other_monitors: false,
            subagent_rows: false,
        };
        merge::install(&json!({}), &plan, &Record::default()).unwrap().settings
    }

    #[test]
    fn install_registers_its_events_and_statusline_and_doctor_checks_them() {
        let settings = installed();
        for event in ["PostToolUse", "SessionStart", "PreCompact"] {
            let hook = &settings["hooks"][event][0]["hooks"][0];
            assert_eq!(hook["command"], "/opt/bin/baton hook", "{settings}");
            assert_eq!(hook["timeout"], 7, "its own timeout");
        }
        assert_eq!(
            settings["testhost"]["statusLine"]["command"],
            "/opt/bin/baton statusline --host testhost"
        );

        use crate::doctor::{Facts, FileState, SettingsFile, Status, analyse_settings};
        let file = SettingsFile {
            host: HostKind::Test,
            scope: Scope::User,
            path: PathBuf::from("/h/.testhost-home/hooks.json"),
            shown: "~/.testhost-home/hooks.json".into(),
            state: FileState::Parsed(settings),
        };
        let resolve = |program: &str| Some(program.to_string());
        let facts = Facts { this: "/opt/bin/baton", me: "baton", home: Some("/h"), resolve: &resolve };
        let checks = analyse_settings(&[file], &[HostKind::Test], &facts);
        let named = |name: &str| {
            checks.iter().find(|c| c.check == name).unwrap_or_else(|| panic!("{name}: {checks:?}"))
        };
        assert_eq!(named("hooks (Test Host)").status, Status::Ok);
        assert!(named("hooks (Test Host)").message.contains("PostToolUse, SessionStart, PreCompact"));
        assert_eq!(named("binary (Test Host)").status, Status::Ok);
        assert_eq!(named("statusLine (Test Host)").status, Status::Ok);
    }

    #[test]
    fn the_relay_reads_its_headless_command() {
        let args: Vec<String> =
            ["testhost", "go", "--model", "m", "finish the work"].iter().map(|s| s.to_string()).collect();
        let command = crate::relay::headless(&args).unwrap();
        assert_eq!(command.host, HostKind::Test);
        assert_eq!(command.leg_args(2), ["go", "--model", "m", "continue"]);
        assert!(crate::relay::headless_forms().contains("`testhost go …`"));
        let interactive: Vec<String> = vec!["testhost".into(), "finish".into()];
        assert!(crate::relay::interactive(&interactive).is_err(), "no interactive relay of its own");
    }

    #[test]
    fn its_figure_comes_from_its_record_and_is_worded_as_its_value_says() {
        let windows = BTreeMap::new();
        let query = metrics::FigureQuery {
            session_id: SESSION,
            host: HostKind::Test,
            transcript: None,
            model: Some("70000"),
            tool_use_id: None,
            in_subagent: false,
            after_tool_call: true,
            agent: None,
            reported: None,
            stale_seconds: 60,
            default_window: 200_000,
            configured_windows: &windows,
            thresholds_used: [65.0, 75.0],
            stakes: None,
            now: 1_000,
        };
        let found = metrics::session_figure(&query).expect("its record's figure");
        assert_eq!(found.figure.used_tokens, Some(70_000));
        assert_eq!(found.figure.window_tokens, Some(100_000), "the window its record gives");
        assert_eq!(found.figure.origin, Origin::Transcript);
        let basis = metrics::Basis {
            limits: metrics::Limits::default(),
            host: HostKind::Test,
            model: None,
            project: None,
        };
        let assessed =
            metrics::assess(&found.figure, &basis, metrics::Want::Headroom { tokens_per_call: None });
        assert_eq!(assessed.level, Level::Warning);
        assert_eq!(assessed.headroom, None, "it does not say where it compacts");
        let notes = crate::monitor::FigureNotes { host: HostKind::Test, newer_than_bridge: false };
        let words = crate::monitor::message(
            Level::Warning,
            &found.figure,
            None,
            &notes,
            &crate::monitor::ContextNotes::default(),
            &crate::monitor::HandoffWords::NotAttempted,
        );
        assert!(words.ends_with("(This figure was reported by the test host.)"), "{words}");
    }

    #[test]
    fn the_hook_runs_its_events_below_the_thresholds_in_silence() {
        let input: HookInput = serde_json::from_value(json!({
            "hook_event_name": "PostToolUse",
            "session_id": SESSION,
            "model": "20000",
            "cwd": "/nonexistent/testhost-project",
            "tool_name": "Edit",
        }))
        .unwrap();
        let env = crate::hook::HookEnv { host: Some(HostKind::Test), ..crate::hook::HookEnv::default() };
        assert!(crate::hook::handle(&input, &env).is_none(), "20 % of its 100k window: nothing to say");
    }
}
