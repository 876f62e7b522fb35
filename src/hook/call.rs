//! What one call of the hook works with, resolved once: the process's facts
//! ([`HookEnv`]), the host, the project and working folders, the configuration.

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::host::{Envelope, HookInput, HostKind};
use crate::metrics;
use crate::monitor::{self, Cadence, Moment, SessionRef};
use crate::run_record;

/// The facts of the process the hook runs in, gathered once at the edge.
#[derive(Debug, Clone, Default)]
pub struct HookEnv {
    /// `GEMINI_API_KEY` is set: a nameless event is Gemini's AfterTool.
    pub gemini_key_set: bool,
    /// `CLAUDE_PROJECT_DIR`.
    pub project_dir: Option<PathBuf>,
    /// Under `baton run`: the run's record and this leg's number (`BATON_RUN_ID`,
    /// `BATON_RUN_LEG`).
    pub run: Option<(String, u32)>,
    /// The host the environment names ([`HostKind::from_env`]), over what the event says.
    pub host: Option<HostKind>,
}

impl HookEnv {
    pub fn from_process() -> HookEnv {
        let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        HookEnv {
            gemini_key_set: non_empty("GEMINI_API_KEY").is_some(),
            project_dir: non_empty("CLAUDE_PROJECT_DIR").map(PathBuf::from).filter(|p| p.is_absolute()),
            run: run_record::leg_of_process(),
            host: HostKind::from_env(&|name| non_empty(name).is_some()),
        }
    }
}

/// The project folder for an event: `CLAUDE_PROJECT_DIR`, else the event's `cwd`.
fn project_dir(input: &HookInput, env: &HookEnv) -> Option<PathBuf> {
    env.project_dir.clone().or_else(|| input.cwd.as_deref().map(PathBuf::from).filter(|p| p.is_absolute()))
}

/// What one call of the hook works with, resolved once.
pub(super) struct Call<'a> {
    pub(super) input: &'a HookInput,
    pub(super) env: &'a HookEnv,
    pub(super) host: HostKind,
    /// `CLAUDE_PROJECT_DIR`, else the event's `cwd`.
    pub(super) project: Option<PathBuf>,
    /// The event's `cwd`, else the project.
    pub(super) cwd: Option<PathBuf>,
    pub(super) config: Config,
}

impl<'a> Call<'a> {
    /// A call as the tests make it: the host and the configuration given, no file read.
    #[cfg(test)]
    pub(super) fn for_test(
        input: &'a HookInput,
        env: &'a HookEnv,
        host: HostKind,
        config: Config,
    ) -> Call<'a> {
        let project = project_dir(input, env);
        let cwd =
            input.cwd.as_deref().map(PathBuf::from).filter(|p| p.is_absolute()).or_else(|| project.clone());
        Call { input, env, host, project, cwd, config }
    }

    /// The call, unless baton is turned off for the project (`disabled`).
    pub(super) fn enabled(input: &'a HookInput, env: &'a HookEnv) -> Option<Call<'a>> {
        let call = Call::new(input, env);
        (!call.config.disabled()).then_some(call)
    }

    fn new(input: &'a HookInput, env: &'a HookEnv) -> Call<'a> {
        let project = project_dir(input, env);
        let cwd =
            input.cwd.as_deref().map(PathBuf::from).filter(|p| p.is_absolute()).or_else(|| project.clone());
        let config = Config::load(project.as_deref());
        let host = env.host.unwrap_or_else(|| input.host(env.gemini_key_set));
        Call { input, env, host, project, cwd, config }
    }

    pub(super) fn session(&self) -> Option<&'a str> {
        self.input.session_id.as_deref().filter(|s| crate::fsx::valid_session_id(s))
    }

    pub(super) fn session_ref(&self) -> Option<SessionRef<'_>> {
        self.context_ref(Cadence::ToolCall)
    }

    /// The context the event is about (the session, or its subagent), at this cadence.
    pub(super) fn context_ref(&self, cadence: Cadence) -> Option<SessionRef<'_>> {
        Some(SessionRef {
            id: self.session()?,
            host: self.host,
            transcript: self.input.transcript_path.as_deref().map(Path::new),
            model: self.input.model.as_deref(),
            tool_use_id: self.input.tool_use_id.as_deref(),
            in_subagent: self.input.agent_id.is_some(),
            after_tool_call: self.input.tool_name.is_some(),
            agent: self.input.agent_id.as_deref(),
            project: self.project.as_deref(),
            reported: self.input.opencode.as_ref(),
            moment: Moment {
                cadence,
                turn: self.input.turn(),
                tokens: None,
                stop_hook_active: self.input.stop_hook_active == Some(true),
            },
            stakes: None,
        })
    }

    /// The transcript of the session `session`, which the handoff's facts come from.
    pub(super) fn transcript_path(&self, session: &str) -> Option<PathBuf> {
        self.host.transcript_path(self.input.transcript_path.as_deref(), session)
    }

    /// The format the host writes its transcript in.
    pub(super) fn transcript_format(&self) -> crate::transcript::Format {
        self.host.transcript_format()
    }

    /// The user is shown baton's notices on this host (`notices.show`).
    pub(super) fn notices(&self) -> bool {
        self.config.notices() && self.host.shows_system_message()
    }

    /// The host's envelope for `text`, named after the event it answers.
    pub(super) fn envelope(&self, text: &str) -> Envelope {
        let envelope = Envelope::new(&self.input.envelope_event_name(self.env.gemini_key_set), text);
        if self.host.spec().context_at_top_level { envelope.with_top_level_context() } else { envelope }
    }

    /// The session's newest figure (the monitor's figure source), for what the pause and
    /// the handoffs it rewrites say.
    pub(super) fn current_figure(&self, now: i64) -> Option<metrics::Figure> {
        let session_ref = self.session_ref()?;
        monitor::current_figure(&session_ref, &self.config, self.config.stale_seconds(), now)
            .map(|(found, _)| found.figure)
    }

    /// Under `baton run`: notes in the run's record that `session` belongs to this leg,
    /// and what else `edit` says.
    pub(super) fn note_in_run(&self, session: &str, edit: impl FnOnce(&mut run_record::LegNote)) {
        if let Some((run_id, leg)) = &self.env.run {
            let transcript = self.transcript_path(session);
            run_record::note(run_id, *leg, |note| {
                if !note.sessions.iter().any(|s| s == session) {
                    note.sessions.push(session.to_string());
                }
                if let Some(path) = transcript.filter(|p| !note.transcripts.contains(p)) {
                    note.transcripts.push(path);
                }
                edit(note);
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(json: &str) -> HookInput {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn the_project_is_claudes_project_dir_else_the_events_folder() {
        let event = input(r#"{"cwd": "/work/app/sub"}"#);
        let env = HookEnv { project_dir: Some("/work/app".into()), ..HookEnv::default() };
        assert_eq!(project_dir(&event, &env), Some(PathBuf::from("/work/app")));
        assert_eq!(project_dir(&event, &HookEnv::default()), Some(PathBuf::from("/work/app/sub")));
        assert_eq!(project_dir(&input(r#"{"cwd": "relative"}"#), &HookEnv::default()), None);
        let call = Call::for_test(&event, &env, HostKind::Claude, Config::defaults());
        assert_eq!(call.cwd.as_deref(), Some(Path::new("/work/app/sub")), "the folder of the event");
    }

    #[test]
    fn sessions_that_could_name_a_path_are_no_session() {
        let env = HookEnv::default();
        let bad = input(r#"{"session_id": "../../etc"}"#);
        assert_eq!(Call::for_test(&bad, &env, HostKind::Claude, Config::defaults()).session(), None);
        let good = input(r#"{"session_id": "s-1", "agent_id": "a1", "tool_name": "Bash"}"#);
        let call = Call::for_test(&good, &env, HostKind::Claude, Config::defaults());
        let context = call.context_ref(Cadence::Batch).unwrap();
        assert_eq!((context.id, context.agent, context.in_subagent), ("s-1", Some("a1"), true));
        assert!(context.after_tool_call);
        assert_eq!(context.moment.cadence, Cadence::Batch);
    }

    #[test]
    fn the_envelope_is_the_hosts() {
        let env = HookEnv::default();
        let event = input(r#"{"hook_event_name": "PostToolUse"}"#);
        let claude =
            Call::for_test(&event, &env, HostKind::Claude, Config::defaults()).envelope("x").to_json();
        assert_eq!(
            claude,
            r#"{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"x"}}"#
        );
        let copilot =
            Call::for_test(&event, &env, HostKind::Copilot, Config::defaults()).envelope("x").to_json();
        assert!(copilot.ends_with(r#","additionalContext":"x"}"#), "at the top level too: {copilot}");
        assert!(Call::for_test(&event, &env, HostKind::Claude, Config::defaults()).notices());
        assert!(
            !Call::for_test(&event, &env, HostKind::Qwen, Config::defaults()).notices(),
            "not shown there"
        );
    }
}
