//! The `baton report` service: find the transcript, read it, build the [`Report`] with
//! the project's thresholds, and draw the SVG chart when one is asked for. Printing is
//! the command line's.

use std::fmt;
use std::path::PathBuf;

use super::{LocateError, Lookup, Report, locate, session_id_of, svg};
use crate::config::Config;
use crate::{fsx, transcript};

/// What to report on.
#[derive(Debug, Clone)]
pub struct Request {
    pub lookup: Lookup,
    /// The session id given by the person (else the transcript's, else its file name).
    pub session: Option<String>,
    /// The project folder whose configuration applies.
    pub folder: Option<PathBuf>,
    /// Also write the chart to this file.
    pub svg: Option<PathBuf>,
}

/// Why there is no report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportError {
    /// The request cannot be carried out as given (an invalid session id …).
    Usage(String),
    /// No transcript, or one that cannot be read, or a chart that cannot be written.
    Failed(String),
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportError::Usage(why) | ReportError::Failed(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for ReportError {}

/// Builds the report `request` asks for.
pub fn generate(request: &Request) -> Result<Report, ReportError> {
    let path = match pending_handoffs_session(&request.lookup).map_or_else(|| locate(&request.lookup), Ok) {
        Ok(path) => path,
        Err(e @ LocateError::Usage(_)) => return Err(ReportError::Usage(e.to_string())),
        Err(e) => return Err(ReportError::Failed(e.to_string())),
    };
    let usage = match transcript::session_usage(&path) {
        Ok(usage) => usage,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ReportError::Failed(format!("no transcript at {}", path.display())));
        }
        Err(e) => return Err(ReportError::Failed(format!("cannot read {}: {e}", path.display()))),
    };
    let config = Config::load(request.folder.as_deref());
    let session_id =
        request.session.clone().or_else(|| usage.session_id.clone()).or_else(|| session_id_of(&path));
    let report = Report::for_session(&usage, &path.display().to_string(), session_id, &config);
    if let Some(file) = &request.svg {
        let chart = svg::render(&report);
        if let Err(e) = fsx::write_atomic(file, chart.as_bytes(), fsx::WriteOptions::USER) {
            return Err(ReportError::Failed(format!("cannot write {}: {e}", file.display())));
        }
    }
    Ok(report)
}

/// With no session asked for: the transcript of the session that wrote the project's
/// pending handoff (the newest paused one), the session a user asks about after a pause,
/// rather than whichever ran last.
fn pending_handoffs_session(lookup: &Lookup) -> Option<PathBuf> {
    let Lookup::Newest(folder) = lookup else { return None };
    let config = Config::load(Some(folder));
    let root = crate::gitx::project_dir(folder);
    crate::resume::find_all(&root, &config)
        .iter()
        .filter(|found| found.paused())
        .find_map(|found| super::locate::HOST.host().transcript_of(found.session()?))
}
