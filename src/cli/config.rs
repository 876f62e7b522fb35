//! `baton config`: the effective configuration, where each value comes from, the known
//! windows; exit 1 when the configuration has errors.

use std::path::PathBuf;

use clap::Args;

use super::{ExitStatus, folder, print_json};
use crate::config::{self, Config};
use crate::metrics::windows;
use crate::util::text::outside_path;

#[derive(Args)]
pub(super) struct ConfigArgs {
    /// The project folder whose `.claude/baton.json` and `.planning/config.json` apply.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Print JSON for machines.
    #[arg(long)]
    json: bool,
}

pub(super) fn run(args: ConfigArgs) -> ExitStatus {
    let project = folder(args.cwd);
    let config = Config::load(project.as_deref());
    let known = windows::known_windows(&windows::remembered_windows(), &config.configured_windows());
    let limits = crate::metrics::Limits::from_settings(config.settings());
    let known = crate::metrics::with_compaction_points(known, &limits, project.as_deref());
    let default_window = limits.default_window;
    let unread = config::unread_files(project.as_deref());
    if args.json {
        let mut value = config.to_json();
        value["windows"] = serde_json::json!({"known": known, "default": default_window});
        value["unread"] = unread.iter().map(|p| p.display().to_string()).collect();
        print_json(&value);
    } else {
        out!("{}", config::describe_config(&config));
        for path in &unread {
            outln!(
                "\nnot read: {} (baton reads JSON only: {})",
                outside_path(path),
                outside_path(&path.with_extension("json"))
            );
        }
        out!("\n{}", windows::describe_known(&known, default_window));
    }
    if config.errors.is_empty() { ExitStatus::Success } else { ExitStatus::Failure }
}
