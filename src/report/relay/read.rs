//! Finding a run's record (the one asked for, or the newest of the project) in baton's
//! state dir, and reading its legs' transcripts: the I/O behind `baton report --relay`.

use std::fmt;
use std::path::{Path, PathBuf};

use super::{LegRead, RelayReport, SessionRead, svg};
use crate::host::HostKind;
use crate::run_record::{self, RunRecord};
use crate::transcript::{self, FactsBudget, Format};
use crate::{fsx, gitx, places};

/// Which run.
#[derive(Debug, Clone)]
pub enum RunLookup {
    /// A run id (`run-…`), or an unambiguous start of one.
    Id(String),
    /// The newest run of the project at this folder.
    Newest(PathBuf),
}

/// What to report on.
#[derive(Debug, Clone)]
pub struct RelayRequest {
    pub lookup: RunLookup,
    /// Also write the chart to this file.
    pub svg: Option<PathBuf>,
}

/// Why there is no report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelayError {
    /// The request is wrong (exit 2).
    Usage(String),
    /// No such run, or a chart that cannot be written (exit 1).
    NotFound(String),
}

impl fmt::Display for RelayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RelayError::Usage(why) | RelayError::NotFound(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for RelayError {}

/// The folder of the runs' records.
fn runs_dir() -> Result<PathBuf, RelayError> {
    places::state_dir().map(|dir| dir.join("runs")).ok_or_else(|| {
        RelayError::NotFound("cannot tell where baton keeps its state: set HOME or XDG_STATE_HOME".into())
    })
}

/// When a run started, from its id (`run-<nanoseconds, hex>-<pid>`): the order of runs.
fn started_nanos(id: &str) -> Option<u128> {
    let hex = id.strip_prefix("run-")?.split('-').next()?;
    u128::from_str_radix(hex, 16).ok()
}

/// The run ids in the runs folder, newest first.
fn run_ids(dir: &Path) -> Vec<String> {
    let mut ids: Vec<(Option<u128>, Option<std::time::SystemTime>, String)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_str()?.strip_suffix(".json")?.to_string();
            let regular = entry.file_type().ok()?.is_file();
            (regular && run_record::valid_run_id(&name)).then(|| {
                let modified = entry.metadata().ok().and_then(|m| m.modified().ok());
                (started_nanos(&name), modified, name)
            })
        })
        .collect();
    ids.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(b.2.cmp(&a.2)));
    ids.into_iter().map(|(_, _, id)| id).collect()
}

/// The folders a run worked in: its project, and where its legs wrote their handoffs.
fn projects_of(record: &RunRecord) -> impl Iterator<Item = &Path> {
    record.project.as_deref().into_iter().chain(record.legs.iter().filter_map(|leg| leg.project.as_deref()))
}

/// The run `lookup` names, and its record.
pub fn locate_run(lookup: &RunLookup) -> Result<(String, PathBuf, RunRecord), RelayError> {
    let dir = runs_dir()?;
    let ids = run_ids(&dir);
    match lookup {
        RunLookup::Id(asked) => {
            if !run_record::valid_run_id(asked) {
                return Err(RelayError::Usage(format!(
                    "`{}` is not a run id: a run id is letters, digits and `-` (run-…), as `baton run` prints it",
                    crate::util::text::outside(asked)
                )));
            }
            let matching: Vec<&String> = ids.iter().filter(|id| id.starts_with(asked.as_str())).collect();
            let id = match matching.as_slice() {
                [one] => (*one).clone(),
                [] => {
                    return Err(RelayError::NotFound(format!(
                        "no run {asked}: looked for {}",
                        crate::util::text::outside_path(&dir.join(format!("{asked}.json")))
                    )));
                }
                many if many.contains(&asked) => asked.clone(),
                many => {
                    return Err(RelayError::Usage(format!(
                        "`{asked}` is the start of {} runs ({}): give more of it",
                        many.len(),
                        many.iter().take(5).map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                    )));
                }
            };
            let record = run_record::load(&id);
            Ok((id.clone(), dir.join(format!("{id}.json")), record))
        }
        RunLookup::Newest(folder) => {
            if ids.is_empty() {
                return Err(RelayError::NotFound(format!(
                    "no relay has run here yet: `baton run` keeps a record of each run in {}",
                    crate::util::text::outside_path(&dir)
                )));
            }
            let folder = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.clone());
            let project = gitx::project_dir(&folder);
            for id in &ids {
                let record = run_record::load(id);
                let ours = projects_of(&record).any(|p| {
                    let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
                    p == project || p == folder || gitx::project_dir(&p) == project
                });
                if ours {
                    return Ok((id.clone(), dir.join(format!("{id}.json")), record));
                }
            }
            Err(RelayError::NotFound(format!(
                "no relay of {} among the {} run{} in {}; name one: baton report --relay RUN (the newest is {})",
                crate::util::text::outside_path(&project),
                ids.len(),
                if ids.len() == 1 { "" } else { "s" },
                crate::util::text::outside_path(&dir),
                ids[0]
            )))
        }
    }
}

/// Reads one transcript of a leg, written by `host` (the session it is, when known).
fn read_session(
    session: &str,
    host: Option<HostKind>,
    path: Option<PathBuf>,
    project: Option<&Path>,
) -> SessionRead {
    let mut read = SessionRead {
        session: session.to_string(),
        host: Some(host.unwrap_or(HostKind::DEFAULT).id().to_string()),
        project: project.map(gitx::project_dir),
        ..SessionRead::default()
    };
    let Some(path) = path else {
        read.problem = Some(format!("{}: no transcript found", crate::util::text::one_line(session, 80)));
        return read;
    };
    read.transcript = Some(path.display().to_string());
    let format = host.map_or(Format::ClaudeCode, HostKind::transcript_format);
    match transcript::read_trace(format, &path) {
        Ok(trace) => read.trace = Some(trace),
        Err(e) => {
            read.problem = Some(format!("cannot read {}: {e}", path.display()));
            return read;
        }
    }
    if let Ok(facts) = transcript::gather_facts_as(format, &path, FactsBudget::default()) {
        if let Some(todos) = &facts.todos {
            read.todos_completed = Some(todos.completed.len());
            read.todos_total = Some(todos.completed.len() + todos.in_progress.len() + todos.pending.len());
        }
        if read.project.is_none() {
            read.project = facts.cwd.as_deref().map(|cwd| gitx::project_dir(Path::new(cwd)));
        }
        read.files_written = match &read.project {
            Some(root) => facts.files_relative_to(root),
            None => facts.files_touched.clone(),
        };
    }
    read
}

/// Reads every leg of `record`: the transcripts the hook noted for it, else (a record
/// from an older baton) each session's where its host keeps it.
pub fn read_legs(record: &RunRecord) -> Vec<LegRead> {
    let host = record.host.as_deref().and_then(HostKind::from_id);
    record
        .legs
        .iter()
        .map(|note| {
            let project = record.project.as_deref().or(note.project.as_deref());
            let sessions = if note.transcripts.is_empty() {
                note.sessions
                    .iter()
                    .filter(|session| fsx::valid_session_id(session))
                    .map(|session| {
                        let found = host.unwrap_or(HostKind::DEFAULT);
                        let path = found
                            .host()
                            .transcript_of(session)
                            .or_else(|| found.transcript_path(None, session));
                        read_session(session, host, path, project)
                    })
                    .collect()
            } else {
                note.transcripts
                    .iter()
                    .map(|path| {
                        let name = path.to_string_lossy();
                        let session = note
                            .sessions
                            .iter()
                            .find(|s| name.contains(s.as_str()))
                            .cloned()
                            .unwrap_or_else(|| {
                                path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
                            });
                        read_session(&session, host, Some(path.clone()), project)
                    })
                    .collect()
            };
            LegRead { note: note.clone(), sessions }
        })
        .collect()
}

/// Builds the report `request` asks for, and writes its chart when asked.
pub fn generate(request: &RelayRequest) -> Result<RelayReport, RelayError> {
    let (id, path, record) = locate_run(&request.lookup)?;
    let legs = read_legs(&record);
    let report = RelayReport::build(&id, Some(path.display().to_string()), &record, legs);
    if let Some(file) = &request.svg {
        let chart = svg::render(&report);
        if let Err(e) = fsx::write_atomic(file, chart.as_bytes(), fsx::WriteOptions::USER) {
            return Err(RelayError::NotFound(format!(
                "cannot write {}: {e}",
                crate::util::text::outside_path(file)
            )));
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_ordered_by_their_start() {
        assert!(started_nanos("run-1a-2") > started_nanos("run-f-3"));
        assert_eq!(started_nanos("x"), None);
    }
}
