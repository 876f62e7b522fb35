//! `pull`'s decisions, as pure functions: which records may speak, which is newest, what
//! the issue says about the task (the body's Task Summary and the thread's records, the
//! newest record winning), and the HANDOFF.json written from it.
//!
//! Who may speak: a record is restored only when the logged-in user wrote it, or an
//! author whose `authorAssociation` is OWNER, MEMBER or COLLABORATOR (someone with write
//! access); anyone else's is listed as ignored, with its author.
//!
//! Newest: the record with the latest Timestamp (the comment's creation time when it has
//! none or it does not read as a time), not the last in the thread. A Timestamp later than
//! the comment's creation counts as the creation time: a record cannot describe a moment
//! after it was posted, and one dated in the future would otherwise win over every later
//! checkpoint. Equal times: the later in the thread wins.
//!
//! Rules: Status, Stage and Next come from the newest record, else the summary; when both
//! have them and they differ, the record wins and the field is listed as a conflict, as
//! are Key Paths and the summary's Updated At against the record's Timestamp. Key Paths:
//! the newest record's, else the summary's. The blocker, completed tasks, plan path and
//! reply summary are the newest record's (a blocker missing from it was resolved). The
//! decision is the newest one any record states (decisions stay true once made).

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::fields::parse_time;
use super::record::{Author, Form, Record};
use super::state::{self, State};
use super::summary::{Summary, SummaryForm};
use crate::handoff::doc::{Baton, Blocker, Decision, Field, Handoff, Scalar, TaskEntry, Written};

/// The associations whose records are restored: people with write access.
pub const TRUSTED_ASSOCIATIONS: [&str; 3] = ["OWNER", "MEMBER", "COLLABORATOR"];

/// How many ignored records a handoff lists.
const IGNORED_KEPT: usize = 20;

/// Whether a record by `author` may be restored; `viewer` is the logged-in user's login.
pub fn may_speak(author: &Author, viewer: Option<&str>) -> bool {
    let is_viewer = author.viewer == Some(true)
        || matches!((author.login.as_deref(), viewer), (Some(a), Some(v)) if a.eq_ignore_ascii_case(v));
    let association = author.association.as_deref().unwrap_or_default();
    is_viewer || TRUSTED_ASSOCIATIONS.iter().any(|t| t.eq_ignore_ascii_case(association))
}

/// A record that was not restored because of who wrote it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ignored {
    pub author: String,
    pub association: String,
    pub kind: String,
    pub timestamp: String,
    pub url: Option<String>,
}

impl Ignored {
    fn of(record: &Record) -> Ignored {
        Ignored {
            author: record.author.login.clone().unwrap_or_else(|| "(unknown)".into()),
            association: record.author.association.clone().unwrap_or_else(|| "unknown".into()),
            kind: record.kind.clone(),
            timestamp: record.timestamp.clone(),
            url: record.url.clone(),
        }
    }
}

/// When a record counts as written (see the module's doc).
pub fn written_at(record: &Record) -> Option<DateTime<Utc>> {
    let posted = record.posted_at.as_deref().and_then(parse_time);
    match (parse_time(&record.timestamp), posted) {
        (Some(stamp), Some(posted)) => Some(stamp.min(posted)),
        (stamp, posted) => stamp.or(posted),
    }
}

/// The records that may speak, oldest first by [`written_at`], and those ignored.
pub fn sort_out(records: Vec<Record>, viewer: Option<&str>) -> (Vec<Record>, Vec<Ignored>) {
    let (mut trusted, others): (Vec<Record>, Vec<Record>) =
        records.into_iter().partition(|r| may_speak(&r.author, viewer));
    trusted.sort_by(|a, b| written_at(a).cmp(&written_at(b)).then(a.position.cmp(&b.position)));
    (trusted, others.iter().map(Ignored::of).collect())
}

/// What a pull found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Restored {
    pub goal: Option<String>,
    pub state: State,
    /// The newest record's kind and time, when there is a record.
    pub kind: Option<String>,
    pub timestamp: Option<String>,
    pub digest: Option<String>,
    pub record_url: Option<String>,
    /// The newest record's handoff line.
    pub handoff: Option<String>,
    /// Who wrote the newest record, and how.
    pub author: Option<Author>,
    pub form: Option<Form>,
    /// The newest record is baton's and its content no longer matches its digest.
    pub edited_after_posting: bool,
    /// Which summary was read: baton's block or the body's own.
    pub summary: Option<SummaryForm>,
    /// Fields where the body's summary and the newest record disagree.
    pub conflicts: Vec<String>,
    /// Records that may speak.
    pub records: usize,
    /// Records not restored because of who wrote them, in thread order.
    pub ignored: Vec<Ignored>,
}

fn pick(record: Option<&str>, body: Option<&str>, name: &str, conflicts: &mut Vec<String>) -> String {
    let record = record.filter(|r| !r.trim().is_empty());
    let body = body.filter(|b| !b.trim().is_empty());
    if let (Some(r), Some(b)) = (record, body) {
        if r.trim() != b.trim() {
            conflicts.push(name.to_string());
        }
    }
    record.or(body).unwrap_or_default().to_string()
}

/// Whether the body's key paths disagree with the record's. The body shows at most the
/// first [`super::summary::BODY_PATHS`] of them, so a longer list only has to start the same.
fn paths_differ(record: &[String], body: &[String]) -> bool {
    if record.is_empty() || body.is_empty() {
        return false;
    }
    if body.len() >= super::summary::BODY_PATHS && record.len() > body.len() {
        return record[..body.len()] != *body;
    }
    record != body
}

/// Combines the summary and the records that may speak (oldest first, as [`sort_out`]
/// orders them). `None` when there is neither.
pub fn resolve(
    summary: Option<(&Summary, SummaryForm)>,
    records: &[Record],
    ignored: Vec<Ignored>,
) -> Option<Restored> {
    let form = summary.map(|(_, form)| form);
    let summary = summary.map(|(s, _)| s);
    let newest = records.last();
    if summary.is_none() && newest.is_none() {
        return None;
    }
    let mut conflicts = vec![];
    let rec = newest.map(|r| &r.state);
    let status =
        pick(rec.map(|s| s.status.as_str()), summary.map(|s| s.status.as_str()), "status", &mut conflicts);
    let stage =
        pick(rec.map(|s| s.stage.as_str()), summary.map(|s| s.stage.as_str()), "stage", &mut conflicts);
    let next = pick(rec.map(|s| s.next.as_str()), summary.map(|s| s.next.as_str()), "next", &mut conflicts);
    if let (Some(r), Some(s)) = (rec, summary) {
        if paths_differ(&r.key_paths, &s.key_paths) {
            conflicts.push("key paths".into());
        }
    }
    if let (Some(r), Some(s)) = (newest, summary) {
        let (stamp, updated) = (parse_time(&r.timestamp), parse_time(&s.updated_at));
        if stamp.is_some() && updated.is_some() && stamp != updated {
            conflicts.push("updated at".into());
        }
    }
    let key_paths = rec
        .map(|s| s.key_paths.clone())
        .filter(|p| !p.is_empty())
        .or_else(|| summary.map(|s| s.key_paths.clone()))
        .unwrap_or_default();
    let decision = records.iter().rev().find_map(|r| r.state.decision.clone());
    let state = State {
        status,
        stage,
        next,
        completed: rec.map(|s| s.completed.clone()).unwrap_or_default(),
        decision,
        blocker: rec.and_then(|s| s.blocker.clone()),
        plan_path: rec.and_then(|s| s.plan_path.clone()),
        key_paths,
        reply_summary: rec.and_then(|s| s.reply_summary.clone()),
    };
    Some(Restored {
        goal: summary.map(|s| s.goal.clone()).filter(|g| !g.trim().is_empty()),
        state,
        kind: newest.map(|r| r.kind.clone()),
        timestamp: newest.map(|r| r.timestamp.clone()),
        digest: newest.map(|r| r.digest.clone()),
        record_url: newest.and_then(|r| r.url.clone()),
        handoff: newest.and_then(|r| r.handoff.clone()),
        author: newest.map(|r| r.author.clone()),
        form: newest.map(|r| r.form),
        edited_after_posting: newest.is_some_and(|r| r.edited),
        summary: form,
        conflicts,
        records: records.len(),
        ignored,
    })
}

/// Where the pulled state came from.
#[derive(Debug, Clone)]
pub struct Origin<'a> {
    pub repo: &'a str,
    pub issue: u64,
    pub url: &'a str,
    pub now: &'a str,
    /// A fresh id for the new handoff, never registered as this machine's.
    pub id: &'a str,
}

/// What a pull records of the newest record (`baton.github_record`).
#[derive(Debug, Clone, Serialize)]
struct RecordOrigin<'a> {
    kind: &'a str,
    timestamp: Option<&'a str>,
    digest: Option<&'a str>,
    url: Option<&'a str>,
    handoff: Option<&'a str>,
    form: Option<Form>,
    author: Option<&'a str>,
    author_association: Option<&'a str>,
    edited_after_posting: bool,
}

/// The HANDOFF.json a pull writes: GSD's schema 1.0, and a `baton` object that marks it
/// as coming from GitHub (`source: "github"`) with an id this machine never registered,
/// so the resume path treats it as foreign until the user accepts it.
pub fn to_handoff(restored: &Restored, origin: &Origin) -> Handoff {
    let s = &restored.state;
    let stage = state::parse_stage(&s.stage);
    let phase_dir = s
        .plan_path
        .as_deref()
        .and_then(|p| p.rsplit_once('/').map(|(dir, _)| dir.to_string()))
        .filter(|dir| dir.contains("/phases/") || dir.starts_with("phases/"))
        // A path from a comment never leads out of the project.
        .filter(|dir| {
            !dir.starts_with('/') && !dir.contains('\\') && !dir.split('/').any(|part| part == "..")
        });
    let completed: Vec<Written<TaskEntry>> = s
        .completed
        .iter()
        .enumerate()
        .map(|(n, name)| {
            Written::new(&TaskEntry {
                id: Field::Set(n as u64 + 1),
                name: Field::Set(Scalar::Text(name.clone())),
                status: Field::Set("done".into()),
                ..TaskEntry::default()
            })
        })
        .collect();
    let blockers: Vec<Written<Blocker>> = s
        .blocker
        .iter()
        .map(|b| {
            let (description, kind) = state::parse_blocker(b);
            Written::new(&Blocker {
                description: Field::Set(Scalar::Text(description)),
                kind: Field::Set(Scalar::Text(kind.unwrap_or_default())),
                workaround: Field::Set(String::new()),
            })
        })
        .collect();
    let decisions: Vec<Written<Decision>> = s
        .decision
        .iter()
        .map(|d| {
            let (decision, rationale) = state::parse_decision(d);
            Written::new(&Decision {
                decision: Field::Set(Scalar::Text(decision)),
                rationale: Field::or_missing(rationale.map(Scalar::Text)),
                phase: Field::from(stage.phase.clone()),
            })
        })
        .collect();

    let record = restored.kind.as_deref().map(|kind| RecordOrigin {
        kind,
        timestamp: restored.timestamp.as_deref(),
        digest: restored.digest.as_deref(),
        url: restored.record_url.as_deref(),
        handoff: restored.handoff.as_deref(),
        form: restored.form,
        author: restored.author.as_ref().and_then(|a| a.login.as_deref()),
        author_association: restored.author.as_ref().and_then(|a| a.association.as_deref()),
        edited_after_posting: restored.edited_after_posting,
    });
    let ignored = if restored.ignored.is_empty() {
        Field::Missing
    } else {
        Field::json(restored.ignored.iter().rev().take(IGNORED_KEPT).collect::<Vec<&Ignored>>())
    };
    let context = stage.context.clone().unwrap_or_else(|| {
        if stage.phase.is_some() || stage.phase_name.is_some() { "phase".into() } else { "default".into() }
    });
    let baton = Baton {
        id: Field::Set(origin.id.to_string()),
        source: Field::Set("github".into()),
        github_issue: Field::Set(origin.issue),
        github_repo: Field::Set(origin.repo.to_string()),
        github_url: Field::Set(origin.url.to_string()),
        github_record: Field::json(record),
        github_ignored: ignored,
        github_conflicts: Field::json(&restored.conflicts),
        github_pulled_at: Field::Set(origin.now.to_string()),
        goal: Field::from(restored.goal.clone()),
        context: Field::Set(context),
        // The record's own status is the task's (blocked, in progress, done…); the
        // handoff itself is paused, so the next session can resume it once accepted.
        task_status: Field::Set(if s.status.is_empty() { "paused".into() } else { s.status.clone() }),
        key_paths: Field::Set(s.key_paths.iter().cloned().map(Field::Set).collect()),
        plan_path: Field::from(s.plan_path.clone()),
        writer: Field::Set(concat!("baton ", env!("CARGO_PKG_VERSION")).to_string()),
        ..Baton::default()
    };

    Handoff {
        timestamp: Field::Set(restored.timestamp.clone().unwrap_or_else(|| origin.now.into())),
        phase: Field::from(stage.phase.clone().map(Scalar::Text)),
        phase_name: Field::from(stage.phase_name.clone()),
        phase_dir: Field::from(phase_dir),
        // "01" stays text, so the stage reads back exactly as it was written.
        plan: Field::from(stage.plan.as_deref().map(Scalar::number_or_text)),
        task: Field::from(stage.task),
        total_tasks: Field::from(stage.total_tasks),
        status: Field::Set("paused".into()),
        completed_tasks: Field::Set(completed),
        blockers: Field::Set(blockers),
        decisions: Field::Set(decisions),
        next_action: Field::Set(s.next.clone()),
        context_notes: Field::Set(s.reply_summary.clone().unwrap_or_default()),
        baton: Field::Set(baton),
        ..Handoff::fresh()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint_github::record::Record;
    use std::path::Path;

    fn state() -> State {
        State {
            status: "paused".into(),
            stage: "phase 03 (rate-limiting), plan 02, task 3/4".into(),
            next: "Continue: wire it".into(),
            completed: vec!["Read the router".into()],
            decision: Some("Tiers live in config — ops edits them".into()),
            blocker: Some("Key missing [human_action]".into()),
            plan_path: Some(".planning/phases/03-rate-limiting/03-02-PLAN.md".into()),
            key_paths: vec!["src/limiter.ts".into()],
            reply_summary: Some("Last request: tiers".into()),
        }
    }

    fn summary() -> Summary {
        Summary {
            goal: "Add rate limiting".into(),
            status: "paused".into(),
            stage: state().stage,
            next: "Continue: wire it".into(),
            updated_at: "t".into(),
            issue: Some(7),
            key_paths: vec!["from/body.ts".into()],
        }
    }

    fn by(mut record: Record, login: &str, association: &str, posted: &str, position: usize) -> Record {
        record.author =
            Author { login: Some(login.into()), association: Some(association.into()), viewer: None };
        record.posted_at = Some(posted.into());
        record.position = position;
        record
    }

    #[test]
    fn only_the_viewer_and_people_with_write_access_may_speak() {
        let author = |login: &str, association: &str, viewer: Option<bool>| Author {
            login: Some(login.into()),
            association: Some(association.into()),
            viewer,
        };
        for association in ["OWNER", "MEMBER", "COLLABORATOR", "collaborator"] {
            assert!(may_speak(&author("x", association, None), None), "{association}");
        }
        for association in ["CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR", "NONE", "MANNEQUIN", ""] {
            assert!(!may_speak(&author("x", association, None), None), "{association}");
            assert!(may_speak(&author("me", association, None), Some("ME")), "the logged-in user");
            assert!(may_speak(&author("x", association, Some(true)), None), "viewerDidAuthor");
        }
        assert!(!may_speak(&Author::default(), None));
    }

    #[test]
    fn the_newest_is_chosen_by_time_not_by_thread_order() {
        let mut a = state();
        a.next = "a".into();
        let mut b = state();
        b.next = "b".into();
        let mut c = state();
        c.next = "c".into();
        let records = vec![
            by(
                Record::new("checkpoint", "2026-11-30T06:00:00Z", None, a),
                "dev",
                "OWNER",
                "2026-11-30T06:00:05Z",
                0,
            ),
            by(
                Record::new("handoff", "2026-11-30 09:00", None, b),
                "dev",
                "MEMBER",
                "2026-11-30T09:01:00Z",
                1,
            ),
            // Posted last, but written about an earlier moment.
            by(
                Record::new("handoff", "2026-11-30T07:00:00Z", None, c),
                "dev",
                "OWNER",
                "2026-11-30T10:00:00Z",
                2,
            ),
            by(
                Record::new("handoff", "2099-01-01T00:00:00Z", None, state()),
                "mallory",
                "NONE",
                "2026-11-30T11:00:00Z",
                3,
            ),
        ];
        let (trusted, ignored) = sort_out(records, None);
        assert_eq!(trusted.iter().map(|r| r.state.next.as_str()).collect::<Vec<_>>(), vec!["a", "c", "b"]);
        assert_eq!(ignored.len(), 1);
        assert_eq!((ignored[0].author.as_str(), ignored[0].association.as_str()), ("mallory", "NONE"));
        let restored = resolve(None, &trusted, ignored).unwrap();
        assert_eq!(restored.state.next, "b");
        assert_eq!(restored.ignored[0].timestamp, "2099-01-01T00:00:00Z");
    }

    #[test]
    fn a_timestamp_after_the_comment_was_posted_counts_as_the_posting_time() {
        let future = by(
            Record::new("handoff", "2099-01-01T00:00:00Z", None, state()),
            "dev",
            "OWNER",
            "2026-11-30T06:00:00Z",
            0,
        );
        let later = by(
            Record::new("checkpoint", "2026-11-30T08:00:00Z", None, state()),
            "dev",
            "OWNER",
            "2026-11-30T08:00:01Z",
            1,
        );
        let (trusted, _) = sort_out(vec![later, future], None);
        assert_eq!(trusted.last().unwrap().kind, "checkpoint");
        // No time at all: the comment's; unreadable: the comment's too.
        let mut odd =
            by(Record::new("x", "next tuesday", None, state()), "dev", "OWNER", "2026-11-30T09:00:00Z", 2);
        assert_eq!(written_at(&odd), parse_time("2026-11-30T09:00:00Z"));
        odd.posted_at = None;
        assert_eq!(written_at(&odd), None);
        assert_eq!(parse_time("2026-11-30"), parse_time("2026-11-30T00:00:00Z"));
        assert_eq!(parse_time("2026-11-30 08:00:00 UTC"), parse_time("2026-11-30T08:00:00+00:00"));
    }

    #[test]
    fn every_differing_field_is_listed() {
        let mut newer = state();
        newer.stage = "phase 04".into();
        newer.key_paths = vec!["src/other.ts".into()];
        let records = vec![Record::new("handoff", "2026-11-30T09:00:00Z", None, newer)];
        let mut body = summary();
        body.updated_at = "2026-11-30T08:00:00Z".into();
        let restored = resolve(Some((&body, SummaryForm::Person)), &records, vec![]).unwrap();
        assert_eq!(restored.conflicts, vec!["stage", "key paths", "updated at"]);
        assert_eq!(restored.summary, Some(SummaryForm::Person));
        // The body shows only the first 30 paths of a longer list: not a difference.
        let long: Vec<String> = (0..40).map(|n| format!("p{n}")).collect();
        assert!(!paths_differ(&long, &long[..30]));
        assert!(paths_differ(&long, &long[1..31]));
    }

    #[test]
    fn the_newest_record_wins_and_differences_are_listed() {
        let mut newer = state();
        newer.status = "blocked".into();
        newer.next = "Ask for the key".into();
        newer.decision = None;
        newer.blocker = None;
        let records =
            vec![Record::new("checkpoint", "t1", None, state()), Record::new("auto", "t2", None, newer)];
        let restored = resolve(Some((&summary(), SummaryForm::Baton)), &records, vec![]).unwrap();
        assert_eq!(restored.state.status, "blocked");
        assert_eq!(restored.state.next, "Ask for the key");
        assert_eq!(restored.conflicts, vec!["status", "next", "key paths"]);
        assert_eq!(restored.kind.as_deref(), Some("auto"));
        assert_eq!(restored.state.decision.as_deref(), Some("Tiers live in config — ops edits them"));
        assert_eq!(restored.state.blocker, None, "the newest record has no blocker: resolved");
        assert_eq!(restored.goal.as_deref(), Some("Add rate limiting"));
    }

    #[test]
    fn the_summary_alone_is_enough() {
        let restored = resolve(Some((&summary(), SummaryForm::Baton)), &[], vec![]).unwrap();
        assert_eq!(restored.state.next, "Continue: wire it");
        assert_eq!(restored.state.key_paths, vec!["from/body.ts"]);
        assert!(restored.conflicts.is_empty());
        assert_eq!(restored.kind, None);
        assert!(resolve(None, &[], vec![]).is_none());
    }

    #[test]
    fn a_written_handoff_reads_back_as_the_same_state() {
        let records = vec![Record::new("checkpoint", "2026-11-30T05:00:00Z", None, state())];
        let restored = resolve(Some((&summary(), SummaryForm::Baton)), &records, vec![]).unwrap();
        let origin =
            Origin { repo: "acme/shop", issue: 7, url: "u", now: "2026-12-01T00:00:00Z", id: "fresh" };
        let doc =
            crate::handoff::doc::HandoffDoc::from_handoff(to_handoff(&restored, &origin), Path::new("/"));
        let json = doc.to_value();
        assert_eq!(json["plan"], "02");
        assert_eq!(json["task"], 3);
        assert_eq!(json["phase_dir"], ".planning/phases/03-rate-limiting");
        assert_eq!(json["baton"]["source"], "github");
        assert_eq!(json["blockers"][0]["type"], "human_action");
        assert_eq!(json["baton"]["github_record"]["edited_after_posting"], false);
        assert_eq!(json["baton"]["github_record"]["form"], "baton");
        let again = state::from_handoff(&doc, None);
        assert_eq!(again, state());
        assert_eq!(state::goal(&doc, None), "Add rate limiting");
    }
}
