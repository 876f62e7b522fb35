//! `baton status`: "how full am I?" for one session, cheap enough for an agent to ask
//! from Bash at any time.
//!
//! It costs what the hook costs below the thresholds: the bridge (one small file) and,
//! only when no fresh bridge says, the end of the transcript; no git, no `.planning/`
//! parsing beyond the handoff file. The figure and the level come from the same code the
//! monitor uses ([`monitor::current_figure`], [`metrics::assess`]): what `status` says
//! and what the warning says cannot disagree.
//!
//! The session: `--session` (an id or an unambiguous prefix of one, matched against the
//! transcripts under Claude Code's `projects/` and the bridges in the temp dir), else the
//! newest transcript of the project in the current folder.
//!
//! JSON format, version 1 (fields are added, never renamed, within a version):
//! `version`, `session_id`, `transcript` (path or null), `level` (`normal`, `warning`,
//! `critical`, `unknown`), `figure` (null, or `used_pct`, `remaining_pct`, `used_tokens`,
//! `source`: `statusline`|`bridge`|`transcript`, `taken_at`, `age_seconds`, `estimate`),
//! `window` (null, or `tokens`, `source`, `assumed`), `headroom` (null, or `tokens`,
//! `calls`, `at`, `end`), `thresholds` (`warn_remaining`, `critical_remaining`) and
//! `handoffs` (each: `path`, `trusted`, `status`, `session_id`, `timestamp`,
//! `next_action`, `this_session`; a handoff that is not trusted gives its path alone, the
//! rest null or false: none of its fields is shown until the user accepts it). A relay's legs will be a `relay` field, present only for a session
//! that is part of a relay (none is today).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::config::Config;
use crate::handoff::doc::{self, HandoffDoc};
use crate::host::HostKind;
use crate::metrics::{self, Level, Origin, WindowSource};
use crate::monitor::{self, SessionRef};
use crate::util::text::{outside, outside_path};
use crate::{fsx, places, session_state};

/// The `--json` format's version.
pub const FORMAT_VERSION: u64 = 1;

/// Why no status can be given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusError {
    /// The request is wrong (exit 2): a malformed or ambiguous id.
    Usage(String),
    /// No such session (exit 1).
    NotFound(String),
}

impl std::fmt::Display for StatusError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StatusError::Usage(why) | StatusError::NotFound(why) => f.write_str(why),
        }
    }
}

/// A handoff waiting in the project.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PendingHandoff {
    pub path: PathBuf,
    /// This machine wrote it (or the user accepted it, or trusts every handoff): only then
    /// are its fields read. An untrusted one is known by its path alone.
    pub trusted: bool,
    pub status: Option<String>,
    pub session_id: Option<String>,
    pub timestamp: Option<String>,
    pub next_action: Option<String>,
}

/// Everything `baton status` says about a session.
#[derive(Debug, Clone)]
pub struct Status {
    pub session_id: String,
    pub transcript: Option<PathBuf>,
    pub figure: Option<metrics::SessionFigure>,
    pub assessment: Option<metrics::Assessment>,
    pub thresholds: metrics::Thresholds,
    pub handoffs: Vec<PendingHandoff>,
    pub now: i64,
}

/// Finds the session (see the module doc) and reads its status.
pub fn status(cwd: &Path, session: Option<&str>, config: &Config, now: i64) -> Result<Status, StatusError> {
    let (session_id, transcript) = match session {
        Some(asked) => {
            let id = resolve_session(asked)?;
            let transcript = HOST.host().transcript_of(&id);
            (id, transcript)
        }
        None => {
            let root = project_root(cwd);
            let transcript = HOST.host().newest_transcript(&root, cwd).ok_or_else(|| {
                StatusError::NotFound(format!(
                    "no {} session found for {}: pass --session ID",
                    HOST.name(),
                    outside_path(cwd)
                ))
            })?;
            let id = transcript
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .filter(|s| fsx::valid_session_id(s))
                .ok_or_else(|| {
                    StatusError::NotFound(format!("{} names no session", outside_path(&transcript)))
                })?;
            (id, Some(transcript))
        }
    };
    let session_ref = SessionRef::known(HOST, &session_id, transcript.as_deref());
    let figure = monitor::current_figure(&session_ref, config, config.stale_seconds(), now).map(|(f, _)| f);
    let limits = metrics::Limits::from_settings(config.settings());
    let assessment = figure.as_ref().map(|found| {
        let basis = metrics::Basis {
            limits,
            host: session_ref.host,
            model: found.model.as_deref(),
            project: session_ref.project,
        };
        let tokens_per_call = session_state::tokens_per_call(&session_id);
        metrics::assess(&found.figure, &basis, metrics::Want::Headroom { tokens_per_call })
    });
    let handoffs = pending_handoffs(cwd, &config.handoff_dir(), config.trust_foreign());
    Ok(Status { session_id, transcript, figure, assessment, thresholds: limits.thresholds, handoffs, now })
}

/// The top of the work tree holding `cwd` (a walk up to `.git`, no git run), else `cwd`.
fn project_root(cwd: &Path) -> PathBuf {
    crate::statusline::find_git(cwd).map(|g| g.root).unwrap_or_else(|| cwd.to_path_buf())
}

/// The host whose sessions `baton status` finds by itself (in its transcripts folder).
const HOST: HostKind = HostKind::DEFAULT;

fn projects_dir() -> Option<PathBuf> {
    HOST.host().transcripts_dir()
}

/// The session ids baton can see: transcripts under `projects/*/`, bridges in the temp dir.
fn known_sessions() -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    let projects = projects_dir().and_then(|dir| std::fs::read_dir(dir).ok());
    for project in projects.into_iter().flat_map(|entries| entries.flatten()) {
        let Ok(files) = std::fs::read_dir(project.path()) else { continue };
        for file in files.flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            if let Some(id) = name.strip_suffix(".jsonl") {
                ids.insert(id.to_string());
            }
        }
    }
    if let Ok(files) = std::fs::read_dir(places::temp_dir()) {
        for file in files.flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            let id = name.strip_prefix("claude-ctx-").and_then(|n| n.strip_suffix(".json"));
            if let Some(id) = id.filter(|id| !id.ends_with("-warned")) {
                ids.insert(id.to_string());
            }
        }
    }
    ids.retain(|id| fsx::valid_session_id(id));
    ids
}

/// The one session `asked` names: the id itself, or the only id it is a prefix of.
pub fn resolve_session(asked: &str) -> Result<String, StatusError> {
    if !fsx::valid_session_id(asked) {
        return Err(StatusError::Usage(format!(
            "invalid session id {asked:?}: it must not be empty or contain `/`, `\\` or `..`"
        )));
    }
    let known = known_sessions();
    if known.contains(asked) {
        return Ok(asked.to_string());
    }
    let matching: Vec<&String> = known.iter().filter(|id| id.starts_with(asked)).collect();
    match matching.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(StatusError::NotFound(format!(
            "unknown session {asked}: no transcript under {} and no bridge in {} has that id",
            projects_dir()
                .map(|d| outside_path(&d.join("*")).to_string())
                .unwrap_or_else(|| "projects/".into()),
            outside_path(&places::temp_dir())
        ))),
        several => Err(StatusError::Usage(format!(
            "session prefix {asked} is ambiguous: {}; give more of the id",
            several.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// The handoff files in the folder and at the top of its work tree.
fn pending_handoffs(cwd: &Path, handoff_dir: &Path, trust_foreign: bool) -> Vec<PendingHandoff> {
    let mut roots = vec![cwd.to_path_buf()];
    let root = project_root(cwd);
    if !roots.contains(&root) {
        roots.push(root);
    }
    roots
        .iter()
        .filter_map(|root| {
            let path = root.join(handoff_dir).join("HANDOFF.json");
            let bytes = fsx::read_limited(&path, doc::READ_LIMIT).ok()?;
            let parsed = HandoffDoc::parse(&bytes, root).ok()?;
            // As the resume path trusts it: written here by baton (or accepted), in a folder no
            // one else can change.
            let trusted = trust_foreign
                || (parsed.baton().id().is_some_and(|id| crate::handoff::store::is_registered(root, id))
                    && fsx::write_exposure(root, &[handoff_dir]).is_none());
            if !trusted {
                let unknown = PendingHandoff { path, trusted, ..PendingHandoff::default() };
                return Some(unknown);
            }
            Some(PendingHandoff {
                trusted,
                status: parsed.status().map(str::to_string),
                session_id: parsed.baton().session_id().map(str::to_string),
                timestamp: parsed.timestamp().map(str::to_string),
                next_action: parsed.next_action().map(str::to_string),
                path,
            })
        })
        .collect()
}

fn level_name(level: Option<Level>) -> &'static str {
    match level {
        Some(Level::Normal) => "normal",
        Some(Level::Warning) => "warning",
        Some(Level::Critical) => "critical",
        None => "unknown",
    }
}

fn origin_name(origin: Origin) -> &'static str {
    match origin {
        Origin::Statusline => "statusline",
        Origin::Bridge => "bridge",
        Origin::Transcript => "transcript",
    }
}

fn window_source_name(source: WindowSource) -> &'static str {
    match source {
        WindowSource::Statusline => "statusline",
        WindowSource::Remembered => "remembered",
        WindowSource::Host => "host",
        WindowSource::Config => "config",
        WindowSource::Table => "table",
        WindowSource::Likely => "table_likely",
        WindowSource::Proven => "proven",
        WindowSource::Default => "default",
    }
}

impl Status {
    pub fn level(&self) -> Option<Level> {
        self.assessment.map(|a| a.level)
    }

    /// The `--json` object (format [`FORMAT_VERSION`]).
    pub fn to_json(&self) -> Value {
        let figure = self.figure.as_ref().map(|found| {
            let f = &found.figure;
            json!({
                "used_pct": f.used_pct(),
                "remaining_pct": (f.remaining_pct * 10.0).round() / 10.0,
                "used_tokens": f.used_tokens,
                "source": origin_name(f.origin),
                "taken_at": f.taken_at,
                "age_seconds": found.age(self.now),
                "estimate": f.estimate,
                "model": found.model,
            })
        });
        let window = self.figure.as_ref().and_then(|found| {
            let f = &found.figure;
            f.window_tokens.map(|tokens| {
                json!({
                    "tokens": tokens,
                    "source": window_source_name(f.window_source),
                    "assumed": f.window_source.is_assumed(),
                })
            })
        });
        let headroom = self
            .assessment
            .and_then(|a| a.headroom)
            .map(|h| json!({"tokens": h.tokens, "calls": h.calls, "at": h.at, "end": h.end}));
        let handoffs: Vec<Value> = self
            .handoffs
            .iter()
            .map(|h| {
                json!({
                    "path": h.path,
                    "trusted": h.trusted,
                    "status": h.status,
                    "session_id": h.session_id,
                    "timestamp": h.timestamp,
                    "next_action": h.next_action,
                    "this_session": h.trusted && h.session_id.as_deref() == Some(self.session_id.as_str()),
                })
            })
            .collect();
        json!({
            "version": FORMAT_VERSION,
            "session_id": self.session_id,
            "transcript": self.transcript,
            "level": level_name(self.level()),
            "figure": figure,
            "window": window,
            "headroom": headroom,
            "thresholds": {
                "warn_remaining": self.thresholds.warn_remaining,
                "critical_remaining": self.thresholds.critical_remaining,
            },
            "handoffs": handoffs,
        })
    }

    /// The text for a person (or an agent reading Bash output).
    pub fn to_text(&self) -> String {
        let mut out = format!("Session {}\n", self.session_id);
        match &self.figure {
            Some(found) => {
                let f = &found.figure;
                let tokens = f
                    .used_tokens
                    .map(|t| format!(" ({} tokens)", metrics::short_tokens(t)))
                    .unwrap_or_default();
                let estimate = if f.estimate { ", estimated" } else { "" };
                out.push_str(&format!(
                    "Context: {}% used, {}% left{tokens} — {}, {}s old{estimate}\n",
                    f.used_pct(),
                    f.remaining_display(),
                    metrics::describe_origin(f),
                    found.age(self.now),
                ));
                if let Some(window) = metrics::describe_window(f) {
                    out.push_str(&format!("Window: {window} (from {})\n", f.window_source.describe()));
                }
            }
            None => {
                out.push_str("Context: no figure (no fresh status line bridge and no readable transcript)\n")
            }
        }
        if let Some(h) = self.assessment.and_then(|a| a.headroom) {
            out.push_str(&format!("Headroom: {}\n", h.describe()));
        }
        let level = match self.level() {
            Some(Level::Normal) => "normal".to_string(),
            Some(Level::Warning) => {
                format!("WARNING (at {}% left or less)", metrics::format_pct(self.thresholds.warn_remaining))
            }
            Some(Level::Critical) => {
                format!(
                    "CRITICAL (at {}% left or less)",
                    metrics::format_pct(self.thresholds.critical_remaining)
                )
            }
            None => "unknown".to_string(),
        };
        out.push_str(&format!("Level: {level}\n"));
        if self.handoffs.is_empty() {
            out.push_str("Handoff: none pending\n");
        }
        for h in &self.handoffs {
            if !h.trusted {
                out.push_str(&format!(
                    "Handoff: {} (untrusted: written elsewhere; `baton resume --accept` trusts it)\n",
                    outside_path(&h.path)
                ));
                continue;
            }
            let whose = match h.session_id.as_deref() {
                Some(id) if id == self.session_id => "this session's".to_string(),
                Some(id) => format!("session {}'s", outside(&id.chars().take(8).collect::<String>())),
                None => "not baton's".to_string(),
            };
            out.push_str(&format!(
                "Handoff: {} ({}, {whose}{})\n",
                outside_path(&h.path),
                outside(h.status.as_deref().unwrap_or("no status")),
                h.timestamp.as_deref().map(|t| format!(", {}", outside(t))).unwrap_or_default(),
            ));
        }
        out
    }
}
