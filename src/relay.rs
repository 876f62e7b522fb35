//! The relay: `baton run` carries paused work into a fresh context, leg after leg.
//!
//! The runner gives each leg of the host `BATON_RUN_ID` (a run's record, in baton's state
//! dir) and `BATON_RUN_LEG` (its number). The hook, running inside the host, notes in
//! that record ([`crate::run_record`]) which session the leg is, the handoff it wrote and
//! what the pause did; the runner reads it after the leg to decide whether the leg is
//! paused: a handoff of its own (CRITICAL or manual) still pending, whoever stopped the
//! agent ([`Handoffs::leg_paused`]); then what comes next ([`next_step`], pure), and the
//! summary.
//!
//! The headless grammar of each host (where the prompt is, how it is replaced by the
//! continue prompt) is the host's own ([`crate::host::Grammar`]), read into a
//! [`HeadlessCommand`]. The interactive host (`claude` on a terminal)
//! runs on a pty baton owns, all its contexts in one process ([`interactive`]): its hooks
//! get `LIVE_LEG` and read the current leg from the record.

pub mod faults;
pub mod host_faults;
// The interactive relay drives the host on a pseudo-terminal: Unix only for now (a
// Windows one needs ConPTY, which wine cannot exercise; `baton run` says so there).
#[cfg(unix)]
pub mod interactive;
pub mod progress;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config::Config;
use crate::host::{Grammar, HostKind};
use crate::run_record::{
    self, EndReason, LegNote, RUN_ID_ENV, RUN_LEG_ENV, RunEnd, RunRecord, WaitReason, load, note, now_ms,
};
use crate::util::proc::RunError;
use crate::util::text::outside;

/// baton's fixed continue prompt: never text from the repository, the transcript or a
/// handoff (TRUST.md: the relay types only this and the host's clear command).
pub const CONTINUE_PROMPT: &str = "continue";

/// What the runner does after a leg. (Only the interactive relay asks: Unix only.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(unix), allow(dead_code))]
pub enum NextStep {
    /// Run the next leg with the continue prompt.
    Continue,
    /// The leg ended with no handoff of its own pending: the run is over.
    Done,
    /// The leg paused, but `--max-legs` legs have run.
    MaxLegs,
}

/// The rule after a leg (pure): a paused leg (its own handoff pending, whoever stopped
/// the agent) goes on, up to `max_legs` legs.
#[cfg_attr(not(unix), allow(dead_code))]
pub fn next_step(paused: bool, leg: u32, max_legs: u32) -> NextStep {
    match (paused, leg >= max_legs) {
        (false, _) => NextStep::Done,
        (true, true) => NextStep::MaxLegs,
        (true, false) => NextStep::Continue,
    }
}

/// Whether a handoff is one a leg's session left paused (pure over what was read): its
/// own (written by one of `sessions`), still paused, and a pause of the work (CRITICAL
/// or manual), not a compaction's snapshot, after which the context went on.
pub fn is_own_pause(session: Option<&str>, paused: bool, trigger: Option<&str>, sessions: &[String]) -> bool {
    paused
        && session.is_some_and(|s| sessions.iter().any(|own| own == s))
        && matches!(trigger, Some("critical-context" | "manual"))
}

/// Where a leg's own handoffs are looked for: the project `baton run` runs in (and any
/// the legs wrote theirs in), with its configuration.
#[derive(Debug, Clone)]
pub struct Handoffs {
    pub project: PathBuf,
    pub config: Config,
}

impl Handoffs {
    /// The project of `cwd` (the nearest GSD project, else the repository), as the hook
    /// resolves it.
    pub fn for_dir(cwd: &Path) -> Handoffs {
        let project = crate::gitx::project_dir(cwd);
        let config = Config::load(Some(&project));
        Handoffs { project, config }
    }

    /// A leg is paused when a handoff of its own is pending (see [`is_own_pause`]),
    /// whoever stopped the agent: baton's pause, or the agent that did as the CRITICAL
    /// warning asked and ended its turn. Reads the project's handoffs only for a leg with
    /// a session.
    pub fn leg_paused(&self, note: Option<&LegNote>) -> bool {
        let Some(note) = note.filter(|n| !n.sessions.is_empty()) else { return false };
        let mut projects = vec![self.project.clone()];
        projects.extend(note.project.clone().filter(|p| *p != self.project));
        projects.iter().any(|project| {
            crate::resume::find_all(project, &self.config).iter().any(|found| {
                let trigger = found.handoff.as_ref().ok().and_then(|h| h.baton().trigger());
                is_own_pause(found.session(), found.paused(), trigger, &note.sessions)
            })
        })
    }
}

/// A headless host command, as `baton run` was given it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadlessCommand {
    pub host: HostKind,
    pub program: String,
    pub args: Vec<String>,
    /// The index in `args` of the prompt (its first word, for a host that joins every
    /// positional word into the prompt: OpenCode's and Kilo's `run [message..]`).
    pub prompt_at: usize,
    /// What precedes the prompt in its word: `--prompt=` when it was given so.
    pub prompt_prefix: String,
    /// The prompt's further words (OpenCode, Kilo), dropped on later legs.
    pub prompt_rest: Vec<usize>,
}

/// The headless commands, as the messages name them (`claude -p …`, `codex exec …` …):
/// each host's from its grammar.
pub fn headless_forms() -> String {
    let forms: Vec<String> = HostKind::ALL.iter().map(|host| host.spec().headless.form(host.id())).collect();
    forms.join(", ")
}

/// The hosts a command may start with, as the messages name them.
fn host_ids() -> String {
    HostKind::ALL.iter().map(|host| host.id()).collect::<Vec<_>>().join(", ")
}

/// Why a command cannot be relayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("no host command given")]
    Empty,
    #[error("`{0}` is not a host baton knows ({ids})", ids = host_ids())]
    UnknownHost(String),
    #[error(
        "`{0}` is not headless here: use {forms}, or run `claude` from a terminal (the interactive relay is Claude Code's only, for now)",
        forms = headless_forms()
    )]
    NotHeadless(String),
    #[error("no prompt found in the host command (give it as the last word)")]
    NoPrompt,
}

/// Why a relay stopped before its legs were done.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    #[error("could not start `{program}`: {source}")]
    Spawn { program: String, source: std::io::Error },
    #[error("`{program}` could not be waited for: {source}")]
    Wait { program: String, source: std::io::Error },
}

/// The program, its name, its host and its arguments; an error: no command, or not a
/// host baton knows (every host baton knows is relayed headless).
fn host_command(args: &[String]) -> Result<(&String, &str, HostKind, &[String]), CommandError> {
    let Some(program) = args.first() else { return Err(CommandError::Empty) };
    let name = std::path::Path::new(program).file_name().and_then(|n| n.to_str()).unwrap_or("");
    let host = HostKind::from_id(name.trim_end_matches(".exe"))
        .ok_or_else(|| CommandError::UnknownHost(name.to_string()))?;
    Ok((program, name, host, &args[1..]))
}

/// The words of a command line, read with a host's grammar.
#[derive(Debug, Default)]
struct Reading {
    /// A headless switch or subcommand was given.
    headless_word: bool,
    /// The word holding a prompt option's value, and its prefix (`--prompt=`).
    prompt_option: Option<(usize, String)>,
    /// The positional words, in order.
    positionals: Vec<usize>,
    /// Options given (names only).
    options: Vec<String>,
}

fn read(grammar: &Grammar, rest: &[String]) -> Reading {
    let mut reading = Reading::default();
    let mut i = 0;
    if rest.first().is_some_and(|a| grammar.subcommands.contains(&a.as_str())) {
        reading.headless_word = true;
        i = 1;
    }
    while i < rest.len() {
        let arg = &rest[i];
        if arg == "--" {
            reading.positionals.extend(i + 1..rest.len());
            break;
        }
        if !arg.starts_with('-') || arg == "-" {
            reading.positionals.push(i);
            i += 1;
            continue;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((name, _)) if name.starts_with("--") => (name, true),
            _ => (arg.as_str(), false),
        };
        reading.options.push(name.to_string());
        if grammar.switches.contains(&name) {
            reading.headless_word = true;
        }
        if grammar.prompt_options.contains(&name) {
            if inline {
                reading.prompt_option = Some((i, format!("{name}=")));
            } else if i + 1 < rest.len() {
                reading.prompt_option = Some((i + 1, String::new()));
                i += 1;
            }
            i += 1;
            continue;
        }
        i += 1;
        if inline {
            continue;
        }
        if grammar.values.contains(&name) {
            i += 1;
        } else if grammar.arrays.contains(&name) {
            while i < rest.len() && !rest[i].starts_with('-') {
                i += 1;
            }
        }
    }
    reading
}

impl Reading {
    fn is_headless(&self, grammar: &Grammar) -> bool {
        self.headless_word
            || self.prompt_option.is_some()
            || grammar.positional_headless_unless.is_some_and(|interactive| {
                !self.positionals.is_empty()
                    && !self.options.iter().any(|o| interactive.contains(&o.as_str()))
            })
    }
}

fn is_headless(host: HostKind, rest: &[String]) -> bool {
    let grammar = &host.spec().headless;
    read(grammar, rest).is_headless(grammar)
}

/// An interactive host command, as `baton run` was given it: run as is, on a pty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InteractiveCommand {
    pub host: HostKind,
    pub program: String,
    pub args: Vec<String>,
}

/// Reads an interactive command: `claude …` without `-p`. An error: headless (use
/// [`headless`]) or a host whose interactive relay is not built (every other host).
pub fn interactive(args: &[String]) -> Result<InteractiveCommand, CommandError> {
    let (program, name, host, rest) = host_command(args)?;
    if is_headless(host, rest) || !host.spec().interactive_relay {
        return Err(CommandError::NotHeadless(name.to_string()));
    }
    Ok(InteractiveCommand { host, program: program.clone(), args: rest.to_vec() })
}

/// Reads a headless command ([`headless_forms`]). The prompt is the value of the host's
/// prompt option (`-p`/`--prompt` of Gemini CLI, Qwen Code, Copilot CLI) when it has one,
/// else the positional words: the last one, or all of them on a host that joins them
/// (OpenCode's and Kilo's `run [message..]`, Qwen Code's `[query..]`). Words that are an
/// option's value are not the prompt. An error: not headless, or no prompt.
pub fn headless(args: &[String]) -> Result<HeadlessCommand, CommandError> {
    let (program, name, host, rest) = host_command(args)?;
    read_headless(host, program, name, rest)
}

fn read_headless(
    host: HostKind,
    program: &str,
    name: &str,
    rest: &[String],
) -> Result<HeadlessCommand, CommandError> {
    let grammar = &host.spec().headless;
    let reading = read(grammar, rest);
    if !reading.is_headless(grammar) {
        return Err(CommandError::NotHeadless(name.to_string()));
    }
    let (prompt_at, prompt_prefix, prompt_rest) = match reading.prompt_option {
        Some((at, prefix)) => (at, prefix, vec![]),
        None if grammar.positional_joined => {
            let (first, others) = reading.positionals.split_first().ok_or(CommandError::NoPrompt)?;
            (*first, String::new(), others.to_vec())
        }
        None => (*reading.positionals.last().ok_or(CommandError::NoPrompt)?, String::new(), vec![]),
    };
    Ok(HeadlessCommand {
        host,
        program: program.to_string(),
        args: rest.to_vec(),
        prompt_at,
        prompt_prefix,
        prompt_rest,
    })
}

impl HeadlessCommand {
    /// The command as given: the program and its arguments (the relay's identity: the
    /// same words run again continue it).
    pub fn words(&self) -> Vec<String> {
        std::iter::once(self.program.clone()).chain(self.args.iter().cloned()).collect()
    }

    /// The arguments of a leg: the first keeps the user's prompt; later ones carry the
    /// continue prompt in its place (its further words dropped), every option unchanged.
    pub fn leg_args(&self, leg: u32) -> Vec<String> {
        if leg <= 1 {
            return self.args.clone();
        }
        self.args
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.prompt_rest.contains(i))
            .map(|(i, arg)| {
                if i == self.prompt_at {
                    format!("{}{CONTINUE_PROMPT}", self.prompt_prefix)
                } else {
                    arg.clone()
                }
            })
            .collect()
    }
}

/// A fresh run id: time and process, enough to be unique on this machine.
pub fn new_run_id(now_nanos: u128, pid: u32) -> String {
    format!("run-{now_nanos:x}-{pid:x}")
}

/// A leg's end in words (pure), for the hand-over lines and the summary.
pub fn describe_end(reason: &EndReason) -> String {
    match reason {
        EndReason::Paused { used_pct: Some(p) } => format!("paused at {p} %"),
        EndReason::Paused { used_pct: None } => "paused".to_string(),
        EndReason::UsageLimit { resets_at_ms, message } => {
            let until = resets_at_ms.map(|t| format!(" until {}", clock(t))).unwrap_or_default();
            format!("usage limit{until} ({})", outside(message))
        }
        EndReason::ApiError { message, .. } => format!("API error ({})", outside(message)),
        EndReason::Crashed { signal: Some(signal), .. } => format!("the host was killed (signal {signal})"),
        EndReason::Crashed { code, .. } => {
            format!("the host exited with status {} and no handoff", code.unwrap_or(1))
        }
        EndReason::Interrupted { signal } => format!("interrupted ({})", signal_name(*signal)),
        EndReason::Done => "done".to_string(),
        EndReason::Futile { used_pct, .. } => format!(
            "completed nothing and paused at {} again",
            used_pct.map_or("CRITICAL".to_string(), |p| format!("{p} %"))
        ),
        EndReason::Other => "ended".to_string(),
    }
}

/// A signal's name, as users know it.
pub fn signal_name(signal: i32) -> String {
    match signal {
        2 => "SIGINT, Ctrl-C".to_string(),
        15 => "SIGTERM".to_string(),
        9 => "SIGKILL".to_string(),
        n => format!("signal {n}"),
    }
}

/// A unix-ms time as the local clock reads it (HH:MM:SS, the date when not today).
pub fn clock(unix_ms: u64) -> String {
    use chrono::TimeZone;
    let Some(at) = chrono::Local.timestamp_millis_opt(unix_ms as i64).single() else {
        return format!("{unix_ms} ms");
    };
    if at.date_naive() == chrono::Local::now().date_naive() {
        at.format("%H:%M:%S").to_string()
    } else {
        at.format("%Y-%m-%d %H:%M:%S").to_string()
    }
}

fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// The one-paragraph summary of a run (pure): each leg of this `baton run` (its time, why
/// it ended, its handoff), the waits, and how the run ended.
pub fn summary(record: &RunRecord, legs: std::ops::RangeInclusive<u32>, end: &RunEnd) -> String {
    let mut parts = vec![];
    let count = legs.clone().count();
    for leg in legs {
        let note = record.leg(leg);
        let took = note
            .and_then(|n| Some(n.ended_ms?.saturating_sub(n.started_ms?)))
            .map(|ms| format!(", took {}", seconds(ms)))
            .unwrap_or_default();
        let peak = note
            .and_then(|n| n.peak_used_pct)
            .map_or("peak not measured".to_string(), |p| format!("peak {p} %"));
        let how = match note {
            Some(n) if n.stopped => ", stopped by the pause",
            Some(n) if n.pause_armed => ", paused",
            Some(n) if n.handoff_pending => ", ended with its handoff pending",
            _ => "",
        };
        let why = note
            .and_then(|n| n.end_reason.as_ref())
            .filter(|r| !matches!(r, EndReason::Paused { .. } | EndReason::Done))
            .map(|r| format!(", {}", describe_end(r)))
            .unwrap_or_default();
        let handoff =
            note.and_then(|n| n.handoff.as_deref()).map(|h| format!(", handoff {h}")).unwrap_or_default();
        let checkpoint = note
            .and_then(|n| n.checkpoint.as_deref())
            .map(|c| format!(", checkpoint {c}"))
            .unwrap_or_default();
        let handover = note
            .and_then(|n| n.handover_ms)
            .map(|ms| format!(", hand-over {}", seconds(ms)))
            .unwrap_or_default();
        let waits: String = note
            .map(|n| {
                n.waits
                    .iter()
                    .map(|w| {
                        let why = match &w.why {
                            WaitReason::UsageLimit { .. } => " for the usage limit's reset",
                            WaitReason::Backoff { .. } => " backing off",
                            WaitReason::Other => "",
                        };
                        format!(", waited {}{why}", seconds(w.end_ms.saturating_sub(w.start_ms)))
                    })
                    .collect()
            })
            .unwrap_or_default();
        parts.push(format!("leg {leg}: {peak}{how}{why}{handoff}{checkpoint}{took}{waits}{handover}"));
    }
    let end = match end {
        RunEnd::Done => "the last leg ended without a pause".to_string(),
        RunEnd::MaxLegs => {
            "stopped after --max-legs legs, the last one paused (its handoff waits for the next session)"
                .to_string()
        }
        RunEnd::LeftPaused => {
            "the host exited with its context paused (the handoff waits for the next session)".to_string()
        }
        RunEnd::Interrupted { signal } => format!("interrupted ({})", signal_name(*signal)),
        RunEnd::LimitNotWaited { resets_at_ms: Some(t) } => {
            format!("the usage limit resets at {}, later than --wait-limit allows", clock(*t))
        }
        RunEnd::LimitNotWaited { resets_at_ms: None } => {
            "the usage limit stated no reset time to wait for".to_string()
        }
        RunEnd::RetriesSpent { message } => {
            format!("API errors in a row past --retries: {}", outside(message))
        }
        RunEnd::Crashed { .. } => {
            format!("the host crashed {} times in a row", faults::MAX_CRASH_RESTARTS + 1)
        }
        RunEnd::Futile { .. } => {
            format!("{} legs in a row completed nothing and paused again", faults::MAX_FUTILE_IN_A_ROW)
        }
        RunEnd::Other => "ended".to_string(),
    };
    let legs = if count == 1 { "1 leg".to_string() } else { format!("{count} legs") };
    format!("baton run: {legs}; {}; {end}.", parts.join("; "))
}

/// How one leg ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegEnd {
    pub leg: u32,
    /// The host's exit status.
    pub code: i32,
    pub reason: EndReason,
    /// baton stopped the pause through the host and the host went on, so `baton run`
    /// ended the leg itself (SIGINT, as a user's Ctrl-C).
    pub interrupted: bool,
}

/// What the runner tells its caller as it goes (the caller prints the lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The same command was run before and its relay left a handoff pending: this run
    /// goes on with it, from leg `leg`.
    Continuing { run_id: String, leg: u32 },
    /// A leg ended.
    LegEnded(LegEnd),
    /// A leg left no handoff of its own: one was written from its transcript's facts.
    HandoffFromFacts { leg: u32, handoff: Option<String> },
    /// A leg briefed from `handoff` did nothing before its fault: that handoff stays the
    /// brief of the next leg.
    BriefKept { leg: u32, handoff: String },
    /// The next leg starts after a wait, sending nothing until then.
    Waiting { until_ms: u64, why: WaitReason },
    /// The next leg starts now.
    NextLeg { leg: u32, fresh_after: EndReason },
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// The legs this `baton run` ran.
    pub legs: std::ops::RangeInclusive<u32>,
    /// The last leg's exit status.
    pub code: i32,
    pub end: RunEnd,
    pub record: RunRecord,
    pub elapsed: Vec<Duration>,
}

impl RunOutcome {
    /// The exit status of `baton run`.
    pub fn exit_code(&self) -> u8 {
        faults::exit_code(&self.end, self.code)
    }
}

/// How long a leg whose agent baton stopped may take to exit by itself before the relay
/// ends it (pure): a host that honours the stop ends the turn and exits (its last reply,
/// its transcript); one that goes on is ended at once: every further call takes it
/// toward its compaction.
pub fn stop_grace(host: HostKind) -> Duration {
    if host.honours_stop() { Duration::from_secs(20) } else { Duration::ZERO }
}

/// What a headless relay is given.
#[derive(Debug, Clone)]
pub struct HeadlessRun<'a> {
    pub command: &'a HeadlessCommand,
    pub policy: faults::Policy,
    pub handoffs: &'a Handoffs,
}

/// The relay this command continues: a record of the same command in the same project
/// whose last run did not end done, and whose last leg's handoff is still pending (the
/// same command run again after Ctrl-C, a usage limit not waited for …). Its id and the
/// next leg's number.
pub fn find_continuable(words: &[String], handoffs: &Handoffs) -> Option<(String, u32)> {
    let mut found: Vec<(u64, String, RunRecord)> = run_record::all_records()
        .into_iter()
        .filter(|(_, r)| {
            r.command == words
                && r.project.as_deref() == Some(handoffs.project.as_path())
                && !matches!(r.end, Some(RunEnd::Done) | None)
        })
        .map(|(id, r)| (r.ended_ms.unwrap_or(0), id, r))
        .collect();
    found.sort_by_key(|(at, _, _)| std::cmp::Reverse(*at));
    let (_, id, record) = found.into_iter().next()?;
    let last = record.legs.iter().map(|n| n.leg).max()?;
    handoffs.leg_paused(record.leg(last)).then_some((id, last + 1))
}

/// Writes the handoff of leg `leg` from its transcript's facts (a leg that ended on a
/// fault, or interrupted, with none of its own pending), notes it in the record, and
/// says where it is. `None` when the leg has no session to write it for, or writing
/// failed (then the relay goes on with what is pending).
pub fn handoff_from_facts(host: HostKind, handoffs: &Handoffs, run_id: &str, leg: u32) -> Option<String> {
    let note = load(run_id).leg(leg).cloned()?;
    let session = note.sessions.last()?.clone();
    let transcript = note.transcripts.last().cloned();
    let facts = transcript.as_deref().and_then(|path| {
        let mut facts = crate::transcript::gather_facts_as(
            host.transcript_format(),
            path,
            crate::transcript::FactsBudget::default(),
        )
        .ok()?;
        unfinished_calls_did_not_run(&mut facts);
        Some(facts)
    });
    let request = crate::handoff::Request {
        trigger: crate::handoff::Trigger::Manual,
        session_id: session.clone(),
        cwd: handoffs.project.clone(),
        transcript_path: transcript,
        transcript_format: host.transcript_format(),
        facts,
        figure: None,
        checkpoint: crate::gitx::Mode::Ref,
        dir: handoffs.config.handoff_dir(),
        now: chrono::Utc::now(),
    };
    let outcome = crate::handoff::write(&request).ok()?;
    let json =
        outcome.json_path.strip_prefix(&outcome.root).unwrap_or(&outcome.json_path).display().to_string();
    run_record::note_handoff(
        run_id,
        leg,
        &run_record::WrittenHandoff {
            session,
            json: json.clone(),
            project: outcome.root.clone(),
            checkpoint: outcome.checkpoint.as_ref().and_then(|c| c.reference.clone()),
        },
    );
    Some(json)
}

/// The leg is over: a shell call its rollout records with no output never completed (the
/// host was killed or interrupted around it), so the brief says it failed rather than
/// ran (pure). Codex's rollout only: there a call without output has none recorded yet;
/// the other hosts' records give no exit code for calls that did run.
pub fn unfinished_calls_did_not_run(facts: &mut crate::transcript::SessionFacts) {
    if facts.format != crate::transcript::Format::CodexRollout {
        return;
    }
    for command in facts.commands_run.iter_mut().filter(|c| c.exit_code.is_none()) {
        command.failed = true;
    }
}

/// Runs the legs of a headless relay: each leg in the foreground with the run's id and
/// its number in its environment (the host's hooks inherit them); after each, why it
/// ended ([`faults::classify`]) and what comes next ([`faults::decide`]): a fresh leg
/// with the continue prompt (briefed from the pending handoff, written from facts when
/// the leg left none), after a wait when a usage limit or a backoff calls for one, or
/// the end of the run. `first_leg` is 1, or the next leg of a relay this command
/// continues ([`find_continuable`]). `on_event` is told as it goes (the caller prints).
pub fn run_headless(
    run: &HeadlessRun,
    run_id: &str,
    first_leg: u32,
    mut on_event: impl FnMut(&Event, &RunRecord),
) -> Result<RunOutcome, RelayError> {
    let (command, handoffs) = (run.command, run.handoffs);
    crate::util::proc::catch_interrupts();
    crate::util::proc::adopt_orphans();
    let first_leg = first_leg.max(1);
    let mut leg = first_leg;
    let mut elapsed = vec![];
    let mut streaks = faults::Streaks::default();
    run_record::update(run_id, |record| {
        record.host = Some(command.host.id().to_string());
        record.command = command.words();
        record.project = Some(handoffs.project.clone());
        record.started_ms.get_or_insert(now_ms());
        record.invocations += 1;
        record.end = None;
    });
    if leg > 1 {
        on_event(&Event::Continuing { run_id: run_id.to_string(), leg }, &load(run_id));
    }
    // The first leg of the relay gets the user's prompt; every later one is briefed from
    // the pending handoff, with the continue prompt (none pending: the user's again).
    let mut briefed = leg > 1;
    // The project's files at the last leg's end: the next leg's start when nothing but
    // baton ran in between (no wait, in which the user may have changed them).
    let mut at_last_end: Option<Option<progress::Snapshot>> = None;
    loop {
        let mut child = std::process::Command::new(&command.program);
        let prompt_leg = if briefed { leg.max(2) } else { 1 };
        child.args(command.leg_args(prompt_leg)).env(RUN_ID_ENV, run_id).env(RUN_LEG_ENV, leg.to_string());
        let started = std::time::Instant::now();
        let started_ms = now_ms();
        let before =
            at_last_end.take().unwrap_or_else(|| progress::snapshot(&handoffs.project, &handoffs.config));
        run_record::update(run_id, |record| {
            // The hand-over: from the previous leg's pause (else its end) to this start.
            if let Some(previous) = record.legs.iter_mut().find(|n| n.leg + 1 == leg) {
                // A handoff written from facts comes after the leg's end: the hand-over
                // starts at whichever came first.
                let from = match (previous.paused_ms, previous.ended_ms) {
                    (Some(paused), Some(ended)) => paused.min(ended),
                    (paused, ended) => paused.or(ended).unwrap_or(started_ms),
                };
                let waited: u64 = previous.waits.iter().map(|w| w.end_ms.saturating_sub(w.start_ms)).sum();
                previous.handover_ms = Some(started_ms.saturating_sub(from).saturating_sub(waited));
            }
            let invocation = record.invocations.max(1);
            let briefed_from = record.legs.iter().rev().find(|n| n.leg < leg).and_then(|n| n.handoff.clone());
            let note = record.leg_mut(leg);
            note.started_ms = Some(started_ms);
            note.invocation = Some(invocation);
            note.briefed_from = briefed_from.filter(|_| briefed);
        });
        let program = || command.program.clone();
        // The pause stopped the agent: a host that ends its turn exits by itself; one that
        // goes on after a hook's stop (Codex) is ended by the relay.
        let end_requested =
            || load(run_id).leg(leg).is_some_and(|note| note.stopped).then(|| stop_grace(command.host));
        // The host is told to end: a hook holding it at the stop may let go.
        let signalled = || note(run_id, leg, |note| note.host_signalled = true);
        let ended =
            crate::util::proc::run_in_foreground(child, end_requested, signalled).map_err(|e| match e {
                RunError::Spawn(source) => RelayError::Spawn { program: program(), source },
                RunError::Wait(source) => RelayError::Wait { program: program(), source },
                // A foreground leg has no deadline.
                RunError::TimedOut => {
                    RelayError::Wait { program: program(), source: std::io::ErrorKind::TimedOut.into() }
                }
            })?;
        elapsed.push(started.elapsed());
        let ended_ms = ended
            .exited
            .duration_since(std::time::UNIX_EPOCH)
            .map_or_else(|_| now_ms(), |d| d.as_millis() as u64);
        let leg_note = load(run_id).leg(leg).cloned().unwrap_or_default();
        let paused = handoffs.leg_paused(Some(&leg_note));
        let stderr = String::from_utf8_lossy(&ended.stderr_tail);
        let after = progress::snapshot(&handoffs.project, &handoffs.config);
        let facts = faults::LegFacts {
            paused,
            code: ended.code,
            interrupted_by: crate::util::proc::interrupted(),
            ended_by_relay: ended.interrupted,
            fault: host_faults::read(command.host, &leg_note.transcripts, &stderr, ended.code, ended_ms),
            peak_used_pct: leg_note.peak_used_pct,
            progress: before.map(|before| progress::between(&before, after.as_ref(), &handoffs.project)),
            start: if paused { start_of_leg(command.host, &leg_note) } else { None },
        };
        let mut reason = faults::classify(&facts);
        // A host killed from outside can leave its workers running the task (Codex's and
        // Gemini CLI's node launchers start the agent as a child): the next leg must not
        // run beside them.
        let leftovers = matches!(reason, EndReason::Crashed { .. } | EndReason::Interrupted { .. });
        if leftovers {
            crate::util::proc::end_leftovers();
        } else {
            crate::util::proc::reap_adopted();
        }
        if let EndReason::Futile { filled_by, first_used_pct, .. } = &mut reason {
            *first_used_pct = facts.start.map(|start| start.used_pct);
            *filled_by = Some(progress::what_fills_the_start(
                command.host,
                &handoffs.project,
                leg_note.briefed_from.as_deref(),
            ));
        }
        note_leg_end(run_id, leg, paused, ended_ms, ended.code, &facts, &reason);
        let code = ended.code;
        on_event(
            &Event::LegEnded(LegEnd { leg, code, reason: reason.clone(), interrupted: ended.interrupted }),
            &load(run_id),
        );
        let decision = faults::decide(&reason, &mut streaks, &run.policy, now_ms());
        // An interrupted leg, and one that ended on a fault, leaves the work where it was:
        // a handoff from facts keeps it for the next leg (or the same command run again).
        let from_facts = match &decision {
            faults::Decision::Next { handoff_from_facts, .. } => *handoff_from_facts,
            faults::Decision::End(end) => {
                !matches!(end, RunEnd::Done | RunEnd::MaxLegs | RunEnd::Futile { .. })
            }
        };
        // A briefed leg that did nothing before its fault has no facts of its own: the
        // handoff it was briefed from stands for the next leg (written again from this
        // leg's transcript, it would lose the work before it).
        let did_nothing = facts.progress.as_ref().is_some_and(|p| *p == run_record::Progress::default());
        match (&leg_note.briefed_from, did_nothing) {
            _ if !from_facts || paused => {}
            (Some(handoff), true) => {
                on_event(&Event::BriefKept { leg, handoff: handoff.clone() }, &load(run_id));
            }
            _ => {
                let handoff = handoff_from_facts(command.host, handoffs, run_id, leg);
                on_event(&Event::HandoffFromFacts { leg, handoff }, &load(run_id));
            }
        }
        let wait = match decision {
            faults::Decision::End(end) => return Ok(end_run(run_id, first_leg..=leg, code, end, elapsed)),
            faults::Decision::Next { wait, .. } => wait,
        };
        // Leftovers ended after the snapshot may have written since: the next leg's start
        // is taken again then, as after a wait.
        if wait.is_none() && !leftovers {
            at_last_end = Some(after);
        }
        if let Some(wait) = wait {
            on_event(&Event::Waiting { until_ms: wait.until_ms, why: wait.why.clone() }, &load(run_id));
            let start_ms = now_ms();
            let left = Duration::from_millis(wait.until_ms.saturating_sub(start_ms));
            let finished = crate::util::proc::sleep_unless_interrupted(left);
            note(run_id, leg, |note| {
                note.waits.push(run_record::Wait { start_ms, end_ms: now_ms(), why: wait.why.clone() })
            });
            if !finished {
                let signal = crate::util::proc::interrupted().unwrap_or(crate::platform::SIGINT);
                let end = RunEnd::Interrupted { signal };
                return Ok(end_run(run_id, first_leg..=leg, 128 + signal, end, elapsed));
            }
        }
        // Briefed when a handoff of the relay is pending for the next leg.
        briefed = briefed || handoffs.leg_paused(load(run_id).leg(leg));
        leg += 1;
        on_event(&Event::NextLeg { leg, fresh_after: reason }, &load(run_id));
    }
}

/// The run's end in its record, and the outcome.
fn end_run(
    run_id: &str,
    legs: std::ops::RangeInclusive<u32>,
    code: i32,
    end: RunEnd,
    elapsed: Vec<Duration>,
) -> RunOutcome {
    run_record::update(run_id, |record| {
        record.end = Some(end.clone());
        record.exit_code = Some(i32::from(faults::exit_code(&end, code)));
        record.ended_ms = Some(now_ms());
    });
    RunOutcome { legs, code, end, record: load(run_id), elapsed }
}

/// How full a paused leg was at its first reply: the first figure of its first
/// transcript against the figure its CRITICAL handoff was written at. `None` when the
/// hook noted no CRITICAL figure or the transcript has no figure.
fn start_of_leg(host: HostKind, note: &run_record::LegNote) -> Option<faults::StartOfLeg> {
    let (critical_tokens, critical_pct) = (note.critical_tokens?, note.critical_used_pct?);
    let transcript = note.transcripts.first()?;
    let first = crate::transcript::trace::first_figure(host.transcript_format(), transcript).ok()??;
    faults::start_of_leg(first, critical_tokens, critical_pct)
}

/// The runner's notes when a leg ended.
fn note_leg_end(
    run_id: &str,
    leg: u32,
    paused: bool,
    ended_ms: u64,
    code: i32,
    facts: &faults::LegFacts,
    reason: &EndReason,
) {
    note(run_id, leg, |note| {
        note.ended = true;
        note.handoff_pending = paused;
        note.ended_ms = Some(ended_ms);
        note.exit_code = Some(code);
        note.progress = facts.progress.clone();
        if let Some(start) = facts.start {
            note.first_used_pct = Some(start.used_pct);
        }
        note.end_reason = Some(reason.clone());
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn finds_the_prompt_of_each_host() {
        let c =
            headless(&strings(&["claude", "-p", "--allowedTools", "Bash", "Read", "--model", "m", "do it"]))
                .unwrap();
        assert_eq!(c.host, HostKind::Claude);
        assert_eq!(
            c.leg_args(2),
            strings(&["-p", "--allowedTools", "Bash", "Read", "--model", "m", "continue"])
        );
        assert_eq!(c.leg_args(1).last().unwrap(), "do it");
        let x =
            headless(&strings(&["codex", "exec", "--skip-git-repo-check", "-s", "danger-full-access", "go"]))
                .unwrap();
        assert_eq!(x.leg_args(1).last().unwrap(), "go");
        assert_eq!(x.leg_args(2).last().unwrap(), "continue");
        let g = headless(&strings(&["gemini", "-m", "gemini-2.5-flash", "-p", "go on", "--yolo"])).unwrap();
        assert_eq!(g.leg_args(2), strings(&["-m", "gemini-2.5-flash", "-p", "continue", "--yolo"]));
        assert!(headless(&strings(&["claude"])).is_err());
        assert!(headless(&strings(&["vim", "-p", "x"])).is_err());
    }

    #[test]
    fn qwen_codes_prompt_is_p_or_the_positional_query() {
        let q = headless(&strings(&["qwen", "--yolo", "-m", "qwen3-coder-plus", "-p", "do it"])).unwrap();
        assert_eq!(q.host, HostKind::Qwen);
        assert_eq!(q.leg_args(1).last().unwrap(), "do it");
        assert_eq!(q.leg_args(2), strings(&["--yolo", "-m", "qwen3-coder-plus", "-p", "continue"]));
        let q = headless(&strings(&["qwen", "--prompt=do it", "--approval-mode", "yolo"])).unwrap();
        assert_eq!(q.leg_args(2), strings(&["--prompt=continue", "--approval-mode", "yolo"]));
        // The positional query is one-shot too; its words are one prompt; arrays are greedy.
        let q = headless(&strings(&["qwen", "--yolo", "do", "it", "--allowed-tools", "a", "b"])).unwrap();
        assert_eq!(q.leg_args(2), strings(&["--yolo", "continue", "--allowed-tools", "a", "b"]));
        assert_eq!(
            headless(&strings(&["qwen", "-i", "do it"])),
            Err(CommandError::NotHeadless("qwen".into())),
            "-i is interactive after the prompt"
        );
        assert_eq!(headless(&strings(&["qwen", "--yolo"])), Err(CommandError::NotHeadless("qwen".into())));
        assert_eq!(
            headless(&strings(&["qwen", "--allowed-tools", "run_shell_command", "x"])),
            Err(CommandError::NotHeadless("qwen".into())),
            "an array option takes every word after it"
        );
    }

    #[test]
    fn droids_prompt_is_execs_last_word() {
        let d = headless(&strings(&["droid", "exec", "--auto", "high", "-m", "custom:x", "do it"])).unwrap();
        assert_eq!(d.host, HostKind::Droid);
        assert_eq!(d.leg_args(1).last().unwrap(), "do it");
        assert_eq!(d.leg_args(2), strings(&["exec", "--auto", "high", "-m", "custom:x", "continue"]));
        let d = headless(&strings(&["droid", "exec", "do it", "--cwd", "/p", "--skip-permissions-unsafe"]))
            .unwrap();
        assert_eq!(d.leg_args(2), strings(&["exec", "continue", "--cwd", "/p", "--skip-permissions-unsafe"]));
        assert_eq!(
            headless(&strings(&["droid", "--auto", "high"])),
            Err(CommandError::NotHeadless("droid".into()))
        );
        assert_eq!(headless(&strings(&["droid", "exec", "-f", "task.md"])), Err(CommandError::NoPrompt));
    }

    #[test]
    fn copilots_prompt_is_ps_value() {
        let c = headless(&strings(&["copilot", "-p", "do it", "--allow-all-tools", "--model", "m"])).unwrap();
        assert_eq!(c.host, HostKind::Copilot);
        assert_eq!(c.leg_args(1)[1], "do it");
        assert_eq!(c.leg_args(2), strings(&["-p", "continue", "--allow-all-tools", "--model", "m"]));
        let c = headless(&strings(&["copilot", "--allow-tool", "shell", "write", "--prompt", "go"])).unwrap();
        assert_eq!(c.leg_args(2), strings(&["--allow-tool", "shell", "write", "--prompt", "continue"]));
        assert_eq!(
            headless(&strings(&["copilot", "-i", "do it"])),
            Err(CommandError::NotHeadless("copilot".into())),
            "-i is interactive"
        );
    }

    #[test]
    fn opencodes_and_kilos_prompt_is_every_word_of_run() {
        for host in [HostKind::OpenCode, HostKind::Kilo] {
            let read = |words: &[&str]| {
                let mut args = vec![host.id()];
                args.extend(words);
                headless(&strings(&args))
            };
            // `run [message..]`: every positional word is the message; later legs drop the rest.
            let o = read(&["run", "do", "it", "-m", "p/m", "--title", "t"]).unwrap();
            assert_eq!(o.host, host);
            assert_eq!(o.leg_args(1), strings(&["run", "do", "it", "-m", "p/m", "--title", "t"]));
            assert_eq!(o.leg_args(2), strings(&["run", "continue", "-m", "p/m", "--title", "t"]));
            let o = read(&["run", "-f", "a.txt", "b.txt", "--", "do it"]).unwrap();
            assert_eq!(o.leg_args(2), strings(&["run", "-f", "a.txt", "b.txt", "--", "continue"]));
            assert_eq!(read(&["-c"]), Err(CommandError::NotHeadless(host.id().into())));
            assert_eq!(read(&["run", "-m", "p/m"]), Err(CommandError::NoPrompt));
        }
        assert!(CommandError::NotHeadless("x".into()).to_string().contains("`kilo run …`"));
    }

    #[test]
    fn a_codex_call_without_output_did_not_run_once_the_leg_is_over() {
        use crate::transcript::{Format, SessionFacts};
        let run = |command: &str, exit_code| crate::transcript::facts::CommandRun {
            command: command.into(),
            exit_code,
            failed: false,
        };
        let mut facts = SessionFacts {
            format: Format::CodexRollout,
            commands_run: vec![run("echo a", Some(0)), run("echo b", None)],
            ..SessionFacts::default()
        };
        unfinished_calls_did_not_run(&mut facts);
        let failed: Vec<bool> = facts.commands_run.iter().map(|c| c.failed).collect();
        assert_eq!(failed, [false, true]);
        let mut claude = SessionFacts {
            format: Format::ClaudeCode,
            commands_run: vec![run("ls", None)],
            ..SessionFacts::default()
        };
        unfinished_calls_did_not_run(&mut claude);
        assert!(!claude.commands_run[0].failed, "Claude Code records no exit codes");
    }

    #[test]
    fn a_paused_leg_goes_on_until_max_legs() {
        assert_eq!(next_step(true, 1, 5), NextStep::Continue);
        assert_eq!(next_step(false, 1, 5), NextStep::Done);
        assert_eq!(next_step(true, 5, 5), NextStep::MaxLegs);
    }

    #[test]
    fn only_a_pause_of_the_legs_own_is_a_paused_leg() {
        let sessions = vec!["s2".to_string()];
        assert!(is_own_pause(Some("s2"), true, Some("critical-context"), &sessions));
        assert!(is_own_pause(Some("s2"), true, Some("manual"), &sessions));
        assert!(
            !is_own_pause(Some("s1"), true, Some("critical-context"), &sessions),
            "the brief's, an earlier leg's"
        );
        assert!(!is_own_pause(Some("s2"), false, Some("critical-context"), &sessions), "picked up");
        assert!(!is_own_pause(Some("s2"), true, Some("pre-compact"), &sessions), "the context went on");
        assert!(!is_own_pause(None, true, Some("critical-context"), &sessions), "GSD's, or by hand");
    }

    #[test]
    fn the_summary_names_every_leg() {
        let record = RunRecord {
            legs: vec![LegNote {
                leg: 1,
                peak_used_pct: Some(78),
                handoff: Some(".planning/HANDOFF.json".into()),
                checkpoint: Some("refs/baton/checkpoints/x".into()),
                stopped: true,
                pause_armed: true,
                ..LegNote::default()
            }],
            ..RunRecord::default()
        };
        let text = summary(&record, 1..=2, &RunEnd::Done);
        assert!(text.starts_with("baton run: 2 legs;"), "{text}");
        assert!(text.contains("leg 1: peak 78 %, stopped by the pause, handoff .planning/HANDOFF.json, checkpoint refs/baton/checkpoints/x"), "{text}");
        assert!(text.contains("leg 2: peak not measured"), "{text}");
    }
}
