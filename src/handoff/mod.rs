//! The handoff: gather facts (git, `.planning/`, the transcript) → build one model →
//! write HANDOFF.json and `.continue-here.md` → checkpoint in git.
//!
//! Used by the hook at CRITICAL (trigger `critical-context`, `ref` checkpoint), before a
//! compaction (`pre-compact`), and by `baton pause` (`manual`, a `wip:` commit on the
//! branch). Every source of facts is optional: what is missing is recorded in the
//! handoff, never fatal.
//!
//! The files go where no one else can reach them: when another local user could read,
//! swap or plant them in the project ([`crate::fsx::write_exposure`]: a world-writable or
//! shared folder, or one of another user's), they go to baton's private folder instead
//! ([`store::private_root`], per project and session) and the outcome says where and why.

pub mod audit;
pub mod doc;
pub mod markdown;
pub mod model;
pub mod quiet;
pub mod store;

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use crate::gitx::{self, Checkpoint, CheckpointRequest, Mode, Repo};
use crate::metrics::Figure;
use crate::planning;
use crate::transcript::{self, FactsBudget};

pub use model::{Snapshot, Sourced, Summary, Trigger};

/// What to write a handoff for.
#[derive(Debug, Clone)]
pub struct Request {
    pub trigger: Trigger,
    pub session_id: String,
    pub cwd: PathBuf,
    pub transcript_path: Option<PathBuf>,
    /// The format the host writes its transcript in (the host the facts come from).
    pub transcript_format: transcript::Format,
    /// The session's facts as the host sent them (OpenCode's messages, from baton's
    /// plugin), in place of a transcript read.
    pub facts: Option<transcript::SessionFacts>,
    pub figure: Option<Figure>,
    pub checkpoint: Mode,
    /// Where HANDOFF.json lives, relative to the project root (`handoff.dir`).
    pub dir: PathBuf,
    pub now: DateTime<Utc>,
}

/// What was written.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The project.
    pub root: PathBuf,
    /// Where the files went: the project, or baton's private folder for it.
    pub files_root: PathBuf,
    /// Why the files are in baton's private folder rather than the project.
    pub private: Option<String>,
    pub json_path: PathBuf,
    pub markdown_path: PathBuf,
    pub summary: Summary,
    pub checkpoint: Option<Checkpoint>,
    /// Why no checkpoint was made when one was asked for.
    pub checkpoint_note: Option<String>,
    /// Handoffs moved to the archive first.
    pub archived: Vec<PathBuf>,
    /// What was out of bounds in the HANDOFF.json found there (ignored), and whether it
    /// was of a newer version (archived aside, untouched).
    pub problems: Vec<String>,
    /// Another session's pending handoff moved from HANDOFF.json to its pending folder
    /// (this one took its place): where it waits now.
    pub displaced: Option<PathBuf>,
    /// This handoff went to the session's pending folder, since HANDOFF.json holds
    /// another session's pending one.
    pub pending: bool,
    /// What a baton process killed while holding git's locks had left, cleared first.
    pub recovered: Vec<String>,
}

fn since(facts: &Sourced<transcript::SessionFacts>) -> Option<DateTime<Utc>> {
    let started = facts.found()?.started_at.as_deref()?;
    DateTime::parse_from_rfc3339(started).ok().map(|t| t.with_timezone(&Utc))
}

fn relative_slash(path: &Path) -> String {
    path.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/")
}

/// The commit message for a checkpoint: GSD's `wip: <context> paused at X/Y` for a
/// commit on the branch, a plain description for the private ref.
pub fn commit_message(mode: Mode, trigger: Trigger, summary: &Summary, figure: Option<&Figure>) -> String {
    match mode {
        Mode::Branch => match (summary.task, summary.total_tasks) {
            (Some(x), Some(y)) => format!("wip: {} paused at {x}/{y}", summary.location),
            _ => format!("wip: paused ({})", trigger.as_str()),
        },
        _ => {
            let at = figure.map(|f| format!(" at {}% used", f.used_pct())).unwrap_or_default();
            format!("baton: checkpoint ({}){at}", trigger.as_str())
        }
    }
}

/// Why no handoff was written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Another writer of this project held its lock past the deadline.
    #[error("another baton process is writing this project's handoff ({0})")]
    Busy(std::io::Error),
    /// Archiving the old handoff or writing the new files failed (the store says why).
    #[error("{0}")]
    Files(#[from] store::StoreError),
}

/// Why the handoff cannot go into the project folder (another user could read, swap or
/// plant it there), when it cannot: the folders it would be written in and created under.
fn exposure(root: &Path, dir: &Path, session_id: &str, continue_here: &Path) -> Option<String> {
    let pending = store::pending_dir(dir, session_id);
    let markdown_folder = continue_here.parent().unwrap_or(dir);
    crate::fsx::write_exposure(root, &[pending.as_path(), markdown_folder])
}

/// Gathers, writes and checkpoints a handoff.
pub fn write(request: &Request) -> Result<Outcome, WriteError> {
    let repo = Repo::discover(&request.cwd).unwrap_or(None);
    // A killed pause's locks would hold this checkpoint (and the user's commits) up.
    let recovered = repo.as_ref().map(Repo::recover_locks).unwrap_or_default();
    // The nearest GSD project between the event's folder and the top of the work tree.
    let root = repo
        .as_ref()
        .map(|r| gitx::nearest_planning(&request.cwd, r.root()))
        .unwrap_or_else(|| request.cwd.clone());
    let project_rel = repo
        .as_ref()
        .and_then(|r| root.strip_prefix(r.root()).ok())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    // Another writer of this project holding its lock past the deadline: no handoff,
    // and the hook says why, rather than wait for the host to kill it.
    let _lock = match store::project_lock_within(&root, store::PROJECT_LOCK_WAIT) {
        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
            return Err(WriteError::Busy(e));
        }
        lock => lock.ok(),
    };

    let transcript = match (&request.facts, &request.transcript_path) {
        (Some(facts), _) => Sourced::Found(facts.clone()),
        (None, None) => Sourced::Missing("no transcript path given".into()),
        (None, Some(path)) => {
            match transcript::gather_facts_as(request.transcript_format, path, FactsBudget::default()) {
                Ok(facts) => Sourced::Found(facts),
                Err(e) => Sourced::Missing(format!("transcript {} unreadable: {e}", path.display())),
            }
        }
    };
    if let Sourced::Found(facts) = &transcript {
        if let Some(model) = facts.model.as_deref() {
            for compaction in &facts.compactions {
                crate::metrics::learned::record(model, compaction);
            }
        }
    }
    let git = match &repo {
        None => Sourced::Missing("not a git repository".into()),
        Some(repo) => match repo.facts(since(&transcript)) {
            Ok(facts) => Sourced::Found(facts),
            Err(e) => Sourced::Missing(e.to_string()),
        },
    };
    let mut planning = planning::detect(&root);
    if request.dir != Path::new(".planning") {
        planning.continue_here = request.dir.join(".continue-here.md");
    }
    // Where the files go: the project, or this session's private folder standing in for
    // it (the same layout below it) when another user could reach them there.
    let private = exposure(&root, &request.dir, &request.session_id, &planning.continue_here);
    let files_root = match &private {
        None => root.clone(),
        Some(_) => {
            planning.continue_here = request.dir.join(doc::CONTINUE_HERE);
            store::private_root(&root, &request.session_id)?
        }
    };

    // Where this session's handoff goes: GSD's HANDOFF.json, or this session's pending
    // folder while another session's pending handoff is there (never buried).
    let main = store::read_existing(&files_root, &request.dir, &planning.continue_here);
    let main_doc = main.doc.clone();
    let pending = store::pending_dir(&request.dir, &request.session_id);
    let pending_md = pending.join(doc::CONTINUE_HERE);
    let own_pending = store::read_existing(&files_root, &pending, &pending_md);
    let takes_main = request.trigger != Trigger::PreCompact;
    let mut displaced = None;
    let placement = store::placement(&main, &own_pending, &request.session_id, takes_main);
    let (dir, existing, disposition) = match placement {
        store::Placement::Main(disposition) => (request.dir.clone(), main, disposition),
        store::Placement::DisplaceThenMain => {
            displaced = Some(store::displace(&files_root, &request.dir, &main)?);
            (request.dir.clone(), store::Existing::default(), store::Disposition::Fresh)
        }
        store::Placement::OwnPending => {
            let disposition = store::disposition(&own_pending, &request.session_id);
            (pending, own_pending, disposition)
        }
    };
    if dir != request.dir {
        planning.continue_here = pending_md;
    }
    let mut archived = vec![];
    let previous = match disposition {
        store::Disposition::Refresh => Some(existing.clone()),
        store::Disposition::Fresh => store::newest_archived(&files_root, &dir, &request.session_id),
        store::Disposition::Archive => {
            archived = store::archive(&files_root, &dir, &existing, request.now)?;
            store::newest_archived(&files_root, &dir, &request.session_id)
        }
    };
    let previous_doc = previous.as_ref().and_then(|p| p.doc.clone());
    let mut problems: Vec<String> = existing.doc.as_ref().map(|d| d.problems().to_vec()).unwrap_or_default();
    if !existing.writable() {
        problems.push(format!(
            "the existing HANDOFF.json has a newer version: archived aside as it was{}",
            archived
                .first()
                .map(|p| format!(" ({})", relative_slash(p.strip_prefix(&files_root).unwrap_or(p))))
                .unwrap_or_default()
        ));
    }
    let carried = previous
        .as_ref()
        .and_then(|p| p.markdown.as_deref())
        .map(markdown::parse_carried)
        .unwrap_or_default();
    let id = previous_doc
        .as_ref()
        .and_then(|d| d.baton().id())
        .filter(|id| crate::fsx::valid_session_id(id) && store::is_registered(&files_root, id))
        .map(str::to_string)
        .unwrap_or_else(|| crate::fsx::random_hex(12));

    let snapshot = Snapshot {
        trigger: request.trigger,
        session_id: request.session_id.clone(),
        transcript_path: request.transcript_path.as_ref().map(|p| p.to_string_lossy().into_owned()),
        now: request.now,
        figure: request.figure.clone(),
        git,
        planning,
        transcript,
        id: id.clone(),
        handoff_dir: dir.clone(),
        main_dir: request.dir.clone(),
        project_rel: project_rel.clone(),
    };
    // A handoff kept out of the project is not put into its git either.
    let checkpoint_mode = if private.is_some() { Mode::Off } else { request.checkpoint };
    let planned = repo
        .as_ref()
        .filter(|_| checkpoint_mode != Mode::Off)
        .map(|_| planned_checkpoint(request.checkpoint, &request.session_id));
    let mut handoff = model::build(&snapshot, previous_doc.as_ref(), planned.as_ref(), &root);
    let markdown = markdown::render(&handoff, &snapshot, &carried);
    // The GitHub issue the task is checkpointed to outlives any one handoff.
    doc::carry_issue(
        existing.doc.as_ref().or(main_doc.as_ref()).or(previous_doc.as_ref()),
        &mut handoff.json,
    );
    // A same-session handoff whose .continue-here.md moved (the active phase changed):
    // the old one is this session's own (its id registered, its path validated), and
    // would only mislead.
    if let (Some(prev), store::Disposition::Refresh) = (&previous, disposition) {
        if let Some(old) = prev.markdown_path.as_ref().filter(|_| prev.owned) {
            if old != &handoff.continue_here {
                let _ = std::fs::remove_file(files_root.join(old));
            }
        }
    }
    let (json_path, markdown_path) =
        store::write_files(&files_root, &dir, &handoff.json, &handoff.continue_here, &markdown)?;
    if let (Some(repo), None) = (&repo, &private) {
        quiet::exclude_untracked_planning(repo, &project_rel, &request.dir);
    }
    let _ = store::register(&files_root, &id, &request.session_id, request.now);

    let (checkpoint, checkpoint_note) = match (&repo, checkpoint_mode) {
        (Some(_), Mode::Off) if private.is_some() && request.checkpoint != Mode::Off => {
            (None, Some("no checkpoint: the handoff is kept out of the project and its git".to_string()))
        }
        (_, Mode::Off) => (None, None),
        (None, _) => (None, Some("not a git repository: only the files were written".to_string())),
        (Some(repo), mode) => {
            // Paths relative to the top of the work tree.
            let extra = vec![
                (
                    relative_slash(&project_rel.join(&dir).join("HANDOFF.json")),
                    std::fs::read(&json_path).unwrap_or_default(),
                ),
                (relative_slash(&project_rel.join(&handoff.continue_here)), markdown.clone().into_bytes()),
            ];
            let message = commit_message(mode, request.trigger, &handoff.summary, request.figure.as_ref());
            let req = CheckpointRequest {
                mode,
                session_id: &request.session_id,
                message: &message,
                extra_files: &extra,
            };
            match repo.checkpoint(&req) {
                Ok(done) => (Some(done), None),
                Err(e) => (None, Some(format!("checkpoint failed: {e}"))),
            }
        }
    };
    // Record the checkpoint's commit in HANDOFF.json, except after a commit on the
    // branch: rewriting the file then would leave it modified against that commit.
    let on_branch = checkpoint.as_ref().is_some_and(|c| c.used == Mode::Branch);
    if !on_branch && (checkpoint.is_some() || checkpoint_note.is_some()) {
        let mut json = handoff.json.clone();
        let baton = json.baton_mut();
        baton.checkpoint = doc::Field::from(checkpoint.as_ref().map(model::checkpoint_record));
        if let Some(note) = &checkpoint_note {
            baton.checkpoint_note = doc::Field::Set(note.clone());
        }
        store::rewrite_json(&json_path, &json)?;
    }
    Ok(Outcome {
        root,
        files_root,
        private,
        json_path,
        markdown_path,
        summary: handoff.summary,
        checkpoint,
        checkpoint_note,
        archived,
        problems,
        displaced,
        pending: placement == store::Placement::OwnPending,
        recovered,
    })
}

/// What the handoff says about its checkpoint before it is made.
fn planned_checkpoint(mode: Mode, session_id: &str) -> Checkpoint {
    let mut planned = Checkpoint::planned(mode);
    if mode == Mode::Ref {
        planned.reference = gitx::checkpoint::wip_ref_name(session_id).ok();
    }
    planned
}
