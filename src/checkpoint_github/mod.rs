//! Checkpoints on a GitHub issue, through the `gh` CLI: `baton checkpoint push` publishes
//! the current HANDOFF.json (a Task Summary in the issue body, a Persistence Record
//! comment per checkpoint) and `baton checkpoint pull` reads it back, the newest record
//! winning, so a task can move between machines, people and agents.
//!
//! The pure parts sit in their own files ([`fields`], [`summary`], [`record`], [`state`],
//! [`restore`], [`remote`]); gh is called only from [`gh`]; this file orders the steps.
//! The order of writes is chosen so that nothing half-written counts as success: choose
//! or create the issue, edit its body, post the record, and only then record the issue
//! and the record's digest in HANDOFF.json. A failure on the way is recorded there as
//! `baton.github_error` and the command exits non-zero.
//!
//! Fields this module writes into HANDOFF.json's `baton` object: `github_issue`,
//! `github_repo`, `github_url`, `github_last_record`, `github_error`; a pulled handoff
//! also has `source: "github"`, `github_record`, `github_conflicts`, `github_pulled_at`,
//! `goal`, `key_paths`, `plan_path`, and a fresh `id` that is never registered as this
//! machine's. `github_record` says who wrote the record restored (`author`,
//! `author_association`), how (`form`: `baton` or `skill`) and whether it was
//! `edited_after_posting`; `github_ignored` lists the records not restored because of who
//! wrote them.
//!
//! Records and summaries are read in baton's form and in the forms people write after
//! the checkpoint-persistence skill's template ([`record`], [`summary`]); only records by
//! the logged-in user or by someone with write access are restored ([`restore`]).

pub mod fields;
pub mod gh;
pub mod record;
pub mod remote;
pub mod restore;
pub mod state;
pub mod summary;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use chrono::{SecondsFormat, Utc};
use serde::Serialize;
use serde_json::{Value, json};

use crate::config::Config;
use crate::handoff::doc::{Baton, Field, HandoffDoc};
use crate::handoff::store;
use crate::util::text::one_line;
use crate::{fsx, places, planning};

use gh::{Candidate, Gh, GhError, LABEL};
use record::Record;
use remote::GhRepo;
use restore::Restored;
use summary::Summary;

/// What kind of failure a push or pull met (the command line's exit code follows it:
/// 1 and 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// GitHub or the network failed (the handoff stays local).
    Failed,
    /// A usage or precondition problem (gh missing, not logged in, several candidate
    /// issues, a body to fix by hand).
    Usage,
}

impl Fault {
    /// The number recorded as `baton.github_error.exit_code`: the exit code of the
    /// command that met it.
    pub fn exit_code(self) -> u8 {
        match self {
            Fault::Failed => 1,
            Fault::Usage => 2,
        }
    }
}

/// Why a push or pull did not happen.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub fault: Fault,
    pub message: String,
    /// The step that failed (`create issue`, `edit body`, `comment` …), when one did.
    pub step: Option<&'static str>,
    pub issue: Option<u64>,
}

impl Failure {
    fn usage(message: impl Into<String>) -> Failure {
        Failure { fault: Fault::Usage, message: message.into(), step: None, issue: None }
    }

    fn failed(message: impl Into<String>) -> Failure {
        Failure { fault: Fault::Failed, message: message.into(), step: None, issue: None }
    }

    fn at(mut self, step: &'static str, issue: Option<u64>) -> Failure {
        self.step = Some(step);
        self.issue = issue;
        self
    }
}

const INSTALL_GH: &str = "gh, the GitHub CLI, is not installed (or not on PATH). Install it from \
    https://cli.github.com (macOS: `brew install gh`; Debian/Ubuntu: `sudo apt install gh`; \
    Windows: `winget install GitHub.cli`), then run `gh auth login`. The handoff stays local.";

/// A failed gh call in words: gh missing is a precondition, anything else a GitHub error.
fn gh_failure(error: GhError, doing: &str) -> Failure {
    match error {
        GhError::Missing => Failure::usage(INSTALL_GH),
        other => Failure::failed(format!("{doing} failed: {}. The handoff stays local.", other.detail())),
    }
}

/// Checks that gh is there and logged in; the login, when gh named it.
fn check_auth(gh: &Gh, host: &str) -> Result<Option<String>, Failure> {
    match gh.auth_status(host) {
        Ok(login) => Ok(login),
        Err(GhError::Failed { stderr, .. }) => {
            let said = one_line(&stderr, 300);
            let said = if said.is_empty() { String::new() } else { format!(" (gh said: {said})") };
            Err(Failure::usage(format!(
                "gh is not logged in to {host}: run `gh auth login --hostname {host}`{said}. The handoff stays local."
            )))
        }
        Err(other) => Err(gh_failure(other, "`gh auth status`")),
    }
}

/// A `--kind` that is not one short word.
#[derive(Debug, thiserror::Error)]
#[error("a kind is one short word of letters, digits, `-`, `_` or `.` (e.g. checkpoint, decision)")]
pub struct BadKind;

/// Validates `--kind`: a short word (`checkpoint`, `decision`, `milestone` …).
pub fn parse_kind(text: &str) -> Result<String, BadKind> {
    let ok = !text.is_empty()
        && text.len() <= 40
        && text.starts_with(|c: char| c.is_ascii_alphanumeric())
        && text.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok { Ok(text.to_ascii_lowercase()) } else { Err(BadKind) }
}

/// Why HANDOFF.json's `baton` object could not be changed.
#[derive(Debug, thiserror::Error)]
enum UpdateError {
    #[error("cannot read {}: it is gone", .0.display())]
    Gone(PathBuf),
    #[error("{} {source}", path.display())]
    Unreadable { path: PathBuf, source: crate::handoff::doc::HandoffError },
    #[error("{} has a newer version than this baton writes; not changed", .0.display())]
    Newer(PathBuf),
    #[error(transparent)]
    Write(#[from] store::StoreError),
}

/// The project a command works in.
struct Project {
    root: PathBuf,
    json_path: PathBuf,
    dir: PathBuf,
    json: Option<HandoffDoc>,
}

impl Project {
    fn open(cwd: &Path, config: &Config) -> Result<Project, Failure> {
        let cwd = crate::platform::canonicalize(cwd)
            .map_err(|e| Failure::usage(format!("{}: {e}", cwd.display())))?;
        let root = crate::gitx::project_dir(&cwd);
        let dir = config.handoff_dir();
        let json_path = root.join(&dir).join("HANDOFF.json");
        let json = HandoffDoc::read(&root, &dir).and_then(Result::ok);
        Ok(Project { root, json_path, dir, json })
    }

    /// HANDOFF.json's path relative to the root, with `/`.
    fn json_rel(&self) -> String {
        self.dir
            .join("HANDOFF.json")
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/")
    }

    /// Changes HANDOFF.json's `baton` object as it is now on disk (the hook may have
    /// rewritten the file during a push), under the lock handoffs are written with.
    fn update_baton(&self, edit: impl FnOnce(&mut Baton)) -> Result<(), UpdateError> {
        let _lock = store::project_lock(&self.root);
        let mut handoff = match HandoffDoc::read(&self.root, &self.dir) {
            None => return Err(UpdateError::Gone(self.json_path.clone())),
            Some(Err(source)) => {
                return Err(UpdateError::Unreadable { path: self.json_path.clone(), source });
            }
            Some(Ok(handoff)) => handoff,
        };
        if !handoff.writable() {
            return Err(UpdateError::Newer(self.json_path.clone()));
        }
        edit(handoff.baton_mut());
        Ok(store::rewrite_json(&self.json_path, &handoff)?)
    }
}

/// The repository: `--repo`, else `origin`.
fn resolve_repo(flag: Option<&str>, root: &Path) -> Result<GhRepo, Failure> {
    match flag {
        Some(text) => remote::parse_slug(text).map_err(|e| Failure::usage(e.to_string())),
        None => remote::from_origin(root).map_err(|e| Failure::usage(e.to_string())),
    }
}

/// The issue HANDOFF.json records for this repository.
fn recorded_issue(json: Option<&HandoffDoc>, slug: &str) -> Option<u64> {
    let (issue, repo) = json?.baton().github_issue()?;
    if repo.is_some_and(|r| !r.eq_ignore_ascii_case(slug)) {
        return None;
    }
    Some(issue)
}

fn several(list: &[Candidate], slug: &str) -> Failure {
    let mut text = format!(
        "{} open issues in {slug} are labelled {LABEL}; nothing was written. Choose one with --issue N:",
        list.len()
    );
    for c in list {
        text.push_str(&format!(
            "\n  #{}  {}  (updated {})  {}",
            c.number,
            one_line(&c.title, 80),
            if c.updated_at.is_empty() { "?" } else { &c.updated_at },
            c.url
        ));
    }
    Failure::usage(text)
}

/// Which issue to use: the flag, else the recorded one, else the single open labelled
/// one. `Ok(None)` means there is none; the note says which labelled issue was picked.
fn choose_issue(
    gh: &Gh,
    flag: Option<u64>,
    recorded: Option<u64>,
    slug: &str,
) -> Result<(Option<u64>, Option<String>), Failure> {
    if let Some(n) = flag {
        return Ok((Some(n), None));
    }
    if let Some(n) = recorded {
        return Ok((Some(n), None));
    }
    let list = gh
        .candidates(slug)
        .map_err(|e| repo_failure(e, slug, "listing the issues labelled baton-checkpoint"))?;
    match list.as_slice() {
        [] => Ok((None, None)),
        [one] => Ok((
            Some(one.number),
            Some(format!(
                "using #{} \"{}\", the only open issue labelled {LABEL}",
                one.number,
                one_line(&one.title, 80)
            )),
        )),
        _ => Err(several(&list, slug)),
    }
}

fn repo_failure(error: GhError, slug: &str, doing: &str) -> Failure {
    if error.is_repo_missing() {
        return Failure::usage(format!(
            "repository {slug} was not found on GitHub, or this gh login cannot see it ({}); pass --repo OWNER/NAME",
            one_line(&error.detail(), 300)
        ));
    }
    gh_failure(error, doing)
}

fn view_issue(gh: &Gh, slug: &str, n: u64, recorded: bool) -> Result<gh::IssueView, Failure> {
    gh.view(slug, n).map_err(|e| {
        if e.is_repo_missing() {
            repo_failure(e, slug, "reading the issue")
        } else if e.is_not_found() {
            let whence = if recorded { " (the issue recorded in HANDOFF.json as baton.github_issue)" } else { "" };
            Failure::usage(format!(
                "issue #{n}{whence} was not found in {slug} ({}). Check the number or pass another with --issue N; nothing was written.",
                one_line(&e.detail(), 300)
            ))
        } else {
            gh_failure(e, &format!("reading issue #{n}"))
        }
    })
}

fn broken_body(n: u64, slug: &str, why: &summary::BrokenMarkers) -> Failure {
    Failure::usage(format!(
        "the body of issue #{n} has {why}. baton will not guess which part is its Task Summary: edit the body \
         (`gh issue edit {n} --repo {slug}`) so it keeps exactly one pair of markers, or none (a new summary is then \
         appended), and push again; nothing was written."
    ))
}

fn now_text() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The active plan's path when `.planning/` still shows the handoff's phase.
fn detected_plan(root: &Path, json: &HandoffDoc) -> Option<String> {
    let found = planning::detect(root);
    let phase = found.phase.as_ref()?;
    let dir = phase.dir.to_string_lossy().into_owned();
    if json.phase_dir_text() != Some(dir.as_str()) {
        return None;
    }
    Some(format!("{dir}/{}", phase.current()?.file))
}

/// What `push` was asked.
#[derive(Debug, Clone, Default)]
pub struct PushOptions {
    pub cwd: PathBuf,
    pub issue: Option<u64>,
    pub repo: Option<String>,
    pub kind: Option<String>,
    pub force: bool,
    /// Run by the hook after an automatic handoff: failures go into HANDOFF.json only.
    pub auto: bool,
}

/// What a push did.
#[derive(Debug, Clone, PartialEq)]
pub enum Pushed {
    Persisted {
        issue: u64,
        kind: String,
        status: String,
        next: String,
        /// The record's first comment, else the issue.
        url: String,
        created: bool,
        comments: usize,
        note: Option<String>,
    },
    NothingNew {
        issue: u64,
        url: String,
        kind: String,
        timestamp: String,
        note: Option<String>,
    },
}

/// `baton checkpoint push`.
pub fn push(options: &PushOptions, config: &Config) -> Result<Pushed, Failure> {
    let project = Project::open(&options.cwd, config)?;
    let Some(json) = project.json.clone() else {
        return Err(Failure::usage(format!(
            "no handoff to push: {} is missing or not valid JSON. Write one with `baton pause` first.",
            project.json_rel()
        )));
    };
    let result = push_handoff(options, &project, &json);
    if let Err(failure) = &result {
        // The person sees a usage problem on the terminal and nothing changed; a
        // GitHub failure, or anything in the unattended mode, is also recorded.
        if options.auto || failure.fault == Fault::Failed {
            let error = GithubError {
                at: now_text(),
                step: failure.step,
                issue: failure.issue,
                exit_code: failure.fault.exit_code(),
                message: &failure.message,
            };
            let _ = project.update_baton(|baton| baton.github_error = Field::json(error));
        }
    }
    result
}

/// A push's failure, as HANDOFF.json records it (`baton.github_error`).
#[derive(Serialize)]
struct GithubError<'a> {
    at: String,
    step: Option<&'static str>,
    issue: Option<u64>,
    exit_code: u8,
    message: &'a str,
}

/// The last record pushed, as HANDOFF.json records it (`baton.github_last_record`).
#[derive(Serialize)]
struct LastRecord<'a> {
    digest: &'a str,
    kind: &'a str,
    timestamp: &'a str,
    url: &'a str,
    comments: usize,
}

/// One push at a time per project (two automatic pushes could both create an issue).
fn push_lock(root: &Path) -> Option<fsx::FileLock> {
    let dir = places::state_dir()?.join("locks");
    fsx::ensure_dir(&dir, true).ok()?;
    let hash = crate::util::hash::fnv1a(root.as_os_str().as_encoded_bytes());
    fsx::FileLock::acquire(&dir.join(format!("github-{hash:016x}.lock"))).ok()
}

fn new_issue_body(block: &str) -> String {
    format!(
        "Checkpoints of a task, kept by baton (`baton checkpoint push`): the Task Summary below is rewritten on \
         each push, and each checkpoint adds a Persistence Record comment. To pick the task up in another clone: \
         `baton checkpoint pull --write`.\n\n{block}\n"
    )
}

fn push_handoff(options: &PushOptions, project: &Project, json: &HandoffDoc) -> Result<Pushed, Failure> {
    let repo = resolve_repo(options.repo.as_deref(), &project.root)?;
    let slug = repo.slug();
    let gh = Gh::default();
    let viewer = check_auth(&gh, &repo.host)?;
    let _lock = push_lock(&project.root);

    let recorded = recorded_issue(Some(json), &slug);
    let (chosen, note) = choose_issue(&gh, options.issue, recorded, &slug)?;
    let existing = match chosen {
        Some(n) => {
            let view = view_issue(&gh, &slug, n, options.issue.is_none() && recorded == Some(n))?;
            if !view.is_open() {
                return Err(Failure::usage(format!(
                    "issue #{n} in {slug} is closed. Reopen it (`gh issue reopen {n} --repo {slug}`) or choose another \
                     with --issue N; nothing was written."
                )));
            }
            let summary = summary::parse(&view.body).map_err(|why| broken_body(n, &slug, &why))?;
            Some((n, view, summary))
        }
        None => None,
    };

    let now = now_text();
    let state = state::from_handoff(json, detected_plan(&project.root, json).as_deref());
    // The goal the issue already states: baton's block's, else the body's own summary's.
    let person = existing.as_ref().and_then(|(_, view, _)| summary::parse_unmarked(&view.body));
    let old_goal = existing
        .as_ref()
        .and_then(|(_, _, s)| s.as_ref())
        .map(|s| s.goal.as_str())
        .filter(|g| !g.trim().is_empty())
        .or(person.as_ref().map(|s| s.goal.as_str()));
    let goal = state::goal(json, old_goal);
    let kind =
        options.kind.clone().unwrap_or_else(|| if options.auto { "auto" } else { "checkpoint" }.into());
    let handoff = state::handoff_reference(json, &project.json_rel());
    let record = Record::new(&kind, &now, Some(handoff), state.clone());

    if let (Some((n, view, _)), false) = (&existing, options.force) {
        let (records, _) = restore::sort_out(record::parse_thread(&view.comments), viewer.as_deref());
        if let Some(last) = records.last().filter(|r| r.complete && !r.edited && r.digest == record.digest) {
            return Ok(Pushed::NothingNew {
                issue: *n,
                url: last.url.clone().unwrap_or_else(|| view.url.clone()),
                kind: last.kind.clone(),
                timestamp: last.timestamp.clone(),
                note,
            });
        }
    }

    let mut summary = Summary {
        goal: goal.clone(),
        status: state.status.clone(),
        stage: state.stage.clone(),
        next: state.next.clone(),
        updated_at: now.clone(),
        issue: None,
        key_paths: state.key_paths.clone(),
    };
    let (number, issue_url, body, created) = match existing {
        Some((n, view, _)) => (n, view.url, view.body, false),
        None => {
            gh.create_label(&slug)
                .map_err(|e| repo_failure(e, &slug, "creating the label").at("create label", None))?;
            let body = new_issue_body(&summary::render(&summary));
            let title = if goal.is_empty() { "baton checkpoints".to_string() } else { one_line(&goal, 100) };
            let (n, url) = gh
                .create_issue(&slug, &title, &body)
                .map_err(|e| repo_failure(e, &slug, "creating the issue").at("create issue", None))?;
            (n, url, body, true)
        }
    };
    summary.issue = Some(number);
    let body =
        summary::splice(&body, &summary::render(&summary)).map_err(|why| broken_body(number, &slug, &why))?;
    gh.edit_body(&slug, number, &body).map_err(|e| {
        gh_failure(e, &format!("updating the body of issue #{number}")).at("edit body", Some(number))
    })?;

    let parts = record::render(&record);
    let mut urls = vec![];
    for (i, part) in parts.iter().enumerate() {
        let url = gh.comment(&slug, number, part).map_err(|e| {
            let partly = if i > 0 {
                format!(" (the record is incomplete: {i} of {} parts posted)", parts.len())
            } else {
                String::new()
            };
            gh_failure(e, &format!("posting the record on issue #{number}{partly}"))
                .at("comment", Some(number))
        })?;
        urls.push(url);
    }
    let record_url = urls.first().cloned().flatten().unwrap_or_else(|| issue_url.clone());

    let last = LastRecord {
        digest: &record.digest,
        kind: &kind,
        timestamp: &now,
        url: &record_url,
        comments: parts.len(),
    };
    project
        .update_baton(|baton| {
            baton.github_issue = Field::Set(number);
            baton.github_repo = Field::Set(slug.clone());
            baton.github_url = Field::Set(issue_url.clone());
            baton.github_last_record = Field::json(last);
            baton.github_error = Field::Missing;
        })
        .map_err(|why| {
            Failure::failed(format!(
                "the record is on issue #{number} ({record_url}) but HANDOFF.json could not be updated: {why}"
            ))
            .at("record locally", Some(number))
        })?;
    Ok(Pushed::Persisted {
        issue: number,
        kind,
        status: state.status,
        next: state.next,
        url: record_url,
        created,
        comments: parts.len(),
        note,
    })
}

/// The receipt lines for a push (the last line is the one-line receipt).
pub fn push_receipt(pushed: &Pushed) -> String {
    match pushed {
        Pushed::Persisted { issue, kind, status, next, url, created, comments, note } => {
            let mut out = String::new();
            if *created {
                out.push_str(&format!("created issue #{issue}, labelled {LABEL}\n"));
            } else if let Some(note) = note {
                out.push_str(&format!("{note}\n"));
            }
            if *comments > 1 {
                out.push_str(&format!(
                    "the record was split into {comments} comments to stay under GitHub's limit\n"
                ));
            }
            out.push_str(&format!(
                "persisted #{issue} | kind: {kind} | status: {status} | next: {} | {url}\n",
                one_line(next, 80)
            ));
            out
        }
        Pushed::NothingNew { issue, url, kind, timestamp, note } => {
            let note = note.as_ref().map(|n| format!("{n}\n")).unwrap_or_default();
            format!(
                "{note}nothing new since the last record on #{issue} ({kind}@{timestamp}): nothing written (--force writes anyway) | {url}\n"
            )
        }
    }
}

/// What `pull` was asked.
#[derive(Debug, Clone, Default)]
pub struct PullOptions {
    pub cwd: PathBuf,
    pub issue: Option<u64>,
    pub repo: Option<String>,
    pub write: bool,
}

/// What a pull found and did.
#[derive(Debug, Clone)]
pub struct Pulled {
    /// The project's root (paths are shown relative to it).
    pub root: PathBuf,
    pub issue: u64,
    pub repo: String,
    pub url: String,
    pub title: String,
    pub closed: bool,
    pub restored: Restored,
    /// Why the body's summary was not used, when it was not.
    pub body_problem: Option<String>,
    pub note: Option<String>,
    pub written: Option<PathBuf>,
    pub archived: Vec<PathBuf>,
}

/// `baton checkpoint pull`.
pub fn pull(options: &PullOptions, config: &Config) -> Result<Pulled, Failure> {
    let project = Project::open(&options.cwd, config)?;
    let repo = resolve_repo(options.repo.as_deref(), &project.root)?;
    let slug = repo.slug();
    let gh = Gh::default();
    let mut viewer = check_auth(&gh, &repo.host)?;
    let recorded = recorded_issue(project.json.as_ref(), &slug);
    let (chosen, note) = choose_issue(&gh, options.issue, recorded, &slug)?;
    let Some(n) = chosen else {
        return Err(Failure::usage(format!(
            "no open issue in {slug} is labelled {LABEL}: pass --issue N (or push a checkpoint first)"
        )));
    };
    let view = view_issue(&gh, &slug, n, options.issue.is_none() && recorded == Some(n))?;
    let (summary, body_problem) = summary::read(&view.body);
    let body_problem = body_problem.map(|why| format!("the body's Task Summary was ignored: it has {why}"));
    let records = record::parse_thread(&view.comments);
    // gh did not say who is logged in, and some record's standing depends on it: ask.
    let undecided = |r: &Record| r.author.viewer.is_none() && !restore::may_speak(&r.author, None);
    if viewer.is_none() && records.iter().any(undecided) {
        viewer = gh.viewer_login(&repo.host).ok().flatten();
    }
    let (records, ignored) = restore::sort_out(records, viewer.as_deref());
    let summary = summary.as_ref().map(|(s, form)| (s, *form));
    let Some(restored) = restore::resolve(summary, &records, ignored.clone()) else {
        let why = body_problem.as_ref().map(|p| format!(" ({p})")).unwrap_or_default();
        let ignored =
            if ignored.is_empty() { String::new() } else { format!("; {}", ignored_text(&ignored)) };
        return Err(Failure::usage(format!(
            "issue #{n} in {slug} has no Task Summary and no Persistence Record by someone with write access{why}{ignored}: nothing to restore"
        )));
    };
    let mut pulled = Pulled {
        root: project.root.clone(),
        issue: n,
        repo: slug.clone(),
        url: view.url.clone(),
        title: view.title.clone(),
        closed: !view.is_open(),
        restored,
        body_problem,
        note,
        written: None,
        archived: vec![],
    };
    if options.write {
        let (path, archived) = write_pulled(&project, &pulled)
            .map_err(|why| Failure::failed(format!("cannot write the handoff: {why}")))?;
        pulled.written = Some(path);
        pulled.archived = archived;
    }
    Ok(pulled)
}

/// Writes the pulled HANDOFF.json, archiving the one there first.
fn write_pulled(project: &Project, pulled: &Pulled) -> Result<(PathBuf, Vec<PathBuf>), store::StoreError> {
    let _lock = store::project_lock(&project.root);
    let now = Utc::now();
    let mut continue_here = planning::detect(&project.root).continue_here;
    if project.dir != Path::new(".planning") {
        continue_here = project.dir.join(".continue-here.md");
    }
    let existing = store::read_existing(&project.root, &project.dir, &continue_here);
    let archived = if existing.raw.is_some() || existing.markdown.is_some() {
        store::archive(&project.root, &project.dir, &existing, now)?
    } else {
        vec![]
    };
    let now_text = now.to_rfc3339_opts(SecondsFormat::Secs, true);
    let id = fsx::random_hex(12);
    let origin = restore::Origin {
        repo: &pulled.repo,
        issue: pulled.issue,
        url: &pulled.url,
        now: &now_text,
        id: &id,
    };
    let json = HandoffDoc::from_handoff(restore::to_handoff(&pulled.restored, &origin), &project.root);
    let folder = project.root.join(&project.dir);
    fsx::ensure_dir(&folder, false)
        .map_err(|source| store::StoreError::CreateDir { path: folder.clone(), source })?;
    store::rewrite_json(&project.json_path, &json)?;
    Ok((project.json_path.clone(), archived))
}

/// The ignored records in words: `ignored 2 records by authors without write access: …`.
fn ignored_text(ignored: &[restore::Ignored]) -> String {
    const SHOWN: usize = 10;
    let mut list: Vec<String> = ignored
        .iter()
        .rev()
        .take(SHOWN)
        .map(|i| format!("@{} ({}) {}@{}", i.author, i.association, i.kind, one_line(&i.timestamp, 40)))
        .collect();
    if ignored.len() > SHOWN {
        list.push(format!("+{} more", ignored.len() - SHOWN));
    }
    let plural = if ignored.len() == 1 { "" } else { "s" };
    format!(
        "ignored {} record{plural} by authors without write access (only the logged-in user's and OWNER, MEMBER or COLLABORATOR records are restored): {}",
        ignored.len(),
        list.join(", ")
    )
}

fn relative(path: &Path, root: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).display().to_string()
}

/// The receipt and what was restored, for people.
pub fn pull_receipt(pulled: &Pulled) -> String {
    let r = &pulled.restored;
    let s = &r.state;
    let last = match (&r.kind, &r.timestamp) {
        (Some(kind), Some(time)) => format!("{kind}@{time}"),
        _ => "none".into(),
    };
    let url = r.record_url.clone().unwrap_or_else(|| pulled.url.clone());
    let mut out = String::new();
    if let Some(note) = &pulled.note {
        out.push_str(&format!("{note}\n"));
    }
    out.push_str(&format!(
        "restored #{} | status: {} | next: {} | last record: {last} | {url}\n",
        pulled.issue,
        s.status,
        one_line(&s.next, 80)
    ));
    let mut line = |label: &str, value: &str| {
        if !value.is_empty() {
            out.push_str(&format!("  {label}: {value}\n"));
        }
    };
    line("goal", r.goal.as_deref().unwrap_or_default());
    line("stage", &s.stage);
    line("next", &s.next);
    line("plan", s.plan_path.as_deref().unwrap_or_default());
    let mut paths = s.key_paths.iter().take(8).cloned().collect::<Vec<_>>().join(", ");
    if s.key_paths.len() > 8 {
        paths.push_str(&format!(" (+{} more)", s.key_paths.len() - 8));
    }
    line("key paths", &paths);
    line("blocker", s.blocker.as_deref().unwrap_or_default());
    line("decision", s.decision.as_deref().unwrap_or_default());
    line("summary", s.reply_summary.as_deref().unwrap_or_default());
    if let Some(author) = &r.author {
        let who = author.login.as_deref().map(|l| format!("@{l}")).unwrap_or_else(|| "(unknown)".into());
        let role = author.association.as_deref().map(|a| format!(" ({a})")).unwrap_or_default();
        let how =
            if r.form == Some(record::Form::Skill) { ", written by hand (no baton header)" } else { "" };
        line("record by", &format!("{who}{role}{how}"));
    }
    if r.edited_after_posting {
        out.push_str(&format!(
            "warning: the newest record ({last}) was edited after posting: its content no longer matches the digest baton wrote; check it on GitHub before you trust it\n"
        ));
    }
    if r.summary == Some(summary::SummaryForm::Person) {
        out.push_str("read the body's own Task Summary (written without baton's markers; a push adds baton's block beside it)\n");
    }
    if !r.ignored.is_empty() {
        out.push_str(&format!("{}\n", ignored_text(&r.ignored)));
    }
    if !r.conflicts.is_empty() {
        out.push_str(&format!(
            "the body's Task Summary differs from the newest record in: {} (the newest record wins)\n",
            r.conflicts.join(", ")
        ));
    }
    if let Some(problem) = &pulled.body_problem {
        out.push_str(&format!("{problem}\n"));
    }
    if pulled.closed {
        out.push_str(&format!("note: issue #{} is closed\n", pulled.issue));
    }
    let shown = |p: &Path| relative(p, &pulled.root);
    if !pulled.archived.is_empty() {
        let files: Vec<String> = pulled.archived.iter().map(|p| shown(p)).collect();
        out.push_str(&format!("the previous handoff was archived to {}\n", files.join(", ")));
    }
    match &pulled.written {
        Some(path) => out.push_str(&format!(
            "wrote {} (source: github); it is not trusted until you accept it with `baton resume --accept`\n",
            shown(path)
        )),
        None => out.push_str("(nothing written; --write makes a HANDOFF.json of it)\n"),
    }
    out
}

/// The same for machines.
pub fn pull_json(pulled: &Pulled) -> Value {
    json!({
        "issue": pulled.issue,
        "repo": pulled.repo,
        "url": pulled.url,
        "title": pulled.title,
        "closed": pulled.closed,
        "restored": pulled.restored,
        "body_problem": pulled.body_problem,
        "written": pulled.written,
        "archived": pulled.archived,
    })
}

/// Starts `baton checkpoint push --auto` for the project at `root` in a detached child
/// (its own process group, no stdin/stdout/stderr) and returns at once: the hook stays
/// fast, and the push's failures are recorded in HANDOFF.json, never shown as a hook
/// error. The child is not waited for; the hook process exits right after and init
/// reaps it.
pub fn spawn_auto_push(root: &Path) -> std::io::Result<()> {
    spawn_push_with(&std::env::current_exe()?, root)
}

fn spawn_push_with(exe: &Path, root: &Path) -> std::io::Result<()> {
    let mut command = Command::new(exe);
    command
        .args(["checkpoint", "push", "--auto", "--cwd"])
        .arg(root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    crate::platform::detach(&mut command);
    command.spawn().map(|_child| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_short_words() {
        assert_eq!(parse_kind("Decision").unwrap(), "decision");
        assert!(parse_kind("milestone-2").is_ok());
        for bad in ["", "-x", "two words", "a/b", &"k".repeat(41)] {
            assert!(parse_kind(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_recorded_issue_counts_only_for_its_repository() {
        let doc = |value: Value| HandoffDoc::parse(value.to_string().as_bytes(), Path::new("/")).unwrap();
        let json = doc(json!({"baton": {"github_issue": 7, "github_repo": "acme/shop"}}));
        assert_eq!(recorded_issue(Some(&json), "acme/shop"), Some(7));
        assert_eq!(recorded_issue(Some(&json), "ACME/Shop"), Some(7));
        assert_eq!(recorded_issue(Some(&json), "other/repo"), None);
        assert_eq!(recorded_issue(Some(&doc(json!({"baton": {"github_issue": 3}}))), "x/y"), Some(3));
        assert_eq!(recorded_issue(None, "x/y"), None);
    }

    #[cfg(unix)]
    #[test]
    fn the_auto_push_starts_detached_and_returns_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("args");
        let script = dir.path().join("fake-baton");
        std::fs::write(&script, format!("#!/bin/sh\nsleep 0.3\necho \"$@\" > '{}'\n", log.display()))
            .unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let start = std::time::Instant::now();
        spawn_push_with(&script, Path::new("/some/project")).unwrap();
        assert!(start.elapsed() < std::time::Duration::from_millis(250), "{:?}", start.elapsed());
        for _ in 0..100 {
            if log.exists() && std::fs::read_to_string(&log).unwrap().ends_with('\n') {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "checkpoint push --auto --cwd /some/project\n");
    }
}
