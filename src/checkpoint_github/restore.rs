//! `pull`'s decisions, as pure functions: what the issue says about the task (the body's
//! Task Summary and the thread's records, the newest record winning), and the
//! HANDOFF.json written from it.
//!
//! Rules: Status, Stage and Next come from the newest record, else the summary; when both
//! have them and they differ, the record wins and the field is listed as a conflict. Key
//! Paths: the newest record's, else the summary's. The blocker, completed tasks, plan path
//! and reply summary are the newest record's (a blocker missing from it was resolved). The
//! decision is the newest one any record states (decisions stay true once made).

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::record::Record;
use super::state::{self, State};
use super::summary::Summary;

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
    /// Fields where the body's summary and the newest record disagree.
    pub conflicts: Vec<String>,
    pub records: usize,
}

fn pick(record: Option<&str>, body: Option<&str>, name: &str, conflicts: &mut Vec<String>) -> String {
    let record = record.filter(|r| !r.trim().is_empty());
    let body = body.filter(|b| !b.trim().is_empty());
    if let (Some(r), Some(b)) = (record, body) {
        if r != b {
            conflicts.push(name.to_string());
        }
    }
    record.or(body).unwrap_or_default().to_string()
}

/// Combines the summary and the records (oldest first). `None` when there is neither.
pub fn resolve(summary: Option<&Summary>, records: &[Record]) -> Option<Restored> {
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
        conflicts,
        records: records.len(),
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

fn number_or_text(text: &str) -> Value {
    // "01" stays text, so the stage reads back exactly as it was written.
    match text.parse::<u64>() {
        Ok(n) if n.to_string() == text => Value::from(n),
        _ => Value::from(text),
    }
}

/// The HANDOFF.json a pull writes: GSD's schema 1.0, and a `baton` object that marks it
/// as coming from GitHub (`source: "github"`) with an id this machine never registered,
/// so the resume path treats it as foreign until the user accepts it.
pub fn to_handoff(restored: &Restored, origin: &Origin) -> Value {
    let s = &restored.state;
    let stage = state::parse_stage(&s.stage);
    let phase_dir = s
        .plan_path
        .as_deref()
        .and_then(|p| p.rsplit_once('/').map(|(dir, _)| dir.to_string()))
        .filter(|dir| dir.contains("/phases/") || dir.starts_with("phases/"));
    let completed: Vec<Value> = s
        .completed
        .iter()
        .enumerate()
        .map(|(n, name)| json!({"id": n + 1, "name": name, "status": "done"}))
        .collect();
    let blockers: Vec<Value> = s
        .blocker
        .iter()
        .map(|b| {
            let (description, kind) = state::parse_blocker(b);
            json!({"description": description, "type": kind.unwrap_or_default(), "workaround": ""})
        })
        .collect();
    let decisions: Vec<Value> = s
        .decision
        .iter()
        .map(|d| {
            let (decision, rationale) = state::parse_decision(d);
            let mut entry = Map::new();
            entry.insert("decision".into(), Value::from(decision));
            if let Some(rationale) = rationale {
                entry.insert("rationale".into(), Value::from(rationale));
            }
            entry.insert("phase".into(), json!(stage.phase));
            Value::Object(entry)
        })
        .collect();

    let mut baton = Map::new();
    baton.insert("id".into(), Value::from(origin.id));
    baton.insert("source".into(), Value::from("github"));
    baton.insert("github_issue".into(), Value::from(origin.issue));
    baton.insert("github_repo".into(), Value::from(origin.repo));
    baton.insert("github_url".into(), Value::from(origin.url));
    baton.insert(
        "github_record".into(),
        json!(restored.kind.as_ref().map(|kind| json!({
            "kind": kind,
            "timestamp": restored.timestamp,
            "digest": restored.digest,
            "url": restored.record_url,
            "handoff": restored.handoff,
        }))),
    );
    baton.insert("github_conflicts".into(), json!(restored.conflicts));
    baton.insert("github_pulled_at".into(), Value::from(origin.now));
    baton.insert("goal".into(), json!(restored.goal));
    baton.insert(
        "context".into(),
        json!(stage.context.clone().unwrap_or_else(|| {
            if stage.phase.is_some() || stage.phase_name.is_some() {
                "phase".into()
            } else {
                "default".into()
            }
        })),
    );
    baton.insert("key_paths".into(), json!(s.key_paths));
    baton.insert("plan_path".into(), json!(s.plan_path));
    baton.insert("writer".into(), Value::from(concat!("baton ", env!("CARGO_PKG_VERSION"))));

    let mut out = Map::new();
    out.insert("version".into(), Value::from("1.0"));
    out.insert(
        "timestamp".into(),
        Value::from(restored.timestamp.clone().unwrap_or_else(|| origin.now.into())),
    );
    out.insert("phase".into(), json!(stage.phase));
    out.insert("phase_name".into(), json!(stage.phase_name));
    out.insert("phase_dir".into(), json!(phase_dir));
    out.insert("plan".into(), stage.plan.as_deref().map(number_or_text).unwrap_or(Value::Null));
    out.insert("task".into(), json!(stage.task));
    out.insert("total_tasks".into(), json!(stage.total_tasks));
    out.insert("status".into(), Value::from(if s.status.is_empty() { "paused" } else { s.status.as_str() }));
    out.insert("completed_tasks".into(), Value::Array(completed));
    out.insert("remaining_tasks".into(), json!([]));
    out.insert("blockers".into(), Value::Array(blockers));
    out.insert("human_actions_pending".into(), json!([]));
    out.insert("decisions".into(), Value::Array(decisions));
    out.insert("uncommitted_files".into(), json!([]));
    out.insert("next_action".into(), Value::from(s.next.clone()));
    out.insert("context_notes".into(), Value::from(s.reply_summary.clone().unwrap_or_default()));
    out.insert("baton".into(), Value::Object(baton));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint_github::record::Record;

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

    #[test]
    fn the_newest_record_wins_and_differences_are_listed() {
        let mut newer = state();
        newer.status = "blocked".into();
        newer.next = "Ask for the key".into();
        newer.decision = None;
        newer.blocker = None;
        let records =
            vec![Record::new("checkpoint", "t1", None, state()), Record::new("auto", "t2", None, newer)];
        let restored = resolve(Some(&summary()), &records).unwrap();
        assert_eq!(restored.state.status, "blocked");
        assert_eq!(restored.state.next, "Ask for the key");
        assert_eq!(restored.conflicts, vec!["status", "next"]);
        assert_eq!(restored.kind.as_deref(), Some("auto"));
        assert_eq!(restored.state.decision.as_deref(), Some("Tiers live in config — ops edits them"));
        assert_eq!(restored.state.blocker, None, "the newest record has no blocker: resolved");
        assert_eq!(restored.goal.as_deref(), Some("Add rate limiting"));
    }

    #[test]
    fn the_summary_alone_is_enough() {
        let restored = resolve(Some(&summary()), &[]).unwrap();
        assert_eq!(restored.state.next, "Continue: wire it");
        assert_eq!(restored.state.key_paths, vec!["from/body.ts"]);
        assert!(restored.conflicts.is_empty());
        assert_eq!(restored.kind, None);
        assert!(resolve(None, &[]).is_none());
    }

    #[test]
    fn a_written_handoff_reads_back_as_the_same_state() {
        let records = vec![Record::new("checkpoint", "2026-11-30T05:00:00Z", None, state())];
        let restored = resolve(Some(&summary()), &records).unwrap();
        let origin =
            Origin { repo: "acme/shop", issue: 7, url: "u", now: "2026-12-01T00:00:00Z", id: "fresh" };
        let json = to_handoff(&restored, &origin);
        assert_eq!(json["plan"], "02");
        assert_eq!(json["task"], 3);
        assert_eq!(json["phase_dir"], ".planning/phases/03-rate-limiting");
        assert_eq!(json["baton"]["source"], "github");
        assert_eq!(json["blockers"][0]["type"], "human_action");
        let again = state::from_handoff(&json, None);
        assert_eq!(again, state());
        assert_eq!(state::goal(&json, None), "Add rate limiting");
    }
}
