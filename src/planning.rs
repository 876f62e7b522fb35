//! GSD's `.planning/` tree, as far as a handoff needs it: what kind of work is going on
//! (phase, spike, sketch, deliberation, research, or none), where `.continue-here.md`
//! belongs, the active phase with its plans and tasks, and `STATE.md`'s position.
//!
//! The parsers are pure functions over text; [`detect`] does the reading. Everything is
//! best effort: a file that cannot be read is treated as absent.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use crate::fsx;

/// The kind of work being paused, in GSD's detection order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ContextKind {
    Phase,
    Spike,
    Sketch,
    Deliberation,
    Research,
    Default,
}

impl ContextKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ContextKind::Phase => "phase",
            ContextKind::Spike => "spike",
            ContextKind::Sketch => "sketch",
            ContextKind::Deliberation => "deliberation",
            ContextKind::Research => "research",
            ContextKind::Default => "default",
        }
    }
}

/// Whether a plan's summary says it is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SummaryState {
    Missing,
    Done,
    /// A summary exists but still holds placeholder text: not really done.
    Placeholder,
}

/// One `NN-MM-PLAN.md` of the active phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// The file name, e.g. `03-02-PLAN.md`.
    pub file: String,
    /// The plan number within the phase (`02`), when the name carries it.
    pub number: Option<String>,
    /// Task names from the `<tasks>` block, in order.
    pub tasks: Vec<String>,
    pub summary: SummaryState,
}

/// The active phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Phase {
    /// `03` from `03-rate-limiting`.
    pub number: String,
    /// `rate-limiting`.
    pub name: String,
    /// The folder, relative to the project root (`.planning/phases/03-rate-limiting`).
    pub dir: PathBuf,
    pub plans: Vec<Plan>,
    /// Index in `plans` of the first plan not really done.
    pub current_plan: Option<usize>,
}

impl Phase {
    /// The folder's name, `03-rate-limiting`.
    pub fn folder_name(&self) -> String {
        self.dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }

    pub fn current(&self) -> Option<&Plan> {
        self.current_plan.and_then(|i| self.plans.get(i))
    }

    /// Plans whose summary still holds placeholder text.
    pub fn placeholder_summaries(&self) -> Vec<&Plan> {
        self.plans.iter().filter(|p| p.summary == SummaryState::Placeholder).collect()
    }
}

/// `STATE.md`'s position lines.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StateFile {
    /// `Phase: X of Y (name)`.
    pub phase: Option<(u32, u32)>,
    pub phase_name: Option<String>,
    /// `Plan: A of B in current phase`.
    pub plan: Option<(u32, u32)>,
    /// `Status: …` (body line, else front matter `status`).
    pub status: Option<String>,
}

/// What a handoff learns from `.planning/`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Planning {
    /// `.planning/` exists.
    pub exists: bool,
    pub kind: ContextKind,
    /// Where `.continue-here.md` goes, relative to the project root.
    pub continue_here: PathBuf,
    /// A short name for the work: `03-rate-limiting`, `SPIKE-001`, or the kind.
    pub location: String,
    pub phase: Option<Phase>,
    pub state: Option<StateFile>,
    /// `.planning/METHODOLOGY.md` exists.
    pub methodology: bool,
    /// GSD is in use here: `.planning/` holds GSD's own files (STATE.md, PROJECT.md,
    /// ROADMAP.md, config.json) or work (a phase, spike, sketch, deliberation, research),
    /// not only what baton wrote. Decides whether a handoff speaks of phases and `/gsd:`.
    pub gsd: bool,
}

impl Planning {
    /// The phase a handoff records: the active phase plan's folder when there is one,
    /// else `STATE.md`'s `Phase: X of Y (name)` (number as written there, name where
    /// known), as the status line shows it.
    pub fn phase_position(&self) -> (Option<String>, Option<String>) {
        if let Some(phase) = &self.phase {
            return (Some(phase.number.clone()), Some(phase.name.clone()).filter(|n| !n.is_empty()));
        }
        match &self.state {
            Some(StateFile { phase: Some((x, _)), phase_name, .. }) => {
                (Some(x.to_string()), phase_name.clone())
            }
            _ => (None, None),
        }
    }
}

/// Splits a phase folder name `NN-name` into number and name.
pub fn split_phase_folder(folder: &str) -> (String, String) {
    match folder.split_once('-') {
        Some((number, name))
            if !number.is_empty() && number.chars().all(|c| c.is_ascii_digit() || c == '.') =>
        {
            (number.to_string(), name.to_string())
        }
        _ => (folder.to_string(), folder.to_string()),
    }
}

/// Task names from a plan's `<tasks>` block: each `<task …>` element's `<name>`, with a
/// `Task N:` prefix dropped. A task without a name counts with a generated one.
pub fn parse_plan_tasks(text: &str) -> Vec<String> {
    let block = match (text.find("<tasks>"), text.rfind("</tasks>")) {
        (Some(start), Some(end)) if end > start => &text[start..end],
        _ => text,
    };
    let mut tasks = vec![];
    let mut rest = block;
    while let Some(open) = rest.find("<task") {
        let after = &rest[open + 5..];
        // `<tasks>` itself, or `<task_x>`: not a task element.
        if !after.starts_with([' ', '>', '\n', '\t', '\r']) {
            rest = after;
            continue;
        }
        let end = after.find("</task>").unwrap_or(after.len());
        let element = &after[..end];
        let name = element
            .find("<name>")
            .and_then(|s| element[s + 6..].find("</name>").map(|e| element[s + 6..s + 6 + e].trim()))
            .map(strip_task_prefix)
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| format!("Task {}", tasks.len() + 1));
        tasks.push(name);
        rest = &after[end..];
    }
    tasks
}

fn strip_task_prefix(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("task ") {
        if let Some(colon) = rest.find(':') {
            if rest[..colon].trim().chars().all(|c| c.is_ascii_digit()) {
                return name[5 + colon + 1..].trim().to_string();
            }
        }
    }
    name.to_string()
}

/// A summary that still holds GSD's placeholder markers is not a real one.
pub fn summary_is_placeholder(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("to be filled") || lower.contains("placeholder") || text.contains("TBD")
}

/// Parses `STATE.md`.
pub fn parse_state(text: &str) -> StateFile {
    let mut state = StateFile::default();
    let mut front_status = None;
    let mut in_front = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if i == 0 && line == "---" {
            in_front = true;
            continue;
        }
        if in_front {
            if line == "---" {
                in_front = false;
            } else if let Some(v) = line.strip_prefix("status:") {
                front_status = Some(v.trim().trim_matches('"').to_string());
            }
            continue;
        }
        let line = line.trim_start_matches(['*', '-', ' ']).replace("**", "");
        if let Some(rest) = line.strip_prefix("Phase:") {
            if let Some((x, y, tail)) = parse_x_of_y(rest) {
                state.phase = Some((x, y));
                let name = tail.trim().trim_start_matches('(').trim_end_matches(')').trim();
                if !name.is_empty() {
                    state.phase_name = Some(name.to_string());
                }
            }
        } else if let Some(rest) = line.strip_prefix("Plan:") {
            if let Some((a, b, _)) = parse_x_of_y(rest) {
                state.plan = Some((a, b));
            }
        } else if let Some(rest) = line.strip_prefix("Status:") {
            if state.status.is_none() && !rest.trim().is_empty() {
                state.status = Some(rest.trim().to_string());
            }
        }
    }
    if state.status.is_none() {
        state.status = front_status.filter(|s| !s.is_empty());
    }
    state
}

/// `" 3 of 7 (name)"` → (3, 7, " (name)").
fn parse_x_of_y(text: &str) -> Option<(u32, u32, &str)> {
    let text = text.trim_start();
    let (x, rest) = text.split_once(" of ")?;
    let x: u32 = x.trim().parse().ok()?;
    let rest = rest.trim_start();
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let y: u32 = rest[..digits].parse().ok()?;
    Some((x, y, &rest[digits..]))
}

const FILE_LIMIT: u64 = 2 * 1024 * 1024;

fn read_text(path: &Path) -> Option<String> {
    fsx::read_limited(path, FILE_LIMIT).ok().map(|b| String::from_utf8_lossy(&b).into_owned())
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn subfolders(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect())
        .unwrap_or_default();
    out.sort();
    out
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).filter(|p| p.is_file()).collect())
        .unwrap_or_default();
    out.sort();
    out
}

fn is_plan_file(name: &str) -> bool {
    name == "PLAN.md" || name.ends_with("-PLAN.md")
}

/// The folder (of `folders`) holding the newest file accepted by `wanted`.
fn newest_folder(folders: &[PathBuf], wanted: impl Fn(&str) -> bool) -> Option<PathBuf> {
    folders
        .iter()
        .flat_map(|folder| {
            files_in(folder).into_iter().filter_map(|file| {
                let name = file.file_name()?.to_string_lossy().into_owned();
                wanted(&name).then(|| (modified(&file), folder.clone()))
            })
        })
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, folder)| folder)
}

fn read_phase(root: &Path, dir: &Path) -> Phase {
    let folder = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let (number, name) = split_phase_folder(&folder);
    let files = files_in(dir);
    let mut plans = vec![];
    for file in &files {
        let Some(file_name) = file.file_name().map(|n| n.to_string_lossy().into_owned()) else { continue };
        if !is_plan_file(&file_name) {
            continue;
        }
        let stem = file_name.trim_end_matches("PLAN.md");
        let summary_path = dir.join(format!("{stem}SUMMARY.md"));
        let summary = match read_text(&summary_path) {
            None => SummaryState::Missing,
            Some(text) if summary_is_placeholder(&text) => SummaryState::Placeholder,
            Some(_) => SummaryState::Done,
        };
        let number =
            stem.trim_end_matches('-').rsplit('-').next().filter(|n| !n.is_empty()).map(str::to_string);
        let tasks = read_text(file).map(|t| parse_plan_tasks(&t)).unwrap_or_default();
        plans.push(Plan { file: file_name, number, tasks, summary });
    }
    let current_plan = plans.iter().position(|p| p.summary != SummaryState::Done);
    let rel = dir.strip_prefix(root).map(Path::to_path_buf).unwrap_or_else(|_| dir.to_path_buf());
    Phase { number, name, dir: rel, plans, current_plan }
}

/// The location a handoff names in a project without GSD.
pub const NO_GSD_PHASE: &str = "no GSD phase";

/// Reads `.planning/` under `root` and decides the kind of work and the handoff's place.
pub fn detect(root: &Path) -> Planning {
    let planning = root.join(".planning");
    let exists = planning.is_dir();
    let state = read_text(&planning.join("STATE.md")).map(|t| parse_state(&t));
    let methodology = planning.join("METHODOLOGY.md").is_file();
    let rel = |p: &Path| p.strip_prefix(root).map(Path::to_path_buf).unwrap_or_else(|_| p.to_path_buf());
    let default_place = PathBuf::from(".planning/.continue-here.md");
    let gsd_files = exists
        && (state.is_some()
            || ["PROJECT.md", "ROADMAP.md", "config.json"].iter().any(|f| planning.join(f).is_file()));

    let phase_folders = subfolders(&planning.join("phases"));
    // STATE.md's current phase wins when it names a folder with plans; else the folder
    // with the newest plan, as GSD's pause-work picks it.
    let from_state = state.as_ref().and_then(|s| s.phase).and_then(|(x, _)| {
        phase_folders.iter().find(|dir| {
            let folder = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let (number, _) = split_phase_folder(&folder);
            number.parse::<f64>().ok() == Some(x as f64)
                && files_in(dir)
                    .iter()
                    .any(|f| f.file_name().is_some_and(|n| is_plan_file(&n.to_string_lossy())))
        })
    });
    let phase_dir = from_state.cloned().or_else(|| newest_folder(&phase_folders, is_plan_file));
    if let Some(dir) = phase_dir {
        let phase = read_phase(root, &dir);
        return Planning {
            exists,
            kind: ContextKind::Phase,
            continue_here: rel(&dir.join(".continue-here.md")),
            location: phase.folder_name(),
            phase: Some(phase),
            state,
            methodology,
            gsd: true,
        };
    }
    let spike = newest_folder(&subfolders(&planning.join("spikes")), |n| {
        matches!(n, "SPIKE.md" | "DESIGN.md" | "README.md")
    });
    if let Some(dir) = spike {
        let location = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        return Planning {
            exists,
            kind: ContextKind::Spike,
            continue_here: rel(&dir.join(".continue-here.md")),
            location,
            phase: None,
            state,
            methodology,
            gsd: true,
        };
    }
    let simple = |kind: ContextKind, place: PathBuf| {
        let gsd = gsd_files || kind != ContextKind::Default;
        Planning {
            exists,
            kind,
            continue_here: place,
            location: if gsd { kind.as_str().to_string() } else { NO_GSD_PHASE.to_string() },
            phase: None,
            state: state.clone(),
            methodology,
            gsd,
        }
    };
    if newest_folder(&subfolders(&planning.join("sketches")), |n| matches!(n, "README.md" | "index.html"))
        .is_some()
    {
        return simple(ContextKind::Sketch, PathBuf::from(".planning/sketches/.continue-here.md"));
    }
    if files_in(&planning.join("deliberations")).iter().any(|f| f.extension().is_some_and(|e| e == "md")) {
        return simple(ContextKind::Deliberation, PathBuf::from(".planning/deliberations/.continue-here.md"));
    }
    let research = planning.join("research");
    if !files_in(&research).is_empty() || !subfolders(&research).is_empty() {
        return simple(ContextKind::Research, default_place);
    }
    simple(ContextKind::Default, default_place)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAN: &str = r#"---
phase: 03-rate-limiting
plan: 02
---
<objective>x</objective>
<tasks>
<task type="auto">
  <name>Task 1: Add the token bucket</name>
  <action>…</action>
</task>
<task type="checkpoint:human-verify">
  <name>Task 2: Verify limits by hand</name>
</task>
<task type="auto"><name>Wire tiers</name></task>
</tasks>
"#;

    #[test]
    fn phase_from_state_when_no_plan_says_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".planning")).unwrap();
        std::fs::write(
            root.join(".planning/STATE.md"),
            "# State\n\nPhase: 2 of 5 (Auth flow)\nPlan: 1 of 3\n",
        )
        .unwrap();
        let planning = detect(root);
        assert!(planning.phase.is_none());
        assert_eq!(planning.phase_position(), (Some("2".into()), Some("Auth flow".into())));
        std::fs::create_dir_all(root.join(".planning/phases/04-api")).unwrap();
        std::fs::write(root.join(".planning/phases/04-api/04-01-PLAN.md"), "<tasks></tasks>").unwrap();
        assert_eq!(detect(root).phase_position(), (Some("04".into()), Some("api".into())));
    }

    #[test]
    fn plan_tasks_are_read_in_order() {
        assert_eq!(
            parse_plan_tasks(PLAN),
            vec!["Add the token bucket", "Verify limits by hand", "Wire tiers"]
        );
        assert!(parse_plan_tasks("no tasks here").is_empty());
    }

    #[test]
    fn placeholders_are_spotted() {
        assert!(summary_is_placeholder("## Results\nTo be filled after execution"));
        assert!(summary_is_placeholder("Outcome: TBD"));
        assert!(!summary_is_placeholder("All 3 tasks done; tests pass."));
    }

    #[test]
    fn state_lines_are_parsed() {
        let state = parse_state(
            "---\nstatus: executing\n---\n# Project State\n\nPhase: 3 of 7 (Rate limiting)\nPlan: 2 of 4 in current phase\nStatus: In progress\n",
        );
        assert_eq!(state.phase, Some((3, 7)));
        assert_eq!(state.phase_name.as_deref(), Some("Rate limiting"));
        assert_eq!(state.plan, Some((2, 4)));
        assert_eq!(state.status.as_deref(), Some("In progress"));
        let bare = parse_state("---\nstatus: planning\n---\nnothing");
        assert_eq!(bare.status.as_deref(), Some("planning"));
    }

    #[test]
    fn phase_folder_names_split() {
        assert_eq!(split_phase_folder("03-rate-limiting"), ("03".into(), "rate-limiting".into()));
        assert_eq!(split_phase_folder("misc"), ("misc".into(), "misc".into()));
    }

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn detects_the_active_phase_and_its_current_plan() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, ".planning/STATE.md", "Phase: 3 of 7 (Rate limiting)\nPlan: 2 of 2 in current phase\n");
        write(root, ".planning/phases/02-auth/02-01-PLAN.md", PLAN);
        write(root, ".planning/phases/03-rate-limiting/03-01-PLAN.md", PLAN);
        write(root, ".planning/phases/03-rate-limiting/03-01-SUMMARY.md", "Done, all green.");
        write(root, ".planning/phases/03-rate-limiting/03-02-PLAN.md", PLAN);
        write(root, ".planning/phases/03-rate-limiting/03-02-SUMMARY.md", "To be filled");
        write(root, ".planning/METHODOLOGY.md", "lenses");
        let planning = detect(root);
        assert_eq!(planning.kind, ContextKind::Phase);
        assert_eq!(planning.location, "03-rate-limiting");
        assert_eq!(
            planning.continue_here,
            PathBuf::from(".planning/phases/03-rate-limiting/.continue-here.md")
        );
        let phase = planning.phase.unwrap();
        assert_eq!((phase.number.as_str(), phase.name.as_str()), ("03", "rate-limiting"));
        assert_eq!(phase.plans.len(), 2);
        assert_eq!(phase.current().unwrap().file, "03-02-PLAN.md");
        assert_eq!(phase.current().unwrap().number.as_deref(), Some("02"));
        assert_eq!(phase.current().unwrap().tasks.len(), 3);
        assert_eq!(phase.placeholder_summaries().len(), 1);
        assert!(planning.methodology);
    }

    #[test]
    fn falls_back_through_spike_sketch_deliberation_research_default() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(detect(root).kind, ContextKind::Default);
        assert!(!detect(root).exists);
        write(root, ".planning/research/notes.md", "x");
        assert_eq!(detect(root).kind, ContextKind::Research);
        assert_eq!(detect(root).continue_here, PathBuf::from(".planning/.continue-here.md"));
        write(root, ".planning/deliberations/which-db.md", "x");
        assert_eq!(detect(root).kind, ContextKind::Deliberation);
        write(root, ".planning/sketches/login/README.md", "x");
        assert_eq!(detect(root).continue_here, PathBuf::from(".planning/sketches/.continue-here.md"));
        write(root, ".planning/spikes/SPIKE-001/SPIKE.md", "x");
        let spike = detect(root);
        assert_eq!(spike.kind, ContextKind::Spike);
        assert_eq!(spike.location, "SPIKE-001");
        assert_eq!(spike.continue_here, PathBuf::from(".planning/spikes/SPIKE-001/.continue-here.md"));
        write(root, ".planning/phases/01-setup/PLAN.md", PLAN);
        assert_eq!(detect(root).kind, ContextKind::Phase);
    }
}
