//! `baton demo`: a short session played in a temporary folder.

use super::ExitStatus;

pub(super) fn run() -> ExitStatus {
    match crate::demo::run(&mut std::io::stdout()) {
        Ok(()) => ExitStatus::Success,
        Err(e) => {
            eprintln!("baton demo: {e}");
            ExitStatus::Failure
        }
    }
}
