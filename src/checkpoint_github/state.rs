//! The task's state as baton shares it on GitHub, read out of HANDOFF.json by pure
//! functions: status, stage, next action, the latest decision and blocker, completed
//! tasks, key paths, a short reply summary. Paths and one-line summaries only, each cut
//! to a fixed length, never whole files.
//!
//! Every value is normalised once here (one line, cut), so a state that went to GitHub
//! and came back as a HANDOFF.json ([`super::restore`]) renders to the same record again:
//! a round trip never looks like news.

use serde::Serialize;

use crate::handoff::doc::HandoffDoc;
use crate::util::text::one_line;

pub const STATUS_MAX: usize = 100;
pub const STAGE_MAX: usize = 300;
pub const NEXT_MAX: usize = 1000;
pub const NOTE_MAX: usize = 600;
pub const REPLY_MAX: usize = 2000;
pub const ITEM_MAX: usize = 300;
pub const GOAL_MAX: usize = 200;

/// Blocker types GSD knows; a record writes the type as a ` [type]` suffix.
const BLOCKER_TYPES: &[&str] = &["technical", "human_action", "external"];

/// What a Persistence Record says about the task (and, in part, the Task Summary).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct State {
    pub status: String,
    pub stage: String,
    pub next: String,
    pub completed: Vec<String>,
    pub decision: Option<String>,
    pub blocker: Option<String>,
    pub plan_path: Option<String>,
    pub key_paths: Vec<String>,
    pub reply_summary: Option<String>,
}

impl State {
    /// The same state with every value folded to one line and cut to its maximum, as
    /// [`from_handoff`] makes them: how a state read from a comment anyone could write is
    /// bounded. A state baton wrote is already bounded, so this leaves it unchanged.
    pub fn bounded(self) -> State {
        let cut = |text: String, max: usize| one_line(&text, max);
        let opt =
            |text: Option<String>, max: usize| text.map(|t| one_line(&t, max)).filter(|t| !t.is_empty());
        let list = |items: Vec<String>| {
            items.into_iter().map(|i| one_line(&i, ITEM_MAX)).filter(|i| !i.is_empty()).collect()
        };
        State {
            status: cut(self.status, STATUS_MAX),
            stage: cut(self.stage, STAGE_MAX),
            next: cut(self.next, NEXT_MAX),
            completed: list(self.completed),
            decision: opt(self.decision, NOTE_MAX),
            blocker: opt(self.blocker, NOTE_MAX),
            plan_path: opt(self.plan_path, ITEM_MAX),
            key_paths: list(self.key_paths),
            reply_summary: opt(self.reply_summary, REPLY_MAX),
        }
    }
}

fn dedup(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    for item in items {
        if !item.is_empty() && !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// `phase 03 (rate-limiting), plan 2, task 3/4`, from GSD's fields; the context kind
/// (`spike`, `sketch` …) when there is no phase; empty when nothing is known.
pub fn stage_text(handoff: &HandoffDoc) -> String {
    let mut parts = vec![];
    match (handoff.phase(), handoff.phase_name()) {
        (Some(p), Some(n)) => parts.push(format!("phase {p} ({n})")),
        (Some(p), None) => parts.push(format!("phase {p}")),
        (None, Some(n)) => parts.push(format!("phase ({n})")),
        (None, None) => {}
    }
    if let Some(plan) = handoff.plan() {
        parts.push(format!("plan {plan}"));
    }
    match (handoff.task(), handoff.total_tasks()) {
        (Some(t), Some(n)) => parts.push(format!("task {t}/{n}")),
        (Some(t), None) => parts.push(format!("task {t}")),
        (None, Some(n)) => parts.push(format!("task ?/{n}")),
        (None, None) => {}
    }
    if parts.is_empty() {
        if let Some(context) = handoff.baton().context().filter(|c| *c != "default") {
            parts.push(context.to_string());
        }
    }
    one_line(&parts.join(", "), STAGE_MAX)
}

/// GSD's fields read back out of a stage text (see [`stage_text`]); what does not parse
/// is kept as the context.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StageFields {
    pub phase: Option<String>,
    pub phase_name: Option<String>,
    pub plan: Option<String>,
    pub task: Option<u64>,
    pub total_tasks: Option<u64>,
    pub context: Option<String>,
}

pub fn parse_stage(stage: &str) -> StageFields {
    let mut fields = StageFields::default();
    let mut other = vec![];
    for part in stage.split(", ").map(str::trim).filter(|p| !p.is_empty()) {
        // People write `Phase 3`, or the phase's number alone (`Stage: 03`).
        let lower = part.to_ascii_lowercase();
        let bare_number = part.starts_with(|c: char| c.is_ascii_digit())
            && part.chars().all(|c| c.is_ascii_digit() || c == '.')
            && fields.phase.is_none();
        if bare_number {
            fields.phase = Some(part.to_string());
        } else if let Some(rest) = lower.starts_with("phase ").then(|| &part["phase ".len()..]) {
            let rest = rest.trim();
            if let (Some(open), true) = (rest.find('('), rest.ends_with(')')) {
                let number = rest[..open].trim();
                fields.phase = (!number.is_empty()).then(|| number.to_string());
                fields.phase_name = Some(rest[open + 1..rest.len() - 1].to_string());
            } else {
                fields.phase = Some(rest.to_string());
            }
        } else if let Some(plan) = lower.starts_with("plan ").then(|| &part["plan ".len()..]) {
            fields.plan = Some(plan.trim().to_string());
        } else if let Some(task) = lower.starts_with("task ").then(|| &part["task ".len()..]) {
            let (t, n) = task.split_once('/').unwrap_or((task, ""));
            fields.task = t.trim().parse().ok();
            fields.total_tasks = n.trim().parse().ok();
        } else {
            other.push(part);
        }
    }
    if !other.is_empty() {
        fields.context = Some(other.join(", "));
    }
    fields
}

/// The latest blocker: `description [type]`.
pub fn blocker_text(handoff: &HandoffDoc) -> Option<String> {
    let (description, kind) = handoff.last_blocker()?;
    let suffix = kind.map(|k| format!(" [{}]", one_line(&k, 40))).unwrap_or_default();
    Some(one_line(&format!("{}{suffix}", one_line(&description, NOTE_MAX)), NOTE_MAX))
}

/// Splits a blocker text into description and GSD type.
pub fn parse_blocker(blocker: &str) -> (String, Option<String>) {
    for kind in BLOCKER_TYPES {
        if let Some(description) = blocker.strip_suffix(&format!(" [{kind}]")) {
            return (description.to_string(), Some(kind.to_string()));
        }
    }
    (blocker.to_string(), None)
}

/// The latest decision: `decision — rationale`.
pub fn decision_text(handoff: &HandoffDoc) -> Option<String> {
    let (decision, rationale) = handoff.last_decision()?;
    let joined = match rationale {
        Some(r) => format!("{decision} — {r}"),
        None => decision,
    };
    Some(one_line(&joined, NOTE_MAX))
}

/// Splits a decision text into decision and rationale.
pub fn parse_decision(decision: &str) -> (String, Option<String>) {
    match decision.split_once(" — ") {
        Some((d, r)) => (d.to_string(), Some(r.to_string())),
        None => (decision.to_string(), None),
    }
}

fn reply_summary(handoff: &HandoffDoc) -> Option<String> {
    let notes = handoff.context_notes_raw()?;
    let joined: Vec<&str> = notes.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    Some(one_line(&joined.join(" · "), REPLY_MAX)).filter(|s| !s.is_empty())
}

/// The state a HANDOFF.json describes. `detected_plan` is the active plan found in
/// `.planning/` now, used when the handoff does not name one.
pub fn from_handoff(handoff: &HandoffDoc, detected_plan: Option<&str>) -> State {
    let baton = handoff.baton();
    let key_paths = match baton.key_paths() {
        Some(paths) => paths,
        None => handoff.uncommitted_files().into_iter().chain(baton.files_touched()).collect(),
    };
    State {
        // A task restored from GitHub keeps the record's status beside GSD's "paused".
        status: one_line(
            handoff.status().filter(|s| *s != "paused").or_else(|| baton.task_status()).unwrap_or("paused"),
            STATUS_MAX,
        ),
        stage: stage_text(handoff),
        next: one_line(handoff.next_action_raw().unwrap_or_default(), NEXT_MAX),
        completed: handoff.done_task_names().iter().map(|name| one_line(name, ITEM_MAX)).collect(),
        decision: decision_text(handoff),
        blocker: blocker_text(handoff),
        plan_path: baton.plan_path().or(detected_plan).map(|p| one_line(p, ITEM_MAX)),
        key_paths: dedup(key_paths.iter().map(|p| one_line(p, ITEM_MAX))),
        reply_summary: reply_summary(handoff),
    }
}

/// The task's goal: what the summary already says, else what the handoff knows
/// (a goal restored from GitHub, the session's first request, the phase, the next action).
pub fn goal(handoff: &HandoffDoc, existing: Option<&str>) -> String {
    let phase = match (handoff.phase(), handoff.phase_name()) {
        (Some(p), Some(n)) => Some(format!("Phase {p}: {n}")),
        (None, Some(n)) => Some(format!("Phase {n}")),
        _ => None,
    };
    let baton = handoff.baton();
    let goal = existing
        .map(str::to_string)
        .filter(|g| !g.trim().is_empty())
        .or_else(|| baton.goal().map(str::to_string))
        .or_else(|| baton.first_request().map(str::to_string))
        .or(phase)
        .or_else(|| handoff.next_action().map(str::to_string))
        .unwrap_or_default();
    one_line(&goal, GOAL_MAX)
}

/// Where the handoff is and which one it is, for the record's Handoff line.
pub fn handoff_reference(handoff: &HandoffDoc, path: &str) -> String {
    let mut out = path.to_string();
    match (handoff.baton().id(), handoff.timestamp()) {
        (Some(id), Some(at)) => out.push_str(&format!(" (id {id}, written {at})")),
        (Some(id), None) => out.push_str(&format!(" (id {id})")),
        (None, Some(at)) => out.push_str(&format!(" (written {at})")),
        (None, None) => {}
    }
    one_line(&out, NOTE_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn doc(value: Value) -> HandoffDoc {
        HandoffDoc::parse(value.to_string().as_bytes(), std::path::Path::new("/")).unwrap()
    }

    fn handoff() -> HandoffDoc {
        doc(json!({
            "version": "1.0",
            "timestamp": "2026-11-30T05:00:00Z",
            "phase": "03", "phase_name": "rate-limiting", "plan": 2, "task": 3, "total_tasks": 4,
            "status": "paused",
            "completed_tasks": [
                {"id": 1, "name": "Read the router", "status": "done", "commit": "abc1234"},
                {"id": 2, "name": "Wire it", "status": "in_progress", "progress": "wiring"}
            ],
            "blockers": [{"description": "old", "type": "technical"}, {"description": "Staging key missing", "type": "human_action", "workaround": ""}],
            "decisions": [{"decision": "Tiers live in config", "rationale": "ops edits them", "phase": "03"}],
            "uncommitted_files": ["src/app.ts", "notes.txt"],
            "next_action": "Continue:\n  wire the limiter",
            "context_notes": "Last request: add tiers\nLast assistant message: done with 2",
            "baton": {"id": "abc", "files_touched": ["src/limiter.ts", "src/app.ts"], "first_request": "Add rate limiting"}
        }))
    }

    #[test]
    fn state_from_a_gsd_handoff() {
        let state = from_handoff(&handoff(), Some(".planning/phases/03-rate-limiting/03-02-PLAN.md"));
        assert_eq!(state.status, "paused");
        assert_eq!(state.stage, "phase 03 (rate-limiting), plan 2, task 3/4");
        assert_eq!(state.next, "Continue: wire the limiter");
        assert_eq!(state.completed, vec!["Read the router"]);
        assert_eq!(state.blocker.as_deref(), Some("Staging key missing [human_action]"));
        assert_eq!(state.decision.as_deref(), Some("Tiers live in config — ops edits them"));
        assert_eq!(state.key_paths, vec!["src/app.ts", "notes.txt", "src/limiter.ts"]);
        assert_eq!(
            state.reply_summary.as_deref(),
            Some("Last request: add tiers · Last assistant message: done with 2")
        );
        assert_eq!(state.plan_path.as_deref(), Some(".planning/phases/03-rate-limiting/03-02-PLAN.md"));
        assert_eq!(goal(&handoff(), None), "Add rate limiting");
        assert_eq!(goal(&handoff(), Some("The issue's own goal")), "The issue's own goal");
        assert_eq!(
            handoff_reference(&handoff(), ".planning/HANDOFF.json"),
            ".planning/HANDOFF.json (id abc, written 2026-11-30T05:00:00Z)"
        );
    }

    #[test]
    fn stage_text_parses_back() {
        for stage in [
            "phase 03 (rate-limiting), plan 2, task 3/4",
            "phase 7, task ?/5",
            "phase (x), plan 01",
            "spike",
            "",
        ] {
            let fields = parse_stage(stage);
            let json = doc(json!({
                "phase": fields.phase, "phase_name": fields.phase_name,
                "plan": fields.plan, "task": fields.task, "total_tasks": fields.total_tasks,
                "baton": {"context": fields.context}
            }));
            assert_eq!(stage_text(&json), stage, "{fields:?}");
        }
        assert_eq!(parse_stage("03").phase.as_deref(), Some("03"));
        let people = parse_stage("Phase 3.1, Task 2/5");
        assert_eq!(
            (people.phase.as_deref(), people.task, people.total_tasks),
            (Some("3.1"), Some(2), Some(5))
        );
        let fields = parse_stage("phase 03 (rate-limiting), plan 2, task 3/4");
        assert_eq!(fields.phase.as_deref(), Some("03"));
        assert_eq!(fields.phase_name.as_deref(), Some("rate-limiting"));
        assert_eq!((fields.task, fields.total_tasks), (Some(3), Some(4)));
    }

    #[test]
    fn blockers_and_decisions_parse_back() {
        assert_eq!(
            parse_blocker("Key missing [human_action]"),
            ("Key missing".into(), Some("human_action".into()))
        );
        assert_eq!(parse_blocker("Key missing [soon]"), ("Key missing [soon]".into(), None));
        assert_eq!(parse_decision("A — because — really"), ("A".into(), Some("because — really".into())));
        assert_eq!(parse_decision("A"), ("A".into(), None));
    }
}
