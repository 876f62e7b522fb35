//! `baton report`: one session's token use, or (`--relay`) what each leg of a `baton run`
//! did, as text for people or JSON for machines.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;

use super::{ExitStatus, folder, print_json};
use crate::report::relay::{RelayError, RelayRequest, RunLookup};
use crate::report::{self, Lookup, ReportError, Request};
use crate::statusline;

#[derive(Args)]
pub(super) struct ReportArgs {
    /// The session id: its transcript is looked up as projects/*/<ID>.jsonl.
    #[arg(long, value_name = "ID", conflicts_with_all = ["transcript", "relay"])]
    session: Option<String>,
    /// The transcript to read (a Claude Code .jsonl file).
    #[arg(long, value_name = "PATH", conflicts_with = "relay")]
    transcript: Option<PathBuf>,
    /// The project folder (default: the current folder): the session that wrote its
    /// pending handoff is reported, else its newest transcript; with --relay, its newest
    /// run.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["session", "transcript"])]
    cwd: Option<PathBuf>,
    /// Print one JSON object for machines instead of the text report.
    #[arg(long)]
    json: bool,
    /// Also draw the context over time as a standalone SVG file.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Report a `baton run` instead: each leg's start and end, why it ended, its peak
    /// context, what it completed, the hand-over, and any step a leg ran again. RUN is
    /// the id `baton run` prints (or its start); without it, the newest run of the
    /// project.
    #[arg(long, value_name = "RUN", num_args = 0..=1, default_missing_value = "")]
    relay: Option<String>,
}

pub(super) fn run(args: ReportArgs) -> ExitStatus {
    let folder = folder(args.cwd);
    if let Some(run) = args.relay {
        return relay(run, folder, args.svg, args.json);
    }
    let lookup = match (args.transcript, &args.session, &folder) {
        (Some(path), _, _) => Lookup::Transcript(path),
        (None, Some(id), _) => Lookup::Session(id.clone()),
        (None, None, Some(dir)) => Lookup::Newest(dir.clone()),
        (None, None, None) => {
            errln!("baton report: no current folder; pass --cwd, --session or --transcript");
            return ExitStatus::Usage;
        }
    };
    let request = Request { lookup, session: args.session, folder, svg: args.svg };
    let report = match report::generate(&request) {
        Ok(report) => report,
        Err(e) => {
            errln!("baton report: {e}");
            return match e {
                ReportError::Usage(_) => ExitStatus::Usage,
                ReportError::Failed(_) => ExitStatus::Failure,
            };
        }
    };
    if args.json {
        print_json(&report);
    } else {
        let colour = std::io::stdout().is_terminal() && statusline::colour_wanted();
        let columns = statusline::columns_from_env().unwrap_or(80);
        out!("{}", report::text::render(&report, colour, columns));
        if let Some(file) = &request.svg {
            outln!("\nChart written to {}", crate::util::text::outside_path(file));
        }
    }
    ExitStatus::Success
}

/// `baton report --relay [RUN]`.
fn relay(run: String, folder: Option<PathBuf>, svg: Option<PathBuf>, json: bool) -> ExitStatus {
    let lookup = match (run.trim(), folder) {
        ("", Some(dir)) => RunLookup::Newest(dir),
        ("", None) => {
            errln!("baton report --relay: no current folder; pass --cwd or a run id");
            return ExitStatus::Usage;
        }
        (id, _) => RunLookup::Id(id.to_string()),
    };
    let request = RelayRequest { lookup, svg };
    let report = match report::relay::generate(&request) {
        Ok(report) => report,
        Err(e) => {
            errln!("baton report --relay: {e}");
            return match e {
                RelayError::Usage(_) => ExitStatus::Usage,
                RelayError::NotFound(_) => ExitStatus::Failure,
            };
        }
    };
    if json {
        print_json(&report);
    } else {
        let colour = std::io::stdout().is_terminal() && statusline::colour_wanted();
        out!("{}", report::relay::text::render(&report, colour));
        if let Some(file) = &request.svg {
            outln!("\nChart written to {}", crate::util::text::outside_path(file));
        }
    }
    ExitStatus::Success
}
